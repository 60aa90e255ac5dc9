#!/usr/bin/env bash
# The acting leader's `move` lines in the event log, each with its reason,
# with real workers on loopback. Worker a leads alone and runs a job of 4;
# then:
#
#   - the job's tasks are granted as `new`;
#   - b joins: the tasks that go to b are revoked on a and granted on b,
#     both for `rebalance`, the revoke naming b as the target;
#   - c joins and is killed (SIGKILL): its tasks come back for `dead`;
#   - b leaves (SIGTERM): its tasks come back for `leave`;
#   - a rescale to 1 revokes the others for `removed`, with no target;
#   - every grant that follows a revoke has the revoke's from and reason;
#   - a's `voters` lines: a alone first; a, b and c once b and c have been
#     up for the profile's stable time (c is killed only then, and b stops
#     only once the dead c has left the set: a set of three that loses two
#     has no majority left to change it); then a and b (b stops once it
#     holds that set); then a alone.
#
# Waits are bounded against a hang only.
set -u
shoal=$1
# shellcheck source=lib/expect.bash
. "$(dirname "$0")/lib/expect.bash"
# shellcheck source=lib/workers.bash
. "$(dirname "$0")/lib/workers.bash"
command -v python3 >/dev/null || { echo "skip: no python3 to read the JSON lines"; exit 77; }

events=$work/a.jsonl
start () { # name flag...
    local name=$1
    shift
    start_worker "$name" --profile loopback --capacity 4 "$@"
    wait_for "$name starts" grep -q ' on port ' "$work/$name.log"
}
# moves STEP REASON [TO-NAME]: how many move lines of that step and reason
# (to that worker) the log holds. The line's fields come in the order
# docs/events.md lists them.
moves () {
    local to='[0-9a-f]*'
    [ $# -gt 2 ] && to=$(id_of "$3")
    grep -c "\"event\":\"move\",.*\"step\":\"$1\",.*\"to\":\"$to\",\"reason\":\"$2\"" "$events"
}
at_least () { [ "$(moves "${@:2}")" -ge "$1" ]; }
# voters_are LOG NAME...: the log's last voters line names these workers
# and no other.
voters_are () {
    local line name
    line=$(grep '"event":"voters"' "$1" | tail -1)
    shift
    line=${line#*\"voters\":\[}
    for name; do [[ $line == *"\"$(id_of "$name")\""* ]] || return 1; done
    [ "$(grep -o '"[0-9a-f]\{32\}"' <<<"$line" | wc -l)" -eq $# ]
}

start a --expect 1 --events "$events" || exit 1
wait_for "a leads" grep -q '"leads":true' "$events" || exit 1
# The leader takes what runs when it takes office without lines: a job
# submitted after is granted as new.
wait_for "a publishes" "$shoal" status --data-dir "$work/a"
expect_status 0 "submit" "$shoal" submit j --parallelism 4 --command 'exec sleep 600' \
    --data-dir "$work/a"
wait_for "4 grants as new" at_least 4 grant new a

port=$(port_of a)
start b --join "127.0.0.1:$port" --events "$work/b.jsonl" || exit 1
wait_for "a task revoked on a for b, to rebalance" at_least 1 revoke rebalance b
wait_for "and granted to b" at_least 1 grant rebalance b

start c --join "127.0.0.1:$port" || exit 1
wait_for "c gets a task" at_least 1 grant rebalance c
grep '"event":"voters"' "$events" | head -1 | grep -q "\"version\":1,\"voters\":\[\"$(id_of a)\"\]" ||
    fail "the first voters line names a alone: $(grep '"voters"' "$events")"
wait_for "b and c join the voters" voters_are "$events" a b c
# c must hold an active when it is killed: its children started, none
# stopped since.
c_runs () {
    [ "$(grep -c ' started j/' "$work/c.log")" -gt "$(grep -c ' stopping j/' "$work/c.log")" ]
}
wait_for "c runs a task" c_runs
kill -9 "${pid_of[c]}"
wait "${pid_of[c]}" 2>/dev/null
unset "pid_of[c]"
# The assignor places nothing on a suspect member, so c's tasks may move
# while it is suspected, before the verdict (seen on a loaded machine).
lost () { [ $(($(moves "$1" dead) + $(moves "$1" suspect))) -ge 1 ]; }
wait_for "c's tasks revoked for dead or suspect" lost revoke
wait_for "and granted again for dead or suspect" lost grant

# b stops once it holds the set without c: it acknowledged it, so the
# change is done before b leaves (a leave in the middle of a change that
# b's vote must finish would leave a no majority).
wait_for "c leaves the voters" voters_are "$work/b.jsonl" a b
stop b
wait_for "b's tasks revoked for leave" at_least 1 revoke leave
wait_for "and granted to a for leave" at_least 1 grant leave a

wait_for "b leaves the voters" voters_are "$events" a
expect_status 0 "rescale to 1" "$shoal" rescale j 1 --data-dir "$work/a"
wait_for "3 revoked for removed" at_least 3 revoke removed
stop a

python3 - "$events" <<'EOF' || fail "the move lines (above)"
import json, sys
problems, revoked, count = [], {}, 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["event"] != "move":
        continue
    count += 1
    if r["reason"] not in ("new", "removed", "leave", "dead", "suspect", "gone", "failed", "rebalance"):
        problems.append("a reason the docs do not list: %s" % line)
    if r["step"] == "revoke":
        if not r["from"]:
            problems.append("a revoke names its old owner: %s" % line)
        if r["reason"] == "removed" and r["to"]:
            problems.append("a removed task has no target: %s" % line)
        if r["reason"] in ("rebalance", "dead", "suspect") and not r["to"]:
            problems.append("a revoke for %s names its target: %s" % (r["reason"], line))
        revoked[r["task"]] = r
    elif r["step"] == "grant":
        before = revoked.pop(r["task"], None)
        if before and (before["from"] != r["from"] or before["reason"] != r["reason"]):
            problems.append("a grant carries its revoke's from and reason: %s after %s" % (line, before))
        if not before and (r["reason"] == "new") != (r["from"] == ""):
            problems.append("a grant from no one, and only that, is new: %s" % line)
    else:
        problems.append("a step that is neither revoke nor grant: %s" % line)
for p in problems:
    print("FAIL:", p)
print("move lines: %d" % count)
sys.exit(1 if problems else 0)
EOF

echo "eventlog_moves: $failures failed"
exit $((failures > 0))

#!/usr/bin/env bash
# Per-task output files and `shoal logs`, with three real workers on
# loopback (docs/worker.md, "Task output"):
#
#   - a job's task prints known lines on stdout and stderr; `shoal logs`
#     asked on a node that never runs it (c handles another job only)
#     returns them, each stream in order, each line with its time and
#     stream; --lines 1 the last; --json one object;
#   - the file is DATA-DIR/logs/hello%2F0.log on the node that runs it,
#     and --node on another member says it keeps none;
#   - a chatty task's file is rotated: it and its one older generation
#     stay within --task-log-size, and the last line is there;
#   - an unknown task, an unknown node, a member that does not answer and
#     bad options are said, with exit status 1 or 2.
#
# Waits are bounded against a hang only.
set -u
shoal=$1
# shellcheck source=lib/expect.bash
. "$(dirname "$0")/lib/expect.bash"
# shellcheck source=lib/workers.bash
. "$(dirname "$0")/lib/workers.bash"
command -v python3 >/dev/null || { echo "skip: no python3 to read the JSON"; exit 77; }

cap=4096
# until_status STATUS WHAT COMMAND...: as expect_status, but tried again
# (60 s at most) while a loaded machine's cluster has no leader to say
# where a task runs.
until_status () {
    local want=$1 what=$2 i got; shift 2
    for i in $(seq 60); do
        "$@" >"$work/out" 2>"$work/err"
        got=$?
        [ "$got" -eq "$want" ] && return 0
        sleep 1
    done
    fail "$what: exit status $got, expected $want ($(head -c 300 "$work/err"))"
}
start () { # name flag...
    local name=$1
    shift
    start_worker "$name" --profile loopback --task-log-size $cap --task-log-keep 1 "$@"
    wait_for "$name starts" grep -q ' on port ' "$work/$name.log"
}

# Options are checked before anything starts.
expect_status 2 "a negative --task-log-size" "$shoal" worker --data-dir "$work/x" \
    --task-log-size -1
grep -q 'task-log-size' "$work/err" || fail "the refusal names task-log-size: $(cat "$work/err")"
expect_status 2 "--task-log-keep 17" "$shoal" worker --data-dir "$work/x" --task-log-keep 17
grep -q 'task-log-keep' "$work/err" || fail "the refusal names task-log-keep: $(cat "$work/err")"
"$shoal" worker --help | grep -q -- '--task-log-size' || fail "worker --help lists --task-log-size"

start a --expect 1 || exit 1
port=$(port_of a)
start b --join "127.0.0.1:$port" || exit 1
# c runs chatty alone: it never runs hello, whose output it is asked for.
start c --join "127.0.0.1:$port" --handles chatty || exit 1
members3 () { [ "$("$shoal" members --data-dir "$work/a" | grep -c ' alive ')" -eq 3 ]; }
wait_for "3 members" members3 || exit 1

# A submit that meets a leader change is tried again (the same spec again
# is done already).
wait_for "submit hello" "$shoal" submit hello --parallelism 1 --data-dir "$work/a" \
    --command 'printf "out-line-1\nout-line-2\n"; printf "err-line-1\n" >&2; exec sleep 600'
# holder TASK: the name of the node the leader places TASK on, as active.
holder () {
    "$shoal" status --json --data-dir "$work/a" 2>/dev/null | python3 -c '
import json, sys
for t in json.load(sys.stdin)["tasks"]:
    if t["task"] == sys.argv[1] and t["role"] == "active" and t["state"] == "running":
        print(t["node_name"])' "$1"
}
# holder_now TASK: its holder, waiting while a loaded machine's leases
# flicker (a task whose lease lapsed is starting again, not running).
holder_now () {
    local i name
    for i in $(seq 300); do name=$(holder "$1"); [ -n "$name" ] && break; sleep 0.2; done
    echo "$name"
}
runs=$(holder_now hello/0)
[ -n "$runs" ] || { fail "hello/0 runs"; exit 1; }
other=c
echo "hello/0 runs on $runs; asking $other"

# The last 3 lines: those of the last run of the command (a loaded
# machine's lease may lapse, and the task start again).
three_lines () {
    [ "$("$shoal" logs hello/0 --lines 3 --data-dir "$work/$other" 2>/dev/null | grep -c -- '-line-')" -eq 3 ]
}
wait_for "shoal logs on $other gives 3 lines" three_lines
until_status 0 "shoal logs hello/0 on $other" "$shoal" logs hello/0 --lines 3 --data-dir "$work/$other"
time_re='[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z'
grep -q -E "^$time_re stdout out-line-1\$" "$work/out" || fail "out-line-1 with its time: $(cat "$work/out")"
grep -q -E "^$time_re stdout out-line-2\$" "$work/out" || fail "out-line-2: $(cat "$work/out")"
grep -q -E "^$time_re stderr err-line-1\$" "$work/out" || fail "err-line-1 on stderr: $(cat "$work/out")"
# Each stream in its order (the two streams are two pipes: not between them).
[ "$(grep -o 'out-line-.' "$work/out" | tr '\n' ' ')" = "out-line-1 out-line-2 " ] ||
    fail "stdout's lines in their order: $(cat "$work/out")"

until_status 0 "--lines 1" "$shoal" logs hello/0 --lines 1 --data-dir "$work/$other"
[ "$(wc -l <"$work/out")" -eq 1 ] || fail "--lines 1 gives one line: $(cat "$work/out")"
until_status 0 "--json" "$shoal" logs hello/0 --lines 3 --json --data-dir "$work/$other"
python3 - "$work/out" "$runs" <<'PY' || fail "--json: $(cat "$work/out")"
import json, sys
out = json.load(open(sys.argv[1]))
assert out["task"] == "hello/0", out
[node] = out["nodes"]
assert node["node"] in ("a", "b") and node["result"] == "ok", node
assert sorted(l.split(" ", 1)[1] for l in node["lines"]) == \
    ["stderr err-line-1", "stdout out-line-1", "stdout out-line-2"], node
PY

[ -f "$work/$runs/logs/hello%2F0.log" ] || fail "the file is $runs/logs/hello%2F0.log: $(ls "$work/$runs/logs")"
expect_status 1 "--node $other, which never ran it" "$shoal" logs hello/0 --node "$other" \
    --data-dir "$work/$runs"
grep -q "no output kept for hello/0 on $other" "$work/err" || fail "says no output kept: $(cat "$work/err")"
expect_status 0 "--all-nodes" "$shoal" logs hello/0 --all-nodes --data-dir "$work/$other"
grep -q 'out-line-2' "$work/out" || fail "--all-nodes finds it: $(cat "$work/out")"

expect_status 1 "an unknown task" "$shoal" logs nope/0 --data-dir "$work/a"
grep -q 'task unknown: nope/0' "$work/err" || fail "says task unknown: $(cat "$work/err")"
expect_status 1 "an unknown node" "$shoal" logs hello/0 --node zz --data-dir "$work/a"
grep -q 'node unknown: zz' "$work/err" || fail "says node unknown: $(cat "$work/err")"
expect_status 2 "not a task id" "$shoal" logs "" --data-dir "$work/a"

# A chatty task: 400 lines of 100 bytes, 40 kB through a 4 kB cap.
wait_for "submit chatty" "$shoal" submit chatty --parallelism 1 --data-dir "$work/a" \
    --command 'i=0; while [ $i -lt 400 ]; do printf "chatty %04d %088d\n" $i 0; i=$((i+1)); done; exec sleep 600'
last_line () { "$shoal" logs chatty/0 --lines 1 --data-dir "$work/a" 2>/dev/null | grep -q 'chatty 0399'; }
wait_for "the last line is read" last_line
chatty=$(holder_now chatty/0)
dir=$work/$chatty/logs
for file in "$dir/chatty%2F0.log" "$dir/chatty%2F0.log.1"; do
    [ -f "$file" ] || { fail "$file is there"; continue; }
    size=$(stat -c %s "$file")
    [ "$size" -le $cap ] || fail "$file within the cap: $size bytes"
done
[ ! -e "$dir/chatty%2F0.log.2" ] || fail "one older generation only"
until_status 0 "--lines 10000 of chatty" "$shoal" logs chatty/0 --lines 10000 --data-dir "$work/a"
lines=$(wc -l <"$work/out")
# What the two files hold: at most 2 × 4096 bytes of 117-byte records.
[ "$lines" -gt 30 ] && [ "$lines" -le 70 ] || fail "the current and the older file: $lines lines"
tail -n 1 "$work/out" | grep -q 'chatty 0399' || fail "the last line last: $(tail -n 1 "$work/out")"

# A member that does not answer (stopped): the node asked says so, once
# its wait (5 s) is over.
third=a
[ "$runs" = a ] && third=b
kill -STOP "${pid_of[$third]}"
expect_status 1 "--node $third, stopped" "$shoal" logs hello/0 --node "$third" --data-dir "$work/$other"
# A loaded machine may take long enough for $third to be found dead first.
grep -q -E "node not answering: $third|$third: not a live member" "$work/err" ||
    fail "says $third is not answering: $(cat "$work/err")"
kill -CONT "${pid_of[$third]}"
wait_for "3 members again" members3

stop c b a
exit $((failures > 0))

#!/usr/bin/env bash
# The event log and logrotate: a worker with --events, whose file is
# renamed again and again while requests make it write, each rename
# followed by SIGHUP.
#
#   - after each SIGHUP the lines go to a new file of the same name, and
#     the worker's standard error goes on as it was;
#   - no line is lost: each rescale answered through the worker has its
#     `request` line in one of the files, once;
#   - no line is split: every line of every file is one whole JSON object,
#     and mono never goes back from one file to the next;
#   - a reopen that fails (the name is now a directory) keeps the log in
#     the old file and says why; the next SIGHUP, once the name is free,
#     opens it.
#
# Waits are bounded against a hang only.
set -u
shoal=$1
# shellcheck source=lib/expect.bash
. "$(dirname "$0")/lib/expect.bash"
# shellcheck source=lib/workers.bash
. "$(dirname "$0")/lib/workers.bash"
command -v python3 >/dev/null || { echo "skip: no python3 to read the JSON lines"; exit 77; }

events=$work/events.jsonl
"$shoal" worker --data-dir "$work/w" --bind 127.0.0.1:0 --beacon-port 0 --profile loopback \
    --name w --expect 1 --events "$events" >"$work/w.out" 2>"$work/w.log" &
pid_of[w]=$!
wait_for "w starts" grep -q ' on port ' "$work/w.log" || exit 1
wait_for "w leads" grep -q '"leads":true' "$events" || exit 1
expect_status 0 "submit" "$shoal" submit rot --parallelism 1 --command 'exec sleep 600' \
    --data-dir "$work/w"

# Rescales, each answered, while the file is renamed under the worker.
rescales=0
rescale () {
    if "$shoal" rescale rot "$1" --data-dir "$work/w" >/dev/null 2>"$work/rescale.err"; then
        rescales=$((rescales + 1))
    else
        fail "rescale rot $1 ($(cat "$work/rescale.err"))"
    fi
}
logs=()
for round in 1 2 3 4 5; do
    rescale 2
    mv "$events" "$events.$round"
    logs+=("$events.$round")
    rescale 3
    kill -HUP "${pid_of[w]}"
    wait_for "round $round: a new file after SIGHUP" test -f "$events" || exit 1
    rescale 1
done
reopened () { [ "$(grep -c 'SIGHUP: the event log is open again' "$work/w.log")" -eq "$1" ]; }
wait_for "the worker says it reopened, each time" reopened 5

# A reopen that fails: the name is taken by a directory.
mv "$events" "$events.6"
logs+=("$events.6")
mkdir "$events"
kill -HUP "${pid_of[w]}"
wait_for "a failed reopen is logged" grep -q "SIGHUP: events $events: cannot open: Is a directory" \
    "$work/w.log"
rescale 2
rmdir "$events"
kill -HUP "${pid_of[w]}"
wait_for "the next SIGHUP opens the name" test -e "$events"
rescale 1
logs+=("$events")
kill -0 "${pid_of[w]}" 2>/dev/null || fail "the worker runs on after SIGHUP"
grep -q ' on port ' "$work/w.log" || fail "standard error is the one the worker started with"
stop w

python3 - "$rescales" "${logs[@]}" <<'EOF' || fail "the rotated logs (above)"
import json, sys
want = int(sys.argv[1])
problems, requests, last_mono = [], 0, -1
for path in sys.argv[2:]:
    text = open(path).read()
    if text and not text.endswith("\n"):
        problems.append("%s ends inside a line" % path)
    lines = text.splitlines()
    if not lines:
        problems.append("%s is empty" % path)
    for number, line in enumerate(lines, 1):
        try:
            record = json.loads(line)
        except ValueError:
            problems.append("%s:%d is not one JSON object: %r" % (path, number, line[:80]))
            continue
        if record["mono"] < last_mono:
            problems.append("%s:%d: mono goes back" % (path, number))
        last_mono = record["mono"]
        if record["event"] == "request" and record["op"] == "rescale":
            requests += 1
# The 6th file also takes the lines written while the reopen failed.
if requests != want:
    problems.append("%d rescale lines in the files, %d rescales answered" % (requests, want))
for problem in problems:
    print("FAIL:", problem)
print("rotated logs: %d files, %d rescale lines" % (len(sys.argv) - 2, requests))
sys.exit(1 if problems else 0)
EOF

echo "eventlog_reopen: $failures failed"
exit $((failures > 0))

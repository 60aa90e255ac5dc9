#!/usr/bin/env bash
# The embedding example (examples/counter) as a user runs it: two services
# on loopback, joined by a seed. The first submits a stateful job; the
# second, started later, restores tasks as a learner (its lag falls) and is
# promoted; on SIGTERM it hands its tasks back and exits 0, and the first
# takes them over. Waits are bounded against a hang only.
set -u
build=$3
counter=$build/shoal-counter
# shellcheck source=lib/expect.bash
. "$(dirname "$0")/lib/expect.bash"
[ -x "$counter" ] || { echo "no $counter"; exit 1; }

# Ports no other test takes: this script's own, from its process id, and
# below Linux's ephemeral range (32768 up), where every outgoing connection
# and every port-0 bind of the tests running beside it lands (a CI run once
# found 52242 taken).
port_a=$((20000 + ($$ % 5000) * 2))
port_b=$((port_a + 1))
pids=()
cleanup () { for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null; done; rm -rf "$work"; }
trap cleanup EXIT

# Waits up to 60 s for a line matching pattern in file.
wait_for () { # file pattern what
    local i
    for i in $(seq 600); do
        grep -Eq "$2" "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    fail "$3: no line /$2/ in $1"; tail -20 "$1"; return 1
}

run () { # name port [seed] -- args
    local name=$1 port=$2 seed=$3; shift 3
    SHOAL_DATA_DIR=$work/$name SHOAL_BIND=127.0.0.1:$port SHOAL_JOIN=$seed \
        SHOAL_BEACON_PORT=0 SHOAL_PROFILE=loopback SHOAL_NAME=$name \
        "$counter" "$@" >"$work/$name.log" 2>&1 &
    pids+=($!)
}

run a "$port_a" "" --submit counter:4
wait_for "$work/a.log" '^submit counter:4: ok$' "a submits the job" || exit 1
# The cluster's first leader grants at once (no lease of before can hold):
# a's tasks start active.
wait_for "$work/a.log" '^start counter/3 as active' "a runs every task" || exit 1

run b "$port_b" "127.0.0.1:$port_a"
pid_b=${pids[1]}
wait_for "$work/b.log" '^start counter/[0-9] as learner' "b warms a learner up" || exit 1
wait_for "$work/b.log" '^promote counter/[0-9] to active' "b is promoted" || exit 1
task=$(grep -Eo '^promote counter/[0-9]' "$work/b.log" | head -1 | cut -d' ' -f2)
# The learner's lag fell step by step before its promotion.
lags=$(sed -n "/^start $(printf '%s' "$task" | sed 's|/|\\/|') as learner/,/^promote/p" "$work/b.log" |
    grep -Eo "^$task restoring, lag [0-9]+" | grep -Eo '[0-9]+$')
[ "$(echo "$lags" | wc -l)" -ge 2 ] || fail "$task: at least two lag reports before promotion ($lags)"
[ "$(echo "$lags" | sort -n -r)" = "$lags" ] || fail "$task: the lag only falls ($lags)"
# a stopped the task only after b caught up: a stop on a, then b's promotion.
grep -q "^stop $task\$" "$work/a.log" || fail "a stops $task for b"

kill -TERM "$pid_b"
for i in $(seq 300); do kill -0 "$pid_b" 2>/dev/null || break; sleep 0.1; done
wait "$pid_b"; status=$?
[ "$status" -eq 0 ] || fail "b exits 0 after its leave, not $status"
grep -q "^$task stopped at count" "$work/b.log" || fail "b stopped $task before it left"
grep -q '^left the cluster$' "$work/b.log" || fail "b says it left"
wait_for "$work/a.log" 'member b .* left$' "a sees b leave"
# a runs the task again: a learner promoted once b is gone (at the start
# it began active).
wait_for "$work/a.log" "^promote $task to active" "a takes $task back"

pid_a=${pids[0]}
kill -TERM "$pid_a"
for i in $(seq 300); do kill -0 "$pid_a" 2>/dev/null || break; sleep 0.1; done
wait "$pid_a"; status=$?
[ "$status" -eq 0 ] || fail "a exits 0 after its leave, not $status"
grep -q '^bye$' "$work/a.log" || fail "a says bye"

[ "$failures" -eq 0 ] || { echo "--- a"; cat "$work/a.log" | grep -v restoring; echo "--- b"; grep -v restoring "$work/b.log"; }
echo "example: $failures failed"
exit $((failures > 0))

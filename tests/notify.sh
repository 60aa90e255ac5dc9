#!/usr/bin/env bash
# The worker and systemd's notify protocol, without systemd: the test owns
# the unix datagram socket NOTIFY_SOCKET names (a small Python listener
# writes down each message it gets), and starts real workers.
#
#   - WATCHDOG=1 comes again and again when WATCHDOG_USEC is set, from the
#     start, before the node is ready;
#   - READY=1 comes only once the node joined and knows a leader: a worker
#     that waits for a second member (--expect 2) is not ready alone, and
#     is once the second one joined;
#   - STATUS= lines say what the worker does (joining, then its tasks and
#     leader, then leaving);
#   - STOPPING=1 comes at the leave (SIGTERM), and the worker exits 0;
#   - the children see none of NOTIFY_SOCKET, WATCHDOG_USEC, WATCHDOG_PID;
#   - a WATCHDOG_PID that is another process's: no WATCHDOG=1.
# Built without libsystemd, the worker sends nothing and says so at start.
#
# Waits are bounded against a hang only.
set -u
shoal=$1
build=$3
# shellcheck source=lib/expect.bash
. "$(dirname "$0")/lib/expect.bash"
# shellcheck source=lib/workers.bash
. "$(dirname "$0")/lib/workers.bash"
command -v python3 >/dev/null || { echo "skip: no python3 for the notify socket"; exit 77; }

# listen SOCKET FILE: each datagram on SOCKET becomes a line of FILE, its
# newlines written as '|'.
listen () {
    python3 -u - "$1" "$2" <<'EOF' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a", buffering=1) as out:
    while True:
        data = s.recv(4096)
        out.write(data.decode("utf-8", "replace").replace("\n", "|") + "\n")
EOF
    pid_of[listen_$(basename "$1")]=$!
}
quiet_listeners () { # the listeners end without a word from bash
    local name
    for name in "${!pid_of[@]}"; do
        [[ $name == listen_* ]] || continue
        kill "${pid_of[$name]}"; wait "${pid_of[$name]}" 2>/dev/null; unset "pid_of[$name]"
    done
}
count () { grep -c -- "$1" "$2" 2>/dev/null || true; }

start () { # name notify-file extra-env... -- flags...
    local name=$1; shift
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    env "${envs[@]}" "$shoal" worker --data-dir "$work/$name" --bind 127.0.0.1:0 --beacon-port 0 \
        --profile loopback --name "$name" "$@" >"$work/$name.out" 2>"$work/$name.log" &
    pid_of[$name]=$!
}

if ! grep -q '^SYSTEMD_FOUND:INTERNAL=1$' "$build/CMakeCache.txt" 2>/dev/null; then
    # No libsystemd: nothing goes out, and the worker says why.
    listen "$work/n.sock" "$work/n.msgs"
    wait_for "the listener binds" test -S "$work/n.sock" || exit 1
    start a NOTIFY_SOCKET="$work/n.sock" WATCHDOG_USEC=200000 -- --expect 1
    wait_for "a starts" grep -q ' on port ' "$work/a.log" || exit 1
    wait_for "a says it cannot notify" grep -q 'built without libsystemd' "$work/a.log"
    wait_for "a leads" grep -q -E 'leader [0-9a-f]{32}, term' "$work/a.log"
    stop a
    [ ! -s "$work/n.msgs" ] || fail "a worker built without libsystemd sent $(cat "$work/n.msgs")"
    quiet_listeners
echo "notify (built without libsystemd): $failures failed"
    exit $((failures > 0))
fi

listen "$work/a.sock" "$work/a.msgs"
wait_for "the listener binds" test -S "$work/a.sock" || exit 1
start a NOTIFY_SOCKET="$work/a.sock" WATCHDOG_USEC=400000 -- --expect 2
wait_for "a starts" grep -q ' on port ' "$work/a.log" || exit 1
grep -q 'WATCHDOG=1 every 200 ms' "$work/a.log" || fail "a says it sends WATCHDOG=1 every 200 ms"
watchdogs_at_least () { [ "$(count '^WATCHDOG=1$' "$work/a.msgs")" -ge "$1" ]; }
wait_for "WATCHDOG=1 before the node is ready" watchdogs_at_least 3
wait_for "STATUS says a joins" grep -q '^STATUS=joining: waiting for a leader' "$work/a.msgs"
# a waits for a second member: no leader, so not ready, however long.
grep -q 'READY=1' "$work/a.msgs" && fail "READY=1 before any leader"
grep -q -E 'leader [0-9a-f]{32}, term' "$work/a.log" && fail "a leader with one of two expected members"

port=$(port_of a)
start b -- --expect 2 --join "127.0.0.1:$port"
wait_for "READY=1 once b joined" grep -q '^READY=1$' "$work/a.msgs" || exit 1
grep -q -E 'leader [0-9a-f]{32}, term' "$work/a.log" || fail "READY=1 came before a knew a leader"
[ "$(count '^READY=1$' "$work/a.msgs")" -eq 1 ] || fail "READY=1 once"
wait_for "STATUS names the leader" grep -q '^STATUS=0 tasks (0 active); leader [0-9a-f]\{8\}' \
    "$work/a.msgs"

# The children do not see the manager's variables.
expect_status 0 "submit" "$shoal" submit envs --parallelism 2 \
    --command "env >$work/env.\$SHOAL_INDEX; exec sleep 600" --data-dir "$work/a"
wait_for "both children wrote their environment" test -s "$work/env.0" -a -s "$work/env.1"
wait_for "the children's env is whole" grep -q '^SHOAL_TASK=' "$work/env.0"
grep -q -E '^(NOTIFY_SOCKET|WATCHDOG_USEC|WATCHDOG_PID)=' "$work"/env.* &&
    fail "a child sees the manager's variables: $(grep -h -E '^(NOTIFY|WATCHDOG)' "$work"/env.*)"
wait_for "STATUS counts the tasks" grep -q '^STATUS=[12] tasks ([12] active)' "$work/a.msgs"

# The leave: STOPPING=1, a status that says so, exit 0.
before=$(count '^WATCHDOG=1$' "$work/a.msgs")
stop a
grep -q '^STOPPING=1$' "$work/a.msgs" || fail "STOPPING=1 at the leave"
grep -q '^STATUS=leaving' "$work/a.msgs" || fail "STATUS says a leaves"
[ "$(count '^WATCHDOG=1$' "$work/a.msgs")" -ge "$before" ] || fail "the watchdog count"
stopping=$(grep -n -m1 '^STOPPING=1$' "$work/a.msgs" | cut -d: -f1)
ready=$(grep -n -m1 '^READY=1$' "$work/a.msgs" | cut -d: -f1)
[ "$ready" -lt "$stopping" ] || fail "READY=1 before STOPPING=1"

# A watchdog set for another process is not this worker's.
listen "$work/c.sock" "$work/c.msgs"
wait_for "the listener binds" test -S "$work/c.sock" || exit 1
start c NOTIFY_SOCKET="$work/c.sock" WATCHDOG_USEC=200000 WATCHDOG_PID=1 -- \
    --join "127.0.0.1:$(port_of b)"
wait_for "c is ready" grep -q '^READY=1$' "$work/c.msgs"
grep -q 'WATCHDOG=1 every' "$work/c.log" && fail "c takes another process's watchdog"
stop c b
grep -q '^WATCHDOG=1$' "$work/c.msgs" && fail "c sent WATCHDOG=1 for another process"
grep -q '^STOPPING=1$' "$work/c.msgs" || fail "c: STOPPING=1 at the leave"

quiet_listeners
echo "notify: $(count . "$work/a.msgs") messages from a, $(count '^WATCHDOG=1$' "$work/a.msgs") of them WATCHDOG=1"
echo "notify: $failures failed"
exit $((failures > 0))

#!/usr/bin/env bash
# Two voters of three leave together, with real workers on loopback: a,
# b and c become voters (`shoal members`' VOTER column), then b and c get
# SIGTERM at the same moment. Before, the leader dropped one of them and
# waited for the other's acknowledgement of the new set of two, which had
# left: it lost its majority for good ("no leader" on a, every task
# frozen). Now each leaver waits until its leader dropped it, so:
#
#   - b and c each exit 0;
#   - a still leads, alone in the voter set;
#   - a job submitted after the leave runs on a (the leader acts: before,
#     the submit found no leader to take it, and a froze its children).
#
# Nothing here depends on the machine's speed: a stall past the loopback
# lease (200 ms) may cost a a term, never the outcome. Waits are bounded
# against a hang only.
set -u
shoal=$1
# shellcheck source=lib/expect.bash
. "$(dirname "$0")/lib/expect.bash"
# shellcheck source=lib/workers.bash
. "$(dirname "$0")/lib/workers.bash"

start () { # name flag...
    local name=$1
    shift
    start_worker "$name" --profile loopback "$@"
    wait_for "$name starts" has_port "$name"
}
# voters N: the leader's view names N voters, every one alive.
voters () { [ "$("$shoal" members --data-dir "$work/a" | grep -c ' alive .* yes$')" -eq "$1" ]; }

start a --expect 1 || exit 1
wait_for "a leads" grep -q -E 'leader [0-9a-f]{32}, term' "$work/a.log" || exit 1
start b --join "127.0.0.1:$(port_of a)" || exit 1
start c --join "127.0.0.1:$(port_of a)" || exit 1
# Members join the set once up for stable_ms (3 s on loopback).
wait_for "a, b and c vote" voters 3 || exit 1
leader=$(leader_of a)
[ "$leader" = "$(id_of a)" ] || fail "a leads ($leader)"
expect_status 0 "submit" "$shoal" submit one --parallelism 1 --command 'exec sleep 600' \
    --data-dir "$work/a"
wait_for "the task runs" grep -q 'started one/0' "$work"/[abc].log || exit 1

# Both at once.
kill -TERM "${pid_of[b]}" "${pid_of[c]}"
for n in b c; do
    wait "${pid_of[$n]}"
    status=$?
    unset "pid_of[$n]"
    [ "$status" -eq 0 ] || fail "$n leaves and exits 0, not $status"
done

wait_for "a alone votes" voters 1
a_leads () { [ "$(leader_of a)" = "$(id_of a)" ]; }
wait_for "a still leads" a_leads
wait_for "a job submitted after the leave" "$shoal" submit two --parallelism 1 \
    --command 'exec sleep 600' --data-dir "$work/a" --timeout 2s
wait_for "a runs the new job" grep -q 'started two/0' "$work/a.log"

stop a
echo "voters_leave: $failures failed"
exit $((failures > 0))

#!/usr/bin/env bash
# Joining, as a new user gets it wrong: workers on loopback whose seeds do
# not answer, or who hold another key than the cluster.
#
#   - a worker whose seed does not answer warns, naming the seed and why,
#     and keeps trying; it does not elect itself leader of a cluster of one
#     (its status shows no leader well after the 5 s it once took to);
#   - with --expect 1 such a worker may lead alone;
#   - a seed that does not resolve is named with the resolver's reason;
#   - a worker holding another key than its seed: the seed logs that it
#     refused what came, naming the sender's address.
#
# Waits are bounded against a hang only.
set -u
shoal=$1
# shellcheck source=lib/expect.bash
. "$(dirname "$0")/lib/expect.bash"
# shellcheck source=lib/workers.bash
. "$(dirname "$0")/lib/workers.bash"

start () { # name options...
    local name=$1
    shift
    start_worker "$name" --log-format=text "$@"
}
has_leader () { [ -n "$(leader_of "$1")" ]; }

# --- a seed that does not answer (the LAN profile: once, a node alone led
# after its 5 s settle time) -----------------------------------------------

# Port 9 (discard) on loopback: nothing of shoal answers there.
start lone --join 127.0.0.1:9
wait_for "a lone worker warns that its seed does not answer" \
    grep -q 'join: seed 127.0.0.1:9: no answer' "$work/lone.log"
grep -q 'no leader until a seed answers' "$work/lone.log" ||
    fail "a lone worker says why it has no leader"
sleep 2 # the warning comes at the end of the settle time; well past it now
[ -z "$(leader_of lone)" ] || fail "a worker whose seed does not answer leads a cluster of one"
grep -Eq ' leader [0-9a-f]{32}' "$work/lone.log" && fail "a worker whose seed does not answer found a leader"
"$shoal" members --json --data-dir "$work/lone" >"$work/members" 2>&1
grep -Eq '"leader": *"[0-9a-f]{32}"' "$work/members" && fail "members --json names a leader"
stop lone

# --expect 1 says a cluster of one is fine.
start alone --profile loopback --expect 1 --join 127.0.0.1:9
wait_for "with --expect 1, a worker whose seed does not answer leads alone" \
    has_leader alone
wait_for "and it still warns of its seed" grep -q 'join: seed 127.0.0.1:9: no answer' \
    "$work/alone.log"
stop alone

# A name that does not resolve (.invalid never does) is named at once.
start solo --profile loopback --join no-such-seed.invalid:7946
wait_for "a seed that does not resolve is named, with why" \
    grep -q 'join: seed no-such-seed.invalid:7946: cannot resolve' "$work/solo.log"
stop solo

# --- another key -------------------------------------------------------

"$shoal" keygen --out "$work/a.key" && "$shoal" keygen --out "$work/b.key" || fail "keygen"
start a --profile loopback --key-file "$work/a.key"
wait_for "a starts" has_port a || exit 1
start b --profile loopback --key-file "$work/b.key" --join "127.0.0.1:$(port_of a)"
wait_for "b starts" has_port b || exit 1
wait_for "the cluster names the node with another key by its address" \
    grep -q "refused a message from 127.0.0.1:$(port_of b): sealed with a key this node does not hold" \
    "$work/a.log"
wait_for "the node with another key warns that its seed does not answer" \
    grep -q "join: seed 127.0.0.1:$(port_of a): no answer" "$work/b.log"
[ -z "$(leader_of b "$work/b.key")" ] || fail "the node with another key leads a cluster of one"
[ "$(grep -c 'refused' "$work/a.log")" -eq 1 ] || fail "a sender is told of once a minute"

stop a b

if [ "$failures" -eq 0 ]; then echo "join: all checks passed"; fi
exit $((failures > 0))

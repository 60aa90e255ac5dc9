#!/usr/bin/env bash
# Seeds by DNS, on real workers, against a DNS server of the test's own
# (tests/dns_server.py), in a network and mount namespace of the script's
# own, whose /etc/resolv.conf names that server:
#
#   - a seed named by an SRV record (_shoal._udp.shoal.test) is joined
#     through its target's address and port;
#   - a seed named by an A record (a.shoal.test:PORT) is joined through;
#   - a resolver that never answers does not stall the node: with a seed
#     whose lookup never ends (the server drops its queries, and the
#     resolver waits 5 x 30 s before it gives up) and a numeric seed, the
#     worker joins through the numeric one while the lookup still waits;
#     it then leaves and exits 0 as usual;
#   - an SRV name that does not exist, and one whose target does not
#     resolve, are named in a warning with the reason.
#
# Waits are bounded against a hang only.
set -u
shoal=$1
here=$(cd "$(dirname "$0")" && pwd)
if [ "${SHOAL_TEST_IN_NETNS:-}" != 1 ]; then
    [ "$(id -u)" -eq 0 ] || { echo "skip: a network and mount namespace need root"; exit 77; }
    for tool in unshare python3; do
        command -v $tool >/dev/null || { echo "skip: no $tool"; exit 77; }
    done
    [ -e /etc/resolv.conf ] || { echo "skip: no /etc/resolv.conf to mount a test one over"; exit 77; }
    unshare -n -m --propagation private true 2>/dev/null ||
        { echo "skip: cannot make a network and mount namespace"; exit 77; }
    SHOAL_TEST_IN_NETNS=1 exec unshare -n -m --propagation private bash "$0" "$@"
fi
. "$here/lib/expect.bash"
. "$here/lib/workers.bash"

ip link set lo up
# The resolver asks only the test's server, and waits for it as long as it
# may: 30 s, 5 times.
printf 'nameserver 127.0.0.1\noptions timeout:30 attempts:5\n' >"$work/resolv.conf"
mount --bind "$work/resolv.conf" /etc/resolv.conf || { echo "skip: cannot mount over /etc/resolv.conf"; exit 77; }

zone=$work/zone
: >"$zone"
python3 "$here/dns_server.py" "$zone" "$work/dns.ready" &
server=$!
before_cleanup () { kill "$server" 2>/dev/null; }
wait_for "the DNS server listens" test -s "$work/dns.ready"

start () { # name options...
    local name=$1
    shift
    start_worker "$name" --profile loopback --log-format=text "$@"
}
follows_a () { [ -n "$(leader_of "$1")" ] && [ "$(leader_of "$1")" = "$(id_of a)" ]; }

start a --expect 1
wait_for "the first worker says its port" has_port a
wait_for "the first worker leads" follows_a a
port=$(port_of a)
cat >"$zone" <<ZONE
a.shoal.test A 127.0.0.1
_shoal._udp.shoal.test SRV 0 0 $port a.shoal.test.
_bad._udp.shoal.test SRV 0 0 $port nowhere.shoal.test.
never.shoal.test DROP
ZONE

# --- SRV ---------------------------------------------------------------
start srv --join _shoal._udp.shoal.test
wait_for "a worker joins through an SRV record" follows_a srv
grep -q '^_shoal._udp.shoal.test SRV$' "$zone.log" || fail "the worker asked for the SRV record"

# --- A -------------------------------------------------------------------
start byname --join "a.shoal.test:$port"
wait_for "a worker joins through a name" follows_a byname

# --- a resolver that never answers ------------------------------------
start stuck --join "never.shoal.test:$port,127.0.0.1:$port"
wait_for "a worker whose other seed's lookup never ends joins through the numeric one" follows_a stuck
grep -q '^never.shoal.test A$' "$zone.log" || fail "the worker asked for the name that never answers"
grep -q 'join: seed never.shoal.test' "$work/stuck.log" &&
    fail "the lookup that never answers ended (it must still wait)"
stop stuck

# --- names that lead nowhere ---------------------------------------------
start missing --join _none._udp.shoal.test
wait_for "an SRV name that does not exist is named, with why" \
    grep -q 'join: seed _none._udp.shoal.test: cannot resolve: no such name' "$work/missing.log"
stop missing
start badtarget --join _bad._udp.shoal.test
wait_for "an SRV record whose target does not resolve is named, with why" \
    grep -q 'join: seed _bad._udp.shoal.test: target nowhere.shoal.test: cannot resolve' \
    "$work/badtarget.log"
stop badtarget

stop srv byname a
[ "$failures" -eq 0 ] && echo "dns: ok"
exit $((failures > 0))

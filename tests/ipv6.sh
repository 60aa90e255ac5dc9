#!/usr/bin/env bash
# IPv6, in a network namespace of the test's own (which needs root; without
# it the test says so and is skipped): two workers bound to [::1], the
# second given the first as its seed, become one cluster with one leader;
# and a worker bound to [::] (dual-stack) makes one with an IPv4 worker.
# Seeds and datagrams (the membership) and links (the election's frames)
# all go over IPv6. Beacons stay IPv4, and are off here.
#
# Waits are bounded against a hang only.
set -u
shoal=$1
if [ "${SHOAL_TEST_IN_NETNS:-}" != 1 ]; then
    [ "$(id -u)" -eq 0 ] || { echo "skip: a network namespace needs root"; exit 77; }
    command -v unshare >/dev/null && command -v ip >/dev/null ||
        { echo "skip: no unshare or ip"; exit 77; }
    unshare -n true 2>/dev/null || { echo "skip: cannot make a network namespace"; exit 77; }
    SHOAL_TEST_IN_NETNS=1 exec unshare -n bash "$0" "$@"
fi
ip link set lo up
ip -6 addr show dev lo | grep -q '::1/128' || { echo "skip: no IPv6 on loopback"; exit 77; }
# shellcheck source=lib/expect.bash
. "$(dirname "$0")/lib/expect.bash"
# shellcheck source=lib/workers.bash
. "$(dirname "$0")/lib/workers.bash"

start () { # name options...
    local name=$1; shift
    "$shoal" worker --profile loopback --data-dir "$work/$name" --beacon-port 0 --name "$name" \
        --log-format=text "$@" >"$work/$name.out" 2>"$work/$name.log" &
    pid_of[$name]=$!
}
# Both of two see both alive, at addresses of the pattern, and follow one
# leader.
one_cluster () { # name name address-pattern
    local name leader
    for name in "$1" "$2"; do
        "$shoal" members --json --data-dir "$work/$name" >"$work/members.$name" 2>&1 || return 1
        [ "$(grep -o '"state": *"alive"' "$work/members.$name" | wc -l)" -eq 2 ] || return 1
        [ "$(grep -Eo "\"addr\": *\"$3\"" "$work/members.$name" | wc -l)" -eq 2 ] || return 1
    done
    leader=$(leader_of "$1")
    [ -n "$leader" ] && [ "$leader" = "$(leader_of "$2")" ]
}

start a --bind '[::1]:0'
wait_for "a starts on [::1]" has_port a || exit 1
start b --bind '[::1]:0' --join "[::1]:$(port_of a)"
wait_for "b starts on [::1]" has_port b || exit 1
wait_for "two workers on IPv6 make one cluster with one leader" \
    one_cluster a b '\[::1\]:[0-9]+'
stop a b

# Bound to [::], a worker is dual-stack: an IPv4 worker joins it at its
# IPv4 address, and each names the other in IPv4.
start c --bind '[::]:0'
wait_for "c starts on [::]" has_port c || exit 1
start d --bind 127.0.0.1:0 --join "127.0.0.1:$(port_of c)"
wait_for "d starts on 127.0.0.1" has_port d || exit 1
wait_for "a worker on [::] and one on IPv4 make one cluster with one leader" \
    one_cluster c d '127\.0\.0\.1:[0-9]+'
stop c d

if [ "$failures" -eq 0 ]; then echo "ipv6: all checks passed"; fi
exit $((failures > 0))

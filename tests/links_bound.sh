#!/usr/bin/env bash
# Links bounded by what a node talks to (docs/node.md, "Links"), on real
# processes: twelve workers on 127.0.0.1 (LAN timings, beacons off), all
# joining through the first. Once every one sees twelve members alive and
# all follow one leader, they idle past the links' idle timeout (four link
# timeouts: 8 s on a LAN), then each worker's established TCP connections
# are counted from `ss`: those it made (its links, DEALERs to other
# members' ROUTERs) and those it accepted (on its own port).
#
# What is asserted:
# - every worker, the leader too, holds at most $max_links links of its own:
#   a follower's to the leader, and one to a member it syncs with now and
#   then (anti-entropy, every 30 s on a LAN); the leader sends to followers
#   over the connections they made to it, so it needs none per member (a
#   full mesh held eleven each);
# - the leader's accepted connections are at most one per other member;
# - after the idle spell every worker still names the same leader.
# The counts are printed. Waits are bounded against a hang only.
set -u
shoal=$1
# shellcheck source=lib/expect.bash
. "$(dirname "$0")/lib/expect.bash"
# shellcheck source=lib/workers.bash
. "$(dirname "$0")/lib/workers.bash"
command -v ss >/dev/null || { echo "skip: no ss to count connections"; exit 77; }
nodes=12
max_links=3

start () { # name [seed]
    SHOAL_PROFILE=lan start_worker "$1" ${2:+--join "$2"}
}
start n1
wait_for "n1 starts" has_port n1 || exit 1
seed=127.0.0.1:$(port_of n1)
for i in $(seq 2 $nodes); do start "n$i" "$seed"; done
for i in $(seq 2 $nodes); do wait_for "n$i starts" has_port "n$i" || exit 1; done
all_alive () { [ "$("$shoal" members --data-dir "$work/n1" | grep -c ' alive ')" -eq $nodes ]; }
wait_for "$nodes members alive" all_alive || exit 1
# Every worker names one leader, the same.
one_leader () {
    local i first
    first=$(leader_of n1)
    [ -n "$first" ] || return 1
    for i in $(seq 2 $nodes); do [ "$(leader_of "n$i")" = "$first" ] || return 1; done
    echo "$first"
}
wait_for "all follow one leader" one_leader || exit 1
leader=$(one_leader)

# Idle: past four link timeouts (8 s) and a sweep.
sleep 12
ss -tnpH state established >"$work/ss" 2>&1
# The established connections worker name holds that it made (local port
# not its own) or accepted (its own).
made () { grep "pid=${pid_of[$1]}," "$work/ss" | awk -v port=":$(port_of "$1")" '$3 !~ port"$"' | wc -l; }
accepted () { grep "pid=${pid_of[$1]}," "$work/ss" | awk -v port=":$(port_of "$1")" '$3 ~ port"$"' | wc -l; }
for i in $(seq 1 $nodes); do
    name=n$i
    role=follower
    [ "$(id_of "$name")" = "$leader" ] && role=leader
    links=$(made "$name")
    incoming=$(accepted "$name")
    echo "$name ($role): $links links, $incoming accepted"
    [ "$links" -le $max_links ] || fail "$name ($role) holds $links links, more than $max_links"
    if [ $role = leader ]; then
        [ "$incoming" -le $((nodes - 1)) ] ||
            fail "the leader accepted $incoming connections, more than one per member"
    fi
done
[ "$(one_leader)" = "$leader" ] || fail "after the idle spell, all still follow $leader"

if [ "$failures" -eq 0 ]; then echo "links_bound: all checks passed"; fi
exit $((failures > 0))

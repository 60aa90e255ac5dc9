#!/usr/bin/env bash
# Links after a one-way cut, on real processes: three workers (LAN timings),
# each in a network namespace of its own on a bridge, all inside a namespace
# of the test's own (which needs root and nft; without them the test says so
# and is skipped). n1 leads (highest priority). For each direction in turn,
# nftables cuts one way between n1 and n3 for $SHOAL_LINKS_CUT_S seconds (30
# by default), long enough for TCP's retransmission backoff to reach several
# seconds on a connection that lives through it; then the cut is healed.
#
# What is asserted (docs/node.md, "Links"):
# - at the heal, no established connection between n1 and n3 holds a
#   retransmission backoff of 3 or more: a link that cannot get through is
#   closed by its heartbeats and connected again, so nothing waits for TCP's
#   next retransmission (before the links had heartbeats, the leader's
#   connection held backoff 7 here, and n3 followed again ~23 s later);
# - after the heal, n3 follows n1 again, and both name one leader and term.
# The seconds from the heal to n3 following again are printed, never asserted:
# waits are bounded against a hang only.
set -u
shoal=$1
if [ "${SHOAL_TEST_IN_NETNS:-}" != 1 ]; then
    [ "$(id -u)" -eq 0 ] || { echo "skip: network namespaces and nftables need root"; exit 77; }
    for tool in unshare ip nft ss; do
        command -v $tool >/dev/null || { echo "skip: no $tool"; exit 77; }
    done
    unshare -n true 2>/dev/null || { echo "skip: cannot make a network namespace"; exit 77; }
    SHOAL_TEST_IN_NETNS=1 exec unshare -n bash "$0" "$@"
fi
cut_s=${SHOAL_LINKS_CUT_S:-30}
# shellcheck source=lib/expect.bash
. "$(dirname "$0")/lib/expect.bash"
# shellcheck source=lib/workers.bash
. "$(dirname "$0")/lib/workers.bash"

# The nodes' namespaces have names, which are global: each is made with the
# test's pid in it, and removed on exit whatever happens.
prefix="shoal-links-$$"
net=10.78.0
before_cleanup () {
    local i pid
    [ -n "${SHOAL_LINKS_KEEP:-}" ] && cp -r "$work" "$SHOAL_LINKS_KEEP"
    for pid in "${pid_of[@]}"; do kill -9 "$pid" 2>/dev/null; done
    for i in 1 2 3; do ip netns del "$prefix-n$i" 2>/dev/null; done
}
ns () { echo "$prefix-n$1"; }

ip link set lo up
ip link add br0 type bridge && ip link set br0 up || { echo "skip: no bridge here"; exit 77; }
for i in 1 2 3; do
    ip netns add "$(ns "$i")" || { fail "namespace n$i"; exit 1; }
    ip link add "v$i" type veth peer name eth0 netns "$(ns "$i")" &&
        ip link set "v$i" master br0 up &&
        ip -n "$(ns "$i")" link set lo up &&
        ip -n "$(ns "$i")" addr add "$net.$i/24" dev eth0 &&
        ip -n "$(ns "$i")" link set eth0 up || { fail "veth of n$i"; exit 1; }
done
nft -f - <<<"table inet probe { }" 2>/dev/null && nft delete table inet probe ||
    { echo "skip: nftables does not work here"; exit 77; }

start () { # index priority
    local name=n$1
    ip netns exec "$(ns "$1")" "$shoal" worker --profile lan --data-dir "$work/$name" \
        --bind "$net.$1:7946" --join "$net.1:7946" --beacon-port 0 --name "$name" \
        --priority "$2" --log-format=text --events "$work/$name.events" \
        >"$work/$name.out" 2>"$work/$name.log" &
    pid_of[$name]=$!
    disown
}
# The leader and term a node's members answer names, as "ID TERM".
view_of () {
    "$shoal" members --json --data-dir "$work/$1" 2>/dev/null |
        tr -d ' \n' | sed -n -E 's/.*"leader":"([0-9a-f]{32})","term":([0-9]+).*/\1 \2/p'
}
# Both nodes name n1 as leader, at one term.
follows_n1 () { # name
    local leader view
    leader=$(id_of n1)
    view=$(view_of n1)
    [ -n "$view" ] && [ "${view% *}" = "$leader" ] && [ "$(view_of "$1")" = "$view" ]
}
all_follow_n1 () { follows_n1 n2 && follows_n1 n3; }

# The largest retransmission backoff of an established connection between
# n1 and n3, as each side's kernel has it (0 when none backs off).
backoff () {
    local i
    for i in 1 3; do
        ip netns exec "$(ns "$i")" ss -tino state established \
            "( dst $net.1 or dst $net.3 )" >>"$work/ss.$direction" 2>&1
    done
    { grep -o 'backoff:[0-9]*' "$work/ss.$direction" | cut -d: -f2; echo 0; } | sort -n | tail -1
}

start 1 3
wait_for "n1 starts" has_port n1 || exit 1
start 2 2
start 3 1
wait_for "n2 and n3 start" has_port n2 && wait_for "n3 starts" has_port n3 || exit 1
wait_for "n2 and n3 follow n1" all_follow_n1 || exit 1

# Seconds from a time (epoch seconds) to the node's first leader line that
# names n1, after it, by the wall clock of its event log.
since () { # epoch name
    local wall
    wall=$(grep '"event":"leader"' "$work/$2.events" | grep "\"leader\":\"$(id_of n1)\"" |
        sed -n -E 's/.*"wall":"([^"]+)".*/\1/p' | while read -r line; do
            date -d "$line" +%s.%N
        done | awk -v from="$1" '$1 >= from { print; exit }')
    awk -v from="$1" -v to="${wall:-nan}" 'BEGIN { printf "%.2f", to - from }'
}

# One cut: in namespace of index, drop what comes from address .from.
one_way () { # direction index from
    direction=$1
    echo "cut: $1 for $cut_s s"
    ip netns exec "$(ns "$2")" nft -f - <<EOF || { fail "nft rule for $1"; return 1; }
table inet cut {
    chain in { type filter hook input priority 0; ip saddr $net.$3 drop; }
}
EOF
    sleep "$cut_s"
    local most
    most=$(backoff)
    echo "  largest backoff between n1 and n3 at the heal: $most"
    ip netns exec "$(ns "$2")" nft delete table inet cut
    local healed=$EPOCHREALTIME
    [ "$most" -lt 3 ] ||
        fail "$1: at the heal, a connection between n1 and n3 waits out a backoff of $most ($(cat "$work/ss.$direction"))"
    wait_for "$1: after the heal, n3 follows n1 again" follows_n1 n3 &&
        echo "  n3 follows n1 again $(since "$healed" n3) s after the heal"
}
# n3 stops hearing the leader, then the leader stops hearing n3.
one_way n3-hears-not-n1 3 1
one_way n1-hears-not-n3 1 3

if [ "$failures" -eq 0 ]; then echo "links: all checks passed"; fi
exit $((failures > 0))

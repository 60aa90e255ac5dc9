# bench/lib/netns.bash: a network of namespaces for benchmarks that run
# real processes (bench/side_by_side.sh, bench/task_failover.sh). One Linux
# bridge, P-br0, in a namespace of its own (so nothing of the root namespace
# is touched), and one namespace per process, wired to the bridge by a veth
# pair: eth0 inside, P-<name> on the bridge's side. P is $net_prefix, set
# before sourcing this (sbs by default): each benchmark names its own. The
# faults are the rules of one nftables chain on the bridge (table `bridge
# P`, hook forward): every frame between two nodes crosses it once, so one
# nft command starts or ends a fault for all nodes at the same instant (one
# nft per namespace took a second or more on a loaded machine, and the
# first nodes healed before the last was cut), and a drop there is a frame
# lost on the wire: the sender's send(2) succeeds. Every namespace is named
# P-<runner's pid>-..., so parallel runs and a killed run's leftovers never
# collide. Source it after `set -u`; needs root, ip and nft (and jq for
# net_bytes).
#
#   net_up                  the bridge's namespace and the bridge
#   net_add NAME ADDR/LEN   a namespace for NAME with ADDR on its eth0
#   net_ns NAME             the namespace's name
#   net_rules [RULE...]     the bridge's chain, made of these rules alone
#                           (none: everything passes)
#   net_bytes               "NAME SENT RECEIVED" for each NAME, the bytes its
#                           eth0 sent and received (from the bridge's side)
#   net_proto_bytes         "NAME UDP TCP" for each NAME, the bytes of the
#                           UDP and the TCP packets it sent (IP packets, as
#                           nftables counts them where they enter the bridge)
#   net_down                kill every process left in the namespaces, and
#                           delete them
#   net_clean_leftovers     the namespaces of runs whose runner is gone;
#                           prints how many it removed

net_prefix=${net_prefix:-sbs}
net_tag=$net_prefix-$$
net_bridge_ns=$net_tag-br
net_made=() # the namespaces made, deleted by net_down

net_ns () { echo "$net_tag-$1"; }

net_up () {
    ip netns add "$net_bridge_ns" || return 1
    net_made+=("$net_bridge_ns")
    ip -n "$net_bridge_ns" link set lo up &&
        ip -n "$net_bridge_ns" link add "$net_prefix-br0" type bridge &&
        ip -n "$net_bridge_ns" link set "$net_prefix-br0" up || return 1
    ip netns exec "$net_bridge_ns" nft -f - <<NFT
table bridge $net_prefix {
    chain forward { type filter hook forward priority 0; policy accept; }
    chain count { type filter hook prerouting priority -200; policy accept; }
}
NFT
}

net_add () { # NAME ADDR/LEN
    local ns
    ns=$(net_ns "$1")
    ip netns add "$ns" || return 1
    net_made+=("$ns")
    ip -n "$net_bridge_ns" link add "$net_prefix-$1" type veth peer name eth0 netns "$ns" &&
        ip -n "$net_bridge_ns" link set "$net_prefix-$1" master "$net_prefix-br0" up &&
        ip -n "$ns" link set lo up &&
        ip -n "$ns" addr add "$2" dev eth0 &&
        ip -n "$ns" link set eth0 up || return 1
    ip netns exec "$net_bridge_ns" nft -f - <<NFT
add counter bridge $net_prefix $1_udp
add counter bridge $net_prefix $1_tcp
add rule bridge $net_prefix count iifname "$net_prefix-$1" meta l4proto udp counter name "$1_udp"
add rule bridge $net_prefix count iifname "$net_prefix-$1" meta l4proto tcp counter name "$1_tcp"
NFT
}

# One nft command: the chain is flushed and filled in one transaction.
net_rules () { # [RULE...]
    local rules rule
    rules="flush chain bridge $net_prefix forward"$'\n'
    for rule in "$@"; do rules+="add rule bridge $net_prefix forward $rule"$'\n'; done
    ip netns exec "$net_bridge_ns" nft -f - <<<"$rules"
}

# The bridge's side of a veth receives what the node sends.
net_bytes () {
    ip -n "$net_bridge_ns" -s -j link show | jq -r --arg p "$net_prefix-" '.[] | select(.ifname | startswith($p))
        | select(.ifname != $p + "br0") | "\(.ifname[($p | length):]) \(.stats64.rx.bytes) \(.stats64.tx.bytes)"'
}

net_proto_bytes () {
    ip netns exec "$net_bridge_ns" nft -j list counters table bridge "$net_prefix" |
        jq -r '[.nftables[] | .counter // empty | {node: (.name | sub("_(udp|tcp)$"; "")), proto: .name[-3:], bytes}]
            | group_by(.node)[] | .[0].node as $node | map({(.proto): .bytes}) | add + {node: $node}
            | "\(.node) \(.udp // 0) \(.tcp // 0)"'
}

net_down () {
    local ns pid
    for ns in "${net_made[@]}"; do
        for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
    done
    for ns in "${net_made[@]}"; do ip netns del "$ns" 2>/dev/null; done
    net_made=()
}

# A runner killed by SIGKILL ran no trap: its namespaces (and whatever runs
# in them) stay. Those whose runner's pid is gone are removed.
# shellcheck source=../../chaos/lib/leftovers.bash
. "$(dirname "${BASH_SOURCE[0]}")/../../chaos/lib/leftovers.bash"
net_clean_leftovers () { netns_clean_leftovers "$net_prefix"; }

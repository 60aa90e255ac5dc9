# chaos/lib/topology.bash: the network. One network namespace per node,
# each with one veth into a bridge that lives in a namespace of its own, so
# nothing of the root namespace is touched; addresses 10.77.0.K/24, where
# broadcast reaches every node (beacons: ZSYS_INTERFACE=eth0). Each node's
# namespace has an nftables table `chaos` whose input chain the nemesis
# fills (chaos/lib/nemesis.bash). Every name carries the runner's pid, so
# parallel runs and a crashed run's leftovers never collide.

topo_tag=chaos-$$
topo_bridge=$topo_tag-br
topo_made=() # namespaces made, deleted by topo_down

ns_of () { echo "$topo_tag-$1"; } # node name -> its namespace
addr_of () { echo "10.77.0.${1#n}"; } # node name -> its address

topo_up () { # NODE-NAME...
    ip netns add "$topo_bridge" || die "cannot make a network namespace ($topo_bridge)"
    topo_made+=("$topo_bridge")
    ip -n "$topo_bridge" link set lo up
    ip -n "$topo_bridge" link add br0 type bridge
    ip -n "$topo_bridge" link set br0 up
    local name
    for name in "$@"; do topo_add_node "$name"; done
}

topo_add_node () { # NODE-NAME
    local name=$1 ns
    ns=$(ns_of "$name")
    ip netns add "$ns" || die "cannot make the network namespace $ns"
    topo_made+=("$ns")
    ip -n "$topo_bridge" link add "$name" type veth peer name eth0 netns "$ns" &&
        ip -n "$topo_bridge" link set "$name" master br0 up &&
        ip -n "$ns" link set lo up &&
        ip -n "$ns" addr add "$(addr_of "$name")/24" brd + dev eth0 &&
        ip -n "$ns" link set eth0 up ||
        die "cannot wire $ns to the bridge"
    # Faults drop what a node receives (input), never what it sends: a drop
    # on output would make send(2) fail with EPERM, which no real network does.
    ip netns exec "$ns" nft -f - <<'NFT' || die "nftables does not work in $ns (is nft installed?)"
table inet chaos {
    chain input { type filter hook input priority 0; policy accept; }
}
NFT
}

# Every process still in a namespace is killed, then the namespaces go.
topo_down () {
    local ns pid
    for ns in "${topo_made[@]}"; do
        for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
    done
    for ns in "${topo_made[@]}"; do
        ip netns del "$ns" 2>/dev/null || true
    done
    topo_made=()
}

# Namespaces of earlier runs whose runner is gone (killed with SIGKILL, so
# its trap never ran): their processes and the namespaces.
# shellcheck source=leftovers.bash
. "$(dirname "${BASH_SOURCE[0]}")/leftovers.bash"
topo_clean_leftovers () { netns_clean_leftovers chaos; }

# chaos/lib/leftovers.bash: what a crashed run leaves behind. Each run names
# its network namespaces PREFIX-PID-..., PID its runner's: those of a runner
# that is gone are leftovers. The chaos kit (prefix chaos) and the
# benchmarks' namespaces (bench/lib/netns.bash: sbs, tfo) share this.

netns_clean_leftovers () { # PREFIX: prints how many it removed
    local prefix=$1 ns pid owner count=0
    for ns in $(ip netns list 2>/dev/null | awk '{ print $1 }' | grep -E "^$prefix-[0-9]+-"); do
        owner=${ns#"$prefix"-}
        owner=${owner%%-*}
        kill -0 "$owner" 2>/dev/null && continue
        for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
        ip netns del "$ns" 2>/dev/null && count=$((count + 1))
    done
    echo "$count"
}

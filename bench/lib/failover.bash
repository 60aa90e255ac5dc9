# bench/lib/failover.bash: the cluster of bench/task_failover.sh. Real
# `shoal worker` processes, each in a network namespace of its own, wired by
# a veth pair to one Linux bridge that lives in a namespace of its own too,
# so that nothing of the root namespace is touched (bench/lib/netns.bash
# makes them). Every name starts with tfo- and carries the script's pid:
# tfo-PID-br (the bridge's namespace; the bridge in it is tfo-br0),
# tfo-PID-n0 .. (a node's namespace, its end of the veth eth0, address
# 10.78.0.(i+1)/24). The workers join through n0 (beacons off) with the LAN
# profile, log to $dir/nI/worker.log and write their event log
# (docs/events.md) to $dir/nI/events.jsonl; the client reaches each through
# the control socket in its data directory, from the root namespace.
#
# Source it after `set -u`, with $shoal (the program), $nodes and $dir (the
# run's folder) set before fo_start_cluster. It gives:
#   fo_topology_up / fo_topology_down   the namespaces and the bridge
#   fo_clean_leftovers     namespaces tfo-PID-* of runs that are gone
#   fo_start_cluster       $nodes workers; their pids in fo_pid[i]
#   fo_stop_cluster        every process in the nodes' namespaces killed
#                          (the workers, their shims and children)
#   fo_ask I COMMAND...    `shoal COMMAND --json` against node nI
#   fo_alive I             the worker of nI runs (not a zombie)
#   fo_writer FILE         writes the tasks' command (see there) to FILE

# shellcheck disable=SC2154 # nodes, dir, shoal: the script's
net_prefix=tfo
# shellcheck source-path=SCRIPTDIR source=netns.bash
. "$(dirname "${BASH_SOURCE[0]}")/netns.bash"
fo_pid=()   # the workers, by node index
fo_extra=() # more arguments for every worker

fo_ns () { net_ns "n$1"; }
fo_addr () { echo "10.78.0.$(($1 + 1))"; }

fo_topology_up () {
    local i
    net_up || return 1
    for i in $(seq 0 $((nodes - 1))); do
        net_add "n$i" "$(fo_addr "$i")/24" || return 1
    done
}

# Every process still in one of our namespaces is killed (all of them are
# this script's: workers, shims, children), then the namespaces go.
fo_topology_down () {
    fo_stop_cluster
    net_down
}

# Namespaces tfo-PID-* whose script is gone (killed by SIGKILL, so that its
# trap never ran): their processes and the namespaces. Prints how many.
fo_clean_leftovers () { net_clean_leftovers; }

fo_start_node () { # index
    local i=$1 join=()
    [ "$i" -gt 0 ] && join=(--join "$(fo_addr 0):7946")
    mkdir -p "$dir/n$i/data"
    # ip netns exec and env both exec: $! is the worker itself. TFO_NODE
    # reaches the children (the worker passes its environment on, less its
    # own option variables), which name their files by it.
    ip netns exec "$(fo_ns "$i")" env LC_ALL=C TFO_NODE="n$i" \
        "$shoal" worker --name "n$i" --bind "$(fo_addr "$i"):7946" --beacon-port 0 "${join[@]}" \
        --data-dir "$dir/n$i/data" --events "$dir/n$i/events.jsonl" --expect "$nodes" \
        --profile lan --log-format text "${fo_extra[@]}" \
        >"$dir/n$i/worker.out" 2>"$dir/n$i/worker.log" </dev/null &
    fo_pid[i]=$!
}

fo_start_cluster () {
    local i
    fo_pid=()
    for i in $(seq 0 $((nodes - 1))); do fo_start_node "$i"; done
}

# SIGKILL to every process in the nodes' namespaces, a stopped one too;
# the workers reaped.
fo_stop_cluster () {
    local ns pid
    # Bash's word of each job killed goes to its own standard error, not
    # that of the wait: silenced for the while.
    exec 4>&2 2>/dev/null
    for ns in "${net_made[@]}"; do
        for pid in $(ip netns pids "$ns"); do kill -KILL "$pid"; done
    done
    for pid in "${fo_pid[@]}"; do wait "$pid"; done
    exec 2>&4 4>&-
    fo_pid=()
}

fo_ask () { # index command [args]
    local i=$1
    shift
    "$shoal" "$@" --json --timeout 3s --data-dir "$dir/n$i/data" 2>/dev/null
}

# The state letter of /proc/PID/stat: R, S, D, T (stopped), Z; empty once gone.
fo_state () { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1; }
fo_alive () {
    local state
    state=$(fo_state "${fo_pid[$1]}")
    [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

# The tasks' command: while active, a line "TIME TASK EPOCH PID" every
# 20 ms (TIME: the wall clock in microseconds; EPOCH: the grant it acts
# under, TERM.VERSION, from SHOAL_EPOCH or the last `promote` line) to the
# file $1/NODE.JOB-INDEX. A learner or standby says it is ready and waits
# for its promotion; an active reads its status descriptor between writes,
# for a newer epoch. Bash builtins only: no fork per write.
fo_writer () { # file
    cat >"$1" <<'EOF'
export LC_ALL=C
file=$1/$TFO_NODE.${SHOAL_TASK/\//-}
epoch=$SHOAL_EPOCH
if [ "$SHOAL_ROLE" != active ]; then
    echo ready >&"$SHOAL_STATUS_FD"
    promoted=0
    while read -r line <&"$SHOAL_STATUS_FD"; do
        case $line in promote\ *) epoch=${line#promote }; promoted=1; break ;; esac
    done
    # Never promoted (the descriptor closed): never acts.
    [ "$promoted" -eq 1 ] || while :; do sleep 3600; done
fi
while :; do
    echo "${EPOCHREALTIME/./} $SHOAL_TASK $epoch $$" >>"$file"
    if read -r -t 0.02 line <&"$SHOAL_STATUS_FD"; then
        case $line in promote\ *) epoch=${line#promote } ;; esac
    elif [ $? -le 128 ]; then
        sleep 0.02 # the descriptor is closed: read ends at once
    fi
done
EOF
}

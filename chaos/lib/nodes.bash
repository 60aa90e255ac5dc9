# chaos/lib/nodes.bash: the workers, one `shoal worker` in each node's
# namespace, and what the runner asks them through their control endpoint
# (an ipc socket in the data dir, reached from the root namespace through
# the file system). Needs $shoal, $run_dir, $profile, $mode, $nodes_expect and
# $workload_env (KEY=VALUE words given to each worker, inherited by its
# children).

declare -A node_pid node_id # name -> worker pid, node id (32 hex)

node_dir () { echo "$run_dir/nodes/$1"; }

node_start () { # NAME
    local name=$1 dir
    dir=$(node_dir "$name")
    mkdir -p "$dir/data"
    # ip netns exec and env both exec: $! is the worker itself.
    ip netns exec "$(ns_of "$name")" env ZSYS_INTERFACE=eth0 "${workload_env[@]}" \
        "$shoal" worker --name "$name" --bind "$(addr_of "$name"):7946" \
        --data-dir "$dir/data" --events "$dir/events.jsonl" --expect "$nodes_expect" \
        --profile "$profile" --partition-mode "$mode" --log-format text \
        >>"$dir/worker.out" 2>>"$dir/worker.log" </dev/null &
    node_pid[$name]=$!
}

node_alive () { [ -n "${node_pid[$1]:-}" ] && kill -0 "${node_pid[$1]}" 2>/dev/null; }
live_nodes () { # the names of the workers running now, in order
    local name
    for name in "${all_nodes[@]}"; do node_alive "$name" && echo "$name"; done
}

# The client against one node; its output on standard output.
ask () { # NAME TIMEOUT COMMAND ARGS...
    local name=$1 timeout=$2; shift 2
    "$shoal" "$@" --json --timeout "$timeout" --data-dir "$(node_dir "$name")/data" 2>/dev/null
}

# The leader NAME believes in, by name ("" when none or no answer).
leader_seen_by () { # NAME
    ask "$1" 3s members | jq -r '.leader as $l | [.members[] | select(.id == $l) | .name] | first // ""' 2>/dev/null
}
# The leader the most live nodes name (ties: the first named); "" when none.
# A frozen node (SIGSTOP) is not asked: it would not answer.
leader_now () {
    local name
    for name in $(live_nodes); do [ -z "${node_frozen[$name]:-}" ] && leader_seen_by "$name"; done | grep . | sort | uniq -c | sort -rn |
        awk 'NR == 1 { print $2 }'
}
term_seen_by () { ask "$1" 3s members | jq -r '.term // 0' 2>/dev/null; }

# Every live node sees COUNT members alive and names one same leader.
cluster_formed () { # COUNT
    local name leaders=()
    for name in $(live_nodes); do
        [ "$(ask "$name" 3s members | jq '[.members[] | select(.state == "alive")] | length' 2>/dev/null)" = "$1" ] ||
            return 1
        leaders+=("$(leader_seen_by "$name")")
    done
    [ -n "${leaders[0]:-}" ] && [ "$(printf '%s\n' "${leaders[@]}" | sort -u | wc -l)" -eq 1 ]
}

# The tasks the leader holds as active and running.
tasks_running () {
    local leader
    leader=$(leader_now)
    [ -n "$leader" ] || { echo 0; return; }
    ask "$leader" 5s status | jq '[.tasks[] | select(.role == "active" and .state == "running")] | length' 2>/dev/null ||
        echo 0
}
all_tasks_running () { [ "$(tasks_running)" -eq "$(jobs_total)" ]; }

# Node ids, from the members a node lists.
learn_ids () {
    local name line
    for name in $(live_nodes); do
        while read -r line; do
            node_id[${line%% *}]=${line#* }
        done < <(ask "$name" 3s members | jq -r '.members[] | "\(.name) \(.id)"' 2>/dev/null)
    done
    return 0
}

# The worker and every process under it (its shims and their children).
tree_of () { # PID
    ps -e -o pid=,ppid= | awk -v root="$1" '
        { parent[$1] = $2 }
        END {
            found[root] = 1; print root
            do {
                more = 0
                for (p in parent) if (!(p in found) && (parent[p] in found)) { found[p] = 1; print p; more = 1 }
            } while (more)
        }'
}

# A client operation and its answer, in ops.jsonl: OP JOB PARALLELISM NODE
# then the client's arguments. Acknowledged means code "ok".
client_op () { # OP JOB PARALLELISM NODE ARGS...
    local op=$1 job=$2 parallelism=$3 name=$4 out status code reason sent
    shift 4
    mono_now
    sent=$mono
    out=$(ask "$name" 30s "$@")
    status=$?
    case $status in
    0) code=ok ;;
    3) code=partial ;;
    4) code=timed-out ;;
    *) code=$(jq -r '.result // empty' <<<"$out" 2>/dev/null); [ -n "$code" ] && [ "$code" != ok ] || code=failed ;;
    esac
    reason=$(jq -r '.reason // ""' <<<"$out" 2>/dev/null)
    [ $status -eq 0 ] || [ -n "$reason" ] || reason="exit status $status"
    mono_now
    json_line "$run_dir/ops.jsonl" --argjson mono "$mono" --argjson sent "$sent" --arg op "$op" --arg job "$job" \
        --argjson parallelism "$parallelism" --arg code "$code" --arg node "$name" --arg reason "$reason" \
        '{mono: $mono, sent: $sent, op: $op, job: $job, parallelism: $parallelism, code: $code, node: $node,
          reason: $reason}'
    say "$op $job $parallelism through $name: $code${reason:+ ($reason)}"
    [ "$code" = ok ]
}

# The final view of every live node: what they answer after the settle time.
collect_final () {
    local name
    mkdir -p "$run_dir/final"
    for name in $(live_nodes); do
        ask "$name" 10s members >"$run_dir/final/$name.members.json" || true
        ask "$name" 10s status >"$run_dir/final/$name.status.json" || true
        ask "$name" 10s jobs >"$run_dir/final/$name.jobs.json" || true
    done
}

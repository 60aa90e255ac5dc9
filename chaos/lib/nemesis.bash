# chaos/lib/nemesis.bash: the faults. A network fault is a set of nftables
# rules in the input chain of some nodes' namespaces (a node stops hearing
# another; loss drops with `numgen random`), rebuilt whole from the faults
# active at that moment, so faults may overlap and each heals alone. A
# process fault is a signal to the worker, or to its whole tree (the worker,
# its shims and their commands). Every action is one line of faults.jsonl,
# stamped with CLOCK_MONOTONIC ms when it has taken effect.

declare -A fault_rules # fault id -> "NODE RULE" lines, while it is active
declare -A fault_undo  # fault id -> what its end does: words for fault_undo_run
declare -A fault_kind fault_nodes fault_detail
declare -A node_frozen # name -> pids it holds stopped (SIGSTOP)

# A reproducible choice from the run's seed (an LCG of its own: bash's
# $RANDOM differs between bash versions).
rng_state=1
rng_seed () { rng_state=$(($1 % 2147483647)); [ $rng_state -gt 0 ] || rng_state=1; }
rng_next () { # MAX: sets $rng in 0 .. MAX-1
    rng_state=$(((rng_state * 48271) % 2147483647))
    rng=$((rng_state % $1))
}
rng_pick () { # WORD...: sets $picked
    rng_next $#
    local all=("$@")
    picked=${all[$rng]}
}
rng_shuffle () { # WORD...: sets the array shuffled
    shuffled=("$@")
    local i t
    for ((i = ${#shuffled[@]} - 1; i > 0; i--)); do
        rng_next $((i + 1))
        t=${shuffled[i]} shuffled[i]=${shuffled[rng]} shuffled[rng]=$t
    done
}

# Rebuilds each named node's input chain from every active fault's rules.
nft_apply () { # NODE...
    local name id line rules
    for name in "$@"; do
        rules="flush chain inet chaos input"$'\n'
        for id in "${!fault_rules[@]}"; do
            while read -r line; do
                [ "${line%% *}" = "$name" ] && rules+="add rule inet chaos input ${line#* }"$'\n'
            done <<<"${fault_rules[$id]}"
        done
        ip netns exec "$(ns_of "$name")" nft -f - <<<"$rules" ||
            say "nemesis: nft failed in $(ns_of "$name")"
    done
}
# NODE stops hearing FROM (one direction).
rule_deaf () { echo "$1 ip saddr $(addr_of "$2") drop"; } # NODE FROM
# Two groups (space-separated names) stop hearing each other.
rules_cut () { # "GROUP-A" "GROUP-B"
    local a b
    for a in $1; do for b in $2; do rule_deaf "$a" "$b"; rule_deaf "$b" "$a"; done; done
}

# The nodes a fault may pick from: running and not frozen.
usable_nodes () {
    local name
    for name in $(live_nodes); do [ -z "${node_frozen[$name]:-}" ] && echo "$name"; done
}
followers_of () { usable_nodes | grep -vx "$1"; } # LEADER

# Resolves target=leader|follower|nK to a node name in $target_node.
resolve_target () { # TARGET LEADER
    case $1 in
    leader) target_node=$2 ;;
    follower | "")
        local f
        mapfile -t f < <(followers_of "$2")
        [ ${#f[@]} -gt 0 ] || { target_node=""; return 1; }
        rng_pick "${f[@]}"
        target_node=$picked ;;
    *) target_node=$1 ;;
    esac
    [ -n "$target_node" ]
}

fault_log () { # OP ID
    mono_now
    json_line "$run_dir/faults.jsonl" --argjson mono "$mono" --arg op "$1" --arg fault "${fault_kind[$2]}" \
        --arg nodes "${fault_nodes[$2]}" --argjson detail "${fault_detail[$2]:-{\}}" --argjson id "$2" \
        '{mono: $mono, op: $op, fault: $fault, nodes: ($nodes | split(" ") | map(select(. != ""))),
          detail: ($detail + {id: $id})}'
}

# Starts fault ID of KIND, held HOLD seconds, with its key=value arguments.
fault_start () { # ID KIND HOLD ARGS...
    local id=$1 kind=$2 hold_s=$3; shift 3
    local -A arg=()
    local kv
    for kv in "$@"; do arg[${kv%%=*}]=${kv#*=}; done
    local leader term l tries=0
    # During an election no node may name a leader: wait a little for one,
    # then take the first usable node (the fault's detail says "leader" all
    # the same: read its term, 0, as "none known").
    leader=$(leader_now)
    while [ -z "$leader" ] && [ $tries -lt 10 ]; do
        sleep 1
        tries=$((tries + 1))
        leader=$(leader_now)
    done
    term=$([ -n "$leader" ] && term_seen_by "$leader" || echo 0)
    [ -n "$leader" ] || { mapfile -t l < <(usable_nodes); leader=${l[0]:-}; }
    fault_kind[$id]=$kind
    fault_undo[$id]=""
    local d=(--arg leader "$leader" --argjson term "${term:-0}")
    case $kind in
    halves)
        local others minority=() majority=() m
        mapfile -t others < <(followers_of "$leader")
        rng_shuffle "${others[@]}"
        m=$(((${#others[@]} + 1) / 2)) # the minority of all, leader counted
        if [ "${arg[leader]:-majority}" = minority ]; then
            minority=("$leader" "${shuffled[@]:0:m-1}") majority=("${shuffled[@]:m-1}")
        else
            minority=("${shuffled[@]:0:m}") majority=("$leader" "${shuffled[@]:m}")
        fi
        fault_rules[$id]=$(rules_cut "${minority[*]}" "${majority[*]}")
        fault_nodes[$id]="${minority[*]}"
        fault_detail[$id]=$(jq -cn "${d[@]}" --arg a "${minority[*]}" --arg b "${majority[*]}" \
            '{leader: $leader, term: $term, minority: ($a / " "), majority: ($b / " ")}')
        nft_apply "${minority[@]}" "${majority[@]}" ;;
    isolate)
        resolve_target "${arg[target]:-follower}" "$leader" || { say "nemesis: no node to isolate"; return 1; }
        local rest
        rest=$(usable_nodes | grep -vx "$target_node" | tr '\n' ' ')
        fault_rules[$id]=$(rules_cut "$target_node" "$rest")
        fault_nodes[$id]=$target_node
        fault_detail[$id]=$(jq -cn "${d[@]}" '{leader: $leader, term: $term}')
        nft_apply "$target_node" $rest ;;
    bridge)
        # Side A holds the leader; the bridge node hears both sides; side B
        # reaches the leader only through nothing (it hears only the bridge).
        local others a b x na
        mapfile -t others < <(followers_of "$leader")
        [ ${#others[@]} -ge 2 ] || { say "nemesis: a bridge needs 3 nodes"; return 1; }
        rng_shuffle "${others[@]}"
        x=${shuffled[0]}
        na=$(((${#shuffled[@]} - 1) / 2))
        a="$leader ${shuffled[*]:1:na}" b="${shuffled[*]:1+na}"
        fault_rules[$id]=$(rules_cut "$a" "$b")
        fault_nodes[$id]=$x
        fault_detail[$id]=$(jq -cn "${d[@]}" --arg a "$a" --arg b "$b" --arg x "$x" \
            '{leader: $leader, term: $term, bridge: $x, side_a: ($a / " " | map(select(. != ""))),
              side_b: ($b / " " | map(select(. != "")))}')
        nft_apply $a $b ;;
    one-way-in | one-way-out)
        # in: the node stops hearing the leader; out: the leader stops hearing it.
        resolve_target "${arg[target]:-follower}" "$leader" || { say "nemesis: no follower"; return 1; }
        if [ "$kind" = one-way-in ]; then
            fault_rules[$id]=$(rule_deaf "$target_node" "$leader")
            fault_detail[$id]=$(jq -cn "${d[@]}" --arg x "$target_node" \
                '{leader: $leader, term: $term, deaf: $x, hears_not: $leader}')
        else
            fault_rules[$id]=$(rule_deaf "$leader" "$target_node")
            fault_detail[$id]=$(jq -cn "${d[@]}" --arg x "$target_node" \
                '{leader: $leader, term: $term, deaf: $leader, hears_not: $x}')
        fi
        fault_nodes[$id]=$target_node
        nft_apply "$target_node" "$leader" ;;
    loss)
        local pct=${arg[pct]:-20} name all
        [[ $pct =~ ^[0-9]+$ ]] && [ "$pct" -le 100 ] || { say "nemesis: loss pct=$pct is not 0..100"; return 1; }
        all=$(live_nodes | tr '\n' ' ')
        fault_rules[$id]=$(for name in $all; do
            echo "$name ip saddr 10.77.0.0/24 numgen random mod 100 < $pct drop"
        done)
        fault_nodes[$id]=$all
        fault_detail[$id]=$(jq -cn "${d[@]}" --argjson pct "$pct" '{leader: $leader, term: $term, pct: $pct}')
        nft_apply $all ;;
    kill | stop)
        local mode=${arg[mode]:-tree} pids
        [ "$mode" = tree ] || [ "$mode" = worker ] || { say "nemesis: mode=$mode is not tree or worker"; return 1; }
        resolve_target "${arg[target]:-follower}" "$leader" || { say "nemesis: no node to $kind"; return 1; }
        if [ "$mode" = tree ]; then pids=$(tree_of "${node_pid[$target_node]}" | tr '\n' ' ')
        else pids=${node_pid[$target_node]}; fi
        if [ "$kind" = kill ]; then
            # disown: bash would print "Killed" when it reaps the worker.
            disown "${node_pid[$target_node]}" 2>/dev/null
            kill -KILL $pids 2>/dev/null
            fault_undo[$id]="restart $target_node"
        else
            kill -STOP $pids 2>/dev/null
            node_frozen[$target_node]=$pids
            fault_undo[$id]="cont $target_node"
        fi
        fault_nodes[$id]=$target_node
        fault_detail[$id]=$(jq -cn "${d[@]}" --arg mode "$mode" --arg pids "$pids" \
            '{leader: $leader, term: $term, mode: $mode, pids: ($pids / " " | map(select(. != "")) | map(tonumber))}') ;;
    leave)
        resolve_target "${arg[target]:-follower}" "$leader" || { say "nemesis: no node to leave"; return 1; }
        ask "$target_node" 15s leave >/dev/null || say "nemesis: shoal leave through $target_node failed"
        fault_nodes[$id]=$target_node
        fault_undo[$id]="restart $target_node"
        fault_detail[$id]=$(jq -cn "${d[@]}" '{leader: $leader, term: $term}') ;;
    add)
        local name=""
        for kv in "${all_nodes[@]}"; do
            [ -z "${node_pid[$kv]:-}" ] && { name=$kv; break; }
        done
        [ -n "$name" ] || { say "nemesis: no namespace left for a new node"; return 1; }
        node_start "$name"
        fault_nodes[$id]=$name
        fault_detail[$id]=$(jq -cn "${d[@]}" '{leader: $leader, term: $term}') ;;
    rescale)
        local job=${arg[job]:-stateful} to=${arg[to]:-8} from through
        from=${job_parallelism[$job]:-}
        [ -n "$from" ] || { say "nemesis: no job $job to rescale"; return 1; }
        through=${leader:-$(usable_nodes | head -1)}
        client_op rescale "$job" "$to" "$through" rescale "$job" "$to" --wait 20s &&
            job_parallelism[$job]=$to
        fault_nodes[$id]=$through
        # Held 0 s, a rescale stays; held longer, it is undone at its end.
        [ "$hold_s" -gt 0 ] && fault_undo[$id]="rescale $job $from"
        fault_detail[$id]=$(jq -cn "${d[@]}" --arg job "$job" --argjson from "$from" --argjson to "$to" \
            '{leader: $leader, term: $term, job: $job, from: $from, to: $to}') ;;
    *)
        say "nemesis: no fault named $kind"; return 1 ;;
    esac
    fault_log start "$id"
    say "fault $id: $kind ${fault_nodes[$id]} $(jq -c 'del(.pids)' <<<"${fault_detail[$id]}")"
}

# Ends fault ID: heals the network, restarts, resumes, or scales back.
fault_end () { # ID
    local id=$1 undo nodes
    [ -n "${fault_kind[$id]:-}" ] || return 0
    if [ -n "${fault_rules[$id]:-}" ]; then
        nodes=$(awk '{ print $1 }' <<<"${fault_rules[$id]}" | sort -u)
        unset "fault_rules[$id]"
        nft_apply $nodes
    fi
    read -ra undo <<<"${fault_undo[$id]}"
    case ${undo[0]:-} in
    restart)
        if node_alive "${undo[1]}"; then
            say "nemesis: ${undo[1]} still runs at the end of fault $id; not restarted"
        else
            node_start "${undo[1]}"
        fi ;;
    cont)
        kill -CONT ${node_frozen[${undo[1]}]} 2>/dev/null
        unset "node_frozen[${undo[1]}]" ;;
    rescale)
        # After the fault, logged at once: the scale back is an operation of its own.
        fault_log end "$id"
        local through
        through=$(leader_now)
        through=${through:-$(usable_nodes | head -1)}
        client_op rescale "${undo[1]}" "${undo[2]}" "$through" rescale "${undo[1]}" "${undo[2]}" --wait 20s &&
            job_parallelism[${undo[1]}]=${undo[2]}
        unset "fault_kind[$id]"
        return 0 ;;
    esac
    fault_log end "$id"
    say "fault $id: ${fault_kind[$id]} ends"
    unset "fault_kind[$id]"
}

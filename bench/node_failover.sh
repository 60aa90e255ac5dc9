#!/usr/bin/env bash
# How long a cluster goes without a leader when its leader crashes: NODES
# shoal-counter services (examples/counter) on 127.0.0.1, each on a port of
# its own (port 0: the kernel picks), every one joining through the first,
# with the LAN profile (the default timings: election lease 2 s, heartbeat
# 0.5 s) and beacons off. Once every node sees the others alive and follows one leader,
# and after a random pause of 1 to 2 s (the crash falls anywhere in the
# leader's heartbeat), the leader's process is killed with SIGKILL. Two
# times from the kill:
#
#   leader      the new leader prints that it leads ("leader <its id>")
#   all_follow  every surviving node, the new leader included, has printed
#               "leader <new id>" for the leader they all end up following
#
# Each run is a fresh cluster (new data directories, ids and ports), so no
# run inherits a node that is still catching up from the one before.
# Prints one JSON object: both times of each run, their median and maximum,
# the new leader's term and the node killed in each run (n0 is the seed,
# started first), beside the goal of issue 7 (5,000 ms). Never asserted on a time: exit
# status 1 only when a cluster does not settle, a node dies, or no new
# leader is followed by all within 30 s (that run's times are null).
#
#   bench/node_failover.sh [--quick] [--keep] [NODES [RUNS [BUILD]]]
#
# Defaults: 5 nodes, 5 runs, build/plain (a RelWithDebInfo build). --quick:
# 3 nodes, 1 run, and the JSON checked for its keys (ctest runs this).
# --keep: the nodes' logs (run<r>/n<i>.log, each line after its time in
# microseconds) are kept, and their directory named on stderr.
#
# Each node's output goes through a timestamper (a bash loop: no fork per
# line) with the counter's stdout line-buffered, so a line's time is when it
# was printed, within a millisecond (within 100 ms under AddressSanitizer).
# The nodes are started, watched and stopped by bench/lib/nodes.bash.
set -u
export LC_ALL=C # EPOCHREALTIME with a '.'

bench=node_failover
usage_args="[--quick] [--keep] [NODES [RUNS [BUILD]]]"
# shellcheck source-path=SCRIPTDIR source=lib/nodes.bash
. "$(dirname "$0")/lib/nodes.bash"

parse_options "$@"
set -- "${args[@]}"
if [ "$quick" -eq 1 ]; then
    nodes=${1:-3} runs=${2:-1}
else
    nodes=${1:-5} runs=${2:-5}
fi
build=${3:-build/plain}
settle_limit=120 # seconds a fresh cluster may take to settle
failover_limit=30 # seconds a failover may take before the run counts as failed
[[ $nodes =~ ^[0-9]+$ && $nodes -ge 2 && $runs =~ ^[0-9]+$ && $runs -ge 1 ]] || usage
setup_nodes "$build" # each run's nodes' files in $work/run<r>, set as $dir

# After the kill at KILLED_US of node KILLED (whose id was OLD): "DONE NEW
# ALL_US LEADER_US TERM", where DONE is 1 once every survivor's last leader
# line names the same new leader NEW and NEW has said it leads; ALL_US is
# the latest of the survivors' first lines naming NEW after the kill, and
# LEADER_US the first such line of NEW itself.
failover () { # killed killed_us old
    local files=() i
    for i in $(seq 0 $((nodes - 1))); do [ "$i" -ne "$1" ] && files+=("$dir/n$i.log"); done
    awk -v since="$2" -v old="$3" -v n="${#files[@]}" '
        BEGIN { for (a = 1; a < ARGC; a++) index_of[ARGV[a]] = a }
        $2 == "node" { id[index_of[FILENAME]] = $3 }
        $1 >= since && $2 == "leader" {
            f = index_of[FILENAME]; who = $3; sub (/,$/, "", who)
            last[f] = who; term[f] = $5
            if (who != old && who != "(none)" && !((f, who) in first)) first[f, who] = $1
        }
        END {
            new = last[1]; done = new != "" && new != old && new != "(none)"
            for (f = 1; f <= n; f++) if (last[f] != new) done = 0
            all = 0; own = 0
            if (done) {
                for (f = 1; f <= n; f++) {
                    if (first[f, new] > all) all = first[f, new]
                    if (id[f] == new) own = first[f, new]
                }
                if (!own) done = 0 # the leader has not said it leads
            }
            print done, (new == "" ? "-" : new), all, own, (term[1] == "" ? 0 : term[1])
        }' "${files[@]}"
}

all_ms=()
leader_ms=()
terms=()
killed_names=()
failed=0
for run in $(seq 1 "$runs"); do
    dir=$work/run$run
    mkdir -p "$dir"
    run_prefix="run $run: "
    # shellcheck disable=SC2119 # no arguments for n0
    start_cluster
    wait_settled
    killed=$(node_of "$leader")
    [ -n "$killed" ] || { say "run $run: the leader $leader is none of the nodes"; exit 1; }
    killed_names+=("\"n$killed\"")
    sleep "1.$(printf '%03d' $((RANDOM % 1000)))"
    check_alive
    killed_us=$(now_us)
    kill -KILL "${pids[killed]}"
    wait "${pids[killed]}" 2>/dev/null # without bash's word of it

    result=""
    while :; do
        check_alive_but "$killed"
        read -r finished new all own term < <(failover "$killed" "$killed_us" "$leader")
        if [ "$finished" -eq 1 ]; then
            result="$(((all - killed_us + 500) / 1000)) $(((own - killed_us + 500) / 1000))"
            break
        fi
        if [ $(($(now_us) - killed_us)) -gt $((failover_limit * 1000000)) ]; then
            say "run $run: no new leader followed by all ${failover_limit} s after the kill (last: $new)"
            break
        fi
        sleep 0.05
    done
    if [ -n "$result" ]; then
        read -r a l <<<"$result"
        all_ms+=("$a")
        leader_ms+=("$l")
        terms+=("$term")
        say "run $run: killed n$killed (the leader); n$(node_of "$new") leads in term $term" \
            "after $l ms, all follow after $a ms"
    else
        all_ms+=(null)
        leader_ms+=(null)
        terms+=(null)
        failed=$((failed + 1))
    fi
    stop_nodes
done

# {"each": [...], "p50": ..., "max": ...} of the runs that did not fail.
stats () {
    printf '%s\n' "$@" | awk '
        { each = each (NR > 1 ? ", " : "") $1 }
        $1 != "null" { value[++n] = $1 }
        END {
            for (i = 2; i <= n; i++)
                for (j = i; j > 1 && value[j - 1] > value[j]; j--) {
                    t = value[j]; value[j] = value[j - 1]; value[j - 1] = t
                }
            if (n == 0) p50 = max = "null"
            else {
                p50 = n % 2 ? value[(n + 1) / 2] : (value[n / 2] + value[n / 2 + 1]) / 2
                max = value[n]
            }
            printf "{\"each\": [%s], \"p50\": %s, \"max\": %s}", each, p50, max
        }'
}
json=$(printf '{"benchmark": "node_failover", "quick": %s, "nodes": %d, "runs": %d, ' \
    "$([ "$quick" -eq 1 ] && echo true || echo false)" "$nodes" "$runs"
    printf '"profile": "lan", "cluster": "fresh each run", "failed": %d, ' "$failed"
    printf '"failover_ms": {"leader": %s, "all_follow": %s}, ' "$(stats "${leader_ms[@]}")" \
        "$(stats "${all_ms[@]}")"
    list="${terms[*]}"
    printf '"terms": [%s], ' "${list// /, }"
    list="${killed_names[*]}"
    printf '"killed": [%s], "goal_ms": 5000}' "${list// /, }")
echo "$json"
if [ "$quick" -eq 1 ]; then
    check_numbers "$json" nodes runs failed goal_ms
    for key in leader all_follow; do
        [[ $json =~ \"$key\":\ \{\"each\":\ \[[^]]*\],\ \"p50\":\ $number,\ \"max\":\ $number\} ]] ||
            { say "no p50 and max for $key in the JSON"; exit 1; }
    done
fi
[ "$failed" -eq 0 ]

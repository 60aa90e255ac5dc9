#!/usr/bin/env bash
# What an idle node costs: NODES shoal-counter services (examples/counter) on
# 127.0.0.1, each on a port of its own (port 0: the kernel picks), every one
# joining through the first, with the LAN profile (the default timings) and
# beacons off. Once every node sees the others alive and follows one leader
# (members_s), a job's tasks are all active, and no node printed anything for
# a quiet spell of 10 s (settle_s: joins, elections and warm-ups are over),
# they idle for SECONDS. Prints one JSON object: the CPU each shoal-counter
# process used in that window, as % of one core (utime + stime of all its
# threads, from /proc/PID/stat, over the window's wall time: mean, max, and
# the leader's; counted in ticks of 10 ms, 0.017 % of a core over 60 s),
# and its memory at the end (VmRSS, VmHWM from /proc/PID/status, in MB of
# 1,024 kB; VmRSS also split into RssAnon, the process's own, and RssFile,
# mostly pages of the shared libraries, which processes share), beside the
# goals of issue 7 and Serf's figures. The process is the whole service:
# the node and the example's own loop, which wakes every 100 ms.
# lines_in_window counts what the nodes printed in the window (0 when
# nothing changed); steady says whether all still saw each other alive and
# followed one leader at its end.
# Never asserted on a number: exit status 1 only when the cluster does not
# settle or a node dies.
#
#   bench/node_idle.sh [--quick] [--job N] [--keep] [NODES [SECONDS [BUILD]]]
#
# Defaults: 10 nodes, 60 s, build/plain (a RelWithDebInfo build). --job N:
# the first node submits a stateful job of N tasks before the window, to see
# the cost of tasks and their keep-alives (tasks_active: how many run as
# active at the end, over all nodes). --quick: 3 nodes for 5 s, a quiet
# spell of 2 s, and the JSON checked for its keys (ctest runs this). --keep:
# the nodes' logs (n<i>.log, each line after its time in microseconds) are
# kept, and their directory named on stderr.
#
# Each node's output goes through a timestamper (a bash loop: no fork per
# line) into its log; only the shoal-counter processes are measured. The
# nodes are started, watched and stopped by bench/lib/nodes.bash.
set -u
export LC_ALL=C # EPOCHREALTIME with a '.'

bench=node_idle
usage_args="[--quick] [--job N] [--keep] [NODES [SECONDS [BUILD]]]"
# shellcheck source-path=SCRIPTDIR source=lib/nodes.bash
. "$(dirname "$0")/lib/nodes.bash"

job=0
bench_option () { # the arguments left, at an option of this script's own
    case $1 in
    --job) [ $# -ge 2 ] || usage; job=$2; option_words=2 ;;
    *) return 1 ;;
    esac
}
parse_options "$@"
set -- "${args[@]}"
if [ "$quick" -eq 1 ]; then
    nodes=${1:-3} seconds=${2:-5} quiet=2 settle_limit=60
else
    nodes=${1:-10} seconds=${2:-60} quiet=10 settle_limit=300
fi
build=${3:-build/plain}
[[ $nodes =~ ^[0-9]+$ && $nodes -ge 1 && $seconds =~ ^[0-9]+$ && $seconds -ge 1 && $job =~ ^[0-9]+$ ]] || usage
setup_nodes "$build" # the nodes' files in $work

# Tasks running as active, over all nodes, from what each printed.
tasks_active () {
    awk '
        FNR == 1 { for (task in on) count += on[task]; delete on }
        $2 == "start" && $5 == "active," || $2 == "promote" { on[$3] = 1 }
        $2 == "stop" || $2 == "demote" { on[$3] = 0 }
        END { for (task in on) count += on[task]; print count + 0 }' "$work"/n*.log
}

log_bytes () { cat "$work"/n*.log | wc -c; }

submit=()
[ "$job" -gt 0 ] && submit=(--submit "idle:$job")
start_cluster "${submit[@]}"
wait_settled
members_us=$(($(now_us) - start))
if [ "$job" -gt 0 ]; then
    while ! grep -q " submit idle:$job: " "$work/n0.log"; do
        check_alive
        [ "$(now_us)" -gt "$deadline" ] && { say "n0 did not submit its job"; exit 1; }
        sleep 0.2
    done
    grep -q " submit idle:$job: ok$" "$work/n0.log" || { say "$(grep ' submit ' "$work/n0.log")"; exit 1; }
    # Every task active somewhere: the learners warmed up and were promoted.
    while [ "$(tasks_active)" -lt "$job" ]; do
        check_alive
        if [ "$(now_us)" -gt "$deadline" ]; then
            say "$(tasks_active) of $job tasks active after ${settle_limit} s"
            exit 1
        fi
        sleep 0.5
    done
fi
# Quiet: no node printed anything for $quiet seconds.
bytes=$(log_bytes)
since=$(now_us)
while [ $(($(now_us) - since)) -lt $((quiet * 1000000)) ]; do
    check_alive
    [ "$(now_us)" -gt "$deadline" ] && { say "not quiet after ${settle_limit} s"; exit 1; }
    sleep 0.5
    now_bytes=$(log_bytes)
    [ "$now_bytes" -ne "$bytes" ] && { bytes=$now_bytes; since=$(now_us); }
done
settle_us=$(($(now_us) - start))

# utime + stime (fields 14 and 15) of a process, in clock ticks. The kernel
# scales them to the scheduler's exact run time, so they are not sampled.
cpu_ticks () {
    local stat
    read -r stat <"/proc/$1/stat" || return 1
    stat=${stat##*) }
    # shellcheck disable=SC2086 # the fields are words
    set -- $stat
    echo $((${12} + ${13}))
}
memory_kb () { # pid key
    awk -v key="$2:" '$1 == key { print $2 }' "/proc/$1/status"
}

before=()
window_lines=$(cat "$work"/n*.log | wc -l)
t0=$(now_us)
for i in "${!pids[@]}"; do before[i]=$(cpu_ticks "${pids[i]}") || check_alive; done
pause "$seconds"
after=()
for i in "${!pids[@]}"; do after[i]=$(cpu_ticks "${pids[i]}") || check_alive; done
t1=$(now_us)
check_alive
window_lines=$(($(cat "$work"/n*.log | wc -l) - window_lines))
samples=""
leader_node=$(node_of "$leader")
for i in "${!pids[@]}"; do
    is_leader=0
    [ "$i" = "$leader_node" ] && is_leader=1
    samples+="$((after[i] - before[i])) $(memory_kb "${pids[i]}" VmRSS) $(memory_kb "${pids[i]}" VmHWM)"
    samples+=" $(memory_kb "${pids[i]}" RssAnon) $(memory_kb "${pids[i]}" RssFile) $is_leader"$'\n'
done
active=$(tasks_active)
# Still one leader that all follow, and all alive?
read -r count same _ < <(settled)
steady=false
[ "$count" -eq "$nodes" ] && [ "$same" -eq 1 ] && steady=true

json=$(printf '%s' "$samples" | awk -v hz="$(getconf CLK_TCK)" -v wall="$((t1 - t0))" \
    -v nodes="$nodes" -v seconds="$seconds" -v job="$job" -v quick="$quick" \
    -v members="$members_us" -v settle="$settle_us" -v lines="$window_lines" -v steady="$steady" \
    -v active="$active" '
    NF == 6 {
        cpu = $1 / hz / (wall / 1e6) * 100
        rss = $2 / 1024; hwm = $3 / 1024; anon = $4 / 1024; file = $5 / 1024
        cpu_sum += cpu; rss_sum += rss; anon_sum += anon; file_sum += file; count++
        if (cpu > cpu_max) cpu_max = cpu
        if (rss > rss_max) rss_max = rss
        if (hwm > hwm_max) hwm_max = hwm
        if (anon > anon_max) anon_max = anon
        if ($6) leader = cpu
    }
    END {
        printf "{\"benchmark\": \"node_idle\", \"quick\": %s, \"nodes\": %d, \"seconds\": %d, ", \
            quick ? "true" : "false", nodes, seconds
        printf "\"job_tasks\": %d, \"tasks_active\": %d, \"profile\": \"lan\", ", job, active
        printf "\"members_s\": %.1f, \"settle_s\": %.1f, ", members / 1e6, settle / 1e6
        printf "\"window_s\": %.3f, \"cpu_percent\": {\"mean\": %.3f, \"max\": %.3f, \"leader\": %.3f}, ", \
            wall / 1e6, cpu_sum / count, cpu_max, leader
        printf "\"rss_mb\": {\"mean\": %.2f, \"max\": %.2f}, \"hwm_mb\": {\"max\": %.2f}, ", \
            rss_sum / count, rss_max, hwm_max
        printf "\"rss_anon_mb\": {\"mean\": %.2f, \"max\": %.2f}, \"rss_file_mb\": {\"mean\": %.2f}, ", \
            anon_sum / count, anon_max, file_sum / count
        printf "\"lines_in_window\": %d, \"steady\": %s, ", lines, steady
        printf "\"goal\": {\"cpu_percent\": 0.5, \"rss_mb\": 8}, "
        printf "\"serf\": {\"cpu_percent\": [0.4, 0.6], \"rss_mb\": [13, 15]}}\n"
    }')
echo "$json"
if [ "$quick" -eq 1 ]; then
    check_numbers "$json" nodes seconds settle_s window_s
    for key in cpu_percent rss_mb; do
        [[ $json =~ \"$key\":\ \{\"mean\":\ $number,\ \"max\":\ $number ]] ||
            { say "no mean and max for $key in the JSON"; exit 1; }
    done
    [[ $json =~ \"hwm_mb\":\ \{\"max\":\ $number\} ]] || { say "no max for hwm_mb in the JSON"; exit 1; }
fi
exit 0

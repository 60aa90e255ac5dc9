#!/usr/bin/env bash
# What an idle `shoal worker` holds in memory, and whose pages they are.
# NODES workers on 127.0.0.1, each on a port of its own (port 0: the kernel
# picks), every one joining through the first, with the LAN profile and
# beacons off. Once every worker sees the others alive and follows one
# leader, any job's tasks are all running, and no worker logged anything
# for a quiet spell of 10 s, they idle for SECONDS; then each worker's
# /proc/PID/status, smaps_rollup and smaps are read. Prints one JSON object
# (sizes in kB of 1,024 bytes):
#   vm_rss, rss_anon, rss_file, pss, pss_anon, pss_file, vm_hwm: mean and
#       max over the workers. VmRSS = RssAnon (the process's own pages:
#       heap, stacks, the libraries' relocated data) + RssFile (pages of
#       files it maps and touched: its program and shared libraries, read
#       in windows of up to 64 kB, and shared with every process that maps
#       them). Pss counts a shared page as 1/n for n processes mapping it.
#   anon: RssAnon split by where it lies, mean over the workers: heap (the
#       main arena), stack (the main thread's), other (thread stacks and
#       the arenas of other threads), in_files (the libraries' and the
#       program's written data and relocations)
#   mappings: the 10 files with the most resident pages (the program and
#       its shared libraries), each with rss, pss and anon, mean over the
#       workers; libraries: how many shared libraries a worker maps
#   threads: of a worker (mean)
# beside the goal of issue 24 (half of Serf's VmRSS) and Serf's figures (an
# agent, a static Go program: nearly all of its VmRSS is its own heap and
# its own program's pages). Never asserted on a number: exit status 1 only
# when the cluster does not settle or a worker dies.
#
#   bench/rss.sh [--quick] [--job N] [--keep] [NODES [SECONDS [BUILD]]]
#
# Defaults: 5 workers, 30 s, build/plain. --job N: a stateless job of N
# tasks is submitted before the quiet spell, each task a child `sleep`
# (its own process, not counted: only the workers are measured);
# tasks_running counts the tasks started. --quick: 3 workers for 0 s after a
# quiet spell of 2 s, and the JSON checked for its keys (ctest runs this).
# --keep: the workers' folders and logs are kept, and named on stderr.
set -u
export LC_ALL=C

usage () { echo "usage: bench/rss.sh [--quick] [--job N] [--keep] [NODES [SECONDS [BUILD]]]" >&2; exit 2; }
say () { echo "rss: $*" >&2; }

quick=0 keep=0 job=0
while [ $# -gt 0 ]; do
    case $1 in
    --quick) quick=1; shift ;;
    --keep) keep=1; shift ;;
    --job) [ $# -ge 2 ] || usage; job=$2; shift 2 ;;
    --) shift; break ;;
    -*) usage ;;
    *) break ;;
    esac
done
if [ "$quick" -eq 1 ]; then
    nodes=${1:-3} seconds=${2:-0} quiet=2 settle_limit=60
else
    nodes=${1:-5} seconds=${2:-30} quiet=10 settle_limit=120
fi
build=${3:-build/plain}
[[ $nodes =~ ^[0-9]+$ && $nodes -ge 1 && $nodes -le 50 && $seconds =~ ^[0-9]+$ && $job =~ ^[0-9]+$ ]] ||
    usage
shoal=$build/shoal
[ -x "$shoal" ] || { say "$shoal not found; build first (cmake --build $build --target shoal)"; exit 2; }
shoal=$(readlink -f "$shoal")

work=$(mktemp -d "${TMPDIR:-/tmp}/shoal-rss.XXXXXX") || exit 2
pids=()
sleeper=""
# shellcheck disable=SC2317 # run by the trap
cleanup () {
    local pid
    [ -n "$sleeper" ] && kill "$sleeper" 2>/dev/null
    # SIGKILL: a graceful leave of every worker at once waits for nothing
    # here, and their children (the job's sleeps) are killed by their shims.
    for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null; done
    wait 2>/dev/null
    if [ "$keep" -eq 1 ]; then say "kept in $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

now_us () { echo "${EPOCHREALTIME/./}"; }
start=$(now_us)
deadline=$((start + settle_limit * 1000000))
check_deadline () { # what
    if [ "$(now_us)" -gt "$deadline" ]; then say "$1 after $settle_limit s"; exit 1; fi
}
check_alive () {
    local i
    for i in "${!pids[@]}"; do
        if ! kill -0 "${pids[i]}" 2>/dev/null; then
            say "worker w$i exited:"
            tail -20 "$work/w$i.log" >&2
            exit 1
        fi
    done
}

start_worker () { # index seed
    SHOAL_DATA_DIR=$work/w$1 SHOAL_BIND=127.0.0.1:0 SHOAL_JOIN=$2 SHOAL_BEACON_PORT=0 \
        SHOAL_PROFILE=lan SHOAL_NAME=w$1 "$shoal" worker >"$work/w$1.log" 2>&1 &
    pids[$1]=$!
}

start_worker 0 ""
port=""
while [ -z "$port" ]; do
    check_alive
    check_deadline "w0 said no port"
    sleep 0.1
    port=$(sed -n -E 's/.* on port ([0-9]+),.*/\1/p' "$work/w0.log")
done
for i in $(seq 1 $((nodes - 1))); do start_worker "$i" "127.0.0.1:$port"; done

# "SETTLED SAME": how many workers see NODES - 1 others alive and name a
# leader, and whether all name the same one (from their logs).
settled () {
    local files=() i
    for i in $(seq 0 $((nodes - 1))); do files+=("$work/w$i.log"); done
    awk -v n="$nodes" '
        BEGIN { for (a = 1; a < ARGC; a++) index_of[ARGV[a]] = a }
        $3 == "member" { state[index_of[FILENAME], $5] = $6 }
        $3 == "leader" { leader[index_of[FILENAME]] = $4 }
        $3 == "no" && $4 == "leader" { leader[index_of[FILENAME]] = "" }
        END {
            for (key in state)
                if (state[key] == "alive") { split (key, part, SUBSEP); alive[part[1]]++ }
            count = 0; same = 1
            for (f = 1; f <= n; f++) {
                if (alive[f] + 0 == n - 1 && leader[f] != "") count++
                if (leader[f] != leader[1]) same = 0
            }
            print count, same
        }' "${files[@]}"
}
while :; do
    check_alive
    read -r count same < <(settled)
    [ "$count" -eq "$nodes" ] && [ "$same" -eq 1 ] && break
    check_deadline "not settled: $count of $nodes workers see all alive with a leader (same: $same)"
    sleep 0.2
done

# Tasks of the job started, over all workers (a task started twice, once).
tasks_running () {
    cat "$work"/w*.log | sed -n -E 's/.* started (idle\/[0-9]+) as .*/\1/p' | sort -u | wc -l
}
if [ "$job" -gt 0 ]; then
    # Right after the joins the voters may still change: a submit may be
    # refused for a moment, so it is tried again until the deadline.
    until "$shoal" submit idle --parallelism "$job" --command 'exec sleep 86400' \
        --data-dir "$work/w0" >"$work/submit.out" 2>&1; do
        check_alive
        check_deadline "the job was not submitted: $(cat "$work/submit.out")"
        sleep 0.5
    done
    while [ "$(tasks_running)" -lt "$job" ]; do
        check_alive
        check_deadline "$(tasks_running) of $job tasks started"
        sleep 0.5
    done
fi

# Quiet: no worker logged anything for $quiet seconds.
log_bytes () { cat "$work"/w*.log | wc -c; }
bytes=$(log_bytes)
since=$(now_us)
while [ $(($(now_us) - since)) -lt $((quiet * 1000000)) ]; do
    check_alive
    check_deadline "not quiet"
    sleep 0.5
    now_bytes=$(log_bytes)
    [ "$now_bytes" -ne "$bytes" ] && { bytes=$now_bytes; since=$(now_us); }
done
settle_us=$(($(now_us) - start))
if [ "$seconds" -gt 0 ]; then
    sleep "$seconds" &
    sleeper=$!
    wait "$sleeper"
    sleeper=""
fi
check_alive

# One line per worker: "status" and its numbers from /proc/PID/status and
# smaps_rollup, then "map NAME RSS PSS ANON" per file mapped and per kind
# of anonymous mapping ([heap], [stack], [anon]), summed over its mappings.
measure () { # pid
    local pid=$1 threads
    threads=$(find "/proc/$pid/task" -mindepth 1 -maxdepth 1 | wc -l)
    awk -v threads="$threads" '
        FILENAME ~ /status$/ && $1 ~ /^(VmRSS|RssAnon|RssFile|VmHWM):$/ { v[$1] = $2 }
        FILENAME ~ /rollup$/ && $1 ~ /^(Pss|Pss_Anon|Pss_File):$/ { v[$1] = $2 }
        FILENAME ~ /smaps$/ && /^[0-9a-f]+-[0-9a-f]+ / {
            name = NF >= 6 ? $6 : "[anon]"
            if (name !~ /^(\[|\/dev\/)/) { n = split (name, part, "/"); name = part[n] }
        }
        FILENAME ~ /smaps$/ && $1 == "Rss:" { rss[name] += $2 }
        FILENAME ~ /smaps$/ && $1 == "Pss:" { pss[name] += $2 }
        FILENAME ~ /smaps$/ && $1 == "Anonymous:" { anon[name] += $2 }
        END {
            printf "status %d %d %d %d %d %d %d %d\n", v["VmRSS:"], v["RssAnon:"], v["RssFile:"],
                v["Pss:"], v["Pss_Anon:"], v["Pss_File:"], v["VmHWM:"], threads
            for (name in rss) if (rss[name] > 0) printf "map %s %d %d %d\n", name, rss[name], pss[name], anon[name]
        }' "/proc/$pid/status" "/proc/$pid/smaps_rollup" "/proc/$pid/smaps"
}
samples=""
for i in "${!pids[@]}"; do
    samples+=$(measure "${pids[i]}") || { check_alive; exit 1; }
    samples+=$'\n'
done
check_alive
running=$(tasks_running)

json=$(printf '%s' "$samples" | awk -v nodes="$nodes" -v seconds="$seconds" -v job="$job" \
    -v quick="$quick" -v settle="$settle_us" -v running="$running" -v program="$(basename "$shoal")" '
    function stat (key, value) { sum[key] += value; if (value > max[key]) max[key] = value }
    $1 == "status" {
        workers++
        stat("vm_rss", $2); stat("rss_anon", $3); stat("rss_file", $4); stat("pss", $5)
        stat("pss_anon", $6); stat("pss_file", $7); stat("vm_hwm", $8); threads += $9
    }
    $1 == "map" {
        rss[$2] += $3; pss[$2] += $4; anon[$2] += $5
        if ($2 ~ /^\[/) {
            if ($2 == "[heap]") kind["heap"] += $5
            else if ($2 == "[stack]") kind["stack"] += $5
            else kind["other"] += $5
        } else {
            kind["in_files"] += $5
            if ($2 ~ /\.so(\.|$)/) libraries++
        }
    }
    END {
        printf "{\"benchmark\": \"rss\", \"quick\": %s, \"nodes\": %d, \"seconds\": %d, ", \
            quick ? "true" : "false", nodes, seconds
        printf "\"job_tasks\": %d, \"tasks_running\": %d, \"profile\": \"lan\", ", job, running
        printf "\"settle_s\": %.1f, \"kb\": {", settle / 1e6
        split ("vm_rss rss_anon rss_file pss pss_anon pss_file vm_hwm", keys, " ")
        for (k = 1; k <= 7; k++)
            printf "%s\"%s\": {\"mean\": %d, \"max\": %d}", (k > 1 ? ", " : ""), keys[k], \
                sum[keys[k]] / workers + 0.5, max[keys[k]]
        printf "}, \"anon_kb\": {\"heap\": %d, \"stack\": %d, \"other\": %d, \"in_files\": %d}, ", \
            kind["heap"] / workers + 0.5, kind["stack"] / workers + 0.5, \
            kind["other"] / workers + 0.5, kind["in_files"] / workers + 0.5
        printf "\"threads\": %.1f, \"libraries\": %.1f, \"mappings\": [", threads / workers, \
            libraries / workers
        for (shown = 0; shown < 10; shown++) {
            best = ""
            for (name in rss)
                if (name !~ /^\[/ && !(name in done) && (best == "" || rss[name] > rss[best])) best = name
            if (best == "") break
            done[best] = 1
            printf "%s{\"name\": \"%s\", \"rss\": %d, \"pss\": %d, \"anon\": %d}", \
                (shown ? ", " : ""), (best == program ? "(program) " best : best), \
                rss[best] / workers + 0.5, pss[best] / workers + 0.5, anon[best] / workers + 0.5
        }
        printf "], \"goal_kb\": {\"vm_rss\": 6605}, \"serf_kb\": {\"vm_rss\": [13210, 14029]}}\n"
    }')
echo "$json"
if [ "$quick" -eq 1 ]; then
    number='[0-9]+(\.[0-9]+)?'
    for key in vm_rss rss_anon rss_file pss; do
        [[ $json =~ \"$key\":\ \{\"mean\":\ $number,\ \"max\":\ $number\} ]] ||
            { say "no mean and max for $key in the JSON"; exit 1; }
    done
    for key in heap stack other in_files threads libraries; do
        [[ $json =~ \"$key\":\ $number ]] || { say "no number for $key in the JSON"; exit 1; }
    done
    [[ $json =~ \"mappings\":\ \[\{\"name\":\ \"[^\"]+\",\ \"rss\":\ $number ]] ||
        { say "no mappings in the JSON"; exit 1; }
fi
exit 0

#!/usr/bin/env bash
# What a user sees of an unplanned failover: how long the tasks of a worker
# that crashes or stops stay without an active, and whether two ever act
# at once. NODES real `shoal worker` processes (build/shoal), each in a
# network namespace of its own on one Linux bridge (bench/lib/failover.bash:
# every name starts with tfo-), joining through the first, with the LAN
# profile (the default timings) and beacons off.
# Two jobs, `stateless` and `stateful`, of TASKS tasks each, whose command
# writes a line "TIME TASK EPOCH PID" (the wall clock in microseconds, the
# grant it acts under) every 20 ms to a file of its node and task while it
# is active (as tests/freeze.sh does). Once every task runs as active once,
# with the same placement a second later, and after a random pause of 1 to
# 2 s (so that the fault falls anywhere in a heartbeat), one fault:
#
#   kill    SIGKILL to a worker that runs actives and does not lead: its
#           shims kill its children at once (docs/worker.md, section 4)
#   freeze  SIGSTOP to such a worker alone: its children run on until their
#           shims freeze them at the lease deadline; SIGCONT once its tasks
#           run elsewhere (and a second more), then 3 s to see it end them
#   leader  SIGKILL to the leader's worker (which runs actives too)
#
# For every task the faulted worker ran as active, from the files:
#   gap_ms         the new owner's first write minus the old owner's last
#   from_fault_ms  the new owner's first write minus the time of the fault
#   old_after_ms   the old owner's last write minus the time of the fault
#   overlaps       writes of the old owner (its pid) at or after the new
#                  owner's first: a double active; must be 0
# With --job-option fenced (docs/jobs.md, section 8) the writes are read as
# a fencing store would take them: an old owner's write at or after the new
# owner's first is refused when its epoch is older (counted as refused, not
# as an overlap), the gap ends at the old owner's last write before the new
# owner's first, and double_actives counts only children of one epoch.
# and from the survivors' event logs (docs/events.md; wall clock, ms), the
# first survivor to see it: suspect_ms and dead_ms (its `member` line),
# leader_ms (a `leader` line naming a new leader: the leader fault), and
# per task moving_ms (the leader's `unplaced` line, reason `moving`: it took
# the task away and waits for the old owner's lease to end; in these runs
# only stateless tasks get one, a stateful task stays placed meanwhile) and
# assign_ms (the new owner's `task` line giving it as active).
# double_actives counts, over every file of a run (all tasks, the whole
# run), two children of one task whose spans of writes intersect.
# Each run is a fresh cluster (new data directories, ids, namespaces kept).
# Prints one JSON object (per fault kind: runs, failed, tasks_moved,
# overlaps, double_actives, and n/p50/p99/max of each time over the tasks
# and runs, p99 by nearest rank; the gap also by job), beside the issue's
# figures; a short table on stderr. Never asserted on a time: exit status 1
# on an overlap or double active, or a run that does not settle or recover
# (every moved task written by a new owner within 60 s), or a survivor that
# dies; 2 for a bad argument or no program; 77 when not root (namespaces).
#
#   bench/task_failover.sh [--quick] [--keep] [--nodes N] [--runs R]
#       [--faults kill,freeze,leader] [--tasks T] [--job-option K[=V]]...
#       [--build DIR]
#
# Defaults: 5 nodes, 5 runs of each fault, 8 tasks a job, build/plain (a
# RelWithDebInfo build). --job-option K=V adds --K=V (K alone: --K) to both
# `shoal submit`s, e.g. --job-option weight=2. --quick: 3 nodes, 4 tasks a
# job, one run of kill, and the JSON checked for its keys (ctest runs this:
# 33 to 36 s on 2 cores shared at a load of 14 to 26).
# --keep: the run folders (nI/worker.log, nI/events.jsonl, rec/NODE.TASK)
# are kept and named on stderr. Needs root, ip and jq.
set -u
export LC_ALL=C # EPOCHREALTIME with a '.'

say () { echo "task_failover: $*" >&2; }
usage () {
    echo "usage: bench/task_failover.sh [--quick] [--keep] [--nodes N] [--runs R]" \
        "[--faults kill,freeze,leader] [--tasks T] [--job-option K[=V]]... [--build DIR]" >&2
    exit 2
}
need () { [ $# -ge 2 ] || usage; }

quick=0 keep=0 nodes="" runs="" faults="" tasks="" build=build/plain
job_args=()
while [ $# -gt 0 ]; do
    case $1 in
    --quick) quick=1; shift ;;
    --keep) keep=1; shift ;;
    --nodes) need "$@"; nodes=$2; shift 2 ;;
    --runs) need "$@"; runs=$2; shift 2 ;;
    --faults) need "$@"; faults=$2; shift 2 ;;
    --tasks) need "$@"; tasks=$2; shift 2 ;;
    --build) need "$@"; build=$2; shift 2 ;;
    --job-option)
        need "$@"
        [[ $2 =~ ^[a-z][a-z0-9-]*(=[^[:cntrl:]]*)?$ ]] ||
            { say "--job-option takes KEY=VALUE or KEY (KEY: a-z, 0-9, -), not '$2'"; exit 2; }
        job_args+=("--$2")
        shift 2
        ;;
    -h | --help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) usage ;;
    esac
done
fenced=0
for option in "${job_args[@]}"; do [ "$option" = --fenced ] && fenced=1; done
if [ "$quick" -eq 1 ]; then
    nodes=${nodes:-3} runs=${runs:-1} faults=${faults:-kill} tasks=${tasks:-4}
else
    nodes=${nodes:-5} runs=${runs:-5} faults=${faults:-kill,freeze,leader} tasks=${tasks:-8}
fi
if ! [[ $nodes =~ ^[0-9]+$ ]] || [ "$nodes" -lt 3 ] || [ "$nodes" -gt 50 ]; then
    say "--nodes takes 3 to 50 (a survivor must be left a majority), not '$nodes'"
    exit 2
fi
if ! [[ $runs =~ ^[0-9]+$ ]] || [ "$runs" -lt 1 ] || [ "$runs" -gt 100 ]; then
    say "--runs takes 1 to 100, not '$runs'"
    exit 2
fi
if ! [[ $tasks =~ ^[0-9]+$ ]] || [ "$tasks" -lt 1 ] || [ "$tasks" -gt 1000 ]; then
    say "--tasks takes 1 to 1000, not '$tasks'"
    exit 2
fi
IFS=, read -r -a kinds <<<"$faults"
[ "${#kinds[@]}" -ge 1 ] || usage
for kind in "${kinds[@]}"; do
    case $kind in kill | freeze | leader) ;; *) say "--faults: no fault '$kind' (kill, freeze, leader)"; exit 2 ;; esac
done

[ "$(id -u)" -eq 0 ] || { echo "skip: task_failover needs root (network namespaces)"; exit 77; }
for tool in ip jq; do
    command -v "$tool" >/dev/null || { echo "skip: task_failover needs $tool (scripts/setup installs it)"; exit 77; }
done
shoal=$build/shoal
[ -x "$shoal" ] || { say "$shoal not found; build first (cmake --build $build --target shoal)"; exit 2; }
shoal=$(readlink -f "$shoal")

# shellcheck source-path=SCRIPTDIR source=lib/failover.bash
. "$(dirname "$0")/lib/failover.bash"

settle_limit=90    # seconds a fresh cluster may take to run every task
recover_limit=60   # seconds after the fault until every moved task is written again
work=$(mktemp -d "${TMPDIR:-/tmp}/shoal-task-failover.XXXXXX") || exit 2
dir=$work
sleeper=""
# shellcheck disable=SC2317 # run by the trap
cleanup () {
    exec 2>/dev/null
    [ -n "$sleeper" ] && kill "$sleeper"
    fo_topology_down
    if [ "$keep" -eq 1 ]; then echo "task_failover: runs kept in $work" >&3; else rm -rf "$work"; fi
}
exec 3>&2
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# In the background, so that a signal ends the wait at once.
pause () { sleep "$1" & sleeper=$!; wait "$sleeper"; sleeper=""; }
now_us () { echo "${EPOCHREALTIME/./}"; }

left=$(fo_clean_leftovers)
[ "$left" -gt 0 ] && say "removed $left namespaces of earlier runs that are gone"
fo_topology_up || { say "cannot make the network namespaces and the bridge"; exit 1; }
fo_writer "$work/writer.sh"

records=$work/records # a line per moved task: KIND RUN TASK JOB NEW_NODE T_FAULT OLD_LAST NEW_FIRST OVERLAP ASSIGN MOVING
events=$work/events   # a line per run: KIND RUN VICTIM SUSPECT DEAD LEADER DOUBLE (ms from the fault, - none)
failures=$work/failed # a line per failed run: KIND RUN
: >"$records"
: >"$events"
: >"$failures"

# "NAME ID" of every member node $1 lists, and its leader's id after "leader".
members_of () { fo_ask "$1" members | jq -r '(.members[] | "\(.name) \(.id) \(.state)"), "leader \(.leader // "")"'; }

# Every node sees all alive and names one leader: its name in $leader_name.
formed () {
    local i out alive lead leads=()
    for i in $(seq 0 $((nodes - 1))); do
        out=$(members_of "$i") || return 1
        alive=$(grep -c ' alive$' <<<"$out")
        [ "$alive" -eq "$nodes" ] || return 1
        lead=$(sed -n 's/^leader //p' <<<"$out")
        [ -n "$lead" ] || return 1
        leads+=("$lead")
    done
    [ "$(printf '%s\n' "${leads[@]}" | sort -u | wc -l)" -eq 1 ] || return 1
    leader_id=${leads[0]}
    leader_name=$(awk -v id="$leader_id" '$1 != "leader" && $2 == id { print $1 }' <<<"$out")
    [ -n "$leader_name" ]
}

# "TASK NODE" of every task the leader holds active and running, sorted;
# fails unless that is every task, once each, and each one's file was
# written in the last 300 ms by that node.
placement () {
    local i out now task node last
    i=${leader_name#n}
    out=$(fo_ask "$i" status | jq -r '.tasks[] | select(.role == "active" and .state == "running") |
        "\(.task) \(.node_name)"' | sort) || return 1
    [ "$(wc -l <<<"$out")" -eq $((2 * tasks)) ] || return 1
    [ "$(cut -d' ' -f1 <<<"$out" | sort -u | wc -l)" -eq $((2 * tasks)) ] || return 1
    now=$(now_us)
    while read -r task node; do
        last=$(tail -1 "$dir/rec/$node.${task/\//-}" 2>/dev/null | cut -d' ' -f1)
        [ -n "$last" ] && [ $((now - last)) -lt 300000 ] || return 1
    done <<<"$out"
    echo "$out"
}

check_alive_but () { # victim index ("" none): fails if a worker died
    local i
    for i in $(seq 0 $((nodes - 1))); do
        [ "$i" = "$1" ] && continue
        fo_alive "$i" || { say "$prefix: worker n$i died:"; tail -5 "$dir/n$i/worker.log" >&2; return 1; }
    done
}

# The survivors' event lines about the fault, in ms of the wall clock:
# "member MS STATE" about the victim, "leader MS" for another leader, "task
# MS TASK" for a task given as active, "moving MS TASK" for a task the
# leader took away and holds until the old owner's lease ends.
event_lines () { # victim-id file...
    local id=$1
    shift
    jq -r --arg v "$id" '
        def ms: (.wall | capture("^(?<s>[^.]+)\\.(?<f>[0-9]{3})Z$")) as $c
            | ((($c.s + "Z") | fromdateiso8601) * 1000 + ($c.f | tonumber));
        if .event == "member" and .member == $v then "member \(ms) \(.state)"
        elif .event == "leader" and .leader != "" and .leader != $v then "leader \(ms)"
        elif .event == "task" and .role == "active" and (.action == "start" or .action == "promote")
        then "task \(ms) \(.task)"
        elif .event == "unplaced" and .reason == "moving" then "moving \(ms) \(.task)"
        else empty end' "$@" 2>/dev/null
}

# Two children of one task (a file and a pid) whose spans of writes
# intersect, over every file of the run; of a fenced job, two of one epoch.
double_actives () {
    cat "$dir"/rec/* 2>/dev/null | awk -v fenced="$fenced" '
        { key = $2 " " $4 (fenced ? " " $3 : "")
          if (!(key in first)) { first[key] = $1; task[key] = $2 }
          last[key] = $1 }
        END {
            count = 0
            for (a in first) for (b in first)
                if (a < b && task[a] == task[b] && first[a] <= last[b] && first[b] <= last[a]) count++
            print count
        }'
}

one_run () { # kind run
    local kind=$1 run=$2 deadline placed again victim="" v i t_fault pending task node file line
    local suspect dead new_leader double moved=() new_first
    prefix="$kind run $run"
    dir=$work/$kind-$run
    mkdir -p "$dir/rec"
    fo_start_cluster
    deadline=$(($(now_us) + settle_limit * 1000000))
    until formed; do
        check_alive_but "" || return 1
        [ "$(now_us)" -lt "$deadline" ] || { say "$prefix: the cluster did not form in $settle_limit s"; return 1; }
        pause 0.2
    done
    local kind_args
    for job in stateless stateful; do
        kind_args=()
        [ "$job" = stateful ] && kind_args=(--stateful)
        until "$shoal" submit "$job" --parallelism "$tasks" "${kind_args[@]}" \
            --command "exec bash $work/writer.sh $dir/rec" "${job_args[@]}" \
            --data-dir "$dir/n0/data" --timeout 5s >"$dir/submit.out" 2>&1; do
            grep -q 'invalid\|usage' "$dir/submit.out" && { say "$prefix: submit $job:"; cat "$dir/submit.out" >&2; exit 2; }
            [ "$(now_us)" -lt "$deadline" ] || { say "$prefix: submit $job failed:"; cat "$dir/submit.out" >&2; return 1; }
            pause 0.5
        done
    done
    # Steady: every task active, written, and placed as a second before.
    placed=""
    while :; do
        check_alive_but "" || return 1
        [ "$(now_us)" -lt "$deadline" ] ||
            { say "$prefix: not every task ran once, steadily, in $settle_limit s"; return 1; }
        formed || { pause 0.2; continue; }
        again=$(placement) || { placed=""; pause 0.2; continue; }
        [ -n "$placed" ] && [ "$again" = "$placed" ] && break
        placed=$again
        pause 1
    done

    if [ "$kind" = leader ]; then
        victim=$leader_name
    else
        # A follower that runs actives, at random among them.
        victim=$(awk -v l="$leader_name" '$2 != l { print $2 }' <<<"$placed" | sort -u | shuf -n 1)
    fi
    mapfile -t moved < <(awk -v v="$victim" '$2 == v { print $1 }' <<<"$placed")
    if [ -z "$victim" ] || [ "${#moved[@]}" -eq 0 ]; then
        say "$prefix: no worker to fault (the leader $leader_name runs no active?)"
        return 1
    fi
    v=${victim#n}
    victim_id=$(members_of 0 | awk -v n="$victim" '$1 == n { print $2 }')
    pause "1.$(printf '%03d' $((RANDOM % 1000)))"
    check_alive_but "" || return 1
    declare -A old_of=()
    for task in "${moved[@]}"; do
        old_of[$task]=$(tail -1 "$dir/rec/$victim.${task/\//-}" | cut -d' ' -f4)
    done

    t_fault=$(now_us)
    case $kind in
    kill | leader)
        exec 4>&2 2>/dev/null # without bash's word of it
        kill -KILL "${fo_pid[v]}"
        wait "${fo_pid[v]}"
        exec 2>&4 4>&-
        ;;
    freeze) kill -STOP "${fo_pid[v]}" ;;
    esac

    # Until a worker other than the victim writes each of its tasks.
    deadline=$((t_fault + recover_limit * 1000000))
    pending=("${moved[@]}")
    while [ "${#pending[@]}" -gt 0 ]; do
        check_alive_but "$v" || return 1
        [ "$(now_us)" -lt "$deadline" ] ||
            { say "$prefix: ${pending[*]} not written by another worker $recover_limit s after the fault"; return 1; }
        local still=()
        for task in "${pending[@]}"; do
            line=""
            for file in "$dir"/rec/*."${task/\//-}"; do
                [ "$file" = "$dir/rec/$victim.${task/\//-}" ] && continue
                [ "$(tail -1 "$file" | cut -d' ' -f1)" -gt "$t_fault" ] && { line=1; break; }
            done
            [ -n "$line" ] || still+=("$task")
        done
        pending=("${still[@]}")
        pause 0.1
    done
    pause 1 # an old owner that writes on shows it
    if [ "$kind" = freeze ]; then
        kill -CONT "${fo_pid[v]}"
        pause 3
    fi

    # The survivors' event logs.
    local logs=()
    for i in $(seq 0 $((nodes - 1))); do [ "$i" -ne "$v" ] && logs+=("$dir/n$i/events.jsonl"); done
    event_lines "$victim_id" "${logs[@]}" >"$dir/event-lines"
    read -r suspect dead new_leader < <(awk -v f="$((t_fault / 1000))" '
        $2 < f { next }
        $1 == "member" && $3 == "suspect" && (s == "" || $2 < s) { s = $2 }
        $1 == "member" && $3 == "dead" && (d == "" || $2 < d) { d = $2 }
        $1 == "leader" && (l == "" || $2 < l) { l = $2 }
        END { print (s == "" ? "-" : s - f), (d == "" ? "-" : d - f), (l == "" ? "-" : l - f) }' "$dir/event-lines")
    double=$(double_actives)
    echo "$kind $run $victim $suspect $dead $new_leader $double" >>"$events"

    local others
    for task in "${moved[@]}"; do
        others=()
        for file in "$dir"/rec/*."${task/\//-}"; do
            [ "$file" != "$dir/rec/$victim.${task/\//-}" ] && others+=("$file")
        done
        awk -v task="$task" -v fault="$t_fault" -v old="${old_of[$task]}" -v vfile="$dir/rec/$victim.${task/\//-}" \
            -v kind="$kind" -v run="$run" -v fms="$((t_fault / 1000))" -v fenced="$fenced" '
            function older (a, b,    x, y) { # epochs TERM.VERSION
                split (a, x, "."); split (b, y, ".")
                return x[1] + 0 < y[1] + 0 || (x[1] + 0 == y[1] + 0 && x[2] + 0 < y[2] + 0)
            }
            FILENAME == vfile { if ($4 == old) { last = $1; olds[++n] = $1; oldep[n] = $3 }; next }
            FILENAME ~ /event-lines$/ {
                if ($3 != task || $2 < fms) next
                if ($1 == "task" && (assign == "" || $2 < assign)) assign = $2
                if ($1 == "moving" && (moving == "" || $2 < moving)) moving = $2
                next
            }
            $1 > fault && (first == "" || $1 < first) { first = $1; firstep = $3; split (FILENAME, p, "/"); node = p[length (p)]; sub (/\..*/, "", node) }
            END {
                overlap = 0; refused = 0
                if (fenced) last = ""
                for (i = 1; i <= n; i++)
                    if (olds[i] < first) { if (fenced && (last == "" || olds[i] > last)) last = olds[i] }
                    else if (fenced && older(oldep[i], firstep)) refused++
                    else overlap++
                job = task; sub (/\/.*/, "", job)
                print kind, run, task, job, node, fault, last, first, overlap, (assign == "" ? "-" : assign - fms),
                    (moving == "" ? "-" : moving - fms), refused
            }' "$dir/rec/$victim.${task/\//-}" "${others[@]}" "$dir/event-lines" >>"$records"
    done
    new_first=$(awk -v k="$kind" -v r="$run" '$1 == k && $2 == r { g = ($8 - $7) / 1000; if (g > m) m = g; o += $9 } END { printf "max gap %d ms, %d overlaps", m, o }' "$records")
    say "$prefix: $kind $victim (leader $leader_name), ${#moved[@]} actives moved; $new_first;" \
        "suspect ${suspect} ms, dead ${dead} ms; double actives $double"
    fo_stop_cluster
}

for kind in "${kinds[@]}"; do
    for run in $(seq 1 "$runs"); do
        if ! one_run "$kind" "$run"; then
            echo "$kind $run" >>"$failures"
            [ "$keep" -eq 1 ] || say "(--keep keeps the logs)"
            fo_stop_cluster
        fi
    done
done

# The JSON: per kind, the counts and each time's n/p50/p99/max.
json=$(awk -v kinds="${kinds[*]}" -v runs="$runs" -v quick="$quick" -v nodes="$nodes" -v tasks="$tasks" \
    -v options="${job_args[*]}" -v fenced="$fenced" '
    function stats (list,    v, n, i, j, t, p50, p99) {
        n = split (list, v, " ")
        if (n == 0) return "{\"n\": 0, \"p50\": null, \"p99\": null, \"max\": null}"
        for (i = 2; i <= n; i++)
            for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
        p50 = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
        p99 = v[int ((99 * n + 99) / 100)] # nearest rank: ceil (0.99 n)
        return sprintf ("{\"n\": %d, \"p50\": %d, \"p99\": %d, \"max\": %d}", n, p50, p99, v[n])
    }
    function add (name, value) { if (value != "-") list[name] = list[name] " " value }
    FILENAME ~ /records$/ {
        k = $1; moved[k]++; over[k] += $9; refused[k] += $12
        add (k " gap", int (($8 - $7) / 1000 + 0.5)); add (k " gap " $4, int (($8 - $7) / 1000 + 0.5))
        add (k " from", int (($8 - $6) / 1000 + 0.5)); add (k " old", int (($7 - $6) / 1000 + 0.5))
        add (k " assign", $10); add (k " moving", $11)
        next
    }
    FILENAME ~ /events$/ {
        k = $1; add (k " suspect", $4); add (k " dead", $5); if (k == "leader") add (k " leader", $6)
        double[k] += $7
        next
    }
    FILENAME ~ /failed$/ { failed[$1]++ }
    END {
        printf "{\"benchmark\": \"task_failover\", \"quick\": %s, \"nodes\": %d, \"runs\": %d, ",
            quick ? "true" : "false", nodes, runs
        printf "\"profile\": \"lan\", \"cluster\": \"fresh each run\", \"tasks_per_job\": %d, ", tasks
        printf "\"write_interval_ms\": 20, \"fenced\": %s, \"job_options\": [", fenced ? "true" : "false"
        n = split (options, o, " ")
        for (i = 1; i <= n; i++) printf "%s\"%s\"", (i > 1 ? ", " : ""), o[i]
        printf "], \"faults\": {"
        nk = split (kinds, kind, " ")
        for (i = 1; i <= nk; i++) {
            k = kind[i]
            printf "%s\"%s\": {\"runs\": %d, \"failed\": %d, \"tasks_moved\": %d, \"overlaps\": %d, ",
                (i > 1 ? ", " : ""), k, runs, failed[k], moved[k], over[k]
            printf "\"double_actives\": %d, \"refused\": %d, \"gap_ms\": %s, ", double[k], refused[k],
                stats (list[k " gap"])
            printf "\"gap_ms_by_job\": {\"stateless\": %s, \"stateful\": %s}, ",
                stats (list[k " gap stateless"]), stats (list[k " gap stateful"])
            printf "\"from_fault_ms\": %s, \"old_after_ms\": %s, ", stats (list[k " from"]), stats (list[k " old"])
            printf "\"moving_ms\": %s, ", stats (list[k " moving"])
            printf "\"assign_ms\": %s, \"suspect_ms\": %s, \"dead_ms\": %s", stats (list[k " assign"]),
                stats (list[k " suspect"]), stats (list[k " dead"])
            if (k == "leader") printf ", \"leader_ms\": %s", stats (list[k " leader"])
            printf "}"
        }
        printf "}, \"issue_ms\": {\"leader\": [15100, 15700], \"freeze\": [11600, 12200]}}\n"
    }' "$records" "$events" "$failures")
echo "$json"

# The table, on stderr.
{
    printf '%-7s %5s %6s %5s %8s %8s %8s %9s %8s %8s %8s\n' fault runs failed moved gap_p50 gap_p99 \
        gap_max fault_p50 overlaps susp_p50 dead_p50
    for kind in "${kinds[@]}"; do
        jq -r --arg k "$kind" '.faults[$k] | [$k, .runs, .failed, .tasks_moved, .gap_ms.p50, .gap_ms.p99, .gap_ms.max,
            .from_fault_ms.p50, .overlaps + .double_actives, .suspect_ms.p50, .dead_ms.p50] | map(tostring) | join(" ")' <<<"$json" |
            xargs printf '%-7s %5s %6s %5s %8s %8s %8s %9s %8s %8s %8s\n'
    done
} >&2

status=0
if [ "$quick" -eq 1 ]; then
    for key in nodes runs tasks_per_job; do
        [ "$(jq ".$key | numbers" <<<"$json")" != "" ] || { say "no number for $key in the JSON"; status=1; }
    done
    for kind in "${kinds[@]}"; do
        for key in runs failed tasks_moved overlaps double_actives gap_ms.p50 gap_ms.p99 gap_ms.max \
            from_fault_ms.p50 old_after_ms.max suspect_ms.n dead_ms.n; do
            [ "$(jq ".faults.$kind.$key | numbers" <<<"$json")" != "" ] ||
                { say "no number for faults.$kind.$key in the JSON"; status=1; }
        done
    done
fi
[ -s "$failures" ] && { say "failed runs: $(tr '\n' ' ' <"$failures")"; status=1; }
[ "$(jq '[.faults[] | .overlaps + .double_actives] | add' <<<"$json")" -eq 0 ] ||
    { say "two actives of one task at once (overlaps, double_actives)"; status=1; }
exit "$status"

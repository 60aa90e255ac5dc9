#!/usr/bin/env bash
# Many real `shoal worker` processes on one machine (issue 26): NODES
# workers on loopback (build/shoal, the LAN profile unless --profile says
# otherwise), each with its own port and no beacons, the first the seed.
# The run:
#   1. starts them all and waits until a sample of nodes (every node up to
#      20, then 20 picked at random, and the seed) each see NODES alive and
#      name the same leader: join_s, one_view_s;
#   2. lets the cluster idle IDLE seconds (--idle; 0: not) and reads each
#      worker's threads: the CPU time they ran (schedstat, exact) and how
#      often they woke (voluntary switches), per second: idle_cpu_ms_per_s
#      and idle_wakeups_per_s, the followers' mean and most and the
#      leader's;
#   3. submits two jobs, TASKS/2 stateless and TASKS/2 stateful tasks, whose
#      child only says it is ready and sleeps, and waits until every task
#      is active: placed_s;
#   4. kills (SIGKILL) the leader and KILL % of the other nodes at once
#      (never a majority of the voter set: voters_killed of voters), and
#      waits until a survivor names a new leader (leader_s) and every
#      task is active again on a survivor (failover_s); moves counts the
#      tasks whose active changed node; new_leader_cpu_s is the CPU the new
#      leader's process ran from the kill until then (its office);
#   5. stops every worker, then reads its event log: double_active_ms is
#      the total time two nodes let one task act at once: active as their
#      commands say (start or promote as active, until demote, stop, or the
#      node's death; the `mono` clock of one host), less the node's lease gaps
#      (from a lost lease's end, when the command's shim freezes it even
#      if the worker's thread is starved and writes the line late, until
#      the lease holds again): must be 0; double_commanded_ms is the same
#      from the command lines alone (a starved worker's late stop counts);
#      active_spans (how many spans were read) must be at least TASKS;
#      leases_lost counts the times a node lost its task lease (each one
#      stops or freezes its actives);
#   6. per node: CPU seconds over the run and RSS at the end (mean, max),
#      and the sockets each process holds open (mean, max).
# Prints one JSON object; exit status 1 when a step does not finish within
# its bound (bounds against a hang only) or a double active is seen, 2 for
# a bad argument. Never asserts on a time.
#
#   bench/scale.sh [--nodes N] [--tasks T] [--kill PERCENT] [--profile P]
#       [--child-nice N] [--start-rate R] [--max-starting M] [--idle SECONDS]
#       [--build DIR] [--keep]
#
# Defaults: 50 nodes, 500 tasks, 10 %, lan, --idle 10, build/plain,
# --child-nice 0, --max-starting 0 (the workers' option: at most M tasks
# starting at once in the whole cluster; 0: no bound),
# every worker started at once (--start-rate R: R workers a second, which
# spreads the joins of a large cluster; join_s still counts from the first).
# More than about 50 workers, or 500 tasks, on 2 cores need --profile wan:
# starting the children starves the node threads past the LAN's 2 s lease
# (docs/benchmarks.md, "Many workers on one machine")
# (the workers' option: the tasks' commands that much lower in CPU
# priority than the workers; docs/benchmarks.md has what it changed).
set -u
nodes=50 tasks=500 kill_pct=10 profile=lan build=build/plain keep=0 child_nice=0 start_rate=0 idle=10
max_starting=0
while [ $# -gt 0 ]; do
    case $1 in
    --nodes) nodes=$2; shift 2 ;;
    --tasks) tasks=$2; shift 2 ;;
    --kill) kill_pct=$2; shift 2 ;;
    --profile) profile=$2; shift 2 ;;
    --child-nice) child_nice=$2; shift 2 ;;
    --start-rate) start_rate=$2; shift 2 ;;
    --max-starting) max_starting=$2; shift 2 ;;
    --idle) idle=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h | --help) sed -n '2,/^set -u/p' "$0" | sed 's/^# \{0,1\}//; /^set -u/d'; exit 0 ;;
    *) echo "scale: unknown argument $1 (scale --help)" >&2; exit 2 ;;
    esac
done
for v in nodes tasks kill_pct child_nice start_rate idle max_starting; do
    [[ ${!v} =~ ^[0-9]+$ ]] || { echo "scale: --${v%_pct} must be a whole number" >&2; exit 2; }
done
[ "$nodes" -ge 3 ] || { echo "scale: --nodes is 3 or more" >&2; exit 2; }
[ "$tasks" -ge 2 ] || { echo "scale: --tasks is 2 or more" >&2; exit 2; }
[ "$child_nice" -le 19 ] || { echo "scale: --child-nice is 0 to 19" >&2; exit 2; }
[ "$kill_pct" -le 40 ] || { echo "scale: --kill is at most 40 (a majority must stay)" >&2; exit 2; }
case $build in /*) shoal=$build/shoal ;; *) shoal=$(cd "$(dirname "$0")/.." && pwd)/$build/shoal ;; esac
[ -x "$shoal" ] || { echo "scale: no program at $shoal (build it, or --build DIR)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "scale: needs python3" >&2; exit 2; }
top=$(mktemp -d)
declare -A pid_of
# Every worker still running is killed, all at once, then reaped.
stop_all () {
    local pid
    for pid in "${pid_of[@]}"; do kill -9 "$pid" 2>/dev/null; done
    for pid in "${pid_of[@]}"; do { wait "$pid"; } 2>/dev/null; done
    pid_of=()
}
cleanup () {
    stop_all
    [ "$keep" = 1 ] && echo "kept: $top" >&2 || rm -rf "$top"
}
trap cleanup EXIT
mono_ms () { python3 -c 'import time; print(int(time.monotonic() * 1000))'; }
bail () { echo "scale: $*" >&2; exit 1; }
wait_until () { # seconds command...: 0 once command succeeds
    local until=$((SECONDS + $1))
    shift
    while [ "$SECONDS" -lt "$until" ]; do "$@" >/dev/null 2>&1 && return 0; sleep 0.5; done
    return 1
}
start () { # name flags...
    local name=$1
    shift
    "$shoal" worker --data-dir "$top/$name" --bind 127.0.0.1:0 --beacon-port 0 --name "$name" \
        --profile "$profile" --child-nice "$child_nice" --max-starting "$max_starting" \
        --events "$top/$name.events" "$@" \
        >"$top/$name.out" 2>"$top/$name.log" &
    pid_of[$name]=$!
}
port_of () { sed -n -E 's/.* on port ([0-9]+).*/\1/p' "$top/$1.log" | head -1; }
alive () { "$shoal" members --data-dir "$top/$1" 2>/dev/null | grep -c ' alive '; }
leader () { "$shoal" status --json --data-dir "$top/$1" 2>/dev/null |
    sed -n -E 's/.*"leader": *"([0-9a-f]{32})".*/\1/p' | head -1; }
# The sample the views are read from: the seed and up to 20 others.
sample=(n0)
mapfile -t others < <(seq 1 $((nodes - 1)) | shuf -n 20)
for i in "${others[@]}"; do sample+=("n$i"); done
one_view () { # every sampled node that lives sees want alive and one leader
    local want=$1 name first=""
    for name in "${sample[@]}"; do
        [ -n "${pid_of[$name]:-}" ] || continue
        [ "$(alive "$name")" -eq "$want" ] || return 1
        local l
        l=$(leader "$name")
        [ -n "$l" ] || return 1
        [ -z "$first" ] || [ "$l" = "$first" ] || return 1
        first=$l
    done
}
active_count () { "$shoal" status --data-dir "$top/$1" 2>/dev/null | grep -c ' active '; }
all_active () { # name: every task active, none starting, none unplaced
    local out
    out=$("$shoal" status --data-dir "$top/$1" 2>/dev/null) || return 1
    [ "$(grep -c ' active ' <<<"$out")" -eq "$tasks" ] && ! grep -qE ' (starting|unplaced) ' <<<"$out"
}

t_start=$(mono_ms)
start n0 --expect 1
wait_until 60 grep -q ' on port ' "$top/n0.log" || bail "n0 did not start"
port=$(port_of n0)
for ((i = 1; i < nodes; i++)); do
    start "n$i" --join "127.0.0.1:$port"
    [ "$start_rate" -eq 0 ] || [ $((i % start_rate)) -ne 0 ] || sleep 1
done
wait_until 600 sh -c "[ \$('$shoal' members --data-dir '$top/n0' | grep -c ' alive ') -eq $nodes ]" ||
    bail "the seed never saw $nodes alive"
t_joined=$(mono_ms)
wait_until 600 one_view "$nodes" || bail "no one view of $nodes with one leader"
t_view=$(mono_ms)

# threads NAME...: per worker, the CPU its threads ran (ns) and their
# voluntary switches (wake-ups), from /proc: one process reads them all.
threads () {
    local name
    for name in "$@"; do echo "$name ${pid_of[$name]}"; done | python3 -c '
import os, sys
for line in sys.stdin:
    name, pid = line.split()
    ns = woke = 0
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            ns += int(open(f"/proc/{pid}/task/{tid}/schedstat").read().split()[0])
            for row in open(f"/proc/{pid}/task/{tid}/status"):
                if row.startswith("voluntary_ctxt_switches"):
                    woke += int(row.split()[1])
    except OSError:
        continue
    print(name, ns, woke)'
}
names=()
for ((i = 0; i < nodes; i++)); do names+=("n$i"); done
# Each worker's name by its node id, from the first line of its log;
# name ID prints it ("" for none).
declare -A name_of
while read -r id name; do name_of[$id]=$name; done < <(grep -m1 -h -o -E "node [0-9a-f]{32} \(n[0-9]+\)" "$top"/n*.log |
    sed -E 's/node ([0-9a-f]+) \((n[0-9]+)\)/\1 \2/')
name () { [ -n "$1" ] && echo "${name_of[$1]:-}"; }
idle_leader=$(leader n0)
: >"$top/idle.before" >"$top/idle.after"
if [ "$idle" -gt 0 ]; then
    threads "${names[@]}" >"$top/idle.before"
    t_idle=$(mono_ms)
    sleep "$idle"
    threads "${names[@]}" >"$top/idle.after"
    idle_ms=$(($(mono_ms) - t_idle))
    name "$idle_leader" >"$top/idle.leader"
fi

# submit NAME FLAG...: the job committed. A leader slow to answer may have
# applied it anyway: asked again, or found in the jobs, it is.
submit () {
    local name=$1 try
    shift
    for try in 1 2 3 4 5; do
        "$shoal" submit "$name" "$@" --data-dir "$top/n0" >/dev/null 2>>"$top/submit.err" && return 0
        "$shoal" jobs --data-dir "$top/n0" 2>/dev/null | grep -q "^$name " && return 0
        sleep 2
    done
    return 1
}
child='echo ready >&3; exec sleep 1000000'
half=$((tasks / 2))
submit web --parallelism $((tasks - half)) --command "$child" || bail "submit web refused"
submit store --parallelism "$half" --stateful --command "$child" || bail "submit store refused"
t_submit=$(mono_ms)
wait_until 900 all_active n0 || bail "the $tasks tasks were never all active"
t_placed=$(mono_ms)
"$shoal" status --data-dir "$top/n0" | awk '$3 == "active" { print $1, $2 }' | sort >"$top/before"

# The leader and KILL % of the others, at once.
leader_id=$(leader n0)
victims=("$(name "$leader_id")")
[ -n "${victims[0]}" ] || bail "the leader $leader_id is none of the workers"
count=$((nodes * kill_pct / 100))
# The victims hold at most a minority of the voter set, the leader among
# them: with a majority of the voters dead, quorum mode has no leader until
# some come back (docs/election.md, "Why at most seven voters"), which tests
# another thing. Drawn at random, 4 of 7 voters died in 1 of 5 runs at
# 1,000 workers (2026-12-05), and that run waited for a leader to its bound.
voters=" " voters_count=0
for id in $("$shoal" members --json --data-dir "$top/n0" | jq -r '.members[] | select(.voter) | .id'); do
    voters+="$(name "$id") "
    voters_count=$((voters_count + 1))
done
voters_killed=0
[[ $voters == *" ${victims[0]} "* ]] && voters_killed=1
more=()
mapfile -t order < <(for ((i = 0; i < nodes; i++)); do [ "n$i" = "${victims[0]}" ] || echo "n$i"; done | shuf)
for name in "${order[@]}"; do
    [ "${#more[@]}" -lt "$count" ] || break
    if [[ $voters == *" $name "* ]]; then
        [ $((2 * (voters_killed + 1))) -lt "$voters_count" ] || continue
        voters_killed=$((voters_killed + 1))
    fi
    more+=("$name")
done
victims+=("${more[@]}")
survivor=""
for ((i = 0; i < nodes; i++)); do
    [[ " ${victims[*]} " == *" n$i "* ]] || { survivor=${survivor:-n$i}; }
done
# CPU and RSS of every node before the kill (the victims' too).
for ((i = 0; i < nodes; i++)); do
    pid=${pid_of[n$i]}
    echo "n$i $(awk '{ print $14 + $15 }' "/proc/$pid/stat") $(awk '/^VmRSS/ { print $2 }' "/proc/$pid/status") $(find "/proc/$pid/fd" -lname 'socket:*' 2>/dev/null | wc -l)"
done >"$top/usage"
t_kill=$(mono_ms)
for v in "${victims[@]}"; do kill -9 "${pid_of[$v]}"; done
for v in "${victims[@]}"; do { wait "${pid_of[$v]}"; } 2>/dev/null; unset "pid_of[$v]"; done
new_leader () { local l; l=$(leader "$survivor"); [ -n "$l" ] && [ "$l" != "$leader_id" ]; }
wait_until 300 new_leader || bail "no new leader after the kill"
t_leader=$(mono_ms)
wait_until 600 all_active "$survivor" || bail "the tasks were never all active again"
t_failover=$(mono_ms)
# The new leader's CPU from the kill to here: its office.
new_name=$(name "$(leader "$survivor")")
new_pid=${new_name:+${pid_of[$new_name]:-}}
[ -n "$new_pid" ] && echo "$new_name $(awk '{ print $14 + $15 }' "/proc/$new_pid/stat")" >"$top/leader.after"
"$shoal" status --data-dir "$top/$survivor" | awk '$3 == "active" { print $1, $2 }' | sort >"$top/after"
sleep 2
# Every worker is stopped before the event logs are read. Read while the
# workers still wrote them, one file could end before a move's stop and the
# next already show its new active (a node writes the stop before the leader
# hears of it, so in files no longer written the stop is always there): one
# run counted such a move as active twice from then on. Spans still open end
# here.
stop_all
t_stop=$(mono_ms)

VOTERS_KILLED=$voters_killed VOTERS=$voters_count IDLE_MS=${idle_ms:-0} START_RATE=$start_rate MAX_STARTING=$max_starting python3 - "$top" "$nodes" "$tasks" "$kill_pct" "$profile" "${#victims[@]}" \
    "$t_start" "$t_joined" "$t_view" "$t_submit" "$t_placed" "$t_kill" "$t_leader" "$t_failover" "$t_stop" \
    "${victims[@]}" <<'EOF'
import glob, json, os, statistics, sys
top, nodes, tasks, kill_pct, profile, nvict = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], int(sys.argv[6])
t = [int(x) for x in sys.argv[7:16]]
victims = set(sys.argv[16:16 + nvict])
start, joined, view, submit, placed, kill, leader, failover, stop = t
# Active intervals per task, from every node's command lines; and each
# node's lease gaps: from a lost lease's end (`until`, when the command's
# shim freezes it, however late the worker's thread writes the line) to the
# line that says the lease holds again.
intervals, gaps_of, leases_lost = {}, {}, 0
for path in glob.glob(os.path.join(top, "n*.events")):
    name = os.path.basename(path)[:-len(".events")]
    open_at, gaps, lost = {}, [], None
    end = kill if name in victims else None
    for line in open(path):
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if e.get("event") == "lease":
            if not e["held"] and lost is None:
                lost = min(e["until"], e["mono"])
                leases_lost += 1
            elif e["held"] and lost is not None:
                gaps.append((lost, e["mono"]))
                lost = None
            continue
        if e.get("event") != "task":
            continue
        task, at = e["task"], e["mono"]
        if e["role"] == "active" and task not in open_at:
            open_at[task] = at
        elif e["role"] != "active" and task in open_at:
            intervals.setdefault(task, []).append((open_at.pop(task), at, name))
    for task, at in open_at.items():
        intervals.setdefault(task, []).append((at, end if end is not None else stop, name))
    if lost is not None:
        gaps.append((lost, stop))
    gaps_of[name] = gaps
def overlap(spans):
    total, reach = 0, None
    for a, b in sorted(spans):
        if reach is not None and a < reach:
            total += min(b, reach) - a
        reach = b if reach is None else max(reach, b)
    return total
def allowed(a, b, gaps):  # [a, b) less the node's lease gaps
    for g0, g1 in gaps:
        if g1 <= a or g0 >= b:
            continue
        if g0 > a:
            yield a, g0
        a = max(a, g1)
        if a >= b:
            return
    yield a, b
spans_read = sum(len(v) for v in intervals.values())
commanded = sum(overlap([(a, b) for a, b, _ in spans]) for spans in intervals.values())
double = sum(overlap([piece for a, b, node in spans for piece in allowed(a, b, gaps_of[node])])
             for spans in intervals.values())
def pairs(path):
    return dict(line.split() for line in open(path) if line.strip())
before, after = pairs(os.path.join(top, "before")), pairs(os.path.join(top, "after"))
moves = sum(1 for task, node in after.items() if before.get(task) != node)
usage = [line.split() for line in open(os.path.join(top, "usage"))]
hz = os.sysconf("SC_CLK_TCK")
cpu = [int(u[1]) / hz for u in usage]
rss = [int(u[2]) / 1024 for u in usage]
socks = [int(u[3]) for u in usage]
def office_cpu():
    # The new leader's CPU seconds from the kill to the failover.
    path = os.path.join(top, "leader.after")
    if not os.path.exists(path):
        return None
    name, ticks = open(path).read().split()
    before = {u[0]: int(u[1]) for u in usage}
    return round((int(ticks) - before[name]) / hz, 2) if name in before else None
run_s = (kill - start) / 1000
def idle_figures():
    # Each worker's CPU ms and wake-ups a second over the idle window.
    window = int(os.environ["IDLE_MS"]) / 1000
    if not window:
        return None, None
    read = lambda f: {r[0]: (int(r[1]), int(r[2])) for r in (l.split() for l in open(os.path.join(top, f)))}
    a, b = read("idle.before"), read("idle.after")
    path = os.path.join(top, "idle.leader")
    lead = open(path).read().strip() if os.path.exists(path) else None
    rate = {n: ((b[n][0] - a[n][0]) / 1e6 / window, (b[n][1] - a[n][1]) / window) for n in b if n in a}
    follow = [v for n, v in rate.items() if n != lead]
    fig = lambda k: {"follower_mean": round(statistics.mean(v[k] for v in follow), 3),
                     "follower_max": round(max(v[k] for v in follow), 3),
                     "leader": round(rate[lead][k], 3) if lead in rate else None}
    return fig(0), fig(1)
idle_cpu, idle_woke = idle_figures()
s = lambda ms: round(ms / 1000, 2)
print(json.dumps({
    "bench": "scale", "nodes": nodes, "tasks": tasks, "profile": profile,
    "start_rate": int(os.environ["START_RATE"]),
    "max_starting": int(os.environ["MAX_STARTING"]),
    "killed": len(victims), "kill_percent": kill_pct,
    "voters": int(os.environ["VOTERS"]), "voters_killed": int(os.environ["VOTERS_KILLED"]),
    "join_s": s(joined - start), "one_view_s": s(view - start),
    "placed_s": s(placed - submit), "leader_s": s(leader - kill), "failover_s": s(failover - kill),
    "new_leader_cpu_s": office_cpu(),
    "moves": moves, "double_active_ms": double, "double_commanded_ms": commanded,
    "active_spans": spans_read, "leases_lost": leases_lost,
    "idle_s": round(int(os.environ["IDLE_MS"]) / 1000, 1),
    "idle_cpu_ms_per_s": idle_cpu, "idle_wakeups_per_s": idle_woke,
    "cpu_percent_per_node": {"mean": round(100 * statistics.mean(cpu) / run_s, 2),
                             "max": round(100 * max(cpu) / run_s, 2)},
    "rss_mb_per_node": {"mean": round(statistics.mean(rss), 1), "max": round(max(rss), 1)},
    "sockets_per_node": {"mean": round(statistics.mean(socks), 1), "max": max(socks)},
}))
# No span read would make the check above an empty one.
sys.exit(1 if double > 0 or spans_read < tasks else 0)
EOF

#!/usr/bin/env bash
# A rolling restart of every worker of a cluster with stateful tasks, done
# two ways, side by side: today's graceful leave (SIGTERM) and `shoal drain
# --leave`. NODES real `shoal worker` processes on loopback (build/shoal),
# the loopback profile, one stateful job of TASKS tasks. The job's child
# (bash) models a task with state to restore: started as a learner or
# standby it restores (lag 100 down to 0 over RESTORE seconds, said on its
# status descriptor) and then is ready; started as the active it restores
# the same before it serves, since it has no copy (a cold start). While
# active and restored it writes "TIME PID" (bash's EPOCHREALTIME) every
# 20 ms to its task's file: that is the task being served. It becomes
# active when it starts so or when the worker writes it `promote`.
#
# For each mode, one fresh cluster: every worker in turn is stopped (leave:
# SIGTERM; drain: `shoal drain --leave`, then its exit) and started again
# on its data directory, and the next goes once the leader's status shows
# every task active with no learner. Per mode:
#   handovers     times a task's writes passed from one child to another
#   cold_moves    of those, the ones whose new child started only after the
#                 old one's last write: it restored while the task was not
#                 served (a warm move started it before)
#   gap_ms        per handover: the new child's first write minus the old
#                 one's last (n, p50, p99, max): how long the task was not
#                 served
#   overlaps      writes of an old child after the new one's first (two
#                 serving at once): must be 0
#   rolling_s     the whole rolling restart
# Prints one JSON object; exit status 1 on an overlap or a run that does
# not settle, 2 for a bad argument. Never asserts on a time.
#
#   bench/rolling_restart.sh [--nodes N] [--tasks T] [--restore S]
#       [--modes leave,drain] [--build DIR] [--keep]
#
# Defaults: 4 nodes, 12 tasks, 2 s of restore, both modes, build/plain.
set -u
nodes=4 tasks=12 restore=2 modes=leave,drain build=build/plain keep=0
while [ $# -gt 0 ]; do
    case $1 in
    --nodes) nodes=$2; shift 2 ;;
    --tasks) tasks=$2; shift 2 ;;
    --restore) restore=$2; shift 2 ;;
    --modes) modes=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    *) echo "rolling_restart: unknown argument $1" >&2; exit 2 ;;
    esac
done
shoal=$(cd "$(dirname "$0")/.." && pwd)/$build/shoal
[ -x "$shoal" ] || { echo "rolling_restart: no program at $shoal (build it, or --build DIR)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "rolling_restart: needs python3" >&2; exit 2; }
[[ $nodes =~ ^[0-9]+$ ]] && [ "$nodes" -ge 2 ] || { echo "rolling_restart: --nodes is 2 or more" >&2; exit 2; }
top=$(mktemp -d)
declare -A pid_of
cleanup () {
    local pid
    for pid in "${pid_of[@]}"; do kill -9 "$pid" 2>/dev/null; done
    [ "$keep" = 1 ] && echo "kept: $top" >&2 || rm -rf "$top"
}
trap cleanup EXIT

# The child, as a bash script: $1 the records folder.
cat >"$top/child.bash" <<'EOF'
rec=$1/${SHOAL_TASK//\//.}
restore=$2
echo "$EPOCHREALTIME $SHOAL_TASK $SHOAL_ROLE $$" >>"$1/starts"
active=0
[ "$SHOAL_ROLE" = active ] && active=1
steps=10
for ((i = steps; i >= 0; i--)); do
    echo "lag $((i * 10))" >&3
    [ "$i" -gt 0 ] && sleep "$(echo "$restore / $steps" | bc -l)"
done
# Until promoted, a blocking read: `read -t` loses the part of a line it
# read when its time runs out, and with it, now and then, the promotion.
while [ "$active" = 0 ] && read -r line <&3; do
    case $line in promote\ *) active=1 ;; esac
done
[ "$active" = 1 ] || while :; do sleep 3600; done
while :; do
    echo "$EPOCHREALTIME $$" >>"$rec"
    sleep 0.02
done
EOF
command -v bc >/dev/null || { echo "rolling_restart: needs bc" >&2; exit 2; }

wait_until () { # seconds command...: 0 once command succeeds
    local until=$((SECONDS + $1)); shift
    while [ "$SECONDS" -lt "$until" ]; do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
    return 1
}

start () { # dir name flags...
    local dir=$1 name=$2; shift 2
    "$shoal" worker --data-dir "$dir/$name" --bind 127.0.0.1:0 --beacon-port 0 \
        --profile loopback --name "$name" --acceptable-lag 0 "$@" \
        >>"$dir/$name.out" 2>>"$dir/$name.log" &
    pid_of[$name]=$!
}
port_of () { sed -n -E 's/.* on port ([0-9]+).*/\1/p' "$1" | tail -1; }
# Every task active once, no learner, no task stopping: settled.
settled () { # dir
    local out
    out=$("$shoal" status --data-dir "$1/n0" 2>/dev/null) || return 1
    [ "$(grep -c ' active ' <<<"$out")" -eq "$tasks" ] && ! grep -q ' learner ' <<<"$out" &&
        ! grep -qE ' (starting|stopping|unplaced) ' <<<"$out"
}

run_mode () { # mode: prints the run's folder
    local mode=$1 dir=$top/$1 i port t0 t1
    mkdir -p "$dir/rec"
    start "$dir" n0 --expect 1
    wait_until 30 grep -q ' on port ' "$dir/n0.log" || return 1
    port=$(port_of "$dir/n0.log")
    for ((i = 1; i < nodes; i++)); do start "$dir" "n$i" --join "127.0.0.1:$port"; done
    wait_until 60 sh -c "[ \$('$shoal' members --data-dir '$dir/n0' | grep -c ' alive ') -eq $nodes ]" ||
        return 1
    "$shoal" submit s --parallelism "$tasks" --stateful --data-dir "$dir/n0" \
        --command "exec bash $top/child.bash $dir/rec $restore" >/dev/null || return 1
    wait_until 120 settled "$dir" || return 1
    sleep 2
    echo "$EPOCHREALTIME" >"$dir/placed"
    t0=$SECONDS
    for ((i = 0; i < nodes; i++)); do
        if [ "$mode" = drain ]; then
            "$shoal" drain --leave --data-dir "$dir/n$i" >>"$dir/drain.out" 2>&1 || return 1
        else
            kill -TERM "${pid_of[n$i]}"
        fi
        wait "${pid_of[n$i]}"
        unset "pid_of[n$i]"
        # Back through the next worker, which is up.
        port=$(port_of "$dir/n$(((i + 1) % nodes)).log")
        start "$dir" "n$i" --join "127.0.0.1:$port"
        wait_until 30 sh -c "[ \$('$shoal' members --data-dir '$dir/n0' 2>/dev/null | grep -c ' alive ') -eq $nodes ]" ||
            return 1
        wait_until 120 settled "$dir" || return 1
    done
    t1=$SECONDS
    echo "$((t1 - t0))" >"$dir/rolling_s"
    sleep 1
}

stop_all () {
    local name
    for name in "${!pid_of[@]}"; do kill -TERM "${pid_of[$name]}" 2>/dev/null; done
    for name in "${!pid_of[@]}"; do wait "${pid_of[$name]}" 2>/dev/null; done
    pid_of=()
}

failed=0
for mode in ${modes//,/ }; do
    case $mode in leave | drain) ;; *) echo "rolling_restart: --modes takes leave,drain" >&2; exit 2 ;; esac
    run_mode "$mode" || { echo "rolling_restart: the $mode run did not settle" >&2; failed=1; }
    stop_all
done

python3 - "$top" "$modes" "$nodes" "$tasks" "$restore" <<'EOF'
import glob, json, os, sys
top, modes, nodes, tasks, restore = sys.argv[1], sys.argv[2].split(","), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
def pct(xs, p):
    if not xs:
        return None
    xs = sorted(xs)
    return xs[max(0, -(-len(xs) * p // 100) - 1)]
out = {"bench": "rolling_restart", "nodes": nodes, "tasks": tasks, "restore_s": restore}
bad = False
for mode in modes:
    d = os.path.join(top, mode)
    if not os.path.exists(os.path.join(d, "rolling_s")):
        out[mode] = {"settled": False}
        bad = True
        continue
    placed = float(open(os.path.join(d, "placed")).read())
    started = {}
    for line in open(os.path.join(d, "rec", "starts")):
        t, task, role, pid = line.split()
        started[pid] = float(t)
    gaps, overlaps, cold = [], 0, 0
    for path in glob.glob(os.path.join(d, "rec", "s.*")):
        writes = [tuple(l.split()) for l in open(path) if len(l.split()) == 2]
        writes = [(float(t), p) for t, p in writes]
        writes.sort()
        first, last = {}, {}
        for t, p in writes:
            first.setdefault(p, t)
            last[p] = t
        order = sorted(first, key=first.get)
        for a, b in zip(order, order[1:]):
            if first[b] < placed:
                continue
            overlaps += sum(1 for t, p in writes if p == a and t >= first[b])
            gaps.append(max(0.0, first[b] - last[a]) * 1000)
            # Cold: the new child started only once the old one had
            # stopped serving, so it restored while the task was not served.
            cold += started.get(b, first[b]) >= last[a]
    bad |= overlaps > 0
    out[mode] = {
        "settled": True,
        "rolling_s": int(open(os.path.join(d, "rolling_s")).read()),
        "cold_moves": cold,
        "handovers": len(gaps),
        "gap_ms": {"n": len(gaps), "p50": pct(gaps, 50), "p99": pct(gaps, 99), "max": max(gaps) if gaps else None},
        "overlaps": overlaps,
    }
print(json.dumps(out))
sys.exit(1 if bad else 0)
EOF
rc=$?
[ "$failed" = 1 ] && exit 1
exit $rc

#!/usr/bin/env bash
# Only the worker process frozen: SIGSTOP to one `shoal worker` alone, not
# its shims or children, as a stuck or starved worker would be. Its node
# sends nothing any more, so the leader gives its tasks to others once its
# lease has surely ended; its children must not act on meanwhile. Each
# child's shim holds the lease deadline the worker last gave it and freezes
# the child when it passes (docs/worker.md, "The lease: freezing").
#
#   - once another worker runs a task the frozen worker ran, the frozen
#     worker's child of it writes nothing more, and its last write came
#     before the new owner's first;
#   - its children are frozen (state T), not running;
#   - SIGCONT: the worker finds its lease lost, and its children of those
#     tasks end (a stateless task's stopped, a stateful one's demoted);
#     the cluster settles with each task run by one live, running child.
#
# Two jobs, one stateless and one stateful, whose children write a line
# (the wall clock, in microseconds) every 20 ms to a file of their own while
# they are active. On the LAN timings: the loopback's 600 ms lease lets a
# loaded machine (a sanitized build) lose leases and leaders all along,
# which has nothing to do with a stopped worker. Waits are bounded against
# a hang only.
set -u
shoal=$1
# shellcheck source=lib/expect.bash
. "$(dirname "$0")/lib/expect.bash"
# shellcheck source=lib/workers.bash
. "$(dirname "$0")/lib/workers.bash"
[ -r /proc/self/stat ] || { echo "skip: no /proc to tell which processes run"; exit 77; }

# Whatever a broken worker leaves behind dies with the test, and a stopped
# worker is let go first, so that it can be killed.
before_cleanup () {
    local pid
    for pid in "${pid_of[@]}"; do kill -CONT "$pid" 2>/dev/null; done
    for pid in $(all_children); do kill -9 "$pid" 2>/dev/null; done
}

# The state letter of a process: R, S, T (stopped), Z; nothing once gone.
state_of () { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1; }
alive () { local state; state=$(state_of "$1"); [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]; }
all_gone () { local pid; for pid in "$@"; do alive "$pid" && return 1; done; return 0; }

# "TASK PID" for every active child worker $1 started (the command execs
# bash, so the child's pid is the command's).
actives_of () {
    sed -n -E 's/.* (started|promoted) ([^ ]+) (as|to) active \(epoch [^,]*, pid ([0-9]+)\).*/\2 \4/p' \
        "$work/$1.log" | sort -u
}
# Those of its active children that run now: not those it stopped.
running_actives () {
    local line
    actives_of "$1" | while read -r line; do
        case $(state_of "${line#* }") in R | S | D) echo "$line" ;; esac
    done
}
all_children () {
    local name
    for name in a b c; do
        [ -f "$work/$name.log" ] &&
            sed -n -E 's/.* (started|promoted) [^ ]+ (as|to) [a-z]+ \(epoch [^,]*, pid ([0-9]+)\).*/\3/p' \
                "$work/$name.log"
    done | sort -u
}
# The file a child writes: the task (job-index) and its pid.
file_of () { echo "$work/rec/${1/\//-}.$2"; }
# The same, of a line "TASK PID".
file_of_line () { file_of "${1% *}" "${1#* }"; }

mkdir "$work/rec"
cat >"$work/writer.sh" <<'EOF'
# A task that acts: a line every 20 ms, the wall clock in microseconds. A
# learner or standby says it is ready and waits for its promotion.
file=$1/${SHOAL_TASK/\//-}.$$
if [ "$SHOAL_ROLE" != active ]; then
    echo ready >&"$SHOAL_STATUS_FD"
    while read -r line <&"$SHOAL_STATUS_FD"; do
        case $line in promote*) break ;; esac
    done
fi
while :; do
    echo "${EPOCHREALTIME/./}" >>"$file"
    sleep 0.02
done
EOF

start () { # name [seed]
    SHOAL_PROFILE=lan "$shoal" worker --data-dir "$work/$1" --bind 127.0.0.1:0 \
        --beacon-port 0 --name "$1" --expect 3 --grace 2s ${2:+--join "$2"} \
        >"$work/$1.out" 2>"$work/$1.log" &
    pid_of[$1]=$!
}
start a
wait_for "a starts" has_port a || exit 1
seed=127.0.0.1:$(port_of a)
start b "$seed"
start c "$seed"
three_alive () { [ "$("$shoal" members --data-dir "$work/a" | grep -c ' alive ')" -eq 3 ]; }
wait_for "three members alive" three_alive || exit 1
wait_for "submit rec" "$shoal" submit rec --parallelism 3 --command "exec bash $work/writer.sh $work/rec" \
    --data-dir "$work/a" --timeout 2s || exit 1
wait_for "submit warm" "$shoal" submit warm --parallelism 3 --stateful \
    --command "exec bash $work/writer.sh $work/rec" --data-dir "$work/a" --timeout 2s || exit 1
tasks="rec/0 rec/1 rec/2 warm/0 warm/1 warm/2"

# Each task runs as active in one live child, which is not stopped, and the
# leader's status says so.
one_each () {
    local task count pid name leader
    for task in $tasks; do
        count=0
        for name in a b c; do
            for pid in $(actives_of "$name" | sed -n "s|^$task ||p"); do
                case $(state_of "$pid") in R | S | D) count=$((count + 1)) ;; esac
            done
        done
        [ "$count" -eq 1 ] || return 1
    done
    for name in a b c; do
        leader=$(leader_of "$name")
        [ -n "$leader" ] && break
    done
    for name in a b c; do
        [ "$(id_of "$name")" = "$leader" ] || continue
        "$shoal" status --data-dir "$work/$name" --json >"$work/status" 2>/dev/null || return 1
        [ "$(jq -r '.tasks[] | select(.role == "active" and .state == "running") | .task' \
            "$work/status" | sort -u | wc -l)" -eq 6 ]
        return
    done
    return 1
}
wait_for "every task runs once" one_each || exit 1

# The worker to freeze: one that is not the leader and runs active tasks.
leader=$(leader_of a)
victim=
for name in a b c; do
    [ "$(id_of "$name")" != "$leader" ] && [ -n "$(running_actives "$name")" ] && victim=$name && break
done
[ -n "$victim" ] || { fail "a follower runs active tasks"; exit 1; }
mapfile -t victim_actives < <(running_actives "$victim")
[ "${#victim_actives[@]}" -gt 0 ] || { fail "$victim runs active children"; exit 1; }
victim_pids=$(for line in "${victim_actives[@]}"; do echo "${line#* }"; done)
# Before: the victim's children write.
for line in "${victim_actives[@]}"; do
    file=$(file_of_line "$line")
    wait_for "$line writes" test -s "$file"
done

kill -STOP "${pid_of[$victim]}"
echo "froze $victim (pid ${pid_of[$victim]}), which ran: ${victim_actives[*]}"

# Every task the victim ran runs on another worker, in a child of its own.
others=$(for name in a b c; do [ "$name" != "$victim" ] && echo "$name"; done)
new_owner () { # task: "NAME PID" of the child another worker started last
    local name pid
    for name in $others; do
        pid=$(actives_of "$name" | sed -n "s|^$1 ||p" | tail -1)
        [ -n "$pid" ] && alive "$pid" && echo "$name $pid" && return 0
    done
    return 1
}
moved () {
    local line
    for line in "${victim_actives[@]}"; do new_owner "${line% *}" >/dev/null || return 1; done
}
wait_for "the frozen worker's tasks run elsewhere" moved || exit 1
for line in "${victim_actives[@]}"; do
    wait_for "the new owner of ${line% *} writes" test -s "$(file_of "${line% *}" "$(new_owner "${line% *}" | cut -d' ' -f2)")"
done
# Give a child that still runs time to show it: a second, fifty writes.
declare -A size_before
for line in "${victim_actives[@]}"; do size_before[$line]=$(wc -l <"$(file_of_line "$line")"); done
sleep 1
for line in "${victim_actives[@]}"; do
    task=${line% *} pid=${line#* }
    file=$(file_of_line "$line")
    after=$(wc -l <"$file")
    [ "$after" -eq "${size_before[$line]}" ] ||
        fail "$task: $victim's child $pid wrote $((after - ${size_before[$line]})) lines while its task ran elsewhere"
    state=$(state_of "$pid")
    [ -z "$state" ] || [ "$state" = T ] || [ "$state" = Z ] ||
        fail "$task: $victim's child $pid runs (state $state) while its worker is stopped"
    new=$(new_owner "$task" | cut -d' ' -f2)
    last=$(tail -1 "$file")
    first=$(head -1 "$(file_of "$task" "$new")")
    [ "$last" -lt "$first" ] ||
        fail "$task: $victim's child $pid wrote at $last, after the new owner $new began at $first ($(awk -v f="$first" '$1 >= f' "$file" | wc -l) lines at once)"
done

# SIGCONT: the worker learns its lease is lost, and ends the children of
# the tasks it no longer holds; the cluster settles.
kill -CONT "${pid_of[$victim]}"
# shellcheck disable=SC2086
wait_for "the frozen worker's children end once it runs again" all_gone $victim_pids
grep -q 'lease lost' "$work/$victim.log" || fail "$victim says it lost its lease"
wait_for "every task runs once after the thaw" one_each

echo "freeze: $failures failed"
exit $((failures > 0))

#!/usr/bin/env bash
# `shoal worker` as a user runs it: its flags, then workers on loopback,
# joined by a seed, running a stateful job whose command records its
# environment and runs the example child (examples/worker/child.sh).
#
#   - the children start with their task's environment, and without the
#     worker's option variables;
#   - a fourth worker gets learners that report their lag and are
#     promoted without a restart, only after the old owner's child is gone;
#   - rescale and remove stop children;
#   - a SIGKILLed worker's children die with it, at once;
#   - a SIGTERMed worker leaves, stops its children and exits 0;
#   - a standby that has not reported shows its lag as unknown;
#   - each line a child writes is a log record of its task: with
#     --log-format json every line of the log is a JSON object, with text
#     the line follows the task and the stream;
#   - a stateless task whose worker lost its lease is stopped, never kept
#     running as a standby;
#   - the last two workers, stopped together, both leave and exit 0;
#   - a worker asked to leave (shoal leave), a follower and then the leader,
#     moves its tasks away, stops its children and exits 0, and the others'
#     term does not climb after it;
#   - no task was ever active in two live children at once.
#
# Waits are bounded against a hang only.
set -u
shoal=$1
src=$2
# shellcheck source=lib/expect.bash
. "$(dirname "$0")/lib/expect.bash"
# shellcheck source=lib/workers.bash
. "$(dirname "$0")/lib/workers.bash"
child_sh=$src/examples/worker/child.sh
[ -r "$child_sh" ] || { echo "skip: no $child_sh"; exit 77; }
[ -r /proc/self/stat ] || { echo "skip: no /proc to tell which processes live"; exit 77; }

# Children a broken worker would leave behind die with the test.
before_cleanup () {
    local log pid
    for log in "$work"/*.log; do
        [ -f "$log" ] || continue
        for pid in $(children_of "$(basename "$log" .log)"); do alive "$pid" && kill -9 "$pid"; done
    done
}

# A process is alive while it is there and not a zombie (which its new
# parent may leave unreaped; it runs no more).
alive () {
    local state
    state=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)
    [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}
exited () { ! alive "$1"; }
all_gone () { local pid; for pid in "$@"; do alive "$pid" && return 1; done; return 0; }

# The pids of the children a worker started: the command's pid, as its log
# says (the command execs the child, so it is the child's own pid too).
children_of () {
    sed -n -E 's/.* (started|promoted) [^ ]+ (as|to) [a-z]+ \(epoch [^,]*, pid ([0-9]+)\).*/\3/p' \
        "$work/$1.log" | sort -u
}

# --- flags -------------------------------------------------------------

expect_status 0 "--help" "$shoal" worker --help
for key in $(sed -n 's/^| `\([a-z-]*\)` |.*/\1/p' "$src/docs/options.md"); do
    grep -q -- "--$key " "$work/out" || fail "--help lists --$key"
done
grep -q 'SHOAL_<KEY>' "$work/out" || fail "--help says how the environment sets options"
grep -q 'config file' "$work/out" || fail "--help says what a config file is"
expect_status 2 "an unknown flag" "$shoal" worker --frobnicate 1
grep -q 'frobnicate' "$work/err" || fail "an unknown flag is named ($(cat "$work/err"))"
[ "$(wc -l <"$work/err")" -eq 1 ] || fail "an unknown flag: one line ($(cat "$work/err"))"
expect_status 2 "a bad value" "$shoal" worker --capacity=0
grep -q 'capacity' "$work/err" || fail "a bad value names its option ($(cat "$work/err"))"
expect_status 2 "a flag without its value" "$shoal" worker --grace
expect_status 2 "a config file that is not there" "$shoal" worker --config "$work/nowhere.conf"
grep -q 'nowhere.conf' "$work/err" || fail "a missing config file is named"
SHOAL_CAPCITY=3 expect_status 2 "a misspelled variable" "$shoal" worker
grep -q 'SHOAL_CAPCITY' "$work/err" || fail "a misspelled variable is named"
touch "$work/file"
expect_status 1 "a start that fails" "$shoal" worker --data-dir "$work/file/data" \
    --bind 127.0.0.1:0 --beacon-port 0
grep -q 'data' "$work/err" || fail "a failed start says why ($(cat "$work/err"))"

# --- a cluster ---------------------------------------------------------

# Every worker has options from the environment and from flags, and a from
# a config file too; the flags win over both (grace, name, log-format), the
# environment over the file (log-level), and the children see none of them.
printf 'name = from-config\nlog-format = json\nlog-level = error\n' >"$work/a.conf"
start () { # name [seed]
    local config=()
    [ "$1" = a ] && config=(--config "$work/a.conf")
    SHOAL_PROFILE=${profile:-loopback} SHOAL_DATA_DIR=$work/$1 SHOAL_GRACE=1h SHOAL_LOG_LEVEL=info \
        SHOAL_TEST_MARK=passed "$shoal" worker "${config[@]}" --bind 127.0.0.1:0 --beacon-port 0 \
        --name "$1" --grace 2s --log-format=text --acceptable-lag 0 ${2:+--join "$2"} \
        >"$work/$1.out" 2>"$work/$1.log" &
    pid_of[$1]=$!
}
# SIGTERMs the named workers together: each must leave and exit 0.
stop_together () { # name...
    local name status
    for name in "$@"; do kill -TERM "${pid_of[$name]}"; done
    for name in "$@"; do
        wait "${pid_of[$name]}"
        status=$?
        unset "pid_of[$name]"
        [ "$status" -eq 0 ] || fail "$name, stopped with ${*}, leaves and exits 0, not $status"
    done
}

start a
wait_for "a starts" grep -q 'on port' "$work/a.log" || exit 1
grep -Eq '^[0-9T:.-]+Z info  node [0-9a-f]{32} \(a\) on port' "$work/a.log" ||
    fail "flags win over the environment, and both over the config file ($(head -1 "$work/a.log"))"
port=$(sed -n -E 's/.* on port ([0-9]+),.*/\1/p' "$work/a.log")
start b "127.0.0.1:$port"
start c "127.0.0.1:$port"
three_alive () { [ "$("$shoal" members --data-dir "$work/a" | grep -c ' alive ')" -eq 3 ]; }
wait_for "three members alive" three_alive || exit 1

mkdir "$work/env"
# Written aside, then renamed: the test never reads a file half written.
command="env | grep '^SHOAL_' > $work/env/.\${SHOAL_JOB}-\$\$ && mv $work/env/.\${SHOAL_JOB}-\$\$ $work/env/\${SHOAL_JOB}-\${SHOAL_INDEX}.\$\$; exec bash $child_sh"
# Right after the joins the voters may still change: a submit may find no
# leader with a quorum for a moment.
wait_for "submit" "$shoal" submit orders --parallelism 8 --stateful --command "$command" \
    --data-dir "$work/a" --timeout 2s || exit 1
# A new stateful job's tasks may start as actives, or as learners that are
# promoted once ready.
all_active () {
    [ "$(cat "$work"/[abc].log | grep -Eo '(started|promoted) orders/[0-9] (as|to) active' |
        cut -d' ' -f2 | sort -u | wc -l)" -eq 8 ]
}
wait_for "every task runs as active" all_active || exit 1

# Each child's environment: its task's variables, with the role, epoch and
# node its worker's log gives, and none of the worker's options.
for index in 0 1 2 3 4 5 6 7; do
    wait_for "orders/$index wrote its environment" compgen -G "$work/env/orders-$index.*" || continue
    file=$(ls "$work/env/orders-$index".* 2>/dev/null | head -1)
    pid=${file##*.}
    started="started orders/$index as ([a-z]+) \(epoch ([0-9.]+), pid $pid\)"
    owner=$(grep -El "$started" "$work"/[abc].log | head -1)
    [ -n "$owner" ] || { fail "orders/$index: pid $pid is in a worker's log"; continue; }
    owner=$(basename "$owner" .log)
    role=$(sed -n -E "s|.*$started.*|\1|p" "$work/$owner.log")
    epoch=$(sed -n -E "s|.*$started.*|\2|p" "$work/$owner.log")
    for line in SHOAL_JOB=orders "SHOAL_TASK=orders/$index" "SHOAL_INDEX=$index" \
        SHOAL_PARALLELISM=8 "SHOAL_ROLE=$role" "SHOAL_EPOCH=$epoch" \
        "SHOAL_NODE=$(id_of "$owner")" SHOAL_STATUS_FD=3 SHOAL_TEST_MARK=passed; do
        grep -qx "$line" "$file" || fail "orders/$index's environment has $line ($(tr '\n' ' ' <"$file"))"
    done
    grep -Eq '^SHOAL_(PROFILE|DATA_DIR|GRACE)=' "$file" && fail "orders/$index's environment has the worker's options"
done

# --- scale-out: learners, promoted without a restart ---------------------

start d "127.0.0.1:$port"
two_promoted () { [ "$(grep -c 'promoted orders/[0-9] to active' "$work/d.log")" -ge 2 ]; }
wait_for "d's learners are promoted" two_promoted || exit 1
for task in $(grep -Eo 'promoted orders/[0-9]' "$work/d.log" | cut -d' ' -f2 | sort -u); do
    learner=$(sed -n -E "s|.*started $task as learner \(epoch [0-9.]+, pid ([0-9]+)\).*|\1|p" "$work/d.log" | head -1)
    promoted=$(sed -n -E "s|.*promoted $task to active \(epoch [0-9.]+, pid ([0-9]+)\).*|\1|p" "$work/d.log" | head -1)
    [ -n "$learner" ] && [ "$learner" = "$promoted" ] || fail "$task: the learner ($learner) is the one promoted ($promoted)"
    grep -qx "SHOAL_ROLE=learner" "$work/env/orders-${task#orders/}.$learner" ||
        fail "$task: the learner's environment says learner"
    # The child's own words, in its worker's log after the task and the
    # stream: lags that fall, then ready, then the promotion.
    said=$(sed -n -E "s|^[^ ]+ info  $task stdout: ($task: .*\(pid $learner\))$|\1|p" "$work/d.log")
    lags=$(echo "$said" | sed -n -E 's/.*restoring, lag ([0-9]+) .*/\1/p')
    [ "$(echo "$lags" | wc -w)" -ge 2 ] || fail "$task: the learner reports its lag ($said)"
    [ "$(echo "$lags" | sort -n -r)" = "$lags" ] || fail "$task: the lag only falls ($lags)"
    echo "$said" | grep -A1 ': ready ' | grep -q 'promoted to active' ||
        fail "$task: promoted after it was ready, in the same process ($said)"
    # The old owner's child was gone before the promotion.
    stopped=$(grep -h "$task stopped: pid" "$work"/[abc].log | head -1 | cut -d' ' -f1)
    promoted_at=$(grep "promoted $task to active" "$work/d.log" | head -1 | cut -d' ' -f1)
    [ -n "$stopped" ] && [[ ! "$stopped" > "$promoted_at" ]] ||
        fail "$task: the old child stopped ($stopped) before the promotion ($promoted_at)"
done
grep -q 'SIGKILL after 2000 ms' "$work"/[abc].log || fail "the --grace flag wins over SHOAL_GRACE"

# --- rescale: the tasks dropped stop ------------------------------------

expect_status 0 "rescale" "$shoal" rescale orders 6 --data-dir "$work/a"
dropped_stop () { [ "$(cat "$work"/[abcd].log | grep -Ec 'orders/[67] stopped: pid')" -ge 2 ]; }
wait_for "the children of orders/6 and orders/7 stop" dropped_stop
for task in orders/6 orders/7; do
    for pid in $(cat "$work"/[abcd].log | sed -n -E "s|.*$task stopped: pid ([0-9]+) .*|\1|p"); do
        alive "$pid" && fail "$task: pid $pid still runs"
    done
done

# The leader's status lists every task; another node's, only its own. Six
# tasks run, on the live workers but the one named.
six_running () { # not-on
    local name
    for name in a b c d; do
        [ -n "${pid_of[$name]:-}" ] || continue
        "$shoal" status --data-dir "$work/$name" --json >"$work/status" 2>/dev/null || continue
        [ "$(grep -Eo '"task": ?"orders/[0-5]"[^}]*"node_name": ?"[^"]*"[^}]*"role": ?"active"[^}]*"state": ?"running"' \
            "$work/status" | grep -Ev "\"node_name\": ?\"($1)\"" | wc -l)" -eq 6 ] && return 0
    done
    return 1
}
# --- SIGTERM: a graceful leave ------------------------------------------

c_children=$(children_of c)
stop_together c
grep -q 'left the cluster' "$work/c.log" || fail "c says it left"
# shellcheck disable=SC2086
all_gone $c_children || fail "c's children stopped before it exited"
wait_for "c's tasks run elsewhere" six_running c


# --- SIGKILL: the children die with their worker ------------------------

# d, whose children were learners promoted in place, once c has left and
# the cluster settled. (A failure and a leave at once can leave no majority
# of the voters: a cluster of three, or of four with d just become a voter,
# waits for its dead member to come back; docs/node.md, "Known limits".)
d_children=$(children_of d)
live=0
for pid in $d_children; do alive "$pid" && live=$((live + 1)); done
[ "$live" -gt 0 ] || fail "some of d's children run before d is killed"
killed_at=$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)
kill -9 "${pid_of[d]}"
wait "${pid_of[d]}" 2>/dev/null
unset 'pid_of[d]'
# shellcheck disable=SC2086
wait_for "d's children die with it" all_gone $d_children

wait_for "d's tasks run elsewhere" six_running "c|d"

# --- remove: every child stops ------------------------------------------

# The leader may have changed meanwhile: ask until one answers.
wait_for "remove" "$shoal" remove orders --data-dir "$work/a" --timeout 2s
# shellcheck disable=SC2046
wait_for "every child stops" all_gone $(children_of a) $(children_of b)

# --- children that exit, jobs without a command -------------------------

# A child that exits unasked is restarted after 1 s, then 2 s; a job with no
# command is reported failed, and logged once per task on each worker
# however often the node starts it again.
wait_for "submit crash" "$shoal" submit crash --parallelism 1 --command 'exit 3' \
    --data-dir "$work/a" --timeout 2s
wait_for "submit nothing" "$shoal" submit nothing --parallelism 1 --data-dir "$work/a" --timeout 2s
wait_for "submit lost" "$shoal" submit lost --parallelism 1 --command 'exec /no/such/program' \
    --data-dir "$work/a" --timeout 2s
wait_for "a second restart of crash/0" grep -q 'restarting crash/0 in 2000 ms (failure 2 of 5)' \
    "$work/a.log" "$work/b.log"
grep -q 'crash/0 exited unasked: pid [0-9]* exited with status 3' "$work/a.log" "$work/b.log" ||
    fail "crash/0's exit status is logged"
grep -q 'restarting crash/0 in 1000 ms (failure 1 of 5)' "$work/a.log" "$work/b.log" ||
    fail "crash/0 is restarted after 1 s first"
wait_for "a job without a command is said" grep -q 'job nothing has no command' \
    "$work/a.log" "$work/b.log"
for name in a b; do
    [ "$(grep -c 'job nothing has no command' "$work/$name.log")" -le 1 ] ||
        fail "$name logs a job without a command once per task"
done
# status shows the crash loop: its restarts in a row and its last exit,
# in the table and in JSON, as the leader has it.
crash_loop () {
    "$shoal" status --data-dir "$work/a" >"$work/status" 2>/dev/null &&
        grep -Eq '^lost/0 +[ab] +[a-z]+ +(crashloop|failed) +[0-9.]+ +- +[1-9][0-9]*  exited with status 127$' \
            "$work/status" &&
        "$shoal" status --data-dir "$work/b" --json >"$work/status" 2>/dev/null &&
        jq -e '.tasks[] | select(.task == "lost/0" and .restarts > 0 and .last_exit.status == 127
            and (.state == "crashloop" or .state == "failed"))' "$work/status" >/dev/null
}
wait_for "status shows lost/0 in a crash loop, with its restarts and last exit" crash_loop
wait_for "the worker says what happens after the fifth exit" grep -q \
    'lost/0 failed 5 times in a row (last: exited with status 127): reporting it failed; the node starts it again after a backoff, a few times, then gives it up and the leader places it on another node' \
    "$work/a.log" "$work/b.log"
# A job without a command fails on every worker: placed nowhere, and status
# says why.
nothing_unplaced () {
    "$shoal" status --data-dir "$work/b" >"$work/status" 2>/dev/null &&
        grep -Eq '^nothing/0 +- +- +unplaced +- +- +0  failed on every eligible node \(last: job nothing has no command\)$' \
            "$work/status"
}
wait_for "status shows nothing/0 placed nowhere, with the last error" nothing_unplaced
wait_for "remove lost" "$shoal" remove lost --data-dir "$work/a" --timeout 2s

# --- a copy that never reported: its lag is unknown ---------------------

# A cluster of its own, e and f with a standby per stateful task, logging
# JSON: the standby's child never reports, so its lag stays unknown.
for name in e f; do
    seed=()
    [ "$name" = f ] && seed=(--join "$(sed -n -E 's/.* on port ([0-9]+).*/127.0.0.1:\1/p' "$work/e.log")")
    SHOAL_PROFILE=loopback "$shoal" worker --data-dir "$work/$name" --bind 127.0.0.1:0 \
        --beacon-port 0 --name "$name" --expect 2 --standbys 1 --log-format=json "${seed[@]}" \
        >"$work/$name.out" 2>"$work/$name.log" &
    pid_of[$name]=$!
    wait_for "$name starts" grep -q 'on port' "$work/$name.log" || exit 1
done
wait_for "submit quiet" "$shoal" submit quiet --parallelism 1 --stateful \
    --command 'exec sleep 600' --data-dir "$work/e" --timeout 2s
quiet_unknown () {
    local name
    for name in e f; do
        "$shoal" status --data-dir "$work/$name" --json >"$work/status" 2>/dev/null || continue
        jq -e '.tasks[] | select(.task == "quiet/0" and .role == "standby" and .lag == null)' \
            "$work/status" >/dev/null || continue
        "$shoal" status --data-dir "$work/$name" |
            grep -Eq '^quiet/0 +[^ ]+ +standby +[a-z]+ +[0-9.]+ +- +0$' && return 0
    done
    return 1
}
wait_for "a standby that never reported shows its lag as - (null in JSON)" quiet_unknown

# --- a child's output: log records of its task --------------------------

# What the children write, on either stream, even bytes that are not UTF-8
# and a line with no newline at its end, is one JSON object a line, each
# with its task and stream, and the worker's own records stay whole.
wait_for "submit talk" "$shoal" submit talk --parallelism 2 \
    --command "echo to-stdout; echo to-stderr >&2; printf 'not utf-8: \\377\\n'; /no/such/program; printf 'no newline'; exec sleep 600" \
    --data-dir "$work/e" --timeout 2s
talk_said () {
    cat "$work/e.log" "$work/f.log" | jq -R -e -s "[split(\"\n\")[] | select(length > 0) | fromjson? |
        select(.task == \"$1\" and .stream == \"$2\" and (.msg | contains(\"$3\")))] | length > 0" \
        >/dev/null
}
wait_for "a child's stderr line is a record of its task" talk_said talk/0 stderr /no/such/program
wait_for "a child's stdout line is a record of its task" talk_said talk/1 stdout to-stdout
talk_said talk/0 stdout 'not utf-8: ' || fail "a line that is not UTF-8 is logged"
stop_together e f
talk_said talk/0 stdout 'no newline' && talk_said talk/1 stdout 'no newline' ||
    fail "a child's last line, with no newline, is logged when it ends"
for name in e f; do
    bad=$(jq -R -c 'try (fromjson | type) catch "not JSON"' "$work/$name.log" | grep -vc '^"object"$')
    [ "$bad" -eq 0 ] || fail "$name: $bad lines of its --log-format json log are not JSON objects"
    [ ! -s "$work/$name.out" ] || fail "$name: the children's output goes to the log, not to standard output"
done

# --- a lost lease: stateless tasks stop, never run as standbys ----------

# m and n, a cluster of two; n is killed, so m has no majority and loses
# its lease. A stateless task has no state to keep warm: its child must be
# stopped (frozen, then killed), never started again as a standby, which a
# command that ignores SHOAL_ROLE would take for a licence to go on working
# while the majority side starts the task elsewhere.
for name in m n; do
    seed=()
    [ "$name" = n ] && seed=(--join "$(sed -n -E 's/.* on port ([0-9]+).*/127.0.0.1:\1/p' "$work/m.log")")
    SHOAL_PROFILE=loopback "$shoal" worker --data-dir "$work/$name" --bind 127.0.0.1:0 \
        --beacon-port 0 --name "$name" --expect 2 --log-format=text "${seed[@]}" \
        >"$work/$name.out" 2>"$work/$name.log" &
    pid_of[$name]=$!
    wait_for "$name starts" grep -q 'on port' "$work/$name.log" || exit 1
done
wait_for "submit web" "$shoal" submit web --parallelism 4 --command 'echo web-up >&2; exec sleep 600' \
    --data-dir "$work/m" --timeout 2s
m_runs_web () { grep -Eq 'started web/[0-9] as active' "$work/m.log"; }
wait_for "m runs some of web" m_runs_web || exit 1
web_task=$(grep -Eo 'started web/[0-9] as active' "$work/m.log" | head -1 | cut -d' ' -f2)
wait_for "a child's stderr line follows its task in text" \
    grep -Eq "^[^ ]+ info  $web_task stderr: web-up$" "$work/m.log"
kill -9 "${pid_of[n]}"
wait "${pid_of[n]}" 2>/dev/null
unset 'pid_of[n]'
wait_for "m loses its lease" grep -q 'lease lost' "$work/m.log"
# m settles: none of its web tasks is active or stopping any more.
web_settled () {
    "$shoal" status --data-dir "$work/m" --json >"$work/status" 2>/dev/null &&
        ! jq -e '.tasks[] | select((.task | startswith("web/")) and
            (.role == "active" or .state == "stopping"))' "$work/status" >/dev/null
}
wait_for "m's web tasks settle without a lease" web_settled
jq -e '.tasks[] | select(.task | startswith("web/"))' "$work/status" >/dev/null &&
    fail "m holds a stateless task without a lease: $(jq -c '.tasks' "$work/status")"
grep -Eq 'web/[0-9] as (standby|learner)' "$work/m.log" && fail "m ran a stateless task as a standby"
# Every child m started for web is gone, or frozen (T), none running.
web_children=$(sed -n -E 's/.* started web\/[0-9] as [a-z]+ \(epoch [^,]*, pid ([0-9]+)\).*/\1/p' "$work/m.log")
[ -n "$web_children" ] || fail "m's log names the children of web"
for pid in $web_children; do
    state=$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1)
    [ -z "$state" ] || [ "$state" = T ] || [ "$state" = Z ] ||
        fail "web's child $pid runs on without a lease (state $state)"
done
kill -9 "${pid_of[m]}"
wait "${pid_of[m]}" 2>/dev/null
unset 'pid_of[m]'

# --- never two actives --------------------------------------------------

# Each active child's time, from its worker's log: from its start as an
# active, or its promotion, to its exit (d's: to its SIGKILL). Two children
# of a task must never overlap.
for name in a b c d; do
    sed -n -E \
        -e "s/^([^ ]+) [a-z]+ +(started|promoted) ([^ ]+) (as|to) active \(epoch [^,]+, pid ([0-9]+)\).*/\3 \1 begin $name \5/p" \
        -e "s/^([^ ]+) [a-z]+ +([^ ]+) (stopped|exited unasked): pid ([0-9]+) .*/\2 \1 end $name \4/p" \
        "$work/$name.log"
done >"$work/activity"
overlaps=$(awk -v killed="$killed_at" '
    { key = $1 " " $4 " " $5 }
    $3 == "begin" && !(key in begin) { begin[key] = $2; task[key] = $1 }
    $3 == "end" && (key in begin) && !(key in end) { end[key] = $2 }
    END {
        for (k in begin) if (!(k in end)) end[k] = (k ~ / d /) ? killed : "~"
        for (i in begin) for (j in begin)
            if (i < j && task[i] == task[j] && begin[i] < end[j] && begin[j] < end[i])
                print i " [" begin[i] ", " end[i] "] and " j " [" begin[j] ", " end[j] "]"
    }' "$work/activity")
[ "$(grep -c begin "$work/activity")" -ge 10 ] || fail "the logs show the actives ($(wc -l <"$work/activity") lines)"
[ -z "$overlaps" ] || fail "two actives at once: $overlaps"

# --- the last two stopped together --------------------------------------

# Neither has anyone left to hand its tasks or its vote to: both leave and
# exit 0. (The leader used to wait for the other's acknowledgement until
# its leave timed out, and exit 1.)
stop_together a b

# --- shoal leave: the worker ends as on SIGTERM -------------------------

# A worker asked to leave through its control endpoint used to leave the
# view and run on, in the election: a leader that left was elected again
# and led while every member listed it as left, and a follower that left
# ran the others' term up. Now its tasks move away, its children stop and
# it exits 0; the others elect once at most (when the leader left) and
# their term stays where it is. A cluster of its own: g, h and i, then j,
# which outranks the leader they elected (it does not depose it). On the
# LAN timings: the terms are counted here, and the loopback's 300 ms lease
# lets a loaded machine's late heartbeat start an election that has
# nothing to do with a leave.
profile=lan
start g
wait_for "g starts" grep -q 'on port' "$work/g.log" || exit 1
g_seed=$(sed -n -E 's/.* on port ([0-9]+).*/127.0.0.1:\1/p' "$work/g.log")
start h "$g_seed"
start i "$g_seed"
alive_on_g () { [ "$("$shoal" members --data-dir "$work/g" | grep -c ' alive ')" -eq "$1" ]; }
wait_for "g, h and i alive" alive_on_g 3 || exit 1
wait_for "submit moving" "$shoal" submit moving --parallelism 3 --command 'exec sleep 600' \
    --data-dir "$work/g" --timeout 2s || exit 1
# The name of the leader and its term, as worker $1 sees them, into
# $leader and $term; fails while it knows none.
read_leader () { # name
    local out id
    out=$("$shoal" members --data-dir "$work/$1" --json 2>/dev/null) || return 1
    id=$(echo "$out" | jq -r .leader)
    term=$(echo "$out" | jq -r .term)
    leader=$(echo "$out" | jq -r --arg id "$id" '.members[] | select(.id == $id) | .name')
    [ -n "$leader" ] && [ "$term" -gt 0 ]
}
# Every task of moving runs as active on a live worker but the one named,
# as worker $1 (the leader, which lists every task) says.
moving_runs () { # name not-on
    "$shoal" status --data-dir "$work/$1" --json >"$work/status" 2>/dev/null || return 1
    [ "$(jq -r --arg gone "$2" '.tasks[] | select((.task | startswith("moving/")) and
        .role == "active" and .state == "running" and .node_name != $gone) | .task' \
        "$work/status" | sort -u | wc -l)" -eq 3 ]
}
# Asks worker $1 to leave: it must exit 0, its children gone, after its
# tasks moved to the others ($2 is one of them, whose view is read).
leave_asked () { # name other
    local name=$1 pid=${pid_of[$1]} status children
    children=$(children_of "$name")
    expect_status 0 "shoal leave $name" "$shoal" leave --data-dir "$work/$name" --timeout 5s
    wait_for "$name exits once asked to leave" exited "$pid" || return 1
    wait "$pid"
    status=$?
    unset "pid_of[$name]"
    [ "$status" -eq 0 ] || fail "$name, asked to leave, exits 0, not $status"
    grep -q 'left the cluster' "$work/$name.log" || fail "$name says it left"
    # shellcheck disable=SC2086
    all_gone $children || fail "$name's children stopped before it exited"
    wait_for "$name's tasks run elsewhere" moving_runs "$2" "$name"
}
# The term worker $1 sees settles: the same leader and term for 3 s, at
# most $2; into $leader and $term.
term_settles () { # name most
    local before_leader before_term
    wait_for "$1 knows a leader" read_leader "$1" || return 1
    for _ in $(seq 20); do
        before_leader=$leader before_term=$term
        sleep 3
        read_leader "$1" && [ "$leader" = "$before_leader" ] && [ "$term" = "$before_term" ] && break
    done
    [ "$term" -le "$2" ] || fail "$1: the term stays at most $2 after the leave, not $term"
}
wait_for "moving runs" moving_runs g "" || exit 1
wait_for "g knows the leader" read_leader g || exit 1
term_settles g $((term + 1))
first_leader=$leader first_term=$term
SHOAL_PRIORITY=10 start j "$g_seed"
wait_for "j alive" alive_on_g 4 || exit 1
follower=
for name in g h i; do [ "$name" != "$first_leader" ] && follower=$name && break; done
other=
for name in g h i; do
    [ "$name" != "$first_leader" ] && [ "$name" != "$follower" ] && other=$name
done
term_settles "$other" $((first_term + 1))
# A follower that outranks the leader, then another: the leader stays, and
# the term as it was, but for one election a late heartbeat of a loaded
# machine may bring.
leave_asked j "$first_leader"
term_settles "$other" $((term + 1))
[ "$leader" = "$first_leader" ] || fail "the leader stays when j leaves ($leader)"
leave_asked "$follower" "$first_leader"
term_settles "$other" $((term + 1))
[ "$leader" = "$first_leader" ] || fail "the leader stays when a follower leaves ($leader)"
# The leader: the last worker leads alone, after one election (two terms
# when two candidates met).
leave_asked "$first_leader" "$other"
term_settles "$other" $((term + 2))
[ "$leader" = "$other" ] || fail "the worker that stays leads once the leader left ($leader)"
stop_together "$other"

echo "worker: $failures failed"
exit $((failures > 0))

# bench/lib/nodes.bash: what the node benchmarks (bench/node_idle.sh,
# bench/node_failover.sh) share: their common options, and a cluster of
# shoal-counter services (examples/counter) on 127.0.0.1, each on a port of
# its own (port 0: the kernel picks), every one joining through the first,
# with the LAN profile and beacons off, to start, watch and stop.
# Source it after `set -u` and `export LC_ALL=C` (EPOCHREALTIME with a '.'),
# with these set:
#   bench       the benchmark's name (node_idle): its messages start with
#               it, and its scratch folder and the counter's link are named
#               for it
#   usage_args  its options and arguments, for its usage line
# and before starting nodes: $nodes, how many, and $settle_limit, the
# seconds a cluster may take to start and settle. It gives:
#   usage                   the usage line on stderr, then exit status 2
#   say MESSAGE...          MESSAGE on stderr, after "$bench: "
#   parse_options ARG...    --quick and --keep into $quick and $keep (0 or
#                           1), any other option to the script's
#                           bench_option ARG... (which sets $option_words to
#                           how many words it took, or fails: usage), and
#                           the words after the options into the array args
#   setup_nodes BUILD       BUILD/shoal-counter (exit status 2 without it),
#                           $work (a scratch folder, removed on exit unless
#                           --keep, when it is named on stderr) and $dir, the
#                           folder of the nodes' files ($work until the
#                           script sets another)
#   start_cluster [ARG...]  $nodes nodes in $dir, n0 with the counter's
#                           arguments ARG and the others joining through
#                           it; $start is the time it began (now_us) and
#                           $deadline the time $settle_limit s later
#   start_node INDEX SEED [ARG...]  one node, n<INDEX>, joining through
#                           SEED ("" for none), with the counter's arguments
#                           ARG; its process in pids[INDEX]
#   wait_settled            until every node sees every other alive and
#                           all follow one leader, its id in $leader
#                           (exit status 1 when not by $deadline)
#   check_alive             exit status 1 unless every node runs
#   check_alive_but KILLED  the same but for node KILLED
#   settled                 "SETTLED SAME LEADER" (see there)
#   node_of ID              the index of the node whose id is ID
#   stop_nodes              stop the nodes (a graceful leave, then SIGKILL)
#   pause SECONDS           sleep, and end at once on a signal
#   now_us                  the wall time in microseconds
#   check_numbers JSON KEY...  exit status 1 unless JSON has "KEY": NUMBER
#                           for each KEY ($number: the pattern of a number)
# Messages of start_cluster and wait_settled start with $run_prefix ("" by
# default), e.g. "run 2: ".
#
# Each node's output goes through a timestamper (a bash loop: no fork per
# line) into $dir/n<i>.log, each line after its time in microseconds, with
# the counter's stdout line-buffered, so a line's time is when it was
# printed, within a millisecond (within 100 ms under AddressSanitizer).

# shellcheck disable=SC2154 # bench, usage_args, nodes, settle_limit: the script's
usage () { echo "usage: bench/$bench.sh $usage_args" >&2; exit 2; }
say () { echo "$bench: $*" >&2; }

quick=0
keep=0
# shellcheck disable=SC2034 # quick and args are the script's
parse_options () { # the script's arguments
    while [ $# -gt 0 ]; do
        case $1 in
        --quick) quick=1; shift ;;
        --keep) keep=1; shift ;;
        --) shift; break ;;
        -*)
            option_words=1
            if declare -F bench_option >/dev/null && bench_option "$@"; then
                shift "$option_words"
            else
                usage
            fi
            ;;
        *) break ;;
        esac
    done
    args=("$@")
}

pids=()       # the shoal-counter processes, by node
stampers=()   # their timestampers
sleeper=""    # the sleep of pause
run_prefix="" # what the messages of start_cluster and wait_settled start with

# Stops the nodes: SIGTERM (a graceful leave), then SIGKILL for any still
# there after 40 s (the leave timeout is 30 s).
stop_nodes () {
    local pid running
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null; done
    for _ in $(seq 400); do
        running=0
        for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && { running=1; break; }; done
        [ "$running" -eq 0 ] && break
        sleep 0.1
    done
    for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null; done
    # A stamper whose node never opened its end of the pipe waits for good.
    for pid in "${stampers[@]}"; do kill -TERM "$pid" 2>/dev/null; done
    wait 2>/dev/null
    pids=()
    stampers=()
}
# shellcheck disable=SC2317 # run by the trap
cleanup () {
    exec 3>&2 2>/dev/null # no word from bash of the nodes it killed
    [ -n "$sleeper" ] && kill "$sleeper"
    stop_nodes
    if [ "$keep" -eq 1 ]; then say "logs kept in $work" 2>&3; else rm -rf "$work"; fi
}

setup_nodes () { # build
    counter=$1/shoal-counter
    if [ ! -x "$counter" ]; then
        say "$counter not found; build first (cmake --build $1 --target shoal-counter)"
        exit 2
    fi
    work=$(mktemp -d "${TMPDIR:-/tmp}/shoal-${bench//_/-}.XXXXXX") || exit 2
    dir=$work
    trap cleanup EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM

    # The nodes run the counter through a link named for the benchmark
    # (idle-node for node_idle), so that their processes are told apart
    # from other shoal-counters on the machine, and a `pkill shoal-counter`
    # of some other test leaves them be.
    ln -s "$(readlink -f "$counter")" "$work/${bench#node_}-node" || exit 2
    counter=$work/${bench#node_}-node

    # Line-buffered output, so a line's stamp is when it was printed (the
    # counter flushes its stdout only every 100 ms by itself). Not under
    # AddressSanitizer, which must come first among the preloaded
    # libraries: there the stamps may be up to 100 ms late.
    linebuf=()
    if command -v stdbuf >/dev/null && ! ldd "$counter" 2>/dev/null | grep -q libasan; then
        linebuf=(stdbuf -oL)
    fi
}

now_us () { echo "${EPOCHREALTIME/./}"; }
# Each line read, with the wall time it came at in microseconds before it.
stamp () {
    local line
    while IFS= read -r line; do printf '%s %s\n' "${EPOCHREALTIME/./}" "$line"; done
}

start_node () { # index seed [args]
    local i=$1 seed=$2
    shift 2
    mkfifo "$dir/n$i.fifo"
    stamp <"$dir/n$i.fifo" >"$dir/n$i.log" &
    stampers+=($!)
    SHOAL_DATA_DIR=$dir/n$i SHOAL_BIND=127.0.0.1:0 SHOAL_JOIN=$seed SHOAL_BEACON_PORT=0 \
        SHOAL_PROFILE=lan SHOAL_NAME=n$i "${linebuf[@]}" "$counter" "$@" >"$dir/n$i.fifo" 2>&1 &
    pids[i]=$!
}

# Fails unless every node (but the one killed) runs; a dead one's last
# lines go to stderr.
check_alive_but () { # index killed ("": none)
    local i status
    for i in "${!pids[@]}"; do
        [ "$i" = "$1" ] && continue
        if ! kill -0 "${pids[i]}" 2>/dev/null; then
            wait "${pids[i]}"
            status=$?
            if [ "$status" -gt 128 ]; then
                say "node n$i was killed by signal $((status - 128)) (not by this script):"
            else
                say "node n$i exited with status $status:"
            fi
            tail -20 "$dir/n$i.log" >&2
            exit 1
        fi
    done
}
check_alive () { check_alive_but ""; }

# n0 first, with args; the others once it printed its port.
start_cluster () { # [args of n0]
    local port i
    start=$(now_us)
    deadline=$((start + settle_limit * 1000000))
    start_node 0 "" "$@"
    port=""
    for _ in $(seq 100); do
        port=$(awk '$2 == "node" { print $6 }' "$dir/n0.log")
        [ -n "$port" ] && break
        check_alive
        sleep 0.1
    done
    [ -n "$port" ] || { say "${run_prefix}n0 printed no port"; exit 1; }
    for i in $(seq 1 $((nodes - 1))); do start_node "$i" "127.0.0.1:$port"; done
}

# "SETTLED SAME LEADER": how many nodes see NODES - 1 others alive and have
# a leader, whether all have the same one, and which.
settled () {
    local files=() i
    for i in $(seq 0 $((nodes - 1))); do files+=("$dir/n$i.log"); done
    awk -v n="$nodes" '
        BEGIN { for (a = 1; a < ARGC; a++) index_of[ARGV[a]] = a }
        $2 == "member" { state[index_of[FILENAME], $4] = $5 }
        $2 == "leader" { leader[index_of[FILENAME]] = $3 }
        END {
            for (key in state)
                if (state[key] == "alive") { split (key, part, SUBSEP); alive[part[1]]++ }
            count = 0; same = 1
            for (f = 1; f <= n; f++) {
                if (alive[f] + 0 == n - 1 && leader[f] != "" && leader[f] != "(none),") count++
                if (leader[f] != leader[1]) same = 0
            }
            sub (/,$/, "", leader[1])
            print count, same, leader[1]
        }' "${files[@]}"
}

# Settled: every node sees every other alive and all follow one leader.
# shellcheck disable=SC2034 # leader is the script's
wait_settled () {
    local count same
    while :; do
        check_alive
        read -r count same leader < <(settled)
        [ "$count" -eq "$nodes" ] && [ "$same" -eq 1 ] && return 0
        if [ "$(now_us)" -gt "$deadline" ]; then
            say "${run_prefix}not settled after ${settle_limit} s: $count of $nodes nodes see all" \
                "alive with a leader (same: $same)"
            exit 1
        fi
        sleep 0.2
    done
}

# From the line "node ID on port ..." each node prints first.
node_of () { # id
    local i
    for i in "${!pids[@]}"; do
        grep -q " node $1 on port" "$dir/n$i.log" && echo "$i"
    done
    return 0
}

# In the background, so that a signal ends the wait at once.
pause () { # seconds
    sleep "$1" &
    sleeper=$!
    wait "$sleeper"
    sleeper=""
}

number='-?[0-9]+(\.[0-9]+)?'
check_numbers () { # json key...
    local json=$1 key
    shift
    for key in "$@"; do
        [[ $json =~ \"$key\":\ $number ]] || { say "no number for $key in the JSON"; exit 1; }
    done
}

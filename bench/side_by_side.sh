#!/usr/bin/env bash
# shoal and Serf side by side, in one run: N `shoal worker` processes and N
# Serf agents (the Debian package `serf`), each process in a network
# namespace of its own on one Linux bridge (bench/lib/netns.bash): shoal's
# at 10.224.1.K, Serf's at 10.224.2.K. Both with their LAN timings (shoal's
# default profile, Serf's `-profile lan`), a cluster key each (shoal keygen,
# serf keygen), joining through their first node (seeds, no beacons or
# mDNS). Every fault hits both at the same moment, so both see the same
# machine and the same network. For each size and repeat, in this order:
#
#   join_s     from the start of all 2N processes until every node sees the
#              N - 1 others alive
#   idle       after a settle (15 s), an idle window (--idle-s, 60 s): CPU
#              as % of one core (utime + stime from /proc/PID/stat over the
#              window's wall time), VmRSS, RssAnon and RssFile at its end
#              (MB of 1,024 kB), and bytes sent and received per node per
#              second (the counters of the bridge's side of each veth),
#              and of those sent, the UDP and the TCP packets' bytes apart
#              (tx_udp, tx_tcp: IP packets, as nftables counts them where
#              they enter the bridge; shoal's UDP is its membership, its
#              TCP the links that carry elections and tasks; Serf's UDP is
#              its probes and gossip, its TCP the push-pull syncs)
#   failed_s   kill -9 of one node that is not shoal's leader (the same
#              index in Serf), until every survivor marks it failed
#              (shoal: `dead`; Serf: EventMemberFailed); the node is then
#              started again and every view made whole (rejoin_s)
#   frozen_s   SIGSTOP of one node that is not shoal's leader (another than
#              the one killed when there is one; the same index in Serf),
#              until every other node marks it failed: no process ends, so
#              no kernel answers for it (no ICMP port unreachable, no TCP
#              reset), as for a host gone or a cable cut; then SIGCONT of
#              both, until every view is whole again (thaw_s)
#   heal_s     the halves (nodes 0 .. N/2-1 and the rest) cut apart by
#              nftables (a drop on the bridge) for --hold-s (30 s),
#              then healed: until every node sees all N - 1 others alive
#              (partition_failed: how many "failed" verdicts the cut
#              caused, to show it was held long enough to matter)
#   lossP_*    P % random loss (nftables `numgen random mod 100 < P drop`
#              on the bridge: every frame of every node) for --loss-s (120 s), P = 5
#              and 20: false_failures (failed verdicts about healthy nodes,
#              summed over observers), members_failed (distinct nodes
#              declared failed by anyone), flaps (failed -> alive again,
#              counted until the views are whole after the loss ends), and
#              recovery_s (from the loss's end until they are)
#
# Times come from what the nodes wrote, not from polling them: shoal's
# event log (`--events`, docs/events.md: `member` lines, their `wall`
# time in ms) and Serf's own log (its `serf: EventMember...` lines, each
# stamped on arrival by a bash loop: within a millisecond). The runner only
# reads those files, every 0.2 s, to know when a phase is over.
#
# Prints one JSON object on a line (per size and system: each metric's
# runs, median and worst over the repeats, worst = the largest; a phase
# that did not end within its bound gives null and counts in `missed`),
# then a Markdown table with the ratios shoal / Serf of the medians.
# Never asserts on a number: exit status 1 only when a process dies or the
# network cannot be made; 2 for bad usage; 77 (skipped) when not root or
# serf, nft, ip or jq is missing.
#
#   bench/side_by_side.sh [--quick] [--nodes N]... [--repeats R] [--idle-s S]
#                         [--hold-s S] [--loss-s S] [--build DIR] [--keep]
#
# Defaults: N = 5 and 10, 3 repeats, build/plain. A repeat takes about 7
# minutes, the whole default run about 40. --quick: N = 3, one repeat, short
# windows (idle 3 s, hold 4 s, loss 5 s each), bounds of 15 s per phase,
# about a minute; ctest runs it and checks the JSON's keys only (and one run
# per repeat, a value or null, for each metric). --keep: the logs are kept
# and their folder named on stderr.
set -u
export LC_ALL=C # EPOCHREALTIME with a '.'

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib/netns.bash
. "$here/lib/netns.bash"

usage () {
    echo "usage: bench/side_by_side.sh [--quick] [--nodes N]... [--repeats R] [--idle-s S]" \
        "[--hold-s S] [--loss-s S] [--build DIR] [--keep]" >&2
    exit 2
}
say () { echo "side_by_side: $*" >&2; }
skip () { echo "skip: $*"; exit 77; }

quick=0 keep=0 sizes=() repeats="" idle_s="" hold_s="" loss_s="" build=""
while [ $# -gt 0 ]; do
    case $1 in
    --quick) quick=1; shift ;;
    --keep) keep=1; shift ;;
    --nodes | --repeats | --idle-s | --hold-s | --loss-s | --build)
        [ $# -ge 2 ] || usage
        case $1 in
        --nodes) sizes+=("$2") ;;
        --repeats) repeats=$2 ;;
        --idle-s) idle_s=$2 ;;
        --hold-s) hold_s=$2 ;;
        --loss-s) loss_s=$2 ;;
        --build) build=$2 ;;
        esac
        shift 2 ;;
    *) usage ;;
    esac
done
if [ "$quick" -eq 1 ]; then
    [ ${#sizes[@]} -gt 0 ] || sizes=(3)
    repeats=${repeats:-1} idle_s=${idle_s:-3} hold_s=${hold_s:-4} loss_s=${loss_s:-5}
    settle_s=1 bound_s=15
else
    [ ${#sizes[@]} -gt 0 ] || sizes=(5 10)
    repeats=${repeats:-3} idle_s=${idle_s:-60} hold_s=${hold_s:-30} loss_s=${loss_s:-120}
    settle_s=15 bound_s=120
fi
build=${build:-build/plain}
for value in "${sizes[@]}" "$repeats" "$idle_s" "$hold_s" "$loss_s"; do
    [[ $value =~ ^[0-9]+$ && $value -ge 1 && $value -le 100000 ]] || usage
done
for value in "${sizes[@]}"; do
    # Two systems of N nodes in 10.224.1.0/24 and 10.224.2.0/24.
    if [ "$value" -lt 2 ] || [ "$value" -gt 200 ]; then say "--nodes $value: 2 to 200"; exit 2; fi
done

[ "$(id -u)" -eq 0 ] || skip "side_by_side needs root (network namespaces, nftables)"
for tool in ip nft jq serf; do
    command -v $tool >/dev/null ||
        skip "side_by_side needs $tool (scripts/setup installs it; Serf is the Debian package serf)"
done
shoal=$build/shoal
[ -x "$shoal" ] || { say "$shoal not found; build first (cmake --build $build --target shoal)"; exit 2; }
shoal=$(readlink -f "$shoal")

work=$(mktemp -d "${TMPDIR:-/tmp}/shoal-side-by-side.XXXXXX") || exit 2
pids=()     # every node process started, by key (s3, f3)
declare -A pid_of
stampers=() # the timestampers of Serf's logs
frozen=()   # the nodes stopped by SIGSTOP, until their SIGCONT
sleeper=""
# shellcheck disable=SC2317 # run by the trap
cleanup () {
    exec 3>&2 2>/dev/null # no word from bash of the processes it killed
    [ -n "$sleeper" ] && kill "$sleeper"
    # SIGKILL ends a stopped process too; the SIGCONT is for one that
    # SIGKILL somehow missed, so that none is left stopped.
    for pid in "${pids[@]}" "${stampers[@]}"; do kill -KILL "$pid"; done
    for pid in "${frozen[@]}"; do kill -CONT "$pid"; done
    net_down
    wait
    if [ "$keep" -eq 1 ]; then say "logs kept in $work" 2>&3; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# In the background, so that a signal ends the wait at once.
pause () {
    sleep "$1" &
    sleeper=$!
    wait "$sleeper"
    sleeper=""
}
now_ms () { echo $((${EPOCHREALTIME/./} / 1000)); }

# The network, once, for the largest size: s<i> and f<i> for i in 0 .. max-1.
left=$(net_clean_leftovers)
[ "$left" -gt 0 ] && say "removed $left namespaces of earlier runs that are gone"
max=0
for value in "${sizes[@]}"; do [ "$value" -gt "$max" ] && max=$value; done
key_of () { [ "$1" = shoal ] && echo s || echo f; } # SYSTEM: the letter of its keys
addr_of () { # KEY (s3, f3)
    case $1 in s*) echo "10.224.1.$((${1#s} + 1))" ;; f*) echo "10.224.2.$((${1#f} + 1))" ;; esac
}
net_up || { say "cannot make the bridge's namespace"; exit 1; }
for ((i = 0; i < max; i++)); do
    for key in "s$i" "f$i"; do
        net_add "$key" "$(addr_of "$key")/16" || { say "cannot wire $(net_ns "$key") to the bridge"; exit 1; }
    done
done

if ! "$shoal" keygen >"$work/shoal.key" 2>/dev/null; then say "shoal keygen failed"; exit 1; fi
chmod 600 "$work/shoal.key"
serf_key=$(serf keygen) || { say "serf keygen failed"; exit 1; }

# Each line read, with the wall time it came at in microseconds before it.
stamp () {
    local line
    while IFS= read -r line; do printf '%s %s\n' "${EPOCHREALTIME/./}" "$line"; done
}

start_shoal () { # INDEX
    local key=s$1 join=()
    [ "$1" -gt 0 ] && join=(--join "$(addr_of s0):7946")
    mkdir -p "$run/$key"
    # ip netns exec execs: $! is the worker itself.
    ip netns exec "$(net_ns "$key")" "$shoal" worker --name "$key" --bind "$(addr_of "$key"):7946" \
        --beacon-port 0 "${join[@]}" --expect "$nodes" --key-file "$work/shoal.key" \
        --data-dir "$run/$key/data" --events "$run/$key/events.jsonl" \
        </dev/null >>"$run/$key/out.log" 2>&1 &
    pid_of[$key]=$!
    pids+=($!)
}

start_serf () { # INDEX
    local key=f$1 join=() fifo
    # A seed that does not answer yet is tried again a second later, as
    # shoal pings its seeds every probe interval (a plain -join would exit).
    [ "$1" -gt 0 ] && join=(-retry-join "$(addr_of f0):7946" -retry-interval 1s)
    mkdir -p "$run/$key"
    fifo=$run/$key/out.$EPOCHREALTIME.fifo
    mkfifo "$fifo"
    stamp <"$fifo" >>"$run/$key/out.log" &
    stampers+=($!)
    ip netns exec "$(net_ns "$key")" serf agent -node "$key" -bind "$(addr_of "$key"):7946" \
        -rpc-addr 127.0.0.1:7373 -profile lan -encrypt "$serf_key" "${join[@]}" -log-level info \
        </dev/null >"$fifo" 2>&1 &
    pid_of[$key]=$!
    pids+=($!)
}

check_alive () { # [INDEX killed on purpose]
    local key status
    for key in "${!pid_of[@]}"; do
        [ -n "${1:-}" ] && [ "${key:1}" = "$1" ] && continue
        kill -0 "${pid_of[$key]}" 2>/dev/null && continue
        wait "${pid_of[$key]}"
        status=$?
        say "node $key (n=$nodes, repeat $repeat) ended with status $status:"
        tail -20 "$run/$key/out.log" >&2
        exit 1
    done
}

# Every change of a member's state as each node saw it, in time order:
# "MS OBSERVER MEMBER STATE", STATE alive, suspect, failed or left. shoal's
# members are their ids (a name may not be known at the first sight);
# Serf's are their names. A node about itself is left out.
transitions () { # SYSTEM
    local i
    if [ "$1" = shoal ]; then
        for ((i = 0; i < nodes; i++)); do
            [ -f "$run/s$i/events.jsonl" ] || continue
            jq -r --arg obs "s$i" 'select(.event == "member")
                | ((.wall[0:19] + "Z" | fromdateiso8601) * 1000 + (.wall[20:23] | tonumber)) as $ms
                | "\($ms) \($obs) \(.member) \(if .state == "dead" then "failed" else .state end)"' \
                "$run/s$i/events.jsonl" 2>/dev/null
        done
    else
        for ((i = 0; i < nodes; i++)); do
            [ -f "$run/f$i/out.log" ] || continue
            awk -v obs="f$i" '{
                for (f = 2; f < NF; f++) if ($f ~ /^EventMember(Join|Failed|Leave):$/) break
                if (f >= NF || $(f + 1) == obs) next
                state = $f == "EventMemberJoin:" ? "alive" : $f == "EventMemberFailed:" ? "failed" : "left"
                printf "%.0f %s %s %s\n", $1 / 1000, obs, $(f + 1), state
            }' "$run/f$i/out.log"
        done
    fi | sort -n -s -k1,1
}

# When every observer (but SKIP) last reached the state asked, as a time in
# ms, if all are in it now; "" when some are not. WHAT is "all" (every other
# node alive: N - 1 members alive) or a member's key (that member failed).
# The time is the latest, over the observers, of the change after SINCE that
# brought each to the state (SINCE itself for one already there before).
converged () { # SYSTEM WHAT SINCE [SKIP]
    transitions "$1" | awk -v what="$2" -v since="$3" -v skip="${4:-}" -v n="$nodes" \
        -v prefix="$(key_of "$1")" '
        { state[$2, $3] = $4; last[$2, $3] = $1; seen[$2] = 1; members[$3] = 1 }
        END {
            latest = since
            for (o = 0; o < n; o++) {
                obs = prefix o
                if (obs == skip) continue
                if (!(obs in seen)) { print ""; exit }
                count = 0; when = since
                for (m in members) {
                    if (what == "all" && state[obs, m] == "alive") {
                        count++
                        if (last[obs, m] > when) when = last[obs, m]
                    }
                    if (what != "all" && m == what && state[obs, m] == "failed") {
                        count = n - 1
                        if (last[obs, m] > when) when = last[obs, m]
                    }
                }
                if (count < n - 1) { print ""; exit }
                if (when > latest) latest = when
            }
            print latest
        }'
}

# Waits until both systems have converged on WHAT (shoal's member SHOAL_WHAT
# and Serf's SERF_WHAT) or BOUND seconds passed; sets shoal_at and serf_at
# (ms, or "" when not reached).
wait_both () { # SHOAL_WHAT SERF_WHAT SINCE BOUND [SKIP-INDEX]
    local limit=$(($(now_ms) + $4 * 1000)) skip=${5:-}
    shoal_at="" serf_at=""
    while :; do
        check_alive "$skip"
        [ -n "$shoal_at" ] || shoal_at=$(converged shoal "$1" "$3" "${skip:+s$skip}")
        [ -n "$serf_at" ] || serf_at=$(converged serf "$2" "$3" "${skip:+f$skip}")
        [ -n "$shoal_at" ] && [ -n "$serf_at" ] && return 0
        [ "$(now_ms)" -gt "$limit" ] && return 1
        sleep 0.2
    done
}

# shoal's id of the node of INDEX, from its running life's event log.
node_id () { jq -r 'select(.event == "start") | .node' "$run/s$1/events.jsonl" | tail -1; } # INDEX

# The index of a node that is not shoal's leader (as s0 last saw it) nor
# AVOID, from the last down to 1; without AVOID when no other one is such a
# node, and the last when none is.
pick_node () { # [AVOID]
    local leader i
    leader=$(jq -r 'select(.event == "leader") | .leader' "$run/s0/events.jsonl" 2>/dev/null | tail -1)
    for ((i = nodes - 1; i >= 1; i--)); do
        [ "$i" = "${1:-}" ] && continue
        [ "$(node_id "$i")" != "$leader" ] && { echo "$i"; return; }
    done
    if [ -n "${1:-}" ]; then pick_node; else echo $((nodes - 1)); fi
}

record () { # SYSTEM METRIC VALUE ("" for null)
    echo "$nodes $repeat $1 $2 ${3:-null}" >>"$work/results"
}
seconds_since () { # AT SINCE: (AT - SINCE) / 1000, or "" when AT is ""
    [ -n "$1" ] && awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (a - b) / 1000 }'
}

# Verdicts in a window: "FAILED MEMBERS FLAPS": failed verdicts in [FROM,
# TO], distinct members failed in it, and failed -> alive changes in [FROM,
# FLAPS_TO].
verdicts () { # SYSTEM FROM TO FLAPS_TO
    transitions "$1" | awk -v from="$2" -v to="$3" -v flaps_to="$4" '
        $1 >= from && $1 <= to && $4 == "failed" { failed++; members[$3] = 1 }
        $1 >= from && $1 <= flaps_to && $4 == "alive" && state[$2, $3] == "failed" { flaps++ }
        { state[$2, $3] = $4 }
        END { for (m in members) count++; print failed + 0, count + 0, flaps + 0 }'
}

cpu_ticks () { # PID: utime + stime (fields 14 and 15), in clock ticks
    local stat
    read -r stat <"/proc/$1/stat" || return 1
    stat=${stat##*) }
    # shellcheck disable=SC2086 # the fields are words
    set -- $stat
    echo $((${12} + ${13}))
}
memory_kb () { awk -v key="$2:" '$1 == key { print $2 }' "/proc/$1/status"; } # PID KEY

# The faults: one nft command on the bridge (bench/lib/netns.bash).
faults () { # WHAT [RULE...]
    local t
    t=$(now_ms)
    net_rules "${@:2}" || { say "nft failed on the bridge"; exit 1; }
    say "n=$nodes repeat $repeat: $1 (set in $(($(now_ms) - t)) ms)"
}

# SIGSTOP of a node that is not shoal's leader, another than KILLED when
# there is one (the same index in Serf), until every other node marks it
# failed (frozen_s); then SIGCONT of both, until every view is whole again
# (thaw_s). A verdict that does not come within the bound gives null, and
# the SIGCONT comes then all the same.
freeze_phase () { # KILLED-INDEX
    local ice ice_id t_stop t_cont
    ice=$(pick_node "$1")
    ice_id=$(node_id "$ice")
    say "n=$nodes repeat $repeat: SIGSTOP of s$ice and f$ice"
    frozen=("${pid_of[s$ice]}" "${pid_of[f$ice]}")
    t_stop=$(now_ms)
    kill -STOP "${frozen[@]}"
    wait_both "$ice_id" "f$ice" "$t_stop" "$bound_s" "$ice"
    record shoal frozen_s "$(seconds_since "$shoal_at" "$t_stop")"
    record serf frozen_s "$(seconds_since "$serf_at" "$t_stop")"
    say "n=$nodes repeat $repeat: SIGCONT of s$ice and f$ice"
    t_cont=$(now_ms)
    kill -CONT "${frozen[@]}"
    frozen=()
    wait_both all all "$t_cont" "$bound_s"
    record shoal thaw_s "$(seconds_since "$shoal_at" "$t_cont")"
    record serf thaw_s "$(seconds_since "$serf_at" "$t_cont")"
}

# One repeat at one size.
run_once () {
    local i key file system t0 after wall failed
    run=$work/n$nodes-r$repeat
    mkdir -p "$run"
    pid_of=()
    faults "no faults"
    say "n=$nodes repeat $repeat: join"
    t0=$(now_ms)
    for ((i = 0; i < nodes; i++)); do start_shoal "$i"; start_serf "$i"; done
    wait_both all all "$t0" "$bound_s"
    record shoal join_s "$(seconds_since "$shoal_at" "$t0")"
    record serf join_s "$(seconds_since "$serf_at" "$t0")"

    # Idle.
    pause "$settle_s"
    check_alive
    say "n=$nodes repeat $repeat: idle ${idle_s} s"
    declare -A ticks0
    net_bytes >"$run/bytes0"
    net_proto_bytes >"$run/proto0"
    wall=${EPOCHREALTIME/./}
    for key in "${!pid_of[@]}"; do ticks0[$key]=$(cpu_ticks "${pid_of[$key]}") || check_alive; done
    pause "$idle_s"
    for key in "${!pid_of[@]}"; do
        after=$(cpu_ticks "${pid_of[$key]}") || check_alive
        echo "$key $((after - ticks0[$key])) $(memory_kb "${pid_of[$key]}" VmRSS)" \
            "$(memory_kb "${pid_of[$key]}" RssAnon) $(memory_kb "${pid_of[$key]}" RssFile)"
    done >"$run/idle"
    wall=$((${EPOCHREALTIME/./} - wall))
    net_bytes >"$run/bytes1"
    net_proto_bytes >"$run/proto1"
    check_alive
    for system in shoal serf; do
        awk -v prefix="$(key_of "$system")" -v n="$nodes" -v hz="$(getconf CLK_TCK)" -v wall="$wall" \
            -v sys="$system" '
            FILENAME ~ /bytes0$/ { tx0[$1] = $2; rx0[$1] = $3; next }
            FILENAME ~ /bytes1$/ { tx1[$1] = $2; rx1[$1] = $3; next }
            FILENAME ~ /proto0$/ { udp0[$1] = $2; tcp0[$1] = $3; next }
            FILENAME ~ /proto1$/ { udp1[$1] = $2; tcp1[$1] = $3; next }
            substr ($1, 1, 1) == prefix && substr ($1, 2) + 0 < n {
                cpu = $2 / hz / (wall / 1e6) * 100
                cpu_sum += cpu; if (cpu > cpu_max) cpu_max = cpu
                rss += $3; anon += $4; file += $5; count++
            }
            END {
                for (o = 0; o < n; o++) {
                    tx += tx1[prefix o] - tx0[prefix o]; rx += rx1[prefix o] - rx0[prefix o]
                    udp += udp1[prefix o] - udp0[prefix o]; tcp += tcp1[prefix o] - tcp0[prefix o]
                }
                s = wall / 1e6
                printf "%s cpu_percent %.3f\n%s cpu_percent_max %.3f\n", sys, cpu_sum / count, sys, cpu_max
                printf "%s rss_mb %.2f\n%s rss_anon_mb %.2f\n%s rss_file_mb %.2f\n", sys, rss / count / 1024, \
                    sys, anon / count / 1024, sys, file / count / 1024
                printf "%s tx_bytes_per_s %.1f\n%s rx_bytes_per_s %.1f\n", sys, tx / n / s, sys, rx / n / s
                printf "%s tx_udp_bytes_per_s %.1f\n%s tx_tcp_bytes_per_s %.1f\n", sys, udp / n / s, sys, tcp / n / s
            }' "$run/bytes0" "$run/bytes1" "$run/proto0" "$run/proto1" "$run/idle"
    done | while read -r system metric value; do record "$system" "$metric" "$value"; done

    # kill -9 of a node that is not shoal's leader (as s0 last saw it).
    local victim victim_id t_kill
    victim=$(pick_node)
    victim_id=$(node_id "$victim")
    say "n=$nodes repeat $repeat: kill -9 of s$victim and f$victim"
    t_kill=$(now_ms)
    # disown: bash would print "Killed" when it reaps them.
    disown "${pid_of[s$victim]}" "${pid_of[f$victim]}"
    kill -KILL "${pid_of[s$victim]}" "${pid_of[f$victim]}"
    wait_both "$victim_id" "f$victim" "$t_kill" "$bound_s" "$victim"
    record shoal failed_s "$(seconds_since "$shoal_at" "$t_kill")"
    record serf failed_s "$(seconds_since "$serf_at" "$t_kill")"
    # Their logs of the first life are set aside: a view is read from the
    # running life's alone.
    for key in "s$victim" "f$victim"; do
        for file in events.jsonl out.log; do
            [ -f "$run/$key/$file" ] && mv "$run/$key/$file" "$run/$key/killed.$file"
        done
    done
    t0=$(now_ms)
    start_shoal "$victim"
    start_serf "$victim"
    wait_both all all "$t0" "$bound_s"
    record shoal rejoin_s "$(seconds_since "$shoal_at" "$t0")"
    record serf rejoin_s "$(seconds_since "$serf_at" "$t0")"

    freeze_phase "$victim"

    # The halves cut apart, then healed.
    local half=$((nodes / 2)) a_shoal="" b_shoal="" a_serf="" b_serf="" t_cut t_heal
    for ((i = 0; i < nodes; i++)); do
        if [ "$i" -lt "$half" ]; then
            a_shoal+="${a_shoal:+, }$(addr_of "s$i")" a_serf+="${a_serf:+, }$(addr_of "f$i")"
        else
            b_shoal+="${b_shoal:+, }$(addr_of "s$i")" b_serf+="${b_serf:+, }$(addr_of "f$i")"
        fi
    done
    t_cut=$(now_ms)
    faults "halves cut for ${hold_s} s" "ip saddr { $a_shoal } ip daddr { $b_shoal } drop" \
        "ip saddr { $b_shoal } ip daddr { $a_shoal } drop" "ip saddr { $a_serf } ip daddr { $b_serf } drop" \
        "ip saddr { $b_serf } ip daddr { $a_serf } drop"
    pause "$hold_s"
    check_alive
    t_heal=$(now_ms)
    faults "healed"
    wait_both all all "$t_heal" "$bound_s"
    record shoal heal_s "$(seconds_since "$shoal_at" "$t_heal")"
    record serf heal_s "$(seconds_since "$serf_at" "$t_heal")"
    read -r failed _ <<<"$(verdicts shoal "$t_cut" "$t_heal" "$t_heal")"
    record shoal partition_failed "$failed"
    read -r failed _ <<<"$(verdicts serf "$t_cut" "$t_heal" "$t_heal")"
    record serf partition_failed "$failed"

    # Random loss on every frame between two nodes.
    local pct t_loss t_end members flaps
    for pct in 5 20; do
        t_loss=$(now_ms)
        faults "${pct} % loss for ${loss_s} s" "ip saddr 10.224.0.0/16 numgen random mod 100 < $pct drop"
        pause "$loss_s"
        check_alive
        t_end=$(now_ms)
        faults "loss ended"
        wait_both all all "$t_end" "$bound_s"
        record shoal "loss${pct}_recovery_s" "$(seconds_since "$shoal_at" "$t_end")"
        record serf "loss${pct}_recovery_s" "$(seconds_since "$serf_at" "$t_end")"
        for system in shoal serf; do
            read -r failed members flaps <<<"$(verdicts "$system" "$t_loss" "$t_end" "$(now_ms)")"
            record "$system" "loss${pct}_false_failures" "$failed"
            record "$system" "loss${pct}_members_failed" "$members"
            record "$system" "loss${pct}_flaps" "$flaps"
        done
    done

    # Stop both: no graceful leave needed, the namespaces are reused.
    for key in "${!pid_of[@]}"; do disown "${pid_of[$key]}"; kill -KILL "${pid_of[$key]}"; done
    for key in "${!pid_of[@]}"; do
        while kill -0 "${pid_of[$key]}" 2>/dev/null; do sleep 0.05; done
    done
    for pid in "${stampers[@]}"; do wait "$pid" 2>/dev/null; done
    pids=() stampers=() pid_of=()
}

metrics="join_s failed_s rejoin_s frozen_s thaw_s heal_s partition_failed loss5_false_failures loss5_members_failed \
loss5_flaps loss5_recovery_s loss20_false_failures loss20_members_failed loss20_flaps \
loss20_recovery_s cpu_percent cpu_percent_max rss_mb rss_anon_mb rss_file_mb tx_bytes_per_s rx_bytes_per_s tx_udp_bytes_per_s tx_tcp_bytes_per_s"
: >"$work/results"
for nodes in "${sizes[@]}"; do
    for ((repeat = 1; repeat <= repeats; repeat++)); do run_once; done
done

# The JSON: per size, per system, per metric: runs, median, worst, missed.
json=$(awk '{ print "{\"nodes\": " $1 ", \"repeat\": " $2 ", \"system\": \"" $3 "\", \"metric\": \"" $4 \
    "\", \"value\": " $5 "}" }' "$work/results" |
    jq -cs --argjson quick "$([ "$quick" -eq 1 ] && echo true || echo false)" --argjson repeats "$repeats" \
        --argjson idle "$idle_s" --argjson hold "$hold_s" --argjson loss "$loss_s" \
        --arg serf "$(serf version | head -1)" --arg metrics "$metrics" --arg cores "$(nproc)" '
    def median: sort | if length == 0 then null
        elif length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
    def stats: map(.value) as $runs | ($runs | map(select(. != null))) as $got
        | {runs: $runs, median: ($got | median), worst: ($got | max), missed: ($runs | map(select(. == null)) | length)};
    ($metrics | split(" ")) as $names
    | {benchmark: "side_by_side", quick: $quick, repeats: $repeats, profile: "lan", cores: ($cores | tonumber),
       serf_version: $serf, idle_s: $idle, hold_s: $hold, loss_s: $loss,
       sizes: (group_by(.nodes) | map(. as $rows | {nodes: $rows[0].nodes}
           + ([ "shoal", "serf" ] | map(. as $s | {($s): ($names | map(. as $m
               | {($m): ($rows | map(select(.system == $s and .metric == $m)) | stats)}) | add)}) | add)
           | . as $o | .ratio = ($names | map(. as $m | {($m): (if $o.shoal[$m].median != null
               and ($o.serf[$m].median // 0) != 0
               then ($o.shoal[$m].median / $o.serf[$m].median * 1000 | round / 1000) else null end)}) | add)))}')
[ -n "$json" ] || { say "no JSON"; exit 1; }
echo "$json"
echo
# The table: median (worst) of each, and the ratio of the medians.
jq -r '.sizes[] | . as $s
    | "| N = \(.nodes) | shoal median (worst) | Serf median (worst) | shoal / Serf |",
      "| --- | --- | --- | --- |",
      (.shoal | keys_unsorted[] as $m
        | "| \($m) | \($s.shoal[$m].median // "-") (\($s.shoal[$m].worst // "-")) | \($s.serf[$m].median // "-") (\($s.serf[$m].worst // "-")) | \($s.ratio[$m] // "-") |"),
      ""' <<<"$json"

if [ "$quick" -eq 1 ]; then
    # The keys only: every metric of both systems at every size, with one
    # run per repeat (a value or null: a phase that records nothing fails
    # here), a median, worst and missed, and a ratio. Never a value.
    jq -e --arg metrics "$metrics" --argjson repeats "$repeats" '($metrics | split(" ")) as $names
        | .benchmark == "side_by_side" and (.sizes | length) > 0 and all(.sizes[];
            . as $s | all($names[]; . as $m | all("shoal", "serf"; $s[.][$m] | has("runs") and has("median")
                and has("worst") and has("missed") and (.runs | length) == $repeats) and ($s.ratio | has($m))))' \
        <<<"$json" >/dev/null ||
        { say "the JSON lacks keys"; exit 1; }
fi
exit 0

#!/usr/bin/env bash
# A fenced job on real workers (docs/jobs.md, "Fenced jobs"): its tasks
# write with their epoch to a store that refuses an older epoch than it has
# seen (examples/fenced: shoal-example-fenced and its ledger), so they move
# as soon as their node is declared dead, not a lease later.
#
# Three workers on the LAN timings run a fenced job of 6 tasks. SIGSTOP one
# that runs actives and does not lead, and its children's shims, not the
# children: the worst case, children that write on with nothing to stop
# them (for an unfenced job, the shims' freeze at the lease end is what
# prevents that; tests/freeze.sh). Then:
#
#   - every task it ran becomes active on another worker, under a newer
#     epoch, and the new owner's writes land in the ledger;
#   - the frozen worker's children, still writing, are refused from then
#     on: each such task's ledger holds refusals of the old epoch;
#   - the ledger's epochs never go back (shoal-example-fenced check);
#   - SIGCONT: the worker ends those children (its lease lost, or told by
#     the leader, whichever it learns first); the cluster settles with each
#     task active once;
#   - every child ran with SHOAL_FENCED=1 (the writer refuses to run
#     without it).
#
# It prints, without asserting on it, how long after the stop the tasks
# moved: a time depends on the machine's load. Waits are bounded against a
# hang.
set -u
shoal=$1 build=$3
fenced=$build/shoal-example-fenced
# shellcheck source=lib/expect.bash
. "$(dirname "$0")/lib/expect.bash"
# shellcheck source=lib/workers.bash
. "$(dirname "$0")/lib/workers.bash"
[ -x "$fenced" ] || { echo "skip: $fenced is not built"; exit 77; }
command -v jq >/dev/null || { echo "skip: no jq (scripts/setup installs it)"; exit 77; }

shims=() children=()
before_cleanup () {
    local pid
    for pid in "${pid_of[@]}" "${shims[@]}"; do kill -CONT "$pid" 2>/dev/null; done
}

ledger=$work/ledger
mkdir "$ledger"
start () { # name [seed]
    FENCED_LEDGER=$ledger FENCED_WRITE_MS=50 SHOAL_PROFILE=lan "$shoal" worker \
        --data-dir "$work/$1" --bind 127.0.0.1:0 --beacon-port 0 --name "$1" --expect 3 \
        --grace 2s ${2:+--join "$2"} >"$work/$1.out" 2>"$work/$1.log" &
    pid_of[$1]=$!
}
start a
wait_for "a starts" has_port a || exit 1
seed=127.0.0.1:$(port_of a)
start b "$seed"
start c "$seed"
three_alive () { [ "$("$shoal" members --data-dir "$work/a" | grep -c ' alive ')" -eq 3 ]; }
wait_for "three members alive" three_alive || exit 1
wait_for "submit fen" "$shoal" submit fen --parallelism 6 --fenced --command "exec $fenced" \
    --data-dir "$work/a" --timeout 2s || exit 1

# The leader's table, as "TASK NODE TERM.VERSION" for each running active.
actives () {
    local name
    for name in a b c; do
        [ -n "${pid_of[$name]:-}" ] || continue
        [ "$(state_of_worker "$name")" = T ] && continue
        "$shoal" status --data-dir "$work/$name" --json --timeout 2s 2>/dev/null |
            jq -r '.tasks[] | select(.role == "active" and .state == "running") |
                   "\(.task) \(.node) \(.epoch[0]).\(.epoch[1])"' && return 0
    done
    return 1
}
state_of_worker () { sed 's/.*) //' "/proc/${pid_of[$1]}/stat" 2>/dev/null | cut -d' ' -f1; }
six_actives () { [ "$(actives | cut -d' ' -f1 | sort -u | wc -l)" -eq 6 ]; }
wait_for "every task active" six_actives || exit 1
# Each task's ledger has a write: every child runs, fenced.
ledger_of () { echo "$ledger/${1/\//-}"; }
all_wrote () { local t; for t in fen/0 fen/1 fen/2 fen/3 fen/4 fen/5; do [ -s "$(ledger_of "$t").log" ] || return 1; done; }
wait_for "every task writes to the ledger" all_wrote || exit 1

leader=$(leader_of a)
victim=
for name in a b c; do
    id=$(id_of "$name")
    [ "$id" != "$leader" ] && actives | grep -q " $id " && victim=$name && break
done
[ -n "$victim" ] || { fail "a follower runs active tasks"; exit 1; }
victim_id=$(id_of "$victim")
mapfile -t before < <(actives | grep " $victim_id ")
# The shims of its children: the parents of the pids its records carry.
for line in "${before[@]}"; do
    task=${line%% *}
    pid=$(awk -v node="${victim_id:0:8}" '$2 == node { p = $3 } END { print p }' "$(ledger_of "$task").log")
    [ -n "$pid" ] || { fail "$task: a record of $victim's child"; exit 1; }
    children+=("$pid")
    shims+=("$(sed 's/.*) //' "/proc/$pid/stat" | cut -d' ' -f2)")
done
echo "freezing $victim and the shims ${shims[*]}, which run: ${before[*]}"
stopped_at=$(date +%s.%N)
kill -STOP "${pid_of[$victim]}" "${shims[@]}"

# Every task it ran is active elsewhere, under a newer epoch, and the new
# owner's writes land.
moved () {
    local line task epoch now
    now=$(actives) || return 1
    for line in "${before[@]}"; do
        read -r task _ epoch <<<"$line"
        grep -q "^$task " <<<"$now" || return 1
        grep -q "^$task $victim_id " <<<"$now" && return 1
        [ "$(grep "^$task " <<<"$now" | cut -d' ' -f3)" != "$epoch" ] || return 1
    done
}
wait_for "the frozen worker's tasks are active elsewhere" moved || exit 1
moved_at=$(date +%s.%N)
new_writes () {
    local line task epoch newest
    for line in "${before[@]}"; do
        read -r task _ epoch <<<"$line"
        newest=$(cut -d' ' -f1 "$(ledger_of "$task").log" | tail -1)
        [ -n "$newest" ] && [ "$newest" != "$epoch" ] || return 1
    done
}
wait_for "the new owners' writes land" new_writes || exit 1
echo "moved $(awk -v a="$moved_at" -v b="$stopped_at" 'BEGIN { printf "%.1f", a - b }') s after the stop (the lease is 5 s)"
for line in "${before[@]}"; do
    read -r task _ epoch <<<"$line"
    newer=$(grep -v "^$epoch " "$(ledger_of "$task").log" | head -1 | cut -d' ' -f1)
    [ -n "$newer" ] || fail "$task: a write under a newer epoch than $epoch"
    # An epoch names (term, version): the new grant's is above the old one.
    [ "$(printf '%s\n%s\n' "$epoch" "$newer" | sort -t. -k1,1n -k2,2n | head -1)" = "$epoch" ] ||
        fail "$task: the new epoch $newer is not above the old $epoch"
done

# Its children write on: the ledger refuses them, under their old epoch.
refused_old () {
    local line task epoch
    for line in "${before[@]}"; do
        read -r task _ epoch <<<"$line"
        grep -q "^$epoch ${victim_id:0:8} " "$(ledger_of "$task").refused" 2>/dev/null || return 1
    done
}
wait_for "the frozen worker's children are refused" refused_old
kill -CONT "${pid_of[$victim]}" "${shims[@]}"
ended () { # the old children are gone (or zombies of a gone shim)
    local pid state
    for pid in "${children[@]}"; do
        state=$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1)
        [ -z "$state" ] || [ "$state" = Z ] || return 1
    done
}
wait_for "the frozen worker's old children end once it runs again" ended
wait_for "every task active once after the thaw" six_actives

"$fenced" check "$ledger" >"$work/check" 2>&1 || fail "the ledger's epochs never go back: $(cat "$work/check")"
cat "$work/check"
refused=$(cat "$ledger"/*.refused 2>/dev/null | wc -l)
echo "the ledger refused $refused writes of the frozen worker's children"
grep -h 'for a fenced job' "$work"/*.log && fail "a child ran without SHOAL_FENCED=1"

echo "fenced: $failures failed"
exit $((failures > 0))

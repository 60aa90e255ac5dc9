#!/usr/bin/env bash
# Random fault schedules for the election: shoal-sim --scenario random over
# seeds 1 .. SCHEDULES, half in quorum mode and half in available mode,
# SCHEDULES runs in all, on every core. Prints one JSON object: how many
# schedules ran, how many broke an invariant (and their seeds and modes, to
# replay), and the time it took. Exit status 1 when one broke.
#
#   bench/election_faults.sh [SCHEDULES [NODES [FAULTS [BUILD]]]]
#
# Defaults: 1000 schedules of 10 faults on 30 nodes, build/plain.
set -u
schedules=${1:-1000}
nodes=${2:-30}
faults=${3:-10}
build=${4:-build/plain}
sim=$build/sim/shoal-sim
if [ ! -x "$sim" ]; then
    echo "election_faults: $sim not found; build first (scripts/test builds build/plain)" >&2
    exit 2
fi
start=$(date +%s%N)
# One line per schedule that broke: "seed mode".
failed=$(seq 1 "$schedules" | xargs -P "$(nproc)" -I{} bash -c '
    seed={}; mode=""; name=quorum
    if [ $((seed % 2)) -eq 0 ]; then mode=--available; name=available; fi
    "$0" --scenario random --nodes "$1" --faults "$2" --seed "$seed" $mode >/dev/null 2>&1 ||
        echo "$seed $name"' "$sim" "$nodes" "$faults")
wall_ms=$((($(date +%s%N) - start) / 1000000))
count=0
list=""
while read -r seed mode; do
    [ -n "$seed" ] || continue
    count=$((count + 1))
    list="$list${list:+, }{\"seed\": $seed, \"mode\": \"$mode\"}"
done <<<"$failed"
printf '{"benchmark": "election_faults", "schedules": %d, "nodes": %d, "faults_each": %d, ' \
    "$schedules" "$nodes" "$faults"
printf '"broken": %d, "failed": [%s], "wall_s": %d.%03d}\n' "$count" "$list" \
    $((wall_ms / 1000)) $((wall_ms % 1000))
[ "$count" -eq 0 ]

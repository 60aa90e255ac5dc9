#!/usr/bin/env bash
# Random fault schedules for the election: shoal-sim --scenario random over
# seeds 1 .. SCHEDULES, half in quorum mode and half in available mode,
# SCHEDULES runs in all, on every core. Prints one JSON object: how many
# schedules ran, how many broke an invariant (and their seeds and modes, to
# replay), and the time it took. Exit status 1 when one broke.
#
#   bench/election_faults.sh [SCHEDULES [NODES [FAULTS [BUILD]]]]
#
# Defaults: 1000 schedules of 10 faults on 30 nodes, build/plain. A schedule
# that runs longer than SHOAL_FAULTS_LIMIT seconds (600) counts as broken:
# the simulator spinning at one virtual instant is a bug too.
# bench/task_faults.sh runs this with the tasks (SHOAL_FAULTS_* below).
set -u
schedules=${1:-1000}
nodes=${2:-30}
faults=${3:-10}
build=${4:-build/plain}
scenario=${SHOAL_FAULTS_SCENARIO:-random}
even=${SHOAL_FAULTS_EVEN:---available}        # the flag of even seeds
even_name=${SHOAL_FAULTS_EVEN_NAME:-available} # and its name in the report
odd_name=${SHOAL_FAULTS_ODD_NAME:-quorum}
extra=${SHOAL_FAULTS_EXTRA:-}                  # more options for every run
benchmark=${SHOAL_FAULTS_BENCHMARK:-election_faults}
limit=${SHOAL_FAULTS_LIMIT:-600} # seconds of wall time a schedule may take: a hang breaks it
sim=$build/sim/shoal-sim
if [ ! -x "$sim" ]; then
    echo "election_faults: $sim not found; build first (scripts/test builds build/plain)" >&2
    exit 2
fi
start=$(date +%s%N)
# One line per schedule that broke: "seed mode".
failed=$(seq 1 "$schedules" | xargs -P "$(nproc)" -I{} bash -c '
    seed={}; mode=""; name=$4
    if [ $((seed % 2)) -eq 0 ]; then mode=$5; name=$6; fi
    # shellcheck disable=SC2086 # the options are words
    timeout "$8" "$0" --scenario "$3" --nodes "$1" --faults "$2" --seed "$seed" $mode $7 \
        >/dev/null 2>&1 || echo "$seed $name"' "$sim" "$nodes" "$faults" "$scenario" "$odd_name" \
    "$even" "$even_name" "$extra" "$limit")
wall_ms=$((($(date +%s%N) - start) / 1000000))
count=0
list=""
while read -r seed mode; do
    [ -n "$seed" ] || continue
    count=$((count + 1))
    list="$list${list:+, }{\"seed\": $seed, \"mode\": \"$mode\"}"
done <<<"$failed"
printf '{"benchmark": "%s", "schedules": %d, "nodes": %d, "faults_each": %d, ' \
    "$benchmark" "$schedules" "$nodes" "$faults"
printf '"broken": %d, "failed": [%s], "wall_s": %d.%03d}\n' "$count" "$list" \
    $((wall_ms / 1000)) $((wall_ms % 1000))
[ "$count" -eq 0 ]

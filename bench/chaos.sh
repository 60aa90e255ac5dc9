#!/usr/bin/env bash
# Issue 21's figures on real processes: each chaos scenario run over several
# seeds (chaos/run, one cluster of NODES `shoal worker` processes in network
# namespaces, LAN profile, each fault held HOLD seconds), then one JSON
# object: per scenario and run, whether every invariant held, the double-
# active time and stale writes (both must be 0), the time from the last heal
# until every task is active exactly once and every node follows one leader
# (converge_ms: the later of tasks_ms and leader_ms), the terms before the
# faults and after the heal, the moves and the longest handoff gap; per
# scenario, the worst of each. Never asserted on a time: exit status 1 only
# when an invariant broke, 2 when the kit cannot run (not root, no build).
#
#   sudo bench/chaos.sh [--hold S] [--seeds "1 2 3"] [--nodes N] [SCENARIO...]
#
# Defaults: hold 30, seeds 1 2 3, 5 nodes, the issue's scenarios: halves,
# bridge, one-way-in, one-way-out, stop-worker, loss-scale-out. Each run
# takes about 1.5 minutes plus its hold; the run directories stay under
# $BENCH_CHAOS_OUT (a temporary folder by default, named on stderr).
# Run it on a quiet machine: a starved node misses its leases, and that is
# what the figures would then show.
set -euo pipefail
cd "$(dirname "$0")/.."
hold=30
seeds="1 2 3"
nodes=5
while [ $# -gt 0 ]; do
    case "$1" in
    --hold) hold=$2; shift 2 ;;
    --seeds) seeds=$2; shift 2 ;;
    --nodes) nodes=$2; shift 2 ;;
    -h | --help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "bench/chaos.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) break ;;
    esac
done
scenarios=("$@")
[ ${#scenarios[@]} -gt 0 ] ||
    scenarios=(halves bridge one-way-in one-way-out stop-worker loss-scale-out)
if [ "$(id -u)" -ne 0 ]; then
    echo "bench/chaos.sh: needs root (network namespaces, nftables)" >&2
    exit 2
fi
out=${BENCH_CHAOS_OUT:-$(mktemp -d /tmp/shoal-bench-chaos.XXXXXX)}
mkdir -p "$out"
echo "bench/chaos.sh: run directories in $out" >&2
broke=0
runs=()
for scenario in "${scenarios[@]}"; do
    for seed in $seeds; do
        dir="$out/$scenario-$seed"
        rm -rf "$dir"
        echo "bench/chaos.sh: $scenario seed $seed" >&2
        rc=0
        chaos/run --scenario "$scenario" --seed "$seed" --hold "$hold" --nodes "$nodes" \
            --out "$dir" >"$dir.log" 2>&1 || rc=$?
        if [ "$rc" -eq 2 ] || [ ! -f "$dir/results.json" ]; then
            echo "bench/chaos.sh: $scenario seed $seed did not run (exit $rc): $dir.log" >&2
            exit 2
        fi
        [ "$rc" -eq 0 ] || broke=1
        runs+=("$(jq -c --arg scenario "$scenario" --argjson seed "$seed" '{
            scenario: $scenario, seed: $seed, ok: .ok,
            broken: [.invariants[] | select(.ok | not) | .name],
            double_active_ms: .figures.double_active_ms, stale_writes: .figures.stale_writes,
            converge_ms: .figures.converge_ms, tasks_ms: .figures.tasks_converged_ms,
            leader_ms: .figures.leader_converged_ms,
            term_before: .figures.term_before_faults, term_after: .figures.term_at_end,
            moves: .figures.moves, max_gap_ms: .figures.max_handoff_gap_ms}' "$dir/results.json")")
    done
done
printf '%s\n' "${runs[@]}" | jq -s --argjson hold "$hold" --argjson nodes "$nodes" '{
    benchmark: "chaos", nodes: $nodes, hold_s: $hold, runs: .,
    worst: (group_by(.scenario) | map({(.[0].scenario): {
        runs: length, broken: (map(select(.ok | not)) | length),
        double_active_ms: (map(.double_active_ms) | max), stale_writes: (map(.stale_writes) | max),
        converge_ms: (map(.converge_ms // 1e9) | max),
        terms_added: (map((.term_after // 0) - (.term_before // 0)) | max)}}) | add)}'
exit "$broke"

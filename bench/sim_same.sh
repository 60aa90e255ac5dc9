#!/usr/bin/env bash
# Proves that a change to the simulator or to the cores left every run the
# same: plays a set of scenarios, sizes and seeds with two shoal-sim
# binaries and compares their JSON reports, all fields but the two that
# measure the machine (wall_s, simulated_s_per_wall_s). Prints one JSON
# object: the cases run, those that differ, and each binary's wall time.
#
#   bench/sim_same.sh BASE [NEW] [--quick]
#
# BASE is a shoal-sim binary or a git revision of this repository (then
# built once in a scratch worktree, in build/sim-same/REV); NEW defaults to
# build/plain/sim/shoal-sim. --quick plays the cases under 500 nodes only.
# Exit status 0 when every report is the same, 1 when one differs.
set -euo pipefail
cd "$(dirname "$0")/.."

usage () { echo "usage: bench/sim_same.sh BASE [NEW] [--quick]" >&2; exit 2; }
quick=0 args=()
for arg in "$@"; do
    case $arg in
    --quick) quick=1 ;;
    -*) usage ;;
    *) args+=("$arg") ;;
    esac
done
[ ${#args[@]} -ge 1 ] && [ ${#args[@]} -le 2 ] || usage
base=${args[0]}
new=${args[1]:-build/plain/sim/shoal-sim}
[ -x "$new" ] || { echo "sim_same: $new is not an executable" >&2; exit 2; }

# A revision: build its shoal-sim alone, once.
if [ ! -x "$base" ]; then
    rev=$(git rev-parse --verify --quiet "$base^{commit}") ||
        { echo "sim_same: $base is neither an executable nor a revision" >&2; exit 2; }
    dir=build/sim-same/$rev
    if [ ! -x "$dir/build/sim/shoal-sim" ]; then
        rm -rf "$dir/src"
        mkdir -p "$dir"
        git archive --format=tar "$rev" | (mkdir -p "$dir/src" && tar -x -C "$dir/src")
        cmake -S "$dir/src" -B "$dir/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$dir/configure.log" 2>&1 ||
            { cat "$dir/configure.log" >&2; exit 2; }
        cmake --build "$dir/build" -j2 --target shoal-sim >"$dir/build.log" 2>&1 ||
            { tail -20 "$dir/build.log" >&2; exit 2; }
    fi
    base=$dir/build/sim/shoal-sim
fi

# Each case: the arguments of one run.
cases=(
    "--scenario crash --nodes 50 --seed 1"
    "--scenario crash --nodes 50 --seed 7 --loss 2%"
    "--scenario join --nodes 50 --seed 2"
    "--scenario steady --nodes 50 --seed 3 --duration 30 --loss 1% --stall 3"
    "--scenario partition --nodes 50 --seed 4 --duration 10"
    "--scenario leader-crash --nodes 9 --seed 1"
    "--scenario random --nodes 9 --seed 5 --faults 6"
    "--scenario rolling-restart --nodes 9 --seed 1 --tasks 24"
    "--scenario crash-owner --nodes 12 --seed 2 --tasks 30"
    "--scenario random-tasks --nodes 9 --seed 3 --faults 5 --tasks 20 --submit"
    "--scenario crash --nodes 500 --seed 1"
    "--scenario join --nodes 500 --seed 1"
    "--scenario steady --nodes 500 --seed 1 --duration 20 --loss 1%"
)
[ "$quick" = 1 ] || cases+=(
    "--scenario crash --nodes 1500 --seed 3"
)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
strip='del(.wall_s, .simulated_s_per_wall_s)'
differ=() base_s=0 new_s=0 ran=0
for c in "${cases[@]}"; do
    # shellcheck disable=SC2086 # a case is its words
    for side in base new; do
        bin=$base
        [ $side = new ] && bin=$new
        start=$(date +%s.%N)
        $bin $c --json >"$work/$side.json" 2>"$work/$side.err" || true
        end=$(date +%s.%N)
        secs=$(echo "$end - $start" | bc)
        if [ $side = base ]; then base_s=$(echo "$base_s + $secs" | bc); else new_s=$(echo "$new_s + $secs" | bc); fi
        # No report at all is a difference, even on both sides.
        jq -S "$strip" "$work/$side.json" >"$work/$side.cmp" 2>/dev/null || echo "no report ($side)" >"$work/$side.cmp"
        cat "$work/$side.err" >>"$work/$side.cmp"
    done
    ran=$((ran + 1))
    if ! cmp -s "$work/base.cmp" "$work/new.cmp"; then
        differ+=("$c")
        diff "$work/base.cmp" "$work/new.cmp" | head -20 >&2
    fi
done
printf '%s\n' "${differ[@]+"${differ[@]}"}" | jq -R -s --argjson ran "$ran" \
    --argjson base_s "$base_s" --argjson new_s "$new_s" \
    '{cases: $ran, differ: (split("\n") | map(select(length > 0))),
      base_wall_s: $base_s, new_wall_s: $new_s}'
[ ${#differ[@]} -eq 0 ]

#!/usr/bin/env bash
# The chaos kit's short suite (chaos/suites/short): the issue's scenarios on
# 5 real `shoal worker` processes, one network namespace each, with fixed
# seeds and short holds. Fails when the checker finds an invariant broken in
# any run (at most one active per task, no stale write, terms that never go
# back, every acknowledged job kept, one leader and one view after the
# heal), when a run does not reach its check, or when a run leaves a
# namespace behind. Needs root and nft (skipped without them), and runs in
# the plain build only: the scenarios take minutes, and the other builds
# would repeat them. The run directories stay in BUILD/chaos-runs.
set -u
shoal=$1 source=$2 build=$3

# A random schedule is the seed's: the same seed, the same schedule (the
# replay depends on it); another seed, another one. No root needed.
schedule () { "$source/chaos/run" --duration 300 --seed "$1" --dry-run; }
first=$(schedule 11) && [ -n "$first" ] || { echo "FAIL: chaos/run --dry-run printed no schedule"; exit 1; }
[ "$first" = "$(schedule 11)" ] || { echo "FAIL: seed 11 gave two schedules"; exit 1; }
[ "$first" != "$(schedule 12)" ] || { echo "FAIL: seeds 11 and 12 gave one schedule"; exit 1; }

[ "$(id -u)" -eq 0 ] || { echo "skip: the chaos kit needs root (network namespaces, nftables)"; exit 77; }
for tool in nft ip jq python3; do
    command -v $tool >/dev/null || { echo "skip: the chaos kit needs $tool (scripts/setup installs it)"; exit 77; }
done
cache=$build/CMakeCache.txt
if grep -Eq '^SHOAL_(SANITIZE|FUZZ):BOOL=ON' "$cache" || ! grep -q '^CMAKE_BUILD_TYPE:STRING=RelWithDebInfo' "$cache"; then
    echo "skip: the chaos suite runs in the plain build only (minutes of real time; once is enough)"
    exit 77
fi
recorder=$build/chaos/shoal-chaos-recorder
[ -x "$recorder" ] || { echo "FAIL: no recorder at $recorder"; exit 1; }

out=$build/chaos-runs/short-$(date +%Y%m%d-%H%M%S)-$$
"$source/chaos/run" --suite short --shoal "$shoal" --recorder "$recorder" --out "$out"
status=$?

failures=0
fail () { echo "FAIL: $*"; failures=$((failures + 1)); }
[ $status -eq 0 ] || fail "the short suite failed (exit status $status); run directories in $out"
runs=0
for run in "$out"/*/; do
    [ -f "$run/run.json" ] || continue
    runs=$((runs + 1))
    [ -f "$run/results.json" ] || fail "$(basename "$run"): no results.json (the run did not reach its check)"
    # A fault that could not be applied would make a run that tests nothing.
    faults=$(jq '.schedule | length' "$run/run.json")
    for op in start end; do
        [ "$(grep -c "\"op\":\"$op\"" "$run/faults.jsonl")" -eq "$faults" ] ||
            fail "$(basename "$run"): not every one of its $faults faults has its $op in faults.jsonl"
    done
    for ns in $(jq -r '.nodes[].ns' "$run/run.json"); do
        ip netns list | grep -qw "$ns" && fail "$(basename "$run"): namespace $ns left behind"
    done
done
expected=$(grep -cv '^\s*\(#\|$\)' "$source/chaos/suites/short")
[ $runs -eq "$expected" ] || fail "$runs run directories, expected $expected"
[ $failures -eq 0 ] && echo "chaos: the short suite passed ($runs runs in $out)"
[ $failures -eq 0 ]

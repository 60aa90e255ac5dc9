#!/usr/bin/env bash
# What membership costs each node as the cluster grows (SWIM with
# Lifeguard, LAN profile, no loss, no faults): plays the steady scenario of
# shoal-sim at each size and reports, per node per second, the messages
# sent and their bytes (encoded, and with the envelope), in two windows
# after the cluster settled (one view everywhere):
#
#   settling  the first --after seconds (default 20): the tail of the joins,
#             whose records are still being piggybacked
#   steady    the --duration seconds after that (default 40): probes, acks
#             and anti-entropy only
#
# The steady window is the difference of two runs of one seed, the second
# --after + --duration long: a run replays its seed, so the first one is
# the second one's beginning. Each measure gets a least-squares fit
# a + b * log10 (N) over the sizes.
#
# --settled starts each run from steady state (shoal-sim --settled: every
# node holds every other, no join record left to send): there is no
# settling window, and the steady one is a single run of --duration
# seconds from the start. This is how the 10,000-node row is measured.
#
#   bench/sim_cost.sh [--sim PATH] [--after S] [--duration S] [--seed S] [--settled] [N...]
#
# Sizes default to 100 1000 10000. From scratch, each run at 10,000 nodes
# takes most of an hour of one core (settling is the cost, see
# docs/sim.md); settled, a few minutes and ~3.5 GB. Run it with nice, and
# alone. Prints one JSON object.
set -euo pipefail
cd "$(dirname "$0")/.."

usage () {
    echo "usage: bench/sim_cost.sh [--sim PATH] [--after S] [--duration S] [--seed S] [--settled] [N...]" >&2
    exit 2
}
sim=build/plain/sim/shoal-sim after=20 duration=40 seed=1 settled=() sizes=()
while [ $# -gt 0 ]; do
    case $1 in
    --sim) sim=${2:?}; shift 2 ;;
    --after) after=${2:?}; shift 2 ;;
    --duration) duration=${2:?}; shift 2 ;;
    --seed) seed=${2:?}; shift 2 ;;
    --settled) settled=(--settled); shift ;;
    -*) usage ;;
    *) sizes+=("$1"); shift ;;
    esac
done
[ ${#sizes[@]} -gt 0 ] || sizes=(100 1000 10000)
[ -x "$sim" ] || { echo "sim_cost: $sim is not an executable (build first)" >&2; exit 2; }

# play N SECONDS: the report of one steady run, which must hold every invariant.
play () {
    local report
    report=$("$sim" --scenario steady --nodes "$1" --seed "$seed" --duration "$2" \
        ${settled[@]+"${settled[@]}"} --json)
    if [ "$(jq -c .violations <<<"$report")" != "[]" ]; then
        echo "sim_cost: $1 nodes: violations $(jq -c .violations <<<"$report")" >&2
        exit 1
    fi
    echo "$report"
}

rows=()
for n in "${sizes[@]}"; do
    if [ ${#settled[@]} -gt 0 ]; then
        rows+=("$(play "$n" "$duration" | jq -c '
            {nodes, start: "settled", ms_to_settle, settling: null,
             steady: {msgs_per_node_per_s, bytes_per_node_per_s, wire_bytes_per_node_per_s,
                      sync_bytes_per_node_per_s},
             wall_s}')")
        continue
    fi
    early=$(play "$n" "$after")
    late=$(play "$n" $((after + duration)))
    # Totals over a window are rate x nodes x seconds; the steady window's
    # are the long run's less the short one's.
    rows+=("$(jq -c -n --argjson e "$early" --argjson l "$late" --argjson a "$after" \
        --argjson d "$duration" '
        def rate(k): (($l[k] * ($a + $d)) - ($e[k] * $a)) / $d;
        if $e.ms_to_settle != $l.ms_to_settle then error("the two runs differ before the window")
        else . end |
        {nodes: $e.nodes, start: "scratch", ms_to_settle: $e.ms_to_settle,
         settling: {msgs_per_node_per_s: $e.msgs_per_node_per_s,
                    bytes_per_node_per_s: $e.bytes_per_node_per_s,
                    wire_bytes_per_node_per_s: $e.wire_bytes_per_node_per_s},
         steady: {msgs_per_node_per_s: rate("msgs_per_node_per_s"),
                  bytes_per_node_per_s: rate("bytes_per_node_per_s"),
                  wire_bytes_per_node_per_s: rate("wire_bytes_per_node_per_s"),
                  sync_bytes_per_node_per_s: rate("sync_bytes_per_node_per_s")},
         wall_s: ($e.wall_s + $l.wall_s)}')")
done

# y = a + b * log10 (N), least squares (b is 0 with one size), over the
# sizes that have the measure (settled runs have no settling window).
printf '%s\n' "${rows[@]}" | jq -s --argjson after "$after" --argjson duration "$duration" \
    --argjson seed "$seed" --arg start "${settled[*]:-scratch}" '
  def fit(path):
    map(select(getpath(path) != null))
    | if length == 0 then null else
    (map(.nodes | log10)) as $x | (map(getpath(path))) as $y | ($x | length) as $n
    | ($x | add / $n) as $mx | ($y | add / $n) as $my
    | ([range(0; $n) | ($x[.] - $mx) * ($x[.] - $mx)] | add) as $sxx
    | ([range(0; $n) | ($x[.] - $mx) * ($y[.] - $my)] | add) as $sxy
    | (if $sxx > 0 then $sxy / $sxx else 0 end) as $b
    | {a: ($my - $b * $mx), b: $b} end;
  {scenario: "steady", profile: "lan", seed: $seed, start: ($start | ltrimstr("--")),
   settling_s: (if $start == "scratch" then $after else null end), steady_s: $duration,
   sizes: .,
   fit_a_plus_b_log10_n: {
     settling: {msgs_per_node_per_s: fit(["settling", "msgs_per_node_per_s"]),
                bytes_per_node_per_s: fit(["settling", "bytes_per_node_per_s"])},
     steady: {msgs_per_node_per_s: fit(["steady", "msgs_per_node_per_s"]),
              bytes_per_node_per_s: fit(["steady", "bytes_per_node_per_s"]),
              wire_bytes_per_node_per_s: fit(["steady", "wire_bytes_per_node_per_s"])}}}'

#!/usr/bin/env bash
# What the Go binding (bindings/go) adds to each task event: a Go benchmark
# (go test -bench, bindings/go/events_bench_test.go) on one node that leads
# itself on loopback, whose queue is filled ROUNDS times with the starts of
# a job of 1,000 tasks and then their stops (the job removed), and drained
# each time
#   go:      as the binding's pump does it: a cgo call to shoal_node_event,
#            the conversion of the C event into a Go Event (its strings
#            copied), and the send on the node's channel to a goroutine that
#            receives it;
#   c:       in a C loop over shoal_node_event (in C, no Go in between);
#   cgo:     a cgo call to shoal_node_event per event, nothing more;
#   convert: the cgo call and the conversion, no channel.
# Only the drains are timed, not the waits for the queue to fill. Prints one
# JSON object: ns per event of each, and go's overhead over c per event.
# Never asserted on a number.
#
#   bench/go_events.sh [ROUNDS [BUILD]]
#
# Defaults: 10 rounds (20,000 events), build/plain. The build is installed
# into BUILD/go/prefix, as tests/go.sh does.
set -eu
export LC_ALL=C
rounds=${1:-10} build=${2:-build/plain}
source=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$build" && pwd)
[[ $rounds =~ ^[0-9]+$ && $rounds -ge 1 ]] || { echo "usage: bench/go_events.sh [ROUNDS [BUILD]]" >&2; exit 2; }
command -v go >/dev/null || { echo "go_events: no go command (scripts/setup installs golang-go)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# As tests/go.sh: one install place, and CGO_CFLAGS naming the library
# (Go's cache keys a cgo package on neither pkg-config's answer nor the
# headers it includes).
prefix=$build/go/prefix
rm -rf "$prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(dirname "$(ls -d "$prefix"/lib*/libshoal.so "$prefix"/lib/*/libshoal.so 2>/dev/null | head -1)")
export PKG_CONFIG_PATH=$libdir/pkgconfig LD_LIBRARY_PATH=$libdir
export GOCACHE=$build/go/cache GOPATH=$build/go/path GOPROXY=off GOFLAGS=-buildvcs=false GOTOOLCHAIN=local
export CGO_CFLAGS="-O2 -g -DSHOAL_GO_BUILD=$(cat "$prefix/include/shoal.h" "$libdir/libshoal.so" | md5sum | cut -c1-16)"

cd "$source/bindings/go"
go test -run '^$' -bench '^BenchmarkEvents(Go|C|Cgo|Convert)$' -benchtime "${rounds}x" -count 1 . >"$work/bench.log" 2>&1 ||
    { cat "$work/bench.log" >&2; exit 1; }
# A line: BenchmarkEventsGo-2  10  123 ns/op  45.6 ns/event  20012 events
figure () { # name unit
    awk -v name="$1" -v unit="$2" '$1 ~ "^Benchmark" name "(-[0-9]+)?$" {
        for (i = 3; i < NF; i++) if ($(i + 1) == unit) v = $i } END { if (v == "") exit 1; print v }' "$work/bench.log"
}
go_ns=$(figure EventsGo ns/event) go_events=$(figure EventsGo events)
c_ns=$(figure EventsC ns/event) c_events=$(figure EventsC events)
cgo_ns=$(figure EventsCgo ns/event) convert_ns=$(figure EventsConvert ns/event)
overhead=$(awk -v g="$go_ns" -v c="$c_ns" 'BEGIN { printf "%.1f", g - c }')
printf '{"benchmark": "go_events", "rounds": %d, "go": {"ns_per_event": %s, "events": %d, ' \
    "$rounds" "$go_ns" "$go_events"
printf '"measures": "cgo call to shoal_node_event + conversion to a Go Event + channel send to a receiving goroutine"}, '
printf '"c": {"ns_per_event": %s, "events": %d, "measures": "shoal_node_event in a C loop"}, ' "$c_ns" "$c_events"
printf '"cgo": {"ns_per_event": %s, "measures": "a cgo call to shoal_node_event alone"}, ' "$cgo_ns"
printf '"convert": {"ns_per_event": %s, "measures": "the cgo call and the conversion to a Go Event, no channel"}, ' "$convert_ns"
printf '"overhead_ns_per_event": %s, "go_version": "%s", "cpus": %d}\n' "$overhead" "$(go env GOVERSION)" "$(nproc)"

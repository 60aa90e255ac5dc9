#!/usr/bin/env bash
# The Go binding (bindings/go) as a Go user builds it: the build installed
# (into BUILD/go/prefix), libshoal found by pkg-config. Runs go vet and the
# package's tests under the race detector (a 3-node cluster in one process,
# a handover, cancelled calls, goroutine leaks), then the Go example
# (examples/go-counter) as tests/example.sh runs the C one: two services, a
# handover to a learner whose lag falls, a graceful leave, and each task's
# log checked for its fencing (epochs never go back, counts go up by one).
# Skips (77) in instrumented and Release builds, and without a Go toolchain.
set -u
source=$2 build=$3
# shellcheck source=lib/expect.bash
. "$(dirname "$0")/lib/expect.bash"

if grep -q '^SHOAL_SANITIZE:BOOL=ON' "$build/CMakeCache.txt" || grep -q '^SHOAL_FUZZ:BOOL=ON' "$build/CMakeCache.txt"; then
    echo "skip: an instrumented build is not for installing (the plain build tests the Go binding)"
    exit 77
fi
if grep -q '^CMAKE_BUILD_TYPE:STRING=Release$' "$build/CMakeCache.txt"; then
    echo "skip: the plain build tests the Go binding (a second run here would add minutes, not coverage of Go)"
    exit 77
fi
command -v go >/dev/null || { echo "skip: no go command (scripts/setup installs golang-go)"; exit 77; }

# The Go caches in the build tree: kept between runs, so only the first
# run compiles the standard library for the race detector. Go's cache keys
# a cgo package on neither pkg-config's answer nor the headers it includes:
# so the install goes to one place in the build tree (a cached package's
# -L stays true), and CGO_CFLAGS names the installed header and library by
# their hash (a package built against another libshoal is not reused).
prefix=$build/go/prefix
rm -rf "$prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log" || { echo "FAIL: install"; exit 1; }
libdir=$(dirname "$(ls -d "$prefix"/lib*/libshoal.so "$prefix"/lib/*/libshoal.so 2>/dev/null | head -1)")
export PKG_CONFIG_PATH=$libdir/pkgconfig LD_LIBRARY_PATH=$libdir
export GOCACHE=$build/go/cache GOPATH=$build/go/path GOPROXY=off GOFLAGS=-buildvcs=false
export GOTOOLCHAIN=local GO111MODULE=on
export CGO_CFLAGS="-O2 -g -DSHOAL_GO_BUILD=$(cat "$prefix/include/shoal.h" "$libdir/libshoal.so" | md5sum | cut -c1-16)"

cd "$source/bindings/go" || exit 1
go vet ./... >"$work/vet.log" 2>&1 || { fail "go vet"; cat "$work/vet.log"; }
start=$SECONDS
go test -race -count=1 -v ./... >"$work/test.log" 2>&1 || { fail "go test -race"; cat "$work/test.log"; }
grep -E '^(--- |ok|FAIL)' "$work/test.log"
echo "go test -race: $((SECONDS - start)) s"

cd "$source/examples/go-counter" || exit 1
go vet ./... >"$work/vet.log" 2>&1 || { fail "go vet of the example"; cat "$work/vet.log"; }
go build -o "$work/go-counter" . || { fail "the example builds"; exit 1; }
counter=$work/go-counter

# Ports no other test takes: this script's own, from its process id, and
# below Linux's ephemeral range (32768 up), where outgoing connections and
# port-0 binds land; above tests/example.sh's.
port_a=$((30000 + ($$ % 1300) * 2))
port_b=$((port_a + 1))
pids=()
trap 'for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null; done; rm -rf "$work"' EXIT

wait_for () { # file pattern what
    local i
    for i in $(seq 600); do
        grep -Eq "$2" "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    fail "$3: no line /$2/ in $1"; tail -20 "$1"; return 1
}

run () { # name port [seed] -- args
    local name=$1 port=$2 seed=$3; shift 3
    SHOAL_DATA_DIR=$work/$name SHOAL_BIND=127.0.0.1:$port SHOAL_JOIN=$seed \
        SHOAL_BEACON_PORT=0 SHOAL_PROFILE=loopback SHOAL_NAME=$name \
        "$counter" --log "$work/log" "$@" >"$work/$name.log" 2>&1 &
    pids+=($!)
}

run a "$port_a" "" --submit counter:4
wait_for "$work/a.log" '^submit counter:4: ok$' "a submits the job" || exit 1
wait_for "$work/a.log" '^start counter/3 as active' "a runs every task" || exit 1
sleep 2 # the logs grow: a learner has records to restore

run b "$port_b" "127.0.0.1:$port_a"
pid_b=${pids[1]}
wait_for "$work/b.log" '^start counter/[0-9] as learner' "b warms a learner up" || exit 1
wait_for "$work/b.log" '^promote counter/[0-9] to active' "b is promoted" || exit 1
task=$(grep -Eo '^promote counter/[0-9]' "$work/b.log" | head -1 | cut -d' ' -f2)
lags=$(sed -n "\|^start $task as learner|,\|^promote $task|p" "$work/b.log" |
    grep -Eo "^$task restoring, lag [0-9]+" | grep -Eo '[0-9]+$')
[ "$(echo "$lags" | wc -l)" -ge 2 ] || fail "$task: at least two lag reports before promotion ($lags)"
grep -q "^stop $task\$" "$work/a.log" || fail "a stops $task for b"
sleep 1 # b writes under its epoch

kill -TERM "$pid_b"
for i in $(seq 300); do kill -0 "$pid_b" 2>/dev/null || break; sleep 0.1; done
wait "$pid_b"; status=$?
[ "$status" -eq 0 ] || fail "b exits 0 after its leave, not $status"
grep -q "^$task stopped at count" "$work/b.log" || fail "b stopped $task before it left"
grep -q '^left the cluster$' "$work/b.log" || fail "b says it left"
wait_for "$work/a.log" "^promote $task to active" "a takes $task back"
sleep 1

pid_a=${pids[0]}
kill -TERM "$pid_a"
for i in $(seq 300); do kill -0 "$pid_a" 2>/dev/null || break; sleep 0.1; done
wait "$pid_a"; status=$?
[ "$status" -eq 0 ] || fail "a exits 0 after its leave, not $status"
grep -q '^bye$' "$work/a.log" || fail "a says bye"

# Each task's log: the epochs never go back and the count goes up by one a
# line (no two actives wrote at once). The task handed over holds three
# epochs: a's, b's, a's again.
for log in "$work"/log/counter.*.log; do
    awk -v f="$log" '
        NR > 1 && ($1 < t || ($1 == t && $2 < v)) { print "FAIL: " f " line " NR ": epoch goes back"; bad = 1 }
        NR > 1 && $3 != c + 1 { print "FAIL: " f " line " NR ": count " $3 " after " c; bad = 1 }
        { t = $1; v = $2; c = $3 }
        END { exit bad }' "$log" || fail "$log is not fenced"
done
epochs=$(awk '{ print $1 "." $2 }' "$work/log/${task/\//.}.log" | uniq | wc -l)
[ "$epochs" -ge 3 ] || fail "$task's log holds $epochs epochs, want a's, b's and a's again"
echo "$task: $(wc -l <"$work/log/${task/\//.}.log") records under $epochs epochs; b's lag reports: $(echo $lags)"

[ "$failures" -eq 0 ] || { echo "--- a"; grep -v restoring "$work/a.log"; echo "--- b"; grep -v restoring "$work/b.log"; }
echo "go: $failures failed"
exit $((failures > 0))

# tests/lib/workers.bash: what the tests of real `shoal worker` processes
# share. Source it after lib/expect.bash, with $shoal set. A script starts
# its workers with start_worker, or its own way, logging to $work/NAME.log
# and recording the pid in pid_of[NAME]; this gives:
#   start_worker NAME FLAG...  a worker on loopback (its own port, no
#                              beacons), data in $work/NAME, named NAME
#   wait_for WHAT COMMAND...   until COMMAND succeeds, 60 s at most, or fail WHAT
#   stop NAME...               SIGTERM each worker: it leaves and must exit 0
#   port_of NAME, id_of NAME   the port and node id the worker's log gives
#   has_port NAME              true once the worker has said its port
#   leader_of NAME [KEY-FILE]  the leader its status names, or nothing
# On exit it kills every worker still running (and calls before_cleanup
# first, when the script defines it) and, after a failure, prints every
# worker's log.
declare -A pid_of

cleanup () {
    local pid log
    declare -F before_cleanup >/dev/null && before_cleanup
    for pid in "${pid_of[@]}"; do kill -9 "$pid" 2>/dev/null; done
    if [ "$failures" -gt 0 ]; then
        for log in "$work"/*.log; do [ -f "$log" ] && { echo "--- $(basename "$log" .log)"; cat "$log"; }; done
    fi
    rm -rf "$work"
}
trap cleanup EXIT

start_worker () { # name flag...
    local name=$1
    shift
    "$shoal" worker --data-dir "$work/$name" --bind 127.0.0.1:0 --beacon-port 0 --name "$name" \
        "$@" >"$work/$name.out" 2>>"$work/$name.log" &
    pid_of[$name]=$!
}

wait_for () { # what command...
    local what=$1 i; shift
    for i in $(seq 300); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
    fail "$what"; return 1
}

stop () { # name...
    local name status
    for name in "$@"; do
        kill -TERM "${pid_of[$name]}"
        wait "${pid_of[$name]}"
        status=$?
        unset "pid_of[$name]"
        [ "$status" -eq 0 ] || fail "$name leaves and exits 0, not $status"
    done
}

port_of () { sed -n -E 's/.* on port ([0-9]+).*/\1/p' "$work/$1.log"; }
id_of () { sed -n -E 's/.* node ([0-9a-f]{32}) .*on port.*/\1/p' "$work/$1.log"; }
has_port () { [ -n "$(port_of "$1")" ]; }
leader_of () { # name [key-file]
    "$shoal" status --json --data-dir "$work/$1" ${2:+--key-file "$2"} 2>/dev/null |
        sed -n -E 's/.*"leader": *"([0-9a-f]{32})".*/\1/p'
}

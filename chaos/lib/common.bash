# chaos/lib/common.bash: what every part of the chaos runner shares: the
# monotonic clock, messages, JSON lines. Sourced by chaos/run.

# CLOCK_MONOTONIC in milliseconds, the clock of the nodes' event logs and of
# the recorder (one clock for every namespace of the host). Bash has none,
# and starting python3 at each reading costs up to a second on a loaded
# machine (a pyenv shim), so one python3 answers every reading on a pipe.
# mono_now sets $mono (no subshell: a coprocess's pipe is not seen there).
mono_start () {
    local py
    py=$(chaos_python) || die "python3 is needed (scripts/setup installs it)"
    coproc MONO_CLOCK { exec "$py" -S -u -c '
import sys, time
for _ in sys.stdin:
    print(int(time.monotonic() * 1000))'; }
    mono_now || die "cannot read the monotonic clock through $py"
}
mono_now () {
    echo >&"${MONO_CLOCK[1]}" && read -r mono <&"${MONO_CLOCK[0]}" && [[ $mono =~ ^[0-9]+$ ]]
}

# The system's python3 first: a shim (pyenv) may take a second to start.
chaos_python () {
    local p
    for p in /usr/bin/python3 /usr/local/bin/python3 "$(command -v python3 2>/dev/null)"; do
        [ -n "$p" ] && [ -x "$p" ] && { echo "$p"; return 0; }
    done
    return 1
}

# Seconds since the run began, to a tenth, and a message with it, on
# standard error and in the run's chaos.log.
since () { awk -v now="$EPOCHREALTIME" -v t="$run_t0" 'BEGIN { printf "%.1f", now - t }'; }
say () {
    local line
    line=$(printf '[%6ss] %s' "$(since)" "$*")
    echo "$line" >&2
    [ -n "${run_dir:-}" ] && [ -d "$run_dir" ] && echo "$line" >>"$run_dir/chaos.log"
    return 0
}
die () { echo "chaos: $*" >&2; exit 2; }

# One JSON line appended to FILE, built by jq from its arguments
# (jq -n ARGS... FILTER), so that every string is quoted right.
json_line () { # FILE jq-args... filter
    local file=$1; shift
    jq -cn "$@" >>"$file"
}

# Waits up to SECONDS for COMMAND to succeed; false after.
wait_until () { # SECONDS COMMAND...
    local until=$((SECONDS + $1)); shift
    until "$@"; do
        [ $SECONDS -lt $until ] || return 1
        sleep 0.5
    done
}

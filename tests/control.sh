#!/usr/bin/env bash
# The control endpoint and what a user meets around it, with real workers
# on loopback:
#
#   - a worker given the control endpoint of a live one is refused, and
#     the live one still answers;
#   - a socket file left by a killed worker does not block its restart;
#   - the clients fail at once, with the right exit status and a reason,
#     where the answer is known: no socket file, nobody listening, a bad
#     endpoint, a key file that is not there, a name over its limit, a
#     keyed node asked without its key or with another;
#   - with no leader, status says so and gives the term the node knows;
#   - each task's shim is named for its task in ps;
#   - a worker warns at start when it has no key, or when its key file is
#     readable by others.
#
# Commands that must fail at once run with --timeout 60s under a 30 s
# `timeout`: one that waited for its answer would fail the test by its
# exit status, never by a measure of time. Other waits are bounded against
# a hang only.
set -u
shoal=$1
# shellcheck source=lib/expect.bash
. "$(dirname "$0")/lib/expect.bash"
# shellcheck source=lib/workers.bash
. "$(dirname "$0")/lib/workers.bash"
[ -r /proc/self/stat ] || { echo "skip: no /proc"; exit 77; }

start () { # name log [flag...]
    local name=$1 log=$2; shift 2
    "$shoal" worker --data-dir "$work/$name" --bind 127.0.0.1:0 --beacon-port 0 \
        --profile loopback --name "$name" --log-format=text "$@" >"$work/$name.out" 2>"$work/$log" &
    pid_of[$name]=$!
}
# The command's exit status must be known at once: 124 from timeout says
# it waited.
at_once () { # status what command...
    local want=$1 what=$2; shift 2
    expect_status "$want" "$what" timeout 30 "$@" --timeout 60s
}

# Both wait for two members before the first election, so that both are
# voters: with one of them killed, the other has no majority.
start a a.log --expect 2
wait_for "a starts" grep -q ' on port ' "$work/a.log" || exit 1
port=$(sed -n -E 's/.* on port ([0-9]+),.*/\1/p' "$work/a.log")
grep -q 'no key-file: any host that reaches this node can join the cluster' "$work/a.log" ||
    fail "a worker without a key says what that leaves open ($(head -3 "$work/a.log"))"
start b b.log --expect 2 --join "127.0.0.1:$port"
two_alive () { [ "$("$shoal" members --data-dir "$work/a" | grep -c ' alive ')" -eq 2 ]; }
wait_for "two members alive" two_alive || exit 1

# --- a live node's endpoint is never taken --------------------------------

expect_status 1 "a second worker on a's control endpoint" timeout 30 "$shoal" worker \
    --data-dir "$work/second" --control "ipc://$work/a/control" --bind 127.0.0.1:0 \
    --beacon-port 0 --profile loopback
grep -q "ipc://$work/a/control" "$work/err" || fail "the refusal names the endpoint ($(cat "$work/err"))"
grep -q 'a live node answers there' "$work/err" || fail "the refusal says a live node answers there ($(cat "$work/err"))"
expect_status 0 "a still answers" timeout 30 "$shoal" members --data-dir "$work/a" --timeout 60s

# --- the shim is named for its task ----------------------------------------

wait_for "submit" "$shoal" submit naps --parallelism 2 --command 'exec sleep 600' \
    --data-dir "$work/a" --timeout 2s || exit 1
command_pid () { sed -n -E 's/.* started naps\/0 as [a-z]+ \(epoch [^,]*, pid ([0-9]+)\).*/\1/p' \
    "$work/a.log" "$work/b.log" | tail -1; }
has_started () { [ -n "$(command_pid)" ]; }
wait_for "naps/0 starts" has_started
pid=$(command_pid)
shim=$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f2)
if [ -n "$shim" ]; then
    [ "$(cat "/proc/$shim/comm")" = "shim naps/0" ] || fail "the shim's name is 'shim naps/0', not '$(cat "/proc/$shim/comm")'"
    cmdline=$(tr '\0' ' ' <"/proc/$shim/cmdline")
    case $cmdline in
    "shoal-shim naps/0 "*) ;;
    *) fail "the shim shows in ps as 'shoal-shim naps/0', not '$cmdline'" ;;
    esac
else
    fail "naps/0's command ($pid) has a shim"
fi

# --- no leader: the term the node knows -------------------------------------

kill -9 "${pid_of[b]}"
wait "${pid_of[b]}" 2>/dev/null
unset 'pid_of[b]'
# Of two voters, one is left: no majority, no leader (for good: it cannot
# change the voter set without one), and a term above 0.
no_leader () {
    "$shoal" status --data-dir "$work/a" --local >"$work/status" 2>/dev/null &&
        grep -Eq '^no leader, term [1-9][0-9]*, assignment version [0-9]+$' "$work/status"
}
wait_for "status says no leader, with the term ($(head -1 "$work/status" 2>/dev/null))" no_leader
"$shoal" members --data-dir "$work/a" --json >"$work/members" 2>/dev/null
grep -Eq '"leader": ?"", ?"term": ?[1-9]' "$work/members" ||
    fail "members --json gives no leader and the term ($(cat "$work/members"))"

# --- a killed worker's socket file -------------------------------------------

kill -9 "${pid_of[a]}"
wait "${pid_of[a]}" 2>/dev/null
unset 'pid_of[a]'
[ -S "$work/a/control" ] || fail "a killed worker leaves its socket file (the case tested here)"
at_once 1 "a killed node's endpoint" "$shoal" members --data-dir "$work/a"
grep -q 'nobody listens there' "$work/err" || fail "a killed node's endpoint: says nobody listens ($(cat "$work/err"))"
start a a2.log
wait_for "a starts again over the stale socket file" grep -q ' on port ' "$work/a2.log" || exit 1
expect_status 0 "a answers after its restart" timeout 30 "$shoal" members --data-dir "$work/a" --timeout 60s

# A script starts a worker in the background and asks it at once (as the
# README's own example does): the client gives a starting node its moment
# (SHOAL_CONTROL_START_MS) rather than say that no node is there.
# The client is started first here, so that it surely asks before the
# node has its endpoint.
timeout 30 "$shoal" members --data-dir "$work/s" --timeout 60s >"$work/early.out" 2>"$work/early.err" &
early=$!
start s s.log --expect 1
wait "$early" || fail "a worker asked as it starts answers, exit $? ($(cat "$work/early.err"))"

# --- the clients' failures known at once --------------------------------------

at_once 1 "no node there" "$shoal" members --data-dir "$work/nowhere"
grep -q "no node at ipc://$work/nowhere/control" "$work/err" || fail "no node there: names the endpoint ($(cat "$work/err"))"
grep -q "data directory is $work/nowhere" "$work/err" || fail "no node there: names the data directory ($(cat "$work/err"))"
at_once 2 "a bad endpoint" "$shoal" members --control http://x
grep -q 'ipc://PATH or tcp://HOST:PORT' "$work/err" || fail "a bad endpoint: names the forms ($(cat "$work/err"))"
at_once 2 "a key file that is not there" "$shoal" members --data-dir "$work/a" --key-file "$work/no.key"
grep -q "$work/no.key" "$work/err" || fail "a missing key file is named ($(cat "$work/err"))"
long=$(printf '%65s' '' | tr ' ' x)
at_once 2 "a job name over 64 bytes" "$shoal" remove "$long" --data-dir "$work/a"
grep -q '64 bytes' "$work/err" || fail "a long name: says the limit ($(cat "$work/err"))"
grep -q 'is the node running' "$work/err" && fail "a long name: no hint about the node ($(cat "$work/err"))"
at_once 2 "a command over its limit" "$shoal" submit big --parallelism 1 \
    --command "$(printf '%5000s' '' | tr ' ' y)" --data-dir "$work/a"
grep -q '4096' "$work/err" || fail "a long command: says the limit ($(cat "$work/err"))"
# Nothing listens at port 1 of loopback: the connection is refused.
at_once 1 "a tcp port where nobody listens" "$shoal" members --control tcp://127.0.0.1:1
grep -q 'no node at tcp://127.0.0.1:1' "$work/err" || fail "a refused port: says so ($(cat "$work/err"))"

# --- a key file others may read ---------------------------------------------

"$shoal" keygen --out "$work/open.key" || fail "keygen"
chmod 644 "$work/open.key"
start k k.log --key-file "$work/open.key"
wait_for "k starts" grep -q ' on port ' "$work/k.log"
grep -q "key-file $work/open.key has mode 0644" "$work/k.log" || fail "a key file others may read is named, with its mode ($(head -3 "$work/k.log"))"
grep -q 'chmod 600' "$work/k.log" || fail "a key file others may read: says chmod 600"
grep -q 'no key-file' "$work/k.log" && fail "a worker with a key does not say it has none"

# A keyed worker asked without its key, or with another, says so at once.
at_once 1 "members without the key" "$shoal" members --data-dir "$work/k"
grep -q 'key-file' "$work/err" || fail "members without the key: says to give --key-file ($(cat "$work/err"))"
"$shoal" keygen --out "$work/other.key" || fail "keygen"
at_once 1 "members with another key" "$shoal" members --data-dir "$work/k" --key-file "$work/other.key"
grep -q 'is the key right' "$work/err" || fail "members with another key: says so ($(cat "$work/err"))"
expect_status 0 "members with the key" timeout 30 "$shoal" members --data-dir "$work/k" \
    --key-file "$work/open.key" --timeout 60s

echo "control: $failures failed"
exit $((failures > 0))

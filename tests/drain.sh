#!/usr/bin/env bash
# `shoal drain`, `cordon` and `uncordon` with real workers on loopback.
# Workers a, b and c run a stateful job of 6 whose child, unless it starts
# as the active, restores its state (says lag 3, 2, 1, then ready) before
# it may be promoted, and writes one line per start: TASK ROLE. Then:
#
#   - `shoal drain b --leave`, asked of a (which sends it on to b): it
#     prints progress, exits 0 once b holds nothing, and b leaves and
#     exits 0;
#   - no child started as active during the drain: every task b ran was
#     warmed up elsewhere first, and promoted (no cold start);
#   - the leader's move lines for b's tasks say `drain`;
#   - `shoal members` shows a cordon (of c, asked of a), and uncordon ends
#     it; a rescale up places nothing on the cordoned node;
#   - a drain naming no member, or given --leave with --no-wait, is
#     refused with the reason;
#   - a drain of the leader, with d started to take its tasks: it exits 0
#     once the leader holds nothing and no move it made is halfway, the
#     leader exits 0, no child starts cold, and c and d elect a leader
#     that finds every task active.
#
# Waits are bounded against a hang only.
set -u
shoal=$1
# shellcheck source=lib/expect.bash
. "$(dirname "$0")/lib/expect.bash"
# shellcheck source=lib/workers.bash
. "$(dirname "$0")/lib/workers.bash"
command -v python3 >/dev/null || { echo "skip: no python3 to read the JSON lines"; exit 77; }

events=$work/a.jsonl
starts=$work/starts
: >"$starts"
start () { # name flag...
    local name=$1
    shift
    start_worker "$name" --profile loopback --capacity 4 --acceptable-lag 0 "$@"
    wait_for "$name starts" grep -q ' on port ' "$work/$name.log"
}
# The child: one line per start, then warm up unless it starts active.
child='echo "$SHOAL_TASK $SHOAL_ROLE" >>'"$starts"'
if [ "$SHOAL_ROLE" != active ]; then
  for lag in 3 2 1; do echo "lag $lag" >&3; sleep 0.3; done
fi
echo ready >&3
exec sleep 600'
active_starts () { grep -c ' active$' "$starts"; }
# drain_leaves WHO ASKED ARG...: `shoal drain ARG... --leave`, asked of
# ASKED, exits 0; WHO then exits 0, and no child started as the active
# meanwhile (each of WHO's tasks warmed up elsewhere first).
drain_leaves () {
    local who=$1 asked=$2 before status
    shift 2
    before=$(active_starts)
    "$shoal" drain "$@" --leave --data-dir "$work/$asked" \
        >"$work/drain-$who.out" 2>"$work/drain-$who.err"
    status=$?
    cat "$work/drain-$who.out" "$work/drain-$who.err"
    [ "$status" -eq 0 ] || fail "the drain of $who exits 0, not $status"
    wait "${pid_of[$who]}"
    status=$?
    unset "pid_of[$who]"
    [ "$status" -eq 0 ] || fail "$who leaves and exits 0, not $status"
    [ "$(active_starts)" -eq "$before" ] ||
        fail "no task started cold in the drain of $who: $before before, $(active_starts) after"
}
running () { # name count: the worker runs at least count children
    [ "$(grep -c ' started s/' "$work/$1.log")" -ge "$2" ]
}

start a --expect 1 --events "$events" || exit 1
wait_for "a leads" grep -q '"leads":true' "$events" || exit 1
port=$(port_of a)
start b --join "127.0.0.1:$port" --events "$work/b.jsonl" || exit 1
start c --join "127.0.0.1:$port" || exit 1
wait_for "three members" sh -c "[ \$('$shoal' members --data-dir '$work/a' | grep -c ' alive ') -eq 3 ]"
expect_status 0 "submit" "$shoal" submit s --parallelism 6 --stateful --command "$child" \
    --data-dir "$work/a"
wait_for "six actives started" sh -c "[ \$(grep -c ' active\$' '$starts') -ge 6 ]"
b_holds () { "$shoal" status --data-dir "$work/a" --json | grep -q "$(id_of b)"; }
wait_for "b holds tasks" b_holds
wait_for "b runs a task" running b 1
sleep 1

expect_status 2 "drain with --leave and --no-wait" "$shoal" drain --leave --no-wait \
    --data-dir "$work/b"
expect_status 1 "drain of no member" "$shoal" drain nosuch --data-dir "$work/b"
grep -q "no live member has that name" "$work/err" ||
    fail "the refusal names the reason: $(cat "$work/err")"

# Asked of a: the drain goes on to b, and b, drained, leaves.
drain_leaves b a b
grep -q "b is drained" "$work/drain-b.out" || fail "drain says b is drained"
grep -q "holds .* task" "$work/drain-b.out" || fail "drain prints its progress"
grep -q '"reason":"drain"' "$events" || fail "the leader's move lines say drain"
[ "$(grep -c '"event":"cordon"' "$work/b.jsonl")" -eq 1 ] &&
    grep -q '"event":"cordon",.*"state":"draining"' "$work/b.jsonl" ||
    fail "b's event log has one cordon line, draining: $(grep cordon "$work/b.jsonl")"
grep '"reason":"drain"' "$events" | grep -q '"step":"revoke"' || fail "a revoke for drain"

# Cordon: shown by members; a rescale up places nothing on c.
expect_status 0 "cordon c, asked of a" "$shoal" cordon c --data-dir "$work/a"
cordoned () { "$shoal" members --json --data-dir "$work/a" | grep -q '"cordon": *"cordoned"'; }
wait_for "a sees c cordoned" cordoned
# The tasks c ever started. A lease lost under load (the loopback
# profile's is 200 ms) restarts c's own tasks as standbys: those are no
# placement, so what counts is a task c never held.
c_tasks () { grep -o ' started s/[0-9]*' "$work/c.log" | sort -u; }
c_held=$(c_tasks)
c_new () { [ -n "$(comm -13 <(echo "$c_held") <(c_tasks))" ]; }
expect_status 0 "rescale to 9" "$shoal" rescale s 9 --data-dir "$work/a"
wait_for "nine actives" sh -c "[ \$('$shoal' status --data-dir '$work/a' | grep -c ' active ') -ge 9 ]"
sleep 1
c_new && fail "the cordoned c started no task it did not hold: $(c_tasks | tr '\n' ' ')"
expect_status 0 "uncordon c" "$shoal" uncordon c --data-dir "$work/c"
open_again () { ! "$shoal" members --json --data-dir "$work/a" | grep -q '"cordon": *"cordoned"'; }
wait_for "a sees c open again" open_again
wait_for "c takes tasks again" c_new

# The leader drained: its tasks go warm to c and d, then it leaves.
expect_status 0 "rescale to 4" "$shoal" rescale s 4 --data-dir "$work/a"
start d --join "127.0.0.1:$port" || exit 1
wait_for "d takes tasks" running d 1
sleep 1
cold=$(active_starts)
drain_leaves a a --wait 60s
four_active () { [ "$("$shoal" status --data-dir "$work/c" | grep -c ' active ')" -eq 4 ]; }
wait_for "a new leader finds the 4 tasks active" four_active
[ "$(active_starts)" -eq "$cold" ] || fail "no task started cold after the leader left"

stop c d
echo "drain: $failures failed"
exit $((failures > 0))

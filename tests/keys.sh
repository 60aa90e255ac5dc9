#!/usr/bin/env bash
# Live key rotation (shoal keys), on three workers that run a job, while
# traffic flows (the cluster's own gossip, statuses and assignments, and
# a client asking the status all along):
#
#   - install B, use B (asked of a node that relays them to the leader),
#     remove A (asked of the leader): each exits 0 and says "3 of 3 live
#     members applied it"; list then shows B alone, held by 3 of 3 and
#     primary on all three;
#   - the cluster keeps its one leader, no node refuses another's message
#     for its key, every task stays active and running, no task starts
#     again, the assignment version barely moves, and the status client
#     never failed;
#   - refused, with the reason, each changing nothing: text that is not a
#     key, an unknown key id, use of a key a live member lacks (a fourth
#     worker that joined with A only: named), remove of the primary,
#     remove of the last key; a client with A only is refused at the end;
#   - a worker restarted after the rotation, same data directory, still
#     given --key-file A, rejoins with the keyring it kept (and says so);
#   - a kept keyring that is damaged stops the worker at start, saying
#     what to do.
#
# Waits are bounded against a hang only.
set -u
shoal=$1
# shellcheck source=lib/expect.bash
. "$(dirname "$0")/lib/expect.bash"
# shellcheck source=lib/workers.bash
. "$(dirname "$0")/lib/workers.bash"

before_cleanup () { [ -n "${watcher:-}" ] && kill "$watcher" 2>/dev/null; }

start () { # name key-file [options...]
    local name=$1 key=$2
    shift 2
    start_worker "$name" --profile loopback --key-file "$key" --log-format=text "$@"
}
keys () { "$shoal" keys "$@" --data-dir "$work/${ask:-w1}" --timeout 20s; }

"$shoal" keygen --out "$work/a.key" && "$shoal" keygen --out "$work/b.key" &&
    "$shoal" keygen --out "$work/c.key" || { fail "keygen"; exit 1; }
chmod 600 "$work"/*.key
A=$work/a.key B=$work/b.key

start w1 "$A" --labels pool=main
wait_for "w1 starts" has_port w1 || exit 1
seed=127.0.0.1:$(port_of w1)
start w2 "$A" --labels pool=main --join "$seed"
start w3 "$A" --labels pool=main --join "$seed"
alive_at () { # node key-file count: the node's view shows count members alive
    [ "$("$shoal" members --data-dir "$work/$1" --key-file "$2" | grep -c ' alive ')" -eq "$3" ]
}
wait_for "three members alive" alive_at w1 "$A" 3 || exit 1
wait_for "submit" "$shoal" submit work --parallelism 6 --require pool=main \
    --command 'exec sleep 600' --data-dir "$work/w1" --key-file "$A" --timeout 2s || exit 1
running () { # key-file: the tasks the leader's table shows active and running
    "$shoal" status --data-dir "$work/w2" --key-file "$1" 2>/dev/null | grep -c ' active  *running '
}
six_running () { [ "$(running "$A")" -eq 6 ]; }
wait_for "six tasks run" six_running || exit 1
status_line () { "$shoal" status --data-dir "$work/w1" --key-file "$1" 2>/dev/null | head -1; }
starts () { cat "$work"/w[123].log | grep -Ec 'started work/[0-9]'; }
# The baseline is taken once the cluster has settled: the same leader,
# term, version and task starts 2 s apart (a slow build may still be
# electing or placing when the tasks first run).
settled () {
    local then
    then="$(status_line "$A") $(starts)"
    sleep 2
    [ "$(status_line "$A") $(starts)" = "$then" ] && six_running
}
wait_for "the cluster settles" settled || exit 1
before=$(status_line "$A")
started=$(starts)
leader=$(leader_of w1 "$A")
term=$(sed -n -E 's/.*term ([0-9]+),.*/\1/p' <<<"$before")
version=$(sed -n -E 's/.*assignment version ([0-9]+).*/\1/p' <<<"$before")
[ -n "$leader" ] && [ -n "$term" ] && [ -n "$version" ] || fail "the status names a leader, term and version ($before)"

# Some steps are asked of the leader, the others of a node that relays
# them to the leader.
for n in w1 w2 w3; do
    if [ "$(id_of "$n")" = "$leader" ]; then at_leader=$n; else follower=$n; fi
done
[ -n "${at_leader:-}" ] && [ -n "${follower:-}" ] || { fail "the leader is one of w1, w2, w3"; exit 1; }

# Traffic from a client too: the status, asked all along with whichever
# key works; a failure is written down.
(
    while :; do
        "$shoal" status --data-dir "$work/w3" --key-file "$A" --timeout 5s >/dev/null 2>&1 ||
            "$shoal" status --data-dir "$work/w3" --key-file "$B" --timeout 5s >/dev/null 2>&1 ||
            echo "status failed at $(date +%T.%N)" >>"$work/watch.failures"
        sleep 0.1
    done
) &
watcher=$!

# --- list, and input that is refused ------------------------------------

expect_status 0 "keys list" keys list --key-file "$A"
a_id=$(awk 'NR == 3 { print $1 }' "$work/out")
grep -q 'list: 3 of 3 live members answered' "$work/out" || fail "list says 3 of 3 answered ($(cat "$work/out"))"
grep -Eq "^$a_id +3 of 3 +w[123],w[123],w[123]\$" "$work/out" || fail "list: A held by 3 of 3, primary on all ($(cat "$work/out"))"

expect_status 2 "install of text that is no key" keys install not-a-key-at-all --key-file "$A"
grep -q 'not a key (the text shoal keygen prints)' "$work/err" || fail "no key: says so ($(cat "$work/err"))"
expect_status 2 "a key file that holds no key" keys install --new-key-file "$work/w1.out" --key-file "$A"
grep -q 'not a key' "$work/err" || fail "a file with no key: says so ($(cat "$work/err"))"
expect_status 1 "use of an unknown key id" keys use deadbeef --key-file "$A"
grep -q 'unknown key id deadbeef: no live member holds it' "$work/err" ||
    fail "unknown key id: says so ($(cat "$work/err"))"
expect_status 1 "remove of the primary" keys remove "$a_id" --key-file "$A"
grep -Eq "key $a_id is the primary of: w[123], w[123], w[123] \(use another key first\)" "$work/err" ||
    fail "remove of the primary: names the nodes ($(cat "$work/err"))"

# --- install B ----------------------------------------------------------

ask=$follower
expect_status 0 "install B (asked of a node that relays it)" keys install --new-key-file "$B" --key-file "$A"
grep -q 'install: 3 of 3 live members applied it' "$work/out" || fail "install: 3 of 3 ($(cat "$work/out"))"
[ "$(grep -c '^w[123] .* ok ' "$work/out")" -eq 3 ] || fail "install: every node ok ($(cat "$work/out"))"
b_id=$(keys list --key-file "$A" | grep -Eo '^[0-9a-f]{8} ' | grep -v "$a_id" | tr -d ' ')
[ -n "$b_id" ] || fail "list shows B's id"
for n in w1 w2 w3; do
    [ "$(stat -c %a "$work/$n/keyring")" = 600 ] || fail "$n keeps its keyring with mode 0600"
done

# A fourth worker joins with A only: it lacks B, and use B is refused,
# naming it. It takes no task (the job requires pool=main).
start w4 "$A" --join "$seed"
# The leader checks the use against its own view, so that view must hold w4.
wait_for "a fourth member alive in the leader's view" alive_at "$at_leader" "$A" 4
expect_status 1 "use of a key a live member lacks" keys use "$b_id" --key-file "$B"
grep -q "key $b_id is not installed on: w4 (install it there first)" "$work/err" ||
    fail "use of a key a member lacks: names it ($(cat "$work/err"))"
stop w4
wait_for "w4 gone from the leader's view" alive_at "$at_leader" "$A" 3

# --- use B, remove A -------------------------------------------------------

ask=$follower
expect_status 0 "use B (asked of a node that relays it)" keys use --new-key-file "$B" --key-file "$B"
grep -q 'use: 3 of 3 live members applied it' "$work/out" || fail "use: 3 of 3 ($(cat "$work/out"))"
expect_status 1 "remove of B, now the primary" keys remove "$b_id" --key-file "$B"
grep -Eq "key $b_id is the primary of: w[123], w[123], w[123]" "$work/err" || fail "remove B: refused ($(cat "$work/err"))"
ask=$at_leader
expect_status 0 "remove A (asked of the leader)" keys remove "$a_id" --key-file "$B"
grep -q 'remove: 3 of 3 live members applied it' "$work/out" || fail "remove: 3 of 3 ($(cat "$work/out"))"
expect_status 1 "remove of the last key" keys remove "$b_id" --key-file "$B"
grep -q "key $b_id is the primary of" "$work/err" || fail "remove of the last key: refused ($(cat "$work/err"))"

expect_status 0 "keys list after the rotation" keys list --key-file "$B"
[ "$(grep -Ec '^[0-9a-f]{8} ' "$work/out")" -eq 1 ] || fail "list: one key left ($(cat "$work/out"))"
grep -Eq "^$b_id +3 of 3 +w[123],w[123],w[123]\$" "$work/out" || fail "list: B on 3 of 3, primary everywhere ($(cat "$work/out"))"
expect_status 1 "a client with A only, after the rotation" \
    "$shoal" members --data-dir "$work/w1" --key-file "$A" --timeout 3s

# --- the cluster did not notice -----------------------------------------

kill "$watcher"
wait "$watcher" 2>/dev/null
watcher=
[ -f "$work/watch.failures" ] && fail "the status client failed during the rotation: $(cat "$work/watch.failures")"
after=$(status_line "$B")
[ "$(leader_of w1 "$B")" = "$leader" ] || fail "the leader stays ($before / $after)"
# What a rotation can break is a message refused for its key, which every
# node logs ("refused a message from ..."). The term is not checked: the
# loopback profile's lease is 200 ms, and a machine that stalls that long
# re-elects the same leader at a new term, rotation or not.
refused=$(grep -hE 'refused (a message|[0-9]+ more messages) from' "$work"/w[123].log)
[ -z "$refused" ] || fail "no member refused another's message during the rotation: $refused"
moved=$(($(sed -n -E 's/.*assignment version ([0-9]+).*/\1/p' <<<"$after") - version))
# w4's join and leave may each bring a version; a re-election storm brings many.
[ "$moved" -le 4 ] || fail "the assignment version moved by $moved ($before / $after)"
[ "$(running "$B")" -eq 6 ] || fail "six tasks still run ($("$shoal" status --data-dir "$work/w2" --key-file "$B" 2>&1))"
[ "$(starts)" -eq "$started" ] ||
    fail "no task started again during the rotation: $(grep -h 'started work/' "$work"/w[123].log)"
grep -q 'notice: keys: remove key' "$work/w2.log" || fail "each node logs what it applied"

# --- a restart keeps the rotated keyring ---------------------------------

stop w3
start w3 "$A" --labels pool=main --join "$seed"
wait_for "w3 says it uses the keyring it kept" \
    grep -q "key-file $A holds key $a_id, which a key rotation removed: this node uses the keyring it kept (primary $b_id)" \
    "$work/w3.log"
wait_for "w3 rejoins with the kept keyring" alive_at w1 "$B" 3
six_running_b () { [ "$(running "$B")" -eq 6 ]; }
wait_for "six tasks run after w3's restart" six_running_b
expect_status 0 "keys list after the restart" keys list --key-file "$B"
grep -Eq "^$b_id +3 of 3 " "$work/out" || fail "list after the restart: B on 3 of 3 ($(cat "$work/out"))"

# --- a damaged kept keyring ---------------------------------------------

stop w3
printf 'not a keyring' >"$work/w3/keyring"
"$shoal" worker --data-dir "$work/w3" --bind 127.0.0.1:0 --beacon-port 0 --name w3 \
    --key-file "$A" >/dev/null 2>"$work/err"
[ $? -ne 0 ] || fail "a worker with a damaged keyring starts"
grep -q "the keyring kept there cannot be used: .*(remove $work/w3/keyring to start from --key-file alone)" \
    "$work/err" || fail "a damaged keyring: says what to do ($(cat "$work/err"))"

stop w1 w2
if [ "$failures" -eq 0 ]; then echo "keys: all checks passed"; fi
exit $((failures > 0))

#!/usr/bin/env bash
# The cluster subcommands of the shoal command (members, status, jobs,
# submit, rescale, remove, leave) against two running nodes (the counter
# example, on loopback): tables, --json, exit statuses, and clear errors.
# Waits are bounded against a hang only.
set -u
shoal=$1
build=$3
counter=$build/shoal-counter
# shellcheck source=lib/expect.bash
. "$(dirname "$0")/lib/expect.bash"
[ -x "$counter" ] || { echo "no $counter"; exit 1; }
pids=()
cleanup () { for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null; done; rm -rf "$work"; }
trap cleanup EXIT

run () { # name [seed]
    SHOAL_DATA_DIR=$work/$1 SHOAL_BIND=127.0.0.1:0 SHOAL_JOIN=${2:-} SHOAL_BEACON_PORT=0 \
        SHOAL_PROFILE=loopback SHOAL_NAME=$1 SHOAL_EVENTS=$work/$1.events \
        "$counter" >"$work/$1.log" 2>&1 &
    pids+=($!)
    disown # no word from bash when the cleanup kills it
}
wait_for () { # what command...: until the command succeeds, 60 s at most
    local what=$1 i; shift
    for i in $(seq 300); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
    fail "$what"; return 1
}

run a
wait_for "a starts" grep -q '^node .* on port' "$work/a.log" || exit 1
port=$(sed -n 's/^node .* on port \([0-9]*\)$/\1/p' "$work/a.log")
run b "127.0.0.1:$port"
a=(--data-dir "$work/a")
b=(--data-dir "$work/b")
two_alive () { [ "$("$shoal" members "${a[@]}" | grep -c ' alive ')" -eq 2 ]; }
wait_for "two members alive" two_alive || exit 1
wait_for "a leader" grep -q '^lease held' "$work/b.log" || exit 1

# Both become voters once up for stable_ms (3 s on loopback): VOTER says so.
two_voters () { [ "$("$shoal" members "${a[@]}" | grep -c ' alive .* yes$')" -eq 2 ]; }
wait_for "two voters" two_voters || exit 1
expect_status 0 "members" "$shoal" members "${a[@]}"
grep -q '^ID  *NAME  *ADDRESS  *STATE  *INCARNATION  *CORDON  *VOTER$' "$work/out" || fail "members: a header"
grep -Eq '^[0-9a-f]{32}  +b  +127\.0\.0\.1:[0-9]+  +alive  +[0-9]+  +none  +yes$' "$work/out" || fail "members: b's row ($(cat "$work/out"))"
expect_status 0 "members --json" "$shoal" members "${b[@]}" --json
grep -Eq '^\{"members": ?\[.*"name": ?"a".*\], ?"leader": ?"[0-9a-f]{32}", ?"term": ?[1-9][0-9]*, ?"voters_version": ?[1-9]' "$work/out" || fail "members --json: $(cat "$work/out")"
grep -Eq '"name": ?"b"[^}]*"voter": ?true' "$work/out" || fail "members --json: b votes ($(cat "$work/out"))"

expect_status 0 "submit" "$shoal" submit work --parallelism 4 --stateful "${b[@]}"
grep -q '^submit: ok, parallelism 4$' "$work/out" || fail "submit: says ok ($(cat "$work/out"))"
expect_status 0 "submit again" "$shoal" submit work --parallelism 4 --stateful "${a[@]}"
expect_status 1 "submit another spec" "$shoal" submit work --parallelism 5 "${a[@]}"
grep -q 'invalid: .*another spec' "$work/err" || fail "submit another spec: says why ($(cat "$work/err"))"

expect_status 0 "jobs --json" "$shoal" jobs "${a[@]}" --json
grep -Eq '"name": ?"work", ?"parallelism": ?4, ?"stateful": ?true' "$work/out" || fail "jobs --json: $(cat "$work/out")"
expect_status 0 "jobs" "$shoal" jobs "${b[@]}"
grep -Eq '^work  +4  +yes  +no  +1  +-  +-$' "$work/out" || fail "jobs: the row ($(cat "$work/out"))"
# A fenced job says so, in both forms; the same spec fenced is another one.
expect_status 1 "submit the spec fenced" "$shoal" submit work --parallelism 4 --stateful --fenced "${a[@]}"
grep -q 'invalid: .*another spec' "$work/err" || fail "submit the spec fenced: says why ($(cat "$work/err"))"
expect_status 0 "submit fenced" "$shoal" submit ledger --parallelism 2 --fenced "${a[@]}"
expect_status 0 "jobs --json, fenced" "$shoal" jobs "${b[@]}" --json
grep -Eq '"name": ?"ledger", ?"parallelism": ?2, ?"stateful": ?false, ?"fenced": ?true' "$work/out" ||
    fail "jobs --json shows the fenced job: $(cat "$work/out")"
grep -Eq '"name": ?"work", ?"parallelism": ?4, ?"stateful": ?true, ?"fenced": ?false' "$work/out" ||
    fail "jobs --json shows the unfenced job: $(cat "$work/out")"
expect_status 0 "jobs, fenced" "$shoal" jobs "${a[@]}"
grep -Eq '^ledger  +2  +no  +yes  +1  +-  +-$' "$work/out" || fail "jobs: the fenced row ($(cat "$work/out"))"
expect_status 0 "remove fenced" "$shoal" remove ledger "${a[@]}"

# status on the leader lists every task active once.
all_active () {
    local n
    for n in a b; do
        "$shoal" status --data-dir "$work/$n" --json >"$work/status" 2>/dev/null || continue
        [ "$(grep -Eo '"task": ?"work/[0-9]"[^}]*"role": ?"active"' "$work/status" | wc -l)" -eq 4 ] && return 0
    done
    return 1
}
wait_for "status: every task active" all_active
expect_status 0 "status" "$shoal" status "${a[@]}"
grep -Eq '^leader [0-9a-f]{32} \((a|b)\), term [0-9]+, assignment version [0-9]+$' "$work/out" || fail "status: the leader line ($(head -1 "$work/out"))"

# Asked of either node, status gives the leader's whole table: the one
# that does not lead asks the leader. --local gives a node's own tasks.
leader_name=$(sed -n -E 's/^leader [0-9a-f]{32} \((a|b)\),.*/\1/p' "$work/out")
follower=a
[ "$leader_name" = a ] && follower=b
for n in a b; do
    expect_status 0 "status of $n" "$shoal" status --data-dir "$work/$n" --json
    [ "$(grep -Eo '"task": ?"work/[0-9]"[^}]*"role": ?"active"' "$work/out" | wc -l)" -eq 4 ] ||
        fail "status of $n lists the 4 tasks ($(cat "$work/out"))"
done
expect_status 0 "status --local" "$shoal" status --data-dir "$work/$follower" --local --json
[ "$(grep -Eo '"node_name": ?"[ab]"' "$work/out" | sort -u)" = "$(printf '"node_name":"%s"' "$follower")" ] ||
    [ "$(grep -c '"task"' "$work/out")" -eq 0 ] ||
    fail "status --local of $follower lists its own tasks only ($(cat "$work/out"))"

# A task no member may hold is listed all the same, with why; the leader
# logs it. Tasks sort by job, then index as a number; an active has no
# lag to show (a stateless task is only ever active).
expect_status 0 "submit mars" "$shoal" submit mars --parallelism 2 --require zone=mars "${a[@]}"
expect_status 0 "submit many" "$shoal" submit many --parallelism 11 "${a[@]}"
unplaced_rows () {
    "$shoal" status "${a[@]}" >"$work/status" 2>/dev/null &&
        [ "$(grep -cE '^mars/[01] +- +- +unplaced +- +- +0  no eligible node: no member has zone=mars$' "$work/status")" -eq 2 ] &&
        grep -Eq '^many/10 +[ab] +active +running ' "$work/status"
}
wait_for "status: mars/0 and mars/1 placed nowhere, naming zone=mars" unplaced_rows
cat "$work/status"
[ "$(grep -nE '^many/2 ' "$work/status" | cut -d: -f1)" -lt "$(grep -nE '^many/10 ' "$work/status" | cut -d: -f1)" ] ||
    fail "status: many/2 sorts before many/10 ($(grep -E '^many/' "$work/status" | tr '\n' ' '))"
grep -Eq '^many/10 +[ab] +active +running +[0-9]+\.[0-9]+ +- +0 *$' "$work/status" ||
    fail "status: a stateless task's lag is - ($(grep -E '^many/10 ' "$work/status"))"
expect_status 0 "status --json" "$shoal" status "${b[@]}" --json
grep -Eq '"task": ?"many/3"[^}]*"lag": ?null' "$work/out" || fail "status --json: a stateless task's lag is null"
grep -Eq '"task": ?"mars/1"[^}]*"state": ?"unplaced"[^}]*"reason": ?"no eligible node: no member has zone=mars"' "$work/out" ||
    fail "status --json: mars/1 placed nowhere, with why ($(cat "$work/out"))"
# (The leader looks at most once a second: the line may come after status.)
wait_for "events: the leader logs mars/0 placed nowhere" \
    grep -hq '"event":"unplaced".*"task":"mars/0".*"reason":"no-node".*zone=mars' "$work"/a.events "$work"/b.events
expect_status 0 "remove mars" "$shoal" remove mars "${a[@]}"
expect_status 0 "remove many" "$shoal" remove many "${a[@]}"

expect_status 0 "rescale down" "$shoal" rescale work 2 "${b[@]}"
grep -q '^rescale: ok, parallelism 2$' "$work/out" || fail "rescale down: $(cat "$work/out")"
expect_status 1 "rescale a job that is not there" "$shoal" rescale nope 3 "${a[@]}"
grep -q 'not-found' "$work/err" || fail "rescale nope: says not-found ($(cat "$work/err"))"
expect_status 2 "rescale: --min above the target" "$shoal" rescale work 3 --min 4 "${a[@]}"
expect_status 2 "rescale: no parallelism" "$shoal" rescale work "${a[@]}"
expect_status 2 "rescale: a bad duration" "$shoal" rescale work 3 --wait 3 "${a[@]}"
grep -q 'not a duration' "$work/err" || fail "rescale --wait 3: says it is not a duration"
expect_status 0 "remove" "$shoal" remove work "${a[@]}" --json
grep -Eq '^\{"result": ?"ok"' "$work/out" || fail "remove --json: $(cat "$work/out")"

expect_status 2 "submit without parallelism" "$shoal" submit x "${a[@]}"
expect_status 2 "submit: bad label" "$shoal" submit x --parallelism 1 --require zone "${a[@]}"
expect_status 2 "unknown option" "$shoal" members --frobnicate "${a[@]}"
grep -q 'unknown option --frobnicate' "$work/err" || fail "unknown option: names it ($(cat "$work/err"))"
expect_status 2 "an option of another command" "$shoal" members --parallelism 3 "${a[@]}"
grep -q 'unknown option --parallelism' "$work/err" || fail "members --parallelism: names it"
expect_status 2 "an unknown short option" "$shoal" jobs -x "${a[@]}"
grep -q 'unknown option -x$' "$work/err" || fail "jobs -x: names it ($(cat "$work/err"))"
expect_status 2 "a value given to a flag" "$shoal" jobs --json=yes "${a[@]}"
grep -q 'unknown option --json=yes' "$work/err" || fail "jobs --json=yes: names it"
expect_status 2 "a missing value" "$shoal" jobs "${a[@]}" --timeout
grep -q 'needs a value: --timeout' "$work/err" || fail "jobs --timeout: names the flag ($(cat "$work/err"))"
expect_status 2 "one argument too many" "$shoal" remove x y "${a[@]}"
grep -q 'one argument too many: y' "$work/err" || fail "remove x y: names y"
expect_status 2 "after --, an argument" "$shoal" jobs -- --json "${a[@]}"
grep -q 'one argument too many: --json' "$work/err" || fail "jobs -- --json: an argument ($(cat "$work/err"))"
expect_status 0 "--flag=value" "$shoal" jobs --timeout=5s "${a[@]}"
expect_status 0 "members --help" "$shoal" members --help
grep -q -- '--data-dir' "$work/out" || fail "members --help: lists --data-dir"
expect_status 1 "no node there" "$shoal" members --data-dir "$work/nowhere" --timeout 300ms
grep -q 'no node at .*: no such socket file' "$work/err" || fail "no node there: says so ($(cat "$work/err"))"
grep -q 'is the node running' "$work/err" || fail "no node there: says what to check"

expect_status 0 "leave" "$shoal" leave "${b[@]}"
wait_for "b leaves" grep -q '^left the cluster$' "$work/b.log"
gone () { "$shoal" members "${a[@]}" | grep -Eq '  b  +.*  left  '; }
wait_for "a sees b left" gone

echo "client: $failures failed"
exit $((failures > 0))

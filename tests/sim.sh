#!/usr/bin/env bash
# Membership and election in the simulator, as CI runs it: each scenario of
# shoal-sim over a few seeds, at 200 to 1,000 nodes (60 to 200 in the
# instrumented builds), must hold every invariant (exit status 0,
# an empty list of violations), and reach what it measures within bounds
# that are loose next to what it does today: a regression, not a slow
# machine, fails them, since the clock is simulated. Also the usage errors
# of shoal-sim.
set -u
build=$3
sim=$build/sim/shoal-sim
# shellcheck source=lib/expect.bash
. "$(dirname "$0")/lib/expect.bash"

# The sanitizer and fuzz builds are instrumented, and several times slower.
if grep -q '^SHOAL_\(SANITIZE\|FUZZ\):BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null; then
    small=60 large=200 task_schedules=10
else
    small=200 large=1000 task_schedules=30
fi

# The value of one field of a report (the plain format: "name value").
field () { awk -v key="$1" '$1 == key { print $2 }' "$work/out"; }

# run WHAT ARGS...: runs one scenario, which must exit 0.
run () {
    local what=$1; shift
    expect_status 0 "$what" "$sim" "$@"
    if [ "$(field violations)" != "[]" ]; then
        fail "$what: violations $(field violations)"
    fi
}

# at_most WHAT FIELD LIMIT: the field of the last report is <= LIMIT.
at_most () {
    local value
    value=$(field "$2")
    awk -v v="$value" -v l="$3" 'BEGIN { exit !(v != "" && v != "null" && v + 0 <= l + 0) }' ||
        fail "$1: $2 is $value, expected at most $3"
}

for seed in 1 2 3; do
    run "join, $small nodes, seed $seed" --scenario join --nodes "$small" --seed "$seed"
    at_most "join, seed $seed" rounds_to_all 15
    run "crash, $small nodes, seed $seed" --scenario crash --nodes "$small" --seed "$seed"
    at_most "crash, seed $seed" ms_all_dead 30000
done
# From a settled start (every node holds every other as old news, nothing
# queued): the crashed node is dead at every other node, no other node is
# ever declared dead, and the suspicion's floor (2 x log10 N s) holds.
for seed in 1 2; do
    run "settled crash, $large nodes, seed $seed" --scenario crash --nodes "$large" \
        --seed "$seed" --settled
    [ "$(field start)" = '"settled"' ] || fail "settled crash, seed $seed: start is $(field start)"
    [ "$(field nodes_with_it_dead)" = "$((large - 1))" ] ||
        fail "settled crash, seed $seed: nodes_with_it_dead is $(field nodes_with_it_dead)"
    at_most "settled crash, seed $seed" others_dead 0
    at_most "settled crash, seed $seed" ms_all_dead 15000
done
run "join, $large nodes, 10% loss" --scenario join --nodes "$large" --seed 4 --loss 10%
at_most "join at 10% loss" rounds_to_all 20
run "crash, $large nodes" --scenario crash --nodes "$large" --seed 5
at_most "crash, $large nodes" ms_all_dead 30000
for seed in 1 2; do
    run "steady, $small nodes, 1% loss, stalls, seed $seed" --scenario steady --nodes "$small" \
        --seed "$seed" --duration 120 --loss 0.01 --stall 4
    at_most "steady, seed $seed" false_dead 0
    at_most "steady, seed $seed" bytes_per_node_per_s 10000
    run "partition, $small nodes, seed $seed" --scenario partition --nodes "$small" --seed "$seed" \
        --duration 60
    at_most "partition, seed $seed" ms_to_merge 60000
done

# The election, with membership under it: one leader, replaced in time after
# a crash, a cut or a pause, never two acting at once, no churn.
for seed in 1 2 3; do
    run "leader-crash, $small nodes, seed $seed" --scenario leader-crash --nodes "$small" \
        --seed "$seed"
    at_most "leader-crash, seed $seed" ms_to_new_leader 5000
    at_most "leader-crash, seed $seed" leader_changes 1
    run "leader-partition, $small nodes, seed $seed" --scenario leader-partition \
        --nodes "$small" --seed "$seed" --duration 20
    at_most "leader-partition, seed $seed" ms_to_new_leader 5000
    run "halves, $((small + 1)) nodes, seed $seed" --scenario halves --nodes "$((small + 1))" \
        --seed "$seed" --duration 20
    at_most "halves, seed $seed" leaders_during 1
    run "halves, available mode, seed $seed" --scenario halves --nodes "$small" --seed "$seed" \
        --duration 20 --available
    at_most "halves, available mode, seed $seed" ms_to_one_leader_after 10000
    run "pause-leader, $small nodes, seed $seed" --scenario pause-leader --nodes "$small" \
        --seed "$seed"
    run "flapping, $small nodes, seed $seed" --scenario flapping --nodes "$small" --seed "$seed" \
        --duration 30
    at_most "flapping, seed $seed" leader_changes 1
done
run "leader-crash, $large nodes" --scenario leader-crash --nodes "$large" --seed 4
at_most "leader-crash, $large nodes" ms_to_new_leader 8000
# The leader and a tenth of the others at once (bench/scale.sh's kill): the
# dead above a node are still live in its view a while, and cost it an
# answer timeout each; still one change.
run "leader-crash-tenth, $large nodes" --scenario leader-crash-tenth --nodes "$large" --seed 4
at_most "leader-crash-tenth, $large nodes" ms_to_new_leader 8000
at_most "leader-crash-tenth, $large nodes" leader_changes 1
run "leader-crash-tenth, $small nodes, stalls" --scenario leader-crash-tenth --nodes "$small" \
    --seed 2 --stall 20
at_most "leader-crash-tenth, stalls" leader_changes 1
for scenario in bridge one-way; do
    run "$scenario, $small nodes" --scenario "$scenario" --nodes "$small" --seed 5 --duration 20
done
# Random fault schedules (bench/election_faults.sh runs thousands): each seed
# in quorum mode and in available mode.
for seed in $(seq 1 60); do
    run "random faults, seed $seed" --scenario random --nodes 30 --faults 10 --seed "$seed"
    run "random faults, available, seed $seed" --scenario random --nodes 30 --faults 10 \
        --seed "$seed" --available
done

# Tasks, with the election and membership under them: never two nodes running
# a task as active (the scenario reports it as a violation), the learners of
# a scale-out handed over within a few message delays (1 to 2 ms each here)
# at_least WHAT FIELD LIMIT: the field of the last report is >= LIMIT.
at_least () {
    local value
    value=$(field "$2")
    awk -v v="$value" -v l="$3" 'BEGIN { exit !(v != "" && v != "null" && v + 0 >= l + 0) }' ||
        fail "$1: $2 is $value, expected at least $3"
}

# is WHAT FIELD VALUE: the field of the last report is VALUE.
is () {
    [ "$(field "$2")" = "$3" ] || fail "$1: $2 is $(field "$2"), expected $3"
}

# with the fewest moves, the tasks of a crashed or paused owner given away
# once its lease has surely ended (5 s x 1.05 after it was last heard), or
# at once when the view declares it dead and the job is fenced,
# a graceful leave handing its tasks over as fast as a scale-out does, a cold
# start placing each task once and moving none after, and balance after every
# fault.
for seed in 1 2 3; do
    for mode in "" --stateless; do
        run "scale-out, seed $seed $mode" --scenario scale-out --nodes 12 --tasks 60 \
            --seed "$seed" $mode
        at_most "scale-out, seed $seed $mode" gap_max_ms 10
        at_most "scale-out, seed $seed $mode" moves 15
        at_most "scale-out, seed $seed $mode" ms_to_balanced 15000
        is "scale-out, seed $seed $mode" cold_starts 0 # each learner caught up first
        run "crash-owner, seed $seed $mode" --scenario crash-owner --nodes 12 --tasks 60 \
            --seed "$seed" $mode
        at_most "crash-owner, seed $seed $mode" gap_max_ms 6000
        run "pause-owner, seed $seed $mode" --scenario pause-owner --nodes 12 --tasks 60 \
            --seed "$seed" $mode
        at_most "pause-owner, seed $seed $mode" gap_max_ms 6000
        # Fenced: no lease wait, so under the 5.25 s of one (3.6 to 4.3 s seen).
        for scenario in crash-owner crash-leader; do
            run "$scenario fenced, seed $seed $mode" --scenario "$scenario" --nodes 12 --tasks 60 \
                --seed "$seed" $mode --fenced
            at_most "$scenario fenced, seed $seed $mode" gap_max_ms 5000
        done
        run "leader-crash-mid-handoff, seed $seed $mode" --scenario leader-crash-mid-handoff \
            --nodes 12 --tasks 60 --seed "$seed" $mode
    done
    # A new leader's office: the statuses of its lease wait do not each run
    # a computation for the dead's tasks, which only the wait's end can
    # grant (seed 1: 98 computations before 2026-12-05, 10 after).
    run "crash-leader-tenth, seed $seed" --scenario crash-leader-tenth --nodes 60 --tasks 300 \
        --profile wan --settled --seed "$seed"
    at_most "crash-leader-tenth, seed $seed" leader_computations 30
    run "cold-start, seed $seed" --scenario cold-start --nodes 10 --tasks 200 --seed "$seed"
    run "scale-in, seed $seed" --scenario scale-in --nodes 12 --tasks 60 --seed "$seed"
    at_most "scale-in, seed $seed" gap_max_ms 10
    is "scale-in, seed $seed" moves 15 # the minimum: 3 nodes x 5 tasks
    run "halves with tasks, seed $seed" --scenario halves-tasks --nodes 13 --tasks 60 \
        --duration 20 --seed "$seed"
    run "rolling restart, seed $seed" --scenario rolling-restart --nodes 6 --tasks 30 \
        --seed "$seed" --stateless
    # The leader's turn too: it moves its tasks away before it leaves.
    at_most "rolling restart, seed $seed" gap_max_ms 10
    is "rolling restart, seed $seed" cold_starts 0 # stateless: never cold
    # Stateful: a follower's graceful leave revokes its tasks before anyone
    # warmed up, so they start cold (60 of 60 at 5 nodes today); drained
    # first, none may (rolling-drain and drain-owner report any as a
    # violation, checked by run). Either way, no task goes without an active
    # for more than the STATUS and the ASSIGN of its move, the leader's turn
    # included: a leaving leader first waits for its moves to be done.
    run "rolling restart, stateful, seed $seed" --scenario rolling-restart --nodes 5 \
        --seed "$seed"
    at_least "rolling restart, stateful, seed $seed" cold_starts 1
    at_most "rolling restart, stateful, seed $seed" gap_max_ms 10
    run "rolling drain, seed $seed" --scenario rolling-drain --nodes 5 --seed "$seed"
    is "rolling drain, seed $seed" cold_starts 0
    at_most "rolling drain, seed $seed" gap_max_ms 10
    run "drain owner, seed $seed" --scenario drain-owner --nodes 9 --seed "$seed"
    is "drain owner, seed $seed" cold_starts 0
    at_most "drain owner, seed $seed" gap_max_ms 10
done
# The drain's three delays, each on the seed that showed it (docs/sim.md):
# a drained follower whose last STATUS came just after its leave (9 nodes,
# seed 7: 2.2 s), a drained leader that left with a move halfway (5 nodes,
# seed 22: 7.8 s), a mark that reached the leader late by gossip alone
# (9 nodes, seed 15: a drain of 27.7 s; 4.3 s at most on the other seeds).
run "rolling drain, 9 nodes, seed 7" --scenario rolling-drain --nodes 9 --seed 7
at_most "rolling drain, 9 nodes, seed 7" gap_max_ms 10
run "rolling drain, 5 nodes, seed 22" --scenario rolling-drain --nodes 5 --seed 22
at_most "rolling drain, 5 nodes, seed 22" gap_max_ms 10
run "rolling drain, 9 nodes, seed 15" --scenario rolling-drain --nodes 9 --seed 15
at_most "rolling drain, 9 nodes, seed 15" drain_ms_max 9000
# A leader that stops acting and acts again with its term keeps its handoff:
# with a fresh one, an owner that missed its revocation got its lapsed lease
# back and ran a task another node had been given (seed 3, before the fix).
for seed in 1 2 3 4 5 6; do
    run "deaf leader, seed $seed" --scenario deaf-leader --nodes 7 --tasks 20 --backlog 32 \
        --seed "$seed"
done
# Jobs as cluster state: five submits, each answered ok just before the
# leader crashes, all survive (lost_jobs 0); a rescale through a follower
# applies at once when it fits; one beyond the slots times out and leaves
# the job as it was (outcome 4), one with a min takes the largest that fits
# (outcome 5: 9 nodes x 8 slots), and one that waits gets the slots of the
# nodes that join meanwhile (outcome 0).
# Seed 1 found restarted members that met only each other and stayed an island
# (docs/membership.md, tombstones): it stays in.
for seed in 1 2 3 4; do
    run "submit, leader crash, seed $seed" --scenario submit-leader-crash --nodes 7 \
        --tasks 20 --seed "$seed"
    is "submit, leader crash, seed $seed" lost_jobs 0
    is "submit, leader crash, seed $seed" jobs_acked 5
done
for seed in 1 2 3; do
    run "rescale-up, seed $seed" --scenario rescale-up --nodes 12 --tasks 60 --seed "$seed"
    is "rescale-up, seed $seed" outcome 0
    is "rescale-up, seed $seed" parallelism 90
    at_most "rescale-up, seed $seed" gaps 0
    run "rescale-down, seed $seed" --scenario rescale-down --nodes 12 --tasks 60 --seed "$seed"
    is "rescale-down, seed $seed" parallelism 30
    at_most "rescale-down, seed $seed" gap_max_ms 10
    run "rescale-timeout, seed $seed" --scenario rescale-timeout --nodes 12 --tasks 60 \
        --seed "$seed"
    is "rescale-timeout, seed $seed" outcome_beyond 4
    is "rescale-timeout, seed $seed" parallelism_beyond 60
    is "rescale-timeout, seed $seed" outcome_min 5
    is "rescale-timeout, seed $seed" parallelism_min 72
    is "rescale-timeout, seed $seed" outcome_wait 0
    is "rescale-timeout, seed $seed" parallelism_wait 96
    at_most "rescale-timeout, seed $seed" rescale_ms_wait 10000
done
# Task starts that fail, restarted by their node: no double active either.
for seed in 1 2; do
    run "random faults with failing tasks, seed $seed" --scenario random-tasks --nodes 12 \
        --tasks 60 --fail 10% --seed "$seed"
done
# The leader's bound on tasks starting at once (max-starting): a cold start
# still places each task once and moves none after; faults, failing starts
# and jobs submitted meanwhile still end balanced, with no double active.
run "cold start, max-starting 3" --scenario cold-start --nodes 7 --max-starting 3 --seed 1
is "cold start, max-starting 3" activations 60
is "cold start, max-starting 3" moves_after 0
for seed in 1 2 3 4; do
    run "random faults, max-starting 2, seed $seed" --scenario random-tasks --nodes 7 \
        --fail 5% --submit --max-starting 2 --seed "$seed"
done
# A job whose tasks fail on every node: once each node gave up on them (its
# restarts spent), the leader reports them failed, places them nowhere, and
# never starts them again; the other job stays balanced meanwhile.
for seed in 1 2 3; do
    for mode in "" --stateless; do
        run "fail-everywhere, seed $seed $mode" --scenario fail-everywhere --nodes 12 \
            --tasks 60 --seed "$seed" $mode
        at_most "fail-everywhere, seed $seed $mode" failed_starts_after 0
        at_most "fail-everywhere, seed $seed $mode" gave_up 48
    done
done
# Random faults with tasks (bench/task_faults.sh runs thousands).
for seed in $(seq 1 "$task_schedules"); do
    run "random faults with tasks, seed $seed" --scenario random-tasks --nodes 12 --tasks 60 \
        --faults 10 --seed "$seed"
    # Graceful leaves among the faults: a voter that leaves waits for its
    # leader to drop it, whatever else is going on (docs/election.md 3).
    run "random faults with leaves, seed $seed" --scenario random-tasks --nodes 12 --tasks 60 \
        --faults 10 --seed "$seed" --leaves
done
# And with a job submitted at each fault: every job answered ok is kept.
# Seeds that once looped (docs/handoff.md 6): 1899 flipped 52 stand-in
# learners between nodes at one instant while a new leader waited out the
# leases; 943 placed afresh a task whose claimer had gone silent; 5241 let a
# stateless task and two warm-ups take turns; in 5841 a member that missed
# a delta never got its snapshot. A loop at one instant is a violation.
for seed in 1 2 3 4 5 943 1899 5241 5841; do
    run "random faults with submits, seed $seed" --scenario random-tasks --nodes 12 --tasks 60 \
        --faults 10 --seed "$seed" --submit
    is "random faults with submits, seed $seed" lost_jobs 0
done

# The wan profile: every time of the cores five times the LAN's, and the
# scenarios' bounds with them. Its safety is the LAN's, scaled.
for seed in 1 2 3; do
    run "wan: crash-owner, seed $seed" --scenario crash-owner --nodes 9 --seed "$seed" \
        --profile wan
    [ "$(field profile)" = '"wan"' ] || fail "wan: crash-owner: profile is $(field profile)"
    is "wan: crash-owner, seed $seed" double_active_ms 0
    run "wan: random faults with tasks, seed $seed" --scenario random-tasks --nodes 12 \
        --tasks 60 --faults 10 --seed "$seed" --profile wan
done
run "wan: leader-crash" --scenario leader-crash --nodes "$small" --seed 1 --profile wan
at_most "wan: leader-crash" ms_to_new_leader 25000

# The same seed replays the same run, byte for byte (but for wall time).
"$sim" --scenario crash --nodes 50 --seed 9 --json | grep -v '"wall_s"\|"simulated_s_per_wall_s"' >"$work/a"
"$sim" --scenario crash --nodes 50 --seed 9 --json | grep -v '"wall_s"\|"simulated_s_per_wall_s"' >"$work/b"
cmp -s "$work/a" "$work/b" || fail "the same seed gave two different reports"
"$sim" --scenario halves --nodes 31 --seed 9 --duration 10 --json |
    grep -v '"wall_s"\|"simulated_s_per_wall_s"' >"$work/a"
"$sim" --scenario halves --nodes 31 --seed 9 --duration 10 --json |
    grep -v '"wall_s"\|"simulated_s_per_wall_s"' >"$work/b"
cmp -s "$work/a" "$work/b" || fail "the same seed gave two different election reports"

# Usage errors: exit status 2 and a line that says what was wrong.
expect_status 2 "no scenario" "$sim"
grep -q -- '--scenario is required' "$work/err" || fail "no scenario: $(cat "$work/err")"
expect_status 2 "unknown scenario" "$sim" --scenario nope
expect_status 2 "one node" "$sim" --scenario join --nodes 1
expect_status 2 "loss of 100%" "$sim" --scenario steady --loss 100%
expect_status 2 "loss not a number" "$sim" --scenario steady --loss lots
expect_status 2 "stray argument" "$sim" --scenario join extra
expect_status 2 "no faults" "$sim" --scenario random --faults 0
expect_status 2 "fail of 100%" "$sim" --scenario random-tasks --fail 100%
expect_status 2 "unknown profile" "$sim" --scenario crash --profile moon
grep -q -- 'lan, loopback or wan' "$work/err" || fail "unknown profile: $(cat "$work/err")"
expect_status 2 "max-starting not a number" "$sim" --scenario cold-start --max-starting many
grep -q -- "--max-starting" "$work/err" || fail "max-starting not a number: $(cat "$work/err")"
expect_status 0 "help" "$sim" --help
grep -q 'scenarios:' "$work/out" || fail "--help does not list the scenarios"

[ "$failures" -eq 0 ] && echo "shoal-sim: every scenario held its invariants"
exit $((failures > 0))

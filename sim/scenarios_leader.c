/*  sim/scenarios_leader.c: the leader scenarios: membership and the
    election. Each first waits for one leader followed by every node; the
    fault then comes at a random moment of the leader's heartbeat; then
    one leader followed by all again.
*/
#include "sim/scenario.h"
#include "wire/splitmix.h"

//  The elector's lease, as the scenarios hold faults for it.
static uint64_t
s_lease (sim_run_t *run)
{
    return run->config->elector.lease_ms;
}

//  Since the fault: when another node began to act, and the election
//  messages sent until then.
static void
s_report_new_leader (sim_run_t *run)
{
    sim_measure (run, "ms_to_new_leader",
                 run->leaders.new_ms ? run->leaders.new_ms - run->start_ms : 0);
    sim_measure (run, "election_msgs", run->leaders.election_sent);
    if (!run->leaders.new_ms)
        sim_violation (run, "no new leader");
}

static bool
s_new_leader (sim_run_t *run)
{
    return run->leaders.new_ms != 0;
}

//  Groups 0 and 1 cannot reach each other for --duration (leaders_during:
//  how many act at its end); then they can.
static void
s_cut_for_duration (sim_run_t *run)
{
    shoal_sim_t *sim = run->sim;
    shoal_sim_block (sim, 0, 1, true);
    shoal_sim_block (sim, 1, 0, true);
    sim_run_until (run, run->start_ms + run->options->duration_ms, NULL);
    uint32_t acting = 0;
    for (uint32_t n = 0; n < run->options->nodes; n++)
        acting += shoal_sim_elector (sim, n) &&
                  shoal_elector_acting (shoal_sim_elector (sim, n), shoal_sim_now (sim));
    sim_measure (run, "leaders_during", acting);
    shoal_sim_block (sim, 0, 1, false);
    shoal_sim_block (sim, 1, 0, false);
    run->healed = shoal_sim_now (sim);
}

static void
s_leader_crash_fault (sim_run_t *run)
{
    sim_crash (run, run->leaders.old);
    sim_run_until (run, run->start_ms + SIM_LIMIT_MS (run), s_new_leader);
    s_report_new_leader (run);
}

//  The leader and a tenth of the others (at random) crash at once, as
//  bench/scale.sh kills them: candidates above a node may be dead but
//  still live in its view.
static void
s_leader_crash_tenth_fault (sim_run_t *run)
{
    uint32_t nodes = run->options->nodes;
    sim_crash_leader_tenth (run, run->leaders.old);
    //  --stall K: a loaded machine, for the first minute: every 250 ms, K
    //  nodes at random stop for 1 to 3 s, their messages waiting.
    shoal_sim_t *sim = run->sim;
    while (run->options->stall && !s_new_leader (run) &&
           shoal_sim_now (sim) < run->start_ms + 60000) {
        for (uint32_t k = 0; k < run->options->stall; k++) {
            uint32_t n = (uint32_t) (splitmix_next (&run->random) % nodes);
            if (shoal_sim_elector (sim, n) && !shoal_sim_paused (sim, n))
                shoal_sim_pause (sim, n, 1000 + splitmix_next (&run->random) % 2000);
        }
        sim_run_until (run, shoal_sim_now (sim) + 250, s_new_leader);
    }
    sim_run_until (run, run->start_ms + SIM_LIMIT_MS (run), s_new_leader);
    s_report_new_leader (run);
}

static void
s_leader_partition_fault (sim_run_t *run)
{
    shoal_sim_set_group (run->sim, run->leaders.old, 1);
    s_cut_for_duration (run);
    s_report_new_leader (run);
}

static void
s_halves_fault (sim_run_t *run)
{
    for (uint32_t n = run->options->nodes / 2; n < run->options->nodes; n++)
        shoal_sim_set_group (run->sim, n, 1);
    s_cut_for_duration (run);
}

static void
s_pause_leader_fault (sim_run_t *run)
{
    uint64_t pause = 2 * s_lease (run) + 1000;
    shoal_sim_pause (run->sim, run->leaders.old, pause);
    sim_run_until (run, run->start_ms + SIM_LIMIT_MS (run), s_new_leader);
    run->healed = run->start_ms + pause;
    sim_run_until (run, run->healed, NULL);
    s_report_new_leader (run);
}

//  The highest rank is the leader, and flaps: down 2 s out of every 5 s.
static void
s_flapping_fault (sim_run_t *run)
{
    uint32_t nodes = run->options->nodes;
    for (uint64_t at = run->start_ms; at < run->start_ms + run->options->duration_ms; at += 5000) {
        sim_crash (run, nodes - 1);
        sim_run_until (run, at + 2000, NULL);
        shoal_sim_start (run->sim, nodes - 1, 0);
        sim_run_until (run, at + 5000, NULL);
    }
    run->healed = shoal_sim_now (run->sim);
}

//  Group 1 cannot reach group 0 for --duration, nor group 0 group 1 when
//  both_ways; then every node is back in group 0, nothing blocked.
static void
s_block_for_duration (sim_run_t *run, bool both_ways)
{
    shoal_sim_t *sim = run->sim;
    shoal_sim_block (sim, 0, 1, both_ways);
    shoal_sim_block (sim, 1, 0, true);
    sim_run_until (run, run->start_ms + run->options->duration_ms, NULL);
    sim_heal (sim);
    run->healed = shoal_sim_now (sim);
}

static void
s_bridge_fault (sim_run_t *run)
{
    shoal_sim_t *sim = run->sim;
    for (uint32_t n = run->options->nodes / 2; n < run->options->nodes; n++)
        shoal_sim_set_group (sim, n, 1);
    shoal_sim_set_group (sim, 0, 2); //  reaches both halves
    shoal_sim_block (sim, 1, 0, true);
    s_block_for_duration (run, true);
}

static void
s_one_way_fault (sim_run_t *run)
{
    shoal_sim_set_group (run->sim, run->leaders.old, 1);
    s_block_for_duration (run, false);
    s_report_new_leader (run);
}

static void
s_random_fault (sim_run_t *run)
{
    sim_random_faults (run, NULL);
    sim_heal (run->sim);
    shoal_sim_set_loss (run->sim, 0);
    run->healed = shoal_sim_now (run->sim);
    sim_measure (run, "faults", run->options->faults);
}

//  Churn: a crash, a pause or a cut-off leader costs one change; a
//  flapping node that is not the leader any more costs none.
static void
s_one_change (sim_run_t *run)
{
    if (run->leaders.starts > 1)
        sim_violation (run, "%u leader changes for one fault", run->leaders.starts);
}

//  The same, in quorum mode only.
static void
s_one_change_in_quorum (sim_run_t *run)
{
    if (run->checks.quorum)
        s_one_change (run);
}

static void
s_random_measure (sim_run_t *run)
{
    if (run->checks.quorum && run->leaders.starts > run->options->faults)
        sim_violation (run, "%u leader changes for %u faults", run->leaders.starts,
                       run->options->faults);
}

//  One leader, followed by all, within the limit of settling; the fault
//  then comes at a random moment of its heartbeat.
static bool
s_ready (sim_run_t *run)
{
    shoal_sim_t *sim = run->sim;
    uint64_t begin = shoal_sim_now (sim);
    if (!sim_run_until (run, begin + SIM_LIMIT_MS (run), sim_one_leader)) {
        sim_violation (run, "no single leader followed by all within %llu s of settling",
                       (unsigned long long) SIM_LIMIT_MS (run) / 1000);
        return false;
    }
    sim_measure (run, "ms_to_first_leader", shoal_sim_now (sim) - begin);
    shoal_sim_run (sim, shoal_sim_now (sim) +
                            splitmix_next (&run->random) % run->config->elector.heartbeat_ms);
    uint32_t leader = sim_acting_leader (run);
    sim_measure (run, "leader", leader);
    run->leaders.old = leader;
    run->start_ms = shoal_sim_now (sim);
    shoal_sim_stats (sim, &run->at_start);
    run->counting = true;
    return true;
}

//  One leader followed by all again, from the heal (or the fault).
static void
s_liveness (sim_run_t *run)
{
    shoal_sim_t *sim = run->sim;
    uint64_t from = run->healed ? run->healed : run->start_ms;
    run->finished = sim_run_until (run, from + SIM_LIMIT_MS (run), run->options->scenario->done);
    sim_measure (run, run->healed ? "ms_to_one_leader_after" : "ms_to_one_leader",
                 shoal_sim_now (sim) - from);
    sim_measure (run, "leader_changes", run->leaders.starts);
    //  (0 when no node acts alone: a run that did not finish.)
    uint32_t leader = sim_acting_leader (run);
    sim_measure (run, "term",
                 leader == SHOAL_SIM_NONE ? 0
                                          : shoal_elector_term (shoal_sim_elector (sim, leader)));
    if (!run->finished)
        sim_violation (run, "no single leader followed by all within %llu s after the faults",
                       (unsigned long long) SIM_LIMIT_MS (run) / 1000);
    if (run->options->scenario->measure)
        run->options->scenario->measure (run);
}

static const sim_scenario_t s_scenarios[] = {
    { "leader-crash",
      "  leader-crash      the leader crashes: ms_to_new_leader (from the crash to a\n"
      "                    leader acting, acknowledged by a majority), election_msgs\n"
      "                    (election messages sent meanwhile), ms_to_one_leader\n"
      "                    (followed by every node), leader_changes\n",
      NULL, s_leader_crash_fault, sim_one_leader, s_one_change },
    { "leader-crash-tenth",
      "  leader-crash-tenth\n"
      "                    the leader and a tenth of the others crash at once:\n"
      "                    as leader-crash\n",
      NULL, s_leader_crash_tenth_fault, sim_one_leader, NULL },
    { "leader-partition",
      "  leader-partition  the leader is cut off for --duration, then healed:\n"
      "                    ms_to_new_leader, ms_to_one_leader after the heal\n",
      NULL, s_leader_partition_fault, sim_one_leader, s_one_change_in_quorum },
    { "halves",
      "  halves            two halves (N/2 and the rest) apart for --duration:\n"
      "                    leaders_during, then ms_to_one_leader after the heal\n",
      NULL, s_halves_fault, sim_one_leader, NULL },
    { "pause-leader",
      "  pause-leader      the leader pauses for two leases and a second:\n"
      "                    ms_to_new_leader, ms_to_one_leader after it resumes\n",
      NULL, s_pause_leader_fault, sim_one_leader, s_one_change_in_quorum },
    { "flapping",
      "  flapping          the highest-ranked node crashes for 2 s out of every 5 s\n"
      "                    for --duration: leader_changes (sticky: at most 1)\n",
      NULL, s_flapping_fault, sim_one_leader, s_one_change },
    { "bridge", "  bridge            two halves apart for --duration, and node 0 reaching both\n",
      NULL, s_bridge_fault, sim_one_leader, NULL },
    { "one-way",
      "  one-way           the leader's messages are lost for --duration, not those\n"
      "                    to it: ms_to_new_leader\n",
      NULL, s_one_way_fault, sim_one_leader, NULL },
    { "random",
      "  random            --faults K faults one after another, each at a random\n"
      "                    moment for a random time: crashes and restarts, pauses,\n"
      "                    splits both ways and one way, a cut-off node, loss bursts;\n"
      "                    then ms_to_one_leader_after\n",
      NULL, s_random_fault, sim_one_leader, s_random_measure },
};

const sim_family_t sim_family_leader = {
    .help = "\n"
            "leader scenarios (membership and election; every one first waits for one\n"
            "leader followed by all, ms_to_first_leader):\n",
    .election = true,
    .ready = s_ready,
    .liveness = s_liveness,
    .scenarios = s_scenarios,
    .count = sizeof s_scenarios / sizeof s_scenarios[0],
};

/*  sim/scenarios_tasks.c: the task scenarios: membership, the election and
    the handoff of the tasks of one job, "web". Each first waits for every
    task placed and balanced, then plays its fault, then waits for the
    tasks balanced again, and reports what the tasks went through: time run
    as active twice (never, or a violation), time without an active, and
    the gaps.

    The job scenarios (scenarios_jobs.c) are of this family too.
*/
#include "sim/scenario.h"

#include <stdlib.h>
#include <string.h>

size_t
sim_failed_everywhere (sim_run_t *run, const char *const **tasks)
{
    uint32_t leader = sim_acting_leader (run);
    shoal_handoff_t *handoff =
        leader == SHOAL_SIM_NONE ? NULL : shoal_sim_handoff (run->sim, leader);
    *tasks = NULL;
    return handoff ? shoal_handoff_failed (handoff, tasks) : 0;
}

//  Every current task has exactly one active, and a removed one none; but
//  as many as the acting leader reports failed on every node have none.
static bool
s_tasks_placed (sim_run_t *run)
{
    size_t idle = 0;
    for (size_t t = 0; t < shoal_sim_task_count (run->sim); t++) {
        uint32_t actives = shoal_sim_task_actives (run->sim, t);
        bool current = shoal_sim_task_current (run->sim, t);
        if (actives > 1 || (actives && !current))
            return false;
        idle += current && !actives;
    }
    const char *const *failed;
    return idle == 0 || idle == sim_failed_everywhere (run, &failed);
}

//  Whether the leader's assignment keeps a learner, and in *per_node how
//  many tasks each node runs as active in it.
static bool
s_count_actives (shoal_sim_t *sim, uint32_t leader, uint32_t *per_node)
{
    const shoal_placement_t *placements;
    size_t count = shoal_handoff_placements (shoal_sim_handoff (sim, leader), &placements);
    bool learners = false;
    for (size_t i = 0; i < count; i++) {
        uint32_t node = shoal_sim_index (&placements[i].node);
        learners |= placements[i].role == SHOAL_ROLE_LEARNER;
        if (placements[i].role == SHOAL_ROLE_ACTIVE && node < shoal_sim_size (sim))
            per_node[node]++;
    }
    return learners;
}

//  One leader, every task with one active, no learner left in the leader's
//  assignment, and the actives spread evenly: as many per node as the
//  equal capacities allow (within one).
bool
sim_tasks_balanced (sim_run_t *run)
{
    shoal_sim_t *sim = run->sim;
    uint32_t leader = sim_acting_leader (run);
    if (leader == SHOAL_SIM_NONE || !shoal_sim_handoff (sim, leader) || !s_tasks_placed (run))
        return false;
    uint32_t *per_node = calloc (shoal_sim_size (sim), sizeof *per_node);
    if (!per_node)
        return false;
    bool learners = s_count_actives (sim, leader, per_node);
    uint32_t low = UINT32_MAX, high = 0;
    for (uint32_t n = 0; n < shoal_sim_size (sim); n++)
        if (shoal_sim_node (sim, n) && !shoal_sim_paused (sim, n)) {
            low = per_node[n] < low ? per_node[n] : low;
            high = per_node[n] > high ? per_node[n] : high;
        }
    free (per_node);
    return !learners && high <= low + 1;
}

//  A node (not the leader) that runs tasks as active: the one with most.
static uint32_t
s_owner (sim_run_t *run)
{
    shoal_sim_t *sim = run->sim;
    uint32_t leader = sim_acting_leader (run), best = SHOAL_SIM_NONE;
    size_t most = 0;
    for (uint32_t n = 0; n < shoal_sim_size (sim); n++) {
        shoal_tasks_t *tasks = shoal_sim_tasks (sim, n);
        if (n == leader || !tasks)
            continue;
        const shoal_task_status_t *list;
        size_t count = shoal_tasks_list (tasks, &list), active = 0;
        for (size_t i = 0; i < count; i++)
            active += list[i].role == SHOAL_ROLE_ACTIVE;
        if (active > most) {
            most = active;
            best = n;
        }
    }
    return best;
}

static uint64_t
s_lease (sim_run_t *run)
{
    return run->config->node_tasks.lease_ms;
}

//  The late nodes (the last run->joining) start, joining through node 0.
static void
s_start_late (sim_run_t *run)
{
    for (uint32_t n = run->options->nodes - run->joining; n < run->options->nodes; n++)
        shoal_sim_start (run->sim, n, 0);
}

//  Scenarios that start a quarter of the nodes late.
static int
s_late_quarter (sim_run_t *run, shoal_sim_config_t *config)
{
    (void) config;
    run->joining = (run->options->nodes + 3) / 4;
    return 0;
}

//  --------------------------------------------------------------------
//  Nodes join, crash, pause, start together

static void
s_scale_out_fault (sim_run_t *run)
{
    s_start_late (run);
}

static void
s_crash_owner_fault (sim_run_t *run)
{
    run->subject = s_owner (run);
    if (run->subject != SHOAL_SIM_NONE)
        sim_crash (run, run->subject);
}

//  The leader runs tasks too: its tasks wait for a new leader, which does
//  not know when the old one last renewed its own lease.
static void
s_crash_leader_fault (sim_run_t *run)
{
    run->subject = sim_acting_leader (run);
    if (run->subject != SHOAL_SIM_NONE)
        sim_crash (run, run->subject);
}

//  The leader and a tenth of the others, at random, crash at once, as
//  bench/scale.sh kills them: the new leader takes office with a tenth of
//  the tasks to place again.
static void
s_crash_leader_tenth_fault (sim_run_t *run)
{
    run->subject = sim_acting_leader (run);
    if (run->subject != SHOAL_SIM_NONE)
        sim_crash_leader_tenth (run, run->subject);
}

static void
s_pause_owner_fault (sim_run_t *run)
{
    run->subject = s_owner (run);
    if (run->subject != SHOAL_SIM_NONE)
        shoal_sim_pause (run->sim, run->subject, 2 * s_lease (run) + 1000);
    sim_run_until (run, run->start_ms + 2 * s_lease (run) + 1000, NULL);
}

//  No fault: 30 s more, in which nothing may move.
static void
s_cold_start_fault (sim_run_t *run)
{
    sim_run_until (run, run->start_ms + 30000, NULL);
    run->moves = "moves_after";
}

static void
s_cold_start_measure (sim_run_t *run)
{
    shoal_sim_task_stats_t after;
    shoal_sim_task_stats (run->sim, &after);
    if (after.activations != run->before.activations)
        sim_violation (run, "%llu moves after the cold start",
                       (unsigned long long) (after.activations - run->before.activations));
    if (run->before.activations != run->options->tasks)
        sim_violation (run, "%llu activations to place %u tasks",
                       (unsigned long long) run->before.activations, run->options->tasks);
}

//  Some task that had an active has none: a handoff is under way.
static bool
s_task_moving (sim_run_t *run)
{
    for (size_t t = 0; t < shoal_sim_task_count (run->sim); t++)
        if (shoal_sim_task_current (run->sim, t) && shoal_sim_task_actives (run->sim, t) == 0)
            return true;
    return false;
}

static void
s_mid_handoff_fault (sim_run_t *run)
{
    shoal_sim_t *sim = run->sim;
    s_start_late (run);
    //  The first handoff is under way once a task has no active: a few
    //  milliseconds, so watched millisecond by millisecond.
    while (!s_task_moving (run) && shoal_sim_now (sim) < run->start_ms + SIM_LIMIT_MS (run))
        shoal_sim_run (sim, shoal_sim_now (sim) + 1);
    run->subject = sim_acting_leader (run);
    if (run->subject != SHOAL_SIM_NONE)
        sim_crash (run, run->subject);
}

//  --------------------------------------------------------------------
//  Nodes leave gracefully

//  True when none of the count nodes in nodes runs a task (of any role).
static bool
s_handed_off (shoal_sim_t *sim, const uint32_t *nodes, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++) {
        shoal_tasks_t *tasks = shoal_sim_tasks (sim, nodes[i]);
        const shoal_task_status_t *list;
        if (tasks && shoal_tasks_list (tasks, &list) > 0)
            return false;
    }
    return true;
}

//  True when each of the count nodes in nodes has left the view.
static bool
s_left (shoal_sim_t *sim, const uint32_t *nodes, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++)
        if (!shoal_sim_left (sim, nodes[i]))
            return false;
    return true;
}

//  The count nodes in nodes leave gracefully, as a worker does on SIGTERM:
//  each tells the cluster, stays until the leader has moved its tasks away
//  and it has told the others it left (or the limit passed), and then its
//  process ends.
static void
s_leave (sim_run_t *run, const uint32_t *nodes, uint32_t count)
{
    shoal_sim_t *sim = run->sim;
    for (uint32_t i = 0; i < count; i++)
        shoal_sim_leave (sim, nodes[i]);
    uint64_t until = shoal_sim_now (sim) + SIM_LIMIT_MS (run);
    while (!(s_handed_off (sim, nodes, count) && s_left (sim, nodes, count)) &&
           shoal_sim_now (sim) < until)
        sim_run_until (run, shoal_sim_now (sim) + 10, NULL);
    for (uint32_t i = 0; i < count; i++)
        sim_crash (run, nodes[i]);
}

//  What the drains of a scenario took: their count, total and longest.
typedef struct {
    uint32_t count;
    uint64_t total_ms, max_ms;
} s_drains_t;

//  Node n is drained, as `shoal drain` does: marked draining, it keeps its
//  tasks only until caught-up copies elsewhere take them, and the drain
//  waits until it holds none in any role and, if it leads, no move it made
//  is halfway (shoal_peer_drained), or the limit passed. Returns
//  false, with a violation, when it did not get there.
static bool
s_drain (sim_run_t *run, uint32_t n)
{
    shoal_sim_t *sim = run->sim;
    uint64_t begin = shoal_sim_now (sim), until = begin + SIM_LIMIT_MS (run);
    if (shoal_sim_cordon (sim, n, SHOAL_CORDON_DRAINING) != 0) {
        sim_violation (run, "node %u refused to drain", n);
        return false;
    }
    while (!shoal_sim_drained (sim, n) && shoal_sim_now (sim) < until)
        sim_run_until (run, shoal_sim_now (sim) + 10, NULL);
    if (!shoal_sim_drained (sim, n)) {
        sim_violation (run, "node %u still held tasks %llu s after its drain began", n,
                       (unsigned long long) SIM_LIMIT_MS (run) / 1000);
        return false;
    }
    s_drains_t *drains = run->state;
    if (drains) {
        uint64_t took = shoal_sim_now (sim) - begin;
        drains->count++;
        drains->total_ms += took;
        drains->max_ms = took > drains->max_ms ? took : drains->max_ms;
    }
    return true;
}

//  The drain scenarios keep their drains' times.
static int
s_drains_setup (sim_run_t *run, shoal_sim_config_t *config)
{
    (void) config;
    run->state = calloc (1, sizeof (s_drains_t));
    return run->state ? 0 : -1;
}

//  The highest-numbered quarter of the nodes leave, but never the leader.
static void
s_scale_in_fault (sim_run_t *run)
{
    uint32_t nodes = run->options->nodes;
    uint32_t leader = sim_acting_leader (run), leaving = (nodes + 3) / 4;
    uint32_t *gone = calloc (leaving, sizeof *gone);
    uint32_t count = 0;
    for (uint32_t n = nodes; gone && n-- > 0 && count < leaving;)
        if (n != leader)
            gone[count++] = n;
    s_leave (run, gone, count);
    free (gone);
}

//  Every node in turn leaves and starts again, once the tasks are balanced
//  after the last one; drained first when drain says so. ms_rolling: from
//  the first node's turn until the tasks are balanced after the last one.
static void
s_rolling (sim_run_t *run, bool drain)
{
    uint32_t nodes = run->options->nodes;
    uint32_t n = 0;
    for (; n < nodes; n++) {
        if (drain && !s_drain (run, n))
            break;
        s_leave (run, &n, 1);
        shoal_sim_start (run->sim, n, (n + 1) % nodes);
        if (!sim_run_until (run, shoal_sim_now (run->sim) + SIM_LIMIT_MS (run), sim_tasks_balanced))
            break;
    }
    if (n == nodes)
        sim_measure (run, "ms_rolling", shoal_sim_now (run->sim) - run->start_ms);
    else
        sim_violation (run, "the rolling restart stopped at node %u of %u", n, nodes);
}

static void
s_rolling_restart_fault (sim_run_t *run)
{
    s_rolling (run, false);
}

static void
s_rolling_drain_fault (sim_run_t *run)
{
    s_rolling (run, true);
}

//  The node with the most tasks (not the leader) is drained, then leaves.
static void
s_drain_owner_fault (sim_run_t *run)
{
    run->subject = s_owner (run);
    if (run->subject != SHOAL_SIM_NONE && s_drain (run, run->subject))
        s_leave (run, &run->subject, 1);
}

//  A drain moves every stateful task only once a caught-up copy can take
//  it over: none may start cold.
static void
s_drain_measure (sim_run_t *run)
{
    shoal_sim_task_stats_t after;
    shoal_sim_task_stats (run->sim, &after);
    uint64_t cold = after.cold_starts - run->before.cold_starts;
    s_drains_t *drains = run->state;
    sim_measure (run, "drains", drains->count);
    sim_measure (run, "drain_ms_total", drains->total_ms);
    sim_measure (run, "drain_ms_max", drains->max_ms);
    if (cold)
        sim_violation (run, "%llu stateful tasks started cold during a drain",
                       (unsigned long long) cold);
}

//  --------------------------------------------------------------------
//  Partitions

//  Held for --duration, then healed.
static void
s_hold_and_heal (sim_run_t *run)
{
    sim_run_until (run, run->start_ms + run->options->duration_ms, NULL);
    sim_heal (run->sim);
    run->healed = shoal_sim_now (run->sim);
}

static void
s_split_halves (sim_run_t *run)
{
    for (uint32_t n = run->options->nodes / 2; n < run->options->nodes; n++)
        shoal_sim_set_group (run->sim, n, 1);
    shoal_sim_block (run->sim, 0, 1, true);
    shoal_sim_block (run->sim, 1, 0, true);
}

static void
s_halves_fault (sim_run_t *run)
{
    s_split_halves (run);
    s_hold_and_heal (run);
}

static void
s_bridge_fault (sim_run_t *run)
{
    s_split_halves (run);
    shoal_sim_set_group (run->sim, 0, 2); //  reaches both halves
    s_hold_and_heal (run);
}

//  The leader's messages are lost, not those to it.
static void
s_one_way_fault (sim_run_t *run)
{
    uint32_t leader = sim_acting_leader (run);
    if (leader != SHOAL_SIM_NONE)
        shoal_sim_set_group (run->sim, leader, 1);
    shoal_sim_block (run->sim, 1, 0, true);
    s_hold_and_heal (run);
}

//  A leader that stops acting and acts again with the same term must not
//  forget what it granted meanwhile (docs/handoff.md): an owner pauses for
//  2 leases and 5 s; 3.5 s before it resumes, the leader stops hearing the
//  others for 4 s.
static void
s_deaf_leader_fault (sim_run_t *run)
{
    shoal_sim_t *sim = run->sim;
    uint32_t leader = sim_acting_leader (run);
    run->subject = s_owner (run);
    if (run->subject != SHOAL_SIM_NONE)
        shoal_sim_pause (sim, run->subject, 2 * s_lease (run) + 5000);
    sim_run_until (run, run->start_ms + 2 * s_lease (run) + 3500, NULL);
    if (leader != SHOAL_SIM_NONE) {
        shoal_sim_set_group (sim, leader, 1);
        shoal_sim_block (sim, 0, 1, true);
    }
    sim_run_until (run, shoal_sim_now (sim) + 4000, NULL);
    sim_heal (sim);
}

//  --------------------------------------------------------------------
//  Random faults

static void
s_random_tasks_fault (sim_run_t *run)
{
    if (run->options->submit)
        run->state = calloc (1, sizeof (sim_submits_t));
    sim_random_faults (run, run->state);
    sim_heal (run->sim);
    shoal_sim_set_loss (run->sim, 0);
    sim_measure (run, "faults", run->options->faults);
}

//  With --submit: the jobs answered ok the leader lacks are lost.
static void
s_random_tasks_measure (sim_run_t *run)
{
    sim_submits_t *submits = run->state;
    if (!submits)
        return;
    bool ok[SIM_FAULTS_MAX] = { false };
    uint32_t acked = 0;
    for (uint32_t j = 0; j < submits->count; j++) {
        uint8_t code = SHOAL_REPLY_FAILED;
        uint32_t parallelism;
        ok[j] = submits->refs[j] &&
                shoal_sim_reply (run->sim, submits->refs[j], &code, &parallelism) == 0 &&
                code == SHOAL_REPLY_OK;
        acked += ok[j];
    }
    uint32_t lost = sim_lost_jobs (run, submits->names, submits->parallelism, ok, submits->count);
    sim_measure (run, "jobs_acked", acked);
    sim_measure (run, "lost_jobs", lost);
    if (lost)
        sim_violation (run, "%u jobs answered ok were lost", lost);
}

//  --------------------------------------------------------------------
//  The family

bool
sim_tasks_ready (sim_run_t *run)
{
    shoal_sim_t *sim = run->sim;
    uint64_t begin = shoal_sim_now (sim);
    if (!sim_run_until (run, begin + SIM_LIMIT_MS (run),
                        run->ready ? run->ready : sim_tasks_balanced)) {
        sim_violation (run, "the tasks were not placed and balanced within %llu s of settling",
                       (unsigned long long) SIM_LIMIT_MS (run) / 1000);
        return false;
    }
    sim_measure (run, "ms_to_placed", shoal_sim_now (sim) - begin);
    shoal_sim_task_stats (sim, &run->before);
    sim_measure (run, "activations", run->before.activations);
    run->gaps_before = run->before.gap_count;
    run->start_ms = shoal_sim_now (sim);
    return true;
}

static int
s_gap_compare (const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
    return x < y ? -1 : x > y;
}

//  The stretches without an active since the tasks were placed: how many,
//  and their median, 99th percentile and longest.
static void
s_measure_gaps (sim_run_t *run, const shoal_sim_task_stats_t *after)
{
    size_t gap_count = after->gap_count - run->gaps_before;
    uint64_t *gaps = calloc (gap_count ? gap_count : 1, sizeof *gaps);
    if (!gaps)
        return;
    if (gap_count) {
        memcpy (gaps, after->gaps + run->gaps_before, gap_count * sizeof *gaps);
        qsort (gaps, gap_count, sizeof *gaps, s_gap_compare);
    }
    sim_measure (run, "gaps", gap_count);
    sim_measure (run, "gap_p50_ms", gap_count ? gaps[gap_count / 2] : 0);
    sim_measure (run, "gap_p99_ms", gap_count ? gaps[(gap_count * 99) / 100] : 0);
    sim_measure (run, "gap_max_ms", gap_count ? gaps[gap_count - 1] : 0);
    free (gaps);
}

//  What the tasks went through since they were placed.
static void
s_measure_tasks (sim_run_t *run)
{
    shoal_sim_task_stats_t after;
    shoal_sim_task_stats (run->sim, &after);
    sim_measure (run, "double_active_ms", after.double_active_ms);
    if (run->options->fenced)
        sim_measure (run, "fenced_out", after.fenced_out);
    sim_measure (run, "unavailable_ms", after.unavailable_ms - run->before.unavailable_ms);
    sim_measure (run, run->moves, after.activations - run->before.activations);
    sim_measure (run, "cold_starts", after.cold_starts - run->before.cold_starts);
    s_measure_gaps (run, &after);
    //  What the acting leader's handoff did in its office: how often it ran
    //  the assignor, and the actives it granted.
    shoal_handoff_stats_t stats;
    sim_leader_handoff_stats (run, &stats);
    sim_measure (run, "leader_computations", stats.computations);
    sim_measure (run, "leader_grants", stats.grants);
    if (after.double_active_ms)
        sim_violation (run,
                       "tasks ran as active on two nodes for %llu ms in all, %s first, at %llu ms",
                       (unsigned long long) after.double_active_ms,
                       after.first_double_task ? after.first_double_task : "?",
                       (unsigned long long) after.first_double_ms);
}

void
sim_tasks_liveness (sim_run_t *run)
{
    shoal_sim_t *sim = run->sim;
    const sim_scenario_t *scenario = run->options->scenario;
    if (run->subject != SHOAL_SIM_NONE)
        sim_measure (run, "subject", run->subject);
    run->finished = sim_run_until (run, run->start_ms + SIM_LIMIT_MS (run), scenario->done);
    sim_measure (run, "ms_to_balanced", shoal_sim_now (sim) - run->start_ms);
    if (run->healed)
        sim_measure (run, "ms_to_balanced_after_heal", shoal_sim_now (sim) - run->healed);
    if (scenario->measure)
        scenario->measure (run);
    s_measure_tasks (run);
    if (!run->finished)
        sim_violation (run, "the tasks were not balanced within %llu s after the fault",
                       (unsigned long long) SIM_LIMIT_MS (run) / 1000);
}

static const sim_scenario_t s_scenarios[] = {
    { "scale-out", "  scale-out         a quarter of the nodes join the loaded cluster\n",
      s_late_quarter, s_scale_out_fault, sim_tasks_balanced, NULL },
    { "crash-owner", "  crash-owner       a node that runs tasks (not the leader) crashes\n", NULL,
      s_crash_owner_fault, sim_tasks_balanced, NULL },
    { "crash-leader", "  crash-leader      the leader, which runs tasks too, crashes\n", NULL,
      s_crash_leader_fault, sim_tasks_balanced, NULL },
    { "crash-leader-tenth",
      "  crash-leader-tenth\n"
      "                    the leader and a tenth of the others crash at once\n",
      NULL, s_crash_leader_tenth_fault, sim_tasks_balanced, NULL },
    { "pause-owner", "  pause-owner       a node that runs tasks pauses past twice its lease\n",
      NULL, s_pause_owner_fault, sim_tasks_balanced, NULL },
    { "cold-start",
      "  cold-start        no fault: the N nodes started together with the job;\n"
      "                    activations (must be --tasks: each placed once), then\n"
      "                    30 s more: moves_after (must be 0)\n",
      NULL, s_cold_start_fault, sim_tasks_balanced, s_cold_start_measure },
    { "leader-crash-mid-handoff",
      "  leader-crash-mid-handoff\n"
      "                    a quarter of the nodes join, and the leader crashes in\n"
      "                    the middle of the first handoff\n",
      s_late_quarter, s_mid_handoff_fault, sim_tasks_balanced, NULL },
    { "random-tasks", "  random-tasks      --faults K faults as in random, with the tasks\n", NULL,
      s_random_tasks_fault, sim_tasks_balanced, s_random_tasks_measure },
    { "scale-in",
      "  scale-in          a quarter of the nodes (not the leader) leave gracefully:\n"
      "                    each stays until its tasks moved, then stops\n",
      NULL, s_scale_in_fault, sim_tasks_balanced, NULL },
    { "halves-tasks", "  halves-tasks      two halves apart for --duration, then healed\n", NULL,
      s_halves_fault, sim_tasks_balanced, NULL },
    { "bridge-tasks", "  bridge-tasks      the same, with node 0 reaching both halves\n", NULL,
      s_bridge_fault, sim_tasks_balanced, NULL },
    { "one-way-tasks",
      "  one-way-tasks     the leader's messages are lost for --duration, not\n"
      "                    those to it; these three also report\n"
      "                    ms_to_balanced_after_heal\n",
      NULL, s_one_way_fault, sim_tasks_balanced, NULL },
    { "rolling-restart",
      "  rolling-restart   every node in turn leaves gracefully and starts again,\n"
      "                    once the tasks are balanced after the last one\n",
      NULL, s_rolling_restart_fault, sim_tasks_balanced, NULL },
    { "rolling-drain",
      "  rolling-drain     the same, but each node is first drained: it keeps its\n"
      "                    tasks until caught-up copies take them (cold_starts\n"
      "                    must be 0); both report ms_rolling\n",
      s_drains_setup, s_rolling_drain_fault, sim_tasks_balanced, s_drain_measure },
    { "drain-owner",
      "  drain-owner       the node with the most tasks (not the leader) is drained,\n"
      "                    then leaves (cold_starts must be 0)\n",
      s_drains_setup, s_drain_owner_fault, sim_tasks_balanced, s_drain_measure },
    { "deaf-leader",
      "  deaf-leader       an owner pauses for 2 leases and 5 s; 3.5 s before it\n"
      "                    resumes, the leader stops hearing the others for 4 s (it\n"
      "                    stops acting, then acts again with its term); with\n"
      "                    --backlog 32 the owner misses its revocation\n",
      NULL, s_deaf_leader_fault, sim_tasks_balanced, NULL },
};

const sim_family_t sim_family_tasks = {
    .help = "\n"
            "task scenarios (membership, election and the handoff of --tasks tasks of one\n"
            "job; each first waits for every task to have one active, ms_to_placed, and\n"
            "reports double_active_ms (must be 0), unavailable_ms (task time without an\n"
            "active), gaps and gap_p50_ms, gap_p99_ms, gap_max_ms (stretches without\n"
            "one), moves (a node began to run a task as active), cold_starts (of\n"
            "those, a stateful task where no caught-up copy was), ms_to_balanced\n"
            "after the fault, and leader_computations and leader_grants (the acting\n"
            "leader's runs of the assignor and actives granted, in its office)):\n",
    .election = true,
    .tasks = true,
    .ready = sim_tasks_ready,
    .liveness = sim_tasks_liveness,
    .scenarios = s_scenarios,
    .count = sizeof s_scenarios / sizeof s_scenarios[0],
};

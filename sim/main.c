/*  sim/main.c: shoal-sim, membership, election and tasks under simulated
    faults.

    Builds a cluster of N simulated nodes for one scenario and lets it
    settle, then plays the scenario in two phases, as TigerBeetle's VOPR
    does: a safety phase (the fault) and a liveness phase (what the cluster
    must come back to once the fault is over), with the invariants checked
    all through (checkers.c). It prints one report: what the scenario
    measures, the network's cost per node, the invariants broken (an empty
    list when all held), the seed, and how fast the simulation ran.

    The scenarios are in their families' files (scenarios_*.c; see
    scenario.h), the options in options.c.

    Exit status: 0 when the scenario ran and every invariant held, 1 when an
    invariant broke or the scenario did not finish, 2 on a usage error.
*/
#include "sim/checkers.h"
#include "sim/scenario.h"
#include "wire/envelope.h"
#include "wire/splitmix.h"

#include <jansson.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

const char *const sim_profile_names[SIM_PROFILE_COUNT] = { "lan", "loopback", "wan" };

const sim_family_t *const sim_families[] = { &sim_family_membership, &sim_family_leader,
                                             &sim_family_tasks, &sim_family_jobs, NULL };

//  The job every node holds from the start: "web", of --tasks tasks
//  web/0 .. web/N-1; and in fail-everywhere, "bad", of 4.
static int
s_set_jobs (sim_run_t *run)
{
    const sim_options_t *options = run->options;
    shoal_jobspec_t jobs[] = {
        { .name = "web",
          .parallelism = options->tasks,
          .stateful = !options->stateless,
          .weight = 1,
          .fenced = options->fenced },
        { .name = "bad", .parallelism = 4, .stateful = !options->stateless, .weight = 1 },
    };
    return shoal_sim_set_jobs (run->sim, jobs, run->job_count);
}

//  Starts nodes 1 .. count - 1, node n joining through node 0 at a random
//  moment of its share of the first two seconds (so that even 10,000 nodes
//  arrive a few per millisecond, not all at once).
static void
s_start_joining (sim_run_t *run, uint32_t count)
{
    shoal_sim_t *sim = run->sim;
    uint64_t start = shoal_sim_now (sim);
    for (uint32_t n = 1; n < count; n++) {
        uint64_t share = SIM_JOIN_MS / count;
        shoal_sim_run (sim, start + (uint64_t) n * SIM_JOIN_MS / count +
                                (share ? splitmix_next (&run->random) % share : 0));
        shoal_sim_start (sim, n, 0);
    }
}

//  --settled: starts nodes 1 .. count - 1 at once, every node holding every
//  other as old news (shoal_sim_settle). False when memory is short.
static bool
s_start_settled (sim_run_t *run, uint32_t count)
{
    for (uint32_t n = 1; n < count; n++)
        shoal_sim_start (run->sim, n, SHOAL_SIM_NONE);
    if (shoal_sim_settle (run->sim) == 0)
        return true;
    sim_violation (run, "out of memory for a settled start");
    return false;
}

//  Starts nodes 0 .. count - 1, joining or settled, and waits for one view
//  everywhere.
static bool
s_settle (sim_run_t *run, uint32_t count)
{
    shoal_sim_t *sim = run->sim;
    shoal_sim_start (sim, 0, SHOAL_SIM_NONE);
    if (!run->options->settled)
        s_start_joining (run, count);
    else if (!s_start_settled (run, count))
        return false;
    return sim_run_until (run, shoal_sim_now (sim) + SIM_SETTLE_LIMIT_MS (run), sim_settled);
}

//  The world: the cluster settled, on a clean network; the scenario then
//  runs on the lossy one, if asked for. False when it did not settle.
static bool
s_build (sim_run_t *run)
{
    shoal_sim_t *sim = run->sim;
    if (run->options->family->tasks && s_set_jobs (run) != 0) {
        sim_violation (run, "out of memory");
        return false;
    }
    if (!s_settle (run, run->options->nodes - run->joining)) {
        sim_violation (run, "the cluster did not settle in %llu s",
                       (unsigned long long) SIM_SETTLE_LIMIT_MS (run) / 1000);
        return false;
    }
    sim_measure (run, "ms_to_settle", shoal_sim_now (sim));
    shoal_sim_set_loss (sim, run->options->loss_ppm);
    run->start_ms = shoal_sim_now (sim);
    shoal_sim_stats (sim, &run->at_start);
    run->pick = splitmix_next (&run->random);
    return true;
}

//  Plays the scenario: the world, what its family waits for, the safety
//  phase, the liveness phase; then, the faults over (loss is one), one view
//  everywhere.
static void
s_play (sim_run_t *run)
{
    const sim_options_t *options = run->options;
    const shoal_membership_config_t *membership = &run->config->membership;
    shoal_sim_t *sim = run->sim;
    run->bound = shoal_membership_suspicion_ms (membership, options->nodes, 0) +
                 4 * membership->probe_interval_ms;
    //  The scenario's own choices (join times, which node) come from the
    //  seed too, apart from the simulator's.
    run->random = options->seed ^ 0x5ce0a210ull;
    if (!s_build (run))
        return;
    if (options->family->ready (run)) {
        options->scenario->fault (run);
        options->family->liveness (run);
    }
    run->end_ms = shoal_sim_now (sim);
    shoal_sim_set_loss (sim, 0);
    //  (A scenario whose liveness is one view everywhere has it already.)
    if (run->finished && options->scenario->done != sim_settled &&
        !sim_run_until (run, shoal_sim_now (sim) + SIM_SETTLE_LIMIT_MS (run), sim_settled))
        sim_violation (run, "views did not converge within %llu s after the scenario",
                       (unsigned long long) SIM_SETTLE_LIMIT_MS (run) / 1000);
    if (!run->finished)
        sim_violation (run, "the scenario did not finish within %llu s",
                       (unsigned long long) SIM_LIMIT_MS (run) / 1000);
}

//  The simulator's config for the options and the scenario.
static void
s_configure (const sim_options_t *options, shoal_sim_config_t *config)
{
    shoal_sim_config_default (config);
    if (options->profile == SIM_PROFILE_LOOPBACK) {
        shoal_membership_config_loopback (&config->membership);
        shoal_elector_config_loopback (&config->elector);
        shoal_tasks_config_loopback (&config->node_tasks);
        shoal_handoff_config_loopback (&config->handoff);
        shoal_jobs_config_loopback (&config->jobs);
    } else if (options->profile == SIM_PROFILE_WAN) {
        shoal_membership_config_wan (&config->membership);
        shoal_elector_config_wan (&config->elector);
        shoal_tasks_config_wan (&config->node_tasks);
        shoal_handoff_config_wan (&config->handoff);
        shoal_jobs_config_wan (&config->jobs);
    }
    config->election = options->family->election;
    config->tasks = options->family->tasks;
    config->backlog = options->backlog;
    config->handoff.max_starting = options->max_starting;
    config->unreachable = !options->silent_crash;
    config->app_fail_ppm = options->fail_ppm;
    config->elector.quorum = !options->available;
}

//  The run, its scenario set up, and the world it plays on; -1 when memory
//  is short.
static int
s_run_new (sim_run_t *run, const sim_options_t *options, shoal_sim_config_t *config)
{
    *run = (sim_run_t){ .options = options,
                        .config = config,
                        .job_count = 1,
                        .subject = SHOAL_SIM_NONE,
                        .moves = "moves" };
    run->measures = json_object ();
    if (!run->measures || sim_checks_init (&run->checks, options->nodes, config->election,
                                           config->elector.quorum) != 0)
        return -1;
    if (options->scenario->setup && options->scenario->setup (run, config) != 0)
        return -1;
    run->sim = shoal_sim_new (config, options->nodes, options->seed);
    if (!run->sim)
        return -1;
    shoal_sim_observe (run->sim, sim_check_member_event, run);
    shoal_sim_observe_leaders (run->sim, sim_check_leader_event, run);
    shoal_sim_observe_steps (run->sim, sim_check_node, run);
    return 0;
}

static void
s_run_free (sim_run_t *run)
{
    json_decref (run->measures);
    sim_checks_free (&run->checks);
    free (run->state);
    shoal_sim_destroy (&run->sim);
}

static double
s_wall (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

//  The network's cost, measured over the scenario: from the settled
//  cluster to the end of the scenario's fault or join. bytes are the
//  encoded messages; sealed bytes add what the node wraps each one in (a
//  sealed envelope: header, nonce and tag, wire/envelope.h), which is what
//  a real node puts on the wire before UDP, TCP and IP headers, and the
//  figure to hold against another system's.
static void
s_report_network (const sim_run_t *run, const shoal_sim_stats_t *stats, json_t *report)
{
    double window = (double) (run->end_ms - run->start_ms) / 1000.0;
    double per_node_s = window > 0 ? 1.0 / run->options->nodes / window : 0;
    uint64_t sent = stats->sent - run->at_start.sent, bytes = stats->bytes - run->at_start.bytes;
    json_object_set_new (report, "msgs_per_node_per_s", json_real ((double) sent * per_node_s));
    json_object_set_new (report, "bytes_per_node_per_s", json_real ((double) bytes * per_node_s));
    json_object_set_new (
        report, "sync_bytes_per_node_per_s",
        json_real ((double) (stats->frame_bytes - run->at_start.frame_bytes) * per_node_s));
    json_object_set_new (
        report, "wire_bytes_per_node_per_s",
        json_real ((double) (bytes + sent * SHOAL_ENVELOPE_OVERHEAD) * per_node_s));
}

//  The report: the run, what the scenario measured, the network, the speed.
static json_t *
s_report (sim_run_t *run, double wall)
{
    const sim_options_t *options = run->options;
    shoal_sim_stats_t stats;
    shoal_sim_stats (run->sim, &stats);
    double seconds = (double) shoal_sim_now (run->sim) / 1000.0;
    json_t *report =
        json_pack ("{s:s, s:i, s:I, s:f, s:s}", "scenario", options->scenario->name, "nodes",
                   (int) options->nodes, "seed", (json_int_t) options->seed, "loss",
                   options->loss_ppm / 1000000.0, "profile", sim_profile_names[options->profile]);
    if (options->settled)
        json_object_set_new (report, "start", json_string ("settled"));
    json_object_update (report, run->measures);
    s_report_network (run, &stats, report);
    json_object_set_new (report, "simulated_s", json_real (seconds));
    json_object_set_new (report, "wall_s", json_real (wall));
    json_object_set_new (report, "simulated_s_per_wall_s",
                         json_real (wall > 0 ? seconds / wall : 0));
    json_object_set_new (
        report, "network",
        json_pack ("{s:I, s:I, s:I, s:I, s:I, s:I}", "sent", (json_int_t) stats.sent, "lost",
                   (json_int_t) stats.lost, "blocked", (json_int_t) stats.blocked, "undeliverable",
                   (json_int_t) stats.undeliverable, "delivered", (json_int_t) stats.delivered,
                   "codec_errors", (json_int_t) stats.codec_errors));
    sim_check_stall (run);
    if (stats.codec_errors)
        sim_violation (run, "%llu messages failed to encode or decode",
                       (unsigned long long) stats.codec_errors);
    json_object_set (report, "violations", run->checks.violations);
    return report;
}

//  As JSON, or one line per field.
static void
s_print (json_t *report, bool json)
{
    if (json) {
        json_dumpf (report, stdout, JSON_INDENT (2));
        printf ("\n");
        return;
    }
    const char *key;
    json_t *value;
    json_object_foreach (report, key, value)
    {
        char *text = json_dumps (value, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION (6));
        printf ("%-26s %s\n", key, text ? text : "?");
        free (text);
    }
}

int
main (int argc, char **argv)
{
    sim_options_t options;
    int rc = sim_options_parse (argc, argv, &options);
    if (rc != 0)
        return rc;
    //  Large blocks (every table, every sync frame in flight) from their own
    //  mappings, given back when freed. With glibc's default, the threshold
    //  rises after the first large frees, and thousands of frames of a join
    //  storm leave the heap holed: 10,000 nodes then ran out of 24 GB.
    mallopt (M_MMAP_THRESHOLD, 128 * 1024);
    shoal_sim_config_t config;
    s_configure (&options, &config);
    sim_run_t run;
    if (s_run_new (&run, &options, &config) != 0) {
        fprintf (stderr, "shoal-sim: out of memory\n");
        return 1;
    }
    double wall = s_wall ();
    s_play (&run);
    wall = s_wall () - wall;
    json_t *report = s_report (&run, wall);
    s_print (report, options.json);
    rc = json_array_size (run.checks.violations) == 0 && run.finished ? 0 : 1;
    json_decref (report);
    s_run_free (&run);
    return rc;
}

/*  sim/scenarios_membership.c: the membership scenarios (join, crash,
    steady, partition): SWIM with Lifeguard alone, no election.
*/
#include "sim/scenario.h"

#include <stdlib.h>

//  What a membership scenario sees of the events, per node.
typedef struct {
    uint64_t done_ms;          //  when the last node knew, or had it dead
    uint64_t first_suspect_ms; //  crash: UINT64_MAX until then
    uint64_t first_dead_ms;    //  crash: UINT64_MAX until then
    uint32_t count;            //  nodes that know the subject (join), have it dead (crash)
    uint32_t others_dead;      //  crash: dead verdicts on any other node
    uint8_t *seen;             //  which (join, crash)
    uint8_t *suspected;        //  steady: ever suspected, once counting
    uint8_t *declared_dead;    //  steady: ever declared dead, once counting
} s_state_t;

static int
s_setup (sim_run_t *run, shoal_sim_config_t *config, sim_watch_fn *watch)
{
    (void) config;
    uint32_t nodes = run->options->nodes;
    s_state_t *state = calloc (1, sizeof *state + 3 * (size_t) nodes);
    if (!state)
        return -1;
    state->first_suspect_ms = UINT64_MAX;
    state->first_dead_ms = UINT64_MAX;
    state->seen = (uint8_t *) (state + 1);
    state->suspected = state->seen + nodes;
    state->declared_dead = state->suspected + nodes;
    run->state = state;
    run->watch = watch;
    return 0;
}

//  --------------------------------------------------------------------
//  join: one node joins a settled cluster

static void
s_join_watch (sim_run_t *run, uint64_t now_ms, uint32_t observer, uint32_t subject,
              const shoal_membership_event_t *event)
{
    s_state_t *state = run->state;
    if (event->type == SHOAL_MEMBERSHIP_UP && subject == run->subject && !state->seen[observer]) {
        state->seen[observer] = 1;
        if (++state->count + 1 == shoal_sim_size (run->sim))
            state->done_ms = now_ms;
    }
}

static int
s_join_setup (sim_run_t *run, shoal_sim_config_t *config)
{
    run->joining = 1; //  the last node, once the others settled
    return s_setup (run, config, s_join_watch);
}

static void
s_join_fault (sim_run_t *run)
{
    uint32_t nodes = run->options->nodes;
    run->subject = nodes - 1;
    shoal_sim_start (run->sim, run->subject, (uint32_t) (run->pick % (nodes - 1)));
}

static bool
s_all_know (sim_run_t *run)
{
    s_state_t *state = run->state;
    return state->count + 1 >= shoal_sim_size (run->sim);
}

static void
s_join_measure (sim_run_t *run)
{
    s_state_t *state = run->state;
    uint64_t gossip = run->config->membership.gossip_interval_ms;
    uint64_t ms = (run->finished ? state->done_ms : shoal_sim_now (run->sim)) - run->start_ms;
    sim_measure (run, "ms_to_all", ms);
    sim_measure (run, "rounds_to_all", (ms + gossip - 1) / gossip);
    sim_measure (run, "knowing", state->count);
}

//  --------------------------------------------------------------------
//  crash: one node crashes

static void
s_crash_watch (sim_run_t *run, uint64_t now_ms, uint32_t observer, uint32_t subject,
               const shoal_membership_event_t *event)
{
    s_state_t *state = run->state;
    if (event->type == SHOAL_MEMBERSHIP_SUSPECT && subject == run->subject &&
        state->first_suspect_ms == UINT64_MAX)
        state->first_suspect_ms = now_ms;
    if (event->type == SHOAL_MEMBERSHIP_DEAD && subject != run->subject)
        state->others_dead++;
    if (event->type == SHOAL_MEMBERSHIP_DEAD && subject == run->subject && !state->seen[observer]) {
        if (state->first_dead_ms == UINT64_MAX)
            state->first_dead_ms = now_ms;
        state->seen[observer] = 1;
        if (++state->count + 1 == shoal_sim_size (run->sim))
            state->done_ms = now_ms;
    }
}

static int
s_crash_setup (sim_run_t *run, shoal_sim_config_t *config)
{
    return s_setup (run, config, s_crash_watch);
}

static void
s_crash_fault (sim_run_t *run)
{
    run->subject = (uint32_t) (run->pick % run->options->nodes);
    sim_crash (run, run->subject);
}

static bool
s_all_dead (sim_run_t *run)
{
    s_state_t *state = run->state;
    return state->count + 1 >= shoal_sim_size (run->sim);
}

static void
s_crash_measure (sim_run_t *run)
{
    s_state_t *state = run->state;
    uint64_t ms = (run->finished ? state->done_ms : shoal_sim_now (run->sim)) - run->start_ms;
    sim_measure (run, "crashed", run->subject);
    json_object_set_new (
        run->measures, "ms_first_suspect",
        state->first_suspect_ms == UINT64_MAX
            ? json_null ()
            : json_integer ((json_int_t) (state->first_suspect_ms - run->start_ms)));
    sim_measure (run, "ms_all_dead", ms);
    sim_measure (run, "nodes_with_it_dead", state->count);
    //  (Only from a settled start, so that the reports of the runs from
    //  scratch stay as they were.)
    if (run->options->settled && state->first_dead_ms != UINT64_MAX)
        sim_measure (run, "ms_first_dead", state->first_dead_ms - run->start_ms);
    if (run->options->settled)
        sim_measure (run, "others_dead", state->others_dead);
}

//  --------------------------------------------------------------------
//  steady: no fault, with --loss and --stall

static void
s_steady_watch (sim_run_t *run, uint64_t now_ms, uint32_t observer, uint32_t subject,
                const shoal_membership_event_t *event)
{
    (void) now_ms;
    (void) observer;
    s_state_t *state = run->state;
    if (run->counting && event->type == SHOAL_MEMBERSHIP_SUSPECT)
        state->suspected[subject] = 1;
    if (run->counting && event->type == SHOAL_MEMBERSHIP_DEAD)
        state->declared_dead[subject] = 1;
}

static int
s_steady_setup (sim_run_t *run, shoal_sim_config_t *config)
{
    return s_setup (run, config, s_steady_watch);
}

static uint32_t
s_stalling (const sim_options_t *options)
{
    return options->stall < options->nodes ? options->stall : options->nodes;
}

//  Each staller pauses 2 s out of every 10, at its own offset.
static void
s_steady_fault (sim_run_t *run)
{
    shoal_sim_t *sim = run->sim;
    uint32_t nodes = run->options->nodes, stall = s_stalling (run->options);
    uint64_t end = run->start_ms + run->options->duration_ms;
    run->counting = true;
    while (shoal_sim_now (sim) < end) {
        uint64_t now = shoal_sim_now (sim);
        uint64_t second = (now - run->start_ms) / 1000;
        for (uint32_t k = 0; k < stall; k++)
            if (second % 10 == (k * 7) % 10)
                shoal_sim_pause (sim, k * (nodes / stall), 2000);
        sim_run_until (run, now + 1000 < end ? now + 1000 : end, NULL);
    }
}

static void
s_steady_measure (sim_run_t *run)
{
    s_state_t *state = run->state;
    uint32_t false_dead = 0, false_suspect = 0;
    for (uint32_t n = 0; n < run->options->nodes; n++) {
        false_dead += state->declared_dead[n];
        false_suspect += state->suspected[n];
    }
    sim_measure (run, "false_dead", false_dead);
    sim_measure (run, "false_suspect", false_suspect);
    sim_measure (run, "stalling", s_stalling (run->options));
}

//  --------------------------------------------------------------------
//  partition: two halves apart for --duration, then healed

static void
s_partition_fault (sim_run_t *run)
{
    shoal_sim_t *sim = run->sim;
    uint32_t nodes = run->options->nodes;
    for (uint32_t n = nodes / 2; n < nodes; n++)
        shoal_sim_set_group (sim, n, 1);
    shoal_sim_block (sim, 0, 1, true);
    shoal_sim_block (sim, 1, 0, true);
    sim_run_until (run, run->start_ms + run->options->duration_ms, NULL);
    shoal_sim_block (sim, 0, 1, false);
    shoal_sim_block (sim, 1, 0, false);
    run->healed = shoal_sim_now (sim);
}

static void
s_partition_measure (sim_run_t *run)
{
    sim_measure (run, "ms_to_merge", shoal_sim_now (run->sim) - run->healed);
}

//  --------------------------------------------------------------------
//  The family

//  Nothing to wait for beyond the settled cluster.
static bool
s_ready (sim_run_t *run)
{
    (void) run;
    return true;
}

//  Waits for the scenario's done from the end of the fault, if it has one.
static void
s_liveness (sim_run_t *run)
{
    const sim_scenario_t *scenario = run->options->scenario;
    uint64_t from = run->healed ? run->healed : run->start_ms;
    run->finished =
        scenario->done ? sim_run_until (run, from + SIM_LIMIT_MS (run), scenario->done) : true;
    scenario->measure (run);
}

static const sim_scenario_t s_scenarios[] = {
    { "join",
      "  join       one node joins a settled cluster: rounds_to_all, ms_to_all\n"
      "             (until every node knows it)\n",
      s_join_setup, s_join_fault, s_all_know, s_join_measure },
    { "crash",
      "  crash      one node crashes: ms_first_suspect, ms_all_dead (every live node\n"
      "             has it dead)\n",
      s_crash_setup, s_crash_fault, s_all_dead, s_crash_measure },
    { "steady",
      "  steady     no faults for --duration, with --loss and --stall: false_dead,\n"
      "             false_suspect (healthy nodes ever declared dead, or suspected)\n",
      s_steady_setup, s_steady_fault, NULL, s_steady_measure },
    { "partition",
      "  partition  a 50/50 split held for --duration, then healed: ms_to_merge (one\n"
      "             view on every node, with no rejoin)\n",
      NULL, s_partition_fault, sim_settled, s_partition_measure },
};

const sim_family_t sim_family_membership = {
    .help = "scenarios:\n",
    .ready = s_ready,
    .liveness = s_liveness,
    .scenarios = s_scenarios,
    .count = sizeof s_scenarios / sizeof s_scenarios[0],
};

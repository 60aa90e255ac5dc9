/*  sim/scenarios_jobs.c: the job scenarios: requests made to the jobs
    layer (submit, rescale) while the cluster runs "web", and a job whose
    every start fails. Of the task family (scenarios_tasks.c): each first
    waits for the tasks placed and balanced, and ends with them balanced
    again.
*/
#include "sim/scenario.h"
#include "wire/splitmix.h"

#include <stdio.h>
#include <string.h>

//  The tasks of the job fail-everywhere adds, each of whose starts fails.
#define S_FAILING_TASKS 4

//  --------------------------------------------------------------------
//  submit-leader-crash

//  Submits spec to random nodes until one answers ok (again, while the
//  answer is no leader), for up to a minute. Returns whether one did.
static bool
s_submit (sim_run_t *run, shoal_jobspec_t *spec)
{
    shoal_sim_t *sim = run->sim;
    shoal_control_req_t req = { .op = SHOAL_OP_SUBMIT, .spec = spec };
    uint64_t until = shoal_sim_now (sim) + 60000;
    bool ok = false;
    while (!ok && shoal_sim_now (sim) < until) {
        uint32_t node = (uint32_t) (splitmix_next (&run->random) % shoal_sim_size (sim));
        uint64_t ref = shoal_sim_request (sim, node, &req);
        uint8_t code = SHOAL_REPLY_FAILED;
        uint32_t parallelism;
        while (ref && shoal_sim_reply (sim, ref, &code, &parallelism) != 0 &&
               shoal_sim_now (sim) < until)
            sim_run_until (run, shoal_sim_now (sim) + 1, NULL);
        ok = ref && code == SHOAL_REPLY_OK;
        if (!ok)
            sim_run_until (run, shoal_sim_now (sim) + 500, NULL);
    }
    return ok;
}

//  Five jobs of 4 tasks; as soon as one is answered ok the acting leader
//  crashes, and it starts again 10 s later. lost_jobs counts the jobs
//  answered ok that the final acting leader does not hold.
static void
s_submit_leader_crash_fault (sim_run_t *run)
{
    shoal_sim_t *sim = run->sim;
    uint32_t nodes = shoal_sim_size (sim), acked = 0, lost = 0;
    char names[5][8];
    bool ok[5] = { false };
    for (int j = 0; j < 5; j++) {
        snprintf (names[j], sizeof names[j], "job%d", j);
        shoal_jobspec_t spec = {
            .name = names[j], .parallelism = 4, .stateful = true, .weight = 1
        };
        ok[j] = s_submit (run, &spec);
        if (!ok[j])
            continue;
        acked++;
        uint32_t leader = sim_acting_leader (run);
        if (leader == SHOAL_SIM_NONE)
            continue;
        sim_crash (run, leader);
        sim_run_until (run, shoal_sim_now (sim) + 10000, NULL);
        shoal_sim_start (sim, leader, (leader + 1) % nodes);
    }
    sim_run_until (run, shoal_sim_now (sim) + 20000, NULL);
    const uint32_t parallelism[5] = { 4, 4, 4, 4, 4 };
    lost = sim_lost_jobs (run, names, parallelism, ok, 5);
    sim_measure (run, "jobs_acked", acked);
    sim_measure (run, "lost_jobs", lost);
    if (lost)
        sim_violation (run, "%u jobs answered ok were lost", lost);
    if (acked < 5)
        sim_violation (run, "only %u of 5 submits were answered ok", acked);
}

//  --------------------------------------------------------------------
//  rescale-up, rescale-down, rescale-timeout

//  Runs until request ref is answered (or until_ms), and reports its
//  outcome and the parallelism it left as measures named with suffix.
static bool
s_await_reply (sim_run_t *run, uint64_t ref, uint64_t until_ms, const char *suffix,
               uint64_t asked_ms)
{
    uint8_t code = 0;
    uint32_t parallelism = 0;
    while (shoal_sim_reply (run->sim, ref, &code, &parallelism) != 0 &&
           shoal_sim_now (run->sim) < until_ms)
        sim_run_until (run, shoal_sim_now (run->sim) + 10, NULL);
    char name[64];
    bool answered = shoal_sim_reply (run->sim, ref, &code, &parallelism) == 0;
    if (!answered) {
        sim_violation (run, "request %llu was not answered", (unsigned long long) ref);
        return false;
    }
    snprintf (name, sizeof name, "outcome%s", suffix);
    sim_measure (run, name, code);
    snprintf (name, sizeof name, "parallelism%s", suffix);
    sim_measure (run, name, parallelism);
    snprintf (name, sizeof name, "rescale_ms%s", suffix);
    sim_measure (run, name, shoal_sim_now (run->sim) - asked_ms);
    return true;
}

//  The parallelism of job web in the specs node holds (0: none).
static uint32_t
s_web (shoal_sim_t *sim, uint32_t node)
{
    const shoal_jobspec_t *specs;
    size_t count = shoal_jobs_specs (shoal_sim_jobs (sim, node), &specs);
    for (size_t i = 0; i < count; i++)
        if (strcmp (specs[i].name, "web") == 0)
            return specs[i].parallelism;
    return 0;
}

//  Rescales web to parallelism (with min and timeout_ms) through node,
//  waits for the answer, and checks it against the specs the acting leader
//  holds then.
static void
s_rescale (sim_run_t *run, uint32_t node, uint32_t parallelism, uint32_t min, uint32_t timeout_ms,
           const char *suffix)
{
    shoal_control_req_t req = { .op = SHOAL_OP_RESCALE,
                                .job = "web",
                                .parallelism = parallelism,
                                .min = min,
                                .timeout_ms = timeout_ms };
    uint64_t asked = shoal_sim_now (run->sim);
    uint64_t ref = shoal_sim_request (run->sim, node, &req);
    if (!ref || !s_await_reply (run, ref, asked + timeout_ms + 20000, suffix, asked))
        return;
    uint8_t code;
    uint32_t applied;
    shoal_sim_reply (run->sim, ref, &code, &applied);
    uint32_t leader = sim_acting_leader (run);
    uint32_t held = leader == SHOAL_SIM_NONE ? 0 : s_web (run->sim, leader);
    if (held != applied)
        sim_violation (run, "a rescale answered %u tasks, the leader holds %u", applied, held);
    if (code == SHOAL_REPLY_OK && applied != parallelism)
        sim_violation (run, "a rescale to %u answered ok with %u", parallelism, applied);
    if (code == SHOAL_REPLY_PARTIAL && (applied < min || applied >= parallelism))
        sim_violation (run, "a partial rescale to %u (min %u) applied %u", parallelism, min,
                       applied);
}

//  Through a follower.
static void
s_rescale_up_fault (sim_run_t *run)
{
    uint32_t follower = (sim_acting_leader (run) + 1) % run->options->nodes;
    s_rescale (run, follower, run->options->tasks * 3 / 2, 0, 30000, "");
}

static void
s_rescale_down_fault (sim_run_t *run)
{
    uint32_t follower = (sim_acting_leader (run) + 1) % run->options->nodes;
    s_rescale (run, follower, run->options->tasks / 2, 0, 30000, "");
}

//  Every node has slots for 1.6 x --tasks / N tasks, and a quarter of the
//  nodes start later.
static int
s_rescale_timeout_setup (sim_run_t *run, shoal_sim_config_t *config)
{
    const sim_options_t *options = run->options;
    config->slots = (options->tasks * 8 / 5 + options->nodes - 1) / options->nodes;
    run->joining = (options->nodes + 3) / 4;
    return 0;
}

static void
s_rescale_timeout_fault (sim_run_t *run)
{
    shoal_sim_t *sim = run->sim;
    uint32_t leader = sim_acting_leader (run), tasks = run->options->tasks;
    s_rescale (run, leader, 2 * tasks, 0, 3000, "_beyond");
    s_rescale (run, leader, 2 * tasks, tasks, 3000, "_min");
    //  The late nodes start 2 s into a wait of 60 s.
    shoal_control_req_t req = {
        .op = SHOAL_OP_RESCALE, .job = "web", .parallelism = tasks * 8 / 5, .timeout_ms = 60000
    };
    uint64_t asked = shoal_sim_now (sim);
    uint64_t ref = shoal_sim_request (sim, leader, &req);
    sim_run_until (run, asked + 2000, NULL);
    for (uint32_t n = run->options->nodes - run->joining; n < run->options->nodes; n++)
        shoal_sim_start (sim, n, 0);
    s_await_reply (run, ref, asked + 70000, "_wait", asked);
}

//  --------------------------------------------------------------------
//  fail-everywhere

//  The tasks of "bad" reported failed on every node, and the others
//  balanced. (A start of one, until it fails, counts as an active:
//  balance alone may come before.)
static bool
s_failed_and_balanced (sim_run_t *run)
{
    const char *const *failed;
    return sim_failed_everywhere (run, &failed) == S_FAILING_TASKS && sim_tasks_balanced (run);
}

static int
s_fail_everywhere_setup (sim_run_t *run, shoal_sim_config_t *config)
{
    config->app_fail_job = "bad";
    run->job_count = 2;
    run->ready = s_failed_and_balanced;
    return 0;
}

//  What the leader reports failed: the tasks of bad, each node giving up on
//  each at most once. A task the leader moves away while its node starts
//  it again (for balance) starts its run of failures over if it comes
//  back: failed_starts may pass 4 x N x (1 + restarts).
static void
s_check_failed (sim_run_t *run)
{
    const char *const *failed;
    size_t count = sim_failed_everywhere (run, &failed);
    shoal_handoff_stats_t stats;
    sim_leader_handoff_stats (run, &stats);
    sim_measure (run, "failed_tasks", count);
    sim_measure (run, "gave_up", stats.gave_up);
    sim_measure (run, "failed_starts", run->before.failed_starts);
    for (size_t i = 0; i < count; i++)
        if (strncmp (failed[i], "bad/", 4) != 0)
            sim_violation (run, "%s reported failed everywhere", failed[i]);
    if (count != S_FAILING_TASKS)
        sim_violation (run, "%zu tasks reported failed everywhere, not %u", count, S_FAILING_TASKS);
    if (stats.gave_up > (uint64_t) S_FAILING_TASKS * run->options->nodes)
        sim_violation (run, "nodes gave up %llu times on %u tasks",
                       (unsigned long long) stats.gave_up, S_FAILING_TASKS);
}

//  The tasks of "bad" failed on every node before the others were
//  balanced: reported, placed nowhere, and for a minute more, and beyond,
//  never started again.
static void
s_fail_everywhere_fault (sim_run_t *run)
{
    s_check_failed (run);
    sim_run_until (run, run->start_ms + 60000, NULL);
    shoal_sim_task_stats_t later;
    shoal_sim_task_stats (run->sim, &later);
    uint64_t more = later.failed_starts - run->before.failed_starts;
    sim_measure (run, "failed_starts_after", more);
    if (more)
        sim_violation (run, "tasks failed everywhere were started %llu times more",
                       (unsigned long long) more);
}

static const sim_scenario_t s_scenarios[] = {
    { "submit-leader-crash",
      "  submit-leader-crash\n"
      "                    five jobs of 4 tasks are submitted, each to a random\n"
      "                    node; the leader crashes as soon as each is answered\n"
      "                    ok, and starts again 10 s later: lost_jobs (jobs\n"
      "                    answered ok that the final leader lacks; must be 0)\n",
      NULL, s_submit_leader_crash_fault, sim_tasks_balanced, NULL },
    { "rescale-up",
      "  rescale-up        the job is rescaled to 1.5 x --tasks through a follower:\n"
      "                    rescale_ms (to the answer), outcome (0: applied)\n",
      NULL, s_rescale_up_fault, sim_tasks_balanced, NULL },
    { "rescale-down", "  rescale-down      the job is rescaled to half of --tasks\n", NULL,
      s_rescale_down_fault, sim_tasks_balanced, NULL },
    { "rescale-timeout",
      "  rescale-timeout   every node has slots for 1.6 x --tasks / N tasks, and a\n"
      "                    quarter of the nodes start later: a rescale beyond the\n"
      "                    slots times out (outcome 4, job unchanged), one with a\n"
      "                    min gets the largest that fits (outcome 5), and one that\n"
      "                    waits gets its slots when the late nodes join (outcome 0)\n",
      s_rescale_timeout_setup, s_rescale_timeout_fault, sim_tasks_balanced, NULL },
    { "fail-everywhere",
      "  fail-everywhere   a second job, \"bad\", of 4 tasks whose every start\n"
      "                    fails: once each node gave up on them, the leader reports\n"
      "                    them, failed_tasks (must be 4), and places them nowhere;\n"
      "                    gave_up (node and task pairs, at most 4 x N),\n"
      "                    failed_starts (each node starts a task 1 + its restarts\n"
      "                    times per grant), then a minute more:\n"
      "                    failed_starts_after (must be 0)\n",
      s_fail_everywhere_setup, s_fail_everywhere_fault, sim_tasks_balanced, NULL },
};

//  Listed in --help right after the task scenarios, without a heading.
const sim_family_t sim_family_jobs = {
    .help = "",
    .election = true,
    .tasks = true,
    .ready = sim_tasks_ready,
    .liveness = sim_tasks_liveness,
    .scenarios = s_scenarios,
    .count = sizeof s_scenarios / sizeof s_scenarios[0],
};

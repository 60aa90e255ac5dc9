/*  sim/main.c: shoal-sim, membership and election under simulated faults.

    Builds a cluster of N simulated nodes, lets it settle, then plays one
    scenario and prints one report: what the scenario measures, the
    network's cost per node, the invariants broken (an empty list when all
    held), the seed, and how fast the simulation ran.

    Exit status: 0 when the scenario ran and every invariant held, 1 when an
    invariant broke or the scenario did not finish, 2 on a usage error.
*/
#include "sim/sim.h"
#include "wire/splitmix.h"

#include <getopt.h>
#include <stdarg.h>
#include <jansson.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

//  The cluster's nodes are started over this long.
#define S_JOIN_MS 2000

static const char s_usage[] =
    "usage: shoal-sim --scenario NAME [--nodes N] [--seed S] [--loss P] [--duration SECONDS]\n"
    "                 [--stall K] [--profile lan|loopback] [--available] [--json]\n"
    "\n"
    "Runs the membership protocol (SWIM with Lifeguard), and for the leader\n"
    "scenarios the election, on N simulated nodes, on a virtual clock and\n"
    "network, and reports what one scenario measures.\n"
    "\n"
    "scenarios:\n"
    "  join       one node joins a settled cluster: rounds_to_all, ms_to_all\n"
    "             (until every node knows it)\n"
    "  crash      one node crashes: ms_first_suspect, ms_all_dead (every live node\n"
    "             has it dead)\n"
    "  steady     no faults for --duration, with --loss and --stall: false_dead,\n"
    "             false_suspect (healthy nodes ever declared dead, or suspected)\n"
    "  partition  a 50/50 split held for --duration, then healed: ms_to_merge (one\n"
    "             view on every node, with no rejoin)\n"
    "\n"
    "leader scenarios (membership and election; every one first waits for one\n"
    "leader followed by all, ms_to_first_leader):\n"
    "  leader-crash      the leader crashes: ms_to_new_leader (from the crash to a\n"
    "                    leader acting, acknowledged by a majority), election_msgs\n"
    "                    (election messages sent meanwhile), ms_to_one_leader\n"
    "                    (followed by every node), leader_changes\n"
    "  leader-partition  the leader is cut off for --duration, then healed:\n"
    "                    ms_to_new_leader, ms_to_one_leader after the heal\n"
    "  halves            two halves (N/2 and the rest) apart for --duration:\n"
    "                    leaders_during, then ms_to_one_leader after the heal\n"
    "  pause-leader      the leader pauses for two leases and a second:\n"
    "                    ms_to_new_leader, ms_to_one_leader after it resumes\n"
    "  flapping          the highest-ranked node crashes for 2 s out of every 5 s\n"
    "                    for --duration: leader_changes (sticky: at most 1)\n"
    "  bridge            two halves apart for --duration, and node 0 reaching both\n"
    "  one-way           the leader's messages are lost for --duration, not those\n"
    "                    to it: ms_to_new_leader\n"
    "  random            --faults K faults one after another, each at a random\n"
    "                    moment for a random time: crashes and restarts, pauses,\n"
    "                    splits both ways and one way, a cut-off node, loss bursts;\n"
    "                    then ms_to_one_leader_after\n"
    "\n"
    "task scenarios (membership, election and the handoff of --tasks tasks of one\n"
    "job; each first waits for every task to have one active, ms_to_placed, and\n"
    "reports double_active_ms (must be 0), unavailable_ms (task time without an\n"
    "active), gaps and gap_p50_ms, gap_p99_ms, gap_max_ms (stretches without\n"
    "one), moves (a node began to run a task as active) and ms_to_balanced\n"
    "after the fault):\n"
    "  scale-out         a quarter of the nodes join the loaded cluster\n"
    "  crash-owner       a node that runs tasks (not the leader) crashes\n"
    "  pause-owner       a node that runs tasks pauses past twice its lease\n"
    "  cold-start        no fault: the N nodes started together with the job;\n"
    "                    activations (must be --tasks: each placed once), then\n"
    "                    30 s more: moves_after (must be 0)\n"
    "  leader-crash-mid-handoff\n"
    "                    a quarter of the nodes join, and the leader crashes in\n"
    "                    the middle of the first handoff\n"
    "  random-tasks      --faults K faults as in random, with the tasks\n"
    "  scale-in          a quarter of the nodes (not the leader) leave gracefully:\n"
    "                    each stays until its tasks moved, then stops\n"
    "  halves-tasks      two halves apart for --duration, then healed\n"
    "  bridge-tasks      the same, with node 0 reaching both halves\n"
    "  one-way-tasks     the leader's messages are lost for --duration, not\n"
    "                    those to it; these three also report\n"
    "                    ms_to_balanced_after_heal\n"
    "  rolling-restart   every node in turn leaves gracefully and starts again,\n"
    "                    once the tasks are balanced after the last one\n"
    "  deaf-leader       an owner pauses for 2 leases and 5 s; 3.5 s before it\n"
    "                    resumes, the leader stops hearing the others for 4 s (it\n"
    "                    stops acting, then acts again with its term); with\n"
    "                    --backlog 32 the owner misses its revocation\n"
    "  submit-leader-crash\n"
    "                    five jobs of 4 tasks are submitted, each to a random\n"
    "                    node; the leader crashes as soon as each is answered\n"
    "                    ok, and starts again 10 s later: lost_jobs (jobs\n"
    "                    answered ok that the final leader lacks; must be 0)\n"
    "  rescale-up        the job is rescaled to 1.5 x --tasks through a follower:\n"
    "                    rescale_ms (to the answer), outcome (0: applied)\n"
    "  rescale-down      the job is rescaled to half of --tasks\n"
    "  rescale-timeout   every node has slots for 1.6 x --tasks / N tasks, and a\n"
    "                    quarter of the nodes start later: a rescale beyond the\n"
    "                    slots times out (outcome 4, job unchanged), one with a\n"
    "                    min gets the largest that fits (outcome 5), and one that\n"
    "                    waits gets its slots when the late nodes join (outcome 0)\n"
    "  fail-everywhere   a second job, \"bad\", of 4 tasks whose every start\n"
    "                    fails: once each node gave up on them, the leader reports\n"
    "                    them, failed_tasks (must be 4), and places them nowhere;\n"
    "                    gave_up (node and task pairs, at most 4 x N),\n"
    "                    failed_starts (each node starts a task 1 + its restarts\n"
    "                    times per grant), then a minute more:\n"
    "                    failed_starts_after (must be 0)\n"
    "\n"
    "options:\n"
    "  --nodes N          cluster size (default 100, at most 100000)\n"
    "  --seed S           seed of every random choice (default 1): a run replays\n"
    "  --loss P           datagrams lost, as a fraction (0.01) or a percentage (1%)\n"
    "  --duration SECONDS how long steady runs and the partition holds (default 60)\n"
    "  --stall K          steady: K nodes pause 2 s out of every 10 s (default 0)\n"
    "  --profile NAME     timing: lan (default) or loopback (10x faster)\n"
    "  --available        election in available mode (default: quorum mode)\n"
    "  --faults K         random: how many faults (default 10)\n"
    "  --tasks N          task scenarios: tasks in the job (default 60)\n"
    "  --backlog N        messages a paused node's socket keeps (default 256)\n"
    "  --fail P           task scenarios: starts of a task that fail, as a\n"
    "                     fraction or a percentage (default 0)\n"
    "  --stateless        task scenarios: the job keeps no state (default: it\n"
    "                     does, so a move first warms a learner up)\n"
    "  --submit           random-tasks: submit a job of 1 to 3 tasks to a random\n"
    "                     node at the start of each fault; reports jobs_acked and\n"
    "                     lost_jobs (answered ok, then lost: a violation)\n"
    "  --json             print the report as JSON (default: one line per field)\n"
    "  --help             print this help\n"
    "\n"
    "Exit status: 0 when every invariant held, 1 when one broke or the scenario\n"
    "did not finish in its time limit, 2 on a usage error.\n";

typedef enum {
    S_JOIN,
    S_CRASH,
    S_STEADY,
    S_PARTITION,
    S_LEADER_CRASH,
    S_LEADER_PARTITION,
    S_HALVES,
    S_PAUSE_LEADER,
    S_FLAPPING,
    S_BRIDGE,
    S_ONE_WAY,
    S_RANDOM,
    S_SCALE_OUT,
    S_CRASH_OWNER,
    S_PAUSE_OWNER,
    S_COLD_START,
    S_LEADER_CRASH_MID_HANDOFF,
    S_RANDOM_TASKS,
    S_SCALE_IN,
    S_HALVES_TASKS,
    S_ROLLING_RESTART,
    S_DEAF_LEADER,
    S_SUBMIT_LEADER_CRASH,
    S_RESCALE_UP,
    S_RESCALE_DOWN,
    S_RESCALE_TIMEOUT,
    S_FAIL_EVERYWHERE,
    S_BRIDGE_TASKS,
    S_ONE_WAY_TASKS,
    S_SCENARIOS
} s_scenario_t;
static const char *s_scenario_names[] = { "join",
                                          "crash",
                                          "steady",
                                          "partition",
                                          "leader-crash",
                                          "leader-partition",
                                          "halves",
                                          "pause-leader",
                                          "flapping",
                                          "bridge",
                                          "one-way",
                                          "random",
                                          "scale-out",
                                          "crash-owner",
                                          "pause-owner",
                                          "cold-start",
                                          "leader-crash-mid-handoff",
                                          "random-tasks",
                                          "scale-in",
                                          "halves-tasks",
                                          "rolling-restart",
                                          "deaf-leader",
                                          "submit-leader-crash",
                                          "rescale-up",
                                          "rescale-down",
                                          "rescale-timeout",
                                          "fail-everywhere",
                                          "bridge-tasks",
                                          "one-way-tasks" };

typedef struct {
    s_scenario_t scenario;
    uint32_t nodes;
    uint64_t seed;
    uint32_t loss_ppm;
    uint64_t duration_ms;
    uint32_t stall;
    bool loopback;
    bool available;
    uint32_t faults;
    uint32_t tasks;
    uint32_t backlog;
    uint32_t fail_ppm;
    bool stateless;
    bool submit; //  random-tasks: a job submitted at each fault
    bool json;
} s_options_t;

//  What the observer gathers while a scenario runs.
typedef struct {
    shoal_sim_t *sim;
    uint32_t subject;          //  the node the scenario is about
    uint64_t start_ms;         //  when the scenario's fault or join happened
    uint64_t done_ms;          //  when the last node knew, or had it dead
    uint32_t knowing;          //  join: nodes that know the subject
    uint8_t *knows;            //  join: per node
    uint64_t first_suspect_ms; //  crash: UINT64_MAX until then
    uint32_t dead_count;       //  crash: nodes that have the subject dead
    uint8_t *dead;             //  crash: per node
    bool counting;             //  steady: faults are counted now
    uint8_t *suspected;        //  steady: per node, ever suspected
    uint8_t *declared_dead;    //  steady: per node, ever declared dead
    json_t *violations;
    bool stall_told; //  the livelock, if any, is among the violations
    //  Dead verdicts about nodes that were up and reachable, to check later
    //  that the verdict did not last (the subject refutes it).
    struct {
        uint32_t observer, subject;
        uint64_t due_ms;
    } * verdicts;
    size_t verdict_count, verdict_size;
    uint64_t *incarnations;     //  per node, the last seen; they never go back
    shoal_sim_stats_t at_start; //  the network's counts when the scenario began
    uint64_t end_ms;            //  when the scenario ended (before the final check)
    //  The election, in the leader scenarios.
    bool election;
    bool quorum;
    uint64_t *terms;        //  per node, the last term it persisted; never goes back
    uint32_t *term_leaders; //  per term, the node + 1 that acted with it
    uint8_t *acting;        //  per node, as its last event said
    size_t term_count;      //  terms term_leaders has room for
    uint32_t leader_starts; //  times a node began to act, since counting began
    uint64_t new_leader_ms; //  when one first began to act since then; 0 until
    uint32_t old_leader;    //  the leader the fault was about
    uint64_t election_sent; //  election messages sent until new_leader_ms
} s_run_t;

static void s_violation (s_run_t *run, const char *format, ...)
    __attribute__ ((format (printf, 2, 3)));

static void
s_violation (s_run_t *run, const char *format, ...)
{
    if (json_array_size (run->violations) >= 100)
        return; //  enough to see what went wrong
    char text[256];
    va_list args;
    va_start (args, format);
    vsnprintf (text, sizeof text, format, args);
    va_end (args);
    json_array_append_new (run->violations, json_string (text));
}

static void
s_observe (void *arg, uint64_t now_ms, uint32_t observer, uint32_t subject,
           const shoal_membership_event_t *event)
{
    s_run_t *run = arg;
    if (subject == SHOAL_SIM_NONE) {
        s_violation (run, "node %u has an event about a node no simulated node is", observer);
        return;
    }
    if (event->type == SHOAL_MEMBERSHIP_UP && subject == run->subject && run->knows &&
        !run->knows[observer]) {
        run->knows[observer] = 1;
        if (++run->knowing + 1 == shoal_sim_size (run->sim))
            run->done_ms = now_ms;
    }
    if (event->type == SHOAL_MEMBERSHIP_SUSPECT && subject == run->subject &&
        run->first_suspect_ms == UINT64_MAX)
        run->first_suspect_ms = now_ms;
    if (event->type == SHOAL_MEMBERSHIP_DEAD && subject == run->subject && run->dead &&
        !run->dead[observer]) {
        run->dead[observer] = 1;
        if (++run->dead_count + 1 == shoal_sim_size (run->sim))
            run->done_ms = now_ms;
    }
    if (run->counting && event->type == SHOAL_MEMBERSHIP_SUSPECT)
        run->suspected[subject] = 1;
    if (run->counting && event->type == SHOAL_MEMBERSHIP_DEAD)
        run->declared_dead[subject] = 1;
    //  A dead verdict about a node that is up and can reach the observer
    //  must not last longer than a suspicion can: the node refutes it.
    shoal_sim_t *sim = run->sim;
    if (event->type == SHOAL_MEMBERSHIP_DEAD && shoal_sim_node (sim, subject) &&
        shoal_sim_reachable (sim, subject, observer) &&
        shoal_sim_reachable (sim, observer, subject)) {
        if (run->verdict_count == run->verdict_size) {
            size_t size = run->verdict_size ? 2 * run->verdict_size : 64;
            void *verdicts = realloc (run->verdicts, size * sizeof *run->verdicts);
            if (!verdicts)
                return;
            run->verdicts = verdicts;
            run->verdict_size = size;
        }
        run->verdicts[run->verdict_count].observer = observer;
        run->verdicts[run->verdict_count].subject = subject;
        run->verdicts[run->verdict_count].due_ms = now_ms;
        run->verdict_count++;
    }
}

//  A node begins or stops acting as leader, or follows another.
static void
s_observe_leader (void *arg, uint64_t now_ms, uint32_t node, const shoal_elector_event_t *event)
{
    s_run_t *run = arg;
    shoal_sim_t *sim = run->sim;
    bool was_acting = run->acting[node];
    run->acting[node] =
        event->type == SHOAL_ELECTOR_LEADER && shoal_sim_index (&event->leader) == node;
    if (!run->acting[node])
        return;
    //  Two leaders acting at once begin at different moments: the later
    //  one's beginning finds the other still acting. (A leader that goes on
    //  acting with a new term says so too.)
    for (uint32_t n = 0; run->quorum && !was_acting && n < shoal_sim_size (sim); n++)
        if (n != node && shoal_sim_elector (sim, n) &&
            shoal_elector_acting (shoal_sim_elector (sim, n), now_ms))
            s_violation (run, "nodes %u and %u act as leader at once (terms %llu and %llu)", n,
                         node, (unsigned long long) shoal_elector_term (shoal_sim_elector (sim, n)),
                         (unsigned long long) event->term);
    if (event->term >= run->term_count) {
        size_t count = 2 * event->term + 16;
        uint32_t *leaders = realloc (run->term_leaders, count * sizeof *leaders);
        if (!leaders)
            return;
        memset (leaders + run->term_count, 0, (count - run->term_count) * sizeof *leaders);
        run->term_leaders = leaders;
        run->term_count = count;
    }
    uint32_t *holder = &run->term_leaders[event->term];
    if (run->quorum && *holder && *holder != node + 1)
        s_violation (run, "nodes %u and %u both led with term %llu", *holder - 1, node,
                     (unsigned long long) event->term);
    *holder = node + 1;
    if (run->counting && !was_acting) {
        run->leader_starts++;
        if (!run->new_leader_ms && node != run->old_leader) {
            shoal_sim_stats_t stats;
            shoal_sim_stats (sim, &stats);
            run->new_leader_ms = now_ms;
            run->election_sent = stats.election_sent - run->at_start.election_sent;
        }
    }
}

//  ---------------------------------------------------------------------
//  Invariants, checked every 100 simulated ms

//  Whether every node that is up holds every other up node alive, and no
//  node that is down as live: one view everywhere.
static bool
s_views_agree (shoal_sim_t *sim)
{
    uint32_t size = shoal_sim_size (sim), up = 0;
    for (uint32_t n = 0; n < size; n++)
        up += shoal_sim_node (sim, n) != NULL;
    //  Live counts first: cheap, and they differ until the views are close.
    for (uint32_t n = 0; n < size; n++)
        if (shoal_sim_node (sim, n) && shoal_membership_live (shoal_sim_node (sim, n)) != up)
            return false;
    for (uint32_t n = 0; n < size; n++) {
        shoal_membership_t *core = shoal_sim_node (sim, n);
        if (!core)
            continue;
        size_t members = shoal_membership_size (core);
        for (size_t i = 0; i < members; i++) {
            shoal_membership_member_t member;
            if (shoal_membership_member_at (core, i, &member) != 0)
                return false;
            uint32_t other = shoal_sim_index (&member.node);
            bool live = member.state == SHOAL_MEMBER_ALIVE;
            bool is_up = other != SHOAL_SIM_NONE && shoal_sim_node (sim, other) != NULL;
            if (live != is_up && member.state != SHOAL_MEMBER_LEFT)
                return false;
        }
    }
    return true;
}

static void
s_check_election (s_run_t *run)
{
    shoal_sim_t *sim = run->sim;
    uint64_t now = shoal_sim_now (sim);
    uint32_t acting = 0;
    for (uint32_t n = 0; n < shoal_sim_size (sim); n++) {
        shoal_elector_t *elector = shoal_sim_elector (sim, n);
        if (!elector)
            continue;
        shoal_elector_saved_t saved;
        shoal_elector_saved (elector, &saved);
        if (saved.term < run->terms[n])
            s_violation (run, "node %u: term went back from %llu to %llu", n,
                         (unsigned long long) run->terms[n], (unsigned long long) saved.term);
        run->terms[n] = saved.term;
        acting += shoal_elector_acting (elector, now);
    }
    if (run->quorum && acting > 1)
        s_violation (run, "%u nodes act as leader at %llu ms", acting, (unsigned long long) now);
}

//  A simulation stopped at a livelock is a violation, told once.
static void
s_check_stall (s_run_t *run)
{
    uint64_t at;
    if (!run->stall_told && shoal_sim_stalled (run->sim, &at)) {
        run->stall_told = true;
        s_violation (run, "a livelock: over %u events at %llu ms, the simulation stopped there",
                     SHOAL_SIM_INSTANT_EVENTS_MAX, (unsigned long long) at);
    }
}

static void
s_check (s_run_t *run, uint64_t bound_ms)
{
    shoal_sim_t *sim = run->sim;
    uint64_t now = shoal_sim_now (sim);
    s_check_stall (run);
    if (run->election)
        s_check_election (run);
    for (uint32_t n = 0; n < shoal_sim_size (sim); n++) {
        shoal_membership_t *core = shoal_sim_node (sim, n);
        if (!core)
            continue;
        uint64_t incarnation = shoal_membership_incarnation (core);
        if (incarnation < run->incarnations[n])
            s_violation (run, "node %u: incarnation went back from %llu to %llu", n,
                         (unsigned long long) run->incarnations[n],
                         (unsigned long long) incarnation);
        run->incarnations[n] = incarnation;
    }
    //  The bound runs only while the two can talk: both up and running, each
    //  reaching the other. A pause or a cut starts it again.
    size_t kept = 0;
    for (size_t i = 0; i < run->verdict_count; i++) {
        uint32_t observer = run->verdicts[i].observer, subject = run->verdicts[i].subject;
        shoal_membership_t *core = shoal_sim_node (sim, observer);
        shoal_membership_member_t member;
        shoal_id_t id;
        shoal_sim_id (subject, &id);
        if (!core || shoal_membership_member (core, &id, &member) != 0 ||
            member.state != SHOAL_MEMBER_DEAD)
            continue; //  refuted, or forgotten
        if (shoal_sim_paused (sim, observer) || !shoal_sim_node (sim, subject) ||
            shoal_sim_paused (sim, subject) || !shoal_sim_reachable (sim, subject, observer) ||
            !shoal_sim_reachable (sim, observer, subject))
            run->verdicts[i].due_ms = now;
        if (run->verdicts[i].due_ms + bound_ms > now) {
            run->verdicts[kept++] = run->verdicts[i];
            continue;
        }
        s_violation (run, "node %u has had node %u dead for %llu ms while it was up and reachable",
                     observer, subject, (unsigned long long) (now - run->verdicts[i].due_ms));
    }
    run->verdict_count = kept;
}

//  Runs the simulation to until_ms, checking the invariants every 100 ms;
//  stops early, at such a step, once done (run) says so, when given.
static bool
s_run_until (s_run_t *run, uint64_t until_ms, uint64_t bound_ms, bool (*done) (s_run_t *run))
{
    while (shoal_sim_now (run->sim) < until_ms) {
        uint64_t step = shoal_sim_now (run->sim) + 100;
        shoal_sim_run (run->sim, step < until_ms ? step : until_ms);
        s_check (run, bound_ms);
        if (done && done (run))
            return true;
    }
    return done ? done (run) : true;
}

static bool
s_settled (s_run_t *run)
{
    return s_views_agree (run->sim);
}

//  The one node acting as leader, when exactly one acts, else SHOAL_SIM_NONE.
static uint32_t
s_acting_leader (s_run_t *run)
{
    shoal_sim_t *sim = run->sim;
    uint32_t leader = SHOAL_SIM_NONE;
    for (uint32_t n = 0; n < shoal_sim_size (sim); n++) {
        shoal_elector_t *elector = shoal_sim_elector (sim, n);
        if (elector && shoal_elector_acting (elector, shoal_sim_now (sim))) {
            if (leader != SHOAL_SIM_NONE)
                return SHOAL_SIM_NONE;
            leader = n;
        }
    }
    return leader;
}

//  Exactly one leader acts and every node up follows it.
static bool
s_one_leader (s_run_t *run)
{
    shoal_sim_t *sim = run->sim;
    uint32_t leader = s_acting_leader (run);
    if (leader == SHOAL_SIM_NONE)
        return false;
    for (uint32_t n = 0; n < shoal_sim_size (sim); n++) {
        shoal_elector_t *elector = shoal_sim_elector (sim, n);
        shoal_id_t id;
        uint64_t term;
        if (elector && n != leader &&
            (shoal_elector_leader (elector, shoal_sim_now (sim), &id, &term) != 0 ||
             shoal_sim_index (&id) != leader))
            return false;
    }
    return true;
}

static bool
s_new_leader (s_run_t *run)
{
    return run->new_leader_ms != 0;
}

static bool
s_all_know (s_run_t *run)
{
    return run->knowing + 1 >= shoal_sim_size (run->sim);
}

static bool
s_all_dead (s_run_t *run)
{
    return run->dead_count + 1 >= shoal_sim_size (run->sim);
}

//  ---------------------------------------------------------------------
//  Scenarios

//  Starts nodes 0 .. count - 1, node n joining through node 0 at a random
//  moment of its share of the first two seconds (so that even 10,000 nodes
//  arrive a few per millisecond, not all at once), and waits for one view
//  everywhere.
static bool
s_settle (s_run_t *run, uint32_t count, uint64_t limit_ms, uint64_t bound_ms, uint64_t *random)
{
    shoal_sim_t *sim = run->sim;
    uint64_t start = shoal_sim_now (sim);
    shoal_sim_start (sim, 0, SHOAL_SIM_NONE);
    for (uint32_t n = 1; n < count; n++) {
        uint64_t share = S_JOIN_MS / count;
        shoal_sim_run (sim, start + (uint64_t) n * S_JOIN_MS / count +
                                (share ? splitmix_next (random) % share : 0));
        shoal_sim_start (sim, n, 0);
    }
    return s_run_until (run, shoal_sim_now (sim) + limit_ms, bound_ms, s_settled);
}

typedef struct {
    json_t *measures; //  what the scenario measured
    bool finished;    //  the scenario reached its end within its time limit
} s_result_t;

static void
s_measure (s_result_t *result, const char *name, uint64_t value)
{
    json_object_set_new (result->measures, name, json_integer ((json_int_t) value));
}

//  Crashes node n; its next life begins without a leadership.
static void
s_crash (s_run_t *run, uint32_t n)
{
    shoal_sim_crash (run->sim, n);
    run->acting[n] = 0;
}

//  Splits the cluster in two at random: each node in group 0 or 1.
static void
s_random_split (shoal_sim_t *sim, uint64_t *random)
{
    for (uint32_t n = 0; n < shoal_sim_size (sim); n++)
        shoal_sim_set_group (sim, n, (uint32_t) (splitmix_next (random) & 1));
}

static void
s_heal (shoal_sim_t *sim)
{
    shoal_sim_block (sim, 0, 1, false);
    shoal_sim_block (sim, 1, 0, false);
    shoal_sim_block (sim, 2, 0, false);
    shoal_sim_block (sim, 2, 1, false);
    for (uint32_t n = 0; n < shoal_sim_size (sim); n++)
        shoal_sim_set_group (sim, n, 0);
}

//  Jobs submitted during random task faults: one per fault, the first ones.
#define S_FAULTS_MAX 64

//  How many of the count jobs answered ok (ok[j]) the acting leader does
//  not hold with the parallelism they were submitted with.
static uint32_t
s_lost_jobs (s_run_t *run, char names[][8], const uint32_t *parallelism, const bool *ok,
             uint32_t count)
{
    uint32_t leader = s_acting_leader (run), lost = 0;
    const shoal_jobspec_t *specs = NULL;
    size_t held_count =
        leader == SHOAL_SIM_NONE ? 0 : shoal_jobs_specs (shoal_sim_jobs (run->sim, leader), &specs);
    for (uint32_t j = 0; j < count; j++) {
        bool held = false;
        for (size_t i = 0; i < held_count && !held; i++)
            held = strcmp (specs[i].name, names[j]) == 0 && specs[i].parallelism == parallelism[j];
        lost += ok[j] && !held;
    }
    return lost;
}

//  Jobs submitted during random faults (random-tasks): one at the start of
//  each fault, to a random node, answered or not.
typedef struct {
    char names[S_FAULTS_MAX][8];
    uint32_t parallelism[S_FAULTS_MAX];
    uint64_t refs[S_FAULTS_MAX];
    uint32_t count;
} s_submits_t;

static void
s_submit_during (s_run_t *run, s_submits_t *submits, uint64_t *random)
{
    if (!submits || submits->count == S_FAULTS_MAX)
        return;
    uint32_t j = submits->count++;
    snprintf (submits->names[j], sizeof submits->names[j], "r%u", j);
    submits->parallelism[j] = 1 + (uint32_t) (splitmix_next (random) % 3);
    shoal_jobspec_t spec = { .name = submits->names[j],
                             .parallelism = submits->parallelism[j],
                             .stateful = splitmix_next (random) & 1,
                             .weight = 1 };
    shoal_control_req_t req = { .op = SHOAL_OP_SUBMIT, .spec = &spec };
    uint32_t node = (uint32_t) (splitmix_next (random) % shoal_sim_size (run->sim));
    submits->refs[j] = shoal_sim_request (run->sim, node, &req);
}

//  --scenario random: faults one after another, each at a random moment of
//  up to a lease after the last, held for 1 s to 4 leases and 4 s; the
//  node a fault strikes is the leader one time in three.
static void
s_random_faults (s_run_t *run, const s_options_t *options, const shoal_elector_config_t *elector,
                 uint64_t bound, uint64_t *random, s_submits_t *submits)
{
    shoal_sim_t *sim = run->sim;
    uint32_t nodes = options->nodes;
    for (uint32_t f = 0; f < options->faults; f++) {
        s_run_until (run, shoal_sim_now (sim) + splitmix_next (random) % elector->lease_ms, bound,
                     NULL);
        uint32_t leader = s_acting_leader (run);
        uint32_t victim = (uint32_t) (splitmix_next (random) % nodes);
        if (leader != SHOAL_SIM_NONE && splitmix_next (random) % 3 == 0)
            victim = leader;
        uint64_t hold = 1000 + splitmix_next (random) % (4 * (uint64_t) elector->lease_ms + 4000);
        uint64_t end = shoal_sim_now (sim) + hold;
        s_submit_during (run, submits, random);
        switch (splitmix_next (random) % 6) {
        case 0: //  a crash, and a restart through another node
            s_crash (run, victim);
            s_run_until (run, end, bound, NULL);
            shoal_sim_start (sim, victim, (victim + 1) % nodes);
            break;
        case 1:
            shoal_sim_pause (sim, victim, hold);
            s_run_until (run, end, bound, NULL);
            break;
        case 2: //  a split both ways
        case 3: //  a split one way
            s_random_split (sim, random);
            shoal_sim_block (sim, 0, 1, true);
            shoal_sim_block (sim, 1, 0, splitmix_next (random) & 1);
            s_run_until (run, end, bound, NULL);
            s_heal (sim);
            break;
        case 4: //  one node cut off
            shoal_sim_set_group (sim, victim, 1);
            shoal_sim_block (sim, 0, 1, true);
            shoal_sim_block (sim, 1, 0, true);
            s_run_until (run, end, bound, NULL);
            s_heal (sim);
            break;
        default: //  a burst of loss, 5 to 30 %
            shoal_sim_set_loss (sim, (uint32_t) (50000 + splitmix_next (random) % 250000));
            s_run_until (run, end, bound, NULL);
            shoal_sim_set_loss (sim, options->loss_ppm);
            break;
        }
    }
}

//  The leader scenarios, on a settled membership: one leader first, then
//  the fault, then one leader again. limit bounds every wait.
static void
s_leader_scenario (s_run_t *run, const s_options_t *options, const shoal_elector_config_t *elector,
                   uint64_t bound, uint64_t limit, uint64_t *random, s_result_t *result)
{
    shoal_sim_t *sim = run->sim;
    uint32_t nodes = options->nodes;
    uint64_t begin = shoal_sim_now (sim);
    if (!s_run_until (run, begin + limit, bound, s_one_leader)) {
        s_violation (run, "no single leader followed by all within %llu s of settling",
                     (unsigned long long) limit / 1000);
        return;
    }
    s_measure (result, "ms_to_first_leader", shoal_sim_now (sim) - begin);
    //  The fault comes at a random moment of the leader's heartbeat.
    shoal_sim_run (sim, shoal_sim_now (sim) + splitmix_next (random) % elector->heartbeat_ms);
    uint32_t leader = s_acting_leader (run);
    s_measure (result, "leader", leader);
    run->old_leader = leader;
    run->start_ms = shoal_sim_now (sim);
    shoal_sim_stats (sim, &run->at_start);
    run->counting = true;
    uint64_t healed = 0;
    switch (options->scenario) {
    case S_LEADER_CRASH:
        s_crash (run, leader);
        s_run_until (run, run->start_ms + limit, bound, s_new_leader);
        break;
    case S_LEADER_PARTITION:
    case S_HALVES:
        if (options->scenario == S_LEADER_PARTITION)
            shoal_sim_set_group (sim, leader, 1);
        else
            for (uint32_t n = nodes / 2; n < nodes; n++)
                shoal_sim_set_group (sim, n, 1);
        shoal_sim_block (sim, 0, 1, true);
        shoal_sim_block (sim, 1, 0, true);
        s_run_until (run, run->start_ms + options->duration_ms, bound, NULL);
        uint32_t acting = 0;
        for (uint32_t n = 0; n < nodes; n++)
            acting += shoal_sim_elector (sim, n) &&
                      shoal_elector_acting (shoal_sim_elector (sim, n), shoal_sim_now (sim));
        s_measure (result, "leaders_during", acting);
        shoal_sim_block (sim, 0, 1, false);
        shoal_sim_block (sim, 1, 0, false);
        healed = shoal_sim_now (sim);
        break;
    case S_PAUSE_LEADER:
        shoal_sim_pause (sim, leader, 2 * (uint64_t) elector->lease_ms + 1000);
        s_run_until (run, run->start_ms + limit, bound, s_new_leader);
        healed = run->start_ms + 2 * (uint64_t) elector->lease_ms + 1000;
        s_run_until (run, healed, bound, NULL);
        break;
    case S_BRIDGE:
    case S_ONE_WAY:
        if (options->scenario == S_BRIDGE) {
            for (uint32_t n = nodes / 2; n < nodes; n++)
                shoal_sim_set_group (sim, n, 1);
            shoal_sim_set_group (sim, 0, 2); //  reaches both halves
            shoal_sim_block (sim, 1, 0, true);
        } else
            shoal_sim_set_group (sim, leader, 1);
        shoal_sim_block (sim, 0, 1, options->scenario == S_BRIDGE);
        shoal_sim_block (sim, 1, 0, true);
        s_run_until (run, run->start_ms + options->duration_ms, bound, NULL);
        s_heal (sim);
        healed = shoal_sim_now (sim);
        break;
    case S_RANDOM:
        s_random_faults (run, options, elector, bound, random, NULL);
        s_heal (sim);
        shoal_sim_set_loss (sim, 0);
        healed = shoal_sim_now (sim);
        s_measure (result, "faults", options->faults);
        break;
    default: //  flapping: the highest rank is the leader, and flaps
        for (uint64_t at = run->start_ms; at < run->start_ms + options->duration_ms; at += 5000) {
            s_crash (run, nodes - 1);
            s_run_until (run, at + 2000, bound, NULL);
            shoal_sim_start (sim, nodes - 1, 0);
            s_run_until (run, at + 5000, bound, NULL);
        }
        healed = shoal_sim_now (sim);
        break;
    }
    if (options->scenario == S_LEADER_CRASH || options->scenario == S_LEADER_PARTITION ||
        options->scenario == S_PAUSE_LEADER || options->scenario == S_ONE_WAY) {
        s_measure (result, "ms_to_new_leader",
                   run->new_leader_ms ? run->new_leader_ms - run->start_ms : 0);
        s_measure (result, "election_msgs", run->election_sent);
        if (!run->new_leader_ms)
            s_violation (run, "no new leader");
    }
    uint64_t from = healed ? healed : run->start_ms;
    result->finished = s_run_until (run, from + limit, bound, s_one_leader);
    s_measure (result, healed ? "ms_to_one_leader_after" : "ms_to_one_leader",
               shoal_sim_now (sim) - from);
    s_measure (result, "leader_changes", run->leader_starts);
    s_measure (result, "term", shoal_elector_term (shoal_sim_elector (sim, s_acting_leader (run))));
    if (!result->finished)
        s_violation (run, "no single leader followed by all within %llu s after the faults",
                     (unsigned long long) limit / 1000);
    //  Churn: a crash, a pause or a cut-off leader costs one change; a
    //  flapping node that is not the leader any more costs none.
    bool one_change = options->scenario == S_LEADER_CRASH || options->scenario == S_FLAPPING ||
                      (options->scenario == S_LEADER_PARTITION && run->quorum) ||
                      (options->scenario == S_PAUSE_LEADER && run->quorum);
    if (one_change && run->leader_starts > 1)
        s_violation (run, "%u leader changes for one fault", run->leader_starts);
    if (options->scenario == S_RANDOM && run->quorum && run->leader_starts > options->faults)
        s_violation (run, "%u leader changes for %u faults", run->leader_starts, options->faults);
}

//  ---------------------------------------------------------------------
//  Task scenarios

//  The tasks of the job fail-everywhere adds, each of whose starts fails.
#define S_FAILING_TASKS 4

//  The job every node holds from the start: "web", of --tasks tasks
//  web/0 .. web/N-1; and in fail-everywhere, "bad".
static int
s_set_jobs (shoal_sim_t *sim, const s_options_t *options)
{
    shoal_jobspec_t jobs[] = {
        { .name = "web",
          .parallelism = options->tasks,
          .stateful = !options->stateless,
          .weight = 1 },
        { .name = "bad",
          .parallelism = S_FAILING_TASKS,
          .stateful = !options->stateless,
          .weight = 1 },
    };
    return shoal_sim_set_jobs (sim, jobs, options->scenario == S_FAIL_EVERYWHERE ? 2 : 1);
}

//  The tasks the acting leader reports failed on every node, in *tasks.
static size_t
s_failed_everywhere (s_run_t *run, const char *const **tasks)
{
    uint32_t leader = s_acting_leader (run);
    shoal_handoff_t *handoff =
        leader == SHOAL_SIM_NONE ? NULL : shoal_sim_handoff (run->sim, leader);
    *tasks = NULL;
    return handoff ? shoal_handoff_failed (handoff, tasks) : 0;
}

//  Every current task has exactly one active, and a removed one none; but
//  as many as the acting leader reports failed on every node have none.
static bool
s_tasks_placed (s_run_t *run)
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
    return idle == 0 || idle == s_failed_everywhere (run, &failed);
}

//  One leader, every task with one active, no learner left in the leader's
//  assignment, and the actives spread evenly: as many per node as the
//  equal capacities allow (within one).
static bool
s_tasks_balanced (s_run_t *run)
{
    shoal_sim_t *sim = run->sim;
    uint32_t leader = s_acting_leader (run);
    if (leader == SHOAL_SIM_NONE || !shoal_sim_handoff (sim, leader) || !s_tasks_placed (run))
        return false;
    const shoal_placement_t *placements;
    size_t count = shoal_handoff_placements (shoal_sim_handoff (sim, leader), &placements);
    uint32_t *per_node = calloc (shoal_sim_size (sim), sizeof *per_node);
    if (!per_node)
        return false;
    bool learners = false;
    for (size_t i = 0; i < count; i++) {
        uint32_t node = shoal_sim_index (&placements[i].node);
        learners |= placements[i].role == SHOAL_ROLE_LEARNER;
        if (placements[i].role == SHOAL_ROLE_ACTIVE && node < shoal_sim_size (sim))
            per_node[node]++;
    }
    uint32_t low = UINT32_MAX, high = 0;
    for (uint32_t n = 0; n < shoal_sim_size (sim); n++)
        if (shoal_sim_node (sim, n) && !shoal_sim_paused (sim, n)) {
            low = per_node[n] < low ? per_node[n] : low;
            high = per_node[n] > high ? per_node[n] : high;
        }
    free (per_node);
    return !learners && high <= low + 1;
}

//  fail-everywhere: the tasks of "bad" reported failed on every node, and
//  the others balanced. (A start of one, until it fails, counts as an
//  active: balance alone may come before.)
static bool
s_failed_and_balanced (s_run_t *run)
{
    const char *const *failed;
    return s_failed_everywhere (run, &failed) == S_FAILING_TASKS && s_tasks_balanced (run);
}

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
//  and it has told the others it left (or limit_ms passed), and then its
//  process ends.
static void
s_leave (s_run_t *run, const uint32_t *nodes, uint32_t count, uint64_t limit_ms, uint64_t bound_ms)
{
    shoal_sim_t *sim = run->sim;
    for (uint32_t i = 0; i < count; i++)
        shoal_sim_leave (sim, nodes[i]);
    uint64_t until = shoal_sim_now (sim) + limit_ms;
    while (!(s_handed_off (sim, nodes, count) && s_left (sim, nodes, count)) &&
           shoal_sim_now (sim) < until)
        s_run_until (run, shoal_sim_now (sim) + 10, bound_ms, NULL);
    for (uint32_t i = 0; i < count; i++)
        s_crash (run, nodes[i]);
}

//  Some task that had an active has none: a handoff is under way.
static bool
s_task_moving (s_run_t *run)
{
    for (size_t t = 0; t < shoal_sim_task_count (run->sim); t++)
        if (shoal_sim_task_current (run->sim, t) && shoal_sim_task_actives (run->sim, t) == 0)
            return true;
    return false;
}

//  A node (not the leader) that runs tasks as active: the one with most.
static uint32_t
s_owner (s_run_t *run)
{
    shoal_sim_t *sim = run->sim;
    uint32_t leader = s_acting_leader (run), best = SHOAL_SIM_NONE;
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

static int
s_gap_compare (const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
    return x < y ? -1 : x > y;
}

//  Runs until request ref is answered (or until_ms), and reports its
//  outcome and the parallelism it left as measures named with suffix.
static bool
s_await_reply (s_run_t *run, uint64_t ref, uint64_t until_ms, uint64_t bound, s_result_t *result,
               const char *suffix, uint64_t asked_ms)
{
    uint8_t code = 0;
    uint32_t parallelism = 0;
    while (shoal_sim_reply (run->sim, ref, &code, &parallelism) != 0 &&
           shoal_sim_now (run->sim) < until_ms)
        s_run_until (run, shoal_sim_now (run->sim) + 10, bound, NULL);
    char name[64];
    bool answered = shoal_sim_reply (run->sim, ref, &code, &parallelism) == 0;
    if (!answered) {
        s_violation (run, "request %llu was not answered", (unsigned long long) ref);
        return false;
    }
    snprintf (name, sizeof name, "outcome%s", suffix);
    s_measure (result, name, code);
    snprintf (name, sizeof name, "parallelism%s", suffix);
    s_measure (result, name, parallelism);
    snprintf (name, sizeof name, "rescale_ms%s", suffix);
    s_measure (result, name, shoal_sim_now (run->sim) - asked_ms);
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
s_rescale (s_run_t *run, uint32_t node, uint32_t parallelism, uint32_t min, uint32_t timeout_ms,
           uint64_t bound, s_result_t *result, const char *suffix)
{
    shoal_control_req_t req = { .op = SHOAL_OP_RESCALE,
                                .job = "web",
                                .parallelism = parallelism,
                                .min = min,
                                .timeout_ms = timeout_ms };
    uint64_t asked = shoal_sim_now (run->sim);
    uint64_t ref = shoal_sim_request (run->sim, node, &req);
    if (!ref || !s_await_reply (run, ref, asked + timeout_ms + 20000, bound, result, suffix, asked))
        return;
    uint8_t code;
    uint32_t applied;
    shoal_sim_reply (run->sim, ref, &code, &applied);
    uint32_t leader = s_acting_leader (run);
    uint32_t held = leader == SHOAL_SIM_NONE ? 0 : s_web (run->sim, leader);
    if (held != applied)
        s_violation (run, "a rescale answered %u tasks, the leader holds %u", applied, held);
    if (code == SHOAL_REPLY_OK && applied != parallelism)
        s_violation (run, "a rescale to %u answered ok with %u", parallelism, applied);
    if (code == SHOAL_REPLY_PARTIAL && (applied < min || applied >= parallelism))
        s_violation (run, "a partial rescale to %u (min %u) applied %u", parallelism, min, applied);
}

//  Five jobs, each submitted to a random live node (again, while the
//  answer is no leader); as soon as one is answered ok the acting leader
//  crashes, and it starts again 10 s later. lost_jobs counts the jobs
//  answered ok that the final acting leader does not hold.
static void
s_submit_leader_crash (s_run_t *run, uint64_t bound, uint64_t *random, s_result_t *result)
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
        shoal_control_req_t req = { .op = SHOAL_OP_SUBMIT, .spec = &spec };
        uint64_t until = shoal_sim_now (sim) + 60000;
        while (!ok[j] && shoal_sim_now (sim) < until) {
            uint32_t node = (uint32_t) (splitmix_next (random) % nodes);
            uint64_t ref = shoal_sim_request (sim, node, &req);
            uint8_t code = SHOAL_REPLY_FAILED;
            uint32_t parallelism;
            while (ref && shoal_sim_reply (sim, ref, &code, &parallelism) != 0 &&
                   shoal_sim_now (sim) < until)
                s_run_until (run, shoal_sim_now (sim) + 1, bound, NULL);
            ok[j] = ref && code == SHOAL_REPLY_OK;
            if (!ok[j])
                s_run_until (run, shoal_sim_now (sim) + 500, bound, NULL);
        }
        if (!ok[j])
            continue;
        acked++;
        uint32_t leader = s_acting_leader (run);
        if (leader == SHOAL_SIM_NONE)
            continue;
        s_crash (run, leader);
        s_run_until (run, shoal_sim_now (sim) + 10000, bound, NULL);
        shoal_sim_start (sim, leader, (leader + 1) % nodes);
    }
    s_run_until (run, shoal_sim_now (sim) + 20000, bound, NULL);
    const uint32_t parallelism[5] = { 4, 4, 4, 4, 4 };
    lost = s_lost_jobs (run, names, parallelism, ok, 5);
    s_measure (result, "jobs_acked", acked);
    s_measure (result, "lost_jobs", lost);
    if (lost)
        s_violation (run, "%u jobs answered ok were lost", lost);
    if (acked < 5)
        s_violation (run, "only %u of 5 submits were answered ok", acked);
}

//  The task scenarios, on a settled membership: every task placed, then
//  the fault, then balanced again.
static void
s_task_scenario (s_run_t *run, const s_options_t *options, const shoal_sim_config_t *config,
                 uint32_t joining, uint64_t bound, uint64_t limit, uint64_t *random,
                 s_result_t *result)
{
    shoal_sim_t *sim = run->sim;
    uint32_t nodes = options->nodes;
    uint64_t begin = shoal_sim_now (sim);
    if (!s_run_until (run, begin + limit, bound,
                      options->scenario == S_FAIL_EVERYWHERE ? s_failed_and_balanced
                                                             : s_tasks_balanced)) {
        s_violation (run, "the tasks were not placed and balanced within %llu s of settling",
                     (unsigned long long) limit / 1000);
        return;
    }
    s_measure (result, "ms_to_placed", shoal_sim_now (sim) - begin);
    shoal_sim_task_stats_t before;
    shoal_sim_task_stats (sim, &before);
    s_measure (result, "activations", before.activations);
    size_t gaps_before = before.gap_count;
    uint64_t lease = config->node_tasks.lease_ms;
    run->start_ms = shoal_sim_now (sim);
    uint32_t subject = SHOAL_SIM_NONE;
    uint64_t healed = 0;
    s_submits_t *submits = NULL;
    switch (options->scenario) {
    case S_SCALE_OUT:
        for (uint32_t n = nodes - joining; n < nodes; n++)
            shoal_sim_start (sim, n, 0);
        break;
    case S_CRASH_OWNER:
        subject = s_owner (run);
        if (subject != SHOAL_SIM_NONE)
            s_crash (run, subject);
        break;
    case S_PAUSE_OWNER:
        subject = s_owner (run);
        if (subject != SHOAL_SIM_NONE)
            shoal_sim_pause (sim, subject, 2 * lease + 1000);
        s_run_until (run, run->start_ms + 2 * lease + 1000, bound, NULL);
        break;
    case S_COLD_START:
        s_run_until (run, run->start_ms + 30000, bound, NULL);
        break;
    case S_LEADER_CRASH_MID_HANDOFF:
        for (uint32_t n = nodes - joining; n < nodes; n++)
            shoal_sim_start (sim, n, 0);
        //  The first handoff is under way once a task has no active: a few
        //  milliseconds, so watched millisecond by millisecond.
        while (!s_task_moving (run) && shoal_sim_now (sim) < run->start_ms + limit)
            shoal_sim_run (sim, shoal_sim_now (sim) + 1);
        subject = s_acting_leader (run);
        if (subject != SHOAL_SIM_NONE)
            s_crash (run, subject);
        break;
    case S_SCALE_IN: {
        //  The highest-numbered nodes leave, but never the leader.
        uint32_t leader = s_acting_leader (run), leaving = (nodes + 3) / 4;
        uint32_t *gone = calloc (leaving, sizeof *gone);
        uint32_t count = 0;
        for (uint32_t n = nodes; gone && n-- > 0 && count < leaving;)
            if (n != leader)
                gone[count++] = n;
        s_leave (run, gone, count, limit, bound);
        free (gone);
        break;
    }
    case S_HALVES_TASKS:
    case S_BRIDGE_TASKS:
    case S_ONE_WAY_TASKS: {
        uint32_t leader = s_acting_leader (run);
        if (options->scenario == S_ONE_WAY_TASKS) {
            //  The leader's messages are lost, not those to it.
            if (leader != SHOAL_SIM_NONE)
                shoal_sim_set_group (sim, leader, 1);
            shoal_sim_block (sim, 1, 0, true);
        } else {
            for (uint32_t n = nodes / 2; n < nodes; n++)
                shoal_sim_set_group (sim, n, 1);
            shoal_sim_block (sim, 0, 1, true);
            shoal_sim_block (sim, 1, 0, true);
        }
        if (options->scenario == S_BRIDGE_TASKS)
            shoal_sim_set_group (sim, 0, 2); //  reaches both halves
        s_run_until (run, run->start_ms + options->duration_ms, bound, NULL);
        s_heal (sim);
        healed = shoal_sim_now (sim);
        break;
    }
    case S_ROLLING_RESTART:
        for (uint32_t n = 0; n < nodes; n++) {
            s_leave (run, &n, 1, limit, bound);
            shoal_sim_start (sim, n, (n + 1) % nodes);
            if (!s_run_until (run, shoal_sim_now (sim) + limit, bound, s_tasks_balanced))
                break;
        }
        break;
    case S_DEAF_LEADER: {
        //  A leader that stops acting and acts again with the same term must
        //  not forget what it granted meanwhile (docs/handoff.md).
        uint32_t leader = s_acting_leader (run);
        subject = s_owner (run);
        if (subject != SHOAL_SIM_NONE)
            shoal_sim_pause (sim, subject, 2 * lease + 5000);
        s_run_until (run, run->start_ms + 2 * lease + 3500, bound, NULL);
        if (leader != SHOAL_SIM_NONE) {
            shoal_sim_set_group (sim, leader, 1);
            shoal_sim_block (sim, 0, 1, true);
        }
        s_run_until (run, shoal_sim_now (sim) + 4000, bound, NULL);
        s_heal (sim);
        break;
    }
    case S_SUBMIT_LEADER_CRASH:
        s_submit_leader_crash (run, bound, random, result);
        break;
    case S_RESCALE_UP:
    case S_RESCALE_DOWN: {
        uint32_t follower = (s_acting_leader (run) + 1) % nodes;
        uint32_t parallelism =
            options->scenario == S_RESCALE_UP ? options->tasks * 3 / 2 : options->tasks / 2;
        s_rescale (run, follower, parallelism, 0, 30000, bound, result, "");
        break;
    }
    case S_RESCALE_TIMEOUT: {
        uint32_t leader = s_acting_leader (run);
        s_rescale (run, leader, 2 * options->tasks, 0, 3000, bound, result, "_beyond");
        s_rescale (run, leader, 2 * options->tasks, options->tasks, 3000, bound, result, "_min");
        //  The late nodes start 2 s into a wait of 60 s.
        shoal_control_req_t req = { .op = SHOAL_OP_RESCALE,
                                    .job = "web",
                                    .parallelism = options->tasks * 8 / 5,
                                    .timeout_ms = 60000 };
        uint64_t asked = shoal_sim_now (sim);
        uint64_t ref = shoal_sim_request (sim, leader, &req);
        s_run_until (run, asked + 2000, bound, NULL);
        for (uint32_t n = nodes - joining; n < nodes; n++)
            shoal_sim_start (sim, n, 0);
        s_await_reply (run, ref, asked + 70000, bound, result, "_wait", asked);
        break;
    }
    case S_FAIL_EVERYWHERE: {
        //  The tasks of "bad" failed on every node before the others were
        //  balanced: reported, placed nowhere, and for a minute more, and
        //  beyond, never started again.
        //  A task the leader moves away while its node starts it again
        //  (for balance) starts its run of failures over if it comes back:
        //  failed_starts may pass 4 x N x (1 + restarts); each node gives up
        //  on each task once.
        const char *const *failed;
        size_t count = s_failed_everywhere (run, &failed);
        shoal_handoff_stats_t stats = { 0 };
        uint32_t leader = s_acting_leader (run);
        if (leader != SHOAL_SIM_NONE && shoal_sim_handoff (sim, leader))
            shoal_handoff_stats (shoal_sim_handoff (sim, leader), &stats);
        s_measure (result, "failed_tasks", count);
        s_measure (result, "gave_up", stats.gave_up);
        s_measure (result, "failed_starts", before.failed_starts);
        for (size_t i = 0; i < count; i++)
            if (strncmp (failed[i], "bad/", 4) != 0)
                s_violation (run, "%s reported failed everywhere", failed[i]);
        if (count != S_FAILING_TASKS)
            s_violation (run, "%zu tasks reported failed everywhere, not %u", count,
                         S_FAILING_TASKS);
        if (stats.gave_up > (uint64_t) S_FAILING_TASKS * nodes)
            s_violation (run, "nodes gave up %llu times on %u tasks",
                         (unsigned long long) stats.gave_up, S_FAILING_TASKS);
        s_run_until (run, run->start_ms + 60000, bound, NULL);
        shoal_sim_task_stats_t later;
        shoal_sim_task_stats (sim, &later);
        s_measure (result, "failed_starts_after", later.failed_starts - before.failed_starts);
        if (later.failed_starts != before.failed_starts)
            s_violation (run, "tasks failed everywhere were started %llu times more",
                         (unsigned long long) (later.failed_starts - before.failed_starts));
        break;
    }
    default: //  random-tasks
        if (options->submit)
            submits = calloc (1, sizeof *submits);
        s_random_faults (run, options, &config->elector, bound, random, submits);
        s_heal (sim);
        shoal_sim_set_loss (sim, 0);
        s_measure (result, "faults", options->faults);
        break;
    }
    if (subject != SHOAL_SIM_NONE)
        s_measure (result, "subject", subject);
    result->finished = s_run_until (run, run->start_ms + limit, bound, s_tasks_balanced);
    s_measure (result, "ms_to_balanced", shoal_sim_now (sim) - run->start_ms);
    if (healed)
        s_measure (result, "ms_to_balanced_after_heal", shoal_sim_now (sim) - healed);
    if (submits) {
        bool ok[S_FAULTS_MAX] = { false };
        uint32_t acked = 0;
        for (uint32_t j = 0; j < submits->count; j++) {
            uint8_t code = SHOAL_REPLY_FAILED;
            uint32_t parallelism;
            ok[j] = submits->refs[j] &&
                    shoal_sim_reply (sim, submits->refs[j], &code, &parallelism) == 0 &&
                    code == SHOAL_REPLY_OK;
            acked += ok[j];
        }
        uint32_t lost = s_lost_jobs (run, submits->names, submits->parallelism, ok, submits->count);
        s_measure (result, "jobs_acked", acked);
        s_measure (result, "lost_jobs", lost);
        if (lost)
            s_violation (run, "%u jobs answered ok were lost", lost);
        free (submits);
    }
    shoal_sim_task_stats_t after;
    shoal_sim_task_stats (sim, &after);
    s_measure (result, "double_active_ms", after.double_active_ms);
    s_measure (result, "unavailable_ms", after.unavailable_ms - before.unavailable_ms);
    s_measure (result, options->scenario == S_COLD_START ? "moves_after" : "moves",
               after.activations - before.activations);
    if (options->scenario == S_COLD_START && after.activations != before.activations)
        s_violation (run, "%llu moves after the cold start",
                     (unsigned long long) (after.activations - before.activations));
    if (options->scenario == S_COLD_START && before.activations != options->tasks)
        s_violation (run, "%llu activations to place %u tasks",
                     (unsigned long long) before.activations, options->tasks);
    size_t gap_count = after.gap_count - gaps_before;
    uint64_t *gaps = calloc (gap_count ? gap_count : 1, sizeof *gaps);
    if (gaps) {
        if (gap_count) {
            memcpy (gaps, after.gaps + gaps_before, gap_count * sizeof *gaps);
            qsort (gaps, gap_count, sizeof *gaps, s_gap_compare);
        }
        s_measure (result, "gaps", gap_count);
        s_measure (result, "gap_p50_ms", gap_count ? gaps[gap_count / 2] : 0);
        s_measure (result, "gap_p99_ms", gap_count ? gaps[(gap_count * 99) / 100] : 0);
        s_measure (result, "gap_max_ms", gap_count ? gaps[gap_count - 1] : 0);
        free (gaps);
    }
    if (after.double_active_ms)
        s_violation (run,
                     "tasks ran as active on two nodes for %llu ms in all, %s first, at %llu ms",
                     (unsigned long long) after.double_active_ms,
                     after.first_double_task ? after.first_double_task : "?",
                     (unsigned long long) after.first_double_ms);
    if (!result->finished)
        s_violation (run, "the tasks were not balanced within %llu s after the fault",
                     (unsigned long long) limit / 1000);
}

static s_result_t
s_scenario (s_run_t *run, const s_options_t *options, const shoal_sim_config_t *sim_config)
{
    const shoal_membership_config_t *config = &sim_config->membership;
    shoal_sim_t *sim = run->sim;
    uint32_t nodes = options->nodes;
    uint64_t bound =
        shoal_membership_suspicion_ms (config, nodes, 0) + 4 * config->probe_interval_ms;
    //  The scenario's own choices (join times, which node) come from the
    //  seed too, apart from the simulator's.
    uint64_t settle_limit = 600000, random = options->seed ^ 0x5ce0a210ull, pick;
    s_result_t result = { json_object (), false };
    bool join = options->scenario == S_JOIN;
    uint32_t joining = options->scenario == S_SCALE_OUT ||
                               options->scenario == S_LEADER_CRASH_MID_HANDOFF ||
                               options->scenario == S_RESCALE_TIMEOUT
                           ? (nodes + 3) / 4
                           : 0;
    if (sim_config->tasks && s_set_jobs (sim, options) != 0) {
        s_violation (run, "out of memory");
        return result;
    }
    if (!s_settle (run, join ? nodes - 1 : nodes - joining, settle_limit, bound, &random)) {
        s_violation (run, "the cluster did not settle in %llu s",
                     (unsigned long long) settle_limit / 1000);
        return result;
    }
    json_object_set_new (result.measures, "ms_to_settle",
                         json_integer ((json_int_t) shoal_sim_now (sim)));
    //  The cluster settles on a clean network; the scenario runs on the
    //  lossy one, if asked for.
    shoal_sim_set_loss (sim, options->loss_ppm);
    run->start_ms = shoal_sim_now (sim);
    shoal_sim_stats (sim, &run->at_start);
    pick = splitmix_next (&random);
    uint64_t limit = 300000;
    if (options->scenario >= S_SCALE_OUT) {
        s_task_scenario (run, options, sim_config, joining, bound, limit, &random, &result);
    } else if (options->scenario >= S_LEADER_CRASH) {
        s_leader_scenario (run, options, &sim_config->elector, bound, limit, &random, &result);
    } else if (options->scenario == S_JOIN) {
        run->subject = nodes - 1;
        shoal_sim_start (sim, run->subject, (uint32_t) (pick % (nodes - 1)));
        result.finished = s_run_until (run, run->start_ms + limit, bound, s_all_know);
        uint64_t ms = (result.finished ? run->done_ms : shoal_sim_now (sim)) - run->start_ms;
        json_object_set_new (result.measures, "ms_to_all", json_integer ((json_int_t) ms));
        json_object_set_new (result.measures, "rounds_to_all",
                             json_integer ((json_int_t) ((ms + config->gossip_interval_ms - 1) /
                                                         config->gossip_interval_ms)));
        json_object_set_new (result.measures, "knowing", json_integer (run->knowing));
    } else if (options->scenario == S_CRASH) {
        run->subject = (uint32_t) (pick % nodes);
        s_crash (run, run->subject);
        result.finished = s_run_until (run, run->start_ms + limit, bound, s_all_dead);
        uint64_t ms = (result.finished ? run->done_ms : shoal_sim_now (sim)) - run->start_ms;
        json_object_set_new (result.measures, "crashed", json_integer (run->subject));
        json_object_set_new (
            result.measures, "ms_first_suspect",
            run->first_suspect_ms == UINT64_MAX
                ? json_null ()
                : json_integer ((json_int_t) (run->first_suspect_ms - run->start_ms)));
        json_object_set_new (result.measures, "ms_all_dead", json_integer ((json_int_t) ms));
        json_object_set_new (result.measures, "nodes_with_it_dead", json_integer (run->dead_count));
    } else if (options->scenario == S_STEADY) {
        //  The staller pauses 2 s out of every 10, each at its own offset.
        run->counting = true;
        uint64_t end = run->start_ms + options->duration_ms;
        uint32_t stall = options->stall < nodes ? options->stall : nodes;
        while (shoal_sim_now (sim) < end) {
            uint64_t now = shoal_sim_now (sim);
            uint64_t second = (now - run->start_ms) / 1000;
            for (uint32_t k = 0; k < stall; k++)
                if (second % 10 == (k * 7) % 10)
                    shoal_sim_pause (sim, k * (nodes / stall), 2000);
            s_run_until (run, now + 1000 < end ? now + 1000 : end, bound, NULL);
        }
        uint32_t false_dead = 0, false_suspect = 0;
        for (uint32_t n = 0; n < nodes; n++) {
            false_dead += run->declared_dead[n];
            false_suspect += run->suspected[n];
        }
        result.finished = true;
        json_object_set_new (result.measures, "false_dead", json_integer (false_dead));
        json_object_set_new (result.measures, "false_suspect", json_integer (false_suspect));
        json_object_set_new (result.measures, "stalling", json_integer (stall));
    } else {
        for (uint32_t n = nodes / 2; n < nodes; n++)
            shoal_sim_set_group (sim, n, 1);
        shoal_sim_block (sim, 0, 1, true);
        shoal_sim_block (sim, 1, 0, true);
        s_run_until (run, run->start_ms + options->duration_ms, bound, NULL);
        shoal_sim_block (sim, 0, 1, false);
        shoal_sim_block (sim, 1, 0, false);
        uint64_t healed = shoal_sim_now (sim);
        result.finished = s_run_until (run, healed + limit, bound, s_settled);
        json_object_set_new (result.measures, "ms_to_merge",
                             json_integer ((json_int_t) (shoal_sim_now (sim) - healed)));
    }
    run->end_ms = shoal_sim_now (sim);
    //  After the faults (loss is one), one view everywhere.
    shoal_sim_set_loss (sim, 0);
    if (result.finished && options->scenario != S_PARTITION &&
        !s_run_until (run, shoal_sim_now (sim) + settle_limit, bound, s_settled))
        s_violation (run, "views did not converge within %llu s after the scenario",
                     (unsigned long long) settle_limit / 1000);
    if (!result.finished)
        s_violation (run, "the scenario did not finish within %llu s",
                     (unsigned long long) limit / 1000);
    return result;
}

//  ---------------------------------------------------------------------
//  The command

static int
s_usage_error (const char *what, const char *arg)
{
    fprintf (stderr, "shoal-sim: %s%s%s\nTry 'shoal-sim --help'.\n", what, arg ? ": " : "",
             arg ? arg : "");
    return 2;
}

//  Parses an unsigned number in [low, high]; returns -1 when it is not one.
static int
s_number (const char *text, uint64_t low, uint64_t high, uint64_t *value)
{
    char *end;
    if (!text[0] || text[0] == '-')
        return -1;
    unsigned long long number = strtoull (text, &end, 10);
    if (*end || number < low || number > high)
        return -1;
    *value = number;
    return 0;
}

//  "0.01" or "1%" (up to 100%), in parts per million.
static int
s_fraction (const char *text, uint32_t *ppm)
{
    char *end;
    double value = strtod (text, &end);
    if (end == text || value < 0 || !isfinite (value))
        return -1;
    if (*end == '%' && !end[1])
        value /= 100;
    else if (*end)
        return -1;
    if (value > 1)
        return -1;
    *ppm = (uint32_t) llround (value * 1000000);
    return 0;
}

static int
s_parse (int argc, char **argv, s_options_t *options)
{
    static const struct option longs[] = {
        { "scenario", required_argument, NULL, 's' },
        { "nodes", required_argument, NULL, 'n' },
        { "seed", required_argument, NULL, 'S' },
        { "loss", required_argument, NULL, 'l' },
        { "duration", required_argument, NULL, 'd' },
        { "stall", required_argument, NULL, 'k' },
        { "profile", required_argument, NULL, 'p' },
        { "json", no_argument, NULL, 'j' },
        { "available", no_argument, NULL, 'a' },
        { "faults", required_argument, NULL, 'f' },
        { "tasks", required_argument, NULL, 't' },
        { "stateless", no_argument, NULL, 'T' },
        { "backlog", required_argument, NULL, 'b' },
        { "fail", required_argument, NULL, 'F' },
        { "submit", no_argument, NULL, 'J' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    *options = (s_options_t){
        .scenario = (s_scenario_t) -1,
        .nodes = 100,
        .seed = 1,
        .duration_ms = 60000,
        .faults = 10,
        .tasks = 60,
        .backlog = 256,
    };
    opterr = 0;
    int option;
    uint64_t value;
    while ((option = getopt_long (argc, argv, "", longs, NULL)) != -1) {
        switch (option) {
        case 's':
            for (int i = 0; i < S_SCENARIOS; i++)
                if (strcmp (optarg, s_scenario_names[i]) == 0)
                    options->scenario = (s_scenario_t) i;
            if ((int) options->scenario < 0)
                return s_usage_error ("unknown scenario (see --help)", optarg);
            break;
        case 'n':
            if (s_number (optarg, 2, 100000, &value) != 0)
                return s_usage_error ("--nodes: must be a whole number from 2 to 100000", optarg);
            options->nodes = (uint32_t) value;
            break;
        case 'S':
            if (s_number (optarg, 0, UINT64_MAX, &value) != 0)
                return s_usage_error ("--seed: must be a whole number", optarg);
            options->seed = value;
            break;
        case 'l':
            if (s_fraction (optarg, &options->loss_ppm) != 0 || options->loss_ppm >= 1000000)
                return s_usage_error (
                    "--loss: must be a fraction below 1 (0.01) or a percentage (1%)", optarg);
            break;
        case 'd':
            if (s_number (optarg, 1, 24 * 3600, &value) != 0)
                return s_usage_error ("--duration: must be whole seconds from 1 to 86400", optarg);
            options->duration_ms = value * 1000;
            break;
        case 'k':
            if (s_number (optarg, 0, 100000, &value) != 0)
                return s_usage_error ("--stall: must be a whole number of nodes", optarg);
            options->stall = (uint32_t) value;
            break;
        case 'p':
            if (strcmp (optarg, "lan") != 0 && strcmp (optarg, "loopback") != 0)
                return s_usage_error ("--profile: must be lan or loopback", optarg);
            options->loopback = strcmp (optarg, "loopback") == 0;
            break;
        case 'j':
            options->json = true;
            break;
        case 'a':
            options->available = true;
            break;
        case 'f':
            if (s_number (optarg, 1, 100000, &value) != 0)
                return s_usage_error ("--faults: must be a whole number from 1 to 100000", optarg);
            options->faults = (uint32_t) value;
            break;
        case 't':
            if (s_number (optarg, 1, 10000, &value) != 0)
                return s_usage_error ("--tasks: must be a whole number from 1 to 10000", optarg);
            options->tasks = (uint32_t) value;
            break;
        case 'T':
            options->stateless = true;
            break;
        case 'J':
            options->submit = true;
            break;
        case 'F':
            if (s_fraction (optarg, &options->fail_ppm) != 0 || options->fail_ppm >= 1000000)
                return s_usage_error (
                    "--fail: must be a fraction below 1 (0.1) or a percentage (10%)", optarg);
            break;
        case 'b':
            if (s_number (optarg, 0, 1000000, &value) != 0)
                return s_usage_error ("--backlog: must be a whole number up to 1000000", optarg);
            options->backlog = (uint32_t) value;
            break;
        case 'h':
            fputs (s_usage, stdout);
            exit (0);
        default:
            return s_usage_error ("unknown option or missing value", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return s_usage_error ("unexpected argument", argv[optind]);
    if ((int) options->scenario < 0)
        return s_usage_error ("--scenario is required", NULL);
    if (options->stall > options->nodes)
        return s_usage_error ("--stall: more nodes than the cluster has", NULL);
    return 0;
}

static double
s_wall (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

int
main (int argc, char **argv)
{
    s_options_t options;
    int rc = s_parse (argc, argv, &options);
    if (rc != 0)
        return rc;
    //  Large blocks (every table, every sync frame in flight) from their own
    //  mappings, given back when freed. With glibc's default, the threshold
    //  rises after the first large frees, and thousands of frames of a join
    //  storm leave the heap holed: 10,000 nodes then ran out of 24 GB.
    mallopt (M_MMAP_THRESHOLD, 128 * 1024);
    shoal_sim_config_t config;
    shoal_sim_config_default (&config);
    if (options.loopback) {
        shoal_membership_config_loopback (&config.membership);
        shoal_elector_config_loopback (&config.elector);
        shoal_tasks_config_loopback (&config.node_tasks);
        shoal_handoff_config_loopback (&config.handoff);
        shoal_jobs_config_loopback (&config.jobs);
    }
    config.election = options.scenario >= S_LEADER_CRASH;
    config.tasks = options.scenario >= S_SCALE_OUT;
    if (options.scenario == S_RESCALE_TIMEOUT)
        config.slots = (options.tasks * 8 / 5 + options.nodes - 1) / options.nodes;
    config.backlog = options.backlog;
    config.app_fail_ppm = options.fail_ppm;
    if (options.scenario == S_FAIL_EVERYWHERE)
        config.app_fail_job = "bad";
    config.elector.quorum = !options.available;
    shoal_sim_t *sim = shoal_sim_new (&config, options.nodes, options.seed);
    s_run_t run = { .sim = sim, .subject = SHOAL_SIM_NONE, .first_suspect_ms = UINT64_MAX };
    run.violations = json_array ();
    run.knows = calloc (options.nodes, 1);
    run.dead = calloc (options.nodes, 1);
    run.suspected = calloc (options.nodes, 1);
    run.declared_dead = calloc (options.nodes, 1);
    run.incarnations = calloc (options.nodes, sizeof (uint64_t));
    run.terms = calloc (options.nodes, sizeof (uint64_t));
    run.acting = calloc (options.nodes, 1);
    run.election = config.election;
    run.quorum = config.elector.quorum;
    if (!sim || !run.violations || !run.knows || !run.dead || !run.suspected ||
        !run.declared_dead || !run.incarnations || !run.terms || !run.acting) {
        fprintf (stderr, "shoal-sim: out of memory\n");
        return 1;
    }
    shoal_sim_observe (sim, s_observe, &run);
    shoal_sim_observe_leaders (sim, s_observe_leader, &run);
    double wall = s_wall ();
    s_result_t result = s_scenario (&run, &options, &config);
    wall = s_wall () - wall;

    //  The network's cost is measured over the scenario, from the settled
    //  cluster to the end of the scenario's fault or join.
    shoal_sim_stats_t stats;
    shoal_sim_stats (sim, &stats);
    double window = (double) (run.end_ms - run.start_ms) / 1000.0;
    double seconds = (double) shoal_sim_now (sim) / 1000.0;
    json_t *report =
        json_pack ("{s:s, s:i, s:I, s:f, s:s}", "scenario", s_scenario_names[options.scenario],
                   "nodes", (int) options.nodes, "seed", (json_int_t) options.seed, "loss",
                   options.loss_ppm / 1000000.0, "profile", options.loopback ? "loopback" : "lan");
    json_object_update (report, result.measures);
    json_decref (result.measures);
    double per_node_s = window > 0 ? 1.0 / options.nodes / window : 0;
    json_object_set_new (report, "msgs_per_node_per_s",
                         json_real ((double) (stats.sent - run.at_start.sent) * per_node_s));
    json_object_set_new (report, "bytes_per_node_per_s",
                         json_real ((double) (stats.bytes - run.at_start.bytes) * per_node_s));
    json_object_set_new (
        report, "sync_bytes_per_node_per_s",
        json_real ((double) (stats.frame_bytes - run.at_start.frame_bytes) * per_node_s));
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
    s_check_stall (&run);
    if (stats.codec_errors)
        s_violation (&run, "%llu messages failed to encode or decode",
                     (unsigned long long) stats.codec_errors);
    json_object_set (report, "violations", run.violations);
    if (options.json) {
        json_dumpf (report, stdout, JSON_INDENT (2));
        printf ("\n");
    } else {
        const char *key;
        json_t *value;
        json_object_foreach (report, key, value)
        {
            char *text =
                json_dumps (value, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION (6));
            printf ("%-26s %s\n", key, text ? text : "?");
            free (text);
        }
    }
    rc = json_array_size (run.violations) == 0 && result.finished ? 0 : 1;
    json_decref (report);
    json_decref (run.violations);
    free (run.knows);
    free (run.dead);
    free (run.suspected);
    free (run.declared_dead);
    free (run.incarnations);
    free (run.terms);
    free (run.acting);
    free (run.term_leaders);
    free (run.verdicts);
    shoal_sim_destroy (&sim);
    return rc;
}

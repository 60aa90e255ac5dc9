/*  sim/main.c: shoal-sim, the membership protocol under simulated faults.

    Builds a cluster of N simulated nodes, lets it settle, then plays one
    scenario and prints one report: what the scenario measures, the
    network's cost per node, the invariants broken (an empty list when all
    held), the seed, and how fast the simulation ran.

    Exit status: 0 when the scenario ran and every invariant held, 1 when an
    invariant broke or the scenario did not finish, 2 on a usage error.
*/
#include "sim.h"
#include "splitmix.h"

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
    "                 [--stall K] [--profile lan|loopback] [--json]\n"
    "\n"
    "Runs the membership protocol (SWIM with Lifeguard) on N simulated nodes, on a\n"
    "virtual clock and network, and reports what one scenario measures.\n"
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
    "options:\n"
    "  --nodes N          cluster size (default 100, at most 100000)\n"
    "  --seed S           seed of every random choice (default 1): a run replays\n"
    "  --loss P           datagrams lost, as a fraction (0.01) or a percentage (1%)\n"
    "  --duration SECONDS how long steady runs and the partition holds (default 60)\n"
    "  --stall K          steady: K nodes pause 2 s out of every 10 s (default 0)\n"
    "  --profile NAME     membership timing: lan (default) or loopback (10x faster)\n"
    "  --json             print the report as JSON (default: one line per field)\n"
    "  --help             print this help\n"
    "\n"
    "Exit status: 0 when every invariant held, 1 when one broke or the scenario\n"
    "did not finish in its time limit, 2 on a usage error.\n";

typedef enum { S_JOIN, S_CRASH, S_STEADY, S_PARTITION } s_scenario_t;
static const char *s_scenario_names[] = { "join", "crash", "steady", "partition" };

typedef struct {
    s_scenario_t scenario;
    uint32_t nodes;
    uint64_t seed;
    uint32_t loss_ppm;
    uint64_t duration_ms;
    uint32_t stall;
    bool loopback;
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
s_check (s_run_t *run, uint64_t bound_ms)
{
    shoal_sim_t *sim = run->sim;
    uint64_t now = shoal_sim_now (sim);
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
    size_t kept = 0;
    for (size_t i = 0; i < run->verdict_count; i++) {
        uint32_t observer = run->verdicts[i].observer, subject = run->verdicts[i].subject;
        if (run->verdicts[i].due_ms + bound_ms > now) {
            run->verdicts[kept++] = run->verdicts[i];
            continue;
        }
        shoal_membership_t *core = shoal_sim_node (sim, observer);
        shoal_membership_member_t member;
        shoal_id_t id;
        shoal_sim_id (subject, &id);
        if (core && shoal_sim_node (sim, subject) && !shoal_sim_paused (sim, subject) &&
            shoal_sim_reachable (sim, subject, observer) &&
            shoal_sim_reachable (sim, observer, subject) &&
            shoal_membership_member (core, &id, &member) == 0 && member.state == SHOAL_MEMBER_DEAD)
            s_violation (run,
                         "node %u has had node %u dead for %llu ms while it was up and reachable",
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

static s_result_t
s_scenario (s_run_t *run, const s_options_t *options, const shoal_membership_config_t *config)
{
    shoal_sim_t *sim = run->sim;
    uint32_t nodes = options->nodes;
    uint64_t bound =
        shoal_membership_suspicion_ms (config, nodes, 0) + 4 * config->probe_interval_ms;
    //  The scenario's own choices (join times, which node) come from the
    //  seed too, apart from the simulator's.
    uint64_t settle_limit = 600000, random = options->seed ^ 0x5ce0a210ull, pick;
    s_result_t result = { json_object (), false };
    bool join = options->scenario == S_JOIN;
    if (!s_settle (run, join ? nodes - 1 : nodes, settle_limit, bound, &random)) {
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
    if (options->scenario == S_JOIN) {
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
        shoal_sim_crash (sim, run->subject);
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
        { "scenario", required_argument, NULL, 's' }, { "nodes", required_argument, NULL, 'n' },
        { "seed", required_argument, NULL, 'S' },     { "loss", required_argument, NULL, 'l' },
        { "duration", required_argument, NULL, 'd' }, { "stall", required_argument, NULL, 'k' },
        { "profile", required_argument, NULL, 'p' },  { "json", no_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' },           { NULL, 0, NULL, 0 },
    };
    *options = (s_options_t){
        .scenario = (s_scenario_t) -1, .nodes = 100, .seed = 1, .duration_ms = 60000
    };
    opterr = 0;
    int option;
    uint64_t value;
    while ((option = getopt_long (argc, argv, "", longs, NULL)) != -1) {
        switch (option) {
        case 's':
            for (int i = 0; i < 4; i++)
                if (strcmp (optarg, s_scenario_names[i]) == 0)
                    options->scenario = (s_scenario_t) i;
            if ((int) options->scenario < 0)
                return s_usage_error ("unknown scenario (join, crash, steady, partition)", optarg);
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
    if (options.loopback)
        shoal_membership_config_loopback (&config.membership);
    shoal_sim_t *sim = shoal_sim_new (&config, options.nodes, options.seed);
    s_run_t run = { .sim = sim, .subject = SHOAL_SIM_NONE, .first_suspect_ms = UINT64_MAX };
    run.violations = json_array ();
    run.knows = calloc (options.nodes, 1);
    run.dead = calloc (options.nodes, 1);
    run.suspected = calloc (options.nodes, 1);
    run.declared_dead = calloc (options.nodes, 1);
    run.incarnations = calloc (options.nodes, sizeof (uint64_t));
    if (!sim || !run.violations || !run.knows || !run.dead || !run.suspected ||
        !run.declared_dead || !run.incarnations) {
        fprintf (stderr, "shoal-sim: out of memory\n");
        return 1;
    }
    shoal_sim_observe (sim, s_observe, &run);
    double wall = s_wall ();
    s_result_t result = s_scenario (&run, &options, &config.membership);
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
    free (run.verdicts);
    shoal_sim_destroy (&sim);
    return rc;
}

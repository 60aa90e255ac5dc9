/*  sim/options.c: shoal-sim's command line, and its --help, which lists
    the scenarios from their families' tables.
*/
#include "sim/scenario.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char s_usage_head[] =
    "usage: shoal-sim --scenario NAME [--nodes N] [--seed S] [--loss P] [--duration SECONDS]\n"
    "                 [--stall K] [--profile lan|loopback|wan] [--available] [--settled]\n"
    "                 [--json]\n"
    "\n"
    "Runs the membership protocol (SWIM with Lifeguard), and for the leader\n"
    "scenarios the election, on N simulated nodes, on a virtual clock and\n"
    "network, and reports what one scenario measures.\n"
    "\n";

static const char s_usage_tail[] =
    "\n"
    "options:\n"
    "  --nodes N          cluster size (default 100, at most 100000)\n"
    "  --seed S           seed of every random choice (default 1): a run replays\n"
    "  --loss P           datagrams lost, as a fraction (0.01) or a percentage (1%)\n"
    "  --duration SECONDS how long steady runs and the partition holds (default 60)\n"
    "  --stall K          steady: K nodes pause 2 s out of every 10 s (default 0);\n"
    "                     leader-crash-tenth: every 250 ms for a minute, K nodes\n"
    "                     at random pause 1 to 3 s (a loaded machine)\n"
    "  --profile NAME     timing: lan (default), loopback (10x faster) or wan (5x slower)\n"
    "  --available        election in available mode (default: quorum mode)\n"
    "  --faults K         random: how many faults (default 10)\n"
    "  --tasks N          task scenarios: tasks in the job (default 60)\n"
    "  --backlog N        messages a paused node's socket keeps (default 256)\n"
    "  --max-starting N   task scenarios: the leader's bound on tasks starting at\n"
    "                     once in the cluster (default 0: none)\n"
    "  --silent-crash     a crashed node's kernel sends no port unreachable (a\n"
    "                     machine lost, not a process): senders get no hint\n"
    "  --settled          start from steady state: every node already holds every\n"
    "                     other alive, as old news no queue still sends (as in a\n"
    "                     cluster up for a while), instead of joining through node 0\n"
    "  --fail P           task scenarios: starts of a task that fail, as a\n"
    "                     fraction or a percentage (default 0)\n"
    "  --stateless        task scenarios: the job keeps no state (default: it\n"
    "                     does, so a move first warms a learner up)\n"
    "  --fenced           task scenarios: the job is fenced (its store refuses\n"
    "                     an older epoch's writes), so a dead node's tasks move\n"
    "                     at once; an active fenced out counts as none\n"
    "  --leaves           random, random-tasks: a fault may also be a graceful\n"
    "                     leave (SIGTERM), the process ending after the hold,\n"
    "                     and a start again\n"
    "  --submit           random-tasks: submit a job of 1 to 3 tasks to a random\n"
    "                     node at the start of each fault; reports jobs_acked and\n"
    "                     lost_jobs (answered ok, then lost: a violation)\n"
    "  --json             print the report as JSON (default: one line per field)\n"
    "  --help             print this help\n"
    "\n"
    "Exit status: 0 when every invariant held, 1 when one broke or the scenario\n"
    "did not finish in its time limit, 2 on a usage error.\n";

//  The head, every family's heading and its scenarios' lines, the options.
static void
s_usage (void)
{
    fputs (s_usage_head, stdout);
    for (const sim_family_t *const *family = sim_families; *family; family++) {
        fputs ((*family)->help, stdout);
        for (size_t i = 0; i < (*family)->count; i++)
            fputs ((*family)->scenarios[i].help, stdout);
    }
    fputs (s_usage_tail, stdout);
}

//  Finds the scenario named name; false when none is.
static bool
s_find (const char *name, sim_options_t *options)
{
    for (const sim_family_t *const *family = sim_families; *family; family++)
        for (size_t i = 0; i < (*family)->count; i++)
            if (strcmp (name, (*family)->scenarios[i].name) == 0) {
                options->scenario = &(*family)->scenarios[i];
                options->family = *family;
                return true;
            }
    return false;
}

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

//  A whole number in [low, high] for a flag, or a usage error.
static int
s_count (const char *arg, uint64_t low, uint64_t high, uint32_t *value, const char *error)
{
    uint64_t number;
    if (s_number (arg, low, high, &number) != 0)
        return s_usage_error (error, arg);
    *value = (uint32_t) number;
    return 0;
}

//  One option that takes a value (arg); returns 0 or 2.
static int
s_option_value (int option, const char *arg, sim_options_t *options)
{
    uint64_t value;
    switch (option) {
    case 's':
        if (!s_find (arg, options) && !options->scenario)
            return s_usage_error ("unknown scenario (see --help)", arg);
        return 0;
    case 'n':
        return s_count (arg, 2, 100000, &options->nodes,
                        "--nodes: must be a whole number from 2 to 100000");
    case 'S':
        if (s_number (arg, 0, UINT64_MAX, &value) != 0)
            return s_usage_error ("--seed: must be a whole number", arg);
        options->seed = value;
        return 0;
    case 'l':
        if (s_fraction (arg, &options->loss_ppm) != 0 || options->loss_ppm >= 1000000)
            return s_usage_error ("--loss: must be a fraction below 1 (0.01) or a percentage (1%)",
                                  arg);
        return 0;
    case 'd':
        if (s_number (arg, 1, 24 * 3600, &value) != 0)
            return s_usage_error ("--duration: must be whole seconds from 1 to 86400", arg);
        options->duration_ms = value * 1000;
        return 0;
    case 'k':
        return s_count (arg, 0, 100000, &options->stall,
                        "--stall: must be a whole number of nodes");
    case 'p':
        for (int profile = 0; profile < SIM_PROFILE_COUNT; profile++)
            if (strcmp (arg, sim_profile_names[profile]) == 0) {
                options->profile = (sim_profile_t) profile;
                return 0;
            }
        return s_usage_error ("--profile: must be lan, loopback or wan", arg);
    case 'f':
        return s_count (arg, 1, 100000, &options->faults,
                        "--faults: must be a whole number from 1 to 100000");
    case 't':
        return s_count (arg, 1, 10000, &options->tasks,
                        "--tasks: must be a whole number from 1 to 10000");
    case 'F':
        if (s_fraction (arg, &options->fail_ppm) != 0 || options->fail_ppm >= 1000000)
            return s_usage_error ("--fail: must be a fraction below 1 (0.1) or a percentage (10%)",
                                  arg);
        return 0;
    case 'M':
        return s_count (arg, 0, 100000, &options->max_starting,
                        "--max-starting: must be a whole number up to 100000");
    default: //  'b'
        return s_count (arg, 0, 1000000, &options->backlog,
                        "--backlog: must be a whole number up to 1000000");
    }
}

//  One option a line (clang-format packs a table of over 20 into columns).
// clang-format off
static const struct option s_longs[] = {
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
    { "fenced", no_argument, NULL, 'E' },
    { "backlog", required_argument, NULL, 'b' },
    { "max-starting", required_argument, NULL, 'M' },
    { "fail", required_argument, NULL, 'F' },
    { "submit", no_argument, NULL, 'J' },
    { "leaves", no_argument, NULL, 'L' },
    { "help", no_argument, NULL, 'h' },
    { "silent-crash", no_argument, NULL, 'C' },
    { "settled", no_argument, NULL, 'Z' },
    { NULL, 0, NULL, 0 },
};
// clang-format on

//  One option; returns 0 or 2.
static int
s_option (int option, char **argv, sim_options_t *options)
{
    switch (option) {
    case 'j':
        options->json = true;
        return 0;
    case 'a':
        options->available = true;
        return 0;
    case 'T':
        options->stateless = true;
        return 0;
    case 'E':
        options->fenced = true;
        return 0;
    case 'J':
        options->submit = true;
        return 0;
    case 'L':
        options->leaves = true;
        return 0;
    case 'C':
        options->silent_crash = true;
        return 0;
    case 'Z':
        options->settled = true;
        return 0;
    case 'h':
        s_usage ();
        exit (0);
    case 's':
    case 'n':
    case 'S':
    case 'l':
    case 'd':
    case 'k':
    case 'p':
    case 'f':
    case 't':
    case 'F':
    case 'b':
    case 'M':
        return s_option_value (option, optarg, options);
    default:
        return s_usage_error ("unknown option or missing value", argv[optind - 1]);
    }
}

int
sim_options_parse (int argc, char **argv, sim_options_t *options)
{
    *options = (sim_options_t){
        .nodes = 100,
        .seed = 1,
        .duration_ms = 60000,
        .faults = 10,
        .tasks = 60,
        .backlog = 256,
    };
    opterr = 0;
    int option;
    while ((option = getopt_long (argc, argv, "", s_longs, NULL)) != -1) {
        int rc = s_option (option, argv, options);
        if (rc != 0)
            return rc;
    }
    if (optind < argc)
        return s_usage_error ("unexpected argument", argv[optind]);
    if (!options->scenario)
        return s_usage_error ("--scenario is required", NULL);
    if (options->stall > options->nodes)
        return s_usage_error ("--stall: more nodes than the cluster has", NULL);
    return 0;
}

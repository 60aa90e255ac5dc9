/*  bench/bench_assign.c: how long one assignment takes, and its memory.

    The shapes are those of issue 3, after Kafka Streams' own scale tests:
    stateful tasks on few nodes, many nodes, many standbys, a large cluster
    with a previous assignment and random lags, and 100,000 tasks. Each case
    runs in a child process, so that its peak memory (ru_maxrss) is its own.
    Prints one JSON object; asserts nothing about time.

    Usage: bench_assign [--quick] [NAME...]
      --quick  every case a tenth the size
      NAME     run only the cases whose name contains NAME
*/

#include "rebalance/assignor.h"
#include "wire/splitmix.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    const char *name;
    uint32_t tasks;
    uint32_t nodes;
    uint32_t standbys;
    bool previous; //  start from a previous assignment, with random lags
} s_case_t;

static const s_case_t s_cases[] = {
    { "6000-stateful-x-2-nodes-1-standby", 6000, 2, 1, false },
    { "1000-tasks-x-1000-nodes-1-standby", 1000, 1000, 1, false },
    { "1000-tasks-x-100-nodes-50-standbys", 1000, 100, 50, false },
    { "10000-tasks-x-1000-nodes-1-standby-previous-and-lags", 10000, 1000, 1, true },
    { "100000-tasks-x-1000-nodes", 100000, 1000, 0, false },
};

static double
s_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

//  Runs one case in this process and writes "seconds holdings followup" to fd.
static int
s_run (const s_case_t *c, uint32_t scale, int fd)
{
    uint32_t tasks = c->tasks / scale ? c->tasks / scale : 1;
    uint32_t nodes = c->nodes / scale ? c->nodes / scale : 1;
    char (*node_ids)[16] = calloc (nodes, 16);
    char (*task_ids)[24] = calloc (tasks, 24);
    char (*job_ids)[16] = calloc (100, 16);
    shoal_assign_node_t *node = calloc (nodes, sizeof *node);
    shoal_assign_task_t *task = calloc (tasks, sizeof *task);
    shoal_assign_holding_t *current = calloc (tasks, sizeof *current);
    shoal_assign_lag_t *lags = calloc (tasks, sizeof *lags);
    if (!node_ids || !task_ids || !job_ids || !node || !task || !current || !lags)
        return -1;
    for (uint32_t j = 0; j < 100; j++)
        snprintf (job_ids[j], 16, "job%02u", j);
    for (uint32_t n = 0; n < nodes; n++) {
        snprintf (node_ids[n], 16, "node-%05u", n);
        node[n] = (shoal_assign_node_t){ .id = node_ids[n], .capacity = 1, .handles_all = true };
    }
    uint32_t jobs = tasks < 100 ? tasks : 100;
    for (uint32_t t = 0; t < tasks; t++) {
        uint32_t job = t % jobs;
        snprintf (task_ids[t], 24, "%s/%u", job_ids[job], t / jobs);
        task[t] = (shoal_assign_task_t){ .id = task_ids[t],
                                         .job = job_ids[job],
                                         .stateful = c->standbys > 0 || t % 2 == 0,
                                         .weight = 1 };
    }
    uint64_t seed = 42;
    size_t current_count = 0, lag_count = 0;
    if (c->previous) {
        //  Every task was active on a random node; a random node has a copy
        //  of its state, at a random lag.
        for (uint32_t t = 0; t < tasks; t++) {
            current[current_count++] =
                (shoal_assign_holding_t){ node_ids[splitmix_next (&seed) % nodes], task_ids[t],
                                          SHOAL_ROLE_ACTIVE };
            lags[lag_count++] = (shoal_assign_lag_t){ node_ids[splitmix_next (&seed) % nodes],
                                                      task_ids[t], splitmix_next (&seed) % 20000 };
        }
    }
    shoal_assign_input_t input = {
        .config = { .standbys = c->standbys, .max_warmups = 2, .acceptable_lag = 10000 },
        .node_count = nodes,
        .nodes = node,
        .task_count = tasks,
        .tasks = task,
        .current_count = current_count,
        .current = current,
        .lag_count = lag_count,
        .lags = lags,
    };
    shoal_assign_output_t output;
    char why[200];
    double start = s_now ();
    if (shoal_assign (&input, &output, why, sizeof why) != 0) {
        fprintf (stderr, "bench_assign: %s: %s\n", c->name, why);
        return -1;
    }
    double seconds = s_now () - start;
    dprintf (fd, "%.6f %zu %d %u %u\n", seconds, output.holding_count, output.followup, tasks,
             nodes);
    shoal_assign_output_release (&output);
    return 0;
}

int
main (int argc, char **argv)
{
    uint32_t scale = argc > 1 && strcmp (argv[1], "--quick") == 0 ? 10 : 1;
    int first_name = scale == 1 ? 1 : 2;
    json_t *cases = json_array ();
    int status = 0;
    for (size_t i = 0; i < sizeof s_cases / sizeof s_cases[0]; i++) {
        bool wanted = first_name == argc;
        for (int k = first_name; k < argc && !wanted; k++)
            wanted = strstr (s_cases[i].name, argv[k]) != NULL;
        if (!wanted)
            continue;
        int pipe_fd[2];
        if (pipe (pipe_fd) != 0)
            return 1;
        pid_t child = fork ();
        if (child == 0) {
            close (pipe_fd[0]);
            _exit (s_run (&s_cases[i], scale, pipe_fd[1]) == 0 ? 0 : 1);
        }
        close (pipe_fd[1]);
        char line[256] = { 0 };
        ssize_t got = read (pipe_fd[0], line, sizeof line - 1);
        close (pipe_fd[0]);
        int wstatus = 0;
        struct rusage usage;
        wait4 (child, &wstatus, 0, &usage);
        double seconds = 0;
        size_t holdings = 0;
        int followup = 0;
        unsigned tasks = 0, nodes = 0;
        if (got <= 0 || !WIFEXITED (wstatus) || WEXITSTATUS (wstatus) != 0 ||
            sscanf (line, "%lf %zu %d %u %u", &seconds, &holdings, &followup, &tasks, &nodes) !=
                5) {
            fprintf (stderr, "bench_assign: case %s failed\n", s_cases[i].name);
            status = 1;
            continue;
        }
        json_array_append_new (cases,
                               json_pack ("{s:s, s:i, s:i, s:i, s:b, s:f, s:i, s:b, s:i}", "name",
                                          s_cases[i].name, "tasks", (int) tasks, "nodes",
                                          (int) nodes, "standbys", (int) s_cases[i].standbys,
                                          "previous", s_cases[i].previous, "ms", seconds * 1000.0,
                                          "holdings", (int) holdings, "followup", followup,
                                          "peak_rss_kib", (int) usage.ru_maxrss));
    }
    json_t *report =
        json_pack ("{s:s, s:b, s:o}", "benchmark", "assign", "quick", scale != 1, "cases", cases);
    json_dumpf (report, stdout, JSON_INDENT (2));
    printf ("\n");
    json_decref (report);
    return status;
}

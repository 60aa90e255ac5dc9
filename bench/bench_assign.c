/*  bench/bench_assign.c: how long one assignment takes, and its memory.

    Two kinds of case. The first ("cases") builds the assignor's input in C
    and times shoal_assign alone; the shapes are those of issue 3, after
    Kafka Streams' own scale tests: stateful tasks on few nodes, many nodes,
    many standbys, a large cluster with a previous assignment and random
    lags, and 100,000 tasks. The second ("json_cases", issue 24) writes a
    cluster as the JSON text of docs/assign.md and times what `shoal assign`
    does with it: in process, parsing, assigning and rendering, each on its
    own; and as a whole command, `shoal assign FILE`, run as a child
    process. Its shapes are the two (10,000 tasks x 1,000 nodes with
    a random previous assignment and every holder's lag; 100,000 tasks x
    1,000 nodes cold, 70 % stateful) and those that were slow: 70 %
    stateful with a previous assignment, labels that a task requires, and
    all of it at once with weights, two standbys and spread_by.

    Each run is a child process, so that its peak memory (ru_maxrss) is its
    own; the in-process child's includes the input text. A JSON case runs
    RUNS times (5; 1 with --quick) and reports medians, and the worst run
    of each wall time (_max). Prints one JSON object; asserts nothing about
    time.

    Usage: bench_assign [--quick] [--runs N] [--shoal PATH] [--save DIR] [NAME...]
      --quick  every case a tenth the size, one run each
      --runs   runs of each JSON case (default 5)
      --save   also write each JSON case's input to DIR/NAME.json, to
               profile `shoal assign` on it or compare its output
      --shoal  the shoal binary for whole-command runs (default: ../shoal
               next to this program's directory, as in a build tree); when
               it is not there, whole-command figures are null
      NAME     run only the cases whose name contains NAME
*/

#include "rebalance/assign_json.h"
#include "rebalance/assignor.h"
#include "wire/splitmix.h"

#include <fcntl.h>
#include <jansson.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
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

static int
s_u64_cmp (const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
    return x < y ? -1 : x > y ? 1 : 0;
}

//  Seconds on clock: CLOCK_MONOTONIC for wall time, or
//  CLOCK_PROCESS_CPUTIME_ID for the CPU of this process (on a machine
//  shared with other work, the wall clock also counts the time others had
//  the core).
static double
s_clock_seconds (clockid_t clock)
{
    struct timespec ts;
    clock_gettime (clock, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static double
s_now (void)
{
    return s_clock_seconds (CLOCK_MONOTONIC);
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

//  ---------------------------------------------------------------------
//  JSON cases: the text of docs/assign.md, and `shoal assign` on it

typedef struct {
    const char *name;
    uint32_t tasks;
    uint32_t nodes;
    uint32_t standbys;
    uint32_t stateful_percent;
    bool previous; //  a random previous assignment, every holder's lag reported
    bool labels;   //  zone and disk labels; 20 % of tasks require disk ssd
    bool weights;  //  weights 1, 1, 2, 3
    bool spread;   //  spread_by zone
} s_json_case_t;

static const s_json_case_t s_json_cases[] = {
    { "json-10000-tasks-x-1000-nodes-1-standby-previous-and-lags", 10000, 1000, 1, 100, true, false,
      false, false },
    { "json-100000-tasks-x-1000-nodes-cold-70pct-stateful", 100000, 1000, 0, 70, false, false,
      false, false },
    { "json-10000-tasks-x-1000-nodes-70pct-stateful-previous-and-lags", 10000, 1000, 1, 70, true,
      false, false, false },
    { "json-10000-tasks-x-1000-nodes-labels-previous-and-lags", 10000, 1000, 1, 100, true, true,
      false, false },
    { "json-10000-tasks-x-1000-nodes-2-standbys-labels-weights-spread-70pct-stateful", 10000, 1000,
      2, 70, true, true, true, true },
};

typedef struct {
    char *text;
    size_t size, capacity;
    bool failed;
} s_text_t;

static void
s_put (s_text_t *text, const char *format, ...)
{
    for (int attempt = 0; attempt < 2 && !text->failed; attempt++) {
        va_list args;
        va_start (args, format);
        size_t room = text->capacity - text->size;
        int n = vsnprintf (text->text ? text->text + text->size : NULL, room, format, args);
        va_end (args);
        if (n < 0) {
            text->failed = true;
            return;
        }
        if ((size_t) n < room) {
            text->size += (size_t) n;
            return;
        }
        size_t capacity = 2 * text->capacity + (size_t) n + 65536;
        char *bigger = realloc (text->text, capacity);
        if (!bigger)
            text->failed = true;
        else
            text->text = bigger, text->capacity = capacity;
    }
}

//  Writes the case's cluster as JSON text: nodes node-00000 ..., tasks
//  jobNN/k of 100 jobs; with a previous assignment, each task active on a
//  random node and each stateful one standing by on as many other random
//  nodes as it has standbys, with every holder's lag random below 20,000
//  (so that about half the holders are caught up).
static char *
s_json_text (const s_json_case_t *c, uint32_t scale, size_t *size)
{
    uint32_t tasks = c->tasks / scale ? c->tasks / scale : 1;
    uint32_t nodes = c->nodes / scale ? c->nodes / scale : 1;
    uint32_t jobs = tasks < 100 ? tasks : 100;
    uint64_t seed = 24;
    s_text_t text = { 0 };
    bool *stateful = calloc (tasks, sizeof (bool));
    uint32_t *holder = calloc ((size_t) tasks * (1 + c->standbys), sizeof (uint32_t));
    uint32_t *holders = calloc (tasks, sizeof (uint32_t));
    if (!stateful || !holder || !holders)
        return NULL;
    s_put (&text,
           "{\"config\": {\"standbys\": %u, \"max_warmups\": 2, \"acceptable_lag\": 10000%s},\n",
           c->standbys, c->spread ? ", \"spread_by\": \"zone\"" : "");
    s_put (&text, "\"nodes\": [");
    for (uint32_t n = 0; n < nodes; n++) {
        s_put (&text, "%s\n{\"id\": \"node-%05u\"", n ? "," : "", n);
        if (c->labels || c->spread)
            s_put (&text, ", \"labels\": {\"zone\": \"z%u\", \"disk\": \"%s\"}", n % 3,
                   n % 2 ? "ssd" : "hdd");
        s_put (&text, "}");
    }
    s_put (&text, "],\n\"tasks\": [");
    static const uint32_t weights[] = { 1, 1, 2, 3 };
    for (uint32_t t = 0; t < tasks; t++) {
        stateful[t] = splitmix_next (&seed) % 100 < c->stateful_percent;
        s_put (&text, "%s\n{\"id\": \"job%02u/%u\", \"stateful\": %s", t ? "," : "", t % jobs,
               t / jobs, stateful[t] ? "true" : "false");
        if (c->weights)
            s_put (&text, ", \"weight\": %u", weights[splitmix_next (&seed) % 4]);
        if (c->labels && splitmix_next (&seed) % 100 < 20)
            s_put (&text, ", \"require\": {\"disk\": \"ssd\"}");
        s_put (&text, "}");
    }
    s_put (&text, "]");
    if (c->previous) {
        uint32_t per_task = 1 + c->standbys;
        for (uint32_t t = 0; t < tasks; t++) {
            uint32_t want = 1 + (stateful[t] ? c->standbys : 0);
            uint32_t *held = &holder[(size_t) t * per_task];
            while (holders[t] < want && holders[t] < nodes) {
                uint32_t n = (uint32_t) (splitmix_next (&seed) % nodes);
                bool taken = false;
                for (uint32_t i = 0; i < holders[t]; i++)
                    taken |= held[i] == n;
                if (!taken)
                    held[holders[t]++] = n;
            }
        }
        //  current and lags list each node's tasks: one pass over the tasks
        //  per node would be nodes x tasks, so the holdings are sorted by
        //  node first.
        size_t count = 0;
        uint64_t *by_node = calloc ((size_t) tasks * per_task, sizeof (uint64_t));
        if (!by_node)
            return NULL;
        for (uint32_t t = 0; t < tasks; t++)
            for (uint32_t i = 0; i < holders[t]; i++)
                by_node[count++] = (uint64_t) holder[(size_t) t * per_task + i] << 32 |
                                   (uint64_t) t << 1 | (i > 0);
        qsort (by_node, count, sizeof (uint64_t), s_u64_cmp);
        for (int part = 0; part < 2; part++) {
            s_put (&text, part ? ",\n\"lags\": {" : ",\n\"current\": {");
            for (size_t i = 0; i < count;) {
                uint32_t n = (uint32_t) (by_node[i] >> 32);
                s_put (&text, "%s\n\"node-%05u\": {", i ? "," : "", n);
                if (part == 0)
                    for (int standby = 0; standby < 2; standby++) {
                        s_put (&text, "%s\"%s\": [", standby ? ", " : "",
                               standby ? "standby" : "active");
                        bool first = true;
                        for (size_t k = i; k < count && by_node[k] >> 32 == n; k++)
                            if ((int) (by_node[k] & 1) == standby) {
                                uint32_t t = (uint32_t) by_node[k] >> 1;
                                s_put (&text, "%s\"job%02u/%u\"", first ? "" : ", ", t % jobs,
                                       t / jobs);
                                first = false;
                            }
                        s_put (&text, "]");
                    }
                bool first = true;
                size_t k = i;
                for (; k < count && by_node[k] >> 32 == n; k++) {
                    uint32_t t = (uint32_t) by_node[k] >> 1;
                    if (part == 1 && stateful[t]) {
                        s_put (&text, "%s\"job%02u/%u\": %u", first ? "" : ", ", t % jobs, t / jobs,
                               (unsigned) (splitmix_next (&seed) % 20000));
                        first = false;
                    }
                }
                s_put (&text, "}");
                i = k;
            }
            s_put (&text, "}");
        }
        free (by_node);
    }
    s_put (&text, "}\n");
    free (stateful);
    free (holder);
    free (holders);
    if (text.failed) {
        free (text.text);
        return NULL;
    }
    *size = text.size;
    return text.text;
}

static double
s_cpu_now (void)
{
    return s_clock_seconds (CLOCK_PROCESS_CPUTIME_ID);
}

//  Times parsing, assigning and rendering the text in this process and
//  writes the wall seconds of each, then the CPU seconds of each, to fd.
static int
s_json_run (const char *text, size_t size, int fd)
{
    char why[256];
    shoal_assign_json_t *description;
    double wall[4], cpu[4];
    wall[0] = s_now (), cpu[0] = s_cpu_now ();
    if (shoal_assign_json_parse (text, size, &description, why, sizeof why) != 0) {
        fprintf (stderr, "bench_assign: %s\n", why);
        return -1;
    }
    wall[1] = s_now (), cpu[1] = s_cpu_now ();
    shoal_assign_output_t output;
    if (shoal_assign (shoal_assign_json_input (description), &output, why, sizeof why) != 0) {
        fprintf (stderr, "bench_assign: %s\n", why);
        return -1;
    }
    wall[2] = s_now (), cpu[2] = s_cpu_now ();
    char *json = shoal_assign_json_render (shoal_assign_json_input (description), &output);
    wall[3] = s_now (), cpu[3] = s_cpu_now ();
    if (!json)
        return -1;
    dprintf (fd, "%.6f %.6f %.6f %.6f %.6f %.6f\n", wall[1] - wall[0], wall[2] - wall[1],
             wall[3] - wall[2], cpu[1] - cpu[0], cpu[2] - cpu[1], cpu[3] - cpu[2]);
    free (json);
    shoal_assign_output_release (&output);
    shoal_assign_json_destroy (&description);
    return 0;
}

static double
s_seconds (struct timeval tv)
{
    return (double) tv.tv_sec + (double) tv.tv_usec / 1e6;
}

//  Runs `shoal assign file` with its output to /dev/null: wall and CPU
//  seconds, peak RSS. Returns 0 when it exited with status 0.
static int
s_whole_run (const char *shoal, const char *file, double *wall, double *cpu, long *rss_kib)
{
    double start = s_now ();
    pid_t child = fork ();
    if (child < 0)
        return -1;
    if (child == 0) {
        int null = open ("/dev/null", O_WRONLY);
        if (null < 0 || dup2 (null, STDOUT_FILENO) < 0)
            _exit (127);
        execl (shoal, shoal, "assign", file, (char *) NULL);
        _exit (127);
    }
    int wstatus = 0;
    struct rusage usage;
    if (wait4 (child, &wstatus, 0, &usage) != child)
        return -1;
    *wall = s_now () - start;
    *cpu = s_seconds (usage.ru_utime) + s_seconds (usage.ru_stime);
    *rss_kib = usage.ru_maxrss;
    return WIFEXITED (wstatus) && WEXITSTATUS (wstatus) == 0 ? 0 : -1;
}

static int
s_double_cmp (const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y ? 1 : 0;
}

static double
s_median (double *values, int count)
{
    qsort (values, (size_t) count, sizeof (double), s_double_cmp);
    return count % 2 ? values[count / 2] : (values[count / 2 - 1] + values[count / 2]) / 2;
}

#define S_RUNS_MAX 101

//  Writes text to dir/name.json. Returns 0, or -1 having said why.
static int
s_save (const char *dir, const char *name, const char *text, size_t size)
{
    char path[PATH_MAX];
    snprintf (path, sizeof path, "%s/%s.json", dir, name);
    FILE *file = fopen (path, "wb");
    bool ok = file && fwrite (text, 1, size, file) == size;
    if (file && fclose (file) != 0)
        ok = false;
    if (!ok)
        fprintf (stderr, "bench_assign: cannot write %s\n", path);
    return ok ? 0 : -1;
}

//  Runs one JSON case: runs in-process children and runs whole commands
//  (when shoal is not NULL). Returns the case's JSON, or NULL on a failure.
static json_t *
s_json_case (const s_json_case_t *c, uint32_t scale, int runs, const char *shoal, const char *save)
{
    size_t size = 0;
    char *text = s_json_text (c, scale, &size);
    if (!text)
        return NULL;
    if (save && s_save (save, c->name, text, size) != 0) {
        free (text);
        return NULL;
    }
    char file[] = "/tmp/bench_assign-XXXXXX";
    int file_fd = shoal ? mkstemp (file) : -1;
    if (shoal && (file_fd < 0 || write (file_fd, text, size) != (ssize_t) size)) {
        fprintf (stderr, "bench_assign: cannot write %s\n", file);
        free (text);
        return NULL;
    }
    if (file_fd >= 0)
        close (file_fd);
    //  Per phase (parse, assign, render, all three), wall then CPU seconds.
    double phase[8][S_RUNS_MAX];
    double wall[S_RUNS_MAX], cpu[S_RUNS_MAX], rss[S_RUNS_MAX], whole_rss[S_RUNS_MAX];
    int status = 0;
    for (int run = 0; run < runs && status == 0; run++) {
        int pipe_fd[2];
        if (pipe (pipe_fd) != 0)
            return NULL;
        pid_t child = fork ();
        if (child == 0) {
            close (pipe_fd[0]);
            _exit (s_json_run (text, size, pipe_fd[1]) == 0 ? 0 : 1);
        }
        close (pipe_fd[1]);
        char line[256] = { 0 };
        ssize_t got = read (pipe_fd[0], line, sizeof line - 1);
        close (pipe_fd[0]);
        int wstatus = 0;
        struct rusage usage;
        wait4 (child, &wstatus, 0, &usage);
        if (got <= 0 || !WIFEXITED (wstatus) || WEXITSTATUS (wstatus) != 0 ||
            sscanf (line, "%lf %lf %lf %lf %lf %lf", &phase[0][run], &phase[1][run], &phase[2][run],
                    &phase[4][run], &phase[5][run], &phase[6][run]) != 6) {
            status = -1;
            break;
        }
        phase[3][run] = phase[0][run] + phase[1][run] + phase[2][run];
        phase[7][run] = phase[4][run] + phase[5][run] + phase[6][run];
        rss[run] = (double) usage.ru_maxrss;
        if (shoal) {
            long kib = 0;
            if (s_whole_run (shoal, file, &wall[run], &cpu[run], &kib) != 0) {
                fprintf (stderr, "bench_assign: %s assign %s failed\n", shoal, file);
                status = -1;
            }
            whole_rss[run] = (double) kib;
        }
    }
    if (shoal)
        unlink (file);
    free (text);
    if (status != 0)
        return NULL;
    json_t *result = json_pack (
        "{s:s, s:i, s:i, s:i, s:i, s:b, s:b, s:b, s:b, s:i, s:i, s:i}", "name", c->name, "tasks",
        (int) (c->tasks / scale), "nodes", (int) (c->nodes / scale), "standbys", (int) c->standbys,
        "stateful_percent", (int) c->stateful_percent, "previous", c->previous, "labels", c->labels,
        "weights", c->weights, "spread", c->spread, "input_bytes", (int) size, "runs", runs,
        "in_process_peak_rss_kib", (int) s_median (rss, runs));
    static const char *const phase_names[8] = { "parse_ms",      "assign_ms",
                                                "render_ms",     "in_process_ms",
                                                "parse_cpu_ms",  "assign_cpu_ms",
                                                "render_cpu_ms", "in_process_cpu_ms" };
    //  s_median sorts its values: the last is the worst run.
    static const char *const worst_names[4] = { "parse_ms_max", "assign_ms_max", "render_ms_max",
                                                "in_process_ms_max" };
    for (int k = 0; k < 8; k++) {
        json_object_set_new (result, phase_names[k],
                             json_real (s_median (phase[k], runs) * 1000.0));
        if (k < 4)
            json_object_set_new (result, worst_names[k], json_real (phase[k][runs - 1] * 1000.0));
    }
    if (shoal) {
        json_object_set_new (result, "whole_s", json_real (s_median (wall, runs)));
        json_object_set_new (result, "whole_s_max", json_real (wall[runs - 1]));
        json_object_set_new (result, "whole_cpu_s", json_real (s_median (cpu, runs)));
        json_object_set_new (result, "whole_peak_rss_kib",
                             json_integer ((json_int_t) s_median (whole_rss, runs)));
    } else {
        json_object_set_new (result, "whole_s", json_null ());
        json_object_set_new (result, "whole_s_max", json_null ());
        json_object_set_new (result, "whole_cpu_s", json_null ());
        json_object_set_new (result, "whole_peak_rss_kib", json_null ());
    }
    return result;
}

//  The shoal binary of the build tree this program is in, or NULL.
static char *
s_default_shoal (void)
{
    static char path[PATH_MAX + 16];
    char self[PATH_MAX];
    ssize_t n = readlink ("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return NULL;
    self[n] = 0;
    snprintf (path, sizeof path, "%s/../shoal", dirname (self));
    return access (path, X_OK) == 0 ? path : NULL;
}

static bool
s_wanted (const char *name, int argc, char **argv, int first_name)
{
    bool wanted = first_name == argc;
    for (int k = first_name; k < argc && !wanted; k++)
        wanted = strstr (name, argv[k]) != NULL;
    return wanted;
}

int
main (int argc, char **argv)
{
    uint32_t scale = 1;
    int runs = 5, first_name = 1;
    char *shoal = NULL, *save = NULL;
    bool shoal_given = false;
    for (; first_name < argc; first_name++) {
        if (strcmp (argv[first_name], "--quick") == 0)
            scale = 10, runs = 1;
        else if (strcmp (argv[first_name], "--runs") == 0 && first_name + 1 < argc) {
            runs = atoi (argv[++first_name]);
            if (runs < 1 || runs > S_RUNS_MAX) {
                fprintf (stderr, "bench_assign: --runs: 1 to %d\n", S_RUNS_MAX);
                return 2;
            }
        } else if (strcmp (argv[first_name], "--shoal") == 0 && first_name + 1 < argc)
            shoal = argv[++first_name], shoal_given = true;
        else if (strcmp (argv[first_name], "--save") == 0 && first_name + 1 < argc)
            save = argv[++first_name];
        else
            break;
    }
    if (!shoal_given)
        shoal = s_default_shoal ();
    json_t *cases = json_array ();
    int status = 0;
    for (size_t i = 0; i < sizeof s_cases / sizeof s_cases[0]; i++) {
        if (!s_wanted (s_cases[i].name, argc, argv, first_name))
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
    json_t *json_cases = json_array ();
    for (size_t i = 0; i < sizeof s_json_cases / sizeof s_json_cases[0]; i++) {
        if (!s_wanted (s_json_cases[i].name, argc, argv, first_name))
            continue;
        json_t *result = s_json_case (&s_json_cases[i], scale, runs, shoal, save);
        if (!result) {
            fprintf (stderr, "bench_assign: case %s failed\n", s_json_cases[i].name);
            status = 1;
            continue;
        }
        json_array_append_new (json_cases, result);
    }
    json_t *report = json_pack ("{s:s, s:b, s:o, s:o}", "benchmark", "assign", "quick", scale != 1,
                                "cases", cases, "json_cases", json_cases);
    json_dumpf (report, stdout, JSON_INDENT (2));
    printf ("\n");
    json_decref (report);
    return status;
}

/*  worker/worker.c: `shoal worker`: the options, the event loop, the table
    of tasks, the restarts of children that exit, and the logs.

    One thread, the main one, does everything here: it is the one that
    forks the children's shims, whose PR_SET_PDEATHSIG follows the thread
    that forked them (worker/child.h). It never waits for a child: it polls
    the node's event descriptor, a signalfd (SIGCHLD, SIGTERM, SIGINT,
    SIGHUP), the children's descriptors and the end of a leave, with the
    nearest timer (a grace that runs out, a restart that is due, the
    watchdog) as its timeout. Under systemd it tells the service manager
    how it stands (worker/notify.h). Only a leave runs on a thread of its
    own, since shoal_node_leave waits while the loop goes on stopping the
    tasks it hands over.
*/
#define _GNU_SOURCE //  environ

#include "worker/worker.h"

#include "worker/child.h"
#include "worker/notify.h"
#include "worker/tasklog.h"
#include "node/tasklog.h"
#include "node/options.h"
#include "shoal.h"

#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#define EXIT_FAILED 1
#define EXIT_USAGE  2

//  A child that exits on its own is started again after 1 s, then 2, 4...
//  at most 30 s; one that ran 60 s starts the count afresh. The fifth exit
//  in a row gives up: the task is reported failed, and the node starts it
//  again later (or the leader moves it). The node counts its own restarts,
//  but a report of RUNNING ends its count: so once the worker gave up, a
//  child the node starts again is reported running only once it has run
//  60 s, and one that exits before is reported failed at once. Then the
//  node's count goes on, and it gives the task up after a few.
#define S_BACKOFF_FIRST_MS 1000
#define S_BACKOFF_MAX_MS   30000
#define S_HEALTHY_MS       60000
#define S_FAILURES_MAX     5

//  A child's malformed status lines are logged at most once a second.
#define S_BAD_LINE_MS 1000
//  Status lines taken from one child per wake-up, so that a chatty child
//  cannot hold up the others; and lines of its output.
#define S_LINES_PER_WAKE 256
//  Lines of output taken from a child once it is gone, before its exit is
//  logged: all it left, unless something that escaped it writes on.
#define S_LINES_AT_EXIT 65536
#define S_TEXT_(x)      #x
#define S_TEXT(x)       S_TEXT_ (x)
//  After a second signal, how long the killed children may take to be
//  reaped before the worker exits anyway (their shims kill what is left
//  once the worker is gone).
#define S_DYING_MS 5000

//  Events taken from the node at once (the rest wait for the next turn).
#define S_EVENTS_BATCH 64

//  A lag no one knows yet: never caught up.
#define S_LAG_UNKNOWN UINT64_MAX

//  The lease is passed on to the children at least this often, and at
//  most (s_lease_due).
#define S_LEASE_STEP_MIN_MS 10
#define S_LEASE_STEP_MAX_MS 1000

typedef struct {
    char name[SHOAL_TASK_TEXT]; //  "job/index"
    char job[SHOAL_NAME_TEXT];
    uint32_t index;
    uint32_t parallelism;
    int role; //  as the node wants it now; 0 once told to stop
    uint64_t epoch[2];
    shoal_child_t *child; //  NULL while none runs
    bool running;         //  its command runs
    bool reported;        //  and the node heard it runs (RUNNING)
    bool owes_stop;       //  report STOPPED once the child is gone: it acted as active
    bool promote_due;     //  promoted before its child ran: tell the child once it does
    int started_role;     //  the role and epoch the child was started in
    uint64_t started_epoch[2];
    uint64_t lag;         //  as the child last said
    unsigned failures;    //  exits in a row
    unsigned last_exit;   //  the last one: status, or 256 + signal (as the wire says)
    uint64_t started_ms;  //  when the child was started
    uint64_t restart_ms;  //  when a child starts again; 0: none waits
    bool failed;          //  reported FAILED: nothing runs until the next START
    bool told_no_command; //  the job's missing command was logged
    uint64_t bad_line_ms; //  when a malformed line was last logged
    unsigned bad_lines;   //  and how many were skipped since
} s_task_t;

typedef struct {
    shoal_node_t *node;
    char id[SHOAL_NODE_ID_TEXT];
    int log_level; //  shoal_log_level_t
    bool json;
    uint64_t grace_ms;
    s_task_t **tasks;
    size_t task_count;
    size_t task_room;
    bool leased;
    uint64_t lease_until;                //  the node's lease end as last read (0: none)
    shoal_event_t batch[S_EVENTS_BATCH]; //  the events being acted on
    int signal_fd;
    int signals;  //  SIGTERM and SIGINT received
    int leave_fd; //  readable once the leave is over
    pthread_t leaving;
    bool leave_started;
    bool leave_done;
    int leave_rc;
    char leave_why[SHOAL_REASON_TEXT];
    bool exiting;      //  no child starts any more; the worker ends when none is left
    uint64_t dying_ms; //  after a second signal: when the worker exits whatever is left
    //  The service manager (worker/notify.h), when one wants to hear.
    bool notify;
    bool ready;                      //  READY=1 went out
    bool stopping;                   //  STOPPING=1 went out
    bool notify_failed;              //  a message could not go: logged once
    uint64_t watchdog_ms;            //  WATCHDOG=1 this often; 0: none
    uint64_t watchdog_at;            //  next due
    char leader[SHOAL_NODE_ID_TEXT]; //  as the last LEADER event said
    uint64_t term;
    char status[SHOAL_REASON_TEXT]; //  the STATUS= last sent
    //  Each task's output, kept in DATA-DIR/logs (NULL: not kept), and
    //  what of its trouble was told.
    shoal_tasklog_t *tasklog;
    uint64_t task_log_size;
    uint32_t task_log_keep;
    int child_nice; //  added to each command's nice value
    bool told_log_failed, told_log_dropped;
} s_worker_t;

static uint64_t
s_now (void)
{
    struct timespec now;
    clock_gettime (CLOCK_MONOTONIC, &now);
    return (uint64_t) now.tv_sec * 1000 + (uint64_t) now.tv_nsec / 1000000;
}

//  ---------------------------------------------------------------------
//  Logs: one line per thing that happens, on standard error

static const char *const s_levels[] = { "error", "warn", "info", "debug" };

//  JSON strings are UTF-8; a text that is not is written with '?' for
//  every byte outside ASCII (and for a NUL).
static json_t *
s_json_text (const char *text, size_t length)
{
    json_t *string = json_stringn (text, length);
    if (string)
        return string;
    char *safe = malloc (length + 1);
    if (!safe)
        return json_string ("?");
    for (size_t i = 0; i < length; i++)
        safe[i] = (unsigned char) text[i] < 0x80 && text[i] ? text[i] : '?';
    safe[length] = 0;
    string = json_stringn (safe, length);
    free (safe);
    return string;
}

//  The wall clock now, as the records give it: 2026-12-02T21:45:15.840Z.
static void
s_utc_text (char *text, size_t size)
{
    struct timespec now;
    clock_gettime (CLOCK_REALTIME, &now);
    struct tm utc;
    gmtime_r (&now.tv_sec, &utc);
    size_t at = strftime (text, size, "%Y-%m-%dT%H:%M:%S", &utc);
    snprintf (text + at, size - at, ".%03ldZ", now.tv_nsec / 1000000);
}

//  Writes one record at level, of message (length bytes): "TIME LEVEL
//  message" as text; as JSON, an object of time, level, msg and the fields
//  given (a JSON object, taken; NULL for none). One write each, from the
//  main thread alone, so that records never mix.
static void
s_emit (const s_worker_t *self, int level, json_t *fields, const char *message, size_t length)
{
    char time_text[64];
    s_utc_text (time_text, sizeof time_text);
    if (self->json) {
        json_t *line = json_object ();
        json_object_set_new (line, "time", json_string (time_text));
        json_object_set_new (line, "level", json_string (s_levels[level]));
        json_object_set_new (line, "msg", s_json_text (message, length));
        if (fields)
            json_object_update (line, fields);
        char *text = json_dumps (line, JSON_COMPACT | JSON_PRESERVE_ORDER);
        if (text)
            fprintf (stderr, "%s\n", text);
        free (text);
        json_decref (line);
    } else
        fprintf (stderr, "%s %-5s %.*s\n", time_text, s_levels[level], (int) length, message);
    json_decref (fields);
}

//  Writes a line at level, as s_emit, of a message made from format.
__attribute__ ((format (printf, 4, 5))) static void
s_log (const s_worker_t *self, int level, json_t *fields, const char *format, ...)
{
    if (level > self->log_level) {
        json_decref (fields);
        return;
    }
    char message[1024];
    va_list args;
    va_start (args, format);
    int length = vsnprintf (message, sizeof message, format, args);
    va_end (args);
    if (length < 0)
        length = 0;
    s_emit (self, level, fields, message,
            (size_t) length < sizeof message ? (size_t) length : sizeof message - 1);
}

//  The fields of a task's lines: task, role, epoch, and the pid when a
//  command runs.
static json_t *
s_fields (const s_task_t *task)
{
    char epoch[48];
    snprintf (epoch, sizeof epoch, "%llu.%llu", (unsigned long long) task->epoch[0],
              (unsigned long long) task->epoch[1]);
    json_t *fields = json_pack ("{s:s, s:s, s:s}", "task", task->name, "role",
                                shoal_child_role_name (task->role), "epoch", epoch);
    pid_t pid = task->child ? shoal_child_pid (task->child) : 0;
    if (fields && pid > 0)
        json_object_set_new (fields, "pid", json_integer (pid));
    return fields;
}

//  ---------------------------------------------------------------------
//  Options: defaults < config file < environment < flags

static void
s_help (void)
{
    printf ("usage: shoal worker [--KEY VALUE | --KEY=VALUE]... [--config FILE]\n"
            "\n"
            "Runs a node of a shoal cluster, and each task the node is given as a child\n"
            "process of its job's command (shoal submit JOB ... --command CMD), run by\n"
            "/bin/sh -c. The child learns its task from SHOAL_JOB, SHOAL_TASK, SHOAL_INDEX,\n"
            "SHOAL_PARALLELISM, SHOAL_ROLE, SHOAL_EPOCH and SHOAL_NODE, and reports its\n"
            "lag on the descriptor SHOAL_STATUS_FD names (\"lag N\", \"ready\"); the worker\n"
            "writes \"promote TERM.VERSION\" there when the task becomes active. A stop is\n"
            "SIGTERM to the child's process group, then SIGKILL after --grace; a child\n"
            "never outlives its worker. docs/worker.md has the whole contract.\n"
            "\n"
            "SIGTERM or SIGINT: leave the cluster gracefully (active tasks move first),\n"
            "stop the children, exit 0 (1 when the leave failed); a second one kills the\n"
            "children at once and exits 1. A leave asked with shoal leave ends the same\n"
            "way, once the tasks have moved: the children stop, exit 0. Logs go to\n"
            "standard error. SIGHUP: the event log (--events) is opened again by its\n"
            "name, after logrotate renamed it.\n"
            "\n"
            "options:\n");
    for (size_t i = 0; i < shoal_options_count (); i++) {
        const shoal_option_info_t *info = shoal_options_info (i);
        printf ("  --%-16s %s%s%s%s, default %s\n      %s\n", info->key, info->type,
                info->range[0] ? " (" : "", info->range, info->range[0] ? ")" : "",
                info->default_text[0] ? info->default_text : "(empty)", info->doc);
    }
    printf ("  --%-16s %s\n      %s\n", "config", "path",
            "a config file: one \"key = value\" a line, # for comments");
    printf ("\n"
            "Every option is also the variable SHOAL_<KEY> (upper case, '-' as '_':\n"
            "SHOAL_DATA_DIR) and the line \"key = value\" of a config file. Later sources\n"
            "win: defaults, then the config file, then the environment, then the flags. A\n"
            "list (join, labels, handles) takes comma-separated items and repeats; each\n"
            "source gives it whole. Durations take a unit: 250ms, 30s, 2m. SHOAL_ variables\n"
            "that look like a misspelled option are refused. docs/options.md has them all.\n"
            "\n"
            "Exit status: 0 after a graceful leave, 1 when the node could not start or the\n"
            "leave failed, 2 on a bad flag, value, variable or config file.\n");
}

__attribute__ ((format (printf, 1, 2))) static int
s_usage (const char *format, ...)
{
    va_list args;
    va_start (args, format);
    fprintf (stderr, "shoal worker: ");
    vfprintf (stderr, format, args);
    fprintf (stderr, "\n");
    va_end (args);
    return EXIT_USAGE;
}

//  Applies the options, in their order of precedence. Returns -1 when done,
//  or the exit status: 0 after --help, EXIT_USAGE after an error (said).
static int
s_options (shoal_node_t *node, int argc, char **argv)
{
    char why[SHOAL_REASON_TEXT];
    const char *config = NULL;
    //  The flags are applied last, so they are read first and kept.
    typedef struct {
        char key[64];
        const char *value;
    } s_flag_t;
    s_flag_t *flags = calloc ((size_t) argc + 1, sizeof *flags);
    size_t flag_count = 0;
    int rc = -1;
    if (!flags)
        return s_usage ("out of memory");
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp (arg, "--help") == 0 || strcmp (arg, "-h") == 0) {
            s_help ();
            rc = 0;
            break;
        }
        if (strncmp (arg, "--", 2) != 0 || !arg[2]) {
            rc = s_usage ("'%s' is not a flag: flags are --KEY VALUE or --KEY=VALUE", arg);
            break;
        }
        const char *name = arg + 2, *equals = strchr (name, '=');
        size_t length = equals ? (size_t) (equals - name) : strlen (name);
        if (length >= sizeof flags[0].key) {
            rc = s_usage ("--%.40s...: no such option", name);
            break;
        }
        if (!equals && i + 1 == argc) {
            rc = s_usage ("%s needs a value", arg);
            break;
        }
        const char *value = equals ? equals + 1 : argv[++i];
        if (length == 6 && strncmp (name, "config", 6) == 0)
            config = value;
        else {
            snprintf (flags[flag_count].key, sizeof flags[0].key, "%.*s", (int) length, name);
            flags[flag_count++].value = value;
        }
    }
    if (rc < 0 && config && shoal_node_load_file (node, config, why, sizeof why) != 0)
        rc = s_usage ("--config %s: %s", config, why);
    if (rc < 0 && shoal_node_load_env (node, environ, why, sizeof why) != 0)
        rc = s_usage ("environment: %s", why);
    for (size_t i = 0; i < flag_count && rc < 0; i++)
        if (shoal_node_set (node, flags[i].key, flags[i].value, why, sizeof why) != 0)
            rc = s_usage ("--%s %s: %s", flags[i].key, flags[i].value, why);
    free (flags);
    return rc;
}

//  Reads the options the worker itself acts on.
static int
s_worker_options (s_worker_t *self, char *why, size_t why_size)
{
    char value[SHOAL_OPTION_TEXT];
    if (shoal_node_get (self->node, "log-level", value, sizeof value, why, why_size) != 0)
        return -1;
    for (int level = 0; level < 4; level++)
        if (strcmp (value, s_levels[level]) == 0)
            self->log_level = level;
    if (shoal_node_get (self->node, "log-format", value, sizeof value, why, why_size) != 0)
        return -1;
    self->json = strcmp (value, "json") == 0;
    if (shoal_node_get (self->node, "task-log-size", value, sizeof value, why, why_size) != 0)
        return -1;
    self->task_log_size = strtoull (value, NULL, 10);
    if (shoal_node_get (self->node, "task-log-keep", value, sizeof value, why, why_size) != 0)
        return -1;
    self->task_log_keep = (uint32_t) strtoul (value, NULL, 10);
    if (shoal_node_get (self->node, "child-nice", value, sizeof value, why, why_size) != 0)
        return -1;
    self->child_nice = (int) strtol (value, NULL, 10);
    if (shoal_node_get (self->node, "grace", value, sizeof value, why, why_size) != 0)
        return -1;
    return shoal_options_duration ("grace", value, &self->grace_ms, why, why_size);
}

//  Starts the writer of the task output files, unless task-log-size is 0.
//  One that cannot start is told, and the worker runs without the files.
static void
s_tasklog_start (s_worker_t *self, const char *data_dir)
{
    if (self->task_log_size == 0)
        return;
    char dir[SHOAL_OPTION_TEXT + sizeof SHOAL_TASKLOG_DIR + 1], why[300];
    snprintf (dir, sizeof dir, "%s/%s", data_dir, SHOAL_TASKLOG_DIR);
    self->tasklog =
        shoal_tasklog_new (dir, self->task_log_size, self->task_log_keep, why, sizeof why);
    if (!self->tasklog)
        s_log (self, SHOAL_LOG_WARN, NULL, "task output is not kept: %s", why);
}

//  Tells the first failed write and the first dropped record of the task
//  output files, once each.
static void
s_tasklog_check (s_worker_t *self)
{
    if (!self->tasklog || (self->told_log_failed && self->told_log_dropped))
        return;
    shoal_tasklog_trouble_t trouble;
    shoal_tasklog_trouble (self->tasklog, &trouble);
    if (trouble.failed && !self->told_log_failed) {
        self->told_log_failed = true;
        s_log (self, SHOAL_LOG_WARN, NULL, "task output: %s (told once: the worker goes on)",
               trouble.first);
    }
    if (trouble.dropped && !self->told_log_dropped) {
        self->told_log_dropped = true;
        s_log (self, SHOAL_LOG_WARN, NULL,
               "task output: lines dropped: the disk is slower than the children write (said "
               "once)");
    }
}

//  Hands one line of a task's output to the file writer.
static void
s_tasklog_line (s_worker_t *self, const s_task_t *task, int stream, const shoal_output_line_t *line)
{
    if (!self->tasklog)
        return;
    char time_text[64];
    s_utc_text (time_text, sizeof time_text);
    char record[SHOAL_OUTPUT_LINE_MAX + 128];
    size_t length =
        shoal_tasklog_record (record, sizeof record, time_text, shoal_child_stream_name (stream),
                              line->truncated, line->text, line->length);
    shoal_tasklog_put (self->tasklog, task->name, record, length);
}

//  ---------------------------------------------------------------------
//  The table of tasks

static s_task_t *
s_task_find (s_worker_t *self, const char *name)
{
    for (size_t i = 0; i < self->task_count; i++)
        if (strcmp (self->tasks[i]->name, name) == 0)
            return self->tasks[i];
    return NULL;
}

static s_task_t *
s_task_add (s_worker_t *self, const shoal_event_t *event)
{
    if (self->task_count == self->task_room) {
        size_t room = self->task_room ? 2 * self->task_room : 16;
        s_task_t **tasks = realloc (self->tasks, room * sizeof *tasks);
        if (!tasks)
            return NULL;
        self->tasks = tasks;
        self->task_room = room;
    }
    s_task_t *task = calloc (1, sizeof *task);
    if (!task)
        return NULL;
    snprintf (task->name, sizeof task->name, "%s", event->task);
    snprintf (task->job, sizeof task->job, "%s", event->job);
    task->index = event->index;
    self->tasks[self->task_count++] = task;
    return task;
}

//  Drops a task whose child is gone. The last task takes its place, so a
//  loop that may drop goes from the end.
static void
s_task_drop (s_worker_t *self, s_task_t *task)
{
    for (size_t i = 0; i < self->task_count; i++)
        if (self->tasks[i] == task) {
            self->tasks[i] = self->tasks[--self->task_count];
            break;
        }
    shoal_child_destroy (&task->child);
    free (task);
}

static void
s_report (s_worker_t *self, s_task_t *task, int state, uint64_t lag)
{
    char why[SHOAL_REASON_TEXT];
    static const char *const states[] = { "", "running", "", "stopped", "failed" };
    if (shoal_node_report (self->node, task->name, state, lag, why, sizeof why) != 0)
        s_log (self, SHOAL_LOG_DEBUG, s_fields (task), "report %s %s: %s", task->name,
               states[state], why);
}

//  ---------------------------------------------------------------------
//  The lease, in each child's shim

//  The worker's own freeze of its actives (s_on_lease) needs the worker to
//  run. So the lease is also handed to each child's shim, which freezes the
//  child when it ends even if the worker is stopped or starved then: the
//  leader gives the task to another node once that lease has surely ended.
//  A child that acts is bound to it: an active, and an active told to stop
//  that may finish its work while the lease holds. A learner or standby
//  does not act, and is not bound.
static bool
s_acts (const s_task_t *task)
{
    return task->role == SHOAL_ACTIVE || task->owes_stop;
}

//  The node's lease end, as the events taken so far have it (0: lost).
static uint64_t
s_lease_read (s_worker_t *self)
{
    uint64_t until = 0;
    if (shoal_node_lease (self->node, &until) != 0)
        until = 0;
    self->lease_until = until;
    return until;
}

//  Gives one task's child the deadline its role binds it to.
static void
s_bind (s_worker_t *self, s_task_t *task)
{
    if (task->child)
        shoal_child_lease (task->child, s_acts (task) ? s_lease_read (self) : SHOAL_CHILD_UNBOUND);
}

//  The node extends its lease with no event: each turn of the loop hands
//  the end it has now to every child that acts (a store in memory each).
static void
s_lease_pass (s_worker_t *self)
{
    uint64_t until = s_lease_read (self);
    for (size_t i = 0; i < self->task_count; i++) {
        s_task_t *task = self->tasks[i];
        if (task->child)
            shoal_child_lease (task->child, s_acts (task) ? until : SHOAL_CHILD_UNBOUND);
    }
}

//  When the loop must turn to pass the lease on: well before the end the
//  children hold (a quarter of what is left), so that a lease that goes on
//  never reaches them as ended; UINT64_MAX when no child is bound.
static uint64_t
s_lease_due (const s_worker_t *self, uint64_t now)
{
    bool bound = false;
    for (size_t i = 0; i < self->task_count && !bound; i++)
        bound = self->tasks[i]->child && s_acts (self->tasks[i]);
    if (!bound || self->lease_until <= now)
        return UINT64_MAX; //  a lease that comes back is a LEASE event
    uint64_t step = (self->lease_until - now) / 4;
    return now + (step < S_LEASE_STEP_MIN_MS   ? S_LEASE_STEP_MIN_MS
                  : step > S_LEASE_STEP_MAX_MS ? S_LEASE_STEP_MAX_MS
                                               : step);
}

//  ---------------------------------------------------------------------
//  Children

static void s_spawn (s_worker_t *self, s_task_t *task, uint64_t now);

//  Tells the node how the task's child last ended, for `shoal status`:
//  its exits in a row (0: the loop is over), the last one, why in words.
static void
s_report_exit (s_worker_t *self, s_task_t *task, const char *error)
{
    char why[SHOAL_REASON_TEXT];
    if (shoal_node_report_exit (self->node, task->name, task->failures, task->last_exit, error, why,
                                sizeof why) != 0)
        s_log (self, SHOAL_LOG_DEBUG, s_fields (task), "report the exit of %s: %s", task->name,
               why);
}

//  A child that could not start, or exited unasked (how says how, last_exit
//  as the wire has it): started again after a backoff; at the fifth exit in
//  a row, and every one after until it runs long enough, reported failed:
//  the node starts it again after a backoff of its own, a few times, then
//  gives it up, and the leader places it on another node.
static void
s_failure (s_worker_t *self, s_task_t *task, uint64_t now, unsigned last_exit, const char *how)
{
    task->failures++;
    task->last_exit = last_exit;
    s_report_exit (self, task, how);
    if (task->failures >= S_FAILURES_MAX) {
        s_log (self, SHOAL_LOG_ERROR, s_fields (task),
               "%s failed %u times in a row (last: %s): reporting it failed; the node starts it "
               "again after a backoff, a few times, then gives it up and the leader places it "
               "on another node",
               task->name, task->failures, how);
        task->failed = true;
        s_report (self, task, SHOAL_FAILED, 0);
        return;
    }
    uint64_t backoff = (uint64_t) S_BACKOFF_FIRST_MS << (task->failures - 1);
    backoff = backoff < S_BACKOFF_MAX_MS ? backoff : S_BACKOFF_MAX_MS;
    task->restart_ms = now + backoff;
    s_log (self, SHOAL_LOG_WARN, s_fields (task), "restarting %s in %llu ms (failure %u of %d)",
           task->name, (unsigned long long) backoff, task->failures, S_FAILURES_MAX);
    if (task->role != SHOAL_ACTIVE && task->lag != S_LAG_UNKNOWN && task->reported) {
        //  Its copy is not warm any more: it must not be promoted meanwhile.
        task->lag = S_LAG_UNKNOWN;
        s_report (self, task, SHOAL_RUNNING, task->lag);
    }
}

static void
s_spawn (s_worker_t *self, s_task_t *task, uint64_t now)
{
    char why[SHOAL_REASON_TEXT] = "";
    shoal_job_info_t job = { .parallelism = 0 };
    task->restart_ms = 0;
    task->running = task->reported = false;
    task->promote_due = false;
    task->started_ms = now;
    task->started_role = task->role;
    task->started_epoch[0] = task->epoch[0];
    task->started_epoch[1] = task->epoch[1];
    task->lag = task->role == SHOAL_ACTIVE ? 0 : S_LAG_UNKNOWN;
    if (shoal_node_job_info (self->node, task->job, &job, sizeof job, why, sizeof why) != 0 ||
        !job.command[0]) {
        if (!task->told_no_command)
            s_log (self, SHOAL_LOG_ERROR, s_fields (task),
                   "job %s has no command%s%s: %s reported failed", task->job, why[0] ? ": " : "",
                   why, task->name);
        task->told_no_command = true;
        task->failed = true;
        char error[2 * SHOAL_REASON_TEXT];
        snprintf (error, sizeof error, "job %s has no command%s%s", task->job, why[0] ? ": " : "",
                  why);
        s_report_exit (self, task, error);
        s_report (self, task, SHOAL_FAILED, 0);
        return;
    }
    if (job.parallelism)
        task->parallelism = job.parallelism;
    shoal_child_spec_t spec = {
        .command = job.command,
        .job = task->job,
        .index = task->index,
        .parallelism = task->parallelism,
        .role = task->role,
        .epoch_term = task->epoch[0],
        .epoch_version = task->epoch[1],
        .fenced = job.fenced,
        .node = self->id,
        .environment = environ,
        .grace_ms = self->grace_ms,
        .nice = self->child_nice,
        .bound = s_acts (task),
        .until_ms = s_lease_read (self),
    };
    task->child = shoal_child_new (&spec, why, sizeof why);
    if (task->child)
        s_log (self, SHOAL_LOG_DEBUG, s_fields (task), "starting %s as %s: shim pid %d", task->name,
               shoal_child_role_name (task->role), (int) shoal_child_shim (task->child));
    else {
        s_log (self, SHOAL_LOG_ERROR, s_fields (task), "cannot start %s: %s", task->name, why);
        char how[2 * SHOAL_REASON_TEXT];
        snprintf (how, sizeof how, "cannot start: %s", why);
        s_failure (self, task, now, task->last_exit, how);
    }
}

//  Stops a task's child: SIGTERM now, SIGKILL after the grace.
static void
s_stop (s_worker_t *self, s_task_t *task, uint64_t now, const char *what)
{
    if (!task->child || shoal_child_stopping (task->child))
        return;
    bool frozen = shoal_child_frozen (task->child);
    shoal_child_stop (task->child, now, self->grace_ms);
    if (frozen)
        s_log (self, SHOAL_LOG_WARN, s_fields (task),
               "%s %s: its child is frozen without a lease, so it is killed at once (pid %d)", what,
               task->name, (int) shoal_child_pid (task->child));
    else
        s_log (self, SHOAL_LOG_INFO, s_fields (task),
               "%s %s: SIGTERM to pid %d, SIGKILL after %llu ms", what, task->name,
               (int) shoal_child_pid (task->child), (unsigned long long) self->grace_ms);
}

//  Tells the child of its promotion, through its status descriptor.
static void
s_promote (s_worker_t *self, s_task_t *task)
{
    char why[SHOAL_REASON_TEXT];
    s_bind (self, task); //  before it may act
    int rc = shoal_child_promote (task->child, task->epoch[0], task->epoch[1], why, sizeof why);
    s_log (self, rc ? SHOAL_LOG_WARN : SHOAL_LOG_INFO, s_fields (task),
           "promoted %s to active (epoch %llu.%llu, pid %d)%s%s", task->name,
           (unsigned long long) task->epoch[0], (unsigned long long) task->epoch[1],
           (int) shoal_child_pid (task->child), rc ? ", but the child was not told: " : "",
           rc ? why : "");
}

//  The child's command runs: the node hears of it, and the child of a
//  promotion that came meanwhile.
static void
s_started (s_worker_t *self, s_task_t *task)
{
    char why[SHOAL_REASON_TEXT];
    if (task->running || shoal_child_stopping (task->child) ||
        shoal_child_started (task->child, why, sizeof why) != 1)
        return;
    task->running = true;
    s_log (self, SHOAL_LOG_INFO, s_fields (task), "started %s as %s (epoch %llu.%llu, pid %d)",
           task->name, shoal_child_role_name (task->started_role),
           (unsigned long long) task->started_epoch[0], (unsigned long long) task->started_epoch[1],
           (int) shoal_child_pid (task->child));
    if (task->failures < S_FAILURES_MAX) {
        task->reported = true;
        s_report (self, task, SHOAL_RUNNING, task->lag);
    } else
        s_log (self, SHOAL_LOG_WARN, s_fields (task),
               "%s failed %u times in a row: the node hears it runs once it has run %d s",
               task->name, task->failures, S_HEALTHY_MS / 1000);
    if (task->promote_due)
        s_promote (self, task);
    task->promote_due = false;
}

//  A malformed status line: logged, at most once a second per task.
static void
s_bad_line (s_worker_t *self, s_task_t *task, const char *reason, uint64_t now)
{
    if (task->bad_line_ms && now - task->bad_line_ms < S_BAD_LINE_MS) {
        task->bad_lines++;
        return;
    }
    char more[64] = "";
    if (task->bad_lines)
        snprintf (more, sizeof more, " (and %u more since the last said)", task->bad_lines);
    s_log (self, SHOAL_LOG_WARN, s_fields (task), "%s: skipped a status line: %s%s", task->name,
           reason, more);
    task->bad_line_ms = now;
    task->bad_lines = 0;
}

//  What the child said on its status descriptor: its lag goes to the node,
//  once for all the lines read now.
static void
s_status (s_worker_t *self, s_task_t *task, uint64_t now)
{
    uint64_t lag = task->lag;
    shoal_status_line_t status;
    for (int line = 0; line < S_LINES_PER_WAKE; line++) {
        int rc = shoal_child_status (task->child, &status);
        if (rc <= 0)
            break;
        if (status.type == SHOAL_STATUS_BAD)
            s_bad_line (self, task, status.reason, now);
        else if (status.type == SHOAL_STATUS_LAG && task->role != SHOAL_ACTIVE)
            lag = status.lag;
    }
    if (lag == task->lag || shoal_child_stopping (task->child))
        return;
    task->lag = lag;
    s_log (self, SHOAL_LOG_DEBUG, s_fields (task), "%s: lag %llu", task->name,
           (unsigned long long) lag);
    if (task->reported)
        s_report (self, task, SHOAL_RUNNING, lag);
}

//  A line the child wrote, as a record of its task at level info: in JSON
//  with the task's fields and the stream, in text after "TASK STREAM: ".
//  In text, control characters are written as '?', so that a record stays
//  one line.
static void
s_output_line (const s_worker_t *self, const s_task_t *task, int stream,
               const shoal_output_line_t *line)
{
    if (SHOAL_LOG_INFO > self->log_level)
        return;
    const char *name = shoal_child_stream_name (stream);
    if (self->json) {
        json_t *fields = s_fields (task);
        json_object_set_new (fields, "stream", json_string (name));
        if (line->truncated)
            json_object_set_new (fields, "truncated", json_true ());
        s_emit (self, SHOAL_LOG_INFO, fields, line->text, line->length);
        return;
    }
    char text[SHOAL_TASK_TEXT + SHOAL_OUTPUT_LINE_MAX + 64];
    int at = snprintf (text, sizeof text, "%s %s%s: ", task->name, name,
                       line->truncated ? " (cut at " S_TEXT (SHOAL_OUTPUT_LINE_MAX) " bytes)" : "");
    size_t length = at > 0 ? (size_t) at : 0;
    for (size_t i = 0; i < line->length && length < sizeof text; i++) {
        unsigned char byte = (unsigned char) line->text[i];
        text[length++] = (byte < 0x20 && byte != '\t') || byte == 0x7f ? '?' : (char) byte;
    }
    s_emit (self, SHOAL_LOG_INFO, NULL, text, length);
}

//  What the child wrote on its standard output and error, up to lines
//  lines of it: the rest waits for the next wake-up (s_timeout), so that a
//  child that writes a lot holds up neither the others nor the node.
static void
s_output (s_worker_t *self, s_task_t *task, int lines)
{
    int stream;
    shoal_output_line_t line;
    for (int i = 0; i < lines && shoal_child_output (task->child, &stream, &line) == 1; i++) {
        s_tasklog_line (self, task, stream, &line);
        s_output_line (self, task, stream, &line);
    }
    s_tasklog_check (self);
}

//  The child's shim was reaped. A child that was asked to stop is replaced
//  by one in the task's new role, if any; one that exited unasked is
//  started again after a backoff.
static void
s_gone (s_worker_t *self, s_task_t *task, const shoal_child_exit_t *exit, uint64_t now)
{
    char how[256];
    shoal_child_exit_text (exit, how, sizeof how);
    bool asked = shoal_child_stopping (task->child);
    json_t *fields = s_fields (task);
    json_object_set_new (fields, "status", json_integer (exit->status));
    if (exit->signal || exit->shim_signal)
        json_object_set_new (fields, "signal",
                             json_integer (exit->signal ? exit->signal : exit->shim_signal));
    s_log (self, asked ? SHOAL_LOG_INFO : SHOAL_LOG_WARN, fields, "%s %s: pid %d %s", task->name,
           asked ? "stopped" : "exited unasked", (int) shoal_child_pid (task->child), how);
    shoal_child_destroy (&task->child);
    task->running = task->reported = false;
    if (task->owes_stop) {
        task->owes_stop = false;
        s_report (self, task, SHOAL_STOPPED, S_LAG_UNKNOWN);
    }
    if (task->role == 0 || self->exiting)
        s_task_drop (self, task);
    else if (!asked) {
        //  As the wire has it: the exit status, or 256 + the signal.
        int signal = exit->signal ? exit->signal : exit->shim_signal;
        s_failure (self, task, now, signal ? 256u + (unsigned) signal : (unsigned) exit->status,
                   how);
    } else if (!task->failed && !task->restart_ms)
        s_spawn (self, task, now);
}

//  ---------------------------------------------------------------------
//  What the node says

static void
s_on_start (s_worker_t *self, const shoal_event_t *event, uint64_t now)
{
    s_task_t *task = s_task_find (self, event->task);
    if (!task)
        task = s_task_add (self, event);
    if (!task) {
        s_log (self, SHOAL_LOG_ERROR, NULL, "out of memory: %s not started", event->task);
        return;
    }
    task->role = event->role;
    task->epoch[0] = event->epoch_term;
    task->epoch[1] = event->epoch_version;
    task->parallelism = event->parallelism;
    task->failed = false;
    task->restart_ms = 0;
    if (!task->child)
        s_spawn (self, task, now);
    else
        //  The node starts what it holds to be stopped: the old child ends
        //  first, then the new one starts (s_gone).
        s_stop (self, task, now, "restarting");
}

static void
s_on_promote (s_worker_t *self, s_task_t *task, const shoal_event_t *event)
{
    task->role = SHOAL_ACTIVE;
    task->epoch[0] = event->epoch_term;
    task->epoch[1] = event->epoch_version;
    task->lag = 0;
    if (task->child && task->running && !shoal_child_stopping (task->child))
        s_promote (self, task);
    else if (task->child && !shoal_child_stopping (task->child))
        task->promote_due = true;
    else
        s_log (self, SHOAL_LOG_INFO, s_fields (task),
               "promoted %s to active (epoch %llu.%llu): its next child starts as active",
               task->name, (unsigned long long) task->epoch[0],
               (unsigned long long) task->epoch[1]);
}

//  DEMOTE and STOP: the child stops; an active's stop is reported once it
//  is gone, a learner's or standby's was done when the node said it.
static void
s_on_stop (s_worker_t *self, s_task_t *task, const shoal_event_t *event, uint64_t now)
{
    bool acting = task->role == SHOAL_ACTIVE && !task->failed;
    bool demote = event->type == SHOAL_EVENT_DEMOTE;
    task->owes_stop |= acting;
    task->role = demote ? event->role : 0;
    task->epoch[0] = event->epoch_term;
    task->epoch[1] = event->epoch_version;
    if (task->child) {
        char what[64];
        snprintf (what, sizeof what, demote ? "demoting to %s:" : "stopping",
                  shoal_child_role_name (task->role));
        s_stop (self, task, now, what);
        return;
    }
    s_log (self, SHOAL_LOG_INFO, s_fields (task), "%s %s: no child runs", task->name,
           demote ? "demoted" : "stopped");
    if (task->owes_stop) {
        task->owes_stop = false;
        s_report (self, task, SHOAL_STOPPED, S_LAG_UNKNOWN);
    }
    if (!demote)
        s_task_drop (self, task);
    else if (!task->failed && !task->restart_ms)
        s_spawn (self, task, now);
}

//  Without a lease the actives stop acting at once: frozen (SIGSTOP to
//  their groups) until the lease holds again. An active that was told to
//  stop cannot finish frozen: it is killed (worker/child.c).
static void
s_on_lease (s_worker_t *self, bool leased)
{
    if (leased == self->leased)
        return;
    self->leased = leased;
    s_log (self, leased ? SHOAL_LOG_INFO : SHOAL_LOG_WARN, NULL,
           leased ? "lease held" : "lease lost: active children are frozen until it holds again");
    for (size_t i = 0; i < self->task_count; i++) {
        s_task_t *task = self->tasks[i];
        if (!task->child)
            continue;
        if (!leased && s_acts (task)) {
            bool stopping = shoal_child_stopping (task->child);
            shoal_child_freeze (task->child, true);
            s_log (self, SHOAL_LOG_WARN, s_fields (task), "%s %s (pid %d)",
                   stopping ? "killed, as it was stopping," : "froze", task->name,
                   (int) shoal_child_pid (task->child));
        } else if (leased && shoal_child_frozen (task->child)) {
            shoal_child_freeze (task->child, false);
            s_log (self, SHOAL_LOG_INFO, s_fields (task), "resumed %s (pid %d)", task->name,
                   (int) shoal_child_pid (task->child));
        }
    }
}

//  ---------------------------------------------------------------------
//  The service manager: readiness, status, the watchdog

static void
s_notify (s_worker_t *self, const char *what, const char *text)
{
    if (shoal_notify ("%s%s", what, text) == 0 || self->notify_failed)
        return;
    self->notify_failed = true;
    s_log (self, SHOAL_LOG_WARN, NULL, "cannot tell the service manager %s%s (NOTIFY_SOCKET %s)",
           what, text, getenv ("NOTIFY_SOCKET"));
}

static void
s_notify_start (s_worker_t *self, uint64_t now)
{
    if (!shoal_notify_wanted ())
        return;
    if (!shoal_notify_built ()) {
        s_log (self, SHOAL_LOG_WARN, NULL,
               "NOTIFY_SOCKET is set, but this shoal was built without libsystemd: no "
               "readiness, status or watchdog (run it as Type=simple)");
        return;
    }
    self->notify = true;
    self->watchdog_ms = shoal_notify_watchdog_ms ();
    self->watchdog_at = now;
    if (self->watchdog_ms)
        s_log (self, SHOAL_LOG_INFO, NULL,
               "service manager: READY=1 once a leader is known, "
               "WATCHDOG=1 every %llu ms",
               (unsigned long long) self->watchdog_ms);
    else
        s_log (self, SHOAL_LOG_INFO, NULL, "service manager: READY=1 once a leader is known");
}

//  The node joined when it knows a leader (its own self, alone): ready.
static void
s_notify_leader (s_worker_t *self, const shoal_event_t *event)
{
    snprintf (self->leader, sizeof self->leader, "%s", event->node);
    self->term = event->term;
    if (!self->notify || self->ready || !self->leader[0])
        return;
    self->ready = true;
    s_notify (self, "READY=1", "");
}

static void
s_notify_stopping (s_worker_t *self)
{
    if (!self->notify || self->stopping)
        return;
    self->stopping = true;
    s_notify (self, "STOPPING=1", "");
}

//  STATUS=, sent when it changed: what the worker does, in a few words.
static void
s_notify_status (s_worker_t *self)
{
    if (!self->notify)
        return;
    size_t active = 0;
    for (size_t i = 0; i < self->task_count; i++)
        active += self->tasks[i]->child && s_acts (self->tasks[i]);
    char status[sizeof self->status];
    if (self->exiting)
        snprintf (status, sizeof status, "left: %zu children to stop", self->task_count);
    else if (self->leave_started || self->stopping)
        snprintf (status, sizeof status, "leaving: active tasks move first (%zu tasks, %zu active)",
                  self->task_count, active);
    else if (!self->leader[0])
        snprintf (status, sizeof status, "%s (%zu tasks)",
                  self->ready ? "no leader: waiting for one" : "joining: waiting for a leader",
                  self->task_count);
    else
        snprintf (status, sizeof status, "%zu tasks (%zu active); leader %.8s%s, term %llu",
                  self->task_count, active, self->leader,
                  strcmp (self->leader, self->id) == 0 ? " (this node)" : "",
                  (unsigned long long) self->term);
    if (strcmp (status, self->status) == 0)
        return;
    snprintf (self->status, sizeof self->status, "%s", status);
    s_notify (self, "STATUS=", status);
}

//  WATCHDOG=1 only once the node's actor answered a call: a wedged actor
//  holds the call, so the loop stops here, and the watchdog runs out; a
//  wedged loop sends nothing either. Once the node stopped (it left), the
//  call returns at once, and the loop alone is watched.
static void
s_watchdog (s_worker_t *self, uint64_t now)
{
    if (!self->watchdog_ms || now < self->watchdog_at)
        return;
    char leader[SHOAL_NODE_ID_TEXT];
    shoal_node_leader (self->node, leader, NULL, NULL);
    s_notify (self, "WATCHDOG=1", "");
    self->watchdog_at = now + self->watchdog_ms;
}

static void s_on_left_asked (s_worker_t *self, uint64_t now);

static void
s_on_event (s_worker_t *self, const shoal_event_t *event, uint64_t now)
{
    static const char *const states[] = { "alive", "suspect", "dead", "left" };
    s_task_t *task = NULL;
    switch (event->type) {
    case SHOAL_EVENT_START:
        if (!self->exiting)
            s_on_start (self, event, now);
        break;
    case SHOAL_EVENT_PROMOTE:
    case SHOAL_EVENT_DEMOTE:
    case SHOAL_EVENT_STOP:
        task = s_task_find (self, event->task);
        if (!task)
            s_log (self, SHOAL_LOG_DEBUG, NULL, "event %d for %s, which runs here no more",
                   event->type, event->task);
        else if (event->type == SHOAL_EVENT_PROMOTE)
            s_on_promote (self, task, event);
        else
            s_on_stop (self, task, event, now);
        break;
    case SHOAL_EVENT_LEASE:
        s_on_lease (self, event->leased);
        break;
    case SHOAL_EVENT_LEADER:
        s_notify_leader (self, event);
        if (event->node[0])
            s_log (
                self, SHOAL_LOG_INFO,
                json_pack ("{s:s, s:I}", "leader", event->node, "term", (json_int_t) event->term),
                "leader %s, term %llu", event->node, (unsigned long long) event->term);
        else
            s_log (self, SHOAL_LOG_WARN, NULL, "no leader");
        break;
    case SHOAL_EVENT_MEMBER: {
        const char *state = event->state >= 0 && event->state < 4 ? states[event->state] : "?";
        s_log (
            self, SHOAL_LOG_INFO,
            json_pack ("{s:s, s:s, s:s}", "node", event->node, "name", event->name, "state", state),
            "member %s (%s) %s", event->name, event->node, state);
        break;
    }
    case SHOAL_EVENT_NOTICE:
        s_log (self, SHOAL_LOG_WARN, NULL, "notice: %s", event->reason);
        break;
    case SHOAL_EVENT_LEFT:
        s_log (self, SHOAL_LOG_INFO, NULL, "left the cluster");
        s_on_left_asked (self, now);
        break;
    default:
        break;
    }
}

//  Takes the events that wait, a batch at a time. The node tells of a lost
//  lease after what the loss made it decide (a DEMOTE of each active): so
//  when a batch ends without the lease, the actives are frozen before any
//  event is acted on, and none of them is told to finish its work first.
static void
s_events (s_worker_t *self, uint64_t now)
{
    size_t count = 0;
    for (; count < S_EVENTS_BATCH; count++) {
        self->batch[count].size = sizeof self->batch[count];
        if (shoal_node_event (self->node, &self->batch[count]) != 1)
            break;
    }
    for (size_t i = count; i-- > 0;)
        if (self->batch[i].type == SHOAL_EVENT_LEASE) {
            if (!self->batch[i].leased)
                s_on_lease (self, false);
            break;
        }
    for (size_t i = 0; i < count; i++)
        s_on_event (self, &self->batch[i], now);
}

//  ---------------------------------------------------------------------
//  Leaving, and signals

static void *
s_leave (void *arg)
{
    s_worker_t *self = arg;
    self->leave_rc =
        shoal_node_leave (self->node, 0, NULL, self->leave_why, sizeof self->leave_why);
    uint64_t one = 1;
    if (write (self->leave_fd, &one, sizeof one) < 0) {
        //  An eventfd takes a write; nothing to do if it does not.
    }
    return NULL;
}

//  No child starts from now on; each one running stops (killed at once
//  when kill).
static void
s_stop_all (s_worker_t *self, uint64_t now, bool kill)
{
    self->exiting = true;
    for (size_t i = self->task_count; i-- > 0;) {
        s_task_t *task = self->tasks[i];
        if (task->child && kill)
            shoal_child_kill (task->child);
        else if (task->child)
            s_stop (self, task, now, "stopping");
        else
            s_task_drop (self, task);
    }
}

//  The node left without a leave of the worker's own: a client asked it
//  (shoal leave), and its active tasks have moved away. A node that left
//  has no part in the cluster any more, so the worker ends as after
//  SIGTERM: the children stop, and it exits 0.
static void
s_on_left_asked (s_worker_t *self, uint64_t now)
{
    if (self->leave_started || self->leave_done)
        return; //  its own leave ends in s_on_left
    self->leave_done = true;
    self->leave_rc = 0;
    s_notify_stopping (self);
    s_log (self, SHOAL_LOG_INFO, NULL, "left: stopping the children that are left");
    s_stop_all (self, now, false);
}

//  SIGHUP: the event log goes on in a new file of its name (logrotate).
static void
s_reopen (s_worker_t *self)
{
    char why[SHOAL_REASON_TEXT] = "";
    if (shoal_node_reopen (self->node, why, sizeof why) == 0)
        s_log (self, SHOAL_LOG_INFO, NULL, "SIGHUP: the event log is open again");
    else
        s_log (self, SHOAL_LOG_ERROR, NULL, "SIGHUP: %s; the log goes on where it was", why);
}

static void
s_on_signals (s_worker_t *self, uint64_t now)
{
    struct signalfd_siginfo info;
    while (read (self->signal_fd, &info, sizeof info) == sizeof info) {
        if (info.ssi_signo == SIGHUP)
            s_reopen (self);
        if (info.ssi_signo != SIGTERM && info.ssi_signo != SIGINT)
            continue; //  SIGCHLD: the children are reaped on every wake-up
        const char *name = info.ssi_signo == SIGTERM ? "SIGTERM" : "SIGINT";
        s_notify_stopping (self);
        if (++self->signals == 1 && self->leave_done)
            s_log (self, SHOAL_LOG_INFO, NULL, "%s: left already, the children stop", name);
        else if (self->signals == 1) {
            s_log (self, SHOAL_LOG_INFO, NULL, "%s: leaving the cluster", name);
            self->leave_started = pthread_create (&self->leaving, NULL, s_leave, self) == 0;
            if (!self->leave_started) {
                self->leave_done = true;
                self->leave_rc = -1;
                snprintf (self->leave_why, sizeof self->leave_why, "cannot start a thread");
                s_stop_all (self, now, false);
            }
        } else if (!self->dying_ms) {
            s_log (self, SHOAL_LOG_WARN, NULL, "%s again: killing every child at once", name);
            s_stop_all (self, now, true);
            self->dying_ms = now + S_DYING_MS;
        }
    }
}

static void
s_on_left (s_worker_t *self, uint64_t now)
{
    uint64_t value;
    if (read (self->leave_fd, &value, sizeof value) != sizeof value || self->leave_done)
        return;
    pthread_join (self->leaving, NULL);
    //  The node queues LEFT before the leave returns; read it now, or a
    //  worker with no child left would exit without saying it left.
    s_events (self, now);
    self->leave_started = false;
    self->leave_done = true;
    if (self->leave_rc == 0)
        s_log (self, SHOAL_LOG_INFO, NULL, "left: stopping the children that are left");
    else
        s_log (self, SHOAL_LOG_ERROR, NULL, "the leave failed: %s", self->leave_why);
    s_stop_all (self, now, false);
}

//  ---------------------------------------------------------------------
//  The loop

//  A child that ran S_HEALTHY_MS ends the count of failures; when it was on
//  probation, the node hears now that it runs.
static void
s_healthy (s_worker_t *self, s_task_t *task, uint64_t now)
{
    if (!task->running || !task->failures || now - task->started_ms < S_HEALTHY_MS)
        return;
    task->failures = 0;
    s_report_exit (self, task, "");
    if (!task->reported && !shoal_child_stopping (task->child)) {
        task->reported = true;
        s_log (self, SHOAL_LOG_INFO, s_fields (task), "%s ran %d s: it runs", task->name,
               S_HEALTHY_MS / 1000);
        s_report (self, task, SHOAL_RUNNING, task->lag);
    }
}

//  Every child's descriptors are read, its shim reaped and its timer run
//  on each wake-up: all without waiting, and few enough to need no map
//  from a descriptor to its task.
static void
s_children (s_worker_t *self, uint64_t now)
{
    for (size_t i = self->task_count; i-- > 0;) {
        s_task_t *task = self->tasks[i];
        shoal_child_exit_t exit;
        if (task->child) {
            s_started (self, task);
            s_status (self, task, now);
            s_output (self, task, S_LINES_PER_WAKE);
            s_healthy (self, task, now);
            shoal_child_tick (task->child, now);
            if (shoal_child_reap (task->child, &exit) == 1) {
                s_output (self, task, S_LINES_AT_EXIT); //  its last words before its exit
                s_gone (self, task, &exit, now);
            }
        } else if (task->restart_ms && now >= task->restart_ms && !self->exiting)
            s_spawn (self, task, now);
    }
}

//  The poll's timeout: until the nearest timer, -1 for none.
static int
s_timeout (const s_worker_t *self, uint64_t now)
{
    uint64_t next = self->dying_ms ? self->dying_ms : UINT64_MAX;
    for (size_t i = 0; i < self->task_count; i++) {
        const s_task_t *task = self->tasks[i];
        uint64_t at = task->child ? shoal_child_next (task->child) : task->restart_ms;
        if (at && at < next)
            next = at;
        if (task->child && shoal_child_output_pending (task->child))
            next = now; //  lines read but not logged yet
        if (task->child && task->running && task->failures &&
            task->started_ms + S_HEALTHY_MS < next)
            next = task->started_ms + S_HEALTHY_MS;
    }
    uint64_t lease = s_lease_due (self, now);
    next = lease < next ? lease : next;
    if (self->watchdog_ms && self->watchdog_at < next)
        next = self->watchdog_at;
    if (next == UINT64_MAX)
        return -1;
    return next <= now ? 0 : next - now > 60000 ? 60000 : (int) (next - now);
}

static int
s_run (s_worker_t *self)
{
    while (true) {
        size_t room = 3 + 4 * self->task_count, count = 0;
        struct pollfd *fds = calloc (room, sizeof *fds);
        if (!fds) {
            s_log (self, SHOAL_LOG_ERROR, NULL, "out of memory: killing every child");
            s_stop_all (self, s_now (), true);
            return EXIT_FAILED;
        }
        fds[count++] = (struct pollfd){ .fd = shoal_node_fd (self->node), .events = POLLIN };
        fds[count++] = (struct pollfd){ .fd = self->signal_fd, .events = POLLIN };
        fds[count++] = (struct pollfd){ .fd = self->leave_fd, .events = POLLIN };
        for (size_t i = 0; i < self->task_count; i++)
            if (self->tasks[i]->child) {
                fds[count++] = (struct pollfd){ .fd = shoal_child_exec_fd (self->tasks[i]->child),
                                                .events = POLLIN };
                fds[count++] = (struct pollfd){ .fd = shoal_child_status_fd (self->tasks[i]->child),
                                                .events = POLLIN };
                for (int stream = SHOAL_CHILD_STDOUT; stream <= SHOAL_CHILD_STDERR; stream++)
                    fds[count++] = (struct pollfd){ .fd = shoal_child_output_fd (
                                                        self->tasks[i]->child, stream),
                                                    .events = POLLIN };
            }
        //  A descriptor of -1 is passed over by poll.
        poll (fds, count, s_timeout (self, s_now ()));
        free (fds);

        uint64_t now = s_now ();
        s_on_signals (self, now);
        s_events (self, now);
        s_on_left (self, now);
        s_children (self, now);
        s_lease_pass (self);
        s_watchdog (self, now);
        s_notify_status (self);

        if (self->dying_ms && (self->task_count == 0 || now >= self->dying_ms))
            return -EXIT_FAILED; //  the leave may still wait: no clean end
        if (self->exiting && self->task_count == 0 && self->leave_done)
            return self->leave_rc == 0 ? 0 : EXIT_FAILED;
    }
}

//  ---------------------------------------------------------------------
//  shoal worker

int
shoal_worker_main (int argc, char **argv)
{
    //  SIGTERM, SIGINT, SIGHUP and SIGCHLD come through a signalfd: blocked here,
    //  before the node starts its threads, which inherit the mask. A
    //  SIGCHLD the worker's parent ignored would make the children reap
    //  themselves; SIGPIPE would end the worker on a closed standard error.
    sigset_t signals;
    sigemptyset (&signals);
    sigaddset (&signals, SIGTERM);
    sigaddset (&signals, SIGINT);
    sigaddset (&signals, SIGHUP);
    sigaddset (&signals, SIGCHLD);
    pthread_sigmask (SIG_BLOCK, &signals, NULL);
    signal (SIGCHLD, SIG_DFL);
    signal (SIGPIPE, SIG_IGN);

    s_worker_t worker = { .log_level = SHOAL_LOG_INFO, .signal_fd = -1, .leave_fd = -1 };
    s_worker_t *self = &worker;
    self->node = shoal_node_new ();
    if (!self->node) {
        fprintf (stderr, "shoal worker: out of memory\n");
        return EXIT_FAILED;
    }
    int rc = s_options (self->node, argc, argv);
    char why[SHOAL_REASON_TEXT] = "";
    if (rc < 0 && s_worker_options (self, why, sizeof why) != 0)
        rc = s_usage ("%s", why);
    if (rc < 0) {
        self->signal_fd = signalfd (-1, &signals, SFD_NONBLOCK | SFD_CLOEXEC);
        self->leave_fd = eventfd (0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (self->signal_fd < 0 || self->leave_fd < 0) {
            fprintf (stderr, "shoal worker: cannot make descriptors: %s\n", strerror (errno));
            rc = EXIT_FAILED;
        } else if (shoal_node_start (self->node, why, sizeof why) != 0) {
            fprintf (stderr, "shoal worker: %s\n", why);
            rc = EXIT_FAILED;
        }
    }
    if (rc < 0) {
        char name[SHOAL_OPTION_TEXT] = "", data_dir[SHOAL_OPTION_TEXT] = "";
        uint16_t port = 0;
        shoal_node_id (self->node, self->id);
        shoal_node_port (self->node, &port);
        shoal_node_get (self->node, "name", name, sizeof name, NULL, 0);
        shoal_node_get (self->node, "data-dir", data_dir, sizeof data_dir, NULL, 0);
        s_log (self, SHOAL_LOG_INFO,
               json_pack ("{s:s, s:i, s:s}", "node", self->id, "port", (int) port, "data_dir",
                          data_dir),
               "node %s%s%s%s on port %u, data-dir %s, shoal %s", self->id, name[0] ? " (" : "",
               name, name[0] ? ")" : "", port, data_dir, shoal_version ());
        s_tasklog_start (self, data_dir);
        s_notify_start (self, s_now ());
        rc = s_run (self);
        if (rc < 0) {
            //  A second signal came while the node still leaves: no clean
            //  end for the node, and the children are dead or dying with
            //  their shims once the worker is gone.
            s_log (self, SHOAL_LOG_WARN, NULL, "exiting at once");
            fflush (NULL);
            _exit (-rc);
        }
        s_log (self, rc == 0 ? SHOAL_LOG_INFO : SHOAL_LOG_WARN, NULL, "exiting with status %d", rc);
    }
    for (size_t i = 0; i < self->task_count; i++) {
        shoal_child_destroy (&self->tasks[i]->child);
        free (self->tasks[i]);
    }
    free (self->tasks);
    shoal_tasklog_destroy (&self->tasklog);
    shoal_node_destroy (&self->node);
    if (self->signal_fd >= 0)
        close (self->signal_fd);
    if (self->leave_fd >= 0)
        close (self->leave_fd);
    return rc;
}

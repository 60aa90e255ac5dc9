/*  chaos/recorder.c: shoal-chaos-recorder, the chaos kit's bundled workload.

    A task's child for `shoal worker` (docs/worker.md, section 3) that does
    nothing but write down what it does, for the checker (chaos/check.py,
    docs/chaos.md): its start, each promotion, a write every CHAOS_WRITE_MS
    while it is active (with the epoch it holds), and its stop. One file per
    process, $CHAOS_RECORD_DIR/<job>_<index>.<node id's first 8 hex>.<pid>.jsonl,
    one JSON object a line, each line written by one write(2) with O_APPEND,
    so a process killed at any instant leaves whole lines, or at worst a last
    line cut short, which the checker skips.

    Times are CLOCK_MONOTONIC in milliseconds: every network namespace of one
    host shares that clock, so they compare with the nodes' event logs.

        shoal-chaos-recorder          run as a job's command (the environment)
        shoal-chaos-recorder --now    print CLOCK_MONOTONIC in ms and exit

    A learner or a standby says `ready` on the status descriptor after
    CHAOS_WARMUP_MS (300), so that it can be promoted. SIGTERM makes it write
    `stop` and `exit` and exit 0 at once. A bad or missing variable is named
    on standard error, with exit status 2.
*/

//  ppoll
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define STATUS_LINE_MAX 256 //  a status line, its newline included (docs/worker.md)
#define RECORD_MAX      512
#define EPOCH_MAX       48

typedef struct {
    char task[80];         //  job/index, checked: a job name is [A-Za-z0-9._-]{1,64}
    char node[33];         //  the worker's node id, 32 hex digits
    char role[16];         //  active, learner or standby; active once promoted
    char epoch[EPOCH_MAX]; //  TERM.VERSION, the grant it holds
    int status_fd;
    int record_fd;
    long pid;
    uint64_t write_ms;
    uint64_t warmup_ms;
    uint64_t seq; //  writes made so far
} recorder_t;

static volatile sig_atomic_t s_terminated;

static void
s_on_sigterm (int signal)
{
    (void) signal;
    s_terminated = 1;
}

static uint64_t
s_now_ms (void)
{
    struct timespec now;
    clock_gettime (CLOCK_MONOTONIC, &now);
    return (uint64_t) now.tv_sec * 1000 + (uint64_t) now.tv_nsec / 1000000;
}

//  True when text is a whole decimal number in [min, max].
static bool
s_parse_number (const char *text, uint64_t min, uint64_t max, uint64_t *value)
{
    if (!text || *text < '0' || *text > '9')
        return false;
    errno = 0;
    char *end;
    unsigned long long parsed = strtoull (text, &end, 10);
    if (errno || *end || parsed < min || parsed > max)
        return false;
    *value = parsed;
    return true;
}

//  An epoch is TERM.VERSION, two decimal numbers.
static bool
s_valid_epoch (const char *text)
{
    if (!text || strlen (text) >= EPOCH_MAX)
        return false;
    const char *dot = strchr (text, '.');
    if (!dot || dot == text || !dot[1])
        return false;
    for (const char *c = text; *c; c++)
        if ((*c < '0' || *c > '9') && c != dot)
            return false;
    return true;
}

//  A task is JOB/INDEX with a job name as shoal allows it (docs/jobs.md), so
//  that it is safe in a file name and in JSON as it is.
static bool
s_valid_task (const char *text)
{
    const char *slash = text ? strchr (text, '/') : NULL;
    if (!slash || slash == text || slash - text > 64)
        return false;
    for (const char *c = text; c < slash; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '.' || *c == '-' || *c == '_'))
            return false;
    uint64_t index;
    return s_parse_number (slash + 1, 0, 65535, &index);
}

static bool
s_valid_node (const char *text)
{
    if (!text || strlen (text) != 32)
        return false;
    for (const char *c = text; *c; c++)
        if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f')))
            return false;
    return true;
}

//  Reads the environment into self; on a bad or missing variable, names it
//  in why and returns -1.
static int
s_configure (recorder_t *self, char *why, size_t size)
{
    const char *task = getenv ("SHOAL_TASK"), *role = getenv ("SHOAL_ROLE"),
               *epoch = getenv ("SHOAL_EPOCH"), *node = getenv ("SHOAL_NODE"),
               *fd = getenv ("SHOAL_STATUS_FD"), *dir = getenv ("CHAOS_RECORD_DIR"),
               *write_ms = getenv ("CHAOS_WRITE_MS"), *warmup_ms = getenv ("CHAOS_WARMUP_MS");
    uint64_t number;
    if (!s_valid_task (task))
        snprintf (why, size, "SHOAL_TASK '%s' is not JOB/INDEX", task ? task : "");
    else if (!role ||
             (strcmp (role, "active") && strcmp (role, "learner") && strcmp (role, "standby")))
        snprintf (why, size, "SHOAL_ROLE '%s' is not active, learner or standby", role ? role : "");
    else if (!s_valid_epoch (epoch))
        snprintf (why, size, "SHOAL_EPOCH '%s' is not TERM.VERSION", epoch ? epoch : "");
    else if (!s_valid_node (node))
        snprintf (why, size, "SHOAL_NODE '%s' is not 32 lowercase hex digits", node ? node : "");
    else if (!s_parse_number (fd, 0, INT_MAX, &number) || fcntl ((int) number, F_GETFD) < 0)
        snprintf (why, size, "SHOAL_STATUS_FD '%s' is not an open descriptor", fd ? fd : "");
    else if (!dir || !*dir)
        snprintf (why, size, "CHAOS_RECORD_DIR is not set");
    else if (write_ms && !s_parse_number (write_ms, 1, 3600000, &self->write_ms))
        snprintf (why, size, "CHAOS_WRITE_MS '%s' is not a number of ms from 1 to 3600000",
                  write_ms);
    else if (warmup_ms && !s_parse_number (warmup_ms, 0, 3600000, &self->warmup_ms))
        snprintf (why, size, "CHAOS_WARMUP_MS '%s' is not a number of ms from 0 to 3600000",
                  warmup_ms);
    else {
        snprintf (self->task, sizeof self->task, "%s", task);
        snprintf (self->role, sizeof self->role, "%s", role);
        snprintf (self->epoch, sizeof self->epoch, "%s", epoch);
        snprintf (self->node, sizeof self->node, "%s", node);
        self->status_fd = (int) number;
        self->pid = (long) getpid ();
        //  <job>_<index>.<node id's first 8 hex>.<pid>.jsonl
        char path[PATH_MAX], name[sizeof self->task];
        snprintf (name, sizeof name, "%s", task);
        *strchr (name, '/') = '_';
        if (snprintf (path, sizeof path, "%s/%s.%.8s.%ld.jsonl", dir, name, node, self->pid) >=
            (int) sizeof path) {
            snprintf (why, size, "CHAOS_RECORD_DIR '%s' is too long", dir);
            return -1;
        }
        self->record_fd = open (path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
        if (self->record_fd < 0) {
            snprintf (why, size, "%s: cannot open: %s", path, strerror (errno));
            return -1;
        }
        return 0;
    }
    return -1;
}

//  Appends one record, by one write(2). A record that cannot be written is
//  said on standard error, which the worker logs; the run goes on.
static void
s_record (recorder_t *self, const char *event)
{
    char line[RECORD_MAX], seq[32] = "";
    if (strcmp (event, "write") == 0)
        snprintf (seq, sizeof seq, ",\"seq\":%" PRIu64, self->seq);
    int size = snprintf (line, sizeof line,
                         "{\"mono\":%" PRIu64 ",\"ev\":\"%s\",\"task\":\"%s\",\"node\":\"%s\","
                         "\"pid\":%ld,\"role\":\"%s\",\"epoch\":\"%s\"%s}\n",
                         s_now_ms (), event, self->task, self->node, self->pid, self->role,
                         self->epoch, seq);
    if (write (self->record_fd, line, (size_t) size) != size)
        fprintf (stderr, "%s: cannot write a record: %s\n", self->task, strerror (errno));
}

//  One whole line from the worker: only `promote TERM.VERSION` matters.
static void
s_on_line (recorder_t *self, const char *line)
{
    if (strncmp (line, "promote ", 8) != 0)
        return;
    if (!s_valid_epoch (line + 8)) {
        fprintf (stderr, "%s: a promote line with a bad epoch: '%s'\n", self->task, line);
        return;
    }
    snprintf (self->role, sizeof self->role, "active");
    snprintf (self->epoch, sizeof self->epoch, "%.*s", EPOCH_MAX - 1, line + 8);
    s_record (self, "promote");
}

//  Reads what the status descriptor holds, line by line, in a bounded
//  buffer: a line longer than STATUS_LINE_MAX is skipped to its end, never
//  held. Returns false once the worker closed its end.
static bool
s_read_status (recorder_t *self, char *buffer, size_t *used, bool *skipping)
{
    ssize_t size = read (self->status_fd, buffer + *used, STATUS_LINE_MAX - *used);
    if (size < 0)
        return errno == EINTR || errno == EAGAIN;
    if (size == 0)
        return false;
    *used += (size_t) size;
    char *end;
    while ((end = memchr (buffer, '\n', *used))) {
        *end = 0;
        if (!*skipping)
            s_on_line (self, buffer);
        *skipping = false;
        *used -= (size_t) (end + 1 - buffer);
        memmove (buffer, end + 1, *used);
    }
    if (*used == STATUS_LINE_MAX) {
        *used = 0;
        *skipping = true;
    }
    return true;
}

static void
s_tell_ready (recorder_t *self)
{
    if (write (self->status_fd, "ready\n", 6) != 6)
        fprintf (stderr, "%s: cannot say ready: %s\n", self->task, strerror (errno));
}

static int
s_run (recorder_t *self)
{
    //  SIGTERM is blocked but while ppoll waits, so that a signal is never
    //  lost between the flag's check and the wait.
    sigset_t blocked, waiting;
    sigemptyset (&blocked);
    sigaddset (&blocked, SIGTERM);
    sigprocmask (SIG_BLOCK, &blocked, &waiting);
    sigdelset (&waiting, SIGTERM);
    struct sigaction action = { .sa_handler = s_on_sigterm };
    sigemptyset (&action.sa_mask);
    sigaction (SIGTERM, &action, NULL);
    //  A worker gone takes its child with it; its end closed is no reason
    //  to die of SIGPIPE before that.
    signal (SIGPIPE, SIG_IGN);

    s_record (self, "start");
    uint64_t started = s_now_ms ();
    uint64_t next_write = started;
    bool ready_told = strcmp (self->role, "active") == 0;
    bool listening = true, skipping = false;
    char buffer[STATUS_LINE_MAX];
    size_t used = 0;
    while (!s_terminated) {
        uint64_t now = s_now_ms ();
        bool active = strcmp (self->role, "active") == 0;
        if (active && now >= next_write) {
            self->seq++;
            s_record (self, "write");
            //  A freeze (SIGSTOP) leaves it behind: it goes on from now,
            //  with no burst of writes to catch up.
            next_write = next_write + self->write_ms > now ? next_write + self->write_ms
                                                           : now + self->write_ms;
        }
        if (!ready_told && now >= started + self->warmup_ms) {
            s_tell_ready (self);
            ready_told = true;
        }
        uint64_t wake = UINT64_MAX;
        if (active)
            wake = next_write;
        if (!ready_told)
            wake = wake < started + self->warmup_ms ? wake : started + self->warmup_ms;
        now = s_now_ms ();
        uint64_t wait_ms = wake == UINT64_MAX ? 1000 : wake > now ? wake - now : 0;
        struct timespec timeout = { .tv_sec = (time_t) (wait_ms / 1000),
                                    .tv_nsec = (long) (wait_ms % 1000) * 1000000 };
        struct pollfd poller = { .fd = listening ? self->status_fd : -1, .events = POLLIN };
        int ready = ppoll (&poller, 1, &timeout, &waiting);
        if (ready > 0 && listening)
            listening = s_read_status (self, buffer, &used, &skipping);
        bool was_active = active;
        active = strcmp (self->role, "active") == 0;
        if (active && !was_active)
            next_write = s_now_ms (); //  promoted: the first write at once
    }
    s_record (self, "stop");
    s_record (self, "exit");
    close (self->record_fd);
    return 0;
}

int
main (int argc, char *argv[])
{
    if (argc == 2 && strcmp (argv[1], "--now") == 0) {
        printf ("%" PRIu64 "\n", s_now_ms ());
        return 0;
    }
    if (argc > 1) {
        fprintf (stderr, "usage: shoal-chaos-recorder [--now]\n"
                         "  run as a job's command of shoal worker (docs/chaos.md)\n");
        return 2;
    }
    recorder_t self = { .write_ms = 20, .warmup_ms = 300, .record_fd = -1 };
    char why[PATH_MAX + 128];
    if (s_configure (&self, why, sizeof why)) {
        fprintf (stderr, "shoal-chaos-recorder: %s\n", why);
        return 2;
    }
    return s_run (&self);
}

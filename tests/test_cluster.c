/*  tests/test_cluster.c: real node processes on one network (issue 7).

    The test moves itself into a network namespace of its own (which needs
    root; without it the test says so and is skipped, exit status 77), with
    lo up and the broadcast route of docs/architecture.md "Discovery", so that
    beacons work. Then it runs each node as a process of its own: it starts
    itself again as "test_cluster node LOG KEY VALUE ...", and that process
    runs one node through the public API (include/shoal.h) as an
    application would, like tests/test_node.c does: it runs what the node
    starts (learners make up their lag step by step), stops what it stops,
    reports each step back, and leaves on SIGTERM.

    A node process tells the test everything through its log, one line at a
    time, each stamped with the monotonic clock (which every process of the
    machine shares): the events, each moment a task begins or ends to act
    (active, or told to stop and not yet stopped, under a lease), the leader
    whenever it changes, and every 100 ms a status: its leader, its view of
    the members, its tasks. The test reads those logs only; it asks a node
    to submit a job by a line on the node's stdin.

    All along it checks the promise of the runtime from the act/idle lines:
    no task ever acts on two nodes at once. A node's acting interval is
    stamped so that it can only be shorter than the truth (it begins once
    the event was read, and ends before the stop is reported, and a killed
    node's ends when it was killed), and a hand-over is causal (the stop is
    reported before the leader promotes the next owner), so an overlap the
    test sees is one that happened. It also checks that a node never acts
    under an epoch older than one another node already acted under.

    Waits are bounded generously (a minute), only to end a test that hangs:
    no check depends on how fast the machine is.
*/

#define _GNU_SOURCE //  pipe2, signalfd

#include "shoal.h"
#include "tests/netns.h"
#include "tests/test.h"

#include <arpa/inet.h>
#include <czmq.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

//  Fixed ports below the kernel's ephemeral range (32768 and up): there
//  the source port of any outgoing connection in the namespace (a node's
//  link to another) could take a port before its node binds it, which
//  once failed a start with "Address already in use".
#define PORT_BASE    27100 //  node n binds 127.0.0.1:PORT_BASE+n
#define BEACON_PORT  27990
#define WAIT_MS      60000 //  against a hang only
#define STABLE_MS    300   //  a state counts once it held this long
#define STATUS_MS    100
#define STEP_MS      50
#define LEAVE_MS     20000
#define TASKS_MAX    64
#define MEMBERS_MAX  16
#define LOG_LINE_MAX 8192
//  How far behind a learner starts, and how much it makes up per step.
#define LEARNER_LAG  40000
#define LEARNER_STEP 10000

static uint64_t
s_clock_us (void)
{
    struct timespec now;
    clock_gettime (CLOCK_MONOTONIC, &now);
    return (uint64_t) now.tv_sec * 1000000 + (uint64_t) now.tv_nsec / 1000;
}

//  Appends to line (of size) at *used, never past its end.
static void
s_append (char *line, size_t size, size_t *used, const char *format, ...)
{
    if (*used >= size - 1)
        return;
    va_list args;
    va_start (args, format);
    int wrote = vsnprintf (line + *used, size - *used, format, args);
    va_end (args);
    if (wrote > 0)
        *used = *used + (size_t) wrote < size - 1 ? *used + (size_t) wrote : size - 1;
}

//  =====================================================================
//  The node process: one node, and the application that runs its tasks

typedef struct {
    char task[SHOAL_TASK_TEXT];
    int role;      //  0: none (stopped, and stopping)
    bool stopping; //  an active told to stop; it stops at the next step
    bool acting;   //  acts (as the log says): active or stopping, under a lease
    uint64_t lag;
    uint64_t epoch_term, epoch_version;
} s_held_t;

typedef struct {
    pthread_t thread;
    char name[SHOAL_NAME_TEXT];
    uint32_t parallelism;
    bool stateful;
} s_submit_t;

#define SUBMITS_MAX 8

static struct {
    shoal_node_t *node;
    int log_fd;
    pthread_mutex_t log_lock;
    bool leased;
    s_held_t tasks[TASKS_MAX];
    size_t task_count;
    //  The leader as last logged.
    bool leader_logged;
    char leader[SHOAL_NODE_ID_TEXT];
    uint64_t term;
    bool acting;
    //  Requests, each on a thread of its own.
    s_submit_t submits[SUBMITS_MAX];
    size_t submit_count;
    char commands[512];
    size_t commands_size;
    //  0 while the leave runs (or none did), 1 once it left, 2 if it failed.
    atomic_int leave_done;
} s_app;

//  Writes one line to the log, stamped with the time in microseconds. The
//  stamp is taken under the lock, so the lines of a log are in time order.
static void
s_log (const char *format, ...)
{
    char line[LOG_LINE_MAX];
    pthread_mutex_lock (&s_app.log_lock);
    size_t used = 0;
    s_append (line, sizeof line - 1, &used, "%" PRIu64 " ", s_clock_us ());
    va_list args;
    va_start (args, format);
    int wrote = vsnprintf (line + used, sizeof line - 1 - used, format, args);
    va_end (args);
    if (wrote > 0)
        used = used + (size_t) wrote < sizeof line - 2 ? used + (size_t) wrote : sizeof line - 2;
    line[used++] = '\n';
    for (size_t done = 0; done < used;) {
        ssize_t rc = write (s_app.log_fd, line + done, used - done);
        if (rc <= 0 && errno != EINTR)
            break;
        done += rc > 0 ? (size_t) rc : 0;
    }
    pthread_mutex_unlock (&s_app.log_lock);
}

static s_held_t *
s_held (const char *task, bool make)
{
    for (size_t i = 0; i < s_app.task_count; i++)
        if (strcmp (s_app.tasks[i].task, task) == 0)
            return &s_app.tasks[i];
    if (!make || s_app.task_count == TASKS_MAX)
        return NULL;
    s_held_t *made = &s_app.tasks[s_app.task_count++];
    *made = (s_held_t){ 0 };
    snprintf (made->task, sizeof made->task, "%s", task);
    return made;
}

static void
s_held_drop (s_held_t *held)
{
    *held = s_app.tasks[--s_app.task_count];
}

//  Logs the moment a task begins or ends to act. Called after the change
//  that makes it act, and before the report that tells of its stop.
static void
s_acting_sync (s_held_t *held)
{
    bool acting = s_app.leased && (held->role == SHOAL_ACTIVE || held->stopping);
    if (acting == held->acting)
        return;
    held->acting = acting;
    if (acting)
        s_log ("act %s %" PRIu64 ".%" PRIu64, held->task, held->epoch_term, held->epoch_version);
    else
        s_log ("idle %s", held->task);
}

static void
s_report (const char *task, int state, uint64_t lag)
{
    char why[256];
    if (shoal_node_report (s_app.node, task, state, lag, why, sizeof why) != 0)
        s_log ("notice report %s: %s", task, why);
}

//  The application's side of one event, as tests/test_node.c's.
static void
s_handle (const shoal_event_t *event)
{
    static const char *names[] = { "?",     "START",  "PROMOTE", "DEMOTE", "STOP",
                                   "LEASE", "LEADER", "MEMBER",  "LEFT",   "NOTICE" };
    const char *name =
        event->type > 0 && event->type <= SHOAL_EVENT_NOTICE ? names[event->type] : "?";
    s_held_t *held = NULL;
    switch (event->type) {
    case SHOAL_EVENT_START:
    case SHOAL_EVENT_PROMOTE:
        s_log ("event %s %s role=%d epoch=%" PRIu64 ".%" PRIu64, name, event->task, event->role,
               event->epoch_term, event->epoch_version);
        held = s_held (event->task, event->type == SHOAL_EVENT_START);
        if (!held)
            break;
        held->role = event->type == SHOAL_EVENT_START ? event->role : SHOAL_ACTIVE;
        held->stopping = false;
        held->epoch_term = event->epoch_term;
        held->epoch_version = event->epoch_version;
        if (event->type == SHOAL_EVENT_START)
            held->lag = event->role == SHOAL_ACTIVE ? 0 : LEARNER_LAG;
        s_acting_sync (held);
        if (event->type == SHOAL_EVENT_START)
            s_report (event->task, SHOAL_RUNNING, held->lag);
        break;
    case SHOAL_EVENT_DEMOTE:
    case SHOAL_EVENT_STOP:
        //  An active stops by the next step: meanwhile it still acts.
        s_log ("event %s %s role=%d", name, event->task, event->role);
        held = s_held (event->task, false);
        if (!held)
            break;
        held->stopping = held->role == SHOAL_ACTIVE || held->stopping;
        held->role = event->type == SHOAL_EVENT_STOP ? 0 : event->role;
        if (!held->stopping) {
            s_report (event->task, SHOAL_STOPPED, 0);
            if (event->type == SHOAL_EVENT_STOP)
                s_held_drop (held);
        }
        break;
    case SHOAL_EVENT_LEASE:
        s_log ("event LEASE %d", event->leased);
        s_app.leased = event->leased;
        for (size_t i = 0; i < s_app.task_count; i++)
            s_acting_sync (&s_app.tasks[i]);
        break;
    case SHOAL_EVENT_LEADER:
        s_log ("event LEADER %s term=%" PRIu64, event->node[0] ? event->node : "-", event->term);
        break;
    case SHOAL_EVENT_MEMBER:
        s_log ("event MEMBER %s state=%d name=%s", event->node, event->state, event->name);
        break;
    case SHOAL_EVENT_NOTICE:
        s_log ("notice %s", event->reason);
        break;
    default:
        s_log ("event %s", name);
        break;
    }
}

//  One step of every task: stops finish, learners make up lag.
static void
s_step (void)
{
    for (size_t t = 0; t < s_app.task_count; t++) {
        s_held_t *held = &s_app.tasks[t];
        if (held->stopping) {
            held->stopping = false;
            s_acting_sync (held);
            s_report (held->task, SHOAL_STOPPED, 0);
            if (held->role == 0) {
                s_held_drop (held);
                t--;
            }
        } else if (held->role == SHOAL_LEARNER || held->role == SHOAL_STANDBY) {
            held->lag = held->lag > LEARNER_STEP ? held->lag - LEARNER_STEP : 0;
            s_report (held->task, SHOAL_RUNNING, held->lag);
        }
    }
}

//  Logs the leader, the term and whether this node acts, when one changed.
//  Returns -1 when the node does not answer (it left).
static int
s_leader_watch (void)
{
    char leader[SHOAL_NODE_ID_TEXT];
    uint64_t term;
    bool acting;
    if (shoal_node_leader (s_app.node, leader, &term, &acting) != 0)
        return -1;
    if (s_app.leader_logged && strcmp (leader, s_app.leader) == 0 && term == s_app.term &&
        acting == s_app.acting)
        return 0;
    s_app.leader_logged = true;
    memcpy (s_app.leader, leader, sizeof leader);
    s_app.term = term;
    s_app.acting = acting;
    s_log ("leader %s term=%" PRIu64 " acting=%d", leader[0] ? leader : "-", term, acting);
    return 0;
}

//  The status line: "status leader=ID term=N acting=B leased=B alive=N
//  members=ID:STATE:INCARNATION,... tasks=TASK:ROLE:TERM.VERSION,...", a
//  role being A, L, S or - (none), followed by x while it stops. The
//  leader is the one just logged, so that no status runs ahead of it.
static void
s_status (void)
{
    shoal_member_t members[MEMBERS_MAX];
    size_t count = 0;
    if (s_leader_watch () != 0 ||
        shoal_node_members (s_app.node, members, sizeof *members, MEMBERS_MAX, &count) != 0)
        return;
    if (count > MEMBERS_MAX)
        count = MEMBERS_MAX;
    size_t alive = 0;
    for (size_t i = 0; i < count; i++)
        alive += members[i].state == SHOAL_MEMBER_STATE_ALIVE;
    char line[LOG_LINE_MAX - 64];
    size_t used = 0;
    s_append (line, sizeof line, &used,
              "leader=%s term=%" PRIu64 " acting=%d leased=%d alive=%zu members=",
              s_app.leader[0] ? s_app.leader : "-", s_app.term, s_app.acting, s_app.leased, alive);
    for (size_t i = 0; i < count; i++)
        s_append (line, sizeof line, &used, "%s%s:%d:%" PRIu64, i ? "," : "", members[i].id,
                  members[i].state, members[i].incarnation);
    s_append (line, sizeof line, &used, " tasks=");
    for (size_t i = 0; i < s_app.task_count; i++) {
        const s_held_t *held = &s_app.tasks[i];
        static const char roles[] = {
            [0] = '-', [SHOAL_ACTIVE] = 'A', [SHOAL_STANDBY] = 'S', [SHOAL_LEARNER] = 'L'
        };
        char role = held->role >= 0 && held->role <= SHOAL_LEARNER ? roles[held->role] : '?';
        s_append (line, sizeof line, &used, "%s%s:%c%s:%" PRIu64 ".%" PRIu64, i ? "," : "",
                  held->task, role, held->stopping ? "x" : "", held->epoch_term,
                  held->epoch_version);
    }
    s_log ("status %s", line);
}

static void *
s_submit_run (void *arg)
{
    const s_submit_t *submit = arg;
    shoal_job_spec_t spec = { .size = sizeof spec,
                              .name = submit->name,
                              .parallelism = submit->parallelism,
                              .stateful = submit->stateful };
    shoal_result_t result = { .size = sizeof result };
    int rc = shoal_node_submit (s_app.node, &spec, WAIT_MS / 2, NULL, &result);
    s_log ("submit %s rc=%d code=%d parallelism=%u reason=%s", submit->name, rc, result.code,
           result.parallelism, result.reason);
    return NULL;
}

//  Takes the test's commands from stdin: "submit NAME PARALLELISM STATEFUL".
//  Returns false once stdin is closed.
static bool
s_commands (int fd)
{
    ssize_t got = read (fd, s_app.commands + s_app.commands_size,
                        sizeof s_app.commands - 1 - s_app.commands_size);
    if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR))
        return false;
    if (got < 0)
        return true;
    s_app.commands_size += (size_t) got;
    s_app.commands[s_app.commands_size] = 0;
    char *end;
    while ((end = strchr (s_app.commands, '\n'))) {
        *end = 0;
        char name[SHOAL_NAME_TEXT];
        unsigned parallelism, stateful;
        if (sscanf (s_app.commands, "submit %64s %u %u", name, &parallelism, &stateful) == 3 &&
            s_app.submit_count < SUBMITS_MAX) {
            s_submit_t *submit = &s_app.submits[s_app.submit_count];
            snprintf (submit->name, sizeof submit->name, "%s", name);
            submit->parallelism = parallelism;
            submit->stateful = stateful != 0;
            if (pthread_create (&submit->thread, NULL, s_submit_run, submit) == 0)
                s_app.submit_count++;
        } else
            s_log ("error command refused: %s", s_app.commands);
        size_t rest = s_app.commands_size - (size_t) (end + 1 - s_app.commands);
        memmove (s_app.commands, end + 1, rest + 1);
        s_app.commands_size = rest;
    }
    if (s_app.commands_size == sizeof s_app.commands - 1)
        s_app.commands_size = 0; //  a line too long for a command
    return true;
}

static void *
s_leave_run (void *arg)
{
    (void) arg;
    char why[256] = "";
    int rc = shoal_node_leave (s_app.node, LEAVE_MS, NULL, why, sizeof why);
    s_log ("left rc=%d why=%s", rc, why);
    atomic_store (&s_app.leave_done, rc == 0 ? 1 : 2);
    return NULL;
}

//  argv: "node", the log's path, then option keys and values. Exits 0 once
//  it left after SIGTERM, 2 when the node does not start, 3 when the leave
//  failed.
static int
s_node_main (int argc, char **argv)
{
    //  SIGTERM waits for the main thread's signalfd: every thread the node
    //  makes inherits the mask, so none of them is interrupted by it.
    sigset_t term;
    sigemptyset (&term);
    sigaddset (&term, SIGTERM);
    pthread_sigmask (SIG_BLOCK, &term, NULL);
    int signal_fd = signalfd (-1, &term, SFD_CLOEXEC | SFD_NONBLOCK);
    pthread_mutex_init (&s_app.log_lock, NULL);
    s_app.log_fd = open (argv[2], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (s_app.log_fd < 0 || signal_fd < 0) {
        perror ("node process");
        return 2;
    }
    char why[SHOAL_REASON_TEXT] = "";
    s_app.node = shoal_node_new ();
    for (int i = 3; i + 1 < argc; i += 2)
        if (shoal_node_set (s_app.node, argv[i], argv[i + 1], why, sizeof why) != 0) {
            s_log ("error option %s: %s", argv[i], why);
            return 2;
        }
    if (shoal_node_start (s_app.node, why, sizeof why) != 0) {
        s_log ("error start: %s", why);
        shoal_node_destroy (&s_app.node);
        return 2;
    }
    char id[SHOAL_NODE_ID_TEXT] = "";
    uint16_t port = 0;
    shoal_node_id (s_app.node, id);
    shoal_node_port (s_app.node, &port);
    s_log ("start id=%s port=%u pid=%d", id, port, (int) getpid ());
    fcntl (0, F_SETFL, fcntl (0, F_GETFL) | O_NONBLOCK);

    bool leaving = false, commands_open = true;
    pthread_t leave_thread;
    uint64_t step_at = s_clock_us () + STEP_MS * 1000, status_at = s_clock_us ();
    while (atomic_load (&s_app.leave_done) == 0) {
        struct pollfd fds[3] = { { .fd = shoal_node_fd (s_app.node), .events = POLLIN },
                                 { .fd = signal_fd, .events = POLLIN },
                                 { .fd = commands_open ? 0 : -1, .events = POLLIN } };
        poll (fds, 3, 20);
        shoal_event_t event = { .size = sizeof event };
        while (shoal_node_event (s_app.node, &event) == 1)
            s_handle (&event);
        struct signalfd_siginfo info;
        if (read (signal_fd, &info, sizeof info) == (ssize_t) sizeof info && !leaving) {
            //  Leave waits: the application runs on meanwhile, here on the
            //  main thread, and reports the stops the leave brings.
            s_log ("leaving");
            leaving = pthread_create (&leave_thread, NULL, s_leave_run, NULL) == 0;
        }
        if (commands_open && fds[2].revents)
            commands_open = s_commands (0);
        uint64_t now = s_clock_us ();
        if (now >= step_at) {
            s_step ();
            step_at = now + STEP_MS * 1000;
        }
        if (now >= status_at) {
            s_status ();
            status_at = now + STATUS_MS * 1000;
        } else
            s_leader_watch ();
    }
    shoal_event_t event = { .size = sizeof event };
    while (shoal_node_event (s_app.node, &event) == 1)
        s_handle (&event);
    if (leaving)
        pthread_join (leave_thread, NULL);
    for (size_t i = 0; i < s_app.submit_count; i++)
        pthread_join (s_app.submits[i].thread, NULL);
    int rc = atomic_load (&s_app.leave_done) == 1 ? 0 : 3;
    s_log ("exit %d tasks=%zu", rc, s_app.task_count);
    shoal_node_destroy (&s_app.node);
    close (s_app.log_fd);
    close (signal_fd);
    pthread_mutex_destroy (&s_app.log_lock);
    return rc;
}

//  =====================================================================
//  The test: node processes, and what their logs say

typedef struct {
    char id[SHOAL_NODE_ID_TEXT];
    int state;
    uint64_t incarnation;
} s_seen_t;

typedef struct {
    char task[SHOAL_TASK_TEXT];
    char role; //  A, L, S or -
    bool stopping;
} s_shown_t;

//  A node's last status line.
typedef struct {
    uint64_t at; //  0: none yet
    char leader[SHOAL_NODE_ID_TEXT];
    uint64_t term;
    bool acting, leased;
    int alive;
    s_seen_t members[MEMBERS_MAX];
    size_t member_count;
    s_shown_t tasks[TASKS_MAX];
    size_t task_count;
} s_status_t;

#define OPTIONS_MAX 12

typedef struct {
    char name[8];
    int cluster; //  the cluster it belongs to: no node ever sees another's
    char options[OPTIONS_MAX * 2][160];
    int option_count;
    //  The process now, or the last one.
    pid_t pid; //  0: not running
    int instance;
    int commands_fd;
    int log_fd;
    char partial[LOG_LINE_MAX * 2];
    size_t partial_size;
    char id[SHOAL_NODE_ID_TEXT];
    uint64_t last_at; //  its last line
    uint64_t kill_at; //  when it was killed, 0 when not
    bool expect_exit;
    bool exited;
    int wait_status;
    size_t acting_at_exit; //  tasks it still acted on when it ended
    s_status_t status;
    int learner_starts, promotions;
    int lease_losses;              //  LEASE events with leased false
    int left_rc;                   //  -1: it did not leave
    bool leads;                    //  acts as leader, as its last leader line says
    uint64_t leads_at, leads_term; //  when it last began to, and in which term
    //  The last answer to a submit.
    char submitted[SHOAL_NAME_TEXT];
    int submit_rc, submit_code;
    uint32_t submit_parallelism;
    //  Every member it ever listed, in any state.
    char seen[MEMBERS_MAX][SHOAL_NODE_ID_TEXT];
    size_t seen_count;
} s_proc_t;

enum { A0, A1, A2, A3, A4, S0, S1, S2, X, B1, C0, C1, D0, D1, PROCS };
enum { CLUSTER_A = 1, CLUSTER_S, CLUSTER_B, CLUSTER_C, CLUSTER_D };

static s_proc_t s_procs[PROCS];
static char s_scratch[] = "/tmp/shoal-test-cluster-XXXXXX";
static char s_key_file[2][128];
static uint64_t s_seed;

//  What the act/idle lines show: each interval a process acted on a task.
typedef struct {
    char task[SHOAL_TASK_TEXT];
    int slot, instance;
    uint64_t from, to; //  to: as far as it is known to have acted so far
    bool open;
    bool changed; //  since the last check
    bool clashed; //  counted in a double active already
    uint64_t epoch_term, epoch_version;
} s_interval_t;

static s_interval_t *s_intervals;
static size_t s_interval_count, s_interval_size;
static int s_double_active; //  intervals of one task on two processes that overlap
static int s_stale_epochs;  //  a task acting under an epoch older than one seen before
static int s_unexpected_exits;

static uint64_t
s_random (void)
{
    //  xorshift64*: replayable from the seed the test prints.
    s_seed ^= s_seed >> 12;
    s_seed ^= s_seed << 25;
    s_seed ^= s_seed >> 27;
    return s_seed * 2685821657736338717ull;
}

static void
s_random_fill (uint8_t *bytes, size_t size)
{
    for (size_t i = 0; i < size; i++)
        bytes[i] = (uint8_t) (s_random () >> 32);
}

//  ---------------------------------------------------------------------
//  Intervals

static int
s_epoch_compare (const s_interval_t *a, const s_interval_t *b)
{
    if (a->epoch_term != b->epoch_term)
        return a->epoch_term < b->epoch_term ? -1 : 1;
    if (a->epoch_version != b->epoch_version)
        return a->epoch_version < b->epoch_version ? -1 : 1;
    return 0;
}

static void
s_interval_open (int slot, uint64_t at, const char *task, uint64_t term, uint64_t version)
{
    if (s_interval_count == s_interval_size) {
        size_t size = s_interval_size ? 2 * s_interval_size : 256;
        s_interval_t *grown = realloc (s_intervals, size * sizeof *grown);
        if (!grown)
            return;
        s_intervals = grown;
        s_interval_size = size;
    }
    s_interval_t *made = &s_intervals[s_interval_count++];
    *made = (s_interval_t){ .slot = slot,
                            .instance = s_procs[slot].instance,
                            .from = at,
                            .to = at,
                            .open = true,
                            .changed = true,
                            .epoch_term = term,
                            .epoch_version = version };
    snprintf (made->task, sizeof made->task, "%s", task);
    //  Epochs fence what an active writes: a later owner never holds an
    //  older one.
    for (size_t i = 0; i + 1 < s_interval_count; i++) {
        const s_interval_t *before = &s_intervals[i];
        if (strcmp (before->task, task) == 0 &&
            (before->slot != slot || before->instance != made->instance) &&
            s_epoch_compare (before, made) > 0) {
            fprintf (stderr,
                     "stale epoch: %s acts on %s under %" PRIu64 ".%" PRIu64
                     ", and %s acted under %" PRIu64 ".%" PRIu64 " before\n",
                     s_procs[slot].name, task, term, version, s_procs[before->slot].name,
                     before->epoch_term, before->epoch_version);
            s_stale_epochs++;
            break;
        }
    }
}

//  Process slot acted on its open intervals at least until at; it stopped
//  acting on task (when not NULL) then.
static void
s_interval_extend (int slot, uint64_t at, const char *task)
{
    for (size_t i = 0; i < s_interval_count; i++) {
        s_interval_t *interval = &s_intervals[i];
        if (!interval->open || interval->slot != slot ||
            interval->instance != s_procs[slot].instance)
            continue;
        if (interval->to < at) {
            interval->to = at;
            interval->changed = true;
        }
        if (task && strcmp (interval->task, task) == 0)
            interval->open = false;
    }
}

//  Counts the intervals of one task on two processes that overlap: both
//  acted at one moment.
static void
s_intervals_check (void)
{
    for (size_t i = 0; i < s_interval_count; i++) {
        s_interval_t *a = &s_intervals[i];
        if (!a->changed)
            continue;
        a->changed = false;
        for (size_t j = 0; j < s_interval_count; j++) {
            s_interval_t *b = &s_intervals[j];
            if (j == i || (a->slot == b->slot && a->instance == b->instance) ||
                (a->clashed && b->clashed) || strcmp (a->task, b->task) != 0)
                continue;
            uint64_t from = a->from > b->from ? a->from : b->from;
            uint64_t to = a->to < b->to ? a->to : b->to;
            if (from < to) {
                fprintf (stderr,
                         "double active: %s on %s (%" PRIu64 ".%" PRIu64 ") and %s (%" PRIu64
                         ".%" PRIu64 ") for %" PRIu64 " us\n",
                         a->task, s_procs[a->slot].name, a->epoch_term, a->epoch_version,
                         s_procs[b->slot].name, b->epoch_term, b->epoch_version, to - from);
                s_double_active++;
                a->clashed = b->clashed = true;
            }
        }
    }
}

//  ---------------------------------------------------------------------
//  Reading the logs

static void
s_seen_add (s_proc_t *proc, const char *id)
{
    for (size_t i = 0; i < proc->seen_count; i++)
        if (strcmp (proc->seen[i], id) == 0)
            return;
    if (proc->seen_count == MEMBERS_MAX)
        return;
    size_t length = strnlen (id, SHOAL_NODE_ID_TEXT - 1);
    memcpy (proc->seen[proc->seen_count], id, length);
    proc->seen[proc->seen_count++][length] = 0;
}

static void
s_status_parse (s_proc_t *proc, uint64_t at, char *text)
{
    s_status_t *status = &proc->status;
    *status = (s_status_t){ .at = at };
    char *save = NULL;
    for (char *field = strtok_r (text, " ", &save); field; field = strtok_r (NULL, " ", &save)) {
        char *value = strchr (field, '=');
        if (!value)
            continue;
        *value++ = 0;
        if (strcmp (field, "leader") == 0)
            snprintf (status->leader, sizeof status->leader, "%s",
                      strcmp (value, "-") == 0 ? "" : value);
        else if (strcmp (field, "term") == 0)
            status->term = strtoull (value, NULL, 10);
        else if (strcmp (field, "acting") == 0)
            status->acting = atoi (value) != 0;
        else if (strcmp (field, "leased") == 0)
            status->leased = atoi (value) != 0;
        else if (strcmp (field, "alive") == 0)
            status->alive = atoi (value);
        else if (strcmp (field, "members") == 0) {
            char *inner = NULL;
            for (char *item = strtok_r (value, ",", &inner);
                 item && status->member_count < MEMBERS_MAX; item = strtok_r (NULL, ",", &inner)) {
                s_seen_t *seen = &status->members[status->member_count];
                if (sscanf (item, "%32[0-9a-f]:%d:%" SCNu64, seen->id, &seen->state,
                            &seen->incarnation) == 3) {
                    status->member_count++;
                    s_seen_add (proc, seen->id);
                }
            }
        } else if (strcmp (field, "tasks") == 0) {
            char *inner = NULL;
            for (char *item = strtok_r (value, ",", &inner); item && status->task_count < TASKS_MAX;
                 item = strtok_r (NULL, ",", &inner)) {
                s_shown_t *shown = &status->tasks[status->task_count];
                char role[4] = "";
                if (sscanf (item, "%80[^:]:%3[^:]", shown->task, role) == 2) {
                    shown->role = role[0];
                    shown->stopping = role[1] == 'x';
                    status->task_count++;
                }
            }
        }
    }
}

static void
s_line (int slot, char *line)
{
    s_proc_t *proc = &s_procs[slot];
    char *rest = NULL;
    uint64_t at = strtoull (line, &rest, 10);
    if (!rest || *rest != ' ')
        return;
    rest++;
    proc->last_at = at;
    char task[SHOAL_TASK_TEXT], id[SHOAL_NODE_ID_TEXT], name[SHOAL_NAME_TEXT];
    uint64_t term, version;
    int role, acting, rc, code;
    unsigned parallelism;
    if (strncmp (rest, "status ", 7) == 0)
        s_status_parse (proc, at, rest + 7);
    else if (sscanf (rest, "act %80s %" SCNu64 ".%" SCNu64, task, &term, &version) == 3)
        s_interval_open (slot, at, task, term, version);
    else if (sscanf (rest, "idle %80s", task) == 1)
        s_interval_extend (slot, at, task);
    else if (sscanf (rest, "leader %32s term=%" SCNu64 " acting=%d", id, &term, &acting) == 3) {
        if (acting && !proc->leads) {
            proc->leads_at = at;
            proc->leads_term = term;
        }
        proc->leads = acting != 0;
    } else if (sscanf (rest, "event START %80s role=%d", task, &role) == 2)
        proc->learner_starts += role == SHOAL_LEARNER;
    else if (strncmp (rest, "event PROMOTE ", 14) == 0)
        proc->promotions++;
    else if (strcmp (rest, "event LEASE 0") == 0)
        proc->lease_losses++;
    else if (sscanf (rest, "start id=%32s", id) == 1)
        snprintf (proc->id, sizeof proc->id, "%s", id);
    else if (sscanf (rest, "submit %64s rc=%d code=%d parallelism=%u", name, &rc, &code,
                     &parallelism) == 4) {
        snprintf (proc->submitted, sizeof proc->submitted, "%s", name);
        proc->submit_rc = rc;
        proc->submit_code = code;
        proc->submit_parallelism = parallelism;
        if (rc != 0 || code != SHOAL_RESULT_OK)
            fprintf (stderr, "%s: %s\n", proc->name, rest);
    } else if (sscanf (rest, "left rc=%d", &rc) == 1) {
        proc->left_rc = rc;
        if (rc != 0)
            fprintf (stderr, "%s: %s\n", proc->name, rest);
    } else if (strncmp (rest, "error ", 6) == 0 || strncmp (rest, "notice ", 7) == 0)
        fprintf (stderr, "%s: %s\n", proc->name, rest);
    s_interval_extend (slot, at, NULL);
}

static void
s_read_log (int slot)
{
    s_proc_t *proc = &s_procs[slot];
    if (proc->log_fd < 0)
        return;
    for (;;) {
        size_t room = sizeof proc->partial - 1 - proc->partial_size;
        ssize_t got = read (proc->log_fd, proc->partial + proc->partial_size, room);
        if (got <= 0)
            return;
        proc->partial_size += (size_t) got;
        char *start = proc->partial, *end;
        while (
            (end = memchr (start, '\n', (size_t) (proc->partial + proc->partial_size - start)))) {
            *end = 0;
            s_line (slot, start);
            start = end + 1;
        }
        proc->partial_size = (size_t) (proc->partial + proc->partial_size - start);
        memmove (proc->partial, start, proc->partial_size);
        if (proc->partial_size == sizeof proc->partial - 1)
            proc->partial_size = 0; //  no line is this long: drop it
    }
}

//  ---------------------------------------------------------------------
//  Node processes

//  Defines node process slot: its name, its cluster, and its options, as
//  key and value pairs ending with NULL (name, data-dir, bind and profile
//  come first).
static void
s_define (int slot, const char *name, int cluster, ...)
{
    s_proc_t *proc = &s_procs[slot];
    *proc = (s_proc_t){ .cluster = cluster, .commands_fd = -1, .log_fd = -1, .left_rc = -1 };
    snprintf (proc->name, sizeof proc->name, "%s", name);
    const char *defaults[] = {
        "name", name, "data-dir", NULL, "bind", NULL, "profile", "loopback"
    };
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++)
        snprintf (proc->options[i], sizeof proc->options[i], "%s", defaults[i] ? defaults[i] : "");
    snprintf (proc->options[3], sizeof proc->options[3], "%s/%s", s_scratch, name);
    snprintf (proc->options[5], sizeof proc->options[5], "127.0.0.1:%d", PORT_BASE + slot);
    proc->option_count = 8;
    va_list args;
    va_start (args, cluster);
    const char *text;
    while ((text = va_arg (args, const char *)) && proc->option_count < OPTIONS_MAX * 2)
        snprintf (proc->options[proc->option_count++], sizeof proc->options[0], "%s", text);
    va_end (args);
}

//  Starts node process slot, with a fresh log. Returns 0 or -1.
static int
s_spawn (int slot)
{
    s_proc_t *proc = &s_procs[slot];
    if (proc->pid)
        return -1;
    proc->instance++;
    char log[256];
    snprintf (log, sizeof log, "%s/%s.%d.log", s_scratch, proc->name, proc->instance);
    proc->log_fd = open (log, O_RDONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int commands[2];
    if (proc->log_fd < 0 || pipe2 (commands, O_CLOEXEC) != 0) {
        perror ("spawn");
        return -1;
    }
    char *argv[4 + OPTIONS_MAX * 2] = { "test_cluster", "node", log };
    for (int i = 0; i < proc->option_count; i++)
        argv[3 + i] = proc->options[i];
    pid_t parent = getpid ();
    pid_t pid = fork ();
    if (pid == 0) {
        //  The node dies with the test, however the test ends.
        prctl (PR_SET_PDEATHSIG, SIGKILL);
        if (getppid () != parent)
            _exit (1);
        dup2 (commands[0], 0);
        execv ("/proc/self/exe", argv);
        _exit (127);
    }
    close (commands[0]);
    if (pid < 0) {
        close (commands[1]);
        return -1;
    }
    proc->pid = pid;
    proc->commands_fd = commands[1];
    proc->partial_size = 0;
    proc->id[0] = 0;
    proc->last_at = s_clock_us ();
    proc->kill_at = 0;
    proc->expect_exit = proc->exited = false;
    proc->status = (s_status_t){ 0 };
    proc->learner_starts = proc->promotions = proc->lease_losses = 0;
    proc->left_rc = -1;
    proc->leads = false;
    proc->leads_at = proc->leads_term = 0;
    proc->submitted[0] = 0;
    return 0;
}

//  Takes note of the end of process slot: its last lines, and its acting
//  intervals end as it ended.
static void
s_reaped (int slot, int wait_status)
{
    s_proc_t *proc = &s_procs[slot];
    s_read_log (slot);
    uint64_t end = proc->last_at > proc->kill_at ? proc->last_at : proc->kill_at;
    proc->acting_at_exit = 0;
    for (size_t i = 0; i < s_interval_count; i++)
        if (s_intervals[i].open && s_intervals[i].slot == slot &&
            s_intervals[i].instance == proc->instance)
            proc->acting_at_exit++;
    s_interval_extend (slot, end, NULL);
    for (size_t i = 0; i < s_interval_count; i++)
        if (s_intervals[i].slot == slot && s_intervals[i].instance == proc->instance)
            s_intervals[i].open = false;
    close (proc->log_fd);
    close (proc->commands_fd);
    proc->log_fd = proc->commands_fd = -1;
    proc->pid = 0;
    proc->exited = true;
    proc->wait_status = wait_status;
    if (!proc->expect_exit && !proc->kill_at) {
        fprintf (stderr, "%s ended on its own: status 0x%x\n", proc->name, wait_status);
        s_unexpected_exits++;
    }
}

//  Kills process slot at once, as a crash would.
static uint64_t
s_kill (int slot)
{
    s_proc_t *proc = &s_procs[slot];
    if (!proc->pid)
        return 0;
    s_read_log (slot);
    proc->kill_at = s_clock_us ();
    kill (proc->pid, SIGKILL);
    int wait_status = 0;
    while (waitpid (proc->pid, &wait_status, 0) < 0 && errno == EINTR)
        ;
    s_reaped (slot, wait_status);
    return proc->kill_at;
}

//  Runs the test's side for ms: reads every log, notes the processes that
//  ended, checks the intervals.
static void
s_pump (uint64_t ms)
{
    uint64_t until = s_clock_us () + ms * 1000;
    do {
        for (int slot = 0; slot < PROCS; slot++) {
            if (!s_procs[slot].pid)
                continue;
            s_read_log (slot);
            int wait_status;
            if (waitpid (s_procs[slot].pid, &wait_status, WNOHANG) == s_procs[slot].pid)
                s_reaped (slot, wait_status);
        }
        s_intervals_check ();
        usleep (10000);
    } while (s_clock_us () < until);
}

//  Prints what every running node said last: for a wait that failed.
static void
s_dump (void)
{
    for (int slot = 0; slot < PROCS; slot++) {
        const s_proc_t *proc = &s_procs[slot];
        if (!proc->pid)
            continue;
        const s_status_t *status = &proc->status;
        fprintf (stderr,
                 "  %s id=%.8s leader=%.8s term=%" PRIu64
                 " acting=%d leased=%d alive=%d (%.1f s ago) tasks:",
                 proc->name, proc->id, status->leader, status->term, status->acting, status->leased,
                 status->alive, status->at ? (double) (s_clock_us () - status->at) / 1e6 : -1.0);
        for (size_t t = 0; t < status->task_count; t++)
            fprintf (stderr, " %s:%c%s", status->tasks[t].task, status->tasks[t].role,
                     status->tasks[t].stopping ? "x" : "");
        fprintf (stderr, "\n");
    }
}

//  Pumps until done (arg) has held for stable_ms, or WAIT_MS passed.
static bool
s_wait (bool (*done) (const void *), const void *arg, uint64_t stable_ms)
{
    uint64_t until = s_clock_us () + (uint64_t) WAIT_MS * 1000, held_since = 0;
    while (s_clock_us () < until) {
        s_pump (20);
        uint64_t now = s_clock_us ();
        if (!done (arg))
            held_since = 0;
        else if (!held_since)
            held_since = now;
        if (held_since && now - held_since >= stable_ms * 1000)
            return true;
    }
    fprintf (stderr, "waited %d s in vain; the nodes say:\n", WAIT_MS / 1000);
    s_dump ();
    return false;
}

//  Asks node process slot to submit a job, and waits for its answer.
//  Returns the submit's code, or -1 when there was no answer.
static int
s_submit (int slot, const char *job, uint32_t parallelism, bool stateful)
{
    s_proc_t *proc = &s_procs[slot];
    char command[128];
    int size = snprintf (command, sizeof command, "submit %s %u %d\n", job, parallelism, stateful);
    if (proc->commands_fd < 0 || write (proc->commands_fd, command, (size_t) size) != size)
        return -1;
    uint64_t until = s_clock_us () + (uint64_t) WAIT_MS * 1000;
    while (strcmp (proc->submitted, job) != 0 && proc->pid && s_clock_us () < until)
        s_pump (20);
    if (strcmp (proc->submitted, job) != 0 || proc->submit_rc != 0)
        return -1;
    CHECK_EQ (proc->submit_parallelism, parallelism);
    return proc->submit_code;
}

//  ---------------------------------------------------------------------
//  Clusters, as the logs show them

typedef struct {
    const char *name;
    uint32_t parallelism;
} s_job_t;

//  The nodes that should make one cluster, and the jobs it should run.
typedef struct {
    int slots[PROCS];
    int count;
    uint64_t since; //  only status lines after this count
    s_job_t jobs[2];
    int job_count;
    int watched; //  a slot the predicate looks at more closely, or -1
    uint64_t floor;
} s_group_t;

static bool
s_in_group (const s_group_t *group, const char *id)
{
    for (int i = 0; i < group->count; i++)
        if (id[0] && strcmp (s_procs[group->slots[i]].id, id) == 0)
            return true;
    return false;
}

static void
s_group_drop (s_group_t *group, int slot)
{
    for (int i = 0; i < group->count; i++)
        if (group->slots[i] == slot)
            group->slots[i--] = group->slots[--group->count];
}

//  Every node of the group sees the group alive and no one else, and all
//  follow one leader of the group, which alone acts.
static bool
s_one_cluster (const void *arg)
{
    const s_group_t *group = arg;
    const char *leader = NULL;
    int acting = 0;
    for (int i = 0; i < group->count; i++) {
        const s_proc_t *proc = &s_procs[group->slots[i]];
        const s_status_t *status = &proc->status;
        if (!proc->pid || !proc->id[0] || status->at <= group->since ||
            status->alive != group->count || !s_in_group (group, status->leader))
            return false;
        for (size_t m = 0; m < status->member_count; m++)
            if (status->members[m].state == SHOAL_MEMBER_STATE_ALIVE &&
                !s_in_group (group, status->members[m].id))
                return false;
        if (leader && strcmp (leader, status->leader) != 0)
            return false;
        leader = status->leader;
        if (status->acting && strcmp (proc->id, leader) != 0)
            return false;
        acting += status->acting;
    }
    return acting == 1;
}

static int
s_active_count (const s_status_t *status, const char *task)
{
    int count = 0;
    for (size_t t = 0; t < status->task_count; t++)
        count += status->leased && status->tasks[t].role == 'A' && !status->tasks[t].stopping &&
                 (!task || strcmp (status->tasks[t].task, task) == 0);
    return count;
}

//  One cluster, and every task of its jobs runs active on exactly one of
//  its nodes, which holds a lease.
static bool
s_settled (const void *arg)
{
    const s_group_t *group = arg;
    if (!s_one_cluster (group))
        return false;
    for (int j = 0; j < group->job_count; j++)
        for (uint32_t index = 0; index < group->jobs[j].parallelism; index++) {
            char task[SHOAL_TASK_TEXT];
            snprintf (task, sizeof task, "%s/%u", group->jobs[j].name, index);
            int actives = 0;
            for (int i = 0; i < group->count; i++)
                actives += s_active_count (&s_procs[group->slots[i]].status, task);
            if (actives != 1)
                return false;
        }
    return true;
}

//  The leader of the group: the slot that acts as one, or -1.
static int
s_leader (const s_group_t *group)
{
    for (int i = 0; i < group->count; i++)
        if (s_procs[group->slots[i]].status.acting)
            return group->slots[i];
    return -1;
}

//  A node of the group that does not lead, with an active task, or -1.
static int
s_follower (const s_group_t *group, bool with_tasks)
{
    for (int i = 0; i < group->count; i++) {
        const s_proc_t *proc = &s_procs[group->slots[i]];
        if (!proc->status.acting && proc->status.leader[0] &&
            (!with_tasks || s_active_count (&proc->status, NULL) > 0))
            return group->slots[i];
    }
    return -1;
}

//  The members each node ever listed that belong to another cluster (or
//  to no node of the test).
static int
s_foreign_sightings (void)
{
    int foreign = 0;
    for (int slot = 0; slot < PROCS; slot++) {
        const s_proc_t *proc = &s_procs[slot];
        for (size_t i = 0; i < proc->seen_count; i++) {
            int owner = -1;
            for (int other = 0; other < PROCS; other++)
                if (strcmp (s_procs[other].id, proc->seen[i]) == 0)
                    owner = other;
            if (owner < 0 || s_procs[owner].cluster != proc->cluster) {
                fprintf (stderr, "%s saw %.8s (%s), of another cluster\n", proc->name,
                         proc->seen[i], owner < 0 ? "unknown" : s_procs[owner].name);
                foreign++;
            }
        }
    }
    return foreign;
}

//  ---------------------------------------------------------------------
//  Behaviours

static s_group_t s_a = { .watched = -1 }; //  the keyed cluster, found by beacons

static void
three_nodes_on_seeds_only_make_one_cluster_with_one_leader (void)
{
    s_group_t seeds = { .slots = { S0, S1, S2 }, .count = 3, .watched = -1 };
    for (int i = 0; i < seeds.count; i++)
        CHECK_EQ (s_spawn (seeds.slots[i]), 0);
    CHECK (s_wait (s_one_cluster, &seeds, STABLE_MS));
    //  Their work is done: they make room for the others.
    for (int i = 0; i < seeds.count; i++)
        s_kill (seeds.slots[i]);
}

static void
four_nodes_find_each_other_by_beacons_and_elect_one_leader (void)
{
    for (int slot = A0; slot <= A3; slot++) {
        CHECK_EQ (s_spawn (slot), 0);
        s_a.slots[s_a.count++] = slot;
    }
    CHECK (s_wait (s_one_cluster, &s_a, STABLE_MS));
    CHECK (s_leader (&s_a) >= 0);
}

static void
a_job_submitted_on_a_follower_runs_every_task_once (void)
{
    int follower = s_follower (&s_a, false);
    CHECK (follower >= 0);
    if (follower < 0)
        return;
    CHECK_EQ (s_submit (follower, "work", 8, true), SHOAL_RESULT_OK);
    s_a.jobs[s_a.job_count++] = (s_job_t){ "work", 8 };
    CHECK (s_wait (s_settled, &s_a, STABLE_MS));
    CHECK_EQ (s_double_active, 0);
    CHECK_EQ (s_stale_epochs, 0);
}

static bool
s_newcomer_active (const void *arg)
{
    const s_group_t *group = arg;
    return s_settled (group) && s_active_count (&s_procs[group->watched].status, NULL) > 0;
}

static void
a_fifth_node_warms_learners_then_takes_over (void)
{
    CHECK_EQ (s_spawn (A4), 0);
    s_a.slots[s_a.count++] = A4;
    s_a.since = s_clock_us ();
    s_a.watched = A4;
    CHECK (s_wait (s_newcomer_active, &s_a, STABLE_MS));
    //  Stateful tasks moved to it as learners first, then were promoted.
    CHECK (s_procs[A4].learner_starts > 0);
    CHECK (s_procs[A4].promotions > 0);
    CHECK_EQ (s_double_active, 0);
    CHECK_EQ (s_stale_epochs, 0);
}

static bool
s_new_leader_acts (const void *arg)
{
    const s_group_t *group = arg;
    for (int i = 0; i < group->count; i++) {
        const s_proc_t *proc = &s_procs[group->slots[i]];
        if (proc->leads_at > group->since && proc->leads_term > group->floor)
            return true;
    }
    return false;
}

static void
a_killed_leader_is_replaced_and_every_task_runs_once_again (void)
{
    int leader = s_leader (&s_a);
    CHECK (leader >= 0);
    if (leader < 0)
        return;
    uint64_t term = s_procs[leader].status.term;
    int lease_losses[PROCS];
    for (int slot = 0; slot < PROCS; slot++)
        lease_losses[slot] = s_procs[slot].lease_losses;
    s_a.since = s_kill (leader);
    s_group_drop (&s_a, leader);
    s_a.floor = term;
    CHECK (s_wait (s_new_leader_acts, &s_a, 0));
    //  The first to act as leader after the kill.
    int successor = -1;
    for (int i = 0; i < s_a.count; i++) {
        const s_proc_t *proc = &s_procs[s_a.slots[i]];
        if (proc->leads_at > s_a.since && proc->leads_term > term &&
            (successor < 0 || proc->leads_at < s_procs[successor].leads_at))
            successor = s_a.slots[i];
    }
    if (successor >= 0)
        printf ("leader failover: %s killed, %s acts as leader in term %" PRIu64 " after %.0f ms\n",
                s_procs[leader].name, s_procs[successor].name, s_procs[successor].leads_term,
                (double) (s_procs[successor].leads_at - s_a.since) / 1000);
    CHECK (s_wait (s_settled, &s_a, STABLE_MS));
    //  Not a check: a failover longer than the task lease stops every task
    //  of the cluster for a while (docs/handoff.md 3).
    int lapsed = 0;
    for (int i = 0; i < s_a.count; i++)
        lapsed += s_procs[s_a.slots[i]].lease_losses > lease_losses[s_a.slots[i]];
    printf ("leases lapsed during the failover on %d of %d nodes\n", lapsed, s_a.count);
    //  Every node follows the new leader, in a higher term.
    for (int i = 0; i < s_a.count; i++) {
        const s_status_t *status = &s_procs[s_a.slots[i]].status;
        CHECK (strcmp (status->leader, s_procs[leader].id) != 0);
        CHECK (status->term > term);
    }
    CHECK_EQ (s_double_active, 0);
    CHECK_EQ (s_stale_epochs, 0);
}

//  Settled, and every other node sees the watched one alive with an
//  incarnation above the floor.
static bool
s_restart_seen (const void *arg)
{
    const s_group_t *group = arg;
    const char *id = s_procs[group->watched].id;
    for (int i = 0; i < group->count; i++) {
        if (group->slots[i] == group->watched)
            continue;
        const s_status_t *status = &s_procs[group->slots[i]].status;
        bool seen = false;
        for (size_t m = 0; m < status->member_count; m++)
            seen |= strcmp (status->members[m].id, id) == 0 &&
                    status->members[m].state == SHOAL_MEMBER_STATE_ALIVE &&
                    status->members[m].incarnation > group->floor;
        if (!seen)
            return false;
    }
    return s_settled (group);
}

static void
a_node_killed_and_started_again_keeps_its_id_with_a_higher_incarnation (void)
{
    int restarted = s_follower (&s_a, true);
    CHECK (restarted >= 0);
    if (restarted < 0)
        return;
    char id[SHOAL_NODE_ID_TEXT];
    memcpy (id, s_procs[restarted].id, sizeof id);
    //  The incarnation the others know it by.
    uint64_t floor = 0;
    for (int i = 0; i < s_a.count; i++) {
        const s_status_t *status = &s_procs[s_a.slots[i]].status;
        for (size_t m = 0; m < status->member_count && s_a.slots[i] != restarted; m++)
            if (strcmp (status->members[m].id, id) == 0 && status->members[m].incarnation > floor)
                floor = status->members[m].incarnation;
    }
    CHECK (floor > 0);
    //  As after a crash: its tasks die with it, and it comes back at once
    //  on the same data directory.
    s_kill (restarted);
    CHECK_EQ (s_spawn (restarted), 0);
    s_a.since = s_clock_us ();
    s_a.watched = restarted;
    s_a.floor = floor;
    CHECK (s_wait (s_restart_seen, &s_a, STABLE_MS));
    CHECK_STR (s_procs[restarted].id, id);
    CHECK_EQ (s_double_active, 0);
    CHECK_EQ (s_stale_epochs, 0);
}

static bool
s_exited (const void *arg)
{
    return s_procs[*(const int *) arg].exited;
}

static void
a_node_told_to_stop_hands_its_tasks_over_and_exits_0 (void)
{
    int leaving = s_follower (&s_a, true);
    CHECK (leaving >= 0);
    if (leaving < 0)
        return;
    s_proc_t *proc = &s_procs[leaving];
    proc->expect_exit = true;
    kill (proc->pid, SIGTERM);
    CHECK (s_wait (s_exited, &leaving, 0));
    if (!proc->exited)
        s_kill (leaving);
    CHECK (WIFEXITED (proc->wait_status) && WEXITSTATUS (proc->wait_status) == 0);
    CHECK_EQ (proc->left_rc, 0);
    //  It stopped acting on each task before it ended: they were handed over.
    CHECK_EQ (proc->acting_at_exit, 0);
    s_group_drop (&s_a, leaving);
    s_a.since = s_clock_us ();
    CHECK (s_wait (s_settled, &s_a, STABLE_MS));
    CHECK_EQ (s_double_active, 0);
    CHECK_EQ (s_stale_epochs, 0);
}

static bool
s_reports (const void *arg)
{
    const s_proc_t *proc = &s_procs[*(const int *) arg];
    return proc->status.at > 0 || !proc->pid;
}

static void
a_node_with_another_key_never_joins (void)
{
    //  It hears the cluster's beacons and has its seeds, and can open none
    //  of what they send; nor can they open what it sends. Once it runs,
    //  it is watched long enough to try its seeds twice (every 3 s).
    int intruder = X;
    CHECK_EQ (s_spawn (intruder), 0);
    CHECK (s_wait (s_reports, &intruder, 0));
    s_pump (4000);
    CHECK (s_procs[X].pid != 0);
    CHECK_EQ (s_procs[X].status.alive, 1);
    CHECK_EQ (s_foreign_sightings (), 0);
    s_a.since = s_clock_us ();
    CHECK (s_wait (s_settled, &s_a, STABLE_MS));
}

static void
clusters_that_differ_in_key_or_name_stay_apart_on_one_beacon_port (void)
{
    //  B has another key than A; C and D have no key, and other names.
    s_group_t b = { .slots = { X, B1 }, .count = 2, .watched = -1 };
    s_group_t c = { .slots = { C0, C1 }, .count = 2, .watched = -1 };
    s_group_t d = { .slots = { D0, D1 }, .count = 2, .watched = -1 };
    CHECK_EQ (s_spawn (B1), 0);
    for (int i = 0; i < 2; i++) {
        CHECK_EQ (s_spawn (c.slots[i]), 0);
        CHECK_EQ (s_spawn (d.slots[i]), 0);
    }
    s_a.since = s_clock_us ();
    CHECK (s_wait (s_one_cluster, &b, STABLE_MS));
    CHECK (s_wait (s_one_cluster, &c, STABLE_MS));
    CHECK (s_wait (s_one_cluster, &d, STABLE_MS));
    CHECK (s_wait (s_settled, &s_a, STABLE_MS));
    CHECK_EQ (s_foreign_sightings (), 0);
    for (int slot = X; slot <= D1; slot++)
        s_kill (slot);
}

//  Random bytes to cut garbage from, made once.
static uint8_t s_noise[5 << 20];

static const uint8_t *
s_noise_at (size_t size)
{
    return s_noise + s_random () % (sizeof s_noise - size + 1);
}

//  Garbage for a UDP port: datagrams of random bytes, empty, oversized,
//  and copies of real beacons (whole, cut short, or with a byte flipped).
static void
s_udp_garbage (int fd, uint16_t port, bool broadcast, uint8_t beacons[][1500],
               const size_t *beacon_sizes, size_t beacon_count)
{
    struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons (port) };
    to.sin_addr.s_addr = htonl (broadcast ? INADDR_BROADCAST : INADDR_LOOPBACK);
    size_t sizes[] = { 1 + s_random () % 1500, 0, 65000, 1 + s_random () % 64 };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        sendto (fd, s_noise_at (sizes[i]), sizes[i], 0, (struct sockaddr *) &to, sizeof to);
    if (!beacon_count)
        return;
    uint8_t copy[1500];
    size_t pick = s_random () % beacon_count, size = beacon_sizes[pick];
    memcpy (copy, beacons[pick], size);
    sendto (fd, copy, size, 0, (struct sockaddr *) &to, sizeof to);
    sendto (fd, copy, s_random () % size, 0, (struct sockaddr *) &to, sizeof to);
    copy[s_random () % size] ^= (uint8_t) (1 + s_random () % 255);
    sendto (fd, copy, size, 0, (struct sockaddr *) &to, sizeof to);
}

//  Writes bytes to a fresh TCP connection to port, and closes it.
static void
s_tcp_write (uint16_t port, const uint8_t *bytes, size_t size)
{
    int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct timeval timeout = { .tv_usec = 200000 };
    setsockopt (fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons (port) };
    to.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    if (connect (fd, (struct sockaddr *) &to, sizeof to) == 0)
        for (size_t done = 0; done < size;) {
            ssize_t sent = send (fd, bytes + done, size - done, MSG_NOSIGNAL);
            if (sent <= 0)
                break;
            done += (size_t) sent;
        }
    close (fd);
}

//  Garbage for a TCP port, by turns: random bytes; the ZMTP 3.0 greeting
//  and READY of a DEALER, then a frame that claims 2^63-1 bytes; the same
//  with a frame of 5 MiB, above what a node takes; or 1 MiB of random
//  bytes.
static void
s_tcp_garbage (uint16_t port, int round)
{
    static uint8_t bytes[(5 << 20) + 128];
    static const uint8_t ready[] = { 0x04, 28,  5,   'R', 'E', 'A', 'D', 'Y', 11,  'S',
                                     'o',  'c', 'k', 'e', 't', '-', 'T', 'y', 'p', 'e',
                                     0,    0,   0,   6,   'D', 'E', 'A', 'L', 'E', 'R' };
    size_t size = 0;
    if (round % 4 == 1 || round % 4 == 2) {
        memset (bytes, 0, 64);
        bytes[0] = 0xff, bytes[8] = 1, bytes[9] = 0x7f, bytes[10] = 3;
        memcpy (bytes + 12, "NULL", 4);
        memcpy (bytes + 64, ready, sizeof ready);
        size = 64 + sizeof ready;
        uint64_t claim = round % 4 == 1 ? INT64_MAX : 5 << 20;
        bytes[size++] = 0x02; //  a long message frame
        for (int i = 0; i < 8; i++)
            bytes[size++] = (uint8_t) (claim >> (56 - 8 * i));
    }
    size_t body = round % 4 == 0   ? 1 + s_random () % 4096
                  : round % 4 == 1 ? 100
                  : round % 4 == 2 ? 5 << 20
                                   : 1 << 20;
    memcpy (bytes + size, s_noise_at (body), body);
    s_tcp_write (port, bytes, size + body);
}

//  Random messages of one to three frames, now and then one of 1 MiB.
static void
s_dealer_garbage (zsock_t *dealer, int round)
{
    int frames = 1 + (int) (s_random () % 3);
    for (int i = 0; i < frames; i++) {
        size_t size = round % 10 == 9 && i == 0 ? 1 << 20 : s_random () % 2048;
        if (zmq_send (zsock_resolve (dealer), s_noise_at (size), size,
                      ZMQ_DONTWAIT | (i + 1 < frames ? ZMQ_SNDMORE : 0)) < 0)
            break;
    }
}

//  Listens on the beacon port beside the nodes for up to a second, and
//  keeps the sealed beacons it hears. Returns how many.
static size_t
s_beacons_capture (uint8_t beacons[][1500], size_t *sizes, size_t max)
{
    int fd = socket (AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    int yes = 1;
    setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    setsockopt (fd, SOL_SOCKET, SO_REUSEPORT, &yes, sizeof yes);
    struct sockaddr_in at = { .sin_family = AF_INET, .sin_port = htons (BEACON_PORT) };
    at.sin_addr.s_addr = htonl (INADDR_ANY);
    size_t count = 0;
    if (bind (fd, (struct sockaddr *) &at, sizeof at) == 0) {
        uint64_t until = s_clock_us () + 1000000;
        while (count < max && s_clock_us () < until) {
            struct pollfd item = { .fd = fd, .events = POLLIN };
            if (poll (&item, 1, 50) == 1) {
                ssize_t got = recv (fd, beacons[count], sizeof beacons[count], 0);
                if (got > 0)
                    sizes[count++] = (size_t) got;
            }
        }
    }
    close (fd);
    return count;
}

static void
garbage_on_every_port_leaves_the_cluster_whole (void)
{
    static uint8_t beacons[8][1500];
    size_t beacon_sizes[8];
    s_random_fill (s_noise, sizeof s_noise);
    size_t beacon_count = s_beacons_capture (beacons, beacon_sizes, 8);
    if (!beacon_count)
        printf ("note: no beacon heard to copy; the garbage is random only\n");
    int udp = socket (AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    int yes = 1;
    setsockopt (udp, SOL_SOCKET, SO_BROADCAST, &yes, sizeof yes);
    zsock_t *dealers[PROCS] = { NULL };
    for (int i = 0; i < s_a.count; i++) {
        char endpoint[64];
        snprintf (endpoint, sizeof endpoint, ">tcp://127.0.0.1:%d", PORT_BASE + s_a.slots[i]);
        dealers[i] = zsock_new_dealer (endpoint);
        CHECK (dealers[i] != NULL);
        if (dealers[i])
            zsock_set_linger (dealers[i], 0);
    }
    uint64_t until = s_clock_us () + 3000000;
    for (int round = 0; s_clock_us () < until; round++) {
        for (int i = 0; i < s_a.count; i++) {
            uint16_t port = (uint16_t) (PORT_BASE + s_a.slots[i]);
            s_udp_garbage (udp, port, false, beacons, beacon_sizes, beacon_count);
            s_tcp_garbage (port, round + i);
            if (dealers[i])
                s_dealer_garbage (dealers[i], round);
        }
        s_udp_garbage (udp, BEACON_PORT, true, beacons, beacon_sizes, beacon_count);
        s_udp_garbage (udp, BEACON_PORT, false, beacons, beacon_sizes, beacon_count);
        s_pump (30);
    }
    close (udp);
    for (int i = 0; i < s_a.count; i++)
        zsock_destroy (&dealers[i]);

    //  Every node is still up, in one cluster, and runs a new job.
    for (int i = 0; i < s_a.count; i++)
        CHECK (s_procs[s_a.slots[i]].pid != 0);
    s_a.since = s_clock_us ();
    CHECK (s_wait (s_settled, &s_a, STABLE_MS));
    int follower = s_follower (&s_a, false);
    CHECK (follower >= 0);
    if (follower >= 0)
        CHECK_EQ (s_submit (follower, "after", 4, false), SHOAL_RESULT_OK);
    s_a.jobs[s_a.job_count++] = (s_job_t){ "after", 4 };
    CHECK (s_wait (s_settled, &s_a, STABLE_MS));
    CHECK_EQ (s_double_active, 0);
    CHECK_EQ (s_stale_epochs, 0);
}

//  ---------------------------------------------------------------------

static int
s_key_file_write (const char *path)
{
    uint8_t key[SHOAL_KEY_BYTES];
    char text[SHOAL_KEY_TEXT_BYTES];
    if (shoal_key_generate (key) != 0 || shoal_key_format (key, text) != 0)
        return -1;
    FILE *file = fopen (path, "w");
    if (!file)
        return -1;
    fprintf (file, "%s\n", text);
    return fclose (file);
}

static void
s_define_all (void)
{
    char beacon_port[8], seeds[3][64], a_seeds[160] = "";
    snprintf (beacon_port, sizeof beacon_port, "%d", BEACON_PORT);
    for (int slot = A0; slot <= A4; slot++)
        snprintf (a_seeds + strlen (a_seeds), sizeof a_seeds - strlen (a_seeds), "%s127.0.0.1:%d",
                  slot == A0 ? "" : ",", PORT_BASE + slot);
    //  Each seeds-only node has the others as its seeds.
    for (int i = 0; i < 3; i++)
        snprintf (seeds[i], sizeof seeds[i], "127.0.0.1:%d,127.0.0.1:%d",
                  PORT_BASE + S0 + (i + 1) % 3, PORT_BASE + S0 + (i + 2) % 3);
    const char *a_names[] = { "a0", "a1", "a2", "a3", "a4" };
    for (int slot = A0; slot <= A4; slot++)
        s_define (slot, a_names[slot - A0], CLUSTER_A, "beacon-port", beacon_port, "key-file",
                  s_key_file[0], NULL);
    s_define (S0, "s0", CLUSTER_S, "beacon-port", "0", "join", seeds[0], NULL);
    s_define (S1, "s1", CLUSTER_S, "beacon-port", "0", "join", seeds[1], NULL);
    s_define (S2, "s2", CLUSTER_S, "beacon-port", "0", "join", seeds[2], NULL);
    s_define (X, "x", CLUSTER_B, "beacon-port", beacon_port, "key-file", s_key_file[1], "join",
              a_seeds, NULL);
    s_define (B1, "b1", CLUSTER_B, "beacon-port", beacon_port, "key-file", s_key_file[1], NULL);
    s_define (C0, "c0", CLUSTER_C, "beacon-port", beacon_port, "cluster", "blue", NULL);
    s_define (C1, "c1", CLUSTER_C, "beacon-port", beacon_port, "cluster", "blue", NULL);
    s_define (D0, "d0", CLUSTER_D, "beacon-port", beacon_port, "cluster", "green", NULL);
    s_define (D1, "d1", CLUSTER_D, "beacon-port", beacon_port, "cluster", "green", NULL);
}

int
main (int argc, char **argv)
{
    if (argc >= 3 && strcmp (argv[1], "node") == 0)
        return s_node_main (argc, argv);
    int rc = shoal_test_netns_enter ("the nodes' beacons");
    if (rc != 0)
        return rc;
    signal (SIGPIPE, SIG_IGN);
    const char *seed = getenv ("SHOAL_TEST_SEED");
    s_seed = seed ? strtoull (seed, NULL, 10) : (uint64_t) time (NULL);
    s_seed = s_seed ? s_seed : 1;
    printf ("seed %" PRIu64 " (SHOAL_TEST_SEED replays the garbage)\n", s_seed);
    if (!mkdtemp (s_scratch)) {
        perror ("mkdtemp");
        return 1;
    }
    for (int i = 0; i < 2; i++) {
        snprintf (s_key_file[i], sizeof s_key_file[i], "%s/key%d", s_scratch, i);
        if (s_key_file_write (s_key_file[i]) != 0) {
            fprintf (stderr, "cannot write %s\n", s_key_file[i]);
            return 1;
        }
    }
    s_define_all ();
    uint64_t began = s_clock_us ();
    RUN (three_nodes_on_seeds_only_make_one_cluster_with_one_leader);
    RUN (four_nodes_find_each_other_by_beacons_and_elect_one_leader);
    RUN (a_job_submitted_on_a_follower_runs_every_task_once);
    RUN (a_fifth_node_warms_learners_then_takes_over);
    RUN (a_killed_leader_is_replaced_and_every_task_runs_once_again);
    RUN (a_node_killed_and_started_again_keeps_its_id_with_a_higher_incarnation);
    RUN (a_node_told_to_stop_hands_its_tasks_over_and_exits_0);
    RUN (a_node_with_another_key_never_joins);
    RUN (clusters_that_differ_in_key_or_name_stay_apart_on_one_beacon_port);
    RUN (garbage_on_every_port_leaves_the_cluster_whole);
    for (int slot = 0; slot < PROCS; slot++)
        s_kill (slot);
    s_intervals_check ();
    CHECK_EQ (s_double_active, 0);
    CHECK_EQ (s_unexpected_exits, 0);
    printf ("%.1f s\n", (double) (s_clock_us () - began) / 1e6);
    free (s_intervals);
    char command[128];
    snprintf (command, sizeof command, "rm -rf %s", s_scratch);
    if (system (command) != 0)
        fprintf (stderr, "cannot remove %s\n", s_scratch);
    return TEST_DONE ();
}

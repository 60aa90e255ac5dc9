/*  examples/counter/main.c: a service that embeds a shoal node and runs a
    stateful task: each task of the job counts, and a node that takes a
    task over first restores its count (as a learner, reporting its lag)
    before it becomes the active.

    Options come from the environment (SHOAL_DATA_DIR, SHOAL_BIND,
    SHOAL_JOIN, ... as docs/options.md lists them) and from --set KEY=VALUE.

        shoal-counter [--set KEY=VALUE]... [--submit JOB:N] [--restore N]

    --submit JOB:N   submit a stateful job of N tasks once a leader is known
    --restore N      records a learner restores per second (default 20000)

    It prints one line per thing that happens. SIGINT or SIGTERM makes it
    leave the cluster gracefully: its active tasks are handed over first.
*/

#include <shoal.h>

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TASKS_MAX 256
#define STEP_MS   100
//  How many records behind a task's state is when a learner starts.
#define BACKLOG 50000

typedef struct {
    char task[SHOAL_TASK_TEXT];
    int role;
    bool stopping;     //  told to stop: done at the next step
    uint64_t lag;      //  records still to restore
    uint64_t count;    //  the state: what the active counted
    uint64_t epoch[2]; //  the grant of the active role, to fence writes
} s_task_t;

static s_task_t s_tasks[TASKS_MAX];
static size_t s_task_count;
static bool s_leased;
static volatile sig_atomic_t s_signalled;
static _Atomic bool s_leave_done;

static void
s_on_signal (int signal)
{
    (void) signal;
    s_signalled = 1;
}

static const char *
s_role_name (int role)
{
    return role == SHOAL_ACTIVE    ? "active"
           : role == SHOAL_LEARNER ? "learner"
           : role == SHOAL_STANDBY ? "standby"
                                   : "none";
}

static s_task_t *
s_task (const char *name, bool make)
{
    for (size_t i = 0; i < s_task_count; i++)
        if (strcmp (s_tasks[i].task, name) == 0)
            return &s_tasks[i];
    if (!make || s_task_count == TASKS_MAX)
        return NULL;
    s_task_t *task = &s_tasks[s_task_count++];
    memset (task, 0, sizeof *task);
    snprintf (task->task, sizeof task->task, "%s", name);
    return task;
}

static void
s_report (shoal_node_t *node, s_task_t *task, int state)
{
    char why[256];
    if (shoal_node_report (node, task->task, state, task->lag, why, sizeof why) != 0)
        printf ("report %s: %s\n", task->task, why);
}

//  What the node tells the application, and what the application does.
static void
s_event (shoal_node_t *node, const shoal_event_t *event)
{
    s_task_t *task = NULL;
    switch (event->type) {
    case SHOAL_EVENT_START:
        task = s_task (event->task, true);
        if (!task)
            break;
        task->role = event->role;
        task->stopping = false;
        task->epoch[0] = event->epoch_term;
        task->epoch[1] = event->epoch_version;
        //  A learner or standby starts far behind and catches up; an
        //  active starts from what it can restore at once (here: nothing).
        task->lag = event->role == SHOAL_ACTIVE ? 0 : BACKLOG;
        printf ("start %s as %s, epoch %llu.%llu\n", event->task, s_role_name (event->role),
                (unsigned long long) event->epoch_term, (unsigned long long) event->epoch_version);
        s_report (node, task, SHOAL_RUNNING);
        break;
    case SHOAL_EVENT_PROMOTE:
        task = s_task (event->task, false);
        if (task) {
            task->role = SHOAL_ACTIVE;
            task->stopping = false;
            task->epoch[0] = event->epoch_term;
            task->epoch[1] = event->epoch_version;
            printf ("promote %s to active, epoch %llu.%llu\n", event->task,
                    (unsigned long long) event->epoch_term,
                    (unsigned long long) event->epoch_version);
        }
        break;
    case SHOAL_EVENT_DEMOTE:
    case SHOAL_EVENT_STOP:
        task = s_task (event->task, false);
        if (task) {
            //  An active finishes its current step before it reports the
            //  stop; anything else stops at once.
            task->stopping = task->role == SHOAL_ACTIVE;
            task->role = event->type == SHOAL_EVENT_STOP ? 0 : event->role;
            printf ("%s %s\n", event->type == SHOAL_EVENT_STOP ? "stop" : "demote", event->task);
            if (!task->stopping) {
                s_report (node, task, SHOAL_STOPPED);
                if (task->role == 0)
                    *task = s_tasks[--s_task_count];
            }
        }
        break;
    case SHOAL_EVENT_LEASE:
        s_leased = event->leased;
        printf ("lease %s\n", event->leased ? "held" : "lost: actives pause");
        break;
    case SHOAL_EVENT_LEADER:
        printf ("leader %s, term %llu\n", event->node[0] ? event->node : "(none)",
                (unsigned long long) event->term);
        break;
    case SHOAL_EVENT_MEMBER: {
        static const char *const states[] = { "alive", "suspect", "dead", "left" };
        printf ("member %s (%s) %s\n", event->name, event->node,
                event->state >= 0 && event->state < 4 ? states[event->state] : "?");
        break;
    }
    case SHOAL_EVENT_NOTICE:
        printf ("notice: %s\n", event->reason);
        break;
    case SHOAL_EVENT_LEFT:
        printf ("left the cluster\n");
        break;
    default:
        break;
    }
}

//  One step of every task.
static void
s_step (shoal_node_t *node, uint64_t restore_per_step)
{
    for (size_t i = 0; i < s_task_count; i++) {
        s_task_t *task = &s_tasks[i];
        if (task->stopping) {
            task->stopping = false;
            printf ("%s stopped at count %llu\n", task->task, (unsigned long long) task->count);
            s_report (node, task, SHOAL_STOPPED);
            if (task->role == 0) {
                *task = s_tasks[--s_task_count];
                i--;
            }
        } else if (task->role == SHOAL_ACTIVE && s_leased)
            //  Writes happen only under a lease, fenced by the epoch.
            task->count++;
        else if (task->role == SHOAL_LEARNER || task->role == SHOAL_STANDBY) {
            if (task->lag == 0)
                continue;
            task->lag = task->lag > restore_per_step ? task->lag - restore_per_step : 0;
            printf ("%s restoring, lag %llu\n", task->task, (unsigned long long) task->lag);
            s_report (node, task, SHOAL_RUNNING);
        }
    }
    fflush (stdout);
}

static void *
s_leave (void *arg)
{
    char why[256] = "";
    if (shoal_node_leave (arg, 0, NULL, why, sizeof why) != 0)
        printf ("leave: %s\n", why);
    s_leave_done = true;
    return NULL;
}

static int
s_usage (const char *reason)
{
    fprintf (stderr,
             "shoal-counter: %s\n"
             "usage: shoal-counter [--set KEY=VALUE]... [--submit JOB:N] [--restore N]\n",
             reason);
    return 2;
}

int
main (int argc, char **argv)
{
    extern char **environ;
    char why[256] = "";
    const char *submit = NULL;
    uint64_t restore_per_second = 20000;
    shoal_node_t *node = shoal_node_new ();
    if (!node)
        return 1;
    if (shoal_node_load_env (node, environ, why, sizeof why) != 0)
        return s_usage (why);
    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc)
            return s_usage ("every option takes a value");
        const char *value = argv[++i];
        if (strcmp (argv[i - 1], "--set") == 0) {
            char key[64];
            const char *equals = strchr (value, '=');
            if (!equals || (size_t) (equals - value) >= sizeof key)
                return s_usage ("--set takes KEY=VALUE");
            snprintf (key, sizeof key, "%.*s", (int) (equals - value), value);
            if (shoal_node_set (node, key, equals + 1, why, sizeof why) != 0)
                return s_usage (why);
        } else if (strcmp (argv[i - 1], "--submit") == 0)
            submit = value;
        else if (strcmp (argv[i - 1], "--restore") == 0)
            restore_per_second = strtoull (value, NULL, 10);
        else
            return s_usage ("unknown option");
    }
    char job[SHOAL_NAME_TEXT] = "";
    unsigned parallelism = 0;
    if (submit && (sscanf (submit, "%64[^:]:%u", job, &parallelism) != 2 || parallelism == 0))
        return s_usage ("--submit takes JOB:N");
    if (shoal_node_start (node, why, sizeof why) != 0) {
        fprintf (stderr, "shoal-counter: %s\n", why);
        shoal_node_destroy (&node);
        return 1;
    }
    char id[SHOAL_NODE_ID_TEXT];
    uint16_t port = 0;
    shoal_node_id (node, id);
    shoal_node_port (node, &port);
    printf ("node %s on port %u\n", id, port);
    fflush (stdout);

    struct sigaction action = { .sa_handler = s_on_signal };
    sigaction (SIGINT, &action, NULL);
    sigaction (SIGTERM, &action, NULL);
    pthread_t leaving;
    bool left = false, leave_started = false;
    struct timespec last;
    clock_gettime (CLOCK_MONOTONIC, &last);
    while (!left && !s_leave_done) {
        struct pollfd fd = { .fd = shoal_node_fd (node), .events = POLLIN };
        poll (&fd, 1, STEP_MS);
        shoal_event_t event = { .size = sizeof event };
        while (shoal_node_event (node, &event) == 1) {
            s_event (node, &event);
            left |= event.type == SHOAL_EVENT_LEFT;
        }
        struct timespec now;
        clock_gettime (CLOCK_MONOTONIC, &now);
        long elapsed = (now.tv_sec - last.tv_sec) * 1000 + (now.tv_nsec - last.tv_nsec) / 1000000;
        if (elapsed >= STEP_MS) {
            s_step (node, restore_per_second * STEP_MS / 1000);
            last = now;
        }
        if (submit && s_leased) {
            //  The job is submitted once the node holds a lease: a leader
            //  is known and holds a quorum.
            shoal_job_spec_t spec = {
                .size = sizeof spec, .name = job, .parallelism = parallelism, .stateful = true
            };
            shoal_result_t result = { .size = sizeof result };
            int rc = shoal_node_submit (node, &spec, 30000, NULL, &result);
            printf ("submit %s:%u: %s\n", job, parallelism,
                    rc == 0 && result.code == SHOAL_RESULT_OK ? "ok" : result.reason);
            submit = NULL;
        }
        if (s_signalled && !leave_started) {
            //  Leave waits; the application goes on meanwhile, to stop its
            //  tasks as the node hands them over.
            printf ("leaving\n");
            leave_started = pthread_create (&leaving, NULL, s_leave, node) == 0;
            left = !leave_started;
        }
    }
    if (leave_started)
        pthread_join (leaving, NULL);
    //  The leave may end between the last read of the events and the loop's
    //  test: what the node told by then (SHOAL_EVENT_LEFT first) is read.
    shoal_event_t event = { .size = sizeof event };
    while (shoal_node_event (node, &event) == 1)
        s_event (node, &event);
    shoal_node_destroy (&node);
    printf ("bye\n");
    return 0;
}

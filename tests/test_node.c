/*  tests/test_node.c: nodes of the public API (include/shoal.h), several in
    one process, talking over loopback through their seeds.

    Each test drives its nodes as an application would: it polls their
    event descriptors, runs what they start (learners make up their lag
    step by step), stops what they stop, and reports each step back. All
    along it checks the promise of the runtime: no task ever has two
    actives that hold a lease at once.

    Waits are bounded generously (a minute), only to end a test that hangs:
    no check depends on how fast the machine is.
*/
#include "shoal.h"
#include "tests/test.h"

//  The control endpoint's client, as the shoal command uses it.
#include "node/control.h"
#include "wire/keyring.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NODES_MAX 5
#define TASKS_MAX 64
#define WAIT_MS   60000
//  How far behind a learner starts, and how much it makes up per step.
#define LEARNER_LAG  40000
#define LEARNER_STEP 10000

typedef struct {
    char task[SHOAL_TASK_TEXT];
    int role;      //  0: none
    bool stopping; //  told to stop; reported at the next step
    uint64_t lag;
    int starts;     //  START events as a learner, and promotions
    int promotions; //  learner or standby to active
} s_task_t;

typedef struct {
    shoal_node_t *node;
    char dir[64];
    char id[SHOAL_NODE_ID_TEXT];
    uint16_t port;
    bool leased;
    bool left;
    s_task_t tasks[TASKS_MAX];
    size_t task_count;
    int learner_starts;
    int promotions;
} s_member_t;

static s_member_t s_members[NODES_MAX];
static char s_scratch[] = "/tmp/shoal-test-node-XXXXXX";
static int s_double_active; //  moments two leased actives ran one task

static uint64_t
s_clock_ms (void)
{
    struct timespec now;
    clock_gettime (CLOCK_MONOTONIC, &now);
    return (uint64_t) now.tv_sec * 1000 + (uint64_t) now.tv_nsec / 1000000;
}

static s_task_t *
s_task (s_member_t *member, const char *task, bool make)
{
    for (size_t i = 0; i < member->task_count; i++)
        if (strcmp (member->tasks[i].task, task) == 0)
            return &member->tasks[i];
    if (!make || member->task_count == TASKS_MAX)
        return NULL;
    s_task_t *made = &member->tasks[member->task_count++];
    *made = (s_task_t){ 0 };
    snprintf (made->task, sizeof made->task, "%s", task);
    return made;
}

static void
s_task_drop (s_member_t *member, s_task_t *task)
{
    *task = member->tasks[--member->task_count];
}

//  Starts node n: it joins through node seed (or none when seed is -1).
static int
s_start (int n, int seed, const char *extra_key, const char *extra_value)
{
    s_member_t *member = &s_members[n];
    member->node = shoal_node_new ();
    snprintf (member->dir, sizeof member->dir, "%s/n%d", s_scratch, n);
    char why[256] = "", name[16], join[32];
    snprintf (name, sizeof name, "n%d", n);
    shoal_node_t *node = member->node;
    int rc = shoal_node_set (node, "name", name, why, sizeof why) ||
             shoal_node_set (node, "data-dir", member->dir, why, sizeof why) ||
             shoal_node_set (node, "bind", "127.0.0.1:0", why, sizeof why) ||
             shoal_node_set (node, "beacon-port", "0", why, sizeof why) ||
             shoal_node_set (node, "profile", "loopback", why, sizeof why);
    if (rc == 0 && seed >= 0) {
        snprintf (join, sizeof join, "127.0.0.1:%u", s_members[seed].port);
        rc = shoal_node_set (node, "join", join, why, sizeof why);
    }
    if (rc == 0 && extra_key)
        rc = shoal_node_set (node, extra_key, extra_value, why, sizeof why);
    if (rc == 0)
        rc = shoal_node_start (node, why, sizeof why);
    if (rc != 0) {
        fprintf (stderr, "node n%d does not start: %s\n", n, why);
        shoal_node_destroy (&member->node);
        return -1;
    }
    shoal_node_id (node, member->id);
    shoal_node_port (node, &member->port);
    member->leased = false;
    member->left = false;
    member->task_count = 0;
    return 0;
}

//  Counts, after every event, the tasks that more than one leased node
//  runs as active.
static void
s_check_single_active (void)
{
    for (int n = 0; n < NODES_MAX; n++) {
        s_member_t *a = &s_members[n];
        if (!a->node || !a->leased)
            continue;
        for (size_t t = 0; t < a->task_count; t++) {
            if (a->tasks[t].role != SHOAL_ACTIVE && !a->tasks[t].stopping)
                continue;
            for (int m = n + 1; m < NODES_MAX; m++) {
                s_member_t *b = &s_members[m];
                s_task_t *other = b->node && b->leased ? s_task (b, a->tasks[t].task, false) : NULL;
                if (other && (other->role == SHOAL_ACTIVE || other->stopping)) {
                    fprintf (stderr, "double active: %s on n%d and n%d\n", a->tasks[t].task, n, m);
                    s_double_active++;
                }
            }
        }
    }
}

static void
s_report (s_member_t *member, const char *task, int state, uint64_t lag)
{
    char why[256];
    if (shoal_node_report (member->node, task, state, lag, why, sizeof why) != 0)
        fprintf (stderr, "report %s: %s\n", task, why);
}

//  The application's side of one event.
static void
s_handle (s_member_t *member, const shoal_event_t *event)
{
    s_task_t *task;
    switch (event->type) {
    case SHOAL_EVENT_START:
        task = s_task (member, event->task, true);
        if (!task)
            break;
        task->role = event->role;
        task->stopping = false;
        task->lag = event->role == SHOAL_ACTIVE ? 0 : LEARNER_LAG;
        if (event->role == SHOAL_LEARNER)
            member->learner_starts++;
        s_report (member, event->task, SHOAL_RUNNING, task->lag);
        break;
    case SHOAL_EVENT_PROMOTE:
        task = s_task (member, event->task, false);
        if (task) {
            task->role = SHOAL_ACTIVE;
            task->stopping = false;
            member->promotions++;
        }
        break;
    case SHOAL_EVENT_DEMOTE:
    case SHOAL_EVENT_STOP:
        //  Stopped by the next step: meanwhile it still counts as active.
        task = s_task (member, event->task, false);
        if (task) {
            task->stopping = task->role == SHOAL_ACTIVE || task->stopping;
            task->role = event->type == SHOAL_EVENT_STOP ? 0 : event->role;
            if (!task->stopping) {
                s_report (member, event->task, SHOAL_STOPPED, 0);
                if (event->type == SHOAL_EVENT_STOP)
                    s_task_drop (member, task);
            }
        }
        break;
    case SHOAL_EVENT_LEASE:
        member->leased = event->leased;
        break;
    case SHOAL_EVENT_LEFT:
        member->left = true;
        break;
    default:
        break;
    }
}

//  One step of every task: stops finish, learners make up lag.
static void
s_step (s_member_t *member)
{
    for (size_t t = 0; t < member->task_count; t++) {
        s_task_t *task = &member->tasks[t];
        if (task->stopping) {
            task->stopping = false;
            s_report (member, task->task, SHOAL_STOPPED, 0);
            if (task->role == 0) {
                s_task_drop (member, task);
                t--;
            }
        } else if (task->role == SHOAL_LEARNER || task->role == SHOAL_STANDBY) {
            task->lag = task->lag > LEARNER_STEP ? task->lag - LEARNER_STEP : 0;
            s_report (member, task->task, SHOAL_RUNNING, task->lag);
        }
    }
}

//  Runs the application of every node for ms.
static void
s_pump (uint64_t ms)
{
    uint64_t until = s_clock_ms () + ms, step_at = s_clock_ms () + 50;
    while (s_clock_ms () < until) {
        struct pollfd fds[NODES_MAX];
        int index[NODES_MAX], count = 0;
        for (int n = 0; n < NODES_MAX; n++)
            if (s_members[n].node) {
                fds[count] =
                    (struct pollfd){ .fd = shoal_node_fd (s_members[n].node), .events = POLLIN };
                index[count++] = n;
            }
        poll (fds, (nfds_t) count, 10);
        for (int i = 0; i < count; i++) {
            shoal_event_t event = { .size = sizeof event };
            while (shoal_node_event (s_members[index[i]].node, &event) == 1) {
                s_handle (&s_members[index[i]], &event);
                s_check_single_active ();
            }
        }
        if (s_clock_ms () >= step_at) {
            for (int n = 0; n < NODES_MAX; n++)
                if (s_members[n].node)
                    s_step (&s_members[n]);
            step_at = s_clock_ms () + 50;
            s_check_single_active ();
        }
    }
}

//  Pumps until done () holds, or WAIT_MS passed. Returns done ().
static bool
s_wait_for (bool (*done) (void))
{
    uint64_t until = s_clock_ms () + WAIT_MS;
    while (!done () && s_clock_ms () < until)
        s_pump (50);
    return done ();
}

//  ---------------------------------------------------------------------
//  Conditions

static int s_expected; //  nodes that should be up

//  Every running node sees s_expected members alive, and they all follow
//  one leader, which acts.
static bool
s_one_cluster (void)
{
    char leader[SHOAL_NODE_ID_TEXT] = "";
    int acting_count = 0;
    for (int n = 0; n < NODES_MAX; n++) {
        if (!s_members[n].node)
            continue;
        shoal_member_t members[NODES_MAX * 2];
        size_t count = 0, alive = 0;
        if (shoal_node_members (s_members[n].node, members, sizeof *members, NODES_MAX * 2,
                                &count) != 0)
            return false;
        for (size_t i = 0; i < count && i < NODES_MAX * 2; i++)
            alive += members[i].state == SHOAL_MEMBER_STATE_ALIVE;
        char id[SHOAL_NODE_ID_TEXT];
        uint64_t term;
        bool acting;
        if (alive != (size_t) s_expected ||
            shoal_node_leader (s_members[n].node, id, &term, &acting) != 0 || !id[0])
            return false;
        if (leader[0] && strcmp (leader, id) != 0)
            return false;
        memcpy (leader, id, sizeof leader);
        acting_count += acting;
    }
    return acting_count == 1;
}

static const char *s_job = "work";
static uint32_t s_parallelism;

//  Every task of the job runs active on exactly one leased node.
static bool
s_all_active_once (void)
{
    for (uint32_t i = 0; i < s_parallelism; i++) {
        char task[SHOAL_TASK_TEXT];
        snprintf (task, sizeof task, "%s/%u", s_job, i);
        int actives = 0;
        for (int n = 0; n < NODES_MAX; n++) {
            s_task_t *held = s_members[n].node ? s_task (&s_members[n], task, false) : NULL;
            actives += held && held->role == SHOAL_ACTIVE && !held->stopping && s_members[n].leased;
        }
        if (actives != 1)
            return false;
    }
    return true;
}

static int s_newcomer;

static bool
s_newcomer_active (void)
{
    s_member_t *member = &s_members[s_newcomer];
    size_t active = 0;
    for (size_t t = 0; t < member->task_count; t++)
        active += member->tasks[t].role == SHOAL_ACTIVE;
    return active > 0 && s_all_active_once ();
}

static size_t
s_active_count (const s_member_t *member)
{
    size_t active = 0;
    for (size_t t = 0; t < member->task_count; t++)
        active += member->tasks[t].role == SHOAL_ACTIVE;
    return active;
}

//  ---------------------------------------------------------------------
//  Behaviours

static int s_acting_leader (void);

//  Every running node's members name the acting leader a voter.
static bool
s_leader_votes (void)
{
    int leader = s_acting_leader ();
    if (leader < 0)
        return false;
    for (int n = 0; n < NODES_MAX; n++) {
        if (!s_members[n].node)
            continue;
        shoal_member_t members[NODES_MAX * 2];
        size_t count = 0;
        bool leader_votes = false;
        if (shoal_node_members (s_members[n].node, members, sizeof *members, NODES_MAX * 2,
                                &count) != 0)
            return false;
        for (size_t i = 0; i < count && i < NODES_MAX * 2; i++)
            leader_votes |= members[i].voter && strcmp (members[i].id, s_members[leader].id) == 0;
        if (!leader_votes)
            return false;
    }
    return true;
}

static void
three_nodes_on_seeds_make_one_cluster_with_one_leader (void)
{
    CHECK_EQ (s_start (0, -1, NULL, NULL), 0);
    CHECK_EQ (s_start (1, 0, NULL, NULL), 0);
    CHECK_EQ (s_start (2, 0, NULL, NULL), 0);
    s_expected = 3;
    CHECK (s_wait_for (s_one_cluster));
    //  The acting leader votes, and every node's members say so (voter).
    CHECK (s_wait_for (s_leader_votes));
    //  A caller built against 0.2 (no voter flag) gets its layout, and
    //  nothing is written past it; a smaller item is refused.
    size_t old_size = offsetof (shoal_member_t, voter);
    _Alignas(shoal_member_t) unsigned char items[3 * sizeof (shoal_member_t) + 1];
    memset (items, 0xa5, sizeof items);
    size_t count = 0;
    CHECK_EQ (shoal_node_members (s_members[0].node, (shoal_member_t *) items, old_size, 3, &count),
              0);
    CHECK_EQ (count, 3);
    CHECK_EQ (items[3 * old_size], 0xa5);
    CHECK_EQ (
        shoal_node_members (s_members[0].node, (shoal_member_t *) items, old_size - 1, 3, &count),
        -1);
}

//  Every started node knows the job's spec, command included.
static bool
s_all_know_the_job (void)
{
    for (int n = 0; n < s_expected; n++) {
        char command[SHOAL_COMMAND_TEXT];
        uint32_t parallelism = 0;
        bool stateful = false;
        if (shoal_node_job (s_members[n].node, s_job, &parallelism, &stateful, command,
                            sizeof command, NULL, 0) != 0 ||
            parallelism != 6 || !stateful || strcmp (command, "./count --fast") != 0)
            return false;
    }
    return true;
}

static void
a_job_submitted_anywhere_runs_every_task_once (void)
{
    shoal_job_spec_t spec = { .size = sizeof spec,
                              .name = s_job,
                              .parallelism = 6,
                              .stateful = true,
                              .command = "./count --fast" };
    shoal_result_t result = { .size = sizeof result };
    //  Any node takes it: n2 forwards to the leader unless it leads.
    CHECK_EQ (shoal_node_submit (s_members[2].node, &spec, WAIT_MS, NULL, &result), 0);
    CHECK_EQ (result.code, SHOAL_RESULT_OK);
    CHECK_EQ (result.parallelism, 6);
    s_parallelism = 6;
    CHECK (s_wait_for (s_all_active_once));
    CHECK_EQ (s_double_active, 0);
    CHECK (s_wait_for (s_all_know_the_job));
    char why[256] = "", command[4];
    CHECK_EQ (shoal_node_job (s_members[0].node, s_job, NULL, NULL, command, sizeof command, why,
                              sizeof why),
              -1);
    CHECK_CONTAINS (why, "bytes");
    CHECK_EQ (
        shoal_node_job (s_members[0].node, "no-such-job", NULL, NULL, NULL, 0, why, sizeof why),
        -1);
    CHECK_CONTAINS (why, "no job no-such-job");

    //  The same submit again is done already; another spec under the same
    //  name is refused with a reason.
    CHECK_EQ (shoal_node_submit (s_members[0].node, &spec, WAIT_MS, NULL, &result), 0);
    CHECK_EQ (result.code, SHOAL_RESULT_OK);
    //  A caller built against 0.2 knows no fenced: its spec is unfenced,
    //  the same; a fenced one is another spec.
    spec.size = offsetof (shoal_job_spec_t, fenced);
    spec.fenced = true; //  past its size: not read
    CHECK_EQ (shoal_node_submit (s_members[0].node, &spec, WAIT_MS, NULL, &result), 0);
    CHECK_EQ (result.code, SHOAL_RESULT_OK);
    spec.size = sizeof spec;
    CHECK_EQ (shoal_node_submit (s_members[0].node, &spec, WAIT_MS, NULL, &result), 0);
    CHECK_EQ (result.code, SHOAL_RESULT_INVALID);
    CHECK_CONTAINS (result.reason, "another spec");
    spec.fenced = false;
    spec.parallelism = 4;
    CHECK_EQ (shoal_node_submit (s_members[0].node, &spec, WAIT_MS, NULL, &result), 0);
    CHECK_EQ (result.code, SHOAL_RESULT_INVALID);
    CHECK_CONTAINS (result.reason, "another spec");
}

//  The lease's end (shoal_node_lease) as each node holds it now: 0 while
//  lost, and while a LEASE event waits.
static uint64_t s_lease_seen[NODES_MAX];

//  Every node that acts under its lease says it ends ahead of the clock,
//  and later than the end it said at first: keep-alives extend it, with no
//  event.
static bool
s_leases_move_on (void)
{
    uint64_t now = s_clock_ms ();
    for (int n = 0; n < NODES_MAX; n++) {
        uint64_t until = 0;
        if (!s_members[n].node)
            continue;
        if (shoal_node_lease (s_members[n].node, &until) != 0 || until <= now ||
            until <= s_lease_seen[n])
            return false;
    }
    return true;
}

static void
the_lease_end_is_told_and_moves_on (void)
{
    uint64_t until = 7;
    CHECK_EQ (shoal_node_lease (NULL, &until), -1);
    shoal_node_t *unstarted = shoal_node_new ();
    CHECK_EQ (shoal_node_lease (unstarted, &until), -1);
    shoal_node_destroy (&unstarted);
    for (int n = 0; n < NODES_MAX; n++)
        if (s_members[n].node)
            CHECK_EQ (shoal_node_lease (s_members[n].node, &s_lease_seen[n]), 0);
    CHECK (s_wait_for (s_leases_move_on));
}

static void
a_new_node_warms_learners_then_takes_over (void)
{
    s_newcomer = 3;
    CHECK_EQ (s_start (3, 1, NULL, NULL), 0);
    s_expected = 4;
    CHECK (s_wait_for (s_one_cluster));
    CHECK (s_wait_for (s_newcomer_active));
    //  Stateful tasks moved to it as learners first, then were promoted.
    CHECK (s_members[3].learner_starts > 0);
    CHECK (s_members[3].promotions > 0);
    CHECK_EQ (s_double_active, 0);
}

static void *
s_leave_thread (void *arg)
{
    s_member_t *member = arg;
    char why[256] = "";
    intptr_t rc = shoal_node_leave (member->node, WAIT_MS, NULL, why, sizeof why);
    if (rc != 0)
        fprintf (stderr, "leave: %s\n", why);
    return (void *) rc;
}

//  Makes member leave. A leave waits: the application keeps running
//  meanwhile, here on the main thread, and reports the stops it brings.
static void
s_leave (s_member_t *member)
{
    pthread_t thread;
    pthread_create (&thread, NULL, s_leave_thread, member);
    uint64_t until = s_clock_ms () + WAIT_MS;
    while (!member->left && s_clock_ms () < until)
        s_pump (50);
    void *rc;
    pthread_join (thread, &rc);
    CHECK (rc == NULL);
    CHECK (member->left);
}

static void
a_leaving_node_hands_its_tasks_over (void)
{
    s_member_t *member = &s_members[3];
    CHECK (s_active_count (member) > 0);
    s_leave (member);
    CHECK_EQ (s_active_count (member), 0);
    shoal_node_destroy (&member->node);
    member->task_count = 0;
    s_expected = 3;
    CHECK (s_wait_for (s_all_active_once));
    CHECK (s_wait_for (s_one_cluster));
    CHECK_EQ (s_double_active, 0);
}

//  Every other node sees node n alive with an incarnation above floor.
static int s_restarted;
static uint64_t s_incarnation_floor;
static bool
s_restart_seen (void)
{
    for (int n = 0; n < NODES_MAX; n++) {
        if (!s_members[n].node || n == s_restarted)
            continue;
        shoal_member_t members[NODES_MAX * 2];
        size_t count = 0;
        shoal_node_members (s_members[n].node, members, sizeof *members, NODES_MAX * 2, &count);
        bool seen = false;
        for (size_t i = 0; i < count && i < NODES_MAX * 2; i++)
            seen |= strcmp (members[i].id, s_members[s_restarted].id) == 0 &&
                    members[i].state == SHOAL_MEMBER_STATE_ALIVE &&
                    members[i].incarnation > s_incarnation_floor;
        if (!seen)
            return false;
    }
    return s_all_active_once ();
}

static void *s_cancel_soon (void *arg);

//  Asked while the leader it names is gone, a status waits for an answer
//  that does not come: a cancel ends the wait with the node's own tasks
//  (or, when the follower named no leader by then, it has them at once;
//  or it leads by then, and gives its whole table).
static void
s_status_of_a_gone_leader (int n)
{
    shoal_cancel_t *cancel = shoal_cancel_new ();
    pthread_t thread;
    CHECK_EQ (pthread_create (&thread, NULL, s_cancel_soon, cancel), 0);
    shoal_status_info_t info = { .size = sizeof info };
    size_t count = 0;
    CHECK_EQ (shoal_node_status (s_members[n].node, NULL, 0, 0, &count, &info, WAIT_MS, cancel), 0);
    pthread_join (thread, NULL);
    //  It may have been elected meanwhile: then it gives its own table.
    CHECK (info.whole || strstr (info.reason, "cancelled: this node's own tasks") ||
           strstr (info.reason, "no leader acts now"));
    shoal_cancel_destroy (&cancel);
}

static void
a_restarted_node_keeps_its_id_and_raises_its_incarnation (void)
{
    //  The leader, so that a status asked meanwhile waits for it in vain.
    int restarted = s_acting_leader ();
    CHECK (restarted >= 0);
    if (restarted < 0)
        return;
    int other = restarted == 0 ? 1 : 0;
    s_restarted = restarted;
    s_member_t *member = &s_members[restarted];
    char id[SHOAL_NODE_ID_TEXT];
    memcpy (id, member->id, sizeof id);
    shoal_member_t members[NODES_MAX * 2];
    size_t count = 0;
    shoal_node_members (s_members[other].node, members, sizeof *members, NODES_MAX * 2, &count);
    s_incarnation_floor = 0;
    for (size_t i = 0; i < count && i < NODES_MAX * 2; i++)
        if (strcmp (members[i].id, id) == 0)
            s_incarnation_floor = members[i].incarnation;
    CHECK (s_incarnation_floor > 0);

    //  As after a crash: no leave. Its tasks die with it.
    shoal_node_destroy (&member->node);
    member->task_count = 0;
    s_status_of_a_gone_leader (other);
    CHECK_EQ (s_start (restarted, other, NULL, NULL), 0);
    CHECK_STR (member->id, id);
    CHECK (s_wait_for (s_restart_seen));
    CHECK (s_wait_for (s_one_cluster));
    CHECK_EQ (s_double_active, 0);
}

static void
options_are_checked_and_fixed_once_started (void)
{
    char why[256] = "";
    shoal_node_t *node = shoal_node_new ();
    CHECK_EQ (shoal_node_set (node, "capacity", "0", why, sizeof why), -1);
    CHECK_CONTAINS (why, "capacity");
    CHECK_EQ (shoal_node_set (node, "no-such-option", "1", why, sizeof why), -1);
    CHECK_CONTAINS (why, "no-such-option");
    //  Started nodes take no more options.
    CHECK_EQ (shoal_node_set (s_members[0].node, "capacity", "2", why, sizeof why), -1);
    CHECK_CONTAINS (why, "before the node starts");
    shoal_node_destroy (&node);
    CHECK (node == NULL);
    shoal_node_destroy (&node);
}

static void
a_node_does_not_start_where_it_cannot_run (void)
{
    char why[256] = "", path[128];
    //  The data directory is a file.
    snprintf (path, sizeof path, "%s/a-file", s_scratch);
    FILE *file = fopen (path, "w");
    if (file)
        fclose (file);
    shoal_node_t *node = shoal_node_new ();
    shoal_node_set (node, "data-dir", path, why, sizeof why);
    shoal_node_set (node, "bind", "127.0.0.1:0", why, sizeof why);
    CHECK_EQ (shoal_node_start (node, why, sizeof why), -1);
    CHECK_CONTAINS (why, "data-dir");
    shoal_node_destroy (&node);

    //  Another node holds the data directory.
    node = shoal_node_new ();
    shoal_node_set (node, "data-dir", s_members[0].dir, why, sizeof why);
    shoal_node_set (node, "bind", "127.0.0.1:0", why, sizeof why);
    CHECK_EQ (shoal_node_start (node, why, sizeof why), -1);
    CHECK_CONTAINS (why, "data-dir");
    shoal_node_destroy (&node);

    //  The port is taken.
    char bind[32];
    snprintf (bind, sizeof bind, "127.0.0.1:%u", s_members[0].port);
    snprintf (path, sizeof path, "%s/other", s_scratch);
    node = shoal_node_new ();
    shoal_node_set (node, "data-dir", path, why, sizeof why);
    shoal_node_set (node, "bind", bind, why, sizeof why);
    CHECK_EQ (shoal_node_start (node, why, sizeof why), -1);
    CHECK_CONTAINS (why, "bind");
    shoal_node_destroy (&node);

    //  The key file holds no key.
    snprintf (path, sizeof path, "%s/bad-key", s_scratch);
    file = fopen (path, "w");
    if (file) {
        fputs ("not a key\n", file);
        fclose (file);
    }
    char dir[128];
    snprintf (dir, sizeof dir, "%s/keyed", s_scratch);
    node = shoal_node_new ();
    shoal_node_set (node, "data-dir", dir, why, sizeof why);
    shoal_node_set (node, "bind", "127.0.0.1:0", why, sizeof why);
    shoal_node_set (node, "key-file", path, why, sizeof why);
    CHECK_EQ (shoal_node_start (node, why, sizeof why), -1);
    CHECK_CONTAINS (why, "key-file");
    shoal_node_destroy (&node);
}

//  A beacon interface that is not a name is refused when set; one that
//  names no interface is found out at start: the node starts with beacons
//  off and a NOTICE naming it, as with no interface that broadcasts.
static void
a_beacon_interface_that_is_not_there_leaves_beacons_off (void)
{
    char why[256] = "", dir[128];
    shoal_node_t *node = shoal_node_new ();
    CHECK_EQ (shoal_node_set (node, "beacon-interface", "eth/0", why, sizeof why), -1);
    CHECK_CONTAINS (why, "beacon-interface");
    CHECK_CONTAINS (why, "'/'");
    CHECK_EQ (shoal_node_set (node, "beacon-interface", "an-interface-name", why, sizeof why), -1);
    CHECK_CONTAINS (why, "longer than 15 bytes");

    snprintf (dir, sizeof dir, "%s/no-interface", s_scratch);
    int rc = shoal_node_set (node, "data-dir", dir, why, sizeof why) ||
             shoal_node_set (node, "bind", "127.0.0.1:0", why, sizeof why) ||
             shoal_node_set (node, "beacon-port", "27949", why, sizeof why) ||
             shoal_node_set (node, "beacon-interface", "nosuch0", why, sizeof why);
    CHECK_EQ (rc, 0);
    CHECK_EQ (shoal_node_start (node, why, sizeof why), 0);
    char value[SHOAL_OPTION_TEXT];
    CHECK_EQ (shoal_node_get (node, "beacon-interface", value, sizeof value, why, sizeof why), 0);
    CHECK_STR (value, "nosuch0");
    shoal_event_t event = { .size = sizeof event };
    bool told = false;
    for (uint64_t until = s_clock_ms () + WAIT_MS; !told && s_clock_ms () < until;) {
        struct pollfd ready = { .fd = shoal_node_fd (node), .events = POLLIN };
        poll (&ready, 1, 100);
        while (!told && shoal_node_event (node, &event) == 1)
            told = event.type == SHOAL_EVENT_NOTICE && strstr (event.reason, "beacons are off") &&
                   strstr (event.reason, "'nosuch0'");
    }
    CHECK (told);
    shoal_node_destroy (&node);
}

static void
requests_with_bad_arguments_are_refused_with_reasons (void)
{
    shoal_result_t result = { .size = sizeof result };
    shoal_job_spec_t nameless = { .size = sizeof nameless, .parallelism = 1 };
    CHECK_EQ (shoal_node_submit (s_members[0].node, &nameless, WAIT_MS, NULL, &result), -1);
    CHECK (result.reason[0] != 0);
    CHECK_EQ (
        shoal_node_rescale (s_members[0].node, "no-such-job", 3, 0, 0, WAIT_MS, NULL, &result), 0);
    CHECK_EQ (result.code, SHOAL_RESULT_NOT_FOUND);
    char why[256] = "";
    CHECK_EQ (
        shoal_node_report (s_members[0].node, "no-such-job/0", SHOAL_RUNNING, 0, why, sizeof why),
        -1);
    CHECK_CONTAINS (why, "no-such-job/0");
    CHECK_EQ (shoal_node_report (s_members[0].node, "work/0", 77, 0, why, sizeof why), -1);
    char value[SHOAL_OPTION_TEXT];
    CHECK_EQ (shoal_node_get (s_members[0].node, "grace", value, sizeof value, why, sizeof why), 0);
    CHECK_STR (value, "10s");
    CHECK_EQ (
        shoal_node_get (s_members[0].node, "no-such-key", value, sizeof value, why, sizeof why),
        -1);
    CHECK_CONTAINS (why, "no-such-key");
}

//  Asks node n's control endpoint; returns the call's result.
static int
s_control (int n, const shoal_keyring_t *keyring, const shoal_control_req_t *req,
           uint64_t timeout_ms, shoal_arena_t *arena, shoal_control_rep_t *rep, char *why)
{
    char endpoint[128];
    snprintf (endpoint, sizeof endpoint, "ipc://%s/control", s_members[n].dir);
    return shoal_control_call (endpoint, keyring, req, timeout_ms, arena, rep, why, 256);
}

static void
the_control_endpoint_answers_members_jobs_and_status (void)
{
    shoal_keyring_t *plaintext = shoal_keyring_new ();
    shoal_arena_t arena;
    CHECK_EQ (shoal_arena_init (&arena, SHOAL_CONTROL_ARENA), 0);
    char why[256] = "";
    shoal_control_rep_t rep;
    shoal_control_req_t req = { .id = 7, .op = SHOAL_OP_MEMBERS };
    CHECK_EQ (s_control (0, plaintext, &req, WAIT_MS, &arena, &rep, why), 0);
    CHECK_EQ (rep.id, 7);
    CHECK_EQ (rep.code, SHOAL_REPLY_OK);
    CHECK (rep.member_count >= 3);
    CHECK (rep.term > 0);

    req = (shoal_control_req_t){ .id = 8, .op = SHOAL_OP_JOBS };
    CHECK_EQ (s_control (1, plaintext, &req, WAIT_MS, &arena, &rep, why), 0);
    CHECK_EQ (rep.job_count, 1);
    CHECK_STR (rep.job_count ? rep.jobs[0].name : "", "work");

    //  The leader lists every task; its own tasks are in that list.
    int leader = -1;
    for (int n = 0; n < NODES_MAX; n++) {
        bool acting = false;
        if (s_members[n].node)
            shoal_node_leader (s_members[n].node, NULL, NULL, &acting);
        if (acting)
            leader = n;
    }
    CHECK (leader >= 0);
    CHECK (s_wait_for (s_all_active_once));
    req = (shoal_control_req_t){ .id = 9, .op = SHOAL_OP_STATUS };
    CHECK_EQ (s_control (leader < 0 ? 0 : leader, plaintext, &req, WAIT_MS, &arena, &rep, why), 0);
    size_t actives = 0, running = 0;
    for (uint32_t i = 0; i < rep.task_count; i++) {
        actives += rep.tasks[i].status.role == SHOAL_ROLE_ACTIVE;
        //  Each as its node reported it: these all run by now.
        running += rep.tasks[i].status.role == SHOAL_ROLE_ACTIVE &&
                   rep.tasks[i].status.state == SHOAL_TASK_RUNNING;
    }
    CHECK_EQ (actives, s_parallelism);
    CHECK_EQ (running, s_parallelism);

    //  A submit through the endpoint is answered once the cluster holds it.
    shoal_jobspec_t spec = { .name = "more", .parallelism = 2, .weight = 1, .command = "" };
    req = (shoal_control_req_t){ .id = 10, .op = SHOAL_OP_SUBMIT, .job = "more", .spec = &spec };
    CHECK_EQ (s_control (2, plaintext, &req, WAIT_MS, &arena, &rep, why), 0);
    CHECK_EQ (rep.code, SHOAL_REPLY_OK);
    req = (shoal_control_req_t){ .id = 11, .op = SHOAL_OP_REMOVE, .job = "more" };
    CHECK_EQ (s_control (0, plaintext, &req, WAIT_MS, &arena, &rep, why), 0);
    CHECK_EQ (rep.code, SHOAL_REPLY_OK);

    //  Nobody listens at a missing endpoint: the call says so in time.
    char missing[128];
    snprintf (missing, sizeof missing, "ipc://%s/nowhere", s_scratch);
    CHECK_EQ (shoal_control_call (missing, plaintext, &req, 300, &arena, &rep, why, sizeof why),
              -1);
    CHECK (why[0] != 0);
    shoal_arena_release (&arena);
    shoal_keyring_destroy (&plaintext);
}

//  A node with a cluster key answers only clients that hold it.
static void
a_keyed_control_endpoint_answers_only_key_holders (void)
{
    uint8_t key[SHOAL_KEY_BYTES];
    char text[SHOAL_KEY_TEXT_BYTES], path[128];
    CHECK_EQ (shoal_key_generate (key), 0);
    CHECK_EQ (shoal_key_format (key, text), 0);
    snprintf (path, sizeof path, "%s/key", s_scratch);
    FILE *file = fopen (path, "w");
    CHECK (file != NULL);
    if (!file)
        return;
    fprintf (file, "%s\n", text);
    fclose (file);
    CHECK_EQ (s_start (4, -1, "key-file", path), 0);

    shoal_keyring_t *right = shoal_keyring_new (), *wrong = shoal_keyring_new (),
                    *plaintext = shoal_keyring_new ();
    uint8_t other[SHOAL_KEY_BYTES];
    shoal_key_generate (other);
    shoal_keyring_install (right, key);
    shoal_keyring_use (right, shoal_key_id (key));
    shoal_keyring_install (wrong, other);
    shoal_keyring_use (wrong, shoal_key_id (other));
    shoal_arena_t arena;
    CHECK_EQ (shoal_arena_init (&arena, SHOAL_CONTROL_ARENA), 0);
    char why[256] = "";
    shoal_control_rep_t rep;
    shoal_control_req_t req = { .id = 1, .op = SHOAL_OP_MEMBERS };
    CHECK_EQ (s_control (4, right, &req, WAIT_MS, &arena, &rep, why), 0);
    CHECK_EQ (rep.code, SHOAL_REPLY_OK);
    //  Refused, and told so at once: another key gets an answer it cannot
    //  open; no key gets 'invalid', which asks for the key and lists no
    //  member.
    CHECK_EQ (s_control (4, wrong, &req, WAIT_MS, &arena, &rep, why), -1);
    CHECK_CONTAINS (why, "is the key right");
    CHECK_EQ (s_control (4, plaintext, &req, WAIT_MS, &arena, &rep, why), 0);
    CHECK_EQ (rep.code, SHOAL_REPLY_INVALID);
    CHECK_EQ (rep.member_count, 0);
    CHECK_CONTAINS (rep.reason ? rep.reason : "", "--key-file");
    //  The keyed node still answers afterwards.
    CHECK_EQ (s_control (4, right, &req, WAIT_MS, &arena, &rep, why), 0);
    shoal_arena_release (&arena);
    shoal_keyring_destroy (&right);
    shoal_keyring_destroy (&wrong);
    shoal_keyring_destroy (&plaintext);
    shoal_node_destroy (&s_members[4].node);
}

//  The index of the node that acts as leader, or -1.
static int
s_acting_leader (void)
{
    for (int n = 0; n < NODES_MAX; n++) {
        char id[SHOAL_NODE_ID_TEXT];
        uint64_t term;
        bool acting = false;
        if (s_members[n].node && shoal_node_leader (s_members[n].node, id, &term, &acting) == 0 &&
            acting)
            return n;
    }
    return -1;
}

//  An item as a caller built against a newer shoal.h sees it: the library's
//  struct, then fields the library does not know, which it must zero.
typedef struct {
    shoal_status_row_t row;
    uint8_t newer[24];
} s_newer_row_t;

static bool
s_zeroed (const uint8_t *bytes, size_t size)
{
    for (size_t i = 0; i < size; i++)
        if (bytes[i])
            return false;
    return true;
}

//  The jobs and the leader's table, read through the API from a follower:
//  what `shoal jobs` and `shoal status` show.
static void
the_jobs_and_the_leaders_table_are_read_through_the_api (void)
{
    int leader = s_acting_leader ();
    CHECK (leader >= 0);
    int follower = leader == 0 ? 1 : 0;
    shoal_node_t *node = s_members[follower].node;

    shoal_job_info_t jobs[4];
    size_t count = 0;
    uint64_t version[2] = { 0, 0 };
    CHECK_EQ (shoal_node_jobs (node, jobs, sizeof *jobs, 4, &count, version), 0);
    CHECK_EQ (count, 1);
    CHECK_STR (jobs[0].name, s_job);
    CHECK_EQ (jobs[0].parallelism, 6);
    CHECK (jobs[0].stateful);
    CHECK (!jobs[0].fenced);
    CHECK_EQ (jobs[0].weight, 1);
    CHECK_STR (jobs[0].command, "./count --fast");
    CHECK_STR (jobs[0].require, "");
    CHECK (version[0] > 0 && version[1] > 0);
    //  Counting needs no room; an item smaller than the 0.2 layout is refused.
    CHECK_EQ (shoal_node_jobs (node, NULL, 0, 0, &count, NULL), 0);
    CHECK_EQ (count, 1);
    CHECK_EQ (
        shoal_node_jobs (node, jobs, offsetof (shoal_job_info_t, fenced) - 1, 4, &count, NULL), -1);
    //  One job's whole spec; an info smaller than the 0.2 layout is refused.
    shoal_job_info_t one;
    char why[256] = "";
    CHECK_EQ (shoal_node_job_info (node, s_job, &one, sizeof one, why, sizeof why), 0);
    CHECK_STR (one.name, s_job);
    CHECK_EQ (one.parallelism, 6);
    CHECK (one.stateful && !one.fenced);
    CHECK_STR (one.command, "./count --fast");
    CHECK_EQ (shoal_node_job_info (node, "no-such-job", &one, sizeof one, why, sizeof why), -1);
    CHECK_CONTAINS (why, "no job no-such-job");
    CHECK_EQ (shoal_node_job_info (node, s_job, &one, offsetof (shoal_job_info_t, fenced) - 1, why,
                                   sizeof why),
              -1);
    CHECK_CONTAINS (why, "0.2 layout");

    //  The follower asks the leader: the whole table, every task placed.
    s_newer_row_t rows[TASKS_MAX];
    memset (rows, 0xa5, sizeof rows);
    shoal_status_info_t status = { .size = sizeof status };
    CHECK_EQ (shoal_node_status (node, &rows[0].row, sizeof *rows, TASKS_MAX, &count, &status,
                                 WAIT_MS, NULL),
              0);
    CHECK (status.whole);
    CHECK_STR (status.leader, s_members[leader].id);
    CHECK (status.term > 0);
    CHECK_EQ (count, 6);
    for (size_t i = 0; i < count && i < TASKS_MAX; i++) {
        CHECK_EQ (strncmp (rows[i].row.task, s_job, strlen (s_job)), 0);
        CHECK (rows[i].row.node[0] != 0);
        CHECK (rows[i].row.role == SHOAL_ACTIVE || rows[i].row.role == SHOAL_STANDBY);
        CHECK (s_zeroed (rows[i].newer, sizeof rows[i].newer));
    }
    //  Not asked of the leader: this node's own tasks, and it says so.
    CHECK_EQ (
        shoal_node_status (node, &rows[0].row, sizeof *rows, TASKS_MAX, &count, &status, 0, NULL),
        0);
    CHECK (!status.whole);
    CHECK_CONTAINS (status.reason, "own tasks");
    status.size = sizeof status - 1;
    CHECK_EQ (shoal_node_status (node, NULL, 0, 0, &count, &status, 0, NULL), -1);
}

//  An application's signals (Go's runtime preempts its threads with
//  SIGURG; C programs catch SIGCHLD) must neither end a call early nor
//  reach the node's thread: a handler without SA_RESTART, and a storm of
//  signals at the calling thread and at the process.
static volatile sig_atomic_t s_signals_caught;
static atomic_bool s_storm_on;

static void
s_on_signal (int signal)
{
    (void) signal;
    s_signals_caught = s_signals_caught + 1;
}

static void *
s_storm (void *arg)
{
    pthread_t target = *(pthread_t *) arg;
    while (atomic_load (&s_storm_on)) {
        pthread_kill (target, SIGUSR1);
        kill (getpid (), SIGUSR1);
        usleep (20);
    }
    return NULL;
}

static void
calls_survive_the_applications_signals (void)
{
    struct sigaction action = { .sa_handler = s_on_signal }, old;
    sigemptyset (&action.sa_mask);
    CHECK_EQ (sigaction (SIGUSR1, &action, &old), 0);
    pthread_t self = pthread_self (), storm;
    atomic_store (&s_storm_on, true);
    CHECK_EQ (pthread_create (&storm, NULL, s_storm, &self), 0);
    int failed = 0;
    for (int i = 0; i < 3000; i++) {
        size_t count = 0;
        char id[SHOAL_NODE_ID_TEXT];
        if (shoal_node_members (s_members[i % 3].node, NULL, 0, 0, &count) != 0 || count < 3 ||
            shoal_node_leader (s_members[i % 3].node, id, NULL, NULL) != 0)
            failed++;
    }
    atomic_store (&s_storm_on, false);
    pthread_join (storm, NULL);
    sigaction (SIGUSR1, &old, NULL);
    CHECK_EQ (failed, 0);
    CHECK (s_signals_caught > 0);
    //  The nodes' threads run on: a job still runs every task once.
    CHECK (s_wait_for (s_all_active_once));
}

//  A node that waits for two more members never elects: a request to it
//  waits for a leader, and only a cancel ends that wait early.
static shoal_node_t *
s_lone_node (const char *name)
{
    char why[256] = "", dir[128];
    snprintf (dir, sizeof dir, "%s/%s", s_scratch, name);
    shoal_node_t *node = shoal_node_new ();
    if (shoal_node_set (node, "data-dir", dir, why, sizeof why) != 0 ||
        shoal_node_set (node, "bind", "127.0.0.1:0", why, sizeof why) != 0 ||
        shoal_node_set (node, "beacon-port", "0", why, sizeof why) != 0 ||
        shoal_node_set (node, "expect", "3", why, sizeof why) != 0 ||
        shoal_node_start (node, why, sizeof why) != 0) {
        fprintf (stderr, "lone node: %s\n", why);
        shoal_node_destroy (&node);
    }
    return node;
}

static void *
s_cancel_soon (void *arg)
{
    usleep (300 * 1000);
    shoal_cancel (arg);
    return NULL;
}

static void
waits_end_at_once_when_cancelled (void)
{
    shoal_node_t *node = s_lone_node ("lone");
    CHECK (node != NULL);
    if (!node)
        return;
    shoal_cancel_t *cancel = shoal_cancel_new ();
    CHECK (cancel != NULL && !shoal_cancelled (cancel));
    shoal_job_spec_t spec = { .size = sizeof spec, .name = "held", .parallelism = 2 };
    shoal_result_t result = { .size = sizeof result };

    //  Cancelled while it waits for a leader that never comes: without the
    //  cancel it would end NO_LEADER, after the forward time.
    pthread_t thread;
    CHECK_EQ (pthread_create (&thread, NULL, s_cancel_soon, cancel), 0);
    CHECK_EQ (shoal_node_submit (node, &spec, WAIT_MS, cancel, &result), -1);
    pthread_join (thread, NULL);
    CHECK_EQ (result.code, SHOAL_RESULT_CANCELLED);
    CHECK_CONTAINS (result.reason, "may still be applied");
    CHECK (shoal_cancelled (cancel));

    //  A cancelled handle ends the next waits before they ask.
    CHECK_EQ (shoal_node_rescale (node, "held", 4, 0, 0, WAIT_MS, cancel, &result), -1);
    CHECK_EQ (result.code, SHOAL_RESULT_CANCELLED);
    CHECK_CONTAINS (result.reason, "before it was sent");
    CHECK_EQ (shoal_node_remove (node, "held", WAIT_MS, cancel, NULL), -1);

    //  A status with no leader is this node's own tasks, at once.
    size_t count = 1;
    shoal_status_info_t status = { .size = sizeof status };
    CHECK_EQ (shoal_node_status (node, NULL, 0, 0, &count, &status, WAIT_MS, cancel), 0);
    CHECK (!status.whole);
    CHECK_EQ (count, 0);

    //  A result or a spec smaller than the 0.2 layout is refused.
    shoal_result_t small = { .size = sizeof small - 1 };
    CHECK_EQ (shoal_node_submit (node, &spec, WAIT_MS, NULL, &small), -1);
    spec.size = 8;
    CHECK_EQ (shoal_node_submit (node, &spec, WAIT_MS, NULL, &result), -1);
    CHECK_EQ (result.code, SHOAL_RESULT_INVALID);
    CHECK_CONTAINS (result.reason, "sizeof (shoal_job_spec_t)");
    shoal_event_t event = { .size = 4 };
    CHECK_EQ (shoal_node_event (node, &event), -1);

    //  A leave with a cancelled handle does not begin; with a live one, a
    //  node that holds nothing leaves at once.
    char why[256] = "";
    CHECK_EQ (shoal_node_leave (node, WAIT_MS, cancel, why, sizeof why), -1);
    CHECK_CONTAINS (why, "cancelled");
    CHECK_EQ (shoal_node_members (node, NULL, 0, 0, &count), 0);
    shoal_cancel_t *live = shoal_cancel_new ();
    CHECK_EQ (shoal_node_leave (node, WAIT_MS, live, why, sizeof why), 0);
    CHECK_EQ (shoal_node_members (node, NULL, 0, 0, &count), -1);
    shoal_cancel_destroy (&live);
    shoal_node_destroy (&node);
    shoal_cancel_destroy (&cancel);
    CHECK (cancel == NULL);
}

//  Leaders leave one after another, down to a single node: each hands its
//  vote over first, so the ones left keep a majority (a leader that left a
//  set of two used to leave the other without one, for good).
static void
leaders_that_leave_leave_a_majority_behind (void)
{
    while (s_expected > 1) {
        CHECK (s_wait_for (s_one_cluster));
        int leader = s_acting_leader ();
        CHECK (leader >= 0);
        if (leader < 0)
            return;
        s_member_t *member = &s_members[leader];
        s_leave (member);
        shoal_node_destroy (&member->node);
        member->task_count = 0;
        s_expected--;
        CHECK (s_wait_for (s_one_cluster));
        CHECK (s_wait_for (s_all_active_once));
    }
    CHECK_EQ (s_double_active, 0);
}

int
main (void)
{
    if (!mkdtemp (s_scratch)) {
        perror ("mkdtemp");
        return 1;
    }
    RUN (three_nodes_on_seeds_make_one_cluster_with_one_leader);
    RUN (options_are_checked_and_fixed_once_started);
    RUN (a_node_does_not_start_where_it_cannot_run);
    RUN (a_beacon_interface_that_is_not_there_leaves_beacons_off);
    RUN (a_job_submitted_anywhere_runs_every_task_once);
    RUN (the_jobs_and_the_leaders_table_are_read_through_the_api);
    RUN (waits_end_at_once_when_cancelled);
    RUN (calls_survive_the_applications_signals);
    RUN (the_lease_end_is_told_and_moves_on);
    RUN (requests_with_bad_arguments_are_refused_with_reasons);
    RUN (the_control_endpoint_answers_members_jobs_and_status);
    RUN (a_keyed_control_endpoint_answers_only_key_holders);
    RUN (a_new_node_warms_learners_then_takes_over);
    RUN (a_leaving_node_hands_its_tasks_over);
    RUN (a_restarted_node_keeps_its_id_and_raises_its_incarnation);
    RUN (leaders_that_leave_leave_a_majority_behind);
    for (int n = 0; n < NODES_MAX; n++)
        shoal_node_destroy (&s_members[n].node);
    char command[128];
    snprintf (command, sizeof command, "rm -rf %s", s_scratch);
    if (system (command) != 0)
        fprintf (stderr, "cannot remove %s\n", s_scratch);
    return TEST_DONE ();
}

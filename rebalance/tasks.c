/*  rebalance/tasks.c: the tasks of one node, as tasks.h describes them.
    docs/handoff.md (sections 2 to 4) has the protocol.

    The node keeps one array of tasks, sorted by name: every task its
    assignment gives it, and every task the application still runs or is
    stopping. Each entry holds both sides of the handoff: what the
    assignment wants (role and epoch) and what the application was told
    (role, epoch, state, lag, failures in a row). An input changes one
    side, then the tasks are settled: the difference between the two sides
    becomes a command, and the told side moves on at once.

    An ASSIGN is merged into the array in one pass once its placements for
    this node are sorted: a snapshot of N tasks costs O(N log N), a delta of
    k placements O(N + k log k); a report costs a binary search. The list that STATUS carries is
   rebuilt only when a task comes or goes; a change of role, state or lag patches its entry in
    place. Tasks dropped during an input stay in the array, marked gone,
    until the next input, so that the commands naming them stay valid.
*/

#include "rebalance/tasks.h"
#include "wire/check.h"
#include "wire/ids.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//  The send times of this many recent STATUS messages are kept for the
//  lease: an ASSIGN echoes the last STATUS its leader received, which is
//  one of the last few sent unless far more than this are in flight.
#define S_SENT 64
//  No time: a restart that will not come, a lease never held.
#define S_NEVER UINT64_MAX
//  The lag of a learner or standby the application has not reported yet:
//  above every acceptable_lag, so that the leader does not take a copy that
//  just started for one that caught up.
#define S_LAG_UNKNOWN UINT64_MAX

typedef struct {
    char name[SHOAL_TASK_MAX + 1];
    //  What the assignment wants: role none when it does not give the task
    //  to this node (the task is then being stopped, or waits to be dropped).
    uint8_t want;
    shoal_epoch_t epoch;
    //  What the application was told. A task is held from its START until
    //  the application has no more of it: at once after the STOP of a task
    //  that did not act, when it reports stopped after the STOP of one that
    //  did. A wanted task that is not held waits for room (SHOAL_TASKS_MAX).
    bool held;
    bool gone;    //  dropped in this input; removed at the next
    uint8_t told; //  the role the application runs it in (none while stopped)
    uint8_t state;
    shoal_epoch_t told_epoch;
    uint64_t lag;
    uint32_t failures;   //  in a row
    bool ran;            //  reported running since its start,
    uint64_t running_ms; //  first then
    uint64_t restart_ms; //  when a failed task starts again; S_NEVER if not
    size_t list_index;   //  its entry in the list, while held
    //  How its process exited, as the application last said
    //  (shoal_tasks_exit): exits in a row, the last one, why in words.
    uint32_t exits;
    uint32_t last_exit;
    char error[SHOAL_REASON_MAX + 1];
} s_task_t;

typedef struct {
    uint64_t seq; //  0: an empty slot
    uint64_t sent_ms;
    shoal_id_t to;
} s_sent_t;

struct _shoal_tasks_t {
    shoal_tasks_config_t config;
    shoal_id_t id;

    s_task_t *tasks; //  sorted by name, unique
    size_t task_count;
    size_t held_count;   //  tasks the application knows of
    size_t acting_count; //  told active, and starting or running
    bool waiting;        //  a wanted task waits for room to start
    bool some_gone;      //  tasks to remove at the next input

    uint64_t term_seen;    //  the newest term of a leader or a taken ASSIGN
    shoal_epoch_t version; //  the assignment held: (term, version)

    bool has_leader;
    shoal_id_t leader;
    uint64_t leader_term;

    uint64_t lease_until_ms; //  active tasks may run before this
    bool leased;             //  as the tasks were last settled
    s_sent_t sent[S_SENT];   //  by seq % S_SENT
    uint64_t seq;            //  of the last STATUS sent
    uint64_t status_due_ms;  //  the next STATUS, while there is a leader
    uint8_t cordon;          //  the node's mark, told in every STATUS

    uint64_t restart_ms; //  the earliest restart to come
    bool restarts_moved; //  restart_ms must be found again

    //  The jobs that keep state, as the node's replica of the specs says
    //  (shoal_tasks_jobs): sorted names. A task of any other job is
    //  stateless, and never runs as a standby or learner of its own accord.
    char (*stateful)[SHOAL_NAME_MAX + 1];
    size_t stateful_count;

    //  Outputs of the last input.
    shoal_tasks_command_t *commands;
    size_t command_count;
    size_t command_capacity; //  at least task_count: a task gets one command per input
    shoal_task_status_t *list;
    size_t list_count;
    size_t list_capacity;
    bool relist; //  a task came or went, or moved in memory: rebuild the list
    bool news;   //  what STATUS reports changed: send one at once
    shoal_tasks_send_t send;
    size_t send_count;
};

static uint64_t
s_add (uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static bool
s_epoch_equal (shoal_epoch_t a, shoal_epoch_t b)
{
    return a.term == b.term && a.version == b.version;
}

//  ---------------------------------------------------------------------
//  Configuration

void
shoal_tasks_config_lan (shoal_tasks_config_t *config)
{
    //  acceptable_lag is the assignor's default (docs/assign.md): the node
    //  reports a crossing of the bound the leader decides by. The lease is
    //  2.5 times the election's (2 s): a new leader is acting about a lease
    //  after the old one's last heartbeat, and its first keep-alive must
    //  come while the nodes' leases, which run from a STATUS up to two
    //  status periods old, still hold, or every task in the cluster would
    //  stop for a failover (docs/handoff.md 3).
    *config = (shoal_tasks_config_t){
        .lease_ms = 5000, //  2.5 times the election's: a failover fits in it
        .drift_percent = 5,
        .status_ms = 1000,
        .acceptable_lag = 10000,
        .restart_backoff_ms = 1000,
        .max_restarts = 3,
        .healthy_ms = 60000,
    };
}

void
shoal_tasks_config_wan (shoal_tasks_config_t *config)
{
    shoal_tasks_config_lan (config);
    config->lease_ms *= 5;
    config->status_ms *= 5;
}

void
shoal_tasks_config_loopback (shoal_tasks_config_t *config)
{
    shoal_tasks_config_lan (config);
    config->lease_ms /= 10;
    config->status_ms /= 10;
    config->restart_backoff_ms /= 10;
    config->healthy_ms /= 10;
}

const char *
shoal_tasks_config_check (const shoal_tasks_config_t *config)
{
    if (!config)
        return "no config";
    if (config->lease_ms == 0 || config->status_ms == 0)
        return "lease_ms and status_ms must be > 0";
    //  A lease must outlast one lost STATUS, or a single drop demotes.
    if (config->lease_ms < 2 * (uint64_t) config->status_ms)
        return "lease_ms must be at least 2 status_ms";
    if (config->drift_percent >= 50)
        return "drift_percent must be under 50";
    return NULL;
}

//  ---------------------------------------------------------------------
//  The told side, and the list STATUS carries

static bool
s_acting (const s_task_t *task)
{
    return task->held && task->told == SHOAL_ROLE_ACTIVE &&
           (task->state == SHOAL_TASK_STARTING || task->state == SHOAL_TASK_RUNNING);
}

//  A task that failed with no restart to come: the node gave up on it.
static bool
s_gave_up (const s_task_t *task)
{
    return task->state == SHOAL_TASK_FAILED && task->restart_ms == S_NEVER;
}

//  A task the node gave up on is reported in role none: it runs in no role,
//  and never will again on this node until the assignment drops it. That
//  is how the leader tells it from a task that failed and will restart
//  after its backoff, which stays in its role: the first may go to another
//  node, the second not (docs/handoff.md 5.5). Role none with state failed
//  is a pair the wire already takes, so STATUS keeps its format.
static shoal_task_status_t
s_status_of (const s_task_t *task)
{
    return (shoal_task_status_t){
        .task = task->name,
        .role = s_gave_up (task) ? SHOAL_ROLE_NONE : task->told,
        .state = task->state,
        .lag = task->lag,
        .epoch = task->told_epoch,
        .restarts = task->exits,
        .last_exit = task->last_exit,
        .error = task->error,
    };
}

//  Writes the task's entry of the list, unless the list is to be rebuilt
//  anyway (its indices are then stale).
static void
s_publish (shoal_tasks_t *self, const s_task_t *task)
{
    if (task->held && !self->relist)
        self->list[task->list_index] = s_status_of (task);
}

//  The one place the told side of a held task changes, so that news and
//  the count of acting tasks follow it.
static void
s_set (shoal_tasks_t *self, s_task_t *task, uint8_t told, uint8_t state, shoal_epoch_t epoch)
{
    if (task->told == told && task->state == state && s_epoch_equal (task->told_epoch, epoch))
        return;
    self->acting_count -= s_acting (task);
    task->told = told;
    task->state = state;
    task->told_epoch = epoch;
    self->acting_count += s_acting (task);
    self->news = true;
    s_publish (self, task);
}

//  A lag the application reported for a learner or standby. Only a lag
//  that crosses acceptable_lag is news: the leader acts on that alone.
static void
s_lag (shoal_tasks_t *self, s_task_t *task, uint64_t lag)
{
    if (task->told != SHOAL_ROLE_STANDBY && task->told != SHOAL_ROLE_LEARNER)
        return;
    uint64_t bound = self->config.acceptable_lag;
    if ((task->lag <= bound) != (lag <= bound))
        self->news = true;
    task->lag = lag;
    s_publish (self, task);
}

static void
s_hold (shoal_tasks_t *self, s_task_t *task)
{
    task->held = true;
    self->held_count++;
    self->relist = true;
    self->news = true;
}

//  The application has no more of the task.
static void
s_release (shoal_tasks_t *self, s_task_t *task)
{
    self->acting_count -= s_acting (task);
    if (task->restart_ms != S_NEVER)
        self->restarts_moved = true;
    task->held = false;
    task->told = SHOAL_ROLE_NONE;
    task->state = SHOAL_TASK_STOPPED;
    task->restart_ms = S_NEVER;
    task->failures = 0;
    self->held_count--;
    self->relist = true;
    self->news = true;
}

//  Marks the task for removal at the next input.
static void
s_forget (shoal_tasks_t *self, s_task_t *task)
{
    task->gone = true;
    self->some_gone = true;
}

static void
s_command (shoal_tasks_t *self, s_task_t *task, uint8_t type, uint8_t role)
{
    //  Room for one command per task is reserved when tasks are added.
    if (self->command_count == self->command_capacity)
        return;
    self->commands[self->command_count++] = (shoal_tasks_command_t){
        .type = type,
        .task = task->name,
        .role = role,
        .epoch = task->epoch,
    };
}

//  ---------------------------------------------------------------------
//  Settling: from what the assignment and the lease want to commands

static int
s_name_compare (const void *a, const void *b)
{
    return strcmp (a, b);
}

//  Whether the task's job keeps state. A job this node does not know yet
//  (its specs may come after the assignment) counts as stateless: stopped
//  when the lease is lost, which is safe for any task.
static bool
s_keeps_state (const shoal_tasks_t *self, const s_task_t *task)
{
    const char *slash = strrchr (task->name, '/');
    size_t length = slash ? (size_t) (slash - task->name) : strlen (task->name);
    if (length > SHOAL_NAME_MAX || self->stateful_count == 0)
        return false;
    char job[SHOAL_NAME_MAX + 1];
    memcpy (job, task->name, length);
    job[length] = 0;
    return bsearch (job, self->stateful, self->stateful_count, sizeof *self->stateful,
                    s_name_compare) != NULL;
}

//  The role the application should run the task in: the assignment's,
//  but an active without a lease only as a standby, and only when its job
//  keeps state: a stateless task has no copy to keep warm, and a command
//  that does not read its role would go on working as a "standby" while
//  another node runs the task. It runs in no role until the lease is back.
static uint8_t
s_desired (const shoal_tasks_t *self, const s_task_t *task)
{
    if (task->want == SHOAL_ROLE_ACTIVE && !self->leased)
        return s_keeps_state (self, task) ? SHOAL_ROLE_STANDBY : SHOAL_ROLE_NONE;
    return task->want;
}

//  A stateless task the assignment wants active while there is no lease:
//  it waits, in no role, for the lease, and keeps its entry meanwhile.
static bool
s_held_back (const shoal_tasks_t *self, const s_task_t *task)
{
    return task->want != SHOAL_ROLE_NONE && s_desired (self, task) == SHOAL_ROLE_NONE;
}

//  STOP of a task that does not act: it goes at once (but for a task held
//  back for the lease, which waits for it).
static void
s_stop (shoal_tasks_t *self, s_task_t *task)
{
    s_command (self, task, SHOAL_TASKS_STOP, SHOAL_ROLE_NONE);
    s_release (self, task);
    if (!s_held_back (self, task))
        s_forget (self, task);
}

static void
s_start (shoal_tasks_t *self, s_task_t *task, uint8_t role)
{
    task->lag = role == SHOAL_ROLE_ACTIVE ? 0 : S_LAG_UNKNOWN;
    task->restart_ms = S_NEVER;
    task->ran = false;
    s_command (self, task, SHOAL_TASKS_START, role);
    s_set (self, task, role, SHOAL_TASK_STARTING, task->epoch);
}

//  Issues the difference between what the task should be and what the
//  application was told, if any. A task that is stopping waits for the
//  application's word; a failed one for its restart.
static void
s_settle (shoal_tasks_t *self, s_task_t *task)
{
    if (task->gone || (task->held && task->state == SHOAL_TASK_STOPPING))
        return;
    uint8_t role = s_desired (self, task);
    if (!task->held) {
        if (role == SHOAL_ROLE_NONE && !s_held_back (self, task))
            s_forget (self, task); //  never told: nothing to stop, nothing to report
        else if (role == SHOAL_ROLE_NONE)
            return; //  started when the lease comes back
        else if (self->held_count >= SHOAL_TASKS_MAX)
            self->waiting = true; //  a STATUS could not list it
        else {
            s_hold (self, task);
            task->failures = 0;
            s_start (self, task, role);
        }
        return;
    }
    if (task->state == SHOAL_TASK_FAILED) {
        //  Nothing runs: a task held back for the lease keeps its failures
        //  (and a task the node gave up on stays given up).
        if (role == SHOAL_ROLE_NONE && !s_held_back (self, task))
            s_stop (self, task);
        return;
    }
    if (role == task->told) {
        if (role == SHOAL_ROLE_ACTIVE && !s_epoch_equal (task->epoch, task->told_epoch))
            //  A new grant of the role it holds: the application fences its
            //  writes with the new epoch from now on.
            s_command (self, task, SHOAL_TASKS_PROMOTE, role);
        s_set (self, task, role, task->state, task->epoch);
    } else if (task->told == SHOAL_ROLE_ACTIVE) {
        //  It may still act until the application says it stopped; the
        //  leader reads that from the state and waits for it.
        s_command (self, task, role == SHOAL_ROLE_NONE ? SHOAL_TASKS_STOP : SHOAL_TASKS_DEMOTE,
                   role);
        task->lag = role == SHOAL_ROLE_NONE ? 0 : S_LAG_UNKNOWN;
        s_set (self, task, role, SHOAL_TASK_STOPPING, task->epoch);
    } else if (role == SHOAL_ROLE_NONE)
        s_stop (self, task);
    else if (role == SHOAL_ROLE_ACTIVE) {
        s_command (self, task, SHOAL_TASKS_PROMOTE, role);
        task->lag = 0;
        s_set (self, task, role, task->state, task->epoch);
    } else
        //  Standby and learner differ for the leader, not for the
        //  application: both keep a copy warm. No command, only the report.
        s_set (self, task, role, task->state, task->epoch);
}

static void
s_settle_all (shoal_tasks_t *self)
{
    for (size_t i = 0; i < self->task_count; i++)
        s_settle (self, &self->tasks[i]);
}

//  ---------------------------------------------------------------------
//  Time: the lease and the restarts

//  The lease runs from when this node sent the STATUS the leader echoes, so
//  it ends at most a lease after the leader last heard from the node, even
//  when the node still hears the leader. Only the node the STATUS went to
//  can echo it.
static void
s_renew (shoal_tasks_t *self, const shoal_id_t *from, uint64_t status_seq)
{
    const s_sent_t *sent = &self->sent[status_seq % S_SENT];
    if (status_seq == 0 || sent->seq != status_seq || !shoal_id_equal (&sent->to, from))
        return;
    uint64_t lease = self->config.lease_ms;
    uint64_t until = s_add (sent->sent_ms, lease - lease * self->config.drift_percent / 100);
    if (until > self->lease_until_ms)
        self->lease_until_ms = until;
}

static void
s_restart (shoal_tasks_t *self, s_task_t *task, uint64_t now)
{
    if (!task->held || task->gone || task->state != SHOAL_TASK_FAILED || task->restart_ms > now ||
        s_held_back (self, task))
        return; //  a task held back for the lease restarts when it comes back
    uint8_t role = s_desired (self, task);
    if (role == SHOAL_ROLE_NONE)
        s_settle (self, task); //  stops it, if the assignment dropped it meanwhile
    else
        s_start (self, task, role);
}

//  What the passing of time alone brings, before any input: the lease that
//  ends or comes back, and the restarts that are due.
static void
s_time (shoal_tasks_t *self, uint64_t now)
{
    bool leased = now < self->lease_until_ms;
    if (leased != self->leased) {
        self->leased = leased;
        //  Restarts held back for the lease count again, or no longer.
        self->restarts_moved = true;
        for (size_t i = 0; i < self->task_count; i++)
            if (self->tasks[i].want == SHOAL_ROLE_ACTIVE) {
                s_settle (self, &self->tasks[i]);
                s_restart (self, &self->tasks[i], now);
            }
    }
    if (self->restart_ms <= now) {
        self->restarts_moved = true;
        for (size_t i = 0; i < self->task_count; i++)
            s_restart (self, &self->tasks[i], now);
    }
}

//  ---------------------------------------------------------------------
//  Inputs

static void
s_begin (shoal_tasks_t *self)
{
    self->command_count = 0;
    self->send_count = 0;
    self->news = false;
    if (self->some_gone) {
        size_t kept = 0;
        for (size_t i = 0; i < self->task_count; i++)
            if (!self->tasks[i].gone)
                self->tasks[kept++] = self->tasks[i];
        self->task_count = kept;
        self->some_gone = false;
        self->relist = true;
    }
}

static void
s_status (shoal_tasks_t *self, uint64_t now)
{
    self->seq++;
    self->sent[self->seq % S_SENT] = (s_sent_t){ self->seq, now, self->leader };
    self->send.to = self->leader;
    self->send.msg.type = SHOAL_MSG_STATUS;
    self->send.msg.u.status = (shoal_status_t){
        .term = self->version.term, //  (term, applied_version) names the assignment
        .applied_version = self->version.version,
        .task_count = (uint32_t) self->list_count,
        .tasks = self->list_count ? self->list : NULL,
        .seq = self->seq,
        .cordon = self->cordon,
    };
    self->send_count = 1;
    self->status_due_ms = s_add (now, self->config.status_ms);
}

//  Starts what waited for room, rebuilds what moved, and sends a STATUS on
//  news or when one is due.
static void
s_finish (shoal_tasks_t *self, uint64_t now)
{
    if (self->waiting && self->held_count < SHOAL_TASKS_MAX) {
        self->waiting = false;
        for (size_t i = 0; i < self->task_count; i++)
            if (!self->tasks[i].held)
                s_settle (self, &self->tasks[i]);
    }
    if (self->relist) {
        self->list_count = 0;
        for (size_t i = 0; i < self->task_count; i++) {
            s_task_t *task = &self->tasks[i];
            if (task->held) {
                task->list_index = self->list_count;
                self->list[self->list_count++] = s_status_of (task);
            }
        }
        self->relist = false;
    }
    if (self->restarts_moved) {
        self->restart_ms = S_NEVER;
        for (size_t i = 0; i < self->task_count; i++) {
            const s_task_t *task = &self->tasks[i];
            if (task->held && task->restart_ms < self->restart_ms && !s_held_back (self, task))
                self->restart_ms = task->restart_ms;
        }
        self->restarts_moved = false;
    }
    if (self->has_leader && (self->news || now >= self->status_due_ms))
        s_status (self, now);
}

shoal_tasks_t *
shoal_tasks_new (const shoal_tasks_config_t *config, const shoal_id_t *id, uint64_t now_ms)
{
    (void) now_ms; //  nothing runs, nothing is due, before the first input
    if (shoal_tasks_config_check (config) || !id)
        return NULL;
    shoal_tasks_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->config = *config;
    self->id = *id;
    self->restart_ms = S_NEVER;
    self->status_due_ms = S_NEVER;
    return self;
}

void
shoal_tasks_destroy (shoal_tasks_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    shoal_tasks_t *self = *self_p;
    free (self->tasks);
    free (self->commands);
    free (self->list);
    free (self->stateful);
    free (self);
    *self_p = NULL;
}

void
shoal_tasks_leader (shoal_tasks_t *self, uint64_t now_ms, const shoal_id_t *leader, uint64_t term)
{
    static const shoal_id_t nobody;
    s_begin (self);
    s_time (self, now_ms);
    bool has = leader && !shoal_id_equal (leader, &nobody);
    if (has && (!self->has_leader || !shoal_id_equal (leader, &self->leader) ||
                term != self->leader_term)) {
        //  A new leader knows nothing of this node yet.
        self->leader = *leader;
        self->leader_term = term;
        self->news = true;
        if (term > self->term_seen)
            self->term_seen = term;
    }
    self->has_leader = has;
    s_finish (self, now_ms);
}

int
shoal_tasks_jobs (shoal_tasks_t *self, uint64_t now_ms, const shoal_jobspec_t *specs, size_t count)
{
    s_begin (self);
    s_time (self, now_ms);
    int rc = 0;
    size_t stateful = 0;
    for (size_t i = 0; i < count; i++)
        stateful += specs[i].stateful && specs[i].name;
    char (*names)[SHOAL_NAME_MAX + 1] = stateful ? calloc (stateful, sizeof *names) : NULL;
    if (stateful && !names)
        rc = -1; //  the jobs known before stay
    else {
        size_t at = 0;
        for (size_t i = 0; i < count; i++)
            if (specs[i].stateful && specs[i].name)
                snprintf (names[at++], sizeof *names, "%s", specs[i].name);
        if (stateful)
            qsort (names, stateful, sizeof *names, s_name_compare);
        free (self->stateful);
        self->stateful = names;
        self->stateful_count = stateful;
        //  Only a task without a lease runs in a role that depends on it.
        if (!self->leased)
            for (size_t i = 0; i < self->task_count; i++)
                if (self->tasks[i].want == SHOAL_ROLE_ACTIVE) {
                    s_settle (self, &self->tasks[i]);
                    s_restart (self, &self->tasks[i], now_ms);
                }
        self->restarts_moved = true;
    }
    s_finish (self, now_ms);
    return rc;
}

//  ---------------------------------------------------------------------
//  ASSIGN

static int
s_placement_compare (const void *a, const void *b)
{
    const shoal_placement_t *x = *(const shoal_placement_t *const *) a;
    const shoal_placement_t *y = *(const shoal_placement_t *const *) b;
    return strcmp (x->task, y->task);
}

//  Grows an array to hold at least count items. Returns 0, or -1 (the
//  array unchanged) when memory is short.
static int
s_reserve (void **array, size_t *capacity, size_t count, size_t item_size)
{
    if (count <= *capacity)
        return 0;
    if (count > SIZE_MAX / item_size)
        return -1;
    void *grown = realloc (*array, count * item_size);
    if (!grown)
        return -1;
    *array = grown;
    *capacity = count;
    return 0;
}

//  The placements naming this node, sorted by task, into *mine. Returns
//  their count, or -1 when one is nonsense or repeats a task, or memory is
//  short.
static long
s_mine (const shoal_tasks_t *self, const shoal_assign_t *assign, const shoal_placement_t ***mine)
{
    *mine = NULL;
    size_t count = 0;
    for (uint32_t i = 0; i < assign->placement_count; i++)
        count += shoal_id_equal (&assign->placements[i].node, &self->id);
    if (count == 0)
        return 0;
    const shoal_placement_t **sorted = malloc (count * sizeof *sorted);
    if (!sorted)
        return -1;
    size_t at = 0;
    for (uint32_t i = 0; i < assign->placement_count; i++) {
        const shoal_placement_t *placement = &assign->placements[i];
        if (!shoal_id_equal (&placement->node, &self->id))
            continue;
        if (!placement->task || strnlen (placement->task, SHOAL_TASK_MAX + 1) > SHOAL_TASK_MAX ||
            placement->role > SHOAL_ROLE_LEARNER) {
            free (sorted);
            return -1;
        }
        sorted[at++] = placement;
    }
    qsort (sorted, count, sizeof *sorted, s_placement_compare);
    for (size_t i = 1; i < count; i++)
        if (strcmp (sorted[i - 1]->task, sorted[i]->task) == 0) {
            free (sorted);
            return -1;
        }
    *mine = sorted;
    return (long) count;
}

//  Merges the sorted placements into a new task array: a placement sets
//  the role and epoch a task is wanted in (role none: not wanted); a
//  snapshot leaves every task it does not name unwanted. Tasks that are
//  neither wanted nor held are left out. Returns 0, or -1 (nothing
//  changed) when memory is short.
static int
s_merge (shoal_tasks_t *self, const shoal_placement_t **mine, size_t count, bool snapshot)
{
    size_t most = self->task_count + count;
    if (s_reserve ((void **) &self->commands, &self->command_capacity, most,
                   sizeof *self->commands) ||
        s_reserve ((void **) &self->list, &self->list_capacity, most, sizeof *self->list))
        return -1;
    s_task_t *merged = malloc ((most ? most : 1) * sizeof *merged);
    if (!merged)
        return -1;
    size_t kept = 0, old = 0, placed = 0;
    while (old < self->task_count || placed < count) {
        int order = old == self->task_count ? 1
                    : placed == count       ? -1
                                            : strcmp (self->tasks[old].name, mine[placed]->task);
        s_task_t task;
        if (order <= 0) {
            task = self->tasks[old++];
            if (order < 0 && snapshot)
                task.want = SHOAL_ROLE_NONE;
        } else
            task = (s_task_t){ .want = SHOAL_ROLE_NONE,
                               .told = SHOAL_ROLE_NONE,
                               .state = SHOAL_TASK_STOPPED,
                               .lag = S_LAG_UNKNOWN,
                               .restart_ms = S_NEVER };
        if (order >= 0) {
            const shoal_placement_t *placement = mine[placed++];
            if (order > 0)
                strcpy (task.name, placement->task); //  checked: at most SHOAL_TASK_MAX bytes
            task.want = placement->role;
            if (placement->role != SHOAL_ROLE_NONE)
                task.epoch = placement->epoch;
        }
        if (task.want != SHOAL_ROLE_NONE || task.held)
            merged[kept++] = task;
    }
    free (self->tasks);
    self->tasks = merged;
    self->task_count = kept;
    self->relist = true;
    return 0;
}

//  Takes an ASSIGN in, without a command yet. Returns 1 when it brought an
//  assignment, 0 for a keep-alive, -1 when it was dropped.
static int
s_take (shoal_tasks_t *self, uint64_t now, const shoal_id_t *from, const shoal_assign_t *assign)
{
    if (assign->term < self->term_seen || (assign->placement_count && !assign->placements))
        return -1;
    bool keep_alive = !assign->snapshot && assign->placement_count == 0 &&
                      assign->base_version == assign->version;
    if (keep_alive) {
        //  A leader in office keeps the lease of the assignment it sent. A
        //  new leader sends keep-alives before its first snapshot, so that
        //  the tasks that ran under the old one run on meanwhile
        //  (docs/handoff.md 5.1); the assignment stays the old leader's.
        bool current =
            assign->term == self->version.term && assign->version == self->version.version;
        if (!current && assign->term <= self->version.term)
            return -1;
        if (!current && now >= self->lease_until_ms) {
            //  But a lease that lapsed does not come back on the word of a
            //  leader that has not said what this node may run: while it had
            //  no lease, the old leader may have given its actives to others.
            if (assign->term > self->term_seen)
                self->term_seen = assign->term;
            return 0;
        }
    } else if (assign->snapshot) {
        //  A snapshot of the same term older than the one held is a late
        //  one; a newer term's replaces whatever came before.
        if (assign->base_version != 0 ||
            (assign->term == self->version.term && assign->version < self->version.version))
            return -1;
    } else if (assign->term != self->version.term ||
               assign->base_version != self->version.version ||
               assign->version <= assign->base_version)
        return -1;

    if (!keep_alive) {
        const shoal_placement_t **mine;
        long count = s_mine (self, assign, &mine);
        int rc = count < 0 ? -1 : s_merge (self, mine, (size_t) count, assign->snapshot);
        free (mine);
        if (rc)
            return -1;
        //  STATUS reports the version, not the term it came with.
        if (assign->version != self->version.version)
            self->news = true;
        self->version = (shoal_epoch_t){ assign->term, assign->version };
    }
    if (assign->term > self->term_seen)
        self->term_seen = assign->term;
    s_renew (self, from, assign->status_seq);
    return keep_alive ? 0 : 1;
}

int
shoal_tasks_assign (shoal_tasks_t *self, uint64_t now_ms, const shoal_id_t *from,
                    const shoal_assign_t *assign)
{
    s_begin (self);
    //  Taken before the time is: a lease this ASSIGN renews does not lapse.
    int rc = from && assign ? s_take (self, now_ms, from, assign) : -1;
    s_time (self, now_ms);
    if (rc == 1)
        s_settle_all (self);
    s_finish (self, now_ms);
    return rc < 0 ? -1 : 0;
}

//  ---------------------------------------------------------------------
//  Reports

static int
s_task_name_order (const void *task, const void *name)
{
    return strcmp (((const s_task_t *) task)->name, name);
}

static s_task_t *
s_find (shoal_tasks_t *self, const char *name)
{
    size_t at = shoal_lower_bound (self->tasks, self->task_count, sizeof *self->tasks, name,
                                   s_task_name_order);
    return at < self->task_count && strcmp (self->tasks[at].name, name) == 0 ? &self->tasks[at]
                                                                             : NULL;
}

static void
s_failed (shoal_tasks_t *self, s_task_t *task, uint64_t now)
{
    //  A run that lasted ends the count: this failure is the first again.
    if (task->ran && now >= task->running_ms && now - task->running_ms >= self->config.healthy_ms)
        task->failures = 0;
    task->ran = false;
    if (task->failures < UINT32_MAX)
        task->failures++;
    //  Restarts double their wait: 1, 2, 4... times restart_backoff_ms.
    uint32_t shift = task->failures - 1;
    uint64_t backoff = shift < 32 ? (uint64_t) self->config.restart_backoff_ms << shift : S_NEVER;
    task->restart_ms = task->failures <= self->config.max_restarts ? s_add (now, backoff) : S_NEVER;
    self->restarts_moved = true;
    s_set (self, task, task->told, SHOAL_TASK_FAILED, task->told_epoch);
    //  A task the assignment dropped while it was stopping goes now.
    s_settle (self, task);
}

//  The application confirmed the stop that a STOP or DEMOTE of an active
//  asked for. A demoted task runs on in its new role.
static void
s_stopped (shoal_tasks_t *self, s_task_t *task, uint64_t lag)
{
    if (task->told == SHOAL_ROLE_NONE)
        s_release (self, task);
    else {
        s_set (self, task, task->told, SHOAL_TASK_RUNNING, task->told_epoch);
        s_lag (self, task, lag);
    }
    //  The assignment or the lease may want more of it by now.
    s_settle (self, task);
}

static int
s_report (shoal_tasks_t *self, s_task_t *task, uint64_t now, uint8_t state, uint64_t lag)
{
    if (task->state == SHOAL_TASK_FAILED)
        return -1; //  nothing runs until the restart
    switch (state) {
    case SHOAL_TASK_RUNNING:
        if (task->state == SHOAL_TASK_STARTING) {
            task->ran = true;
            task->running_ms = now;
            s_set (self, task, task->told, SHOAL_TASK_RUNNING, task->told_epoch);
        }
        s_lag (self, task, lag);
        return 0;
    case SHOAL_TASK_STOPPED:
        if (task->state == SHOAL_TASK_STOPPING)
            s_stopped (self, task, lag);
        else
            s_failed (self, task, now); //  it stopped unasked
        return 0;
    case SHOAL_TASK_FAILED:
        if (task->state == SHOAL_TASK_STOPPING && task->told == SHOAL_ROLE_NONE)
            s_stopped (self, task, lag); //  it no longer runs: the stop is done
        else
            s_failed (self, task, now);
        return 0;
    default:
        return -1;
    }
}

int
shoal_tasks_report (shoal_tasks_t *self, uint64_t now_ms, const char *task, uint8_t state,
                    uint64_t lag)
{
    s_begin (self);
    s_time (self, now_ms);
    s_task_t *held = task ? s_find (self, task) : NULL;
    int rc = held && held->held && !held->gone ? s_report (self, held, now_ms, state, lag) : -1;
    s_finish (self, now_ms);
    return rc;
}

bool
shoal_task_held (const shoal_task_status_t *task)
{
    return task->role != SHOAL_ROLE_NONE || task->state == SHOAL_TASK_STOPPING;
}

int
shoal_tasks_cordon (shoal_tasks_t *self, uint64_t now_ms, uint8_t cordon)
{
    if (cordon > SHOAL_CORDON_MAX)
        return -1;
    s_begin (self);
    s_time (self, now_ms);
    self->news |= cordon != self->cordon;
    self->cordon = cordon;
    s_finish (self, now_ms);
    return 0;
}

int
shoal_tasks_exit (shoal_tasks_t *self, uint64_t now_ms, const char *task, uint32_t exits,
                  uint32_t last_exit, const char *error)
{
    s_begin (self);
    s_time (self, now_ms);
    s_task_t *held = task ? s_find (self, task) : NULL;
    int rc = -1;
    //  Cut at a character's start, so that what STATUS carries is text.
    size_t size = error ? strnlen (error, SHOAL_REASON_MAX + 1) : 0;
    if (size > SHOAL_REASON_MAX)
        for (size = SHOAL_REASON_MAX; size && (error[size] & 0xc0) == 0x80; size--)
            ;
    if (held && held->held && !held->gone && last_exit <= SHOAL_EXIT_MAX &&
        shoal_text_valid ((const uint8_t *) (error ? error : ""), size)) {
        char text[sizeof held->error];
        memcpy (text, error ? error : "", size);
        text[size] = 0;
        if (held->exits != exits || held->last_exit != last_exit || strcmp (held->error, text)) {
            held->exits = exits;
            held->last_exit = last_exit;
            memcpy (held->error, text, size + 1);
            self->news = true;
            s_publish (self, held);
        }
        rc = 0;
    }
    s_finish (self, now_ms);
    return rc;
}

void
shoal_tasks_tick (shoal_tasks_t *self, uint64_t now_ms)
{
    s_begin (self);
    s_time (self, now_ms);
    s_finish (self, now_ms);
}

//  ---------------------------------------------------------------------
//  Outputs and queries

size_t
shoal_tasks_commands (const shoal_tasks_t *self, const shoal_tasks_command_t **commands)
{
    *commands = self->commands;
    return self->command_count;
}

size_t
shoal_tasks_outbox (const shoal_tasks_t *self, const shoal_tasks_send_t **sends)
{
    *sends = &self->send;
    return self->send_count;
}

uint64_t
shoal_tasks_next (const shoal_tasks_t *self)
{
    uint64_t next = self->has_leader ? self->status_due_ms : S_NEVER;
    if (self->leased && self->acting_count && self->lease_until_ms < next)
        next = self->lease_until_ms;
    if (self->restart_ms < next)
        next = self->restart_ms;
    return next;
}

size_t
shoal_tasks_list (const shoal_tasks_t *self, const shoal_task_status_t **tasks)
{
    *tasks = self->list;
    return self->list_count;
}

bool
shoal_tasks_leased (const shoal_tasks_t *self, uint64_t now_ms)
{
    return now_ms < self->lease_until_ms;
}

uint64_t
shoal_tasks_lease_end (const shoal_tasks_t *self)
{
    return self->lease_until_ms;
}

shoal_epoch_t
shoal_tasks_version (const shoal_tasks_t *self)
{
    return self->version;
}

//  ---------------------------------------------------------------------
//  Invariants (debug)

#ifndef SHOAL_NO_CHECKS

static int
s_check_counts (const shoal_tasks_t *self, const char **reason)
{
    size_t held = 0, acting = 0;
    for (size_t i = 0; i < self->task_count; i++) {
        held += self->tasks[i].held;
        acting += s_acting (&self->tasks[i]);
    }
    if (held != self->held_count)
        return shoal_check_broken (reason, "tasks: held_count is not the tasks held");
    if (acting != self->acting_count)
        return shoal_check_broken (reason, "tasks: acting_count is not the tasks acting");
    if (held > SHOAL_TASKS_MAX)
        return shoal_check_broken (reason, "tasks: more than SHOAL_TASKS_MAX held");
    return 0;
}

int
shoal_tasks_check (const shoal_tasks_t *self, const char **reason)
{
    if (!self)
        return shoal_check_broken (reason, "tasks: NULL");
    for (size_t i = 1; i < self->task_count; i++)
        if (strcmp (self->tasks[i - 1].name, self->tasks[i].name) >= 0)
            return shoal_check_broken (reason, "tasks: not sorted by name, or repeated");
    for (size_t i = 1; i < self->stateful_count; i++)
        if (strcmp (self->stateful[i - 1], self->stateful[i]) >= 0)
            return shoal_check_broken (reason, "tasks: stateful jobs not sorted, or repeated");
    if (self->version.term > self->term_seen)
        return shoal_check_broken (reason,
                                   "tasks: the assignment held is of a term above the newest seen");
    if (self->command_count > self->command_capacity || self->list_count > self->list_capacity)
        return shoal_check_broken (reason, "tasks: more outputs than room");
    return s_check_counts (self, reason);
}

#else

int
shoal_tasks_check (const shoal_tasks_t *self, const char **reason)
{
    (void) self;
    (void) reason;
    return 0;
}

#endif

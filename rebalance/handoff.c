/*  rebalance/handoff.c: the leader's assignment log and handoff of
    handoff.h. docs/handoff.md section 5 describes the protocol.

    The leader keeps the members (with a copy of what the assignor needs of
    their meta, and their last STATUS), the tasks, the assignment it
    published last (placements sorted by task, then node), and the claims:
    (task, node) pairs where the node may still run the task as active
    although the published assignment no longer says so. A task is granted
    active to a node only when no other node claims it.

    It also keeps the (task, node) pairs to avoid: the node gave up on the
    task after it failed there too often (its STATUS lists it in role none,
    state failed, which a node in its backoff never does), so the assignor
    places the task elsewhere. The leader infers nothing from time or from
    counting failures: only the node knows whether a restart is to come,
    and it says so. Its task then moves as any other does, in two steps.
*/

#include "rebalance/handoff.h"
#include "wire/check.h"
#include "wire/ids.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

//  An id as the assignor names nodes: 32 hex digits.
#define S_NAME_SIZE SHOAL_ID_TEXT

typedef struct {
    char *task;
    uint8_t role;
    uint8_t state;
    uint64_t lag;
    shoal_epoch_t epoch;
    uint32_t restarts;
    uint32_t last_exit;
    char *error; //  NULL for none
} s_report_t;

typedef struct {
    shoal_id_t id;
    char name[S_NAME_SIZE];
    bool live;
    bool dead;    //  the view declared it dead (not a leave): fenced tasks move at once
    bool suspect; //  live, but the view suspects it: not waited for in office
    bool has_meta;
    uint32_t capacity;
    uint32_t slots;
    uint32_t label_count;
    shoal_label_t *labels; //  owned, with their strings
    uint32_t handle_count;
    char **handles;    //  owned
    uint8_t cordon;    //  shoal_cordon_t
    bool cordon_told;  //  a STATUS of this life told cordon: the meta's is older
    uint64_t heard_ms; //  the last STATUS, 0 when none since this leader took office
    uint64_t seq;      //  its seq
    shoal_epoch_t applied;
    s_report_t *reports; //  sorted by task
    size_t report_count;
    uint64_t life;                      //  its meta's: a new life runs nothing of the old
    uint64_t life_ms;                   //  when the leader learned of that life
    bool counted;                       //  the assignor counted it, at the last computation
    bool returned;                      //  counted then, not at the one before
    bool was_counted;                   //  at any computation of this life
    uint64_t keepalive_ms;              //  the next keep-alive or snapshot is due
    shoal_epoch_t applied_at_keepalive; //  applied as it was at the last one
    bool snapshot_due;                  //  this input sends it a snapshot
    bool delta_due;                     //  this input sends it the delta
    //  The newest version that changed its placements, or that a snapshot
    //  brought it to, and when; and the last version sent to it (0: none in
    //  this life). Versions that name none of its placements are never sent
    //  to it (docs/handoff.md 5.4). A version that names it while it is not
    //  addressed moves its head and not what it was sent: it is behind until
    //  a snapshot brings it up, and no keep-alive renews its lease before.
    uint64_t head;
    uint64_t head_ms;
    uint64_t sent;
} s_node_t;

typedef struct {
    char *id;
    char *job;
    bool stateful;
    bool fenced;
    uint32_t weight;
    uint32_t require_count;
    shoal_label_t *require;
} s_task_t;

//  One published placement; task and node name it.
typedef struct {
    char *task;
    shoal_id_t node;
    uint8_t role;
    shoal_epoch_t epoch;
} s_placement_t;

//  The node may run the task as active until it reports version (or a
//  later one) with the task neither active nor stopping, or until the
//  lease wait after the leader last heard from it.
typedef struct {
    char *task;
    shoal_id_t node;
    uint64_t version;
} s_claim_t;

//  A task and a node: one that gave up on it (it holds it in no role until
//  it starts a new life or leaves the view, or the task is gone), or where
//  the last computation meant the task's active to be.
typedef struct {
    char *task;
    shoal_id_t node;
    char *error;      //  gave up: the error it reported then, NULL for none
    uint64_t when_ms; //  and when
} s_pair_t;

struct _shoal_handoff_t {
    shoal_handoff_config_t config;
    uint64_t term;
    uint64_t office_ms;
    uint64_t wait_ms; //  lease x (1 + drift): docs/handoff.md 3
    bool wait_over;   //  a wait since taking office: no lease of before holds
    bool adopted;
    uint64_t version;
    uint64_t published_ms;
    bool dirty;               //  an input changed what the assignor would see
    uint64_t settle_first_ms; //  members joining or leaving: the first seen, and
    uint64_t settle_until_ms; //  no computation before this
    size_t newcomers;         //  how many joined, at the last input
    size_t departures;        //  how many left
    bool newcomers_wait;      //  this computation counts only members counted before
    uint64_t computed_ms;     //  the last computation's time
    uint64_t compute_wake_ms; //  a computation held back until then, or 0

    s_node_t *nodes; //  sorted by id; never removed
    size_t node_count;
    s_task_t *tasks; //  sorted by id
    size_t task_count;
    s_placement_t *placements; //  sorted by task, then node
    size_t placement_count;
    s_claim_t *claims;
    size_t claim_count;
    s_pair_t *avoids;
    size_t avoid_count;
    //  Where the last computation meant an active to be that is not granted
    //  yet (the first step of a move, or the wait for a lease): a stateless
    //  task withdrawn from its old node, a stateful one that warms up there
    //  as a learner meanwhile. Sorted by task, then node; owned.
    s_pair_t *targets;
    size_t target_count;
    //  The tasks that failed on every node that may hold them, as the last
    //  computation found: sorted, owned.
    char **failed;
    size_t failed_count;
    //  The tasks whose start the last computation held back, max_starting
    //  starting already: sorted, owned.
    char **queued;
    size_t queued_count;
    //  The last answer of shoal_handoff_unplaced.
    shoal_unplaced_t *unplaced;
    size_t unplaced_count;
    //  The placements replaced by the last publication: the delta sent
    //  names their tasks, so they live until the next input.
    s_placement_t *retired;
    size_t retired_count;

    //  Outputs of the last input.
    shoal_handoff_send_t *sends;
    size_t send_count;
    size_t send_capacity;
    shoal_placement_t *delta; //  the placements a delta carries
    size_t delta_count;
    shoal_placement_t *view; //  the published placements, for the query
    //  The same two sorted by node, then task: a member is sent the run
    //  that names it, not every member's placements.
    shoal_placement_t *delta_by_node;
    shoal_placement_t *view_by_node;
    bool view_by_node_stale;
    shoal_handoff_stats_t stats;
};

//  ---------------------------------------------------------------------
//  Configuration

void
shoal_handoff_config_lan (shoal_handoff_config_t *config)
{
    *config = (shoal_handoff_config_t){
        .lease_ms = 5000, //  2.5 times the election's: a failover fits in it
        .drift_percent = 5,
        .status_ms = 1000,
        .join_settle_ms = 2000,
        .leave_settle_ms = 500, //  a little over two gossip rounds
        .compute_ms = 100,
        .assign = { .standbys = 0, .max_warmups = 2, .acceptable_lag = 10000, .spread_by = NULL },
    };
}

//  The LAN's times, each times mul and then divided by div: every profile
//  scales the same ones.
static void
s_config_scaled (shoal_handoff_config_t *config, uint32_t mul, uint32_t div)
{
    shoal_handoff_config_lan (config);
    uint32_t *times[] = { &config->lease_ms, &config->status_ms, &config->join_settle_ms,
                          &config->leave_settle_ms, &config->compute_ms };
    for (size_t i = 0; i < sizeof times / sizeof times[0]; i++)
        *times[i] = *times[i] * mul / div;
}

void
shoal_handoff_config_wan (shoal_handoff_config_t *config)
{
    s_config_scaled (config, 5, 1);
}

void
shoal_handoff_config_loopback (shoal_handoff_config_t *config)
{
    s_config_scaled (config, 1, 10);
}

const char *
shoal_handoff_config_check (const shoal_handoff_config_t *config)
{
    if (!config)
        return "no config";
    if (config->status_ms == 0 || config->lease_ms < 2 * config->status_ms)
        return "status_ms must be > 0 and lease_ms at least 2 status_ms";
    if (config->drift_percent >= 50)
        return "drift_percent must be under 50";
    return NULL;
}

//  ---------------------------------------------------------------------
//  Small things

static int
s_epoch_compare (shoal_epoch_t a, shoal_epoch_t b)
{
    if (a.term != b.term)
        return a.term < b.term ? -1 : 1;
    return a.version < b.version ? -1 : a.version > b.version ? 1 : 0;
}

_Static_assert(offsetof (s_node_t, id) == 0, "a node begins with its id");

//  The index of id in the node table, or where it would go (found false).
static size_t
s_node_index (const shoal_handoff_t *self, const shoal_id_t *id, bool *found)
{
    size_t at =
        shoal_lower_bound (self->nodes, self->node_count, sizeof *self->nodes, id, shoal_id_order);
    *found = at < self->node_count && shoal_id_equal (&self->nodes[at].id, id);
    return at;
}

static s_node_t *
s_node (const shoal_handoff_t *self, const shoal_id_t *id)
{
    bool found;
    size_t at = s_node_index (self, id, &found);
    return found ? &self->nodes[at] : NULL;
}

//  A member the leader sends its assignment to: one it heard from, live in
//  the view, or gone from it (left, or dead as far as the view knows) but
//  heard from within a lease: a member that leaves gracefully hands its
//  tasks over before it goes, so it must hear of the revocations.
static bool
s_addressed (const shoal_handoff_t *self, const s_node_t *node, uint64_t now)
{
    return node->heard_ms && (node->live || now < node->heard_ms + self->config.lease_ms);
}

//  Orders records that begin with their name (a char *), as reports and
//  tasks do; a key is a pointer to the name.
static int
s_name_compare (const void *a, const void *b)
{
    return strcmp (*(const char *const *) a, *(const char *const *) b);
}

//  The record named name in a sorted array of count records of size bytes.
static const void *
s_named_record (const void *records, size_t count, size_t size, const char *name)
{
    return count ? bsearch (&name, records, count, size, s_name_compare) : NULL;
}

static const s_report_t *
s_report (const s_node_t *node, const char *task)
{
    return s_named_record (node->reports, node->report_count, sizeof *node->reports, task);
}

static const s_task_t *
s_task (const shoal_handoff_t *self, const char *id)
{
    return s_named_record (self->tasks, self->task_count, sizeof *self->tasks, id);
}

static bool
s_fenced (const shoal_handoff_t *self, const char *id)
{
    const s_task_t *task = s_task (self, id);
    return task && task->fenced;
}

static void
s_labels_free (shoal_label_t *labels, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++) {
        free ((char *) labels[i].key);
        free ((char *) labels[i].value);
    }
    free (labels);
}

//  A deep copy of count labels; -1 when memory is short.
static int
s_labels_copy (const shoal_label_t *from, uint32_t count, shoal_label_t **to)
{
    *to = NULL;
    if (count == 0)
        return 0;
    shoal_label_t *labels = calloc (count, sizeof *labels);
    if (!labels)
        return -1;
    for (uint32_t i = 0; i < count; i++) {
        labels[i].key = strdup (from[i].key ? from[i].key : "");
        labels[i].value = strdup (from[i].value ? from[i].value : "");
        if (!labels[i].key || !labels[i].value) {
            s_labels_free (labels, count);
            return -1;
        }
    }
    *to = labels;
    return 0;
}

static void
s_reports_free (s_node_t *node)
{
    for (size_t i = 0; i < node->report_count; i++) {
        free (node->reports[i].task);
        free (node->reports[i].error);
    }
    free (node->reports);
    node->reports = NULL;
    node->report_count = 0;
}

static void
s_meta_free (s_node_t *node)
{
    s_labels_free (node->labels, node->label_count);
    for (uint32_t i = 0; i < node->handle_count; i++)
        free (node->handles[i]);
    free (node->handles);
    node->labels = NULL;
    node->handles = NULL;
    node->label_count = node->handle_count = 0;
    if (!node->cordon_told)
        node->cordon = SHOAL_CORDON_NONE;
    node->has_meta = false;
}

static void
s_tasks_free (s_task_t *tasks, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        free (tasks[i].id);
        free (tasks[i].job);
        s_labels_free (tasks[i].require, tasks[i].require_count);
    }
    free (tasks);
}

static void
s_placements_free (s_placement_t *placements, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free (placements[i].task);
    free (placements);
}

static void
s_pairs_free (s_pair_t *pairs, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        free (pairs[i].task);
        free (pairs[i].error);
    }
    free (pairs);
}

static void
s_claims_free (s_claim_t *claims, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free (claims[i].task);
    free (claims);
}

static void
s_names_free (char **names, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free (names[i]);
    free (names);
}

static int
s_placement_compare (const void *a, const void *b)
{
    const s_placement_t *x = a, *y = b;
    int order = strcmp (x->task, y->task);
    return order ? order : shoal_id_compare (&x->node, &y->node);
}

static int
s_pair_compare (const void *a, const void *b)
{
    const s_pair_t *x = a, *y = b;
    int order = strcmp (x->task, y->task);
    return order ? order : shoal_id_compare (&x->node, &y->node);
}

//  ---------------------------------------------------------------------
//  Outputs

static shoal_handoff_send_t *
s_send (shoal_handoff_t *self, const s_node_t *node)
{
    if (self->send_count == self->send_capacity) {
        size_t capacity = self->send_capacity ? 2 * self->send_capacity : 16;
        shoal_handoff_send_t *sends = realloc (self->sends, capacity * sizeof *sends);
        if (!sends)
            return NULL;
        self->sends = sends;
        self->send_capacity = capacity;
    }
    shoal_handoff_send_t *send = &self->sends[self->send_count++];
    *send = (shoal_handoff_send_t){ .to = node->id, .msg = { .type = SHOAL_MSG_ASSIGN } };
    send->msg.u.assign = (shoal_assign_t){
        .term = self->term,
        .version = self->version,
        .base_version = self->version,
        .status_seq = node->seq,
    };
    return send;
}

static void
s_keepalive (shoal_handoff_t *self, s_node_t *node, uint64_t version)
{
    shoal_handoff_send_t *send = s_send (self, node);
    if (send)
        send->msg.u.assign.version = send->msg.u.assign.base_version = version;
}

//  Room in self->view for count wire placements. -1 when memory is short:
//  the caller then publishes nothing, so the view never lags the count.
static int
s_view_reserve (shoal_handoff_t *self, size_t count)
{
    shoal_placement_t *view = realloc (self->view, (count ? count : 1) * sizeof *view);
    if (!view)
        return -1;
    self->view = view;
    view = realloc (self->view_by_node, (count ? count : 1) * sizeof *view);
    if (!view)
        return -1;
    self->view_by_node = view;
    return 0;
}

//  The published placements as wire placements, in self->view (reserved).
static void
s_view_fill (shoal_handoff_t *self)
{
    for (size_t i = 0; i < self->placement_count; i++) {
        const s_placement_t *p = &self->placements[i];
        self->view[i] = (shoal_placement_t){ p->task, p->node, p->role, p->epoch };
    }
    self->view_by_node_stale = true;
}

static int
s_by_node_compare (const void *a, const void *b)
{
    const shoal_placement_t *x = a, *y = b;
    int order = shoal_id_compare (&x->node, &y->node);
    return order ? order : strcmp (x->task, y->task);
}

static int
s_node_order (const void *element, const void *key)
{
    return shoal_id_compare (&((const shoal_placement_t *) element)->node, key);
}

//  The run of list (count, sorted by node) that names node, in *run.
static uint32_t
s_run (shoal_placement_t *list, size_t count, const shoal_id_t *node, shoal_placement_t **run)
{
    size_t at = shoal_lower_bound (list, count, sizeof *list, node, s_node_order);
    size_t end = at;
    while (end < count && shoal_id_equal (&list[end].node, node))
        end++;
    *run = list + at;
    return (uint32_t) (end - at);
}

//  ---------------------------------------------------------------------
//  Claims

//  Since when the leader may have heard nothing from node: its last STATUS,
//  but no earlier than the leader took office, nor than it learned of the
//  node's life. A restarted node's STATUS may come before the view shows
//  its new life, so the leader may have heard from that life, and granted
//  it tasks, before it forgot what it heard (shoal_handoff_member).
static uint64_t
s_silent_since (const shoal_handoff_t *self, const s_node_t *node)
{
    uint64_t since = node->heard_ms > self->office_ms ? node->heard_ms : self->office_ms;
    return node->life_ms > since ? node->life_ms : since;
}

//  True when node (NULL: unknown) has surely stopped every active task by
//  now: its lease ended, as the leader counts it.
static bool
s_lease_over (const shoal_handoff_t *self, const s_node_t *node, uint64_t now)
{
    return !node || now >= s_silent_since (self, node) + self->wait_ms;
}

//  True when node (NULL: unknown) may be counted out of running task's
//  active: its lease is over, or the task is fenced and the view declared
//  node dead. A fenced task's sink refuses the writes of an older epoch, so
//  a dead member that is in fact alive behind a cut cannot land a write
//  once the new owner has written (docs/handoff.md, "Fenced jobs").
static bool
s_stopped (const shoal_handoff_t *self, const char *task, const s_node_t *node, uint64_t now)
{
    if (s_lease_over (self, node, now))
        return true;
    return node->dead && s_fenced (self, task);
}

static bool
s_claim_held (const shoal_handoff_t *self, const s_claim_t *claim, uint64_t now)
{
    const s_node_t *node = s_node (self, &claim->node);
    if (s_stopped (self, claim->task, node, now))
        return false;
    if (node->heard_ms == 0 || node->applied.term != self->term ||
        node->applied.version < claim->version)
        return true;
    const s_report_t *report = s_report (node, claim->task);
    return report && (report->role == SHOAL_ROLE_ACTIVE || report->state == SHOAL_TASK_STOPPING);
}

//  Drops the claims that no longer hold. Returns true when one was dropped.
static bool
s_claims_review (shoal_handoff_t *self, uint64_t now)
{
    size_t kept = 0;
    for (size_t i = 0; i < self->claim_count; i++) {
        if (s_claim_held (self, &self->claims[i], now))
            self->claims[kept++] = self->claims[i];
        else
            free (self->claims[i].task);
    }
    bool dropped = kept < self->claim_count;
    self->claim_count = kept;
    return dropped;
}

static int
s_claim_add (shoal_handoff_t *self, const char *task, const shoal_id_t *node, uint64_t version)
{
    for (size_t i = 0; i < self->claim_count; i++)
        if (strcmp (self->claims[i].task, task) == 0 &&
            shoal_id_compare (&self->claims[i].node, node) == 0) {
            self->claims[i].version = version; //  revoked again: this version counts
            return 0;
        }
    s_claim_t *claims = realloc (self->claims, (self->claim_count + 1) * sizeof *claims);
    if (!claims)
        return -1;
    self->claims = claims;
    char *copy = strdup (task);
    if (!copy)
        return -1;
    claims[self->claim_count++] = (s_claim_t){ copy, *node, version };
    return 0;
}

//  True when node claims task.
static bool
s_claimed_by (const shoal_handoff_t *self, const char *task, const shoal_id_t *node)
{
    for (size_t i = 0; i < self->claim_count; i++)
        if (strcmp (self->claims[i].task, task) == 0 &&
            shoal_id_compare (&self->claims[i].node, node) == 0)
            return true;
    return false;
}

//  True when a node other than except (any node, when NULL) may run task
//  as active.
static bool
s_claimed (const shoal_handoff_t *self, const char *task, const shoal_id_t *except)
{
    for (size_t i = 0; i < self->claim_count; i++)
        if (strcmp (self->claims[i].task, task) == 0 &&
            (!except || shoal_id_compare (&self->claims[i].node, except) != 0))
            return true;
    return false;
}

//  True when the last computation meant node to hold task's active.
static bool
s_target (const shoal_handoff_t *self, const char *task, const shoal_id_t *node)
{
    s_pair_t key = { .task = (char *) task, .node = *node };
    return self->target_count &&
           bsearch (&key, self->targets, self->target_count, sizeof key, s_pair_compare);
}

//  True when the last computation meant some node to hold task's active.
static bool
s_targeted (const shoal_handoff_t *self, const char *task)
{
    for (size_t i = 0; i < self->target_count; i++)
        if (strcmp (self->targets[i].task, task) == 0)
            return true;
    return false;
}

//  ---------------------------------------------------------------------
//  Nodes that gave up on a task

static bool
s_avoiding (const shoal_handoff_t *self, const char *task, const shoal_id_t *node)
{
    for (size_t i = 0; i < self->avoid_count; i++)
        if (strcmp (self->avoids[i].task, task) == 0 &&
            shoal_id_compare (&self->avoids[i].node, node) == 0)
            return true;
    return false;
}

//  Keeps task off node from now on. When memory is short the pair is not
//  kept: the task stays where it is, which is safe, and the node's next
//  STATUS, which lists the task again, tries again.
static void
s_avoid (shoal_handoff_t *self, uint64_t now, const s_report_t *report, const shoal_id_t *node)
{
    if (s_avoiding (self, report->task, node))
        return;
    s_pair_t *avoids = realloc (self->avoids, (self->avoid_count + 1) * sizeof *avoids);
    if (!avoids)
        return;
    self->avoids = avoids;
    char *copy = strdup (report->task);
    if (!copy)
        return;
    //  The error is kept for shoal_handoff_unplaced, as the node's STATUS
    //  soon lists the task no more; without memory for it, none is told.
    char *error = report->error ? strdup (report->error) : NULL;
    avoids[self->avoid_count++] = (s_pair_t){ copy, *node, error, now };
    self->stats.gave_up++;
    self->dirty = true;
}

//  Drops the pairs of node (none when NULL) and those of tasks that are
//  gone: the task gets another chance there.
static void
s_avoids_prune (shoal_handoff_t *self, const shoal_id_t *node)
{
    size_t kept = 0;
    for (size_t i = 0; i < self->avoid_count; i++) {
        s_pair_t *avoid = &self->avoids[i];
        if ((node && shoal_id_compare (&avoid->node, node) == 0) || !s_task (self, avoid->task)) {
            free (avoid->task);
            free (avoid->error);
        } else
            self->avoids[kept++] = *avoid;
    }
    if (kept < self->avoid_count)
        self->dirty = true;
    self->avoid_count = kept;
}

//  The assignor's verdict: the tasks it found avoided on every node that
//  may hold them (sorted). Counts those that were not failed everywhere
//  before. When memory is short the list stays as it was.
static void
s_failed_set (shoal_handoff_t *self, const char *const *tasks, size_t count)
{
    if (count == 0 && self->failed_count == 0)
        return; //  the usual case, and nothing to allocate
    char **failed = calloc (count ? count : 1, sizeof *failed);
    if (!failed)
        return;
    for (size_t i = 0; i < count; i++)
        if (!(failed[i] = strdup (tasks[i]))) {
            s_names_free (failed, i);
            return;
        }
    for (size_t i = 0, j = 0; i < count; i++) {
        while (j < self->failed_count && strcmp (self->failed[j], failed[i]) < 0)
            j++;
        if (j == self->failed_count || strcmp (self->failed[j], failed[i]) != 0)
            self->stats.failed_everywhere++;
    }
    s_names_free (self->failed, self->failed_count);
    self->failed = failed;
    self->failed_count = count;
}

//  ---------------------------------------------------------------------
//  Publishing

//  Marks who is sent the delta of count placements just published: the
//  members it names, and no other (a member's version says what it runs,
//  and a version that names none of its placements changes nothing for
//  it: sent to all, each version cost every member a message and its
//  answer, and the leader one STATUS per member). Two versions in one input
//  (rare) go out as snapshots to those the second names or the first did:
//  one delta would not bring them from the first base to the last version.
static void
s_address_delta (shoal_handoff_t *self, uint64_t now, size_t count)
{
    bool second = self->delta_count != 0;
    self->delta_count = count;
    for (size_t n = 0; second && n < self->node_count; n++)
        if (self->nodes[n].delta_due) {
            self->nodes[n].delta_due = false;
            self->nodes[n].snapshot_due = true;
            self->nodes[n].keepalive_ms = now + self->config.status_ms;
        }
    for (size_t k = 0; k < count; k++) {
        s_node_t *node = s_node (self, &self->delta[k].node);
        if (!node || node->head == self->version)
            continue; //  named by an earlier task of this delta
        bool was_current = node->applied.term == self->term && node->applied.version == node->head;
        bool chained = node->head && node->sent == node->head; //  it was sent each one
        node->head = self->version;
        node->head_ms = now;
        if (!s_addressed (self, node, now))
            continue;
        //  The delta is the keep-alive of a member it brings up to date. One
        //  that was behind still has its keep-alive come, where a member
        //  that missed a delta is found (no further on than at the last
        //  one) and sent a snapshot. Pushed back by every delta, it never
        //  came while versions came faster than status_ms, and a member
        //  that had missed one stayed behind for minutes (random-tasks
        //  seed 5841 with submits).
        if (second || node->snapshot_due || !chained)
            node->snapshot_due = true; //  it brings this version too
        else
            node->delta_due = true;
        if (second || was_current)
            node->keepalive_ms = now + self->config.status_ms;
    }
}

//  Replaces the published placements by next (sorted the same way; taken
//  over), sends the change as a delta of version + 1 to the members it
//  names, and claims the tasks of the actives it takes away.
static void
s_publish (shoal_handoff_t *self, uint64_t now, s_placement_t *next, size_t next_count)
{
    size_t capacity = self->placement_count + next_count;
    shoal_placement_t *delta = realloc (self->delta, (capacity ? capacity : 1) * sizeof *delta);
    if (delta)
        self->delta = delta;
    shoal_placement_t *by_node =
        delta ? realloc (self->delta_by_node, (capacity ? capacity : 1) * sizeof *by_node) : NULL;
    if (!by_node) {
        s_placements_free (next, next_count);
        return;
    }
    self->delta_by_node = by_node;
    //  The delta: every (task, node) whose role or epoch changed, with role
    //  none for those gone. A merge of the two sorted lists.
    uint64_t version = self->version + 1;
    size_t count = 0, i = 0, j = 0, claims_before = self->claim_count;
    bool failed = false;
    while (i < self->placement_count || j < next_count) {
        const s_placement_t *old = i < self->placement_count ? &self->placements[i] : NULL;
        const s_placement_t *new = j < next_count ? &next[j] : NULL;
        int order = !old ? 1 : !new ? -1 : s_placement_compare (old, new);
        const s_placement_t *taken = NULL; //  an active that stops being one
        if (order < 0) {
            delta[count++] = (shoal_placement_t){ old->task, old->node, SHOAL_ROLE_NONE, { 0, 0 } };
            taken = old->role == SHOAL_ROLE_ACTIVE ? old : NULL;
            i++;
        } else if (order > 0) {
            delta[count++] = (shoal_placement_t){ new->task, new->node, new->role, new->epoch };
            j++;
        } else {
            if (old->role != new->role || s_epoch_compare (old->epoch, new->epoch) != 0) {
                delta[count++] = (shoal_placement_t){ new->task, new->node, new->role, new->epoch };
                taken =
                    old->role == SHOAL_ROLE_ACTIVE && new->role != SHOAL_ROLE_ACTIVE ? old : NULL;
            }
            i++;
            j++;
        }
        if (taken) {
            //  No claim on a node whose lease is over: it ran nothing since.
            if (!s_stopped (self, taken->task, s_node (self, &taken->node), now))
                failed |= s_claim_add (self, taken->task, &taken->node, version) != 0;
            self->stats.revokes++;
        }
    }
    if (count == 0 || failed || s_view_reserve (self, next_count) != 0) {
        //  Nothing changed; or memory ran short for a claim (publishing
        //  without it could start the task twice) or the view: the next
        //  input tries again.
        while (self->claim_count > claims_before)
            free (self->claims[--self->claim_count].task);
        s_placements_free (next, next_count);
        return;
    }
    s_placements_free (self->retired, self->retired_count);
    self->retired = self->placements;
    self->retired_count = self->placement_count;
    self->placements = next;
    self->placement_count = next_count;
    self->version = version;
    self->published_ms = now;
    self->stats.published++;
    for (size_t k = 0; k < count; k++)
        if (delta[k].role == SHOAL_ROLE_ACTIVE && delta[k].epoch.term == self->term &&
            delta[k].epoch.version == version)
            self->stats.grants++;
    s_view_fill (self);
    s_address_delta (self, now, count);
}

//  ---------------------------------------------------------------------
//  Computing

//  Appends a placement (task copied) to list. -1 when memory is short.
static int
s_place (s_placement_t **list, size_t *count, size_t *capacity, const char *task,
         const shoal_id_t *node, uint8_t role, shoal_epoch_t epoch)
{
    if (*count == *capacity) {
        size_t bigger = *capacity ? 2 * *capacity : 64;
        s_placement_t *grown = realloc (*list, bigger * sizeof *grown);
        if (!grown)
            return -1;
        *list = grown;
        *capacity = bigger;
    }
    char *copy = strdup (task);
    if (!copy)
        return -1;
    (*list)[(*count)++] = (s_placement_t){ copy, *node, role, epoch };
    return 0;
}

//  The published placement of (task, node), or NULL.
static const s_placement_t *
s_published (const shoal_handoff_t *self, const char *task, const shoal_id_t *node)
{
    s_placement_t key = { (char *) task, *node, 0, { 0, 0 } };
    return self->placement_count ? bsearch (&key, self->placements, self->placement_count,
                                            sizeof key, s_placement_compare)
                                 : NULL;
}

//  The index of the first published placement of task, or where it would
//  be: the placements of one task are adjacent.
static int
s_placement_task_order (const void *placement, const void *task)
{
    return strcmp (((const s_placement_t *) placement)->task, task);
}

static size_t
s_first_placement (const shoal_handoff_t *self, const char *task)
{
    return shoal_lower_bound (self->placements, self->placement_count, sizeof *self->placements,
                              task, s_placement_task_order);
}

static bool
s_placed (const shoal_handoff_t *self, const char *task)
{
    size_t first = s_first_placement (self, task);
    return first < self->placement_count && strcmp (self->placements[first].task, task) == 0;
}

//  True when some node other than except is the published active of task.
static bool
s_active_elsewhere (const shoal_handoff_t *self, const char *task, const shoal_id_t *except)
{
    for (size_t i = s_first_placement (self, task);
         i < self->placement_count && strcmp (self->placements[i].task, task) == 0; i++)
        if (self->placements[i].role == SHOAL_ROLE_ACTIVE &&
            shoal_id_compare (&self->placements[i].node, except) != 0)
            return true;
    return false;
}

//  The same, counting only a node that may still run it: one whose lease
//  is over has stopped it, so the task may be granted in the version that
//  takes it away (one step instead of two: a withdrawal, then a grant
//  once the claim it made has lapsed).
static bool
s_running_elsewhere (const shoal_handoff_t *self, const char *task, const shoal_id_t *except,
                     uint64_t now)
{
    for (size_t i = s_first_placement (self, task);
         i < self->placement_count && strcmp (self->placements[i].task, task) == 0; i++)
        if (self->placements[i].role == SHOAL_ROLE_ACTIVE &&
            shoal_id_compare (&self->placements[i].node, except) != 0 &&
            !s_stopped (self, task, s_node (self, &self->placements[i].node), now))
            return true;
    return false;
}

//  True when placement is a caught-up learner on a counted member where
//  the last computation meant the task's active to be: it stands in for
//  that active, held back by a claim or by the lease wait.
static bool
s_stands_in (const shoal_handoff_t *self, const s_placement_t *placement)
{
    if (placement->role != SHOAL_ROLE_LEARNER ||
        !s_target (self, placement->task, &placement->node))
        return false;
    const s_node_t *node = s_node (self, &placement->node);
    const s_report_t *report = node && node->counted ? s_report (node, placement->task) : NULL;
    return report && report->role == SHOAL_ROLE_LEARNER &&
           report->lag <= self->config.assign.acceptable_lag;
}

//  True when a member that claims task is counted at this computation and
//  was not at the last one: the plan was made without it.
static bool
s_claimer_returned (const shoal_handoff_t *self, const char *task)
{
    for (size_t i = 0; i < self->claim_count; i++) {
        const s_node_t *node = s_node (self, &self->claims[i].node);
        if (node && node->returned && strcmp (self->claims[i].task, task) == 0)
            return true;
    }
    return false;
}

//  True when some placement of task stands in for its active.
static bool
s_stand_in_for (const shoal_handoff_t *self, const char *task)
{
    for (size_t i = s_first_placement (self, task);
         i < self->placement_count && strcmp (self->placements[i].task, task) == 0; i++)
        if (s_stands_in (self, &self->placements[i]))
            return true;
    return false;
}

//  A member the assignor may place tasks on: live in the view, and heard
//  from within a lease (its own lease holds, as far as the leader knows).
static bool
s_countable (const shoal_handoff_t *self, const s_node_t *node, uint64_t now)
{
    return node->live && node->has_meta && node->heard_ms &&
           now < node->heard_ms + self->config.lease_ms;
}

//  The assignor's view of node (its strings point into node).
static shoal_assign_node_t
s_assign_node (const s_node_t *node)
{
    return (shoal_assign_node_t){
        .id = node->name,
        .capacity = node->capacity ? node->capacity : 1,
        .slots = node->slots,
        .label_count = node->label_count,
        .labels = node->labels,
        .handles_all = node->handle_count == 0,
        .handle_count = node->handle_count,
        .handles = (const char *const *) node->handles,
        .cordon = node->cordon,
    };
}

//  The assignor's view of task (its strings point into task).
static shoal_assign_task_t
s_assign_task (const s_task_t *task)
{
    return (shoal_assign_task_t){
        .id = task->id,
        .job = task->job,
        .stateful = task->stateful,
        .fenced = task->fenced,
        .weight = task->weight ? task->weight : 1,
        .require_count = task->require_count,
        .require = task->require,
    };
}

//  Allocates the arrays of *input, each for the most entries it can get.
static int
s_input_alloc (const shoal_handoff_t *self, shoal_assign_input_t *input)
{
    *input = (shoal_assign_input_t){ .config = self->config.assign };
    size_t lags = 0;
    for (size_t n = 0; n < self->node_count; n++)
        lags += self->nodes[n].report_count;
    size_t holdings = self->placement_count + self->claim_count + self->target_count;
    input->nodes = calloc (self->node_count ? self->node_count : 1, sizeof *input->nodes);
    input->tasks = calloc (self->task_count ? self->task_count : 1, sizeof *input->tasks);
    input->current = calloc (holdings ? holdings : 1, sizeof *input->current);
    input->lags = calloc (lags ? lags : 1, sizeof *input->lags);
    input->avoid = calloc (self->avoid_count ? self->avoid_count : 1, sizeof *input->avoid);
    return input->nodes && input->tasks && input->current && input->lags && input->avoid ? 0 : -1;
}

//  The members counted now (marking who is counted, and who returned), and
//  the lags of every learner and standby reported.
static void
s_input_nodes (shoal_handoff_t *self, uint64_t now, shoal_assign_input_t *input,
               shoal_assign_node_t *nodes, shoal_assign_lag_t *lag)
{
    for (size_t n = 0; n < self->node_count; n++) {
        s_node_t *node = &self->nodes[n];
        bool countable =
            s_countable (self, node, now) && !(self->newcomers_wait && !node->was_counted);
        node->returned = countable && !node->counted;
        node->counted = countable;
        node->was_counted |= node->counted;
        if (node->counted)
            nodes[input->node_count++] = s_assign_node (node);
        for (size_t r = 0; r < node->report_count; r++) {
            const s_report_t *report = &node->reports[r];
            if (report->role == SHOAL_ROLE_LEARNER || report->role == SHOAL_ROLE_STANDBY)
                lag[input->lag_count++] =
                    (shoal_assign_lag_t){ node->name, report->task, report->lag };
        }
    }
}

//  Every task, and the (counted member, task) pairs to hold in no role.
static void
s_input_tasks (const shoal_handoff_t *self, shoal_assign_input_t *input, shoal_assign_task_t *tasks,
               shoal_assign_avoid_t *avoid)
{
    for (size_t t = 0; t < self->task_count; t++)
        tasks[input->task_count++] = s_assign_task (&self->tasks[t]);
    for (size_t i = 0; i < self->avoid_count; i++) {
        const s_node_t *node = s_node (self, &self->avoids[i].node);
        if (node && node->counted)
            avoid[input->avoid_count++] =
                (shoal_assign_avoid_t){ node->name, self->avoids[i].task };
    }
}

//  The assignor is shown its own plan where a move is half done: the
//  active where the last computation meant it to be. Shown the old state
//  of some moves and the new state of others, it could find a plan that
//  differed from the last one, then, shown that one half done, the last
//  one again: two plans published in turn, each answered by every
//  member's STATUS, a storm (random-tasks seed 943 with submits).
//  - A caught-up learner that stands in for an active held back by a
//    claim or by the lease wait is shown as that active. Shown as a
//    learner beside no active, it was kept active by the assignor's
//    second pass while the first one sent the task's target from one
//    light node to another at each computation (seed 1899: 52 warm-ups
//    flipped between two nodes at one instant while a new leader waited
//    out the leases). One not caught up stays a learner: no node was
//    caught up when it was chosen, and the assignor may choose again.
//  - Otherwise, or when the old owner was not counted when the plan was
//    made, an old owner that has not confirmed its stop is still the
//    active, for the assignor to decide on it again.
static void
s_input_placed (const shoal_handoff_t *self, shoal_assign_input_t *input,
                shoal_assign_holding_t *current)
{
    const char *promoted = NULL;
    for (size_t p = 0; p < self->placement_count; p++) {
        const s_placement_t *placement = &self->placements[p];
        const s_node_t *node = s_node (self, &placement->node);
        uint8_t role = placement->role;
        bool plan =
            s_stand_in_for (self, placement->task) && !s_claimer_returned (self, placement->task);
        bool shown = role != SHOAL_ROLE_ACTIVE &&
                     (plan ? s_stands_in (self, placement)
                           : s_claimed_by (self, placement->task, &placement->node)) &&
                     !s_active_elsewhere (self, placement->task, &placement->node) &&
                     (!promoted || strcmp (promoted, placement->task) != 0);
        if (shown) {
            role = SHOAL_ROLE_ACTIVE;
            promoted = placement->task; //  one per task (placements are sorted by task)
        }
        if (node)
            current[input->current_count++] =
                (shoal_assign_holding_t){ node->name, placement->task, role };
    }
}

//  A stateless task withdrawn from its active and not granted again has
//  no placement. The assignor is shown it where the last computation
//  sent it, as above, or, when that member is not counted, or the member
//  that still claims it was not counted when the plan was made (it
//  restarted, say), on that member.
//  Shown nowhere, it would be placed afresh, maybe where it was, and the
//  next computation would move it again: withdrawn, placed back,
//  withdrawn, without end (the simulator spun so, random-tasks seed 1).
static void
s_input_withdrawn (const shoal_handoff_t *self, shoal_assign_input_t *input,
                   shoal_assign_holding_t *current)
{
    size_t shown_from = input->current_count;
    for (size_t i = 0; i < self->target_count + self->claim_count; i++) {
        bool claim = i >= self->target_count;
        const s_claim_t *holder = claim ? &self->claims[i - self->target_count] : NULL;
        const char *task = claim ? holder->task : self->targets[i].task;
        const s_node_t *node = s_node (self, claim ? &holder->node : &self->targets[i].node);
        if (!node || !node->counted || !s_task (self, task) || s_placed (self, task) ||
            (!claim && s_claimer_returned (self, task)))
            continue;
        bool shown = false;
        for (size_t c = shown_from; c < input->current_count && !shown; c++)
            shown = strcmp (current[c].task, task) == 0;
        if (!shown)
            current[input->current_count++] =
                (shoal_assign_holding_t){ node->name, task, SHOAL_ROLE_ACTIVE };
    }
}

//  The assignor's input from the members heard from, the tasks, the
//  published assignment and the reported lags. Arrays in *input are
//  allocated here; s_input_free releases them.
static int
s_input (shoal_handoff_t *self, uint64_t now, shoal_assign_input_t *input)
{
    if (s_input_alloc (self, input) != 0)
        return -1;
    //  The arrays, writable: input holds them as const.
    shoal_assign_holding_t *current = (shoal_assign_holding_t *) input->current;
    s_input_nodes (self, now, input, (shoal_assign_node_t *) input->nodes,
                   (shoal_assign_lag_t *) input->lags);
    s_input_tasks (self, input, (shoal_assign_task_t *) input->tasks,
                   (shoal_assign_avoid_t *) input->avoid);
    s_input_placed (self, input, current);
    s_input_withdrawn (self, input, current);
    return 0;
}

static void
s_input_free (shoal_assign_input_t *input)
{
    free ((void *) input->nodes);
    free ((void *) input->tasks);
    free ((void *) input->current);
    free ((void *) input->lags);
    free ((void *) input->avoid);
}

//  The node the assignor names name. Hex names sort as the ids they spell,
//  so the node table is searched by name as it is by id.
static int
s_node_name_compare (const void *name, const void *node)
{
    return strcmp (name, ((const s_node_t *) node)->name);
}

static const s_node_t *
s_named (const shoal_handoff_t *self, const char *name)
{
    return self->node_count ? bsearch (name, self->nodes, self->node_count, sizeof *self->nodes,
                                       s_node_name_compare)
                            : NULL;
}

//  True while something holds back the grant of task's active to node:
//  another node may still run it, one claims it, or, in the lease wait
//  of a new leader's office, a node of before may still hold a lease for
//  it (a fenced task's store refuses that node's writes: no wait).
static bool
s_grant_held (const shoal_handoff_t *self, const char *task, const shoal_id_t *node, uint64_t now)
{
    return s_running_elsewhere (self, task, node, now) || s_claimed (self, task, node) ||
           (!self->wait_over && !s_fenced (self, task));
}

//  How many tasks are starting: active where published, on a member the
//  assignor counts, which does not report the task yet or reports it
//  starting. A member silent for a lease is not counted, so its starts
//  hold no others back.
static uint32_t
s_starting (const shoal_handoff_t *self, uint64_t now)
{
    uint32_t count = 0;
    for (size_t i = 0; i < self->placement_count; i++) {
        const s_placement_t *placement = &self->placements[i];
        const s_node_t *node =
            placement->role == SHOAL_ROLE_ACTIVE ? s_node (self, &placement->node) : NULL;
        if (!node || !s_countable (self, node, now))
            continue;
        const s_report_t *report = s_report (node, placement->task);
        count += !report || report->state == SHOAL_TASK_STARTING;
    }
    return count;
}

//  True when one more task may start; counts it in *starting.
static bool
s_start_slot (const shoal_handoff_t *self, uint32_t *starting)
{
    if (self->config.max_starting && *starting >= self->config.max_starting)
        return false;
    (*starting)++;
    return true;
}

//  Keeps the tasks whose start the computation held back (names, sorted).
static void
s_queued_set (shoal_handoff_t *self, char **queued, size_t count)
{
    s_names_free (self->queued, self->queued_count);
    if (count)
        qsort (queued, count, sizeof *queued, s_name_compare);
    self->queued = queued;
    self->queued_count = count;
}

//  Runs the assignor and publishes what changed, in two steps where an
//  active moves: no node is made active for a task another may still run.
//  Its caller, s_settle, has reviewed the claims at now.
static void
s_compute (shoal_handoff_t *self, uint64_t now)
{
    self->dirty = false;
    self->stats.computations++;
    self->computed_ms = now;
    shoal_assign_input_t input;
    shoal_assign_output_t output = { 0 };
    char why[128];
    if (s_input (self, now, &input) != 0 || shoal_assign (&input, &output, why, sizeof why) != 0) {
        //  No memory, or ids the assignor refuses (which the copies here
        //  rule out): the next input tries again.
        s_input_free (&input);
        self->dirty = true;
        return;
    }
    s_failed_set (self, output.avoided, output.avoided_count);
    uint64_t version = self->version + 1;
    s_placement_t *next = NULL;
    size_t count = 0, capacity = 0, target_count = 0, queued_count = 0;
    s_pair_t *targets = calloc (output.holding_count ? output.holding_count : 1, sizeof *targets);
    char **queued = calloc (output.holding_count ? output.holding_count : 1, sizeof *queued);
    uint32_t starting = self->config.max_starting ? s_starting (self, now) : 0;
    bool failed = !targets || !queued;
    for (size_t h = 0; h < output.holding_count && !failed; h++) {
        const shoal_assign_holding_t *holding = &output.holdings[h];
        const s_node_t *named = s_named (self, holding->node);
        if (!named)
            continue;
        shoal_id_t node = named->id;
        uint8_t role = holding->role;
        shoal_epoch_t epoch = { 0, 0 };
        const s_placement_t *was = s_published (self, holding->task, &node);
        if (role == SHOAL_ROLE_ACTIVE) {
            if (was && was->role == SHOAL_ROLE_ACTIVE)
                epoch = was->epoch; //  stays where it is
            else if (s_grant_held (self, holding->task, &node, now)) {
                //  The first step of a move, or a wait for a lease: a
                //  stateful task warms up meanwhile; a stateless one waits.
                const s_task_t *task = s_task (self, holding->task);
                if (!task)
                    continue;
                char *copy = strdup (holding->task);
                if (!copy) {
                    failed = true;
                    break;
                }
                targets[target_count++] = (s_pair_t){ copy, node, NULL, 0 };
                if (!task->stateful)
                    continue;
                role = SHOAL_ROLE_LEARNER;
            } else if (!was && !s_start_slot (self, &starting)) {
                //  A new start, max_starting starting already: it waits
                //  for one of them to run (its STATUS is news).
                failed = !(queued[queued_count] = strdup (holding->task));
                queued_count += !failed;
                continue;
            } else
                epoch = (shoal_epoch_t){ self->term, version };
        }
        failed = s_place (&next, &count, &capacity, holding->task, &node, role, epoch) != 0;
    }
    shoal_assign_output_release (&output);
    s_input_free (&input);
    if (failed) {
        s_placements_free (next, count);
        s_pairs_free (targets, target_count);
        s_names_free (queued, queued_count);
        self->dirty = true;
        return;
    }
    s_queued_set (self, queued, queued_count);
    s_pairs_free (self->targets, self->target_count);
    if (target_count)
        qsort (targets, target_count, sizeof *targets, s_pair_compare);
    self->targets = targets;
    self->target_count = target_count;
    if (count)
        qsort (next, count, sizeof *next, s_placement_compare);
    s_publish (self, now, next, count);
}

//  ---------------------------------------------------------------------
//  Taking office

//  True when every member of the view has reported since this leader took
//  office, or the lease wait has passed (whoever did not report has
//  stopped its actives by now). A member the view holds dead is not waited
//  for: were it alive behind a cut, its actives are placed nowhere by the
//  adoption, and granted elsewhere only after the lease wait (or at once,
//  fenced, whose store refuses its writes). Nor is a suspect, the same way:
//  when a leader dies with many others, the view suspects them at once but
//  declares them dead only after the suspicion timeout (32 to 36 s for 101 of
//  1,000 wan workers), and every survivor's lease ran out meanwhile.
static bool
s_ready (const shoal_handoff_t *self, uint64_t now)
{
    if (now >= self->office_ms + self->wait_ms)
        return true;
    for (size_t n = 0; n < self->node_count; n++)
        if (self->nodes[n].heard_ms == 0 && !self->nodes[n].dead && !self->nodes[n].suspect)
            return false;
    return self->node_count > 0;
}

//  Adopts what the members report: per task, the active with the newest
//  epoch stays active under it, every other one that reports it active or
//  stopping is claimed; learners and standbys stay. Published as a
//  snapshot above every version reported.
static void
s_adopt (shoal_handoff_t *self, uint64_t now)
{
    s_placement_t *next = NULL;
    size_t count = 0, capacity = 0, claims_before = self->claim_count;
    bool failed = false;
    uint64_t floor = self->version;
    for (size_t n = 0; n < self->node_count && !failed; n++) {
        const s_node_t *node = &self->nodes[n];
        if (node->applied.version > floor)
            floor = node->applied.version;
        for (size_t r = 0; r < node->report_count && !failed; r++) {
            const s_report_t *report = &node->reports[r];
            if (report->role == SHOAL_ROLE_NONE || report->state == SHOAL_TASK_FAILED)
                continue; //  claimed below when it may still act
            failed = s_place (&next, &count, &capacity, report->task, &node->id, report->role,
                              report->epoch) != 0;
        }
    }
    if (failed) {
        s_placements_free (next, count);
        return;
    }
    if (count)
        qsort (next, count, sizeof *next, s_placement_compare);
    //  One active per task: the newest epoch; the others become standbys
    //  (their state is warm), claimed until they confirm.
    uint64_t version = floor + 1;
    for (size_t i = 0; i < count;) {
        size_t end = i, newest = count;
        while (end < count && strcmp (next[end].task, next[i].task) == 0) {
            if (next[end].role == SHOAL_ROLE_ACTIVE &&
                (newest == count || s_epoch_compare (next[end].epoch, next[newest].epoch) > 0))
                newest = end;
            end++;
        }
        for (size_t k = i; k < end && !failed; k++)
            if (next[k].role == SHOAL_ROLE_ACTIVE && k != newest) {
                next[k].role = SHOAL_ROLE_STANDBY;
                next[k].epoch = (shoal_epoch_t){ 0, 0 };
                failed = s_claim_add (self, next[k].task, &next[k].node, version) != 0;
            }
        i = end;
    }
    //  Whoever still stops an active it was told to give up claims it too,
    //  and so does an active that failed: its node restarts it, as active,
    //  once its backoff is over, under the assignment it holds.
    for (size_t n = 0; n < self->node_count && !failed; n++) {
        const s_node_t *node = &self->nodes[n];
        for (size_t r = 0; r < node->report_count && !failed; r++) {
            const s_report_t *report = &node->reports[r];
            if (report->state == SHOAL_TASK_STOPPING ||
                (report->role == SHOAL_ROLE_ACTIVE && report->state == SHOAL_TASK_FAILED))
                failed = s_claim_add (self, report->task, &node->id, version) != 0;
        }
    }
    if (failed || s_view_reserve (self, count) != 0) {
        while (self->claim_count > claims_before)
            free (self->claims[--self->claim_count].task);
        s_placements_free (next, count);
        return;
    }
    s_placements_free (self->placements, self->placement_count);
    self->placements = next;
    self->placement_count = count;
    self->version = version;
    self->published_ms = now;
    self->adopted = true;
    self->stats.published++;
    s_view_fill (self);
    for (size_t n = 0; n < self->node_count; n++)
        if (s_addressed (self, &self->nodes[n], now)) {
            self->nodes[n].snapshot_due = true;
            self->nodes[n].keepalive_ms = now + self->config.status_ms;
        }
    self->dirty = true;
}

//  ---------------------------------------------------------------------
//  Inputs

static void
s_begin (shoal_handoff_t *self)
{
    self->send_count = 0;
    self->delta_count = 0;
}

//  True when node may still run a task, or is meant to: it reports one in
//  a role or stopping, or the published assignment places one on it.
static bool
s_holds (const shoal_handoff_t *self, const s_node_t *node)
{
    for (size_t r = 0; r < node->report_count; r++)
        if (node->reports[r].role != SHOAL_ROLE_NONE ||
            node->reports[r].state == SHOAL_TASK_STOPPING)
            return true;
    for (size_t i = 0; i < self->placement_count; i++)
        if (shoal_id_equal (&self->placements[i].node, &node->id))
            return true;
    return false;
}

//  After an input: adopt when ready, compute when something changed.
//  Members that became countable since the last computation, new ones (in
//  this life), are placed together: the computation waits until none has
//  come for join_settle_ms, so that nodes started together get their tasks in
//  one step and no task moves twice. Members counted at the last computation
//  that left the view since are handled together the same way, after
//  leave_settle_ms: nodes stopped together hear of each other's leave a
//  gossip round or two apart, and a task must not move to a node that is
//  about to leave too. A death does not wait: failure detectors find
//  crashes seconds apart, so the wait would seldom group two, and it would
//  delay the moves a death allows at once (fenced tasks, learners to warm
//  up). A member that left holding nothing (drained) is no departure: it
//  moves nothing. The wait is at most three times the longer settle after
//  the first change, and none before the first computation that counted
//  anyone: a cold start places at once.
static void
s_settle_changes (shoal_handoff_t *self, uint64_t now)
{
    size_t newcomers = 0, departures = 0;
    bool counted = false;
    for (size_t n = 0; n < self->node_count; n++) {
        const s_node_t *node = &self->nodes[n];
        newcomers += !node->was_counted && s_countable (self, node, now);
        departures += node->counted && !node->live && !node->dead && s_holds (self, node);
        counted |= node->counted;
    }
    if ((newcomers == 0 && departures == 0) || !counted) {
        self->settle_first_ms = self->settle_until_ms = 0;
        self->newcomers = self->departures = 0;
        return;
    }
    if (self->settle_first_ms == 0)
        self->settle_first_ms = now;
    uint64_t wait = 0;
    if (newcomers > self->newcomers)
        wait = self->config.join_settle_ms;
    if (departures > self->departures && self->config.leave_settle_ms > wait)
        wait = self->config.leave_settle_ms;
    if (wait && now + wait > self->settle_until_ms) {
        uint32_t longer = self->config.join_settle_ms > self->config.leave_settle_ms
                              ? self->config.join_settle_ms
                              : self->config.leave_settle_ms;
        uint64_t cap = self->settle_first_ms + 3 * (uint64_t) longer;
        self->settle_until_ms = now + wait < cap ? now + wait : cap;
    }
    self->newcomers = newcomers;
    self->departures = departures;
}

//  True when the last computation meant a task's active to a node, and
//  nothing holds the grant back any more (s_grant_held). Without the lease
//  wait in that test, each STATUS of a new leader's lease wait ran a whole
//  computation for the tasks of the dead that no computation could grant
//  before the wait's end: 475 of 482 in the simulator's
//  crash-leader-tenth at 300 wan nodes, 1,500 tasks.
static bool
s_grant_due (const shoal_handoff_t *self, uint64_t now)
{
    for (size_t i = 0; i < self->target_count; i++) {
        const s_pair_t *target = &self->targets[i];
        if (!s_grant_held (self, target->task, &target->node, now))
            return true;
    }
    return false;
}

static void
s_settle (shoal_handoff_t *self, uint64_t now)
{
    if (!self->adopted && s_ready (self, now))
        s_adopt (self, now);
    s_settle_changes (self, now);
    self->compute_wake_ms = 0;
    if (!self->adopted || !self->dirty)
        return;
    //  At most one computation every compute_ms: the inputs of the gap are
    //  taken in together at its end. The second step of a move does not
    //  wait: its task stopped on the old node and waits for nothing else.
    //  Whether such a grant is due is asked only when something holds the
    //  computation back.
    bool gap = self->stats.computations && now < self->computed_ms + self->config.compute_ms;
    bool settling = now < self->settle_until_ms;
    s_claims_review (self, now); //  the input may have ended the claim
    bool grant = (gap || settling) && s_grant_due (self, now);
    if (gap && !grant) {
        self->compute_wake_ms = self->computed_ms + self->config.compute_ms;
        return;
    }
    if (!settling)
        s_compute (self, now);
    else if (self->departures == 0 && grant) {
        //  Members joining: the move of a task that waits for nothing but
        //  the next computation (its old owner stopped) is finished now,
        //  among the members counted before; the newcomers are placed when
        //  the settle ends. A node that left and started again at once is
        //  such a newcomer, and its old tasks waited the whole settle.
        self->newcomers_wait = true;
        s_compute (self, now);
        self->newcomers_wait = false;
        self->dirty = true;
    }
}

//  At the end of an input: the snapshots and the delta it made. They carry
//  placements, so they are made only now, from the assignment as the input
//  left it: a later change in the same input cannot move what an earlier
//  message points at. Each member gets the placements that name it; a
//  delta goes from the last version it was sent, and one it did not take
//  (it is behind) it drops, to be found at its keep-alive.
static void
s_flush (shoal_handoff_t *self, uint64_t now)
{
    bool deltas = false, snapshots = false;
    for (size_t n = 0; n < self->node_count; n++) {
        deltas |= self->nodes[n].delta_due;
        snapshots |= self->nodes[n].snapshot_due;
    }
    if (deltas && self->delta_count) {
        memcpy (self->delta_by_node, self->delta, self->delta_count * sizeof *self->delta);
        qsort (self->delta_by_node, self->delta_count, sizeof *self->delta, s_by_node_compare);
    }
    if (snapshots && self->view_by_node_stale) {
        memcpy (self->view_by_node, self->view, self->placement_count * sizeof *self->view);
        qsort (self->view_by_node, self->placement_count, sizeof *self->view, s_by_node_compare);
        self->view_by_node_stale = false;
    }
    for (size_t n = 0; n < self->node_count; n++) {
        s_node_t *node = &self->nodes[n];
        if (!node->delta_due && !node->snapshot_due)
            continue;
        bool snapshot = node->snapshot_due;
        node->snapshot_due = node->delta_due = false;
        shoal_handoff_send_t *send = s_send (self, node);
        if (!send)
            continue;
        shoal_assign_t *assign = &send->msg.u.assign;
        if (snapshot) {
            assign->base_version = 0;
            assign->snapshot = true;
            assign->placement_count =
                s_run (self->view_by_node, self->placement_count, &node->id, &assign->placements);
            self->stats.snapshots++;
        } else {
            assign->base_version = node->sent;
            assign->placement_count =
                s_run (self->delta_by_node, self->delta_count, &node->id, &assign->placements);
        }
        if (node->head != self->version)
            node->head_ms = now;
        node->head = node->sent = self->version;
    }
}

shoal_handoff_t *
shoal_handoff_new (const shoal_handoff_config_t *config, uint64_t term, uint64_t floor_version,
                   uint64_t now_ms)
{
    if (shoal_handoff_config_check (config) || term == 0 || floor_version >= UINT64_MAX / 2)
        return NULL;
    shoal_handoff_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->config = *config;
    self->term = term;
    self->office_ms = now_ms;
    self->wait_ms = (uint64_t) config->lease_ms * (100 + config->drift_percent) / 100;
    self->version = floor_version;
    return self;
}

int
shoal_handoff_retitle (shoal_handoff_t *self, uint64_t now_ms, uint64_t term)
{
    s_begin (self);
    if (term <= self->term || !self->adopted || self->version >= UINT64_MAX / 2)
        return -1;
    self->term = term;
    self->version++;
    self->published_ms = now_ms;
    self->stats.published++;
    for (size_t n = 0; n < self->node_count; n++)
        if (s_addressed (self, &self->nodes[n], now_ms)) {
            self->nodes[n].snapshot_due = true;
            self->nodes[n].keepalive_ms = now_ms + self->config.status_ms;
        }
    s_flush (self, now_ms);
    return 0;
}

void
shoal_handoff_first_term (shoal_handoff_t *self)
{
    self->wait_over = true;
}

void
shoal_handoff_destroy (shoal_handoff_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    shoal_handoff_t *self = *self_p;
    for (size_t n = 0; n < self->node_count; n++) {
        s_reports_free (&self->nodes[n]);
        s_meta_free (&self->nodes[n]);
    }
    free (self->nodes);
    s_tasks_free (self->tasks, self->task_count);
    s_placements_free (self->placements, self->placement_count);
    s_placements_free (self->retired, self->retired_count);
    s_claims_free (self->claims, self->claim_count);
    s_pairs_free (self->avoids, self->avoid_count);
    s_pairs_free (self->targets, self->target_count);
    free (self->unplaced);
    s_names_free (self->failed, self->failed_count);
    s_names_free (self->queued, self->queued_count);
    free (self->sends);
    free (self->delta);
    free (self->view);
    free (self->delta_by_node);
    free (self->view_by_node);
    free (self);
    *self_p = NULL;
}

//  Copies what the assignor needs of meta into node. -1 when memory is
//  short (node is then without meta).
static int
s_meta_set (s_node_t *node, const shoal_meta_t *meta)
{
    s_meta_free (node);
    if (!meta)
        return 0;
    node->capacity = meta->capacity;
    node->slots = meta->slots;
    if (!node->cordon_told)
        node->cordon = meta->cordon;
    if (s_labels_copy (meta->labels, meta->label_count, &node->labels) != 0)
        return -1;
    node->label_count = meta->label_count;
    if (meta->handle_count) {
        node->handles = calloc (meta->handle_count, sizeof *node->handles);
        if (!node->handles) {
            s_meta_free (node);
            return -1;
        }
        node->handle_count = meta->handle_count;
        for (uint32_t i = 0; i < meta->handle_count; i++)
            if (!(node->handles[i] = strdup (meta->handles[i] ? meta->handles[i] : ""))) {
                s_meta_free (node);
                return -1;
            }
    }
    node->has_meta = true;
    return 0;
}

//  Node's mark, as the node itself told it in this life: it wins over its
//  meta's from now on, since gossip may bring a newer meta to every member
//  but the leader for a while, and an older one after.
static void
s_cordon_told (shoal_handoff_t *self, s_node_t *node, uint8_t cordon)
{
    assert (cordon <= SHOAL_CORDON_MAX);
    if (node->cordon != cordon)
        self->dirty = true;
    node->cordon = cordon;
    node->cordon_told = true;
}

//  The member restarted: what its last life ran died with it, and its
//  STATUS seq counts from 1 again.
static void
s_new_life (shoal_handoff_t *self, s_node_t *node, uint64_t life, uint64_t now)
{
    s_reports_free (node);
    node->seq = 0;
    node->heard_ms = 0;
    node->applied = (shoal_epoch_t){ 0, 0 };
    node->applied_at_keepalive = node->applied;
    node->head = node->head_ms = node->sent = 0;
    node->life = life;
    node->life_ms = now;
    node->cordon_told = false;
    node->was_counted = false; //  it joins again
    self->dirty = true;
    s_avoids_prune (self, &node->id); //  a new life gives every task another chance
}

int
shoal_handoff_member (shoal_handoff_t *self, uint64_t now_ms, const shoal_id_t *id,
                      const shoal_meta_t *meta, shoal_handoff_presence_t presence)
{
    s_begin (self);
    bool suspect = presence == SHOAL_HANDOFF_SUSPECT;
    bool live = presence == SHOAL_HANDOFF_LIVE || suspect, dead = presence == SHOAL_HANDOFF_DEAD;
    bool found;
    size_t at = s_node_index (self, id, &found);
    if (!found) {
        s_node_t *nodes = realloc (self->nodes, (self->node_count + 1) * sizeof *nodes);
        if (!nodes)
            return -1;
        self->nodes = nodes;
        memmove (nodes + at + 1, nodes + at, (self->node_count - at) * sizeof *nodes);
        self->node_count++;
        nodes[at] = (s_node_t){ .id = *id };
        shoal_id_format (id->bytes, false, nodes[at].name);
    }
    s_node_t *node = &self->nodes[at];
    if (meta && meta->life != node->life)
        s_new_life (self, node, meta->life, now_ms);
    if (!live)
        s_avoids_prune (self, id); //  and so does a member that comes back
    int rc = 0;
    if (meta || !node->has_meta)
        rc = s_meta_set (node, meta);
    if (node->live != live || node->dead != dead || meta)
        self->dirty = true;
    node->live = live;
    node->dead = dead;
    node->suspect = suspect;
    s_settle (self, now_ms);
    s_flush (self, now_ms);
    return rc;
}

int
shoal_handoff_tasks (shoal_handoff_t *self, uint64_t now_ms, const shoal_assign_task_t *tasks,
                     size_t count)
{
    s_begin (self);
    s_task_t *copies = calloc (count ? count : 1, sizeof *copies);
    if (!copies)
        return -1;
    bool failed = false;
    for (size_t i = 0; i < count && !failed; i++) {
        copies[i].id = strdup (tasks[i].id ? tasks[i].id : "");
        copies[i].job = strdup (tasks[i].job ? tasks[i].job : "");
        copies[i].stateful = tasks[i].stateful;
        copies[i].fenced = tasks[i].fenced;
        copies[i].weight = tasks[i].weight;
        failed = !copies[i].id || !copies[i].job ||
                 s_labels_copy (tasks[i].require, tasks[i].require_count, &copies[i].require) != 0;
        if (!failed)
            copies[i].require_count = tasks[i].require_count;
    }
    if (!failed) {
        qsort (copies, count, sizeof *copies, s_name_compare);
        for (size_t i = 1; i < count && !failed; i++)
            failed = strcmp (copies[i - 1].id, copies[i].id) == 0;
    }
    if (failed) {
        s_tasks_free (copies, count);
        return -1;
    }
    s_tasks_free (self->tasks, self->task_count);
    self->tasks = copies;
    self->task_count = count;
    self->dirty = true;
    s_avoids_prune (self, NULL);
    s_settle (self, now_ms);
    s_flush (self, now_ms);
    return 0;
}

//  True when the reports differ in what the handoff acts on: a task held
//  or gone, a role, a state, an epoch, or a lag on either side of
//  acceptable_lag.
static bool
s_news (const shoal_handoff_t *self, const s_node_t *node, const s_report_t *reports, size_t count)
{
    if (count != node->report_count)
        return true;
    uint64_t acceptable = self->config.assign.acceptable_lag;
    for (size_t i = 0; i < count; i++) {
        const s_report_t *a = &node->reports[i], *b = &reports[i];
        if (strcmp (a->task, b->task) != 0 || a->role != b->role || a->state != b->state ||
            s_epoch_compare (a->epoch, b->epoch) != 0 ||
            (a->lag <= acceptable) != (b->lag <= acceptable))
            return true;
    }
    return false;
}

int
shoal_handoff_cordon (shoal_handoff_t *self, uint64_t now_ms, const shoal_id_t *node,
                      uint8_t cordon)
{
    s_begin (self);
    s_node_t *found = node ? s_node (self, node) : NULL;
    if (!found || cordon > SHOAL_CORDON_MAX)
        return -1;
    s_cordon_told (self, found, cordon);
    s_settle (self, now_ms);
    s_flush (self, now_ms);
    return 0;
}

int
shoal_handoff_status (shoal_handoff_t *self, uint64_t now_ms, const shoal_id_t *from, uint64_t life,
                      const shoal_status_t *status)
{
    s_begin (self);
    s_node_t *node = from ? s_node (self, from) : NULL;
    if (!node || !status || life < node->life || (status->task_count && !status->tasks) ||
        status->cordon > SHOAL_CORDON_MAX) {
        self->stats.dropped++;
        return -1;
    }
    if (life > node->life)
        s_new_life (self, node, life, now_ms);
    if (status->seq <= node->seq) {
        self->stats.dropped++;
        return -1;
    }
    s_report_t *reports = calloc (status->task_count ? status->task_count : 1, sizeof *reports);
    if (!reports)
        return -1;
    bool failed = false;
    for (uint32_t i = 0; i < status->task_count && !failed; i++) {
        const shoal_task_status_t *task = &status->tasks[i];
        reports[i] = (s_report_t){ strdup (task->task ? task->task : ""),
                                   task->role,
                                   task->state,
                                   task->lag,
                                   task->epoch,
                                   task->restarts,
                                   task->last_exit,
                                   task->error && task->error[0] ? strdup (task->error) : NULL };
        failed = !reports[i].task || (task->error && task->error[0] && !reports[i].error);
    }
    if (!failed) {
        qsort (reports, status->task_count, sizeof *reports, s_name_compare);
        for (uint32_t i = 1; i < status->task_count && !failed; i++)
            failed = strcmp (reports[i - 1].task, reports[i].task) == 0;
    }
    if (failed) {
        for (uint32_t i = 0; i < status->task_count; i++) {
            free (reports[i].task);
            free (reports[i].error);
        }
        free (reports);
        self->stats.dropped++;
        return -1;
    }
    shoal_epoch_t applied = { status->term, status->applied_version };
    bool moved_on = s_epoch_compare (applied, node->applied) != 0;
    bool news = node->heard_ms == 0 || s_news (self, node, reports, status->task_count);
    bool first = node->heard_ms == 0;
    s_reports_free (node);
    node->reports = reports;
    node->report_count = status->task_count;
    node->applied = applied;
    node->seq = status->seq;
    node->heard_ms = now_ms;
    s_cordon_told (self, node, status->cordon);
    //  A member that only applied a newer version is news when that ends a
    //  claim of its, and only then: were every acknowledgement news, each
    //  version would bring a computation per member, and a computation that
    //  publishes again a version per member in turn (a storm, when the
    //  assignor does not settle).
    if (news || (moved_on && s_claims_review (self, now_ms)))
        self->dirty = true;
    //  A task it lists in role none, failed, it gave up on: it will not
    //  start it again, so the task may go to another node.
    for (size_t r = 0; r < node->report_count; r++)
        if (node->reports[r].role == SHOAL_ROLE_NONE &&
            node->reports[r].state == SHOAL_TASK_FAILED && s_task (self, node->reports[r].task))
            s_avoid (self, now_ms, &node->reports[r], from);
    if (self->adopted && s_addressed (self, node, now_ms) && applied.term != self->term &&
        (first || now_ms >= self->published_ms + self->config.status_ms)) {
        //  A member without this leader's assignment gets it now, not at its
        //  next keep-alive.
        node->snapshot_due = true;
        node->keepalive_ms = now_ms + self->config.status_ms;
    }
    s_settle (self, now_ms);
    s_flush (self, now_ms);
    return 0;
}

void
shoal_handoff_tick (shoal_handoff_t *self, uint64_t now_ms)
{
    s_begin (self);
    if (s_claims_review (self, now_ms))
        self->dirty = true;
    if (!self->wait_over && now_ms >= self->office_ms + self->wait_ms) {
        self->wait_over = true; //  grants may go to anyone now
        self->dirty = true;
    }
    for (size_t n = 0; n < self->node_count; n++)
        if (self->nodes[n].counted != s_countable (self, &self->nodes[n], now_ms))
            self->dirty = true; //  silent for a lease: no new tasks for it
    s_settle (self, now_ms);
    for (size_t n = 0; n < self->node_count; n++) {
        s_node_t *node = &self->nodes[n];
        if (now_ms < node->keepalive_ms)
            continue;
        if (!s_addressed (self, node, now_ms)) {
            //  Heard from, gone from the view, and due while it was still
            //  addressed, but the tick came late (the leader was paused):
            //  nothing to send, and next must not keep asking for a time
            //  that has passed.
            if (node->heard_ms)
                node->keepalive_ms = now_ms + self->config.status_ms;
            continue;
        }
        node->keepalive_ms = now_ms + self->config.status_ms;
        bool current = node->applied.term == self->term && node->applied.version == node->head;
        if (!self->adopted)
            s_keepalive (self, node, node->applied.version);
        else if (current)
            s_keepalive (self, node, node->head);
        else if (now_ms >= node->head_ms + self->config.status_ms ||
                 s_epoch_compare (node->applied, node->applied_at_keepalive) == 0)
            //  Behind a version older than a keep-alive period, or behind
            //  and no further on than at its last keep-alive while newer
            //  versions keep coming: it missed a delta.
            node->snapshot_due = true;
        node->applied_at_keepalive = node->applied;
    }
    s_flush (self, now_ms);
}

//  ---------------------------------------------------------------------
//  Outputs and queries

size_t
shoal_handoff_outbox (const shoal_handoff_t *self, const shoal_handoff_send_t **sends)
{
    *sends = self->sends;
    return self->send_count;
}

uint64_t
shoal_handoff_next (const shoal_handoff_t *self)
{
    uint64_t next = UINT64_MAX;
    for (size_t n = 0; n < self->node_count; n++) {
        const s_node_t *node = &self->nodes[n];
        //  s_addressed at the time of its next keep-alive
        if (node->heard_ms && node->keepalive_ms < next &&
            (node->live || node->keepalive_ms < node->heard_ms + self->config.lease_ms))
            next = node->keepalive_ms;
        //  A counted member falling silent makes the assignment dirty; once
        //  dirty, the computation is already due (below, or at adoption),
        //  and a silence deadline already past must not be asked for again
        //  while the join settle holds the computation back.
        if (!self->dirty && node->counted && node->heard_ms + self->config.lease_ms < next)
            next = node->heard_ms + self->config.lease_ms;
    }
    if (!self->wait_over && self->office_ms + self->wait_ms < next)
        next = self->office_ms + self->wait_ms;
    //  The end of the settle, or of the gap between computations when that
    //  holds one back (it may hold back one the settle's end let pass).
    uint64_t compute_at = self->compute_wake_ms ? self->compute_wake_ms : self->settle_until_ms;
    if (self->dirty && self->adopted && compute_at && compute_at < next)
        next = compute_at;
    //  A claim on an owner the leader does not hear from ends with the wait.
    for (size_t i = 0; i < self->claim_count; i++) {
        const s_node_t *node = s_node (self, &self->claims[i].node);
        uint64_t since = node ? s_silent_since (self, node) : self->office_ms;
        if (since + self->wait_ms < next)
            next = since + self->wait_ms;
    }
    return next;
}

size_t
shoal_handoff_placements (const shoal_handoff_t *self, const shoal_placement_t **placements)
{
    *placements = self->view;
    return self->adopted ? self->placement_count : 0;
}

bool
shoal_handoff_reported (const shoal_handoff_t *self, const shoal_id_t *node, const char *task,
                        shoal_task_status_t *status)
{
    const s_node_t *member = node && task ? s_node (self, node) : NULL;
    const s_report_t *report = member ? s_report (member, task) : NULL;
    if (!report)
        return false;
    *status = (shoal_task_status_t){ .task = report->task,
                                     .role = report->role,
                                     .state = report->state,
                                     .lag = report->lag,
                                     .epoch = report->epoch,
                                     .restarts = report->restarts,
                                     .last_exit = report->last_exit,
                                     .error = report->error ? report->error : "" };
    return true;
}

//  ---------------------------------------------------------------------
//  Tasks placed nowhere, and why

//  True when node, as the assignor last counted it, may hold task: it
//  handles the job and carries every required label.
static bool
s_handles (const s_node_t *node, const s_task_t *task)
{
    if (node->handle_count == 0)
        return true;
    for (uint32_t h = 0; h < node->handle_count; h++)
        if (strcmp (node->handles[h], task->job) == 0)
            return true;
    return false;
}

static bool
s_has_label (const s_node_t *node, const shoal_label_t *label)
{
    for (uint32_t l = 0; l < node->label_count; l++)
        if (strcmp (node->labels[l].key, label->key) == 0 &&
            strcmp (node->labels[l].value, label->value) == 0)
            return true;
    return false;
}

//  Why no counted member may hold task, into entry; false when one may.
static bool
s_no_node (const shoal_handoff_t *self, const s_task_t *task, shoal_unplaced_t *entry)
{
    bool handled = false;
    for (size_t n = 0; n < self->node_count; n++)
        handled |= self->nodes[n].counted && s_handles (&self->nodes[n], task);
    if (!handled) {
        entry->unhandled = true;
        return true;
    }
    //  The first required label that no member handling the job carries:
    //  the constraint to name.
    for (uint32_t l = 0; l < task->require_count; l++) {
        bool carried = false;
        for (size_t n = 0; n < self->node_count && !carried; n++)
            carried = self->nodes[n].counted && s_handles (&self->nodes[n], task) &&
                      s_has_label (&self->nodes[n], &task->require[l]);
        if (!carried) {
            entry->label = &task->require[l];
            return true;
        }
    }
    for (size_t n = 0; n < self->node_count; n++) {
        const s_node_t *node = &self->nodes[n];
        bool all = node->counted && s_handles (node, task);
        for (uint32_t l = 0; l < task->require_count && all; l++)
            all = s_has_label (node, &task->require[l]);
        if (all)
            return false;
    }
    return true; //  each label is carried by some member, but none carries all
}

//  The error reported by the member that gave up on task last ("" when it
//  said none).
static const char *
s_last_error (const shoal_handoff_t *self, const char *task)
{
    const s_pair_t *last = NULL;
    for (size_t i = 0; i < self->avoid_count; i++)
        if (strcmp (self->avoids[i].task, task) == 0 &&
            (!last || self->avoids[i].when_ms >= last->when_ms))
            last = &self->avoids[i];
    return last && last->error ? last->error : "";
}

static bool
s_failed_everywhere (const shoal_handoff_t *self, const char *task)
{
    return self->failed_count &&
           bsearch (&task, self->failed, self->failed_count, sizeof *self->failed, s_name_compare);
}

static bool
s_queued (const shoal_handoff_t *self, const char *task)
{
    return self->queued_count &&
           bsearch (&task, self->queued, self->queued_count, sizeof *self->queued, s_name_compare);
}

size_t
shoal_handoff_unplaced (shoal_handoff_t *self, const shoal_unplaced_t **unplaced)
{
    free (self->unplaced);
    self->unplaced = calloc (self->task_count ? self->task_count : 1, sizeof *self->unplaced);
    self->unplaced_count = 0;
    *unplaced = self->unplaced;
    if (!self->unplaced)
        return 0;
    for (size_t t = 0; t < self->task_count; t++) {
        const s_task_t *task = &self->tasks[t];
        if (self->adopted && s_placed (self, task->id))
            continue;
        shoal_unplaced_t entry = { .task = task->id, .error = "" };
        if (!self->adopted)
            entry.reason = SHOAL_UNPLACED_OFFICE;
        else if (s_queued (self, task->id))
            entry.reason = SHOAL_UNPLACED_QUEUED;
        else if (s_targeted (self, task->id) || s_claimed (self, task->id, NULL))
            entry.reason = SHOAL_UNPLACED_MOVING;
        else if (s_failed_everywhere (self, task->id)) {
            entry.reason = SHOAL_UNPLACED_FAILED;
            entry.error = s_last_error (self, task->id);
        } else if (s_no_node (self, task, &entry))
            entry.reason = SHOAL_UNPLACED_NO_NODE;
        else
            entry.reason = SHOAL_UNPLACED_SLOTS;
        self->unplaced[self->unplaced_count++] = entry;
    }
    return self->unplaced_count;
}

//  The placements of task into *move: the active, and how many learners.
static void
s_move_placed (const shoal_handoff_t *self, const char *task, shoal_handoff_move_t *move)
{
    for (size_t i = s_first_placement (self, task);
         i < self->placement_count && strcmp (self->placements[i].task, task) == 0; i++) {
        const s_placement_t *placement = &self->placements[i];
        if (placement->role == SHOAL_ROLE_LEARNER)
            move->learners++;
        else if (placement->role == SHOAL_ROLE_ACTIVE) {
            move->has_active = true;
            move->active = placement->node;
            move->epoch = placement->epoch;
        }
    }
}

//  The target and the claim of task into *move.
static void
s_move_pending (const shoal_handoff_t *self, const char *task, shoal_handoff_move_t *move)
{
    for (size_t i = 0; i < self->target_count && !move->has_target; i++)
        if (strcmp (self->targets[i].task, task) == 0) {
            move->has_target = true;
            move->target = self->targets[i].node;
        }
    for (size_t i = 0; i < self->claim_count && !move->claimed; i++)
        if (strcmp (self->claims[i].task, task) == 0) {
            move->claimed = true;
            move->claimer = self->claims[i].node;
        }
}

int
shoal_handoff_phase (const shoal_handoff_t *self, const char *task, shoal_handoff_move_t *move)
{
    if (!task || !move || !s_task (self, task))
        return -1;
    *move = (shoal_handoff_move_t){ 0 };
    s_move_placed (self, task, move);
    s_move_pending (self, task, move);
    if (move->has_active && move->epoch.term == self->term && move->epoch.version == self->version)
        move->phase = SHOAL_PHASE_GRANTED;
    else if (move->has_active)
        move->phase = move->learners ? SHOAL_PHASE_WARMING : SHOAL_PHASE_PLACED;
    else if (move->has_target || move->claimed)
        move->phase = SHOAL_PHASE_REVOKED;
    else
        move->phase = SHOAL_PHASE_UNPLACED;
    return 0;
}

uint64_t
shoal_handoff_version (const shoal_handoff_t *self)
{
    return self->version;
}

bool
shoal_handoff_adopted (const shoal_handoff_t *self)
{
    return self->adopted;
}

bool
shoal_handoff_settled (const shoal_handoff_t *self)
{
    if (!self->adopted || self->claim_count)
        return false;
    for (size_t i = 0; i < self->target_count; i++)
        if (!s_active_elsewhere (self, self->targets[i].task, &self->targets[i].node))
            return false;
    return true;
}

size_t
shoal_handoff_failed (const shoal_handoff_t *self, const char *const **tasks)
{
    *tasks = (const char *const *) self->failed;
    return self->failed_count;
}

void
shoal_handoff_stats (const shoal_handoff_t *self, shoal_handoff_stats_t *stats)
{
    *stats = self->stats;
}

//  ---------------------------------------------------------------------
//  Capacity, for rescales

//  True when node may hold tasks of task's job: the assignor's rule
//  (shoal_assign_may_hold), on the node and the task as s_input shows them.
static bool
s_eligible (const s_node_t *node, const s_task_t *task)
{
    shoal_assign_node_t as_node = s_assign_node (node);
    shoal_assign_task_t as_task = s_assign_task (task);
    return shoal_assign_may_hold (&as_node, &as_task);
}

uint32_t
shoal_handoff_capacity (const shoal_handoff_t *self, const char *job)
{
    const s_task_t *like = NULL;
    for (size_t t = 0; t < self->task_count && !like; t++)
        if (strcmp (self->tasks[t].job, job) == 0)
            like = &self->tasks[t];
    if (!like)
        return 0;
    uint64_t total = 0;
    for (size_t n = 0; n < self->node_count; n++) {
        const s_node_t *node = &self->nodes[n];
        //  A cordoned node takes no new task: no room for a rescale.
        if (!node->counted || !node->has_meta || node->cordon != SHOAL_CORDON_NONE ||
            !s_eligible (node, like))
            continue;
        if (node->slots == 0)
            return UINT32_MAX;
        //  The slots the other jobs' actives take on it, as published.
        uint64_t used = 0;
        for (size_t p = 0; p < self->placement_count; p++) {
            const s_placement_t *placement = &self->placements[p];
            const s_task_t *task = placement->role == SHOAL_ROLE_ACTIVE &&
                                           shoal_id_compare (&placement->node, &node->id) == 0
                                       ? s_task (self, placement->task)
                                       : NULL;
            if (task && strcmp (task->job, job) != 0)
                used += task->weight;
        }
        if (used < node->slots)
            total += (node->slots - used) / like->weight;
    }
    return total > UINT32_MAX ? UINT32_MAX : (uint32_t) total;
}

//  ---------------------------------------------------------------------
//  Invariants (debug)

#ifndef SHOAL_NO_CHECKS

static int
s_check_nodes (const shoal_handoff_t *self, const char **reason)
{
    for (size_t n = 0; n < self->node_count; n++) {
        const s_node_t *node = &self->nodes[n];
        if (n && shoal_id_compare (&self->nodes[n - 1].id, &node->id) >= 0)
            return shoal_check_broken (reason, "handoff: members not sorted by id, or repeated");
        for (size_t r = 1; r < node->report_count; r++)
            if (strcmp (node->reports[r - 1].task, node->reports[r].task) >= 0)
                return shoal_check_broken (reason,
                                           "handoff: a member's reports not sorted, or repeated");
    }
    for (size_t t = 1; t < self->task_count; t++)
        if (strcmp (self->tasks[t - 1].id, self->tasks[t].id) >= 0)
            return shoal_check_broken (reason, "handoff: tasks not sorted by id, or repeated");
    for (size_t f = 1; f < self->failed_count; f++)
        if (strcmp (self->failed[f - 1], self->failed[f]) >= 0)
            return shoal_check_broken (reason, "handoff: failed tasks not sorted, or repeated");
    return 0;
}

static int
s_check_placements (const shoal_handoff_t *self, const char **reason)
{
    size_t actives = 0; //  of the task of the placement before
    for (size_t p = 0; p < self->placement_count; p++) {
        const s_placement_t *placement = &self->placements[p];
        bool same_task = p && strcmp (self->placements[p - 1].task, placement->task) == 0;
        if (p && s_placement_compare (&self->placements[p - 1], placement) >= 0)
            return shoal_check_broken (reason, "handoff: placements not sorted, or repeated");
        if (placement->role < SHOAL_ROLE_ACTIVE || placement->role > SHOAL_ROLE_LEARNER)
            return shoal_check_broken (reason, "handoff: a placement in no role");
        if (!s_node (self, &placement->node))
            return shoal_check_broken (reason, "handoff: a placement on an unknown member");
        actives = (same_task ? actives : 0) + (placement->role == SHOAL_ROLE_ACTIVE);
        if (actives > 1)
            return shoal_check_broken (reason, "handoff: two actives published for one task");
    }
    for (size_t i = 1; i < self->target_count; i++)
        if (s_pair_compare (&self->targets[i - 1], &self->targets[i]) >= 0)
            return shoal_check_broken (reason, "handoff: targets not sorted, or repeated");
    for (size_t i = 0; i < self->claim_count; i++)
        for (size_t j = i + 1; j < self->claim_count; j++)
            if (strcmp (self->claims[i].task, self->claims[j].task) == 0 &&
                shoal_id_compare (&self->claims[i].node, &self->claims[j].node) == 0)
                return shoal_check_broken (reason, "handoff: two claims of one member on one task");
    return 0;
}

int
shoal_handoff_check (const shoal_handoff_t *self, const char **reason)
{
    if (!self)
        return shoal_check_broken (reason, "handoff: NULL");
    if (self->send_count > self->send_capacity)
        return shoal_check_broken (reason, "handoff: more sends than room");
    return s_check_nodes (self, reason) ? -1 : s_check_placements (self, reason);
}

#else

int
shoal_handoff_check (const shoal_handoff_t *self, const char **reason)
{
    (void) self;
    (void) reason;
    return 0;
}

#endif

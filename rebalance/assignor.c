/*  rebalance/assignor.c: the leader's assignor, a pure function.

    The assignment is computed in four passes over tasks and nodes sorted
    by id, so that input order never matters:

    1. Target: where each task's active should be once all warm-up is done.
       Actives stay where they are (or where their learner warms up) when
       their node may hold them; the rest go to the least loaded node that
       may; then tasks move from the most to the least loaded nodes only
       while the difference exceeds one unit of load, preferring moves that
       land on warm state; then each job is spread over nodes of equal
       capacity by moves and swaps that keep node loads as they are.
    2. Actives: a stateful task whose target node is not caught up stays
       active on a caught-up node and gets a learner on its target, within
       max_warmups; when no node is caught up, it goes to a node of least
       lag.
    3. Standbys: each stateful task gets its standbys on other nodes,
       preferring other spread_by values, the standbys it had, warm state
       and light nodes.
    4. The output: holdings sorted, unassigned tasks, moves, followup.
*/

#define _GNU_SOURCE //  qsort_r

#include "assignor.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

//  ---------------------------------------------------------------------
//  Working state

typedef struct {
    uint32_t task;
    uint32_t node;
    uint64_t lag;
} s_lag_t;

typedef struct {
    uint32_t task;
    uint32_t node;
    uint8_t role;
} s_hold_t;

//  Tasks of one job with the same requirements may use the same nodes.
typedef struct {
    uint32_t job;
    const shoal_assign_task_t *first; //  its requirements are the class's
    uint8_t *eligible;                //  per node
    uint32_t eligible_count;
} s_class_t;

typedef struct {
    const shoal_assign_input_t *in;
    uint32_t nodes, tasks, jobs, classes;
    const shoal_assign_node_t **node; //  sorted by id
    const shoal_assign_task_t **task; //  sorted by id
    uint32_t *job_of;                 //  per task
    uint32_t *class_of;               //  per task
    s_class_t *class;
    s_lag_t *lag; //  known (task, node) lags, sorted
    size_t lag_count;
    uint32_t *lag_first; //  per task + 1: range into lag
    s_hold_t *cur;       //  current holdings of known pairs, sorted
    size_t cur_count;
    uint32_t *cur_first;     //  per task + 1: range into cur
    uint32_t *target;        //  per task: the node its active should end on
    uint32_t *active;        //  per task: the node it is active on now
    uint32_t *learner;       //  per task: the node it warms up on, or NONE
    uint64_t *load;          //  per node: active weight
    uint64_t *reserved;      //  per node: weight of actives still to settle there
    uint64_t *stateful_load; //  per node: stateful active + standby weight
    uint32_t *counts;        //  per node, scratch
    uint32_t warmups;        //  learners placed so far
    s_hold_t *out;           //  the output holdings
    size_t out_count, out_size;
} s_state_t;

static int
s_fail (char *why, size_t why_size, const char *text, const char *id)
{
    if (why && why_size)
        snprintf (why, why_size, text, id ? id : "");
    return -1;
}

//  ---------------------------------------------------------------------
//  Lookups

static int
s_node_cmp (const void *a, const void *b)
{
    return strcmp ((*(const shoal_assign_node_t *const *) a)->id,
                   (*(const shoal_assign_node_t *const *) b)->id);
}

static int
s_task_cmp (const void *a, const void *b)
{
    return strcmp ((*(const shoal_assign_task_t *const *) a)->id,
                   (*(const shoal_assign_task_t *const *) b)->id);
}

_Static_assert(offsetof (shoal_assign_node_t, id) == 0, "a node begins with its id");
_Static_assert(offsetof (shoal_assign_task_t, id) == 0, "a task begins with its id");

//  Finds id in items sorted by id; nodes and tasks both begin with their id.
static uint32_t
s_find (const void *const *items, uint32_t count, const char *id)
{
    uint32_t low = 0, high = count;
    while (low < high) {
        uint32_t mid = low + (high - low) / 2;
        int c = strcmp (*(const char *const *) items[mid], id);
        if (c == 0)
            return mid;
        if (c < 0)
            low = mid + 1;
        else
            high = mid;
    }
    return NONE;
}

static uint32_t
s_find_node (const s_state_t *self, const char *id)
{
    return s_find ((const void *const *) self->node, self->nodes, id);
}

static uint32_t
s_find_task (const s_state_t *self, const char *id)
{
    return s_find ((const void *const *) self->task, self->tasks, id);
}

static bool
s_has_label (const shoal_assign_node_t *node, const shoal_label_t *label)
{
    for (uint32_t i = 0; i < node->label_count; i++)
        if (strcmp (node->labels[i].key, label->key) == 0)
            return strcmp (node->labels[i].value, label->value) == 0;
    return false;
}

static const char *
s_label (const shoal_assign_node_t *node, const char *key)
{
    for (uint32_t i = 0; i < node->label_count; i++)
        if (strcmp (node->labels[i].key, key) == 0)
            return node->labels[i].value;
    return NULL;
}

static bool
s_may_hold (const shoal_assign_node_t *node, const shoal_assign_task_t *task)
{
    if (!node->handles_all) {
        bool handles = false;
        for (uint32_t i = 0; i < node->handle_count && !handles; i++)
            handles = strcmp (node->handles[i], task->job) == 0;
        if (!handles)
            return false;
    }
    for (uint32_t i = 0; i < task->require_count; i++)
        if (!s_has_label (node, &task->require[i]))
            return false;
    return true;
}

static bool
s_eligible (const s_state_t *self, uint32_t task, uint32_t node)
{
    return self->class[self->class_of[task]].eligible[node];
}

//  The lag of node on task, UINT64_MAX when it has no state.
static uint64_t
s_lag (const s_state_t *self, uint32_t task, uint32_t node)
{
    for (uint32_t i = self->lag_first[task]; i < self->lag_first[task + 1]; i++)
        if (self->lag[i].node == node)
            return self->lag[i].lag;
    return UINT64_MAX;
}

//  The role node held task in with in the current assignment, or 0.
static uint8_t
s_current_role (const s_state_t *self, uint32_t task, uint32_t node)
{
    for (uint32_t i = self->cur_first[task]; i < self->cur_first[task + 1]; i++)
        if (self->cur[i].node == node)
            return self->cur[i].role;
    return 0;
}

//  A node that held task active in the current assignment is caught up on
//  it, whatever its lag says.
static bool
s_caught_up (const s_state_t *self, uint32_t task, uint32_t node)
{
    return s_current_role (self, task, node) == SHOAL_ROLE_ACTIVE ||
           s_lag (self, task, node) <= self->in->config.acceptable_lag;
}

static uint32_t
s_weight (const s_state_t *self, uint32_t task)
{
    return self->task[task]->weight;
}

//  Compares load_a / cap_a with load_b / cap_b exactly.
static int
s_ratio_cmp (uint64_t load_a, uint32_t cap_a, uint64_t load_b, uint32_t cap_b)
{
    unsigned __int128 a = (unsigned __int128) load_a * cap_b;
    unsigned __int128 b = (unsigned __int128) load_b * cap_a;
    return a < b ? -1 : a > b ? 1 : 0;
}

static uint32_t
s_cap (const s_state_t *self, uint32_t node)
{
    return self->node[node]->capacity;
}

static bool
s_has_room (const s_state_t *self, uint32_t node, uint64_t weight)
{
    uint64_t slots = self->node[node]->slots;
    return slots == 0 || self->load[node] + self->reserved[node] + weight <= slots;
}

//  ---------------------------------------------------------------------
//  Setting up: sorting, classes, lags, current holdings

static int
s_hold_cmp (const void *a, const void *b)
{
    const s_hold_t *x = a, *y = b;
    if (x->task != y->task)
        return x->task < y->task ? -1 : 1;
    if (x->node != y->node)
        return x->node < y->node ? -1 : 1;
    return (int) x->role - (int) y->role;
}

static int
s_lag_cmp (const void *a, const void *b)
{
    const s_lag_t *x = a, *y = b;
    if (x->task != y->task)
        return x->task < y->task ? -1 : 1;
    return x->node < y->node ? -1 : x->node > y->node ? 1 : 0;
}

//  Per-task ranges into an array sorted by task.
static void
s_ranges (uint32_t *first, uint32_t tasks, const void *items, size_t count, size_t size)
{
    size_t at = 0;
    for (uint32_t t = 0; t <= tasks; t++) {
        while (at < count && *(const uint32_t *) ((const uint8_t *) items + at * size) < t)
            at++;
        first[t] = (uint32_t) at;
    }
}

//  Orders task indices by job, then id; context is the sorted task array.
static int
s_job_cmp (const void *a, const void *b, void *context)
{
    const shoal_assign_task_t **task = context;
    const shoal_assign_task_t *x = task[*(const uint32_t *) a];
    const shoal_assign_task_t *y = task[*(const uint32_t *) b];
    int c = strcmp (x->job, y->job);
    return c ? c : strcmp (x->id, y->id);
}

static bool
s_same_requirements (const shoal_assign_task_t *a, const shoal_assign_task_t *b)
{
    if (strcmp (a->job, b->job) != 0 || a->require_count != b->require_count)
        return false;
    for (uint32_t i = 0; i < a->require_count; i++) {
        bool found = false;
        for (uint32_t k = 0; k < b->require_count && !found; k++)
            found = strcmp (a->require[i].key, b->require[k].key) == 0 &&
                    strcmp (a->require[i].value, b->require[k].value) == 0;
        if (!found)
            return false;
    }
    return true;
}

static int
s_setup (s_state_t *self, char *why, size_t why_size)
{
    const shoal_assign_input_t *in = self->in;
    if (in->node_count >= NONE || in->task_count >= NONE)
        return s_fail (why, why_size, "too many nodes or tasks%s", NULL);
    self->nodes = (uint32_t) in->node_count;
    self->tasks = (uint32_t) in->task_count;
    size_t n = self->nodes ? self->nodes : 1, t = self->tasks ? self->tasks : 1;
    self->node = calloc (n, sizeof *self->node);
    self->task = calloc (t, sizeof *self->task);
    self->job_of = calloc (t, sizeof (uint32_t));
    self->class_of = calloc (t, sizeof (uint32_t));
    self->class = calloc (t, sizeof (s_class_t));
    self->target = calloc (t, sizeof (uint32_t));
    self->active = calloc (t, sizeof (uint32_t));
    self->learner = calloc (t, sizeof (uint32_t));
    self->load = calloc (n, sizeof (uint64_t));
    self->reserved = calloc (n, sizeof (uint64_t));
    self->stateful_load = calloc (n, sizeof (uint64_t));
    self->counts = calloc (n, sizeof (uint32_t));
    self->lag_first = calloc (t + 1, sizeof (uint32_t));
    self->cur_first = calloc (t + 1, sizeof (uint32_t));
    if (!self->node || !self->task || !self->job_of || !self->class_of || !self->class ||
        !self->target || !self->active || !self->learner || !self->load || !self->reserved ||
        !self->stateful_load || !self->counts || !self->lag_first || !self->cur_first)
        return s_fail (why, why_size, "out of memory%s", NULL);

    for (uint32_t i = 0; i < self->nodes; i++)
        self->node[i] = &in->nodes[i];
    for (uint32_t i = 0; i < self->tasks; i++)
        self->task[i] = &in->tasks[i];
    qsort (self->node, self->nodes, sizeof *self->node, s_node_cmp);
    qsort (self->task, self->tasks, sizeof *self->task, s_task_cmp);
    for (uint32_t i = 0; i < self->nodes; i++) {
        if (i && strcmp (self->node[i - 1]->id, self->node[i]->id) == 0)
            return s_fail (why, why_size, "node \"%s\" given twice", self->node[i]->id);
        if (self->node[i]->capacity == 0)
            return s_fail (why, why_size, "node \"%s\": capacity 0", self->node[i]->id);
    }
    for (uint32_t i = 0; i < self->tasks; i++) {
        if (i && strcmp (self->task[i - 1]->id, self->task[i]->id) == 0)
            return s_fail (why, why_size, "task \"%s\" given twice", self->task[i]->id);
        if (self->task[i]->weight == 0)
            return s_fail (why, why_size, "task \"%s\": weight 0", self->task[i]->id);
    }

    //  Jobs, numbered in the order of their names; within a job, one class
    //  per distinct set of requirements (usually one).
    uint32_t *by_job = calloc (t, sizeof (uint32_t));
    if (!by_job)
        return s_fail (why, why_size, "out of memory%s", NULL);
    for (uint32_t i = 0; i < self->tasks; i++)
        by_job[i] = i;
    qsort_r (by_job, self->tasks, sizeof (uint32_t), s_job_cmp, self->task);
    uint32_t job_first_class = 0;
    for (uint32_t k = 0; k < self->tasks; k++) {
        uint32_t i = by_job[k];
        const shoal_assign_task_t *task = self->task[i];
        if (k == 0 || strcmp (self->task[by_job[k - 1]]->job, task->job) != 0) {
            self->jobs++;
            job_first_class = self->classes;
        }
        uint32_t class = NONE;
        for (uint32_t c = job_first_class; c < self->classes && class == NONE; c++)
            if (s_same_requirements (self->class[c].first, task))
                class = c;
        if (class == NONE) {
            s_class_t *c = &self->class[self->classes];
            c->job = self->jobs - 1;
            c->first = task;
            c->eligible = calloc (n, 1);
            if (!c->eligible) {
                free (by_job);
                return s_fail (why, why_size, "out of memory%s", NULL);
            }
            for (uint32_t m = 0; m < self->nodes; m++)
                if ((c->eligible[m] = s_may_hold (self->node[m], task)))
                    c->eligible_count++;
            class = self->classes++;
        }
        self->job_of[i] = self->jobs - 1;
        self->class_of[i] = class;
    }
    free (by_job);

    //  Lags and current holdings of known nodes and tasks; the rest are of
    //  nodes that left or tasks that are gone, and are ignored.
    self->lag = calloc (in->lag_count ? in->lag_count : 1, sizeof (s_lag_t));
    self->cur = calloc (in->current_count ? in->current_count : 1, sizeof (s_hold_t));
    if (!self->lag || !self->cur)
        return s_fail (why, why_size, "out of memory%s", NULL);
    for (size_t i = 0; i < in->lag_count; i++) {
        uint32_t task = s_find_task (self, in->lags[i].task);
        uint32_t node = s_find_node (self, in->lags[i].node);
        if (task != NONE && node != NONE)
            self->lag[self->lag_count++] = (s_lag_t){ task, node, in->lags[i].lag };
    }
    qsort (self->lag, self->lag_count, sizeof (s_lag_t), s_lag_cmp);
    s_ranges (self->lag_first, self->tasks, self->lag, self->lag_count, sizeof (s_lag_t));

    for (size_t i = 0; i < in->current_count; i++) {
        uint32_t task = s_find_task (self, in->current[i].task);
        uint32_t node = s_find_node (self, in->current[i].node);
        uint8_t role = in->current[i].role;
        if (task != NONE && node != NONE && role >= SHOAL_ROLE_ACTIVE && role <= SHOAL_ROLE_LEARNER)
            self->cur[self->cur_count++] = (s_hold_t){ task, node, role };
    }
    //  A pair listed in several roles counts in its strongest (active first).
    qsort (self->cur, self->cur_count, sizeof (s_hold_t), s_hold_cmp);
    size_t kept = 0;
    for (size_t i = 0; i < self->cur_count; i++)
        if (!kept || self->cur[kept - 1].task != self->cur[i].task ||
            self->cur[kept - 1].node != self->cur[i].node)
            self->cur[kept++] = self->cur[i];
    self->cur_count = kept;
    s_ranges (self->cur_first, self->tasks, self->cur, self->cur_count, sizeof (s_hold_t));
    return 0;
}

static void
s_teardown (s_state_t *self)
{
    for (uint32_t i = 0; i < self->classes; i++)
        free (self->class[i].eligible);
    free (self->node);
    free (self->task);
    free (self->job_of);
    free (self->class_of);
    free (self->class);
    free (self->target);
    free (self->active);
    free (self->learner);
    free (self->load);
    free (self->reserved);
    free (self->stateful_load);
    free (self->counts);
    free (self->lag_first);
    free (self->cur_first);
    free (self->lag);
    free (self->cur);
}

//  ---------------------------------------------------------------------
//  Pass 1: targets

//  Warm state on node for task: it is caught up, or already warms up or
//  stands by there, so moving the active there costs no new warm-up.
static bool
s_warm (const s_state_t *self, uint32_t task, uint32_t node)
{
    return s_caught_up (self, task, node) || s_current_role (self, task, node) != 0;
}

static void
s_place (s_state_t *self, uint32_t task, uint32_t node)
{
    self->target[task] = node;
    if (node != NONE)
        self->load[node] += s_weight (self, task);
}

static void
s_unplace (s_state_t *self, uint32_t task)
{
    if (self->target[task] != NONE)
        self->load[self->target[task]] -= s_weight (self, task);
    self->target[task] = NONE;
}

//  Where a task was meant to go: its learner, when it has one (the plan of
//  the previous round), else its active.
static uint32_t
s_planned (const s_state_t *self, uint32_t task)
{
    uint32_t active = NONE;
    for (uint32_t i = self->cur_first[task]; i < self->cur_first[task + 1]; i++) {
        if (self->cur[i].role == SHOAL_ROLE_LEARNER && self->task[task]->stateful)
            return self->cur[i].node;
        if (self->cur[i].role == SHOAL_ROLE_ACTIVE && active == NONE)
            active = self->cur[i].node;
    }
    return active;
}

//  The node that may hold task with the least load after taking it, other
//  than except; ties go to warm state, then fewer tasks of the same job,
//  then the lower id.
static uint32_t
s_lightest (const s_state_t *self, uint32_t task, uint32_t except)
{
    uint32_t best = NONE;
    uint64_t w = s_weight (self, task);
    for (uint32_t n = 0; n < self->nodes; n++) {
        if (n == except || !s_eligible (self, task, n) || !s_has_room (self, n, w))
            continue;
        if (best == NONE) {
            best = n;
            continue;
        }
        int c = s_ratio_cmp (self->load[n] + w, s_cap (self, n), self->load[best] + w,
                             s_cap (self, best));
        if (c == 0)
            c = (int) s_warm (self, task, best) - (int) s_warm (self, task, n);
        if (c < 0)
            best = n;
    }
    return best;
}

//  Where to place a task that has no target yet: the lightest node that
//  may hold it, unless a node with its state is nearly as light (within one
//  unit of the lightest node's load before placing), which saves a warm-up.
static uint32_t
s_placement (const s_state_t *self, uint32_t task)
{
    uint32_t lightest = s_lightest (self, task, NONE);
    if (lightest == NONE || !self->task[task]->stateful || s_warm (self, task, lightest))
        return lightest;
    uint64_t w = s_weight (self, task);
    uint32_t warm = NONE;
    for (uint32_t n = 0; n < self->nodes; n++) {
        if (!s_eligible (self, task, n) || !s_has_room (self, n, w) || !s_caught_up (self, task, n))
            continue;
        if (warm == NONE || s_ratio_cmp (self->load[n] + w, s_cap (self, n), self->load[warm] + w,
                                         s_cap (self, warm)) < 0)
            warm = n;
    }
    if (warm == NONE)
        return lightest;
    //  (load_warm + w) / cap_warm - load_lightest / cap_lightest <= 1
    uint32_t cw = s_cap (self, warm), cl = s_cap (self, lightest);
    unsigned __int128 after = (unsigned __int128) (self->load[warm] + w) * cl;
    unsigned __int128 before = (unsigned __int128) self->load[lightest] * cw;
    return after <= before + (unsigned __int128) cw * cl ? warm : lightest;
}

//  Makes room for task by moving one task of the same or smaller weight off
//  a node that may hold it, to another node that has room for that one.
//  Returns the node with room now, or NONE.
static uint32_t
s_make_room (s_state_t *self, uint32_t task)
{
    uint64_t w = s_weight (self, task);
    for (uint32_t n = 0; n < self->nodes; n++) {
        if (!s_eligible (self, task, n))
            continue;
        for (uint32_t u = 0; u < self->tasks; u++) {
            if (self->target[u] != n)
                continue;
            uint64_t slots = self->node[n]->slots;
            if (slots && self->load[n] - s_weight (self, u) + w > slots)
                continue;
            uint32_t to = s_lightest (self, u, n);
            if (to == NONE)
                continue;
            s_unplace (self, u);
            s_place (self, u, to);
            return n;
        }
    }
    return NONE;
}

//  Whether moving task from its target heavy to light evens the load: the
//  two differ by more than one unit of load, and light stays below heavy.
static bool
s_move_evens (const s_state_t *self, uint32_t task, uint32_t heavy, uint32_t light)
{
    uint64_t w = s_weight (self, task);
    uint32_t ch = s_cap (self, heavy), cl = s_cap (self, light);
    unsigned __int128 h = (unsigned __int128) self->load[heavy] * cl;
    unsigned __int128 l = (unsigned __int128) self->load[light] * ch;
    if (h <= l || h - l <= (unsigned __int128) ch * cl)
        return false;
    return s_ratio_cmp (self->load[light] + w, cl, self->load[heavy], ch) < 0;
}

//  Of the nodes task may move to from heavy so that the load evens, the
//  one left lightest; NONE when there is none.
static uint32_t
s_evener (const s_state_t *self, uint32_t task, uint32_t heavy)
{
    uint32_t best = NONE;
    uint64_t w = s_weight (self, task);
    for (uint32_t n = 0; n < self->nodes; n++) {
        if (n == heavy || !s_eligible (self, task, n) || !s_has_room (self, n, w) ||
            !s_move_evens (self, task, heavy, n))
            continue;
        if (best == NONE || s_ratio_cmp (self->load[n] + w, s_cap (self, n), self->load[best] + w,
                                         s_cap (self, best)) < 0)
            best = n;
    }
    return best;
}

//  Lower is a better task to move onto light: warm state there first, then
//  stateless tasks, then cold stateful ones.
static int
s_move_cost (const s_state_t *self, uint32_t task, uint32_t light)
{
    if (!self->task[task]->stateful)
        return 1;
    return s_warm (self, task, light) ? 0 : 2;
}

//  Moves one task from the most loaded node it can leave to the least
//  loaded node that may take it, when that evens the load. Returns whether
//  it moved one.
static bool
s_even_one (s_state_t *self)
{
    //  Nodes from the heaviest down; the first with a useful move wins.
    uint32_t *order = self->counts;
    for (uint32_t n = 0; n < self->nodes; n++)
        order[n] = n;
    for (uint32_t i = 1; i < self->nodes; i++) {
        uint32_t n = order[i], k = i;
        while (k > 0 && s_ratio_cmp (self->load[order[k - 1]], s_cap (self, order[k - 1]),
                                     self->load[n], s_cap (self, n)) < 0) {
            order[k] = order[k - 1];
            k--;
        }
        order[k] = n;
    }
    for (uint32_t i = 0; i < self->nodes; i++) {
        uint32_t heavy = order[i], best = NONE, best_light = NONE;
        int best_cost = 3;
        for (uint32_t t = 0; t < self->tasks; t++) {
            if (self->target[t] != heavy)
                continue;
            uint32_t light = s_evener (self, t, heavy);
            if (light == NONE)
                continue;
            int cost = s_move_cost (self, t, light);
            if (cost < best_cost) {
                best = t, best_light = light, best_cost = cost;
                if (cost == 0)
                    break;
            }
        }
        if (best != NONE) {
            s_unplace (self, best);
            s_place (self, best, best_light);
            return true;
        }
    }
    return false;
}

//  Counts the targets of each job on node into counts (one per job).
static void
s_job_counts (const s_state_t *self, uint32_t node, uint32_t *counts)
{
    memset (counts, 0, self->jobs * sizeof *counts);
    for (uint32_t t = 0; t < self->tasks; t++)
        if (self->target[t] == node)
            counts[self->job_of[t]]++;
}

//  Moves task t from its target a to b when that keeps a at least as
//  loaded as b, else swaps it with a task of the same weight on b whose job
//  b holds more of than a (on_a, on_b: the jobs' counts on a and b; a job a
//  holds more of, t's own included, never qualifies), stateless when
//  stateless_partner. Returns whether it changed anything.
static bool
s_move_or_swap (s_state_t *self, uint32_t t, uint32_t a, uint32_t b, const uint32_t *on_a,
                const uint32_t *on_b, bool stateless_partner)
{
    uint64_t w = s_weight (self, t);
    if (self->load[a] >= self->load[b] + w && s_has_room (self, b, w)) {
        s_unplace (self, t);
        s_place (self, t, b);
        return true;
    }
    for (uint32_t u = 0; u < self->tasks; u++) {
        uint32_t other = self->job_of[u];
        if (self->target[u] != b || (stateless_partner && self->task[u]->stateful) ||
            s_weight (self, u) != w || !s_eligible (self, u, a) || on_b[other] <= on_a[other])
            continue;
        s_unplace (self, t);
        s_unplace (self, u);
        s_place (self, t, b);
        s_place (self, u, a);
        return true;
    }
    return false;
}

//  Spreads stateful work over nodes of equal capacity, so that stateful and
//  stateless tasks are balanced each on their own, not only together: a
//  stateful task moves from a node with at least two more stateful tasks
//  when that keeps the loads even, or swaps with a stateless task of the
//  same weight; either only where its job stays spread. Returns whether it
//  changed anything.
static bool
s_spread_stateful (s_state_t *self, uint32_t *on_a, uint32_t *on_b)
{
    uint32_t *count = self->counts;
    memset (count, 0, self->nodes * sizeof *count);
    for (uint32_t t = 0; t < self->tasks; t++)
        if (self->task[t]->stateful && self->target[t] != NONE)
            count[self->target[t]]++;
    for (uint32_t a = 0; a < self->nodes; a++)
        for (uint32_t b = 0; b < self->nodes; b++) {
            if (count[a] < count[b] + 2 || s_cap (self, a) != s_cap (self, b))
                continue;
            s_job_counts (self, a, on_a);
            s_job_counts (self, b, on_b);
            for (uint32_t t = 0; t < self->tasks; t++) {
                uint32_t job = self->job_of[t];
                if (self->target[t] == a && self->task[t]->stateful && s_eligible (self, t, b) &&
                    on_a[job] > on_b[job] && s_move_or_swap (self, t, a, b, on_a, on_b, true))
                    return true;
            }
        }
    return false;
}

//  Evens job between nodes a and b (of equal capacity, a holding at least
//  two more of it), by s_move_or_swap with a task of any other job.
static bool
s_spread_pair (s_state_t *self, uint32_t job, uint32_t a, uint32_t b, uint32_t *on_a,
               uint32_t *on_b)
{
    s_job_counts (self, a, on_a);
    s_job_counts (self, b, on_b);
    for (uint32_t t = 0; t < self->tasks; t++)
        if (self->target[t] == a && self->job_of[t] == job && s_eligible (self, t, b) &&
            s_move_or_swap (self, t, a, b, on_a, on_b, false))
            return true;
    return false;
}

//  Spreads one job over nodes of equal capacity so that their counts of it
//  differ by at most one, by moves that do not unbalance the nodes and by
//  swaps. Returns whether it changed anything.
static bool
s_spread_one (s_state_t *self, uint32_t job, uint32_t *on_a, uint32_t *on_b)
{
    uint32_t *count = self->counts;
    memset (count, 0, self->nodes * sizeof *count);
    for (uint32_t t = 0; t < self->tasks; t++)
        if (self->job_of[t] == job && self->target[t] != NONE)
            count[self->target[t]]++;
    for (uint32_t a = 0; a < self->nodes; a++)
        for (uint32_t b = 0; b < self->nodes; b++)
            if (count[a] >= count[b] + 2 && s_cap (self, a) == s_cap (self, b) &&
                s_spread_pair (self, job, a, b, on_a, on_b))
                return true;
    return false;
}

//  Orders tasks to place: heavier first, then those fewer nodes may hold,
//  then by id.
static int
s_placing_cmp (const void *a, const void *b, void *context)
{
    const s_state_t *self = context;
    uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;
    if (s_weight (self, x) != s_weight (self, y))
        return s_weight (self, x) > s_weight (self, y) ? -1 : 1;
    uint32_t ex = self->class[self->class_of[x]].eligible_count;
    uint32_t ey = self->class[self->class_of[y]].eligible_count;
    if (ex != ey)
        return ex < ey ? -1 : 1;
    return x < y ? -1 : x > y ? 1 : 0;
}

//  Places a task that has no target: where s_placement says, or where room
//  can be made; it stays unplaced when neither works.
static void
s_place_new (s_state_t *self, uint32_t task)
{
    uint32_t node = s_placement (self, task);
    if (node == NONE)
        node = s_make_room (self, task);
    s_place (self, task, node);
}

static int
s_targets (s_state_t *self)
{
    //  Keep what is where it was meant to be, as long as the node may hold it.
    for (uint32_t t = 0; t < self->tasks; t++) {
        self->target[t] = NONE;
        uint32_t node = s_planned (self, t);
        if (node != NONE && s_eligible (self, t, node) &&
            s_has_room (self, node, s_weight (self, t)))
            s_place (self, t, node);
    }
    //  The rest, heaviest first and among equals the most constrained first,
    //  where s_placement says.
    uint32_t *order = calloc (self->tasks ? self->tasks : 1, sizeof (uint32_t));
    if (!order)
        return -1;
    uint32_t unplaced = 0;
    for (uint32_t t = 0; t < self->tasks; t++)
        if (self->target[t] == NONE)
            order[unplaced++] = t;
    if (unplaced)
        qsort_r (order, unplaced, sizeof (uint32_t), s_placing_cmp, self);
    for (uint32_t i = 0; i < unplaced; i++)
        s_place_new (self, order[i]);
    //  Even the load, then spread each job; each step lowers a measure of
    //  imbalance, and the bound only guards against a mistake.
    for (uint64_t step = 0; step < 4 * (uint64_t) self->tasks + 16 && s_even_one (self); step++)
        ;
    uint32_t *on_a = calloc (self->jobs ? self->jobs : 1, sizeof (uint32_t));
    uint32_t *on_b = calloc (self->jobs ? self->jobs : 1, sizeof (uint32_t));
    if (!on_a || !on_b) {
        free (on_a);
        free (on_b);
        free (order);
        return -1;
    }
    //  Each spread step lowers the sum of squares of the per-node counts it
    //  evens without raising the other's; the bounds only guard against a
    //  mistake.
    for (int pass = 0; pass < 8; pass++) {
        bool changed = false;
        for (uint32_t job = 0; job < self->jobs; job++)
            for (uint64_t step = 0;
                 step < 4 * (uint64_t) self->tasks + 16 && s_spread_one (self, job, on_a, on_b);
                 step++)
                changed = true;
        for (uint64_t step = 0;
             step < 4 * (uint64_t) self->tasks + 16 && s_spread_stateful (self, on_a, on_b); step++)
            changed = true;
        if (!changed)
            break;
    }
    free (on_a);
    free (on_b);
    //  Evening may have made room for a task that had none.
    for (uint32_t i = 0; i < unplaced; i++)
        if (self->target[order[i]] == NONE)
            s_place_new (self, order[i]);
    free (order);
    return 0;
}

//  ---------------------------------------------------------------------
//  Pass 2: actives and learners

//  The caught-up node that may keep task active instead of its cold
//  target: its current active when that is caught up, else the lightest.
static uint32_t
s_keeper (const s_state_t *self, uint32_t task)
{
    uint64_t w = s_weight (self, task);
    uint32_t best = NONE;
    for (uint32_t n = 0; n < self->nodes; n++) {
        if (!s_eligible (self, task, n) || !s_caught_up (self, task, n) || !s_has_room (self, n, w))
            continue;
        if (s_current_role (self, task, n) == SHOAL_ROLE_ACTIVE)
            return n;
        if (best == NONE ||
            s_ratio_cmp (self->load[n], s_cap (self, n), self->load[best], s_cap (self, best)) < 0)
            best = n;
    }
    return best;
}

//  When no node is caught up: the node of least lag (no state: no lag) with
//  room, the target among equals; NONE when no node has room.
static uint32_t
s_least_lag (const s_state_t *self, uint32_t task, uint32_t target)
{
    uint64_t w = s_weight (self, task);
    uint32_t best = s_has_room (self, target, w) ? target : NONE;
    uint64_t best_lag = best == NONE ? UINT64_MAX : s_lag (self, task, target);
    for (uint32_t n = 0; n < self->nodes; n++) {
        if (n == target || !s_eligible (self, task, n) || !s_has_room (self, n, w))
            continue;
        uint64_t lag = s_lag (self, task, n);
        if (best == NONE || lag < best_lag) {
            best = n;
            best_lag = lag;
        }
    }
    return best;
}

//  Settles each task's active. Stateless tasks and those whose target is
//  caught up go to their target. The others are first taken off their
//  targets, so that the room they leave counts; then each stays on a
//  caught-up node with room, with a learner on its target while warm-ups
//  last; or, when no node is caught up, goes to a node of least lag. Loads
//  from here on are those of the actives.
static bool
s_actives (s_state_t *self)
{
    bool followup = false;
    for (uint32_t t = 0; t < self->tasks; t++) {
        uint32_t target = self->target[t];
        self->active[t] = target;
        self->learner[t] = NONE;
        if (target != NONE && self->task[t]->stateful && !s_caught_up (self, t, target)) {
            self->active[t] = NONE;
            self->load[target] -= s_weight (self, t);
            self->reserved[target] += s_weight (self, t);
        }
    }
    //  First, as long as that settles any: tasks that a caught-up node with
    //  room may keep; then the rest, on a caught-up node if room has come
    //  free, else on a node of least lag. The room that targets still to
    //  settle need is reserved, so that a task kept where it is never pushes
    //  out one that can go nowhere else.
    bool settled = true;
    for (int round = 0; round < 2; round += settled ? 0 : 1) {
        settled = false;
        for (uint32_t t = 0; t < self->tasks; t++) {
            uint32_t target = self->target[t];
            if (target == NONE || self->active[t] != NONE)
                continue;
            uint64_t w = s_weight (self, t);
            self->reserved[target] -= w;
            uint32_t node = s_keeper (self, t);
            if (node == NONE && round == 1)
                node = s_least_lag (self, t, target);
            if (node == NONE) {
                self->reserved[target] += w;
                continue; //  the next round, or no room left anywhere
            }
            self->active[t] = node;
            self->load[node] += s_weight (self, t);
            settled = round == 0;
            if (node != target) {
                followup = true;
                if (self->warmups < self->in->config.max_warmups) {
                    self->learner[t] = target;
                    self->warmups++;
                }
            }
        }
    }
    return followup;
}

//  ---------------------------------------------------------------------
//  Pass 3: standbys

static bool
s_holds (const s_state_t *self, uint32_t task, uint32_t node, const uint32_t *chosen,
         uint32_t count)
{
    if (self->active[task] == node || self->learner[task] == node)
        return true;
    for (uint32_t i = 0; i < count; i++)
        if (chosen[i] == node)
            return true;
    return false;
}

//  Whether node's spread_by value differs from those of every holder of
//  task so far (a node without the label differs from none and all).
static bool
s_spreads (const s_state_t *self, uint32_t task, uint32_t node, const uint32_t *chosen,
           uint32_t count)
{
    const char *key = self->in->config.spread_by;
    if (!key)
        return true;
    const char *value = s_label (self->node[node], key);
    if (!value)
        return false;
    uint32_t holders[2] = { self->active[task], self->learner[task] };
    for (uint32_t i = 0; i < 2 + count; i++) {
        uint32_t other = i < 2 ? holders[i] : chosen[i - 2];
        if (other == NONE)
            continue;
        const char *theirs = s_label (self->node[other], key);
        if (theirs && strcmp (theirs, value) == 0)
            return false;
    }
    return true;
}

//  Compares two candidate standby nodes for task: negative when a is better.
static int
s_standby_cmp (const s_state_t *self, uint32_t task, uint32_t a, uint32_t b, const uint32_t *chosen,
               uint32_t count)
{
    int c = (int) s_spreads (self, task, b, chosen, count) -
            (int) s_spreads (self, task, a, chosen, count);
    if (c)
        return c;
    c = (int) (s_current_role (self, task, b) == SHOAL_ROLE_STANDBY) -
        (int) (s_current_role (self, task, a) == SHOAL_ROLE_STANDBY);
    if (c)
        return c;
    c = (int) s_caught_up (self, task, b) - (int) s_caught_up (self, task, a);
    if (c)
        return c;
    uint64_t la = s_lag (self, task, a), lb = s_lag (self, task, b);
    if (la != lb)
        return la < lb ? -1 : 1;
    return s_ratio_cmp (self->stateful_load[a], s_cap (self, a), self->stateful_load[b],
                        s_cap (self, b));
}

static int
s_hold_out (s_state_t *self, uint32_t task, uint32_t node, uint8_t role)
{
    if (self->out_count == self->out_size) {
        size_t size = self->out_size ? 2 * self->out_size : 64;
        s_hold_t *out = realloc (self->out, size * sizeof *out);
        if (!out)
            return -1;
        self->out = out;
        self->out_size = size;
    }
    self->out[self->out_count++] = (s_hold_t){ task, node, role };
    return 0;
}

typedef enum { S_STAY, S_MOVE, S_WARM_UP } s_standby_move_t;

//  Whether node may take over the standby at holding from its node: it may
//  hold the task and does not yet, and the move keeps the spread (judged
//  among the task's other standbys, in others). The move is free when the
//  standby was placed this round or node is caught up; otherwise node must
//  first warm up as a learner while the standby stays (S_WARM_UP).
static s_standby_move_t
s_standby_move (const s_state_t *self, const s_hold_t *holding, uint32_t node,
                const uint32_t *others, uint32_t count)
{
    uint32_t t = holding->task;
    if (!s_eligible (self, t, node) || s_holds (self, t, node, others, count))
        return S_STAY;
    if (self->in->config.spread_by && !s_spreads (self, t, node, others, count) &&
        s_spreads (self, t, holding->node, others, count))
        return S_STAY;
    if (s_current_role (self, t, holding->node) == SHOAL_ROLE_STANDBY &&
        !s_caught_up (self, t, node))
        return S_WARM_UP;
    return S_MOVE;
}

//  Moves standbys from nodes with more stateful load to nodes with less
//  while the two differ by more than one unit, as pass 1 does for actives,
//  so that stateful work is balanced too. A standby that would land on a
//  node without its state gets a learner there instead, within max_warmups,
//  and stays until the learner is caught up. first and count give each
//  task's standbys in the output; others is scratch for as many. Returns
//  whether a move waits for a learner.
static bool
s_even_standbys (s_state_t *self, const uint32_t *first, const uint32_t *count, uint32_t *others)
{
    bool waiting = false;
    for (uint64_t step = 0; step < 4 * (uint64_t) self->out_count + 16; step++) {
        bool moved = false;
        for (size_t i = 0; i < self->out_count && !moved; i++) {
            s_hold_t *holding = &self->out[i];
            uint32_t t = holding->task, heavy = holding->node, kept = 0;
            for (uint32_t k = 0; k < count[t]; k++)
                if (first[t] + k != i)
                    others[kept++] = self->out[first[t] + k].node;
            uint64_t w = s_weight (self, t);
            uint32_t ch = s_cap (self, heavy);
            for (uint32_t light = 0; light < self->nodes && !moved; light++) {
                uint32_t cl = s_cap (self, light);
                unsigned __int128 h = (unsigned __int128) self->stateful_load[heavy] * cl;
                unsigned __int128 l = (unsigned __int128) self->stateful_load[light] * ch;
                if (light == heavy || h <= l || h - l <= (unsigned __int128) ch * cl ||
                    s_ratio_cmp (self->stateful_load[light] + w, cl, self->stateful_load[heavy],
                                 ch) >= 0)
                    continue;
                s_standby_move_t move = s_standby_move (self, holding, light, others, kept);
                if (move == S_MOVE) {
                    self->stateful_load[heavy] -= w;
                    self->stateful_load[light] += w;
                    holding->node = light;
                    moved = true;
                } else if (move == S_WARM_UP) {
                    waiting = true;
                    if (self->learner[t] == NONE && self->warmups < self->in->config.max_warmups) {
                        self->learner[t] = light;
                        self->warmups++;
                    }
                    break;
                }
            }
        }
        if (!moved)
            break;
    }
    return waiting;
}

static int
s_standbys (s_state_t *self, bool *followup)
{
    uint32_t want = self->in->config.standbys;
    uint32_t *chosen = calloc (want ? want : 1, sizeof (uint32_t));
    uint32_t *first = calloc (self->tasks ? self->tasks : 1, sizeof (uint32_t));
    uint32_t *count = calloc (self->tasks ? self->tasks : 1, sizeof (uint32_t));
    int rc = chosen && first && count ? 0 : -1;
    for (uint32_t t = 0; t < self->tasks; t++)
        if (self->active[t] != NONE && self->task[t]->stateful)
            self->stateful_load[self->active[t]] += s_weight (self, t);
    for (uint32_t t = 0; t < self->tasks && rc == 0; t++) {
        if (self->active[t] == NONE || !self->task[t]->stateful)
            continue;
        uint32_t eligible = self->class[self->class_of[t]].eligible_count;
        uint32_t need = want < eligible - 1 ? want : eligible - 1;
        if (self->learner[t] != NONE && need > 0)
            need--; //  a learner is a standby-or-learner holder too
        uint32_t chose = 0;
        while (chose < need) {
            uint32_t best = NONE;
            for (uint32_t n = 0; n < self->nodes; n++)
                if (s_eligible (self, t, n) && !s_holds (self, t, n, chosen, chose) &&
                    (best == NONE || s_standby_cmp (self, t, n, best, chosen, chose) < 0))
                    best = n;
            if (best == NONE)
                break;
            chosen[chose++] = best;
            self->stateful_load[best] += s_weight (self, t);
        }
        first[t] = (uint32_t) self->out_count;
        count[t] = chose;
        for (uint32_t i = 0; i < chose && rc == 0; i++)
            rc = s_hold_out (self, t, chosen[i], SHOAL_ROLE_STANDBY);
    }
    if (rc == 0 && s_even_standbys (self, first, count, chosen))
        *followup = true;
    free (chosen);
    free (first);
    free (count);
    return rc;
}

//  ---------------------------------------------------------------------
//  Pass 4: the output

static int
s_out_cmp (const void *a, const void *b)
{
    const s_hold_t *x = a, *y = b;
    if (x->node != y->node)
        return x->node < y->node ? -1 : 1;
    if (x->role != y->role)
        return (int) x->role - (int) y->role;
    return x->task < y->task ? -1 : x->task > y->task ? 1 : 0;
}

static int
s_output (s_state_t *self, bool followup, shoal_assign_output_t *output)
{
    for (uint32_t t = 0; t < self->tasks; t++) {
        if (self->active[t] != NONE && s_hold_out (self, t, self->active[t], SHOAL_ROLE_ACTIVE))
            return -1;
        if (self->learner[t] != NONE && s_hold_out (self, t, self->learner[t], SHOAL_ROLE_LEARNER))
            return -1;
    }
    if (self->out_count)
        qsort (self->out, self->out_count, sizeof (s_hold_t), s_out_cmp);
    output->holdings = calloc (self->out_count ? self->out_count : 1, sizeof *output->holdings);
    output->unassigned = calloc (self->tasks ? self->tasks : 1, sizeof *output->unassigned);
    if (!output->holdings || !output->unassigned)
        return -1;
    for (size_t i = 0; i < self->out_count; i++) {
        const s_hold_t *h = &self->out[i];
        output->holdings[i] =
            (shoal_assign_holding_t){ self->node[h->node]->id, self->task[h->task]->id, h->role };
        if (s_current_role (self, h->task, h->node) != h->role)
            output->moves[h->role - 1]++;
    }
    output->holding_count = self->out_count;
    for (uint32_t t = 0; t < self->tasks; t++)
        if (self->active[t] == NONE)
            output->unassigned[output->unassigned_count++] = self->task[t]->id;
    output->followup = followup;
    return 0;
}

//  ---------------------------------------------------------------------

int
shoal_assign (const shoal_assign_input_t *input, shoal_assign_output_t *output, char *why,
              size_t why_size)
{
    memset (output, 0, sizeof *output);
    s_state_t state = { .in = input };
    int rc = s_setup (&state, why, why_size);
    if (rc == 0 && s_targets (&state) != 0)
        rc = s_fail (why, why_size, "out of memory%s", NULL);
    bool followup = rc == 0 && s_actives (&state);
    if (rc == 0 &&
        (s_standbys (&state, &followup) != 0 || s_output (&state, followup, output) != 0))
        rc = s_fail (why, why_size, "out of memory%s", NULL);
    free (state.out);
    s_teardown (&state);
    if (rc != 0)
        shoal_assign_output_release (output);
    return rc;
}

void
shoal_assign_output_release (shoal_assign_output_t *output)
{
    free (output->holdings);
    free (output->unassigned);
    memset (output, 0, sizeof *output);
}

/*  tests/assign_check.c: checks one assignment against the assignor's contract.

    Names are resolved once: nodes and tasks are looked up by id in sorted
    tables, and the output's holdings, the input's current assignment and the
    lags become (task, node) index pairs sorted by task, so that every per-task
    question is answered by walking one range. The cost is linear in the
    holdings and lags times a logarithm, and in nodes for each unassigned task,
    so the benchmark can check its largest outputs too.
*/

#include "tests/assign_check.h"
#include "wire/ids.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define S_NONE     SIZE_MAX
#define S_LAG_NONE UINT64_MAX

static const char *s_role_names[] = { "none", "active", "standby", "learner" };

//  An id and the index of what it names in the input.
typedef struct {
    const char *id;
    size_t index;
} s_name_t;

//  A holding or a lag resolved to indices; role is 0 for a lag.
typedef struct {
    size_t task;
    size_t node;
    uint8_t role;
    uint64_t lag;
} s_entry_t;

typedef struct {
    const shoal_assign_input_t *input;
    const shoal_assign_output_t *output;
    char *report;
    size_t report_size;
    size_t report_used;
    int violations;
    s_name_t *nodes; //  sorted by id
    s_name_t *tasks; //  sorted by id
    s_entry_t *held; //  the output's holdings of known names
    size_t held_count;
    s_entry_t *was; //  the input's current holdings of known names
    size_t was_count;
    s_entry_t *lags; //  the input's lags of known names
    size_t lag_count;
    uint64_t *active_weight; //  per node, in the output
    bool *unassigned;        //  per task, listed in the output's unassigned
} s_check_t;

//  ---------------------------------------------------------------------
//  Lookups

static int
s_name_compare (const void *a, const void *b)
{
    return strcmp (((const s_name_t *) a)->id, ((const s_name_t *) b)->id);
}

static int
s_entry_compare (const void *a, const void *b)
{
    const s_entry_t *x = a, *y = b;
    if (x->task != y->task)
        return x->task < y->task ? -1 : 1;
    if (x->node != y->node)
        return x->node < y->node ? -1 : 1;
    if (x->role != y->role)
        return x->role < y->role ? -1 : 1;
    return 0;
}

static int
s_name_order (const void *name, const void *id)
{
    return strcmp (((const s_name_t *) name)->id, id);
}

//  The index named by id in table (sorted), or S_NONE.
static size_t
s_find (const s_name_t *table, size_t count, const char *id)
{
    if (!id)
        return S_NONE;
    size_t at = shoal_lower_bound (table, count, sizeof *table, id, s_name_order);
    return at < count && strcmp (table[at].id, id) == 0 ? table[at].index : S_NONE;
}

static s_name_t *
s_name_table (size_t count, const void *items, size_t item_size)
{
    s_name_t *table = malloc ((count ? count : 1) * sizeof *table);
    if (!table)
        return NULL;
    for (size_t i = 0; i < count; i++) {
        //  Node and task records both start with their id.
        table[i].id = *(const char *const *) ((const char *) items + i * item_size);
        table[i].index = i;
    }
    qsort (table, count, sizeof *table, s_name_compare);
    return table;
}

//  The first entry of task at or after from, in entries sorted by task.
static size_t
s_range_end (const s_entry_t *entries, size_t count, size_t from, size_t task)
{
    while (from < count && entries[from].task == task)
        from++;
    return from;
}

//  ---------------------------------------------------------------------
//  Eligibility: handles and require, which bind every role

static const char *
s_label (const shoal_assign_node_t *node, const char *key)
{
    for (uint32_t i = 0; i < node->label_count; i++)
        if (strcmp (node->labels[i].key, key) == 0)
            return node->labels[i].value;
    return NULL;
}

static bool
s_eligible (const shoal_assign_node_t *node, const shoal_assign_task_t *task)
{
    if (!node->handles_all) {
        bool handled = false;
        for (uint32_t i = 0; i < node->handle_count && !handled; i++)
            handled = strcmp (node->handles[i], task->job) == 0;
        if (!handled)
            return false;
    }
    for (uint32_t i = 0; i < task->require_count; i++) {
        const char *value = s_label (node, task->require[i].key);
        if (!value || strcmp (value, task->require[i].value) != 0)
            return false;
    }
    return true;
}

//  True when node takes new tasks: it is neither cordoned nor draining.
static bool
s_open (const shoal_assign_node_t *node)
{
    return node->cordon == SHOAL_CORDON_NONE;
}

//  True when two tasks may be held by the same nodes, to reuse a count.
static bool
s_same_constraints (const shoal_assign_task_t *a, const shoal_assign_task_t *b)
{
    if (strcmp (a->job, b->job) != 0 || a->require_count != b->require_count)
        return false;
    for (uint32_t i = 0; i < a->require_count; i++)
        if (strcmp (a->require[i].key, b->require[i].key) != 0 ||
            strcmp (a->require[i].value, b->require[i].value) != 0)
            return false;
    return true;
}

static size_t
s_eligible_count (const shoal_assign_input_t *input, const shoal_assign_task_t *task)
{
    size_t count = 0;
    for (size_t n = 0; n < input->node_count; n++)
        count += s_open (&input->nodes[n]) && s_eligible (&input->nodes[n], task);
    return count;
}

//  True when task's weight fits beside the actives node holds in the output.
static bool
s_room (const s_check_t *self, size_t node, size_t task)
{
    uint64_t slots = self->input->nodes[node].slots;
    return slots == 0 || self->active_weight[node] + self->input->tasks[task].weight <= slots;
}

//  ---------------------------------------------------------------------
//  Reporting

static void
s_violation (s_check_t *self, const char *format, ...)
{
    self->violations++;
    if (self->report_used + 1 >= self->report_size)
        return;
    size_t room = self->report_size - self->report_used;
    va_list args;
    va_start (args, format);
    int length = vsnprintf (self->report + self->report_used, room, format, args);
    va_end (args);
    if (length < 0 || (size_t) length + 1 >= room) {
        //  A line that does not fit is dropped whole, never cut.
        self->report[self->report_used] = 0;
        self->report_used = self->report_size;
        return;
    }
    self->report_used += (size_t) length;
    self->report[self->report_used++] = '\n';
    self->report[self->report_used] = 0;
}

static const char *
s_node_id (const s_check_t *self, size_t node)
{
    return self->input->nodes[node].id;
}

static const char *
s_task_id (const s_check_t *self, size_t task)
{
    return self->input->tasks[task].id;
}

//  ---------------------------------------------------------------------
//  The output's shape: names, roles, order, duplicates

static int
s_string_order (const char *a, const char *b)
{
    return strcmp (a ? a : "", b ? b : "");
}

static void
s_check_holdings (s_check_t *self)
{
    const shoal_assign_output_t *output = self->output;
    for (size_t i = 0; i < output->holding_count; i++) {
        const shoal_assign_holding_t *holding = &output->holdings[i];
        if (i > 0) {
            const shoal_assign_holding_t *before = &output->holdings[i - 1];
            int order = s_string_order (before->node, holding->node);
            if (order == 0)
                order = before->role - holding->role;
            if (order == 0)
                order = s_string_order (before->task, holding->task);
            if (order >= 0)
                s_violation (self,
                             "order: holding %zu (%s %s %s) does not come after (%s %s %s): "
                             "holdings sort by node, role, task, each once",
                             i, holding->node, holding->task,
                             holding->role <= 3 ? s_role_names[holding->role] : "?", before->node,
                             before->task, before->role <= 3 ? s_role_names[before->role] : "?");
        }
        if (!holding->node || !holding->task) {
            s_violation (self, "1: holding %zu names no node or no task", i);
            continue;
        }
        if (holding->role < SHOAL_ROLE_ACTIVE || holding->role > SHOAL_ROLE_LEARNER) {
            s_violation (self, "1: %s holds %s in role %u, which is not a role", holding->node,
                         holding->task, holding->role);
            continue;
        }
        size_t node = s_find (self->nodes, self->input->node_count, holding->node);
        size_t task = s_find (self->tasks, self->input->task_count, holding->task);
        if (node == S_NONE)
            s_violation (self, "1: %s holds %s but is not a node of the input", holding->node,
                         holding->task);
        if (task == S_NONE)
            s_violation (self, "1: %s holds %s, which is not a task of the input", holding->node,
                         holding->task);
        if (node == S_NONE || task == S_NONE)
            continue;
        self->held[self->held_count++] = (s_entry_t){ task, node, holding->role, 0 };
        if (holding->role == SHOAL_ROLE_ACTIVE)
            self->active_weight[node] += self->input->tasks[task].weight;
    }
    qsort (self->held, self->held_count, sizeof *self->held, s_entry_compare);
    for (size_t i = 1; i < self->held_count; i++)
        if (self->held[i].task == self->held[i - 1].task &&
            self->held[i].node == self->held[i - 1].node)
            s_violation (self, "1: %s holds %s twice (%s and %s)",
                         s_node_id (self, self->held[i].node), s_task_id (self, self->held[i].task),
                         s_role_names[self->held[i - 1].role], s_role_names[self->held[i].role]);

    for (size_t i = 0; i < output->unassigned_count; i++) {
        const char *id = output->unassigned[i];
        if (i > 0 && s_string_order (output->unassigned[i - 1], id) >= 0)
            s_violation (self, "order: unassigned %s does not come after %s", id,
                         output->unassigned[i - 1]);
        size_t task = s_find (self->tasks, self->input->task_count, id);
        if (task == S_NONE)
            s_violation (self, "1: unassigned names %s, which is not a task of the input",
                         id ? id : "(null)");
        else
            self->unassigned[task] = true;
    }
}

//  ---------------------------------------------------------------------
//  The input's current assignment and lags, resolved

static void
s_resolve_input (s_check_t *self)
{
    const shoal_assign_input_t *input = self->input;
    for (size_t i = 0; i < input->current_count; i++) {
        const shoal_assign_holding_t *holding = &input->current[i];
        size_t node = s_find (self->nodes, input->node_count, holding->node);
        size_t task = s_find (self->tasks, input->task_count, holding->task);
        if (node != S_NONE && task != S_NONE)
            self->was[self->was_count++] = (s_entry_t){ task, node, holding->role, 0 };
    }
    qsort (self->was, self->was_count, sizeof *self->was, s_entry_compare);
    for (size_t i = 0; i < input->lag_count; i++) {
        const shoal_assign_lag_t *lag = &input->lags[i];
        size_t node = s_find (self->nodes, input->node_count, lag->node);
        size_t task = s_find (self->tasks, input->task_count, lag->task);
        if (node != S_NONE && task != S_NONE)
            self->lags[self->lag_count++] = (s_entry_t){ task, node, 0, lag->lag };
    }
    qsort (self->lags, self->lag_count, sizeof *self->lags, s_entry_compare);
}

//  ---------------------------------------------------------------------
//  Per task: properties 1 to 5

typedef struct {
    size_t task;
    size_t eligible;  //  nodes that may hold it
    size_t actives;   //  its active holders in the output
    size_t active;    //  the first of them
    size_t replicas;  //  its standby and learner holders in the output
    size_t held_from; //  its range in held
    size_t held_to;   //
    size_t was_from;  //  its range in was
    size_t was_to;    //
    size_t lags_from; //  its range in lags
    size_t lags_to;   //
} s_task_view_t;

//  Property 1: one active, or listed as unassigned because no node may hold
//  it or none has room for it.
static void
s_check_placed (s_check_t *self, const s_task_view_t *view)
{
    const char *id = s_task_id (self, view->task);
    if (view->actives > 1)
        s_violation (self, "1: %s has %zu actives", id, view->actives);
    if (view->actives > 0 && self->unassigned[view->task])
        s_violation (self, "1: %s is active on %s and listed as unassigned", id,
                     s_node_id (self, view->active));
    if (view->actives > 0)
        return;
    if (!self->unassigned[view->task]) {
        s_violation (self, "1: %s has no active and is not listed as unassigned", id);
        return;
    }
    const shoal_assign_task_t *task = &self->input->tasks[view->task];
    for (size_t n = 0; n < self->input->node_count; n++)
        if (s_open (&self->input->nodes[n]) && s_eligible (&self->input->nodes[n], task) &&
            s_room (self, n, view->task)) {
            s_violation (self, "1: %s is unassigned but %s may hold it and has slot room", id,
                         s_node_id (self, n));
            return;
        }
}

//  Properties 2, 3 and 5 for the task's holders.
static void
s_check_holders (s_check_t *self, const s_task_view_t *view)
{
    const shoal_assign_task_t *task = &self->input->tasks[view->task];
    for (size_t i = view->held_from; i < view->held_to; i++) {
        const s_entry_t *held = &self->held[i];
        if (!s_eligible (&self->input->nodes[held->node], task))
            s_violation (self, "5: %s holds %s as %s but handles or require forbid it",
                         s_node_id (self, held->node), task->id, s_role_names[held->role]);
        if (!task->stateful && held->role != SHOAL_ROLE_ACTIVE)
            s_violation (self, "2: %s holds stateless %s as %s", s_node_id (self, held->node),
                         task->id, s_role_names[held->role]);
    }
    //  A cordoned node may keep what it holds, and takes nothing new.
    size_t eligible = view->eligible;
    for (size_t i = view->held_from; i < view->held_to; i++)
        eligible += !s_open (&self->input->nodes[self->held[i].node]);
    if (!task->stateful || view->actives != 1 || eligible == 0)
        return;
    size_t wanted = self->input->config.standbys;
    if (wanted > eligible - 1)
        wanted = eligible - 1;
    if (view->replicas < wanted)
        s_violation (self, "3: %s has %zu standby or learner holders, fewer than %zu", task->id,
                     view->replicas, wanted);
}

//  Property 4: the active of a stateful task sits on a caught-up node when
//  one may hold it, else on one of least lag; a better node is an objection
//  only when the task fits in its slots.
static void
s_check_caught_up (s_check_t *self, const s_task_view_t *view)
{
    const shoal_assign_input_t *input = self->input;
    const shoal_assign_task_t *task = &input->tasks[view->task];
    if (!task->stateful || view->actives != 1)
        return;
    size_t active = view->active;
    bool active_caught_up = false;
    size_t caught_up = S_NONE;      //  some eligible caught-up node
    size_t caught_up_room = S_NONE; //  some eligible caught-up node with room
    for (size_t i = view->was_from; i < view->was_to; i++) {
        size_t node = self->was[i].node;
        if (self->was[i].role != SHOAL_ROLE_ACTIVE || !s_eligible (&input->nodes[node], task) ||
            (node != active && !s_open (&input->nodes[node])))
            continue;
        if (node == active)
            active_caught_up = true;
        caught_up = node;
        if (node != active && s_room (self, node, view->task))
            caught_up_room = node;
    }
    uint64_t active_lag = S_LAG_NONE;
    for (size_t i = view->lags_from; i < view->lags_to; i++) {
        size_t node = self->lags[i].node;
        if (!s_eligible (&input->nodes[node], task) ||
            (node != active && !s_open (&input->nodes[node])))
            continue;
        if (node == active && self->lags[i].lag < active_lag)
            active_lag = self->lags[i].lag;
        if (self->lags[i].lag > input->config.acceptable_lag)
            continue;
        if (node == active)
            active_caught_up = true;
        caught_up = node;
        if (node != active && s_room (self, node, view->task))
            caught_up_room = node;
    }
    if (active_caught_up && input->nodes[active].cordon == SHOAL_CORDON_DRAINING &&
        caught_up_room != S_NONE)
        s_violation (self, "9: %s stays on draining %s while %s is caught up and has slot room",
                     task->id, s_node_id (self, active), s_node_id (self, caught_up_room));
    if (active_caught_up)
        return;
    if (caught_up != S_NONE) {
        if (caught_up_room != S_NONE)
            s_violation (self,
                         "4: %s is active on %s, not caught up, while %s is caught up and "
                         "has slot room",
                         task->id, s_node_id (self, active), s_node_id (self, caught_up_room));
        return;
    }
    for (size_t i = view->lags_from; i < view->lags_to; i++) {
        size_t node = self->lags[i].node;
        if (node != active && self->lags[i].lag < active_lag && s_open (&input->nodes[node]) &&
            s_eligible (&input->nodes[node], task) && s_room (self, node, view->task)) {
            char shown[24] = "none";
            if (active_lag != S_LAG_NONE)
                snprintf (shown, sizeof shown, "%llu", (unsigned long long) active_lag);
            s_violation (self,
                         "4: no node is caught up on %s; it is active on %s (lag %s) while %s "
                         "has lag %llu and slot room",
                         task->id, s_node_id (self, active), shown, s_node_id (self, node),
                         (unsigned long long) self->lags[i].lag);
            return;
        }
    }
}

//  The role node held task in, in the input: 0 for none.
static uint8_t
s_was_role (const s_check_t *self, const s_task_view_t *view, size_t node)
{
    for (size_t i = view->was_from; i < view->was_to; i++)
        if (self->was[i].node == node)
            return self->was[i].role;
    return 0;
}

//  Property 9: a cordoned node holds only what it held, as active only
//  what it held active, and never a learner; a draining node holds only
//  actives it held, and a stateless one only while no open node may take
//  it (the stateful ones: property 4).
static void
s_check_cordon (s_check_t *self, const s_task_view_t *view)
{
    const shoal_assign_task_t *task = &self->input->tasks[view->task];
    for (size_t i = view->held_from; i < view->held_to; i++) {
        const s_entry_t *held = &self->held[i];
        uint8_t cordon = self->input->nodes[held->node].cordon,
                was = s_was_role (self, view, held->node);
        bool kept = held->role == SHOAL_ROLE_ACTIVE
                        ? was == SHOAL_ROLE_ACTIVE
                        : cordon == SHOAL_CORDON_CORDONED && held->role == SHOAL_ROLE_STANDBY &&
                              (was == SHOAL_ROLE_ACTIVE || was == SHOAL_ROLE_STANDBY);
        if (cordon != SHOAL_CORDON_NONE && !kept)
            s_violation (self, "9: %s %s holds %s as %s, which it did not hold so",
                         cordon == SHOAL_CORDON_DRAINING ? "draining" : "cordoned",
                         s_node_id (self, held->node), task->id, s_role_names[held->role]);
        if (cordon != SHOAL_CORDON_DRAINING || task->stateful || held->role != SHOAL_ROLE_ACTIVE)
            continue;
        for (size_t n = 0; n < self->input->node_count; n++)
            if (s_open (&self->input->nodes[n]) && s_eligible (&self->input->nodes[n], task) &&
                s_room (self, n, view->task)) {
                s_violation (self, "9: stateless %s stays on draining %s while %s may hold it",
                             task->id, s_node_id (self, held->node), s_node_id (self, n));
                break;
            }
    }
}

static void
s_check_tasks (s_check_t *self)
{
    const shoal_assign_input_t *input = self->input;
    size_t eligible = 0, held = 0, was = 0, lags = 0;
    //  Tasks are visited in input order and the entries sorted by task
    //  index, so each task's ranges follow the previous one's.
    for (size_t t = 0; t < input->task_count; t++) {
        const shoal_assign_task_t *task = &input->tasks[t];
        if (t == 0 || !s_same_constraints (task, &input->tasks[t - 1]))
            eligible = s_eligible_count (input, task);
        s_task_view_t view = {
            .task = t,
            .eligible = eligible,
            .active = S_NONE,
            .held_from = held,
            .held_to = s_range_end (self->held, self->held_count, held, t),
            .was_from = was,
            .was_to = s_range_end (self->was, self->was_count, was, t),
            .lags_from = lags,
            .lags_to = s_range_end (self->lags, self->lag_count, lags, t),
        };
        held = view.held_to;
        was = view.was_to;
        lags = view.lags_to;
        for (size_t i = view.held_from; i < view.held_to; i++) {
            if (self->held[i].role == SHOAL_ROLE_ACTIVE) {
                if (view.actives++ == 0)
                    view.active = self->held[i].node;
            } else
                view.replicas++;
        }
        s_check_placed (self, &view);
        s_check_holders (self, &view);
        s_check_caught_up (self, &view);
        s_check_cordon (self, &view);
    }
}

//  ---------------------------------------------------------------------
//  Cluster-wide: slots, learners, moves

static void
s_check_slots_learners_followup (s_check_t *self)
{
    const shoal_assign_input_t *input = self->input;
    for (size_t n = 0; n < input->node_count; n++)
        if (input->nodes[n].slots && self->active_weight[n] > input->nodes[n].slots)
            s_violation (self, "5: %s holds active weight %llu, above its %llu slots",
                         input->nodes[n].id, (unsigned long long) self->active_weight[n],
                         (unsigned long long) input->nodes[n].slots);
    size_t learners = 0;
    for (size_t i = 0; i < self->output->holding_count; i++)
        learners += self->output->holdings[i].role == SHOAL_ROLE_LEARNER;
    if (learners > input->config.max_warmups)
        s_violation (self, "3: %zu learners, above max_warmups %u", learners,
                     input->config.max_warmups);
    //  The leader computes again when a learner reports that it is caught
    //  up, not on a timer: followup without a learner would never be
    //  followed up, and a learner without followup never promoted.
    if (self->output->followup != (learners > 0))
        s_violation (self, "followup: %s with %zu learners",
                     self->output->followup ? "true" : "false", learners);
}

static int
s_holding_compare (const void *a, const void *b)
{
    const shoal_assign_holding_t *x = a, *y = b;
    int order = s_string_order (x->node, y->node);
    if (order == 0)
        order = s_string_order (x->task, y->task);
    if (order == 0)
        order = x->role - y->role;
    return order;
}

//  Moves are counted on names, not indices: the contract defines them on
//  (node, task) pairs, whether or not the input still knows the names.
static int
s_check_moves (s_check_t *self)
{
    const shoal_assign_input_t *input = self->input;
    shoal_assign_holding_t *before =
        malloc ((input->current_count ? input->current_count : 1) * sizeof *before);
    if (!before)
        return -1;
    if (input->current_count)
        memcpy (before, input->current, input->current_count * sizeof *before);
    qsort (before, input->current_count, sizeof *before, s_holding_compare);
    uint32_t moves[3] = { 0, 0, 0 };
    for (size_t i = 0; i < self->output->holding_count; i++) {
        const shoal_assign_holding_t *holding = &self->output->holdings[i];
        if (holding->role < SHOAL_ROLE_ACTIVE || holding->role > SHOAL_ROLE_LEARNER)
            continue;
        if (!bsearch (holding, before, input->current_count, sizeof *before, s_holding_compare))
            moves[holding->role - 1]++;
    }
    free (before);
    for (int role = SHOAL_ROLE_ACTIVE; role <= SHOAL_ROLE_LEARNER; role++)
        if (moves[role - 1] != self->output->moves[role - 1])
            s_violation (self, "moves: %s moves reported %u, counted %u", s_role_names[role],
                         self->output->moves[role - 1], moves[role - 1]);
    return 0;
}

//  ---------------------------------------------------------------------

static void
s_check_release (s_check_t *self)
{
    free (self->nodes);
    free (self->tasks);
    free (self->held);
    free (self->was);
    free (self->lags);
    free (self->active_weight);
    free (self->unassigned);
}

static int
s_check_prepare (s_check_t *self, const shoal_assign_input_t *input,
                 const shoal_assign_output_t *output)
{
    *self = (s_check_t){ .input = input, .output = output };
    self->nodes = s_name_table (input->node_count, input->nodes, sizeof *input->nodes);
    self->tasks = s_name_table (input->task_count, input->tasks, sizeof *input->tasks);
    self->held = malloc ((output->holding_count + 1) * sizeof *self->held);
    self->was = malloc ((input->current_count + 1) * sizeof *self->was);
    self->lags = malloc ((input->lag_count + 1) * sizeof *self->lags);
    self->active_weight = calloc (input->node_count + 1, sizeof *self->active_weight);
    self->unassigned = calloc (input->task_count + 1, sizeof *self->unassigned);
    if (!self->nodes || !self->tasks || !self->held || !self->was || !self->lags ||
        !self->active_weight || !self->unassigned) {
        s_check_release (self);
        return -1;
    }
    return 0;
}

int
shoal_assign_check (const shoal_assign_input_t *input, const shoal_assign_output_t *output,
                    char *report, size_t report_size)
{
    s_check_t self;
    if (s_check_prepare (&self, input, output))
        return -1;
    self.report = report;
    self.report_size = report ? report_size : 0;
    if (self.report_size)
        report[0] = 0;
    s_check_holdings (&self);
    s_resolve_input (&self);
    s_check_tasks (&self);
    s_check_slots_learners_followup (&self);
    int rc = s_check_moves (&self);
    s_check_release (&self);
    return rc ? -1 : self.violations;
}

//  ---------------------------------------------------------------------
//  Balance

//  max - min of load over the nodes marked in counted, or 0 when none is.
static double
s_spread (const double *load, const bool *counted, size_t count)
{
    bool any = false;
    double low = 0, high = 0;
    for (size_t i = 0; i < count; i++) {
        if (!counted[i])
            continue;
        if (!any || load[i] < low)
            low = load[i];
        if (!any || load[i] > high)
            high = load[i];
        any = true;
    }
    return high - low;
}

//  Sorts by job, then by input order, so that a job's tasks are together.
static int
s_job_compare (const void *a, const void *b)
{
    const s_name_t *x = a, *y = b;
    int order = strcmp (x->id, y->id);
    if (order == 0)
        order = x->index < y->index ? -1 : x->index > y->index;
    return order;
}

//  True when node may hold one of the listed tasks (only stateful ones when
//  stateful_only). A task with the same constraints as one already refused
//  is skipped, which keeps this cheap when a job has many tasks.
static bool
s_may_hold_any (const shoal_assign_input_t *input, const shoal_assign_node_t *node,
                const s_name_t *list, size_t count, bool stateful_only)
{
    const shoal_assign_task_t *refused = NULL;
    for (size_t i = 0; i < count; i++) {
        const shoal_assign_task_t *task = &input->tasks[list[i].index];
        if ((stateful_only && !task->stateful) || (refused && s_same_constraints (task, refused)))
            continue;
        if (s_eligible (node, task))
            return true;
        refused = task;
    }
    return false;
}

int
shoal_assign_check_balance (const shoal_assign_input_t *input, const shoal_assign_output_t *output,
                            shoal_assign_balance_t *balance)
{
    size_t nodes = input->node_count, tasks = input->task_count;
    s_name_t *node_names = s_name_table (nodes, input->nodes, sizeof *input->nodes);
    s_name_t *task_names = s_name_table (tasks, input->tasks, sizeof *input->tasks);
    s_name_t *by_job = malloc ((tasks + 1) * sizeof *by_job);
    double *active = calloc (nodes + 1, sizeof *active);
    double *stateful = calloc (nodes + 1, sizeof *stateful);
    bool *any_task = calloc (nodes + 1, sizeof *any_task);
    bool *any_stateful = calloc (nodes + 1, sizeof *any_stateful);
    size_t *active_node = malloc ((tasks + 1) * sizeof *active_node);
    int rc = -1;
    if (!node_names || !task_names || !by_job || !active || !stateful || !any_task ||
        !any_stateful || !active_node)
        goto done;

    for (size_t t = 0; t < tasks; t++)
        by_job[t] = (s_name_t){ input->tasks[t].job, t };
    qsort (by_job, tasks, sizeof *by_job, s_job_compare);
    for (size_t n = 0; n < nodes; n++) {
        bool open = s_open (&input->nodes[n]);
        any_task[n] = open && s_may_hold_any (input, &input->nodes[n], by_job, tasks, false);
        any_stateful[n] = open && s_may_hold_any (input, &input->nodes[n], by_job, tasks, true);
    }
    for (size_t t = 0; t < tasks; t++)
        active_node[t] = S_NONE;
    for (size_t i = 0; i < output->holding_count; i++) {
        const shoal_assign_holding_t *holding = &output->holdings[i];
        size_t n = s_find (node_names, nodes, holding->node);
        size_t t = s_find (task_names, tasks, holding->task);
        if (n == S_NONE || t == S_NONE)
            continue;
        double load = (double) input->tasks[t].weight / input->nodes[n].capacity;
        if (holding->role == SHOAL_ROLE_ACTIVE) {
            active[n] += load;
            if (active_node[t] == S_NONE)
                active_node[t] = n;
        }
        if (input->tasks[t].stateful &&
            (holding->role == SHOAL_ROLE_ACTIVE || holding->role == SHOAL_ROLE_STANDBY))
            stateful[n] += load;
    }
    balance->active = s_spread (active, any_task, nodes);
    balance->stateful = s_spread (stateful, any_stateful, nodes);

    //  Per job: the active count of each node that may hold one of its tasks.
    balance->job = 0;
    for (size_t from = 0, to; from < tasks; from = to) {
        for (to = from; to < tasks && strcmp (by_job[to].id, by_job[from].id) == 0; to++)
            ;
        for (size_t n = 0; n < nodes; n++) {
            active[n] = 0;
            any_task[n] = s_may_hold_any (input, &input->nodes[n], by_job + from, to - from, false);
        }
        for (size_t i = from; i < to; i++)
            if (active_node[by_job[i].index] != S_NONE)
                active[active_node[by_job[i].index]] += 1;
        uint32_t spread = (uint32_t) s_spread (active, any_task, nodes);
        if (spread > balance->job)
            balance->job = spread;
    }
    rc = 0;
done:
    free (node_names);
    free (task_names);
    free (by_job);
    free (active);
    free (stateful);
    free (any_task);
    free (any_stateful);
    free (active_node);
    return rc;
}

//  ---------------------------------------------------------------------
//  Dumps, as the JSON of the contract

static void
s_json_string (FILE *file, const char *text)
{
    if (!text) {
        fputs ("null", file);
        return;
    }
    fputc ('"', file);
    for (const unsigned char *c = (const unsigned char *) text; *c; c++) {
        if (*c == '"' || *c == '\\')
            fprintf (file, "\\%c", *c);
        else if (*c < 0x20)
            fprintf (file, "\\u%04x", *c);
        else
            fputc (*c, file);
    }
    fputc ('"', file);
}

static void
s_json_labels (FILE *file, const shoal_label_t *labels, uint32_t count)
{
    fputc ('{', file);
    for (uint32_t i = 0; i < count; i++) {
        fputs (i ? ", " : "", file);
        s_json_string (file, labels[i].key);
        fputs (": ", file);
        s_json_string (file, labels[i].value);
    }
    fputc ('}', file);
}

//  Writes the holdings of holdings[first]'s node, in the contract's
//  per-node form. Holdings of one node need not be next to each other.
static void
s_json_node_holdings (FILE *file, const shoal_assign_holding_t *holdings, size_t count,
                      size_t first)
{
    const char *node = holdings[first].node;
    s_json_string (file, node);
    fputs (": {", file);
    for (int role = SHOAL_ROLE_ACTIVE; role <= SHOAL_ROLE_LEARNER; role++) {
        fprintf (file, "%s\"%s\": [", role > SHOAL_ROLE_ACTIVE ? ", " : "", s_role_names[role]);
        bool any = false;
        for (size_t i = first; i < count; i++)
            if (holdings[i].role == role && s_string_order (holdings[i].node, node) == 0) {
                fputs (any ? ", " : "", file);
                s_json_string (file, holdings[i].task);
                any = true;
            }
        fputc (']', file);
    }
    fputc ('}', file);
}

//  Writes holdings grouped by node, each node once.
static void
s_json_holdings (FILE *file, const shoal_assign_holding_t *holdings, size_t count)
{
    fputc ('{', file);
    bool any = false;
    for (size_t i = 0; i < count; i++) {
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = s_string_order (holdings[j].node, holdings[i].node) == 0;
        if (seen)
            continue;
        fputs (any ? ", " : "", file);
        s_json_node_holdings (file, holdings, count, i);
        any = true;
    }
    fputc ('}', file);
}

void
shoal_assign_check_dump_input (const shoal_assign_input_t *input, FILE *file)
{
    const shoal_assign_config_t *config = &input->config;
    fprintf (file, "{\"config\": {\"standbys\": %u, \"max_warmups\": %u, \"acceptable_lag\": %llu",
             config->standbys, config->max_warmups, (unsigned long long) config->acceptable_lag);
    if (config->spread_by) {
        fputs (", \"spread_by\": ", file);
        s_json_string (file, config->spread_by);
    }
    fputs ("}, \"nodes\": [", file);
    for (size_t n = 0; n < input->node_count; n++) {
        const shoal_assign_node_t *node = &input->nodes[n];
        fputs (n ? ", {\"id\": " : "{\"id\": ", file);
        s_json_string (file, node->id);
        fprintf (file, ", \"capacity\": %u", node->capacity);
        if (node->slots)
            fprintf (file, ", \"slots\": %llu", (unsigned long long) node->slots);
        if (node->label_count) {
            fputs (", \"labels\": ", file);
            s_json_labels (file, node->labels, node->label_count);
        }
        if (!node->handles_all) {
            fputs (", \"handles\": [", file);
            for (uint32_t i = 0; i < node->handle_count; i++) {
                fputs (i ? ", " : "", file);
                s_json_string (file, node->handles[i]);
            }
            fputc (']', file);
        }
        if (node->cordon)
            fprintf (file, ", \"cordon\": \"%s\"",
                     node->cordon == SHOAL_CORDON_DRAINING ? "draining" : "cordoned");
        fputc ('}', file);
    }
    fputs ("], \"tasks\": [", file);
    for (size_t t = 0; t < input->task_count; t++) {
        const shoal_assign_task_t *task = &input->tasks[t];
        fputs (t ? ", {\"id\": " : "{\"id\": ", file);
        s_json_string (file, task->id);
        fputs (", \"job\": ", file);
        s_json_string (file, task->job);
        fprintf (file, ", \"stateful\": %s, \"weight\": %u", task->stateful ? "true" : "false",
                 task->weight);
        if (task->require_count) {
            fputs (", \"require\": ", file);
            s_json_labels (file, task->require, task->require_count);
        }
        fputc ('}', file);
    }
    fputs ("], \"current\": ", file);
    s_json_holdings (file, input->current, input->current_count);
    fputs (", \"lags\": {", file);
    bool any = false;
    for (size_t i = 0; i < input->lag_count; i++) {
        const char *node = input->lags[i].node;
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = s_string_order (input->lags[j].node, node) == 0;
        if (seen)
            continue;
        fputs (any ? ", " : "", file);
        s_json_string (file, node);
        fputs (": {", file);
        for (size_t j = i; j < input->lag_count; j++)
            if (s_string_order (input->lags[j].node, node) == 0) {
                fputs (j > i ? ", " : "", file);
                s_json_string (file, input->lags[j].task);
                fprintf (file, ": %llu", (unsigned long long) input->lags[j].lag);
            }
        fputc ('}', file);
        any = true;
    }
    fputs ("}}\n", file);
}

void
shoal_assign_check_dump_output (const shoal_assign_output_t *output, FILE *file)
{
    fputs ("{\"assignment\": ", file);
    s_json_holdings (file, output->holdings, output->holding_count);
    fputs (", \"unassigned\": [", file);
    for (size_t i = 0; i < output->unassigned_count; i++) {
        fputs (i ? ", " : "", file);
        s_json_string (file, output->unassigned[i]);
    }
    fprintf (file,
             "], \"followup\": %s, \"moves\": {\"active\": %u, \"standby\": %u, "
             "\"learner\": %u}}\n",
             output->followup ? "true" : "false", output->moves[0], output->moves[1],
             output->moves[2]);
}

/*  rebalance/assignor.h: the leader's assignor, a pure function.

    Given the cluster (nodes with capacity, slots, labels and the jobs they
    handle), the tasks, the assignment in force and each node's lag per
    stateful task, it returns the next assignment with roles active, standby
    and learner, as Kafka Streams' KIP-441 does: an active moves only to a
    node that is caught up; a stateful task that should move is first warmed
    up as a learner on its future owner while the old owner keeps it. The
    contract is docs/assign.md; `shoal assign`
    wraps this function, and the leader runs the same code.

    The function is deterministic and does not depend on the order of its
    inputs: it sorts everything by id first. It does no I/O; it allocates
    working memory linear in tasks x (1 + standbys) + nodes + lags + avoid
    pairs, and a bit per node for each task with nodes to avoid.
*/
#ifndef SHOAL_ASSIGNOR_H
#define SHOAL_ASSIGNOR_H

#include "wire/wire.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t standbys;       //  hot standby replicas per stateful task
    uint32_t max_warmups;    //  learners in the whole cluster at most
    uint64_t acceptable_lag; //  caught up when lag <= this
    const char *spread_by;   //  label key standbys spread over; NULL: none
} shoal_assign_config_t;

//  Nodes and tasks begin with their id (the assignor relies on it).
typedef struct {
    const char *id;
    uint32_t capacity; //  >= 1; load is weight / capacity
    uint64_t slots;    //  cap on the weight of active tasks; 0: unlimited
    uint32_t label_count;
    const shoal_label_t *labels;
    bool handles_all; //  true: every job; false: only those in handles
    uint32_t handle_count;
    const char *const *handles;
    //  shoal_cordon_t. Cordoned: it takes no task it does not hold, and
    //  keeps its actives and standbys while it may hold them. Draining: no
    //  task is meant to be on it; it keeps each active it holds only until
    //  a caught-up node takes it (as a node that holds a task active keeps
    //  it while a learner warms up on the task's target), and nothing else.
    uint8_t cordon;
} shoal_assign_node_t;

typedef struct {
    const char *id;
    const char *job; //  never NULL (the JSON layer applies the default)
    bool stateful;
    bool fenced;     //  the assignor ignores it; the handoff moves such a task from
                     //  a dead member at once (docs/handoff.md, "Fenced jobs")
    uint32_t weight; //  >= 1
    uint32_t require_count;
    const shoal_label_t *require;
} shoal_assign_task_t;

//  One (node, task, role) of an assignment; role is a shoal_role_t.
typedef struct {
    const char *node;
    const char *task;
    uint8_t role;
} shoal_assign_holding_t;

//  How far a node's copy of a task's state is behind.
typedef struct {
    const char *node;
    const char *task;
    uint64_t lag;
} shoal_assign_lag_t;

//  A node that must not hold a task, in any role: the leader's handoff
//  avoids the nodes that gave up on a task that kept failing there
//  (docs/handoff.md).
typedef struct {
    const char *node;
    const char *task;
} shoal_assign_avoid_t;

typedef struct {
    shoal_assign_config_t config;
    size_t node_count;
    const shoal_assign_node_t *nodes;
    size_t task_count;
    const shoal_assign_task_t *tasks;
    size_t current_count; //  may name nodes and tasks that no longer exist
    const shoal_assign_holding_t *current;
    size_t lag_count; //  may name nodes and tasks that no longer exist
    const shoal_assign_lag_t *lags;
    //  The node of each pair may not hold its task, as if it lacked the
    //  task's labels; may name nodes and tasks that no longer exist. The
    //  JSON front end (shoal assign) has none.
    size_t avoid_count;
    const shoal_assign_avoid_t *avoid;
} shoal_assign_input_t;

typedef struct {
    //  Sorted by node id, then role (active, standby, learner), then task id.
    //  The strings point into the input.
    size_t holding_count;
    shoal_assign_holding_t *holdings;
    //  Tasks that no node may hold, or for which no node has free slots,
    //  sorted by id.
    size_t unassigned_count;
    const char **unassigned;
    //  Of those, the tasks that only the avoid pairs keep off every node:
    //  some node could hold them otherwise, none may. Sorted by id.
    size_t avoided_count;
    const char **avoided;
    bool followup; //  learners are warming up, or a move waits for one
    //  Per role (index role - 1): (node, task) pairs holding the role in the
    //  output that did not hold it on that node in the input.
    uint32_t moves[3];
} shoal_assign_output_t;

//  Computes the next assignment. Returns 0, or -1 with why set (a node or
//  task id given twice, a capacity or weight of 0, no memory). The output
//  is released with shoal_assign_output_release.
int shoal_assign (const shoal_assign_input_t *input, shoal_assign_output_t *output, char *why,
                  size_t why_size);

void shoal_assign_output_release (shoal_assign_output_t *output);

//  The eligibility rule: true when node may hold task in some role. It
//  handles the task's job (handles_all, or the job is among its handles)
//  and carries every label the task requires (the value of its label of
//  that key is the one required). The handoff's capacity for rescales
//  applies the same rule.
bool shoal_assign_may_hold (const shoal_assign_node_t *node, const shoal_assign_task_t *task);

//  The hash the assignor's tables of ids use (FNV-1a), for the JSON layer's.
uint64_t shoal_assign_hash (const char *name);

#endif

/*  tests/test_assign.c: the assignor against its contract.

    Four parts. The example scenarios of the design (scenarios/assign/),
    built here in C with the same nodes, tasks, config, current assignment and
    lags, each with what the contract implies for it. Unit tests of each
    property on small hand-made clusters. Cases the randomized test found,
    shrunk to a few nodes and tasks. And the randomized convergence test
    of issue 3: random clusters go through random events (nodes added,
    dropped, coming back with their old state); after each event every output
    is fed back as the assignment in force, with its holders reported caught
    up, until followup is false; every output must be valid, the rounds stay
    within the contract's bound, and the result is balanced and stable.

    Every output is checked by tests/assign_check.c, which knows the contract
    and nothing of how the assignor works. The randomized test draws from
    splitmix64 seeded with the seed number, so a seed replays exactly:
    SHOAL_ASSIGN_SEED=n runs seed n alone, SHOAL_ASSIGN_SEEDS=n runs seeds 1
    to n (5000 by default: about 10 s in a RelWithDebInfo build, 30 s with
    the sanitizers), SHOAL_ASSIGN_DUMPS=n prints the input and output of the
    first n failures (3 by default) as `shoal assign` JSON,
    SHOAL_ASSIGN_TRACE=1 prints every round, and SHOAL_ASSIGN_FIXPOINT=1
    counts the steps on the way that the assignor, given them back with the
    same lags, would change.
*/

#include "tests/assign_check.h"
#include "rebalance/assign_json.h"
#include "rebalance/assignor.h"
#include "tests/test.h"
#include "wire/splitmix.h"

#include <dirent.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_NODES_MAX    32
#define S_TASKS_MAX    96
#define S_HOLDINGS_MAX 1024
#define S_LAGS_MAX     2048
#define S_LABELS_MAX   4
#define S_HANDLES_MAX  10
#define S_REPORT_SIZE  8192

//  For the test's own limits, in every build type (assert is off in
//  RelWithDebInfo).
#define S_REQUIRE(cond)                                                                            \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf (stderr, "%s:%d: test limit exceeded: %s\n", __FILE__, __LINE__, #cond);       \
            abort ();                                                                              \
        }                                                                                          \
    } while (0)

//  ---------------------------------------------------------------------
//  A cluster to build inputs from

//  The nodes, tasks, assignment in force and lags of one cluster, in fixed
//  storage so that every string and array the input points to stays put.
//  A node that is gone has left the cluster: it is not in the input, but its
//  lags stay in the cluster's memory, for when it comes back.
typedef struct {
    shoal_assign_config_t config;
    shoal_assign_node_t nodes[S_NODES_MAX];
    bool gone[S_NODES_MAX];
    shoal_label_t labels[S_NODES_MAX][S_LABELS_MAX];
    const char *handles[S_NODES_MAX][S_HANDLES_MAX];
    size_t node_count;
    shoal_assign_task_t tasks[S_TASKS_MAX];
    shoal_label_t require[S_TASKS_MAX][S_LABELS_MAX];
    size_t task_count;
    shoal_assign_holding_t current[S_HOLDINGS_MAX];
    size_t current_count;
    //  What each node's copy of each task is behind: the truth, which the
    //  input reports except where lag_noise says otherwise.
    shoal_assign_lag_t lags[S_LAGS_MAX];
    size_t lag_count;
    //  When set, nodes report this lag for the tasks they hold as active:
    //  the contract says such a node is caught up whatever lags says.
    uint64_t lag_noise;
    //  The input is built here from the above.
    shoal_assign_node_t input_nodes[S_NODES_MAX];
    shoal_assign_lag_t input_lags[S_LAGS_MAX];
} s_cluster_t;

static s_cluster_t *
s_cluster_new (uint32_t standbys, uint32_t max_warmups, uint64_t acceptable_lag)
{
    s_cluster_t *cluster = calloc (1, sizeof *cluster);
    S_REQUIRE (cluster);
    cluster->config = (shoal_assign_config_t){ standbys, max_warmups, acceptable_lag, NULL };
    return cluster;
}

static shoal_assign_node_t *
s_node (s_cluster_t *cluster, const char *id, uint32_t capacity)
{
    S_REQUIRE (cluster->node_count < S_NODES_MAX);
    size_t index = cluster->node_count++;
    cluster->nodes[index] = (shoal_assign_node_t){
        .id = id,
        .capacity = capacity,
        .labels = cluster->labels[index],
        .handles_all = true,
        .handles = cluster->handles[index],
    };
    return &cluster->nodes[index];
}

static void
s_node_label (s_cluster_t *cluster, shoal_assign_node_t *node, const char *key, const char *value)
{
    size_t index = (size_t) (node - cluster->nodes);
    S_REQUIRE (node->label_count < S_LABELS_MAX);
    cluster->labels[index][node->label_count++] = (shoal_label_t){ key, value };
}

//  Restricts node to the jobs it is given.
static void
s_node_handles (s_cluster_t *cluster, shoal_assign_node_t *node, const char *job)
{
    size_t index = (size_t) (node - cluster->nodes);
    S_REQUIRE (node->handle_count < S_HANDLES_MAX);
    node->handles_all = false;
    cluster->handles[index][node->handle_count++] = job;
}

static shoal_assign_task_t *
s_task (s_cluster_t *cluster, const char *id, const char *job, bool stateful)
{
    S_REQUIRE (cluster->task_count < S_TASKS_MAX);
    size_t index = cluster->task_count++;
    cluster->tasks[index] = (shoal_assign_task_t){
        .id = id,
        .job = job,
        .stateful = stateful,
        .weight = 1,
        .require = cluster->require[index],
    };
    return &cluster->tasks[index];
}

static void
s_task_require (s_cluster_t *cluster, shoal_assign_task_t *task, const char *key, const char *value)
{
    size_t index = (size_t) (task - cluster->tasks);
    S_REQUIRE (task->require_count < S_LABELS_MAX);
    cluster->require[index][task->require_count++] = (shoal_label_t){ key, value };
}

static void
s_hold (s_cluster_t *cluster, const char *node, const char *task, shoal_role_t role)
{
    S_REQUIRE (cluster->current_count < S_HOLDINGS_MAX);
    cluster->current[cluster->current_count++] = (shoal_assign_holding_t){ node, task, role };
}

//  Sets the lag of node on task, adding the entry when there is none.
static void
s_lag (s_cluster_t *cluster, const char *node, const char *task, uint64_t lag)
{
    for (size_t i = 0; i < cluster->lag_count; i++)
        if (strcmp (cluster->lags[i].node, node) == 0 &&
            strcmp (cluster->lags[i].task, task) == 0) {
            cluster->lags[i].lag = lag;
            return;
        }
    S_REQUIRE (cluster->lag_count < S_LAGS_MAX);
    cluster->lags[cluster->lag_count++] = (shoal_assign_lag_t){ node, task, lag };
}

static shoal_role_t
s_current_role (const s_cluster_t *cluster, const char *node, const char *task)
{
    for (size_t i = 0; i < cluster->current_count; i++)
        if (strcmp (cluster->current[i].node, node) == 0 &&
            strcmp (cluster->current[i].task, task) == 0)
            return cluster->current[i].role;
    return SHOAL_ROLE_NONE;
}

//  The assignor's input: the nodes that are not gone, every lag the cluster
//  remembers (of gone nodes too, which the assignor must ignore).
static shoal_assign_input_t
s_input (s_cluster_t *cluster)
{
    size_t nodes = 0;
    for (size_t i = 0; i < cluster->node_count; i++)
        if (!cluster->gone[i])
            cluster->input_nodes[nodes++] = cluster->nodes[i];
    for (size_t i = 0; i < cluster->lag_count; i++) {
        cluster->input_lags[i] = cluster->lags[i];
        if (cluster->lag_noise && s_current_role (cluster, cluster->lags[i].node,
                                                  cluster->lags[i].task) == SHOAL_ROLE_ACTIVE)
            cluster->input_lags[i].lag = cluster->lag_noise;
    }
    return (shoal_assign_input_t){
        .config = cluster->config,
        .node_count = nodes,
        .nodes = cluster->input_nodes,
        .task_count = cluster->task_count,
        .tasks = cluster->tasks,
        .current_count = cluster->current_count,
        .current = cluster->current,
        .lag_count = cluster->lag_count,
        .lags = cluster->input_lags,
    };
}

//  Makes output the assignment in force, as the leader would once every
//  node applied it: each holder's copy of the task is then caught up.
static void
s_feed_back (s_cluster_t *cluster, const shoal_assign_output_t *output)
{
    S_REQUIRE (output->holding_count <= S_HOLDINGS_MAX);
    cluster->current_count = output->holding_count;
    memcpy (cluster->current, output->holdings, output->holding_count * sizeof *output->holdings);
    for (size_t i = 0; i < output->holding_count; i++)
        s_lag (cluster, output->holdings[i].node, output->holdings[i].task, 0);
}

//  ---------------------------------------------------------------------
//  Running the assignor and reading its output

static void
s_dump (const shoal_assign_input_t *input, const shoal_assign_output_t *output)
{
    fprintf (stderr, "input: ");
    shoal_assign_check_dump_input (input, stderr);
    if (output) {
        fprintf (stderr, "output: ");
        shoal_assign_check_dump_output (output, stderr);
    }
}

//  Runs the assignor on input and checks the output against the contract.
//  Returns the number of violations, or -1 when the assignor failed.
static int
s_assign_input (const shoal_assign_input_t *input, shoal_assign_output_t *output, bool quiet)
{
    char why[256] = "";
    memset (output, 0, sizeof *output);
    if (shoal_assign (input, output, why, sizeof why)) {
        if (!quiet) {
            fprintf (stderr, "shoal_assign failed: %s\n", why);
            s_dump (input, NULL);
        }
        return -1;
    }
    static char report[S_REPORT_SIZE];
    int violations = shoal_assign_check (input, output, report, sizeof report);
    if (violations && !quiet) {
        fprintf (stderr, "%d contract violations:\n%s", violations, report);
        s_dump (input, output);
    }
    return violations;
}

//  Runs the assignor on the cluster; CHECKs that the output is valid.
static int
s_assign (s_cluster_t *cluster, shoal_assign_output_t *output)
{
    shoal_assign_input_t input = s_input (cluster);
    int violations = s_assign_input (&input, output, false);
    CHECK_EQ (violations, 0);
    return violations;
}

static shoal_role_t
s_role (const shoal_assign_output_t *output, const char *node, const char *task)
{
    for (size_t i = 0; i < output->holding_count; i++)
        if (strcmp (output->holdings[i].node, node) == 0 &&
            strcmp (output->holdings[i].task, task) == 0)
            return output->holdings[i].role;
    return SHOAL_ROLE_NONE;
}

//  The node holding task as active, or NULL.
static const char *
s_active (const shoal_assign_output_t *output, const char *task)
{
    for (size_t i = 0; i < output->holding_count; i++)
        if (output->holdings[i].role == SHOAL_ROLE_ACTIVE &&
            strcmp (output->holdings[i].task, task) == 0)
            return output->holdings[i].node;
    return NULL;
}

//  How many tasks node holds in role; node NULL counts over every node.
static size_t
s_count (const shoal_assign_output_t *output, const char *node, shoal_role_t role)
{
    size_t count = 0;
    for (size_t i = 0; i < output->holding_count; i++)
        count += output->holdings[i].role == role &&
                 (!node || strcmp (output->holdings[i].node, node) == 0);
    return count;
}

static bool
s_same_output (const shoal_assign_output_t *a, const shoal_assign_output_t *b)
{
    if (a->holding_count != b->holding_count || a->unassigned_count != b->unassigned_count ||
        a->followup != b->followup || memcmp (a->moves, b->moves, sizeof a->moves) != 0)
        return false;
    for (size_t i = 0; i < a->holding_count; i++)
        if (strcmp (a->holdings[i].node, b->holdings[i].node) != 0 ||
            strcmp (a->holdings[i].task, b->holdings[i].task) != 0 ||
            a->holdings[i].role != b->holdings[i].role)
            return false;
    for (size_t i = 0; i < a->unassigned_count; i++)
        if (strcmp (a->unassigned[i], b->unassigned[i]) != 0)
            return false;
    return true;
}

//  True when output is exactly the cluster's assignment in force, with no
//  moves: what property 7 asks of a valid, balanced, caught-up input.
static bool
s_is_current (const s_cluster_t *cluster, const shoal_assign_output_t *output)
{
    if (output->holding_count != cluster->current_count || output->moves[0] || output->moves[1] ||
        output->moves[2])
        return false;
    for (size_t i = 0; i < cluster->current_count; i++)
        if (s_role (output, cluster->current[i].node, cluster->current[i].task) !=
            cluster->current[i].role)
            return false;
    return true;
}

//  CHECKs that output is the cluster's assignment in force, unchanged.
static void
s_check_stays (s_cluster_t *cluster, const shoal_assign_output_t *output)
{
    bool stays = s_is_current (cluster, output);
    CHECK (stays);
    if (!stays) {
        shoal_assign_input_t input = s_input (cluster);
        s_dump (&input, output);
    }
}

//  ---------------------------------------------------------------------
//  Seeded randomness and shuffled copies of an input

static uint32_t
s_below (uint64_t *state, uint32_t bound)
{
    return (uint32_t) (splitmix_next (state) % bound);
}

static void
s_shuffle (void *items, size_t count, size_t size, uint64_t *state)
{
    char swap[64];
    S_REQUIRE (size <= sizeof swap);
    for (size_t i = count; i > 1; i--) {
        size_t j = (size_t) (splitmix_next (state) % i);
        char *a = (char *) items + (i - 1) * size, *b = (char *) items + j * size;
        memcpy (swap, a, size);
        memcpy (a, b, size);
        memcpy (b, swap, size);
    }
}

//  A copy of an input with every list in another order: nodes, tasks,
//  current, lags, and each node's labels and handles and each task's
//  require.
typedef struct {
    shoal_assign_input_t input;
    shoal_assign_node_t nodes[S_NODES_MAX];
    shoal_label_t labels[S_NODES_MAX][S_LABELS_MAX];
    const char *handles[S_NODES_MAX][S_HANDLES_MAX];
    shoal_assign_task_t tasks[S_TASKS_MAX];
    shoal_label_t require[S_TASKS_MAX][S_LABELS_MAX];
    shoal_assign_holding_t current[S_HOLDINGS_MAX];
    shoal_assign_lag_t lags[S_LAGS_MAX];
} s_shuffled_t;

static void
s_shuffled_fill (s_shuffled_t *self, const shoal_assign_input_t *input, uint64_t *state)
{
    S_REQUIRE (input->node_count <= S_NODES_MAX && input->task_count <= S_TASKS_MAX);
    S_REQUIRE (input->current_count <= S_HOLDINGS_MAX && input->lag_count <= S_LAGS_MAX);
    self->input = *input;
    memcpy (self->nodes, input->nodes, input->node_count * sizeof *input->nodes);
    memcpy (self->tasks, input->tasks, input->task_count * sizeof *input->tasks);
    memcpy (self->current, input->current, input->current_count * sizeof *input->current);
    memcpy (self->lags, input->lags, input->lag_count * sizeof *input->lags);
    s_shuffle (self->nodes, input->node_count, sizeof *self->nodes, state);
    s_shuffle (self->tasks, input->task_count, sizeof *self->tasks, state);
    s_shuffle (self->current, input->current_count, sizeof *self->current, state);
    s_shuffle (self->lags, input->lag_count, sizeof *self->lags, state);
    for (size_t i = 0; i < input->node_count; i++) {
        shoal_assign_node_t *node = &self->nodes[i];
        S_REQUIRE (node->label_count <= S_LABELS_MAX && node->handle_count <= S_HANDLES_MAX);
        memcpy (self->labels[i], node->labels, node->label_count * sizeof *node->labels);
        memcpy (self->handles[i], node->handles, node->handle_count * sizeof *node->handles);
        s_shuffle (self->labels[i], node->label_count, sizeof *node->labels, state);
        s_shuffle (self->handles[i], node->handle_count, sizeof *node->handles, state);
        node->labels = self->labels[i];
        node->handles = self->handles[i];
    }
    for (size_t i = 0; i < input->task_count; i++) {
        shoal_assign_task_t *task = &self->tasks[i];
        S_REQUIRE (task->require_count <= S_LABELS_MAX);
        memcpy (self->require[i], task->require, task->require_count * sizeof *task->require);
        s_shuffle (self->require[i], task->require_count, sizeof *task->require, state);
        task->require = self->require[i];
    }
    self->input.nodes = self->nodes;
    self->input.tasks = self->tasks;
    self->input.current = self->current;
    self->input.lags = self->lags;
}

//  True when the assignor gives input, shuffled with state, the same output
//  as expected.
static bool
s_same_when_shuffled (const shoal_assign_input_t *input, const shoal_assign_output_t *expected,
                      uint64_t *state)
{
    static s_shuffled_t shuffled;
    s_shuffled_fill (&shuffled, input, state);
    shoal_assign_output_t output;
    bool same =
        s_assign_input (&shuffled.input, &output, true) >= 0 && s_same_output (&output, expected);
    shoal_assign_output_release (&output);
    return same;
}

//  ---------------------------------------------------------------------
//  Convergence: property 8

//  Which (node, task) pairs were caught up when an event happened: the
//  assignment in force and the lags reported then.
typedef struct {
    uint64_t acceptable_lag;
    shoal_assign_holding_t current[S_HOLDINGS_MAX];
    size_t current_count;
    shoal_assign_lag_t lags[S_LAGS_MAX];
    size_t lag_count;
} s_snapshot_t;

static void
s_snapshot_take (s_snapshot_t *self, const shoal_assign_input_t *input)
{
    self->acceptable_lag = input->config.acceptable_lag;
    self->current_count = input->current_count;
    memcpy (self->current, input->current, input->current_count * sizeof *input->current);
    self->lag_count = input->lag_count;
    memcpy (self->lags, input->lags, input->lag_count * sizeof *input->lags);
}

static bool
s_snapshot_caught_up (const s_snapshot_t *self, const char *node, const char *task)
{
    for (size_t i = 0; i < self->current_count; i++)
        if (self->current[i].role == SHOAL_ROLE_ACTIVE &&
            strcmp (self->current[i].node, node) == 0 && strcmp (self->current[i].task, task) == 0)
            return true;
    for (size_t i = 0; i < self->lag_count; i++)
        if (self->lags[i].lag <= self->acceptable_lag && strcmp (self->lags[i].node, node) == 0 &&
            strcmp (self->lags[i].task, task) == 0)
            return true;
    return false;
}

//  The contract's "needed moves": active and standby placements of the
//  converged output on a node that was not caught up at the event.
static uint32_t
s_needed_moves (const s_snapshot_t *self, const shoal_assign_output_t *output)
{
    uint32_t needed = 0;
    for (size_t i = 0; i < output->holding_count; i++) {
        const shoal_assign_holding_t *holding = &output->holdings[i];
        if ((holding->role == SHOAL_ROLE_ACTIVE || holding->role == SHOAL_ROLE_STANDBY) &&
            !s_snapshot_caught_up (self, holding->node, holding->task))
            needed++;
    }
    return needed;
}

typedef enum {
    S_CONVERGED,
    S_FAILED_CALL,    //  the assignor returned -1
    S_INVALID,        //  an output broke properties 1 to 5
    S_ORDER,          //  a shuffled input gave another output (property 6)
    S_NO_CONVERGENCE, //  followup still true after the round limit
    S_SLOW,           //  converged, in more rounds than the bound (property 8)
} s_outcome_t;

//  SHOAL_ASSIGN_TRACE=1 prints every round of every convergence.
static bool s_trace;

//  SHOAL_ASSIGN_FIXPOINT=1 also feeds each output that is a step on the way
//  (followup true) back as current with the same lags, and counts those
//  that the assignor then changes, and the rounds and active moves of all
//  convergences: measures, not checks.
static bool s_fixpoint;
static uint64_t s_fixpoint_steps, s_fixpoint_changed, s_fixpoint_rounds, s_fixpoint_moves;

//  Whether output, given back as input's current with the same lags, stays
//  as it is (false too when the assignor fails).
static bool
s_stands (const shoal_assign_input_t *input, const shoal_assign_output_t *output)
{
    shoal_assign_input_t fed = *input;
    fed.current = output->holdings;
    fed.current_count = output->holding_count;
    shoal_assign_output_t again;
    char why[256];
    if (shoal_assign (&fed, &again, why, sizeof why) != 0)
        return false;
    bool same = again.holding_count == output->holding_count;
    for (size_t h = 0; same && h < again.holding_count; h++)
        same = again.holdings[h].role == output->holdings[h].role &&
               strcmp (again.holdings[h].node, output->holdings[h].node) == 0 &&
               strcmp (again.holdings[h].task, output->holdings[h].task) == 0;
    shoal_assign_output_release (&again);
    return same;
}

static const char *s_outcome_names[] = { "converged",       "assignor failed", "invalid output",
                                         "order-dependent", "no convergence",  "too many rounds" };

typedef struct {
    s_outcome_t outcome;
    uint32_t rounds; //  assignor calls, the last one included
    uint32_t needed; //  needed moves, once converged
    uint32_t bound;  //  the contract's bound on rounds
    s_snapshot_t at_event;
    shoal_assign_output_t output; //  the last output; the caller releases it
} s_convergence_t;

//  Runs the assignor on the cluster until followup is false, feeding each
//  output back, at most round_limit times. When order_state is not NULL the
//  first round is also run on shuffled copies of its input. On failure the
//  cluster holds the input of the failing round.
static void
s_converge (s_cluster_t *cluster, uint32_t round_limit, uint64_t *order_state,
            s_convergence_t *result)
{
    shoal_assign_input_t input = s_input (cluster);
    s_snapshot_take (&result->at_event, &input);
    result->rounds = result->needed = result->bound = 0;
    memset (&result->output, 0, sizeof result->output);
    while (true) {
        shoal_assign_output_release (&result->output);
        input = s_input (cluster);
        result->rounds++;
        int violations = s_assign_input (&input, &result->output, true);
        if (s_trace) {
            fprintf (stderr, "round %u\n", result->rounds);
            s_dump (&input, &result->output);
        }
        if (violations) {
            result->outcome = violations < 0 ? S_FAILED_CALL : S_INVALID;
            return;
        }
        s_fixpoint_rounds++;
        s_fixpoint_moves += result->output.moves[SHOAL_ROLE_ACTIVE - 1];
        if (s_fixpoint && result->output.followup) {
            s_fixpoint_steps++;
            s_fixpoint_changed += !s_stands (&input, &result->output);
        }
        if (order_state && result->rounds == 1)
            for (int i = 0; i < 2; i++)
                if (!s_same_when_shuffled (&input, &result->output, order_state)) {
                    result->outcome = S_ORDER;
                    return;
                }
        if (!result->output.followup)
            break;
        if (result->rounds == round_limit) {
            result->outcome = S_NO_CONVERGENCE;
            return;
        }
        s_feed_back (cluster, &result->output);
    }
    uint32_t warmups = cluster->config.max_warmups ? cluster->config.max_warmups : 1;
    result->needed = s_needed_moves (&result->at_event, &result->output);
    result->bound = (result->needed + warmups - 1) / warmups + 1;
    result->outcome = result->rounds <= result->bound ? S_CONVERGED : S_SLOW;
}

//  Converges the cluster and CHECKs that it took no more rounds than the
//  contract allows; leaves the result as the assignment in force.
static void
s_check_converges (s_cluster_t *cluster, shoal_assign_output_t *last)
{
    s_convergence_t result;
    s_converge (cluster, 100, NULL, &result);
    if (result.outcome != S_CONVERGED) {
        fprintf (stderr, "%s after %u rounds (needed moves %u, bound %u)\n",
                 s_outcome_names[result.outcome], result.rounds, result.needed, result.bound);
        shoal_assign_input_t input = s_input (cluster);
        s_dump (&input, &result.output);
    }
    CHECK_EQ (result.outcome, S_CONVERGED);
    s_feed_back (cluster, &result.output);
    *last = result.output;
}

//  CHECKs that output is balanced as property 8 asks: active load within 1
//  of even, and with equal capacities stateful load and each job's actives
//  too (meant for unit weights).
static void
s_check_balanced (s_cluster_t *cluster, const shoal_assign_output_t *output, bool equal)
{
    shoal_assign_input_t input = s_input (cluster);
    shoal_assign_balance_t balance;
    CHECK_EQ (shoal_assign_check_balance (&input, output, &balance), 0);
    bool balanced = balance.active <= 1.0 + 1e-9 &&
                    (!equal || (balance.stateful <= 1.0 + 1e-9 && balance.job <= 1));
    CHECK (balanced);
    if (!balanced) {
        fprintf (stderr, "unbalanced: active %.3f, stateful %.3f, job %u\n", balance.active,
                 balance.stateful, balance.job);
        s_dump (&input, output);
    }
}

//  ---------------------------------------------------------------------
//  The checker itself: it must see each kind of violation

//  Two nodes, a stateful task s/0 caught up on n1 only and a stateless
//  task w/0 of weight w_weight; standbys 1; n1 has 2 slots.
static s_cluster_t *
s_checked_cluster (uint32_t w_weight)
{
    s_cluster_t *cluster = s_cluster_new (1, 1, 100);
    s_node (cluster, "n1", 1)->slots = 2;
    s_node (cluster, "n2", 1);
    s_task (cluster, "s/0", "s", true);
    s_task (cluster, "w/0", "w", false)->weight = w_weight;
    s_lag (cluster, "n1", "s/0", 0);
    s_lag (cluster, "n2", "s/0", 500);
    return cluster;
}

//  A hand-made output for the checked cluster, and what to expect of it.
typedef struct {
    const char *violation; //  a part of the report; NULL: valid
    uint32_t w_weight;
    shoal_assign_holding_t holdings[4];
    size_t count;
    const char *unassigned;
    uint32_t moves[3];
} s_verdict_case_t;

static void
s_check_verdict (const s_verdict_case_t *verdict)
{
    s_cluster_t *cluster = s_checked_cluster (verdict->w_weight);
    shoal_assign_input_t input = s_input (cluster);
    const char *unassigned[1] = { verdict->unassigned };
    shoal_assign_output_t output = {
        .holding_count = verdict->count,
        .holdings = (shoal_assign_holding_t *) verdict->holdings,
        .unassigned_count = verdict->unassigned ? 1 : 0,
        .unassigned = unassigned,
        .moves = { verdict->moves[0], verdict->moves[1], verdict->moves[2] },
    };
    char report[2048];
    int violations = shoal_assign_check (&input, &output, report, sizeof report);
    if (verdict->violation) {
        CHECK (violations > 0);
        CHECK_CONTAINS (report, verdict->violation);
    } else {
        CHECK_EQ (violations, 0);
        CHECK_STR (report, "");
    }
    free (cluster);
}

static void
checker_accepts_a_valid_output (void)
{
    s_check_verdict (
        &(s_verdict_case_t){ NULL,
                             1,
                             { { "n1", "s/0", 1 }, { "n2", "w/0", 1 }, { "n2", "s/0", 2 } },
                             3,
                             NULL,
                             { 2, 1, 0 } });
}

//  Each case breaks one rule; the report must say which. Roles are 1
//  active, 2 standby, 3 learner.
static void
checker_reports_each_violation (void)
{
    static const s_verdict_case_t cases[] = {
        { "1: w/0 has no active",
          1,
          { { "n1", "s/0", 1 }, { "n2", "s/0", 2 } },
          2,
          NULL,
          { 1, 1, 0 } },
        { "1: w/0 has 2 actives",
          1,
          { { "n1", "s/0", 1 }, { "n1", "w/0", 1 }, { "n2", "w/0", 1 }, { "n2", "s/0", 2 } },
          4,
          NULL,
          { 3, 1, 0 } },
        { "1: w/0 is unassigned but n1",
          1,
          { { "n1", "s/0", 1 }, { "n2", "s/0", 2 } },
          2,
          "w/0",
          { 1, 1, 0 } },
        { "1: n1 holds s/0 twice",
          1,
          { { "n1", "s/0", 1 }, { "n1", "w/0", 1 }, { "n1", "s/0", 2 } },
          3,
          NULL,
          { 2, 1, 0 } },
        { "1: n9 holds w/0 but is not a node of the input",
          1,
          { { "n1", "s/0", 1 }, { "n9", "w/0", 1 } },
          2,
          NULL,
          { 2, 0, 0 } },
        { "2: n1 holds stateless w/0 as standby",
          1,
          { { "n1", "s/0", 1 }, { "n1", "w/0", 2 }, { "n2", "w/0", 1 }, { "n2", "s/0", 2 } },
          4,
          NULL,
          { 2, 2, 0 } },
        { "3: s/0 has 0 standby",
          1,
          { { "n1", "s/0", 1 }, { "n2", "w/0", 1 } },
          2,
          NULL,
          { 2, 0, 0 } },
        { "4: s/0 is active on n2",
          1,
          { { "n1", "w/0", 1 }, { "n1", "s/0", 2 }, { "n2", "s/0", 1 } },
          3,
          NULL,
          { 2, 1, 0 } },
        { "5: n1 holds active weight 3, above its 2 slots",
          2,
          { { "n1", "s/0", 1 }, { "n1", "w/0", 1 }, { "n2", "s/0", 2 } },
          3,
          NULL,
          { 2, 1, 0 } },
        { "order: holding 1",
          1,
          { { "n2", "w/0", 1 }, { "n1", "s/0", 1 }, { "n2", "s/0", 2 } },
          3,
          NULL,
          { 2, 1, 0 } },
        { "followup: false with 1 learners",
          1,
          { { "n1", "s/0", 1 }, { "n2", "w/0", 1 }, { "n2", "s/0", 3 } },
          3,
          NULL,
          { 2, 0, 1 } },
        { "moves: active moves reported 1, counted 2",
          1,
          { { "n1", "s/0", 1 }, { "n2", "w/0", 1 }, { "n2", "s/0", 2 } },
          3,
          NULL,
          { 1, 1, 0 } },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        s_check_verdict (&cases[i]);
}

//  Slots excuse an active off the caught-up node, and an unassigned task,
//  only when the better nodes are full.
static void
checker_lets_slots_decide (void)
{
    s_cluster_t *cluster = s_cluster_new (0, 1, 100);
    s_node (cluster, "n1", 1)->slots = 1;
    s_node (cluster, "n2", 1)->slots = 1;
    s_task (cluster, "a/0", "a", true);
    s_task (cluster, "a/1", "a", true);
    s_task (cluster, "a/2", "a", true);
    s_lag (cluster, "n1", "a/0", 0);
    s_lag (cluster, "n1", "a/1", 0);
    shoal_assign_input_t input = s_input (cluster);
    shoal_assign_holding_t holdings[] = {
        { "n1", "a/0", SHOAL_ROLE_ACTIVE },
        { "n2", "a/1", SHOAL_ROLE_ACTIVE },
    };
    const char *unassigned[] = { "a/2" };
    shoal_assign_output_t output = {
        .holding_count = 2,
        .holdings = holdings,
        .unassigned_count = 1,
        .unassigned = unassigned,
        .moves = { 2, 0, 0 },
    };
    char report[1024];
    CHECK_EQ (shoal_assign_check (&input, &output, report, sizeof report), 0);
    CHECK_STR (report, "");
    free (cluster);
}

//  ---------------------------------------------------------------------
//  The scenarios of the design (scenarios/assign/), transcribed

static const char *s_scenario_nodes[] = { "c1", "c2", "c3" };

//  01-single-client-mixed: one node, a stateful task at lag 0 and a
//  stateless one.
static s_cluster_t *
s_scenario_01 (void)
{
    s_cluster_t *cluster = s_cluster_new (0, 2, 100);
    s_node (cluster, "c1", 1);
    s_task (cluster, "0_0", "0", true);
    s_task (cluster, "0_1", "0", false);
    s_lag (cluster, "c1", "0_0", 0);
    return cluster;
}

static void
scenario_01_single_client_mixed (void)
{
    s_cluster_t *cluster = s_scenario_01 ();
    shoal_assign_output_t output;
    s_assign (cluster, &output);
    CHECK_EQ (s_count (&output, "c1", SHOAL_ROLE_ACTIVE), 2);
    CHECK_EQ (output.holding_count, 2);
    CHECK (!output.followup);
    CHECK_EQ (output.moves[0], 2);
    shoal_assign_output_release (&output);
    free (cluster);
}

//  02-standbys-impossible-one-client: standbys 1 on a single node.
static s_cluster_t *
s_scenario_02 (void)
{
    s_cluster_t *cluster = s_cluster_new (1, 2, 100);
    s_node (cluster, "c1", 1);
    s_task (cluster, "0_0", "0", true);
    s_task (cluster, "0_1", "0", true);
    s_hold (cluster, "c1", "0_0", SHOAL_ROLE_ACTIVE);
    s_hold (cluster, "c1", "0_1", SHOAL_ROLE_ACTIVE);
    return cluster;
}

static void
scenario_02_standbys_impossible_one_client (void)
{
    s_cluster_t *cluster = s_scenario_02 ();
    shoal_assign_output_t output;
    s_assign (cluster, &output);
    s_check_stays (cluster, &output);
    CHECK (!output.followup);
    shoal_assign_output_release (&output);
    free (cluster);
}

//  Nine tasks of three jobs "0", "1", "2", named as in the scenarios.
static const char *s_nine_tasks[] = {
    "0_0", "0_1", "0_2", "1_0", "1_1", "1_2", "2_0", "2_1", "2_2"
};
static const char *s_nine_jobs[] = { "0", "0", "0", "1", "1", "1", "2", "2", "2" };

//  Four tasks of job "0".
static const char *s_four_tasks[] = { "0_0", "0_1", "0_2", "0_3" };

//  04-fresh-even-split: nobody caught up (acceptable lag 0, lags 10).
static s_cluster_t *
s_scenario_04 (void)
{
    s_cluster_t *cluster = s_cluster_new (0, 1, 0);
    for (int n = 0; n < 3; n++)
        s_node (cluster, s_scenario_nodes[n], 1);
    for (int t = 0; t < 9; t++) {
        s_task (cluster, s_nine_tasks[t], s_nine_jobs[t], true);
        for (int n = 0; n < 3; n++)
            s_lag (cluster, s_scenario_nodes[n], s_nine_tasks[t], 10);
    }
    return cluster;
}

static void
scenario_04_fresh_even_split (void)
{
    s_cluster_t *cluster = s_scenario_04 ();
    shoal_assign_output_t output;
    s_assign (cluster, &output);
    for (int n = 0; n < 3; n++)
        CHECK_EQ (s_count (&output, s_scenario_nodes[n], SHOAL_ROLE_ACTIVE), 3);
    //  Each job's three tasks on three different nodes.
    for (int job = 0; job < 3; job++) {
        const char *a = s_active (&output, s_nine_tasks[3 * job]);
        const char *b = s_active (&output, s_nine_tasks[3 * job + 1]);
        const char *c = s_active (&output, s_nine_tasks[3 * job + 2]);
        CHECK (a && b && c && strcmp (a, b) && strcmp (b, c) && strcmp (a, c));
    }
    //  Every node is as good as any: nothing to warm up, nothing to wait for.
    CHECK_EQ (s_count (&output, NULL, SHOAL_ROLE_LEARNER), 0);
    CHECK (!output.followup);
    shoal_assign_output_release (&output);
    free (cluster);
}

//  09-more-clients-than-tasks: 3 nodes, 2 tasks.
static s_cluster_t *
s_scenario_09 (void)
{
    s_cluster_t *cluster = s_cluster_new (0, 1, 0);
    for (int n = 0; n < 3; n++)
        s_node (cluster, s_scenario_nodes[n], 1);
    for (int t = 0; t < 2; t++) {
        s_task (cluster, s_nine_tasks[t], "0", true);
        for (int n = 0; n < 3; n++)
            s_lag (cluster, s_scenario_nodes[n], s_nine_tasks[t], 10);
    }
    return cluster;
}

static void
scenario_09_more_clients_than_tasks (void)
{
    s_cluster_t *cluster = s_scenario_09 ();
    shoal_assign_output_t output;
    s_assign (cluster, &output);
    const char *a = s_active (&output, "0_0"), *b = s_active (&output, "0_1");
    CHECK (a && b && strcmp (a, b) != 0);
    CHECK (!output.followup);
    shoal_assign_output_release (&output);
    free (cluster);
}

//  12-steady-state: valid, balanced, caught up: comes back as it is.
static s_cluster_t *
s_scenario_12 (void)
{
    s_cluster_t *cluster = s_cluster_new (0, 2, 100);
    s_node (cluster, "c1", 1);
    s_node (cluster, "c2", 1);
    for (int t = 0; t < 4; t++)
        s_task (cluster, s_four_tasks[t], "0", true);
    s_hold (cluster, "c1", "0_0", SHOAL_ROLE_ACTIVE);
    s_hold (cluster, "c1", "0_2", SHOAL_ROLE_ACTIVE);
    s_hold (cluster, "c2", "0_1", SHOAL_ROLE_ACTIVE);
    s_hold (cluster, "c2", "0_3", SHOAL_ROLE_ACTIVE);
    return cluster;
}

static void
scenario_12_steady_state (void)
{
    s_cluster_t *cluster = s_scenario_12 ();
    shoal_assign_output_t output;
    s_assign (cluster, &output);
    s_check_stays (cluster, &output);
    CHECK (!output.followup);
    shoal_assign_output_release (&output);
    free (cluster);
}

//  14-scale-out-1-to-2: c2 joins c1, which runs everything; c2 has no state.
//  KIP-441: the actives stay on c1 while learners warm up on c2, then two
//  of them move; two rounds in all (needed moves 2, max_warmups 2).
static s_cluster_t *
s_scenario_14 (void)
{
    s_cluster_t *cluster = s_cluster_new (0, 2, 10000);
    s_node (cluster, "c1", 1);
    s_node (cluster, "c2", 1);
    for (int t = 0; t < 4; t++) {
        s_task (cluster, s_four_tasks[t], "0", true);
        s_hold (cluster, "c1", s_four_tasks[t], SHOAL_ROLE_ACTIVE);
    }
    return cluster;
}

static void
scenario_14_scale_out_1_to_2 (void)
{
    s_cluster_t *cluster = s_scenario_14 ();
    shoal_assign_output_t output;
    s_assign (cluster, &output);
    CHECK_EQ (s_count (&output, "c1", SHOAL_ROLE_ACTIVE), 4);
    CHECK_EQ (s_count (&output, "c2", SHOAL_ROLE_LEARNER), 2);
    CHECK_EQ (output.moves[0], 0);
    CHECK_EQ (output.moves[2], 2);
    CHECK (output.followup);

    s_feed_back (cluster, &output);
    shoal_assign_output_release (&output);
    s_assign (cluster, &output);
    CHECK_EQ (s_count (&output, "c1", SHOAL_ROLE_ACTIVE), 2);
    CHECK_EQ (s_count (&output, "c2", SHOAL_ROLE_ACTIVE), 2);
    CHECK_EQ (s_count (&output, NULL, SHOAL_ROLE_LEARNER), 0);
    CHECK_EQ (output.moves[0], 2);
    CHECK (!output.followup);
    shoal_assign_output_release (&output);
    free (cluster);
}

//  24-mirrored-standbys: two nodes, one task each, standbys 1: each node
//  gets the other's task as standby, and that is stable.
static s_cluster_t *
s_scenario_24 (void)
{
    s_cluster_t *cluster = s_cluster_new (1, 2, 100);
    s_node (cluster, "c1", 1);
    s_node (cluster, "c2", 1);
    s_task (cluster, "0_0", "0", true);
    s_task (cluster, "0_1", "0", true);
    s_hold (cluster, "c1", "0_0", SHOAL_ROLE_ACTIVE);
    s_hold (cluster, "c2", "0_1", SHOAL_ROLE_ACTIVE);
    return cluster;
}

static void
scenario_24_mirrored_standbys (void)
{
    s_cluster_t *cluster = s_scenario_24 ();
    shoal_assign_output_t output;
    s_assign (cluster, &output);
    CHECK_EQ (s_role (&output, "c1", "0_0"), SHOAL_ROLE_ACTIVE);
    CHECK_EQ (s_role (&output, "c2", "0_1"), SHOAL_ROLE_ACTIVE);
    CHECK_EQ (s_role (&output, "c1", "0_1"), SHOAL_ROLE_STANDBY);
    CHECK_EQ (s_role (&output, "c2", "0_0"), SHOAL_ROLE_STANDBY);
    CHECK_EQ (output.moves[0], 0);
    CHECK_EQ (output.moves[1], 2);
    CHECK (!output.followup);

    s_feed_back (cluster, &output);
    shoal_assign_output_release (&output);
    s_assign (cluster, &output);
    s_check_stays (cluster, &output);
    CHECK (!output.followup);
    shoal_assign_output_release (&output);
    free (cluster);
}

//  25-no-standbys-stateless: standbys 1 asks nothing of stateless tasks.
static s_cluster_t *
s_scenario_25 (void)
{
    s_cluster_t *cluster = s_cluster_new (1, 2, 100);
    s_node (cluster, "c1", 1);
    s_node (cluster, "c2", 1);
    s_task (cluster, "0_0", "0", false);
    s_task (cluster, "0_1", "0", false);
    return cluster;
}

static void
scenario_25_no_standbys_stateless (void)
{
    s_cluster_t *cluster = s_scenario_25 ();
    shoal_assign_output_t output;
    s_assign (cluster, &output);
    CHECK_EQ (output.holding_count, 2);
    CHECK_EQ (s_count (&output, "c1", SHOAL_ROLE_ACTIVE), 1);
    CHECK_EQ (s_count (&output, "c2", SHOAL_ROLE_ACTIVE), 1);
    CHECK (!output.followup);
    shoal_assign_output_release (&output);
    free (cluster);
}

//  26-standby-count-capped: standbys 3 with 3 nodes: 2 standbys per task.
static s_cluster_t *
s_scenario_26 (void)
{
    s_cluster_t *cluster = s_cluster_new (3, 2, 10000);
    for (int n = 0; n < 3; n++)
        s_node (cluster, s_scenario_nodes[n], 1);
    for (int t = 0; t < 3; t++) {
        s_task (cluster, s_nine_tasks[t], "0", true);
        for (int n = 0; n < 3; n++)
            s_lag (cluster, s_scenario_nodes[n], s_nine_tasks[t], 0);
    }
    return cluster;
}

static void
scenario_26_standby_count_capped (void)
{
    s_cluster_t *cluster = s_scenario_26 ();
    shoal_assign_output_t output;
    s_assign (cluster, &output);
    for (int n = 0; n < 3; n++) {
        CHECK_EQ (s_count (&output, s_scenario_nodes[n], SHOAL_ROLE_ACTIVE), 1);
        CHECK_EQ (s_count (&output, s_scenario_nodes[n], SHOAL_ROLE_STANDBY), 2);
    }
    CHECK_EQ (s_count (&output, NULL, SHOAL_ROLE_LEARNER), 0);
    CHECK (!output.followup);
    shoal_assign_output_release (&output);
    free (cluster);
}

//  35-stateless-caps-123: 7 stateless tasks over capacities 1, 2 and 3: loads
//  in proportion to capacity.
static s_cluster_t *
s_scenario_35 (void)
{
    s_cluster_t *cluster = s_cluster_new (0, 1, 0);
    for (int n = 0; n < 3; n++)
        s_node (cluster, s_scenario_nodes[n], (uint32_t) n + 1);
    static const char *tasks[] = { "0_0", "0_1", "0_2", "0_3", "1_0", "1_1", "1_2" };
    for (int t = 0; t < 7; t++)
        s_task (cluster, tasks[t], t < 4 ? "0" : "1", false);
    return cluster;
}

static void
scenario_35_stateless_caps_123 (void)
{
    s_cluster_t *cluster = s_scenario_35 ();
    shoal_assign_output_t output;
    s_assign (cluster, &output);
    s_check_balanced (cluster, &output, false);
    //  Proportional to capacity: each node's count is 7 * capacity / 6
    //  rounded down or up.
    for (int n = 0; n < 3; n++) {
        size_t count = s_count (&output, s_scenario_nodes[n], SHOAL_ROLE_ACTIVE);
        CHECK (count >= (size_t) (7 * (n + 1)) / 6 && count <= (size_t) (7 * (n + 1) + 5) / 6);
    }
    CHECK (!output.followup);
    shoal_assign_output_release (&output);
    free (cluster);
}

//  The transcriptions above, by the file they transcribe.
static const struct {
    const char *file;
    s_cluster_t *(*build) (void);
} s_scenarios[] = {
    { "01-single-client-mixed.json", s_scenario_01 },
    { "02-standbys-impossible-one-client.json", s_scenario_02 },
    { "04-fresh-even-split.json", s_scenario_04 },
    { "09-more-clients-than-tasks.json", s_scenario_09 },
    { "12-steady-state.json", s_scenario_12 },
    { "14-scale-out-1-to-2.json", s_scenario_14 },
    { "24-mirrored-standbys.json", s_scenario_24 },
    { "25-no-standbys-stateless.json", s_scenario_25 },
    { "26-standby-count-capped.json", s_scenario_26 },
    { "35-stateless-caps-123.json", s_scenario_35 },
};

//  A cluster with input's nodes, tasks, assignment in force and lags; its
//  strings stay those of input.
static s_cluster_t *
s_cluster_from_input (const shoal_assign_input_t *input)
{
    s_cluster_t *cluster = s_cluster_new (0, 0, 0);
    cluster->config = input->config;
    for (size_t n = 0; n < input->node_count; n++) {
        const shoal_assign_node_t *from = &input->nodes[n];
        shoal_assign_node_t *node = s_node (cluster, from->id, from->capacity);
        node->slots = from->slots;
        for (uint32_t i = 0; i < from->label_count; i++)
            s_node_label (cluster, node, from->labels[i].key, from->labels[i].value);
        for (uint32_t i = 0; i < from->handle_count; i++)
            s_node_handles (cluster, node, from->handles[i]);
        node->handles_all = from->handles_all;
    }
    for (size_t t = 0; t < input->task_count; t++) {
        const shoal_assign_task_t *from = &input->tasks[t];
        shoal_assign_task_t *task = s_task (cluster, from->id, from->job, from->stateful);
        task->weight = from->weight;
        for (uint32_t i = 0; i < from->require_count; i++)
            s_task_require (cluster, task, from->require[i].key, from->require[i].value);
    }
    for (size_t i = 0; i < input->current_count; i++)
        s_hold (cluster, input->current[i].node, input->current[i].task, input->current[i].role);
    for (size_t i = 0; i < input->lag_count; i++)
        s_lag (cluster, input->lags[i].node, input->lags[i].task, input->lags[i].lag);
    return cluster;
}

//  The whole of a file, NUL-terminated, or NULL.
static char *
s_read_file (const char *path, size_t *size)
{
    FILE *file = fopen (path, "rb");
    if (!file)
        return NULL;
    char *text = NULL;
    if (fseek (file, 0, SEEK_END) == 0) {
        long length = ftell (file);
        rewind (file);
        text = length >= 0 ? malloc ((size_t) length + 1) : NULL;
        if (text && fread (text, 1, (size_t) length, file) == (size_t) length) {
            text[length] = 0;
            *size = (size_t) length;
        } else {
            free (text);
            text = NULL;
        }
    }
    fclose (file);
    return text;
}

static int
s_name_order (const void *a, const void *b)
{
    return strcmp (*(char *const *) a, *(char *const *) b);
}

//  Checks one scenario file as `shoal assign` reads it: the output is valid,
//  the cluster converges within the bound and then stays put, and where the
//  file has a transcription above, that gives the same output.
static void
s_check_scenario_file (const char *directory, const char *name)
{
    char path[1024];
    snprintf (path, sizeof path, "%s/%s", directory, name);
    size_t size = 0;
    char *text = s_read_file (path, &size);
    CHECK (text != NULL);
    shoal_assign_json_t *parsed = NULL;
    char why[256] = "";
    int rc = text ? shoal_assign_json_parse (text, size, &parsed, why, sizeof why) : -1;
    CHECK_EQ (rc, 0);
    if (rc == 0) {
        s_cluster_t *cluster = s_cluster_from_input (shoal_assign_json_input (parsed));
        shoal_assign_output_t output;
        s_assign (cluster, &output);
        for (size_t i = 0; i < sizeof s_scenarios / sizeof s_scenarios[0]; i++)
            if (strcmp (s_scenarios[i].file, name) == 0) {
                s_cluster_t *transcribed = s_scenarios[i].build ();
                shoal_assign_output_t expected;
                s_assign (transcribed, &expected);
                bool same = s_same_output (&output, &expected);
                CHECK (same);
                if (!same)
                    fprintf (stderr, "%s and its transcription give different outputs\n", name);
                shoal_assign_output_release (&expected);
                free (transcribed);
            }
        shoal_assign_output_release (&output);
        s_check_converges (cluster, &output);
        shoal_assign_output_release (&output);
        s_assign (cluster, &output);
        s_check_stays (cluster, &output);
        shoal_assign_output_release (&output);
        free (cluster);
    } else
        fprintf (stderr, "%s: %s\n", name, why);
    shoal_assign_json_destroy (&parsed);
    free (text);
}

//  Every tests/assign/scenarios/*.json, including any added after these
//  tests were written.
static void
scenario_files_satisfy_the_contract (void)
{
    const char *directory = SHOAL_TESTS_DIR "/assign/scenarios";
    DIR *listing = opendir (directory);
    CHECK (listing != NULL);
    if (!listing)
        return;
    char *names[256];
    size_t count = 0;
    struct dirent *entry;
    while ((entry = readdir (listing)) && count < 256) {
        size_t length = strlen (entry->d_name);
        if (length > 5 && strcmp (entry->d_name + length - 5, ".json") == 0)
            names[count++] = strdup (entry->d_name);
    }
    closedir (listing);
    qsort (names, count, sizeof *names, s_name_order);
    CHECK (count >= sizeof s_scenarios / sizeof s_scenarios[0]);
    for (size_t i = 0; i < count; i++) {
        int before = test_failures;
        s_check_scenario_file (directory, names[i]);
        if (test_failures != before)
            fprintf (stderr, "in %s\n", names[i]);
        free (names[i]);
    }
}

//  Clusters the leader met in the simulator (random-tasks with submits),
//  in tests/assign/regress/: the assignor traded two stateless tasks
//  between two nodes for nothing (seed 1: of one job, then of two jobs of
//  one task each), sent three stateless tasks of two jobs round three nodes
//  (seed 1899), moved two stateless tasks back and forth while stateful
//  ones waited for warm-ups that could not start (seed 5841), or let a
//  stateless task and two warm-ups take turns for one node's room (seed
//  5241), and did it again when given its own output: the leader published
//  two plans in turn without end.
static const char *const s_regress_files[] = {
    "pointless-swap-same-job.json", "pointless-swap-two-jobs.json", "stateless-jobs-rotate.json",
    "stateless-flip-while-warmups-wait.json", "warmups-taking-turns.json"
};
#define S_REGRESS_FILES (sizeof s_regress_files / sizeof s_regress_files[0])

//  The cluster of one of them, parsed; NULL (and a failed CHECK) when it
//  cannot be read.
static shoal_assign_json_t *
s_regress (const char *file)
{
    char path[1024], why[256] = "";
    snprintf (path, sizeof path, "%s/assign/regress/%s", SHOAL_TESTS_DIR, file);
    size_t size = 0;
    char *text = s_read_file (path, &size);
    shoal_assign_json_t *parsed = NULL;
    if (!text || shoal_assign_json_parse (text, size, &parsed, why, sizeof why) != 0) {
        fprintf (stderr, "%s: %s\n", file, why);
        CHECK (false);
        parsed = NULL;
    }
    free (text);
    return parsed;
}

//  Where only a swap or a cycle was wrong, no active leaves its node: the
//  only changes are learners promoted. (In warmups-taking-turns.json a
//  stateless task does move once, to make room.)
static void
no_task_trades_places_for_nothing (void)
{
    for (size_t f = 0; f < S_REGRESS_FILES; f++) {
        if (strcmp (s_regress_files[f], "warmups-taking-turns.json") == 0)
            continue;
        shoal_assign_json_t *parsed = s_regress (s_regress_files[f]);
        if (!parsed)
            continue;
        const shoal_assign_input_t *input = shoal_assign_json_input (parsed);
        shoal_assign_output_t output;
        char why[256];
        CHECK_EQ (shoal_assign (input, &output, why, sizeof why), 0);
        size_t left = 0;
        for (size_t c = 0; c < input->current_count; c++) {
            const shoal_assign_holding_t *was = &input->current[c];
            if (was->role != SHOAL_ROLE_ACTIVE)
                continue;
            bool stays = false;
            for (size_t h = 0; h < output.holding_count && !stays; h++)
                stays = output.holdings[h].role == SHOAL_ROLE_ACTIVE &&
                        strcmp (output.holdings[h].task, was->task) == 0 &&
                        strcmp (output.holdings[h].node, was->node) == 0;
            if (!stays)
                fprintf (stderr, "%s: %s left its node\n", s_regress_files[f], was->task);
            left += !stays;
        }
        CHECK_EQ (left, 0);
        shoal_assign_output_release (&output);
        shoal_assign_json_destroy (&parsed);
    }
}

//  Given its own output as current, with the same lags, the assignor gives
//  that output again, in every one of them. Before the fixes each came
//  back to the other plan.
static void
fed_back_output_stands (void)
{
    for (size_t f = 0; f < S_REGRESS_FILES; f++) {
        shoal_assign_json_t *parsed = s_regress (s_regress_files[f]);
        if (!parsed)
            continue;
        const shoal_assign_input_t *input = shoal_assign_json_input (parsed);
        shoal_assign_output_t first;
        char why[256];
        CHECK_EQ (shoal_assign (input, &first, why, sizeof why), 0);
        bool same = s_stands (input, &first);
        if (!same)
            fprintf (stderr, "%s: fed back, the output changed\n", s_regress_files[f]);
        CHECK (same);
        shoal_assign_output_release (&first);
        shoal_assign_json_destroy (&parsed);
    }
}

//  ---------------------------------------------------------------------
//  Properties, one behaviour each

//  A cluster that uses every feature of the input: labels, handles,
//  require, slots, weights, spread_by, an assignment in force naming a node
//  that left and a task that is gone, and lags.
static s_cluster_t *
s_rich_cluster (void)
{
    s_cluster_t *cluster = s_cluster_new (1, 2, 100);
    cluster->config.spread_by = "zone";
    static const char *names[] = { "n1", "n2", "n3", "n4", "n5" };
    static const char *zones[] = { "a", "a", "b", "b", "c" };
    for (int n = 0; n < 5; n++) {
        shoal_assign_node_t *node = s_node (cluster, names[n], (uint32_t) (n % 3) + 1);
        s_node_label (cluster, node, "zone", zones[n]);
        s_node_label (cluster, node, "disk", n % 2 ? "ssd" : "hdd");
    }
    s_node_handles (cluster, &cluster->nodes[4], "web");
    s_node_handles (cluster, &cluster->nodes[4], "db");
    cluster->nodes[3].slots = 3;
    static const char *tasks[] = { "db/0",  "db/1",  "db/2",  "db/3",  "web/0",
                                   "web/1", "web/2", "etl/0", "etl/1", "etl/2" };
    for (int t = 0; t < 10; t++) {
        const char *job = t < 4 ? "db" : t < 7 ? "web" : "etl";
        shoal_assign_task_t *task = s_task (cluster, tasks[t], job, t < 4 || t >= 7);
        task->weight = (uint32_t) (t % 2) + 1;
    }
    s_task_require (cluster, &cluster->tasks[7], "disk", "ssd");
    s_task_require (cluster, &cluster->tasks[8], "disk", "ssd");
    s_task_require (cluster, &cluster->tasks[8], "zone", "b");
    s_hold (cluster, "n1", "db/0", SHOAL_ROLE_ACTIVE);
    s_hold (cluster, "n2", "db/0", SHOAL_ROLE_STANDBY);
    s_hold (cluster, "n9", "db/1", SHOAL_ROLE_ACTIVE);
    s_hold (cluster, "n3", "old/0", SHOAL_ROLE_ACTIVE);
    s_hold (cluster, "n4", "web/0", SHOAL_ROLE_ACTIVE);
    s_lag (cluster, "n3", "db/1", 50);
    s_lag (cluster, "n5", "db/1", 20);
    s_lag (cluster, "n2", "db/2", 5000);
    s_lag (cluster, "n4", "db/2", 4000);
    s_lag (cluster, "n2", "etl/0", 0);
    s_lag (cluster, "n9", "etl/1", 0);
    s_lag (cluster, "n1", "gone/7", 0);
    return cluster;
}

static void
output_does_not_depend_on_input_order (void)
{
    s_cluster_t *cluster = s_rich_cluster ();
    shoal_assign_output_t output;
    s_assign (cluster, &output);
    shoal_assign_input_t input = s_input (cluster);
    uint64_t state = 7;
    for (int i = 0; i < 50; i++)
        CHECK (s_same_when_shuffled (&input, &output, &state));
    shoal_assign_output_release (&output);
    free (cluster);
}

static void
same_input_same_output (void)
{
    s_cluster_t *cluster = s_rich_cluster ();
    shoal_assign_output_t first, second;
    s_assign (cluster, &first);
    s_assign (cluster, &second);
    CHECK (s_same_output (&first, &second));
    shoal_assign_output_release (&first);
    shoal_assign_output_release (&second);
    free (cluster);
}

//  The rich cluster converges too, and stays put once it has.
static void
rich_cluster_converges_and_stays (void)
{
    s_cluster_t *cluster = s_rich_cluster ();
    shoal_assign_output_t output;
    s_check_converges (cluster, &output);
    shoal_assign_output_release (&output);
    s_assign (cluster, &output);
    s_check_stays (cluster, &output);
    shoal_assign_output_release (&output);
    free (cluster);
}

static void
require_handles_and_slots_are_respected (void)
{
    s_cluster_t *cluster = s_cluster_new (0, 2, 100);
    shoal_assign_node_t *n1 = s_node (cluster, "n1", 1);
    s_node_label (cluster, n1, "zone", "a");
    s_node_handles (cluster, n1, "web");
    shoal_assign_node_t *n2 = s_node (cluster, "n2", 1);
    s_node_label (cluster, n2, "zone", "b");
    s_node_handles (cluster, n2, "batch");
    s_node_handles (cluster, n2, "big");
    shoal_assign_node_t *n3 = s_node (cluster, "n3", 1);
    s_node_label (cluster, n3, "zone", "b");
    s_node_handles (cluster, n3, "batch");
    s_node_handles (cluster, n3, "big");
    s_node_handles (cluster, n3, "db");
    n3->slots = 2;
    //  Only n1 may run web/0; no node is in zone c; nobody handles "idle";
    //  big/0 does not fit in n3's slots.
    s_task_require (cluster, s_task (cluster, "web/0", "web", false), "zone", "a");
    s_task_require (cluster, s_task (cluster, "db/0", "db", true), "zone", "c");
    s_task (cluster, "batch/0", "batch", false);
    s_task (cluster, "batch/1", "batch", false);
    s_task (cluster, "batch/2", "batch", false);
    s_task (cluster, "batch/3", "batch", false);
    shoal_assign_task_t *big = s_task (cluster, "big/0", "big", true);
    big->weight = 5;
    s_task_require (cluster, big, "zone", "b");
    s_task (cluster, "idle/0", "idle", false);

    shoal_assign_output_t output;
    s_assign (cluster, &output);
    CHECK_STR (s_active (&output, "web/0"), "n1");
    CHECK_STR (s_active (&output, "big/0"), "n2");
    CHECK_EQ (output.unassigned_count, 2);
    if (output.unassigned_count == 2) {
        CHECK_STR (output.unassigned[0], "db/0");
        CHECK_STR (output.unassigned[1], "idle/0");
    }
    CHECK (s_count (&output, "n3", SHOAL_ROLE_ACTIVE) <= 2);
    shoal_assign_output_release (&output);
    free (cluster);
}

//  With every slot taken, the task left over is listed, not dropped.
static void
full_slots_leave_tasks_unassigned (void)
{
    s_cluster_t *cluster = s_cluster_new (0, 2, 100);
    s_node (cluster, "n1", 1)->slots = 1;
    s_node (cluster, "n2", 1)->slots = 1;
    s_task (cluster, "w/0", "w", false);
    s_task (cluster, "w/1", "w", false);
    s_task (cluster, "w/2", "w", false);
    s_task (cluster, "huge/0", "huge", false)->weight = 2;
    shoal_assign_output_t output;
    s_assign (cluster, &output);
    CHECK_EQ (output.unassigned_count, 2);
    CHECK_EQ (s_count (&output, NULL, SHOAL_ROLE_ACTIVE), 2);
    shoal_assign_output_release (&output);
    free (cluster);
}

//  Slots may force an active off the only caught-up node.
static void
slots_come_before_caught_up (void)
{
    s_cluster_t *cluster = s_cluster_new (0, 2, 100);
    s_node (cluster, "n1", 1)->slots = 1;
    s_node (cluster, "n2", 1);
    s_task (cluster, "a/0", "a", true);
    s_task (cluster, "a/1", "a", true);
    s_lag (cluster, "n1", "a/0", 0);
    s_lag (cluster, "n1", "a/1", 0);
    shoal_assign_output_t output;
    s_assign (cluster, &output);
    CHECK_EQ (output.unassigned_count, 0);
    CHECK_EQ (s_count (&output, "n1", SHOAL_ROLE_ACTIVE), 1);
    CHECK_EQ (s_count (&output, "n2", SHOAL_ROLE_ACTIVE), 1);
    shoal_assign_output_release (&output);
    free (cluster);
}

static void
stateless_tasks_get_no_standbys_or_learners (void)
{
    s_cluster_t *cluster = s_cluster_new (2, 3, 100);
    s_node (cluster, "n1", 1);
    s_node (cluster, "n2", 1);
    s_node (cluster, "n3", 1);
    static const char *tasks[] = { "w/0", "w/1", "w/2", "w/3", "w/4", "w/5" };
    for (int t = 0; t < 6; t++) {
        s_task (cluster, tasks[t], "w", false);
        s_hold (cluster, "n1", tasks[t], SHOAL_ROLE_ACTIVE);
    }
    shoal_assign_output_t output;
    s_assign (cluster, &output);
    CHECK_EQ (s_count (&output, NULL, SHOAL_ROLE_STANDBY), 0);
    CHECK_EQ (s_count (&output, NULL, SHOAL_ROLE_LEARNER), 0);
    //  Stateless tasks have nothing to warm up: balance is immediate.
    for (int n = 0; n < 3; n++)
        CHECK_EQ (s_count (&output, cluster->nodes[n].id, SHOAL_ROLE_ACTIVE), 2);
    CHECK (!output.followup);
    shoal_assign_output_release (&output);
    free (cluster);
}

//  A valid, balanced, caught-up assignment with standbys and stateless
//  tasks, though not the one the assignor would draw from scratch, comes
//  back unchanged.
static void
balanced_caught_up_assignment_stays (void)
{
    s_cluster_t *cluster = s_cluster_new (1, 2, 100);
    static const char *nodes[] = { "n1", "n2", "n3" };
    static const char *stateful[] = { "s/0", "s/1", "s/2", "s/3", "s/4", "s/5" };
    static const char *stateless[] = { "w/0", "w/1", "w/2" };
    for (int n = 0; n < 3; n++)
        s_node (cluster, nodes[n], 1);
    //  s/i is active on node (i + 2) % 3, its standby on the next node; the
    //  stateless tasks go the opposite way round.
    for (int t = 0; t < 6; t++) {
        s_task (cluster, stateful[t], "s", true);
        s_hold (cluster, nodes[(t + 2) % 3], stateful[t], SHOAL_ROLE_ACTIVE);
        s_hold (cluster, nodes[t % 3], stateful[t], SHOAL_ROLE_STANDBY);
        s_lag (cluster, nodes[t % 3], stateful[t], 0);
    }
    for (int t = 0; t < 3; t++) {
        s_task (cluster, stateless[t], "w", false);
        s_hold (cluster, nodes[2 - t], stateless[t], SHOAL_ROLE_ACTIVE);
    }
    shoal_assign_output_t output;
    s_assign (cluster, &output);
    s_check_stays (cluster, &output);
    CHECK (!output.followup);
    shoal_assign_output_release (&output);
    free (cluster);
}

//  KIP-441: while a caught-up node exists, actives stay on caught-up nodes;
//  the nodes that should take tasks over warm up as learners, at most
//  max_warmups at once, and the cluster converges within the bound.
static void
actives_wait_for_learners (void)
{
    s_cluster_t *cluster = s_cluster_new (0, 3, 100);
    static const char *nodes[] = { "n1", "n2", "n3", "n4" };
    static const char *tasks[] = { "a/0", "a/1", "a/2", "a/3", "a/4",  "a/5",
                                   "a/6", "a/7", "a/8", "a/9", "a/10", "a/11" };
    for (int n = 0; n < 4; n++)
        s_node (cluster, nodes[n], 1);
    for (int t = 0; t < 12; t++) {
        s_task (cluster, tasks[t], "a", true);
        s_hold (cluster, "n1", tasks[t], SHOAL_ROLE_ACTIVE);
        s_lag (cluster, "n2", tasks[t], 5000);
    }
    shoal_assign_output_t output;
    s_assign (cluster, &output);
    CHECK_EQ (s_count (&output, "n1", SHOAL_ROLE_ACTIVE), 12);
    CHECK_EQ (s_count (&output, NULL, SHOAL_ROLE_LEARNER), 3);
    CHECK (output.followup);
    shoal_assign_output_release (&output);

    s_check_converges (cluster, &output);
    for (int n = 0; n < 4; n++)
        CHECK_EQ (s_count (&output, nodes[n], SHOAL_ROLE_ACTIVE), 3);
    shoal_assign_output_release (&output);
    free (cluster);
}

//  A caught-up standby takes over at once: no learner, no waiting.
static void
caught_up_standby_takes_over_at_once (void)
{
    s_cluster_t *cluster = s_cluster_new (1, 2, 100);
    s_node (cluster, "n1", 1);
    s_node (cluster, "n2", 1);
    static const char *tasks[] = { "a/0", "a/1", "a/2", "a/3" };
    for (int t = 0; t < 4; t++) {
        s_task (cluster, tasks[t], "a", true);
        s_hold (cluster, "n1", tasks[t], SHOAL_ROLE_ACTIVE);
        s_hold (cluster, "n2", tasks[t], SHOAL_ROLE_STANDBY);
        s_lag (cluster, "n2", tasks[t], 10);
    }
    shoal_assign_output_t output;
    s_assign (cluster, &output);
    CHECK_EQ (s_count (&output, "n1", SHOAL_ROLE_ACTIVE), 2);
    CHECK_EQ (s_count (&output, "n2", SHOAL_ROLE_ACTIVE), 2);
    CHECK_EQ (s_count (&output, NULL, SHOAL_ROLE_LEARNER), 0);
    CHECK_EQ (output.moves[0], 2);
    CHECK (!output.followup);
    shoal_assign_output_release (&output);
    free (cluster);
}

//  When no node is caught up, the active goes to the least lagging one; a
//  node with no lag reported has no state at all.
static void
least_lag_wins_when_none_is_caught_up (void)
{
    s_cluster_t *cluster = s_cluster_new (0, 2, 100);
    s_node (cluster, "n1", 1);
    s_node (cluster, "n2", 1);
    s_node (cluster, "n3", 1);
    s_task (cluster, "a/0", "a", true);
    s_lag (cluster, "n1", "a/0", 500);
    s_lag (cluster, "n2", "a/0", 300);
    shoal_assign_output_t output;
    s_assign (cluster, &output);
    CHECK_STR (s_active (&output, "a/0"), "n2");
    shoal_assign_output_release (&output);
    free (cluster);
}

//  The active's node leaves: its caught-up standby takes over, a new
//  standby is placed, and names the input no longer knows are ignored.
static void
node_leaving_hands_over_to_its_standby (void)
{
    s_cluster_t *cluster = s_cluster_new (1, 2, 100);
    s_node (cluster, "n2", 1);
    s_node (cluster, "n3", 1);
    s_task (cluster, "a/0", "a", true);
    s_hold (cluster, "n1", "a/0", SHOAL_ROLE_ACTIVE);
    s_hold (cluster, "n2", "a/0", SHOAL_ROLE_STANDBY);
    s_hold (cluster, "n2", "old/3", SHOAL_ROLE_ACTIVE);
    s_lag (cluster, "n2", "a/0", 0);
    s_lag (cluster, "n1", "a/0", 0);
    s_lag (cluster, "n3", "old/3", 0);
    shoal_assign_output_t output;
    s_assign (cluster, &output);
    CHECK_STR (s_active (&output, "a/0"), "n2");
    CHECK_EQ (s_role (&output, "n3", "a/0"), SHOAL_ROLE_STANDBY);
    CHECK_EQ (output.holding_count, 2);
    CHECK_EQ (output.moves[0], 1);
    CHECK_EQ (output.moves[1], 1);
    shoal_assign_output_release (&output);
    free (cluster);
}

//  A draining node takes nothing and keeps each stateful active only until
//  a learner elsewhere has caught up (KIP-441's warm-up, for a drain); its
//  stateless tasks and its standbys go at once. Converged, it holds
//  nothing, and no stateful task ever started cold.
static void
draining_node_warms_learners_first (void)
{
    s_cluster_t *cluster = s_cluster_new (1, 2, 100);
    static const char *nodes[] = { "n1", "n2", "n3" };
    static const char *tasks[] = { "a/0", "a/1", "a/2", "a/3", "a/4", "a/5" };
    shoal_assign_node_t *n1 = s_node (cluster, "n1", 1);
    s_node (cluster, "n2", 1);
    s_node (cluster, "n3", 1);
    for (int t = 0; t < 6; t++) {
        s_task (cluster, tasks[t], "a", true);
        s_hold (cluster, nodes[t % 3], tasks[t], SHOAL_ROLE_ACTIVE);
        s_hold (cluster, nodes[(t + 1) % 3], tasks[t], SHOAL_ROLE_STANDBY);
        s_lag (cluster, nodes[(t + 1) % 3], tasks[t], 0);
    }
    s_task (cluster, "s/0", "s", false);
    s_hold (cluster, "n1", "s/0", SHOAL_ROLE_ACTIVE);
    shoal_assign_output_t output;
    s_assign (cluster, &output);
    CHECK_EQ (s_count (&output, "n1", SHOAL_ROLE_ACTIVE), 3); //  the actives it held
    s_check_stays (cluster, &output);
    shoal_assign_output_release (&output);

    n1->cordon = SHOAL_CORDON_DRAINING;
    s_assign (cluster, &output);
    //  n1's actives a/0 and a/3 have caught-up standbys on n2: they move
    //  there at once (one may warm up on n3 after, for balance), and so
    //  does its stateless s/0; its standbys of a/2 and a/5 go to n2.
    CHECK_STR (s_active (&output, "a/0"), "n2");
    CHECK_STR (s_active (&output, "a/3"), "n2");
    CHECK (strcmp (s_active (&output, "s/0"), "n1") != 0);
    CHECK_EQ (s_count (&output, "n1", SHOAL_ROLE_STANDBY), 0);
    CHECK_EQ (s_count (&output, "n1", SHOAL_ROLE_ACTIVE), 0);
    shoal_assign_output_release (&output);
    free (cluster);

    //  Without standbys: n1's stateful actives wait for learners.
    cluster = s_cluster_new (0, 2, 100);
    n1 = s_node (cluster, "n1", 1);
    s_node (cluster, "n2", 1);
    s_node (cluster, "n3", 1);
    for (int t = 0; t < 6; t++) {
        s_task (cluster, tasks[t], "a", true);
        s_hold (cluster, nodes[t % 3], tasks[t], SHOAL_ROLE_ACTIVE);
    }
    n1->cordon = SHOAL_CORDON_DRAINING;
    s_assign (cluster, &output);
    CHECK_EQ (s_count (&output, "n1", SHOAL_ROLE_ACTIVE), 2);
    CHECK_EQ (s_count (&output, "n1", SHOAL_ROLE_LEARNER), 0);
    CHECK_EQ (s_count (&output, NULL, SHOAL_ROLE_LEARNER), 2);
    CHECK_EQ (output.moves[SHOAL_ROLE_ACTIVE - 1], 0);
    CHECK (output.followup);
    shoal_assign_output_release (&output);
    s_check_converges (cluster, &output);
    CHECK_EQ (s_count (&output, "n1", SHOAL_ROLE_ACTIVE) +
                  s_count (&output, "n1", SHOAL_ROLE_STANDBY) +
                  s_count (&output, "n1", SHOAL_ROLE_LEARNER),
              0);
    CHECK_EQ (s_count (&output, "n2", SHOAL_ROLE_ACTIVE), 3);
    CHECK_EQ (s_count (&output, "n3", SHOAL_ROLE_ACTIVE), 3);
    shoal_assign_output_release (&output);
    free (cluster);
}

//  A draining node that is the only one that may hold a task keeps it:
//  the drain waits, nothing is dropped.
static void
drain_with_nowhere_else_keeps_the_task (void)
{
    s_cluster_t *cluster = s_cluster_new (0, 2, 100);
    shoal_assign_node_t *n1 = s_node (cluster, "n1", 1);
    s_node_label (cluster, n1, "disk", "ssd");
    n1->cordon = SHOAL_CORDON_DRAINING;
    s_node (cluster, "n2", 1);
    shoal_assign_task_t *task = s_task (cluster, "a/0", "a", true);
    s_task_require (cluster, task, "disk", "ssd");
    s_hold (cluster, "n1", "a/0", SHOAL_ROLE_ACTIVE);
    s_task (cluster, "b/0", "b", false);
    s_hold (cluster, "n1", "b/0", SHOAL_ROLE_ACTIVE);
    shoal_assign_output_t output;
    s_assign (cluster, &output);
    CHECK_STR (s_active (&output, "a/0"), "n1");
    CHECK_STR (s_active (&output, "b/0"), "n2");
    CHECK_EQ (output.unassigned_count, 0);
    CHECK (!output.followup);
    shoal_assign_output_release (&output);
    //  A task it did not hold is not placed there.
    s_task (cluster, "a/1", "a", true);
    cluster->tasks[cluster->task_count - 1].require_count = task->require_count;
    cluster->tasks[cluster->task_count - 1].require = task->require;
    s_assign (cluster, &output);
    CHECK (s_active (&output, "a/1") == NULL);
    CHECK_EQ (output.unassigned_count, 1);
    shoal_assign_output_release (&output);
    free (cluster);
}

//  A cordoned node keeps its actives and standbys and takes nothing new:
//  no new task, no learner, no standby it did not hold, and its standby is
//  not made active.
static void
cordoned_node_keeps_what_it_holds (void)
{
    s_cluster_t *cluster = s_cluster_new (1, 2, 100);
    shoal_assign_node_t *n1 = s_node (cluster, "n1", 1);
    s_node (cluster, "n2", 1);
    s_node (cluster, "n3", 1);
    s_task (cluster, "a/0", "a", true);
    s_hold (cluster, "n1", "a/0", SHOAL_ROLE_ACTIVE);
    s_hold (cluster, "n2", "a/0", SHOAL_ROLE_STANDBY);
    s_task (cluster, "a/1", "a", true);
    s_hold (cluster, "n2", "a/1", SHOAL_ROLE_ACTIVE);
    s_hold (cluster, "n1", "a/1", SHOAL_ROLE_STANDBY);
    s_task (cluster, "a/2", "a", true);
    s_hold (cluster, "n3", "a/2", SHOAL_ROLE_ACTIVE);
    s_hold (cluster, "n2", "a/2", SHOAL_ROLE_STANDBY);
    n1->cordon = SHOAL_CORDON_CORDONED;
    shoal_assign_output_t output;
    s_assign (cluster, &output);
    CHECK_STR (s_active (&output, "a/0"), "n1");
    CHECK_EQ (s_role (&output, "n1", "a/1"), SHOAL_ROLE_STANDBY);
    CHECK_EQ (output.moves[SHOAL_ROLE_ACTIVE - 1], 0);
    shoal_assign_output_release (&output);

    //  New tasks go elsewhere, though n1 is the lightest.
    static const char *more[] = { "b/0", "b/1", "b/2", "b/3" };
    for (int t = 0; t < 4; t++)
        s_task (cluster, more[t], "b", false);
    s_assign (cluster, &output);
    for (int t = 0; t < 4; t++)
        CHECK (strcmp (s_active (&output, more[t]), "n1") != 0);
    CHECK_STR (s_active (&output, "a/0"), "n1");
    shoal_assign_output_release (&output);

    //  a/1's active node leaves: n1's caught-up standby is not promoted.
    cluster->gone[1] = true;
    s_lag (cluster, "n1", "a/1", 0);
    s_assign (cluster, &output);
    CHECK_STR (s_active (&output, "a/1"), "n3");
    CHECK_EQ (s_role (&output, "n1", "a/1"), SHOAL_ROLE_STANDBY);
    shoal_assign_output_release (&output);
    free (cluster);
}

//  Clusters with nothing to place, or nowhere to place it: every task is
//  listed as unassigned, and there is nothing to wait for.
static void
nothing_to_place_or_nowhere_to_place_it (void)
{
    s_cluster_t *cluster = s_cluster_new (1, 2, 100);
    shoal_assign_output_t output;
    s_assign (cluster, &output);
    CHECK_EQ (output.holding_count + output.unassigned_count, 0);
    CHECK (!output.followup);
    shoal_assign_output_release (&output);

    s_node (cluster, "n1", 1);
    s_assign (cluster, &output);
    CHECK_EQ (output.holding_count + output.unassigned_count, 0);
    shoal_assign_output_release (&output);

    s_task_require (cluster, s_task (cluster, "a/0", "a", true), "zone", "c");
    s_task (cluster, "b/0", "b", false);
    s_node_handles (cluster, &cluster->nodes[0], "c");
    s_hold (cluster, "n1", "a/0", SHOAL_ROLE_ACTIVE);
    s_assign (cluster, &output);
    CHECK_EQ (output.holding_count, 0);
    CHECK_EQ (output.unassigned_count, 2);
    CHECK (!output.followup);
    shoal_assign_output_release (&output);

    cluster->gone[0] = true;
    s_assign (cluster, &output);
    CHECK_EQ (output.holding_count, 0);
    CHECK_EQ (output.unassigned_count, 2);
    shoal_assign_output_release (&output);
    free (cluster);
}

//  Standbys go to another zone than the active's where one exists.
static void
standbys_spread_by_label (void)
{
    s_cluster_t *cluster = s_cluster_new (1, 2, 100);
    cluster->config.spread_by = "zone";
    static const char *nodes[] = { "n1", "n2", "n3", "n4" };
    static const char *zones[] = { "a", "a", "b", "b" };
    static const char *tasks[] = { "a/0", "a/1", "a/2", "a/3" };
    for (int n = 0; n < 4; n++)
        s_node_label (cluster, s_node (cluster, nodes[n], 1), "zone", zones[n]);
    for (int t = 0; t < 4; t++) {
        s_task (cluster, tasks[t], "a", true);
        s_hold (cluster, nodes[t], tasks[t], SHOAL_ROLE_ACTIVE);
    }
    shoal_assign_output_t output;
    s_assign (cluster, &output);
    for (int t = 0; t < 4; t++) {
        CHECK_STR (s_active (&output, tasks[t]), nodes[t]);
        for (int n = 0; n < 4; n++)
            if (s_role (&output, nodes[n], tasks[t]) == SHOAL_ROLE_STANDBY)
                CHECK (strcmp (zones[n], zones[t]) != 0);
    }
    CHECK_EQ (s_count (&output, NULL, SHOAL_ROLE_STANDBY), 4);
    shoal_assign_output_release (&output);
    free (cluster);
}

//  ---------------------------------------------------------------------
//  Cases the randomized test found, shrunk (names kept from the seed)

//  A caught-up active stays on its node while the node has slot room for
//  it (seed 5).
static void
caught_up_active_stays_beside_few_slots (void)
{
    s_cluster_t *cluster = s_cluster_new (0, 1, 100);
    s_node (cluster, "n3", 1)->slots = 1;
    s_node (cluster, "n5", 1);
    s_task (cluster, "j2/2", "j2", true);
    s_task (cluster, "j8/2", "j8", true);
    s_task (cluster, "j8/5", "j8", true);
    s_hold (cluster, "n3", "j2/2", SHOAL_ROLE_ACTIVE);
    s_hold (cluster, "n5", "j8/2", SHOAL_ROLE_ACTIVE);
    shoal_assign_output_t output;
    s_assign (cluster, &output);
    CHECK_STR (s_active (&output, "j2/2"), "n3");
    shoal_assign_output_release (&output);
    free (cluster);
}

//  A task is unassigned only when no node has slot room for it (seed 79).
static void
task_fits_in_free_slots (void)
{
    s_cluster_t *cluster = s_cluster_new (0, 1, 100);
    shoal_assign_node_t *n1 = s_node (cluster, "n1", 3);
    n1->slots = 5;
    s_node_label (cluster, n1, "zone", "b");
    s_node (cluster, "n2", 3);
    s_task (cluster, "j1/0", "j1", true)->weight = 3;
    s_task_require (cluster, s_task (cluster, "j2/0", "j2", false), "zone", "b");
    shoal_assign_task_t *task = s_task (cluster, "j2/1", "j2", false);
    task->weight = 2;
    s_task_require (cluster, task, "zone", "b");
    shoal_assign_output_t output;
    s_assign (cluster, &output);
    CHECK_EQ (output.unassigned_count, 0);
    shoal_assign_output_release (&output);
    free (cluster);
}

//  A stateless task moved off a node frees its slots for a task only that
//  node may hold (seed 521).
static void
moved_task_frees_its_slots (void)
{
    s_cluster_t *cluster = s_cluster_new (0, 1, 100);
    shoal_assign_node_t *n0 = s_node (cluster, "n0", 1);
    n0->slots = 5;
    s_node_label (cluster, n0, "zone", "c");
    s_node (cluster, "n1", 1);
    s_task (cluster, "j0/1", "j0", false)->weight = 3;
    s_task (cluster, "j1/1", "j1", true)->weight = 2;
    s_task_require (cluster, s_task (cluster, "j3/4", "j3", true), "zone", "c");
    s_hold (cluster, "n0", "j0/1", SHOAL_ROLE_ACTIVE);
    s_hold (cluster, "n0", "j1/1", SHOAL_ROLE_ACTIVE);
    shoal_assign_output_t output;
    s_assign (cluster, &output);
    CHECK_EQ (output.unassigned_count, 0);
    shoal_assign_output_release (&output);
    free (cluster);
}

//  With equal capacities, stateful work is spread too: a new stateful task
//  with no state anywhere does not join the node that has the only other
//  one (seed 2).
static void
stateful_tasks_spread_with_equal_capacities (void)
{
    s_cluster_t *cluster = s_cluster_new (0, 1, 100);
    s_node (cluster, "n0", 1);
    s_node (cluster, "n1", 1);
    s_node (cluster, "n2", 1);
    s_task (cluster, "j0/2", "j0", false);
    s_task (cluster, "j0/3", "j0", false);
    s_task (cluster, "j1/0", "j0", true);
    s_task (cluster, "j1/2", "j0", true);
    s_hold (cluster, "n0", "j1/2", SHOAL_ROLE_ACTIVE);
    shoal_assign_output_t output;
    s_check_converges (cluster, &output);
    s_check_balanced (cluster, &output, true);
    shoal_assign_output_release (&output);
    free (cluster);
}

//  Standbys count in the stateful balance: with four equal nodes, two
//  stateful tasks and one standby each, every node holds one (seed 4).
static void
standbys_spread_with_equal_capacities (void)
{
    s_cluster_t *cluster = s_cluster_new (1, 1, 100);
    static const char *nodes[] = { "n0", "n1", "n2", "n3" };
    for (int n = 0; n < 4; n++)
        s_node (cluster, nodes[n], 1);
    s_task (cluster, "j2/0", "j2", true);
    s_task (cluster, "j2/1", "j2", true);
    s_lag (cluster, "n2", "j2/0", 0);
    s_lag (cluster, "n2", "j2/1", 0);
    shoal_assign_output_t output;
    s_check_converges (cluster, &output);
    s_check_balanced (cluster, &output, true);
    shoal_assign_output_release (&output);
    free (cluster);
}

//  Active load over capacities 3, 1, 3 and 2 converges within 1 of even;
//  stateless tasks can move at once (seed 251).
static void
active_load_balances_over_mixed_capacities (void)
{
    s_cluster_t *cluster = s_cluster_new (0, 1, 100);
    s_node (cluster, "n0", 3);
    s_node (cluster, "n1", 1);
    s_node (cluster, "n2", 3);
    s_node (cluster, "n6", 2);
    static const char *stateless[] = { "j4/2", "j5/0", "j5/3", "j5/7" };
    static const char *stateful[] = { "j6/0", "j6/1", "j6/3" };
    for (int t = 0; t < 4; t++)
        s_task (cluster, stateless[t], "j3", false);
    for (int t = 0; t < 3; t++)
        s_task (cluster, stateful[t], "j3", true);
    s_hold (cluster, "n6", "j4/2", SHOAL_ROLE_ACTIVE);
    s_hold (cluster, "n6", "j5/3", SHOAL_ROLE_ACTIVE);
    s_hold (cluster, "n6", "j6/3", SHOAL_ROLE_ACTIVE);
    shoal_assign_output_t output;
    s_check_converges (cluster, &output);
    s_check_balanced (cluster, &output, false);
    shoal_assign_output_release (&output);
    free (cluster);
}

//  ---------------------------------------------------------------------
//  Nodes to avoid: the leader keeps a task off the nodes that gave up on it

//  Runs the assignor on the cluster with count pairs to avoid. The checker
//  of the contract knows nothing of them (the JSON format has none), so
//  the tests below check what the pairs imply themselves.
static void
s_assign_avoiding (s_cluster_t *cluster, const shoal_assign_avoid_t *avoid, size_t count,
                   shoal_assign_output_t *output)
{
    shoal_assign_input_t input = s_input (cluster);
    input.avoid_count = count;
    input.avoid = avoid;
    char why[256] = "";
    CHECK_EQ (shoal_assign (&input, output, why, sizeof why), 0);
    CHECK_STR (why, "");
}

//  A node to avoid holds its task in no role: the active goes to the
//  caught-up standby, the standby to the other node, whichever order the
//  pairs come in; pairs naming nodes or tasks the input does not have are
//  ignored.
static void
avoided_node_holds_the_task_in_no_role (void)
{
    s_cluster_t *cluster = s_cluster_new (1, 2, 100);
    s_node (cluster, "n1", 1);
    s_node (cluster, "n2", 1);
    s_node (cluster, "n3", 1);
    s_task (cluster, "a/0", "a", true);
    s_task (cluster, "a/1", "a", true);
    s_hold (cluster, "n1", "a/0", SHOAL_ROLE_ACTIVE);
    s_hold (cluster, "n2", "a/0", SHOAL_ROLE_STANDBY);
    s_lag (cluster, "n2", "a/0", 0);
    s_hold (cluster, "n3", "a/1", SHOAL_ROLE_ACTIVE);
    s_hold (cluster, "n1", "a/1", SHOAL_ROLE_STANDBY);
    s_lag (cluster, "n1", "a/1", 0);
    shoal_assign_avoid_t avoid[] = {
        { "n1", "a/0" }, { "n9", "a/0" }, { "n1", "old/3" }, { "n1", "a/1" }
    };
    shoal_assign_output_t output;
    s_assign_avoiding (cluster, avoid, 4, &output);
    CHECK_EQ (s_role (&output, "n1", "a/0"), SHOAL_ROLE_NONE);
    CHECK_EQ (s_role (&output, "n1", "a/1"), SHOAL_ROLE_NONE);
    CHECK_STR (s_active (&output, "a/0"), "n2");
    CHECK_EQ (s_role (&output, "n3", "a/0"), SHOAL_ROLE_STANDBY);
    CHECK_STR (s_active (&output, "a/1"), "n3");
    CHECK_EQ (s_role (&output, "n2", "a/1"), SHOAL_ROLE_STANDBY);
    CHECK_EQ (output.unassigned_count, 0);
    CHECK_EQ (output.avoided_count, 0);

    shoal_assign_avoid_t reversed[] = {
        { "n1", "a/1" }, { "n1", "old/3" }, { "n9", "a/0" }, { "n1", "a/0" }
    };
    shoal_assign_output_t again;
    s_assign_avoiding (cluster, reversed, 4, &again);
    CHECK (s_same_output (&output, &again));
    shoal_assign_output_release (&again);
    shoal_assign_output_release (&output);
    free (cluster);
}

//  Avoiding one node for one task moves that task alone: a balanced
//  assignment stays as it is for every other task.
static void
avoid_moves_only_the_avoided_task (void)
{
    s_cluster_t *cluster = s_cluster_new (0, 2, 100);
    static const char *nodes[] = { "n1", "n2", "n3" };
    static const char *tasks[] = { "w/0", "w/1", "w/2", "w/3", "w/4", "w/5", "w/6" };
    for (int n = 0; n < 3; n++)
        s_node (cluster, nodes[n], 1);
    //  n1 holds w/0, w/3 and w/6; n2 w/1 and w/4; n3 w/2 and w/5.
    for (int t = 0; t < 7; t++) {
        s_task (cluster, tasks[t], "w", false);
        s_hold (cluster, nodes[t % 3], tasks[t], SHOAL_ROLE_ACTIVE);
    }
    shoal_assign_output_t output;
    s_assign (cluster, &output);
    s_check_stays (cluster, &output);
    shoal_assign_output_release (&output);

    shoal_assign_avoid_t avoid[] = { { "n1", "w/0" } };
    s_assign_avoiding (cluster, avoid, 1, &output);
    const char *moved = s_active (&output, "w/0");
    CHECK (moved && strcmp (moved, "n1") != 0);
    for (int t = 1; t < 7; t++)
        CHECK_STR (s_active (&output, tasks[t]), nodes[t % 3]);
    CHECK_EQ (output.moves[0], 1);
    CHECK_EQ (output.holding_count, 7);
    shoal_assign_output_release (&output);
    free (cluster);
}

//  A task that every node able to hold it is to avoid is unassigned and
//  listed as avoided; a task that no node may hold anyway, or that only
//  lacks room, is unassigned but not avoided.
static void
a_task_avoided_everywhere_is_listed (void)
{
    s_cluster_t *cluster = s_cluster_new (0, 2, 100);
    shoal_assign_node_t *n1 = s_node (cluster, "n1", 1);
    n1->slots = 1;
    s_node_label (cluster, n1, "zone", "x");
    s_node (cluster, "n2", 1)->slots = 1;
    s_task (cluster, "a/0", "a", false);
    s_task (cluster, "b/0", "b", false);
    s_task_require (cluster, s_task (cluster, "c/0", "c", false), "zone", "z");
    s_task_require (cluster, s_task (cluster, "x/0", "x", false), "zone", "x");
    s_hold (cluster, "n1", "a/0", SHOAL_ROLE_ACTIVE);
    s_hold (cluster, "n2", "b/0", SHOAL_ROLE_ACTIVE);
    s_hold (cluster, "n1", "x/0", SHOAL_ROLE_ACTIVE);
    //  a/0 is to be avoided on both nodes; b/0 on n2, and x/0 fills n1,
    //  the only node it may use; c/0 on n1, which lacks its label anyway.
    shoal_assign_avoid_t avoid[] = {
        { "n1", "a/0" }, { "n2", "a/0" }, { "n2", "b/0" }, { "n1", "c/0" }
    };
    shoal_assign_output_t output;
    s_assign_avoiding (cluster, avoid, 4, &output);
    CHECK_EQ (s_role (&output, "n1", "a/0"), SHOAL_ROLE_NONE);
    CHECK_EQ (s_role (&output, "n2", "a/0"), SHOAL_ROLE_NONE);
    CHECK_EQ (s_role (&output, "n2", "b/0"), SHOAL_ROLE_NONE);
    CHECK_STR (s_active (&output, "x/0"), "n1");
    CHECK_EQ (output.unassigned_count, 3);
    CHECK_EQ (output.avoided_count, 1);
    if (output.avoided_count == 1)
        CHECK_STR (output.avoided[0], "a/0");
    shoal_assign_output_release (&output);
    free (cluster);
}

//  Needed moves 4 with max_warmups 2: at most 3 rounds. A task no node
//  has state for is placed at once where balance wants it (seed 42).
static void
convergence_takes_no_extra_rounds (void)
{
    s_cluster_t *cluster = s_cluster_new (0, 2, 100);
    s_node (cluster, "n0", 1);
    s_node (cluster, "n1", 1);
    s_node (cluster, "n2", 1);
    static const char *tasks[] = { "j1/0", "j1/5", "j2/1", "j3/2", "j3/3", "j3/5" };
    static const char *jobs[] = { "j1", "j1", "j2", "j3", "j1", "j3" };
    for (int t = 0; t < 6; t++)
        s_task (cluster, tasks[t], jobs[t], true);
    s_hold (cluster, "n0", "j1/5", SHOAL_ROLE_ACTIVE);
    s_hold (cluster, "n1", "j2/1", SHOAL_ROLE_ACTIVE);
    s_lag (cluster, "n0", "j3/3", 0);
    s_lag (cluster, "n0", "j3/5", 0);
    s_lag (cluster, "n1", "j1/0", 0);
    shoal_assign_output_t output;
    s_check_converges (cluster, &output);
    shoal_assign_output_release (&output);
    free (cluster);
}

//  ---------------------------------------------------------------------
//  The randomized convergence test

//  Kinds of random cluster.
typedef enum {
    S_MIXED_CAPACITIES, //  capacities 1 to 3: active load balance
    S_EQUAL_CAPACITIES, //  also stateful balance and per-job spread
    S_CONSTRAINED,      //  labels, handles, require, slots, spread_by: no balance asked
} s_variant_t;

static const char *s_variant_names[] = { "mixed capacities", "equal capacities", "constrained" };

//  Names that stay put: nodes n0..n31, jobs j0..j9, tasks jJ/P.
static char s_node_names[S_NODES_MAX][8];
static char s_job_names[10][4];
static char s_task_names[10][8][8];
static const char *s_zone_names[] = { "a", "b", "c" };

static void
s_names_fill (void)
{
    for (int n = 0; n < S_NODES_MAX; n++)
        snprintf (s_node_names[n], sizeof s_node_names[n], "n%d", n);
    for (int j = 0; j < 10; j++) {
        snprintf (s_job_names[j], sizeof s_job_names[j], "j%d", j);
        for (int p = 0; p < 8; p++)
            snprintf (s_task_names[j][p], sizeof s_task_names[j][p], "j%d/%d", j, p);
    }
}

typedef struct {
    uint64_t seed;
    uint64_t state; //  splitmix64
    s_variant_t variant;
    bool unit_weights;
    uint32_t capacity; //  of every node, for S_EQUAL_CAPACITIES
    uint32_t jobs;
    s_cluster_t *cluster;
} s_world_t;

static void
s_world_add_node (s_world_t *world)
{
    s_cluster_t *cluster = world->cluster;
    uint32_t capacity =
        world->variant == S_EQUAL_CAPACITIES ? world->capacity : 1 + s_below (&world->state, 3);
    shoal_assign_node_t *node = s_node (cluster, s_node_names[cluster->node_count], capacity);
    if (world->variant != S_CONSTRAINED)
        return;
    s_node_label (cluster, node, "zone", s_zone_names[s_below (&world->state, 3)]);
    if (s_below (&world->state, 4) == 0)
        for (uint32_t j = 0; j < world->jobs; j++)
            if (s_below (&world->state, 2))
                s_node_handles (cluster, node, s_job_names[j]);
    if (s_below (&world->state, 4) == 0)
        node->slots = 1 + s_below (&world->state, 8);
}

static void
s_world_make (s_world_t *world, uint64_t seed)
{
    *world = (s_world_t){ .seed = seed, .state = seed };
    world->variant = (s_variant_t) s_below (&world->state, 3);
    world->unit_weights = s_below (&world->state, 5) != 0;
    world->capacity = 1 + s_below (&world->state, 3);
    world->jobs = 1 + s_below (&world->state, 10);
    world->cluster =
        s_cluster_new (s_below (&world->state, 3), 1 + s_below (&world->state, 3), 100);
    s_cluster_t *cluster = world->cluster;
    if (s_below (&world->state, 4) == 0)
        cluster->lag_noise = 1000000;
    if (world->variant == S_CONSTRAINED && s_below (&world->state, 2))
        cluster->config.spread_by = "zone";
    for (uint32_t j = 0; j < world->jobs; j++) {
        uint32_t parallelism = 1 + s_below (&world->state, 8);
        bool stateful = s_below (&world->state, 3) != 0;
        const char *zone = world->variant == S_CONSTRAINED && s_below (&world->state, 4) == 0
                               ? s_zone_names[s_below (&world->state, 3)]
                               : NULL;
        for (uint32_t p = 0; p < parallelism; p++) {
            shoal_assign_task_t *task =
                s_task (cluster, s_task_names[j][p], s_job_names[j], stateful);
            if (!world->unit_weights)
                task->weight = 1 + s_below (&world->state, 3);
            if (zone)
                s_task_require (cluster, task, "zone", zone);
        }
    }
    uint32_t nodes = 1 + s_below (&world->state, 10);
    for (uint32_t n = 0; n < nodes; n++)
        s_world_add_node (world);
}

static size_t
s_world_alive (const s_world_t *world)
{
    size_t alive = 0;
    for (size_t n = 0; n < world->cluster->node_count; n++)
        alive += !world->cluster->gone[n];
    return alive;
}

//  Picks the index of a node that is gone (gone true) or alive.
static size_t
s_world_pick (s_world_t *world, bool gone)
{
    size_t candidates[S_NODES_MAX], count = 0;
    for (size_t n = 0; n < world->cluster->node_count; n++)
        if (world->cluster->gone[n] == gone)
            candidates[count++] = n;
    S_REQUIRE (count > 0);
    return candidates[s_below (&world->state, (uint32_t) count)];
}

//  Time passes: the copies a node keeps of tasks it no longer holds fall
//  behind, some beyond the acceptable lag. Gone nodes' copies stay as they
//  were: they come back with them.
static void
s_world_age (s_world_t *world)
{
    s_cluster_t *cluster = world->cluster;
    for (size_t i = 0; i < cluster->lag_count; i++) {
        shoal_assign_lag_t *lag = &cluster->lags[i];
        bool gone = false;
        for (size_t n = 0; n < cluster->node_count; n++)
            if (strcmp (cluster->nodes[n].id, lag->node) == 0)
                gone = cluster->gone[n];
        if (!gone && s_current_role (cluster, lag->node, lag->task) == SHOAL_ROLE_NONE)
            lag->lag += s_below (&world->state, (uint32_t) cluster->config.acceptable_lag * 2);
    }
}

//  One random event; returns its name.
static const char *
s_world_event (s_world_t *world)
{
    s_world_age (world);
    size_t alive = s_world_alive (world);
    bool any_gone = alive < world->cluster->node_count;
    uint32_t kind = s_below (&world->state, 3);
    if (kind == 2 && !any_gone)
        kind = 0;
    if (kind == 0 && (alive >= 10 || world->cluster->node_count >= S_NODES_MAX))
        kind = 1;
    if (kind == 1 && alive <= 1)
        kind = any_gone ? 2 : 0;
    if (kind == 0) {
        s_world_add_node (world);
        return "node added";
    }
    if (kind == 1) {
        world->cluster->gone[s_world_pick (world, false)] = true;
        return "node dropped";
    }
    world->cluster->gone[s_world_pick (world, true)] = false;
    return "node back";
}

//  Now and then, instead of the events above: a live node is cordoned or
//  drained, or one that was is opened again.
static const char *
s_world_cordon (s_world_t *world)
{
    shoal_assign_node_t *node = &world->cluster->nodes[s_world_pick (world, false)];
    if (node->cordon != SHOAL_CORDON_NONE) {
        node->cordon = SHOAL_CORDON_NONE;
        return "node uncordoned";
    }
    node->cordon = s_below (&world->state, 2) ? SHOAL_CORDON_DRAINING : SHOAL_CORDON_CORDONED;
    return node->cordon == SHOAL_CORDON_DRAINING ? "node draining" : "node cordoned";
}

typedef enum {
    S_FAIL_ACTIVE_BALANCE,
    S_FAIL_STATEFUL_BALANCE,
    S_FAIL_JOB_SPREAD,
    S_FAIL_NOT_STABLE, //  the converged result, fed back, changes
} s_failure_t;

//  Failures of the randomized test, by kind, for the summary.
typedef struct {
    uint32_t seeds;
    uint32_t failed_seeds;
    uint32_t by_outcome[6];
    uint32_t by_failure[4];
    uint32_t dumped;
    uint64_t first_by_outcome[6];
    uint64_t first_by_failure[4];
    uint32_t rounds_max;
    uint32_t over_by_one; //  of the S_SLOW seeds, those one round over the bound
} s_tally_t;

static const char *s_failure_names[] = { "active balance > 1", "stateful balance > 1",
                                         "job spread > 1", "converged result not stable" };

static void
s_world_report (s_world_t *world, s_tally_t *tally, int event, const char *event_name,
                const char *what, const s_convergence_t *result, bool dump)
{
    if (!dump)
        return;
    fprintf (stderr,
             "\nseed %llu (%s, %s weights, standbys %u, max_warmups %u%s): event %d (%s): %s; "
             "round %u, needed moves %u, bound %u\n",
             (unsigned long long) world->seed, s_variant_names[world->variant],
             world->unit_weights ? "unit" : "mixed", world->cluster->config.standbys,
             world->cluster->config.max_warmups,
             world->cluster->lag_noise ? ", actives report a large lag" : "", event, event_name,
             what, result->rounds, result->needed, result->bound);
    shoal_assign_input_t input = s_input (world->cluster);
    if (result->outcome == S_SLOW || result->outcome == S_NO_CONVERGENCE) {
        //  The input at the event, to replay the rounds from.
        shoal_assign_input_t at_event = input;
        at_event.current_count = result->at_event.current_count;
        at_event.current = result->at_event.current;
        at_event.lag_count = result->at_event.lag_count;
        at_event.lags = result->at_event.lags;
        fprintf (stderr, "at the event, ");
        s_dump (&at_event, NULL);
        fprintf (stderr, "in the last round, ");
    }
    if (result->outcome == S_INVALID || result->outcome == S_FAILED_CALL) {
        char report[S_REPORT_SIZE];
        shoal_assign_check (&input, &result->output, report, sizeof report);
        fprintf (stderr, "%s", report);
    }
    s_dump (&input, &result->output);
    tally->dumped++;
}

//  Runs one seed; returns false at its first failure.
static bool
s_run_seed (uint64_t seed, s_tally_t *tally, uint32_t dump_limit)
{
    s_world_t world;
    s_world_make (&world, seed);
    s_cluster_t *cluster = world.cluster;
    bool ok = true;
    int events = 6;
    const char *event_name = "start";
    for (int event = 0; event <= events && ok; event++) {
        //  A quarter of the seeds cordon and drain nodes too.
        if (event > 0 && seed % 4 == 3 && s_below (&world.state, 3) == 0)
            event_name = s_world_cordon (&world);
        else if (event > 0)
            event_name = s_world_event (&world);
        s_convergence_t *result = malloc (sizeof *result);
        S_REQUIRE (result);
        uint32_t limit = 20 + 4 * (uint32_t) cluster->task_count * (cluster->config.standbys + 1);
        s_converge (cluster, limit, &world.state, result);
        if (result->rounds > tally->rounds_max)
            tally->rounds_max = result->rounds;
        bool dump = tally->dumped < dump_limit;
        if (result->outcome != S_CONVERGED) {
            tally->by_outcome[result->outcome]++;
            tally->over_by_one += result->outcome == S_SLOW && result->rounds == result->bound + 1;
            if (!tally->first_by_outcome[result->outcome])
                tally->first_by_outcome[result->outcome] = seed;
            s_world_report (&world, tally, event, event_name, s_outcome_names[result->outcome],
                            result, dump);
            ok = false;
        }
        shoal_assign_input_t input = s_input (cluster);
        shoal_assign_balance_t balance = { 0, 0, 0 };
        int failure = -1;
        //  Cordoned nodes keep what they hold: balance is the open nodes',
        //  but not a job's spread over them.
        bool cordoned = false;
        for (size_t n = 0; n < cluster->node_count; n++)
            cordoned |= !cluster->gone[n] && cluster->nodes[n].cordon != SHOAL_CORDON_NONE;
        if (ok && world.variant != S_CONSTRAINED && world.unit_weights && !cordoned) {
            CHECK_EQ (shoal_assign_check_balance (&input, &result->output, &balance), 0);
            bool equal = world.variant == S_EQUAL_CAPACITIES;
            bool unbalanced[3] = { balance.active > 1.0 + 1e-9,
                                   equal && balance.stateful > 1.0 + 1e-9,
                                   equal && balance.job > 1 };
            //  The seed is reported for the first measure out of bounds; the
            //  tally counts every one.
            for (int i = 2; i >= 0; i--)
                if (unbalanced[i]) {
                    failure = S_FAIL_ACTIVE_BALANCE + i;
                    tally->by_failure[failure]++;
                    if (!tally->first_by_failure[failure])
                        tally->first_by_failure[failure] = seed;
                }
        }
        if (ok && failure < 0) {
            //  Converged: fed back with every holder caught up, it must stay.
            s_feed_back (cluster, &result->output);
            shoal_assign_output_t again;
            input = s_input (cluster);
            if (s_assign_input (&input, &again, true) != 0 || !s_is_current (cluster, &again) ||
                again.followup) {
                failure = S_FAIL_NOT_STABLE;
                tally->by_failure[failure]++;
                if (!tally->first_by_failure[failure])
                    tally->first_by_failure[failure] = seed;
                shoal_assign_output_release (&result->output);
                result->output = again;
            } else
                shoal_assign_output_release (&again);
        }
        if (failure >= 0) {
            char what[128];
            snprintf (what, sizeof what, "%s (active %.3f, stateful %.3f, job %u)",
                      s_failure_names[failure], balance.active, balance.stateful, balance.job);
            s_world_report (&world, tally, event, event_name, what, result, dump);
            ok = false;
        }
        shoal_assign_output_release (&result->output);
        free (result);
    }
    free (cluster);
    return ok;
}

static uint64_t
s_env_number (const char *name, uint64_t otherwise)
{
    const char *text = getenv (name);
    return text && *text ? strtoull (text, NULL, 10) : otherwise;
}

//  Runs the random clusters, seeds 1 to SHOAL_ASSIGN_SEEDS (5000), or only
//  SHOAL_ASSIGN_SEED; CHECKs that none fails.
static void
s_random_clusters (void)
{
    s_names_fill ();
    s_tally_t tally = { 0 };
    uint64_t only = s_env_number ("SHOAL_ASSIGN_SEED", 0);
    uint64_t first = only ? only : 1;
    uint64_t last = only ? only : s_env_number ("SHOAL_ASSIGN_SEEDS", 5000);
    uint32_t dump_limit = (uint32_t) s_env_number ("SHOAL_ASSIGN_DUMPS", 3);
    for (uint64_t seed = first; seed <= last; seed++) {
        tally.seeds++;
        if (!s_run_seed (seed, &tally, dump_limit))
            tally.failed_seeds++;
    }
    printf ("random clusters: %u seeds, %u failed, at most %u rounds after an event\n", tally.seeds,
            tally.failed_seeds, tally.rounds_max);
    if (s_fixpoint)
        printf ("  steps on the way that change when fed back: %llu of %llu; %llu rounds, "
                "%llu active moves in all\n",
                (unsigned long long) s_fixpoint_changed, (unsigned long long) s_fixpoint_steps,
                (unsigned long long) s_fixpoint_rounds, (unsigned long long) s_fixpoint_moves);
    for (int i = 1; i < 6; i++)
        if (tally.by_outcome[i])
            printf ("  %s: %u seeds, first seed %llu\n", s_outcome_names[i], tally.by_outcome[i],
                    (unsigned long long) tally.first_by_outcome[i]);
    if (tally.by_outcome[S_SLOW])
        printf ("  (of which one round over the bound: %u)\n", tally.over_by_one);
    for (int i = 0; i < 4; i++)
        if (tally.by_failure[i])
            printf ("  %s: %u seeds, first seed %llu\n", s_failure_names[i], tally.by_failure[i],
                    (unsigned long long) tally.first_by_failure[i]);
    CHECK_EQ (tally.failed_seeds, 0);
}

//  Random clusters and events: every output valid and independent of input
//  order, every convergence ends (followup false) within the round bound of
//  property 8, balanced, and fed back it stays as it is.
static void
random_clusters_converge (void)
{
    s_random_clusters ();
}

//  ---------------------------------------------------------------------
//  The rendered text

//  The output as jansson dumps it with JSON_INDENT (2): how `shoal assign`
//  wrote it before it wrote the text itself, which must not change a byte.
static char *
s_jansson_render (const shoal_assign_input_t *input, const shoal_assign_output_t *output)
{
    static const char *const roles[] = { "active", "standby", "learner" };
    json_t *root = json_object (), *assignment = json_object (), *moves = json_object ();
    json_t *unassigned = json_array ();
    const char **nodes = malloc ((input->node_count + 1) * sizeof (char *));
    for (size_t i = 0; i < input->node_count; i++)
        nodes[i] = input->nodes[i].id;
    qsort (nodes, input->node_count, sizeof (char *), s_name_order);
    for (size_t i = 0; i < input->node_count; i++) {
        json_t *entry = json_object ();
        for (size_t role = 0; role < 3; role++)
            json_object_set_new (entry, roles[role], json_array ());
        json_object_set_new (assignment, nodes[i], entry);
    }
    free (nodes);
    for (size_t i = 0; i < output->holding_count; i++) {
        const shoal_assign_holding_t *holding = &output->holdings[i];
        json_t *entry = json_object_get (assignment, holding->node);
        json_array_append_new (json_object_get (entry, roles[holding->role - 1]),
                               json_string (holding->task));
    }
    for (size_t i = 0; i < output->unassigned_count; i++)
        json_array_append_new (unassigned, json_string (output->unassigned[i]));
    for (size_t role = 0; role < 3; role++)
        json_object_set_new (moves, roles[role], json_integer (output->moves[role]));
    json_object_set_new (root, "assignment", assignment);
    json_object_set_new (root, "unassigned", unassigned);
    json_object_set_new (root, "followup", json_boolean (output->followup));
    json_object_set_new (root, "moves", moves);
    char *text = json_dumps (root, JSON_INDENT (2));
    json_decref (root);
    return text;
}

//  CHECKs that the text of cluster is jansson's, byte for byte.
static void
s_check_render (const char *cluster)
{
    shoal_assign_json_t *parsed = NULL;
    char why[256] = "";
    int rc = shoal_assign_json_parse (cluster, strlen (cluster), &parsed, why, sizeof why);
    CHECK_EQ (rc, 0);
    if (rc != 0) {
        fprintf (stderr, "%s\n", why);
        return;
    }
    const shoal_assign_input_t *input = shoal_assign_json_input (parsed);
    shoal_assign_output_t output;
    CHECK_EQ (shoal_assign (input, &output, why, sizeof why), 0);
    char *text = shoal_assign_json_render (input, &output);
    char *expected = s_jansson_render (input, &output);
    CHECK (text && expected && strcmp (text, expected) == 0);
    free (text);
    free (expected);
    shoal_assign_output_release (&output);
    shoal_assign_json_destroy (&parsed);
}

//  Names with every byte that JSON escapes, UTF-8 of two to four bytes,
//  DEL and '/', which it does not; no nodes; no tasks; unassigned tasks.
static void
output_text_is_jansson_s (void)
{
    s_check_render ("{\"nodes\": [], \"tasks\": []}");
    s_check_render ("{\"nodes\": [], \"tasks\": [{\"id\": \"a\"}, {\"id\": \"b\\u0001\"}]}");
    s_check_render ("{\"nodes\": [{\"id\": \"n\"}], \"tasks\": []}");
    s_check_render (
        "{\"config\": {\"standbys\": 1, \"max_warmups\": 1},"
        " \"nodes\": [{\"id\": \"n\\u0001\\\"q\\\\\"}, {\"id\": \"n/\\u007f\\u00e9\\u2028\"},"
        " {\"id\": \"n\\b\\f\\n\\r\\t\\u001f\"}, {\"id\": \"\\ud83d\\ude00\"}],"
        " \"tasks\": [{\"id\": \"t\\u0001/0\"}, {\"id\": \"t\\\"/1\"},"
        " {\"id\": \"t\\\\/2\", \"stateful\": false}, {\"id\": \"t\\u00e9\\ud83d\\ude00/3\"},"
        " {\"id\": \"t\\b\\f\\n\\r\\t/4\"}, {\"id\": \"x/5\", \"require\": {\"zone\": \"z\"}},"
        " {\"id\": \"y\\u001f/6\", \"require\": {\"q\": \"\\u0002\"}}],"
        " \"current\": {\"\\ud83d\\ude00\": {\"active\": [\"t\\u0001/0\"]}},"
        " \"lags\": {\"n/\\u007f\\u00e9\\u2028\": {\"t\\u0001/0\": 5}}}");
}

//  Ids sort as strcmp orders them, bytes unsigned: shorter than 8 bytes,
//  exactly 8, longer with the same first 8, the same for 12 and 16, and
//  bytes above 0x7F. The assignor sorts them by their first 12 bytes first
//  (test_assign_sort checks its sort on many more).
static void
ids_sort_as_strcmp_does (void)
{
    static const char *const ids[] = { "abcdefghij",
                                       "abcdefgh",
                                       "abcdefg",
                                       "abcdefgh\xc3\xa9",
                                       "abcdefghi",
                                       "a",
                                       "\xc3\xa9",
                                       "abcdefgg",
                                       "b",
                                       "ab",
                                       "abcdefgi",
                                       "abcdefgh\x01",
                                       "abcdefghijklmnopq",
                                       "abcdefghijklmnop",
                                       "abcdefghijklmnoo",
                                       "abcdefghijklmnop\xff",
                                       "abcdefghijklmnopa",
                                       "abcdefghijklmnopz",
                                       "abcdefghijklmnopm",
                                       "abcdefghijklmnopb",
                                       "abcdefghijkl",
                                       "abcdefghijk",
                                       "abcdefghijklm",
                                       "abcdefghijkl\x01",
                                       "abcdefghijkk\xff" };
    enum { COUNT = sizeof ids / sizeof ids[0] };
    shoal_assign_node_t node[2] = { { .id = "\xff", .capacity = 1, .handles_all = true },
                                    { .id = "n", .capacity = 1, .handles_all = true } };
    shoal_assign_task_t task[COUNT];
    for (int i = 0; i < COUNT; i++)
        task[i] = (shoal_assign_task_t){ .id = ids[i], .job = "j", .stateful = false, .weight = 1 };
    shoal_assign_input_t input = { .config = { .max_warmups = 2 },
                                   .node_count = 2,
                                   .nodes = node,
                                   .task_count = COUNT,
                                   .tasks = task };
    shoal_assign_output_t output;
    char why[200];
    CHECK_EQ (shoal_assign (&input, &output, why, sizeof why), 0);
    CHECK_EQ (output.holding_count, (size_t) COUNT);
    bool sorted = true;
    for (size_t i = 1; i < output.holding_count; i++) {
        const shoal_assign_holding_t *a = &output.holdings[i - 1], *b = &output.holdings[i];
        int by_node = strcmp (a->node, b->node);
        sorted &= by_node < 0 || (by_node == 0 && strcmp (a->task, b->task) < 0);
    }
    CHECK (sorted);
    shoal_assign_output_release (&output);
}

int
main (void)
{
    s_trace = s_env_number ("SHOAL_ASSIGN_TRACE", 0) != 0;
    s_fixpoint = s_env_number ("SHOAL_ASSIGN_FIXPOINT", 0) != 0;
    RUN (checker_accepts_a_valid_output);
    RUN (checker_reports_each_violation);
    RUN (checker_lets_slots_decide);

    RUN (scenario_01_single_client_mixed);
    RUN (scenario_02_standbys_impossible_one_client);
    RUN (scenario_04_fresh_even_split);
    RUN (scenario_09_more_clients_than_tasks);
    RUN (scenario_12_steady_state);
    RUN (scenario_14_scale_out_1_to_2);
    RUN (scenario_24_mirrored_standbys);
    RUN (scenario_25_no_standbys_stateless);
    RUN (scenario_26_standby_count_capped);
    RUN (scenario_35_stateless_caps_123);
    RUN (scenario_files_satisfy_the_contract);
    RUN (no_task_trades_places_for_nothing);
    RUN (fed_back_output_stands);

    RUN (output_does_not_depend_on_input_order);
    RUN (same_input_same_output);
    RUN (rich_cluster_converges_and_stays);
    RUN (require_handles_and_slots_are_respected);
    RUN (full_slots_leave_tasks_unassigned);
    RUN (slots_come_before_caught_up);
    RUN (stateless_tasks_get_no_standbys_or_learners);
    RUN (balanced_caught_up_assignment_stays);
    RUN (actives_wait_for_learners);
    RUN (caught_up_standby_takes_over_at_once);
    RUN (least_lag_wins_when_none_is_caught_up);
    RUN (node_leaving_hands_over_to_its_standby);
    RUN (draining_node_warms_learners_first);
    RUN (drain_with_nowhere_else_keeps_the_task);
    RUN (cordoned_node_keeps_what_it_holds);
    RUN (nothing_to_place_or_nowhere_to_place_it);
    RUN (standbys_spread_by_label);

    RUN (caught_up_active_stays_beside_few_slots);
    RUN (task_fits_in_free_slots);
    RUN (moved_task_frees_its_slots);
    RUN (stateful_tasks_spread_with_equal_capacities);
    RUN (standbys_spread_with_equal_capacities);
    RUN (active_load_balances_over_mixed_capacities);

    RUN (avoided_node_holds_the_task_in_no_role);
    RUN (avoid_moves_only_the_avoided_task);
    RUN (a_task_avoided_everywhere_is_listed);

    RUN (output_text_is_jansson_s);
    RUN (ids_sort_as_strcmp_does);

    RUN (convergence_takes_no_extra_rounds);
    RUN (random_clusters_converge);
    return TEST_DONE ();
}

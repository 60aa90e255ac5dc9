/*  rebalance/assign_json.c: the assignor's input and output as JSON.

    Parsing is two steps. jansson turns the text into a tree, refusing what
    is not JSON; a walk over the tree then checks every value against the
    format and fills the assignor's structs, whose strings point into the
    tree (a default job, into an array of its own). The parsed description
    keeps the tree alive for them.

    The output is written as text straight into a buffer, byte for byte
    as jansson dumps the same document with JSON_INDENT (2).
*/

#include "rebalance/assign_json.h"

#include <assert.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct _shoal_assign_json_t {
    json_t *root; //  owns every string the input points to, but default jobs
    shoal_assign_input_t input;
    shoal_assign_node_t *nodes;
    shoal_assign_task_t *tasks;
    shoal_label_t *labels; //  the nodes' labels, then the tasks' requirements
    const char **handles;
    shoal_assign_holding_t *current;
    shoal_assign_lag_t *lags;
    char *jobs; //  the default jobs (s_default_job), one after another
};

//  The roles as the format names them, at index role - 1.
static const char *const s_roles[] = { "active", "standby", "learner" };

#define ROLE_COUNT 3

_Static_assert(SHOAL_ROLE_ACTIVE == 1 && SHOAL_ROLE_STANDBY == 2 && SHOAL_ROLE_LEARNER == 3,
               "s_roles is indexed by role - 1");

//  ---------------------------------------------------------------------
//  Reasons

//  A reason is built in the caller's buffer, cut short when it is full.
typedef struct {
    char *text;
    size_t size;
    size_t used;
} s_line_t;

static void
s_line_vadd (s_line_t *line, const char *format, va_list args)
{
    if (line->used + 1 >= line->size)
        return;
    int n = vsnprintf (line->text + line->used, line->size - line->used, format, args);
    if (n > 0)
        line->used +=
            (size_t) n < line->size - line->used ? (size_t) n : line->size - line->used - 1;
}

static void
s_line_add (s_line_t *line, const char *format, ...)
{
    va_list args;
    va_start (args, format);
    s_line_vadd (line, format, args);
    va_end (args);
}

//  Names quoted in a reason are cut to this many bytes, so that it stays
//  readable.
#define NAME_SHOWN 64

//  Adds a name from the input, or a reason from jansson that may quote it,
//  cut to at most shown bytes on a character boundary. Control characters
//  are escaped, so that a reason stays on one line.
static void
s_line_quote (s_line_t *line, const char *name, size_t shown)
{
    size_t length = strlen (name);
    size_t cut = length > shown ? shown : length;
    while (cut < length && cut > 0 && ((unsigned char) name[cut] & 0xC0) == 0x80)
        cut--;
    for (size_t i = 0; i < cut; i++) {
        unsigned char c = (unsigned char) name[i];
        if (c < 0x20 || c == 0x7F)
            s_line_add (line, "\\x%02X", c);
        else
            s_line_add (line, "%c", c);
    }
    if (cut < length)
        s_line_add (line, "...");
}

//  ---------------------------------------------------------------------
//  The walk

//  Deepest path a reason names: nodes[3].labels.zone, current.n1.active[0].
#define PATH_DEPTH 4

typedef struct {
    const char *key; //  NULL: an index into an array
    size_t index;
} s_step_t;

typedef struct {
    shoal_assign_json_t *self;
    s_step_t path[PATH_DEPTH];
    size_t depth;
    s_line_t why;
    //  The ids of the items of the list walked now (nodes, then tasks)
    //  met so far, to find one given twice: a hash table of their
    //  indexes, UINT32_MAX when empty, at least twice the list's length.
    //  (A jansson object of the ids, a key copied and a node allocated
    //  per id, was a fifth of the parse of 100,000 tasks.)
    uint32_t *seen;
    size_t seen_mask;       //  slots - 1, slots a power of two
    const char *items;      //  the list's items, each beginning with its id
    size_t item_size, item; //  the item walked now
    size_t label_count;
    size_t handle_count;
    size_t job_bytes; //  used in self->jobs
} s_parser_t;

static void
s_enter_key (s_parser_t *parser, const char *key)
{
    assert (parser->depth < PATH_DEPTH);
    parser->path[parser->depth++] = (s_step_t){ .key = key };
}

static void
s_enter_index (s_parser_t *parser, size_t index)
{
    assert (parser->depth < PATH_DEPTH);
    parser->path[parser->depth++] = (s_step_t){ .index = index };
}

static void
s_leave (s_parser_t *parser)
{
    parser->depth--;
}

//  Starts a reason with the path of the value at hand: "tasks[2].id: ".
static void
s_line_path (s_parser_t *parser)
{
    for (size_t i = 0; i < parser->depth; i++) {
        const s_step_t *step = &parser->path[i];
        if (step->key) {
            s_line_add (&parser->why, "%s", i ? "." : "");
            s_line_quote (&parser->why, step->key, NAME_SHOWN);
        } else
            s_line_add (&parser->why, "[%zu]", step->index);
    }
    if (parser->depth)
        s_line_add (&parser->why, ": ");
}

static int
s_fail (s_parser_t *parser, const char *format, ...)
{
    s_line_path (parser);
    va_list args;
    va_start (args, format);
    s_line_vadd (&parser->why, format, args);
    va_end (args);
    return -1;
}

//  Refuses an unknown key, at the path of the key, listing the known ones.
static int
s_unknown (s_parser_t *parser, const char *known)
{
    return s_fail (parser, "unknown key (expected %s)", known);
}

//  A key of an object that holds names (labels, current, lags).
static int
s_name_key (s_parser_t *parser, const char *key)
{
    if (strlen (key) > SHOAL_ASSIGN_JSON_STRING_MAX)
        return s_fail (parser, "longer than %d bytes", SHOAL_ASSIGN_JSON_STRING_MAX);
    return 0;
}

static int
s_string (s_parser_t *parser, json_t *value, const char **string)
{
    if (!json_is_string (value))
        return s_fail (parser, "must be a string");
    if (json_string_length (value) > SHOAL_ASSIGN_JSON_STRING_MAX)
        return s_fail (parser, "longer than %d bytes", SHOAL_ASSIGN_JSON_STRING_MAX);
    *string = json_string_value (value);
    return 0;
}

//  A node or task id: a non-empty string that no other node (or task) has.
static int
s_id (s_parser_t *parser, json_t *value, const char **id)
{
    if (s_string (parser, value, id))
        return -1;
    if (**id == 0)
        return s_fail (parser, "must not be empty");
    size_t at = (size_t) shoal_assign_hash (*id) & parser->seen_mask;
    for (; parser->seen[at] != UINT32_MAX; at = (at + 1) & parser->seen_mask) {
        const char *other =
            *(const char *const *) (parser->items + parser->seen[at] * parser->item_size);
        if (strcmp (other, *id) == 0) {
            s_line_path (parser);
            s_line_add (&parser->why, "\"");
            s_line_quote (&parser->why, *id, NAME_SHOWN);
            s_line_add (&parser->why, "\" given twice");
            return -1;
        }
    }
    parser->seen[at] = (uint32_t) parser->item;
    return 0;
}

//  Integers are written as such: 1.0 and 1e3 are refused, as is anything
//  jansson could not hold in 64 bits.
static int
s_integer (s_parser_t *parser, json_t *value, uint64_t min, uint64_t max, uint64_t *integer)
{
    json_int_t number = json_is_integer (value) ? json_integer_value (value) : -1;
    if (number < 0 || (uint64_t) number < min || (uint64_t) number > max)
        return s_fail (parser, "must be a %s integer, at most %" PRIu64,
                       min ? "positive" : "non-negative", max);
    *integer = (uint64_t) number;
    return 0;
}

static int
s_uint32 (s_parser_t *parser, json_t *value, uint64_t min, uint32_t *integer)
{
    uint64_t number = 0;
    if (s_integer (parser, value, min, UINT32_MAX, &number))
        return -1;
    *integer = (uint32_t) number;
    return 0;
}

static int
s_uint64 (s_parser_t *parser, json_t *value, uint64_t *integer)
{
    return s_integer (parser, value, 0, INT64_MAX, integer);
}

static int
s_boolean (s_parser_t *parser, json_t *value, bool *boolean)
{
    if (!json_is_boolean (value))
        return s_fail (parser, "must be true or false");
    *boolean = json_is_true (value);
    return 0;
}

static int
s_object (s_parser_t *parser, json_t *value)
{
    return json_is_object (value) ? 0 : s_fail (parser, "must be an object");
}

static int
s_array (s_parser_t *parser, json_t *value)
{
    return json_is_array (value) ? 0 : s_fail (parser, "must be an array");
}

//  A node's labels or a task's requirements: an object of strings.
static int
s_labels (s_parser_t *parser, json_t *value, uint32_t *count, const shoal_label_t **labels)
{
    if (s_object (parser, value))
        return -1;
    //  No label array at all when the input has no labels: never offset NULL.
    shoal_label_t *label =
        json_object_size (value) ? parser->self->labels + parser->label_count : NULL;
    *labels = label;
    for (void *at = json_object_iter (value); at; at = json_object_iter_next (value, at)) {
        const char *key = json_object_iter_key (at);
        json_t *item = json_object_iter_value (at);
        s_enter_key (parser, key);
        if (s_name_key (parser, key) || s_string (parser, item, &label->value))
            return -1;
        s_leave (parser);
        label->key = key;
        label++;
    }
    //  The count fits: a node has at most as many labels as the input has bytes.
    *count = (uint32_t) json_object_size (value);
    parser->label_count += *count;
    return 0;
}

static int
s_handles (s_parser_t *parser, json_t *value, shoal_assign_node_t *node)
{
    if (s_array (parser, value))
        return -1;
    const char **handle =
        json_array_size (value) ? parser->self->handles + parser->handle_count : NULL;
    for (size_t index = 0; index < json_array_size (value); index++) {
        json_t *item = json_array_get (value, index);
        s_enter_index (parser, index);
        if (s_string (parser, item, &handle[index]))
            return -1;
        s_leave (parser);
    }
    node->handles_all = false;
    node->handle_count = (uint32_t) json_array_size (value);
    node->handles = handle;
    parser->handle_count += node->handle_count;
    return 0;
}

static int
s_config (s_parser_t *parser, json_t *value, shoal_assign_config_t *config)
{
    if (s_object (parser, value))
        return -1;
    for (void *at = json_object_iter (value); at; at = json_object_iter_next (value, at)) {
        const char *key = json_object_iter_key (at);
        json_t *field = json_object_iter_value (at);
        s_enter_key (parser, key);
        int rc;
        if (strcmp (key, "standbys") == 0)
            rc = s_uint32 (parser, field, 0, &config->standbys);
        else if (strcmp (key, "max_warmups") == 0)
            rc = s_uint32 (parser, field, 0, &config->max_warmups);
        else if (strcmp (key, "acceptable_lag") == 0)
            rc = s_uint64 (parser, field, &config->acceptable_lag);
        else if (strcmp (key, "spread_by") == 0)
            //  null says "none" as absence does.
            rc = json_is_null (field) ? 0 : s_string (parser, field, &config->spread_by);
        else
            rc = s_unknown (parser, "standbys, max_warmups, acceptable_lag, spread_by");
        if (rc)
            return -1;
        s_leave (parser);
    }
    return 0;
}

//  A node's "cordon": "none", "cordoned" or "draining" (shoal_cordon_t).
static int
s_cordon (s_parser_t *parser, json_t *value, uint8_t *cordon)
{
    static const char *const names[] = { "none", "cordoned", "draining" };
    const char *name = NULL;
    if (s_string (parser, value, &name))
        return -1;
    for (uint8_t i = 0; i <= SHOAL_CORDON_MAX; i++)
        if (strcmp (name, names[i]) == 0) {
            *cordon = i;
            return 0;
        }
    return s_fail (parser, "must be \"none\", \"cordoned\" or \"draining\"");
}

static int
s_node (s_parser_t *parser, json_t *value, void *item)
{
    shoal_assign_node_t *node = item;
    if (s_object (parser, value))
        return -1;
    *node = (shoal_assign_node_t){ .capacity = 1, .handles_all = true };
    for (void *at = json_object_iter (value); at; at = json_object_iter_next (value, at)) {
        const char *key = json_object_iter_key (at);
        json_t *field = json_object_iter_value (at);
        s_enter_key (parser, key);
        int rc;
        if (strcmp (key, "id") == 0)
            rc = s_id (parser, field, &node->id);
        else if (strcmp (key, "capacity") == 0)
            rc = s_uint32 (parser, field, 1, &node->capacity);
        else if (strcmp (key, "slots") == 0)
            rc = s_uint64 (parser, field, &node->slots);
        else if (strcmp (key, "labels") == 0)
            rc = s_labels (parser, field, &node->label_count, &node->labels);
        else if (strcmp (key, "handles") == 0)
            rc = s_handles (parser, field, node);
        else if (strcmp (key, "cordon") == 0)
            rc = s_cordon (parser, field, &node->cordon);
        else
            rc = s_unknown (parser, "id, capacity, slots, labels, handles, cordon");
        if (rc)
            return -1;
        s_leave (parser);
    }
    if (!node->id) {
        s_enter_key (parser, "id");
        return s_fail (parser, "is required");
    }
    return 0;
}

//  A task's job, when not given: the part of its id before the last '/'
//  ("ingest" for "ingest/0"), or the whole id. It is copied into the jobs
//  array that s_reserve sized for every task without a job (a string added
//  to the tree for each cost 100,000 allocations and as many hash
//  insertions for 100,000 tasks).
static int
s_default_job (s_parser_t *parser, shoal_assign_task_t *task)
{
    const char *slash = strrchr (task->id, '/');
    if (!slash) {
        task->job = task->id;
        return 0;
    }
    size_t length = (size_t) (slash - task->id);
    char *job = parser->self->jobs + parser->job_bytes;
    memcpy (job, task->id, length);
    job[length] = 0;
    parser->job_bytes += length + 1;
    task->job = job;
    return 0;
}

static int
s_task (s_parser_t *parser, json_t *value, void *item)
{
    shoal_assign_task_t *task = item;
    if (s_object (parser, value))
        return -1;
    *task = (shoal_assign_task_t){ .stateful = true, .weight = 1 };
    for (void *at = json_object_iter (value); at; at = json_object_iter_next (value, at)) {
        const char *key = json_object_iter_key (at);
        json_t *field = json_object_iter_value (at);
        s_enter_key (parser, key);
        int rc;
        if (strcmp (key, "id") == 0)
            rc = s_id (parser, field, &task->id);
        else if (strcmp (key, "job") == 0)
            rc = s_string (parser, field, &task->job);
        else if (strcmp (key, "stateful") == 0)
            rc = s_boolean (parser, field, &task->stateful);
        else if (strcmp (key, "weight") == 0)
            rc = s_uint32 (parser, field, 1, &task->weight);
        else if (strcmp (key, "require") == 0)
            rc = s_labels (parser, field, &task->require_count, &task->require);
        else
            rc = s_unknown (parser, "id, job, stateful, weight, require");
        if (rc)
            return -1;
        s_leave (parser);
    }
    if (!task->id) {
        s_enter_key (parser, "id");
        return s_fail (parser, "is required");
    }
    return task->job ? 0 : s_default_job (parser, task);
}

//  Walks one node or one task into the struct at item.
typedef int (*s_walk_t) (s_parser_t *parser, json_t *value, void *item);

//  Nodes or tasks: an array of at most max objects with unique ids, walked
//  into items of item_size bytes each.
static int
s_list (s_parser_t *parser, json_t *value, size_t max, const char *what, s_walk_t walk, void *items,
        size_t item_size)
{
    if (s_array (parser, value))
        return -1;
    if (json_array_size (value) > max)
        return s_fail (parser, "more than %zu %s", max, what);
    size_t slots = 16;
    while (slots < 2 * json_array_size (value))
        slots *= 2;
    free (parser->seen);
    parser->seen = malloc (slots * sizeof (uint32_t));
    if (!parser->seen)
        return s_fail (parser, "out of memory");
    memset (parser->seen, 0xFF, slots * sizeof (uint32_t));
    parser->seen_mask = slots - 1;
    parser->items = items, parser->item_size = item_size;
    for (size_t index = 0; index < json_array_size (value); index++) {
        json_t *item = json_array_get (value, index);
        parser->item = index;
        s_enter_index (parser, index);
        if (walk (parser, item, (char *) items + index * item_size))
            return -1;
        s_leave (parser);
    }
    return 0;
}

//  Walks an object of node name -> object (current, lags), calling inner
//  with each node's name and object.
typedef int (*s_node_walk_t) (s_parser_t *parser, const char *node, json_t *object);

static int
s_per_node (s_parser_t *parser, json_t *value, s_node_walk_t inner)
{
    if (s_object (parser, value))
        return -1;
    for (void *node_at = json_object_iter (value); node_at;
         node_at = json_object_iter_next (value, node_at)) {
        const char *node = json_object_iter_key (node_at);
        json_t *object = json_object_iter_value (node_at);
        s_enter_key (parser, node);
        if (s_name_key (parser, node) || s_object (parser, object) || inner (parser, node, object))
            return -1;
        s_leave (parser);
    }
    return 0;
}

//  One node of the assignment in force: {"active": [task, ...], ...}.
static int
s_current_node (s_parser_t *parser, const char *node, json_t *roles)
{
    shoal_assign_json_t *self = parser->self;
    for (void *role_at = json_object_iter (roles); role_at;
         role_at = json_object_iter_next (roles, role_at)) {
        const char *name = json_object_iter_key (role_at);
        json_t *tasks = json_object_iter_value (role_at);
        s_enter_key (parser, name);
        uint8_t role = 0;
        for (uint8_t i = 0; i < ROLE_COUNT; i++)
            if (strcmp (name, s_roles[i]) == 0)
                role = i + 1;
        if (role == 0)
            return s_unknown (parser, "active, standby, learner");
        if (s_array (parser, tasks))
            return -1;
        for (size_t index = 0; index < json_array_size (tasks); index++) {
            json_t *item = json_array_get (tasks, index);
            shoal_assign_holding_t *holding = &self->current[self->input.current_count];
            s_enter_index (parser, index);
            if (s_string (parser, item, &holding->task))
                return -1;
            s_leave (parser);
            holding->node = node;
            holding->role = role;
            self->input.current_count++;
        }
        s_leave (parser);
    }
    return 0;
}

//  How far behind one node is: {task: lag, ...}.
static int
s_lags_node (s_parser_t *parser, const char *node, json_t *tasks)
{
    shoal_assign_json_t *self = parser->self;
    for (void *task_at = json_object_iter (tasks); task_at;
         task_at = json_object_iter_next (tasks, task_at)) {
        const char *task = json_object_iter_key (task_at);
        json_t *item = json_object_iter_value (task_at);
        shoal_assign_lag_t *lag = &self->lags[self->input.lag_count];
        s_enter_key (parser, task);
        if (s_name_key (parser, task) || s_uint64 (parser, item, &lag->lag))
            return -1;
        s_leave (parser);
        lag->node = node;
        lag->task = task;
        self->input.lag_count++;
    }
    return 0;
}

static int
s_description (s_parser_t *parser, json_t *root)
{
    shoal_assign_input_t *input = &parser->self->input;
    input->config = (shoal_assign_config_t){ .max_warmups = 2, .acceptable_lag = 10000 };
    for (void *at = json_object_iter (root); at; at = json_object_iter_next (root, at)) {
        const char *key = json_object_iter_key (at);
        json_t *field = json_object_iter_value (at);
        s_enter_key (parser, key);
        int rc;
        if (strcmp (key, "config") == 0)
            rc = s_config (parser, field, &input->config);
        else if (strcmp (key, "nodes") == 0)
            rc = s_list (parser, field, SHOAL_ASSIGN_JSON_NODES_MAX, "nodes", s_node,
                         parser->self->nodes, sizeof (shoal_assign_node_t));
        else if (strcmp (key, "tasks") == 0)
            rc = s_list (parser, field, SHOAL_ASSIGN_JSON_TASKS_MAX, "tasks", s_task,
                         parser->self->tasks, sizeof (shoal_assign_task_t));
        else if (strcmp (key, "current") == 0)
            rc = s_per_node (parser, field, s_current_node);
        else if (strcmp (key, "lags") == 0)
            rc = s_per_node (parser, field, s_lags_node);
        else
            rc = s_unknown (parser, "config, nodes, tasks, current, lags");
        if (rc)
            return -1;
        s_leave (parser);
    }
    const char *required[] = { "nodes", "tasks" };
    for (size_t i = 0; i < 2; i++)
        if (!json_object_get (root, required[i])) {
            s_enter_key (parser, required[i]);
            return s_fail (parser, "is required (an array, possibly empty)");
        }
    return 0;
}

//  ---------------------------------------------------------------------
//  Memory

static void *
s_array_new (size_t count, size_t size, bool *failed)
{
    if (count == 0)
        return NULL;
    void *array = calloc (count, size);
    *failed |= !array;
    return array;
}

//  Gives every array the walk fills its size, from a first walk that counts
//  the items of the shapes the second accepts and skips everything else.
//  The second walk refuses what the first skipped before it writes there.
static int
s_reserve (s_parser_t *parser, json_t *root)
{
    shoal_assign_json_t *self = parser->self;
    json_t *nodes = json_object_get (root, "nodes");
    json_t *tasks = json_object_get (root, "tasks");
    size_t labels = 0, handles = 0, holdings = 0, lags = 0, jobs = 0;
    if (json_array_size (nodes) <= SHOAL_ASSIGN_JSON_NODES_MAX)
        for (size_t index = 0; index < json_array_size (nodes); index++) {
            json_t *node = json_array_get (nodes, index);
            labels += json_object_size (json_object_get (node, "labels"));
            handles += json_array_size (json_object_get (node, "handles"));
        }
    if (json_array_size (tasks) <= SHOAL_ASSIGN_JSON_TASKS_MAX)
        for (size_t index = 0; index < json_array_size (tasks); index++) {
            json_t *task = json_array_get (tasks, index);
            labels += json_object_size (json_object_get (task, "require"));
            //  Room for the default job of a task that has none (at most
            //  its id, which jansson holds without a NUL inside).
            json_t *id = json_object_get (task, "id");
            if (!json_object_get (task, "job") && json_is_string (id))
                jobs += json_string_length (id) + 1;
        }
    json_t *current = json_object_get (root, "current");
    for (void *at = json_object_iter (current); at; at = json_object_iter_next (current, at))
        for (size_t role = 0; role < ROLE_COUNT; role++)
            holdings +=
                json_array_size (json_object_get (json_object_iter_value (at), s_roles[role]));
    json_t *lagging = json_object_get (root, "lags");
    for (void *at = json_object_iter (lagging); at; at = json_object_iter_next (lagging, at))
        lags += json_object_size (json_object_iter_value (at));

    bool failed = false;
    if (json_array_size (nodes) <= SHOAL_ASSIGN_JSON_NODES_MAX)
        self->nodes = s_array_new (json_array_size (nodes), sizeof (shoal_assign_node_t), &failed);
    if (json_array_size (tasks) <= SHOAL_ASSIGN_JSON_TASKS_MAX)
        self->tasks = s_array_new (json_array_size (tasks), sizeof (shoal_assign_task_t), &failed);
    self->labels = s_array_new (labels, sizeof (shoal_label_t), &failed);
    self->handles = s_array_new (handles, sizeof (const char *), &failed);
    self->current = s_array_new (holdings, sizeof (shoal_assign_holding_t), &failed);
    self->lags = s_array_new (lags, sizeof (shoal_assign_lag_t), &failed);
    self->jobs = s_array_new (jobs, 1, &failed);
    if (failed)
        return s_fail (parser, "out of memory");

    self->input.node_count = self->nodes ? json_array_size (nodes) : 0;
    self->input.nodes = self->nodes;
    self->input.task_count = self->tasks ? json_array_size (tasks) : 0;
    self->input.tasks = self->tasks;
    self->input.current = self->current;
    self->input.lags = self->lags;
    return 0;
}

void
shoal_assign_json_destroy (shoal_assign_json_t **self_p)
{
    shoal_assign_json_t *self = *self_p;
    if (self) {
        free (self->nodes);
        free (self->tasks);
        free (self->labels);
        free (self->handles);
        free (self->current);
        free (self->lags);
        free (self->jobs);
        json_decref (self->root);
        free (self);
        *self_p = NULL;
    }
}

//  Walks a tree (which it takes) into a new description, or sets a reason.
static shoal_assign_json_t *
s_build (s_parser_t *parser, json_t *root)
{
    shoal_assign_json_t *self = calloc (1, sizeof (shoal_assign_json_t));
    if (!self) {
        json_decref (root);
        s_fail (parser, "out of memory");
        return NULL;
    }
    self->root = root;
    parser->self = self;
    int rc = json_is_object (root) ? s_reserve (parser, root)
                                   : s_fail (parser, "the input must be a JSON object");
    if (rc == 0)
        rc = s_description (parser, root);
    free (parser->seen);
    parser->seen = NULL;
    if (rc)
        shoal_assign_json_destroy (&self);
    return self;
}

//  jansson refuses a number too large for 64 bits (or for a double) while it
//  parses, so its reason names a line and a column but no field. To name the
//  field, a copy of the text in which that number is a string of the same
//  length is parsed: the walk then refuses the string, under the field's
//  name. Returns the copy's tree, or NULL.
static json_t *
s_load_without_number (const char *text, size_t size, const json_error_t *error)
{
    size_t end = (size_t) error->position, start = end;
    if (error->position < 0 || end > size)
        return NULL;
    while (start > 0 && text[start - 1] && strchr ("0123456789+-.eE", text[start - 1]))
        start--;
    if (end - start < 2)
        return NULL;
    char *copy = malloc (size);
    if (!copy)
        return NULL;
    memcpy (copy, text, size);
    copy[start] = '"';
    memset (copy + start + 1, '0', end - start - 2);
    copy[end - 1] = '"';
    json_error_t ignored;
    json_t *root = json_loadb (copy, size, JSON_REJECT_DUPLICATES, &ignored);
    free (copy);
    return root;
}

int
shoal_assign_json_parse (const char *text, size_t size, shoal_assign_json_t **result, char *why,
                         size_t why_size)
{
    s_parser_t parser = { .why = { why, why_size, 0 } };
    if (why_size)
        why[0] = 0;
    *result = NULL;
    if (size == 0)
        return s_fail (&parser, "the input is empty");
    if (size > SHOAL_ASSIGN_JSON_SIZE_MAX)
        return s_fail (&parser, "the input is larger than %u bytes (64 MiB)",
                       SHOAL_ASSIGN_JSON_SIZE_MAX);
    json_error_t error;
    json_t *root = json_loadb (text, size, JSON_REJECT_DUPLICATES, &error);
    if (!root && json_error_code (&error) == json_error_numeric_overflow) {
        json_t *retry = s_load_without_number (text, size, &error);
        shoal_assign_json_t *self = retry ? s_build (&parser, retry) : NULL;
        if (retry && !self)
            return -1;
        //  The string stood where a string may: jansson's reason it is.
        shoal_assign_json_destroy (&self);
    }
    if (!root) {
        s_line_add (&parser.why, "invalid JSON at line %d, column %d: ", error.line, error.column);
        s_line_quote (&parser.why, error.text, sizeof error.text);
        return -1;
    }
    *result = s_build (&parser, root);
    return *result ? 0 : -1;
}

const shoal_assign_input_t *
shoal_assign_json_input (const shoal_assign_json_t *self)
{
    return &self->input;
}

//  ---------------------------------------------------------------------
//  Output

static int
s_compare_names (const void *a, const void *b)
{
    return strcmp (*(const char *const *) a, *(const char *const *) b);
}

//  The text is written straight into a buffer, as jansson's json_dumps
//  with JSON_INDENT (2) writes the same document (which it did until
//  building the tree and dumping it cost a tenth of the whole command on
//  100,000 tasks): two spaces per level, one item per line, ": " after a
//  key, "[]" and "{}" when empty, and strings escaped as jansson escapes
//  them (\" \\ \b \f \n \r \t, other bytes below 0x20 as \u00XX, the
//  rest as they are: every string is valid UTF-8, checked when parsed).
typedef struct {
    char *text;
    size_t used, size;
    bool failed;
} s_out_t;

static void
s_out_bytes (s_out_t *out, const char *bytes, size_t count)
{
    if (out->failed)
        return;
    if (out->size - out->used <= count) {
        size_t size = out->size ? out->size : 4096;
        while (size - out->used <= count)
            size *= 2;
        char *bigger = realloc (out->text, size);
        if (!bigger) {
            out->failed = true;
            return;
        }
        out->text = bigger, out->size = size;
    }
    memcpy (out->text + out->used, bytes, count);
    out->used += count;
}

static void
s_out_text (s_out_t *out, const char *text)
{
    s_out_bytes (out, text, strlen (text));
}

//  A newline and the indent of level.
static void
s_out_line (s_out_t *out, int level)
{
    static const char spaces[] = "\n          ";
    assert (level >= 0 && 2 * level + 1 < (int) sizeof spaces);
    s_out_bytes (out, spaces, (size_t) (1 + 2 * level));
}

static void
s_out_string (s_out_t *out, const char *string)
{
    s_out_bytes (out, "\"", 1);
    const char *run = string;
    for (const char *c = string; *c; c++) {
        unsigned char byte = (unsigned char) *c;
        if (byte >= 0x20 && byte != '"' && byte != '\\')
            continue;
        s_out_bytes (out, run, (size_t) (c - run));
        run = c + 1;
        char escape[8];
        const char *named = byte == '"'    ? "\\\""
                            : byte == '\\' ? "\\\\"
                            : byte == '\b' ? "\\b"
                            : byte == '\f' ? "\\f"
                            : byte == '\n' ? "\\n"
                            : byte == '\r' ? "\\r"
                            : byte == '\t' ? "\\t"
                                           : NULL;
        if (!named) {
            snprintf (escape, sizeof escape, "\\u%04X", byte);
            named = escape;
        }
        s_out_text (out, named);
    }
    s_out_text (out, run);
    s_out_bytes (out, "\"", 1);
}

//  "key": at the start of a line of level.
static void
s_out_key (s_out_t *out, int level, const char *key)
{
    s_out_line (out, level);
    s_out_string (out, key);
    s_out_bytes (out, ": ", 2);
}

//  The tasks of holdings [first, end) as a list at level (its items one
//  level deeper).
static void
s_out_tasks (s_out_t *out, int level, const shoal_assign_holding_t *holdings, size_t first,
             size_t end)
{
    if (first == end) {
        s_out_bytes (out, "[]", 2);
        return;
    }
    s_out_bytes (out, "[", 1);
    for (size_t i = first; i < end; i++) {
        if (i > first)
            s_out_bytes (out, ",", 1);
        s_out_line (out, level + 1);
        s_out_string (out, holdings[i].task);
    }
    s_out_line (out, level);
    s_out_bytes (out, "]", 1);
}

//  The assignment's entry of every node, sorted by id, each with its three
//  lists; the holdings come sorted by node, role and task. Returns -1 when
//  a holding names a node that is not in the input or a role that is not.
static int
s_out_assignment (s_out_t *out, const shoal_assign_input_t *input,
                  const shoal_assign_output_t *output)
{
    if (input->node_count == 0) {
        s_out_bytes (out, "{}", 2);
        return output->holding_count == 0 ? 0 : -1;
    }
    const char **nodes = malloc (input->node_count * sizeof (char *));
    if (!nodes)
        return -1;
    for (size_t i = 0; i < input->node_count; i++)
        nodes[i] = input->nodes[i].id;
    qsort (nodes, input->node_count, sizeof (char *), s_compare_names);
    const shoal_assign_holding_t *holding = output->holdings;
    size_t at = 0, count = output->holding_count;
    s_out_bytes (out, "{", 1);
    for (size_t n = 0; n < input->node_count; n++) {
        if (n > 0)
            s_out_bytes (out, ",", 1);
        s_out_key (out, 2, nodes[n]);
        s_out_bytes (out, "{", 1);
        for (uint8_t role = 1; role <= ROLE_COUNT; role++) {
            size_t first = at;
            while (at < count && holding[at].role == role &&
                   strcmp (holding[at].node, nodes[n]) == 0)
                at++;
            s_out_key (out, 3, s_roles[role - 1]);
            s_out_tasks (out, 3, holding, first, at);
            if (role < ROLE_COUNT)
                s_out_bytes (out, ",", 1);
        }
        s_out_line (out, 2);
        s_out_bytes (out, "}", 1);
    }
    s_out_line (out, 1);
    s_out_bytes (out, "}", 1);
    free (nodes);
    return at == count ? 0 : -1;
}

char *
shoal_assign_json_render (const shoal_assign_input_t *input, const shoal_assign_output_t *output)
{
    s_out_t out = { 0 };
    s_out_bytes (&out, "{", 1);
    s_out_key (&out, 1, "assignment");
    int rc = s_out_assignment (&out, input, output);
    s_out_bytes (&out, ",", 1);
    s_out_key (&out, 1, "unassigned");
    if (output->unassigned_count == 0)
        s_out_bytes (&out, "[]", 2);
    else {
        s_out_bytes (&out, "[", 1);
        for (size_t i = 0; i < output->unassigned_count; i++) {
            if (i > 0)
                s_out_bytes (&out, ",", 1);
            s_out_line (&out, 2);
            s_out_string (&out, output->unassigned[i]);
        }
        s_out_line (&out, 1);
        s_out_bytes (&out, "]", 1);
    }
    s_out_bytes (&out, ",", 1);
    s_out_key (&out, 1, "followup");
    s_out_text (&out, output->followup ? "true" : "false");
    s_out_bytes (&out, ",", 1);
    s_out_key (&out, 1, "moves");
    s_out_bytes (&out, "{", 1);
    for (size_t role = 0; role < ROLE_COUNT; role++) {
        char number[16];
        snprintf (number, sizeof number, "%" PRIu32, output->moves[role]);
        s_out_key (&out, 2, s_roles[role]);
        s_out_text (&out, number);
        if (role + 1 < ROLE_COUNT)
            s_out_bytes (&out, ",", 1);
    }
    s_out_line (&out, 1);
    s_out_bytes (&out, "}", 1);
    s_out_line (&out, 0);
    s_out_bytes (&out, "}", 2); //  with the terminating NUL
    if (out.failed || rc != 0) {
        free (out.text);
        return NULL;
    }
    return out.text;
}

/*  tests/fuzz/fuzz_jobs.c: the job specs of one node on arbitrary input.

    The input is a setup byte, a saved set to restart from when the setup
    byte asks for one, then a run of steps (fuzz.h): what the elector says
    (the leader among a handful of nodes, this one included, or nobody, a
    term and whether this node acts), the voter set, members coming and
    going, messages from peers, decoded by the real decoder on the frame
    carrier as a shell would, and JOB, JOB-ACK, SYNC-REQ, SYNC-REPLY,
    CONTROL-REQ and CONTROL-REP messages built from a few bytes each, with
    terms and versions near the node's own, so that the fuzzer reaches deep
    states without having to write msgpack; local submits, rescales and
    removes with specs built from the input, broken ones included; the
    capacity reported for rescales that wait; clock steps and ticks.

    A saved set that breaks the rules must make shoal_jobs_new return NULL,
    and only such a set; the node then starts afresh. Whatever a step hands
    the node (a request, its spec, a decoded message's arena) is freed
    before the next step, a decoded message as soon as the node took it, so
    that AddressSanitizer sees the node keep a pointer it does not own.

    After every step the node must keep the promises of jobs.h: every
    message it sends encodes within a frame, goes to a peer and not to
    itself, and is one the node's role sends: JOB deltas of the set held,
    of valid specs, only from a ready leader and only to live members;
    SYNC-REPLY of exactly the set held, from a ready leader to a live member
    or from a follower to its leader; JOB-ACK of the name held, to the
    leader followed; SYNC-REQ only while a leader catches up, only to
    voters; CONTROL-REQ, with ids counting up, only to the leader followed;
    CONTROL-REP only for a request a peer forwarded, once each. Every
    answer, local or forwarded, has a code of the protocol and a reason,
    and every local request is answered at most once, under its ref. The
    specs are sorted by name, unique, valid and hold at most
    SHOAL_TASKS_MAX tasks; the task list has exactly their tasks, sorted by
    id; saved says when the specs changed; their name never goes back (but
    see s_check_name); the rescales that wait are the leader's, for held
    jobs, above their parallelism; only an acting leader with its own term
    on the specs is ready; the statistics only grow, with dropped counting
    exactly the messages refused; next is always later than now, and
    ticking at the same time settles within TICKS_MAX calls.

    The seeds are written by make_corpus.
*/

#include "tests/fuzz/fuzz.h"

#include "rebalance/jobs.h"
#include "wire/ids.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//  Ticks at one time before a next that stays in the past is a busy loop.
#define TICKS_MAX 8

//  The most jobs of a bulk set: one over SHOAL_JOBS_MAX. Every change to
//  a set of thousands lists all its tasks again, in seconds under the
//  sanitizers.
#define BULK_MAX (SHOAL_JOBS_MAX + 1)

//  The stranger that sends in place of FUZZ_JOBS_SELF: the node never
//  hears from itself.
#define NODE_OTHER FUZZ_JOBS_NODES
#define NODE_COUNT (FUZZ_JOBS_NODES + 1)

static shoal_id_t s_nodes[NODE_COUNT];

//  A valid name of 64 bytes, and one byte too long.
static char s_name_longest[SHOAL_NAME_MAX + 1];
static char s_name_too_long[SHOAL_NAME_MAX + 2];
static char s_label_too_long[SHOAL_LABEL_MAX + 2];

static const char *s_names[16] = {
    "web", "ingest",   "db.main", "x-1_y",     "a",  "B",       "job",           s_name_longest,
    "",    "bad name", "a/b",     "h\xc3\xa9", NULL, "web\xff", s_name_too_long, "web ",
};

static const uint32_t s_weights[4] = { 1, 0, 7, UINT32_MAX };

//  The parallelisms and capacities of operands 0xf8 to 0xff.
static const uint32_t s_large[8] = {
    SHOAL_PARALLELISM_MAX, SHOAL_PARALLELISM_MAX + 1, UINT32_MAX, 1000, 4096, 16384, 32768,
    UINT32_MAX - 1,
};

//  What the node was told, and what it showed after the last step, to
//  compare the next with.
static struct {
    //  From the elector.
    bool has_leader;
    int leader;           //  the node followed, once there was one
    uint64_t leader_term; //  its term
    bool acting;          //  this node leads and acts
    uint64_t term_max;    //  the greatest term given (or restored)
    bool terms_back;      //  a term below term_max was given since
    bool wild_term;       //  a peer reported specs named above term_max
    uint16_t live;        //  of s_nodes, by index
    uint16_t voters;
    //  From the node.
    uint64_t term;
    uint64_t version;
    size_t count;
    uint64_t digest;
    const shoal_assign_task_t *tasks; //  the task list checked last
    size_t task_count;
    bool ready;
    shoal_jobs_stats_t stats;
    uint32_t forward_id; //  of the last request forwarded
    //  Local requests: refs 1 to refs were handed out.
    uint64_t refs;
} s_last;

//  Per local ref: open, answered, or refused by shoal_jobs_request.
enum { REF_OPEN = 0, REF_ANSWERED = 1, REF_REFUSED = 2 };
static uint8_t *s_refs;

//  The requests peers forwarded and the node took: each is answered once.
typedef struct {
    int from;
    uint32_t id;
    bool answered;
} s_remote_t;

static struct {
    s_remote_t *items;
    size_t count;
} s_remote;

//  What one step hands the node, freed when the next step starts.
static struct {
    void **items;
    size_t count;
    size_t capacity;
} s_pool;

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
    (void) argc;
    (void) argv;
    for (int i = 0; i < FUZZ_JOBS_SELF; i++)
        memset (s_nodes[i].bytes, i + 1, SHOAL_ID_SIZE);
    memset (s_nodes[FUZZ_JOBS_SELF].bytes, 0xee, SHOAL_ID_SIZE);
    memset (s_nodes[FUZZ_JOBS_STRANGER].bytes, 0x77, SHOAL_ID_SIZE);
    memset (s_nodes[NODE_OTHER].bytes, 0x78, SHOAL_ID_SIZE);
    memset (s_name_longest, 'n', SHOAL_NAME_MAX);
    memset (s_name_too_long, 'n', SHOAL_NAME_MAX + 1);
    memset (s_label_too_long, 'l', SHOAL_LABEL_MAX + 1);
    return 0;
}

//  ---------------------------------------------------------------------
//  Storage

static void *
s_alloc (size_t size)
{
    if (s_pool.count == s_pool.capacity) {
        s_pool.capacity = s_pool.capacity ? 2 * s_pool.capacity : 256;
        s_pool.items = realloc (s_pool.items, s_pool.capacity * sizeof *s_pool.items);
        FUZZ_REQUIRE (s_pool.items, "no memory for %zu allocations", s_pool.capacity);
    }
    void *item = calloc (1, size ? size : 1);
    FUZZ_REQUIRE (item, "no memory for %zu bytes", size);
    s_pool.items[s_pool.count++] = item;
    return item;
}

static void
s_pool_drain (void)
{
    for (size_t i = 0; i < s_pool.count; i++)
        free (s_pool.items[i]);
    s_pool.count = 0;
}

static char *
s_strndup (const void *text, size_t size)
{
    char *copy = s_alloc (size + 1);
    memcpy (copy, text, size);
    return copy;
}

//  A copy the node must not keep a pointer to (NULL stays NULL).
static const char *
s_copy (const char *text)
{
    return text ? s_strndup (text, strlen (text)) : NULL;
}

static void
s_copy_spec (shoal_jobspec_t *dst, const shoal_jobspec_t *src)
{
    *dst = *src;
    dst->name = s_copy (src->name);
    dst->command = s_copy (src->command);
    if (src->require_count) {
        dst->require = s_alloc (src->require_count * sizeof *dst->require);
        for (uint32_t i = 0; i < src->require_count; i++)
            dst->require[i] =
                (shoal_label_t){ s_copy (src->require[i].key), s_copy (src->require[i].value) };
    }
}

//  ---------------------------------------------------------------------
//  Reading operands (fuzz.h)

static uint32_t
s_read_count (uint8_t operand)
{
    return operand < 0xf8 ? operand : s_large[operand - 0xf8];
}

static uint32_t
s_read_timeout (uint8_t operand)
{
    return operand == 0xff ? UINT32_MAX : (uint32_t) operand * operand * 10;
}

//  A job name from operand and, for raw names, the bytes after it.
static const char *
s_read_name_from (const shoal_jobs_t *core, uint8_t operand, const uint8_t *data, size_t size,
                  size_t *at)
{
    if (operand >= 0x80) {
        size_t length = operand & 0x7f;
        if (length > size - *at)
            length = size - *at;
        const char *name = s_strndup (data + *at, length);
        *at += length;
        return name;
    }
    const shoal_jobspec_t *specs;
    size_t count = core ? shoal_jobs_specs (core, &specs) : 0;
    if ((operand & 0x40) && count)
        return s_copy (specs[(operand & 0x3f) % count].name);
    return s_copy (s_names[operand & 15]);
}

static const char *
s_read_name (const shoal_jobs_t *core, const uint8_t *data, size_t size, size_t *at)
{
    return s_read_name_from (core, fuzz_operand (data, size, at), data, size, at);
}

//  A command of operand (fuzz.h), each step of the operand unit bytes long.
static const char *
s_read_command (uint8_t operand, size_t unit)
{
    if (operand == 0)
        return NULL;
    if (operand == 0xff)
        return s_copy ("run \xc3\x28");
    size_t length = (size_t) (operand - 1) * unit;
    char *command = s_alloc (length + 1);
    memset (command, 'x', length);
    return command;
}

static shoal_label_t
s_read_label (uint8_t operand)
{
    char key[8];
    switch (operand & 7) {
    case FUZZ_JOBS_LABEL_UNIQUE:
        snprintf (key, sizeof key, "k%u", operand >> 3);
        return (shoal_label_t){ s_copy (key), s_copy ("v") };
    case 1:
        return (shoal_label_t){ s_copy ("zone"), s_copy ("eu") };
    case 2:
        return (shoal_label_t){ s_copy ("zone"), s_copy ("us") };
    case 3:
        return (shoal_label_t){ s_copy ("rack"), s_copy ("") };
    case 4:
        return (shoal_label_t){ s_copy (""), s_copy ("x") };
    case 5:
        return (shoal_label_t){ NULL, s_copy ("x") };
    case 6:
        return (shoal_label_t){ s_copy ("gpu"), NULL };
    default:
        return operand & 8 ? (shoal_label_t){ s_copy (s_label_too_long), s_copy ("v") }
                           : (shoal_label_t){ s_copy ("long"), s_copy (s_label_too_long) };
    }
}

static void
s_read_spec (const shoal_jobs_t *core, const uint8_t *data, size_t size, size_t *at,
             shoal_jobspec_t *spec)
{
    memset (spec, 0, sizeof *spec);
    spec->name = s_read_name (core, data, size, at);
    spec->parallelism = s_read_count (fuzz_operand (data, size, at));
    uint8_t flags = fuzz_operand (data, size, at);
    spec->stateful = flags & 1;
    spec->weight = s_weights[(flags >> 1) & 3];
    spec->require_count = flags >> 3;
    uint8_t command = fuzz_operand (data, size, at);
    spec->command = s_read_command (command, 17);
    spec->fenced = command != 0 && command % 2 == 0;
    if (spec->require_count) {
        spec->require = s_alloc (spec->require_count * sizeof *spec->require);
        for (uint32_t i = 0; i < spec->require_count; i++)
            spec->require[i] = s_read_label (fuzz_operand (data, size, at));
    }
}

//  ---------------------------------------------------------------------
//  The rules of a job spec, as jobs.c words them in its refusals

static bool
s_name_valid (const char *name)
{
    size_t length = name ? strlen (name) : 0;
    if (length == 0 || length > SHOAL_NAME_MAX)
        return false;
    for (size_t i = 0; i < length; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '-' || c == '_'))
            return false;
    }
    return true;
}

//  The encoded size of spec in a JOB, -1 when the wire refuses it.
static long
s_spec_bytes (const shoal_jobspec_t *spec)
{
    shoal_msg_t msg = { .type = SHOAL_MSG_JOB };
    msg.u.job.spec = *spec;
    shoal_wire_error_t err;
    return shoal_msg_encode (&msg, NULL, 0, &err);
}

//  Whether spec can be a job; a removal (parallelism 0) passes when
//  removal is true.
static bool
s_spec_valid (const shoal_jobspec_t *spec, bool removal)
{
    if (!s_name_valid (spec->name) || spec->parallelism > SHOAL_PARALLELISM_MAX ||
        (spec->parallelism == 0 && !removal) || (spec->parallelism && spec->weight == 0) ||
        spec->require_count > SHOAL_LABELS_MAX || (spec->require_count && !spec->require))
        return false;
    for (uint32_t i = 0; i < spec->require_count; i++)
        if (!spec->require[i].key || !spec->require[i].key[0] || !spec->require[i].value)
            return false;
    if (spec->command && strlen (spec->command) > SHOAL_COMMAND_MAX)
        return false;
    return s_spec_bytes (spec) >= 0; //  what the wire cannot carry is no job either
}

static bool
s_text_equal (const char *a, const char *b)
{
    return strcmp (a ? a : "", b ? b : "") == 0;
}

static bool
s_spec_equal (const shoal_jobspec_t *a, const shoal_jobspec_t *b)
{
    if (!s_text_equal (a->name, b->name) || a->parallelism != b->parallelism ||
        a->stateful != b->stateful || a->fenced != b->fenced || a->weight != b->weight ||
        a->require_count != b->require_count || !s_text_equal (a->command, b->command))
        return false;
    for (uint32_t i = 0; i < a->require_count; i++)
        if (!s_text_equal (a->require[i].key, b->require[i].key) ||
            !s_text_equal (a->require[i].value, b->require[i].value))
            return false;
    return true;
}

//  A saved set shoal_jobs_new must take: valid specs, unique names, at most
//  SHOAL_JOBS_MAX jobs and SHOAL_TASKS_MAX tasks, small enough for one
//  frame with room to spare (jobs.c keeps 64 kB), and a version at most
//  half the range (so that it never wraps).
static int
s_text_compare (const void *a, const void *b)
{
    return strcmp (*(const char *const *) a, *(const char *const *) b);
}

static bool
s_saved_valid (const shoal_jobs_saved_t *saved)
{
    uint64_t tasks = 0, bytes = 0;
    if (saved->count > SHOAL_JOBS_MAX || saved->version > UINT64_MAX / 2)
        return false;
    for (size_t i = 0; i < saved->count; i++) {
        if (!s_spec_valid (&saved->specs[i], false))
            return false;
        tasks += saved->specs[i].parallelism;
        bytes += (uint64_t) s_spec_bytes (&saved->specs[i]);
    }
    if (bytes > SHOAL_FRAME_MAX - 65536)
        return false;
    //  Sorted, a name twice is two neighbours; a bulk set has thousands.
    const char **names = s_alloc (saved->count * sizeof *names);
    for (size_t i = 0; i < saved->count; i++)
        names[i] = saved->specs[i].name;
    if (saved->count)
        qsort (names, saved->count, sizeof *names, s_text_compare);
    for (size_t i = 1; i < saved->count; i++)
        if (strcmp (names[i - 1], names[i]) == 0)
            return false;
    return tasks <= SHOAL_TASKS_MAX;
}

static int
s_spec_name_order (const void *spec, const void *name)
{
    return strcmp (((const shoal_jobspec_t *) spec)->name, name);
}

//  The held spec of name, by bisection of the sorted specs.
static const shoal_jobspec_t *
s_find (const shoal_jobspec_t *specs, size_t count, const char *name)
{
    size_t at = shoal_lower_bound (specs, count, sizeof *specs, name, s_spec_name_order);
    return at < count && strcmp (specs[at].name, name) == 0 ? &specs[at] : NULL;
}

static int
s_name_compare (uint64_t term_a, uint64_t version_a, uint64_t term_b, uint64_t version_b)
{
    if (term_a != term_b)
        return term_a < term_b ? -1 : 1;
    return version_a < version_b ? -1 : version_a > version_b;
}

//  ---------------------------------------------------------------------
//  Checks

static int
s_node_index (const shoal_id_t *id)
{
    for (int i = 0; i < NODE_COUNT; i++)
        if (memcmp (id->bytes, s_nodes[i].bytes, SHOAL_ID_SIZE) == 0)
            return i;
    return -1;
}

//  Whether the node leads, as the elector's word makes it: lead_term is
//  the term given with its own id, and 0 means it does not lead.
static bool
s_leads (void)
{
    return s_last.has_leader && s_last.leader == FUZZ_JOBS_SELF && s_last.leader_term != 0;
}

static uint64_t
s_mix (uint64_t digest, uint64_t value)
{
    return (digest ^ value) * 0x100000001b3ull;
}

static uint64_t
s_mix_text (uint64_t digest, const char *text)
{
    for (const char *c = text ? text : ""; *c; c++)
        digest = s_mix (digest, (uint8_t) *c);
    return s_mix (digest, 0x100);
}

//  A command by its length and ends: a bulk set holds megabytes of them,
//  and the specs are digested after every step.
static uint64_t
s_mix_command (uint64_t digest, const char *command)
{
    size_t length = command ? strlen (command) : 0;
    if (length <= 64)
        return s_mix_text (digest, command);
    digest = s_mix (digest, length);
    for (size_t i = 0; i < 32; i++)
        digest = s_mix (s_mix (digest, (uint8_t) command[i]), (uint8_t) command[length - 1 - i]);
    return digest;
}

//  The specs, sorted, unique and valid; returns their tasks and sets
//  *digest to what they hold.
static uint64_t
s_check_specs (const shoal_jobspec_t *specs, size_t count, uint64_t *digest)
{
    uint64_t tasks = 0;
    uint64_t sum = s_mix (0xcbf29ce484222325ull, count);
    FUZZ_REQUIRE (count == 0 || specs, "%zu specs at NULL", count);
    for (size_t i = 0; i < count; i++) {
        const shoal_jobspec_t *spec = &specs[i];
        FUZZ_REQUIRE (spec->name && spec->command, "spec %zu without a name or a command", i);
        FUZZ_REQUIRE (s_spec_valid (spec, false),
                      "spec %zu (%s, parallelism %" PRIu32 ") is no job", i, spec->name,
                      spec->parallelism);
        FUZZ_REQUIRE (i == 0 || strcmp (specs[i - 1].name, spec->name) < 0,
                      "specs %zu and %zu (%s) out of order or repeated", i - 1, i, spec->name);
        tasks += spec->parallelism;
        sum = s_mix_text (sum, spec->name);
        sum = s_mix (sum, spec->parallelism);
        sum = s_mix (sum, spec->stateful);
        sum = s_mix (sum, spec->fenced);
        sum = s_mix (sum, spec->weight);
        sum = s_mix (sum, spec->require_count);
        for (uint32_t l = 0; l < spec->require_count; l++) {
            sum = s_mix_text (sum, spec->require[l].key);
            sum = s_mix_text (sum, spec->require[l].value);
        }
        sum = s_mix_command (sum, spec->command);
    }
    FUZZ_REQUIRE (tasks <= SHOAL_TASKS_MAX, "%" PRIu64 " tasks held", tasks);
    *digest = sum;
    return tasks;
}

//  The task list: exactly "job/index" for every held job and index below
//  its parallelism, sorted by id, each with its job's fields. A list of
//  tens of thousands of tasks is only walked again when it was made again
//  or the specs changed: walking it after every step of a long input
//  would take seconds.
static void
s_check_tasks (const shoal_jobs_t *core, const shoal_jobspec_t *specs, size_t count, uint64_t total,
               bool changed)
{
    const shoal_assign_task_t *tasks;
    size_t listed = shoal_jobs_tasks (core, &tasks);
    FUZZ_REQUIRE (listed == total, "%zu tasks listed, the specs have %" PRIu64, listed, total);
    if (!changed && tasks == s_last.tasks && listed == s_last.task_count)
        return;
    s_last.tasks = tasks;
    s_last.task_count = listed;
    for (size_t i = 0; i < listed; i++) {
        const shoal_assign_task_t *task = &tasks[i];
        FUZZ_REQUIRE (task->id && task->job, "task %zu without an id or a job", i);
        FUZZ_REQUIRE (strlen (task->id) <= SHOAL_TASK_MAX, "task %zu: an id of %zu bytes", i,
                      strlen (task->id));
        FUZZ_REQUIRE (i == 0 || strcmp (tasks[i - 1].id, task->id) < 0,
                      "tasks %zu and %zu (%s) out of order or repeated", i - 1, i, task->id);
        const shoal_jobspec_t *spec = s_find (specs, count, task->job);
        FUZZ_REQUIRE (spec, "task %s of job %s, which is not held", task->id, task->job);
        size_t length = strlen (spec->name);
        const char *digits = task->id + length + 1;
        FUZZ_REQUIRE (strncmp (task->id, spec->name, length) == 0 && task->id[length] == '/',
                      "task %s is not of its job %s", task->id, spec->name);
        uint64_t index = 0;
        FUZZ_REQUIRE (*digits && (digits[0] != '0' || !digits[1]),
                      "task %s: no index, or one with a leading zero", task->id);
        for (const char *c = digits; *c; c++) {
            FUZZ_REQUIRE (*c >= '0' && *c <= '9' && index <= SHOAL_PARALLELISM_MAX,
                          "task %s: no index", task->id);
            index = index * 10 + (uint64_t) (*c - '0');
        }
        FUZZ_REQUIRE (index < spec->parallelism, "task %s of a job of parallelism %" PRIu32,
                      task->id, spec->parallelism);
        FUZZ_REQUIRE (task->stateful == spec->stateful && task->fenced == spec->fenced &&
                          task->weight == spec->weight &&
                          task->require_count == spec->require_count,
                      "task %s differs from its job", task->id);
    }
}

//  An answer, local or to a peer: a code of the protocol, a reason, at
//  most the one job, and nothing of what only the control endpoint fills.
static void
s_check_rep (const shoal_control_rep_t *rep, const char *what)
{
    FUZZ_REQUIRE (rep->code <= SHOAL_REPLY_FAILED, "%s with code %u", what, rep->code);
    FUZZ_REQUIRE (rep->reason && strnlen (rep->reason, SHOAL_REASON_MAX + 1) <= SHOAL_REASON_MAX,
                  "%s (code %u) without a reason, or one too long", what, rep->code);
    FUZZ_REQUIRE (rep->job_count <= 1 && (rep->job_count == 0 || (rep->jobs && rep->jobs->name)),
                  "%s with %" PRIu32 " jobs", what, rep->job_count);
    FUZZ_REQUIRE (rep->member_count == 0 && rep->task_count == 0, "%s with members or tasks", what);
}

static void
s_check_replies (const shoal_jobs_t *core)
{
    const shoal_jobs_reply_t *replies;
    size_t count = shoal_jobs_replies (core, &replies);
    for (size_t i = 0; i < count; i++) {
        uint64_t ref = replies[i].ref;
        FUZZ_REQUIRE (ref >= 1 && ref <= s_last.refs, "an answer to ref %" PRIu64 ", never given",
                      ref);
        FUZZ_REQUIRE (s_refs[ref] == REF_OPEN, "ref %" PRIu64 " answered, though %s", ref,
                      s_refs[ref] == REF_ANSWERED ? "answered before" : "the request was refused");
        s_refs[ref] = REF_ANSWERED;
        s_check_rep (&replies[i].rep, "a local answer");
        FUZZ_REQUIRE (replies[i].rep.id == 0, "a local answer with id %" PRIu32, replies[i].rep.id);
    }
}

static void
s_check_remote_answer (int to, const shoal_control_rep_t *rep)
{
    s_check_rep (rep, "a CONTROL-REP");
    for (size_t i = 0; i < s_remote.count; i++) {
        s_remote_t *remote = &s_remote.items[i];
        if (remote->from == to && remote->id == rep->id && !remote->answered) {
            remote->answered = true;
            return;
        }
    }
    FUZZ_REQUIRE (false,
                  "a CONTROL-REP to node %d for request %" PRIu32
                  ", which it did not forward or which was answered",
                  to, rep->id);
}

//  Every message of this step's outbox; counts a leader's snapshots
//  (SYNC-REPLY) and the requests forwarded (CONTROL-REQ), which the
//  statistics count too.
static void
s_check_outbox (const shoal_jobs_t *core, uint64_t term, uint64_t version, size_t count,
                const shoal_jobspec_t *specs, size_t *snapshots, size_t *forwards)
{
    const shoal_jobs_send_t *sends;
    size_t sent = shoal_jobs_outbox (core, &sends);
    bool ready = shoal_jobs_ready (core);
    *snapshots = *forwards = 0;
    for (size_t i = 0; i < sent; i++) {
        const shoal_msg_t *msg = &sends[i].msg;
        const char *type = shoal_msg_type_name (msg->type);
        FUZZ_REQUIRE (type, "a message of type %d", msg->type);
        int to = s_node_index (&sends[i].to);
        FUZZ_REQUIRE (to >= 0, "a %s to a node nobody named (0x%02x...)", type,
                      sends[i].to.bytes[0]);
        FUZZ_REQUIRE (to != FUZZ_JOBS_SELF, "a %s to this node", type);
        fuzz_require_encodes (msg);
        switch (msg->type) {
        case SHOAL_MSG_JOB: {
            const shoal_job_t *job = &msg->u.job;
            FUZZ_REQUIRE (ready, "a JOB from a node that is no ready leader");
            FUZZ_REQUIRE (s_last.live & 1u << to, "a JOB to node %d, which is not live", to);
            FUZZ_REQUIRE (
                job->term == term && job->version <= version &&
                    s_name_compare (job->term, job->version, s_last.term, s_last.version) > 0,
                "a JOB (%" PRIu64 ", %" PRIu64 ") with the specs at (%" PRIu64 ", %" PRIu64
                "), before at (%" PRIu64 ", %" PRIu64 ")",
                job->term, job->version, term, version, s_last.term, s_last.version);
            FUZZ_REQUIRE (s_spec_valid (&job->spec, true), "a JOB of %s, which is no job",
                          job->spec.name ? job->spec.name : "(null)");
            break;
        }
        case SHOAL_MSG_SYNC_REPLY: {
            const shoal_sync_reply_t *reply = &msg->u.sync_reply;
            FUZZ_REQUIRE (reply->parts == SHOAL_SYNC_JOBS && reply->member_count == 0,
                          "a SYNC-REPLY of parts 0x%x", reply->parts);
            FUZZ_REQUIRE (reply->jobs_term == term && reply->jobs_version == version &&
                              reply->job_count == count && (count == 0 || reply->jobs == specs),
                          "a SYNC-REPLY of %" PRIu32 " specs (%" PRIu64 ", %" PRIu64
                          "), %zu held (%" PRIu64 ", %" PRIu64 ")",
                          reply->job_count, reply->jobs_term, reply->jobs_version, count, term,
                          version);
            if (s_leads ()) {
                FUZZ_REQUIRE (ready && (s_last.live & 1u << to),
                              "a leader's SYNC-REPLY to node %d (%s, %s)", to,
                              ready ? "ready" : "not ready",
                              s_last.live & 1u << to ? "live" : "not live");
                (*snapshots)++;
            } else
                FUZZ_REQUIRE (s_last.has_leader && to == s_last.leader,
                              "a follower's SYNC-REPLY to node %d, not its leader", to);
            break;
        }
        case SHOAL_MSG_JOB_ACK:
            FUZZ_REQUIRE (!s_leads () && s_last.has_leader && to == s_last.leader,
                          "a JOB-ACK to node %d, not the leader followed", to);
            FUZZ_REQUIRE (msg->u.job_ack.term == term && msg->u.job_ack.version == version,
                          "a JOB-ACK of (%" PRIu64 ", %" PRIu64 "), the specs are (%" PRIu64
                          ", %" PRIu64 ")",
                          msg->u.job_ack.term, msg->u.job_ack.version, term, version);
            break;
        case SHOAL_MSG_SYNC_REQ:
            FUZZ_REQUIRE (s_leads () && s_last.acting && !ready,
                          "a SYNC-REQ from a node that does not catch up");
            FUZZ_REQUIRE (s_last.voters & 1u << to, "a SYNC-REQ to node %d, no voter", to);
            FUZZ_REQUIRE (msg->u.sync_req.want == SHOAL_SYNC_JOBS, "a SYNC-REQ for 0x%x",
                          msg->u.sync_req.want);
            break;
        case SHOAL_MSG_CONTROL_REQ: {
            const shoal_control_req_t *req = &msg->u.control_req;
            FUZZ_REQUIRE (!s_leads () && s_last.has_leader && to == s_last.leader,
                          "a CONTROL-REQ to node %d, not the leader followed", to);
            FUZZ_REQUIRE (req->op == SHOAL_OP_SUBMIT || req->op == SHOAL_OP_RESCALE ||
                              req->op == SHOAL_OP_REMOVE,
                          "a CONTROL-REQ of op %u", req->op);
            FUZZ_REQUIRE (req->id > s_last.forward_id,
                          "a CONTROL-REQ with id %" PRIu32 " after %" PRIu32, req->id,
                          s_last.forward_id);
            s_last.forward_id = req->id;
            (*forwards)++;
            break;
        }
        case SHOAL_MSG_CONTROL_REP:
            s_check_remote_answer (to, &msg->u.control_rep);
            break;
        default:
            FUZZ_REQUIRE (false, "a %s", type);
        }
    }
}

static void
s_check_waiting (const shoal_jobs_t *core, const shoal_jobspec_t *specs, size_t count)
{
    const shoal_jobs_wait_t *waits;
    size_t waiting = shoal_jobs_waiting (core, &waits);
    FUZZ_REQUIRE (waiting == 0 || s_leads (), "%zu rescales wait at a node that does not lead",
                  waiting);
    for (size_t i = 0; i < waiting; i++) {
        FUZZ_REQUIRE (waits[i].job, "rescale %zu waits for no job", i);
        const shoal_jobspec_t *spec = s_find (specs, count, waits[i].job);
        FUZZ_REQUIRE (spec, "a rescale of %s waits, which is not held", waits[i].job);
        FUZZ_REQUIRE (waits[i].parallelism > spec->parallelism &&
                          waits[i].parallelism <= SHOAL_PARALLELISM_MAX,
                      "a rescale of %s to %" PRIu32 " waits, at parallelism %" PRIu32, waits[i].job,
                      waits[i].parallelism, spec->parallelism);
        for (size_t j = 0; j < i; j++)
            FUZZ_REQUIRE (strcmp (waits[i].job, waits[j].job) != 0, "two rescales of %s wait",
                          waits[i].job);
    }
}

//  What a step was, for the checks that depend on it.
typedef struct {
    bool leads_anew; //  a LEADER step naming this node
    bool receive;    //  a message, taken (rc 0) or dropped
    int rc;
} s_step_t;

//  The name of the specs never goes back. A leader renames the set it
//  catches up to with its own term, so it can only go back when the
//  elector gave a term below one it gave before (which it promises never
//  to do), or when a peer reported specs named above every term given (a
//  peer no honest node can be): then only where a catch-up may end.
static void
s_check_name (uint64_t term, uint64_t version, bool ready, const s_step_t *step)
{
    if (s_name_compare (term, version, s_last.term, s_last.version) >= 0)
        return;
    bool catch_up = step->leads_anew || (ready && !s_last.ready);
    FUZZ_REQUIRE (catch_up && (s_last.terms_back || s_last.wild_term),
                  "the specs' name went back from (%" PRIu64 ", %" PRIu64 ") to (%" PRIu64
                  ", %" PRIu64 ")",
                  s_last.term, s_last.version, term, version);
}

static void
s_check_stats (const shoal_jobs_t *core, const s_step_t *step, bool ready, uint64_t version,
               bool renamed, size_t snapshots, size_t forwards)
{
    shoal_jobs_stats_t stats;
    shoal_jobs_stats (core, &stats);
    const shoal_jobs_stats_t *last = &s_last.stats;
    FUZZ_REQUIRE (stats.changes >= last->changes && stats.applied >= last->applied &&
                      stats.snapshots >= last->snapshots && stats.forwarded >= last->forwarded &&
                      stats.refused >= last->refused && stats.dropped >= last->dropped,
                  "a statistic went back");
    FUZZ_REQUIRE (stats.dropped - last->dropped == (step->receive && step->rc != 0),
                  "dropped went from %" PRIu64 " to %" PRIu64 " (receive returned %d)",
                  last->dropped, stats.dropped, step->receive ? step->rc : 0);
    FUZZ_REQUIRE (stats.snapshots - last->snapshots == snapshots,
                  "snapshots went from %" PRIu64 " to %" PRIu64 ", %zu sent", last->snapshots,
                  stats.snapshots, snapshots);
    FUZZ_REQUIRE (stats.forwarded - last->forwarded == forwards,
                  "forwarded went from %" PRIu64 " to %" PRIu64 ", %zu sent", last->forwarded,
                  stats.forwarded, forwards);
    //  A ready leader counts each version it writes; a follower each
    //  delta or snapshot it takes, which are what rename its specs.
    if (!step->leads_anew && s_last.ready && ready)
        FUZZ_REQUIRE (stats.changes - last->changes == version - s_last.version,
                      "changes went from %" PRIu64 " to %" PRIu64 ", the version from %" PRIu64
                      " to %" PRIu64,
                      last->changes, stats.changes, s_last.version, version);
    if (step->receive && !s_leads ())
        FUZZ_REQUIRE (stats.applied - last->applied == renamed,
                      "applied went from %" PRIu64 " to %" PRIu64 " as the specs were %s",
                      last->applied, stats.applied, renamed ? "renamed" : "kept");
    s_last.stats = stats;
}

static void
s_check (const shoal_jobs_t *core, uint64_t now, const s_step_t *step)
{
    //  The core's own invariants, after every input (rebalance/jobs.h).
    const char *broken = "";
    FUZZ_REQUIRE (shoal_jobs_check (core, &broken) == 0, "%s", broken);
    const shoal_jobspec_t *specs;
    size_t count = shoal_jobs_specs (core, &specs);
    uint64_t digest;
    uint64_t tasks = s_check_specs (specs, count, &digest);
    uint64_t term, version;
    shoal_jobs_name (core, &term, &version);
    bool renamed = term != s_last.term || version != s_last.version;
    s_check_tasks (core, specs, count, tasks,
                   renamed || count != s_last.count || digest != s_last.digest);

    shoal_jobs_saved_t saved;
    if (shoal_jobs_saved (core, &saved)) {
        FUZZ_REQUIRE (saved.term == term && saved.version == version && saved.count == count &&
                          (count == 0 || saved.specs == specs),
                      "saved is not the specs held");
        //  Renaming to the same name with other specs takes a peer's
        //  nonsense or a term going back (s_check_name).
        FUZZ_REQUIRE (renamed || s_last.terms_back || s_last.wild_term,
                      "saved, with the name (%" PRIu64 ", %" PRIu64 ") unchanged", term, version);
    } else
        FUZZ_REQUIRE (!renamed && count == s_last.count && digest == s_last.digest,
                      "the specs changed from (%" PRIu64 ", %" PRIu64 ") to (%" PRIu64 ", %" PRIu64
                      "), %zu to %zu jobs, and saved says nothing",
                      s_last.term, s_last.version, term, version, s_last.count, count);

    size_t snapshots, forwards;
    s_check_outbox (core, term, version, count, specs, &snapshots, &forwards);
    s_check_replies (core);
    s_check_waiting (core, specs, count);

    bool ready = shoal_jobs_ready (core);
    FUZZ_REQUIRE (!ready || (s_leads () && s_last.acting && term == s_last.leader_term),
                  "ready, with specs of term %" PRIu64 ", as %s", term,
                  !s_leads ()      ? "no leader"
                  : !s_last.acting ? "a leader that does not act"
                                   : "a leader of another term");
    s_check_name (term, version, ready, step);
    s_check_stats (core, step, ready, version, renamed, snapshots, forwards);

    uint64_t next = shoal_jobs_next (core);
    FUZZ_REQUIRE (next > now, "next is %" PRIu64 ", not after now (%" PRIu64 ")", next, now);

    s_last.term = term;
    s_last.version = version;
    s_last.count = count;
    s_last.digest = digest;
    s_last.ready = ready;
}

//  ---------------------------------------------------------------------
//  Steps

static const s_step_t s_plain;

//  Ticks at now, and again while next is not later, as a shell's timer does.
static void
s_tick (shoal_jobs_t *core, uint64_t now)
{
    for (int ticks = 1;; ticks++) {
        shoal_jobs_tick (core, now);
        s_check (core, now, &s_plain);
        uint64_t next = shoal_jobs_next (core);
        if (next > now)
            return;
        FUZZ_REQUIRE (ticks < TICKS_MAX,
                      "a busy loop: after %d ticks at %" PRIu64 ", next is still %" PRIu64, ticks,
                      now, next);
    }
}

//  Hands msg from the node of index from in, and checks.
static void
s_receive (shoal_jobs_t *core, uint64_t now, int from, const shoal_msg_t *msg)
{
    if (msg->type == SHOAL_MSG_SYNC_REPLY && (msg->u.sync_reply.parts & SHOAL_SYNC_JOBS) &&
        msg->u.sync_reply.jobs_term > s_last.term_max)
        s_last.wild_term = true;
    bool request = msg->type == SHOAL_MSG_CONTROL_REQ;
    uint32_t id = request ? msg->u.control_req.id : 0;
    s_step_t step = { .receive = true };
    step.rc = shoal_jobs_receive (core, now, &s_nodes[from], msg);
    FUZZ_REQUIRE (step.rc == 0 || step.rc == -1, "receive returned %d", step.rc);
    if (request && step.rc == 0) {
        //  At most one per byte of input, as a step takes at least one.
        s_remote.items[s_remote.count++] = (s_remote_t){ .from = from, .id = id };
    }
    s_check (core, now, &step);
}

//  Decodes size bytes from the node of index from as a shell would, into
//  an arena of their own, freed as soon as the node took the message.
static void
s_deliver (shoal_jobs_t *core, uint64_t now, int from, const uint8_t *data, size_t size)
{
    shoal_arena_t arena;
    FUZZ_REQUIRE (shoal_arena_init (&arena, SHOAL_DECODE_ARENA (size)) == 0,
                  "no memory for an arena");
    shoal_msg_t msg;
    shoal_wire_error_t err;
    if (shoal_msg_decode (data, size, SHOAL_PURPOSE_FRAME, &msg, &arena, &err) == 0)
        s_receive (core, now, from, &msg);
    shoal_arena_release (&arena);
}

//  A message built from operands (fuzz.h), delivered as its encoding: one
//  the encoder refuses could not arrive.
static void
s_crafted (shoal_jobs_t *core, uint64_t now, int from, const uint8_t *data, size_t size, size_t *at)
{
    static uint8_t buffer[SHOAL_FRAME_MAX];
    uint8_t selector = fuzz_operand (data, size, at);
    bool flag = (selector & FUZZ_JOBS_CRAFT_FLAG) != 0;
    const shoal_jobspec_t *specs;
    size_t count = shoal_jobs_specs (core, &specs);
    uint64_t term, version;
    shoal_jobs_name (core, &term, &version);
    shoal_msg_t msg;
    memset (&msg, 0, sizeof msg);
    switch (selector & 7) {
    case FUZZ_JOBS_CRAFT_JOB:
        msg.type = SHOAL_MSG_JOB;
        msg.u.job.term = fuzz_number (fuzz_operand (data, size, at), s_last.leader_term);
        msg.u.job.version = fuzz_number (fuzz_operand (data, size, at), version);
        s_read_spec (core, data, size, at, &msg.u.job.spec);
        break;
    case FUZZ_JOBS_CRAFT_ACK:
        msg.type = SHOAL_MSG_JOB_ACK;
        msg.u.job_ack.term = fuzz_number (fuzz_operand (data, size, at), term);
        msg.u.job_ack.version = fuzz_number (fuzz_operand (data, size, at), version);
        break;
    case FUZZ_JOBS_CRAFT_SYNC_REQ:
        msg.type = SHOAL_MSG_SYNC_REQ;
        msg.u.sync_req.want = fuzz_operand (data, size, at) & 7;
        msg.u.sync_req.bucket_count = 1;
        break;
    case FUZZ_JOBS_CRAFT_SYNC_REPLY:
    case FUZZ_JOBS_CRAFT_SNAPSHOT: {
        shoal_sync_reply_t *reply = &msg.u.sync_reply;
        msg.type = SHOAL_MSG_SYNC_REPLY;
        reply->parts = flag ? SHOAL_SYNC_MEMBERS : SHOAL_SYNC_JOBS;
        reply->jobs_term = fuzz_number (fuzz_operand (data, size, at), s_last.leader_term);
        reply->jobs_version = fuzz_number (fuzz_operand (data, size, at), version);
        if ((selector & 7) == FUZZ_JOBS_CRAFT_SNAPSHOT) {
            reply->parts = SHOAL_SYNC_JOBS;
            reply->job_count = (uint32_t) count;
            reply->jobs = (shoal_jobspec_t *) specs; //  only encoded, before the input
            break;
        }
        reply->job_count = fuzz_operand (data, size, at) & 7;
        reply->jobs = s_alloc (reply->job_count * sizeof *reply->jobs);
        for (uint32_t i = 0; i < reply->job_count; i++)
            s_read_spec (core, data, size, at, &reply->jobs[i]);
        break;
    }
    case FUZZ_JOBS_CRAFT_CONTROL_REQ: {
        shoal_control_req_t *req = &msg.u.control_req;
        msg.type = SHOAL_MSG_CONTROL_REQ;
        req->id = fuzz_operand (data, size, at);
        req->op = fuzz_operand (data, size, at) % 7;
        req->job = s_read_name (core, data, size, at);
        req->parallelism = s_read_count (fuzz_operand (data, size, at));
        req->min = s_read_count (fuzz_operand (data, size, at));
        req->timeout_ms = s_read_timeout (fuzz_operand (data, size, at));
        if (flag) {
            req->spec = s_alloc (sizeof *req->spec);
            s_read_spec (core, data, size, at, req->spec);
        }
        break;
    }
    case FUZZ_JOBS_CRAFT_CONTROL_REP: {
        shoal_control_rep_t *rep = &msg.u.control_rep;
        msg.type = SHOAL_MSG_CONTROL_REP;
        uint64_t id = fuzz_number (fuzz_operand (data, size, at), s_last.forward_id);
        rep->id = id > UINT32_MAX ? UINT32_MAX : (uint32_t) id;
        rep->code = fuzz_operand (data, size, at) % 7;
        rep->reason = "crafted";
        rep->leader = s_nodes[from];
        rep->term = fuzz_number (fuzz_operand (data, size, at), s_last.leader_term);
        rep->version = fuzz_number (fuzz_operand (data, size, at), version);
        if (flag) {
            rep->job_count = 1;
            rep->jobs = s_alloc (sizeof *rep->jobs);
            s_read_spec (core, data, size, at, rep->jobs);
        }
        break;
    }
    default:
        msg.type = SHOAL_MSG_ELECTION;
        msg.u.election.term = fuzz_number (fuzz_operand (data, size, at), s_last.leader_term);
        break;
    }
    shoal_wire_error_t err;
    long encoded = shoal_msg_encode (&msg, buffer, sizeof buffer, &err);
    if (encoded > 0)
        s_deliver (core, now, from, buffer, (size_t) encoded);
}

static void
s_request (shoal_jobs_t *core, uint64_t now, uint8_t header, const uint8_t *data, size_t size,
           size_t *at)
{
    const shoal_jobspec_t *specs;
    size_t count = shoal_jobs_specs (core, &specs);
    shoal_control_req_t *req = s_alloc (sizeof *req);
    int source = (header >> 5) & 3;
    switch ((header >> 3) & 3) {
    case FUZZ_JOBS_SUBMIT:
        req->op = SHOAL_OP_SUBMIT;
        if (source == FUZZ_JOBS_NO_SPEC)
            break;
        req->spec = s_alloc (sizeof *req->spec);
        if (source == FUZZ_JOBS_SPEC || count == 0)
            s_read_spec (core, data, size, at, req->spec);
        else {
            s_copy_spec (req->spec, &specs[fuzz_operand (data, size, at) % count]);
            if (source == FUZZ_JOBS_CHANGED)
                req->spec->command = s_copy ("changed");
        }
        break;
    case FUZZ_JOBS_RESCALE:
        req->op = SHOAL_OP_RESCALE;
        req->job = s_read_name (core, data, size, at);
        req->parallelism = s_read_count (fuzz_operand (data, size, at));
        req->min = s_read_count (fuzz_operand (data, size, at));
        req->timeout_ms = s_read_timeout (fuzz_operand (data, size, at));
        break;
    case FUZZ_JOBS_REMOVE:
        req->op = SHOAL_OP_REMOVE;
        req->job = s_read_name (core, data, size, at);
        break;
    default:
        req->op = fuzz_operand (data, size, at);
        req->job = s_read_name (core, data, size, at);
        break;
    }
    bool known =
        req->op == SHOAL_OP_SUBMIT || req->op == SHOAL_OP_RESCALE || req->op == SHOAL_OP_REMOVE;
    uint64_t ref = ++s_last.refs;
    int rc = shoal_jobs_request (core, now, ref, req);
    FUZZ_REQUIRE (rc == (known ? 0 : -1), "request of op %u returned %d", req->op, rc);
    if (rc != 0) {
        //  Not an input: the outputs are still the last input's.
        s_refs[ref] = REF_REFUSED;
        return;
    }
    s_check (core, now, &s_plain);
}

static void
s_capacity (shoal_jobs_t *core, uint64_t now, const uint8_t *data, size_t size, size_t *at)
{
    uint8_t which = fuzz_operand (data, size, at);
    const shoal_jobs_wait_t *waits;
    size_t waiting = shoal_jobs_waiting (core, &waits);
    const char *job = which < 0xc0 && waiting ? s_copy (waits[which % waiting].job)
                                              : s_read_name_from (core, which, data, size, at);
    uint32_t capacity = s_read_count (fuzz_operand (data, size, at));
    //  A job names a job; NULL is no name a caller could mean.
    shoal_jobs_capacity (core, now, job ? job : "", capacity);
    s_check (core, now, &s_plain);
}

//  The saved set of a restart (fuzz.h), in storage freed with the pool.
static void
s_read_saved (uint8_t setup, const uint8_t *data, size_t size, size_t *at,
              shoal_jobs_saved_t *saved)
{
    bool bulk = (setup & FUZZ_JOBS_BULK) && size - *at >= 2 &&
                memcmp (data + *at, FUZZ_JOBS_BULK_MARK, 2) == 0;
    if (bulk)
        *at += 2;
    saved->term = fuzz_number (fuzz_operand (data, size, at), 0);
    saved->version = fuzz_number (fuzz_operand (data, size, at), 0);
    if (!bulk) {
        saved->count = fuzz_operand (data, size, at) & 7;
        shoal_jobspec_t *specs = s_alloc (saved->count * sizeof *specs);
        for (size_t i = 0; i < saved->count; i++)
            s_read_spec (NULL, data, size, at, &specs[i]);
        saved->specs = specs;
        return;
    }
    size_t high = fuzz_operand (data, size, at);
    saved->count = high << 8 | fuzz_operand (data, size, at);
    if (saved->count > BULK_MAX)
        saved->count = BULK_MAX;
    uint32_t parallelism = s_read_count (fuzz_operand (data, size, at));
    const char *command = s_read_command (fuzz_operand (data, size, at), 4);
    uint32_t label_count = fuzz_operand (data, size, at) & 31;
    shoal_label_t *labels = s_alloc (label_count * sizeof *labels);
    for (uint32_t i = 0; i < label_count; i++)
        labels[i] = s_read_label ((uint8_t) (i << 3 | FUZZ_JOBS_LABEL_UNIQUE));
    shoal_jobspec_t *specs = s_alloc (saved->count * sizeof *specs);
    for (size_t i = 0; i < saved->count; i++) {
        char name[16];
        snprintf (name, sizeof name, "bulk-%04zu", i);
        specs[i] = (shoal_jobspec_t){ .name = s_copy (name),
                                      .parallelism = parallelism,
                                      .weight = 1,
                                      .require_count = label_count,
                                      .require = label_count ? labels : NULL,
                                      .command = command };
    }
    saved->specs = specs;
}

//  A node of config, restarted from a saved set when setup asks: the node
//  must refuse exactly the sets that break the rules, and hold the others
//  as they were saved.
static shoal_jobs_t *
s_start (const shoal_jobs_config_t *config, uint8_t setup, const uint8_t *data, size_t size,
         size_t *at, uint64_t now)
{
    if (setup & FUZZ_JOBS_RESTART) {
        shoal_jobs_saved_t saved;
        s_read_saved (setup, data, size, at, &saved);
        bool valid = s_saved_valid (&saved);
        shoal_jobs_t *core = shoal_jobs_new (config, &s_nodes[FUZZ_JOBS_SELF], &saved, now);
        FUZZ_REQUIRE (!core == !valid, "%s saved set of %zu specs %s", valid ? "a" : "a broken",
                      saved.count, core ? "taken" : "refused");
        if (core) {
            const shoal_jobspec_t *specs;
            size_t count = shoal_jobs_specs (core, &specs);
            uint64_t term, version;
            shoal_jobs_name (core, &term, &version);
            FUZZ_REQUIRE (count == saved.count && term == saved.term && version == saved.version,
                          "restored %zu specs (%" PRIu64 ", %" PRIu64 ") of %zu saved", count, term,
                          version, saved.count);
            for (size_t i = 0; i < saved.count; i++) {
                const shoal_jobspec_t *spec = s_find (specs, count, saved.specs[i].name);
                FUZZ_REQUIRE (spec && s_spec_equal (spec, &saved.specs[i]),
                              "saved spec %s restored otherwise", saved.specs[i].name);
            }
            s_last.term_max = saved.term;
            return core;
        }
    }
    shoal_jobs_t *core = shoal_jobs_new (config, &s_nodes[FUZZ_JOBS_SELF], NULL, now);
    FUZZ_REQUIRE (core, "no node: %s", shoal_jobs_config_check (config));
    return core;
}

static void
s_leader (shoal_jobs_t *core, uint64_t now, uint8_t header, int node, const uint8_t *data,
          size_t size, size_t *at)
{
    bool nobody = (header & FUZZ_JOBS_NOBODY) != 0;
    uint64_t term = fuzz_number (fuzz_operand (data, size, at), s_last.term_max);
    //  The elector proclaims this node from term 1 on (a peer it follows
    //  may have term 0), and jobs.c takes a lead term of 0 for no lead.
    if (!nobody && node == FUZZ_JOBS_SELF && term == 0)
        term = 1;
    bool acting = (header & FUZZ_JOBS_ACTING) != 0;
    shoal_jobs_leader (core, now, nobody ? NULL : &s_nodes[node], term, acting);
    s_last.has_leader = !nobody;
    if (!nobody) {
        if (term < s_last.term_max)
            s_last.terms_back = true;
        else
            s_last.term_max = term;
        s_last.leader = node;
        s_last.leader_term = term;
    }
    s_last.acting = !nobody && node == FUZZ_JOBS_SELF && acting;
    s_step_t step = { .leads_anew = !nobody && node == FUZZ_JOBS_SELF };
    s_check (core, now, &step);
}

static void
s_member (shoal_jobs_t *core, uint64_t now, uint8_t header, int node, const uint8_t *data,
          size_t size, size_t *at)
{
    if (header & FUZZ_JOBS_VOTERS) {
        uint8_t mask = fuzz_operand (data, size, at);
        shoal_id_t voters[FUZZ_JOBS_NODES];
        size_t count = 0;
        for (int i = 0; i < FUZZ_JOBS_NODES; i++)
            if (mask & 1u << i)
                voters[count++] = s_nodes[i];
        FUZZ_REQUIRE (shoal_jobs_voters (core, now, voters, count) == 0, "voters refused");
        s_last.voters = mask;
    } else {
        bool live = (header & FUZZ_JOBS_LIVE) != 0;
        FUZZ_REQUIRE (shoal_jobs_member (core, now, &s_nodes[node], live) == 0,
                      "member refused node %d", node);
        if (node != FUZZ_JOBS_SELF)
            s_last.live =
                (uint16_t) (live ? s_last.live | 1u << node : s_last.live & ~(1u << node));
    }
    s_check (core, now, &s_plain);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    uint8_t setup = data[0];
    shoal_jobs_config_t config;
    if (setup & FUZZ_JOBS_LAN)
        shoal_jobs_config_lan (&config);
    else
        shoal_jobs_config_loopback (&config);
    config.quorum = !(setup & FUZZ_JOBS_AVAILABLE);
    static const uint32_t pending[4] = { 256, 1, 2, 3 };
    config.max_pending = pending[(setup >> FUZZ_JOBS_PENDING_SHIFT) & 3];
    if (setup & FUZZ_JOBS_SHORT_WAIT)
        config.max_timeout_ms = 1000;
    if (setup & FUZZ_JOBS_FAST)
        config.retry_ms = config.forward_ms = 1;

    memset (&s_last, 0, sizeof s_last);
    //  Each step takes at least one byte: no more refs nor forwarded
    //  requests than bytes.
    s_refs = calloc (size + 1, sizeof *s_refs);
    s_remote.items = calloc (size + 1, sizeof *s_remote.items);
    s_remote.count = 0;
    FUZZ_REQUIRE (s_refs && s_remote.items, "no memory for %zu steps", size);

    uint64_t now = 1000;
    size_t at = 1;
    shoal_jobs_t *core = s_start (&config, setup, data, size, &at, now);
    s_pool_drain ();
    //  What the node starts from is no change.
    const shoal_jobspec_t *specs;
    s_last.count = shoal_jobs_specs (core, &specs);
    s_check_specs (specs, s_last.count, &s_last.digest);
    shoal_jobs_name (core, &s_last.term, &s_last.version);
    s_check (core, now, &s_plain);

    while (at < size) {
        s_pool_drain ();
        uint8_t header = data[at++];
        int step = header & 7;
        int node = (header >> 3) & 7;
        int sender = node == FUZZ_JOBS_SELF ? NODE_OTHER : node;
        switch (step) {
        case FUZZ_JOBS_TICK:
        case FUZZ_JOBS_NEXT:
            now = fuzz_step_time (now, header, step == FUZZ_JOBS_NEXT, shoal_jobs_next (core));
            s_tick (core, now);
            break;
        case FUZZ_JOBS_LEADER:
            s_leader (core, now, header, node, data, size, &at);
            break;
        case FUZZ_JOBS_MEMBER:
            s_member (core, now, header, node, data, size, &at);
            break;
        case FUZZ_JOBS_MESSAGE: {
            if (size - at < 2) {
                at = size;
                break;
            }
            size_t length = (size_t) data[at] << 8 | data[at + 1];
            at += 2;
            if (length > size - at)
                length = size - at;
            s_deliver (core, now, sender, data + at, length);
            at += length;
            break;
        }
        case FUZZ_JOBS_CRAFTED:
            s_crafted (core, now, sender, data, size, &at);
            break;
        case FUZZ_JOBS_REQUEST:
            s_request (core, now, header, data, size, &at);
            break;
        default:
            s_capacity (core, now, data, size, &at);
            break;
        }
    }
    shoal_jobs_destroy (&core);
    s_pool_drain ();
    free (s_pool.items);
    s_pool.items = NULL;
    s_pool.capacity = 0;
    free (s_refs);
    s_refs = NULL;
    free (s_remote.items);
    s_remote.items = NULL;
    return 0;
}

/*  rebalance/jobs.c: the job specs as replicated cluster state, of jobs.h.
    docs/jobs.md describes the protocol.

    Every node holds a set of specs with its name (term, version). The
    leader also keeps, per peer (a live member or a voter), the name the
    peer said it holds and the name it will hold once it applied what was
    sent to it; the requests it works on; and, while it catches up, the
    greatest set a voter reported. A node that does not lead keeps the
    requests it forwarded. Messages and answers are built into owned
    storage that lives until the next input.
*/

#include "rebalance/jobs.h"
#include "wire/check.h"
#include "wire/ids.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//  ---------------------------------------------------------------------
//  Specs and sets of specs

//  Versions stop here, far below where they would wrap; a saved set or a
//  message above it is refused.
#define S_VERSION_MAX (UINT64_MAX / 2)
//  A whole set must fit one SYNC-REPLY frame, with room for its envelope
//  and the reply's other fields.
#define S_SET_BYTES_MAX (SHOAL_FRAME_MAX - 65536)

typedef struct {
    uint64_t term;
    uint64_t version;
    shoal_jobspec_t *specs; //  sorted by name; strings owned
    size_t count;
    uint64_t bytes; //  the specs' encoded size
} s_set_t;

static int
s_name_compare (uint64_t term_a, uint64_t version_a, uint64_t term_b, uint64_t version_b)
{
    if (term_a != term_b)
        return term_a < term_b ? -1 : 1;
    return version_a < version_b ? -1 : version_a > version_b;
}

static char *
s_strdup (const char *text)
{
    return strdup (text ? text : "");
}

static void
s_spec_free (shoal_jobspec_t *spec)
{
    free ((char *) spec->name);
    free ((char *) spec->command);
    for (uint32_t i = 0; i < spec->require_count; i++) {
        free ((char *) spec->require[i].key);
        free ((char *) spec->require[i].value);
    }
    free (spec->require);
    memset (spec, 0, sizeof *spec);
}

//  A deep copy. Returns -1 when memory is short (dst is then empty).
static int
s_spec_copy (shoal_jobspec_t *dst, const shoal_jobspec_t *src)
{
    *dst = *src;
    dst->name = s_strdup (src->name);
    dst->command = s_strdup (src->command);
    dst->require = src->require_count ? calloc (src->require_count, sizeof *dst->require) : NULL;
    bool failed = !dst->name || !dst->command || (src->require_count && !dst->require);
    for (uint32_t i = 0; i < src->require_count && !failed; i++) {
        dst->require[i].key = s_strdup (src->require[i].key);
        dst->require[i].value = s_strdup (src->require[i].value);
        failed = !dst->require[i].key || !dst->require[i].value;
    }
    if (failed) {
        if (!dst->require)
            dst->require_count = 0;
        s_spec_free (dst);
        return -1;
    }
    return 0;
}

//  A deep copy of req. Returns -1 when memory is short (dst is then empty).
static int
s_request_copy (shoal_control_req_t *dst, const shoal_control_req_t *src)
{
    *dst = *src;
    dst->job = src->job ? strdup (src->job) : NULL;
    dst->spec = src->spec ? calloc (1, sizeof *dst->spec) : NULL;
    bool failed = (src->job && !dst->job) || (src->spec && !dst->spec) ||
                  (src->spec && s_spec_copy (dst->spec, src->spec) != 0);
    if (failed) {
        free ((char *) dst->job);
        free (dst->spec);
        *dst = (shoal_control_req_t){ 0 };
        return -1;
    }
    return 0;
}

static void
s_request_free (shoal_control_req_t *req)
{
    free ((char *) req->job);
    if (req->spec)
        s_spec_free (req->spec);
    free (req->spec);
    *req = (shoal_control_req_t){ 0 };
}

static bool
s_spec_equal (const shoal_jobspec_t *a, const shoal_jobspec_t *b)
{
    if (strcmp (a->name, b->name) != 0 || a->parallelism != b->parallelism ||
        a->stateful != b->stateful || a->fenced != b->fenced || a->weight != b->weight ||
        a->require_count != b->require_count ||
        strcmp (a->command ? a->command : "", b->command ? b->command : "") != 0)
        return false;
    for (uint32_t i = 0; i < a->require_count; i++)
        if (strcmp (a->require[i].key, b->require[i].key) != 0 ||
            strcmp (a->require[i].value, b->require[i].value) != 0)
            return false;
    return true;
}

//  Why name cannot name a job (NULL when it can): names become task ids
//  "name/index", so they keep to letters, digits and ".-_".
static const char *
s_name_check (const char *name)
{
    size_t length = name ? strlen (name) : 0;
    if (length == 0 || length > SHOAL_NAME_MAX)
        return "a job name has 1 to 64 characters";
    for (size_t i = 0; i < length; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '-' || c == '_'))
            return "a job name has only letters, digits, '.', '-' and '_'";
    }
    return NULL;
}

//  The encoded size of spec in a JOB, or -1 with why set when the wire
//  refuses it (a label too long, keys repeated, text not UTF-8).
static long
s_spec_bytes (const shoal_jobspec_t *spec, shoal_wire_error_t *why)
{
    shoal_msg_t msg = { .type = SHOAL_MSG_JOB };
    msg.u.job.spec = *spec;
    return shoal_msg_encode (&msg, NULL, 0, why);
}

//  Why spec cannot be a job (NULL when it can). A removal (parallelism 0)
//  passes when removal is true. Names become task ids "name/index", so
//  they keep to letters, digits and ".-_"; the rest is what the wire
//  carries (the reason is then in why).
static const char *
s_spec_check (const shoal_jobspec_t *spec, bool removal, shoal_wire_error_t *why)
{
    const char *bad_name = s_name_check (spec->name);
    if (bad_name)
        return bad_name;
    if (spec->parallelism > SHOAL_PARALLELISM_MAX || (spec->parallelism == 0 && !removal))
        return "parallelism is 1 to 65535";
    if (spec->weight == 0 && spec->parallelism)
        return "weight is at least 1";
    if (spec->require_count > SHOAL_LABELS_MAX)
        return "a job requires at most 16 labels";
    for (uint32_t i = 0; i < spec->require_count; i++)
        if (!spec->require[i].key || !spec->require[i].key[0] || !spec->require[i].value)
            return "a required label has a key";
    if (spec->command && strlen (spec->command) > SHOAL_COMMAND_MAX)
        return "a command has at most 4096 bytes";
    if (s_spec_bytes (spec, why) < 0)
        return why->text;
    return NULL;
}

static void
s_set_clear (s_set_t *set)
{
    for (size_t i = 0; i < set->count; i++)
        s_spec_free (&set->specs[i]);
    free (set->specs);
    set->specs = NULL;
    set->count = 0;
    set->bytes = 0;
}

//  Where name is in set, or would go.
static int
s_spec_name_order (const void *spec, const void *name)
{
    return strcmp (((const shoal_jobspec_t *) spec)->name, name);
}

static size_t
s_set_find (const s_set_t *set, const char *name, bool *found)
{
    size_t at =
        shoal_lower_bound (set->specs, set->count, sizeof *set->specs, name, s_spec_name_order);
    *found = at < set->count && strcmp (set->specs[at].name, name) == 0;
    return at;
}

static const shoal_jobspec_t *
s_set_get (const s_set_t *set, const char *name)
{
    bool found;
    size_t at = s_set_find (set, name, &found);
    return found ? &set->specs[at] : NULL;
}

//  Puts a copy of spec in set, or takes its job out when its parallelism
//  is 0. Returns -1 when memory is short (set unchanged).
static int
s_set_apply (s_set_t *set, const shoal_jobspec_t *spec)
{
    bool found;
    size_t at = s_set_find (set, spec->name, &found);
    shoal_wire_error_t why;
    if (found)
        set->bytes -= (uint64_t) s_spec_bytes (&set->specs[at], &why);
    if (spec->parallelism == 0) {
        if (found) {
            s_spec_free (&set->specs[at]);
            memmove (&set->specs[at], &set->specs[at + 1],
                     (set->count - at - 1) * sizeof *set->specs);
            set->count--;
        }
        return 0;
    }
    shoal_jobspec_t copy;
    if (s_spec_copy (&copy, spec) != 0) {
        set->bytes += found ? (uint64_t) s_spec_bytes (&set->specs[at], &why) : 0;
        return -1;
    }
    set->bytes += (uint64_t) s_spec_bytes (spec, &why);
    if (found) {
        s_spec_free (&set->specs[at]);
        set->specs[at] = copy;
        return 0;
    }
    shoal_jobspec_t *specs = realloc (set->specs, (set->count + 1) * sizeof *specs);
    if (!specs) {
        set->bytes -= (uint64_t) s_spec_bytes (spec, &why);
        s_spec_free (&copy);
        return -1;
    }
    memmove (&specs[at + 1], &specs[at], (set->count - at) * sizeof *specs);
    specs[at] = copy;
    set->specs = specs;
    set->count++;
    return 0;
}

static int
s_spec_order (const void *a, const void *b)
{
    return strcmp (((const shoal_jobspec_t *) a)->name, ((const shoal_jobspec_t *) b)->name);
}

static uint64_t s_set_tasks (const s_set_t *set);

//  Fills dst with copies of specs (any order), named (term, version).
//  Returns -1 when they are not a set the cluster may hold: a spec that is
//  not a job, a name twice, more than SHOAL_JOBS_MAX jobs or SHOAL_TASKS_MAX
//  tasks, more than a frame holds, a version past S_VERSION_MAX; or when
//  memory is short. dst is then empty.
static int
s_set_load (s_set_t *dst, uint64_t term, uint64_t version, const shoal_jobspec_t *specs,
            size_t count)
{
    s_set_clear (dst);
    dst->term = term;
    dst->version = version;
    if (count > SHOAL_JOBS_MAX || version > S_VERSION_MAX)
        return -1;
    dst->specs = count ? calloc (count, sizeof *dst->specs) : NULL;
    bool failed = count && !dst->specs;
    uint64_t bytes = 0;
    shoal_wire_error_t why;
    for (size_t i = 0; i < count && !failed; i++) {
        failed = s_spec_check (&specs[i], false, &why) || s_spec_copy (&dst->specs[i], &specs[i]);
        if (!failed) {
            dst->count++;
            bytes += (uint64_t) s_spec_bytes (&specs[i], &why);
        }
    }
    if (!failed && count)
        qsort (dst->specs, count, sizeof *dst->specs, s_spec_order);
    for (size_t i = 1; i < dst->count && !failed; i++)
        failed = strcmp (dst->specs[i - 1].name, dst->specs[i].name) == 0;
    if (failed || bytes > S_SET_BYTES_MAX || s_set_tasks (dst) > SHOAL_TASKS_MAX) {
        s_set_clear (dst);
        return -1;
    }
    dst->bytes = bytes;
    return 0;
}

//  True when set, with change applied, is still a set the cluster may hold
//  and its next version can be named; else false, with why.
static bool
s_change_fits (const s_set_t *set, const shoal_jobspec_t *change, char *why, size_t size)
{
    const shoal_jobspec_t *spec = s_set_get (set, change->name);
    uint64_t tasks = s_set_tasks (set) - (spec ? spec->parallelism : 0) + change->parallelism;
    shoal_wire_error_t wire;
    uint64_t bytes = set->bytes + (uint64_t) s_spec_bytes (change, &wire);
    if (!spec && change->parallelism && set->count >= SHOAL_JOBS_MAX)
        snprintf (why, size, "the cluster has %d jobs already", SHOAL_JOBS_MAX);
    else if (tasks > SHOAL_TASKS_MAX)
        snprintf (why, size, "the cluster would have %llu tasks; at most %d",
                  (unsigned long long) tasks, SHOAL_TASKS_MAX);
    else if (bytes > S_SET_BYTES_MAX)
        snprintf (why, size, "the job specs would take %llu bytes; at most %d",
                  (unsigned long long) bytes, S_SET_BYTES_MAX);
    else if (set->version >= S_VERSION_MAX)
        snprintf (why, size, "%s", "the job specs ran out of versions");
    else
        return true;
    return false;
}

static uint64_t
s_set_tasks (const s_set_t *set)
{
    uint64_t tasks = 0;
    for (size_t i = 0; i < set->count; i++)
        tasks += set->specs[i].parallelism;
    return tasks;
}

//  ---------------------------------------------------------------------
//  The class

typedef struct {
    shoal_id_t id;
    bool live;
    bool voter;
    bool replied;       //  answered this leader's SYNC-REQ
    uint64_t term;      //  the name it said it holds
    uint64_t version;   //
    uint64_t sent_term; //  the name it holds once it applied what was sent
    uint64_t sent_version;
    uint64_t due_ms; //  when to send it what it lacks again
} s_peer_t;

typedef enum {
    S_WAIT_CAPACITY = 1, //  a rescale waits for slots
    S_WAIT_COMMIT = 2,   //  a change waits for a majority
} s_wait_t;

//  A request the leader works on, from a local client or forwarded.
typedef struct {
    bool remote;
    uint64_t ref;    //  local: the caller's
    shoal_id_t from; //  remote: the member that forwarded it,
    uint32_t id;     //  and its request id
    uint8_t op;
    uint8_t wait; //  s_wait_t
    char job[SHOAL_NAME_MAX + 1];
    uint32_t parallelism;
    uint32_t min;
    uint32_t capacity; //  as last reported; 0 before any
    uint64_t deadline_ms;
    uint64_t version; //  the change to wait for, with the leader's term
    uint8_t code;     //  the answer once it is held (ok, partial)
    char reason[SHOAL_REASON_MAX + 1];
} s_pending_t;

//  A local request this node does not lead. It is held while no leader
//  can take it, then forwarded (id set) until the leader answers. Either
//  way it is answered by its deadline.
typedef struct {
    uint64_t ref;
    uint32_t id; //  0 while held
    shoal_id_t to;
    uint64_t deadline_ms;
    uint64_t not_before_ms;  //  held after a refusal: sent no sooner
    shoal_control_req_t req; //  owned: job, spec
} s_forward_t;

//  An answer, in storage that lives until the next input.
typedef struct {
    shoal_control_rep_t rep;
    char reason[SHOAL_REASON_MAX + 1];
    bool has_job;
    shoal_jobspec_t job; //  owned
} s_answer_t;

struct _shoal_jobs_t {
    shoal_jobs_config_t config;
    shoal_id_t id;
    s_set_t held;
    bool saved; //  held changed in this input

    bool has_leader;
    shoal_id_t leader;
    uint64_t term;
    bool acting;

    s_peer_t *peers; //  sorted by id
    size_t peer_count;
    size_t voter_count;
    bool self_voter;

    uint64_t lead_term; //  the term this node leads with; 0: it does not lead
    bool ready;         //  caught up, takes requests
    s_set_t best;       //  while catching up: the greatest set a voter reported
    uint64_t catchup_due_ms;

    s_pending_t *pending;
    size_t pending_count;
    s_forward_t *forwards;
    size_t forward_count;
    uint32_t last_forward_id;

    //  Built during an input, valid until the next one.
    shoal_jobs_send_t *sends;
    size_t send_count;
    shoal_jobspec_t *sent_specs; //  owned copies the sends point to
    size_t sent_spec_count;
    s_answer_t *answers; //  the remote answers (CONTROL-REP in sends) and local ones
    size_t answer_count;
    shoal_jobs_reply_t *replies;
    size_t reply_count;
    uint64_t *reply_answers; //  per reply, the index of its answer

    shoal_assign_task_t *tasks; //  of listed, sorted by id
    size_t task_count;
    s_set_t listed;   //  held, as it was when tasks were made
    bool tasks_stale; //  held changed and tasks could not be made again
    shoal_jobs_wait_t *waits;
    size_t wait_count;

    shoal_jobs_stats_t stats;
};

void
shoal_jobs_config_lan (shoal_jobs_config_t *config)
{
    *config = (shoal_jobs_config_t){
        .quorum = true,
        .retry_ms = 1000,
        .forward_ms = 10000,
        .max_pending = 256,
        .max_timeout_ms = 600000,
    };
}

void
shoal_jobs_config_wan (shoal_jobs_config_t *config)
{
    shoal_jobs_config_lan (config);
    config->retry_ms *= 5;
    config->forward_ms *= 5;
}

void
shoal_jobs_config_loopback (shoal_jobs_config_t *config)
{
    shoal_jobs_config_lan (config);
    config->retry_ms /= 10;
    config->forward_ms /= 10;
}

const char *
shoal_jobs_config_check (const shoal_jobs_config_t *config)
{
    if (config->retry_ms == 0)
        return "retry_ms must be at least 1";
    if (config->forward_ms == 0)
        return "forward_ms must be at least 1";
    if (config->max_pending == 0 || config->max_pending > 65536)
        return "max_pending must be 1 to 65536";
    return NULL;
}

_Static_assert(offsetof (s_peer_t, id) == 0, "a peer begins with its id");

static s_peer_t *
s_peer (const shoal_jobs_t *self, const shoal_id_t *id)
{
    return self->peer_count
               ? bsearch (id, self->peers, self->peer_count, sizeof *self->peers, shoal_id_order)
               : NULL;
}

//  The peer of id, made if need be. NULL when memory is short.
static s_peer_t *
s_peer_make (shoal_jobs_t *self, const shoal_id_t *id)
{
    s_peer_t *peer = s_peer (self, id);
    if (peer)
        return peer;
    s_peer_t *peers = realloc (self->peers, (self->peer_count + 1) * sizeof *peers);
    if (!peers)
        return NULL;
    self->peers = peers;
    size_t at = shoal_lower_bound (peers, self->peer_count, sizeof *peers, id, shoal_id_order);
    memmove (&peers[at + 1], &peers[at], (self->peer_count - at) * sizeof *peers);
    peers[at] = (s_peer_t){ .id = *id };
    self->peer_count++;
    return &peers[at];
}

//  Forgets peers that are neither live nor voters.
static void
s_peers_prune (shoal_jobs_t *self)
{
    size_t kept = 0;
    for (size_t i = 0; i < self->peer_count; i++)
        if (self->peers[i].live || self->peers[i].voter)
            self->peers[kept++] = self->peers[i];
    self->peer_count = kept;
}

static void s_outputs_clear (shoal_jobs_t *self);
static void s_tasks_build (shoal_jobs_t *self);
static void s_tasks_free (shoal_assign_task_t *tasks, size_t count);

shoal_jobs_t *
shoal_jobs_new (const shoal_jobs_config_t *config, const shoal_id_t *id,
                const shoal_jobs_saved_t *saved, uint64_t now_ms)
{
    (void) now_ms;
    if (shoal_jobs_config_check (config))
        return NULL;
    shoal_jobs_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->config = *config;
    self->id = *id;
    if (saved &&
        s_set_load (&self->held, saved->term, saved->version, saved->specs, saved->count) != 0) {
        shoal_jobs_destroy (&self);
        return NULL;
    }
    self->tasks_stale = true;
    s_tasks_build (self);
    if (self->tasks_stale) {
        shoal_jobs_destroy (&self);
        return NULL;
    }
    return self;
}

void
shoal_jobs_destroy (shoal_jobs_t **self_p)
{
    shoal_jobs_t *self = *self_p;
    if (!self)
        return;
    s_outputs_clear (self);
    s_set_clear (&self->held);
    s_set_clear (&self->best);
    s_tasks_free (self->tasks, self->task_count);
    s_set_clear (&self->listed);
    free (self->peers);
    free (self->pending);
    for (size_t i = 0; i < self->forward_count; i++)
        s_request_free (&self->forwards[i].req);
    free (self->forwards);
    free (self->sends);
    free (self->sent_specs);
    free (self->answers);
    free (self->replies);
    free (self->reply_answers);
    free (self->waits);
    free (self);
    *self_p = NULL;
}

//  ---------------------------------------------------------------------
//  Outputs

static void
s_outputs_clear (shoal_jobs_t *self)
{
    for (size_t i = 0; i < self->sent_spec_count; i++)
        s_spec_free (&self->sent_specs[i]);
    for (size_t i = 0; i < self->answer_count; i++)
        if (self->answers[i].has_job)
            s_spec_free (&self->answers[i].job);
    self->send_count = 0;
    self->sent_spec_count = 0;
    self->answer_count = 0;
    self->reply_count = 0;
    self->saved = false;
}

static shoal_jobs_send_t *
s_send (shoal_jobs_t *self, const shoal_id_t *to, uint8_t type)
{
    shoal_jobs_send_t *sends = realloc (self->sends, (self->send_count + 1) * sizeof *sends);
    if (!sends)
        return NULL;
    self->sends = sends;
    shoal_jobs_send_t *send = &sends[self->send_count++];
    memset (send, 0, sizeof *send);
    send->to = *to;
    send->msg.type = type;
    return send;
}

static void
s_send_snapshot (shoal_jobs_t *self, const shoal_id_t *to)
{
    shoal_jobs_send_t *send = s_send (self, to, SHOAL_MSG_SYNC_REPLY);
    if (send)
        send->msg.u.sync_reply = (shoal_sync_reply_t){
            .parts = SHOAL_SYNC_JOBS,
            .jobs_term = self->held.term,
            .jobs_version = self->held.version,
            .job_count = (uint32_t) self->held.count,
            .jobs = self->held.specs,
        };
}

static void
s_send_ack (shoal_jobs_t *self, const shoal_id_t *to)
{
    shoal_jobs_send_t *send = s_send (self, to, SHOAL_MSG_JOB_ACK);
    if (send)
        send->msg.u.job_ack = (shoal_job_ack_t){ self->held.term, self->held.version };
}

//  An answer with code and a reason made from format; the job as it stands
//  when job is given. NULL when memory is short.
static s_answer_t *s_answer (shoal_jobs_t *self, uint8_t code, const char *job, const char *format,
                             ...) __attribute__ ((format (printf, 4, 5)));

static s_answer_t *
s_answer (shoal_jobs_t *self, uint8_t code, const char *job, const char *format, ...)
{
    s_answer_t *answers = realloc (self->answers, (self->answer_count + 1) * sizeof *answers);
    if (!answers)
        return NULL;
    self->answers = answers;
    s_answer_t *answer = &answers[self->answer_count];
    memset (answer, 0, sizeof *answer);
    va_list args;
    va_start (args, format);
    vsnprintf (answer->reason, sizeof answer->reason, format, args);
    va_end (args);
    const shoal_jobspec_t *spec = job ? s_set_get (&self->held, job) : NULL;
    if (spec) {
        if (s_spec_copy (&answer->job, spec) != 0)
            return NULL;
        answer->has_job = true;
    }
    answer->rep.code = code;
    answer->rep.leader = self->has_leader ? self->leader : (shoal_id_t){ { 0 } };
    answer->rep.term = self->term;
    answer->rep.version = self->held.version;
    self->answer_count++;
    return answer;
}

//  Answers a local request now.
static void
s_reply_local (shoal_jobs_t *self, uint64_t ref, s_answer_t *answer)
{
    if (!answer)
        return;
    shoal_jobs_reply_t *replies =
        realloc (self->replies, (self->reply_count + 1) * sizeof *replies);
    uint64_t *indexes =
        realloc (self->reply_answers, (self->reply_count + 1) * sizeof *self->reply_answers);
    if (replies)
        self->replies = replies;
    if (indexes)
        self->reply_answers = indexes;
    if (!replies || !indexes)
        return;
    self->replies[self->reply_count] = (shoal_jobs_reply_t){ .ref = ref };
    self->reply_answers[self->reply_count++] = (uint64_t) (answer - self->answers);
}

//  Answers a request forwarded by member to with its id.
static void
s_reply_remote (shoal_jobs_t *self, const shoal_id_t *to, uint32_t id, s_answer_t *answer)
{
    if (!answer)
        return;
    answer->rep.id = id;
    shoal_jobs_send_t *send = s_send (self, to, SHOAL_MSG_CONTROL_REP);
    if (send)
        //  The pointers are set when the input ends, once answers stop moving.
        send->msg.u.control_rep.id = (uint32_t) (answer - self->answers);
}

//  Points every output at its storage, which no longer moves.
static void
s_outputs_seal (shoal_jobs_t *self)
{
    for (size_t i = 0; i < self->answer_count; i++) {
        s_answer_t *answer = &self->answers[i];
        answer->rep.reason = answer->reason;
        answer->rep.job_count = answer->has_job;
        answer->rep.jobs = answer->has_job ? &answer->job : NULL;
    }
    for (size_t i = 0; i < self->send_count; i++) {
        shoal_msg_t *msg = &self->sends[i].msg;
        if (msg->type == SHOAL_MSG_CONTROL_REP)
            msg->u.control_rep = self->answers[msg->u.control_rep.id].rep;
        else if (msg->type == SHOAL_MSG_SYNC_REPLY) {
            //  The set as it stands at the end of the input, whole.
            msg->u.sync_reply.jobs_term = self->held.term;
            msg->u.sync_reply.jobs_version = self->held.version;
            msg->u.sync_reply.job_count = (uint32_t) self->held.count;
            msg->u.sync_reply.jobs = self->held.specs;
        } else if (msg->type == SHOAL_MSG_JOB)
            msg->u.job.spec = self->sent_specs[msg->u.job.spec.parallelism];
    }
    for (size_t i = 0; i < self->reply_count; i++)
        self->replies[i].rep = self->answers[self->reply_answers[i]].rep;
}

//  ---------------------------------------------------------------------
//  The leader: catching up, writing, counting

static bool
s_leads (const shoal_jobs_t *self)
{
    return self->lead_term != 0;
}

static bool
s_held_by_majority (const shoal_jobs_t *self, uint64_t version)
{
    if (!self->config.quorum)
        return true;
    size_t holding = 0;
    bool holds =
        s_name_compare (self->held.term, self->held.version, self->lead_term, version) >= 0;
    if (self->self_voter && holds)
        holding++;
    for (size_t i = 0; i < self->peer_count; i++) {
        const s_peer_t *peer = &self->peers[i];
        if (peer->voter &&
            s_name_compare (peer->term, peer->version, self->lead_term, version) >= 0)
            holding++;
    }
    return self->voter_count > 0 && holding * 2 > self->voter_count;
}

static void
s_pending_answer (shoal_jobs_t *self, s_pending_t *pending, s_answer_t *answer)
{
    if (pending->remote)
        s_reply_remote (self, &pending->from, pending->id, answer);
    else
        s_reply_local (self, pending->ref, answer);
    if (answer && answer->rep.code != SHOAL_REPLY_OK && answer->rep.code != SHOAL_REPLY_PARTIAL)
        self->stats.refused++;
}

static void
s_pending_drop (shoal_jobs_t *self, size_t at)
{
    memmove (&self->pending[at], &self->pending[at + 1],
             (self->pending_count - at - 1) * sizeof *self->pending);
    self->pending_count--;
}

//  Answers every change a majority holds now.
static void
s_commit (shoal_jobs_t *self)
{
    for (size_t i = 0; i < self->pending_count;) {
        s_pending_t *pending = &self->pending[i];
        if (pending->wait == S_WAIT_COMMIT && s_held_by_majority (self, pending->version)) {
            s_answer_t *answer =
                s_answer (self, pending->code, pending->job, "%s", pending->reason);
            if (answer)
                answer->rep.version = pending->version;
            s_pending_answer (self, pending, answer);
            s_pending_drop (self, i);
        } else
            i++;
    }
}

//  Sends the change just written (held's version, kept in sent_specs at
//  index) to every live peer that will hold the version before it, and
//  marks the others for a snapshot.
static void
s_publish (shoal_jobs_t *self, size_t index, uint64_t now_ms)
{
    for (size_t i = 0; i < self->peer_count; i++) {
        s_peer_t *peer = &self->peers[i];
        if (!peer->live)
            continue;
        if (s_name_compare (peer->sent_term, peer->sent_version, self->held.term,
                            self->held.version - 1) != 0) {
            peer->due_ms = now_ms; //  it cannot apply a delta: a snapshot
            continue;
        }
        shoal_jobs_send_t *send = s_send (self, &peer->id, SHOAL_MSG_JOB);
        if (!send)
            continue;
        send->msg.u.job.term = self->held.term;
        send->msg.u.job.version = self->held.version;
        //  The spec's place in sent_specs, until the sends are sealed.
        send->msg.u.job.spec.parallelism = (uint32_t) index;
        peer->sent_term = self->held.term;
        peer->sent_version = self->held.version;
        peer->due_ms = now_ms + self->config.retry_ms;
    }
}

//  Writes a change as the next version and sends it. change may point
//  into held. Returns -1 when memory is short (nothing changed).
static int
s_write (shoal_jobs_t *self, const shoal_jobspec_t *change, uint64_t now_ms)
{
    shoal_jobspec_t *specs =
        realloc (self->sent_specs, (self->sent_spec_count + 1) * sizeof *self->sent_specs);
    if (!specs)
        return -1;
    self->sent_specs = specs;
    size_t index = self->sent_spec_count;
    if (s_spec_copy (&specs[index], change) != 0)
        return -1;
    self->sent_spec_count++;
    if (s_set_apply (&self->held, &specs[index]) != 0)
        return -1;
    self->held.term = self->lead_term;
    self->held.version++;
    self->saved = true;
    self->stats.changes++;
    s_publish (self, index, now_ms);
    return 0;
}

//  Sends snapshots to live peers that lack the current set and are due.
static void
s_retry (shoal_jobs_t *self, uint64_t now_ms)
{
    for (size_t i = 0; i < self->peer_count; i++) {
        s_peer_t *peer = &self->peers[i];
        if (!peer->live || peer->due_ms > now_ms ||
            s_name_compare (peer->term, peer->version, self->held.term, self->held.version) == 0)
            continue;
        s_send_snapshot (self, &peer->id);
        self->stats.snapshots++;
        peer->sent_term = self->held.term;
        peer->sent_version = self->held.version;
        peer->due_ms = now_ms + self->config.retry_ms;
    }
}

//  Takes the greatest set of a majority of voters as the cluster's, under
//  this leader's term, once that majority answered.
static void
s_catch_up (shoal_jobs_t *self, uint64_t now_ms)
{
    size_t replied = self->self_voter;
    for (size_t i = 0; i < self->peer_count; i++)
        replied += self->peers[i].voter && self->peers[i].replied;
    const s_set_t *best = self->best.term || self->best.version ? &self->best : &self->held;
    if (self->voter_count == 0 || replied * 2 <= self->voter_count ||
        best->version >= S_VERSION_MAX)
        return; //  (out of versions: it never takes requests, and says nothing)
    if (s_name_compare (self->best.term, self->best.version, self->held.term, self->held.version) >
        0) {
        s_set_clear (&self->held);
        self->held = self->best;
        self->best = (s_set_t){ 0 };
    }
    s_set_clear (&self->best);
    self->held.term = self->lead_term;
    self->held.version++;
    self->saved = true;
    self->ready = true;
    for (size_t i = 0; i < self->peer_count; i++)
        self->peers[i].due_ms = now_ms;
}

//  Asks the voters that have not answered for their sets, when due.
static void
s_ask (shoal_jobs_t *self, uint64_t now_ms)
{
    if (self->catchup_due_ms > now_ms)
        return;
    for (size_t i = 0; i < self->peer_count; i++) {
        s_peer_t *peer = &self->peers[i];
        if (!peer->voter || peer->replied)
            continue;
        shoal_jobs_send_t *send = s_send (self, &peer->id, SHOAL_MSG_SYNC_REQ);
        if (send)
            send->msg.u.sync_req.want = SHOAL_SYNC_JOBS;
    }
    self->catchup_due_ms = now_ms + self->config.retry_ms;
}

//  Answers every request the leader works on, saying why. A change
//  written but not yet held by a majority may still be applied (failed);
//  else nothing was changed (no leader: the client may ask again).
static void
s_pending_fail (shoal_jobs_t *self, const char *why)
{
    for (size_t i = 0; i < self->pending_count; i++) {
        s_pending_t *pending = &self->pending[i];
        bool written = pending->wait == S_WAIT_COMMIT;
        s_pending_answer (
            self, pending,
            s_answer (self, written ? SHOAL_REPLY_FAILED : SHOAL_REPLY_NO_LEADER, NULL, "%s; %s",
                      why, written ? "the change may still be applied" : "nothing was changed"));
    }
    self->pending_count = 0;
}

//  ---------------------------------------------------------------------
//  Requests at the leader

//  Writes the rescale of pending to parallelism. Returns true when it
//  answered pending instead (the change does not fit, or no memory).
static bool
s_rescale_write (shoal_jobs_t *self, s_pending_t *pending, uint32_t parallelism, uint64_t now_ms)
{
    shoal_jobspec_t change = *s_set_get (&self->held, pending->job);
    change.parallelism = parallelism;
    char why[SHOAL_REASON_MAX + 1];
    if (!s_change_fits (&self->held, &change, why, sizeof why)) {
        s_pending_answer (self, pending, s_answer (self, SHOAL_REPLY_INVALID, NULL, "%s", why));
        return true;
    }
    if (s_write (self, &change, now_ms) != 0) {
        s_pending_answer (self, pending,
                          s_answer (self, SHOAL_REPLY_FAILED, NULL, "out of memory"));
        return true;
    }
    pending->wait = S_WAIT_COMMIT;
    pending->version = self->held.version;
    return false;
}

//  Decides a rescale that waits for capacity, if it can be decided now.
//  Returns true when pending is answered (and may be dropped).
static bool
s_rescale_decide (shoal_jobs_t *self, s_pending_t *pending, uint64_t now_ms)
{
    const shoal_jobspec_t *spec = s_set_get (&self->held, pending->job);
    if (!spec) {
        s_pending_answer (self, pending,
                          s_answer (self, SHOAL_REPLY_NOT_FOUND, NULL,
                                    "job %s was removed while its rescale waited", pending->job));
        return true;
    }
    uint32_t current = spec->parallelism;
    uint32_t fit =
        pending->capacity < pending->parallelism ? pending->capacity : pending->parallelism;
    if (fit >= pending->parallelism) {
        pending->code = SHOAL_REPLY_OK;
        snprintf (pending->reason, sizeof pending->reason, "%s", "");
        return s_rescale_write (self, pending, pending->parallelism, now_ms);
    }
    if (now_ms < pending->deadline_ms)
        return false;
    if (pending->min && fit >= pending->min && fit > current) {
        pending->code = SHOAL_REPLY_PARTIAL;
        snprintf (pending->reason, sizeof pending->reason,
                  "room for %u tasks of %s, not %u: parallelism %u applied", fit, pending->job,
                  pending->parallelism, fit);
        return s_rescale_write (self, pending, fit, now_ms);
    }
    s_pending_answer (self, pending,
                      s_answer (self, SHOAL_REPLY_TIMED_OUT, pending->job,
                                "room for %u tasks of %s, not %u%s; it keeps parallelism %u",
                                pending->capacity, pending->job, pending->parallelism,
                                pending->min ? " (nor the minimum asked)" : "", current));
    return true;
}

//  Why req cannot be carried out anywhere (NULL when it may be): what does
//  not depend on the specs held. why holds the text of a wire reason.
static const char *
s_request_check (const shoal_jobs_t *self, const shoal_control_req_t *req, shoal_wire_error_t *why)
{
    if (req->op == SHOAL_OP_SUBMIT)
        return req->spec ? s_spec_check (req->spec, false, why) : "a submit carries a job spec";
    const char *bad_name = s_name_check (req->job);
    if (bad_name || req->op == SHOAL_OP_REMOVE)
        return bad_name;
    if (req->parallelism == 0 || req->parallelism > SHOAL_PARALLELISM_MAX)
        return "parallelism is 1 to 65535 (remove a job to stop it)";
    if (req->min > req->parallelism)
        return "min is above the parallelism asked";
    if (req->timeout_ms > self->config.max_timeout_ms) {
        snprintf (why->text, sizeof why->text, "a rescale waits at most %u ms",
                  self->config.max_timeout_ms);
        return why->text;
    }
    return NULL;
}

//  Takes a request in at the leader: answers it now, or keeps it pending.
static void
s_lead_request (shoal_jobs_t *self, s_pending_t *pending, const shoal_control_req_t *req,
                uint64_t now_ms)
{
    shoal_wire_error_t wire;
    const char *invalid = s_request_check (self, req, &wire);
    if (invalid) {
        s_pending_answer (self, pending, s_answer (self, SHOAL_REPLY_INVALID, NULL, "%s", invalid));
        return;
    }
    if (!self->acting || !self->ready) {
        s_pending_answer (self, pending,
                          s_answer (self, SHOAL_REPLY_NO_LEADER, NULL, "%s",
                                    self->acting ? "the leader is catching up; try again"
                                                 : "the leader does not hold a quorum now"));
        return;
    }
    if (self->pending_count >= self->config.max_pending) {
        s_pending_answer (self, pending,
                          s_answer (self, SHOAL_REPLY_FAILED, NULL,
                                    "%zu requests are in flight; try again", self->pending_count));
        return;
    }
    const char *name = req->op == SHOAL_OP_SUBMIT ? req->spec->name : req->job;
    snprintf (pending->job, sizeof pending->job, "%s", name);
    pending->op = req->op;
    pending->code = SHOAL_REPLY_OK;
    const shoal_jobspec_t *spec = s_set_get (&self->held, name);
    shoal_jobspec_t change = { 0 };
    bool writes = false;
    s_answer_t *refusal = NULL;
    char why[SHOAL_REASON_MAX + 1];

    if (req->op == SHOAL_OP_SUBMIT) {
        if (spec && !s_spec_equal (spec, req->spec))
            refusal =
                s_answer (self, SHOAL_REPLY_INVALID, name,
                          "job %s exists with another spec: rescale it, or remove it first", name);
        change = *req->spec;
        writes = !spec;
    } else if (!spec)
        refusal = s_answer (self, SHOAL_REPLY_NOT_FOUND, NULL, "no job %s", name);
    else if (req->op == SHOAL_OP_REMOVE) {
        change = *spec;
        change.parallelism = 0;
        writes = true;
    } else {
        bool waiting = false;
        for (size_t i = 0; i < self->pending_count && !waiting; i++)
            waiting = self->pending[i].wait == S_WAIT_CAPACITY &&
                      strcmp (self->pending[i].job, name) == 0;
        change = *spec;
        change.parallelism = req->parallelism;
        if (waiting)
            refusal = s_answer (self, SHOAL_REPLY_INVALID, name,
                                "a rescale of %s is waiting already", name);
        else if (req->parallelism < spec->parallelism)
            writes = true;
        else if (req->parallelism > spec->parallelism) {
            pending->wait = S_WAIT_CAPACITY;
            pending->parallelism = req->parallelism;
            pending->min = req->min;
            pending->deadline_ms = now_ms + req->timeout_ms;
        }
    }
    if (!refusal && (writes || pending->wait == S_WAIT_CAPACITY) &&
        !s_change_fits (&self->held, &change, why, sizeof why))
        refusal = s_answer (self, SHOAL_REPLY_INVALID, NULL, "%s", why);
    else if (!refusal && writes && s_write (self, &change, now_ms) != 0)
        refusal = s_answer (self, SHOAL_REPLY_FAILED, NULL, "out of memory");
    if (refusal) {
        s_pending_answer (self, pending, refusal);
        return;
    }
    if (pending->wait != S_WAIT_CAPACITY) {
        //  Written now, or nothing to write: wait until the set as it
        //  stands is held, so that the answer promises what it says.
        pending->wait = S_WAIT_COMMIT;
        pending->version = self->held.version;
    }
    s_pending_t *list = realloc (self->pending, (self->pending_count + 1) * sizeof *list);
    if (!list) {
        s_pending_answer (self, pending,
                          s_answer (self, SHOAL_REPLY_FAILED, NULL, "out of memory"));
        return;
    }
    self->pending = list;
    list[self->pending_count++] = *pending;
    s_commit (self);
}

//  ---------------------------------------------------------------------
//  Inputs

static int
s_task_compare (const void *a, const void *b)
{
    return strcmp (((const shoal_assign_task_t *) a)->id, ((const shoal_assign_task_t *) b)->id);
}

static void
s_tasks_free (shoal_assign_task_t *tasks, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free ((char *) tasks[i].id);
    free (tasks);
}

//  Makes the task list of held again, over a copy of held (listed) that
//  lives as long as the list. On a memory shortage the old list stays, and
//  the next input tries again.
static void
s_tasks_build (shoal_jobs_t *self)
{
    s_set_t listed = { 0 };
    size_t count = (size_t) s_set_tasks (&self->held), made = 0;
    shoal_assign_task_t *tasks = count ? calloc (count, sizeof *tasks) : NULL;
    bool failed = (count && !tasks) || s_set_load (&listed, self->held.term, self->held.version,
                                                   self->held.specs, self->held.count) != 0;
    for (size_t j = 0; j < listed.count && !failed; j++) {
        const shoal_jobspec_t *spec = &listed.specs[j];
        for (uint32_t i = 0; i < spec->parallelism && !failed; i++) {
            char id[SHOAL_TASK_MAX + 1];
            snprintf (id, sizeof id, "%s/%u", spec->name, i);
            tasks[made] = (shoal_assign_task_t){
                .id = strdup (id),
                .job = spec->name,
                .stateful = spec->stateful,
                .fenced = spec->fenced,
                .weight = spec->weight,
                .require_count = spec->require_count,
                .require = spec->require,
            };
            failed = !tasks[made++].id;
        }
    }
    if (failed) {
        s_tasks_free (tasks, made);
        s_set_clear (&listed);
        return;
    }
    if (count)
        qsort (tasks, count, sizeof *tasks, s_task_compare);
    s_tasks_free (self->tasks, self->task_count);
    s_set_clear (&self->listed);
    self->tasks = tasks;
    self->task_count = count;
    self->listed = listed;
    self->tasks_stale = false;
}

//  Lists the rescales that wait for capacity.
static void
s_waits_build (shoal_jobs_t *self)
{
    size_t count = 0;
    for (size_t i = 0; i < self->pending_count; i++)
        count += self->pending[i].wait == S_WAIT_CAPACITY;
    shoal_jobs_wait_t *waits = count ? realloc (self->waits, count * sizeof *waits) : self->waits;
    if (!waits)
        count = 0; //  none listed this time; the timeouts still hold
    else
        self->waits = waits;
    self->wait_count = 0;
    for (size_t i = 0; i < self->pending_count && self->wait_count < count; i++)
        if (self->pending[i].wait == S_WAIT_CAPACITY)
            self->waits[self->wait_count++] =
                (shoal_jobs_wait_t){ self->pending[i].job, self->pending[i].parallelism };
}

//  ---------------------------------------------------------------------
//  Requests this node does not lead

//  Keeps req for the local client ref until a leader takes it, at most
//  forward_ms (a rescale: its timeout too).
static void
s_forward_hold (shoal_jobs_t *self, uint64_t ref, const shoal_control_req_t *req, uint64_t now_ms)
{
    s_forward_t *forwards = realloc (self->forwards, (self->forward_count + 1) * sizeof *forwards);
    if (forwards)
        self->forwards = forwards;
    s_forward_t forward = {
        .ref = ref,
        .deadline_ms = now_ms + self->config.forward_ms +
                       (req->op == SHOAL_OP_RESCALE ? (uint64_t) req->timeout_ms : 0),
    };
    if (!forwards || s_request_copy (&forward.req, req) != 0) {
        s_reply_local (self, ref, s_answer (self, SHOAL_REPLY_FAILED, NULL, "out of memory"));
        return;
    }
    forwards[self->forward_count++] = forward;
}

static void
s_forward_drop (shoal_jobs_t *self, size_t at)
{
    s_request_free (&self->forwards[at].req);
    self->forwards[at] = self->forwards[--self->forward_count];
}

//  Sends a held request to the leader this node follows. The message
//  points at the request the forward owns, which outlives the input: a
//  forward is dropped only in a later one (its answer, its deadline, a
//  new leader). A rescale waits at the leader for what is left of its time.
static int
s_forward_send (shoal_jobs_t *self, s_forward_t *forward, uint64_t now_ms)
{
    shoal_jobs_send_t *send = s_send (self, &self->leader, SHOAL_MSG_CONTROL_REQ);
    if (!send)
        return -1;
    if (++self->last_forward_id == 0)
        self->last_forward_id = 1;
    forward->id = self->last_forward_id;
    forward->to = self->leader;
    send->msg.u.control_req = forward->req;
    send->msg.u.control_req.id = forward->id;
    if (forward->req.op == SHOAL_OP_RESCALE) {
        uint64_t end = now_ms + self->config.forward_ms;
        uint64_t left = forward->deadline_ms > end ? forward->deadline_ms - end : 0;
        if (left < forward->req.timeout_ms)
            send->msg.u.control_req.timeout_ms = (uint32_t) left;
    }
    self->stats.forwarded++;
    return 0;
}

//  Held requests go to the leader as soon as one can take them: this node,
//  acting and caught up, or the leader it follows. A request still
//  unanswered at its deadline is answered then.
static void
s_forwards_run (shoal_jobs_t *self, uint64_t now_ms)
{
    for (size_t i = 0; i < self->forward_count;) {
        s_forward_t *forward = &self->forwards[i];
        s_answer_t *answer = NULL;
        bool done = true;
        if (forward->deadline_ms <= now_ms)
            answer = forward->id
                         ? s_answer (self, SHOAL_REPLY_FAILED, NULL,
                                     "the leader did not answer in time; the request may "
                                     "still be applied")
                         : s_answer (self, SHOAL_REPLY_NO_LEADER, NULL,
                                     "no leader took the request in time; nothing was changed");
        else if (forward->id || forward->not_before_ms > now_ms)
            done = false;
        else if (s_leads (self) && self->acting && self->ready) {
            s_pending_t pending = { .ref = forward->ref };
            s_lead_request (self, &pending, &forward->req, now_ms);
        } else if (!self->has_leader || s_leads (self))
            done = false;
        else if (s_forward_send (self, forward, now_ms) == 0)
            done = false;
        else
            answer = s_answer (self, SHOAL_REPLY_FAILED, NULL, "out of memory");
        if (!done) {
            i++;
            continue;
        }
        if (answer) {
            s_reply_local (self, forward->ref, answer);
            self->stats.refused++;
        }
        s_forward_drop (self, i);
    }
}

//  ---------------------------------------------------------------------

//  Everything the time brings, and the outputs made ready.
static void
s_run (shoal_jobs_t *self, uint64_t now_ms)
{
    if (s_leads (self) && self->acting && !self->ready) {
        s_catch_up (self, now_ms);
        if (!self->ready)
            s_ask (self, now_ms);
    }
    s_forwards_run (self, now_ms);
    if (s_leads (self) && self->acting) {
        if (self->ready) {
            for (size_t i = 0; i < self->pending_count;) {
                s_pending_t *pending = &self->pending[i];
                if (pending->wait == S_WAIT_CAPACITY && s_rescale_decide (self, pending, now_ms))
                    s_pending_drop (self, i);
                else
                    i++;
            }
            s_retry (self, now_ms);
            s_commit (self);
        }
    }
    if (self->saved || self->tasks_stale) {
        self->tasks_stale = true;
        s_tasks_build (self);
    }
    s_waits_build (self);
    s_outputs_seal (self);
}

void
shoal_jobs_leader (shoal_jobs_t *self, uint64_t now_ms, const shoal_id_t *leader, uint64_t term,
                   bool acting)
{
    s_outputs_clear (self);
    bool same = leader && self->has_leader && shoal_id_equal (leader, &self->leader);
    //  Forwards wait for the leader they went to; held requests wait on.
    for (size_t i = 0; i < self->forward_count && !same;) {
        if (self->forwards[i].id == 0) {
            i++;
            continue;
        }
        s_reply_local (self, self->forwards[i].ref,
                       s_answer (self, SHOAL_REPLY_FAILED, NULL,
                                 "the leader changed before it answered; the request may "
                                 "still be applied"));
        self->stats.refused++;
        s_forward_drop (self, i);
    }
    self->has_leader = leader != NULL;
    self->leader = leader ? *leader : (shoal_id_t){ { 0 } };
    self->term = leader ? term : self->term;
    bool leads = leader && shoal_id_equal (leader, &self->id);
    if (s_leads (self) && (!leads || term != self->lead_term)) {
        s_pending_fail (self, "leadership was lost");
        self->lead_term = 0;
        self->ready = false;
        s_set_clear (&self->best);
    }
    if (leads && !s_leads (self)) {
        self->lead_term = term;
        self->ready = false;
        self->catchup_due_ms = now_ms;
        self->best = (s_set_t){ 0 };
        for (size_t i = 0; i < self->peer_count; i++) {
            s_peer_t *peer = &self->peers[i];
            peer->replied = false;
            peer->term = peer->version = 0;
            peer->sent_term = peer->sent_version = 0;
        }
    }
    self->acting = leads && acting;
    s_run (self, now_ms);
}

int
shoal_jobs_voters (shoal_jobs_t *self, uint64_t now_ms, const shoal_id_t *voters, size_t count)
{
    s_outputs_clear (self);
    for (size_t i = 0; i < count; i++)
        if (!shoal_id_equal (&voters[i], &self->id) && !s_peer_make (self, &voters[i])) {
            s_run (self, now_ms);
            return -1;
        }
    self->voter_count = count;
    self->self_voter = false;
    for (size_t i = 0; i < self->peer_count; i++)
        self->peers[i].voter = false;
    for (size_t i = 0; i < count; i++) {
        s_peer_t *peer = s_peer (self, &voters[i]);
        if (peer)
            peer->voter = true;
        else
            self->self_voter = true;
    }
    s_peers_prune (self);
    s_run (self, now_ms);
    return 0;
}

int
shoal_jobs_member (shoal_jobs_t *self, uint64_t now_ms, const shoal_id_t *id, bool live)
{
    s_outputs_clear (self);
    int rc = 0;
    if (!shoal_id_equal (id, &self->id)) {
        s_peer_t *peer = live ? s_peer_make (self, id) : s_peer (self, id);
        if (live && !peer)
            rc = -1;
        else if (peer) {
            if (live && !peer->live)
                peer->due_ms = now_ms; //  back: it may have missed anything
            peer->live = live;
            s_peers_prune (self);
        }
    }
    s_run (self, now_ms);
    return rc;
}

//  A delta or a snapshot from the leader this node follows.
static int
s_take (shoal_jobs_t *self, const shoal_id_t *from, const shoal_msg_t *msg)
{
    if (s_leads (self) || !self->has_leader || !shoal_id_equal (from, &self->leader))
        return -1;
    if (msg->type == SHOAL_MSG_JOB) {
        const shoal_job_t *job = &msg->u.job;
        shoal_wire_error_t why;
        char reason[SHOAL_REASON_MAX + 1];
        if (job->term != self->term || s_spec_check (&job->spec, true, &why))
            return -1;
        if (job->version > 0 && s_name_compare (self->held.term, self->held.version, job->term,
                                                job->version - 1) == 0) {
            if (!s_change_fits (&self->held, &job->spec, reason, sizeof reason) ||
                s_set_apply (&self->held, &job->spec) != 0)
                return -1;
            self->held.version = job->version;
            self->saved = true;
            self->stats.applied++;
        }
    } else {
        const shoal_sync_reply_t *reply = &msg->u.sync_reply;
        if (reply->jobs_term != self->term)
            return -1;
        if (s_name_compare (self->held.term, self->held.version, reply->jobs_term,
                            reply->jobs_version) < 0) {
            s_set_t set = { 0 };
            if (s_set_load (&set, reply->jobs_term, reply->jobs_version, reply->jobs,
                            reply->job_count) != 0) {
                s_set_clear (&set);
                return -1;
            }
            s_set_clear (&self->held);
            self->held = set;
            self->saved = true;
            self->stats.applied++;
        }
    }
    s_send_ack (self, from);
    return 0;
}

//  A voter's set, while this leader catches up.
static int
s_gather (shoal_jobs_t *self, const shoal_id_t *from, const shoal_sync_reply_t *reply)
{
    s_peer_t *peer = s_peer (self, from);
    if (!peer || !peer->voter || peer->replied)
        return -1;
    s_set_t set = { 0 };
    if (s_set_load (&set, reply->jobs_term, reply->jobs_version, reply->jobs, reply->job_count) !=
        0) {
        s_set_clear (&set);
        return -1;
    }
    peer->replied = true;
    const s_set_t *best = self->best.term || self->best.version ? &self->best : &self->held;
    if (s_name_compare (set.term, set.version, best->term, best->version) > 0) {
        s_set_clear (&self->best);
        self->best = set;
    } else
        s_set_clear (&set);
    return 0;
}

static int
s_receive (shoal_jobs_t *self, uint64_t now_ms, const shoal_id_t *from, const shoal_msg_t *msg)
{
    switch (msg->type) {
    case SHOAL_MSG_JOB:
        return s_take (self, from, msg);
    case SHOAL_MSG_SYNC_REPLY:
        if (!(msg->u.sync_reply.parts & SHOAL_SYNC_JOBS))
            return 0; //  the membership layer's
        if (s_leads (self))
            return self->ready ? -1 : s_gather (self, from, &msg->u.sync_reply);
        return s_take (self, from, msg);
    case SHOAL_MSG_SYNC_REQ:
        if (!(msg->u.sync_req.want & SHOAL_SYNC_JOBS))
            return 0;
        if (s_leads (self) || !self->has_leader || !shoal_id_equal (from, &self->leader))
            return -1;
        s_send_snapshot (self, from);
        return 0;
    case SHOAL_MSG_JOB_ACK: {
        s_peer_t *peer = s_peer (self, from);
        const shoal_job_ack_t *ack = &msg->u.job_ack;
        if (!s_leads (self) || !peer)
            return -1;
        peer->term = ack->term;
        peer->version = ack->version;
        if (s_name_compare (ack->term, ack->version, peer->sent_term, peer->sent_version) > 0) {
            peer->sent_term = ack->term;
            peer->sent_version = ack->version;
        }
        return 0;
    }
    case SHOAL_MSG_CONTROL_REQ: {
        const shoal_control_req_t *req = &msg->u.control_req;
        s_pending_t pending = { .remote = true, .from = *from, .id = req->id };
        if (req->op != SHOAL_OP_SUBMIT && req->op != SHOAL_OP_RESCALE && req->op != SHOAL_OP_REMOVE)
            return -1;
        if (!s_leads (self)) {
            s_pending_answer (self, &pending,
                              s_answer (self, SHOAL_REPLY_NO_LEADER, NULL, "%s",
                                        "this node does not lead; ask again"));
            return 0;
        }
        s_lead_request (self, &pending, req, now_ms);
        return 0;
    }
    case SHOAL_MSG_CONTROL_REP: {
        const shoal_control_rep_t *rep = &msg->u.control_rep;
        for (size_t i = 0; i < self->forward_count; i++) {
            s_forward_t *forward = &self->forwards[i];
            if (forward->id == 0 || forward->id != rep->id || !shoal_id_equal (from, &forward->to))
                continue;
            if (rep->code == SHOAL_REPLY_NO_LEADER && forward->deadline_ms > now_ms) {
                //  Nothing was changed: ask again, once the leader had time
                //  to catch up (or whichever leader follows).
                forward->id = 0;
                forward->not_before_ms = now_ms + self->config.retry_ms;
                return 0;
            }
            s_answer_t *answer =
                s_answer (self, rep->code, NULL, "%s", rep->reason ? rep->reason : "");
            if (answer) {
                answer->rep.leader = rep->leader;
                answer->rep.term = rep->term;
                answer->rep.version = rep->version;
                if (rep->job_count && s_spec_copy (&answer->job, &rep->jobs[0]) == 0)
                    answer->has_job = true;
            }
            s_reply_local (self, forward->ref, answer);
            s_forward_drop (self, i);
            return 0;
        }
        return -1;
    }
    default:
        return -1;
    }
}

int
shoal_jobs_receive (shoal_jobs_t *self, uint64_t now_ms, const shoal_id_t *from,
                    const shoal_msg_t *msg)
{
    s_outputs_clear (self);
    int rc = s_receive (self, now_ms, from, msg);
    if (rc != 0)
        self->stats.dropped++;
    s_run (self, now_ms);
    return rc;
}

int
shoal_jobs_request (shoal_jobs_t *self, uint64_t now_ms, uint64_t ref,
                    const shoal_control_req_t *req)
{
    s_outputs_clear (self);
    if (req->op != SHOAL_OP_SUBMIT && req->op != SHOAL_OP_RESCALE && req->op != SHOAL_OP_REMOVE) {
        s_run (self, now_ms);
        return -1;
    }
    s_pending_t pending = { .ref = ref };
    shoal_wire_error_t wire;
    const char *invalid = s_request_check (self, req, &wire);
    if (s_leads (self) && self->acting && self->ready)
        s_lead_request (self, &pending, req, now_ms);
    else if (invalid)
        s_pending_answer (self, &pending,
                          s_answer (self, SHOAL_REPLY_INVALID, NULL, "%s", invalid));
    else if (self->forward_count >= self->config.max_pending)
        s_pending_answer (self, &pending,
                          s_answer (self, SHOAL_REPLY_FAILED, NULL,
                                    "%zu requests are in flight; try again", self->forward_count));
    else
        s_forward_hold (self, ref, req, now_ms); //  s_run sends it on
    s_run (self, now_ms);
    return 0;
}

void
shoal_jobs_capacity (shoal_jobs_t *self, uint64_t now_ms, const char *job, uint32_t capacity)
{
    s_outputs_clear (self);
    for (size_t i = 0; i < self->pending_count; i++)
        if (self->pending[i].wait == S_WAIT_CAPACITY && strcmp (self->pending[i].job, job) == 0)
            self->pending[i].capacity = capacity;
    s_run (self, now_ms);
}

void
shoal_jobs_tick (shoal_jobs_t *self, uint64_t now_ms)
{
    s_outputs_clear (self);
    s_run (self, now_ms);
}

//  ---------------------------------------------------------------------
//  Outputs and queries

bool
shoal_jobs_saved (const shoal_jobs_t *self, shoal_jobs_saved_t *saved)
{
    if (!self->saved)
        return false;
    *saved = (shoal_jobs_saved_t){ self->held.term, self->held.version, self->held.count,
                                   self->held.specs };
    return true;
}

size_t
shoal_jobs_outbox (const shoal_jobs_t *self, const shoal_jobs_send_t **sends)
{
    *sends = self->sends;
    return self->send_count;
}

size_t
shoal_jobs_replies (const shoal_jobs_t *self, const shoal_jobs_reply_t **replies)
{
    *replies = self->replies;
    return self->reply_count;
}

uint64_t
shoal_jobs_next (const shoal_jobs_t *self)
{
    uint64_t next = UINT64_MAX;
    if (s_leads (self) && self->acting && !self->ready && self->catchup_due_ms < next)
        next = self->catchup_due_ms;
    if (s_leads (self) && self->acting && self->ready)
        for (size_t i = 0; i < self->peer_count; i++) {
            const s_peer_t *peer = &self->peers[i];
            if (peer->live && peer->due_ms < next &&
                s_name_compare (peer->term, peer->version, self->held.term, self->held.version))
                next = peer->due_ms;
        }
    for (size_t i = 0; i < self->pending_count && shoal_jobs_ready (self); i++)
        if (self->pending[i].wait == S_WAIT_CAPACITY && self->pending[i].deadline_ms < next)
            next = self->pending[i].deadline_ms;
    //  A held request that waits out a refusal goes when it may.
    bool can_send =
        (s_leads (self) && self->acting && self->ready) || (self->has_leader && !s_leads (self));
    for (size_t i = 0; i < self->forward_count; i++) {
        const s_forward_t *forward = &self->forwards[i];
        if (forward->deadline_ms < next)
            next = forward->deadline_ms;
        if (can_send && forward->id == 0 && forward->not_before_ms < next)
            next = forward->not_before_ms;
    }
    return next;
}

size_t
shoal_jobs_specs (const shoal_jobs_t *self, const shoal_jobspec_t **specs)
{
    *specs = self->held.specs;
    return self->held.count;
}

void
shoal_jobs_name (const shoal_jobs_t *self, uint64_t *term, uint64_t *version)
{
    *term = self->held.term;
    *version = self->held.version;
}

bool
shoal_jobs_ready (const shoal_jobs_t *self)
{
    return s_leads (self) && self->acting && self->ready;
}

size_t
shoal_jobs_waiting (const shoal_jobs_t *self, const shoal_jobs_wait_t **waits)
{
    *waits = self->waits;
    return self->wait_count;
}

size_t
shoal_jobs_tasks (const shoal_jobs_t *self, const shoal_assign_task_t **tasks)
{
    *tasks = self->tasks;
    return self->task_count;
}

void
shoal_jobs_stats (const shoal_jobs_t *self, shoal_jobs_stats_t *stats)
{
    *stats = self->stats;
}

//  ---------------------------------------------------------------------
//  Invariants (debug)

#ifndef SHOAL_NO_CHECKS

static int
s_check_set (const s_set_t *set, const char **reason)
{
    for (size_t i = 1; i < set->count; i++)
        if (strcmp (set->specs[i - 1].name, set->specs[i].name) >= 0)
            return shoal_check_broken (reason, "jobs: specs not sorted by name, or repeated");
    if (set->version > S_VERSION_MAX)
        return shoal_check_broken (reason, "jobs: a set's version beyond the largest");
    return 0;
}

int
shoal_jobs_check (const shoal_jobs_t *self, const char **reason)
{
    if (!self)
        return shoal_check_broken (reason, "jobs: NULL");
    if (s_check_set (&self->held, reason))
        return -1;
    for (size_t i = 0; i < self->peer_count; i++) {
        if (shoal_id_equal (&self->peers[i].id, &self->id))
            return shoal_check_broken (reason, "jobs: this node among its peers");
        if (i && shoal_id_compare (&self->peers[i - 1].id, &self->peers[i].id) >= 0)
            return shoal_check_broken (reason, "jobs: peers not sorted by id, or repeated");
    }
    if (self->pending_count > self->config.max_pending ||
        self->forward_count > self->config.max_pending)
        return shoal_check_broken (reason, "jobs: more requests waiting than max_pending");
    for (size_t i = 1; i < self->task_count; i++)
        if (s_task_compare (&self->tasks[i - 1], &self->tasks[i]) >= 0)
            return shoal_check_broken (reason, "jobs: tasks not sorted by id, or repeated");
    return 0;
}

#else

int
shoal_jobs_check (const shoal_jobs_t *self, const char **reason)
{
    (void) self;
    (void) reason;
    return 0;
}

#endif

/*  node/eventlog.c: a node's event log, in JSON lines (jansson).
 */

#include "node/eventlog.h"
#include "shoal.h"
#include "node/why.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

//  Requests waiting for their answer that are remembered, at most: the
//  oldest is forgotten first (its answer is logged without its job).
#define S_REQUESTS 64

typedef struct {
    uint64_t ref; //  0: free
    uint8_t op;
    char job[SHOAL_NAME_MAX + 1];
} s_request_t;

struct _shoal_eventlog_t {
    int fd;
    char *path; //  as opened: reopen opens it again
    char node[SHOAL_ID_TEXT];
    uint64_t failures;
    char failure[200];        //  the first one's reason
    shoal_epoch_t assignment; //  as last logged; (0, 0) before any
    uint64_t voters_version;  //  as last logged; 0 before any
    s_request_t requests[S_REQUESTS];
    size_t request_next; //  the slot taken next
};

static int
s_open (const char *path)
{
    return open (path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
}

shoal_eventlog_t *
shoal_eventlog_open (const char *path, const char node[SHOAL_ID_TEXT], char *why, size_t why_size)
{
    shoal_eventlog_t *self = calloc (1, sizeof *self);
    if (!self) {
        shoal_why (why, why_size, "out of memory");
        return NULL;
    }
    self->path = strdup (path);
    self->fd = self->path ? s_open (path) : -1;
    if (self->fd < 0) {
        shoal_why (why, why_size, "cannot open: %s",
                   self->path ? strerror (errno) : "out of memory");
        free (self->path);
        free (self);
        return NULL;
    }
    snprintf (self->node, sizeof self->node, "%s", node);
    return self;
}

void
shoal_eventlog_close (shoal_eventlog_t **self_p)
{
    shoal_eventlog_t *self = self_p ? *self_p : NULL;
    if (!self)
        return;
    close (self->fd);
    free (self->path);
    free (self);
    *self_p = NULL;
}

int
shoal_eventlog_reopen (shoal_eventlog_t *self, char *why, size_t why_size)
{
    if (!self)
        return 0;
    int fd = s_open (self->path);
    if (fd < 0)
        return shoal_why (why, why_size, "events %s: cannot open: %s", self->path,
                          strerror (errno));
    close (self->fd);
    self->fd = fd;
    return 0;
}

uint64_t
shoal_eventlog_failures (const shoal_eventlog_t *self, char *why, size_t why_size)
{
    if (!self)
        return 0;
    if (self->failures)
        shoal_why (why, why_size, "%s", self->failure);
    return self->failures;
}

static void
s_failed (shoal_eventlog_t *self, const char *reason)
{
    if (self->failures++ == 0)
        snprintf (self->failure, sizeof self->failure, "%s", reason);
}

//  Appends one line: the common fields, then fields (taken; NULL when
//  making them ran out of memory).
static void
s_write (shoal_eventlog_t *self, const char *event, json_t *fields)
{
    struct timespec wall, mono;
    clock_gettime (CLOCK_REALTIME, &wall);
    clock_gettime (CLOCK_MONOTONIC, &mono);
    struct tm utc;
    char seconds[32] = "", when[48];
    if (gmtime_r (&wall.tv_sec, &utc))
        strftime (seconds, sizeof seconds, "%Y-%m-%dT%H:%M:%S", &utc);
    snprintf (when, sizeof when, "%s.%03ldZ", seconds, wall.tv_nsec / 1000000);
    json_int_t mono_ms = (json_int_t) mono.tv_sec * 1000 + mono.tv_nsec / 1000000;
    json_t *line = json_pack ("{s:s, s:I, s:s, s:s}", "wall", when, "mono", mono_ms, "node",
                              self->node, "event", event);
    char *text = NULL;
    if (line && fields && json_object_update (line, fields) == 0)
        text = json_dumps (line, JSON_COMPACT);
    json_decref (line);
    json_decref (fields);
    if (!text) {
        s_failed (self, "cannot make a line: memory is short, or a text is not UTF-8");
        return;
    }
    size_t size = strlen (text);
    text[size] = '\n'; //  over the NUL: the line goes out in one write
    ssize_t written = write (self->fd, text, size + 1);
    if (written != (ssize_t) size + 1)
        s_failed (self, written < 0 ? strerror (errno) : "a line was cut short");
    free (text);
}

static const char *
s_name (const char *const *names, size_t count, size_t index)
{
    return index < count && names[index] ? names[index] : "unknown";
}

#define S_NAME(names, index) s_name (names, sizeof names / sizeof names[0], index)

static const char *const s_roles[] = { "none", "active", "standby", "learner" };

void
shoal_eventlog_start (shoal_eventlog_t *self, const char *addr, uint64_t life, uint64_t incarnation)
{
    if (self)
        s_write (self, "start",
                 json_pack ("{s:s, s:I, s:I, s:s}", "addr", addr, "life", (json_int_t) life,
                            "incarnation", (json_int_t) incarnation, "version", shoal_version ()));
}

void
shoal_eventlog_member (shoal_eventlog_t *self, const shoal_membership_event_t *event)
{
    static const char *const changes[] = { [SHOAL_MEMBERSHIP_UP] = "up",
                                           [SHOAL_MEMBERSHIP_SUSPECT] = "suspect",
                                           [SHOAL_MEMBERSHIP_DEAD] = "dead",
                                           [SHOAL_MEMBERSHIP_LEFT] = "left",
                                           [SHOAL_MEMBERSHIP_UPDATED] = "updated" };
    static const char *const states[] = { [SHOAL_MEMBERSHIP_UP] = "alive",
                                          [SHOAL_MEMBERSHIP_SUSPECT] = "suspect",
                                          [SHOAL_MEMBERSHIP_DEAD] = "dead",
                                          [SHOAL_MEMBERSHIP_LEFT] = "left",
                                          [SHOAL_MEMBERSHIP_UPDATED] = "alive" };
    if (!self)
        return;
    char member[SHOAL_ID_TEXT];
    shoal_id_format (event->node.bytes, false, member);
    const shoal_meta_t *meta = event->meta;
    json_t *fields = json_pack (
        "{s:s, s:s, s:s, s:I, s:s, s:s, s:I}", "member", member, "state",
        S_NAME (states, event->type), "change", S_NAME (changes, event->type), "incarnation",
        (json_int_t) event->incarnation, "name", meta && meta->name ? meta->name : "", "addr",
        meta && meta->addr ? meta->addr : "", "life", (json_int_t) (meta ? meta->life : 0));
    s_write (self, "member", fields);
}

void
shoal_eventlog_leader (shoal_eventlog_t *self, const shoal_elector_event_t *event, bool acting)
{
    if (!self)
        return;
    char leader[SHOAL_ID_TEXT] = "";
    if (event->type == SHOAL_ELECTOR_LEADER)
        shoal_id_format (event->leader.bytes, true, leader);
    s_write (self, "leader",
             json_pack ("{s:s, s:I, s:b, s:b}", "leader", leader, "term", (json_int_t) event->term,
                        "leads", leader[0] && strcmp (leader, self->node) == 0, "acting", acting));
}

void
shoal_eventlog_voters (shoal_eventlog_t *self, uint64_t version, const shoal_id_t *voters,
                       uint32_t count)
{
    if (!self || version == self->voters_version)
        return;
    self->voters_version = version;
    json_t *ids = json_array ();
    for (uint32_t i = 0; ids && i < count; i++) {
        char id[SHOAL_ID_TEXT];
        shoal_id_format (voters[i].bytes, true, id);
        if (json_array_append_new (ids, json_string (id)) != 0) {
            json_decref (ids);
            ids = NULL;
        }
    }
    s_write (self, "voters",
             ids ? json_pack ("{s:I, s:o}", "version", (json_int_t) version, "voters", ids) : NULL);
}

void
shoal_eventlog_assignment (shoal_eventlog_t *self, shoal_epoch_t version)
{
    if (!self ||
        (self->assignment.term == version.term && self->assignment.version == version.version))
        return;
    self->assignment = version;
    s_write (self, "assignment",
             json_pack ("{s:I, s:I}", "term", (json_int_t) version.term, "version",
                        (json_int_t) version.version));
}

void
shoal_eventlog_command (shoal_eventlog_t *self, const shoal_tasks_command_t *command)
{
    static const char *const actions[] = { [SHOAL_TASKS_START] = "start",
                                           [SHOAL_TASKS_PROMOTE] = "promote",
                                           [SHOAL_TASKS_DEMOTE] = "demote",
                                           [SHOAL_TASKS_STOP] = "stop" };
    if (!self)
        return;
    s_write (self, "task",
             json_pack ("{s:s, s:s, s:s, s:I, s:I}", "action", S_NAME (actions, command->type),
                        "task", command->task ? command->task : "", "role",
                        S_NAME (s_roles, command->role), "epoch_term",
                        (json_int_t) command->epoch.term, "epoch_version",
                        (json_int_t) command->epoch.version));
}

void
shoal_eventlog_lease (shoal_eventlog_t *self, bool held, uint64_t until_ms)
{
    if (self)
        s_write (self, "lease",
                 json_pack ("{s:b, s:I}", "held", held, "until", (json_int_t) until_ms));
}

void
shoal_eventlog_request (shoal_eventlog_t *self, uint64_t ref, const shoal_control_req_t *req)
{
    if (!self || !req)
        return;
    const char *job = req->job ? req->job : req->spec && req->spec->name ? req->spec->name : "";
    s_request_t *request = &self->requests[self->request_next];
    self->request_next = (self->request_next + 1) % S_REQUESTS;
    *request = (s_request_t){ .ref = ref, .op = req->op };
    snprintf (request->job, sizeof request->job, "%s", job);
}

void
shoal_eventlog_reply (shoal_eventlog_t *self, const shoal_jobs_reply_t *reply)
{
    static const char *const ops[] = {
        [SHOAL_OP_SUBMIT] = "submit", [SHOAL_OP_RESCALE] = "rescale", [SHOAL_OP_REMOVE] = "remove"
    };
    static const char *const codes[] = { [SHOAL_REPLY_OK] = "ok",
                                         [SHOAL_REPLY_INVALID] = "invalid",
                                         [SHOAL_REPLY_NOT_FOUND] = "not-found",
                                         [SHOAL_REPLY_NO_LEADER] = "no-leader",
                                         [SHOAL_REPLY_TIMED_OUT] = "timed-out",
                                         [SHOAL_REPLY_PARTIAL] = "partial",
                                         [SHOAL_REPLY_FAILED] = "failed" };
    if (!self)
        return;
    s_request_t request = { 0 };
    for (size_t i = 0; i < S_REQUESTS; i++)
        if (self->requests[i].ref == reply->ref) {
            request = self->requests[i];
            self->requests[i].ref = 0;
        }
    const shoal_control_rep_t *rep = &reply->rep;
    json_t *fields = json_pack (
        "{s:s, s:s, s:s, s:I, s:s}", "op", request.ref ? S_NAME (ops, request.op) : "unknown",
        "job", rep->job_count && rep->jobs[0].name ? rep->jobs[0].name : request.job, "code",
        S_NAME (codes, rep->code), "parallelism",
        (json_int_t) (rep->job_count ? rep->jobs[0].parallelism : 0), "reason",
        rep->reason ? rep->reason : "");
    s_write (self, "request", fields);
}

void
shoal_eventlog_unplaced (shoal_eventlog_t *self, const char *task, const char *reason,
                         const char *text)
{
    if (self)
        s_write (self, "unplaced",
                 json_pack ("{s:s, s:s, s:s}", "task", task, "reason", reason, "text", text));
}

void
shoal_eventlog_move (shoal_eventlog_t *self, const char *task, const char *step,
                     const shoal_id_t *from, const shoal_id_t *to, const char *reason)
{
    if (!self)
        return;
    char from_text[SHOAL_ID_TEXT] = "", to_text[SHOAL_ID_TEXT] = "";
    if (from)
        shoal_id_format (from->bytes, true, from_text);
    if (to)
        shoal_id_format (to->bytes, true, to_text);
    s_write (self, "move",
             json_pack ("{s:s, s:s, s:s, s:s, s:s}", "task", task, "step", step, "from", from_text,
                        "to", to_text, "reason", reason));
}

void
shoal_eventlog_cordon (shoal_eventlog_t *self, uint8_t cordon)
{
    static const char *const names[] = { "none", "cordoned", "draining" };
    if (self && cordon <= SHOAL_CORDON_MAX)
        s_write (self, "cordon", json_pack ("{s:s}", "state", names[cordon]));
}

void
shoal_eventlog_leave (shoal_eventlog_t *self, bool done)
{
    if (self)
        s_write (self, "leave", json_pack ("{s:s}", "phase", done ? "done" : "started"));
}

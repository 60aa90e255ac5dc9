/*  node/logs.c: `shoal logs TASK` on the node a client asks.

    The client names the task, the member (its id; none: this node) and
    how many lines. This node reads its own file, or sends the member a
    LOGS and hands back its LOGS-REP as the control reply; a member that
    does not answer within S_WAIT_MS is said not to answer. A member reads
    its file on the actor's thread: at most SHOAL_LOGS_TEXT_MAX bytes of
    it, from the page cache as a rule (the worker wrote it just before).
    Which members hold a task is the client's to ask first (the leader's
    status table), so that this stays one request and one answer.
*/
#include "node/logs.h"

#include "node/tasklog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_WAIT_MS 5000
//  Requests relayed at once; more are refused.
#define S_WAITS_MAX 8
//  Lines when the request says 0.
#define S_LINES_DEFAULT 100

typedef struct {
    bool used;
    uint64_t ref;
    uint32_t id;
    shoal_id_t node;
    uint64_t deadline;
} s_wait_t;

struct _shoal_logops_t {
    s_wait_t waits[S_WAITS_MAX];
    uint32_t last_id;
};

static void
s_answer (shoal_actor_t *self, uint64_t ref, int code, const char *reason, const char *output)
{
    shoal_control_rep_t rep = { .code = (uint8_t) code, .reason = reason, .output = output };
    shoal_control_server_answer (self->control, ref, &rep);
}

//  This node's file for task: the code, the reason, and the lines (to
//  free) in *output.
static int
s_read (shoal_actor_t *self, const char *task, uint32_t lines, char **output, char *reason,
        size_t size)
{
    char dir[sizeof self->options->data_dir + sizeof SHOAL_TASKLOG_DIR + 1];
    snprintf (dir, sizeof dir, "%s/%s", self->options->data_dir, SHOAL_TASKLOG_DIR);
    size_t length;
    char why[300];
    int rc = shoal_tasklog_read (dir, task, lines ? lines : S_LINES_DEFAULT, SHOAL_LOGS_TEXT_MAX,
                                 output, &length, why, sizeof why);
    reason[0] = 0;
    if (rc == 1)
        snprintf (reason, size, "no output kept for %s here", task);
    else if (rc < 0)
        snprintf (reason, size, "%.200s", why);
    return rc == 0 ? SHOAL_REPLY_OK : rc == 1 ? SHOAL_REPLY_NOT_FOUND : SHOAL_REPLY_FAILED;
}

static shoal_logops_t *
s_ops (shoal_actor_t *self)
{
    if (!self->logops)
        self->logops = calloc (1, sizeof *self->logops);
    return self->logops;
}

static bool
s_live_member (shoal_actor_t *self, const shoal_id_t *id)
{
    shoal_membership_member_t member;
    return shoal_membership_member (shoal_peer_membership (self->peer), id, &member) == 0 &&
           (member.state == SHOAL_MEMBER_ALIVE || member.state == SHOAL_MEMBER_SUSPECT);
}

//  Sends the member req names a LOGS, and waits for its answer under ref.
static void
s_relay (shoal_actor_t *self, uint64_t now, uint64_t ref, const shoal_logs_req_t *req)
{
    shoal_logops_t *ops = s_ops (self);
    s_wait_t *wait = NULL;
    for (size_t i = 0; ops && i < S_WAITS_MAX && !wait; i++)
        if (!ops->waits[i].used)
            wait = &ops->waits[i];
    if (!wait) {
        s_answer (self, ref, SHOAL_REPLY_INVALID,
                  ops ? "too many logs requests wait for members: try again" : "out of memory",
                  NULL);
        return;
    }
    *wait = (s_wait_t){ .used = true,
                        .ref = ref,
                        .id = ++ops->last_id,
                        .node = req->node,
                        .deadline = now + S_WAIT_MS };
    shoal_msg_t msg = { .type = SHOAL_MSG_LOGS };
    msg.u.logs = (shoal_logs_t){ .id = wait->id, .task = req->task, .lines = req->lines };
    shoal_life_t to = { .life = 0 };
    memcpy (to.id, req->node.bytes, SHOAL_ID_SIZE);
    shoal_actor_send (self, &to, NULL, &msg);
}

void
shoal_logs_request (shoal_actor_t *self, uint64_t now, uint64_t ref, const shoal_control_req_t *req)
{
    static const shoal_id_t none;
    const shoal_logs_req_t *logs = req->logs;
    if (!logs || !logs->task || !logs->task[0])
        s_answer (self, ref, SHOAL_REPLY_INVALID, "a logs request names no task", NULL);
    else if (memcmp (&logs->node, &none, sizeof none) == 0 ||
             memcmp (&logs->node, &self->id, sizeof self->id) == 0) {
        char *output = NULL, reason[SHOAL_REASON_MAX + 1];
        int code = s_read (self, logs->task, logs->lines, &output, reason, sizeof reason);
        s_answer (self, ref, code, reason, output);
        free (output);
    } else if (!s_live_member (self, &logs->node))
        s_answer (self, ref, SHOAL_REPLY_FAILED,
                  "not a live member now (dead, left or unknown), so it cannot answer", NULL);
    else
        s_relay (self, now, ref, logs);
}

//  A member asks for this node's file.
static void
s_logs_in (shoal_actor_t *self, const shoal_transport_in_t *in)
{
    const shoal_logs_t *logs = &in->msg.u.logs;
    char *output = NULL, reason[SHOAL_REASON_MAX + 1];
    int code = s_read (self, logs->task, logs->lines, &output, reason, sizeof reason);
    shoal_msg_t msg = { .type = SHOAL_MSG_LOGS_REP };
    msg.u.logs_rep = (shoal_logs_rep_t){
        .id = logs->id, .code = (uint8_t) code, .reason = reason, .output = output
    };
    shoal_actor_send (self, &in->envelope.sender, NULL, &msg);
    free (output);
}

//  A member's answer to a request this node relayed.
static void
s_rep_in (shoal_actor_t *self, const shoal_transport_in_t *in)
{
    const shoal_logs_rep_t *rep = &in->msg.u.logs_rep;
    for (size_t i = 0; self->logops && i < S_WAITS_MAX; i++) {
        s_wait_t *wait = &self->logops->waits[i];
        if (!wait->used || wait->id != rep->id ||
            memcmp (wait->node.bytes, in->envelope.sender.id, SHOAL_ID_SIZE) != 0)
            continue;
        wait->used = false;
        s_answer (self, wait->ref, rep->code, rep->reason, rep->output);
        return;
    }
}

bool
shoal_logs_message (shoal_actor_t *self, uint64_t now, const shoal_transport_in_t *in)
{
    (void) now;
    if (in->msg.type != SHOAL_MSG_LOGS && in->msg.type != SHOAL_MSG_LOGS_REP)
        return false;
    shoal_id_t from;
    memcpy (from.bytes, in->envelope.sender.id, SHOAL_ID_SIZE);
    if (!s_live_member (self, &from))
        return true; //  only members are told
    if (in->msg.type == SHOAL_MSG_LOGS)
        s_logs_in (self, in);
    else
        s_rep_in (self, in);
    return true;
}

void
shoal_logs_expire (shoal_actor_t *self, uint64_t now)
{
    for (size_t i = 0; self->logops && i < S_WAITS_MAX; i++) {
        s_wait_t *wait = &self->logops->waits[i];
        if (wait->used && wait->deadline <= now) {
            wait->used = false;
            s_answer (self, wait->ref, SHOAL_REPLY_TIMED_OUT, "the member did not answer in time",
                      NULL);
        }
    }
}

uint64_t
shoal_logs_next (const shoal_actor_t *self)
{
    uint64_t next = UINT64_MAX;
    for (size_t i = 0; self->logops && i < S_WAITS_MAX; i++)
        if (self->logops->waits[i].used && self->logops->waits[i].deadline < next)
            next = self->logops->waits[i].deadline;
    return next;
}

void
shoal_logs_free (shoal_actor_t *self)
{
    free (self->logops);
    self->logops = NULL;
}

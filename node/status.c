/*  node/status.c: the control endpoint (the `shoal` client's members,
    status, jobs, submit, rescale, remove and leave) and the leader's status
    table, which a node that does not lead asks of the leader, for a client
    or for shoal_node_status.
*/

#include "node/node.h"

#include "node/keys.h"
#include "node/logs.h"

#include <stdio.h>
#include <string.h>

//  Messages taken from the control endpoint before the others get a turn.
#define S_BURST 64
//  The CONTROL-REQ ids of status asks have the high bit set, apart from
//  the jobs' forwards (which count from 1); an ask waits this long at most.
#define S_ASK_ID       0x80000000u
#define S_ASK_WAIT_MAX 10000
//  How long a cordon, uncordon or drain sent on to another member waits
//  for its answer.
#define S_RELAY_WAIT 5000

//  ---------------------------------------------------------------------
//  The control endpoint

//  The bytes a status reply's rows may take: its frame, less room for the
//  envelope, the reply's other fields and the estimate's own error.
#define S_STATUS_BUDGET (SHOAL_FRAME_MAX - 256u * 1024)

//  The members, as a control reply lists them, in the arena.
static int
s_members_list (shoal_actor_t *self, shoal_control_rep_t *rep)
{
    shoal_membership_t *membership = shoal_peer_membership (self->peer);
    size_t size = shoal_membership_size (membership);
    rep->members = shoal_arena_alloc (&self->arena, (size ? size : 1) * sizeof *rep->members);
    if (!rep->members)
        return -1;
    rep->member_count = 0;
    for (size_t i = 0; i < size && rep->member_count < SHOAL_MEMBERS_MAX; i++) {
        shoal_membership_member_t member;
        if (shoal_membership_member_at (membership, i, &member) != 0)
            continue;
        rep->members[rep->member_count++] =
            (shoal_update_t){ .node = member.node,
                              .incarnation = member.incarnation,
                              .state = member.state,
                              .meta = (shoal_meta_t *) member.meta };
    }
    shoal_elector_saved_t saved;
    if (shoal_peer_elector (self->peer)) {
        shoal_elector_saved (shoal_peer_elector (self->peer), &saved);
        rep->voters_version = saved.voters_version;
        rep->voter_count = saved.voter_count;
        rep->voters = (shoal_id_t *) saved.voters;
    }
    return 0;
}

//  The tasks placed nowhere, after the count placed in rep, with why
//  (shoal_unplaced_rows), as many as fit one frame with the placed ones;
//  how many were left out is said in the reply's reason. Returns -1 when
//  the arena is full.
static int
s_unplaced_list (shoal_actor_t *self, shoal_handoff_t *handoff, shoal_control_rep_t *rep)
{
    size_t used = 0;
    for (uint32_t i = 0; i < rep->task_count; i++)
        used += shoal_status_row_bytes (rep->tasks[i].status.task, rep->tasks[i].status.error, "");
    const shoal_unplaced_t *unplaced;
    size_t count = shoal_handoff_unplaced (handoff, &unplaced);
    long left_out = shoal_unplaced_rows (unplaced, count, &self->arena, rep->tasks,
                                         &rep->task_count, SHOAL_TASKS_MAX, &used, S_STATUS_BUDGET);
    if (left_out < 0)
        return -1;
    if (left_out > 0) {
        char text[SHOAL_REASON_MAX + 1];
        snprintf (text, sizeof text,
                  "%ld more tasks placed nowhere are not listed: one reply must fit a frame",
                  left_out);
        rep->reason = shoal_arena_strndup (&self->arena, text, strlen (text));
        if (!rep->reason)
            return -1;
    }
    return 0;
}

//  The tasks: every task as the leader places it, those it places nowhere
//  included, on the acting leader; this node's own elsewhere.
//  A refusal of request id.
static shoal_control_rep_t
s_rep_refused (uint32_t id, uint8_t code, const char *reason)
{
    return (shoal_control_rep_t){ .id = id, .code = code, .reason = reason };
}

//  This node's own tasks, own_count of own, as rep's tasks.
static int
s_own_tasks (shoal_actor_t *self, const shoal_task_status_t *own, size_t own_count,
             shoal_control_rep_t *rep)
{
    rep->tasks = shoal_arena_alloc (&self->arena, (own_count ? own_count : 1) * sizeof *rep->tasks);
    if (!rep->tasks)
        return -1;
    for (size_t i = 0; i < own_count; i++)
        rep->tasks[i] = (shoal_task_report_t){ .node = self->id, .status = own[i], .reason = "" };
    rep->task_count = (uint32_t) own_count;
    rep->version = shoal_tasks_version (shoal_peer_tasks (self->peer)).version;
    return 0;
}

static int
s_own_tasks_all (shoal_actor_t *self, shoal_control_rep_t *rep)
{
    const shoal_task_status_t *own;
    size_t own_count = shoal_tasks_list (shoal_peer_tasks (self->peer), &own);
    return s_own_tasks (self, own, own_count, rep);
}

static int
s_tasks_list (shoal_actor_t *self, shoal_control_rep_t *rep)
{
    shoal_elector_t *elector = shoal_peer_elector (self->peer);
    shoal_handoff_t *handoff = shoal_peer_handoff (self->peer);
    const shoal_task_status_t *own;
    size_t own_count = shoal_tasks_list (shoal_peer_tasks (self->peer), &own);
    if (handoff && shoal_elector_acting (elector, shoal_actor_now ())) {
        const shoal_placement_t *placements;
        const shoal_unplaced_t *unplaced;
        size_t count = shoal_handoff_placements (handoff, &placements);
        size_t room = count + shoal_handoff_unplaced (handoff, &unplaced);
        rep->tasks = shoal_arena_alloc (&self->arena, (room ? room : 1) * sizeof *rep->tasks);
        if (!rep->tasks)
            return -1;
        for (size_t i = 0; i < count; i++) {
            //  The state and lag are the node's word in its last STATUS;
            //  a role it has not reported taking is still starting.
            shoal_task_status_t reported;
            bool known = shoal_handoff_reported (handoff, &placements[i].node, placements[i].task,
                                                 &reported) &&
                         reported.role == placements[i].role;
            rep->tasks[i] =
                (shoal_task_report_t){ .node = placements[i].node,
                                       .status = { .task = placements[i].task,
                                                   .role = placements[i].role,
                                                   .epoch = placements[i].epoch,
                                                   .state =
                                                       known ? reported.state : SHOAL_TASK_STARTING,
                                                   .lag = known ? reported.lag : 0,
                                                   .restarts = known ? reported.restarts : 0,
                                                   .last_exit = known ? reported.last_exit : 0,
                                                   .error = known ? reported.error : "" },
                                       .reason = "" };
        }
        rep->task_count = (uint32_t) count;
        rep->version = shoal_handoff_version (handoff);
        return s_unplaced_list (self, handoff, rep);
    }
    return s_own_tasks (self, own, own_count, rep);
}

//  The live member other than this node whose name is name: 0, or -1.
static int
s_member_named (shoal_actor_t *self, const char *name, shoal_id_t *id)
{
    shoal_membership_t *membership = shoal_peer_membership (self->peer);
    for (size_t i = 0; i < shoal_membership_size (membership); i++) {
        shoal_membership_member_t member;
        if (shoal_membership_member_at (membership, i, &member) == 0 && member.meta &&
            member.meta->name && strcmp (member.meta->name, name) == 0 &&
            (member.state == SHOAL_MEMBER_ALIVE || member.state == SHOAL_MEMBER_SUSPECT) &&
            memcmp (&member.node, &self->id, sizeof self->id) != 0) {
            *id = member.node;
            return 0;
        }
    }
    return -1;
}

//  Sends a control client's cordon, uncordon or drain (held under ref) on
//  to the member named in it, whose answer is the client's. False when
//  no other live member has that name, or too many asks wait.
static bool
s_cordon_relay (shoal_actor_t *self, uint64_t now, uint64_t ref, const shoal_control_req_t *req)
{
    shoal_id_t to_id;
    if (!req->job || !*req->job || self->ask_count == SHOAL_ASKS_MAX ||
        s_member_named (self, req->job, &to_id) != 0)
        return false;
    uint32_t id = S_ASK_ID | (++self->last_ask & ~S_ASK_ID);
    shoal_msg_t msg = { .type = SHOAL_MSG_CONTROL_REQ };
    msg.u.control_req =
        (shoal_control_req_t){ .id = id, .op = req->op, .job = req->job, .leave = req->leave };
    shoal_life_t to = { .life = 0 };
    memcpy (to.id, to_id.bytes, SHOAL_ID_SIZE);
    shoal_actor_send (self, &to, NULL, &msg);
    self->asks[self->ask_count++] = (shoal_ask_t){ .asker = { .ref = ref },
                                                   .id = id,
                                                   .op = req->op,
                                                   .leader = to_id,
                                                   .deadline = now + S_RELAY_WAIT };
    return true;
}

//  A cordon, uncordon or drain of this node (req->job: the node's name, or
//  empty for this node): marks it, and answers with this node alone in
//  members and the tasks it holds, for the client's progress.
static void
s_cordon (shoal_actor_t *self, uint64_t now, const shoal_control_req_t *req,
          shoal_control_rep_t *rep)
{
    static const uint8_t marks[] = { SHOAL_CORDON_CORDONED, SHOAL_CORDON_NONE,
                                     SHOAL_CORDON_DRAINING };
    shoal_membership_member_t me;
    const char *name = req->job ? req->job : "";
    uint8_t mark = marks[req->op - SHOAL_OP_CORDON], before = shoal_peer_cordoned (self->peer);
    if (shoal_membership_member (shoal_peer_membership (self->peer), &self->id, &me) != 0 ||
        !me.meta)
        *rep = s_rep_refused (req->id, SHOAL_REPLY_FAILED, "this node has no record of itself");
    else if (*name && strcmp (name, me.meta->name) != 0)
        *rep = s_rep_refused (req->id, SHOAL_REPLY_INVALID,
                              "no live member has that name (shoal members lists them)");
    else if (self->leaving)
        *rep = s_rep_refused (req->id, SHOAL_REPLY_INVALID, "this node is leaving");
    else if (shoal_peer_cordon (self->peer, now, mark) != 0)
        *rep = s_rep_refused (req->id, SHOAL_REPLY_FAILED, "the node's meta could not change");
    if (rep->code != SHOAL_REPLY_OK)
        return;
    shoal_actor_deliver (self, now);
    bool drained = shoal_peer_drained (self->peer);
    if (req->op == SHOAL_OP_DRAIN && !drained)
        rep->reason = SHOAL_DRAIN_ONGOING;
    else if (req->op == SHOAL_OP_DRAIN && req->leave) {
        shoal_actor_leave_start (self, now);
        rep->reason = SHOAL_DRAIN_LEAVING;
    }
    if (mark != before) //  a drain is asked again each second while it lasts
        shoal_eventlog_cordon (self->events, mark);
    shoal_update_t *update = shoal_arena_alloc (&self->arena, sizeof *update);
    if (!update || shoal_membership_member (shoal_peer_membership (self->peer), &self->id, &me) ||
        s_own_tasks_all (self, rep) != 0) {
        *rep = s_rep_refused (req->id, SHOAL_REPLY_FAILED, "out of memory");
        return;
    }
    *update = (shoal_update_t){ .node = me.node,
                                .incarnation = me.incarnation,
                                .state = me.state,
                                .meta = (shoal_meta_t *) me.meta };
    rep->members = update;
    rep->member_count = 1;
}

//  ---------------------------------------------------------------------
//  Status from the leader
//
//  `shoal status` wants the whole table, which only the acting leader
//  holds. Asked with a wait (the request's timeout_ms), a node that does
//  not lead asks the leader it follows (CONTROL-REQ STATUS) and answers
//  with the leader's table. With no leader, a refusal, or no answer within
//  the wait, it answers with its own tasks, and the reason says so.

//  An ok answer to request id, naming the leader this node follows and its
//  term; with no leader (zero), the highest term the node has seen, so
//  that an operator sees how far the elections went.
static shoal_control_rep_t
s_rep_ok (shoal_actor_t *self, uint64_t now, uint32_t id, const char *reason)
{
    shoal_control_rep_t rep = { .id = id, .code = SHOAL_REPLY_OK, .reason = reason };
    shoal_id_t leader = { 0 };
    const shoal_elector_t *elector = shoal_peer_elector (self->peer);
    if (shoal_peer_leader (self->peer, now, &leader, &rep.term) != 0) {
        memset (&leader, 0, sizeof leader);
        rep.term = shoal_elector_term (elector);
    }
    rep.leader = leader;
    return rep;
}

//  Fills the status call's rows and info from rep; whole when rep is the
//  acting leader's table.
static void
s_status_fill (shoal_call_t *call, const shoal_control_rep_t *rep, bool whole)
{
    shoal_call_list_t *list = &call->u.list;
    for (uint32_t i = 0; i < rep->task_count && i < list->max; i++) {
        const shoal_task_report_t *from = &rep->tasks[i];
        shoal_status_row_t row = { .role = from->status.role,
                                   .state = from->status.state,
                                   .lag = from->status.lag,
                                   .epoch_term = from->status.epoch.term,
                                   .epoch_version = from->status.epoch.version,
                                   .restarts = from->status.restarts,
                                   .last_exit = from->status.last_exit };
        shoal_id_format (from->node.bytes, true, row.node);
        snprintf (row.task, sizeof row.task, "%s", from->status.task);
        snprintf (row.error, sizeof row.error, "%s", from->status.error ? from->status.error : "");
        snprintf (row.reason, sizeof row.reason, "%s", from->reason ? from->reason : "");
        shoal_call_give ((char *) list->items + i * list->item_size, list->item_size, &row,
                         sizeof row, false);
    }
    list->count = rep->task_count;
    list->info = (shoal_status_info_t){ .size = sizeof list->info,
                                        .whole = whole && rep->code == SHOAL_REPLY_OK,
                                        .term = rep->term,
                                        .version = rep->version };
    shoal_id_format (rep->leader.bytes, true, list->info.leader);
    snprintf (list->info.reason, sizeof list->info.reason, "%s", rep->reason ? rep->reason : "");
    call->rc = rep->code == SHOAL_REPLY_OK ? 0 : -1;
}

//  Gives rep to whoever asked for a status: the control client, or the
//  call, which is then done.
static void
s_status_give (shoal_actor_t *self, shoal_asker_t asker, const shoal_control_rep_t *rep, bool whole)
{
    if (!asker.call) {
        shoal_control_server_answer (self->control, asker.ref, rep);
        return;
    }
    pthread_mutex_lock (&asker.call->lock);
    s_status_fill (asker.call, rep, whole);
    asker.call->done = true;
    pthread_cond_signal (&asker.call->done_cond);
    pthread_mutex_unlock (&asker.call->lock);
}

//  Answers asker with this node's own tasks, and why; the whole table when
//  this node acts as leader by now.
static void
s_status_local (shoal_actor_t *self, uint64_t now, shoal_asker_t asker, const char *why)
{
    shoal_control_rep_t rep = s_rep_ok (self, now, 0, why);
    bool whole = shoal_elector_acting (shoal_peer_elector (self->peer), now);
    if (whole)
        rep.reason = "";
    if (s_tasks_list (self, &rep) != 0)
        rep = (shoal_control_rep_t){ .code = SHOAL_REPLY_FAILED, .reason = "out of memory" };
    s_status_give (self, asker, &rep, whole);
}

//  Takes asker's status request, which waits up to wait_ms for the
//  leader's table: sent on to the leader, or answered now with this node's
//  tasks and why. False when this node answers it as it is (it leads, or
//  the asker does not wait).
static bool
s_status_ask (shoal_actor_t *self, uint64_t now, shoal_asker_t asker, uint64_t wait_ms)
{
    shoal_elector_t *elector = shoal_peer_elector (self->peer);
    if (!wait_ms || shoal_elector_acting (elector, now))
        return false;
    shoal_id_t leader;
    uint64_t term;
    if (shoal_peer_leader (self->peer, now, &leader, &term) != 0 ||
        memcmp (&leader, &self->id, sizeof leader) == 0) {
        s_status_local (self, now, asker, "no leader acts now: this node's own tasks");
        return true;
    }
    if (self->ask_count == SHOAL_ASKS_MAX) {
        s_status_local (self, now, asker,
                        "too many status requests wait for the leader: this node's own tasks");
        return true;
    }
    uint32_t id = S_ASK_ID | (++self->last_ask & ~S_ASK_ID);
    shoal_msg_t msg = { .type = SHOAL_MSG_CONTROL_REQ };
    msg.u.control_req = (shoal_control_req_t){ .id = id, .op = SHOAL_OP_STATUS };
    shoal_life_t to = { .life = 0 };
    memcpy (to.id, leader.bytes, SHOAL_ID_SIZE);
    shoal_actor_send (self, &to, NULL, &msg);
    uint64_t wait = wait_ms < S_ASK_WAIT_MAX ? wait_ms : S_ASK_WAIT_MAX;
    self->asks[self->ask_count++] = (shoal_ask_t){
        .asker = asker, .id = id, .op = SHOAL_OP_STATUS, .leader = leader, .deadline = now + wait
    };
    return true;
}

//  Whether in came from a member of this node's view.
static bool
s_from_member (shoal_actor_t *self, const shoal_transport_in_t *in)
{
    shoal_id_t from;
    shoal_membership_member_t member;
    memcpy (from.bytes, in->envelope.sender.id, SHOAL_ID_SIZE);
    return shoal_membership_member (shoal_peer_membership (self->peer), &from, &member) == 0;
}

//  A member's CONTROL-REQ STATUS, answered with the table when this node
//  acts as leader; or the leader's CONTROL-REP to a status this node asked.
//  True when in was one of these (the peer has no part in them).
bool
shoal_status_message (shoal_actor_t *self, uint64_t now, const shoal_transport_in_t *in)
{
    const shoal_msg_t *msg = &in->msg;
    shoal_elector_t *elector = shoal_peer_elector (self->peer);
    if (msg->type == SHOAL_MSG_CONTROL_REQ && msg->u.control_req.op == SHOAL_OP_STATUS) {
        if (!s_from_member (self, in))
            return true; //  only members are told
        shoal_control_rep_t rep = s_rep_ok (self, now, msg->u.control_req.id, "");
        if (!shoal_elector_acting (elector, now))
            rep = (shoal_control_rep_t){ .id = rep.id,
                                         .code = SHOAL_REPLY_NO_LEADER,
                                         .reason = "this node does not act as leader" };
        else if (s_tasks_list (self, &rep) != 0)
            rep = (shoal_control_rep_t){ .id = rep.id,
                                         .code = SHOAL_REPLY_FAILED,
                                         .reason = "out of memory" };
        shoal_msg_t answer = { .type = SHOAL_MSG_CONTROL_REP };
        answer.u.control_rep = rep;
        shoal_actor_send (self, &in->envelope.sender, NULL, &answer);
        return true;
    }
    const shoal_control_req_t *req = &msg->u.control_req;
    if (msg->type == SHOAL_MSG_CONTROL_REQ && req->op >= SHOAL_OP_CORDON &&
        req->op <= SHOAL_OP_DRAIN) {
        if (!s_from_member (self, in) || !req->job || !*req->job)
            return true; //  only members are answered, and only for a name
        shoal_control_rep_t rep = s_rep_ok (self, now, req->id, "");
        s_cordon (self, now, req, &rep);
        shoal_msg_t answer = { .type = SHOAL_MSG_CONTROL_REP };
        answer.u.control_rep = rep;
        shoal_actor_send (self, &in->envelope.sender, NULL, &answer);
        return true;
    }
    if (msg->type != SHOAL_MSG_CONTROL_REP || !(msg->u.control_rep.id & S_ASK_ID))
        return false;
    for (size_t i = 0; i < self->ask_count; i++) {
        shoal_ask_t *ask = &self->asks[i];
        if (ask->id != msg->u.control_rep.id ||
            memcmp (ask->leader.bytes, in->envelope.sender.id, SHOAL_ID_SIZE) != 0)
            continue;
        shoal_asker_t asker = ask->asker;
        uint8_t op = ask->op;
        *ask = self->asks[--self->ask_count];
        if (op != SHOAL_OP_STATUS)
            shoal_control_server_answer (self->control, asker.ref, &msg->u.control_rep);
        else if (msg->u.control_rep.code == SHOAL_REPLY_OK)
            s_status_give (self, asker, &msg->u.control_rep, true);
        else
            s_status_local (self, now, asker, "the leader no longer acts: this node's own tasks");
        return true;
    }
    return true; //  an answer no one waits for any more
}

void
shoal_status_expire (shoal_actor_t *self, uint64_t now)
{
    for (size_t i = 0; i < self->ask_count;) {
        if (self->asks[i].deadline > now) {
            i++;
            continue;
        }
        shoal_asker_t asker = self->asks[i].asker;
        uint8_t op = self->asks[i].op;
        self->asks[i] = self->asks[--self->ask_count];
        shoal_arena_reset (&self->arena);
        if (op != SHOAL_OP_STATUS) {
            shoal_control_rep_t rep =
                s_rep_refused (0, SHOAL_REPLY_FAILED, "the member named did not answer within 5 s");
            shoal_control_server_answer (self->control, asker.ref, &rep);
        } else
            s_status_local (self, now, asker,
                            "the leader did not answer in time: this node's own tasks");
    }
}

//  Forgets the status asks of call, which gave up waiting.
void
shoal_status_forget (shoal_actor_t *self, const shoal_call_t *call)
{
    for (size_t i = 0; i < self->ask_count;)
        if (self->asks[i].asker.call == call)
            self->asks[i] = self->asks[--self->ask_count];
        else
            i++;
}

void
shoal_status_serve (shoal_actor_t *self, uint64_t now)
{
    for (int i = 0; i < S_BURST; i++) {
        shoal_control_req_t req;
        uint64_t ref = ++self->next_ref;
        shoal_arena_reset (&self->arena);
        int rc = shoal_control_server_receive (self->control, &self->arena, ref, &req);
        if (rc <= 0)
            return;
        shoal_control_rep_t rep = s_rep_ok (self, now, req.id, "");
        switch (req.op) {
        case SHOAL_OP_MEMBERS:
            if (s_members_list (self, &rep) != 0)
                rep = (shoal_control_rep_t){ .id = req.id,
                                             .code = SHOAL_REPLY_FAILED,
                                             .reason = "out of memory" };
            break;
        case SHOAL_OP_STATUS:
            if (s_status_ask (self, now, (shoal_asker_t){ .ref = ref }, req.timeout_ms))
                continue; //  answered with the leader's table, or this node's
            if (s_tasks_list (self, &rep) != 0)
                rep = (shoal_control_rep_t){ .id = req.id,
                                             .code = SHOAL_REPLY_FAILED,
                                             .reason = "out of memory" };
            break;
        case SHOAL_OP_JOBS: {
            const shoal_jobspec_t *specs;
            rep.job_count = (uint32_t) shoal_jobs_specs (shoal_peer_jobs (self->peer), &specs);
            rep.jobs = (shoal_jobspec_t *) specs;
            uint64_t term;
            shoal_jobs_name (shoal_peer_jobs (self->peer), &term, &rep.version);
            break;
        }
        case SHOAL_OP_LEAVE:
            shoal_actor_leave_start (self, now);
            break;
        case SHOAL_OP_KEYS:
            shoal_keys_request (self, now, ref, &req);
            continue; //  answered when the leader answers, or now
        case SHOAL_OP_CORDON:
        case SHOAL_OP_UNCORDON:
        case SHOAL_OP_DRAIN:
            if (s_cordon_relay (self, now, ref, &req))
                continue; //  answered when the member named answers
            s_cordon (self, now, &req, &rep);
            break;
        case SHOAL_OP_LOGS:
            shoal_logs_request (self, now, ref, &req);
            continue; //  answered when the member answers, or now

        default:
            //  Submit, rescale, remove: answered when the cluster answers.
            shoal_eventlog_request (self->events, ref, &req);
            if (shoal_peer_request (self->peer, now, ref, &req) == 0) {
                shoal_actor_deliver (self, now);
                continue;
            }
            rep.code = SHOAL_REPLY_INVALID;
            rep.reason = "the node does not take this request";
            break;
        }
        shoal_control_server_answer (self->control, ref, &rep);
    }
}

//  The status table: answered now (rc 0 or -1), or once the leader
//  answers (rc 1: the call waits for its answer).
void
shoal_status_call (shoal_actor_t *self, shoal_call_t *call)
{
    uint64_t now = shoal_actor_now ();
    shoal_asker_t asker = { .call = call };
    shoal_arena_reset (&self->arena);
    if (s_status_ask (self, now, asker, call->u.list.wait_ms)) {
        call->rc = call->done ? call->rc : 1;
        return;
    }
    shoal_control_rep_t rep = s_rep_ok (self, now, 0, "");
    bool whole = shoal_elector_acting (shoal_peer_elector (self->peer), now);
    if (!whole)
        rep.reason = call->u.list.wait_ms ? "no leader acts now: this node's own tasks"
                                          : "not asked of the leader: this node's own tasks";
    if (s_tasks_list (self, &rep) != 0)
        rep = (shoal_control_rep_t){ .code = SHOAL_REPLY_FAILED, .reason = "out of memory" };
    s_status_fill (call, &rep, whole);
}

/*  peer/peer.c: one node's cores, wired together.

    Every input goes to one core; its outputs are then taken in an order
    that never changes: what it persists, its messages, its events, each
    event fed to the cores that follow it (whose outputs are taken the same
    way, at once), and last the new deadline. A core's outbox is read
    before the core is asked anything else, since the next input clears it.
*/
#include "peer/peer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct _shoal_peer_t {
    shoal_peer_config_t config;
    shoal_peer_sink_t sink;
    shoal_id_t id;
    uint64_t now; //  of the input being handled
    shoal_membership_t *membership;
    shoal_elector_t *elector; //  NULL without an election
    shoal_tasks_t *tasks;     //  NULL without tasks
    shoal_jobs_t *jobs;       //  NULL without tasks
    shoal_handoff_t *handoff; //  while its elector acts
    uint64_t handoff_term;    //  the term it acts with
    bool handoff_acting;      //  false: kept, silent, for the term may come back
    shoal_epoch_t jobs_fed;   //  the name of the specs its handoff has the tasks of
    shoal_epoch_t tasks_fed;  //  the name of the specs its tasks were told of
    uint64_t acting_term;     //  the term of its last LEADER event about itself
    bool election_held;       //  election_waits, and no other member was live yet
    uint64_t listen_until;    //  after the wait: no election before this, without a leader
    bool draining;            //  leaving, and leading: moving its own tasks away first
    bool leave_due;           //  drained: leaves the view once the input is handled
};

//  ---------------------------------------------------------------------
//  Messages

//  A message for the jobs (a SYNC-REQ or SYNC-REPLY may be for both the
//  jobs and the membership).
static bool
s_jobs_message (const shoal_msg_t *msg)
{
    switch (msg->type) {
    case SHOAL_MSG_JOB:
    case SHOAL_MSG_JOB_ACK:
    case SHOAL_MSG_CONTROL_REQ:
    case SHOAL_MSG_CONTROL_REP:
        return true;
    case SHOAL_MSG_SYNC_REQ:
        return msg->u.sync_req.want & SHOAL_SYNC_JOBS;
    case SHOAL_MSG_SYNC_REPLY:
        return msg->u.sync_reply.parts & SHOAL_SYNC_JOBS;
    default:
        return false;
    }
}

//  A SYNC-REQ or SYNC-REPLY for the membership (it may be for the jobs too).
static bool
s_members_sync (const shoal_msg_t *msg)
{
    if (msg->type == SHOAL_MSG_SYNC_REQ)
        return msg->u.sync_req.want & SHOAL_SYNC_MEMBERS;
    if (msg->type == SHOAL_MSG_SYNC_REPLY)
        return msg->u.sync_reply.parts & SHOAL_SYNC_MEMBERS;
    return false;
}

shoal_peer_layer_t
shoal_peer_layer (const shoal_msg_t *msg)
{
    switch (msg->type) {
    case SHOAL_MSG_ELECTION:
    case SHOAL_MSG_ANSWER:
    case SHOAL_MSG_COORDINATOR:
    case SHOAL_MSG_COORDINATOR_ACK:
        return SHOAL_PEER_ELECTION;
    case SHOAL_MSG_ASSIGN:
    case SHOAL_MSG_STATUS:
        return SHOAL_PEER_TASKS;
    default:
        return s_jobs_message (msg) ? SHOAL_PEER_JOBS : SHOAL_PEER_MEMBERSHIP;
    }
}

//  ---------------------------------------------------------------------
//  Life

const char *
shoal_peer_config_check (const shoal_peer_config_t *config)
{
    const char *why = shoal_membership_config_check (&config->membership);
    if (!why && config->election)
        why = shoal_elector_config_check (&config->elector);
    if (!why && config->tasks && !config->election)
        why = "tasks need the election";
    if (!why && config->tasks)
        why = shoal_tasks_config_check (&config->node_tasks);
    if (!why && config->tasks)
        why = shoal_handoff_config_check (&config->handoff);
    if (!why && config->tasks)
        why = shoal_jobs_config_check (&config->jobs);
    return why;
}

shoal_peer_t *
shoal_peer_new (const shoal_peer_config_t *config, const shoal_id_t *id, uint64_t incarnation,
                const shoal_meta_t *meta, const shoal_peer_saved_t *saved, uint64_t seed,
                uint64_t now_ms, shoal_metapool_t *metas, const shoal_peer_sink_t *sink)
{
    if (shoal_peer_config_check (config))
        return NULL;
    shoal_peer_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->config = *config;
    if (sink)
        self->sink = *sink;
    self->id = *id;
    self->now = now_ms;
    self->election_held = config->election && config->election_waits;
    self->membership =
        shoal_membership_new (&config->membership, id, incarnation, meta, seed, now_ms, metas);
    bool failed = !self->membership;
    if (!failed && config->election) {
        self->elector = shoal_elector_new (&config->elector, id, meta->priority,
                                           saved ? saved->elector : NULL, now_ms);
        failed = !self->elector;
    }
    if (!failed && config->tasks) {
        //  A new life runs nothing: what the last one ran died with it. The
        //  specs come from its disk.
        shoal_jobs_saved_t none = { 0 };
        self->tasks = shoal_tasks_new (&config->node_tasks, id, now_ms);
        self->jobs =
            shoal_jobs_new (&config->jobs, id, saved && saved->jobs ? saved->jobs : &none, now_ms);
        failed = !self->tasks || !self->jobs;
        if (!failed) {
            //  Which tasks keep state, before any assignment (nothing runs
            //  yet: no command comes of it).
            const shoal_jobspec_t *specs;
            size_t count = shoal_jobs_specs (self->jobs, &specs);
            failed = shoal_tasks_jobs (self->tasks, now_ms, specs, count) != 0;
            shoal_jobs_name (self->jobs, &self->tasks_fed.term, &self->tasks_fed.version);
        }
    }
    if (failed)
        shoal_peer_destroy (&self);
    return self;
}

void
shoal_peer_destroy (shoal_peer_t **self_p)
{
    shoal_peer_t *self = *self_p;
    if (!self)
        return;
    shoal_membership_destroy (&self->membership);
    shoal_elector_destroy (&self->elector);
    shoal_tasks_destroy (&self->tasks);
    shoal_jobs_destroy (&self->jobs);
    shoal_handoff_destroy (&self->handoff);
    free (self);
    *self_p = NULL;
}

//  ---------------------------------------------------------------------
//  Outputs of each core

//  Sends msg to the member with id to, whichever life it has, as the cores
//  other than the membership address members.
static void
s_send_id (shoal_peer_t *self, const shoal_id_t *to, const shoal_msg_t *msg)
{
    shoal_life_t recipient = { 0 };
    memcpy (recipient.id, to->bytes, sizeof recipient.id);
    if (self->sink.send)
        self->sink.send (self->sink.arg, &recipient, NULL, msg);
}

static void
s_schedule (shoal_peer_t *self)
{
    if (self->sink.deadline)
        self->sink.deadline (self->sink.arg, shoal_peer_next (self));
}

//  Ends the election's wait for another member: from now on the elector
//  listens settle_ms for a leader, as a node that just started does, and
//  then may stand.
static void
s_election_release (shoal_peer_t *self)
{
    if (!self->election_held)
        return;
    self->election_held = false;
    self->listen_until = self->now + self->config.elector.settle_ms;
}

//  True while the elector must not be ticked: it waits for another member,
//  or listens for a leader after the wait and has none yet.
static bool
s_election_waits (const shoal_peer_t *self, uint64_t now)
{
    if (self->election_held)
        return true;
    shoal_id_t leader;
    uint64_t term;
    return now < self->listen_until &&
           shoal_elector_leader (self->elector, now, &leader, &term) != 0;
}

static void s_leave_view (shoal_peer_t *self);

//  True when no move the acting leader made is halfway (its handoff is
//  settled), or this node does not act as leader.
static bool
s_moves_done (const shoal_peer_t *self)
{
    return !self->handoff_acting || !self->handoff || shoal_handoff_settled (self->handoff);
}

//  A leaving leader leaves the view once it holds no task, no move it made
//  is halfway, and it has handed its vote over (shoal_elector_leave), or
//  once it no longer leads: at the end of the input that drained it
//  (s_leave_if_due), not here, where the caller may be walking the
//  membership's events, which the leave replaces.
static void
s_drain_check (shoal_peer_t *self)
{
    const shoal_task_status_t *list;
    bool tasks_gone = !self->handoff_acting || !self->tasks ||
                      (shoal_tasks_list (self->tasks, &list) == 0 && s_moves_done (self));
    bool vote_gone = !self->elector || shoal_elector_handed_off (self->elector, self->now);
    if (self->draining && tasks_gone && vote_gone) {
        self->draining = false;
        self->leave_due = true;
    }
}

static void
s_leave_if_due (shoal_peer_t *self)
{
    if (self->leave_due) {
        self->leave_due = false;
        s_leave_view (self);
    }
}

static void
s_task_outputs (shoal_peer_t *self)
{
    const shoal_tasks_command_t *commands;
    size_t count = shoal_tasks_commands (self->tasks, &commands);
    for (size_t i = 0; i < count; i++)
        if (self->sink.command)
            self->sink.command (self->sink.arg, &commands[i]);
    const shoal_tasks_send_t *sends;
    count = shoal_tasks_outbox (self->tasks, &sends);
    for (size_t i = 0; i < count; i++)
        s_send_id (self, &sends[i].to, &sends[i].msg);
    if (self->sink.tasks_done)
        self->sink.tasks_done (self->sink.arg);
    s_drain_check (self);
}

static void
s_handoff_outputs (shoal_peer_t *self)
{
    const shoal_handoff_send_t *sends;
    size_t count = shoal_handoff_outbox (self->handoff, &sends);
    for (size_t i = 0; i < count && self->handoff_acting; i++)
        s_send_id (self, &sends[i].to, &sends[i].msg);
    s_drain_check (self);
}

//  What the handoff is told of a member: declared dead by the failure
//  detector, gone by a leave (or leaving: a voter that follows stays in
//  the view until its leader dropped it from the voter set, but says it
//  leaves in its acknowledgements, and must be given nothing meanwhile),
//  suspected, or alive.
static shoal_handoff_presence_t
s_presence (const shoal_peer_t *self, const shoal_id_t *id, bool dead, bool left, bool suspect)
{
    bool leaving = self->elector && shoal_elector_member_leaving (self->elector, id);
    return dead              ? SHOAL_HANDOFF_DEAD
           : left || leaving ? SHOAL_HANDOFF_GONE
           : suspect         ? SHOAL_HANDOFF_SUSPECT
                             : SHOAL_HANDOFF_LIVE;
}

//  This node acts as leader at term from now: a new handoff, told of every
//  member its view holds and of the tasks.
static void
s_handoff_start (shoal_peer_t *self, uint64_t term)
{
    shoal_handoff_destroy (&self->handoff);
    self->handoff = shoal_handoff_new (&self->config.handoff, term,
                                       shoal_tasks_version (self->tasks).version, self->now);
    if (!self->handoff)
        return;
    //  The first term: no leader granted anything before this one.
    if (self->config.elector.quorum && term == 1)
        shoal_handoff_first_term (self->handoff);
    self->handoff_term = term;
    self->handoff_acting = true;
    const shoal_assign_task_t *tasks;
    size_t count = shoal_jobs_tasks (self->jobs, &tasks);
    shoal_handoff_tasks (self->handoff, self->now, tasks, count);
    shoal_jobs_name (self->jobs, &self->jobs_fed.term, &self->jobs_fed.version);
    s_handoff_outputs (self);
    for (size_t i = 0; i < shoal_membership_size (self->membership); i++) {
        shoal_membership_member_t member;
        if (shoal_membership_member_at (self->membership, i, &member) != 0)
            continue;
        shoal_handoff_member (self->handoff, self->now, &member.node, member.meta,
                              s_presence (self, &member.node, member.state == SHOAL_MEMBER_DEAD,
                                          member.state == SHOAL_MEMBER_LEFT,
                                          member.state == SHOAL_MEMBER_SUSPECT));
        s_handoff_outputs (self);
    }
    //  A leader that is leaving is still alive in its view (it leaves the
    //  view last), but must be given nothing.
    if (self->draining) {
        shoal_handoff_member (self->handoff, self->now, &self->id, NULL, SHOAL_HANDOFF_GONE);
        s_handoff_outputs (self);
    }
}

//  The outputs of the last input to the jobs: messages, answers to the
//  requests, and what they persist.
static void
s_jobs_sent (shoal_peer_t *self)
{
    const shoal_jobs_send_t *sends;
    size_t count = shoal_jobs_outbox (self->jobs, &sends);
    for (size_t i = 0; i < count; i++)
        s_send_id (self, &sends[i].to, &sends[i].msg);
    const shoal_jobs_reply_t *replies;
    count = shoal_jobs_replies (self->jobs, &replies);
    for (size_t i = 0; i < count; i++)
        if (self->sink.reply)
            self->sink.reply (self->sink.arg, &replies[i]);
    shoal_jobs_saved_t jobs;
    if (shoal_jobs_saved (self->jobs, &jobs) && self->sink.saved)
        self->sink.saved (self->sink.arg, &(shoal_peer_saved_t){ .jobs = &jobs });
}

//  Capacity for every rescale that waits, from the handoff: after every
//  input to the jobs or the handoff.
static void
s_jobs_capacity (shoal_peer_t *self)
{
    const shoal_jobs_wait_t *waits;
    size_t count = self->jobs ? shoal_jobs_waiting (self->jobs, &waits) : 0;
    if (!count || !self->handoff || !self->handoff_acting)
        return;
    //  Each answer is an input that replaces the list: the names first.
    char (*names)[SHOAL_NAME_MAX + 1] = calloc (count, sizeof *names);
    for (size_t i = 0; names && i < count; i++)
        snprintf (names[i], sizeof names[i], "%s", waits[i].job);
    for (size_t i = 0; names && i < count; i++) {
        shoal_jobs_capacity (self->jobs, self->now, names[i],
                             shoal_handoff_capacity (self->handoff, names[i]));
        s_jobs_sent (self);
    }
    free (names);
}

//  The tasks learn which jobs keep state whenever the specs change: a
//  stateless task is stopped, not kept as a standby, without a lease.
static void
s_tasks_jobs (shoal_peer_t *self)
{
    uint64_t term, version;
    shoal_jobs_name (self->jobs, &term, &version);
    if (term == self->tasks_fed.term && version == self->tasks_fed.version)
        return;
    const shoal_jobspec_t *specs;
    size_t count = shoal_jobs_specs (self->jobs, &specs);
    //  Short of memory, the tasks keep what they knew, and are told again
    //  at the next change.
    if (shoal_tasks_jobs (self->tasks, self->now, specs, count) == 0)
        self->tasks_fed = (shoal_epoch_t){ term, version };
    s_task_outputs (self);
}

//  After an input to the jobs: their outputs, the tasks told of the specs,
//  the capacity waiting rescales need, and, when this node leads and has
//  caught up, the handoff of its term with the tasks of its specs.
static void
s_jobs_outputs (shoal_peer_t *self)
{
    s_jobs_sent (self);
    s_tasks_jobs (self);
    s_jobs_capacity (self);
    if (!shoal_jobs_ready (self->jobs))
        return;
    uint64_t term, version;
    shoal_jobs_name (self->jobs, &term, &version);
    if (!self->handoff || self->handoff_term != self->acting_term) {
        s_handoff_start (self, self->acting_term);
        self->handoff_acting = self->handoff != NULL;
    } else if (self->jobs_fed.term != term || self->jobs_fed.version != version) {
        const shoal_assign_task_t *tasks;
        size_t count = shoal_jobs_tasks (self->jobs, &tasks);
        shoal_handoff_tasks (self->handoff, self->now, tasks, count);
        self->jobs_fed = (shoal_epoch_t){ term, version };
        s_handoff_outputs (self);
    } else
        return;
    const shoal_assign_task_t *tasks;
    size_t count = shoal_jobs_tasks (self->jobs, &tasks);
    if (self->sink.handoff_tasks)
        self->sink.handoff_tasks (self->sink.arg, self->acting_term, tasks, count);
}

//  An elector event, for the jobs, the tasks and the handoff.
static void
s_leader_event (shoal_peer_t *self, const shoal_elector_event_t *event)
{
    if (!self->tasks)
        return;
    bool leader = event->type == SHOAL_ELECTOR_LEADER;
    bool self_leads = leader && memcmp (&event->leader, &self->id, sizeof self->id) == 0;
    //  A leader that stops acting keeps its handoff, silent, and takes it up
    //  again if it acts again with the same term (the elector lets it, when
    //  nobody took the term meanwhile): a second handoff for one term would
    //  publish versions and grant epochs the first one had already used.
    //  Its jobs keep their leadership the same way. The handoff starts once
    //  the jobs have caught up (s_jobs_outputs).
    if (self_leads) {
        //  Acting all along, at a term above: the same leadership goes on.
        if (self->handoff && self->handoff_acting && event->term > self->handoff_term &&
            shoal_handoff_retitle (self->handoff, self->now, event->term) == 0) {
            self->handoff_term = event->term;
            s_handoff_outputs (self);
        }
        self->acting_term = event->term;
        self->handoff_acting = self->handoff != NULL && self->handoff_term == event->term;
        shoal_jobs_leader (self->jobs, self->now, &self->id, event->term, true);
        if (self->handoff_acting) {
            shoal_handoff_tick (self->handoff, self->now);
            s_handoff_outputs (self);
        }
    } else if (leader) {
        shoal_handoff_destroy (&self->handoff);
        shoal_jobs_leader (self->jobs, self->now, &event->leader, event->term, false);
    } else {
        self->handoff_acting = false;
        if (shoal_jobs_ready (self->jobs) || self->handoff)
            shoal_jobs_leader (self->jobs, self->now, &self->id, self->handoff_term, false);
        else
            shoal_jobs_leader (self->jobs, self->now, NULL, 0, false);
    }
    s_jobs_outputs (self);
    shoal_tasks_leader (self->tasks, self->now, leader ? &event->leader : NULL,
                        leader ? event->term : 0);
    s_task_outputs (self);
}

//  After an input to the elector: what it persists, its messages, then its
//  events, to the observer and to the jobs, the tasks and the handoff.
static void
s_elector_outputs (shoal_peer_t *self)
{
    shoal_elector_saved_t saved;
    if (shoal_elector_saved (self->elector, &saved)) {
        if (self->sink.saved)
            self->sink.saved (self->sink.arg, &(shoal_peer_saved_t){ .elector = &saved });
        if (self->tasks) {
            shoal_jobs_voters (self->jobs, self->now, saved.voters, saved.voter_count);
            s_jobs_outputs (self);
        }
    }
    const shoal_elector_send_t *sends;
    size_t count = shoal_elector_outbox (self->elector, &sends);
    for (size_t i = 0; i < count; i++)
        s_send_id (self, &sends[i].to, &sends[i].msg);
    shoal_id_t leaver;
    if (self->handoff && shoal_elector_leaving_news (self->elector, &leaver)) {
        shoal_handoff_member (self->handoff, self->now, &leaver, NULL, SHOAL_HANDOFF_GONE);
        s_handoff_outputs (self);
        s_jobs_capacity (self);
    }
    //  Events last: the tasks' inputs below make outputs of their own, and
    //  the elector's outbox must be sent before anything else is asked of it.
    const shoal_elector_event_t *events;
    count = shoal_elector_events (self->elector, &events);
    shoal_elector_event_t copies[8];
    if (count > sizeof copies / sizeof copies[0])
        count = sizeof copies / sizeof copies[0];
    memcpy (copies, events, count * sizeof *events);
    for (size_t i = 0; i < count; i++) {
        if (self->sink.leader_event)
            self->sink.leader_event (self->sink.arg, &copies[i]);
        s_leader_event (self, &copies[i]);
    }
    s_drain_check (self);
}

//  Alive and suspect members are live, dead and left ones are not.
static bool
s_live (const shoal_membership_event_t *event)
{
    return event->type != SHOAL_MEMBERSHIP_DEAD && event->type != SHOAL_MEMBERSHIP_LEFT;
}

//  After an input to the membership: its events, to the observer and to
//  every other core, its messages, and the new deadline.
static void
s_outputs (shoal_peer_t *self)
{
    const shoal_membership_event_t *events;
    size_t count = shoal_membership_events (self->membership, &events);
    for (size_t i = 0; i < count; i++) {
        if (self->sink.member_event)
            self->sink.member_event (self->sink.arg, &events[i]);
        if (events[i].type == SHOAL_MEMBERSHIP_UP &&
            memcmp (&events[i].node, &self->id, sizeof self->id) != 0)
            s_election_release (self); //  a seed answered, or someone found this node
        if (self->elector) {
            if (events[i].type == SHOAL_MEMBERSHIP_LEFT)
                shoal_elector_member_left (self->elector, self->now, &events[i].node,
                                           events[i].meta->priority);
            else {
                shoal_elector_member (self->elector, self->now, &events[i].node,
                                      events[i].meta->priority, s_live (&events[i]));
                shoal_elector_suspect (self->elector, &events[i].node,
                                       events[i].type == SHOAL_MEMBERSHIP_SUSPECT);
            }
            s_elector_outputs (self);
        }
        if (self->handoff) {
            shoal_handoff_member (self->handoff, self->now, &events[i].node, events[i].meta,
                                  s_presence (self, &events[i].node,
                                              events[i].type == SHOAL_MEMBERSHIP_DEAD,
                                              events[i].type == SHOAL_MEMBERSHIP_LEFT,
                                              events[i].type == SHOAL_MEMBERSHIP_SUSPECT));
            s_handoff_outputs (self);
            s_jobs_capacity (self);
        }
        if (self->tasks) {
            shoal_jobs_member (self->jobs, self->now, &events[i].node, s_live (&events[i]));
            s_jobs_outputs (self);
        }
    }
    const shoal_membership_send_t *sends;
    count = shoal_membership_outbox (self->membership, &sends);
    for (size_t i = 0; i < count; i++)
        if (self->sink.send)
            self->sink.send (self->sink.arg, &sends[i].to, sends[i].addr, &sends[i].msg);
    s_schedule (self);
}

//  Leaves the view, and with it the election: a node that left neither
//  votes, nor stands, nor leads again in this life, even while its
//  application keeps it up.
static void
s_leave_view (shoal_peer_t *self)
{
    if (self->elector) {
        shoal_elector_retire (self->elector, self->now);
        s_elector_outputs (self);
    }
    shoal_membership_leave (self->membership, self->now);
    s_outputs (self);
}

//  ---------------------------------------------------------------------
//  Inputs

int
shoal_peer_receive (shoal_peer_t *self, uint64_t now_ms, const shoal_envelope_t *envelope,
                    const shoal_msg_t *msg, const char *from_addr)
{
    self->now = now_ms;
    shoal_id_t from;
    memcpy (from.bytes, envelope->sender.id, sizeof from.bytes);
    shoal_membership_heard (self->membership, self->now, &envelope->sender);
    int rc = -1;
    switch (shoal_peer_layer (msg)) {
    case SHOAL_PEER_TASKS:
        if (msg->type == SHOAL_MSG_ASSIGN && self->tasks) {
            rc = shoal_tasks_assign (self->tasks, self->now, &from, &msg->u.assign);
            s_task_outputs (self);
        } else if (msg->type == SHOAL_MSG_STATUS && self->handoff) {
            rc = shoal_handoff_status (self->handoff, self->now, &from, envelope->sender.life,
                                       &msg->u.status);
            s_handoff_outputs (self);
            s_jobs_capacity (self);
        }
        s_schedule (self);
        s_leave_if_due (self);
        return rc;
    case SHOAL_PEER_ELECTION:
        if (self->elector) {
            rc = shoal_elector_receive (self->elector, self->now, &from, msg);
            s_elector_outputs (self);
            s_schedule (self);
        }
        s_leave_if_due (self);
        return rc;
    case SHOAL_PEER_JOBS:
        if (self->tasks) {
            rc = shoal_jobs_receive (self->jobs, self->now, &from, msg);
            s_jobs_outputs (self);
            s_schedule (self);
        }
        if (!s_members_sync (msg)) {
            s_leave_if_due (self);
            return rc;
        }
        break;
    case SHOAL_PEER_MEMBERSHIP:
        break;
    }
    int taken = shoal_membership_receive (self->membership, self->now, envelope, msg, from_addr);
    s_outputs (self);
    s_leave_if_due (self);
    return rc == 0 ? 0 : taken;
}

void
shoal_peer_tick (shoal_peer_t *self, uint64_t now_ms)
{
    self->now = now_ms;
    if (self->elector && shoal_elector_next (self->elector) <= self->now &&
        !s_election_waits (self, self->now)) {
        shoal_elector_tick (self->elector, self->now);
        s_elector_outputs (self);
    }
    if (self->tasks && shoal_tasks_next (self->tasks) <= self->now) {
        shoal_tasks_tick (self->tasks, self->now);
        s_task_outputs (self);
    }
    if (self->handoff && shoal_handoff_next (self->handoff) <= self->now) {
        shoal_handoff_tick (self->handoff, self->now);
        s_handoff_outputs (self);
        s_jobs_capacity (self);
    }
    if (self->tasks && shoal_jobs_next (self->jobs) <= self->now) {
        shoal_jobs_tick (self->jobs, self->now);
        s_jobs_outputs (self);
    }
    if (shoal_membership_next (self->membership) <= self->now) {
        shoal_membership_tick (self->membership, self->now);
        s_outputs (self);
    } else
        s_schedule (self); //  the membership's outputs are of an input already handled
    s_leave_if_due (self);
}

void
shoal_peer_resume (shoal_peer_t *self, uint64_t now_ms)
{
    self->now = now_ms;
    if (self->elector && !s_election_waits (self, self->now)) {
        shoal_elector_tick (self->elector, self->now);
        s_elector_outputs (self);
    }
    if (self->tasks) {
        shoal_tasks_tick (self->tasks, self->now);
        s_task_outputs (self);
    }
    if (self->handoff) {
        shoal_handoff_tick (self->handoff, self->now);
        s_handoff_outputs (self);
    }
    if (self->tasks) {
        shoal_jobs_tick (self->jobs, self->now);
        s_jobs_outputs (self);
    }
    shoal_membership_tick (self->membership, self->now);
    s_outputs (self);
    s_leave_if_due (self);
}

uint64_t
shoal_peer_next (const shoal_peer_t *self)
{
    uint64_t next = shoal_membership_next (self->membership);
    //  A waiting elector's deadline is held back: to the end of its
    //  listening (or for good, while it waits for a member).
    uint64_t elector_next = self->elector ? shoal_elector_next (self->elector) : UINT64_MAX;
    if (self->elector && s_election_waits (self, self->now))
        elector_next = self->election_held                 ? UINT64_MAX
                       : elector_next > self->listen_until ? elector_next
                                                           : self->listen_until;
    if (elector_next < next)
        next = elector_next;
    if (self->tasks && shoal_tasks_next (self->tasks) < next)
        next = shoal_tasks_next (self->tasks);
    if (self->handoff && shoal_handoff_next (self->handoff) < next)
        next = shoal_handoff_next (self->handoff);
    if (self->jobs && shoal_jobs_next (self->jobs) < next)
        next = shoal_jobs_next (self->jobs);
    return next;
}

void
shoal_peer_hint (shoal_peer_t *self, uint64_t now_ms, const shoal_id_t *id)
{
    self->now = now_ms;
    shoal_membership_hint (self->membership, self->now, id);
    s_outputs (self);
}

int
shoal_peer_join (shoal_peer_t *self, uint64_t now_ms, const char *addr)
{
    self->now = now_ms;
    int rc = shoal_membership_join (self->membership, self->now, addr);
    s_outputs (self);
    return rc;
}

int
shoal_peer_introduce (shoal_peer_t *self, uint64_t now_ms, const shoal_life_t *node,
                      uint64_t incarnation, uint8_t flags, const char *addr)
{
    self->now = now_ms;
    int rc =
        shoal_membership_introduce (self->membership, self->now, node, incarnation, flags, addr);
    s_outputs (self);
    return rc;
}

int
shoal_peer_settle (shoal_peer_t *self, uint64_t now_ms, const shoal_update_t *updates,
                   uint32_t count)
{
    self->now = now_ms;
    int rc = shoal_membership_settle (self->membership, self->now, updates, count);
    s_outputs (self);
    return rc;
}

int
shoal_peer_leave (shoal_peer_t *self, uint64_t now_ms)
{
    if (self->draining)
        return -1;
    self->now = now_ms;
    //  The leader moves its tasks away, and hands its vote over, before it
    //  leaves the view, so that the tasks never wait for the next leader and
    //  the others keep a majority without it.
    if (self->elector) {
        shoal_elector_leave (self->elector, self->now);
        s_elector_outputs (self);
    }
    bool leads = self->handoff && self->handoff_acting && self->tasks;
    if (leads || (self->elector && !shoal_elector_handed_off (self->elector, self->now))) {
        self->draining = true;
        //  A handoff not acting yet (its leader waits for the jobs, or lost
        //  its majority for a while) must know too, for when it acts.
        if (self->handoff) {
            shoal_handoff_member (self->handoff, self->now, &self->id, NULL, SHOAL_HANDOFF_GONE);
            s_handoff_outputs (self);
            s_jobs_capacity (self);
        }
        s_drain_check (self);
        s_schedule (self);
        s_leave_if_due (self);
        return 0;
    }
    s_leave_view (self);
    return 0;
}

void
shoal_peer_election_release (shoal_peer_t *self, uint64_t now_ms)
{
    self->now = now_ms;
    s_election_release (self);
    s_schedule (self);
}

bool
shoal_peer_election_held (const shoal_peer_t *self)
{
    return self->election_held;
}

bool
shoal_peer_left (const shoal_peer_t *self)
{
    return !self->draining && !self->leave_due && shoal_membership_leave_done (self->membership);
}

int
shoal_peer_report (shoal_peer_t *self, uint64_t now_ms, const char *task, uint8_t state,
                   uint64_t lag)
{
    if (!self->tasks)
        return -1;
    self->now = now_ms;
    int rc = shoal_tasks_report (self->tasks, self->now, task, state, lag);
    s_task_outputs (self);
    s_schedule (self);
    s_leave_if_due (self);
    return rc;
}

int
shoal_peer_exit (shoal_peer_t *self, uint64_t now_ms, const char *task, uint32_t exits,
                 uint32_t last_exit, const char *error)
{
    if (!self->tasks)
        return -1;
    self->now = now_ms;
    int rc = shoal_tasks_exit (self->tasks, self->now, task, exits, last_exit, error);
    s_task_outputs (self);
    s_schedule (self);
    s_leave_if_due (self);
    return rc;
}

int
shoal_peer_request (shoal_peer_t *self, uint64_t now_ms, uint64_t ref,
                    const shoal_control_req_t *req)
{
    if (!self->tasks)
        return -1;
    self->now = now_ms;
    if (shoal_jobs_request (self->jobs, self->now, ref, req) != 0)
        return -1;
    s_jobs_outputs (self);
    s_schedule (self);
    s_leave_if_due (self);
    return 0;
}

//  ---------------------------------------------------------------------
//  Queries

int
shoal_peer_leader (const shoal_peer_t *self, uint64_t now_ms, shoal_id_t *leader, uint64_t *term)
{
    shoal_id_t followed;
    uint64_t followed_term;
    if (shoal_elector_leader (self->elector, now_ms, &followed, &followed_term) != 0 ||
        !(shoal_elector_acting (self->elector, now_ms) || !self->tasks ||
          shoal_tasks_leased (self->tasks, now_ms)))
        return -1;
    *leader = followed;
    *term = followed_term;
    return 0;
}

int
shoal_peer_cordon (shoal_peer_t *self, uint64_t now_ms, uint8_t cordon)
{
    shoal_membership_member_t me;
    if (cordon > SHOAL_CORDON_MAX || self->draining ||
        shoal_membership_member (self->membership, &self->id, &me) != 0 || !me.meta)
        return -1;
    if (me.meta->cordon == cordon)
        return 0;
    self->now = now_ms;
    shoal_meta_t meta = *me.meta;
    meta.cordon = cordon;
    int rc = shoal_membership_set_meta (self->membership, self->now, &meta);
    s_outputs (self);
    if (rc != 0)
        return rc;
    //  Gossip carries the meta to the leader, and so does every STATUS from
    //  now on (the first at once): gossip alone may bring it late. The
    //  leader's own handoff takes it here.
    if (self->tasks) {
        shoal_tasks_cordon (self->tasks, self->now, cordon);
        s_task_outputs (self);
    }
    if (self->handoff) {
        shoal_handoff_cordon (self->handoff, self->now, &self->id, cordon);
        s_handoff_outputs (self);
    }
    s_schedule (self);
    return 0;
}

bool
shoal_peer_drained (const shoal_peer_t *self)
{
    if (!self->tasks)
        return true;
    const shoal_task_status_t *list;
    size_t count = shoal_tasks_list (self->tasks, &list);
    for (size_t i = 0; i < count; i++)
        if (shoal_task_held (&list[i]))
            return false;
    return s_moves_done (self);
}

uint8_t
shoal_peer_cordoned (const shoal_peer_t *self)
{
    shoal_membership_member_t me;
    if (shoal_membership_member (self->membership, &self->id, &me) != 0 || !me.meta)
        return SHOAL_CORDON_NONE;
    return me.meta->cordon;
}

shoal_membership_t *
shoal_peer_membership (const shoal_peer_t *self)
{
    return self->membership;
}

shoal_elector_t *
shoal_peer_elector (const shoal_peer_t *self)
{
    return self->elector;
}

shoal_tasks_t *
shoal_peer_tasks (const shoal_peer_t *self)
{
    return self->tasks;
}

shoal_handoff_t *
shoal_peer_handoff (const shoal_peer_t *self)
{
    return self->handoff;
}

shoal_jobs_t *
shoal_peer_jobs (const shoal_peer_t *self)
{
    return self->jobs;
}

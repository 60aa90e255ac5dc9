/*  peer/peer.h: one node's cores, wired together.

    A peer holds the state machines one node runs: membership
    (gossip/membership.h), and optionally the elector (election/elector.h),
    the node side of task handoff (rebalance/tasks.h), the job specs
    (rebalance/jobs.h) and, while it acts as leader, the handoff of its term
    (rebalance/handoff.h). It feeds each core's outputs to the cores that
    take them, in a fixed order, and hands everything meant for the outside
    to a sink of callbacks, synchronously, at the moment it arises: the
    order of the calls is part of the behaviour (a shell that queued them
    would send the same messages in the same order).

    Like the cores, a peer does no I/O: time and randomness come in as
    arguments, messages come in decoded, and go out decoded. The simulator
    runs one peer per simulated node; the node runtime runs one per process.
*/
#ifndef SHOAL_PEER_H
#define SHOAL_PEER_H

#include "election/elector.h"
#include "rebalance/handoff.h"
#include "rebalance/jobs.h"
#include "gossip/membership.h"
#include "rebalance/tasks.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct {
    shoal_membership_config_t membership;
    bool election; //  run an elector
    shoal_elector_config_t elector;
    //  The node was given seeds to join: its elector waits (is not ticked)
    //  until another member is live, or the shell releases it
    //  (shoal_peer_election_release), and then listens settle_ms more for
    //  a leader, as at a start. A node whose seeds do not answer never
    //  elects itself leader of a cluster of one.
    bool election_waits;
    //  Tasks (needs the election): run the node side of the handoff and
    //  hold the job specs, and lead the handoff while acting as leader.
    bool tasks;
    shoal_tasks_config_t node_tasks;
    shoal_handoff_config_t handoff;
    shoal_jobs_config_t jobs;
} shoal_peer_config_t;

//  Returns NULL when config is valid, or why it is not.
const char *shoal_peer_config_check (const shoal_peer_config_t *config);

//  What a node keeps across restarts, as its shell persists it; either
//  part may be NULL (none).
typedef struct {
    const shoal_elector_saved_t *elector;
    const shoal_jobs_saved_t *jobs;
} shoal_peer_saved_t;

//  Where the outputs go. Every callback may be NULL (the output is then
//  dropped) and is called with arg. Pointers handed to a callback are valid
//  only during the call. A callback must not call into its peer, but for
//  the accessors below.
typedef struct {
    void *arg;
    //  A message to send. addr is where the member listens, for the
    //  membership's own messages; NULL for a message to the member to->id
    //  in whichever life it has (to->life is 0).
    void (*send) (void *arg, const shoal_life_t *to, const char *addr, const shoal_msg_t *msg);
    //  A command of the node's tasks for the application.
    void (*command) (void *arg, const shoal_tasks_command_t *command);
    //  The answer to a request (shoal_peer_request).
    void (*reply) (void *arg, const shoal_jobs_reply_t *reply);
    //  Observers: a membership event, an elector event.
    void (*member_event) (void *arg, const shoal_membership_event_t *event);
    void (*leader_event) (void *arg, const shoal_elector_event_t *event);
    //  What the elector or the job specs now persist (one part set): write
    //  it to disk, to hand to shoal_peer_new at the next start.
    void (*saved) (void *arg, const shoal_peer_saved_t *saved);
    //  The node's tasks took an input, and their commands and messages are
    //  out: the roles and the lease (shoal_tasks_leased) the application
    //  goes by are settled here.
    void (*tasks_done) (void *arg);
    //  This node acts as leader at term, and its handoff now places the
    //  tasks of its job specs (sorted by id).
    void (*handoff_tasks) (void *arg, uint64_t term, const shoal_assign_task_t *tasks,
                           size_t count);
    //  The soonest deadline may have changed: shoal_peer_tick is due at
    //  next_ms (the same as shoal_peer_next).
    void (*deadline) (void *arg, uint64_t next_ms);
} shoal_peer_sink_t;

typedef struct _shoal_peer_t shoal_peer_t;

//  A node with identity id, membership incarnation incarnation, meta (whose
//  priority is also the elector's), and what it persisted in an earlier
//  life (NULL: none). seed feeds the membership's randomness; metas is the
//  pool of member metas, which peers driven from one thread may share
//  (NULL: one of its own). It sends nothing until its first input. Returns
//  NULL when config, id or meta is invalid, or memory is short.
shoal_peer_t *shoal_peer_new (const shoal_peer_config_t *config, const shoal_id_t *id,
                              uint64_t incarnation, const shoal_meta_t *meta,
                              const shoal_peer_saved_t *saved, uint64_t seed, uint64_t now_ms,
                              shoal_metapool_t *metas, const shoal_peer_sink_t *sink);

void shoal_peer_destroy (shoal_peer_t **self_p);

//  ---------------------------------------------------------------------
//  Inputs

//  Takes in one message, as opened from envelope (its sender is the
//  sender); from_addr is where it came from, or NULL. Returns 0, or -1 when
//  it was dropped (no core of this peer takes it, or the core refused it).
int shoal_peer_receive (shoal_peer_t *self, uint64_t now_ms, const shoal_envelope_t *envelope,
                        const shoal_msg_t *msg, const char *from_addr);

//  Does what is due by now_ms in every core.
void shoal_peer_tick (shoal_peer_t *self, uint64_t now_ms);

//  Ticks every core, due or not, as a node does when it runs again after a
//  stall (a pause of its process): after it took in what waited for it.
void shoal_peer_resume (shoal_peer_t *self, uint64_t now_ms);

//  When shoal_peer_tick is due next.
uint64_t shoal_peer_next (const shoal_peer_t *self);

//  Member id may be gone (the kernel refused a datagram to it): probe it
//  now, as shoal_membership_hint.
void shoal_peer_hint (shoal_peer_t *self, uint64_t now_ms, const shoal_id_t *id);

//  Joins through the member at addr (a seed), as shoal_membership_join.
int shoal_peer_join (shoal_peer_t *self, uint64_t now_ms, const char *addr);

//  A beacon introduced node, as shoal_membership_introduce.
int shoal_peer_introduce (shoal_peer_t *self, uint64_t now_ms, const shoal_life_t *node,
                          uint64_t incarnation, uint8_t flags, const char *addr);

//  Records every member holds already, as shoal_membership_settle: the
//  membership's events go to every core, as after any input.
int shoal_peer_settle (shoal_peer_t *self, uint64_t now_ms, const shoal_update_t *updates,
                       uint32_t count);

//  Ends the wait of election_waits: the shell found that the node need not
//  wait for a seed (every seed is this node itself).
void shoal_peer_election_release (shoal_peer_t *self, uint64_t now_ms);

//  True while the elector waits for another member (election_waits).
bool shoal_peer_election_held (const shoal_peer_t *self);

//  Leaves gracefully. A follower leaves the view at once; the acting leader
//  first moves its own tasks away (its handoff counts it gone) and hands
//  its vote over (shoal_elector_leave), then leaves the view, or as soon
//  as it no longer acts. Leaving the view, it leaves the election for the
//  rest of this life (shoal_elector_retire): kept up, it never votes,
//  stands or leads again. Keep feeding it until
//  shoal_peer_left. Returns -1 while it is draining so already.
int shoal_peer_leave (shoal_peer_t *self, uint64_t now_ms);

//  True once it left the view and told enough members so.
bool shoal_peer_left (const shoal_peer_t *self);

//  Marks this node cordoned, draining or open (cordon, a shoal_cordon_t) in
//  its meta, which gossip carries to the leader (docs/assign.md, "Cordon
//  and drain"); an acting leader applies its own mark at once. Returns 0
//  (also when the mark was so already), or -1 when the node leaves or the
//  meta cannot change.
int shoal_peer_cordon (shoal_peer_t *self, uint64_t now_ms, uint8_t cordon);

//  This node's mark, as its meta says.
uint8_t shoal_peer_cordoned (const shoal_peer_t *self);

//  True when a drain of this node is over: it holds no task in any role
//  and stops none, and, acting as leader, no move it made is halfway
//  (shoal_handoff_settled), so that it may leave without leaving a task
//  without an active until the next leader's wait is over.
bool shoal_peer_drained (const shoal_peer_t *self);

//  The application reports a task (shoal_tasks_report). Returns -1 when
//  the peer runs no tasks or the report is refused.
int shoal_peer_report (shoal_peer_t *self, uint64_t now_ms, const char *task, uint8_t state,
                       uint64_t lag);

//  How a task's process exited (shoal_tasks_exit). Returns -1 when the
//  peer runs no tasks or the task is not held.
int shoal_peer_exit (shoal_peer_t *self, uint64_t now_ms, const char *task, uint32_t exits,
                     uint32_t last_exit, const char *error);

//  A submit, rescale or remove from a local client, answered through the
//  sink's reply under ref (shoal_jobs_request). Returns -1 when the peer
//  runs no tasks or the request is not one of these.
int shoal_peer_request (shoal_peer_t *self, uint64_t now_ms, uint64_t ref,
                        const shoal_control_req_t *req);

//  ---------------------------------------------------------------------
//  Queries

//  The cores, for their queries (NULL for one it does not run; the handoff
//  is kept, silent, while a leader does not act).
shoal_membership_t *shoal_peer_membership (const shoal_peer_t *self);
shoal_elector_t *shoal_peer_elector (const shoal_peer_t *self);
shoal_tasks_t *shoal_peer_tasks (const shoal_peer_t *self);
shoal_handoff_t *shoal_peer_handoff (const shoal_peer_t *self);
shoal_jobs_t *shoal_peer_jobs (const shoal_peer_t *self);

//  The leader as this node can vouch for it: itself while it acts, or the
//  leader its elector follows while the lease that leader's assignments
//  renew holds (a peer without tasks: while the elector follows it).
//  Returns -1 with no such leader. A follower cut off with a candidate that
//  never gathers a majority follows it all along, but that candidate never
//  acts: reported as the leader, it was a leader that did not exist.
int shoal_peer_leader (const shoal_peer_t *self, uint64_t now_ms, shoal_id_t *leader,
                       uint64_t *term);

//  The layer a message is for: the first core it goes to. A SYNC-REQ or
//  SYNC-REPLY with the jobs' part goes to the jobs, then, if it also has
//  the members' part, to the membership.
typedef enum {
    SHOAL_PEER_MEMBERSHIP = 0,
    SHOAL_PEER_ELECTION = 1,
    SHOAL_PEER_TASKS = 2, //  ASSIGN to the tasks, STATUS to the handoff
    SHOAL_PEER_JOBS = 3,
} shoal_peer_layer_t;

shoal_peer_layer_t shoal_peer_layer (const shoal_msg_t *msg);

#endif

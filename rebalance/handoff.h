/*  rebalance/handoff.h: the leader's assignment log and handoff.

    A pure state machine, like election/elector.h: no sockets, no clocks, no
    threads, no globals, no printing, no randomness. Every input names the
    time (now_ms, the caller's monotonic clock). docs/handoff.md describes
    the protocol; section 5 is this class. Only the acting leader runs one:
    the shell makes it when its elector starts acting (LEADER about itself)
    with a new term. When the elector stops acting without following another
    leader, the shell keeps the handoff, fed but silent (nothing it sends
    goes out), and takes it up again if the elector acts again with the
    same term; it destroys it when the node follows another leader or acts
    with another term. Never make two handoffs for one term: both would
    publish the same versions and grant the same epochs, and a node could
    take the second one's keep-alive for the first one's and run a task it
    lost meanwhile.

    Inputs:  shoal_handoff_member  what the membership view says of a member,
                                   with its meta (capacity, slots, labels,
                                   handled jobs); the leader itself too;
             shoal_handoff_tasks   the tasks of the committed jobs;
             shoal_handoff_status  a STATUS from a member;
             shoal_handoff_tick    the time came that next() asked for.
    Outputs, after each input and valid until the next input:
             shoal_handoff_outbox  ASSIGN messages, each to one member;
             shoal_handoff_next    when to call tick next.
    Queries: shoal_handoff_placements (the assignment published last),
             shoal_handoff_reported (what a member said of a task),
             shoal_handoff_failed (the tasks that failed everywhere),
             shoal_handoff_unplaced (the tasks placed nowhere, and why),
             shoal_handoff_phase (where a task's move stands),
             shoal_handoff_version, shoal_handoff_adopted, shoal_handoff_settled,
             shoal_handoff_stats.

    The rules, in short:

    - Taking office: nothing is published until every member of the view
      has sent a STATUS since, or lease x (1 + drift) has passed. Then
      the leader adopts what the members report (for each task, the active
      with the newest epoch stays, under its epoch) as a snapshot above
      every version reported. Until then, keep-alives let the members keep
      running what they run.
    - After that, the assignor runs whenever an input changes its inputs in
      a way that matters, and each change is published at once as a new
      version (a delta to every member heard from).
    - An active moves in two steps: the old owner's new role is published
      first, and the task is claimed by it until it reports that version
      with the task neither active nor stopping, or until lease x
      (1 + drift) after the leader last heard from it (or learned of its
      current life, if later: a restarted member's STATUS may come before
      the view shows its new life); only then is the new owner made
      active, under a new epoch (term, version). A fenced task's claim
      also ends when the view declares the old owner dead, and it does
      not wait for the lease wait of taking office.
    - A member that gave up on a task (its STATUS lists it in role none,
      state failed: it will not restart it) holds that task in no role
      from then on, and the task moves to another member as above. The
      member gets the task again only in a new life, or once it has left
      the view and come back; a task that leaves the tasks is forgotten.
      A task every member that may hold it gave up on is placed nowhere
      and listed by shoal_handoff_failed, until such a member comes.
*/

#ifndef SHOAL_HANDOFF_H
#define SHOAL_HANDOFF_H

#include "rebalance/assignor.h"
#include "wire/wire.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t lease_ms;        //  as the election's and the nodes' lease
    uint32_t drift_percent;   //  clock drift margin, < 50
    uint32_t status_ms;       //  keep-alives at this interval (as the nodes' STATUS)
    uint32_t join_settle_ms;  //  members joining together are placed together
    uint32_t leave_settle_ms; //  and members leaving together are left together
    //  The assignor runs at most once in this interval: every STATUS with
    //  news would run it, and one run over thousands of tasks and members
    //  costs tens of ms. 0: at every input that changed something.
    uint32_t compute_ms;
    //  Tasks granted active on a node that did not hold them, not yet
    //  reported running, at most this many in the whole cluster: the rest
    //  wait their turn (a start costs CPU; thousands at once starve the
    //  nodes' own threads). 0: no bound. A promotion does not count.
    uint32_t max_starting;
    shoal_assign_config_t assign; //  spread_by, when set, must outlive the handoff
} shoal_handoff_config_t;

void shoal_handoff_config_lan (shoal_handoff_config_t *config);
void shoal_handoff_config_loopback (shoal_handoff_config_t *config);
//  Every time five times the LAN's (a WAN, or many nodes on few cores).
void shoal_handoff_config_wan (shoal_handoff_config_t *config);
const char *shoal_handoff_config_check (const shoal_handoff_config_t *config);

typedef struct {
    shoal_id_t to;
    shoal_msg_t msg; //  an ASSIGN; its pointers are valid until the next input
} shoal_handoff_send_t;

typedef struct {
    uint64_t computations;      //  runs of the assignor
    uint64_t published;         //  versions published
    uint64_t snapshots;         //  snapshots sent
    uint64_t grants;            //  actives granted under a new epoch
    uint64_t revokes;           //  actives taken away (the first step of a move)
    uint64_t dropped;           //  inputs dropped (unknown member, bad status)
    uint64_t gave_up;           //  (member, task) pairs where the member gave up on the task
    uint64_t failed_everywhere; //  tasks found failed on every member that may hold them
} shoal_handoff_stats_t;

typedef struct _shoal_handoff_t shoal_handoff_t;

//  A leadership that begins at term, above every assignment version in
//  floor_version (the highest this node knows of). NULL when the config is
//  unusable or memory is short.
shoal_handoff_t *shoal_handoff_new (const shoal_handoff_config_t *config, uint64_t term,
                                    uint64_t floor_version, uint64_t now_ms);

//  Tells a new leadership that no leader acted before it: the cluster's
//  first term, in quorum mode, where terms start at 1 and no two leaders
//  act with one term. No node can hold a lease of before, so actives are
//  granted at once, without the lease wait. Call it before any input.
void shoal_handoff_first_term (shoal_handoff_t *self);
void shoal_handoff_destroy (shoal_handoff_t **self_p);

//  The same leader acts on, with a higher term: it took one above a rival's
//  (sticky), and acted all along, so no other leader granted anything
//  meanwhile and this leadership knows every grant there is. It goes on at
//  term, without taking office again: its placements, claims and lease
//  waits hold, the next grants carry term, and every member gets a
//  snapshot of it now (its outputs). Returns -1, changing nothing, when
//  term is not above its own or it has not adopted yet: the caller then
//  starts a new leadership, which takes office.
int shoal_handoff_retitle (shoal_handoff_t *self, uint64_t now_ms, uint64_t term);

//  Where a member stands in the view. GONE and DEAD are both not live;
//  DEAD is a verdict of the failure detector (not a leave, nor a leader
//  that drains itself), after which a fenced task's active may move at
//  once. SUSPECT is live in every way but one: a leader taking office does
//  not wait for its STATUS (as for a dead one). A caller that passes a bool
//  passes GONE or LIVE.
typedef enum {
    SHOAL_HANDOFF_GONE = 0,    //  left, or leaving: stops its tasks itself
    SHOAL_HANDOFF_LIVE = 1,    //  alive
    SHOAL_HANDOFF_DEAD = 2,    //  declared dead: may still run, behind a cut
    SHOAL_HANDOFF_SUSPECT = 3, //  suspected: likely dead, not yet declared so
} shoal_handoff_presence_t;

//  A member as the view says, with its meta (NULL when not known; copied).
//  Returns -1 when memory is short.
int shoal_handoff_member (shoal_handoff_t *self, uint64_t now_ms, const shoal_id_t *id,
                          const shoal_meta_t *meta, shoal_handoff_presence_t presence);

//  Every task of the committed jobs (copied). Returns -1 when a task id
//  repeats or memory is short; the tasks are then unchanged.
int shoal_handoff_tasks (shoal_handoff_t *self, uint64_t now_ms, const shoal_assign_task_t *tasks,
                         size_t count);

//  The leader's own mark (a shoal_cordon_t), applied at once, as its next
//  STATUS to itself would tell it. Returns -1 for an unknown node or a mark
//  above SHOAL_CORDON_MAX.
int shoal_handoff_cordon (shoal_handoff_t *self, uint64_t now_ms, const shoal_id_t *node,
                          uint8_t cordon);

//  A STATUS from the member from, in its life life (the envelope's sender
//  life). Its mark (status.cordon) is the member's from then on, in this
//  life, whatever older meta gossip brings later. A STATUS of an earlier
//  life than the member's latest is dropped: one still in flight when the
//  member restarted would otherwise set its seq far above what the new
//  life sends. A later life is a restart the view has not told yet, taken
//  as member() would. Returns -1 when it was dropped (unknown member, an
//  earlier life, a seq not above the last, a task repeated, a mark above
//  SHOAL_CORDON_MAX, no memory).
int shoal_handoff_status (shoal_handoff_t *self, uint64_t now_ms, const shoal_id_t *from,
                          uint64_t life, const shoal_status_t *status);

void shoal_handoff_tick (shoal_handoff_t *self, uint64_t now_ms);

size_t shoal_handoff_outbox (const shoal_handoff_t *self, const shoal_handoff_send_t **sends);
uint64_t shoal_handoff_next (const shoal_handoff_t *self);

//  The assignment published last, sorted by task then node; valid until the
//  next input. None before adoption.
size_t shoal_handoff_placements (const shoal_handoff_t *self, const shoal_placement_t **placements);

//  What node said of task in its last STATUS to this leader: *status filled
//  (its task points into this object: valid until the next input), true;
//  false when it has not reported that task.
bool shoal_handoff_reported (const shoal_handoff_t *self, const shoal_id_t *node, const char *task,
                             shoal_task_status_t *status);
//  The tasks that every member that may hold them gave up on, sorted, as
//  the last computation found: none of them is placed. Valid until the
//  next input.
size_t shoal_handoff_failed (const shoal_handoff_t *self, const char *const **tasks);

//  Why a task of the tasks is placed nowhere: data, for the shell to word.
typedef enum {
    SHOAL_UNPLACED_OFFICE = 1, //  the leader takes office: nothing published yet
    SHOAL_UNPLACED_MOVING,     //  its active moves: it waits until the node that
                               //  ran it stops it, or for that node's lease to end
    SHOAL_UNPLACED_NO_NODE,    //  no member counted may hold it
    SHOAL_UNPLACED_FAILED,     //  every member that may hold it gave up on it
    SHOAL_UNPLACED_SLOTS,      //  members may hold it, but none has a free slot
    SHOAL_UNPLACED_QUEUED,     //  placed, its start waits for one of max_starting
    SHOAL_UNPLACED_MAX = SHOAL_UNPLACED_QUEUED,
} shoal_unplaced_reason_t;

typedef struct {
    const char *task;
    uint8_t reason; //  shoal_unplaced_reason_t
    //  NO_NODE: the constraint no member meets. unhandled: no member
    //  handles the job; else label: a required label no member that
    //  handles the job carries; neither: each is carried, but no member
    //  carries them all.
    bool unhandled;
    const shoal_label_t *label;
    const char *error; //  FAILED: what the member that gave up last said; ""
} shoal_unplaced_t;

//  Every task of the tasks that the published assignment places on no
//  member, sorted, with why (before adoption, every task: OFFICE). Its
//  strings point into this object: valid until the next input or call.
//  Returns 0 when memory is short.
size_t shoal_handoff_unplaced (shoal_handoff_t *self, const shoal_unplaced_t **unplaced);
//  Where a task's move stands: its phase, named for tests and the status.
//  A move of an active from M to N goes placed (on M) -> revoked (M's
//  role is published without the active, and M claims the task until it
//  confirms its stop or its lease ends) -> granted (active on N under a new
//  epoch) -> placed (on N, from the next publication on). A stateful task
//  first warms a learner up on N while M stays active (warming), and N
//  holds the learner while the task is revoked.
typedef enum {
    SHOAL_PHASE_UNPLACED = 1, //  no active published, none planned
    SHOAL_PHASE_PLACED,       //  one active published, nothing moving
    SHOAL_PHASE_WARMING,      //  one active published, and a learner warming up
    SHOAL_PHASE_REVOKED,      //  no active published: the active planned (target) waits
                              //  for the claim of its old owner to end (claimed), or for
                              //  a new leader's lease wait
    SHOAL_PHASE_GRANTED,      //  one active, granted by the last publication
} shoal_handoff_phase_t;

typedef struct {
    uint8_t phase; //  shoal_handoff_phase_t
    bool has_active;
    shoal_id_t active; //  PLACED, WARMING, GRANTED: the published active
    shoal_epoch_t epoch;
    bool has_target;
    shoal_id_t target; //  REVOKED: where the last computation meant the active to be
    bool claimed;
    shoal_id_t claimer; //  REVOKED: the old owner that may still run it
    uint32_t learners;  //  learners published for the task
} shoal_handoff_move_t;

//  Fills *move for task. Returns 0, or -1 when task is not one of the tasks.
int shoal_handoff_phase (const shoal_handoff_t *self, const char *task, shoal_handoff_move_t *move);
uint64_t shoal_handoff_version (const shoal_handoff_t *self);
bool shoal_handoff_adopted (const shoal_handoff_t *self);

//  True when no move is halfway: adopted, no node claims a task it was
//  told to give up, and every active the assignor wants but has not granted
//  yet still runs on its old node (a learner warms up meanwhile). A leader
//  that leaves while one is halfway leaves a task without an active until
//  the next leader's wait is over: a leaving or drained leader waits for
//  this first.
bool shoal_handoff_settled (const shoal_handoff_t *self);
void shoal_handoff_stats (const shoal_handoff_t *self, shoal_handoff_stats_t *stats);

//  How many tasks of job the cluster could hold as actives now, its own
//  included: over the members the last computation counted that may hold
//  the job, the slots the other jobs' actives leave free, in tasks of the
//  job's weight (UINT32_MAX when such a member has unlimited slots; 0 for
//  a job without tasks here). For the rescales of rebalance/jobs.h.
uint32_t shoal_handoff_capacity (const shoal_handoff_t *self, const char *job);

//  Debug: checks the handoff's own invariants: its tables sorted and
//  unique (members, tasks, placements, targets, failed tasks, each member's
//  reports), every placement on a known member in a role, at most one
//  active per task, one claim per (task, member). Returns 0, or -1 with *reason (unless reason is
//  NULL) naming the invariant broken. For tests, fuzzers and the simulator,
//  after any input (cheap: one pass over the tables); the node never calls
//  it. Compiled to return 0 when SHOAL_NO_CHECKS is defined.
int shoal_handoff_check (const shoal_handoff_t *self, const char **reason);

#endif

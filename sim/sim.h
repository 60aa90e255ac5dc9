/*  sim/sim.h: many whole nodes on a virtual clock and network.

    The simulator runs, for every node in one process, a peer (peer/peer.h):
    the same wiring of the shipped cores that the node runtime runs, fed
    the same inputs in the same order. A peer holds the membership of
    gossip/membership.h and, when configured, the elector of
    election/elector.h, the tasks of rebalance/tasks.h, the job specs of
    rebalance/jobs.h and, while its elector acts, the handoff of
    rebalance/handoff.h. The simulator keeps only what lies around a node:
    the network its peer sends into, the timer its peer's deadline arms,
    the application that carries out the tasks' commands, the node's disk
    (what its peer persists survives its crashes and restarts: incarnation,
    life, the elector's state, the job specs), and the account of who runs
    which task as active.

    Time is virtual (milliseconds); the network is a queue of messages in
    flight, each one encoded and decoded by the real codec of
    wire/wire.h, with per-message latency and jitter, datagram loss,
    one-way blocks between groups of nodes (partitions), pauses (a paused
    node's clock stops: messages wait in its socket's backlog and its timers
    fire late when it resumes, as after a GC pause or SIGSTOP), crashes and
    restarts (a new peer, with the next incarnation and life). Every choice
    comes from one seed: the same seed gives the same run, byte for byte.

    Envelopes are not sealed here: sealing is proven by its own tests, and
    the peer sees the opened header (sender and recipient lives) that the
    shell would hand it. Datagrams (PING, ACK, PING-REQ, NACK) may be lost;
    frames (every other message: DIGEST, SYNC-*, the election's, the tasks'
    and the jobs') travel as over TCP: late, never lost, never overtaking an
    earlier frame of the same sender, but blocked by partitions like
    everything else.

    shoal-sim (main.c and the scenarios_*.c files) plays scenarios on it;
    see sim/README.md and docs/sim.md.
*/
#ifndef SHOAL_SIM_H
#define SHOAL_SIM_H

#include "election/elector.h"
#include "rebalance/handoff.h"
#include "rebalance/jobs.h"
#include "gossip/membership.h"
#include "rebalance/tasks.h"

#include <stdbool.h>
#include <stdint.h>

#define SHOAL_SIM_NONE   UINT32_MAX
#define SHOAL_SIM_GROUPS 8

typedef struct {
    shoal_membership_config_t membership;
    uint32_t latency_ms; //  one-way, before jitter
    uint32_t jitter_ms;  //  added to the latency, uniform in 0 .. jitter_ms
    uint32_t loss_ppm;   //  datagrams lost, per million
    uint32_t backlog;    //  messages a paused node's socket keeps; later ones are lost
    //  A crashed node's kernel answers a datagram with ICMP port unreachable
    //  (a process that died, not a machine), and the sender's shell hints
    //  its membership (shoal_membership_hint). Off: crashes are silent.
    bool unreachable;
    bool election; //  run an elector on every node
    shoal_elector_config_t elector;
    //  Tasks (needs the election): every node runs the tasks of
    //  rebalance/tasks.h and an application that carries its commands out;
    //  the acting leader runs the handoff of rebalance/handoff.h.
    bool tasks;
    shoal_tasks_config_t node_tasks;
    shoal_handoff_config_t handoff;
    shoal_jobs_config_t jobs; //  every node holds the job specs (rebalance/jobs.h)
    uint32_t app_ms;          //  the application takes this long to start or stop a task
    uint64_t learner_lag;     //  the lag of a stateful task's new learner or standby
    uint64_t restore_per_s;   //  lag a learner makes up per second
    uint32_t app_fail_ppm;    //  starts that fail, per million (the node restarts them)
    const char *app_fail_job; //  every start of this job's tasks fails (NULL: none)
    uint32_t slots;           //  every node's slots (0: unlimited)
} shoal_sim_config_t;

//  The LAN membership profile, 1 ms latency with 1 ms jitter, no loss, a
//  backlog of 256 messages, port unreachables from crashed nodes; no election and no tasks (the LAN
//  profiles of both are set, for when they are turned on; the application takes 50 ms to start or
//  stop a task, and a learner makes up 10,000 of lag a second from 20,000).
void shoal_sim_config_default (shoal_sim_config_t *config);

typedef struct {
    uint64_t sent;          //  messages handed to the network
    uint64_t bytes;         //  their encoded size
    uint64_t frame_bytes;   //  of which frames: anti-entropy (DIGEST, SYNC-REQ, SYNC-REPLY)
    uint64_t lost;          //  datagrams lost at random
    uint64_t blocked;       //  messages a partition stopped
    uint64_t undeliverable; //  to a node down, or beyond a paused node's backlog
    uint64_t unreachable;   //  port unreachables delivered to a sender's shell as hints
    uint64_t delivered;     //  taken in by a node
    uint64_t codec_errors;  //  an encode or decode failed (never, with a correct core)
    uint64_t events;        //  membership events produced
    uint64_t election_sent; //  election messages handed to the network
    uint64_t task_sent;     //  ASSIGN and STATUS messages handed to the network
    uint64_t job_sent;      //  JOB, JOB-ACK, jobs syncs and forwarded requests
} shoal_sim_stats_t;

//  What happened to the tasks, summed over them, from when each first had
//  an active. A node counts as running a task as active from the moment its
//  application is told so until it reports the task stopped, and only while
//  the node is up, not paused, and holds its lease (an application that
//  checks the lease before it writes, as the C API lets it).
typedef struct {
    uint64_t double_active_ms;     //  time two or more nodes ran one task as active
    uint64_t unavailable_ms;       //  time tasks had no active (after their first)
    uint64_t unavailable_max_ms;   //  the longest such stretch of one task
    uint64_t activations;          //  a node began to run a task as active
    uint64_t cold_starts;          //  of those, of a stateful task, on a node that held
                                   //  no warm copy: it was not a caught-up learner or
                                   //  standby (lag <= acceptable_lag), nor its active
    uint64_t failed_starts;        //  starts the application reported failed
    uint64_t placed;               //  tasks that had an active at least once
    uint64_t first_double_ms;      //  when a task first ran as active twice (0: never)
    uint64_t fenced_out;           //  a fenced task's active whose writes a newer epoch's
                                   //  first write fenced out (it ran on, refused)
    const char *first_double_task; //  which (NULL: none)
    size_t gap_count;              //  stretches without an active, each in gaps
    const uint64_t *gaps;          //  their lengths, in ms, in the order they ended
} shoal_sim_task_stats_t;

typedef struct _shoal_sim_t shoal_sim_t;

//  Called for every membership event a node produces; subject is the index
//  of the node the event is about.
typedef void (shoal_sim_observer_fn) (void *arg, uint64_t now_ms, uint32_t observer,
                                      uint32_t subject, const shoal_membership_event_t *event);

//  A world of nodes 0 .. nodes - 1, all down, at time 0. Returns NULL when
//  the config is invalid or memory is short.
shoal_sim_t *shoal_sim_new (const shoal_sim_config_t *config, uint32_t nodes, uint64_t seed);

void shoal_sim_destroy (shoal_sim_t **self_p);

void shoal_sim_observe (shoal_sim_t *self, shoal_sim_observer_fn *observer, void *arg);

//  Called for every elector event a node produces.
typedef void (shoal_sim_leader_fn) (void *arg, uint64_t now_ms, uint32_t node,
                                    const shoal_elector_event_t *event);

void shoal_sim_observe_leaders (shoal_sim_t *self, shoal_sim_leader_fn *observer, void *arg);

//  Called after every event the simulator runs at a node that is up (a
//  message arriving, its timer, the end of its pause, a step of its
//  application), when the node's peer has taken in whatever the event gave
//  it: the moment to check the invariants of that node's cores.
typedef void (shoal_sim_step_fn) (void *arg, uint64_t now_ms, uint32_t node);

void shoal_sim_observe_steps (shoal_sim_t *self, shoal_sim_step_fn *observer, void *arg);

//  Starts node (again, after a crash: with the next incarnation and life)
//  and, unless seed is SHOAL_SIM_NONE, has it join through node seed's
//  address. Returns 0, or -1 when node is up already or out of range.
int shoal_sim_start (shoal_sim_t *self, uint32_t node, uint32_t seed);

//  Every node that is up learns every other node that is up, alive at its
//  incarnation now, as old news (shoal_peer_settle): the tables of a
//  cluster that has run long enough for every record to have been sent its
//  retransmits, with nothing left in any dissemination queue. Call it once
//  the nodes are started, before they have exchanged anything. Returns 0,
//  or -1 when memory is short.
int shoal_sim_settle (shoal_sim_t *self);

//  Stops node at once, as a crash: it sends nothing more, and what is sent
//  to it is lost.
void shoal_sim_crash (shoal_sim_t *self, uint32_t node);

//  Has node leave gracefully; it stays up, answering, until it is done.
//  The acting leader first moves its own tasks away, then leaves the view.
void shoal_sim_leave (shoal_sim_t *self, uint32_t node);

//  True once node has left the view and told enough members so.
bool shoal_sim_left (const shoal_sim_t *self, uint32_t node);

//  Marks node cordoned, draining or open (a shoal_cordon_t), as
//  `shoal drain` and `shoal cordon` do (shoal_peer_cordon). Returns 0, or
//  -1 when node is down or paused, or its peer refuses (it leaves).
int shoal_sim_cordon (shoal_sim_t *self, uint32_t node, uint8_t cordon);

//  Stops node's clock for duration_ms from now.
void shoal_sim_pause (shoal_sim_t *self, uint32_t node, uint64_t duration_ms);

//  Sets node's priority, from its next start on (0 until set).
void shoal_sim_set_priority (shoal_sim_t *self, uint32_t node, uint32_t priority);

//  Puts node in group (0 .. SHOAL_SIM_GROUPS - 1; every node starts in 0).
void shoal_sim_set_group (shoal_sim_t *self, uint32_t node, uint32_t group);

//  Blocks (or unblocks) every message from group from to group to.
void shoal_sim_block (shoal_sim_t *self, uint32_t from, uint32_t to, bool blocked);

//  Changes the datagram loss, per million, from now on.
void shoal_sim_set_loss (shoal_sim_t *self, uint32_t loss_ppm);

//  More events than this at one virtual instant is a livelock: the
//  simulation stops there, and shoal_sim_stalled says so.
#define SHOAL_SIM_INSTANT_EVENTS_MAX 100000

//  Runs every event due up to and including until_ms; now becomes until_ms.
void shoal_sim_run (shoal_sim_t *self, uint64_t until_ms);

//  True once the simulation stopped at a livelock; *at_ms is when.
bool shoal_sim_stalled (const shoal_sim_t *self, uint64_t *at_ms);

uint64_t shoal_sim_now (const shoal_sim_t *self);

uint32_t shoal_sim_size (const shoal_sim_t *self);

//  The node's membership core (its peer's), or NULL when it is down.
shoal_membership_t *shoal_sim_node (const shoal_sim_t *self, uint32_t node);

//  The node's elector (its peer's), or NULL when it is down or runs none.
shoal_elector_t *shoal_sim_elector (const shoal_sim_t *self, uint32_t node);

bool shoal_sim_paused (const shoal_sim_t *self, uint32_t node);

//  Whether a message from one node to another would pass the partitions.
bool shoal_sim_reachable (const shoal_sim_t *self, uint32_t from, uint32_t to);

//  The id of node, and the node of an id (SHOAL_SIM_NONE for an id no node
//  of a simulator has).
void shoal_sim_id (uint32_t node, shoal_id_t *id);
uint32_t shoal_sim_index (const shoal_id_t *id);

void shoal_sim_stats (const shoal_sim_t *self, shoal_sim_stats_t *stats);

//  The job specs every node holds when it first starts, as if an earlier
//  life had persisted them (later lives start from what they persisted).
//  Call it before the first start. Returns -1 when a spec is not a job or
//  memory is short.
int shoal_sim_set_jobs (shoal_sim_t *self, const shoal_jobspec_t *specs, size_t count);

//  A submit, rescale or remove (req->op) made to node, as a client of its
//  control endpoint would. Returns the request's reference (from 1), or 0
//  when the node is down or does not take it.
uint64_t shoal_sim_request (shoal_sim_t *self, uint32_t node, const shoal_control_req_t *req);

//  The answer to request ref: 0 with code and, for a submit or rescale,
//  the job's parallelism then (0 otherwise); -1 while it has none.
int shoal_sim_reply (const shoal_sim_t *self, uint64_t ref, uint8_t *code, uint32_t *parallelism);

//  The node's job specs (kept while it is down, as on its disk).
shoal_jobs_t *shoal_sim_jobs (const shoal_sim_t *self, uint32_t node);

//  Every task the simulator has seen, by index; current ones belong to
//  the job specs of the acting leader (the others were removed).
size_t shoal_sim_task_count (const shoal_sim_t *self);
bool shoal_sim_task_current (const shoal_sim_t *self, size_t task);

//  The task statistics, valid until the next call into the simulator.
void shoal_sim_task_stats (shoal_sim_t *self, shoal_sim_task_stats_t *stats);

//  How many nodes run task (an index into the tasks set) as active now.
uint32_t shoal_sim_task_actives (const shoal_sim_t *self, size_t task);

//  The node's tasks, or NULL when it is down or runs none; the handoff,
//  while the node leads.
shoal_tasks_t *shoal_sim_tasks (const shoal_sim_t *self, uint32_t node);
shoal_handoff_t *shoal_sim_handoff (const shoal_sim_t *self, uint32_t node);

//  True when node n's drain is over, as `shoal drain` finds it
//  (shoal_peer_drained); true for a node that is down.
bool shoal_sim_drained (const shoal_sim_t *self, uint32_t node);

#endif

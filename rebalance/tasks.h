/*  rebalance/tasks.h: the tasks of one node, as the leader's assignment
    and the lease allow.

    A pure state machine, like election/elector.h: no sockets, no clocks, no
    threads, no globals, no printing, no randomness. Every input names the
    time (now_ms, the caller's monotonic clock). docs/handoff.md describes
    the protocol; section 4 is this class.

    Inputs:  shoal_tasks_leader  the leader the election follows (call it on
                                 every LEADER / NO_LEADER event);
             shoal_tasks_assign  an ASSIGN from the network;
             shoal_tasks_report  the application says a task runs, stopped,
                                 failed, or how far behind it is;
             shoal_tasks_jobs    the job specs this node holds: which keep
                                 state (call it whenever they change);
             shoal_tasks_tick    the time came that next() asked for.
    Outputs, after each input and valid until the next input:
             shoal_tasks_commands  what the application must do: start,
                                   promote, demote or stop a task;
             shoal_tasks_outbox    STATUS messages to send (to the leader);
             shoal_tasks_next      when to call tick next.
    Queries: shoal_tasks_list (every task held, as STATUS would report it),
             shoal_tasks_leased, shoal_tasks_version.

    The rules, in short:

    - An ASSIGN from a term older than the newest seen (in an ASSIGN taken
      or from shoal_tasks_leader) is dropped. A delta applies only when its
      term is the term of the node's assignment, its base_version is the
      node's version and its version is above its base_version; a new
      leader's assignment is taken only as a snapshot. A snapshot has
      base_version 0; one of the node's term older than its version is
      late and dropped. A keep-alive (a delta with no placements and
      base_version == version) changes nothing but the lease: of the same
      term, it must name the node's version; of a newer term, any version
      does, since a new leader sends keep-alives before its first snapshot
      (docs/handoff.md 5.1) and the node keeps its assignment meanwhile,
      but then it only extends a lease that still holds: one that lapsed
      comes back only from the leader whose assignment the node holds.
      Placements naming other nodes are ignored; one naming this node with
      a task that is NULL or longer than SHOAL_TASK_MAX, or a role above
      learner, or a task twice, drops the whole ASSIGN. A dropped ASSIGN
      changes nothing (beyond what the time of the input brings, below).
    - The lease: an accepted ASSIGN whose status_seq names one of the last
      64 STATUS this node sent, at time t, to the very member the ASSIGN
      comes from, makes the lease hold until t + lease_ms less the drift
      margin (lease_ms * drift_percent / 100), if that is later than it held.
      Without a lease, a task the assignment wants active is held as a
      standby (START as standby, or DEMOTE if it was active), and promoted
      again when a lease comes back, if its job keeps state. A stateless
      task (of a job shoal_tasks_jobs did not name as stateful, which
      includes a job this node does not know yet) never runs as a standby
      or learner of its own accord: without a lease it is stopped (STOP,
      and, if it was active, stopping until the application reports it
      stopped), not started, and not restarted after a failure; it is
      started (START as active) when a lease comes back and the assignment
      still wants it. It is not listed meanwhile, but for a failure, which
      keeps its role and its count (a task the node gave up on stays so).
    - Commands are the difference between what the assignment (and the
      lease) wants and what the application was told: START (none to a
      role), PROMOTE (learner or standby to active; also an active that the
      assignment grants anew, to take the new epoch), DEMOTE (active to
      standby or learner), STOP (any role to none). A change between
      standby and learner is no command, only reported. Commands carry the
      placement's epoch. At most one command per task per input.
    - An active that is demoted or stopped is `stopping` until the
      application reports it stopped (or failed); only then does the node
      report it as not active: a demoted task goes on `running` in its new
      role, a stopped one is dropped. Meanwhile STATUS lists it with its new
      role (none after STOP) and state stopping. A task that does not act
      (learner, standby, failed) is dropped at once on STOP. The node's
      applied version is the version of its assignment (a delta or snapshot
      is applied whole, at once); the leader reads "stopped" from the task's
      own state.
    - After START a task is `starting` until the application reports it
      running. A learner or standby reports lag UINT64_MAX (unknown, so not
      caught up) until the application gives one; an active reports 0.
    - A STATUS goes to the leader at once after an input that changed what
      it would report (ignoring lag, unless the lag crossed acceptable_lag
      either way: caught up is lag <= acceptable_lag, as for the assignor),
      and at least every status_ms while there is a leader. Its term is the
      term of the node's assignment (0 before any), so that (term,
      applied_version) names it; its seq counts up from 1.
    - A task reported failed (or stopped without being asked to) is started
      again (START, in the role and epoch the assignment wants then) after
      restart_backoff_ms, doubled at each failure in a row: it is restarted
      at most max_restarts times in a row, and the failure after that
      stays (max_restarts 0: never restarted): the node gives up on the
      task, and lists (and reports) it in role none, state failed, until
      the assignment drops it from this node, which then STOPs it. A
      task in its backoff keeps its role. A task that ran (reported
      running) for healthy_ms before it failed starts a new run of
      failures: one that starts, says it runs, and crashes soon after is
      still given up. A failed task takes no report until it is started
      again.
    - The application is told of at most SHOAL_TASKS_MAX tasks at once, so
      that a STATUS can list them all: beyond that, a START waits until a
      task the application stops is gone.
    - Every input also does what its time brings, as a tick would: a lease
      that ended demotes the actives, restarts that are due start.
*/

#ifndef SHOAL_TASKS_H
#define SHOAL_TASKS_H

#include "wire/wire.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t lease_ms;           //  as the election's lease
    uint32_t drift_percent;      //  clock drift margin, < 50
    uint32_t status_ms;          //  STATUS at least this often (as the heartbeat)
    uint64_t acceptable_lag;     //  as the assignor's: a lag crossing it is news
    uint32_t restart_backoff_ms; //  first wait before starting a failed task again
    uint32_t max_restarts;       //  restarts in a row; the failure after stays
    uint32_t healthy_ms;         //  ran this long before failing: the run of
                                 //  failures starts over (0: any run)
} shoal_tasks_config_t;

//  Default timings: LAN (lease 6 s, twice the election's, so that a leader
//  failover fits in it; status every 1 s, first restart after
//  1 s, 3 restarts, healthy after 60 s, acceptable_lag 10000 as the
//  assignor's default),
//  loopback (timings 10x faster).
void shoal_tasks_config_lan (shoal_tasks_config_t *config);
void shoal_tasks_config_loopback (shoal_tasks_config_t *config);
//  The lease and the status period five times the LAN's (a WAN, or many
//  nodes on few cores); a failed task's restarts, a process's matter, as the LAN's.
void shoal_tasks_config_wan (shoal_tasks_config_t *config);
//  NULL when the config is usable, else why not.
const char *shoal_tasks_config_check (const shoal_tasks_config_t *config);

typedef enum {
    SHOAL_TASKS_START = 1, //  run the task in role, under epoch
    SHOAL_TASKS_PROMOTE,   //  a learner or standby becomes active under epoch
                           //  (or an active takes a new epoch)
    SHOAL_TASKS_DEMOTE,    //  an active stops acting, keeps its state, becomes role
    SHOAL_TASKS_STOP,      //  stop the task and drop it
} shoal_tasks_command_type_t;

typedef struct {
    uint8_t type;     //  shoal_tasks_command_type_t
    const char *task; //  valid until the next input
    uint8_t role;     //  the role after the command (none after STOP)
    shoal_epoch_t epoch;
} shoal_tasks_command_t;

typedef struct {
    shoal_id_t to;
    shoal_msg_t msg; //  a STATUS; its pointers are valid until the next input
} shoal_tasks_send_t;

typedef struct _shoal_tasks_t shoal_tasks_t;

//  A node with no tasks and no leader. NULL when the config is unusable or
//  memory is short.
shoal_tasks_t *shoal_tasks_new (const shoal_tasks_config_t *config, const shoal_id_t *id,
                                uint64_t now_ms);
void shoal_tasks_destroy (shoal_tasks_t **self_p);

//  The leader the election follows, or none (leader NULL). A new leader gets
//  a STATUS at once.
void shoal_tasks_leader (shoal_tasks_t *self, uint64_t now_ms, const shoal_id_t *leader,
                         uint64_t term);

//  An ASSIGN from the member from. Returns 0 when it was taken (applied, or
//  a keep-alive), -1 when it was dropped (stale term, a delta that does not
//  apply, a placement that repeats a task, no memory): dropping is normal and
//  costs nothing, the leader sends a snapshot later.
int shoal_tasks_assign (shoal_tasks_t *self, uint64_t now_ms, const shoal_id_t *from,
                        const shoal_assign_t *assign);

//  The job specs this node holds (any order): the tasks of those that
//  are stateful may run as standbys without a lease; every other task is
//  stopped then. Replaces what was given before. Returns -1 when memory is
//  short (what was given before stays).
int shoal_tasks_jobs (shoal_tasks_t *self, uint64_t now_ms, const shoal_jobspec_t *specs,
                      size_t count);

//  The application's report on a task: state SHOAL_TASK_RUNNING,
//  SHOAL_TASK_STOPPED or SHOAL_TASK_FAILED, and the lag of a learner or
//  standby (ignored for an active). Returns -1 for a task the application
//  was not told of (or was told to drop), a state it does not take, or a
//  report on a failed task before its restart.
int shoal_tasks_report (shoal_tasks_t *self, uint64_t now_ms, const char *task, uint8_t state,
                        uint64_t lag);

void shoal_tasks_tick (shoal_tasks_t *self, uint64_t now_ms);

//  The node's own mark (a shoal_cordon_t, as its meta holds it), told in
//  every STATUS from now on, and in one sent at once when it changed: the
//  leader hears it straight from the node, whatever gossip does. Returns
//  -1 for a mark above SHOAL_CORDON_MAX.
int shoal_tasks_cordon (shoal_tasks_t *self, uint64_t now_ms, uint8_t cordon);

//  How task's process exited, as the application says (exits in a row,
//  the last one's status or 256 + signal, why in words, cut to
//  SHOAL_REASON_MAX bytes), to report in STATUS: news when it changed.
//  Nothing else follows from it: restarts and failures go by the reports.
//  Returns -1 for a task not held, a last_exit above SHOAL_EXIT_MAX, or an
//  error that is not UTF-8 text.
int shoal_tasks_exit (shoal_tasks_t *self, uint64_t now_ms, const char *task, uint32_t exits,
                      uint32_t last_exit, const char *error);

size_t shoal_tasks_commands (const shoal_tasks_t *self, const shoal_tasks_command_t **commands);
size_t shoal_tasks_outbox (const shoal_tasks_t *self, const shoal_tasks_send_t **sends);
uint64_t shoal_tasks_next (const shoal_tasks_t *self);

//  Every task the node holds, as its STATUS reports it, sorted by task.
//  Valid until the next input.
size_t shoal_tasks_list (const shoal_tasks_t *self, const shoal_task_status_t **tasks);

//  True when a listed task still holds its node: in some role, or still
//  stopping (a drain is over only when none does).
bool shoal_task_held (const shoal_task_status_t *task);
bool shoal_tasks_leased (const shoal_tasks_t *self, uint64_t now_ms);
//  When the lease ends (0 before the first one). An application winding
//  an active down may write until then; once it has passed, never again
//  for that stop, even if a later lease comes.
uint64_t shoal_tasks_lease_end (const shoal_tasks_t *self);
//  The (term, version) of the assignment the node holds; (0, 0) before any.
shoal_epoch_t shoal_tasks_version (const shoal_tasks_t *self);

//  Debug: checks the node's tasks' own invariants: tasks sorted and
//  unique, the counts of held and acting tasks true, at most
//  SHOAL_TASKS_MAX held, the assignment held of no term above the newest
//  seen, the stateful jobs sorted. Returns 0, or -1 with *reason (unless reason is
//  NULL) naming the invariant broken. For tests, fuzzers and the simulator,
//  after any input (cheap: one pass over the tables); the node never calls
//  it. Compiled to return 0 when SHOAL_NO_CHECKS is defined.
int shoal_tasks_check (const shoal_tasks_t *self, const char **reason);

#endif

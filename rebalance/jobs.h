/*  rebalance/jobs.h: the job specs as replicated cluster state.

    A pure state machine, like election/elector.h: no sockets, no clocks, no
    threads, no globals, no printing, no randomness. Every input names the
    time (now_ms, the caller's monotonic clock). docs/jobs.md describes the
    protocol. Every node runs one for its whole life.

    Inputs:  shoal_jobs_leader    what the elector says now: the leader
                                  followed (this node when it leads), its
                                  term, and whether this node acts;
             shoal_jobs_voters    the elector's voter set;
             shoal_jobs_member    a member of the view is live or not;
             shoal_jobs_receive   a JOB, JOB-ACK, SYNC-REQ (jobs), SYNC-REPLY,
                                  CONTROL-REQ (a request forwarded to the
                                  leader) or CONTROL-REP (its answer);
             shoal_jobs_request   a submit, rescale or remove from a local
                                  client (the C API, the control endpoint);
             shoal_jobs_capacity  how many tasks of a job the cluster can
                                  hold as actives now (for rescales that wait);
             shoal_jobs_tick      the time came that next() asked for.
    Outputs, after each input and valid until the next input:
             shoal_jobs_saved     the job specs to persist, when they changed:
                                  write them before sending;
             shoal_jobs_outbox    messages to send, each to one member;
             shoal_jobs_replies   answers to local requests that finished;
             shoal_jobs_next      when to call tick next.
    Queries: shoal_jobs_specs, shoal_jobs_tasks, shoal_jobs_name,
             shoal_jobs_waiting, shoal_jobs_stats.

    The rules, in short:

    - The job specs are named (term, version): the term of the leader that
      wrote them and a version that counts every change up. Names compare
      term first, as Raft compares logs.
    - A leader that starts acting with a term asks every voter for its
      specs (SYNC-REQ) and adopts the greatest name among a majority of the
      voters (itself included). It renames them (term, version + 1), so that
      everything it sends is of its own term, and pushes them to every
      member (SYNC-REPLY). Only then does it take requests.
    - Each change gets the next version, goes out as a delta (JOB), and is
      answered once a majority of the voters holds it (JOB-ACK), in quorum
      mode; at once in available mode. A member that missed a delta gets the
      whole set at the next retry.
    - A node takes specs only from the leader it follows, with that leader's
      term, and answers a leader's SYNC-REQ only when it follows it: once it
      follows a term, nothing of an older term changes its specs. So a job
      acknowledged to a client is held by a majority that every later
      leader's catch-up meets.
    - A request to a node that does not lead is forwarded to the leader
      (CONTROL-REQ) and answered when the leader answers. While no leader
      can take it (none, or one not yet acting and caught up), the node
      holds it, up to forward_ms from its arrival. NO_LEADER always means
      that nothing was changed: a forwarding node holds such a refusal
      again and asks again after retry_ms.
    - Rescale: lowering the parallelism, or raising it within the capacity
      the caller reports, is written at once. Otherwise the request waits
      for capacity up to its timeout; then it applies the largest
      parallelism of at least min that fits (partial), or leaves the job
      as it was (timed out).
*/

#ifndef SHOAL_JOBS_H
#define SHOAL_JOBS_H

#include "rebalance/assignor.h"
#include "wire/wire.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    bool quorum;             //  answer a change once a majority holds it
    uint32_t retry_ms;       //  resend what a member or voter still lacks
    uint32_t forward_ms;     //  a local request this node does not lead is
                             //  answered within this long of its arrival,
                             //  held and forwarded (a rescale: plus its timeout)
    uint32_t max_pending;    //  requests in flight at once, per node
    uint32_t max_timeout_ms; //  the longest rescale wait accepted
} shoal_jobs_config_t;

//  LAN: quorum, retry 1 s, forward 10 s, 256 pending, rescale waits up to
//  10 min. Loopback: the times ten times shorter (not the rescale cap).
void shoal_jobs_config_lan (shoal_jobs_config_t *config);
void shoal_jobs_config_loopback (shoal_jobs_config_t *config);
//  Every time five times the LAN's (a WAN, or many nodes on few cores).
void shoal_jobs_config_wan (shoal_jobs_config_t *config);
const char *shoal_jobs_config_check (const shoal_jobs_config_t *config);

//  What a node persists, and restores at start: specs sorted by name.
typedef struct {
    uint64_t term;
    uint64_t version;
    size_t count;
    const shoal_jobspec_t *specs;
} shoal_jobs_saved_t;

typedef struct {
    shoal_id_t to;
    shoal_msg_t msg; //  its pointers are valid until the next input
} shoal_jobs_send_t;

//  The answer to a local request. rep.id is 0 (the control endpoint sets
//  its client's); rep.jobs holds the job as it stands after a submit or a
//  rescale (job_count 1), none otherwise.
typedef struct {
    uint64_t ref; //  as given to shoal_jobs_request
    shoal_control_rep_t rep;
} shoal_jobs_reply_t;

//  A rescale that waits for capacity: the job and the parallelism asked.
typedef struct {
    const char *job;
    uint32_t parallelism;
} shoal_jobs_wait_t;

typedef struct {
    uint64_t changes;   //  versions this node wrote as leader
    uint64_t applied;   //  deltas and snapshots this node took from a leader
    uint64_t snapshots; //  snapshots it sent
    uint64_t forwarded; //  requests it forwarded to the leader
    uint64_t refused;   //  requests answered with an error
    uint64_t dropped;   //  messages dropped (wrong sender, term, or nonsense)
} shoal_jobs_stats_t;

typedef struct _shoal_jobs_t shoal_jobs_t;

//  A node with this id; saved is what it persisted (NULL: none). NULL when
//  the config or saved is invalid, or memory is short.
shoal_jobs_t *shoal_jobs_new (const shoal_jobs_config_t *config, const shoal_id_t *id,
                              const shoal_jobs_saved_t *saved, uint64_t now_ms);
void shoal_jobs_destroy (shoal_jobs_t **self_p);

//  The leader this node follows (NULL: none; its own id when it leads),
//  the term (at least 1, as the elector's), and whether this node acts as
//  leader now. Call it after every
//  elector input whose outcome changed any of the three.
void shoal_jobs_leader (shoal_jobs_t *self, uint64_t now_ms, const shoal_id_t *leader,
                        uint64_t term, bool acting);

//  The voter set, whenever it changes. Returns -1 when memory is short
//  (the voters are then unchanged).
int shoal_jobs_voters (shoal_jobs_t *self, uint64_t now_ms, const shoal_id_t *voters, size_t count);

//  A member of the view is live or not. Returns -1 when memory is short.
int shoal_jobs_member (shoal_jobs_t *self, uint64_t now_ms, const shoal_id_t *id, bool live);

//  Takes in one message. Returns 0, or -1 when it was dropped.
int shoal_jobs_receive (shoal_jobs_t *self, uint64_t now_ms, const shoal_id_t *from,
                        const shoal_msg_t *msg);

//  A submit, rescale or remove (req->op) from a local client, answered in
//  shoal_jobs_replies under ref, now or later. Returns 0, or -1 when req is
//  not one of these (nothing is answered then).
int shoal_jobs_request (shoal_jobs_t *self, uint64_t now_ms, uint64_t ref,
                        const shoal_control_req_t *req);

//  How many tasks of job the cluster could hold as actives now, its own
//  included (UINT32_MAX: no limit). Only the leader uses it, for the
//  rescales shoal_jobs_waiting lists.
void shoal_jobs_capacity (shoal_jobs_t *self, uint64_t now_ms, const char *job, uint32_t capacity);

void shoal_jobs_tick (shoal_jobs_t *self, uint64_t now_ms);

bool shoal_jobs_saved (const shoal_jobs_t *self, shoal_jobs_saved_t *saved);
size_t shoal_jobs_outbox (const shoal_jobs_t *self, const shoal_jobs_send_t **sends);
size_t shoal_jobs_replies (const shoal_jobs_t *self, const shoal_jobs_reply_t **replies);
uint64_t shoal_jobs_next (const shoal_jobs_t *self);

//  The specs this node holds, sorted by name, and their name.
size_t shoal_jobs_specs (const shoal_jobs_t *self, const shoal_jobspec_t **specs);
void shoal_jobs_name (const shoal_jobs_t *self, uint64_t *term, uint64_t *version);

//  Every task of those specs ("job/index"), sorted by id, as the handoff
//  takes them; valid until the next input.
size_t shoal_jobs_tasks (const shoal_jobs_t *self, const shoal_assign_task_t **tasks);

//  True when this node acts as leader and has caught up: its specs are the
//  cluster's, and it takes requests.
bool shoal_jobs_ready (const shoal_jobs_t *self);

//  The rescales waiting for capacity (leader only).
size_t shoal_jobs_waiting (const shoal_jobs_t *self, const shoal_jobs_wait_t **waits);

void shoal_jobs_stats (const shoal_jobs_t *self, shoal_jobs_stats_t *stats);

//  Debug: checks the jobs' own invariants: the specs held sorted and
//  unique under a version that cannot wrap, the peers sorted and never this
//  node, pending requests and forwards within max_pending, the tasks sorted
//  and unique. Returns 0, or -1 with *reason (unless reason is
//  NULL) naming the invariant broken. For tests, fuzzers and the simulator,
//  after any input (cheap: one pass over the tables); the node never calls
//  it. Compiled to return 0 when SHOAL_NO_CHECKS is defined.
int shoal_jobs_check (const shoal_jobs_t *self, const char **reason);

#endif

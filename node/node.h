/*  node/node.h: the parts of a node (include/shoal.h), shared by the files
    that make it. Not a public header.

    A node is split the way zyre is: a thin API on the application's
    threads (api.c) over an actor that owns every socket, timer and file on
    a thread of its own (actor.c: its start, loop and the peer's sink;
    discovery.c: beacons and seeds; status.c: the control endpoint and the
    leader's status table; keys.c: key rotation; calls.c: what each call of
    the API does on the actor's thread). docs/node.md describes the whole.

    The application's threads reach the actor in two ways:
    - calls: a shoal_call_t handed over the actor's pipe one at a time
      (under call_lock), run by shoal_call_run, and answered with a signal;
    - events: the actor queues them (under events_lock) and an eventfd is
      readable while the queue holds any.
    Requests that wait for the cluster (submit, rescale, remove, leave,
    status) are calls that register a waiter; the caller then waits on the
    call's own condition, so that a long rescale holds up no other call.
*/
#ifndef SHOAL_NODE_H
#define SHOAL_NODE_H

#include "shoal.h"

#include "node/cancel.h"
#include "node/control.h"
#include "node/eventlog.h"
#include "node/metrics.h"
#include "node/moves.h"
#include "node/options.h"
#include "peer/peer.h"
#include "node/refusals.h"
#include "node/resolver.h"
#include "node/store.h"
#include "node/transport.h"
#include "node/unplaced.h"

#include <czmq.h>
#include <pthread.h>

//  Status requests that wait for the leader's table at once; more are
//  answered with this node's own tasks.
#define SHOAL_ASKS_MAX 16

typedef struct _shoal_actor_t shoal_actor_t;
typedef struct _shoal_keyops_t shoal_keyops_t;
typedef struct _shoal_logops_t shoal_logops_t;

//  ---------------------------------------------------------------------
//  Calls

typedef enum {
    SHOAL_CALL_LEAVE = 0,
    SHOAL_CALL_REQUEST, //  submit, rescale, remove
    SHOAL_CALL_FORGET,  //  the caller gives up waiting for its call
    SHOAL_CALL_REPORT,
    SHOAL_CALL_REPORT_EXIT,
    SHOAL_CALL_MEMBERS,
    SHOAL_CALL_LEADER,
    SHOAL_CALL_TASKS,
    SHOAL_CALL_JOB,
    SHOAL_CALL_JOBS,
    SHOAL_CALL_STATUS,
    SHOAL_CALL_REOPEN, //  the files the node appends to
    SHOAL_CALL_KINDS
} shoal_call_kind_t;

//  A request to the cluster, and its answer (a leave's answer lands here
//  too, with req NULL).
typedef struct {
    const shoal_control_req_t *req;
    shoal_result_t result;
} shoal_call_request_t;

typedef struct {
    const char *task;
    uint8_t state; //  shoal_report_state_t
    uint64_t lag;
} shoal_call_report_t;

typedef struct {
    const char *task;
    uint32_t restarts;
    uint32_t last_exit;
    const char *error;
} shoal_call_exit_t;

typedef struct {
    char id[SHOAL_NODE_ID_TEXT];
    uint64_t term;
    bool acting;
} shoal_call_leader_t;

typedef struct {
    const char *name;
    char *command; //  NULL: not wanted
    size_t command_size;
    uint32_t parallelism;
    bool stateful;
    shoal_job_info_t *info; //  NULL: not wanted; else info_size bytes of it
    size_t info_size;
} shoal_call_job_t;

//  Members, tasks, jobs and the status table: up to max items of
//  item_size bytes (as the caller compiled them) at items.
typedef struct {
    void *items;
    size_t item_size;
    size_t max;
    size_t count;             //  how many there are
    uint64_t version[2];      //  tasks, jobs: the version they name
    uint64_t wait_ms;         //  status: how long to wait for the leader
    shoal_status_info_t info; //  status
} shoal_call_list_t;

typedef struct _shoal_call_t shoal_call_t;
struct _shoal_call_t {
    shoal_call_kind_t kind;
    union {
        shoal_call_request_t request;
        shoal_call_report_t report;
        shoal_call_exit_t exit;
        shoal_call_leader_t leader;
        shoal_call_job_t job;
        shoal_call_list_t list;
    } u;
    int rc;
    char why[SHOAL_REASON_TEXT];
    //  A call that waits: the actor answers it by ref, later, unless the
    //  caller gives up first (its timeout, or cancel).
    uint64_t ref;
    shoal_cancel_t *cancel;
    pthread_mutex_t lock;
    pthread_cond_t done_cond;
    bool done;
};

//  Runs call on the actor's thread (calls.c).
void shoal_call_run (shoal_actor_t *actor, shoal_call_t *call);

//  Copies ours (our_size bytes, the library's struct) into theirs
//  (their_size bytes, the caller's, compiled against some shoal.h): as much
//  as both know, zeros past what the library knows. A struct that begins
//  with its size (sized) keeps the caller's.
void shoal_call_give (void *theirs, size_t their_size, const void *ours, size_t our_size,
                      bool sized);

//  ---------------------------------------------------------------------
//  The node, as the application holds it

struct _shoal_node_t {
    shoal_options_t *options;
    zactor_t *actor;             //  NULL until started, and once stopped
    pthread_mutex_t call_lock;   //  one call on the pipe at a time
    pthread_mutex_t events_lock; //  the queue below
    int events_fd;               //  eventfd: readable while events wait
    shoal_event_t *events;       //  a ring
    size_t events_head, events_count, events_size;
    //  The lease as the application may take it (shoal_node_lease): when it
    //  ends, 0 when lost; and how many LEASE events wait in the queue,
    //  during which it says 0. Both under events_lock.
    uint64_t lease_until;
    size_t lease_events;
    char id[SHOAL_NODE_ID_TEXT];
    uint16_t port;
    bool stopped; //  it left or was stopped: it never starts again
};

//  ---------------------------------------------------------------------
//  The actor's state, touched only on its thread

typedef struct {
    uint8_t *bytes;
    size_t size;
    shoal_purpose_t purpose;
} shoal_loopback_t;

//  Who waits for a status table: a control client's request (ref) or a
//  call of shoal_node_status.
typedef struct {
    uint64_t ref;
    shoal_call_t *call;
} shoal_asker_t;

//  A status request sent on to the leader, or a cordon, uncordon or drain
//  sent on to the member it names (op).
typedef struct {
    shoal_asker_t asker;
    uint32_t id;       //  the CONTROL-REQ's
    uint8_t op;        //  SHOAL_OP_STATUS, _CORDON, _UNCORDON, _DRAIN
    shoal_id_t leader; //  where it went: the leader, or the member named
    uint64_t deadline;
} shoal_ask_t;

//  A round of the seeds' lookups (discovery.c), as their results come.
typedef struct {
    bool warn;       //  the node was alone after the round before too
    size_t tried;    //  seeds joined through
    size_t warned;   //  seeds named in a warning
    size_t unwarned; //  and those past S_JOIN_WARN_SEEDS
} shoal_join_round_t;

struct _shoal_actor_t {
    shoal_node_t *node;
    const shoal_options_t *options;
    zsock_t *pipe;
    bool terminated;
    shoal_life_t life;
    shoal_id_t id;
    uint64_t incarnation_saved;
    shoal_keyring_t *keyring;
    shoal_store_t *store;
    shoal_transport_t *transport;
    shoal_peer_t *peer;
    shoal_peer_config_t config;
    shoal_arena_t arena;
    char addr[SHOAL_ADDR_MAX + 1]; //  advertised
    shoal_id_t cluster;
    //  Messages to itself, delivered after the current input.
    shoal_loopback_t *loopback;
    size_t loopback_count, loopback_size;
    bool delivering;
    //  Waiters: calls that wait for an answer of the cluster.
    zlistx_t *waiters;
    uint64_t next_ref;
    //  Discovery.
    bool beacons;
    uint32_t beacon_interval_ms;
    uint64_t beacon_at; //  when the beacon is sealed afresh
    uint64_t beacon_incarnation;
    bool beacon_leaving;
    uint64_t join_at; //  when the seeds are tried again (0: never tried)
    uint32_t join_interval_ms;
    uint32_t join_rounds;       //  rounds in a row that found the node alone
    bool join_told_held;        //  that the election waits for a seed
    shoal_resolver_t *resolver; //  NULL without seeds
    shoal_join_round_t join_round;
    bool join_self; //  every seed is this node: it is the first of its cluster
    //  The lease, as last told to the application.
    bool leased;
    //  Leaving.
    bool leaving;
    bool left;
    //  The control endpoint, and the status requests sent the leader.
    shoal_control_server_t *control;
    shoal_ask_t asks[SHOAL_ASKS_MAX];
    size_t ask_count;
    uint32_t last_ask;
    //  What the node shows of itself (NULL: off), and whether the event
    //  log's first failure was told.
    shoal_metrics_t *metrics;
    shoal_eventlog_t *events;
    bool events_failed;
    //  The tasks this node, as acting leader, places nowhere.
    shoal_unplaced_watch_t *unplaced;
    shoal_moves_watch_t *moves; //  the acting leader's moves, for the event log
    //  Senders of envelopes refused at the door, told at most once a minute.
    shoal_refusals_t *refusals;
    //  Key operations this node runs as leader, or relays (node/keys.h).
    shoal_keyops_t *keyops;
    //  Logs requests this node relays to members (node/logs.h).
    shoal_logops_t *logops;
};

//  The actor (actor.c): its thread's function, for zactor_new; the clock;
//  sending; the messages it sent itself; notices; the waiters; leaving.
void shoal_actor_run (zsock_t *pipe, void *node);
uint64_t shoal_actor_now (void);
void shoal_actor_send (void *actor, const shoal_life_t *to, const char *addr,
                       const shoal_msg_t *msg);
void shoal_actor_deliver (shoal_actor_t *self, uint64_t now);
void shoal_actor_notice (shoal_actor_t *self, const char *format, ...)
    __attribute__ ((format (printf, 2, 3)));
shoal_call_t *shoal_actor_waiter_find (shoal_actor_t *self, uint64_t ref,
                                       const shoal_call_t *which);
void shoal_actor_leave_start (shoal_actor_t *self, uint64_t now);
void shoal_actor_leave_check (shoal_actor_t *self);

//  Discovery (discovery.c): the beacon sealed afresh when due, one that
//  came in, the seeds joined when due.
void shoal_discovery_publish (shoal_actor_t *self, uint64_t now);
void shoal_discovery_receive (shoal_actor_t *self, uint64_t now, const shoal_transport_in_t *in);
void shoal_discovery_join (shoal_actor_t *self, uint64_t now);
//  The seeds' lookups that came back (the resolver's descriptor is readable).
void shoal_discovery_resolved (shoal_actor_t *self, uint64_t now);

//  The control endpoint and the status table (status.c): serves the
//  control endpoint's requests; takes a member's status request or the
//  leader's answer (true when in was one); answers the asks past their
//  deadline; forgets a call's asks; runs a status call.
void shoal_status_serve (shoal_actor_t *self, uint64_t now);
bool shoal_status_message (shoal_actor_t *self, uint64_t now, const shoal_transport_in_t *in);
void shoal_status_expire (shoal_actor_t *self, uint64_t now);
void shoal_status_forget (shoal_actor_t *self, const shoal_call_t *call);
void shoal_status_call (shoal_actor_t *self, shoal_call_t *call);

#endif

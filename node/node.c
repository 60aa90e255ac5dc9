/*  node/node.c: a node of the public API (include/shoal.h): one actor
    thread that runs a peer (peer/peer.h) over real sockets, and the calls
    that reach it from the application's threads.

    The actor owns every socket, timer and file of the node: the transport
    (UDP, the ROUTER, the DEALERs, the beacon actor), the control endpoint
    and the data directory. It polls them all with a timeout of the peer's
    next deadline, never busy. docs/node.md describes the whole.

    The application's threads reach the actor in two ways:
    - calls: a function run on the actor's thread, handed over the actor's
      pipe one at a time (under call_lock), and answered with a signal;
    - events: the actor queues them (under events_lock) and an eventfd is
      readable while the queue holds any.
    Requests that wait for the cluster (submit, rescale, remove, leave) are
    calls that register a waiter; the caller then waits on the waiter's own
    condition, so that a long rescale holds up no other call.
*/

#include "shoal.h"

#include "cancel.h"
#include "control.h"
#include "eventlog.h"
#include "key.h"
#include "keyring.h"
#include "metrics.h"
#include "options.h"
#include "peer.h"
#include "persist.h"
#include "refusals.h"
#include "store.h"
#include "transport.h"
#include "unplaced.h"
#include "why.h"

#include <czmq.h>
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

_Static_assert((int) SHOAL_ACTIVE == SHOAL_ROLE_ACTIVE &&
                   (int) SHOAL_STANDBY == SHOAL_ROLE_STANDBY &&
                   (int) SHOAL_LEARNER == SHOAL_ROLE_LEARNER,
               "the public roles are the wire's");
_Static_assert((int) SHOAL_RUNNING == SHOAL_TASK_RUNNING &&
                   (int) SHOAL_STOPPED == SHOAL_TASK_STOPPED &&
                   (int) SHOAL_FAILED == SHOAL_TASK_FAILED,
               "the public task states are the wire's");
_Static_assert((int) SHOAL_MEMBER_STATE_LEFT == SHOAL_MEMBER_LEFT &&
                   (int) SHOAL_MEMBER_STATE_DEAD == SHOAL_MEMBER_DEAD,
               "the public member states are the wire's");
_Static_assert((int) SHOAL_RESULT_FAILED == SHOAL_REPLY_FAILED &&
                   (int) SHOAL_RESULT_PARTIAL == SHOAL_REPLY_PARTIAL,
               "the public result codes are the wire's");
_Static_assert(SHOAL_NODE_ID_TEXT == SHOAL_ID_TEXT && SHOAL_TASK_TEXT == SHOAL_TASK_MAX + 1 &&
                   SHOAL_NAME_TEXT == SHOAL_NAME_MAX + 1 && SHOAL_ADDR_TEXT == SHOAL_ADDR_MAX + 1 &&
                   SHOAL_REASON_TEXT == SHOAL_REASON_MAX + 1 &&
                   SHOAL_COMMAND_TEXT == SHOAL_COMMAND_MAX + 1 &&
                   SHOAL_OPTION_TEXT == SHOAL_OPTIONS_VALUE_MAX + 1,
               "the public texts hold the wire's");
_Static_assert(SHOAL_REQUIRE_TEXT == SHOAL_LABELS_MAX * (2 * SHOAL_LABEL_MAX + 2) + 1,
               "the public require text holds every label, key=value and a comma each");

//  Decoded messages live in an arena of this size: the largest frame
//  decodes into less than four times its size.
#define S_ARENA_SIZE (4u * SHOAL_FRAME_MAX)
//  Messages taken from one socket before the others get a turn.
#define S_BURST 64

//  Status requests that wait for the leader's table at once; more are
//  answered with this node's own tasks. Their CONTROL-REQ ids have the high
//  bit set, apart from the jobs' forwards (which count from 1).
#define S_ASKS_MAX 16
//  How often frames that wait for a connection are tried again.
#define S_FLUSH_MS     2
#define S_ASK_ID       0x80000000u
#define S_ASK_WAIT_MAX 10000
//  A beacon is sealed afresh this often (a listener takes each sealed
//  beacon once), in beacon intervals.
#define S_BEACON_RESEAL 10
//  Events queued for an application that does not read, past which only
//  the ones it must act on are kept.
#define S_EVENTS_MAX 4096
//  Messages a node sends itself while handling one input, at most.
#define S_LOOPBACK_MAX 4096
//  The shortest time a link may hear nothing before it is made again.
#define S_LINK_TIMEOUT_MIN_MS 1000

//  ---------------------------------------------------------------------
//  Calls and waiters

typedef struct _s_actor_t s_actor_t;
typedef struct _s_call_t s_call_t;

struct _s_call_t {
    void (*run) (s_actor_t *actor, s_call_t *call);
    //  What the call takes and gives; each call uses what it needs.
    const void *in;
    void *out;
    size_t max;
    size_t item_size; //  of one item of out, as the caller compiled it
    size_t count;
    uint64_t number[2];
    int rc;
    char why[SHOAL_REASON_TEXT];
    //  A call that waits: the actor answers it by ref, later, unless the
    //  caller gives up first (its timeout, or cancel).
    uint64_t ref;
    shoal_cancel_t *cancel;
    pthread_mutex_t lock;
    pthread_cond_t done_cond;
    bool done;
    shoal_result_t result;
    shoal_status_info_t status;
};

//  Who waits for a status table: a control client's request (ref) or a
//  call of shoal_node_status.
typedef struct {
    uint64_t ref;
    s_call_t *call;
} s_asker_t;

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
} s_loopback_t;

//  A client's status request sent on to the leader.
typedef struct {
    s_asker_t asker;
    uint32_t id; //  the CONTROL-REQ's
    shoal_id_t leader;
    uint64_t deadline;
} s_ask_t;

struct _s_actor_t {
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
    s_loopback_t *loopback;
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
    uint32_t join_rounds; //  rounds in a row that found the node alone
    bool join_told_held;  //  that the election waits for a seed
    //  The lease, as last told to the application.
    bool leased;
    //  Leaving.
    bool leaving;
    bool left;
    //  The control endpoint, and the status requests it sent the leader.
    shoal_control_server_t *control;
    s_ask_t asks[S_ASKS_MAX];
    size_t ask_count;
    uint32_t last_ask;
    //  What the node shows of itself (NULL: off), and whether the event
    //  log's first failure was told.
    shoal_metrics_t *metrics;
    shoal_eventlog_t *events;
    bool events_failed;
    //  The tasks this node, as acting leader, places nowhere.
    shoal_unplaced_watch_t *unplaced;
    //  Senders of envelopes refused at the door, told at most once a minute.
    shoal_refusals_t *refusals;
};

//  ---------------------------------------------------------------------
//  The event queue

static bool
s_id_zero (const shoal_id_t *id)
{
    static const shoal_id_t zero;
    return memcmp (id, &zero, sizeof zero) == 0;
}

//  Queues an event for the application. What the application must act on
//  (its tasks, the lease, the leave) is always queued while memory lasts;
//  the rest (members, leaders, notices) is dropped once the queue holds
//  S_EVENTS_MAX events: the application does not read.
static void
s_event_push (shoal_node_t *node, const shoal_event_t *event)
{
    bool droppable = event->type == SHOAL_EVENT_MEMBER || event->type == SHOAL_EVENT_LEADER ||
                     event->type == SHOAL_EVENT_NOTICE;
    pthread_mutex_lock (&node->events_lock);
    if (droppable && node->events_count >= S_EVENTS_MAX) {
        pthread_mutex_unlock (&node->events_lock);
        return;
    }
    if (node->events_count == node->events_size) {
        size_t size = node->events_size ? 2 * node->events_size : 64;
        shoal_event_t *events = malloc (size * sizeof *events);
        if (!events) {
            pthread_mutex_unlock (&node->events_lock);
            return;
        }
        for (size_t i = 0; i < node->events_count; i++)
            events[i] = node->events[(node->events_head + i) % node->events_size];
        free (node->events);
        node->events = events;
        node->events_head = 0;
        node->events_size = size;
    }
    node->events[(node->events_head + node->events_count) % node->events_size] = *event;
    if (event->type == SHOAL_EVENT_LEASE)
        node->lease_events++;
    if (node->events_count++ == 0) {
        uint64_t one = 1;
        if (write (node->events_fd, &one, sizeof one) < 0) {
            //  Only an overflowing counter fails, and it never gets near.
        }
    }
    pthread_mutex_unlock (&node->events_lock);
}

//  ---------------------------------------------------------------------
//  The peer's sink

static uint64_t
s_now (void)
{
    return (uint64_t) zclock_mono ();
}

//  Keeps msg, encoded, to hand to the peer once the current input is done.
static void
s_loopback_push (s_actor_t *self, const shoal_msg_t *msg)
{
    if (self->loopback_count >= S_LOOPBACK_MAX)
        return;
    long size = shoal_msg_encode (msg, NULL, 0, NULL);
    if (size < 0)
        return;
    if (self->loopback_count == self->loopback_size) {
        size_t grown = self->loopback_size ? 2 * self->loopback_size : 16;
        s_loopback_t *loopback = realloc (self->loopback, grown * sizeof *loopback);
        if (!loopback)
            return;
        self->loopback = loopback;
        self->loopback_size = grown;
    }
    uint8_t *bytes = malloc ((size_t) size);
    if (!bytes || shoal_msg_encode (msg, bytes, (size_t) size, NULL) != size) {
        free (bytes);
        return;
    }
    self->loopback[self->loopback_count++] =
        (s_loopback_t){ bytes, (size_t) size, shoal_msg_purpose (msg->type) };
}

//  Hands the peer what it sent itself, and what that brings, in order.
static void
s_loopback_deliver (s_actor_t *self, uint64_t now)
{
    //  What the input before published, and below what each message to
    //  itself does: a revocation and the grant after it may come within
    //  one pass of the loop (the leader's own task).
    shoal_metrics_handoff (self->metrics, now, self->peer);
    if (self->delivering)
        return;
    self->delivering = true;
    for (size_t i = 0; i < self->loopback_count; i++) {
        s_loopback_t item = self->loopback[i];
        shoal_msg_t msg;
        shoal_arena_reset (&self->arena);
        if (shoal_msg_decode (item.bytes, item.size, item.purpose, &msg, &self->arena, NULL) == 0) {
            shoal_envelope_t envelope = { .mode = SHOAL_ENVELOPE_PLAINTEXT,
                                          .purpose = (uint8_t) item.purpose,
                                          .sender = self->life,
                                          .recipient = self->life };
            shoal_peer_receive (self->peer, now, &envelope, &msg, self->addr);
            shoal_metrics_handoff (self->metrics, now, self->peer);
        }
        free (item.bytes);
    }
    self->loopback_count = 0;
    self->delivering = false;
}

static void
s_send (void *arg, const shoal_life_t *to, const char *addr, const shoal_msg_t *msg)
{
    s_actor_t *self = arg;
    if (memcmp (to->id, self->id.bytes, SHOAL_ID_SIZE) == 0) {
        s_loopback_push (self, msg);
        return;
    }
    shoal_life_t recipient = *to;
    if (!addr) {
        //  A message to a member in whichever life it has: its address and
        //  life are those of the view.
        shoal_membership_member_t member;
        shoal_id_t id;
        memcpy (id.bytes, to->id, SHOAL_ID_SIZE);
        if (shoal_membership_member (shoal_peer_membership (self->peer), &id, &member) != 0 ||
            !member.meta || !member.meta->addr)
            return;
        recipient.life = member.life;
        addr = member.meta->addr;
    }
    static const shoal_life_t nobody;
    const shoal_life_t *addressee = memcmp (&recipient, &nobody, sizeof nobody) ? &recipient : NULL;
    if (shoal_msg_purpose (msg->type) == SHOAL_PURPOSE_DATAGRAM)
        shoal_transport_datagram (self->transport, addr, addressee, msg);
    else
        shoal_transport_frame (self->transport, addr, addressee, msg);
}

//  Splits a task id "job/index" into its job and index.
static void
s_task_parts (const char *task, shoal_event_t *event)
{
    snprintf (event->task, sizeof event->task, "%s", task);
    const char *slash = strrchr (task, '/');
    size_t length = slash ? (size_t) (slash - task) : strlen (task);
    if (length >= sizeof event->job)
        length = sizeof event->job - 1;
    memcpy (event->job, task, length);
    event->job[length] = 0;
    event->index = slash ? (uint32_t) strtoul (slash + 1, NULL, 10) : 0;
}

static void s_lease_check (s_actor_t *self, uint64_t now);

static void
s_command (void *arg, const shoal_tasks_command_t *command)
{
    s_actor_t *self = arg;
    static const int types[] = { [SHOAL_TASKS_START] = SHOAL_EVENT_START,
                                 [SHOAL_TASKS_PROMOTE] = SHOAL_EVENT_PROMOTE,
                                 [SHOAL_TASKS_DEMOTE] = SHOAL_EVENT_DEMOTE,
                                 [SHOAL_TASKS_STOP] = SHOAL_EVENT_STOP };
    if (command->type >= sizeof types / sizeof types[0] || !types[command->type])
        return;
    //  A lease that lapsed brings DEMOTEs: the application hears that the
    //  lease is lost first, so that it never takes them for a demotion it
    //  may finish while leased.
    s_lease_check (self, s_now ());
    shoal_metrics_command (self->metrics, command);
    shoal_eventlog_command (self->events, command);
    shoal_event_t event = { .type = types[command->type],
                            .role = command->role,
                            .epoch_term = command->epoch.term,
                            .epoch_version = command->epoch.version };
    s_task_parts (command->task, &event);
    const shoal_jobspec_t *specs;
    size_t count = shoal_jobs_specs (shoal_peer_jobs (self->peer), &specs);
    for (size_t i = 0; i < count; i++)
        if (strcmp (specs[i].name, event.job) == 0)
            event.parallelism = specs[i].parallelism;
    s_event_push (self->node, &event);
}

//  The waiter for ref (or the waiter call, when not NULL), taken off the
//  list; NULL when it gave up.
static s_call_t *
s_waiter_find (s_actor_t *self, uint64_t ref, const s_call_t *which)
{
    for (s_call_t *call = zlistx_first (self->waiters); call; call = zlistx_next (self->waiters))
        if (which ? call == which : call->ref == ref) {
            zlistx_delete (self->waiters, zlistx_cursor (self->waiters));
            return call;
        }
    return NULL;
}

static s_call_t *
s_waiter_take (s_actor_t *self, uint64_t ref)
{
    return s_waiter_find (self, ref, NULL);
}

static void
s_waiter_answer (s_call_t *call, int code, const char *reason, uint32_t parallelism)
{
    pthread_mutex_lock (&call->lock);
    call->result.code = code;
    snprintf (call->result.reason, sizeof call->result.reason, "%s", reason ? reason : "");
    call->result.parallelism = parallelism;
    call->done = true;
    pthread_cond_signal (&call->done_cond);
    pthread_mutex_unlock (&call->lock);
}

static void
s_reply (void *arg, const shoal_jobs_reply_t *reply)
{
    s_actor_t *self = arg;
    shoal_eventlog_reply (self->events, reply);
    if (shoal_control_server_answer (self->control, reply->ref, &reply->rep) == 0)
        return;
    s_call_t *call = s_waiter_take (self, reply->ref);
    if (call)
        s_waiter_answer (call, reply->rep.code, reply->rep.reason,
                         reply->rep.job_count ? reply->rep.jobs[0].parallelism : 0);
}

static void s_notice (s_actor_t *self, const char *format, ...);

//  A live member that bears this node's name: names are how operators tell
//  nodes apart, and a node cannot know the names in use before it joins,
//  so it is told then, loudly, on both sides (each shows with its id in
//  `shoal members`). Once per member's life (a name changes only with one).
static void
s_name_check (s_actor_t *self, const shoal_membership_event_t *event)
{
    shoal_membership_member_t me;
    if (!event->meta || !event->meta->name ||
        memcmp (event->node.bytes, self->id.bytes, SHOAL_ID_SIZE) == 0 ||
        shoal_membership_member (shoal_peer_membership (self->peer), &self->id, &me) != 0 ||
        !me.meta || !me.meta->name || strcmp (me.meta->name, event->meta->name) != 0)
        return;
    char id[SHOAL_ID_TEXT];
    shoal_id_format (event->node.bytes, true, id);
    s_notice (self,
              "name '%s' is taken: member %s at %s has it too; give each node a name of its own "
              "(--name)",
              event->meta->name, id, event->meta->addr ? event->meta->addr : "?");
}

static void
s_member_event (void *arg, const shoal_membership_event_t *event)
{
    s_actor_t *self = arg;
    static const int states[] = { [SHOAL_MEMBERSHIP_UP] = SHOAL_MEMBER_ALIVE,
                                  [SHOAL_MEMBERSHIP_SUSPECT] = SHOAL_MEMBER_SUSPECT,
                                  [SHOAL_MEMBERSHIP_DEAD] = SHOAL_MEMBER_DEAD,
                                  [SHOAL_MEMBERSHIP_LEFT] = SHOAL_MEMBER_LEFT,
                                  [SHOAL_MEMBERSHIP_UPDATED] = SHOAL_MEMBER_ALIVE };
    if (event->type >= sizeof states / sizeof states[0])
        return;
    shoal_eventlog_member (self->events, event);
    bool other = event->meta && event->meta->addr &&
                 memcmp (event->node.bytes, self->id.bytes, SHOAL_ID_SIZE) != 0;
    if (event->type == SHOAL_MEMBERSHIP_DEAD || event->type == SHOAL_MEMBERSHIP_LEFT)
        shoal_transport_forget (self->transport, event->node.bytes);
    else if (event->type == SHOAL_MEMBERSHIP_UP && other)
        //  Connected before it is needed: an election must not lose its
        //  first message to a member this node never spoke to. A member
        //  back from suspicion gets a new connection: the old one may wait
        //  out TCP's retransmission backoff (docs/node.md, "Links").
        shoal_transport_relink (self->transport, event->node.bytes, event->meta->addr);
    else if (event->type == SHOAL_MEMBERSHIP_UPDATED && other)
        shoal_transport_link (self->transport, event->node.bytes, event->meta->addr);
    if (event->type == SHOAL_MEMBERSHIP_UP)
        s_name_check (self, event);
    shoal_event_t out = { .type = SHOAL_EVENT_MEMBER, .state = states[event->type] };
    shoal_id_format (event->node.bytes, true, out.node);
    if (event->meta && event->meta->name)
        snprintf (out.name, sizeof out.name, "%s", event->meta->name);
    s_event_push (self->node, &out);
}

static void
s_leader_event (void *arg, const shoal_elector_event_t *event)
{
    s_actor_t *self = arg;
    shoal_eventlog_leader (self->events, event,
                           shoal_elector_acting (shoal_peer_elector (self->peer), s_now ()));
    shoal_event_t out = { .type = SHOAL_EVENT_LEADER, .term = event->term };
    if (event->type == SHOAL_ELECTOR_LEADER)
        shoal_id_format (event->leader.bytes, true, out.node);
    s_event_push (self->node, &out);
}

//  Writes a record to the data directory. A write that fails is told to
//  the application: the node runs on, but what it would keep is at risk.
static void
s_store_write (s_actor_t *self, const char *name, const uint8_t *bytes, size_t size)
{
    shoal_event_t event = { .type = SHOAL_EVENT_NOTICE };
    char why[200];
    if (!bytes)
        snprintf (event.reason, sizeof event.reason, "cannot encode %s to keep it", name);
    else if (shoal_store_write (self->store, name, bytes, size, why, sizeof why) != 0)
        snprintf (event.reason, sizeof event.reason, "cannot keep %s: %s", name, why);
    else
        return;
    s_event_push (self->node, &event);
}

static void
s_saved (void *arg, const shoal_peer_saved_t *saved)
{
    s_actor_t *self = arg;
    uint8_t *bytes = NULL;
    size_t size = 0;
    if (saved->elector) {
        shoal_persist_elector_encode (saved->elector, &bytes, &size, NULL, 0);
        s_store_write (self, SHOAL_PERSIST_ELECTOR_FILE, bytes, size);
        free (bytes);
    }
    if (saved->jobs) {
        shoal_persist_jobs_encode (saved->jobs, &bytes, &size, NULL, 0);
        s_store_write (self, SHOAL_PERSIST_JOBS_FILE, bytes, size);
        free (bytes);
    }
}

//  The lease is told to the application when it changes; its end, which
//  grows with no event, is published for shoal_node_lease after each step
//  (and after a LEASE event, which it never runs ahead of).
static void
s_lease_check (s_actor_t *self, uint64_t now)
{
    shoal_tasks_t *tasks = shoal_peer_tasks (self->peer);
    bool leased = tasks && shoal_tasks_leased (tasks, now);
    if (leased != self->leased) {
        self->leased = leased;
        shoal_eventlog_lease (self->events, leased, tasks ? shoal_tasks_lease_end (tasks) : 0);
        shoal_event_t event = { .type = SHOAL_EVENT_LEASE, .leased = leased };
        s_event_push (self->node, &event);
    }
    pthread_mutex_lock (&self->node->events_lock);
    self->node->lease_until = leased ? shoal_tasks_lease_end (tasks) : 0;
    pthread_mutex_unlock (&self->node->events_lock);
}

static void
s_tasks_done (void *arg)
{
    s_actor_t *self = arg;
    shoal_eventlog_assignment (self->events, shoal_tasks_version (shoal_peer_tasks (self->peer)));
    s_lease_check (self, s_now ());
}

//  ---------------------------------------------------------------------
//  Discovery

//  The beacon, sealed afresh: when it changed, and every few intervals.
static void
s_beacon_publish (s_actor_t *self, uint64_t now)
{
    if (!self->beacons)
        return;
    uint64_t incarnation = shoal_membership_incarnation (shoal_peer_membership (self->peer));
    if (now < self->beacon_at && incarnation == self->beacon_incarnation &&
        self->leaving == self->beacon_leaving)
        return;
    shoal_msg_t msg = { .type = SHOAL_MSG_BEACON };
    msg.u.beacon = (shoal_beacon_t){ .cluster = self->cluster,
                                     .node = self->id,
                                     .incarnation = incarnation,
                                     .port = shoal_transport_port (self->transport),
                                     .flags = self->leaving ? SHOAL_BEACON_LEAVING : 0 };
    shoal_transport_beacons_publish (self->transport, &msg, self->beacon_interval_ms);
    self->beacon_incarnation = incarnation;
    self->beacon_leaving = self->leaving;
    self->beacon_at = now + (uint64_t) S_BEACON_RESEAL * self->beacon_interval_ms;
}

//  Tells the application something it should know, as a NOTICE event
//  (`shoal worker` logs it as a warning).
static void
s_notice (s_actor_t *self, const char *format, ...)
{
    shoal_event_t event = { .type = SHOAL_EVENT_NOTICE };
    va_list args;
    va_start (args, format);
    vsnprintf (event.reason, sizeof event.reason, format, args);
    va_end (args);
    s_event_push (self->node, &event);
}

//  Seeds a join round names in its warnings, at most; the rest are counted.
#define S_JOIN_WARN_SEEDS 8

//  Resolves seed into the addresses this node can reach (those of its
//  sockets' family; an IPv6 node reaches both), each "ip:port" or
//  "[ip]:port", joined through unless it is this node's own. Returns the
//  number joined through; -1 with the reason in why when the name does not
//  resolve; 0 when every address is this node's own (or out of its reach,
//  said in why).
static int
s_join_seed (s_actor_t *self, uint64_t now, const shoal_option_hostport_t *seed, char *why,
             size_t why_size)
{
    char port[8];
    snprintf (port, sizeof port, "%u", seed->port);
    int family = shoal_transport_family (self->transport);
    struct addrinfo hints = { .ai_socktype = SOCK_DGRAM,
                              .ai_family = family == AF_INET ? AF_INET : AF_UNSPEC };
    struct addrinfo *found = NULL;
    int rc = getaddrinfo (seed->host, port, &hints, &found);
    if (rc != 0) {
        //  An IPv6 address given to an IPv4 node resolves to nothing here.
        if (family == AF_INET && strchr (seed->host, ':'))
            return shoal_why (why, why_size, "an IPv6 address, and this node is bound to IPv4");
        return shoal_why (why, why_size, "cannot resolve: %s", gai_strerror (rc));
    }
    int joined = 0;
    for (struct addrinfo *at = found; at; at = at->ai_next) {
        char host[NI_MAXHOST], addr[SHOAL_ADDR_MAX + 1];
        if (getnameinfo (at->ai_addr, at->ai_addrlen, host, sizeof host, NULL, 0, NI_NUMERICHOST) !=
                0 ||
            strlen (host) + 8 > sizeof addr)
            continue;
        snprintf (addr, sizeof addr, at->ai_family == AF_INET6 ? "[%s]:%u" : "%s:%u", host,
                  seed->port);
        if (strcmp (addr, self->addr) != 0 && shoal_peer_join (self->peer, now, addr) == 0)
            joined++;
    }
    freeaddrinfo (found);
    if (!joined)
        shoal_why (why, why_size, "only this node's own address");
    return joined;
}

//  The seeds, resolved again each round: a DNS name may stand for a set of
//  nodes that changes (a headless service). Resolving may block the actor
//  for as long as the resolver takes; it happens only while the node knows
//  no other member. A round that finds the node still alone warns, seed by
//  seed, with the reason (a name that does not resolve, or no answer), and
//  the rounds go on until a seed answers: the first one the elector's
//  settle time after the start, when a node alone would have led, then
//  every join interval.
static void
s_join_seeds (s_actor_t *self, uint64_t now)
{
    const shoal_options_t *options = self->options;
    if (options->join.count == 0 || now < self->join_at || self->leaving)
        return;
    bool first = self->join_at == 0;
    self->join_at = now + (first ? self->config.elector.settle_ms : self->join_interval_ms);
    if (shoal_membership_live (shoal_peer_membership (self->peer)) > 1) {
        self->join_rounds = 0;
        return;
    }
    //  Still alone after a round: no seed answered it.
    bool warn = self->join_rounds++ > 0;
    size_t tried = 0, warned = 0, unwarned = 0;
    const shoal_option_hostport_t *seeds = options->join.items;
    for (size_t i = 0; i < options->join.count; i++) {
        const shoal_option_hostport_t *seed = &seeds[i];
        char why[160];
        int joined = s_join_seed (self, now, seed, why, sizeof why);
        tried += joined > 0;
        bool bad = joined < 0 || (joined > 0 && warn);
        if (bad && warned == S_JOIN_WARN_SEEDS)
            unwarned++;
        else if (bad) {
            warned++;
            s_notice (self, "join: seed %s%s%s:%u: %s; trying again every %u s",
                      strchr (seed->host, ':') ? "[" : "", seed->host,
                      strchr (seed->host, ':') ? "]" : "", seed->port,
                      joined < 0 ? why : "no answer (down, unreachable, or holding another key)",
                      (self->join_interval_ms + 999) / 1000);
        }
    }
    if (unwarned)
        s_notice (self, "join: %zu more seeds do not answer either", unwarned);
    //  Every seed is this node: it is the first of its cluster, and may lead.
    if (tried == 0 && !warned && !unwarned)
        shoal_peer_election_release (self->peer, now);
    else if ((warn || warned) && shoal_peer_election_held (self->peer) && !self->join_told_held) {
        self->join_told_held = true;
        s_notice (self, "join: no leader until a seed answers (this node does not elect itself "
                        "leader of a cluster of one; --expect 1 lets it)");
    }
}

static void
s_beacon_receive (s_actor_t *self, uint64_t now, const shoal_transport_in_t *in)
{
    const shoal_beacon_t *beacon = &in->msg.u.beacon;
    //  Another cluster sharing the key and the port: not ours to meet.
    if (memcmp (&beacon->cluster, &self->cluster, sizeof self->cluster) != 0 ||
        memcmp (beacon->node.bytes, in->envelope.sender.id, SHOAL_ID_SIZE) != 0)
        return;
    shoal_peer_introduce (self->peer, now, &in->envelope.sender, beacon->incarnation, beacon->flags,
                          in->from);
}

//  ---------------------------------------------------------------------
//  Starting: the data directory, the peer's configuration, the sockets

//  Reads name into a persisted record; 1 when there is none.
static int
s_store_read (shoal_store_t *store, const char *name, void **bytes, size_t *size, char *why,
              size_t why_size)
{
    char reason[200];
    int rc = shoal_store_read (store, name, bytes, size, reason, sizeof reason);
    if (rc < 0)
        shoal_why (why, why_size, "data directory: %s", reason);
    return rc;
}

static void
s_profile (s_actor_t *self)
{
    const shoal_options_t *options = self->options;
    shoal_peer_config_t *config = &self->config;
    *config = (shoal_peer_config_t){ .election = true, .tasks = true };
    if (options->profile == SHOAL_PROFILE_LOOPBACK) {
        shoal_membership_config_loopback (&config->membership);
        shoal_elector_config_loopback (&config->elector);
        shoal_tasks_config_loopback (&config->node_tasks);
        shoal_handoff_config_loopback (&config->handoff);
        shoal_jobs_config_loopback (&config->jobs);
    } else {
        shoal_membership_config_lan (&config->membership);
        shoal_elector_config_lan (&config->elector);
        shoal_tasks_config_lan (&config->node_tasks);
        shoal_handoff_config_lan (&config->handoff);
        shoal_jobs_config_lan (&config->jobs);
    }
    bool quorum = options->partition_mode == SHOAL_PARTITION_QUORUM;
    config->elector.quorum = quorum;
    config->elector.expect = options->expect;
    //  A node given seeds joins a cluster: it never leads one of its own
    //  while they do not answer, unless told a cluster of one is fine.
    config->election_waits = options->join.count > 0 && options->expect != 1;
    config->jobs.quorum = quorum;
    config->node_tasks.acceptable_lag = options->acceptable_lag;
    config->handoff.assign.acceptable_lag = options->acceptable_lag;
    config->handoff.assign.standbys = options->standbys;
    config->handoff.assign.max_warmups = options->max_warmups;
    self->beacon_interval_ms = config->membership.probe_interval_ms;
    self->join_interval_ms = config->membership.sync_interval_ms;
}

//  The links' timeout (docs/node.md, "Links"): a link is pinged this often,
//  and closed and connected again when this long passes without an answer,
//  or with bytes unacknowledged. Two of the election's heartbeats, under a
//  follower's lease of three: a link that carries the leader's rounds is
//  closed within a lease of a cut, and one made again after the heal
//  connects within a heartbeat and a half (LAN: 2 s and 1.5 s, where TCP's
//  backoff waited up to 26 s). At least a second: the loopback profile runs
//  on loaded test machines, where a silence of 200 ms is scheduling more
//  often than a cut, and a link closed by mistake drops its frames.
static uint32_t
s_link_timeout (const s_actor_t *self)
{
    uint32_t timeout = 2 * self->config.elector.heartbeat_ms;
    return timeout > S_LINK_TIMEOUT_MIN_MS ? timeout : S_LINK_TIMEOUT_MIN_MS;
}

//  The address others reach this node at: the advertise option, or the
//  bound address, or (bound to every address) the first interface with
//  broadcast, or loopback.
static void
s_advertise (s_actor_t *self)
{
    const shoal_options_t *options = self->options;
    uint16_t port = shoal_transport_port (self->transport);
    const char *host = options->bind.host;
    if (options->advertise.host[0]) {
        host = options->advertise.host;
        port = options->advertise.port;
    } else if (strcmp (host, "0.0.0.0") == 0 || strcmp (host, "::") == 0) {
        host = "127.0.0.1";
        ziflist_t *interfaces = ziflist_new ();
        if (interfaces && ziflist_first (interfaces))
            host = ziflist_address (interfaces);
        snprintf (self->addr, sizeof self->addr, "%s:%u", host, port);
        ziflist_destroy (&interfaces);
        return;
    }
    snprintf (self->addr, sizeof self->addr, strchr (host, ':') ? "[%s]:%u" : "%s:%u", host, port);
}

static int
s_keyring (s_actor_t *self, char *why, size_t why_size)
{
    const shoal_options_t *options = self->options;
    self->keyring = shoal_keyring_new ();
    if (!self->keyring)
        return shoal_why (why, why_size, "out of memory");
    char reason[200];
    if (options->key_file[0] &&
        shoal_key_file_load (self->keyring, options->key_file, reason, sizeof reason) != 0)
        return shoal_why (why, why_size, "key-file %s: %s", options->key_file, reason);
    if (!options->key_file[0] && options->require_key)
        return shoal_why (why, why_size, "require-key is set, and no key-file is given");
    //  Said once at start: what the key (or its lack) leaves open.
    shoal_event_t event = { .type = SHOAL_EVENT_NOTICE };
    struct stat st;
    if (!options->key_file[0])
        shoal_why (event.reason, sizeof event.reason,
                   "no key-file: any host that reaches this node can join the cluster and "
                   "steer it, and submit jobs whose commands workers run (shoal keygen makes "
                   "a key)");
    else if (stat (options->key_file, &st) == 0 && (st.st_mode & 077))
        shoal_why (event.reason, sizeof event.reason,
                   "key-file %s has mode %04o: its group or others may read the cluster key; "
                   "chmod 600 it",
                   options->key_file, (unsigned) (st.st_mode & 07777));
    if (event.reason[0])
        s_event_push (self->node, &event);
    return 0;
}

//  Reads what earlier lives kept, and keeps the identity of this one: the
//  same id, and a life and incarnation above every earlier one.
static int
s_identity (s_actor_t *self, shoal_persist_identity_t *identity, char *why, size_t why_size)
{
    void *bytes = NULL;
    size_t size = 0;
    int rc = s_store_read (self->store, SHOAL_PERSIST_IDENTITY_FILE, &bytes, &size, why, why_size);
    if (rc < 0)
        return -1;
    if (rc == 0) {
        char reason[200];
        rc = shoal_persist_identity_decode (bytes, size, identity, reason, sizeof reason);
        free (bytes);
        if (rc != 0)
            return shoal_why (why, why_size, "data directory: %s: %s", SHOAL_PERSIST_IDENTITY_FILE,
                              reason);
    } else {
        do
            randombytes_buf (identity->id.bytes, SHOAL_ID_SIZE);
        while (s_id_zero (&identity->id));
        identity->life = 0;
        identity->incarnation = 0;
    }
    if (identity->life == UINT64_MAX || identity->incarnation == UINT64_MAX)
        return shoal_why (why, why_size, "data directory: %s: the life counter is used up",
                          SHOAL_PERSIST_IDENTITY_FILE);
    identity->life++;
    identity->incarnation++;
    uint8_t *encoded = NULL;
    char reason[200];
    rc = shoal_persist_identity_encode (identity, &encoded, &size, reason, sizeof reason);
    if (rc == 0)
        rc = shoal_store_write (self->store, SHOAL_PERSIST_IDENTITY_FILE, encoded, size, reason,
                                sizeof reason);
    free (encoded);
    if (rc != 0)
        return shoal_why (why, why_size, "data directory: cannot keep the node's identity: %s",
                          reason);
    self->incarnation_saved = identity->incarnation;
    return 0;
}

//  Keeps the SWIM incarnation when refutations raised it, so that the next
//  life starts above it.
static void
s_incarnation_keep (s_actor_t *self)
{
    uint64_t incarnation = shoal_membership_incarnation (shoal_peer_membership (self->peer));
    if (incarnation <= self->incarnation_saved)
        return;
    size_t size = 0;
    uint8_t *bytes = NULL;
    shoal_persist_identity_t identity = { self->id, self->life.life, incarnation };
    shoal_persist_identity_encode (&identity, &bytes, &size, NULL, 0);
    s_store_write (self, SHOAL_PERSIST_IDENTITY_FILE, bytes, size);
    free (bytes);
    self->incarnation_saved = incarnation;
}

static int
s_peer_start (s_actor_t *self, const shoal_persist_identity_t *identity, char *why, size_t why_size)
{
    const shoal_options_t *options = self->options;
    shoal_persist_elector_t elector = { 0 };
    shoal_persist_jobs_t jobs = { 0 };
    shoal_peer_saved_t saved = { 0 };
    void *bytes = NULL;
    size_t size = 0;
    char reason[200];
    int rc = s_store_read (self->store, SHOAL_PERSIST_ELECTOR_FILE, &bytes, &size, why, why_size);
    if (rc == 0) {
        rc = shoal_persist_elector_decode (bytes, size, &elector, reason, sizeof reason);
        free (bytes);
        if (rc != 0)
            return shoal_why (why, why_size, "data directory: %s: %s", SHOAL_PERSIST_ELECTOR_FILE,
                              reason);
        saved.elector = &elector.saved;
    } else if (rc < 0)
        return -1;
    rc = s_store_read (self->store, SHOAL_PERSIST_JOBS_FILE, &bytes, &size, why, why_size);
    if (rc == 0) {
        rc = shoal_persist_jobs_decode (bytes, size, &jobs, reason, sizeof reason);
        free (bytes);
        if (rc != 0) {
            shoal_persist_elector_release (&elector);
            return shoal_why (why, why_size, "data directory: %s: %s", SHOAL_PERSIST_JOBS_FILE,
                              reason);
        }
        saved.jobs = &jobs.saved;
    } else if (rc < 0) {
        shoal_persist_elector_release (&elector);
        return -1;
    }

    char host[SHOAL_NAME_MAX + 1] = "";
    const char *name = options->name;
    if (!name[0]) {
        if (gethostname (host, sizeof host) != 0)
            snprintf (host, sizeof host, "node");
        host[sizeof host - 1] = 0;
        name = host;
    }
    const shoal_option_label_t *labels = options->labels.items;
    shoal_label_t meta_labels[SHOAL_LABELS_MAX];
    for (size_t i = 0; i < options->labels.count && i < SHOAL_LABELS_MAX; i++)
        meta_labels[i] = (shoal_label_t){ labels[i].key, labels[i].value };
    const shoal_option_job_t *handles = options->handles.items;
    const char *meta_handles[SHOAL_HANDLES_MAX];
    for (size_t i = 0; i < options->handles.count && i < SHOAL_HANDLES_MAX; i++)
        meta_handles[i] = handles[i].name;
    shoal_meta_t meta = { .name = name,
                          .addr = self->addr,
                          .life = identity->life,
                          .priority = options->priority,
                          .capacity = options->capacity,
                          .slots = options->slots,
                          .label_count = (uint32_t) options->labels.count,
                          .labels = meta_labels,
                          .handle_count = (uint32_t) options->handles.count,
                          .handles = meta_handles };
    const char *invalid = shoal_membership_meta_check (&self->config.membership, &meta);
    if (invalid) {
        shoal_persist_elector_release (&elector);
        shoal_persist_jobs_release (&jobs);
        return shoal_why (why, why_size, "this node's description: %s", invalid);
    }
    shoal_peer_sink_t sink = { .arg = self,
                               .send = s_send,
                               .command = s_command,
                               .reply = s_reply,
                               .member_event = s_member_event,
                               .leader_event = s_leader_event,
                               .saved = s_saved,
                               .tasks_done = s_tasks_done };
    uint64_t seed;
    randombytes_buf (&seed, sizeof seed);
    self->peer = shoal_peer_new (&self->config, &self->id, identity->incarnation, &meta, &saved,
                                 seed, s_now (), NULL, &sink);
    shoal_persist_elector_release (&elector);
    shoal_persist_jobs_release (&jobs);
    if (!self->peer)
        return shoal_why (why, why_size,
                          "cannot start the node (its kept state is refused, or "
                          "memory is short)");
    return 0;
}

static void s_actor_free (s_actor_t *self);

//  The metrics' server and the event log, where the options ask for them.
static int
s_observe_start (s_actor_t *self, char *why, size_t why_size)
{
    const shoal_options_t *options = self->options;
    char reason[200], id[SHOAL_ID_TEXT];
    if (options->metrics.host[0] &&
        !(self->metrics = shoal_metrics_new (options->metrics.host, options->metrics.port, reason,
                                             sizeof reason)))
        return shoal_why (why, why_size, "metrics: %s", reason);
    shoal_id_format (self->id.bytes, false, id);
    if (options->events[0] &&
        !(self->events = shoal_eventlog_open (options->events, id, reason, sizeof reason)))
        return shoal_why (why, why_size, "events %s: %s", options->events, reason);
    if (!(self->unplaced = shoal_unplaced_watch_new ()))
        return shoal_why (why, why_size, "out of memory");
    return 0;
}

//  Everything a start does on the actor's thread. Returns 0, or -1 with
//  the reason.
static int
s_actor_start (s_actor_t *self, char *why, size_t why_size)
{
    const shoal_options_t *options = self->options;
    s_profile (self);
    if (s_keyring (self, why, why_size) != 0)
        return -1;
    char reason[200];
    if (shoal_store_open (options->data_dir, &self->store, reason, sizeof reason) != 0)
        return shoal_why (why, why_size, "data-dir %s: %s", options->data_dir, reason);
    shoal_persist_identity_t identity;
    if (s_identity (self, &identity, why, why_size) != 0)
        return -1;
    self->id = identity.id;
    memcpy (self->life.id, identity.id.bytes, SHOAL_ID_SIZE);
    self->life.life = identity.life;
    crypto_generichash (self->cluster.bytes, sizeof self->cluster.bytes,
                        (const uint8_t *) options->cluster, strlen (options->cluster), NULL, 0);
    if (s_observe_start (self, why, why_size) != 0)
        return -1;

    char bind[SHOAL_OPTIONS_HOST_MAX + 16];
    snprintf (bind, sizeof bind, strchr (options->bind.host, ':') ? "[%s]:%u" : "%s:%u",
              options->bind.host, options->bind.port);
    uint8_t prefix[SHOAL_ENVELOPE_NONCE];
    randombytes_buf (prefix, sizeof prefix);
    shoal_transport_config_t transport = { .bind = bind,
                                           .keyring = self->keyring,
                                           .self = self->life,
                                           .peers = 1024,
                                           .send_queue = 64,
                                           .link_timeout_ms = s_link_timeout (self) };
    self->transport = shoal_transport_new (&transport, prefix, reason, sizeof reason);
    if (!self->transport)
        return shoal_why (why, why_size, "bind %s: %s", bind, reason);
    s_advertise (self);
    self->refusals = shoal_refusals_new ();
    if (!self->refusals || shoal_arena_init (&self->arena, S_ARENA_SIZE) != 0)
        return shoal_why (why, why_size, "out of memory");
    if (s_peer_start (self, &identity, why, why_size) != 0)
        return -1;

    char endpoint[SHOAL_OPTIONS_VALUE_MAX + 32];
    if (options->control[0])
        snprintf (endpoint, sizeof endpoint, "%s", options->control);
    else
        snprintf (endpoint, sizeof endpoint, "ipc://%s/control", options->data_dir);
    self->control =
        shoal_control_server_new (endpoint, self->keyring, &self->life, reason, sizeof reason);
    if (!self->control)
        return shoal_why (why, why_size, "control %s: %s", endpoint, reason);

    if (options->beacon_port) {
        if (shoal_transport_beacons_start (self->transport, options->beacon_port,
                                           options->beacon_interface, reason, sizeof reason) == 0)
            self->beacons = true;
        else {
            //  No interface that broadcasts: the node runs on its seeds.
            shoal_event_t event = { .type = SHOAL_EVENT_NOTICE };
            snprintf (event.reason, sizeof event.reason, "beacons are off: %s", reason);
            s_event_push (self->node, &event);
        }
    }
    shoal_eventlog_start (self->events, self->addr, self->life.life, identity.incarnation);
    return 0;
}

//  ---------------------------------------------------------------------
//  The actor's loop

static bool s_status_message (s_actor_t *self, uint64_t now, const shoal_transport_in_t *in);
static void s_asks_expire (s_actor_t *self, uint64_t now);

//  A message the transport refused because it did not authenticate: a
//  node with another key (or none) tries to reach this one. Told, naming
//  the sender, at most once a minute per sender.
static void
s_refused (s_actor_t *self)
{
    char from[SHOAL_ADDR_MAX + 1], text[SHOAL_REASON_TEXT];
    shoal_open_result_t reason = shoal_transport_refused (self->transport, from, sizeof from);
    if (reason != SHOAL_OPEN_OK &&
        shoal_refusals_add (self->refusals, s_now (), from, reason, text, sizeof text))
        s_notice (self, "%s", text);
}

static void
s_receive (s_actor_t *self, shoal_purpose_t carrier)
{
    for (int i = 0; i < S_BURST; i++) {
        shoal_transport_in_t in;
        int rc = shoal_transport_receive (self->transport, carrier, &self->arena, &in);
        //  Beacons are broadcast to every node on the port, those of other
        //  clusters too: only what was sent to this node is told.
        if (rc == 0 && carrier != SHOAL_PURPOSE_BEACON)
            s_refused (self);
        if (rc <= 0)
            return;
        uint64_t now = s_now ();
        if (carrier == SHOAL_PURPOSE_BEACON)
            s_beacon_receive (self, now, &in);
        else if (s_status_message (self, now, &in))
            ; //  a status asked of the leader, or its answer: the node's own
        else
            shoal_peer_receive (self->peer, now, &in.envelope, &in.msg,
                                in.from[0] ? in.from : NULL);
        s_loopback_deliver (self, now);
    }
}

//  True while the node runs a task as active, or one still stopping: what
//  a leave hands over before it ends. Learners and standbys are copies,
//  dropped with the node.
static bool
s_acting_tasks (s_actor_t *self)
{
    const shoal_task_status_t *held;
    size_t count = shoal_tasks_list (shoal_peer_tasks (self->peer), &held);
    for (size_t i = 0; i < count; i++)
        if (held[i].role == SHOAL_ROLE_ACTIVE || held[i].state == SHOAL_TASK_STOPPING)
            return true;
    return false;
}

//  Answers the waiters of a leave once it is done: the node left the view,
//  and its active tasks have moved away (each stopped, and reported so).
static void
s_leave_check (s_actor_t *self)
{
    if (!self->leaving || self->left || !shoal_peer_left (self->peer) || s_acting_tasks (self))
        return;
    self->left = true;
    shoal_eventlog_leave (self->events, true);
    shoal_event_t event = { .type = SHOAL_EVENT_LEFT };
    s_event_push (self->node, &event);
    s_call_t *call = s_waiter_take (self, 0);
    while (call) {
        s_waiter_answer (call, SHOAL_RESULT_OK, "", 0);
        call = s_waiter_take (self, 0);
    }
}

static void s_control (s_actor_t *self, uint64_t now);

static void
s_pipe (s_actor_t *self)
{
    char *command = NULL;
    void *pointer = NULL;
    if (zsock_recv (self->pipe, "sp", &command, &pointer) != 0 || !command ||
        streq (command, "$TERM"))
        self->terminated = true;
    else if (streq (command, "CALL") && pointer) {
        s_call_t *call = pointer;
        call->run (self, call);
        zsock_signal (self->pipe, 0);
    }
    free (command);
}

//  The metrics, refreshed after a pass that changed anything (an input or
//  a tick), and the event log's first failure, told once. Returns when
//  the metrics want the next pass.
static uint64_t
s_observe (s_actor_t *self, uint64_t now, bool changed)
{
    char reason[200];
    uint64_t failures = shoal_eventlog_failures (self->events, reason, sizeof reason);
    if (failures && !self->events_failed) {
        self->events_failed = true;
        shoal_event_t event = { .type = SHOAL_EVENT_NOTICE };
        shoal_why (event.reason, sizeof event.reason,
                   "events %s: cannot write a line (%s); lines that fail are dropped",
                   self->options->events, reason);
        s_event_push (self->node, &event);
    }
    shoal_handoff_t *handoff = shoal_peer_handoff (self->peer);
    bool acting = handoff && shoal_elector_acting (shoal_peer_elector (self->peer), now);
    shoal_unplaced_watch_update (self->unplaced, acting ? handoff : NULL, now, self->events);
    shoal_metrics_sources_t sources = { .peer = self->peer,
                                        .transport = self->transport,
                                        .leased = self->leased,
                                        .event_write_failures = failures,
                                        .unplaced = self->unplaced };
    return shoal_metrics_update (self->metrics, now, &sources, changed);
}

static void
s_loop (s_actor_t *self)
{
    zmq_pollitem_t items[5];
    int count = 0;
    items[count++] = (zmq_pollitem_t){ zsock_resolve (self->pipe), 0, ZMQ_POLLIN, 0 };
    items[count++] =
        (zmq_pollitem_t){ NULL, shoal_transport_udp_fd (self->transport), ZMQ_POLLIN, 0 };
    items[count++] = (zmq_pollitem_t){ zsock_resolve (shoal_transport_router (self->transport)), 0,
                                       ZMQ_POLLIN, 0 };
    items[count++] = (zmq_pollitem_t){ zsock_resolve (shoal_control_server_socket (self->control)),
                                       0, ZMQ_POLLIN, 0 };
    if (self->beacons)
        items[count++] =
            (zmq_pollitem_t){ zsock_resolve (shoal_transport_beacons (self->transport)), 0,
                              ZMQ_POLLIN, 0 };
    uint64_t observe_at = s_observe (self, s_now (), true);
    while (!self->terminated) {
        uint64_t now = s_now ();
        s_join_seeds (self, now);
        s_beacon_publish (self, now);
        uint64_t next = shoal_peer_next (self->peer);
        if (self->beacons && self->beacon_at < next)
            next = self->beacon_at;
        if (self->options->join.count && self->join_at < next)
            next = self->join_at;
        shoal_tasks_t *tasks = shoal_peer_tasks (self->peer);
        if (self->leased && tasks && shoal_tasks_lease_end (tasks) < next)
            next = shoal_tasks_lease_end (tasks);
        if (observe_at < next)
            next = observe_at;
        for (size_t i = 0; i < self->ask_count; i++)
            if (self->asks[i].deadline < next)
                next = self->asks[i].deadline;
        //  Frames wait for connections being made: look again soon.
        if (shoal_transport_flush (self->transport) && now + S_FLUSH_MS < next)
            next = now + S_FLUSH_MS;
        long timeout = next <= now ? 0 : next - now > 60000 ? 60000 : (long) (next - now);
        int rc = zmq_poll (items, count, timeout);
        if (rc < 0 && zmq_errno () != EINTR)
            break;
        if (items[0].revents & ZMQ_POLLIN)
            s_pipe (self);
        if (items[1].revents & ZMQ_POLLIN)
            s_receive (self, SHOAL_PURPOSE_DATAGRAM);
        if (items[2].revents & ZMQ_POLLIN)
            s_receive (self, SHOAL_PURPOSE_FRAME);
        if (items[3].revents & ZMQ_POLLIN)
            s_control (self, s_now ());
        if (count > 4 && items[4].revents & ZMQ_POLLIN)
            s_receive (self, SHOAL_PURPOSE_BEACON);
        now = s_now ();
        bool ticked = shoal_peer_next (self->peer) <= now;
        if (ticked) {
            shoal_peer_tick (self->peer, now);
            s_loopback_deliver (self, now);
        }
        s_lease_check (self, now);
        s_asks_expire (self, now);
        s_incarnation_keep (self);
        s_leave_check (self);
        observe_at = s_observe (self, now, rc > 0 || ticked);
    }
}

static void
s_actor_free (s_actor_t *self)
{
    if (self->waiters) {
        for (s_call_t *call = zlistx_first (self->waiters); call;
             call = zlistx_next (self->waiters))
            s_waiter_answer (call, SHOAL_RESULT_FAILED, "the node stopped", 0);
        zlistx_destroy (&self->waiters);
    }
    shoal_control_server_destroy (&self->control);
    shoal_metrics_destroy (&self->metrics);
    shoal_unplaced_watch_destroy (&self->unplaced);
    shoal_eventlog_close (&self->events);
    shoal_refusals_destroy (&self->refusals);
    shoal_peer_destroy (&self->peer);
    shoal_transport_destroy (&self->transport);
    shoal_store_close (&self->store);
    shoal_keyring_destroy (&self->keyring);
    shoal_arena_release (&self->arena);
    for (size_t i = 0; i < self->loopback_count; i++)
        free (self->loopback[i].bytes);
    free (self->loopback);
}

//  The start handshake: zactor_new waits for the actor's first signal;
//  then the actor sends "" once started, or the reason it did not.
static void
s_actor (zsock_t *pipe, void *arg)
{
    shoal_node_t *node = arg;
    s_actor_t self = { .node = node, .options = node->options, .pipe = pipe };
    char why[SHOAL_REASON_TEXT] = "";
    zsock_signal (pipe, 0);
    self.waiters = zlistx_new ();
    if (!self.waiters || s_actor_start (&self, why, sizeof why) != 0) {
        if (!why[0])
            snprintf (why, sizeof why, "out of memory");
        s_actor_free (&self);
        zstr_send (pipe, why);
        return;
    }
    shoal_id_format (self.id.bytes, true, node->id);
    node->port = shoal_transport_port (self.transport);
    zstr_send (pipe, "");
    s_loop (&self);
    s_actor_free (&self);
}

//  ---------------------------------------------------------------------
//  The control endpoint

//  The bytes a status reply's rows may take: its frame, less room for the
//  envelope, the reply's other fields and the estimate's own error.
#define S_STATUS_BUDGET (SHOAL_FRAME_MAX - 256u * 1024)

//  The members, as a control reply lists them, in the arena.
static int
s_members_list (s_actor_t *self, shoal_control_rep_t *rep)
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
    return 0;
}

//  The tasks placed nowhere, after the count placed in rep, with why
//  (shoal_unplaced_rows), as many as fit one frame with the placed ones;
//  how many were left out is said in the reply's reason. Returns -1 when
//  the arena is full.
static int
s_unplaced_list (s_actor_t *self, shoal_handoff_t *handoff, shoal_control_rep_t *rep)
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
static int
s_tasks_list (s_actor_t *self, shoal_control_rep_t *rep)
{
    shoal_elector_t *elector = shoal_peer_elector (self->peer);
    shoal_handoff_t *handoff = shoal_peer_handoff (self->peer);
    const shoal_task_status_t *own;
    size_t own_count = shoal_tasks_list (shoal_peer_tasks (self->peer), &own);
    if (handoff && shoal_elector_acting (elector, s_now ())) {
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
    rep->tasks = shoal_arena_alloc (&self->arena, (own_count ? own_count : 1) * sizeof *rep->tasks);
    if (!rep->tasks)
        return -1;
    for (size_t i = 0; i < own_count; i++)
        rep->tasks[i] = (shoal_task_report_t){ .node = self->id, .status = own[i], .reason = "" };
    rep->task_count = (uint32_t) own_count;
    rep->version = shoal_tasks_version (shoal_peer_tasks (self->peer)).version;
    return 0;
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
s_rep_ok (s_actor_t *self, uint64_t now, uint32_t id, const char *reason)
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

//  Copies ours (our_size bytes, the library's struct) into theirs
//  (their_size bytes, the caller's, compiled against some shoal.h): as much
//  as both know, zeros past what the library knows. A struct that begins
//  with its size keeps the caller's.
static void
s_give (void *theirs, size_t their_size, const void *ours, size_t our_size, bool sized)
{
    size_t common = their_size < our_size ? their_size : our_size;
    memcpy (theirs, ours, common);
    if (their_size > common)
        memset ((char *) theirs + common, 0, their_size - common);
    if (sized)
        memcpy (theirs, &their_size, sizeof their_size);
}

//  Fills the status call's rows and status from rep; whole when rep is
//  the acting leader's table.
static void
s_status_fill (s_call_t *call, const shoal_control_rep_t *rep, bool whole)
{
    for (uint32_t i = 0; i < rep->task_count && i < call->max; i++) {
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
        s_give ((char *) call->out + i * call->item_size, call->item_size, &row, sizeof row, false);
    }
    call->count = rep->task_count;
    call->status = (shoal_status_info_t){ .size = sizeof call->status,
                                          .whole = whole && rep->code == SHOAL_REPLY_OK,
                                          .term = rep->term,
                                          .version = rep->version };
    shoal_id_format (rep->leader.bytes, true, call->status.leader);
    snprintf (call->status.reason, sizeof call->status.reason, "%s",
              rep->reason ? rep->reason : "");
    call->rc = rep->code == SHOAL_REPLY_OK ? 0 : -1;
}

//  Gives rep to whoever asked for a status: the control client, or the
//  call, which is then done.
static void
s_status_give (s_actor_t *self, s_asker_t asker, const shoal_control_rep_t *rep, bool whole)
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
s_status_local (s_actor_t *self, uint64_t now, s_asker_t asker, const char *why)
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
s_status_ask (s_actor_t *self, uint64_t now, s_asker_t asker, uint64_t wait_ms)
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
    if (self->ask_count == S_ASKS_MAX) {
        s_status_local (self, now, asker,
                        "too many status requests wait for the leader: this node's own tasks");
        return true;
    }
    uint32_t id = S_ASK_ID | (++self->last_ask & ~S_ASK_ID);
    shoal_msg_t msg = { .type = SHOAL_MSG_CONTROL_REQ };
    msg.u.control_req = (shoal_control_req_t){ .id = id, .op = SHOAL_OP_STATUS };
    shoal_life_t to = { .life = 0 };
    memcpy (to.id, leader.bytes, SHOAL_ID_SIZE);
    s_send (self, &to, NULL, &msg);
    uint64_t wait = wait_ms < S_ASK_WAIT_MAX ? wait_ms : S_ASK_WAIT_MAX;
    self->asks[self->ask_count++] =
        (s_ask_t){ .asker = asker, .id = id, .leader = leader, .deadline = now + wait };
    return true;
}

//  A member's CONTROL-REQ STATUS, answered with the table when this node
//  acts as leader; or the leader's CONTROL-REP to a status this node asked.
//  True when in was one of these (the peer has no part in them).
static bool
s_status_message (s_actor_t *self, uint64_t now, const shoal_transport_in_t *in)
{
    const shoal_msg_t *msg = &in->msg;
    shoal_elector_t *elector = shoal_peer_elector (self->peer);
    if (msg->type == SHOAL_MSG_CONTROL_REQ && msg->u.control_req.op == SHOAL_OP_STATUS) {
        shoal_id_t from;
        shoal_membership_member_t member;
        memcpy (from.bytes, in->envelope.sender.id, SHOAL_ID_SIZE);
        if (shoal_membership_member (shoal_peer_membership (self->peer), &from, &member) != 0)
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
        s_send (self, &in->envelope.sender, NULL, &answer);
        return true;
    }
    if (msg->type != SHOAL_MSG_CONTROL_REP || !(msg->u.control_rep.id & S_ASK_ID))
        return false;
    for (size_t i = 0; i < self->ask_count; i++) {
        s_ask_t *ask = &self->asks[i];
        if (ask->id != msg->u.control_rep.id ||
            memcmp (ask->leader.bytes, in->envelope.sender.id, SHOAL_ID_SIZE) != 0)
            continue;
        s_asker_t asker = ask->asker;
        *ask = self->asks[--self->ask_count];
        if (msg->u.control_rep.code == SHOAL_REPLY_OK)
            s_status_give (self, asker, &msg->u.control_rep, true);
        else
            s_status_local (self, now, asker, "the leader no longer acts: this node's own tasks");
        return true;
    }
    return true; //  an answer no one waits for any more
}

static void
s_asks_expire (s_actor_t *self, uint64_t now)
{
    for (size_t i = 0; i < self->ask_count;) {
        if (self->asks[i].deadline > now) {
            i++;
            continue;
        }
        s_asker_t asker = self->asks[i].asker;
        self->asks[i] = self->asks[--self->ask_count];
        shoal_arena_reset (&self->arena);
        s_status_local (self, now, asker,
                        "the leader did not answer in time: this node's own tasks");
    }
}

//  Forgets the status asks of call, which gave up waiting.
static void
s_asks_forget (s_actor_t *self, const s_call_t *call)
{
    for (size_t i = 0; i < self->ask_count;)
        if (self->asks[i].asker.call == call)
            self->asks[i] = self->asks[--self->ask_count];
        else
            i++;
}

static void s_leave_start (s_actor_t *self, uint64_t now);

static void
s_control (s_actor_t *self, uint64_t now)
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
            if (s_status_ask (self, now, (s_asker_t){ .ref = ref }, req.timeout_ms))
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
            s_leave_start (self, now);
            break;
        default:
            //  Submit, rescale, remove: answered when the cluster answers.
            shoal_eventlog_request (self->events, ref, &req);
            if (shoal_peer_request (self->peer, now, ref, &req) == 0) {
                s_loopback_deliver (self, now);
                continue;
            }
            rep.code = SHOAL_REPLY_INVALID;
            rep.reason = "the node does not take this request";
            break;
        }
        shoal_control_server_answer (self->control, ref, &rep);
    }
}

//  ---------------------------------------------------------------------
//  Calls, run on the actor's thread

static void
s_leave_start (s_actor_t *self, uint64_t now)
{
    if (self->leaving)
        return;
    self->leaving = true;
    shoal_eventlog_leave (self->events, false);
    shoal_peer_leave (self->peer, now);
    s_loopback_deliver (self, now);
    s_beacon_publish (self, now);
}

//  Leaves, and waits (ref 0) unless it is done.
static void
s_call_leave (s_actor_t *self, s_call_t *call)
{
    s_leave_start (self, s_now ());
    s_leave_check (self);
    call->rc = self->left ? 0 : 1;
    if (!self->left && !zlistx_add_end (self->waiters, call))
        call->rc = -1;
}

//  A submit, rescale or remove: waits for the answer under a new ref.
static void
s_call_request (s_actor_t *self, s_call_t *call)
{
    call->ref = ++self->next_ref;
    call->rc = -1;
    shoal_eventlog_request (self->events, call->ref, call->in);
    uint64_t now = s_now ();
    //  The answer may come during the request (a refusal, a submit done
    //  already, or this node leads): the waiter is listed first.
    if (self->leaving)
        snprintf (call->why, sizeof call->why, "the node is leaving");
    else if (!zlistx_add_end (self->waiters, call))
        snprintf (call->why, sizeof call->why, "out of memory");
    else if (shoal_peer_request (self->peer, now, call->ref, call->in) != 0) {
        s_waiter_find (self, 0, call);
        snprintf (call->why, sizeof call->why, "the request is refused");
    } else
        call->rc = 0;
    s_loopback_deliver (self, now);
}

//  Gives up waiting for ref: the actor forgets the call.
static void
s_call_forget (s_actor_t *self, s_call_t *call)
{
    s_waiter_find (self, 0, call);
    s_asks_forget (self, call);
}

static void
s_call_report (s_actor_t *self, s_call_t *call)
{
    const char *task = call->in;
    uint64_t now = s_now ();
    call->rc =
        shoal_peer_report (self->peer, now, task, (uint8_t) call->number[0], call->number[1]);
    if (call->rc != 0)
        snprintf (call->why, sizeof call->why,
                  "task %s: the node does not hold it, or the report makes no sense now", task);
    s_loopback_deliver (self, now);
}

static void
s_call_report_exit (s_actor_t *self, s_call_t *call)
{
    const char *task = call->in;
    uint64_t now = s_now ();
    call->rc = shoal_peer_exit (self->peer, now, task, (uint32_t) call->number[0],
                                (uint32_t) call->number[1], call->out);
    if (call->rc != 0)
        snprintf (call->why, sizeof call->why,
                  "task %s: the node does not hold it, or the error is not UTF-8 text", task);
    s_loopback_deliver (self, now);
}

static void
s_member_copy (const shoal_membership_member_t *from, shoal_member_t *to)
{
    *to = (shoal_member_t){ .state = from->state, .incarnation = from->incarnation };
    shoal_id_format (from->node.bytes, true, to->id);
    if (from->meta) {
        snprintf (to->name, sizeof to->name, "%s", from->meta->name ? from->meta->name : "");
        snprintf (to->addr, sizeof to->addr, "%s", from->meta->addr ? from->meta->addr : "");
    }
}

static void
s_call_members (s_actor_t *self, s_call_t *call)
{
    shoal_membership_t *membership = shoal_peer_membership (self->peer);
    size_t size = shoal_membership_size (membership);
    call->count = 0;
    for (size_t i = 0; i < size; i++) {
        shoal_membership_member_t member;
        if (shoal_membership_member_at (membership, i, &member) != 0)
            continue;
        if (call->count < call->max) {
            shoal_member_t copy;
            s_member_copy (&member, &copy);
            s_give ((char *) call->out + call->count * call->item_size, call->item_size, &copy,
                    sizeof copy, false);
        }
        call->count++;
    }
    call->rc = 0;
}

static void
s_call_leader (s_actor_t *self, s_call_t *call)
{
    shoal_id_t leader = { 0 };
    uint64_t term = 0, now = s_now ();
    shoal_elector_t *elector = shoal_peer_elector (self->peer);
    shoal_peer_leader (self->peer, now, &leader, &term);
    shoal_id_format (leader.bytes, true, call->why);
    call->number[0] = term;
    call->number[1] = shoal_elector_acting (elector, now);
    call->rc = 0;
}

static void
s_call_tasks (s_actor_t *self, s_call_t *call)
{
    shoal_tasks_t *tasks = shoal_peer_tasks (self->peer);
    const shoal_task_status_t *list;
    size_t count = shoal_tasks_list (tasks, &list);
    for (size_t i = 0; i < count && i < call->max; i++) {
        shoal_task_t task = { .role = list[i].role,
                              .state = list[i].state,
                              .lag = list[i].lag,
                              .epoch_term = list[i].epoch.term,
                              .epoch_version = list[i].epoch.version };
        snprintf (task.task, sizeof task.task, "%s", list[i].task);
        s_give ((char *) call->out + i * call->item_size, call->item_size, &task, sizeof task,
                false);
    }
    call->count = count;
    shoal_epoch_t version = shoal_tasks_version (tasks);
    call->number[0] = version.term;
    call->number[1] = version.version;
    call->rc = 0;
}

static void
s_call_job (s_actor_t *self, s_call_t *call)
{
    const shoal_jobspec_t *specs;
    size_t count = shoal_jobs_specs (shoal_peer_jobs (self->peer), &specs);
    for (size_t i = 0; i < count; i++) {
        if (strcmp (specs[i].name, call->in) != 0 || specs[i].parallelism == 0)
            continue;
        if (call->out && strlen (specs[i].command) >= call->max) {
            shoal_why (call->why, sizeof call->why, "job %s: its command needs %zu bytes",
                       specs[i].name, strlen (specs[i].command) + 1);
            call->rc = -1;
            return;
        }
        if (call->out)
            memcpy (call->out, specs[i].command, strlen (specs[i].command) + 1);
        call->number[0] = specs[i].parallelism;
        call->number[1] = specs[i].stateful;
        call->rc = 0;
        return;
    }
    shoal_why (call->why, sizeof call->why, "no job %s", (const char *) call->in);
    call->rc = -1;
}

//  A job's requirements as text: "key=value,key=value".
static void
s_require_text (const shoal_jobspec_t *spec, char text[SHOAL_REQUIRE_TEXT])
{
    size_t used = 0;
    text[0] = 0;
    for (uint32_t i = 0; i < spec->require_count; i++)
        used += (size_t) snprintf (text + used, SHOAL_REQUIRE_TEXT - used, "%s%s=%s", i ? "," : "",
                                   spec->require[i].key, spec->require[i].value);
}

static void
s_call_jobs (s_actor_t *self, s_call_t *call)
{
    const shoal_jobspec_t *specs;
    shoal_jobs_t *jobs = shoal_peer_jobs (self->peer);
    size_t count = shoal_jobs_specs (jobs, &specs);
    call->count = 0;
    for (size_t i = 0; i < count; i++) {
        if (specs[i].parallelism == 0)
            continue; //  removed
        if (call->count < call->max) {
            shoal_job_info_t job = { .parallelism = specs[i].parallelism,
                                     .stateful = specs[i].stateful,
                                     .weight = specs[i].weight,
                                     .require_count = specs[i].require_count };
            snprintf (job.name, sizeof job.name, "%s", specs[i].name);
            snprintf (job.command, sizeof job.command, "%s", specs[i].command);
            s_require_text (&specs[i], job.require);
            s_give ((char *) call->out + call->count * call->item_size, call->item_size, &job,
                    sizeof job, false);
        }
        call->count++;
    }
    shoal_jobs_name (jobs, &call->number[0], &call->number[1]);
    call->rc = 0;
}

//  The status table: answered now (rc 0 or -1), or once the leader
//  answers (rc 1: the call waits for its answer).
static void
s_call_status (s_actor_t *self, s_call_t *call)
{
    uint64_t now = s_now ();
    s_asker_t asker = { .call = call };
    shoal_arena_reset (&self->arena);
    if (s_status_ask (self, now, asker, call->number[0])) {
        call->rc = call->done ? call->rc : 1;
        return;
    }
    shoal_control_rep_t rep = s_rep_ok (self, now, 0, "");
    bool whole = shoal_elector_acting (shoal_peer_elector (self->peer), now);
    if (!whole)
        rep.reason = call->number[0] ? "no leader acts now: this node's own tasks"
                                     : "not asked of the leader: this node's own tasks";
    if (s_tasks_list (self, &rep) != 0)
        rep = (shoal_control_rep_t){ .code = SHOAL_REPLY_FAILED, .reason = "out of memory" };
    s_status_fill (call, &rep, whole);
}

//  ---------------------------------------------------------------------
//  The API

static int
s_call_init (s_call_t *call)
{
    memset (call, 0, sizeof *call);
    if (pthread_mutex_init (&call->lock, NULL) != 0)
        return -1;
    pthread_condattr_t attributes;
    pthread_condattr_init (&attributes);
    pthread_condattr_setclock (&attributes, CLOCK_MONOTONIC);
    int rc = pthread_cond_init (&call->done_cond, &attributes);
    pthread_condattr_destroy (&attributes);
    if (rc != 0) {
        pthread_mutex_destroy (&call->lock);
        return -1;
    }
    return 0;
}

static void
s_call_fini (s_call_t *call)
{
    pthread_cond_destroy (&call->done_cond);
    pthread_mutex_destroy (&call->lock);
}

//  The application's signals (a Go runtime's preemption, a SIGCHLD
//  handler) interrupt ZeroMQ's calls with EINTR, and a call to the actor
//  that returned before the actor answered would leave it the caller's
//  stack. So the node's own threads block them all (they go to the
//  application's threads), and a call holds them off while it talks to the
//  actor: they are delivered when it returns. The faults a thread raises
//  itself stay deliverable.
static void
s_signals_block (sigset_t *old)
{
    sigset_t all;
    sigfillset (&all);
    int faults[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT };
    for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++)
        sigdelset (&all, faults[i]);
    pthread_sigmask (SIG_BLOCK, &all, old);
}

static void
s_signals_restore (const sigset_t *old)
{
    pthread_sigmask (SIG_SETMASK, old, NULL);
}

//  Stops the actor and waits for its thread to end, signals held off.
static void
s_actor_stop (shoal_node_t *self)
{
    sigset_t old;
    s_signals_block (&old);
    zactor_destroy (&self->actor);
    s_signals_restore (&old);
}

//  Runs call on the actor's thread. Returns -1 when the node is not running.
static int
s_call (shoal_node_t *self, s_call_t *call)
{
    sigset_t old;
    s_signals_block (&old);
    pthread_mutex_lock (&self->call_lock);
    int rc = -1;
    if (self->actor && zsock_send (self->actor, "sp", "CALL", call) == 0)
        rc = zsock_wait (self->actor) == 0 ? 0 : -1;
    pthread_mutex_unlock (&self->call_lock);
    s_signals_restore (&old);
    if (rc != 0)
        snprintf (call->why, sizeof call->why, "the node is not running");
    return rc;
}

//  Waits until the actor answered call, timeout_ms passed, or call->cancel
//  was cancelled; then makes sure the actor forgets it. Returns true when
//  it was answered.
static bool
s_call_wait (shoal_node_t *self, s_call_t *call, uint64_t timeout_ms)
{
    struct timespec until;
    clock_gettime (CLOCK_MONOTONIC, &until);
    until.tv_sec += (time_t) (timeout_ms / 1000);
    until.tv_nsec += (long) (timeout_ms % 1000) * 1000000;
    if (until.tv_nsec >= 1000000000) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000;
    }
    shoal_wait_t wait = { .lock = &call->lock, .cond = &call->done_cond };
    shoal_cancel_watch (call->cancel, &wait);
    pthread_mutex_lock (&call->lock);
    bool done = shoal_cancel_wait (call->cancel, &wait, &call->done, &until);
    pthread_mutex_unlock (&call->lock);
    shoal_cancel_unwatch (call->cancel, &wait);
    if (!done) {
        call->run = s_call_forget;
        s_call (self, call);
        //  The answer may have come just before the actor forgot it.
        pthread_mutex_lock (&call->lock);
        done = call->done;
        pthread_mutex_unlock (&call->lock);
    }
    return done;
}

static int
s_reason (char *why, size_t why_size, const char *reason)
{
    return shoal_why (why, why_size, "%s", reason);
}

shoal_node_t *
shoal_node_new (void)
{
    shoal_node_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->events_fd = -1;
    self->options = shoal_options_new ();
    if (!self->options || pthread_mutex_init (&self->call_lock, NULL) != 0) {
        shoal_options_destroy (&self->options);
        free (self);
        return NULL;
    }
    if (pthread_mutex_init (&self->events_lock, NULL) != 0) {
        pthread_mutex_destroy (&self->call_lock);
        shoal_options_destroy (&self->options);
        free (self);
        return NULL;
    }
    return self;
}

void
shoal_node_destroy (shoal_node_t **self_p)
{
    shoal_node_t *self = *self_p;
    if (!self)
        return;
    s_actor_stop (self);
    if (self->events_fd >= 0)
        close (self->events_fd);
    free (self->events);
    pthread_mutex_destroy (&self->events_lock);
    pthread_mutex_destroy (&self->call_lock);
    shoal_options_destroy (&self->options);
    free (self);
    *self_p = NULL;
}

//  Options change only before start: the actor reads them without a lock.
//  Takes the call lock when options may still be set, and returns 0
//  holding it; -1 otherwise. Options are set and read under that lock, so
//  that a list being set is never read half made.
static int
s_settable_lock (shoal_node_t *self, char *why, size_t why_size)
{
    if (!self)
        return s_reason (why, why_size, "no node");
    pthread_mutex_lock (&self->call_lock);
    if (!self->actor && !self->stopped)
        return 0;
    pthread_mutex_unlock (&self->call_lock);
    return s_reason (why, why_size, "options are set before the node starts");
}

int
shoal_node_set (shoal_node_t *self, const char *key, const char *value, char *why, size_t why_size)
{
    if (self && (!key || !value))
        return s_reason (why, why_size, "an option needs a key and a value");
    if (s_settable_lock (self, why, why_size) != 0)
        return -1;
    int rc = shoal_options_set (self->options, key, value, why, why_size);
    pthread_mutex_unlock (&self->call_lock);
    return rc;
}

int
shoal_node_get (shoal_node_t *self, const char *key, char *value, size_t size, char *why,
                size_t why_size)
{
    if (!self || !key || !value)
        return s_reason (why, why_size, "no node, key or room for the value");
    pthread_mutex_lock (&self->call_lock);
    int rc = shoal_options_get (self->options, key, value, size);
    pthread_mutex_unlock (&self->call_lock);
    if (rc != 0)
        return shoal_why (why, why_size, "%s: no such option, or no room for its value", key);
    return 0;
}

int
shoal_node_load_file (shoal_node_t *self, const char *path, char *why, size_t why_size)
{
    if (self && !path)
        return s_reason (why, why_size, "no config file named");
    if (s_settable_lock (self, why, why_size) != 0)
        return -1;
    int rc = shoal_options_load_file (self->options, path, why, why_size);
    pthread_mutex_unlock (&self->call_lock);
    return rc;
}

int
shoal_node_load_env (shoal_node_t *self, char *const *envp, char *why, size_t why_size)
{
    if (s_settable_lock (self, why, why_size) != 0)
        return -1;
    int rc = envp ? shoal_options_load_env (self->options, envp, why, why_size) : 0;
    pthread_mutex_unlock (&self->call_lock);
    return rc;
}

int
shoal_node_start (shoal_node_t *self, char *why, size_t why_size)
{
    if (!self)
        return s_reason (why, why_size, "no node");
    pthread_mutex_lock (&self->call_lock);
    int rc = -1;
    if (self->actor || self->stopped)
        s_reason (why, why_size, self->actor ? "the node runs already" : "the node has stopped");
    else if (self->events_fd < 0 && (self->events_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
        shoal_why (why, why_size, "cannot make the event descriptor: %s", strerror (errno));
    else {
        //  czmq must not install its signal handlers in an application's
        //  process: SIGINT and SIGTERM are the application's.
        zsys_handler_set (NULL);
        //  The node's thread, and every thread it starts, blocks the
        //  application's signals: it inherits the mask in force here.
        sigset_t old;
        s_signals_block (&old);
        self->actor = zactor_new (s_actor, self);
        char *reason = self->actor ? zstr_recv (self->actor) : NULL;
        if (reason && !reason[0])
            rc = 0;
        else {
            s_reason (why, why_size, reason ? reason : "cannot start the node's thread");
            zactor_destroy (&self->actor);
        }
        s_signals_restore (&old);
        free (reason);
    }
    pthread_mutex_unlock (&self->call_lock);
    return rc;
}

int
shoal_node_leave (shoal_node_t *self, uint64_t timeout_ms, shoal_cancel_t *cancel, char *why,
                  size_t why_size)
{
    if (!self)
        return s_reason (why, why_size, "no node");
    if (shoal_cancelled (cancel))
        return s_reason (why, why_size, "cancelled before the leave began: the node runs on");
    s_call_t call;
    if (s_call_init (&call) != 0)
        return s_reason (why, why_size, "out of memory");
    call.run = s_call_leave;
    call.cancel = cancel;
    int rc = s_call (self, &call);
    if (rc == 0 && call.rc == 1)
        rc = s_call_wait (self, &call, timeout_ms ? timeout_ms : self->options->leave_timeout_ms)
                 ? 0
                 : -1;
    else if (rc == 0 && call.rc < 0)
        rc = -1;
    if (rc != 0)
        shoal_why (why, why_size, "%s",
                   call.why[0]                ? call.why
                   : shoal_cancelled (cancel) ? "the leave was cancelled before it finished"
                                              : "the leave did not finish in time");
    s_call_fini (&call);
    pthread_mutex_lock (&self->call_lock);
    s_actor_stop (self);
    self->stopped = true;
    pthread_mutex_unlock (&self->call_lock);
    return rc;
}

int
shoal_node_id (shoal_node_t *self, char id[SHOAL_NODE_ID_TEXT])
{
    if (!self || !self->id[0])
        return -1;
    memcpy (id, self->id, SHOAL_NODE_ID_TEXT);
    return 0;
}

int
shoal_node_port (shoal_node_t *self, uint16_t *port)
{
    if (!self || !self->id[0])
        return -1;
    *port = self->port;
    return 0;
}

int
shoal_node_fd (shoal_node_t *self)
{
    return self ? self->events_fd : -1;
}

int
shoal_node_event (shoal_node_t *self, shoal_event_t *event)
{
    if (!self || self->events_fd < 0 || !event || event->size < sizeof *event)
        return -1;
    pthread_mutex_lock (&self->events_lock);
    int rc = 0;
    if (self->events_count) {
        s_give (event, event->size, &self->events[self->events_head], sizeof *event, true);
        self->events_head = (self->events_head + 1) % self->events_size;
        if (event->type == SHOAL_EVENT_LEASE)
            self->lease_events--;
        if (--self->events_count == 0) {
            uint64_t value;
            if (read (self->events_fd, &value, sizeof value) < 0) {
                //  EAGAIN: nothing to clear.
            }
        }
        rc = 1;
    }
    pthread_mutex_unlock (&self->events_lock);
    return rc;
}

int
shoal_node_lease (shoal_node_t *self, uint64_t *until_ms)
{
    if (!self || !until_ms || self->events_fd < 0)
        return -1;
    pthread_mutex_lock (&self->events_lock);
    //  While a LEASE event waits, the application has not heard what the
    //  end that follows it belongs to: a lease lost and held again since.
    *until_ms = self->lease_events ? 0 : self->lease_until;
    pthread_mutex_unlock (&self->events_lock);
    return 0;
}

int
shoal_node_report (shoal_node_t *self, const char *task, int state, uint64_t lag, char *why,
                   size_t why_size)
{
    if (!self || !task)
        return s_reason (why, why_size, "no node or no task");
    if (state != SHOAL_RUNNING && state != SHOAL_STOPPED && state != SHOAL_FAILED)
        return shoal_why (why, why_size, "task %s: %d is not a state to report", task, state);
    s_call_t call;
    if (s_call_init (&call) != 0)
        return s_reason (why, why_size, "out of memory");
    call.run = s_call_report;
    call.in = task;
    call.number[0] = (uint64_t) state;
    call.number[1] = lag;
    int rc = s_call (self, &call) == 0 ? call.rc : -1;
    if (rc != 0)
        s_reason (why, why_size, call.why);
    s_call_fini (&call);
    return rc;
}

int
shoal_node_report_exit (shoal_node_t *self, const char *task, uint32_t restarts, uint32_t last_exit,
                        const char *error, char *why, size_t why_size)
{
    if (!self || !task)
        return s_reason (why, why_size, "no node or no task");
    if (last_exit > SHOAL_EXIT_MAX)
        return shoal_why (why, why_size, "task %s: %u is not an exit (status, or 256 + signal)",
                          task, last_exit);
    s_call_t call;
    if (s_call_init (&call) != 0)
        return s_reason (why, why_size, "out of memory");
    call.run = s_call_report_exit;
    call.in = task;
    call.out = (void *) (error ? error : "");
    call.number[0] = restarts;
    call.number[1] = last_exit;
    int rc = s_call (self, &call) == 0 ? call.rc : -1;
    if (rc != 0)
        s_reason (why, why_size, call.why);
    s_call_fini (&call);
    return rc;
}

//  Gives the caller its result (NULL: none wanted), and returns rc.
static int
s_result (shoal_result_t *theirs, const shoal_result_t *ours, int rc)
{
    if (theirs)
        s_give (theirs, theirs->size, ours, sizeof *ours, true);
    return rc;
}

//  A result of code for a request that did not get the cluster's answer.
static int
s_unanswered (shoal_result_t *theirs, int code, const char *reason)
{
    shoal_result_t ours = { .code = code };
    snprintf (ours.reason, sizeof ours.reason, "%s", reason);
    return s_result (theirs, &ours, -1);
}

//  Sends a request to the cluster and waits for its answer.
static int
s_request (shoal_node_t *self, const shoal_control_req_t *req, uint64_t timeout_ms,
           shoal_cancel_t *cancel, shoal_result_t *result)
{
    s_call_t call;
    if (!self)
        return s_unanswered (result, SHOAL_RESULT_FAILED, "no node");
    if (shoal_cancelled (cancel))
        return s_unanswered (result, SHOAL_RESULT_CANCELLED, "cancelled before it was sent");
    if (s_call_init (&call) != 0)
        return s_unanswered (result, SHOAL_RESULT_FAILED, "out of memory");
    call.run = s_call_request;
    call.in = req;
    call.cancel = cancel;
    int rc = -1;
    if (s_call (self, &call) != 0 || call.rc != 0)
        s_unanswered (result, SHOAL_RESULT_FAILED, call.why);
    else if (!s_call_wait (self, &call, timeout_ms ? timeout_ms : 30000))
        shoal_cancelled (cancel)
            ? s_unanswered (result, SHOAL_RESULT_CANCELLED,
                            "cancelled while waiting: the request may still be applied")
            : s_unanswered (result, SHOAL_RESULT_FAILED, "no answer came in time");
    else
        rc = s_result (result, &call.result, 0);
    s_call_fini (&call);
    return rc;
}

//  A result the caller's struct can take: NULL, or one whose size holds
//  the 0.2 layout.
static bool
s_result_fits (const shoal_result_t *result)
{
    return !result || result->size >= sizeof *result;
}

int
shoal_node_submit (shoal_node_t *self, const shoal_job_spec_t *theirs, uint64_t timeout_ms,
                   shoal_cancel_t *cancel, shoal_result_t *result)
{
    shoal_label_t require[SHOAL_LABELS_MAX];
    char texts[SHOAL_LABELS_MAX][2 * SHOAL_LABEL_MAX + 2];
    if (!s_result_fits (result))
        return -1;
    if (!theirs || theirs->size < sizeof *theirs)
        return s_unanswered (result, SHOAL_RESULT_INVALID,
                             theirs ? "the job spec's size is below the 0.2 layout: set .size = "
                                      "sizeof (shoal_job_spec_t)"
                                    : "no job spec");
    //  Fields past the library's are the caller's newer ones: not read.
    shoal_job_spec_t copy, *spec = &copy;
    memcpy (&copy, theirs, sizeof copy);
    if (!spec->name || spec->require_count > SHOAL_LABELS_MAX)
        return s_unanswered (result, SHOAL_RESULT_INVALID,
                             !spec->name ? "a job needs a name" : "at most 16 required labels");
    for (size_t i = 0; i < spec->require_count; i++) {
        const char *label = spec->require[i];
        const char *equals = label ? strchr (label, '=') : NULL;
        if (!equals || strlen (label) >= sizeof texts[i])
            return s_unanswered (result, SHOAL_RESULT_INVALID,
                                 "a required label is key=value, of at most 64 bytes each");
        snprintf (texts[i], sizeof texts[i], "%s", label);
        texts[i][equals - label] = 0;
        require[i] = (shoal_label_t){ texts[i], texts[i] + (equals - label) + 1 };
    }
    shoal_jobspec_t job = { .name = spec->name,
                            .parallelism = spec->parallelism,
                            .stateful = spec->stateful,
                            .weight = spec->weight ? spec->weight : 1,
                            .require_count = (uint32_t) spec->require_count,
                            .require = require,
                            .command = spec->command ? spec->command : "" };
    shoal_control_req_t req = { .op = SHOAL_OP_SUBMIT, .job = spec->name, .spec = &job };
    return s_request (self, &req, timeout_ms, cancel, result);
}

int
shoal_node_rescale (shoal_node_t *self, const char *job, uint32_t parallelism, uint32_t min,
                    uint32_t wait_ms, uint64_t timeout_ms, shoal_cancel_t *cancel,
                    shoal_result_t *result)
{
    if (!s_result_fits (result))
        return -1;
    shoal_control_req_t req = { .op = SHOAL_OP_RESCALE,
                                .job = job ? job : "",
                                .parallelism = parallelism,
                                .min = min,
                                .timeout_ms = wait_ms };
    //  The answer comes after the wait at the latest.
    if (timeout_ms && timeout_ms < (uint64_t) wait_ms + 1000)
        timeout_ms = (uint64_t) wait_ms + 1000;
    return s_request (self, &req, timeout_ms, cancel, result);
}

int
shoal_node_remove (shoal_node_t *self, const char *job, uint64_t timeout_ms, shoal_cancel_t *cancel,
                   shoal_result_t *result)
{
    if (!s_result_fits (result))
        return -1;
    shoal_control_req_t req = { .op = SHOAL_OP_REMOVE, .job = job ? job : "" };
    return s_request (self, &req, timeout_ms, cancel, result);
}

int
shoal_node_job (shoal_node_t *self, const char *job, uint32_t *parallelism, bool *stateful,
                char *command, size_t command_size, char *why, size_t why_size)
{
    if (!self || !job)
        return s_reason (why, why_size, "no node or no job");
    s_call_t call;
    if (s_call_init (&call) != 0)
        return s_reason (why, why_size, "out of memory");
    call.run = s_call_job;
    call.in = job;
    call.out = command;
    call.max = command_size;
    int rc = s_call (self, &call) == 0 ? call.rc : -1;
    if (rc != 0)
        s_reason (why, why_size, call.why);
    else {
        if (parallelism)
            *parallelism = (uint32_t) call.number[0];
        if (stateful)
            *stateful = call.number[1] != 0;
    }
    s_call_fini (&call);
    return rc;
}

//  A list call's room: max items of item_size bytes at items, each of at
//  least the 0.2 layout (our_size).
static bool
s_room (const void *items, size_t item_size, size_t max, size_t our_size)
{
    return !max || (items && item_size >= our_size);
}

//  Runs the list call run, which fills up to max items of item_size bytes
//  (our_size in the 0.2 layout) at items; *count and version[2] (each when
//  not NULL) take its count and the version it names.
static int
s_list (shoal_node_t *self, void (*run) (s_actor_t *, s_call_t *), void *items, size_t item_size,
        size_t our_size, size_t max, size_t *count, uint64_t version[2])
{
    s_call_t call;
    if (!self || !s_room (items, item_size, max, our_size) || s_call_init (&call) != 0)
        return -1;
    call.run = run;
    call.out = items;
    call.item_size = item_size;
    call.max = max;
    int rc = s_call (self, &call);
    if (rc == 0 && count)
        *count = call.count;
    if (rc == 0 && version) {
        version[0] = call.number[0];
        version[1] = call.number[1];
    }
    s_call_fini (&call);
    return rc;
}

int
shoal_node_members (shoal_node_t *self, shoal_member_t *members, size_t item_size, size_t max,
                    size_t *count)
{
    return s_list (self, s_call_members, members, item_size, sizeof *members, max, count, NULL);
}

int
shoal_node_leader (shoal_node_t *self, char id[SHOAL_NODE_ID_TEXT], uint64_t *term, bool *acting)
{
    s_call_t call;
    if (!self || s_call_init (&call) != 0)
        return -1;
    call.run = s_call_leader;
    int rc = s_call (self, &call);
    if (rc == 0) {
        if (id) {
            memcpy (id, call.why, SHOAL_NODE_ID_TEXT - 1);
            id[SHOAL_NODE_ID_TEXT - 1] = 0;
        }
        if (term)
            *term = call.number[0];
        if (acting)
            *acting = call.number[1] != 0;
    }
    s_call_fini (&call);
    return rc;
}

int
shoal_node_tasks (shoal_node_t *self, shoal_task_t *tasks, size_t item_size, size_t max,
                  size_t *count, uint64_t version[2])
{
    return s_list (self, s_call_tasks, tasks, item_size, sizeof *tasks, max, count, version);
}

int
shoal_node_jobs (shoal_node_t *self, shoal_job_info_t *jobs, size_t item_size, size_t max,
                 size_t *count, uint64_t version[2])
{
    return s_list (self, s_call_jobs, jobs, item_size, sizeof *jobs, max, count, version);
}

//  Runs the status call; when it waits for the leader, waits up to
//  timeout_ms and a second more (the actor answers by the timeout, with
//  this node's own tasks at worst), or until cancel. A cancelled wait is
//  answered with this node's own tasks. Returns the call's rc.
static int
s_status (shoal_node_t *self, s_call_t *call, uint64_t timeout_ms)
{
    call->number[0] = shoal_cancelled (call->cancel) ? 0 : timeout_ms;
    if (s_call (self, call) != 0)
        return -1;
    if (call->rc != 1)
        return call->rc;
    if (s_call_wait (self, call, timeout_ms + 1000))
        return call->rc;
    call->number[0] = 0;
    if (s_call (self, call) != 0)
        return -1;
    snprintf (call->status.reason, sizeof call->status.reason, "%s: this node's own tasks",
              shoal_cancelled (call->cancel) ? "cancelled" : "the leader did not answer in time");
    return call->rc;
}

int
shoal_node_status (shoal_node_t *self, shoal_status_row_t *rows, size_t item_size, size_t max,
                   size_t *count, shoal_status_info_t *status, uint64_t timeout_ms,
                   shoal_cancel_t *cancel)
{
    s_call_t call;
    if (!self || !s_room (rows, item_size, max, sizeof *rows) ||
        (status && status->size < sizeof *status) || s_call_init (&call) != 0)
        return -1;
    call.run = s_call_status;
    call.out = rows;
    call.item_size = item_size;
    call.max = max;
    call.cancel = cancel;
    int rc = s_status (self, &call, timeout_ms);
    if (rc == 0 && count)
        *count = call.count;
    if (rc == 0 && status)
        s_give (status, status->size, &call.status, sizeof call.status, true);
    s_call_fini (&call);
    return rc;
}

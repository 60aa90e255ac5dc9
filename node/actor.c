/*  node/actor.c: the node's actor, one thread that runs a peer
    (peer/peer.h) over real sockets: its event queue, the peer's sink, its
    start (the data directory, the peer's configuration, the sockets), its
    loop and its end. node/node.h says how the node's files fit together.

    The actor owns every socket, timer and file of the node: the transport
    (UDP, the ROUTER, the DEALERs, the beacon actor), the control endpoint
    and the data directory. It polls them all with a timeout of the peer's
    next deadline, never busy.
*/

#include "node/node.h"

#include "node/eventlog.h"
#include "node/key.h"
#include "node/keys.h"
#include "node/logs.h"
#include "wire/keyring.h"
#include "node/persist.h"
#include "node/why.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

//  Decoded messages live in an arena of this size: the largest frame
//  decodes into less than four times its size.
#define S_ARENA_SIZE (4u * SHOAL_FRAME_MAX)
//  Messages taken from one socket before the others get a turn.
#define S_BURST 64
//  Errors of the UDP socket turned into hints at most, per pass.
#define S_HINTS 4
//  Events queued for an application that does not read, past which only
//  the ones it must act on are kept.
#define S_EVENTS_MAX 4096
//  Messages a node sends itself while handling one input, at most.
#define S_LOOPBACK_MAX 4096
//  The shortest time a link may hear nothing before it is made again.
#define S_LINK_TIMEOUT_MIN_MS 1000

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

uint64_t
shoal_actor_now (void)
{
    return (uint64_t) zclock_mono ();
}

//  Keeps msg, encoded, to hand to the peer once the current input is done.
static void
s_loopback_push (shoal_actor_t *self, const shoal_msg_t *msg)
{
    if (self->loopback_count >= S_LOOPBACK_MAX)
        return;
    long size = shoal_msg_encode (msg, NULL, 0, NULL);
    if (size < 0)
        return;
    if (self->loopback_count == self->loopback_size) {
        size_t grown = self->loopback_size ? 2 * self->loopback_size : 16;
        shoal_loopback_t *loopback = realloc (self->loopback, grown * sizeof *loopback);
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
        (shoal_loopback_t){ bytes, (size_t) size, shoal_msg_purpose (msg->type) };
}

//  Hands the peer what it sent itself, and what that brings, in order.
void
shoal_actor_deliver (shoal_actor_t *self, uint64_t now)
{
    //  What the input before published, and below what each message to
    //  itself does: a revocation and the grant after it may come within
    //  one pass of the loop (the leader's own task).
    shoal_metrics_handoff (self->metrics, now, self->peer);
    if (self->delivering)
        return;
    self->delivering = true;
    for (size_t i = 0; i < self->loopback_count; i++) {
        shoal_loopback_t item = self->loopback[i];
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

void
shoal_actor_send (void *arg, const shoal_life_t *to, const char *addr, const shoal_msg_t *msg)
{
    shoal_actor_t *self = arg;
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

static void s_lease_check (shoal_actor_t *self, uint64_t now);

static void
s_command (void *arg, const shoal_tasks_command_t *command)
{
    shoal_actor_t *self = arg;
    static const int types[] = { [SHOAL_TASKS_START] = SHOAL_EVENT_START,
                                 [SHOAL_TASKS_PROMOTE] = SHOAL_EVENT_PROMOTE,
                                 [SHOAL_TASKS_DEMOTE] = SHOAL_EVENT_DEMOTE,
                                 [SHOAL_TASKS_STOP] = SHOAL_EVENT_STOP };
    if (command->type >= sizeof types / sizeof types[0] || !types[command->type])
        return;
    //  A lease that lapsed brings DEMOTEs: the application hears that the
    //  lease is lost first, so that it never takes them for a demotion it
    //  may finish while leased.
    s_lease_check (self, shoal_actor_now ());
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
shoal_call_t *
shoal_actor_waiter_find (shoal_actor_t *self, uint64_t ref, const shoal_call_t *which)
{
    for (shoal_call_t *call = zlistx_first (self->waiters); call;
         call = zlistx_next (self->waiters))
        if (which ? call == which : call->ref == ref) {
            zlistx_delete (self->waiters, zlistx_cursor (self->waiters));
            return call;
        }
    return NULL;
}

static shoal_call_t *
s_waiter_take (shoal_actor_t *self, uint64_t ref)
{
    return shoal_actor_waiter_find (self, ref, NULL);
}

static void
s_waiter_answer (shoal_call_t *call, int code, const char *reason, uint32_t parallelism)
{
    pthread_mutex_lock (&call->lock);
    shoal_result_t *result = &call->u.request.result;
    result->code = code;
    snprintf (result->reason, sizeof result->reason, "%s", reason ? reason : "");
    result->parallelism = parallelism;
    call->done = true;
    pthread_cond_signal (&call->done_cond);
    pthread_mutex_unlock (&call->lock);
}

static void
s_reply (void *arg, const shoal_jobs_reply_t *reply)
{
    shoal_actor_t *self = arg;
    shoal_eventlog_reply (self->events, reply);
    if (shoal_control_server_answer (self->control, reply->ref, &reply->rep) == 0)
        return;
    shoal_call_t *call = s_waiter_take (self, reply->ref);
    if (call)
        s_waiter_answer (call, reply->rep.code, reply->rep.reason,
                         reply->rep.job_count ? reply->rep.jobs[0].parallelism : 0);
}

//  A live member that bears this node's name: names are how operators tell
//  nodes apart, and a node cannot know the names in use before it joins,
//  so it is told then, loudly, on both sides (each shows with its id in
//  `shoal members`). Once per member's life (a name changes only with one).
static void
s_name_check (shoal_actor_t *self, const shoal_membership_event_t *event)
{
    shoal_membership_member_t me;
    if (!event->meta || !event->meta->name ||
        memcmp (event->node.bytes, self->id.bytes, SHOAL_ID_SIZE) == 0 ||
        shoal_membership_member (shoal_peer_membership (self->peer), &self->id, &me) != 0 ||
        !me.meta || !me.meta->name || strcmp (me.meta->name, event->meta->name) != 0)
        return;
    char id[SHOAL_ID_TEXT];
    shoal_id_format (event->node.bytes, true, id);
    shoal_actor_notice (
        self,
        "name '%s' is taken: member %s at %s has it too; give each node a name of its own "
        "(--name)",
        event->meta->name, id, event->meta->addr ? event->meta->addr : "?");
}

static void
s_member_event (void *arg, const shoal_membership_event_t *event)
{
    shoal_actor_t *self = arg;
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
        //  Links are made on first use (their first frames held until they
        //  connect) and closed when idle. A member back from suspicion gets
        //  a new connection if it has a link: the old one may wait out
        //  TCP's retransmission backoff (docs/node.md, "Links").
        shoal_transport_relink (self->transport, event->node.bytes, event->meta->addr);
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
    shoal_actor_t *self = arg;
    shoal_metrics_leader (self->metrics, event);
    shoal_eventlog_leader (
        self->events, event,
        shoal_elector_acting (shoal_peer_elector (self->peer), shoal_actor_now ()));
    //  The leader sends to its followers over the connections they make to
    //  it; a follower over its own link (docs/node.md, "Links").
    shoal_transport_route_back (
        self->transport, event->type == SHOAL_ELECTOR_LEADER &&
                             memcmp (event->leader.bytes, self->id.bytes, SHOAL_ID_SIZE) == 0);
    shoal_event_t out = { .type = SHOAL_EVENT_LEADER, .term = event->term };
    if (event->type == SHOAL_ELECTOR_LEADER)
        shoal_id_format (event->leader.bytes, true, out.node);
    s_event_push (self->node, &out);
}

//  Writes a record to the data directory. A write that fails is told to
//  the application: the node runs on, but what it would keep is at risk.
static void
s_store_write (shoal_actor_t *self, const char *name, const uint8_t *bytes, size_t size)
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
    shoal_actor_t *self = arg;
    uint8_t *bytes = NULL;
    size_t size = 0;
    if (saved->elector) {
        shoal_persist_elector_encode (saved->elector, &bytes, &size, NULL, 0);
        s_store_write (self, SHOAL_PERSIST_ELECTOR_FILE, bytes, size);
        free (bytes);
        shoal_eventlog_voters (self->events, saved->elector->voters_version, saved->elector->voters,
                               saved->elector->voter_count);
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
s_lease_check (shoal_actor_t *self, uint64_t now)
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
    shoal_actor_t *self = arg;
    shoal_eventlog_assignment (self->events, shoal_tasks_version (shoal_peer_tasks (self->peer)));
    s_lease_check (self, shoal_actor_now ());
}

//  Tells the application something it should know, as a NOTICE event
//  (`shoal worker` logs it as a warning).
void
shoal_actor_notice (shoal_actor_t *self, const char *format, ...)
{
    shoal_event_t event = { .type = SHOAL_EVENT_NOTICE };
    va_list args;
    va_start (args, format);
    vsnprintf (event.reason, sizeof event.reason, format, args);
    va_end (args);
    s_event_push (self->node, &event);
}

//  ---------------------------------------------------------------------
//  Leaving

void
shoal_actor_leave_start (shoal_actor_t *self, uint64_t now)
{
    if (self->leaving)
        return;
    self->leaving = true;
    shoal_eventlog_leave (self->events, false);
    shoal_peer_leave (self->peer, now);
    shoal_actor_deliver (self, now);
    shoal_discovery_publish (self, now);
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
s_profile (shoal_actor_t *self)
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
    } else if (options->profile == SHOAL_PROFILE_WAN) {
        shoal_membership_config_wan (&config->membership);
        shoal_elector_config_wan (&config->elector);
        shoal_tasks_config_wan (&config->node_tasks);
        shoal_handoff_config_wan (&config->handoff);
        shoal_jobs_config_wan (&config->jobs);
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
    config->elector.voters_max = options->voters;
    //  A node given seeds joins a cluster: it never leads one of its own
    //  while they do not answer, unless told a cluster of one is fine.
    config->election_waits = options->join.count > 0 && options->expect != 1;
    config->jobs.quorum = quorum;
    config->node_tasks.acceptable_lag = options->acceptable_lag;
    config->handoff.assign.acceptable_lag = options->acceptable_lag;
    config->handoff.assign.standbys = options->standbys;
    config->handoff.assign.max_warmups = options->max_warmups;
    config->handoff.max_starting = options->max_starting;
    self->beacon_interval_ms = config->membership.probe_interval_ms;
    self->join_interval_ms = config->membership.sync_interval_ms;
}

//  The links' timeout (docs/node.md, "Links"): a link is closed and
//  connected again when this long passes with bytes unacknowledged, or
//  without an answer to a ping (one every five timeouts). The election's
//  lease (LAN: 2 s, where TCP's backoff waited up to 26 s): a link that
//  carries the leader's rounds is closed within one or two leases of a
//  cut, and one made again after the heal connects within three quarters
//  of a lease. At least a second: the loopback profile runs on loaded
//  test machines, where a silence of 200 ms is scheduling more often than
//  a cut, and a link closed by mistake drops its frames.
static uint32_t
s_link_timeout (const shoal_actor_t *self)
{
    uint32_t timeout = self->config.elector.lease_ms;
    return timeout > S_LINK_TIMEOUT_MIN_MS ? timeout : S_LINK_TIMEOUT_MIN_MS;
}

//  The address others reach this node at: the advertise option, or the
//  bound address, or (bound to every address) the first interface with
//  broadcast, or loopback.
static void
s_advertise (shoal_actor_t *self)
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
s_keyring (shoal_actor_t *self, char *why, size_t why_size)
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
s_identity (shoal_actor_t *self, shoal_persist_identity_t *identity, char *why, size_t why_size)
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
s_incarnation_keep (shoal_actor_t *self)
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
s_peer_start (shoal_actor_t *self, const shoal_persist_identity_t *identity, char *why,
              size_t why_size)
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
                               .send = shoal_actor_send,
                               .command = s_command,
                               .reply = s_reply,
                               .member_event = s_member_event,
                               .leader_event = s_leader_event,
                               .saved = s_saved,
                               .tasks_done = s_tasks_done };
    uint64_t seed;
    randombytes_buf (&seed, sizeof seed);
    self->peer = shoal_peer_new (&self->config, &self->id, identity->incarnation, &meta, &saved,
                                 seed, shoal_actor_now (), NULL, &sink);
    shoal_persist_elector_release (&elector);
    shoal_persist_jobs_release (&jobs);
    if (!self->peer)
        return shoal_why (why, why_size,
                          "cannot start the node (its kept state is refused, or "
                          "memory is short)");
    return 0;
}

static void s_actor_free (shoal_actor_t *self);

//  The metrics' server and the event log, where the options ask for them.
static int
s_observe_start (shoal_actor_t *self, char *why, size_t why_size)
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
    if (!(self->unplaced = shoal_unplaced_watch_new ()) ||
        !(self->moves = shoal_moves_watch_new ()))
        return shoal_why (why, why_size, "out of memory");
    return 0;
}

//  Everything a start does on the actor's thread. Returns 0, or -1 with
//  the reason.
static int
s_actor_start (shoal_actor_t *self, char *why, size_t why_size)
{
    const shoal_options_t *options = self->options;
    s_profile (self);
    if (s_keyring (self, why, why_size) != 0)
        return -1;
    char reason[200];
    if (shoal_store_open (options->data_dir, &self->store, reason, sizeof reason) != 0)
        return shoal_why (why, why_size, "data-dir %s: %s", options->data_dir, reason);
    if (shoal_keys_load (self, why, why_size) != 0)
        return -1;
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
    if (options->join.count) {
        self->resolver =
            shoal_resolver_new (shoal_transport_family (self->transport), reason, sizeof reason);
        if (!self->resolver)
            return shoal_why (why, why_size, "join: %s", reason);
    }
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

//  A message the transport refused because it did not authenticate: a
//  node with another key (or none) tries to reach this one. Told, naming
//  the sender, at most once a minute per sender.
static void
s_refused (shoal_actor_t *self)
{
    char from[SHOAL_ADDR_MAX + 1], text[SHOAL_REASON_TEXT];
    shoal_open_result_t reason = shoal_transport_refused (self->transport, from, sizeof from);
    if (reason != SHOAL_OPEN_OK &&
        shoal_refusals_add (self->refusals, shoal_actor_now (), from, reason, text, sizeof text))
        shoal_actor_notice (self, "%s", text);
}

//  The live member listening at addr ("ip:port", as the transport formats
//  a destination), into id. Returns 0, or -1 when no member is there.
static int
s_member_at (shoal_actor_t *self, const char *addr, shoal_id_t *id)
{
    shoal_membership_t *membership = shoal_peer_membership (self->peer);
    size_t size = shoal_membership_size (membership);
    for (size_t i = 0; i < size; i++) {
        shoal_membership_member_t member;
        if (shoal_membership_member_at (membership, i, &member) == 0 &&
            (member.state == SHOAL_MEMBER_ALIVE || member.state == SHOAL_MEMBER_SUSPECT) &&
            member.meta && member.meta->addr && strcmp (member.meta->addr, addr) == 0 &&
            memcmp (member.node.bytes, self->id.bytes, SHOAL_ID_SIZE) != 0) {
            *id = member.node;
            return 0;
        }
    }
    return -1;
}

//  A sign that member id may be gone, for the membership to probe it.
static void
s_hint (shoal_actor_t *self, const shoal_id_t *id)
{
    uint64_t now = shoal_actor_now ();
    shoal_peer_hint (self->peer, now, id);
    shoal_actor_deliver (self, now);
}

//  The kernel of a datagram's destination answered that no process listens
//  at its port (ICMP port unreachable): the member there may have died.
//  Each such error is a hint to the membership, which probes the member at
//  once (docs/membership.md, "Hints"): never a verdict. Reads up to S_BURST
//  errors a pass, and looks up at most S_HINTS of them in the table (a scan
//  each), so that a flood of forged ICMP costs little.
static void
s_unreachable (shoal_actor_t *self)
{
    int hinted = 0;
    for (int i = 0; i < S_BURST; i++) {
        char addr[SHOAL_ADDR_MAX + 1];
        int rc = shoal_transport_unreachable (self->transport, addr, sizeof addr);
        if (rc < 0)
            return;
        shoal_id_t id;
        if (rc == 0 || hinted >= S_HINTS || s_member_at (self, addr, &id) != 0)
            continue;
        hinted++;
        s_hint (self, &id);
    }
}

//  A member's connection to this node's ROUTER closed while in use: its
//  process may have died, its kernel closing the connection. A hint too,
//  read and bounded as the UDP socket's errors are.
static void
s_closed (shoal_actor_t *self)
{
    for (int i = 0; i < S_BURST; i++) {
        shoal_id_t id;
        int rc = shoal_transport_closed (self->transport, id.bytes);
        if (rc < 0)
            return;
        if (rc == 1)
            s_hint (self, &id);
    }
}

//  Reads what came of carrier; frames from socket only (the ROUTER or a
//  link the wait found readable).
static void
s_receive (shoal_actor_t *self, shoal_purpose_t carrier, void *socket)
{
    for (int i = 0; i < S_BURST; i++) {
        shoal_transport_in_t in;
        int rc = carrier == SHOAL_PURPOSE_FRAME
                     ? shoal_transport_receive_from (self->transport, socket, &self->arena, &in)
                     : shoal_transport_receive (self->transport, carrier, &self->arena, &in);
        //  Beacons are broadcast to every node on the port, those of other
        //  clusters too: only what was sent to this node is told.
        if (rc == 0 && carrier != SHOAL_PURPOSE_BEACON)
            s_refused (self);
        if (rc <= 0)
            return;
        uint64_t now = shoal_actor_now ();
        if (carrier == SHOAL_PURPOSE_BEACON)
            shoal_discovery_receive (self, now, &in);
        else if (shoal_keys_message (self, now, &in))
            ; //  a key operation: the node's own
        else if (shoal_logs_message (self, now, &in))
            ; //  a task's output asked, or the answer: the node's own
        else if (shoal_status_message (self, now, &in))
            ; //  a status asked of the leader, or its answer: the node's own
        else
            shoal_peer_receive (self->peer, now, &in.envelope, &in.msg,
                                in.from[0] ? in.from : NULL);
        shoal_actor_deliver (self, now);
    }
}

//  True while the node runs a task as active, or one still stopping: what
//  a leave hands over before it ends. Learners and standbys are copies,
//  dropped with the node.
static bool
s_acting_tasks (shoal_actor_t *self)
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
void
shoal_actor_leave_check (shoal_actor_t *self)
{
    if (!self->leaving || self->left || !shoal_peer_left (self->peer) || s_acting_tasks (self))
        return;
    self->left = true;
    shoal_eventlog_leave (self->events, true);
    shoal_event_t event = { .type = SHOAL_EVENT_LEFT };
    s_event_push (self->node, &event);
    shoal_call_t *call = s_waiter_take (self, 0);
    while (call) {
        s_waiter_answer (call, SHOAL_RESULT_OK, "", 0);
        call = s_waiter_take (self, 0);
    }
}

static void
s_pipe (shoal_actor_t *self)
{
    char *command = NULL;
    void *pointer = NULL;
    if (zsock_recv (self->pipe, "sp", &command, &pointer) != 0 || !command ||
        streq (command, "$TERM"))
        self->terminated = true;
    else if (streq (command, "CALL") && pointer) {
        shoal_call_t *call = pointer;
        shoal_call_run (self, call);
        zsock_signal (self->pipe, 0);
    }
    free (command);
}

//  The metrics, refreshed after a pass that changed anything (an input or
//  a tick), and the event log's first failure, told once. Returns when
//  the metrics want the next pass.
static uint64_t
s_observe (shoal_actor_t *self, uint64_t now, bool changed)
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
    shoal_moves_watch_update (self->moves, acting ? handoff : NULL,
                              shoal_peer_membership (self->peer), shoal_peer_elector (self->peer),
                              &self->id, self->leaving, self->events);
    shoal_metrics_sources_t sources = { .peer = self->peer,
                                        .transport = self->transport,
                                        .leased = self->leased,
                                        .event_write_failures = failures,
                                        .unplaced = self->unplaced,
                                        .id = self->id,
                                        .leaving = self->leaving,
                                        .alone = self->options->join.count == 0 ||
                                                 self->options->expect == 1 || self->join_self,
                                        .seeds = (uint32_t) self->options->join.count };
    return shoal_metrics_update (self->metrics, now, &sources, changed);
}

//  Whether socket has a message to read: its ZMQ_EVENTS, which takes the
//  commands its mailbox holds (and so quiets its descriptor). 1, 0, or -1
//  with errno set (the context ended).
static int
s_readable (void *socket)
{
    int events = 0;
    size_t size = sizeof events;
    if (zmq_getsockopt (socket, ZMQ_EVENTS, &events, &size) != 0)
        return -1;
    return (events & ZMQ_POLLIN) != 0;
}

#define S_WAITED_MAX (7 + SHOAL_TRANSPORT_LINKS_MAX)

//  Waits up to timeout ms as zmq_poll does, with fewer system calls.
//  zmq_poll reads every ZeroMQ socket's ZMQ_EVENTS before it sleeps and
//  again after, each a poll of the socket's mailbox and a getpid (libzmq's
//  fork check): some 20 calls a pass for a follower's five sockets, the
//  most of an idle node's CPU on a machine whose system calls are dear
//  (docs/node.md, "Waiting"). Here each socket's mailbox descriptor
//  (ZMQ_FD) is polled with the plain descriptors, and its ZMQ_EVENTS read
//  only when that descriptor woke or the node touched the socket (sent or
//  read on it) since: input reaches a socket only by a command to its
//  mailbox, whose descriptor then wakes, unless a send or a read took the
//  command first. touched[i] says so of items[i]; all are cleared. Returns
//  how many items have revents, or -1 with errno set, as zmq_poll does.
static int
s_wait (zmq_pollitem_t *items, bool *touched, int count, long timeout)
{
    struct pollfd fds[S_WAITED_MAX];
    int ready = 0;
    for (int i = 0; i < count; i++) {
        items[i].revents = 0;
        fds[i] = (struct pollfd){ .fd = items[i].fd, .events = POLLIN };
        if (!items[i].socket)
            continue;
        size_t size = sizeof fds[i].fd;
        if (zmq_getsockopt (items[i].socket, ZMQ_FD, &fds[i].fd, &size) != 0)
            return -1;
        int readable = touched[i] ? s_readable (items[i].socket) : 0;
        touched[i] = false;
        if (readable < 0)
            return -1;
        items[i].revents = readable ? ZMQ_POLLIN : 0;
        ready += readable;
    }
    if (poll (fds, (nfds_t) count, ready ? 0 : (int) timeout) < 0)
        return -1;
    for (int i = 0; i < count; i++) {
        if (!fds[i].revents || items[i].revents)
            continue;
        int readable = 1;
        if (items[i].socket && (readable = s_readable (items[i].socket)) < 0)
            return -1;
        if (items[i].socket)
            items[i].revents = readable ? ZMQ_POLLIN : 0;
        else
            items[i].revents = (short) ((fds[i].revents & POLLIN ? ZMQ_POLLIN : 0) |
                                        (fds[i].revents & ~(POLLIN | POLLOUT) ? ZMQ_POLLERR : 0));
        ready += items[i].revents != 0;
    }
    return ready;
}

static void
s_loop (shoal_actor_t *self)
{
    zmq_pollitem_t items[S_WAITED_MAX];
    bool touched[S_WAITED_MAX];
    void *links[SHOAL_TRANSPORT_LINKS_MAX];
    int count = 0;
    items[count++] = (zmq_pollitem_t){ zsock_resolve (self->pipe), 0, ZMQ_POLLIN, 0 };
    items[count++] = (zmq_pollitem_t){ NULL, shoal_transport_udp_fd (self->transport),
                                       ZMQ_POLLIN | ZMQ_POLLERR, 0 };
    items[count++] = (zmq_pollitem_t){ shoal_transport_router (self->transport), 0, ZMQ_POLLIN, 0 };
    items[count++] =
        (zmq_pollitem_t){ shoal_control_server_socket (self->control), 0, ZMQ_POLLIN, 0 };
    if (self->beacons)
        items[count++] =
            (zmq_pollitem_t){ zsock_resolve (shoal_transport_beacons (self->transport)), 0,
                              ZMQ_POLLIN, 0 };
    int resolver = self->resolver ? count : -1;
    if (self->resolver)
        items[count++] =
            (zmq_pollitem_t){ NULL, shoal_resolver_fd (self->resolver), ZMQ_POLLIN, 0 };
    void *monitor_socket = shoal_transport_monitor (self->transport);
    int monitor = monitor_socket ? count : -1;
    if (monitor_socket)
        items[count++] = (zmq_pollitem_t){ monitor_socket, 0, ZMQ_POLLIN, 0 };
    int fixed = count;
    int beacons = self->beacons ? 4 : -1;
    for (int i = 0; i < fixed; i++)
        touched[i] = true; //  read once before the first sleep
    uint64_t observe_at = s_observe (self, shoal_actor_now (), true);
    while (!self->terminated) {
        uint64_t now = shoal_actor_now ();
        shoal_discovery_join (self, now);
        shoal_discovery_publish (self, now);
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
        if (shoal_keys_next (self) < next)
            next = shoal_keys_next (self);
        if (shoal_logs_next (self) < next)
            next = shoal_logs_next (self);
        for (size_t i = 0; i < self->ask_count; i++)
            if (self->asks[i].deadline < next)
                next = self->asks[i].deadline;
        //  Frames wait for connections being made: look again soon.
        uint32_t again = shoal_transport_flush (self->transport);
        if (again && now + again < next)
            next = now + again;
        long timeout = next <= now ? 0 : next - now > 60000 ? 60000 : (long) (next - now);
        //  Frames come back over the links too: polled as they are now.
        size_t linked = shoal_transport_links (self->transport, links, touched + fixed,
                                               SHOAL_TRANSPORT_LINKS_MAX);
        for (size_t i = 0; i < linked; i++)
            items[fixed + i] = (zmq_pollitem_t){ links[i], 0, ZMQ_POLLIN, 0 };
        count = fixed + (int) linked;
        //  A socket read in the last pass may hold more; the beacons' pipe
        //  is written by the discovery's publish too.
        for (int i = 0; i < fixed; i++)
            touched[i] |= items[i].socket && (items[i].revents || i == beacons);
        touched[2] |= shoal_transport_router_touched (self->transport);
        touched[3] |= shoal_control_server_touched (self->control);
        int rc = s_wait (items, touched, count, timeout);
        if (rc < 0 && zmq_errno () != EINTR)
            break;
        if (items[0].revents & ZMQ_POLLIN)
            s_pipe (self);
        if (items[1].revents & ZMQ_POLLIN)
            s_receive (self, SHOAL_PURPOSE_DATAGRAM, NULL);
        if (items[1].revents & ZMQ_POLLERR)
            s_unreachable (self);
        //  Frames: from each socket found readable, and no other (a read
        //  that finds nothing costs ZeroMQ two system calls).
        if (items[2].revents & ZMQ_POLLIN)
            s_receive (self, SHOAL_PURPOSE_FRAME, items[2].socket);
        for (int i = fixed; i < count; i++)
            if (items[i].revents & ZMQ_POLLIN)
                s_receive (self, SHOAL_PURPOSE_FRAME, items[i].socket);
        if (items[3].revents & ZMQ_POLLIN)
            shoal_status_serve (self, shoal_actor_now ());
        if (self->beacons && items[4].revents & ZMQ_POLLIN)
            s_receive (self, SHOAL_PURPOSE_BEACON, NULL);
        if (resolver >= 0 && items[resolver].revents & ZMQ_POLLIN)
            shoal_discovery_resolved (self, shoal_actor_now ());
        if (monitor >= 0 && items[monitor].revents & ZMQ_POLLIN)
            s_closed (self);
        now = shoal_actor_now ();
        bool ticked = shoal_peer_next (self->peer) <= now;
        if (ticked) {
            shoal_peer_tick (self->peer, now);
            shoal_actor_deliver (self, now);
        }
        s_lease_check (self, now);
        shoal_status_expire (self, now);
        shoal_keys_expire (self, now);
        shoal_logs_expire (self, now);
        s_incarnation_keep (self);
        shoal_actor_leave_check (self);
        observe_at = s_observe (self, now, rc > 0 || ticked);
    }
}

static void
s_actor_free (shoal_actor_t *self)
{
    if (self->waiters) {
        for (shoal_call_t *call = zlistx_first (self->waiters); call;
             call = zlistx_next (self->waiters))
            s_waiter_answer (call, SHOAL_RESULT_FAILED, "the node stopped", 0);
        zlistx_destroy (&self->waiters);
    }
    shoal_keys_free (self);
    shoal_logs_free (self);
    shoal_control_server_destroy (&self->control);
    shoal_metrics_destroy (&self->metrics);
    shoal_unplaced_watch_destroy (&self->unplaced);
    shoal_moves_watch_destroy (&self->moves);
    shoal_eventlog_close (&self->events);
    shoal_refusals_destroy (&self->refusals);
    shoal_resolver_destroy (&self->resolver);
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
void
shoal_actor_run (zsock_t *pipe, void *arg)
{
    shoal_node_t *node = arg;
    shoal_actor_t self = { .node = node, .options = node->options, .pipe = pipe };
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

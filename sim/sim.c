/*  sim/sim.c: many membership cores on a virtual clock and network.

    One priority queue of events ordered by (time, sequence number) drives
    everything: a message arriving at a node, a node's timer (each node has
    at most one pending tick: a newer one makes the older stale), and the
    end of a pause. Ties in time go in the order the events were made, so
    a run depends on nothing but the seed.
*/
#include "sim.h"

#include "arena.h"
#include "splitmix.h"
#include "wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { S_DELIVER, S_TICK, S_RESUME } s_kind_t;

typedef struct {
    uint64_t time;
    uint64_t seq;
    uint8_t kind;    //  s_kind_t
    uint8_t purpose; //  the carrier a message came on
    uint32_t node;   //  where it happens
    uint32_t from;   //  who sent a message
    uint32_t gen;    //  a tick's generation
    uint32_t size;
    uint64_t envelope_seq; //  the sender's envelope sequence number
    uint8_t *data;         //  the encoded message
    shoal_life_t sender;
    shoal_life_t recipient;
} s_event_t;

typedef struct {
    shoal_membership_t *core; //  NULL when down
    shoal_elector_t *elector; //  NULL when down or without an election
    uint32_t priority;
    //  What the elector persisted, for its next life.
    bool saved;
    uint64_t term;
    shoal_id_t leader;
    uint64_t voters_version;
    shoal_id_t *voters;
    uint32_t voter_count;
    uint64_t incarnation; //  of the last start
    uint64_t life;        //  of the last start
    uint64_t sent;        //  envelopes sent: the last sequence number
    uint32_t group;
    bool paused;
    uint32_t gen;       //  generation of the pending tick
    uint64_t tick_at;   //  when it is due; UINT64_MAX when none
    s_event_t *backlog; //  what arrived while paused
    uint32_t backlog_count;
    char addr[24];
} s_node_t;

struct _shoal_sim_t {
    shoal_sim_config_t config;
    uint32_t size;
    s_node_t *nodes;
    bool blocked[SHOAL_SIM_GROUPS][SHOAL_SIM_GROUPS];
    s_event_t *queue; //  a binary heap
    size_t queue_count, queue_size;
    uint64_t now;
    uint64_t seq;
    uint64_t random;
    uint8_t *buffer; //  one encoded message
    shoal_arena_t arena;
    shoal_metapool_t *metas; //  every core's, so each meta is held once
    shoal_sim_observer_fn *observer;
    void *observer_arg;
    shoal_sim_leader_fn *leader_observer;
    void *leader_observer_arg;
    shoal_sim_stats_t stats;
};

//  Ids carry the node's index in their first four bytes, and a fixed mark
//  after it, so that an id maps back to its node without a table.
static const uint8_t s_mark[12] = { 's', 'h', 'o', 'a', 'l', '-', 's', 'i', 'm', '-', 'i', 'd' };

void
shoal_sim_id (uint32_t node, shoal_id_t *id)
{
    id->bytes[0] = (uint8_t) (node >> 24);
    id->bytes[1] = (uint8_t) (node >> 16);
    id->bytes[2] = (uint8_t) (node >> 8);
    id->bytes[3] = (uint8_t) node;
    memcpy (id->bytes + 4, s_mark, sizeof s_mark);
}

uint32_t
shoal_sim_index (const shoal_id_t *id)
{
    if (memcmp (id->bytes + 4, s_mark, sizeof s_mark) != 0)
        return SHOAL_SIM_NONE;
    return (uint32_t) id->bytes[0] << 24 | (uint32_t) id->bytes[1] << 16 |
           (uint32_t) id->bytes[2] << 8 | id->bytes[3];
}

//  The node listening at addr ("sim:N"), or SHOAL_SIM_NONE.
static uint32_t
s_node_at (const shoal_sim_t *self, const char *addr)
{
    unsigned node;
    char rest;
    if (sscanf (addr, "sim:%u%c", &node, &rest) != 1 || node >= self->size)
        return SHOAL_SIM_NONE;
    return node;
}

void
shoal_sim_config_default (shoal_sim_config_t *config)
{
    memset (config, 0, sizeof *config);
    shoal_membership_config_lan (&config->membership);
    config->latency_ms = 1;
    config->jitter_ms = 1;
    config->loss_ppm = 0;
    config->backlog = 256;
    config->election = false;
    shoal_elector_config_lan (&config->elector);
}

//  ---------------------------------------------------------------------
//  The event queue

static bool
s_before (const s_event_t *a, const s_event_t *b)
{
    return a->time != b->time ? a->time < b->time : a->seq < b->seq;
}

static int
s_push (shoal_sim_t *self, s_event_t event)
{
    if (self->queue_count == self->queue_size) {
        size_t size = self->queue_size ? 2 * self->queue_size : 1024;
        s_event_t *queue = realloc (self->queue, size * sizeof *queue);
        if (!queue)
            return -1;
        self->queue = queue;
        self->queue_size = size;
    }
    event.seq = self->seq++;
    size_t i = self->queue_count++;
    while (i > 0 && s_before (&event, &self->queue[(i - 1) / 2])) {
        self->queue[i] = self->queue[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    self->queue[i] = event;
    return 0;
}

static s_event_t
s_pop (shoal_sim_t *self)
{
    s_event_t top = self->queue[0];
    s_event_t last = self->queue[--self->queue_count];
    size_t i = 0;
    while (true) {
        size_t child = 2 * i + 1;
        if (child >= self->queue_count)
            break;
        if (child + 1 < self->queue_count &&
            s_before (&self->queue[child + 1], &self->queue[child]))
            child++;
        if (!s_before (&self->queue[child], &last))
            break;
        self->queue[i] = self->queue[child];
        i = child;
    }
    if (self->queue_count)
        self->queue[i] = last;
    return top;
}

//  ---------------------------------------------------------------------
//  Nodes

shoal_sim_t *
shoal_sim_new (const shoal_sim_config_t *config, uint32_t nodes, uint64_t seed)
{
    if (shoal_membership_config_check (&config->membership) || nodes == 0 ||
        nodes >= SHOAL_SIM_NONE ||
        (config->election && shoal_elector_config_check (&config->elector)))
        return NULL;
    shoal_sim_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->config = *config;
    self->size = nodes;
    self->random = seed;
    self->nodes = calloc (nodes, sizeof *self->nodes);
    self->buffer = malloc (SHOAL_FRAME_MAX);
    self->metas = shoal_metapool_new (seed);
    if (!self->nodes || !self->buffer || !self->metas ||
        shoal_arena_init (&self->arena, SHOAL_DECODE_ARENA (SHOAL_FRAME_MAX)) != 0) {
        shoal_sim_destroy (&self);
        return NULL;
    }
    for (uint32_t n = 0; n < nodes; n++) {
        snprintf (self->nodes[n].addr, sizeof self->nodes[n].addr, "sim:%u", n);
        self->nodes[n].tick_at = UINT64_MAX;
    }
    return self;
}

static void
s_drop_backlog (s_node_t *node)
{
    for (uint32_t i = 0; i < node->backlog_count; i++)
        free (node->backlog[i].data);
    node->backlog_count = 0;
}

void
shoal_sim_destroy (shoal_sim_t **self_p)
{
    shoal_sim_t *self = *self_p;
    if (!self)
        return;
    for (uint32_t n = 0; self->nodes && n < self->size; n++) {
        shoal_membership_destroy (&self->nodes[n].core);
        shoal_elector_destroy (&self->nodes[n].elector);
        free (self->nodes[n].voters);
        s_drop_backlog (&self->nodes[n]);
        free (self->nodes[n].backlog);
    }
    for (size_t i = 0; i < self->queue_count; i++)
        free (self->queue[i].data);
    free (self->queue);
    free (self->nodes);
    free (self->buffer);
    shoal_metapool_destroy (&self->metas);
    shoal_arena_release (&self->arena);
    free (self);
    *self_p = NULL;
}

void
shoal_sim_observe (shoal_sim_t *self, shoal_sim_observer_fn *observer, void *arg)
{
    self->observer = observer;
    self->observer_arg = arg;
}

void
shoal_sim_observe_leaders (shoal_sim_t *self, shoal_sim_leader_fn *observer, void *arg)
{
    self->leader_observer = observer;
    self->leader_observer_arg = arg;
}

static bool
s_election_message (uint8_t type)
{
    return type == SHOAL_MSG_ELECTION || type == SHOAL_MSG_ANSWER ||
           type == SHOAL_MSG_COORDINATOR || type == SHOAL_MSG_COORDINATOR_ACK;
}

//  Sends one message from node from to node to (SHOAL_SIM_NONE: nowhere)
//  into the network.
static void
s_send (shoal_sim_t *self, uint32_t from, const shoal_msg_t *msg, uint32_t to,
        const shoal_life_t *recipient)
{
    s_node_t *node = &self->nodes[from];
    shoal_wire_error_t err;
    long size = shoal_msg_encode (msg, self->buffer, SHOAL_FRAME_MAX, &err);
    if (size < 0) {
        self->stats.codec_errors++;
        return;
    }
    self->stats.sent++;
    self->stats.bytes += (uint64_t) size;
    uint8_t purpose = (uint8_t) shoal_msg_purpose (msg->type);
    if (s_election_message (msg->type))
        self->stats.election_sent++;
    else if (purpose == SHOAL_PURPOSE_FRAME)
        self->stats.frame_bytes += (uint64_t) size;
    if (to == SHOAL_SIM_NONE) {
        self->stats.undeliverable++;
        return;
    }
    if (!shoal_sim_reachable (self, from, to)) {
        self->stats.blocked++;
        return;
    }
    if (purpose == SHOAL_PURPOSE_DATAGRAM && self->config.loss_ppm &&
        splitmix_next (&self->random) % 1000000 < self->config.loss_ppm) {
        self->stats.lost++;
        return;
    }
    s_event_t event = { 0 };
    event.kind = S_DELIVER;
    event.purpose = purpose;
    event.node = to;
    event.from = from;
    event.time = self->now + self->config.latency_ms +
                 splitmix_next (&self->random) % ((uint64_t) self->config.jitter_ms + 1);
    event.size = (uint32_t) size;
    shoal_id_t id;
    shoal_sim_id (from, &id);
    memcpy (event.sender.id, id.bytes, sizeof event.sender.id);
    event.sender.life = node->life;
    event.recipient = *recipient;
    event.envelope_seq = ++node->sent;
    event.data = malloc ((size_t) size);
    if (event.data)
        memcpy (event.data, self->buffer, (size_t) size);
    if (!event.data || s_push (self, event) != 0) {
        free (event.data);
        self->stats.undeliverable++;
    }
}

//  Node n's next tick into the queue: the sooner of its cores' deadlines.
static void
s_schedule (shoal_sim_t *self, uint32_t n)
{
    s_node_t *node = &self->nodes[n];
    uint64_t next = shoal_membership_next (node->core);
    if (node->elector && shoal_elector_next (node->elector) < next)
        next = shoal_elector_next (node->elector);
    if (next != node->tick_at) {
        node->tick_at = next;
        s_event_t tick = { .kind = S_TICK, .node = n, .gen = ++node->gen };
        tick.time = next > self->now ? next : self->now;
        s_push (self, tick);
    }
}

//  After an input to node n's elector: what it persists into the node's
//  storage, its events to the observer, its messages to the network.
static void
s_elector_outputs (shoal_sim_t *self, uint32_t n)
{
    s_node_t *node = &self->nodes[n];
    shoal_elector_saved_t saved;
    if (shoal_elector_saved (node->elector, &saved)) {
        shoal_id_t *voters = realloc (node->voters, (saved.voter_count + 1) * sizeof *voters);
        if (voters) {
            node->voters = voters;
            memcpy (voters, saved.voters, saved.voter_count * sizeof *voters);
            node->voter_count = saved.voter_count;
            node->voters_version = saved.voters_version;
            node->term = saved.term;
            node->leader = saved.leader;
            node->saved = true;
        }
    }
    const shoal_elector_event_t *events;
    size_t count = shoal_elector_events (node->elector, &events);
    for (size_t i = 0; i < count && self->leader_observer; i++)
        self->leader_observer (self->leader_observer_arg, self->now, n, &events[i]);
    const shoal_elector_send_t *sends;
    count = shoal_elector_outbox (node->elector, &sends);
    for (size_t i = 0; i < count; i++) {
        shoal_life_t recipient = { 0 };
        memcpy (recipient.id, sends[i].to.bytes, sizeof recipient.id);
        s_send (self, n, &sends[i].msg, shoal_sim_index (&sends[i].to), &recipient);
    }
}

//  After an input to node n's membership: its events to the observer and
//  to its elector, its messages to the network, and its next tick.
static void
s_outputs (shoal_sim_t *self, uint32_t n)
{
    s_node_t *node = &self->nodes[n];
    const shoal_membership_event_t *events;
    size_t count = shoal_membership_events (node->core, &events);
    self->stats.events += count;
    for (size_t i = 0; i < count; i++) {
        if (self->observer)
            self->observer (self->observer_arg, self->now, n, shoal_sim_index (&events[i].node),
                            &events[i]);
        if (node->elector) {
            bool live =
                events[i].type != SHOAL_MEMBERSHIP_DEAD && events[i].type != SHOAL_MEMBERSHIP_LEFT;
            shoal_elector_member (node->elector, self->now, &events[i].node,
                                  events[i].meta->priority, live);
            s_elector_outputs (self, n);
        }
    }
    const shoal_membership_send_t *sends;
    count = shoal_membership_outbox (node->core, &sends);
    for (size_t i = 0; i < count; i++)
        s_send (self, n, &sends[i].msg, s_node_at (self, sends[i].addr), &sends[i].to);
    s_schedule (self, n);
}

//  Node n's timers, each core's when due.
static void
s_tick (shoal_sim_t *self, uint32_t n)
{
    s_node_t *node = &self->nodes[n];
    if (node->elector && shoal_elector_next (node->elector) <= self->now) {
        shoal_elector_tick (node->elector, self->now);
        s_elector_outputs (self, n);
    }
    if (shoal_membership_next (node->core) <= self->now) {
        shoal_membership_tick (node->core, self->now);
        s_outputs (self, n);
    } else
        s_schedule (self, n); //  the membership's outputs are of an input already handled
}

//  Node n takes in the message of event, as its shell would after opening
//  the envelope.
static void
s_receive (shoal_sim_t *self, uint32_t n, const s_event_t *event)
{
    s_node_t *node = &self->nodes[n];
    shoal_msg_t msg;
    shoal_wire_error_t err;
    shoal_arena_reset (&self->arena);
    if (shoal_msg_decode (event->data, event->size, event->purpose, &msg, &self->arena, &err) !=
        0) {
        self->stats.codec_errors++;
        return;
    }
    shoal_envelope_t envelope = { 0 };
    envelope.mode = SHOAL_ENVELOPE_PLAINTEXT;
    envelope.purpose = event->purpose;
    envelope.sender = event->sender;
    envelope.recipient = event->recipient;
    envelope.seq = event->envelope_seq;
    self->stats.delivered++;
    if (s_election_message (msg.type)) {
        if (node->elector) {
            shoal_id_t from;
            memcpy (from.bytes, event->sender.id, sizeof from.bytes);
            shoal_elector_receive (node->elector, self->now, &from, &msg);
            s_elector_outputs (self, n);
            s_schedule (self, n);
        }
        return;
    }
    shoal_membership_receive (node->core, self->now, &envelope, &msg,
                              self->nodes[event->from].addr);
    s_outputs (self, n);
}

static void
s_deliver (shoal_sim_t *self, s_event_t *event)
{
    s_node_t *node = &self->nodes[event->node];
    if (!node->core) {
        self->stats.undeliverable++;
    } else if (node->paused) {
        //  The backlog is made when first needed: most nodes never pause.
        if (!node->backlog && self->config.backlog)
            node->backlog = calloc (self->config.backlog, sizeof (s_event_t));
        if (node->backlog && node->backlog_count < self->config.backlog) {
            node->backlog[node->backlog_count++] = *event;
            return; //  the backlog owns the data now
        }
        self->stats.undeliverable++;
    } else
        s_receive (self, event->node, event);
    free (event->data);
}

//  A paused node resumes: what waited in its socket first, then its late
//  timers.
static void
s_resume (shoal_sim_t *self, uint32_t n)
{
    s_node_t *node = &self->nodes[n];
    if (!node->paused)
        return;
    node->paused = false;
    node->tick_at = UINT64_MAX; //  a tick due in the pause was skipped
    for (uint32_t i = 0; i < node->backlog_count && node->core; i++)
        s_receive (self, n, &node->backlog[i]);
    s_drop_backlog (node);
    if (node->core) {
        if (node->elector) {
            shoal_elector_tick (node->elector, self->now);
            s_elector_outputs (self, n);
        }
        shoal_membership_tick (node->core, self->now);
        s_outputs (self, n);
    }
}

void
shoal_sim_run (shoal_sim_t *self, uint64_t until_ms)
{
    while (self->queue_count && self->queue[0].time <= until_ms) {
        s_event_t event = s_pop (self);
        if (event.time > self->now)
            self->now = event.time;
        s_node_t *node = &self->nodes[event.node];
        if (event.kind == S_DELIVER)
            s_deliver (self, &event);
        else if (event.kind == S_RESUME)
            s_resume (self, event.node);
        else if (node->core && !node->paused && event.gen == node->gen) {
            node->tick_at = UINT64_MAX;
            s_tick (self, event.node);
        }
    }
    if (until_ms > self->now)
        self->now = until_ms;
}

int
shoal_sim_start (shoal_sim_t *self, uint32_t n, uint32_t seed)
{
    if (n >= self->size || self->nodes[n].core)
        return -1;
    s_node_t *node = &self->nodes[n];
    node->incarnation++;
    node->life++;
    node->paused = false;
    char name[16];
    snprintf (name, sizeof name, "n%u", n);
    shoal_meta_t meta = { .name = name,
                          .addr = node->addr,
                          .life = node->life,
                          .priority = node->priority,
                          .capacity = 1 };
    shoal_id_t id;
    shoal_sim_id (n, &id);
    node->core = shoal_membership_new (&self->config.membership, &id, node->incarnation, &meta,
                                       splitmix_next (&self->random), self->now, self->metas);
    if (!node->core)
        return -1;
    if (self->config.election) {
        shoal_elector_saved_t saved = { node->term, node->leader, node->voters_version,
                                        node->voter_count, node->voters };
        node->elector = shoal_elector_new (&self->config.elector, &id, node->priority,
                                           node->saved ? &saved : NULL, self->now);
        if (!node->elector) {
            shoal_membership_destroy (&node->core);
            return -1;
        }
    }
    node->tick_at = UINT64_MAX;
    node->gen++;
    if (seed != SHOAL_SIM_NONE && seed < self->size && seed != n)
        shoal_membership_join (node->core, self->now, self->nodes[seed].addr);
    s_outputs (self, n);
    return 0;
}

void
shoal_sim_crash (shoal_sim_t *self, uint32_t n)
{
    if (n >= self->size)
        return;
    s_node_t *node = &self->nodes[n];
    //  The next life starts above every incarnation this one took (its
    //  refutations raised it): a real node persists it.
    if (node->core && shoal_membership_incarnation (node->core) > node->incarnation)
        node->incarnation = shoal_membership_incarnation (node->core);
    shoal_membership_destroy (&node->core);
    shoal_elector_destroy (&node->elector);
    s_drop_backlog (node);
    node->paused = false;
    node->tick_at = UINT64_MAX;
    node->gen++;
}

void
shoal_sim_leave (shoal_sim_t *self, uint32_t n)
{
    if (n < self->size && self->nodes[n].core && !self->nodes[n].paused) {
        shoal_membership_leave (self->nodes[n].core, self->now);
        s_outputs (self, n);
    }
}

void
shoal_sim_pause (shoal_sim_t *self, uint32_t n, uint64_t duration_ms)
{
    if (n >= self->size || !self->nodes[n].core || self->nodes[n].paused)
        return;
    self->nodes[n].paused = true;
    s_event_t resume = { .kind = S_RESUME, .node = n, .time = self->now + duration_ms };
    s_push (self, resume);
}

void
shoal_sim_set_priority (shoal_sim_t *self, uint32_t n, uint32_t priority)
{
    if (n < self->size)
        self->nodes[n].priority = priority;
}

void
shoal_sim_set_group (shoal_sim_t *self, uint32_t n, uint32_t group)
{
    if (n < self->size && group < SHOAL_SIM_GROUPS)
        self->nodes[n].group = group;
}

void
shoal_sim_block (shoal_sim_t *self, uint32_t from, uint32_t to, bool blocked)
{
    if (from < SHOAL_SIM_GROUPS && to < SHOAL_SIM_GROUPS)
        self->blocked[from][to] = blocked;
}

void
shoal_sim_set_loss (shoal_sim_t *self, uint32_t loss_ppm)
{
    self->config.loss_ppm = loss_ppm < 1000000 ? loss_ppm : 1000000;
}

bool
shoal_sim_reachable (const shoal_sim_t *self, uint32_t from, uint32_t to)
{
    return !self->blocked[self->nodes[from].group][self->nodes[to].group];
}

uint64_t
shoal_sim_now (const shoal_sim_t *self)
{
    return self->now;
}

uint32_t
shoal_sim_size (const shoal_sim_t *self)
{
    return self->size;
}

shoal_membership_t *
shoal_sim_node (const shoal_sim_t *self, uint32_t n)
{
    return n < self->size ? self->nodes[n].core : NULL;
}

shoal_elector_t *
shoal_sim_elector (const shoal_sim_t *self, uint32_t n)
{
    return n < self->size ? self->nodes[n].elector : NULL;
}

bool
shoal_sim_paused (const shoal_sim_t *self, uint32_t n)
{
    return n < self->size && self->nodes[n].paused;
}

void
shoal_sim_stats (const shoal_sim_t *self, shoal_sim_stats_t *stats)
{
    *stats = self->stats;
}

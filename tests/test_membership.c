/*  tests/test_membership.c: membership by SWIM and Lifeguard (gossip/membership.h).

    The state machines run in a small deterministic network: the tests'
    (tests/lib/net.h), which encodes and decodes every message by the real
    codec (wire/wire.h) on its carrier, and this file's virtual clock,
    fixed latency, seeded loss, partitions and crashes. Besides real nodes, the network has
   stand-ins that only answer PINGs, so that one node's timers can be checked to the millisecond.
   Nothing here reads a clock: time is what the network says.
*/

#include "gossip/membership.h"
#include "wire/splitmix.h"
#include "tests/test.h"
#include "tests/lib/net.h"

#include <sodium.h>
#include <stdlib.h>

#define NODES_MAX  64
#define LATENCY_MS 1

//  ---------------------------------------------------------------------
//  The network

typedef struct {
    uint64_t at;
    int observer;
    int subject; //  -1 when the member is not a node of the network
    uint8_t type;
    uint64_t incarnation;
} s_seen_t;

typedef struct {
    shoal_membership_t *core; //  NULL for a stand-in that only answers PINGs
    shoal_id_t id;
    uint64_t life;
    uint64_t incarnation; //  at start
    char addr[32];
    char name[16];
    int group; //  its side while the network is partitioned
    bool crashed;
    bool mute; //  everything it sends is lost
    bool deaf; //  everything sent to it is lost
    shoal_label_t labels[2];
    shoal_meta_t meta;
    char long_value[SHOAL_LABEL_MAX + 1];
} s_node_t;

typedef struct {
    shoal_membership_config_t config;
    s_node_t nodes[NODES_MAX];
    int count;
    uint64_t now;
    uint64_t seed;
    uint64_t rng;
    uint32_t loss_percent; //  of datagrams
    bool partitioned;
    bool drop_datagrams;
    test_net_t wire; //  every packet on its way, in order of arrival
    s_seen_t *seen;
    size_t seen_count, seen_capacity;
    crypto_generichash_state trace; //  every byte sent and every event
    shoal_metapool_t *metas;        //  shared by every node's core
    //  What went over the wire.
    uint64_t datagrams, frames;
    size_t datagram_size_max;
    uint32_t updates_per_datagram_max;
    //  Datagrams each node sent carrying the watched record.
    shoal_id_t watch;
    uint64_t watch_incarnation;
    uint8_t watch_state;
    uint32_t watched[NODES_MAX];
    uint32_t watched_to[NODES_MAX];      //  the same, by recipient
    uint32_t asked_about[NODES_MAX];     //  PING-REQs sent about each node
    uint32_t own_accusations[NODES_MAX]; //  datagrams carrying a suspicion by their sender
} s_net_t;

static shoal_id_t
s_node_id (int index)
{
    shoal_id_t id;
    for (int i = 0; i < SHOAL_ID_SIZE; i++)
        id.bytes[i] = (uint8_t) (0x40 + index * 7 + i * 13);
    id.bytes[0] = (uint8_t) (index + 1);
    return id;
}

static int
s_node_of (const s_net_t *net, const shoal_id_t *id)
{
    for (int i = 0; i < net->count; i++)
        if (memcmp (net->nodes[i].id.bytes, id->bytes, SHOAL_ID_SIZE) == 0)
            return i;
    return -1;
}

static shoal_life_t
s_life (const s_node_t *node)
{
    shoal_life_t life = { .life = node->life };
    memcpy (life.id, node->id.bytes, SHOAL_ID_SIZE);
    return life;
}

static s_net_t *
s_net_new (const shoal_membership_config_t *config, uint64_t seed)
{
    s_net_t *net = calloc (1, sizeof *net);
    net->config = *config;
    net->seed = seed;
    net->rng = seed ^ 0x5eed;
    crypto_generichash_init (&net->trace, NULL, 0, 32);
    CHECK_EQ (test_net_init (&net->wire), 0);
    net->metas = shoal_metapool_new (seed);
    CHECK (net->metas);
    return net;
}

static void
s_net_destroy (s_net_t **net_p)
{
    s_net_t *net = *net_p;
    for (int i = 0; i < net->count; i++)
        shoal_membership_destroy (&net->nodes[i].core);
    test_net_release (&net->wire);
    free (net->seen);
    //  Every core gave back every meta it held.
    CHECK_EQ (shoal_metapool_size (net->metas), 0);
    shoal_metapool_destroy (&net->metas);
    free (net);
    *net_p = NULL;
}

static void
s_meta_fill (s_node_t *node, int index)
{
    snprintf (node->name, sizeof node->name, "n%d", index);
    snprintf (node->addr, sizeof node->addr, "10.0.%d.%d:7946", index / 200, index % 200 + 1);
    node->labels[0] = (shoal_label_t){ "zone", index % 2 ? "a" : "b" };
    node->meta = (shoal_meta_t){ .name = node->name,
                                 .addr = node->addr,
                                 .life = node->life,
                                 .capacity = 1,
                                 .label_count = 1,
                                 .labels = node->labels };
}

//  Adds a node (a stand-in when real is false) and returns its index.
static int
s_net_add (s_net_t *net, bool real)
{
    int index = net->count++;
    s_node_t *node = &net->nodes[index];
    memset (node, 0, sizeof *node);
    node->id = s_node_id (index);
    node->life = 1;
    node->incarnation = 1;
    s_meta_fill (node, index);
    if (real) {
        node->core =
            shoal_membership_new (&net->config, &node->id, node->incarnation, &node->meta,
                                  net->seed * 1000 + (uint64_t) index, net->now, net->metas);
        CHECK (node->core != NULL);
    }
    return index;
}

//  The updates a datagram carries, into *updates; returns how many.
static uint32_t
s_updates (const shoal_msg_t *msg, const shoal_update_t **updates)
{
    *updates = msg->u.ping.updates;
    uint32_t count = msg->u.ping.update_count;
    if (msg->type == SHOAL_MSG_ACK || msg->type == SHOAL_MSG_NACK) {
        *updates = msg->u.ack.updates;
        count = msg->u.ack.update_count;
    } else if (msg->type == SHOAL_MSG_PING_REQ) {
        *updates = msg->u.ping_req.updates;
        count = msg->u.ping_req.update_count;
    }
    return count;
}

//  Whether a datagram tells a suspicion raised by id.
static bool
s_accuses_by (const shoal_msg_t *msg, const shoal_id_t *id)
{
    const shoal_update_t *updates;
    uint32_t count = s_updates (msg, &updates);
    for (uint32_t i = 0; i < count; i++)
        if (updates[i].state == SHOAL_MEMBER_SUSPECT &&
            memcmp (updates[i].by.bytes, id->bytes, SHOAL_ID_SIZE) == 0)
            return true;
    return false;
}

static bool
s_watched (const s_net_t *net, const shoal_msg_t *msg)
{
    const shoal_update_t *updates;
    uint32_t count = s_updates (msg, &updates);
    for (uint32_t i = 0; i < count; i++)
        if (memcmp (updates[i].node.bytes, net->watch.bytes, SHOAL_ID_SIZE) == 0 &&
            updates[i].incarnation == net->watch_incarnation &&
            updates[i].state == net->watch_state)
            return true;
    return false;
}

static uint32_t
s_update_count (const shoal_msg_t *msg)
{
    switch (msg->type) {
    case SHOAL_MSG_PING:
        return msg->u.ping.update_count;
    case SHOAL_MSG_PING_REQ:
        return msg->u.ping_req.update_count;
    default:
        return msg->u.ack.update_count;
    }
}

//  Takes a node's outputs: encodes every message with the real codec, and
//  queues what the network lets through; logs and traces every event.
static void
s_collect (s_net_t *net, int from)
{
    s_node_t *node = &net->nodes[from];
    const shoal_membership_event_t *events;
    size_t event_count = shoal_membership_events (node->core, &events);
    for (size_t i = 0; i < event_count; i++) {
        if (net->seen_count == net->seen_capacity) {
            net->seen_capacity = net->seen_capacity ? net->seen_capacity * 2 : 1024;
            net->seen = realloc (net->seen, net->seen_capacity * sizeof (s_seen_t));
        }
        net->seen[net->seen_count++] = (s_seen_t){ net->now, from, s_node_of (net, &events[i].node),
                                                   events[i].type, events[i].incarnation };
        CHECK (events[i].meta != NULL);
        //  Field by field: the struct's padding is not part of the trace.
        const s_seen_t *seen = &net->seen[net->seen_count - 1];
        crypto_generichash_update (&net->trace, (const uint8_t *) &seen->at, sizeof seen->at);
        crypto_generichash_update (&net->trace, (const uint8_t *) &seen->observer,
                                   sizeof seen->observer);
        crypto_generichash_update (&net->trace, (const uint8_t *) &seen->subject,
                                   sizeof seen->subject);
        crypto_generichash_update (&net->trace, &seen->type, sizeof seen->type);
        crypto_generichash_update (&net->trace, (const uint8_t *) &seen->incarnation,
                                   sizeof seen->incarnation);
    }
    const shoal_membership_send_t *sends;
    size_t send_count = shoal_membership_outbox (node->core, &sends);
    for (size_t i = 0; i < send_count; i++) {
        const shoal_msg_t *msg = &sends[i].msg;
        long size = test_net_encode (&net->wire, msg);
        const uint8_t *buffer = net->wire.buffer;
        CHECK (size > 0);
        if (size <= 0)
            continue;
        CHECK (size <= (long) shoal_msg_size_max (msg->type));
        shoal_purpose_t carrier = shoal_msg_purpose (msg->type);
        crypto_generichash_update (&net->trace, buffer, (size_t) size);
        crypto_generichash_update (&net->trace, (const uint8_t *) sends[i].addr,
                                   strlen (sends[i].addr));
        if (carrier == SHOAL_PURPOSE_DATAGRAM) {
            net->datagrams++;
            if ((size_t) size > net->datagram_size_max)
                net->datagram_size_max = (size_t) size;
            if (s_update_count (msg) > net->updates_per_datagram_max)
                net->updates_per_datagram_max = s_update_count (msg);
            if (s_watched (net, msg))
                net->watched[from]++;
            if (s_accuses_by (msg, &node->id))
                net->own_accusations[from]++;
        } else
            net->frames++;
        int to = -1;
        for (int j = 0; j < net->count; j++)
            if (strcmp (net->nodes[j].addr, sends[i].addr) == 0)
                to = j;
        if (to >= 0 && carrier == SHOAL_PURPOSE_DATAGRAM && s_watched (net, msg))
            net->watched_to[to]++;
        if (msg->type == SHOAL_MSG_PING_REQ) {
            int target = s_node_of (net, &msg->u.ping_req.target);
            if (target >= 0)
                net->asked_about[target]++;
        }
        bool lost = to < 0 || node->mute || net->nodes[to].deaf ||
                    (net->partitioned && net->nodes[to].group != node->group) ||
                    (carrier == SHOAL_PURPOSE_DATAGRAM &&
                     (net->drop_datagrams || splitmix_next (&net->rng) % 100 < net->loss_percent));
        if (lost)
            continue;
        test_packet_t packet = { .at = net->now + LATENCY_MS,
                                 .from = from,
                                 .to = to,
                                 .carrier = carrier,
                                 .size = (size_t) size };
        packet.envelope.purpose = (uint8_t) carrier;
        packet.envelope.sender = s_life (node);
        packet.envelope.recipient = sends[i].to;
        CHECK_EQ (test_net_push (&net->wire, &packet, buffer), 0);
    }
}

//  A stand-in answers a PING for it with an empty ACK.
static void
s_stand_in (s_net_t *net, int index, const shoal_envelope_t *envelope, const shoal_msg_t *msg)
{
    s_node_t *node = &net->nodes[index];
    if (msg->type != SHOAL_MSG_PING || node->mute)
        return;
    shoal_id_t sender;
    memcpy (sender.bytes, envelope->sender.id, SHOAL_ID_SIZE);
    int to = s_node_of (net, &sender);
    if (to < 0 || net->nodes[to].deaf)
        return;
    shoal_msg_t ack = { .type = SHOAL_MSG_ACK };
    ack.u.ack.seq = msg->u.ping.seq;
    test_packet_t packet = { .at = net->now + LATENCY_MS, .from = index, .to = to };
    packet.envelope.purpose = SHOAL_PURPOSE_DATAGRAM;
    packet.envelope.sender = s_life (node);
    packet.envelope.recipient = envelope->sender;
    CHECK (test_net_send (&net->wire, &packet, &ack) > 0);
}

//  Delivers one packet as the shell would: the envelope checks of the
//  opener, then the real decoder on the packet's carrier.
static void
s_deliver (s_net_t *net, const test_packet_t *packet)
{
    s_node_t *node = &net->nodes[packet->to];
    const shoal_envelope_t *envelope = &packet->envelope;
    bool addressed = envelope->recipient.life != 0;
    bool for_this_life =
        !addressed || (memcmp (envelope->recipient.id, node->id.bytes, SHOAL_ID_SIZE) == 0 &&
                       envelope->recipient.life == node->life);
    if (node->crashed || !for_this_life)
        return;
    const shoal_msg_t *msg = test_net_decode (&net->wire, packet);
    CHECK (msg != NULL);
    if (!msg)
        return;
    if (!node->core) {
        s_stand_in (net, packet->to, envelope, msg);
        return;
    }
    const char *from_addr =
        packet->carrier == SHOAL_PURPOSE_DATAGRAM ? net->nodes[packet->from].addr : NULL;
    shoal_membership_receive (node->core, net->now, envelope, msg, from_addr);
    s_collect (net, packet->to);
}

static bool
s_runs (const s_node_t *node)
{
    return node->core && !node->crashed;
}

//  Runs the network until time until: packets in order of arrival, each
//  node ticked when it asked to be.
static void
s_run_until (s_net_t *net, uint64_t until)
{
    int spins = 0;
    for (;;) {
        uint64_t t = test_net_next (&net->wire);
        for (int i = 0; i < net->count; i++)
            if (s_runs (&net->nodes[i]))
                t = t < shoal_membership_next (net->nodes[i].core)
                        ? t
                        : shoal_membership_next (net->nodes[i].core);
        if (t > until)
            break;
        spins = t == net->now ? spins + 1 : 0;
        CHECK (spins < 100000); //  a node that asks for a tick now forever
        if (spins >= 100000)
            break;
        net->now = t > net->now ? t : net->now;
        test_packet_t packet;
        while (test_net_pop (&net->wire, net->now, &packet)) {
            s_deliver (net, &packet);
            test_packet_free (&packet);
        }
        for (int i = 0; i < net->count; i++)
            if (s_runs (&net->nodes[i]) && shoal_membership_next (net->nodes[i].core) <= net->now) {
                shoal_membership_tick (net->nodes[i].core, net->now);
                s_collect (net, i);
            }
    }
    net->now = until;
}

//  Delivers msg to node to as if from node from, now, through the codec.
static int
s_inject (s_net_t *net, int from, int to, const shoal_msg_t *msg)
{
    long size = test_net_encode (&net->wire, msg);
    CHECK (size > 0);
    test_packet_t packet = { .carrier = shoal_msg_purpose (msg->type),
                             .size = size > 0 ? (size_t) size : 0,
                             .bytes = net->wire.buffer };
    const shoal_msg_t *decoded = test_net_decode (&net->wire, &packet);
    CHECK (decoded != NULL);
    if (!decoded)
        return -1;
    shoal_envelope_t envelope = { .purpose = (uint8_t) packet.carrier };
    envelope.sender = s_life (&net->nodes[from]);
    envelope.recipient = s_life (&net->nodes[to]);
    int rc = shoal_membership_receive (net->nodes[to].core, net->now, &envelope, decoded,
                                       net->nodes[from].addr);
    s_collect (net, to);
    return rc;
}

//  An update about node index, alive ones with its meta.
static shoal_update_t
s_update (s_net_t *net, int index, uint8_t state, uint64_t incarnation, int by)
{
    shoal_update_t update = { .node = net->nodes[index].id,
                              .incarnation = incarnation,
                              .state = state };
    if (by >= 0)
        update.by = net->nodes[by].id;
    if (state == SHOAL_MEMBER_ALIVE)
        update.meta = &net->nodes[index].meta;
    return update;
}

//  Gives node to the alive records of the given nodes, in a SYNC-REPLY from
//  node from, as if they had been in the cluster all along.
static void
s_teach (s_net_t *net, int from, int to, const int *indexes, int count)
{
    shoal_update_t updates[NODES_MAX];
    for (int i = 0; i < count; i++)
        updates[i] =
            s_update (net, indexes[i], SHOAL_MEMBER_ALIVE, net->nodes[indexes[i]].incarnation, -1);
    shoal_msg_t msg = { .type = SHOAL_MSG_SYNC_REPLY };
    msg.u.sync_reply.parts = SHOAL_SYNC_MEMBERS;
    msg.u.sync_reply.members = updates;
    msg.u.sync_reply.member_count = (uint32_t) count;
    s_inject (net, from, to, &msg);
}

//  The state node observer holds for node subject, or -1 if it holds none.
static int
s_state (const s_net_t *net, int observer, int subject)
{
    shoal_membership_member_t member;
    if (shoal_membership_member (net->nodes[observer].core, &net->nodes[subject].id, &member))
        return -1;
    return member.state;
}

static uint64_t
s_incarnation (const s_net_t *net, int observer, int subject)
{
    shoal_membership_member_t member;
    if (shoal_membership_member (net->nodes[observer].core, &net->nodes[subject].id, &member))
        return 0;
    return member.incarnation;
}

//  A node's digest at the finest granularity: equal tables, equal digests.
typedef struct {
    uint32_t count;
    uint64_t sums[SHOAL_DIGEST_BUCKETS_MAX];
} s_digest_t;

static s_digest_t
s_digest (const s_net_t *net, int node)
{
    s_digest_t digest;
    CHECK_EQ (shoal_membership_digest (net->nodes[node].core, SHOAL_DIGEST_BUCKETS_MAX,
                                       &digest.count, digest.sums),
              0);
    return digest;
}

static bool
s_digest_equal (const s_digest_t *a, const s_digest_t *b)
{
    return a->count == b->count && memcmp (a->sums, b->sums, sizeof a->sums) == 0;
}

//  True when every running node holds every node of the network, running
//  ones alive, and nothing else, and all their digests agree.
static bool
s_converged (s_net_t *net)
{
    s_digest_t first_digest;
    bool first = true;
    for (int i = 0; i < net->count; i++) {
        if (!s_runs (&net->nodes[i]))
            continue;
        size_t live = 0;
        for (int j = 0; j < net->count; j++) {
            int state = s_state (net, i, j);
            if (s_runs (&net->nodes[j]) || !net->nodes[j].core) {
                if (state != SHOAL_MEMBER_ALIVE)
                    return false;
                live++;
            }
        }
        if (shoal_membership_live (net->nodes[i].core) != live)
            return false;
        s_digest_t digest = s_digest (net, i);
        if (first) {
            first_digest = digest;
            first = false;
        } else if (!s_digest_equal (&digest, &first_digest))
            return false;
    }
    return true;
}

//  Runs until converged, in steps of step_ms, for at most limit_ms.
//  Returns the time it took, or UINT64_MAX.
static uint64_t
s_run_until_converged (s_net_t *net, uint64_t step_ms, uint64_t limit_ms)
{
    uint64_t start = net->now;
    while (net->now - start < limit_ms) {
        s_run_until (net, net->now + step_ms);
        if (s_converged (net))
            return net->now - start;
    }
    return UINT64_MAX;
}

//  How many events of type observer had about subject (-1: any observer).
static int
s_seen (const s_net_t *net, int observer, uint8_t type, int subject)
{
    int count = 0;
    for (size_t i = 0; i < net->seen_count; i++)
        if ((observer < 0 || net->seen[i].observer == observer) && net->seen[i].type == type &&
            net->seen[i].subject == subject)
            count++;
    return count;
}

static uint64_t
s_seen_at (const s_net_t *net, int observer, uint8_t type, int subject)
{
    for (size_t i = 0; i < net->seen_count; i++)
        if (net->seen[i].observer == observer && net->seen[i].type == type &&
            net->seen[i].subject == subject)
            return net->seen[i].at;
    return UINT64_MAX;
}

//  A cluster of count real nodes that joined through node 0, converged.
static s_net_t *
s_cluster (const shoal_membership_config_t *config, int count, uint64_t seed)
{
    s_net_t *net = s_net_new (config, seed);
    for (int i = 0; i < count; i++)
        s_net_add (net, true);
    for (int i = 1; i < count; i++) {
        CHECK_EQ (shoal_membership_join (net->nodes[i].core, net->now, net->nodes[0].addr), 0);
        s_collect (net, i);
    }
    CHECK (s_run_until_converged (net, 100, 60000) != UINT64_MAX);
    return net;
}

static shoal_membership_config_t
s_loopback (void)
{
    shoal_membership_config_t config;
    shoal_membership_config_loopback (&config);
    return config;
}

//  A real node 0 and count stand-ins it knows as alive.
static s_net_t *
s_solo (const shoal_membership_config_t *config, int count, uint64_t seed)
{
    s_net_t *net = s_net_new (config, seed);
    s_net_add (net, true);
    int indexes[NODES_MAX];
    for (int i = 0; i < count; i++)
        indexes[i] = s_net_add (net, false);
    s_teach (net, 1, 0, indexes, count);
    CHECK_EQ (shoal_membership_live (net->nodes[0].core), (size_t) count + 1);
    return net;
}

static void
s_suspect (s_net_t *net, int subject, int by)
{
    shoal_update_t update = s_update (net, subject, SHOAL_MEMBER_SUSPECT, 1, by);
    shoal_msg_t ack = { .type = SHOAL_MSG_ACK };
    ack.u.ack.updates = &update;
    ack.u.ack.update_count = 1;
    s_inject (net, by, 0, &ack);
}

static void
suspicion_timeout_follows_the_formula (void)
{
    shoal_membership_config_t config = s_loopback ();
    //  Nobody confirms: dead after the maximum.
    s_net_t *net = s_solo (&config, 9, 12);
    uint64_t start = net->now;
    s_suspect (net, 3, 1);
    CHECK_EQ (s_state (net, 0, 3), SHOAL_MEMBER_SUSPECT);
    CHECK_EQ (s_seen (net, 0, SHOAL_MEMBERSHIP_SUSPECT, 3), 1);
    s_run_until (net, start + 10000);
    CHECK_EQ (s_seen_at (net, 0, SHOAL_MEMBERSHIP_DEAD, 3) - start,
              shoal_membership_suspicion_ms (&config, 10, 0));
    s_net_destroy (&net);

    //  One confirmation: log-scaled in between.
    net = s_solo (&config, 9, 12);
    start = net->now;
    s_suspect (net, 3, 1);
    s_run_until (net, start + 100);
    s_suspect (net, 3, 2);
    s_suspect (net, 3, 2); //  the same accuser twice counts once
    s_run_until (net, start + 10000);
    CHECK_EQ (s_seen_at (net, 0, SHOAL_MEMBERSHIP_DEAD, 3) - start,
              shoal_membership_suspicion_ms (&config, 10, 1));
    s_net_destroy (&net);

    //  k = 3 confirmations: the minimum, counted from the start.
    net = s_solo (&config, 9, 12);
    start = net->now;
    s_suspect (net, 3, 1);
    s_run_until (net, start + 100);
    s_suspect (net, 3, 2);
    s_suspect (net, 3, 4);
    s_suspect (net, 3, 5);
    s_run_until (net, start + 10000);
    CHECK_EQ (s_seen_at (net, 0, SHOAL_MEMBERSHIP_DEAD, 3) - start,
              shoal_membership_suspicion_ms (&config, 10, 3));
    CHECK_EQ (shoal_membership_suspicion_ms (&config, 10, 3), 200);
    s_net_destroy (&net);

    //  Refuted in time: never dead.
    net = s_solo (&config, 9, 12);
    start = net->now;
    s_suspect (net, 3, 1);
    s_run_until (net, start + 200);
    shoal_update_t alive = s_update (net, 3, SHOAL_MEMBER_ALIVE, 2, -1);
    shoal_msg_t ack = { .type = SHOAL_MSG_ACK };
    ack.u.ack.updates = &alive;
    ack.u.ack.update_count = 1;
    s_inject (net, 3, 0, &ack);
    s_run_until (net, start + 10000);
    CHECK_EQ (s_seen (net, 0, SHOAL_MEMBERSHIP_DEAD, 3), 0);
    CHECK_EQ (s_seen (net, 0, SHOAL_MEMBERSHIP_UP, 3), 2); //  joined, then back
    CHECK_EQ (s_state (net, 0, 3), SHOAL_MEMBER_ALIVE);
    s_net_destroy (&net);
}

static void
probes_go_round_robin_and_indirect_on_silence (void)
{
    shoal_membership_config_t config = s_loopback ();
    s_net_t *net = s_solo (&config, 6, 13);
    shoal_membership_stats_t before, after;
    shoal_membership_rtt_t rtt_before, rtt_after;
    shoal_membership_stats (net->nodes[0].core, &before);
    shoal_membership_rtt (net->nodes[0].core, &rtt_before);
    //  Six rounds of six probes: each stand-in probed every round.
    uint64_t start = net->now;
    s_run_until (net, start + 36 * config.probe_interval_ms);
    shoal_membership_stats (net->nodes[0].core, &after);
    CHECK (after.probes - before.probes >= 35 && after.probes - before.probes <= 37);
    CHECK_EQ (after.probes_failed, 0);
    CHECK_EQ (shoal_membership_health (net->nodes[0].core), 0);
    //  Each probe's ACK came straight back, one latency each way: its
    //  round trip is counted, in the bucket of 2 ms.
    shoal_membership_rtt (net->nodes[0].core, &rtt_after);
    uint64_t probed = after.probes - before.probes;
    CHECK_EQ (rtt_after.count - rtt_before.count, probed);
    CHECK_EQ (rtt_after.sum_ms - rtt_before.sum_ms, probed * 2 * LATENCY_MS);
    CHECK_EQ (shoal_membership_rtt_bounds_ms[1], 2 * LATENCY_MS);
    CHECK_EQ (rtt_after.buckets[1] - rtt_before.buckets[1], probed);

    //  A silent member: PING-REQs go to the others, who answer nothing here
    //  (stand-ins only ACK), so no NACK comes, the member becomes suspect,
    //  and this node blames its own health for the missing NACKs.
    net->nodes[2].mute = true;
    s_run_until (net, net->now + 6 * config.probe_interval_ms);
    CHECK_EQ (s_state (net, 0, 2), SHOAL_MEMBER_SUSPECT);
    shoal_membership_stats (net->nodes[0].core, &after);
    CHECK_EQ (after.probes_failed, 1);
    CHECK_EQ (shoal_membership_health (net->nodes[0].core), config.indirect_checks - 1);
    //  The silent member's probes got no ACK: no round trip for them.
    shoal_membership_rtt (net->nodes[0].core, &rtt_before);
    CHECK (rtt_before.count - rtt_after.count < after.probes - probed - before.probes);
    s_net_destroy (&net);
}

//  ---------------------------------------------------------------------
//  Configuration and formulas

static void
profiles_are_valid_and_bad_configs_say_why (void)
{
    shoal_membership_config_t lan, loopback, wan;
    shoal_membership_config_lan (&lan);
    shoal_membership_config_loopback (&loopback);
    shoal_membership_config_wan (&wan);
    CHECK (shoal_membership_config_check (&lan) == NULL);
    CHECK (shoal_membership_config_check (&loopback) == NULL);
    CHECK (shoal_membership_config_check (&wan) == NULL);
    CHECK_EQ (wan.probe_interval_ms, 5 * lan.probe_interval_ms);
    CHECK_EQ (wan.probe_timeout_ms, 5 * lan.probe_timeout_ms);
    CHECK_EQ (wan.gossip_interval_ms, 5 * lan.gossip_interval_ms);
    CHECK_EQ (wan.sync_interval_ms, 5 * lan.sync_interval_ms);
    CHECK_EQ (wan.suspicion_mult, lan.suspicion_mult); //  counted in probe intervals
    CHECK_EQ (lan.probe_interval_ms, 1000);
    CHECK_EQ (lan.probe_timeout_ms, 400);
    CHECK_EQ (lan.suspicion_mult, 2);
    CHECK_EQ (loopback.probe_timeout_ms, 50); //  not a tenth: loaded test machines
    CHECK_EQ (lan.gossip_interval_ms, 200);
    CHECK_EQ (lan.gossip_fanout, 3);
    CHECK_EQ (loopback.probe_interval_ms * 10, lan.probe_interval_ms);
    CHECK_EQ (loopback.gossip_interval_ms * 10, lan.gossip_interval_ms);

    shoal_membership_config_t bad = lan;
    bad.probe_timeout_ms = bad.probe_interval_ms;
    CHECK_CONTAINS (shoal_membership_config_check (&bad), "probe_timeout_ms");
    bad = lan;
    bad.gossip_fanout = 0;
    CHECK_CONTAINS (shoal_membership_config_check (&bad), "gossip_fanout");
    bad = lan;
    bad.members_max = SHOAL_MEMBERS_MAX + 1;
    CHECK_CONTAINS (shoal_membership_config_check (&bad), "members_max");
    bad = lan;
    bad.meta_size_max = SHOAL_MEMBERSHIP_META_MAX + 1;
    CHECK_CONTAINS (shoal_membership_config_check (&bad), "meta_size_max");
    CHECK (shoal_membership_config_check (NULL) != NULL);

    shoal_id_t id = s_node_id (1);
    shoal_meta_t meta = { .name = "x", .addr = "10.0.0.1:7946", .life = 1 };
    CHECK (shoal_membership_new (&bad, &id, 1, &meta, 1, 0, NULL) == NULL);
}

static void
suspicion_shrinks_with_confirmations_scaled_by_log_n (void)
{
    shoal_membership_config_t lan;
    shoal_membership_config_lan (&lan);
    //  Up to 10 members log10 counts as 1: min 2 s, max 12 s, k = 3.
    CHECK_EQ (shoal_membership_suspicion_ms (&lan, 10, 3), 2000);
    CHECK_EQ (shoal_membership_suspicion_ms (&lan, 10, 0), 12000);
    //  12 - 10 * log 2 / log 4 = 7 s.
    uint64_t one = shoal_membership_suspicion_ms (&lan, 10, 1);
    CHECK (one >= 6998 && one <= 7002);
    //  1,000 members: min = 2 * 3 * 1 s, max = 6 * min; more confirmations
    //  than k change nothing.
    uint64_t min = shoal_membership_suspicion_ms (&lan, 1000, 3);
    CHECK (min >= 5995 && min <= 6000);
    CHECK_EQ (shoal_membership_suspicion_ms (&lan, 1000, 7), min);
    CHECK_EQ (shoal_membership_suspicion_ms (&lan, 1000, 0), 6 * min);
    //  Too few members to confirm (fewer than k + 2): k = 0, the timeout is
    //  the minimum.
    CHECK_EQ (shoal_membership_suspicion_ms (&lan, 4, 0), 2000);
    //  Never below the minimum, never rising with more members.
    uint64_t last = 0;
    for (size_t n = 1; n <= SHOAL_MEMBERS_MAX; n = n * 3 + 1) {
        uint64_t at = shoal_membership_suspicion_ms (&lan, n, 0);
        CHECK (at >= last);
        last = at;
    }
    //  lambda * ceil (log10 (N + 1)).
    CHECK_EQ (shoal_membership_retransmits (&lan, 1), 4);
    CHECK_EQ (shoal_membership_retransmits (&lan, 9), 4);
    CHECK_EQ (shoal_membership_retransmits (&lan, 10), 8);
    CHECK_EQ (shoal_membership_retransmits (&lan, 1000), 16);
}

static void
meta_is_checked_and_deep_copied (void)
{
    shoal_membership_config_t config = s_loopback ();
    char name[SHOAL_NAME_MAX + 2];
    memset (name, 'x', sizeof name - 1);
    name[sizeof name - 1] = '\0';
    shoal_meta_t meta = { .name = name, .addr = "10.0.0.1:7946", .life = 1 };
    CHECK_CONTAINS (shoal_membership_meta_check (&config, &meta), "wire limit");
    meta.name = "ok";
    meta.life = 0;
    CHECK_CONTAINS (shoal_membership_meta_check (&config, &meta), "life");
    meta.life = 1;
    meta.addr = "";
    CHECK_CONTAINS (shoal_membership_meta_check (&config, &meta), "addr");
    meta.addr = "10.0.0.1:7946";
    shoal_label_t labels[SHOAL_LABELS_MAX];
    static char values[SHOAL_LABELS_MAX][SHOAL_LABEL_MAX + 1];
    static char keys[SHOAL_LABELS_MAX][8];
    for (int i = 0; i < SHOAL_LABELS_MAX; i++) {
        snprintf (keys[i], sizeof keys[i], "k%d", i);
        memset (values[i], 'v', SHOAL_LABEL_MAX);
        labels[i] = (shoal_label_t){ keys[i], values[i] };
    }
    meta.labels = labels;
    meta.label_count = SHOAL_LABELS_MAX; //  over 1 kB: within the wire, over meta_size_max
    CHECK_CONTAINS (shoal_membership_meta_check (&config, &meta), "meta_size_max");
    meta.label_count = 2;
    CHECK (shoal_membership_meta_check (&config, &meta) == NULL);

    //  The caller's strings may change after new: the node keeps its copy.
    char addr[] = "10.0.0.9:7946";
    meta.addr = addr;
    shoal_id_t id = s_node_id (9);
    shoal_membership_t *core = shoal_membership_new (&config, &id, 1, &meta, 1, 0, NULL);
    addr[0] = '9';
    values[0][0] = 'w';
    shoal_membership_member_t me;
    CHECK_EQ (shoal_membership_member (core, &id, &me), 0);
    CHECK_STR (me.meta->addr, "10.0.0.9:7946");
    CHECK_EQ (me.meta->labels[0].value[0], 'v');
    CHECK_EQ (me.state, SHOAL_MEMBER_ALIVE);
    CHECK_EQ (shoal_membership_size (core), 1);
    CHECK_EQ (shoal_membership_live (core), 1);
    shoal_membership_destroy (&core);
    shoal_membership_destroy (&core);
    CHECK (core == NULL);
    CHECK (shoal_membership_new (&config, &(shoal_id_t){ 0 }, 1, &meta, 1, 0, NULL) == NULL);
}

//  ---------------------------------------------------------------------
//  Joining and convergence

static void
a_lone_node_waits_quietly (void)
{
    s_net_t *net = s_net_new (&(shoal_membership_config_t){ 0 }, 1);
    net->config = s_loopback ();
    int a = s_net_add (net, true);
    s_run_until (net, 10000);
    CHECK_EQ (net->datagrams + net->frames, 0);
    CHECK_EQ (shoal_membership_size (net->nodes[a].core), 1);
    //  It still wakes up, but only at the pace of its timers.
    CHECK (shoal_membership_next (net->nodes[a].core) > net->now);
    s_net_destroy (&net);
}

static void
three_nodes_join_through_one_seed (void)
{
    shoal_membership_config_t config = s_loopback ();
    s_net_t *net = s_net_new (&config, 3);
    for (int i = 0; i < 3; i++)
        s_net_add (net, true);
    CHECK_EQ (shoal_membership_join (net->nodes[1].core, 0, net->nodes[0].addr), 0);
    s_collect (net, 1);
    CHECK_EQ (shoal_membership_join (net->nodes[2].core, 0, net->nodes[0].addr), 0);
    s_collect (net, 2);
    //  The seed is pinged unaddressed, with the joiner's own record.
    CHECK (net->wire.queued == 2);
    CHECK_EQ (test_net_first (&net->wire)->envelope.recipient.life, 0);
    uint64_t took = s_run_until_converged (net, 10, 10000);
    CHECK (took <= 1000); //  ten probe intervals
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            if (i != j)
                CHECK_EQ (s_seen (net, i, SHOAL_MEMBERSHIP_UP, j), 1);
    //  Nobody was ever suspected.
    for (int j = 0; j < 3; j++)
        CHECK_EQ (s_seen (net, -1, SHOAL_MEMBERSHIP_SUSPECT, j), 0);
    s_net_destroy (&net);
}

//  The first ACK of the seed is a first contact: the digests differ, and
//  the SYNC-REPLY brings the whole table at once, long before gossip could.
static void
first_contact_pulls_the_whole_table (void)
{
    shoal_membership_config_t config = s_loopback ();
    s_net_t *net = s_cluster (&config, 8, 4);
    int joiner = s_net_add (net, true);
    shoal_membership_join (net->nodes[joiner].core, net->now, net->nodes[0].addr);
    s_collect (net, joiner);
    uint64_t start = net->now;
    //  ping, ack, digest, sync-reply: four hops.
    s_run_until (net, start + 4 * LATENCY_MS);
    CHECK_EQ (shoal_membership_size (net->nodes[joiner].core), 9);
    CHECK_EQ (s_seen (net, joiner, SHOAL_MEMBERSHIP_UP, -1), 0);
    for (int j = 0; j < 8; j++)
        CHECK_EQ (s_state (net, joiner, j), SHOAL_MEMBER_ALIVE);
    CHECK (s_run_until_converged (net, 10, 5000) != UINT64_MAX);
    s_net_destroy (&net);
}

//  Nodes join one per gossip round, so that the early ones learn of the
//  later ones by gossip, not only from the seed's table at first contact.
static void
fifty_nodes_join_through_one_seed_and_converge (void)
{
    shoal_membership_config_t config = s_loopback ();
    s_net_t *net = s_net_new (&config, 50);
    s_net_add (net, true);
    for (int i = 1; i < 50; i++) {
        s_run_until (net, net->now + config.gossip_interval_ms);
        int joiner = s_net_add (net, true);
        shoal_membership_join (net->nodes[joiner].core, net->now, net->nodes[0].addr);
        s_collect (net, joiner);
    }
    uint64_t took = s_run_until_converged (net, config.gossip_interval_ms, 30000);
    //  Within 10 probe intervals (50 gossip rounds) of the last join.
    CHECK (took <= 10 * config.probe_interval_ms);
    for (int i = 0; i < 50; i++)
        CHECK_EQ (s_seen (net, -1, SHOAL_MEMBERSHIP_DEAD, i), 0);
    //  Piggybacking filled datagrams but never past the limit (s_collect
    //  checks every message against shoal_msg_size_max).
    CHECK (net->updates_per_datagram_max > 4);
    CHECK (net->datagram_size_max <= shoal_msg_size_max (SHOAL_MSG_PING));

    //  One more joins a stable cluster of 50: every node knows it within a
    //  dozen gossip rounds.
    int late = s_net_add (net, true);
    shoal_membership_join (net->nodes[late].core, net->now, net->nodes[0].addr);
    s_collect (net, late);
    uint64_t start = net->now;
    int rounds = 0;
    for (bool all = false; !all && rounds < 100; rounds++) {
        s_run_until (net, net->now + config.gossip_interval_ms);
        all = true;
        for (int i = 0; i < 50; i++)
            all = all && s_state (net, i, late) == SHOAL_MEMBER_ALIVE;
    }
    CHECK (rounds <= 12);
    CHECK (net->now - start <= 12 * config.gossip_interval_ms);
    s_net_destroy (&net);
}

//  ---------------------------------------------------------------------
//  Failure detection

static void
a_crashed_node_is_suspected_then_dead_everywhere (void)
{
    shoal_membership_config_t config = s_loopback ();
    s_net_t *net = s_cluster (&config, 8, 5);
    int victim = 3;
    net->nodes[victim].crashed = true;
    uint64_t crash = net->now;
    //  Detection, at most max suspicion (2.4 s at 8 nodes), dissemination.
    s_run_until (net, crash + 5000);
    for (int i = 0; i < 8; i++) {
        if (i == victim)
            continue;
        CHECK_EQ (s_state (net, i, victim), SHOAL_MEMBER_DEAD);
        CHECK_EQ (s_seen (net, i, SHOAL_MEMBERSHIP_DEAD, victim), 1);
        //  Those who saw it suspect saw that first.
        CHECK (s_seen_at (net, i, SHOAL_MEMBERSHIP_SUSPECT, victim) <=
               s_seen_at (net, i, SHOAL_MEMBERSHIP_DEAD, victim));
        for (int j = 0; j < 8; j++)
            if (j != victim)
                CHECK_EQ (s_state (net, i, j), SHOAL_MEMBER_ALIVE);
    }
    CHECK (s_seen (net, -1, SHOAL_MEMBERSHIP_SUSPECT, victim) > 0);
    for (int j = 0; j < 8; j++)
        if (j != victim)
            CHECK_EQ (s_seen (net, -1, SHOAL_MEMBERSHIP_DEAD, j), 0);
    s_net_destroy (&net);
}

static void
a_falsely_suspected_node_refutes_and_stays_alive (void)
{
    shoal_membership_config_t config = s_loopback ();
    s_net_t *net = s_cluster (&config, 8, 6);
    int accused = 5;
    uint64_t before = shoal_membership_incarnation (net->nodes[accused].core);
    shoal_update_t suspect = s_update (net, accused, SHOAL_MEMBER_SUSPECT, before, 1);
    shoal_msg_t ping = { .type = SHOAL_MSG_PING };
    ping.u.ping.seq = 77;
    ping.u.ping.target = net->nodes[0].id;
    ping.u.ping.updates = &suspect;
    ping.u.ping.update_count = 1;
    CHECK_EQ (s_inject (net, 1, 0, &ping), 0);
    CHECK_EQ (s_state (net, 0, accused), SHOAL_MEMBER_SUSPECT);
    s_run_until (net, net->now + 5000);
    CHECK (shoal_membership_incarnation (net->nodes[accused].core) > before);
    for (int i = 0; i < 8; i++) {
        CHECK_EQ (s_state (net, i, accused), SHOAL_MEMBER_ALIVE);
        CHECK_EQ (s_incarnation (net, i, accused),
                  shoal_membership_incarnation (net->nodes[accused].core));
    }
    CHECK_EQ (s_seen (net, -1, SHOAL_MEMBERSHIP_DEAD, accused), 0);
    //  Up when it joined, suspect, up again.
    CHECK_EQ (s_seen (net, 0, SHOAL_MEMBERSHIP_SUSPECT, accused), 1);
    CHECK_EQ (s_seen (net, 0, SHOAL_MEMBERSHIP_UP, accused), 2);
    shoal_membership_stats_t stats;
    shoal_membership_stats (net->nodes[accused].core, &stats);
    CHECK_EQ (stats.refutations, 1);
    s_net_destroy (&net);
}

//  5 % of datagrams lost for a minute: indirect probes and refutation keep
//  every healthy node out of the dead.
static void
steady_loss_declares_no_healthy_node_dead (void)
{
    shoal_membership_config_t config = s_loopback ();
    s_net_t *net = s_cluster (&config, 20, 7);
    net->loss_percent = 5;
    s_run_until (net, net->now + 60000);
    for (int j = 0; j < 20; j++)
        CHECK_EQ (s_seen (net, -1, SHOAL_MEMBERSHIP_DEAD, j), 0);
    net->loss_percent = 0;
    CHECK (s_run_until_converged (net, 100, 10000) != UINT64_MAX);
    s_net_destroy (&net);
}

static void
graceful_leave_reaches_everyone_as_left (void)
{
    shoal_membership_config_t config = s_loopback ();
    s_net_t *net = s_cluster (&config, 8, 8);
    int leaver = 2;
    shoal_membership_leave (net->nodes[leaver].core, net->now);
    s_collect (net, leaver);
    CHECK (!shoal_membership_leave_done (net->nodes[leaver].core));
    uint64_t start = net->now;
    while (!shoal_membership_leave_done (net->nodes[leaver].core) && net->now - start < 5000)
        s_run_until (net, net->now + 10);
    CHECK (shoal_membership_leave_done (net->nodes[leaver].core));
    net->nodes[leaver].crashed = true; //  the process exits
    s_run_until (net, net->now + 5000);
    for (int i = 0; i < 8; i++) {
        if (i == leaver)
            continue;
        CHECK_EQ (s_state (net, i, leaver), SHOAL_MEMBER_LEFT);
        CHECK_EQ (s_seen (net, i, SHOAL_MEMBERSHIP_LEFT, leaver), 1);
        CHECK_EQ (shoal_membership_live (net->nodes[i].core), 7);
    }
    CHECK_EQ (s_seen (net, -1, SHOAL_MEMBERSHIP_DEAD, leaver), 0);
    CHECK_EQ (s_seen (net, -1, SHOAL_MEMBERSHIP_SUSPECT, leaver), 0);
    s_net_destroy (&net);
}

//  A node that left is a left record in its own table: neither forgetting
//  tombstones nor making room in a full table may take it (found by
//  fuzz_membership).
static void
a_leaving_node_never_forgets_itself (void)
{
    shoal_membership_config_t config = s_loopback ();
    config.tombstone_ms = 1000;
    config.members_max = 3;
    s_net_t *net = s_solo (&config, 2, 29);
    int newcomer = s_net_add (net, false);
    shoal_membership_leave (net->nodes[0].core, net->now);
    s_collect (net, 0);
    s_run_until (net, net->now + 5000);
    s_teach (net, 1, 0, &newcomer, 1);
    CHECK_EQ (s_state (net, 0, 0), SHOAL_MEMBER_LEFT);
    CHECK_EQ (shoal_membership_size (net->nodes[0].core), 3);
    shoal_membership_stats_t stats;
    shoal_membership_stats (net->nodes[0].core, &stats);
    CHECK_EQ (stats.members_refused, 1);
    s_net_destroy (&net);
}

//  A table keeps its members' times in 32-bit stamps from an epoch it moves
//  on: twice 40 days without an input (more than 2^32 ms in all), and a
//  crash is still found and its tombstone forgotten after its time, not at
//  once nor never.
static void
tombstones_keep_their_time_across_months (void)
{
    shoal_membership_config_t config = s_loopback ();
    config.tombstone_ms = 20000;
    s_net_t *net = s_cluster (&config, 4, 13);
    const uint64_t days40 = 40ull * 24 * 3600 * 1000;
    for (int leap = 0; leap < 2; leap++) {
        net->now += days40;
        s_run_until (net, net->now + 30000);
        CHECK (s_converged (net));
    }
    net->nodes[3].crashed = true;
    s_run_until (net, net->now + 5000);
    for (int i = 0; i < 3; i++)
        CHECK_EQ (s_state (net, i, 3), SHOAL_MEMBER_DEAD);
    uint64_t dead_at = s_seen_at (net, 0, SHOAL_MEMBERSHIP_DEAD, 3);
    CHECK (dead_at > 2 * days40);
    s_run_until (net, dead_at + config.tombstone_ms - 1000);
    CHECK_EQ (s_state (net, 0, 3), SHOAL_MEMBER_DEAD);
    s_run_until (net, dead_at + config.tombstone_ms + 1000);
    for (int i = 0; i < 3; i++)
        CHECK_EQ (s_state (net, i, 3), -1);
    s_net_destroy (&net);
}

static void
tombstones_are_forgotten_after_their_time (void)
{
    shoal_membership_config_t config = s_loopback ();
    config.tombstone_ms = 20000;
    s_net_t *net = s_cluster (&config, 4, 9);
    net->nodes[3].crashed = true;
    s_run_until (net, net->now + 5000);
    CHECK_EQ (s_state (net, 0, 3), SHOAL_MEMBER_DEAD);
    CHECK_EQ (shoal_membership_size (net->nodes[0].core), 4);
    s_run_until (net, net->now + 20000);
    for (int i = 0; i < 3; i++) {
        CHECK_EQ (s_state (net, i, 3), -1);
        CHECK_EQ (shoal_membership_size (net->nodes[i].core), 3);
    }
    s_net_destroy (&net);
}

//  ---------------------------------------------------------------------
//  Hints: the shell says a member may be gone

//  Node 0's last outputs of type about node index: addressed to it (a
//  PING), or asking about it (a PING-REQ).
static int
s_outputs_about (const s_net_t *net, uint8_t type, int index)
{
    const shoal_membership_send_t *sends;
    size_t count = shoal_membership_outbox (net->nodes[0].core, &sends);
    int found = 0;
    for (size_t i = 0; i < count; i++) {
        const uint8_t *about =
            type == SHOAL_MSG_PING_REQ ? sends[i].msg.u.ping_req.target.bytes : sends[i].to.id;
        found += sends[i].msg.type == type &&
                 memcmp (about, net->nodes[index].id.bytes, SHOAL_ID_SIZE) == 0;
    }
    return found;
}

static int
s_pings_to (const s_net_t *net, int index)
{
    return s_outputs_about (net, SHOAL_MSG_PING, index);
}

//  Hints stand-in 3 to node 0 at a seed-given point of its schedule, with
//  3 gone silent; answered: once more when that PING goes out, as the
//  kernel's refusal of it would. Returns whether 0 pinged it with the
//  hint's own outputs, and when 0 held it suspect (UINT64_MAX: not within a
//  probe interval).
static bool
s_hinted (const shoal_membership_config_t *config, uint64_t seed, bool answered,
          uint64_t *suspect_after)
{
    s_net_t *net = s_solo (config, 7, seed);
    s_run_until (net, net->now + seed * 37 % (7 * config->probe_interval_ms));
    net->nodes[3].mute = true;
    uint64_t start = net->now;
    shoal_membership_hint (net->nodes[0].core, net->now, &net->nodes[3].id);
    bool pinged = s_pings_to (net, 3) == 1;
    s_collect (net, 0);
    if (pinged && answered) {
        shoal_membership_hint (net->nodes[0].core, net->now, &net->nodes[3].id);
        CHECK (s_outputs_about (net, SHOAL_MSG_PING_REQ, 3) >= 1);
        s_collect (net, 0);
    }
    *suspect_after = UINT64_MAX;
    while (net->now < start + config->probe_interval_ms && *suspect_after == UINT64_MAX) {
        s_run_until (net, net->now + 1);
        if (s_state (net, 0, 3) == SHOAL_MEMBER_SUSPECT)
            *suspect_after = net->now - start;
    }
    shoal_membership_stats_t stats;
    shoal_membership_stats (net->nodes[0].core, &stats);
    CHECK_EQ (stats.hints, 1);
    s_net_destroy (&net);
    return pinged;
}

//  Three members confirm a suspicion at once: each passes on only the last
//  accuser it heard (one record per member in the queue), so an accusation
//  can be lost to others. A node whose own probe fails again on a member
//  it accused tells its accusation again while confirmations are missing.
static void
an_accusation_is_told_again_while_confirmations_are_missing (void)
{
    shoal_membership_config_t config = s_loopback ();
    config.suspicion_max_mult = 64; //  2.8 s with two confirmations: past the test
    s_net_t *net = s_solo (&config, 9, 5);
    shoal_membership_t *core = net->nodes[0].core;
    net->nodes[3].mute = true;
    s_suspect (net, 3, 1);
    shoal_membership_stats_t stats;
    shoal_membership_stats (core, &stats);
    uint64_t failed = stats.probes_failed, limit = net->now + 20 * config.probe_interval_ms;
    while (stats.probes_failed == failed && net->now < limit) {
        s_run_until (net, net->now + 1);
        shoal_membership_stats (core, &stats);
    }
    CHECK (stats.probes_failed > failed); //  0 accused 3 too: a confirmation
    s_suspect (net, 3, 2);                //  the record now names 2
    //  The record is sent as often as any, then leaves the queue.
    s_run_until (net, net->now + 10 * config.gossip_interval_ms);
    uint32_t told = net->own_accusations[0];
    failed = stats.probes_failed;
    while (stats.probes_failed == failed && net->now < limit) {
        s_run_until (net, net->now + 1);
        shoal_membership_stats (core, &stats);
    }
    CHECK (stats.probes_failed > failed);
    s_run_until (net, net->now + 2 * config.gossip_interval_ms);
    CHECK (net->own_accusations[0] > told);
    CHECK_EQ (s_state (net, 0, 3), SHOAL_MEMBER_SUSPECT);
    s_net_destroy (&net);
}

//  A hint probes the member at once, out of turn; a hinted probe that fails
//  makes it suspect as any probe does: PING-REQs after probe_timeout, the
//  verdict at the last NACK. Without hints, a member of seven is probed in
//  turn once in seven intervals, on average 3.5 intervals after it fell
//  silent.
static void
a_hint_probes_at_once (void)
{
    shoal_membership_config_t config = s_loopback ();
    config.suspicion_max_mult = 30; //  the suspicion outlives the test
    int at_once = 0, quick = 0;
    for (uint64_t seed = 1; seed <= 40; seed++) {
        uint64_t after;
        at_once += s_hinted (&config, seed, false, &after);
        //  Only a probe still waiting for its ACK (its first 2 ms here)
        //  holds the hinted one back, until that probe ends.
        CHECK (after >= config.probe_timeout_ms);
        quick += after <= config.probe_timeout_ms * 2 + 2 * LATENCY_MS;
    }
    CHECK (at_once >= 36);
    CHECK (quick >= 36);
}

//  The kernel's refusal of a probe's PING (a second hint) answers the probe:
//  it asks its relays at once and makes the member suspect within
//  probe_timeout (at the relays' NACKs, or at the timeout), where an
//  unanswered probe waits probe_timeout for the ACK and then most of
//  another for the NACKs.
static void
a_hint_about_the_probed_member_hastens_the_probe (void)
{
    shoal_membership_config_t config = s_loopback ();
    config.suspicion_max_mult = 30;
    int pinged = 0;
    for (uint64_t seed = 1; seed <= 20; seed++) {
        uint64_t after = UINT64_MAX;
        if (!s_hinted (&config, seed, true, &after))
            continue;
        pinged++;
        CHECK (after <= config.probe_timeout_ms);
    }
    CHECK (pinged >= 16);
}

//  A relay that hears the member is gone says so at once: its NACK goes
//  with the hint, not at its deadline.
static void
a_hint_sends_a_relays_nack_at_once (void)
{
    shoal_membership_config_t config = s_loopback ();
    s_net_t *net = s_solo (&config, 7, 8);
    s_run_until (net, net->now + 250);
    net->nodes[3].mute = true;
    shoal_msg_t request = { .type = SHOAL_MSG_PING_REQ };
    request.u.ping_req.seq = 77;
    request.u.ping_req.target = net->nodes[3].id;
    request.u.ping_req.addr = "";
    s_inject (net, 1, 0, &request);
    shoal_membership_stats_t before, after;
    shoal_membership_stats (net->nodes[0].core, &before);
    shoal_membership_hint (net->nodes[0].core, net->now, &net->nodes[3].id);
    const shoal_membership_send_t *sends;
    size_t count = shoal_membership_outbox (net->nodes[0].core, &sends), nacks = 0;
    for (size_t i = 0; i < count; i++)
        nacks += sends[i].msg.type == SHOAL_MSG_NACK && sends[i].msg.u.ack.seq == 77 &&
                 memcmp (sends[i].to.id, net->nodes[1].id.bytes, SHOAL_ID_SIZE) == 0;
    CHECK_EQ (nacks, 1);
    shoal_membership_stats (net->nodes[0].core, &after);
    CHECK_EQ (after.nacks_hastened, before.nacks_hastened + 1);
    CHECK_EQ (after.hints, before.hints); //  an answer, not a probe of its own
    s_collect (net, 0);
    s_net_destroy (&net);
}

//  A hint about a member that answers costs one PING and its ACK: no
//  PING-REQ, no suspicion, no event, no change of health.
static void
a_hint_on_a_live_member_is_one_probe (void)
{
    shoal_membership_config_t config = s_loopback ();
    s_net_t *net = s_solo (&config, 7, 3);
    s_run_until (net, net->now + 333);
    shoal_membership_stats_t before, after;
    shoal_membership_stats (net->nodes[0].core, &before);
    size_t seen = net->seen_count;
    uint32_t asked = net->asked_about[3];
    shoal_membership_hint (net->nodes[0].core, net->now, &net->nodes[3].id);
    s_collect (net, 0);
    s_run_until (net, net->now + 3 * config.probe_interval_ms);
    shoal_membership_stats (net->nodes[0].core, &after);
    CHECK_EQ (after.hints, before.hints + 1);
    CHECK_EQ (after.probes_hinted, before.probes_hinted + 1);
    CHECK_EQ (after.probes_failed, before.probes_failed);
    CHECK_EQ (net->asked_about[3], asked);
    CHECK_EQ (net->seen_count, seen);
    CHECK_EQ (s_state (net, 0, 3), SHOAL_MEMBER_ALIVE);
    CHECK_EQ (shoal_membership_health (net->nodes[0].core), 0);
    s_net_destroy (&net);
}

//  Hints are bounded: one per member per probe interval, one waiting at a
//  time, hinted probes at most one per probe_timeout, and never in place of
//  the schedule's probes. Unknown ids, this node, members not live and a
//  node leaving take none.
static void
hints_are_rate_limited_and_checked (void)
{
    shoal_membership_config_t config = s_loopback ();
    s_net_t *net = s_solo (&config, 7, 4);
    s_run_until (net, net->now + 250);
    shoal_membership_t *core = net->nodes[0].core;
    shoal_membership_stats_t before, after;
    shoal_membership_stats (core, &before);
    //  The same member three times at once: the second answers the probe
    //  the first started (as the kernel's answer to its PING would), the
    //  third is ignored.
    shoal_membership_hint (core, net->now, &net->nodes[3].id);
    s_collect (net, 0);
    shoal_membership_hint (core, net->now, &net->nodes[3].id);
    CHECK_EQ (s_pings_to (net, 3), 0);
    s_collect (net, 0);
    shoal_membership_hint (core, net->now, &net->nodes[3].id);
    CHECK_EQ (s_pings_to (net, 3), 0);
    shoal_membership_stats (core, &after);
    CHECK_EQ (after.hints, before.hints + 1);
    CHECK_EQ (after.probes_hastened, before.probes_hastened + 1);
    CHECK_EQ (after.hints_ignored, before.hints_ignored + 1);
    //  Strangers, this node, nothing: ignored, nothing sent.
    shoal_id_t stranger = s_node_id (99);
    shoal_membership_hint (core, net->now, &stranger);
    const shoal_membership_send_t *sends;
    CHECK_EQ (shoal_membership_outbox (core, &sends), 0);
    shoal_membership_hint (core, net->now, &net->nodes[0].id);
    shoal_membership_hint (core, net->now, NULL);
    shoal_membership_stats (core, &after);
    CHECK_EQ (after.hints_ignored, before.hints_ignored + 4);
    CHECK_EQ (after.probes_hastened, before.probes_hastened + 1);
    s_run_until (net, net->now + config.probe_interval_ms);

    //  A flood: every member hinted every millisecond for 2 s.
    shoal_membership_stats (core, &before);
    uint64_t start = net->now;
    while (net->now < start + 2000) {
        for (int i = 1; i <= 7; i++) {
            shoal_membership_hint (core, net->now, &net->nodes[i].id);
            s_collect (net, 0);
        }
        s_run_until (net, net->now + 1);
    }
    shoal_membership_stats (core, &after);
    uint64_t hinted = after.probes_hinted - before.probes_hinted;
    uint64_t scheduled = after.probes - before.probes - hinted;
    CHECK (hinted <= 2000 / config.probe_timeout_ms + 1);
    CHECK (hinted >= 2000 / config.probe_interval_ms); //  each member once per interval at least
    CHECK (scheduled >= 2000 / config.probe_interval_ms - 1); //  the round robin goes on
    CHECK_EQ (after.probes_failed, before.probes_failed);

    //  A suspect (its checks decide who probes it), a member dead here, and
    //  a node that leaves: ignored, unless a check of the suspect waits for
    //  its ACK, which the hint answers.
    net->nodes[5].mute = true;
    s_suspect (net, 5, 1);
    shoal_membership_stats (core, &before);
    shoal_membership_hint (core, net->now, &net->nodes[5].id);
    shoal_membership_stats (core, &after);
    CHECK_EQ (after.hints, before.hints);
    CHECK_EQ (after.hints_ignored + after.probes_hastened,
              before.hints_ignored + before.probes_hastened + 1);
    s_run_until (net, net->now + 60 * config.probe_interval_ms);
    CHECK_EQ (s_state (net, 0, 5), SHOAL_MEMBER_DEAD);
    shoal_membership_stats (core, &before);
    shoal_membership_hint (core, net->now, &net->nodes[5].id);
    shoal_membership_leave (core, net->now);
    s_collect (net, 0);
    s_run_until (net, net->now + config.probe_interval_ms);
    shoal_membership_hint (core, net->now, &net->nodes[4].id);
    shoal_membership_stats (core, &after);
    CHECK_EQ (after.hints, before.hints);
    CHECK_EQ (after.hints_ignored, before.hints_ignored + 2);
    s_net_destroy (&net);
}

//  ---------------------------------------------------------------------
//  Partitions

static void
a_healed_partition_merges_by_itself (void)
{
    shoal_membership_config_t config = s_loopback ();
    s_net_t *net = s_cluster (&config, 10, 10);
    for (int i = 0; i < 10; i++)
        net->nodes[i].group = i < 5 ? 0 : 1;
    net->partitioned = true;
    s_run_until (net, net->now + 30000);
    for (int i = 0; i < 10; i++)
        for (int j = 0; j < 10; j++) {
            bool same = net->nodes[i].group == net->nodes[j].group;
            CHECK_EQ (s_state (net, i, j), same ? SHOAL_MEMBER_ALIVE : SHOAL_MEMBER_DEAD);
        }
    net->partitioned = false;
    uint64_t took = s_run_until_converged (net, 50, 60000);
    CHECK (took != UINT64_MAX);
    //  Tombstones are pinged every 0.5 s; the merge needs a few of them.
    CHECK (took <= 10000);
    s_net_destroy (&net);
}

//  Node index starts again: a new life, a higher incarnation, an empty table.
static void
s_restart (s_net_t *net, int index)
{
    s_node_t *node = &net->nodes[index];
    shoal_membership_destroy (&node->core);
    node->life++;
    node->incarnation++;
    s_meta_fill (node, index);
    node->core = shoal_membership_new (&net->config, &node->id, node->incarnation, &node->meta,
                                       net->seed * 1000 + (uint64_t) index + node->life, net->now,
                                       net->metas);
    CHECK (node->core != NULL);
    node->crashed = false;
}

//  Both nodes of one side restart while the network is split, and find only
//  each other: the other side holds them dead in lives that are over, and
//  they know nothing of it. The other side's probes of its tombstones must
//  reach the new lives, or the cluster stays two islands for good (the
//  simulator's submit-leader-crash, seed 1, did).
static void
a_healed_partition_merges_with_members_that_restarted (void)
{
    shoal_membership_config_t config = s_loopback ();
    s_net_t *net = s_cluster (&config, 4, 40);
    for (int i = 0; i < 4; i++)
        net->nodes[i].group = i < 2 ? 0 : 1;
    net->partitioned = true;
    s_run_until (net, net->now + 30000);
    CHECK_EQ (s_state (net, 0, 2), SHOAL_MEMBER_DEAD);
    CHECK_EQ (s_state (net, 0, 3), SHOAL_MEMBER_DEAD);
    s_restart (net, 2);
    s_restart (net, 3);
    shoal_membership_join (net->nodes[3].core, net->now, net->nodes[2].addr);
    s_collect (net, 3);
    s_run_until (net, net->now + 5000);
    CHECK_EQ (shoal_membership_live (net->nodes[2].core), 2);
    CHECK_EQ (shoal_membership_live (net->nodes[3].core), 2);
    net->partitioned = false;
    uint64_t took = s_run_until_converged (net, 50, 60000);
    CHECK (took != UINT64_MAX);
    CHECK (took <= 10000); //  tombstones are pinged every 0.5 s
    CHECK_EQ (s_incarnation (net, 0, 2), 2);
    s_net_destroy (&net);
}

//  A member this node holds dead at an incarnation the member has left
//  behind (it refuted while this node heard nothing) probes this node: the
//  dead record the ACK carries back is old news to it, so it has nothing to
//  refute. This node must sync with it then, not wait for a tombstone probe
//  or the periodic sync (both far off here).
static void
a_probe_from_a_member_held_dead_brings_its_news (void)
{
    shoal_membership_config_t config = s_loopback ();
    config.tombstone_probe_interval_ms = 600000;
    config.sync_interval_ms = 600000;
    s_net_t *net = s_cluster (&config, 2, 50);
    int stand_in = s_net_add (net, false);
    //  Node 1 hears itself suspected and refutes, while node 0 hears nothing.
    net->nodes[0].deaf = true;
    shoal_update_t update = s_update (net, 1, SHOAL_MEMBER_SUSPECT, 1, stand_in);
    shoal_msg_t ack = { .type = SHOAL_MSG_ACK };
    ack.u.ack.updates = &update;
    ack.u.ack.update_count = 1;
    s_inject (net, stand_in, 1, &ack);
    CHECK_EQ (shoal_membership_incarnation (net->nodes[1].core), 2);
    //  Long enough that node 1's last word to node 0 is older than two probe
    //  intervals: a DEAD verdict on a member just heard is only a suspicion.
    s_run_until (net, net->now + 300);
    net->nodes[0].deaf = false;
    //  Node 0 learns that node 1 died, at the incarnation it has passed.
    update = s_update (net, 1, SHOAL_MEMBER_DEAD, 1, stand_in);
    s_inject (net, stand_in, 0, &ack);
    CHECK_EQ (s_state (net, 0, 1), SHOAL_MEMBER_DEAD);
    s_run_until (net, net->now + 2000);
    CHECK_EQ (s_state (net, 0, 1), SHOAL_MEMBER_ALIVE);
    CHECK (s_incarnation (net, 0, 1) >= 2);
    s_net_destroy (&net);
}

//  At a partition's heal, the far side's DEAD verdicts arrive on members
//  this side talks to all along. A node that heard the member itself
//  within two probe intervals takes the verdict as a suspicion, which the
//  member refutes: it never holds it dead. Taken as it came, the verdict
//  dropped a healthy majority's leader (real nodes, issue 21).
static void
a_dead_verdict_on_a_member_just_heard_is_a_suspicion (void)
{
    shoal_membership_config_t config = s_loopback ();
    s_net_t *net = s_cluster (&config, 3, 51);
    int stand_in = s_net_add (net, false);
    uint64_t incarnation = s_incarnation (net, 0, 1);
    shoal_update_t update = s_update (net, 1, SHOAL_MEMBER_DEAD, incarnation, stand_in);
    shoal_msg_t ack = { .type = SHOAL_MSG_ACK };
    ack.u.ack.updates = &update;
    ack.u.ack.update_count = 1;
    //  Node 0 heard node 1 (over another layer, say) just now.
    shoal_life_t sender = { .life = net->nodes[1].meta.life };
    memcpy (sender.id, net->nodes[1].id.bytes, sizeof sender.id);
    shoal_membership_heard (net->nodes[0].core, net->now, &sender);
    s_inject (net, stand_in, 0, &ack);
    CHECK_EQ (s_state (net, 0, 1), SHOAL_MEMBER_SUSPECT);
    shoal_membership_stats_t stats;
    shoal_membership_stats (net->nodes[0].core, &stats);
    CHECK_EQ (stats.dead_doubted, 1);
    for (int i = 0; i < 40; i++) {
        s_run_until (net, net->now + 50);
        CHECK (s_state (net, 0, 1) != SHOAL_MEMBER_DEAD);
    }
    CHECK_EQ (s_state (net, 0, 1), SHOAL_MEMBER_ALIVE);
    CHECK (s_incarnation (net, 0, 1) > incarnation); //  refuted
    //  Not heard for longer: the verdict is taken as it comes.
    net->nodes[1].deaf = true;
    net->nodes[1].mute = true;
    s_run_until (net, net->now + 2 * config.probe_interval_ms + 1);
    if (s_state (net, 0, 1) != SHOAL_MEMBER_DEAD) {
        update = s_update (net, 1, SHOAL_MEMBER_DEAD, s_incarnation (net, 0, 1), stand_in);
        s_inject (net, stand_in, 0, &ack);
    }
    CHECK_EQ (s_state (net, 0, 1), SHOAL_MEMBER_DEAD);
    s_net_destroy (&net);
}

//  ---------------------------------------------------------------------
//  Local health

static void
a_node_whose_messages_are_lost_probes_slower (void)
{
    shoal_membership_config_t config = s_loopback ();
    s_net_t *net = s_cluster (&config, 8, 11);
    int sick = 4, well = 5;
    net->nodes[sick].mute = true;
    shoal_membership_stats_t sick_before, well_before, sick_after, well_after;
    shoal_membership_stats (net->nodes[sick].core, &sick_before);
    shoal_membership_stats (net->nodes[well].core, &well_before);
    s_run_until (net, net->now + 10000);
    shoal_membership_stats (net->nodes[sick].core, &sick_after);
    shoal_membership_stats (net->nodes[well].core, &well_after);
    uint64_t sick_probes = sick_after.probes - sick_before.probes;
    uint64_t well_probes = well_after.probes - well_before.probes;
    CHECK (shoal_membership_health (net->nodes[sick].core) >= config.awareness_max / 2);
    CHECK_EQ (shoal_membership_health (net->nodes[well].core), 0);
    CHECK (well_probes >= 90);
    CHECK (sick_probes * 3 < well_probes);
    //  The healthy side lost only the sick node.
    for (int i = 0; i < 8; i++)
        if (i != sick)
            for (int j = 0; j < 8; j++)
                CHECK_EQ (s_state (net, i, j), j == sick ? SHOAL_MEMBER_DEAD : SHOAL_MEMBER_ALIVE);
    //  Healed, it is probing at full pace again.
    net->nodes[sick].mute = false;
    s_run_until (net, net->now + 10000);
    CHECK_EQ (shoal_membership_health (net->nodes[sick].core), 0);
    CHECK (s_run_until_converged (net, 100, 10000) != UINT64_MAX);
    s_net_destroy (&net);
}

//  ---------------------------------------------------------------------
//  One node and stand-ins that answer its PINGs: exact timers

//  Lifeguard's buddy system: a PING to a member held suspect carries its
//  suspect record, so it learns at once and can refute, long after gossip
//  stopped repeating the suspicion.
//  Whether node 0 probes stand-in 3 at its next probe after it hears 3
//  suspected by stand-in 1. The probe order is at a seed-given point. Stand-in
//  3 goes silent, so that a probe of it, and only a probe (gossip PINGs too),
//  ends in PING-REQs about it.
static bool
s_probes_suspect_next (const shoal_membership_config_t *config, int stand_ins, uint64_t seed)
{
    s_net_t *net = s_solo (config, stand_ins, seed);
    s_run_until (net, net->now + seed % (uint64_t) (stand_ins * config->probe_interval_ms));
    uint32_t before = net->asked_about[3];
    net->nodes[3].mute = true;
    s_suspect (net, 3, 1);
    s_run_until (net, net->now + config->probe_interval_ms + config->probe_timeout_ms + 1);
    bool probed = net->asked_about[3] > before;
    s_net_destroy (&net);
    return probed;
}

//  A node that hears a suspicion checks the suspect out of turn, with a
//  chance of about 3k / live members, so that k confirmations come fast.
static void
a_new_suspicion_is_checked_out_of_turn (void)
{
    shoal_membership_config_t config = s_loopback ();
    config.suspicion_max_mult = 30; //  the suspicion outlives the test
    //  Eight live members, fewer than 3k = 9: every node checks. In turn,
    //  the suspect would come next only about one time in seven.
    for (uint64_t seed = 1; seed <= 20; seed++)
        CHECK (s_probes_suspect_next (&config, 7, seed));
    //  Sixty live members: a chance of 9 / 60, plus 1 / 59 in turn.
    int probed = 0;
    for (uint64_t seed = 1; seed <= 200; seed++)
        probed += s_probes_suspect_next (&config, 59, seed);
    CHECK (probed >= 15 && probed <= 60);
    //  No confirmations asked for (k = 0): nobody checks out of turn.
    config.suspicion_confirmations = 0;
    probed = 0;
    for (uint64_t seed = 1; seed <= 200; seed++)
        probed += s_probes_suspect_next (&config, 59, seed);
    CHECK (probed <= 12);
}

//  Whether node 0, hearing stand-in 3 suspected by stand-in 1 at a
//  seed-given point of its probe schedule, has asked relays about 3 within
//  5 ms: the check starts at once, with its PING-REQs beside its PING, not
//  at the next probe of the schedule and after probe_timeout.
static bool
s_checks_at_once (const shoal_membership_config_t *config, uint64_t seed)
{
    s_net_t *net = s_solo (config, 7, seed);
    s_run_until (net, net->now + seed * 37 % (7 * config->probe_interval_ms));
    uint32_t before = net->asked_about[3];
    net->nodes[3].mute = true;
    s_suspect (net, 3, 1);
    s_run_until (net, net->now + 5);
    bool asked = net->asked_about[3] > before;
    s_net_destroy (&net);
    return asked;
}

//  The confirmation a verdict waits for comes within a probe timeout of
//  the news, not a probe interval and a timeout later.
static void
a_new_suspicion_is_checked_at_once_with_relays (void)
{
    shoal_membership_config_t config = s_loopback ();
    config.suspicion_max_mult = 30; //  the suspicion outlives the test
    //  Only a probe still unanswered (its first 2 ms, here) holds the check
    //  back, until that probe ends.
    int at_once = 0;
    for (uint64_t seed = 1; seed <= 40; seed++)
        at_once += s_checks_at_once (&config, seed);
    CHECK (at_once >= 36);
    //  Before the check was moved up, none came this soon: the check took
    //  the next probe of the schedule, and its relays the direct timeout.
    //  A node in doubt about its own health (one failed probe, no NACKs)
    //  keeps its schedule: it is not the one to hurry a verdict.
    s_net_t *net = s_solo (&config, 7, 41);
    net->nodes[5].mute = true;
    uint64_t limit = net->now + 8 * config.probe_interval_ms;
    while (shoal_membership_health (net->nodes[0].core) == 0 && net->now < limit)
        s_run_until (net, net->now + 1);
    CHECK (shoal_membership_health (net->nodes[0].core) > 0);
    uint32_t before = net->asked_about[3];
    net->nodes[3].mute = true;
    s_suspect (net, 3, 1);
    s_run_until (net, net->now + 5);
    CHECK_EQ (net->asked_about[3], before);
    s_net_destroy (&net);
}

//  A probe whose every relay answered NACK ends at the last NACK, before
//  its interval: nobody is left who could bring an ACK.
static void
a_probe_ends_at_its_last_nack (void)
{
    shoal_membership_config_t config = s_loopback ();
    config.suspicion_max_mult = 30;
    s_net_t *net = s_solo (&config, 6, 42);
    net->nodes[3].mute = true;
    uint64_t limit = net->now + 8 * config.probe_interval_ms;
    while (net->asked_about[3] == 0 && net->now < limit)
        s_run_until (net, net->now + 1);
    CHECK (net->asked_about[3] > 0);
    //  The PING-REQs just sent: their relays (stand-ins, which never
    //  answer one) and the probe's sequence number.
    const shoal_membership_send_t *sends;
    size_t count = shoal_membership_outbox (net->nodes[0].core, &sends);
    int relays[4];
    int relay_count = 0;
    uint32_t seq = 0;
    for (size_t i = 0; i < count && relay_count < 4; i++)
        if (sends[i].msg.type == SHOAL_MSG_PING_REQ) {
            seq = sends[i].msg.u.ping_req.seq;
            for (int j = 1; j < net->count; j++)
                if (strcmp (net->nodes[j].addr, sends[i].addr) == 0)
                    relays[relay_count++] = j;
        }
    CHECK_EQ (relay_count, (int) config.indirect_checks);
    uint64_t asked = net->now;
    shoal_msg_t nack = { .type = SHOAL_MSG_NACK };
    nack.u.ack.seq = seq;
    for (int r = 0; r < relay_count; r++) {
        CHECK_EQ (s_state (net, 0, 3), SHOAL_MEMBER_ALIVE);
        s_run_until (net, net->now + 2);
        s_inject (net, relays[r], 0, &nack);
    }
    //  Suspect at the last NACK, 6 ms after the PING-REQs, where the
    //  probe's interval ends 60 ms after them.
    CHECK_EQ (s_state (net, 0, 3), SHOAL_MEMBER_SUSPECT);
    CHECK_EQ (net->now, asked + 6);
    shoal_membership_stats_t stats;
    shoal_membership_stats (net->nodes[0].core, &stats);
    CHECK_EQ (stats.probes_failed, 1);
    CHECK_EQ (shoal_membership_health (net->nodes[0].core), 0); //  every NACK came
    //  A NACK again changes nothing: the probe is over.
    s_inject (net, relays[0], 0, &nack);
    shoal_membership_stats_t again;
    shoal_membership_stats (net->nodes[0].core, &again);
    CHECK_EQ (again.acks_unmatched, stats.acks_unmatched + 1);
    CHECK_EQ (again.probes_failed, 1);
    s_net_destroy (&net);
}

static void
a_suspect_is_told_when_probed (void)
{
    shoal_membership_config_t config = s_loopback ();
    config.suspicion_max_mult = 30; //  6 s: the suspicion outlives the two probes
    s_net_t *net = s_solo (&config, 9, 27);
    net->watch = net->nodes[3].id;
    net->watch_incarnation = 1;
    net->watch_state = SHOAL_MEMBER_SUSPECT;
    s_suspect (net, 3, 1);
    s_run_until (net, net->now + 300); //  the suspicion is no longer gossiped
    uint32_t to_others = 0, told = net->watched_to[3];
    for (int i = 1; i <= 9; i++)
        to_others += i == 3 ? 0 : net->watched_to[i];
    s_run_until (net, net->now + 2 * 9 * config.probe_interval_ms);
    CHECK (net->watched_to[3] >= told + 2); //  probed twice, told twice
    uint32_t to_others_later = 0;
    for (int i = 1; i <= 9; i++)
        to_others_later += i == 3 ? 0 : net->watched_to[i];
    CHECK_EQ (to_others_later, to_others);
    s_net_destroy (&net);
}

static void
answered_probes_bring_health_back (void)
{
    shoal_membership_config_t config = s_loopback ();
    //  An unconfirmed suspicion lasts its maximum, 40 s: no stand-in dies
    //  here (a dead member is no longer probed, and only answered probes
    //  heal).
    config.suspicion_mult = 20;
    config.suspicion_max_mult = 20;
    s_net_t *net = s_solo (&config, 9, 14);
    for (int i = 1; i <= 9; i++)
        net->nodes[i].mute = true; //  no ACK reaches node 0
    for (int i = 0;
         i < 1000 && shoal_membership_health (net->nodes[0].core) < config.awareness_max - 1; i++)
        s_run_until (net, net->now + 10);
    CHECK_EQ (shoal_membership_health (net->nodes[0].core), config.awareness_max - 1);
    //  At health h a probe takes (h + 1) probe intervals.
    shoal_membership_stats_t before, after;
    shoal_membership_stats (net->nodes[0].core, &before);
    s_run_until (net, net->now + 4 * config.probe_interval_ms * config.awareness_max);
    shoal_membership_stats (net->nodes[0].core, &after);
    CHECK (after.probes - before.probes <= 5);
    for (int i = 1; i <= 9; i++)
        net->nodes[i].mute = false;
    //  Each answered probe lowers the score by one: 7 probes taking 8, 7 ...
    //  2 intervals, the first of which may have begun before the ACKs did.
    s_run_until (net, net->now + 4400);
    CHECK_EQ (shoal_membership_health (net->nodes[0].core), 0);
    //  Stand-ins cannot refute, so the probed ones are still suspect (an
    //  ACK is not a refutation), and none is dead yet.
    for (int i = 1; i <= 9; i++)
        CHECK (s_state (net, 0, i) != SHOAL_MEMBER_DEAD);
    s_net_destroy (&net);
}

//  A tick long after the time asked for: this node was stopped. It does
//  not blame the member it was probing.
static void
a_late_tick_is_blamed_on_this_node (void)
{
    shoal_membership_config_t config = s_loopback ();
    s_net_t *net = s_solo (&config, 4, 15);
    s_run_until (net, net->now + 1000);
    for (int i = 1; i <= 4; i++)
        net->nodes[i].mute = true;
    //  Step to just after a probe went out, then stall for two seconds.
    shoal_membership_stats_t stats, later;
    shoal_membership_stats (net->nodes[0].core, &stats);
    while (true) {
        s_run_until (net, shoal_membership_next (net->nodes[0].core));
        shoal_membership_stats (net->nodes[0].core, &later);
        if (later.probes > stats.probes)
            break;
    }
    uint32_t health = shoal_membership_health (net->nodes[0].core);
    net->now += 2000;
    shoal_membership_tick (net->nodes[0].core, net->now);
    s_collect (net, 0);
    shoal_membership_stats (net->nodes[0].core, &later);
    CHECK_EQ (later.late_ticks, 1);
    CHECK_EQ (later.probes_failed, stats.probes_failed);
    CHECK_EQ (shoal_membership_health (net->nodes[0].core), health + 1);
    for (int i = 1; i <= 4; i++)
        CHECK_EQ (s_state (net, 0, i), SHOAL_MEMBER_ALIVE);
    //  A running suspicion is extended by the stall, not cut short by it.
    s_suspect (net, 3, 1);
    uint64_t start = net->now;
    net->now += 5000;
    shoal_membership_tick (net->nodes[0].core, net->now);
    s_collect (net, 0);
    CHECK_EQ (s_state (net, 0, 3), SHOAL_MEMBER_SUSPECT);
    s_run_until (net, start + 10000);
    CHECK_EQ (s_seen (net, 0, SHOAL_MEMBERSHIP_DEAD, 3), 1);
    s_net_destroy (&net);
}

//  ---------------------------------------------------------------------
//  Dissemination

//  Every node sends the news of a joiner at most lambda * ceil (log10 (N+1))
//  times, then stops.
static void
retransmits_are_bounded (void)
{
    shoal_membership_config_t config = s_loopback ();
    s_net_t *net = s_cluster (&config, 30, 16);
    int joiner = s_net_add (net, true);
    net->watch = net->nodes[joiner].id;
    net->watch_incarnation = net->nodes[joiner].incarnation;
    net->watch_state = SHOAL_MEMBER_ALIVE;
    shoal_membership_join (net->nodes[joiner].core, net->now, net->nodes[0].addr);
    s_collect (net, joiner);
    CHECK (s_run_until_converged (net, 10, 10000) != UINT64_MAX);
    s_run_until (net, net->now + 5000);
    uint32_t limit = shoal_membership_retransmits (&config, 31);
    uint32_t total = 0, most = 0;
    for (int i = 0; i < 30; i++) {
        CHECK (net->watched[i] <= limit);
        total += net->watched[i];
        most = net->watched[i] > most ? net->watched[i] : most;
    }
    CHECK_EQ (most, limit); //  some node sent it to the full count
    CHECK (total > 30);
    //  And then it is quiet: nothing more about the joiner.
    uint32_t snapshot[NODES_MAX];
    memcpy (snapshot, net->watched, sizeof snapshot);
    s_run_until (net, net->now + 10000);
    CHECK (memcmp (snapshot, net->watched, sizeof snapshot) == 0);
    s_net_destroy (&net);
}

//  Large metas: only two or three records fit a datagram. The encoder
//  measures them; no datagram goes over its limit and most come close.
static void
piggyback_fills_but_never_exceeds_the_datagram (void)
{
    shoal_membership_config_t config = s_loopback ();
    s_net_t *net = s_net_new (&config, 17);
    for (int i = 0; i < 24; i++) {
        s_node_t *node = &net->nodes[s_net_add (net, false)];
        memset (node->long_value, 'a' + i % 26, SHOAL_LABEL_MAX);
        node->labels[1] = (shoal_label_t){ "long", node->long_value };
        node->meta.label_count = 2;
        static char handles_text[4][SHOAL_NAME_MAX + 1];
        static const char *handles[4];
        for (int h = 0; h < 4; h++) {
            memset (handles_text[h], 'h' + h, SHOAL_NAME_MAX);
            handles[h] = handles_text[h];
        }
        node->meta.handles = handles;
        node->meta.handle_count = 4;
        CHECK (shoal_membership_meta_check (&config, &node->meta) == NULL);
        node->core =
            shoal_membership_new (&config, &node->id, 1, &node->meta, 17 + (uint64_t) i, 0, NULL);
    }
    for (int i = 1; i < 24; i++) {
        shoal_membership_join (net->nodes[i].core, 0, net->nodes[0].addr);
        s_collect (net, i);
    }
    CHECK (s_run_until_converged (net, 20, 20000) != UINT64_MAX);
    size_t limit = shoal_msg_size_max (SHOAL_MSG_PING);
    CHECK (net->datagram_size_max <= limit);
    CHECK (net->datagram_size_max > limit - 450); //  one more record would not fit
    CHECK (net->updates_per_datagram_max >= 2);
    CHECK (net->updates_per_datagram_max <= 3);
    s_net_destroy (&net);
}

static void
updated_meta_reaches_everyone (void)
{
    shoal_membership_config_t config = s_loopback ();
    s_net_t *net = s_cluster (&config, 6, 18);
    s_node_t *node = &net->nodes[2];
    node->labels[0].value = "c";
    CHECK_EQ (shoal_membership_set_meta (node->core, net->now, &node->meta), 0);
    s_collect (net, 2);
    node->labels[0].value = "changed after set_meta"; //  the node holds its own copy
    s_run_until (net, net->now + 2000);
    for (int i = 0; i < 6; i++) {
        shoal_membership_member_t member;
        CHECK_EQ (shoal_membership_member (net->nodes[i].core, &node->id, &member), 0);
        CHECK_STR (member.meta->labels[0].value, "c");
        CHECK_EQ (member.incarnation, 2);
        if (i != 2)
            CHECK_EQ (s_seen (net, i, SHOAL_MEMBERSHIP_UPDATED, 2), 1);
    }
    //  Another life's meta is refused: the life is bound to the envelopes.
    shoal_meta_t other = node->meta;
    other.life = 9;
    CHECK_EQ (shoal_membership_set_meta (node->core, net->now, &other), -1);
    s_net_destroy (&net);
}

//  ---------------------------------------------------------------------
//  Anti-entropy

static void
digests_agree_whatever_the_order_of_learning (void)
{
    shoal_membership_config_t config = s_loopback ();
    s_net_t *net = s_net_new (&config, 19);
    int a = s_net_add (net, true), b = s_net_add (net, true);
    for (int i = 0; i < 5; i++)
        s_net_add (net, false);
    int forward[] = { 2, 3, 4, 5, 6, b }, backward[] = { b, 6, 5, 4, 3, 2 };
    s_teach (net, 2, a, forward, 6);
    int with_a[] = { a };
    s_teach (net, 2, b, backward, 6);
    s_digest_t digest_a = s_digest (net, a), digest_b = s_digest (net, b);
    CHECK_EQ (digest_a.count, 7);
    CHECK_EQ (digest_b.count, 6);
    CHECK (!s_digest_equal (&digest_a, &digest_b));
    s_teach (net, 2, b, with_a, 1);
    digest_b = s_digest (net, b);
    CHECK_EQ (digest_b.count, 7);
    CHECK (s_digest_equal (&digest_a, &digest_b));
    //  Who accused a suspect is not part of the digest: the same suspicion
    //  raised by different members is the same table.
    shoal_update_t update = s_update (net, 4, SHOAL_MEMBER_SUSPECT, 1, 2);
    shoal_msg_t ack = { .type = SHOAL_MSG_ACK };
    ack.u.ack.updates = &update;
    ack.u.ack.update_count = 1;
    s_inject (net, 2, a, &ack);
    update.by = net->nodes[5].id;
    s_inject (net, 2, b, &ack);
    digest_a = s_digest (net, a);
    digest_b = s_digest (net, b);
    CHECK_EQ (s_state (net, a, 4), SHOAL_MEMBER_SUSPECT);
    CHECK (s_digest_equal (&digest_a, &digest_b));
    s_net_destroy (&net);
}

//  The first message of type in node index's outbox, or NULL.
static const shoal_msg_t *
s_sent (s_net_t *net, int index, uint8_t type)
{
    const shoal_membership_send_t *sends;
    size_t count = shoal_membership_outbox (net->nodes[index].core, &sends);
    for (size_t i = 0; i < count; i++)
        if (sends[i].msg.type == type)
            return &sends[i].msg;
    return NULL;
}

//  Anti-entropy pulls only what differs: one member changed in one table
//  costs the records of its digest bucket, both ways, not the tables.
static void
sync_sends_only_the_buckets_that_differ (void)
{
    shoal_membership_config_t config = s_loopback ();
    s_net_t *net = s_net_new (&config, 31);
    int a = s_net_add (net, true), b = s_net_add (net, true);
    int others[NODES_MAX], other_count = 0;
    while (net->count < 64)
        others[other_count++] = s_net_add (net, false);
    int with_a[] = { a }, with_b[] = { b };
    s_teach (net, others[0], a, others, other_count);
    s_teach (net, others[0], a, with_b, 1);
    s_teach (net, others[0], b, others, other_count);
    s_teach (net, others[0], b, with_a, 1);
    s_digest_t digest_a = s_digest (net, a), digest_b = s_digest (net, b);
    CHECK_EQ (digest_a.count, 64);
    CHECK (s_digest_equal (&digest_a, &digest_b));

    //  a hears that one member is suspect; b does not.
    int changed = others[5];
    shoal_update_t update =
        s_update (net, changed, SHOAL_MEMBER_SUSPECT, net->nodes[changed].incarnation, others[0]);
    shoal_msg_t ack = { .type = SHOAL_MSG_ACK };
    ack.u.ack.updates = &update;
    ack.u.ack.update_count = 1;
    s_inject (net, others[0], a, &ack);
    CHECK_EQ (s_state (net, a, changed), SHOAL_MEMBER_SUSPECT);

    //  a's digest, in 8 buckets of about 8 members, reaches b.
    shoal_msg_t digest = { .type = SHOAL_MSG_DIGEST };
    uint64_t sums[8];
    CHECK_EQ (shoal_membership_digest (net->nodes[a].core, 8, &digest.u.digest.member_count, sums),
              0);
    digest.u.digest.bucket_count = 8;
    digest.u.digest.buckets = sums;
    CHECK_EQ (s_inject (net, a, b, &digest), 0);
    uint32_t bucket = shoal_membership_bucket (&net->nodes[changed].id) * 8u / 256u;
    uint32_t in_bucket = 0;
    for (int i = 0; i < net->count; i++)
        in_bucket += shoal_membership_bucket (&net->nodes[i].id) * 8u / 256u == bucket;
    CHECK (in_bucket >= 1 && in_bucket < 32);

    //  b sends its records of that bucket only, and asks for a's.
    const shoal_msg_t *reply = s_sent (net, b, SHOAL_MSG_SYNC_REPLY);
    const shoal_msg_t *request = s_sent (net, b, SHOAL_MSG_SYNC_REQ);
    CHECK (reply && request);
    CHECK_EQ (reply->u.sync_reply.member_count, in_bucket);
    for (uint32_t i = 0; i < reply->u.sync_reply.member_count; i++)
        CHECK_EQ (shoal_membership_bucket (&reply->u.sync_reply.members[i].node) * 8u / 256u,
                  bucket);
    CHECK_EQ (request->u.sync_req.want, SHOAL_SYNC_MEMBERS);
    CHECK_EQ (request->u.sync_req.bucket_count, 8);
    for (uint32_t i = 0; i < SHOAL_DIGEST_BUCKETS_MAX / 8; i++)
        CHECK_EQ (request->u.sync_req.buckets.bytes[i], i == 0 ? 1u << bucket : 0);

    //  a answers with the same bucket, its suspicion among it; b merges it
    //  (a merges b's stale alive record as old news) and the tables agree.
    shoal_msg_t saved_reply = *reply;
    shoal_update_t saved[64];
    memcpy (saved, reply->u.sync_reply.members, in_bucket * sizeof saved[0]);
    saved_reply.u.sync_reply.members = saved;
    CHECK_EQ (s_inject (net, b, a, request), 0);
    reply = s_sent (net, a, SHOAL_MSG_SYNC_REPLY);
    CHECK (reply);
    CHECK_EQ (reply->u.sync_reply.member_count, in_bucket);
    CHECK_EQ (s_inject (net, a, b, reply), 0);
    CHECK_EQ (s_state (net, b, changed), SHOAL_MEMBER_SUSPECT);
    CHECK_EQ (s_inject (net, b, a, &saved_reply), 0);
    digest_a = s_digest (net, a);
    digest_b = s_digest (net, b);
    CHECK (s_digest_equal (&digest_a, &digest_b));

    //  A request for buckets that hold none of this node's members gets no
    //  reply (wait out the probe interval that limits replies first).
    net->now += config.probe_interval_ms;
    shoal_msg_t empty = { .type = SHOAL_MSG_SYNC_REQ };
    empty.u.sync_req = (shoal_sync_req_t){ SHOAL_SYNC_MEMBERS, 1, { { 0 } } };
    CHECK_EQ (s_inject (net, a, b, &empty), 0);
    CHECK (s_sent (net, b, SHOAL_MSG_SYNC_REPLY) == NULL);
    empty.u.sync_req.buckets.bytes[0] = 1;
    CHECK_EQ (s_inject (net, a, b, &empty), 0);
    CHECK (s_sent (net, b, SHOAL_MSG_SYNC_REPLY) != NULL);

    //  A bucket count that is not a power of two is refused.
    digest.u.digest.bucket_count = 6;
    CHECK_EQ (s_inject (net, a, b, &digest), -1);
    shoal_msg_t odd = { .type = SHOAL_MSG_SYNC_REQ };
    odd.u.sync_req.want = SHOAL_SYNC_MEMBERS;
    CHECK_EQ (s_inject (net, a, b, &odd), -1);
    s_net_destroy (&net);
}

//  With every datagram lost, only anti-entropy (frames) carries news: a
//  changed meta arrives by the periodic digest exchange.
static void
periodic_sync_repairs_what_gossip_missed (void)
{
    shoal_membership_config_t config = s_loopback ();
    config.sync_interval_ms = 40;
    s_net_t *net = s_cluster (&config, 2, 20);
    net->drop_datagrams = true;
    s_node_t *node = &net->nodes[1];
    node->labels[0].value = "moved";
    shoal_membership_set_meta (node->core, net->now, &node->meta);
    s_collect (net, 1);
    uint64_t start = net->now;
    s_run_until (net, start + 100);
    shoal_membership_member_t member;
    CHECK_EQ (shoal_membership_member (net->nodes[0].core, &node->id, &member), 0);
    CHECK_STR (member.meta->labels[0].value, "moved");
    CHECK_EQ (s_seen (net, 0, SHOAL_MEMBERSHIP_UPDATED, 1), 1);
    shoal_membership_stats_t stats;
    shoal_membership_stats (net->nodes[0].core, &stats);
    CHECK (stats.syncs >= 1);
    s_net_destroy (&net);
}

//  ---------------------------------------------------------------------
//  Precedence

typedef struct {
    uint8_t state;
    uint64_t incarnation;
    uint8_t expect_state;
    uint64_t expect_incarnation;
    uint8_t expect_event; //  0: none
} s_step_t;

static void
precedence_follows_swim (void)
{
    enum { A = SHOAL_MEMBER_ALIVE, S = SHOAL_MEMBER_SUSPECT, D = SHOAL_MEMBER_DEAD };
    enum { L = SHOAL_MEMBER_LEFT };
    static const s_step_t steps[] = {
        { A, 5, A, 5, SHOAL_MEMBERSHIP_UP },      //  new member
        { A, 5, A, 5, 0 },                        //  the same news again
        { S, 4, A, 5, 0 },                        //  stale
        { S, 5, S, 5, SHOAL_MEMBERSHIP_SUSPECT }, //  suspect(i) over alive(i)
        { A, 5, S, 5, 0 },                        //  alive(i) does not clear suspect(i)
        { A, 6, A, 6, SHOAL_MEMBERSHIP_UP },      //  refuted
        { S, 7, S, 7, SHOAL_MEMBERSHIP_SUSPECT },
        { S, 8, S, 8, 0 }, //  suspect(j > i) over suspect(i), no new event
        { D, 8, D, 8, SHOAL_MEMBERSHIP_DEAD },
        { A, 8, D, 8, 0 }, //  dead(i) over alive(i)
        { S, 8, D, 8, 0 },
        { S, 9, S, 9, SHOAL_MEMBERSHIP_SUSPECT }, //  a later incarnation is news
        { L, 9, L, 9, SHOAL_MEMBERSHIP_LEFT },
        { D, 9, L, 9, 0 }, //  left(i) is not overridden by dead(i)
        { A, 9, L, 9, 0 }, //  a left member never comes back at the same incarnation
        { A, 10, A, 10, SHOAL_MEMBERSHIP_UP },
        { D, 10, D, 10, SHOAL_MEMBERSHIP_DEAD },
        { L, 10, L, 10, SHOAL_MEMBERSHIP_LEFT }, //  left(i) over dead(i)
        { D, 3, L, 10, 0 },
        { A, 11, A, 11, SHOAL_MEMBERSHIP_UP },
    };
    shoal_membership_config_t config = s_loopback ();
    s_net_t *net = s_net_new (&config, 21);
    int a = s_net_add (net, true), m = s_net_add (net, false), b = s_net_add (net, false);
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        int failures_before = test_failures;
        size_t seen_before = net->seen_count;
        shoal_update_t update = s_update (net, m, steps[i].state, steps[i].incarnation, b);
        shoal_msg_t ack = { .type = SHOAL_MSG_ACK };
        ack.u.ack.updates = &update;
        ack.u.ack.update_count = 1;
        s_inject (net, b, a, &ack);
        CHECK_EQ (s_state (net, a, m), steps[i].expect_state);
        CHECK_EQ (s_incarnation (net, a, m), steps[i].expect_incarnation);
        CHECK_EQ (net->seen_count - seen_before, steps[i].expect_event ? 1 : 0);
        if (steps[i].expect_event && net->seen_count > seen_before)
            CHECK_EQ (net->seen[seen_before].type, steps[i].expect_event);
        if (test_failures > failures_before)
            fprintf (stderr, "  at step %zu\n", i);
    }
    //  Alive with new meta while alive: updated.
    net->nodes[m].labels[0].value = "elsewhere";
    shoal_update_t update = s_update (net, m, SHOAL_MEMBER_ALIVE, 12, -1);
    shoal_msg_t ack = { .type = SHOAL_MSG_ACK };
    ack.u.ack.updates = &update;
    ack.u.ack.update_count = 1;
    s_inject (net, b, a, &ack);
    CHECK_EQ (net->seen[net->seen_count - 1].type, SHOAL_MEMBERSHIP_UPDATED);
    s_net_destroy (&net);
}

//  ---------------------------------------------------------------------
//  Hostile and broken input

static void
updates_about_this_node_are_refuted_only_when_current (void)
{
    shoal_membership_config_t config = s_loopback ();
    s_net_t *net = s_solo (&config, 2, 22);
    shoal_membership_t *core = net->nodes[0].core;
    shoal_msg_t ack = { .type = SHOAL_MSG_ACK };
    shoal_update_t update = s_update (net, 0, SHOAL_MEMBER_SUSPECT, 0, 1);
    ack.u.ack.updates = &update;
    ack.u.ack.update_count = 1;
    //  Older than this node's incarnation (1): ignored.
    s_inject (net, 1, 0, &ack);
    CHECK_EQ (shoal_membership_incarnation (core), 1);
    //  Current: refuted with the next one, which goes out on the next message.
    update.incarnation = 1;
    s_inject (net, 1, 0, &ack);
    CHECK_EQ (shoal_membership_incarnation (core), 2);
    update.state = SHOAL_MEMBER_DEAD;
    update.incarnation = 40;
    s_inject (net, 1, 0, &ack);
    CHECK_EQ (shoal_membership_incarnation (core), 41);
    //  Its own alive record at the current incarnation is no news.
    update = s_update (net, 0, SHOAL_MEMBER_ALIVE, 41, -1);
    s_inject (net, 1, 0, &ack);
    CHECK_EQ (shoal_membership_incarnation (core), 41);
    //  An incarnation nothing can top: refused, no wrap-around.
    update = s_update (net, 0, SHOAL_MEMBER_DEAD, UINT64_MAX, 1);
    s_inject (net, 1, 0, &ack);
    CHECK_EQ (shoal_membership_incarnation (core), 41);
    shoal_membership_stats_t stats;
    shoal_membership_stats (core, &stats);
    CHECK_EQ (stats.refutations, 2);
    CHECK_EQ (stats.updates_refused, 1);
    CHECK_EQ (s_state (net, 0, 0), SHOAL_MEMBER_ALIVE);
    s_net_destroy (&net);
}

static void
bad_records_are_refused (void)
{
    shoal_membership_config_t config = s_loopback ();
    config.meta_size_max = 64;
    s_net_t *net = s_solo (&config, 1, 23);
    int stranger = s_net_add (net, false);
    shoal_msg_t ack = { .type = SHOAL_MSG_ACK };
    shoal_update_t update = s_update (net, stranger, SHOAL_MEMBER_ALIVE, 1, -1);
    ack.u.ack.updates = &update;
    ack.u.ack.update_count = 1;
    static char big[SHOAL_LABEL_MAX + 1];
    memset (big, 'b', SHOAL_LABEL_MAX);
    net->nodes[stranger].labels[0].value = big; //  meta over 64 bytes
    shoal_membership_stats_t before, after;
    shoal_membership_stats (net->nodes[0].core, &before);
    s_inject (net, 1, 0, &ack);
    update.meta = NULL; //  alive without meta
    s_inject (net, 1, 0, &ack);
    net->nodes[stranger].labels[0].value = "a";
    net->nodes[stranger].meta.life = 0; //  no life to address it by
    update.meta = &net->nodes[stranger].meta;
    s_inject (net, 1, 0, &ack);
    update = s_update (net, stranger, SHOAL_MEMBER_DEAD, 1, 1); //  a tombstone never seen
    s_inject (net, 1, 0, &ack);
    update.state = SHOAL_MEMBER_SUSPECT;
    s_inject (net, 1, 0, &ack);
    update.node = (shoal_id_t){ 0 };
    s_inject (net, 1, 0, &ack);
    shoal_membership_stats (net->nodes[0].core, &after);
    CHECK_EQ (after.updates_refused - before.updates_refused, 6);
    CHECK_EQ (s_state (net, 0, stranger), -1);
    CHECK_EQ (shoal_membership_size (net->nodes[0].core), 2);
    s_net_destroy (&net);
}

static void
a_full_table_takes_tombstones_first_then_refuses (void)
{
    shoal_membership_config_t config = s_loopback ();
    config.members_max = 4;
    s_net_t *net = s_solo (&config, 3, 24);
    for (int i = 0; i < 3; i++)
        s_net_add (net, false);
    int newcomers[] = { 4, 5, 6 };
    s_teach (net, 1, 0, newcomers, 3);
    CHECK_EQ (shoal_membership_size (net->nodes[0].core), 4);
    shoal_membership_stats_t stats;
    shoal_membership_stats (net->nodes[0].core, &stats);
    CHECK_EQ (stats.members_refused, 3);
    //  A dead member is a tombstone; a newcomer takes its place.
    shoal_update_t dead = s_update (net, 2, SHOAL_MEMBER_DEAD, 1, 1);
    shoal_msg_t ack = { .type = SHOAL_MSG_ACK };
    ack.u.ack.updates = &dead;
    ack.u.ack.update_count = 1;
    s_inject (net, 1, 0, &ack);
    s_teach (net, 1, 0, newcomers, 1);
    CHECK_EQ (shoal_membership_size (net->nodes[0].core), 4);
    CHECK_EQ (s_state (net, 0, 2), -1);
    CHECK_EQ (s_state (net, 0, 4), SHOAL_MEMBER_ALIVE);
    //  A SYNC-REPLY far larger than the table changes nothing of its bound.
    shoal_update_t many[NODES_MAX];
    for (int i = 0; i < 40; i++) {
        many[i] = s_update (net, 1, SHOAL_MEMBER_ALIVE, 1, -1);
        many[i].node.bytes[5] = (uint8_t) i; //  ids nobody has
    }
    shoal_msg_t reply = { .type = SHOAL_MSG_SYNC_REPLY };
    reply.u.sync_reply.members = many;
    reply.u.sync_reply.member_count = 40;
    s_inject (net, 1, 0, &reply);
    CHECK_EQ (shoal_membership_size (net->nodes[0].core), 4);
    s_run_until (net, net->now + 5000);
    CHECK_EQ (shoal_membership_size (net->nodes[0].core), 4);
    s_net_destroy (&net);
}

static size_t
s_outbox (s_net_t *net, int index, uint8_t type)
{
    const shoal_membership_send_t *sends;
    size_t count = shoal_membership_outbox (net->nodes[index].core, &sends), found = 0;
    for (size_t i = 0; i < count; i++)
        found += sends[i].msg.type == type;
    return found;
}

static void
strange_messages_are_handled_without_harm (void)
{
    shoal_membership_config_t config = s_loopback ();
    s_net_t *net = s_solo (&config, 3, 25);
    int stranger = s_net_add (net, false);
    shoal_membership_t *core = net->nodes[0].core;
    shoal_membership_stats_t before, after;
    shoal_membership_stats (core, &before);

    //  ACK and NACK for nothing this node asked.
    shoal_msg_t ack = { .type = SHOAL_MSG_ACK };
    ack.u.ack.seq = 123456;
    CHECK_EQ (s_inject (net, 1, 0, &ack), 0);
    ack.type = SHOAL_MSG_NACK;
    CHECK_EQ (s_inject (net, 2, 0, &ack), 0);
    shoal_membership_stats (core, &after);
    CHECK_EQ (after.acks_unmatched - before.acks_unmatched, 2);

    //  A PING meant for another node is not answered; one for this is.
    shoal_msg_t ping = { .type = SHOAL_MSG_PING };
    ping.u.ping.seq = 9;
    ping.u.ping.target = net->nodes[2].id;
    s_inject (net, 1, 0, &ping);
    CHECK_EQ (s_outbox (net, 0, SHOAL_MSG_ACK), 0);
    ping.u.ping.target = net->nodes[0].id;
    s_inject (net, 1, 0, &ping);
    CHECK_EQ (s_outbox (net, 0, SHOAL_MSG_ACK), 1);
    //  From a stranger, answered at the address it came from, with this
    //  node's own record so that the stranger can address it next time; and
    //  since the stranger knew this node, this node's table is behind: a
    //  digest, to be sent the stranger's table.
    s_inject (net, stranger, 0, &ping);
    const shoal_membership_send_t *sends;
    CHECK_EQ (shoal_membership_outbox (core, &sends), 2);
    CHECK_EQ (sends[0].msg.type, SHOAL_MSG_ACK);
    CHECK_STR (sends[0].addr, net->nodes[stranger].addr);
    CHECK (sends[0].msg.u.ack.update_count >= 1);
    CHECK (memcmp (sends[0].msg.u.ack.updates[0].node.bytes, net->nodes[0].id.bytes, 16) == 0);
    CHECK_EQ (sends[1].msg.type, SHOAL_MSG_DIGEST);
    CHECK_STR (sends[1].addr, net->nodes[stranger].addr);
    //  Not again within a probe interval: strangers cannot make it flood.
    s_inject (net, stranger, 0, &ping);
    CHECK_EQ (s_outbox (net, 0, SHOAL_MSG_DIGEST), 0);

    //  PING-REQs that make no sense, and one this node cannot serve.
    shoal_msg_t request = { .type = SHOAL_MSG_PING_REQ };
    request.u.ping_req.seq = 5;
    request.u.ping_req.addr = "";
    s_inject (net, 1, 0, &request); //  no target
    request.u.ping_req.target = net->nodes[0].id;
    s_inject (net, 1, 0, &request); //  itself
    CHECK_EQ (s_outbox (net, 0, SHOAL_MSG_PING) + s_outbox (net, 0, SHOAL_MSG_NACK), 0);
    request.u.ping_req.target = s_node_id (60); //  unknown, no address to try
    s_inject (net, 1, 0, &request);
    CHECK_EQ (s_outbox (net, 0, SHOAL_MSG_NACK), 1);
    //  More requests than relays: the extra ones get a NACK at once.
    request.u.ping_req.target = net->nodes[3].id;
    size_t nacks = 0;
    for (int i = 0; i < SHOAL_MEMBERSHIP_RELAYS_MAX + 5; i++) {
        request.u.ping_req.seq = 1000 + (uint32_t) i;
        s_inject (net, 1, 0, &request);
        nacks += s_outbox (net, 0, SHOAL_MSG_NACK);
    }
    CHECK_EQ (nacks, 5);

    //  Anti-entropy from a sender with no address here: dropped.
    shoal_msg_t digest = { .type = SHOAL_MSG_DIGEST };
    CHECK_EQ (s_inject (net, stranger, 0, &digest), -1);
    //  A digest equal to this node's: nothing to do. A different one:
    //  SYNC-REPLY and SYNC-REQ, but not twice within a probe interval.
    uint64_t sums[2];
    CHECK_EQ (shoal_membership_digest (core, 3, &digest.u.digest.member_count, sums), -1);
    CHECK_EQ (shoal_membership_digest (core, 2, &digest.u.digest.member_count, sums), 0);
    digest.u.digest.bucket_count = 2;
    digest.u.digest.buckets = sums;
    CHECK_EQ (s_inject (net, 1, 0, &digest), 0);
    CHECK_EQ (s_outbox (net, 0, SHOAL_MSG_SYNC_REPLY), 0);
    digest.u.digest.member_count++;
    s_inject (net, 1, 0, &digest);
    CHECK_EQ (s_outbox (net, 0, SHOAL_MSG_SYNC_REPLY), 1);
    CHECK_EQ (s_outbox (net, 0, SHOAL_MSG_SYNC_REQ), 1);
    s_inject (net, 1, 0, &digest);
    CHECK_EQ (s_outbox (net, 0, SHOAL_MSG_SYNC_REPLY), 0);

    //  Another layer's message: not this core's business.
    shoal_msg_t election = { .type = SHOAL_MSG_ELECTION };
    CHECK_EQ (s_inject (net, 1, 0, &election), 0);
    CHECK_EQ (shoal_membership_outbox (core, &sends), 0);

    shoal_membership_stats (core, &before);
    shoal_envelope_t envelope = { .purpose = SHOAL_PURPOSE_DATAGRAM };
    envelope.sender = s_life (&net->nodes[1]);
    //  Unaddressed: only a PING may be.
    ack.type = SHOAL_MSG_ACK;
    CHECK_EQ (shoal_membership_receive (core, net->now, &envelope, &ack, NULL), -1);
    //  Addressed to another life of this node.
    envelope.recipient = s_life (&net->nodes[0]);
    envelope.recipient.life = 2;
    CHECK_EQ (shoal_membership_receive (core, net->now, &envelope, &ack, NULL), -1);
    //  From an earlier life of a member than one already heard.
    envelope.recipient.life = 1;
    envelope.sender.life = 5;
    CHECK_EQ (shoal_membership_receive (core, net->now, &envelope, &ack, NULL), 0);
    envelope.sender.life = 4;
    CHECK_EQ (shoal_membership_receive (core, net->now, &envelope, &ack, NULL), -1);
    //  The life heard outlives a change of the member's record.
    shoal_membership_member_t view;
    shoal_id_t peer = s_node_id (1);
    CHECK_EQ (shoal_membership_member (core, &peer, &view), 0);
    CHECK_EQ (view.life, 5);
    s_suspect (net, 1, 2);
    CHECK_EQ (shoal_membership_member (core, &peer, &view), 0);
    CHECK_EQ (view.state, SHOAL_MEMBER_SUSPECT);
    CHECK_EQ (view.life, 5);
    CHECK_EQ (shoal_membership_receive (core, net->now, &envelope, &ack, NULL), -1);
    //  From itself, or from nobody.
    envelope.sender = s_life (&net->nodes[0]);
    CHECK_EQ (shoal_membership_receive (core, net->now, &envelope, &ack, NULL), -1);
    memset (&envelope.sender, 0, sizeof envelope.sender);
    CHECK_EQ (shoal_membership_receive (core, net->now, &envelope, &ack, NULL), -1);
    shoal_membership_stats (core, &after);
    CHECK_EQ (after.dropped - before.dropped, 6);
    s_net_destroy (&net);
}

//  Nodes started in any order find each other: a node alone keeps trying
//  its seed until the seed is up.
static void
a_seed_that_starts_late_is_found (void)
{
    shoal_membership_config_t config = s_loopback ();
    s_net_t *net = s_net_new (&config, 28);
    int seed = s_net_add (net, true), joiner = s_net_add (net, true);
    net->nodes[seed].crashed = true; //  not started yet
    shoal_membership_join (net->nodes[joiner].core, 0, net->nodes[seed].addr);
    s_collect (net, joiner);
    s_run_until (net, 5000); //  fifty probe intervals
    CHECK_EQ (shoal_membership_live (net->nodes[joiner].core), 1);
    net->nodes[seed].crashed = false;
    CHECK (s_run_until_converged (net, 10, 1000) != UINT64_MAX);
    s_net_destroy (&net);
}

static void
seeds_and_beacons_introduce_but_never_prove (void)
{
    shoal_membership_config_t config = s_loopback ();
    s_net_t *net = s_net_new (&config, 26);
    int a = s_net_add (net, true), b = s_net_add (net, true), c = s_net_add (net, true);
    shoal_membership_t *core = net->nodes[a].core;
    CHECK_EQ (shoal_membership_join (core, 0, ""), -1);
    CHECK_EQ (shoal_membership_join (core, 0, net->nodes[a].addr), -1); //  its own
    //  A beacon of a leaving node, or of itself: ignored.
    shoal_life_t life_b = s_life (&net->nodes[b]), life_a = s_life (&net->nodes[a]);
    CHECK_EQ (
        shoal_membership_introduce (core, 0, &life_b, 1, SHOAL_BEACON_LEAVING, net->nodes[b].addr),
        -1);
    CHECK_EQ (shoal_membership_introduce (core, 0, &life_a, 1, 0, net->nodes[a].addr), -1);
    //  A beacon: pinged, addressed; the member counts only once it answers.
    CHECK_EQ (shoal_membership_introduce (core, 0, &life_b, 1, 0, net->nodes[b].addr), 0);
    CHECK_EQ (s_outbox (net, a, SHOAL_MSG_PING), 1);
    s_collect (net, a);
    CHECK_EQ (s_state (net, a, b), -1);
    CHECK_EQ (test_net_first (&net->wire)->envelope.recipient.life, 1);
    s_run_until (net, 10);
    CHECK_EQ (s_state (net, a, b), SHOAL_MEMBER_ALIVE);
    //  Known and live now: a beacon changes nothing.
    CHECK_EQ (shoal_membership_introduce (core, net->now, &life_b, 1, 0, net->nodes[b].addr), -1);
    //  A beacon of a node that never answers is given up after three tries.
    net->nodes[c].deaf = true;
    shoal_life_t life_c = s_life (&net->nodes[c]);
    CHECK_EQ (shoal_membership_introduce (core, net->now, &life_c, 1, 0, net->nodes[c].addr), 0);
    s_collect (net, a);
    s_run_until (net, net->now + 2000);
    CHECK_EQ (s_state (net, a, c), -1);
    //  The contact table is bounded.
    int full = 0;
    for (int i = 0; i < SHOAL_MEMBERSHIP_CONTACTS_MAX + 3; i++) {
        char addr[32];
        snprintf (addr, sizeof addr, "192.168.0.%d:1", i);
        full += shoal_membership_join (core, net->now, addr) == -1;
        s_collect (net, a);
    }
    CHECK_EQ (full, 3);
    s_net_destroy (&net);
}

//  ---------------------------------------------------------------------
//  Determinism

//  A net of count real nodes, each given the alive records of all as old
//  news (shoal_membership_settle): a cluster that has been up for a while.
static s_net_t *
s_settled (const shoal_membership_config_t *config, int count, uint64_t seed)
{
    s_net_t *net = s_net_new (config, seed);
    for (int i = 0; i < count; i++)
        s_net_add (net, true);
    shoal_update_t updates[NODES_MAX];
    for (int i = 0; i < net->count; i++)
        updates[i] = s_update (net, i, SHOAL_MEMBER_ALIVE, net->nodes[i].incarnation, -1);
    for (int i = 0; i < net->count; i++) {
        CHECK_EQ (
            shoal_membership_settle (net->nodes[i].core, net->now, updates, (uint32_t) net->count),
            0);
        const shoal_membership_send_t *sends;
        CHECK_EQ (shoal_membership_outbox (net->nodes[i].core, &sends), 0);
        s_collect (net, i);
        CHECK_EQ (shoal_membership_check (net->nodes[i].core, NULL), 0);
    }
    return net;
}

static void
a_settled_start_holds_everyone_and_gossips_nothing_old (void)
{
    shoal_membership_config_t config = s_loopback ();
    s_net_t *net = s_settled (&config, 16, 61);
    CHECK (s_converged (net));
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 16; j++)
            CHECK_EQ (s_seen (net, i, SHOAL_MEMBERSHIP_UP, j), i == j ? 0 : 1);
    //  Probes go round and digests agree, but no record is old enough to
    //  be sent, nor is anything news: not one update on a datagram, and
    //  no anti-entropy reply.
    size_t seen = net->seen_count;
    s_run_until (net, net->now + 2 * config.sync_interval_ms);
    CHECK (net->datagrams >= 16 * 50);
    CHECK_EQ (net->updates_per_datagram_max, 0);
    CHECK_EQ (net->seen_count, seen);
    for (int i = 0; i < 16; i++) {
        shoal_membership_stats_t stats;
        shoal_membership_stats (net->nodes[i].core, &stats);
        CHECK_EQ (stats.syncs, 0);
        CHECK_EQ (stats.updates_applied, 15);
    }
    //  News still spreads: a crash is dead everywhere, and no one else.
    int victim = 9;
    net->nodes[victim].crashed = true;
    s_run_until (net, net->now + 5000);
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 16; j++)
            if (i != victim)
                CHECK_EQ (s_state (net, i, j),
                          j == victim ? SHOAL_MEMBER_DEAD : SHOAL_MEMBER_ALIVE);
    CHECK (net->updates_per_datagram_max > 0);
    s_net_destroy (&net);
}

//  Only records matching those given leave the queue: this node's own
//  refutation, and a member's newer record, are news and go out.
static void
a_settled_start_still_sends_news (void)
{
    shoal_membership_config_t config = s_loopback ();
    s_net_t *net = s_settled (&config, 3, 62);
    CHECK_EQ (shoal_membership_settle (net->nodes[0].core, net->now, NULL, 1), -1);
    CHECK_EQ (shoal_membership_settle (net->nodes[0].core, net->now, NULL, 0), 0);
    //  Node 1 learns node 2 at incarnation 2 (which node 2 will refute),
    //  then hears incarnation 1 as old news: incarnation 2 is still to be
    //  told.
    shoal_update_t newer = s_update (net, 2, SHOAL_MEMBER_ALIVE, 2, -1);
    shoal_msg_t msg = { .type = SHOAL_MSG_SYNC_REPLY };
    msg.u.sync_reply.parts = SHOAL_SYNC_MEMBERS;
    msg.u.sync_reply.members = &newer;
    msg.u.sync_reply.member_count = 1;
    s_inject (net, 0, 1, &msg);
    shoal_update_t older = s_update (net, 2, SHOAL_MEMBER_ALIVE, 1, -1);
    CHECK_EQ (shoal_membership_settle (net->nodes[1].core, net->now, &older, 1), 0);
    s_collect (net, 1);
    CHECK_EQ (s_incarnation (net, 1, 2), 2);
    //  Node 0 is told it is suspect: it refutes, and says so.
    shoal_update_t accused = s_update (net, 0, SHOAL_MEMBER_SUSPECT, 1, 1);
    CHECK_EQ (shoal_membership_settle (net->nodes[0].core, net->now, &accused, 1), 0);
    s_collect (net, 0);
    CHECK_EQ (shoal_membership_incarnation (net->nodes[0].core), 2);
    net->watch = net->nodes[2].id;
    net->watch_incarnation = 2;
    net->watch_state = SHOAL_MEMBER_ALIVE;
    s_run_until (net, net->now + 10 * config.gossip_interval_ms);
    CHECK (net->watched[1] > 0);
    for (int i = 0; i < 3; i++)
        CHECK_EQ (s_incarnation (net, i, 0), 2);
    s_net_destroy (&net);
}

static void
s_trace_of (uint64_t seed, uint8_t hash[32])
{
    shoal_membership_config_t config = s_loopback ();
    s_net_t *net = s_net_new (&config, seed);
    for (int i = 0; i < 12; i++)
        s_net_add (net, true);
    for (int i = 1; i < 12; i++) {
        shoal_membership_join (net->nodes[i].core, 0, net->nodes[0].addr);
        s_collect (net, i);
    }
    net->loss_percent = 3;
    s_run_until (net, 3000);
    net->nodes[7].crashed = true;
    s_run_until (net, 8000);
    crypto_generichash_final (&net->trace, hash, 32);
    s_net_destroy (&net);
}

static void
the_same_seed_gives_the_same_run (void)
{
    uint8_t first[32], again[32], other[32];
    s_trace_of (42, first);
    s_trace_of (42, again);
    s_trace_of (43, other);
    CHECK (memcmp (first, again, 32) == 0);
    CHECK (memcmp (first, other, 32) != 0);
}

int
main (void)
{
    if (sodium_init () < 0)
        return 1;
    RUN (profiles_are_valid_and_bad_configs_say_why);
    RUN (suspicion_shrinks_with_confirmations_scaled_by_log_n);
    RUN (meta_is_checked_and_deep_copied);
    RUN (a_lone_node_waits_quietly);
    RUN (three_nodes_join_through_one_seed);
    RUN (first_contact_pulls_the_whole_table);
    RUN (fifty_nodes_join_through_one_seed_and_converge);
    RUN (a_crashed_node_is_suspected_then_dead_everywhere);
    RUN (a_falsely_suspected_node_refutes_and_stays_alive);
    RUN (steady_loss_declares_no_healthy_node_dead);
    RUN (graceful_leave_reaches_everyone_as_left);
    RUN (a_leaving_node_never_forgets_itself);
    RUN (tombstones_are_forgotten_after_their_time);
    RUN (tombstones_keep_their_time_across_months);
    RUN (a_healed_partition_merges_by_itself);
    RUN (a_healed_partition_merges_with_members_that_restarted);
    RUN (a_probe_from_a_member_held_dead_brings_its_news);
    RUN (a_dead_verdict_on_a_member_just_heard_is_a_suspicion);
    RUN (a_node_whose_messages_are_lost_probes_slower);
    RUN (suspicion_timeout_follows_the_formula);
    RUN (probes_go_round_robin_and_indirect_on_silence);
    RUN (a_suspect_is_told_when_probed);
    RUN (a_new_suspicion_is_checked_out_of_turn);
    RUN (a_new_suspicion_is_checked_at_once_with_relays);
    RUN (a_probe_ends_at_its_last_nack);
    RUN (an_accusation_is_told_again_while_confirmations_are_missing);
    RUN (a_hint_probes_at_once);
    RUN (a_hint_on_a_live_member_is_one_probe);
    RUN (a_hint_about_the_probed_member_hastens_the_probe);
    RUN (a_hint_sends_a_relays_nack_at_once);
    RUN (hints_are_rate_limited_and_checked);
    RUN (answered_probes_bring_health_back);
    RUN (a_late_tick_is_blamed_on_this_node);
    RUN (retransmits_are_bounded);
    RUN (piggyback_fills_but_never_exceeds_the_datagram);
    RUN (updated_meta_reaches_everyone);
    RUN (digests_agree_whatever_the_order_of_learning);
    RUN (sync_sends_only_the_buckets_that_differ);
    RUN (periodic_sync_repairs_what_gossip_missed);
    RUN (precedence_follows_swim);
    RUN (updates_about_this_node_are_refuted_only_when_current);
    RUN (bad_records_are_refused);
    RUN (a_full_table_takes_tombstones_first_then_refuses);
    RUN (strange_messages_are_handled_without_harm);
    RUN (a_seed_that_starts_late_is_found);
    RUN (seeds_and_beacons_introduce_but_never_prove);
    RUN (a_settled_start_holds_everyone_and_gossips_nothing_old);
    RUN (a_settled_start_still_sends_news);
    RUN (the_same_seed_gives_the_same_run);
    return TEST_DONE ();
}

/*  tests/fuzz/fuzz_membership.c: the membership state machine on arbitrary input.

    The input is a run of steps (fuzz.h): messages from a handful of peers,
    decoded by the real decoder on their carrier as a shell would, clock
    steps and ticks, and the other inputs (join, beacons, leave, new meta).
    After every step the node must keep the promises of membership.h: every
    message it hands out encodes within its carrier's limit and goes to an
    address, only a PING goes unaddressed, every event names a member with
    its meta, the table stays within members_max (small here, so that it
    fills), health within its bound, and next is never in the past.
*/

#include "tests/fuzz/fuzz.h"

#include "gossip/membership.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    shoal_id_t id;
    char addr[32];
    char name[16];
    shoal_label_t label;
    shoal_meta_t meta;
} s_peer_t;

static s_peer_t s_peers[FUZZ_MEMBERSHIP_PEERS];
static shoal_membership_config_t s_config;
static shoal_arena_t s_arena;

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
    (void) argc;
    (void) argv;
    shoal_membership_config_loopback (&s_config);
    s_config.members_max = 6;
    for (int i = 0; i < FUZZ_MEMBERSHIP_PEERS; i++) {
        s_peer_t *peer = &s_peers[i];
        memset (peer->id.bytes, i + 1, SHOAL_ID_SIZE);
        snprintf (peer->addr, sizeof peer->addr, "10.0.0.%d:7946", i + 1);
        snprintf (peer->name, sizeof peer->name, "peer%d", i);
        peer->label = (shoal_label_t){ "zone", i % 2 ? "a" : "b" };
        peer->meta = (shoal_meta_t){ .name = peer->name,
                                     .addr = peer->addr,
                                     .life = 1,
                                     .capacity = 1,
                                     .label_count = 1,
                                     .labels = &peer->label };
    }
    shoal_arena_init (&s_arena, SHOAL_DECODE_ARENA (65536));
    return 0;
}

static shoal_life_t
s_life (int peer)
{
    shoal_life_t life = { .life = 1 };
    memcpy (life.id, s_peers[peer].id.bytes, SHOAL_ID_SIZE);
    return life;
}

static void
s_check (shoal_membership_t *core, uint64_t now)
{
    //  The core's own invariants, after every input (gossip/membership.h).
    const char *broken = "";
    FUZZ_REQUIRE (shoal_membership_check (core, &broken) == 0, "%s", broken);
    const shoal_membership_send_t *sends;
    size_t count = shoal_membership_outbox (core, &sends);
    for (size_t i = 0; i < count; i++) {
        const shoal_msg_t *msg = &sends[i].msg;
        fuzz_require_encodes (msg);
        FUZZ_REQUIRE (msg->type >= SHOAL_MSG_PING && msg->type <= SHOAL_MSG_SYNC_REPLY,
                      "a message of type %d", msg->type);
        FUZZ_REQUIRE (sends[i].addr[0] != '\0', "a %s to no address",
                      shoal_msg_type_name (msg->type));
        FUZZ_REQUIRE (sends[i].to.life != 0 || msg->type == SHOAL_MSG_PING, "an unaddressed %s",
                      shoal_msg_type_name (msg->type));
    }
    const shoal_membership_event_t *events;
    count = shoal_membership_events (core, &events);
    for (size_t i = 0; i < count; i++)
        FUZZ_REQUIRE (events[i].type >= SHOAL_MEMBERSHIP_UP &&
                          events[i].type <= SHOAL_MEMBERSHIP_UPDATED && events[i].meta,
                      "event %zu of type %d", i, events[i].type);
    size_t members = shoal_membership_size (core);
    FUZZ_REQUIRE (members >= 1 && members <= s_config.members_max, "%zu members", members);
    FUZZ_REQUIRE (shoal_membership_live (core) <= members, "more live than members");
    for (size_t i = 0; i < members; i++) {
        shoal_membership_member_t member;
        FUZZ_REQUIRE (shoal_membership_member_at (core, i, &member) == 0 && member.meta &&
                          member.state <= SHOAL_MEMBER_LEFT,
                      "member %zu", i);
    }
    FUZZ_REQUIRE (shoal_membership_health (core) < s_config.awareness_max, "health %u",
                  shoal_membership_health (core));
    FUZZ_REQUIRE (shoal_membership_next (core) >= now, "next in the past");
}

static void
s_teach (shoal_membership_t *core, uint64_t now)
{
    shoal_update_t updates[FUZZ_MEMBERSHIP_PEERS];
    for (int i = 0; i < FUZZ_MEMBERSHIP_PEERS; i++)
        updates[i] = (shoal_update_t){ .node = s_peers[i].id,
                                       .incarnation = 1,
                                       .state = SHOAL_MEMBER_ALIVE,
                                       .meta = &s_peers[i].meta };
    shoal_msg_t msg = { .type = SHOAL_MSG_SYNC_REPLY };
    msg.u.sync_reply.members = updates;
    msg.u.sync_reply.member_count = FUZZ_MEMBERSHIP_PEERS;
    shoal_envelope_t envelope = { .purpose = SHOAL_PURPOSE_FRAME, .sender = s_life (0) };
    memset (envelope.recipient.id, 0xee, SHOAL_ID_SIZE);
    envelope.recipient.life = 1;
    shoal_membership_receive (core, now, &envelope, &msg, NULL);
}

static void
s_call (shoal_membership_t *core, uint64_t now, int call, int peer)
{
    shoal_life_t life = s_life (peer);
    shoal_meta_t meta = s_peers[peer].meta;
    switch (call) {
    case FUZZ_MEMBERSHIP_TEACH:
        s_teach (core, now);
        break;
    case FUZZ_MEMBERSHIP_JOIN:
        shoal_membership_join (core, now, s_peers[peer].addr);
        break;
    case FUZZ_MEMBERSHIP_INTRODUCE:
        shoal_membership_introduce (core, now, &life, 1, (uint8_t) (peer & 1), s_peers[peer].addr);
        break;
    case FUZZ_MEMBERSHIP_LEAVE:
        shoal_membership_leave (core, now);
        break;
    case FUZZ_MEMBERSHIP_SET_META:
        meta.addr = "10.0.0.238:7946";
        shoal_membership_set_meta (core, now, &meta);
        break;
    case FUZZ_MEMBERSHIP_HINT: {
        shoal_id_t self;
        memset (self.bytes, 0xee, SHOAL_ID_SIZE);
        shoal_membership_hint (core, now, peer == 7 ? &self : &s_peers[peer].id);
        break;
    }
    default:
        shoal_membership_tick (core, now);
        break;
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    shoal_id_t id;
    memset (id.bytes, 0xee, SHOAL_ID_SIZE);
    shoal_meta_t meta = { .name = "self", .addr = "10.0.0.238:7946", .life = 1 };
    uint64_t now = 1000;
    shoal_membership_t *core = shoal_membership_new (&s_config, &id, 1, &meta, size, now, NULL);
    FUZZ_REQUIRE (core, "no node");
    size_t at = 0;
    while (at < size) {
        uint8_t header = data[at++];
        switch (header & 3) {
        case FUZZ_MEMBERSHIP_TICK:
            now += (uint64_t) (header >> 2) * 37;
            shoal_membership_tick (core, now);
            break;
        case FUZZ_MEMBERSHIP_MESSAGE: {
            if (size - at < 2)
                break;
            size_t length = (size_t) data[at] << 8 | data[at + 1];
            at += 2;
            if (length > size - at)
                length = size - at;
            int peer = (header >> 2) & 7;
            shoal_purpose_t carrier = header & 0x40 ? SHOAL_PURPOSE_FRAME : SHOAL_PURPOSE_DATAGRAM;
            shoal_envelope_t envelope = { .purpose = (uint8_t) carrier, .sender = s_life (peer) };
            if (!(header & 0x20)) {
                memset (envelope.recipient.id, 0xee, SHOAL_ID_SIZE);
                envelope.recipient.life = 1;
            }
            shoal_msg_t msg;
            shoal_wire_error_t err;
            shoal_arena_reset (&s_arena);
            if (length <= 65536 &&
                shoal_msg_decode (data + at, length, carrier, &msg, &s_arena, &err) == 0)
                shoal_membership_receive (core, now, &envelope, &msg, s_peers[peer].addr);
            at += length;
            break;
        }
        default:
            s_call (core, now, (header >> 2) & 7, (header >> 5) & 7);
            break;
        }
        s_check (core, now);
    }
    shoal_membership_destroy (&core);
    return 0;
}

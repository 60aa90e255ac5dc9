/*  tests/fuzz/fuzz_elector.c: the election state machine on arbitrary input.

    The input is a setup byte, then a run of steps (fuzz.h): messages from a
    handful of peers, decoded by the real decoder on the frame carrier as a
    shell would, membership changes, clock steps and ticks, and ELECTION,
    ANSWER, COORDINATOR and COORDINATOR-ACK messages built from a few bytes
    each, with terms and rounds near the node's own, so that the fuzzer
    reaches deep states without having to write msgpack. The node runs the
    loopback profile, on its first start or restarting from a saved state.

    After every step the node must keep the promises of elector.h: every
    message it hands out is an election message that encodes within a
    frame and goes to a peer, never to itself nor to nobody; the saved term
    and voters_version never go back, the voters are sorted, unique and at
    most SHOAL_VOTERS_MAX, and saved says when any of it changed; the term
    the node has seen never goes back nor falls below the saved one; events
    are LEADER or NO_LEADER, a LEADER names somebody, and names the node
    only while it acts; leader names the node exactly while it acts, and
    nobody else at a term the node has not seen. After a tick, the
    node acts exactly when its last event named it leader (it reports
    stepping down), and ticking again at the same time, as a shell does
    while next is not later than now, settles within TICKS_MAX calls.
*/

#include "tests/fuzz/fuzz.h"

#include "election/elector.h"
#include "wire/ids.h"

#include <inttypes.h>
#include <string.h>

//  Ticks at one time before a next that stays in the past is a busy loop.
#define TICKS_MAX 8

static const shoal_id_t s_nobody;
static shoal_id_t s_peers[FUZZ_ELECTOR_PEERS];
static shoal_id_t s_self;
static shoal_id_t s_voters[FUZZ_ELECTOR_NOBODY + 1]; //  by a voter operand's low four bits
static shoal_arena_t s_arena;

//  What the node showed after the last step, to compare the next with.
static struct {
    uint64_t term;
    shoal_elector_saved_t saved; //  voters in s_saved_voters
    uint64_t sent_round;         //  of its last COORDINATOR
    uint64_t peer_round[FUZZ_ELECTOR_PEERS];
    bool reported_self; //  its last event named it leader
} s_last;
static shoal_id_t s_saved_voters[SHOAL_VOTERS_MAX];

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
    (void) argc;
    (void) argv;
    for (int i = 0; i < FUZZ_ELECTOR_PEERS; i++) {
        memset (s_peers[i].bytes, i + 1, SHOAL_ID_SIZE);
        s_voters[i] = s_peers[i];
    }
    memset (s_self.bytes, 0x03, SHOAL_ID_SIZE);
    s_self.bytes[SHOAL_ID_SIZE - 1] = 0x80;
    s_voters[FUZZ_ELECTOR_SELF] = s_self;
    memset (s_voters[FUZZ_ELECTOR_NOBODY].bytes, 0, SHOAL_ID_SIZE);
    shoal_arena_init (&s_arena, SHOAL_DECODE_ARENA (65536));
    return 0;
}

static bool
s_is_peer (const shoal_id_t *id)
{
    for (int i = 0; i < FUZZ_ELECTOR_PEERS; i++)
        if (shoal_id_equal (id, &s_peers[i]))
            return true;
    return false;
}

//  Reads a voter count and that many voters into voters.
static uint32_t
s_voter_list (const uint8_t *data, size_t size, size_t *at, shoal_id_t voters[32])
{
    uint32_t count = fuzz_operand (data, size, at) & 31;
    for (uint32_t i = 0; i < count; i++) {
        uint8_t operand = fuzz_operand (data, size, at);
        if ((operand & 15) <= FUZZ_ELECTOR_NOBODY)
            voters[i] = s_voters[operand & 15];
        else
            memset (voters[i].bytes, operand, SHOAL_ID_SIZE);
    }
    return count;
}

static void
s_check_outbox (const shoal_elector_t *core)
{
    const shoal_elector_send_t *sends;
    size_t count = shoal_elector_outbox (core, &sends);
    for (size_t i = 0; i < count; i++) {
        const shoal_msg_t *msg = &sends[i].msg;
        FUZZ_REQUIRE (msg->type == SHOAL_MSG_ELECTION || msg->type == SHOAL_MSG_ANSWER ||
                          msg->type == SHOAL_MSG_COORDINATOR ||
                          msg->type == SHOAL_MSG_COORDINATOR_ACK,
                      "a message of type %d", msg->type);
        fuzz_require_encodes (msg);
        FUZZ_REQUIRE (!shoal_id_equal (&sends[i].to, &s_self), "a %s to this node",
                      shoal_msg_type_name (msg->type));
        FUZZ_REQUIRE (s_is_peer (&sends[i].to), "a %s to a node that is not a peer (0x%02x...)",
                      shoal_msg_type_name (msg->type), sends[i].to.bytes[0]);
        if (msg->type == SHOAL_MSG_COORDINATOR)
            s_last.sent_round = msg->u.coordinator.round;
    }
}

static void
s_check_events (const shoal_elector_t *core, uint64_t now)
{
    const shoal_elector_event_t *events;
    size_t count = shoal_elector_events (core, &events);
    for (size_t i = 0; i < count; i++) {
        const shoal_elector_event_t *event = &events[i];
        FUZZ_REQUIRE (event->type == SHOAL_ELECTOR_LEADER || event->type == SHOAL_ELECTOR_NO_LEADER,
                      "event %zu of type %d", i, event->type);
        bool self = event->type == SHOAL_ELECTOR_LEADER && shoal_id_equal (&event->leader, &s_self);
        FUZZ_REQUIRE (event->type != SHOAL_ELECTOR_LEADER ||
                          !shoal_id_equal (&event->leader, &s_nobody),
                      "event %zu: LEADER of term %" PRIu64 " names nobody", i, event->term);
        FUZZ_REQUIRE (!self || shoal_elector_acting (core, now),
                      "event %zu: LEADER names this node (term %" PRIu64 "), which does not act", i,
                      event->term);
        s_last.reported_self = self;
    }
}

//  The saved state and the terms, against the last step's.
static void
s_check_saved (const shoal_elector_t *core)
{
    shoal_elector_saved_t saved;
    bool dirty = shoal_elector_saved (core, &saved);
    FUZZ_REQUIRE (saved.term >= s_last.saved.term,
                  "saved term went back from %" PRIu64 " to %" PRIu64, s_last.saved.term,
                  saved.term);
    FUZZ_REQUIRE (saved.voters_version >= s_last.saved.voters_version,
                  "voters_version went back from %" PRIu64 " to %" PRIu64,
                  s_last.saved.voters_version, saved.voters_version);
    FUZZ_REQUIRE (saved.voter_count <= SHOAL_VOTERS_MAX, "%" PRIu32 " voters", saved.voter_count);
    FUZZ_REQUIRE (saved.voter_count == 0 || saved.voters, "%" PRIu32 " voters at NULL",
                  saved.voter_count);
    for (uint32_t i = 1; i < saved.voter_count; i++)
        FUZZ_REQUIRE (memcmp (saved.voters[i - 1].bytes, saved.voters[i].bytes, SHOAL_ID_SIZE) < 0,
                      "voters %" PRIu32 " and %" PRIu32 " out of order", i - 1, i);
    bool changed =
        saved.term != s_last.saved.term || !shoal_id_equal (&saved.leader, &s_last.saved.leader) ||
        saved.voters_version != s_last.saved.voters_version ||
        saved.voter_count != s_last.saved.voter_count ||
        (saved.voter_count &&
         memcmp (saved.voters, s_saved_voters, saved.voter_count * sizeof *saved.voters));
    FUZZ_REQUIRE (dirty || !changed,
                  "saved changed (term %" PRIu64 ", voters_version %" PRIu64 ", %" PRIu32
                  " voters) without saying so",
                  saved.term, saved.voters_version, saved.voter_count);
    if (saved.voter_count)
        memcpy (s_saved_voters, saved.voters, saved.voter_count * sizeof *saved.voters);
    s_last.saved = saved;
    s_last.saved.voters = s_saved_voters;

    uint64_t term = shoal_elector_term (core);
    FUZZ_REQUIRE (term >= s_last.term, "term went back from %" PRIu64 " to %" PRIu64, s_last.term,
                  term);
    FUZZ_REQUIRE (term >= saved.term, "term %" PRIu64 " below the saved term %" PRIu64, term,
                  saved.term);
    s_last.term = term;
}

static void
s_check (const shoal_elector_t *core, uint64_t now, bool ticked)
{
    //  The core's own invariants, after every input (election/elector.h).
    const char *broken = "";
    FUZZ_REQUIRE (shoal_elector_check (core, &broken) == 0, "%s", broken);
    s_check_outbox (core);
    s_check_events (core, now);
    s_check_saved (core);
    bool acting = shoal_elector_acting (core, now);
    shoal_id_t leader;
    uint64_t term;
    int rc = shoal_elector_leader (core, now, &leader, &term);
    FUZZ_REQUIRE (rc == 0 || rc == -1, "leader returned %d", rc);
    FUZZ_REQUIRE (!acting || (rc == 0 && shoal_id_equal (&leader, &s_self)),
                  "acting, but leader does not name this node");
    if (rc == 0) {
        FUZZ_REQUIRE (!shoal_id_equal (&leader, &s_nobody), "leader names nobody");
        FUZZ_REQUIRE (acting || !shoal_id_equal (&leader, &s_self),
                      "leader names this node, which does not act");
        FUZZ_REQUIRE (term <= shoal_elector_term (core),
                      "a leader at term %" PRIu64 " above %" PRIu64, term,
                      shoal_elector_term (core));
    }
    if (ticked)
        FUZZ_REQUIRE (acting == s_last.reported_self, "after a tick at %" PRIu64 ", %s", now,
                      acting ? "acting, but the last event did not name this node leader"
                             : "not acting, but the last event named this node leader");
}

//  Ticks at now, and again while next is not later, as a shell's timer does.
static void
s_tick (shoal_elector_t *core, uint64_t now)
{
    for (int ticks = 1;; ticks++) {
        shoal_elector_tick (core, now);
        s_check (core, now, true);
        uint64_t next = shoal_elector_next (core);
        if (next > now)
            return;
        FUZZ_REQUIRE (ticks < TICKS_MAX,
                      "a busy loop: after %d ticks at %" PRIu64 ", next is still %" PRIu64, ticks,
                      now, next);
    }
}

static void
s_receive (shoal_elector_t *core, uint64_t now, int peer, const shoal_msg_t *msg)
{
    int rc = shoal_elector_receive (core, now, &s_peers[peer], msg);
    FUZZ_REQUIRE (rc == 0 || rc == -1, "receive returned %d", rc);
}

//  An ELECTION, ANSWER, COORDINATOR or COORDINATOR-ACK from peer, built
//  from the operands (fuzz.h).
static void
s_crafted (shoal_elector_t *core, uint64_t now, int step, int peer, const uint8_t *data,
           size_t size, size_t *at)
{
    shoal_id_t voters[32];
    shoal_elector_saved_t saved;
    shoal_elector_saved (core, &saved);
    uint64_t term = fuzz_number (fuzz_operand (data, size, at), shoal_elector_term (core));
    shoal_msg_t msg;
    memset (&msg, 0, sizeof msg);
    switch (step) {
    case FUZZ_ELECTOR_ELECTION:
        msg.type = SHOAL_MSG_ELECTION;
        msg.u.election.term = term;
        msg.u.election.priority = fuzz_operand (data, size, at) & 3;
        break;
    case FUZZ_ELECTOR_ANSWER:
        msg.type = SHOAL_MSG_ANSWER;
        msg.u.answer.term = term;
        break;
    case FUZZ_ELECTOR_COORDINATOR: {
        shoal_coordinator_t *coordinator = &msg.u.coordinator;
        msg.type = SHOAL_MSG_COORDINATOR;
        coordinator->term = term;
        coordinator->priority = fuzz_operand (data, size, at) & 3;
        coordinator->round = fuzz_number (fuzz_operand (data, size, at), s_last.peer_round[peer]);
        coordinator->voters_version =
            fuzz_number (fuzz_operand (data, size, at), saved.voters_version);
        coordinator->voter_count = s_voter_list (data, size, at, voters);
        coordinator->voters = coordinator->voter_count ? voters : NULL;
        s_last.peer_round[peer] = coordinator->round;
        break;
    }
    default: {
        shoal_coordinator_ack_t *ack = &msg.u.coordinator_ack;
        msg.type = SHOAL_MSG_COORDINATOR_ACK;
        ack->term = term;
        ack->round = fuzz_number (fuzz_operand (data, size, at), s_last.sent_round);
        ack->voters_version = fuzz_number (fuzz_operand (data, size, at), saved.voters_version);
        ack->voter_count = s_voter_list (data, size, at, voters);
        ack->voters = ack->voter_count ? voters : NULL;
        break;
    }
    }
    s_receive (core, now, peer, &msg);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    uint8_t setup = data[0];
    shoal_elector_config_t config;
    shoal_elector_config_loopback (&config);
    config.quorum = !(setup & FUZZ_ELECTOR_AVAILABLE);
    config.preempt = (setup & FUZZ_ELECTOR_PREEMPT) != 0;
    config.expect = (setup >> FUZZ_ELECTOR_EXPECT_SHIFT) & 7;
    uint32_t priority = (setup & FUZZ_ELECTOR_PRIORITY) ? 1 : 0;
    shoal_id_t voters[6] = { s_peers[4], s_peers[3], s_peers[2], s_peers[1], s_peers[0], s_self };
    shoal_elector_saved_t saved = {
        .term = 5, .leader = s_peers[4], .voters_version = 3, .voter_count = 6, .voters = voters
    };
    bool restart = (setup & FUZZ_ELECTOR_RESTART) != 0;
    uint64_t now = 1000;
    shoal_elector_t *core =
        shoal_elector_new (&config, &s_self, priority, restart ? &saved : NULL, now);
    FUZZ_REQUIRE (core, "no node: %s", shoal_elector_config_check (&config));
    //  What the node starts from is no change, even when it restarts.
    memset (&s_last, 0, sizeof s_last);
    shoal_elector_saved (core, &s_last.saved);
    if (s_last.saved.voter_count)
        memcpy (s_saved_voters, s_last.saved.voters,
                s_last.saved.voter_count * sizeof *s_last.saved.voters);
    s_last.saved.voters = s_saved_voters;
    s_check (core, now, false);

    size_t at = 1;
    while (at < size) {
        uint8_t header = data[at++];
        int step = header & 7;
        int peer = (header >> 3) & 7;
        switch (step) {
        case FUZZ_ELECTOR_TICK:
        case FUZZ_ELECTOR_NEXT:
            now =
                fuzz_step_time (now, header, step == FUZZ_ELECTOR_NEXT, shoal_elector_next (core));
            s_tick (core, now);
            continue;
        case FUZZ_ELECTOR_MEMBER: {
            bool live = (header & FUZZ_ELECTOR_LIVE) != 0;
            uint32_t member_priority = (header & FUZZ_ELECTOR_HIGH) ? 1 : 0;
            FUZZ_REQUIRE (shoal_elector_member (core, now, &s_peers[peer], member_priority, live) ==
                              0,
                          "member refused peer %d", peer);
            break;
        }
        case FUZZ_ELECTOR_MESSAGE: {
            if (size - at < 2) {
                at = size;
                break;
            }
            size_t length = (size_t) data[at] << 8 | data[at + 1];
            at += 2;
            if (length > size - at)
                length = size - at;
            shoal_msg_t msg;
            shoal_wire_error_t err;
            shoal_arena_reset (&s_arena);
            if (shoal_msg_decode (data + at, length, SHOAL_PURPOSE_FRAME, &msg, &s_arena, &err) ==
                0)
                s_receive (core, now, peer, &msg);
            at += length;
            break;
        }
        default:
            s_crafted (core, now, step, peer, data, size, &at);
            break;
        }
        s_check (core, now, false);
    }
    shoal_elector_destroy (&core);
    return 0;
}

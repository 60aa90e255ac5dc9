/*  tests/test_transport.c: a node's sockets, on loopback.

    Two or three transports on 127.0.0.1 with ports the system picks send
    each other datagrams and frames. What is sealed with the cluster key
    arrives, once, with its sender named; what is replayed, forged, sealed
    with another key, left in plaintext, oversized or plain garbage is
    dropped and counted by reason, and the transport goes on working.
    Waits are for something to arrive, bounded only against a hang (10 s),
    never a measure of speed.
*/

#include "tests/test.h"
#include "node/transport.h"

#include <arpa/inet.h>
#include <czmq.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sodium.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define WAIT_MS 10000 //  against a hang only

static shoal_purpose_t
s_carrier (bool udp)
{
    return udp ? SHOAL_PURPOSE_DATAGRAM : SHOAL_PURPOSE_FRAME;
}

typedef struct {
    shoal_keyring_t *keyring;
    shoal_transport_t *transport;
    shoal_life_t life;
    char addr[64];
} s_node_t;

static const uint8_t s_key_a[32] = { 1, 2, 3 };
static const uint8_t s_key_b[32] = { 9, 8, 7 };

//  A node on 127.0.0.1 with key (NULL: plaintext), id byte id, and links
//  that time out after link_timeout_ms (0: the transport's default).
static void
s_node_timed (s_node_t *node, const uint8_t *key, uint8_t id, uint32_t link_timeout_ms)
{
    memset (node, 0, sizeof *node);
    node->keyring = shoal_keyring_new ();
    CHECK (node->keyring != NULL);
    if (key)
        CHECK_EQ (shoal_keyring_install (node->keyring, key), 0);
    node->life.id[0] = id;
    node->life.life = 1;
    uint8_t nonce[SHOAL_ENVELOPE_NONCE];
    randombytes_buf (nonce, sizeof nonce);
    shoal_transport_config_t config = { .bind = "127.0.0.1:0",
                                        .keyring = node->keyring,
                                        .self = node->life,
                                        .peers = 8,
                                        .link_timeout_ms = link_timeout_ms };
    char why[200] = "";
    node->transport = shoal_transport_new (&config, nonce, why, sizeof why);
    if (!node->transport)
        fprintf (stderr, "transport: %s\n", why);
    CHECK (node->transport != NULL);
    snprintf (node->addr, sizeof node->addr, "127.0.0.1:%u",
              node->transport ? shoal_transport_port (node->transport) : 0);
}

static void
s_node (s_node_t *node, const uint8_t *key, uint8_t id)
{
    s_node_timed (node, key, id, 0);
}

static void
s_node_free (s_node_t *node)
{
    shoal_transport_destroy (&node->transport);
    shoal_keyring_destroy (&node->keyring);
}

//  Waits for node's UDP socket (udp) or ROUTER to be readable and reads one
//  message: 1 accepted, 0 dropped or nothing within wait_ms.
static int
s_receive_within (s_node_t *node, bool udp, shoal_arena_t *arena, shoal_transport_in_t *in,
                  int wait_ms)
{
    int fd = shoal_transport_udp_fd (node->transport);
    if (!udp) {
        size_t size = sizeof fd;
        zmq_getsockopt (shoal_transport_router (node->transport), ZMQ_FD, &fd, &size);
    }
    for (int waited = 0; waited < wait_ms; waited += 10) {
        int rc = shoal_transport_receive (node->transport, s_carrier (udp), arena, in);
        if (rc != 0)
            return rc;
        //  ZeroMQ's descriptor is edge-triggered: poll briefly, then try.
        struct pollfd p = { .fd = fd, .events = POLLIN };
        poll (&p, 1, 10);
    }
    return 0;
}

static int
s_receive (s_node_t *node, bool udp, shoal_arena_t *arena, shoal_transport_in_t *in)
{
    return s_receive_within (node, udp, arena, in, WAIT_MS);
}

//  Sends msg to b as a frame, once: a new link holds it until its
//  connection is made (shoal_transport_flush, which the node's loop calls
//  and this does), so the first frame arrives without being sent again.
//  1 when it arrived within WAIT_MS.
static int
s_frame_received (s_node_t *a, s_node_t *b, const shoal_msg_t *msg, shoal_arena_t *arena,
                  shoal_transport_in_t *in)
{
    if (shoal_transport_frame (a->transport, b->addr, &b->life, msg) != 0)
        return 0;
    for (int waited = 0; waited < WAIT_MS; waited += 10) {
        shoal_transport_flush (a->transport);
        if (s_receive_within (b, false, arena, in, 10) == 1)
            return 1;
    }
    return 0;
}

//  Reads until nothing more comes for a short while; returns how many
//  messages were accepted. For "nothing gets through" checks, where only
//  the absence can be seen, after the counters say the input arrived.
static int
s_drain (s_node_t *node, bool udp, shoal_arena_t *arena)
{
    shoal_transport_in_t in;
    int accepted = 0;
    for (int idle = 0; idle < 20; idle++) {
        int rc = shoal_transport_receive (node->transport, s_carrier (udp), arena, &in);
        if (rc > 0)
            accepted++, idle = 0;
        usleep (5000);
    }
    return accepted;
}

static uint64_t
s_refused (s_node_t *node, shoal_open_result_t why)
{
    shoal_transport_stats_t stats;
    shoal_transport_stats (node->transport, &stats);
    return stats.refused[why];
}

//  Polls node's counters until fn says the input arrived (WAIT_MS bound).
static bool
s_until_refused (s_node_t *node, bool udp, shoal_arena_t *arena, shoal_open_result_t why,
                 uint64_t count)
{
    shoal_transport_in_t in;
    for (int waited = 0; waited < WAIT_MS; waited += 5) {
        shoal_transport_receive (node->transport, s_carrier (udp), arena, &in);
        if (s_refused (node, why) >= count)
            return true;
        usleep (5000);
    }
    return false;
}

static shoal_msg_t
s_ping (uint32_t seq)
{
    shoal_msg_t msg = { .type = SHOAL_MSG_PING };
    msg.u.ping.seq = seq;
    return msg;
}

static shoal_msg_t
s_election (uint64_t term)
{
    shoal_msg_t msg = { .type = SHOAL_MSG_ELECTION };
    msg.u.election.term = term;
    msg.u.election.priority = 7;
    return msg;
}

//  A raw UDP socket on 127.0.0.1, port picked by the system.
static int
s_raw_udp (uint16_t *port)
{
    int fd = socket (AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in address = { .sin_family = AF_INET };
    address.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    bind (fd, (struct sockaddr *) &address, sizeof address);
    socklen_t size = sizeof address;
    getsockname (fd, (struct sockaddr *) &address, &size);
    *port = ntohs (address.sin_port);
    return fd;
}

static void
s_raw_send (int fd, uint16_t port, const void *data, size_t size)
{
    struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons (port) };
    to.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    CHECK_EQ (sendto (fd, data, size, 0, (struct sockaddr *) &to, sizeof to), (long) size);
}

static void
a_sealed_datagram_and_frame_arrive_with_their_sender (void)
{
    s_node_t a, b;
    s_node (&a, s_key_a, 1);
    s_node (&b, s_key_a, 2);
    shoal_arena_t arena;
    CHECK_EQ (shoal_arena_init (&arena, 1 << 16), 0);
    shoal_msg_t ping = s_ping (42);
    CHECK_EQ (shoal_transport_datagram (a.transport, b.addr, &b.life, &ping), 0);
    shoal_transport_in_t in;
    CHECK_EQ (s_receive (&b, true, &arena, &in), 1);
    CHECK_EQ (in.msg.type, SHOAL_MSG_PING);
    CHECK_EQ (in.msg.u.ping.seq, 42);
    CHECK_EQ (in.envelope.sender.id[0], 1);
    CHECK_EQ (in.envelope.sender.life, 1);
    CHECK_EQ (in.envelope.mode, SHOAL_ENVELOPE_SEALED);
    CHECK_STR (in.from, a.addr);
    //  Unaddressed: first contact with a seed whose id is not known yet.
    CHECK_EQ (shoal_transport_datagram (a.transport, b.addr, NULL, &ping), 0);
    CHECK_EQ (s_receive (&b, true, &arena, &in), 1);
    CHECK_EQ (in.envelope.recipient.life, 0);
    //  Frames: the first one, sent while the DEALER still connects, waits
    //  for the connection and arrives.
    shoal_msg_t election = s_election (5);
    CHECK_EQ (s_frame_received (&a, &b, &election, &arena, &in), 1);
    CHECK_EQ (in.msg.type, SHOAL_MSG_ELECTION);
    CHECK_EQ (in.msg.u.election.term, 5);
    CHECK_EQ (in.envelope.sender.id[0], 1);
    CHECK_STR (in.from, "");
    //  Once connected, every frame arrives, in order.
    for (uint64_t term = 10; term < 20; term++) {
        election.u.election.term = term;
        CHECK_EQ (shoal_transport_frame (a.transport, b.addr, &b.life, &election), 0);
    }
    for (uint64_t term = 10; term < 20; term++) {
        CHECK_EQ (s_receive (&b, false, &arena, &in), 1);
        CHECK_EQ (in.msg.u.election.term, term);
    }
    shoal_transport_stats_t stats;
    shoal_transport_stats (b.transport, &stats);
    CHECK (stats.received[SHOAL_PURPOSE_DATAGRAM - 1] == 2);
    CHECK (stats.received[SHOAL_PURPOSE_FRAME - 1] == 11);
    shoal_arena_release (&arena);
    s_node_free (&a);
    s_node_free (&b);
}

//  A datagram to a port where nothing listens any more (a process that
//  died) comes back from the kernel as ICMP port unreachable: the UDP
//  socket polls POLLERR, and shoal_transport_unreachable names where the
//  datagram went. Datagrams that wait are still read, and an empty error
//  queue says so.
static void
a_datagram_to_a_closed_port_is_reported_unreachable (void)
{
    s_node_t a, b, gone;
    s_node (&a, s_key_a, 1);
    s_node (&b, s_key_a, 2);
    s_node (&gone, s_key_a, 3);
    char gone_addr[64];
    snprintf (gone_addr, sizeof gone_addr, "%s", gone.addr);
    s_node_free (&gone);
    shoal_msg_t ping = s_ping (7);
    char addr[SHOAL_ADDR_MAX + 1] = "";
    CHECK_EQ (shoal_transport_unreachable (a.transport, addr, sizeof addr), -1);
    CHECK_EQ (shoal_transport_datagram (a.transport, gone_addr, NULL, &ping), 0);
    CHECK_EQ (shoal_transport_datagram (b.transport, a.addr, &a.life, &ping), 0);
    struct pollfd p = { .fd = shoal_transport_udp_fd (a.transport), .events = POLLIN };
    bool error = false;
    for (int waited = 0; waited < WAIT_MS && !error; waited += 10) {
        CHECK (poll (&p, 1, 10) >= 0);
        error = p.revents & POLLERR;
    }
    CHECK (error);
    //  The error pending on the socket would fail the next send, whatever
    //  its destination: it is sent all the same.
    CHECK_EQ (shoal_transport_datagram (a.transport, b.addr, &b.life, &ping), 0);
    CHECK_EQ (shoal_transport_unreachable (a.transport, addr, sizeof addr), 1);
    CHECK_STR (addr, gone_addr);
    CHECK_EQ (shoal_transport_unreachable (a.transport, addr, sizeof addr), -1);
    //  b's datagram is there to be read, error or not.
    shoal_arena_t arena;
    CHECK_EQ (shoal_arena_init (&arena, 1 << 16), 0);
    shoal_transport_in_t in;
    CHECK_EQ (s_receive (&a, true, &arena, &in), 1);
    CHECK_EQ (in.msg.u.ping.seq, 7);
    shoal_transport_stats_t stats;
    shoal_transport_stats (a.transport, &stats);
    CHECK_EQ (stats.unreachable, 1);
    CHECK_EQ (stats.send_dropped, 0);
    CHECK_EQ (s_receive (&b, true, &arena, &in), 1);
    p.revents = 0;
    CHECK_EQ (poll (&p, 1, 0), 0); //  nothing left: no POLLERR to spin on
    shoal_arena_release (&arena);
    s_node_free (&a);
    s_node_free (&b);
}

//  A datagram captured on the way and sent again is refused as a replay;
//  one sealed with another key, or in plaintext, or garbage, never gets in.
static void
replayed_forged_and_foreign_datagrams_are_refused (void)
{
    s_node_t a, b, stranger, open;
    s_node (&a, s_key_a, 1);
    s_node (&b, s_key_a, 2);
    s_node (&stranger, s_key_b, 3);
    s_node (&open, NULL, 4);
    shoal_arena_t arena;
    CHECK_EQ (shoal_arena_init (&arena, 1 << 16), 0);
    //  Capture: a sends to a raw socket, as if on the wire to b.
    uint16_t tap_port;
    int tap = s_raw_udp (&tap_port);
    char tap_addr[64];
    snprintf (tap_addr, sizeof tap_addr, "127.0.0.1:%u", tap_port);
    shoal_msg_t ping = s_ping (7);
    CHECK_EQ (shoal_transport_datagram (a.transport, tap_addr, &b.life, &ping), 0);
    uint8_t captured[2048];
    ssize_t size = recv (tap, captured, sizeof captured, 0);
    CHECK (size > 0);
    uint16_t b_port = shoal_transport_port (b.transport);
    s_raw_send (tap, b_port, captured, (size_t) size);
    shoal_transport_in_t in;
    CHECK_EQ (s_receive (&b, true, &arena, &in), 1); //  the first copy is a's
    s_raw_send (tap, b_port, captured, (size_t) size);
    CHECK (s_until_refused (&b, true, &arena, SHOAL_OPEN_REPLAYED, 1));
    //  A bit flipped in the ciphertext of a fresh one: forged. (Flipped in
    //  one already seen, it is refused as a replay before any check.)
    CHECK_EQ (shoal_transport_datagram (a.transport, tap_addr, &b.life, &ping), 0);
    size = recv (tap, captured, sizeof captured, 0);
    CHECK (size > 0);
    captured[size - 1] ^= 1;
    s_raw_send (tap, b_port, captured, (size_t) size);
    CHECK (s_until_refused (&b, true, &arena, SHOAL_OPEN_FORGED, 1));
    //  Another cluster's key, and plaintext.
    CHECK_EQ (shoal_transport_datagram (stranger.transport, b.addr, &b.life, &ping), 0);
    CHECK (s_until_refused (&b, true, &arena, SHOAL_OPEN_UNKNOWN_KEY, 1));
    CHECK_EQ (shoal_transport_datagram (open.transport, b.addr, &b.life, &ping), 0);
    CHECK (s_until_refused (&b, true, &arena, SHOAL_OPEN_PLAINTEXT, 1));
    //  Garbage, empty, and one byte over the datagram limit.
    uint8_t junk[SHOAL_DATAGRAM_MAX + 1];
    memset (junk, 0xab, sizeof junk);
    s_raw_send (tap, b_port, junk, 3);
    s_raw_send (tap, b_port, junk, 0);
    s_raw_send (tap, b_port, junk, sizeof junk);
    CHECK (s_until_refused (&b, true, &arena, SHOAL_OPEN_SIZE, 3));
    CHECK_EQ (s_drain (&b, true, &arena), 0);
    //  And b still hears a.
    ping.u.ping.seq = 8;
    CHECK_EQ (shoal_transport_datagram (a.transport, b.addr, &b.life, &ping), 0);
    CHECK_EQ (s_receive (&b, true, &arena, &in), 1);
    CHECK_EQ (in.msg.u.ping.seq, 8);
    close (tap);
    shoal_arena_release (&arena);
    s_node_free (&a);
    s_node_free (&b);
    s_node_free (&stranger);
    s_node_free (&open);
}

//  Reads node's carrier until a receive refuses an envelope (WAIT_MS
//  bound, the sender flushing its links meanwhile); returns why, with where
//  it came from in from.
static shoal_open_result_t
s_refusal (s_node_t *node, s_node_t *sender, bool udp, shoal_arena_t *arena, char *from,
           size_t from_size)
{
    shoal_transport_in_t in;
    for (int waited = 0; waited < WAIT_MS; waited += 5) {
        shoal_transport_flush (sender->transport);
        shoal_transport_receive (node->transport, s_carrier (udp), arena, &in);
        shoal_open_result_t why = shoal_transport_refused (node->transport, from, from_size);
        if (why != SHOAL_OPEN_OK)
            return why;
        usleep (5000);
    }
    return SHOAL_OPEN_OK;
}

//  What does not authenticate is refused, and the node is told who sent it:
//  a datagram's address and port, a frame's IP address.
static void
a_refused_envelope_names_its_sender (void)
{
    s_node_t b, stranger;
    s_node (&b, s_key_a, 2);
    s_node (&stranger, s_key_b, 3);
    shoal_arena_t arena;
    CHECK_EQ (shoal_arena_init (&arena, 1 << 16), 0);
    char from[SHOAL_ADDR_MAX + 1] = "";
    shoal_msg_t ping = s_ping (1);
    CHECK_EQ (shoal_transport_datagram (stranger.transport, b.addr, &b.life, &ping), 0);
    CHECK_EQ (s_refusal (&b, &stranger, true, &arena, from, sizeof from), SHOAL_OPEN_UNKNOWN_KEY);
    CHECK_STR (from, stranger.addr);
    shoal_msg_t election = s_election (1);
    CHECK_EQ (shoal_transport_frame (stranger.transport, b.addr, &b.life, &election), 0);
    CHECK_EQ (s_refusal (&b, &stranger, false, &arena, from, sizeof from), SHOAL_OPEN_UNKNOWN_KEY);
    CHECK_STR (from, "127.0.0.1");
    //  A receive that refuses nothing says so.
    shoal_transport_in_t in;
    shoal_transport_receive (b.transport, SHOAL_PURPOSE_DATAGRAM, &arena, &in);
    CHECK_EQ (shoal_transport_refused (b.transport, from, sizeof from), SHOAL_OPEN_OK);
    CHECK_STR (from, "");
    shoal_arena_release (&arena);
    s_node_free (&b);
    s_node_free (&stranger);
}

//  Garbage at the ROUTER: frames of the wrong count, junk bytes, a frame
//  larger than a frame may be. All dropped; real frames still get through.
static void
garbage_frames_are_dropped_and_counted (void)
{
    s_node_t a, b;
    s_node (&a, s_key_a, 1);
    s_node (&b, s_key_a, 2);
    shoal_arena_t arena;
    CHECK_EQ (shoal_arena_init (&arena, 1 << 16), 0);
    zsock_t *rogue = zsock_new (ZMQ_DEALER);
    zsock_set_sndtimeo (rogue, 1000);
    CHECK_EQ (zsock_connect (rogue, "tcp://%s", b.addr), 0);
    CHECK_EQ (zstr_send (rogue, "hello"), 0);
    CHECK_EQ (zstr_sendx (rogue, "two", "parts", NULL), 0);
    size_t big = SHOAL_FRAME_MAX + 1;
    uint8_t *huge = calloc (1, big);
    //  Over ZMQ_MAXMSGSIZE: the ROUTER drops the connection, not the node.
    zmq_send (zsock_resolve (rogue), huge, big, 0);
    free (huge);
    CHECK (s_until_refused (&b, false, &arena, SHOAL_OPEN_SIZE, 1));
    shoal_transport_stats_t stats;
    shoal_transport_in_t in;
    for (int waited = 0; waited < WAIT_MS; waited += 5) {
        shoal_transport_receive (b.transport, SHOAL_PURPOSE_FRAME, &arena, &in);
        shoal_transport_stats (b.transport, &stats);
        if (stats.malformed >= 1)
            break;
        usleep (5000);
    }
    CHECK (stats.malformed >= 1);
    shoal_msg_t election = s_election (3);
    CHECK_EQ (s_frame_received (&a, &b, &election, &arena, &in), 1);
    zsock_destroy (&rogue);
    shoal_arena_release (&arena);
    s_node_free (&a);
    s_node_free (&b);
}

//  Two nodes without keys talk in plaintext; bad addresses are refused
//  with -1, not crashed on; a bind that cannot work says why.
static void
plaintext_pairs_talk_and_bad_addresses_are_refused (void)
{
    s_node_t a, b;
    s_node (&a, NULL, 1);
    s_node (&b, NULL, 2);
    shoal_arena_t arena;
    CHECK_EQ (shoal_arena_init (&arena, 1 << 16), 0);
    shoal_msg_t ping = s_ping (1);
    CHECK_EQ (shoal_transport_datagram (a.transport, b.addr, &b.life, &ping), 0);
    shoal_transport_in_t in;
    CHECK_EQ (s_receive (&b, true, &arena, &in), 1);
    CHECK_EQ (in.envelope.mode, SHOAL_ENVELOPE_PLAINTEXT);
    static const char *bad[] = { "",           "nohost",          ":80",
                                 "127.0.0.1:", "127.0.0.1:99999", "localhost:80",
                                 "[::1:80",    "1.2.3.4:x" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_EQ (shoal_transport_datagram (a.transport, bad[i], &b.life, &ping), -1);
        CHECK_EQ (shoal_transport_frame (a.transport, bad[i], &b.life, &ping), -1);
    }
    //  A frame needs a recipient: it is addressed to one node's DEALER.
    shoal_msg_t election = s_election (1);
    CHECK_EQ (shoal_transport_frame (a.transport, b.addr, NULL, &election), -1);
    //  A message too large for a datagram is refused before it is sent.
    shoal_msg_t big = s_ping (2);
    shoal_update_t updates[64];
    shoal_meta_t meta = { .name = "a-long-enough-name-to-fill-the-datagram-quickly",
                          .addr = "127.0.0.1:1" };
    for (int i = 0; i < 64; i++)
        updates[i] = (shoal_update_t){
            .node = { { (uint8_t) i, 1 } }, .incarnation = 1, .state = 0, .meta = &meta
        };
    big.u.ping.update_count = 64;
    big.u.ping.updates = updates;
    CHECK_EQ (shoal_transport_datagram (a.transport, b.addr, &b.life, &big), -1);
    shoal_transport_stats_t stats;
    shoal_transport_stats (a.transport, &stats);
    CHECK (stats.send_dropped >= 2 * 8 + 2);
    //  The port is taken: the bind says so.
    shoal_transport_config_t config = { .bind = a.addr, .keyring = a.keyring, .self = a.life };
    uint8_t nonce[SHOAL_ENVELOPE_NONCE] = { 0 };
    char why[200] = "";
    CHECK (shoal_transport_new (&config, nonce, why, sizeof why) == NULL);
    CHECK_CONTAINS (why, "bind");
    config.bind = "127.0.0.1:99999"; //  (a name would ask DNS, which may be slow to fail)
    CHECK (shoal_transport_new (&config, nonce, why, sizeof why) == NULL);
    CHECK_CONTAINS (why, "cannot resolve");
    shoal_arena_release (&arena);
    s_node_free (&a);
    s_node_free (&b);
}

//  Frames for a link that never connects (nobody listens there) wait
//  their second, 16 at most, then are dropped and counted; past its first
//  second the link holds nothing.
static void
a_frame_nobody_takes_is_dropped_after_a_second (void)
{
    s_node_t a;
    s_node (&a, NULL, 1);
    shoal_life_t nobody = { .id = { 9 }, .life = 1 };
    shoal_msg_t election = s_election (1);
    //  It holds 16 frames; the 17th is dropped at once.
    for (int i = 0; i < 16; i++)
        CHECK_EQ (shoal_transport_frame (a.transport, "127.0.0.1:1", &nobody, &election), 0);
    CHECK_EQ (shoal_transport_frame (a.transport, "127.0.0.1:1", &nobody, &election), -1);
    shoal_transport_stats_t stats;
    shoal_transport_stats (a.transport, &stats);
    CHECK_EQ (stats.send_dropped, 1);
    //  Tried again soon at first, then less often as the link ages.
    uint32_t again = shoal_transport_flush (a.transport);
    CHECK (again >= 2 && again <= 5);
    usleep (600 * 1000);
    again = shoal_transport_flush (a.transport);
    CHECK_EQ (again, 50);
    usleep (500 * 1000);
    CHECK_EQ (shoal_transport_flush (a.transport), 0);
    shoal_transport_stats (a.transport, &stats);
    CHECK_EQ (stats.send_dropped, 17);
    CHECK_EQ (stats.sent[SHOAL_PURPOSE_FRAME - 1], 0);
    //  Past its first second, the link drops at once.
    CHECK_EQ (shoal_transport_frame (a.transport, "127.0.0.1:1", &nobody, &election), -1);
    s_node_free (&a);
}

//  A ROUTER of the test's own on 127.0.0.1, in the place of a peer: what it
//  receives names the connection it came on (the ROUTER's routing id).
//  Sends msg to it as a frame through a's link, once (held until the link
//  connects, as s_frame_received), and returns the routing id it came
//  with, or NULL when nothing came within WAIT_MS.
static zframe_t *
s_routed (s_node_t *a, zsock_t *router, const char *addr, const shoal_life_t *peer,
          const shoal_msg_t *msg)
{
    if (shoal_transport_frame (a->transport, addr, peer, msg) != 0)
        return NULL;
    zpoller_t *poller = zpoller_new (router, NULL);
    zframe_t *routing = NULL;
    for (int waited = 0; waited < WAIT_MS && !routing; waited += 10) {
        shoal_transport_flush (a->transport);
        if (zpoller_wait (poller, 10) == router) {
            zmsg_t *in = zmsg_recv (router);
            routing = in ? zmsg_pop (in) : NULL;
            zmsg_destroy (&in);
        }
    }
    zpoller_destroy (&poller);
    return routing;
}

//  The connections a ROUTER accepted so far, counted from its monitor (a
//  PAIR connected to the ROUTER's events) into *accepted.
static void
s_count_accepted (void *monitor, int *accepted)
{
    zmq_msg_t part;
    zmq_msg_init (&part);
    while (zmq_msg_recv (&part, monitor, ZMQ_DONTWAIT) >= 0) {
        //  An event is two parts: 16-bit event and 32-bit value, then the
        //  endpoint.
        if (zmq_msg_size (&part) == 6) {
            uint16_t event;
            memcpy (&event, zmq_msg_data (&part), sizeof event);
            *accepted += event == ZMQ_EVENT_ACCEPTED;
        }
    }
    zmq_msg_close (&part);
}

//  A member back from suspicion is linked anew: relink closes a link past
//  its first second and connects a new one, so what follows comes on
//  another connection; link keeps the connection there. A link in its
//  first second is kept, with the frames it holds. Every link names
//  itself by its node's id (hex), on every connection: the peer's ROUTER
//  sends back over it (the nodes' ROUTERs let a new connection take the
//  name over, as this one does).
static void
relink_makes_a_new_connection_and_keeps_a_new_link (void)
{
    s_node_t a;
    s_node (&a, NULL, 1);
    zsock_t *router = zsock_new (ZMQ_ROUTER);
    CHECK (router != NULL);
    zsock_set_router_handover (router, 1);
    CHECK_EQ (zmq_socket_monitor (zsock_resolve (router), "inproc://accepted", ZMQ_EVENT_ACCEPTED),
              0);
    void *monitor = zmq_socket (zsys_init (), ZMQ_PAIR);
    CHECK (monitor && zmq_connect (monitor, "inproc://accepted") == 0);
    int port = zsock_bind (router, "tcp://127.0.0.1:*");
    CHECK (port > 0);
    char addr[32], name[33];
    snprintf (addr, sizeof addr, "127.0.0.1:%d", port);
    shoal_id_format (a.life.id, false, name);
    shoal_life_t peer = { .id = { 9 }, .life = 1 };
    shoal_msg_t election = s_election (1);
    zframe_t *first = s_routed (&a, router, addr, &peer, &election);
    CHECK (first && zframe_streq (first, name));
    int accepted = 0;
    s_count_accepted (monitor, &accepted);
    CHECK_EQ (accepted, 1);
    CHECK_EQ (shoal_transport_link (a.transport, peer.id, addr), 0);
    zframe_t *same = s_routed (&a, router, addr, &peer, &election);
    CHECK (same && zframe_streq (same, name));
    s_count_accepted (monitor, &accepted);
    CHECK_EQ (accepted, 1);
    //  Past its first second, relink makes the link again.
    usleep (1100 * 1000);
    CHECK_EQ (shoal_transport_relink (a.transport, peer.id, addr), 0);
    zframe_t *again = s_routed (&a, router, addr, &peer, &election);
    CHECK (again && zframe_streq (again, name));
    s_count_accepted (monitor, &accepted);
    CHECK_EQ (accepted, 2);
    //  A new link that holds a frame (nobody listens there) keeps it.
    shoal_life_t nobody = { .id = { 8 }, .life = 1 };
    CHECK_EQ (shoal_transport_frame (a.transport, "127.0.0.1:1", &nobody, &election), 0);
    CHECK_EQ (shoal_transport_relink (a.transport, nobody.id, "127.0.0.1:1"), 0);
    CHECK (shoal_transport_flush (a.transport));
    shoal_transport_stats_t stats;
    shoal_transport_stats (a.transport, &stats);
    CHECK_EQ (stats.send_dropped, 0);
    CHECK_EQ (stats.links_open, 2);
    CHECK_EQ (shoal_transport_relink (a.transport, nobody.id, "nohost"), -1);
    //  Relink makes no link where there was none: links are made on use.
    shoal_life_t stranger = { .id = { 7 }, .life = 1 };
    CHECK_EQ (shoal_transport_relink (a.transport, stranger.id, addr), 0);
    shoal_transport_stats (a.transport, &stats);
    CHECK_EQ (stats.links_open, 1);
    zframe_destroy (&first);
    zframe_destroy (&same);
    zframe_destroy (&again);
    zmq_close (monitor);
    zsock_destroy (&router);
    s_node_free (&a);
}

//  Two nodes whose links time out after 1 s, a's ELECTION received by b:
//  b has a route back to a.
static void
s_pair_asked (s_node_t *a, s_node_t *b, shoal_arena_t *arena, shoal_transport_in_t *in)
{
    s_node_timed (a, s_key_a, 1, 1000);
    s_node_timed (b, s_key_a, 2, 1000);
    CHECK_EQ (shoal_arena_init (arena, 1 << 16), 0);
    shoal_msg_t election = s_election (3);
    CHECK_EQ (s_frame_received (a, b, &election, arena, in), 1);
}

//  A node that heard a member over the connection the member made sends
//  back over it, through its ROUTER, and makes no link of its own; a link
//  that carried nothing for four link timeouts is closed, and the next
//  frame makes one again, its first frame held until it connects. Without a
//  fresh frame from the member (two link timeouts), frames go over a link.
static void
answers_go_back_over_the_members_connection_and_idle_links_close (void)
{
    s_node_t a, b;
    shoal_arena_t arena;
    shoal_transport_in_t in;
    s_pair_asked (&a, &b, &arena, &in);
    shoal_msg_t election = s_election (3);
    shoal_transport_stats_t stats;
    shoal_transport_stats (b.transport, &stats);
    CHECK_EQ (stats.links_routed, 1);
    //  b answers: over a's connection, no DEALER of b's, once it routes
    //  back (as a leader does).
    shoal_transport_route_back (b.transport, true);
    election.u.election.term = 4;
    CHECK_EQ (s_frame_received (&b, &a, &election, &arena, &in), 1);
    CHECK_EQ (in.msg.u.election.term, 4);
    CHECK_EQ (in.envelope.sender.id[0], 2);
    shoal_transport_stats (b.transport, &stats);
    CHECK_EQ (stats.links_open, 0);
    CHECK_EQ (stats.frames_routed, 1);
    //  A route past two link timeouts is not used: b links a.
    usleep (2100 * 1000);
    election.u.election.term = 5;
    CHECK_EQ (s_frame_received (&b, &a, &election, &arena, &in), 1);
    CHECK_EQ (in.msg.u.election.term, 5);
    shoal_transport_stats (b.transport, &stats);
    CHECK_EQ (stats.links_open, 1);
    CHECK_EQ (stats.frames_routed, 1);
    CHECK_EQ (stats.links_routed, 0);
    //  Idle for four link timeouts (4 s), a's link and b's are closed.
    for (int waited = 0; waited < 4500; waited += 50) {
        shoal_transport_flush (a.transport);
        shoal_transport_flush (b.transport);
        usleep (50 * 1000);
    }
    shoal_transport_stats (a.transport, &stats);
    CHECK_EQ (stats.links_open, 0);
    CHECK_EQ (stats.links_closed_idle, 1);
    shoal_transport_stats (b.transport, &stats);
    CHECK_EQ (stats.links_open, 0);
    CHECK_EQ (stats.links_closed_idle, 1);
    //  The next frame makes a link again, and arrives.
    election.u.election.term = 6;
    CHECK_EQ (s_frame_received (&a, &b, &election, &arena, &in), 1);
    CHECK_EQ (in.msg.u.election.term, 6);
    shoal_transport_stats (a.transport, &stats);
    CHECK_EQ (stats.links_open, 1);
    CHECK_EQ (stats.send_dropped, 0);
    shoal_arena_release (&arena);
    s_node_free (&a);
    s_node_free (&b);
}

//  An answer goes back over the asker's connection on any node, a leader
//  or not: the member that many ask at once (the highest rank, in an
//  election) needs no link to each. Other frames still go over links.
static void
answers_go_back_over_the_askers_connection_on_any_node (void)
{
    s_node_t a, b;
    shoal_arena_t arena;
    shoal_transport_in_t in;
    s_pair_asked (&a, &b, &arena, &in);
    shoal_msg_t election = s_election (3);
    shoal_msg_t answer = { .type = SHOAL_MSG_ANSWER };
    answer.u.answer.term = 3;
    CHECK_EQ (s_frame_received (&b, &a, &answer, &arena, &in), 1);
    CHECK_EQ (in.msg.type, SHOAL_MSG_ANSWER);
    shoal_transport_stats_t stats;
    shoal_transport_stats (b.transport, &stats);
    CHECK_EQ (stats.links_open, 0);
    CHECK_EQ (stats.frames_routed, 1);
    //  Not an answer: over a link of b's own.
    CHECK_EQ (s_frame_received (&b, &a, &election, &arena, &in), 1);
    shoal_transport_stats (b.transport, &stats);
    CHECK_EQ (stats.links_open, 1);
    CHECK_EQ (stats.frames_routed, 1);
    shoal_arena_release (&arena);
    s_node_free (&a);
    s_node_free (&b);
}

//  Reads b's monitor until an event comes (WAIT_MS bound): what
//  shoal_transport_closed returned for it, or -1 when none came.
static int
s_closed_event (s_node_t *b, uint8_t id[SHOAL_ID_SIZE])
{
    for (int waited = 0; waited < WAIT_MS; waited += 10) {
        int rc = shoal_transport_closed (b->transport, id);
        if (rc >= 0)
            return rc;
        usleep (10 * 1000);
    }
    return -1;
}

//  A member's connection to the ROUTER that closes while in use (its
//  process gone, its kernel closing it) is told, with the member's id, for
//  the node to take as a hint; one closed after it fell idle (its owner
//  closing an unused link) is not.
static void
a_connection_closed_in_use_is_told (void)
{
    s_node_t a, b, c;
    s_node_timed (&a, s_key_a, 1, 1000);
    s_node_timed (&b, s_key_a, 2, 1000);
    s_node_timed (&c, s_key_a, 3, 1000);
    CHECK (shoal_transport_monitor (b.transport) != NULL);
    shoal_arena_t arena;
    CHECK_EQ (shoal_arena_init (&arena, 1 << 16), 0);
    shoal_transport_in_t in;
    shoal_msg_t election = s_election (3);
    CHECK_EQ (s_frame_received (&a, &b, &election, &arena, &in), 1);
    CHECK_EQ (s_frame_received (&c, &b, &election, &arena, &in), 1);
    uint8_t id[SHOAL_ID_SIZE] = { 0 };
    CHECK_EQ (shoal_transport_closed (b.transport, id), -1);
    s_node_free (&a);
    CHECK_EQ (s_closed_event (&b, id), 1);
    CHECK_EQ (id[0], 1);
    shoal_transport_stats_t stats;
    shoal_transport_stats (b.transport, &stats);
    CHECK_EQ (stats.routes_closed, 1);
    //  c's link falls idle and c closes it (four link timeouts): told as
    //  an event about no member in use.
    for (int waited = 0; waited < 4500; waited += 50) {
        shoal_transport_flush (c.transport);
        usleep (50 * 1000);
    }
    shoal_transport_stats (c.transport, &stats);
    CHECK_EQ (stats.links_closed_idle, 1);
    CHECK_EQ (s_closed_event (&b, id), 0);
    shoal_transport_stats (b.transport, &stats);
    CHECK_EQ (stats.routes_closed, 1);
    shoal_arena_release (&arena);
    s_node_free (&b);
    s_node_free (&c);
    //  Transports made one after another, each where the last was freed,
    //  each have a monitor (the last one's name is freed only later).
    for (int i = 0; i < 20; i++) {
        s_node (&a, s_key_a, 1);
        CHECK (shoal_transport_monitor (a.transport) != NULL);
        s_node_free (&a);
    }
}

//  Past 64 links, the one used least recently is closed for a new one.
static void
links_are_capped_the_least_recently_used_closed_first (void)
{
    s_node_t a;
    s_node (&a, NULL, 1);
    zsock_t *router = zsock_new (ZMQ_ROUTER);
    CHECK (router != NULL);
    int port = zsock_bind (router, "tcp://127.0.0.1:*");
    CHECK (port > 0);
    char addr[32];
    snprintf (addr, sizeof addr, "127.0.0.1:%d", port);
    shoal_life_t peer = { .id = { 0, 1 }, .life = 1 };
    for (int i = 0; i < 70; i++) {
        peer.id[1] = (uint8_t) (i + 1);
        CHECK_EQ (shoal_transport_link (a.transport, peer.id, addr), 0);
        //  The first one used again: the second is the oldest.
        if (i == 63) {
            peer.id[1] = 1;
            CHECK_EQ (shoal_transport_link (a.transport, peer.id, addr), 0);
        }
        usleep (1000);
    }
    shoal_transport_stats_t stats;
    shoal_transport_stats (a.transport, &stats);
    CHECK_EQ (stats.links_open, 64);
    CHECK_EQ (stats.links_evicted, 6);
    //  A link there fails to take a bad address (-1); none there, no link.
    peer.id[1] = 1;
    CHECK_EQ (shoal_transport_relink (a.transport, peer.id, "nohost"), -1);
    peer.id[1] = 2;
    CHECK_EQ (shoal_transport_relink (a.transport, peer.id, "nohost"), 0);
    zsock_destroy (&router);
    s_node_free (&a);
}

//  A peer in a child process: a bare ROUTER (libzmq, a context of the
//  child's own) that writes its port to ports, then a byte to frames for
//  each message it receives. It never returns.
static void
s_peer_process (int ports, int frames)
{
    void *context = zmq_ctx_new ();
    void *router = zmq_socket (context, ZMQ_ROUTER);
    char endpoint[64] = "";
    size_t size = sizeof endpoint;
    int port = 0;
    if (zmq_bind (router, "tcp://127.0.0.1:*") == 0 &&
        zmq_getsockopt (router, ZMQ_LAST_ENDPOINT, endpoint, &size) == 0)
        port = atoi (strrchr (endpoint, ':') + 1);
    if (write (ports, &port, sizeof port) != sizeof port)
        _exit (1);
    zmq_msg_t part;
    zmq_msg_init (&part);
    while (zmq_msg_recv (&part, router, 0) >= 0)
        if (!zmq_msg_more (&part) && write (frames, "f", 1) != 1)
            break;
    _exit (0);
}

//  The local port of an established TCP connection on 127.0.0.1 to port
//  other than except (0: any), as the kernel lists them; 0 when none.
static unsigned
s_connection_to (int port, unsigned except)
{
    FILE *table = fopen ("/proc/net/tcp", "r");
    char line[512];
    unsigned found = 0;
    while (table && !found && fgets (line, sizeof line, table)) {
        unsigned local_ip, local_port, remote_ip, remote_port, state;
        if (sscanf (line, " %*u: %x:%x %x:%x %x", &local_ip, &local_port, &remote_ip, &remote_port,
                    &state) == 5 &&
            remote_port == (unsigned) port && state == 1 && local_port != except)
            found = local_port;
    }
    if (table)
        fclose (table);
    return found;
}

//  Sends frames to the peer until it says one came (WAIT_MS bound).
static bool
s_peer_receives (s_node_t *a, const char *addr, const shoal_life_t *peer, int frames)
{
    shoal_msg_t election = s_election (1);
    for (int waited = 0; waited < WAIT_MS; waited += 50) {
        shoal_transport_frame (a->transport, addr, peer, &election);
        shoal_transport_flush (a->transport);
        struct pollfd p = { .fd = frames, .events = POLLIN };
        char byte;
        if (poll (&p, 1, 50) == 1 && read (frames, &byte, 1) == 1)
            return true;
    }
    return false;
}

//  A peer that stops answering while its kernel still acknowledges every
//  byte (the process is stopped: SIGSTOP): TCP alone would keep the
//  connection for ever. The link's pings (every 5 link timeouts, here 1 s,
//  the loopback profile's) go unanswered, so it closes that connection and
//  connects again; once the peer runs again, frames reach it.
static void
a_link_to_a_peer_that_stops_answering_is_made_again (void)
{
    int ports[2], frames[2];
    CHECK_EQ (pipe (ports), 0);
    CHECK_EQ (pipe (frames), 0);
    pid_t child = fork ();
    if (child == 0)
        s_peer_process (ports[1], frames[1]);
    CHECK (child > 0);
    int port = 0;
    CHECK_EQ (read (ports[0], &port, sizeof port), (long) sizeof port);
    CHECK (port > 0);
    s_node_t a;
    s_node_timed (&a, NULL, 1, 1000);
    char addr[32];
    snprintf (addr, sizeof addr, "127.0.0.1:%d", port);
    shoal_life_t peer = { .id = { 9 }, .life = 1 };
    CHECK (s_peer_receives (&a, addr, &peer, frames[0]));
    unsigned first = s_connection_to (port, 0);
    CHECK (first != 0);
    kill (child, SIGSTOP);
    unsigned other = 0;
    for (int waited = 0; waited < WAIT_MS && !other; waited += 20) {
        other = s_connection_to (port, first);
        usleep (20 * 1000);
    }
    CHECK (other != 0);
    kill (child, SIGCONT);
    CHECK (s_peer_receives (&a, addr, &peer, frames[0]));
    kill (child, SIGKILL);
    waitpid (child, NULL, 0);
    close (ports[0]), close (ports[1]), close (frames[0]), close (frames[1]);
    s_node_free (&a);
}

//  The node's poller reads a ZeroMQ socket's events again before it sleeps
//  only when the socket was touched since (node/actor.c, s_wait): every
//  send and every read that took a frame must say so, on links and on the
//  ROUTER, once; a read that found nothing leaves the socket quiet.
static void
sends_and_reads_mark_their_socket_touched (void)
{
    s_node_t a, b;
    s_node (&a, s_key_a, 1);
    s_node (&b, s_key_a, 2);
    shoal_arena_t arena;
    CHECK_EQ (shoal_arena_init (&arena, 1 << 16), 0);
    shoal_transport_in_t in;
    void *links[4];
    bool touched[4] = { false };
    //  A's link to B, made by a send and read from nowhere yet.
    shoal_msg_t msg = s_election (3);
    CHECK_EQ (s_frame_received (&a, &b, &msg, &arena, &in), 1);
    CHECK_EQ (shoal_transport_links (a.transport, links, touched, 4), 1u);
    CHECK (touched[0]);
    CHECK_EQ (shoal_transport_links (a.transport, links, touched, 4), 1u);
    CHECK (!touched[0]); //  told once
    CHECK (shoal_transport_router_touched (b.transport));
    CHECK (!shoal_transport_router_touched (b.transport));
    //  Nothing more to read: neither is touched by trying.
    CHECK_EQ (shoal_transport_receive (b.transport, SHOAL_PURPOSE_FRAME, &arena, &in), 0);
    CHECK (!shoal_transport_router_touched (b.transport));
    CHECK_EQ (shoal_transport_receive (a.transport, SHOAL_PURPOSE_FRAME, &arena, &in), 0);
    CHECK_EQ (shoal_transport_links (a.transport, links, touched, 4), 1u);
    CHECK (!touched[0]);
    CHECK (!shoal_transport_router_touched (a.transport));
    //  A second frame, over the link made: sent at once, and told.
    CHECK_EQ (shoal_transport_frame (a.transport, b.addr, &b.life, &msg), 0);
    CHECK_EQ (shoal_transport_links (a.transport, links, touched, 4), 1u);
    CHECK (touched[0]);
    CHECK_EQ (s_receive (&b, false, &arena, &in), 1);
    CHECK (shoal_transport_router_touched (b.transport));
    //  B answers over A's own connection (an ANSWER goes back the way the
    //  question came): B's ROUTER sends, A reads it from its link.
    shoal_msg_t answer = { .type = SHOAL_MSG_ANSWER };
    answer.u.answer.term = 3;
    CHECK_EQ (shoal_transport_frame (b.transport, a.addr, &a.life, &answer), 0);
    CHECK (shoal_transport_router_touched (b.transport));
    CHECK_EQ (s_receive (&a, false, &arena, &in), 1);
    CHECK_EQ (in.msg.type, SHOAL_MSG_ANSWER);
    CHECK_EQ (shoal_transport_links (a.transport, links, touched, 4), 1u);
    CHECK (touched[0]);
    shoal_arena_release (&arena);
    s_node_free (&a);
    s_node_free (&b);
}

//  The node reads frames only from the sockets its wait found readable
//  (node/actor.c): a read of one socket, the ROUTER or one link, takes
//  nothing from another, and a socket no longer known reads nothing.
static void
a_frame_is_read_from_the_socket_named_only (void)
{
    s_node_t a, b;
    s_node (&a, s_key_a, 1);
    s_node (&b, s_key_a, 2);
    shoal_arena_t arena;
    CHECK_EQ (shoal_arena_init (&arena, 1 << 16), 0);
    shoal_transport_in_t in;
    shoal_msg_t msg = s_election (3);
    CHECK_EQ (s_frame_received (&a, &b, &msg, &arena, &in), 1);
    void *links[4];
    bool touched[4];
    CHECK_EQ (shoal_transport_links (a.transport, links, touched, 4), 1u);
    void *router = shoal_transport_router (a.transport);
    //  B answers over A's connection: the frame waits on A's link.
    shoal_msg_t answer = { .type = SHOAL_MSG_ANSWER };
    answer.u.answer.term = 3;
    CHECK_EQ (shoal_transport_frame (b.transport, a.addr, &a.life, &answer), 0);
    int rc = 0;
    for (int waited = 0; waited < WAIT_MS && rc == 0; waited += 10) {
        CHECK_EQ (shoal_transport_receive_from (a.transport, router, &arena, &in), 0);
        rc = shoal_transport_receive_from (a.transport, links[0], &arena, &in);
        if (rc == 0)
            zclock_sleep (10);
    }
    CHECK_EQ (rc, 1);
    CHECK_EQ (in.msg.type, SHOAL_MSG_ANSWER);
    CHECK_EQ (shoal_transport_receive_from (a.transport, links[0], &arena, &in), 0);
    CHECK_EQ (shoal_transport_receive_from (a.transport, &arena, &arena, &in), 0);
    shoal_arena_release (&arena);
    s_node_free (&a);
    s_node_free (&b);
}

int
main (void)
{
    zsys_init ();
    zsys_set_logstream (NULL);
    if (sodium_init () < 0)
        return 1;
    RUN (a_sealed_datagram_and_frame_arrive_with_their_sender);
    RUN (replayed_forged_and_foreign_datagrams_are_refused);
    RUN (a_datagram_to_a_closed_port_is_reported_unreachable);
    RUN (a_refused_envelope_names_its_sender);
    RUN (garbage_frames_are_dropped_and_counted);
    RUN (plaintext_pairs_talk_and_bad_addresses_are_refused);
    RUN (a_frame_nobody_takes_is_dropped_after_a_second);
    RUN (relink_makes_a_new_connection_and_keeps_a_new_link);
    RUN (a_link_to_a_peer_that_stops_answering_is_made_again);
    RUN (answers_go_back_over_the_members_connection_and_idle_links_close);
    RUN (a_connection_closed_in_use_is_told);
    RUN (answers_go_back_over_the_askers_connection_on_any_node);
    RUN (links_are_capped_the_least_recently_used_closed_first);
    RUN (sends_and_reads_mark_their_socket_touched);
    RUN (a_frame_is_read_from_the_socket_named_only);
    return TEST_DONE ();
}

/*  tests/test_beacon.c: sealed beacons, broadcast on loopback.

    Beacons need an interface that broadcasts. The test makes one: it moves
    itself into a network namespace of its own (which needs root; without it
    the test says so and is skipped, exit status 77), brings lo up with the
    broadcast route of docs/architecture.md "Discovery", and lets zbeacon use
    every interface (ZSYS_INTERFACE='*'). Then nodes of one cluster hear
    each other's beacons on one shared port, each with the address to reach
    it; a node with another key is not heard; garbage on the port is
    dropped. Waits are bounded against a hang only.
*/

#include "tests/netns.h"
#include "tests/test.h"
#include "node/transport.h"

#include <arpa/inet.h>
#include <czmq.h>
#include <netinet/in.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define BEACON_PORT 27947 //  below the ephemeral range (32768 and up)
#define WAIT_MS     10000

typedef struct {
    shoal_keyring_t *keyring;
    shoal_transport_t *transport;
    shoal_life_t life;
} s_node_t;

//  A node whose beacons use interface ("": the process's, '*' here).
static void
s_node_on (s_node_t *node, uint8_t key_byte, uint8_t id, const char *interface_name)
{
    memset (node, 0, sizeof *node);
    node->keyring = shoal_keyring_new ();
    uint8_t key[32] = { key_byte };
    CHECK_EQ (shoal_keyring_install (node->keyring, key), 0);
    node->life.id[0] = id;
    node->life.life = 1;
    uint8_t nonce[SHOAL_ENVELOPE_NONCE];
    randombytes_buf (nonce, sizeof nonce);
    shoal_transport_config_t config = {
        .bind = "127.0.0.1:0", .keyring = node->keyring, .self = node->life, .peers = 8
    };
    char why[300] = "";
    node->transport = shoal_transport_new (&config, nonce, why, sizeof why);
    CHECK (node->transport != NULL);
    CHECK_EQ (shoal_transport_beacons_start (node->transport, BEACON_PORT, interface_name, why,
                                             sizeof why),
              0);
    if (*why)
        fprintf (stderr, "%s\n", why);
}

static void
s_node (s_node_t *node, uint8_t key_byte, uint8_t id)
{
    s_node_on (node, key_byte, id, "");
}

static void
s_publish (s_node_t *node)
{
    shoal_msg_t beacon = { .type = SHOAL_MSG_BEACON };
    memset (beacon.u.beacon.cluster.bytes, 0xaa, sizeof beacon.u.beacon.cluster.bytes);
    memcpy (beacon.u.beacon.node.bytes, node->life.id, 16);
    beacon.u.beacon.incarnation = 1;
    beacon.u.beacon.port = shoal_transport_port (node->transport);
    CHECK_EQ (shoal_transport_beacons_publish (node->transport, &beacon, 100), 0);
}

static void
s_node_free (s_node_t *node)
{
    shoal_transport_destroy (&node->transport);
    shoal_keyring_destroy (&node->keyring);
}

//  Reads node's beacons for up to wait_ms; returns how many came from the
//  node whose id starts with from_id (and checks that they came from
//  host, with the port the beacon names).
static int
s_heard_from (s_node_t *node, uint8_t from_id, const char *host, int wait_ms)
{
    shoal_arena_t arena;
    shoal_arena_init (&arena, 4096);
    shoal_transport_in_t in;
    int heard = 0;
    zpoller_t *poller = zpoller_new (shoal_transport_beacons (node->transport), NULL);
    int64_t until = zclock_mono () + wait_ms;
    while (zclock_mono () < until && !heard) {
        zpoller_wait (poller, 50);
        while (shoal_transport_receive (node->transport, SHOAL_PURPOSE_BEACON, &arena, &in) == 1) {
            if (in.msg.u.beacon.node.bytes[0] != from_id)
                continue;
            heard++;
            char expected[64];
            snprintf (expected, sizeof expected, "%s:%u", host, in.msg.u.beacon.port);
            CHECK_STR (in.from, expected);
        }
    }
    zpoller_destroy (&poller);
    shoal_arena_release (&arena);
    return heard;
}

static int
s_heard (s_node_t *node, uint8_t from_id, int wait_ms)
{
    return s_heard_from (node, from_id, "127.0.0.1", wait_ms);
}

static void
nodes_of_one_cluster_hear_each_other_and_no_one_else (void)
{
    s_node_t a, b, stranger;
    s_node (&a, 1, 1);
    s_node (&b, 1, 2);
    s_node (&stranger, 2, 3);
    s_publish (&a);
    s_publish (&b);
    s_publish (&stranger);
    CHECK (s_heard (&b, 1, WAIT_MS) > 0);
    CHECK (s_heard (&a, 2, WAIT_MS) > 0);
    //  The stranger's beacons reach b, and are refused: another key.
    shoal_transport_stats_t stats;
    int64_t until = zclock_mono () + WAIT_MS;
    do {
        s_heard (&b, 3, 50);
        shoal_transport_stats (b.transport, &stats);
    } while (stats.refused[SHOAL_OPEN_UNKNOWN_KEY] == 0 && zclock_mono () < until);
    CHECK (stats.refused[SHOAL_OPEN_UNKNOWN_KEY] > 0);
    CHECK_EQ (s_heard (&b, 3, 300), 0);
    //  Garbage on the beacon port is dropped, and beacons still come.
    int fd = socket (AF_INET, SOCK_DGRAM, 0);
    int yes = 1;
    setsockopt (fd, SOL_SOCKET, SO_BROADCAST, &yes, sizeof yes);
    struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons (BEACON_PORT) };
    to.sin_addr.s_addr = htonl (INADDR_BROADCAST);
    uint8_t junk[300];
    memset (junk, 0x5a, sizeof junk);
    for (size_t size = 0; size <= sizeof junk; size += 50)
        sendto (fd, junk, size, 0, (struct sockaddr *) &to, sizeof to);
    close (fd);
    s_publish (&a); //  sealed afresh: b took the last one already
    CHECK (s_heard (&b, 1, WAIT_MS) > 0);
    s_node_free (&a);
    s_node_free (&b);
    s_node_free (&stranger);
}

//  Nodes of one process, each on its own interface: two ends of a veth
//  pair (10.9.0.1/24 and 10.9.1.1/24, each with its subnet's broadcast) and '*'
//  (the process's setting here: 255.255.255.255, through lo). zbeacon
//  sends from the address of the interface it was given, so where a
//  node's beacons come from tells which interface it used. Asking for an
//  interface that is not there fails, naming it; and the process's
//  setting is what it was after every start.
static void
nodes_of_one_process_each_use_their_own_interface (void)
{
    int made =
        system ("ip link add v0 type veth peer name v1 && "
                "ip addr add 10.9.0.1/24 brd + dev v0 && ip addr add 10.9.1.1/24 brd + dev v1 "
                "&& ip link set v0 up && ip link set v1 up");
    CHECK_EQ (made, 0);
    if (made != 0)
        return;
    s_node_t first, second, every;
    s_node_on (&first, 1, 4, "v0");
    CHECK_STR (zsys_interface (), "*");
    s_node_on (&second, 1, 5, "v1");
    CHECK_STR (zsys_interface (), "*");
    s_node_on (&every, 1, 6, "");
    //  A listener takes each sealed beacon once, and passes over the
    //  others' while it waits for one: each check has a fresh one.
    s_publish (&first);
    CHECK (s_heard_from (&every, 4, "10.9.0.1", WAIT_MS) > 0);
    s_publish (&second);
    CHECK (s_heard_from (&every, 5, "10.9.1.1", WAIT_MS) > 0);
    s_publish (&every);
    CHECK (s_heard_from (&first, 6, "127.0.0.1", WAIT_MS) > 0);
    s_publish (&second);
    CHECK (s_heard_from (&first, 5, "10.9.1.1", WAIT_MS) > 0);

    //  No such interface: no beacons, a reason that names it, and the
    //  process's setting put back.
    s_node_t missing = { .keyring = shoal_keyring_new (), .life = { .id = { 7 }, .life = 1 } };
    uint8_t key[32] = { 1 }, nonce[SHOAL_ENVELOPE_NONCE] = { 0 };
    CHECK_EQ (shoal_keyring_install (missing.keyring, key), 0);
    shoal_transport_config_t config = {
        .bind = "127.0.0.1:0", .keyring = missing.keyring, .self = missing.life, .peers = 8
    };
    char why[300] = "";
    missing.transport = shoal_transport_new (&config, nonce, why, sizeof why);
    CHECK (missing.transport != NULL);
    if (!missing.transport) {
        fprintf (stderr, "%s\n", why);
        return;
    }
    CHECK_EQ (
        shoal_transport_beacons_start (missing.transport, BEACON_PORT, "nosuch0", why, sizeof why),
        -1);
    CHECK_CONTAINS (why, "'nosuch0'");
    CHECK (shoal_transport_beacons (missing.transport) == NULL);
    CHECK_STR (zsys_interface (), "*");
    //  Loopback never broadcasts, as czmq lists interfaces.
    CHECK_EQ (shoal_transport_beacons_start (missing.transport, BEACON_PORT, "lo", why, sizeof why),
              -1);
    CHECK_CONTAINS (why, "'lo'");
    CHECK_STR (zsys_interface (), "*");
    s_node_free (&missing);
    s_node_free (&first);
    s_node_free (&second);
    s_node_free (&every);
}

int
main (void)
{
    int rc = shoal_test_netns_enter ("beacons");
    if (rc != 0)
        return rc;
    zsys_init ();
    zsys_set_logstream (NULL);
    if (sodium_init () < 0)
        return 1;
    RUN (nodes_of_one_cluster_hear_each_other_and_no_one_else);
    RUN (nodes_of_one_process_each_use_their_own_interface);
    return TEST_DONE ();
}

/*  tests/test_sockets.c: a node without ZeroMQ sockets left goes on
    (node/sockets.h). czmq's constructors abort when ZeroMQ refuses a
    socket; here the context holds at most S_MAX sockets, so that the
    refusal comes at once.
*/
#include "tests/test.h"

#include "node/sockets.h"
#include "node/transport.h"
#include "wire/keyring.h"

#include <czmq.h>
#include <sodium.h>
#include <string.h>

#define S_MAX 12
//  Closed sockets are freed by ZeroMQ's reaper thread, soon but not at
//  once: a bound against a hang, never reached when it works.
#define S_REAPED_MS 60000

//  Takes every socket ZeroMQ still gives, as its own sockets: how many,
//  into held.
static size_t
s_take_all (void **held, size_t size)
{
    size_t count = 0;
    while (count < size && (held[count] = zmq_socket (zsys_init (), ZMQ_PAIR)))
        count++;
    return count;
}

static void
s_free_all (void **held, size_t count)
{
    for (size_t i = 0; i < count; i++)
        zmq_close (held[i]);
}

static bool
s_reaped (void)
{
    for (int waited = 0; waited < S_REAPED_MS; waited += 10) {
        if (shoal_sockets_available (2, NULL, 0))
            return true;
        zclock_sleep (10);
    }
    return false;
}

static void
refused_sockets_say_why_and_come_back (void)
{
    void *held[4 * S_MAX];
    size_t count = s_take_all (held, 4 * S_MAX);
    CHECK (count > 0 && count <= S_MAX);
    char why[128] = "";
    CHECK (!shoal_sockets_available (1, why, sizeof why));
    CHECK_CONTAINS (why, "no ZeroMQ socket: Too many open files");
    strcpy (why, "");
    CHECK (shoal_sockets_new (ZMQ_DEALER, why, sizeof why) == NULL);
    CHECK_CONTAINS (why, "no ZeroMQ socket");
    s_free_all (held, count);
    CHECK (s_reaped ());
    zsock_t *socket = shoal_sockets_new (ZMQ_DEALER, why, sizeof why);
    CHECK (socket != NULL);
    zsock_destroy (&socket);
}

static void
a_transport_without_sockets_refuses_links_and_goes_on (void)
{
    shoal_keyring_t *keyring = shoal_keyring_new ();
    CHECK (keyring != NULL);
    shoal_life_t self = { .id = { 1 }, .life = 1 };
    shoal_transport_config_t config = {
        .bind = "127.0.0.1:0", .keyring = keyring, .self = self, .peers = 8
    };
    uint8_t nonce[SHOAL_ENVELOPE_NONCE];
    randombytes_buf (nonce, sizeof nonce);
    char why[200] = "";
    shoal_transport_t *transport = shoal_transport_new (&config, nonce, why, sizeof why);
    CHECK (transport != NULL);
    void *held[4 * S_MAX];
    size_t count = s_take_all (held, 4 * S_MAX);
    const uint8_t peer[16] = { 2 };
    CHECK_EQ (shoal_transport_link (transport, peer, "127.0.0.1:9"), -1);
    shoal_transport_stats_t stats;
    shoal_transport_stats (transport, &stats);
    CHECK_EQ (stats.links_refused, 1);
    CHECK_EQ (stats.links_open, 0);
    //  A second transport cannot bind its ROUTER: it says why.
    CHECK (shoal_transport_new (&config, nonce, why, sizeof why) == NULL);
    CHECK_CONTAINS (why, "no ZeroMQ socket");
    s_free_all (held, count);
    CHECK (s_reaped ());
    //  The probe that s_reaped made is itself reaped a moment later: under
    //  load a link may still be refused then (1 run in 30 beside another
    //  test), and a later one is made.
    int linked = -1;
    for (int waited = 0; linked != 0 && waited < S_REAPED_MS; waited += 10) {
        linked = shoal_transport_link (transport, peer, "127.0.0.1:9");
        if (linked != 0)
            zclock_sleep (10);
    }
    CHECK_EQ (linked, 0);
    shoal_transport_stats (transport, &stats);
    CHECK_EQ (stats.links_open, 1);
    CHECK (stats.links_refused >= 1);
    shoal_transport_destroy (&transport);
    shoal_keyring_destroy (&keyring);
}

int
main (void)
{
    zsys_set_max_sockets (S_MAX);
    CHECK (sodium_init () >= 0);
    RUN (refused_sockets_say_why_and_come_back);
    RUN (a_transport_without_sockets_refuses_links_and_goes_on);
    return TEST_DONE ();
}

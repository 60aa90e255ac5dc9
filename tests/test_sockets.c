/*  tests/test_sockets.c: a node without ZeroMQ sockets left goes on
    (node/sockets.h). czmq's constructors abort when ZeroMQ refuses a
    socket; here the context holds at most S_MAX sockets, so that the
    refusal comes at once.

    A closed socket is freed by ZeroMQ's reaper thread a moment later, and
    a free socket can only be seen by taking it. So the checks count what
    they take up to an exact number, waiting for the reaper, and every
    "comes back" retries until it does: no check depends on how soon the
    reaper runs. (Taking only what was free at once left a slot to come
    back in the middle of a check: the fuzz build failed 1 run in 5, then
    hung at exit on the socket it should not have made.)
*/
#include "tests/test.h"

#include "node/sockets.h"
#include "node/transport.h"
#include "wire/keyring.h"

#include <czmq.h>
#include <sodium.h>
#include <string.h>

#define S_MAX 12
//  A bound against a hang, never reached when it works.
#define S_WAIT_MS 60000

//  Takes sockets until all S_MAX but in_use (open elsewhere) are held,
//  waiting for the reaper to free those closed before: how many, into held.
static size_t
s_take_all (void **held, size_t in_use)
{
    size_t want = S_MAX - in_use, count = 0;
    for (int waited = 0; count < want && waited < S_WAIT_MS; waited += 10) {
        while (count < want && (held[count] = zmq_socket (zsys_init (), ZMQ_PAIR)))
            count++;
        if (count < want)
            zclock_sleep (10);
    }
    return count;
}

static void
s_free_all (void **held, size_t count)
{
    for (size_t i = 0; i < count; i++)
        zmq_close (held[i]);
}

//  Runs first: a context that never closed a socket has no socket waiting
//  for the reaper, so the transport surely gets the three it makes.
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
    //  The transport holds three: its ROUTER, and the two PAIRs of the
    //  ROUTER's monitor (ZeroMQ's end and its own).
    void *held[S_MAX];
    size_t count = s_take_all (held, 3);
    CHECK_EQ (count, S_MAX - 3);
    const uint8_t peer[16] = { 2 };
    CHECK_EQ (shoal_transport_link (transport, peer, "127.0.0.1:9"), -1);
    shoal_transport_stats_t stats;
    shoal_transport_stats (transport, &stats);
    CHECK_EQ (stats.links_refused, 1);
    CHECK_EQ (stats.links_open, 0);
    //  A second transport cannot make its ROUTER: it says why.
    shoal_transport_t *second = shoal_transport_new (&config, nonce, why, sizeof why);
    CHECK (second == NULL);
    CHECK_CONTAINS (why, "no ZeroMQ socket");
    //  ZeroMQ's end at exit waits for every socket: a failed check must
    //  not leave one open, or the test hangs instead of failing.
    shoal_transport_destroy (&second);
    s_free_all (held, count);
    int linked = -1;
    for (int waited = 0; linked != 0 && waited < S_WAIT_MS; waited += 10) {
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

static void
refused_sockets_say_why_and_come_back (void)
{
    void *held[S_MAX];
    size_t count = s_take_all (held, 0);
    CHECK_EQ (count, S_MAX);
    char why[128] = "";
    CHECK (!shoal_sockets_available (1, why, sizeof why));
    CHECK_CONTAINS (why, "no ZeroMQ socket: Too many open files");
    strcpy (why, "");
    CHECK (shoal_sockets_new (ZMQ_DEALER, why, sizeof why) == NULL);
    CHECK_CONTAINS (why, "no ZeroMQ socket: Too many open files");
    s_free_all (held, count);
    void *socket = NULL;
    for (int waited = 0; !socket && waited < S_WAIT_MS; waited += 10) {
        socket = shoal_sockets_new (ZMQ_DEALER, NULL, 0);
        if (!socket)
            zclock_sleep (10);
    }
    CHECK (socket != NULL);
    int linger = -1;
    size_t size = sizeof linger;
    CHECK_EQ (zmq_getsockopt (socket, ZMQ_LINGER, &linger, &size), 0);
    CHECK_EQ (linger, 0);
    shoal_sockets_close (&socket);
    CHECK (socket == NULL);
    shoal_sockets_close (&socket);
    bool available = false;
    for (int waited = 0; !available && waited < S_WAIT_MS; waited += 10) {
        available = shoal_sockets_available (2, NULL, 0);
        if (!available)
            zclock_sleep (10);
    }
    CHECK (available);
}

int
main (void)
{
    zsys_set_max_sockets (S_MAX);
    CHECK (sodium_init () >= 0);
    RUN (a_transport_without_sockets_refuses_links_and_goes_on);
    RUN (refused_sockets_say_why_and_come_back);
    return TEST_DONE ();
}

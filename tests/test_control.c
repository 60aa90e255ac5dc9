/*  tests/test_control.c: the control endpoint's two ends (node/control.h)
    on their own: who may bind an endpoint, what is left of it at the end,
    and the client's failures that are known at once.

    A server here is served by a thread of the test, which answers every
    request ok, as a node's loop would.
*/
#include "tests/test.h"

#include "node/control.h"
#include "wire/keyring.h"

#include <czmq.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <pthread.h>
#include <sodium.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

//  Long enough that a call which waits for it fails its test by its
//  message: the calls that must fail at once never come near it.
#define WAIT_MS 60000

static char s_scratch[] = "/tmp/shoal-test-control-XXXXXX";
static shoal_keyring_t *s_plaintext;

//  ---------------------------------------------------------------------
//  A server, served by a thread

typedef struct {
    shoal_control_server_t *server;
    pthread_t thread;
    volatile bool stop;
} s_served_t;

static void *
s_serve (void *arg)
{
    s_served_t *served = arg;
    shoal_arena_t arena;
    if (shoal_arena_init (&arena, SHOAL_CONTROL_ARENA) != 0)
        return NULL;
    uint64_t ref = 0;
    while (!served->stop) {
        zmq_pollitem_t item = { shoal_control_server_socket (served->server), 0, ZMQ_POLLIN, 0 };
        if (zmq_poll (&item, 1, 50) <= 0)
            continue;
        shoal_control_req_t req;
        shoal_arena_reset (&arena);
        if (shoal_control_server_receive (served->server, &arena, ++ref, &req) == 1) {
            shoal_control_rep_t rep = { .code = SHOAL_REPLY_OK, .term = 7, .reason = "" };
            shoal_control_server_answer (served->server, ref, &rep);
        }
    }
    shoal_arena_release (&arena);
    return NULL;
}

static void
s_serve_start (s_served_t *served)
{
    served->stop = false;
    pthread_create (&served->thread, NULL, s_serve, served);
}

static void
s_serve_stop (s_served_t *served)
{
    served->stop = true;
    pthread_join (served->thread, NULL);
    shoal_control_server_destroy (&served->server);
}

//  True when the server at endpoint answers a members request.
static bool
s_answers (const char *endpoint)
{
    shoal_arena_t arena;
    if (shoal_arena_init (&arena, SHOAL_CONTROL_ARENA) != 0)
        return false;
    shoal_control_req_t req = { .id = 3, .op = SHOAL_OP_MEMBERS };
    shoal_control_rep_t rep;
    char why[256] = "";
    int rc =
        shoal_control_call (endpoint, s_plaintext, &req, WAIT_MS, &arena, &rep, why, sizeof why);
    if (rc != 0)
        fprintf (stderr, "  %s does not answer: %s\n", endpoint, why);
    shoal_arena_release (&arena);
    return rc == 0 && rep.term == 7;
}

static shoal_control_server_t *
s_server (const char *endpoint, char *why, size_t why_size)
{
    shoal_life_t life = { .life = 1 };
    memset (life.id, 0x5a, sizeof life.id);
    return shoal_control_server_new (endpoint, s_plaintext, &life, why, why_size);
}

//  A socket file at path that some process bound and then left without
//  removing it, as one that is killed leaves it; or, listening, one that
//  still answers. Returns the descriptor (listening) or -1.
static int
s_unix_socket (const char *path, bool listening)
{
    struct sockaddr_un address = { .sun_family = AF_UNIX };
    snprintf (address.sun_path, sizeof address.sun_path, "%s", path);
    int fd = socket (AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || bind (fd, (struct sockaddr *) &address, sizeof address) != 0) {
        perror ("bind");
        return -1;
    }
    if (listening && listen (fd, 4) == 0)
        return fd;
    close (fd);
    return -1;
}

static bool
s_exists (const char *path)
{
    struct stat st;
    return lstat (path, &st) == 0;
}

//  ---------------------------------------------------------------------
//  The node's end

//  A second node given the endpoint of a live one is refused, says why,
//  and takes nothing from it: the first still answers after.
static void
a_live_nodes_ipc_endpoint_is_never_taken (void)
{
    char path[128], endpoint[160], why[256] = "";
    snprintf (path, sizeof path, "%s/live", s_scratch);
    snprintf (endpoint, sizeof endpoint, "ipc://%s", path);
    s_served_t first = { .server = s_server (endpoint, why, sizeof why) };
    CHECK (first.server != NULL);
    if (!first.server)
        return;
    s_serve_start (&first);
    CHECK (s_answers (endpoint));

    shoal_control_server_t *second = s_server (endpoint, why, sizeof why);
    CHECK (second == NULL);
    CHECK_CONTAINS (why, "a live node answers there");
    CHECK_CONTAINS (why, path);
    shoal_control_server_destroy (&second);
    CHECK (s_exists (path));
    CHECK (s_answers (endpoint));

    s_serve_stop (&first);
    //  The node removes its own file and lock as it ends.
    CHECK (!s_exists (path));
    char lock[160];
    snprintf (lock, sizeof lock, "%s.lock", path);
    CHECK (!s_exists (lock));
}

//  A node that was killed leaves its socket file and its lock file, but no
//  lock held: the next node starts there.
static void
a_socket_file_left_by_a_killed_node_is_replaced (void)
{
    char path[128], lock[160], endpoint[160], why[256] = "";
    snprintf (path, sizeof path, "%s/stale", s_scratch);
    snprintf (lock, sizeof lock, "%s.lock", path);
    snprintf (endpoint, sizeof endpoint, "ipc://%s", path);
    CHECK_EQ (s_unix_socket (path, false), -1);
    CHECK (s_exists (path));
    int fd = open (lock, O_CREAT | O_WRONLY, 0600);
    CHECK (fd >= 0);
    close (fd);

    s_served_t served = { .server = s_server (endpoint, why, sizeof why) };
    CHECK (served.server != NULL);
    if (!served.server) {
        fprintf (stderr, "  %s\n", why);
        return;
    }
    s_serve_start (&served);
    CHECK (s_answers (endpoint));
    s_serve_stop (&served);
}

//  A path where some other process listens (one that holds no lock), or a
//  file that is not a socket, is refused and left as it is.
static void
a_path_in_use_by_another_process_is_left_alone (void)
{
    char path[128], endpoint[160], why[256] = "";
    snprintf (path, sizeof path, "%s/other", s_scratch);
    snprintf (endpoint, sizeof endpoint, "ipc://%s", path);
    int listener = s_unix_socket (path, true);
    CHECK (listener >= 0);
    shoal_control_server_t *server = s_server (endpoint, why, sizeof why);
    CHECK (server == NULL);
    CHECK_CONTAINS (why, "answers at");
    shoal_control_server_destroy (&server);
    CHECK (s_exists (path));
    close (listener);
    unlink (path);

    snprintf (path, sizeof path, "%s/file", s_scratch);
    snprintf (endpoint, sizeof endpoint, "ipc://%s", path);
    int fd = open (path, O_CREAT | O_WRONLY, 0600);
    CHECK (fd >= 0);
    close (fd);
    server = s_server (endpoint, why, sizeof why);
    CHECK (server == NULL);
    CHECK_CONTAINS (why, "not a socket");
    shoal_control_server_destroy (&server);
    CHECK (s_exists (path));
}

//  A node whose socket file was replaced behind its back (by hand, or by
//  a program that ignores the lock) leaves the new one as it ends.
static void
a_node_removes_only_its_own_socket_file (void)
{
    char path[128], endpoint[160], why[256] = "";
    snprintf (path, sizeof path, "%s/own", s_scratch);
    snprintf (endpoint, sizeof endpoint, "ipc://%s", path);
    shoal_control_server_t *server = s_server (endpoint, why, sizeof why);
    CHECK (server != NULL);
    CHECK_EQ (unlink (path), 0);
    int other = s_unix_socket (path, true);
    CHECK (other >= 0);
    shoal_control_server_destroy (&server);
    //  libzmq closes a socket's listener on its own thread, a little after:
    //  a file it would remove is given time to go.
    for (int i = 0; i < 50 && s_exists (path); i++)
        usleep (10000);
    CHECK (s_exists (path));
    close (other);
    unlink (path);
}

//  A tcp:// port or an abstract ipc:// name in use is refused, and says so.
static void
a_port_or_abstract_name_in_use_is_refused (void)
{
    zsock_t *holder = zsock_new (ZMQ_ROUTER);
    int port = zsock_bind (holder, "tcp://127.0.0.1:*");
    CHECK (port > 0);
    char endpoint[64], why[256] = "";
    snprintf (endpoint, sizeof endpoint, "tcp://127.0.0.1:%d", port);
    shoal_control_server_t *server = s_server (endpoint, why, sizeof why);
    CHECK (server == NULL);
    CHECK_CONTAINS (why, "in use");
    CHECK_CONTAINS (why, "answers there");
    shoal_control_server_destroy (&server);
    zsock_destroy (&holder);

    //  So is an abstract ipc:// name (no file: the kernel refuses it).
    snprintf (endpoint, sizeof endpoint, "ipc://@shoal-test-control-%d", (int) getpid ());
    s_served_t first = { .server = s_server (endpoint, why, sizeof why) };
    CHECK (first.server != NULL);
    if (!first.server)
        return;
    s_serve_start (&first);
    server = s_server (endpoint, why, sizeof why);
    CHECK (server == NULL);
    CHECK_CONTAINS (why, "in use");
    shoal_control_server_destroy (&server);
    CHECK (s_answers (endpoint));
    s_serve_stop (&first);
}

//  ---------------------------------------------------------------------
//  The client's end

static int
s_call (const char *endpoint, char *why, size_t why_size)
{
    shoal_arena_t arena;
    if (shoal_arena_init (&arena, SHOAL_CONTROL_ARENA) != 0)
        return -2;
    shoal_control_req_t req = { .id = 4, .op = SHOAL_OP_MEMBERS };
    shoal_control_rep_t rep;
    int rc = shoal_control_call (endpoint, s_plaintext, &req, WAIT_MS, &arena, &rep, why, why_size);
    shoal_arena_release (&arena);
    return rc;
}

//  Where no node can answer, the call says so at once, not after its wait:
//  no socket file, a file nobody listens on, a port nobody listens on.
static void
a_call_where_no_node_listens_fails_at_once (void)
{
    char path[128], endpoint[160], why[256] = "";
    snprintf (path, sizeof path, "%s/missing", s_scratch);
    snprintf (endpoint, sizeof endpoint, "ipc://%s", path);
    CHECK_EQ (s_call (endpoint, why, sizeof why), -1);
    CHECK_CONTAINS (why, "no node at");
    CHECK_CONTAINS (why, "no such socket file");

    snprintf (path, sizeof path, "%s/dead", s_scratch);
    snprintf (endpoint, sizeof endpoint, "ipc://%s", path);
    CHECK_EQ (s_unix_socket (path, false), -1);
    CHECK_EQ (s_call (endpoint, why, sizeof why), -1);
    CHECK_CONTAINS (why, "no node at");
    CHECK_CONTAINS (why, "nobody listens");

    //  A port held bound but not listening: nothing answers there, and no
    //  other process can take it meanwhile.
    int held = socket (AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in address = { .sin_family = AF_INET,
                                   .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
    socklen_t size = sizeof address;
    CHECK_EQ (bind (held, (struct sockaddr *) &address, sizeof address), 0);
    CHECK_EQ (getsockname (held, (struct sockaddr *) &address, &size), 0);
    snprintf (endpoint, sizeof endpoint, "tcp://127.0.0.1:%d", ntohs (address.sin_port));
    CHECK_EQ (s_call (endpoint, why, sizeof why), -1);
    CHECK_CONTAINS (why, "no node at");
    CHECK_CONTAINS (why, "refused");
    close (held);
}

//  A node that opens its endpoint a moment after it was asked (a script
//  that starts a worker in the background and asks it at once): the call
//  waits for it, within SHOAL_CONTROL_START_MS, and is answered.
typedef struct {
    char endpoint[160];
    s_served_t served;
} s_late_t;

static void *
s_open_late (void *arg)
{
    s_late_t *late = arg;
    zclock_sleep (200);
    char why[256] = "";
    late->served.server = s_server (late->endpoint, why, sizeof why);
    if (late->served.server)
        s_serve_start (&late->served);
    return NULL;
}

static void
a_call_waits_for_a_node_that_is_starting (void)
{
    s_late_t late = { .served = { 0 } };
    snprintf (late.endpoint, sizeof late.endpoint, "ipc://%s/starting", s_scratch);
    pthread_t opener;
    CHECK_EQ (pthread_create (&opener, NULL, s_open_late, &late), 0);
    CHECK (s_answers (late.endpoint));
    pthread_join (opener, NULL);
    CHECK (late.served.server != NULL);
    if (late.served.server)
        s_serve_stop (&late.served);
}

//  A keyring holding one new key, in use.
static shoal_keyring_t *
s_keyed (void)
{
    shoal_keyring_t *keyring = shoal_keyring_new ();
    uint8_t key[SHOAL_KEY_SIZE];
    randombytes_buf (key, sizeof key);
    if (keyring && (shoal_keyring_install (keyring, key) != 0 ||
                    shoal_keyring_use (keyring, shoal_key_id (key)) != 0))
        shoal_keyring_destroy (&keyring);
    return keyring;
}

//  Asks the server at endpoint with keyring; the call's result.
static int
s_call_with (const char *endpoint, const shoal_keyring_t *keyring, shoal_control_rep_t *rep,
             shoal_arena_t *arena, char *why, size_t why_size)
{
    shoal_control_req_t req = { .id = 5, .op = SHOAL_OP_MEMBERS };
    return shoal_control_call (endpoint, keyring, &req, WAIT_MS, arena, rep, why, why_size);
}

//  A client whose key is not the node's is told at once, not after its
//  wait: without a key, by the node's refusal; with another key, or a key
//  where the node has none, by an answer it cannot take.
static void
a_call_without_the_nodes_key_is_refused_at_once (void)
{
    shoal_keyring_t *key = s_keyed (), *other = s_keyed ();
    CHECK (key && other);
    if (!key || !other)
        return;
    shoal_arena_t arena;
    CHECK_EQ (shoal_arena_init (&arena, SHOAL_CONTROL_ARENA), 0);
    char path[128], endpoint[160], why[256] = "";
    snprintf (path, sizeof path, "%s/keyed", s_scratch);
    snprintf (endpoint, sizeof endpoint, "ipc://%s", path);
    shoal_life_t life = { .life = 1 };
    memset (life.id, 0x6b, sizeof life.id);
    s_served_t keyed = { .server =
                             shoal_control_server_new (endpoint, key, &life, why, sizeof why) };
    CHECK (keyed.server != NULL);
    if (keyed.server) {
        s_serve_start (&keyed);
        shoal_control_rep_t rep;
        CHECK_EQ (s_call_with (endpoint, key, &rep, &arena, why, sizeof why), 0);
        CHECK_EQ (rep.code, SHOAL_REPLY_OK);
        CHECK_EQ (s_call_with (endpoint, s_plaintext, &rep, &arena, why, sizeof why), 0);
        CHECK_EQ (rep.code, SHOAL_REPLY_INVALID);
        CHECK_CONTAINS (rep.reason ? rep.reason : "", "--key-file");
        CHECK_EQ (s_call_with (endpoint, other, &rep, &arena, why, sizeof why), -1);
        CHECK_CONTAINS (why, "is the key right");
        s_serve_stop (&keyed);
    }

    snprintf (path, sizeof path, "%s/open", s_scratch);
    snprintf (endpoint, sizeof endpoint, "ipc://%s", path);
    s_served_t open = { .server = s_server (endpoint, why, sizeof why) };
    CHECK (open.server != NULL);
    if (open.server) {
        s_serve_start (&open);
        shoal_control_rep_t rep;
        CHECK_EQ (s_call_with (endpoint, key, &rep, &arena, why, sizeof why), -1);
        CHECK_CONTAINS (why, "is the key right");
        s_serve_stop (&open);
    }
    shoal_arena_release (&arena);
    shoal_keyring_destroy (&key);
    shoal_keyring_destroy (&other);
}

int
main (void)
{
    if (!mkdtemp (s_scratch)) {
        perror ("mkdtemp");
        return 1;
    }
    s_plaintext = shoal_keyring_new ();
    RUN (a_live_nodes_ipc_endpoint_is_never_taken);
    RUN (a_socket_file_left_by_a_killed_node_is_replaced);
    RUN (a_path_in_use_by_another_process_is_left_alone);
    RUN (a_node_removes_only_its_own_socket_file);
    RUN (a_port_or_abstract_name_in_use_is_refused);
    RUN (a_call_where_no_node_listens_fails_at_once);
    RUN (a_call_waits_for_a_node_that_is_starting);
    RUN (a_call_without_the_nodes_key_is_refused_at_once);
    shoal_keyring_destroy (&s_plaintext);
    char command[128];
    snprintf (command, sizeof command, "rm -rf %s", s_scratch);
    if (system (command) != 0)
        fprintf (stderr, "cannot remove %s\n", s_scratch);
    return TEST_DONE ();
}

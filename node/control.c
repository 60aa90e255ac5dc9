/*  node/control.c: the control endpoint: a node's ROUTER, and the client's
    DEALER, each message in an envelope.
*/
#include "node/control.h"
#include "node/sockets.h"
#include "node/why.h"

#include <czmq.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

//  A request held open: where the answer goes.
typedef struct {
    bool used;
    uint64_t ref;
    uint32_t id;
    uint32_t key_id; //  the request's: the answer is sealed with it
    shoal_life_t client;
    size_t routing_size;
    uint8_t routing[256];
} s_pending_t;

struct _shoal_control_server_t {
    void *router; //  node/sockets.h
    shoal_sealer_t *sealer;
    shoal_opener_t *opener;
    uint8_t *plain;  //  SHOAL_FRAME_MAX
    uint8_t *sealed; //  SHOAL_FRAME_MAX
    //  Plaintext, for the refusal of a request sealed otherwise than the
    //  node seals (see s_refuse).
    shoal_keyring_t *no_key;
    shoal_sealer_t *plain_sealer;
    shoal_opener_t *plain_opener;
    s_pending_t pending[SHOAL_CONTROL_PENDING_MAX];
    uint64_t dropped;
    bool touched; //  sent or read on since the poller last asked
    //  An ipc:// endpoint: the socket file this node made (path empty for
    //  tcp://), which it alone removes, and its lock, PATH.lock, held with
    //  flock while the node lives.
    char path[sizeof ((struct sockaddr_un *) 0)->sun_path];
    char lock_path[sizeof ((struct sockaddr_un *) 0)->sun_path + 8];
    int lock_fd;
    dev_t dev;
    ino_t ino;
};

//  Every control socket takes one frame at most, and never lingers.
static void *
s_socket (int type, char *why, size_t why_size)
{
    void *socket = shoal_sockets_new (type, why, why_size);
    if (socket) {
        zsock_set_maxmsgsize (socket, (int64_t) SHOAL_FRAME_MAX);
        zsock_set_rcvtimeo (socket, 0);
        zsock_set_sndtimeo (socket, 0);
    }
    return socket;
}

//  Takes the lock of the ipc:// socket file path: PATH.lock, held with
//  flock until the server ends (the kernel lets go of it when the process
//  dies, however it dies). A lock file that was removed by the holder
//  that just ended, between this open and this flock, is tried again.
static int
s_ipc_lock (shoal_control_server_t *self, char *why, size_t why_size)
{
    for (int attempt = 0; attempt < 8; attempt++) {
        int fd = open (self->lock_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
            return shoal_why (why, why_size, "cannot open its lock %s: %s", self->lock_path,
                              strerror (errno));
        if (flock (fd, LOCK_EX | LOCK_NB) != 0) {
            int saved = errno;
            close (fd);
            if (saved == EWOULDBLOCK)
                return shoal_why (why, why_size,
                                  "a live node answers there (it holds %s): give this node "
                                  "a control endpoint or a data directory of its own",
                                  self->lock_path);
            return shoal_why (why, why_size, "cannot lock %s: %s", self->lock_path,
                              strerror (saved));
        }
        struct stat held, named;
        if (fstat (fd, &held) == 0 && stat (self->lock_path, &named) == 0 &&
            held.st_dev == named.st_dev && held.st_ino == named.st_ino) {
            self->lock_fd = fd;
            return 0;
        }
        close (fd);
    }
    return shoal_why (why, why_size, "cannot lock %s: it keeps changing", self->lock_path);
}

//  With the lock held, the socket file at path is no live node's: a file
//  left by a node that was killed (nobody accepts there) is removed. One
//  that some other process listens on (not a shoal node, or one that holds
//  no lock), or that is not a socket, is never touched.
static int
s_ipc_clear (shoal_control_server_t *self, char *why, size_t why_size)
{
    struct stat st;
    if (lstat (self->path, &st) != 0)
        return errno == ENOENT
                   ? 0
                   : shoal_why (why, why_size, "cannot read %s: %s", self->path, strerror (errno));
    if (!S_ISSOCK (st.st_mode))
        return shoal_why (why, why_size, "%s is there and is not a socket", self->path);
    struct sockaddr_un address = { .sun_family = AF_UNIX };
    memcpy (address.sun_path, self->path, strlen (self->path));
    int probe = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (probe < 0)
        return shoal_why (why, why_size, "cannot make a socket: %s", strerror (errno));
    int rc = connect (probe, (struct sockaddr *) &address, sizeof address);
    int saved = errno;
    close (probe);
    if (rc == 0)
        return shoal_why (why, why_size, "a live process answers at ipc://%s", self->path);
    if (saved != ECONNREFUSED)
        return shoal_why (why, why_size, "cannot tell whether %s is in use: %s", self->path,
                          strerror (saved));
    if (unlink (self->path) != 0 && errno != ENOENT)
        return shoal_why (why, why_size, "cannot remove the stale %s: %s", self->path,
                          strerror (errno));
    return 0;
}

//  Binds the ROUTER at an ipc:// endpoint through a socket this node
//  makes and hands over (ZMQ_USE_FD): libzmq would unlink whatever file
//  is at the path before it binds, and again when it closes, even one
//  another node answers on. Here only a file no live node holds is
//  replaced, and only this node's own is removed at the end.
static int
s_ipc_bind (shoal_control_server_t *self, const char *endpoint, char *why, size_t why_size)
{
    const char *path = endpoint + strlen ("ipc://");
    if (strlen (path) >= sizeof self->path)
        return shoal_why (why, why_size, "the path %s is longer than %zu bytes", path,
                          sizeof self->path - 1);
    snprintf (self->path, sizeof self->path, "%s", path);
    snprintf (self->lock_path, sizeof self->lock_path, "%s.lock", path);
    if (s_ipc_lock (self, why, why_size) != 0 || s_ipc_clear (self, why, why_size) != 0) {
        self->path[0] = 0;
        return -1;
    }
    struct sockaddr_un address = { .sun_family = AF_UNIX };
    memcpy (address.sun_path, self->path, strlen (self->path));
    int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct stat st;
    if (fd < 0 || bind (fd, (struct sockaddr *) &address, sizeof address) != 0) {
        int saved = errno;
        if (fd >= 0)
            close (fd);
        self->path[0] = 0;
        return shoal_why (why, why_size, "cannot bind: %s", strerror (saved));
    }
    if (stat (self->path, &st) == 0) {
        self->dev = st.st_dev;
        self->ino = st.st_ino;
    }
    zsock_set_use_fd (self->router, fd);
    if (listen (fd, 100) != 0 || zmq_bind (self->router, endpoint) != 0) {
        shoal_why (why, why_size, "cannot bind: %s", strerror (errno));
        close (fd);
        return -1;
    }
    return 0;
}

shoal_control_server_t *
shoal_control_server_new (const char *endpoint, const shoal_keyring_t *keyring,
                          const shoal_life_t *self, char *why, size_t why_size)
{
    shoal_control_server_t *server = calloc (1, sizeof *server);
    char refused[128] = "";
    uint8_t prefix[SHOAL_ENVELOPE_NONCE];
    randombytes_buf (prefix, sizeof prefix);
    if (server) {
        server->lock_fd = -1;
        server->plain = malloc (SHOAL_FRAME_MAX);
        server->sealed = malloc (SHOAL_FRAME_MAX);
        server->sealer = shoal_sealer_new (keyring, self, prefix);
        server->opener = shoal_opener_new (keyring, self, SHOAL_CONTROL_PENDING_MAX);
        server->router = s_socket (ZMQ_ROUTER, refused, sizeof refused);
        server->no_key = shoal_keyring_new ();
        if (server->no_key) {
            //  A prefix of its own: no nonce is ever shared with the sealer.
            randombytes_buf (prefix, sizeof prefix);
            server->plain_sealer = shoal_sealer_new (server->no_key, self, prefix);
            server->plain_opener = shoal_opener_new (server->no_key, self, 4);
        }
    }
    if (!server || !server->plain || !server->sealed || !server->sealer || !server->opener ||
        !server->router || !server->plain_sealer || !server->plain_opener) {
        shoal_why (why, why_size, "%s", refused[0] ? refused : "out of memory");
        shoal_control_server_destroy (&server);
        return NULL;
    }
    //  An abstract ipc:// name (@NAME) has no file: the kernel itself
    //  refuses a second bind of it, as it does a tcp:// port in use.
    int rc;
    if (strncmp (endpoint, "ipc://", 6) == 0 && endpoint[6] != '@')
        rc = s_ipc_bind (server, endpoint, why, why_size);
    else if ((rc = zmq_bind (server->router, endpoint)) != 0)
        shoal_why (why, why_size, "cannot bind: %s%s", zmq_strerror (zmq_errno ()),
                   zmq_errno () == EADDRINUSE ? " (another node, or another program, answers there)"
                                              : "");
    if (rc < 0) {
        shoal_control_server_destroy (&server);
        return NULL;
    }
    return server;
}

void
shoal_control_server_destroy (shoal_control_server_t **self_p)
{
    shoal_control_server_t *self = *self_p;
    if (!self)
        return;
    shoal_sockets_close (&self->router);
    //  The socket file goes only while it is still the one this node made,
    //  and the lock file only while this node holds it.
    struct stat st;
    if (self->path[0] && stat (self->path, &st) == 0 && st.st_dev == self->dev &&
        st.st_ino == self->ino)
        unlink (self->path);
    if (self->lock_fd >= 0) {
        unlink (self->lock_path);
        close (self->lock_fd);
    }
    shoal_sealer_destroy (&self->sealer);
    shoal_opener_destroy (&self->opener);
    shoal_sealer_destroy (&self->plain_sealer);
    shoal_opener_destroy (&self->plain_opener);
    shoal_keyring_destroy (&self->no_key);
    free (self->plain);
    free (self->sealed);
    free (self);
    *self_p = NULL;
}

bool
shoal_control_server_touched (shoal_control_server_t *self)
{
    bool touched = self->touched;
    self->touched = false;
    return touched;
}

void *
shoal_control_server_socket (const shoal_control_server_t *self)
{
    return self->router;
}

static s_pending_t *
s_pending (shoal_control_server_t *self, uint64_t ref)
{
    for (size_t i = 0; i < SHOAL_CONTROL_PENDING_MAX; i++)
        if (self->pending[i].used == (ref != 0) && (ref == 0 || self->pending[i].ref == ref))
            return &self->pending[i];
    return NULL;
}

//  A request the envelope refused for its key is answered at once, in
//  plaintext, rather than left to the client's timeout. A plaintext request
//  to a node with a key gets an INVALID answer to its id that says so; one
//  sealed with a key this node lacks (or with none while it has one) gets
//  an unaddressed plaintext answer, which a client with a key refuses at
//  once ("is the key right?"). It tells nothing a port that answers does
//  not, and changes nothing.
static void
s_refuse (shoal_control_server_t *self, zframe_t *routing, zframe_t *data,
          shoal_open_result_t opened, shoal_arena_t *arena)
{
    if (opened != SHOAL_OPEN_PLAINTEXT && opened != SHOAL_OPEN_SEALED &&
        opened != SHOAL_OPEN_UNKNOWN_KEY && opened != SHOAL_OPEN_FORGED)
        return;
    shoal_msg_t msg = { .type = SHOAL_MSG_CONTROL_REP };
    msg.u.control_rep = (shoal_control_rep_t){
        .code = SHOAL_REPLY_INVALID,
        .reason = "this node takes only requests sealed with its cluster key: give the "
                  "client --key-file, the node's key",
    };
    size_t payload = 0;
    shoal_envelope_t envelope;
    shoal_msg_t request;
    const shoal_life_t *to = NULL;
    if (opened == SHOAL_OPEN_PLAINTEXT) {
        if (shoal_opener_open (self->plain_opener, SHOAL_PURPOSE_FRAME, zframe_data (data),
                               zframe_size (data), self->plain, SHOAL_FRAME_MAX, &payload,
                               &envelope) != SHOAL_OPEN_OK ||
            shoal_msg_decode (self->plain, payload, SHOAL_PURPOSE_FRAME, &request, arena, NULL) !=
                0 ||
            request.type != SHOAL_MSG_CONTROL_REQ)
            return;
        msg.u.control_rep.id = request.u.control_req.id;
        to = &envelope.sender;
    }
    long size = shoal_msg_encode (&msg, self->plain, SHOAL_FRAME_MAX, NULL);
    long sealed = size < 0
                      ? -1
                      : shoal_sealer_seal (self->plain_sealer, SHOAL_PURPOSE_FRAME, to, self->plain,
                                           (size_t) size, self->sealed, SHOAL_FRAME_MAX);
    void *router = self->router;
    self->touched = true;
    if (sealed >= 0 && zmq_send (router, zframe_data (routing), zframe_size (routing),
                                 ZMQ_SNDMORE | ZMQ_DONTWAIT) >= 0)
        zmq_send (router, self->sealed, (size_t) sealed, ZMQ_DONTWAIT);
}

int
shoal_control_server_receive (shoal_control_server_t *self, shoal_arena_t *arena, uint64_t ref,
                              shoal_control_req_t *req)
{
    self->touched = true;
    zmsg_t *msg = zmsg_recv (self->router);
    if (!msg)
        return zmq_errno () == EAGAIN || zmq_errno () == EINTR ? 0 : -1;
    zframe_t *routing = zmsg_first (msg);
    zframe_t *data = zmsg_next (msg);
    s_pending_t *slot = s_pending (self, 0);
    size_t payload = 0;
    shoal_envelope_t envelope;
    shoal_msg_t decoded;
    int rc = 0;
    shoal_open_result_t opened = SHOAL_OPEN_SIZE; //  until opened
    if (zmsg_size (msg) == 2 && zframe_size (routing) <= sizeof slot->routing && slot &&
        (opened = shoal_opener_open (self->opener, SHOAL_PURPOSE_FRAME, zframe_data (data),
                                     zframe_size (data), self->plain, SHOAL_FRAME_MAX, &payload,
                                     &envelope)) == SHOAL_OPEN_OK &&
        shoal_msg_decode (self->plain, payload, SHOAL_PURPOSE_FRAME, &decoded, arena, NULL) == 0 &&
        decoded.type == SHOAL_MSG_CONTROL_REQ && ref != 0) {
        *slot = (s_pending_t){ .used = true,
                               .ref = ref,
                               .id = decoded.u.control_req.id,
                               .key_id = envelope.key_id,
                               .client = envelope.sender,
                               .routing_size = zframe_size (routing) };
        memcpy (slot->routing, zframe_data (routing), slot->routing_size);
        *req = decoded.u.control_req;
        rc = 1;
    } else {
        self->dropped++;
        if (opened != SHOAL_OPEN_OK)
            s_refuse (self, routing, data, opened, arena);
    }
    zmsg_destroy (&msg);
    return rc;
}

int
shoal_control_server_answer (shoal_control_server_t *self, uint64_t ref,
                             const shoal_control_rep_t *rep)
{
    s_pending_t *slot = ref ? s_pending (self, ref) : NULL;
    if (!slot)
        return -1;
    slot->used = false;
    shoal_msg_t msg = { .type = SHOAL_MSG_CONTROL_REP };
    msg.u.control_rep = *rep;
    msg.u.control_rep.id = slot->id;
    long size = shoal_msg_encode (&msg, self->plain, SHOAL_FRAME_MAX, NULL);
    long sealed = size < 0
                      ? -1
                      : shoal_sealer_seal_with (self->sealer, slot->key_id, SHOAL_PURPOSE_FRAME,
                                                &slot->client, self->plain, (size_t) size,
                                                self->sealed, SHOAL_FRAME_MAX);
    if (sealed < 0)
        return -1;
    void *router = self->router;
    self->touched = true;
    if (zmq_send (router, slot->routing, slot->routing_size, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0 ||
        zmq_send (router, self->sealed, (size_t) sealed, ZMQ_DONTWAIT) < 0)
        return -1;
    return 0;
}

uint64_t
shoal_control_server_dropped (const shoal_control_server_t *self)
{
    return self->dropped;
}

//  ---------------------------------------------------------------------
//  The client

//  Connects a stream socket to address, waiting up to timeout_ms. Returns
//  0 once connected, else the errno (ETIMEDOUT when the wait ran out).
static int
s_connect (int family, const struct sockaddr *address, socklen_t size, uint64_t timeout_ms)
{
    int fd = socket (family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return errno;
    int error = connect (fd, address, size) == 0 ? 0 : errno;
    if (error == EINPROGRESS) {
        struct pollfd item = { .fd = fd, .events = POLLOUT };
        socklen_t length = sizeof error;
        int ready = poll (&item, 1, (int) (timeout_ms > INT32_MAX ? INT32_MAX : timeout_ms));
        if (ready <= 0)
            error = ready == 0 ? ETIMEDOUT : errno;
        else if (getsockopt (fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0)
            error = errno;
    }
    close (fd);
    return error;
}

//  What is known at once of endpoint, before the call waits for an answer
//  that cannot come: an ipc:// socket file that is missing, or that nobody
//  listens on (a node that was killed leaves it), a tcp:// port that
//  refuses. -1 with the reason then; 0 when something listens there, or
//  when it cannot be told (the call then waits as long as it may).
static int
s_probe (const char *endpoint, uint64_t timeout_ms, char *why, size_t why_size)
{
    int error = 0;
    if (strncmp (endpoint, "ipc://", 6) == 0) {
        struct sockaddr_un address = { .sun_family = AF_UNIX };
        size_t length = strlen (endpoint + 6);
        if (length == 0 || length >= sizeof address.sun_path || endpoint[6] == '@')
            return 0; //  libzmq's to refuse, or an abstract name
        memcpy (address.sun_path, endpoint + 6, length);
        error = s_connect (AF_UNIX, (struct sockaddr *) &address, sizeof address, timeout_ms);
        if (error == ENOENT)
            return shoal_why (why, why_size, "no node at %s: no such socket file", endpoint);
        if (error == ECONNREFUSED)
            return shoal_why (why, why_size,
                              "no node at %s: nobody listens there (a node that stopped "
                              "left the file)",
                              endpoint);
    } else if (strncmp (endpoint, "tcp://", 6) == 0) {
        //  tcp://HOST:PORT, HOST maybe [an IPv6 address].
        char host[256];
        const char *colon = strrchr (endpoint + 6, ':');
        const char *start = endpoint + 6, *end = colon;
        if (*start == '[' && end && end > start && end[-1] == ']')
            start++, end--;
        if (!colon || end <= start || (size_t) (end - start) >= sizeof host)
            return 0;
        snprintf (host, sizeof host, "%.*s", (int) (end - start), start);
        struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV };
        struct addrinfo *found = NULL;
        if (getaddrinfo (host, colon + 1, &hints, &found) != 0 || !found)
            return 0; //  libzmq says more of a name that does not resolve
        error = s_connect (found->ai_family, found->ai_addr, found->ai_addrlen, timeout_ms);
        freeaddrinfo (found);
        if (error == ECONNREFUSED)
            return shoal_why (why, why_size, "no node at %s: the connection is refused", endpoint);
    } else
        return 0;
    if (error == EACCES || error == EPERM || error == ENOTDIR)
        return shoal_why (why, why_size, "cannot reach %s: %s", endpoint, strerror (error));
    return 0;
}

//  s_probe, asked again while a node may still be starting: until
//  something listens, or for SHOAL_CONTROL_START_MS (within timeout_ms).
static int
s_probe_starting (const char *endpoint, uint64_t timeout_ms, char *why, size_t why_size)
{
    uint64_t grace = timeout_ms < SHOAL_CONTROL_START_MS ? timeout_ms : SHOAL_CONTROL_START_MS;
    int64_t until = zclock_mono () + (int64_t) grace;
    int rc;
    while ((rc = s_probe (endpoint, timeout_ms, why, why_size)) != 0 && zclock_mono () < until)
        zclock_sleep (50);
    return rc;
}

int
shoal_control_call (const char *endpoint, const shoal_keyring_t *keyring,
                    const shoal_control_req_t *req, uint64_t timeout_ms, shoal_arena_t *arena,
                    shoal_control_rep_t *rep, char *why, size_t why_size)
{
    shoal_life_t client = { .life = 1 };
    do
        randombytes_buf (client.id, sizeof client.id);
    while (sodium_is_zero (client.id, sizeof client.id));
    uint8_t prefix[SHOAL_ENVELOPE_NONCE];
    randombytes_buf (prefix, sizeof prefix);
    shoal_sealer_t *sealer = shoal_sealer_new (keyring, &client, prefix);
    shoal_opener_t *opener = shoal_opener_new (keyring, &client, 4);
    uint8_t *plain = malloc (SHOAL_FRAME_MAX);
    uint8_t *sealed = malloc (SHOAL_FRAME_MAX);
    char refused[128] = "";
    void *dealer = s_socket (ZMQ_DEALER, refused, sizeof refused);
    int rc = -1;
    shoal_msg_t msg = { .type = SHOAL_MSG_CONTROL_REQ };
    msg.u.control_req = *req;
    shoal_wire_error_t err;
    long size, sealed_size;
    int64_t until = zclock_mono () + (int64_t) timeout_ms;
    if (!sealer || !opener || !plain || !sealed || !dealer)
        shoal_why (why, why_size, "%s", refused[0] ? refused : "out of memory");
    else if ((size = shoal_msg_encode (&msg, plain, SHOAL_FRAME_MAX, &err)) < 0) {
        shoal_why (why, why_size, "the request does not encode: %s", err.text);
        rc = -2;
    } else if (s_probe_starting (endpoint, timeout_ms, why, why_size) != 0)
        ; //  no node can answer there
    else if ((sealed_size = shoal_sealer_seal (sealer, SHOAL_PURPOSE_FRAME, NULL, plain,
                                               (size_t) size, sealed, SHOAL_FRAME_MAX)) < 0)
        shoal_why (why, why_size, "the request cannot be sealed");
    else if (zmq_connect (dealer, endpoint) != 0)
        shoal_why (why, why_size, "%s: %s", endpoint, zmq_strerror (zmq_errno ()));
    else {
        //  The send waits for the connection as long as the answer may.
        int64_t left = until - zclock_mono ();
        zsock_set_sndtimeo (dealer, (int) (left < 1 ? 1 : left > INT32_MAX ? INT32_MAX : left));
        if (zmq_send (dealer, sealed, (size_t) sealed_size, 0) < 0)
            shoal_why (why, why_size, "%s: no node answers there", endpoint);
        else
            while (rc != 0) {
                left = until - zclock_mono ();
                zmq_pollitem_t item = { dealer, 0, ZMQ_POLLIN, 0 };
                if (left <= 0 || zmq_poll (&item, 1, (long) left) <= 0) {
                    shoal_why (why, why_size, "%s: no answer in time", endpoint);
                    break;
                }
                int got = zmq_recv (dealer, sealed, SHOAL_FRAME_MAX, 0);
                size_t payload;
                shoal_envelope_t envelope;
                shoal_msg_t answer;
                if (got < 0 || (size_t) got > SHOAL_FRAME_MAX)
                    continue;
                shoal_open_result_t opened =
                    shoal_opener_open (opener, SHOAL_PURPOSE_FRAME, sealed, (size_t) got, plain,
                                       SHOAL_FRAME_MAX, &payload, &envelope);
                if (opened != SHOAL_OPEN_OK) {
                    shoal_why (why, why_size, "%s: the answer is refused (%s): is the key right?",
                               endpoint, shoal_open_result_name (opened));
                    break;
                }
                shoal_arena_reset (arena);
                if (shoal_msg_decode (plain, payload, SHOAL_PURPOSE_FRAME, &answer, arena, &err) !=
                        0 ||
                    answer.type != SHOAL_MSG_CONTROL_REP) {
                    shoal_why (why, why_size, "%s: the answer does not decode", endpoint);
                    break;
                }
                if (answer.u.control_rep.id != req->id)
                    continue;
                *rep = answer.u.control_rep;
                rc = 0;
            }
    }
    shoal_sockets_close (&dealer);
    free (sealed);
    free (plain);
    shoal_opener_destroy (&opener);
    shoal_sealer_destroy (&sealer);
    return rc;
}

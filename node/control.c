/*  node/control.c: the control endpoint: a node's ROUTER, and the client's
    DEALER, each message in an envelope.
*/
#include "control.h"
#include "why.h"

#include <czmq.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

//  A request held open: where the answer goes.
typedef struct {
    bool used;
    uint64_t ref;
    uint32_t id;
    shoal_life_t client;
    size_t routing_size;
    uint8_t routing[256];
} s_pending_t;

struct _shoal_control_server_t {
    zsock_t *router;
    shoal_sealer_t *sealer;
    shoal_opener_t *opener;
    uint8_t *plain;  //  SHOAL_FRAME_MAX
    uint8_t *sealed; //  SHOAL_FRAME_MAX
    s_pending_t pending[SHOAL_CONTROL_PENDING_MAX];
    uint64_t dropped;
};

//  Every control socket takes one frame at most, and never lingers.
static zsock_t *
s_socket (int type)
{
    zsock_t *socket = zsock_new (type);
    if (socket) {
        zsock_set_maxmsgsize (socket, (int64_t) SHOAL_FRAME_MAX);
        zsock_set_linger (socket, 0);
        zsock_set_rcvtimeo (socket, 0);
        zsock_set_sndtimeo (socket, 0);
    }
    return socket;
}

shoal_control_server_t *
shoal_control_server_new (const char *endpoint, const shoal_keyring_t *keyring,
                          const shoal_life_t *self, char *why, size_t why_size)
{
    shoal_control_server_t *server = calloc (1, sizeof *server);
    uint8_t prefix[SHOAL_ENVELOPE_NONCE];
    randombytes_buf (prefix, sizeof prefix);
    if (server) {
        server->plain = malloc (SHOAL_FRAME_MAX);
        server->sealed = malloc (SHOAL_FRAME_MAX);
        server->sealer = shoal_sealer_new (keyring, self, prefix);
        server->opener = shoal_opener_new (keyring, self, SHOAL_CONTROL_PENDING_MAX);
        server->router = s_socket (ZMQ_ROUTER);
    }
    if (!server || !server->plain || !server->sealed || !server->sealer || !server->opener ||
        !server->router) {
        shoal_why (why, why_size, "out of memory");
        shoal_control_server_destroy (&server);
        return NULL;
    }
    if (zsock_bind (server->router, "%s", endpoint) < 0) {
        shoal_why (why, why_size, "cannot bind: %s", zmq_strerror (zmq_errno ()));
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
    zsock_destroy (&self->router);
    shoal_sealer_destroy (&self->sealer);
    shoal_opener_destroy (&self->opener);
    free (self->plain);
    free (self->sealed);
    free (self);
    *self_p = NULL;
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

int
shoal_control_server_receive (shoal_control_server_t *self, shoal_arena_t *arena, uint64_t ref,
                              shoal_control_req_t *req)
{
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
    if (zmsg_size (msg) == 2 && zframe_size (routing) <= sizeof slot->routing && slot &&
        shoal_opener_open (self->opener, SHOAL_PURPOSE_FRAME, zframe_data (data),
                           zframe_size (data), self->plain, SHOAL_FRAME_MAX, &payload,
                           &envelope) == SHOAL_OPEN_OK &&
        shoal_msg_decode (self->plain, payload, SHOAL_PURPOSE_FRAME, &decoded, arena, NULL) == 0 &&
        decoded.type == SHOAL_MSG_CONTROL_REQ && ref != 0) {
        *slot = (s_pending_t){ .used = true,
                               .ref = ref,
                               .id = decoded.u.control_req.id,
                               .client = envelope.sender,
                               .routing_size = zframe_size (routing) };
        memcpy (slot->routing, zframe_data (routing), slot->routing_size);
        *req = decoded.u.control_req;
        rc = 1;
    } else
        self->dropped++;
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
    long sealed =
        size < 0 ? -1
                 : shoal_sealer_seal (self->sealer, SHOAL_PURPOSE_FRAME, &slot->client, self->plain,
                                      (size_t) size, self->sealed, SHOAL_FRAME_MAX);
    if (sealed < 0)
        return -1;
    void *router = zsock_resolve (self->router);
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
    zsock_t *dealer = s_socket (ZMQ_DEALER);
    int rc = -1;
    shoal_msg_t msg = { .type = SHOAL_MSG_CONTROL_REQ };
    msg.u.control_req = *req;
    shoal_wire_error_t err;
    long size, sealed_size;
    if (!sealer || !opener || !plain || !sealed || !dealer)
        shoal_why (why, why_size, "out of memory");
    else if ((size = shoal_msg_encode (&msg, plain, SHOAL_FRAME_MAX, &err)) < 0)
        shoal_why (why, why_size, "the request does not encode: %s", err.text);
    else if ((sealed_size = shoal_sealer_seal (sealer, SHOAL_PURPOSE_FRAME, NULL, plain,
                                               (size_t) size, sealed, SHOAL_FRAME_MAX)) < 0)
        shoal_why (why, why_size, "the request cannot be sealed");
    else if (zsock_connect (dealer, "%s", endpoint) < 0)
        shoal_why (why, why_size, "%s: %s", endpoint, zmq_strerror (zmq_errno ()));
    else {
        //  The send waits for the connection as long as the answer may.
        zsock_set_sndtimeo (dealer, (int) (timeout_ms > INT32_MAX ? INT32_MAX : timeout_ms));
        int64_t until = zclock_mono () + (int64_t) timeout_ms;
        if (zmq_send (zsock_resolve (dealer), sealed, (size_t) sealed_size, 0) < 0)
            shoal_why (why, why_size, "%s: no node answers there", endpoint);
        else
            while (rc != 0) {
                int64_t left = until - zclock_mono ();
                zmq_pollitem_t item = { zsock_resolve (dealer), 0, ZMQ_POLLIN, 0 };
                if (left <= 0 || zmq_poll (&item, 1, (long) left) <= 0) {
                    shoal_why (why, why_size, "%s: no answer in time", endpoint);
                    break;
                }
                int got = zmq_recv (zsock_resolve (dealer), sealed, SHOAL_FRAME_MAX, 0);
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
    zsock_destroy (&dealer);
    free (sealed);
    free (plain);
    shoal_opener_destroy (&opener);
    shoal_sealer_destroy (&sealer);
    return rc;
}

/*  node/control.h: the control endpoint, both ends.

    A control client (the `shoal` subcommands, a test) talks to one node
    over ZeroMQ: a DEALER that connects to the node's ROUTER at its control
    endpoint (ipc://DATA-DIR/control by default, or tcp://HOST:PORT). Each
    request is one CONTROL-REQ, each answer one CONTROL-REP, both in the
    envelope of wire/envelope.h: sealed with the cluster key when the
    node has one, so that only holders of the key can steer the cluster;
    plaintext otherwise, where the endpoint's file permissions (the data
    directory is 0700) keep it local.

    A client has no identity of its own: it draws a random id for each
    connection and sends unaddressed; the node answers to that id.
    Nothing here prints or blocks beyond the timeouts given.
*/
#ifndef SHOAL_CONTROL_H
#define SHOAL_CONTROL_H

#include "wire/arena.h"
#include "wire/envelope.h"
#include "wire/wire.h"

#include <stddef.h>
#include <stdint.h>

//  Requests a node holds open at once; more are answered "busy".
#define SHOAL_CONTROL_PENDING_MAX 256

//  A drain's answer says in its reason whether the drain goes on, which
//  the tasks it lists do not always show: a node that acts as leader and
//  holds nothing is not drained while a move it made is halfway. Asked
//  with leave, a drained node says that it leaves.
#define SHOAL_DRAIN_ONGOING "draining"
#define SHOAL_DRAIN_LEAVING "drained: leaving"

//  ---------------------------------------------------------------------
//  The node's end

typedef struct _shoal_control_server_t shoal_control_server_t;

//  Binds a ROUTER at endpoint. An ipc:// endpoint is this node's while it
//  lives: it holds PATH.lock (flock), and refuses a path whose lock another
//  process holds, or where something else listens (a live node's is never
//  unlinked nor bound over). A socket file left by a node that was killed
//  (its lock free, nobody listening) is replaced. At the end the node
//  removes the file only while it is still the one it made. A tcp://
//  endpoint or an abstract ipc://@NAME in use is refused too (the kernel
//  refuses a second bind of either). self is the node's life, keyring its
//  keys (shared, not owned). NULL with the reason in why.
shoal_control_server_t *shoal_control_server_new (const char *endpoint,
                                                  const shoal_keyring_t *keyring,
                                                  const shoal_life_t *self, char *why,
                                                  size_t why_size);
void shoal_control_server_destroy (shoal_control_server_t **self_p);

//  The ROUTER (a libzmq socket: node/sockets.h), for the actor's poller.
void *shoal_control_server_socket (const shoal_control_server_t *self);

//  True once the ROUTER was sent or read on since the last call (its events
//  must be read again before the poller sleeps: node/transport.h,
//  shoal_transport_links); cleared.
bool shoal_control_server_touched (shoal_control_server_t *self);

//  Reads one request without waiting, and holds it open under ref (the
//  caller's, unique). Returns 1 with *req decoded into arena, 0 when
//  nothing was ready or what came was dropped (malformed, refused by the
//  envelope, undecodable: counted), -1 on a socket error.
int shoal_control_server_receive (shoal_control_server_t *self, shoal_arena_t *arena, uint64_t ref,
                                  shoal_control_req_t *req);

//  Answers the request held under ref with rep (its id is set to the
//  request's), and forgets it. Returns 0, or -1 when no request is held
//  under ref (or the answer could not be sent: the client then times out).
int shoal_control_server_answer (shoal_control_server_t *self, uint64_t ref,
                                 const shoal_control_rep_t *rep);

//  Messages dropped: not one frame and a routing id, refused by the
//  envelope, undecodable, or over the pending limit.
uint64_t shoal_control_server_dropped (const shoal_control_server_t *self);

//  ---------------------------------------------------------------------
//  The client's end

//  Sends req to the node at endpoint and waits up to timeout_ms for its
//  answer, decoded into rep (strings and lists in arena, which must hold
//  at least SHOAL_CONTROL_ARENA bytes). Returns 0; -1 with the reason
//  (no node at the endpoint, said as soon as that is known: an ipc://
//  socket file that is missing or that nobody listens on, a tcp:// port
//  that refuses, still so after SHOAL_CONTROL_START_MS; else no answer in
//  time, an answer that does not open or decode); or -2 when the request
//  does not encode (a field over its limit: the caller's mistake, named in
//  why).
#define SHOAL_CONTROL_ARENA (4u * SHOAL_FRAME_MAX)
//  How long a client gives a node that is starting to open its endpoint:
//  a script that starts `shoal worker ... &` and asks it at once must not
//  be told that no node is there. Far above a start's milliseconds, far
//  below a timeout.
#define SHOAL_CONTROL_START_MS 2000u
int shoal_control_call (const char *endpoint, const shoal_keyring_t *keyring,
                        const shoal_control_req_t *req, uint64_t timeout_ms, shoal_arena_t *arena,
                        shoal_control_rep_t *rep, char *why, size_t why_size);

#endif

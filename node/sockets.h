/*  node/sockets.h: ZeroMQ sockets that may be refused without aborting.

    czmq's constructors (zsock_new, zactor_new) assert when ZeroMQ refuses
    a socket: EMFILE when the context holds its max_sockets (czmq's 1,024,
    closed sockets counted until ZeroMQ's reaper thread has freed them) or
    the process is out of descriptors. A node that opens links to many
    members, or a starved one whose reaper lags, must not die of it.

    The links, made and closed all the time, use ZeroMQ's own sockets
    (node/transport.c), which are refused without aborting. The few czmq
    sockets a node makes at start (its ROUTER, its thread's pipe, the
    control socket) are asked of ZeroMQ first: a context or process that is
    already full is refused with a reason. The probe's own socket is freed
    by the reaper, not at once, so it cannot rule out the last free socket
    being taken in between; that is the start of a node, not its running.
*/
#ifndef SHOAL_NODE_SOCKETS_H
#define SHOAL_NODE_SOCKETS_H

#include <czmq.h>
#include <stdbool.h>
#include <stddef.h>

//  Whether ZeroMQ gives count more sockets now; if not, why (errno's text).
bool shoal_sockets_available (int count, char *why, size_t why_size);

//  zsock_new (type), or NULL with why when ZeroMQ refuses one.
zsock_t *shoal_sockets_new (int type, char *why, size_t why_size);

#endif

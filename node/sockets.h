/*  node/sockets.h: ZeroMQ sockets that may be refused without aborting.

    czmq's constructors (zsock_new, zactor_new) assert when ZeroMQ refuses
    a socket: EMFILE when the context holds its max_sockets (czmq's 1,024,
    closed sockets counted until ZeroMQ's reaper thread has freed them) or
    the process is out of descriptors. A node that opens links to many
    members, or a starved one whose reaper lags, must not die of it.

    So a node's sockets are ZeroMQ's own (shoal_sockets_new): its links,
    made and closed all the time, its ROUTER and its control sockets. A
    refusal is a NULL with a reason. czmq's setters and zmsg_recv take
    them as they take a zsock_t; zsock_bind and zsock_destroy do not.

    Only the actor's pipe is czmq's (zactor_new), asked of ZeroMQ first
    (shoal_sockets_available). The probe's own sockets are freed by the
    reaper, not at once, so it cannot rule out the last free socket being
    taken in between; that is the start of a node, not its running.
*/
#ifndef SHOAL_NODE_SOCKETS_H
#define SHOAL_NODE_SOCKETS_H

#include <czmq.h>
#include <stdbool.h>
#include <stddef.h>

//  Whether ZeroMQ gives count more sockets now; if not, why (errno's text).
bool shoal_sockets_available (int count, char *why, size_t why_size);

//  A ZeroMQ socket of type that never lingers, or NULL with why when
//  ZeroMQ refuses one.
void *shoal_sockets_new (int type, char *why, size_t why_size);

//  Closes *socket_p (NULL is nothing) and sets it NULL.
void shoal_sockets_close (void **socket_p);

#endif

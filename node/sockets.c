/*  node/sockets.c: ZeroMQ sockets that may be refused without aborting. */

#include "node/sockets.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define S_PROBE_MAX 4

bool
shoal_sockets_available (int count, char *why, size_t why_size)
{
    assert (count > 0 && count <= S_PROBE_MAX);
    void *context = zsys_init ();
    void *probes[S_PROBE_MAX] = { NULL };
    int made = 0, error = 0;
    if (!context)
        error = errno ? errno : ENOMEM;
    while (!error && made < count) {
        probes[made] = zmq_socket (context, ZMQ_PAIR);
        if (probes[made])
            made++;
        else
            error = zmq_errno ();
    }
    for (int i = 0; i < made; i++)
        zmq_close (probes[i]);
    if (error && why && why_size)
        snprintf (why, why_size, "no ZeroMQ socket: %s", zmq_strerror (error));
    return !error;
}

void *
shoal_sockets_new (int type, char *why, size_t why_size)
{
    void *context = zsys_init ();
    void *socket = context ? zmq_socket (context, type) : NULL;
    if (!socket) {
        if (why && why_size)
            snprintf (why, why_size, "no ZeroMQ socket: %s",
                      zmq_strerror (context ? zmq_errno () : ENOMEM));
        return NULL;
    }
    //  czmq's sockets never linger (zsys's default): nor do these, so
    //  that neither a close nor the context's end at exit waits on a peer.
    int zero = 0;
    zmq_setsockopt (socket, ZMQ_LINGER, &zero, sizeof zero);
    return socket;
}

void
shoal_sockets_close (void **socket_p)
{
    if (socket_p && *socket_p) {
        zmq_close (*socket_p);
        *socket_p = NULL;
    }
}

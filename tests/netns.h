/*  tests/netns.h: a network namespace of the test's own, where beacons work.

    Beacons need an interface that broadcasts; a machine with only loopback
    has none. The test moves itself into a new network namespace (which
    needs root), brings lo up with the broadcast route of docs/architecture.md
    "Discovery", and lets czmq's zbeacon use every interface
    (ZSYS_INTERFACE='*'). Call it first in main, before any ZeroMQ call;
    child processes inherit the namespace.
*/
#ifndef SHOAL_TEST_NETNS_H
#define SHOAL_TEST_NETNS_H

//  Returns 0 once inside; 77 (the skip status) when not root or namespaces
//  are not available, having said why on standard output; 1 when the
//  namespace could not be set up (said on standard error). what names what
//  needs the namespace, for the skip message ("beacons", "the nodes").
int shoal_test_netns_enter (const char *what);

#endif

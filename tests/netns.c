/*  tests/netns.c: a network namespace of the test's own, where beacons work. */
#define _GNU_SOURCE //  unshare

#include "tests/netns.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int
shoal_test_netns_enter (const char *what)
{
    if (geteuid () != 0) {
        printf ("skip: %s need a network namespace with a broadcast route on lo, and making one "
                "needs root (CI runs this as root)\n",
                what);
        return 77;
    }
    if (unshare (CLONE_NEWNET) != 0) {
        printf ("skip: no network namespace here (unshare: %s)\n", strerror (errno));
        return 77;
    }
    if (system ("ip link set lo up && ip route add broadcast 255.255.255.255 dev lo table local "
                "src 127.0.0.1") != 0) {
        fprintf (stderr, "could not set up lo in the test's namespace\n");
        return 1;
    }
    setenv ("ZSYS_INTERFACE", "*", 1);
    return 0;
}

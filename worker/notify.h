/*  worker/notify.h: the worker's word to its service manager, systemd's
    notify protocol (sd_notify): READY=1 once the node joined and knows a
    leader, STATUS= lines with what it does, STOPPING=1 when it leaves,
    and WATCHDOG=1 while its loop and its node's actor both answer.

    Built with libsystemd when pkg-config finds it (SHOAL_HAVE_SYSTEMD);
    without it every call does nothing, and the worker runs the same. Only
    when NOTIFY_SOCKET is set does anything go out: a worker that no
    manager started sends nothing and, in the program linked statically,
    never even opens libsystemd (worker/lazy.c).
*/
#ifndef SHOAL_WORKER_NOTIFY_H
#define SHOAL_WORKER_NOTIFY_H

#include <stdbool.h>
#include <stdint.h>

//  Whether this program was built with libsystemd.
bool shoal_notify_built (void);
//  Whether a service manager asks to be told (NOTIFY_SOCKET is set).
bool shoal_notify_wanted (void);
//  How often to send WATCHDOG=1: half the WATCHDOG_USEC the manager set
//  for this process, at least 1 ms; 0 when there is no watchdog (or no
//  libsystemd).
uint64_t shoal_notify_watchdog_ms (void);
//  Sends one or more "KEY=VALUE" lines, as printf makes them, when wanted.
//  Returns 0 when it went out or nothing was to go, -1 when it failed.
__attribute__ ((format (printf, 1, 2))) int shoal_notify (const char *format, ...);

#endif

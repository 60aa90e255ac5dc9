/*  worker/notify.c: systemd's notify protocol, through libsystemd when the
    program was built with it.
 */

#include "worker/notify.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef SHOAL_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

//  The longest message sent: a few lines, STATUS= the longest of them.
#define S_MESSAGE_MAX 512

bool
shoal_notify_built (void)
{
#ifdef SHOAL_HAVE_SYSTEMD
    return true;
#else
    return false;
#endif
}

bool
shoal_notify_wanted (void)
{
    const char *socket = getenv ("NOTIFY_SOCKET");
    return socket && socket[0];
}

uint64_t
shoal_notify_watchdog_ms (void)
{
#ifdef SHOAL_HAVE_SYSTEMD
    uint64_t usec = 0;
    //  > 0: WATCHDOG_USEC is set, and WATCHDOG_PID is this process or unset.
    if (!shoal_notify_wanted () || sd_watchdog_enabled (0, &usec) <= 0 || usec == 0)
        return 0;
    return usec / 2000 ? usec / 2000 : 1;
#else
    return 0;
#endif
}

int
shoal_notify (const char *format, ...)
{
    if (!shoal_notify_wanted () || !shoal_notify_built ())
        return 0;
    char message[S_MESSAGE_MAX];
    va_list args;
    va_start (args, format);
    vsnprintf (message, sizeof message, format, args);
    va_end (args);
#ifdef SHOAL_HAVE_SYSTEMD
    //  > 0 sent, 0 no socket, < 0 an error.
    return sd_notify (0, message) < 0 ? -1 : 0;
#else
    return 0;
#endif
}

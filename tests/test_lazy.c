/*  tests/test_lazy.c: the libraries the program opens on a first call
    (worker/lazy.c) answer for real once opened.

    The program never calls GSS-API or libsystemd; these calls show that a
    call would reach the real library, and that the name types lazy.c
    defines are the ones GSS-API knows. test_lazy_missing shows a call
    when the library cannot be opened.
*/

#include "tests/test.h"

#include <errno.h>
#include <fcntl.h>
#include <gssapi/gssapi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

//  sd_listen_fds counts the descriptors systemd passed, from the
//  environment: 0 without it, and LISTEN_FDS when LISTEN_PID is this
//  process, marking them close-on-exec. The stand-in that could not open
//  the library says -ENOSYS and marks nothing.
static void
socket_activation_reaches_libsystemd (void)
{
    unsetenv ("LISTEN_PID");
    unsetenv ("LISTEN_FDS");
    CHECK_EQ (sd_listen_fds (0), 0);
    //  Two open descriptors where systemd would pass them (3 and 4).
    int ends[2];
    CHECK_EQ (pipe (ends), 0);
    CHECK (dup2 (ends[0], SD_LISTEN_FDS_START) == SD_LISTEN_FDS_START);
    CHECK (dup2 (ends[1], SD_LISTEN_FDS_START + 1) == SD_LISTEN_FDS_START + 1);
    for (int i = 0; i < 2; i++)
        if (ends[i] > SD_LISTEN_FDS_START + 1)
            close (ends[i]);
    char pid[32];
    snprintf (pid, sizeof pid, "%ld", (long) getpid ());
    setenv ("LISTEN_PID", pid, 1);
    setenv ("LISTEN_FDS", "2", 1);
    CHECK_EQ (sd_listen_fds (1), 2);
    CHECK (fcntl (SD_LISTEN_FDS_START, F_GETFD) & FD_CLOEXEC);
    CHECK (fcntl (SD_LISTEN_FDS_START + 1, F_GETFD) & FD_CLOEXEC);
    //  unset_environment 1: the variables are gone.
    CHECK (getenv ("LISTEN_FDS") == NULL);
    close (SD_LISTEN_FDS_START);
    close (SD_LISTEN_FDS_START + 1);
    //  A descriptor that cannot be one: libsystemd's own refusal.
    CHECK_EQ (sd_is_socket_inet (-1, 0, 0, -1, 0), -EBADF);
    CHECK_EQ (sd_is_socket_unix (-1, 0, -1, NULL, 0), -EBADF);
}

//  The worker's calls (worker/notify.c): a message reaches the socket
//  NOTIFY_SOCKET names, and the watchdog is read from the environment.
static void
notify_reaches_libsystemd (void)
{
    struct sockaddr_un address = { .sun_family = AF_UNIX };
    snprintf (address.sun_path, sizeof address.sun_path, "/tmp/shoal-test-lazy-%ld",
              (long) getpid ());
    unlink (address.sun_path);
    int listener = socket (AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    CHECK (listener >= 0);
    CHECK_EQ (bind (listener, (struct sockaddr *) &address, sizeof address), 0);
    setenv ("NOTIFY_SOCKET", address.sun_path, 1);
    CHECK (sd_notify (0, "READY=1") > 0);
    char got[64] = "";
    CHECK_EQ (recv (listener, got, sizeof got - 1, MSG_DONTWAIT), (ssize_t) strlen ("READY=1"));
    CHECK (strcmp (got, "READY=1") == 0);
    unsetenv ("NOTIFY_SOCKET");
    close (listener);
    unlink (address.sun_path);

    char pid[32];
    snprintf (pid, sizeof pid, "%ld", (long) getpid ());
    setenv ("WATCHDOG_USEC", "400000", 1);
    setenv ("WATCHDOG_PID", pid, 1);
    uint64_t usec = 0;
    CHECK (sd_watchdog_enabled (0, &usec) > 0);
    CHECK_EQ (usec, 400000);
    setenv ("WATCHDOG_PID", "1", 1); //  another process's
    CHECK_EQ (sd_watchdog_enabled (0, &usec), 0);
    unsetenv ("WATCHDOG_USEC");
    unsetenv ("WATCHDOG_PID");
}

//  A host-based service name, imported and displayed back: the library
//  takes lazy.c's name type as its own, and says it is that type.
static void
gss_names_reach_gssapi (void)
{
    OM_uint32 minor = 0;
    gss_buffer_desc input = { strlen ("shoal@localhost"), (void *) "shoal@localhost" };
    gss_name_t name = GSS_C_NO_NAME;
    CHECK_EQ (gss_import_name (&minor, &input, GSS_C_NT_HOSTBASED_SERVICE, &name), GSS_S_COMPLETE);
    CHECK (name != GSS_C_NO_NAME);
    gss_buffer_desc output = GSS_C_EMPTY_BUFFER;
    gss_OID type = GSS_C_NO_OID;
    CHECK_EQ (gss_display_name (&minor, name, &output, &type), GSS_S_COMPLETE);
    CHECK (output.length == strlen ("shoal@localhost") &&
           memcmp (output.value, "shoal@localhost", output.length) == 0);
    CHECK (type != GSS_C_NO_OID && type->length == GSS_C_NT_HOSTBASED_SERVICE->length &&
           memcmp (type->elements, GSS_C_NT_HOSTBASED_SERVICE->elements, type->length) == 0);
    CHECK_EQ (gss_release_buffer (&minor, &output), GSS_S_COMPLETE);
    CHECK_EQ (gss_release_name (&minor, &name), GSS_S_COMPLETE);
    CHECK (name == GSS_C_NO_NAME);
}

int
main (void)
{
    RUN (socket_activation_reaches_libsystemd);
    RUN (notify_reaches_libsystemd);
    RUN (gss_names_reach_gssapi);
    return TEST_DONE ();
}

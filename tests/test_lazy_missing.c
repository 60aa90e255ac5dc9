/*  tests/test_lazy_missing.c: a call to a library the program opens on a
    first call (worker/lazy.c), when the library cannot be opened, fails as
    that library documents a failure, and nothing else breaks.

    It builds lazy.c itself, naming libraries that are not there.
*/

#define S_GSSAPI  "libshoal-test-missing-gssapi.so.0"
#define S_SYSTEMD "libshoal-test-missing-systemd.so.0"
#include "worker/lazy.c"

#include "tests/test.h"

#include <string.h>

static void
systemd_calls_say_enosys (void)
{
    CHECK_EQ (sd_listen_fds (0), -ENOSYS);
    CHECK_EQ (sd_is_socket_inet (3, 0, 0, -1, 0), -ENOSYS);
    CHECK_EQ (sd_is_socket_unix (3, 0, -1, NULL, 0), -ENOSYS);
    uint64_t usec = 7;
    CHECK_EQ (sd_notify (0, "READY=1"), -ENOSYS);
    CHECK_EQ (sd_watchdog_enabled (0, &usec), -ENOSYS);
    CHECK_EQ (usec, 7);
}

static void
gss_calls_say_unavailable (void)
{
    OM_uint32 minor = 12345;
    gss_buffer_desc input = { strlen ("shoal@localhost"), (void *) "shoal@localhost" };
    gss_name_t name = GSS_C_NO_NAME;
    CHECK_EQ (gss_import_name (&minor, &input, GSS_C_NT_HOSTBASED_SERVICE, &name),
              GSS_S_UNAVAILABLE);
    CHECK_EQ (minor, 0);
    CHECK (name == GSS_C_NO_NAME);
    minor = 12345;
    CHECK_EQ (gss_release_buffer (&minor, &input), GSS_S_UNAVAILABLE);
    CHECK_EQ (minor, 0);
    //  A NULL minor status is not written.
    CHECK_EQ (gss_release_name (NULL, &name), GSS_S_UNAVAILABLE);
}

//  The name types are the standard ones (RFC 2744, section 3.10), whether
//  or not the library is there.
static void
name_types_have_their_standard_values (void)
{
    CHECK_EQ (GSS_C_NT_USER_NAME->length, 10);
    CHECK (memcmp (GSS_C_NT_USER_NAME->elements, "\x2a\x86\x48\x86\xf7\x12\x01\x02\x01\x01", 10) ==
           0);
    CHECK_EQ (GSS_C_NT_HOSTBASED_SERVICE->length, 10);
    CHECK (memcmp (GSS_C_NT_HOSTBASED_SERVICE->elements, "\x2a\x86\x48\x86\xf7\x12\x01\x02\x01\x04",
                   10) == 0);
}

int
main (void)
{
    RUN (systemd_calls_say_enosys);
    RUN (gss_calls_say_unavailable);
    RUN (name_types_have_their_standard_values);
    return TEST_DONE ();
}

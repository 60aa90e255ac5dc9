/*  worker/lazy.c: the libraries that Debian's libzmq and libczmq link and
    that shoal never calls, loaded on their first call instead of at start.

    When the program links libzmq and libczmq statically (SHOAL_STATIC_DEPS,
    CMakeLists.txt), their archives still call GSS-API (libzmq's GSSAPI
    security mechanism, libgssapi_krb5) and three functions of libsystemd
    (czmq's socket activation); the worker calls two more when systemd
    asks to be told (worker/notify.c). Linked as usual, those two bring eleven more
    libraries into every worker (Kerberos, gcrypt, zstd, lzma, lz4, ...):
    some 1.4 MB of resident pages, the most of any part a worker does not
    use (docs/worker.md, "Memory"). shoal never sets ZMQ_GSSAPI_SERVER or
    ZMQ_GSSAPI_CLIENT, nor czmq's zsys_set_auto_use_fd, so none of these is
    called, and sd_notify only under systemd; should one be, its library is opened then (dlopen) and
   the call forwarded, and when it cannot be opened, the call fails the way its library documents a
   failure: GSS_S_UNAVAILABLE, or -ENOSYS.

    This file is built into the program only with the static link; the
    shared library and the tests link the libraries as usual.
*/
#include <dlfcn.h>
#include <errno.h>
#include <gssapi/gssapi.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-daemon.h>

//  The sonames the archives were built against (Debian 12).
//  tests/test_lazy_missing.c names libraries that are not there.
#ifndef S_GSSAPI
#define S_GSSAPI "libgssapi_krb5.so.2"
#endif
#ifndef S_SYSTEMD
#define S_SYSTEMD "libsystemd.so.0"
#endif

//  The two name types libzmq's GSSAPI mechanism names by their variables
//  (RFC 2743, section 4.1; RFC 2744, section 3.10). Their values are
//  standard, and GSS-API compares name types by value, so these serve
//  when the library is opened later.
static gss_OID_desc s_user_name = { 10, "\x2a\x86\x48\x86\xf7\x12\x01\x02\x01\x01" };
static gss_OID_desc s_hostbased_service = { 10, "\x2a\x86\x48\x86\xf7\x12\x01\x02\x01\x04" };
gss_OID GSS_C_NT_USER_NAME = &s_user_name;
gss_OID GSS_C_NT_HOSTBASED_SERVICE = &s_hostbased_service;

static void *s_gssapi;
static void *s_systemd;
static pthread_once_t s_gssapi_once = PTHREAD_ONCE_INIT;
static pthread_once_t s_systemd_once = PTHREAD_ONCE_INIT;

static void
s_gssapi_open (void)
{
    s_gssapi = dlopen (S_GSSAPI, RTLD_NOW | RTLD_LOCAL);
}

static void
s_systemd_open (void)
{
    s_systemd = dlopen (S_SYSTEMD, RTLD_NOW | RTLD_LOCAL);
}

//  The function NAME of the library, or NULL when the library or the
//  function is not there.
static void *
s_gssapi_function (const char *name)
{
    pthread_once (&s_gssapi_once, s_gssapi_open);
    return s_gssapi ? dlsym (s_gssapi, name) : NULL;
}

static void *
s_systemd_function (const char *name)
{
    pthread_once (&s_systemd_once, s_systemd_open);
    return s_systemd ? dlsym (s_systemd, name) : NULL;
}

//  A GSS-API function: forwarded, or GSS_S_UNAVAILABLE with a minor
//  status of 0 (the first argument of every one of them).
#define S_GSS(name, params, args)                                                                  \
    OM_uint32 name params                                                                          \
    {                                                                                              \
        __typeof__ (name) *real = (__typeof__ (name) *) s_gssapi_function (#name);                 \
        if (real)                                                                                  \
            return real args;                                                                      \
        if (minor_status)                                                                          \
            *minor_status = 0;                                                                     \
        return GSS_S_UNAVAILABLE;                                                                  \
    }

S_GSS (gss_accept_sec_context,
       (OM_uint32 * minor_status, gss_ctx_id_t *context, gss_cred_id_t acceptor_cred,
        gss_buffer_t input_token, gss_channel_bindings_t bindings, gss_name_t *source_name,
        gss_OID *mech_type, gss_buffer_t output_token, OM_uint32 *ret_flags, OM_uint32 *time_rec,
        gss_cred_id_t *delegated_cred),
       (minor_status, context, acceptor_cred, input_token, bindings, source_name, mech_type,
        output_token, ret_flags, time_rec, delegated_cred))
S_GSS (gss_acquire_cred,
       (OM_uint32 * minor_status, gss_name_t desired_name, OM_uint32 time_req,
        gss_OID_set desired_mechs, gss_cred_usage_t cred_usage, gss_cred_id_t *cred,
        gss_OID_set *actual_mechs, OM_uint32 *time_rec),
       (minor_status, desired_name, time_req, desired_mechs, cred_usage, cred, actual_mechs,
        time_rec))
S_GSS (gss_delete_sec_context,
       (OM_uint32 * minor_status, gss_ctx_id_t *context, gss_buffer_t output_token),
       (minor_status, context, output_token))
S_GSS (gss_display_name,
       (OM_uint32 * minor_status, gss_name_t name, gss_buffer_t output, gss_OID *output_type),
       (minor_status, name, output, output_type))
S_GSS (gss_import_name,
       (OM_uint32 * minor_status, gss_buffer_t input, gss_OID input_type, gss_name_t *output),
       (minor_status, input, input_type, output))
S_GSS (gss_init_sec_context,
       (OM_uint32 * minor_status, gss_cred_id_t cred, gss_ctx_id_t *context, gss_name_t target,
        gss_OID mech_type, OM_uint32 req_flags, OM_uint32 time_req, gss_channel_bindings_t bindings,
        gss_buffer_t input_token, gss_OID *actual_mech_type, gss_buffer_t output_token,
        OM_uint32 *ret_flags, OM_uint32 *time_rec),
       (minor_status, cred, context, target, mech_type, req_flags, time_req, bindings, input_token,
        actual_mech_type, output_token, ret_flags, time_rec))
S_GSS (gss_release_buffer, (OM_uint32 * minor_status, gss_buffer_t buffer), (minor_status, buffer))
S_GSS (gss_release_cred, (OM_uint32 * minor_status, gss_cred_id_t *cred), (minor_status, cred))
S_GSS (gss_release_name, (OM_uint32 * minor_status, gss_name_t *name), (minor_status, name))
S_GSS (gss_unwrap,
       (OM_uint32 * minor_status, gss_ctx_id_t context, gss_buffer_t input, gss_buffer_t output,
        int *conf_state, gss_qop_t *qop_state),
       (minor_status, context, input, output, conf_state, qop_state))
S_GSS (gss_wrap,
       (OM_uint32 * minor_status, gss_ctx_id_t context, int conf_req, gss_qop_t qop_req,
        gss_buffer_t input, int *conf_state, gss_buffer_t output),
       (minor_status, context, conf_req, qop_req, input, conf_state, output))

//  A libsystemd function: forwarded, or -ENOSYS, its way to fail.
#define S_SD(name, params, args)                                                                   \
    int name params                                                                                \
    {                                                                                              \
        __typeof__ (name) *real = (__typeof__ (name) *) s_systemd_function (#name);                \
        return real ? real args : -ENOSYS;                                                         \
    }

S_SD (sd_listen_fds, (int unset_environment), (unset_environment))
S_SD (sd_is_socket_inet, (int fd, int family, int type, int listening, uint16_t port),
      (fd, family, type, listening, port))
S_SD (sd_is_socket_unix, (int fd, int type, int listening, const char *path, size_t length),
      (fd, type, listening, path, length))

//  The worker's own calls (worker/notify.c): made only when a service
//  manager set NOTIFY_SOCKET, so a worker that none started never opens
//  the library.
S_SD (sd_notify, (int unset_environment, const char *state), (unset_environment, state))
S_SD (sd_watchdog_enabled, (int unset_environment, uint64_t *usec), (unset_environment, usec))

/*  node/resolver.c: the seeds' DNS lookups, in a thread of their own.
 */

#include "node/resolver.h"

#include "node/why.h"

#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <resolv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

//  Targets of one SRV record looked at, at most.
#define S_SRV_TARGETS 16

struct _shoal_resolver_t {
    int family;
    int fd;      //  the actor's end: results come in
    int peer_fd; //  the rounds' end, a copy of it given to each
    bool busy;
};

//  One round, as its thread owns it.
typedef struct {
    int fd;
    int family;
    size_t count;
    shoal_option_hostport_t seeds[];
} s_round_t;

//  ---------------------------------------------------------------------
//  The SRV answer

static uint16_t
s_be16 (const uint8_t *at)
{
    return (uint16_t) (at[0] << 8 | at[1]);
}

//  One SRV record's data (rdata of length size, inside answer .. end).
static int
s_srv_target (const uint8_t *answer, const uint8_t *end, const uint8_t *rdata, size_t size,
              shoal_srv_target_t *out)
{
    if (size < 7)
        return -1;
    out->priority = s_be16 (rdata);
    out->weight = s_be16 (rdata + 2);
    out->port = s_be16 (rdata + 4);
    int used = dn_expand (answer, end, rdata + 6, out->target, (int) sizeof out->target);
    return used < 0 || (size_t) used > size - 6 ? -1 : 0;
}

int
shoal_srv_parse (const uint8_t *answer, size_t size, shoal_srv_target_t *out, size_t max, char *why,
                 size_t why_size)
{
    const uint8_t *end = answer + size;
    if (size < NS_HFIXEDSZ || size > NS_MAXMSG)
        return shoal_why (why, why_size, "a DNS answer of %zu bytes", size);
    unsigned rcode = answer[3] & 0x0f;
    if (rcode != 0)
        return shoal_why (why, why_size, "the DNS server answered with error %u", rcode);
    unsigned questions = s_be16 (answer + 4), answers = s_be16 (answer + 6);
    const uint8_t *at = answer + NS_HFIXEDSZ;
    for (unsigned i = 0; i < questions; i++) {
        int skip = dn_skipname (at, end);
        if (skip < 0 || end - (at + skip) < NS_QFIXEDSZ)
            return shoal_why (why, why_size, "a malformed question in a DNS answer");
        at += skip + NS_QFIXEDSZ;
    }
    size_t found = 0;
    for (unsigned i = 0; i < answers; i++) {
        int skip = dn_skipname (at, end);
        if (skip < 0 || end - (at + skip) < NS_RRFIXEDSZ)
            return shoal_why (why, why_size, "a malformed record in a DNS answer");
        at += skip;
        unsigned type = s_be16 (at), class = s_be16 (at + 2);
        size_t length = s_be16 (at + 8);
        at += NS_RRFIXEDSZ;
        if ((size_t) (end - at) < length)
            return shoal_why (why, why_size, "a DNS record longer than its answer");
        if (type == ns_t_srv && class == ns_c_in && found < max) {
            if (s_srv_target (answer, end, at, length, &out[found]) != 0)
                return shoal_why (why, why_size, "a malformed SRV record");
            //  "." says the service is not there (RFC 2782).
            found += strcmp (out[found].target, "") != 0 && strcmp (out[found].target, ".") != 0;
        }
        at += length;
    }
    return (int) found;
}

//  ---------------------------------------------------------------------
//  Lookups, on the round's thread

static bool
s_is_numeric (const char *host)
{
    struct in6_addr unused;
    return inet_pton (AF_INET, host, &unused) == 1 || inet_pton (AF_INET6, host, &unused) == 1;
}

//  Appends the addresses host resolves to, with port, to result (up to its
//  room). Returns 0, or -1 with the reason in result->why.
static int
s_resolve_host (int family, const char *host, uint16_t port, shoal_resolver_result_t *result)
{
    char service[8];
    snprintf (service, sizeof service, "%u", port);
    struct addrinfo hints = { .ai_socktype = SOCK_DGRAM,
                              .ai_family = family == AF_INET ? AF_INET : AF_UNSPEC,
                              .ai_flags = s_is_numeric (host) ? AI_NUMERICHOST : 0 };
    struct addrinfo *found = NULL;
    int rc = getaddrinfo (host, service, &hints, &found);
    if (rc != 0) {
        //  An IPv6 address given to an IPv4 node resolves to nothing here.
        if (family == AF_INET && strchr (host, ':'))
            return shoal_why (result->why, sizeof result->why,
                              "an IPv6 address, and this node is bound to IPv4");
        return shoal_why (result->why, sizeof result->why, "cannot resolve: %s",
                          rc == EAI_SYSTEM ? strerror (errno) : gai_strerror (rc));
    }
    for (struct addrinfo *at = found; at && result->count < SHOAL_RESOLVER_ADDRS;
         at = at->ai_next) {
        char numeric[NI_MAXHOST];
        if (getnameinfo (at->ai_addr, at->ai_addrlen, numeric, sizeof numeric, NULL, 0,
                         NI_NUMERICHOST) != 0 ||
            strlen (numeric) + 8 > SHOAL_ADDR_MAX)
            continue;
        snprintf (result->addrs[result->count++], SHOAL_ADDR_MAX + 1,
                  at->ai_family == AF_INET6 ? "[%s]:%u" : "%s:%u", numeric, port);
    }
    freeaddrinfo (found);
    return 0;
}

//  The reason an SRV query found nothing, from the resolver's h_errno.
static const char *
s_srv_failure (int error)
{
    switch (error) {
    case HOST_NOT_FOUND:
        return "no such name";
    case NO_DATA:
        return "no SRV record of that name";
    case TRY_AGAIN:
        return "the DNS server did not answer";
    default:
        return "the DNS lookup failed";
    }
}

//  An SRV record's targets, each resolved in turn.
static void
s_resolve_srv (int family, const char *name, shoal_resolver_result_t *result)
{
    uint8_t *answer = malloc (NS_MAXMSG);
    struct __res_state state;
    memset (&state, 0, sizeof state);
    if (!answer || res_ninit (&state) != 0) {
        shoal_why (result->why, sizeof result->why, "cannot read the resolver's configuration");
        result->count = -1;
        free (answer);
        return;
    }
    int size = res_nquery (&state, name, ns_c_in, ns_t_srv, answer, NS_MAXMSG);
    int error = state.res_h_errno;
    res_nclose (&state);
    shoal_srv_target_t targets[S_SRV_TARGETS];
    int found = -1;
    if (size < 0)
        shoal_why (result->why, sizeof result->why, "cannot resolve: %s", s_srv_failure (error));
    else
        found = shoal_srv_parse (answer, (size_t) size, targets, S_SRV_TARGETS, result->why,
                                 sizeof result->why);
    free (answer);
    if (found <= 0) {
        if (found == 0)
            shoal_why (result->why, sizeof result->why, "the SRV record names no target");
        result->count = -1;
        return;
    }
    char first_why[sizeof result->why] = "";
    for (int i = 0; i < found; i++)
        if (s_resolve_host (family, targets[i].target, targets[i].port, result) != 0 && !*first_why)
            shoal_why (first_why, sizeof first_why, "target %s: %s", targets[i].target,
                       result->why);
    if (result->count == 0) {
        shoal_why (result->why, sizeof result->why, "%s", first_why);
        result->count = -1;
    }
}

static void
s_resolve_seed (int family, const shoal_option_hostport_t *seed, shoal_resolver_result_t *result)
{
    if (seed->port == 0)
        s_resolve_srv (family, seed->host, result);
    else if (s_resolve_host (family, seed->host, seed->port, result) != 0)
        result->count = -1;
}

//  Sends one result; false when the node has gone (its end is closed).
static bool
s_send (int fd, const shoal_resolver_result_t *result)
{
    ssize_t sent;
    do
        sent = send (fd, result, sizeof *result, MSG_NOSIGNAL);
    while (sent < 0 && errno == EINTR);
    return sent == (ssize_t) sizeof *result;
}

//  The round: the numeric seeds first (they never wait), then the names.
static void *
s_round_run (void *arg)
{
    s_round_t *round = arg;
    shoal_resolver_result_t *result = malloc (sizeof *result);
    bool open = result != NULL;
    for (int numeric = 1; open && numeric >= 0; numeric--)
        for (size_t i = 0; open && i < round->count; i++) {
            const shoal_option_hostport_t *seed = &round->seeds[i];
            if (s_is_numeric (seed->host) != (numeric == 1))
                continue;
            memset (result, 0, sizeof *result);
            result->seed = (uint32_t) i;
            s_resolve_seed (round->family, seed, result);
            open = s_send (round->fd, result);
        }
    if (open) {
        memset (result, 0, sizeof *result);
        result->done = true;
        s_send (round->fd, result);
    }
    free (result);
    close (round->fd);
    free (round);
    return NULL;
}

//  ---------------------------------------------------------------------
//  The actor's side

shoal_resolver_t *
shoal_resolver_new (int family, char *why, size_t why_size)
{
    shoal_resolver_t *self = calloc (1, sizeof *self);
    int fds[2];
    if (!self || socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0) {
        shoal_why (why, why_size, "resolver: %s", strerror (errno));
        free (self);
        return NULL;
    }
    self->family = family;
    self->fd = fds[0];
    self->peer_fd = fds[1];
    return self;
}

void
shoal_resolver_destroy (shoal_resolver_t **self_p)
{
    shoal_resolver_t *self = *self_p;
    if (!self)
        return;
    //  A round still running finds its sends refused, and ends.
    close (self->fd);
    close (self->peer_fd);
    free (self);
    *self_p = NULL;
}

int
shoal_resolver_fd (const shoal_resolver_t *self)
{
    return self->fd;
}

bool
shoal_resolver_busy (const shoal_resolver_t *self)
{
    return self->busy;
}

int
shoal_resolver_start (shoal_resolver_t *self, const shoal_option_hostport_t *seeds, size_t count,
                      char *why, size_t why_size)
{
    if (self->busy)
        return shoal_why (why, why_size, "resolver: a round runs already");
    s_round_t *round = malloc (sizeof *round + count * sizeof *seeds);
    if (!round)
        return shoal_why (why, why_size, "resolver: out of memory");
    round->family = self->family;
    round->count = count;
    if (count)
        memcpy (round->seeds, seeds, count * sizeof *seeds);
    round->fd = fcntl (self->peer_fd, F_DUPFD_CLOEXEC, 0);
    pthread_attr_t attributes;
    pthread_t thread;
    int rc = round->fd < 0 ? errno : pthread_attr_init (&attributes);
    if (rc == 0) {
        pthread_attr_setdetachstate (&attributes, PTHREAD_CREATE_DETACHED);
        rc = pthread_create (&thread, &attributes, s_round_run, round);
        pthread_attr_destroy (&attributes);
    }
    if (rc != 0) {
        if (round->fd >= 0)
            close (round->fd);
        free (round);
        return shoal_why (why, why_size, "resolver: %s", strerror (rc));
    }
    self->busy = true;
    return 0;
}

int
shoal_resolver_read (shoal_resolver_t *self, shoal_resolver_result_t *out)
{
    ssize_t got;
    do
        got = recv (self->fd, out, sizeof *out, MSG_DONTWAIT);
    while (got < 0 && errno == EINTR);
    if (got != (ssize_t) sizeof *out)
        return 0;
    assert (out->done || out->count <= SHOAL_RESOLVER_ADDRS);
    if (out->done)
        self->busy = false;
    return 1;
}

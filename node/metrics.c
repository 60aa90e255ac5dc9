/*  node/metrics.c: a node's metrics, counted and rendered on the actor's
    thread, served by libmicrohttpd from its own.

    libmicrohttpd is loaded (dlopen) when a node first serves metrics, not
    linked: it brings GnuTLS and eight more libraries with it, which cost
    every process 2.7 MB of RSS (1.1 MB proportional), measured on the
    counter example, whether it serves metrics or not.
*/

#include "node/metrics.h"
#include "node/process.h"
#include "node/unplaced.h"
#include "node/why.h"
#include "shoal.h"

#include <dlfcn.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

//  The server's bounds: connections at once, from one address, how long
//  one may idle, and the memory each may take for its request.
#define S_CONNECTIONS        16
#define S_CONNECTIONS_PER_IP 8
#define S_IDLE_S             10
#define S_CONNECTION_MEMORY  (32 * 1024)
#define S_BACKLOG            16

#define S_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

//  The upper bounds of the handoff gap's buckets, in seconds; +Inf follows.
static const double s_gap_bounds[] = {
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30
};
#define S_GAP_BUCKETS (sizeof s_gap_bounds / sizeof s_gap_bounds[0])

//  A task of the handoff this node leads, as its last publication placed
//  it: its active's node, or, while it has none, the node that held it and
//  when the active was taken away.
typedef struct {
    char *task;
    shoal_id_t owner;
    bool active;
    uint64_t revoked_ms;
} s_handoff_task_t;

//  The longest answer of /healthz and /readyz, newline included.
#define S_PROBE_TEXT 240

struct _shoal_metrics_t {
    struct MHD_Daemon *daemon;
    //  The last page published, under lock, with when (this file's clock)
    //  and why the node was not ready then ("": ready): the server's only
    //  input.
    pthread_mutex_t lock;
    char *page;
    size_t page_size;
    uint64_t published_ms;
    char unready[S_PROBE_TEXT];

    //  The rest is the actor's.
    uint64_t moves[SHOAL_TASKS_STOP + 1]; //  by command type
    uint64_t gap_buckets[S_GAP_BUCKETS + 1];
    uint64_t gap_count;
    uint64_t gap_sum_ms;
    //  The handoff followed: which one, and the version last seen.
    const shoal_handoff_t *handoff;
    uint64_t handoff_term;
    uint64_t handoff_version;
    s_handoff_task_t *handoff_tasks; //  sorted by task
    size_t handoff_task_count;
    uint64_t leader_changes;
    shoal_id_t leader; //  of the last leader event (all zero: none yet)
    uint64_t leader_term;
    uint64_t child_restarts;
    bool changed; //  since the last page
    bool rendered;
    uint64_t rendered_ms;
};

//  ---------------------------------------------------------------------
//  libmicrohttpd, loaded once

#define S_MHD_LIBRARY "libmicrohttpd.so.12"

static struct {
    __typeof__ (MHD_start_daemon) *start_daemon;
    __typeof__ (MHD_stop_daemon) *stop_daemon;
    __typeof__ (MHD_create_response_from_buffer) *create_response_from_buffer;
    __typeof__ (MHD_add_response_header) *add_response_header;
    __typeof__ (MHD_queue_response) *queue_response;
    __typeof__ (MHD_destroy_response) *destroy_response;
    char error[200]; //  "" once loaded
} s_mhd;
static pthread_once_t s_mhd_once = PTHREAD_ONCE_INIT;

//  Takes symbol from library into *slot; false when it is missing.
static bool
s_mhd_symbol (void *library, const char *symbol, void **slot)
{
    *slot = dlsym (library, symbol);
    if (!*slot)
        snprintf (s_mhd.error, sizeof s_mhd.error, "%s has no %s", S_MHD_LIBRARY, symbol);
    return *slot != NULL;
}

static void
s_mhd_load (void)
{
    //  Never closed: a server may start again at any later node's start.
    void *library = dlopen (S_MHD_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf (s_mhd.error, sizeof s_mhd.error,
                  "cannot load %s (Debian package libmicrohttpd12): %s", S_MHD_LIBRARY, dlerror ());
        return;
    }
    if (s_mhd_symbol (library, "MHD_start_daemon", (void **) &s_mhd.start_daemon) &&
        s_mhd_symbol (library, "MHD_stop_daemon", (void **) &s_mhd.stop_daemon) &&
        s_mhd_symbol (library, "MHD_create_response_from_buffer",
                      (void **) &s_mhd.create_response_from_buffer) &&
        s_mhd_symbol (library, "MHD_add_response_header", (void **) &s_mhd.add_response_header) &&
        s_mhd_symbol (library, "MHD_queue_response", (void **) &s_mhd.queue_response) &&
        s_mhd_symbol (library, "MHD_destroy_response", (void **) &s_mhd.destroy_response))
        s_mhd.error[0] = 0;
}

//  ---------------------------------------------------------------------
//  The server, on libmicrohttpd's thread

static struct MHD_Response *
s_response_text (const char *text)
{
    return s_mhd.create_response_from_buffer (strlen (text), (void *) text, MHD_RESPMEM_PERSISTENT);
}

//  The monotonic clock, in milliseconds: both threads read it here, the
//  actor's to stamp a publication, the server's to age it.
static uint64_t
s_mono_ms (void)
{
    struct timespec now;
    clock_gettime (CLOCK_MONOTONIC, &now);
    return (uint64_t) now.tv_sec * 1000 + (uint64_t) now.tv_nsec / 1000000;
}

bool
shoal_metrics_probe (bool ready, bool published, uint64_t age_ms, const char *unready, char *text,
                     size_t size)
{
    const char *what = ready ? "ready" : "healthy";
    if (!published) {
        snprintf (text, size, "not %s: the node is starting\n", what);
        return false;
    }
    if (age_ms > SHOAL_METRICS_STALE_MS) {
        snprintf (text, size,
                  "not %s: the node's thread has published nothing for %.1f s (the bound is "
                  "%d s): it is stuck\n",
                  what, (double) age_ms / 1000.0, SHOAL_METRICS_STALE_MS / 1000);
        return false;
    }
    if (ready && unready[0]) {
        snprintf (text, size, "not ready: %s\n", unready);
        return false;
    }
    snprintf (text, size, "ok\n");
    return true;
}

//  What a path serves: 0 none, 1 the page, 2 /healthz, 3 /readyz.
static int
s_path (const char *url)
{
    static const char *const paths[] = { "/metrics", "/healthz", "/readyz" };
    for (int i = 0; i < 3; i++)
        if (strcmp (url, paths[i]) == 0)
            return i + 1;
    return 0;
}

//  The answer to a GET or HEAD of path (1 .. 3), into *status.
static struct MHD_Response *
s_serve (shoal_metrics_t *self, int path, unsigned int *status)
{
    struct MHD_Response *response;
    pthread_mutex_lock (&self->lock);
    if (path == 1) {
        *status = self->page ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE;
        response = self->page ? s_mhd.create_response_from_buffer (self->page_size, self->page,
                                                                   MHD_RESPMEM_MUST_COPY)
                              : s_response_text ("the node is starting\n");
    } else {
        char text[S_PROBE_TEXT + 128];
        bool ok =
            shoal_metrics_probe (path == 3, self->page != NULL, s_mono_ms () - self->published_ms,
                                 self->unready, text, sizeof text);
        *status = ok ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE;
        response = s_mhd.create_response_from_buffer (strlen (text), text, MHD_RESPMEM_MUST_COPY);
    }
    pthread_mutex_unlock (&self->lock);
    if (response && path == 1 && *status == MHD_HTTP_OK)
        s_mhd.add_response_header (response, MHD_HTTP_HEADER_CONTENT_TYPE, S_CONTENT_TYPE);
    else if (response && path != 1)
        s_mhd.add_response_header (response, MHD_HTTP_HEADER_CONTENT_TYPE,
                                   "text/plain; charset=utf-8");
    return response;
}

//  Every request: the page for GET /metrics, the probes' answers for GET
//  /healthz and /readyz, an error for anything else. A request with a body
//  is answered at its first call, before the body: nothing here reads one.
static enum MHD_Result
s_answer (void *arg, struct MHD_Connection *connection, const char *url, const char *method,
          const char *version, const char *upload_data, size_t *upload_data_size, void **state)
{
    shoal_metrics_t *self = arg;
    (void) version, (void) upload_data, (void) upload_data_size, (void) state;
    bool reads =
        strcmp (method, MHD_HTTP_METHOD_GET) == 0 || strcmp (method, MHD_HTTP_METHOD_HEAD) == 0;
    int path = url ? s_path (url) : 0;
    unsigned int status;
    struct MHD_Response *response;
    if (!path) {
        status = MHD_HTTP_NOT_FOUND;
        response = s_response_text ("not found: the paths are /metrics, /healthz and /readyz\n");
    } else if (!reads) {
        status = MHD_HTTP_METHOD_NOT_ALLOWED;
        response = s_response_text ("method not allowed: GET or HEAD\n");
        if (response)
            s_mhd.add_response_header (response, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    } else
        response = s_serve (self, path, &status);
    if (!response)
        return MHD_NO;
    enum MHD_Result rc = s_mhd.queue_response (connection, status, response);
    s_mhd.destroy_response (response);
    return rc;
}

//  A listening TCP socket at host:port. Made here rather than by
//  libmicrohttpd, which would not say why a bind failed.
static int
s_listen (const char *host, uint16_t port, char *why, size_t why_size)
{
    char address[SHOAL_ADDR_MAX * 4 + 16], service[8];
    snprintf (address, sizeof address, strchr (host, ':') ? "[%s]:%u" : "%s:%u", host, port);
    snprintf (service, sizeof service, "%u", port);
    struct addrinfo hints = { .ai_family = AF_UNSPEC,
                              .ai_socktype = SOCK_STREAM,
                              .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
    struct addrinfo *found = NULL;
    int rc = getaddrinfo (host, service, &hints, &found);
    if (rc != 0 || !found) {
        shoal_why (why, why_size, "cannot resolve %s: %s", address,
                   rc ? gai_strerror (rc) : "no address");
        return -1;
    }
    int fd = socket (found->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int one = 1;
    if (fd < 0 || setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind (fd, found->ai_addr, found->ai_addrlen) != 0 || listen (fd, S_BACKLOG) != 0) {
        shoal_why (why, why_size, "cannot listen at %s: %s", address, strerror (errno));
        if (fd >= 0)
            close (fd);
        fd = -1;
    }
    freeaddrinfo (found);
    return fd;
}

shoal_metrics_t *
shoal_metrics_new (const char *host, uint16_t port, char *why, size_t why_size)
{
    shoal_metrics_t *self = calloc (1, sizeof *self);
    if (!self || pthread_mutex_init (&self->lock, NULL) != 0) {
        free (self);
        shoal_why (why, why_size, "out of memory");
        return NULL;
    }
    self->changed = true;
    //  The library first: a node that cannot serve says so before it
    //  takes the port.
    pthread_once (&s_mhd_once, s_mhd_load);
    if (s_mhd.error[0]) {
        shoal_why (why, why_size, "%s", s_mhd.error);
        shoal_metrics_destroy (&self);
        return NULL;
    }
    int fd = s_listen (host, port, why, why_size);
    if (fd < 0) {
        shoal_metrics_destroy (&self);
        return NULL;
    }
    self->daemon = s_mhd.start_daemon (
        MHD_USE_AUTO_INTERNAL_THREAD, 0, NULL, NULL, s_answer, self, MHD_OPTION_LISTEN_SOCKET,
        (MHD_socket) fd, MHD_OPTION_CONNECTION_LIMIT, (unsigned int) S_CONNECTIONS,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int) S_CONNECTIONS_PER_IP,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int) S_IDLE_S, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t) S_CONNECTION_MEMORY, MHD_OPTION_END);
    if (!self->daemon) {
        //  The socket is not closed here: libmicrohttpd closes a socket it
        //  was given on some of its failures and not on others, and closing
        //  it twice could close a descriptor another thread opened since.
        //  A failed start may leak one descriptor; it never closes another's.
        shoal_why (why, why_size, "cannot start the HTTP server at %s:%u", host, port);
        shoal_metrics_destroy (&self);
        return NULL;
    }
    return self;
}

void
shoal_metrics_destroy (shoal_metrics_t **self_p)
{
    shoal_metrics_t *self = self_p ? *self_p : NULL;
    if (!self)
        return;
    //  Stopping joins the server's thread and closes the listening socket.
    if (self->daemon)
        s_mhd.stop_daemon (self->daemon);
    for (size_t i = 0; i < self->handoff_task_count; i++)
        free (self->handoff_tasks[i].task);
    free (self->handoff_tasks);
    free (self->page);
    pthread_mutex_destroy (&self->lock);
    free (self);
    *self_p = NULL;
}

//  ---------------------------------------------------------------------
//  Counting, on the actor's thread

void
shoal_metrics_command (shoal_metrics_t *self, const shoal_tasks_command_t *command)
{
    if (self && command->type <= SHOAL_TASKS_STOP)
        self->moves[command->type]++;
}

static void
s_gap_observe (shoal_metrics_t *self, uint64_t gap_ms)
{
    size_t bucket = 0;
    while (bucket < S_GAP_BUCKETS && (double) gap_ms / 1000.0 > s_gap_bounds[bucket])
        bucket++;
    self->gap_buckets[bucket]++;
    self->gap_count++;
    self->gap_sum_ms += gap_ms;
}

//  True while task ("job/index") is a task of the job specs.
static bool
s_task_exists (const shoal_peer_t *peer, const char *task)
{
    const char *slash = strrchr (task, '/');
    if (!slash)
        return false;
    unsigned long index = strtoul (slash + 1, NULL, 10);
    const shoal_jobspec_t *specs;
    size_t count = shoal_jobs_specs (shoal_peer_jobs (peer), &specs);
    for (size_t i = 0; i < count; i++)
        if (strlen (specs[i].name) == (size_t) (slash - task) &&
            strncmp (specs[i].name, task, (size_t) (slash - task)) == 0)
            return index < specs[i].parallelism;
    return false;
}

//  What became of one task at a publication: active on node active, or on
//  none (NULL). A move's gap is the time from the publication that took
//  the active role away from a node to the one that gave it to another.
static void
s_handoff_task_next (shoal_metrics_t *self, uint64_t now, s_handoff_task_t *task,
                     const shoal_id_t *active)
{
    if (active) {
        bool moved = memcmp (&task->owner, active, sizeof *active) != 0;
        if (!task->active && moved)
            s_gap_observe (self, now - task->revoked_ms);
        task->owner = *active;
        task->active = true;
    } else if (task->active) {
        task->active = false;
        task->revoked_ms = now;
    }
}

//  Follows the placements the handoff published since the last call: a
//  merge of the tasks followed and the tasks placed, both sorted.
static void
s_handoff_follow (shoal_metrics_t *self, uint64_t now, const shoal_peer_t *peer)
{
    const shoal_handoff_t *handoff = shoal_peer_handoff (peer);
    uint64_t term = shoal_elector_term (shoal_peer_elector (peer));
    if (handoff != self->handoff || term != self->handoff_term) {
        //  Another leadership: its first publication adopts what runs.
        for (size_t i = 0; i < self->handoff_task_count; i++)
            free (self->handoff_tasks[i].task);
        self->handoff_task_count = 0;
        self->handoff = handoff;
        self->handoff_term = term;
        self->handoff_version = 0;
    }
    if (!handoff || shoal_handoff_version (handoff) == self->handoff_version)
        return;
    const shoal_placement_t *placements;
    size_t count = shoal_handoff_placements (handoff, &placements);
    size_t most = self->handoff_task_count + count;
    s_handoff_task_t *next = malloc ((most ? most : 1) * sizeof *next);
    if (!next)
        return; //  the next publication tries again
    self->handoff_version = shoal_handoff_version (handoff);
    size_t kept = 0, i = 0, p = 0;
    while (i < self->handoff_task_count || p < count) {
        s_handoff_task_t *old = i < self->handoff_task_count ? &self->handoff_tasks[i] : NULL;
        const char *placed = p < count ? placements[p].task : NULL;
        int order = !old ? 1 : !placed ? -1 : strcmp (old->task, placed);
        const shoal_id_t *active = NULL;
        size_t end = p;
        if (order >= 0)
            for (; end < count && strcmp (placements[end].task, placed) == 0; end++)
                if (placements[end].role == SHOAL_ROLE_ACTIVE)
                    active = &placements[end].node;
        if (order < 0) {
            //  Placed nowhere: followed while its job has it.
            s_handoff_task_next (self, now, old, NULL);
            if (s_task_exists (peer, old->task))
                next[kept++] = *old;
            else
                free (old->task);
            i++;
        } else if (order == 0) {
            s_handoff_task_next (self, now, old, active);
            next[kept++] = *old;
            i++;
        } else if (active) {
            //  Followed from its first active on.
            char *copy = strdup (placed);
            if (copy)
                next[kept++] = (s_handoff_task_t){ .task = copy, .owner = *active, .active = true };
        }
        p = order >= 0 ? end : p;
    }
    free (self->handoff_tasks);
    self->handoff_tasks = next;
    self->handoff_task_count = kept;
}

//  ---------------------------------------------------------------------
//  The page

//  A metric's HELP and TYPE lines.
static void
s_family (FILE *out, const char *name, const char *type, const char *help)
{
    fprintf (out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

//  A label value, escaped as the text format wants.
static void
s_label (FILE *out, const char *value)
{
    for (const char *c = value; *c; c++)
        if (*c == '\\' || *c == '"')
            fprintf (out, "\\%c", *c);
        else if (*c == '\n')
            fputs ("\\n", out);
        else
            fputc (*c, out);
}

static const char *const s_roles[] = { "none", "active", "standby", "learner" };
static const char *const s_task_states[] = { "starting", "running", "stopping", "stopped",
                                             "failed" };
static const char *const s_member_states[] = { "alive", "suspect", "dead", "left" };
static const char *const s_moves[] = { [SHOAL_TASKS_START] = "start",
                                       [SHOAL_TASKS_PROMOTE] = "promote",
                                       [SHOAL_TASKS_DEMOTE] = "demote",
                                       [SHOAL_TASKS_STOP] = "stop" };

static void
s_render_cluster (FILE *out, uint64_t now, const shoal_metrics_sources_t *sources)
{
    const shoal_membership_t *membership = shoal_peer_membership (sources->peer);
    uint64_t members[4] = { 0 };
    size_t size = shoal_membership_size (membership);
    for (size_t i = 0; i < size; i++) {
        shoal_membership_member_t member;
        if (shoal_membership_member_at (membership, i, &member) == 0 && member.state < 4)
            members[member.state]++;
    }
    s_family (out, "shoal_members", "gauge", "Members this node knows, itself included, by state.");
    for (int state = 0; state < 4; state++)
        fprintf (out, "shoal_members{state=\"%s\"} %llu\n", s_member_states[state],
                 (unsigned long long) members[state]);

    const shoal_elector_t *elector = shoal_peer_elector (sources->peer);
    shoal_id_t leader = { 0 }, none = { 0 };
    uint64_t term = 0;
    shoal_peer_leader (sources->peer, now, &leader, &term);
    s_family (out, "shoal_leader_known", "gauge", "1 when this node follows a leader, or leads.");
    fprintf (out, "shoal_leader_known %d\n", memcmp (&leader, &none, sizeof none) != 0);
    s_family (out, "shoal_leader_acting", "gauge",
              "1 when this node is the leader and acts as one (holds a quorum).");
    fprintf (out, "shoal_leader_acting %d\n", shoal_elector_acting (elector, now));
    s_family (out, "shoal_term", "gauge", "The highest election term this node has seen.");
    fprintf (out, "shoal_term %llu\n", (unsigned long long) shoal_elector_term (elector));
}

//  The membership's own figures: Lifeguard's awareness and the probes'
//  round trips.
static void
s_render_membership (FILE *out, const shoal_metrics_sources_t *sources)
{
    const shoal_membership_t *membership = shoal_peer_membership (sources->peer);
    s_family (out, "shoal_awareness", "gauge",
              "Lifeguard's local health score: 0 healthy, up to awareness-max - 1; above 0 this "
              "node doubts its own timeliness and waits longer before it suspects others.");
    fprintf (out, "shoal_awareness %u\n", shoal_membership_health (membership));
    shoal_membership_rtt_t rtt;
    shoal_membership_rtt (membership, &rtt);
    s_family (out, "shoal_probe_rtt_seconds", "histogram",
              "Round trips of the probes whose target ACKed directly, from the PING to the ACK, "
              "to the millisecond.");
    uint64_t cumulative = 0;
    for (size_t b = 0; b < SHOAL_MEMBERSHIP_RTT_BUCKETS; b++) {
        cumulative += rtt.buckets[b];
        fprintf (out, "shoal_probe_rtt_seconds_bucket{le=\"%g\"} %llu\n",
                 shoal_membership_rtt_bounds_ms[b] / 1000.0, (unsigned long long) cumulative);
    }
    fprintf (out, "shoal_probe_rtt_seconds_bucket{le=\"+Inf\"} %llu\n",
             (unsigned long long) rtt.count);
    fprintf (out, "shoal_probe_rtt_seconds_sum %.3f\n", (double) rtt.sum_ms / 1000.0);
    fprintf (out, "shoal_probe_rtt_seconds_count %llu\n", (unsigned long long) rtt.count);
}

static void
s_render_tasks (shoal_metrics_t *self, FILE *out, const shoal_metrics_sources_t *sources)
{
    const shoal_tasks_t *tasks = shoal_peer_tasks (sources->peer);
    shoal_epoch_t version = shoal_tasks_version (tasks);
    s_family (out, "shoal_lease_held", "gauge",
              "1 while this node holds the lease that lets its actives act.");
    fprintf (out, "shoal_lease_held %d\n", sources->leased);
    s_family (out, "shoal_assignment_term", "gauge", "The term of the assignment applied.");
    fprintf (out, "shoal_assignment_term %llu\n", (unsigned long long) version.term);
    s_family (out, "shoal_assignment_version", "gauge", "The version of the assignment applied.");
    fprintf (out, "shoal_assignment_version %llu\n", (unsigned long long) version.version);

    const shoal_task_status_t *held;
    size_t count = shoal_tasks_list (tasks, &held);
    uint64_t by_role[4][5] = { { 0 } };
    for (size_t i = 0; i < count; i++)
        if (held[i].role < 4 && held[i].state < 5)
            by_role[held[i].role][held[i].state]++;
    s_family (out, "shoal_tasks", "gauge", "Tasks this node holds, by role and state.");
    for (int role = 0; role < 4; role++)
        for (int state = 0; state < 5; state++)
            fprintf (out, "shoal_tasks{role=\"%s\",state=\"%s\"} %llu\n", s_roles[role],
                     s_task_states[state], (unsigned long long) by_role[role][state]);

    s_family (out, "shoal_task_lag", "gauge",
              "How far each learner or standby task of this node is behind, in the "
              "application's units; a task whose lag is not reported yet has no series here "
              "(see shoal_task_lag_unknown).");
    size_t series = 0, omitted = 0, unknown = 0;
    for (size_t i = 0; i < count; i++) {
        if (held[i].role != SHOAL_ROLE_LEARNER && held[i].role != SHOAL_ROLE_STANDBY)
            continue;
        if (held[i].lag == UINT64_MAX) {
            unknown++;
            continue;
        }
        if (series++ >= SHOAL_METRICS_LAG_SERIES) {
            omitted++;
            continue;
        }
        fputs ("shoal_task_lag{task=\"", out);
        s_label (out, held[i].task);
        fprintf (out, "\"} %llu\n", (unsigned long long) held[i].lag);
    }
    s_family (out, "shoal_task_lag_unknown", "gauge",
              "Learner and standby tasks whose lag the application has not reported yet: left "
              "out of shoal_task_lag.");
    fprintf (out, "shoal_task_lag_unknown %zu\n", unknown);
    s_family (out, "shoal_task_lag_omitted", "gauge",
              "Learner and standby tasks left out of shoal_task_lag, past its limit of series.");
    fprintf (out, "shoal_task_lag_omitted %zu\n", omitted);

    s_family (out, "shoal_task_moves_total", "counter",
              "Commands that changed the role of a task on this node, by kind.");
    for (int kind = SHOAL_TASKS_START; kind <= SHOAL_TASKS_STOP; kind++)
        fprintf (out, "shoal_task_moves_total{kind=\"%s\"} %llu\n", s_moves[kind],
                 (unsigned long long) self->moves[kind]);
    s_family (out, "shoal_child_restarts_total", "counter",
              "Exits of a task's process that the application reported (shoal worker: each "
              "one it starts again after a backoff, or, at the fifth in a row, reports failed).");
    fprintf (out, "shoal_child_restarts_total %llu\n", (unsigned long long) self->child_restarts);

    s_family (out, "shoal_tasks_unplaced", "gauge",
              "Tasks of the jobs that this node, as acting leader, places on no member, by "
              "reason (0 on a node that does not lead).");
    for (uint8_t reason = SHOAL_UNPLACED_OFFICE; reason <= SHOAL_UNPLACED_MAX; reason++)
        fprintf (out, "shoal_tasks_unplaced{reason=\"%s\"} %llu\n", shoal_unplaced_name (reason),
                 (unsigned long long) shoal_unplaced_watch_count (sources->unplaced, reason));

    s_family (out, "shoal_handoff_gap_seconds", "histogram",
              "On the leader: time from the publication that took a task's active role from "
              "one node to the one that gave it to another.");
    uint64_t cumulative = 0;
    for (size_t b = 0; b <= S_GAP_BUCKETS; b++) {
        cumulative += self->gap_buckets[b];
        if (b < S_GAP_BUCKETS)
            fprintf (out, "shoal_handoff_gap_seconds_bucket{le=\"%g\"} %llu\n", s_gap_bounds[b],
                     (unsigned long long) cumulative);
        else
            fprintf (out, "shoal_handoff_gap_seconds_bucket{le=\"+Inf\"} %llu\n",
                     (unsigned long long) cumulative);
    }
    fprintf (out, "shoal_handoff_gap_seconds_sum %.3f\n", (double) self->gap_sum_ms / 1000.0);
    fprintf (out, "shoal_handoff_gap_seconds_count %llu\n", (unsigned long long) self->gap_count);
}

typedef enum { S_SENT, S_RECEIVED, S_BYTES_SENT, S_BYTES_RECEIVED } s_count_t;

static uint64_t
s_type_count (const shoal_transport_stats_t *stats, uint8_t type, s_count_t count)
{
    switch (count) {
    case S_SENT:
        return stats->types[type].sent;
    case S_RECEIVED:
        return stats->types[type].received;
    case S_BYTES_SENT:
        return stats->types[type].bytes_sent;
    default:
        return stats->types[type].bytes_received;
    }
}

//  One counter by message type.
static void
s_render_by_type (FILE *out, const shoal_transport_stats_t *stats, const char *name,
                  const char *help, s_count_t count)
{
    s_family (out, name, "counter", help);
    for (size_t i = 0; i < shoal_msg_type_count; i++) {
        uint8_t type = shoal_msg_types[i];
        fprintf (out, "%s{type=\"%s\"} %llu\n", name, shoal_msg_type_name (type),
                 (unsigned long long) s_type_count (stats, type, count));
    }
}

//  The links: DEALERs open, members reached over the ROUTER, links closed.
static void
s_render_links (FILE *out, const shoal_transport_stats_t *stats)
{
    s_family (out, "shoal_links_open", "gauge",
              "Links (ZeroMQ DEALERs) this node holds to other members now.");
    fprintf (out, "shoal_links_open %llu\n", (unsigned long long) stats->links_open);
    s_family (out, "shoal_links_routed", "gauge",
              "Members this node sends to over the connections they made to its ROUTER.");
    fprintf (out, "shoal_links_routed %llu\n", (unsigned long long) stats->links_routed);
    s_family (out, "shoal_links_closed_total", "counter",
              "Links closed by this node: idle, or the least recently used at the cap.");
    fprintf (out, "shoal_links_closed_total{reason=\"idle\"} %llu\n",
             (unsigned long long) stats->links_closed_idle);
    fprintf (out, "shoal_links_closed_total{reason=\"cap\"} %llu\n",
             (unsigned long long) stats->links_evicted);
    s_family (out, "shoal_links_refused_total", "counter",
              "Links not made: ZeroMQ gave no socket (its max_sockets, or descriptors); "
              "their frames are dropped.");
    fprintf (out, "shoal_links_refused_total %llu\n", (unsigned long long) stats->links_refused);
    s_family (out, "shoal_frames_routed_total", "counter",
              "Frames sent over a member's own connection to this node's ROUTER.");
    fprintf (out, "shoal_frames_routed_total %llu\n", (unsigned long long) stats->frames_routed);
}

static void
s_render_transport (FILE *out, const shoal_metrics_sources_t *sources)
{
    shoal_transport_stats_t *stats = malloc (sizeof *stats);
    if (!stats)
        return;
    shoal_transport_stats (sources->transport, stats);
    s_render_by_type (out, stats, "shoal_messages_sent_total", "Messages sent, by type.", S_SENT);
    s_render_by_type (out, stats, "shoal_messages_received_total",
                      "Messages received, opened and decoded, by type.", S_RECEIVED);
    s_render_by_type (out, stats, "shoal_messages_sent_bytes_total",
                      "Bytes of the messages sent, sealed, by type.", S_BYTES_SENT);
    s_render_by_type (out, stats, "shoal_messages_received_bytes_total",
                      "Bytes of the messages received, sealed, by type.", S_BYTES_RECEIVED);
    s_family (out, "shoal_send_dropped_total", "counter",
              "Messages not sent: a full queue, no route, or too large.");
    fprintf (out, "shoal_send_dropped_total %llu\n", (unsigned long long) stats->send_dropped);
    s_family (out, "shoal_envelopes_refused_total", "counter",
              "Envelopes dropped before decoding, by reason.");
    for (int reason = SHOAL_OPEN_OK + 1; reason < SHOAL_OPEN_RESULT_COUNT; reason++)
        fprintf (out, "shoal_envelopes_refused_total{reason=\"%s\"} %llu\n",
                 shoal_open_result_name ((shoal_open_result_t) reason),
                 (unsigned long long) stats->refused[reason]);
    s_family (out, "shoal_auth_failures_total", "counter",
              "Envelopes that did not authenticate: forged, sealed with a key not held, or "
              "plaintext where a key is set, or sealed where none is.");
    fprintf (out, "shoal_auth_failures_total %llu\n",
             (unsigned long long) (stats->refused[SHOAL_OPEN_FORGED] +
                                   stats->refused[SHOAL_OPEN_UNKNOWN_KEY] +
                                   stats->refused[SHOAL_OPEN_PLAINTEXT] +
                                   stats->refused[SHOAL_OPEN_SEALED]));
    s_family (out, "shoal_decode_failures_total", "counter",
              "Messages that authenticated but did not decode, or did not come as one frame.");
    fprintf (out, "shoal_decode_failures_total %llu\n",
             (unsigned long long) (stats->undecodable + stats->malformed));
    s_render_links (out, stats);
    free (stats);
}

//  ---------------------------------------------------------------------
//  The jobs, as the acting leader places them

//  0 when task is a task of job ("job/index"), else its order against the
//  job's tasks.
static int
s_job_order (const char *task, const char *job, size_t length)
{
    int order = strncmp (task, job, length);
    return order ? order : task[length] == '/' ? 0 : (unsigned char) task[length] - '/';
}

//  The active placements of job's tasks. The placements are sorted by
//  task: a job's tasks, which share a prefix, are one run of them, found
//  by halving.
static uint64_t
s_job_active (const shoal_placement_t *placements, size_t count, const char *job)
{
    size_t length = strlen (job), low = 0, high = count;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (s_job_order (placements[middle].task, job, length) < 0)
            low = middle + 1;
        else
            high = middle;
    }
    uint64_t active = 0;
    for (; low < count && s_job_order (placements[low].task, job, length) == 0; low++)
        active += placements[low].role == SHOAL_ROLE_ACTIVE;
    return active;
}

static void
s_render_jobs (FILE *out, uint64_t now, const shoal_metrics_sources_t *sources)
{
    const shoal_handoff_t *handoff = shoal_peer_handoff (sources->peer);
    bool acting = handoff && shoal_elector_acting (shoal_peer_elector (sources->peer), now);
    const shoal_jobspec_t *specs = NULL;
    size_t count = acting ? shoal_jobs_specs (shoal_peer_jobs (sources->peer), &specs) : 0;
    const shoal_placement_t *placements = NULL;
    size_t placed = acting ? shoal_handoff_placements (handoff, &placements) : 0;
    size_t shown = count < SHOAL_METRICS_JOB_SERIES ? count : SHOAL_METRICS_JOB_SERIES;
    static const char *const names[] = { "shoal_job_tasks_desired", "shoal_job_tasks_active",
                                         "shoal_job_tasks_unplaced" };
    static const char *const helps[] = {
        "On the acting leader only (no series elsewhere): the tasks each job asks for, its "
        "parallelism.",
        "On the acting leader only: each job's tasks placed with an active, as it published.",
        "On the acting leader only: each job's tasks placed on no member, as it last looked "
        "(once a second)."
    };
    for (int kind = 0; kind < 3; kind++) {
        s_family (out, names[kind], "gauge", helps[kind]);
        for (size_t i = 0; i < shown; i++) {
            uint64_t value = kind == 0 ? specs[i].parallelism
                             : kind == 1
                                 ? s_job_active (placements, placed, specs[i].name)
                                 : shoal_unplaced_watch_job (sources->unplaced, specs[i].name);
            fprintf (out, "%s{job=\"", names[kind]);
            s_label (out, specs[i].name);
            fprintf (out, "\"} %llu\n", (unsigned long long) value);
        }
    }
    s_family (out, "shoal_jobs_omitted", "gauge",
              "Jobs left out of the shoal_job_tasks_* families, past their limit of series.");
    fprintf (out, "shoal_jobs_omitted %zu\n", count - shown);
}

//  ---------------------------------------------------------------------
//  The node and its process

static void
s_render_node (shoal_metrics_t *self, FILE *out, const shoal_metrics_sources_t *sources)
{
    s_family (out, "shoal_build_info", "gauge",
              "1, labelled with the library's version, its API (the soname's version) and the "
              "wire's version.");
    fprintf (out, "shoal_build_info{version=\"%s\",api=\"", shoal_version ());
    if (SHOAL_VERSION_MAJOR == 0)
        fprintf (out, "0.%d", SHOAL_VERSION_MINOR);
    else
        fprintf (out, "%d", SHOAL_VERSION_MAJOR);
    fprintf (out, "\",wire=\"%d\"} 1\n", SHOAL_WIRE_VERSION);
    s_family (out, "shoal_leader_changes_total", "counter",
              "Leaders this node found, or became: each leader event that names another leader "
              "or term than the one before.");
    fprintf (out, "shoal_leader_changes_total %llu\n", (unsigned long long) self->leader_changes);
    s_family (out, "shoal_event_log_write_failures_total", "counter",
              "Event log lines that could not be written.");
    fprintf (out, "shoal_event_log_write_failures_total %llu\n",
             (unsigned long long) sources->event_write_failures);

    shoal_process_t process;
    if (shoal_process_read (&process) != 0)
        return; //  no /proc: no process_* families, as the client libraries do
    s_family (out, "process_cpu_seconds_total", "counter",
              "Total user and system CPU time spent in seconds.");
    fprintf (out, "process_cpu_seconds_total %.2f\n", process.cpu_seconds);
    s_family (out, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
    fprintf (out, "process_resident_memory_bytes %llu\n",
             (unsigned long long) process.resident_bytes);
    s_family (out, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.");
    fprintf (out, "process_virtual_memory_bytes %llu\n",
             (unsigned long long) process.virtual_bytes);
    s_family (out, "process_open_fds", "gauge", "Number of open file descriptors.");
    fprintf (out, "process_open_fds %llu\n", (unsigned long long) process.open_fds);
    s_family (out, "process_max_fds", "gauge", "Maximum number of open file descriptors.");
    fprintf (out, "process_max_fds %llu\n", (unsigned long long) process.max_fds);
    s_family (out, "process_start_time_seconds", "gauge",
              "Start time of the process since unix epoch in seconds.");
    fprintf (out, "process_start_time_seconds %.2f\n", process.start_time_seconds);
}

//  ---------------------------------------------------------------------
//  Readiness

//  Tasks this node holds in a role (a task of role none is being stopped).
static size_t
s_tasks_held (const shoal_peer_t *peer)
{
    const shoal_task_status_t *held;
    size_t count = shoal_tasks_list (shoal_peer_tasks (peer), &held), roles = 0;
    for (size_t i = 0; i < count; i++)
        roles += held[i].role != SHOAL_ROLE_NONE;
    return roles;
}

//  Why there is no leader this node can vouch for, into why.
static void
s_no_leader (uint64_t now, const shoal_metrics_sources_t *sources, char *why, size_t size)
{
    const shoal_elector_t *elector = shoal_peer_elector (sources->peer);
    uint64_t term = shoal_elector_term (elector), followed_term = 0;
    shoal_id_t followed;
    bool follows = shoal_elector_leader (elector, now, &followed, &followed_term) == 0;
    if (follows && memcmp (&followed, &sources->id, sizeof followed) == 0)
        snprintf (why, size,
                  "leading term %llu without a quorum (a majority of the voters has not "
                  "acknowledged it)",
                  (unsigned long long) followed_term);
    else if (follows)
        snprintf (why, size,
                  "no leader known (the leader of term %llu is followed, but its lease does not "
                  "hold here)",
                  (unsigned long long) followed_term);
    else if (shoal_peer_election_held (sources->peer))
        snprintf (why, size, "no leader known (the election waits for a seed to answer, term %llu)",
                  (unsigned long long) term);
    else
        snprintf (why, size, "no leader known (election running, term %llu)",
                  (unsigned long long) term);
}

//  Whether the node is ready (docs/metrics.md, "/readyz"): why not into
//  why, or "" when it is.
static void
s_readiness (uint64_t now, const shoal_metrics_sources_t *sources, char *why, size_t size)
{
    const shoal_peer_t *peer = sources->peer;
    size_t live = shoal_membership_live (shoal_peer_membership (peer));
    shoal_id_t leader;
    uint64_t term;
    size_t held = s_tasks_held (peer);
    why[0] = 0;
    if (sources->leaving)
        snprintf (why, size, "the node is leaving the cluster");
    else if (live < 2 && !sources->alone)
        snprintf (why, size, "not joined: no other member is live (%u seeds given)",
                  sources->seeds);
    else if (shoal_peer_leader (peer, now, &leader, &term) != 0)
        s_no_leader (now, sources, why, size);
    else if (held && !sources->leased)
        snprintf (why, size, "holds %zu tasks but not the lease (term %llu)", held,
                  (unsigned long long) term);
}

//  ---------------------------------------------------------------------
//  The page

//  Renders the page and publishes it, with the readiness. When memory is
//  short the last page stays.
static void
s_render (shoal_metrics_t *self, uint64_t now, const shoal_metrics_sources_t *sources)
{
    char *page = NULL;
    size_t size = 0;
    FILE *out = open_memstream (&page, &size);
    if (!out)
        return;
    s_render_cluster (out, now, sources);
    s_render_membership (out, sources);
    s_render_tasks (self, out, sources);
    s_render_jobs (out, now, sources);
    s_render_transport (out, sources);
    s_render_node (self, out, sources);
    if (fclose (out) != 0) {
        free (page);
        return;
    }
    char unready[S_PROBE_TEXT];
    s_readiness (now, sources, unready, sizeof unready);
    pthread_mutex_lock (&self->lock);
    char *old = self->page;
    self->page = page;
    self->page_size = size;
    self->published_ms = s_mono_ms ();
    memcpy (self->unready, unready, sizeof unready);
    pthread_mutex_unlock (&self->lock);
    free (old);
}

void
shoal_metrics_leader (shoal_metrics_t *self, const shoal_elector_event_t *event)
{
    if (!self || event->type != SHOAL_ELECTOR_LEADER)
        return;
    if (memcmp (&event->leader, &self->leader, sizeof self->leader) != 0 ||
        event->term != self->leader_term)
        self->leader_changes++;
    self->leader = event->leader;
    self->leader_term = event->term;
}

void
shoal_metrics_exit (shoal_metrics_t *self, uint32_t restarts)
{
    if (self && restarts)
        self->child_restarts++;
}

void
shoal_metrics_handoff (shoal_metrics_t *self, uint64_t now_ms, const shoal_peer_t *peer)
{
    if (self && peer)
        s_handoff_follow (self, now_ms, peer);
}

uint64_t
shoal_metrics_update (shoal_metrics_t *self, uint64_t now_ms,
                      const shoal_metrics_sources_t *sources, bool changed)
{
    if (!self)
        return UINT64_MAX;
    s_handoff_follow (self, now_ms, sources->peer);
    self->changed |= changed;
    //  Unchanged, the page is published again all the same every
    //  SHOAL_METRICS_REFRESH_MS: the process's figures and the readiness
    //  move with time, and /healthz takes a page that ages for a stuck node.
    uint64_t refresh = self->rendered ? self->rendered_ms + SHOAL_METRICS_REFRESH_MS : now_ms;
    if (!self->changed && now_ms < refresh)
        return refresh;
    uint64_t due = self->rendered ? self->rendered_ms + SHOAL_METRICS_RENDER_MS : now_ms;
    if (now_ms < due)
        return due;
    s_render (self, now_ms, sources);
    self->rendered = true;
    self->rendered_ms = now_ms;
    self->changed = false;
    return now_ms + SHOAL_METRICS_REFRESH_MS;
}

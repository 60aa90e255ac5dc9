/*  tests/test_observe.c: what a node shows of itself, its metrics page
    (the `metrics` option) and its event log (the `events` option).

    A few nodes run in one process on loopback, joined by seeds, as in
    tests/test_node.c; the first serves its metrics and writes its events.
    The test reads the page over a plain socket, as Prometheus would, and
    the log as a checker would: line by line, each line JSON.

    Waits are bounded generously (a minute), only to end a test that hangs:
    no check depends on how fast the machine is. The metrics page is
    refreshed a little after what changes, so checks of what it says wait
    until it says it.
*/
#define _GNU_SOURCE //  F_SETPIPE_SZ
#include "node/metrics.h"
#include "shoal.h"
#include "tests/test.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NODES_MAX 5
#define TASKS_MAX 64
#define WAIT_MS   60000
#define PAGE_MAX  (256 * 1024)

typedef struct {
    shoal_node_t *node;
    char id[SHOAL_NODE_ID_TEXT];
    uint16_t port;
    int notices;      //  NOTICE events about the event log
    bool lag_unknown; //  its learners and standbys never say how far behind they are
} s_member_t;

static s_member_t s_members[NODES_MAX];
static char s_scratch[] = "/tmp/shoal-test-observe-XXXXXX";
static char s_events[128]; //  n0's event log
static uint16_t s_metrics_port;
static uint16_t s_other_port; //  of the other nodes that serve metrics
static int s_drained = -1;    //  a pipe read empty at every pump (-1: none)
static const char *s_job = "observed";

static uint64_t
s_clock_ms (void)
{
    struct timespec now;
    clock_gettime (CLOCK_MONOTONIC, &now);
    return (uint64_t) now.tv_sec * 1000 + (uint64_t) now.tv_nsec / 1000000;
}

//  A TCP socket bound to a free port of 127.0.0.1; listening when listen
//  is true. *port is the port.
static int
s_bound_socket (bool listening, uint16_t *port)
{
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in address = { .sin_family = AF_INET,
                                   .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
    socklen_t size = sizeof address;
    if (fd < 0 || bind (fd, (struct sockaddr *) &address, size) != 0 ||
        (listening && listen (fd, 1) != 0) ||
        getsockname (fd, (struct sockaddr *) &address, &size) != 0) {
        if (fd >= 0)
            close (fd);
        return -1;
    }
    *port = ntohs (address.sin_port);
    return fd;
}

//  A port that was free a moment ago.
static uint16_t
s_free_port (void)
{
    uint16_t port = 0;
    int fd = s_bound_socket (false, &port);
    if (fd >= 0)
        close (fd);
    return port;
}

//  A node on loopback with its data in the scratch directory under name,
//  joined through seed (none when NULL), with more options: keys and
//  values, NULL last (extra NULL: none). Returns the node, or NULL with
//  why filled.
static shoal_node_t *
s_node (const char *name, const s_member_t *seed, const char *const *extra, char *why,
        size_t why_size)
{
    shoal_node_t *node = shoal_node_new ();
    char dir[128], join[32];
    snprintf (dir, sizeof dir, "%s/%s", s_scratch, name);
    int rc = shoal_node_set (node, "name", name, why, why_size) ||
             shoal_node_set (node, "data-dir", dir, why, why_size) ||
             shoal_node_set (node, "bind", "127.0.0.1:0", why, why_size) ||
             shoal_node_set (node, "beacon-port", "0", why, why_size) ||
             shoal_node_set (node, "profile", "loopback", why, why_size);
    if (rc == 0 && seed) {
        snprintf (join, sizeof join, "127.0.0.1:%u", seed->port);
        rc = shoal_node_set (node, "join", join, why, why_size);
    }
    for (size_t i = 0; rc == 0 && extra && extra[i]; i += 2)
        rc = shoal_node_set (node, extra[i], extra[i + 1], why, why_size);
    if (rc == 0)
        rc = shoal_node_start (node, why, why_size);
    if (rc != 0)
        shoal_node_destroy (&node);
    return node;
}

//  Starts member n, joined through member seed (none when -1); n0 serves
//  metrics and writes events.
static int
s_start (int n, int seed)
{
    s_member_t *member = &s_members[n];
    char why[256] = "", name[16], metrics[32];
    snprintf (name, sizeof name, "n%d", n);
    snprintf (metrics, sizeof metrics, "127.0.0.1:%u", s_metrics_port);
    const char *const observed[] = { "metrics", metrics, "events", s_events, NULL };
    member->node = s_node (name, seed >= 0 ? &s_members[seed] : NULL, n == 0 ? observed : NULL, why,
                           sizeof why);
    if (!member->node) {
        fprintf (stderr, "node n%d does not start: %s\n", n, why);
        return -1;
    }
    shoal_node_id (member->node, member->id);
    shoal_node_port (member->node, &member->port);
    return 0;
}

//  ---------------------------------------------------------------------
//  The application: every task runs at once, every stop is done at once

static void
s_handle (s_member_t *member, const shoal_event_t *event)
{
    char why[256];
    switch (event->type) {
    case SHOAL_EVENT_START:
        shoal_node_report (member->node, event->task, SHOAL_RUNNING,
                           member->lag_unknown && event->role != SHOAL_ACTIVE ? UINT64_MAX : 0, why,
                           sizeof why);
        break;
    case SHOAL_EVENT_DEMOTE:
    case SHOAL_EVENT_STOP:
        shoal_node_report (member->node, event->task, SHOAL_STOPPED, 0, why, sizeof why);
        break;
    case SHOAL_EVENT_NOTICE:
        member->notices += strstr (event->reason, "events") != NULL;
        break;
    default:
        break;
    }
}

static void
s_pump (uint64_t ms)
{
    uint64_t until = s_clock_ms () + ms;
    while (s_clock_ms () < until) {
        char sink[4096];
        while (s_drained >= 0 && read (s_drained, sink, sizeof sink) > 0)
            ;
        struct pollfd fds[NODES_MAX];
        int index[NODES_MAX], count = 0;
        for (int n = 0; n < NODES_MAX; n++)
            if (s_members[n].node) {
                fds[count] =
                    (struct pollfd){ .fd = shoal_node_fd (s_members[n].node), .events = POLLIN };
                index[count++] = n;
            }
        poll (fds, (nfds_t) count, 10);
        for (int i = 0; i < count; i++) {
            shoal_event_t event = { .size = sizeof event };
            while (shoal_node_event (s_members[index[i]].node, &event) == 1)
                s_handle (&s_members[index[i]], &event);
        }
    }
}

//  Pumps until done () holds, or WAIT_MS passed. Returns done ().
static bool
s_wait_for (bool (*done) (void))
{
    uint64_t until = s_clock_ms () + WAIT_MS;
    while (!done () && s_clock_ms () < until)
        s_pump (50);
    return done ();
}

//  ---------------------------------------------------------------------
//  HTTP, as a scraper speaks it

typedef struct {
    int status; //  0: no answer
    char text[PAGE_MAX];
    const char *body; //  in text
} s_answer_t;

//  Sends request to the metrics port (port) and reads the answer until
//  the server closes the connection.
static void
s_http_at (uint16_t port, const char *request, size_t size, s_answer_t *answer)
{
    answer->status = 0;
    answer->text[0] = 0;
    answer->body = answer->text;
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in address = { .sin_family = AF_INET,
                                   .sin_port = htons (port),
                                   .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
    if (fd < 0 || connect (fd, (struct sockaddr *) &address, sizeof address) != 0 ||
        write (fd, request, size) != (ssize_t) size) {
        if (fd >= 0)
            close (fd);
        return;
    }
    size_t length = 0;
    uint64_t until = s_clock_ms () + WAIT_MS;
    while (length < PAGE_MAX - 1 && s_clock_ms () < until) {
        struct pollfd pollfd = { .fd = fd, .events = POLLIN };
        if (poll (&pollfd, 1, 100) <= 0)
            continue;
        ssize_t got = read (fd, answer->text + length, PAGE_MAX - 1 - length);
        if (got <= 0)
            break;
        length += (size_t) got;
    }
    close (fd);
    answer->text[length] = 0;
    sscanf (answer->text, "HTTP/1.%*d %d", &answer->status);
    const char *end = strstr (answer->text, "\r\n\r\n");
    answer->body = end ? end + 4 : answer->text + length;
}

static void
s_http (const char *request, size_t size, s_answer_t *answer)
{
    s_http_at (s_metrics_port, request, size, answer);
}

static void
s_get_at (uint16_t port, const char *method, const char *path, s_answer_t *answer)
{
    char request[256];
    int size =
        snprintf (request, sizeof request,
                  "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", method, path);
    s_http_at (port, request, (size_t) size, answer);
}

//  n0's metrics server.
static void
s_get (const char *method, const char *path, s_answer_t *answer)
{
    s_get_at (s_metrics_port, method, path, answer);
}

//  ---------------------------------------------------------------------
//  The text format, as a scraper reads it

//  The value of the sample series ("name" or "name{labels}") in page, or
//  -1 when the page has none.
static double
s_sample (const char *page, const char *series)
{
    size_t length = strlen (series);
    for (const char *line = page; line && *line;
         line = strchr (line, '\n'), line = line ? line + 1 : NULL)
        if (strncmp (line, series, length) == 0 && line[length] == ' ')
            return strtod (line + length + 1, NULL);
    return -1;
}

static bool
s_name_char (char c, bool first)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
           (!first && c >= '0' && c <= '9');
}

//  Reads a metric or label name at *at. Returns its length (0: none).
static size_t
s_name (const char **at)
{
    const char *start = *at;
    while (s_name_char (**at, *at == start))
        (*at)++;
    return (size_t) (*at - start);
}

//  True when line is a sample as the text format has it:
//  name{label="value",...} value. Its name into name.
static bool
s_sample_well_formed (const char *line, char *name, size_t name_size)
{
    const char *at = line;
    size_t length = s_name (&at);
    if (length == 0 || length >= name_size)
        return false;
    memcpy (name, line, length);
    name[length] = 0;
    if (*at == '{') {
        at++;
        while (*at != '}') {
            if (s_name (&at) == 0 || *at++ != '=' || *at++ != '"')
                return false;
            while (*at && *at != '"')
                at += *at == '\\' && at[1] ? 2 : 1;
            if (*at++ != '"')
                return false;
            if (*at == ',')
                at++;
            else if (*at != '}')
                return false;
        }
        at++;
    }
    if (*at++ != ' ')
        return false;
    char *end;
    strtod (at, &end);
    return end != at && *end == 0;
}

typedef struct {
    char name[128];
    char type[16];
    bool help;
} s_family_t;

static s_family_t *
s_family (s_family_t *families, size_t count, const char *name)
{
    for (size_t i = 0; i < count; i++)
        if (strcmp (families[i].name, name) == 0)
            return &families[i];
    return NULL;
}

//  Checks every line of page: HELP and TYPE before the samples of each
//  family, every sample well formed. Returns the number of samples.
static int
s_page_check (const char *page)
{
    static s_family_t families[256];
    size_t family_count = 0;
    int samples = 0;
    char *copy = strdup (page), *save = NULL;
    for (char *line = strtok_r (copy, "\n", &save); line; line = strtok_r (NULL, "\n", &save)) {
        char name[128], word[16];
        if (strncmp (line, "# HELP ", 7) == 0 || strncmp (line, "# TYPE ", 7) == 0) {
            if (sscanf (line + 7, "%127s %15s", name, word) != 2) {
                fprintf (stderr, "not a HELP or TYPE line: %s\n", line);
                CHECK (false);
                continue;
            }
            s_family_t *family = s_family (families, family_count, name);
            if (!family && family_count < 256) {
                family = &families[family_count++];
                snprintf (family->name, sizeof family->name, "%s", name);
            }
            if (family && line[2] == 'H')
                family->help = true;
            else if (family)
                snprintf (family->type, sizeof family->type, "%s", word);
            continue;
        }
        if (!s_sample_well_formed (line, name, sizeof name)) {
            fprintf (stderr, "not a sample: %s\n", line);
            CHECK (false);
            continue;
        }
        samples++;
        s_family_t *family = s_family (families, family_count, name);
        //  A histogram's samples carry a suffix its family has not.
        for (const char *suffix = "_bucket"; !family && suffix;
             suffix = strcmp (suffix, "_bucket") == 0 ? "_sum"
                      : strcmp (suffix, "_sum") == 0  ? "_count"
                                                      : NULL) {
            size_t length = strlen (name), tail = strlen (suffix);
            if (length > tail && strcmp (name + length - tail, suffix) == 0) {
                char base[128];
                snprintf (base, sizeof base, "%.*s", (int) (length - tail), name);
                family = s_family (families, family_count, base);
                if (family && strcmp (family->type, "histogram") != 0)
                    family = NULL;
            }
        }
        if (!family || !family->help || !family->type[0]) {
            fprintf (stderr, "a sample without HELP and TYPE before it: %s\n", line);
            CHECK (false);
        }
    }
    free (copy);
    return samples;
}

//  True when no sample of page has the value +Inf: only a histogram's
//  last bucket may.
static bool
s_no_inf (const char *page)
{
    for (const char *line = page; line && *line;
         line = strchr (line, '\n'), line = line ? line + 1 : NULL) {
        const char *end = strchr (line, '\n');
        size_t length = end ? (size_t) (end - line) : strlen (line);
        if (line[0] != '#' && length > 5 && strncmp (line + length - 5, " +Inf", 5) == 0 &&
            !strstr (line, "_bucket{le=\"+Inf\"}")) {
            fprintf (stderr, "a sample of +Inf: %.*s\n", (int) length, line);
            return false;
        }
    }
    return true;
}

//  ---------------------------------------------------------------------
//  Conditions

static int s_expected;

//  Every running node sees s_expected members alive and follows n0,
//  which acts.
static bool
s_led_by_n0 (void)
{
    for (int n = 0; n < NODES_MAX; n++) {
        if (!s_members[n].node)
            continue;
        shoal_member_t members[NODES_MAX * 2];
        size_t count = 0, alive = 0;
        if (shoal_node_members (s_members[n].node, members, sizeof *members, NODES_MAX * 2,
                                &count) != 0)
            return false;
        for (size_t i = 0; i < count && i < NODES_MAX * 2; i++)
            alive += members[i].state == SHOAL_MEMBER_STATE_ALIVE;
        char id[SHOAL_NODE_ID_TEXT];
        uint64_t term;
        bool acting;
        if (alive != (size_t) s_expected ||
            shoal_node_leader (s_members[n].node, id, &term, &acting) != 0 ||
            strcmp (id, s_members[0].id) != 0 || (n == 0 && !acting))
            return false;
    }
    return true;
}

static uint32_t s_parallelism;

//  Every task of the job runs as active on one node.
static bool
s_all_tasks_run (void)
{
    size_t running = 0;
    for (int n = 0; n < NODES_MAX; n++) {
        shoal_task_t tasks[TASKS_MAX];
        size_t count = 0;
        if (!s_members[n].node || shoal_node_tasks (s_members[n].node, tasks, sizeof *tasks,
                                                    TASKS_MAX, &count, NULL) != 0)
            continue;
        for (size_t i = 0; i < count && i < TASKS_MAX; i++)
            running += tasks[i].role == SHOAL_ACTIVE && tasks[i].state == 1;
    }
    return running == s_parallelism;
}

static bool
s_newcomer_active (void)
{
    shoal_task_t tasks[TASKS_MAX];
    size_t count = 0, active = 0;
    if (shoal_node_tasks (s_members[3].node, tasks, sizeof *tasks, TASKS_MAX, &count, NULL) != 0)
        return false;
    for (size_t i = 0; i < count && i < TASKS_MAX; i++)
        active += tasks[i].role == SHOAL_ACTIVE && tasks[i].state == 1;
    return active > 0 && s_all_tasks_run ();
}

static s_answer_t s_page;

//  n0's page, fetched again, agrees with what n0's API says of its
//  members and tasks.
static bool
s_page_agrees (void)
{
    s_get ("GET", "/metrics", &s_page);
    shoal_task_t tasks[TASKS_MAX];
    size_t count = 0;
    if (s_page.status != 200 ||
        shoal_node_tasks (s_members[0].node, tasks, sizeof *tasks, TASKS_MAX, &count, NULL) != 0)
        return false;
    size_t active = 0;
    for (size_t i = 0; i < count && i < TASKS_MAX; i++)
        active += tasks[i].role == SHOAL_ACTIVE;
    static const char *roles[] = { "none", "active", "standby", "learner" };
    static const char *states[] = { "starting", "running", "stopping", "stopped", "failed" };
    double held = 0, held_active = 0;
    for (int role = 0; role < 4; role++)
        for (int state = 0; state < 5; state++) {
            char series[96];
            snprintf (series, sizeof series, "shoal_tasks{role=\"%s\",state=\"%s\"}", roles[role],
                      states[state]);
            double value = s_sample (s_page.body, series);
            held += value > 0 ? value : 0;
            held_active += role == 1 && value > 0 ? value : 0;
        }
    return s_sample (s_page.body, "shoal_members{state=\"alive\"}") == s_expected &&
           held == (double) count && held_active == (double) active;
}

//  What a probe of the other metrics port should answer: its path, its
//  status, a text its body holds.
static const char *s_probe_path;
static int s_probe_status;
static const char *s_probe_text;
static s_answer_t s_probe_answer;

static bool
s_probe_says (void)
{
    s_get_at (s_other_port, "GET", s_probe_path, &s_probe_answer);
    return s_probe_answer.status == s_probe_status && strstr (s_probe_answer.body, s_probe_text);
}

//  Waits until path of the other metrics port answers status with a body
//  that holds text. Returns true when it did.
static bool
s_probe_wait (const char *path, int status, const char *text)
{
    s_probe_path = path;
    s_probe_status = status;
    s_probe_text = text;
    bool said = s_wait_for (s_probe_says);
    if (!said)
        fprintf (stderr, "GET %s: %d %s (waited for %d %s)\n", path, s_probe_answer.status,
                 s_probe_answer.body, status, text);
    return said;
}

//  One line: the text, then its newline, and no other.
static bool
s_one_line (const char *body)
{
    const char *newline = strchr (body, '\n');
    return newline && newline > body && newline[1] == 0;
}

static bool
s_gap_seen (void)
{
    s_get ("GET", "/metrics", &s_page);
    return s_page.status == 200 && s_sample (s_page.body, "shoal_handoff_gap_seconds_count") >= 1;
}

//  ---------------------------------------------------------------------
//  Behaviours

static void
a_node_does_not_start_where_it_cannot_serve_or_log (void)
{
    char why[256] = "", metrics[32], events[160];
    uint16_t taken = 0;
    int holder = s_bound_socket (true, &taken);
    CHECK (holder >= 0);
    snprintf (metrics, sizeof metrics, "127.0.0.1:%u", taken);
    const char *const serve[] = { "metrics", metrics, NULL };
    shoal_node_t *node = s_node ("taken", NULL, serve, why, sizeof why);
    CHECK (node == NULL);
    CHECK_CONTAINS (why, "metrics");
    CHECK_CONTAINS (why, metrics);
    close (holder);
    shoal_node_destroy (&node);

    snprintf (events, sizeof events, "%s/no-such-dir/events.jsonl", s_scratch);
    const char *const log[] = { "events", events, NULL };
    node = s_node ("nodir", NULL, log, why, sizeof why);
    CHECK (node == NULL);
    CHECK_CONTAINS (why, "events");
    CHECK_CONTAINS (why, "no-such-dir");
    shoal_node_destroy (&node);
}

//  A node given a seed that never answers has not joined; a node that may
//  not lead alone (expect 2) has no leader; once a second node comes, a
//  leader is elected and both are ready. Meanwhile each runs: /healthz.
static void
a_node_is_ready_once_it_joined_and_a_leader_is_known (void)
{
    char why[256] = "", metrics[32], join[32];
    snprintf (metrics, sizeof metrics, "127.0.0.1:%u", s_other_port);
    snprintf (join, sizeof join, "127.0.0.1:%u", s_free_port ());
    const char *const stray[] = { "metrics", metrics, "join", join, NULL };
    s_members[4].node = s_node ("stray", NULL, stray, why, sizeof why);
    CHECK (s_members[4].node != NULL);
    CHECK (s_probe_wait ("/readyz", 503, "not ready: not joined: no other member is live"));
    CHECK (s_one_line (s_probe_answer.body));
    CHECK (s_probe_wait ("/healthz", 200, "ok\n"));
    shoal_node_destroy (&s_members[4].node);

    //  A node whose only seed is itself is the first of its cluster: alone
    //  by design, it leads and is ready.
    char bind[32];
    snprintf (bind, sizeof bind, "127.0.0.1:%u", s_free_port ());
    const char *const first[] = { "metrics", metrics, "bind", bind, "join", bind, NULL };
    s_members[4].node = s_node ("first", NULL, first, why, sizeof why);
    CHECK (s_members[4].node != NULL);
    CHECK (s_probe_wait ("/readyz", 200, "ok\n"));
    shoal_node_destroy (&s_members[4].node);

    const char *const lonely[] = { "metrics", metrics, "expect", "2", NULL };
    s_members[3].node = s_node ("lonely", NULL, lonely, why, sizeof why);
    CHECK (s_members[3].node != NULL);
    if (!s_members[3].node)
        return;
    shoal_node_port (s_members[3].node, &s_members[3].port);
    CHECK (s_probe_wait ("/readyz", 503, "not ready: no leader known (election running, term "));
    CHECK (s_one_line (s_probe_answer.body));
    CHECK (s_probe_wait ("/healthz", 200, "ok\n"));
    CHECK_EQ (strcmp (s_probe_answer.body, "ok\n"), 0);
    const char *const partner[] = { "expect", "2", NULL };
    s_members[4].node = s_node ("partner", &s_members[3], partner, why, sizeof why);
    CHECK (s_members[4].node != NULL);
    CHECK (s_probe_wait ("/readyz", 200, "ok\n"));
    CHECK_EQ (strcmp (s_probe_answer.body, "ok\n"), 0);
    shoal_node_destroy (&s_members[4].node);
    shoal_node_destroy (&s_members[3].node);
}

static void
three_nodes_follow_the_first (void)
{
    //  n0 leads alone first; the others then join a cluster with a
    //  leader, which stays (a leader is not deposed by a newcomer).
    CHECK_EQ (s_start (0, -1), 0);
    s_expected = 1;
    CHECK (s_wait_for (s_led_by_n0));
    CHECK_EQ (s_start (1, 0), 0);
    CHECK_EQ (s_start (2, 0), 0);
    s_expected = 3;
    CHECK (s_wait_for (s_led_by_n0));
}

static void
a_submitted_job_runs (void)
{
    shoal_job_spec_t spec = {
        .size = sizeof spec, .name = s_job, .parallelism = 6, .stateful = true
    };
    shoal_result_t result = { .size = sizeof result };
    CHECK_EQ (shoal_node_submit (s_members[0].node, &spec, WAIT_MS, NULL, &result), 0);
    CHECK_EQ (result.code, SHOAL_RESULT_OK);
    s_parallelism = 6;
    CHECK (s_wait_for (s_all_tasks_run));
}

static void
the_metrics_page_tells_members_leader_tasks_and_messages (void)
{
    CHECK (s_wait_for (s_page_agrees));
    CHECK_EQ (s_page.status, 200);
    CHECK_CONTAINS (s_page.text, "text/plain; version=0.0.4");
    CHECK (s_page_check (s_page.body) > 50);
    CHECK (s_sample (s_page.body, "shoal_term") >= 1);
    CHECK (s_sample (s_page.body, "shoal_leader_known") == 1);
    CHECK (s_sample (s_page.body, "shoal_leader_acting") == 1);
    CHECK (s_sample (s_page.body, "shoal_assignment_version") >= 1);
    CHECK (s_sample (s_page.body, "shoal_task_moves_total{kind=\"start\"}") >= 1);
    //  Probes go both ways; the leader sends assignments and hears status.
    CHECK (s_sample (s_page.body, "shoal_messages_sent_total{type=\"ping\"}") > 0);
    CHECK (s_sample (s_page.body, "shoal_messages_received_total{type=\"ping\"}") > 0);
    CHECK (s_sample (s_page.body, "shoal_messages_sent_total{type=\"ack\"}") > 0);
    CHECK (s_sample (s_page.body, "shoal_messages_received_total{type=\"ack\"}") > 0);
    CHECK (s_sample (s_page.body, "shoal_messages_sent_total{type=\"assign\"}") > 0);
    CHECK (s_sample (s_page.body, "shoal_messages_received_total{type=\"status\"}") > 0);
    CHECK (s_sample (s_page.body, "shoal_messages_sent_bytes_total{type=\"assign\"}") >
           s_sample (s_page.body, "shoal_messages_sent_total{type=\"assign\"}"));
    CHECK (s_sample (s_page.body, "shoal_messages_received_bytes_total{type=\"status\"}") >
           s_sample (s_page.body, "shoal_messages_received_total{type=\"status\"}"));
    CHECK (strstr (s_page.body, "shoal_message_bytes_") == NULL);
    CHECK (s_sample (s_page.body, "shoal_auth_failures_total") == 0);
    CHECK (s_sample (s_page.body, "shoal_decode_failures_total") == 0);
    CHECK (s_no_inf (s_page.body));
}

//  The families added for operators: each present, with values that make
//  sense.
static void
the_metrics_page_tells_build_process_jobs_and_probes (void)
{
    CHECK (s_wait_for (s_page_agrees));
    char build[128];
    snprintf (build, sizeof build, "shoal_build_info{version=\"%s\",api=\"", shoal_version ());
    CHECK_CONTAINS (s_page.body, build);
    CHECK_CONTAINS (s_page.body, "# TYPE shoal_build_info gauge");
    CHECK (s_sample (s_page.body, "process_cpu_seconds_total") >= 0);
    CHECK (s_sample (s_page.body, "process_resident_memory_bytes") > 1024 * 1024);
    CHECK (s_sample (s_page.body, "process_virtual_memory_bytes") >=
           s_sample (s_page.body, "process_resident_memory_bytes"));
    CHECK (s_sample (s_page.body, "process_open_fds") > 3);
    CHECK (s_sample (s_page.body, "process_max_fds") >= s_sample (s_page.body, "process_open_fds"));
    double started = s_sample (s_page.body, "process_start_time_seconds");
    CHECK (started > (double) time (NULL) - 86400 && started <= (double) time (NULL) + 1);
    //  n0 leads: the job's counts are its own.
    CHECK (s_sample (s_page.body, "shoal_job_tasks_desired{job=\"observed\"}") == 6);
    CHECK (s_sample (s_page.body, "shoal_job_tasks_active{job=\"observed\"}") == 6);
    CHECK (s_sample (s_page.body, "shoal_job_tasks_unplaced{job=\"observed\"}") == 0);
    CHECK (s_sample (s_page.body, "shoal_jobs_omitted") == 0);
    CHECK (s_sample (s_page.body, "shoal_leader_changes_total") >= 1);
    CHECK (s_sample (s_page.body, "shoal_child_restarts_total") == 0);
    double awareness = s_sample (s_page.body, "shoal_awareness");
    CHECK (awareness >= 0 && awareness < 8);
    //  n0 has probed the others, and they answered.
    CHECK (s_sample (s_page.body, "shoal_probe_rtt_seconds_count") > 0);
    CHECK (s_sample (s_page.body, "shoal_probe_rtt_seconds_bucket{le=\"+Inf\"}") ==
           s_sample (s_page.body, "shoal_probe_rtt_seconds_count"));
    CHECK (s_sample (s_page.body, "shoal_task_lag_unknown") == 0);
}

static bool
s_restart_counted (void)
{
    s_get ("GET", "/metrics", &s_page);
    return s_page.status == 200 && s_sample (s_page.body, "shoal_child_restarts_total") == 1;
}

//  An exit the application reports is a child restart; a report that ends
//  the run of exits (0) is none.
static void
a_reported_exit_counts_a_child_restart (void)
{
    shoal_task_t tasks[TASKS_MAX];
    size_t count = 0;
    CHECK_EQ (shoal_node_tasks (s_members[0].node, tasks, sizeof *tasks, TASKS_MAX, &count, NULL),
              0);
    CHECK (count > 0);
    if (count == 0)
        return;
    char why[256];
    CHECK_EQ (
        shoal_node_report_exit (s_members[0].node, tasks[0].task, 1, 1, "exit 1", why, sizeof why),
        0);
    CHECK_EQ (shoal_node_report_exit (s_members[0].node, tasks[0].task, 0, 1, "", why, sizeof why),
              0);
    CHECK (s_wait_for (s_restart_counted));
}

//  The rule of the probes' answers: a page too old fails both, whatever
//  it said; a fresh one passes /healthz, and /readyz when the node was
//  ready.
static void
the_probes_fail_when_the_node_stops_publishing (void)
{
    char text[256];
    CHECK (!shoal_metrics_probe (false, false, 0, "", text, sizeof text));
    CHECK_EQ (strcmp (text, "not healthy: the node is starting\n"), 0);
    CHECK (
        shoal_metrics_probe (false, true, SHOAL_METRICS_STALE_MS, "no leader", text, sizeof text));
    CHECK_EQ (strcmp (text, "ok\n"), 0);
    CHECK (
        !shoal_metrics_probe (false, true, SHOAL_METRICS_STALE_MS + 1200, "", text, sizeof text));
    CHECK_CONTAINS (text, "not healthy: the node's thread has published nothing for 6.2 s");
    CHECK (!shoal_metrics_probe (true, true, SHOAL_METRICS_STALE_MS + 1200, "", text, sizeof text));
    CHECK_CONTAINS (text, "not ready: the node's thread has published nothing");
    CHECK (!shoal_metrics_probe (true, true, 10, "no leader known (election running, term 3)", text,
                                 sizeof text));
    CHECK_EQ (strcmp (text, "not ready: no leader known (election running, term 3)\n"), 0);
    CHECK (shoal_metrics_probe (true, true, 10, "", text, sizeof text));
    CHECK_EQ (strcmp (text, "ok\n"), 0);
}

//  n0 runs and is ready: it leads, acting, and holds its lease.
static void
the_probes_say_the_leader_runs_and_is_ready (void)
{
    static s_answer_t answer;
    s_get ("GET", "/healthz", &answer);
    CHECK_EQ (answer.status, 200);
    CHECK_EQ (strcmp (answer.body, "ok\n"), 0);
    s_get ("GET", "/readyz", &answer);
    CHECK_EQ (answer.status, 200);
    CHECK_EQ (strcmp (answer.body, "ok\n"), 0);
    s_get ("HEAD", "/readyz", &answer);
    CHECK_EQ (answer.status, 200);
    s_get ("POST", "/healthz", &answer);
    CHECK_EQ (answer.status, 405);
}

static void
the_metrics_server_answers_only_get_metrics (void)
{
    static s_answer_t answer;
    s_get ("GET", "/other", &answer);
    CHECK_EQ (answer.status, 404);
    s_get ("POST", "/metrics", &answer);
    CHECK_EQ (answer.status, 405);
    CHECK_CONTAINS (answer.text, "Allow: GET");
    //  Garbage is refused, and the server goes on.
    static const char garbage[] = "\x16\x03\x01\x02\x00 nonsense \x01\r\n\r\n";
    s_http (garbage, sizeof garbage - 1, &answer);
    CHECK (answer.status == 0 || answer.status >= 400);
    //  Paths near the served ones are not served.
    static const char *const near[] = { "/healthz/",           "/readyz/x", "/HEALTHZ", "//metrics",
                                        "/metrics/../healthz", "/ready",    "/",        "*" };
    for (size_t i = 0; i < sizeof near / sizeof near[0]; i++) {
        s_get ("GET", near[i], &answer);
        CHECK (answer.status == 404 || answer.status == 400);
    }
    //  A path far longer than a request may take.
    static char huge[64 * 1024];
    int size = snprintf (huge, sizeof huge, "GET /");
    memset (huge + size, 'a', 48 * 1024);
    size += 48 * 1024;
    size += snprintf (huge + size, sizeof huge - (size_t) size, " HTTP/1.1\r\nHost: x\r\n\r\n");
    s_http (huge, (size_t) size, &answer);
    CHECK (answer.status == 0 || answer.status >= 400);
    s_get ("GET", "/healthz", &answer);
    CHECK_EQ (answer.status, 200);
    s_get ("GET", "/metrics", &answer);
    CHECK_EQ (answer.status, 200);
    CHECK (s_sample (answer.body, "shoal_term") >= 1);
}

static void
a_task_moved_by_the_leader_shows_its_handoff_gap (void)
{
    //  A newcomer takes some tasks over: each moves off its old node
    //  first, then starts on the newcomer.
    CHECK_EQ (s_start (3, 1), 0);
    s_expected = 4;
    CHECK (s_wait_for (s_led_by_n0));
    CHECK (s_wait_for (s_newcomer_active));
    CHECK (s_wait_for (s_gap_seen));
    CHECK (s_page_check (s_page.body) > 0);
    CHECK (s_sample (s_page.body, "shoal_handoff_gap_seconds_bucket{le=\"+Inf\"}") ==
           s_sample (s_page.body, "shoal_handoff_gap_seconds_count"));
}

static void
the_event_log_has_one_json_line_per_decision (void)
{
    FILE *file = fopen (s_events, "r");
    CHECK (file != NULL);
    if (!file)
        return;
    int lines = 0, members = 0, leaders = 0, starts = 0, tasks = 0, assignments = 0, requests = 0;
    long long mono = 0;
    char line[4096];
    while (fgets (line, sizeof line, file)) {
        lines++;
        json_error_t error;
        json_t *event = json_loads (line, 0, &error);
        CHECK (json_is_object (event));
        const char *wall = json_string_value (json_object_get (event, "wall"));
        const char *node = json_string_value (json_object_get (event, "node"));
        const char *type = json_string_value (json_object_get (event, "event"));
        json_t *at = json_object_get (event, "mono");
        CHECK (wall && strlen (wall) == 24 && wall[10] == 'T' && wall[23] == 'Z');
        CHECK (node && strcmp (node, s_members[0].id) == 0);
        CHECK (type != NULL);
        CHECK (json_is_integer (at) && json_integer_value (at) >= mono);
        mono = json_integer_value (at);
        type = type ? type : "";
        starts += strcmp (type, "start") == 0;
        assignments += strcmp (type, "assignment") == 0;
        if (strcmp (type, "member") == 0) {
            const char *state = json_string_value (json_object_get (event, "state"));
            members += state && strcmp (state, "alive") == 0 &&
                       json_is_integer (json_object_get (event, "incarnation")) &&
                       json_string_length (json_object_get (event, "member")) == 32;
        } else if (strcmp (type, "leader") == 0)
            leaders += json_is_true (json_object_get (event, "leads")) &&
                       json_is_true (json_object_get (event, "acting")) &&
                       json_integer_value (json_object_get (event, "term")) >= 1;
        else if (strcmp (type, "task") == 0) {
            const char *action = json_string_value (json_object_get (event, "action"));
            tasks += action && strcmp (action, "start") == 0 &&
                     json_string_value (json_object_get (event, "role")) &&
                     json_is_integer (json_object_get (event, "epoch_term"));
        } else if (strcmp (type, "request") == 0) {
            const char *op = json_string_value (json_object_get (event, "op"));
            const char *code = json_string_value (json_object_get (event, "code"));
            const char *job = json_string_value (json_object_get (event, "job"));
            requests += op && code && job && strcmp (op, "submit") == 0 &&
                        strcmp (code, "ok") == 0 && strcmp (job, s_job) == 0 &&
                        json_integer_value (json_object_get (event, "parallelism")) == 6;
        }
        json_decref (event);
    }
    fclose (file);
    CHECK (lines > 0);
    CHECK_EQ (starts, 1);
    CHECK (members >= 3); //  n1, n2 and n3 came up
    CHECK (leaders >= 1); //  n0 leads
    CHECK (tasks >= 1);
    CHECK (assignments >= 1);
    CHECK_EQ (requests, 1);
}

static double s_unplaced_want;

static bool
s_unplaced_counted (void)
{
    s_get ("GET", "/metrics", &s_page);
    return s_page.status == 200 &&
           s_sample (s_page.body, "shoal_tasks_unplaced{reason=\"no-node\"}") == s_unplaced_want;
}

//  Lines of n0's event log that contain every one of the texts.
static int
s_event_lines (const char *a, const char *b, const char *c)
{
    FILE *file = fopen (s_events, "r");
    if (!file)
        return 0;
    int found = 0;
    char line[4096];
    while (fgets (line, sizeof line, file))
        found += strstr (line, a) && strstr (line, b) && strstr (line, c);
    fclose (file);
    return found;
}

//  The leader counts the tasks no member may hold, by why, and logs each
//  one's reason as it comes and as it goes.
static void
tasks_placed_nowhere_are_counted_and_logged (void)
{
    const char *mars[] = { "zone=mars" };
    shoal_job_spec_t spec = {
        .size = sizeof spec, .name = "mars", .parallelism = 2, .require_count = 1, .require = mars
    };
    shoal_result_t result = { .size = sizeof result };
    CHECK_EQ (shoal_node_submit (s_members[0].node, &spec, WAIT_MS, NULL, &result), 0);
    CHECK_EQ (result.code, SHOAL_RESULT_OK);
    s_unplaced_want = 2;
    CHECK (s_wait_for (s_unplaced_counted));
    CHECK (s_sample (s_page.body, "shoal_tasks_unplaced{reason=\"failed\"}") == 0);
    CHECK_EQ (s_event_lines ("\"event\":\"unplaced\"", "\"task\":\"mars/1\"",
                             "\"reason\":\"no-node\",\"text\":\"no eligible node: no member has "
                             "zone=mars\""),
              1);
    CHECK_EQ (shoal_node_remove (s_members[0].node, "mars", WAIT_MS, NULL, &result), 0);
    s_unplaced_want = 0;
    CHECK (s_wait_for (s_unplaced_counted));
    CHECK_EQ (
        s_event_lines ("\"event\":\"unplaced\"", "\"task\":\"mars/1\"", "\"reason\":\"none\""), 1);
}

//  A newcomer whose learners never say how far behind they are: its page
//  counts them, and has no lag series for them (never +Inf).
static void
a_lag_not_reported_yet_is_counted_not_infinite (void)
{
    char why[256] = "", metrics[32];
    snprintf (metrics, sizeof metrics, "127.0.0.1:%u", s_other_port);
    const char *const serve[] = { "metrics", metrics, NULL };
    s_member_t *member = &s_members[4];
    member->lag_unknown = true;
    member->node = s_node ("cold", &s_members[0], serve, why, sizeof why);
    CHECK (member->node != NULL);
    if (!member->node)
        return;
    CHECK (s_probe_wait ("/metrics", 200, "\nshoal_task_lag_unknown 1\n"));
    CHECK (s_page_check (s_probe_answer.body) > 50);
    CHECK (strstr (s_probe_answer.body, "\nshoal_task_lag{") == NULL);
    CHECK (s_no_inf (s_probe_answer.body));
    //  A follower shows no job's counts.
    CHECK (strstr (s_probe_answer.body, "\nshoal_job_tasks_desired{") == NULL);
    shoal_node_destroy (&member->node);
}

//  A node whose thread is stuck fails /healthz, and passes it again once
//  it runs. Stuck for real: its event log is a pipe that nobody reads, so
//  its thread blocks in write () at its next line (a member who came).
static void
a_node_whose_thread_is_stuck_is_not_healthy (void)
{
    char why[256] = "", metrics[32], fifo[160];
    snprintf (metrics, sizeof metrics, "127.0.0.1:%u", s_other_port);
    snprintf (fifo, sizeof fifo, "%s/stuck.fifo", s_scratch);
    CHECK_EQ (mkfifo (fifo, 0600), 0);
    int reader = open (fifo, O_RDONLY | O_NONBLOCK);
    CHECK (reader >= 0);
    if (reader < 0)
        return;
    fcntl (reader, F_SETPIPE_SZ, 4096); //  the least: filled at once
    s_drained = reader;
    const char *const stuck[] = { "metrics", metrics, "events", fifo, NULL };
    s_members[3].node = s_node ("stuck", NULL, stuck, why, sizeof why);
    CHECK (s_members[3].node != NULL);
    if (!s_members[3].node) {
        close (reader);
        return;
    }
    shoal_node_port (s_members[3].node, &s_members[3].port);
    CHECK (s_probe_wait ("/readyz", 200, "ok\n"));

    //  The pipe filled up, then a member comes.
    s_drained = -1;
    int writer = open (fifo, O_WRONLY | O_NONBLOCK);
    CHECK (writer >= 0);
    char filler[512];
    memset (filler, 'x', sizeof filler);
    while (writer >= 0 && write (writer, filler, sizeof filler) > 0)
        ;
    CHECK_EQ (errno, EAGAIN);
    if (writer >= 0)
        close (writer);
    s_members[4].node = s_node ("visitor", &s_members[3], NULL, why, sizeof why);
    CHECK (s_members[4].node != NULL);
    CHECK (s_probe_wait ("/healthz", 503, "not healthy: the node's thread has published nothing"));
    CHECK_CONTAINS (s_probe_answer.body, "it is stuck");
    CHECK (s_one_line (s_probe_answer.body));
    CHECK (s_probe_wait ("/readyz", 503, "not ready: the node's thread has published nothing"));
    CHECK (s_probe_wait ("/metrics", 200, "shoal_build_info"));

    //  Read, the pipe lets the thread run again.
    s_drained = reader;
    CHECK (s_probe_wait ("/healthz", 200, "ok\n"));
    //  Closed, the pipe refuses the lines: the node runs on, and stops.
    s_drained = -1;
    signal (SIGPIPE, SIG_IGN);
    close (reader);
    shoal_node_destroy (&s_members[4].node);
    shoal_node_destroy (&s_members[3].node);
}

static bool
s_notice_came (void)
{
    return s_members[1].notices > 0;
}

//  /dev/full takes the open and refuses every write: the node says so
//  once, and runs on.
static void
a_node_whose_event_log_fails_runs_on (void)
{
    if (access ("/dev/full", W_OK) != 0) {
        printf ("skip: no /dev/full here\n");
        return;
    }
    s_member_t *member = &s_members[1];
    char why[256] = "";
    shoal_node_destroy (&member->node);
    member->notices = 0;
    const char *const log[] = { "events", "/dev/full", NULL };
    member->node = s_node ("full", NULL, log, why, sizeof why);
    CHECK (member->node != NULL);
    CHECK (s_wait_for (s_notice_came));
    s_pump (500);
    CHECK_EQ (member->notices, 1);
    char id[SHOAL_NODE_ID_TEXT];
    CHECK_EQ (shoal_node_leader (member->node, id, NULL, NULL), 0);
}

int
main (void)
{
    if (!mkdtemp (s_scratch)) {
        perror ("mkdtemp");
        return 1;
    }
    snprintf (s_events, sizeof s_events, "%s/events.jsonl", s_scratch);
    s_metrics_port = s_free_port ();
    s_other_port = s_free_port ();
    RUN (a_node_does_not_start_where_it_cannot_serve_or_log);
    RUN (the_probes_fail_when_the_node_stops_publishing);
    RUN (a_node_is_ready_once_it_joined_and_a_leader_is_known);
    RUN (a_node_whose_thread_is_stuck_is_not_healthy);
    RUN (three_nodes_follow_the_first);
    RUN (a_submitted_job_runs);
    RUN (the_metrics_page_tells_members_leader_tasks_and_messages);
    RUN (the_metrics_page_tells_build_process_jobs_and_probes);
    RUN (a_reported_exit_counts_a_child_restart);
    RUN (the_probes_say_the_leader_runs_and_is_ready);
    RUN (the_metrics_server_answers_only_get_metrics);
    RUN (a_task_moved_by_the_leader_shows_its_handoff_gap);
    RUN (a_lag_not_reported_yet_is_counted_not_infinite);
    RUN (the_event_log_has_one_json_line_per_decision);
    RUN (tasks_placed_nowhere_are_counted_and_logged);
    RUN (a_node_whose_event_log_fails_runs_on);
    for (int n = 0; n < NODES_MAX; n++)
        shoal_node_destroy (&s_members[n].node);
    char command[128];
    snprintf (command, sizeof command, "rm -rf %s", s_scratch);
    if (system (command) != 0)
        fprintf (stderr, "cannot remove %s\n", s_scratch);
    return TEST_DONE ();
}

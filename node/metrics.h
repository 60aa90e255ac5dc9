/*  node/metrics.h: a node's metrics, served in Prometheus' text format.

    Two threads, and nothing of the node shared between them. The actor's
    thread owns every number: it counts what only it sees (the commands of
    its tasks, the gaps of the handoffs it leads), and after its inputs it
    renders every metric into a text page, at most once every
    SHOAL_METRICS_RENDER_MS, which it publishes under a lock. An HTTP server
    (libmicrohttpd, on a thread of its own) answers GET /metrics with the
    last page published, and reads nothing else. So a scrape never waits
    for the actor, and a page is at most SHOAL_METRICS_RENDER_MS older than
    the last input the actor took before it. Unchanged, the page is
    published again every SHOAL_METRICS_REFRESH_MS.

    With each page the actor publishes whether the node is ready, or why
    not. GET /healthz answers 200 while the last page is at most
    SHOAL_METRICS_STALE_MS old (the actor's thread runs), 503 with why
    otherwise; GET /readyz answers 200 when that holds and the node was
    ready at the last page, 503 with why otherwise. Neither reads anything
    of the node but what was published.

    The server answers GET (and HEAD) /metrics, /healthz and /readyz only:
    404 for another path, 405 for another method. Its connections, their memory and their idle
    time are bounded. docs/metrics.md lists every metric.

    Every function but new and destroy is for the actor's thread, and takes
    self NULL (metrics are off) as a call that does nothing.
*/
#ifndef SHOAL_METRICS_H
#define SHOAL_METRICS_H

#include "peer/peer.h"
#include "node/transport.h"

#include <stddef.h>
#include <stdint.h>

#define SHOAL_METRICS_RENDER_MS 250
//  Unchanged, the page is published again this often; /healthz fails once
//  none was for SHOAL_METRICS_STALE_MS.
#define SHOAL_METRICS_REFRESH_MS 1000
#define SHOAL_METRICS_STALE_MS   5000
//  Learner and standby tasks whose lag is a series of its own, at most.
#define SHOAL_METRICS_LAG_SERIES 256
//  Jobs with series of their own in the shoal_job_tasks_* families, at most.
#define SHOAL_METRICS_JOB_SERIES 256

typedef struct _shoal_metrics_t shoal_metrics_t;

//  Listens at host:port (host a name or an address) and serves. Returns
//  NULL with a reason that names the address when it cannot.
shoal_metrics_t *shoal_metrics_new (const char *host, uint16_t port, char *why, size_t why_size);

//  Stops the server (waiting for its thread) and frees. Nulls the pointer;
//  idempotent.
void shoal_metrics_destroy (shoal_metrics_t **self_p);

//  The application was told a command of a task (a move on this node).
void shoal_metrics_command (shoal_metrics_t *self, const shoal_tasks_command_t *command);

//  The elector's event: a leader found, or lost.
void shoal_metrics_leader (shoal_metrics_t *self, const shoal_elector_event_t *event);

//  The application reported how a task's process exited, with its exits
//  in a row (restarts; 0 ends a run of them, and is no exit).
void shoal_metrics_exit (shoal_metrics_t *self, uint32_t restarts);

//  What the metrics are made of besides their own counts.
typedef struct {
    const shoal_peer_t *peer;
    const shoal_transport_t *transport;
    bool leased;                                    //  the lease, as the application was told
    uint64_t event_write_failures;                  //  lines the event log could not write
    const struct _shoal_unplaced_watch_t *unplaced; //  tasks placed nowhere; NULL: none
    //  For the readiness:
    shoal_id_t id;  //  this node's
    bool leaving;   //  a leave started
    bool alone;     //  alone by design: no seeds, expect 1, or every seed is this node
    uint32_t seeds; //  seeds given
} shoal_metrics_sources_t;

//  The answer of GET /readyz (ready true) or /healthz (false), into text
//  (one line): true for 200, false for 503. published: a page was;
//  age_ms: how long ago; unready: why the node was not ready then ("":
//  it was). The server's rule, on its thread; here for tests.
bool shoal_metrics_probe (bool ready, bool published, uint64_t age_ms, const char *unready,
                          char *text, size_t size);

//  Follows the leader's handoff: what it published since the last call.
//  Call after every input to the peer (a self-message is one), so that a
//  version that takes a task's active role away and the next one that
//  gives it to another node are both seen, for the handoff gap.
void shoal_metrics_handoff (shoal_metrics_t *self, uint64_t now_ms, const shoal_peer_t *peer);

//  After each pass of the actor's loop: follows what the handoff this node
//  leads published (for the handoff gaps), and renders a page when one is
//  due and changed is true or was since the last page. Returns when it
//  wants to be called again to render what changed (UINT64_MAX: not
//  before the next change).
uint64_t shoal_metrics_update (shoal_metrics_t *self, uint64_t now_ms,
                               const shoal_metrics_sources_t *sources, bool changed);

#endif

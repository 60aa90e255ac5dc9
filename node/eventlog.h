/*  node/eventlog.h: a node's event log, one JSON line per decision.

    The node appends a line to the file the `events` option names for each
    thing it decides or learns that changes what runs where: a member's new
    state, a leader, an assignment applied, a command to a task, the lease
    lost or held, the answer to a job request, a leave. Each line carries
    the time twice (wall clock and this host's monotonic clock), this
    node's id and the event's type; docs/events.md lists every type and
    field. A chaos checker merges the logs of many nodes and checks the
    runtime's promises against them; an operator reads them.

    A line is written with one append, so lines of several writers to one
    file do not interleave. A line that cannot be written is counted and
    dropped; the node runs on.

    Not thread-safe: the node's actor owns it. Every function but open and
    close takes self NULL (the log is off) as a call that does nothing.
*/
#ifndef SHOAL_EVENTLOG_H
#define SHOAL_EVENTLOG_H

#include "peer/peer.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct _shoal_eventlog_t shoal_eventlog_t;

//  Opens path to append to (creating it, mode 0644) for the node whose id
//  is node (hex). Returns NULL with the reason when it cannot.
shoal_eventlog_t *shoal_eventlog_open (const char *path, const char node[SHOAL_ID_TEXT], char *why,
                                       size_t why_size);
void shoal_eventlog_close (shoal_eventlog_t **self_p);
//  Opens the path again and appends there from now on (logrotate renamed
//  the file): the old descriptor is closed only once the new one is open,
//  so a reopen that fails keeps the log where it was, and says why.
//  Lines are written whole on the one thread that also reopens: none is
//  split between the files, nor lost.
int shoal_eventlog_reopen (shoal_eventlog_t *self, char *why, size_t why_size);

//  Lines that could not be written so far; the first one's reason into
//  why, when there was one.
uint64_t shoal_eventlog_failures (const shoal_eventlog_t *self, char *why, size_t why_size);

//  The node started: where it listens, and its life and incarnation.
void shoal_eventlog_start (shoal_eventlog_t *self, const char *addr, uint64_t life,
                           uint64_t incarnation);
void shoal_eventlog_member (shoal_eventlog_t *self, const shoal_membership_event_t *event);
//  acting: this node is the leader and acts as one.
void shoal_eventlog_leader (shoal_eventlog_t *self, const shoal_elector_event_t *event,
                            bool acting);
//  The voter set the node keeps; a line only when its version changed.
void shoal_eventlog_voters (shoal_eventlog_t *self, uint64_t version, const shoal_id_t *voters,
                            uint32_t count);
//  The assignment the node holds; a line only when it changed.
void shoal_eventlog_assignment (shoal_eventlog_t *self, shoal_epoch_t version);
void shoal_eventlog_command (shoal_eventlog_t *self, const shoal_tasks_command_t *command);
//  The lease changed; until_ms is when it ends (the monotonic clock).
void shoal_eventlog_lease (shoal_eventlog_t *self, bool held, uint64_t until_ms);
//  A submit, rescale or remove goes to the cluster under ref; its answer
//  (reply) is logged with the job and the operation it answers. The last
//  few requests not answered yet are kept for this.
void shoal_eventlog_request (shoal_eventlog_t *self, uint64_t ref, const shoal_control_req_t *req);
void shoal_eventlog_reply (shoal_eventlog_t *self, const shoal_jobs_reply_t *reply);
//  This node, as acting leader, places task nowhere for reason ("no-node",
//  "failed", ...; "none" once it is placed again or gone), in words.
void shoal_eventlog_unplaced (shoal_eventlog_t *self, const char *task, const char *reason,
                              const char *text);
//  This node, as acting leader, published a step of task's move: step
//  "revoke" (from's active taken back; to: where it is meant to go, NULL
//  when not known) or "grant" (to made active; from: the old owner, NULL
//  for none), for reason (node/moves.h).
void shoal_eventlog_move (shoal_eventlog_t *self, const char *task, const char *step,
                          const shoal_id_t *from, const shoal_id_t *to, const char *reason);
//  The node was marked cordon (shoal_cordon_t).
void shoal_eventlog_cordon (shoal_eventlog_t *self, uint8_t cordon);
//  A leave began (done false) or is over.
void shoal_eventlog_leave (shoal_eventlog_t *self, bool done);

#endif

/*  node/unplaced.h: the tasks the leader places nowhere, as the shell words
    them and follows them.

    The reason is the handoff's data (rebalance/handoff.h,
    shoal_handoff_unplaced); here it becomes words for `shoal status`, a
    line of the event log when a task's reason changes, and counts for the
    metrics. Only the acting leader has a handoff: elsewhere every count
    is 0.
*/
#ifndef SHOAL_UNPLACED_H
#define SHOAL_UNPLACED_H

#include "node/eventlog.h"
#include "rebalance/handoff.h"

#include <stddef.h>
#include <stdint.h>

//  The reasons, as the metrics and the event log name them: "office",
//  "moving", "no-node", "failed", "slots"; "?" for another value.
const char *shoal_unplaced_name (uint8_t reason);

//  The reason in words, into text: "no eligible node: no member has
//  zone=mars", "failed on every eligible node (last: exit 127)".
void shoal_unplaced_text (const shoal_unplaced_t *unplaced, char *text, size_t size);

//  What one row of a status reply may take on the wire beyond its
//  strings (the node id, role, state, epoch, lag, counts and msgpack's
//  headers), with room to spare: rows are counted by it, so that a reply
//  always fits its frame.
#define SHOAL_STATUS_ROW_BYTES 96
//  Tasks placed nowhere that a status reply words in full; the rest carry
//  the reason's name alone.
#define SHOAL_UNPLACED_WORDED 1024

//  The wire size a status row of these strings may take at most.
size_t shoal_status_row_bytes (const char *task, const char *error, const char *reason);

//  Appends the rows of the count tasks placed nowhere to rows (which holds
//  *row_count rows, room for max_rows), each with why (in words for the
//  first SHOAL_UNPLACED_WORDED, strings in arena), while *used, the bytes
//  the reply's rows take so far, stays within budget. Returns how many
//  were left out for the budget or the room, or -1 when the arena is full.
long shoal_unplaced_rows (const shoal_unplaced_t *unplaced, size_t count, shoal_arena_t *arena,
                          shoal_task_report_t *rows, uint32_t *row_count, size_t max_rows,
                          size_t *used, size_t budget);

typedef struct _shoal_unplaced_watch_t shoal_unplaced_watch_t;

shoal_unplaced_watch_t *shoal_unplaced_watch_new (void);
void shoal_unplaced_watch_destroy (shoal_unplaced_watch_t **self_p);

//  Looks at the handoff this node leads (NULL: none), at most once a
//  second: writes an `unplaced` line to events (NULL: none) for each task
//  whose reason changed, and keeps the counts.
void shoal_unplaced_watch_update (shoal_unplaced_watch_t *self, shoal_handoff_t *handoff,
                                  uint64_t now_ms, shoal_eventlog_t *events);

//  How many tasks are placed nowhere for reason (shoal_unplaced_reason_t),
//  as the last look found.
uint64_t shoal_unplaced_watch_count (const shoal_unplaced_watch_t *self, uint8_t reason);

//  How many tasks of job are placed nowhere, as the last look found.
uint64_t shoal_unplaced_watch_job (const shoal_unplaced_watch_t *self, const char *job);

#endif

/*  node/unplaced.c: the tasks the leader places nowhere, in words, in the
    event log and in counts (unplaced.h).
*/
#include "node/unplaced.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//  The handoff is asked at most this often: each look walks every task.
#define S_LOOK_MS 1000

#define S_REASONS (SHOAL_UNPLACED_MAX + 1)

typedef struct {
    char *task;
    uint8_t reason;
    char *text;
} s_entry_t;

struct _shoal_unplaced_watch_t {
    s_entry_t *entries; //  sorted by task
    size_t count;
    uint64_t counts[S_REASONS];
    uint64_t look_ms; //  the next look is due
    bool looked_with_handoff;
};

const char *
shoal_unplaced_name (uint8_t reason)
{
    static const char *const names[S_REASONS] = { "?",      "office", "moving", "no-node",
                                                  "failed", "slots",  "queued" };
    return reason < S_REASONS ? names[reason] : "?";
}

void
shoal_unplaced_text (const shoal_unplaced_t *unplaced, char *text, size_t size)
{
    if (size == 0)
        return;
    const char *slash = strrchr (unplaced->task, '/');
    int job = slash ? (int) (slash - unplaced->task) : (int) strlen (unplaced->task);
    switch (unplaced->reason) {
    case SHOAL_UNPLACED_OFFICE:
        snprintf (text, size, "waiting: the leader is taking office");
        break;
    case SHOAL_UNPLACED_MOVING:
        snprintf (text, size, "moving: waits until its last node stops it, or its lease ends");
        break;
    case SHOAL_UNPLACED_NO_NODE:
        if (unplaced->unhandled)
            snprintf (text, size, "no eligible node: no member handles job %.*s", job,
                      unplaced->task);
        else if (unplaced->label)
            snprintf (text, size, "no eligible node: no member has %s=%s", unplaced->label->key,
                      unplaced->label->value);
        else
            snprintf (text, size, "no eligible node: no member has every label job %.*s requires",
                      job, unplaced->task);
        break;
    case SHOAL_UNPLACED_FAILED:
        snprintf (text, size, "failed on every eligible node%s%s%s",
                  unplaced->error[0] ? " (last: " : "", unplaced->error,
                  unplaced->error[0] ? ")" : "");
        break;
    case SHOAL_UNPLACED_SLOTS:
        snprintf (text, size, "waiting for a free slot");
        break;
    case SHOAL_UNPLACED_QUEUED:
        snprintf (text, size, "queued: starts once fewer tasks are starting (max-starting)");
        break;
    default:
        snprintf (text, size, "placed nowhere");
        break;
    }
    //  A text cut at its buffer's end may end inside a UTF-8 sequence (a
    //  long error of a task's, in the failed case), which no message may
    //  carry: the sequence cut short is dropped.
    text[shoal_text_cut (text, strlen (text))] = 0;
}

size_t
shoal_status_row_bytes (const char *task, const char *error, const char *reason)
{
    return (task ? strlen (task) : 0) + (error ? strlen (error) : 0) +
           (reason ? strlen (reason) : 0) + SHOAL_STATUS_ROW_BYTES;
}

long
shoal_unplaced_rows (const shoal_unplaced_t *unplaced, size_t count, shoal_arena_t *arena,
                     shoal_task_report_t *rows, uint32_t *row_count, size_t max_rows, size_t *used,
                     size_t budget)
{
    size_t i = 0;
    for (; i < count && *row_count < max_rows; i++) {
        char text[SHOAL_REASON_MAX + 1];
        if (i < SHOAL_UNPLACED_WORDED)
            shoal_unplaced_text (&unplaced[i], text, sizeof text);
        else
            snprintf (text, sizeof text, "%s", shoal_unplaced_name (unplaced[i].reason));
        size_t bytes = shoal_status_row_bytes (unplaced[i].task, "", text);
        if (*used + bytes > budget)
            break;
        char *reason = shoal_arena_strndup (arena, text, strlen (text));
        if (!reason)
            return -1;
        *used += bytes;
        rows[(*row_count)++] = (shoal_task_report_t){
            .status = { .task = unplaced[i].task, .error = "" },
            .reason = reason,
        };
    }
    return (long) (count - i);
}

shoal_unplaced_watch_t *
shoal_unplaced_watch_new (void)
{
    return calloc (1, sizeof (shoal_unplaced_watch_t));
}

static void
s_entries_free (s_entry_t *entries, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        free (entries[i].task);
        free (entries[i].text);
    }
    free (entries);
}

void
shoal_unplaced_watch_destroy (shoal_unplaced_watch_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    s_entries_free ((*self_p)->entries, (*self_p)->count);
    free (*self_p);
    *self_p = NULL;
}

//  Writes the lines for what changed between the old entries and the new
//  (both sorted by task): a task new or with another reason, and a task
//  placed again (or gone), as reason "none".
static void
s_log_changes (const s_entry_t *old, size_t old_count, const s_entry_t *now, size_t now_count,
               shoal_eventlog_t *events)
{
    size_t i = 0, j = 0;
    while (i < old_count || j < now_count) {
        int order = i == old_count ? 1 : j == now_count ? -1 : strcmp (old[i].task, now[j].task);
        if (order < 0)
            shoal_eventlog_unplaced (events, old[i++].task, "none", "");
        else if (order > 0 || old[i].reason != now[j].reason || strcmp (old[i].text, now[j].text)) {
            shoal_eventlog_unplaced (events, now[j].task, shoal_unplaced_name (now[j].reason),
                                     now[j].text);
            i += order == 0;
            j++;
        } else
            i++, j++;
    }
}

void
shoal_unplaced_watch_update (shoal_unplaced_watch_t *self, shoal_handoff_t *handoff,
                             uint64_t now_ms, shoal_eventlog_t *events)
{
    if (!self || (now_ms < self->look_ms && (handoff != NULL) == self->looked_with_handoff))
        return;
    self->look_ms = now_ms + S_LOOK_MS;
    self->looked_with_handoff = handoff != NULL;
    const shoal_unplaced_t *unplaced = NULL;
    size_t count = handoff ? shoal_handoff_unplaced (handoff, &unplaced) : 0;
    s_entry_t *entries = calloc (count ? count : 1, sizeof *entries);
    if (!entries)
        return; //  the next look tries again
    uint64_t counts[S_REASONS] = { 0 };
    for (size_t i = 0; i < count; i++) {
        char text[SHOAL_REASON_MAX + 1];
        shoal_unplaced_text (&unplaced[i], text, sizeof text);
        entries[i] = (s_entry_t){ strdup (unplaced[i].task), unplaced[i].reason, strdup (text) };
        if (!entries[i].task || !entries[i].text) {
            s_entries_free (entries, i + 1);
            return;
        }
        counts[unplaced[i].reason < S_REASONS ? unplaced[i].reason : 0]++;
    }
    s_log_changes (self->entries, self->count, entries, count, events);
    s_entries_free (self->entries, self->count);
    self->entries = entries;
    self->count = count;
    memcpy (self->counts, counts, sizeof counts);
}

uint64_t
shoal_unplaced_watch_count (const shoal_unplaced_watch_t *self, uint8_t reason)
{
    return self && reason < S_REASONS ? self->counts[reason] : 0;
}

//  0 when task is a task of job ("job/index"), else its order against
//  the job's tasks.
static int
s_job_order (const char *task, const char *job, size_t length)
{
    int order = strncmp (task, job, length);
    return order ? order : task[length] == '/' ? 0 : (unsigned char) task[length] - '/';
}

uint64_t
shoal_unplaced_watch_job (const shoal_unplaced_watch_t *self, const char *job)
{
    if (!self)
        return 0;
    //  The entries are sorted: a job's tasks, which share a prefix, are
    //  one run of them. The first is found by halving.
    size_t length = strlen (job), low = 0, high = self->count;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (s_job_order (self->entries[middle].task, job, length) < 0)
            low = middle + 1;
        else
            high = middle;
    }
    uint64_t count = 0;
    while (low < self->count && s_job_order (self->entries[low++].task, job, length) == 0)
        count++;
    return count;
}

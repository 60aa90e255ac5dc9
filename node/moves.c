/*  node/moves.c: the acting leader's moves of tasks, with why.
 */

#include "node/moves.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *task;
    bool has_active; //  published active: active
    shoal_id_t active;
    bool revoked; //  no active published since from's was revoked for reason
    shoal_id_t from;
    const char *reason;
} s_entry_t;

struct _shoal_moves_watch_t {
    const shoal_handoff_t *handoff; //  the one looked at last; NULL: none
    uint64_t version;               //  its version then
    bool seeded;                    //  the first look after adoption is taken
    s_entry_t *entries;             //  sorted by task
    size_t count;
};

shoal_moves_watch_t *
shoal_moves_watch_new (void)
{
    return calloc (1, sizeof (shoal_moves_watch_t));
}

static void
s_entries_free (s_entry_t *entries, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free (entries[i].task);
    free (entries);
}

static void
s_forget (shoal_moves_watch_t *self)
{
    s_entries_free (self->entries, self->count);
    self->entries = NULL;
    self->count = 0;
    self->seeded = false;
}

void
shoal_moves_watch_destroy (shoal_moves_watch_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    s_forget (*self_p);
    free (*self_p);
    *self_p = NULL;
}

//  Why the active of task on from was revoked (moves.h).
static const char *
s_reason (const shoal_handoff_t *handoff, const shoal_membership_t *membership,
          const shoal_elector_t *elector, const shoal_id_t *self_id, bool leaving, const char *task,
          const shoal_id_t *from)
{
    shoal_handoff_move_t move;
    if (shoal_handoff_phase (handoff, task, &move) != 0)
        return "removed";
    if (leaving && memcmp (from, self_id, sizeof *from) == 0)
        return "leave";
    if (elector && shoal_elector_member_leaving (elector, from))
        return "leave"; //  a voter, in the view until it is out of the set
    shoal_membership_member_t member;
    if (shoal_membership_member (membership, from, &member) != 0)
        return "gone";
    if (member.state == SHOAL_MEMBER_LEFT)
        return "leave";
    if (member.state == SHOAL_MEMBER_DEAD)
        return "dead";
    if (member.state == SHOAL_MEMBER_SUSPECT)
        return "suspect";
    shoal_task_status_t status;
    if (shoal_handoff_reported (handoff, from, task, &status) && status.state == SHOAL_TASK_FAILED)
        return "failed";
    if (member.meta && member.meta->cordon == SHOAL_CORDON_DRAINING)
        return "drain";
    return "rebalance";
}

//  The tasks with an active in the published assignment, sorted by task
//  (the placements are). Returns the count, or -1 when memory is short.
static long
s_actives (const shoal_handoff_t *handoff, s_entry_t **entries_p)
{
    const shoal_placement_t *placements = NULL;
    size_t count = shoal_handoff_placements (handoff, &placements);
    s_entry_t *entries = calloc (count ? count : 1, sizeof *entries);
    if (!entries)
        return -1;
    size_t used = 0;
    for (size_t i = 0; i < count; i++) {
        if (placements[i].role != SHOAL_ROLE_ACTIVE)
            continue;
        assert (used == 0 || strcmp (entries[used - 1].task, placements[i].task) < 0);
        entries[used] = (s_entry_t){ .task = strdup (placements[i].task),
                                     .has_active = true,
                                     .active = placements[i].node };
        if (!entries[used++].task) {
            s_entries_free (entries, used);
            return -1;
        }
    }
    *entries_p = entries;
    return (long) used;
}

//  The line for a grant to now's active, after was (NULL: no entry).
static void
s_granted (const s_entry_t *was, const s_entry_t *now, shoal_eventlog_t *events)
{
    if (!was)
        shoal_eventlog_move (events, now->task, "grant", NULL, &now->active, "new");
    else if (was->revoked)
        shoal_eventlog_move (events, now->task, "grant", &was->from, &now->active, was->reason);
}

void
shoal_moves_watch_update (shoal_moves_watch_t *self, const shoal_handoff_t *handoff,
                          const shoal_membership_t *membership, const shoal_elector_t *elector,
                          const shoal_id_t *self_id, bool leaving, shoal_eventlog_t *events)
{
    if (!self)
        return;
    if (!events)
        handoff = NULL; //  no log, nothing to follow
    if (handoff != self->handoff)
        s_forget (self);
    self->handoff = handoff;
    if (!handoff || !shoal_handoff_adopted (handoff) ||
        (self->seeded && shoal_handoff_version (handoff) == self->version))
        return;
    s_entry_t *now = NULL;
    long found = s_actives (handoff, &now);
    if (found < 0)
        return; //  the next version tries again
    size_t now_count = (size_t) found;
    //  Room for what was revoked and has no active yet, too.
    s_entry_t *next = calloc (now_count + self->count + 1, sizeof *next);
    if (!next) {
        s_entries_free (now, now_count);
        return;
    }
    size_t i = 0, j = 0, kept = 0;
    const s_entry_t *old = self->entries;
    while (i < self->count || j < now_count) {
        int order = i == self->count ? 1 : j == now_count ? -1 : strcmp (old[i].task, now[j].task);
        if (order > 0) { //  an active where none was known
            if (self->seeded)
                s_granted (NULL, &now[j], events);
            next[kept++] = now[j++];
        } else if (order == 0) {
            if (!old[i].has_active)
                s_granted (&old[i], &now[j], events);
            else if (memcmp (&old[i].active, &now[j].active, sizeof now[j].active) != 0)
                shoal_eventlog_move (events, now[j].task, "grant", &old[i].active, &now[j].active,
                                     s_reason (handoff, membership, elector, self_id, leaving,
                                               now[j].task, &old[i].active));
            free (old[i++].task);
            next[kept++] = now[j++];
        } else if (old[i].has_active) { //  revoked now
            shoal_handoff_move_t move;
            const char *reason = s_reason (handoff, membership, elector, self_id, leaving,
                                           old[i].task, &old[i].active);
            bool target = shoal_handoff_phase (handoff, old[i].task, &move) == 0 && move.has_target;
            shoal_eventlog_move (events, old[i].task, "revoke", &old[i].active,
                                 target ? &move.target : NULL, reason);
            next[kept] = (s_entry_t){
                .task = old[i].task, .revoked = true, .from = old[i].active, .reason = reason
            };
            kept += strcmp (reason, "removed") != 0;
            if (strcmp (reason, "removed") == 0)
                free (old[i].task);
            i++;
        } else { //  still revoked, unless the task went
            shoal_handoff_move_t move;
            if (shoal_handoff_phase (handoff, old[i].task, &move) == 0)
                next[kept++] = old[i];
            else
                free (old[i].task);
            i++;
        }
    }
    free (now);
    free (self->entries);
    self->entries = next;
    self->count = kept;
    self->seeded = true;
    self->version = shoal_handoff_version (handoff);
}

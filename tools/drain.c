/*  tools/drain.c: what `shoal drain` does once the node is marked draining:
    it asks the node again, once a second, what it still holds, prints
    each change, and ends when the node holds nothing (then, with --leave,
    asks it to leave), or when the wait runs out.
*/
#include "tools/drain.h"

#include "node/control.h"
#include "rebalance/tasks.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

//  How often the node is asked again.
#define S_POLL_MS 1000
//  Task names printed on one progress line at most.
#define S_NAMES_SHOWN 6

typedef struct {
    uint32_t held, active, standby, learner;
    bool settling; //  holds nothing, but a move it made as leader is halfway
} s_held_t;

static uint64_t
s_now_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

//  What rep (a drain's answer: the node's own tasks) says the node holds:
//  a task in some role, or one it still stops; and whether, holding none,
//  it is not drained yet.
static s_held_t
s_count (const shoal_control_rep_t *rep)
{
    s_held_t held = { 0 };
    held.settling = rep->reason && strcmp (rep->reason, SHOAL_DRAIN_ONGOING) == 0;
    for (uint32_t i = 0; i < rep->task_count; i++) {
        const shoal_task_status_t *status = &rep->tasks[i].status;
        bool holds = shoal_task_held (status);
        held.held += holds;
        held.active += status->role == SHOAL_ROLE_ACTIVE;
        held.standby += status->role == SHOAL_ROLE_STANDBY;
        held.learner += status->role == SHOAL_ROLE_LEARNER;
    }
    held.settling &= held.held == 0;
    return held;
}

static void
s_print_progress (const char *name, const shoal_control_rep_t *rep, const s_held_t *held,
                  double seconds)
{
    if (held->settling) {
        printf ("%6.1fs  %s holds nothing; a move it made as leader is halfway\n", seconds, name);
        fflush (stdout);
        return;
    }
    printf ("%6.1fs  %s holds %u task%s: %u active, %u standby, %u learner", seconds, name,
            held->held, held->held == 1 ? "" : "s", held->active, held->standby, held->learner);
    uint32_t shown = 0;
    for (uint32_t i = 0; i < rep->task_count; i++)
        if (rep->tasks[i].status.role == SHOAL_ROLE_ACTIVE && shown++ < S_NAMES_SHOWN)
            printf ("%s%s", shown == 1 ? " (active: " : ", ", rep->tasks[i].status.task);
    if (shown > S_NAMES_SHOWN)
        printf (", and %u more", shown - S_NAMES_SHOWN);
    printf ("%s\n", shown ? ")" : "");
    fflush (stdout);
}

static void
s_print_end (const shoal_drain_t *drain, const char *name, const s_held_t *held, double seconds,
             bool left)
{
    if (drain->json) {
        json_t *out = json_pack ("{s:s, s:b, s:f, s:i, s:b}", "node", name, "drained",
                                 held->held == 0 && !held->settling, "seconds", seconds, "held",
                                 (json_int_t) held->held, "left", left);
        if (out)
            json_dumpf (out, stdout, JSON_COMPACT);
        printf ("\n");
        json_decref (out);
    } else if (held->held == 0 && !held->settling)
        printf ("%s is drained (%.1f s)%s\n", name, seconds, left ? "; it leaves the cluster" : "");
}

//  Asks the node op; 0 with *rep, or -1 having said why.
static int
s_ask (const shoal_drain_t *drain, uint8_t op, shoal_arena_t *arena, shoal_control_rep_t *rep)
{
    char why[512];
    shoal_control_req_t req = { .id = 3, .op = op, .job = drain->node, .leave = drain->leave };
    shoal_arena_reset (arena);
    if (shoal_control_call (drain->endpoint, drain->keyring, &req, drain->timeout_ms, arena, rep,
                            why, sizeof why) != 0) {
        fprintf (stderr, "shoal drain: %s\n", why);
        return -1;
    }
    if (rep->code != SHOAL_REPLY_OK) {
        fprintf (stderr, "shoal drain: %s\n",
                 rep->reason && rep->reason[0] ? rep->reason : "refused");
        return -1;
    }
    return 0;
}

int
shoal_drain_follow (const shoal_drain_t *drain, const shoal_control_rep_t *first)
{
    char name[SHOAL_NAME_MAX + 1] = "the node";
    if (first->member_count == 1 && first->members[0].meta && first->members[0].meta->name)
        snprintf (name, sizeof name, "%s", first->members[0].meta->name);
    uint64_t start = s_now_ms (), deadline = start + drain->wait_ms;
    s_held_t held = s_count (first), shown = { UINT32_MAX, 0, 0, 0, false };
    shoal_arena_t arena = { 0 };
    if (shoal_arena_init (&arena, SHOAL_CONTROL_ARENA) != 0) {
        fprintf (stderr, "shoal drain: out of memory\n");
        return SHOAL_DRAIN_FAILED;
    }
    shoal_control_rep_t rep = *first;
    int rc = 0;
    while (held.held > 0 || held.settling) {
        double seconds = (double) (s_now_ms () - start) / 1000;
        if (!drain->json && memcmp (&held, &shown, sizeof held) != 0)
            s_print_progress (name, &rep, &held, seconds);
        shown = held;
        if (s_now_ms () >= deadline) {
            rc = SHOAL_DRAIN_TIMED_OUT;
            break;
        }
        nanosleep (&(struct timespec){ 0, S_POLL_MS * 1000000L }, NULL);
        if (s_ask (drain, SHOAL_OP_DRAIN, &arena, &rep) != 0) {
            rc = SHOAL_DRAIN_FAILED;
            break;
        }
        held = s_count (&rep);
    }
    double seconds = (double) (s_now_ms () - start) / 1000;
    //  Asked with leave, the node leaves on the answer that finds it
    //  drained (the node asked may be another than the one drained).
    bool left =
        rc == 0 && drain->leave && rep.reason && strcmp (rep.reason, SHOAL_DRAIN_LEAVING) == 0;
    if (rc == 0 && drain->leave && !left) {
        fprintf (stderr, "shoal drain: the node is drained but did not say it leaves\n");
        rc = SHOAL_DRAIN_FAILED;
    }
    s_print_end (drain, name, &held, seconds, left);
    if (rc == SHOAL_DRAIN_TIMED_OUT && held.settling)
        fprintf (stderr,
                 "shoal drain: %s holds nothing, but a move it made as leader is still halfway "
                 "after %.0f s (see shoal status); it stays draining\n",
                 name, seconds);
    else if (rc == SHOAL_DRAIN_TIMED_OUT)
        fprintf (stderr,
                 "shoal drain: %s still holds %u task%s after %.0f s: no other node may hold "
                 "them, none has room, or their learners have not caught up (see shoal status); "
                 "it stays draining\n",
                 name, held.held, held.held == 1 ? "" : "s", seconds);
    shoal_arena_release (&arena);
    return rc;
}

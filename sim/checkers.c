/*  sim/checkers.c: the invariants, checked apart from the scenarios.
    See checkers.h.
*/
#include "sim/checkers.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//  Members the membership check of one node may visit per event at it.
#define SIM_CHECK_VISITS 256

int
sim_checks_init (sim_checks_t *checks, uint32_t nodes, bool election, bool quorum)
{
    *checks = (sim_checks_t){ .election = election, .quorum = quorum };
    checks->violations = json_array ();
    checks->incarnations = calloc (nodes, sizeof (uint64_t));
    checks->credit = calloc (nodes, sizeof (uint64_t));
    checks->terms = calloc (nodes, sizeof (uint64_t));
    checks->acting = calloc (nodes, 1);
    return checks->violations && checks->incarnations && checks->credit && checks->terms &&
                   checks->acting
               ? 0
               : -1;
}

void
sim_checks_free (sim_checks_t *checks)
{
    json_decref (checks->violations);
    free (checks->incarnations);
    free (checks->credit);
    free (checks->terms);
    free (checks->acting);
    free (checks->term_leaders);
    free (checks->verdicts);
}

void
sim_violation (sim_run_t *run, const char *format, ...)
{
    if (json_array_size (run->checks.violations) >= 100)
        return; //  enough to see what went wrong
    char text[256];
    va_list args;
    va_start (args, format);
    vsnprintf (text, sizeof text, format, args);
    va_end (args);
    json_array_append_new (run->checks.violations, json_string (text));
}

//  A dead verdict about a node that is up and can reach the observer must
//  not last longer than a suspicion can: the node refutes it. Kept, to be
//  checked at every step.
static void
s_keep_verdict (sim_checks_t *checks, uint64_t now_ms, uint32_t observer, uint32_t subject)
{
    if (checks->verdict_count == checks->verdict_size) {
        size_t size = checks->verdict_size ? 2 * checks->verdict_size : 64;
        void *verdicts = realloc (checks->verdicts, size * sizeof *checks->verdicts);
        if (!verdicts)
            return;
        checks->verdicts = verdicts;
        checks->verdict_size = size;
    }
    checks->verdicts[checks->verdict_count].observer = observer;
    checks->verdicts[checks->verdict_count].subject = subject;
    checks->verdicts[checks->verdict_count].due_ms = now_ms;
    checks->verdict_count++;
}

void
sim_check_member_event (void *arg, uint64_t now_ms, uint32_t observer, uint32_t subject,
                        const shoal_membership_event_t *event)
{
    sim_run_t *run = arg;
    if (subject == SHOAL_SIM_NONE) {
        sim_violation (run, "node %u has an event about a node no simulated node is", observer);
        return;
    }
    if (run->watch)
        run->watch (run, now_ms, observer, subject, event);
    shoal_sim_t *sim = run->sim;
    if (event->type == SHOAL_MEMBERSHIP_DEAD && shoal_sim_node (sim, subject) &&
        shoal_sim_reachable (sim, subject, observer) &&
        shoal_sim_reachable (sim, observer, subject))
        s_keep_verdict (&run->checks, now_ms, observer, subject);
}

//  Two leaders acting at once begin at different moments: the later one's
//  beginning finds the other still acting. (A leader that goes on acting
//  with a new term says so too.)
static void
s_check_one_acting (sim_run_t *run, uint64_t now_ms, uint32_t node, uint64_t term)
{
    shoal_sim_t *sim = run->sim;
    for (uint32_t n = 0; n < shoal_sim_size (sim); n++)
        if (n != node && shoal_sim_elector (sim, n) &&
            shoal_elector_acting (shoal_sim_elector (sim, n), now_ms))
            sim_violation (run, "nodes %u and %u act as leader at once (terms %llu and %llu)", n,
                           node,
                           (unsigned long long) shoal_elector_term (shoal_sim_elector (sim, n)),
                           (unsigned long long) term);
}

//  One leader per term: node acts with term.
static void
s_check_term_leader (sim_run_t *run, uint32_t node, uint64_t term)
{
    sim_checks_t *checks = &run->checks;
    if (term >= checks->term_count) {
        size_t count = 2 * term + 16;
        uint32_t *leaders = realloc (checks->term_leaders, count * sizeof *leaders);
        if (!leaders)
            return;
        memset (leaders + checks->term_count, 0, (count - checks->term_count) * sizeof *leaders);
        checks->term_leaders = leaders;
        checks->term_count = count;
    }
    uint32_t *holder = &checks->term_leaders[term];
    if (checks->quorum && *holder && *holder != node + 1)
        sim_violation (run, "nodes %u and %u both led with term %llu", *holder - 1, node,
                       (unsigned long long) term);
    *holder = node + 1;
}

//  A node begins or stops acting as leader, or follows another; once the
//  fault began, the leader scenarios count who begins to act.
void
sim_check_leader_event (void *arg, uint64_t now_ms, uint32_t node,
                        const shoal_elector_event_t *event)
{
    sim_run_t *run = arg;
    sim_checks_t *checks = &run->checks;
    bool was_acting = checks->acting[node];
    checks->acting[node] =
        event->type == SHOAL_ELECTOR_LEADER && shoal_sim_index (&event->leader) == node;
    if (!checks->acting[node])
        return;
    if (checks->quorum && !was_acting)
        s_check_one_acting (run, now_ms, node, event->term);
    s_check_term_leader (run, node, event->term);
    if (run->counting && !was_acting) {
        run->leaders.starts++;
        if (!run->leaders.new_ms && node != run->leaders.old) {
            shoal_sim_stats_t stats;
            shoal_sim_stats (run->sim, &stats);
            run->leaders.new_ms = now_ms;
            run->leaders.election_sent = stats.election_sent - run->at_start.election_sent;
        }
    }
}

//  Whether every node that is up holds every other up node alive, and no
//  node that is down as live: one view everywhere.
static bool
s_views_agree (shoal_sim_t *sim)
{
    uint32_t size = shoal_sim_size (sim), up = 0;
    for (uint32_t n = 0; n < size; n++)
        up += shoal_sim_node (sim, n) != NULL;
    //  Live counts first: cheap, and they differ until the views are close.
    for (uint32_t n = 0; n < size; n++)
        if (shoal_sim_node (sim, n) && shoal_membership_live (shoal_sim_node (sim, n)) != up)
            return false;
    for (uint32_t n = 0; n < size; n++) {
        shoal_membership_t *core = shoal_sim_node (sim, n);
        if (!core)
            continue;
        size_t members = shoal_membership_size (core);
        for (size_t i = 0; i < members; i++) {
            shoal_membership_member_t member;
            if (shoal_membership_member_at (core, i, &member) != 0)
                return false;
            uint32_t other = shoal_sim_index (&member.node);
            bool live = member.state == SHOAL_MEMBER_ALIVE;
            bool is_up = other != SHOAL_SIM_NONE && shoal_sim_node (sim, other) != NULL;
            if (live != is_up && member.state != SHOAL_MEMBER_LEFT)
                return false;
        }
    }
    return true;
}

bool
sim_settled (sim_run_t *run)
{
    return s_views_agree (run->sim);
}

//  Terms never go back; in quorum mode, at most one node acts.
static void
s_check_election (sim_run_t *run)
{
    shoal_sim_t *sim = run->sim;
    uint64_t now = shoal_sim_now (sim);
    uint64_t *terms = run->checks.terms;
    uint32_t acting = 0;
    for (uint32_t n = 0; n < shoal_sim_size (sim); n++) {
        shoal_elector_t *elector = shoal_sim_elector (sim, n);
        if (!elector)
            continue;
        shoal_elector_saved_t saved;
        shoal_elector_saved (elector, &saved);
        if (saved.term < terms[n])
            sim_violation (run, "node %u: term went back from %llu to %llu", n,
                           (unsigned long long) terms[n], (unsigned long long) saved.term);
        terms[n] = saved.term;
        acting += shoal_elector_acting (elector, now);
    }
    if (run->checks.quorum && acting > 1)
        sim_violation (run, "%u nodes act as leader at %llu ms", acting, (unsigned long long) now);
}

void
sim_check_stall (sim_run_t *run)
{
    uint64_t at;
    if (!run->checks.stall_told && shoal_sim_stalled (run->sim, &at)) {
        run->checks.stall_told = true;
        sim_violation (run, "a livelock: over %u events at %llu ms, the simulation stopped there",
                       SHOAL_SIM_INSTANT_EVENTS_MAX, (unsigned long long) at);
    }
}

//  Node n's incarnation never goes back.
static void
s_check_incarnation (sim_run_t *run, uint32_t n)
{
    shoal_membership_t *core = shoal_sim_node (run->sim, n);
    if (!core)
        return;
    uint64_t *last = &run->checks.incarnations[n];
    uint64_t incarnation = shoal_membership_incarnation (core);
    if (incarnation < *last)
        sim_violation (run, "node %u: incarnation went back from %llu to %llu", n,
                       (unsigned long long) *last, (unsigned long long) incarnation);
    *last = incarnation;
}

//  Whether node n's membership is due its check (shoal_membership_check),
//  which visits every member. Each event earns SIM_CHECK_VISITS visits: a
//  table of up to that many members is checked after every input, a larger
//  one after every size / SIM_CHECK_VISITS inputs, so that checking stays
//  a bounded cost per event instead of growing with the cluster (at 10,000
//  nodes, checking every table after every input cost more than the rest
//  of the run together).
static bool
s_membership_due (sim_run_t *run, uint32_t n, const shoal_membership_t *membership)
{
    uint64_t *credit = &run->checks.credit[n];
    *credit += SIM_CHECK_VISITS;
    if (*credit < shoal_membership_size (membership))
        return false;
    *credit = 0;
    return true;
}

//  Node n's cores hold their own invariants (shoal_<core>_check), after
//  every input they took (the membership's, see s_membership_due).
static void
s_check_cores (sim_run_t *run, uint32_t n)
{
    shoal_sim_t *sim = run->sim;
    const char *reason = NULL, *core = NULL;
    shoal_membership_t *membership = shoal_sim_node (sim, n);
    if (membership && !s_membership_due (run, n, membership))
        membership = NULL;
    shoal_elector_t *elector = shoal_sim_elector (sim, n);
    shoal_tasks_t *tasks = shoal_sim_tasks (sim, n);
    shoal_handoff_t *handoff = shoal_sim_handoff (sim, n);
    shoal_jobs_t *jobs = shoal_sim_jobs (sim, n);
    if (membership && shoal_membership_check (membership, &reason) != 0)
        core = "membership";
    else if (elector && shoal_elector_check (elector, &reason) != 0)
        core = "elector";
    else if (tasks && shoal_tasks_check (tasks, &reason) != 0)
        core = "tasks";
    else if (handoff && shoal_handoff_check (handoff, &reason) != 0)
        core = "handoff";
    else if (jobs && shoal_jobs_check (jobs, &reason) != 0)
        core = "jobs";
    if (core)
        sim_violation (run, "node %u: its %s broke its invariant: %s", n, core,
                       reason ? reason : "(no reason)");
}

void
sim_check_node (void *arg, uint64_t now_ms, uint32_t node)
{
    (void) now_ms;
    s_check_incarnation (arg, node);
    s_check_cores (arg, node);
}

//  A dead verdict about a node up and reachable lasts at most run->bound.
//  The bound runs only while the two can talk: both up and running, each
//  reaching the other. A pause or a cut starts it again.
static void
s_check_verdicts (sim_run_t *run)
{
    shoal_sim_t *sim = run->sim;
    sim_checks_t *checks = &run->checks;
    uint64_t now = shoal_sim_now (sim);
    size_t kept = 0;
    for (size_t i = 0; i < checks->verdict_count; i++) {
        uint32_t observer = checks->verdicts[i].observer, subject = checks->verdicts[i].subject;
        shoal_membership_t *core = shoal_sim_node (sim, observer);
        shoal_membership_member_t member;
        shoal_id_t id;
        shoal_sim_id (subject, &id);
        if (!core || shoal_membership_member (core, &id, &member) != 0 ||
            member.state != SHOAL_MEMBER_DEAD)
            continue; //  refuted, or forgotten
        if (shoal_sim_paused (sim, observer) || !shoal_sim_node (sim, subject) ||
            shoal_sim_paused (sim, subject) || !shoal_sim_reachable (sim, subject, observer) ||
            !shoal_sim_reachable (sim, observer, subject))
            checks->verdicts[i].due_ms = now;
        if (checks->verdicts[i].due_ms + run->bound > now) {
            checks->verdicts[kept++] = checks->verdicts[i];
            continue;
        }
        sim_violation (run,
                       "node %u has had node %u dead for %llu ms while it was up and reachable",
                       observer, subject, (unsigned long long) (now - checks->verdicts[i].due_ms));
    }
    checks->verdict_count = kept;
}

void
sim_check_step (sim_run_t *run)
{
    sim_check_stall (run);
    if (run->checks.election)
        s_check_election (run);
    //  Every node, as a restart between steps gives a node a new life
    //  before any event at it.
    for (uint32_t n = 0; n < shoal_sim_size (run->sim); n++)
        s_check_incarnation (run, n);
    s_check_verdicts (run);
}

/*  node/calls.c: what each call of the API (api.c) does on the actor's
    thread, one function per kind of call.
*/

#include "node/node.h"

#include "election/elector.h"
#include "node/why.h"
#include "wire/ids.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

//  Leaves, and waits (ref 0) unless it is done.
static void
s_leave (shoal_actor_t *self, shoal_call_t *call)
{
    shoal_actor_leave_start (self, shoal_actor_now ());
    shoal_actor_leave_check (self);
    call->rc = self->left ? 0 : 1;
    if (!self->left && !zlistx_add_end (self->waiters, call))
        call->rc = -1;
}

//  A submit, rescale or remove: waits for the answer under a new ref.
static void
s_request (shoal_actor_t *self, shoal_call_t *call)
{
    const shoal_control_req_t *req = call->u.request.req;
    call->ref = ++self->next_ref;
    call->rc = -1;
    shoal_eventlog_request (self->events, call->ref, req);
    uint64_t now = shoal_actor_now ();
    //  The answer may come during the request (a refusal, a submit done
    //  already, or this node leads): the waiter is listed first.
    if (self->leaving)
        snprintf (call->why, sizeof call->why, "the node is leaving");
    else if (!zlistx_add_end (self->waiters, call))
        snprintf (call->why, sizeof call->why, "out of memory");
    else if (shoal_peer_request (self->peer, now, call->ref, req) != 0) {
        shoal_actor_waiter_find (self, 0, call);
        snprintf (call->why, sizeof call->why, "the request is refused");
    } else
        call->rc = 0;
    shoal_actor_deliver (self, now);
}

//  The caller gives up waiting: the actor forgets the call.
static void
s_forget (shoal_actor_t *self, shoal_call_t *call)
{
    shoal_actor_waiter_find (self, 0, call);
    shoal_status_forget (self, call);
}

static void
s_report (shoal_actor_t *self, shoal_call_t *call)
{
    const shoal_call_report_t *report = &call->u.report;
    uint64_t now = shoal_actor_now ();
    call->rc = shoal_peer_report (self->peer, now, report->task, report->state, report->lag);
    if (call->rc != 0)
        snprintf (call->why, sizeof call->why,
                  "task %s: the node does not hold it, or the report makes no sense now",
                  report->task);
    shoal_actor_deliver (self, now);
}

static void
s_report_exit (shoal_actor_t *self, shoal_call_t *call)
{
    const shoal_call_exit_t *exit = &call->u.exit;
    uint64_t now = shoal_actor_now ();
    call->rc =
        shoal_peer_exit (self->peer, now, exit->task, exit->restarts, exit->last_exit, exit->error);
    if (call->rc != 0)
        snprintf (call->why, sizeof call->why,
                  "task %s: the node does not hold it, or the error is not UTF-8 text", exit->task);
    else
        shoal_metrics_exit (self->metrics, exit->restarts);
    shoal_actor_deliver (self, now);
}

void
shoal_call_give (void *theirs, size_t their_size, const void *ours, size_t our_size, bool sized)
{
    size_t common = their_size < our_size ? their_size : our_size;
    memcpy (theirs, ours, common);
    if (their_size > common)
        memset ((char *) theirs + common, 0, their_size - common);
    if (sized)
        memcpy (theirs, &their_size, sizeof their_size);
}

//  Gives a list call its item at index, when it has room for it.
static void
s_list_give (shoal_call_list_t *list, size_t index, const void *item, size_t item_size)
{
    if (index < list->max)
        shoal_call_give ((char *) list->items + index * list->item_size, list->item_size, item,
                         item_size, false);
}

static void
s_member_copy (const shoal_membership_member_t *from, shoal_member_t *to)
{
    *to = (shoal_member_t){ .state = from->state, .incarnation = from->incarnation };
    shoal_id_format (from->node.bytes, true, to->id);
    if (from->meta) {
        snprintf (to->name, sizeof to->name, "%s", from->meta->name ? from->meta->name : "");
        snprintf (to->addr, sizeof to->addr, "%s", from->meta->addr ? from->meta->addr : "");
    }
}

static void
s_members (shoal_actor_t *self, shoal_call_t *call)
{
    shoal_call_list_t *list = &call->u.list;
    shoal_membership_t *membership = shoal_peer_membership (self->peer);
    size_t size = shoal_membership_size (membership);
    //  The voter set, sorted by id.
    shoal_elector_saved_t saved = { 0 };
    if (shoal_peer_elector (self->peer))
        shoal_elector_saved (shoal_peer_elector (self->peer), &saved);
    list->count = 0;
    for (size_t i = 0; i < size; i++) {
        shoal_membership_member_t member;
        if (shoal_membership_member_at (membership, i, &member) != 0)
            continue;
        shoal_member_t copy;
        s_member_copy (&member, &copy);
        copy.voter = shoal_ids_contain (saved.voters, saved.voter_count, &member.node);
        s_list_give (list, list->count++, &copy, sizeof copy);
    }
    call->rc = 0;
}

static void
s_leader (shoal_actor_t *self, shoal_call_t *call)
{
    shoal_id_t leader = { 0 };
    uint64_t now = shoal_actor_now ();
    shoal_call_leader_t *out = &call->u.leader;
    out->term = 0;
    shoal_peer_leader (self->peer, now, &leader, &out->term);
    shoal_id_format (leader.bytes, true, out->id);
    out->acting = shoal_elector_acting (shoal_peer_elector (self->peer), now);
    call->rc = 0;
}

static void
s_reopen (shoal_actor_t *self, shoal_call_t *call)
{
    call->rc = shoal_eventlog_reopen (self->events, call->why, sizeof call->why);
}

static void
s_tasks (shoal_actor_t *self, shoal_call_t *call)
{
    shoal_call_list_t *list = &call->u.list;
    shoal_tasks_t *tasks = shoal_peer_tasks (self->peer);
    const shoal_task_status_t *held;
    list->count = shoal_tasks_list (tasks, &held);
    for (size_t i = 0; i < list->count && i < list->max; i++) {
        shoal_task_t task = { .role = held[i].role,
                              .state = held[i].state,
                              .lag = held[i].lag,
                              .epoch_term = held[i].epoch.term,
                              .epoch_version = held[i].epoch.version };
        snprintf (task.task, sizeof task.task, "%s", held[i].task);
        s_list_give (list, i, &task, sizeof task);
    }
    shoal_epoch_t version = shoal_tasks_version (tasks);
    list->version[0] = version.term;
    list->version[1] = version.version;
    call->rc = 0;
}

//  A job's requirements as text: "key=value,key=value".
static void
s_require_text (const shoal_jobspec_t *spec, char text[SHOAL_REQUIRE_TEXT])
{
    size_t used = 0;
    text[0] = 0;
    for (uint32_t i = 0; i < spec->require_count; i++)
        used += (size_t) snprintf (text + used, SHOAL_REQUIRE_TEXT - used, "%s%s=%s", i ? "," : "",
                                   spec->require[i].key, spec->require[i].value);
}

static void
s_job_info (const shoal_jobspec_t *spec, shoal_job_info_t *job)
{
    *job = (shoal_job_info_t){ .parallelism = spec->parallelism,
                               .stateful = spec->stateful,
                               .weight = spec->weight,
                               .require_count = spec->require_count,
                               .fenced = spec->fenced };
    snprintf (job->name, sizeof job->name, "%s", spec->name);
    snprintf (job->command, sizeof job->command, "%s", spec->command);
    s_require_text (spec, job->require);
}

static void
s_job (shoal_actor_t *self, shoal_call_t *call)
{
    shoal_call_job_t *job = &call->u.job;
    const shoal_jobspec_t *specs;
    size_t count = shoal_jobs_specs (shoal_peer_jobs (self->peer), &specs);
    call->rc = -1;
    for (size_t i = 0; i < count; i++) {
        if (strcmp (specs[i].name, job->name) != 0 || specs[i].parallelism == 0)
            continue;
        size_t need = strlen (specs[i].command) + 1;
        if (job->command && need > job->command_size) {
            shoal_why (call->why, sizeof call->why, "job %s: its command needs %zu bytes",
                       specs[i].name, need);
            return;
        }
        if (job->command)
            memcpy (job->command, specs[i].command, need);
        job->parallelism = specs[i].parallelism;
        job->stateful = specs[i].stateful;
        if (job->info) {
            shoal_job_info_t info;
            s_job_info (&specs[i], &info);
            shoal_call_give (job->info, job->info_size, &info, sizeof info, false);
        }
        call->rc = 0;
        return;
    }
    shoal_why (call->why, sizeof call->why, "no job %s", job->name);
}

static void
s_jobs (shoal_actor_t *self, shoal_call_t *call)
{
    shoal_call_list_t *list = &call->u.list;
    const shoal_jobspec_t *specs;
    shoal_jobs_t *jobs = shoal_peer_jobs (self->peer);
    size_t count = shoal_jobs_specs (jobs, &specs);
    list->count = 0;
    for (size_t i = 0; i < count; i++) {
        if (specs[i].parallelism == 0)
            continue; //  removed
        shoal_job_info_t job;
        s_job_info (&specs[i], &job);
        s_list_give (list, list->count++, &job, sizeof job);
    }
    shoal_jobs_name (jobs, &list->version[0], &list->version[1]);
    call->rc = 0;
}

void
shoal_call_run (shoal_actor_t *actor, shoal_call_t *call)
{
    static void (*const runs[SHOAL_CALL_KINDS]) (shoal_actor_t *, shoal_call_t *) = {
        [SHOAL_CALL_LEAVE] = s_leave,
        [SHOAL_CALL_REQUEST] = s_request,
        [SHOAL_CALL_FORGET] = s_forget,
        [SHOAL_CALL_REPORT] = s_report,
        [SHOAL_CALL_REPORT_EXIT] = s_report_exit,
        [SHOAL_CALL_MEMBERS] = s_members,
        [SHOAL_CALL_LEADER] = s_leader,
        [SHOAL_CALL_TASKS] = s_tasks,
        [SHOAL_CALL_JOB] = s_job,
        [SHOAL_CALL_JOBS] = s_jobs,
        [SHOAL_CALL_STATUS] = shoal_status_call,
        [SHOAL_CALL_REOPEN] = s_reopen,
    };
    assert (call->kind < SHOAL_CALL_KINDS && runs[call->kind]);
    runs[call->kind](actor, call);
}

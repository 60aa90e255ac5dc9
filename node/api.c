/*  node/api.c: the public API of a node (include/shoal.h), on the
    application's threads: the calls handed to the actor and the waits for
    their answers, the event queue as the application reads it, and the
    checks of what the application passes in.
*/

#include "node/node.h"

#include "node/key.h"
#include "node/sockets.h"
#include "node/why.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

_Static_assert((int) SHOAL_ACTIVE == SHOAL_ROLE_ACTIVE &&
                   (int) SHOAL_STANDBY == SHOAL_ROLE_STANDBY &&
                   (int) SHOAL_LEARNER == SHOAL_ROLE_LEARNER,
               "the public roles are the wire's");
_Static_assert((int) SHOAL_RUNNING == SHOAL_TASK_RUNNING &&
                   (int) SHOAL_STOPPED == SHOAL_TASK_STOPPED &&
                   (int) SHOAL_FAILED == SHOAL_TASK_FAILED,
               "the public task states are the wire's");
_Static_assert((int) SHOAL_MEMBER_STATE_LEFT == SHOAL_MEMBER_LEFT &&
                   (int) SHOAL_MEMBER_STATE_DEAD == SHOAL_MEMBER_DEAD,
               "the public member states are the wire's");
_Static_assert((int) SHOAL_RESULT_FAILED == SHOAL_REPLY_FAILED &&
                   (int) SHOAL_RESULT_PARTIAL == SHOAL_REPLY_PARTIAL,
               "the public result codes are the wire's");
_Static_assert(SHOAL_NODE_ID_TEXT == SHOAL_ID_TEXT && SHOAL_TASK_TEXT == SHOAL_TASK_MAX + 1 &&
                   SHOAL_NAME_TEXT == SHOAL_NAME_MAX + 1 && SHOAL_ADDR_TEXT == SHOAL_ADDR_MAX + 1 &&
                   SHOAL_REASON_TEXT == SHOAL_REASON_MAX + 1 &&
                   SHOAL_COMMAND_TEXT == SHOAL_COMMAND_MAX + 1 &&
                   SHOAL_OPTION_TEXT == SHOAL_OPTIONS_VALUE_MAX + 1,
               "the public texts hold the wire's");
_Static_assert(SHOAL_REQUIRE_TEXT == SHOAL_LABELS_MAX * (2 * SHOAL_LABEL_MAX + 2) + 1,
               "the public require text holds every label, key=value and a comma each");

//  ---------------------------------------------------------------------
//  The API

static int
s_call_init (shoal_call_t *call)
{
    memset (call, 0, sizeof *call);
    if (pthread_mutex_init (&call->lock, NULL) != 0)
        return -1;
    pthread_condattr_t attributes;
    pthread_condattr_init (&attributes);
    pthread_condattr_setclock (&attributes, CLOCK_MONOTONIC);
    int rc = pthread_cond_init (&call->done_cond, &attributes);
    pthread_condattr_destroy (&attributes);
    if (rc != 0) {
        pthread_mutex_destroy (&call->lock);
        return -1;
    }
    return 0;
}

static void
s_call_fini (shoal_call_t *call)
{
    pthread_cond_destroy (&call->done_cond);
    pthread_mutex_destroy (&call->lock);
}

//  The application's signals (a Go runtime's preemption, a SIGCHLD
//  handler) interrupt ZeroMQ's calls with EINTR, and a call to the actor
//  that returned before the actor answered would leave it the caller's
//  stack. So the node's own threads block them all (they go to the
//  application's threads), and a call holds them off while it talks to the
//  actor: they are delivered when it returns. The faults a thread raises
//  itself stay deliverable.
static void
s_signals_block (sigset_t *old)
{
    sigset_t all;
    sigfillset (&all);
    int faults[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT };
    for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++)
        sigdelset (&all, faults[i]);
    pthread_sigmask (SIG_BLOCK, &all, old);
}

static void
s_signals_restore (const sigset_t *old)
{
    pthread_sigmask (SIG_SETMASK, old, NULL);
}

//  Stops the actor and waits for its thread to end, signals held off.
static void
s_actor_stop (shoal_node_t *self)
{
    sigset_t old;
    s_signals_block (&old);
    zactor_destroy (&self->actor);
    s_signals_restore (&old);
}

//  Runs call on the actor's thread. Returns -1 when the node is not running.
static int
s_call (shoal_node_t *self, shoal_call_t *call)
{
    sigset_t old;
    s_signals_block (&old);
    pthread_mutex_lock (&self->call_lock);
    int rc = -1;
    if (self->actor && zsock_send (self->actor, "sp", "CALL", call) == 0)
        rc = zsock_wait (self->actor) == 0 ? 0 : -1;
    pthread_mutex_unlock (&self->call_lock);
    s_signals_restore (&old);
    if (rc != 0)
        snprintf (call->why, sizeof call->why, "the node is not running");
    return rc;
}

//  Waits until the actor answered call, timeout_ms passed, or call->cancel
//  was cancelled; then makes sure the actor forgets it. Returns true when
//  it was answered.
static bool
s_call_wait (shoal_node_t *self, shoal_call_t *call, uint64_t timeout_ms)
{
    struct timespec until;
    clock_gettime (CLOCK_MONOTONIC, &until);
    until.tv_sec += (time_t) (timeout_ms / 1000);
    until.tv_nsec += (long) (timeout_ms % 1000) * 1000000;
    if (until.tv_nsec >= 1000000000) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000;
    }
    shoal_wait_t wait = { .lock = &call->lock, .cond = &call->done_cond };
    shoal_cancel_watch (call->cancel, &wait);
    pthread_mutex_lock (&call->lock);
    bool done = shoal_cancel_wait (call->cancel, &wait, &call->done, &until);
    pthread_mutex_unlock (&call->lock);
    shoal_cancel_unwatch (call->cancel, &wait);
    if (!done) {
        call->kind = SHOAL_CALL_FORGET;
        s_call (self, call);
        //  The answer may have come just before the actor forgot it.
        pthread_mutex_lock (&call->lock);
        done = call->done;
        pthread_mutex_unlock (&call->lock);
    }
    return done;
}

static int
s_reason (char *why, size_t why_size, const char *reason)
{
    return shoal_why (why, why_size, "%s", reason);
}

shoal_node_t *
shoal_node_new (void)
{
    shoal_node_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->events_fd = -1;
    self->options = shoal_options_new ();
    if (!self->options || pthread_mutex_init (&self->call_lock, NULL) != 0) {
        shoal_options_destroy (&self->options);
        free (self);
        return NULL;
    }
    if (pthread_mutex_init (&self->events_lock, NULL) != 0) {
        pthread_mutex_destroy (&self->call_lock);
        shoal_options_destroy (&self->options);
        free (self);
        return NULL;
    }
    return self;
}

void
shoal_node_destroy (shoal_node_t **self_p)
{
    shoal_node_t *self = *self_p;
    if (!self)
        return;
    s_actor_stop (self);
    if (self->events_fd >= 0)
        close (self->events_fd);
    free (self->events);
    pthread_mutex_destroy (&self->events_lock);
    pthread_mutex_destroy (&self->call_lock);
    shoal_options_destroy (&self->options);
    free (self);
    *self_p = NULL;
}

//  Options change only before start: the actor reads them without a lock.
//  Takes the call lock when options may still be set, and returns 0
//  holding it; -1 otherwise. Options are set and read under that lock, so
//  that a list being set is never read half made.
static int
s_settable_lock (shoal_node_t *self, char *why, size_t why_size)
{
    if (!self)
        return s_reason (why, why_size, "no node");
    pthread_mutex_lock (&self->call_lock);
    if (!self->actor && !self->stopped)
        return 0;
    pthread_mutex_unlock (&self->call_lock);
    return s_reason (why, why_size, "options are set before the node starts");
}

int
shoal_node_set (shoal_node_t *self, const char *key, const char *value, char *why, size_t why_size)
{
    if (self && (!key || !value))
        return s_reason (why, why_size, "an option needs a key and a value");
    if (s_settable_lock (self, why, why_size) != 0)
        return -1;
    int rc = shoal_options_set (self->options, key, value, why, why_size);
    pthread_mutex_unlock (&self->call_lock);
    return rc;
}

int
shoal_node_get (shoal_node_t *self, const char *key, char *value, size_t size, char *why,
                size_t why_size)
{
    if (!self || !key || !value)
        return s_reason (why, why_size, "no node, key or room for the value");
    pthread_mutex_lock (&self->call_lock);
    int rc = shoal_options_get (self->options, key, value, size);
    pthread_mutex_unlock (&self->call_lock);
    if (rc != 0)
        return shoal_why (why, why_size, "%s: no such option, or no room for its value", key);
    return 0;
}

int
shoal_node_load_file (shoal_node_t *self, const char *path, char *why, size_t why_size)
{
    if (self && !path)
        return s_reason (why, why_size, "no config file named");
    if (s_settable_lock (self, why, why_size) != 0)
        return -1;
    int rc = shoal_options_load_file (self->options, path, why, why_size);
    pthread_mutex_unlock (&self->call_lock);
    return rc;
}

int
shoal_node_load_env (shoal_node_t *self, char *const *envp, char *why, size_t why_size)
{
    if (s_settable_lock (self, why, why_size) != 0)
        return -1;
    int rc = envp ? shoal_options_load_env (self->options, envp, why, why_size) : 0;
    pthread_mutex_unlock (&self->call_lock);
    return rc;
}

int
shoal_node_start (shoal_node_t *self, char *why, size_t why_size)
{
    if (!self)
        return s_reason (why, why_size, "no node");
    pthread_mutex_lock (&self->call_lock);
    int rc = -1;
    if (self->actor || self->stopped)
        s_reason (why, why_size, self->actor ? "the node runs already" : "the node has stopped");
    else if (self->events_fd < 0 && (self->events_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
        shoal_why (why, why_size, "cannot make the event descriptor: %s", strerror (errno));
    else {
        //  czmq must not install its signal handlers in an application's
        //  process: SIGINT and SIGTERM are the application's.
        zsys_handler_set (NULL);
        //  The node's thread, and every thread it starts, blocks the
        //  application's signals: it inherits the mask in force here.
        sigset_t old;
        s_signals_block (&old);
        char refused[SHOAL_REASON_TEXT] = "cannot start the node's thread";
        if (shoal_sockets_available (2, refused, sizeof refused)) //  the actor's pipe
            self->actor = zactor_new (shoal_actor_run, self);
        char *reason = self->actor ? zstr_recv (self->actor) : NULL;
        if (reason && !reason[0])
            rc = 0;
        else {
            s_reason (why, why_size, reason ? reason : refused);
            zactor_destroy (&self->actor);
        }
        s_signals_restore (&old);
        free (reason);
    }
    pthread_mutex_unlock (&self->call_lock);
    return rc;
}

int
shoal_node_leave (shoal_node_t *self, uint64_t timeout_ms, shoal_cancel_t *cancel, char *why,
                  size_t why_size)
{
    if (!self)
        return s_reason (why, why_size, "no node");
    if (shoal_cancelled (cancel))
        return s_reason (why, why_size, "cancelled before the leave began: the node runs on");
    shoal_call_t call;
    if (s_call_init (&call) != 0)
        return s_reason (why, why_size, "out of memory");
    call.kind = SHOAL_CALL_LEAVE;
    call.cancel = cancel;
    int rc = s_call (self, &call);
    if (rc == 0 && call.rc == 1)
        rc = s_call_wait (self, &call, timeout_ms ? timeout_ms : self->options->leave_timeout_ms)
                 ? 0
                 : -1;
    else if (rc == 0 && call.rc < 0)
        rc = -1;
    if (rc != 0)
        shoal_why (why, why_size, "%s",
                   call.why[0]                ? call.why
                   : shoal_cancelled (cancel) ? "the leave was cancelled before it finished"
                                              : "the leave did not finish in time");
    s_call_fini (&call);
    pthread_mutex_lock (&self->call_lock);
    s_actor_stop (self);
    self->stopped = true;
    pthread_mutex_unlock (&self->call_lock);
    return rc;
}

int
shoal_node_id (shoal_node_t *self, char id[SHOAL_NODE_ID_TEXT])
{
    if (!self || !self->id[0])
        return -1;
    memcpy (id, self->id, SHOAL_NODE_ID_TEXT);
    return 0;
}

int
shoal_node_port (shoal_node_t *self, uint16_t *port)
{
    if (!self || !self->id[0])
        return -1;
    *port = self->port;
    return 0;
}

int
shoal_node_fd (shoal_node_t *self)
{
    return self ? self->events_fd : -1;
}

int
shoal_node_event (shoal_node_t *self, shoal_event_t *event)
{
    if (!self || self->events_fd < 0 || !event || event->size < sizeof *event)
        return -1;
    pthread_mutex_lock (&self->events_lock);
    int rc = 0;
    if (self->events_count) {
        shoal_call_give (event, event->size, &self->events[self->events_head], sizeof *event, true);
        self->events_head = (self->events_head + 1) % self->events_size;
        if (event->type == SHOAL_EVENT_LEASE)
            self->lease_events--;
        if (--self->events_count == 0) {
            uint64_t value;
            if (read (self->events_fd, &value, sizeof value) < 0) {
                //  EAGAIN: nothing to clear.
            }
        }
        rc = 1;
    }
    pthread_mutex_unlock (&self->events_lock);
    return rc;
}

int
shoal_node_lease (shoal_node_t *self, uint64_t *until_ms)
{
    if (!self || !until_ms || self->events_fd < 0)
        return -1;
    pthread_mutex_lock (&self->events_lock);
    //  While a LEASE event waits, the application has not heard what the
    //  end that follows it belongs to: a lease lost and held again since.
    *until_ms = self->lease_events ? 0 : self->lease_until;
    pthread_mutex_unlock (&self->events_lock);
    return 0;
}

int
shoal_node_report (shoal_node_t *self, const char *task, int state, uint64_t lag, char *why,
                   size_t why_size)
{
    if (!self || !task)
        return s_reason (why, why_size, "no node or no task");
    if (state != SHOAL_RUNNING && state != SHOAL_STOPPED && state != SHOAL_FAILED)
        return shoal_why (why, why_size, "task %s: %d is not a state to report", task, state);
    shoal_call_t call;
    if (s_call_init (&call) != 0)
        return s_reason (why, why_size, "out of memory");
    call.kind = SHOAL_CALL_REPORT;
    call.u.report = (shoal_call_report_t){ .task = task, .state = (uint8_t) state, .lag = lag };
    int rc = s_call (self, &call) == 0 ? call.rc : -1;
    if (rc != 0)
        s_reason (why, why_size, call.why);
    s_call_fini (&call);
    return rc;
}

int
shoal_node_report_exit (shoal_node_t *self, const char *task, uint32_t restarts, uint32_t last_exit,
                        const char *error, char *why, size_t why_size)
{
    if (!self || !task)
        return s_reason (why, why_size, "no node or no task");
    if (last_exit > SHOAL_EXIT_MAX)
        return shoal_why (why, why_size, "task %s: %u is not an exit (status, or 256 + signal)",
                          task, last_exit);
    shoal_call_t call;
    if (s_call_init (&call) != 0)
        return s_reason (why, why_size, "out of memory");
    call.kind = SHOAL_CALL_REPORT_EXIT;
    call.u.exit = (shoal_call_exit_t){
        .task = task, .restarts = restarts, .last_exit = last_exit, .error = error ? error : ""
    };
    int rc = s_call (self, &call) == 0 ? call.rc : -1;
    if (rc != 0)
        s_reason (why, why_size, call.why);
    s_call_fini (&call);
    return rc;
}

//  Gives the caller its result (NULL: none wanted), and returns rc.
static int
s_result (shoal_result_t *theirs, const shoal_result_t *ours, int rc)
{
    if (theirs)
        shoal_call_give (theirs, theirs->size, ours, sizeof *ours, true);
    return rc;
}

//  A result of code for a request that did not get the cluster's answer.
static int
s_unanswered (shoal_result_t *theirs, int code, const char *reason)
{
    shoal_result_t ours = { .code = code };
    snprintf (ours.reason, sizeof ours.reason, "%s", reason);
    return s_result (theirs, &ours, -1);
}

//  Sends a request to the cluster and waits for its answer.
static int
s_request (shoal_node_t *self, const shoal_control_req_t *req, uint64_t timeout_ms,
           shoal_cancel_t *cancel, shoal_result_t *result)
{
    shoal_call_t call;
    if (!self)
        return s_unanswered (result, SHOAL_RESULT_FAILED, "no node");
    if (shoal_cancelled (cancel))
        return s_unanswered (result, SHOAL_RESULT_CANCELLED, "cancelled before it was sent");
    if (s_call_init (&call) != 0)
        return s_unanswered (result, SHOAL_RESULT_FAILED, "out of memory");
    call.kind = SHOAL_CALL_REQUEST;
    call.u.request.req = req;
    call.cancel = cancel;
    int rc = -1;
    if (s_call (self, &call) != 0 || call.rc != 0)
        s_unanswered (result, SHOAL_RESULT_FAILED, call.why);
    else if (!s_call_wait (self, &call, timeout_ms ? timeout_ms : 30000))
        shoal_cancelled (cancel)
            ? s_unanswered (result, SHOAL_RESULT_CANCELLED,
                            "cancelled while waiting: the request may still be applied")
            : s_unanswered (result, SHOAL_RESULT_FAILED, "no answer came in time");
    else
        rc = s_result (result, &call.u.request.result, 0);
    s_call_fini (&call);
    return rc;
}

//  A result the caller's struct can take: NULL, or one whose size holds
//  the 0.2 layout.
static bool
s_result_fits (const shoal_result_t *result)
{
    return !result || result->size >= sizeof *result;
}

int
shoal_node_submit (shoal_node_t *self, const shoal_job_spec_t *theirs, uint64_t timeout_ms,
                   shoal_cancel_t *cancel, shoal_result_t *result)
{
    shoal_label_t require[SHOAL_LABELS_MAX];
    char texts[SHOAL_LABELS_MAX][2 * SHOAL_LABEL_MAX + 2];
    if (!s_result_fits (result))
        return -1;
    if (!theirs || theirs->size < offsetof (shoal_job_spec_t, fenced))
        return s_unanswered (result, SHOAL_RESULT_INVALID,
                             theirs ? "the job spec's size is below the 0.2 layout: set .size = "
                                      "sizeof (shoal_job_spec_t)"
                                    : "no job spec");
    //  Fields past the library's are the caller's newer ones: not read;
    //  fields past the caller's (a 0.2 spec has no fenced) are zero.
    shoal_job_spec_t copy = { 0 }, *spec = &copy;
    memcpy (&copy, theirs, theirs->size < sizeof copy ? theirs->size : sizeof copy);
    if (!spec->name || spec->require_count > SHOAL_LABELS_MAX)
        return s_unanswered (result, SHOAL_RESULT_INVALID,
                             !spec->name ? "a job needs a name" : "at most 16 required labels");
    for (size_t i = 0; i < spec->require_count; i++) {
        const char *label = spec->require[i];
        const char *equals = label ? strchr (label, '=') : NULL;
        if (!equals || strlen (label) >= sizeof texts[i])
            return s_unanswered (result, SHOAL_RESULT_INVALID,
                                 "a required label is key=value, of at most 64 bytes each");
        snprintf (texts[i], sizeof texts[i], "%s", label);
        texts[i][equals - label] = 0;
        require[i] = (shoal_label_t){ texts[i], texts[i] + (equals - label) + 1 };
    }
    shoal_jobspec_t job = { .name = spec->name,
                            .parallelism = spec->parallelism,
                            .stateful = spec->stateful,
                            .fenced = spec->fenced,
                            .weight = spec->weight ? spec->weight : 1,
                            .require_count = (uint32_t) spec->require_count,
                            .require = require,
                            .command = spec->command ? spec->command : "" };
    shoal_control_req_t req = { .op = SHOAL_OP_SUBMIT, .job = spec->name, .spec = &job };
    return s_request (self, &req, timeout_ms, cancel, result);
}

int
shoal_node_rescale (shoal_node_t *self, const char *job, uint32_t parallelism, uint32_t min,
                    uint32_t wait_ms, uint64_t timeout_ms, shoal_cancel_t *cancel,
                    shoal_result_t *result)
{
    if (!s_result_fits (result))
        return -1;
    shoal_control_req_t req = { .op = SHOAL_OP_RESCALE,
                                .job = job ? job : "",
                                .parallelism = parallelism,
                                .min = min,
                                .timeout_ms = wait_ms };
    //  The answer comes after the wait at the latest.
    if (timeout_ms && timeout_ms < (uint64_t) wait_ms + 1000)
        timeout_ms = (uint64_t) wait_ms + 1000;
    return s_request (self, &req, timeout_ms, cancel, result);
}

int
shoal_node_remove (shoal_node_t *self, const char *job, uint64_t timeout_ms, shoal_cancel_t *cancel,
                   shoal_result_t *result)
{
    if (!s_result_fits (result))
        return -1;
    shoal_control_req_t req = { .op = SHOAL_OP_REMOVE, .job = job ? job : "" };
    return s_request (self, &req, timeout_ms, cancel, result);
}

//  The job call: shoal_node_job's outputs, and the whole spec into info.
static int
s_job (shoal_node_t *self, const char *job, uint32_t *parallelism, bool *stateful, char *command,
       size_t command_size, shoal_job_info_t *info, size_t info_size, char *why, size_t why_size)
{
    if (!self || !job)
        return s_reason (why, why_size, "no node or no job");
    shoal_call_t call;
    if (s_call_init (&call) != 0)
        return s_reason (why, why_size, "out of memory");
    call.kind = SHOAL_CALL_JOB;
    call.u.job = (shoal_call_job_t){ .name = job,
                                     .command = command,
                                     .command_size = command_size,
                                     .info = info,
                                     .info_size = info_size };
    int rc = s_call (self, &call) == 0 ? call.rc : -1;
    if (rc != 0)
        s_reason (why, why_size, call.why);
    else {
        if (parallelism)
            *parallelism = call.u.job.parallelism;
        if (stateful)
            *stateful = call.u.job.stateful;
    }
    s_call_fini (&call);
    return rc;
}

int
shoal_node_job (shoal_node_t *self, const char *job, uint32_t *parallelism, bool *stateful,
                char *command, size_t command_size, char *why, size_t why_size)
{
    return s_job (self, job, parallelism, stateful, command, command_size, NULL, 0, why, why_size);
}

int
shoal_node_job_info (shoal_node_t *self, const char *job, shoal_job_info_t *info, size_t item_size,
                     char *why, size_t why_size)
{
    if (!info || item_size < offsetof (shoal_job_info_t, fenced))
        return s_reason (why, why_size, "the job info's size is below the 0.2 layout");
    return s_job (self, job, NULL, NULL, NULL, 0, info, item_size, why, why_size);
}

//  A list call's room: max items of item_size bytes at items, each of at
//  least the 0.2 layout (our_size).
static bool
s_room (const void *items, size_t item_size, size_t max, size_t our_size)
{
    return !max || (items && item_size >= our_size);
}

//  Runs the list call run, which fills up to max items of item_size bytes
//  (our_size in the 0.2 layout) at items; *count and version[2] (each when
//  not NULL) take its count and the version it names.
static int
s_list (shoal_node_t *self, shoal_call_kind_t kind, void *items, size_t item_size, size_t our_size,
        size_t max, size_t *count, uint64_t version[2])
{
    shoal_call_t call;
    if (!self || !s_room (items, item_size, max, our_size) || s_call_init (&call) != 0)
        return -1;
    call.kind = kind;
    call.u.list = (shoal_call_list_t){ .items = items, .item_size = item_size, .max = max };
    int rc = s_call (self, &call);
    if (rc == 0 && count)
        *count = call.u.list.count;
    if (rc == 0 && version) {
        version[0] = call.u.list.version[0];
        version[1] = call.u.list.version[1];
    }
    s_call_fini (&call);
    return rc;
}

int
shoal_node_members (shoal_node_t *self, shoal_member_t *members, size_t item_size, size_t max,
                    size_t *count)
{
    //  A caller built against 0.2 has no voter flag.
    return s_list (self, SHOAL_CALL_MEMBERS, members, item_size, offsetof (shoal_member_t, voter),
                   max, count, NULL);
}

int
shoal_node_leader (shoal_node_t *self, char id[SHOAL_NODE_ID_TEXT], uint64_t *term, bool *acting)
{
    shoal_call_t call;
    if (!self || s_call_init (&call) != 0)
        return -1;
    call.kind = SHOAL_CALL_LEADER;
    int rc = s_call (self, &call);
    if (rc == 0 && id)
        memcpy (id, call.u.leader.id, SHOAL_NODE_ID_TEXT);
    if (rc == 0 && term)
        *term = call.u.leader.term;
    if (rc == 0 && acting)
        *acting = call.u.leader.acting;
    s_call_fini (&call);
    return rc;
}

int
shoal_node_reopen (shoal_node_t *self, char *why, size_t why_size)
{
    shoal_call_t call;
    if (!self)
        return s_reason (why, why_size, "no node");
    if (s_call_init (&call) != 0)
        return s_reason (why, why_size, "out of memory");
    call.kind = SHOAL_CALL_REOPEN;
    int rc = s_call (self, &call) == 0 ? call.rc : -1;
    if (rc != 0)
        s_reason (why, why_size, call.why);
    s_call_fini (&call);
    return rc;
}

int
shoal_node_tasks (shoal_node_t *self, shoal_task_t *tasks, size_t item_size, size_t max,
                  size_t *count, uint64_t version[2])
{
    return s_list (self, SHOAL_CALL_TASKS, tasks, item_size, sizeof *tasks, max, count, version);
}

int
shoal_node_jobs (shoal_node_t *self, shoal_job_info_t *jobs, size_t item_size, size_t max,
                 size_t *count, uint64_t version[2])
{
    return s_list (self, SHOAL_CALL_JOBS, jobs, item_size, offsetof (shoal_job_info_t, fenced), max,
                   count, version);
}

//  Runs the status call; when it waits for the leader, waits up to
//  timeout_ms and a second more (the actor answers by the timeout, with
//  this node's own tasks at worst), or until cancel. A cancelled wait is
//  answered with this node's own tasks. Returns the call's rc.
static int
s_status (shoal_node_t *self, shoal_call_t *call, uint64_t timeout_ms)
{
    call->u.list.wait_ms = shoal_cancelled (call->cancel) ? 0 : timeout_ms;
    if (s_call (self, call) != 0)
        return -1;
    if (call->rc != 1)
        return call->rc;
    if (s_call_wait (self, call, timeout_ms + 1000))
        return call->rc;
    //  Given up (the actor forgot it): asked again, without the leader.
    call->kind = SHOAL_CALL_STATUS;
    call->u.list.wait_ms = 0;
    if (s_call (self, call) != 0)
        return -1;
    if (!call->u.list.info.whole)
        snprintf (
            call->u.list.info.reason, sizeof call->u.list.info.reason, "%s: this node's own tasks",
            shoal_cancelled (call->cancel) ? "cancelled" : "the leader did not answer in time");
    return call->rc;
}

int
shoal_node_status (shoal_node_t *self, shoal_status_row_t *rows, size_t item_size, size_t max,
                   size_t *count, shoal_status_info_t *status, uint64_t timeout_ms,
                   shoal_cancel_t *cancel)
{
    shoal_call_t call;
    if (!self || !s_room (rows, item_size, max, sizeof *rows) ||
        (status && status->size < sizeof *status) || s_call_init (&call) != 0)
        return -1;
    call.kind = SHOAL_CALL_STATUS;
    call.u.list = (shoal_call_list_t){ .items = rows, .item_size = item_size, .max = max };
    call.cancel = cancel;
    int rc = s_status (self, &call, timeout_ms);
    if (rc == 0 && count)
        *count = call.u.list.count;
    if (rc == 0 && status)
        shoal_call_give (status, status->size, &call.u.list.info, sizeof call.u.list.info, true);
    s_call_fini (&call);
    return rc;
}

/*  calls.h: the library's calls, as the Go package makes them.

    The Go runtime sends signals to its threads (SIGURG preempts a
    goroutine, since Go 1.14), and one may land on a thread just as it
    enters a cgo call. The calls below talk to the node's thread over
    ZeroMQ and wait for its answer; a signal there ends that wait early
    with EINTR, and a call that returns while the node still holds a
    pointer to its stack crashes the node's thread later (seen in this
    package's tests, within seconds). So each call runs with the
    asynchronous signals blocked on its thread: they wait, pending, until
    it returns, or go to another thread. The faults a thread raises itself
    (SIGSEGV, SIGBUS, ...) are never blocked.
*/
#ifndef SHOAL_GO_CALLS_H
#define SHOAL_GO_CALLS_H

#include <pthread.h>
#include <shoal.h>
#include <signal.h>

static inline void
sg_quiet (sigset_t *old)
{
    sigset_t set;
    sigfillset (&set);
    sigdelset (&set, SIGSEGV);
    sigdelset (&set, SIGBUS);
    sigdelset (&set, SIGFPE);
    sigdelset (&set, SIGILL);
    sigdelset (&set, SIGTRAP);
    sigdelset (&set, SIGSYS);
    sigdelset (&set, SIGABRT);
    pthread_sigmask (SIG_BLOCK, &set, old);
}

static inline void
sg_loud (const sigset_t *old)
{
    pthread_sigmask (SIG_SETMASK, old, NULL);
}

//  A wrapper sg_NAME of shoal_NAME that returns int.
#define SG_INT(name, params, args)                                                                 \
    static inline int sg_##name params                                                             \
    {                                                                                              \
        sigset_t old;                                                                              \
        sg_quiet (&old);                                                                           \
        int rc = shoal_##name args;                                                                \
        sg_loud (&old);                                                                            \
        return rc;                                                                                 \
    }

SG_INT (node_set, (shoal_node_t * n, const char *k, const char *v, char *w, size_t ws),
        (n, k, v, w, ws))
SG_INT (node_get, (shoal_node_t * n, const char *k, char *v, size_t s, char *w, size_t ws),
        (n, k, v, s, w, ws))
SG_INT (node_load_file, (shoal_node_t * n, const char *p, char *w, size_t ws), (n, p, w, ws))
SG_INT (node_load_env, (shoal_node_t * n, char *const *e, char *w, size_t ws), (n, e, w, ws))
SG_INT (node_start, (shoal_node_t * n, char *w, size_t ws), (n, w, ws))
SG_INT (node_leave, (shoal_node_t * n, uint64_t t, shoal_cancel_t *c, char *w, size_t ws),
        (n, t, c, w, ws))
SG_INT (node_id, (shoal_node_t * n, char *id), (n, id))
SG_INT (node_port, (shoal_node_t * n, uint16_t *p), (n, p))
SG_INT (node_report, (shoal_node_t * n, const char *t, int s, uint64_t l, char *w, size_t ws),
        (n, t, s, l, w, ws))
SG_INT (node_report_exit,
        (shoal_node_t * n, const char *t, uint32_t r, uint32_t x, const char *e, char *w,
         size_t ws),
        (n, t, r, x, e, w, ws))
SG_INT (node_submit,
        (shoal_node_t * n, const shoal_job_spec_t *s, uint64_t t, shoal_cancel_t *c,
         shoal_result_t *r),
        (n, s, t, c, r))
SG_INT (node_rescale,
        (shoal_node_t * n, const char *j, uint32_t p, uint32_t m, uint32_t w, uint64_t t,
         shoal_cancel_t *c, shoal_result_t *r),
        (n, j, p, m, w, t, c, r))
SG_INT (node_remove,
        (shoal_node_t * n, const char *j, uint64_t t, shoal_cancel_t *c, shoal_result_t *r),
        (n, j, t, c, r))
SG_INT (node_jobs,
        (shoal_node_t * n, shoal_job_info_t *j, size_t is, size_t m, size_t *c, uint64_t *v),
        (n, j, is, m, c, v))
SG_INT (node_members, (shoal_node_t * n, shoal_member_t *m, size_t is, size_t x, size_t *c),
        (n, m, is, x, c))
SG_INT (node_leader, (shoal_node_t * n, char *id, uint64_t *t, bool *a), (n, id, t, a))
SG_INT (node_tasks,
        (shoal_node_t * n, shoal_task_t *t, size_t is, size_t m, size_t *c, uint64_t *v),
        (n, t, is, m, c, v))
SG_INT (node_status,
        (shoal_node_t * n, shoal_status_row_t *r, size_t is, size_t m, size_t *c,
         shoal_status_info_t *s, uint64_t t, shoal_cancel_t *x),
        (n, r, is, m, c, s, t, x))

static inline void
sg_node_destroy (shoal_node_t **node)
{
    sigset_t old;
    sg_quiet (&old);
    shoal_node_destroy (node);
    sg_loud (&old);
}

static inline shoal_node_t *
sg_node_new (void)
{
    sigset_t old;
    sg_quiet (&old);
    shoal_node_t *node = shoal_node_new ();
    sg_loud (&old);
    return node;
}

#endif

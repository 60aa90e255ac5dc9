/*  node/cancel.c: cancel handles; node/cancel.h says how they work. */

#include "node/cancel.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>

struct _shoal_cancel_t {
    pthread_mutex_t lock; //  the list below
    atomic_bool cancelled;
    shoal_wait_t *waits;
};

shoal_cancel_t *
shoal_cancel_new (void)
{
    shoal_cancel_t *self = calloc (1, sizeof *self);
    if (self && pthread_mutex_init (&self->lock, NULL) != 0) {
        free (self);
        return NULL;
    }
    if (self)
        atomic_init (&self->cancelled, false);
    return self;
}

void
shoal_cancel (shoal_cancel_t *self)
{
    if (!self)
        return;
    pthread_mutex_lock (&self->lock);
    atomic_store (&self->cancelled, true);
    //  A waiter checks the mark under its own lock before it sleeps: taking
    //  that lock here means it either saw the mark or sleeps already.
    for (shoal_wait_t *wait = self->waits; wait; wait = wait->next) {
        pthread_mutex_lock (wait->lock);
        pthread_cond_broadcast (wait->cond);
        pthread_mutex_unlock (wait->lock);
    }
    pthread_mutex_unlock (&self->lock);
}

bool
shoal_cancelled (shoal_cancel_t *self)
{
    return self && atomic_load (&self->cancelled);
}

void
shoal_cancel_destroy (shoal_cancel_t **self_p)
{
    shoal_cancel_t *self = *self_p;
    if (!self)
        return;
    pthread_mutex_destroy (&self->lock);
    free (self);
    *self_p = NULL;
}

bool
shoal_cancel_watch (shoal_cancel_t *cancel, shoal_wait_t *wait)
{
    wait->next = NULL;
    if (!cancel)
        return false;
    pthread_mutex_lock (&cancel->lock);
    wait->next = cancel->waits;
    cancel->waits = wait;
    pthread_mutex_unlock (&cancel->lock);
    return shoal_cancelled (cancel);
}

void
shoal_cancel_unwatch (shoal_cancel_t *cancel, shoal_wait_t *wait)
{
    if (!cancel)
        return;
    pthread_mutex_lock (&cancel->lock);
    for (shoal_wait_t **link = &cancel->waits; *link; link = &(*link)->next)
        if (*link == wait) {
            *link = wait->next;
            break;
        }
    pthread_mutex_unlock (&cancel->lock);
}

bool
shoal_cancel_wait (shoal_cancel_t *cancel, shoal_wait_t *wait, const bool *done,
                   const struct timespec *until)
{
    while (!*done && !shoal_cancelled (cancel))
        if (pthread_cond_timedwait (wait->cond, wait->lock, until) == ETIMEDOUT)
            break;
    return *done;
}

/*  node/cancel.h: cancel handles (include/shoal.h) and the waits they end.

    A call that waits for the cluster waits on its own condition under its
    own mutex (node/node.c). A cancel handle keeps the list of such waits
    that use it; shoal_cancel marks the handle and wakes each of them, and
    every wait checks the mark as it wakes. The lock order is the handle's,
    then the wait's.
*/
#ifndef SHOAL_CANCEL_H
#define SHOAL_CANCEL_H

#include "shoal.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

//  One wait: the waiter's mutex and condition, which shoal_cancel
//  signals. Linked into the handle's list while it waits.
typedef struct _shoal_wait_t shoal_wait_t;
struct _shoal_wait_t {
    pthread_mutex_t *lock;
    pthread_cond_t *cond;
    shoal_wait_t *next;
};

//  Adds wait to cancel's list (nothing when cancel is NULL). Returns true
//  when cancel was cancelled already; the wait is listed all the same.
bool shoal_cancel_watch (shoal_cancel_t *cancel, shoal_wait_t *wait);

//  Takes wait off cancel's list. Call it before the wait's lock and
//  condition go.
void shoal_cancel_unwatch (shoal_cancel_t *cancel, shoal_wait_t *wait);

//  Waits on wait's condition (its lock held by the caller) until *done,
//  cancel is cancelled, or the monotonic time until. Returns *done.
bool shoal_cancel_wait (shoal_cancel_t *cancel, shoal_wait_t *wait, const bool *done,
                        const struct timespec *until);

#endif

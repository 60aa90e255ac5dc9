/*  node/moves.h: the moves of tasks that the acting leader publishes, each
    with why, for the event log's `move` lines (docs/events.md).

    The handoff (rebalance/handoff.h) moves an active in two steps: the old
    owner's active is revoked, and once that owner stopped it (or its lease
    ended) the new owner is granted it. The handoff keeps no reason: it is
    derived here, when the revoke is published, from what the leader knows
    then, and carried to the grant:
      removed    the task is no longer one of the jobs' (a remove, or a
                 rescale down);
      leave      the old owner left, or leaves (the leader itself, too);
      dead       the view declared the old owner dead;
      suspect    the view suspects the old owner (the assignor places
                 nothing on a suspect; the verdict may come just after);
      gone       the view does not hold the old owner any more;
      failed     the old owner gave up on the task (it failed there);
      rebalance  none of these: the assignor placed it elsewhere (a member
                 came, or changed its capacity, labels or jobs);
      new        a grant that no revoke came before: a new task, or one
                 placed again after it was placed nowhere.
    A new leader's first look takes what it finds as it is, without lines.
*/
#ifndef SHOAL_MOVES_H
#define SHOAL_MOVES_H

#include "election/elector.h"
#include "gossip/membership.h"
#include "node/eventlog.h"
#include "rebalance/handoff.h"

#include <stdbool.h>

typedef struct _shoal_moves_watch_t shoal_moves_watch_t;

shoal_moves_watch_t *shoal_moves_watch_new (void);
void shoal_moves_watch_destroy (shoal_moves_watch_t **self_p);

//  Looks at the assignment handoff last published (NULL: this node does
//  not act as leader), once per version: writes a `move` line to events for
//  each task whose active was revoked or granted since the last look. self
//  is this node (leaving: it leaves); the elector (NULL: none) tells which
//  members said they leave while still in the view. Without events (NULL)
//  it follows nothing.
void shoal_moves_watch_update (shoal_moves_watch_t *self, const shoal_handoff_t *handoff,
                               const shoal_membership_t *membership, const shoal_elector_t *elector,
                               const shoal_id_t *self_id, bool leaving, shoal_eventlog_t *events);

#endif

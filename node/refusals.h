/*  node/refusals.h: who sends this node messages it cannot open, told at
    most once a minute per sender.

    A node that holds another key than its cluster (or none, or one where
    the cluster has none) is heard by the cluster as envelopes refused at
    the door: the metrics count them (shoal_auth_failures_total), and this
    table turns them into lines an operator reads, naming the sender's
    address and why, without letting a sender flood the log: the first
    refusal of a sender is told at once, later ones are counted and told,
    with their count, once its minute is over. A table of fixed size keeps
    the senders; when it is full, a new sender's refusals are counted
    together as "other senders".

    Time is an input (now_ms); not thread-safe: the node's actor owns it.
*/
#ifndef SHOAL_REFUSALS_H
#define SHOAL_REFUSALS_H

#include "wire/envelope.h"
#include "wire/wire.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SHOAL_REFUSALS_PERIOD_MS 60000 //  a sender is told at most this often
#define SHOAL_REFUSALS_SENDERS   64    //  senders told apart

typedef struct _shoal_refusals_t shoal_refusals_t;

shoal_refusals_t *shoal_refusals_new (void);
void shoal_refusals_destroy (shoal_refusals_t **self_p);

//  True for the reasons this table tells of: an envelope that did not
//  authenticate (another key, a forgery, plaintext where a key is set,
//  sealed where none is). Replays and the like are the network's own.
bool shoal_refusals_told (shoal_open_result_t reason);

//  Counts a refusal for reason from sender ("" when unknown) at now_ms.
//  Returns true with the line to tell in text when it is due now; false
//  when it is only counted (or reason is not one told of).
bool shoal_refusals_add (shoal_refusals_t *self, uint64_t now_ms, const char *sender,
                         shoal_open_result_t reason, char *text, size_t text_size);

#endif

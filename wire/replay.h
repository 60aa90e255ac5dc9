/*  wire/replay.h: which envelopes a node has already accepted.

    For every sender and purpose the table keeps the sender's life (see envelope.h), the
    highest sequence number accepted and a bitmap of the SHOAL_REPLAY_WINDOW
    numbers below it, as IPsec and WireGuard do. An envelope is fresh when its
    life is newer, or when its number is new and inside the window;
    anything older is stale and anything seen is a replay. Reordering inside
    the window loses nothing.

    Only envelopes that passed authentication are recorded (check, then open,
    then commit), so a forger cannot fill the table. The table holds at most
    capacity windows, one per (sender, purpose) pair; when full, the window
    committed to least recently is forgotten and counted in evictions. An
    evicted sender's old envelopes would be accepted once more, so size the
    table above the number of windows a node needs: the cluster's size for
    each purpose its opener serves.
*/
#ifndef SHOAL_REPLAY_H
#define SHOAL_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#define SHOAL_REPLAY_WINDOW 256

typedef enum {
    SHOAL_REPLAY_FRESH = 0,
    SHOAL_REPLAY_SEEN = 1,  //  this very envelope was accepted before
    SHOAL_REPLAY_STALE = 2, //  an older life, or below the window
} shoal_replay_verdict_t;

typedef struct _shoal_replay_t shoal_replay_t;

//  Returns NULL when capacity is 0 or memory is short.
shoal_replay_t *shoal_replay_new (size_t capacity);

void shoal_replay_destroy (shoal_replay_t **self_p);

//  Says whether an envelope would be fresh, without recording it.
shoal_replay_verdict_t shoal_replay_check (const shoal_replay_t *self, const uint8_t sender[16],
                                           uint8_t purpose, uint64_t life, uint64_t seq);

//  Records an envelope that was fresh and authentic. Returns the verdict
//  check would give; records only when it is FRESH.
shoal_replay_verdict_t shoal_replay_commit (shoal_replay_t *self, const uint8_t sender[16],
                                            uint8_t purpose, uint64_t life, uint64_t seq);

//  Senders forgotten to make room so far.
uint64_t shoal_replay_evictions (const shoal_replay_t *self);

#endif

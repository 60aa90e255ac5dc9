/*  tools/drain.h: `shoal drain`'s wait for the node to hold nothing. */
#ifndef SHOAL_DRAIN_H
#define SHOAL_DRAIN_H

#include "wire/keyring.h"
#include "wire/wire.h"

#include <stdbool.h>
#include <stdint.h>

//  Exit statuses beside 0 (drained).
#define SHOAL_DRAIN_FAILED    1
#define SHOAL_DRAIN_TIMED_OUT 4

typedef struct {
    const char *endpoint;
    const shoal_keyring_t *keyring;
    const char *node;    //  the name the command line gave, or ""
    uint64_t timeout_ms; //  for each call
    uint64_t wait_ms;    //  for the whole drain
    bool leave;          //  ask the node to leave once it holds nothing
    bool json;
} shoal_drain_t;

//  Follows a drain the node accepted (first: its answer, with the node
//  alone in members and its own tasks): prints progress, and returns 0
//  once the node holds nothing (and left, with leave), or an exit status.
int shoal_drain_follow (const shoal_drain_t *drain, const shoal_control_rep_t *first);

#endif

/*  rebalance/pair_count.h: a count per (a, b) pair, for the pairs in use.

    The assignor keeps, per job and node, how many of the job's tasks the
    node holds. A jobs x nodes table would be quadratic in the worst case
    (every task its own job), so the counts live in an open-addressing hash
    table that holds only the pairs that have been counted.
*/
#ifndef SHOAL_PAIR_COUNT_H
#define SHOAL_PAIR_COUNT_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t *keys; //  UINT64_MAX: empty
    uint32_t *counts;
    size_t size; //  a power of two
    size_t used;
} shoal_pair_count_t;

//  Makes room for about expected pairs. Returns 0, or -1 without memory.
int shoal_pair_count_init (shoal_pair_count_t *self, size_t expected);

void shoal_pair_count_release (shoal_pair_count_t *self);

//  The count of (a, b); 0 for a pair never counted.
uint32_t shoal_pair_count_get (const shoal_pair_count_t *self, uint32_t a, uint32_t b);

//  Adds delta to the count of (a, b), which must not go below 0. Returns
//  0, or -1 without memory (the count is then unchanged).
int shoal_pair_count_add (shoal_pair_count_t *self, uint32_t a, uint32_t b, int32_t delta);

#endif

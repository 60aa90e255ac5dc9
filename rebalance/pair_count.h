/*  rebalance/pair_count.h: a count per (a, b) pair.

    The assignor keeps, per job and node, how many of the job's tasks the
    node holds. A jobs x nodes table would be quadratic in the worst case
    (every task its own job), so when the table would be larger than a few
    entries per expected pair the counts live in an open-addressing hash
    table that holds only the pairs that have been counted. Otherwise a
    plain table is faster (no hashing, fewer cache misses).
*/
#ifndef SHOAL_PAIR_COUNT_H
#define SHOAL_PAIR_COUNT_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t *keys; //  UINT64_MAX: empty; NULL: counts is a plain table
    uint32_t *counts;
    size_t size; //  of the hash table, a power of two
    size_t used;
    uint32_t columns; //  of the plain table
} shoal_pair_count_t;

//  Counts pairs (a, b) with a < rows and b < columns, of which about
//  expected will be in use. Returns 0, or -1 without memory.
int shoal_pair_count_init (shoal_pair_count_t *self, uint32_t rows, uint32_t columns,
                           size_t expected);

void shoal_pair_count_release (shoal_pair_count_t *self);

//  The count of (a, b); 0 for a pair never counted.
uint32_t shoal_pair_count_get (const shoal_pair_count_t *self, uint32_t a, uint32_t b);

//  Adds delta to the count of (a, b), which must not go below 0. Returns
//  0, or -1 without memory (the count is then unchanged).
int shoal_pair_count_add (shoal_pair_count_t *self, uint32_t a, uint32_t b, int32_t delta);

#endif

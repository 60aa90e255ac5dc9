/*  wire/ids.h: comparing node ids, and bisecting sorted tables.

    Every core keeps its tables sorted (by id or by name) and looks them up
    by bisection; this is the one copy of both, shared by the membership,
    election and rebalance cores. Pure: no allocation, no I/O, no clock.
*/
#ifndef SHOAL_IDS_H
#define SHOAL_IDS_H

#include "wire/wire.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

static inline bool
shoal_id_equal (const shoal_id_t *a, const shoal_id_t *b)
{
    return memcmp (a->bytes, b->bytes, SHOAL_ID_SIZE) == 0;
}

//  The order of ids: their bytes, as memcmp orders them.
static inline int
shoal_id_compare (const shoal_id_t *a, const shoal_id_t *b)
{
    return memcmp (a->bytes, b->bytes, SHOAL_ID_SIZE);
}

//  The same order for qsort and bsearch, over ids or over records that
//  begin with one.
static inline int
shoal_id_order (const void *a, const void *b)
{
    return shoal_id_compare ((const shoal_id_t *) a, (const shoal_id_t *) b);
}

//  The index of the first of count elements of size bytes at base that
//  does not order before key (compare (element, key) >= 0): where key is,
//  or where it would go. The elements must be sorted in that order.
static inline size_t
shoal_lower_bound (const void *base, size_t count, size_t size, const void *key,
                   int (*compare) (const void *element, const void *key))
{
    size_t low = 0, high = count;
    while (low < high) {
        size_t mid = low + (high - low) / 2;
        if (compare ((const char *) base + mid * size, key) < 0)
            low = mid + 1;
        else
            high = mid;
    }
    return low;
}

//  Whether the count ids at ids, sorted by shoal_id_order, hold id.
static inline bool
shoal_ids_contain (const shoal_id_t *ids, size_t count, const shoal_id_t *id)
{
    size_t at = shoal_lower_bound (ids, count, sizeof *ids, id, shoal_id_order);
    return at < count && shoal_id_equal (&ids[at], id);
}

#endif

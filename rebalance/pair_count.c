/*  rebalance/pair_count.c: a count per (a, b) pair, for the pairs in use.
 */
#include "rebalance/pair_count.h"

#include <stdlib.h>

#define S_EMPTY UINT64_MAX

static uint64_t
s_key (uint32_t a, uint32_t b)
{
    return (uint64_t) a << 32 | b;
}

//  A mixing step of splitmix64, so that neighbouring pairs spread out.
static size_t
s_slot (const shoal_pair_count_t *self, uint64_t key)
{
    key ^= key >> 30;
    key *= 0xbf58476d1ce4e5b9ULL;
    key ^= key >> 27;
    key *= 0x94d049bb133111ebULL;
    key ^= key >> 31;
    return (size_t) key & (self->size - 1);
}

static size_t
s_find (const shoal_pair_count_t *self, uint64_t key)
{
    size_t slot = s_slot (self, key);
    while (self->keys[slot] != key && self->keys[slot] != S_EMPTY)
        slot = (slot + 1) & (self->size - 1);
    return slot;
}

static int
s_allocate (shoal_pair_count_t *self, size_t size)
{
    self->keys = malloc (size * sizeof *self->keys);
    self->counts = calloc (size, sizeof *self->counts);
    if (!self->keys || !self->counts) {
        free (self->keys);
        free (self->counts);
        self->keys = NULL;
        self->counts = NULL;
        return -1;
    }
    for (size_t i = 0; i < size; i++)
        self->keys[i] = S_EMPTY;
    self->size = size;
    self->used = 0;
    return 0;
}

int
shoal_pair_count_init (shoal_pair_count_t *self, uint32_t rows, uint32_t columns, size_t expected)
{
    *self = (shoal_pair_count_t){ NULL, NULL, 0, 0, columns };
    if ((uint64_t) rows * columns <= 4 * (uint64_t) expected + 1024) {
        self->counts = calloc ((size_t) rows * columns + 1, sizeof *self->counts);
        return self->counts ? 0 : -1;
    }
    size_t size = 16;
    while (size < 2 * expected && size < SIZE_MAX / 4)
        size *= 2;
    return s_allocate (self, size);
}

void
shoal_pair_count_release (shoal_pair_count_t *self)
{
    free (self->keys);
    free (self->counts);
    *self = (shoal_pair_count_t){ NULL, NULL, 0, 0, 0 };
}

uint32_t
shoal_pair_count_get (const shoal_pair_count_t *self, uint32_t a, uint32_t b)
{
    if (!self->keys)
        return self->counts[(size_t) a * self->columns + b];
    size_t slot = s_find (self, s_key (a, b));
    return self->keys[slot] == S_EMPTY ? 0 : self->counts[slot];
}

//  Doubles the table, keeping every pair; the table stays at most half full.
static int
s_grow (shoal_pair_count_t *self)
{
    shoal_pair_count_t old = *self;
    if (s_allocate (self, 2 * old.size) != 0) {
        *self = old;
        return -1;
    }
    for (size_t i = 0; i < old.size; i++)
        if (old.keys[i] != S_EMPTY) {
            size_t slot = s_find (self, old.keys[i]);
            self->keys[slot] = old.keys[i];
            self->counts[slot] = old.counts[i];
            self->used++;
        }
    shoal_pair_count_release (&old);
    return 0;
}

int
shoal_pair_count_add (shoal_pair_count_t *self, uint32_t a, uint32_t b, int32_t delta)
{
    if (!self->keys) {
        uint32_t *count = &self->counts[(size_t) a * self->columns + b];
        *count = (uint32_t) ((int64_t) *count + delta);
        return 0;
    }
    uint64_t key = s_key (a, b);
    size_t slot = s_find (self, key);
    if (self->keys[slot] == S_EMPTY) {
        if (2 * (self->used + 1) > self->size) {
            if (s_grow (self) != 0)
                return -1;
            slot = s_find (self, key);
        }
        self->keys[slot] = key;
        self->used++;
    }
    self->counts[slot] = (uint32_t) ((int64_t) self->counts[slot] + delta);
    return 0;
}

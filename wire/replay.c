/*  wire/replay.c: which envelopes a node has already accepted.

    An open-addressing hash table with linear probing, at most half full, so
    a lookup touches few slots. Removal (on eviction) shifts the entries that
    follow back into place instead of leaving tombstones.
*/

#include "wire/replay.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define WORDS (SHOAL_REPLAY_WINDOW / 64)

typedef struct {
    bool used;
    uint8_t purpose;
    uint8_t sender[16];
    uint64_t life;
    uint64_t top;         //  highest sequence number accepted
    uint64_t seen[WORDS]; //  bit i: top - i was accepted
    uint64_t last_used;   //  tick of the last commit, for eviction
} s_entry_t;

struct _shoal_replay_t {
    s_entry_t *slots;
    size_t mask;     //  slot count - 1 (a power of two)
    size_t capacity; //  windows held at most
    size_t count;
    uint64_t tick;
    uint64_t evictions;
};

shoal_replay_t *
shoal_replay_new (size_t capacity)
{
    if (capacity == 0 || capacity > (SIZE_MAX / 4) / sizeof (s_entry_t))
        return NULL;
    shoal_replay_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    size_t slots = 2;
    while (slots < capacity * 2)
        slots *= 2;
    self->slots = calloc (slots, sizeof (s_entry_t));
    if (!self->slots) {
        free (self);
        return NULL;
    }
    self->mask = slots - 1;
    self->capacity = capacity;
    return self;
}

void
shoal_replay_destroy (shoal_replay_t **self_p)
{
    if (*self_p) {
        free ((*self_p)->slots);
        free (*self_p);
        *self_p = NULL;
    }
}

//  Sender ids are random, so their first bytes are already a good hash.
static size_t
s_home (const shoal_replay_t *self, const uint8_t sender[16], uint8_t purpose)
{
    uint64_t h;
    memcpy (&h, sender, sizeof h);
    h ^= (uint64_t) purpose * 0x9e3779b97f4a7c15ull;
    h ^= h >> 29;
    return (size_t) h & self->mask;
}

//  The slot holding the sender, or the empty slot where it would go.
static size_t
s_lookup (const shoal_replay_t *self, const uint8_t sender[16], uint8_t purpose)
{
    size_t i = s_home (self, sender, purpose);
    while (self->slots[i].used &&
           (self->slots[i].purpose != purpose || memcmp (self->slots[i].sender, sender, 16)))
        i = (i + 1) & self->mask;
    return i;
}

static shoal_replay_verdict_t
s_verdict (const s_entry_t *entry, uint64_t life, uint64_t seq)
{
    if (!entry->used || life > entry->life || seq > entry->top)
        return life < entry->life ? SHOAL_REPLAY_STALE : SHOAL_REPLAY_FRESH;
    if (life < entry->life)
        return SHOAL_REPLAY_STALE;
    uint64_t back = entry->top - seq;
    if (back >= SHOAL_REPLAY_WINDOW)
        return SHOAL_REPLAY_STALE;
    return (entry->seen[back / 64] >> (back % 64)) & 1 ? SHOAL_REPLAY_SEEN : SHOAL_REPLAY_FRESH;
}

shoal_replay_verdict_t
shoal_replay_check (const shoal_replay_t *self, const uint8_t sender[16], uint8_t purpose,
                    uint64_t life, uint64_t seq)
{
    return s_verdict (&self->slots[s_lookup (self, sender, purpose)], life, seq);
}

//  Moves the window up by shift numbers: bit i becomes bit i + shift.
static void
s_slide (uint64_t seen[WORDS], uint64_t shift)
{
    if (shift >= SHOAL_REPLAY_WINDOW) {
        memset (seen, 0, WORDS * sizeof seen[0]);
        return;
    }
    size_t words = (size_t) (shift / 64);
    unsigned bits = (unsigned) (shift % 64);
    for (size_t i = WORDS; i-- > 0;) {
        uint64_t high = i >= words ? seen[i - words] : 0;
        uint64_t low = i >= words + 1 ? seen[i - words - 1] : 0;
        seen[i] = bits ? (high << bits) | (low >> (64 - bits)) : high;
    }
}

//  Empties slot i and shifts back the entries after it that probed past it.
static void
s_remove (shoal_replay_t *self, size_t i)
{
    size_t hole = i;
    for (size_t j = (i + 1) & self->mask; self->slots[j].used; j = (j + 1) & self->mask) {
        size_t home = s_home (self, self->slots[j].sender, self->slots[j].purpose);
        //  The entry at j may fill the hole if its home is not in (hole, j].
        bool stays = (hole < j) ? (home > hole && home <= j) : (home > hole || home <= j);
        if (!stays) {
            self->slots[hole] = self->slots[j];
            hole = j;
        }
    }
    memset (&self->slots[hole], 0, sizeof self->slots[hole]);
    self->count--;
}

static void
s_evict_oldest (shoal_replay_t *self)
{
    size_t oldest = SIZE_MAX;
    for (size_t i = 0; i <= self->mask; i++)
        if (self->slots[i].used &&
            (oldest == SIZE_MAX || self->slots[i].last_used < self->slots[oldest].last_used))
            oldest = i;
    s_remove (self, oldest);
    self->evictions++;
}

shoal_replay_verdict_t
shoal_replay_commit (shoal_replay_t *self, const uint8_t sender[16], uint8_t purpose, uint64_t life,
                     uint64_t seq)
{
    size_t i = s_lookup (self, sender, purpose);
    shoal_replay_verdict_t verdict = s_verdict (&self->slots[i], life, seq);
    if (verdict != SHOAL_REPLAY_FRESH)
        return verdict;
    if (!self->slots[i].used) {
        if (self->count == self->capacity) {
            s_evict_oldest (self);
            i = s_lookup (self, sender, purpose);
        }
        s_entry_t *entry = &self->slots[i];
        entry->used = true;
        entry->purpose = purpose;
        memcpy (entry->sender, sender, 16);
        entry->life = life;
        entry->top = seq;
        self->count++;
    }
    s_entry_t *entry = &self->slots[i];
    if (life > entry->life) {
        entry->life = life;
        entry->top = seq;
        memset (entry->seen, 0, sizeof entry->seen);
    } else if (seq > entry->top) {
        s_slide (entry->seen, seq - entry->top);
        entry->top = seq;
    }
    uint64_t back = entry->top - seq;
    entry->seen[back / 64] |= 1ull << (back % 64);
    entry->last_used = ++self->tick;
    return SHOAL_REPLAY_FRESH;
}

uint64_t
shoal_replay_evictions (const shoal_replay_t *self)
{
    return self->evictions;
}

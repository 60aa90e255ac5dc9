/*  wire/metapool.c: member metas kept once per content, shared.

    Each meta lives in one block with its header: the chain link, its hash
    and its holder count, then the meta, its label and handle arrays and
    its strings. A put finds the header from the meta's address, so giving
    back costs no lookup but the walk of one short chain to unlink it.
    Chains hang from a power-of-two array that doubles when the pool holds
    more metas than it has chains. Records keep to the same scheme in chains
    of their own, keyed by their fields and their meta's address (a meta of
    this pool is the only copy of its content).
*/

#include "wire/metapool.h"

#include "wire/splitmix.h"

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef struct s_entry {
    struct s_entry *next;
    uint64_t hash;
    size_t holders;
    shoal_meta_t meta; //  then labels, handles and strings
} s_entry_t;

typedef struct s_held {
    struct s_held *next;
    uint64_t hash;
    size_t holders;
    shoal_record_t record;
} s_held_t;

struct _shoal_metapool_t {
    uint64_t key;
    s_entry_t **chains;
    size_t mask;
    size_t count;
    s_held_t **records;
    size_t record_mask;
    size_t record_count;
};

static const char *
s_text (const char *text)
{
    return text ? text : "";
}

static bool
s_text_equal (const char *a, const char *b)
{
    return strcmp (s_text (a), s_text (b)) == 0;
}

bool
shoal_meta_equal (const shoal_meta_t *a, const shoal_meta_t *b)
{
    if (!s_text_equal (a->name, b->name) || !s_text_equal (a->addr, b->addr) ||
        a->life != b->life || a->priority != b->priority || a->capacity != b->capacity ||
        a->slots != b->slots || a->label_count != b->label_count ||
        a->handle_count != b->handle_count || a->cordon != b->cordon)
        return false;
    for (uint32_t i = 0; i < a->label_count; i++)
        if (!s_text_equal (a->labels[i].key, b->labels[i].key) ||
            !s_text_equal (a->labels[i].value, b->labels[i].value))
            return false;
    for (uint32_t i = 0; i < a->handle_count; i++)
        if (!s_text_equal (a->handles[i], b->handles[i]))
            return false;
    return true;
}

//  ---------------------------------------------------------------------
//  The hash: every field folded in, 8 bytes at a time, from a seeded state

static uint64_t
s_mix (uint64_t hash, uint64_t word)
{
    hash = (hash ^ word) * 0xbf58476d1ce4e5b9ull;
    return hash ^ (hash >> 31);
}

static uint64_t
s_mix_text (uint64_t hash, const char *text)
{
    text = s_text (text);
    size_t size = strlen (text), at = 0;
    for (; at + 8 <= size; at += 8) {
        uint64_t word;
        memcpy (&word, text + at, 8);
        hash = s_mix (hash, word);
    }
    uint64_t tail = 0;
    memcpy (&tail, text + at, size - at);
    return s_mix (hash, tail ^ (uint64_t) size << 56);
}

static uint64_t
s_hash (const shoal_metapool_t *self, const shoal_meta_t *meta)
{
    uint64_t hash = s_mix (self->key, meta->life);
    hash = s_mix (hash, (uint64_t) meta->priority << 32 | meta->capacity);
    hash = s_mix (hash, (uint64_t) meta->slots << 32 | meta->label_count);
    hash = s_mix (hash, (uint64_t) meta->cordon << 32 | meta->handle_count);
    hash = s_mix_text (s_mix_text (hash, meta->name), meta->addr);
    for (uint32_t i = 0; i < meta->label_count; i++)
        hash = s_mix_text (s_mix_text (hash, meta->labels[i].key), meta->labels[i].value);
    for (uint32_t i = 0; i < meta->handle_count; i++)
        hash = s_mix_text (hash, meta->handles[i]);
    return hash;
}

//  ---------------------------------------------------------------------
//  Copies

static char *
s_put_text (char **cursor, const char *text)
{
    char *start = *cursor;
    size_t size = strlen (s_text (text)) + 1;
    memcpy (start, s_text (text), size);
    *cursor += size;
    return start;
}

//  A deep copy of source in one block behind a header, NULL strings
//  becoming "".
static s_entry_t *
s_entry_new (const shoal_meta_t *source, uint64_t hash)
{
    size_t size = sizeof (s_entry_t) + source->label_count * sizeof (shoal_label_t) +
                  source->handle_count * sizeof (char *);
    size += strlen (s_text (source->name)) + strlen (s_text (source->addr)) + 2;
    for (uint32_t i = 0; i < source->label_count; i++)
        size +=
            strlen (s_text (source->labels[i].key)) + strlen (s_text (source->labels[i].value)) + 2;
    for (uint32_t i = 0; i < source->handle_count; i++)
        size += strlen (s_text (source->handles[i])) + 1;
    s_entry_t *entry = malloc (size);
    if (!entry)
        return NULL;
    entry->next = NULL;
    entry->hash = hash;
    entry->holders = 1;
    shoal_meta_t *meta = &entry->meta;
    *meta = *source;
    shoal_label_t *labels = (shoal_label_t *) (entry + 1);
    const char **handles = (const char **) (labels + source->label_count);
    char *cursor = (char *) (handles + source->handle_count);
    meta->name = s_put_text (&cursor, source->name);
    meta->addr = s_put_text (&cursor, source->addr);
    for (uint32_t i = 0; i < source->label_count; i++) {
        labels[i].key = s_put_text (&cursor, source->labels[i].key);
        labels[i].value = s_put_text (&cursor, source->labels[i].value);
    }
    for (uint32_t i = 0; i < source->handle_count; i++)
        handles[i] = s_put_text (&cursor, source->handles[i]);
    meta->labels = source->label_count ? labels : NULL;
    meta->handles = source->handle_count ? handles : NULL;
    return entry;
}

//  The entry that holds a meta of the pool.
static s_entry_t *
s_entry_of (shoal_meta_t *meta)
{
    return (s_entry_t *) ((char *) meta - offsetof (s_entry_t, meta));
}

//  ---------------------------------------------------------------------
//  The pool

shoal_metapool_t *
shoal_metapool_new (uint64_t seed)
{
    shoal_metapool_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->key = splitmix_next (&seed);
    self->mask = 15;
    self->chains = calloc (self->mask + 1, sizeof (s_entry_t *));
    self->record_mask = 15;
    self->records = calloc (self->record_mask + 1, sizeof (s_held_t *));
    if (!self->chains || !self->records) {
        free (self->chains);
        free (self->records);
        free (self);
        return NULL;
    }
    return self;
}

void
shoal_metapool_destroy (shoal_metapool_t **self_p)
{
    shoal_metapool_t *self = *self_p;
    if (!self)
        return;
    for (size_t i = 0; i <= self->mask; i++)
        for (s_entry_t *entry = self->chains[i], *next; entry; entry = next) {
            next = entry->next;
            free (entry);
        }
    for (size_t i = 0; i <= self->record_mask; i++)
        for (s_held_t *held = self->records[i], *next; held; held = next) {
            next = held->next;
            free (held);
        }
    free (self->chains);
    free (self->records);
    free (self);
    *self_p = NULL;
}

//  Doubles the chains; when memory is short they stay as they are, only
//  longer.
static void
s_grow (shoal_metapool_t *self)
{
    size_t mask = self->mask * 2 + 1;
    s_entry_t **chains = calloc (mask + 1, sizeof (s_entry_t *));
    if (!chains)
        return;
    for (size_t i = 0; i <= self->mask; i++)
        for (s_entry_t *entry = self->chains[i], *next; entry; entry = next) {
            next = entry->next;
            entry->next = chains[entry->hash & mask];
            chains[entry->hash & mask] = entry;
        }
    free (self->chains);
    self->chains = chains;
    self->mask = mask;
}

shoal_meta_t *
shoal_metapool_get (shoal_metapool_t *self, const shoal_meta_t *meta)
{
    uint64_t hash = s_hash (self, meta);
    for (s_entry_t *entry = self->chains[hash & self->mask]; entry; entry = entry->next)
        if (entry->hash == hash && shoal_meta_equal (&entry->meta, meta)) {
            entry->holders++;
            return &entry->meta;
        }
    s_entry_t *entry = s_entry_new (meta, hash);
    if (!entry)
        return NULL;
    if (self->count > self->mask)
        s_grow (self);
    entry->next = self->chains[hash & self->mask];
    self->chains[hash & self->mask] = entry;
    self->count++;
    return &entry->meta;
}

void
shoal_metapool_put (shoal_metapool_t *self, shoal_meta_t *meta)
{
    s_entry_t *entry = s_entry_of (meta);
    if (--entry->holders > 0)
        return;
    for (s_entry_t **link = &self->chains[entry->hash & self->mask]; *link; link = &(*link)->next)
        if (*link == entry) {
            *link = entry->next;
            break;
        }
    self->count--;
    free (entry);
}

//  ---------------------------------------------------------------------
//  Records

static uint64_t
s_record_hash (const shoal_metapool_t *self, const shoal_record_t *key)
{
    uint64_t words[4];
    memcpy (words, key->node.bytes, SHOAL_ID_SIZE);
    memcpy (words + 2, key->by.bytes, SHOAL_ID_SIZE);
    uint64_t hash = self->key;
    for (size_t i = 0; i < 4; i++)
        hash = s_mix (hash, words[i]);
    hash = s_mix (hash, key->incarnation);
    return s_mix (hash, (uint64_t) (uintptr_t) key->meta ^ (uint64_t) key->state << 56);
}

static bool
s_record_equal (const shoal_record_t *a, const shoal_record_t *b)
{
    return a->incarnation == b->incarnation && a->state == b->state && a->meta == b->meta &&
           memcmp (a->node.bytes, b->node.bytes, SHOAL_ID_SIZE) == 0 &&
           memcmp (a->by.bytes, b->by.bytes, SHOAL_ID_SIZE) == 0;
}

//  As s_grow, for the records' chains.
static void
s_records_grow (shoal_metapool_t *self)
{
    size_t mask = self->record_mask * 2 + 1;
    s_held_t **chains = calloc (mask + 1, sizeof (s_held_t *));
    if (!chains)
        return;
    for (size_t i = 0; i <= self->record_mask; i++)
        for (s_held_t *held = self->records[i], *next; held; held = next) {
            next = held->next;
            held->next = chains[held->hash & mask];
            chains[held->hash & mask] = held;
        }
    free (self->records);
    self->records = chains;
    self->record_mask = mask;
}

shoal_record_t *
shoal_metapool_record (shoal_metapool_t *self, const shoal_record_t *key, bool *made)
{
    assert (key->meta);
    uint64_t hash = s_record_hash (self, key);
    *made = false;
    for (s_held_t *held = self->records[hash & self->record_mask]; held; held = held->next)
        if (held->hash == hash && s_record_equal (&held->record, key)) {
            held->holders++;
            return &held->record;
        }
    s_held_t *held = malloc (sizeof *held);
    if (!held)
        return NULL;
    if (self->record_count > self->record_mask)
        s_records_grow (self);
    *held = (s_held_t){ .next = self->records[hash & self->record_mask],
                        .hash = hash,
                        .holders = 1,
                        .record = { .node = key->node,
                                    .by = key->by,
                                    .incarnation = key->incarnation,
                                    .meta = key->meta,
                                    .state = key->state } };
    s_entry_of (key->meta)->holders++;
    self->records[hash & self->record_mask] = held;
    self->record_count++;
    *made = true;
    return &held->record;
}

void
shoal_metapool_record_put (shoal_metapool_t *self, const shoal_record_t *record)
{
    //  The pool's own record: it may change what it made.
    s_held_t *held = (s_held_t *) ((const char *) record - offsetof (s_held_t, record));
    if (--held->holders > 0)
        return;
    for (s_held_t **link = &self->records[held->hash & self->record_mask]; *link;
         link = &(*link)->next)
        if (*link == held) {
            *link = held->next;
            break;
        }
    self->record_count--;
    shoal_metapool_put (self, held->record.meta);
    free (held);
}

size_t
shoal_metapool_records (const shoal_metapool_t *self)
{
    return self->record_count;
}

size_t
shoal_metapool_size (const shoal_metapool_t *self)
{
    return self->count;
}

/*  wire/metapool.c: member metas kept once per content, shared.

    Each meta lives in one block with its header: the chain link, its hash
    and its holder count, then the meta, its label and handle arrays and
    its strings. A put finds the header from the meta's address, so giving
    back costs no lookup but the walk of one short chain to unlink it.
    Chains hang from a power-of-two array that doubles when the pool holds
    more metas than it has chains.
*/

#include "wire/metapool.h"

#include "wire/splitmix.h"

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

struct _shoal_metapool_t {
    uint64_t key;
    s_entry_t **chains;
    size_t mask;
    size_t count;
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
    if (!self->chains) {
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
    free (self->chains);
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
    s_entry_t *entry = (s_entry_t *) ((char *) meta - offsetof (s_entry_t, meta));
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

size_t
shoal_metapool_size (const shoal_metapool_t *self)
{
    return self->count;
}

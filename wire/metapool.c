/*  wire/metapool.c: member metas kept once per content, shared.

    Each meta lives in one block with its header: the chain link, its hash
    and its holder count, then the meta, its label and handle arrays and
    its strings. A put finds the header from the meta's address, so giving
    back costs no lookup but the walk of one short chain to unlink it.
    Chains hang from a power-of-two array that doubles when the pool holds
    more metas than it has chains. Records keep to the same scheme in a
    table of their own, keyed by their fields and their meta's address (a
    meta of this pool is the only copy of its content): both tables chain
    the same header (s_link_t), so one grows, links and unlinks them.
*/

#include "wire/metapool.h"

#include "wire/splitmix.h"

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

//  What every chained block begins with: a meta's or a record's.
typedef struct s_link {
    struct s_link *next;
    uint64_t hash;
    size_t holders;
} s_link_t;

typedef struct {
    s_link_t link;     //  first: the block's address
    shoal_meta_t meta; //  then labels, handles and strings
} s_entry_t;

typedef struct {
    s_link_t link; //  first: the block's address
    shoal_record_t record;
} s_held_t;

//  Chains of blocks by hash, as many as a power of two.
typedef struct {
    s_link_t **chains;
    size_t mask;
    size_t count;
} s_table_t;

struct _shoal_metapool_t {
    uint64_t key;
    s_table_t metas;
    s_table_t records;
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
    entry->link = (s_link_t){ .hash = hash, .holders = 1 };
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
//  The tables

static int
s_table_init (s_table_t *table)
{
    table->mask = 15;
    table->count = 0;
    table->chains = calloc (table->mask + 1, sizeof (s_link_t *));
    return table->chains ? 0 : -1;
}

//  Frees every block left in the table, and the table.
static void
s_table_free (s_table_t *table)
{
    for (size_t i = 0; table->chains && i <= table->mask; i++)
        for (s_link_t *link = table->chains[i], *next; link; link = next) {
            next = link->next;
            free (link);
        }
    free (table->chains);
}

//  Doubles the chains; when memory is short they stay as they are, only
//  longer.
static void
s_table_grow (s_table_t *table)
{
    size_t mask = table->mask * 2 + 1;
    s_link_t **chains = calloc (mask + 1, sizeof (s_link_t *));
    if (!chains)
        return;
    for (size_t i = 0; i <= table->mask; i++)
        for (s_link_t *link = table->chains[i], *next; link; link = next) {
            next = link->next;
            link->next = chains[link->hash & mask];
            chains[link->hash & mask] = link;
        }
    free (table->chains);
    table->chains = chains;
    table->mask = mask;
}

//  The first block of hash's chain.
static s_link_t *
s_table_chain (const s_table_t *table, uint64_t hash)
{
    return table->chains[hash & table->mask];
}

//  Adds a new block, growing the chains once they hold as many blocks.
static void
s_table_add (s_table_t *table, s_link_t *link)
{
    if (table->count > table->mask)
        s_table_grow (table);
    link->next = table->chains[link->hash & table->mask];
    table->chains[link->hash & table->mask] = link;
    table->count++;
}

//  One holder less; the last one takes the block out of the table.
//  Returns true when it did: the caller frees the block.
static bool
s_table_put (s_table_t *table, s_link_t *block)
{
    assert (block->holders > 0);
    if (--block->holders > 0)
        return false;
    for (s_link_t **link = &table->chains[block->hash & table->mask]; *link; link = &(*link)->next)
        if (*link == block) {
            *link = block->next;
            break;
        }
    table->count--;
    return true;
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
    if (s_table_init (&self->metas) || s_table_init (&self->records)) {
        shoal_metapool_destroy (&self);
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
    s_table_free (&self->metas);
    s_table_free (&self->records);
    free (self);
    *self_p = NULL;
}

shoal_meta_t *
shoal_metapool_get (shoal_metapool_t *self, const shoal_meta_t *meta)
{
    uint64_t hash = s_hash (self, meta);
    for (s_link_t *link = s_table_chain (&self->metas, hash); link; link = link->next) {
        s_entry_t *entry = (s_entry_t *) link;
        if (link->hash == hash && shoal_meta_equal (&entry->meta, meta)) {
            link->holders++;
            return &entry->meta;
        }
    }
    s_entry_t *entry = s_entry_new (meta, hash);
    if (!entry)
        return NULL;
    s_table_add (&self->metas, &entry->link);
    return &entry->meta;
}

void
shoal_metapool_put (shoal_metapool_t *self, shoal_meta_t *meta)
{
    s_entry_t *entry = s_entry_of (meta);
    if (s_table_put (&self->metas, &entry->link))
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

shoal_record_t *
shoal_metapool_record (shoal_metapool_t *self, const shoal_record_t *key, bool *made)
{
    assert (key->meta);
    uint64_t hash = s_record_hash (self, key);
    *made = false;
    for (s_link_t *link = s_table_chain (&self->records, hash); link; link = link->next) {
        s_held_t *held = (s_held_t *) link;
        if (link->hash == hash && s_record_equal (&held->record, key)) {
            link->holders++;
            return &held->record;
        }
    }
    s_held_t *held = malloc (sizeof *held);
    if (!held)
        return NULL;
    *held = (s_held_t){ .link = { .hash = hash, .holders = 1 },
                        .record = { .node = key->node,
                                    .by = key->by,
                                    .incarnation = key->incarnation,
                                    .meta = key->meta,
                                    .state = key->state } };
    s_entry_of (key->meta)->link.holders++;
    s_table_add (&self->records, &held->link);
    *made = true;
    return &held->record;
}

void
shoal_metapool_record_put (shoal_metapool_t *self, const shoal_record_t *record)
{
    //  The pool's own record: it may change what it made.
    s_held_t *held = (s_held_t *) ((const char *) record - offsetof (s_held_t, record));
    if (!s_table_put (&self->records, &held->link))
        return;
    shoal_metapool_put (self, held->record.meta);
    free (held);
}

size_t
shoal_metapool_records (const shoal_metapool_t *self)
{
    return self->records.count;
}

size_t
shoal_metapool_size (const shoal_metapool_t *self)
{
    return self->metas.count;
}

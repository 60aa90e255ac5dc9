/*  wire/metapool.h: member metas and records kept once per content, shared.

    Every membership table holds the meta of every member. A simulator runs
    thousands of tables in one process, so the same meta would be copied
    thousands of times; a pool keeps one immutable copy per content and
    counts its holders. A core without a shared pool uses a pool of its own.
    The same holds for a member's whole record as gossip carries it (id,
    incarnation, state, accuser, meta): every table of a simulator holds
    nearly the same records, so each keeps a pointer to the pool's copy.

    Not thread-safe: share a pool only among cores driven from one thread.
    Pure like the cores: no I/O, no clocks; the seed only keys the table's
    hash, so it changes where entries sit, never what a core does.
*/
#ifndef SHOAL_METAPOOL_H
#define SHOAL_METAPOOL_H

#include "wire/wire.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct _shoal_metapool_t shoal_metapool_t;

//  NULL when memory is short.
shoal_metapool_t *shoal_metapool_new (uint64_t seed);

//  Frees the pool and every meta still in it.
void shoal_metapool_destroy (shoal_metapool_t **self_p);

//  A copy of meta that the caller holds until it puts it back: the pool's
//  copy when one with the same content is held (NULL strings count as ""),
//  a new deep copy otherwise. meta must be within the wire limits (as the
//  decoder and shoal_membership_meta_check ensure). The copy must not be
//  changed. Returns NULL when memory is short.
shoal_meta_t *shoal_metapool_get (shoal_metapool_t *self, const shoal_meta_t *meta);

//  Gives back a copy from shoal_metapool_get; the last holder frees it.
void shoal_metapool_put (shoal_metapool_t *self, shoal_meta_t *meta);

//  A member's record as gossip carries it, and what its holders derive from
//  it once: its encoded size, the hash of its canonical form and its digest
//  bucket (the pool leaves those to whoever makes the record, see
//  shoal_metapool_record). Immutable once made.
typedef struct {
    shoal_id_t node;
    shoal_id_t by;
    uint64_t incarnation;
    shoal_meta_t *meta; //  a meta of this pool, held by the record
    uint64_t hash;
    uint16_t size;
    uint8_t state;
    uint8_t bucket;
} shoal_record_t;

//  The pool's record with the content of key (node, by, incarnation, state
//  and meta; meta must be one of this pool's, never NULL), which the caller
//  holds until it puts it back. When no one held it, it is made anew and
//  *made is set: the caller then fills in its hash, size and bucket before
//  anyone else sees it. Returns NULL when memory is short.
shoal_record_t *shoal_metapool_record (shoal_metapool_t *self, const shoal_record_t *key,
                                       bool *made);

//  Gives back a record from shoal_metapool_record; the last holder frees it
//  and puts back its meta.
void shoal_metapool_record_put (shoal_metapool_t *self, const shoal_record_t *record);

//  Distinct records held.
size_t shoal_metapool_records (const shoal_metapool_t *self);

//  Distinct metas held.
size_t shoal_metapool_size (const shoal_metapool_t *self);

//  True when a and b have the same content, NULL strings counting as "".
bool shoal_meta_equal (const shoal_meta_t *a, const shoal_meta_t *b);

#endif

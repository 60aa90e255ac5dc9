/*  tests/test_metapool.c: member metas and records kept once per content.

    The pool must hand out one copy per content, count its holders, free it
    with the last one, and never mix up two metas (or records) that differ in
    any field, through the growth of its table. A record holds its meta.
*/
#include "wire/metapool.h"
#include "tests/test.h"

#include <stdio.h>
#include <string.h>

static void
the_same_content_is_one_copy_until_the_last_holder_puts_it (void)
{
    shoal_metapool_t *pool = shoal_metapool_new (1);
    CHECK (pool);
    shoal_label_t labels[] = { { "zone", "a" }, { "disk", "ssd" } };
    const char *handles[] = { "etl", "web" };
    shoal_meta_t meta = { .name = "n1",
                          .addr = "10.0.0.1:7946",
                          .life = 3,
                          .priority = 2,
                          .capacity = 4,
                          .slots = 8,
                          .label_count = 2,
                          .labels = labels,
                          .handle_count = 2,
                          .handles = handles };
    shoal_meta_t *first = shoal_metapool_get (pool, &meta);
    CHECK (first && first != &meta);
    CHECK (shoal_meta_equal (first, &meta));
    //  A deep copy: the source's strings may go away.
    CHECK (first->name != meta.name && first->labels != labels && first->handles != handles);
    CHECK_STR (first->labels[1].value, "ssd");
    CHECK_STR (first->handles[1], "web");
    //  Equal content from other memory: the same copy.
    char name[] = "n1";
    shoal_meta_t again = meta;
    again.name = name;
    shoal_meta_t *second = shoal_metapool_get (pool, &again);
    CHECK (second == first);
    CHECK_EQ (shoal_metapool_size (pool), 1);
    //  Any field that differs makes another copy.
    shoal_meta_t changes[8];
    for (int i = 0; i < 8; i++)
        changes[i] = meta;
    changes[0].name = "n2";
    changes[1].addr = "10.0.0.1:7947";
    changes[2].life = 4;
    changes[3].priority = 1;
    changes[4].capacity = 5;
    changes[5].slots = 0;
    changes[6].label_count = 1;
    changes[7].handle_count = 1;
    shoal_meta_t *copies[8];
    for (int i = 0; i < 8; i++) {
        copies[i] = shoal_metapool_get (pool, &changes[i]);
        CHECK (copies[i] && copies[i] != first);
        CHECK (shoal_meta_equal (copies[i], &changes[i]));
    }
    CHECK_EQ (shoal_metapool_size (pool), 9);
    //  NULL strings are "".
    shoal_meta_t bare = { .addr = "h:1", .life = 1 },
                 empty = { .name = "", .addr = "h:1", .life = 1 };
    shoal_meta_t *from_null = shoal_metapool_get (pool, &bare);
    CHECK (from_null && shoal_metapool_get (pool, &empty) == from_null);
    CHECK_STR (from_null->name, "");
    CHECK_EQ (shoal_metapool_size (pool), 10);
    //  Held twice, put once: still there.
    shoal_metapool_put (pool, first);
    CHECK_EQ (shoal_metapool_size (pool), 10);
    CHECK (shoal_metapool_get (pool, &meta) == first);
    shoal_metapool_put (pool, first);
    shoal_metapool_put (pool, second);
    CHECK_EQ (shoal_metapool_size (pool), 9);
    shoal_metapool_put (pool, from_null);
    shoal_metapool_put (pool, from_null);
    for (int i = 0; i < 8; i++)
        shoal_metapool_put (pool, copies[i]);
    CHECK_EQ (shoal_metapool_size (pool), 0);
    shoal_metapool_destroy (&pool);
    CHECK (pool == NULL);
}

//  The meta every record of the growth test holds.
static shoal_meta_t *s_record_meta;

//  A hold on the i-th of many metas, or of many records (of s_record_meta);
//  made: the pool held none.
static void *
s_get (shoal_metapool_t *pool, bool records, int i, bool *made)
{
    if (records) {
        shoal_record_t key = { .incarnation = (uint64_t) i, .meta = s_record_meta };
        return shoal_metapool_record (pool, &key, made);
    }
    char name[16];
    snprintf (name, sizeof name, "node-%d", i);
    shoal_meta_t meta = { .name = name, .addr = "sim:1", .life = 1 };
    size_t before = shoal_metapool_size (pool);
    shoal_meta_t *copy = shoal_metapool_get (pool, &meta);
    *made = shoal_metapool_size (pool) > before;
    return copy;
}

static void
s_put (shoal_metapool_t *pool, bool records, void *block)
{
    if (records)
        shoal_metapool_record_put (pool, block);
    else
        shoal_metapool_put (pool, block);
}

static size_t
s_count (const shoal_metapool_t *pool, bool records)
{
    return records ? shoal_metapool_records (pool) : shoal_metapool_size (pool);
}

//  Thousands of metas, or records, through the growth of their chains:
//  each made once and found again, each freed with its last holder; the
//  caller then destroys the pool with blocks left in it.
static void
s_through_growth (shoal_metapool_t *pool, bool records)
{
    enum { S_COUNT = 5000 };
    static void *blocks[S_COUNT];
    size_t before = s_count (pool, records);
    bool made = true, found = true;
    for (int i = 0; i < S_COUNT; i++) {
        blocks[i] = s_get (pool, records, i, &made);
        CHECK (blocks[i] && made);
    }
    CHECK_EQ (s_count (pool, records), before + S_COUNT);
    for (int i = 0; i < S_COUNT; i++)
        found &= s_get (pool, records, i, &made) == blocks[i] && !made;
    CHECK (found);
    for (int i = 0; i < S_COUNT; i++)
        s_put (pool, records, blocks[i]);
    CHECK_EQ (s_count (pool, records), before + S_COUNT);
    for (int i = 0; i < S_COUNT; i += 2)
        s_put (pool, records, blocks[i]);
    CHECK_EQ (s_count (pool, records), before + S_COUNT / 2);
}

static void
many_metas_through_growth (void)
{
    shoal_metapool_t *pool = shoal_metapool_new (7);
    s_through_growth (pool, false);
    shoal_metapool_destroy (&pool);
}

//  A record is one copy per (node, by, incarnation, state, meta); made once,
//  its derived fields as its maker set them; it holds its meta until the
//  last holder of the record puts it back.
static void
records_are_one_copy_per_content_and_hold_their_meta (void)
{
    shoal_metapool_t *pool = shoal_metapool_new (3);
    shoal_meta_t source = { .name = "n1", .addr = "sim:1", .life = 2 };
    shoal_meta_t *meta = shoal_metapool_get (pool, &source);
    CHECK (meta);
    shoal_record_t key = { .incarnation = 5, .state = 1, .meta = meta };
    key.node.bytes[0] = 1;
    key.by.bytes[0] = 2;
    bool made = false;
    shoal_record_t *first = shoal_metapool_record (pool, &key, &made);
    CHECK (first && made);
    CHECK (first->meta == meta && first->incarnation == 5 && first->state == 1);
    first->hash = 77;
    first->size = 40;
    //  The meta is the record's too: the caller's hold can go.
    shoal_metapool_put (pool, meta);
    CHECK_EQ (shoal_metapool_size (pool), 1);
    shoal_record_t *second = shoal_metapool_record (pool, &key, &made);
    CHECK (second == first && !made && second->hash == 77 && second->size == 40);
    CHECK_EQ (shoal_metapool_records (pool), 1);
    //  Any field that differs makes another record.
    shoal_record_t changes[5];
    for (int i = 0; i < 5; i++)
        changes[i] = key;
    changes[0].node.bytes[15] = 9;
    changes[1].by.bytes[15] = 9;
    changes[2].incarnation = 6;
    changes[3].state = 2;
    shoal_meta_t other_source = { .name = "n1", .addr = "sim:1", .life = 3 };
    changes[4].meta = shoal_metapool_get (pool, &other_source);
    CHECK (changes[4].meta);
    shoal_record_t *others[5];
    for (int i = 0; i < 5; i++) {
        others[i] = shoal_metapool_record (pool, &changes[i], &made);
        CHECK (others[i] && made && others[i] != first);
    }
    CHECK_EQ (shoal_metapool_records (pool), 6);
    shoal_metapool_put (pool, changes[4].meta);
    for (int i = 0; i < 5; i++)
        shoal_metapool_record_put (pool, others[i]);
    CHECK_EQ (shoal_metapool_records (pool), 1);
    CHECK_EQ (shoal_metapool_size (pool), 1);
    //  Held twice: the first put keeps it, the last frees it and its meta.
    shoal_metapool_record_put (pool, first);
    CHECK_EQ (shoal_metapool_records (pool), 1);
    shoal_metapool_record_put (pool, second);
    CHECK_EQ (shoal_metapool_records (pool), 0);
    CHECK_EQ (shoal_metapool_size (pool), 0);
    shoal_metapool_destroy (&pool);
}

static void
many_records_through_growth (void)
{
    shoal_metapool_t *pool = shoal_metapool_new (9);
    shoal_meta_t source = { .name = "n", .addr = "sim:1", .life = 1 };
    s_record_meta = shoal_metapool_get (pool, &source);
    CHECK (s_record_meta);
    s_through_growth (pool, true);
    //  The records left hold their meta.
    shoal_metapool_put (pool, s_record_meta);
    CHECK_EQ (shoal_metapool_size (pool), 1);
    shoal_metapool_destroy (&pool);
}

int
main (void)
{
    RUN (the_same_content_is_one_copy_until_the_last_holder_puts_it);
    RUN (many_metas_through_growth);
    RUN (records_are_one_copy_per_content_and_hold_their_meta);
    RUN (many_records_through_growth);
    return TEST_DONE ();
}

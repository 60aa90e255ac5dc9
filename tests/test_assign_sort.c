/*  tests/test_assign_sort.c: the assignor's sort of ids.

    The assignor sorts nodes and tasks by id with a sort of its own (an
    introsort on the ids' first 12 bytes, falling back to heapsort), which
    must give the order of a stable sort by strcmp. Its heapsort runs only
    on inputs that defeat the pivots, so this test includes the source of
    rebalance/assignor.c to call the sort directly, with any depth. The
    library's copy is not linked: this file defines every symbol of it.
*/

#include "../rebalance/assignor.c"
#include "tests/test.h"

#include <stdio.h>

//  An item that begins with its name, as nodes and tasks do, and its
//  first position.
typedef struct {
    const char *name;
    size_t first;
} t_item_t;

static int
t_stable_cmp (const void *a, const void *b)
{
    const t_item_t *x = *(const t_item_t *const *) a, *y = *(const t_item_t *const *) b;
    int c = strcmp (x->name, y->name);
    return c ? c : x->first < y->first ? -1 : x->first > y->first;
}

static uint64_t
t_next (uint64_t *state)
{
    *state = *state * 6364136223846793005u + 1442695040888963407u;
    return *state >> 33;
}

//  count names of kind: random bytes of random lengths around the 8- and
//  12-byte boundaries, over a small alphabet (so that many share
//  prefixes and some are equal), or bytes above 0x7F.
static void
t_names (char (*names)[24], size_t count, int kind, uint64_t seed)
{
    uint64_t state = seed;
    for (size_t i = 0; i < count; i++) {
        size_t length = 1 + t_next (&state) % 20;
        for (size_t k = 0; k < length; k++) {
            uint64_t r = t_next (&state);
            names[i][k] = kind == 0   ? (char) ('a' + r % 3)
                          : kind == 1 ? (char) (0x7E + r % 4)
                                      : (char) (k < 11 ? 'x' : 'a' + r % 2);
        }
        names[i][length] = 0;
    }
}

//  Sorts with s_sort_by_name (or, with depth 0, s_named_sort's heapsort
//  alone) and checks the order against qsort's of (name, first position).
static bool
t_sorts_stably (size_t count, int kind, uint64_t seed, bool heapsort)
{
    char (*names)[24] = calloc (count ? count : 1, sizeof *names);
    t_item_t *item = calloc (count ? count : 1, sizeof *item);
    const void **sorted = calloc (count ? count : 1, sizeof *sorted);
    const void **expected = calloc (count ? count : 1, sizeof *expected);
    CHECK (names && item && sorted && expected);
    t_names (names, count, kind, seed);
    //  Some runs already in order or reversed, which bad pivots meet.
    if (seed % 3 == 1)
        qsort (names, count, sizeof *names, (int (*) (const void *, const void *)) strcmp);
    for (size_t i = 0; i < count; i++) {
        item[i] = (t_item_t){ names[seed % 3 == 2 ? count - 1 - i : i], i };
        sorted[i] = expected[i] = &item[i];
    }
    qsort (expected, count, sizeof *expected, t_stable_cmp);
    if (!heapsort) {
        s_named_t *named = calloc (count ? count : 1, sizeof *named);
        CHECK (named != NULL);
        s_sort_by_name (sorted, count, named);
        free (named);
    } else {
        s_named_t *named = calloc (count ? count : 1, sizeof *named);
        CHECK (named != NULL);
        for (size_t i = 0; i < count; i++) {
            const unsigned char *name = (const unsigned char *) item[i].name;
            int k = 0;
            for (; k < 8 && name[k]; k++)
                named[i].high |= (uint64_t) name[k] << (8 * (7 - k));
            for (; k < 12 && name[k]; k++)
                named[i].low |= (uint32_t) name[k] << (8 * (11 - k));
            named[i].at = (uint32_t) i;
        }
        s_named_sort (named, count, (const void *const *) sorted, 0);
        for (size_t i = 0; i < count; i++)
            sorted[i] = &item[named[i].at];
        free (named);
    }
    bool same = memcmp (sorted, expected, count * sizeof *sorted) == 0;
    free (names);
    free (item);
    free (sorted);
    free (expected);
    return same;
}

static void
ids_sort_stably_as_strcmp_orders_them (void)
{
    static const size_t counts[] = { 0, 1, 2, 3, 16, 17, 100, 1000, 20000 };
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
        for (int kind = 0; kind < 3; kind++)
            for (uint64_t seed = 0; seed < 3; seed++)
                CHECK (t_sorts_stably (counts[c], kind, seed, false));
}

static void
heapsort_alone_sorts_stably_too (void)
{
    static const size_t counts[] = { 0, 1, 2, 17, 1000, 5000 };
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
        for (int kind = 0; kind < 3; kind++)
            for (uint64_t seed = 0; seed < 3; seed++)
                CHECK (t_sorts_stably (counts[c], kind, seed, true));
}

//  A node given twice, once with capacity 0: the error names what the
//  first order meets first, whatever the sort.
static void
of_equal_ids_the_first_given_comes_first (void)
{
    shoal_assign_node_t node[2] = { { .id = "twelve-bytes", .capacity = 0, .handles_all = true },
                                    { .id = "twelve-bytes", .capacity = 1, .handles_all = true } };
    shoal_assign_input_t input = { .config = { .max_warmups = 2 }, .node_count = 2, .nodes = node };
    shoal_assign_output_t output;
    char why[200];
    CHECK_EQ (shoal_assign (&input, &output, why, sizeof why), -1);
    CHECK (strstr (why, "capacity 0") != NULL);
    node[0].capacity = 1, node[1].capacity = 0;
    CHECK_EQ (shoal_assign (&input, &output, why, sizeof why), -1);
    CHECK (strstr (why, "given twice") != NULL);
}

int
main (void)
{
    RUN (ids_sort_stably_as_strcmp_orders_them);
    RUN (heapsort_alone_sorts_stably_too);
    RUN (of_equal_ids_the_first_given_comes_first);
    return TEST_DONE ();
}

/*  tests/test_pair_count.c: a count per (a, b) pair.

    The assignor counts each job's tasks per node with it. Both forms, the
    plain table for small grids and the hash table for large ones, must
    count like a reference array, through growth and through counts that
    go back to zero.
*/
#include "rebalance/pair_count.h"
#include <stdbool.h>
#include "tests/test.h"
#include "wire/splitmix.h"

#include <stdlib.h>

//  Random adds and removals on a rows x columns grid, checked against a
//  plain array after every step; expected decides the table's form.
static void
s_check_counts (uint32_t rows, uint32_t columns, size_t expected, bool hashed)
{
    shoal_pair_count_t counts;
    CHECK_EQ (shoal_pair_count_init (&counts, rows, columns, expected), 0);
    CHECK_EQ (counts.keys != NULL, hashed);
    //  The pairs in use: a few rows and columns spread over the grid.
    enum { S_ROWS = 40, S_COLUMNS = 50 };
    uint32_t row[S_ROWS], column[S_COLUMNS], reference[S_ROWS][S_COLUMNS] = { { 0 } };
    uint64_t state = rows ^ ((uint64_t) columns << 20);
    for (int i = 0; i < S_ROWS; i++)
        row[i] = (uint32_t) (i * (uint64_t) rows / S_ROWS);
    for (int i = 0; i < S_COLUMNS; i++)
        column[i] = (uint32_t) (i * (uint64_t) columns / S_COLUMNS);
    bool same = true;
    for (int step = 0; step < 20000; step++) {
        int r = (int) (splitmix_next (&state) % S_ROWS),
            c = (int) (splitmix_next (&state) % S_COLUMNS);
        int32_t delta = reference[r][c] > 0 && splitmix_next (&state) % 3 == 0 ? -1 : 1;
        CHECK_EQ (shoal_pair_count_add (&counts, row[r], column[c], delta), 0);
        reference[r][c] = (uint32_t) ((int32_t) reference[r][c] + delta);
        same &= shoal_pair_count_get (&counts, row[r], column[c]) == reference[r][c];
    }
    for (int r = 0; r < S_ROWS; r++)
        for (int c = 0; c < S_COLUMNS; c++)
            same &= shoal_pair_count_get (&counts, row[r], column[c]) == reference[r][c];
    CHECK (same);
    //  A pair never counted reads 0 (the used rows and columns stop short
    //  of the last ones).
    CHECK_EQ (shoal_pair_count_get (&counts, rows - 1, columns - 1), 0);
    shoal_pair_count_release (&counts);
}

static void
small_grid_counts_in_a_plain_table (void)
{
    s_check_counts (100, 1000, 100000, false);
}

static void
large_grid_counts_in_a_hash_table_that_grows (void)
{
    //  100,000 jobs x 1,000 nodes for 16 expected pairs: the table starts
    //  small and must grow past 2,000 pairs in use.
    s_check_counts (100000, 1000, 16, true);
}

int
main (void)
{
    RUN (small_grid_counts_in_a_plain_table);
    RUN (large_grid_counts_in_a_hash_table_that_grows);
    return TEST_DONE ();
}

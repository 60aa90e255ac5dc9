/*  tests/test_node_heap.c: nodes ordered by load per unit of capacity.

    The assignor trusts the heap to name the lightest and heaviest node and
    to walk the nodes in order, and to give that order as an array; these
    tests hold it to that against a plain sort, through random load
    changes.
*/
#include "rebalance/node_heap.h"
#include "tests/test.h"
#include "wire/splitmix.h"

#include <stdlib.h>

#define S_NODES 97

static uint64_t s_load[S_NODES];
static uint32_t s_capacity[S_NODES];
static bool s_heaviest_first;

//  The order the heap promises: by load / capacity, ties to the lower index.
static int
s_expected_cmp (const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;
    unsigned __int128 lx = (unsigned __int128) s_load[x] * s_capacity[y];
    unsigned __int128 ly = (unsigned __int128) s_load[y] * s_capacity[x];
    if (lx != ly)
        return (lx < ly) != s_heaviest_first ? -1 : 1;
    return x < y ? -1 : 1;
}

//  Walks the whole heap and CHECKs that it visits every node once, in
//  the promised order.
static void
s_check_walk (const shoal_node_heap_t *heap)
{
    uint32_t expected[S_NODES], frontier[S_NODES + 1];
    for (uint32_t n = 0; n < S_NODES; n++)
        expected[n] = n;
    s_heaviest_first = heap->heaviest_first;
    qsort (expected, S_NODES, sizeof (uint32_t), s_expected_cmp);
    CHECK_EQ (shoal_node_heap_first (heap), expected[0]);
    shoal_node_walk_t walk;
    shoal_node_walk_start (&walk, heap, frontier);
    uint32_t visited = 0, node;
    bool in_order = true;
    while ((node = shoal_node_walk_next (&walk)) != SHOAL_NODE_NONE) {
        in_order &= visited < S_NODES && expected[visited] == node;
        visited++;
    }
    CHECK (in_order);
    CHECK_EQ (visited, S_NODES);
}

//  Capacities of 1 to 4, or all the same (3), which the heap compares as
//  loads alone.
static void
s_walk_through_changes (bool same_capacity)
{
    uint64_t state = 7;
    for (uint32_t n = 0; n < S_NODES; n++) {
        s_capacity[n] = same_capacity ? 3 : 1 + (uint32_t) (splitmix_next (&state) % 4);
        s_load[n] = splitmix_next (&state) % 20;
    }
    shoal_node_heap_t lightest, heaviest;
    CHECK_EQ (shoal_node_heap_init (&lightest, S_NODES, s_load, s_capacity, false), 0);
    CHECK_EQ (shoal_node_heap_init (&heaviest, S_NODES, s_load, s_capacity, true), 0);
    CHECK_EQ (lightest.same_capacity, same_capacity);
    s_check_walk (&lightest);
    s_check_walk (&heaviest);
    //  Loads go up and down by small steps, as tasks move, with many ties.
    for (int step = 0; step < 2000; step++) {
        uint32_t n = (uint32_t) (splitmix_next (&state) % S_NODES);
        if (splitmix_next (&state) % 2 || s_load[n] == 0)
            s_load[n] += 1 + splitmix_next (&state) % 3;
        else
            s_load[n]--;
        shoal_node_heap_update (&lightest, n);
        shoal_node_heap_update (&heaviest, n);
        if (step % 100 == 0) {
            s_check_walk (&lightest);
            s_check_walk (&heaviest);
        }
    }
    //  Many changes at once, then one reorder.
    for (uint32_t n = 0; n < S_NODES; n++)
        s_load[n] = splitmix_next (&state) % 5;
    shoal_node_heap_reorder (&lightest);
    shoal_node_heap_reorder (&heaviest);
    s_check_walk (&lightest);
    s_check_walk (&heaviest);
    shoal_node_heap_release (&lightest);
    shoal_node_heap_release (&heaviest);
}

static void
walk_visits_nodes_in_order_through_changes (void)
{
    s_walk_through_changes (false);
    s_walk_through_changes (true);
}

//  CHECKs that the heap's sorted order is the promised one.
static void
s_check_sorted (shoal_node_heap_t *heap)
{
    uint32_t expected[S_NODES];
    for (uint32_t n = 0; n < S_NODES; n++)
        expected[n] = n;
    s_heaviest_first = heap->heaviest_first;
    qsort (expected, S_NODES, sizeof (uint32_t), s_expected_cmp);
    const uint32_t *sorted = shoal_node_heap_sorted (heap);
    bool in_order = true;
    for (uint32_t i = 0; i < S_NODES; i++)
        in_order &= sorted[i] == expected[i];
    CHECK (in_order);
}

//  The sorted order is asked for after one change, after a few (put back
//  in place one by one), after more than SHOAL_NODE_HEAP_CHANGED (sorted
//  among themselves and merged in), after most nodes changed, after a node
//  changed twice, and after a reorder.
static void
s_sorted_through_changes (bool same_capacity)
{
    uint64_t state = 11;
    for (uint32_t n = 0; n < S_NODES; n++) {
        s_capacity[n] = same_capacity ? 2 : 1 + (uint32_t) (splitmix_next (&state) % 3);
        s_load[n] = splitmix_next (&state) % 10;
    }
    shoal_node_heap_t lightest, heaviest;
    CHECK_EQ (shoal_node_heap_init (&lightest, S_NODES, s_load, s_capacity, false), 0);
    CHECK_EQ (shoal_node_heap_init (&heaviest, S_NODES, s_load, s_capacity, true), 0);
    s_check_sorted (&lightest);
    s_check_sorted (&heaviest);
    for (int step = 0; step < 400; step++) {
        uint32_t most = step % 10 == 0 ? 2 * S_NODES : SHOAL_NODE_HEAP_CHANGED + 8;
        uint32_t changes = 1 + (uint32_t) (splitmix_next (&state) % most);
        for (uint32_t k = 0; k < changes; k++) {
            uint32_t n = (uint32_t) (splitmix_next (&state) % S_NODES);
            if (splitmix_next (&state) % 2 || s_load[n] == 0)
                s_load[n] += 1 + splitmix_next (&state) % 2;
            else
                s_load[n]--;
            shoal_node_heap_update (&lightest, n);
            shoal_node_heap_update (&heaviest, n);
        }
        s_check_sorted (&lightest);
        s_check_sorted (&heaviest);
    }
    for (uint32_t n = 0; n < S_NODES; n++)
        s_load[n] = splitmix_next (&state) % 4;
    shoal_node_heap_reorder (&lightest);
    shoal_node_heap_reorder (&heaviest);
    s_check_sorted (&lightest);
    s_check_sorted (&heaviest);
    shoal_node_heap_release (&lightest);
    shoal_node_heap_release (&heaviest);
}

static void
sorted_order_follows_changes (void)
{
    s_sorted_through_changes (false);
    s_sorted_through_changes (true);
}

static void
ratios_compare_exactly (void)
{
    //  2/3 < 1/1 < 4/3, and 2^63 / 2 = 2^62 compares without overflow.
    uint64_t load[4] = { 2, 1, 4, (uint64_t) 1 << 63 };
    uint32_t capacity[4] = { 3, 1, 3, 2 };
    shoal_node_heap_t heap;
    CHECK_EQ (shoal_node_heap_init (&heap, 4, load, capacity, false), 0);
    CHECK (shoal_node_heap_before (&heap, 0, 1));
    CHECK (shoal_node_heap_before (&heap, 1, 2));
    CHECK (shoal_node_heap_before (&heap, 2, 3));
    CHECK (!shoal_node_heap_before (&heap, 3, 2));
    shoal_node_heap_release (&heap);
}

static void
empty_heap_has_no_first (void)
{
    shoal_node_heap_t heap;
    CHECK_EQ (shoal_node_heap_init (&heap, 0, NULL, NULL, false), 0);
    CHECK_EQ (shoal_node_heap_first (&heap), SHOAL_NODE_NONE);
    uint32_t frontier[1];
    shoal_node_walk_t walk;
    shoal_node_walk_start (&walk, &heap, frontier);
    CHECK_EQ (shoal_node_walk_next (&walk), SHOAL_NODE_NONE);
    shoal_node_heap_release (&heap);
}

int
main (void)
{
    RUN (walk_visits_nodes_in_order_through_changes);
    RUN (sorted_order_follows_changes);
    RUN (ratios_compare_exactly);
    RUN (empty_heap_has_no_first);
    return TEST_DONE ();
}

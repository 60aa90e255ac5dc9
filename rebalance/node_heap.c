/*  rebalance/node_heap.c: nodes ordered by load per unit of capacity.
 */
#include "rebalance/node_heap.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

//  The heap's order, inlined where the heap compares (a call was a fifth
//  of the instructions of the cold 100,000-task assignment).
static inline bool
s_before (const shoal_node_heap_t *self, uint32_t a, uint32_t b)
{
    if (self->same_capacity) {
        uint64_t x = self->load[a], y = self->load[b];
        if (x != y)
            return self->heaviest_first ? x > y : x < y;
        return a < b;
    }
    unsigned __int128 x = (unsigned __int128) self->load[a] * self->capacity[b];
    unsigned __int128 y = (unsigned __int128) self->load[b] * self->capacity[a];
    if (x != y)
        return self->heaviest_first ? x > y : x < y;
    return a < b;
}

bool
shoal_node_heap_before (const shoal_node_heap_t *self, uint32_t a, uint32_t b)
{
    return s_before (self, a, b);
}

//  Sifting moves a hole, not the node: each step writes one node, and the
//  node goes in once at the end. The order is strict and total (ties go to
//  the lower index), so the heap comes out as swapping would leave it.
static void
s_sift_up (shoal_node_heap_t *self, uint32_t i)
{
    uint32_t node = self->order[i];
    while (i > 0) {
        uint32_t parent = (i - 1) / 2;
        if (!s_before (self, node, self->order[parent]))
            break;
        self->order[i] = self->order[parent];
        self->at[self->order[i]] = i;
        i = parent;
    }
    self->order[i] = node;
    self->at[node] = i;
}

static void
s_sift_down (shoal_node_heap_t *self, uint32_t i)
{
    uint32_t node = self->order[i];
    for (uint32_t child; (child = 2 * i + 1) < self->size; i = child) {
        if (child + 1 < self->size && s_before (self, self->order[child + 1], self->order[child]))
            child++;
        if (!s_before (self, self->order[child], node))
            break;
        self->order[i] = self->order[child];
        self->at[self->order[i]] = i;
    }
    self->order[i] = node;
    self->at[node] = i;
}

int
shoal_node_heap_init (shoal_node_heap_t *self, uint32_t size, const uint64_t *load,
                      const uint32_t *capacity, bool heaviest_first)
{
    *self = (shoal_node_heap_t){ .load = load,
                                 .capacity = capacity,
                                 .heaviest_first = heaviest_first,
                                 .size = size,
                                 .changed_count = SHOAL_NODE_NONE };
    self->order = calloc (size ? size : 1, sizeof (uint32_t));
    self->at = calloc (size ? size : 1, sizeof (uint32_t));
    self->sorted = calloc (size ? size : 1, sizeof (uint32_t));
    self->changed = calloc (size ? size : 1, sizeof (uint32_t));
    self->is_changed = calloc (size ? size : 1, sizeof (bool));
    self->frontier = calloc ((size_t) size + 1, sizeof (uint32_t));
    if (!self->order || !self->at || !self->sorted || !self->changed || !self->is_changed ||
        !self->frontier) {
        shoal_node_heap_release (self);
        return -1;
    }
    self->same_capacity = true;
    for (uint32_t i = 0; i < size; i++) {
        self->order[i] = self->at[i] = i;
        self->same_capacity &= capacity[i] == capacity[0];
    }
    shoal_node_heap_reorder (self);
    return 0;
}

void
shoal_node_heap_reorder (shoal_node_heap_t *self)
{
    for (uint32_t i = self->size / 2; i-- > 0;)
        s_sift_down (self, i);
    self->changed_count = SHOAL_NODE_NONE;
}

void
shoal_node_heap_release (shoal_node_heap_t *self)
{
    free (self->order);
    free (self->at);
    free (self->sorted);
    free (self->changed);
    free (self->is_changed);
    free (self->frontier);
    self->order = self->at = self->sorted = self->changed = self->frontier = NULL;
    self->is_changed = NULL;
    self->size = 0;
}

void
shoal_node_heap_update (shoal_node_heap_t *self, uint32_t node)
{
    s_sift_up (self, self->at[node]);
    s_sift_down (self, self->at[node]);
    if (self->changed_count == SHOAL_NODE_NONE || self->is_changed[node])
        return;
    self->changed[self->changed_count++] = node;
    self->is_changed[node] = true;
}

uint32_t
shoal_node_heap_first (const shoal_node_heap_t *self)
{
    return self->size ? self->order[0] : SHOAL_NODE_NONE;
}

//  The frontier is itself a binary heap of positions in the node heap,
//  ordered as the nodes at those positions are.
static bool
s_walk_before (const shoal_node_walk_t *walk, uint32_t i, uint32_t k)
{
    const shoal_node_heap_t *heap = walk->heap;
    return s_before (heap, heap->order[walk->frontier[i]], heap->order[walk->frontier[k]]);
}

static void
s_walk_push (shoal_node_walk_t *walk, uint32_t position)
{
    if (position >= walk->heap->size)
        return;
    uint32_t i = walk->count++;
    walk->frontier[i] = position;
    while (i > 0 && s_walk_before (walk, i, (i - 1) / 2)) {
        uint32_t parent = (i - 1) / 2, held = walk->frontier[i];
        walk->frontier[i] = walk->frontier[parent];
        walk->frontier[parent] = held;
        i = parent;
    }
}

void
shoal_node_walk_start (shoal_node_walk_t *walk, const shoal_node_heap_t *self, uint32_t *frontier)
{
    *walk = (shoal_node_walk_t){ self, frontier, 0 };
    s_walk_push (walk, 0);
}

uint32_t
shoal_node_walk_next (shoal_node_walk_t *walk)
{
    if (walk->count == 0)
        return SHOAL_NODE_NONE;
    uint32_t position = walk->frontier[0];
    walk->frontier[0] = walk->frontier[--walk->count];
    for (uint32_t i = 0;;) {
        uint32_t best = i, left = 2 * i + 1, right = 2 * i + 2;
        if (left < walk->count && s_walk_before (walk, left, best))
            best = left;
        if (right < walk->count && s_walk_before (walk, right, best))
            best = right;
        if (best == i)
            break;
        uint32_t held = walk->frontier[i];
        walk->frontier[i] = walk->frontier[best];
        walk->frontier[best] = held;
        i = best;
    }
    s_walk_push (walk, 2 * position + 1);
    s_walk_push (walk, 2 * position + 2);
    return walk->heap->order[position];
}

//  Sorts the count nodes at nodes in the heap's order, by merging; spare
//  has room for count nodes.
static void
s_sort (const shoal_node_heap_t *self, uint32_t *nodes, uint32_t *spare, uint32_t count)
{
    if (count < 2)
        return;
    uint32_t half = count / 2;
    s_sort (self, nodes, spare, half);
    s_sort (self, nodes + half, spare, count - half);
    memcpy (spare, nodes, half * sizeof (uint32_t));
    uint32_t i = 0, k = half, out = 0;
    while (i < half && k < count)
        nodes[out++] = s_before (self, nodes[k], spare[i]) ? nodes[k++] : spare[i++];
    while (i < half)
        nodes[out++] = spare[i++];
}

//  Puts node, taken out of sorted (which holds count nodes, in order),
//  back in its place.
static void
s_sorted_insert (shoal_node_heap_t *self, uint32_t count, uint32_t node)
{
    uint32_t low = 0, high = count;
    while (low < high) {
        uint32_t middle = low + (high - low) / 2;
        if (s_before (self, self->sorted[middle], node))
            low = middle + 1;
        else
            high = middle;
    }
    memmove (self->sorted + low + 1, self->sorted + low, (count - low) * sizeof (uint32_t));
    self->sorted[low] = node;
}

const uint32_t *
shoal_node_heap_sorted (shoal_node_heap_t *self)
{
    if (self->changed_count == SHOAL_NODE_NONE) {
        shoal_node_walk_t walk;
        shoal_node_walk_start (&walk, self, self->frontier);
        for (uint32_t i = 0; i < self->size; i++)
            self->sorted[i] = shoal_node_walk_next (&walk);
        memset (self->is_changed, 0, self->size * sizeof (bool));
    } else if (self->changed_count > 0) {
        //  The nodes that did not change are still in order among
        //  themselves: take the others out, then put each back.
        uint32_t kept = 0;
        for (uint32_t i = 0; i < self->size; i++)
            if (!self->is_changed[self->sorted[i]])
                self->sorted[kept++] = self->sorted[i];
        assert (kept + self->changed_count == self->size);
        uint32_t count = self->changed_count, *changed = self->changed;
        for (uint32_t k = 0; k < count; k++)
            self->is_changed[changed[k]] = false;
        if (count <= SHOAL_NODE_HEAP_CHANGED)
            for (uint32_t k = 0; k < count; k++)
                s_sorted_insert (self, kept++, changed[k]);
        else {
            //  Sorted among themselves, then merged in from the back.
            s_sort (self, changed, self->frontier, count);
            uint32_t out = self->size;
            while (count > 0) {
                if (kept > 0 && s_before (self, changed[count - 1], self->sorted[kept - 1]))
                    self->sorted[--out] = self->sorted[--kept];
                else
                    self->sorted[--out] = changed[--count];
            }
        }
    }
    self->changed_count = 0;
    return self->sorted;
}

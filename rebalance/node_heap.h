/*  rebalance/node_heap.h: nodes ordered by load per unit of capacity.

    The assignor asks two questions many times: which node is the lightest
    (or heaviest) one, and which is the lightest one that passes some test
    (it may hold this task, it has room). A binary heap over the nodes
    answers the first at once and keeps up with load changes in log time.
    A walk answers the second: it visits the nodes in order, lightest (or
    heaviest) first, by a best-first search over the heap that costs log
    time per node visited, so a test that the first node passes costs next
    to nothing.

    Loads are compared as load / capacity exactly; ties go to the lower
    node index. The heap reads the loads and capacities from the caller's
    arrays: after changing load[node], call shoal_node_heap_update.
    Capacities never change after shoal_node_heap_init.

    A caller that walks far into the order many times, with few loads
    changed in between (the assignor's evening), asks for the whole order
    as an array (shoal_node_heap_sorted): it is sorted once, and after
    that only the nodes whose loads changed are put back in their place.
*/
#ifndef SHOAL_NODE_HEAP_H
#define SHOAL_NODE_HEAP_H

#include <stdbool.h>
#include <stdint.h>

#define SHOAL_NODE_NONE UINT32_MAX

typedef struct {
    const uint64_t *load;
    const uint32_t *capacity;
    bool heaviest_first;
    bool same_capacity; //  every node's: loads compare as they are
    uint32_t size;
    uint32_t *order;        //  nodes, in heap order
    uint32_t *at;           //  per node: its position in order
    uint32_t *sorted;       //  every node in order, as of the last shoal_node_heap_sorted
    uint32_t *changed;      //  nodes updated since
    uint32_t changed_count; //  SHOAL_NODE_NONE: all (a reorder), sorted is made anew
    bool *is_changed;       //  per node: it is in changed
    uint32_t *frontier;     //  for the walk that makes sorted anew
} shoal_node_heap_t;

//  How many updated nodes shoal_node_heap_sorted puts back in place one by
//  one; more are sorted among themselves and merged in.
#define SHOAL_NODE_HEAP_CHANGED 16

//  A walk over a heap; its frontier holds at most size + 1 positions.
typedef struct {
    const shoal_node_heap_t *heap;
    uint32_t *frontier;
    uint32_t count;
} shoal_node_walk_t;

//  Orders nodes 0 .. size - 1 by their current loads. Returns 0, or -1
//  when out of memory.
int shoal_node_heap_init (shoal_node_heap_t *self, uint32_t size, const uint64_t *load,
                          const uint32_t *capacity, bool heaviest_first);

void shoal_node_heap_release (shoal_node_heap_t *self);

//  Restores the order after load[node] changed.
void shoal_node_heap_update (shoal_node_heap_t *self, uint32_t node);

//  Restores the order after any number of loads changed, in linear time.
void shoal_node_heap_reorder (shoal_node_heap_t *self);

//  Every node, in the heap's order (the order of a walk). Valid until the
//  next update or reorder.
const uint32_t *shoal_node_heap_sorted (shoal_node_heap_t *self);

//  The lightest (or heaviest) node, or SHOAL_NODE_NONE when there is none.
uint32_t shoal_node_heap_first (const shoal_node_heap_t *self);

//  Whether a comes before b in the heap's order.
bool shoal_node_heap_before (const shoal_node_heap_t *self, uint32_t a, uint32_t b);

//  Starts a walk; frontier has room for self->size + 1 entries. The heap
//  must not change while the walk goes on.
void shoal_node_walk_start (shoal_node_walk_t *walk, const shoal_node_heap_t *self,
                            uint32_t *frontier);

//  The next node of the walk, or SHOAL_NODE_NONE after the last.
uint32_t shoal_node_walk_next (shoal_node_walk_t *walk);

#endif

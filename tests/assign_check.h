/*  tests/assign_check.h: checks one assignment against the assignor's contract.

    The contract (docs/assign.md) lists what every
    output of the assignor must satisfy. What one call can show is checked
    here, from the input and the output alone, with no knowledge of how the
    assignor works: properties 1 to 5, the sort order, the moves count, and
    followup, which is true exactly when learners are warming up (the leader
    computes again when a learner reports, so followup without a learner
    would never be followed up). The unit tests, the randomized convergence
    test and the benchmark all use this one checker. Balance (property 8) is
    measured, not judged: what is balanced enough depends on the weights and
    capacities, which the caller knows.

    The checker reads slots as the contract does: a task may stay unassigned,
    or an active may sit on a node that is not the best caught up, only when
    every better node is full, that is when the task's weight does not fit
    beside the actives that node holds in the output.
*/
#ifndef SHOAL_ASSIGN_CHECK_H
#define SHOAL_ASSIGN_CHECK_H

#include "rebalance/assignor.h"

#include <stdio.h>

//  Checks output against input. Writes one line per violation into report
//  (always NUL-terminated when report_size > 0; lines that do not fit are
//  counted but dropped) and returns how many violations there are: 0 for a
//  valid output. Returns -1 when out of memory.
int shoal_assign_check (const shoal_assign_input_t *input, const shoal_assign_output_t *output,
                        char *report, size_t report_size);

//  How evenly an output spreads the work, as property 8 measures it. Each
//  spread is max - min over the nodes that may take part: a node counts for
//  the active spread when it may hold some task, for the stateful spread when
//  it may hold some stateful task, and for a job's spread when it may hold
//  some task of that job (handles and require; slots are not considered).
typedef struct {
    double active;   //  active weight / capacity
    double stateful; //  stateful active + standby weight / capacity
    uint32_t job;    //  the largest, over jobs, of the spread of a job's active count
} shoal_assign_balance_t;

//  Measures output. Returns 0, or -1 when out of memory.
int shoal_assign_check_balance (const shoal_assign_input_t *input,
                                const shoal_assign_output_t *output,
                                shoal_assign_balance_t *balance);

//  Writes input as the JSON that `shoal assign` reads, on one line, so that a
//  failing case can be replayed with the command.
void shoal_assign_check_dump_input (const shoal_assign_input_t *input, FILE *file);

//  Writes output as `shoal assign` prints it, on one line (nodes of input that
//  hold nothing are left out).
void shoal_assign_check_dump_output (const shoal_assign_output_t *output, FILE *file);

#endif

/*  sim/checkers.h: the invariants shoal-sim checks, apart from the
    scenarios, all through a run.

    Safety: no term goes back, no incarnation goes back, in quorum mode
    never two leaders acting at once nor two with one term, and a dead
    verdict about a node that is up and reachable does not outlast what a
    suspicion may (the node refutes it). And the run itself: a livelock
    (more than SHOAL_SIM_INSTANT_EVENTS_MAX events at one instant) is a
    violation. Each broken invariant is added to the run's violations
    (the first 100).

    Two places run them: sim_check_node, after every event the simulator
    runs at a node (shoal_sim_observe_steps), checks that node's own
    invariants, and is where the cores' own checks of their state belong
    (a membership table of over 256 members is checked after every
    size / 256 events at its node, to bound what checking costs);
    sim_check_step, every 100 simulated ms (every step of sim_run_until),
    runs the checks across nodes, and that node's ones again for every
    node. The observers check what they see as it happens.
*/
#ifndef SHOAL_SIM_CHECKERS_H
#define SHOAL_SIM_CHECKERS_H

#include "sim/scenario.h"

//  Makes the checkers' state for nodes nodes; -1 when memory is short.
int sim_checks_init (sim_checks_t *checks, uint32_t nodes, bool election, bool quorum);

void sim_checks_free (sim_checks_t *checks);

//  The simulator's observers (shoal_sim_observe, shoal_sim_observe_leaders);
//  arg is the run.
void sim_check_member_event (void *arg, uint64_t now_ms, uint32_t observer, uint32_t subject,
                             const shoal_membership_event_t *event);
void sim_check_leader_event (void *arg, uint64_t now_ms, uint32_t node,
                             const shoal_elector_event_t *event);

//  One node's invariants, after every event at it (the simulator's step
//  observer, shoal_sim_observe_steps; arg is the run).
void sim_check_node (void *arg, uint64_t now_ms, uint32_t node);

//  Every node's invariants, now; called after every step of the run.
void sim_check_step (sim_run_t *run);

//  A simulation stopped at a livelock is a violation, told once.
void sim_check_stall (sim_run_t *run);

#endif

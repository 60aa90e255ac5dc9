/*  sim/driver.c: what the scenarios do to the simulated world, shared by
    them: run it on with the invariants checked, crash and heal, find the
    leader, play random faults.
*/
#include "sim/checkers.h"
#include "sim/scenario.h"
#include "wire/splitmix.h"

#include <stdio.h>
#include <string.h>

bool
sim_run_until (sim_run_t *run, uint64_t until_ms, bool (*done) (sim_run_t *run))
{
    while (shoal_sim_now (run->sim) < until_ms) {
        uint64_t step = shoal_sim_now (run->sim) + 100;
        shoal_sim_run (run->sim, step < until_ms ? step : until_ms);
        sim_check_step (run);
        if (done && done (run))
            return true;
    }
    return done ? done (run) : true;
}

void
sim_measure (sim_run_t *run, const char *name, uint64_t value)
{
    json_object_set_new (run->measures, name, json_integer ((json_int_t) value));
}

void
sim_crash (sim_run_t *run, uint32_t n)
{
    shoal_sim_crash (run->sim, n);
    if (n < shoal_sim_size (run->sim)) //  SHOAL_SIM_NONE, when no leader acted
        run->checks.acting[n] = 0;
}

void
sim_crash_leader_tenth (sim_run_t *run, uint32_t leader)
{
    uint32_t nodes = run->options->nodes, others = (nodes - 1) / 10;
    sim_crash (run, leader);
    for (uint32_t crashed = 0; crashed < others;) {
        uint32_t n = (uint32_t) (splitmix_next (&run->random) % nodes);
        if (n != leader && shoal_sim_elector (run->sim, n)) {
            sim_crash (run, n);
            crashed++;
        }
    }
}

void
sim_heal (shoal_sim_t *sim)
{
    shoal_sim_block (sim, 0, 1, false);
    shoal_sim_block (sim, 1, 0, false);
    shoal_sim_block (sim, 2, 0, false);
    shoal_sim_block (sim, 2, 1, false);
    for (uint32_t n = 0; n < shoal_sim_size (sim); n++)
        shoal_sim_set_group (sim, n, 0);
}

uint32_t
sim_acting_leader (sim_run_t *run)
{
    shoal_sim_t *sim = run->sim;
    uint32_t leader = SHOAL_SIM_NONE;
    for (uint32_t n = 0; n < shoal_sim_size (sim); n++) {
        shoal_elector_t *elector = shoal_sim_elector (sim, n);
        if (elector && shoal_elector_acting (elector, shoal_sim_now (sim))) {
            if (leader != SHOAL_SIM_NONE)
                return SHOAL_SIM_NONE;
            leader = n;
        }
    }
    return leader;
}

void
sim_leader_handoff_stats (sim_run_t *run, shoal_handoff_stats_t *stats)
{
    *stats = (shoal_handoff_stats_t){ 0 };
    uint32_t leader = sim_acting_leader (run);
    shoal_handoff_t *handoff =
        leader != SHOAL_SIM_NONE ? shoal_sim_handoff (run->sim, leader) : NULL;
    if (handoff)
        shoal_handoff_stats (handoff, stats);
}

bool
sim_one_leader (sim_run_t *run)
{
    shoal_sim_t *sim = run->sim;
    uint32_t leader = sim_acting_leader (run);
    if (leader == SHOAL_SIM_NONE)
        return false;
    for (uint32_t n = 0; n < shoal_sim_size (sim); n++) {
        shoal_elector_t *elector = shoal_sim_elector (sim, n);
        shoal_id_t id;
        uint64_t term;
        if (elector && n != leader &&
            (shoal_elector_leader (elector, shoal_sim_now (sim), &id, &term) != 0 ||
             shoal_sim_index (&id) != leader))
            return false;
    }
    return true;
}

uint32_t
sim_lost_jobs (sim_run_t *run, char names[][8], const uint32_t *parallelism, const bool *ok,
               uint32_t count)
{
    uint32_t leader = sim_acting_leader (run), lost = 0;
    const shoal_jobspec_t *specs = NULL;
    size_t held_count =
        leader == SHOAL_SIM_NONE ? 0 : shoal_jobs_specs (shoal_sim_jobs (run->sim, leader), &specs);
    for (uint32_t j = 0; j < count; j++) {
        bool held = false;
        for (size_t i = 0; i < held_count && !held; i++)
            held = strcmp (specs[i].name, names[j]) == 0 && specs[i].parallelism == parallelism[j];
        lost += ok[j] && !held;
    }
    return lost;
}

//  A job of 1 to 3 tasks submitted to a random node, answered or not.
static void
s_submit_during (sim_run_t *run, sim_submits_t *submits)
{
    if (!submits || submits->count == SIM_FAULTS_MAX)
        return;
    uint32_t j = submits->count++;
    snprintf (submits->names[j], sizeof submits->names[j], "r%u", j);
    submits->parallelism[j] = 1 + (uint32_t) (splitmix_next (&run->random) % 3);
    shoal_jobspec_t spec = { .name = submits->names[j],
                             .parallelism = submits->parallelism[j],
                             .stateful = splitmix_next (&run->random) & 1,
                             .weight = 1 };
    shoal_control_req_t req = { .op = SHOAL_OP_SUBMIT, .spec = &spec };
    uint32_t node = (uint32_t) (splitmix_next (&run->random) % shoal_sim_size (run->sim));
    submits->refs[j] = shoal_sim_request (run->sim, node, &req);
}

//  Splits the cluster in two at random: each node in group 0 or 1.
static void
s_random_split (shoal_sim_t *sim, uint64_t *random)
{
    for (uint32_t n = 0; n < shoal_sim_size (sim); n++)
        shoal_sim_set_group (sim, n, (uint32_t) (splitmix_next (random) & 1));
}

//  One random fault on victim, held until end (hold ms from now).
static void
s_random_fault (sim_run_t *run, uint32_t victim, uint64_t hold, uint64_t end)
{
    shoal_sim_t *sim = run->sim;
    switch (splitmix_next (&run->random) % (run->options->leaves ? 7 : 6)) {
    case 0: //  a crash, and a restart through another node
        sim_crash (run, victim);
        sim_run_until (run, end, NULL);
        shoal_sim_start (sim, victim, (victim + 1) % run->options->nodes);
        break;
    case 1:
        shoal_sim_pause (sim, victim, hold);
        sim_run_until (run, end, NULL);
        break;
    case 2: //  a split both ways
    case 3: //  a split one way
        s_random_split (sim, &run->random);
        shoal_sim_block (sim, 0, 1, true);
        shoal_sim_block (sim, 1, 0, splitmix_next (&run->random) & 1);
        sim_run_until (run, end, NULL);
        sim_heal (sim);
        break;
    case 4: //  one node cut off
        shoal_sim_set_group (sim, victim, 1);
        shoal_sim_block (sim, 0, 1, true);
        shoal_sim_block (sim, 1, 0, true);
        sim_run_until (run, end, NULL);
        sim_heal (sim);
        break;
    case 5: //  a burst of loss, 5 to 30 %
        shoal_sim_set_loss (sim, (uint32_t) (50000 + splitmix_next (&run->random) % 250000));
        sim_run_until (run, end, NULL);
        shoal_sim_set_loss (sim, run->options->loss_ppm);
        break;
    default: //  a graceful leave; the process ends after the hold (left, or
             //  its leave cut short), and starts again through another node
        shoal_sim_leave (sim, victim);
        sim_run_until (run, end, NULL);
        sim_crash (run, victim);
        shoal_sim_start (sim, victim, (victim + 1) % run->options->nodes);
        break;
    }
}

//  Each fault at a random moment of up to a lease after the last, held for
//  1 s to 4 leases and 4 s; the node a fault strikes is the leader one time
//  in three.
void
sim_random_faults (sim_run_t *run, sim_submits_t *submits)
{
    shoal_sim_t *sim = run->sim;
    uint64_t lease = run->config->elector.lease_ms;
    for (uint32_t f = 0; f < run->options->faults; f++) {
        sim_run_until (run, shoal_sim_now (sim) + splitmix_next (&run->random) % lease, NULL);
        uint32_t leader = sim_acting_leader (run);
        uint32_t victim = (uint32_t) (splitmix_next (&run->random) % run->options->nodes);
        if (leader != SHOAL_SIM_NONE && splitmix_next (&run->random) % 3 == 0)
            victim = leader;
        uint64_t hold = 1000 + splitmix_next (&run->random) % (4 * lease + 4000);
        uint64_t end = shoal_sim_now (sim) + hold;
        s_submit_during (run, submits);
        s_random_fault (run, victim, hold, end);
    }
}

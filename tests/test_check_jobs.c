/*  tests/test_check_jobs.c: shoal_jobs_check, on real states and on states
    broken by hand.

    The check reads the class's own tables, which no input can break unless
    the class has a bug; to show that it finds what it looks for, this test
    includes the source of rebalance/jobs.c and breaks a real state by hand,
    then mends it. The library's copy is not linked: this file defines
    every symbol of it.
*/

#include "../rebalance/jobs.c"
#include "tests/samples.h"
#include "tests/test.h"

//  A node of id 5 that restored two jobs, with four peers and a voter set,
//  told it leads: real states, checked after every input.
static shoal_jobs_t *
t_node (uint64_t *now)
{
    shoal_jobs_config_t config;
    shoal_jobs_config_loopback (&config);
    shoal_jobspec_t specs[] = {
        { .name = "api", .parallelism = 2, .weight = 1, .command = "" },
        { .name = "web", .parallelism = 3, .stateful = true, .weight = 1, .command = "" },
    };
    shoal_jobs_saved_t saved = { 1, 4, 2, specs };
    shoal_id_t id = shoal_sample_index_id (5);
    shoal_jobs_t *jobs = shoal_jobs_new (&config, &id, &saved, *now);
    CHECK (jobs != NULL);
    const char *why = "";
    CHECK_EQ (shoal_jobs_check (jobs, &why), 0);
    shoal_id_t voters[3];
    for (int i = 0; i < 4; i++) {
        shoal_id_t peer = shoal_sample_index_id (i + 6 - (i % 2) * 5);
        if (i < 2)
            voters[i] = peer;
        CHECK_EQ (shoal_jobs_member (jobs, *now, &peer, true), 0);
        CHECK_EQ (shoal_jobs_check (jobs, &why), 0);
    }
    voters[2] = id;
    CHECK_EQ (shoal_jobs_voters (jobs, *now, voters, 3), 0);
    CHECK_EQ (shoal_jobs_check (jobs, &why), 0);
    shoal_jobs_leader (jobs, *now + 1, &id, 2, true);
    CHECK_EQ (shoal_jobs_check (jobs, &why), 0);
    shoal_jobs_tick (jobs, *now + 100);
    CHECK_EQ (shoal_jobs_check (jobs, &why), 0);
    *now += 100;
    return jobs;
}

static void
the_check_passes_on_real_states (void)
{
    uint64_t now = 1000;
    shoal_jobs_t *jobs = t_node (&now);
    CHECK_EQ (jobs->peer_count, 4);
    const shoal_assign_task_t *tasks;
    CHECK_EQ (shoal_jobs_tasks (jobs, &tasks), 5);
    shoal_id_t gone = jobs->peers[0].id;
    CHECK_EQ (shoal_jobs_member (jobs, now + 1, &gone, false), 0);
    CHECK_EQ (shoal_jobs_check (jobs, NULL), 0);
    shoal_jobs_destroy (&jobs);
}

static void
the_check_finds_broken_states (void)
{
    uint64_t now = 1000;
    shoal_jobs_t *jobs = t_node (&now);
    const char *why = NULL;
    CHECK_EQ (shoal_jobs_check (NULL, &why), -1);
    CHECK_CONTAINS (why, "NULL");

    s_peer_t first = jobs->peers[0];
    jobs->peers[0] = jobs->peers[1];
    jobs->peers[1] = first;
    CHECK_EQ (shoal_jobs_check (jobs, &why), -1);
    CHECK_CONTAINS (why, "peers not sorted");
    jobs->peers[1] = jobs->peers[0];
    jobs->peers[0] = first;

    shoal_id_t peer = jobs->peers[0].id;
    jobs->peers[0].id = jobs->id;
    CHECK_EQ (shoal_jobs_check (jobs, &why), -1);
    CHECK_CONTAINS (why, "this node among its peers");
    jobs->peers[0].id = peer;

    shoal_jobspec_t spec = jobs->held.specs[0];
    jobs->held.specs[0] = jobs->held.specs[1];
    jobs->held.specs[1] = spec;
    CHECK_EQ (shoal_jobs_check (jobs, &why), -1);
    CHECK_CONTAINS (why, "specs not sorted");
    jobs->held.specs[1] = jobs->held.specs[0];
    jobs->held.specs[0] = spec;

    size_t pending = jobs->pending_count;
    jobs->pending_count = jobs->config.max_pending + 1;
    CHECK_EQ (shoal_jobs_check (jobs, &why), -1);
    CHECK_CONTAINS (why, "max_pending");
    jobs->pending_count = pending;
    CHECK_EQ (shoal_jobs_check (jobs, &why), 0);
    shoal_jobs_destroy (&jobs);
}

int
main (void)
{
#ifdef SHOAL_NO_CHECKS
    puts ("skipped: SHOAL_NO_CHECKS compiles the checks out");
    return 77;
#endif
    RUN (the_check_passes_on_real_states);
    RUN (the_check_finds_broken_states);
    return TEST_DONE ();
}

/*  tests/test_check_tasks.c: shoal_tasks_check, on real states and on
    states broken by hand.

    The check reads the node's own task table, which no input can break
    unless the class has a bug; to show that it finds what it looks for,
    this test includes the source of rebalance/tasks.c and breaks a real
    state by hand, then mends it. The library's copy is not linked: this
    file defines every symbol of it.
*/

#include "../rebalance/tasks.c"
#include "tests/samples.h"
#include "tests/test.h"

//  A node given three tasks by its leader (two actives, one learner),
//  each reported running: real states, checked after every input.
static shoal_tasks_t *
t_running (uint64_t *now)
{
    shoal_tasks_config_t config;
    shoal_tasks_config_loopback (&config);
    shoal_id_t id = shoal_sample_index_id (1), leader = shoal_sample_index_id (2);
    shoal_tasks_t *tasks = shoal_tasks_new (&config, &id, *now);
    CHECK (tasks != NULL);
    const char *why = "";
    CHECK_EQ (shoal_tasks_check (tasks, &why), 0);
    shoal_tasks_leader (tasks, *now, &leader, 1);
    CHECK_EQ (shoal_tasks_check (tasks, &why), 0);
    shoal_placement_t placements[] = {
        { "web/0", id, SHOAL_ROLE_ACTIVE, { 1, 1 } },
        { "web/1", id, SHOAL_ROLE_LEARNER, { 0, 0 } },
        { "web/2", id, SHOAL_ROLE_ACTIVE, { 1, 1 } },
    };
    //  The lease runs from the STATUS the new leader got, which the
    //  ASSIGN echoes.
    const shoal_tasks_send_t *sends;
    uint64_t seq = shoal_tasks_outbox (tasks, &sends) ? sends[0].msg.u.status.seq : 0;
    CHECK (seq > 0);
    shoal_assign_t assign = { 1, 1, 0, true, 0, NULL, 3, placements, seq };
    CHECK_EQ (shoal_tasks_assign (tasks, *now + 1, &leader, &assign), 0);
    CHECK_EQ (shoal_tasks_check (tasks, &why), 0);
    for (int i = 0; i < 3; i++) {
        CHECK_EQ (shoal_tasks_report (tasks, *now + 2, placements[i].task, SHOAL_TASK_RUNNING, 0),
                  0);
        CHECK_EQ (shoal_tasks_check (tasks, &why), 0);
    }
    *now += 2;
    return tasks;
}

static void
the_check_passes_on_real_states (void)
{
    uint64_t now = 1000;
    shoal_tasks_t *tasks = t_running (&now);
    CHECK_EQ (tasks->held_count, 3);
    CHECK (tasks->acting_count > 0);
    //  The leader drops one task; its stop is reported.
    shoal_id_t id = shoal_sample_index_id (1), leader = shoal_sample_index_id (2);
    shoal_placement_t gone = { "web/2", id, SHOAL_ROLE_NONE, { 0, 0 } };
    shoal_assign_t delta = { 1, 2, 1, false, 0, NULL, 1, &gone, tasks->seq };
    CHECK_EQ (shoal_tasks_assign (tasks, now + 1, &leader, &delta), 0);
    CHECK_EQ (shoal_tasks_check (tasks, NULL), 0);
    shoal_tasks_report (tasks, now + 2, "web/2", SHOAL_TASK_STOPPED, 0);
    CHECK_EQ (shoal_tasks_check (tasks, NULL), 0);
    shoal_tasks_tick (tasks, now + 10000);
    CHECK_EQ (shoal_tasks_check (tasks, NULL), 0);
    shoal_tasks_destroy (&tasks);
}

static void
the_check_finds_broken_states (void)
{
    uint64_t now = 1000;
    shoal_tasks_t *tasks = t_running (&now);
    const char *why = NULL;
    CHECK_EQ (shoal_tasks_check (NULL, &why), -1);
    CHECK_CONTAINS (why, "NULL");

    tasks->held_count++;
    CHECK_EQ (shoal_tasks_check (tasks, &why), -1);
    CHECK_CONTAINS (why, "held_count");
    tasks->held_count--;

    tasks->acting_count++;
    CHECK_EQ (shoal_tasks_check (tasks, &why), -1);
    CHECK_CONTAINS (why, "acting_count");
    tasks->acting_count--;

    s_task_t first = tasks->tasks[0];
    tasks->tasks[0] = tasks->tasks[1];
    tasks->tasks[1] = first;
    CHECK_EQ (shoal_tasks_check (tasks, &why), -1);
    CHECK_CONTAINS (why, "not sorted");
    tasks->tasks[1] = tasks->tasks[0];
    tasks->tasks[0] = first;

    tasks->version.term = tasks->term_seen + 1;
    CHECK_EQ (shoal_tasks_check (tasks, &why), -1);
    CHECK_CONTAINS (why, "term above");
    tasks->version.term = tasks->term_seen;
    CHECK_EQ (shoal_tasks_check (tasks, &why), 0);
    shoal_tasks_destroy (&tasks);
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

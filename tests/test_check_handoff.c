/*  tests/test_check_handoff.c: shoal_handoff_check, on real states and on
    states broken by hand.

    The check reads the handoff's own tables, which no input can break
    unless the handoff has a bug; to show that it finds what it looks for,
    this test includes the handoff's source and breaks a real state by
    hand, then mends it. The library's copy is not linked: this file
    defines every symbol of it. tests/test_handoff.c checks the handoff
    wherever it counts actives.
*/

#include "../rebalance/handoff.c"
#include "tests/samples.h"
#include "tests/test.h"

#define T_TERM 2

static void
t_member (shoal_handoff_t *handoff, uint64_t now, int index)
{
    shoal_meta_t meta = { .name = "n", .addr = "127.0.0.1:1", .capacity = 1 };
    shoal_id_t id = shoal_sample_index_id (index);
    CHECK_EQ (shoal_handoff_member (handoff, now, &id, &meta, true), 0);
    CHECK_EQ (shoal_handoff_check (handoff, NULL), 0);
}

//  Member index reports what the published assignment gives it, running.
static void
t_report (shoal_handoff_t *handoff, uint64_t now, int index, uint64_t *seq)
{
    const shoal_placement_t *placements;
    size_t count = shoal_handoff_placements (handoff, &placements);
    shoal_task_status_t tasks[16];
    uint32_t held = 0;
    shoal_id_t id = shoal_sample_index_id (index);
    for (size_t i = 0; i < count && held < 16; i++)
        if (memcmp (placements[i].node.bytes, id.bytes, SHOAL_ID_SIZE) == 0)
            tasks[held++] = (shoal_task_status_t){ placements[i].task,
                                                   placements[i].role,
                                                   SHOAL_TASK_RUNNING,
                                                   0,
                                                   placements[i].epoch,
                                                   0,
                                                   0,
                                                   "" };
    uint64_t version = shoal_handoff_adopted (handoff) ? shoal_handoff_version (handoff) : 0;
    shoal_status_t status = { version ? T_TERM : 0, version, held, tasks, ++*seq, 0 };
    CHECK_EQ (shoal_handoff_status (handoff, now, &id, 0, &status), 0);
    const char *why = "";
    CHECK_EQ (shoal_handoff_check (handoff, &why), 0);
}

//  A leader of three members and eight stateful tasks, past its lease
//  wait, every task placed, then a fourth member: a real state with
//  actives, learners and targets, checked after every input.
static shoal_handoff_t *
t_placed (uint64_t *now)
{
    shoal_handoff_config_t config;
    shoal_handoff_config_loopback (&config);
    config.join_settle_ms = 0;
    config.leave_settle_ms = 0;
    config.compute_ms = 0;
    shoal_handoff_t *handoff = shoal_handoff_new (&config, T_TERM, 0, *now);
    CHECK (handoff != NULL);
    uint64_t seq[4] = { 0 };
    for (int i = 0; i < 3; i++)
        t_member (handoff, *now, i);
    static const char *names[] = { "web/0", "web/1", "web/2", "web/3",
                                   "web/4", "web/5", "web/6", "web/7" };
    shoal_assign_task_t tasks[8];
    for (int i = 0; i < 8; i++)
        tasks[i] =
            (shoal_assign_task_t){ .id = names[i], .job = "web", .stateful = true, .weight = 1 };
    CHECK_EQ (shoal_handoff_tasks (handoff, *now, tasks, 8), 0);
    for (int i = 0; i < 3; i++)
        t_report (handoff, *now, i, &seq[i]);
    *now += 2 * (uint64_t) config.lease_ms * 2;
    for (int i = 0; i < 3; i++)
        t_report (handoff, *now, i, &seq[i]);
    shoal_handoff_tick (handoff, *now);
    CHECK_EQ (shoal_handoff_check (handoff, NULL), 0);
    for (int i = 0; i < 3; i++)
        t_report (handoff, *now, i, &seq[i]);
    t_member (handoff, *now, 3);
    t_report (handoff, *now, 3, &seq[3]);
    shoal_handoff_tick (handoff, *now + 1);
    CHECK_EQ (shoal_handoff_check (handoff, NULL), 0);
    return handoff;
}

static void
the_check_passes_on_real_states (void)
{
    uint64_t now = 1000;
    shoal_handoff_t *handoff = t_placed (&now);
    const shoal_placement_t *placements;
    CHECK (shoal_handoff_placements (handoff, &placements) >= 8);
    CHECK (handoff->target_count + handoff->placement_count > 8); //  learners warm up
    shoal_handoff_destroy (&handoff);
}

//  The first active placement, and another placement of the same task.
static void
t_two_of_one_task (shoal_handoff_t *handoff, size_t *active, size_t *other)
{
    *active = *other = SIZE_MAX;
    for (size_t p = 0; p + 1 < handoff->placement_count && *other == SIZE_MAX; p++)
        if (strcmp (handoff->placements[p].task, handoff->placements[p + 1].task) == 0) {
            bool first = handoff->placements[p].role == SHOAL_ROLE_ACTIVE;
            *active = first ? p : p + 1;
            *other = first ? p + 1 : p;
        }
}

static void
the_check_finds_broken_states (void)
{
    uint64_t now = 1000;
    shoal_handoff_t *handoff = t_placed (&now);
    const char *why = NULL;
    CHECK_EQ (shoal_handoff_check (NULL, &why), -1);
    CHECK_CONTAINS (why, "NULL");

    //  Two actives of one task.
    size_t active, other;
    t_two_of_one_task (handoff, &active, &other);
    CHECK (other != SIZE_MAX);
    if (other != SIZE_MAX) {
        uint8_t role = handoff->placements[other].role;
        handoff->placements[active].role = SHOAL_ROLE_ACTIVE;
        handoff->placements[other].role = SHOAL_ROLE_ACTIVE;
        CHECK_EQ (shoal_handoff_check (handoff, &why), -1);
        CHECK_CONTAINS (why, "two actives");
        handoff->placements[other].role = role;
        CHECK_EQ (shoal_handoff_check (handoff, NULL), 0);
    }

    //  Tasks out of order.
    s_task_t first = handoff->tasks[0];
    handoff->tasks[0] = handoff->tasks[1];
    handoff->tasks[1] = first;
    CHECK_EQ (shoal_handoff_check (handoff, &why), -1);
    CHECK_CONTAINS (why, "tasks not sorted");
    handoff->tasks[1] = handoff->tasks[0];
    handoff->tasks[0] = first;

    //  A placement on a member the handoff does not know.
    shoal_id_t node = handoff->placements[0].node;
    handoff->placements[0].node = shoal_sample_index_id (40);
    CHECK_EQ (shoal_handoff_check (handoff, &why), -1);
    handoff->placements[0].node = node;

    //  A placement in no role.
    uint8_t role = handoff->placements[0].role;
    handoff->placements[0].role = SHOAL_ROLE_NONE;
    CHECK_EQ (shoal_handoff_check (handoff, &why), -1);
    CHECK_CONTAINS (why, "no role");
    handoff->placements[0].role = role;
    CHECK_EQ (shoal_handoff_check (handoff, &why), 0);
    shoal_handoff_destroy (&handoff);
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

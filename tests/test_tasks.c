/*  tests/test_tasks.c: the tasks of one node, as the leader's ASSIGN
    messages and the lease allow.

    Each test drives one node through its API as a shell would: it tells
    the node who leads, hands it ASSIGN messages, reports what the
    application did, and ticks it when next() says, then looks at the
    commands for the application, the STATUS sent and the list of tasks.
    The LAN profile is used throughout: lease 3000 ms less 5 % drift (so a
    lease runs 2850 ms from the STATUS it rests on), STATUS every 1000 ms,
    first restart after 1000 ms, 3 restarts, acceptable_lag 10000. The
    job "job" keeps state; "web" does not, and "other" is not known.
*/

#include "tests/samples.h"
#include "rebalance/tasks.h"
#include "tests/test.h"

#include <stdio.h>
#include <stdlib.h>

#define SELF     0x11 //  the node under test
#define OTHER    0x22 //  another worker
#define LEADER   0xaa
#define LEADER_B 0xbb

#define T0    1000 //  the node starts, and learns its leader
#define LEASE 2850 //  lease_ms less the drift margin

static size_t
s_command_count_of (const shoal_tasks_t *node)
{
    const shoal_tasks_command_t *commands;
    return shoal_tasks_commands (node, &commands);
}

static shoal_tasks_t *
s_node_new (void)
{
    shoal_tasks_config_t config;
    shoal_tasks_config_lan (&config);
    config.lease_ms = 3000; //  the times below are written for it
    shoal_id_t self = shoal_sample_id (SELF);
    shoal_tasks_t *node = shoal_tasks_new (&config, &self, T0);
    const shoal_jobspec_t specs[] = {
        { .name = "web", .parallelism = 4, .weight = 1 },
        { .name = "job", .parallelism = 4, .stateful = true, .weight = 1 }
    };
    CHECK (node && shoal_tasks_jobs (node, T0, specs, 2) == 0);
    CHECK_EQ (s_command_count_of (node), 0);
    return node;
}

static void
s_leader (shoal_tasks_t *node, uint64_t now, uint8_t leader, uint64_t term)
{
    shoal_id_t id = shoal_sample_id (leader);
    shoal_tasks_leader (node, now, &id, term);
}

static int
s_assign (shoal_tasks_t *node, uint64_t now, uint8_t from, const shoal_assign_t *assign)
{
    shoal_id_t id = shoal_sample_id (from);
    return shoal_tasks_assign (node, now, &id, assign);
}

static shoal_placement_t
s_place (const char *task, uint8_t node, uint8_t role, uint64_t term, uint64_t version)
{
    return (shoal_placement_t){ task, shoal_sample_id (node), role, { term, version } };
}

static size_t
s_command_count (const shoal_tasks_t *node)
{
    const shoal_tasks_command_t *commands;
    return shoal_tasks_commands (node, &commands);
}

//  The command of the last input about task, or NULL.
static const shoal_tasks_command_t *
s_command (const shoal_tasks_t *node, const char *task)
{
    const shoal_tasks_command_t *commands;
    size_t count = shoal_tasks_commands (node, &commands);
    for (size_t i = 0; i < count; i++)
        if (strcmp (commands[i].task, task) == 0)
            return &commands[i];
    return NULL;
}

//  The STATUS the last input sent, or NULL.
static const shoal_status_t *
s_status (const shoal_tasks_t *node)
{
    const shoal_tasks_send_t *sends;
    size_t count = shoal_tasks_outbox (node, &sends);
    CHECK (count <= 1);
    if (count == 0)
        return NULL;
    CHECK_EQ (sends[0].msg.type, SHOAL_MSG_STATUS);
    return &sends[0].msg.u.status;
}

//  The task as the node lists it (and STATUS reports it), or NULL.
static const shoal_task_status_t *
s_listed (const shoal_tasks_t *node, const char *task)
{
    const shoal_task_status_t *tasks;
    size_t count = shoal_tasks_list (node, &tasks);
    for (size_t i = 0; i < count; i++)
        if (strcmp (tasks[i].task, task) == 0)
            return &tasks[i];
    return NULL;
}

//  The seq of the STATUS the last input sent, or 0.
static uint64_t
s_status_seq (const shoal_tasks_t *node)
{
    const shoal_status_t *status = s_status (node);
    return status ? status->seq : 0;
}

//  Ticks the node whenever next() says, as a shell's timer does, while
//  that is before until. Each tick must move next on.
static void
s_tick_before (shoal_tasks_t *node, uint64_t until)
{
    uint64_t now = 0;
    while (shoal_tasks_next (node) < until && shoal_tasks_next (node) > now) {
        now = shoal_tasks_next (node);
        shoal_tasks_tick (node, now);
    }
    CHECK (shoal_tasks_next (node) >= until);
}

//  The role and state the node lists the task in, -1 when not listed.
static int
s_role (const shoal_tasks_t *node, const char *task)
{
    const shoal_task_status_t *listed = s_listed (node, task);
    return listed ? listed->role : -1;
}

static int
s_state (const shoal_tasks_t *node, const char *task)
{
    const shoal_task_status_t *listed = s_listed (node, task);
    return listed ? listed->state : -1;
}

static size_t
s_list_count (const shoal_tasks_t *node)
{
    const shoal_task_status_t *tasks;
    return shoal_tasks_list (node, &tasks);
}

//  A node following LEADER at term 1 since T0 (its STATUS seq 1 went out
//  then), that runs job/0 as the active of epoch (1, 1) under a lease
//  taken from that STATUS: it holds until T0 + LEASE.
static shoal_tasks_t *
s_running_active (void)
{
    shoal_tasks_t *node = s_node_new ();
    s_leader (node, T0, LEADER, 1);
    shoal_placement_t placements[] = { s_place ("job/0", SELF, SHOAL_ROLE_ACTIVE, 1, 1) };
    shoal_assign_t snapshot = { .term = 1,
                                .version = 1,
                                .snapshot = true,
                                .placement_count = 1,
                                .placements = placements,
                                .status_seq = 1 };
    CHECK_EQ (s_assign (node, T0 + 10, LEADER, &snapshot), 0);
    CHECK_EQ (shoal_tasks_report (node, T0 + 20, "job/0", SHOAL_TASK_RUNNING, 0), 0);
    CHECK_EQ (s_state (node, "job/0"), SHOAL_TASK_RUNNING);
    return node;
}

//  ---------------------------------------------------------------------

//  The node's mark goes in every STATUS, and a change sends one at once:
//  the leader hears it straight from the node.
static void
a_mark_is_told_at_once_and_in_every_status (void)
{
    shoal_tasks_t *node = s_node_new ();
    s_leader (node, T0, LEADER, 7);
    const shoal_status_t *status = s_status (node);
    CHECK (status && status->cordon == SHOAL_CORDON_NONE);
    CHECK_EQ (shoal_tasks_cordon (node, T0 + 10, SHOAL_CORDON_DRAINING), 0);
    status = s_status (node);
    CHECK (status && status->seq == 2 && status->cordon == SHOAL_CORDON_DRAINING);
    CHECK_EQ (shoal_tasks_cordon (node, T0 + 20, SHOAL_CORDON_DRAINING), 0);
    CHECK (s_status (node) == NULL); //  no news
    shoal_tasks_tick (node, T0 + 10 + 1000);
    status = s_status (node);
    CHECK (status && status->cordon == SHOAL_CORDON_DRAINING);
    CHECK_EQ (shoal_tasks_cordon (node, T0 + 1100, SHOAL_CORDON_MAX + 1), -1);
    shoal_tasks_destroy (&node);
}

static void
configs_are_checked (void)
{
    shoal_tasks_config_t lan, loopback, config;
    shoal_tasks_config_lan (&lan);
    shoal_tasks_config_loopback (&loopback);
    CHECK (shoal_tasks_config_check (&lan) == NULL);
    CHECK (shoal_tasks_config_check (&loopback) == NULL);
    CHECK_EQ (lan.lease_ms, 5000);
    CHECK_EQ (lan.status_ms, 1000);
    CHECK_EQ (lan.acceptable_lag, 10000);
    CHECK_EQ (loopback.lease_ms, 500);
    CHECK_EQ (loopback.status_ms, 100);
    CHECK_EQ (loopback.restart_backoff_ms, 100);
    shoal_tasks_config_t wan;
    shoal_tasks_config_wan (&wan);
    CHECK (shoal_tasks_config_check (&wan) == NULL);
    CHECK_EQ (wan.lease_ms, 25000);
    CHECK_EQ (wan.status_ms, 5000);
    CHECK_EQ (wan.restart_backoff_ms, lan.restart_backoff_ms); //  a process's, not the network's
    CHECK (shoal_tasks_config_check (NULL) != NULL);

    config = lan;
    config.status_ms = 0;
    CHECK (shoal_tasks_config_check (&config) != NULL);
    config = lan;
    config.lease_ms = 0;
    CHECK (shoal_tasks_config_check (&config) != NULL);
    config = lan;
    config.lease_ms = 2 * config.status_ms - 1;
    CHECK (shoal_tasks_config_check (&config) != NULL);
    config.lease_ms = 2 * config.status_ms;
    CHECK (shoal_tasks_config_check (&config) == NULL);
    config = lan;
    config.drift_percent = 50;
    CHECK (shoal_tasks_config_check (&config) != NULL);
    config = lan;
    config.max_restarts = 0;
    CHECK (shoal_tasks_config_check (&config) == NULL);

    config = lan;
    config.status_ms = 0;
    shoal_id_t self = shoal_sample_id (SELF);
    CHECK (shoal_tasks_new (&config, &self, T0) == NULL);
    CHECK (shoal_tasks_new (&lan, NULL, T0) == NULL);
    shoal_tasks_t *node = shoal_tasks_new (&lan, &self, T0);
    CHECK (node != NULL);
    CHECK_EQ (shoal_tasks_version (node).term, 0);
    CHECK_EQ (shoal_tasks_version (node).version, 0);
    CHECK_EQ (shoal_tasks_next (node), UINT64_MAX);
    shoal_tasks_destroy (&node);
    CHECK (node == NULL);
    shoal_tasks_destroy (&node);
}

static void
a_snapshot_starts_tasks_in_their_roles_with_epochs (void)
{
    shoal_tasks_t *node = s_node_new ();
    s_leader (node, T0, LEADER, 1);
    //  Placements come in any order and name other nodes too.
    shoal_placement_t placements[] = {
        s_place ("job/2", SELF, SHOAL_ROLE_LEARNER, 1, 4),
        s_place ("job/0", OTHER, SHOAL_ROLE_STANDBY, 1, 3),
        s_place ("job/0", SELF, SHOAL_ROLE_ACTIVE, 1, 3),
        s_place ("job/1", SELF, SHOAL_ROLE_STANDBY, 1, 2),
        s_place ("job/3", OTHER, SHOAL_ROLE_ACTIVE, 1, 5),
    };
    shoal_assign_t snapshot = { .term = 1,
                                .version = 5,
                                .snapshot = true,
                                .placement_count = 5,
                                .placements = placements,
                                .status_seq = 1 };
    CHECK_EQ (s_assign (node, T0 + 10, LEADER, &snapshot), 0);
    CHECK_EQ (shoal_tasks_version (node).term, 1);
    CHECK_EQ (shoal_tasks_version (node).version, 5);
    CHECK (shoal_tasks_leased (node, T0 + 10));

    CHECK_EQ (s_command_count (node), 3);
    const shoal_tasks_command_t *start = s_command (node, "job/0");
    CHECK (start && start->type == SHOAL_TASKS_START && start->role == SHOAL_ROLE_ACTIVE);
    CHECK (start && start->epoch.term == 1 && start->epoch.version == 3);
    start = s_command (node, "job/1");
    CHECK (start && start->type == SHOAL_TASKS_START && start->role == SHOAL_ROLE_STANDBY);
    CHECK (start && start->epoch.version == 2);
    start = s_command (node, "job/2");
    CHECK (start && start->type == SHOAL_TASKS_START && start->role == SHOAL_ROLE_LEARNER);
    CHECK (s_command (node, "job/3") == NULL);

    //  The list is sorted and shows every task starting, in its role.
    const shoal_task_status_t *tasks;
    CHECK_EQ (shoal_tasks_list (node, &tasks), 3);
    CHECK_STR (tasks[0].task, "job/0");
    CHECK_STR (tasks[1].task, "job/1");
    CHECK_STR (tasks[2].task, "job/2");
    CHECK_EQ (tasks[0].role, SHOAL_ROLE_ACTIVE);
    CHECK_EQ (tasks[0].state, SHOAL_TASK_STARTING);
    CHECK_EQ (tasks[0].epoch.version, 3);
    CHECK_EQ (tasks[2].role, SHOAL_ROLE_LEARNER);
    CHECK_EQ (tasks[2].lag, UINT64_MAX); //  not reported yet: not caught up

    //  The leader hears of it at once.
    const shoal_status_t *status = s_status (node);
    CHECK (status && status->applied_version == 5 && status->task_count == 3);
    shoal_tasks_destroy (&node);
}

static void
a_delta_applies_only_on_its_base_and_term (void)
{
    shoal_tasks_t *node = s_running_active ();
    shoal_placement_t placements[] = { s_place ("job/1", SELF, SHOAL_ROLE_STANDBY, 1, 2) };
    shoal_assign_t delta = { .term = 1,
                             .version = 3,
                             .base_version = 2, //  the node holds version 1
                             .placement_count = 1,
                             .placements = placements,
                             .status_seq = 1 };
    CHECK_EQ (s_assign (node, T0 + 100, LEADER, &delta), -1);
    CHECK_EQ (s_command_count (node), 0);
    CHECK (s_status (node) == NULL);
    CHECK_EQ (s_list_count (node), 1);
    CHECK_EQ (shoal_tasks_version (node).version, 1);

    //  Its own term, but from version 1 to version 1: not a keep-alive.
    delta.base_version = 1;
    delta.version = 1;
    CHECK_EQ (s_assign (node, T0 + 100, LEADER, &delta), -1);
    CHECK_EQ (s_command_count (node), 0);

    //  A snapshot with a base is nonsense.
    shoal_assign_t snapshot = delta;
    snapshot.snapshot = true;
    snapshot.version = 4;
    CHECK_EQ (s_assign (node, T0 + 100, LEADER, &snapshot), -1);
    CHECK_EQ (s_command_count (node), 0);

    delta.version = 2;
    CHECK_EQ (s_assign (node, T0 + 100, LEADER, &delta), 0);
    CHECK_EQ (shoal_tasks_version (node).version, 2);
    const shoal_tasks_command_t *start = s_command (node, "job/1");
    CHECK (start && start->type == SHOAL_TASKS_START && start->role == SHOAL_ROLE_STANDBY);
    CHECK_EQ (s_command_count (node), 1); //  job/0 stays as it was
    CHECK_EQ (s_role (node, "job/0"), SHOAL_ROLE_ACTIVE);

    //  A delta that changes only other nodes' tasks is still news: the
    //  leader learns the node applied it.
    shoal_placement_t others[] = { s_place ("job/7", OTHER, SHOAL_ROLE_ACTIVE, 1, 3) };
    shoal_assign_t elsewhere = { .term = 1,
                                 .version = 3,
                                 .base_version = 2,
                                 .placement_count = 1,
                                 .placements = others,
                                 .status_seq = 1 };
    CHECK_EQ (s_assign (node, T0 + 105, LEADER, &elsewhere), 0);
    CHECK_EQ (s_command_count (node), 0);
    const shoal_status_t *status = s_status (node);
    CHECK (status && status->applied_version == 3);

    //  The same delta again no longer applies.
    CHECK_EQ (s_assign (node, T0 + 110, LEADER, &delta), -1);
    CHECK_EQ (s_command_count (node), 0);
    shoal_tasks_destroy (&node);
}

static void
an_older_term_is_dropped (void)
{
    shoal_tasks_t *node = s_node_new ();
    s_leader (node, T0, LEADER, 3);
    shoal_placement_t placements[] = { s_place ("job/0", SELF, SHOAL_ROLE_STANDBY, 2, 9) };
    shoal_assign_t snapshot = {
        .term = 2, .version = 9, .snapshot = true, .placement_count = 1, .placements = placements
    };
    //  The election follows term 3: a leader of term 2 is over.
    CHECK_EQ (s_assign (node, T0 + 10, LEADER_B, &snapshot), -1);
    CHECK_EQ (s_command_count (node), 0);
    CHECK_EQ (shoal_tasks_version (node).term, 0);

    snapshot.term = 3;
    CHECK_EQ (s_assign (node, T0 + 20, LEADER, &snapshot), 0);
    CHECK_EQ (s_command_count (node), 1);
    //  Nor does a later ASSIGN of term 2 undo it, whatever its version.
    snapshot.term = 2;
    snapshot.version = 20;
    placements[0].role = SHOAL_ROLE_NONE;
    CHECK_EQ (s_assign (node, T0 + 30, LEADER_B, &snapshot), -1);
    CHECK_EQ (s_command_count (node), 0);
    CHECK_EQ (shoal_tasks_version (node).term, 3);
    CHECK_EQ (shoal_tasks_version (node).version, 9);
    CHECK_EQ (s_list_count (node), 1);
    shoal_tasks_destroy (&node);
}

static void
a_new_leaders_delta_is_dropped_but_its_snapshot_taken (void)
{
    shoal_tasks_t *node = s_running_active ();
    s_leader (node, T0 + 500, LEADER_B, 2);
    uint64_t seq = s_status_seq (node); //  LEADER_B gets a STATUS at once
    CHECK (seq > 0);
    shoal_placement_t placements[] = { s_place ("job/0", SELF, SHOAL_ROLE_STANDBY, 1, 1) };
    shoal_assign_t delta = { .term = 2,
                             .version = 2,
                             .base_version = 1,
                             .placement_count = 1,
                             .placements = placements,
                             .status_seq = seq };
    CHECK_EQ (s_assign (node, T0 + 510, LEADER_B, &delta), -1);
    CHECK_EQ (s_command_count (node), 0);
    CHECK_EQ (shoal_tasks_version (node).term, 1);

    shoal_assign_t snapshot = { .term = 2,
                                .version = 2,
                                .snapshot = true,
                                .placement_count = 1,
                                .placements = placements,
                                .status_seq = seq };
    CHECK_EQ (s_assign (node, T0 + 520, LEADER_B, &snapshot), 0);
    CHECK_EQ (shoal_tasks_version (node).term, 2);
    CHECK_EQ (shoal_tasks_version (node).version, 2);
    const shoal_tasks_command_t *demote = s_command (node, "job/0");
    CHECK (demote && demote->type == SHOAL_TASKS_DEMOTE && demote->role == SHOAL_ROLE_STANDBY);
    shoal_tasks_destroy (&node);
}

static void
a_keep_alive_renews_the_lease_and_changes_nothing_else (void)
{
    shoal_tasks_t *node = s_running_active ();
    uint64_t now = shoal_tasks_next (node);
    shoal_tasks_tick (node, now); //  the periodic STATUS
    uint64_t seq = s_status_seq (node);
    CHECK (seq > 0);
    CHECK (!shoal_tasks_leased (node, T0 + LEASE));

    shoal_assign_t keep_alive = { .term = 1, .version = 1, .base_version = 1, .status_seq = seq };
    CHECK_EQ (s_assign (node, now + 10, LEADER, &keep_alive), 0);
    CHECK_EQ (s_command_count (node), 0);
    CHECK (s_status (node) == NULL);
    CHECK_EQ (shoal_tasks_version (node).version, 1);
    CHECK_EQ (s_list_count (node), 1);
    CHECK_EQ (s_role (node, "job/0"), SHOAL_ROLE_ACTIVE);
    CHECK (shoal_tasks_leased (node, now + LEASE - 1));
    CHECK (!shoal_tasks_leased (node, now + LEASE));

    //  A keep-alive of another version shows a missed delta: dropped, no
    //  lease from it.
    uint64_t later = shoal_tasks_next (node);
    shoal_tasks_tick (node, later);
    keep_alive = (shoal_assign_t){
        .term = 1, .version = 4, .base_version = 4, .status_seq = s_status_seq (node)
    };
    CHECK_EQ (s_assign (node, later + 10, LEADER, &keep_alive), -1);
    CHECK (!shoal_tasks_leased (node, now + LEASE));

    //  A new leader's keep-alive, before its first snapshot, keeps the
    //  lease (docs/handoff.md 5.1) and the assignment of the old one.
    s_leader (node, later + 100, LEADER_B, 2);
    keep_alive = (shoal_assign_t){
        .term = 2, .version = 1, .base_version = 1, .status_seq = s_status_seq (node)
    };
    CHECK_EQ (s_assign (node, later + 110, LEADER_B, &keep_alive), 0);
    CHECK_EQ (s_command_count (node), 0);
    CHECK (shoal_tasks_leased (node, later + 100 + LEASE - 1));
    CHECK_EQ (shoal_tasks_version (node).term, 1);
    CHECK_EQ (s_role (node, "job/0"), SHOAL_ROLE_ACTIVE);

    //  But once the lease has lapsed, a new leader's keep-alive does not
    //  bring it back: the old leader may have moved the task meanwhile. Only
    //  an assignment of the new leader's own does.
    uint64_t lapsed = later + 100 + LEASE + 1;
    shoal_tasks_tick (node, lapsed);
    CHECK (!shoal_tasks_leased (node, lapsed));
    CHECK_EQ (s_role (node, "job/0"), SHOAL_ROLE_STANDBY);
    shoal_tasks_tick (node, shoal_tasks_next (node)); //  a fresh STATUS to echo
    uint64_t fresh = s_status_seq (node);
    keep_alive =
        (shoal_assign_t){ .term = 3, .version = 1, .base_version = 1, .status_seq = fresh };
    CHECK_EQ (s_assign (node, lapsed + 1100, LEADER_B, &keep_alive), 0);
    CHECK (!shoal_tasks_leased (node, lapsed + 1100));
    CHECK_EQ (s_command_count (node), 0);
    shoal_tasks_destroy (&node);
}

static void
the_lease_runs_from_the_status_echoed_not_from_the_assign (void)
{
    //  A one-way cut: the node hears the leader, the leader no longer hears
    //  the node. Its ASSIGNs keep echoing STATUS seq 1, sent at T0.
    shoal_tasks_t *node = s_running_active ();
    for (int i = 1; i <= 2; i++) {
        uint64_t now = shoal_tasks_next (node);
        CHECK (now < T0 + LEASE);
        shoal_tasks_tick (node, now); //  a STATUS that is lost
        shoal_assign_t keep_alive = { .term = 1, .version = 1, .base_version = 1, .status_seq = 1 };
        CHECK_EQ (s_assign (node, now + 10, LEADER, &keep_alive), 0);
        CHECK_EQ (s_command_count (node), 0);
    }
    //  Fresh ASSIGNs do not push the end of the lease past T0 + LEASE.
    CHECK_EQ (shoal_tasks_next (node), T0 + LEASE);
    shoal_tasks_tick (node, T0 + LEASE - 1);
    CHECK_EQ (s_command_count (node), 0);
    shoal_tasks_tick (node, T0 + LEASE);
    CHECK (!shoal_tasks_leased (node, T0 + LEASE));
    const shoal_tasks_command_t *demote = s_command (node, "job/0");
    CHECK (demote && demote->type == SHOAL_TASKS_DEMOTE && demote->role == SHOAL_ROLE_STANDBY);
    const shoal_task_status_t *task = s_listed (node, "job/0");
    CHECK (task && task->role == SHOAL_ROLE_STANDBY && task->state == SHOAL_TASK_STOPPING);

    //  A STATUS seq the node never sent (though one 64 below it, in the same
    //  slot of its ring, went just now), or sent to another member, renews
    //  nothing either; the same seq from the leader does.
    uint64_t seq = s_status_seq (node); //  the demotion is news
    CHECK (seq > 0);
    shoal_assign_t keep_alive = {
        .term = 1, .version = 1, .base_version = 1, .status_seq = seq + 64
    };
    CHECK_EQ (s_assign (node, T0 + LEASE + 10, LEADER, &keep_alive), 0);
    CHECK (!shoal_tasks_leased (node, T0 + LEASE + 10));
    keep_alive.status_seq = seq;
    CHECK_EQ (s_assign (node, T0 + LEASE + 10, OTHER, &keep_alive), 0);
    CHECK (!shoal_tasks_leased (node, T0 + LEASE + 10));
    CHECK_EQ (s_assign (node, T0 + LEASE + 10, LEADER, &keep_alive), 0);
    CHECK (shoal_tasks_leased (node, T0 + LEASE + 10));
    shoal_tasks_destroy (&node);
}

static void
without_a_lease_an_active_is_held_as_standby_and_promoted_on_the_next_lease (void)
{
    shoal_tasks_t *node = s_node_new ();
    s_leader (node, T0, LEADER, 1); //  STATUS seq 1
    shoal_placement_t placements[] = { s_place ("job/0", SELF, SHOAL_ROLE_ACTIVE, 1, 1) };
    //  The leader has no STATUS of this node yet: status_seq 0.
    shoal_assign_t snapshot = {
        .term = 1, .version = 1, .snapshot = true, .placement_count = 1, .placements = placements
    };
    CHECK_EQ (s_assign (node, T0 + 10, LEADER, &snapshot), 0);
    CHECK (!shoal_tasks_leased (node, T0 + 10));
    const shoal_tasks_command_t *start = s_command (node, "job/0");
    CHECK (start && start->type == SHOAL_TASKS_START && start->role == SHOAL_ROLE_STANDBY);
    CHECK (start && start->epoch.term == 1 && start->epoch.version == 1);
    CHECK_EQ (s_role (node, "job/0"), SHOAL_ROLE_STANDBY);
    CHECK_EQ (shoal_tasks_report (node, T0 + 20, "job/0", SHOAL_TASK_RUNNING, 0), 0);

    shoal_assign_t keep_alive = { .term = 1, .version = 1, .base_version = 1, .status_seq = 1 };
    CHECK_EQ (s_assign (node, T0 + 30, LEADER, &keep_alive), 0);
    const shoal_tasks_command_t *promote = s_command (node, "job/0");
    CHECK (promote && promote->type == SHOAL_TASKS_PROMOTE && promote->role == SHOAL_ROLE_ACTIVE);
    CHECK (promote && promote->epoch.version == 1);
    CHECK_EQ (s_role (node, "job/0"), SHOAL_ROLE_ACTIVE);
    CHECK_EQ (s_state (node, "job/0"), SHOAL_TASK_RUNNING);

    //  The lease ends: demoted, stopped, then promoted again on a lease.
    s_tick_before (node, T0 + LEASE);
    CHECK_EQ (shoal_tasks_next (node), T0 + LEASE);
    shoal_tasks_tick (node, T0 + LEASE);
    CHECK (s_command (node, "job/0") && s_command (node, "job/0")->type == SHOAL_TASKS_DEMOTE);
    CHECK_EQ (shoal_tasks_report (node, T0 + LEASE + 5, "job/0", SHOAL_TASK_STOPPED, 0), 0);
    CHECK_EQ (s_command_count (node), 0);
    CHECK_EQ (s_role (node, "job/0"), SHOAL_ROLE_STANDBY);
    keep_alive.status_seq = s_status_seq (node);
    CHECK (keep_alive.status_seq > 1);
    CHECK_EQ (s_assign (node, T0 + LEASE + 10, LEADER, &keep_alive), 0);
    promote = s_command (node, "job/0");
    CHECK (promote && promote->type == SHOAL_TASKS_PROMOTE);
    shoal_tasks_destroy (&node);
}

static void
a_revoked_active_stays_stopping_until_the_app_reports_stopped (void)
{
    shoal_tasks_t *node = s_running_active ();
    shoal_placement_t placements[] = { s_place ("job/0", SELF, SHOAL_ROLE_NONE, 0, 0) };
    shoal_assign_t delta = { .term = 1,
                             .version = 2,
                             .base_version = 1,
                             .placement_count = 1,
                             .placements = placements,
                             .status_seq = 1 };
    CHECK_EQ (s_assign (node, T0 + 100, LEADER, &delta), 0);
    const shoal_tasks_command_t *stop = s_command (node, "job/0");
    CHECK (stop && stop->type == SHOAL_TASKS_STOP && stop->role == SHOAL_ROLE_NONE);
    const shoal_task_status_t *task = s_listed (node, "job/0");
    CHECK (task && task->role == SHOAL_ROLE_NONE && task->state == SHOAL_TASK_STOPPING);
    const shoal_status_t *status = s_status (node);
    CHECK (status && status->applied_version == 2 && status->task_count == 1);

    //  Running is not stopped.
    CHECK_EQ (shoal_tasks_report (node, T0 + 200, "job/0", SHOAL_TASK_RUNNING, 0), 0);
    CHECK_EQ (s_state (node, "job/0"), SHOAL_TASK_STOPPING);
    shoal_tasks_tick (node, T0 + 1000);
    CHECK_EQ (s_state (node, "job/0"), SHOAL_TASK_STOPPING);

    CHECK_EQ (shoal_tasks_report (node, T0 + 1100, "job/0", SHOAL_TASK_STOPPED, 0), 0);
    CHECK (s_listed (node, "job/0") == NULL);
    status = s_status (node);
    CHECK (status && status->task_count == 0);
    CHECK_EQ (shoal_tasks_report (node, T0 + 1200, "job/0", SHOAL_TASK_STOPPED, 0), -1);
    shoal_tasks_destroy (&node);
}

static void
a_demoted_active_runs_on_in_its_new_role_once_stopped (void)
{
    shoal_tasks_t *node = s_running_active ();
    shoal_placement_t placements[] = { s_place ("job/0", SELF, SHOAL_ROLE_LEARNER, 1, 1),
                                       s_place ("job/0", OTHER, SHOAL_ROLE_LEARNER, 1, 1) };
    shoal_assign_t delta = { .term = 1,
                             .version = 2,
                             .base_version = 1,
                             .placement_count = 2,
                             .placements = placements,
                             .status_seq = 1 };
    CHECK_EQ (s_assign (node, T0 + 100, LEADER, &delta), 0);
    const shoal_tasks_command_t *demote = s_command (node, "job/0");
    CHECK (demote && demote->type == SHOAL_TASKS_DEMOTE && demote->role == SHOAL_ROLE_LEARNER);
    const shoal_task_status_t *task = s_listed (node, "job/0");
    CHECK (task && task->role == SHOAL_ROLE_LEARNER && task->state == SHOAL_TASK_STOPPING);

    CHECK_EQ (shoal_tasks_report (node, T0 + 200, "job/0", SHOAL_TASK_STOPPED, 500), 0);
    task = s_listed (node, "job/0");
    CHECK (task && task->role == SHOAL_ROLE_LEARNER && task->state == SHOAL_TASK_RUNNING);
    CHECK (task && task->lag == 500);
    CHECK (s_status (node) != NULL);
    CHECK_EQ (s_command_count (node), 0);
    shoal_tasks_destroy (&node);
}

static void
a_task_removed_while_stopping_goes_once_it_stopped_or_failed (void)
{
    //  job/0 and job/1 are demoted, then removed before they stopped: the
    //  removal waits for the stop, then they go.
    shoal_tasks_t *node = s_node_new ();
    s_leader (node, T0, LEADER, 1);
    shoal_placement_t placements[] = { s_place ("job/0", SELF, SHOAL_ROLE_ACTIVE, 1, 1),
                                       s_place ("job/1", SELF, SHOAL_ROLE_ACTIVE, 1, 1) };
    shoal_assign_t assign = { .term = 1,
                              .version = 1,
                              .snapshot = true,
                              .placement_count = 2,
                              .placements = placements,
                              .status_seq = 1 };
    CHECK_EQ (s_assign (node, T0 + 10, LEADER, &assign), 0);
    placements[0].role = placements[1].role = SHOAL_ROLE_STANDBY;
    assign = (shoal_assign_t){ .term = 1,
                               .version = 2,
                               .base_version = 1,
                               .placement_count = 2,
                               .placements = placements,
                               .status_seq = 1 };
    CHECK_EQ (s_assign (node, T0 + 20, LEADER, &assign), 0);
    CHECK_EQ (s_command_count (node), 2); //  two DEMOTEs
    placements[0].role = placements[1].role = SHOAL_ROLE_NONE;
    assign.base_version = 2;
    assign.version = 3;
    CHECK_EQ (s_assign (node, T0 + 30, LEADER, &assign), 0);
    CHECK_EQ (s_command_count (node), 0);
    CHECK_EQ (s_state (node, "job/0"), SHOAL_TASK_STOPPING);

    CHECK_EQ (shoal_tasks_report (node, T0 + 40, "job/0", SHOAL_TASK_STOPPED, 0), 0);
    const shoal_tasks_command_t *stop = s_command (node, "job/0");
    CHECK (stop && stop->type == SHOAL_TASKS_STOP);
    CHECK (s_listed (node, "job/0") == NULL);
    CHECK_EQ (shoal_tasks_report (node, T0 + 50, "job/1", SHOAL_TASK_FAILED, 0), 0);
    stop = s_command (node, "job/1");
    CHECK (stop && stop->type == SHOAL_TASKS_STOP);
    CHECK_EQ (s_list_count (node), 0);
    CHECK_EQ (shoal_tasks_next (node), T0 + 50 + 1000); //  no restart is due
    shoal_tasks_destroy (&node);
}

static void
a_non_active_task_removed_goes_at_once (void)
{
    shoal_tasks_t *node = s_node_new ();
    shoal_placement_t placements[] = { s_place ("job/0", SELF, SHOAL_ROLE_STANDBY, 1, 1),
                                       s_place ("job/1", SELF, SHOAL_ROLE_LEARNER, 1, 1) };
    shoal_assign_t snapshot = {
        .term = 1, .version = 1, .snapshot = true, .placement_count = 2, .placements = placements
    };
    CHECK_EQ (s_assign (node, T0, LEADER, &snapshot), 0);
    CHECK_EQ (s_list_count (node), 2);
    //  A snapshot replaces everything: job/0 is no longer named.
    snapshot.version = 2;
    snapshot.placement_count = 1;
    snapshot.placements = &placements[1];
    CHECK_EQ (s_assign (node, T0 + 10, LEADER, &snapshot), 0);
    const shoal_tasks_command_t *stop = s_command (node, "job/0");
    CHECK (stop && stop->type == SHOAL_TASKS_STOP);
    CHECK_EQ (s_command_count (node), 1);
    CHECK (s_listed (node, "job/0") == NULL);
    CHECK_EQ (s_list_count (node), 1);
    CHECK_EQ (shoal_tasks_report (node, T0 + 20, "job/0", SHOAL_TASK_STOPPED, 0), -1);
    shoal_tasks_destroy (&node);
}

static void
status_is_sent_at_once_on_news_and_every_status_ms_with_a_leader (void)
{
    shoal_tasks_t *node = s_node_new ();
    shoal_placement_t placements[] = { s_place ("job/0", SELF, SHOAL_ROLE_STANDBY, 1, 1) };
    shoal_assign_t snapshot = {
        .term = 1, .version = 1, .snapshot = true, .placement_count = 1, .placements = placements
    };
    //  No leader, no STATUS, and nothing to tick for.
    CHECK_EQ (s_assign (node, T0, LEADER, &snapshot), 0);
    CHECK (s_status (node) == NULL);
    CHECK_EQ (shoal_tasks_next (node), UINT64_MAX);

    s_leader (node, T0 + 10, LEADER, 7);
    const shoal_tasks_send_t *sends;
    CHECK_EQ (shoal_tasks_outbox (node, &sends), 1);
    shoal_id_t leader = shoal_sample_id (LEADER);
    CHECK (memcmp (&sends[0].to, &leader, sizeof leader) == 0);
    const shoal_status_t *status = s_status (node);
    CHECK (status && status->seq == 1 && status->term == 1 && status->applied_version == 1);
    CHECK (status && status->task_count == 1 && strcmp (status->tasks[0].task, "job/0") == 0);
    CHECK_EQ (shoal_tasks_next (node), T0 + 10 + 1000);
    s_leader (node, T0 + 20, LEADER, 7); //  the same leader again is no news
    CHECK (s_status (node) == NULL);

    //  Running is news; a lag is news only when it crosses 10000.
    CHECK_EQ (shoal_tasks_report (node, T0 + 30, "job/0", SHOAL_TASK_RUNNING, 20000), 0);
    status = s_status (node);
    CHECK (status && status->seq == 2);
    CHECK_EQ (shoal_tasks_report (node, T0 + 40, "job/0", SHOAL_TASK_RUNNING, 15000), 0);
    CHECK (s_status (node) == NULL);
    CHECK (s_listed (node, "job/0") && s_listed (node, "job/0")->lag == 15000);
    CHECK_EQ (shoal_tasks_report (node, T0 + 50, "job/0", SHOAL_TASK_RUNNING, 10000), 0);
    status = s_status (node);
    CHECK (status && status->seq == 3 && status->tasks[0].lag == 10000);
    CHECK_EQ (shoal_tasks_report (node, T0 + 60, "job/0", SHOAL_TASK_RUNNING, 3), 0);
    CHECK (s_status (node) == NULL);
    CHECK_EQ (shoal_tasks_report (node, T0 + 70, "job/0", SHOAL_TASK_RUNNING, 10001), 0);
    status = s_status (node);
    CHECK (status && status->seq == 4);

    //  Otherwise every status_ms from the last one.
    CHECK_EQ (shoal_tasks_next (node), T0 + 70 + 1000);
    shoal_tasks_tick (node, T0 + 70 + 999);
    CHECK (s_status (node) == NULL);
    shoal_tasks_tick (node, T0 + 70 + 1000);
    status = s_status (node);
    CHECK (status && status->seq == 5 && status->term == 1); //  the assignment's term

    //  Without a leader, none.
    shoal_tasks_leader (node, T0 + 1100, NULL, 0);
    CHECK (s_status (node) == NULL);
    CHECK_EQ (shoal_tasks_next (node), UINT64_MAX);
    shoal_tasks_tick (node, T0 + 5000);
    CHECK (s_status (node) == NULL);
    CHECK_EQ (shoal_tasks_report (node, T0 + 5010, "job/0", SHOAL_TASK_FAILED, 0), 0);
    CHECK (s_status (node) == NULL);
    s_leader (node, T0 + 5020, LEADER_B, 8);
    status = s_status (node);
    CHECK (status && status->seq == 6 && status->term == 1);
    CHECK (status && status->tasks[0].state == SHOAL_TASK_FAILED);
    shoal_tasks_destroy (&node);
}

static void
a_failed_task_restarts_with_doubling_backoff_then_stays_failed (void)
{
    shoal_tasks_t *node = s_node_new ();
    shoal_placement_t placements[] = { s_place ("job/0", SELF, SHOAL_ROLE_STANDBY, 1, 1) };
    shoal_assign_t snapshot = {
        .term = 1, .version = 1, .snapshot = true, .placement_count = 1, .placements = placements
    };
    CHECK_EQ (s_assign (node, T0, LEADER, &snapshot), 0);
    CHECK_EQ (shoal_tasks_report (node, T0, "job/0", SHOAL_TASK_RUNNING, 0), 0);
    uint64_t now = T0 + 100;
    for (uint64_t backoff = 1000; backoff <= 4000; backoff *= 2) {
        CHECK_EQ (shoal_tasks_report (node, now, "job/0", SHOAL_TASK_FAILED, 0), 0);
        CHECK_EQ (s_state (node, "job/0"), SHOAL_TASK_FAILED);
        CHECK_EQ (shoal_tasks_next (node), now + backoff);
        shoal_tasks_tick (node, now + backoff - 1);
        CHECK (s_command (node, "job/0") == NULL);
        shoal_tasks_tick (node, now + backoff);
        const shoal_tasks_command_t *start = s_command (node, "job/0");
        CHECK (start && start->type == SHOAL_TASKS_START && start->role == SHOAL_ROLE_STANDBY);
        CHECK (start && start->epoch.version == 1);
        CHECK_EQ (s_state (node, "job/0"), SHOAL_TASK_STARTING);
        now += backoff + 10;
    }
    //  The fourth failure in a row stays: 3 restarts is the LAN profile's.
    CHECK_EQ (shoal_tasks_report (node, now, "job/0", SHOAL_TASK_FAILED, 0), 0);
    CHECK_EQ (s_state (node, "job/0"), SHOAL_TASK_FAILED);
    CHECK_EQ (shoal_tasks_next (node), UINT64_MAX);
    shoal_tasks_tick (node, now + 100000);
    CHECK (s_command (node, "job/0") == NULL);
    CHECK_EQ (s_state (node, "job/0"), SHOAL_TASK_FAILED);
    CHECK_EQ (shoal_tasks_report (node, now + 100010, "job/0", SHOAL_TASK_RUNNING, 0), -1);
    shoal_tasks_destroy (&node);
}

//  A task that says it runs and fails soon after is still counted: only a
//  run of healthy_ms (60 s on a LAN) starts the count over.
static void
a_run_that_lasts_ends_the_run_of_failures (void)
{
    shoal_tasks_t *node = s_node_new ();
    shoal_placement_t placements[] = { s_place ("job/0", SELF, SHOAL_ROLE_LEARNER, 1, 1) };
    shoal_assign_t snapshot = {
        .term = 1, .version = 1, .snapshot = true, .placement_count = 1, .placements = placements
    };
    CHECK_EQ (s_assign (node, T0, LEADER, &snapshot), 0);
    CHECK_EQ (shoal_tasks_report (node, T0 + 100, "job/0", SHOAL_TASK_FAILED, 0), 0);
    shoal_tasks_tick (node, T0 + 1100);
    CHECK (s_command (node, "job/0") != NULL);
    CHECK_EQ (shoal_tasks_report (node, T0 + 1200, "job/0", SHOAL_TASK_RUNNING, 0), 0);
    //  A task that stops unasked has failed: the second in a row, after a
    //  run of 100 ms, so the wait doubles.
    CHECK_EQ (shoal_tasks_report (node, T0 + 1300, "job/0", SHOAL_TASK_STOPPED, 0), 0);
    CHECK_EQ (s_state (node, "job/0"), SHOAL_TASK_FAILED);
    CHECK_EQ (shoal_tasks_next (node), T0 + 1300 + 2000);
    shoal_tasks_tick (node, T0 + 3300);
    CHECK (s_command (node, "job/0") != NULL);
    CHECK_EQ (shoal_tasks_report (node, T0 + 3400, "job/0", SHOAL_TASK_RUNNING, 0), 0);
    //  This run lasts 60 s: its failure is the first again.
    uint64_t failed = T0 + 3400 + 60000;
    CHECK_EQ (shoal_tasks_report (node, failed, "job/0", SHOAL_TASK_FAILED, 0), 0);
    CHECK_EQ (shoal_tasks_next (node), failed + 1000);
    shoal_tasks_destroy (&node);
}

//  With max_restarts 3, a task that keeps failing right after it says it
//  runs is given up at its fourth failure in a row.
static void
a_task_that_runs_briefly_is_still_given_up (void)
{
    shoal_tasks_t *node = s_node_new ();
    shoal_placement_t placements[] = { s_place ("job/0", SELF, SHOAL_ROLE_LEARNER, 1, 1) };
    shoal_assign_t snapshot = {
        .term = 1, .version = 1, .snapshot = true, .placement_count = 1, .placements = placements
    };
    CHECK_EQ (s_assign (node, T0, LEADER, &snapshot), 0);
    uint64_t now = T0;
    for (int failure = 1; failure <= 4; failure++) {
        CHECK_EQ (shoal_tasks_report (node, now + 100, "job/0", SHOAL_TASK_RUNNING, 0), 0);
        CHECK_EQ (shoal_tasks_report (node, now + 200, "job/0", SHOAL_TASK_FAILED, 0), 0);
        now += 200;
        //  Started again after its backoff (ticks for STATUS may come first).
        bool started = false;
        for (int i = 0; i < 100 && failure < 4 && !started; i++) {
            now = shoal_tasks_next (node);
            shoal_tasks_tick (node, now);
            started = s_command (node, "job/0") != NULL;
        }
        CHECK (started || failure == 4);
    }
    //  Given up: listed in role none, failed, with no restart to come.
    const shoal_task_status_t *list;
    CHECK_EQ (shoal_tasks_list (node, &list), 1);
    CHECK_EQ (list[0].role, SHOAL_ROLE_NONE);
    CHECK_EQ (list[0].state, SHOAL_TASK_FAILED);
    shoal_tasks_destroy (&node);
}

static void
a_node_that_never_restarts_leaves_a_failed_task_failed (void)
{
    shoal_tasks_config_t config;
    shoal_tasks_config_lan (&config);
    config.max_restarts = 0;
    shoal_id_t self = shoal_sample_id (SELF);
    shoal_tasks_t *node = shoal_tasks_new (&config, &self, T0);
    shoal_placement_t placements[] = { s_place ("job/0", SELF, SHOAL_ROLE_LEARNER, 1, 1) };
    shoal_assign_t snapshot = {
        .term = 1, .version = 1, .snapshot = true, .placement_count = 1, .placements = placements
    };
    CHECK_EQ (s_assign (node, T0, LEADER, &snapshot), 0);
    CHECK_EQ (shoal_tasks_report (node, T0 + 10, "job/0", SHOAL_TASK_FAILED, 0), 0);
    CHECK_EQ (shoal_tasks_next (node), UINT64_MAX);
    shoal_tasks_destroy (&node);
}

//  A task in its backoff is reported in its role; once the node has given
//  up on it, in role none (still failed), so that the leader may place it
//  elsewhere. It never starts again, even when granted anew, until the
//  assignment drops it: then it is stopped and gone.
static void
a_task_given_up_is_reported_in_role_none_until_dropped (void)
{
    shoal_tasks_config_t config;
    shoal_tasks_config_lan (&config);
    config.lease_ms = 3000;
    config.max_restarts = 1;
    shoal_id_t self = shoal_sample_id (SELF);
    shoal_tasks_t *node = shoal_tasks_new (&config, &self, T0);
    s_leader (node, T0, LEADER, 1);
    shoal_placement_t placements[] = { s_place ("job/0", SELF, SHOAL_ROLE_ACTIVE, 1, 1) };
    shoal_assign_t assign = { .term = 1,
                              .version = 1,
                              .snapshot = true,
                              .placement_count = 1,
                              .placements = placements,
                              .status_seq = 1 };
    CHECK_EQ (s_assign (node, T0 + 10, LEADER, &assign), 0);
    CHECK_EQ (shoal_tasks_report (node, T0 + 20, "job/0", SHOAL_TASK_RUNNING, 0), 0);

    //  The first failure: restarted after its backoff, active all along.
    CHECK_EQ (shoal_tasks_report (node, T0 + 100, "job/0", SHOAL_TASK_FAILED, 0), 0);
    const shoal_status_t *status = s_status (node);
    CHECK (status && status->task_count == 1 && status->tasks[0].role == SHOAL_ROLE_ACTIVE &&
           status->tasks[0].state == SHOAL_TASK_FAILED);
    shoal_tasks_tick (node, T0 + 1100);
    const shoal_tasks_command_t *start = s_command (node, "job/0");
    CHECK (start && start->type == SHOAL_TASKS_START && start->role == SHOAL_ROLE_ACTIVE);

    //  The second in a row is one too many: given up, reported at once.
    CHECK_EQ (shoal_tasks_report (node, T0 + 1200, "job/0", SHOAL_TASK_FAILED, 0), 0);
    status = s_status (node);
    CHECK (status && status->task_count == 1 && status->tasks[0].role == SHOAL_ROLE_NONE &&
           status->tasks[0].state == SHOAL_TASK_FAILED);
    CHECK_EQ (s_role (node, "job/0"), SHOAL_ROLE_NONE);
    CHECK_EQ (shoal_tasks_next (node), T0 + 1200 + 1000); //  STATUS only
    shoal_tasks_tick (node, T0 + 2200);
    CHECK (s_command (node, "job/0") == NULL);

    //  A new grant does not bring it back.
    placements[0] = s_place ("job/0", SELF, SHOAL_ROLE_ACTIVE, 1, 2);
    assign = (shoal_assign_t){ .term = 1,
                               .version = 2,
                               .base_version = 1,
                               .placement_count = 1,
                               .placements = placements,
                               .status_seq = s_status_seq (node) };
    CHECK_EQ (s_assign (node, T0 + 2300, LEADER, &assign), 0);
    CHECK (s_command (node, "job/0") == NULL);
    CHECK_EQ (s_role (node, "job/0"), SHOAL_ROLE_NONE);
    CHECK_EQ (s_state (node, "job/0"), SHOAL_TASK_FAILED);

    //  Dropped: stopped at once, and gone from the list.
    placements[0] = s_place ("job/0", SELF, SHOAL_ROLE_NONE, 0, 0);
    assign = (shoal_assign_t){
        .term = 1, .version = 3, .base_version = 2, .placement_count = 1, .placements = placements
    };
    CHECK_EQ (s_assign (node, T0 + 2400, LEADER, &assign), 0);
    const shoal_tasks_command_t *stop = s_command (node, "job/0");
    CHECK (stop && stop->type == SHOAL_TASKS_STOP);
    CHECK (s_listed (node, "job/0") == NULL);
    status = s_status (node);
    CHECK (status && status->task_count == 0 && status->applied_version == 3);
    shoal_tasks_destroy (&node);
}

static void
a_report_for_an_unknown_task_is_refused (void)
{
    shoal_tasks_t *node = s_running_active ();
    CHECK_EQ (shoal_tasks_report (node, T0 + 100, "job/9", SHOAL_TASK_RUNNING, 0), -1);
    CHECK_EQ (shoal_tasks_report (node, T0 + 100, "", SHOAL_TASK_FAILED, 0), -1);
    CHECK_EQ (shoal_tasks_report (node, T0 + 100, NULL, SHOAL_TASK_FAILED, 0), -1);
    CHECK_EQ (s_command_count (node), 0);
    CHECK (s_status (node) == NULL);
    //  So is a state the application cannot report.
    CHECK_EQ (shoal_tasks_report (node, T0 + 100, "job/0", SHOAL_TASK_STOPPING, 0), -1);
    CHECK_EQ (shoal_tasks_report (node, T0 + 100, "job/0", 77, 0), -1);
    CHECK_EQ (s_state (node, "job/0"), SHOAL_TASK_RUNNING);
    shoal_tasks_destroy (&node);
}

static void
a_placement_list_repeating_a_task_is_dropped (void)
{
    shoal_tasks_t *node = s_running_active ();
    shoal_placement_t placements[] = {
        s_place ("job/1", SELF, SHOAL_ROLE_STANDBY, 1, 2),
        s_place ("job/0", SELF, SHOAL_ROLE_NONE, 0, 0),
        s_place ("job/1", SELF, SHOAL_ROLE_LEARNER, 1, 2),
    };
    shoal_assign_t snapshot = { .term = 1,
                                .version = 2,
                                .snapshot = true,
                                .placement_count = 3,
                                .placements = placements,
                                .status_seq = 1 };
    CHECK_EQ (s_assign (node, T0 + 100, LEADER, &snapshot), -1);
    CHECK_EQ (s_command_count (node), 0);
    CHECK_EQ (shoal_tasks_version (node).version, 1);
    CHECK_EQ (s_list_count (node), 1);

    //  A role that does not exist, or a task too long, drops it too.
    placements[2] = s_place ("job/2", SELF, 4, 1, 2);
    CHECK_EQ (s_assign (node, T0 + 100, LEADER, &snapshot), -1);
    char long_name[SHOAL_TASK_MAX + 2];
    memset (long_name, 'x', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    placements[2] = s_place (long_name, SELF, SHOAL_ROLE_STANDBY, 1, 2);
    CHECK_EQ (s_assign (node, T0 + 100, LEADER, &snapshot), -1);
    CHECK_EQ (s_command_count (node), 0);

    //  The same task on two nodes is an assignment, not a repeat.
    placements[2] = s_place ("job/1", OTHER, SHOAL_ROLE_ACTIVE, 1, 2);
    CHECK_EQ (s_assign (node, T0 + 100, LEADER, &snapshot), 0);
    CHECK_EQ (s_command_count (node), 2);
    shoal_tasks_destroy (&node);
}

static void
an_active_granted_anew_takes_the_new_epoch (void)
{
    shoal_tasks_t *node = s_running_active ();
    shoal_placement_t placements[] = { s_place ("job/0", SELF, SHOAL_ROLE_ACTIVE, 2, 4) };
    shoal_assign_t snapshot = { .term = 2,
                                .version = 4,
                                .snapshot = true,
                                .placement_count = 1,
                                .placements = placements,
                                .status_seq = 1 };
    CHECK_EQ (s_assign (node, T0 + 100, LEADER, &snapshot), 0);
    const shoal_tasks_command_t *promote = s_command (node, "job/0");
    CHECK (promote && promote->type == SHOAL_TASKS_PROMOTE && promote->role == SHOAL_ROLE_ACTIVE);
    CHECK (promote && promote->epoch.term == 2 && promote->epoch.version == 4);
    CHECK (s_listed (node, "job/0") && s_listed (node, "job/0")->epoch.term == 2);
    CHECK_EQ (s_state (node, "job/0"), SHOAL_TASK_RUNNING);
    shoal_tasks_destroy (&node);
}

//  Task names job/00000 ... job/65535, in a scrambled order.
static shoal_placement_t *
s_many (char (*names)[16], uint8_t role, int offset)
{
    shoal_placement_t *placements = malloc (SHOAL_PLACEMENTS_MAX * sizeof *placements);
    for (uint32_t i = 0; i < SHOAL_PLACEMENTS_MAX; i++) {
        uint32_t scrambled = (i * 40503u + (uint32_t) offset) % SHOAL_PLACEMENTS_MAX;
        snprintf (names[i], sizeof names[i], "job/%05u", scrambled);
        placements[i] = s_place (names[i], SELF, role, 1, 1);
    }
    return placements;
}

static void
a_snapshot_of_65536_tasks_for_this_node_works (void)
{
    shoal_tasks_t *node = s_node_new ();
    s_leader (node, T0, LEADER, 1);
    char (*names)[16] = malloc (SHOAL_PLACEMENTS_MAX * sizeof *names);
    shoal_placement_t *placements = s_many (names, SHOAL_ROLE_STANDBY, 0);
    shoal_assign_t snapshot = { .term = 1,
                                .version = 1,
                                .snapshot = true,
                                .placement_count = SHOAL_PLACEMENTS_MAX,
                                .placements = placements,
                                .status_seq = 1 };
    CHECK_EQ (s_assign (node, T0 + 10, LEADER, &snapshot), 0);
    CHECK_EQ (s_command_count (node), SHOAL_PLACEMENTS_MAX);
    const shoal_task_status_t *tasks;
    CHECK_EQ (shoal_tasks_list (node, &tasks), SHOAL_PLACEMENTS_MAX);
    bool sorted = true;
    for (size_t i = 1; i < SHOAL_PLACEMENTS_MAX; i++)
        sorted = sorted && strcmp (tasks[i - 1].task, tasks[i].task) < 0;
    CHECK (sorted);
    const shoal_status_t *status = s_status (node);
    CHECK (status && status->task_count == SHOAL_PLACEMENTS_MAX);

    //  Every task reports running: one binary search each.
    for (size_t i = 0; i < SHOAL_PLACEMENTS_MAX; i++)
        if (shoal_tasks_report (node, T0 + 20, names[i], SHOAL_TASK_RUNNING, 20000) != 0)
            CHECK (false);
    CHECK_EQ (s_state (node, "job/65535"), SHOAL_TASK_RUNNING);

    //  A second snapshot, in another order, swaps job/00000 for
    //  job/65536; the rest stay as they are.
    shoal_placement_t *moved = s_many (names, SHOAL_ROLE_STANDBY, 1);
    for (size_t i = 0; i < SHOAL_PLACEMENTS_MAX; i++)
        if (strcmp (names[i], "job/00000") == 0)
            strcpy (names[i], "job/65536");
    snapshot.version = 2;
    snapshot.placements = moved;
    CHECK_EQ (s_assign (node, T0 + 30, LEADER, &snapshot), 0);
    CHECK_EQ (s_command_count (node), 2);
    CHECK (s_command (node, "job/00000") &&
           s_command (node, "job/00000")->type == SHOAL_TASKS_STOP);
    CHECK (s_command (node, "job/65536") &&
           s_command (node, "job/65536")->type == SHOAL_TASKS_START);
    CHECK_EQ (s_list_count (node), SHOAL_PLACEMENTS_MAX);
    free (moved);
    free (placements);
    free (names);
    shoal_tasks_destroy (&node);
}

static void
a_start_waits_while_the_application_holds_the_most_tasks (void)
{
    //  65,536 actives; then a snapshot that swaps one for another. The
    //  application holds the old one until it stopped, so the new one can
    //  start only then: a STATUS could not list 65,537 tasks.
    shoal_tasks_t *node = s_node_new ();
    s_leader (node, T0, LEADER, 1);
    char (*names)[16] = malloc (SHOAL_PLACEMENTS_MAX * sizeof *names);
    shoal_placement_t *placements = s_many (names, SHOAL_ROLE_ACTIVE, 0);
    shoal_assign_t snapshot = { .term = 1,
                                .version = 1,
                                .snapshot = true,
                                .placement_count = SHOAL_PLACEMENTS_MAX,
                                .placements = placements,
                                .status_seq = 1 };
    CHECK_EQ (s_assign (node, T0 + 10, LEADER, &snapshot), 0);
    CHECK_EQ (s_command_count (node), SHOAL_PLACEMENTS_MAX);
    for (size_t i = 0; i < SHOAL_PLACEMENTS_MAX; i++)
        if (strcmp (names[i], "job/00000") == 0)
            strcpy (names[i], "job/65536");
    snapshot.version = 2;
    CHECK_EQ (s_assign (node, T0 + 20, LEADER, &snapshot), 0);
    CHECK_EQ (s_command_count (node), 1);
    CHECK (s_command (node, "job/00000") &&
           s_command (node, "job/00000")->type == SHOAL_TASKS_STOP);
    CHECK_EQ (s_list_count (node), SHOAL_TASKS_MAX);
    CHECK (s_listed (node, "job/65536") == NULL);
    CHECK_EQ (shoal_tasks_report (node, T0 + 30, "job/65536", SHOAL_TASK_RUNNING, 0), -1);

    CHECK_EQ (shoal_tasks_report (node, T0 + 40, "job/00000", SHOAL_TASK_STOPPED, 0), 0);
    const shoal_tasks_command_t *start = s_command (node, "job/65536");
    CHECK (start && start->type == SHOAL_TASKS_START && start->role == SHOAL_ROLE_ACTIVE);
    CHECK_EQ (s_list_count (node), SHOAL_TASKS_MAX);
    free (placements);
    free (names);
    shoal_tasks_destroy (&node);
}

//  A stateless task has no copy to keep warm: without a lease it is
//  stopped, never started or kept as a standby (a command that does not
//  read its role would go on working while another node runs the task),
//  and started as active again on the next lease.
static void
a_stateless_active_without_a_lease_is_stopped_never_a_standby (void)
{
    const char *tasks[] = { "web/0", "other/0" }; //  stateless, and of a job not known
    for (int t = 0; t < 2; t++) {
        const char *name = tasks[t];
        shoal_tasks_t *node = s_node_new ();
        s_leader (node, T0, LEADER, 1); //  STATUS seq 1
        shoal_placement_t placements[] = { s_place (name, SELF, SHOAL_ROLE_ACTIVE, 1, 1) };
        //  No lease yet (status_seq 0): nothing starts, not even a standby.
        shoal_assign_t snapshot = { .term = 1,
                                    .version = 1,
                                    .snapshot = true,
                                    .placement_count = 1,
                                    .placements = placements };
        CHECK_EQ (s_assign (node, T0 + 10, LEADER, &snapshot), 0);
        CHECK_EQ (s_command_count (node), 0);
        CHECK_EQ (s_role (node, name), -1);
        CHECK (shoal_tasks_next (node) > T0 + 10);

        //  A lease: it starts as active.
        shoal_assign_t keep_alive = { .term = 1, .version = 1, .base_version = 1, .status_seq = 1 };
        CHECK_EQ (s_assign (node, T0 + 30, LEADER, &keep_alive), 0);
        const shoal_tasks_command_t *start = s_command (node, name);
        CHECK (start && start->type == SHOAL_TASKS_START && start->role == SHOAL_ROLE_ACTIVE);
        CHECK (start && start->epoch.term == 1 && start->epoch.version == 1);
        CHECK_EQ (shoal_tasks_report (node, T0 + 40, name, SHOAL_TASK_RUNNING, 0), 0);

        //  The lease ends: STOP, not DEMOTE; stopping until the application
        //  says it stopped, then gone from the list, and nothing starts.
        s_tick_before (node, T0 + LEASE);
        shoal_tasks_tick (node, T0 + LEASE);
        const shoal_tasks_command_t *stop = s_command (node, name);
        CHECK (stop && stop->type == SHOAL_TASKS_STOP && stop->role == SHOAL_ROLE_NONE);
        CHECK_EQ (s_role (node, name), SHOAL_ROLE_NONE);
        CHECK_EQ (s_state (node, name), SHOAL_TASK_STOPPING);
        CHECK_EQ (shoal_tasks_report (node, T0 + LEASE + 5, name, SHOAL_TASK_STOPPED, 0), 0);
        CHECK_EQ (s_command_count (node), 0);
        CHECK_EQ (s_role (node, name), -1);
        uint64_t now = T0 + LEASE + 5;
        for (int i = 0; i < 10; i++) {
            uint64_t next = shoal_tasks_next (node);
            CHECK (next > now);
            now = next;
            shoal_tasks_tick (node, now);
            CHECK_EQ (s_command_count (node), 0);
        }

        //  The next lease starts it again as active, with the epoch the
        //  assignment holds.
        keep_alive.status_seq = s_status_seq (node);
        if (!keep_alive.status_seq) {
            shoal_tasks_tick (node, shoal_tasks_next (node));
            keep_alive.status_seq = s_status_seq (node);
        }
        CHECK (keep_alive.status_seq > 1);
        CHECK_EQ (s_assign (node, now + 10, LEADER, &keep_alive), 0);
        start = s_command (node, name);
        CHECK (start && start->type == SHOAL_TASKS_START && start->role == SHOAL_ROLE_ACTIVE);
        CHECK (start && start->epoch.term == 1 && start->epoch.version == 1);
        CHECK_EQ (s_role (node, name), SHOAL_ROLE_ACTIVE);
        shoal_tasks_destroy (&node);
    }
}

//  A stateless task that failed keeps its role and its count of failures
//  while there is no lease, but its restart waits for the lease: it never
//  starts as a standby. A task the node gave up on stays given up.
static void
a_failed_stateless_task_restarts_only_under_a_lease (void)
{
    shoal_tasks_t *node = s_node_new ();
    s_leader (node, T0, LEADER, 1);
    shoal_placement_t placements[] = { s_place ("web/0", SELF, SHOAL_ROLE_ACTIVE, 1, 1) };
    shoal_assign_t snapshot = { .term = 1,
                                .version = 1,
                                .snapshot = true,
                                .placement_count = 1,
                                .placements = placements,
                                .status_seq = 1 };
    CHECK_EQ (s_assign (node, T0 + 10, LEADER, &snapshot), 0);
    CHECK_EQ (shoal_tasks_report (node, T0 + 20, "web/0", SHOAL_TASK_FAILED, 0), 0);
    CHECK_EQ (s_state (node, "web/0"), SHOAL_TASK_FAILED);
    //  Its restart (at T0 + 1020) comes before the end of the lease.
    uint64_t next = shoal_tasks_next (node);
    CHECK (next < T0 + LEASE);
    s_tick_before (node, T0 + 1020 + 1);
    //  Failed again: the next restart is due at T0 + 1020 + 2000, after
    //  the end of the lease.
    CHECK_EQ (shoal_tasks_report (node, T0 + 1030, "web/0", SHOAL_TASK_FAILED, 0), 0);
    s_tick_before (node, T0 + LEASE);
    shoal_tasks_tick (node, T0 + LEASE);
    CHECK (!shoal_tasks_leased (node, T0 + LEASE));
    CHECK_EQ (s_command_count (node), 0);
    CHECK_EQ (s_role (node, "web/0"), SHOAL_ROLE_ACTIVE); //  in its backoff, in its role
    CHECK_EQ (s_state (node, "web/0"), SHOAL_TASK_FAILED);
    //  The restart's time passes: nothing starts, and next moves on.
    uint64_t now = T0 + LEASE;
    for (int i = 0; i < 10; i++) {
        next = shoal_tasks_next (node);
        CHECK (next > now);
        now = next;
        shoal_tasks_tick (node, now);
        CHECK_EQ (s_command_count (node), 0);
    }
    CHECK (now > T0 + 1030 + 2000);
    //  The lease comes back: the restart that was due starts it as active.
    shoal_assign_t keep_alive = {
        .term = 1, .version = 1, .base_version = 1, .status_seq = s_status_seq (node)
    };
    CHECK (keep_alive.status_seq > 0);
    CHECK_EQ (s_assign (node, now + 10, LEADER, &keep_alive), 0);
    const shoal_tasks_command_t *start = s_command (node, "web/0");
    CHECK (start && start->type == SHOAL_TASKS_START && start->role == SHOAL_ROLE_ACTIVE);
    shoal_tasks_destroy (&node);
}

//  The jobs a node knows decide: a task of a job it learns is stateful
//  goes on as a standby without a lease.
static void
a_job_learned_stateful_is_held_as_standby_without_a_lease (void)
{
    shoal_tasks_t *node = s_node_new ();
    s_leader (node, T0, LEADER, 1);
    shoal_placement_t placements[] = { s_place ("other/0", SELF, SHOAL_ROLE_ACTIVE, 1, 1) };
    shoal_assign_t snapshot = {
        .term = 1, .version = 1, .snapshot = true, .placement_count = 1, .placements = placements
    };
    CHECK_EQ (s_assign (node, T0 + 10, LEADER, &snapshot), 0);
    CHECK_EQ (s_command_count (node), 0);
    const shoal_jobspec_t specs[] = {
        { .name = "other", .parallelism = 1, .stateful = true, .weight = 1 }
    };
    CHECK_EQ (shoal_tasks_jobs (node, T0 + 20, specs, 1), 0);
    const shoal_tasks_command_t *start = s_command (node, "other/0");
    CHECK (start && start->type == SHOAL_TASKS_START && start->role == SHOAL_ROLE_STANDBY);
    shoal_tasks_destroy (&node);
}

//  How a task's process exited goes to the leader at once, in STATUS, and
//  changes nothing else; an error that is not text is refused, and a long
//  one is cut at the start of a character.
static void
a_crash_loop_is_reported_in_status (void)
{
    shoal_tasks_t *node = s_running_active ();
    CHECK_EQ (shoal_tasks_exit (node, T0 + 30, "job/0", 2, 127, "exit 127"), 0);
    const shoal_status_t *status = s_status (node);
    CHECK (status != NULL);
    CHECK_EQ (status->tasks[0].restarts, 2);
    CHECK_EQ (status->tasks[0].last_exit, 127);
    CHECK_STR (status->tasks[0].error, "exit 127");
    CHECK_EQ (status->tasks[0].state, SHOAL_TASK_RUNNING);
    CHECK_EQ (s_command_count (node), 0);
    //  The same again is no news.
    CHECK_EQ (shoal_tasks_exit (node, T0 + 31, "job/0", 2, 127, "exit 127"), 0);
    CHECK (s_status (node) == NULL);
    //  Run long enough: the count is over.
    CHECK_EQ (shoal_tasks_exit (node, T0 + 40, "job/0", 0, 127, ""), 0);
    CHECK_EQ (s_listed (node, "job/0")->restarts, 0);
    CHECK_STR (s_listed (node, "job/0")->error, "");

    CHECK_EQ (shoal_tasks_exit (node, T0 + 50, "job/1", 1, 1, ""), -1); //  not held
    CHECK_EQ (shoal_tasks_exit (node, T0 + 50, "job/0", 1, SHOAL_EXIT_MAX + 1, ""), -1);
    CHECK_EQ (shoal_tasks_exit (node, T0 + 50, "job/0", 1, 1, "bad \xff byte"), -1);
    char error[SHOAL_REASON_MAX + 8];
    memset (error, 'x', SHOAL_REASON_MAX - 1);
    memcpy (error + SHOAL_REASON_MAX - 1, "\xc3\xa9\xc3\xa9", 5); //  é é across the limit
    CHECK_EQ (shoal_tasks_exit (node, T0 + 60, "job/0", 3, 256 + 9, error), 0);
    CHECK_EQ (strlen (s_listed (node, "job/0")->error), SHOAL_REASON_MAX - 1);
    CHECK_EQ (s_listed (node, "job/0")->last_exit, 256 + 9);
    shoal_tasks_destroy (&node);
}

int
main (void)
{
    RUN (configs_are_checked);
    RUN (a_mark_is_told_at_once_and_in_every_status);
    RUN (a_snapshot_starts_tasks_in_their_roles_with_epochs);
    RUN (a_delta_applies_only_on_its_base_and_term);
    RUN (an_older_term_is_dropped);
    RUN (a_new_leaders_delta_is_dropped_but_its_snapshot_taken);
    RUN (a_keep_alive_renews_the_lease_and_changes_nothing_else);
    RUN (the_lease_runs_from_the_status_echoed_not_from_the_assign);
    RUN (without_a_lease_an_active_is_held_as_standby_and_promoted_on_the_next_lease);
    RUN (a_stateless_active_without_a_lease_is_stopped_never_a_standby);
    RUN (a_failed_stateless_task_restarts_only_under_a_lease);
    RUN (a_job_learned_stateful_is_held_as_standby_without_a_lease);
    RUN (a_revoked_active_stays_stopping_until_the_app_reports_stopped);
    RUN (a_demoted_active_runs_on_in_its_new_role_once_stopped);
    RUN (a_task_removed_while_stopping_goes_once_it_stopped_or_failed);
    RUN (a_non_active_task_removed_goes_at_once);
    RUN (status_is_sent_at_once_on_news_and_every_status_ms_with_a_leader);
    RUN (a_failed_task_restarts_with_doubling_backoff_then_stays_failed);
    RUN (a_run_that_lasts_ends_the_run_of_failures);
    RUN (a_task_that_runs_briefly_is_still_given_up);
    RUN (a_node_that_never_restarts_leaves_a_failed_task_failed);
    RUN (a_task_given_up_is_reported_in_role_none_until_dropped);
    RUN (a_report_for_an_unknown_task_is_refused);
    RUN (a_placement_list_repeating_a_task_is_dropped);
    RUN (an_active_granted_anew_takes_the_new_epoch);
    RUN (a_snapshot_of_65536_tasks_for_this_node_works);
    RUN (a_start_waits_while_the_application_holds_the_most_tasks);
    RUN (a_crash_loop_is_reported_in_status);
    return TEST_DONE ();
}

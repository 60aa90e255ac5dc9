/*  tests/fuzz/fuzz_tasks.c: the tasks of one node on arbitrary input.

    The input is a setup byte, then a run of steps, each a header byte and
    its operands. The setup byte: bits 0-1 are max_restarts, bit 2 picks
    the LAN profile (loopback otherwise), bit 3 leaves the node without job
    specs, so that every task is stateless (else the job "job" keeps
    state). The low three bits of a header
    say what the step is; bits 3-4 name a member: peers 0 to 2, or 3 for
    the node itself (a leader is a member too):
      TICK     the clock moves on by (header >> 3) * 37 ms, then a tick;
      NEXT     the clock moves to next, when that is later, and on by
               (header >> 3) ms (a late timer), then a tick;
      LEADER   the member leads at term (operand), or nobody if bit 5 is set;
      MESSAGE  from the member, a 2-byte big-endian length and that many
               bytes of message, decoded on a frame; an ASSIGN is handed in;
      ASSIGN   from the member, built from operands: term, version,
               base_version and status_seq, then a count (& 15) and that
               many placements of three operands each: the task (& 15, from
               a table of names), the node and role (bits 0-1: this node,
               peer 1 or 2, or a stranger; bits 2-3 the role, plus 4 when
               bit 7 is set) and the epoch (a step from the node's
               (term, version) for both). Bit 5 makes it a snapshot, bit 6
               a keep-alive (no placements, base_version = version);
      REPORT   the application reports on a task: bits 3-5 are the state
               (0 to 7, valid or not), operands the task (below 0xf0, an
               index into the node's list; else a name of the table) and
               the lag (operand * 157: around acceptable_lag);
      APP      the application does what it was told: every task starting
               reports running, every task stopping reports stopped, each
               with the lag (operand * 157);
      OTHER    a tick at the same time.
    After a tick the node ticks again at the same time while next is not
    later, as a shell's timer would; before a report, a tick that is due
    runs first, as a shell's timer would have. Numbers are one byte, a
    signed step from a base, saturating at 0 and UINT64_MAX, except 0x7f,
    which is UINT64_MAX itself. The bases: the node's assignment term for
    terms (the newest term given, for a leader), its version for versions
    (0 for a snapshot's base_version), the last STATUS seq sent for
    status_seq.

    After every step the node must keep the promises of tasks.h: commands
    are of known types, with roles that fit them, at most one per task, and
    follow what the application was told (START of a task it does not run
    or that failed, PROMOTE of a learner or standby or of an active to a new
    epoch, DEMOTE of an acting active, STOP of a task not stopping); the
    list is sorted without repeats, at most SHOAL_TASKS_MAX long, and shows
    exactly what the application was told and reported (but for standby
    and learner, which the node swaps without a command, and a task that
    failed more than max_restarts times in a row, which the node gave up
    on and lists in role none); no active acts
    while the node holds no lease, and next is never past the lease's end
    while one acts; a report on a task the application was not told of is
    refused, and one it must take is taken; a STATUS goes only to the
    leader, with its term, seq one up, the node's version and its list,
    encodes within a frame, and goes exactly when the report changed, the
    leader changed or one is due; the assignment's term never goes back;
    and ticking settles within TICKS_MAX calls at one time.

    The seeds in corpus/fuzz_tasks were written once with a throwaway
    program: a snapshot as msgpack then deltas and keep-alives, the app
    running and stopping tasks; a lease lost to a one-way cut; failures and
    restarts; a new leader's keep-alive and snapshot; and, written by hand,
    an active given up on after its one restart, then dropped (gave-up).
*/

#include "tests/fuzz/fuzz.h"

#include "rebalance/tasks.h"
#include "wire/ids.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STEP_TICK    0
#define STEP_NEXT    1
#define STEP_LEADER  2
#define STEP_MESSAGE 3
#define STEP_ASSIGN  4
#define STEP_REPORT  5
#define STEP_APP     6

#define SETUP_LAN       0x04
#define SETUP_STATELESS 0x08

#define ASSIGN_SNAPSHOT   0x20
#define ASSIGN_KEEP_ALIVE 0x40
#define LEADER_NOBODY     0x20
#define ROLE_INVALID      0x80

#define LAG_UNIT 157

//  Ticks at one time before a next that stays in the past is a busy loop.
#define TICKS_MAX 8

static shoal_id_t s_members[4]; //  peers 0 to 2, then the node itself
static shoal_id_t s_stranger;
static shoal_arena_t s_arena;
static char s_long_name[SHOAL_TASK_MAX + 1];
static const char *s_names[16] = { "job/0",  "job/1", "job/2", "job/3",    "job/4",  "job/5",
                                   "job/6",  "job/7", "job/8", "job/9",    "job/10", "job/11",
                                   "job/0 ", "",      "a",     s_long_name };

//  What the application was told and reported, task by task, sorted by
//  name: the model the node's list must match.
typedef struct {
    char name[SHOAL_TASK_MAX + 1];
    uint8_t role;
    uint8_t state;
    shoal_epoch_t epoch;
    uint32_t failures; //  in a row: past max_restarts, the node gives up on it
    bool ran;          //  reported running since its start,
    uint64_t ran_ms;   //  first then: a run of healthy_ms ends the count
} s_app_task_t;

static struct {
    s_app_task_t *tasks;
    size_t count;
    size_t capacity;
} s_app;

//  What the node showed after the last step, to compare the next with.
static struct {
    shoal_tasks_config_t config;
    uint64_t now;
    bool has_leader;
    uint64_t leader_term;
    int leader; //  index into s_members
    bool leader_changed;
    uint64_t term_given; //  the newest term given for a leader
    uint64_t seq;
    uint64_t status_ms; //  when the last STATUS went
    uint64_t report;    //  digest of what a STATUS reports
    uint64_t term;      //  of the assignment
} s_last;

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
    (void) argc;
    (void) argv;
    for (int i = 0; i < 3; i++)
        memset (s_members[i].bytes, i + 1, SHOAL_ID_SIZE);
    memset (s_members[3].bytes, 0xee, SHOAL_ID_SIZE);
    memset (s_stranger.bytes, 0x77, SHOAL_ID_SIZE);
    memset (s_long_name, 'x', SHOAL_TASK_MAX);
    shoal_arena_init (&s_arena, SHOAL_DECODE_ARENA (65536));
    return 0;
}

//  ---------------------------------------------------------------------
//  The application's side

static int
s_app_task_order (const void *task, const void *name)
{
    return strcmp (((const s_app_task_t *) task)->name, name);
}

static s_app_task_t *
s_app_find (const char *name, size_t *slot)
{
    size_t at =
        shoal_lower_bound (s_app.tasks, s_app.count, sizeof *s_app.tasks, name, s_app_task_order);
    if (at < s_app.count && strcmp (s_app.tasks[at].name, name) == 0)
        return &s_app.tasks[at];
    if (slot)
        *slot = at;
    return NULL;
}

static void
s_app_remove (s_app_task_t *task)
{
    size_t index = (size_t) (task - s_app.tasks);
    memmove (task, task + 1, (s_app.count - index - 1) * sizeof *task);
    s_app.count--;
}

static bool
s_app_acting (const s_app_task_t *task)
{
    return task->role == SHOAL_ROLE_ACTIVE &&
           (task->state == SHOAL_TASK_STARTING || task->state == SHOAL_TASK_RUNNING);
}

static void
s_app_command (const shoal_tasks_command_t *command)
{
    size_t slot = 0;
    s_app_task_t *task = s_app_find (command->task, &slot);
    switch (command->type) {
    case SHOAL_TASKS_START:
        FUZZ_REQUIRE (command->role != SHOAL_ROLE_NONE && command->role <= SHOAL_ROLE_LEARNER,
                      "START %s in role %d", command->task, command->role);
        FUZZ_REQUIRE (!task || task->state == SHOAL_TASK_FAILED,
                      "START %s, which runs (role %d, state %d)", command->task, task->role,
                      task->state);
        if (!task) {
            if (s_app.count == s_app.capacity) {
                s_app.capacity = s_app.capacity ? 2 * s_app.capacity : 64;
                s_app.tasks = realloc (s_app.tasks, s_app.capacity * sizeof *s_app.tasks);
                FUZZ_REQUIRE (s_app.tasks, "no memory for %zu tasks", s_app.capacity);
            }
            task = &s_app.tasks[slot];
            memmove (task + 1, task, (s_app.count - slot) * sizeof *task);
            s_app.count++;
            strcpy (task->name, command->task);
            task->failures = 0;
        }
        task->role = command->role;
        task->state = SHOAL_TASK_STARTING;
        task->epoch = command->epoch;
        task->ran = false;
        break;
    case SHOAL_TASKS_PROMOTE:
        FUZZ_REQUIRE (command->role == SHOAL_ROLE_ACTIVE, "PROMOTE %s to role %d", command->task,
                      command->role);
        FUZZ_REQUIRE (task &&
                          (task->state == SHOAL_TASK_STARTING || task->state == SHOAL_TASK_RUNNING),
                      "PROMOTE %s, which does not run", command->task);
        FUZZ_REQUIRE (task->role != SHOAL_ROLE_ACTIVE || task->epoch.term != command->epoch.term ||
                          task->epoch.version != command->epoch.version,
                      "PROMOTE %s, active already under that epoch", command->task);
        task->role = SHOAL_ROLE_ACTIVE;
        task->epoch = command->epoch;
        break;
    case SHOAL_TASKS_DEMOTE:
        FUZZ_REQUIRE (command->role == SHOAL_ROLE_STANDBY || command->role == SHOAL_ROLE_LEARNER,
                      "DEMOTE %s to role %d", command->task, command->role);
        FUZZ_REQUIRE (task && s_app_acting (task), "DEMOTE %s, which does not act", command->task);
        task->role = command->role;
        task->state = SHOAL_TASK_STOPPING;
        task->epoch = command->epoch;
        break;
    case SHOAL_TASKS_STOP:
        FUZZ_REQUIRE (command->role == SHOAL_ROLE_NONE, "STOP %s to role %d", command->task,
                      command->role);
        FUZZ_REQUIRE (task && task->state != SHOAL_TASK_STOPPING,
                      "STOP %s, which the application does not run", command->task);
        if (s_app_acting (task)) {
            task->role = SHOAL_ROLE_NONE;
            task->state = SHOAL_TASK_STOPPING;
        } else
            s_app_remove (task);
        break;
    default:
        FUZZ_REQUIRE (false, "a command of type %d", command->type);
    }
}

//  What the application's report does to its own side, when the node took it.
static void
s_app_report (s_app_task_t *task, uint8_t state, uint64_t now)
{
    if (state == SHOAL_TASK_RUNNING) {
        if (task->state == SHOAL_TASK_STARTING) {
            task->state = SHOAL_TASK_RUNNING;
            task->ran = true;
            task->ran_ms = now;
        }
    } else if (task->state == SHOAL_TASK_STOPPING &&
               (state == SHOAL_TASK_STOPPED || task->role == SHOAL_ROLE_NONE)) {
        if (task->role == SHOAL_ROLE_NONE)
            s_app_remove (task);
        else
            task->state = SHOAL_TASK_RUNNING;
    } else {
        if (task->ran && now - task->ran_ms >= s_last.config.healthy_ms)
            task->failures = 0;
        task->ran = false;
        task->state = SHOAL_TASK_FAILED;
        task->failures++;
    }
}

//  The role the node lists the task in: the application's, but none once
//  the node gave up on it (failed, with no restart to come).
static uint8_t
s_app_listed_role (const s_app_task_t *task)
{
    bool gave_up = task->state == SHOAL_TASK_FAILED && task->failures > s_last.config.max_restarts;
    return gave_up ? SHOAL_ROLE_NONE : task->role;
}

//  ---------------------------------------------------------------------
//  Checks

static void
s_check_commands (const shoal_tasks_t *core)
{
    const shoal_tasks_command_t *commands;
    size_t count = shoal_tasks_commands (core, &commands);
    for (size_t i = 0; i < count; i++) {
        FUZZ_REQUIRE (commands[i].task &&
                          strnlen (commands[i].task, SHOAL_TASK_MAX + 1) <= SHOAL_TASK_MAX,
                      "command %zu names no task, or one too long", i);
        for (size_t j = 0; j < i; j++)
            FUZZ_REQUIRE (strcmp (commands[i].task, commands[j].task) != 0,
                          "commands %zu and %zu both about %s", j, i, commands[i].task);
        s_app_command (&commands[i]);
    }
}

static bool
s_warm (uint8_t role)
{
    return role == SHOAL_ROLE_STANDBY || role == SHOAL_ROLE_LEARNER;
}

static uint64_t
s_mix (uint64_t digest, uint64_t value)
{
    return (digest ^ value) * 0x100000001b3ull;
}

//  The list against the application's side, and its digest: what a STATUS
//  would report, lag only as caught up or not.
static uint64_t
s_check_list (const shoal_tasks_t *core, uint64_t now)
{
    const shoal_task_status_t *tasks;
    size_t count = shoal_tasks_list (core, &tasks);
    FUZZ_REQUIRE (count <= SHOAL_TASKS_MAX, "%zu tasks listed", count);
    FUZZ_REQUIRE (count == s_app.count, "%zu tasks listed, the application was told of %zu", count,
                  s_app.count);
    uint64_t digest = s_mix (0xcbf29ce484222325ull, shoal_tasks_version (core).version);
    for (size_t i = 0; i < count; i++) {
        const shoal_task_status_t *task = &tasks[i];
        FUZZ_REQUIRE (strnlen (task->task, SHOAL_TASK_MAX + 1) <= SHOAL_TASK_MAX,
                      "task %zu too long", i);
        FUZZ_REQUIRE (i == 0 || strcmp (tasks[i - 1].task, task->task) < 0,
                      "tasks %zu and %zu out of order or repeated", i - 1, i);
        s_app_task_t *app = s_app_find (task->task, NULL);
        FUZZ_REQUIRE (app, "%s listed, but the application was not told of it", task->task);
        //  Standby and learner are the same work for the application: the
        //  node changes one for the other without a command.
        if (s_warm (task->role) && s_warm (app->role))
            app->role = task->role;
        FUZZ_REQUIRE (task->role == s_app_listed_role (app) && task->state == app->state,
                      "%s listed in role %d, state %d; the application runs it in role %d, "
                      "state %d, after %u failures in a row",
                      task->task, task->role, task->state, app->role, app->state, app->failures);
        FUZZ_REQUIRE (!s_app_acting (app) || shoal_tasks_leased (core, now),
                      "%s acts at %" PRIu64 " without a lease", task->task, now);
        FUZZ_REQUIRE (!s_app_acting (app) || shoal_tasks_leased (core, shoal_tasks_next (core) - 1),
                      "%s acts, and next (%" PRIu64 ") is past the end of the lease", task->task,
                      shoal_tasks_next (core));
        digest = s_mix (digest, (uint64_t) task->role << 8 | task->state);
        digest = s_mix (digest, task->epoch.term);
        digest = s_mix (digest, task->epoch.version);
        digest = s_mix (digest, task->lag <= s_last.config.acceptable_lag);
        for (const char *c = task->task; *c; c++)
            digest = s_mix (digest, (uint8_t) *c);
        digest = s_mix (digest, 0x100);
        //  How its process exited is news too.
        digest = s_mix (digest, task->restarts);
        digest = s_mix (digest, task->last_exit);
        for (const char *c = task->error; *c; c++)
            digest = s_mix (digest, (uint8_t) *c);
        digest = s_mix (digest, 0x100);
    }
    return digest;
}

static void
s_check_outbox (const shoal_tasks_t *core, uint64_t now, bool news)
{
    const shoal_tasks_send_t *sends;
    size_t count = shoal_tasks_outbox (core, &sends);
    FUZZ_REQUIRE (count <= 1, "%zu messages at once", count);
    bool due = now >= s_last.status_ms + s_last.config.status_ms || s_last.seq == 0;
    if (count == 0) {
        FUZZ_REQUIRE (!s_last.has_leader || (!news && !s_last.leader_changed && !due),
                      "no STATUS at %" PRIu64 " with a leader, though %s", now,
                      news  ? "the report changed"
                      : due ? "one is due"
                            : "the leader changed");
        return;
    }
    const shoal_msg_t *msg = &sends[0].msg;
    FUZZ_REQUIRE (msg->type == SHOAL_MSG_STATUS, "a message of type %d", msg->type);
    FUZZ_REQUIRE (s_last.has_leader, "a STATUS without a leader");
    FUZZ_REQUIRE (memcmp (&sends[0].to, &s_members[s_last.leader], SHOAL_ID_SIZE) == 0,
                  "a STATUS to another than the leader");
    FUZZ_REQUIRE (news || s_last.leader_changed || due,
                  "a STATUS at %" PRIu64 " with nothing new, the last at %" PRIu64, now,
                  s_last.status_ms);
    const shoal_status_t *status = &msg->u.status;
    const shoal_task_status_t *tasks;
    size_t listed = shoal_tasks_list (core, &tasks);
    FUZZ_REQUIRE (status->seq == s_last.seq + 1, "STATUS seq %" PRIu64 " after %" PRIu64,
                  status->seq, s_last.seq);
    FUZZ_REQUIRE (status->term == shoal_tasks_version (core).term,
                  "STATUS term %" PRIu64 ", the assignment's %" PRIu64, status->term,
                  shoal_tasks_version (core).term);
    FUZZ_REQUIRE (status->applied_version == shoal_tasks_version (core).version,
                  "STATUS applied_version %" PRIu64, status->applied_version);
    FUZZ_REQUIRE (status->task_count == listed && (listed == 0 || status->tasks == tasks),
                  "STATUS of %" PRIu32 " tasks, %zu listed", status->task_count, listed);
    fuzz_require_encodes (msg);
    s_last.seq = status->seq;
    s_last.status_ms = now;
}

static void
s_check (const shoal_tasks_t *core, uint64_t now)
{
    //  The core's own invariants, after every input (rebalance/tasks.h).
    const char *broken = "";
    FUZZ_REQUIRE (shoal_tasks_check (core, &broken) == 0, "%s", broken);
    s_check_commands (core);
    uint64_t report = s_check_list (core, now);
    s_check_outbox (core, now, report != s_last.report);
    s_last.report = report;
    s_last.leader_changed = false;
    uint64_t term = shoal_tasks_version (core).term;
    FUZZ_REQUIRE (term >= s_last.term,
                  "the assignment's term went back from %" PRIu64 " to %" PRIu64, s_last.term,
                  term);
    s_last.term = term;
}

//  ---------------------------------------------------------------------
//  Steps

//  Ticks at now, and again while next is not later, as a shell's timer does.
static void
s_tick (shoal_tasks_t *core, uint64_t now)
{
    for (int ticks = 1;; ticks++) {
        shoal_tasks_tick (core, now);
        s_check (core, now);
        uint64_t next = shoal_tasks_next (core);
        if (next > now)
            return;
        FUZZ_REQUIRE (ticks < TICKS_MAX,
                      "a busy loop: after %d ticks at %" PRIu64 ", next is still %" PRIu64, ticks,
                      now, next);
    }
}

static void
s_assign (shoal_tasks_t *core, uint64_t now, int from, const shoal_assign_t *assign)
{
    int rc = shoal_tasks_assign (core, now, &s_members[from], assign);
    FUZZ_REQUIRE (rc == 0 || rc == -1, "assign returned %d", rc);
    s_check (core, now);
}

static void
s_report (shoal_tasks_t *core, uint64_t now, const char *name, uint8_t state, uint64_t lag)
{
    char copy[SHOAL_TASK_MAX + 1];
    snprintf (copy, sizeof copy, "%s", name); //  the list moves with the input
    if (shoal_tasks_next (core) <= now)
        s_tick (core, now);
    s_app_task_t *app = s_app_find (copy, NULL);
    bool takes =
        state == SHOAL_TASK_RUNNING || state == SHOAL_TASK_STOPPED || state == SHOAL_TASK_FAILED;
    int rc = shoal_tasks_report (core, now, copy, state, lag);
    FUZZ_REQUIRE (rc == 0 || rc == -1, "report returned %d", rc);
    FUZZ_REQUIRE (app || rc == -1, "a report on %s taken, the application was not told of it",
                  copy);
    FUZZ_REQUIRE (!app || !takes || app->state == SHOAL_TASK_FAILED || rc == 0,
                  "report %d on %s (state %d) refused", state, copy, app->state);
    if (rc == 0)
        s_app_report (app, state, now);
    s_check (core, now);
}

//  How a task's process exited, told with values the operands choose: it
//  is news, and the STATUS that follows must still be one the wire takes,
//  whatever the error was (empty, text, not text, longer than the limit).
static void
s_exit (shoal_tasks_t *core, uint64_t now, const char *name, uint8_t which, uint64_t lag)
{
    static char long_text[SHOAL_REASON_MAX + 16];
    memset (long_text, 'x', sizeof long_text - 1);
    memcpy (long_text + SHOAL_REASON_MAX - 1, "\xc3\xa9", 2);
    const char *errors[] = { "", "exited with status 127", "bad \xff", long_text };
    char copy[SHOAL_TASK_MAX + 1];
    snprintf (copy, sizeof copy, "%s", name);
    int rc = shoal_tasks_exit (core, now, copy, (uint32_t) (lag & 0xff), (uint32_t) which * 2,
                               errors[which & 3]);
    FUZZ_REQUIRE (rc == 0 || rc == -1, "exit returned %d", rc);
    s_check (core, now); //  a STATUS that follows must encode
}

static void
s_crafted (shoal_tasks_t *core, uint64_t now, uint8_t header, int from, const uint8_t *data,
           size_t size, size_t *at)
{
    shoal_epoch_t held = shoal_tasks_version (core);
    shoal_placement_t placements[15];
    shoal_assign_t assign = {
        .term = fuzz_number (fuzz_operand (data, size, at), held.term),
        .version = fuzz_number (fuzz_operand (data, size, at), held.version),
        .base_version = fuzz_number (fuzz_operand (data, size, at),
                                     (header & ASSIGN_SNAPSHOT) ? 0 : held.version),
        .snapshot = (header & ASSIGN_SNAPSHOT) != 0,
        .status_seq = fuzz_number (fuzz_operand (data, size, at), s_last.seq),
    };
    if (header & ASSIGN_KEEP_ALIVE)
        assign.base_version = assign.version;
    else {
        assign.placement_count = fuzz_operand (data, size, at) & 15;
        for (uint32_t i = 0; i < assign.placement_count; i++) {
            uint8_t task = fuzz_operand (data, size, at) & 15;
            uint8_t node = fuzz_operand (data, size, at);
            uint8_t epoch = fuzz_operand (data, size, at);
            placements[i] = (shoal_placement_t){
                .task = s_names[task],
                .node = (node & 3) == 0   ? s_members[3]
                        : (node & 3) == 3 ? s_stranger
                                          : s_members[node & 3],
                .role = (uint8_t) (((node >> 2) & 3) + (node & ROLE_INVALID ? 4 : 0)),
                .epoch = { fuzz_number ((uint8_t) (epoch >> 4), held.term),
                           fuzz_number (epoch & 15, held.version) },
            };
        }
        assign.placements = assign.placement_count ? placements : NULL;
    }
    s_assign (core, now, from, &assign);
}

//  The application answers every START and STOP or DEMOTE it was given.
static void
s_app_answers (shoal_tasks_t *core, uint64_t now, uint64_t lag)
{
    //  Each report may start, stop or drop others: the names are taken
    //  first, and each task's state looked up again before its report.
    size_t count = s_app.count;
    char (*names)[SHOAL_TASK_MAX + 1] = malloc ((count ? count : 1) * sizeof *names);
    FUZZ_REQUIRE (names, "no memory for %zu names", count);
    for (size_t i = 0; i < count; i++)
        strcpy (names[i], s_app.tasks[i].name);
    for (size_t i = 0; i < count; i++) {
        const s_app_task_t *task = s_app_find (names[i], NULL);
        if (task && task->state == SHOAL_TASK_STARTING)
            s_report (core, now, names[i], SHOAL_TASK_RUNNING, lag);
        else if (task && task->state == SHOAL_TASK_STOPPING)
            s_report (core, now, names[i], SHOAL_TASK_STOPPED, lag);
    }
    free (names);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    uint8_t setup = data[0];
    memset (&s_last, 0, sizeof s_last);
    s_app.count = 0;
    if (setup & SETUP_LAN)
        shoal_tasks_config_lan (&s_last.config);
    else
        shoal_tasks_config_loopback (&s_last.config);
    s_last.config.max_restarts = setup & 3;
    uint64_t now = 1000;
    shoal_tasks_t *core = shoal_tasks_new (&s_last.config, &s_members[3], now);
    FUZZ_REQUIRE (core, "no node: %s", shoal_tasks_config_check (&s_last.config));
    FUZZ_REQUIRE (shoal_tasks_next (core) == UINT64_MAX, "a new node asks for a tick at %" PRIu64,
                  shoal_tasks_next (core));
    if (!(setup & SETUP_STATELESS)) {
        const shoal_jobspec_t job = { .name = "job", .parallelism = 12, .stateful = true };
        FUZZ_REQUIRE (shoal_tasks_jobs (core, now, &job, 1) == 0, "the jobs were not taken");
        const shoal_tasks_command_t *commands;
        FUZZ_REQUIRE (shoal_tasks_commands (core, &commands) == 0, "jobs alone make commands");
    }
    s_last.report = s_check_list (core, now);

    size_t at = 1;
    while (at < size) {
        uint8_t header = data[at++];
        int step = header & 7;
        int member = (header >> 3) & 3;
        switch (step) {
        case STEP_TICK:
        case STEP_NEXT:
            now = fuzz_step_time (now, header, step == STEP_NEXT, shoal_tasks_next (core));
            s_tick (core, now);
            break;
        case STEP_LEADER: {
            bool nobody = (header & LEADER_NOBODY) != 0;
            uint64_t term = fuzz_number (fuzz_operand (data, size, &at), s_last.term_given);
            shoal_tasks_leader (core, now, nobody ? NULL : &s_members[member], term);
            bool changed = !nobody && (!s_last.has_leader || s_last.leader != member ||
                                       s_last.leader_term != term);
            s_last.has_leader = !nobody;
            if (!nobody) {
                s_last.leader = member;
                s_last.leader_term = term;
                if (term > s_last.term_given)
                    s_last.term_given = term;
            }
            s_last.leader_changed = changed;
            s_check (core, now);
            break;
        }
        case STEP_MESSAGE: {
            if (size - at < 2) {
                at = size;
                break;
            }
            size_t length = (size_t) data[at] << 8 | data[at + 1];
            at += 2;
            if (length > size - at)
                length = size - at;
            shoal_msg_t msg;
            shoal_wire_error_t err;
            shoal_arena_reset (&s_arena);
            if (shoal_msg_decode (data + at, length, SHOAL_PURPOSE_FRAME, &msg, &s_arena, &err) ==
                    0 &&
                msg.type == SHOAL_MSG_ASSIGN)
                s_assign (core, now, member, &msg.u.assign);
            at += length;
            break;
        }
        case STEP_ASSIGN:
            s_crafted (core, now, header, member, data, size, &at);
            break;
        case STEP_REPORT: {
            uint8_t which = fuzz_operand (data, size, &at);
            uint64_t lag = (uint64_t) fuzz_operand (data, size, &at) * LAG_UNIT;
            const shoal_task_status_t *tasks;
            size_t count = shoal_tasks_list (core, &tasks);
            const char *name =
                which < 0xf0 && count ? tasks[which % count].task : s_names[which & 15];
            s_report (core, now, name, (uint8_t) ((header >> 3) & 7), lag);
            if (header & 0x40)
                s_exit (core, now, name, which, lag);
            break;
        }
        case STEP_APP:
            s_app_answers (core, now, (uint64_t) fuzz_operand (data, size, &at) * LAG_UNIT);
            break;
        default:
            s_tick (core, now);
            break;
        }
    }
    shoal_tasks_destroy (&core);
    return 0;
}

/*  tests/test_unplaced.c: the words the shell gives a task placed nowhere.

    They travel in the leader's status reply, and every string on the wire
    must be UTF-8: a reason cut at the buffer's end must not end inside a
    character, or the whole reply would not encode.
*/
#include "tests/test.h"

#include "wire/envelope.h"
#include "node/unplaced.h"
#include "wire/wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool
s_valid (const char *text)
{
    return shoal_text_valid ((const uint8_t *) text, strlen (text));
}

//  A task that failed everywhere, with a long error whose two-byte
//  character falls across the buffer's end: cut before that character.
static void
a_reason_cut_at_its_end_stays_utf8 (void)
{
    char error[SHOAL_REASON_MAX + 1];
    const char *prefix = "failed on every eligible node (last: ";
    size_t before = SHOAL_REASON_MAX - 1 - strlen (prefix); //  é's first byte is the last kept
    memset (error, 'e', before);
    snprintf (error + before, sizeof error - before, "\xc3\xa9 and more");
    CHECK (s_valid (error));
    shoal_unplaced_t unplaced = { .task = "job/0",
                                  .reason = SHOAL_UNPLACED_FAILED,
                                  .error = error };
    char text[SHOAL_REASON_MAX + 1];
    shoal_unplaced_text (&unplaced, text, sizeof text);
    CHECK (s_valid (text));
    CHECK_EQ (strlen (text), SHOAL_REASON_MAX - 1);
    CHECK (strncmp (text, prefix, strlen (prefix)) == 0);

    //  Each cut point of a three-byte character: still UTF-8.
    for (size_t size = 40; size < 48; size++) {
        shoal_unplaced_t other = { .task = "job/0",
                                   .reason = SHOAL_UNPLACED_FAILED,
                                   .error = "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac" };
        shoal_unplaced_text (&other, text, size);
        CHECK (s_valid (text));
    }
}

//  The constraint is named; a short reason is whole.
static void
a_missing_label_is_named (void)
{
    shoal_label_t label = { .key = "zone", .value = "mars" };
    shoal_unplaced_t unplaced = { .task = "job/0",
                                  .reason = SHOAL_UNPLACED_NO_NODE,
                                  .label = &label };
    char text[SHOAL_REASON_MAX + 1];
    shoal_unplaced_text (&unplaced, text, sizeof text);
    CHECK_STR (text, "no eligible node: no member has zone=mars");
}

//  The most tasks a cluster may hold, all placed nowhere, of a job with
//  the longest name: the rows listed fit one sealed frame with room to
//  spare, the rest are counted; a few all fit.
static void
a_reply_of_every_task_placed_nowhere_fits_a_frame (void)
{
    static char names[SHOAL_TASKS_MAX][SHOAL_NAME_MAX + 8];
    static shoal_unplaced_t unplaced[SHOAL_TASKS_MAX];
    static shoal_task_report_t rows[SHOAL_TASKS_MAX];
    char job[SHOAL_NAME_MAX + 1];
    memset (job, 'j', SHOAL_NAME_MAX);
    job[SHOAL_NAME_MAX] = 0;
    for (int i = 0; i < SHOAL_TASKS_MAX; i++) {
        snprintf (names[i], sizeof names[i], "%s/%d", job, i);
        unplaced[i] = (shoal_unplaced_t){ .task = names[i],
                                          .reason = SHOAL_UNPLACED_FAILED,
                                          .error = "exited with status 127" };
    }
    shoal_arena_t arena;
    CHECK_EQ (shoal_arena_init (&arena, 8u * 1024 * 1024), 0);
    uint32_t count = 0;
    size_t used = 0, budget = SHOAL_FRAME_MAX - 256u * 1024;
    long left_out = shoal_unplaced_rows (unplaced, SHOAL_TASKS_MAX, &arena, rows, &count,
                                         SHOAL_TASKS_MAX, &used, budget);
    CHECK (left_out > 0 && count > SHOAL_UNPLACED_WORDED);
    CHECK_EQ ((long) count + left_out, SHOAL_TASKS_MAX);
    CHECK (used <= budget);
    shoal_msg_t msg = { .type = SHOAL_MSG_CONTROL_REP };
    msg.u.control_rep = (shoal_control_rep_t){ .reason = "", .tasks = rows, .task_count = count };
    shoal_wire_error_t err = { 0 };
    long size = shoal_msg_encode (&msg, NULL, 0, &err);
    CHECK (size > 0);
    CHECK (size > 0 && (size_t) size + SHOAL_ENVELOPE_OVERHEAD <= SHOAL_FRAME_MAX);
    CHECK (size > 0 && (size_t) size <= used); //  the estimate is an upper bound

    count = 0, used = 0;
    CHECK_EQ (
        shoal_unplaced_rows (unplaced, 10, &arena, rows, &count, SHOAL_TASKS_MAX, &used, budget),
        0);
    CHECK_EQ (count, 10);
    shoal_arena_release (&arena);
}

int
main (void)
{
    RUN (a_reason_cut_at_its_end_stays_utf8);
    RUN (a_missing_label_is_named);
    RUN (a_reply_of_every_task_placed_nowhere_fits_a_frame);
    return TEST_DONE ();
}

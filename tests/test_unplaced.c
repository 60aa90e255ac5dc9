/*  tests/test_unplaced.c: the words the shell gives a task placed nowhere.

    They travel in the leader's status reply, and every string on the wire
    must be UTF-8: a reason cut at the buffer's end must not end inside a
    character, or the whole reply would not encode.
*/
#include "test.h"

#include "unplaced.h"
#include "wire.h"

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

int
main (void)
{
    RUN (a_reason_cut_at_its_end_stays_utf8);
    RUN (a_missing_label_is_named);
    return TEST_DONE ();
}

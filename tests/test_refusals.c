/*  tests/test_refusals.c: envelopes refused at the door, told by sender at
    most once a minute (node/refusals.h).
*/

#include "node/refusals.h"
#include "tests/test.h"

#include <stdio.h>

static void
the_first_refusal_of_a_sender_is_told_at_once_naming_it (void)
{
    shoal_refusals_t *refusals = shoal_refusals_new ();
    char text[300] = "";
    CHECK (shoal_refusals_add (refusals, 1000, "10.0.0.5:7946", SHOAL_OPEN_UNKNOWN_KEY, text,
                               sizeof text));
    CHECK_CONTAINS (text, "10.0.0.5:7946");
    CHECK_CONTAINS (text, "a key this node does not hold");
    //  Another sender is told at once too.
    CHECK (shoal_refusals_add (refusals, 1001, "10.0.0.6", SHOAL_OPEN_FORGED, text, sizeof text));
    CHECK_CONTAINS (text, "10.0.0.6");
    CHECK_CONTAINS (text, "did not authenticate");
    shoal_refusals_destroy (&refusals);
    CHECK (refusals == NULL);
}

static void
a_sender_is_told_once_a_minute_with_the_count (void)
{
    shoal_refusals_t *refusals = shoal_refusals_new ();
    char text[300] = "";
    CHECK (shoal_refusals_add (refusals, 5000, "10.0.0.5:7946", SHOAL_OPEN_PLAINTEXT, text,
                               sizeof text));
    for (int i = 0; i < 41; i++)
        CHECK (!shoal_refusals_add (refusals, 5001 + (uint64_t) i * 1000, "10.0.0.5:7946",
                                    SHOAL_OPEN_PLAINTEXT, text, sizeof text));
    uint64_t later = 5000 + SHOAL_REFUSALS_PERIOD_MS;
    CHECK (shoal_refusals_add (refusals, later, "10.0.0.5:7946", SHOAL_OPEN_PLAINTEXT, text,
                               sizeof text));
    CHECK_CONTAINS (text, "refused 42 more messages from 10.0.0.5:7946 in 60 s");
    CHECK_CONTAINS (text, "plaintext");
    CHECK (!shoal_refusals_add (refusals, later + 1, "10.0.0.5:7946", SHOAL_OPEN_PLAINTEXT, text,
                                sizeof text));
    shoal_refusals_destroy (&refusals);
}

static void
replays_and_other_drops_are_not_told (void)
{
    shoal_refusals_t *refusals = shoal_refusals_new ();
    char text[300] = "";
    CHECK (
        !shoal_refusals_add (refusals, 1, "10.0.0.5:7946", SHOAL_OPEN_REPLAYED, text, sizeof text));
    CHECK (!shoal_refusals_add (refusals, 1, "10.0.0.5:7946", SHOAL_OPEN_MISDIRECTED, text,
                                sizeof text));
    CHECK (shoal_refusals_told (SHOAL_OPEN_SEALED));
    CHECK (!shoal_refusals_told (SHOAL_OPEN_STALE));
    shoal_refusals_destroy (&refusals);
}

static void
many_senders_cannot_flood_the_log (void)
{
    //  Twice as many senders as the table holds, each sending again and
    //  again within one minute: each one in the table is told once, and
    //  the rest together once, as other senders.
    shoal_refusals_t *refusals = shoal_refusals_new ();
    char text[300] = "", sender[32];
    int told = 0;
    for (int round = 0; round < 5; round++)
        for (int i = 0; i < 2 * SHOAL_REFUSALS_SENDERS; i++) {
            snprintf (sender, sizeof sender, "10.1.%d.%d:7946", i / 256, i % 256);
            told += shoal_refusals_add (refusals, 1000 + (uint64_t) round, sender,
                                        SHOAL_OPEN_UNKNOWN_KEY, text, sizeof text);
        }
    CHECK_EQ (told, SHOAL_REFUSALS_SENDERS + 1);
    shoal_refusals_destroy (&refusals);
}

int
main (void)
{
    RUN (the_first_refusal_of_a_sender_is_told_at_once_naming_it);
    RUN (a_sender_is_told_once_a_minute_with_the_count);
    RUN (replays_and_other_drops_are_not_told);
    RUN (many_senders_cannot_flood_the_log);
    return TEST_DONE ();
}

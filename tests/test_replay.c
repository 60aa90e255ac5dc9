/*  tests/test_replay.c: the replay table, on its own.

    The table decides, per sender and purpose, whether an envelope is fresh,
    a replay, or too old. These tests walk its rules one at a time, then run
    a long seeded churn against a plain reference model, which is how the
    hash table's deletion on eviction gets exercised.
*/

#include "wire/replay.h"
#include "tests/test.h"
#include "wire/splitmix.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { FRESH = SHOAL_REPLAY_FRESH, SEEN = SHOAL_REPLAY_SEEN, STALE = SHOAL_REPLAY_STALE };

//  A deterministic generator, so that every failure replays from its seed.
//  A sender id that looks random, as real ones are, made from a number.
static void
s_sender (uint8_t sender[16], uint64_t number)
{
    uint64_t state = number;
    uint64_t high = splitmix_next (&state), low = splitmix_next (&state);
    memcpy (sender, &high, 8);
    memcpy (sender + 8, &low, 8);
}

//  A sender id that shares its first eight bytes with every other sender of
//  the same family, so that they all want the same slot of the table.
static void
s_sender_in_family (uint8_t sender[16], uint64_t family, uint64_t number)
{
    s_sender (sender, family);
    uint64_t state = number ^ 0x5bd1e995u;
    uint64_t low = splitmix_next (&state);
    memcpy (sender + 8, &low, 8);
}

static shoal_replay_verdict_t
s_check (shoal_replay_t *replay, const uint8_t sender[16], uint64_t incarnation, uint64_t seq)
{
    return shoal_replay_check (replay, sender, 1, incarnation, seq);
}

static shoal_replay_verdict_t
s_commit (shoal_replay_t *replay, const uint8_t sender[16], uint64_t incarnation, uint64_t seq)
{
    return shoal_replay_commit (replay, sender, 1, incarnation, seq);
}

//  ---------------------------------------------------------------------
//  The rules for one sender

static void
new_refuses_zero_capacity (void)
{
    shoal_replay_t *replay = shoal_replay_new (0);
    CHECK (replay == NULL);
    replay = shoal_replay_new (1);
    CHECK (replay != NULL);
    shoal_replay_destroy (&replay);
    CHECK (replay == NULL);
    shoal_replay_destroy (&replay);
    CHECK (replay == NULL);
}

static void
unknown_sender_is_fresh (void)
{
    shoal_replay_t *replay = shoal_replay_new (8);
    uint8_t sender[16];
    s_sender (sender, 1);
    CHECK_EQ (s_check (replay, sender, 1, 1), FRESH);
    CHECK_EQ (s_check (replay, sender, 0, 0), FRESH);
    CHECK_EQ (s_check (replay, sender, UINT64_MAX, UINT64_MAX), FRESH);
    CHECK_EQ (shoal_replay_evictions (replay), 0);
    shoal_replay_destroy (&replay);
}

static void
check_does_not_record_and_commit_does (void)
{
    shoal_replay_t *replay = shoal_replay_new (8);
    uint8_t sender[16];
    s_sender (sender, 2);
    CHECK_EQ (s_check (replay, sender, 1, 5), FRESH);
    CHECK_EQ (s_check (replay, sender, 1, 5), FRESH);
    CHECK_EQ (s_commit (replay, sender, 1, 5), FRESH);
    CHECK_EQ (s_check (replay, sender, 1, 5), SEEN);
    //  Committing a replay says so and changes nothing.
    CHECK_EQ (s_commit (replay, sender, 1, 5), SEEN);
    CHECK_EQ (s_check (replay, sender, 1, 5), SEEN);
    CHECK_EQ (s_check (replay, sender, 1, 4), FRESH);
    CHECK_EQ (s_check (replay, sender, 1, 6), FRESH);
    shoal_replay_destroy (&replay);
}

static void
each_number_is_accepted_once (void)
{
    shoal_replay_t *replay = shoal_replay_new (8);
    uint8_t sender[16];
    s_sender (sender, 3);
    for (uint64_t seq = 1; seq <= 1000; seq++)
        CHECK_EQ (s_commit (replay, sender, 1, seq), FRESH);
    for (uint64_t seq = 1000 - SHOAL_REPLAY_WINDOW + 1; seq <= 1000; seq++)
        CHECK_EQ (s_commit (replay, sender, 1, seq), SEEN);
    for (uint64_t seq = 1; seq <= 1000 - SHOAL_REPLAY_WINDOW; seq++)
        CHECK_EQ (s_commit (replay, sender, 1, seq), STALE);
    shoal_replay_destroy (&replay);
}

static void
the_window_holds_256_numbers_below_the_top (void)
{
    shoal_replay_t *replay = shoal_replay_new (8);
    uint8_t sender[16];
    s_sender (sender, 4);
    CHECK_EQ (s_commit (replay, sender, 1, 1000), FRESH);

    //  255 below the top is the oldest number still tracked; 256 is stale.
    CHECK_EQ (s_check (replay, sender, 1, 1000 - 255), FRESH);
    CHECK_EQ (s_check (replay, sender, 1, 1000 - 256), STALE);
    CHECK_EQ (s_commit (replay, sender, 1, 1000 - 256), STALE);
    CHECK_EQ (s_commit (replay, sender, 1, 1000 - 255), FRESH);
    CHECK_EQ (s_check (replay, sender, 1, 1000 - 255), SEEN);
    CHECK_EQ (s_check (replay, sender, 1, 1000 - 254), FRESH);

    //  One step up and the oldest falls out of the window.
    CHECK_EQ (s_commit (replay, sender, 1, 1001), FRESH);
    CHECK_EQ (s_check (replay, sender, 1, 1000 - 255), STALE);
    CHECK_EQ (s_check (replay, sender, 1, 1001 - 255), FRESH);
    CHECK_EQ (s_check (replay, sender, 1, 1000), SEEN);
    CHECK_EQ (s_check (replay, sender, 1, 1001), SEEN);

    //  Below 256 the window reaches down to 0 and nothing is stale.
    uint8_t young[16];
    s_sender (young, 5);
    CHECK_EQ (s_commit (replay, young, 1, 255), FRESH);
    CHECK_EQ (s_check (replay, young, 1, 0), FRESH);
    CHECK_EQ (s_commit (replay, young, 1, 0), FRESH);
    CHECK_EQ (s_check (replay, young, 1, 0), SEEN);
    CHECK_EQ (s_commit (replay, young, 1, 256), FRESH);
    CHECK_EQ (s_check (replay, young, 1, 0), STALE);
    shoal_replay_destroy (&replay);
}

static void
sequence_numbers_at_the_top_of_the_range (void)
{
    shoal_replay_t *replay = shoal_replay_new (8);
    uint8_t sender[16];
    s_sender (sender, 6);
    CHECK_EQ (s_commit (replay, sender, 1, UINT64_MAX - 300), FRESH);
    CHECK_EQ (s_commit (replay, sender, 1, UINT64_MAX), FRESH);
    CHECK_EQ (s_check (replay, sender, 1, UINT64_MAX), SEEN);
    CHECK_EQ (s_check (replay, sender, 1, UINT64_MAX - 255), FRESH);
    CHECK_EQ (s_check (replay, sender, 1, UINT64_MAX - 256), STALE);
    CHECK_EQ (s_check (replay, sender, 1, UINT64_MAX - 300), STALE);
    CHECK_EQ (s_check (replay, sender, 1, 1), STALE);
    shoal_replay_destroy (&replay);
}

//  Whether seq was accepted in the sliding test: a scattered pattern, plus
//  the edges of every 64-bit word of the window.
static bool
s_pattern (uint64_t top, uint64_t seq)
{
    uint64_t back = top - seq;
    if (back % 64 == 0 || back % 64 == 63)
        return true;
    return ((seq * 2654435761u) >> 7) & 1;
}

static void
sliding_by_any_distance_keeps_exactly_the_right_numbers (void)
{
    const uint64_t shifts[] = {
        1,   2,   3,   31,  63,  64,  65,  100, 127, 128,  129,        191,
        192, 193, 200, 254, 255, 256, 257, 320, 511, 1000, 1ull << 40,
    };
    const uint64_t top = 100000;
    uint8_t sender[16];
    s_sender (sender, 7);
    for (size_t i = 0; i < sizeof shifts / sizeof shifts[0]; i++) {
        shoal_replay_t *replay = shoal_replay_new (4);
        //  The top first, then the pattern below it, so the pattern is
        //  recorded without sliding.
        s_commit (replay, sender, 1, top);
        for (uint64_t back = 1; back < SHOAL_REPLAY_WINDOW; back++)
            if (s_pattern (top, top - back))
                CHECK_EQ (s_commit (replay, sender, 1, top - back), FRESH);

        uint64_t new_top = top + shifts[i];
        CHECK_EQ (s_commit (replay, sender, 1, new_top), FRESH);
        int wrong = 0;
        for (uint64_t back = 0; back < SHOAL_REPLAY_WINDOW + 64; back++) {
            uint64_t seq = new_top - back;
            int expected;
            if (back >= SHOAL_REPLAY_WINDOW)
                expected = STALE;
            else if (seq == new_top || seq == top)
                expected = SEEN;
            else if (seq < top && top - seq < SHOAL_REPLAY_WINDOW && s_pattern (top, seq))
                expected = SEEN;
            else
                expected = FRESH;
            if ((int) s_check (replay, sender, 1, seq) != expected && wrong++ == 0)
                fprintf (stderr, "  shift %llu: seq top-%llu is %d, expected %d\n",
                         (unsigned long long) shifts[i], (unsigned long long) back,
                         (int) s_check (replay, sender, 1, seq), expected);
        }
        CHECK_EQ (wrong, 0);
        shoal_replay_destroy (&replay);
    }
}

//  Numbers that arrive in ascending order with gaps slide the window many
//  times by small steps; the gaps must stay open.
static void
gaps_stay_open_while_sliding (void)
{
    shoal_replay_t *replay = shoal_replay_new (4);
    uint8_t sender[16];
    s_sender (sender, 8);
    for (uint64_t seq = 1; seq <= 600; seq++)
        if (seq % 3 != 0)
            CHECK_EQ (s_commit (replay, sender, 1, seq), FRESH);
    for (uint64_t seq = 600 - SHOAL_REPLAY_WINDOW + 1; seq <= 600; seq++)
        CHECK_EQ (s_check (replay, sender, 1, seq), seq % 3 == 0 ? FRESH : SEEN);
    for (uint64_t seq = 600 - SHOAL_REPLAY_WINDOW + 1; seq <= 600; seq++)
        if (seq % 3 == 0)
            CHECK_EQ (s_commit (replay, sender, 1, seq), FRESH);
    for (uint64_t seq = 600 - SHOAL_REPLAY_WINDOW + 1; seq <= 600; seq++)
        CHECK_EQ (s_check (replay, sender, 1, seq), SEEN);
    shoal_replay_destroy (&replay);
}

static void
new_incarnation_starts_a_new_window (void)
{
    shoal_replay_t *replay = shoal_replay_new (8);
    uint8_t sender[16];
    s_sender (sender, 9);
    for (uint64_t seq = 1; seq <= 500; seq++)
        s_commit (replay, sender, 7, seq);

    //  The restarted sender numbers from 1 again.
    CHECK_EQ (s_check (replay, sender, 8, 1), FRESH);
    CHECK_EQ (s_commit (replay, sender, 8, 1), FRESH);
    CHECK_EQ (s_check (replay, sender, 8, 1), SEEN);
    CHECK_EQ (s_check (replay, sender, 8, 2), FRESH);
    //  Nothing of the old window carries over.
    CHECK_EQ (s_check (replay, sender, 8, 500), FRESH);
    CHECK_EQ (s_check (replay, sender, 8, 499), FRESH);

    //  The old life is over, whatever its numbers.
    CHECK_EQ (s_check (replay, sender, 7, 1), STALE);
    CHECK_EQ (s_check (replay, sender, 7, 500), STALE);
    CHECK_EQ (s_check (replay, sender, 7, 501), STALE);
    CHECK_EQ (s_commit (replay, sender, 7, 10000), STALE);
    CHECK_EQ (s_check (replay, sender, 8, 2), FRESH);

    //  A jump of several incarnations is fine too.
    CHECK_EQ (s_commit (replay, sender, 20, 3), FRESH);
    CHECK_EQ (s_check (replay, sender, 8, 1), STALE);
    CHECK_EQ (s_check (replay, sender, 20, 3), SEEN);
    CHECK_EQ (s_check (replay, sender, 20, 2), FRESH);
    shoal_replay_destroy (&replay);
}

static void
purpose_separates_windows (void)
{
    shoal_replay_t *replay = shoal_replay_new (8);
    uint8_t sender[16];
    s_sender (sender, 10);
    CHECK_EQ (shoal_replay_commit (replay, sender, 1, 1, 5), FRESH);
    CHECK_EQ (shoal_replay_check (replay, sender, 1, 1, 5), SEEN);
    CHECK_EQ (shoal_replay_check (replay, sender, 2, 1, 5), FRESH);
    CHECK_EQ (shoal_replay_check (replay, sender, 3, 1, 5), FRESH);
    CHECK_EQ (shoal_replay_commit (replay, sender, 2, 1, 5), FRESH);
    CHECK_EQ (shoal_replay_commit (replay, sender, 3, 1, 1000), FRESH);
    //  A jump on one purpose leaves the others' windows where they were.
    CHECK_EQ (shoal_replay_check (replay, sender, 1, 1, 4), FRESH);
    CHECK_EQ (shoal_replay_check (replay, sender, 2, 1, 4), FRESH);
    CHECK_EQ (shoal_replay_check (replay, sender, 3, 1, 4), STALE);
    //  And so does a new incarnation.
    CHECK_EQ (shoal_replay_commit (replay, sender, 2, 2, 1), FRESH);
    CHECK_EQ (shoal_replay_check (replay, sender, 1, 1, 5), SEEN);
    CHECK_EQ (shoal_replay_check (replay, sender, 2, 1, 5), STALE);
    shoal_replay_destroy (&replay);
}

//  Senders whose ids share their first bytes hash alike; they must still be
//  told apart by the whole id.
static void
senders_that_hash_alike_keep_separate_windows (void)
{
    shoal_replay_t *replay = shoal_replay_new (16);
    uint8_t senders[12][16];
    for (int i = 0; i < 12; i++) {
        s_sender_in_family (senders[i], 1, (uint64_t) i);
        CHECK_EQ (s_commit (replay, senders[i], 1, 100 + (uint64_t) i), FRESH);
    }
    for (int i = 0; i < 12; i++)
        for (int j = 0; j < 12; j++)
            CHECK_EQ (s_check (replay, senders[i], 1, 100 + (uint64_t) j), i == j ? SEEN : FRESH);
    CHECK_EQ (shoal_replay_evictions (replay), 0);
    shoal_replay_destroy (&replay);
}

//  ---------------------------------------------------------------------
//  Capacity and eviction

static void
full_table_forgets_least_recently_heard_sender (void)
{
    shoal_replay_t *replay = shoal_replay_new (4);
    uint8_t senders[5][16];
    for (int i = 0; i < 5; i++)
        s_sender (senders[i], 100 + (uint64_t) i);
    for (int i = 0; i < 4; i++)
        CHECK_EQ (s_commit (replay, senders[i], 1, 1), FRESH);
    //  Hearing from sender 0 again makes sender 1 the least recent.
    CHECK_EQ (s_commit (replay, senders[0], 1, 2), FRESH);
    CHECK_EQ (shoal_replay_evictions (replay), 0);

    CHECK_EQ (s_commit (replay, senders[4], 1, 1), FRESH);
    CHECK_EQ (shoal_replay_evictions (replay), 1);
    CHECK_EQ (s_check (replay, senders[1], 1, 1), FRESH);
    CHECK_EQ (s_check (replay, senders[0], 1, 1), SEEN);
    CHECK_EQ (s_check (replay, senders[0], 1, 2), SEEN);
    CHECK_EQ (s_check (replay, senders[2], 1, 1), SEEN);
    CHECK_EQ (s_check (replay, senders[3], 1, 1), SEEN);
    CHECK_EQ (s_check (replay, senders[4], 1, 1), SEEN);

    //  Checks and replays are not "hearing from": sender 2 stays the oldest.
    CHECK_EQ (s_check (replay, senders[2], 1, 5), FRESH);
    CHECK_EQ (s_commit (replay, senders[2], 1, 1), SEEN);
    CHECK_EQ (s_commit (replay, senders[1], 1, 1), FRESH);
    CHECK_EQ (shoal_replay_evictions (replay), 2);
    CHECK_EQ (s_check (replay, senders[2], 1, 1), FRESH);
    CHECK_EQ (s_check (replay, senders[3], 1, 1), SEEN);
    shoal_replay_destroy (&replay);
}

static void
capacity_one_holds_the_latest_sender (void)
{
    shoal_replay_t *replay = shoal_replay_new (1);
    uint8_t first[16], second[16];
    s_sender (first, 200);
    s_sender (second, 201);
    CHECK_EQ (s_commit (replay, first, 1, 1), FRESH);
    CHECK_EQ (s_commit (replay, first, 1, 2), FRESH);
    CHECK_EQ (shoal_replay_evictions (replay), 0);
    CHECK_EQ (s_commit (replay, second, 1, 1), FRESH);
    CHECK_EQ (shoal_replay_evictions (replay), 1);
    CHECK_EQ (s_check (replay, first, 1, 1), FRESH);
    CHECK_EQ (s_check (replay, second, 1, 1), SEEN);
    shoal_replay_destroy (&replay);
}

//  Evicting a sender from the middle of a run of senders that want the same
//  slot must leave every other one of them findable. The newcomer wants
//  another slot, so it cannot paper over a hole left in the run.
static void
eviction_from_a_collision_chain_keeps_the_rest (void)
{
    enum { CAPACITY = 6 };
    for (int victim = 0; victim < CAPACITY; victim++) {
        shoal_replay_t *replay = shoal_replay_new (CAPACITY);
        uint8_t senders[CAPACITY][16], newcomer[16];
        for (int i = 0; i < CAPACITY; i++)
            s_sender_in_family (senders[i], 2, 1000 + (uint64_t) i);
        s_sender (newcomer, 77);
        for (int i = 0; i < CAPACITY; i++)
            s_commit (replay, senders[i], 1, 1);
        //  Everyone but the victim is heard from again.
        for (int i = 0; i < CAPACITY; i++)
            if (i != victim)
                s_commit (replay, senders[i], 1, 2);
        CHECK_EQ (s_commit (replay, newcomer, 1, 1), FRESH);
        CHECK_EQ (shoal_replay_evictions (replay), 1);
        CHECK_EQ (s_check (replay, newcomer, 1, 1), SEEN);
        for (int i = 0; i < CAPACITY; i++)
            CHECK_EQ (s_check (replay, senders[i], 1, 1), i == victim ? FRESH : SEEN);
        shoal_replay_destroy (&replay);
    }
}

//  ---------------------------------------------------------------------
//  Churn against a reference model
//
//  The model keeps the same rules in the plainest form: a list of senders
//  searched one by one, each with the list of numbers it accepted.

enum { MODEL_CAPACITY = 64 };

typedef struct {
    uint8_t sender[16];
    uint8_t purpose;
    uint64_t incarnation;
    uint64_t top;
    uint64_t accepted[SHOAL_REPLAY_WINDOW];
    size_t accepted_count;
    uint64_t last_heard;
} s_model_entry_t;

typedef struct {
    s_model_entry_t entries[MODEL_CAPACITY];
    size_t count;
    uint64_t clock;
    uint64_t evictions;
} s_model_t;

static s_model_entry_t *
s_model_find (s_model_t *model, const uint8_t sender[16], uint8_t purpose)
{
    for (size_t i = 0; i < model->count; i++)
        if (model->entries[i].purpose == purpose &&
            memcmp (model->entries[i].sender, sender, 16) == 0)
            return &model->entries[i];
    return NULL;
}

static int
s_model_verdict (const s_model_entry_t *entry, uint64_t incarnation, uint64_t seq)
{
    if (!entry || incarnation > entry->incarnation)
        return FRESH;
    if (incarnation < entry->incarnation)
        return STALE;
    if (seq > entry->top)
        return FRESH;
    if (entry->top - seq >= SHOAL_REPLAY_WINDOW)
        return STALE;
    for (size_t i = 0; i < entry->accepted_count; i++)
        if (entry->accepted[i] == seq)
            return SEEN;
    return FRESH;
}

static int
s_model_commit (s_model_t *model, const uint8_t sender[16], uint8_t purpose, uint64_t incarnation,
                uint64_t seq)
{
    s_model_entry_t *entry = s_model_find (model, sender, purpose);
    int verdict = s_model_verdict (entry, incarnation, seq);
    if (verdict != FRESH)
        return verdict;
    if (!entry) {
        if (model->count == MODEL_CAPACITY) {
            size_t oldest = 0;
            for (size_t i = 1; i < model->count; i++)
                if (model->entries[i].last_heard < model->entries[oldest].last_heard)
                    oldest = i;
            model->entries[oldest] = model->entries[--model->count];
            model->evictions++;
        }
        entry = &model->entries[model->count++];
        memset (entry, 0, sizeof *entry);
        memcpy (entry->sender, sender, 16);
        entry->purpose = purpose;
        entry->incarnation = incarnation;
        entry->top = seq;
    }
    if (incarnation > entry->incarnation) {
        entry->incarnation = incarnation;
        entry->top = seq;
        entry->accepted_count = 0;
    } else if (seq > entry->top)
        entry->top = seq;
    //  Keep only the numbers still inside the window.
    size_t kept = 0;
    for (size_t i = 0; i < entry->accepted_count; i++)
        if (entry->top - entry->accepted[i] < SHOAL_REPLAY_WINDOW)
            entry->accepted[kept++] = entry->accepted[i];
    entry->accepted[kept++] = seq;
    entry->accepted_count = kept;
    entry->last_heard = ++model->clock;
    return FRESH;
}

//  What the churn generator remembers of each sender, to make up numbers
//  that land on every rule: new, replayed, reordered, stale, restarted.
typedef struct {
    uint8_t id[16];
    uint64_t incarnation;
    uint64_t seq[3];  //  highest number made up, per purpose
    uint64_t last[3]; //  the number of the last commit, per purpose
} s_sender_state_t;

static void
churn_matches_reference_model (void)
{
    enum { SENDERS = 6000, HOT = 16, WARM = 40, OPS = 300000 };
    static s_sender_state_t senders[SENDERS];
    static s_model_t model;
    memset (&model, 0, sizeof model);
    uint64_t rng = 20240611;
    for (int i = 0; i < SENDERS; i++) {
        //  A quarter share the first bytes of their id with a few others.
        if (i % 4 == 0)
            s_sender_in_family (senders[i].id, 3 + (uint64_t) (i % 5), (uint64_t) i);
        else
            s_sender (senders[i].id, 50000 + (uint64_t) i);
        senders[i].incarnation = 1 + splitmix_next (&rng) % 3;
        for (int p = 0; p < 3; p++)
            senders[i].seq[p] = 1 + splitmix_next (&rng) % 1000;
    }
    shoal_replay_t *replay = shoal_replay_new (MODEL_CAPACITY);
    int mismatches = 0, fresh = 0, seen = 0, stale = 0;
    for (int op = 0; op < OPS; op++) {
        //  Most traffic comes from a few senders that fit in the table,
        //  some from a set a little larger than it, so that senders are
        //  forgotten and come back, and the rest from anyone.
        uint64_t roll = splitmix_next (&rng) % 100;
        uint64_t pick = splitmix_next (&rng);
        int index = roll < 60   ? (int) (pick % HOT)
                    : roll < 85 ? (int) (pick % WARM)
                                : (int) (pick % SENDERS);
        s_sender_state_t *sender = &senders[index];
        uint8_t purpose = (uint8_t) (1 + splitmix_next (&rng) % 3);

        uint64_t *top = &sender->seq[purpose - 1];
        uint64_t incarnation = sender->incarnation;
        uint64_t kind = splitmix_next (&rng) % 100;
        if (kind < 2) {
            sender->incarnation++;
            for (int p = 0; p < 3; p++)
                sender->seq[p] = 1 + splitmix_next (&rng) % 4;
            incarnation = sender->incarnation;
        } else if (kind < 10 && incarnation > 0)
            incarnation--;
        uint64_t seq;
        uint64_t how = splitmix_next (&rng) % 100;
        if (how < 30)
            seq = *top + 1 + splitmix_next (&rng) % 3;
        else if (how < 35)
            seq = *top + splitmix_next (&rng) % 700;
        else if (how < 55)
            seq = sender->last[purpose - 1];
        else {
            //  Mostly just behind the newest, where numbers were accepted
            //  and come again; sometimes far behind, or at the window's edge.
            uint64_t back = how < 75   ? splitmix_next (&rng) % 12
                            : how < 90 ? splitmix_next (&rng) % 600
                                       : 252 + splitmix_next (&rng) % 6;
            seq = *top > back ? *top - back : 0;
        }
        if (seq > *top)
            *top = seq;

        int expected, actual;
        if (splitmix_next (&rng) % 2) {
            expected =
                s_model_verdict (s_model_find (&model, sender->id, purpose), incarnation, seq);
            actual = (int) shoal_replay_check (replay, sender->id, purpose, incarnation, seq);
        } else {
            expected = s_model_commit (&model, sender->id, purpose, incarnation, seq);
            actual = (int) shoal_replay_commit (replay, sender->id, purpose, incarnation, seq);
            if (expected == FRESH)
                sender->last[purpose - 1] = seq;
        }
        fresh += expected == FRESH;
        seen += expected == SEEN;
        stale += expected == STALE;
        if (actual != expected && mismatches++ < 5)
            fprintf (stderr, "  op %d: sender %d purpose %u inc %llu seq %llu: %d, model %d\n", op,
                     index, purpose, (unsigned long long) incarnation, (unsigned long long) seq,
                     actual, expected);

        //  Every so often, everyone the model holds must still be found,
        //  with the top of its window seen.
        if (op % 5000 == 4999)
            for (size_t i = 0; i < model.count; i++) {
                const s_model_entry_t *entry = &model.entries[i];
                if (shoal_replay_check (replay, entry->sender, entry->purpose, entry->incarnation,
                                        entry->top) != SHOAL_REPLAY_SEEN &&
                    mismatches++ < 5)
                    fprintf (stderr, "  op %d: a held sender was lost\n", op);
            }
    }
    CHECK_EQ (mismatches, 0);
    CHECK_EQ (shoal_replay_evictions (replay), model.evictions);
    //  The churn reached every rule, and evicted a great deal.
    CHECK (fresh > OPS / 10);
    CHECK (seen > OPS / 20);
    CHECK (stale > OPS / 30);
    CHECK (model.evictions > 10000);
    printf ("  churn: %d fresh, %d seen, %d stale, %llu evictions\n", fresh, seen, stale,
            (unsigned long long) model.evictions);
    shoal_replay_destroy (&replay);
}

int
main (void)
{
    RUN (new_refuses_zero_capacity);
    RUN (unknown_sender_is_fresh);
    RUN (check_does_not_record_and_commit_does);
    RUN (each_number_is_accepted_once);
    RUN (the_window_holds_256_numbers_below_the_top);
    RUN (sequence_numbers_at_the_top_of_the_range);
    RUN (sliding_by_any_distance_keeps_exactly_the_right_numbers);
    RUN (gaps_stay_open_while_sliding);
    RUN (new_incarnation_starts_a_new_window);
    RUN (purpose_separates_windows);
    RUN (senders_that_hash_alike_keep_separate_windows);
    RUN (full_table_forgets_least_recently_heard_sender);
    RUN (capacity_one_holds_the_latest_sender);
    RUN (eviction_from_a_collision_chain_keeps_the_rest);
    RUN (churn_matches_reference_model);
    return TEST_DONE ();
}

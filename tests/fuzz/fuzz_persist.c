/*  tests/fuzz/fuzz_persist.c: decoding the records of a node's data
    directory (node/persist.h).

    The input is one payload, as a damaged disk, a buggy build or a later
    release may have left it, and it is decoded as each of the three
    records. A refusal must come with a reason naming the record, leave the
    output empty, and never be for want of room in the arena the decoder
    sized itself. A record accepted must hold the format's invariants, which
    the encoder checks: it must encode again, no longer than the input
    (msgpack-c writes every value in its shortest form, and the decoder
    takes nothing beyond the record), and that encoding must decode to the
    same record and encode to the same bytes. The input itself may differ
    from its re-encoding: like the wire, the decoder takes any msgpack width
    of a value.
*/

#include "tests/fuzz/fuzz.h"

#include "node/persist.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

//  A refusal's reason: a string, naming the record, and not the arena's.
//  The wire's decoder ends its reason with "arena of N bytes is full" when
//  the arena is; a quoted label key may say anything, but never ends one.
static void
s_require_reason (const char *why, size_t why_size, const char *record)
{
    static const char full[] = "bytes is full";
    FUZZ_REQUIRE (memchr (why, '\0', why_size), "a %s refusal's reason is not a string", record);
    FUZZ_REQUIRE (strncmp (why, record, strlen (record)) == 0 && why[strlen (record)] == ':',
                  "a %s refusal's reason does not name it: \"%s\"", record, why);
    size_t length = strlen (why);
    FUZZ_REQUIRE (length < sizeof full - 1 || strcmp (why + length - (sizeof full - 1), full) != 0,
                  "a %s decode ran out of its arena: \"%s\"", record, why);
}

//  The re-encoding of an accepted input: no longer than it, and a fixed
//  point once decoded and encoded again (checked by the callers).
static void
s_require_encoding (int rc, const char *why, const char *record, size_t size, size_t input_size)
{
    FUZZ_REQUIRE (rc == 0, "an accepted %s does not encode: %s", record, why);
    FUZZ_REQUIRE (size <= input_size, "an accepted %s of %zu bytes encodes in %zu", record,
                  input_size, size);
}

static void
s_require_same_bytes (const uint8_t *a, size_t a_size, const uint8_t *b, size_t b_size,
                      const char *record)
{
    FUZZ_REQUIRE (a_size == b_size && memcmp (a, b, a_size) == 0,
                  "a %s encodes as %zu bytes, and decoded and encoded again as %zu other bytes",
                  record, a_size, b_size);
}

//  ---------------------------------------------------------------------
//  The identity

static void
s_identity (const uint8_t *data, size_t size)
{
    char why[256];
    shoal_persist_identity_t identity, again;
    if (shoal_persist_identity_decode (data, size, &identity, why, sizeof why) != 0) {
        s_require_reason (why, sizeof why, "identity");
        FUZZ_REQUIRE (identity.life == 0, "a refused identity is not left empty");
        return;
    }
    uint8_t *first, *second;
    size_t first_size, second_size;
    int rc = shoal_persist_identity_encode (&identity, &first, &first_size, why, sizeof why);
    s_require_encoding (rc, why, "identity", first_size, size);
    FUZZ_REQUIRE (shoal_persist_identity_decode (first, first_size, &again, why, sizeof why) == 0,
                  "an identity's encoding does not decode: %s", why);
    FUZZ_REQUIRE (memcmp (&identity.id, &again.id, sizeof identity.id) == 0 &&
                      identity.life == again.life && identity.incarnation == again.incarnation,
                  "an identity's encoding decodes as another identity");
    FUZZ_REQUIRE (shoal_persist_identity_encode (&again, &second, &second_size, why, sizeof why) ==
                      0,
                  "an identity decoded again does not encode: %s", why);
    s_require_same_bytes (first, first_size, second, second_size, "identity");
    free (first);
    free (second);
}

//  ---------------------------------------------------------------------
//  The elector's saved state

static bool
s_elector_equal (const shoal_elector_saved_t *a, const shoal_elector_saved_t *b)
{
    return a->term == b->term && memcmp (&a->leader, &b->leader, sizeof a->leader) == 0 &&
           a->voters_version == b->voters_version && a->voter_count == b->voter_count &&
           (a->voter_count == 0 ||
            memcmp (a->voters, b->voters, a->voter_count * sizeof *a->voters) == 0);
}

static void
s_elector (const uint8_t *data, size_t size)
{
    char why[256];
    shoal_persist_elector_t elector, again;
    if (shoal_persist_elector_decode (data, size, &elector, why, sizeof why) != 0) {
        s_require_reason (why, sizeof why, "elector");
        FUZZ_REQUIRE (!elector.arena.base && !elector.saved.voters && !elector.saved.voter_count,
                      "a refused elector state is not left empty");
        return;
    }
    uint8_t *first, *second;
    size_t first_size, second_size;
    int rc = shoal_persist_elector_encode (&elector.saved, &first, &first_size, why, sizeof why);
    s_require_encoding (rc, why, "elector", first_size, size);
    FUZZ_REQUIRE (shoal_persist_elector_decode (first, first_size, &again, why, sizeof why) == 0,
                  "an elector state's encoding does not decode: %s", why);
    FUZZ_REQUIRE (s_elector_equal (&elector.saved, &again.saved),
                  "an elector state's encoding decodes as another state");
    FUZZ_REQUIRE (
        shoal_persist_elector_encode (&again.saved, &second, &second_size, why, sizeof why) == 0,
        "an elector state decoded again does not encode: %s", why);
    s_require_same_bytes (first, first_size, second, second_size, "elector");
    free (first);
    free (second);
    shoal_persist_elector_release (&elector);
    shoal_persist_elector_release (&again);
}

//  ---------------------------------------------------------------------
//  The job specs

static bool
s_spec_equal (const shoal_jobspec_t *a, const shoal_jobspec_t *b)
{
    if (strcmp (a->name, b->name) != 0 || a->parallelism != b->parallelism ||
        a->stateful != b->stateful || a->fenced != b->fenced || a->weight != b->weight ||
        a->require_count != b->require_count || strcmp (a->command, b->command) != 0)
        return false;
    for (uint32_t i = 0; i < a->require_count; i++)
        if (strcmp (a->require[i].key, b->require[i].key) != 0 ||
            strcmp (a->require[i].value, b->require[i].value) != 0)
            return false;
    return true;
}

static bool
s_jobs_equal (const shoal_jobs_saved_t *a, const shoal_jobs_saved_t *b)
{
    if (a->term != b->term || a->version != b->version || a->count != b->count)
        return false;
    for (size_t i = 0; i < a->count; i++)
        if (!s_spec_equal (&a->specs[i], &b->specs[i]))
            return false;
    return true;
}

static void
s_jobs (const uint8_t *data, size_t size)
{
    char why[256];
    shoal_persist_jobs_t jobs, again;
    if (shoal_persist_jobs_decode (data, size, &jobs, why, sizeof why) != 0) {
        s_require_reason (why, sizeof why, "jobs");
        FUZZ_REQUIRE (!jobs.arena.base && !jobs.saved.specs && !jobs.saved.count,
                      "refused job specs are not left empty");
        return;
    }
    uint8_t *first, *second;
    size_t first_size, second_size;
    int rc = shoal_persist_jobs_encode (&jobs.saved, &first, &first_size, why, sizeof why);
    s_require_encoding (rc, why, "jobs", first_size, size);
    FUZZ_REQUIRE (shoal_persist_jobs_decode (first, first_size, &again, why, sizeof why) == 0,
                  "job specs' encoding does not decode: %s", why);
    FUZZ_REQUIRE (s_jobs_equal (&jobs.saved, &again.saved),
                  "job specs' encoding decodes as other specs");
    FUZZ_REQUIRE (
        shoal_persist_jobs_encode (&again.saved, &second, &second_size, why, sizeof why) == 0,
        "job specs decoded again do not encode: %s", why);
    s_require_same_bytes (first, first_size, second, second_size, "jobs");
    free (first);
    free (second);
    shoal_persist_jobs_release (&jobs);
    shoal_persist_jobs_release (&again);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    s_identity (data, size);
    s_elector (data, size);
    s_jobs (data, size);
    return 0;
}

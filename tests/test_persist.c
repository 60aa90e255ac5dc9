/*  tests/test_persist.c: the records a node keeps in its data directory
    (node/persist.h).

    Each record comes back from its payload exactly as it went in, at its
    smallest and its largest. Then payloads written by hand with msgpack-c,
    as a buggy or later build might have left them, are refused, each with
    a reason that names what is wrong: cut short at every length, another
    format version, ids and lives that cannot be, voters and specs out of
    order or repeated, strings over their limit or not UTF-8, bytes after
    the record. What the decoders refuse the encoders refuse too, so that a
    node never writes a file it cannot read back.
*/

#include "node/persist.h"
#include "tests/samples.h"
#include "tests/test.h"

#include <msgpack.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

//  ---------------------------------------------------------------------
//  Helpers

//  A payload written by hand, to say what no encoder of ours would.
typedef struct {
    msgpack_sbuffer buffer;
    msgpack_packer packer;
} s_raw_t;

//  Starts a payload: an array of fields after the version.
static msgpack_packer *
s_raw_begin (s_raw_t *raw, uint32_t fields, uint64_t version)
{
    msgpack_sbuffer_init (&raw->buffer);
    msgpack_packer_init (&raw->packer, &raw->buffer, msgpack_sbuffer_write);
    msgpack_pack_array (&raw->packer, 1 + fields);
    msgpack_pack_uint64 (&raw->packer, version);
    return &raw->packer;
}

static void
s_raw_id (msgpack_packer *packer, shoal_id_t id)
{
    msgpack_pack_bin_with_body (packer, id.bytes, SHOAL_ID_SIZE);
}

static void
s_raw_str (msgpack_packer *packer, const char *text)
{
    msgpack_pack_str_with_body (packer, text, strlen (text));
}

static shoal_id_t
s_zero_id (void)
{
    return (shoal_id_t){ { 0 } };
}

//  An identity payload with these fields.
static void
s_raw_identity (s_raw_t *raw, shoal_id_t id, uint64_t life, uint64_t incarnation)
{
    msgpack_packer *packer = s_raw_begin (raw, 3, SHOAL_PERSIST_VERSION);
    s_raw_id (packer, id);
    msgpack_pack_uint64 (packer, life);
    msgpack_pack_uint64 (packer, incarnation);
}

//  An elector payload with count voters, each an id of one repeated byte.
static void
s_raw_elector (s_raw_t *raw, const uint8_t *fills, uint32_t count)
{
    msgpack_packer *packer = s_raw_begin (raw, 4, SHOAL_PERSIST_VERSION);
    msgpack_pack_uint64 (packer, 9);
    s_raw_id (packer, shoal_sample_id (0x02));
    msgpack_pack_uint64 (packer, 4);
    msgpack_pack_array (packer, count);
    for (uint32_t i = 0; i < count; i++)
        s_raw_id (packer, shoal_sample_id (fills[i]));
}

//  One job spec as the wire carries it, with at most one label.
typedef struct {
    const char *name;
    uint64_t parallelism;
    const char *key; //  NULL: no label
    const char *value;
    const char *command;
} s_raw_spec_t;

static void
s_raw_jobs (s_raw_t *raw, const s_raw_spec_t *specs, uint32_t count)
{
    msgpack_packer *packer = s_raw_begin (raw, 3, SHOAL_PERSIST_VERSION);
    msgpack_pack_uint64 (packer, 3);
    msgpack_pack_uint64 (packer, 17);
    msgpack_pack_array (packer, count);
    for (uint32_t i = 0; i < count; i++) {
        const s_raw_spec_t *spec = &specs[i];
        msgpack_pack_array (packer, 6);
        s_raw_str (packer, spec->name);
        msgpack_pack_uint64 (packer, spec->parallelism);
        msgpack_pack_false (packer);
        msgpack_pack_uint64 (packer, 1);
        msgpack_pack_map (packer, spec->key ? 1 : 0);
        if (spec->key) {
            s_raw_str (packer, spec->key);
            s_raw_str (packer, spec->value);
        }
        s_raw_str (packer, spec->command ? spec->command : "");
    }
}

static const uint8_t *
s_raw_data (const s_raw_t *raw)
{
    return (const uint8_t *) raw->buffer.data;
}

static void
s_raw_end (s_raw_t *raw)
{
    msgpack_sbuffer_destroy (&raw->buffer);
}

//  Decodes size bytes of data as each record, and checks that each refuses
//  them with a reason containing want and leaves its output empty.
static void
s_check_identity_refuses (const uint8_t *data, size_t size, const char *want)
{
    char why[256] = "";
    shoal_persist_identity_t identity;
    CHECK_EQ (shoal_persist_identity_decode (data, size, &identity, why, sizeof why), -1);
    CHECK_CONTAINS (why, want);
    CHECK_EQ (identity.life, 0);
}

static void
s_check_elector_refuses (const uint8_t *data, size_t size, const char *want)
{
    char why[256] = "";
    shoal_persist_elector_t elector;
    CHECK_EQ (shoal_persist_elector_decode (data, size, &elector, why, sizeof why), -1);
    CHECK_CONTAINS (why, want);
    CHECK (elector.saved.voters == NULL && elector.saved.voter_count == 0);
    CHECK (elector.arena.base == NULL);
}

static void
s_check_jobs_refuses (const uint8_t *data, size_t size, const char *want)
{
    char why[256] = "";
    shoal_persist_jobs_t jobs;
    CHECK_EQ (shoal_persist_jobs_decode (data, size, &jobs, why, sizeof why), -1);
    CHECK_CONTAINS (why, want);
    CHECK (jobs.saved.specs == NULL && jobs.saved.count == 0);
    CHECK (jobs.arena.base == NULL);
}

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

//  Encodes saved, decodes the payload, and checks that the same record
//  comes back; the decoded record is left in jobs for more checks.
static void
s_jobs_round_trip (const shoal_jobs_saved_t *saved, shoal_persist_jobs_t *jobs)
{
    char why[256] = "";
    uint8_t *data;
    size_t size;
    CHECK_EQ (shoal_persist_jobs_encode (saved, &data, &size, why, sizeof why), 0);
    CHECK_STR (why, "");
    CHECK_EQ (shoal_persist_jobs_decode (data, size, jobs, why, sizeof why), 0);
    CHECK_STR (why, "");
    //  The record must not point into the payload, which is gone now.
    memset (data, 0xee, size);
    free (data);
    CHECK_EQ (jobs->saved.term, saved->term);
    CHECK_EQ (jobs->saved.version, saved->version);
    CHECK_EQ (jobs->saved.count, saved->count);
    bool same = jobs->saved.count == saved->count;
    for (size_t i = 0; same && i < saved->count; i++)
        same = s_spec_equal (&jobs->saved.specs[i], &saved->specs[i]);
    CHECK (same);
}

//  A reason for a payload cut short: the reader ran out of bytes, or a
//  count says more items than bytes are left.
static bool
s_says_cut_short (const char *why)
{
    return strstr (why, "truncated") || strstr (why, "bytes left");
}

//  ---------------------------------------------------------------------
//  The identity

static void
an_identity_comes_back_and_its_bytes_are_as_documented (void)
{
    shoal_persist_identity_t identity = { shoal_sample_id (0xab), 7, 300 };
    char why[256] = "";
    uint8_t *data;
    size_t size;
    CHECK_EQ (shoal_persist_identity_encode (&identity, &data, &size, why, sizeof why), 0);

    //  [1, bin16 id, 7, 300], as docs/store.md shows it.
    uint8_t expected[] = { 0x94, 0x01, 0xc4, 0x10, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab,
                           0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0x07, 0xcd, 0x01, 0x2c };
    CHECK_EQ (size, sizeof expected);
    CHECK (size == sizeof expected && memcmp (data, expected, size) == 0);

    shoal_persist_identity_t back;
    CHECK_EQ (shoal_persist_identity_decode (data, size, &back, why, sizeof why), 0);
    CHECK (memcmp (back.id.bytes, identity.id.bytes, SHOAL_ID_SIZE) == 0);
    CHECK_EQ (back.life, 7);
    CHECK_EQ (back.incarnation, 300);
    free (data);
}

static void
an_identity_keeps_the_largest_numbers (void)
{
    shoal_persist_identity_t identity = { shoal_sample_id (0xff), UINT64_MAX, UINT64_MAX };
    char why[256] = "";
    uint8_t *data;
    size_t size;
    CHECK_EQ (shoal_persist_identity_encode (&identity, &data, &size, why, sizeof why), 0);
    shoal_persist_identity_t back;
    CHECK_EQ (shoal_persist_identity_decode (data, size, &back, why, sizeof why), 0);
    CHECK (back.life == UINT64_MAX && back.incarnation == UINT64_MAX);
    free (data);
}

static void
an_identity_without_an_id_is_refused (void)
{
    shoal_persist_identity_t identity = { s_zero_id (), 1, 0 };
    char why[256] = "";
    uint8_t *data = (uint8_t *) 1;
    size_t size = 1;
    CHECK_EQ (shoal_persist_identity_encode (&identity, &data, &size, why, sizeof why), -1);
    CHECK_CONTAINS (why, "identity: the node id is all zero");
    CHECK (data == NULL && size == 0);

    s_raw_t raw;
    s_raw_identity (&raw, s_zero_id (), 1, 0);
    s_check_identity_refuses (s_raw_data (&raw), raw.buffer.size, "the node id is all zero");
    s_raw_end (&raw);
}

static void
an_identity_of_life_zero_is_refused (void)
{
    shoal_persist_identity_t identity = { shoal_sample_id (0x01), 0, 5 };
    char why[256] = "";
    uint8_t *data;
    size_t size;
    CHECK_EQ (shoal_persist_identity_encode (&identity, &data, &size, why, sizeof why), -1);
    CHECK_CONTAINS (why, "identity: life 0");

    s_raw_t raw;
    s_raw_identity (&raw, shoal_sample_id (0x01), 0, 5);
    s_check_identity_refuses (s_raw_data (&raw), raw.buffer.size, "life 0");
    s_raw_end (&raw);
}

static void
an_id_of_another_size_is_refused (void)
{
    s_raw_t raw;
    msgpack_packer *packer = s_raw_begin (&raw, 3, SHOAL_PERSIST_VERSION);
    msgpack_pack_bin_with_body (packer, "fifteen bytes!!", 15);
    msgpack_pack_uint64 (packer, 1);
    msgpack_pack_uint64 (packer, 1);
    s_check_identity_refuses (s_raw_data (&raw), raw.buffer.size, "id: 15 bytes, an id has 16");
    s_raw_end (&raw);
}

//  ---------------------------------------------------------------------
//  The elector's saved state

static void
an_elector_state_comes_back (void)
{
    shoal_id_t voters[] = { shoal_sample_id (0x01), shoal_sample_id (0x05),
                            shoal_sample_id (0x09) };
    shoal_elector_saved_t saved = { 12, shoal_sample_id (0x05), 4, 3, voters };
    char why[256] = "";
    uint8_t *data;
    size_t size;
    CHECK_EQ (shoal_persist_elector_encode (&saved, &data, &size, why, sizeof why), 0);
    shoal_persist_elector_t elector;
    CHECK_EQ (shoal_persist_elector_decode (data, size, &elector, why, sizeof why), 0);
    memset (data, 0xee, size);
    free (data);
    CHECK_EQ (elector.saved.term, 12);
    CHECK (memcmp (elector.saved.leader.bytes, saved.leader.bytes, SHOAL_ID_SIZE) == 0);
    CHECK_EQ (elector.saved.voters_version, 4);
    CHECK_EQ (elector.saved.voter_count, 3);
    CHECK (elector.saved.voter_count == 3 &&
           memcmp (elector.saved.voters, voters, sizeof voters) == 0);

    //  The elector takes what was decoded back as its saved state.
    shoal_elector_config_t config;
    shoal_elector_config_lan (&config);
    shoal_id_t self = shoal_sample_id (0x05);
    shoal_elector_t *restarted = shoal_elector_new (&config, &self, 1, &elector.saved, 0);
    CHECK (restarted != NULL);
    shoal_elector_destroy (&restarted);

    shoal_persist_elector_release (&elector);
    CHECK (elector.arena.base == NULL && elector.saved.voters == NULL);
    shoal_persist_elector_release (&elector);
}

static void
an_elector_state_without_voters_or_leader_comes_back (void)
{
    shoal_elector_saved_t saved = { 0, s_zero_id (), 0, 0, NULL };
    char why[256] = "";
    uint8_t *data;
    size_t size;
    CHECK_EQ (shoal_persist_elector_encode (&saved, &data, &size, why, sizeof why), 0);
    //  [1, 0, bin16 zero, 0, []]
    CHECK_EQ (size, 23);
    CHECK (size == 23 && data[0] == 0x95 && data[1] == 0x01 && data[22] == 0x90);
    shoal_persist_elector_t elector;
    CHECK_EQ (shoal_persist_elector_decode (data, size, &elector, why, sizeof why), 0);
    CHECK_EQ (elector.saved.voter_count, 0);
    CHECK (elector.saved.voters == NULL);
    CHECK (memcmp (elector.saved.leader.bytes, saved.leader.bytes, SHOAL_ID_SIZE) == 0);
    shoal_persist_elector_release (&elector);
    free (data);
}

static void
the_most_voters_come_back_and_one_more_is_refused (void)
{
    shoal_id_t *voters = calloc (SHOAL_VOTERS_MAX + 1, sizeof *voters);
    for (uint32_t i = 0; i <= SHOAL_VOTERS_MAX; i++) {
        voters[i].bytes[0] = (uint8_t) (i >> 8);
        voters[i].bytes[1] = (uint8_t) i;
        voters[i].bytes[15] = 1;
    }
    shoal_elector_saved_t saved = { UINT64_MAX, voters[7], UINT64_MAX, SHOAL_VOTERS_MAX, voters };
    char why[256] = "";
    uint8_t *data;
    size_t size;
    CHECK_EQ (shoal_persist_elector_encode (&saved, &data, &size, why, sizeof why), 0);
    shoal_persist_elector_t elector;
    CHECK_EQ (shoal_persist_elector_decode (data, size, &elector, why, sizeof why), 0);
    CHECK_EQ (elector.saved.voter_count, SHOAL_VOTERS_MAX);
    CHECK (elector.saved.voter_count == SHOAL_VOTERS_MAX &&
           memcmp (elector.saved.voters, voters, SHOAL_VOTERS_MAX * sizeof *voters) == 0);
    CHECK (elector.saved.term == UINT64_MAX && elector.saved.voters_version == UINT64_MAX);
    shoal_persist_elector_release (&elector);
    free (data);

    saved.voter_count = SHOAL_VOTERS_MAX + 1;
    CHECK_EQ (shoal_persist_elector_encode (&saved, &data, &size, why, sizeof why), -1);
    CHECK_CONTAINS (why, "elector: voters: 16385 items, limit 16384");

    s_raw_t raw;
    msgpack_packer *packer = s_raw_begin (&raw, 4, SHOAL_PERSIST_VERSION);
    msgpack_pack_uint64 (packer, 1);
    s_raw_id (packer, s_zero_id ());
    msgpack_pack_uint64 (packer, 1);
    msgpack_pack_array (packer, SHOAL_VOTERS_MAX + 1);
    for (uint32_t i = 0; i < SHOAL_VOTERS_MAX; i++)
        s_raw_id (packer, voters[i]);
    //  The count is refused before any voter is read: the last is not one.
    msgpack_pack_nil (packer);
    s_check_elector_refuses (s_raw_data (&raw), raw.buffer.size, "voters: 16385 items, limit");
    s_raw_end (&raw);
    free (voters);
}

static void
voters_out_of_order_are_refused (void)
{
    shoal_id_t voters[] = { shoal_sample_id (0x01), shoal_sample_id (0x09),
                            shoal_sample_id (0x05) };
    shoal_elector_saved_t saved = { 1, s_zero_id (), 1, 3, voters };
    char why[256] = "";
    uint8_t *data;
    size_t size;
    CHECK_EQ (shoal_persist_elector_encode (&saved, &data, &size, why, sizeof why), -1);
    CHECK_CONTAINS (why, "elector: voters[2] sorts before voters[1]");

    s_raw_t raw;
    s_raw_elector (&raw, (const uint8_t[]){ 0x01, 0x09, 0x05 }, 3);
    s_check_elector_refuses (s_raw_data (&raw), raw.buffer.size, "voters[2] sorts before");
    s_raw_end (&raw);
}

static void
a_voter_given_twice_is_refused (void)
{
    shoal_id_t voters[] = { shoal_sample_id (0x01), shoal_sample_id (0x05),
                            shoal_sample_id (0x05) };
    shoal_elector_saved_t saved = { 1, s_zero_id (), 1, 3, voters };
    char why[256] = "";
    uint8_t *data;
    size_t size;
    CHECK_EQ (shoal_persist_elector_encode (&saved, &data, &size, why, sizeof why), -1);
    CHECK_CONTAINS (why, "elector: voters[2] repeats voters[1]");

    s_raw_t raw;
    s_raw_elector (&raw, (const uint8_t[]){ 0x01, 0x05, 0x05 }, 3);
    s_check_elector_refuses (s_raw_data (&raw), raw.buffer.size, "voters[2] repeats voters[1]");
    s_raw_end (&raw);
}

static void
a_voter_without_an_id_is_refused (void)
{
    shoal_id_t voters[] = { s_zero_id (), shoal_sample_id (0x05) };
    shoal_elector_saved_t saved = { 1, s_zero_id (), 1, 2, voters };
    char why[256] = "";
    uint8_t *data;
    size_t size;
    CHECK_EQ (shoal_persist_elector_encode (&saved, &data, &size, why, sizeof why), -1);
    CHECK_CONTAINS (why, "elector: voters[0] is all zero");

    s_raw_t raw;
    s_raw_elector (&raw, (const uint8_t[]){ 0x00, 0x05 }, 2);
    s_check_elector_refuses (s_raw_data (&raw), raw.buffer.size, "voters[0] is all zero");
    s_raw_end (&raw);
}

static void
a_field_of_another_type_is_refused (void)
{
    s_raw_t raw;
    msgpack_packer *packer = s_raw_begin (&raw, 4, SHOAL_PERSIST_VERSION);
    msgpack_pack_int64 (packer, -1);
    s_raw_id (packer, s_zero_id ());
    msgpack_pack_uint64 (packer, 1);
    msgpack_pack_array (packer, 0);
    s_check_elector_refuses (s_raw_data (&raw), raw.buffer.size,
                             "term: negative integer (expected unsigned integer)");
    s_raw_end (&raw);

    packer = s_raw_begin (&raw, 4, SHOAL_PERSIST_VERSION);
    msgpack_pack_uint64 (packer, 1);
    s_raw_id (packer, s_zero_id ());
    msgpack_pack_uint64 (packer, 1);
    msgpack_pack_array (packer, 1);
    s_raw_str (packer, "a string, not an id");
    s_check_elector_refuses (s_raw_data (&raw), raw.buffer.size,
                             "elector: voters[0]: wrong type (expected binary)");
    s_raw_end (&raw);

    packer = s_raw_begin (&raw, 3, SHOAL_PERSIST_VERSION);
    msgpack_pack_uint64 (packer, 1);
    msgpack_pack_uint64 (packer, 1);
    msgpack_pack_array (packer, 1);
    msgpack_pack_array (packer, 6);
    s_raw_str (packer, "a");
    msgpack_pack_uint64 (packer, 1);
    msgpack_pack_uint64 (packer, 1); //  stateful is a boolean
    msgpack_pack_uint64 (packer, 1);
    msgpack_pack_map (packer, 0);
    s_raw_str (packer, "");
    s_check_jobs_refuses (s_raw_data (&raw), raw.buffer.size,
                          "jobs: specs[0]: stateful: wrong type (expected boolean)");
    s_raw_end (&raw);
}

//  ---------------------------------------------------------------------
//  The job specs

static void
job_specs_come_back (void)
{
    shoal_label_t gpu[] = { { "gpu", "a100" }, { "zone", "eu-1" } };
    shoal_jobspec_t specs[] = {
        { "ingest", 3, true, 2, 2, gpu, "/usr/bin/ingest --fast", true },
        { "report", 1, false, 1, 0, NULL, "", false },
        { "z\xc3\xa9ro", 65535, false, UINT32_MAX, 0, NULL, "\xf0\x9f\x90\x9f", false },
    };
    shoal_jobs_saved_t saved = { 4, 19, 3, specs };
    shoal_persist_jobs_t jobs;
    s_jobs_round_trip (&saved, &jobs);
    shoal_persist_jobs_release (&jobs);
    CHECK (jobs.arena.base == NULL && jobs.saved.specs == NULL && jobs.saved.count == 0);
    shoal_persist_jobs_release (&jobs);
}

//  fenced came after the first format: a spec of six fields (as written
//  before it) reads as not fenced, an unfenced spec is still written in
//  six, and a seventh field of another type is refused.
static void
a_spec_written_before_fenced_reads_as_unfenced (void)
{
    for (int fields = 6; fields <= 8; fields++) {
        s_raw_t raw;
        msgpack_packer *packer = s_raw_begin (&raw, 3, SHOAL_PERSIST_VERSION);
        msgpack_pack_uint64 (packer, 1);
        msgpack_pack_uint64 (packer, 1);
        msgpack_pack_array (packer, 1);
        msgpack_pack_array (packer, (size_t) fields);
        s_raw_str (packer, "a");
        msgpack_pack_uint64 (packer, 1);
        msgpack_pack_false (packer);
        msgpack_pack_uint64 (packer, 1);
        msgpack_pack_map (packer, 0);
        s_raw_str (packer, "");
        if (fields >= 7)
            msgpack_pack_true (packer);
        if (fields == 8)
            msgpack_pack_uint64 (packer, 1);
        if (fields == 8) {
            s_check_jobs_refuses (s_raw_data (&raw), raw.buffer.size, "8 fields, expected 6 to 7");
            s_raw_end (&raw);
            continue;
        }
        char why[256] = "";
        shoal_persist_jobs_t jobs;
        CHECK_EQ (
            shoal_persist_jobs_decode (s_raw_data (&raw), raw.buffer.size, &jobs, why, sizeof why),
            0);
        CHECK_EQ (jobs.saved.count, 1);
        CHECK (jobs.saved.specs[0].fenced == (fields == 7));
        shoal_persist_jobs_release (&jobs);
        s_raw_end (&raw);
    }
    //  An unfenced spec is written as before: an array of six.
    shoal_jobspec_t spec = { "a", 1, false, 1, 0, NULL, "", false };
    for (int fenced = 0; fenced <= 1; fenced++) {
        spec.fenced = fenced;
        msgpack_sbuffer buffer;
        msgpack_sbuffer_init (&buffer);
        msgpack_packer packer;
        msgpack_packer_init (&packer, &buffer, msgpack_sbuffer_write);
        CHECK_EQ (shoal_wire_jobspec_encode (&packer, &spec, NULL), 0);
        CHECK (buffer.size > 0);
        CHECK_EQ ((uint8_t) buffer.data[0], fenced ? 0x97 : 0x96);
        msgpack_sbuffer_destroy (&buffer);
    }
}

static void
no_job_specs_come_back_as_none (void)
{
    shoal_jobs_saved_t saved = { 0, 0, 0, NULL };
    shoal_persist_jobs_t jobs;
    s_jobs_round_trip (&saved, &jobs);
    CHECK (jobs.saved.specs == NULL);

    //  The job specs take what was decoded back as their saved state.
    shoal_jobs_config_t config;
    shoal_jobs_config_lan (&config);
    shoal_id_t self = shoal_sample_id (0x01);
    shoal_jobs_t *restarted = shoal_jobs_new (&config, &self, &jobs.saved, 0);
    CHECK (restarted != NULL);
    shoal_jobs_destroy (&restarted);
    shoal_persist_jobs_release (&jobs);
}

//  A spec with every field at its largest: a name of 64 bytes, the most
//  labels of the longest keys and values, a command of 4096 bytes of
//  two-byte characters, the largest parallelism and weight.
static void
job_specs_at_every_limit_come_back (void)
{
    static char keys[SHOAL_LABELS_MAX][SHOAL_LABEL_MAX + 1];
    static char values[SHOAL_LABELS_MAX][SHOAL_LABEL_MAX + 1];
    static char name[SHOAL_NAME_MAX + 1];
    static char command[SHOAL_COMMAND_MAX + 1];
    shoal_label_t labels[SHOAL_LABELS_MAX];
    for (int i = 0; i < SHOAL_LABELS_MAX; i++) {
        memset (keys[i], 'k', SHOAL_LABEL_MAX);
        memset (values[i], 'v', SHOAL_LABEL_MAX);
        keys[i][0] = (char) ('a' + i);
        labels[i] = (shoal_label_t){ keys[i], values[i] };
    }
    memset (name, 'n', SHOAL_NAME_MAX);
    for (int i = 0; i < SHOAL_COMMAND_MAX; i += 2)
        memcpy (command + i, "\xc3\xa9", 2);
    shoal_jobspec_t spec = {
        name, SHOAL_PARALLELISM_MAX, true, UINT32_MAX, SHOAL_LABELS_MAX, labels, command, false
    };
    shoal_jobs_saved_t saved = { UINT64_MAX, UINT64_MAX, 1, &spec };
    shoal_persist_jobs_t jobs;
    s_jobs_round_trip (&saved, &jobs);
    shoal_persist_jobs_release (&jobs);
}

static void
the_most_job_specs_come_back_and_one_more_is_refused (void)
{
    static char names[SHOAL_JOBS_MAX + 1][16];
    static shoal_jobspec_t specs[SHOAL_JOBS_MAX + 1];
    for (int i = 0; i <= SHOAL_JOBS_MAX; i++) {
        snprintf (names[i], sizeof names[i], "job-%05d", i);
        specs[i] = (shoal_jobspec_t){ names[i], 1, false, 1, 0, NULL, "run", false };
    }
    shoal_jobs_saved_t saved = { 2, 3, SHOAL_JOBS_MAX, specs };
    shoal_persist_jobs_t jobs;
    s_jobs_round_trip (&saved, &jobs);
    shoal_persist_jobs_release (&jobs);

    char why[256] = "";
    uint8_t *data;
    size_t size;
    saved.count = SHOAL_JOBS_MAX + 1;
    CHECK_EQ (shoal_persist_jobs_encode (&saved, &data, &size, why, sizeof why), -1);
    CHECK_CONTAINS (why, "jobs: specs: 4097 items, limit 4096");

    static s_raw_spec_t raw_specs[SHOAL_JOBS_MAX + 1];
    for (int i = 0; i <= SHOAL_JOBS_MAX; i++)
        raw_specs[i] = (s_raw_spec_t){ names[i], 1, NULL, NULL, "" };
    //  The count is refused before any spec is read: the last is broken.
    raw_specs[SHOAL_JOBS_MAX].name = "\xff";
    s_raw_t raw;
    s_raw_jobs (&raw, raw_specs, SHOAL_JOBS_MAX + 1);
    s_check_jobs_refuses (s_raw_data (&raw), raw.buffer.size, "specs: 4097 items, limit 4096");
    s_raw_end (&raw);
}

static void
job_specs_out_of_order_are_refused (void)
{
    shoal_jobspec_t specs[] = {
        { "beta", 1, false, 1, 0, NULL, "", false },
        { "alpha", 1, false, 1, 0, NULL, "", false },
    };
    shoal_jobs_saved_t saved = { 1, 1, 2, specs };
    char why[256] = "";
    uint8_t *data;
    size_t size;
    CHECK_EQ (shoal_persist_jobs_encode (&saved, &data, &size, why, sizeof why), -1);
    CHECK_CONTAINS (why, "jobs: specs[1] sorts before specs[0]");

    s_raw_t raw;
    s_raw_jobs (
        &raw,
        (const s_raw_spec_t[]){ { "beta", 1, NULL, NULL, "" }, { "alpha", 1, NULL, NULL, "" } }, 2);
    s_check_jobs_refuses (s_raw_data (&raw), raw.buffer.size, "specs[1] sorts before specs[0]");
    s_raw_end (&raw);
}

static void
a_job_name_given_twice_is_refused (void)
{
    shoal_jobspec_t specs[] = {
        { "alpha", 1, false, 1, 0, NULL, "", false },
        { "alpha", 2, false, 1, 0, NULL, "", false },
    };
    shoal_jobs_saved_t saved = { 1, 1, 2, specs };
    char why[256] = "";
    uint8_t *data;
    size_t size;
    CHECK_EQ (shoal_persist_jobs_encode (&saved, &data, &size, why, sizeof why), -1);
    CHECK_CONTAINS (why, "jobs: specs[1] repeats the name of specs[0]");

    s_raw_t raw;
    s_raw_jobs (
        &raw,
        (const s_raw_spec_t[]){ { "alpha", 1, NULL, NULL, "" }, { "alpha", 2, NULL, NULL, "" } },
        2);
    s_check_jobs_refuses (s_raw_data (&raw), raw.buffer.size, "specs[1] repeats the name");
    s_raw_end (&raw);
}

//  Each string of a spec one byte over its limit, encoded and hand-made.
static void
strings_over_their_limit_are_refused (void)
{
    static char long_name[SHOAL_NAME_MAX + 2];
    static char long_label[SHOAL_LABEL_MAX + 2];
    static char long_command[SHOAL_COMMAND_MAX + 2];
    memset (long_name, 'n', SHOAL_NAME_MAX + 1);
    memset (long_label, 'l', SHOAL_LABEL_MAX + 1);
    memset (long_command, 'c', SHOAL_COMMAND_MAX + 1);
    struct {
        s_raw_spec_t spec;
        const char *want;
    } cases[] = {
        { { long_name, 1, NULL, NULL, "" }, "specs[0]: name: 65 bytes, limit 64" },
        { { "a", 1, long_label, "v", "" }, "specs[0]: require[0]: 65 bytes, limit 64" },
        { { "a", 1, "k", long_label, "" }, "specs[0]: require[0]: 65 bytes, limit 64" },
        { { "a", 1, NULL, NULL, long_command }, "specs[0]: command: 4097 bytes, limit 4096" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const s_raw_spec_t *raw_spec = &cases[i].spec;
        shoal_label_t label = { raw_spec->key, raw_spec->value };
        shoal_jobspec_t spec = { raw_spec->name,    1,    false, 1, raw_spec->key ? 1 : 0, &label,
                                 raw_spec->command, false };
        shoal_jobs_saved_t saved = { 1, 1, 1, &spec };
        char why[256] = "";
        uint8_t *data;
        size_t size;
        CHECK_EQ (shoal_persist_jobs_encode (&saved, &data, &size, why, sizeof why), -1);
        CHECK_CONTAINS (why, cases[i].want);

        s_raw_t raw;
        s_raw_jobs (&raw, raw_spec, 1);
        s_check_jobs_refuses (s_raw_data (&raw), raw.buffer.size, cases[i].want);
        s_raw_end (&raw);
    }
}

static void
text_that_is_not_utf8_is_refused (void)
{
    struct {
        s_raw_spec_t spec;
        const char *want;
    } cases[] = {
        { { "\xff", 1, NULL, NULL, "" }, "specs[0]: name: not UTF-8" },
        { { "a", 1, NULL, NULL, "\xc0\x80" }, "specs[0]: command: not UTF-8" },     //  overlong NUL
        { { "a", 1, "k", "\xed\xa0\x80", "" }, "specs[0]: require[0]: not UTF-8" }, // surrogate
        { { "a", 1, "\xe2\x82", "v", "" }, "specs[0]: require[0]: not UTF-8" },     // cut short
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        s_raw_t raw;
        s_raw_jobs (&raw, &cases[i].spec, 1);
        s_check_jobs_refuses (s_raw_data (&raw), raw.buffer.size, cases[i].want);
        s_raw_end (&raw);
    }
    //  The encoder refuses it too.
    shoal_jobspec_t spec = { "a", 1, false, 1, 0, NULL, "\xc0\x80", false };
    shoal_jobs_saved_t saved = { 1, 1, 1, &spec };
    char why[256] = "";
    uint8_t *data;
    size_t size;
    CHECK_EQ (shoal_persist_jobs_encode (&saved, &data, &size, why, sizeof why), -1);
    CHECK_CONTAINS (why, "jobs: specs[0]: command: not UTF-8");
}

static void
a_parallelism_over_the_limit_is_refused (void)
{
    s_raw_t raw;
    s_raw_jobs (&raw, (const s_raw_spec_t[]){ { "a", SHOAL_PARALLELISM_MAX + 1, NULL, NULL, "" } },
                1);
    s_check_jobs_refuses (s_raw_data (&raw), raw.buffer.size,
                          "specs[0]: parallelism: 65536, limit 65535");
    s_raw_end (&raw);
}

//  ---------------------------------------------------------------------
//  Every record

//  A valid payload of each record, from its encoder.
static void
s_payload (int record, uint8_t **data, size_t *size)
{
    static shoal_id_t voters[3];
    voters[0] = shoal_sample_id (0x01);
    voters[1] = shoal_sample_id (0x02);
    voters[2] = shoal_sample_id (0x03);
    static shoal_label_t labels[] = { { "gpu", "yes" } };
    static shoal_jobspec_t specs[] = {
        { "a", 2, true, 3, 1, labels, "run a", false },
        { "b", 1, false, 1, 0, NULL, "", false },
    };
    shoal_persist_identity_t identity = { shoal_sample_id (0x42), 3, 70000 };
    shoal_elector_saved_t elector = { 1000, voters[1], 2, 3, voters };
    shoal_jobs_saved_t jobs = { 5, 300, 2, specs };
    char why[256] = "";
    int rc = record == 0   ? shoal_persist_identity_encode (&identity, data, size, why, sizeof why)
             : record == 1 ? shoal_persist_elector_encode (&elector, data, size, why, sizeof why)
                           : shoal_persist_jobs_encode (&jobs, data, size, why, sizeof why);
    CHECK_EQ (rc, 0);
}

//  Decodes as record; returns what the decoder returned, with its reason.
static int
s_decode (int record, const uint8_t *data, size_t size, char *why, size_t why_size)
{
    shoal_persist_identity_t identity;
    shoal_persist_elector_t elector;
    shoal_persist_jobs_t jobs;
    int rc;
    if (record == 0)
        rc = shoal_persist_identity_decode (data, size, &identity, why, why_size);
    else if (record == 1) {
        rc = shoal_persist_elector_decode (data, size, &elector, why, why_size);
        shoal_persist_elector_release (&elector);
    } else {
        rc = shoal_persist_jobs_decode (data, size, &jobs, why, why_size);
        shoal_persist_jobs_release (&jobs);
    }
    return rc;
}

static const char *s_records[] = { "identity", "elector", "jobs" };

static void
a_payload_cut_short_at_any_length_is_refused (void)
{
    for (int record = 0; record < 3; record++) {
        uint8_t *data;
        size_t size;
        s_payload (record, &data, &size);
        CHECK (size > 20);
        char why[256];
        strcpy (why, "unchanged");
        CHECK_EQ (s_decode (record, data, size, why, sizeof why), 0);
        int refused = 0, explained = 0;
        for (size_t length = 0; length < size; length++) {
            //  A copy of exactly length bytes, so that ASan sees any read past it.
            uint8_t *cut = malloc (length ? length : 1);
            memcpy (cut, data, length);
            why[0] = '\0';
            if (s_decode (record, length ? cut : NULL, length, why, sizeof why) == -1)
                refused++;
            if (strncmp (why, s_records[record], strlen (s_records[record])) == 0 &&
                s_says_cut_short (why))
                explained++;
            else
                fprintf (stderr, "  %s cut to %zu bytes: \"%s\"\n", s_records[record], length, why);
            free (cut);
        }
        CHECK_EQ (refused, size);
        CHECK_EQ (explained, size);
        free (data);
    }
}

static void
bytes_after_the_record_are_refused (void)
{
    for (int record = 0; record < 3; record++) {
        uint8_t *data;
        size_t size;
        s_payload (record, &data, &size);
        uint8_t *longer = malloc (size + 2);
        memcpy (longer, data, size);
        longer[size] = 0xc0;
        longer[size + 1] = 0x00;
        char why[256] = "";
        CHECK_EQ (s_decode (record, longer, size + 2, why, sizeof why), -1);
        CHECK_CONTAINS (why, s_records[record]);
        CHECK_CONTAINS (why, "2 bytes after the record");
        free (longer);
        free (data);
    }
}

//  A later format, whatever its fields, is refused as such; so is a
//  version that is not a number.
//  Fields missing or one too many, each said as such rather than as
//  truncation or trailing bytes.
static void
a_payload_of_other_fields_is_refused (void)
{
    static const uint32_t fields[] = { 3, 4, 3 };
    for (int record = 0; record < 3; record++)
        for (uint32_t count = 0; count <= fields[record] + 1; count++) {
            if (count == fields[record])
                continue;
            s_raw_t raw;
            msgpack_packer *packer = s_raw_begin (&raw, count, SHOAL_PERSIST_VERSION);
            for (uint32_t i = 0; i < count; i++)
                msgpack_pack_uint64 (packer, 1);
            char why[256] = "", want[64];
            CHECK_EQ (s_decode (record, s_raw_data (&raw), raw.buffer.size, why, sizeof why), -1);
            snprintf (want, sizeof want, "%s: %u fields, expected %u", s_records[record], count,
                      fields[record]);
            CHECK_CONTAINS (why, want);
            s_raw_end (&raw);
        }
}

static void
an_unknown_format_version_is_refused (void)
{
    for (int record = 0; record < 3; record++) {
        uint8_t *data;
        size_t size;
        s_payload (record, &data, &size);
        CHECK (data[1] == SHOAL_PERSIST_VERSION);
        char why[256] = "";
        data[1] = 2;
        CHECK_EQ (s_decode (record, data, size, why, sizeof why), -1);
        CHECK_CONTAINS (why, "unknown format version 2 (this build reads 1)");
        data[1] = 0;
        CHECK_EQ (s_decode (record, data, size, why, sizeof why), -1);
        CHECK_CONTAINS (why, "unknown format version 0");
        data[1] = 0xa0; //  an empty string
        CHECK_EQ (s_decode (record, data, size, why, sizeof why), -1);
        CHECK_CONTAINS (why, "format version: wrong type");
        free (data);

        s_raw_t raw;
        msgpack_packer *packer = s_raw_begin (&raw, 7, 3);
        for (int i = 0; i < 7; i++)
            msgpack_pack_nil (packer);
        CHECK_EQ (s_decode (record, s_raw_data (&raw), raw.buffer.size, why, sizeof why), -1);
        CHECK_CONTAINS (why, "unknown format version 3");
        s_raw_end (&raw);
    }
}

static void
what_is_not_a_record_is_refused (void)
{
    static const struct {
        const char *bytes;
        size_t size;
        const char *want;
    } cases[] = {
        { "", 0, "payload: truncated (expected array)" },
        { "\x01", 1, "payload: wrong type (expected array)" },
        { "\x90", 1, "an empty array, without a format version" },
        { "\xdd\xff\xff\xff\xff\x01", 6, "payload: count exceeds the bytes left" },
    };
    for (int record = 0; record < 3; record++)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            char why[256] = "";
            const uint8_t *data = cases[i].size ? (const uint8_t *) cases[i].bytes : NULL;
            CHECK_EQ (s_decode (record, data, cases[i].size, why, sizeof why), -1);
            CHECK_CONTAINS (why, s_records[record]);
            CHECK_CONTAINS (why, cases[i].want);
        }
}

static void
a_refusal_needs_no_reason_buffer (void)
{
    uint8_t *data;
    size_t size;
    s_payload (2, &data, &size);
    data[1] = 9;
    CHECK_EQ (s_decode (2, data, size, NULL, 0), -1);
    CHECK_EQ (s_decode (1, data, size, NULL, 0), -1);
    CHECK_EQ (s_decode (0, data, size, NULL, 0), -1);
    char why[8];
    CHECK_EQ (s_decode (2, data, size, why, sizeof why), -1);
    CHECK_STR (why, "jobs: u");
    free (data);
}

int
main (void)
{
    RUN (an_identity_comes_back_and_its_bytes_are_as_documented);
    RUN (an_identity_keeps_the_largest_numbers);
    RUN (an_identity_without_an_id_is_refused);
    RUN (an_identity_of_life_zero_is_refused);
    RUN (an_id_of_another_size_is_refused);
    RUN (an_elector_state_comes_back);
    RUN (an_elector_state_without_voters_or_leader_comes_back);
    RUN (the_most_voters_come_back_and_one_more_is_refused);
    RUN (voters_out_of_order_are_refused);
    RUN (a_voter_given_twice_is_refused);
    RUN (a_voter_without_an_id_is_refused);
    RUN (a_field_of_another_type_is_refused);
    RUN (job_specs_come_back);
    RUN (a_spec_written_before_fenced_reads_as_unfenced);
    RUN (no_job_specs_come_back_as_none);
    RUN (job_specs_at_every_limit_come_back);
    RUN (the_most_job_specs_come_back_and_one_more_is_refused);
    RUN (job_specs_out_of_order_are_refused);
    RUN (a_job_name_given_twice_is_refused);
    RUN (strings_over_their_limit_are_refused);
    RUN (text_that_is_not_utf8_is_refused);
    RUN (a_parallelism_over_the_limit_is_refused);
    RUN (a_payload_cut_short_at_any_length_is_refused);
    RUN (bytes_after_the_record_are_refused);
    RUN (a_payload_of_other_fields_is_refused);
    RUN (an_unknown_format_version_is_refused);
    RUN (what_is_not_a_record_is_refused);
    RUN (a_refusal_needs_no_reason_buffer);
    return TEST_DONE ();
}

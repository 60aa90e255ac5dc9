/*  node/persist.c: the records of a node's data directory, as msgpack
    payloads (persist.h has the contract, docs/store.md the layout).

    Encoding goes through msgpack-c's packer into a growing buffer; decoding
    through the bounded reader (wire/reader.h), as the wire's codec does,
    so that no count in a damaged payload can make anything reserve more
    than the payload holds. A job spec goes through the wire's own codec.
    Each record's invariants are checked by one function, which the encoder
    and the decoder both call.
*/

#include "node/persist.h"
#include "node/why.h"

#include "wire/reader.h"

#include <assert.h>
#include <msgpack.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//  The fields of each record, after the format version.
#define IDENTITY_FIELDS 3 //  id, life, incarnation
#define ELECTOR_FIELDS  4 //  term, leader, voters_version, voters
#define JOBS_FIELDS     3 //  term, version, specs

#define ALIGN _Alignof(max_align_t)

//  What the decoded form of one job spec takes in an arena beyond its
//  text: the spec itself, in the specs array, and its labels array, padded
//  to alignment. The text takes at most the bytes it was encoded in (a
//  string of n bytes is at least n + 1 bytes of msgpack, and its copy n + 1
//  with the NUL), so a payload of size bytes holding count specs always
//  fits in size + count * SPEC_ARENA + ALIGN.
#define SPEC_ARENA (sizeof (shoal_jobspec_t) + SHOAL_LABELS_MAX * sizeof (shoal_label_t) + ALIGN)

//  ---------------------------------------------------------------------
//  Reasons

static int s_vrefuse (char *why, size_t why_size, const char *record, const char *format,
                      va_list args) __attribute__ ((format (printf, 4, 0)));
static int s_refuse (char *why, size_t why_size, const char *record, const char *format, ...)
    __attribute__ ((format (printf, 4, 5)));

//  Writes "record: " and the reason, formatted as vprintf would, into why.
//  Returns -1.
static int
s_vrefuse (char *why, size_t why_size, const char *record, const char *format, va_list args)
{
    char text[256];
    vsnprintf (text, sizeof text, format, args);
    return shoal_why (why, why_size, "%s: %s", record, text);
}

static int
s_refuse (char *why, size_t why_size, const char *record, const char *format, ...)
{
    va_list args;
    va_start (args, format);
    s_vrefuse (why, why_size, record, format, args);
    va_end (args);
    return -1;
}

//  ---------------------------------------------------------------------
//  Invariants, checked before encoding and after decoding

static bool
s_id_is_zero (const shoal_id_t *id)
{
    static const shoal_id_t zero;
    return memcmp (id->bytes, zero.bytes, SHOAL_ID_SIZE) == 0;
}

//  The wire's encoder writes a NULL string as an empty one; names compare
//  the same way.
static const char *
s_text (const char *text)
{
    return text ? text : "";
}

static int
s_identity_check (const shoal_persist_identity_t *identity, char *why, size_t why_size)
{
    if (s_id_is_zero (&identity->id))
        return s_refuse (why, why_size, "identity", "the node id is all zero");
    if (identity->life == 0)
        return s_refuse (why, why_size, "identity", "life 0, but lives count from 1");
    return 0;
}

static int
s_elector_check (const shoal_elector_saved_t *saved, char *why, size_t why_size)
{
    if (saved->voter_count > SHOAL_VOTERS_MAX)
        return s_refuse (why, why_size, "elector", "voters: %u items, limit %d", saved->voter_count,
                         SHOAL_VOTERS_MAX);
    if (saved->voter_count && !saved->voters)
        return s_refuse (why, why_size, "elector", "voters: %u items but no array",
                         saved->voter_count);
    for (uint32_t i = 0; i < saved->voter_count; i++) {
        if (s_id_is_zero (&saved->voters[i]))
            return s_refuse (why, why_size, "elector", "voters[%u] is all zero", i);
        int order =
            i ? memcmp (saved->voters[i - 1].bytes, saved->voters[i].bytes, SHOAL_ID_SIZE) : -1;
        if (order == 0)
            return s_refuse (why, why_size, "elector", "voters[%u] repeats voters[%u]", i, i - 1);
        if (order > 0)
            return s_refuse (why, why_size, "elector",
                             "voters[%u] sorts before voters[%u], but voters are sorted by id", i,
                             i - 1);
    }
    return 0;
}

static int
s_jobs_check (const shoal_jobs_saved_t *saved, char *why, size_t why_size)
{
    if (saved->count > SHOAL_JOBS_MAX)
        return s_refuse (why, why_size, "jobs", "specs: %zu items, limit %d", saved->count,
                         SHOAL_JOBS_MAX);
    if (saved->count && !saved->specs)
        return s_refuse (why, why_size, "jobs", "specs: %zu items but no array", saved->count);
    for (size_t i = 1; i < saved->count; i++) {
        int order = strcmp (s_text (saved->specs[i - 1].name), s_text (saved->specs[i].name));
        if (order == 0)
            return s_refuse (why, why_size, "jobs", "specs[%zu] repeats the name of specs[%zu]", i,
                             i - 1);
        if (order > 0)
            return s_refuse (why, why_size, "jobs",
                             "specs[%zu] sorts before specs[%zu], but specs are sorted by name", i,
                             i - 1);
    }
    return 0;
}

//  ---------------------------------------------------------------------
//  Encoder

typedef struct {
    msgpack_sbuffer buffer;
    msgpack_packer packer;
} s_encoder_t;

//  Starts the payload: its array header and the format version. The
//  encoder must not move until it is finished.
static int
s_encoder_start (s_encoder_t *self, uint32_t fields)
{
    msgpack_sbuffer_init (&self->buffer);
    msgpack_packer_init (&self->packer, &self->buffer, msgpack_sbuffer_write);
    return msgpack_pack_array (&self->packer, 1 + fields) ||
           msgpack_pack_uint64 (&self->packer, SHOAL_PERSIST_VERSION);
}

//  Hands the payload to the caller when rc is 0; the packer fails only
//  when the buffer cannot grow.
static int
s_encoder_finish (s_encoder_t *self, int rc, const char *record, uint8_t **data, size_t *size,
                  char *why, size_t why_size)
{
    if (rc != 0) {
        msgpack_sbuffer_destroy (&self->buffer);
        return s_refuse (why, why_size, record, "out of memory");
    }
    *size = self->buffer.size;
    *data = (uint8_t *) msgpack_sbuffer_release (&self->buffer);
    return 0;
}

//  An id is a 16-byte binary, as on the wire.
static int
s_pack_id (msgpack_packer *packer, const shoal_id_t *id)
{
    return msgpack_pack_bin_with_body (packer, id->bytes, SHOAL_ID_SIZE);
}

int
shoal_persist_identity_encode (const shoal_persist_identity_t *identity, uint8_t **data,
                               size_t *size, char *why, size_t why_size)
{
    assert (identity && data && size);
    *data = NULL;
    *size = 0;
    if (s_identity_check (identity, why, why_size))
        return -1;
    s_encoder_t encoder;
    msgpack_packer *packer = &encoder.packer;
    int rc = s_encoder_start (&encoder, IDENTITY_FIELDS) || s_pack_id (packer, &identity->id) ||
             msgpack_pack_uint64 (packer, identity->life) ||
             msgpack_pack_uint64 (packer, identity->incarnation);
    return s_encoder_finish (&encoder, rc, "identity", data, size, why, why_size);
}

int
shoal_persist_elector_encode (const shoal_elector_saved_t *saved, uint8_t **data, size_t *size,
                              char *why, size_t why_size)
{
    assert (saved && data && size);
    *data = NULL;
    *size = 0;
    if (s_elector_check (saved, why, why_size))
        return -1;
    s_encoder_t encoder;
    msgpack_packer *packer = &encoder.packer;
    int rc = s_encoder_start (&encoder, ELECTOR_FIELDS) ||
             msgpack_pack_uint64 (packer, saved->term) || s_pack_id (packer, &saved->leader) ||
             msgpack_pack_uint64 (packer, saved->voters_version) ||
             msgpack_pack_array (packer, saved->voter_count);
    for (uint32_t i = 0; i < saved->voter_count && rc == 0; i++)
        rc = s_pack_id (packer, &saved->voters[i]);
    return s_encoder_finish (&encoder, rc, "elector", data, size, why, why_size);
}

int
shoal_persist_jobs_encode (const shoal_jobs_saved_t *saved, uint8_t **data, size_t *size, char *why,
                           size_t why_size)
{
    assert (saved && data && size);
    *data = NULL;
    *size = 0;
    if (s_jobs_check (saved, why, why_size))
        return -1;
    s_encoder_t encoder;
    msgpack_packer *packer = &encoder.packer;
    int rc = s_encoder_start (&encoder, JOBS_FIELDS) || msgpack_pack_uint64 (packer, saved->term) ||
             msgpack_pack_uint64 (packer, saved->version) ||
             msgpack_pack_array (packer, (uint32_t) saved->count);
    for (size_t i = 0; i < saved->count && rc == 0; i++) {
        shoal_wire_error_t err;
        if (shoal_wire_jobspec_encode (packer, &saved->specs[i], &err) != 0) {
            msgpack_sbuffer_destroy (&encoder.buffer);
            return s_refuse (why, why_size, "jobs", "specs[%zu]: %s", i, err.text);
        }
    }
    return s_encoder_finish (&encoder, rc, "jobs", data, size, why, why_size);
}

//  ---------------------------------------------------------------------
//  Decoder

typedef struct {
    const char *record; //  what every reason starts with
    shoal_reader_t reader;
    char *why;
    size_t why_size;
} s_decoder_t;

static int s_fail (s_decoder_t *self, const char *format, ...)
    __attribute__ ((format (printf, 2, 3)));

static int
s_fail (s_decoder_t *self, const char *format, ...)
{
    va_list args;
    va_start (args, format);
    s_vrefuse (self->why, self->why_size, self->record, format, args);
    va_end (args);
    return -1;
}

//  A read of field (item index of it, when index is not -1) failed: the
//  reader says why ("truncated", "wrong type").
static int
s_read_fail (s_decoder_t *self, const char *field, long index, const char *expected)
{
    if (index >= 0)
        return s_fail (self, "%s[%ld]: %s (expected %s)", field, index, self->reader.why, expected);
    return s_fail (self, "%s: %s (expected %s)", field, self->reader.why, expected);
}

static void
s_decoder_init (s_decoder_t *self, const char *record, const uint8_t *data, size_t size, char *why,
                size_t why_size)
{
    self->record = record;
    shoal_reader_init (&self->reader, data, size);
    self->why = why;
    self->why_size = why_size;
}

//  Reads the array header and the format version. The version is checked
//  before the field count, so that a payload of a later format is reported
//  as such, whatever its fields.
static int
s_read_head (s_decoder_t *self, uint32_t fields)
{
    uint32_t count;
    uint64_t version;
    if (shoal_reader_array (&self->reader, &count))
        return s_read_fail (self, "payload", -1, "array");
    if (count == 0)
        return s_fail (self, "an empty array, without a format version");
    if (shoal_reader_uint (&self->reader, &version))
        return s_read_fail (self, "format version", -1, "unsigned integer");
    if (version != SHOAL_PERSIST_VERSION)
        return s_fail (self, "unknown format version %llu (this build reads %d)",
                       (unsigned long long) version, SHOAL_PERSIST_VERSION);
    if (count - 1 != fields)
        return s_fail (self, "%u fields, expected %u", count - 1, fields);
    return 0;
}

static int
s_read_uint (s_decoder_t *self, const char *field, uint64_t *value)
{
    if (shoal_reader_uint (&self->reader, value))
        return s_read_fail (self, field, -1, "unsigned integer");
    return 0;
}

static int
s_read_id (s_decoder_t *self, const char *field, long index, shoal_id_t *id)
{
    const uint8_t *bytes;
    uint32_t size;
    if (shoal_reader_bin (&self->reader, &bytes, &size))
        return s_read_fail (self, field, index, "binary");
    if (size != SHOAL_ID_SIZE) {
        if (index >= 0)
            return s_fail (self, "%s[%ld]: %u bytes, an id has %d", field, index, size,
                           SHOAL_ID_SIZE);
        return s_fail (self, "%s: %u bytes, an id has %d", field, size, SHOAL_ID_SIZE);
    }
    memcpy (id->bytes, bytes, SHOAL_ID_SIZE);
    return 0;
}

//  Reads a list's header; its count is checked against max and against the
//  bytes left (each item takes at least item_min) before anyone reserves
//  memory for it.
static int
s_read_list (s_decoder_t *self, const char *field, uint32_t max, size_t item_min, uint32_t *count)
{
    if (shoal_reader_array (&self->reader, count))
        return s_read_fail (self, field, -1, "array");
    if (*count > max)
        return s_fail (self, "%s: %u items, limit %u", field, *count, max);
    if (*count > shoal_reader_left (&self->reader) / item_min)
        return s_fail (self, "%s: %u items cannot fit in the %zu bytes left", field, *count,
                       shoal_reader_left (&self->reader));
    return 0;
}

static int
s_read_end (s_decoder_t *self)
{
    size_t left = shoal_reader_left (&self->reader);
    if (left)
        return s_fail (self, "%zu bytes after the record", left);
    return 0;
}

int
shoal_persist_identity_decode (const uint8_t *data, size_t size, shoal_persist_identity_t *identity,
                               char *why, size_t why_size)
{
    assert (identity);
    memset (identity, 0, sizeof *identity);
    s_decoder_t decoder;
    s_decoder_init (&decoder, "identity", data, size, why, why_size);
    shoal_persist_identity_t read = { 0 };
    if (s_read_head (&decoder, IDENTITY_FIELDS) || s_read_id (&decoder, "id", -1, &read.id) ||
        s_read_uint (&decoder, "life", &read.life) ||
        s_read_uint (&decoder, "incarnation", &read.incarnation) || s_read_end (&decoder) ||
        s_identity_check (&read, why, why_size))
        return -1;
    *identity = read;
    return 0;
}

int
shoal_persist_elector_decode (const uint8_t *data, size_t size, shoal_persist_elector_t *elector,
                              char *why, size_t why_size)
{
    assert (elector);
    memset (elector, 0, sizeof *elector);
    s_decoder_t decoder;
    s_decoder_init (&decoder, "elector", data, size, why, why_size);
    shoal_elector_saved_t read = { 0 };
    uint32_t count;
    if (s_read_head (&decoder, ELECTOR_FIELDS) || s_read_uint (&decoder, "term", &read.term) ||
        s_read_id (&decoder, "leader", -1, &read.leader) ||
        s_read_uint (&decoder, "voters_version", &read.voters_version) ||
        s_read_list (&decoder, "voters", SHOAL_VOTERS_MAX, 2 + SHOAL_ID_SIZE, &count))
        return -1;
    if (shoal_arena_init (&elector->arena, count * sizeof (shoal_id_t)) != 0)
        return s_fail (&decoder, "out of memory for %u voters", count);
    shoal_id_t *voters = shoal_arena_alloc (&elector->arena, count * sizeof *voters);
    assert (voters); //  the arena was made for them
    int rc = 0;
    for (uint32_t i = 0; i < count && rc == 0; i++)
        rc = s_read_id (&decoder, "voters", i, &voters[i]);
    read.voter_count = count;
    read.voters = count ? voters : NULL;
    if (rc || s_read_end (&decoder) || s_elector_check (&read, why, why_size)) {
        shoal_persist_elector_release (elector);
        return -1;
    }
    elector->saved = read;
    return 0;
}

void
shoal_persist_elector_release (shoal_persist_elector_t *elector)
{
    assert (elector);
    shoal_arena_release (&elector->arena);
    memset (&elector->saved, 0, sizeof elector->saved);
}

int
shoal_persist_jobs_decode (const uint8_t *data, size_t size, shoal_persist_jobs_t *jobs, char *why,
                           size_t why_size)
{
    assert (jobs);
    memset (jobs, 0, sizeof *jobs);
    s_decoder_t decoder;
    s_decoder_init (&decoder, "jobs", data, size, why, why_size);
    shoal_jobs_saved_t read = { 0 };
    uint32_t count;
    if (s_read_head (&decoder, JOBS_FIELDS) || s_read_uint (&decoder, "term", &read.term) ||
        s_read_uint (&decoder, "version", &read.version) ||
        s_read_list (&decoder, "specs", SHOAL_JOBS_MAX, 1, &count))
        return -1;
    if (shoal_arena_init (&jobs->arena, size + count * SPEC_ARENA + ALIGN) != 0)
        return s_fail (&decoder, "out of memory for %u specs", count);
    shoal_jobspec_t *specs = shoal_arena_alloc (&jobs->arena, count * sizeof *specs);
    assert (specs); //  the arena was made for them
    int rc = 0;
    for (uint32_t i = 0; i < count && rc == 0; i++) {
        shoal_wire_error_t err;
        if (shoal_wire_jobspec_decode (&decoder.reader, &jobs->arena, &specs[i], &err) != 0)
            rc = s_fail (&decoder, "specs[%u]: %s", i, err.text);
    }
    read.count = count;
    read.specs = count ? specs : NULL;
    if (rc || s_read_end (&decoder) || s_jobs_check (&read, why, why_size)) {
        shoal_persist_jobs_release (jobs);
        return -1;
    }
    jobs->saved = read;
    return 0;
}

void
shoal_persist_jobs_release (shoal_persist_jobs_t *jobs)
{
    assert (jobs);
    shoal_arena_release (&jobs->arena);
    memset (&jobs->saved, 0, sizeof jobs->saved);
}

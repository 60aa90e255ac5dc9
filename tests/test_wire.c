/*  tests/test_wire.c: the message codec (wire/wire.h).

    Round trips for every message type, then everything a hostile or broken
    peer can send: truncated, oversized, wrong-typed, wrong-version, deeply
    nested and over-limit input, each refused with an error naming the field.
*/

#include "tests/samples.h"
#include "tests/test.h"
#include "wire/wire.h"

#include <msgpack.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static shoal_arena_t arena;
static uint8_t buffer[SHOAL_FRAME_MAX];

//  Decodes on the carrier the message's type travels on, as a receiver
//  would, resetting the shared arena first. Input too broken to name a type
//  is decoded as a frame, the carrier that takes the most.
static int
s_decode (const uint8_t *data, size_t size, shoal_msg_t *msg, shoal_wire_error_t *err)
{
    shoal_purpose_t carrier = SHOAL_PURPOSE_FRAME;
    if (size >= 3 && (data[0] & 0xf0) == 0x90 && shoal_msg_purpose (data[2]))
        carrier = shoal_msg_purpose (data[2]);
    shoal_arena_reset (&arena);
    err->text[0] = '\0';
    return shoal_msg_decode (data, size, carrier, msg, &arena, err);
}

static bool
s_id_is (shoal_id_t id, uint8_t fill)
{
    shoal_id_t want = shoal_sample_id (fill);
    return memcmp (id.bytes, want.bytes, sizeof id.bytes) == 0;
}

//  A message written by hand with msgpack-c, to say what no encoder of ours
//  would: wrong types, wrong counts, hostile headers.
typedef struct {
    msgpack_sbuffer sbuf;
    msgpack_packer pk;
} s_craft_t;

static msgpack_packer *
s_craft_begin (s_craft_t *craft, uint32_t items, uint8_t type)
{
    msgpack_sbuffer_init (&craft->sbuf);
    msgpack_packer_init (&craft->pk, &craft->sbuf, msgpack_sbuffer_write);
    msgpack_pack_array (&craft->pk, items);
    msgpack_pack_uint8 (&craft->pk, SHOAL_WIRE_VERSION);
    msgpack_pack_uint8 (&craft->pk, type);
    return &craft->pk;
}

//  Decodes what was crafted, expecting a refusal whose text contains want.
//  The crafted start of a message is followed by padding, so that the
//  counts it announces are not refused merely for the bytes left.
static void
s_craft_refused (s_craft_t *craft, const char *want)
{
    for (int i = 0; i < 64; i++)
        msgpack_pack_nil (&craft->pk);
    shoal_msg_t msg;
    shoal_wire_error_t err;
    CHECK_EQ (s_decode ((const uint8_t *) craft->sbuf.data, craft->sbuf.size, &msg, &err), -1);
    CHECK_CONTAINS (err.text, want);
    msgpack_sbuffer_destroy (&craft->sbuf);
}

static void
s_pack_id (msgpack_packer *pk, uint8_t fill)
{
    shoal_id_t id = shoal_sample_id (fill);
    msgpack_pack_bin_with_body (pk, id.bytes, sizeof id.bytes);
}

//  ---------------------------------------------------------------------
//  Round trips

static void
every_type_has_a_name_a_limit_and_a_sample (void)
{
    CHECK_EQ (shoal_msg_type_count, 22);
    for (size_t i = 0; i < shoal_msg_type_count; i++) {
        int type = shoal_msg_types[i];
        shoal_msg_t msg;
        CHECK (shoal_msg_type_name (type) != NULL);
        CHECK (shoal_msg_size_max (type) > 0);
        CHECK_EQ (shoal_sample_msg (type, &msg), 0);
        CHECK (shoal_sample_describe (type) != NULL);
    }
    CHECK (shoal_msg_type_name (0x7f) == NULL);
    CHECK_EQ (shoal_msg_size_max (0x7f), 0);
    CHECK_EQ (shoal_msg_size_max (SHOAL_MSG_PING), SHOAL_DATAGRAM_MAX - SHOAL_ENVELOPE_OVERHEAD);
    CHECK_EQ (shoal_msg_size_max (SHOAL_MSG_PING), 1304);
    CHECK_EQ (shoal_msg_size_max (SHOAL_MSG_BEACON), SHOAL_BEACON_MAX - SHOAL_ENVELOPE_OVERHEAD);
}

//  Decoding and encoding again gives the same bytes, so nothing the encoder
//  wrote was lost on the way back.
static void
every_type_round_trips_byte_for_byte (void)
{
    static uint8_t again[SHOAL_FRAME_MAX];
    for (size_t i = 0; i < shoal_msg_type_count; i++) {
        int type = shoal_msg_types[i];
        shoal_msg_t msg, decoded;
        shoal_wire_error_t err;
        shoal_sample_msg (type, &msg);
        long size = shoal_msg_encode (&msg, buffer, sizeof buffer, &err);
        CHECK (size > 2);
        CHECK_EQ (shoal_msg_encode (&msg, NULL, 0, &err), size);
        CHECK (size <= (long) shoal_msg_size_max (type));
        CHECK_EQ (s_decode (buffer, (size_t) size, &decoded, &err), 0);
        CHECK_EQ (decoded.type, type);
        CHECK (arena.used <= SHOAL_DECODE_ARENA (size));
        long size_again = shoal_msg_encode (&decoded, again, sizeof again, &err);
        CHECK_EQ (size_again, size);
        CHECK (memcmp (buffer, again, (size_t) size) == 0);
        if (test_failures)
            fprintf (stderr, "  in type %s: %s\n", shoal_msg_type_name (type), err.text);
    }
}

//  The round trip above shows that nothing is lost; these show that what
//  comes back is what was meant, field by field, for the values that nest.
static void
decoded_fields_hold_the_sent_values (void)
{
    shoal_msg_t msg, got;
    shoal_wire_error_t err;

    shoal_sample_msg (SHOAL_MSG_PING, &msg);
    long size = shoal_msg_encode (&msg, buffer, sizeof buffer, &err);
    CHECK_EQ (s_decode (buffer, (size_t) size, &got, &err), 0);
    CHECK_EQ (got.u.ping.seq, 4711);
    CHECK (s_id_is (got.u.ping.target, 0x11));
    CHECK_EQ (got.u.ping.update_count, 6);
    CHECK (s_id_is (got.u.ping.updates[5].node, 0x15));
    CHECK_EQ (got.u.ping.updates[5].incarnation, 1005);
    CHECK (got.u.ping.updates[0].meta != NULL);
    CHECK (got.u.ping.updates[2].meta == NULL);
    CHECK (s_id_is (got.u.ping.updates[3].by, 0xa0));
    CHECK_EQ (got.u.ping.updates[3].state, SHOAL_MEMBER_SUSPECT);
    const shoal_meta_t *meta = got.u.ping.updates[0].meta;
    CHECK_STR (meta->name, "worker-01");
    CHECK_STR (meta->addr, "10.0.3.11:7946");
    CHECK_EQ (meta->life, 3);
    CHECK_EQ (meta->capacity, 4);
    CHECK_EQ (meta->slots, 64);
    CHECK_EQ (meta->label_count, 3);
    CHECK_STR (meta->labels[2].key, "rack");
    CHECK_STR (meta->labels[2].value, "r17");
    CHECK_EQ (meta->handle_count, 2);
    CHECK_STR (meta->handles[1], "aggregate");
    CHECK_EQ (got.u.ping.updates[1].meta->handle_count, 0);
    CHECK (got.u.ping.updates[1].meta->handles == NULL);

    shoal_sample_msg (SHOAL_MSG_ASSIGN, &msg);
    size = shoal_msg_encode (&msg, buffer, sizeof buffer, &err);
    CHECK_EQ (s_decode (buffer, (size_t) size, &got, &err), 0);
    CHECK_EQ (got.u.assign.term, 7);
    CHECK_EQ (got.u.assign.version, 52);
    CHECK (got.u.assign.snapshot);
    CHECK_EQ (got.u.assign.voter_count, 5);
    CHECK (s_id_is (got.u.assign.voters[4], 0x14));
    CHECK_EQ (got.u.assign.placement_count, 64);
    CHECK_STR (got.u.assign.placements[63].task, "report/7");
    CHECK_EQ (got.u.assign.placements[63].role, SHOAL_ROLE_STANDBY);
    CHECK_EQ (got.u.assign.placements[63].epoch.version, 52);

    shoal_sample_msg (SHOAL_MSG_CONTROL_REQ, &msg);
    size = shoal_msg_encode (&msg, buffer, sizeof buffer, &err);
    CHECK_EQ (s_decode (buffer, (size_t) size, &got, &err), 0);
    CHECK_EQ (got.u.control_req.op, SHOAL_OP_SUBMIT);
    CHECK (got.u.control_req.spec != NULL);
    CHECK_STR (got.u.control_req.spec->require[1].key, "disk");
    CHECK_STR (got.u.control_req.spec->command,
               "/usr/local/bin/ingest --from kafka://events --batch 500");
    CHECK (got.u.control_req.spec->stateful);

    shoal_sample_msg (SHOAL_MSG_CONTROL_REP, &msg);
    size = shoal_msg_encode (&msg, buffer, sizeof buffer, &err);
    CHECK_EQ (s_decode (buffer, (size_t) size, &got, &err), 0);
    CHECK_EQ (got.u.control_rep.task_count, 32);
    CHECK (s_id_is (got.u.control_rep.tasks[31].node, 0x11));
    CHECK_STR (got.u.control_rep.tasks[31].status.task, "report/7");
    CHECK_EQ (got.u.control_rep.tasks[31].status.role, SHOAL_ROLE_STANDBY);
    CHECK_EQ (got.u.control_rep.tasks[31].status.lag, 1500 + 97 * 31);
    CHECK_EQ (got.u.control_rep.tasks[30].status.lag, 0);
    CHECK_STR (got.u.control_rep.reason, "");
    //  The optional fields: a crash loop, and a task placed nowhere.
    CHECK_EQ (got.u.control_rep.tasks[4].status.restarts, 5);
    CHECK_EQ (got.u.control_rep.tasks[4].status.last_exit, 127);
    CHECK_STR (got.u.control_rep.tasks[4].status.error, "exit 127");
    CHECK_EQ (got.u.control_rep.tasks[30].status.restarts, 0);
    CHECK_STR (got.u.control_rep.tasks[30].status.error, "");
    CHECK_STR (got.u.control_rep.tasks[30].reason, "");
    CHECK (s_id_is (got.u.control_rep.tasks[29].node, 0x00));
    CHECK_STR (got.u.control_rep.tasks[29].status.task, "ingest/9");
    CHECK_STR (got.u.control_rep.tasks[29].reason, "no eligible node: no member has zone=mars");
}

//  The optional fields at the end of a task status and a task report are
//  left out while zero, so that a node that says nothing new writes the
//  bytes an older node wrote, and reads what an older node writes.
static void
optional_fields_are_left_out_while_zero (void)
{
    uint8_t out[256];
    shoal_wire_error_t err;
    shoal_task_status_t task = { .task = "web/0", .role = SHOAL_ROLE_ACTIVE, .error = "" };
    shoal_msg_t msg = { .type = SHOAL_MSG_STATUS };
    msg.u.status = (shoal_status_t){
        .term = 1, .applied_version = 2, .task_count = 1, .tasks = &task, .seq = 3
    };
    long size = shoal_msg_encode (&msg, out, sizeof out, &err);
    CHECK (size > 0);
    //  [1, 0x41, 1, 2, [ [ "web/0", ... ] ], 3]: the task status of 5 fields.
    CHECK_EQ (out[6], 0x95);
    shoal_msg_t got;
    CHECK_EQ (s_decode (out, (size_t) size, &got, &err), 0);
    CHECK_STR (got.u.status.tasks[0].error, "");

    //  Only the fields up to the last one set are written.
    task.restarts = 3;
    size = shoal_msg_encode (&msg, out, sizeof out, &err);
    CHECK_EQ (out[6], 0x96);
    CHECK_EQ (s_decode (out, (size_t) size, &got, &err), 0);
    CHECK_EQ (got.u.status.tasks[0].restarts, 3);
    CHECK_EQ (got.u.status.tasks[0].last_exit, 0);
    CHECK_STR (got.u.status.tasks[0].error, "");
    task.error = "exit 127";
    size = shoal_msg_encode (&msg, out, sizeof out, &err);
    CHECK_EQ (out[6], 0x98);
    CHECK_EQ (s_decode (out, (size_t) size, &got, &err), 0);
    CHECK_STR (got.u.status.tasks[0].error, "exit 127");

    //  A report as an older node writes it: node and status only.
    s_craft_t craft;
    msgpack_packer *pk = s_craft_begin (&craft, 11, SHOAL_MSG_CONTROL_REP);
    msgpack_pack_uint8 (pk, 1);
    msgpack_pack_uint8 (pk, SHOAL_REPLY_OK);
    msgpack_pack_str_with_body (pk, "", 0);
    s_pack_id (pk, 0x14);
    msgpack_pack_uint8 (pk, 7);
    msgpack_pack_uint8 (pk, 9);
    msgpack_pack_array (pk, 0);
    msgpack_pack_array (pk, 0);
    msgpack_pack_array (pk, 1);
    msgpack_pack_array (pk, 2);
    s_pack_id (pk, 0x11);
    msgpack_pack_array (pk, 5);
    msgpack_pack_str_with_body (pk, "web/0", 5);
    msgpack_pack_uint8 (pk, SHOAL_ROLE_ACTIVE);
    msgpack_pack_uint8 (pk, SHOAL_TASK_RUNNING);
    msgpack_pack_uint8 (pk, 0);
    msgpack_pack_array (pk, 2);
    msgpack_pack_uint8 (pk, 7);
    msgpack_pack_uint8 (pk, 9);
    CHECK_EQ (s_decode ((const uint8_t *) craft.sbuf.data, craft.sbuf.size, &got, &err), 0);
    msgpack_sbuffer_destroy (&craft.sbuf);
    CHECK_EQ (got.u.control_rep.task_count, 1);
    CHECK_STR (got.u.control_rep.tasks[0].status.task, "web/0");
    CHECK_STR (got.u.control_rep.tasks[0].reason, "");
    CHECK_STR (got.u.control_rep.tasks[0].status.error, "");
    CHECK_EQ (got.u.control_rep.tasks[0].status.restarts, 0);
}

//  A meta's cordon, a drain's leave and an acknowledgement's leaving, all
//  optional: left out at zero, so the bytes are those of before; written
//  and read back when set.
static void
cordon_and_leave_are_optional (void)
{
    shoal_wire_error_t err;
    shoal_meta_t meta = { .name = "w1", .addr = "10.0.0.1:7946", .life = 3, .capacity = 1 };
    shoal_update_t update = { .incarnation = 2, .meta = &meta };
    update.node.bytes[0] = 1;
    shoal_msg_t msg = { .type = SHOAL_MSG_PING }, got;
    msg.u.ping = (shoal_ping_t){ .seq = 1, .update_count = 1, .updates = &update };
    msg.u.ping.target.bytes[0] = 2;
    long plain = shoal_msg_encode (&msg, buffer, sizeof buffer, &err);
    CHECK (plain > 0);
    meta.cordon = SHOAL_CORDON_DRAINING;
    long marked = shoal_msg_encode (&msg, buffer, sizeof buffer, &err);
    CHECK_EQ (marked, plain + 1);
    CHECK_EQ (s_decode (buffer, (size_t) marked, &got, &err), 0);
    CHECK_EQ (got.u.ping.updates[0].meta->cordon, SHOAL_CORDON_DRAINING);

    msg = (shoal_msg_t){ .type = SHOAL_MSG_CONTROL_REQ };
    msg.u.control_req = (shoal_control_req_t){ .id = 5, .op = SHOAL_OP_DRAIN, .job = "w1" };
    plain = shoal_msg_encode (&msg, buffer, sizeof buffer, &err);
    CHECK (plain > 0);
    CHECK_EQ (s_decode (buffer, (size_t) plain, &got, &err), 0);
    CHECK (!got.u.control_req.leave);
    msg.u.control_req.leave = true;
    marked = shoal_msg_encode (&msg, buffer, sizeof buffer, &err);
    CHECK_EQ (marked, plain + 3); //  keys and logs as nil, then leave
    CHECK_EQ (s_decode (buffer, (size_t) marked, &got, &err), 0);
    CHECK (got.u.control_req.leave);
    CHECK (got.u.control_req.keys == NULL);
    CHECK_EQ (got.u.control_req.op, SHOAL_OP_DRAIN);

    //  A STATUS tells the node's mark only when it has one.
    msg = (shoal_msg_t){ .type = SHOAL_MSG_STATUS };
    msg.u.status = (shoal_status_t){ .term = 1, .applied_version = 4, .seq = 9 };
    plain = shoal_msg_encode (&msg, buffer, sizeof buffer, &err);
    CHECK (plain > 0);
    CHECK_EQ (s_decode (buffer, (size_t) plain, &got, &err), 0);
    CHECK_EQ (got.u.status.cordon, SHOAL_CORDON_NONE);
    msg.u.status.cordon = SHOAL_CORDON_CORDONED;
    marked = shoal_msg_encode (&msg, buffer, sizeof buffer, &err);
    CHECK_EQ (marked, plain + 1);
    CHECK_EQ (s_decode (buffer, (size_t) marked, &got, &err), 0);
    CHECK_EQ (got.u.status.cordon, SHOAL_CORDON_CORDONED);
    CHECK_EQ (got.u.status.seq, 9);
    msg.u.status.cordon = SHOAL_CORDON_MAX + 1;
    CHECK (shoal_msg_encode (&msg, buffer, sizeof buffer, &err) < 0);

    //  A COORDINATOR-ACK says leaving only when it leaves.
    msg = (shoal_msg_t){ .type = SHOAL_MSG_COORDINATOR_ACK };
    msg.u.coordinator_ack = (shoal_coordinator_ack_t){ .term = 3, .round = 7, .voters_version = 2 };
    plain = shoal_msg_encode (&msg, buffer, sizeof buffer, &err);
    CHECK (plain > 0);
    CHECK_EQ (s_decode (buffer, (size_t) plain, &got, &err), 0);
    CHECK (!got.u.coordinator_ack.leaving);
    msg.u.coordinator_ack.leaving = true;
    marked = shoal_msg_encode (&msg, buffer, sizeof buffer, &err);
    CHECK_EQ (marked, plain + 1);
    CHECK_EQ (s_decode (buffer, (size_t) marked, &got, &err), 0);
    CHECK (got.u.coordinator_ack.leaving);
    CHECK_EQ (got.u.coordinator_ack.round, 7);
}

//  Absent strings encode as empty ones; empty lists decode as NULL.
static void
absent_values_encode_as_empty (void)
{
    shoal_msg_t msg = { .type = SHOAL_MSG_JOB }, got;
    shoal_wire_error_t err;
    msg.u.job.spec.name = "web";
    msg.u.job.spec.parallelism = 3;
    long size = shoal_msg_encode (&msg, buffer, sizeof buffer, &err);
    CHECK (size > 0);
    CHECK_EQ (s_decode (buffer, (size_t) size, &got, &err), 0);
    CHECK_STR (got.u.job.spec.command, "");
    CHECK_EQ (got.u.job.spec.require_count, 0);
    CHECK (got.u.job.spec.require == NULL);
}

static void
integers_in_any_msgpack_form_are_read (void)
{
    //  Signed encodings of non-negative numbers, as other packers write them,
    //  and wider encodings than needed: [1, answer, 9].
    const uint8_t forms[][12] = {
        { 0x93, 0x01, 0x31, 0xd3, 0, 0, 0, 0, 0, 0, 0, 9 }, //  int64
        { 0x93, 0x01, 0x31, 0xcf, 0, 0, 0, 0, 0, 0, 0, 9 }, //  uint64
        { 0x93, 0x01, 0x31, 0xd0, 9 },                      //  int8
        { 0x93, 0x01, 0x31, 0xcd, 0, 9 },                   //  uint16
    };
    const size_t sizes[] = { 12, 12, 5, 6 };
    for (int i = 0; i < 4; i++) {
        shoal_msg_t msg;
        shoal_wire_error_t err;
        CHECK_EQ (s_decode (forms[i], sizes[i], &msg, &err), 0);
        CHECK_EQ (msg.u.answer.term, 9);
    }
}

//  ---------------------------------------------------------------------
//  Refusals

static void
every_truncation_is_refused (void)
{
    for (size_t i = 0; i < shoal_msg_type_count; i++) {
        shoal_msg_t msg, got;
        shoal_wire_error_t err;
        shoal_sample_msg (shoal_msg_types[i], &msg);
        long size = shoal_msg_encode (&msg, buffer, sizeof buffer, &err);
        int accepted = 0;
        for (long cut = 0; cut < size; cut++)
            if (s_decode (buffer, (size_t) cut, &got, &err) == 0 || err.text[0] == '\0')
                accepted++;
        CHECK_EQ (accepted, 0);
    }
}

static void
trailing_bytes_are_refused (void)
{
    shoal_msg_t msg, got;
    shoal_wire_error_t err;
    shoal_sample_msg (SHOAL_MSG_STATUS, &msg);
    long size = shoal_msg_encode (&msg, buffer, sizeof buffer, &err);
    buffer[size] = 0xc0;
    CHECK_EQ (s_decode (buffer, (size_t) size + 1, &got, &err), -1);
    CHECK_CONTAINS (err.text, "1 bytes after the message");
}

static void
oversized_input_is_refused_before_decoding (void)
{
    shoal_msg_t msg, got;
    shoal_wire_error_t err;
    //  A ping padded to the largest datagram message passes the size check
    //  (and fails on its padding); one byte more is refused for its size.
    shoal_sample_msg (SHOAL_MSG_PING, &msg);
    long size = shoal_msg_encode (&msg, buffer, sizeof buffer, &err);
    memset (buffer + size, 0xc0, SHOAL_DATAGRAM_MAX - (size_t) size);
    char want[64];
    CHECK_EQ (s_decode (buffer, 1304, &got, &err), -1);
    snprintf (want, sizeof want, "ping: %ld bytes after the message", 1304 - size);
    CHECK_CONTAINS (err.text, want);
    CHECK_EQ (s_decode (buffer, 1305, &got, &err), -1);
    CHECK_CONTAINS (err.text, "message of 1305 bytes, a datagram carries at most 1304");
    //  The same at the beacon's limit.
    shoal_sample_msg (SHOAL_MSG_BEACON, &msg);
    size = shoal_msg_encode (&msg, buffer, sizeof buffer, &err);
    memset (buffer + size, 0xc0, SHOAL_BEACON_MAX - (size_t) size);
    CHECK_EQ (s_decode (buffer, 159, &got, &err), -1);
    snprintf (want, sizeof want, "beacon: %ld bytes after the message", 159 - size);
    CHECK_CONTAINS (err.text, want);
    CHECK_EQ (s_decode (buffer, 160, &got, &err), -1);
    CHECK_CONTAINS (err.text, "message of 160 bytes, a beacon carries at most 159");
    //  Anything past the largest frame is refused at once.
    static uint8_t huge[SHOAL_FRAME_MAX + 1];
    CHECK_EQ (s_decode (huge, sizeof huge, &got, &err), -1);
    CHECK_CONTAINS (err.text, "a frame carries at most 4194208");
}

static void
wrong_version_and_unknown_type_are_refused (void)
{
    shoal_msg_t msg;
    shoal_wire_error_t err;
    const uint8_t v2[] = { 0x93, 0x02, 0x31, 0x08 };
    CHECK_EQ (s_decode (v2, sizeof v2, &msg, &err), -1);
    CHECK_CONTAINS (err.text, "protocol version 2, this node speaks 1");
    const uint8_t unknown[] = { 0x93, 0x01, 0x7f, 0x08 };
    CHECK_EQ (s_decode (unknown, sizeof unknown, &msg, &err), -1);
    CHECK_CONTAINS (err.text, "unknown message type 127");
    const uint8_t not_array[] = { 0x01 };
    CHECK_EQ (s_decode (not_array, sizeof not_array, &msg, &err), -1);
    CHECK_CONTAINS (err.text, "wrong type (expected message array)");
    CHECK_EQ (s_decode (not_array, 0, &msg, &err), -1);
    CHECK_CONTAINS (err.text, "truncated");
}

//  A message is accepted only on its own carrier: a PING that arrives in a
//  frame, or an ASSIGN small enough for a datagram, is refused.
static void
messages_are_refused_on_another_carrier (void)
{
    shoal_msg_t msg, got;
    shoal_wire_error_t err;
    for (size_t i = 0; i < shoal_msg_type_count; i++) {
        int type = shoal_msg_types[i];
        shoal_sample_msg (type, &msg);
        long size = shoal_msg_encode (&msg, buffer, sizeof buffer, &err);
        for (int carrier = SHOAL_PURPOSE_BEACON; carrier <= SHOAL_PURPOSE_FRAME; carrier++) {
            shoal_arena_reset (&arena);
            int rc = shoal_msg_decode (buffer, (size_t) size, (shoal_purpose_t) carrier, &got,
                                       &arena, &err);
            CHECK_EQ (rc, carrier == (int) shoal_msg_purpose (type) ? 0 : -1);
        }
    }
    CHECK_EQ (shoal_msg_purpose (SHOAL_MSG_PING), SHOAL_PURPOSE_DATAGRAM);
    CHECK_EQ (shoal_msg_purpose (SHOAL_MSG_BEACON), SHOAL_PURPOSE_BEACON);
    CHECK_EQ (shoal_msg_purpose (SHOAL_MSG_ASSIGN), SHOAL_PURPOSE_FRAME);
    CHECK_EQ (shoal_msg_purpose (0x7f), 0);

    const uint8_t answer[] = { 0x93, 0x01, SHOAL_MSG_ANSWER, 0x08 };
    CHECK_EQ (shoal_msg_decode (answer, sizeof answer, SHOAL_PURPOSE_DATAGRAM, &got, &arena, &err),
              -1);
    CHECK_CONTAINS (err.text, "answer: belongs on a frame, came on a datagram");
    CHECK_EQ (shoal_msg_decode (answer, sizeof answer, 9, &got, &arena, &err), -1);
    CHECK_CONTAINS (err.text, "unknown carrier 9");
}

static void
wrong_field_count_is_refused (void)
{
    s_craft_t craft;
    msgpack_packer *pk = s_craft_begin (&craft, 3, SHOAL_MSG_PING);
    msgpack_pack_uint32 (pk, 1);
    s_craft_refused (&craft, "ping: 1 fields, expected 3");

    //  A nested struct with a missing field.
    pk = s_craft_begin (&craft, 8, SHOAL_MSG_COORDINATOR_ACK);
    msgpack_pack_uint64 (pk, 8);
    msgpack_pack_uint64 (pk, 12);
    msgpack_pack_array (pk, 1);
    msgpack_pack_uint64 (pk, 7);
    s_craft_refused (&craft, "coordinator-ack.assignment: 1 fields, expected 2");

    //  Optional fields may be left out, but not required ones, and no field
    //  beyond the last this node knows is taken.
    pk = s_craft_begin (&craft, 6, SHOAL_MSG_STATUS);
    msgpack_pack_uint8 (pk, 1);
    msgpack_pack_uint8 (pk, 2);
    msgpack_pack_array (pk, 1);
    msgpack_pack_array (pk, 4);
    s_craft_refused (&craft, "status.tasks[0]: 4 fields, expected 5 to 8");
    pk = s_craft_begin (&craft, 6, SHOAL_MSG_STATUS);
    msgpack_pack_uint8 (pk, 1);
    msgpack_pack_uint8 (pk, 2);
    msgpack_pack_array (pk, 1);
    msgpack_pack_array (pk, 9);
    s_craft_refused (&craft, "status.tasks[0]: 9 fields, expected 5 to 8");
}

static void
wrong_types_are_refused_naming_the_field (void)
{
    s_craft_t craft;
    msgpack_packer *pk = s_craft_begin (&craft, 5, SHOAL_MSG_PING);
    msgpack_pack_str_with_body (pk, "1", 1);
    s_craft_refused (&craft, "ping.seq: wrong type (expected unsigned integer)");

    pk = s_craft_begin (&craft, 3, SHOAL_MSG_ANSWER);
    msgpack_pack_int64 (pk, -1);
    s_craft_refused (&craft, "answer.term: negative integer");

    pk = s_craft_begin (&craft, 3, SHOAL_MSG_ANSWER);
    msgpack_pack_double (pk, 8.0);
    s_craft_refused (&craft, "answer.term: wrong type");

    pk = s_craft_begin (&craft, 5, SHOAL_MSG_PING);
    msgpack_pack_uint32 (pk, 1);
    msgpack_pack_str_with_body (pk, "0123456789abcdef", 16);
    s_craft_refused (&craft, "ping.target: wrong type (expected binary)");

    pk = s_craft_begin (&craft, 5, SHOAL_MSG_PING);
    msgpack_pack_uint32 (pk, 1);
    msgpack_pack_bin_with_body (pk, "short", 5);
    s_craft_refused (&craft, "ping.target: 5 bytes, expected 16");

    //  A field deep inside: the third update's meta has a number for a name.
    pk = s_craft_begin (&craft, 4, SHOAL_MSG_ACK);
    msgpack_pack_uint32 (pk, 1);
    msgpack_pack_array (pk, 3);
    for (int i = 0; i < 3; i++) {
        msgpack_pack_array (pk, 5);
        s_pack_id (pk, 0x10);
        msgpack_pack_uint64 (pk, 1);
        msgpack_pack_uint8 (pk, SHOAL_MEMBER_ALIVE);
        s_pack_id (pk, 0);
        if (i < 2)
            msgpack_pack_nil (pk);
        else {
            msgpack_pack_array (pk, 8);
            msgpack_pack_uint8 (pk, 42);
        }
    }
    s_craft_refused (&craft, "ack.updates[2].meta.name: wrong type (expected string)");
}

static void
values_over_their_limits_are_refused (void)
{
    s_craft_t craft;
    //  A role beyond the enum.
    msgpack_packer *pk = s_craft_begin (&craft, 6, SHOAL_MSG_STATUS);
    msgpack_pack_uint64 (pk, 7);
    msgpack_pack_uint64 (pk, 52);
    msgpack_pack_array (pk, 1);
    msgpack_pack_array (pk, 5);
    msgpack_pack_str_with_body (pk, "web/0", 5);
    msgpack_pack_uint8 (pk, 4);
    s_craft_refused (&craft, "status.tasks[0].role: 4, limit 3");

    //  A u16 field given a value that does not fit it.
    pk = s_craft_begin (&craft, 7, SHOAL_MSG_BEACON);
    s_pack_id (pk, 1);
    s_pack_id (pk, 2);
    msgpack_pack_uint64 (pk, 1);
    msgpack_pack_uint32 (pk, 70000);
    s_craft_refused (&craft, "beacon.port: 70000, limit 65535");

    //  A name one byte too long.
    char name[SHOAL_NAME_MAX + 2];
    memset (name, 'n', sizeof name);
    pk = s_craft_begin (&craft, 5, SHOAL_MSG_JOB);
    msgpack_pack_uint64 (pk, 7);
    msgpack_pack_uint64 (pk, 12);
    msgpack_pack_array (pk, 6);
    msgpack_pack_str_with_body (pk, name, SHOAL_NAME_MAX + 1);
    s_craft_refused (&craft, "job.spec.name: 65 bytes, limit 64");

    //  One update more than a datagram may piggyback.
    pk = s_craft_begin (&craft, 4, SHOAL_MSG_ACK);
    msgpack_pack_uint32 (pk, 1);
    msgpack_pack_array (pk, SHOAL_UPDATES_MAX + 1);
    s_craft_refused (&craft, "ack.updates: 33 items, limit 32");

    //  A parallelism beyond the limit.
    pk = s_craft_begin (&craft, 9, SHOAL_MSG_CONTROL_REQ);
    msgpack_pack_uint32 (pk, 1);
    msgpack_pack_uint8 (pk, SHOAL_OP_RESCALE);
    msgpack_pack_str_with_body (pk, "web", 3);
    msgpack_pack_uint32 (pk, SHOAL_PARALLELISM_MAX + 1);
    s_craft_refused (&craft, "control-req.parallelism: 65536, limit 65535");
}

static void
text_must_be_utf8_without_nul (void)
{
    const char *bad[] = {
        "a\0b",             //  NUL inside
        "\xc3",             //  cut short
        "\xc0\xaf",         //  overlong '/'
        "\xed\xa0\x80",     //  a UTF-16 surrogate
        "\xf4\x90\x80\x80", //  past U+10FFFF
        "\xff",
    };
    const size_t sizes[] = { 3, 1, 2, 3, 4, 1 };
    for (int i = 0; i < 6; i++) {
        s_craft_t craft;
        msgpack_packer *pk = s_craft_begin (&craft, 6, SHOAL_MSG_PING_REQ);
        msgpack_pack_uint32 (pk, 1);
        s_pack_id (pk, 2);
        msgpack_pack_str_with_body (pk, bad[i], sizes[i]);
        msgpack_pack_array (pk, 0);
        s_craft_refused (&craft, "ping-req.addr: not UTF-8 text without NUL");
    }
    //  Multi-byte text is fine.
    shoal_msg_t msg, got;
    shoal_wire_error_t err;
    shoal_sample_msg (SHOAL_MSG_PING_REQ, &msg);
    msg.u.ping_req.addr = "h\xc3\xb6st-\xe2\x82\xac-\xf0\x9f\x90\x9f:1";
    long size = shoal_msg_encode (&msg, buffer, sizeof buffer, &err);
    CHECK (size > 0);
    CHECK_EQ (s_decode (buffer, (size_t) size, &got, &err), 0);
    CHECK_STR (got.u.ping_req.addr, msg.u.ping_req.addr);
}

static void
labels_need_unique_non_empty_keys (void)
{
    s_craft_t craft;
    msgpack_packer *pk = s_craft_begin (&craft, 5, SHOAL_MSG_JOB);
    msgpack_pack_uint64 (pk, 7);
    msgpack_pack_uint64 (pk, 12);
    msgpack_pack_array (pk, 6);
    msgpack_pack_str_with_body (pk, "web", 3);
    msgpack_pack_uint32 (pk, 2);
    msgpack_pack_true (pk);
    msgpack_pack_uint32 (pk, 1);
    msgpack_pack_map (pk, 2);
    msgpack_pack_str_with_body (pk, "zone", 4);
    msgpack_pack_str_with_body (pk, "a", 1);
    msgpack_pack_str_with_body (pk, "zone", 4);
    msgpack_pack_str_with_body (pk, "b", 1);
    s_craft_refused (&craft, "job.spec.require[1]: label key \"zone\" given twice");

    //  The encoder refuses the same, so a node never sends what peers refuse.
    shoal_label_t twice[] = { { "zone", "a" }, { "zone", "b" } };
    shoal_label_t empty[] = { { "", "a" } };
    shoal_msg_t msg = { .type = SHOAL_MSG_JOB };
    shoal_wire_error_t err;
    msg.u.job.spec = (shoal_jobspec_t){ .name = "web", .require_count = 2, .require = twice };
    CHECK_EQ (shoal_msg_encode (&msg, buffer, sizeof buffer, &err), -1);
    CHECK_CONTAINS (err.text, "job.spec.require[1]: label key \"zone\" given twice");
    msg.u.job.spec = (shoal_jobspec_t){ .name = "web", .require_count = 1, .require = empty };
    CHECK_EQ (shoal_msg_encode (&msg, buffer, sizeof buffer, &err), -1);
    CHECK_CONTAINS (err.text, "job.spec.require[0]: empty label key");
}

//  msgpack-c's unpacker reserves 24 bytes per announced array element on
//  reading the header. These headers announce billions of elements in five
//  bytes; the decoder must refuse them with no more memory than its arena.
static const uint8_t s_hostile[][5] = {
    { 0xdd, 0xff, 0xff, 0xff, 0xff }, //  array of 4,294,967,295
    { 0xdf, 0xff, 0xff, 0xff, 0xff }, //  map of 4,294,967,295 pairs
    { 0xdb, 0xff, 0xff, 0xff, 0xff }, //  string of 4 GiB
    { 0xc6, 0xff, 0xff, 0xff, 0xff }, //  binary of 4 GiB
};

static void
huge_counts_cannot_make_the_decoder_reserve_memory (void)
{
    shoal_msg_t msg;
    shoal_wire_error_t err;
    //  As the whole message.
    CHECK_EQ (s_decode (s_hostile[0], 5, &msg, &err), -1);
    CHECK_CONTAINS (err.text, "count exceeds the bytes left");
    CHECK_EQ (arena.used, 0);

    //  Each header in a position of its own kind, where the schema expects
    //  it, so that only the count check can refuse it: a list (ping.updates),
    //  labels (job.spec.require), a string (job.spec.name), an id
    //  (ping.target). Each is followed by a few bytes, as a real message
    //  would be.
    static const struct {
        int header;
        uint8_t type;
        const char *want;
    } cases[] = {
        { 0, SHOAL_MSG_PING, "ping.updates: count exceeds the bytes left" },
        { 1, SHOAL_MSG_JOB, "job.spec.require: count exceeds the bytes left" },
        { 2, SHOAL_MSG_JOB, "job.spec.name: truncated" },
        { 3, SHOAL_MSG_PING, "ping.target: truncated" },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        s_craft_t craft;
        msgpack_packer *pk = s_craft_begin (&craft, 5, cases[c].type);
        if (cases[c].type == SHOAL_MSG_PING) {
            msgpack_pack_uint32 (pk, 1);
            if (cases[c].header == 0)
                s_pack_id (pk, 2);
        } else {
            msgpack_pack_uint64 (pk, 7);
            msgpack_pack_uint64 (pk, 12);
            msgpack_pack_array (pk, 6);
            if (cases[c].header == 1) {
                msgpack_pack_str_with_body (pk, "web", 3);
                msgpack_pack_uint32 (pk, 2);
                msgpack_pack_true (pk);
                msgpack_pack_uint32 (pk, 1);
            }
        }
        msgpack_sbuffer_write (&craft.sbuf, (const char *) s_hostile[cases[c].header], 5);
        for (int i = 0; i < 16; i++)
            msgpack_pack_nil (pk);
        CHECK_EQ (s_decode ((const uint8_t *) craft.sbuf.data, craft.sbuf.size, &msg, &err), -1);
        CHECK_CONTAINS (err.text, cases[c].want);
        CHECK (arena.used < 64);
        msgpack_sbuffer_destroy (&craft.sbuf);
    }

    //  A count that passes the byte check but not the schema's: as many
    //  one-byte items as there are bytes, where each update needs 40.
    s_craft_t craft;
    msgpack_packer *pk = s_craft_begin (&craft, 4, SHOAL_MSG_ACK);
    msgpack_pack_uint32 (pk, 1);
    msgpack_pack_array (pk, 30);
    for (int i = 0; i < 30; i++)
        msgpack_pack_nil (pk);
    s_craft_refused (&craft, "ack.updates: 30 items cannot fit in the 94 bytes left");
}

//  The danger is real: msgpack-c, given the same five bytes under a 1 GiB
//  address-space limit, runs out of memory asking for ~96 GB, while shoal's
//  decoder refuses them in the same child. Skipped under AddressSanitizer,
//  whose shadow memory does not live under such a limit.
static void
msgpack_c_would_allocate_what_the_decoder_refuses (void)
{
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SHOAL_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(SHOAL_TEST_ASAN)
    printf ("skip msgpack_c_would_allocate_what_the_decoder_refuses: AddressSanitizer build\n");
#else
    pid_t child = fork ();
    if (child == 0) {
        struct rlimit limit = { 1ul << 30, 1ul << 30 };
        if (setrlimit (RLIMIT_AS, &limit) != 0)
            _exit (10);
        msgpack_zone zone;
        msgpack_zone_init (&zone, 1024);
        msgpack_object object;
        size_t offset = 0;
        msgpack_unpack_return rc =
            msgpack_unpack ((const char *) s_hostile[0], 5, &offset, &zone, &object);
        msgpack_zone_destroy (&zone);
        if (rc != MSGPACK_UNPACK_NOMEM_ERROR)
            _exit (11);
        shoal_msg_t msg;
        shoal_wire_error_t err;
        if (s_decode (s_hostile[0], 5, &msg, &err) != -1 ||
            !strstr (err.text, "count exceeds the bytes left"))
            _exit (12);
        _exit (0);
    }
    int status = -1;
    waitpid (child, &status, 0);
    CHECK (WIFEXITED (status));
    CHECK_EQ (WEXITSTATUS (status), 0);
#endif
}

static void
deep_nesting_is_refused_without_recursion (void)
{
    //  A million nested arrays: the schema never follows input structure,
    //  so this fails at the first field that is not an array, at once.
    size_t depth = 1000000;
    uint8_t *deep = malloc (depth + 1);
    memset (deep, 0x91, depth);
    deep[depth] = 0x00;
    shoal_msg_t msg;
    shoal_wire_error_t err;
    CHECK_EQ (s_decode (deep, depth + 1, &msg, &err), -1);
    CHECK_CONTAINS (err.text, "message array of 1 items");

    //  Nested inside a field.
    const uint8_t header[] = { 0x96, 0x01, SHOAL_MSG_STATUS };
    memcpy (deep, header, sizeof header);
    CHECK_EQ (s_decode (deep, depth + 1, &msg, &err), -1);
    CHECK_CONTAINS (err.text, "status.term: wrong type");
    free (deep);
}

static void
a_full_arena_fails_the_decode_cleanly (void)
{
    shoal_msg_t msg, got;
    shoal_wire_error_t err;
    shoal_sample_msg (SHOAL_MSG_ASSIGN, &msg);
    long size = shoal_msg_encode (&msg, buffer, sizeof buffer, &err);
    shoal_arena_t small;
    CHECK_EQ (shoal_arena_init (&small, 256), 0);
    CHECK_EQ (shoal_msg_decode (buffer, (size_t) size, SHOAL_PURPOSE_FRAME, &got, &small, &err),
              -1);
    CHECK_CONTAINS (err.text, "arena of 256 bytes is full");
    CHECK (small.used <= small.size);
    shoal_arena_release (&small);
    shoal_arena_release (&small);
}

//  ---------------------------------------------------------------------
//  Encoder limits: a node never sends what its peers would refuse.

static void
the_encoder_refuses_what_the_decoder_would (void)
{
    shoal_msg_t msg;
    shoal_wire_error_t err;
    char name[SHOAL_NAME_MAX + 2];
    memset (name, 'x', sizeof name - 1);
    name[sizeof name - 1] = '\0';

    shoal_sample_msg (SHOAL_MSG_PING, &msg);
    shoal_meta_t meta = *msg.u.ping.updates[1].meta;
    meta.name = name;
    msg.u.ping.updates[1].meta = &meta;
    CHECK_EQ (shoal_msg_encode (&msg, buffer, sizeof buffer, &err), -1);
    CHECK_CONTAINS (err.text, "ping.updates[1].meta.name: 65 bytes, limit 64");

    shoal_sample_msg (SHOAL_MSG_STATUS, &msg);
    msg.u.status.tasks[3].state = 9;
    CHECK_EQ (shoal_msg_encode (&msg, buffer, sizeof buffer, &err), -1);
    CHECK_CONTAINS (err.text, "status.tasks[3].state: 9, limit 4");

    shoal_sample_msg (SHOAL_MSG_ACK, &msg);
    msg.u.ack.update_count = SHOAL_UPDATES_MAX + 1;
    CHECK_EQ (shoal_msg_encode (&msg, buffer, sizeof buffer, &err), -1);
    CHECK_CONTAINS (err.text, "ack.updates: 33 items, limit 32");

    msg.u.ack.update_count = 2;
    msg.u.ack.updates = NULL;
    CHECK_EQ (shoal_msg_encode (&msg, buffer, sizeof buffer, &err), -1);
    CHECK_CONTAINS (err.text, "ack.updates: 2 items but no array");

    msg.type = 0x7f;
    CHECK_EQ (shoal_msg_encode (&msg, buffer, sizeof buffer, &err), -1);
    CHECK_CONTAINS (err.text, "unknown message type 127");
}

static void
the_encoder_refuses_what_does_not_fit (void)
{
    shoal_msg_t msg;
    shoal_wire_error_t err;
    shoal_sample_msg (SHOAL_MSG_ASSIGN, &msg);
    CHECK_EQ (shoal_msg_encode (&msg, buffer, 100, &err), -1);
    CHECK_CONTAINS (err.text, "assign: does not fit in 100 bytes");

    //  A datagram message that would not fit in a datagram once sealed.
    static shoal_update_t many[SHOAL_UPDATES_MAX];
    static shoal_meta_t meta;
    static shoal_label_t labels[SHOAL_LABELS_MAX];
    static char keys[SHOAL_LABELS_MAX][8];
    for (int i = 0; i < SHOAL_LABELS_MAX; i++) {
        snprintf (keys[i], sizeof keys[i], "key%d", i);
        labels[i] = (shoal_label_t){ keys[i], "a-long-enough-label-value" };
    }
    meta = (shoal_meta_t){
        .name = "n", .addr = "a", .label_count = SHOAL_LABELS_MAX, .labels = labels
    };
    for (int i = 0; i < SHOAL_UPDATES_MAX; i++)
        many[i] = (shoal_update_t){ .node = shoal_sample_id ((uint8_t) i), .meta = &meta };
    msg.type = SHOAL_MSG_PING;
    msg.u.ping = (shoal_ping_t){ 1, shoal_sample_id (1), SHOAL_UPDATES_MAX, many };
    CHECK_EQ (shoal_msg_encode (&msg, buffer, sizeof buffer, &err), -1);
    CHECK_CONTAINS (err.text, "ping: does not fit in 1304 bytes");
    CHECK_EQ (shoal_msg_encode (&msg, NULL, 0, &err), -1);
}

static void
ids_are_written_as_hex_and_none_as_blank_when_asked (void)
{
    uint8_t id[SHOAL_ID_SIZE] = { 0x00, 0x1f, 0xa0 };
    id[SHOAL_ID_SIZE - 1] = 0xff;
    char text[SHOAL_ID_TEXT];
    shoal_id_format (id, true, text);
    CHECK_STR (text, "001fa0000000000000000000000000ff");
    const uint8_t none[SHOAL_ID_SIZE] = { 0 };
    shoal_id_format (none, false, text);
    CHECK_STR (text, "00000000000000000000000000000000");
    shoal_id_format (none, true, text);
    CHECK_STR (text, "");
}

//  `shoal logs`: the request rides on a control request as an optional
//  field, the lines come back whole up to their limit, and a count of
//  lines, a task id or output over its limit, or output that is not
//  UTF-8, is refused.
static void
logs_messages_keep_their_limits (void)
{
    shoal_msg_t msg = { .type = SHOAL_MSG_CONTROL_REQ }, got;
    shoal_wire_error_t err;
    shoal_logs_req_t logs = { .task = "ingest/3", .node = shoal_sample_id (0x12), .lines = 500 };
    msg.u.control_req = (shoal_control_req_t){ .id = 2, .op = SHOAL_OP_LOGS, .logs = &logs };
    long size = shoal_msg_encode (&msg, buffer, sizeof buffer, &err);
    CHECK (size > 0);
    CHECK_EQ (s_decode (buffer, (size_t) size, &got, &err), 0);
    CHECK (got.u.control_req.keys == NULL);
    CHECK (got.u.control_req.logs != NULL);
    CHECK_STR (got.u.control_req.logs->task, "ingest/3");
    CHECK (s_id_is (got.u.control_req.logs->node, 0x12));
    CHECK_EQ (got.u.control_req.logs->lines, 500);
    logs.lines = SHOAL_LOGS_LINES_MAX + 1;
    CHECK_EQ (shoal_msg_encode (&msg, buffer, sizeof buffer, &err), -1);
    CHECK_CONTAINS (err.text, "lines");

    //  The output at its limit goes; a byte more does not.
    char *output = malloc (SHOAL_LOGS_TEXT_MAX + 2);
    CHECK (output != NULL);
    memset (output, 'x', SHOAL_LOGS_TEXT_MAX + 1);
    output[SHOAL_LOGS_TEXT_MAX] = 0;
    msg = (shoal_msg_t){ .type = SHOAL_MSG_LOGS_REP };
    msg.u.logs_rep = (shoal_logs_rep_t){ .id = 4, .reason = "", .output = output };
    size = shoal_msg_encode (&msg, buffer, sizeof buffer, &err);
    CHECK (size > SHOAL_LOGS_TEXT_MAX);
    CHECK_EQ (s_decode (buffer, (size_t) size, &got, &err), 0);
    CHECK_EQ (strlen (got.u.logs_rep.output), SHOAL_LOGS_TEXT_MAX);
    output[SHOAL_LOGS_TEXT_MAX] = 'x';
    output[SHOAL_LOGS_TEXT_MAX + 1] = 0;
    CHECK_EQ (shoal_msg_encode (&msg, buffer, sizeof buffer, &err), -1);
    CHECK_CONTAINS (err.text, "output");

    //  Crafted: output that is not UTF-8, a task id over its limit.
    s_craft_t craft;
    msgpack_packer *pk = s_craft_begin (&craft, 6, SHOAL_MSG_LOGS_REP);
    msgpack_pack_uint8 (pk, 4);
    msgpack_pack_uint8 (pk, SHOAL_REPLY_OK);
    msgpack_pack_str_with_body (pk, "", 0);
    msgpack_pack_str_with_body (pk, "a\xff\n", 3);
    s_craft_refused (&craft, "output");
    char task[SHOAL_TASK_MAX + 2];
    memset (task, 'j', sizeof task);
    pk = s_craft_begin (&craft, 5, SHOAL_MSG_LOGS);
    msgpack_pack_uint8 (pk, 4);
    msgpack_pack_str_with_body (pk, task, SHOAL_TASK_MAX + 1);
    msgpack_pack_uint8 (pk, 10);
    s_craft_refused (&craft, "task");
    free (output);
}

int
main (void)
{
    if (shoal_arena_init (&arena, SHOAL_DECODE_ARENA (SHOAL_FRAME_MAX)) != 0)
        return 1;
    RUN (every_type_has_a_name_a_limit_and_a_sample);
    RUN (every_type_round_trips_byte_for_byte);
    RUN (decoded_fields_hold_the_sent_values);
    RUN (absent_values_encode_as_empty);
    RUN (optional_fields_are_left_out_while_zero);
    RUN (cordon_and_leave_are_optional);
    RUN (integers_in_any_msgpack_form_are_read);
    RUN (every_truncation_is_refused);
    RUN (trailing_bytes_are_refused);
    RUN (oversized_input_is_refused_before_decoding);
    RUN (wrong_version_and_unknown_type_are_refused);
    RUN (messages_are_refused_on_another_carrier);
    RUN (wrong_field_count_is_refused);
    RUN (wrong_types_are_refused_naming_the_field);
    RUN (values_over_their_limits_are_refused);
    RUN (text_must_be_utf8_without_nul);
    RUN (labels_need_unique_non_empty_keys);
    RUN (huge_counts_cannot_make_the_decoder_reserve_memory);
    RUN (msgpack_c_would_allocate_what_the_decoder_refuses);
    RUN (deep_nesting_is_refused_without_recursion);
    RUN (a_full_arena_fails_the_decode_cleanly);
    RUN (the_encoder_refuses_what_the_decoder_would);
    RUN (the_encoder_refuses_what_does_not_fit);
    RUN (ids_are_written_as_hex_and_none_as_blank_when_asked);
    RUN (logs_messages_keep_their_limits);
    shoal_arena_release (&arena);
    return TEST_DONE ();
}

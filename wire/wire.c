/*  wire/wire.c: the schema of every message, and the one encoder and one
    decoder that walk it.

    Each message and each value inside one is described by a table of fields
    (name, kind, place in the struct, limit). The encoder writes a struct by
    its table with msgpack-c's packer; the decoder reads bytes by the same
    table with the bounded reader (reader.h) and refuses anything else. Both
    check the same limits, so a message one node encodes is a message every
    node decodes.
*/

#include "wire/wire.h"

#include "wire/reader.h"

#include <msgpack.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

//  ---------------------------------------------------------------------
//  Schema tables

typedef enum {
    K_BOOL,
    K_U8,
    K_U16,
    K_U32,
    K_U64,
    K_BYTES,    //  fixed-size binary stored inline (ids, hashes)
    K_STR,      //  const char *: UTF-8, no NUL, at most max bytes
    K_STRS,     //  count + const char **
    K_IDS,      //  count + shoal_id_t *
    K_U64S,     //  count + uint64_t *
    K_LABELS,   //  count + shoal_label_t *, as a msgpack map with unique keys
    K_LIST,     //  count + array of structs of schema
    K_STRUCT,   //  a struct of schema, inline
    K_OPTIONAL, //  a pointer to a struct of schema, or NULL as nil
} s_kind_t;

typedef struct s_schema s_schema_t;

typedef struct {
    const char *name;
    s_kind_t kind;
    size_t offset;
    size_t count_offset; //  lists: where the uint32_t count is
    uint64_t max;        //  integer: largest value; string: bytes; list: items; bytes: size
    uint32_t item_max;   //  lists of strings: bytes in each
    const s_schema_t *schema;
} s_field_t;

//  A struct's last fields may be optional (field_count - required of
//  them): the encoder leaves out the trailing ones that hold their zero
//  value, and the decoder takes a missing one as zero. So a message that
//  says nothing new is the very bytes an older node wrote and reads.
struct s_schema {
    const char *name;
    size_t size;
    size_t field_count;
    const s_field_t *fields;
    size_t required;
};

//  The macros below fill one s_field_t each from a struct type and a member
//  name, so a table row names its field once. Kept unformatted: one row per
//  line reads as a table.
// clang-format off
#define MEMBER_SIZE(T, m) sizeof (((T *) 0)->m)
#define UINT_KIND(size)   ((size) == 1 ? K_U8 : (size) == 2 ? K_U16 : (size) == 4 ? K_U32 : K_U64)

#define F_BOOL(T, m)             { #m, K_BOOL, offsetof (T, m), 0, 1, 0, NULL }
#define F_UINT(T, m, mx)         { #m, UINT_KIND (MEMBER_SIZE (T, m)), offsetof (T, m), 0, (mx), 0, NULL }
#define F_BYTES(T, m)            { #m, K_BYTES, offsetof (T, m), 0, MEMBER_SIZE (T, m), 0, NULL }
#define F_STR(T, m, mx)          { #m, K_STR, offsetof (T, m), 0, (mx), 0, NULL }
#define F_STRS(T, m, n, mx, imx) { #m, K_STRS, offsetof (T, m), offsetof (T, n), (mx), (imx), NULL }
#define F_IDS(T, m, n, mx)       { #m, K_IDS, offsetof (T, m), offsetof (T, n), (mx), 0, NULL }
#define F_U64S(T, m, n, mx)      { #m, K_U64S, offsetof (T, m), offsetof (T, n), (mx), 0, NULL }
#define F_LABELS(T, m, n)        { #m, K_LABELS, offsetof (T, m), offsetof (T, n), SHOAL_LABELS_MAX, SHOAL_LABEL_MAX, NULL }
#define F_LIST(T, m, n, mx, s)   { #m, K_LIST, offsetof (T, m), offsetof (T, n), (mx), 0, &(s) }
#define F_STRUCT(T, m, s)        { #m, K_STRUCT, offsetof (T, m), 0, 0, 0, &(s) }
#define F_OPTIONAL(T, m, s)      { #m, K_OPTIONAL, offsetof (T, m), 0, 0, 0, &(s) }
// clang-format on

#define SCHEMA(var, label, T, table)                                                               \
    static const s_schema_t var = { label, sizeof (T), sizeof (table) / sizeof (table[0]), table,  \
                                    sizeof (table) / sizeof (table[0]) }
//  A schema whose fields after the first `required` are optional.
#define SCHEMA_TAIL(var, label, T, table, required)                                                \
    static const s_schema_t var = { label, sizeof (T), sizeof (table) / sizeof (table[0]), table,  \
                                    (required) }

static const s_field_t s_epoch_fields[] = {
    F_UINT (shoal_epoch_t, term, UINT64_MAX),
    F_UINT (shoal_epoch_t, version, UINT64_MAX),
};
SCHEMA (s_epoch, "epoch", shoal_epoch_t, s_epoch_fields);

static const s_field_t s_meta_fields[] = {
    F_STR (shoal_meta_t, name, SHOAL_NAME_MAX),
    F_STR (shoal_meta_t, addr, SHOAL_ADDR_MAX),
    F_UINT (shoal_meta_t, life, UINT64_MAX),
    F_UINT (shoal_meta_t, priority, UINT32_MAX),
    F_UINT (shoal_meta_t, capacity, UINT32_MAX),
    F_UINT (shoal_meta_t, slots, UINT32_MAX),
    F_LABELS (shoal_meta_t, labels, label_count),
    F_STRS (shoal_meta_t, handles, handle_count, SHOAL_HANDLES_MAX, SHOAL_NAME_MAX),
    F_UINT (shoal_meta_t, cordon, SHOAL_CORDON_MAX),
};
//  cordon came later: a member that takes tasks (0) encodes as before.
SCHEMA_TAIL (s_meta, "meta", shoal_meta_t, s_meta_fields, 8);

static const s_field_t s_update_fields[] = {
    F_BYTES (shoal_update_t, node),
    F_UINT (shoal_update_t, incarnation, UINT64_MAX),
    F_UINT (shoal_update_t, state, SHOAL_MEMBER_LEFT),
    F_BYTES (shoal_update_t, by),
    F_OPTIONAL (shoal_update_t, meta, s_meta),
};
SCHEMA (s_update, "update", shoal_update_t, s_update_fields);

static const s_field_t s_jobspec_fields[] = {
    F_STR (shoal_jobspec_t, name, SHOAL_NAME_MAX),
    F_UINT (shoal_jobspec_t, parallelism, SHOAL_PARALLELISM_MAX),
    F_BOOL (shoal_jobspec_t, stateful),
    F_UINT (shoal_jobspec_t, weight, UINT32_MAX),
    F_LABELS (shoal_jobspec_t, require, require_count),
    F_STR (shoal_jobspec_t, command, SHOAL_COMMAND_MAX),
    F_BOOL (shoal_jobspec_t, fenced),
};
//  fenced came later: a spec without it (false) encodes as before.
SCHEMA_TAIL (s_jobspec, "jobspec", shoal_jobspec_t, s_jobspec_fields, 6);

static const s_field_t s_placement_fields[] = {
    F_STR (shoal_placement_t, task, SHOAL_TASK_MAX),
    F_BYTES (shoal_placement_t, node),
    F_UINT (shoal_placement_t, role, SHOAL_ROLE_LEARNER),
    F_STRUCT (shoal_placement_t, epoch, s_epoch),
};
SCHEMA (s_placement, "placement", shoal_placement_t, s_placement_fields);

static const s_field_t s_task_status_fields[] = {
    F_STR (shoal_task_status_t, task, SHOAL_TASK_MAX),
    F_UINT (shoal_task_status_t, role, SHOAL_ROLE_LEARNER),
    F_UINT (shoal_task_status_t, state, SHOAL_TASK_FAILED),
    F_UINT (shoal_task_status_t, lag, UINT64_MAX),
    F_STRUCT (shoal_task_status_t, epoch, s_epoch),
    F_UINT (shoal_task_status_t, restarts, UINT32_MAX),
    F_UINT (shoal_task_status_t, last_exit, SHOAL_EXIT_MAX),
    F_STR (shoal_task_status_t, error, SHOAL_REASON_MAX),
};
SCHEMA_TAIL (s_task_status, "task", shoal_task_status_t, s_task_status_fields, 5);

static const s_field_t s_task_report_fields[] = {
    F_BYTES (shoal_task_report_t, node),
    F_STRUCT (shoal_task_report_t, status, s_task_status),
    F_STR (shoal_task_report_t, reason, SHOAL_REASON_MAX),
};
SCHEMA_TAIL (s_task_report, "task", shoal_task_report_t, s_task_report_fields, 2);

static const s_field_t s_keys_req_fields[] = {
    F_UINT (shoal_keys_req_t, op, SHOAL_KEYS_REMOVE),
    F_UINT (shoal_keys_req_t, key_id, UINT32_MAX),
    F_BYTES (shoal_keys_req_t, key),
};
SCHEMA (s_keys_req, "keys", shoal_keys_req_t, s_keys_req_fields);

static const s_field_t s_keyring_report_fields[] = {
    F_BYTES (shoal_keyring_report_t, node),
    F_STR (shoal_keyring_report_t, name, SHOAL_NAME_MAX),
    F_UINT (shoal_keyring_report_t, code, SHOAL_REPLY_FAILED),
    F_STR (shoal_keyring_report_t, reason, SHOAL_REASON_MAX),
    F_UINT (shoal_keyring_report_t, primary, UINT32_MAX),
    F_U64S (shoal_keyring_report_t, keys, key_count, SHOAL_KEYRING_MAX),
};
SCHEMA (s_keyring_report, "keyring", shoal_keyring_report_t, s_keyring_report_fields);

//  Messages.

static const s_field_t s_beacon_fields[] = {
    F_BYTES (shoal_beacon_t, cluster),
    F_BYTES (shoal_beacon_t, node),
    F_UINT (shoal_beacon_t, incarnation, UINT64_MAX),
    F_UINT (shoal_beacon_t, port, UINT16_MAX),
    F_UINT (shoal_beacon_t, flags, SHOAL_BEACON_LEAVING),
};
SCHEMA (s_beacon, "beacon", shoal_beacon_t, s_beacon_fields);

static const s_field_t s_ping_fields[] = {
    F_UINT (shoal_ping_t, seq, UINT32_MAX),
    F_BYTES (shoal_ping_t, target),
    F_LIST (shoal_ping_t, updates, update_count, SHOAL_UPDATES_MAX, s_update),
};
SCHEMA (s_ping, "ping", shoal_ping_t, s_ping_fields);

static const s_field_t s_ack_fields[] = {
    F_UINT (shoal_ack_t, seq, UINT32_MAX),
    F_LIST (shoal_ack_t, updates, update_count, SHOAL_UPDATES_MAX, s_update),
};
SCHEMA (s_ack, "ack", shoal_ack_t, s_ack_fields);
SCHEMA (s_nack, "nack", shoal_ack_t, s_ack_fields);

static const s_field_t s_ping_req_fields[] = {
    F_UINT (shoal_ping_req_t, seq, UINT32_MAX),
    F_BYTES (shoal_ping_req_t, target),
    F_STR (shoal_ping_req_t, addr, SHOAL_ADDR_MAX),
    F_LIST (shoal_ping_req_t, updates, update_count, SHOAL_UPDATES_MAX, s_update),
};
SCHEMA (s_ping_req, "ping-req", shoal_ping_req_t, s_ping_req_fields);

static const s_field_t s_digest_fields[] = {
    F_UINT (shoal_digest_t, member_count, SHOAL_MEMBERS_MAX),
    F_U64S (shoal_digest_t, buckets, bucket_count, SHOAL_DIGEST_BUCKETS_MAX),
    F_UINT (shoal_digest_t, jobs_version, UINT64_MAX),
    F_BYTES (shoal_digest_t, jobs),
    F_STRUCT (shoal_digest_t, assignment, s_epoch),
};
SCHEMA (s_digest, "digest", shoal_digest_t, s_digest_fields);

static const s_field_t s_sync_req_fields[] = {
    F_UINT (shoal_sync_req_t, want, SHOAL_SYNC_MEMBERS | SHOAL_SYNC_JOBS | SHOAL_SYNC_ASSIGNMENT),
    F_UINT (shoal_sync_req_t, bucket_count, SHOAL_DIGEST_BUCKETS_MAX),
    F_BYTES (shoal_sync_req_t, buckets),
};
SCHEMA (s_sync_req, "sync-req", shoal_sync_req_t, s_sync_req_fields);

static const s_field_t s_sync_reply_fields[] = {
    F_LIST (shoal_sync_reply_t, members, member_count, SHOAL_MEMBERS_MAX, s_update),
    F_UINT (shoal_sync_reply_t, jobs_version, UINT64_MAX),
    F_LIST (shoal_sync_reply_t, jobs, job_count, SHOAL_JOBS_MAX, s_jobspec),
    F_UINT (shoal_sync_reply_t, jobs_term, UINT64_MAX),
    F_UINT (shoal_sync_reply_t, parts, SHOAL_SYNC_MEMBERS | SHOAL_SYNC_JOBS),
};
SCHEMA (s_sync_reply, "sync-reply", shoal_sync_reply_t, s_sync_reply_fields);

static const s_field_t s_election_fields[] = {
    F_UINT (shoal_election_t, term, UINT64_MAX),
    F_UINT (shoal_election_t, priority, UINT32_MAX),
};
SCHEMA (s_election, "election", shoal_election_t, s_election_fields);

static const s_field_t s_coordinator_fields[] = {
    F_UINT (shoal_coordinator_t, term, UINT64_MAX),
    F_UINT (shoal_coordinator_t, priority, UINT32_MAX),
    F_UINT (shoal_coordinator_t, round, UINT64_MAX),
    F_UINT (shoal_coordinator_t, voters_version, UINT64_MAX),
    F_IDS (shoal_coordinator_t, voters, voter_count, SHOAL_VOTERS_MAX),
};
SCHEMA (s_coordinator, "coordinator", shoal_coordinator_t, s_coordinator_fields);

static const s_field_t s_answer_fields[] = {
    F_UINT (shoal_answer_t, term, UINT64_MAX),
};
SCHEMA (s_answer, "answer", shoal_answer_t, s_answer_fields);

static const s_field_t s_coordinator_ack_fields[] = {
    F_UINT (shoal_coordinator_ack_t, term, UINT64_MAX),
    F_UINT (shoal_coordinator_ack_t, jobs_version, UINT64_MAX),
    F_STRUCT (shoal_coordinator_ack_t, assignment, s_epoch),
    F_UINT (shoal_coordinator_ack_t, round, UINT64_MAX),
    F_UINT (shoal_coordinator_ack_t, voters_version, UINT64_MAX),
    F_IDS (shoal_coordinator_ack_t, voters, voter_count, SHOAL_VOTERS_MAX),
    F_BOOL (shoal_coordinator_ack_t, leaving),
};
//  leaving came later: an acknowledgement of a node that stays encodes as before.
SCHEMA_TAIL (s_coordinator_ack, "coordinator-ack", shoal_coordinator_ack_t,
             s_coordinator_ack_fields, 6);

static const s_field_t s_assign_fields[] = {
    F_UINT (shoal_assign_t, term, UINT64_MAX),
    F_UINT (shoal_assign_t, version, UINT64_MAX),
    F_UINT (shoal_assign_t, base_version, UINT64_MAX),
    F_BOOL (shoal_assign_t, snapshot),
    F_IDS (shoal_assign_t, voters, voter_count, SHOAL_VOTERS_MAX),
    F_LIST (shoal_assign_t, placements, placement_count, SHOAL_PLACEMENTS_MAX, s_placement),
    F_UINT (shoal_assign_t, status_seq, UINT64_MAX),
};
SCHEMA (s_assign, "assign", shoal_assign_t, s_assign_fields);

static const s_field_t s_status_fields[] = {
    F_UINT (shoal_status_t, term, UINT64_MAX),
    F_UINT (shoal_status_t, applied_version, UINT64_MAX),
    F_LIST (shoal_status_t, tasks, task_count, SHOAL_TASKS_MAX, s_task_status),
    F_UINT (shoal_status_t, seq, UINT64_MAX),
    F_UINT (shoal_status_t, cordon, SHOAL_CORDON_MAX),
};
//  cordon came later: a node that takes tasks (0) encodes as before.
SCHEMA_TAIL (s_status, "status", shoal_status_t, s_status_fields, 4);

static const s_field_t s_job_fields[] = {
    F_UINT (shoal_job_t, term, UINT64_MAX),
    F_UINT (shoal_job_t, version, UINT64_MAX),
    F_STRUCT (shoal_job_t, spec, s_jobspec),
};
SCHEMA (s_job, "job", shoal_job_t, s_job_fields);

static const s_field_t s_job_ack_fields[] = {
    F_UINT (shoal_job_ack_t, term, UINT64_MAX),
    F_UINT (shoal_job_ack_t, version, UINT64_MAX),
};
SCHEMA (s_job_ack, "job-ack", shoal_job_ack_t, s_job_ack_fields);

static const s_field_t s_logs_req_fields[] = {
    F_STR (shoal_logs_req_t, task, SHOAL_TASK_MAX),
    F_BYTES (shoal_logs_req_t, node),
    F_UINT (shoal_logs_req_t, lines, SHOAL_LOGS_LINES_MAX),
};
SCHEMA (s_logs_req, "logs-req", shoal_logs_req_t, s_logs_req_fields);

static const s_field_t s_control_req_fields[] = {
    F_UINT (shoal_control_req_t, id, UINT32_MAX),
    F_UINT (shoal_control_req_t, op, SHOAL_OP_LOGS),
    F_STR (shoal_control_req_t, job, SHOAL_NAME_MAX),
    F_UINT (shoal_control_req_t, parallelism, SHOAL_PARALLELISM_MAX),
    F_UINT (shoal_control_req_t, min, SHOAL_PARALLELISM_MAX),
    F_UINT (shoal_control_req_t, timeout_ms, UINT32_MAX),
    F_OPTIONAL (shoal_control_req_t, spec, s_jobspec),
    F_OPTIONAL (shoal_control_req_t, keys, s_keys_req),
    F_OPTIONAL (shoal_control_req_t, logs, s_logs_req),
    F_BOOL (shoal_control_req_t, leave),
};
//  keys, logs and leave came later: a request without them encodes as before.
SCHEMA_TAIL (s_control_req, "control-req", shoal_control_req_t, s_control_req_fields, 7);

static const s_field_t s_control_rep_fields[] = {
    F_UINT (shoal_control_rep_t, id, UINT32_MAX),
    F_UINT (shoal_control_rep_t, code, SHOAL_REPLY_FAILED),
    F_STR (shoal_control_rep_t, reason, SHOAL_REASON_MAX),
    F_BYTES (shoal_control_rep_t, leader),
    F_UINT (shoal_control_rep_t, term, UINT64_MAX),
    F_UINT (shoal_control_rep_t, version, UINT64_MAX),
    F_LIST (shoal_control_rep_t, members, member_count, SHOAL_MEMBERS_MAX, s_update),
    F_LIST (shoal_control_rep_t, jobs, job_count, SHOAL_JOBS_MAX, s_jobspec),
    F_LIST (shoal_control_rep_t, tasks, task_count, SHOAL_TASKS_MAX, s_task_report),
    F_LIST (shoal_control_rep_t, keyrings, keyring_count, SHOAL_MEMBERS_MAX, s_keyring_report),
    F_STR (shoal_control_rep_t, output, SHOAL_LOGS_TEXT_MAX),
    F_UINT (shoal_control_rep_t, voters_version, UINT64_MAX),
    F_IDS (shoal_control_rep_t, voters, voter_count, SHOAL_VOTERS_MAX),
};
//  keyrings, output and the voters came later: an answer without them
//  encodes as before.
SCHEMA_TAIL (s_control_rep, "control-rep", shoal_control_rep_t, s_control_rep_fields, 9);

static const s_field_t s_keys_fields[] = {
    F_UINT (shoal_keys_t, id, UINT32_MAX),
    F_BOOL (shoal_keys_t, relay),
    F_STRUCT (shoal_keys_t, req, s_keys_req),
};
SCHEMA (s_keys, "keys", shoal_keys_t, s_keys_fields);

static const s_field_t s_keys_ack_fields[] = {
    F_UINT (shoal_keys_ack_t, id, UINT32_MAX),
    F_UINT (shoal_keys_ack_t, code, SHOAL_REPLY_FAILED),
    F_STR (shoal_keys_ack_t, reason, SHOAL_REASON_MAX),
    F_LIST (shoal_keys_ack_t, nodes, node_count, SHOAL_MEMBERS_MAX, s_keyring_report),
};
SCHEMA (s_keys_ack, "keys-ack", shoal_keys_ack_t, s_keys_ack_fields);

static const s_field_t s_logs_fields[] = {
    F_UINT (shoal_logs_t, id, UINT32_MAX),
    F_STR (shoal_logs_t, task, SHOAL_TASK_MAX),
    F_UINT (shoal_logs_t, lines, SHOAL_LOGS_LINES_MAX),
};
SCHEMA (s_logs, "logs", shoal_logs_t, s_logs_fields);

static const s_field_t s_logs_rep_fields[] = {
    F_UINT (shoal_logs_rep_t, id, UINT32_MAX),
    F_UINT (shoal_logs_rep_t, code, SHOAL_REPLY_FAILED),
    F_STR (shoal_logs_rep_t, reason, SHOAL_REASON_MAX),
    F_STR (shoal_logs_rep_t, output, SHOAL_LOGS_TEXT_MAX),
};
SCHEMA (s_logs_rep, "logs-rep", shoal_logs_rep_t, s_logs_rep_fields);

//  Which schema and which carrier each message type has.

typedef struct {
    uint8_t type;
    shoal_purpose_t carrier;
    const s_schema_t *schema;
} s_message_t;

static const s_message_t s_messages[] = {
    { SHOAL_MSG_BEACON, SHOAL_PURPOSE_BEACON, &s_beacon },
    { SHOAL_MSG_PING, SHOAL_PURPOSE_DATAGRAM, &s_ping },
    { SHOAL_MSG_ACK, SHOAL_PURPOSE_DATAGRAM, &s_ack },
    { SHOAL_MSG_PING_REQ, SHOAL_PURPOSE_DATAGRAM, &s_ping_req },
    { SHOAL_MSG_NACK, SHOAL_PURPOSE_DATAGRAM, &s_nack },
    { SHOAL_MSG_DIGEST, SHOAL_PURPOSE_FRAME, &s_digest },
    { SHOAL_MSG_SYNC_REQ, SHOAL_PURPOSE_FRAME, &s_sync_req },
    { SHOAL_MSG_SYNC_REPLY, SHOAL_PURPOSE_FRAME, &s_sync_reply },
    { SHOAL_MSG_ELECTION, SHOAL_PURPOSE_FRAME, &s_election },
    { SHOAL_MSG_ANSWER, SHOAL_PURPOSE_FRAME, &s_answer },
    { SHOAL_MSG_COORDINATOR, SHOAL_PURPOSE_FRAME, &s_coordinator },
    { SHOAL_MSG_COORDINATOR_ACK, SHOAL_PURPOSE_FRAME, &s_coordinator_ack },
    { SHOAL_MSG_ASSIGN, SHOAL_PURPOSE_FRAME, &s_assign },
    { SHOAL_MSG_STATUS, SHOAL_PURPOSE_FRAME, &s_status },
    { SHOAL_MSG_JOB, SHOAL_PURPOSE_FRAME, &s_job },
    { SHOAL_MSG_JOB_ACK, SHOAL_PURPOSE_FRAME, &s_job_ack },
    { SHOAL_MSG_CONTROL_REQ, SHOAL_PURPOSE_FRAME, &s_control_req },
    { SHOAL_MSG_CONTROL_REP, SHOAL_PURPOSE_FRAME, &s_control_rep },
    { SHOAL_MSG_KEYS, SHOAL_PURPOSE_FRAME, &s_keys },
    { SHOAL_MSG_KEYS_ACK, SHOAL_PURPOSE_FRAME, &s_keys_ack },
    { SHOAL_MSG_LOGS, SHOAL_PURPOSE_FRAME, &s_logs },
    { SHOAL_MSG_LOGS_REP, SHOAL_PURPOSE_FRAME, &s_logs_rep },
};

#define MESSAGE_COUNT (sizeof (s_messages) / sizeof (s_messages[0]))

const uint8_t shoal_msg_types[] = {
    SHOAL_MSG_BEACON,      SHOAL_MSG_PING,        SHOAL_MSG_ACK,         SHOAL_MSG_PING_REQ,
    SHOAL_MSG_NACK,        SHOAL_MSG_DIGEST,      SHOAL_MSG_SYNC_REQ,    SHOAL_MSG_SYNC_REPLY,
    SHOAL_MSG_ELECTION,    SHOAL_MSG_ANSWER,      SHOAL_MSG_COORDINATOR, SHOAL_MSG_COORDINATOR_ACK,
    SHOAL_MSG_ASSIGN,      SHOAL_MSG_STATUS,      SHOAL_MSG_JOB,         SHOAL_MSG_JOB_ACK,
    SHOAL_MSG_CONTROL_REQ, SHOAL_MSG_CONTROL_REP, SHOAL_MSG_KEYS,        SHOAL_MSG_KEYS_ACK,
    SHOAL_MSG_LOGS,        SHOAL_MSG_LOGS_REP,
};
const size_t shoal_msg_type_count = sizeof (shoal_msg_types);

_Static_assert(sizeof (shoal_msg_types) == MESSAGE_COUNT, "every message type is listed");
_Static_assert(SHOAL_BEACON_MAX > SHOAL_ENVELOPE_OVERHEAD, "a beacon has room for a payload");

static const s_message_t *
s_message (int type)
{
    for (size_t i = 0; i < MESSAGE_COUNT; i++)
        if (s_messages[i].type == type)
            return &s_messages[i];
    return NULL;
}

void
shoal_id_format (const uint8_t id[SHOAL_ID_SIZE], bool none_blank, char text[SHOAL_ID_TEXT])
{
    static const char digits[] = "0123456789abcdef";
    bool none = true;
    for (size_t i = 0; i < SHOAL_ID_SIZE; i++) {
        text[2 * i] = digits[id[i] >> 4];
        text[2 * i + 1] = digits[id[i] & 15];
        none &= id[i] == 0;
    }
    text[none && none_blank ? 0 : 2 * SHOAL_ID_SIZE] = 0;
}

const char *
shoal_msg_type_name (int type)
{
    const s_message_t *message = s_message (type);
    return message ? message->schema->name : NULL;
}

shoal_purpose_t
shoal_msg_purpose (int type)
{
    const s_message_t *message = s_message (type);
    return message ? message->carrier : 0;
}

//  What a carrier leaves for the message once the envelope takes its part.
static size_t
s_payload_max (shoal_purpose_t purpose)
{
    return shoal_envelope_size_max (purpose) - SHOAL_ENVELOPE_OVERHEAD;
}

size_t
shoal_msg_size_max (int type)
{
    const s_message_t *message = s_message (type);
    return message ? s_payload_max (message->carrier) : 0;
}

//  ---------------------------------------------------------------------
//  Shared by encoder and decoder: the path to the field at hand, so that
//  every error names the field ("assign.placements[7].task: ...").

#define PATH_DEPTH 8

typedef struct {
    struct {
        const char *name;
        long index; //  -1 when not in a list
    } path[PATH_DEPTH];
    int depth;
    bool failed; //  a limit or a read failed, as opposed to running out of space
    shoal_wire_error_t *err;
} s_trail_t;

static void
s_enter (s_trail_t *trail, const char *name, long index)
{
    if (trail->depth < PATH_DEPTH) {
        trail->path[trail->depth].name = name;
        trail->path[trail->depth].index = index;
    }
    trail->depth++;
}

static void
s_leave (s_trail_t *trail)
{
    trail->depth--;
}

static int
s_fail (s_trail_t *trail, const char *format, ...)
{
    trail->failed = true;
    if (!trail->err)
        return -1;
    char *text = trail->err->text;
    size_t size = sizeof (trail->err->text), used = 0;
    int depth = trail->depth < PATH_DEPTH ? trail->depth : PATH_DEPTH;
    for (int i = 0; i < depth && used < size; i++) {
        int n =
            (trail->path[i].index >= 0)
                ? snprintf (text + used, size - used, "[%ld]", trail->path[i].index)
                : snprintf (text + used, size - used, "%s%s", i ? "." : "", trail->path[i].name);
        used += n > 0 ? (size_t) n : 0;
    }
    if (used < size) {
        int n = snprintf (text + used, size - used, "%s", depth ? ": " : "");
        used += n > 0 ? (size_t) n : 0;
    }
    if (used < size) {
        va_list args;
        va_start (args, format);
        vsnprintf (text + used, size - used, format, args);
        va_end (args);
    }
    return -1;
}

//  A string the wire accepts: valid UTF-8 (no overlong forms, no surrogates),
//  no NUL, so it is safe as a C string and in JSON.
size_t
shoal_text_cut (const char *text, size_t length)
{
    size_t back = 0;
    while (back < 3 && back < length && ((unsigned char) text[length - 1 - back] & 0xC0) == 0x80)
        back++;
    if (back == length)
        return length;
    unsigned char lead = (unsigned char) text[length - 1 - back];
    size_t size = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    return lead >= 0xC0 && size > back + 1 ? length - 1 - back : length;
}

bool
shoal_text_valid (const uint8_t *s, size_t size)
{
    size_t i = 0;
    while (i < size) {
        uint8_t c = s[i];
        if (c == 0)
            return false;
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t n;
        uint32_t cp;
        if ((c & 0xe0) == 0xc0)
            n = 1, cp = c & 0x1f;
        else if ((c & 0xf0) == 0xe0)
            n = 2, cp = c & 0x0f;
        else if ((c & 0xf8) == 0xf0)
            n = 3, cp = c & 0x07;
        else
            return false;
        if (size - i <= n)
            return false;
        for (size_t k = 1; k <= n; k++) {
            if ((s[i + k] & 0xc0) != 0x80)
                return false;
            cp = (cp << 6) | (s[i + k] & 0x3f);
        }
        static const uint32_t least[] = { 0, 0x80, 0x800, 0x10000 };
        if (cp < least[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return false;
        i += n + 1;
    }
    return true;
}

static int
s_check_text (s_trail_t *trail, const char *s, size_t size, uint64_t max)
{
    if (size > max)
        return s_fail (trail, "%zu bytes, limit %llu", size, (unsigned long long) max);
    if (!shoal_text_valid ((const uint8_t *) s, size))
        return s_fail (trail, "not UTF-8 text without NUL");
    return 0;
}

static uint64_t
s_uint_get (const void *at, s_kind_t kind)
{
    switch (kind) {
    case K_U8:
        return *(const uint8_t *) at;
    case K_U16:
        return *(const uint16_t *) at;
    case K_U32:
        return *(const uint32_t *) at;
    default:
        return *(const uint64_t *) at;
    }
}

static void
s_uint_set (void *at, s_kind_t kind, uint64_t value)
{
    switch (kind) {
    case K_U8:
        *(uint8_t *) at = (uint8_t) value;
        break;
    case K_U16:
        *(uint16_t *) at = (uint16_t) value;
        break;
    case K_U32:
        *(uint32_t *) at = (uint32_t) value;
        break;
    default:
        *(uint64_t *) at = value;
        break;
    }
}

static uint32_t
s_count_get (const uint8_t *base, const s_field_t *field)
{
    uint32_t count;
    memcpy (&count, base + field->count_offset, sizeof count);
    return count;
}

static void *
s_pointer_get (const uint8_t *base, const s_field_t *field)
{
    void *pointer;
    memcpy (&pointer, base + field->offset, sizeof pointer);
    return pointer;
}

//  The fewest bytes one encoded struct of schema can take: what a list
//  count is checked against before any memory is reserved for it.
static size_t
s_min_size (const s_schema_t *schema)
{
    size_t size = 1;
    for (size_t i = 0; i < schema->required; i++) {
        const s_field_t *field = &schema->fields[i];
        if (field->kind == K_BYTES)
            size += 2 + field->max;
        else if (field->kind == K_STRUCT)
            size += s_min_size (field->schema);
        else
            size += 1;
    }
    return size;
}

//  ---------------------------------------------------------------------
//  Encoder

typedef struct {
    uint8_t *out; //  NULL when only measuring
    size_t capacity;
    size_t size;
} s_sink_t;

static int
s_sink_write (void *data, const char *bytes, size_t size)
{
    s_sink_t *sink = data;
    if (size > sink->capacity - sink->size)
        return -1;
    if (sink->out)
        memcpy (sink->out + sink->size, bytes, size);
    sink->size += size;
    return 0;
}

typedef struct {
    msgpack_packer packer;
    s_trail_t trail;
} s_encoder_t;

static int s_encode_struct (s_encoder_t *self, const s_schema_t *schema, const uint8_t *base);

static int
s_encode_text (s_encoder_t *self, const char *s, uint64_t max)
{
    if (!s)
        s = "";
    size_t size = strlen (s);
    if (s_check_text (&self->trail, s, size, max))
        return -1;
    return msgpack_pack_str_with_body (&self->packer, s, size);
}

static int
s_encode_labels (s_encoder_t *self, const s_field_t *field, const uint8_t *base)
{
    uint32_t count = s_count_get (base, field);
    const shoal_label_t *labels = s_pointer_get (base, field);
    if (count > field->max)
        return s_fail (&self->trail, "%u labels, limit %llu", count,
                       (unsigned long long) field->max);
    if (count && !labels)
        return s_fail (&self->trail, "%u labels but no array", count);
    if (msgpack_pack_map (&self->packer, count))
        return -1;
    for (uint32_t i = 0; i < count; i++) {
        s_enter (&self->trail, NULL, i);
        if (!labels[i].key || !*labels[i].key)
            return s_fail (&self->trail, "empty label key");
        for (uint32_t k = 0; k < i; k++)
            if (strcmp (labels[k].key, labels[i].key) == 0)
                return s_fail (&self->trail, "label key \"%s\" given twice", labels[i].key);
        if (s_encode_text (self, labels[i].key, field->item_max) ||
            s_encode_text (self, labels[i].value, field->item_max))
            return -1;
        s_leave (&self->trail);
    }
    return 0;
}

static int
s_encode_field (s_encoder_t *self, const s_field_t *field, const uint8_t *base)
{
    const uint8_t *at = base + field->offset;
    msgpack_packer *pk = &self->packer;
    switch (field->kind) {
    case K_BOOL:
        return *(const bool *) at ? msgpack_pack_true (pk) : msgpack_pack_false (pk);
    case K_U8:
    case K_U16:
    case K_U32:
    case K_U64: {
        uint64_t value = s_uint_get (at, field->kind);
        if (value > field->max)
            return s_fail (&self->trail, "%llu, limit %llu", (unsigned long long) value,
                           (unsigned long long) field->max);
        return msgpack_pack_uint64 (pk, value);
    }
    case K_BYTES:
        return msgpack_pack_bin_with_body (pk, at, field->max);
    case K_STR: {
        const char *s;
        memcpy (&s, at, sizeof s);
        return s_encode_text (self, s, field->max);
    }
    case K_LABELS:
        return s_encode_labels (self, field, base);
    case K_STRUCT:
        return s_encode_struct (self, field->schema, at);
    case K_OPTIONAL: {
        const uint8_t *inner = s_pointer_get (base, field);
        return inner ? s_encode_struct (self, field->schema, inner) : msgpack_pack_nil (pk);
    }
    case K_STRS:
    case K_IDS:
    case K_U64S:
    case K_LIST:
        break;
    }
    uint32_t count = s_count_get (base, field);
    const uint8_t *items = s_pointer_get (base, field);
    if (count > field->max)
        return s_fail (&self->trail, "%u items, limit %llu", count,
                       (unsigned long long) field->max);
    if (count && !items)
        return s_fail (&self->trail, "%u items but no array", count);
    if (msgpack_pack_array (pk, count))
        return -1;
    for (uint32_t i = 0; i < count; i++) {
        s_enter (&self->trail, NULL, i);
        int rc;
        if (field->kind == K_STRS)
            rc = s_encode_text (self, ((const char *const *) items)[i], field->item_max);
        else if (field->kind == K_IDS)
            rc = msgpack_pack_bin_with_body (pk, items + i * SHOAL_ID_SIZE, SHOAL_ID_SIZE);
        else if (field->kind == K_U64S)
            rc = msgpack_pack_uint64 (pk, ((const uint64_t *) items)[i]);
        else
            rc = s_encode_struct (self, field->schema, items + i * field->schema->size);
        if (rc)
            return -1;
        s_leave (&self->trail);
    }
    return 0;
}

//  True when field holds its zero value: an optional field left out.
static bool
s_field_empty (const s_field_t *field, const uint8_t *base)
{
    const uint8_t *at = base + field->offset;
    switch (field->kind) {
    case K_BOOL:
        return !*(const bool *) at;
    case K_U8:
    case K_U16:
    case K_U32:
    case K_U64:
        return s_uint_get (at, field->kind) == 0;
    case K_BYTES:
        for (size_t i = 0; i < field->max; i++)
            if (at[i])
                return false;
        return true;
    case K_STR: {
        const char *s;
        memcpy (&s, at, sizeof s);
        return !s || !*s;
    }
    case K_STRUCT:
        for (size_t i = 0; i < field->schema->field_count; i++)
            if (!s_field_empty (&field->schema->fields[i], at))
                return false;
        return true;
    case K_OPTIONAL:
        return s_pointer_get (base, field) == NULL;
    case K_STRS:
    case K_IDS:
    case K_U64S:
    case K_LABELS:
    case K_LIST:
        break;
    }
    return s_count_get (base, field) == 0;
}

//  How many fields of schema the encoder writes: all but the trailing
//  optional ones that are empty.
static size_t
s_encoded_count (const s_schema_t *schema, const uint8_t *base)
{
    size_t count = schema->field_count;
    while (count > schema->required && s_field_empty (&schema->fields[count - 1], base))
        count--;
    return count;
}

static int
s_encode_fields (s_encoder_t *self, const s_schema_t *schema, const uint8_t *base)
{
    size_t count = s_encoded_count (schema, base);
    for (size_t i = 0; i < count; i++) {
        s_enter (&self->trail, schema->fields[i].name, -1);
        if (s_encode_field (self, &schema->fields[i], base))
            return -1;
        s_leave (&self->trail);
    }
    return 0;
}

static int
s_encode_struct (s_encoder_t *self, const s_schema_t *schema, const uint8_t *base)
{
    if (msgpack_pack_array (&self->packer, s_encoded_count (schema, base)))
        return -1;
    return s_encode_fields (self, schema, base);
}

long
shoal_msg_encode (const shoal_msg_t *msg, uint8_t *out, size_t capacity, shoal_wire_error_t *err)
{
    s_encoder_t encoder = { .trail = { .err = err } };
    const s_message_t *message = s_message (msg->type);
    if (!message)
        return s_fail (&encoder.trail, "unknown message type %d", msg->type);
    size_t limit = shoal_msg_size_max (msg->type);
    s_sink_t sink = { out, out && capacity < limit ? capacity : limit, 0 };
    msgpack_packer_init (&encoder.packer, &sink, s_sink_write);
    s_enter (&encoder.trail, message->schema->name, -1);
    if (msgpack_pack_array (&encoder.packer,
                            2 + s_encoded_count (message->schema, (const uint8_t *) &msg->u)) ||
        msgpack_pack_uint8 (&encoder.packer, SHOAL_WIRE_VERSION) ||
        msgpack_pack_uint8 (&encoder.packer, msg->type) ||
        s_encode_fields (&encoder, message->schema, (const uint8_t *) &msg->u)) {
        //  A broken limit has said so; otherwise the packer ran out of room.
        if (!encoder.trail.failed) {
            encoder.trail.depth = 1;
            s_fail (&encoder.trail, "does not fit in %zu bytes", sink.capacity);
        }
        return -1;
    }
    return (long) sink.size;
}

int
shoal_wire_jobspec_encode (struct msgpack_packer *packer, const shoal_jobspec_t *spec,
                           shoal_wire_error_t *err)
{
    s_encoder_t encoder = { .packer = *packer, .trail = { .err = err } };
    if (s_encode_struct (&encoder, &s_jobspec, (const uint8_t *) spec)) {
        if (!encoder.trail.failed) {
            encoder.trail.depth = 0;
            s_fail (&encoder.trail, "the packer refused to write");
        }
        return -1;
    }
    return 0;
}

//  ---------------------------------------------------------------------
//  Decoder

typedef struct {
    shoal_reader_t reader;
    shoal_arena_t *arena;
    s_trail_t trail;
} s_decoder_t;

static int s_decode_struct (s_decoder_t *self, const s_schema_t *schema, uint8_t *base);

static int
s_read_fail (s_decoder_t *self, const char *expected)
{
    return s_fail (&self->trail, "%s (expected %s)", self->reader.why, expected);
}

static void *
s_reserve (s_decoder_t *self, size_t size)
{
    void *memory = shoal_arena_alloc (self->arena, size);
    if (!memory)
        s_fail (&self->trail, "arena of %zu bytes is full", self->arena->size);
    return memory;
}

//  Reads a string and copies it into the arena, NUL-terminated.
static int
s_decode_text (s_decoder_t *self, uint64_t max, const char **text)
{
    const uint8_t *data;
    uint32_t size;
    if (shoal_reader_str (&self->reader, &data, &size))
        return s_read_fail (self, "string");
    if (s_check_text (&self->trail, (const char *) data, size, max))
        return -1;
    char *copy = shoal_arena_strndup (self->arena, data, size);
    if (!copy)
        return s_fail (&self->trail, "arena of %zu bytes is full", self->arena->size);
    *text = copy;
    return 0;
}

static int
s_decode_bytes (s_decoder_t *self, uint8_t *at, size_t size)
{
    const uint8_t *data;
    uint32_t got;
    if (shoal_reader_bin (&self->reader, &data, &got))
        return s_read_fail (self, "binary");
    if (got != size)
        return s_fail (&self->trail, "%u bytes, expected %zu", got, size);
    memcpy (at, data, size);
    return 0;
}

//  Reads a list or map header and reserves its items: the count is checked
//  against the field's limit and against the bytes left, then the memory is
//  taken from the arena, zeroed. An empty list reserves nothing (NULL).
static int
s_decode_count (s_decoder_t *self, const s_field_t *field, bool is_map, size_t item_min,
                size_t item_size, uint32_t *count, void **items)
{
    int rc = is_map ? shoal_reader_map (&self->reader, count)
                    : shoal_reader_array (&self->reader, count);
    if (rc)
        return s_read_fail (self, is_map ? "map" : "array");
    if (*count > field->max)
        return s_fail (&self->trail, "%u items, limit %llu", *count,
                       (unsigned long long) field->max);
    if (*count > shoal_reader_left (&self->reader) / item_min)
        return s_fail (&self->trail, "%u items cannot fit in the %zu bytes left", *count,
                       shoal_reader_left (&self->reader));
    *items = NULL;
    if (*count == 0)
        return 0;
    *items = s_reserve (self, *count * item_size);
    if (!*items)
        return -1;
    memset (*items, 0, *count * item_size);
    return 0;
}

static int
s_decode_labels (s_decoder_t *self, const s_field_t *field, uint8_t *base)
{
    uint32_t count;
    void *memory;
    if (s_decode_count (self, field, true, 2, sizeof (shoal_label_t), &count, &memory))
        return -1;
    shoal_label_t *labels = memory;
    for (uint32_t i = 0; i < count; i++) {
        s_enter (&self->trail, NULL, i);
        if (s_decode_text (self, field->item_max, &labels[i].key) ||
            s_decode_text (self, field->item_max, &labels[i].value))
            return -1;
        if (!*labels[i].key)
            return s_fail (&self->trail, "empty label key");
        for (uint32_t k = 0; k < i; k++)
            if (strcmp (labels[k].key, labels[i].key) == 0)
                return s_fail (&self->trail, "label key \"%s\" given twice", labels[i].key);
        s_leave (&self->trail);
    }
    memcpy (base + field->count_offset, &count, sizeof count);
    memcpy (base + field->offset, &labels, sizeof labels);
    return 0;
}

static int
s_decode_list (s_decoder_t *self, const s_field_t *field, uint8_t *base)
{
    size_t item_min = field->kind == K_IDS                             ? 2 + SHOAL_ID_SIZE
                      : field->kind == K_STRS || field->kind == K_U64S ? 1
                                                                       : s_min_size (field->schema);
    size_t item_size = field->kind == K_IDS    ? sizeof (shoal_id_t)
                       : field->kind == K_STRS ? sizeof (const char *)
                       : field->kind == K_U64S ? sizeof (uint64_t)
                                               : field->schema->size;
    uint32_t count;
    void *memory;
    if (s_decode_count (self, field, false, item_min, item_size, &count, &memory))
        return -1;
    uint8_t *items = memory;
    for (uint32_t i = 0; i < count; i++) {
        s_enter (&self->trail, NULL, i);
        uint8_t *item = items + i * item_size;
        int rc;
        if (field->kind == K_STRS)
            rc = s_decode_text (self, field->item_max, (const char **) item);
        else if (field->kind == K_IDS)
            rc = s_decode_bytes (self, item, SHOAL_ID_SIZE);
        else if (field->kind == K_U64S) {
            rc = shoal_reader_uint (&self->reader, (uint64_t *) item);
            if (rc)
                rc = s_read_fail (self, "unsigned integer");
        } else
            rc = s_decode_struct (self, field->schema, item);
        if (rc)
            return -1;
        s_leave (&self->trail);
    }
    memcpy (base + field->count_offset, &count, sizeof count);
    memcpy (base + field->offset, &items, sizeof items);
    return 0;
}

static int
s_decode_field (s_decoder_t *self, const s_field_t *field, uint8_t *base)
{
    uint8_t *at = base + field->offset;
    switch (field->kind) {
    case K_BOOL:
        if (shoal_reader_bool (&self->reader, (bool *) at))
            return s_read_fail (self, "boolean");
        return 0;
    case K_U8:
    case K_U16:
    case K_U32:
    case K_U64: {
        uint64_t value;
        if (shoal_reader_uint (&self->reader, &value))
            return s_read_fail (self, "unsigned integer");
        if (value > field->max)
            return s_fail (&self->trail, "%llu, limit %llu", (unsigned long long) value,
                           (unsigned long long) field->max);
        s_uint_set (at, field->kind, value);
        return 0;
    }
    case K_BYTES:
        return s_decode_bytes (self, at, field->max);
    case K_STR:
        return s_decode_text (self, field->max, (const char **) at);
    case K_LABELS:
        return s_decode_labels (self, field, base);
    case K_STRUCT:
        return s_decode_struct (self, field->schema, at);
    case K_OPTIONAL: {
        uint8_t *inner = NULL;
        if (!shoal_reader_nil (&self->reader)) {
            inner = s_reserve (self, field->schema->size);
            if (!inner)
                return -1;
            memset (inner, 0, field->schema->size);
            if (s_decode_struct (self, field->schema, inner))
                return -1;
        }
        memcpy (at, &inner, sizeof inner);
        return 0;
    }
    case K_STRS:
    case K_IDS:
    case K_U64S:
    case K_LIST:
        break;
    }
    return s_decode_list (self, field, base);
}

//  Decodes the first count fields of schema; the optional ones left out
//  keep their zero value, and a string left out reads "".
static int
s_decode_fields (s_decoder_t *self, const s_schema_t *schema, uint8_t *base, size_t count)
{
    for (size_t i = 0; i < schema->field_count; i++) {
        const s_field_t *field = &schema->fields[i];
        if (i >= count) {
            if (field->kind == K_STR) {
                static const char *const empty = "";
                memcpy (base + field->offset, &empty, sizeof empty);
            }
            continue;
        }
        s_enter (&self->trail, field->name, -1);
        if (s_decode_field (self, field, base))
            return -1;
        s_leave (&self->trail);
    }
    return 0;
}

//  The field count a struct of schema may come with.
static int
s_check_count (s_decoder_t *self, const s_schema_t *schema, uint32_t count)
{
    if (count >= schema->required && count <= schema->field_count)
        return 0;
    if (schema->required == schema->field_count)
        return s_fail (&self->trail, "%u fields, expected %zu", count, schema->field_count);
    return s_fail (&self->trail, "%u fields, expected %zu to %zu", count, schema->required,
                   schema->field_count);
}

static int
s_decode_struct (s_decoder_t *self, const s_schema_t *schema, uint8_t *base)
{
    uint32_t count;
    if (shoal_reader_array (&self->reader, &count))
        return s_read_fail (self, "array");
    if (s_check_count (self, schema, count))
        return -1;
    return s_decode_fields (self, schema, base, count);
}

int
shoal_wire_jobspec_decode (shoal_reader_t *reader, shoal_arena_t *arena, shoal_jobspec_t *spec,
                           shoal_wire_error_t *err)
{
    s_decoder_t decoder = { .reader = *reader, .arena = arena, .trail = { .err = err } };
    memset (spec, 0, sizeof *spec);
    int rc = s_decode_struct (&decoder, &s_jobspec, (uint8_t *) spec);
    *reader = decoder.reader;
    return rc;
}

int
shoal_msg_decode (const uint8_t *data, size_t size, shoal_purpose_t carrier, shoal_msg_t *msg,
                  shoal_arena_t *arena, shoal_wire_error_t *err)
{
    s_decoder_t decoder = { .arena = arena, .trail = { .err = err } };
    s_decoder_t *self = &decoder;
    memset (msg, 0, sizeof *msg);
    if (shoal_envelope_size_max (carrier) == 0)
        return s_fail (&self->trail, "unknown carrier %d", (int) carrier);
    if (size > s_payload_max (carrier))
        return s_fail (&self->trail, "message of %zu bytes, a %s carries at most %zu", size,
                       shoal_purpose_name (carrier), s_payload_max (carrier));
    shoal_reader_init (&self->reader, data, size);

    uint32_t count;
    uint64_t version, type;
    if (shoal_reader_array (&self->reader, &count))
        return s_read_fail (self, "message array");
    if (count < 2)
        return s_fail (&self->trail, "message array of %u items", count);
    if (shoal_reader_uint (&self->reader, &version))
        return s_read_fail (self, "protocol version");
    if (version != SHOAL_WIRE_VERSION)
        return s_fail (&self->trail, "protocol version %llu, this node speaks %d",
                       (unsigned long long) version, SHOAL_WIRE_VERSION);
    if (shoal_reader_uint (&self->reader, &type))
        return s_read_fail (self, "message type");
    const s_message_t *message = type <= UINT8_MAX ? s_message ((int) type) : NULL;
    if (!message)
        return s_fail (&self->trail, "unknown message type %llu", (unsigned long long) type);

    s_enter (&self->trail, message->schema->name, -1);
    if (message->carrier != carrier)
        return s_fail (&self->trail, "belongs on a %s, came on a %s",
                       shoal_purpose_name (message->carrier), shoal_purpose_name (carrier));
    if (s_check_count (self, message->schema, count - 2))
        return -1;
    msg->type = (uint8_t) type;
    if (s_decode_fields (self, message->schema, (uint8_t *) &msg->u, count - 2))
        return -1;
    if (shoal_reader_left (&self->reader))
        return s_fail (&self->trail, "%zu bytes after the message",
                       shoal_reader_left (&self->reader));
    return 0;
}

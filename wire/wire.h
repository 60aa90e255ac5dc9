/*  wire/wire.h: every message shoal sends, defined once.

    A message is a msgpack array led by the protocol version and the message
    type, then the fields of that type in the order given here. The structs
    below are the decoded form; the schema tables in wire.c name each field's
    type and limit, and one generic encoder and one generic decoder walk those
    tables, so what is sent and what is accepted cannot drift apart. The
    written spec is docs/wire.md; when this header changes, change it too.

    Decoding trusts nothing: the size is checked first, every count is
    checked against its limit and against the bytes left before anything is
    reserved, strings are copied with explicit lengths, trailing bytes are
    refused, and all memory comes from a caller's arena with a hard cap.
*/
#ifndef SHOAL_WIRE_H
#define SHOAL_WIRE_H

#include "wire/arena.h"
#include "wire/envelope.h"
#include "wire/reader.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

//  ---------------------------------------------------------------------
//  Protocol version and limits

#define SHOAL_WIRE_VERSION 1

//  Longest strings, in bytes, not counting the terminating NUL.
#define SHOAL_NAME_MAX    64         //  node name, job name
#define SHOAL_ADDR_MAX    64         //  "host:port", "[v6]:port"
#define SHOAL_LABEL_MAX   64         //  label key or value
#define SHOAL_TASK_MAX    80         //  "job/index"
#define SHOAL_COMMAND_MAX 4096       //  a worker's job command
#define SHOAL_REASON_MAX  256        //  an error reason in a control reply
#define SHOAL_EXIT_MAX    (256 + 64) //  an exit status, or 256 + a signal

//  Largest lists.
#define SHOAL_LABELS_MAX      16    //  labels of a node, requirements of a job
#define SHOAL_HANDLES_MAX     16    //  jobs a node handles
#define SHOAL_UPDATES_MAX     32    //  membership updates on one datagram
#define SHOAL_MEMBERS_MAX     16384 //  members in a sync or control reply
#define SHOAL_VOTERS_MAX      16384
#define SHOAL_JOBS_MAX        4096
#define SHOAL_PLACEMENTS_MAX  65536 //  (task, node, role) entries in an assignment
#define SHOAL_TASKS_MAX       65536 //  task reports in a status or control reply
#define SHOAL_PARALLELISM_MAX 65535

//  An arena of this many bytes always holds the decoded form of a message of
//  size bytes (the fuzz target for the decoder checks this bound).
#define SHOAL_DECODE_ARENA(size) (12 * (size_t) (size) + 1024)

//  ---------------------------------------------------------------------
//  Values shared by several messages

#define SHOAL_ID_SIZE   16
#define SHOAL_HASH_SIZE 32

//  A node's random id; all zero means "none".
typedef struct {
    uint8_t bytes[SHOAL_ID_SIZE];
} shoal_id_t;

//  A digest of a piece of cluster state (BLAKE2b-256).
typedef struct {
    uint8_t bytes[SHOAL_HASH_SIZE];
} shoal_hash_t;

typedef struct {
    const char *key;
    const char *value;
} shoal_label_t;

//  What a member says about itself; rides on its alive record.
typedef struct {
    const char *name;
    const char *addr; //  where its UDP and ZeroMQ (TCP) ports listen
    uint64_t life;    //  its current life, to address envelopes to it (envelope.h)
    uint32_t priority;
    uint32_t capacity;
    uint32_t slots; //  0 means unlimited
    uint32_t label_count;
    shoal_label_t *labels;
    uint32_t handle_count; //  0 means every job
    const char **handles;
    uint8_t cordon; //  shoal_cordon_t; optional on the wire (0 left out)
} shoal_meta_t;

//  Whether a member takes new tasks (meta.cordon): cordoned, it keeps the
//  actives and standbys it holds and takes nothing new; draining, it holds
//  its actives only until each has a caught-up replacement, and nothing
//  else (docs/assign.md, "Cordon and drain").
typedef enum {
    SHOAL_CORDON_NONE = 0,
    SHOAL_CORDON_CORDONED = 1,
    SHOAL_CORDON_DRAINING = 2,
} shoal_cordon_t;
#define SHOAL_CORDON_MAX SHOAL_CORDON_DRAINING

typedef enum {
    SHOAL_MEMBER_ALIVE = 0,
    SHOAL_MEMBER_SUSPECT = 1,
    SHOAL_MEMBER_DEAD = 2,
    SHOAL_MEMBER_LEFT = 3,
} shoal_member_state_t;

//  One membership update, as disseminated by gossip.
typedef struct {
    shoal_id_t node;
    uint64_t incarnation;
    uint8_t state;      //  shoal_member_state_t
    shoal_id_t by;      //  who suspects or declares dead; zero otherwise
    shoal_meta_t *meta; //  present on alive records; NULL (nil) otherwise
} shoal_update_t;

typedef struct {
    const char *name;
    uint32_t parallelism; //  0 marks a removed job
    bool stateful;
    uint32_t weight;
    uint32_t require_count;
    shoal_label_t *require;
    const char *command; //  "" when the job has none
    bool fenced;         //  its tasks' writes carry their epoch: a dead owner's tasks move at once
} shoal_jobspec_t;

typedef enum {
    SHOAL_ROLE_NONE = 0, //  in a delta: the node no longer holds the task
    SHOAL_ROLE_ACTIVE = 1,
    SHOAL_ROLE_STANDBY = 2,
    SHOAL_ROLE_LEARNER = 3,
} shoal_role_t;

typedef enum {
    SHOAL_TASK_STARTING = 0,
    SHOAL_TASK_RUNNING = 1,
    SHOAL_TASK_STOPPING = 2,
    SHOAL_TASK_STOPPED = 3,
    SHOAL_TASK_FAILED = 4,
} shoal_task_state_t;

//  An epoch names one grant of the active role: (term, version).
typedef struct {
    uint64_t term;
    uint64_t version;
} shoal_epoch_t;

typedef struct {
    const char *task;
    shoal_id_t node;
    uint8_t role; //  shoal_role_t
    shoal_epoch_t epoch;
} shoal_placement_t;

typedef struct {
    const char *task;
    uint8_t role;  //  shoal_role_t
    uint8_t state; //  shoal_task_state_t
    uint64_t lag;  //  for learners and standbys, in the application's units
    shoal_epoch_t epoch;
    //  Optional on the wire (docs/wire.md 5.6): left out while zero.
    uint32_t restarts;  //  exits in a row: it crashes in a loop while above 0
    uint32_t last_exit; //  how the last one ended: status 0-255, or 256 + signal
    const char *error;  //  why it failed last, in words; "" (or NULL) for none
} shoal_task_status_t;

//  A task's status as the leader knows it, for the control client.
typedef struct {
    shoal_id_t node; //  zero for a task placed nowhere
    shoal_task_status_t status;
    const char *reason; //  a task placed nowhere: why; optional, "" otherwise
} shoal_task_report_t;

//  A key operation (docs/wire.md, section 3.4): install carries the key
//  itself, use and remove name one by its id; list changes nothing.
typedef enum {
    SHOAL_KEYS_LIST = 0,
    SHOAL_KEYS_INSTALL = 1,
    SHOAL_KEYS_USE = 2,
    SHOAL_KEYS_REMOVE = 3,
} shoal_keys_op_t;

typedef struct {
    uint8_t op; //  shoal_keys_op_t
    uint32_t key_id;
    uint8_t key[SHOAL_KEY_SIZE]; //  install: the key; all zero otherwise
} shoal_keys_req_t;

//  One node's keyring as it answers a key operation: whether it applied
//  it (code, and why not), and the keys it then holds.
typedef struct {
    shoal_id_t node;
    const char *name;
    uint8_t code; //  shoal_reply_code_t
    const char *reason;
    uint32_t primary;
    uint32_t key_count;
    uint64_t *keys; //  key ids
} shoal_keyring_report_t;

//  ---------------------------------------------------------------------
//  Messages

typedef enum {
    SHOAL_MSG_BEACON = 0x01,
    SHOAL_MSG_PING = 0x10,
    SHOAL_MSG_ACK = 0x11,
    SHOAL_MSG_PING_REQ = 0x12,
    SHOAL_MSG_NACK = 0x13,
    SHOAL_MSG_DIGEST = 0x20,
    SHOAL_MSG_SYNC_REQ = 0x21,
    SHOAL_MSG_SYNC_REPLY = 0x22,
    SHOAL_MSG_ELECTION = 0x30,
    SHOAL_MSG_ANSWER = 0x31,
    SHOAL_MSG_COORDINATOR = 0x32,
    SHOAL_MSG_COORDINATOR_ACK = 0x33,
    SHOAL_MSG_ASSIGN = 0x40,
    SHOAL_MSG_STATUS = 0x41,
    SHOAL_MSG_JOB = 0x50,
    SHOAL_MSG_JOB_ACK = 0x51,
    SHOAL_MSG_CONTROL_REQ = 0x60,
    SHOAL_MSG_CONTROL_REP = 0x61,
    SHOAL_MSG_KEYS = 0x70,
    SHOAL_MSG_KEYS_ACK = 0x71,
    SHOAL_MSG_LOGS = 0x72,
    SHOAL_MSG_LOGS_REP = 0x73,
} shoal_msg_type_t;

#define SHOAL_BEACON_LEAVING 0x01

//  UDP broadcast: introduces a node; never proves it alive.
typedef struct {
    shoal_id_t cluster;
    shoal_id_t node;
    uint64_t incarnation;
    uint16_t port;
    uint8_t flags; //  SHOAL_BEACON_*
} shoal_beacon_t;

//  SWIM probe, direct. The sender is the envelope's sender.
typedef struct {
    uint32_t seq;
    shoal_id_t target;
    uint32_t update_count;
    shoal_update_t *updates;
} shoal_ping_t;

//  ACK answers a PING (or a PING-REQ, relayed); NACK tells the requester of
//  a PING-REQ that the relay got no ACK in time. Both have this form.
typedef struct {
    uint32_t seq;
    uint32_t update_count;
    shoal_update_t *updates;
} shoal_ack_t;

//  Ask a member to probe target for us.
typedef struct {
    uint32_t seq;
    shoal_id_t target;
    const char *addr;
    uint32_t update_count;
    shoal_update_t *updates;
} shoal_ping_req_t;

//  Anti-entropy: what a member holds, summarised. The member table is
//  summed per bucket of member ids (docs/membership.md, "Digest"), so two
//  members can tell which buckets differ and pull only those.
#define SHOAL_DIGEST_BUCKETS_MAX 256

typedef struct {
    uint32_t member_count;
    uint32_t bucket_count; //  a power of two, 1 .. SHOAL_DIGEST_BUCKETS_MAX
    uint64_t *buckets;     //  per bucket, the sum of its members' record hashes
    uint64_t jobs_version;
    shoal_hash_t jobs;
    shoal_epoch_t assignment; //  (term, version) of the assignment applied
} shoal_digest_t;

#define SHOAL_SYNC_MEMBERS    0x01
#define SHOAL_SYNC_JOBS       0x02
#define SHOAL_SYNC_ASSIGNMENT 0x04 //  answered by an ASSIGN snapshot

//  A set of digest buckets: bucket i is in it when bit i % 8 of bytes[i / 8]
//  is set.
typedef struct {
    uint8_t bytes[SHOAL_DIGEST_BUCKETS_MAX / 8];
} shoal_bucket_set_t;

typedef struct {
    uint8_t want;               //  SHOAL_SYNC_*
    uint32_t bucket_count;      //  with SHOAL_SYNC_MEMBERS: the buckets' granularity,
    shoal_bucket_set_t buckets; //  as in the digest, and which of them are wanted
} shoal_sync_req_t;

typedef struct {
    uint32_t member_count;
    shoal_update_t *members;
    uint64_t jobs_version;
    uint32_t job_count;
    shoal_jobspec_t *jobs;
    uint64_t jobs_term; //  with jobs_version, names the job specs (docs/jobs.md)
    uint8_t parts;      //  SHOAL_SYNC_MEMBERS, SHOAL_SYNC_JOBS: what the reply carries
} shoal_sync_reply_t;

//  ELECTION carries the sender's priority, the first half of its rank
//  (priority, id); the id is the envelope's sender.
typedef struct {
    uint64_t term;
    uint32_t priority;
} shoal_election_t;

//  A leader's proclamation, repeated every heartbeat as round after round.
//  The voter set is sent to followers whose acknowledged voters_version is
//  older than the leader's (voter_count 0 otherwise).
typedef struct {
    uint64_t term;
    uint32_t priority;
    uint64_t round;
    uint64_t voters_version;
    uint32_t voter_count;
    shoal_id_t *voters;
} shoal_coordinator_t;

typedef struct {
    uint64_t term;
} shoal_answer_t;

//  The follower's voter set travels back only when it is newer than the
//  COORDINATOR's, so that a new leader catches up (voter_count 0 otherwise).
typedef struct {
    uint64_t term;
    uint64_t jobs_version;    //  the follower's latest committed job specs
    shoal_epoch_t assignment; //  and assignment, for the new leader to catch up
    uint64_t round;           //  the COORDINATOR round acknowledged
    uint64_t voters_version;
    uint32_t voter_count;
    shoal_id_t *voters;
    bool leaving; //  the follower leaves: it asks to be dropped from the voter set
} shoal_coordinator_ack_t;

//  The leader's assignment log, as a delta against base_version or as a
//  full snapshot (snapshot true, base_version 0).
typedef struct {
    uint64_t term;
    uint64_t version;
    uint64_t base_version;
    bool snapshot;
    uint32_t voter_count;
    shoal_id_t *voters;
    uint32_t placement_count;
    shoal_placement_t *placements;
    //  The last STATUS seq the leader received from the recipient; the
    //  recipient's lease runs from when it sent that STATUS (0: none yet).
    uint64_t status_seq;
} shoal_assign_t;

//  A node's report to the leader.
typedef struct {
    uint64_t term; //  of the assignment applied: (term, applied_version) names it
    uint64_t applied_version;
    uint32_t task_count;
    shoal_task_status_t *tasks;
    uint64_t seq; //  counts the node's STATUS messages up, from 1, per life
    //  The node's own mark (shoal_cordon_t), as in its meta, which gossip
    //  may bring the leader late; optional on the wire (0 left out).
    uint8_t cordon;
} shoal_status_t;

//  A committed job spec, replicated by the leader; JOB-ACK confirms it is held.
typedef struct {
    uint64_t term;
    uint64_t version;
    shoal_jobspec_t spec;
} shoal_job_t;

typedef struct {
    uint64_t term;
    uint64_t version;
} shoal_job_ack_t;

typedef enum {
    SHOAL_OP_MEMBERS = 0,
    SHOAL_OP_STATUS = 1,
    SHOAL_OP_JOBS = 2,
    SHOAL_OP_SUBMIT = 3,
    SHOAL_OP_RESCALE = 4,
    SHOAL_OP_REMOVE = 5,
    SHOAL_OP_LEAVE = 6,
    SHOAL_OP_KEYS = 7,
    SHOAL_OP_CORDON = 8,   //  job: the node's name, or empty for the node asked
    SHOAL_OP_UNCORDON = 9, //  likewise
    SHOAL_OP_DRAIN = 10,   //  likewise
    SHOAL_OP_LOGS = 11,
} shoal_op_t;

//  A task's output (`shoal logs`): at most this many lines, and this many
//  bytes of them, in one answer.
#define SHOAL_LOGS_LINES_MAX 10000
#define SHOAL_LOGS_TEXT_MAX  (1024u * 1024)

//  What a LOGS request asks: the last lines of task's output as the
//  member node keeps it (all zero: the node asked).
typedef struct {
    const char *task;
    shoal_id_t node;
    uint32_t lines;
} shoal_logs_req_t;

typedef enum {
    SHOAL_REPLY_OK = 0,
    SHOAL_REPLY_INVALID = 1,   //  the request breaks a rule; reason says which
    SHOAL_REPLY_NOT_FOUND = 2, //  no such job
    SHOAL_REPLY_NO_LEADER = 3, //  no leader took it; nothing changed
    SHOAL_REPLY_TIMED_OUT = 4, //  a rescale waited for slots and gave up
    SHOAL_REPLY_PARTIAL = 5,   //  a rescale applied less than asked (at least min)
    SHOAL_REPLY_FAILED = 6,    //  the node could not do it; reason says why
} shoal_reply_code_t;

typedef struct {
    uint32_t id; //  chosen by the client, echoed in the reply
    uint8_t op;  //  shoal_op_t
    const char *job;
    uint32_t parallelism;
    uint32_t min;
    uint32_t timeout_ms;
    shoal_jobspec_t *spec;  //  for SUBMIT; NULL (nil) otherwise
    shoal_keys_req_t *keys; //  for KEYS; NULL (left out) otherwise
    shoal_logs_req_t *logs; //  for LOGS; NULL (left out) otherwise
    bool leave;             //  DRAIN: leave once drained; false (left out) otherwise
} shoal_control_req_t;

typedef struct {
    uint32_t id;
    uint8_t code; //  shoal_reply_code_t
    const char *reason;
    shoal_id_t leader;
    uint64_t term;
    uint64_t version;
    uint32_t member_count;
    shoal_update_t *members;
    uint32_t job_count;
    shoal_jobspec_t *jobs;
    uint32_t task_count;
    shoal_task_report_t *tasks;
    uint32_t keyring_count; //  KEYS: each live member's answer (left out when none)
    shoal_keyring_report_t *keyrings;
    const char *output; //  LOGS: the lines, one record each ("" left out)
    //  MEMBERS: the voter set this node holds (docs/election.md, section 3),
    //  and its version; left out when it holds none.
    uint64_t voters_version;
    uint32_t voter_count;
    shoal_id_t *voters;
} shoal_control_rep_t;

//  A key operation from the leader to a member, which applies it to its
//  own keyring (relay false); or from a node a client asked to the leader,
//  which applies it cluster-wide (relay true).
typedef struct {
    uint32_t id; //  echoed in the KEYS-ACK
    bool relay;
    shoal_keys_req_t req;
} shoal_keys_t;

//  The answer: a member's own keyring (one node), or the leader's
//  cluster-wide result (every live member).
typedef struct {
    uint32_t id;
    uint8_t code; //  shoal_reply_code_t
    const char *reason;
    uint32_t node_count;
    shoal_keyring_report_t *nodes;
} shoal_keys_ack_t;

//  A node asks a member for the last lines of a task's output it keeps;
//  the member answers with LOGS-REP (the same id).
typedef struct {
    uint32_t id;
    const char *task;
    uint32_t lines;
} shoal_logs_t;

typedef struct {
    uint32_t id;
    uint8_t code; //  shoal_reply_code_t; NOT_FOUND: no output kept there
    const char *reason;
    const char *output;
} shoal_logs_rep_t;

typedef struct {
    uint8_t type; //  shoal_msg_type_t
    union {
        shoal_beacon_t beacon;
        shoal_ping_t ping;
        shoal_ack_t ack; //  ACK and NACK
        shoal_ping_req_t ping_req;
        shoal_digest_t digest;
        shoal_sync_req_t sync_req;
        shoal_sync_reply_t sync_reply;
        shoal_election_t election;
        shoal_coordinator_t coordinator;
        shoal_answer_t answer;
        shoal_coordinator_ack_t coordinator_ack;
        shoal_assign_t assign;
        shoal_status_t status;
        shoal_job_t job;
        shoal_job_ack_t job_ack;
        shoal_control_req_t control_req;
        shoal_control_rep_t control_rep;
        shoal_keys_t keys;
        shoal_keys_ack_t keys_ack;
        shoal_logs_t logs;
        shoal_logs_rep_t logs_rep;
    } u;
} shoal_msg_t;

//  ---------------------------------------------------------------------
//  Encoding and decoding

//  Why an encode or decode failed, naming the field: "ping.updates[2].meta.
//  name: 70 bytes, limit 64".
typedef struct {
    char text[200];
} shoal_wire_error_t;

//  Encodes msg into out (capacity bytes). Returns the encoded size, or -1
//  with err set when a field breaks its limit or the message does not fit.
//  With out NULL, only measures. Never allocates.
long shoal_msg_encode (const shoal_msg_t *msg, uint8_t *out, size_t capacity,
                       shoal_wire_error_t *err);

//  Decodes size bytes that arrived on carrier into msg; strings and lists
//  live in arena. A message of a type that belongs on another carrier (a
//  PING in a frame) is refused. Returns 0, or -1 with err set (msg is then
//  garbage; the arena may be reset).
int shoal_msg_decode (const uint8_t *data, size_t size, shoal_purpose_t carrier, shoal_msg_t *msg,
                      shoal_arena_t *arena, shoal_wire_error_t *err);

//  True when the size bytes at s are text as every string on the wire must
//  be: UTF-8 without overlong forms, surrogates or NUL.
bool shoal_text_valid (const uint8_t *s, size_t size);

//  The length of the longest start of the length bytes at text that does
//  not end inside a UTF-8 sequence: where a text cut at a limit keeps
//  whole characters (bytes that are not UTF-8 are left as they are).
size_t shoal_text_cut (const char *text, size_t length);

//  A node id as text: 32 lowercase hex digits and a NUL. With none_blank,
//  the all-zero id ("none") is written as "".
#define SHOAL_ID_TEXT (2 * SHOAL_ID_SIZE + 1)
void shoal_id_format (const uint8_t id[SHOAL_ID_SIZE], bool none_blank, char text[SHOAL_ID_TEXT]);

//  The message type's name ("ping", "coordinator-ack"), or NULL if unknown.
const char *shoal_msg_type_name (int type);

//  The carrier a message type travels on (shoal_purpose_t), or 0 if unknown.
shoal_purpose_t shoal_msg_purpose (int type);

//  The largest encoded size allowed for a message type: its carrier's limit
//  less the sealed envelope's overhead. 0 if unknown.
size_t shoal_msg_size_max (int type);

//  Every message type, for tests and tools that walk them all.
extern const uint8_t shoal_msg_types[];
extern const size_t shoal_msg_type_count;

//  ---------------------------------------------------------------------
//  One job spec, outside a message

//  A node persists its job specs (node/persist.h) in the very form a JOB
//  carries them: these are the wire's own encoder and decoder of one spec,
//  with the same limits. The encoder
//  appends spec to packer (msgpack-c's); the decoder reads one spec from
//  reader into spec, its strings and labels in arena. Both return 0, or -1
//  with err naming the field ("require[2]: 70 bytes, limit 64"); after a
//  failed decode the reader's position is unspecified. A change to the
//  jobspec's form changes the persisted format too: raise
//  SHOAL_PERSIST_VERSION with it.
struct msgpack_packer;
int shoal_wire_jobspec_encode (struct msgpack_packer *packer, const shoal_jobspec_t *spec,
                               shoal_wire_error_t *err);
int shoal_wire_jobspec_decode (shoal_reader_t *reader, shoal_arena_t *arena, shoal_jobspec_t *spec,
                               shoal_wire_error_t *err);

#endif

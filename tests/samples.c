/*  tests/samples.c: one realistic message of every type. */

#include "tests/samples.h"

#include <stdio.h>
#include <string.h>

shoal_id_t
shoal_sample_id (uint8_t fill)
{
    shoal_id_t id;
    memset (id.bytes, fill, sizeof id.bytes);
    return id;
}

shoal_id_t
shoal_sample_index_id (int index)
{
    shoal_id_t id;
    memset (&id, 0, sizeof id);
    id.bytes[0] = (uint8_t) (index + 1);
    return id;
}

static shoal_hash_t
s_hash (uint8_t seed)
{
    shoal_hash_t hash;
    for (size_t i = 0; i < sizeof hash.bytes; i++)
        hash.bytes[i] = (uint8_t) (seed * 31 + i);
    return hash;
}

//  Four digest bucket sums, small and large, so every uint width is used.
static uint64_t *
s_sums (void)
{
    static uint64_t sums[] = { 0, 200, 0x1234567890abcdefull, UINT64_MAX };
    return sums;
}

//  ---------------------------------------------------------------------
//  Values shared by several samples

static shoal_label_t s_labels[] = {
    { "zone", "eu-west-1a" },
    { "disk", "ssd" },
    { "rack", "r17" },
};
static const char *s_handles[] = { "ingest", "aggregate" };
static shoal_label_t s_require[] = { { "zone", "eu-west-1a" }, { "disk", "ssd" } };

static shoal_meta_t s_metas[2] = {
    { "worker-01", "10.0.3.11:7946", 3, 0, 4, 64, 3, s_labels, 2, s_handles, SHOAL_CORDON_NONE },
    { "worker-02", "10.0.3.12:7946", 1, 5, 2, 0, 3, s_labels, 0, NULL, SHOAL_CORDON_DRAINING },
};

//  count updates: the first two alive with metadata, then suspects, deaths
//  and a departure, as gossip piggybacks them.
static shoal_update_t *
s_updates (shoal_update_t *updates, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++) {
        shoal_update_t *u = &updates[i];
        memset (u, 0, sizeof *u);
        u->node = shoal_sample_id ((uint8_t) (0x10 + i));
        u->incarnation = 1000 + i;
        if (i < 2) {
            u->state = SHOAL_MEMBER_ALIVE;
            u->meta = &s_metas[i];
        } else {
            u->state = (uint8_t) (SHOAL_MEMBER_SUSPECT + i % 3);
            if (u->state != SHOAL_MEMBER_LEFT)
                u->by = shoal_sample_id (0xa0);
        }
    }
    return updates;
}

static shoal_jobspec_t s_jobs[4];

static shoal_jobspec_t *
s_jobspecs (void)
{
    static const char *names[] = { "ingest", "aggregate", "web", "report" };
    for (int i = 0; i < 4; i++)
        s_jobs[i] = (shoal_jobspec_t){
            .name = names[i],
            .parallelism = (uint32_t) (4 << i),
            .stateful = i % 2 == 0,
            .weight = (uint32_t) (1 + i),
            .require_count = i == 0 ? 2 : 0,
            .require = i == 0 ? s_require : NULL,
            .command = i == 0 ? "/usr/local/bin/ingest --from kafka://events --batch 500" : "",
        };
    return s_jobs;
}

static char s_task_names[64][SHOAL_TASK_MAX + 1];

static const char *
s_task (uint32_t i)
{
    static const char *jobs[] = { "ingest", "aggregate", "web", "report" };
    snprintf (s_task_names[i % 64], sizeof s_task_names[0], "%s/%u", jobs[i % 4], i / 4);
    return s_task_names[i % 64];
}

static shoal_task_status_t
s_status_of (uint32_t i)
{
    uint8_t role = (uint8_t) (SHOAL_ROLE_ACTIVE + i % 3);
    return (shoal_task_status_t){
        .task = s_task (i),
        .role = role,
        .state = (uint8_t) (i % 5),
        .lag = role == SHOAL_ROLE_ACTIVE ? 0 : 1500 + 97 * i,
        .epoch = { 7, 40 + i },
        //  A failed one crashed in a loop: the optional fields.
        .restarts = i % 5 == SHOAL_TASK_FAILED ? 5 : 0,
        .last_exit = i % 5 == SHOAL_TASK_FAILED ? 127 : 0,
        .error = i % 5 == SHOAL_TASK_FAILED ? "exit 127" : "",
    };
}

//  ---------------------------------------------------------------------

int
shoal_sample_msg (int type, shoal_msg_t *msg)
{
    static shoal_update_t updates[10];
    static shoal_id_t voters[5];
    static shoal_placement_t placements[64];
    static shoal_task_status_t tasks[16];
    static shoal_task_report_t reports[32];
    static shoal_jobspec_t submit;
    static shoal_keyring_report_t keyrings[3];
    static uint64_t key_ids[3][2] = { { 0x1a2b3c4d, 0x5e6f7081 },
                                      { 0x1a2b3c4d, 0x5e6f7081 },
                                      { 0x1a2b3c4d, 0 } };

    memset (msg, 0, sizeof *msg);
    msg->type = (uint8_t) type;
    switch (type) {
    case SHOAL_MSG_BEACON:
        msg->u.beacon =
            (shoal_beacon_t){ shoal_sample_id (0xc1), shoal_sample_id (0x10), 1000, 7946, 0 };
        return 0;
    case SHOAL_MSG_PING:
        msg->u.ping = (shoal_ping_t){ 4711, shoal_sample_id (0x11), 6, s_updates (updates, 6) };
        return 0;
    case SHOAL_MSG_ACK:
    case SHOAL_MSG_NACK:
        msg->u.ack = (shoal_ack_t){ 4711, 4, s_updates (updates, 4) };
        return 0;
    case SHOAL_MSG_PING_REQ:
        msg->u.ping_req = (shoal_ping_req_t){ 4712, shoal_sample_id (0x12), "10.0.3.13:7946", 3,
                                              s_updates (updates, 3) };
        return 0;
    case SHOAL_MSG_DIGEST:
        msg->u.digest = (shoal_digest_t){ 10, 4, s_sums (), 12, s_hash (2), { 7, 52 } };
        return 0;
    case SHOAL_MSG_SYNC_REQ:
        msg->u.sync_req.want = SHOAL_SYNC_MEMBERS | SHOAL_SYNC_JOBS;
        msg->u.sync_req.bucket_count = 4;
        msg->u.sync_req.buckets.bytes[0] = 0x05;
        return 0;
    case SHOAL_MSG_SYNC_REPLY:
        msg->u.sync_reply = (shoal_sync_reply_t){ 10,
                                                  s_updates (updates, 10),
                                                  12,
                                                  4,
                                                  s_jobspecs (),
                                                  3,
                                                  SHOAL_SYNC_MEMBERS | SHOAL_SYNC_JOBS };
        return 0;
    case SHOAL_MSG_ELECTION:
        msg->u.election = (shoal_election_t){ 8, 5 };
        return 0;
    case SHOAL_MSG_COORDINATOR:
        for (uint32_t i = 0; i < 5; i++)
            voters[i] = shoal_sample_id ((uint8_t) (0x10 + i));
        msg->u.coordinator = (shoal_coordinator_t){ 8, 5, 31, 3, 5, voters };
        return 0;
    case SHOAL_MSG_ANSWER:
        msg->u.answer.term = 8;
        return 0;
    case SHOAL_MSG_COORDINATOR_ACK:
        for (uint32_t i = 0; i < 4; i++)
            voters[i] = shoal_sample_id ((uint8_t) (0x10 + i));
        msg->u.coordinator_ack =
            (shoal_coordinator_ack_t){ 8, 12, { 7, 52 }, 31, 4, 4, voters, false };
        return 0;
    case SHOAL_MSG_ASSIGN:
        for (uint32_t i = 0; i < 5; i++)
            voters[i] = shoal_sample_id ((uint8_t) (0x10 + i));
        for (uint32_t i = 0; i < 64; i++)
            placements[i] =
                (shoal_placement_t){ s_task (i / 2),
                                     shoal_sample_id ((uint8_t) (0x10 + i % 5)),
                                     (uint8_t) (i % 2 ? SHOAL_ROLE_STANDBY : SHOAL_ROLE_ACTIVE),
                                     { 7, 52 } };
        msg->u.assign = (shoal_assign_t){ 7, 52, 0, true, 5, voters, 64, placements, 19 };
        return 0;
    case SHOAL_MSG_STATUS:
        for (uint32_t i = 0; i < 16; i++)
            tasks[i] = s_status_of (i);
        msg->u.status = (shoal_status_t){ 7, 52, 16, tasks, 19, 0 };
        return 0;
    case SHOAL_MSG_JOB:
        msg->u.job = (shoal_job_t){ 7, 12, s_jobspecs ()[0] };
        return 0;
    case SHOAL_MSG_JOB_ACK:
        msg->u.job_ack = (shoal_job_ack_t){ 7, 12 };
        return 0;
    case SHOAL_MSG_CONTROL_REQ:
        submit = s_jobspecs ()[0];
        msg->u.control_req = (shoal_control_req_t){ 3,     SHOAL_OP_SUBMIT, "ingest", 0,    0,
                                                    30000, &submit,         NULL,     NULL, false };
        return 0;
    case SHOAL_MSG_CONTROL_REP:
        for (uint32_t i = 0; i < 32; i++)
            reports[i] = (shoal_task_report_t){ shoal_sample_id ((uint8_t) (0x10 + i % 10)),
                                                s_status_of (i), "" };
        //  One is placed nowhere, and says why.
        reports[29] = (shoal_task_report_t){
            .status = { .task = "ingest/9", .lag = 0, .epoch = { 0, 0 } },
            .reason = "no eligible node: no member has zone=mars",
        };
        msg->u.control_rep = (shoal_control_rep_t){
            .id = 3,
            .code = SHOAL_REPLY_OK,
            .reason = "",
            .leader = shoal_sample_id (0x14),
            .term = 7,
            .version = 52,
            .member_count = 10,
            .members = s_updates (updates, 10),
            .job_count = 4,
            .jobs = s_jobspecs (),
            .task_count = 32,
            .tasks = reports,
        };
        return 0;
    case SHOAL_MSG_KEYS:
        msg->u.keys = (shoal_keys_t){ .id = 9,
                                      .relay = false,
                                      .req = { .op = SHOAL_KEYS_INSTALL, .key_id = 0x5e6f7081 } };
        memset (msg->u.keys.req.key, 0x5e, sizeof msg->u.keys.req.key);
        return 0;
    case SHOAL_MSG_KEYS_ACK:
        for (uint32_t i = 0; i < 3; i++)
            keyrings[i] = (shoal_keyring_report_t){
                .node = shoal_sample_id ((uint8_t) (0x10 + i)),
                .name = i == 0   ? "worker-a"
                        : i == 1 ? "worker-b"
                                 : "worker-c",
                .code = i == 2 ? SHOAL_REPLY_FAILED : SHOAL_REPLY_OK,
                .reason = i == 2 ? "did not answer in time" : "",
                .primary = 0x1a2b3c4d,
                .key_count = i == 2 ? 1 : 2,
                .keys = key_ids[i],
            };
        msg->u.keys_ack = (shoal_keys_ack_t){ .id = 9,
                                              .code = SHOAL_REPLY_FAILED,
                                              .reason = "2 of 3 nodes applied it",
                                              .node_count = 3,
                                              .nodes = keyrings };
        return 0;
    case SHOAL_MSG_LOGS:
        msg->u.logs = (shoal_logs_t){ .id = 4, .task = "ingest/3", .lines = 100 };
        return 0;
    case SHOAL_MSG_LOGS_REP:
        msg->u.logs_rep = (shoal_logs_rep_t){
            .id = 4,
            .code = SHOAL_REPLY_OK,
            .reason = "",
            .output = "2026-12-02T21:30:00.123Z stdout started, offset 41\n"
                      "2026-12-02T21:30:01.456Z stderr slow batch: 812 ms\n"
                      "2026-12-02T21:30:02.789Z stdout+cut row 7: 1f8b0800000000000003\n",
        };
        return 0;
    }
    return -1;
}

//  ---------------------------------------------------------------------
//  What each sample holds, in words, for reports (the benchmark's JSON).
//  It follows shoal_sample_msg above: change both together.

//  The updates piggybacked by the samples start with two alive records.
#define ALIVE_WITH_META "2 alive with meta (name, addr, 3 labels; the first with 2 handles)"

//  The job specs of the samples, the first of them on its own.
#define FOUR_JOBS                                                                                  \
    "4 jobs (parallelism 4 to 32, stateful and stateless; the first with 2 required labels "       \
    "and a command)"
#define INGEST_JOB "a stateful job: parallelism 4, 2 required labels, a command"

typedef struct {
    uint8_t type;
    const char *description;
} s_description_t;

static const s_description_t s_descriptions[] = {
    { SHOAL_MSG_BEACON, "cluster id, node id, incarnation 1000, port 7946, no flags" },
    { SHOAL_MSG_PING, "target, 6 updates: " ALIVE_WITH_META ", then 1 left, 1 suspect, 1 dead, "
                      "1 left" },
    { SHOAL_MSG_ACK, "4 updates: " ALIVE_WITH_META ", then 1 left, 1 suspect" },
    { SHOAL_MSG_NACK, "4 updates: " ALIVE_WITH_META ", then 1 left, 1 suspect" },
    { SHOAL_MSG_PING_REQ, "target and its address, 3 updates: " ALIVE_WITH_META ", then 1 left" },
    { SHOAL_MSG_DIGEST, "10 members, jobs version 12, assignment (7, 52), with their hashes" },
    { SHOAL_MSG_SYNC_REQ, "want members and jobs" },
    { SHOAL_MSG_SYNC_REPLY, "10 members: " ALIVE_WITH_META ", then 3 left, 3 suspect, 2 dead; "
                            "jobs version 12, " FOUR_JOBS },
    { SHOAL_MSG_ELECTION, "term 8, priority 5" },
    { SHOAL_MSG_ANSWER, "term 8" },
    { SHOAL_MSG_COORDINATOR, "term 8, priority 5, round 31, voters version 3, 5 voters" },
    { SHOAL_MSG_COORDINATOR_ACK,
      "term 8, jobs version 12, assignment (7, 52), round 31, voters version 4, 4 voters" },
    { SHOAL_MSG_ASSIGN, "snapshot (7, 52): 5 voters, 64 placements of 32 tasks over 5 nodes "
                        "(active and standby alternating)" },
    { SHOAL_MSG_STATUS, "16 tasks: 6 active, 5 standby, 5 learner (the last two with a lag), "
                        "in every task state" },
    { SHOAL_MSG_JOB, "term 7, version 12, " INGEST_JOB },
    { SHOAL_MSG_JOB_ACK, "term 7, version 12" },
    { SHOAL_MSG_CONTROL_REQ, "submit with a timeout: " INGEST_JOB },
    { SHOAL_MSG_CONTROL_REP, "10 members (" ALIVE_WITH_META ", then 3 left, 3 suspect, 2 dead), "
                             "4 jobs, 32 task reports over 10 nodes (11 active, 11 standby, "
                             "10 learner)" },
    { SHOAL_MSG_KEYS, "install a key, from the leader to a member" },
    { SHOAL_MSG_KEYS_ACK, "the leader's answer: 3 nodes, 2 applied with 2 keys each, 1 did not "
                          "answer" },
    { SHOAL_MSG_LOGS, "the last 100 lines of a task's output, from a node to a member" },
    { SHOAL_MSG_LOGS_REP, "the member's answer: 3 records (stdout, stderr, a cut line)" },
};

const char *
shoal_sample_describe (int type)
{
    for (size_t i = 0; i < sizeof s_descriptions / sizeof s_descriptions[0]; i++)
        if (s_descriptions[i].type == type)
            return s_descriptions[i].description;
    return NULL;
}

const uint8_t shoal_sample_srv_answer[SHOAL_SAMPLE_SRV_SIZE] = {
    0x12, 0x34, 0x81, 0x80, 0,    1,    0,   2,   0,    0,   0,   0, //
    6,    '_',  's',  'h',  'o',  'a',  'l', 4,   '_',  'u', 'd', 'p', 4,   't',
    'e',  's',  't',  0,                                                       //
    0,    33,   0,    1,                                                       //
    0xc0, 12,   0,    33,   0,    1,    0,   0,   0,    5,   0,   14,          //
    0,    1,    0,    5,    0x1f, 0x0a, 1,   'a', 4,    't', 'e', 's', 't', 0, //
    0xc0, 12,   0,    33,   0,    1,    0,   0,   0,    5,   0,   10,          //
    0,    2,    0,    5,    0x1f, 0x0b, 1,   'b', 0xc0, 24,                    //
};

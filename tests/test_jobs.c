/*  tests/test_jobs.c: the job specs as replicated cluster state.

    A few nodes, each with its jobs state machine, talk through the tests'
    network (tests/lib/net.h), which encodes every message and keeps it in
    order; this file's links deliver at once and can be cut. The test plays the elector: it says who
   leads, with which term, and who votes.
*/

#include "wire/arena.h"
#include "rebalance/jobs.h"
#include "tests/test.h"
#include "tests/lib/net.h"

#include <stdlib.h>

#define NODES   5
#define REPLIES 64

typedef struct {
    uint64_t ref;
    uint8_t code;
    char reason[SHOAL_REASON_MAX + 1];
    uint32_t parallelism; //  of the job in the answer, 0 when none
} s_reply_t;

typedef struct {
    shoal_jobs_t *jobs;
    shoal_id_t id;
    bool down;
    int saves;
    s_reply_t replies[REPLIES];
    int reply_count;
} s_node_t;

typedef struct {
    s_node_t nodes[NODES];
    int count;
    test_net_t wire;
    bool cut[NODES][NODES];
    uint64_t now;
} s_net_t;

static shoal_id_t
s_id (int index)
{
    shoal_id_t id = { { 0 } };
    id.bytes[0] = (uint8_t) (index + 1);
    return id;
}

static int
s_index (s_net_t *net, const shoal_id_t *id)
{
    for (int i = 0; i < net->count; i++)
        if (memcmp (&net->nodes[i].id, id, sizeof *id) == 0)
            return i;
    return -1;
}

//  Takes what node i's last input produced: sends go on the wire, answers
//  into its log.
static void
s_collect (s_net_t *net, int i)
{
    s_node_t *node = &net->nodes[i];
    shoal_jobs_saved_t saved;
    if (shoal_jobs_saved (node->jobs, &saved))
        node->saves++;
    const shoal_jobs_send_t *sends;
    size_t count = shoal_jobs_outbox (node->jobs, &sends);
    for (size_t s = 0; s < count; s++) {
        int to = s_index (net, &sends[s].to);
        CHECK (to >= 0 && to != i);
        if (to < 0 || net->cut[i][to] || net->nodes[to].down)
            continue;
        test_packet_t packet = { .at = net->now, .from = i, .to = to };
        CHECK (test_net_send (&net->wire, &packet, &sends[s].msg) > 0);
    }
    const shoal_jobs_reply_t *replies;
    count = shoal_jobs_replies (node->jobs, &replies);
    for (size_t r = 0; r < count && node->reply_count < REPLIES; r++) {
        s_reply_t *reply = &node->replies[node->reply_count++];
        reply->ref = replies[r].ref;
        reply->code = replies[r].rep.code;
        snprintf (reply->reason, sizeof reply->reason, "%s", replies[r].rep.reason);
        reply->parallelism = replies[r].rep.job_count ? replies[r].rep.jobs[0].parallelism : 0;
    }
}

//  Delivers frames until none is left (or the time passes limit_ms).
static void
s_run (s_net_t *net)
{
    test_packet_t packet;
    while (test_net_pop (&net->wire, UINT64_MAX, &packet)) {
        const shoal_msg_t *msg = NULL;
        if (!net->cut[packet.from][packet.to] && !net->nodes[packet.to].down) {
            msg = test_net_decode (&net->wire, &packet);
            CHECK (msg != NULL && packet.carrier == SHOAL_PURPOSE_FRAME);
        }
        if (msg) {
            shoal_jobs_receive (net->nodes[packet.to].jobs, net->now, &net->nodes[packet.from].id,
                                msg);
            s_collect (net, packet.to);
        }
        test_packet_free (&packet);
    }
}

//  Moves the time on, ticking every node that asked, and delivers.
static void
s_advance (s_net_t *net, uint64_t ms)
{
    uint64_t end = net->now + ms;
    while (net->now < end) {
        net->now += 10;
        for (int i = 0; i < net->count; i++)
            if (!net->nodes[i].down && shoal_jobs_next (net->nodes[i].jobs) <= net->now) {
                shoal_jobs_tick (net->nodes[i].jobs, net->now);
                s_collect (net, i);
            }
        s_run (net);
    }
}

static void
s_net_init (s_net_t *net, int count)
{
    memset (net, 0, sizeof *net);
    CHECK_EQ (test_net_init (&net->wire), 0);
    net->count = count;
    net->now = 1000;
    shoal_jobs_config_t config;
    shoal_jobs_config_lan (&config);
    shoal_id_t voters[NODES];
    for (int i = 0; i < count; i++) {
        net->nodes[i].id = s_id (i);
        voters[i] = s_id (i);
        net->nodes[i].jobs = shoal_jobs_new (&config, &net->nodes[i].id, NULL, net->now);
        CHECK (net->nodes[i].jobs != NULL);
    }
    for (int i = 0; i < count; i++) {
        for (int m = 0; m < count; m++)
            if (m != i)
                shoal_jobs_member (net->nodes[i].jobs, net->now, &voters[m], true);
        shoal_jobs_voters (net->nodes[i].jobs, net->now, voters, (size_t) count);
        s_collect (net, i);
    }
}

static void
s_net_free (s_net_t *net)
{
    for (int i = 0; i < net->count; i++)
        shoal_jobs_destroy (&net->nodes[i].jobs);
    test_net_release (&net->wire);
}

//  Every live node follows leader with term; the leader acts.
static void
s_elect (s_net_t *net, int leader, uint64_t term)
{
    shoal_id_t id = s_id (leader);
    for (int i = 0; i < net->count; i++)
        if (!net->nodes[i].down && i != leader) {
            shoal_jobs_leader (net->nodes[i].jobs, net->now, &id, term, false);
            s_collect (net, i);
        }
    shoal_jobs_leader (net->nodes[leader].jobs, net->now, &id, term, true);
    s_collect (net, leader);
    s_run (net);
}

static void
s_isolate (s_net_t *net, int node, bool cut)
{
    for (int i = 0; i < net->count; i++)
        net->cut[node][i] = net->cut[i][node] = cut && i != node;
}

static shoal_jobspec_t
s_spec (const char *name, uint32_t parallelism)
{
    return (
        shoal_jobspec_t){ .name = name, .parallelism = parallelism, .weight = 1, .command = "" };
}

static void
s_submit (s_net_t *net, int node, uint64_t ref, const shoal_jobspec_t *spec)
{
    shoal_control_req_t req = { .op = SHOAL_OP_SUBMIT, .spec = (shoal_jobspec_t *) spec };
    CHECK_EQ (shoal_jobs_request (net->nodes[node].jobs, net->now, ref, &req), 0);
    s_collect (net, node);
}

static void
s_rescale (s_net_t *net, int node, uint64_t ref, const char *job, uint32_t parallelism,
           uint32_t min, uint32_t timeout_ms)
{
    shoal_control_req_t req = { .op = SHOAL_OP_RESCALE,
                                .job = job,
                                .parallelism = parallelism,
                                .min = min,
                                .timeout_ms = timeout_ms };
    CHECK_EQ (shoal_jobs_request (net->nodes[node].jobs, net->now, ref, &req), 0);
    s_collect (net, node);
}

//  The answer to ref at node, NULL while there is none.
static const s_reply_t *
s_reply (s_net_t *net, int node, uint64_t ref)
{
    for (int r = 0; r < net->nodes[node].reply_count; r++)
        if (net->nodes[node].replies[r].ref == ref)
            return &net->nodes[node].replies[r];
    return NULL;
}

//  The parallelism of job at node, 0 when it does not hold it.
static uint32_t
s_held (s_net_t *net, int node, const char *job)
{
    const shoal_jobspec_t *specs;
    size_t count = shoal_jobs_specs (net->nodes[node].jobs, &specs);
    for (size_t i = 0; i < count; i++)
        if (strcmp (specs[i].name, job) == 0)
            return specs[i].parallelism;
    return 0;
}

//  Reports capacity for every rescale that waits at the leader.
static void
s_capacity (s_net_t *net, int leader, uint32_t capacity)
{
    const shoal_jobs_wait_t *waits;
    size_t count = shoal_jobs_waiting (net->nodes[leader].jobs, &waits);
    char names[8][SHOAL_NAME_MAX + 1];
    for (size_t w = 0; w < count && w < 8; w++)
        snprintf (names[w], sizeof names[w], "%s", waits[w].job);
    for (size_t w = 0; w < count && w < 8; w++) {
        shoal_jobs_capacity (net->nodes[leader].jobs, net->now, names[w], capacity);
        s_collect (net, leader);
    }
    s_run (net);
}

//  ---------------------------------------------------------------------

static void
a_submit_is_answered_once_a_majority_holds_it (void)
{
    s_net_t net;
    s_net_init (&net, 3);
    s_elect (&net, 0, 1);
    s_advance (&net, 100); //  the leader catches up
    CHECK (shoal_jobs_ready (net.nodes[0].jobs));

    shoal_jobspec_t spec = s_spec ("web", 4);
    s_submit (&net, 0, 7, &spec);
    CHECK (s_reply (&net, 0, 7) == NULL); //  nobody else holds it yet
    s_run (&net);
    const s_reply_t *reply = s_reply (&net, 0, 7);
    CHECK (reply && reply->code == SHOAL_REPLY_OK);
    CHECK (reply && reply->parallelism == 4);
    for (int i = 0; i < 3; i++)
        CHECK_EQ (s_held (&net, i, "web"), 4);
    CHECK (net.nodes[1].saves > 0); //  followers persist what they hold

    const shoal_assign_task_t *tasks;
    size_t count = shoal_jobs_tasks (net.nodes[2].jobs, &tasks);
    CHECK_EQ (count, 4);
    CHECK_STR (tasks[0].id, "web/0");
    CHECK_STR (tasks[3].id, "web/3");
    CHECK_STR (tasks[3].job, "web");
    s_net_free (&net);
}

static void
a_submit_waits_while_no_majority_holds_it (void)
{
    s_net_t net;
    s_net_init (&net, 3);
    s_elect (&net, 0, 1);
    s_advance (&net, 100);
    s_isolate (&net, 1, true);
    s_isolate (&net, 2, true);
    shoal_jobspec_t spec = s_spec ("web", 2);
    s_submit (&net, 0, 1, &spec);
    s_advance (&net, 5000);
    CHECK (s_reply (&net, 0, 1) == NULL);
    s_isolate (&net, 2, false); //  one follower is back: the retry reaches it
    s_advance (&net, 2000);
    const s_reply_t *reply = s_reply (&net, 0, 1);
    CHECK (reply && reply->code == SHOAL_REPLY_OK);
    CHECK_EQ (s_held (&net, 2, "web"), 2);
    s_net_free (&net);
}

static void
a_request_to_a_follower_is_forwarded (void)
{
    s_net_t net;
    s_net_init (&net, 3);
    s_elect (&net, 0, 1);
    s_advance (&net, 100);
    shoal_jobspec_t spec = s_spec ("web", 3);
    s_submit (&net, 2, 11, &spec);
    s_run (&net);
    const s_reply_t *reply = s_reply (&net, 2, 11);
    CHECK (reply && reply->code == SHOAL_REPLY_OK);
    CHECK (reply && reply->parallelism == 3);
    CHECK_EQ (s_held (&net, 1, "web"), 3);

    //  A rescale forwarded the same way; the leader reports its capacity.
    s_rescale (&net, 1, 12, "web", 5, 0, 1000);
    s_run (&net);
    CHECK (s_reply (&net, 1, 12) == NULL);
    s_capacity (&net, 0, 8);
    reply = s_reply (&net, 1, 12);
    CHECK (reply && reply->code == SHOAL_REPLY_OK);
    CHECK (reply && reply->parallelism == 5);
    s_net_free (&net);
}

static void
a_new_leader_keeps_every_acknowledged_job (void)
{
    s_net_t net;
    s_net_init (&net, 3);
    s_elect (&net, 0, 1);
    s_advance (&net, 100);
    s_isolate (&net, 2, true); //  only the leader and node 1 hold what follows
    shoal_jobspec_t spec = s_spec ("web", 2);
    s_submit (&net, 0, 1, &spec);
    s_run (&net);
    CHECK (s_reply (&net, 0, 1) && s_reply (&net, 0, 1)->code == SHOAL_REPLY_OK);
    CHECK_EQ (s_held (&net, 2, "web"), 0);

    //  The leader dies; node 2, which never saw the job, leads.
    net.nodes[0].down = true;
    s_isolate (&net, 2, false);
    net.cut[1][2] = true; //  node 1's answer is lost at first
    s_elect (&net, 2, 2);
    s_advance (&net, 500);
    CHECK (!shoal_jobs_ready (net.nodes[2].jobs)); //  one voter of three is no majority
    net.cut[1][2] = false;
    s_advance (&net, 1000);
    CHECK (shoal_jobs_ready (net.nodes[2].jobs));
    CHECK_EQ (s_held (&net, 2, "web"), 2);
    uint64_t term, version;
    shoal_jobs_name (net.nodes[2].jobs, &term, &version);
    CHECK_EQ (term, 2); //  renamed under its own term
    s_net_free (&net);
}

static void
an_unacknowledged_change_is_lost_and_its_client_told (void)
{
    s_net_t net;
    s_net_init (&net, 3);
    s_elect (&net, 0, 1);
    s_advance (&net, 100);
    s_isolate (&net, 0, true);
    shoal_jobspec_t spec = s_spec ("lonely", 1);
    s_submit (&net, 0, 5, &spec);
    s_run (&net);
    CHECK_EQ (s_held (&net, 0, "lonely"), 1); //  written, not acknowledged

    //  Nodes 1 and 2 elect node 1; node 0 learns it has lost office.
    s_elect (&net, 1, 2);
    s_advance (&net, 100);
    shoal_id_t leader = s_id (1);
    shoal_jobs_leader (net.nodes[0].jobs, net.now, &leader, 2, false);
    s_collect (&net, 0);
    //  Written, so it may yet be applied: failed, not "no leader", which
    //  says that nothing changed.
    const s_reply_t *reply = s_reply (&net, 0, 5);
    CHECK (reply && reply->code == SHOAL_REPLY_FAILED);
    CHECK (reply && strstr (reply->reason, "may still be applied"));

    s_isolate (&net, 0, false);
    s_advance (&net, 2000); //  the retry brings node 0 the leader's set
    CHECK_EQ (s_held (&net, 0, "lonely"), 0);
    uint64_t term, version;
    shoal_jobs_name (net.nodes[0].jobs, &term, &version);
    CHECK_EQ (term, 2);
    s_net_free (&net);
}

static void
a_node_takes_specs_only_from_the_leader_it_follows (void)
{
    s_net_t net;
    s_net_init (&net, 3);
    s_elect (&net, 1, 2);
    s_advance (&net, 100);
    //  Node 0, an old leader of term 1, sends a delta and a snapshot.
    shoal_msg_t job = { .type = SHOAL_MSG_JOB };
    job.u.job = (shoal_job_t){ .term = 1, .version = 1, .spec = s_spec ("old", 1) };
    CHECK_EQ (shoal_jobs_receive (net.nodes[2].jobs, net.now, &net.nodes[0].id, &job), -1);
    shoal_jobspec_t specs[] = { s_spec ("old", 1) };
    shoal_msg_t snapshot = { .type = SHOAL_MSG_SYNC_REPLY };
    snapshot.u.sync_reply = (shoal_sync_reply_t){
        .parts = SHOAL_SYNC_JOBS, .jobs_term = 3, .jobs_version = 9, .job_count = 1, .jobs = specs
    };
    CHECK_EQ (shoal_jobs_receive (net.nodes[2].jobs, net.now, &net.nodes[0].id, &snapshot), -1);
    //  Even from its leader, a term that is not the leader's.
    CHECK_EQ (shoal_jobs_receive (net.nodes[2].jobs, net.now, &net.nodes[1].id, &snapshot), -1);
    CHECK_EQ (s_held (&net, 2, "old"), 0);
    //  A snapshot with a bad spec is refused whole.
    shoal_jobspec_t bad[] = { s_spec ("a/b", 1) };
    snapshot.u.sync_reply = (shoal_sync_reply_t){
        .parts = SHOAL_SYNC_JOBS, .jobs_term = 2, .jobs_version = 9, .job_count = 1, .jobs = bad
    };
    CHECK_EQ (shoal_jobs_receive (net.nodes[2].jobs, net.now, &net.nodes[1].id, &snapshot), -1);
    shoal_jobs_stats_t stats;
    shoal_jobs_stats (net.nodes[2].jobs, &stats);
    CHECK_EQ (stats.dropped, 4);
    s_net_free (&net);
}

static void
a_member_that_missed_a_delta_gets_a_snapshot (void)
{
    s_net_t net;
    s_net_init (&net, 3);
    s_elect (&net, 0, 1);
    s_advance (&net, 100);
    shoal_jobspec_t a = s_spec ("a", 1), b = s_spec ("b", 2);
    s_isolate (&net, 2, true);
    s_submit (&net, 0, 1, &a);
    s_run (&net);
    s_isolate (&net, 2, false);
    s_submit (&net, 0, 2, &b); //  node 2 cannot apply this delta
    s_run (&net);
    CHECK_EQ (s_held (&net, 2, "b"), 0);
    s_advance (&net, 1500);
    CHECK_EQ (s_held (&net, 2, "a"), 1);
    CHECK_EQ (s_held (&net, 2, "b"), 2);
    shoal_jobs_stats_t stats;
    shoal_jobs_stats (net.nodes[0].jobs, &stats);
    CHECK (stats.snapshots >= 1);
    s_net_free (&net);
}

static void
bad_requests_are_refused_with_a_reason (void)
{
    s_net_t net;
    s_net_init (&net, 3);
    s_elect (&net, 0, 1);
    s_advance (&net, 100);
    shoal_jobspec_t web = s_spec ("web", 2);
    s_submit (&net, 0, 1, &web);
    s_run (&net);

    shoal_jobspec_t slash = s_spec ("a/b", 1), zero = s_spec ("z", 0), other = s_spec ("web", 3);
    s_submit (&net, 0, 2, &slash);
    s_submit (&net, 0, 3, &zero);
    s_submit (&net, 0, 4, &other);
    s_rescale (&net, 0, 5, "nope", 3, 0, 0);
    s_rescale (&net, 0, 6, "web", 3, 4, 0);
    s_rescale (&net, 0, 7, "web", 0, 0, 0);
    s_rescale (&net, 0, 8, "web", 3, 0, 3600000);
    shoal_control_req_t remove = { .op = SHOAL_OP_REMOVE, .job = "nope" };
    shoal_jobs_request (net.nodes[0].jobs, net.now, 9, &remove);
    s_collect (&net, 0);
    shoal_control_req_t members = { .op = SHOAL_OP_MEMBERS };
    CHECK_EQ (shoal_jobs_request (net.nodes[0].jobs, net.now, 10, &members), -1);

    const s_reply_t *reply = s_reply (&net, 0, 2);
    CHECK (reply && reply->code == SHOAL_REPLY_INVALID && strstr (reply->reason, "letters"));
    reply = s_reply (&net, 0, 3);
    CHECK (reply && reply->code == SHOAL_REPLY_INVALID && strstr (reply->reason, "parallelism"));
    reply = s_reply (&net, 0, 4);
    CHECK (reply && reply->code == SHOAL_REPLY_INVALID && strstr (reply->reason, "another spec"));
    reply = s_reply (&net, 0, 5);
    CHECK (reply && reply->code == SHOAL_REPLY_NOT_FOUND);
    reply = s_reply (&net, 0, 6);
    CHECK (reply && reply->code == SHOAL_REPLY_INVALID && strstr (reply->reason, "min"));
    reply = s_reply (&net, 0, 7);
    CHECK (reply && reply->code == SHOAL_REPLY_INVALID);
    reply = s_reply (&net, 0, 8);
    CHECK (reply && reply->code == SHOAL_REPLY_INVALID && strstr (reply->reason, "at most"));
    reply = s_reply (&net, 0, 9);
    CHECK (reply && reply->code == SHOAL_REPLY_NOT_FOUND);
    CHECK_EQ (s_held (&net, 1, "web"), 2); //  nothing changed

    //  The same spec again is fine: submits can be retried.
    s_submit (&net, 0, 11, &web);
    s_run (&net);
    reply = s_reply (&net, 0, 11);
    CHECK (reply && reply->code == SHOAL_REPLY_OK);
    s_net_free (&net);
}

static void
without_a_leader_requests_wait_for_one (void)
{
    s_net_t net;
    s_net_init (&net, 3);
    shoal_jobspec_t web = s_spec ("web", 2);
    s_submit (&net, 1, 1, &web);
    CHECK (s_reply (&net, 1, 1) == NULL); //  held: no leader yet
    s_advance (&net, 3000);
    CHECK (s_reply (&net, 1, 1) == NULL);

    //  A leader comes: the held request goes to it and is answered (asked
    //  again after retry_ms if it came while the leader caught up).
    s_elect (&net, 0, 1);
    s_advance (&net, 1500);
    const s_reply_t *reply = s_reply (&net, 1, 1);
    CHECK (reply && reply->code == SHOAL_REPLY_OK);
    CHECK_EQ (s_held (&net, 2, "web"), 2);

    //  Without one for forward_ms (10 s on a LAN), the answer is "no
    //  leader", and nothing changed.
    s_net_free (&net);
    s_net_init (&net, 3);
    s_submit (&net, 2, 2, &web);
    s_advance (&net, 9900);
    CHECK (s_reply (&net, 2, 2) == NULL);
    s_advance (&net, 200);
    reply = s_reply (&net, 2, 2);
    CHECK (reply && reply->code == SHOAL_REPLY_NO_LEADER);
    CHECK (reply && strstr (reply->reason, "nothing was changed"));
    s_net_free (&net);
}

static void
a_request_to_a_leader_not_ready_is_asked_again (void)
{
    s_net_t net;
    s_net_init (&net, 3);
    //  Node 0 is told it leads, but does not act yet (no majority of
    //  acknowledgements): it refuses, and node 1 asks again later.
    shoal_id_t leader = s_id (0);
    for (int i = 1; i < 3; i++) {
        shoal_jobs_leader (net.nodes[i].jobs, net.now, &leader, 1, false);
        s_collect (&net, i);
    }
    shoal_jobs_leader (net.nodes[0].jobs, net.now, &leader, 1, false);
    s_collect (&net, 0);
    shoal_jobspec_t web = s_spec ("web", 2);
    s_submit (&net, 1, 1, &web);
    s_run (&net);
    shoal_jobs_stats_t stats;
    shoal_jobs_stats (net.nodes[0].jobs, &stats);
    CHECK_EQ (stats.refused, 1); //  the leader said no
    CHECK (s_reply (&net, 1, 1) == NULL);
    s_advance (&net, 2500);
    CHECK (s_reply (&net, 1, 1) == NULL);
    shoal_jobs_stats (net.nodes[1].jobs, &stats);
    CHECK (stats.forwarded >= 2); //  asked again, once a retry_ms passed

    //  It acts: the next ask is taken.
    shoal_jobs_leader (net.nodes[0].jobs, net.now, &leader, 1, true);
    s_collect (&net, 0);
    s_advance (&net, 1500);
    const s_reply_t *reply = s_reply (&net, 1, 1);
    CHECK (reply && reply->code == SHOAL_REPLY_OK);
    CHECK_EQ (s_held (&net, 2, "web"), 2);
    s_net_free (&net);
}

static void
forwards_end_with_an_answer (void)
{
    s_net_t net;
    s_net_init (&net, 3);
    shoal_jobspec_t web = s_spec ("web", 2);

    //  A forward that the leader never answers times out.
    s_elect (&net, 0, 1);
    s_advance (&net, 100);
    net.cut[1][0] = true;
    s_submit (&net, 1, 2, &web);
    CHECK (s_reply (&net, 1, 2) == NULL);
    s_advance (&net, 11000);
    const s_reply_t *reply = s_reply (&net, 1, 2);
    CHECK (reply && reply->code == SHOAL_REPLY_FAILED);

    //  And one whose leader changes meanwhile is answered at the change:
    //  the old leader may have applied it.
    s_submit (&net, 1, 3, &web);
    s_elect (&net, 2, 2);
    reply = s_reply (&net, 1, 3);
    CHECK (reply && reply->code == SHOAL_REPLY_FAILED);
    CHECK (reply && strstr (reply->reason, "may still be applied"));
    s_net_free (&net);
}

static void
rescale_down_and_remove_apply_at_once (void)
{
    s_net_t net;
    s_net_init (&net, 3);
    s_elect (&net, 0, 1);
    s_advance (&net, 100);
    shoal_jobspec_t web = s_spec ("web", 6);
    s_submit (&net, 0, 1, &web);
    s_run (&net);
    s_rescale (&net, 0, 2, "web", 2, 0, 0);
    s_run (&net);
    const s_reply_t *reply = s_reply (&net, 0, 2);
    CHECK (reply && reply->code == SHOAL_REPLY_OK && reply->parallelism == 2);
    CHECK_EQ (s_held (&net, 2, "web"), 2);
    const shoal_assign_task_t *tasks;
    CHECK_EQ (shoal_jobs_tasks (net.nodes[2].jobs, &tasks), 2); //  web/0 and web/1 stay
    CHECK_STR (tasks[1].id, "web/1");

    shoal_control_req_t remove = { .op = SHOAL_OP_REMOVE, .job = "web" };
    shoal_jobs_request (net.nodes[0].jobs, net.now, 3, &remove);
    s_collect (&net, 0);
    s_run (&net);
    reply = s_reply (&net, 0, 3);
    CHECK (reply && reply->code == SHOAL_REPLY_OK);
    CHECK_EQ (s_held (&net, 1, "web"), 0);
    CHECK_EQ (shoal_jobs_tasks (net.nodes[1].jobs, &tasks), 0);
    s_net_free (&net);
}

static void
rescale_up_waits_for_capacity_until_its_timeout (void)
{
    s_net_t net;
    s_net_init (&net, 3);
    s_elect (&net, 0, 1);
    s_advance (&net, 100);
    shoal_jobspec_t web = s_spec ("web", 4);
    s_submit (&net, 0, 1, &web);
    s_run (&net);

    //  Room for 6: waits, then gets room for 8 and applies.
    s_rescale (&net, 0, 2, "web", 8, 0, 5000);
    s_capacity (&net, 0, 6);
    s_advance (&net, 1000);
    CHECK (s_reply (&net, 0, 2) == NULL);
    CHECK_EQ (s_held (&net, 1, "web"), 4);
    s_capacity (&net, 0, 8);
    const s_reply_t *reply = s_reply (&net, 0, 2);
    CHECK (reply && reply->code == SHOAL_REPLY_OK && reply->parallelism == 8);

    //  Room for 9 of 12, no min: times out, the job as it was.
    s_rescale (&net, 0, 3, "web", 12, 0, 2000);
    s_capacity (&net, 0, 9);
    s_advance (&net, 2100);
    reply = s_reply (&net, 0, 3);
    CHECK (reply && reply->code == SHOAL_REPLY_TIMED_OUT && reply->parallelism == 8);
    CHECK (reply && strstr (reply->reason, "room for 9"));
    CHECK_EQ (s_held (&net, 2, "web"), 8);

    //  The same with min 9: the largest that fits, 9, is applied.
    s_rescale (&net, 0, 4, "web", 12, 9, 2000);
    s_capacity (&net, 0, 9);
    s_advance (&net, 2100);
    reply = s_reply (&net, 0, 4);
    CHECK (reply && reply->code == SHOAL_REPLY_PARTIAL && reply->parallelism == 9);
    CHECK_EQ (s_held (&net, 2, "web"), 9);

    //  Min above what fits: times out.
    s_rescale (&net, 0, 5, "web", 12, 11, 1000);
    s_capacity (&net, 0, 10);
    s_advance (&net, 1100);
    reply = s_reply (&net, 0, 5);
    CHECK (reply && reply->code == SHOAL_REPLY_TIMED_OUT);
    CHECK_EQ (s_held (&net, 2, "web"), 9);
    s_net_free (&net);
}

static void
a_leader_that_loses_office_answers_what_waits (void)
{
    s_net_t net;
    s_net_init (&net, 3);
    s_elect (&net, 0, 1);
    s_advance (&net, 100);
    shoal_jobspec_t web = s_spec ("web", 2);
    s_submit (&net, 0, 1, &web);
    s_run (&net);
    s_rescale (&net, 0, 2, "web", 5, 0, 60000);
    s_elect (&net, 1, 2);
    const s_reply_t *reply = s_reply (&net, 0, 2);
    CHECK (reply && reply->code == SHOAL_REPLY_NO_LEADER);
    CHECK (reply && strstr (reply->reason, "nothing was changed"));
    s_net_free (&net);
}

static void
saved_specs_come_back (void)
{
    shoal_jobs_config_t config;
    shoal_jobs_config_lan (&config);
    shoal_id_t id = s_id (0);
    shoal_jobspec_t specs[] = { s_spec ("b", 2), s_spec ("a", 1) };
    shoal_jobs_saved_t saved = { .term = 3, .version = 7, .count = 2, .specs = specs };
    shoal_jobs_t *jobs = shoal_jobs_new (&config, &id, &saved, 0);
    CHECK (jobs != NULL);
    const shoal_jobspec_t *held;
    CHECK_EQ (shoal_jobs_specs (jobs, &held), 2);
    CHECK_STR (held[0].name, "a");
    const shoal_assign_task_t *tasks;
    CHECK_EQ (shoal_jobs_tasks (jobs, &tasks), 3);
    CHECK_STR (tasks[0].id, "a/0");
    shoal_jobs_destroy (&jobs);
    CHECK (jobs == NULL);
    shoal_jobs_destroy (&jobs);

    //  A saved set with a name twice, or a bad name, is refused.
    shoal_jobspec_t twice[] = { s_spec ("a", 1), s_spec ("a", 2) };
    saved = (shoal_jobs_saved_t){ .term = 1, .version = 1, .count = 2, .specs = twice };
    CHECK (shoal_jobs_new (&config, &id, &saved, 0) == NULL);
    shoal_jobspec_t bad[] = { s_spec ("", 1) };
    saved = (shoal_jobs_saved_t){ .term = 1, .version = 1, .count = 1, .specs = bad };
    CHECK (shoal_jobs_new (&config, &id, &saved, 0) == NULL);
    config.retry_ms = 0;
    CHECK (shoal_jobs_config_check (&config) != NULL);
    shoal_jobs_config_t wan;
    shoal_jobs_config_wan (&wan);
    CHECK (shoal_jobs_config_check (&wan) == NULL);
    shoal_jobs_config_lan (&config);
    CHECK_EQ (wan.retry_ms, 5 * config.retry_ms);
}

int
main (void)
{
    RUN (a_submit_is_answered_once_a_majority_holds_it);
    RUN (a_submit_waits_while_no_majority_holds_it);
    RUN (a_request_to_a_follower_is_forwarded);
    RUN (a_new_leader_keeps_every_acknowledged_job);
    RUN (an_unacknowledged_change_is_lost_and_its_client_told);
    RUN (a_node_takes_specs_only_from_the_leader_it_follows);
    RUN (a_member_that_missed_a_delta_gets_a_snapshot);
    RUN (bad_requests_are_refused_with_a_reason);
    RUN (without_a_leader_requests_wait_for_one);
    RUN (a_request_to_a_leader_not_ready_is_asked_again);
    RUN (forwards_end_with_an_answer);
    RUN (rescale_down_and_remove_apply_at_once);
    RUN (rescale_up_waits_for_capacity_until_its_timeout);
    RUN (a_leader_that_loses_office_answers_what_waits);
    RUN (saved_specs_come_back);
    return TEST_DONE ();
}

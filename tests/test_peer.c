/*  tests/test_peer.c: a node's cores wired together, on a network by hand.

    Each test plays the shell of a few peers: their sinks put every message
    they send, encoded as on the wire, into the tests' network
    (tests/lib/net.h), and the test delivers it in order, at once (no
    latency, no loss), then ticks each peer when its deadline comes. The application of each peer
   does what its commands say and reports each start as running.
*/

#include "tests/samples.h"
#include "wire/arena.h"
#include "wire/ids.h"
#include "peer/peer.h"
#include "tests/test.h"
#include "wire/wire.h"
#include "tests/lib/net.h"

#include <stdlib.h>

#define PEERS 3

typedef struct s_net s_net_t;

//  One peer, and what its sink saw.
typedef struct {
    s_net_t *net;
    int index;
    shoal_peer_t *peer;
    char addr[16];
    uint64_t seq;
    size_t sent;
    size_t election_sent; //  of those, election messages
    size_t left_seen;     //  LEFT events about other members
    size_t saved_elector;
    uint32_t voters; //  in the voter set it last persisted
    size_t placing;  //  tasks its handoff places, when it leads
    char roles[8][16];
    uint8_t role[8]; //  per task of roles: as the application runs it
    size_t role_count;
    char reports[16][16]; //  to report once the input is over, in order
    uint8_t report_states[16];
    size_t report_count;
} s_node_t;

struct s_net {
    s_node_t nodes[PEERS];
    test_net_t wire;
    uint64_t now;
    size_t delivered;     //  messages delivered
    size_t delivered_max; //  s_net_run stops there (0: no bound)
    int deaf_to_acks;     //  1 + the peer whose COORDINATOR-ACKs are lost (0: none)
};

static void
s_send (void *arg, const shoal_life_t *to, const char *addr, const shoal_msg_t *msg)
{
    s_node_t *node = arg;
    s_net_t *net = node->net;
    node->sent++;
    node->election_sent += shoal_peer_layer (msg) == SHOAL_PEER_ELECTION;
    int target = -1;
    if (addr)
        for (int i = 0; i < PEERS; i++)
            target = strcmp (net->nodes[i].addr, addr) == 0 ? i : target;
    else
        target = to->id[0] - 1;
    long size = test_net_encode (&net->wire, msg);
    CHECK (size > 0);
    if (target < 0 || target >= PEERS || size <= 0 ||
        (msg->type == SHOAL_MSG_COORDINATOR_ACK && net->deaf_to_acks == target + 1))
        return;
    //  No latency: the network holds it until the test delivers.
    test_packet_t packet = { .at = net->now,
                             .from = node->index,
                             .to = target,
                             .carrier = shoal_msg_purpose (msg->type),
                             .envelope.recipient = *to,
                             .size = (size_t) size };
    CHECK_EQ (test_net_push (&net->wire, &packet, net->wire.buffer), 0);
}

static size_t
s_task (s_node_t *node, const char *task)
{
    size_t t = 0;
    while (t < node->role_count && strcmp (node->roles[t], task) != 0)
        t++;
    if (t == node->role_count && t < 8)
        snprintf (node->roles[node->role_count++], sizeof node->roles[0], "%s", task);
    return t;
}

//  The application: it runs each task in the role it was told, and reports
//  a start done (running) or a demotion or stop done (stopped) once the
//  peer's input is over (a callback must not call into its peer).
static void
s_command (void *arg, const shoal_tasks_command_t *command)
{
    s_node_t *node = arg;
    size_t t = s_task (node, command->task);
    if (t < 8)
        node->role[t] = command->role;
    if (command->type == SHOAL_TASKS_PROMOTE || node->report_count == 16)
        return;
    node->report_states[node->report_count] =
        command->type == SHOAL_TASKS_START ? SHOAL_TASK_RUNNING : SHOAL_TASK_STOPPED;
    snprintf (node->reports[node->report_count++], sizeof node->reports[0], "%s", command->task);
}

static void
s_member_event (void *arg, const shoal_membership_event_t *event)
{
    s_node_t *node = arg;
    node->left_seen += event->type == SHOAL_MEMBERSHIP_LEFT;
}

static void
s_saved (void *arg, const shoal_peer_saved_t *saved)
{
    s_node_t *node = arg;
    node->saved_elector += saved->elector != NULL;
    if (saved->elector)
        node->voters = saved->elector->voter_count;
}

static void
s_handoff_tasks (void *arg, uint64_t term, const shoal_assign_task_t *tasks, size_t count)
{
    s_node_t *node = arg;
    (void) term;
    (void) tasks;
    node->placing = count;
}

static void
s_config (shoal_peer_config_t *config, bool election, bool tasks)
{
    memset (config, 0, sizeof *config);
    shoal_membership_config_loopback (&config->membership);
    shoal_elector_config_loopback (&config->elector);
    shoal_tasks_config_loopback (&config->node_tasks);
    shoal_handoff_config_loopback (&config->handoff);
    shoal_jobs_config_loopback (&config->jobs);
    config->election = election;
    config->tasks = tasks;
}

//  PEERS peers, all up at time 0, every one but the first joining through
//  it when join; with tasks, each holds the job "web" of 3 tasks, as from
//  its disk; with waits, each elector waits for another member.
static void
s_net_start_with (s_net_t *net, bool election, bool tasks, bool waits, bool join)
{
    memset (net, 0, sizeof *net);
    CHECK_EQ (test_net_init (&net->wire), 0);
    shoal_peer_config_t config;
    s_config (&config, election, tasks);
    config.election_waits = waits;
    shoal_jobspec_t web = { .name = "web", .parallelism = 3, .weight = 1, .command = "" };
    shoal_jobs_saved_t jobs = { .term = 0, .version = 1, .count = 1, .specs = &web };
    shoal_peer_saved_t saved = { .jobs = &jobs };
    for (int i = 0; i < PEERS; i++) {
        s_node_t *node = &net->nodes[i];
        node->net = net;
        node->index = i;
        snprintf (node->addr, sizeof node->addr, "peer:%d", i);
        shoal_meta_t meta = {
            .name = "n", .addr = node->addr, .life = 1, .priority = (uint32_t) i, .capacity = 1
        };
        shoal_peer_sink_t sink = { .arg = node,
                                   .send = s_send,
                                   .command = s_command,
                                   .member_event = s_member_event,
                                   .saved = s_saved,
                                   .handoff_tasks = s_handoff_tasks };
        shoal_id_t id = shoal_sample_index_id (i);
        node->peer = shoal_peer_new (&config, &id, 1, &meta, &saved, (uint64_t) i + 1, net->now,
                                     NULL, &sink);
        CHECK (node->peer != NULL);
    }
    for (int i = 1; i < PEERS && join; i++)
        CHECK_EQ (shoal_peer_join (net->nodes[i].peer, net->now, net->nodes[0].addr), 0);
}

static void
s_net_start (s_net_t *net, bool election, bool tasks)
{
    s_net_start_with (net, election, tasks, false, true);
}

static void
s_net_stop (s_net_t *net)
{
    for (int i = 0; i < PEERS; i++)
        shoal_peer_destroy (&net->nodes[i].peer);
    test_net_release (&net->wire);
}

//  Delivers one packet as the shell would: decoded on its carrier, in a
//  plaintext envelope numbered by its sender.
static void
s_deliver (s_net_t *net, test_packet_t *packet)
{
    s_node_t *node = &net->nodes[packet->to];
    const shoal_msg_t *msg = node->peer ? test_net_decode (&net->wire, packet) : NULL;
    CHECK (!node->peer || msg != NULL);
    if (msg) {
        shoal_id_t from = shoal_sample_index_id (packet->from);
        shoal_envelope_t envelope = { .mode = SHOAL_ENVELOPE_PLAINTEXT,
                                      .purpose = (uint8_t) packet->carrier,
                                      .sender = { .life = 1 },
                                      .recipient = packet->envelope.recipient,
                                      .seq = ++net->nodes[packet->from].seq };
        memcpy (envelope.sender.id, from.bytes, sizeof envelope.sender.id);
        shoal_peer_receive (node->peer, net->now, &envelope, msg, net->nodes[packet->from].addr);
    }
    test_packet_free (packet);
}

//  Runs the network until until_ms: messages first, then the application's
//  reports, then the peers' deadlines.
static void
s_net_run (s_net_t *net, uint64_t until_ms)
{
    while (net->now <= until_ms) {
        test_packet_t packet;
        while (test_net_pop (&net->wire, UINT64_MAX, &packet)) {
            s_deliver (net, &packet);
            //  Messages that beget messages without end, at one instant,
            //  would otherwise grow the queue until memory runs out.
            if (++net->delivered == net->delivered_max)
                return;
        }
        bool reported = false;
        for (int i = 0; i < PEERS; i++) {
            s_node_t *node = &net->nodes[i];
            for (size_t r = 0; r < node->report_count && node->peer; r++)
                shoal_peer_report (node->peer, net->now, node->reports[r], node->report_states[r],
                                   0);
            reported |= node->report_count > 0;
            node->report_count = 0;
        }
        if (reported)
            continue;
        uint64_t next = UINT64_MAX;
        for (int i = 0; i < PEERS; i++)
            if (net->nodes[i].peer && shoal_peer_next (net->nodes[i].peer) < next)
                next = shoal_peer_next (net->nodes[i].peer);
        if (next > until_ms)
            break;
        if (next > net->now)
            net->now = next;
        for (int i = 0; i < PEERS; i++)
            if (net->nodes[i].peer && shoal_peer_next (net->nodes[i].peer) <= net->now)
                shoal_peer_tick (net->nodes[i].peer, net->now);
    }
    net->now = until_ms;
}

//  The peer every peer follows (vouched: every peer can vouch for, by
//  shoal_peer_leader), or -1 when they do not agree or one cannot.
static int
s_leader_by (s_net_t *net, bool vouched)
{
    int leader = -1;
    for (int i = 0; i < PEERS; i++) {
        shoal_id_t id;
        uint64_t term;
        shoal_peer_t *peer = net->nodes[i].peer;
        if (!peer ||
            (vouched ? shoal_peer_leader (peer, net->now, &id, &term)
                     : shoal_elector_leader (shoal_peer_elector (peer), net->now, &id, &term)) != 0)
            return -1;
        if (i > 0 && leader != id.bytes[0] - 1)
            return -1;
        leader = id.bytes[0] - 1;
    }
    return leader;
}

static int
s_leader (s_net_t *net)
{
    return s_leader_by (net, false);
}

static void
configs_are_checked (void)
{
    shoal_peer_config_t config;
    s_config (&config, true, true);
    CHECK (shoal_peer_config_check (&config) == NULL);
    s_config (&config, false, true);
    CHECK (shoal_peer_config_check (&config) != NULL); //  tasks need the election
    shoal_id_t id = shoal_sample_index_id (0);
    shoal_meta_t meta = { .name = "n", .addr = "peer:0", .life = 1, .capacity = 1 };
    CHECK (shoal_peer_new (&config, &id, 1, &meta, NULL, 1, 0, NULL, NULL) == NULL);
}

static void
three_peers_follow_one_leader (void)
{
    s_net_t net;
    s_net_start (&net, true, false);
    s_net_run (&net, 10000);
    for (int i = 0; i < PEERS; i++)
        CHECK_EQ (shoal_membership_live (shoal_peer_membership (net.nodes[i].peer)), PEERS);
    int leader = s_leader (&net);
    CHECK_EQ (leader, PEERS - 1); //  the highest priority
    int acting = 0;
    for (int i = 0; i < PEERS; i++) {
        acting += shoal_elector_acting (shoal_peer_elector (net.nodes[i].peer), net.now);
        //  The term each one acknowledged went to its disk.
        CHECK (net.nodes[i].saved_elector > 0);
    }
    CHECK_EQ (acting, 1);
    s_net_stop (&net);
}

static void
the_tasks_of_a_job_run_once_each (void)
{
    s_net_t net;
    s_net_start (&net, true, true);
    s_net_run (&net, 20000);
    int leader = s_leader (&net);
    CHECK_EQ (leader, PEERS - 1);
    CHECK (shoal_peer_handoff (net.nodes[PEERS - 1].peer) != NULL);
    CHECK_EQ (net.nodes[PEERS - 1].placing, 3);
    for (int i = 0; i < PEERS - 1; i++) {
        CHECK (shoal_peer_handoff (net.nodes[i].peer) == NULL);
        CHECK_EQ (net.nodes[i].placing, 0);
    }
    const char *tasks[] = { "web/0", "web/1", "web/2" };
    for (int t = 0; t < 3; t++) {
        int actives = 0;
        for (int i = 0; i < PEERS; i++) {
            size_t at = s_task (&net.nodes[i], tasks[t]);
            actives += at < 8 && net.nodes[i].role[at] == SHOAL_ROLE_ACTIVE;
        }
        CHECK_EQ (actives, 1);
    }
    s_net_stop (&net);
}

static void
a_follower_that_leaves_is_seen_leaving (void)
{
    s_net_t net;
    s_net_start (&net, true, true);
    s_net_run (&net, 10000);
    CHECK_EQ (s_leader (&net), PEERS - 1);
    s_node_t *follower = &net.nodes[0];
    shoal_membership_t *membership = shoal_peer_membership (follower->peer);
    shoal_id_t id = shoal_sample_index_id (0);
    shoal_membership_member_t self;
    shoal_elector_saved_t saved;
    shoal_elector_saved (shoal_peer_elector (net.nodes[PEERS - 1].peer), &saved);
    CHECK (shoal_ids_contain (saved.voters, saved.voter_count, &id));
    CHECK (!shoal_peer_left (follower->peer));
    CHECK_EQ (shoal_peer_leave (follower->peer, net.now), 0);
    //  A voter stays in the view until its leader dropped it from the voter
    //  set (its acknowledgements say it leaves): leaving before, it could
    //  take with it the acknowledgement a change of the set waits for.
    CHECK_EQ (shoal_membership_member (membership, &id, &self), 0);
    CHECK_EQ (self.state, SHOAL_MEMBER_ALIVE);
    s_net_run (&net, net.now + 2000);
    CHECK_EQ (shoal_membership_member (membership, &id, &self), 0);
    CHECK_EQ (self.state, SHOAL_MEMBER_LEFT);
    shoal_elector_saved (shoal_peer_elector (net.nodes[PEERS - 1].peer), &saved);
    CHECK (!shoal_ids_contain (saved.voters, saved.voter_count, &id));
    CHECK (shoal_peer_left (follower->peer));
    for (int i = 1; i < PEERS; i++)
        CHECK_EQ (net.nodes[i].left_seen, 1);
    s_net_stop (&net);
}

static void
a_leader_that_leaves_moves_its_tasks_away_first (void)
{
    s_net_t net;
    s_net_start (&net, true, true);
    s_net_run (&net, 20000);
    CHECK_EQ (s_leader (&net), PEERS - 1);
    s_node_t *leader = &net.nodes[PEERS - 1];
    shoal_membership_t *membership = shoal_peer_membership (leader->peer);
    shoal_id_t id = shoal_sample_index_id (PEERS - 1);
    shoal_membership_member_t self;
    CHECK_EQ (shoal_peer_leave (leader->peer, net.now), 0);
    CHECK_EQ (shoal_peer_leave (leader->peer, net.now), -1); //  draining already
    CHECK_EQ (shoal_membership_member (membership, &id, &self), 0);
    CHECK_EQ (self.state, SHOAL_MEMBER_ALIVE);
    s_net_run (&net, net.now + 30000);
    CHECK_EQ (shoal_membership_member (membership, &id, &self), 0);
    CHECK_EQ (self.state, SHOAL_MEMBER_LEFT);
    CHECK (shoal_peer_left (leader->peer));
    const char *tasks[] = { "web/0", "web/1", "web/2" };
    for (int t = 0; t < 3; t++) {
        size_t at = s_task (leader, tasks[t]);
        CHECK (at < 8 && leader->role[at] == SHOAL_ROLE_NONE);
        int actives = 0;
        for (int i = 0; i < PEERS - 1; i++) {
            at = s_task (&net.nodes[i], tasks[t]);
            actives += at < 8 && net.nodes[i].role[at] == SHOAL_ROLE_ACTIVE;
        }
        CHECK_EQ (actives, 1);
    }
    s_net_stop (&net);
}

//  The peer that every peer but skip follows, or -1 when they do not
//  agree; term is theirs.
static int
s_leader_but (s_net_t *net, int skip, uint64_t *term)
{
    int leader = -1;
    for (int i = 0; i < PEERS; i++) {
        shoal_id_t id;
        uint64_t their_term;
        if (i == skip)
            continue;
        if (shoal_elector_leader (shoal_peer_elector (net->nodes[i].peer), net->now, &id,
                                  &their_term) != 0)
            return -1;
        if (leader >= 0 && (leader != id.bytes[0] - 1 || their_term != *term))
            return -1;
        leader = id.bytes[0] - 1;
        *term = their_term;
    }
    return leader;
}

//  A node that left and stays up (the library case: its application goes
//  on) takes no part in any election: it sends no election message, does
//  not lead, follows nobody, and the others elect among themselves once at
//  most, then keep their leader and term. It once stayed in the election:
//  a leader that left was elected again at a higher term and led on while
//  every member listed it as left, and a follower that left ran the others'
//  term up.
static void
a_peer_that_left_takes_no_part_in_elections (void)
{
    for (int leaves = 0; leaves < PEERS; leaves += PEERS - 1) {
        s_net_t net;
        s_net_start (&net, true, true);
        s_net_run (&net, 20000);
        uint64_t term = 0;
        CHECK_EQ (s_leader_but (&net, -1, &term), PEERS - 1);
        uint64_t first_term = term;
        s_node_t *gone = &net.nodes[leaves];
        CHECK_EQ (shoal_peer_leave (gone->peer, net.now), 0);
        uint64_t deadline = net.now + 60000;
        while (!shoal_peer_left (gone->peer) && net.now < deadline)
            s_net_run (&net, net.now + 100);
        CHECK (shoal_peer_left (gone->peer));
        //  The others find a leader among themselves: at once when a
        //  follower left, after one election when the leader did.
        deadline = net.now + 60000;
        while (s_leader_but (&net, leaves, &term) < 0 && net.now < deadline)
            s_net_run (&net, net.now + 100);
        int leader = s_leader_but (&net, leaves, &term);
        CHECK (leader >= 0 && leader != leaves);
        if (leaves != PEERS - 1)
            CHECK_EQ (term, first_term);
        uint64_t settled_term = term;
        size_t election_sent = gone->election_sent;
        //  Two hundred leases on, nothing has moved.
        s_net_run (&net, net.now + 60000);
        shoal_elector_t *elector = shoal_peer_elector (gone->peer);
        shoal_id_t id;
        uint64_t its_term;
        CHECK_EQ (gone->election_sent, election_sent);
        CHECK (!shoal_elector_acting (elector, net.now));
        CHECK_EQ (shoal_elector_leader (elector, net.now, &id, &its_term), -1);
        CHECK_EQ (s_leader_but (&net, leaves, &term), leader);
        CHECK_EQ (term, settled_term);
        for (int i = 0; i < PEERS; i++)
            if (i != leaves)
                CHECK (shoal_elector_term (shoal_peer_elector (net.nodes[i].peer)) <= settled_term);
        s_net_stop (&net);
    }
}

static void
a_peer_without_tasks_has_no_tasks_core (void)
{
    s_net_t net;
    s_net_start (&net, false, false);
    shoal_peer_t *peer = net.nodes[0].peer;
    CHECK (shoal_peer_membership (peer) != NULL);
    CHECK (shoal_peer_elector (peer) == NULL);
    CHECK (shoal_peer_tasks (peer) == NULL);
    CHECK (shoal_peer_jobs (peer) == NULL);
    CHECK (shoal_peer_handoff (peer) == NULL);
    CHECK_EQ (shoal_peer_report (peer, 0, "web/0", SHOAL_TASK_RUNNING, 0), -1);
    shoal_control_req_t req = { 0 };
    CHECK_EQ (shoal_peer_request (peer, 0, 1, &req), -1);
    s_net_run (&net, 5000);
    CHECK_EQ (shoal_membership_live (shoal_peer_membership (peer)), PEERS);
    s_net_stop (&net);
}

static void
messages_for_no_core_are_dropped (void)
{
    s_net_t net;
    s_net_start (&net, false, false);
    s_net_run (&net, 5000);
    shoal_peer_t *peer = net.nodes[0].peer;
    size_t sent = net.nodes[0].sent;
    shoal_envelope_t envelope = { .mode = SHOAL_ENVELOPE_PLAINTEXT, .sender = { .life = 1 } };
    envelope.sender.id[0] = 2;
    shoal_msg_t msg;
    //  An ASSIGN, a STATUS, a COORDINATOR and a JOB for cores it does not
    //  run, and a type nobody knows.
    uint8_t types[] = { SHOAL_MSG_ASSIGN, SHOAL_MSG_STATUS, SHOAL_MSG_COORDINATOR, SHOAL_MSG_JOB };
    for (size_t i = 0; i < sizeof types; i++) {
        memset (&msg, 0, sizeof msg);
        msg.type = types[i];
        CHECK_EQ (shoal_peer_receive (peer, net.now, &envelope, &msg, "peer:1"), -1);
    }
    memset (&msg, 0, sizeof msg);
    msg.type = 0xEE;
    shoal_peer_receive (peer, net.now, &envelope, &msg, "peer:1");
    CHECK_EQ (net.nodes[0].sent, sent);
    CHECK_EQ (shoal_membership_live (shoal_peer_membership (peer)), PEERS);
    s_net_stop (&net);
}

//  Peers given seeds that do not answer (here: none joins anyone) never
//  lead a cluster of one, however long they wait; once they meet, they
//  elect one leader as usual.
static void
peers_that_wait_for_a_member_never_lead_alone (void)
{
    s_net_t net;
    s_net_start_with (&net, true, false, true, false);
    s_net_run (&net, 60000); //  120 times the settle time
    for (int i = 0; i < PEERS; i++) {
        shoal_id_t leader;
        uint64_t term;
        shoal_elector_t *elector = shoal_peer_elector (net.nodes[i].peer);
        CHECK_EQ (shoal_elector_leader (elector, net.now, &leader, &term), -1);
        CHECK_EQ (shoal_elector_term (elector), 0);
        CHECK (shoal_peer_election_held (net.nodes[i].peer));
    }
    for (int i = 1; i < PEERS; i++)
        CHECK_EQ (shoal_peer_join (net.nodes[i].peer, net.now, net.nodes[0].addr), 0);
    s_net_run (&net, net.now + 10000);
    CHECK_EQ (s_leader (&net), PEERS - 1);
    for (int i = 0; i < PEERS; i++)
        CHECK (!shoal_peer_election_held (net.nodes[i].peer));
    s_net_stop (&net);
}

//  The shell releases a peer whose only seed is itself: it leads alone
//  after its settle time, as a peer that waits for nobody.
static void
a_released_peer_leads_alone (void)
{
    s_net_t net;
    s_net_start_with (&net, true, false, true, false);
    s_net_run (&net, 5000);
    shoal_id_t leader;
    uint64_t term;
    shoal_elector_t *elector = shoal_peer_elector (net.nodes[0].peer);
    CHECK_EQ (shoal_elector_leader (elector, net.now, &leader, &term), -1);
    shoal_peer_election_release (net.nodes[0].peer, net.now);
    CHECK (!shoal_peer_election_held (net.nodes[0].peer));
    s_net_run (&net, net.now + 5000);
    CHECK_EQ (shoal_elector_leader (elector, net.now, &leader, &term), 0);
    CHECK_EQ (leader.bytes[0], 1); //  itself: the sample id of index 0
    s_net_stop (&net);
}

//  How many peers run task in the active role.
static int
s_actives (s_net_t *net, const char *task)
{
    int actives = 0;
    for (int i = 0; i < PEERS; i++) {
        size_t at = s_task (&net->nodes[i], task);
        actives += at < 8 && net->nodes[i].role[at] == SHOAL_ROLE_ACTIVE;
    }
    return actives;
}

//  Peers that each led a cluster of one, each with the job from its disk,
//  meet, as after a healed partition or when their seeds could not answer
//  at first: one leader for all, at a term not far from where they met,
//  and each task runs once. The leaders, each acting with a majority of
//  its own, once took terms above each other's without end, at the very
//  instant they met: the queue of this network grew without bound (to
//  20 GB, before the process was killed).
static void
leaders_of_clusters_of_one_meet_and_settle (void)
{
    s_net_t net;
    s_net_start_with (&net, true, true, false, false);
    s_net_run (&net, 10000);
    for (int i = 0; i < PEERS; i++) {
        CHECK (shoal_elector_acting (shoal_peer_elector (net.nodes[i].peer), net.now));
        CHECK_EQ (net.nodes[i].placing, 3);
    }
    for (int i = 1; i < PEERS; i++)
        CHECK_EQ (shoal_peer_join (net.nodes[i].peer, net.now, net.nodes[0].addr), 0);
    //  Settled, three peers send a few thousand messages in 20 s.
    net.delivered = 0;
    net.delivered_max = 100000;
    s_net_run (&net, net.now + 20000);
    CHECK (net.delivered < net.delivered_max);
    CHECK_EQ (s_leader (&net), PEERS - 1);
    for (int i = 0; i < PEERS; i++) {
        CHECK (shoal_elector_term (shoal_peer_elector (net.nodes[i].peer)) <= 10);
        CHECK_EQ (net.nodes[i].voters, PEERS); //  the leader took the others in
    }
    CHECK_EQ (s_actives (&net, "web/0"), 1);
    CHECK_EQ (s_actives (&net, "web/1"), 1);
    CHECK_EQ (s_actives (&net, "web/2"), 1);
    s_net_stop (&net);
}

//  A candidate that never gathers a majority never acts; a follower that
//  acknowledges it all along must not name it as the leader (on real nodes,
//  a minority node said leader=n1 for a whole partition while n1 itself
//  said it had no leader).
static void
a_candidate_that_never_acts_is_not_reported_as_leader (void)
{
    s_net_t net;
    s_net_start (&net, true, true);
    s_net_run (&net, 20000);
    CHECK_EQ (s_leader_by (&net, true), PEERS - 1);
    //  The leader goes; peer 1 proclaims, and peer 0 follows it, but
    //  peer 1 never hears an acknowledgement: no majority, it never acts.
    shoal_peer_destroy (&net.nodes[PEERS - 1].peer);
    net.deaf_to_acks = 1 + 1;
    s_net_run (&net, net.now + 60000);
    shoal_id_t id, none = { 0 };
    uint64_t term;
    CHECK (!shoal_elector_acting (shoal_peer_elector (net.nodes[1].peer), net.now));
    CHECK_EQ (shoal_elector_leader (shoal_peer_elector (net.nodes[0].peer), net.now, &id, &term),
              0);
    CHECK_EQ (id.bytes[0] - 1, 1); //  the elector follows it
    id = none;
    CHECK_EQ (shoal_peer_leader (net.nodes[0].peer, net.now, &id, &term), -1);
    CHECK (memcmp (&id, &none, sizeof id) == 0); //  nothing written
    CHECK_EQ (shoal_peer_leader (net.nodes[1].peer, net.now, &id, &term), -1);
    //  The acknowledgements arrive again: it acts, and both vouch for it.
    net.deaf_to_acks = 0;
    s_net_run (&net, net.now + 20000);
    CHECK_EQ (shoal_peer_leader (net.nodes[0].peer, net.now, &id, &term), 0);
    CHECK_EQ (id.bytes[0] - 1, 1);
    CHECK_EQ (shoal_peer_leader (net.nodes[1].peer, net.now, &id, &term), 0);
    CHECK_EQ (id.bytes[0] - 1, 1);
    s_net_stop (&net);
}

int
main (void)
{
    RUN (configs_are_checked);
    RUN (three_peers_follow_one_leader);
    RUN (the_tasks_of_a_job_run_once_each);
    RUN (a_follower_that_leaves_is_seen_leaving);
    RUN (a_leader_that_leaves_moves_its_tasks_away_first);
    RUN (a_peer_that_left_takes_no_part_in_elections);
    RUN (a_peer_without_tasks_has_no_tasks_core);
    RUN (messages_for_no_core_are_dropped);
    RUN (peers_that_wait_for_a_member_never_lead_alone);
    RUN (a_released_peer_leads_alone);
    RUN (leaders_of_clusters_of_one_meet_and_settle);
    RUN (a_candidate_that_never_acts_is_not_reported_as_leader);
    return TEST_DONE ();
}

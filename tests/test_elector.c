/*  tests/test_elector.c: the election state machine, on a small network.

    Every node is a real elector; messages go through the real codec with
    1 ms of latency, on the tests' network (tests/lib/net.h). The membership view is given directly:
   a node is told of every other as live while both run and can reach each other, and as down when
   the other stops (as the membership layer would say, later). The network checks, at every
   millisecond, that no two nodes act as leader at once in quorum mode.
*/

#include "tests/samples.h"
#include "wire/arena.h"
#include "election/elector.h"
#include "tests/test.h"
#include "wire/wire.h"
#include "tests/lib/net.h"

#include <stdlib.h>

#define NODES_MAX  12
#define LATENCY_MS 1

typedef struct {
    shoal_elector_t *core; //  NULL while stopped
    shoal_id_t id;
    uint32_t priority;
    int group;         //  its side while the network is split
    bool left;         //  the others' views say it left (it may run on)
    uint64_t sent;     //  messages it sent
    uint64_t not_acks; //  of those, messages other than COORDINATOR-ACK
    //  What it persisted.
    uint64_t term;
    shoal_id_t leader;
    uint64_t voters_version;
    shoal_id_t voters[NODES_MAX];
    uint32_t voter_count;
    uint64_t last_term; //  the highest term it reported, to check growth
    int leader_changes; //  LEADER events naming another leader than the last
    shoal_id_t followed;
} s_node_t;

typedef struct {
    shoal_elector_config_t config;
    s_node_t nodes[NODES_MAX];
    int count;
    uint64_t now;
    bool split;
    test_net_t wire;
    int drop[NODES_MAX][NODES_MAX]; //  messages from a to b still to lose
    bool cut[NODES_MAX][NODES_MAX]; //  a's messages never reach b, though views say live
    //  a's messages reach b only back over b's own connection: while b sent
    //  to a within the last lease (the transport's routes; a's link to b
    //  is taken by the cap on links)
    bool routed[NODES_MAX][NODES_MAX];
    uint64_t sent_at[NODES_MAX][NODES_MAX]; //  a's last message to b
    uint64_t messages;                      //  election messages sent
    int two_acting;                         //  milliseconds with two leaders acting (quorum mode)
} s_net_t;

static bool
s_reach (const s_net_t *net, int a, int b)
{
    return net->nodes[a].core && net->nodes[b].core &&
           (!net->split || net->nodes[a].group == net->nodes[b].group);
}

static void
s_collect (s_net_t *net, int index)
{
    s_node_t *node = &net->nodes[index];
    shoal_elector_saved_t saved;
    if (shoal_elector_saved (node->core, &saved)) {
        CHECK (saved.term >= node->term);
        CHECK (saved.voter_count <= NODES_MAX);
        node->term = saved.term;
        node->leader = saved.leader;
        node->voters_version = saved.voters_version;
        node->voter_count = saved.voter_count;
        memcpy (node->voters, saved.voters, saved.voter_count * sizeof (shoal_id_t));
    }
    CHECK (shoal_elector_term (node->core) >= node->last_term);
    node->last_term = shoal_elector_term (node->core);
    const shoal_elector_event_t *events;
    size_t event_count = shoal_elector_events (node->core, &events);
    for (size_t i = 0; i < event_count; i++)
        if (events[i].type == SHOAL_ELECTOR_LEADER) {
            if (memcmp (&events[i].leader, &node->followed, sizeof node->followed) != 0)
                node->leader_changes++;
            node->followed = events[i].leader;
        }
    const shoal_elector_send_t *sends;
    size_t send_count = shoal_elector_outbox (node->core, &sends);
    for (size_t i = 0; i < send_count; i++) {
        net->messages++;
        node->sent++;
        node->not_acks += sends[i].msg.type != SHOAL_MSG_COORDINATOR_ACK;
        int to = sends[i].to.bytes[0] - 1;
        CHECK (to >= 0 && to < net->count && to != index);
        if (to < 0 || to >= net->count || !s_reach (net, index, to) || net->cut[index][to])
            continue;
        net->sent_at[index][to] = net->now;
        if (net->routed[index][to] && net->sent_at[to][index] + net->config.lease_ms < net->now)
            continue;
        if (net->drop[index][to] > 0) {
            net->drop[index][to]--;
            continue;
        }
        test_packet_t packet = { .at = net->now + LATENCY_MS, .from = index, .to = to };
        CHECK (test_net_send (&net->wire, &packet, &sends[i].msg) > 0);
    }
}

//  Tells every running node of every other whether it is live to it, or
//  that it left.
static void
s_views (s_net_t *net)
{
    for (int a = 0; a < net->count; a++)
        for (int b = 0; b < net->count && net->nodes[a].core; b++) {
            const s_node_t *other = &net->nodes[b];
            if (a == b)
                continue;
            if (other->left)
                CHECK_EQ (shoal_elector_member_left (net->nodes[a].core, net->now, &other->id,
                                                     other->priority),
                          0);
            else
                CHECK_EQ (shoal_elector_member (net->nodes[a].core, net->now, &other->id,
                                                other->priority, s_reach (net, a, b)),
                          0);
            s_collect (net, a);
        }
}

static void
s_start (s_net_t *net, int index)
{
    s_node_t *node = &net->nodes[index];
    shoal_elector_saved_t saved = { node->term, node->leader, node->voters_version,
                                    node->voter_count, node->voters };
    node->core = shoal_elector_new (&net->config, &node->id, node->priority,
                                    node->term ? &saved : NULL, net->now);
    CHECK (node->core != NULL);
    s_views (net);
}

static void
s_stop (s_net_t *net, int index)
{
    shoal_elector_destroy (&net->nodes[index].core);
    s_views (net);
}

static uint64_t
s_max_u64 (uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

static s_net_t *
s_net_new (const shoal_elector_config_t *config, int count)
{
    s_net_t *net = calloc (1, sizeof *net);
    net->config = *config;
    net->count = count;
    net->now = 1000;
    CHECK_EQ (test_net_init (&net->wire), 0);
    for (int i = 0; i < count; i++)
        net->nodes[i].id = shoal_sample_index_id (i);
    return net;
}

static void
s_net_destroy (s_net_t **net_p)
{
    s_net_t *net = *net_p;
    for (int i = 0; i < net->count; i++)
        shoal_elector_destroy (&net->nodes[i].core);
    test_net_release (&net->wire);
    free (net);
    *net_p = NULL;
}

static int
s_acting_count (const s_net_t *net)
{
    int acting = 0;
    for (int i = 0; i < net->count; i++)
        acting += net->nodes[i].core && shoal_elector_acting (net->nodes[i].core, net->now);
    return acting;
}

//  Runs the network one millisecond at a time until until.
static void
s_run_until (s_net_t *net, uint64_t until)
{
    while (net->now < until) {
        net->now++;
        test_packet_t packet;
        while (test_net_pop (&net->wire, net->now, &packet)) {
            const shoal_msg_t *msg = NULL;
            if (s_reach (net, packet.from, packet.to)) {
                msg = test_net_decode (&net->wire, &packet);
                CHECK (msg != NULL && packet.carrier == SHOAL_PURPOSE_FRAME);
            }
            if (msg) {
                s_node_t *to = &net->nodes[packet.to];
                shoal_elector_receive (to->core, net->now, &net->nodes[packet.from].id, msg);
                s_collect (net, packet.to);
            }
            test_packet_free (&packet);
        }
        for (int i = 0; i < net->count; i++)
            if (net->nodes[i].core && shoal_elector_next (net->nodes[i].core) <= net->now) {
                shoal_elector_tick (net->nodes[i].core, net->now);
                s_collect (net, i);
            }
        if (net->config.quorum && s_acting_count (net) > 1)
            net->two_acting++;
    }
}

//  The one node acting as leader, or -1 (none, or several).
static int
s_leader (const s_net_t *net)
{
    int leader = -1;
    for (int i = 0; i < net->count; i++)
        if (net->nodes[i].core && shoal_elector_acting (net->nodes[i].core, net->now)) {
            if (leader >= 0)
                return -1;
            leader = i;
        }
    return leader;
}

//  How many running nodes follow node leader at its term.
static int
s_followers (const s_net_t *net, int leader)
{
    int following = 0;
    uint64_t term = 0;
    shoal_id_t id;
    shoal_elector_leader (net->nodes[leader].core, net->now, &id, &term);
    for (int i = 0; i < net->count; i++) {
        uint64_t their_term;
        if (i != leader && net->nodes[i].core &&
            shoal_elector_leader (net->nodes[i].core, net->now, &id, &their_term) == 0 &&
            memcmp (&id, &net->nodes[leader].id, sizeof id) == 0 && their_term == term)
            following++;
    }
    return following;
}

//  Runs the network through the settle period and one election.
static void
s_settle (s_net_t *net)
{
    s_run_until (net, net->now + net->config.settle_ms + net->config.lease_ms);
}

static s_net_t *
s_started (const shoal_elector_config_t *config, int count)
{
    s_net_t *net = s_net_new (config, count);
    for (int i = 0; i < count; i++)
        s_start (net, i);
    return net;
}

//  count nodes started together, run until the first election is over;
//  node leader must lead it.
static s_net_t *
s_led (const shoal_elector_config_t *config, int count, int leader)
{
    s_net_t *net = s_started (config, count);
    s_settle (net);
    CHECK_EQ (s_leader (net), leader);
    return net;
}

//  count nodes, all but the last started together and through their first
//  election: the highest of them, count - 2, leads.
static s_net_t *
s_led_but_last (const shoal_elector_config_t *config, int count)
{
    s_net_t *net = s_net_new (config, count);
    for (int i = 0; i < count - 1; i++)
        s_start (net, i);
    s_settle (net);
    CHECK_EQ (s_leader (net), count - 2);
    return net;
}

static shoal_elector_config_t
s_config (void)
{
    shoal_elector_config_t config;
    shoal_elector_config_loopback (&config);
    return config;
}

//  ---------------------------------------------------------------------

static void
configs_are_checked (void)
{
    shoal_elector_config_t config = s_config ();
    CHECK (shoal_elector_config_check (&config) == NULL);
    shoal_elector_config_lan (&config);
    CHECK (shoal_elector_config_check (&config) == NULL);
    shoal_elector_config_t wan;
    shoal_elector_config_wan (&wan);
    CHECK (shoal_elector_config_check (&wan) == NULL);
    CHECK_EQ (wan.heartbeat_ms, 5 * config.heartbeat_ms);
    CHECK_EQ (wan.lease_ms, 5 * config.lease_ms);
    CHECK_EQ (wan.settle_ms, 5 * config.settle_ms);
    config.lease_ms = config.heartbeat_ms;
    CHECK (strstr (shoal_elector_config_check (&config), "lease_ms") != NULL);
    shoal_id_t id = shoal_sample_index_id (0);
    CHECK (shoal_elector_new (&config, &id, 0, NULL, 0) == NULL);
    shoal_elector_config_lan (&config);
    config.drift_percent = 60;
    CHECK (strstr (shoal_elector_config_check (&config), "drift") != NULL);
    CHECK (shoal_elector_config_check (NULL) != NULL);
}

static void
the_highest_rank_leads_after_settle (void)
{
    shoal_elector_config_t config = s_config ();
    s_net_t *net = s_started (&config, 5);
    net->nodes[1].priority = 0;
    s_run_until (net, net->now + config.settle_ms - 1);
    CHECK_EQ (s_acting_count (net), 0); //  nobody leads while settling
    s_run_until (net, net->now + config.lease_ms);
    CHECK_EQ (s_leader (net), 4); //  the highest id at equal priority
    CHECK_EQ (s_followers (net, 4), 4);
    CHECK_EQ (net->nodes[4].term, 1);
    for (int i = 0; i < 5; i++) {
        CHECK_EQ (net->nodes[i].voters_version, 1);
        CHECK_EQ (net->nodes[i].voter_count, 5);
        CHECK_EQ (net->nodes[i].leader_changes, 1);
    }
    //  Quiet afterwards: heartbeats only, no new term.
    s_run_until (net, net->now + 10 * config.lease_ms);
    CHECK_EQ (s_leader (net), 4);
    CHECK_EQ (net->nodes[4].term, 1);
    CHECK_EQ (net->two_acting, 0);
    s_net_destroy (&net);

    //  Priority comes first in the rank.
    net = s_net_new (&config, 5);
    net->nodes[1].priority = 9;
    for (int i = 0; i < 5; i++)
        s_start (net, i);
    s_settle (net);
    CHECK_EQ (s_leader (net), 1);
    s_net_destroy (&net);
}

static void
a_crashed_leader_is_replaced_with_few_messages (void)
{
    shoal_elector_config_t config = s_config ();
    s_net_t *net = s_led (&config, 10, 9);
    uint64_t crash = net->now;
    //  The membership view says nothing yet: only the silence tells.
    shoal_elector_destroy (&net->nodes[9].core);
    net->messages = 0;
    while (s_leader (net) < 0 && net->now < crash + 10 * config.lease_ms)
        s_run_until (net, net->now + 1);
    CHECK_EQ (s_leader (net), 8);
    //  Within a lease and a heartbeat of the crash, and a little.
    CHECK (net->now - crash <= config.lease_ms + config.heartbeat_ms + 20);
    uint64_t to_lead = net->messages;
    s_run_until (net, net->now + 20);
    CHECK_EQ (s_followers (net, 8), 8);
    CHECK_EQ (net->nodes[8].term, 2);
    //  ELECTION, ANSWER, COORDINATOR and its acknowledgement per node, and
    //  a heartbeat round or two: O(N), not N².
    CHECK (to_lead <= 6 * 9);
    s_run_until (net, net->now + 10 * config.lease_ms);
    CHECK_EQ (s_leader (net), 8);
    CHECK_EQ (net->two_acting, 0);
    for (int i = 0; i < 9; i++)
        CHECK_EQ (net->nodes[i].leader_changes, 2); //  one change for one fault
    s_net_destroy (&net);
}

//  The two survivors of a crash lose their leader at once, and the first
//  message between them is lost (a real node loses one to a connection
//  not made yet): the lower one's ELECTION, so that it proclaims the same
//  term as the higher one, and the higher one's first COORDINATOR. The
//  higher takes a new term as soon as the lower refuses its own, without
//  waiting two leases for a majority.
static void
two_candidates_of_one_term_settle_at_once (void)
{
    shoal_elector_config_t config = s_config ();
    s_net_t *net = s_led (&config, 3, 2);
    uint64_t crash = net->now;
    shoal_elector_destroy (&net->nodes[2].core);
    net->drop[0][1] = 1;
    net->drop[1][0] = 1;
    while (s_leader (net) < 0 && net->now < crash + 10 * config.lease_ms)
        s_run_until (net, net->now + 1);
    CHECK_EQ (s_leader (net), 1);
    CHECK_EQ (net->nodes[1].term, 3); //  both took 2; the higher then 3
    //  A lease of silence, the lower's answer timeout, a heartbeat or two,
    //  and a little: not the two leases more of a candidacy that waits.
    CHECK (net->now - crash <=
           config.lease_ms + config.answer_timeout_ms + 2 * config.heartbeat_ms + 20);
    s_run_until (net, net->now + 20);
    CHECK_EQ (s_followers (net, 1), 1);
    s_run_until (net, net->now + 10 * config.lease_ms);
    CHECK_EQ (s_leader (net), 1);
    CHECK_EQ (net->nodes[1].term, 3);
    CHECK_EQ (net->two_acting, 0);
    s_net_destroy (&net);
}

static void
a_higher_rank_that_comes_back_does_not_depose (void)
{
    shoal_elector_config_t config = s_config ();
    s_net_t *net = s_led_but_last (&config, 5);
    s_start (net, 4);
    s_run_until (net, net->now + 3 * config.stable_ms);
    CHECK_EQ (s_leader (net), 3);
    CHECK_EQ (s_followers (net, 3), 4);
    CHECK_EQ (net->nodes[4].leader_changes, 1);
    CHECK_EQ (net->nodes[3].term, 1);
    s_net_destroy (&net);

    //  With preempt, it takes over once it has been up for stable_ms, and
    //  only then: one change.
    config.preempt = true;
    net = s_led_but_last (&config, 5);
    uint64_t back = net->now;
    s_start (net, 4);
    s_run_until (net, back + config.stable_ms - 1);
    CHECK_EQ (s_leader (net), 3);
    s_run_until (net, back + config.stable_ms + 2 * config.lease_ms);
    CHECK_EQ (s_leader (net), 4);
    CHECK_EQ (s_followers (net, 4), 4);
    for (int i = 0; i < 4; i++)
        CHECK_EQ (net->nodes[i].leader_changes, 2);
    CHECK_EQ (net->two_acting, 0);
    s_net_destroy (&net);
}

//  A node that comes back with a higher term than the leader's, and cut
//  off long enough to proclaim it, does not depose the leader once it can
//  reach it: the leader, acting with its majority, takes a term above.
static void
a_leader_with_its_majority_outlasts_a_higher_term (void)
{
    shoal_elector_config_t config = s_config ();
    s_net_t *net = s_led_but_last (&config, 5);
    //  Node 4 restarts from a state of term 5 that knows the voter set,
    //  alone on its side of a cut.
    s_node_t *back = &net->nodes[4];
    back->term = 5;
    back->leader = back->id;
    back->voters_version = net->nodes[3].voters_version;
    back->voter_count = net->nodes[3].voter_count;
    memcpy (back->voters, net->nodes[3].voters, back->voter_count * sizeof (shoal_id_t));
    net->split = true;
    back->group = 1;
    s_start (net, 4);
    s_settle (net);
    CHECK (shoal_elector_term (back->core) >= 6); //  proclaimed, without a majority
    CHECK_EQ (s_leader (net), 3);
    net->split = false;
    s_views (net);
    s_run_until (net, net->now + 3 * config.lease_ms);
    CHECK_EQ (s_leader (net), 3);
    CHECK_EQ (s_followers (net, 3), 4);
    for (int i = 0; i < 3; i++)
        CHECK_EQ (net->nodes[i].leader_changes, 1);
    CHECK (net->nodes[3].term >= 7); //  above the 6 node 4 proclaimed
    CHECK_EQ (net->two_acting, 0);
    s_net_destroy (&net);
}

static void
a_minority_leader_steps_down_and_the_majority_elects (void)
{
    shoal_elector_config_t config = s_config ();
    s_net_t *net = s_led (&config, 5, 4);
    //  The leader and one more on one side, three on the other.
    net->split = true;
    for (int i = 0; i < 5; i++)
        net->nodes[i].group = i >= 3;
    s_views (net);
    uint64_t cut = net->now;
    s_run_until (net, cut + config.lease_ms);
    CHECK (!shoal_elector_acting (net->nodes[4].core, net->now));
    s_run_until (net, cut + 3 * config.lease_ms);
    CHECK_EQ (s_leader (net), 2);
    CHECK_EQ (s_followers (net, 2), 2);
    uint64_t minority_term = shoal_elector_term (net->nodes[4].core);
    s_run_until (net, net->now + 20 * config.lease_ms);
    CHECK_EQ (s_leader (net), 2);
    //  Cut off, the old leader keeps asking at the same term.
    CHECK_EQ (shoal_elector_term (net->nodes[4].core), minority_term);
    //  Healed: one leader for all, the one with the majority.
    net->split = false;
    s_views (net);
    s_run_until (net, net->now + 4 * config.lease_ms);
    int leader = s_leader (net);
    CHECK_EQ (leader, 2);
    if (leader >= 0)
        CHECK_EQ (s_followers (net, leader), 4);
    CHECK_EQ (net->two_acting, 0);
    s_net_destroy (&net);
}

//  Two sides that cannot reach each other and one node that reaches both:
//  the membership view (indirect probes through that node) says every
//  member is live, but no message crosses. The side without the leader
//  holds candidacies without a majority, one after another, for as long as
//  the bridge lasts.
static void
a_bridge_does_not_run_the_term_up (void)
{
    shoal_elector_config_t config = s_config ();
    s_net_t *net = s_led (&config, 5, 4);
    uint64_t before = shoal_elector_term (net->nodes[4].core);
    for (int a = 1; a < 5; a++)
        for (int b = 1; b < 5; b++)
            net->cut[a][b] = (a <= 2) != (b <= 2);
    s_run_until (net, net->now + 20 * config.lease_ms);
    CHECK_EQ (s_leader (net), 4); //  node 0 and node 3 keep its majority
    CHECK (shoal_elector_acting (net->nodes[4].core, net->now));
    //  Node 2 proclaimed again and again without a majority, at one term.
    CHECK (net->nodes[2].core && net->nodes[2].last_term == before + 1);
    CHECK (net->nodes[1].last_term <= before + 1);
    memset (net->cut, 0, sizeof net->cut);
    s_run_until (net, net->now + 4 * config.lease_ms);
    CHECK_EQ (s_leader (net), 4);
    CHECK_EQ (s_followers (net, 4), 4);
    //  The leader took a term above the candidate's, once.
    CHECK_EQ (shoal_elector_term (net->nodes[4].core), before + 2);
    CHECK_EQ (net->two_acting, 0);
    s_net_destroy (&net);
}

static void
available_mode_leads_on_both_sides_and_the_higher_term_wins (void)
{
    shoal_elector_config_t config = s_config ();
    config.quorum = false;
    s_net_t *net = s_led (&config, 5, 4);
    net->split = true;
    for (int i = 0; i < 5; i++)
        net->nodes[i].group = i >= 3;
    s_views (net);
    s_run_until (net, net->now + 3 * config.lease_ms);
    CHECK_EQ (s_acting_count (net), 2);
    CHECK (shoal_elector_acting (net->nodes[4].core, net->now));
    CHECK (shoal_elector_acting (net->nodes[2].core, net->now));
    CHECK_EQ (net->nodes[2].term, 2);
    net->split = false;
    s_views (net);
    s_run_until (net, net->now + 2 * config.lease_ms);
    CHECK_EQ (s_leader (net), 2); //  term 2 beats term 1
    CHECK_EQ (s_followers (net, 2), 4);
    s_net_destroy (&net);
}

static void
voters_that_stay_down_leave_the_set_one_at_a_time (void)
{
    shoal_elector_config_t config = s_config ();
    s_net_t *net = s_started (&config, 5);
    s_settle (net);
    CHECK_EQ (net->nodes[4].voter_count, 5);
    //  Three of five go for good, one after another; the cluster goes on.
    for (int gone = 0; gone < 3; gone++) {
        s_stop (net, gone);
        s_run_until (net, net->now + config.down_after_ms + 2 * config.lease_ms);
        CHECK_EQ (s_leader (net), 4);
        CHECK_EQ (net->nodes[4].voter_count, 4 - gone);
        CHECK_EQ (net->nodes[3].voter_count, 4 - gone);
    }
    //  A member that has been up for stable_ms joins the set again.
    s_start (net, 0);
    s_run_until (net, net->now + config.stable_ms + 2 * config.lease_ms);
    CHECK_EQ (net->nodes[4].voter_count, 3);
    CHECK_EQ (net->nodes[0].voter_count, 3);
    CHECK_EQ (net->two_acting, 0);
    s_net_destroy (&net);
}

//  A follower that leaves a set of two is dropped from it at once: the
//  leader keeps its majority. One that fails instead takes the leader's
//  majority with it until down_after_ms.
static void
a_voter_that_leaves_is_dropped_at_once (void)
{
    shoal_elector_config_t config = s_config ();
    for (int leaves = 1; leaves >= 0; leaves--) {
        s_net_t *net = s_started (&config, 2);
        s_settle (net);
        int leader = s_leader (net);
        CHECK (leader >= 0);
        if (leader < 0) {
            s_net_destroy (&net);
            continue;
        }
        CHECK_EQ (net->nodes[leader].voter_count, 2);
        int other = 1 - leader;
        shoal_elector_destroy (&net->nodes[other].core);
        if (leaves)
            CHECK_EQ (shoal_elector_member_left (net->nodes[leader].core, net->now,
                                                 &net->nodes[other].id, net->nodes[other].priority),
                      0);
        else
            CHECK_EQ (shoal_elector_member (net->nodes[leader].core, net->now,
                                            &net->nodes[other].id, net->nodes[other].priority,
                                            false),
                      0);
        s_collect (net, leader);
        s_run_until (net, net->now + 4 * config.lease_ms);
        CHECK (4 * config.lease_ms < config.down_after_ms);
        CHECK_EQ (s_leader (net), leaves ? leader : -1);
        CHECK_EQ (net->nodes[leader].voter_count, leaves ? 1 : 2);
        s_net_destroy (&net);
    }
}

static bool
s_votes (const s_node_t *node, const shoal_id_t *id)
{
    for (uint32_t v = 0; v < node->voter_count; v++)
        if (memcmp (&node->voters[v], id, sizeof *id) == 0)
            return true;
    return false;
}

//  The highest rank comes up after the voter set was made, and is elected
//  when the leader crashes before it became a voter: it joins the set at
//  once, not never (only members other than the leader wait stable_ms).
//  Node leader leaves: it hands its vote over, then goes (the others'
//  views say it left); the node heir must then lead alone.
static void
s_leader_leaves (s_net_t *net, int leader, int heir, bool deaf)
{
    shoal_elector_config_t config = net->config;
    shoal_elector_leave (net->nodes[leader].core, net->now);
    s_collect (net, leader);
    CHECK (!shoal_elector_handed_off (net->nodes[leader].core, net->now));
    if (deaf) {
        //  It hears no acknowledgement for a lease and a half: it stops
        //  acting, and is not done for that.
        net->drop[heir][leader] = 1 << 30;
        s_run_until (net, net->now + config.lease_ms + config.lease_ms / 2);
        CHECK (!shoal_elector_acting (net->nodes[leader].core, net->now));
        CHECK (!shoal_elector_handed_off (net->nodes[leader].core, net->now));
        net->drop[heir][leader] = 0;
    }
    uint64_t start = net->now;
    while (!shoal_elector_handed_off (net->nodes[leader].core, net->now) &&
           net->now < start + 10 * config.lease_ms)
        s_run_until (net, net->now + 1);
    CHECK (shoal_elector_handed_off (net->nodes[leader].core, net->now));
    //  It leads on, as a non-voter, until it goes; the others hold a set
    //  without it.
    CHECK_EQ (s_leader (net), leader);
    for (int i = 0; i < net->count; i++)
        if (i != leader && net->nodes[i].core)
            for (uint32_t v = 0; v < net->nodes[i].voter_count; v++)
                CHECK (memcmp (&net->nodes[i].voters[v], &net->nodes[leader].id,
                               sizeof (shoal_id_t)) != 0);
    shoal_elector_destroy (&net->nodes[leader].core);
    for (int i = 0; i < net->count; i++)
        if (net->nodes[i].core) {
            shoal_elector_member_left (net->nodes[i].core, net->now, &net->nodes[leader].id,
                                       net->nodes[leader].priority);
            s_collect (net, i);
        }
    start = net->now;
    while (s_leader (net) != heir && net->now < start + 10 * config.lease_ms)
        s_run_until (net, net->now + 1);
    CHECK_EQ (s_leader (net), heir);
    s_run_until (net, net->now + 5 * config.lease_ms);
    CHECK_EQ (s_leader (net), heir);
    CHECK_EQ (net->two_acting, 0);
}

static void s_followers_leave (s_net_t *net, const int *leavers, int count);

static void
a_leader_that_leaves_hands_its_vote_over (void)
{
    shoal_elector_config_t config = s_config ();
    //  A set of two: without the handover, the one left has no majority.
    s_net_t *net = s_led (&config, 2, 1);
    s_leader_leaves (net, 1, 0, false);
    s_net_destroy (&net);

    //  The same, with the leader losing its majority midway: it finishes
    //  once it has it again.
    net = s_led (&config, 2, 1);
    s_leader_leaves (net, 1, 0, true);
    s_net_destroy (&net);

    //  A set of one, the leader, with a newcomer not yet a voter: the
    //  newcomer is brought in first.
    net = s_led_but_last (&config, 2);
    CHECK_EQ (net->nodes[0].voter_count, 1);
    s_start (net, 1);
    s_run_until (net, net->now + config.heartbeat_ms);
    s_leader_leaves (net, 0, 1, false);
    s_net_destroy (&net);

    //  Three: the two others keep a set of two.
    net = s_led (&config, 3, 2);
    s_leader_leaves (net, 2, 1, false);
    CHECK_EQ (net->nodes[1].voter_count, 2);
    s_net_destroy (&net);

    //  A follower that votes is done once its leader dropped it, which
    //  takes a few message delays, not a round: it tells its leader at
    //  once, and the leader sends it the new set at once.
    net = s_led (&config, 3, 2);
    CHECK_EQ (net->nodes[0].voter_count, 3);
    //  Just after a round and its acknowledgements: the next is a
    //  heartbeat away.
    s_run_until (net, shoal_elector_next (net->nodes[2].core) + 5);
    CHECK (config.heartbeat_ms > 20);
    shoal_elector_leave (net->nodes[0].core, net->now);
    s_collect (net, 0);
    CHECK (!shoal_elector_handed_off (net->nodes[0].core, net->now));
    s_run_until (net, net->now + 5);
    CHECK (shoal_elector_handed_off (net->nodes[0].core, net->now));
    s_followers_leave (net, (int[]){ 0 }, 1);
    CHECK_EQ (net->nodes[2].voter_count, 2);
    s_net_destroy (&net);
}

//  Followers leave while the set changes for each: every one stays until
//  its leader dropped it, so the leader never waits on an acknowledgement
//  that left with a node. Before, two voters of three that left together
//  left a set of two, one of them gone, and the leader without a majority
//  for good (seen in tests/eventlog_moves.sh). Then the leavers go, and the
//  leader acts on for five leases.
static void
s_followers_leave (s_net_t *net, const int *leavers, int count)
{
    shoal_elector_config_t config = net->config;
    int leader = s_leader (net);
    CHECK (leader >= 0);
    uint64_t start = net->now;
    bool done = false;
    while (!done && net->now < start + 10 * config.lease_ms) {
        s_run_until (net, net->now + 1);
        done = true;
        for (int i = 0; i < count; i++)
            done &= shoal_elector_handed_off (net->nodes[leavers[i]].core, net->now);
    }
    CHECK (done);
    for (int i = 0; i < count; i++) {
        shoal_elector_destroy (&net->nodes[leavers[i]].core);
        for (int n = 0; n < net->count; n++)
            if (net->nodes[n].core) {
                shoal_elector_member_left (net->nodes[n].core, net->now, &net->nodes[leavers[i]].id,
                                           net->nodes[leavers[i]].priority);
                s_collect (net, n);
            }
    }
    s_run_until (net, net->now + 5 * config.lease_ms);
    CHECK_EQ (s_leader (net), leader);
    CHECK_EQ (net->two_acting, 0);
}

static void
voters_that_leave_together_leave_their_leader_a_majority (void)
{
    shoal_elector_config_t config = s_config ();
    s_net_t *net = s_led (&config, 3, 2);
    for (int i = 0; i < 2; i++) {
        shoal_elector_leave (net->nodes[i].core, net->now);
        s_collect (net, i);
    }
    s_followers_leave (net, (int[]){ 0, 1 }, 2);
    CHECK_EQ (net->nodes[2].voter_count, 1);
    s_net_destroy (&net);
}

//  Node gone leaves and stays up, as a library's node does when its
//  application goes on: it hands its vote over if it leads, then leaves
//  the view (retired, as the peer does then, or not: a node that does not
//  keep quiet) and the others' views say it left. The others then elect
//  among themselves, once at most, and keep that leader and term for a
//  hundred leases; they never follow it, and it never acts. Returns the
//  leader.
static int
s_left_stays_up (s_net_t *net, int gone, bool retire)
{
    shoal_elector_config_t config = net->config;
    s_node_t *node = &net->nodes[gone];
    uint64_t term_before = 0;
    for (int i = 0; i < net->count; i++)
        if (net->nodes[i].core)
            term_before = s_max_u64 (term_before, shoal_elector_term (net->nodes[i].core));
    shoal_elector_leave (node->core, net->now);
    s_collect (net, gone);
    uint64_t start = net->now;
    while (!shoal_elector_handed_off (node->core, net->now) &&
           net->now < start + 10 * config.lease_ms)
        s_run_until (net, net->now + 1);
    CHECK (shoal_elector_handed_off (node->core, net->now));
    if (retire) {
        shoal_elector_retire (node->core, net->now);
        s_collect (net, gone);
    }
    uint64_t not_acks = node->not_acks;
    node->left = true;
    s_views (net);
    s_run_until (net, net->now + 10 * config.lease_ms);
    uint64_t sent = node->sent;
    int leader = s_leader (net);
    CHECK (leader >= 0 && leader != gone);
    if (leader < 0 || leader == gone)
        return -1;
    uint64_t term = shoal_elector_term (net->nodes[leader].core);
    //  One election when the leader left (and a second term if two
    //  candidates met on the first); none when a follower did.
    CHECK (term <= term_before + 2);
    s_run_until (net, net->now + 100 * config.lease_ms);
    CHECK_EQ (s_leader (net), leader);
    for (int i = 0; i < net->count; i++) {
        if (i == gone || !net->nodes[i].core)
            continue;
        CHECK_EQ (shoal_elector_term (net->nodes[i].core), term);
        CHECK (memcmp (&net->nodes[i].followed, &net->nodes[leader].id, sizeof (shoal_id_t)) == 0);
        CHECK (!s_votes (&net->nodes[i], &node->id));
    }
    CHECK (!shoal_elector_acting (node->core, net->now));
    if (retire) {
        //  Silent, following nobody, with nothing to do ever again.
        shoal_id_t id;
        uint64_t its_term;
        CHECK_EQ (node->sent, sent);
        CHECK_EQ (node->not_acks, not_acks);
        CHECK_EQ (shoal_elector_leader (node->core, net->now, &id, &its_term), -1);
        CHECK_EQ (shoal_elector_next (node->core), UINT64_MAX);
    }
    CHECK_EQ (net->two_acting, 0);
    return leader;
}

//  A node that left takes no part in any election until it starts again
//  with a new life, though it stays up and outranks every other: it does
//  not stand, grants no vote, is not counted, and the others elect among
//  themselves without running the term up. It once did all of it: a
//  leader that left was elected again at a higher term, and a follower
//  that left ran the others' term up with its candidacies.
static void
a_node_that_left_takes_no_part_in_elections (void)
{
    shoal_elector_config_t config = s_config ();
    for (int retire = 1; retire >= 0; retire--) {
        //  The leader leaves.
        s_net_t *net = s_led (&config, 4, 3);
        CHECK_EQ (s_left_stays_up (net, 3, retire), 2);
        s_net_destroy (&net);

        //  A follower that outranks the leader (it came up after the
        //  election, and became a voter) leaves.
        net = s_led_but_last (&config, 4);
        s_start (net, 3);
        s_run_until (net, net->now + config.stable_ms + 2 * config.lease_ms);
        CHECK (s_votes (&net->nodes[2], &net->nodes[3].id));
        CHECK_EQ (s_left_stays_up (net, 3, retire), 2);
        s_net_destroy (&net);

        //  A follower of the lowest rank leaves.
        net = s_led (&config, 4, 3);
        CHECK_EQ (s_left_stays_up (net, 0, retire), 3);
        s_net_destroy (&net);
    }

    //  Retired, it grants nothing: a COORDINATOR of a higher term and an
    //  ELECTION from below get no answer. When its successor fails too,
    //  the rest elect among themselves, without asking it.
    s_net_t *net = s_led (&config, 4, 3);
    CHECK_EQ (s_left_stays_up (net, 3, true), 2);
    s_node_t *gone = &net->nodes[3];
    shoal_msg_t coordinator = { .type = SHOAL_MSG_COORDINATOR,
                                .u.coordinator = { .term = 100, .priority = 0, .round = 1 } };
    CHECK_EQ (shoal_elector_receive (gone->core, net->now, &net->nodes[1].id, &coordinator), -1);
    shoal_msg_t election = { .type = SHOAL_MSG_ELECTION, .u.election = { .term = 100 } };
    CHECK_EQ (shoal_elector_receive (gone->core, net->now, &net->nodes[0].id, &election), -1);
    const shoal_elector_send_t *sends;
    const shoal_elector_event_t *events;
    CHECK_EQ (shoal_elector_outbox (gone->core, &sends), 0);
    CHECK_EQ (shoal_elector_events (gone->core, &events), 0);
    uint64_t sent = gone->sent;
    s_stop (net, 2);
    s_run_until (net, net->now + 10 * config.lease_ms);
    CHECK_EQ (s_leader (net), 1);
    CHECK_EQ (gone->sent, sent);
    CHECK (!shoal_elector_acting (gone->core, net->now));
    CHECK_EQ (net->two_acting, 0);
    s_net_destroy (&net);
}

//  The last two of a cluster stopped together: the leader leaves, and the
//  voter it would hand its vote to leaves too. With nobody live to hand
//  anything to, the leader is done at once, whatever stage its handover
//  had reached (it used to wait for the gone voter's acknowledgement until
//  the caller's timeout).
static void
a_leader_left_alone_while_leaving_is_done (void)
{
    shoal_elector_config_t config = s_config ();
    for (int stage = 0; stage < 3; stage++) {
        s_net_t *net = s_led (&config, 2, 1);
        shoal_elector_leave (net->nodes[1].core, net->now);
        s_collect (net, 1);
        CHECK (!shoal_elector_handed_off (net->nodes[1].core, net->now));
        //  Stage 0: the other goes at once; 1: after the new set went out;
        //  2: after a lease.
        s_run_until (net, net->now + (stage == 0 ? 0 : stage == 1 ? 1 : config.lease_ms));
        shoal_elector_destroy (&net->nodes[0].core);
        CHECK_EQ (shoal_elector_member_left (net->nodes[1].core, net->now, &net->nodes[0].id,
                                             net->nodes[0].priority),
                  0);
        s_collect (net, 1);
        s_run_until (net, net->now + 1);
        CHECK (shoal_elector_handed_off (net->nodes[1].core, net->now));
        s_net_destroy (&net);
    }
}

//  True when node holds exactly the voters listed (indexes, count of them).
static bool
s_voters_are (const s_net_t *net, int node, const int *voters, uint32_t count)
{
    if (net->nodes[node].voter_count != count)
        return false;
    for (uint32_t i = 0; i < count; i++)
        if (!s_votes (&net->nodes[node], &net->nodes[voters[i]].id))
            return false;
    return true;
}

//  With voters_max below the cluster's size, the set holds the highest
//  ranks; a voter down for good gives its place to the best live member,
//  a member that outranks a voter takes its place once live for
//  stable_ms, and a set kept from a life with a larger bound shrinks, the
//  lowest ranks first.
//  Seven nodes led by 6, at most three voters: once settled, 6, 5 and 4.
static s_net_t *
s_led_by_three_voters (shoal_elector_config_t *config)
{
    *config = s_config ();
    config->voters_max = 3;
    s_net_t *net = s_led (config, 7, 6);
    s_run_until (net, net->now + config->stable_ms + 2 * config->lease_ms);
    for (int i = 0; i < 7; i++)
        CHECK (s_voters_are (net, i, (int[]){ 6, 5, 4 }, 3));
    return net;
}

static void
the_voter_set_holds_the_highest_ranks_up_to_voters_max (void)
{
    shoal_elector_config_t config;
    s_net_t *net = s_led_by_three_voters (&config);
    CHECK_EQ (s_followers (net, 6), 6);

    s_stop (net, 5);
    s_run_until (net, net->now + config.down_after_ms + 2 * config.lease_ms);
    CHECK_EQ (s_leader (net), 6);
    for (int i = 0; i < 7; i++)
        if (i != 5)
            CHECK (s_voters_are (net, i, (int[]){ 6, 4, 3 }, 3));
    //  Back, it outranks the set's lowest, who gives it its place.
    s_start (net, 5);
    s_run_until (net, net->now + config.stable_ms + 4 * config.lease_ms);
    for (int i = 0; i < 7; i++)
        CHECK (s_voters_are (net, i, (int[]){ 6, 5, 4 }, 3));
    CHECK_EQ (s_followers (net, 6), 6);

    //  Every node restarts with a bound of 7, and all 7 become voters;
    //  restarted again with a bound of 2, the set sheds the lowest ranks.
    int sizes[] = { 7, 2 };
    const int *sets[] = { (int[]){ 0, 1, 2, 3, 4, 5, 6 }, (int[]){ 6, 5 } };
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 7; i++)
            shoal_elector_destroy (&net->nodes[i].core);
        net->config.voters_max = (uint32_t) sizes[round];
        for (int i = 0; i < 7; i++)
            s_start (net, i);
        s_run_until (net, net->now + config.settle_ms + config.stable_ms + 12 * config.lease_ms);
        CHECK (s_leader (net) >= 5); //  all restarted at once: 5 may win
        for (int i = 0; i < 7; i++)
            CHECK (s_voters_are (net, i, sets[round], (uint32_t) sizes[round]));
    }
    CHECK_EQ (net->two_acting, 0);
    s_net_destroy (&net);
}

//  Node 3 joins a cluster of 0 to 2 led by 2 and is held (hold on) for
//  longer than stable_ms: it is not made a voter. Released, it is.
static void
s_not_made_a_voter_while (void (*hold) (s_net_t *net, bool on))
{
    shoal_elector_config_t config = s_config ();
    s_net_t *net = s_led_but_last (&config, 4);
    s_start (net, 3);
    hold (net, true);
    s_run_until (net, net->now + config.stable_ms + 2 * config.lease_ms);
    CHECK_EQ (s_leader (net), 2);
    CHECK (!s_votes (&net->nodes[2], &net->nodes[3].id));
    hold (net, false);
    s_run_until (net, net->now + 2 * config.lease_ms);
    CHECK (s_votes (&net->nodes[2], &net->nodes[3].id));
    CHECK_EQ (net->two_acting, 0);
    s_net_destroy (&net);
}

//  Node 3 acknowledges nothing, or answers again.
static void
s_hold_silent (s_net_t *net, bool on)
{
    for (int to = 0; to < 3; to++)
        net->drop[3][to] = on ? 1 << 30 : 0;
}

//  The leader's view suspects node 3, or holds it alive again.
static void
s_hold_suspect (s_net_t *net, bool on)
{
    shoal_elector_suspect (net->nodes[2].core, &net->nodes[3].id, on);
}

//  A member joins the voter set only while it answers: one the view still
//  calls live but that acknowledges nothing (it died a moment ago) is not
//  made a voter, which would count it against the majority.
static void
a_member_that_does_not_answer_is_not_made_a_voter (void)
{
    s_not_made_a_voter_while (s_hold_silent);
}

//  Nor is one the view suspects: it may be dead already (a worker killed
//  a moment after it had been up for stable_ms).
static void
a_suspect_member_is_not_made_a_voter (void)
{
    s_not_made_a_voter_while (s_hold_suspect);
}

//  A leader reaches some followers only over their own connections (its
//  links are taken by the cap). Once they lost it, they asked the next
//  rank, which follows that leader and answers, and so waited for a
//  COORDINATOR that could not reach them, election after election, with
//  no leader acting (1,000 workers after a kill, 2026-12-04). A wait that
//  ends with no COORDINATOR asks the lost leader again, which opens the way
//  back.
static void
a_leader_reached_only_over_the_followers_connections_is_found_again (void)
{
    shoal_elector_config_t config = s_config ();
    s_net_t *net = s_led (&config, 4, 3);
    for (int to = 0; to < 2; to++)
        net->routed[3][to] = true;
    s_run_until (net, net->now + 2 * config.lease_ms);
    CHECK_EQ (s_followers (net, 3), 3);
    //  0 and 1 lose the leader; 2 still hears it.
    for (int to = 0; to < 2; to++)
        net->drop[3][to] = 1 << 30;
    s_run_until (net, net->now + 2 * config.lease_ms);
    for (int to = 0; to < 2; to++)
        net->drop[3][to] = 0;
    s_run_until (net, net->now + 4 * config.lease_ms + 4 * config.coordinator_timeout_ms);
    CHECK_EQ (s_leader (net), 3);
    CHECK_EQ (s_followers (net, 3), 3);
    CHECK_EQ (net->two_acting, 0);
    s_net_destroy (&net);
}

//  A suspect is not asked in an election: it is likely dead (killed with
//  the leader), and each one asked costs an answer timeout.
static void
a_suspect_is_not_asked (void)
{
    shoal_elector_config_t config = s_config ();
    s_net_t *net = s_led (&config, 5, 4);
    //  3 hangs: its views say live, the others suspect it.
    for (int i = 0; i < 5; i++)
        if (i != 3) {
            net->drop[i][3] = net->drop[3][i] = 1 << 30;
            shoal_elector_suspect (net->nodes[i].core, &net->nodes[3].id, true);
        }
    uint64_t before[3];
    for (int i = 0; i < 3; i++)
        before[i] = net->sent_at[i][3];
    s_stop (net, 4);
    s_run_until (net, net->now + 2 * config.lease_ms);
    CHECK_EQ (s_leader (net), 2);
    for (int i = 0; i < 2; i++) //  2 leads: its rounds go to every live member
        CHECK_EQ (net->sent_at[i][3], before[i]);
    CHECK_EQ (net->two_acting, 0);
    s_net_destroy (&net);
}

//  When the leader dies, the members outside the voter set wait before they
//  ask: the voters elect among themselves, and the new leader's COORDINATOR
//  reaches the others before they would have asked anyone.
static void
non_voters_wait_for_the_voters_to_elect (void)
{
    shoal_elector_config_t config;
    s_net_t *net = s_led_by_three_voters (&config);
    uint64_t asked[4];
    for (int i = 0; i < 4; i++)
        asked[i] = net->nodes[i].not_acks;
    s_stop (net, 6);
    s_run_until (net, net->now + 2 * config.lease_ms);
    CHECK_EQ (s_leader (net), 5);
    CHECK_EQ (s_followers (net, 5), 5);
    for (int i = 0; i < 4; i++)
        CHECK_EQ (net->nodes[i].not_acks, asked[i]); //  acknowledgements only
    CHECK_EQ (net->two_acting, 0);
    s_net_destroy (&net);
}

static void
a_leader_from_outside_the_voter_set_joins_it (void)
{
    shoal_elector_config_t config = s_config ();
    s_net_t *net = s_net_new (&config, 5);
    for (int i = 0; i < 4; i++)
        s_start (net, i);
    s_settle (net);
    CHECK_EQ (s_leader (net), 3);
    s_start (net, 4);
    s_run_until (net, net->now + config.stable_ms / 4);
    CHECK (!s_votes (&net->nodes[3], &net->nodes[4].id));
    s_stop (net, 3);
    s_run_until (net, net->now + config.stable_ms / 2);
    CHECK_EQ (s_leader (net), 4);
    CHECK (s_votes (&net->nodes[4], &net->nodes[4].id));
    CHECK (s_votes (&net->nodes[0], &net->nodes[4].id));
    CHECK_EQ (net->two_acting, 0);
    s_net_destroy (&net);
}

static void
the_first_leader_waits_for_expect_members (void)
{
    shoal_elector_config_t config = s_config ();
    config.expect = 3;
    s_net_t *net = s_net_new (&config, 3);
    s_start (net, 0);
    s_start (net, 1);
    s_run_until (net, net->now + 5 * config.settle_ms);
    CHECK_EQ (s_acting_count (net), 0);
    s_start (net, 2);
    s_settle (net);
    CHECK_EQ (s_leader (net), 2);
    CHECK_EQ (net->nodes[2].voter_count, 3);
    s_net_destroy (&net);

    //  Started together, they need not wait out settle_ms once they see
    //  expect members: a leader acts well within it.
    net = s_net_new (&config, 3);
    for (int i = 0; i < 3; i++)
        s_start (net, i);
    uint64_t start = net->now;
    while (s_acting_count (net) == 0 && net->now < start + config.settle_ms)
        s_run_until (net, net->now + 1);
    CHECK (net->now < start + config.settle_ms / 2);
    CHECK_EQ (s_leader (net), 2);
    s_net_destroy (&net);
}

static void
a_restarted_node_keeps_its_term_and_voters (void)
{
    shoal_elector_config_t config = s_config ();
    s_net_t *net = s_led (&config, 3, 2);
    //  The leader crashes and restarts within a heartbeat (the membership
    //  view sees a new incarnation, never a dead member). It comes back with
    //  its term and voter set; the others, who lost it for a lease, have
    //  elected the next rank meanwhile, and it follows (sticky).
    shoal_elector_destroy (&net->nodes[2].core);
    s_run_until (net, net->now + config.heartbeat_ms);
    s_start (net, 2);
    CHECK_EQ (shoal_elector_term (net->nodes[2].core), 1);
    shoal_elector_saved_t saved;
    shoal_elector_saved (net->nodes[2].core, &saved);
    CHECK_EQ (saved.voter_count, 3);
    CHECK (memcmp (&saved.leader, &net->nodes[2].id, sizeof saved.leader) == 0);
    s_run_until (net, net->now + config.settle_ms + 3 * config.lease_ms);
    CHECK_EQ (s_leader (net), 1);
    CHECK_EQ (s_followers (net, 1), 2);
    CHECK_EQ (net->nodes[2].term, 2);
    CHECK_EQ (net->nodes[2].voter_count, 3);
    CHECK_EQ (net->two_acting, 0);
    s_net_destroy (&net);
}

static void
stale_and_strange_messages_are_refused (void)
{
    shoal_elector_config_t config = s_config ();
    s_net_t *net = s_led (&config, 3, 2);
    shoal_elector_t *follower = net->nodes[0].core;
    shoal_elector_stats_t before, after;
    shoal_elector_stats (follower, &before);

    //  From a stranger: dropped.
    shoal_id_t stranger = shoal_sample_index_id (11);
    shoal_msg_t msg = { .type = SHOAL_MSG_COORDINATOR };
    msg.u.coordinator = (shoal_coordinator_t){ .term = 99, .priority = 0, .round = 1 };
    CHECK_EQ (shoal_elector_receive (follower, net->now, &stranger, &msg), -1);
    //  A type it does not handle: dropped.
    shoal_msg_t ping = { .type = SHOAL_MSG_PING };
    CHECK_EQ (shoal_elector_receive (follower, net->now, &net->nodes[1].id, &ping), -1);
    //  An older term: refused, and told the current one.
    msg.u.coordinator.term = 0;
    CHECK_EQ (shoal_elector_receive (follower, net->now, &net->nodes[1].id, &msg), 0);
    const shoal_elector_send_t *sends;
    CHECK_EQ (shoal_elector_outbox (follower, &sends), 1);
    CHECK_EQ (sends[0].msg.type, SHOAL_MSG_ANSWER);
    CHECK_EQ (sends[0].msg.u.answer.term, 1);
    //  A newer term from another while the promise to the leader holds:
    //  refused, the leader stays.
    msg.u.coordinator.term = 7;
    CHECK_EQ (shoal_elector_receive (follower, net->now, &net->nodes[1].id, &msg), 0);
    shoal_elector_stats (follower, &after);
    CHECK_EQ (after.dropped - before.dropped, 2);
    CHECK_EQ (after.refused - before.refused, 2);
    shoal_id_t leader;
    uint64_t term;
    CHECK_EQ (shoal_elector_leader (follower, net->now, &leader, &term), 0);
    CHECK (memcmp (&leader, &net->nodes[2].id, sizeof leader) == 0);
    CHECK_EQ (term, 1);

    //  An acknowledgement of a round not yet sent: dropped by the leader.
    shoal_elector_t *head = net->nodes[2].core;
    shoal_elector_stats (head, &before);
    shoal_msg_t ack = { .type = SHOAL_MSG_COORDINATOR_ACK };
    ack.u.coordinator_ack = (shoal_coordinator_ack_t){ .term = 1, .round = 1u << 30 };
    CHECK_EQ (shoal_elector_receive (head, net->now, &net->nodes[0].id, &ack), 0);
    shoal_elector_stats (head, &after);
    CHECK_EQ (after.dropped - before.dropped, 1);
    //  A newer voter set of many unknown members, from the leader and in an
    //  acknowledgement: adopted (the member tables grow under the handlers),
    //  and the leader now counts its majority on it, which it lacks.
    static shoal_id_t many[300];
    for (int i = 0; i < 300; i++) {
        memset (&many[i], 0, sizeof many[i]);
        many[i].bytes[0] = 0x80;
        many[i].bytes[1] = (uint8_t) (i >> 8);
        many[i].bytes[2] = (uint8_t) i;
    }
    shoal_msg_t round = { .type = SHOAL_MSG_COORDINATOR };
    round.u.coordinator = (shoal_coordinator_t){ 1, 0, 1, 50, 300, many };
    CHECK_EQ (shoal_elector_receive (follower, net->now, &net->nodes[2].id, &round), 0);
    shoal_elector_saved_t saved;
    shoal_elector_saved (follower, &saved);
    CHECK_EQ (saved.voters_version, 50);
    CHECK_EQ (saved.voter_count, 300);
    CHECK (shoal_elector_acting (head, net->now));
    ack.u.coordinator_ack = (shoal_coordinator_ack_t){
        .term = 1, .round = 1, .voters_version = 51, .voter_count = 300, .voters = many
    };
    CHECK_EQ (shoal_elector_receive (head, net->now, &net->nodes[0].id, &ack), 0);
    shoal_elector_saved (head, &saved);
    CHECK_EQ (saved.voters_version, 51);
    CHECK_EQ (saved.voter_count, 300);
    CHECK (!shoal_elector_acting (head, net->now));

    //  An ELECTION from a higher rank than the receiver's: not answered.
    shoal_msg_t election = { .type = SHOAL_MSG_ELECTION };
    election.u.election = (shoal_election_t){ 1, 0 };
    CHECK_EQ (shoal_elector_receive (follower, net->now, &net->nodes[1].id, &election), 0);
    CHECK_EQ (shoal_elector_outbox (follower, &sends), 0);
    s_net_destroy (&net);
}

//  Told that a member holds its term for another, a leader takes a new one
//  without a gap, but acts with the old term until a majority has the new:
//  members promise each term once, so no other leader can act with it.
static void
a_new_term_is_acted_with_once_a_majority_has_it (void)
{
    shoal_elector_config_t config = s_config ();
    s_net_t *net = s_led (&config, 3, 2);
    shoal_elector_t *head = net->nodes[2].core;
    shoal_msg_t answer = { .type = SHOAL_MSG_ANSWER };
    answer.u.answer.term = 5;
    CHECK_EQ (shoal_elector_receive (head, net->now, &net->nodes[0].id, &answer), 0);
    shoal_id_t leader;
    uint64_t term;
    CHECK (shoal_elector_acting (head, net->now));
    CHECK_EQ (shoal_elector_leader (head, net->now, &leader, &term), 0);
    CHECK_EQ (term, 1);
    CHECK_EQ (shoal_elector_term (head), 6);
    s_collect (net, 2);
    s_run_until (net, net->now + 10);
    CHECK (shoal_elector_acting (head, net->now));
    CHECK_EQ (shoal_elector_leader (head, net->now, &leader, &term), 0);
    CHECK_EQ (term, 6);
    CHECK_EQ (s_followers (net, 2), 2);
    CHECK_EQ (net->nodes[0].leader_changes, 1); //  the same leader all along
    s_net_destroy (&net);
}

//  A follower whose view wrongly says its leader died (a partition's heal
//  spreads such verdicts) proclaims, but its promise to that leader still
//  holds: it acknowledges no other candidate before the promise ends.
static void
a_promise_binds_a_follower_that_proclaims (void)
{
    shoal_elector_config_t config = s_config ();
    s_net_t *net = s_led (&config, 5, 4);
    shoal_elector_t *node = net->nodes[3].core;
    CHECK_EQ (shoal_elector_member (node, net->now, &net->nodes[4].id, 0, false), 0);
    const shoal_elector_send_t *sends;
    size_t count = shoal_elector_outbox (node, &sends);
    CHECK (count > 0);
    CHECK_EQ (sends[0].msg.type, SHOAL_MSG_COORDINATOR); //  nobody above: it proclaims
    CHECK_EQ (sends[0].msg.u.coordinator.term, 2);

    //  Another candidate, at a higher term, during the promise: refused.
    shoal_msg_t coordinator = { .type = SHOAL_MSG_COORDINATOR };
    coordinator.u.coordinator = (shoal_coordinator_t){ .term = 7, .round = 1 };
    CHECK_EQ (shoal_elector_receive (node, net->now + 1, &net->nodes[1].id, &coordinator), 0);
    count = shoal_elector_outbox (node, &sends);
    for (size_t i = 0; i < count; i++)
        CHECK (sends[i].msg.type != SHOAL_MSG_COORDINATOR_ACK);
    CHECK (!shoal_elector_acting (node, net->now + 1));

    //  Once the promise has ended, the same candidate is acknowledged.
    coordinator.u.coordinator.round = 2;
    uint64_t later = net->now + config.lease_ms + 1;
    shoal_elector_tick (node, later);
    CHECK_EQ (shoal_elector_receive (node, later, &net->nodes[1].id, &coordinator), 0);
    count = shoal_elector_outbox (node, &sends);
    CHECK_EQ (count, 1);
    CHECK_EQ (sends[0].msg.type, SHOAL_MSG_COORDINATOR_ACK);
    CHECK_EQ (sends[0].msg.u.coordinator_ack.term, 7);
    s_net_destroy (&net);
}

//  Clusters that formed apart, each with a leader acting on a voter set of
//  its own (nodes that each led a cluster of one, or the sides of a
//  partition that started apart), meet: the lower ranks give way, and one
//  leader leads all at a term not far above where they met. Both sticky,
//  two such leaders once took terms above each other's without end, as
//  fast as the network carried their COORDINATORs, and were never settled.
static void
clusters_that_formed_apart_meet_and_settle (void)
{
    //  Three clusters of one; a cluster of three and one of two.
    int groups[2][5] = { { 0, 1, 2 }, { 0, 0, 0, 1, 1 } };
    int counts[2] = { 3, 5 };
    for (int shape = 0; shape < 2; shape++) {
        shoal_elector_config_t config = s_config ();
        s_net_t *net = s_net_new (&config, counts[shape]);
        net->split = true;
        for (int i = 0; i < net->count; i++) {
            net->nodes[i].group = groups[shape][i];
            s_start (net, i);
        }
        s_settle (net);
        CHECK_EQ (s_acting_count (net), shape == 0 ? 3 : 2);
        net->split = false;
        net->two_acting = 0;
        uint64_t messages = net->messages;
        s_views (net);
        s_run_until (net, net->now + 4 * config.lease_ms);
        CHECK_EQ (s_leader (net), net->count - 1);
        CHECK_EQ (s_followers (net, net->count - 1), net->count - 1);
        for (int i = 0; i < net->count; i++)
            CHECK (shoal_elector_term (net->nodes[i].core) <= 10);
        //  Settled, a round and its acknowledgements every heartbeat.
        CHECK (net->messages - messages < 1000);
        s_net_destroy (&net);
    }
}

//  Runs the network to until, checking every node's invariants
//  (shoal_elector_check) after every millisecond: returns how many broke.
static int
s_run_checked (s_net_t *net, uint64_t until)
{
    int broken = 0;
    while (net->now < until) {
        s_run_until (net, net->now + 1);
        for (int i = 0; i < net->count; i++) {
            const char *why = "";
            if (net->nodes[i].core && shoal_elector_check (net->nodes[i].core, &why) != 0) {
                if (!broken)
                    fprintf (stderr, "node %d at %llu ms: %s\n", i, (unsigned long long) net->now,
                             why);
                broken++;
            }
        }
    }
    return broken;
}

//  Every node keeps its invariants through a first election, a crashed
//  leader, a split and its heal, and a restart.
static void
the_invariants_hold_through_crashes_and_splits (void)
{
    shoal_elector_config_t config = s_config ();
    s_net_t *net = s_started (&config, 5);
    CHECK_EQ (s_run_checked (net, net->now + config.settle_ms + 2 * config.lease_ms), 0);
    int leader = s_leader (net);
    CHECK (leader >= 0);
    if (leader >= 0)
        s_stop (net, leader);
    CHECK_EQ (s_run_checked (net, net->now + 4 * config.lease_ms), 0);
    net->split = true;
    for (int i = 0; i < 5; i++)
        net->nodes[i].group = i >= 2;
    s_views (net);
    CHECK_EQ (s_run_checked (net, net->now + 6 * config.lease_ms), 0);
    net->split = false;
    s_views (net);
    if (leader >= 0)
        s_start (net, leader);
    CHECK_EQ (s_run_checked (net, net->now + 6 * config.lease_ms), 0);
    CHECK (s_leader (net) >= 0);
    CHECK_EQ (net->two_acting, 0);
    s_net_destroy (&net);
}

int
main (void)
{
    RUN (configs_are_checked);
    RUN (the_highest_rank_leads_after_settle);
    RUN (the_invariants_hold_through_crashes_and_splits);
    RUN (a_crashed_leader_is_replaced_with_few_messages);
    RUN (two_candidates_of_one_term_settle_at_once);
    RUN (a_higher_rank_that_comes_back_does_not_depose);
    RUN (a_leader_with_its_majority_outlasts_a_higher_term);
    RUN (a_minority_leader_steps_down_and_the_majority_elects);
    RUN (a_bridge_does_not_run_the_term_up);
    RUN (available_mode_leads_on_both_sides_and_the_higher_term_wins);
    RUN (voters_that_stay_down_leave_the_set_one_at_a_time);
    RUN (a_voter_that_leaves_is_dropped_at_once);
    RUN (a_leader_that_leaves_hands_its_vote_over);
    RUN (voters_that_leave_together_leave_their_leader_a_majority);
    RUN (a_leader_left_alone_while_leaving_is_done);
    RUN (a_node_that_left_takes_no_part_in_elections);
    RUN (a_member_that_does_not_answer_is_not_made_a_voter);
    RUN (the_voter_set_holds_the_highest_ranks_up_to_voters_max);
    RUN (a_suspect_member_is_not_made_a_voter);
    RUN (a_suspect_is_not_asked);
    RUN (non_voters_wait_for_the_voters_to_elect);
    RUN (a_leader_from_outside_the_voter_set_joins_it);
    RUN (a_leader_reached_only_over_the_followers_connections_is_found_again);
    RUN (the_first_leader_waits_for_expect_members);
    RUN (a_restarted_node_keeps_its_term_and_voters);
    RUN (stale_and_strange_messages_are_refused);
    RUN (a_new_term_is_acted_with_once_a_majority_has_it);
    RUN (a_promise_binds_a_follower_that_proclaims);
    RUN (clusters_that_formed_apart_meet_and_settle);
    return TEST_DONE ();
}

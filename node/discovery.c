/*  node/discovery.c: how a node finds the others: sealed beacons, sent
    and heard, and seeds, resolved and joined in rounds until the node is
    no longer alone.
*/

#include "node/node.h"

#include "node/resolver.h"
#include "node/why.h"

#include <stdio.h>
#include <string.h>

//  A beacon is sealed afresh this often (a listener takes each sealed
//  beacon once), in beacon intervals.
#define S_BEACON_RESEAL 10

//  ---------------------------------------------------------------------
//  Discovery

//  The beacon, sealed afresh: when it changed, and every few intervals.
void
shoal_discovery_publish (shoal_actor_t *self, uint64_t now)
{
    if (!self->beacons)
        return;
    uint64_t incarnation = shoal_membership_incarnation (shoal_peer_membership (self->peer));
    if (now < self->beacon_at && incarnation == self->beacon_incarnation &&
        self->leaving == self->beacon_leaving)
        return;
    shoal_msg_t msg = { .type = SHOAL_MSG_BEACON };
    msg.u.beacon = (shoal_beacon_t){ .cluster = self->cluster,
                                     .node = self->id,
                                     .incarnation = incarnation,
                                     .port = shoal_transport_port (self->transport),
                                     .flags = self->leaving ? SHOAL_BEACON_LEAVING : 0 };
    shoal_transport_beacons_publish (self->transport, &msg, self->beacon_interval_ms);
    self->beacon_incarnation = incarnation;
    self->beacon_leaving = self->leaving;
    self->beacon_at = now + (uint64_t) S_BEACON_RESEAL * self->beacon_interval_ms;
}

//  Seeds a join round names in its warnings, at most; the rest are counted.
#define S_JOIN_WARN_SEEDS 8

//  Joins through the addresses a seed resolved to, but this node's own.
//  Returns how many; 0 when every one is this node's (said in why).
static int
s_join_addrs (shoal_actor_t *self, uint64_t now, const shoal_resolver_result_t *result, char *why,
              size_t why_size)
{
    int joined = 0;
    for (int32_t i = 0; i < result->count; i++)
        if (strcmp (result->addrs[i], self->addr) != 0 &&
            shoal_peer_join (self->peer, now, result->addrs[i]) == 0)
            joined++;
    if (!joined)
        shoal_why (why, why_size, "only this node's own address");
    return joined;
}

//  One seed's addresses (or why it has none), joined through; a seed that
//  does not resolve, or (after the first round) does not answer, is
//  warned of.
static void
s_join_result (shoal_actor_t *self, uint64_t now, const shoal_resolver_result_t *result)
{
    const shoal_option_hostport_t *seeds = self->options->join.items;
    const shoal_option_hostport_t *seed = &seeds[result->seed];
    char why[160];
    int joined = result->count < 0 ? -1 : s_join_addrs (self, now, result, why, sizeof why);
    self->join_round.tried += joined > 0;
    bool bad = joined < 0 || (joined > 0 && self->join_round.warn);
    if (!bad)
        return;
    if (self->join_round.warned == S_JOIN_WARN_SEEDS) {
        self->join_round.unwarned++;
        return;
    }
    self->join_round.warned++;
    bool ipv6 = strchr (seed->host, ':') != NULL;
    char port[8] = "";
    if (seed->port)
        snprintf (port, sizeof port, ":%u", seed->port);
    shoal_actor_notice (self, "join: seed %s%s%s%s: %s; trying again every %u s", ipv6 ? "[" : "",
                        seed->host, ipv6 ? "]" : "", port,
                        joined < 0 ? result->why
                                   : "no answer (down, unreachable, or holding another key)",
                        (self->join_interval_ms + 999) / 1000);
}

//  The round's end: the seeds left unnamed counted; a node whose every
//  seed is itself is the first of its cluster, and may lead.
static void
s_join_done (shoal_actor_t *self, uint64_t now)
{
    if (self->join_round.unwarned)
        shoal_actor_notice (self, "join: %zu more seeds do not answer either",
                            self->join_round.unwarned);
    bool quiet = self->join_round.warned == 0 && self->join_round.unwarned == 0;
    if (self->join_round.tried == 0 && quiet) {
        self->join_self = true;
        shoal_peer_election_release (self->peer, now);
    } else if ((self->join_round.warn || !quiet) && shoal_peer_election_held (self->peer) &&
               !self->join_told_held) {
        self->join_told_held = true;
        shoal_actor_notice (self,
                            "join: no leader until a seed answers (this node does not elect itself "
                            "leader of a cluster of one; --expect 1 lets it)");
    }
}

//  The seeds, looked up again each round (node/resolver.h: in a thread of
//  its own, so a slow resolver never stalls the node): a DNS name may
//  stand for a set of nodes that changes (a headless service, an SRV
//  record). Rounds run only while the node knows no other member: the
//  first at the start, the next the elector's settle time later, when a
//  node alone would have led, then every join interval; a round whose
//  lookups still wait when the next is due goes on, and the next is
//  skipped. A round that finds the node still alone warns, seed by seed,
//  with the reason (a name that does not resolve, or no answer).
void
shoal_discovery_join (shoal_actor_t *self, uint64_t now)
{
    const shoal_options_t *options = self->options;
    if (options->join.count == 0 || now < self->join_at || self->leaving)
        return;
    bool first = self->join_at == 0;
    self->join_at = now + (first ? self->config.elector.settle_ms : self->join_interval_ms);
    if (shoal_membership_live (shoal_peer_membership (self->peer)) > 1) {
        self->join_rounds = 0;
        return;
    }
    if (shoal_resolver_busy (self->resolver))
        return;
    //  Still alone after a round: no seed answered it.
    self->join_round = (shoal_join_round_t){ .warn = self->join_rounds++ > 0 };
    char why[160];
    if (shoal_resolver_start (self->resolver, options->join.items, options->join.count, why,
                              sizeof why) != 0)
        shoal_actor_notice (self, "join: %s", why);
}

void
shoal_discovery_resolved (shoal_actor_t *self, uint64_t now)
{
    shoal_resolver_result_t result;
    while (shoal_resolver_read (self->resolver, &result) == 1) {
        if (self->leaving)
            continue;
        if (result.done)
            s_join_done (self, now);
        else if (result.seed < self->options->join.count)
            s_join_result (self, now, &result);
    }
}

void
shoal_discovery_receive (shoal_actor_t *self, uint64_t now, const shoal_transport_in_t *in)
{
    const shoal_beacon_t *beacon = &in->msg.u.beacon;
    //  Another cluster sharing the key and the port: not ours to meet.
    if (memcmp (&beacon->cluster, &self->cluster, sizeof self->cluster) != 0 ||
        memcmp (beacon->node.bytes, in->envelope.sender.id, SHOAL_ID_SIZE) != 0)
        return;
    shoal_peer_introduce (self->peer, now, &in->envelope.sender, beacon->incarnation, beacon->flags,
                          in->from);
}

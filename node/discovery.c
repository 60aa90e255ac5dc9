/*  node/discovery.c: how a node finds the others: sealed beacons, sent
    and heard, and seeds, resolved and joined in rounds until the node is
    no longer alone.
*/

#include "node/node.h"

#include "node/why.h"

#include <netdb.h>
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

//  Resolves seed into the addresses this node can reach (those of its
//  sockets' family; an IPv6 node reaches both), each "ip:port" or
//  "[ip]:port", joined through unless it is this node's own. Returns the
//  number joined through; -1 with the reason in why when the name does not
//  resolve; 0 when every address is this node's own (or out of its reach,
//  said in why).
static int
s_join_seed (shoal_actor_t *self, uint64_t now, const shoal_option_hostport_t *seed, char *why,
             size_t why_size)
{
    char port[8];
    snprintf (port, sizeof port, "%u", seed->port);
    int family = shoal_transport_family (self->transport);
    struct addrinfo hints = { .ai_socktype = SOCK_DGRAM,
                              .ai_family = family == AF_INET ? AF_INET : AF_UNSPEC };
    struct addrinfo *found = NULL;
    int rc = getaddrinfo (seed->host, port, &hints, &found);
    if (rc != 0) {
        //  An IPv6 address given to an IPv4 node resolves to nothing here.
        if (family == AF_INET && strchr (seed->host, ':'))
            return shoal_why (why, why_size, "an IPv6 address, and this node is bound to IPv4");
        return shoal_why (why, why_size, "cannot resolve: %s", gai_strerror (rc));
    }
    int joined = 0;
    for (struct addrinfo *at = found; at; at = at->ai_next) {
        char host[NI_MAXHOST], addr[SHOAL_ADDR_MAX + 1];
        if (getnameinfo (at->ai_addr, at->ai_addrlen, host, sizeof host, NULL, 0, NI_NUMERICHOST) !=
                0 ||
            strlen (host) + 8 > sizeof addr)
            continue;
        snprintf (addr, sizeof addr, at->ai_family == AF_INET6 ? "[%s]:%u" : "%s:%u", host,
                  seed->port);
        if (strcmp (addr, self->addr) != 0 && shoal_peer_join (self->peer, now, addr) == 0)
            joined++;
    }
    freeaddrinfo (found);
    if (!joined)
        shoal_why (why, why_size, "only this node's own address");
    return joined;
}

//  The seeds, resolved again each round: a DNS name may stand for a set of
//  nodes that changes (a headless service). Resolving may block the actor
//  for as long as the resolver takes; it happens only while the node knows
//  no other member. A round that finds the node still alone warns, seed by
//  seed, with the reason (a name that does not resolve, or no answer), and
//  the rounds go on until a seed answers: the first one the elector's
//  settle time after the start, when a node alone would have led, then
//  every join interval.
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
    //  Still alone after a round: no seed answered it.
    bool warn = self->join_rounds++ > 0;
    size_t tried = 0, warned = 0, unwarned = 0;
    const shoal_option_hostport_t *seeds = options->join.items;
    for (size_t i = 0; i < options->join.count; i++) {
        const shoal_option_hostport_t *seed = &seeds[i];
        char why[160];
        int joined = s_join_seed (self, now, seed, why, sizeof why);
        tried += joined > 0;
        bool bad = joined < 0 || (joined > 0 && warn);
        if (bad && warned == S_JOIN_WARN_SEEDS)
            unwarned++;
        else if (bad) {
            warned++;
            shoal_actor_notice (
                self, "join: seed %s%s%s:%u: %s; trying again every %u s",
                strchr (seed->host, ':') ? "[" : "", seed->host,
                strchr (seed->host, ':') ? "]" : "", seed->port,
                joined < 0 ? why : "no answer (down, unreachable, or holding another key)",
                (self->join_interval_ms + 999) / 1000);
        }
    }
    if (unwarned)
        shoal_actor_notice (self, "join: %zu more seeds do not answer either", unwarned);
    //  Every seed is this node: it is the first of its cluster, and may lead.
    if (tried == 0 && !warned && !unwarned) {
        self->join_self = true;
        shoal_peer_election_release (self->peer, now);
    } else if ((warn || warned) && shoal_peer_election_held (self->peer) && !self->join_told_held) {
        self->join_told_held = true;
        shoal_actor_notice (self,
                            "join: no leader until a seed answers (this node does not elect itself "
                            "leader of a cluster of one; --expect 1 lets it)");
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

/*  node/resolver.h: the seeds' DNS lookups, off the node's thread.

    A seed is a host and port (a name, or an address) or, with port 0, the
    name of a DNS SRV record (_service._proto.name), whose targets give the
    hosts and ports. Looking a name up may take as long as the resolver
    takes (its timeouts and retries: seconds), and the node's thread runs
    the protocol, so a lookup runs in a thread of its own: one round at a
    time, the seeds copied into it. Each seed's result comes back as one
    datagram on a socket pair, which the actor polls: numeric seeds first,
    then the names, in order, then one that ends the round. The thread owns
    nothing of the node's; when the node goes, it closes its end, and a
    thread still waiting on the resolver finds the pair closed and ends.

    The answer to an SRV query comes from the network, and is parsed with
    bounds on every read (shoal_srv_parse, which a fuzz target drives).

    Not thread-safe: the actor owns a resolver.
*/
#ifndef SHOAL_RESOLVER_H
#define SHOAL_RESOLVER_H

#include "node/options.h"
#include "wire/wire.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

//  Addresses one seed resolves to, at most (those of an SRV record's
//  targets together).
#define SHOAL_RESOLVER_ADDRS 32

//  One seed's result: its index in the round's seeds; count addresses
//  ("ip:port", "[ip]:port", numeric), or -1 with the reason in why. A
//  result with done set ends the round and carries no seed.
typedef struct {
    uint32_t seed;
    int32_t count;
    bool done;
    char why[120];
    char addrs[SHOAL_RESOLVER_ADDRS][SHOAL_ADDR_MAX + 1];
} shoal_resolver_result_t;

typedef struct _shoal_resolver_t shoal_resolver_t;

//  A resolver for a node whose sockets are of family (AF_INET: IPv4
//  addresses only; AF_INET6: both). NULL with the reason when the socket
//  pair cannot be made.
shoal_resolver_t *shoal_resolver_new (int family, char *why, size_t why_size);
void shoal_resolver_destroy (shoal_resolver_t **self_p);

//  The descriptor to poll for results (readable when one is waiting).
int shoal_resolver_fd (const shoal_resolver_t *self);

//  True while a round runs (started, and its done not read yet).
bool shoal_resolver_busy (const shoal_resolver_t *self);

//  Starts a round over count seeds. Returns 0, or -1 with the reason (a
//  round runs already, or no thread could be made).
int shoal_resolver_start (shoal_resolver_t *self, const shoal_option_hostport_t *seeds,
                          size_t count, char *why, size_t why_size);

//  Reads one waiting result into out: 1, or 0 when none waits.
int shoal_resolver_read (shoal_resolver_t *self, shoal_resolver_result_t *out);

//  One target of an SRV record.
typedef struct {
    uint16_t priority;
    uint16_t weight;
    uint16_t port;
    char target[256];
} shoal_srv_target_t;

//  Parses a DNS answer (size bytes, as res_nquery gives it) to a query of
//  type SRV: the targets of its SRV records, at most max, into out. Returns
//  how many, or -1 with the reason when the message is malformed. Never
//  reads outside answer.
int shoal_srv_parse (const uint8_t *answer, size_t size, shoal_srv_target_t *out, size_t max,
                     char *why, size_t why_size);

#endif

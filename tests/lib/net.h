/*  tests/lib/net.h: the network the multi-node tests share.

    The tests of the membership, election, jobs and peer layers run a few
    real cores side by side. Between them, every message goes through the
    real codec (gossip/wire.h): encoded when sent, held until its time of
    delivery, decoded on its carrier when delivered. Packets come out in
    order of delivery time, and in the order they were sent among equal
    times, so a test replays exactly.

    What differs from test to test stays in the test: how its cores are
    driven, its latency, what it loses (cuts, partitions, seeded loss,
    crashes), and the envelope its shell builds. The network holds no
    clock: a test says when each packet arrives and what is due now.
*/
#ifndef SHOAL_TEST_NET_H
#define SHOAL_TEST_NET_H

#include "wire/arena.h"
#include "wire/envelope.h"
#include "wire/wire.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t at;               //  when it is delivered
    uint64_t order;            //  the network's count of packets before it
    int from, to;              //  the test's indexes of sender and receiver
    shoal_purpose_t carrier;   //  what it is decoded as
    shoal_envelope_t envelope; //  the test's own, for a shell that wants one
    size_t size;
    uint8_t *bytes; //  the network's while queued; the caller's once popped
} test_packet_t;

typedef struct {
    test_packet_t *heap; //  a binary heap by (at, order)
    size_t queued, capacity;
    uint64_t sent;       //  packets ever queued
    uint8_t *buffer;     //  of SHOAL_FRAME_MAX bytes: the last encoded message
    shoal_arena_t arena; //  of the last decoded message
    shoal_msg_t msg;
} test_net_t;

//  An empty network. Returns 0, or -1 when memory is short.
int test_net_init (test_net_t *net);

//  Frees the network and every packet still queued. Idempotent.
void test_net_release (test_net_t *net);

//  Encodes msg into net->buffer. Returns its size, or -1 (saying why on
//  standard error) when the codec refuses it.
long test_net_encode (test_net_t *net, const shoal_msg_t *msg);

//  Queues a copy of packet with a copy of its size bytes at bytes (the
//  packet's own bytes pointer is ignored), numbered after every packet
//  queued before it. Returns 0, or -1 when memory is short.
int test_net_push (test_net_t *net, const test_packet_t *packet, const uint8_t *bytes);

//  Encodes msg and queues it as packet on msg's own carrier. Returns the
//  encoded size, or -1 when the codec refuses it or memory is short.
long test_net_send (test_net_t *net, const test_packet_t *packet, const shoal_msg_t *msg);

//  The next packet to deliver, or NULL when none is queued. It stays
//  queued.
const test_packet_t *test_net_first (const test_net_t *net);

//  When the next packet is due; UINT64_MAX when none is queued.
uint64_t test_net_next (const test_net_t *net);

//  Takes the next packet due by now into packet. False when there is none;
//  free its bytes with test_packet_free.
bool test_net_pop (test_net_t *net, uint64_t now, test_packet_t *packet);

//  Decodes packet on its carrier, as a shell would. The message is valid
//  until the next decode; NULL (saying why on standard error) when the
//  codec refuses it.
const shoal_msg_t *test_net_decode (test_net_t *net, const test_packet_t *packet);

void test_packet_free (test_packet_t *packet);

#endif

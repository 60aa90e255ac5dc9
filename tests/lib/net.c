/*  tests/lib/net.c: the network the multi-node tests share (net.h).
 */
#include "tests/lib/net.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
test_net_init (test_net_t *net)
{
    memset (net, 0, sizeof *net);
    net->buffer = malloc (SHOAL_FRAME_MAX);
    if (!net->buffer || shoal_arena_init (&net->arena, SHOAL_DECODE_ARENA (SHOAL_FRAME_MAX)) != 0) {
        test_net_release (net);
        return -1;
    }
    return 0;
}

void
test_net_release (test_net_t *net)
{
    for (size_t i = 0; i < net->queued; i++)
        free (net->heap[i].bytes);
    free (net->heap);
    free (net->buffer);
    shoal_arena_release (&net->arena);
    memset (net, 0, sizeof *net);
}

long
test_net_encode (test_net_t *net, const shoal_msg_t *msg)
{
    shoal_wire_error_t err;
    long size = shoal_msg_encode (msg, net->buffer, SHOAL_FRAME_MAX, &err);
    if (size <= 0) {
        fprintf (stderr, "  encode %s: %s\n", shoal_msg_type_name (msg->type), err.text);
        return -1;
    }
    return size;
}

//  True when a is delivered before b.
static bool
s_before (const test_packet_t *a, const test_packet_t *b)
{
    return a->at < b->at || (a->at == b->at && a->order < b->order);
}

int
test_net_push (test_net_t *net, const test_packet_t *packet, const uint8_t *bytes)
{
    if (net->queued == net->capacity) {
        size_t capacity = net->capacity ? 2 * net->capacity : 256;
        test_packet_t *heap = realloc (net->heap, capacity * sizeof *heap);
        if (!heap)
            return -1;
        net->heap = heap;
        net->capacity = capacity;
    }
    test_packet_t copy = *packet;
    copy.order = net->sent;
    copy.bytes = malloc (copy.size ? copy.size : 1);
    if (!copy.bytes)
        return -1;
    memcpy (copy.bytes, bytes, copy.size);
    net->sent++;
    size_t i = net->queued++;
    while (i > 0 && s_before (&copy, &net->heap[(i - 1) / 2])) {
        net->heap[i] = net->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    net->heap[i] = copy;
    return 0;
}

long
test_net_send (test_net_t *net, const test_packet_t *packet, const shoal_msg_t *msg)
{
    long size = test_net_encode (net, msg);
    if (size < 0)
        return -1;
    test_packet_t sent = *packet;
    sent.carrier = shoal_msg_purpose (msg->type);
    sent.size = (size_t) size;
    return test_net_push (net, &sent, net->buffer) == 0 ? size : -1;
}

const test_packet_t *
test_net_first (const test_net_t *net)
{
    return net->queued ? &net->heap[0] : NULL;
}

uint64_t
test_net_next (const test_net_t *net)
{
    return net->queued ? net->heap[0].at : UINT64_MAX;
}

bool
test_net_pop (test_net_t *net, uint64_t now, test_packet_t *packet)
{
    if (!net->queued || net->heap[0].at > now)
        return false;
    *packet = net->heap[0];
    test_packet_t last = net->heap[--net->queued];
    size_t i = 0;
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= net->queued)
            break;
        if (child + 1 < net->queued && s_before (&net->heap[child + 1], &net->heap[child]))
            child++;
        if (!s_before (&net->heap[child], &last))
            break;
        net->heap[i] = net->heap[child];
        i = child;
    }
    net->heap[i] = last;
    return true;
}

const shoal_msg_t *
test_net_decode (test_net_t *net, const test_packet_t *packet)
{
    shoal_wire_error_t err;
    shoal_arena_reset (&net->arena);
    if (shoal_msg_decode (packet->bytes, packet->size, packet->carrier, &net->msg, &net->arena,
                          &err) != 0) {
        fprintf (stderr, "  decode: %s\n", err.text);
        return NULL;
    }
    return &net->msg;
}

void
test_packet_free (test_packet_t *packet)
{
    free (packet->bytes);
    packet->bytes = NULL;
}

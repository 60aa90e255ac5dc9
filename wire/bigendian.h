/*  wire/bigendian.h: big-endian integers in byte buffers, the network's
    order, as the envelope header and msgpack both use. Width is in bytes,
    1 to 8; the caller has checked that the bytes are there.
*/
#ifndef SHOAL_BIGENDIAN_H
#define SHOAL_BIGENDIAN_H

#include <stdint.h>

static inline uint64_t
shoal__get_be (const uint8_t *at, int width)
{
    uint64_t value = 0;
    for (int i = 0; i < width; i++)
        value = (value << 8) | at[i];
    return value;
}

static inline void
shoal__put_be (uint8_t *at, uint64_t value, int width)
{
    for (int i = width - 1; i >= 0; i--, value >>= 8)
        at[i] = (uint8_t) value;
}

#endif

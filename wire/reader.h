/*  wire/reader.h: a bounded pull reader for msgpack.

    The reader walks the bytes of one message and hands out one value at a
    time. It never allocates and never recurses, and it checks every container
    count against the bytes that remain before the caller can act on it, so no
    header can make anyone reserve memory the message does not hold. The wire
    decoder (wire.c) drives it with a fixed schema.

    Why not msgpack_unpack: msgpack-c reserves count * sizeof (msgpack_object)
    for an array as soon as it reads the header, so five bytes (0xdd ff ff ff
    ff) ask for about 96 GB. See docs/wire.md.
*/
#ifndef SHOAL_READER_H
#define SHOAL_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    const uint8_t *pos;
    const uint8_t *end;
    const char *why; //  Why the last call failed, for the error text.
} shoal_reader_t;

void shoal_reader_init (shoal_reader_t *self, const uint8_t *data, size_t size);

//  Bytes not read yet.
size_t shoal_reader_left (const shoal_reader_t *self);

//  Each reads one value of its type, returning 0, or -1 with self->why set
//  when the next value is missing, truncated or of another type. On failure
//  the position is unspecified; the caller gives up on the message.

//  An array header; every element takes at least one byte, so a count larger
//  than the bytes left is refused here.
int shoal_reader_array (shoal_reader_t *self, uint32_t *count);

//  A map header; count is the number of key/value pairs.
int shoal_reader_map (shoal_reader_t *self, uint32_t *count);

//  A non-negative integer in any msgpack integer encoding.
int shoal_reader_uint (shoal_reader_t *self, uint64_t *value);

int shoal_reader_bool (shoal_reader_t *self, bool *value);

//  Consumes a nil and returns 1; returns 0 without consuming anything else.
int shoal_reader_nil (shoal_reader_t *self);

//  A string or a binary; data points into the message, not copied.
int shoal_reader_str (shoal_reader_t *self, const uint8_t **data, uint32_t *size);
int shoal_reader_bin (shoal_reader_t *self, const uint8_t **data, uint32_t *size);

#endif

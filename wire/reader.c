/*  wire/reader.c: a bounded pull reader for msgpack.

    Format reference: the msgpack specification. Only the families shoal's
    schema uses are read (nil, bool, integers, str, bin, array, map); floats
    and extensions are always "wrong type".
*/

#include "wire/reader.h"

#include "wire/bigendian.h"

void
shoal_reader_init (shoal_reader_t *self, const uint8_t *data, size_t size)
{
    //  NULL + 0 is undefined in C; an empty message may come as NULL.
    self->pos = data;
    self->end = size ? data + size : data;
    self->why = NULL;
}

size_t
shoal_reader_left (const shoal_reader_t *self)
{
    return (size_t) (self->end - self->pos);
}

static int
s_fail (shoal_reader_t *self, const char *why)
{
    self->why = why;
    return -1;
}

//  Reads a big-endian unsigned integer of width bytes.
static int
s_take_be (shoal_reader_t *self, unsigned width, uint64_t *value)
{
    if (shoal_reader_left (self) < width)
        return s_fail (self, "truncated");
    *value = shoal__get_be (self->pos, (int) width);
    self->pos += width;
    return 0;
}

//  Reads a header byte. Returns -1 on end of input.
static int
s_tag (shoal_reader_t *self, uint8_t *tag)
{
    if (self->pos == self->end)
        return s_fail (self, "truncated");
    *tag = *self->pos++;
    return 0;
}

static int
s_container (shoal_reader_t *self, uint32_t *count, uint8_t fix_base, uint8_t tag16, uint8_t tag32,
             unsigned bytes_per_item)
{
    uint8_t tag;
    uint64_t n;
    if (s_tag (self, &tag))
        return -1;
    if ((tag & 0xf0) == fix_base)
        n = tag & 0x0f;
    else if (tag == tag16) {
        if (s_take_be (self, 2, &n))
            return -1;
    } else if (tag == tag32) {
        if (s_take_be (self, 4, &n))
            return -1;
    } else {
        self->pos--;
        return s_fail (self, "wrong type");
    }
    if (n > shoal_reader_left (self) / bytes_per_item)
        return s_fail (self, "count exceeds the bytes left");
    *count = (uint32_t) n;
    return 0;
}

int
shoal_reader_array (shoal_reader_t *self, uint32_t *count)
{
    return s_container (self, count, 0x90, 0xdc, 0xdd, 1);
}

int
shoal_reader_map (shoal_reader_t *self, uint32_t *count)
{
    return s_container (self, count, 0x80, 0xde, 0xdf, 2);
}

int
shoal_reader_uint (shoal_reader_t *self, uint64_t *value)
{
    uint8_t tag;
    if (s_tag (self, &tag))
        return -1;
    if (tag <= 0x7f) {
        *value = tag;
        return 0;
    }
    //  0xcc..0xcf are uint 8/16/32/64, 0xd0..0xd3 int 8/16/32/64; a signed
    //  encoding is accepted when its value is not negative.
    if (tag >= 0xcc && tag <= 0xd3) {
        unsigned width = 1u << ((tag - 0xcc) & 3);
        if (s_take_be (self, width, value))
            return -1;
        if (tag >= 0xd0 && (*value >> (width * 8 - 1)) & 1)
            return s_fail (self, "negative integer");
        return 0;
    }
    self->pos--;
    return s_fail (self, (tag >= 0xe0) ? "negative integer" : "wrong type");
}

int
shoal_reader_bool (shoal_reader_t *self, bool *value)
{
    uint8_t tag;
    if (s_tag (self, &tag))
        return -1;
    if (tag == 0xc2 || tag == 0xc3) {
        *value = tag == 0xc3;
        return 0;
    }
    self->pos--;
    return s_fail (self, "wrong type");
}

int
shoal_reader_nil (shoal_reader_t *self)
{
    if (self->pos < self->end && *self->pos == 0xc0) {
        self->pos++;
        return 1;
    }
    return 0;
}

static int
s_blob (shoal_reader_t *self, const uint8_t **data, uint32_t *size, bool is_str)
{
    uint8_t tag;
    uint64_t n;
    if (s_tag (self, &tag))
        return -1;
    if (is_str && (tag & 0xe0) == 0xa0)
        n = tag & 0x1f;
    else if (tag == (is_str ? 0xd9 : 0xc4) || tag == (is_str ? 0xda : 0xc5) ||
             tag == (is_str ? 0xdb : 0xc6)) {
        unsigned width = 1u << (tag - (is_str ? 0xd9 : 0xc4));
        if (s_take_be (self, width, &n))
            return -1;
    } else {
        self->pos--;
        return s_fail (self, "wrong type");
    }
    if (n > shoal_reader_left (self))
        return s_fail (self, "truncated");
    *data = self->pos;
    *size = (uint32_t) n;
    self->pos += n;
    return 0;
}

int
shoal_reader_str (shoal_reader_t *self, const uint8_t **data, uint32_t *size)
{
    return s_blob (self, data, size, true);
}

int
shoal_reader_bin (shoal_reader_t *self, const uint8_t **data, uint32_t *size)
{
    return s_blob (self, data, size, false);
}

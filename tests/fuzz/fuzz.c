/*  tests/fuzz/fuzz.c: the checks and fixtures the fuzz targets share. */

#include "tests/fuzz/fuzz.h"

#include "wire/wire.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
fuzz_fail (const char *file, int line, const char *cond, const char *format, ...)
{
    fprintf (stderr, "%s:%d: FUZZ_REQUIRE failed: %s\n  ", file, line, cond);
    va_list args;
    va_start (args, format);
    vfprintf (stderr, format, args);
    va_end (args);
    fprintf (stderr, "\n");
    abort ();
}

//  ---------------------------------------------------------------------
//  The receive path of the codec

//  Filled with a byte that is never a terminator, so that a decoder that
//  forgets to write or to terminate its error text is caught.
static void
s_error_fill (shoal_wire_error_t *err)
{
    memset (err->text, 'X', sizeof err->text);
}

//  Decodes into a fresh arena of exactly arena_size bytes: its own
//  allocation, so AddressSanitizer sees any write past its end. The caller
//  releases the arena, which holds the decoded message.
static int
s_decode (const uint8_t *data, size_t size, shoal_purpose_t carrier, size_t arena_size,
          shoal_arena_t *arena, shoal_msg_t *msg, shoal_wire_error_t *err)
{
    FUZZ_REQUIRE (shoal_arena_init (arena, arena_size) == 0, "no memory for an arena of %zu bytes",
                  arena_size);
    s_error_fill (err);
    int rc = shoal_msg_decode (data, size, carrier, msg, arena, err);
    FUZZ_REQUIRE (rc == 0 || rc == -1, "decode returned %d", rc);
    FUZZ_REQUIRE (arena->used <= arena->size, "arena used %zu of %zu bytes", arena->used,
                  arena->size);
    if (rc)
        FUZZ_REQUIRE (memchr (err->text, '\0', sizeof err->text) && err->text[0] != '\0',
                      "a refusal without a terminated error text (%d bytes, first 0x%02x)",
                      (int) sizeof err->text, (unsigned char) err->text[0]);
    else
        FUZZ_REQUIRE (shoal_msg_purpose (msg->type) == carrier, "a %s accepted on the %s carrier",
                      shoal_msg_type_name (msg->type), shoal_purpose_name (carrier));
    return rc;
}

//  Encodes msg into a buffer of exactly the size the encoder measured,
//  which the caller frees. An accepted message must always encode.
static uint8_t *
s_encode (const shoal_msg_t *msg, size_t *size)
{
    shoal_wire_error_t err;
    s_error_fill (&err);
    long measured = shoal_msg_encode (msg, NULL, 0, &err);
    FUZZ_REQUIRE (measured > 0, "a decoded %s does not encode: %.*s",
                  shoal_msg_type_name (msg->type), (int) sizeof err.text, err.text);
    uint8_t *out = malloc ((size_t) measured);
    FUZZ_REQUIRE (out, "no memory for %ld bytes", measured);
    long written = shoal_msg_encode (msg, out, (size_t) measured, &err);
    FUZZ_REQUIRE (written == measured, "measured %ld bytes, wrote %ld: %.*s", measured, written,
                  (int) sizeof err.text, err.text);
    *size = (size_t) measured;
    return out;
}

//  What a node accepts survives a round trip: its encoding is a message
//  every node accepts on the same carrier, and that message encodes to the
//  very same bytes. The input itself may use wider encodings than the
//  encoder picks, so the comparison is between the first and the second
//  encoding.
static void
s_check_round_trip (const shoal_msg_t *msg, shoal_purpose_t carrier)
{
    size_t first_size, second_size;
    uint8_t *first = s_encode (msg, &first_size);

    shoal_arena_t arena;
    shoal_msg_t again;
    shoal_wire_error_t err;
    int rc = s_decode (first, first_size, carrier, SHOAL_DECODE_ARENA (first_size), &arena, &again,
                       &err);
    FUZZ_REQUIRE (rc == 0, "the encoding of a decoded %s is refused: %s",
                  shoal_msg_type_name (msg->type), err.text);
    FUZZ_REQUIRE (again.type == msg->type, "type 0x%02x came back as 0x%02x", msg->type,
                  again.type);
    uint8_t *second = s_encode (&again, &second_size);
    FUZZ_REQUIRE (second_size == first_size && memcmp (first, second, first_size) == 0,
                  "a %s re-encodes to other bytes (%zu, then %zu bytes)",
                  shoal_msg_type_name (msg->type), first_size, second_size);

    free (second);
    shoal_arena_release (&arena);
    free (first);
}

//  SHOAL_DECODE_ARENA promises an arena that always holds the decoded form.
//  A refusal that mentions the arena is decoded again with far more room:
//  only the arena differs between the two runs, so if the second run
//  accepts the message or fails elsewhere, the first failed for the arena
//  alone and the bound is too small. (A label key may itself read "arena";
//  then both runs fail with the same text.)
static void
s_check_arena_bound (const uint8_t *data, size_t size, shoal_purpose_t carrier,
                     const shoal_wire_error_t *err)
{
    if (!strstr (err->text, "arena"))
        return;
    size_t bound = SHOAL_DECODE_ARENA (size);
    shoal_arena_t roomy;
    shoal_msg_t msg;
    shoal_wire_error_t roomy_err;
    int rc = s_decode (data, size, carrier, 4 * bound, &roomy, &msg, &roomy_err);
    FUZZ_REQUIRE (rc == -1 && strcmp (roomy_err.text, err->text) == 0,
                  "SHOAL_DECODE_ARENA (%zu) = %zu bytes is not enough: \"%s\"; with %zu bytes "
                  "the decode %s%s and uses %zu bytes",
                  size, bound, err->text, 4 * bound,
                  rc == 0 ? "succeeds" : "fails: ", rc == 0 ? "" : roomy_err.text, roomy.used);
    shoal_arena_release (&roomy);
}

int
fuzz_decode_checked (const uint8_t *data, size_t size, shoal_purpose_t carrier)
{
    shoal_arena_t arena;
    shoal_msg_t msg;
    shoal_wire_error_t err;
    int rc = s_decode (data, size, carrier, SHOAL_DECODE_ARENA (size), &arena, &msg, &err);
    if (rc == 0)
        s_check_round_trip (&msg, carrier);
    else
        s_check_arena_bound (data, size, carrier, &err);
    shoal_arena_release (&arena);
    return rc;
}

//  ---------------------------------------------------------------------
//  Fixtures of fuzz_open

const uint8_t fuzz_key[SHOAL_KEY_SIZE] = {
    0x73, 0x68, 0x6f, 0x61, 0x6c, 0x2d, 0x66, 0x75, 0x7a, 0x7a, 0x2d, 0x6b, 0x65, 0x79, 0x2d, 0x30,
    0x9d, 0x41, 0xe2, 0x07, 0x5c, 0xb8, 0x13, 0x6a, 0xf0, 0x28, 0x94, 0x3e, 0xc7, 0x51, 0x0b, 0xad,
};

const shoal_life_t fuzz_self = {
    .id = { 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22,
            0x22, 0x22 },
    .life = 7,
};

//  Bit 7 says keyed, bit 6 short of room; the low six bits, taken modulo
//  the number of purposes, say which carrier.
#define SELECTOR_KEYED      0x80
#define SELECTOR_SHORT_ROOM 0x40
#define SELECTOR_PURPOSE    0x3f

uint8_t
fuzz_open_selector (const fuzz_open_mode_t *mode)
{
    return (uint8_t) ((mode->purpose - 1) | (mode->keyed ? SELECTOR_KEYED : 0) |
                      (mode->short_room ? SELECTOR_SHORT_ROOM : 0));
}

void
fuzz_open_select (uint8_t selector, fuzz_open_mode_t *mode)
{
    mode->purpose = (shoal_purpose_t) (1 + (selector & SELECTOR_PURPOSE) % SHOAL_PURPOSE_COUNT);
    mode->keyed = (selector & SELECTOR_KEYED) != 0;
    mode->short_room = (selector & SELECTOR_SHORT_ROOM) != 0;
}

uint64_t
fuzz_step_time (uint64_t now, uint8_t header, bool to_next, uint64_t next)
{
    const uint64_t jump_max = 3600 * 1000;
    if (!to_next)
        return now + (uint64_t) (header >> 3) * 37;
    if (next > now)
        now = next - now > jump_max ? now + jump_max : next;
    return now + (header >> 3);
}

uint8_t
fuzz_operand (const uint8_t *data, size_t size, size_t *at)
{
    return *at < size ? data[(*at)++] : 0;
}

uint64_t
fuzz_number (uint8_t operand, uint64_t base)
{
    if (operand == FUZZ_NUMBER_MAX)
        return UINT64_MAX;
    if (operand < 0x80)
        return base > UINT64_MAX - operand ? UINT64_MAX : base + operand;
    uint64_t down = 0x100 - (uint64_t) operand;
    return base < down ? 0 : base - down;
}

void
fuzz_require_encodes (const shoal_msg_t *msg)
{
    static uint8_t buffer[SHOAL_FRAME_MAX];
    shoal_wire_error_t err;
    long size = shoal_msg_encode (msg, buffer, sizeof buffer, &err);
    FUZZ_REQUIRE (size > 0, "a %s that does not encode: %s", shoal_msg_type_name (msg->type),
                  err.text);
    FUZZ_REQUIRE ((size_t) size <= shoal_msg_size_max (msg->type), "a %s of %ld bytes",
                  shoal_msg_type_name (msg->type), size);
}

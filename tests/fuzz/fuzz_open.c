/*  tests/fuzz/fuzz_open.c: opening envelopes, then decoding what they carry.

    The first input byte picks the carrier the envelope arrives on, whether
    the receiving node holds a key, and whether the payload buffer is first
    offered one byte short (fuzz_open_select); the rest is the envelope. The
    receiving node is fuzz_self. Each input meets a fresh opener, so that
    the replay window of one input never decides the fate of another.

    An envelope that opens must have the payload size its layout implies,
    a named sender other than this node, a sequence number, and as its
    recipient nobody or exactly this life; a sealed one must not open twice,
    while a plaintext one, which keeps no replay window, opens again to the
    same payload. Its payload then goes on to the decoder on the carrier it
    came by, as on a node's receive path. One byte short of room, an
    envelope that would open must be refused as too large, without a write
    past the buffer and without being counted as seen.
*/

#include "tests/fuzz/fuzz.h"

#include <stdlib.h>
#include <string.h>

//  Senders whose replay windows an opener keeps; one input has one sender.
#define OPENER_SENDERS 4

//  What follows every payload buffer, to be found as it was after opening.
#define CANARY_SIZE 16
#define CANARY_BYTE 0xa5

//  The recipient id of an unaddressed envelope.
static const uint8_t s_nobody[sizeof fuzz_self.id];

static shoal_keyring_t *s_keyed;
static shoal_keyring_t *s_plaintext;

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
    (void) argc;
    (void) argv;
    s_keyed = shoal_keyring_new ();
    s_plaintext = shoal_keyring_new ();
    FUZZ_REQUIRE (s_keyed && s_plaintext, "no keyring");
    FUZZ_REQUIRE (shoal_keyring_install (s_keyed, fuzz_key) == 0, "the key does not install");
    return 0;
}

//  Opens envelope into a payload buffer of exactly capacity bytes, which
//  the caller frees. The buffer is followed, in its own allocation, by a
//  canary the opener must leave as it was; AddressSanitizer catches writes
//  further on.
static uint8_t *
s_open (shoal_opener_t *opener, shoal_purpose_t purpose, const uint8_t *envelope, size_t size,
        size_t capacity, shoal_open_result_t *result, size_t *payload_size,
        shoal_envelope_t *header)
{
    uint8_t *out = malloc (capacity + CANARY_SIZE);
    FUZZ_REQUIRE (out, "no memory");
    memset (out + capacity, CANARY_BYTE, CANARY_SIZE);
    *payload_size = SIZE_MAX;
    *result =
        shoal_opener_open (opener, purpose, envelope, size, out, capacity, payload_size, header);
    FUZZ_REQUIRE ((unsigned) *result < SHOAL_OPEN_RESULT_COUNT, "open returned %d", (int) *result);
    for (size_t i = 0; i < CANARY_SIZE; i++)
        FUZZ_REQUIRE (out[capacity + i] == CANARY_BYTE,
                      "open (%s) wrote past its %zu-byte buffer, at byte %zu after it",
                      shoal_open_result_name (*result), capacity, i);
    if (*result == SHOAL_OPEN_OK)
        FUZZ_REQUIRE (*payload_size <= capacity, "a %zu-byte payload opened into %zu bytes",
                      *payload_size, capacity);
    return out;
}

static bool
s_is_nobody (const shoal_life_t *life)
{
    return memcmp (life->id, s_nobody, sizeof s_nobody) == 0 && life->life == 0;
}

//  What envelope.h promises of every envelope that opens.
static void
s_check_opened (const fuzz_open_mode_t *mode, size_t envelope_size, size_t payload_size,
                const shoal_envelope_t *header)
{
    size_t layout = mode->keyed ? SHOAL_ENVELOPE_OVERHEAD : SHOAL_ENVELOPE_HEADER;
    FUZZ_REQUIRE (payload_size == envelope_size - layout,
                  "a %zu-byte %s envelope opened to %zu bytes of payload", envelope_size,
                  mode->keyed ? "sealed" : "plaintext", payload_size);
    FUZZ_REQUIRE (header->purpose == mode->purpose, "purpose %d opened on carrier %d",
                  header->purpose, mode->purpose);
    FUZZ_REQUIRE (header->mode == (mode->keyed ? SHOAL_ENVELOPE_SEALED : SHOAL_ENVELOPE_PLAINTEXT),
                  "mode %d opened by a %s node", header->mode, mode->keyed ? "keyed" : "plaintext");
    FUZZ_REQUIRE (header->key_id == (mode->keyed ? shoal_keyring_primary (s_keyed) : 0),
                  "key id 0x%08x opened", header->key_id);
    FUZZ_REQUIRE (memcmp (header->sender.id, s_nobody, sizeof s_nobody) != 0 &&
                      header->sender.life >= 1,
                  "an envelope from an unnamed sender (life %llu) opened",
                  (unsigned long long) header->sender.life);
    FUZZ_REQUIRE (memcmp (header->sender.id, fuzz_self.id, sizeof fuzz_self.id) != 0,
                  "an envelope from this node's own id opened");
    FUZZ_REQUIRE (header->seq != 0, "an envelope with sequence number 0 opened");

    //  A recipient is nobody or one whole life; there is no "any life".
    bool to_self = memcmp (header->recipient.id, fuzz_self.id, sizeof fuzz_self.id) == 0;
    FUZZ_REQUIRE (s_is_nobody (&header->recipient) ||
                      (to_self && header->recipient.life == fuzz_self.life),
                  "an envelope addressed to life %llu of %s opened",
                  (unsigned long long) header->recipient.life,
                  memcmp (header->recipient.id, s_nobody, sizeof s_nobody) == 0 ? "nobody"
                  : to_self                                                     ? "this node"
                                                                                : "another node");
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    fuzz_open_mode_t mode;
    fuzz_open_select (data[0], &mode);
    const uint8_t *envelope = data + 1;
    size_t envelope_size = size - 1;
    size_t layout = mode.keyed ? SHOAL_ENVELOPE_OVERHEAD : SHOAL_ENVELOPE_HEADER;

    //  The room envelope.h asks for.
    size_t capacity =
        envelope_size > SHOAL_ENVELOPE_HEADER ? envelope_size - SHOAL_ENVELOPE_HEADER : 0;
    shoal_opener_t *opener =
        shoal_opener_new (mode.keyed ? s_keyed : s_plaintext, &fuzz_self, OPENER_SENDERS);
    FUZZ_REQUIRE (opener, "no memory");

    //  First one byte short of the payload the layout implies, which must
    //  not open, when there is a byte to take away.
    bool short_room = mode.short_room && envelope_size > layout;
    shoal_open_result_t short_result = SHOAL_OPEN_RESULT_COUNT;
    if (short_room) {
        size_t short_size;
        free (s_open (opener, mode.purpose, envelope, envelope_size, envelope_size - layout - 1,
                      &short_result, &short_size, NULL));
        FUZZ_REQUIRE (short_result != SHOAL_OPEN_OK,
                      "a %zu-byte envelope opened into %zu bytes of room", envelope_size,
                      envelope_size - layout - 1);
    }

    size_t payload_size;
    shoal_envelope_t header;
    shoal_open_result_t result;
    uint8_t *payload = s_open (opener, mode.purpose, envelope, envelope_size, capacity, &result,
                               &payload_size, &header);
    //  A refusal for want of room must say so, and must not use up the
    //  sequence number: the same opener, given room, must not call the
    //  envelope replayed.
    if (short_room) {
        FUZZ_REQUIRE (result != SHOAL_OPEN_OK || short_result == SHOAL_OPEN_SIZE,
                      "an envelope that opens was refused as %s one byte short of room",
                      shoal_open_result_name (short_result));
        FUZZ_REQUIRE (result != SHOAL_OPEN_REPLAYED,
                      "an envelope refused as %s one byte short of room was then replayed",
                      shoal_open_result_name (short_result));
    }
    if (result == SHOAL_OPEN_OK) {
        s_check_opened (&mode, envelope_size, payload_size, &header);
        fuzz_decode_checked (payload, payload_size, mode.purpose);

        size_t again_size;
        uint8_t *again = s_open (opener, mode.purpose, envelope, envelope_size, capacity, &result,
                                 &again_size, NULL);
        if (mode.keyed)
            FUZZ_REQUIRE (result == SHOAL_OPEN_REPLAYED,
                          "a sealed envelope opened, then was %s when opened again",
                          shoal_open_result_name (result));
        else
            FUZZ_REQUIRE (result == SHOAL_OPEN_OK && again_size == payload_size &&
                              memcmp (again, payload, payload_size) == 0,
                          "a plaintext envelope opened, then was %s with %zu bytes when opened "
                          "again",
                          shoal_open_result_name (result), again_size);
        free (again);
    }
    shoal_opener_destroy (&opener);
    free (payload);
    return 0;
}

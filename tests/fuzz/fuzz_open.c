/*  tests/fuzz/fuzz_open.c: opening envelopes, then decoding what they carry.

    The first input byte picks the carrier the envelope arrives on and
    whether the receiving node holds a key (fuzz_open_select); the rest is
    the envelope. Each input meets a fresh opener, so that the replay window
    of one input never decides the fate of another. An envelope that opens
    must have the payload size its layout implies, must not open twice, and
    its payload goes on to the decoder as on a node's receive path.
*/

#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

//  Senders whose replay windows an opener keeps; one input has one sender.
#define OPENER_SENDERS 4

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

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    shoal_purpose_t purpose;
    bool keyed;
    fuzz_open_select (data[0], &purpose, &keyed);
    const uint8_t *envelope = data + 1;
    size_t envelope_size = size - 1;

    //  The payload buffer has exactly the room envelope.h asks for, in its
    //  own allocation, so that a write past it is caught.
    size_t capacity =
        envelope_size > SHOAL_ENVELOPE_HEADER ? envelope_size - SHOAL_ENVELOPE_HEADER : 0;
    uint8_t *payload = malloc (capacity ? capacity : 1);
    shoal_opener_t *opener = shoal_opener_new (keyed ? s_keyed : s_plaintext, OPENER_SENDERS);
    FUZZ_REQUIRE (payload && opener, "no memory");

    size_t payload_size = SIZE_MAX;
    shoal_envelope_t header;
    shoal_open_result_t result = shoal_opener_open (opener, purpose, envelope, envelope_size,
                                                    payload, capacity, &payload_size, &header);
    FUZZ_REQUIRE ((unsigned) result < SHOAL_OPEN_RESULT_COUNT, "open returned %d", (int) result);
    if (result == SHOAL_OPEN_OK) {
        size_t layout = keyed ? SHOAL_ENVELOPE_OVERHEAD : SHOAL_ENVELOPE_HEADER;
        FUZZ_REQUIRE (payload_size == envelope_size - layout,
                      "a %zu-byte %s envelope opened to %zu bytes of payload", envelope_size,
                      keyed ? "sealed" : "plaintext", payload_size);
        FUZZ_REQUIRE (header.purpose == purpose, "purpose %d opened on carrier %d", header.purpose,
                      purpose);
        FUZZ_REQUIRE (header.mode == (keyed ? SHOAL_ENVELOPE_SEALED : SHOAL_ENVELOPE_PLAINTEXT),
                      "mode %d opened by a %s node", header.mode, keyed ? "keyed" : "plaintext");
        FUZZ_REQUIRE (header.key_id == (keyed ? shoal_keyring_primary (s_keyed) : 0),
                      "key id 0x%08x opened", header.key_id);

        fuzz_decode_checked (payload, payload_size);

        size_t again_size;
        result = shoal_opener_open (opener, purpose, envelope, envelope_size, payload, capacity,
                                    &again_size, NULL);
        FUZZ_REQUIRE (result == SHOAL_OPEN_REPLAYED, "an envelope opened twice, then gave \"%s\"",
                      shoal_open_result_name (result));
    }
    shoal_opener_destroy (&opener);
    free (payload);
    return 0;
}

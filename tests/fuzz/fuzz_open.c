/*  tests/fuzz/fuzz_open.c: opening envelopes, then decoding what they carry.

    The first input byte picks the carrier the envelope arrives on and
    whether the receiving node holds a key (fuzz_open_select); the rest is
    the envelope. The receiving node is fuzz_self. Each input meets a fresh
    opener, so that the replay window of one input never decides the fate of
    another. An envelope that opens must have the payload size its layout
    implies and must be unaddressed or addressed to this life; a sealed one
    must not open twice, while a plaintext one, which keeps no replay
    window, opens again to the same payload. Its payload then goes on to the
    decoder on the carrier it came by, as on a node's receive path.
*/

#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

//  Senders whose replay windows an opener keeps; one input has one sender.
#define OPENER_SENDERS 4

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

    //  The payload buffers have exactly the room envelope.h asks for, each
    //  in its own allocation, so that a write past one is caught.
    size_t capacity =
        envelope_size > SHOAL_ENVELOPE_HEADER ? envelope_size - SHOAL_ENVELOPE_HEADER : 0;
    uint8_t *payload = malloc (capacity ? capacity : 1);
    uint8_t *again = malloc (capacity ? capacity : 1);
    shoal_opener_t *opener =
        shoal_opener_new (keyed ? s_keyed : s_plaintext, &fuzz_self, OPENER_SENDERS);
    FUZZ_REQUIRE (payload && again && opener, "no memory");

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
        FUZZ_REQUIRE (memcmp (header.sender.id, fuzz_self.id, sizeof fuzz_self.id) != 0,
                      "an envelope from this node's own id opened");
        bool unaddressed = memcmp (header.recipient.id, s_nobody, sizeof s_nobody) == 0;
        bool to_self = memcmp (header.recipient.id, fuzz_self.id, sizeof fuzz_self.id) == 0;
        FUZZ_REQUIRE ((unaddressed && header.recipient.life == 0) ||
                          (to_self &&
                           (header.recipient.life == 0 || header.recipient.life == fuzz_self.life)),
                      "an envelope addressed to life %llu of %s opened",
                      (unsigned long long) header.recipient.life,
                      unaddressed ? "nobody"
                      : to_self   ? "this node"
                                  : "another node");

        fuzz_decode_checked (payload, payload_size, purpose);

        size_t again_size = SIZE_MAX;
        result = shoal_opener_open (opener, purpose, envelope, envelope_size, again, capacity,
                                    &again_size, NULL);
        if (keyed)
            FUZZ_REQUIRE (result == SHOAL_OPEN_REPLAYED,
                          "a sealed envelope opened, then gave result %d when opened again",
                          (int) result);
        else
            FUZZ_REQUIRE (
                result == SHOAL_OPEN_OK && again_size == payload_size &&
                    memcmp (again, payload, payload_size) == 0,
                "a plaintext envelope opened, then gave result %d and %zu bytes when opened again",
                (int) result, again_size);
    }
    shoal_opener_destroy (&opener);
    free (again);
    free (payload);
    return 0;
}

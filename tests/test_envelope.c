/*  tests/test_envelope.c: sealed envelopes, from both ends.

    Every test builds its keys, node ids, lives and nonce prefixes from fixed
    bytes, so a run is the same every time and a failure replays exactly.
*/

#include "wire/envelope.h"
#include "tests/test.h"
#include "wire/wire.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

//  Room for the largest datagram or beacon envelope, and then some.
#define BUFFER_SIZE 2048

//  Where the header's fields start (docs/wire.md, section 3.1). The tests
//  spell them out rather than borrow the library's, so that moving a field
//  in envelope.c alone makes them fail.
enum {
    AT_KEY_ID = 4,
    AT_SENDER = 8,
    AT_SENDER_LIFE = 24,
    AT_RECIPIENT = 32,
    AT_RECIPIENT_LIFE = 48,
    AT_SEQ = 56,
    AT_NONCE = 64,
};

//  The node that opens what the tests seal, unless a test says otherwise.
//  Its life has one bit set, so that flipping that bit of an envelope
//  addressed to it leaves its id without a life.
static const shoal_life_t s_receiver = {
    .id = { 0xb0, 0xb1, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xbb, 0xbc, 0xbd,
            0xbe, 0xbf },
    .life = 4,
};

//  A key made of fill, with its position mixed in so it is not all one byte.
static void
s_key (uint8_t key[SHOAL_KEY_SIZE], uint8_t fill)
{
    for (int i = 0; i < SHOAL_KEY_SIZE; i++)
        key[i] = (uint8_t) (fill * 17 + i * 3 + 1);
}

//  A node life whose id is made of fill.
static shoal_life_t
s_life (uint8_t fill, uint64_t life)
{
    shoal_life_t node = { .life = life };
    for (int i = 0; i < 16; i++)
        node.id[i] = (uint8_t) (fill + i * 11);
    return node;
}

static void
s_nonce (uint8_t nonce[SHOAL_ENVELOPE_NONCE], uint8_t fill)
{
    memset (nonce, fill, SHOAL_ENVELOPE_NONCE);
}

//  Header integers, written and read here rather than with the library's
//  helpers, for the same reason as the offsets above.
static void
s_put_be64 (uint8_t *at, uint64_t value)
{
    for (int i = 7; i >= 0; i--, value >>= 8)
        at[i] = (uint8_t) value;
}

static uint64_t
s_get_be64 (const uint8_t *at)
{
    uint64_t value = 0;
    for (int i = 0; i < 8; i++)
        value = (value << 8) | at[i];
    return value;
}

//  A keyring holding the keys made from the given fills, the first primary.
static shoal_keyring_t *
s_keyring (const uint8_t *fills, size_t count)
{
    shoal_keyring_t *keyring = shoal_keyring_new ();
    for (size_t i = 0; i < count; i++) {
        uint8_t key[SHOAL_KEY_SIZE];
        s_key (key, fills[i]);
        shoal_keyring_install (keyring, key);
    }
    return keyring;
}

static uint32_t
s_key_id (uint8_t fill)
{
    uint8_t key[SHOAL_KEY_SIZE];
    s_key (key, fill);
    return shoal_key_id (key);
}

//  The sealer of one life of the node made of sender_fill.
static shoal_sealer_t *
s_sealer (const shoal_keyring_t *keyring, uint8_t sender_fill, uint64_t life)
{
    shoal_life_t sender = s_life (sender_fill, life);
    uint8_t nonce[SHOAL_ENVELOPE_NONCE];
    s_nonce (nonce, (uint8_t) (sender_fill ^ life));
    return shoal_sealer_new (keyring, &sender, nonce);
}

//  A payload you can recognise in a dump and that differs per seed.
static void
s_payload (uint8_t *payload, size_t size, unsigned seed)
{
    static const char text[] = "the quick brown fox jumps over the lazy dog ";
    for (size_t i = 0; i < size; i++)
        payload[i] = (uint8_t) (text[(i + seed) % (sizeof text - 1)] ^ (i / 64));
}

//  True when haystack holds needle anywhere.
static bool
s_contains (const uint8_t *haystack, size_t size, const uint8_t *needle, size_t length)
{
    for (size_t i = 0; i + length <= size; i++)
        if (memcmp (haystack + i, needle, length) == 0)
            return true;
    return false;
}

//  Opens an envelope at the given node life with an opener that has seen
//  nothing yet, so replay protection plays no part in the result.
static shoal_open_result_t
s_open_at (const shoal_keyring_t *keyring, const shoal_life_t *self, shoal_purpose_t purpose,
           const uint8_t *data, size_t size)
{
    shoal_opener_t *opener = shoal_opener_new (keyring, self, 16);
    static uint8_t out[SHOAL_FRAME_MAX];
    size_t payload_size = 0;
    shoal_open_result_t result =
        shoal_opener_open (opener, purpose, data, size, out, sizeof out, &payload_size, NULL);
    shoal_opener_destroy (&opener);
    return result;
}

//  The same, at the receiver.
static shoal_open_result_t
s_open_fresh (const shoal_keyring_t *keyring, shoal_purpose_t purpose, const uint8_t *data,
              size_t size)
{
    return s_open_at (keyring, &s_receiver, purpose, data, size);
}

static shoal_open_result_t
s_open (shoal_opener_t *opener, shoal_purpose_t purpose, const uint8_t *data, long size)
{
    uint8_t out[BUFFER_SIZE];
    size_t payload_size = 0;
    return shoal_opener_open (opener, purpose, data, (size_t) size, out, sizeof out, &payload_size,
                              NULL);
}

//  Seals for the receiver: what most tests send.
static long
s_seal (shoal_sealer_t *sealer, shoal_purpose_t purpose, const uint8_t *payload, size_t size,
        uint8_t *out, size_t capacity)
{
    return shoal_sealer_seal (sealer, purpose, &s_receiver, payload, size, out, capacity);
}

//  ---------------------------------------------------------------------
//  Sealing and opening

static void
seal_then_open_gives_back_payload_and_header (void)
{
    const shoal_purpose_t purposes[] = { SHOAL_PURPOSE_BEACON, SHOAL_PURPOSE_DATAGRAM,
                                         SHOAL_PURPOSE_FRAME };
    const uint8_t fills[] = { 1 };
    shoal_keyring_t *keyring = s_keyring (fills, 1);
    shoal_sealer_t *sealer = s_sealer (keyring, 10, 42);
    shoal_opener_t *opener = shoal_opener_new (keyring, &s_receiver, 16);
    shoal_life_t sender = s_life (10, 42);

    for (size_t p = 0; p < 3; p++) {
        shoal_purpose_t purpose = purposes[p];
        size_t largest = shoal_envelope_size_max (purpose) - SHOAL_ENVELOPE_OVERHEAD;
        if (largest > 1000)
            largest = 1000;
        const size_t sizes[] = { 0, 1, 15, 16, 17, 100, largest };
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            uint8_t payload[BUFFER_SIZE], sealed[BUFFER_SIZE], out[BUFFER_SIZE];
            s_payload (payload, sizes[s], (unsigned) s);
            long size = s_seal (sealer, purpose, payload, sizes[s], sealed, sizeof sealed);
            CHECK_EQ (size, (long) (sizes[s] + SHOAL_ENVELOPE_OVERHEAD));

            size_t payload_size = 12345;
            shoal_envelope_t envelope;
            memset (&envelope, 0xee, sizeof envelope);
            CHECK_EQ (shoal_opener_open (opener, purpose, sealed, (size_t) size, out, sizeof out,
                                         &payload_size, &envelope),
                      SHOAL_OPEN_OK);
            CHECK_EQ (payload_size, sizes[s]);
            CHECK (memcmp (out, payload, sizes[s]) == 0);
            CHECK_EQ (envelope.mode, SHOAL_ENVELOPE_SEALED);
            CHECK_EQ (envelope.purpose, purpose);
            CHECK_EQ (envelope.key_id, s_key_id (1));
            CHECK (memcmp (envelope.sender.id, sender.id, 16) == 0);
            CHECK_EQ (envelope.sender.life, 42);
            CHECK (memcmp (envelope.recipient.id, s_receiver.id, 16) == 0);
            CHECK_EQ (envelope.recipient.life, s_receiver.life);
            //  Each purpose numbers its envelopes from 1.
            CHECK_EQ (envelope.seq, s + 1);
        }
    }
    shoal_opener_destroy (&opener);
    shoal_sealer_destroy (&sealer);
    shoal_keyring_destroy (&keyring);
}

static void
plaintext_round_trip_without_keys (void)
{
    const shoal_purpose_t purposes[] = { SHOAL_PURPOSE_BEACON, SHOAL_PURPOSE_DATAGRAM,
                                         SHOAL_PURPOSE_FRAME };
    //  A node without keys is either an empty keyring or none at all.
    shoal_keyring_t *empty = shoal_keyring_new ();
    const shoal_keyring_t *keyrings[] = { empty, NULL };
    shoal_life_t sender = s_life (11, 3);
    for (size_t k = 0; k < 2; k++) {
        shoal_sealer_t *sealer = s_sealer (keyrings[k], 11, 3);
        shoal_opener_t *opener = shoal_opener_new (keyrings[k], &s_receiver, 16);
        for (size_t p = 0; p < 3; p++) {
            uint8_t payload[100], sealed[BUFFER_SIZE], out[BUFFER_SIZE];
            s_payload (payload, sizeof payload, (unsigned) p);
            long size =
                s_seal (sealer, purposes[p], payload, sizeof payload, sealed, sizeof sealed);
            CHECK_EQ (size, (long) (sizeof payload + SHOAL_ENVELOPE_HEADER));
            size_t payload_size = 0;
            shoal_envelope_t envelope;
            CHECK_EQ (shoal_opener_open (opener, purposes[p], sealed, (size_t) size, out,
                                         sizeof out, &payload_size, &envelope),
                      SHOAL_OPEN_OK);
            CHECK_EQ (payload_size, sizeof payload);
            CHECK (memcmp (out, payload, sizeof payload) == 0);
            CHECK_EQ (envelope.mode, SHOAL_ENVELOPE_PLAINTEXT);
            CHECK_EQ (envelope.purpose, purposes[p]);
            CHECK_EQ (envelope.key_id, 0);
            CHECK (memcmp (envelope.sender.id, sender.id, 16) == 0);
            CHECK_EQ (envelope.sender.life, 3);
            CHECK (memcmp (envelope.recipient.id, s_receiver.id, 16) == 0);
            CHECK_EQ (envelope.recipient.life, s_receiver.life);
            CHECK_EQ (envelope.seq, 1);
        }
        shoal_opener_destroy (&opener);
        shoal_sealer_destroy (&sealer);
    }
    shoal_keyring_destroy (&empty);
}

//  The header is read by other implementations: its bytes are pinned.
static void
header_layout_matches_the_spec (void)
{
    const uint8_t fills[] = { 2 };
    shoal_keyring_t *keyring = s_keyring (fills, 1);
    const shoal_life_t sender = s_life (12, 0x0102030405060708ull);
    const shoal_life_t recipient = s_life (13, 0x1112131415161718ull);
    uint8_t nonce[SHOAL_ENVELOPE_NONCE];
    s_nonce (nonce, 0x5a);
    shoal_sealer_t *sealer = shoal_sealer_new (keyring, &sender, nonce);
    uint8_t payload[8] = { 0 }, sealed[BUFFER_SIZE];
    shoal_sealer_seal (sealer, SHOAL_PURPOSE_DATAGRAM, &recipient, payload, sizeof payload, sealed,
                       sizeof sealed);
    long size = shoal_sealer_seal (sealer, SHOAL_PURPOSE_DATAGRAM, &recipient, payload,
                                   sizeof payload, sealed, sizeof sealed);
    CHECK_EQ (SHOAL_ENVELOPE_HEADER, 64);
    CHECK_EQ (SHOAL_ENVELOPE_OVERHEAD, 96);
    CHECK_EQ (size, 8 + 96);
    CHECK_EQ (sealed[0], SHOAL_ENVELOPE_VERSION);
    CHECK_EQ (sealed[1], SHOAL_ENVELOPE_SEALED);
    CHECK_EQ (sealed[2], SHOAL_PURPOSE_DATAGRAM);
    CHECK_EQ (sealed[3], 0);
    uint32_t id = s_key_id (2);
    const uint8_t id_bytes[4] = { (uint8_t) (id >> 24), (uint8_t) (id >> 16), (uint8_t) (id >> 8),
                                  (uint8_t) id };
    CHECK (memcmp (sealed + AT_KEY_ID, id_bytes, 4) == 0);
    CHECK (memcmp (sealed + AT_SENDER, sender.id, 16) == 0);
    const uint8_t sender_life[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    CHECK (memcmp (sealed + AT_SENDER_LIFE, sender_life, 8) == 0);
    CHECK (memcmp (sealed + AT_RECIPIENT, recipient.id, 16) == 0);
    const uint8_t recipient_life[8] = { 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18 };
    CHECK (memcmp (sealed + AT_RECIPIENT_LIFE, recipient_life, 8) == 0);
    const uint8_t seq[8] = { 0, 0, 0, 0, 0, 0, 0, 2 };
    CHECK (memcmp (sealed + AT_SEQ, seq, 8) == 0);
    CHECK (memcmp (sealed + AT_NONCE, nonce, SHOAL_ENVELOPE_NONCE) == 0);

    //  Unaddressed, the recipient is all zero, id and life.
    size = shoal_sealer_seal (sealer, SHOAL_PURPOSE_DATAGRAM, NULL, payload, sizeof payload, sealed,
                              sizeof sealed);
    CHECK_EQ (size, 8 + 96);
    static const uint8_t nobody[24];
    CHECK (memcmp (sealed + AT_RECIPIENT, nobody, 24) == 0);
    CHECK_EQ (s_get_be64 (sealed + AT_SEQ), 3);
    shoal_sealer_destroy (&sealer);
    shoal_keyring_destroy (&keyring);
}

static void
ciphertext_does_not_show_the_payload (void)
{
    const uint8_t fills[] = { 3 };
    shoal_keyring_t *keyring = s_keyring (fills, 1);
    shoal_sealer_t *sealer = s_sealer (keyring, 13, 1);
    shoal_sealer_t *plain = s_sealer (NULL, 13, 1);
    uint8_t payload[600], sealed[BUFFER_SIZE];
    s_payload (payload, sizeof payload, 0);

    //  The plaintext envelope does carry it, which shows the search works.
    long size =
        s_seal (plain, SHOAL_PURPOSE_DATAGRAM, payload, sizeof payload, sealed, sizeof sealed);
    CHECK (s_contains (sealed, (size_t) size, payload, 8));

    size = s_seal (sealer, SHOAL_PURPOSE_DATAGRAM, payload, sizeof payload, sealed, sizeof sealed);
    CHECK_EQ (size, (long) (sizeof payload + SHOAL_ENVELOPE_OVERHEAD));
    //  No 6-byte run of the payload shows through anywhere.
    int shown = 0;
    for (size_t at = 0; at + 6 <= sizeof payload; at++)
        shown += s_contains (sealed, (size_t) size, payload + at, 6);
    CHECK_EQ (shown, 0);

    //  The same payload sealed twice gives two different ciphertexts.
    uint8_t again[BUFFER_SIZE];
    s_seal (sealer, SHOAL_PURPOSE_DATAGRAM, payload, sizeof payload, again, sizeof again);
    CHECK (memcmp (sealed + SHOAL_ENVELOPE_HEADER + SHOAL_ENVELOPE_NONCE,
                   again + SHOAL_ENVELOPE_HEADER + SHOAL_ENVELOPE_NONCE, sizeof payload) != 0);
    shoal_sealer_destroy (&plain);
    shoal_sealer_destroy (&sealer);
    shoal_keyring_destroy (&keyring);
}

//  The vectors of docs/wire.md, section 3.5. They were computed once by a
//  separate program that calls libsodium directly (crypto_kdf_derive_from_key,
//  crypto_aead_xchacha20poly1305_ietf_encrypt), not with shoal's code, so an
//  implementation that follows the spec produces these bytes.
static const uint8_t s_vector_subkeys[SHOAL_PURPOSE_COUNT][32] = {
    { 0x01, 0xb2, 0xc1, 0x10, 0xd8, 0xce, 0x6c, 0x49, 0xb3, 0x54, 0x75,
      0xd8, 0x55, 0xec, 0x4b, 0xe0, 0xd0, 0x98, 0x0f, 0x4f, 0xa5, 0x01,
      0x7e, 0xbc, 0xfc, 0x2e, 0x39, 0x04, 0xdf, 0x16, 0x28, 0x06 },
    { 0x00, 0xb0, 0x5a, 0x0a, 0x09, 0xb5, 0x17, 0xf3, 0x47, 0x34, 0xf0,
      0x00, 0x24, 0x79, 0x18, 0xf8, 0x9e, 0xc4, 0xf8, 0xd5, 0x85, 0x35,
      0x06, 0x44, 0xe9, 0x37, 0xf2, 0x4b, 0x59, 0x17, 0x6b, 0x50 },
    { 0xb0, 0x5a, 0xd5, 0x3a, 0x29, 0x25, 0x6d, 0x05, 0x82, 0x4b, 0xcf,
      0x6c, 0xe5, 0xf6, 0xb0, 0xff, 0x95, 0x22, 0x0d, 0xf7, 0x67, 0x0f,
      0x13, 0x24, 0xd7, 0x2b, 0x9d, 0x7a, 0x1c, 0x2c, 0x2d, 0x92 },
};

static const uint8_t s_vector_sealed[] = {
    0x01, 0x01, 0x03, 0x00, 0xa8, 0x36, 0xec, 0xb2, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11,
    0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x01, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22,
    0x22, 0x22, 0x22, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x01, 0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa,
    0xab, 0xac, 0xad, 0xae, 0xaf, 0x33, 0xcc, 0x72, 0x3f, 0xe2, 0x00, 0x33, 0xd6, 0x5a, 0x1d,
    0x8c, 0xb3, 0x4a, 0xf3, 0x94, 0x03, 0x2e, 0x80, 0xa6, 0x0a,
};

static const uint8_t s_vector_plaintext[] = {
    0x01, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11,
    0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x01, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22,
    0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x93, 0x01, 0x31, 0x08,
};

static void
known_answers_match_the_spec (void)
{
    uint8_t key[SHOAL_KEY_SIZE], prefix[SHOAL_ENVELOPE_NONCE];
    for (int i = 0; i < SHOAL_KEY_SIZE; i++)
        key[i] = (uint8_t) i;
    for (int i = 0; i < SHOAL_ENVELOPE_NONCE; i++)
        prefix[i] = (uint8_t) (0xa0 + i);
    CHECK_EQ (shoal_key_id (key), 0xa836ecb2u);
    shoal_keyring_t *keyring = shoal_keyring_new ();
    CHECK_EQ (shoal_keyring_install (keyring, key), 0);
    for (int purpose = 1; purpose <= SHOAL_PURPOSE_COUNT; purpose++) {
        const uint8_t *subkey =
            shoal_keyring_subkey (keyring, 0xa836ecb2u, (shoal_purpose_t) purpose);
        CHECK (subkey && memcmp (subkey, s_vector_subkeys[purpose - 1], 32) == 0);
    }

    //  The payload is a real message: ANSWER with term 8.
    shoal_msg_t answer = { .type = SHOAL_MSG_ANSWER, .u.answer.term = 8 };
    uint8_t message[16];
    shoal_wire_error_t err;
    CHECK_EQ (shoal_msg_encode (&answer, message, sizeof message, &err), 4);
    const uint8_t expected_message[4] = { 0x93, 0x01, 0x31, 0x08 };
    CHECK (memcmp (message, expected_message, 4) == 0);

    shoal_life_t sender = { .life = 1 }, recipient = { .life = 7 };
    memset (sender.id, 0x11, 16);
    memset (recipient.id, 0x22, 16);
    shoal_sealer_t *sealer = shoal_sealer_new (keyring, &sender, prefix);
    uint8_t sealed[BUFFER_SIZE];
    long size = shoal_sealer_seal (sealer, SHOAL_PURPOSE_FRAME, &recipient, expected_message, 4,
                                   sealed, sizeof sealed);
    CHECK_EQ (size, sizeof s_vector_sealed);
    CHECK (memcmp (sealed, s_vector_sealed, sizeof s_vector_sealed) == 0);

    //  And the recipient, at that life, opens the vector itself.
    shoal_opener_t *opener = shoal_opener_new (keyring, &recipient, 16);
    uint8_t out[BUFFER_SIZE];
    size_t payload_size = 0;
    shoal_envelope_t envelope;
    CHECK_EQ (shoal_opener_open (opener, SHOAL_PURPOSE_FRAME, s_vector_sealed,
                                 sizeof s_vector_sealed, out, sizeof out, &payload_size, &envelope),
              SHOAL_OPEN_OK);
    CHECK_EQ (payload_size, 4);
    CHECK (memcmp (out, expected_message, 4) == 0);
    CHECK_EQ (envelope.key_id, 0xa836ecb2u);
    CHECK_EQ (envelope.sender.life, 1);
    CHECK_EQ (envelope.recipient.life, 7);
    CHECK_EQ (envelope.seq, 1);

    shoal_sealer_t *plain = shoal_sealer_new (NULL, &sender, prefix);
    size = shoal_sealer_seal (plain, SHOAL_PURPOSE_FRAME, &recipient, expected_message, 4, sealed,
                              sizeof sealed);
    CHECK_EQ (size, sizeof s_vector_plaintext);
    CHECK (memcmp (sealed, s_vector_plaintext, sizeof s_vector_plaintext) == 0);
    shoal_sealer_destroy (&plain);
    shoal_opener_destroy (&opener);
    shoal_sealer_destroy (&sealer);
    shoal_keyring_destroy (&keyring);
}

//  ---------------------------------------------------------------------
//  Keys

static void
opener_without_the_key_says_unknown_key (void)
{
    const uint8_t mine[] = { 4 }, theirs[] = { 5 };
    shoal_keyring_t *sealing = s_keyring (mine, 1);
    shoal_keyring_t *opening = s_keyring (theirs, 1);
    shoal_sealer_t *sealer = s_sealer (sealing, 14, 1);
    uint8_t payload[32], sealed[BUFFER_SIZE];
    s_payload (payload, sizeof payload, 1);
    long size =
        s_seal (sealer, SHOAL_PURPOSE_DATAGRAM, payload, sizeof payload, sealed, sizeof sealed);
    CHECK_EQ (s_open_fresh (opening, SHOAL_PURPOSE_DATAGRAM, sealed, (size_t) size),
              SHOAL_OPEN_UNKNOWN_KEY);
    CHECK_EQ (s_open_fresh (sealing, SHOAL_PURPOSE_DATAGRAM, sealed, (size_t) size), SHOAL_OPEN_OK);
    shoal_sealer_destroy (&sealer);
    shoal_keyring_destroy (&sealing);
    shoal_keyring_destroy (&opening);
}

//  An envelope relabelled with the id of another key the opener holds is
//  opened with that key, and fails authentication.
static void
key_id_of_another_installed_key_is_forged (void)
{
    const uint8_t both[] = { 6, 7 };
    shoal_keyring_t *keyring = s_keyring (both, 2);
    shoal_sealer_t *sealer = s_sealer (keyring, 15, 1);
    uint8_t payload[32], sealed[BUFFER_SIZE];
    s_payload (payload, sizeof payload, 2);
    long size =
        s_seal (sealer, SHOAL_PURPOSE_FRAME, payload, sizeof payload, sealed, sizeof sealed);
    CHECK_EQ (s_open_fresh (keyring, SHOAL_PURPOSE_FRAME, sealed, (size_t) size), SHOAL_OPEN_OK);

    uint32_t other = s_key_id (7);
    sealed[AT_KEY_ID] = (uint8_t) (other >> 24);
    sealed[AT_KEY_ID + 1] = (uint8_t) (other >> 16);
    sealed[AT_KEY_ID + 2] = (uint8_t) (other >> 8);
    sealed[AT_KEY_ID + 3] = (uint8_t) other;
    CHECK_EQ (s_open_fresh (keyring, SHOAL_PURPOSE_FRAME, sealed, (size_t) size),
              SHOAL_OPEN_FORGED);
    shoal_sealer_destroy (&sealer);
    shoal_keyring_destroy (&keyring);
}

//  ---------------------------------------------------------------------
//  Addressing

//  An envelope names its recipient: it cannot be replayed to another node,
//  and reflected back to its sender it is refused as the sender's own. An
//  unaddressed envelope (a beacon) goes to any node but its sender.
static void
envelope_is_bound_to_its_recipient (void)
{
    const uint8_t fills[] = { 23 };
    shoal_keyring_t *keyring = s_keyring (fills, 1);
    const shoal_life_t a = s_life (60, 1), b = s_life (61, 1), c = s_life (62, 1);
    const shoal_life_t a_restarted = s_life (60, 2);
    //  Keyed or not, the same rules: they are about whom the envelope
    //  names, not about whether that is proven.
    const shoal_keyring_t *keyrings[] = { keyring, NULL };
    for (size_t k = 0; k < 2; k++) {
        shoal_sealer_t *sealer = s_sealer (keyrings[k], 60, 1);
        uint8_t payload[40], to_b[BUFFER_SIZE], anyone[BUFFER_SIZE];
        s_payload (payload, sizeof payload, 13);
        long to_b_size = shoal_sealer_seal (sealer, SHOAL_PURPOSE_FRAME, &b, payload,
                                            sizeof payload, to_b, sizeof to_b);
        long anyone_size = shoal_sealer_seal (sealer, SHOAL_PURPOSE_BEACON, NULL, payload,
                                              sizeof payload, anyone, sizeof anyone);

        CHECK_EQ (s_open_at (keyrings[k], &b, SHOAL_PURPOSE_FRAME, to_b, (size_t) to_b_size),
                  SHOAL_OPEN_OK);
        CHECK_EQ (s_open_at (keyrings[k], &c, SHOAL_PURPOSE_FRAME, to_b, (size_t) to_b_size),
                  SHOAL_OPEN_MISDIRECTED);
        CHECK_EQ (s_open_at (keyrings[k], &a, SHOAL_PURPOSE_FRAME, to_b, (size_t) to_b_size),
                  SHOAL_OPEN_OWN);
        CHECK_EQ (
            s_open_at (keyrings[k], &a_restarted, SHOAL_PURPOSE_FRAME, to_b, (size_t) to_b_size),
            SHOAL_OPEN_OWN);

        CHECK_EQ (s_open_at (keyrings[k], &b, SHOAL_PURPOSE_BEACON, anyone, (size_t) anyone_size),
                  SHOAL_OPEN_OK);
        CHECK_EQ (s_open_at (keyrings[k], &c, SHOAL_PURPOSE_BEACON, anyone, (size_t) anyone_size),
                  SHOAL_OPEN_OK);
        CHECK_EQ (s_open_at (keyrings[k], &a, SHOAL_PURPOSE_BEACON, anyone, (size_t) anyone_size),
                  SHOAL_OPEN_OWN);
        shoal_sealer_destroy (&sealer);
    }
    shoal_keyring_destroy (&keyring);
}

//  A recipient is a whole node life or nobody. An id without a life would
//  name every life of the node, so the envelope could be replayed to the
//  node after it restarts. The sealer will not write one, and the opener
//  refuses one written by someone else, at every life and before it
//  authenticates anything.
static void
recipient_id_without_a_life_is_malformed (void)
{
    const uint8_t fills[] = { 24 };
    shoal_keyring_t *keyring = s_keyring (fills, 1);
    const shoal_keyring_t *keyrings[] = { keyring, NULL };
    shoal_life_t lifeless = s_receiver;
    lifeless.life = 0;
    for (size_t k = 0; k < 2; k++) {
        shoal_sealer_t *sealer = s_sealer (keyrings[k], 63, 1);
        uint8_t payload[40], sealed[BUFFER_SIZE];
        s_payload (payload, sizeof payload, 14);
        CHECK_EQ (shoal_sealer_seal (sealer, SHOAL_PURPOSE_DATAGRAM, &lifeless, payload,
                                     sizeof payload, sealed, sizeof sealed),
                  -1);

        //  Written by hand: an envelope for the receiver, its life then
        //  set to 0. The refused seal used up no sequence number.
        long size =
            s_seal (sealer, SHOAL_PURPOSE_DATAGRAM, payload, sizeof payload, sealed, sizeof sealed);
        CHECK_EQ (s_get_be64 (sealed + AT_SEQ), 1);
        CHECK_EQ (s_open_fresh (keyrings[k], SHOAL_PURPOSE_DATAGRAM, sealed, (size_t) size),
                  SHOAL_OPEN_OK);
        s_put_be64 (sealed + AT_RECIPIENT_LIFE, 0);
        const uint64_t lives[] = { 1, 4, 99, UINT64_MAX };
        for (size_t i = 0; i < sizeof lives / sizeof lives[0]; i++) {
            shoal_life_t receiver = s_receiver;
            receiver.life = lives[i];
            CHECK_EQ (
                s_open_at (keyrings[k], &receiver, SHOAL_PURPOSE_DATAGRAM, sealed, (size_t) size),
                SHOAL_OPEN_MALFORMED);
        }
        shoal_sealer_destroy (&sealer);
    }
    shoal_keyring_destroy (&keyring);
}

//  A node that restarts raises its life and starts with empty replay
//  windows; an envelope addressed to its earlier life must not pass again.
static void
envelope_for_an_earlier_life_is_stale (void)
{
    const uint8_t fills[] = { 25 };
    shoal_keyring_t *keyring = s_keyring (fills, 1);
    shoal_sealer_t *sealer = s_sealer (keyring, 66, 1);
    const shoal_life_t b5 = s_life (67, 5), b6 = s_life (67, 6), b4 = s_life (67, 4);
    uint8_t payload[40], sealed[BUFFER_SIZE];
    s_payload (payload, sizeof payload, 15);
    long size = shoal_sealer_seal (sealer, SHOAL_PURPOSE_DATAGRAM, &b5, payload, sizeof payload,
                                   sealed, sizeof sealed);
    CHECK_EQ (s_open_at (keyring, &b5, SHOAL_PURPOSE_DATAGRAM, sealed, (size_t) size),
              SHOAL_OPEN_OK);
    CHECK_EQ (s_open_at (keyring, &b6, SHOAL_PURPOSE_DATAGRAM, sealed, (size_t) size),
              SHOAL_OPEN_STALE);
    //  A life B has not begun: no sender can have heard from it.
    CHECK_EQ (s_open_at (keyring, &b4, SHOAL_PURPOSE_DATAGRAM, sealed, (size_t) size),
              SHOAL_OPEN_MISDIRECTED);
    shoal_sealer_destroy (&sealer);
    shoal_keyring_destroy (&keyring);
}

//  All zero is "nobody"; a life of nobody means nothing. The sealer will
//  not write one, and the opener refuses one written by someone else.
static void
zero_recipient_id_with_a_life_is_malformed (void)
{
    const uint8_t fills[] = { 26 };
    shoal_keyring_t *keyring = s_keyring (fills, 1);
    const shoal_keyring_t *keyrings[] = { keyring, NULL };
    for (size_t k = 0; k < 2; k++) {
        shoal_sealer_t *sealer = s_sealer (keyrings[k], 68, 1);
        uint8_t payload[40], sealed[BUFFER_SIZE];
        s_payload (payload, sizeof payload, 16);
        long size = shoal_sealer_seal (sealer, SHOAL_PURPOSE_BEACON, NULL, payload, sizeof payload,
                                       sealed, sizeof sealed);
        CHECK_EQ (s_open_fresh (keyrings[k], SHOAL_PURPOSE_BEACON, sealed, (size_t) size),
                  SHOAL_OPEN_OK);
        s_put_be64 (sealed + AT_RECIPIENT_LIFE, s_receiver.life);
        CHECK_EQ (s_open_fresh (keyrings[k], SHOAL_PURPOSE_BEACON, sealed, (size_t) size),
                  SHOAL_OPEN_MALFORMED);
        s_put_be64 (sealed + AT_RECIPIENT_LIFE, 1);
        CHECK_EQ (s_open_fresh (keyrings[k], SHOAL_PURPOSE_BEACON, sealed, (size_t) size),
                  SHOAL_OPEN_MALFORMED);

        const shoal_life_t life_of_nobody = { .life = 1 };
        CHECK_EQ (shoal_sealer_seal (sealer, SHOAL_PURPOSE_BEACON, &life_of_nobody, payload,
                                     sizeof payload, sealed, sizeof sealed),
                  -1);
        //  The refused seal used up no sequence number.
        size = shoal_sealer_seal (sealer, SHOAL_PURPOSE_BEACON, NULL, payload, sizeof payload,
                                  sealed, sizeof sealed);
        CHECK_EQ (s_get_be64 (sealed + AT_SEQ), 2);
        shoal_sealer_destroy (&sealer);
    }
    shoal_keyring_destroy (&keyring);
}

//  The recipient is authenticated: rewriting it to send a sealed envelope
//  elsewhere, to make it unaddressed, or to move it to another life of
//  its recipient fails authentication.
static void
readdressed_sealed_envelope_is_forged (void)
{
    const uint8_t fills[] = { 27 };
    shoal_keyring_t *keyring = s_keyring (fills, 1);
    shoal_sealer_t *sealer = s_sealer (keyring, 69, 1);
    const shoal_life_t b5 = s_life (70, 5), b6 = s_life (70, 6), c = s_life (71, 1);
    uint8_t payload[40], sealed[BUFFER_SIZE], readdressed[BUFFER_SIZE];
    s_payload (payload, sizeof payload, 17);
    long size = shoal_sealer_seal (sealer, SHOAL_PURPOSE_DATAGRAM, &b5, payload, sizeof payload,
                                   sealed, sizeof sealed);

    //  To C instead.
    memcpy (readdressed, sealed, (size_t) size);
    memcpy (readdressed + AT_RECIPIENT, c.id, 16);
    s_put_be64 (readdressed + AT_RECIPIENT_LIFE, c.life);
    CHECK_EQ (s_open_at (keyring, &c, SHOAL_PURPOSE_DATAGRAM, readdressed, (size_t) size),
              SHOAL_OPEN_FORGED);
    //  To nobody, so anyone would take it.
    memset (readdressed + AT_RECIPIENT, 0, 24);
    CHECK_EQ (s_open_at (keyring, &c, SHOAL_PURPOSE_DATAGRAM, readdressed, (size_t) size),
              SHOAL_OPEN_FORGED);
    CHECK_EQ (s_open_at (keyring, &b6, SHOAL_PURPOSE_DATAGRAM, readdressed, (size_t) size),
              SHOAL_OPEN_FORGED);
    //  To B's next life, once B has restarted.
    memcpy (readdressed, sealed, (size_t) size);
    s_put_be64 (readdressed + AT_RECIPIENT_LIFE, 6);
    CHECK_EQ (s_open_at (keyring, &b6, SHOAL_PURPOSE_DATAGRAM, readdressed, (size_t) size),
              SHOAL_OPEN_FORGED);
    //  Untouched, it still opens where it was sent.
    CHECK_EQ (s_open_at (keyring, &b5, SHOAL_PURPOSE_DATAGRAM, sealed, (size_t) size),
              SHOAL_OPEN_OK);
    shoal_sealer_destroy (&sealer);
    shoal_keyring_destroy (&keyring);
}

//  ---------------------------------------------------------------------
//  Tampering

//  What flipping a bit at offset of an envelope for the receiver, or of an
//  unaddressed one, must give. In a sealed envelope every header field is
//  either checked on its own before decryption or refused by
//  authentication, so nothing gets through; in plaintext, what the checks
//  of the header do not catch is taken on trust.
static shoal_open_result_t
s_expected_for_tampered (bool sealed, size_t offset, const uint8_t *tampered)
{
    if (offset == 0)
        return SHOAL_OPEN_VERSION;
    if (offset == 1 || offset == 3)
        return SHOAL_OPEN_MALFORMED;
    if (offset == 2)
        return SHOAL_OPEN_PURPOSE;
    if (offset < AT_SENDER) {
        //  A key id in plaintext, or a key id flipped to 0 in a sealed
        //  envelope, which then claims to be plaintext.
        bool zero = !tampered[4] && !tampered[5] && !tampered[6] && !tampered[7];
        return !sealed || zero ? SHOAL_OPEN_MALFORMED : SHOAL_OPEN_UNKNOWN_KEY;
    }
    //  No test id is one bit away from zero or from the receiver's, and the
    //  sender's life has two bits set, so a flipped sender still names a
    //  node other than the receiver. A flipped recipient is half named
    //  (an id without a life, a life without an id), another node, or
    //  another life of the receiver.
    if (offset >= AT_RECIPIENT && offset < AT_SEQ) {
        static const uint8_t nobody[16];
        bool named = memcmp (tampered + AT_RECIPIENT, nobody, 16) != 0;
        uint64_t life = s_get_be64 (tampered + AT_RECIPIENT_LIFE);
        if (named != (life != 0))
            return SHOAL_OPEN_MALFORMED;
        if (named && memcmp (tampered + AT_RECIPIENT, s_receiver.id, 16) != 0)
            return SHOAL_OPEN_MISDIRECTED;
        if (named && life != s_receiver.life)
            return life < s_receiver.life ? SHOAL_OPEN_STALE : SHOAL_OPEN_MISDIRECTED;
    }
    //  Sequence numbers start at 1: a flip to 0 is no envelope a sealer writes.
    if (offset >= AT_SEQ && offset < AT_NONCE && s_get_be64 (tampered + AT_SEQ) == 0)
        return SHOAL_OPEN_MALFORMED;
    return sealed ? SHOAL_OPEN_FORGED : SHOAL_OPEN_OK;
}

//  Flips every bit of envelopes of every purpose, addressed to the receiver
//  and unaddressed, sealed with keyring (plaintext without one), opens each
//  at the receiver and counts the results accepted and those unexpected.
//  Each purpose seals two envelopes, numbered 1 and 2: one bit flips either
//  number to 0.
static void
s_flip_every_bit (const shoal_keyring_t *keyring, int *accepted, int *unexpected)
{
    const shoal_purpose_t purposes[] = { SHOAL_PURPOSE_BEACON, SHOAL_PURPOSE_DATAGRAM,
                                         SHOAL_PURPOSE_FRAME };
    const shoal_life_t *recipients[] = { &s_receiver, NULL };
    shoal_sealer_t *sealer = s_sealer (keyring, 16, 9);
    *accepted = *unexpected = 0;
    for (size_t p = 0; p < 3; p++)
        for (size_t r = 0; r < 2; r++) {
            uint8_t payload[100], sealed[BUFFER_SIZE], tampered[BUFFER_SIZE];
            s_payload (payload, sizeof payload, 3);
            long size = shoal_sealer_seal (sealer, purposes[p], recipients[r], payload,
                                           sizeof payload, sealed, sizeof sealed);
            CHECK_EQ (s_open_fresh (keyring, purposes[p], sealed, (size_t) size), SHOAL_OPEN_OK);
            for (long offset = 0; offset < size; offset++)
                for (int bit = 0; bit < 8; bit++) {
                    memcpy (tampered, sealed, (size_t) size);
                    tampered[offset] ^= (uint8_t) (1u << bit);
                    shoal_open_result_t result =
                        s_open_fresh (keyring, purposes[p], tampered, (size_t) size);
                    *accepted += result == SHOAL_OPEN_OK;
                    if (result !=
                            s_expected_for_tampered (keyring != NULL, (size_t) offset, tampered) &&
                        (*unexpected)++ == 0)
                        fprintf (stderr, "  purpose %d, recipient %zu, byte %ld bit %d: %s\n",
                                 (int) purposes[p], r, offset, bit,
                                 shoal_open_result_name (result));
                }
        }
    shoal_sealer_destroy (&sealer);
}

static void
every_flipped_bit_is_refused (void)
{
    const uint8_t fills[] = { 8 };
    shoal_keyring_t *keyring = s_keyring (fills, 1);
    int accepted, unexpected;
    s_flip_every_bit (keyring, &accepted, &unexpected);
    CHECK_EQ (accepted, 0);
    CHECK_EQ (unexpected, 0);
    shoal_keyring_destroy (&keyring);
}

//  Plaintext authenticates nothing: a flipped bit is refused only when the
//  checks of the header catch it, as they would in a sealed envelope, and
//  is taken on trust otherwise.
static void
plaintext_flips_meet_the_header_checks (void)
{
    int accepted, unexpected;
    s_flip_every_bit (NULL, &accepted, &unexpected);
    CHECK (accepted > 0);
    CHECK_EQ (unexpected, 0);
}

static void
every_truncation_and_extension_is_refused (void)
{
    const uint8_t fills[] = { 9 };
    shoal_keyring_t *keyring = s_keyring (fills, 1);
    shoal_sealer_t *sealer = s_sealer (keyring, 17, 1);
    uint8_t payload[100], sealed[BUFFER_SIZE];
    s_payload (payload, sizeof payload, 4);
    long size =
        s_seal (sealer, SHOAL_PURPOSE_DATAGRAM, payload, sizeof payload, sealed, sizeof sealed);
    int accepted = 0, unexpected = 0;
    for (long length = 0; length < size; length++) {
        shoal_open_result_t result =
            s_open_fresh (keyring, SHOAL_PURPOSE_DATAGRAM, sealed, (size_t) length);
        accepted += result == SHOAL_OPEN_OK;
        shoal_open_result_t expected =
            length < SHOAL_ENVELOPE_OVERHEAD ? SHOAL_OPEN_SIZE : SHOAL_OPEN_FORGED;
        unexpected += result != expected;
    }
    CHECK_EQ (accepted, 0);
    CHECK_EQ (unexpected, 0);

    //  Bytes added at the end are refused as well.
    for (long extra = 1; extra <= 32; extra++) {
        memset (sealed + size, (int) extra, (size_t) extra);
        CHECK_EQ (s_open_fresh (keyring, SHOAL_PURPOSE_DATAGRAM, sealed, (size_t) (size + extra)),
                  SHOAL_OPEN_FORGED);
    }
    shoal_sealer_destroy (&sealer);
    shoal_keyring_destroy (&keyring);
}

//  Only an authentic envelope moves the replay window: a forger cannot push
//  it ahead and make the real envelopes look stale.
static void
forged_envelope_does_not_move_replay_window (void)
{
    const uint8_t fills[] = { 10 };
    shoal_keyring_t *keyring = s_keyring (fills, 1);
    shoal_sealer_t *sealer = s_sealer (keyring, 18, 1);
    shoal_opener_t *opener = shoal_opener_new (keyring, &s_receiver, 16);
    uint8_t sealed[6][BUFFER_SIZE];
    long sizes[6];
    for (int i = 1; i <= 5; i++) {
        uint8_t payload[20];
        s_payload (payload, sizeof payload, (unsigned) i);
        sizes[i] = s_seal (sealer, SHOAL_PURPOSE_DATAGRAM, payload, sizeof payload, sealed[i],
                           sizeof sealed[i]);
    }
    for (int i = 1; i <= 3; i++)
        CHECK_EQ (s_open (opener, SHOAL_PURPOSE_DATAGRAM, sealed[i], sizes[i]), SHOAL_OPEN_OK);

    //  Envelope 5 with a bad tag.
    uint8_t forged[BUFFER_SIZE];
    memcpy (forged, sealed[5], (size_t) sizes[5]);
    forged[sizes[5] - 1] ^= 0x01;
    CHECK_EQ (s_open (opener, SHOAL_PURPOSE_DATAGRAM, forged, sizes[5]), SHOAL_OPEN_FORGED);

    //  Envelope 4 claiming a number far ahead, and a newer sender life.
    memcpy (forged, sealed[4], (size_t) sizes[4]);
    forged[AT_SEQ] = 0x7f;
    CHECK_EQ (s_open (opener, SHOAL_PURPOSE_DATAGRAM, forged, sizes[4]), SHOAL_OPEN_FORGED);
    memcpy (forged, sealed[4], (size_t) sizes[4]);
    forged[AT_SENDER_LIFE] ^= 0x40;
    CHECK_EQ (s_open (opener, SHOAL_PURPOSE_DATAGRAM, forged, sizes[4]), SHOAL_OPEN_FORGED);

    CHECK_EQ (s_open (opener, SHOAL_PURPOSE_DATAGRAM, sealed[5], sizes[5]), SHOAL_OPEN_OK);
    CHECK_EQ (s_open (opener, SHOAL_PURPOSE_DATAGRAM, sealed[4], sizes[4]), SHOAL_OPEN_OK);
    CHECK_EQ (s_open (opener, SHOAL_PURPOSE_DATAGRAM, sealed[5], sizes[5]), SHOAL_OPEN_REPLAYED);
    shoal_opener_destroy (&opener);
    shoal_sealer_destroy (&sealer);
    shoal_keyring_destroy (&keyring);
}

//  ---------------------------------------------------------------------
//  Replays and ordering

static void
same_envelope_twice_is_replayed (void)
{
    const uint8_t fills[] = { 11 };
    shoal_keyring_t *keyring = s_keyring (fills, 1);
    shoal_sealer_t *sealer = s_sealer (keyring, 19, 1);
    shoal_opener_t *opener = shoal_opener_new (keyring, &s_receiver, 16);
    uint8_t payload[40], first[BUFFER_SIZE], second[BUFFER_SIZE];
    s_payload (payload, sizeof payload, 5);
    long first_size =
        s_seal (sealer, SHOAL_PURPOSE_DATAGRAM, payload, sizeof payload, first, sizeof first);
    long second_size =
        s_seal (sealer, SHOAL_PURPOSE_DATAGRAM, payload, sizeof payload, second, sizeof second);

    CHECK_EQ (s_open (opener, SHOAL_PURPOSE_DATAGRAM, first, first_size), SHOAL_OPEN_OK);
    CHECK_EQ (s_open (opener, SHOAL_PURPOSE_DATAGRAM, first, first_size), SHOAL_OPEN_REPLAYED);
    CHECK_EQ (s_open (opener, SHOAL_PURPOSE_DATAGRAM, first, first_size), SHOAL_OPEN_REPLAYED);
    //  The refused replays leave later envelopes alone.
    uint8_t out[BUFFER_SIZE];
    size_t payload_size = 0;
    CHECK_EQ (shoal_opener_open (opener, SHOAL_PURPOSE_DATAGRAM, second, (size_t) second_size, out,
                                 sizeof out, &payload_size, NULL),
              SHOAL_OPEN_OK);
    CHECK_EQ (payload_size, sizeof payload);
    CHECK (memcmp (out, payload, sizeof payload) == 0);
    CHECK_EQ (s_open (opener, SHOAL_PURPOSE_DATAGRAM, second, second_size), SHOAL_OPEN_REPLAYED);

    shoal_opener_destroy (&opener);
    shoal_sealer_destroy (&sealer);
    shoal_keyring_destroy (&keyring);
}

enum { REORDERED = 300 };

typedef struct {
    uint8_t data[64 + SHOAL_ENVELOPE_OVERHEAD];
    long size;
} s_stored_t;

//  Seals REORDERED envelopes, each with its own number as payload.
static void
s_seal_many (shoal_sealer_t *sealer, s_stored_t *stored)
{
    for (int i = 0; i < REORDERED; i++) {
        uint8_t payload[4] = { (uint8_t) (i >> 8), (uint8_t) i, 0xab, 0xcd };
        stored[i].size = s_seal (sealer, SHOAL_PURPOSE_DATAGRAM, payload, sizeof payload,
                                 stored[i].data, sizeof stored[i].data);
    }
}

//  Opens the stored envelopes in order, checking each payload is its own.
static int
s_open_in_order (shoal_opener_t *opener, s_stored_t *stored, const int *order)
{
    int refused = 0;
    for (int i = 0; i < REORDERED; i++) {
        int index = order[i];
        uint8_t out[BUFFER_SIZE];
        size_t payload_size = 0;
        shoal_envelope_t envelope;
        shoal_open_result_t result = shoal_opener_open (
            opener, SHOAL_PURPOSE_DATAGRAM, stored[index].data, (size_t) stored[index].size, out,
            sizeof out, &payload_size, &envelope);
        bool right = result == SHOAL_OPEN_OK && payload_size == 4 &&
                     out[0] == (uint8_t) (index >> 8) && out[1] == (uint8_t) index &&
                     envelope.seq == (uint64_t) index + 1;
        if (!right && refused++ == 0)
            fprintf (stderr, "  envelope %d: %s\n", index + 1, shoal_open_result_name (result));
    }
    return refused;
}

static void
reordering_inside_window_loses_nothing (void)
{
    const uint8_t fills[] = { 12 };
    shoal_keyring_t *keyring = s_keyring (fills, 1);
    static s_stored_t stored[REORDERED];
    int order[REORDERED];

    //  Blocks of 200 in reverse: 200..1, then 300..201.
    shoal_sealer_t *sealer = s_sealer (keyring, 20, 1);
    s_seal_many (sealer, stored);
    for (int i = 0; i < REORDERED; i++) {
        int block = i / 200 * 200;
        int end = block + 200 < REORDERED ? block + 200 : REORDERED;
        order[i] = end - 1 - (i - block);
    }
    shoal_opener_t *opener = shoal_opener_new (keyring, &s_receiver, 16);
    CHECK_EQ (s_open_in_order (opener, stored, order), 0);

    //  Everything again: the last 256 are replays, the rest are too old to
    //  tell and refused as stale. None is accepted twice.
    int replayed = 0, stale = 0, other = 0;
    for (int i = 0; i < REORDERED; i++) {
        shoal_open_result_t result =
            s_open (opener, SHOAL_PURPOSE_DATAGRAM, stored[i].data, stored[i].size);
        bool in_window = REORDERED - (i + 1) < SHOAL_REPLAY_WINDOW;
        replayed += result == SHOAL_OPEN_REPLAYED && in_window;
        stale += result == SHOAL_OPEN_STALE && !in_window;
        other += result != (in_window ? SHOAL_OPEN_REPLAYED : SHOAL_OPEN_STALE);
    }
    CHECK_EQ (replayed, SHOAL_REPLAY_WINDOW);
    CHECK_EQ (stale, REORDERED - SHOAL_REPLAY_WINDOW);
    CHECK_EQ (other, 0);
    shoal_opener_destroy (&opener);
    shoal_sealer_destroy (&sealer);

    //  A seeded shuffle inside every run of 128, which never puts an
    //  envelope 256 behind the newest one seen.
    sealer = s_sealer (keyring, 21, 1);
    s_seal_many (sealer, stored);
    for (int i = 0; i < REORDERED; i++)
        order[i] = i;
    uint32_t state = 12345;
    for (int start = 0; start < REORDERED; start += 128) {
        int end = start + 128 < REORDERED ? start + 128 : REORDERED;
        for (int i = end - 1; i > start; i--) {
            state = state * 1664525u + 1013904223u;
            int j = start + (int) ((state >> 8) % (uint32_t) (i - start + 1));
            int swap = order[i];
            order[i] = order[j];
            order[j] = swap;
        }
    }
    opener = shoal_opener_new (keyring, &s_receiver, 16);
    CHECK_EQ (s_open_in_order (opener, stored, order), 0);
    int accepted = 0;
    for (int i = 0; i < REORDERED; i++)
        accepted += s_open (opener, SHOAL_PURPOSE_DATAGRAM, stored[i].data, stored[i].size) ==
                    SHOAL_OPEN_OK;
    CHECK_EQ (accepted, 0);
    shoal_opener_destroy (&opener);
    shoal_sealer_destroy (&sealer);
    shoal_keyring_destroy (&keyring);
}

static void
envelope_older_than_window_is_stale (void)
{
    const uint8_t fills[] = { 13 };
    shoal_keyring_t *keyring = s_keyring (fills, 1);
    shoal_sealer_t *sealer = s_sealer (keyring, 22, 1);
    shoal_opener_t *opener = shoal_opener_new (keyring, &s_receiver, 16);
    static s_stored_t stored[REORDERED];
    s_seal_many (sealer, stored);

    //  Envelope 300 arrives first; 45 is 255 behind it, 44 is 256 behind.
    CHECK_EQ (s_open (opener, SHOAL_PURPOSE_DATAGRAM, stored[299].data, stored[299].size),
              SHOAL_OPEN_OK);
    CHECK_EQ (s_open (opener, SHOAL_PURPOSE_DATAGRAM, stored[43].data, stored[43].size),
              SHOAL_OPEN_STALE);
    CHECK_EQ (s_open (opener, SHOAL_PURPOSE_DATAGRAM, stored[44].data, stored[44].size),
              SHOAL_OPEN_OK);
    CHECK_EQ (s_open (opener, SHOAL_PURPOSE_DATAGRAM, stored[0].data, stored[0].size),
              SHOAL_OPEN_STALE);
    CHECK_EQ (s_open (opener, SHOAL_PURPOSE_DATAGRAM, stored[298].data, stored[298].size),
              SHOAL_OPEN_OK);
    shoal_opener_destroy (&opener);
    shoal_sealer_destroy (&sealer);
    shoal_keyring_destroy (&keyring);
}

static void
new_sender_life_resets_the_window (void)
{
    const uint8_t fills[] = { 14 };
    shoal_keyring_t *keyring = s_keyring (fills, 1);
    shoal_opener_t *opener = shoal_opener_new (keyring, &s_receiver, 16);
    uint8_t payload[16], sealed[8][BUFFER_SIZE];
    long sizes[8];
    s_payload (payload, sizeof payload, 6);

    //  The first life sends 5 envelopes; the last is still in flight when
    //  the node restarts.
    shoal_sealer_t *first_life = s_sealer (keyring, 23, 7);
    for (int i = 0; i < 5; i++)
        sizes[i] = s_seal (first_life, SHOAL_PURPOSE_DATAGRAM, payload, sizeof payload, sealed[i],
                           sizeof sealed[i]);
    for (int i = 0; i < 4; i++)
        CHECK_EQ (s_open (opener, SHOAL_PURPOSE_DATAGRAM, sealed[i], sizes[i]), SHOAL_OPEN_OK);

    //  The next life numbers from 1 again, under a new nonce prefix.
    shoal_sealer_t *second_life = s_sealer (keyring, 23, 8);
    shoal_envelope_t envelope;
    uint8_t out[BUFFER_SIZE];
    size_t payload_size = 0;
    for (int i = 5; i < 8; i++) {
        sizes[i] = s_seal (second_life, SHOAL_PURPOSE_DATAGRAM, payload, sizeof payload, sealed[i],
                           sizeof sealed[i]);
        CHECK_EQ (shoal_opener_open (opener, SHOAL_PURPOSE_DATAGRAM, sealed[i], (size_t) sizes[i],
                                     out, sizeof out, &payload_size, &envelope),
                  SHOAL_OPEN_OK);
        CHECK_EQ (envelope.sender.life, 8);
        CHECK_EQ (envelope.seq, (uint64_t) i - 4);
    }
    CHECK (memcmp (sealed[0] + AT_NONCE, sealed[5] + AT_NONCE, SHOAL_ENVELOPE_NONCE) != 0);

    //  What the old life sent is now stale, delivered before or not.
    CHECK_EQ (s_open (opener, SHOAL_PURPOSE_DATAGRAM, sealed[4], sizes[4]), SHOAL_OPEN_STALE);
    CHECK_EQ (s_open (opener, SHOAL_PURPOSE_DATAGRAM, sealed[0], sizes[0]), SHOAL_OPEN_STALE);
    CHECK_EQ (s_open (opener, SHOAL_PURPOSE_DATAGRAM, sealed[5], sizes[5]), SHOAL_OPEN_REPLAYED);
    shoal_sealer_destroy (&first_life);
    shoal_sealer_destroy (&second_life);
    shoal_opener_destroy (&opener);
    shoal_keyring_destroy (&keyring);
}

//  Plaintext keeps no replay window. Anyone can forge a plaintext envelope,
//  so a window would stop nothing a forger could not get past by raising
//  the sequence number, and a forged envelope claiming a huge sender life
//  would make every real envelope of that sender look stale: one packet
//  would silence a peer. Replays in plaintext are the application's to
//  tolerate, which is why a cluster that faces a network has a key.
static void
plaintext_keeps_no_replay_window (void)
{
    shoal_sealer_t *plain = s_sealer (NULL, 35, 2);
    shoal_opener_t *opener = shoal_opener_new (NULL, &s_receiver, 16);
    uint8_t payload[16], first[BUFFER_SIZE], second[BUFFER_SIZE], forged[BUFFER_SIZE];
    s_payload (payload, sizeof payload, 18);
    long first_size =
        s_seal (plain, SHOAL_PURPOSE_DATAGRAM, payload, sizeof payload, first, sizeof first);

    //  The same envelope twice is accepted twice.
    CHECK_EQ (s_open (opener, SHOAL_PURPOSE_DATAGRAM, first, first_size), SHOAL_OPEN_OK);
    CHECK_EQ (s_open (opener, SHOAL_PURPOSE_DATAGRAM, first, first_size), SHOAL_OPEN_OK);

    //  A forgery from the farthest life there is silences nobody.
    memcpy (forged, first, (size_t) first_size);
    s_put_be64 (forged + AT_SENDER_LIFE, UINT64_MAX);
    s_put_be64 (forged + AT_SEQ, UINT64_MAX);
    CHECK_EQ (s_open (opener, SHOAL_PURPOSE_DATAGRAM, forged, first_size), SHOAL_OPEN_OK);
    long second_size =
        s_seal (plain, SHOAL_PURPOSE_DATAGRAM, payload, sizeof payload, second, sizeof second);
    CHECK_EQ (s_open (opener, SHOAL_PURPOSE_DATAGRAM, second, second_size), SHOAL_OPEN_OK);
    CHECK_EQ (s_open (opener, SHOAL_PURPOSE_DATAGRAM, first, first_size), SHOAL_OPEN_OK);
    CHECK_EQ (shoal_opener_evictions (opener), 0);
    shoal_opener_destroy (&opener);
    shoal_sealer_destroy (&plain);
}

//  Each purpose keeps its own numbering, at the sealer and at the opener.
static void
purposes_are_numbered_apart (void)
{
    const uint8_t fills[] = { 15 };
    shoal_keyring_t *keyring = s_keyring (fills, 1);
    shoal_sealer_t *sealer = s_sealer (keyring, 24, 1);
    shoal_opener_t *opener = shoal_opener_new (keyring, &s_receiver, 16);
    uint8_t payload[16], out[BUFFER_SIZE];
    s_payload (payload, sizeof payload, 7);
    const shoal_purpose_t purposes[] = { SHOAL_PURPOSE_FRAME, SHOAL_PURPOSE_BEACON,
                                         SHOAL_PURPOSE_FRAME, SHOAL_PURPOSE_DATAGRAM,
                                         SHOAL_PURPOSE_FRAME };
    const uint64_t seqs[] = { 1, 1, 2, 1, 3 };
    for (size_t i = 0; i < 5; i++) {
        uint8_t sealed[BUFFER_SIZE];
        long size = s_seal (sealer, purposes[i], payload, sizeof payload, sealed, sizeof sealed);
        shoal_envelope_t envelope;
        size_t payload_size;
        CHECK_EQ (shoal_opener_open (opener, purposes[i], sealed, (size_t) size, out, sizeof out,
                                     &payload_size, &envelope),
                  SHOAL_OPEN_OK);
        CHECK_EQ (envelope.seq, seqs[i]);
    }
    shoal_opener_destroy (&opener);
    shoal_sealer_destroy (&sealer);
    shoal_keyring_destroy (&keyring);
}

//  ---------------------------------------------------------------------
//  Carriers and modes

static void
envelope_for_another_carrier_is_refused (void)
{
    const uint8_t fills[] = { 16 };
    shoal_keyring_t *keyring = s_keyring (fills, 1);
    shoal_sealer_t *sealer = s_sealer (keyring, 25, 1);
    uint8_t payload[50], sealed[BUFFER_SIZE];
    s_payload (payload, sizeof payload, 8);
    long size =
        s_seal (sealer, SHOAL_PURPOSE_DATAGRAM, payload, sizeof payload, sealed, sizeof sealed);
    CHECK_EQ (s_open_fresh (keyring, SHOAL_PURPOSE_FRAME, sealed, (size_t) size),
              SHOAL_OPEN_PURPOSE);
    CHECK_EQ (s_open_fresh (keyring, SHOAL_PURPOSE_BEACON, sealed, (size_t) size),
              SHOAL_OPEN_PURPOSE);

    //  Relabelling the purpose does not help: each purpose has its own
    //  subkey, and the label is authenticated.
    sealed[2] = SHOAL_PURPOSE_FRAME;
    CHECK_EQ (s_open_fresh (keyring, SHOAL_PURPOSE_FRAME, sealed, (size_t) size),
              SHOAL_OPEN_FORGED);
    sealed[2] = SHOAL_PURPOSE_BEACON;
    CHECK_EQ (s_open_fresh (keyring, SHOAL_PURPOSE_BEACON, sealed, (size_t) size),
              SHOAL_OPEN_FORGED);
    sealed[2] = SHOAL_PURPOSE_DATAGRAM;
    CHECK_EQ (s_open_fresh (keyring, SHOAL_PURPOSE_DATAGRAM, sealed, (size_t) size), SHOAL_OPEN_OK);
    shoal_sealer_destroy (&sealer);
    shoal_keyring_destroy (&keyring);
}

static void
keyed_node_refuses_plaintext (void)
{
    const uint8_t fills[] = { 17 };
    shoal_keyring_t *keyring = s_keyring (fills, 1);
    shoal_keyring_t *empty = shoal_keyring_new ();
    const shoal_keyring_t *unkeyed[] = { empty, NULL };
    uint8_t payload[50], sealed[BUFFER_SIZE];
    s_payload (payload, sizeof payload, 9);
    for (size_t k = 0; k < 2; k++) {
        shoal_sealer_t *plain = s_sealer (unkeyed[k], 26, 1);
        long size =
            s_seal (plain, SHOAL_PURPOSE_DATAGRAM, payload, sizeof payload, sealed, sizeof sealed);
        CHECK_EQ (sealed[1], SHOAL_ENVELOPE_PLAINTEXT);
        CHECK_EQ (s_open_fresh (keyring, SHOAL_PURPOSE_DATAGRAM, sealed, (size_t) size),
                  SHOAL_OPEN_PLAINTEXT);
        shoal_sealer_destroy (&plain);
    }
    shoal_keyring_destroy (&empty);
    shoal_keyring_destroy (&keyring);
}

static void
unkeyed_node_refuses_sealed (void)
{
    const uint8_t fills[] = { 18 };
    shoal_keyring_t *keyring = s_keyring (fills, 1);
    shoal_keyring_t *empty = shoal_keyring_new ();
    shoal_sealer_t *sealer = s_sealer (keyring, 27, 1);
    uint8_t payload[50], sealed[BUFFER_SIZE];
    s_payload (payload, sizeof payload, 10);
    long size =
        s_seal (sealer, SHOAL_PURPOSE_DATAGRAM, payload, sizeof payload, sealed, sizeof sealed);
    CHECK_EQ (s_open_fresh (empty, SHOAL_PURPOSE_DATAGRAM, sealed, (size_t) size),
              SHOAL_OPEN_SEALED);
    CHECK_EQ (s_open_fresh (NULL, SHOAL_PURPOSE_DATAGRAM, sealed, (size_t) size),
              SHOAL_OPEN_SEALED);
    shoal_sealer_destroy (&sealer);
    shoal_keyring_destroy (&empty);
    shoal_keyring_destroy (&keyring);
}

//  The mode byte and the key id must agree; a mix of the two is neither
//  a sealed nor a plaintext envelope.
static void
mode_and_key_id_must_agree (void)
{
    const uint8_t fills[] = { 19 };
    shoal_keyring_t *keyring = s_keyring (fills, 1);
    shoal_sealer_t *sealer = s_sealer (keyring, 28, 1);
    shoal_sealer_t *plain = s_sealer (NULL, 28, 1);
    uint8_t payload[50], sealed[BUFFER_SIZE], plaintext[BUFFER_SIZE];
    s_payload (payload, sizeof payload, 11);
    long sealed_size =
        s_seal (sealer, SHOAL_PURPOSE_DATAGRAM, payload, sizeof payload, sealed, sizeof sealed);
    long plain_size = s_seal (plain, SHOAL_PURPOSE_DATAGRAM, payload, sizeof payload, plaintext,
                              sizeof plaintext);

    //  Sealed, claiming plaintext.
    sealed[1] = SHOAL_ENVELOPE_PLAINTEXT;
    CHECK_EQ (s_open_fresh (keyring, SHOAL_PURPOSE_DATAGRAM, sealed, (size_t) sealed_size),
              SHOAL_OPEN_MALFORMED);
    CHECK_EQ (s_open_fresh (NULL, SHOAL_PURPOSE_DATAGRAM, sealed, (size_t) sealed_size),
              SHOAL_OPEN_MALFORMED);
    //  Plaintext, claiming a key.
    plaintext[7] = 1;
    CHECK_EQ (s_open_fresh (NULL, SHOAL_PURPOSE_DATAGRAM, plaintext, (size_t) plain_size),
              SHOAL_OPEN_MALFORMED);
    //  A mode that does not exist.
    plaintext[7] = 0;
    plaintext[1] = 2;
    CHECK_EQ (s_open_fresh (NULL, SHOAL_PURPOSE_DATAGRAM, plaintext, (size_t) plain_size),
              SHOAL_OPEN_MALFORMED);
    //  The reserved byte set.
    plaintext[1] = SHOAL_ENVELOPE_PLAINTEXT;
    plaintext[3] = 1;
    CHECK_EQ (s_open_fresh (NULL, SHOAL_PURPOSE_DATAGRAM, plaintext, (size_t) plain_size),
              SHOAL_OPEN_MALFORMED);
    //  Another version.
    plaintext[3] = 0;
    plaintext[0] = 2;
    CHECK_EQ (s_open_fresh (NULL, SHOAL_PURPOSE_DATAGRAM, plaintext, (size_t) plain_size),
              SHOAL_OPEN_VERSION);
    plaintext[0] = SHOAL_ENVELOPE_VERSION;
    CHECK_EQ (s_open_fresh (NULL, SHOAL_PURPOSE_DATAGRAM, plaintext, (size_t) plain_size),
              SHOAL_OPEN_OK);
    shoal_sealer_destroy (&plain);
    shoal_sealer_destroy (&sealer);
    shoal_keyring_destroy (&keyring);
}

//  ---------------------------------------------------------------------
//  Sizes

static void
each_carrier_has_its_size_limit_and_name (void)
{
    CHECK_EQ (shoal_envelope_size_max (SHOAL_PURPOSE_BEACON), SHOAL_BEACON_MAX);
    CHECK_EQ (shoal_envelope_size_max (SHOAL_PURPOSE_DATAGRAM), SHOAL_DATAGRAM_MAX);
    CHECK_EQ (shoal_envelope_size_max (SHOAL_PURPOSE_FRAME), SHOAL_FRAME_MAX);
    CHECK_EQ (shoal_envelope_size_max ((shoal_purpose_t) 0), 0);
    CHECK_EQ (shoal_envelope_size_max ((shoal_purpose_t) 4), 0);
    CHECK_STR (shoal_purpose_name (SHOAL_PURPOSE_BEACON), "beacon");
    CHECK_STR (shoal_purpose_name (SHOAL_PURPOSE_DATAGRAM), "datagram");
    CHECK_STR (shoal_purpose_name (SHOAL_PURPOSE_FRAME), "frame");
    CHECK_STR (shoal_purpose_name ((shoal_purpose_t) 0), "unknown");
    CHECK_STR (shoal_purpose_name ((shoal_purpose_t) 4), "unknown");
}

static void
open_refuses_wrong_sizes (void)
{
    const uint8_t fills[] = { 20 };
    shoal_keyring_t *keyring = s_keyring (fills, 1);
    shoal_sealer_t *sealer = s_sealer (keyring, 29, 1);
    shoal_sealer_t *plain = s_sealer (NULL, 29, 1);
    static uint8_t big[SHOAL_FRAME_MAX + 1];
    uint8_t payload[8] = { 0 };

    //  Larger than each carrier takes, with a valid header in front.
    const shoal_purpose_t purposes[] = { SHOAL_PURPOSE_BEACON, SHOAL_PURPOSE_DATAGRAM,
                                         SHOAL_PURPOSE_FRAME };
    for (size_t p = 0; p < 3; p++) {
        size_t carrier = shoal_envelope_size_max (purposes[p]);
        s_seal (sealer, purposes[p], payload, sizeof payload, big, sizeof big);
        CHECK_EQ (s_open_fresh (keyring, purposes[p], big, carrier + 1), SHOAL_OPEN_SIZE);
        CHECK_EQ (s_open_fresh (keyring, purposes[p], big, carrier), SHOAL_OPEN_FORGED);
        s_seal (plain, purposes[p], payload, sizeof payload, big, sizeof big);
        CHECK_EQ (s_open_fresh (NULL, purposes[p], big, carrier + 1), SHOAL_OPEN_SIZE);
        //  Plaintext has no tag, so all up to the carrier's limit is payload.
        CHECK_EQ (s_open_fresh (NULL, purposes[p], big, carrier), SHOAL_OPEN_OK);
    }

    //  Shorter than a header, keyed or not.
    s_seal (plain, SHOAL_PURPOSE_DATAGRAM, payload, sizeof payload, big, sizeof big);
    CHECK_EQ (s_open_fresh (NULL, SHOAL_PURPOSE_DATAGRAM, big, SHOAL_ENVELOPE_HEADER - 1),
              SHOAL_OPEN_SIZE);
    CHECK_EQ (s_open_fresh (NULL, SHOAL_PURPOSE_DATAGRAM, big, 0), SHOAL_OPEN_SIZE);
    CHECK_EQ (s_open_fresh (NULL, SHOAL_PURPOSE_DATAGRAM, big, SHOAL_ENVELOPE_HEADER),
              SHOAL_OPEN_OK);
    s_seal (sealer, SHOAL_PURPOSE_DATAGRAM, payload, sizeof payload, big, sizeof big);
    CHECK_EQ (s_open_fresh (keyring, SHOAL_PURPOSE_DATAGRAM, big, SHOAL_ENVELOPE_HEADER - 1),
              SHOAL_OPEN_SIZE);
    //  A header but no room for nonce and tag.
    CHECK_EQ (s_open_fresh (keyring, SHOAL_PURPOSE_DATAGRAM, big, SHOAL_ENVELOPE_OVERHEAD - 1),
              SHOAL_OPEN_SIZE);

    //  A purpose that is no carrier at all.
    CHECK_EQ (s_open_fresh (keyring, (shoal_purpose_t) 0, big, 80), SHOAL_OPEN_SIZE);
    CHECK_EQ (s_open_fresh (keyring, (shoal_purpose_t) 4, big, 80), SHOAL_OPEN_SIZE);
    shoal_sealer_destroy (&plain);
    shoal_sealer_destroy (&sealer);
    shoal_keyring_destroy (&keyring);
}

//  Given a buffer too small for the message, the opener refuses the
//  envelope, writes nothing past the buffer, and records nothing: given
//  room, the same envelope then opens.
static void
open_refuses_output_too_small_and_records_nothing (void)
{
    const uint8_t fills[] = { 21 };
    shoal_keyring_t *keyring = s_keyring (fills, 1);
    const shoal_keyring_t *keyrings[] = { keyring, NULL };
    for (size_t k = 0; k < 2; k++) {
        shoal_sealer_t *sealer = s_sealer (keyrings[k], 30, 1);
        shoal_opener_t *opener = shoal_opener_new (keyrings[k], &s_receiver, 16);
        uint8_t payload[64], sealed[BUFFER_SIZE];
        //  Room for the payload, then a canary.
        uint8_t out[sizeof payload + 16];
        s_payload (payload, sizeof payload, 12);
        long size =
            s_seal (sealer, SHOAL_PURPOSE_DATAGRAM, payload, sizeof payload, sealed, sizeof sealed);
        const size_t capacities[] = { 0, 1, sizeof payload - 1 };
        for (size_t c = 0; c < sizeof capacities / sizeof capacities[0]; c++) {
            memset (out, 0xa5, sizeof out);
            size_t payload_size = 0;
            CHECK_EQ (shoal_opener_open (opener, SHOAL_PURPOSE_DATAGRAM, sealed, (size_t) size, out,
                                         capacities[c], &payload_size, NULL),
                      SHOAL_OPEN_SIZE);
            int written = 0;
            for (size_t i = capacities[c]; i < sizeof out; i++)
                written += out[i] != 0xa5;
            CHECK_EQ (written, 0);
        }
        memset (out, 0xa5, sizeof out);
        size_t payload_size = 0;
        CHECK_EQ (shoal_opener_open (opener, SHOAL_PURPOSE_DATAGRAM, sealed, (size_t) size, out,
                                     sizeof payload, &payload_size, NULL),
                  SHOAL_OPEN_OK);
        CHECK_EQ (payload_size, sizeof payload);
        CHECK (memcmp (out, payload, sizeof payload) == 0);
        int written = 0;
        for (size_t i = sizeof payload; i < sizeof out; i++)
            written += out[i] != 0xa5;
        CHECK_EQ (written, 0);
        shoal_opener_destroy (&opener);
        shoal_sealer_destroy (&sealer);
    }
    shoal_keyring_destroy (&keyring);
}

static void
seal_refuses_what_does_not_fit (void)
{
    const uint8_t fills[] = { 22 };
    shoal_keyring_t *keyring = s_keyring (fills, 1);
    shoal_sealer_t *sealer = s_sealer (keyring, 31, 1);
    shoal_sealer_t *plain = s_sealer (NULL, 31, 1);
    static uint8_t payload[SHOAL_FRAME_MAX + 1], sealed[SHOAL_FRAME_MAX + 1];

    //  The largest payload each carrier takes sealed, and one byte more.
    const shoal_purpose_t purposes[] = { SHOAL_PURPOSE_BEACON, SHOAL_PURPOSE_DATAGRAM,
                                         SHOAL_PURPOSE_FRAME };
    for (size_t p = 0; p < 3; p++) {
        size_t carrier = shoal_envelope_size_max (purposes[p]);
        size_t largest = carrier - SHOAL_ENVELOPE_OVERHEAD;
        CHECK_EQ (s_seal (sealer, purposes[p], payload, largest, sealed, sizeof sealed),
                  (long) carrier);
        CHECK_EQ (s_open_fresh (keyring, purposes[p], sealed, carrier), SHOAL_OPEN_OK);
        CHECK_EQ (s_seal (sealer, purposes[p], payload, largest + 1, sealed, sizeof sealed), -1);
        //  Plaintext saves the nonce and the tag, and no more.
        largest = carrier - SHOAL_ENVELOPE_HEADER;
        CHECK_EQ (s_seal (plain, purposes[p], payload, largest, sealed, sizeof sealed),
                  (long) carrier);
        CHECK_EQ (s_seal (plain, purposes[p], payload, largest + 1, sealed, sizeof sealed), -1);
    }
    CHECK_EQ (s_seal (sealer, SHOAL_PURPOSE_BEACON, payload, SIZE_MAX, sealed, sizeof sealed), -1);

    //  The output buffer must hold the whole envelope.
    CHECK_EQ (s_seal (sealer, SHOAL_PURPOSE_DATAGRAM, payload, 100, sealed,
                      100 + SHOAL_ENVELOPE_OVERHEAD - 1),
              -1);
    CHECK_EQ (s_seal (sealer, SHOAL_PURPOSE_DATAGRAM, payload, 100, sealed,
                      100 + SHOAL_ENVELOPE_OVERHEAD),
              100 + SHOAL_ENVELOPE_OVERHEAD);
    CHECK_EQ (s_seal (sealer, SHOAL_PURPOSE_DATAGRAM, payload, 0, sealed, 0), -1);

    //  Purposes that are no carrier.
    CHECK_EQ (s_seal (sealer, (shoal_purpose_t) 0, payload, 1, sealed, sizeof sealed), -1);
    CHECK_EQ (s_seal (sealer, (shoal_purpose_t) 4, payload, 1, sealed, sizeof sealed), -1);
    shoal_sealer_destroy (&plain);
    shoal_sealer_destroy (&sealer);
    shoal_keyring_destroy (&keyring);
}

//  ---------------------------------------------------------------------
//  Key rotation

//  One node: its life, its keyring, what it sends with and what it
//  receives with.
typedef struct {
    shoal_life_t life;
    shoal_keyring_t *keyring;
    shoal_sealer_t *sealer;
    shoal_opener_t *opener;
} s_node_t;

static void
s_node_start (s_node_t *node, uint8_t sender_fill, uint8_t key_fill)
{
    const uint8_t fills[] = { key_fill };
    node->life = s_life (sender_fill, 1);
    node->keyring = s_keyring (fills, 1);
    node->sealer = s_sealer (node->keyring, sender_fill, 1);
    node->opener = shoal_opener_new (node->keyring, &node->life, 16);
}

static void
s_node_stop (s_node_t *node)
{
    shoal_opener_destroy (&node->opener);
    shoal_sealer_destroy (&node->sealer);
    shoal_keyring_destroy (&node->keyring);
}

//  Sends a few messages on every carrier from one node to the other and
//  counts those that did not arrive intact.
static int
s_exchange (s_node_t *from, s_node_t *to, uint32_t expected_key_id)
{
    const shoal_purpose_t purposes[] = { SHOAL_PURPOSE_BEACON, SHOAL_PURPOSE_DATAGRAM,
                                         SHOAL_PURPOSE_FRAME };
    int lost = 0;
    for (int i = 0; i < 9; i++) {
        uint8_t payload[40], sealed[BUFFER_SIZE], out[BUFFER_SIZE];
        s_payload (payload, sizeof payload, (unsigned) i);
        //  Beacons go to anyone, the rest to the other node's life.
        const shoal_life_t *recipient = purposes[i % 3] == SHOAL_PURPOSE_BEACON ? NULL : &to->life;
        long size = shoal_sealer_seal (from->sealer, purposes[i % 3], recipient, payload,
                                       sizeof payload, sealed, sizeof sealed);
        shoal_envelope_t envelope;
        size_t payload_size = 0;
        shoal_open_result_t result =
            shoal_opener_open (to->opener, purposes[i % 3], sealed, (size_t) size, out, sizeof out,
                               &payload_size, &envelope);
        if (result != SHOAL_OPEN_OK || payload_size != sizeof payload ||
            memcmp (out, payload, sizeof payload) != 0 || envelope.key_id != expected_key_id) {
            if (lost++ == 0)
                fprintf (stderr, "  message %d: %s\n", i, shoal_open_result_name (result));
        }
    }
    return lost;
}

static void
key_rotation_loses_no_message (void)
{
    const uint32_t k1 = s_key_id (30), k2 = s_key_id (31);
    uint8_t key2[SHOAL_KEY_SIZE];
    s_key (key2, 31);
    s_node_t a, b;
    s_node_start (&a, 40, 30);
    s_node_start (&b, 41, 30);
    CHECK_EQ (s_exchange (&a, &b, k1), 0);
    CHECK_EQ (s_exchange (&b, &a, k1), 0);

    //  An envelope sealed before the rotation, delivered late.
    uint8_t late[BUFFER_SIZE], payload[40];
    s_payload (payload, sizeof payload, 99);
    long late_size = shoal_sealer_seal (a.sealer, SHOAL_PURPOSE_DATAGRAM, &b.life, payload,
                                        sizeof payload, late, sizeof late);
    uint8_t later[BUFFER_SIZE];
    long later_size = shoal_sealer_seal (a.sealer, SHOAL_PURPOSE_DATAGRAM, &b.life, payload,
                                         sizeof payload, later, sizeof later);

    //  Step 1: install K2, A first. Both still seal with K1.
    CHECK_EQ (shoal_keyring_install (a.keyring, key2), 0);
    CHECK_EQ (s_exchange (&a, &b, k1), 0);
    CHECK_EQ (s_exchange (&b, &a, k1), 0);
    CHECK_EQ (shoal_keyring_install (b.keyring, key2), 0);
    CHECK_EQ (s_exchange (&a, &b, k1), 0);
    CHECK_EQ (s_exchange (&b, &a, k1), 0);

    //  Step 2: A seals with K2 while B still seals with K1, then both K2.
    CHECK_EQ (shoal_keyring_use (a.keyring, k2), 0);
    CHECK_EQ (s_exchange (&a, &b, k2), 0);
    CHECK_EQ (s_exchange (&b, &a, k1), 0);
    CHECK_EQ (s_open (b.opener, SHOAL_PURPOSE_DATAGRAM, late, late_size), SHOAL_OPEN_OK);
    CHECK_EQ (shoal_keyring_use (b.keyring, k2), 0);
    CHECK_EQ (s_exchange (&a, &b, k2), 0);
    CHECK_EQ (s_exchange (&b, &a, k2), 0);

    //  Step 3: remove K1, A first.
    CHECK_EQ (shoal_keyring_remove (a.keyring, k1), 0);
    CHECK_EQ (s_exchange (&a, &b, k2), 0);
    CHECK_EQ (s_exchange (&b, &a, k2), 0);
    CHECK_EQ (shoal_keyring_remove (b.keyring, k1), 0);
    CHECK_EQ (s_exchange (&a, &b, k2), 0);
    CHECK_EQ (s_exchange (&b, &a, k2), 0);
    CHECK_EQ (shoal_keyring_size (a.keyring), 1);
    CHECK_EQ (shoal_keyring_size (b.keyring), 1);

    //  Once K1 is gone, what was sealed with it no longer opens.
    CHECK_EQ (s_open (b.opener, SHOAL_PURPOSE_DATAGRAM, later, later_size), SHOAL_OPEN_UNKNOWN_KEY);
    s_node_stop (&a);
    s_node_stop (&b);
}

static void
primary_key_cannot_be_removed (void)
{
    const uint8_t fills[] = { 32, 33 };
    shoal_keyring_t *keyring = s_keyring (fills, 2);
    shoal_sealer_t *sealer = s_sealer (keyring, 42, 1);
    uint32_t primary = s_key_id (32);
    CHECK_EQ (shoal_keyring_remove (keyring, primary), -1);
    CHECK_EQ (shoal_keyring_primary (keyring), primary);
    CHECK_EQ (shoal_keyring_size (keyring), 2);
    CHECK (shoal_keyring_subkey (keyring, primary, SHOAL_PURPOSE_FRAME) != NULL);

    //  The keyring still seals and opens with it.
    uint8_t payload[10] = { 0 }, sealed[BUFFER_SIZE];
    long size =
        s_seal (sealer, SHOAL_PURPOSE_FRAME, payload, sizeof payload, sealed, sizeof sealed);
    CHECK_EQ (size, (long) sizeof payload + SHOAL_ENVELOPE_OVERHEAD);
    CHECK_EQ (s_open_fresh (keyring, SHOAL_PURPOSE_FRAME, sealed, (size_t) size), SHOAL_OPEN_OK);
    shoal_sealer_destroy (&sealer);
    shoal_keyring_destroy (&keyring);
}

//  ---------------------------------------------------------------------
//  Bookkeeping

static void
result_names_are_distinct (void)
{
    for (int i = 0; i < SHOAL_OPEN_RESULT_COUNT; i++) {
        const char *name = shoal_open_result_name ((shoal_open_result_t) i);
        CHECK (name != NULL && name[0] != '\0');
        for (int j = 0; j < i; j++) {
            const char *other = shoal_open_result_name ((shoal_open_result_t) j);
            CHECK (name && other && strcmp (name, other) != 0);
        }
    }
    //  The names are what logs and metrics show, and docs/wire.md lists them.
    static const char *names[SHOAL_OPEN_RESULT_COUNT] = {
        "ok",  "size",        "version",     "malformed", "purpose",  "plaintext", "sealed",
        "own", "misdirected", "unknown-key", "forged",    "replayed", "stale",
    };
    for (int i = 0; i < SHOAL_OPEN_RESULT_COUNT; i++)
        CHECK_STR (shoal_open_result_name ((shoal_open_result_t) i), names[i]);
    CHECK (shoal_open_result_name (SHOAL_OPEN_RESULT_COUNT) != NULL);
    CHECK (shoal_open_result_name ((shoal_open_result_t) -1) != NULL);
}

static void
opener_counts_forgotten_senders (void)
{
    const uint8_t fills[] = { 34 };
    shoal_keyring_t *keyring = s_keyring (fills, 1);
    CHECK (shoal_opener_new (keyring, &s_receiver, 0) == NULL);
    shoal_opener_t *opener = shoal_opener_new (keyring, &s_receiver, 2);
    uint8_t payload[10] = { 0 }, sealed[3][BUFFER_SIZE];
    long sizes[3];
    for (int i = 0; i < 3; i++) {
        shoal_sealer_t *sealer = s_sealer (keyring, (uint8_t) (50 + i), 1);
        sizes[i] = s_seal (sealer, SHOAL_PURPOSE_DATAGRAM, payload, sizeof payload, sealed[i],
                           sizeof sealed[i]);
        CHECK_EQ (s_open (opener, SHOAL_PURPOSE_DATAGRAM, sealed[i], sizes[i]), SHOAL_OPEN_OK);
        shoal_sealer_destroy (&sealer);
    }
    CHECK_EQ (shoal_opener_evictions (opener), 1);
    //  The first sender was forgotten, so its envelope passes again: the
    //  cost of a table sized below the cluster.
    CHECK_EQ (s_open (opener, SHOAL_PURPOSE_DATAGRAM, sealed[2], sizes[2]), SHOAL_OPEN_REPLAYED);
    CHECK_EQ (s_open (opener, SHOAL_PURPOSE_DATAGRAM, sealed[0], sizes[0]), SHOAL_OPEN_OK);
    CHECK_EQ (shoal_opener_evictions (opener), 2);
    shoal_opener_destroy (&opener);
    CHECK (opener == NULL);
    shoal_opener_destroy (&opener);
    shoal_keyring_destroy (&keyring);
}

//  A node is named by an id that is not all zero and a life of at least 1:
//  all zero, id and life, means "nobody", the recipient of an unaddressed
//  envelope, and half of it names nothing, so neither can be a node's own.
static void
only_named_lives_seal_and_open (void)
{
    uint8_t nonce[SHOAL_ENVELOPE_NONCE];
    s_nonce (nonce, 1);
    shoal_life_t nobody = { .life = 3 }, lifeless = s_life (0x40, 0);
    CHECK (shoal_sealer_new (NULL, &nobody, nonce) == NULL);
    CHECK (shoal_sealer_new (NULL, &lifeless, nonce) == NULL);
    CHECK (shoal_opener_new (NULL, &nobody, 4) == NULL);
    CHECK (shoal_opener_new (NULL, &lifeless, 4) == NULL);

    shoal_sealer_t *sealer = s_sealer (NULL, 0x40, 2);
    uint8_t payload[8] = { 0 }, out[BUFFER_SIZE];

    //  An envelope that claims no sender, or a sender without a life, is
    //  malformed (plaintext, where the claim can be written by anyone).
    long size = s_seal (sealer, SHOAL_PURPOSE_FRAME, payload, sizeof payload, out, sizeof out);
    CHECK (size > 0);
    CHECK_EQ (s_open_fresh (NULL, SHOAL_PURPOSE_FRAME, out, (size_t) size), SHOAL_OPEN_OK);
    uint8_t forged[BUFFER_SIZE];
    memcpy (forged, out, (size_t) size);
    memset (forged + AT_SENDER, 0, 16);
    CHECK_EQ (s_open_fresh (NULL, SHOAL_PURPOSE_FRAME, forged, (size_t) size),
              SHOAL_OPEN_MALFORMED);
    memcpy (forged, out, (size_t) size);
    s_put_be64 (forged + AT_SENDER_LIFE, 0);
    CHECK_EQ (s_open_fresh (NULL, SHOAL_PURPOSE_FRAME, forged, (size_t) size),
              SHOAL_OPEN_MALFORMED);
    shoal_sealer_destroy (&sealer);
}

//  A node does not seal to itself, at any of its lives: the receiver would
//  refuse the envelope as its own.
static void
sealer_refuses_to_address_its_own_node (void)
{
    const uint8_t fills[] = { 37 };
    shoal_keyring_t *keyring = s_keyring (fills, 1);
    shoal_sealer_t *sealer = s_sealer (keyring, 0x41, 2);
    const shoal_life_t lives[] = { s_life (0x41, 2), s_life (0x41, 1), s_life (0x41, 3) };
    uint8_t payload[8] = { 0 }, out[BUFFER_SIZE];
    for (size_t i = 0; i < sizeof lives / sizeof lives[0]; i++)
        CHECK_EQ (shoal_sealer_seal (sealer, SHOAL_PURPOSE_FRAME, &lives[i], payload,
                                     sizeof payload, out, sizeof out),
                  -1);
    //  The refusals used up no sequence number.
    long size = s_seal (sealer, SHOAL_PURPOSE_FRAME, payload, sizeof payload, out, sizeof out);
    CHECK_EQ (size, (long) sizeof payload + SHOAL_ENVELOPE_OVERHEAD);
    CHECK_EQ (s_get_be64 (out + AT_SEQ), 1);
    shoal_sealer_destroy (&sealer);
    shoal_keyring_destroy (&keyring);
}

//  Sequence numbers start at 1, so an envelope numbered 0 is none a sealer
//  wrote. It is refused on the claim, before anything is authenticated.
static void
sequence_number_zero_is_malformed (void)
{
    const uint8_t fills[] = { 38 };
    shoal_keyring_t *keyring = s_keyring (fills, 1);
    const shoal_keyring_t *keyrings[] = { keyring, NULL };
    for (size_t k = 0; k < 2; k++) {
        shoal_sealer_t *sealer = s_sealer (keyrings[k], 0x42, 1);
        uint8_t payload[16], sealed[BUFFER_SIZE];
        s_payload (payload, sizeof payload, 20);
        long size =
            s_seal (sealer, SHOAL_PURPOSE_FRAME, payload, sizeof payload, sealed, sizeof sealed);
        CHECK_EQ (s_open_fresh (keyrings[k], SHOAL_PURPOSE_FRAME, sealed, (size_t) size),
                  SHOAL_OPEN_OK);
        s_put_be64 (sealed + AT_SEQ, 0);
        CHECK_EQ (s_open_fresh (keyrings[k], SHOAL_PURPOSE_FRAME, sealed, (size_t) size),
                  SHOAL_OPEN_MALFORMED);
        shoal_sealer_destroy (&sealer);
    }
    shoal_keyring_destroy (&keyring);
}

//  Anyone can record beacons, and a node that is gone leaves its beacons
//  authentic forever. Unaddressed envelopes keep their replay windows in a
//  table of their own, so replaying the beacons of many retired ids fills
//  only that table: the windows of addressed traffic stay, and its replays
//  are still refused.
static void
unaddressed_replays_cannot_evict_addressed_windows (void)
{
    const uint8_t fills[] = { 39 };
    shoal_keyring_t *keyring = s_keyring (fills, 1);
    shoal_opener_t *opener = shoal_opener_new (keyring, &s_receiver, 2);
    uint8_t payload[16], from_a[BUFFER_SIZE], sealed[BUFFER_SIZE];
    s_payload (payload, sizeof payload, 21);

    //  A's third datagram, the first two having gone to other nodes.
    shoal_sealer_t *a = s_sealer (keyring, 0x50, 1);
    const shoal_life_t others[] = { s_life (0x51, 1), s_life (0x52, 1) };
    for (size_t i = 0; i < 2; i++)
        shoal_sealer_seal (a, SHOAL_PURPOSE_DATAGRAM, &others[i], payload, sizeof payload, sealed,
                           sizeof sealed);
    long a_size =
        s_seal (a, SHOAL_PURPOSE_DATAGRAM, payload, sizeof payload, from_a, sizeof from_a);
    CHECK_EQ (s_get_be64 (from_a + AT_SEQ), 3);
    CHECK_EQ (s_open (opener, SHOAL_PURPOSE_DATAGRAM, from_a, a_size), SHOAL_OPEN_OK);

    for (int i = 0; i < 10; i++) {
        shoal_sealer_t *retired = s_sealer (keyring, (uint8_t) (0x60 + i), 1);
        long size = shoal_sealer_seal (retired, SHOAL_PURPOSE_BEACON, NULL, payload, sizeof payload,
                                       sealed, sizeof sealed);
        CHECK_EQ (s_open (opener, SHOAL_PURPOSE_BEACON, sealed, size), SHOAL_OPEN_OK);
        shoal_sealer_destroy (&retired);
    }
    //  Ten senders through two windows: eight forgotten, all unaddressed.
    CHECK_EQ (shoal_opener_evictions (opener), 8);
    CHECK_EQ (s_open (opener, SHOAL_PURPOSE_DATAGRAM, from_a, a_size), SHOAL_OPEN_REPLAYED);

    //  Addressed senders do push each other out, once there are more of
    //  them than windows: then A's envelope would pass again.
    for (int i = 0; i < 2; i++) {
        shoal_sealer_t *peer = s_sealer (keyring, (uint8_t) (0x53 + i), 1);
        long size =
            s_seal (peer, SHOAL_PURPOSE_DATAGRAM, payload, sizeof payload, sealed, sizeof sealed);
        CHECK_EQ (s_open (opener, SHOAL_PURPOSE_DATAGRAM, sealed, size), SHOAL_OPEN_OK);
        shoal_sealer_destroy (&peer);
    }
    CHECK (shoal_opener_evictions (opener) > 8);
    CHECK_EQ (s_open (opener, SHOAL_PURPOSE_DATAGRAM, from_a, a_size), SHOAL_OPEN_OK);
    shoal_sealer_destroy (&a);
    shoal_opener_destroy (&opener);
    shoal_keyring_destroy (&keyring);
}

//  An answer sealed with the key the request came with opens where only
//  that key is held, while the primary is another; a key not installed
//  falls back to the primary.
static void
seal_with_uses_the_key_asked_while_installed (void)
{
    static const uint8_t both[] = { 0x11, 0x22 }, old_only[] = { 0x11 };
    shoal_keyring_t *keyring = s_keyring (both, 2);
    shoal_keyring_use (keyring, s_key_id (0x22));
    shoal_keyring_t *old = s_keyring (old_only, 1);
    shoal_sealer_t *sealer = s_sealer (keyring, 0x51, 1);
    uint8_t payload[64], out[BUFFER_SIZE];
    s_payload (payload, sizeof payload, 3);
    long size = shoal_sealer_seal_with (sealer, s_key_id (0x11), SHOAL_PURPOSE_FRAME, &s_receiver,
                                        payload, sizeof payload, out, sizeof out);
    CHECK (size > 0);
    CHECK_EQ (s_open_fresh (old, SHOAL_PURPOSE_FRAME, out, (size_t) size), SHOAL_OPEN_OK);
    size = shoal_sealer_seal (sealer, SHOAL_PURPOSE_FRAME, &s_receiver, payload, sizeof payload,
                              out, sizeof out);
    CHECK_EQ (s_open_fresh (old, SHOAL_PURPOSE_FRAME, out, (size_t) size), SHOAL_OPEN_UNKNOWN_KEY);
    size = shoal_sealer_seal_with (sealer, s_key_id (0x33), SHOAL_PURPOSE_FRAME, &s_receiver,
                                   payload, sizeof payload, out, sizeof out);
    CHECK_EQ (s_open_fresh (old, SHOAL_PURPOSE_FRAME, out, (size_t) size), SHOAL_OPEN_UNKNOWN_KEY);
    CHECK_EQ (s_open_fresh (keyring, SHOAL_PURPOSE_FRAME, out, (size_t) size), SHOAL_OPEN_OK);
    shoal_sealer_destroy (&sealer);
    shoal_keyring_destroy (&old);
    shoal_keyring_destroy (&keyring);
}

int
main (void)
{
    RUN (seal_with_uses_the_key_asked_while_installed);
    RUN (seal_then_open_gives_back_payload_and_header);
    RUN (plaintext_round_trip_without_keys);
    RUN (header_layout_matches_the_spec);
    RUN (ciphertext_does_not_show_the_payload);
    RUN (known_answers_match_the_spec);
    RUN (opener_without_the_key_says_unknown_key);
    RUN (key_id_of_another_installed_key_is_forged);
    RUN (envelope_is_bound_to_its_recipient);
    RUN (recipient_id_without_a_life_is_malformed);
    RUN (envelope_for_an_earlier_life_is_stale);
    RUN (zero_recipient_id_with_a_life_is_malformed);
    RUN (sealer_refuses_to_address_its_own_node);
    RUN (sequence_number_zero_is_malformed);
    RUN (readdressed_sealed_envelope_is_forged);
    RUN (every_flipped_bit_is_refused);
    RUN (plaintext_flips_meet_the_header_checks);
    RUN (every_truncation_and_extension_is_refused);
    RUN (forged_envelope_does_not_move_replay_window);
    RUN (same_envelope_twice_is_replayed);
    RUN (reordering_inside_window_loses_nothing);
    RUN (envelope_older_than_window_is_stale);
    RUN (new_sender_life_resets_the_window);
    RUN (plaintext_keeps_no_replay_window);
    RUN (purposes_are_numbered_apart);
    RUN (envelope_for_another_carrier_is_refused);
    RUN (keyed_node_refuses_plaintext);
    RUN (unkeyed_node_refuses_sealed);
    RUN (mode_and_key_id_must_agree);
    RUN (each_carrier_has_its_size_limit_and_name);
    RUN (open_refuses_wrong_sizes);
    RUN (open_refuses_output_too_small_and_records_nothing);
    RUN (seal_refuses_what_does_not_fit);
    RUN (key_rotation_loses_no_message);
    RUN (primary_key_cannot_be_removed);
    RUN (result_names_are_distinct);
    RUN (only_named_lives_seal_and_open);
    RUN (opener_counts_forgotten_senders);
    RUN (unaddressed_replays_cannot_evict_addressed_windows);
    return TEST_DONE ();
}

/*  tests/test_keyfile.c: the keyring a node keeps in its data directory
    (node/keyfile.h).

    A keyring comes back from its payload with the same keys and the same
    primary, at one key and at the most. Then payloads as a bug, a later
    build or a damaged disk might leave them are refused, each with a
    reason that names what is wrong: every length cut short, another
    version, no keys or too many, a primary past the keys, a key twice,
    bytes after the keys. Every byte string up to a few bytes is tried, so
    that no payload makes the decoder crash.
*/

#include "node/keyfile.h"
#include "tests/test.h"

#include <stdint.h>
#include <string.h>

static void
s_key_fill (uint8_t key[SHOAL_KEY_SIZE], uint8_t seed)
{
    for (int i = 0; i < SHOAL_KEY_SIZE; i++)
        key[i] = (uint8_t) (seed * 37u + (unsigned) i * 11u);
}

//  A keyring of count keys (seeds 1..count), primary the key of seed primary.
static shoal_keyring_t *
s_keyring (size_t count, uint8_t primary)
{
    shoal_keyring_t *keyring = shoal_keyring_new ();
    uint8_t key[SHOAL_KEY_SIZE];
    for (size_t i = 0; i < count; i++) {
        s_key_fill (key, (uint8_t) (i + 1));
        shoal_keyring_install (keyring, key);
    }
    s_key_fill (key, primary);
    shoal_keyring_use (keyring, shoal_key_id (key));
    return keyring;
}

//  Decodes size bytes into a fresh keyring; the reason lands in why.
static int
s_decode (const uint8_t *data, size_t size, char *why, size_t why_size)
{
    shoal_keyring_t *keyring = shoal_keyring_new ();
    why[0] = 0;
    int rc = shoal_keyfile_decode (data, size, keyring, why, why_size);
    shoal_keyring_destroy (&keyring);
    return rc;
}

static void
a_keyring_comes_back_with_its_keys_and_primary (void)
{
    size_t counts[] = { 1, 3, SHOAL_KEYRING_MAX };
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        shoal_keyring_t *keyring = s_keyring (counts[c], (uint8_t) counts[c]);
        uint8_t payload[SHOAL_KEYFILE_MAX];
        long size = shoal_keyfile_encode (keyring, payload);
        CHECK_EQ (size, (long) (SHOAL_KEYFILE_HEADER + counts[c] * SHOAL_KEY_SIZE));
        shoal_keyring_t *back = shoal_keyring_new ();
        char why[200] = "";
        CHECK_EQ (shoal_keyfile_decode (payload, (size_t) size, back, why, sizeof why), 0);
        CHECK_EQ (shoal_keyring_size (back), counts[c]);
        CHECK_EQ (shoal_keyring_primary (back), shoal_keyring_primary (keyring));
        for (size_t i = 0; i < counts[c]; i++) {
            uint32_t id = shoal_keyring_id_at (keyring, i);
            CHECK (shoal_keyring_key (back, id) != NULL);
            CHECK (memcmp (shoal_keyring_key (back, id), shoal_keyring_key (keyring, id),
                           SHOAL_KEY_SIZE) == 0);
        }
        shoal_keyring_destroy (&back);
        shoal_keyring_destroy (&keyring);
    }
}

static void
an_empty_keyring_is_never_written (void)
{
    shoal_keyring_t *keyring = shoal_keyring_new ();
    uint8_t payload[SHOAL_KEYFILE_MAX];
    CHECK_EQ (shoal_keyfile_encode (keyring, payload), -1);
    shoal_keyring_destroy (&keyring);
}

static void
a_payload_cut_short_is_refused_at_every_length (void)
{
    shoal_keyring_t *keyring = s_keyring (3, 2);
    uint8_t payload[SHOAL_KEYFILE_MAX];
    long size = shoal_keyfile_encode (keyring, payload);
    char why[200];
    for (long cut = 0; cut < size; cut++) {
        CHECK_EQ (s_decode (payload, (size_t) cut, why, sizeof why), -1);
        CHECK (why[0] != 0);
    }
    CHECK_EQ (s_decode (payload, 2, why, sizeof why), -1);
    CHECK_CONTAINS (why, "too short");
    CHECK_EQ (s_decode (payload, (size_t) size - 1, why, sizeof why), -1);
    CHECK_CONTAINS (why, "bytes for 3 keys");
    shoal_keyring_destroy (&keyring);
}

static void
a_payload_that_breaks_a_rule_is_refused_with_the_rule (void)
{
    shoal_keyring_t *keyring = s_keyring (2, 1);
    uint8_t good[SHOAL_KEYFILE_MAX + 1], bad[SHOAL_KEYFILE_MAX + 1];
    long size = shoal_keyfile_encode (keyring, good);
    char why[200];

    memcpy (bad, good, (size_t) size);
    bad[0] = 2;
    CHECK_EQ (s_decode (bad, (size_t) size, why, sizeof why), -1);
    CHECK_CONTAINS (why, "format version 2");

    memcpy (bad, good, (size_t) size);
    bad[1] = 0;
    CHECK_EQ (s_decode (bad, (size_t) size, why, sizeof why), -1);
    CHECK_CONTAINS (why, "0 keys");

    memcpy (bad, good, (size_t) size);
    bad[1] = SHOAL_KEYRING_MAX + 1;
    CHECK_EQ (s_decode (bad, (size_t) size, why, sizeof why), -1);
    CHECK_CONTAINS (why, "9 keys");

    memcpy (bad, good, (size_t) size);
    bad[2] = 2;
    CHECK_EQ (s_decode (bad, (size_t) size, why, sizeof why), -1);
    CHECK_CONTAINS (why, "the primary is key 2 of 2");

    //  The second key the same as the first.
    memcpy (bad, good, (size_t) size);
    memcpy (bad + SHOAL_KEYFILE_HEADER + SHOAL_KEY_SIZE, bad + SHOAL_KEYFILE_HEADER,
            SHOAL_KEY_SIZE);
    CHECK_EQ (s_decode (bad, (size_t) size, why, sizeof why), -1);
    CHECK_CONTAINS (why, "key 1 is there twice");

    //  One byte after the keys.
    memcpy (bad, good, (size_t) size);
    bad[size] = 0;
    CHECK_EQ (s_decode (bad, (size_t) size + 1, why, sizeof why), -1);
    CHECK_CONTAINS (why, "bytes for 2 keys");

    //  A keyring that holds keys already is not filled.
    shoal_keyring_t *full = s_keyring (1, 1);
    CHECK_EQ (shoal_keyfile_decode (good, (size_t) size, full, why, sizeof why), -1);
    CHECK_CONTAINS (why, "not empty");
    shoal_keyring_destroy (&full);
    shoal_keyring_destroy (&keyring);
}

//  Every payload of up to 3 bytes, and every header before one key: no
//  crash, and nothing short of a whole key is taken.
static void
no_short_payload_is_taken (void)
{
    uint8_t data[SHOAL_KEYFILE_HEADER + SHOAL_KEY_SIZE] = { 0 };
    char why[200];
    for (unsigned a = 0; a < 256; a++)
        for (unsigned b = 0; b < 256; b += 3) {
            data[0] = (uint8_t) a;
            data[1] = (uint8_t) b;
            for (unsigned p = 0; p < 3; p++) {
                data[2] = (uint8_t) p;
                for (size_t size = 0; size <= SHOAL_KEYFILE_HEADER; size++)
                    CHECK_EQ (s_decode (data, size, why, sizeof why), -1);
                int rc = s_decode (data, sizeof data, why, sizeof why);
                CHECK_EQ (rc, a == 1 && b == 1 && p == 0 ? 0 : -1);
            }
        }
}

int
main (void)
{
    RUN (a_keyring_comes_back_with_its_keys_and_primary);
    RUN (an_empty_keyring_is_never_written);
    RUN (a_payload_cut_short_is_refused_at_every_length);
    RUN (a_payload_that_breaks_a_rule_is_refused_with_the_rule);
    RUN (no_short_payload_is_taken);
    return TEST_DONE ();
}

/*  tests/test_keys.c: cluster keys, their text form, and the keyring.

    Keys here are built from a counter rather than drawn at random, so that
    every run sees the same ids and a failure can be replayed.
*/

#include "wire/keyring.h"
#include "shoal.h"
#include "tests/test.h"

#include <stdbool.h>
#include <stdint.h>
#include <sodium.h>
#include <string.h>

//  A key whose bytes all derive from seed, different for every seed.
static void
s_key_fill (uint8_t key[SHOAL_KEY_BYTES], uint32_t seed)
{
    for (int i = 0; i < SHOAL_KEY_BYTES; i++)
        key[i] = (uint8_t) (seed * 131u + (uint32_t) i * 29u + (seed >> 8) * 7u + (uint32_t) i * i);
    //  The seed itself goes in whole, so no two seeds below 2^32 collide.
    key[0] = (uint8_t) seed;
    key[1] = (uint8_t) (seed >> 8);
    key[2] = (uint8_t) (seed >> 16);
    key[3] = (uint8_t) (seed >> 24);
}

//  Parses text into a key that was filled with garbage first, so that a
//  refusal can be seen to leave the key zeroed rather than untouched.
static int
s_parse (const char *text, uint8_t key[SHOAL_KEY_BYTES])
{
    memset (key, 0xa5, SHOAL_KEY_BYTES);
    return shoal_key_parse (text, key);
}

//  Checks that text is refused and leaves the key all zero.
#define CHECK_REFUSED(text)                                                                        \
    do {                                                                                           \
        uint8_t refused_[SHOAL_KEY_BYTES];                                                         \
        CHECK_EQ (s_parse ((text), refused_), -1);                                                 \
        CHECK (sodium_is_zero (refused_, sizeof refused_));                                        \
    } while (0)

//  The text form of the key made from seed.
static void
s_key_text (uint32_t seed, char text[SHOAL_KEY_TEXT_BYTES])
{
    uint8_t key[SHOAL_KEY_BYTES];
    s_key_fill (key, seed);
    shoal_key_format (key, text);
}

//  ---------------------------------------------------------------------
//  Text form

static void
format_then_parse_gives_back_the_key (void)
{
    for (uint32_t seed = 0; seed < 64; seed++) {
        uint8_t key[SHOAL_KEY_BYTES], parsed[SHOAL_KEY_BYTES];
        char text[SHOAL_KEY_TEXT_BYTES];
        s_key_fill (key, seed);
        CHECK_EQ (shoal_key_format (key, text), 0);
        CHECK_EQ (strlen (text), 44);
        CHECK_EQ (text[43], '=');
        CHECK_EQ (s_parse (text, parsed), 0);
        CHECK (memcmp (key, parsed, SHOAL_KEY_BYTES) == 0);
    }
    //  The extremes of the byte range survive too.
    uint8_t zeros[SHOAL_KEY_BYTES] = { 0 }, ones[SHOAL_KEY_BYTES], parsed[SHOAL_KEY_BYTES];
    memset (ones, 0xff, sizeof ones);
    char text[SHOAL_KEY_TEXT_BYTES];
    shoal_key_format (zeros, text);
    CHECK_STR (text, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=");
    CHECK_EQ (s_parse (text, parsed), 0);
    CHECK (sodium_is_zero (parsed, sizeof parsed));
    shoal_key_format (ones, text);
    CHECK_STR (text, "//////////////////////////////////////////8=");
    CHECK_EQ (s_parse (text, parsed), 0);
    CHECK (memcmp (ones, parsed, SHOAL_KEY_BYTES) == 0);
}

static void
parse_ignores_surrounding_whitespace (void)
{
    uint8_t key[SHOAL_KEY_BYTES], parsed[SHOAL_KEY_BYTES];
    char text[SHOAL_KEY_TEXT_BYTES];
    s_key_fill (key, 7);
    shoal_key_format (key, text);

    //  A key file ends in a newline, and people paste with stray blanks.
    const char *frames[][2] = {
        { "", "\n" },     { "", "\r\n" },   { "  ", "" },     { "\t", "\t\n" },
        { "\n\n", "  " }, { " ", " \n\n" }, { "\v\f", "\r" },
    };
    for (size_t i = 0; i < sizeof frames / sizeof frames[0]; i++) {
        char framed[128];
        snprintf (framed, sizeof framed, "%s%s%s", frames[i][0], text, frames[i][1]);
        CHECK_EQ (s_parse (framed, parsed), 0);
        CHECK (memcmp (key, parsed, SHOAL_KEY_BYTES) == 0);
    }

    //  A lot of whitespace is still only whitespace.
    char padded[600];
    memset (padded, ' ', sizeof padded);
    memcpy (padded + 200, text, 44);
    padded[sizeof padded - 1] = '\0';
    CHECK_EQ (s_parse (padded, parsed), 0);
    CHECK (memcmp (key, parsed, SHOAL_KEY_BYTES) == 0);
}

static void
parse_refuses_wrong_lengths (void)
{
    char text[SHOAL_KEY_TEXT_BYTES];
    s_key_text (11, text);

    CHECK_REFUSED ("");
    CHECK_REFUSED ("   \n");
    CHECK_REFUSED (NULL);

    char shorter[SHOAL_KEY_TEXT_BYTES];
    memcpy (shorter, text + 1, 44); //  43 characters, padding kept
    CHECK_EQ (strlen (shorter), 43);
    CHECK_REFUSED (shorter);

    char longer[SHOAL_KEY_TEXT_BYTES + 1];
    snprintf (longer, sizeof longer, "A%s", text); //  45 characters
    CHECK_EQ (strlen (longer), 45);
    CHECK_REFUSED (longer);

    //  Two keys in a row are not one key.
    char twice[2 * SHOAL_KEY_TEXT_BYTES];
    snprintf (twice, sizeof twice, "%s%s", text, text);
    CHECK_REFUSED (twice);
}

static void
parse_refuses_very_long_text (void)
{
    char text[SHOAL_KEY_TEXT_BYTES];
    s_key_text (12, text);

    //  Base64 all the way, far longer than any key.
    char long_text[4096];
    memset (long_text, 'A', sizeof long_text - 1);
    long_text[sizeof long_text - 1] = '\0';
    CHECK_REFUSED (long_text);

    //  A valid key followed by a long tail of characters that are not blank.
    memset (long_text, 'A', sizeof long_text - 1);
    memcpy (long_text, text, 44);
    CHECK_REFUSED (long_text);
}

//  Whitespace is ignored only around the key: whatever follows the blanks
//  must still make the text refused, however many blanks there are.
static void
parse_refuses_text_after_long_whitespace (void)
{
    char text[SHOAL_KEY_TEXT_BYTES];
    s_key_text (13, text);
    size_t accepted = 0, first_accepted = 0;
    bool zeroed = true;
    for (size_t blanks = 1; blanks <= 200; blanks++) {
        char trailing[512];
        memcpy (trailing, text, 44);
        memset (trailing + 44, ' ', blanks);
        snprintf (trailing + 44 + blanks, sizeof trailing - 44 - blanks, "junk");
        uint8_t key[SHOAL_KEY_BYTES];
        if (s_parse (trailing, key) == -1)
            zeroed = zeroed && sodium_is_zero (key, sizeof key);
        else if (accepted++ == 0)
            first_accepted = blanks;
    }
    if (accepted)
        fprintf (stderr, "  a key followed by %zu or more blanks and \"junk\" was accepted\n",
                 first_accepted);
    CHECK_EQ (accepted, 0);
    CHECK (zeroed);

    //  The same with the junk on a later line, after a run of blank ones.
    char lines[256];
    snprintf (lines, sizeof lines, "%s\n%*s\nsecond line\n", text, 80, "");
    CHECK_REFUSED (lines);
}

static void
parse_refuses_characters_outside_standard_base64 (void)
{
    char text[SHOAL_KEY_TEXT_BYTES];
    s_key_text (14, text);

    //  One wrong character anywhere in the body of the key, including the
    //  URL-safe alphabet's '-' and '_', which this format does not use.
    const char wrong[] = { '-', '_', '*', '!', '.', ' ', '\t', '=', '~', '\x01', '\x7f' };
    for (size_t i = 0; i < sizeof wrong; i++)
        for (size_t at = 0; at < 43; at += 6) {
            char bad[SHOAL_KEY_TEXT_BYTES];
            memcpy (bad, text, sizeof bad);
            bad[at] = wrong[i];
            CHECK_REFUSED (bad);
        }
}

//  Bytes with the high bit set are not base64 either, whether they come as
//  part of a UTF-8 character pasted by mistake or as plain noise.
static void
parse_refuses_non_ascii_bytes (void)
{
    char text[SHOAL_KEY_TEXT_BYTES];
    s_key_text (17, text);
    int accepted = 0, first_accepted = 0;
    for (int byte = 0x80; byte <= 0xff; byte++)
        for (size_t at = 0; at < 43; at += 7) {
            char bad[SHOAL_KEY_TEXT_BYTES];
            memcpy (bad, text, sizeof bad);
            bad[at] = (char) byte;
            uint8_t key[SHOAL_KEY_BYTES];
            if (s_parse (bad, key) != -1 && accepted++ == 0)
                first_accepted = byte;
        }
    if (accepted)
        fprintf (stderr, "  a key with byte 0x%02x in it was accepted\n", first_accepted);
    CHECK_EQ (accepted, 0);

    //  "é" in UTF-8 where a '/' would be.
    CHECK_REFUSED ("\xc3\xa9////////////////////////////////////////8=");
}

static void
parse_refuses_url_safe_variant (void)
{
    //  All ones is "/" throughout in standard base64 and "_" in URL-safe; a
    //  text that has '+' in standard form has '-' in URL-safe form.
    CHECK_REFUSED ("__________________________________________8=");
    CHECK_REFUSED ("------------------------------------------8=");
    CHECK_REFUSED ("__________________________________________8");
    uint8_t key[SHOAL_KEY_BYTES];
    CHECK_EQ (s_parse ("++++++++++++++++++++++++++++++++++++++++++8=", key), 0);
}

static void
parse_refuses_missing_or_wrong_padding (void)
{
    char text[SHOAL_KEY_TEXT_BYTES];
    s_key_text (15, text);

    //  Padding dropped: 43 characters.
    char unpadded[SHOAL_KEY_TEXT_BYTES];
    memcpy (unpadded, text, 43);
    unpadded[43] = '\0';
    CHECK_REFUSED (unpadded);

    //  Padding replaced by a data character: 44 characters, 33 bytes' worth.
    char filled[SHOAL_KEY_TEXT_BYTES];
    memcpy (filled, text, sizeof filled);
    filled[43] = 'A';
    CHECK_REFUSED (filled);

    //  The text of 31 bytes is 44 characters too, with double padding.
    CHECK_REFUSED ("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==");

    //  Padding where data belongs.
    char early[SHOAL_KEY_TEXT_BYTES];
    memcpy (early, text, sizeof early);
    early[42] = '=';
    CHECK_REFUSED (early);

    //  Padding dropped and made up with a blank.
    char blank[SHOAL_KEY_TEXT_BYTES];
    memcpy (blank, text, sizeof blank);
    blank[43] = ' ';
    CHECK_REFUSED (blank);
}

static void
parse_refuses_embedded_space (void)
{
    char text[SHOAL_KEY_TEXT_BYTES];
    s_key_text (16, text);
    for (size_t at = 1; at < 43; at++) {
        //  The key split in two by a blank, keeping its length at 44.
        char split[SHOAL_KEY_TEXT_BYTES + 1];
        memcpy (split, text, at);
        split[at] = ' ';
        memcpy (split + at + 1, text + at, 44 - at);
        split[45] = '\0';
        CHECK_REFUSED (split);
        //  And a blank over one character.
        char over[SHOAL_KEY_TEXT_BYTES];
        memcpy (over, text, sizeof over);
        over[at] = ' ';
        CHECK_REFUSED (over);
    }
}

//  The last character before the padding carries two bits that no key uses;
//  a text with them set is not the text of any key.
static void
parse_refuses_noncanonical_last_character (void)
{
    CHECK_REFUSED ("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAB=");
    CHECK_REFUSED ("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAD=");
    uint8_t key[SHOAL_KEY_BYTES];
    CHECK_EQ (s_parse ("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAE=", key), 0);
    CHECK_EQ (key[31], 1);
}

static void
generate_gives_different_keys (void)
{
    uint8_t first[SHOAL_KEY_BYTES], second[SHOAL_KEY_BYTES];
    CHECK_EQ (shoal_key_generate (first), 0);
    CHECK_EQ (shoal_key_generate (second), 0);
    CHECK (memcmp (first, second, SHOAL_KEY_BYTES) != 0);
    CHECK (!sodium_is_zero (first, sizeof first));

    //  A generated key goes through its text form unchanged.
    char text[SHOAL_KEY_TEXT_BYTES];
    uint8_t parsed[SHOAL_KEY_BYTES];
    shoal_key_format (first, text);
    CHECK_EQ (s_parse (text, parsed), 0);
    CHECK (memcmp (first, parsed, SHOAL_KEY_BYTES) == 0);
}

//  ---------------------------------------------------------------------
//  Key ids

static void
key_id_is_stable_and_never_zero (void)
{
    uint8_t key[SHOAL_KEY_BYTES];
    for (uint32_t seed = 0; seed < 300; seed++) {
        s_key_fill (key, seed);
        uint32_t id = shoal_key_id (key);
        CHECK (id != 0);
        CHECK_EQ (shoal_key_id (key), id);
    }
    uint8_t zeros[SHOAL_KEY_BYTES] = { 0 };
    CHECK (shoal_key_id (zeros) != 0);
}

static void
key_ids_differ_between_keys (void)
{
    enum { KEYS = 400 };
    static uint32_t ids[KEYS];
    uint8_t key[SHOAL_KEY_BYTES];
    for (uint32_t seed = 0; seed < KEYS; seed++) {
        s_key_fill (key, seed);
        ids[seed] = shoal_key_id (key);
    }
    int collisions = 0;
    for (int i = 0; i < KEYS; i++)
        for (int j = i + 1; j < KEYS; j++)
            collisions += ids[i] == ids[j];
    CHECK_EQ (collisions, 0);

    //  Keys one bit apart get unrelated ids.
    uint8_t base[SHOAL_KEY_BYTES];
    s_key_fill (base, 99);
    for (int bit = 0; bit < SHOAL_KEY_BYTES * 8; bit++) {
        memcpy (key, base, sizeof key);
        key[bit / 8] ^= (uint8_t) (1u << (bit % 8));
        CHECK (shoal_key_id (key) != shoal_key_id (base));
    }
}

//  ---------------------------------------------------------------------
//  Keyring

static void
new_keyring_is_empty (void)
{
    shoal_keyring_t *keyring = shoal_keyring_new ();
    CHECK (keyring != NULL);
    CHECK_EQ (shoal_keyring_size (keyring), 0);
    CHECK_EQ (shoal_keyring_primary (keyring), 0);
    CHECK (shoal_keyring_subkey (keyring, 0, SHOAL_PURPOSE_FRAME) == NULL);
    CHECK (shoal_keyring_subkey (keyring, 1, SHOAL_PURPOSE_FRAME) == NULL);
    shoal_keyring_destroy (&keyring);
}

static void
first_installed_key_is_primary (void)
{
    shoal_keyring_t *keyring = shoal_keyring_new ();
    uint8_t first[SHOAL_KEY_BYTES], second[SHOAL_KEY_BYTES];
    s_key_fill (first, 1);
    s_key_fill (second, 2);
    CHECK_EQ (shoal_keyring_install (keyring, first), 0);
    CHECK_EQ (shoal_keyring_primary (keyring), shoal_key_id (first));
    CHECK_EQ (shoal_keyring_install (keyring, second), 0);
    CHECK_EQ (shoal_keyring_primary (keyring), shoal_key_id (first));
    CHECK_EQ (shoal_keyring_size (keyring), 2);
    shoal_keyring_destroy (&keyring);
}

static void
install_same_key_twice_fails (void)
{
    shoal_keyring_t *keyring = shoal_keyring_new ();
    uint8_t key[SHOAL_KEY_BYTES];
    s_key_fill (key, 3);
    CHECK_EQ (shoal_keyring_install (keyring, key), 0);
    CHECK_EQ (shoal_keyring_install (keyring, key), -1);
    CHECK_EQ (shoal_keyring_size (keyring), 1);
    CHECK_EQ (shoal_keyring_primary (keyring), shoal_key_id (key));
    shoal_keyring_destroy (&keyring);
}

static void
keyring_full_at_max (void)
{
    shoal_keyring_t *keyring = shoal_keyring_new ();
    uint8_t key[SHOAL_KEY_BYTES];
    for (uint32_t seed = 0; seed < SHOAL_KEYRING_MAX; seed++) {
        s_key_fill (key, 100 + seed);
        CHECK_EQ (shoal_keyring_install (keyring, key), 0);
    }
    CHECK_EQ (shoal_keyring_size (keyring), SHOAL_KEYRING_MAX);
    s_key_fill (key, 100 + SHOAL_KEYRING_MAX);
    CHECK_EQ (shoal_keyring_install (keyring, key), -1);
    CHECK_EQ (shoal_keyring_size (keyring), SHOAL_KEYRING_MAX);
    CHECK (shoal_keyring_subkey (keyring, shoal_key_id (key), SHOAL_PURPOSE_FRAME) == NULL);

    //  Removing one makes room again.
    uint8_t old[SHOAL_KEY_BYTES];
    s_key_fill (old, 101);
    CHECK_EQ (shoal_keyring_remove (keyring, shoal_key_id (old)), 0);
    CHECK_EQ (shoal_keyring_install (keyring, key), 0);
    CHECK_EQ (shoal_keyring_size (keyring), SHOAL_KEYRING_MAX);
    shoal_keyring_destroy (&keyring);
}

static void
use_switches_primary_only_to_installed_keys (void)
{
    shoal_keyring_t *keyring = shoal_keyring_new ();
    uint8_t first[SHOAL_KEY_BYTES], second[SHOAL_KEY_BYTES], stranger[SHOAL_KEY_BYTES];
    s_key_fill (first, 21);
    s_key_fill (second, 22);
    s_key_fill (stranger, 23);

    //  An empty keyring has nothing to use.
    CHECK_EQ (shoal_keyring_use (keyring, shoal_key_id (first)), -1);
    CHECK_EQ (shoal_keyring_primary (keyring), 0);

    shoal_keyring_install (keyring, first);
    shoal_keyring_install (keyring, second);
    CHECK_EQ (shoal_keyring_use (keyring, shoal_key_id (stranger)), -1);
    CHECK_EQ (shoal_keyring_use (keyring, 0), -1);
    CHECK_EQ (shoal_keyring_primary (keyring), shoal_key_id (first));
    CHECK_EQ (shoal_keyring_use (keyring, shoal_key_id (second)), 0);
    CHECK_EQ (shoal_keyring_primary (keyring), shoal_key_id (second));
    CHECK_EQ (shoal_keyring_size (keyring), 2);
    shoal_keyring_destroy (&keyring);
}

static void
remove_refuses_primary_and_unknown_keys (void)
{
    shoal_keyring_t *keyring = shoal_keyring_new ();
    uint8_t first[SHOAL_KEY_BYTES], second[SHOAL_KEY_BYTES], stranger[SHOAL_KEY_BYTES];
    s_key_fill (first, 31);
    s_key_fill (second, 32);
    s_key_fill (stranger, 33);
    shoal_keyring_install (keyring, first);
    shoal_keyring_install (keyring, second);
    uint8_t subkey[SHOAL_KEY_BYTES];
    memcpy (subkey, shoal_keyring_subkey (keyring, shoal_key_id (first), SHOAL_PURPOSE_BEACON),
            sizeof subkey);

    CHECK_EQ (shoal_keyring_remove (keyring, shoal_key_id (first)), -1);
    CHECK_EQ (shoal_keyring_remove (keyring, shoal_key_id (stranger)), -1);
    CHECK_EQ (shoal_keyring_size (keyring), 2);
    CHECK_EQ (shoal_keyring_primary (keyring), shoal_key_id (first));
    const uint8_t *kept =
        shoal_keyring_subkey (keyring, shoal_key_id (first), SHOAL_PURPOSE_BEACON);
    CHECK (kept && memcmp (kept, subkey, sizeof subkey) == 0);

    //  The only key is always the primary, so it never goes.
    CHECK_EQ (shoal_keyring_remove (keyring, shoal_key_id (second)), 0);
    CHECK_EQ (shoal_keyring_remove (keyring, shoal_key_id (second)), -1);
    CHECK_EQ (shoal_keyring_remove (keyring, shoal_key_id (first)), -1);
    CHECK_EQ (shoal_keyring_size (keyring), 1);
    shoal_keyring_destroy (&keyring);
}

//  Removing a key in the middle must leave every other key's subkeys as
//  they were, wherever the keyring keeps them.
static void
remove_keeps_other_keys_intact (void)
{
    enum { KEYS = 5 };
    shoal_keyring_t *keyring = shoal_keyring_new ();
    uint8_t keys[KEYS][SHOAL_KEY_BYTES];
    uint8_t subkeys[KEYS][SHOAL_PURPOSE_COUNT][SHOAL_KEY_BYTES];
    for (int k = 0; k < KEYS; k++) {
        s_key_fill (keys[k], 40 + (uint32_t) k);
        shoal_keyring_install (keyring, keys[k]);
        for (int p = 0; p < SHOAL_PURPOSE_COUNT; p++)
            memcpy (
                subkeys[k][p],
                shoal_keyring_subkey (keyring, shoal_key_id (keys[k]), (shoal_purpose_t) (p + 1)),
                SHOAL_KEY_BYTES);
    }
    CHECK_EQ (shoal_keyring_remove (keyring, shoal_key_id (keys[1])), 0);
    CHECK_EQ (shoal_keyring_size (keyring), KEYS - 1);
    CHECK (shoal_keyring_subkey (keyring, shoal_key_id (keys[1]), SHOAL_PURPOSE_FRAME) == NULL);
    for (int k = 0; k < KEYS; k++) {
        if (k == 1)
            continue;
        for (int p = 0; p < SHOAL_PURPOSE_COUNT; p++) {
            const uint8_t *subkey =
                shoal_keyring_subkey (keyring, shoal_key_id (keys[k]), (shoal_purpose_t) (p + 1));
            CHECK (subkey && memcmp (subkey, subkeys[k][p], SHOAL_KEY_BYTES) == 0);
        }
    }
    CHECK_EQ (shoal_keyring_primary (keyring), shoal_key_id (keys[0]));
    shoal_keyring_destroy (&keyring);
}

static void
subkeys_differ_by_purpose_and_key (void)
{
    shoal_keyring_t *keyring = shoal_keyring_new ();
    uint8_t first[SHOAL_KEY_BYTES], second[SHOAL_KEY_BYTES];
    s_key_fill (first, 51);
    s_key_fill (second, 52);
    shoal_keyring_install (keyring, first);
    shoal_keyring_install (keyring, second);

    const uint8_t *subkeys[2][SHOAL_PURPOSE_COUNT];
    uint32_t ids[2] = { shoal_key_id (first), shoal_key_id (second) };
    for (int k = 0; k < 2; k++)
        for (int p = 0; p < SHOAL_PURPOSE_COUNT; p++) {
            subkeys[k][p] = shoal_keyring_subkey (keyring, ids[k], (shoal_purpose_t) (p + 1));
            CHECK (subkeys[k][p] != NULL);
        }
    for (int a = 0; a < 2 * SHOAL_PURPOSE_COUNT; a++)
        for (int b = a + 1; b < 2 * SHOAL_PURPOSE_COUNT; b++) {
            const uint8_t *one = subkeys[a / SHOAL_PURPOSE_COUNT][a % SHOAL_PURPOSE_COUNT];
            const uint8_t *other = subkeys[b / SHOAL_PURPOSE_COUNT][b % SHOAL_PURPOSE_COUNT];
            if (one && other)
                CHECK (memcmp (one, other, SHOAL_KEY_BYTES) != 0);
        }

    //  No subkey is the cluster key itself.
    for (int p = 0; p < SHOAL_PURPOSE_COUNT; p++)
        if (subkeys[0][p])
            CHECK (memcmp (subkeys[0][p], first, SHOAL_KEY_BYTES) != 0);

    //  Purposes outside the enumeration have no subkey.
    CHECK (shoal_keyring_subkey (keyring, ids[0], (shoal_purpose_t) 0) == NULL);
    CHECK (shoal_keyring_subkey (keyring, ids[0], (shoal_purpose_t) (SHOAL_PURPOSE_COUNT + 1)) ==
           NULL);
    shoal_keyring_destroy (&keyring);
}

//  Two nodes that install the same key derive the same subkeys, or they
//  could not talk.
static void
subkeys_are_the_same_on_every_node (void)
{
    shoal_keyring_t *one = shoal_keyring_new ();
    shoal_keyring_t *other = shoal_keyring_new ();
    uint8_t key[SHOAL_KEY_BYTES], decoy[SHOAL_KEY_BYTES];
    s_key_fill (key, 61);
    s_key_fill (decoy, 62);
    shoal_keyring_install (one, key);
    shoal_keyring_install (other, decoy);
    shoal_keyring_install (other, key);
    for (int p = 1; p <= SHOAL_PURPOSE_COUNT; p++) {
        const uint8_t *a = shoal_keyring_subkey (one, shoal_key_id (key), (shoal_purpose_t) p);
        const uint8_t *b = shoal_keyring_subkey (other, shoal_key_id (key), (shoal_purpose_t) p);
        CHECK (a && b && memcmp (a, b, SHOAL_KEY_BYTES) == 0);
    }
    shoal_keyring_destroy (&one);
    shoal_keyring_destroy (&other);
}

static void
destroy_nulls_pointer_and_is_idempotent (void)
{
    shoal_keyring_t *keyring = shoal_keyring_new ();
    uint8_t key[SHOAL_KEY_BYTES];
    s_key_fill (key, 71);
    shoal_keyring_install (keyring, key);
    shoal_keyring_destroy (&keyring);
    CHECK (keyring == NULL);
    shoal_keyring_destroy (&keyring);
    CHECK (keyring == NULL);
}

int
main (void)
{
    RUN (format_then_parse_gives_back_the_key);
    RUN (parse_ignores_surrounding_whitespace);
    RUN (parse_refuses_wrong_lengths);
    RUN (parse_refuses_very_long_text);
    RUN (parse_refuses_text_after_long_whitespace);
    RUN (parse_refuses_characters_outside_standard_base64);
    RUN (parse_refuses_non_ascii_bytes);
    RUN (parse_refuses_url_safe_variant);
    RUN (parse_refuses_missing_or_wrong_padding);
    RUN (parse_refuses_embedded_space);
    RUN (parse_refuses_noncanonical_last_character);
    RUN (generate_gives_different_keys);
    RUN (key_id_is_stable_and_never_zero);
    RUN (key_ids_differ_between_keys);
    RUN (new_keyring_is_empty);
    RUN (first_installed_key_is_primary);
    RUN (install_same_key_twice_fails);
    RUN (keyring_full_at_max);
    RUN (use_switches_primary_only_to_installed_keys);
    RUN (remove_refuses_primary_and_unknown_keys);
    RUN (remove_keeps_other_keys_intact);
    RUN (subkeys_differ_by_purpose_and_key);
    RUN (subkeys_are_the_same_on_every_node);
    RUN (destroy_nulls_pointer_and_is_idempotent);
    return TEST_DONE ();
}

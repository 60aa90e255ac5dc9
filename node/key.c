/*  node/key.c: cluster keys, drawn from the system and written as text.

    This lives in the shell, not in gossip/, because drawing a key reads the
    operating system's random source, which the core never touches.
*/

#include "node/key.h"
#include "shoal.h"
#include "node/why.h"

#include <ctype.h>
#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>

#define KEY_TEXT_LENGTH (SHOAL_KEY_TEXT_BYTES - 1)

_Static_assert(SHOAL_KEY_TEXT_BYTES ==
                   sodium_base64_ENCODED_LEN (SHOAL_KEY_BYTES, sodium_base64_VARIANT_ORIGINAL),
               "the text form of a key is padded base64");

int
shoal_key_generate (uint8_t key[SHOAL_KEY_BYTES])
{
    if (sodium_init () < 0)
        return -1;
    randombytes_buf (key, SHOAL_KEY_BYTES);
    return 0;
}

int
shoal_key_format (const uint8_t key[SHOAL_KEY_BYTES], char text[SHOAL_KEY_TEXT_BYTES])
{
    sodium_bin2base64 (text, SHOAL_KEY_TEXT_BYTES, key, SHOAL_KEY_BYTES,
                       sodium_base64_VARIANT_ORIGINAL);
    return 0;
}

int
shoal_key_parse (const char *text, uint8_t key[SHOAL_KEY_BYTES])
{
    memset (key, 0, SHOAL_KEY_BYTES);
    if (!text)
        return -1;
    while (isspace ((unsigned char) *text))
        text++;
    size_t length = strlen (text);
    while (length > 0 && isspace ((unsigned char) text[length - 1]))
        length--;
    if (length != KEY_TEXT_LENGTH)
        return -1;
    //  Decoding alone is not a check: libsodium 1.0.18 reads bytes above 0x7f
    //  as '/'. Only text that is exactly the canonical form of the key it
    //  decodes to is a key.
    size_t decoded = 0;
    char canonical[SHOAL_KEY_TEXT_BYTES];
    int rc = sodium_base642bin (key, SHOAL_KEY_BYTES, text, length, NULL, &decoded, NULL,
                                sodium_base64_VARIANT_ORIGINAL) == 0 &&
                     decoded == SHOAL_KEY_BYTES && shoal_key_format (key, canonical) == 0 &&
                     memcmp (canonical, text, KEY_TEXT_LENGTH) == 0
                 ? 0
                 : -1;
    sodium_memzero (canonical, sizeof canonical);
    if (rc != 0)
        sodium_memzero (key, SHOAL_KEY_BYTES);
    return rc;
}

int
shoal_key_file_load (shoal_keyring_t *keyring, const char *path, char *why, size_t why_size)
{
    FILE *file = fopen (path, "r");
    if (!file)
        return shoal_why (why, why_size, "cannot be read: %s", strerror (errno));
    char line[128] = "";
    size_t got = fread (line, 1, sizeof line - 1, file);
    fclose (file);
    line[got] = 0;
    uint8_t key[SHOAL_KEY_BYTES];
    int rc = shoal_key_parse (line, key);
    sodium_memzero (line, sizeof line);
    if (rc != 0)
        return shoal_why (why, why_size, "not a key (make one with shoal keygen)");
    rc = shoal_keyring_install (keyring, key);
    if (rc == 0)
        rc = shoal_keyring_use (keyring, shoal_key_id (key));
    sodium_memzero (key, sizeof key);
    return rc == 0 ? 0 : shoal_why (why, why_size, "cannot use the key");
}

/*  node/keyfile.c: the keyring a node keeps in its data directory. */

#include "node/keyfile.h"
#include "node/why.h"

#include <assert.h>
#include <string.h>

long
shoal_keyfile_encode (const shoal_keyring_t *keyring, uint8_t out[SHOAL_KEYFILE_MAX])
{
    size_t count = shoal_keyring_size (keyring);
    if (count == 0)
        return -1;
    assert (count <= SHOAL_KEYRING_MAX);
    out[0] = SHOAL_KEYFILE_VERSION;
    out[1] = (uint8_t) count;
    out[2] = 0;
    for (size_t i = 0; i < count; i++) {
        uint32_t id = shoal_keyring_id_at (keyring, i);
        const uint8_t *key = shoal_keyring_key (keyring, id);
        assert (key);
        memcpy (out + SHOAL_KEYFILE_HEADER + i * SHOAL_KEY_SIZE, key, SHOAL_KEY_SIZE);
        if (id == shoal_keyring_primary (keyring))
            out[2] = (uint8_t) i;
    }
    return (long) (SHOAL_KEYFILE_HEADER + count * SHOAL_KEY_SIZE);
}

int
shoal_keyfile_decode (const uint8_t *data, size_t size, shoal_keyring_t *keyring, char *why,
                      size_t why_size)
{
    if (size < SHOAL_KEYFILE_HEADER)
        return shoal_why (why, why_size, "%zu bytes: too short for a keyring", size);
    if (data[0] != SHOAL_KEYFILE_VERSION)
        return shoal_why (why, why_size, "format version %u, this build reads %u", data[0],
                          SHOAL_KEYFILE_VERSION);
    size_t count = data[1];
    if (count < 1 || count > SHOAL_KEYRING_MAX)
        return shoal_why (why, why_size, "%zu keys, a keyring holds 1 to %d", count,
                          SHOAL_KEYRING_MAX);
    if (data[2] >= count)
        return shoal_why (why, why_size, "the primary is key %u of %zu", data[2], count);
    if (size != SHOAL_KEYFILE_HEADER + count * SHOAL_KEY_SIZE)
        return shoal_why (why, why_size, "%zu bytes for %zu keys, not %zu", size, count,
                          SHOAL_KEYFILE_HEADER + count * SHOAL_KEY_SIZE);
    if (shoal_keyring_size (keyring) != 0)
        return shoal_why (why, why_size, "the keyring to fill is not empty");
    for (size_t i = 0; i < count; i++)
        if (shoal_keyring_install (keyring, data + SHOAL_KEYFILE_HEADER + i * SHOAL_KEY_SIZE) != 0)
            return shoal_why (why, why_size, "key %zu is there twice", i);
    uint32_t primary = shoal_key_id (data + SHOAL_KEYFILE_HEADER + data[2] * SHOAL_KEY_SIZE);
    if (shoal_keyring_use (keyring, primary) != 0)
        return shoal_why (why, why_size, "the primary is not installed");
    return 0;
}

/*  wire/keyring.c: the cluster keys a node holds. */

#include "wire/keyring.h"

#include "wire/bigendian.h"

#include <sodium.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

//  Contexts for libsodium's key derivation: exactly 8 bytes each.
#define KDF_KEY_ID  "shoal-id"
#define KDF_SUBKEYS "shoal-pk"

typedef struct {
    uint32_t id;
    uint8_t key[SHOAL_KEY_SIZE];
    uint8_t subkeys[SHOAL_PURPOSE_COUNT][crypto_aead_xchacha20poly1305_ietf_KEYBYTES];
} s_key_t;

struct _shoal_keyring_t {
    s_key_t keys[SHOAL_KEYRING_MAX];
    size_t size;
    uint32_t primary;
};

_Static_assert(SHOAL_KEY_SIZE == crypto_kdf_KEYBYTES, "a cluster key is a KDF master key");

shoal_keyring_t *
shoal_keyring_new (void)
{
    //  sodium_init is idempotent and thread-safe; it picks the fastest
    //  implementations for this CPU. It also opens the system's random
    //  source, which the core never draws from (nonce prefixes and keys come
    //  from the caller); libsodium needs it called before any other use.
    if (sodium_init () < 0)
        return NULL;
    return calloc (1, sizeof (shoal_keyring_t));
}

void
shoal_keyring_destroy (shoal_keyring_t **self_p)
{
    if (*self_p) {
        sodium_memzero (*self_p, sizeof (shoal_keyring_t));
        free (*self_p);
        *self_p = NULL;
    }
}

uint32_t
shoal_key_id (const uint8_t key[SHOAL_KEY_SIZE])
{
    uint8_t digest[crypto_kdf_BYTES_MIN];
    crypto_kdf_derive_from_key (digest, sizeof digest, 0, KDF_KEY_ID, key);
    uint32_t id = (uint32_t) shoal__get_be (digest, 4);
    sodium_memzero (digest, sizeof digest);
    return id ? id : 1;
}

static s_key_t *
s_find (const shoal_keyring_t *self, uint32_t key_id)
{
    for (size_t i = 0; i < self->size; i++)
        if (self->keys[i].id == key_id)
            return (s_key_t *) &self->keys[i];
    return NULL;
}

int
shoal_keyring_install (shoal_keyring_t *self, const uint8_t key[SHOAL_KEY_SIZE])
{
    uint32_t id = shoal_key_id (key);
    if (s_find (self, id) || self->size == SHOAL_KEYRING_MAX)
        return -1;
    s_key_t *entry = &self->keys[self->size++];
    entry->id = id;
    memcpy (entry->key, key, SHOAL_KEY_SIZE);
    for (int purpose = 1; purpose <= SHOAL_PURPOSE_COUNT; purpose++)
        crypto_kdf_derive_from_key (entry->subkeys[purpose - 1], sizeof entry->subkeys[0],
                                    (uint64_t) purpose, KDF_SUBKEYS, key);
    if (!self->primary)
        self->primary = id;
    return 0;
}

int
shoal_keyring_use (shoal_keyring_t *self, uint32_t key_id)
{
    if (!s_find (self, key_id))
        return -1;
    self->primary = key_id;
    return 0;
}

int
shoal_keyring_remove (shoal_keyring_t *self, uint32_t key_id)
{
    s_key_t *entry = s_find (self, key_id);
    if (!entry || key_id == self->primary)
        return -1;
    s_key_t *last = &self->keys[--self->size];
    if (entry != last)
        *entry = *last;
    sodium_memzero (last, sizeof *last);
    return 0;
}

uint32_t
shoal_keyring_primary (const shoal_keyring_t *self)
{
    return self->primary;
}

size_t
shoal_keyring_size (const shoal_keyring_t *self)
{
    return self->size;
}

uint32_t
shoal_keyring_id_at (const shoal_keyring_t *self, size_t index)
{
    return index < self->size ? self->keys[index].id : 0;
}

const uint8_t *
shoal_keyring_key (const shoal_keyring_t *self, uint32_t key_id)
{
    const s_key_t *entry = s_find (self, key_id);
    return entry ? entry->key : NULL;
}

const uint8_t *
shoal_keyring_subkey (const shoal_keyring_t *self, uint32_t key_id, shoal_purpose_t purpose)
{
    const s_key_t *entry = s_find (self, key_id);
    if (!entry || purpose < 1 || purpose > SHOAL_PURPOSE_COUNT)
        return NULL;
    return entry->subkeys[purpose - 1];
}

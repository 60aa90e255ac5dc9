/*  wire/keyring.h: the cluster keys a node holds.

    A keyring holds up to SHOAL_KEYRING_MAX keys. Every installed key opens
    envelopes; exactly one, the primary, seals them. Rotating a key without
    losing a message is three steps, each done on every node before the next:
    install the new key, make it primary, remove the old one.

    Keys are never used directly: each is expanded into one subkey per purpose
    (beacon, datagram, frame), so that an envelope sealed for one carrier can
    never be opened as another. A key is known on the wire by its id, derived
    from the key itself, so nodes need no agreement on numbering.
*/
#ifndef SHOAL_KEYRING_H
#define SHOAL_KEYRING_H

#include <stddef.h>
#include <stdint.h>

#define SHOAL_KEY_SIZE    32
#define SHOAL_KEYRING_MAX 8

//  What an envelope is sealed for; each has its own subkey.
typedef enum {
    SHOAL_PURPOSE_BEACON = 1,
    SHOAL_PURPOSE_DATAGRAM = 2,
    SHOAL_PURPOSE_FRAME = 3,
} shoal_purpose_t;

#define SHOAL_PURPOSE_COUNT 3

typedef struct _shoal_keyring_t shoal_keyring_t;

//  An empty keyring: a node with it runs in plaintext.
shoal_keyring_t *shoal_keyring_new (void);

//  Wipes the keys and frees the keyring; nulls the pointer. Idempotent.
void shoal_keyring_destroy (shoal_keyring_t **self_p);

//  The id a key goes by on the wire (never 0, which marks plaintext).
uint32_t shoal_key_id (const uint8_t key[SHOAL_KEY_SIZE]);

//  Installs a key. The first key installed becomes primary. Returns 0, or -1
//  when the key is already installed or the keyring is full.
int shoal_keyring_install (shoal_keyring_t *self, const uint8_t key[SHOAL_KEY_SIZE]);

//  Makes an installed key the primary. Returns 0, or -1 if not installed.
int shoal_keyring_use (shoal_keyring_t *self, uint32_t key_id);

//  Removes a key. Returns 0, or -1 when it is not installed or is the primary
//  (a keyed node never falls back to plaintext).
int shoal_keyring_remove (shoal_keyring_t *self, uint32_t key_id);

//  The primary key's id, or 0 when the keyring is empty.
uint32_t shoal_keyring_primary (const shoal_keyring_t *self);

size_t shoal_keyring_size (const shoal_keyring_t *self);

//  The id of the index-th installed key (0 to size - 1), or 0 past them.
uint32_t shoal_keyring_id_at (const shoal_keyring_t *self, size_t index);

//  The key itself of an installed key, or NULL: for a node that keeps its
//  keyring in its data directory (node/keyfile.h), and nothing else.
const uint8_t *shoal_keyring_key (const shoal_keyring_t *self, uint32_t key_id);

//  The subkey of an installed key for a purpose, or NULL.
const uint8_t *shoal_keyring_subkey (const shoal_keyring_t *self, uint32_t key_id,
                                     shoal_purpose_t purpose);

#endif

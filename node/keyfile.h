/*  node/keyfile.h: the keyring a node keeps in its data directory.

    A key operation (`shoal keys install | use | remove`, node/keys.c)
    changes a node's keyring while it runs; the node keeps the result in
    the file SHOAL_KEYFILE_NAME of its data directory (node/store.h: mode
    0600, replaced atomically, checksummed), and a node that starts where
    that file is uses it instead of its --key-file (docs/wire.md, section
    3.4). A node never rotated has no such file.

    The payload (the store's), all of it bounded:

        offset  size  field
             0     1  format version (SHOAL_KEYFILE_VERSION)
             1     1  count n of keys, 1 to SHOAL_KEYRING_MAX
             2     1  index of the primary, below n
             3  32*n  the keys, each SHOAL_KEY_SIZE bytes, no two alike

    Nothing here asserts on what it reads: a payload that breaks any rule
    is refused with a reason naming it.
*/
#ifndef SHOAL_KEYFILE_H
#define SHOAL_KEYFILE_H

#include "wire/keyring.h"

#include <stddef.h>
#include <stdint.h>

#define SHOAL_KEYFILE_NAME    "keyring"
#define SHOAL_KEYFILE_VERSION 1
#define SHOAL_KEYFILE_HEADER  3
#define SHOAL_KEYFILE_MAX     (SHOAL_KEYFILE_HEADER + SHOAL_KEYRING_MAX * SHOAL_KEY_SIZE)

//  Writes keyring (at least one key) into out, which holds
//  SHOAL_KEYFILE_MAX bytes. Returns the size, or -1 when the keyring is
//  empty. The caller wipes out once written.
long shoal_keyfile_encode (const shoal_keyring_t *keyring, uint8_t out[SHOAL_KEYFILE_MAX]);

//  Reads size bytes of a payload into keyring, which must be empty.
//  Returns 0, or -1 with the reason in why (keyring then empty or partly
//  filled: the caller drops it).
int shoal_keyfile_decode (const uint8_t *data, size_t size, shoal_keyring_t *keyring, char *why,
                          size_t why_size);

#endif

/*  node/key.h: a cluster key from its file, for the node and the shoal
    command (the public half of node/key.c is in include/shoal.h). */
#ifndef SHOAL_KEY_H
#define SHOAL_KEY_H

#include "wire/keyring.h"

#include <stddef.h>

//  Reads the key file at path (the text `shoal keygen` writes), installs
//  the key in keyring and makes it the one that seals. Returns 0, or -1
//  with a reason in why that does not name the file ("not a key (make one
//  with shoal keygen)"). The key's bytes are wiped from memory here.
int shoal_key_file_load (shoal_keyring_t *keyring, const char *path, char *why, size_t why_size);

#endif

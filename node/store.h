/*  node/store.h: the files of a node's data directory, replaced atomically
    and checked on every read.

    A node keeps what must outlive a restart (its id, the highest term it
    acknowledged, the committed job specs, the last assignment version it
    applied) in one small file each. This layer knows nothing of what is
    inside them: it stores a payload of bytes under a name, and gives back
    either exactly those bytes or a refusal. docs/store.md has the whole
    contract.

    Layout of a file (big-endian):

        offset  size  field
             0     8  magic "SHOALST\0"
             8     1  format version (1)
             9     7  reserved, all zero
            16     8  payload length n, at most SHOAL_STORE_SIZE_MAX
            24     n  payload
          24+n    32  BLAKE2b-256 (libsodium's crypto_generichash, no key) of
                      bytes 0 to 24+n

    A write goes to a temp file in the same directory, named
    ".NAME.tmp-XXXXXXXXXXXXXXXX" (sixteen lowercase hex digits), which is
    synced and then renamed over NAME, and the directory is synced: a crash
    at any point leaves either the old file or the new one, complete, never
    a mix. A temp file a crash left behind is removed by the next open.

    The directory is locked (flock on its file LOCK) for as long as the
    store is open, so that two nodes never share one.

    Every function that can fail returns -1 with a one-line reason in why
    (truncated to why_size; why may be NULL). Nothing here prints, exits, or
    asserts on what it reads from disk. A store is not shared between
    threads without a lock of the caller's.
*/
#ifndef SHOAL_STORE_H
#define SHOAL_STORE_H

#include <stddef.h>

//  The file format.
#define SHOAL_STORE_MAGIC    "SHOALST" //  and its terminating NUL: 8 bytes
#define SHOAL_STORE_VERSION  1
#define SHOAL_STORE_HEADER   24 //  magic, version, reserved, length
#define SHOAL_STORE_CHECKSUM 32 //  BLAKE2b-256

//  The largest payload a file holds; larger is refused on write and read.
#define SHOAL_STORE_SIZE_MAX (64u << 20)

//  The longest name. A name is 1 to SHOAL_STORE_NAME_MAX of [A-Za-z0-9._-],
//  not starting with '.', and not "LOCK" (the lock's own file).
#define SHOAL_STORE_NAME_MAX 64

typedef struct _shoal_store_t shoal_store_t;

//  Opens the data directory dir, creating it with mode 0700 if it is
//  missing (but not its parents), locks it, and removes the temp files a
//  crash left behind. Refuses a path that exists and is not a directory,
//  and a directory another open store holds, in this process or another.
int shoal_store_open (const char *dir, shoal_store_t **store, char *why, size_t why_size);

//  Releases the lock and frees the store; nulls the pointer. Idempotent.
void shoal_store_close (shoal_store_t **store_p);

//  Replaces the file name with size bytes of data (data may be NULL when
//  size is 0), durably: when it returns 0 the new content survives a crash.
//  On -1 the old content is in place and no temp file is left, except in
//  one case the reason names: the directory could not be synced after the
//  rename, so the new content is in place but may not survive a crash.
int shoal_store_write (shoal_store_t *self, const char *name, const void *data, size_t size,
                       char *why, size_t why_size);

//  Reads the file name. Returns 0 with *data a copy of its payload (never
//  NULL, even for an empty payload; free it with free ()) and *size its
//  length; 1 when there is no such file; -1 when the file cannot be read or
//  cannot be trusted: too short, wrong magic, another format version, a
//  reserved byte set, a length over the bound or other than the file's, a
//  checksum mismatch, not a regular file, or an I/O error. Except on 0,
//  *data is NULL and *size 0.
int shoal_store_read (shoal_store_t *self, const char *name, void **data, size_t *size, char *why,
                      size_t why_size);

//  Removes the file name, durably; a file that is not there is fine.
int shoal_store_remove (shoal_store_t *self, const char *name, char *why, size_t why_size);

#endif

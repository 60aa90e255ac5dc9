/*  node/persist.h: what a node keeps in its data directory, as bytes.

    A node persists three records, each the payload of one store file
    (store.h adds the magic, the length and the checksum around it):

        file        record                  when it is written
        "node"      the identity            on every start
        "elector"   shoal_elector_saved_t   when the elector says it changed
        "jobs"      shoal_jobs_saved_t      when the job specs say they changed

    Each payload is one msgpack array led by the format version
    (SHOAL_PERSIST_VERSION), then the record's fields in the order
    docs/store.md gives ("The records"). A job spec is encoded exactly as a
    JOB message carries it, by the wire's own codec.

    This layer only turns records into bytes and back: no file is touched
    here (the node calls store.h). The decoders take bytes that may come
    from a damaged disk, a buggy build or a later release, and trust none of
    them: every limit and invariant below is checked, and a payload that
    breaks one is refused with a one-line reason, never asserted on. The
    encoders check the same, so that a node never writes what it would not
    read back.

    Invariants of the format (the cores check their own rules on top: the
    elector its highest term, the job specs their names' characters, a
    parallelism of at least 1 and the cluster's task total):

    - identity: the id is not all zero; the life is at least 1.
    - elector: at most SHOAL_VOTERS_MAX voters, none all zero, sorted by id
      (bytewise), each once; the leader may be all zero (nobody).
    - jobs: at most SHOAL_JOBS_MAX specs, each within the wire's limits
      (name, labels, command, parallelism; text is UTF-8 without NUL),
      sorted by name (bytewise, as strcmp), each name once.

    Every function that can fail returns 0 or -1, with a one-line reason in
    why (truncated to why_size; why may be NULL) that starts with the
    record's name ("elector: voters[3] repeats voters[2]").
*/
#ifndef SHOAL_PERSIST_H
#define SHOAL_PERSIST_H

#include "election/elector.h"
#include "rebalance/jobs.h"
#include "wire/wire.h"

#include <stddef.h>
#include <stdint.h>

//  The format version every payload starts with. A payload of another
//  version is refused, not guessed at.
#define SHOAL_PERSIST_VERSION 1

//  The store file of each record.
#define SHOAL_PERSIST_IDENTITY_FILE "node"
#define SHOAL_PERSIST_ELECTOR_FILE  "elector"
#define SHOAL_PERSIST_JOBS_FILE     "jobs"

//  ---------------------------------------------------------------------
//  Encoding
//
//  Each encoder returns 0 with *data a malloc'ed payload (free it with
//  free ()) and *size its length; or -1 when the record breaks an invariant
//  or memory is short, with *data NULL and *size 0. The record is only
//  read, and nothing of it is kept.

//  Who a node is, across its lives.
typedef struct {
    shoal_id_t id;        //  made at first start, never all zero
    uint64_t life;        //  counts the node's starts, from 1
    uint64_t incarnation; //  the last SWIM incarnation it announced
} shoal_persist_identity_t;

int shoal_persist_identity_encode (const shoal_persist_identity_t *identity, uint8_t **data,
                                   size_t *size, char *why, size_t why_size);

int shoal_persist_elector_encode (const shoal_elector_saved_t *saved, uint8_t **data, size_t *size,
                                  char *why, size_t why_size);

int shoal_persist_jobs_encode (const shoal_jobs_saved_t *saved, uint8_t **data, size_t *size,
                               char *why, size_t why_size);

//  ---------------------------------------------------------------------
//  Decoding
//
//  Each decoder reads size bytes of data (data may be NULL when size is 0)
//  and returns 0 with the record filled, or -1 with a reason. It overwrites
//  its output without freeing what that held before.
//
//  The elector's voters and the job specs (their strings and labels too)
//  live in the output's arena, which the decoder allocates: they stay valid
//  until the matching _release, which frees it. After a failed decode the
//  output is empty and holds no memory; _release is then harmless, as it
//  is on a zeroed output or twice.

int shoal_persist_identity_decode (const uint8_t *data, size_t size,
                                   shoal_persist_identity_t *identity, char *why, size_t why_size);

typedef struct {
    shoal_elector_saved_t saved; //  voters point into arena
    shoal_arena_t arena;
} shoal_persist_elector_t;

int shoal_persist_elector_decode (const uint8_t *data, size_t size,
                                  shoal_persist_elector_t *elector, char *why, size_t why_size);
void shoal_persist_elector_release (shoal_persist_elector_t *elector);

typedef struct {
    shoal_jobs_saved_t saved; //  specs, and all they point to, in arena
    shoal_arena_t arena;
} shoal_persist_jobs_t;

int shoal_persist_jobs_decode (const uint8_t *data, size_t size, shoal_persist_jobs_t *jobs,
                               char *why, size_t why_size);
void shoal_persist_jobs_release (shoal_persist_jobs_t *jobs);

#endif

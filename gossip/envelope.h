/*  gossip/envelope.h: sealed envelopes around every message.

    Layout (big-endian; docs/wire.md has the full spec):

        offset  size  field
             0     1  envelope version (1)
             1     1  mode: 0 plaintext, 1 sealed (XChaCha20-Poly1305)
             2     1  purpose (shoal_purpose_t)
             3     1  reserved, 0
             4     4  key id (0 in plaintext)
             8    16  sender id
            24     8  sender incarnation
            32     8  sequence number, per sender and purpose, from 1
            40    16  nonce prefix (sealed only)
            56     n  ciphertext of the payload, then a 16-byte tag

    The first 40 bytes are authenticated as associated data. The nonce is the
    16-byte prefix (random for each life of the sealer) followed by the 8-byte
    sequence number, so it never repeats under one key. A node whose keyring
    holds a key accepts only sealed envelopes; a node without one accepts only
    plaintext, so a misconfigured pair fails loudly instead of half-working.
*/
#ifndef SHOAL_ENVELOPE_H
#define SHOAL_ENVELOPE_H

#include "keyring.h"
#include "replay.h"

#include <stddef.h>
#include <stdint.h>

#define SHOAL_ENVELOPE_VERSION  1
#define SHOAL_ENVELOPE_HEADER   40
#define SHOAL_ENVELOPE_NONCE    16
#define SHOAL_ENVELOPE_TAG      16
#define SHOAL_ENVELOPE_OVERHEAD (SHOAL_ENVELOPE_HEADER + SHOAL_ENVELOPE_NONCE + SHOAL_ENVELOPE_TAG)

//  The largest envelope, header and tag included, each carrier takes: a UDP
//  datagram that no path fragments, what zbeacon broadcasts, one ZeroMQ frame
//  (the ZMQ_MAXMSGSIZE of every socket). A message must fit once sealed.
#define SHOAL_DATAGRAM_MAX 1400
#define SHOAL_BEACON_MAX   255
#define SHOAL_FRAME_MAX    (4u * 1024 * 1024)

#define SHOAL_ENVELOPE_PLAINTEXT 0
#define SHOAL_ENVELOPE_SEALED    1

//  The authenticated header of an envelope that was opened.
typedef struct {
    uint8_t mode;
    uint8_t purpose;
    uint32_t key_id;
    uint8_t sender[16];
    uint64_t incarnation;
    uint64_t seq;
} shoal_envelope_t;

//  Why an envelope was refused. Each is counted against its sender.
typedef enum {
    SHOAL_OPEN_OK = 0,
    SHOAL_OPEN_SIZE,        //  shorter than a header, or larger than its carrier allows
    SHOAL_OPEN_VERSION,     //  another envelope version
    SHOAL_OPEN_MALFORMED,   //  unknown mode, reserved byte set, key id in plaintext
    SHOAL_OPEN_PURPOSE,     //  sealed for another carrier
    SHOAL_OPEN_PLAINTEXT,   //  plaintext, and this node has a key
    SHOAL_OPEN_SEALED,      //  sealed, and this node has no key
    SHOAL_OPEN_UNKNOWN_KEY, //  sealed with a key this node does not hold
    SHOAL_OPEN_FORGED,      //  authentication failed: tampered, or the wrong key
    SHOAL_OPEN_REPLAYED,    //  accepted before
    SHOAL_OPEN_STALE,       //  older incarnation, or older than the replay window
    SHOAL_OPEN_RESULT_COUNT
} shoal_open_result_t;

//  A short name for a result ("forged"), for logs and metrics.
const char *shoal_open_result_name (shoal_open_result_t result);

//  The largest envelope a carrier takes, header and tag included.
size_t shoal_envelope_size_max (shoal_purpose_t purpose);

//  ---------------------------------------------------------------------
//  Sealing (the sending side of one node life)

typedef struct _shoal_sealer_t shoal_sealer_t;

//  keyring is shared, not owned: rotating keys there takes effect at once.
//  nonce_prefix must be random for every new sealer (the shell draws it
//  from the system; the simulator from its seed).
shoal_sealer_t *shoal_sealer_new (const shoal_keyring_t *keyring, const uint8_t sender[16],
                                  uint64_t incarnation,
                                  const uint8_t nonce_prefix[SHOAL_ENVELOPE_NONCE]);

void shoal_sealer_destroy (shoal_sealer_t **self_p);

//  Seals size bytes of payload for purpose into out. Returns the envelope's
//  size, or -1 when it would not fit in capacity or in the carrier.
long shoal_sealer_seal (shoal_sealer_t *self, shoal_purpose_t purpose, const uint8_t *payload,
                        size_t size, uint8_t *out, size_t capacity);

//  ---------------------------------------------------------------------
//  Opening (the receiving side)

typedef struct _shoal_opener_t shoal_opener_t;

//  windows: how many replay windows to keep, one per (sender, purpose) seen
//  (see replay.h): an opener that serves every carrier of an N-node cluster
//  needs 3N.
shoal_opener_t *shoal_opener_new (const shoal_keyring_t *keyring, size_t windows);

void shoal_opener_destroy (shoal_opener_t **self_p);

//  Opens an envelope that arrived on the carrier for purpose. On success
//  writes the payload into out (at least size - SHOAL_ENVELOPE_HEADER bytes
//  are enough), its size into payload_size and the header into envelope.
shoal_open_result_t shoal_opener_open (shoal_opener_t *self, shoal_purpose_t purpose,
                                       const uint8_t *data, size_t size, uint8_t *out,
                                       size_t capacity, size_t *payload_size,
                                       shoal_envelope_t *envelope);

//  Replay windows dropped to make room.
uint64_t shoal_opener_evictions (const shoal_opener_t *self);

#endif

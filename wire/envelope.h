/*  wire/envelope.h: sealed envelopes around every message.

    Layout (big-endian; docs/wire.md has the full spec):

        offset  size  field
             0     1  envelope version (1)
             1     1  mode: 0 plaintext, 1 sealed (XChaCha20-Poly1305)
             2     1  purpose (shoal_purpose_t)
             3     1  reserved, 0
             4     4  key id (0 in plaintext)
             8    16  sender id
            24     8  sender life
            32    16  recipient id (all zero: unaddressed)
            48     8  recipient life (0 when unaddressed)
            56     8  sequence number, per sender life and purpose, from 1
            64    16  nonce prefix (sealed only)
            80     n  ciphertext of the payload, then a 16-byte tag

    The first 64 bytes are authenticated as associated data. The nonce is the
    16-byte prefix (random for each life of the sealer) followed by the 8-byte
    sequence number, so it never repeats under one key. A node whose keyring
    holds a key accepts only sealed envelopes; a node without one accepts only
    plaintext, so a misconfigured pair fails loudly instead of half-working.

    A node's life is a number it raises on every start and keeps (persisted),
    so (id, life) names one run of it. It is not the SWIM incarnation, which
    also rises during a run to refute suspicion: the envelope's binding must
    not change while a node runs.

    An envelope names one life of its recipient, so an authentic envelope
    cannot be replayed to another node, reflected to its sender, or replayed
    to a later life of its recipient (whose replay windows started empty).
    Only beacons and first contact with a seed, whose id is not known yet, go
    unaddressed; the receiver decides which message types it accepts
    unaddressed, and keeps their replay windows apart from the addressed
    ones, so that replayed introductions cannot push those out.
*/
#ifndef SHOAL_ENVELOPE_H
#define SHOAL_ENVELOPE_H

#include "wire/keyring.h"
#include "wire/replay.h"

#include <stddef.h>
#include <stdint.h>

#define SHOAL_ENVELOPE_VERSION  1
#define SHOAL_ENVELOPE_HEADER   64
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

//  One life of a node: its id and the life number it raised at start. A
//  node's id is never all zero and its life starts at 1: the all-zero life
//  means "nobody", the recipient of an unaddressed envelope.
typedef struct {
    uint8_t id[16];
    uint64_t life;
} shoal_life_t;

//  The authenticated header of an envelope that was opened.
typedef struct {
    uint8_t mode;
    uint8_t purpose;
    uint32_t key_id;
    shoal_life_t sender;
    shoal_life_t recipient; //  all zero when unaddressed
    uint64_t seq;
} shoal_envelope_t;

//  Why an envelope was refused. Every result but OK is decided on what the
//  envelope claims before (or instead of) authenticating it, REPLAYED and
//  STALE included: count them as metrics, never as evidence against the
//  node whose id the envelope claims.
typedef enum {
    SHOAL_OPEN_OK = 0,
    SHOAL_OPEN_SIZE,        //  shorter than a header, larger than its carrier allows,
                            //  or larger than the caller's buffer
    SHOAL_OPEN_VERSION,     //  another envelope version
    SHOAL_OPEN_MALFORMED,   //  unknown mode, reserved byte set, key id in plaintext,
                            //  sequence number 0, no sender (zero id or life 0), or a
                            //  recipient that is half named (an id without a life, or
                            //  a life without an id)
    SHOAL_OPEN_PURPOSE,     //  sealed for another carrier
    SHOAL_OPEN_PLAINTEXT,   //  plaintext, and this node has a key
    SHOAL_OPEN_SEALED,      //  sealed, and this node has no key
    SHOAL_OPEN_OWN,         //  sent by this node: its own beacon, or reflected back
    SHOAL_OPEN_MISDIRECTED, //  addressed to another node, or to a life not yet begun
    SHOAL_OPEN_UNKNOWN_KEY, //  sealed with a key this node does not hold
    SHOAL_OPEN_FORGED,      //  authentication failed: tampered, or the wrong key
    SHOAL_OPEN_REPLAYED,    //  accepted before
    SHOAL_OPEN_STALE,       //  an older sender life, older than the replay window,
                            //  or addressed to an earlier life of this node
    SHOAL_OPEN_RESULT_COUNT
} shoal_open_result_t;

//  A short name for a result ("forged"), for logs and metrics.
const char *shoal_open_result_name (shoal_open_result_t result);

//  The carrier's name: "beacon", "datagram", "frame" ("unknown" otherwise).
const char *shoal_purpose_name (shoal_purpose_t purpose);

//  The largest envelope a carrier takes, header and tag included; 0 for an
//  unknown purpose.
size_t shoal_envelope_size_max (shoal_purpose_t purpose);

//  ---------------------------------------------------------------------
//  Sealing (the sending side of one node life)

typedef struct _shoal_sealer_t shoal_sealer_t;

//  keyring is shared, not owned: rotating keys there takes effect at once.
//  nonce_prefix must be random for every new sealer (the shell draws it
//  from the system; the simulator from its seed). A sealer's state must not
//  be cloned (fork without exec, a restored VM snapshot): two copies would
//  seal different payloads under the same nonce.
//  Returns NULL when sender is not a node's life (zero id or life 0).
shoal_sealer_t *shoal_sealer_new (const shoal_keyring_t *keyring, const shoal_life_t *sender,
                                  const uint8_t nonce_prefix[SHOAL_ENVELOPE_NONCE]);

void shoal_sealer_destroy (shoal_sealer_t **self_p);

//  Seals size bytes of payload for purpose, addressed to recipient (NULL:
//  unaddressed), into out, which must not overlap payload. Returns the
//  envelope's size, or -1 when it would not fit in capacity or in the
//  carrier, when recipient is not a node's life or is this node, or when
//  the purpose's sequence numbers are used up (after 2^64 - 1 envelopes).
long shoal_sealer_seal (shoal_sealer_t *self, shoal_purpose_t purpose,
                        const shoal_life_t *recipient, const uint8_t *payload, size_t size,
                        uint8_t *out, size_t capacity);

//  The same, sealed with the installed key key_id rather than the primary
//  (the primary when key_id is 0 or not installed): an answer to a request
//  sealed with a key the sender holds, while a rotation makes another key
//  primary, opens where the request came from.
long shoal_sealer_seal_with (shoal_sealer_t *self, uint32_t key_id, shoal_purpose_t purpose,
                             const shoal_life_t *recipient, const uint8_t *payload, size_t size,
                             uint8_t *out, size_t capacity);

//  ---------------------------------------------------------------------
//  Opening (the receiving side)

typedef struct _shoal_opener_t shoal_opener_t;

//  self: this node's life; envelopes addressed elsewhere are refused.
//  windows: how many replay windows to keep for addressed envelopes, one
//  per (sender, purpose) seen (see replay.h): an opener that serves the
//  datagram and frame carriers of an N-node cluster needs 2N. Unaddressed
//  envelopes (beacons, introductions) have a table of the same size of
//  their own. Plaintext envelopes keep no window: anyone can forge them, so
//  a window would protect nothing and would let a forged life silence a peer.
//  Returns NULL when self is not a node's life (zero id or life 0).
shoal_opener_t *shoal_opener_new (const shoal_keyring_t *keyring, const shoal_life_t *self,
                                  size_t windows);

void shoal_opener_destroy (shoal_opener_t **self_p);

//  Opens an envelope that arrived on the carrier for purpose. On success
//  writes the payload into out, which must not overlap data (at least
//  size - SHOAL_ENVELOPE_HEADER bytes are enough), its size into
//  payload_size and the header into envelope.
shoal_open_result_t shoal_opener_open (shoal_opener_t *self, shoal_purpose_t purpose,
                                       const uint8_t *data, size_t size, uint8_t *out,
                                       size_t capacity, size_t *payload_size,
                                       shoal_envelope_t *envelope);

//  Replay windows dropped to make room, in both tables.
uint64_t shoal_opener_evictions (const shoal_opener_t *self);

#endif

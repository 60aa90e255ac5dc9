/*  wire/envelope.c: sealed envelopes around every message. */

#include "wire/envelope.h"

#include "wire/bigendian.h"

#include <sodium.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(SHOAL_ENVELOPE_TAG == crypto_aead_xchacha20poly1305_ietf_ABYTES, "tag size");
_Static_assert(SHOAL_ENVELOPE_NONCE + 8 == crypto_aead_xchacha20poly1305_ietf_NPUBBYTES,
               "nonce is prefix + sequence number");
_Static_assert(SHOAL_ENVELOPE_OVERHEAD == 96, "the envelope layout is pinned");

//  Field offsets of the header; see envelope.h.
enum {
    AT_VERSION = 0,
    AT_MODE = 1,
    AT_PURPOSE = 2,
    AT_RESERVED = 3,
    AT_KEY_ID = 4,
    AT_SENDER = 8,
    AT_SENDER_LIFE = 24,
    AT_RECIPIENT = 32,
    AT_RECIPIENT_LIFE = 48,
    AT_SEQ = 56,
    AT_NONCE = 64,
};
_Static_assert(AT_SEQ + 8 == SHOAL_ENVELOPE_HEADER, "header ends after the sequence number");
_Static_assert(sizeof (((shoal_life_t *) 0)->id) == AT_SENDER_LIFE - AT_SENDER, "16-byte ids");

const char *
shoal_open_result_name (shoal_open_result_t result)
{
    static const char *names[SHOAL_OPEN_RESULT_COUNT] = {
        [SHOAL_OPEN_OK] = "ok",
        [SHOAL_OPEN_SIZE] = "size",
        [SHOAL_OPEN_VERSION] = "version",
        [SHOAL_OPEN_MALFORMED] = "malformed",
        [SHOAL_OPEN_PURPOSE] = "purpose",
        [SHOAL_OPEN_PLAINTEXT] = "plaintext",
        [SHOAL_OPEN_SEALED] = "sealed",
        [SHOAL_OPEN_OWN] = "own",
        [SHOAL_OPEN_MISDIRECTED] = "misdirected",
        [SHOAL_OPEN_UNKNOWN_KEY] = "unknown-key",
        [SHOAL_OPEN_FORGED] = "forged",
        [SHOAL_OPEN_REPLAYED] = "replayed",
        [SHOAL_OPEN_STALE] = "stale",
    };
    if ((unsigned) result >= SHOAL_OPEN_RESULT_COUNT || !names[result])
        return "unknown";
    return names[result];
}

const char *
shoal_purpose_name (shoal_purpose_t purpose)
{
    switch (purpose) {
    case SHOAL_PURPOSE_BEACON:
        return "beacon";
    case SHOAL_PURPOSE_DATAGRAM:
        return "datagram";
    case SHOAL_PURPOSE_FRAME:
        return "frame";
    }
    return "unknown";
}

size_t
shoal_envelope_size_max (shoal_purpose_t purpose)
{
    switch (purpose) {
    case SHOAL_PURPOSE_BEACON:
        return SHOAL_BEACON_MAX;
    case SHOAL_PURPOSE_DATAGRAM:
        return SHOAL_DATAGRAM_MAX;
    case SHOAL_PURPOSE_FRAME:
        return SHOAL_FRAME_MAX;
    }
    return 0;
}

//  ---------------------------------------------------------------------
//  Sealing

//  A node's life names it: an id that is not all zero and a life of at
//  least 1. The all-zero life is nobody, the recipient of an unaddressed
//  envelope.
static bool
s_is_named (const shoal_life_t *life)
{
    static const uint8_t nobody[sizeof life->id];
    return life->life != 0 && memcmp (life->id, nobody, sizeof nobody) != 0;
}

struct _shoal_sealer_t {
    const shoal_keyring_t *keyring;
    shoal_life_t sender;
    uint8_t nonce_prefix[SHOAL_ENVELOPE_NONCE];
    uint64_t seq[SHOAL_PURPOSE_COUNT]; //  last number used, per purpose
};

shoal_sealer_t *
shoal_sealer_new (const shoal_keyring_t *keyring, const shoal_life_t *sender,
                  const uint8_t nonce_prefix[SHOAL_ENVELOPE_NONCE])
{
    if (!s_is_named (sender))
        return NULL;
    shoal_sealer_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->keyring = keyring;
    self->sender = *sender;
    memcpy (self->nonce_prefix, nonce_prefix, sizeof self->nonce_prefix);
    return self;
}

void
shoal_sealer_destroy (shoal_sealer_t **self_p)
{
    if (*self_p) {
        free (*self_p);
        *self_p = NULL;
    }
}

static void
s_put_life (uint8_t *at, const shoal_life_t *life)
{
    memcpy (at, life->id, sizeof life->id);
    shoal__put_be (at + sizeof life->id, life->life, 8);
}

static void
s_get_life (const uint8_t *at, shoal_life_t *life)
{
    memcpy (life->id, at, sizeof life->id);
    life->life = shoal__get_be (at + sizeof life->id, 8);
}

long
shoal_sealer_seal (shoal_sealer_t *self, shoal_purpose_t purpose, const shoal_life_t *recipient,
                   const uint8_t *payload, size_t size, uint8_t *out, size_t capacity)
{
    return shoal_sealer_seal_with (self, 0, purpose, recipient, payload, size, out, capacity);
}

long
shoal_sealer_seal_with (shoal_sealer_t *self, uint32_t key_id, shoal_purpose_t purpose,
                        const shoal_life_t *recipient, const uint8_t *payload, size_t size,
                        uint8_t *out, size_t capacity)
{
    size_t carrier = shoal_envelope_size_max (purpose);
    if (!self->keyring || !key_id ||
        !shoal_keyring_subkey (self->keyring, key_id, SHOAL_PURPOSE_FRAME))
        key_id = self->keyring ? shoal_keyring_primary (self->keyring) : 0;
    size_t total =
        SHOAL_ENVELOPE_HEADER + size + (key_id ? SHOAL_ENVELOPE_NONCE + SHOAL_ENVELOPE_TAG : 0);
    static const shoal_life_t nobody;
    if (carrier == 0 || size > carrier || total > carrier || total > capacity)
        return -1;
    //  A recipient is a node's whole life, and not this node: receivers
    //  would refuse anything else.
    if (recipient &&
        (!s_is_named (recipient) || memcmp (recipient->id, self->sender.id, sizeof nobody.id) == 0))
        return -1;
    //  After 2^64 - 1 envelopes the numbers, and so the nonces, would repeat.
    if (self->seq[purpose - 1] == UINT64_MAX)
        return -1;

    uint64_t seq = ++self->seq[purpose - 1];
    out[AT_VERSION] = SHOAL_ENVELOPE_VERSION;
    out[AT_MODE] = key_id ? SHOAL_ENVELOPE_SEALED : SHOAL_ENVELOPE_PLAINTEXT;
    out[AT_PURPOSE] = (uint8_t) purpose;
    out[AT_RESERVED] = 0;
    shoal__put_be (out + AT_KEY_ID, key_id, 4);
    s_put_life (out + AT_SENDER, &self->sender);
    s_put_life (out + AT_RECIPIENT, recipient ? recipient : &nobody);
    shoal__put_be (out + AT_SEQ, seq, 8);
    if (!key_id) {
        memcpy (out + SHOAL_ENVELOPE_HEADER, payload, size);
        return (long) total;
    }
    uint8_t nonce[crypto_aead_xchacha20poly1305_ietf_NPUBBYTES];
    memcpy (nonce, self->nonce_prefix, SHOAL_ENVELOPE_NONCE);
    shoal__put_be (nonce + SHOAL_ENVELOPE_NONCE, seq, 8);
    memcpy (out + AT_NONCE, self->nonce_prefix, SHOAL_ENVELOPE_NONCE);
    crypto_aead_xchacha20poly1305_ietf_encrypt (
        out + AT_NONCE + SHOAL_ENVELOPE_NONCE, NULL, payload, size, out, SHOAL_ENVELOPE_HEADER,
        NULL, nonce, shoal_keyring_subkey (self->keyring, key_id, purpose));
    return (long) total;
}

//  ---------------------------------------------------------------------
//  Opening

struct _shoal_opener_t {
    const shoal_keyring_t *keyring;
    shoal_life_t self;
    shoal_replay_t *addressed;   //  windows of envelopes addressed to this life
    shoal_replay_t *unaddressed; //  windows of beacons and introductions
};

shoal_opener_t *
shoal_opener_new (const shoal_keyring_t *keyring, const shoal_life_t *self_life, size_t windows)
{
    if (!s_is_named (self_life))
        return NULL;
    shoal_opener_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->keyring = keyring;
    self->self = *self_life;
    self->addressed = shoal_replay_new (windows);
    self->unaddressed = shoal_replay_new (windows);
    if (!self->addressed || !self->unaddressed)
        shoal_opener_destroy (&self);
    return self;
}

void
shoal_opener_destroy (shoal_opener_t **self_p)
{
    if (*self_p) {
        shoal_replay_destroy (&(*self_p)->addressed);
        shoal_replay_destroy (&(*self_p)->unaddressed);
        free (*self_p);
        *self_p = NULL;
    }
}

uint64_t
shoal_opener_evictions (const shoal_opener_t *self)
{
    return shoal_replay_evictions (self->addressed) + shoal_replay_evictions (self->unaddressed);
}

static shoal_open_result_t
s_replay_result (shoal_replay_verdict_t verdict)
{
    return verdict == SHOAL_REPLAY_FRESH  ? SHOAL_OPEN_OK
           : verdict == SHOAL_REPLAY_SEEN ? SHOAL_OPEN_REPLAYED
                                          : SHOAL_OPEN_STALE;
}

//  Checks whom the envelope names, before paying for decryption. These are
//  claims until the envelope is authenticated, but refusing on a claim only
//  refuses that envelope.
static shoal_open_result_t
s_check_parties (const shoal_opener_t *self, const shoal_envelope_t *header)
{
    static const shoal_life_t nobody;
    if (!s_is_named (&header->sender) || header->seq == 0)
        return SHOAL_OPEN_MALFORMED;
    if (memcmp (header->sender.id, self->self.id, sizeof nobody.id) == 0)
        return SHOAL_OPEN_OWN;
    if (memcmp (header->recipient.id, nobody.id, sizeof nobody.id) == 0 &&
        header->recipient.life == 0)
        return SHOAL_OPEN_OK;
    if (!s_is_named (&header->recipient))
        return SHOAL_OPEN_MALFORMED;
    if (memcmp (header->recipient.id, self->self.id, sizeof nobody.id) != 0)
        return SHOAL_OPEN_MISDIRECTED;
    if (header->recipient.life == self->self.life)
        return SHOAL_OPEN_OK;
    return header->recipient.life < self->self.life ? SHOAL_OPEN_STALE : SHOAL_OPEN_MISDIRECTED;
}

shoal_open_result_t
shoal_opener_open (shoal_opener_t *self, shoal_purpose_t purpose, const uint8_t *data, size_t size,
                   uint8_t *out, size_t capacity, size_t *payload_size, shoal_envelope_t *envelope)
{
    if (size < SHOAL_ENVELOPE_HEADER || size > shoal_envelope_size_max (purpose))
        return SHOAL_OPEN_SIZE;
    if (data[AT_VERSION] != SHOAL_ENVELOPE_VERSION)
        return SHOAL_OPEN_VERSION;
    shoal_envelope_t header = {
        .mode = data[AT_MODE],
        .purpose = data[AT_PURPOSE],
        .key_id = (uint32_t) shoal__get_be (data + AT_KEY_ID, 4),
        .seq = shoal__get_be (data + AT_SEQ, 8),
    };
    s_get_life (data + AT_SENDER, &header.sender);
    s_get_life (data + AT_RECIPIENT, &header.recipient);
    if (data[AT_RESERVED] != 0 || header.mode > SHOAL_ENVELOPE_SEALED ||
        (header.mode == SHOAL_ENVELOPE_PLAINTEXT) != (header.key_id == 0))
        return SHOAL_OPEN_MALFORMED;
    if (header.purpose != purpose)
        return SHOAL_OPEN_PURPOSE;

    bool keyed = self->keyring && shoal_keyring_size (self->keyring) > 0;
    if (keyed && header.mode == SHOAL_ENVELOPE_PLAINTEXT)
        return SHOAL_OPEN_PLAINTEXT;
    if (!keyed && header.mode == SHOAL_ENVELOPE_SEALED)
        return SHOAL_OPEN_SEALED;
    shoal_open_result_t result = s_check_parties (self, &header);
    if (result != SHOAL_OPEN_OK)
        return result;

    if (!keyed) {
        size_t body = size - SHOAL_ENVELOPE_HEADER;
        if (body > capacity)
            return SHOAL_OPEN_SIZE;
        memcpy (out, data + SHOAL_ENVELOPE_HEADER, body);
        *payload_size = body;
        if (envelope)
            *envelope = header;
        return SHOAL_OPEN_OK;
    }

    if (size < SHOAL_ENVELOPE_OVERHEAD)
        return SHOAL_OPEN_SIZE;
    const uint8_t *subkey = shoal_keyring_subkey (self->keyring, header.key_id, purpose);
    if (!subkey)
        return SHOAL_OPEN_UNKNOWN_KEY;
    size_t body = size - SHOAL_ENVELOPE_OVERHEAD;
    if (body > capacity)
        return SHOAL_OPEN_SIZE;

    //  Refuse replays before paying for decryption; record only after the
    //  envelope proved authentic, so forgeries cannot move the window.
    bool addressed = header.recipient.life != 0;
    shoal_replay_t *replay = addressed ? self->addressed : self->unaddressed;
    result = s_replay_result (shoal_replay_check (replay, header.sender.id, header.purpose,
                                                  header.sender.life, header.seq));
    if (result != SHOAL_OPEN_OK)
        return result;

    uint8_t nonce[crypto_aead_xchacha20poly1305_ietf_NPUBBYTES];
    memcpy (nonce, data + AT_NONCE, SHOAL_ENVELOPE_NONCE);
    shoal__put_be (nonce + SHOAL_ENVELOPE_NONCE, header.seq, 8);
    if (crypto_aead_xchacha20poly1305_ietf_decrypt (out, NULL, NULL,
                                                    data + AT_NONCE + SHOAL_ENVELOPE_NONCE,
                                                    size - AT_NONCE - SHOAL_ENVELOPE_NONCE, data,
                                                    SHOAL_ENVELOPE_HEADER, nonce, subkey) != 0)
        return SHOAL_OPEN_FORGED;

    shoal_replay_commit (replay, header.sender.id, header.purpose, header.sender.life, header.seq);
    *payload_size = body;
    if (envelope)
        *envelope = header;
    return SHOAL_OPEN_OK;
}

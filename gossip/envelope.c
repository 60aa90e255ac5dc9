/*  gossip/envelope.c: sealed envelopes around every message. */

#include "envelope.h"

#include <sodium.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(SHOAL_ENVELOPE_TAG == crypto_aead_xchacha20poly1305_ietf_ABYTES, "tag size");
_Static_assert(SHOAL_ENVELOPE_NONCE + 8 == crypto_aead_xchacha20poly1305_ietf_NPUBBYTES,
               "nonce is prefix + sequence number");
_Static_assert(SHOAL_ENVELOPE_OVERHEAD == 72, "the envelope layout is pinned");

//  Field offsets of the header; see envelope.h.
enum {
    AT_VERSION = 0,
    AT_MODE = 1,
    AT_PURPOSE = 2,
    AT_RESERVED = 3,
    AT_KEY_ID = 4,
    AT_SENDER = 8,
    AT_INCARNATION = 24,
    AT_SEQ = 32,
    AT_NONCE = 40,
};
_Static_assert(AT_SEQ + 8 == SHOAL_ENVELOPE_HEADER, "header ends after the sequence number");

static void
s_put_be (uint8_t *at, uint64_t value, int width)
{
    for (int i = width - 1; i >= 0; i--, value >>= 8)
        at[i] = (uint8_t) value;
}

static uint64_t
s_get_be (const uint8_t *at, int width)
{
    uint64_t value = 0;
    for (int i = 0; i < width; i++)
        value = (value << 8) | at[i];
    return value;
}

const char *
shoal_open_result_name (shoal_open_result_t result)
{
    static const char *names[SHOAL_OPEN_RESULT_COUNT] = {
        "ok",     "size",        "version", "malformed", "purpose", "plaintext",
        "sealed", "unknown-key", "forged",  "replayed",  "stale",
    };
    return (unsigned) result < SHOAL_OPEN_RESULT_COUNT ? names[result] : "unknown";
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

struct _shoal_sealer_t {
    const shoal_keyring_t *keyring;
    uint8_t sender[16];
    uint64_t incarnation;
    uint8_t nonce_prefix[SHOAL_ENVELOPE_NONCE];
    uint64_t seq[SHOAL_PURPOSE_COUNT]; //  last number used, per purpose
};

shoal_sealer_t *
shoal_sealer_new (const shoal_keyring_t *keyring, const uint8_t sender[16], uint64_t incarnation,
                  const uint8_t nonce_prefix[SHOAL_ENVELOPE_NONCE])
{
    shoal_sealer_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->keyring = keyring;
    memcpy (self->sender, sender, sizeof self->sender);
    self->incarnation = incarnation;
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

long
shoal_sealer_seal (shoal_sealer_t *self, shoal_purpose_t purpose, const uint8_t *payload,
                   size_t size, uint8_t *out, size_t capacity)
{
    size_t carrier = shoal_envelope_size_max (purpose);
    uint32_t key_id = self->keyring ? shoal_keyring_primary (self->keyring) : 0;
    size_t total =
        SHOAL_ENVELOPE_HEADER + size + (key_id ? SHOAL_ENVELOPE_NONCE + SHOAL_ENVELOPE_TAG : 0);
    if (carrier == 0 || size > carrier || total > carrier || total > capacity)
        return -1;

    uint64_t seq = ++self->seq[purpose - 1];
    out[AT_VERSION] = SHOAL_ENVELOPE_VERSION;
    out[AT_MODE] = key_id ? SHOAL_ENVELOPE_SEALED : SHOAL_ENVELOPE_PLAINTEXT;
    out[AT_PURPOSE] = (uint8_t) purpose;
    out[AT_RESERVED] = 0;
    s_put_be (out + AT_KEY_ID, key_id, 4);
    memcpy (out + AT_SENDER, self->sender, 16);
    s_put_be (out + AT_INCARNATION, self->incarnation, 8);
    s_put_be (out + AT_SEQ, seq, 8);
    if (!key_id) {
        memmove (out + SHOAL_ENVELOPE_HEADER, payload, size);
        return (long) total;
    }
    uint8_t nonce[crypto_aead_xchacha20poly1305_ietf_NPUBBYTES];
    memcpy (nonce, self->nonce_prefix, SHOAL_ENVELOPE_NONCE);
    s_put_be (nonce + SHOAL_ENVELOPE_NONCE, seq, 8);
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
    shoal_replay_t *replay;
};

shoal_opener_t *
shoal_opener_new (const shoal_keyring_t *keyring, size_t windows)
{
    shoal_opener_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->keyring = keyring;
    self->replay = shoal_replay_new (windows);
    if (!self->replay)
        shoal_opener_destroy (&self);
    return self;
}

void
shoal_opener_destroy (shoal_opener_t **self_p)
{
    if (*self_p) {
        shoal_replay_destroy (&(*self_p)->replay);
        free (*self_p);
        *self_p = NULL;
    }
}

uint64_t
shoal_opener_evictions (const shoal_opener_t *self)
{
    return shoal_replay_evictions (self->replay);
}

static shoal_open_result_t
s_replay_result (shoal_replay_verdict_t verdict)
{
    return verdict == SHOAL_REPLAY_FRESH  ? SHOAL_OPEN_OK
           : verdict == SHOAL_REPLAY_SEEN ? SHOAL_OPEN_REPLAYED
                                          : SHOAL_OPEN_STALE;
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
        .key_id = (uint32_t) s_get_be (data + AT_KEY_ID, 4),
        .incarnation = s_get_be (data + AT_INCARNATION, 8),
        .seq = s_get_be (data + AT_SEQ, 8),
    };
    memcpy (header.sender, data + AT_SENDER, 16);
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

    const uint8_t *subkey = NULL;
    size_t body = size - SHOAL_ENVELOPE_HEADER;
    if (keyed) {
        if (size < SHOAL_ENVELOPE_OVERHEAD)
            return SHOAL_OPEN_SIZE;
        subkey = shoal_keyring_subkey (self->keyring, header.key_id, purpose);
        if (!subkey)
            return SHOAL_OPEN_UNKNOWN_KEY;
        body = size - SHOAL_ENVELOPE_OVERHEAD;
    }
    if (body > capacity)
        return SHOAL_OPEN_SIZE;

    //  Refuse replays before paying for decryption; record only after the
    //  envelope proved authentic, so forgeries cannot move the window.
    shoal_open_result_t result = s_replay_result (shoal_replay_check (
        self->replay, header.sender, header.purpose, header.incarnation, header.seq));
    if (result != SHOAL_OPEN_OK)
        return result;

    if (keyed) {
        uint8_t nonce[crypto_aead_xchacha20poly1305_ietf_NPUBBYTES];
        memcpy (nonce, data + AT_NONCE, SHOAL_ENVELOPE_NONCE);
        s_put_be (nonce + SHOAL_ENVELOPE_NONCE, header.seq, 8);
        if (crypto_aead_xchacha20poly1305_ietf_decrypt (
                out, NULL, NULL, data + AT_NONCE + SHOAL_ENVELOPE_NONCE,
                size - AT_NONCE - SHOAL_ENVELOPE_NONCE, data, SHOAL_ENVELOPE_HEADER, nonce,
                subkey) != 0)
            return SHOAL_OPEN_FORGED;
    } else
        memmove (out, data + SHOAL_ENVELOPE_HEADER, body);

    shoal_replay_commit (self->replay, header.sender, header.purpose, header.incarnation,
                         header.seq);
    *payload_size = body;
    if (envelope)
        *envelope = header;
    return SHOAL_OPEN_OK;
}

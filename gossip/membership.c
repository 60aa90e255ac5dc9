/*  gossip/membership.c: who is in the cluster, by SWIM with Lifeguard.

    The member table is an array of slots that never move while a member
    holds one, so the dissemination queue, the suspicions and the probe
    order can name a member by slot. Beside it: a keyed open-addressing index
    from id to slot, a dense list of the used slots (for iteration, random
    picks and digests), and the probe order, a shuffled list walked round
    robin and shuffled again at its end.

    The dissemination queue holds at most one entry per member, its latest
    record, in buckets by how often it was sent: piggybacking takes bucket 0
    first (newest first), then bucket 1 and so on, and moves what it sent to
    the tail of the next bucket, so updates go least-sent first and, among
    equals, in turn.

    Outputs point into memory this object owns: messages into the outbox's
    update array, events and messages into member metas. A meta replaced or
    forgotten during an input is therefore retired, not freed, until the
    next input begins.
*/

#include "gossip/membership.h"

#include "wire/check.h"
#include "wire/bigendian.h"
#include "wire/metapool.h"
#include "wire/splitmix.h"
#include "wire/ids.h"

#include <assert.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

//  A tick more than this much later than asked for means this node stalled.
#define S_LATE_MS(config) ((config)->probe_timeout_ms)
//  A relay waits this share of probe_timeout before its NACK (Lifeguard's
//  80 %), so the NACK reaches the requester before its probe ends.
#define S_NACK_PERCENT 80
//  A node that hears a new suspicion from another probes the suspect at
//  once, out of turn, with chance this many times k / live members:
//  about 3k nodes check at once, so the k confirmations a quick verdict
//  needs come within a probe interval or two instead of waiting for the
//  suspect's turn in random probe orders (about one prober a second, so
//  k confirmations took anything from 2 to 10 s). Each one is still a whole
//  probe by a different node, as independent as Lifeguard asks.
#define S_CONFIRM_PROBERS 3
//  Unanswered pings after which a contact is dropped (a seed only while
//  this node knows another live member).
#define S_CONTACT_ATTEMPTS 3
//  Newer records sent back at most in answer to one message of old news.
#define S_CORRECTIONS_MAX 4
//  Queued updates looked at for one message at most.
#define S_PIGGYBACK_SCAN 256
//  The smallest update (nil meta) encodes in 40 bytes (docs/wire.md 5.3).
#define S_UPDATE_MIN 40
//  The largest encoded record: a meta within SHOAL_MEMBERSHIP_META_MAX and
//  the update's own fields, with room to spare.
#define S_RECORD_BUFFER (SHOAL_MEMBERSHIP_META_MAX + 256)
//  ceil (log10 (SHOAL_MEMBERS_MAX + 1)): the most retransmit rounds per mult.
#define S_DIGITS_MAX 5

//  Room for outputs kept between inputs, in items; more is freed when the
//  next input begins.
#define S_OUTPUTS_KEPT 256

//  Times kept per member are 32-bit stamps: milliseconds since the table's
//  epoch, plus one. When the clock is S_STAMP_REBASE past the epoch, the
//  epoch moves to S_STAMP_KEEP before now; an older time becomes the epoch
//  (a since) or never (a heard). The config keeps tombstone_ms and twice
//  probe_interval_ms within S_STAMP_KEEP, so no decision changes: such a
//  member was heard too long ago to count, and such a tombstone is past its
//  time either way (only which of two of those goes first at members_max).
#define S_STAMP_KEEP   (1ull << 31)
#define S_STAMP_REBASE (3ull << 30)

#define S_INDIRECT_MAX 16
#define S_FANOUT_MAX   64

_Static_assert(SHOAL_MEMBERS_MAX < 100000, "S_DIGITS_MAX covers the largest table");

//  ---------------------------------------------------------------------
//  Types

typedef struct {
    //  What gossip carries of it: the pool's copy, shared with every table of
    //  the pool that holds the same record; NULL while the slot is free.
    const shoal_record_t *record;
    uint32_t since; //  stamp of when the state began: a tombstone's age
    uint32_t heard; //  stamp of its last message to this node, of any layer; 0: never
    //  Slots and indexes in 16 bits (s_narrow, s_wide), S_NIL for NONE.
    uint16_t prev_16, next_16; //  dissemination queue; next also links free slots
    uint16_t suspicion_16;     //  index in suspicions, NONE when not suspect
    uint8_t transmits;
    bool queued;
} s_member_t;

//  What a simulator's N tables of N members cost (docs/sim.md, "Size and
//  speed"): keep it so.
_Static_assert(sizeof (s_member_t) <= 24, "a member costs a table at most 24 bytes");

//  A slot, or an index among suspicions (at most one per member), fits in
//  16 bits with room for S_NIL: the member table, its id index and its
//  probe order hold them so.
#define S_NIL 0xffff
_Static_assert(SHOAL_MEMBERS_MAX < S_NIL, "slots fit in 16 bits, S_NIL apart");

static uint32_t
s_wide (uint16_t value)
{
    return value == S_NIL ? NONE : value;
}

static uint16_t
s_narrow (uint32_t value)
{
    assert (value == NONE || value < S_NIL);
    return value == NONE ? S_NIL : (uint16_t) value;
}

//  A running suspicion (Lifeguard): accusers[0] raised it, the others
//  confirmed it; min, max and k are fixed when it starts.
typedef struct {
    uint32_t slot;
    uint32_t confirmations;
    uint32_t k;
    uint64_t start_ms;
    uint64_t deadline_ms;
    uint64_t min_ms;
    uint64_t max_ms;
    shoal_id_t accusers[SHOAL_MEMBERSHIP_CONFIRMATIONS_MAX + 1];
} s_suspicion_t;

typedef struct {
    bool active;
    bool acked;
    bool indirect; //  PING-REQs went out
    bool hastened; //  a hint cut its wait short (s_hint_answers)
    uint32_t slot;
    shoal_id_t target;
    uint32_t seq;
    uint64_t sent_ms;    //  the direct PING
    uint64_t timeout_ms; //  ask others from here
    uint64_t end_ms;     //  the verdict
    uint32_t relay_count;
    uint32_t nacks;
    shoal_id_t relays[S_INDIRECT_MAX];
    bool nacked[S_INDIRECT_MAX];
} s_probe_t;

//  A PING-REQ this node relays.
typedef struct {
    bool used;
    shoal_life_t requester;
    char addr[SHOAL_ADDR_MAX + 1];
    uint32_t their_seq;
    uint32_t our_seq;
    shoal_id_t target;
    uint64_t deadline_ms;
} s_relay_t;

//  An address that may hold a member: a seed, or a node a beacon named.
typedef struct {
    bool used;
    bool seed;
    shoal_life_t node; //  all zero for a seed
    char addr[SHOAL_ADDR_MAX + 1];
    uint32_t seq;
    uint32_t attempts;
    uint64_t next_ms;
} s_contact_t;

//  Until when a member gets no SYNC-REPLY, or no hint about it is taken:
//  set for a probe interval and for few members at once, so kept beside the
//  table rather than in every member.
typedef enum { S_HOLD_SYNC, S_HOLD_HINT } s_hold_kind_t;

typedef struct {
    uint32_t slot;
    uint32_t kind; //  s_hold_kind_t
    uint64_t until_ms;
} s_hold_t;

//  The highest life heard of a member, from its metas or envelopes, where
//  it is not its record's meta's: an envelope of a new life came before
//  the record of it. Few at once and for a short while, so kept beside the
//  table rather than in every member.
typedef struct {
    uint32_t slot;
    uint64_t life;
} s_life_note_t;

//  Where a message's updates lie in the outbox's update array.
typedef struct {
    size_t first;
    uint32_t count;
} s_span_t;

struct _shoal_membership_t {
    shoal_membership_config_t config;
    shoal_id_t id;
    uint32_t self_slot;
    uint64_t rng;
    uint8_t index_key[crypto_shorthash_KEYBYTES];
    uint32_t seq;
    uint32_t health;
    bool leaving;
    shoal_metapool_t *metas;
    bool own_metas;

    //  The table. Every array below has room for capacity members.
    s_member_t *members;
    size_t capacity;
    size_t slot_count; //  slots ever handed out
    uint32_t free_slot;
    uint16_t *index; //  slot + 1, 0 when empty
    size_t index_mask;
    uint16_t *dense; //  NULL while it is 0, 1, .. count - 1 (no member removed yet)
    size_t count;
    uint16_t *order;
    size_t order_count;
    size_t order_next;
    s_life_note_t *lives;
    size_t life_count;
    size_t life_capacity;
    s_hold_t *holds; //  the ones still running, as of the last set
    size_t hold_count;
    size_t hold_capacity;
    s_suspicion_t *suspicions; //  grown as suspicions start, not per member
    size_t suspicion_count;
    size_t suspicion_capacity;
    size_t state_count[SHOAL_MEMBER_LEFT + 1];

    uint32_t *bucket_head;
    uint32_t *bucket_tail;
    uint32_t bucket_count;
    size_t queued;

    s_probe_t probe;
    shoal_id_t confirm;    //  a suspect to probe next, out of turn
    bool confirm_wanted;   //  confirm holds one
    shoal_id_t hint;       //  a member the shell says may be gone: probe it out of turn
    bool hint_wanted;      //  hint holds one
    uint64_t hint_next_ms; //  no hinted probe starts before this
    s_relay_t relays[SHOAL_MEMBERSHIP_RELAYS_MAX];
    s_contact_t contacts[SHOAL_MEMBERSHIP_CONTACTS_MAX];

    uint64_t epoch_ms; //  of the members' stamps

    uint64_t next_probe_ms;
    uint64_t next_gossip_ms;
    uint64_t next_sync_ms;
    uint64_t next_tombstone_ms;
    uint64_t wake_ms;
    uint64_t stranger_digest_ms; //  no digest to an unknown sender before this

    //  Per fine bucket (shoal_membership_bucket), the sum of its members'
    //  record hashes; digests fold them to fewer buckets.
    uint64_t bucket_sums[SHOAL_DIGEST_BUCKETS_MAX];
    uint64_t digest_sums[SHOAL_DIGEST_BUCKETS_MAX]; //  what this input's DIGESTs carry
    size_t sync_cursor;

    //  Outputs of the current input.
    shoal_membership_send_t *out;
    s_span_t *spans;
    size_t out_count;
    size_t out_capacity;
    size_t spans_capacity;
    shoal_update_t *out_updates;
    size_t out_update_count;
    size_t out_update_capacity;
    shoal_membership_event_t *events;
    size_t event_count;
    size_t event_capacity;
    const shoal_record_t **retired;
    size_t retired_count;
    size_t retired_capacity;

    shoal_membership_stats_t stats;
    shoal_membership_rtt_t rtt;
};

//  ---------------------------------------------------------------------
//  Small helpers

static const shoal_id_t s_zero_id;

static bool
s_id_zero (const shoal_id_t *id)
{
    return shoal_id_equal (id, &s_zero_id);
}

static shoal_id_t
s_life_id (const shoal_life_t *life)
{
    shoal_id_t id;
    memcpy (id.bytes, life->id, SHOAL_ID_SIZE);
    return id;
}

static uint64_t
s_min (uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

static uint64_t
s_max (uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

//  Copies an address that is known to fit; "" for NULL.
static void
s_addr_copy (char dest[SHOAL_ADDR_MAX + 1], const char *addr)
{
    size_t size = addr ? strnlen (addr, SHOAL_ADDR_MAX) : 0;
    memcpy (dest, addr ? addr : "", size);
    dest[size] = '\0';
}

static bool
s_addr_valid (const char *addr)
{
    return addr && *addr && strnlen (addr, SHOAL_ADDR_MAX + 1) <= SHOAL_ADDR_MAX;
}

//  Frees an array of more than S_OUTPUTS_KEPT items.
static void
s_release (void **array, size_t *capacity)
{
    if (*capacity > S_OUTPUTS_KEPT) {
        free (*array);
        *array = NULL;
        *capacity = 0;
    }
}

//  Grows an array to hold need items. Returns 0, or -1 when memory is short
//  (the array is then unchanged).
static int
s_reserve (void **array, size_t *capacity, size_t need, size_t item_size)
{
    if (need <= *capacity)
        return 0;
    size_t grown = *capacity ? *capacity : 8;
    while (grown < need)
        grown *= 2;
    void *bigger = realloc (*array, grown * item_size);
    if (!bigger)
        return -1;
    *array = bigger;
    *capacity = grown;
    return 0;
}

//  ---------------------------------------------------------------------
//  Randomness: splitmix64 over the seed, so a run replays from its seed.

static uint64_t
s_random (shoal_membership_t *self)
{
    return splitmix_next (&self->rng);
}

//  A number in [0, bound), bound > 0.
static uint64_t
s_random_below (shoal_membership_t *self, uint64_t bound)
{
    return (uint64_t) (((unsigned __int128) s_random (self) * bound) >> 64);
}

static uint32_t
s_next_seq (shoal_membership_t *self)
{
    if (++self->seq == 0)
        self->seq = 1;
    return self->seq;
}

//  ---------------------------------------------------------------------
//  Stamps: member times in 32 bits (S_STAMP_KEEP above)

static void
s_rebase (shoal_membership_t *self, uint64_t now)
{
    uint64_t epoch = now - S_STAMP_KEEP;
    for (size_t slot = 0; slot < self->slot_count; slot++) {
        s_member_t *member = &self->members[slot];
        uint64_t since = self->epoch_ms + member->since - 1;
        uint64_t heard = self->epoch_ms + member->heard - 1;
        member->since = since > epoch ? (uint32_t) (since - epoch + 1) : 1;
        member->heard = member->heard && heard > epoch ? (uint32_t) (heard - epoch + 1) : 0;
    }
    self->epoch_ms = epoch;
}

//  The stamp of now. Time never goes back; should it go back past the
//  epoch, the stamp is the epoch's.
static uint32_t
s_stamp (shoal_membership_t *self, uint64_t now)
{
    if (now < self->epoch_ms)
        return 1;
    if (now - self->epoch_ms >= S_STAMP_REBASE)
        s_rebase (self, now);
    return (uint32_t) (now - self->epoch_ms + 1);
}

//  The time a stamp stands for; 0 for the stamp 0 (never).
static uint64_t
s_stamp_ms (const shoal_membership_t *self, uint32_t stamp)
{
    return stamp ? self->epoch_ms + stamp - 1 : 0;
}

//  ---------------------------------------------------------------------
//  Formulas, in integers so that every machine computes the same

#define S_ONE 65536 //  1.0 in 16.16 fixed point

//  log2 (x) in 16.16 fixed point, x >= 1: the integer part is the highest
//  bit; the fraction comes bit by bit from squaring x scaled into [1, 2).
static uint64_t
s_log2 (uint64_t x)
{
    assert (x >= 1);
    int high = 63 - __builtin_clzll (x);
    uint64_t result = (uint64_t) high << 16;
    uint64_t y = high <= 31 ? x << (31 - high) : x >> (high - 31); //  y / 2^31 in [1, 2)
    for (int bit = 15; bit >= 0; bit--) {
        y = (y * y) >> 31;
        if (y >= (1ull << 32)) {
            y >>= 1;
            result |= 1ull << bit;
        }
    }
    return result;
}

//  ceil (log10 (n + 1)): the number of decimal digits of n.
static uint32_t
s_digits (size_t n)
{
    uint32_t digits = 1;
    while (n >= 10) {
        n /= 10;
        digits++;
    }
    return digits;
}

uint32_t
shoal_membership_retransmits (const shoal_membership_config_t *config, size_t members)
{
    return config->retransmit_mult * s_digits (members);
}

static uint32_t
s_suspicion_k (const shoal_membership_config_t *config, size_t members)
{
    uint32_t k = config->suspicion_confirmations;
    return members < (size_t) k + 2 ? 0 : k;
}

static uint64_t
s_suspicion_min (const shoal_membership_config_t *config, size_t members)
{
    uint64_t scale = S_ONE; //  max (1, log10 members)
    if (members > 10)
        scale = s_log2 (members) * S_ONE / s_log2 (10);
    return (uint64_t) config->suspicion_mult * scale * config->probe_interval_ms / S_ONE;
}

static uint64_t
s_suspicion_timeout (uint64_t min, uint64_t max, uint32_t k, uint32_t confirmations)
{
    if (k == 0 || max <= min)
        return min;
    uint32_t c = confirmations < k ? confirmations : k;
    uint64_t fraction = s_log2 (c + 1) * S_ONE / s_log2 (k + 1);
    uint64_t cut = (uint64_t) (((unsigned __int128) (max - min) * fraction) / S_ONE);
    return max - cut > min ? max - cut : min;
}

uint64_t
shoal_membership_suspicion_ms (const shoal_membership_config_t *config, size_t members,
                               uint32_t confirmations)
{
    uint64_t min = s_suspicion_min (config, members);
    return s_suspicion_timeout (min, min * config->suspicion_max_mult,
                                s_suspicion_k (config, members), confirmations);
}

//  ---------------------------------------------------------------------
//  Configuration

void
shoal_membership_config_lan (shoal_membership_config_t *config)
{
    *config = (shoal_membership_config_t){
        .probe_interval_ms = 1000,
        .probe_timeout_ms = 400,
        .indirect_checks = 3,
        .gossip_interval_ms = 200,
        .gossip_fanout = 3,
        .retransmit_mult = 4,
        .suspicion_mult = 2,
        .suspicion_max_mult = 6,
        .suspicion_confirmations = 3,
        .awareness_max = 8,
        .sync_interval_ms = 30000,
        .tombstone_ms = 3600000,
        .tombstone_probe_interval_ms = 5000,
        .members_max = SHOAL_MEMBERS_MAX,
        .meta_size_max = 512,
    };
}

void
shoal_membership_config_wan (shoal_membership_config_t *config)
{
    shoal_membership_config_lan (config);
    config->probe_interval_ms *= 5;
    config->probe_timeout_ms *= 5;
    config->gossip_interval_ms *= 5;
    config->sync_interval_ms *= 5;
    config->tombstone_probe_interval_ms *= 5;
}

void
shoal_membership_config_loopback (shoal_membership_config_t *config)
{
    shoal_membership_config_lan (config);
    config->probe_interval_ms = 100;
    config->probe_timeout_ms = 50; //  not 40: test machines are loaded
    config->gossip_interval_ms = 20;
    config->sync_interval_ms = 3000;
    config->tombstone_ms = 360000;
    config->tombstone_probe_interval_ms = 500;
}

const char *
shoal_membership_config_check (const shoal_membership_config_t *config)
{
    if (!config)
        return "no config";
    if (config->probe_interval_ms == 0 || config->probe_timeout_ms == 0)
        return "probe_interval_ms and probe_timeout_ms must be > 0";
    if (config->probe_timeout_ms >= config->probe_interval_ms)
        return "probe_timeout_ms must be < probe_interval_ms, to leave time for indirect probes";
    if (config->indirect_checks > S_INDIRECT_MAX)
        return "indirect_checks must be <= 16";
    if (config->gossip_interval_ms == 0 || config->gossip_fanout == 0 ||
        config->gossip_fanout > S_FANOUT_MAX)
        return "gossip_interval_ms must be > 0 and gossip_fanout 1 to 64";
    if (config->retransmit_mult == 0 || config->retransmit_mult > 50)
        return "retransmit_mult must be 1 to 50";
    if (config->suspicion_mult == 0 || config->suspicion_mult > 64 ||
        config->suspicion_max_mult == 0 || config->suspicion_max_mult > 64)
        return "suspicion_mult and suspicion_max_mult must be 1 to 64";
    if (config->suspicion_confirmations > SHOAL_MEMBERSHIP_CONFIRMATIONS_MAX)
        return "suspicion_confirmations must be 0 to 8";
    if (config->awareness_max == 0 || config->awareness_max > 64)
        return "awareness_max must be 1 to 64";
    if (config->sync_interval_ms == 0 || config->tombstone_ms == 0 ||
        config->tombstone_probe_interval_ms == 0)
        return "sync_interval_ms, tombstone_ms and tombstone_probe_interval_ms must be > 0";
    if (config->tombstone_ms > S_STAMP_KEEP / 2 || config->probe_interval_ms > S_STAMP_KEEP / 4)
        return "tombstone_ms must be <= 1073741824 (12 days), probe_interval_ms <= 536870912";
    if (config->members_max < 2 || config->members_max > SHOAL_MEMBERS_MAX)
        return "members_max must be 2 to 16384 (SHOAL_MEMBERS_MAX)";
    if (config->meta_size_max < 16 || config->meta_size_max > SHOAL_MEMBERSHIP_META_MAX)
        return "meta_size_max must be 16 to 1024 (SHOAL_MEMBERSHIP_META_MAX)";
    return NULL;
}

//  ---------------------------------------------------------------------
//  Records: one member as an update, and its encoded form
//
//  A SYNC-REPLY holding one update and no jobs encodes as
//  [1, 0x22, [update], 0, [], 0, 0]: a 4-byte head (97 01 22 91), the
//  update, a 4-byte tail (00 90 00 00). So the real encoder gives a
//  record's exact bytes.

#define S_RECORD_HEAD 4
#define S_RECORD_TAIL 4

//  The digest's hash of bytes: the first 8 bytes, big-endian, of their
//  BLAKE2b-128 (docs/membership.md, "Digest").
static uint64_t
s_digest_hash (const uint8_t *bytes, size_t size)
{
    uint8_t hash[crypto_generichash_BYTES_MIN];
    crypto_generichash (hash, sizeof hash, bytes, (unsigned long long) size, NULL, 0);
    return shoal__get_be (hash, 8);
}

//  Encodes update alone into out (NULL: only measures). Returns its size,
//  or -1 when it breaks a wire limit; its bytes start at out + S_RECORD_HEAD.
static long
s_record_encode (const shoal_update_t *update, uint8_t *out, size_t capacity)
{
    shoal_msg_t msg = { .type = SHOAL_MSG_SYNC_REPLY };
    msg.u.sync_reply.member_count = 1;
    msg.u.sync_reply.members = (shoal_update_t *) update;
    shoal_wire_error_t err;
    long size = shoal_msg_encode (&msg, out, capacity, &err);
    if (size < 0)
        return -1;
    assert (!out || (out[0] == 0x97 && out[3] == 0x91 && out[size - 3] == 0x90));
    return size - S_RECORD_HEAD - S_RECORD_TAIL;
}

//  The size meta adds to an alive record, as meta_size_max counts it; -1
//  when it breaks a wire limit.
static long
s_meta_size (const shoal_meta_t *meta)
{
    shoal_update_t update = { .state = SHOAL_MEMBER_ALIVE, .meta = (shoal_meta_t *) meta };
    long with = s_record_encode (&update, NULL, 0);
    update.meta = NULL;
    long without = s_record_encode (&update, NULL, 0);
    return with < 0 ? -1 : with - without + 1; //  + the nil it replaces
}

const char *
shoal_membership_meta_check (const shoal_membership_config_t *config, const shoal_meta_t *meta)
{
    if (!meta)
        return "no meta";
    if (meta->life == 0)
        return "meta.life must be >= 1";
    if (!s_addr_valid (meta->addr))
        return "meta.addr must be 1 to 64 bytes";
    long size = s_meta_size (meta);
    if (size < 0)
        return "meta breaks a wire limit (wire/wire.h)";
    if ((uint64_t) size > config->meta_size_max)
        return "meta encodes larger than meta_size_max";
    return NULL;
}

//  ---------------------------------------------------------------------
//  Records: immutable copies from the pool, retired when replaced

//  Keeps a record (and so its meta) held until the next input begins:
//  outputs may point into it. If even that list cannot grow, the record
//  stays held rather than dangles.
static void
s_retire (shoal_membership_t *self, const shoal_record_t *record)
{
    if (s_reserve ((void **) &self->retired, &self->retired_capacity, self->retired_count + 1,
                   sizeof (shoal_record_t *)) == 0)
        self->retired[self->retired_count++] = record;
}

//  ---------------------------------------------------------------------
//  The table: slots, the id index, the dense list, the probe order

static size_t
s_home (const shoal_membership_t *self, const shoal_id_t *id)
{
    //  Keyed (SipHash), so ids chosen by a peer cannot pile up in one run.
    uint8_t hash[crypto_shorthash_BYTES];
    crypto_shorthash (hash, id->bytes, SHOAL_ID_SIZE, self->index_key);
    uint64_t home;
    memcpy (&home, hash, sizeof home);
    return (size_t) home & self->index_mask;
}

static uint32_t
s_lookup (const shoal_membership_t *self, const shoal_id_t *id)
{
    for (size_t i = s_home (self, id); self->index[i]; i = (i + 1) & self->index_mask) {
        uint32_t slot = self->index[i] - 1;
        if (shoal_id_equal (&self->members[slot].record->node, id))
            return slot;
    }
    return NONE;
}

static void
s_index_insert (shoal_membership_t *self, uint32_t slot)
{
    size_t i = s_home (self, &self->members[slot].record->node);
    while (self->index[i])
        i = (i + 1) & self->index_mask;
    self->index[i] = (uint16_t) (slot + 1);
}

//  Removes slot and shifts back the entries after it that probed past it.
static void
s_index_remove (shoal_membership_t *self, uint32_t slot)
{
    size_t hole = s_home (self, &self->members[slot].record->node);
    while (self->index[hole] != slot + 1)
        hole = (hole + 1) & self->index_mask;
    for (size_t j = (hole + 1) & self->index_mask; self->index[j]; j = (j + 1) & self->index_mask) {
        size_t home = s_home (self, &self->members[self->index[j] - 1].record->node);
        bool stays = hole < j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (!stays) {
            self->index[hole] = self->index[j];
            hole = j;
        }
    }
    self->index[hole] = 0;
}

//  The slot at place at of the dense list.
static uint32_t
s_dense (const shoal_membership_t *self, size_t at)
{
    assert (at < self->count);
    return self->dense ? self->dense[at] : (uint32_t) at;
}

//  Writes the dense list out, before its first removal: until then it is
//  the slots in order, and a simulator's thousands of tables need not hold
//  it. Returns 0, or -1 when memory is short.
static int
s_dense_make (shoal_membership_t *self)
{
    self->dense = malloc (self->capacity * sizeof *self->dense);
    if (!self->dense)
        return -1;
    for (size_t at = 0; at < self->count; at++)
        self->dense[at] = (uint16_t) at;
    return 0;
}

//  Grows every per-member array by half (a simulator holds thousands of
//  tables, so spare room costs) and rebuilds the index, at most two thirds
//  full. Returns 0, or -1 when memory is short (the table is then unchanged
//  but for spare room).
static int
s_grow (shoal_membership_t *self)
{
    size_t capacity = self->capacity ? self->capacity + self->capacity / 2 : 16;
    if (capacity > self->config.members_max)
        capacity = self->config.members_max;
    size_t slots = 4;
    while (slots < capacity + capacity / 2)
        slots *= 2;
    uint16_t *index = calloc (slots, sizeof *index);
    if (!index)
        return -1;
    size_t sizes[] = { sizeof (s_member_t), sizeof *self->order, sizeof *self->dense };
    void **arrays[] = { (void **) &self->members, (void **) &self->order, (void **) &self->dense };
    size_t array_count = self->dense ? 3 : 2;
    for (size_t i = 0; i < array_count; i++) {
        void *bigger = realloc (*arrays[i], capacity * sizes[i]);
        if (!bigger) {
            free (index);
            return -1;
        }
        *arrays[i] = bigger;
    }
    memset (self->members + self->capacity, 0, (capacity - self->capacity) * sizeof (s_member_t));
    self->capacity = capacity;
    free (self->index);
    self->index = index;
    self->index_mask = slots - 1;
    for (size_t i = 0; i < self->count; i++)
        s_index_insert (self, s_dense (self, i));
    return 0;
}

//  Puts slot at a random place in the probe order, as memberlist does, so a
//  new member is probed within one round on average.
static void
s_order_insert (shoal_membership_t *self, uint32_t slot)
{
    size_t at = (size_t) s_random_below (self, self->order_count + 1);
    self->order[self->order_count] = at < self->order_count ? self->order[at] : s_narrow (slot);
    self->order[at] = s_narrow (slot);
    self->order_count++;
}

static void
s_order_remove (shoal_membership_t *self, uint32_t slot)
{
    for (size_t i = 0; i < self->order_count; i++)
        if (self->order[i] == slot) {
            memmove (self->order + i, self->order + i + 1,
                     (self->order_count - i - 1) * sizeof *self->order);
            self->order_count--;
            if (i < self->order_next)
                self->order_next--;
            return;
        }
}

//  A new round: every member but this node, shuffled (Fisher-Yates).
static void
s_order_shuffle (shoal_membership_t *self)
{
    self->order_count = 0;
    for (size_t i = 0; i < self->count; i++)
        if (s_dense (self, i) != self->self_slot)
            self->order[self->order_count++] = s_narrow (s_dense (self, i));
    for (size_t i = self->order_count; i > 1; i--) {
        size_t j = (size_t) s_random_below (self, i);
        uint16_t swap = self->order[i - 1];
        self->order[i - 1] = self->order[j];
        self->order[j] = swap;
    }
    self->order_next = 0;
}

//  ---------------------------------------------------------------------
//  The dissemination queue

static uint32_t
s_retransmit_limit (const shoal_membership_t *self)
{
    size_t live = self->state_count[SHOAL_MEMBER_ALIVE] + self->state_count[SHOAL_MEMBER_SUSPECT];
    return shoal_membership_retransmits (&self->config, live);
}

static void
s_queue_unlink (shoal_membership_t *self, uint32_t slot)
{
    s_member_t *member = &self->members[slot];
    uint32_t bucket = member->transmits;
    if (s_wide (member->prev_16) != NONE)
        self->members[s_wide (member->prev_16)].next_16 = member->next_16;
    else
        self->bucket_head[bucket] = s_wide (member->next_16);
    if (s_wide (member->next_16) != NONE)
        self->members[s_wide (member->next_16)].prev_16 = member->prev_16;
    else
        self->bucket_tail[bucket] = s_wide (member->prev_16);
    member->queued = false;
    self->queued--;
}

static void
s_queue_append (shoal_membership_t *self, uint32_t slot)
{
    s_member_t *member = &self->members[slot];
    uint32_t bucket = member->transmits;
    member->prev_16 = s_narrow (self->bucket_tail[bucket]);
    member->next_16 = s_narrow (NONE);
    if (s_wide (member->prev_16) != NONE)
        self->members[s_wide (member->prev_16)].next_16 = s_narrow (slot);
    else
        self->bucket_head[bucket] = slot;
    self->bucket_tail[bucket] = slot;
    member->queued = true;
    self->queued++;
}

//  Queues a member's record afresh: news goes first, unsent.
static void
s_queue_push (shoal_membership_t *self, uint32_t slot)
{
    s_member_t *member = &self->members[slot];
    if (member->queued)
        s_queue_unlink (self, slot);
    member->transmits = 0;
    member->prev_16 = s_narrow (NONE);
    member->next_16 = s_narrow (self->bucket_head[0]);
    if (s_wide (member->next_16) != NONE)
        self->members[s_wide (member->next_16)].prev_16 = s_narrow (slot);
    else
        self->bucket_tail[0] = slot;
    self->bucket_head[0] = slot;
    member->queued = true;
    self->queued++;
}

//  A queued record went out once more: to the next bucket, or out of the
//  queue once sent limit times.
static void
s_queue_sent (shoal_membership_t *self, uint32_t slot, uint32_t limit)
{
    s_member_t *member = &self->members[slot];
    s_queue_unlink (self, slot);
    member->transmits++;
    if (member->transmits < limit && member->transmits < self->bucket_count)
        s_queue_append (self, slot);
}

//  ---------------------------------------------------------------------
//  Members

static void
s_record (const shoal_membership_t *self, uint32_t slot, shoal_update_t *update, bool canonical)
{
    const s_member_t *member = &self->members[slot];
    *update = (shoal_update_t){
        .node = member->record->node,
        .incarnation = member->record->incarnation,
        .state = member->record->state,
        .by = canonical ? s_zero_id : member->record->by,
        .meta = member->record->state == SHOAL_MEMBER_ALIVE ? member->record->meta : NULL,
    };
}

//  The highest life heard of slot.
static uint64_t
s_life (const shoal_membership_t *self, uint32_t slot)
{
    for (size_t i = 0; i < self->life_count; i++)
        if (self->lives[i].slot == slot)
            return self->lives[i].life;
    return self->members[slot].record->meta->life;
}

//  Sets the highest life heard of slot; forget: slot is leaving the table.
//  When memory is short it stays its meta's: at worst an envelope of the
//  older life taken a while longer.
static void
s_life_note (shoal_membership_t *self, uint32_t slot, uint64_t life, bool forget)
{
    size_t at = 0;
    while (at < self->life_count && self->lives[at].slot != slot)
        at++;
    if (forget || life == self->members[slot].record->meta->life) {
        if (at < self->life_count)
            self->lives[at] = self->lives[--self->life_count];
    } else if (at < self->life_count)
        self->lives[at].life = life;
    else if (s_reserve ((void **) &self->lives, &self->life_capacity, self->life_count + 1,
                        sizeof (s_life_note_t)) == 0)
        self->lives[self->life_count++] = (s_life_note_t){ .slot = slot, .life = life };
}

static void
s_life_set (shoal_membership_t *self, uint32_t slot, uint64_t life)
{
    s_life_note (self, slot, life, false);
}

//  The pool's record of this content, held by the caller; made with its
//  size, hash and digest bucket when no table held it. The canonical form
//  the hash covers differs from what gossip sends only in by, which always
//  takes 18 bytes, so its size is the size gossip sends. NULL when memory
//  is short.
static const shoal_record_t *
s_record_get (shoal_membership_t *self, const shoal_id_t *node, const shoal_id_t *by,
              uint64_t incarnation, uint8_t state, shoal_meta_t *meta)
{
    shoal_record_t key = {
        .node = *node, .by = *by, .incarnation = incarnation, .meta = meta, .state = state
    };
    bool made;
    shoal_record_t *record = shoal_metapool_record (self->metas, &key, &made);
    if (record && made) {
        shoal_update_t update = { .node = *node,
                                  .incarnation = incarnation,
                                  .state = state,
                                  .meta = state == SHOAL_MEMBER_ALIVE ? meta : NULL };
        uint8_t buffer[S_RECORD_BUFFER];
        long size = s_record_encode (&update, buffer, sizeof buffer);
        assert (size > 0 && size <= UINT16_MAX);
        record->size = (uint16_t) size;
        record->hash = s_digest_hash (buffer + S_RECORD_HEAD, (size_t) size);
        record->bucket = shoal_membership_bucket (node);
    }
    return record;
}

//  Gives slot record, which the caller held: the old one is retired and
//  the digest bucket's sum follows.
static void
s_record_set (shoal_membership_t *self, uint32_t slot, const shoal_record_t *record)
{
    s_member_t *member = &self->members[slot];
    uint64_t life = record->meta->life; //  a new member's
    if (member->record) {
        life = s_life (self, slot);
        self->bucket_sums[member->record->bucket] -= member->record->hash;
        s_retire (self, member->record);
    }
    member->record = record;
    self->bucket_sums[record->bucket] += record->hash;
    s_life_set (self, slot, life);
}

//  Gives slot the record of this content. Returns 0, or -1 when memory is
//  short (the member is then unchanged).
static int
s_record_change (shoal_membership_t *self, uint32_t slot, const shoal_id_t *by,
                 uint64_t incarnation, uint8_t state, shoal_meta_t *meta)
{
    const shoal_record_t *record =
        s_record_get (self, &self->members[slot].record->node, by, incarnation, state, meta);
    if (!record)
        return -1;
    s_record_set (self, slot, record);
    return 0;
}

static void
s_event (shoal_membership_t *self, uint8_t type, uint32_t slot)
{
    if (s_reserve ((void **) &self->events, &self->event_capacity, self->event_count + 1,
                   sizeof (shoal_membership_event_t)))
        return;
    const s_member_t *member = &self->members[slot];
    self->events[self->event_count++] =
        (shoal_membership_event_t){ .type = type,
                                    .node = member->record->node,
                                    .incarnation = member->record->incarnation,
                                    .meta = member->record->meta };
}

static void s_suspicion_end (shoal_membership_t *self, uint32_t slot);

//  ---------------------------------------------------------------------
//  Holds: no SYNC-REPLY to a member, or no hint about it, before a time

//  Whether slot is on hold from kind at now.
static bool
s_on_hold (const shoal_membership_t *self, uint64_t now, uint32_t slot, s_hold_kind_t kind)
{
    for (size_t i = 0; i < self->hold_count; i++)
        if (self->holds[i].slot == slot && self->holds[i].kind == kind)
            return now < self->holds[i].until_ms;
    return false;
}

//  Drops the holds over by now (time only goes on) or of slot (NONE: none).
static void
s_holds_drop (shoal_membership_t *self, uint64_t now, uint32_t slot)
{
    size_t kept = 0;
    for (size_t i = 0; i < self->hold_count; i++)
        if (self->holds[i].until_ms > now && self->holds[i].slot != slot)
            self->holds[kept++] = self->holds[i];
    self->hold_count = kept;
}

//  Holds slot from kind until until_ms. When memory is short it is not
//  held: at worst a reply or a hint more.
static void
s_hold (shoal_membership_t *self, uint64_t now, uint32_t slot, s_hold_kind_t kind,
        uint64_t until_ms)
{
    s_holds_drop (self, now, NONE);
    for (size_t i = 0; i < self->hold_count; i++)
        if (self->holds[i].slot == slot && self->holds[i].kind == kind) {
            self->holds[i].until_ms = until_ms;
            return;
        }
    if (s_reserve ((void **) &self->holds, &self->hold_capacity, self->hold_count + 1,
                   sizeof (s_hold_t)) == 0)
        self->holds[self->hold_count++] =
            (s_hold_t){ .slot = slot, .kind = kind, .until_ms = until_ms };
}

//  Removes slot from the table. Returns 0, or -1 when memory is short for
//  the dense list's first removal (the member then stays).
static int
s_member_remove (shoal_membership_t *self, uint32_t slot)
{
    if (!self->dense && s_dense_make (self))
        return -1;
    s_member_t *member = &self->members[slot];
    if (member->queued)
        s_queue_unlink (self, slot);
    if (s_wide (member->suspicion_16) != NONE)
        s_suspicion_end (self, slot);
    s_order_remove (self, slot);
    s_index_remove (self, slot);
    s_holds_drop (self, 0, slot);
    s_life_note (self, slot, 0, true);
    //  A scan, as the probe order's: removals are rare (a tombstone's end)
    //  and an index per member would cost every table 4 bytes a member.
    size_t at = 0;
    while (self->dense[at] != slot)
        at++;
    assert (at < self->count);
    self->dense[at] = self->dense[--self->count];
    self->state_count[member->record->state]--;
    self->bucket_sums[member->record->bucket] -= member->record->hash;
    s_retire (self, member->record);
    *member = (s_member_t){ .next_16 = s_narrow (self->free_slot) };
    self->free_slot = slot;
    return 0;
}

//  A dead or left member, never this node (which is left once it leaves).
static bool
s_is_tombstone (const shoal_membership_t *self, uint32_t slot)
{
    uint8_t state = self->members[slot].record->state;
    return slot != self->self_slot && (state == SHOAL_MEMBER_DEAD || state == SHOAL_MEMBER_LEFT);
}

//  The tombstone held longest, or NONE.
static uint32_t
s_oldest_tombstone (const shoal_membership_t *self)
{
    uint32_t oldest = NONE;
    for (size_t i = 0; i < self->count; i++) {
        uint32_t slot = s_dense (self, i);
        if (s_is_tombstone (self, slot) &&
            (oldest == NONE || self->members[slot].since < self->members[oldest].since))
            oldest = slot;
    }
    return oldest;
}

//  Adds a member from its alive record. At members_max the oldest tombstone
//  makes room; without one the member is refused. Returns its slot or NONE.
static uint32_t
s_member_add (shoal_membership_t *self, uint64_t now, const shoal_update_t *update)
{
    if (self->count == self->config.members_max) {
        uint32_t oldest = s_oldest_tombstone (self);
        if (oldest == NONE)
            return NONE;
        if (s_member_remove (self, oldest))
            return NONE;
    }
    if (self->free_slot == NONE && self->slot_count == self->capacity && s_grow (self))
        return NONE;
    shoal_meta_t *meta = shoal_metapool_get (self->metas, update->meta);
    if (!meta)
        return NONE;
    const shoal_record_t *record = s_record_get (self, &update->node, &s_zero_id,
                                                 update->incarnation, SHOAL_MEMBER_ALIVE, meta);
    shoal_metapool_put (self->metas, meta); //  the record holds it
    if (!record)
        return NONE;
    uint32_t slot;
    if (self->free_slot != NONE) {
        slot = self->free_slot;
        self->free_slot = s_wide (self->members[slot].next_16);
    } else
        slot = (uint32_t) self->slot_count++;
    s_member_t *member = &self->members[slot];
    *member = (s_member_t){
        .since = s_stamp (self, now),
        .prev_16 = S_NIL,
        .next_16 = S_NIL,
        .suspicion_16 = S_NIL,
    };
    s_record_set (self, slot, record);
    if (self->dense)
        self->dense[self->count] = s_narrow (slot);
    else
        assert (slot == self->count);
    self->count++;
    s_index_insert (self, slot);
    if (slot != self->self_slot)
        s_order_insert (self, slot);
    self->state_count[SHOAL_MEMBER_ALIVE]++;
    return slot;
}

static bool
s_eligible (const shoal_membership_t *self, uint32_t slot, uint32_t states, uint32_t except_slot,
            const uint32_t *picked, size_t picked_count)
{
    if (slot == self->self_slot || slot == except_slot ||
        !((states >> self->members[slot].record->state) & 1))
        return false;
    for (size_t i = 0; i < picked_count; i++)
        if (picked[i] == slot)
            return false;
    return true;
}

//  Up to want distinct random members whose state is in states (a bit
//  mask), never this node nor except. Tries random picks first, then
//  samples the rest of the table, so it is fast when most members qualify
//  and exact when few do.
static size_t
s_pick (shoal_membership_t *self, uint32_t states, const shoal_id_t *except, uint32_t *picked,
        size_t want)
{
    size_t found = 0;
    uint32_t except_slot = except ? s_lookup (self, except) : NONE;
    for (size_t attempt = 0; attempt < 4 * want + 8 && found < want && self->count; attempt++) {
        uint32_t slot = s_dense (self, s_random_below (self, self->count));
        if (s_eligible (self, slot, states, except_slot, picked, found))
            picked[found++] = slot;
    }
    //  Reservoir sampling over what the random picks did not take.
    size_t start = found, seen = 0;
    for (size_t i = 0; i < self->count && start < want; i++) {
        uint32_t slot = s_dense (self, i);
        if (!s_eligible (self, slot, states, except_slot, picked, start))
            continue;
        seen++;
        if (found < want)
            picked[found++] = slot;
        else {
            uint64_t at = s_random_below (self, seen);
            if (at < want - start)
                picked[start + at] = slot;
        }
    }
    return found;
}

//  ---------------------------------------------------------------------
//  Round-trip times

const uint32_t shoal_membership_rtt_bounds_ms[SHOAL_MEMBERSHIP_RTT_BUCKETS] = { 1,   2,    5,   10,
                                                                                25,  50,   100, 250,
                                                                                500, 1000, 2500 };

static void
s_rtt_observe (shoal_membership_rtt_t *rtt, uint64_t ms)
{
    size_t bucket = 0;
    while (bucket < SHOAL_MEMBERSHIP_RTT_BUCKETS && ms > shoal_membership_rtt_bounds_ms[bucket])
        bucket++;
    rtt->buckets[bucket]++;
    rtt->count++;
    rtt->sum_ms += ms;
}

//  ---------------------------------------------------------------------
//  Local health (Lifeguard's awareness)

static void
s_health_add (shoal_membership_t *self, int delta)
{
    int64_t health = (int64_t) self->health + delta;
    if (health < 0)
        health = 0;
    if (health > (int64_t) self->config.awareness_max - 1)
        health = self->config.awareness_max - 1;
    self->health = (uint32_t) health;
}

//  A probe time stretched by local health.
static uint64_t
s_scaled (const shoal_membership_t *self, uint32_t ms)
{
    return (uint64_t) ms * (self->health + 1);
}

static size_t
s_live (const shoal_membership_t *self)
{
    return self->state_count[SHOAL_MEMBER_ALIVE] + self->state_count[SHOAL_MEMBER_SUSPECT];
}

static size_t
s_live_others (const shoal_membership_t *self)
{
    return s_live (self) - (self->leaving ? 0 : 1);
}

//  ---------------------------------------------------------------------
//  Suspicions (Lifeguard): the timeout shrinks as accusers confirm

//  Makes room for one more suspicion. A suspicion slot is large (it holds
//  every accuser), and few members are suspect at once, so the array grows
//  as suspicions start rather than with the table. Returns 0, or -1 when
//  memory is short.
static int
s_suspicion_reserve (shoal_membership_t *self)
{
    if (self->suspicion_count < self->suspicion_capacity)
        return 0;
    size_t capacity = self->suspicion_capacity ? 2 * self->suspicion_capacity : 8;
    s_suspicion_t *bigger = realloc (self->suspicions, capacity * sizeof *bigger);
    if (!bigger)
        return -1;
    self->suspicions = bigger;
    self->suspicion_capacity = capacity;
    return 0;
}

//  A suspicion another node raised: perhaps check it (S_CONFIRM_PROBERS),
//  at once rather than at the next probe of the schedule: a confirmation
//  that waits up to a probe interval for its turn is what a verdict waits
//  for. A node whose health is in doubt keeps its own, slower pace.
static void
s_confirm_maybe (shoal_membership_t *self, uint64_t now, uint32_t slot, const shoal_id_t *accuser)
{
    uint64_t k = self->suspicions[s_wide (self->members[slot].suspicion_16)].k;
    size_t live = self->state_count[SHOAL_MEMBER_ALIVE] + self->state_count[SHOAL_MEMBER_SUSPECT];
    if (k == 0 || self->confirm_wanted || shoal_id_equal (accuser, &self->id) ||
        s_random_below (self, live) >= S_CONFIRM_PROBERS * k)
        return;
    self->confirm = self->members[slot].record->node;
    self->confirm_wanted = true;
    if (self->health == 0)
        self->next_probe_ms = s_min (self->next_probe_ms, now);
}

//  The caller has made room with s_suspicion_reserve, so this cannot fail.
static void
s_suspicion_start (shoal_membership_t *self, uint64_t now, uint32_t slot, const shoal_id_t *accuser)
{
    size_t live = s_live (self);
    s_suspicion_t *suspicion = &self->suspicions[self->suspicion_count];
    *suspicion = (s_suspicion_t){
        .slot = slot,
        .k = s_suspicion_k (&self->config, live),
        .start_ms = now,
        .min_ms = s_suspicion_min (&self->config, live),
    };
    suspicion->max_ms = suspicion->min_ms * self->config.suspicion_max_mult;
    suspicion->deadline_ms =
        now + s_suspicion_timeout (suspicion->min_ms, suspicion->max_ms, suspicion->k, 0);
    suspicion->accusers[0] = *accuser;
    self->members[slot].suspicion_16 = s_narrow ((uint32_t) self->suspicion_count++);
}

static void
s_suspicion_end (shoal_membership_t *self, uint32_t slot)
{
    uint32_t at = s_wide (self->members[slot].suspicion_16);
    s_suspicion_t last = self->suspicions[--self->suspicion_count];
    if (at != self->suspicion_count) {
        self->suspicions[at] = last;
        self->members[last.slot].suspicion_16 = s_narrow (at);
    }
    self->members[slot].suspicion_16 = s_narrow (NONE);
}

//  Another member suspects the same incarnation. Returns true when it is a
//  new, independent accuser that shortens the suspicion.
static bool
s_suspicion_confirm (shoal_membership_t *self, uint32_t slot, const shoal_id_t *accuser)
{
    s_suspicion_t *suspicion = &self->suspicions[s_wide (self->members[slot].suspicion_16)];
    if (s_id_zero (accuser) || suspicion->confirmations >= suspicion->k)
        return false;
    for (uint32_t i = 0; i <= suspicion->confirmations; i++)
        if (shoal_id_equal (&suspicion->accusers[i], accuser))
            return false;
    suspicion->accusers[++suspicion->confirmations] = *accuser;
    suspicion->deadline_ms =
        suspicion->start_ms + s_suspicion_timeout (suspicion->min_ms, suspicion->max_ms,
                                                   suspicion->k, suspicion->confirmations);
    return true;
}

//  This node's own probe failed again on a member it had accused already,
//  and the suspicion still waits for confirmations: its accusation is told
//  again. The queue holds one record per member, so when several members
//  confirm at once each passes on only the last accuser it heard, and an
//  accusation can be lost to some of them; it would then wait out a longer
//  suspicion (the simulator's crash at 5 nodes, with hints: 6.6 s instead
//  of 2.8). Told again, it counts once (accusers are distinct).
static bool
s_retell (const shoal_membership_t *self, uint32_t slot, const shoal_update_t *update)
{
    const s_suspicion_t *suspicion = &self->suspicions[s_wide (self->members[slot].suspicion_16)];
    return shoal_id_equal (&update->by, &self->id) && suspicion->confirmations < suspicion->k;
}

//  ---------------------------------------------------------------------
//  Precedence: applying one update

//  Whether (incarnation, state) is news over (than_incarnation, than_state):
//  incarnation first; the state values rank alive < suspect < dead < left.
static bool
s_newer (uint64_t incarnation, uint8_t state, uint64_t than_incarnation, uint8_t than_state)
{
    return incarnation > than_incarnation ||
           (incarnation == than_incarnation && state > than_state);
}

static void
s_refute (shoal_membership_t *self, uint64_t seen)
{
    s_member_t *me = &self->members[self->self_slot];
    uint64_t top = s_max (seen, me->record->incarnation);
    if (top == UINT64_MAX) {
        //  Nothing can override it: a hostile or broken peer. Counted.
        self->stats.updates_refused++;
        return;
    }
    if (s_record_change (self, self->self_slot, &me->record->by, top + 1, me->record->state,
                         me->record->meta)) {
        self->stats.updates_refused++;
        return;
    }
    s_queue_push (self, self->self_slot);
    s_health_add (self, 1);
    self->stats.refutations++;
}

//  An update about this node: anything that would override its record is
//  refuted with a higher incarnation, unless it has left.
static void
s_about_self (shoal_membership_t *self, const shoal_update_t *update)
{
    const s_member_t *me = &self->members[self->self_slot];
    bool news;
    if (update->state == SHOAL_MEMBER_ALIVE)
        news = update->incarnation > me->record->incarnation ||
               (update->incarnation == me->record->incarnation && update->meta &&
                !shoal_meta_equal (update->meta, me->record->meta));
    else
        news = update->incarnation >= me->record->incarnation;
    if (news && !self->leaving)
        s_refute (self, update->incarnation);
    else
        self->stats.updates_stale++;
}

static uint8_t
s_event_type (uint8_t was, uint8_t state, bool meta_changed)
{
    if (state == was)
        return state == SHOAL_MEMBER_ALIVE && meta_changed ? SHOAL_MEMBERSHIP_UPDATED : 0;
    switch (state) {
    case SHOAL_MEMBER_ALIVE:
        return SHOAL_MEMBERSHIP_UP;
    case SHOAL_MEMBER_SUSPECT:
        return SHOAL_MEMBERSHIP_SUSPECT;
    case SHOAL_MEMBER_DEAD:
        return SHOAL_MEMBERSHIP_DEAD;
    default:
        return SHOAL_MEMBERSHIP_LEFT;
    }
}

//  True when update is another node's verdict that a member is dead while
//  this node heard from that member itself within two probe intervals. The
//  verdict may be old news from the far side of a partition that just
//  healed: taken as it is, a healthy majority dropped its leader for a
//  minority's word. A member that really died is declared dead only after
//  a suspicion (at least a probe timeout and the minimum suspicion after it
//  last spoke), so this never delays a real death by more than one
//  suspicion here.
static bool
s_doubt (const shoal_membership_t *self, uint64_t now, uint32_t slot, const shoal_update_t *update)
{
    if (slot == NONE || update->state != SHOAL_MEMBER_DEAD ||
        shoal_id_equal (&update->by, &self->id))
        return false;
    const s_member_t *member = &self->members[slot];
    uint64_t heard_ms = s_stamp_ms (self, member->heard);
    return heard_ms != 0 && now - heard_ms <= 2 * (uint64_t) self->config.probe_interval_ms &&
           (member->record->state == SHOAL_MEMBER_ALIVE ||
            member->record->state == SHOAL_MEMBER_SUSPECT);
}

static void
s_apply (shoal_membership_t *self, uint64_t now, const shoal_update_t *update)
{
    bool alive = update->state == SHOAL_MEMBER_ALIVE;
    if (update->state > SHOAL_MEMBER_LEFT || s_id_zero (&update->node)) {
        self->stats.updates_refused++;
        return;
    }
    if (shoal_id_equal (&update->node, &self->id)) {
        s_about_self (self, update);
        return;
    }
    uint32_t slot = s_lookup (self, &update->node);
    shoal_update_t doubted;
    if (s_doubt (self, now, slot, update)) {
        //  Taken as a suspicion: the member refutes it if it lives.
        doubted = *update;
        doubted.state = SHOAL_MEMBER_SUSPECT;
        update = &doubted;
        self->stats.dead_doubted++;
    }
    if (slot != NONE &&
        !s_newer (update->incarnation, update->state, self->members[slot].record->incarnation,
                  self->members[slot].record->state)) {
        s_member_t *member = &self->members[slot];
        if (update->state == SHOAL_MEMBER_SUSPECT &&
            member->record->state == SHOAL_MEMBER_SUSPECT &&
            update->incarnation == member->record->incarnation &&
            (s_suspicion_confirm (self, slot, &update->by) || s_retell (self, slot, update))) {
            //  Passed on, so that others count the confirmation too.
            if (s_record_change (self, slot, &update->by, member->record->incarnation,
                                 member->record->state, member->record->meta) == 0)
                s_queue_push (self, slot);
            self->stats.updates_applied++;
        } else
            self->stats.updates_stale++;
        return;
    }
    if ((slot == NONE && !alive) ||
        (alive && shoal_membership_meta_check (&self->config, update->meta))) {
        self->stats.updates_refused++;
        return;
    }
    if (slot == NONE) {
        slot = s_member_add (self, now, update);
        if (slot == NONE) {
            self->stats.members_refused++;
            return;
        }
        s_queue_push (self, slot);
        s_event (self, SHOAL_MEMBERSHIP_UP, slot);
        self->stats.updates_applied++;
        return;
    }
    if (update->state == SHOAL_MEMBER_SUSPECT &&
        s_wide (self->members[slot].suspicion_16) == NONE && s_suspicion_reserve (self) != 0) {
        self->stats.updates_refused++;
        return;
    }
    s_member_t *member = &self->members[slot];
    bool meta_changed = alive && !shoal_meta_equal (member->record->meta, update->meta);
    shoal_meta_t *meta =
        meta_changed ? shoal_metapool_get (self->metas, update->meta) : member->record->meta;
    const shoal_record_t *record =
        meta ? s_record_get (self, &update->node,
                             alive || update->state == SHOAL_MEMBER_LEFT ? &s_zero_id : &update->by,
                             update->incarnation, update->state, meta)
             : NULL;
    if (meta_changed && meta)
        shoal_metapool_put (self->metas, meta); //  the record holds it
    if (!record) {
        self->stats.updates_refused++;
        return;
    }
    uint8_t was = member->record->state;
    if (s_wide (member->suspicion_16) != NONE)
        s_suspicion_end (self, slot);
    self->state_count[was]--;
    self->state_count[update->state]++;
    s_record_set (self, slot, record);
    member->since = s_stamp (self, now);
    if (alive)
        s_life_set (self, slot, s_max (s_life (self, slot), member->record->meta->life));
    if (update->state == SHOAL_MEMBER_SUSPECT) {
        s_suspicion_start (self, now, slot, &update->by);
        s_confirm_maybe (self, now, slot, &update->by);
    }
    s_queue_push (self, slot);
    uint8_t event = s_event_type (was, update->state, meta_changed);
    if (event)
        s_event (self, event, slot);
    self->stats.updates_applied++;
}

static void
s_apply_all (shoal_membership_t *self, uint64_t now, const shoal_update_t *updates, uint32_t count)
{
    for (uint32_t i = 0; i < count && updates; i++)
        s_apply (self, now, &updates[i]);
}

//  This node's own verdict on a member: suspect or dead, by this node.
static void
s_accuse (shoal_membership_t *self, uint64_t now, uint32_t slot, uint8_t state)
{
    shoal_update_t update = {
        .node = self->members[slot].record->node,
        .incarnation = self->members[slot].record->incarnation,
        .state = state,
        .by = self->id,
    };
    s_apply (self, now, &update);
}

//  ---------------------------------------------------------------------
//  The outbox and piggybacking

static void
s_set_updates (shoal_msg_t *msg, shoal_update_t *updates, uint32_t count)
{
    switch (msg->type) {
    case SHOAL_MSG_PING:
        msg->u.ping.updates = updates;
        msg->u.ping.update_count = count;
        break;
    case SHOAL_MSG_ACK:
    case SHOAL_MSG_NACK:
        msg->u.ack.updates = updates;
        msg->u.ack.update_count = count;
        break;
    case SHOAL_MSG_PING_REQ:
        msg->u.ping_req.updates = updates;
        msg->u.ping_req.update_count = count;
        break;
    case SHOAL_MSG_SYNC_REPLY:
        msg->u.sync_reply.members = updates;
        msg->u.sync_reply.member_count = count;
        break;
    default:
        break;
    }
}

//  What a message's recipient is known to hold: the updates it just sent.
//  Records it holds at least as new are not sent back to it: a node that
//  learns news from a gossip PING would otherwise spend a transmission on
//  the ACK to the one node sure to know it.
typedef struct {
    const shoal_update_t *updates;
    uint32_t count;
} s_held_t;

static bool
s_held (const s_held_t *held, const s_member_t *member)
{
    for (uint32_t i = 0; held && i < held->count; i++) {
        const shoal_update_t *update = &held->updates[i];
        if (shoal_id_equal (&update->node, &member->record->node) &&
            !s_newer (member->record->incarnation, member->record->state, update->incarnation,
                      update->state))
            return true;
    }
    return false;
}

//  A new message to to (NULL: unaddressed) at addr, with no updates yet;
//  its fields are for the caller to fill. NULL when memory is short (the
//  message is then not sent, as if lost).
static shoal_membership_send_t *
s_send (shoal_membership_t *self, uint8_t type, const shoal_life_t *to, const char *addr)
{
    if (s_reserve ((void **) &self->spans, &self->spans_capacity, self->out_count + 1,
                   sizeof (s_span_t)) ||
        s_reserve ((void **) &self->out, &self->out_capacity, self->out_count + 1,
                   sizeof (shoal_membership_send_t)))
        return NULL;
    shoal_membership_send_t *send = &self->out[self->out_count];
    memset (send, 0, sizeof *send);
    if (to)
        send->to = *to;
    s_addr_copy (send->addr, addr);
    send->msg.type = type;
    self->spans[self->out_count++] = (s_span_t){ self->out_update_count, 0 };
    return send;
}

static shoal_life_t
s_member_life (const shoal_membership_t *self, uint32_t slot)
{
    shoal_life_t life = { .life = s_life (self, slot) };
    memcpy (life.id, self->members[slot].record->node.bytes, SHOAL_ID_SIZE);
    return life;
}

static shoal_membership_send_t *
s_send_to (shoal_membership_t *self, uint8_t type, uint32_t slot)
{
    shoal_life_t to = s_member_life (self, slot);
    return s_send (self, type, &to, self->members[slot].record->meta->addr);
}

//  Adds to chosen (holding count) queued records, least-sent first, while
//  they fit in budget bytes, skipping those the recipient holds. Returns the
//  new count.
static size_t
s_take_queued (shoal_membership_t *self, const s_held_t *held, uint32_t limit, uint32_t *chosen,
               size_t count, long budget)
{
    size_t scanned = 0;
    for (uint32_t bucket = 0; bucket < self->bucket_count; bucket++) {
        uint32_t next;
        for (uint32_t slot = self->bucket_head[bucket]; slot != NONE; slot = next) {
            next = s_wide (self->members[slot].next_16);
            if (count == SHOAL_UPDATES_MAX || budget < S_UPDATE_MIN ||
                scanned++ == S_PIGGYBACK_SCAN)
                return count;
            if (bucket >= limit) {
                s_queue_unlink (self, slot); //  sent enough for today's cluster size
                continue;
            }
            bool taken = s_held (held, &self->members[slot]);
            for (size_t i = 0; i < count && !taken; i++)
                taken = chosen[i] == slot;
            if (!taken && self->members[slot].record->size <= budget) {
                budget -= self->members[slot].record->size;
                chosen[count++] = slot;
            }
        }
    }
    return count;
}

//  Fills the last message with updates: first the forced records (slots),
//  then queued ones, least-sent first, but for those the recipient holds,
//  as many as the datagram takes. Sizes come from the real encoder, and the
//  whole message is measured again at the end.
static void
s_piggyback (shoal_membership_t *self, shoal_membership_send_t *send, const uint32_t *forced,
             size_t forced_count, const s_held_t *held)
{
    assert (send == &self->out[self->out_count - 1]);
    if (s_reserve ((void **) &self->out_updates, &self->out_update_capacity,
                   self->out_update_count + SHOAL_UPDATES_MAX, sizeof (shoal_update_t)))
        return;
    shoal_wire_error_t err;
    long base = shoal_msg_encode (&send->msg, NULL, 0, &err);
    assert (base > 0);
    //  Two bytes more once the array needs a 16-bit count (16 or more).
    long budget = (long) shoal_msg_size_max (send->msg.type) - base - 2;
    uint32_t chosen[SHOAL_UPDATES_MAX];
    size_t count = 0;
    //  A leaving node tells everyone it talks to.
    if (self->leaving) {
        budget -= self->members[self->self_slot].record->size;
        chosen[count++] = self->self_slot;
    }
    for (size_t i = 0; i < forced_count && count < SHOAL_UPDATES_MAX; i++) {
        bool taken = false;
        for (size_t j = 0; j < count && !taken; j++)
            taken = chosen[j] == forced[i];
        if (!taken && self->members[forced[i]].record->size <= budget) {
            budget -= self->members[forced[i]].record->size;
            chosen[count++] = forced[i];
        }
    }
    uint32_t limit = s_retransmit_limit (self);
    count = s_take_queued (self, held, limit, chosen, count, budget);
    shoal_update_t *updates = self->out_updates + self->out_update_count;
    for (size_t i = 0; i < count; i++)
        s_record (self, chosen[i], &updates[i], false);
    s_set_updates (&send->msg, updates, (uint32_t) count);
    while (count > 0 && shoal_msg_encode (&send->msg, NULL, 0, &err) < 0)
        s_set_updates (&send->msg, updates, (uint32_t) --count);
    self->spans[self->out_count - 1].count = (uint32_t) count;
    self->out_update_count += count;
    for (size_t i = 0; i < count; i++)
        if (self->members[chosen[i]].queued)
            s_queue_sent (self, chosen[i], limit);
}

//  A PING to a member. One that is not alive in this node's view gets its
//  own record first (Lifeguard's buddy system), so it learns at once what
//  is said about it and can refute.
static void
s_ping (shoal_membership_t *self, uint32_t seq, uint32_t slot)
{
    shoal_membership_send_t *send = s_send_to (self, SHOAL_MSG_PING, slot);
    if (!send)
        return;
    send->msg.u.ping.seq = seq;
    send->msg.u.ping.target = self->members[slot].record->node;
    bool buddy = self->members[slot].record->state != SHOAL_MEMBER_ALIVE;
    s_piggyback (self, send, &slot, buddy ? 1 : 0, NULL);
}

//  A PING to an address whose member this node does not know: it carries
//  this node's own record first, so that the answer can be addressed.
static void
s_ping_stranger (shoal_membership_t *self, uint32_t seq, const shoal_life_t *to, const char *addr)
{
    shoal_membership_send_t *send = s_send (self, SHOAL_MSG_PING, to, addr);
    if (!send)
        return;
    send->msg.u.ping.seq = seq;
    if (to)
        send->msg.u.ping.target = s_life_id (to);
    s_piggyback (self, send, &self->self_slot, 1, NULL);
}

//  An ACK or NACK with seq.
static void
s_answer (shoal_membership_t *self, uint8_t type, const shoal_life_t *to, const char *addr,
          uint32_t seq, const uint32_t *forced, size_t forced_count, const s_held_t *held)
{
    shoal_membership_send_t *send = s_send (self, type, to, addr);
    if (!send)
        return;
    send->msg.u.ack.seq = seq;
    s_piggyback (self, send, forced, forced_count, held);
}

//  A relay's NACK. When the relay holds the target suspect, dead or left,
//  the NACK says so: the requester may learn that the member left before
//  its probe ends, and then accuses no one.
static void
s_nack (shoal_membership_t *self, const shoal_life_t *to, const char *addr, uint32_t seq,
        const shoal_id_t *target)
{
    uint32_t slot = s_lookup (self, target);
    bool tell = slot != NONE && self->members[slot].record->state != SHOAL_MEMBER_ALIVE;
    s_answer (self, SHOAL_MSG_NACK, to, addr, seq, &slot, tell ? 1 : 0, NULL);
}

//  ---------------------------------------------------------------------
//  Anti-entropy: digest, SYNC-REQ, SYNC-REPLY

static bool
s_bucket_count_valid (uint32_t bucket_count)
{
    return bucket_count >= 1 && bucket_count <= SHOAL_DIGEST_BUCKETS_MAX &&
           (bucket_count & (bucket_count - 1)) == 0;
}

uint8_t
shoal_membership_bucket (const shoal_id_t *id)
{
    return (uint8_t) (s_digest_hash (id->bytes, SHOAL_ID_SIZE) >> 56);
}

//  A member's bucket among bucket_count: the top bits of its fine bucket.
static uint32_t
s_bucket (const s_member_t *member, uint32_t bucket_count)
{
    return (uint32_t) member->record->bucket * bucket_count / SHOAL_DIGEST_BUCKETS_MAX;
}

static bool
s_bucket_in (const shoal_bucket_set_t *set, uint32_t bucket)
{
    return set->bytes[bucket / 8] & (1u << (bucket % 8));
}

static void
s_bucket_add (shoal_bucket_set_t *set, uint32_t bucket)
{
    set->bytes[bucket / 8] |= (uint8_t) (1u << (bucket % 8));
}

//  The table's sums at bucket_count buckets, a valid count.
static void
s_digest_fold (const shoal_membership_t *self, uint32_t bucket_count, uint64_t *sums)
{
    uint32_t width = SHOAL_DIGEST_BUCKETS_MAX / bucket_count;
    for (uint32_t bucket = 0; bucket < bucket_count; bucket++) {
        sums[bucket] = 0;
        for (uint32_t fine = bucket * width; fine < (bucket + 1) * width; fine++)
            sums[bucket] += self->bucket_sums[fine];
    }
}

//  Buckets a DIGEST from this node has: about eight members each, so a
//  difference costs a few records, not the table.
static uint32_t
s_digest_bucket_count (const shoal_membership_t *self)
{
    uint32_t bucket_count = 1;
    while (bucket_count < SHOAL_DIGEST_BUCKETS_MAX && bucket_count * 8 < self->count)
        bucket_count *= 2;
    return bucket_count;
}

//  The sums are filled in when the input ends (s_finish), from the table
//  as it is then.
static void
s_send_digest (shoal_membership_t *self, const shoal_life_t *to, const char *addr)
{
    s_send (self, SHOAL_MSG_DIGEST, to, addr);
}

//  This node's records in the buckets of wanted as a SYNC-REPLY, as many as
//  one frame takes (starting where the last partial reply stopped). At most
//  one per member per probe interval, so digests cannot make this node
//  flood.
static void
s_send_sync_reply (shoal_membership_t *self, uint64_t now, uint32_t slot, uint32_t bucket_count,
                   const shoal_bucket_set_t *wanted)
{
    if (s_on_hold (self, now, slot, S_HOLD_SYNC))
        return;
    size_t wanted_count = 0;
    for (size_t i = 0; i < self->count; i++)
        wanted_count +=
            s_bucket_in (wanted, s_bucket (&self->members[s_dense (self, i)], bucket_count));
    if (wanted_count == 0) //  nothing here in those buckets: nothing to send
        return;
    s_hold (self, now, slot, S_HOLD_SYNC, now + self->config.probe_interval_ms);
    if (s_reserve ((void **) &self->out_updates, &self->out_update_capacity,
                   self->out_update_count + wanted_count, sizeof (shoal_update_t)))
        return;
    shoal_membership_send_t *send = s_send_to (self, SHOAL_MSG_SYNC_REPLY, slot);
    if (!send)
        return;
    send->msg.u.sync_reply.parts = SHOAL_SYNC_MEMBERS;
    shoal_wire_error_t err;
    //  Four bytes more once the array needs a 32-bit count.
    long budget = (long) shoal_msg_size_max (SHOAL_MSG_SYNC_REPLY) -
                  shoal_msg_encode (&send->msg, NULL, 0, &err) - 4;
    shoal_update_t *updates = self->out_updates + self->out_update_count;
    size_t count = 0, scanned = 0;
    for (; scanned < self->count; scanned++) {
        uint32_t record = s_dense (self, (self->sync_cursor + scanned) % self->count);
        if (!s_bucket_in (wanted, s_bucket (&self->members[record], bucket_count)))
            continue;
        if (self->members[record].record->size > budget)
            break;
        budget -= self->members[record].record->size;
        s_record (self, record, &updates[count++], false);
    }
    self->sync_cursor = (self->sync_cursor + scanned) % self->count;
    s_set_updates (&send->msg, updates, (uint32_t) count);
    while (count > 0 && shoal_msg_encode (&send->msg, NULL, 0, &err) < 0)
        s_set_updates (&send->msg, updates, (uint32_t) --count);
    self->spans[self->out_count - 1].count = (uint32_t) count;
    self->out_update_count += count;
}

//  ---------------------------------------------------------------------
//  Probing

//  The suspect to confirm, if it is still suspect, else the next member of
//  the shuffled round robin that is alive or suspect.
static uint32_t
s_probe_target (shoal_membership_t *self)
{
    if (self->confirm_wanted) {
        self->confirm_wanted = false;
        uint32_t slot = s_lookup (self, &self->confirm);
        if (slot != NONE && self->members[slot].record->state == SHOAL_MEMBER_SUSPECT)
            return slot;
    }
    for (int pass = 0; pass < 2; pass++) {
        while (self->order_next < self->order_count) {
            uint32_t slot = self->order[self->order_next++];
            const s_member_t *member = &self->members[slot];
            if (member->record && slot != self->self_slot &&
                (member->record->state == SHOAL_MEMBER_ALIVE ||
                 member->record->state == SHOAL_MEMBER_SUSPECT))
                return slot;
        }
        s_order_shuffle (self);
    }
    return NONE;
}

static void s_probe_indirect (shoal_membership_t *self);

static void
s_probe_begin (shoal_membership_t *self, uint64_t now, uint32_t slot, uint64_t end)
{
    self->probe = (s_probe_t){
        .active = true,
        .slot = slot,
        .target = self->members[slot].record->node,
        .seq = s_next_seq (self),
        .sent_ms = now,
        .timeout_ms = now + s_scaled (self, self->config.probe_timeout_ms),
        .end_ms = end,
    };
    self->stats.probes++;
    s_ping (self, self->probe.seq, slot);
}

//  A hinted probe (shoal_membership_hint): out of turn, and outside the
//  schedule, which it leaves as it was, so that hints, forged or not,
//  never hold back the round robin. It is a probe like any other: PING,
//  PING-REQs after probe_timeout, and a suspicion when it fails.
static void
s_probe_hinted (shoal_membership_t *self, uint64_t now)
{
    self->hint_wanted = false;
    uint32_t slot = s_lookup (self, &self->hint);
    if (slot == NONE || slot == self->self_slot ||
        (self->members[slot].record->state != SHOAL_MEMBER_ALIVE &&
         self->members[slot].record->state != SHOAL_MEMBER_SUSPECT))
        return;
    self->hint_next_ms = now + s_scaled (self, self->config.probe_timeout_ms);
    self->stats.probes_hinted++;
    s_probe_begin (self, now, slot, now + s_scaled (self, self->config.probe_interval_ms));
}

static void
s_probe_start (shoal_membership_t *self, uint64_t now)
{
    self->next_probe_ms = now + s_scaled (self, self->config.probe_interval_ms);
    bool confirming = self->confirm_wanted;
    uint32_t slot = s_probe_target (self);
    if (slot == NONE)
        return;
    s_probe_begin (self, now, slot, self->next_probe_ms);
    //  A check of a suspect asks the relays at once, not after the direct
    //  timeout: the member has failed a probe already, and its verdict waits
    //  for this check. It is the same probe (a direct PING and
    //  indirect_checks relays, each NACK saying it heard nothing), only
    //  sooner, and it costs extra messages only when the suspect answers.
    if (confirming && self->members[slot].record->state == SHOAL_MEMBER_SUSPECT)
        s_probe_indirect (self);
}

static bool
s_probe_target_holds (const shoal_membership_t *self)
{
    const s_member_t *member = &self->members[self->probe.slot];
    return member->record && shoal_id_equal (&member->record->node, &self->probe.target) &&
           (member->record->state == SHOAL_MEMBER_ALIVE ||
            member->record->state == SHOAL_MEMBER_SUSPECT);
}

//  No ACK in time: ask indirect_checks alive members to relay.
static void
s_probe_indirect (shoal_membership_t *self)
{
    s_probe_t *probe = &self->probe;
    probe->indirect = true;
    if (!s_probe_target_holds (self))
        return;
    uint32_t picked[S_INDIRECT_MAX];
    size_t count = s_pick (self, 1u << SHOAL_MEMBER_ALIVE, &probe->target, picked,
                           self->config.indirect_checks);
    for (size_t i = 0; i < count; i++) {
        shoal_membership_send_t *send = s_send_to (self, SHOAL_MSG_PING_REQ, picked[i]);
        if (!send)
            continue;
        send->msg.u.ping_req.seq = probe->seq;
        send->msg.u.ping_req.target = probe->target;
        send->msg.u.ping_req.addr = self->members[probe->slot].record->meta->addr;
        s_piggyback (self, send, NULL, 0, NULL);
        probe->relays[probe->relay_count++] = self->members[picked[i]].record->node;
    }
}

//  The probe's time is up. Without an ACK the member becomes suspect, and
//  this node's health pays for every NACK that did not come: a relay that
//  could not answer points at this node's network (Lifeguard).
static void
s_probe_end (shoal_membership_t *self, uint64_t now)
{
    s_probe_t *probe = &self->probe;
    probe->active = false;
    if (probe->acked)
        return;
    s_health_add (self, probe->relay_count ? (int) (probe->relay_count - probe->nacks) : 1);
    self->stats.probes_failed++;
    if (s_probe_target_holds (self))
        s_accuse (self, now, probe->slot, SHOAL_MEMBER_SUSPECT);
}

static int
s_probe_relay (const s_probe_t *probe, const shoal_id_t *id)
{
    for (uint32_t i = 0; i < probe->relay_count; i++)
        if (shoal_id_equal (&probe->relays[i], id))
            return (int) i;
    return -1;
}

//  ---------------------------------------------------------------------
//  Contacts: seeds and beacon introductions

static void
s_contact_ping (shoal_membership_t *self, uint64_t now, s_contact_t *contact)
{
    contact->seq = s_next_seq (self);
    contact->attempts++;
    contact->next_ms = now + self->config.probe_interval_ms;
    s_ping_stranger (self, contact->seq, contact->seed ? NULL : &contact->node, contact->addr);
}

//  node NULL: a seed.
static int
s_contact_add (shoal_membership_t *self, uint64_t now, const shoal_life_t *node, const char *addr)
{
    if (self->leaving || !s_addr_valid (addr) ||
        strcmp (addr, self->members[self->self_slot].record->meta->addr) == 0)
        return -1;
    s_contact_t *free_contact = NULL;
    for (size_t i = 0; i < SHOAL_MEMBERSHIP_CONTACTS_MAX; i++) {
        s_contact_t *contact = &self->contacts[i];
        if (!contact->used) {
            free_contact = free_contact ? free_contact : contact;
            continue;
        }
        if (strcmp (contact->addr, addr) == 0 ||
            (node && !contact->seed && memcmp (contact->node.id, node->id, SHOAL_ID_SIZE) == 0)) {
            contact->attempts = 0; //  named again: a fresh set of tries
            return 0;
        }
    }
    if (!free_contact)
        return -1;
    *free_contact = (s_contact_t){ .used = true, .seed = !node };
    if (node)
        free_contact->node = *node;
    s_addr_copy (free_contact->addr, addr);
    s_contact_ping (self, now, free_contact);
    return 0;
}

//  ---------------------------------------------------------------------
//  Receiving

typedef struct {
    const shoal_envelope_t *envelope;
    shoal_id_t sender;
    bool addressed;
    bool was_live; //  the sender was alive or suspect here before this message
    const char *from_addr;
} s_incoming_t;

static uint32_t
s_sender_slot (const shoal_membership_t *self, const s_incoming_t *in)
{
    return s_lookup (self, &in->sender);
}

static bool
s_is_live (const shoal_membership_t *self, uint32_t slot)
{
    return slot != NONE && (self->members[slot].record->state == SHOAL_MEMBER_ALIVE ||
                            self->members[slot].record->state == SHOAL_MEMBER_SUSPECT);
}

//  Where to answer the sender: its address in the table, or the one the
//  datagram came from; NULL when neither is known.
static const char *
s_reply_addr (const shoal_membership_t *self, const s_incoming_t *in)
{
    uint32_t slot = s_sender_slot (self, in);
    if (slot != NONE)
        return self->members[slot].record->meta->addr;
    return s_addr_valid (in->from_addr) ? in->from_addr : NULL;
}

//  Adds to forced (holding count, room for max) the members about which
//  updates carry older news than this node holds. Returns how many it added.
static size_t
s_corrections (const shoal_membership_t *self, const shoal_update_t *updates, uint32_t update_count,
               uint32_t *forced, size_t count, size_t max)
{
    size_t added = 0;
    for (uint32_t i = 0; i < update_count && count + added < max; i++) {
        uint32_t slot = shoal_id_equal (&updates[i].node, &self->id)
                            ? self->self_slot
                            : s_lookup (self, &updates[i].node);
        if (slot == NONE ||
            !s_newer (self->members[slot].record->incarnation, self->members[slot].record->state,
                      updates[i].incarnation, updates[i].state))
            continue;
        bool taken = false;
        for (size_t j = 0; j < count + added && !taken; j++)
            taken = forced[j] == slot;
        if (!taken)
            forced[count + added++] = slot;
    }
    return added;
}

static void
s_on_ping (shoal_membership_t *self, uint64_t now, const s_incoming_t *in, const shoal_ping_t *ping)
{
    if (!s_id_zero (&ping->target) && !shoal_id_equal (&ping->target, &self->id))
        return; //  a probe of someone else: not ours to answer
    const char *addr = s_reply_addr (self, in);
    if (!addr)
        return;
    //  A sender that may not know this node learns its record; one this
    //  node holds suspect, dead or left learns that, and can refute; one
    //  that sent old news gets the newer records back.
    uint32_t forced[2 + S_CORRECTIONS_MAX];
    size_t count = 0;
    if (!in->was_live || !in->addressed)
        forced[count++] = self->self_slot;
    uint32_t slot = s_sender_slot (self, in);
    if (slot != NONE && self->members[slot].record->state != SHOAL_MEMBER_ALIVE)
        forced[count++] = slot;
    count += s_corrections (self, ping->updates, ping->update_count, forced, count,
                            count + S_CORRECTIONS_MAX);
    s_held_t held = { ping->updates, ping->update_count };
    s_answer (self, SHOAL_MSG_ACK, &in->envelope->sender, addr, ping->seq, forced, count, &held);
    //  Addressed by a member this node does not know, or holds dead: one of
    //  the two tables is behind. The sender may be alive at an incarnation
    //  this node missed; the dead record the ACK carries back is then older
    //  than its own, so it has nothing to refute, and only a tombstone probe
    //  would ever tell this node (the simulator found a member held dead
    //  for 17 s so, while it kept probing the node that held it dead).
    bool behind = slot == NONE || self->members[slot].record->state == SHOAL_MEMBER_DEAD;
    if (in->addressed && behind && now >= self->stranger_digest_ms && !self->leaving) {
        self->stranger_digest_ms = now + self->config.probe_interval_ms;
        s_send_digest (self, &in->envelope->sender, addr);
    }
}

static void
s_on_ack (shoal_membership_t *self, uint64_t now, const s_incoming_t *in, const shoal_ack_t *ack)
{
    bool matched = false, contacted = false;
    s_probe_t *probe = &self->probe;
    if (probe->active && !probe->acked && ack->seq == probe->seq &&
        (shoal_id_equal (&in->sender, &probe->target) || s_probe_relay (probe, &in->sender) >= 0)) {
        probe->acked = true;
        s_health_add (self, -1);
        if (shoal_id_equal (&in->sender, &probe->target))
            s_rtt_observe (&self->rtt, now - probe->sent_ms);
        matched = true;
    }
    for (size_t i = 0; i < SHOAL_MEMBERSHIP_RELAYS_MAX; i++) {
        s_relay_t *relay = &self->relays[i];
        if (relay->used && relay->our_seq == ack->seq &&
            shoal_id_equal (&relay->target, &in->sender)) {
            s_answer (self, SHOAL_MSG_ACK, &relay->requester, relay->addr, relay->their_seq, NULL,
                      0, NULL);
            relay->used = false;
            matched = true;
        }
    }
    for (size_t i = 0; i < SHOAL_MEMBERSHIP_CONTACTS_MAX; i++) {
        s_contact_t *contact = &self->contacts[i];
        shoal_id_t expected = s_life_id (&contact->node);
        if (contact->used && contact->seq == ack->seq &&
            (contact->seed || shoal_id_equal (&expected, &in->sender))) {
            contact->used = false;
            matched = contacted = true;
        }
    }
    if (!matched)
        self->stats.acks_unmatched++;
    //  First contact: compare tables with a member just met, or met again.
    uint32_t slot = s_sender_slot (self, in);
    if (s_is_live (self, slot) && (!in->was_live || contacted) && !self->leaving) {
        shoal_life_t to = s_member_life (self, slot);
        s_send_digest (self, &to, self->members[slot].record->meta->addr);
    }
}

//  Every relay asked has said it heard nothing either: the verdict is in,
//  and waiting out the interval would only delay it (by a fifth of it, in
//  the LAN profile, for every probe a suspicion and its confirmations wait
//  for).
static void
s_on_nack (shoal_membership_t *self, uint64_t now, const s_incoming_t *in, const shoal_ack_t *nack)
{
    s_probe_t *probe = &self->probe;
    int relay = probe->active && nack->seq == probe->seq ? s_probe_relay (probe, &in->sender) : -1;
    if (relay >= 0 && !probe->nacked[relay]) {
        probe->nacked[relay] = true;
        probe->nacks++;
        if (!probe->acked && probe->nacks == probe->relay_count)
            s_probe_end (self, now);
    } else
        self->stats.acks_unmatched++;
}

static void
s_on_ping_req (shoal_membership_t *self, uint64_t now, const s_incoming_t *in,
               const shoal_ping_req_t *request)
{
    if (s_id_zero (&request->target) || shoal_id_equal (&request->target, &self->id) ||
        shoal_id_equal (&request->target, &in->sender))
        return;
    const char *addr = s_reply_addr (self, in);
    if (!addr)
        return;
    uint32_t target = s_lookup (self, &request->target);
    s_relay_t *relay = NULL;
    for (size_t i = 0; i < SHOAL_MEMBERSHIP_RELAYS_MAX && !relay; i++)
        if (!self->relays[i].used)
            relay = &self->relays[i];
    if (!relay || self->leaving || (target == NONE && !s_addr_valid (request->addr))) {
        //  Cannot help: say so now rather than let the requester wait.
        s_nack (self, &in->envelope->sender, addr, request->seq, &request->target);
        return;
    }
    *relay = (s_relay_t){
        .used = true,
        .requester = in->envelope->sender,
        .their_seq = request->seq,
        .our_seq = s_next_seq (self),
        .target = request->target,
        .deadline_ms = now + (uint64_t) self->config.probe_timeout_ms * S_NACK_PERCENT / 100,
    };
    s_addr_copy (relay->addr, addr);
    if (target != NONE)
        s_ping (self, relay->our_seq, target);
    else
        s_ping_stranger (self, relay->our_seq, NULL, request->addr);
}

//  Compares the sender's bucket sums with this node's: where they differ,
//  push and pull, this node's records of those buckets and a request for
//  the sender's. Returns -1 when the digest's bucket count is not valid.
static int
s_on_digest (shoal_membership_t *self, uint64_t now, uint32_t slot, const shoal_digest_t *digest)
{
    if (!s_bucket_count_valid (digest->bucket_count))
        return -1;
    uint64_t sums[SHOAL_DIGEST_BUCKETS_MAX];
    s_digest_fold (self, digest->bucket_count, sums);
    shoal_bucket_set_t differ = { { 0 } };
    bool any = false;
    for (uint32_t bucket = 0; bucket < digest->bucket_count; bucket++)
        if (sums[bucket] != digest->buckets[bucket]) {
            s_bucket_add (&differ, bucket);
            any = true;
        }
    if (!any && digest->member_count == self->count)
        return 0;
    if (!any) //  equal sums over different tables: take no chances
        for (uint32_t bucket = 0; bucket < digest->bucket_count; bucket++)
            s_bucket_add (&differ, bucket);
    s_send_sync_reply (self, now, slot, digest->bucket_count, &differ);
    shoal_membership_send_t *send = s_send_to (self, SHOAL_MSG_SYNC_REQ, slot);
    if (send)
        send->msg.u.sync_req =
            (shoal_sync_req_t){ SHOAL_SYNC_MEMBERS, digest->bucket_count, differ };
    return 0;
}

static int
s_receive (shoal_membership_t *self, uint64_t now, const shoal_envelope_t *envelope,
           const shoal_msg_t *msg, const char *from_addr)
{
    s_incoming_t in = {
        .envelope = envelope,
        .sender = s_life_id (&envelope->sender),
        .from_addr = from_addr,
    };
    shoal_id_t recipient = s_life_id (&envelope->recipient);
    in.addressed = !s_id_zero (&recipient);
    if (s_id_zero (&in.sender) || envelope->sender.life == 0 ||
        shoal_id_equal (&in.sender, &self->id))
        return -1;
    if (in.addressed && (!shoal_id_equal (&recipient, &self->id) ||
                         envelope->recipient.life != s_life (self, self->self_slot)))
        return -1;
    if (!in.addressed && msg->type != SHOAL_MSG_PING)
        return -1; //  only a first contact comes unaddressed
    uint32_t slot = s_sender_slot (self, &in);
    if (slot != NONE) {
        if (envelope->sender.life < s_life (self, slot))
            return -1; //  from an earlier run of the sender
        s_life_set (self, slot, envelope->sender.life);
        self->members[slot].heard = s_stamp (self, now);
    }
    in.was_live = s_is_live (self, slot);
    switch (msg->type) {
    case SHOAL_MSG_PING:
        s_apply_all (self, now, msg->u.ping.updates, msg->u.ping.update_count);
        s_on_ping (self, now, &in, &msg->u.ping);
        return 0;
    case SHOAL_MSG_ACK:
        s_apply_all (self, now, msg->u.ack.updates, msg->u.ack.update_count);
        s_on_ack (self, now, &in, &msg->u.ack);
        return 0;
    case SHOAL_MSG_NACK:
        s_apply_all (self, now, msg->u.ack.updates, msg->u.ack.update_count);
        s_on_nack (self, now, &in, &msg->u.ack);
        return 0;
    case SHOAL_MSG_PING_REQ:
        s_apply_all (self, now, msg->u.ping_req.updates, msg->u.ping_req.update_count);
        s_on_ping_req (self, now, &in, &msg->u.ping_req);
        return 0;
    case SHOAL_MSG_DIGEST:
    case SHOAL_MSG_SYNC_REQ:
        //  Answered over a frame to the member's address: unknown senders
        //  have none.
        if (slot == NONE)
            return -1;
        if (msg->type == SHOAL_MSG_DIGEST)
            return s_on_digest (self, now, slot, &msg->u.digest);
        if (!(msg->u.sync_req.want & SHOAL_SYNC_MEMBERS))
            return 0;
        if (!s_bucket_count_valid (msg->u.sync_req.bucket_count))
            return -1;
        s_send_sync_reply (self, now, slot, msg->u.sync_req.bucket_count, &msg->u.sync_req.buckets);
        return 0;
    case SHOAL_MSG_SYNC_REPLY:
        if (!(msg->u.sync_reply.parts & SHOAL_SYNC_MEMBERS))
            return 0; //  the jobs layer's
        s_apply_all (self, now, msg->u.sync_reply.members, msg->u.sync_reply.member_count);
        self->stats.syncs++;
        return 0;
    default:
        return 0; //  another layer's message
    }
}

void
shoal_membership_heard (shoal_membership_t *self, uint64_t now_ms, const shoal_life_t *sender)
{
    shoal_id_t id = s_life_id (sender);
    uint32_t slot = s_lookup (self, &id);
    if (slot != NONE && sender->life >= s_life (self, slot))
        self->members[slot].heard = s_stamp (self, now_ms);
}

//  ---------------------------------------------------------------------
//  Timers

//  A hinted probe may start now (a node in doubt of its own health keeps
//  its pace, as it does for checks).
static bool
s_hint_due (const shoal_membership_t *self, uint64_t now)
{
    return self->hint_wanted && self->health == 0 && now >= self->hint_next_ms;
}

static void
s_probe_tick (shoal_membership_t *self, uint64_t now)
{
    s_probe_t *probe = &self->probe;
    if (probe->active && !probe->acked && !probe->indirect && now >= probe->timeout_ms)
        s_probe_indirect (self);
    //  An answered probe has nothing left to wait for: a check out of turn,
    //  a hinted probe, or the schedule (a hinted probe ends before the
    //  interval's) need not wait for its interval to end.
    if (probe->active &&
        (now >= probe->end_ms || (probe->acked && (self->confirm_wanted || s_hint_due (self, now) ||
                                                   now >= self->next_probe_ms))))
        s_probe_end (self, now);
    if (probe->active || self->leaving)
        return;
    if (now >= self->next_probe_ms)
        s_probe_start (self, now);
    else if (s_hint_due (self, now))
        s_probe_hinted (self, now);
}

static void
s_suspicions_tick (shoal_membership_t *self, uint64_t now)
{
    size_t i = 0;
    while (i < self->suspicion_count) {
        uint32_t slot = self->suspicions[i].slot;
        if (self->suspicions[i].deadline_ms <= now)
            s_accuse (self, now, slot, SHOAL_MEMBER_DEAD);
        //  Declared dead, its suspicion is gone and another took its place.
        if (i < self->suspicion_count && self->suspicions[i].slot == slot)
            i++;
    }
}

//  The relay heard nothing from its target: it says so, and is free.
static void
s_relay_nack (shoal_membership_t *self, s_relay_t *relay)
{
    s_nack (self, &relay->requester, relay->addr, relay->their_seq, &relay->target);
    relay->used = false;
}

static void
s_relays_tick (shoal_membership_t *self, uint64_t now)
{
    for (size_t i = 0; i < SHOAL_MEMBERSHIP_RELAYS_MAX; i++) {
        s_relay_t *relay = &self->relays[i];
        if (relay->used && relay->deadline_ms <= now)
            s_relay_nack (self, relay);
    }
}

static void
s_contacts_tick (shoal_membership_t *self, uint64_t now)
{
    for (size_t i = 0; i < SHOAL_MEMBERSHIP_CONTACTS_MAX; i++) {
        s_contact_t *contact = &self->contacts[i];
        if (!contact->used || contact->next_ms > now)
            continue;
        if (self->leaving || (contact->attempts >= S_CONTACT_ATTEMPTS &&
                              (!contact->seed || s_live_others (self) > 0)))
            contact->used = false;
        else
            s_contact_ping (self, now, contact);
    }
}

static void
s_gossip_tick (shoal_membership_t *self, uint64_t now)
{
    if (now < self->next_gossip_ms)
        return;
    self->next_gossip_ms = now + self->config.gossip_interval_ms;
    uint32_t picked[S_FANOUT_MAX];
    size_t count = self->queued
                       ? s_pick (self, 1u << SHOAL_MEMBER_ALIVE | 1u << SHOAL_MEMBER_SUSPECT, NULL,
                                 picked, self->config.gossip_fanout)
                       : 0;
    for (size_t i = 0; i < count && self->queued; i++)
        s_ping (self, s_next_seq (self), picked[i]);
}

static void
s_sync_tick (shoal_membership_t *self, uint64_t now)
{
    if (now < self->next_sync_ms)
        return;
    self->next_sync_ms = now + self->config.sync_interval_ms;
    uint32_t slot;
    if (!self->leaving && s_pick (self, 1u << SHOAL_MEMBER_ALIVE, NULL, &slot, 1)) {
        shoal_life_t to = s_member_life (self, slot);
        s_send_digest (self, &to, self->members[slot].record->meta->addr);
    }
}

//  A PING to a dead member, carrying its dead record (so that it refutes at
//  once) and this node's own (so that a stranger can answer). Unaddressed: a
//  member that restarted runs a new life and drops whatever is addressed to
//  the old one, and two halves that restarted apart would never merge. The
//  target keeps the probe to that member.
static void
s_ping_tombstone (shoal_membership_t *self, uint32_t seq, uint32_t slot)
{
    shoal_membership_send_t *send =
        s_send (self, SHOAL_MSG_PING, NULL, self->members[slot].record->meta->addr);
    if (!send)
        return;
    send->msg.u.ping.seq = seq;
    send->msg.u.ping.target = self->members[slot].record->node;
    uint32_t forced[2] = { slot, self->self_slot };
    s_piggyback (self, send, forced, 2, NULL);
}

//  Forgets old tombstones, then pings one dead member: if it answers, the
//  first contact that follows merges the two views.
static void
s_tombstone_tick (shoal_membership_t *self, uint64_t now)
{
    if (now < self->next_tombstone_ms)
        return;
    self->next_tombstone_ms = now + self->config.tombstone_probe_interval_ms;
    size_t i = 0;
    while (i < self->count) {
        uint32_t slot = s_dense (self, i);
        if (!s_is_tombstone (self, slot) ||
            now - s_stamp_ms (self, self->members[slot].since) < self->config.tombstone_ms ||
            s_member_remove (self, slot)) //  else the last one moved into i
            i++;
    }
    uint32_t slot;
    if (!self->leaving && s_pick (self, 1u << SHOAL_MEMBER_DEAD, NULL, &slot, 1))
        s_ping_tombstone (self, s_next_seq (self), slot);
}

//  The tick came late by lateness: this node was not running (a pause, a
//  stall, an overloaded shell). Its own clock is at fault, not its peers.
static void
s_late (shoal_membership_t *self, uint64_t now, uint64_t lateness)
{
    self->stats.late_ticks++;
    s_health_add (self, 1);
    if (self->probe.active && !self->probe.acked) {
        self->probe.active = false;
        self->next_probe_ms = now;
    }
    for (size_t i = 0; i < self->suspicion_count; i++) {
        self->suspicions[i].start_ms += lateness;
        self->suspicions[i].deadline_ms += lateness;
    }
}

static uint64_t
s_next (const shoal_membership_t *self)
{
    uint64_t next = UINT64_MAX;
    const s_probe_t *probe = &self->probe;
    if (!self->leaving) {
        if (probe->active && !probe->acked)
            next = !probe->indirect ? probe->timeout_ms : probe->end_ms;
        else if (probe->active && !self->confirm_wanted)
            next = s_min (probe->end_ms, self->next_probe_ms);
        else
            next = self->next_probe_ms; //  or the check out of turn, which s_probe_tick starts
        if ((!probe->active || probe->acked) && self->hint_wanted && self->health == 0)
            next = s_min (next, self->hint_next_ms);
        next = s_min (next, s_min (self->next_sync_ms, self->next_tombstone_ms));
    }
    if (self->queued)
        next = s_min (next, self->next_gossip_ms);
    for (size_t i = 0; i < self->suspicion_count; i++)
        next = s_min (next, self->suspicions[i].deadline_ms);
    for (size_t i = 0; i < SHOAL_MEMBERSHIP_RELAYS_MAX; i++)
        if (self->relays[i].used)
            next = s_min (next, self->relays[i].deadline_ms);
    for (size_t i = 0; i < SHOAL_MEMBERSHIP_CONTACTS_MAX; i++)
        if (self->contacts[i].used)
            next = s_min (next, self->contacts[i].next_ms);
    return next;
}

//  ---------------------------------------------------------------------
//  Inputs: each begins by dropping the last input's outputs and ends by
//  pointing the messages at their updates and computing the next deadline.

static void
s_begin (shoal_membership_t *self)
{
    for (size_t i = 0; i < self->retired_count; i++)
        shoal_metapool_record_put (self->metas, self->retired[i]);
    self->retired_count = 0;
    //  The room of a large output (a sync reply's updates, the events of a
    //  merged table) is not kept: a simulator holds thousands of these
    //  tables, and most inputs have a few dozen outputs.
    s_release ((void **) &self->out_updates, &self->out_update_capacity);
    s_release ((void **) &self->events, &self->event_capacity);
    s_release ((void **) &self->retired, &self->retired_capacity);
    s_release ((void **) &self->out, &self->out_capacity);
    s_release ((void **) &self->spans, &self->spans_capacity);
    self->out_count = 0;
    self->out_update_count = 0;
    self->event_count = 0;
}

static void
s_finish (shoal_membership_t *self, uint64_t now)
{
    uint32_t bucket_count = s_digest_bucket_count (self);
    bool folded = false;
    for (size_t i = 0; i < self->out_count; i++) {
        shoal_msg_t *msg = &self->out[i].msg;
        if (self->spans[i].count)
            s_set_updates (msg, self->out_updates + self->spans[i].first, self->spans[i].count);
        if (msg->type == SHOAL_MSG_DIGEST) {
            if (!folded)
                s_digest_fold (self, bucket_count, self->digest_sums);
            folded = true;
            msg->u.digest.member_count = (uint32_t) self->count;
            msg->u.digest.bucket_count = bucket_count;
            msg->u.digest.buckets = self->digest_sums;
        }
    }
    self->wake_ms = s_max (s_next (self), now);
}

shoal_membership_t *
shoal_membership_new (const shoal_membership_config_t *config, const shoal_id_t *id,
                      uint64_t incarnation, const shoal_meta_t *meta, uint64_t seed,
                      uint64_t now_ms, shoal_metapool_t *metas)
{
    if (shoal_membership_config_check (config) || !id || s_id_zero (id) ||
        shoal_membership_meta_check (config, meta))
        return NULL;
    shoal_membership_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->config = *config;
    self->id = *id;
    self->rng = seed;
    self->epoch_ms = now_ms;
    for (size_t i = 0; i < sizeof self->index_key; i += 8) {
        uint64_t word = s_random (self);
        memcpy (self->index_key + i, &word, sizeof word);
    }
    self->metas = metas;
    if (!metas) {
        self->metas = shoal_metapool_new (s_random (self));
        self->own_metas = true;
    }
    self->free_slot = NONE;
    self->bucket_count = config->retransmit_mult * S_DIGITS_MAX;
    self->bucket_head = malloc (self->bucket_count * sizeof (uint32_t));
    self->bucket_tail = malloc (self->bucket_count * sizeof (uint32_t));
    if (!self->metas || !self->bucket_head || !self->bucket_tail || s_grow (self)) {
        shoal_membership_destroy (&self);
        return NULL;
    }
    memset (self->bucket_head, 0xff, self->bucket_count * sizeof (uint32_t));
    memset (self->bucket_tail, 0xff, self->bucket_count * sizeof (uint32_t));
    shoal_update_t me = {
        .node = *id, .incarnation = incarnation, .state = SHOAL_MEMBER_ALIVE, .meta = (void *) meta
    };
    self->self_slot = 0; //  the first slot handed out
    if (s_member_add (self, now_ms, &me) != 0) {
        shoal_membership_destroy (&self);
        return NULL;
    }
    s_queue_push (self, self->self_slot);
    //  Random phases, so nodes started together do not act in step.
    self->next_probe_ms = now_ms + s_random_below (self, config->probe_interval_ms);
    self->next_gossip_ms = now_ms + s_random_below (self, config->gossip_interval_ms);
    self->next_sync_ms = now_ms + s_random_below (self, config->sync_interval_ms);
    self->next_tombstone_ms = now_ms + s_random_below (self, config->tombstone_probe_interval_ms);
    self->wake_ms = s_max (s_next (self), now_ms);
    return self;
}

void
shoal_membership_destroy (shoal_membership_t **self_p)
{
    shoal_membership_t *self = *self_p;
    if (!self)
        return;
    s_begin (self);
    for (size_t i = 0; i < self->count; i++)
        shoal_metapool_record_put (self->metas, self->members[s_dense (self, i)].record);
    if (self->own_metas)
        shoal_metapool_destroy (&self->metas);
    free (self->members);
    free (self->index);
    free (self->dense);
    free (self->order);
    free (self->suspicions);
    free (self->holds);
    free (self->lives);
    free (self->bucket_head);
    free (self->bucket_tail);
    free (self->out);
    free (self->spans);
    free (self->out_updates);
    free (self->events);
    free (self->retired);
    free (self);
    *self_p = NULL;
}

int
shoal_membership_receive (shoal_membership_t *self, uint64_t now_ms,
                          const shoal_envelope_t *envelope, const shoal_msg_t *msg,
                          const char *from_addr)
{
    s_begin (self);
    self->stats.messages++;
    int rc = s_receive (self, now_ms, envelope, msg, from_addr);
    if (rc)
        self->stats.dropped++;
    s_finish (self, now_ms);
    return rc;
}

//  Whether a hint about slot is taken: a member alive here (not this node:
//  a suspect has its verdict coming, and the checks of section 2.2 decide
//  who confirms it, or every node would probe it every interval), not the
//  target of the probe in flight, not hinted within a probe interval,
//  while no other hint waits and this node is neither leaving nor in
//  doubt of its own health.
static bool
s_hint_taken (shoal_membership_t *self, uint64_t now, uint32_t slot)
{
    if (slot == NONE || slot == self->self_slot || self->leaving || self->hint_wanted ||
        self->health > 0)
        return false;
    s_member_t *member = &self->members[slot];
    if (member->record->state != SHOAL_MEMBER_ALIVE || s_on_hold (self, now, slot, S_HOLD_HINT))
        return false;
    const s_probe_t *probe = &self->probe;
    if (probe->active && !probe->acked && shoal_id_equal (&probe->target, &member->record->node))
        return false;
    s_hold (self, now, slot, S_HOLD_HINT, now + s_scaled (self, self->config.probe_interval_ms));
    return true;
}

//  A hint about a member this node is waiting to hear from already: the
//  kernel's answer is the one the wait was for. The probe waiting for its
//  ACK asks its relays at once and ends one probe_timeout later at most (at
//  the last NACK, sooner); a relay pinging the member for another says at
//  once that it heard nothing. Neither is a verdict: an ACK that comes
//  still counts, and the suspicion that follows is refuted as any other.
//  Returns whether the hint was of either kind.
static bool
s_hint_answers (shoal_membership_t *self, uint64_t now, const shoal_id_t *id)
{
    bool answered = false;
    for (size_t i = 0; i < SHOAL_MEMBERSHIP_RELAYS_MAX; i++) {
        s_relay_t *relay = &self->relays[i];
        if (relay->used && shoal_id_equal (&relay->target, id)) {
            s_relay_nack (self, relay);
            self->stats.nacks_hastened++;
            answered = true;
        }
    }
    s_probe_t *probe = &self->probe;
    if (probe->active && !probe->acked && !probe->hastened && shoal_id_equal (&probe->target, id)) {
        probe->hastened = true;
        uint64_t end = now + s_scaled (self, self->config.probe_timeout_ms);
        probe->end_ms = end < probe->end_ms ? end : probe->end_ms;
        if (!probe->indirect)
            s_probe_indirect (self);
        self->stats.probes_hastened++;
        answered = true;
    }
    return answered;
}

void
shoal_membership_hint (shoal_membership_t *self, uint64_t now_ms, const shoal_id_t *id)
{
    s_begin (self);
    uint32_t slot = id ? s_lookup (self, id) : NONE;
    bool answered = slot != NONE && s_hint_answers (self, now_ms, id);
    if (!answered && s_hint_taken (self, now_ms, slot)) {
        self->hint = *id;
        self->hint_wanted = true;
        self->stats.hints++;
        s_probe_tick (self, now_ms); //  starts it, unless a probe waits for its ACK
    } else if (!answered)
        self->stats.hints_ignored++;
    s_finish (self, now_ms);
}

void
shoal_membership_tick (shoal_membership_t *self, uint64_t now_ms)
{
    s_begin (self);
    if (now_ms > self->wake_ms && now_ms - self->wake_ms > S_LATE_MS (&self->config))
        s_late (self, now_ms, now_ms - self->wake_ms);
    s_relays_tick (self, now_ms);
    s_contacts_tick (self, now_ms);
    s_probe_tick (self, now_ms);
    s_suspicions_tick (self, now_ms);
    s_gossip_tick (self, now_ms);
    s_sync_tick (self, now_ms);
    s_tombstone_tick (self, now_ms);
    s_finish (self, now_ms);
}

int
shoal_membership_join (shoal_membership_t *self, uint64_t now_ms, const char *addr)
{
    s_begin (self);
    int rc = s_contact_add (self, now_ms, NULL, addr);
    s_finish (self, now_ms);
    return rc;
}

int
shoal_membership_introduce (shoal_membership_t *self, uint64_t now_ms, const shoal_life_t *node,
                            uint64_t incarnation, uint8_t flags, const char *addr)
{
    s_begin (self);
    int rc = -1;
    shoal_id_t id = s_life_id (node);
    uint32_t slot = s_lookup (self, &id);
    bool news = slot == NONE || (!s_is_live (self, slot) && node->life >= s_life (self, slot));
    if (!(flags & SHOAL_BEACON_LEAVING) && !s_id_zero (&id) && !shoal_id_equal (&id, &self->id) &&
        node->life > 0 && news)
        rc = s_contact_add (self, now_ms, node, addr);
    (void) incarnation; //  only a live member's own ACK counts
    s_finish (self, now_ms);
    return rc;
}

//  Drops slot's record from the dissemination queue when it is update's:
//  old news, sent its retransmits already.
static void
s_settle_one (shoal_membership_t *self, const shoal_update_t *update)
{
    uint32_t slot = shoal_id_equal (&update->node, &self->id) ? self->self_slot
                                                              : s_lookup (self, &update->node);
    if (slot == NONE || !self->members[slot].queued)
        return;
    const shoal_record_t *record = self->members[slot].record;
    if (record->incarnation == update->incarnation && record->state == update->state)
        s_queue_unlink (self, slot);
}

int
shoal_membership_settle (shoal_membership_t *self, uint64_t now_ms, const shoal_update_t *updates,
                         uint32_t count)
{
    if (!updates && count)
        return -1;
    s_begin (self);
    s_apply_all (self, now_ms, updates, count);
    for (uint32_t i = 0; i < count; i++)
        s_settle_one (self, &updates[i]);
    s_finish (self, now_ms);
    return 0;
}

void
shoal_membership_leave (shoal_membership_t *self, uint64_t now_ms)
{
    s_begin (self);
    s_member_t *me = &self->members[self->self_slot];
    uint8_t was = me->record->state;
    //  When memory is short the node is not leaving yet: leave_done says so.
    if (!self->leaving &&
        s_record_change (self, self->self_slot, &me->record->by, me->record->incarnation,
                         SHOAL_MEMBER_LEFT, me->record->meta) == 0) {
        self->leaving = true;
        self->state_count[was]--;
        self->state_count[SHOAL_MEMBER_LEFT]++;
        me->since = s_stamp (self, now_ms);
        s_queue_push (self, self->self_slot);
        self->probe.active = false;
        memset (self->contacts, 0, sizeof self->contacts);
    }
    s_finish (self, now_ms);
}

bool
shoal_membership_leave_done (const shoal_membership_t *self)
{
    return self->leaving && (!self->members[self->self_slot].queued || s_live_others (self) == 0);
}

int
shoal_membership_set_meta (shoal_membership_t *self, uint64_t now_ms, const shoal_meta_t *meta)
{
    s_begin (self);
    s_member_t *me = &self->members[self->self_slot];
    int rc = -1;
    shoal_meta_t *copy = NULL;
    if (!self->leaving && me->record->incarnation < UINT64_MAX &&
        !shoal_membership_meta_check (&self->config, meta) &&
        meta->life == s_life (self, self->self_slot) &&
        (copy = shoal_metapool_get (self->metas, meta))) {
        rc = s_record_change (self, self->self_slot, &me->record->by, me->record->incarnation + 1,
                              me->record->state, copy);
        shoal_metapool_put (self->metas, copy); //  the record holds it
        if (rc == 0)
            s_queue_push (self, self->self_slot);
    }
    s_finish (self, now_ms);
    return rc;
}

size_t
shoal_membership_outbox (const shoal_membership_t *self, const shoal_membership_send_t **sends)
{
    *sends = self->out;
    return self->out_count;
}

size_t
shoal_membership_events (const shoal_membership_t *self, const shoal_membership_event_t **events)
{
    *events = self->events;
    return self->event_count;
}

uint64_t
shoal_membership_next (const shoal_membership_t *self)
{
    return self->wake_ms;
}

//  ---------------------------------------------------------------------
//  Queries

static void
s_member_view (const shoal_membership_t *self, uint32_t slot, shoal_membership_member_t *view)
{
    const s_member_t *member = &self->members[slot];
    *view = (shoal_membership_member_t){
        .node = member->record->node,
        .state = member->record->state,
        .incarnation = member->record->incarnation,
        .life = s_life (self, slot),
        .meta = member->record->meta,
    };
}

size_t
shoal_membership_size (const shoal_membership_t *self)
{
    return self->count;
}

int
shoal_membership_member_at (const shoal_membership_t *self, size_t index,
                            shoal_membership_member_t *member)
{
    if (index >= self->count)
        return -1;
    s_member_view (self, s_dense (self, index), member);
    return 0;
}

int
shoal_membership_member (const shoal_membership_t *self, const shoal_id_t *id,
                         shoal_membership_member_t *member)
{
    uint32_t slot = s_lookup (self, id);
    if (slot == NONE)
        return -1;
    s_member_view (self, slot, member);
    return 0;
}

size_t
shoal_membership_live (const shoal_membership_t *self)
{
    return s_live (self);
}

uint64_t
shoal_membership_incarnation (const shoal_membership_t *self)
{
    return self->members[self->self_slot].record->incarnation;
}

uint32_t
shoal_membership_health (const shoal_membership_t *self)
{
    return self->health;
}

int
shoal_membership_digest (const shoal_membership_t *self, uint32_t bucket_count,
                         uint32_t *member_count, uint64_t *sums)
{
    if (!s_bucket_count_valid (bucket_count))
        return -1;
    *member_count = (uint32_t) self->count;
    s_digest_fold (self, bucket_count, sums);
    return 0;
}

void
shoal_membership_stats (const shoal_membership_t *self, shoal_membership_stats_t *stats)
{
    *stats = self->stats;
}

void
shoal_membership_rtt (const shoal_membership_t *self, shoal_membership_rtt_t *rtt)
{
    *rtt = self->rtt;
}

//  ---------------------------------------------------------------------
//  Invariants (debug)

#ifndef SHOAL_NO_CHECKS

//  One member of the dense list: used, in a state, with its meta, its
//  suspicion (if any) its own.
static int
s_check_member (const shoal_membership_t *self, size_t at, size_t *states, const char **reason)
{
    uint32_t slot = s_dense (self, at);
    if (slot >= self->slot_count || !self->members[slot].record)
        return shoal_check_broken (reason, "membership: the dense list names a slot not in use");
    const s_member_t *member = &self->members[slot];
    if (member->record->state > SHOAL_MEMBER_LEFT || !member->record->meta)
        return shoal_check_broken (reason, "membership: a member in no state, or without its meta");
    states[member->record->state]++;
    if (s_wide (member->suspicion_16) != NONE &&
        (s_wide (member->suspicion_16) >= self->suspicion_count ||
         self->suspicions[s_wide (member->suspicion_16)].slot != slot))
        return shoal_check_broken (reason, "membership: a suspicion that is not its member's");
    return 0;
}

int
shoal_membership_check (const shoal_membership_t *self, const char **reason)
{
    if (!self)
        return shoal_check_broken (reason, "membership: NULL");
    if (self->count > self->slot_count || self->slot_count > self->capacity)
        return shoal_check_broken (reason, "membership: more members than slots");
    size_t states[SHOAL_MEMBER_LEFT + 1] = { 0 }, used = 0;
    for (size_t at = 0; at < self->count; at++)
        if (s_check_member (self, at, states, reason))
            return -1;
    //  The sums of the slots named and of the slots in use differ when the
    //  list names one twice in place of another.
    uint64_t named = 0, in_use = 0;
    for (size_t at = 0; at < self->count; at++)
        named += s_dense (self, at);
    for (size_t slot = 0; slot < self->slot_count; slot++)
        if (self->members[slot].record) {
            used++;
            in_use += slot;
        }
    if (used != self->count)
        return shoal_check_broken (reason, "membership: slots in use are not the members counted");
    if (named != in_use)
        return shoal_check_broken (reason, "membership: the dense list names a member twice");
    for (size_t i = 0; i < self->life_count; i++) {
        const s_life_note_t *note = &self->lives[i];
        if (note->slot >= self->slot_count || !self->members[note->slot].record ||
            note->life == self->members[note->slot].record->meta->life)
            return shoal_check_broken (reason,
                                       "membership: a life noted for no member, or its own");
    }
    for (int state = 0; state <= SHOAL_MEMBER_LEFT; state++)
        if (states[state] != self->state_count[state])
            return shoal_check_broken (reason, "membership: a count per state is not true");
    uint64_t observed = 0;
    for (size_t bucket = 0; bucket <= SHOAL_MEMBERSHIP_RTT_BUCKETS; bucket++)
        observed += self->rtt.buckets[bucket];
    if (observed != self->rtt.count)
        return shoal_check_broken (reason, "membership: round trips counted are not the buckets'");
    return 0;
}

#else

int
shoal_membership_check (const shoal_membership_t *self, const char **reason)
{
    (void) self;
    (void) reason;
    return 0;
}

#endif

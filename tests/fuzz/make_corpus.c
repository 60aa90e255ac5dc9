/*  tests/fuzz/make_corpus.c: writes the seed corpus of every fuzz target.

    Usage: make_corpus DIR, where DIR is tests/fuzz/corpus in the source
    tree. Writes DIR/<target>/<seed> for each fuzz target, and DIR/wire.dict,
    the dictionary of msgpack headers and message heads the fuzz tests pass
    to libFuzzer. The output depends only on the sources (the samples of
    tests/samples.c, the fixed key and nonce prefix), so regenerating after
    a change to the wire format shows the change in the corpus's diff. Seeds
    no longer written are not deleted; remove DIR first for a clean slate.
*/

#include "tests/fuzz/fuzz.h"

#include "wire/bigendian.h"
#include "node/keyfile.h"
#include "node/persist.h"
#include "tests/samples.h"
#include "shoal.h"
#include "wire/wire.h"

#include <errno.h>
#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *s_root;
static int s_failures;

static void
s_write (const char *target, const char *name, const void *data, size_t size)
{
    char path[1024];
    snprintf (path, sizeof path, "%s/%s", s_root, target);
    if (mkdir (path, 0755) != 0 && errno != EEXIST) {
        fprintf (stderr, "make_corpus: cannot create %s: %s\n", path, strerror (errno));
        s_failures++;
        return;
    }
    snprintf (path, sizeof path, "%s/%s/%s", s_root, target, name);
    FILE *file = fopen (path, "wb");
    if (!file || fwrite (data, 1, size, file) != size || fclose (file) != 0) {
        fprintf (stderr, "make_corpus: cannot write %s\n", path);
        s_failures++;
    }
}

//  Encodes the sample of type into out; exits when it does not encode,
//  since every later seed would be wrong too.
static size_t
s_sample (int type, uint8_t *out, size_t capacity)
{
    shoal_msg_t msg;
    shoal_wire_error_t err;
    long size =
        shoal_sample_msg (type, &msg) == 0 ? shoal_msg_encode (&msg, out, capacity, &err) : -1;
    if (size < 0) {
        fprintf (stderr, "make_corpus: the %s sample does not encode\n",
                 shoal_msg_type_name (type));
        exit (EXIT_FAILURE);
    }
    return (size_t) size;
}

//  ---------------------------------------------------------------------
//  fuzz_decode: one message of every type, then what hostile peers send.

static void
s_decode_seeds (void)
{
    static uint8_t buffer[SHOAL_FRAME_MAX];
    for (size_t i = 0; i < shoal_msg_type_count; i++) {
        int type = shoal_msg_types[i];
        size_t size = s_sample (type, buffer, sizeof buffer);
        s_write ("fuzz_decode", shoal_msg_type_name (type), buffer, size);
    }

    //  Containers whose counts ask for far more than the bytes hold: at the
    //  top, where a message must be an array, and where a job's labels go.
    const uint8_t array32[] = { 0xdd, 0xff, 0xff, 0xff, 0xff };
    const uint8_t map32[] = { 0xdf, 0xff, 0xff, 0xff, 0xff };
    s_write ("fuzz_decode", "hostile-array32", array32, sizeof array32);
    s_write ("fuzz_decode", "hostile-map32", map32, sizeof map32);

    msgpack_sbuffer sbuf;
    msgpack_packer pk;
    msgpack_sbuffer_init (&sbuf);
    msgpack_packer_init (&pk, &sbuf, msgpack_sbuffer_write);
    msgpack_pack_array (&pk, 5);
    msgpack_pack_uint8 (&pk, SHOAL_WIRE_VERSION);
    msgpack_pack_uint8 (&pk, SHOAL_MSG_JOB);
    msgpack_pack_uint64 (&pk, 3);
    msgpack_pack_uint64 (&pk, 41);
    msgpack_pack_array (&pk, 6);
    msgpack_pack_str_with_body (&pk, "ingest", 6);
    msgpack_pack_uint32 (&pk, 4);
    msgpack_pack_true (&pk);
    msgpack_pack_uint32 (&pk, 1);
    msgpack_sbuffer_write (&sbuf, (const char *) map32, sizeof map32);
    msgpack_pack_str_with_body (&pk, "zone", 4);
    msgpack_pack_str_with_body (&pk, "eu", 2);
    s_write ("fuzz_decode", "hostile-labels-map32", sbuf.data, sbuf.size);
    msgpack_sbuffer_clear (&sbuf);

    //  A ping-req whose address claims 4 GB.
    shoal_id_t target = shoal_sample_id (0x12);
    msgpack_pack_array (&pk, 6);
    msgpack_pack_uint8 (&pk, SHOAL_WIRE_VERSION);
    msgpack_pack_uint8 (&pk, SHOAL_MSG_PING_REQ);
    msgpack_pack_uint32 (&pk, 4712);
    msgpack_pack_bin_with_body (&pk, target.bytes, sizeof target.bytes);
    const uint8_t str32[] = { 0xdb, 0xff, 0xff, 0xff, 0xff, '1', '0', '.' };
    msgpack_sbuffer_write (&sbuf, (const char *) str32, sizeof str32);
    s_write ("fuzz_decode", "hostile-str32", sbuf.data, sbuf.size);
    msgpack_sbuffer_destroy (&sbuf);

    uint8_t nesting[1000];
    memset (nesting, 0x91, sizeof nesting);
    s_write ("fuzz_decode", "hostile-nesting", nesting, sizeof nesting);

    size_t size = s_sample (SHOAL_MSG_BEACON, buffer, sizeof buffer);
    buffer[1] = SHOAL_WIRE_VERSION + 1;
    s_write ("fuzz_decode", "hostile-version", buffer, size);
}

//  Messages dense in what the decoder allocates, for the fuzzer to grow
//  denser ones from: job specs that carry every label they may, with
//  one-letter keys and empty values; updates whose metadata also lists
//  every handle, each an empty string. They take about 6 (sync-reply) and
//  5 (ping) times their size in arena, half of what SHOAL_DECODE_ARENA
//  allows; they are not at its edge.
static void
s_dense_seeds (void)
{
    static const char *keys[SHOAL_LABELS_MAX] = { "a", "b", "c", "d", "e", "f", "g", "h",
                                                  "i", "j", "k", "l", "m", "n", "o", "p" };
    static shoal_label_t labels[SHOAL_LABELS_MAX];
    static const char *handles[SHOAL_HANDLES_MAX];
    static shoal_jobspec_t jobs[24];
    static shoal_update_t updates[11]; //  as many as fit in a datagram
    static uint8_t buffer[SHOAL_DATAGRAM_MAX * 4];

    for (size_t i = 0; i < SHOAL_LABELS_MAX; i++)
        labels[i] = (shoal_label_t){ keys[i], "" };
    for (size_t i = 0; i < SHOAL_HANDLES_MAX; i++)
        handles[i] = "";
    for (size_t i = 0; i < sizeof jobs / sizeof jobs[0]; i++)
        jobs[i] = (shoal_jobspec_t){
            .name = "", .require_count = SHOAL_LABELS_MAX, .require = labels, .command = ""
        };
    static shoal_meta_t meta = { .name = "",
                                 .addr = "",
                                 .label_count = SHOAL_LABELS_MAX,
                                 .labels = labels,
                                 .handle_count = SHOAL_HANDLES_MAX,
                                 .handles = handles };
    for (size_t i = 0; i < sizeof updates / sizeof updates[0]; i++)
        updates[i] = (shoal_update_t){ .node = shoal_sample_id ((uint8_t) i), .meta = &meta };

    shoal_msg_t messages[2] = { { .type = SHOAL_MSG_SYNC_REPLY }, { .type = SHOAL_MSG_PING } };
    messages[0].u.sync_reply.job_count = sizeof jobs / sizeof jobs[0];
    messages[0].u.sync_reply.jobs = jobs;
    messages[1].u.ping.update_count = sizeof updates / sizeof updates[0];
    messages[1].u.ping.updates = updates;
    for (size_t i = 0; i < 2; i++) {
        shoal_wire_error_t err;
        long size = shoal_msg_encode (&messages[i], buffer, sizeof buffer, &err);
        char name[64];
        snprintf (name, sizeof name, "dense-%s", shoal_msg_type_name (messages[i].type));
        if (size < 0) {
            fprintf (stderr, "make_corpus: %s does not encode: %s\n", name, err.text);
            s_failures++;
            continue;
        }
        s_write ("fuzz_decode", name, buffer, (size_t) size);
    }
}

//  ---------------------------------------------------------------------
//  fuzz_open: each carrier's message, sealed and in plaintext, addressed to
//  fuzz_self and unaddressed, and addressed again with one byte too little
//  room to open into; then envelopes the addressing checks refuse.

//  The largest seed: the frame's sample, sealed, after the selector.
#define OPEN_PAYLOAD_MAX (SHOAL_DATAGRAM_MAX * 4)
#define OPEN_SEED_MAX    (1 + OPEN_PAYLOAD_MAX + SHOAL_ENVELOPE_OVERHEAD)

//  Where envelope.h puts the header fields that the patched seeds change.
enum { AT_SENDER = 8, AT_RECIPIENT = 32, AT_SEQ = 56 };

//  Seals the sample of mode's carrier's message from sealer to recipient
//  into seed, after the selector of mode. Returns the seed's size; exits
//  when the sample does not seal, since every later seed would be wrong too.
static size_t
s_open_seal (shoal_sealer_t *sealer, const fuzz_open_mode_t *mode, const shoal_life_t *recipient,
             uint8_t seed[OPEN_SEED_MAX])
{
    static const int carried[SHOAL_PURPOSE_COUNT + 1] = {
        [SHOAL_PURPOSE_BEACON] = SHOAL_MSG_BEACON,
        [SHOAL_PURPOSE_DATAGRAM] = SHOAL_MSG_PING,
        [SHOAL_PURPOSE_FRAME] = SHOAL_MSG_ASSIGN,
    };
    static uint8_t payload[OPEN_PAYLOAD_MAX];

    int type = carried[mode->purpose];
    if (shoal_msg_purpose (type) != mode->purpose) {
        fprintf (stderr, "make_corpus: a %s does not travel on the %s carrier\n",
                 shoal_msg_type_name (type), shoal_purpose_name (mode->purpose));
        exit (EXIT_FAILURE);
    }
    size_t size = s_sample (type, payload, sizeof payload);
    seed[0] = fuzz_open_selector (mode);
    long sealed_size = shoal_sealer_seal (sealer, mode->purpose, recipient, payload, size, seed + 1,
                                          OPEN_SEED_MAX - 1);
    if (sealed_size < 0) {
        fprintf (stderr, "make_corpus: the %s sample does not seal for the %s carrier\n",
                 shoal_msg_type_name (type), shoal_purpose_name (mode->purpose));
        exit (EXIT_FAILURE);
    }
    return 1 + (size_t) sealed_size;
}

//  Writes seed as <carrier>-<sealed|plaintext>-<what>[-short].
static void
s_open_write (const fuzz_open_mode_t *mode, const char *what, const uint8_t *seed, size_t size)
{
    char name[64];
    snprintf (name, sizeof name, "%s-%s-%s%s", shoal_purpose_name (mode->purpose),
              mode->keyed ? "sealed" : "plaintext", what, mode->short_room ? "-short" : "");
    s_write ("fuzz_open", name, seed, size);
}

//  Seals and writes one seed.
static void
s_open_seed (shoal_sealer_t *sealer, const fuzz_open_mode_t *mode, const shoal_life_t *recipient,
             const char *what)
{
    static uint8_t seed[OPEN_SEED_MAX];
    s_open_write (mode, what, seed, s_open_seal (sealer, mode, recipient, seed));
}

//  A plaintext datagram that no sealer writes but any peer can send: the
//  unaddressed sample with field_size bytes of its header, from at, taken
//  from field. (In a sealed envelope the header is authenticated, so a
//  patched one could never open, even if the opener forgot the check.)
static void
s_open_patched (shoal_sealer_t *sealer, size_t at, const uint8_t *field, size_t field_size,
                const char *what)
{
    static uint8_t seed[OPEN_SEED_MAX];
    fuzz_open_mode_t mode = { .purpose = SHOAL_PURPOSE_DATAGRAM };
    size_t size = s_open_seal (sealer, &mode, NULL, seed);
    memcpy (seed + 1 + at, field, field_size);
    s_open_write (&mode, what, seed, size);
}

//  The same, with the life at at replaced by id and life, laid out as the
//  header lays out a life: the id, then the number, big-endian.
static void
s_patch_life (shoal_sealer_t *sealer, size_t at, const uint8_t *id, uint64_t life, const char *what)
{
    uint8_t field[sizeof fuzz_self.id + 8];
    memcpy (field, id, sizeof fuzz_self.id);
    shoal__put_be (field + sizeof fuzz_self.id, life, 8);
    s_open_patched (sealer, at, field, sizeof field, what);
}

static void
s_open_seeds (void)
{
    static const uint8_t nonce_prefix[SHOAL_ENVELOPE_NONCE] = "fuzz-nonce-0001";
    static const uint8_t nobody[sizeof fuzz_self.id];
    shoal_keyring_t *keyed = shoal_keyring_new ();
    shoal_keyring_t *plaintext = shoal_keyring_new ();
    if (!keyed || !plaintext || shoal_keyring_install (keyed, fuzz_key) != 0) {
        fprintf (stderr, "make_corpus: no keyring\n");
        exit (EXIT_FAILURE);
    }
    shoal_life_t peer = { .life = 1000 };
    memcpy (peer.id, shoal_sample_id (0x10).bytes, sizeof peer.id);

    for (int sealed = 0; sealed <= 1; sealed++) {
        shoal_sealer_t *sealer = shoal_sealer_new (sealed ? keyed : plaintext, &peer, nonce_prefix);
        for (shoal_purpose_t purpose = 1; purpose <= SHOAL_PURPOSE_COUNT; purpose++) {
            fuzz_open_mode_t mode = { .purpose = purpose, .keyed = sealed };
            s_open_seed (sealer, &mode, &fuzz_self, "addressed");
            s_open_seed (sealer, &mode, NULL, "unaddressed");
            mode.short_room = true;
            s_open_seed (sealer, &mode, &fuzz_self, "addressed");
        }
        shoal_sealer_destroy (&sealer);
    }

    //  Sealed to another node (misdirected), to an earlier life of
    //  fuzz_self (stale) and to a later one (misdirected); and fuzz_self's
    //  own beacon, heard back.
    fuzz_open_mode_t datagram = { .purpose = SHOAL_PURPOSE_DATAGRAM, .keyed = true };
    shoal_sealer_t *sealer = shoal_sealer_new (keyed, &peer, nonce_prefix);
    shoal_life_t elsewhere = { .life = fuzz_self.life };
    memcpy (elsewhere.id, shoal_sample_id (0x33).bytes, sizeof elsewhere.id);
    shoal_life_t older_life = fuzz_self;
    older_life.life--;
    shoal_life_t later_life = fuzz_self;
    later_life.life++;
    s_open_seed (sealer, &datagram, &elsewhere, "elsewhere");
    s_open_seed (sealer, &datagram, &older_life, "older-life");
    s_open_seed (sealer, &datagram, &later_life, "later-life");
    shoal_sealer_destroy (&sealer);
    fuzz_open_mode_t beacon = { .purpose = SHOAL_PURPOSE_BEACON, .keyed = true };
    sealer = shoal_sealer_new (keyed, &fuzz_self, nonce_prefix);
    s_open_seed (sealer, &beacon, NULL, "from-self");
    shoal_sealer_destroy (&sealer);

    //  Malformed headers, which no sealer writes: an unnamed sender, a
    //  half-named recipient (an id without a life was once "any life" of
    //  that node), and sequence number 0.
    sealer = shoal_sealer_new (plaintext, &peer, nonce_prefix);
    s_patch_life (sealer, AT_SENDER, nobody, peer.life, "sender-without-id");
    s_patch_life (sealer, AT_SENDER, peer.id, 0, "sender-without-life");
    s_patch_life (sealer, AT_RECIPIENT, fuzz_self.id, 0, "recipient-without-life");
    s_patch_life (sealer, AT_RECIPIENT, nobody, fuzz_self.life, "recipient-without-id");
    static const uint8_t seq_zero[8];
    s_open_patched (sealer, AT_SEQ, seq_zero, sizeof seq_zero, "seq-zero");
    shoal_sealer_destroy (&sealer);

    shoal_keyring_destroy (&keyed);
    shoal_keyring_destroy (&plaintext);
}

//  ---------------------------------------------------------------------
//  fuzz_key: a key file as `shoal keygen` writes it, and near misses.

static void
s_key_seeds (void)
{
    char text[SHOAL_KEY_TEXT_BYTES];
    shoal_key_format (fuzz_key, text);
    char seed[SHOAL_KEY_TEXT_BYTES + 16];

    snprintf (seed, sizeof seed, "%s\n", text);
    s_write ("fuzz_key", "key-file", seed, strlen (seed));
    snprintf (seed, sizeof seed, " \t%s \r\n", text);
    s_write ("fuzz_key", "key-spaced", seed, strlen (seed));
    snprintf (seed, sizeof seed, "%.43s", text);
    s_write ("fuzz_key", "key-unpadded", seed, strlen (seed));
    snprintf (seed, sizeof seed, "%s", text);
    seed[10] = '*';
    s_write ("fuzz_key", "key-bad-character", seed, strlen (seed));
    //  libsodium 1.0.18 decodes any byte above 0x7f as '/'.
    seed[10] = (char) 0xe4;
    s_write ("fuzz_key", "key-non-ascii", seed, strlen (seed));
}

//  ---------------------------------------------------------------------
//  fuzz_reader: values of every type the reader reads, in every width.

static void
s_reader_seeds (void)
{
    static uint8_t buffer[SHOAL_DATAGRAM_MAX];
    size_t size = s_sample (SHOAL_MSG_PING, buffer, sizeof buffer);
    s_write ("fuzz_reader", "ping", buffer, size);

    //  Every header of each supported family, widest forms included.
    const uint8_t widths[] = {
        0xdc, 0x00, 0x12,                                     //  array16 of 18
        0x7f,                                                 //  positive fixint
        0xcc, 0xff,                                           //  uint8
        0xcd, 0x01, 0x00,                                     //  uint16
        0xce, 0x00, 0x01, 0x00, 0x00,                         //  uint32
        0xcf, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, //  uint64
        0xd0, 0x7f,                                           //  int8, not negative
        0xd1, 0x00, 0x01,                                     //  int16
        0xd2, 0x00, 0x00, 0x00, 0x01,                         //  int32
        0xd3, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, //  int64
        0xd9, 0x03, 'a',  'b',  'c',                          //  str8
        0xda, 0x00, 0x01, 'x',                                //  str16
        0xdb, 0x00, 0x00, 0x00, 0x01, 'y',                    //  str32
        0xc4, 0x01, 0x00,                                     //  bin8
        0xc5, 0x00, 0x01, 0x00,                               //  bin16
        0xc6, 0x00, 0x00, 0x00, 0x01, 0x00,                   //  bin32
        0xdd, 0x00, 0x00, 0x00, 0x01, 0xc3,                   //  array32 of true
        0xde, 0x00, 0x01, 0xa1, 'k',  0xc2,                   //  map16 {k: false}
        0xdf, 0x00, 0x00, 0x00, 0x01, 0xa1, 'n',  0xc0,       //  map32 {n: nil}
    };
    s_write ("fuzz_reader", "widths", widths, sizeof widths);

    //  Nested containers, as the wire nests them, with room to mutate.
    msgpack_sbuffer sbuf;
    msgpack_packer pk;
    msgpack_sbuffer_init (&sbuf);
    msgpack_packer_init (&pk, &sbuf, msgpack_sbuffer_write);
    msgpack_pack_map (&pk, 3);
    msgpack_pack_str_with_body (&pk, "labels", 6);
    msgpack_pack_map (&pk, 2);
    msgpack_pack_str_with_body (&pk, "zone", 4);
    msgpack_pack_str_with_body (&pk, "eu-west-1a", 10);
    msgpack_pack_str_with_body (&pk, "disk", 4);
    msgpack_pack_str_with_body (&pk, "ssd", 3);
    msgpack_pack_str_with_body (&pk, "epochs", 6);
    msgpack_pack_array (&pk, 2);
    msgpack_pack_array (&pk, 2);
    msgpack_pack_uint64 (&pk, 7);
    msgpack_pack_uint64 (&pk, 300);
    msgpack_pack_array (&pk, 2);
    msgpack_pack_uint64 (&pk, 70000);
    msgpack_pack_uint64 (&pk, UINT64_MAX);
    msgpack_pack_bin_with_body (&pk, fuzz_key, 16);
    msgpack_pack_array (&pk, 0);
    s_write ("fuzz_reader", "nested", sbuf.data, sbuf.size);
    msgpack_sbuffer_clear (&sbuf);

    //  Types outside the reader's subset, where the walk stops.
    msgpack_pack_array (&pk, 3);
    msgpack_pack_int64 (&pk, -1);
    msgpack_pack_double (&pk, 1.5);
    msgpack_pack_ext_with_body (&pk, "ab", 2, 1);
    s_write ("fuzz_reader", "outside", sbuf.data, sbuf.size);
    msgpack_sbuffer_destroy (&sbuf);

    //  As deep as msgpack-c parses: 31 arrays, then a map holding nil.
    uint8_t deep[34];
    memset (deep, 0x91, 31);
    deep[31] = 0x81;
    deep[32] = 0xc0;
    deep[33] = 0xc0;
    s_write ("fuzz_reader", "deep", deep, sizeof deep);
}

//  ---------------------------------------------------------------------
//  The dictionary: headers the wire uses and the head of every message.

//  fuzz_membership: runs of steps (fuzz.h) that reach each kind of message
//  with members in the table, a join, a leave and the clock moving on.
typedef struct {
    uint8_t bytes[8192];
    size_t size;
} s_steps_t;

static void
s_step (s_steps_t *steps, uint8_t header)
{
    steps->bytes[steps->size++] = header;
}

static void
s_step_message (s_steps_t *steps, int peer, int type, bool unaddressed)
{
    uint8_t message[4096];
    size_t size = s_sample (type, message, sizeof message);
    bool frame = shoal_msg_purpose (type) == SHOAL_PURPOSE_FRAME;
    s_step (steps, (uint8_t) (FUZZ_MEMBERSHIP_MESSAGE | peer << 2 | unaddressed << 5 | frame << 6));
    s_step (steps, (uint8_t) (size >> 8));
    s_step (steps, (uint8_t) size);
    memcpy (steps->bytes + steps->size, message, size);
    steps->size += size;
}

static void
s_step_call (s_steps_t *steps, int call, int peer)
{
    s_step (steps, (uint8_t) (FUZZ_MEMBERSHIP_CALL | call << 2 | peer << 5));
}

static void
s_step_ticks (s_steps_t *steps, int count, int step)
{
    for (int i = 0; i < count; i++)
        s_step (steps, (uint8_t) (FUZZ_MEMBERSHIP_TICK | step << 2));
}

static void
s_membership_seeds (void)
{
    static const int datagrams[] = { SHOAL_MSG_PING, SHOAL_MSG_ACK, SHOAL_MSG_PING_REQ,
                                     SHOAL_MSG_NACK };
    static const int frames[] = { SHOAL_MSG_DIGEST, SHOAL_MSG_SYNC_REQ, SHOAL_MSG_SYNC_REPLY };
    s_steps_t steps = { .size = 0 };
    s_step_call (&steps, FUZZ_MEMBERSHIP_TEACH, 0);
    for (size_t i = 0; i < sizeof datagrams / sizeof datagrams[0]; i++) {
        s_step_message (&steps, (int) i + 1, datagrams[i], false);
        s_step_ticks (&steps, 2, 1);
    }
    s_write ("fuzz_membership", "datagrams", steps.bytes, steps.size);

    steps.size = 0;
    s_step_call (&steps, FUZZ_MEMBERSHIP_TEACH, 0);
    for (size_t i = 0; i < sizeof frames / sizeof frames[0]; i++)
        s_step_message (&steps, (int) i + 1, frames[i], false);
    s_step_ticks (&steps, 4, 20);
    s_write ("fuzz_membership", "frames", steps.bytes, steps.size);

    //  A stranger's unaddressed PING, a join, a beacon, then time passing:
    //  probes, suspicions, deaths, tombstones.
    steps.size = 0;
    s_step_message (&steps, 3, SHOAL_MSG_PING, true);
    s_step_call (&steps, FUZZ_MEMBERSHIP_JOIN, 1);
    s_step_call (&steps, FUZZ_MEMBERSHIP_INTRODUCE, 2);
    s_step_call (&steps, FUZZ_MEMBERSHIP_TEACH, 0);
    s_step_ticks (&steps, 60, 5);
    s_step_ticks (&steps, 20, 63);
    s_write ("fuzz_membership", "time", steps.bytes, steps.size);

    steps.size = 0;
    s_step_call (&steps, FUZZ_MEMBERSHIP_TEACH, 0);
    s_step_call (&steps, FUZZ_MEMBERSHIP_SET_META, 0);
    s_step_ticks (&steps, 5, 1);
    s_step_call (&steps, FUZZ_MEMBERSHIP_LEAVE, 0);
    s_step_message (&steps, 4, SHOAL_MSG_PING, false);
    s_step_ticks (&steps, 10, 1);
    s_write ("fuzz_membership", "leave", steps.bytes, steps.size);

    //  Hints: about members, the same one twice, this node, a stranger's
    //  PING in between, time passing through the hinted probes.
    steps.size = 0;
    s_step_call (&steps, FUZZ_MEMBERSHIP_TEACH, 0);
    s_step_call (&steps, FUZZ_MEMBERSHIP_HINT, 3);
    s_step_call (&steps, FUZZ_MEMBERSHIP_HINT, 3);
    s_step_call (&steps, FUZZ_MEMBERSHIP_HINT, 7);
    s_step_message (&steps, 5, SHOAL_MSG_ACK, false);
    s_step_ticks (&steps, 5, 3);
    s_step_call (&steps, FUZZ_MEMBERSHIP_HINT, 4);
    s_step_ticks (&steps, 30, 5);
    s_write ("fuzz_membership", "hint", steps.bytes, steps.size);
}

//  ---------------------------------------------------------------------
//  fuzz_elector: runs of steps (fuzz.h) as a node lives them: following a
//  leader's rounds, as msgpack and as built steps, electing itself and
//  leading with acknowledgements and voter changes, asking above and being
//  answered, two leaders meeting in available mode, a restart that keeps
//  its promise; and the samples of the election messages and of another
//  frame, which the node drops.

//  The voter operands of peers 0 to count - 1 and of the node itself.
static size_t
s_elector_voters (uint8_t *voters, int count)
{
    for (int i = 0; i < count; i++)
        voters[i] = (uint8_t) i;
    voters[count] = FUZZ_ELECTOR_SELF;
    return (size_t) count + 1;
}

static void
s_elector_step (s_steps_t *steps, int step, int peer, uint8_t flags)
{
    s_step (steps, (uint8_t) (step | peer << 3 | flags));
}

static void
s_elector_member (s_steps_t *steps, int peer, bool live, bool high)
{
    s_elector_step (steps, FUZZ_ELECTOR_MEMBER, peer,
                    (uint8_t) ((live ? FUZZ_ELECTOR_LIVE : 0) | (high ? FUZZ_ELECTOR_HIGH : 0)));
}

//  Ticks at next, count times.
static void
s_elector_next (s_steps_t *steps, int count)
{
    for (int i = 0; i < count; i++)
        s_step (steps, FUZZ_ELECTOR_NEXT);
}

//  The clock moves on by units * 37 ms, then a tick.
static void
s_elector_tick (s_steps_t *steps, int units)
{
    s_step (steps, (uint8_t) (FUZZ_ELECTOR_TICK | units << 3));
}

//  A COORDINATOR (step FUZZ_ELECTOR_COORDINATOR) or COORDINATOR-ACK
//  (FUZZ_ELECTOR_ACK) from peer: term, round and voters_version as steps
//  from their bases, then the voters.
static void
s_elector_round (s_steps_t *steps, int step, int peer, int term, uint32_t priority, int round,
                 int version, const uint8_t *voters, size_t count)
{
    s_elector_step (steps, step, peer, 0);
    s_step (steps, (uint8_t) term);
    if (step == FUZZ_ELECTOR_COORDINATOR)
        s_step (steps, (uint8_t) priority);
    s_step (steps, (uint8_t) round);
    s_step (steps, (uint8_t) version);
    s_step (steps, (uint8_t) count);
    if (count)
        memcpy (steps->bytes + steps->size, voters, count);
    steps->size += count;
}

//  size bytes of message from peer.
static void
s_elector_bytes (s_steps_t *steps, int peer, const uint8_t *message, size_t size)
{
    s_elector_step (steps, FUZZ_ELECTOR_MESSAGE, peer, 0);
    s_step (steps, (uint8_t) (size >> 8));
    s_step (steps, (uint8_t) size);
    memcpy (steps->bytes + steps->size, message, size);
    steps->size += size;
}

//  msg from peer, in msgpack.
static void
s_elector_message (s_steps_t *steps, int peer, const shoal_msg_t *msg)
{
    uint8_t message[4096];
    shoal_wire_error_t err;
    long size = shoal_msg_encode (msg, message, sizeof message, &err);
    if (size < 0) {
        fprintf (stderr, "make_corpus: a %s does not encode: %s\n", shoal_msg_type_name (msg->type),
                 err.text);
        exit (EXIT_FAILURE);
    }
    s_elector_bytes (steps, peer, message, (size_t) size);
}

static void
s_elector_seeds (void)
{
    static s_steps_t steps;
    uint8_t voters[16];
    size_t count;

    //  A follower of peer 4, which outranks it, in msgpack: the first round
    //  brings the voter set; a lower peer asks for an election meanwhile.
    //  Then the leader falls silent: the node asks peer 3, the next above,
    //  which answers and proclaims a new term.
    steps.size = 0;
    s_step (&steps, 0);
    for (int i = 0; i < 5; i++)
        s_elector_member (&steps, i, true, i == 4);
    shoal_id_t ids[6];
    for (int i = 0; i < 5; i++)
        ids[i] = shoal_sample_id ((uint8_t) (i + 1));
    ids[5] = shoal_sample_id (0x03);
    ids[5].bytes[SHOAL_ID_SIZE - 1] = 0x80;
    shoal_msg_t msg = { .type = SHOAL_MSG_COORDINATOR };
    for (int round = 1; round <= 8; round++) {
        msg.u.coordinator = (shoal_coordinator_t){ .term = 1,
                                                   .priority = 1,
                                                   .round = (uint64_t) round,
                                                   .voters_version = 1,
                                                   .voter_count = round == 1 ? 6 : 0,
                                                   .voters = round == 1 ? ids : NULL };
        s_elector_message (&steps, 4, &msg);
        if (round == 4) {
            shoal_msg_t election = { .type = SHOAL_MSG_ELECTION };
            election.u.election = (shoal_election_t){ .term = 1, .priority = 0 };
            s_elector_message (&steps, 0, &election);
        }
        s_elector_tick (&steps, 2);
    }
    s_elector_next (&steps, 1);
    shoal_msg_t answer = { .type = SHOAL_MSG_ANSWER };
    answer.u.answer.term = 1;
    s_elector_message (&steps, 3, &answer);
    msg.u.coordinator =
        (shoal_coordinator_t){ .term = 2, .priority = 0, .round = 1, .voters_version = 1 };
    s_elector_message (&steps, 3, &msg);
    s_elector_tick (&steps, 2);
    s_write ("fuzz_elector", "follower-msgpack", steps.bytes, steps.size);

    //  The same follower, its rounds built from steps, until the leader
    //  leaves and the node, then above everyone live, proclaims itself.
    steps.size = 0;
    s_step (&steps, 0);
    for (int i = 0; i < 5; i++)
        s_elector_member (&steps, i, true, i == 4);
    count = s_elector_voters (voters, 5);
    s_elector_round (&steps, FUZZ_ELECTOR_COORDINATOR, 4, 1, 1, 1, 1, voters, count);
    for (int round = 2; round <= 12; round++) {
        s_elector_tick (&steps, 2);
        s_elector_round (&steps, FUZZ_ELECTOR_COORDINATOR, 4, 0, 1, 1, 0, NULL, 0);
    }
    s_elector_member (&steps, 4, false, true);
    s_elector_member (&steps, 3, false, false);
    s_elector_next (&steps, 4);
    s_write ("fuzz_elector", "follower-rounds", steps.bytes, steps.size);

    //  A node above every peer elects itself, and leads while the peers
    //  acknowledge each round.
    steps.size = 0;
    s_step (&steps, FUZZ_ELECTOR_PRIORITY);
    for (int i = 0; i < 4; i++)
        s_elector_member (&steps, i, true, false);
    s_elector_next (&steps, 1);
    for (int round = 1; round <= 10; round++) {
        for (int i = 0; i < 4; i++)
            s_elector_round (&steps, FUZZ_ELECTOR_ACK, i, 0, 0, 0, 0, NULL, 0);
        s_elector_next (&steps, 1);
    }
    s_write ("fuzz_elector", "self-elected", steps.bytes, steps.size);

    //  A leader with voters: a follower sends back a newer set naming a
    //  stranger, peer 5 comes up and joins the set after stable_ms, peer 1
    //  goes down and leaves it after down_after_ms.
    steps.size = 0;
    s_step (&steps, FUZZ_ELECTOR_PRIORITY);
    for (int i = 0; i < 4; i++)
        s_elector_member (&steps, i, true, false);
    s_elector_next (&steps, 1);
    count = s_elector_voters (voters, 4);
    voters[count++] = 0xaa;
    s_elector_round (&steps, FUZZ_ELECTOR_ACK, 0, 0, 0, 0, 1, voters, count);
    s_elector_member (&steps, 5, true, false);
    s_elector_member (&steps, 1, false, false);
    for (int round = 1; round <= 100; round++) {
        for (int i = 0; i < 6; i++)
            if (i != 1 && i != 4)
                s_elector_round (&steps, FUZZ_ELECTOR_ACK, i, 0, 0, 0, 0, NULL, 0);
        s_elector_next (&steps, 1);
    }
    s_write ("fuzz_elector", "leader-voters", steps.bytes, steps.size);

    //  Asking above: peers 5, 6 and 7 outrank the node; 7 stays silent, 6
    //  answers, then nobody proclaims, so the node asks again and 7
    //  proclaims at last.
    steps.size = 0;
    s_step (&steps, 0);
    for (int i = 0; i < 8; i++)
        s_elector_member (&steps, i, true, i >= 5);
    s_elector_next (&steps, 2);
    s_elector_step (&steps, FUZZ_ELECTOR_ANSWER, 6, 0);
    s_step (&steps, 0);
    s_elector_next (&steps, 2);
    count = s_elector_voters (voters, 8);
    s_elector_round (&steps, FUZZ_ELECTOR_COORDINATOR, 7, 1, 1, 1, 1, voters, count);
    s_elector_tick (&steps, 2);
    s_elector_round (&steps, FUZZ_ELECTOR_COORDINATOR, 7, 0, 1, 1, 0, NULL, 0);
    s_write ("fuzz_elector", "candidate-answered", steps.bytes, steps.size);

    //  Available mode: the node, above every peer, leads at once; peer 6
    //  rises above it and proclaims the same term, which its rank wins;
    //  then peer 2 proclaims a higher term, which wins by itself.
    steps.size = 0;
    s_step (&steps, FUZZ_ELECTOR_AVAILABLE | FUZZ_ELECTOR_PRIORITY);
    for (int i = 0; i < 7; i++)
        s_elector_member (&steps, i, true, false);
    s_elector_next (&steps, 1);
    s_elector_round (&steps, FUZZ_ELECTOR_ACK, 0, 0, 0, 0, 0, NULL, 0);
    s_elector_member (&steps, 6, true, true);
    s_elector_round (&steps, FUZZ_ELECTOR_COORDINATOR, 6, 0, 1, 1, 0, NULL, 0);
    s_elector_next (&steps, 1);
    s_elector_round (&steps, FUZZ_ELECTOR_COORDINATOR, 2, 1, 0, 1, 0, NULL, 0);
    s_elector_next (&steps, 3);
    s_write ("fuzz_elector", "available-leaders", steps.bytes, steps.size);

    //  A restart promised to peer 4 at term 5: peer 4 goes on, peer 3
    //  proclaims a term above while the promise holds and is put off, then
    //  followed when peer 4 falls silent.
    steps.size = 0;
    s_step (&steps, FUZZ_ELECTOR_RESTART);
    for (int i = 0; i < 5; i++)
        s_elector_member (&steps, i, true, i == 4);
    s_elector_round (&steps, FUZZ_ELECTOR_COORDINATOR, 4, 0, 1, 1, 0, NULL, 0);
    s_elector_tick (&steps, 2);
    s_elector_round (&steps, FUZZ_ELECTOR_COORDINATOR, 3, 1, 0, 1, 0, NULL, 0);
    s_elector_next (&steps, 1);
    for (int round = 2; round <= 4; round++) {
        s_elector_tick (&steps, 2);
        s_elector_round (&steps, FUZZ_ELECTOR_COORDINATOR, 3, 0, 0, 1, 0, NULL, 0);
    }
    s_write ("fuzz_elector", "restart-promised", steps.bytes, steps.size);

    //  The samples, from a live peer.
    static const int types[] = { SHOAL_MSG_ELECTION, SHOAL_MSG_ANSWER, SHOAL_MSG_COORDINATOR,
                                 SHOAL_MSG_COORDINATOR_ACK, SHOAL_MSG_STATUS };
    steps.size = 0;
    s_step (&steps, 0);
    for (int i = 0; i < 4; i++)
        s_elector_member (&steps, i, true, false);
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        uint8_t message[4096];
        s_elector_bytes (&steps, 3, message, s_sample (types[i], message, sizeof message));
        s_elector_tick (&steps, 1);
    }
    s_write ("fuzz_elector", "samples", steps.bytes, steps.size);
}

//  ---------------------------------------------------------------------
//  fuzz_jobs: runs of steps (fuzz.h) as a node lives them: leading with a
//  quorum (catching up from voters, writing, counting acknowledgements,
//  rescales that wait, partial, lower and at once), following in msgpack
//  (snapshots, deltas in and out of order, requests forwarded, answered,
//  timed out and cut by a new leader), the samples of the jobs messages
//  and of others, which the node drops, and garbage; restarts from a saved
//  set, a broken one, one at the task limit and one near the job limit
//  (in bulk); and available mode with one request in flight at most.

typedef struct {
    uint8_t bytes[16384]; //  libFuzzer's max_len for fuzz_jobs
    size_t size;
} s_jobs_steps_t;

static void
s_jobs_bytes (s_jobs_steps_t *steps, const void *bytes, size_t size)
{
    if (size > sizeof steps->bytes - steps->size) {
        fprintf (stderr, "make_corpus: a fuzz_jobs seed outgrows %zu bytes\n", sizeof steps->bytes);
        exit (EXIT_FAILURE);
    }
    memcpy (steps->bytes + steps->size, bytes, size);
    steps->size += size;
}

static void
s_jobs_byte (s_jobs_steps_t *steps, uint8_t byte)
{
    s_jobs_bytes (steps, &byte, 1);
}

static void
s_jobs_step (s_jobs_steps_t *steps, int step, int node, uint8_t flags)
{
    s_jobs_byte (steps, (uint8_t) (step | node << 3 | flags));
}

static void
s_jobs_member (s_jobs_steps_t *steps, int node, bool live)
{
    s_jobs_step (steps, FUZZ_JOBS_MEMBER, node, live ? FUZZ_JOBS_LIVE : 0);
}

//  The voters: the nodes of mask's bits.
static void
s_jobs_voters (s_jobs_steps_t *steps, uint8_t mask)
{
    s_jobs_step (steps, FUZZ_JOBS_MEMBER, 0, FUZZ_JOBS_VOTERS);
    s_jobs_byte (steps, mask);
}

//  node leads (nobody when node is -1) at the greatest term given plus
//  term_step.
static void
s_jobs_leader (s_jobs_steps_t *steps, int node, int term_step, bool acting)
{
    s_jobs_step (steps, FUZZ_JOBS_LEADER, node < 0 ? 0 : node,
                 (uint8_t) ((node < 0 ? FUZZ_JOBS_NOBODY : 0) | (acting ? FUZZ_JOBS_ACTING : 0)));
    s_jobs_byte (steps, (uint8_t) term_step);
}

//  The clock moves on by units * 37 ms, then a tick.
static void
s_jobs_tick (s_jobs_steps_t *steps, int units)
{
    s_jobs_byte (steps, (uint8_t) (FUZZ_JOBS_TICK | units << 3));
}

//  Ticks at next, count times.
static void
s_jobs_next (s_jobs_steps_t *steps, int count)
{
    for (int i = 0; i < count; i++)
        s_jobs_byte (steps, FUZZ_JOBS_NEXT);
}

//  A job name operand of raw bytes.
static void
s_jobs_name (s_jobs_steps_t *steps, const char *name)
{
    s_jobs_byte (steps, (uint8_t) (0x80 | strlen (name)));
    s_jobs_bytes (steps, name, strlen (name));
}

//  A spec of weight 1 without labels; command is a command operand.
static void
s_jobs_spec (s_jobs_steps_t *steps, const char *name, uint8_t parallelism, bool stateful,
             uint8_t command)
{
    s_jobs_name (steps, name);
    s_jobs_byte (steps, parallelism);
    s_jobs_byte (steps, stateful);
    s_jobs_byte (steps, command);
}

static void
s_jobs_submit (s_jobs_steps_t *steps, const char *name, uint8_t parallelism)
{
    s_jobs_step (steps, FUZZ_JOBS_REQUEST, FUZZ_JOBS_SUBMIT, (uint8_t) (FUZZ_JOBS_SPEC << 5));
    s_jobs_spec (steps, name, parallelism, false, 1);
}

//  A rescale; timeout is a timeout operand (operand^2 * 10 ms).
static void
s_jobs_rescale (s_jobs_steps_t *steps, const char *name, uint8_t parallelism, uint8_t min,
                uint8_t timeout)
{
    s_jobs_step (steps, FUZZ_JOBS_REQUEST, FUZZ_JOBS_RESCALE, 0);
    s_jobs_name (steps, name);
    s_jobs_byte (steps, parallelism);
    s_jobs_byte (steps, min);
    s_jobs_byte (steps, timeout);
}

static void
s_jobs_remove (s_jobs_steps_t *steps, const char *name)
{
    s_jobs_step (steps, FUZZ_JOBS_REQUEST, FUZZ_JOBS_REMOVE, 0);
    s_jobs_name (steps, name);
}

//  The capacity of the first rescale that waits; capacity is a count
//  operand (0xfa: UINT32_MAX).
static void
s_jobs_capacity (s_jobs_steps_t *steps, uint8_t capacity)
{
    s_jobs_step (steps, FUZZ_JOBS_CAPACITY, 0, 0);
    s_jobs_byte (steps, 0);
    s_jobs_byte (steps, capacity);
}

//  A JOB-ACK from node of the name held, moved on by the steps.
static void
s_jobs_ack (s_jobs_steps_t *steps, int node, int term_step, int version_step)
{
    s_jobs_step (steps, FUZZ_JOBS_CRAFTED, node, 0);
    s_jobs_byte (steps, FUZZ_JOBS_CRAFT_ACK);
    s_jobs_byte (steps, (uint8_t) term_step);
    s_jobs_byte (steps, (uint8_t) version_step);
}

static void
s_jobs_bytes_from (s_jobs_steps_t *steps, int node, const uint8_t *message, size_t size)
{
    s_jobs_step (steps, FUZZ_JOBS_MESSAGE, node, 0);
    s_jobs_byte (steps, (uint8_t) (size >> 8));
    s_jobs_byte (steps, (uint8_t) size);
    s_jobs_bytes (steps, message, size);
}

//  msg from node, in msgpack.
static void
s_jobs_message (s_jobs_steps_t *steps, int node, const shoal_msg_t *msg)
{
    uint8_t message[8192];
    shoal_wire_error_t err;
    long size = shoal_msg_encode (msg, message, sizeof message, &err);
    if (size < 0) {
        fprintf (stderr, "make_corpus: a %s does not encode: %s\n", shoal_msg_type_name (msg->type),
                 err.text);
        exit (EXIT_FAILURE);
    }
    s_jobs_bytes_from (steps, node, message, (size_t) size);
}

static void
s_jobs_write (const char *name, const s_jobs_steps_t *steps)
{
    s_write ("fuzz_jobs", name, steps->bytes, steps->size);
}

//  A leader with a quorum of four voters (itself and peers 0 to 2): it
//  catches up from two voters' sets, writes a submit and answers it once
//  two peers acknowledge, a rescale that waits and is applied in part at
//  its timeout, one lower at once, one within an unlimited capacity, a
//  remove; then peer 1 goes down and a submit waits until the leadership
//  goes.
static void
s_jobs_leader_seed (void)
{
    static s_jobs_steps_t steps;
    steps.size = 0;
    s_jobs_byte (&steps, 0);
    for (int i = 0; i < 3; i++)
        s_jobs_member (&steps, i, true);
    s_jobs_voters (&steps, 1u << 0 | 1u << 1 | 1u << 2 | 1u << FUZZ_JOBS_SELF);
    s_jobs_leader (&steps, FUZZ_JOBS_SELF, 1, true);
    //  Peer 0 holds version 2 of term 0, peer 1 nothing.
    s_jobs_step (&steps, FUZZ_JOBS_CRAFTED, 0, 0);
    s_jobs_byte (&steps, FUZZ_JOBS_CRAFT_SYNC_REPLY);
    s_jobs_byte (&steps, 0xff);
    s_jobs_byte (&steps, 2);
    s_jobs_byte (&steps, 1);
    s_jobs_spec (&steps, "ingest", 2, true, 3);
    s_jobs_step (&steps, FUZZ_JOBS_CRAFTED, 1, 0);
    s_jobs_byte (&steps, FUZZ_JOBS_CRAFT_SYNC_REPLY);
    s_jobs_byte (&steps, 0xff);
    s_jobs_byte (&steps, 0);
    s_jobs_byte (&steps, 0);
    //  The catch-up's snapshot, then every change, held by all three
    //  peers (but peer 2 once lags), so that the next timer is the
    //  rescale's.
    for (int i = 0; i < 3; i++)
        s_jobs_ack (&steps, i, 0, 0);
    s_jobs_submit (&steps, "web", 4);
    for (int i = 0; i < 3; i++)
        s_jobs_ack (&steps, i, 0, 0);
    s_jobs_rescale (&steps, "web", 8, 6, 10);
    s_jobs_capacity (&steps, 6);
    s_jobs_next (&steps, 1);
    for (int i = 0; i < 3; i++)
        s_jobs_ack (&steps, i, 0, 0);
    s_jobs_rescale (&steps, "web", 2, 0, 0);
    s_jobs_ack (&steps, 0, 0, 0);
    s_jobs_ack (&steps, 1, 0, 0);
    s_jobs_next (&steps, 1);
    s_jobs_ack (&steps, 2, 0, 0);
    s_jobs_rescale (&steps, "web", 10, 0, 20);
    s_jobs_capacity (&steps, 0xfa);
    for (int i = 0; i < 3; i++)
        s_jobs_ack (&steps, i, 0, 0);
    s_jobs_remove (&steps, "web");
    for (int i = 0; i < 3; i++)
        s_jobs_ack (&steps, i, 0, 0);

    s_jobs_member (&steps, 1, false);
    s_jobs_tick (&steps, 3);
    s_jobs_next (&steps, 2);
    s_jobs_submit (&steps, "db.main", 1);
    s_jobs_next (&steps, 2);
    s_jobs_leader (&steps, -1, 0, false);
    s_jobs_write ("leader-quorum", &steps);
}

//  A follower of peer 0, in msgpack: asked for its specs, given a
//  snapshot, deltas in order, one ahead of what it holds, and a removal;
//  its requests go to the leader: one answered, one timed out, one cut
//  short by a new leader, whose snapshot replaces the set; the old leader
//  is then dropped, and without a leader a request is refused at once.
static void
s_jobs_follower_seed (void)
{
    static s_jobs_steps_t steps;
    static shoal_label_t labels[2] = { { "zone", "eu" }, { "disk", "ssd" } };
    static shoal_jobspec_t specs[3] = {
        { .name = "web", .parallelism = 4, .weight = 1, .command = "" },
        { .name = "ingest",
          .parallelism = 2,
          .stateful = true,
          .weight = 3,
          .require_count = 2,
          .require = labels,
          .command = "ingest --from kafka" },
        { .name = "db.main", .parallelism = 1, .weight = 1, .command = "" },
    };
    steps.size = 0;
    s_jobs_byte (&steps, FUZZ_JOBS_LAN);
    s_jobs_member (&steps, 0, true);
    s_jobs_member (&steps, 1, true);
    s_jobs_voters (&steps, 1u << 0 | 1u << 1 | 1u << FUZZ_JOBS_SELF);
    s_jobs_leader (&steps, 0, 3, false);

    shoal_msg_t msg = { .type = SHOAL_MSG_SYNC_REQ };
    msg.u.sync_req.want = SHOAL_SYNC_JOBS;
    s_jobs_message (&steps, 0, &msg);
    msg = (shoal_msg_t){ .type = SHOAL_MSG_SYNC_REPLY };
    msg.u.sync_reply = (shoal_sync_reply_t){
        .jobs_term = 3, .jobs_version = 5, .job_count = 2, .jobs = specs, .parts = SHOAL_SYNC_JOBS
    };
    s_jobs_message (&steps, 0, &msg);
    msg = (shoal_msg_t){ .type = SHOAL_MSG_JOB };
    msg.u.job = (shoal_job_t){ 3, 6, specs[2] };
    s_jobs_message (&steps, 0, &msg);
    msg.u.job = (shoal_job_t){ 3, 8, specs[1] };
    s_jobs_message (&steps, 0, &msg);
    msg.u.job = (shoal_job_t){ 3, 7, specs[0] };
    msg.u.job.spec.parallelism = 0;
    s_jobs_message (&steps, 0, &msg);

    s_jobs_submit (&steps, "cache", 2);
    msg = (shoal_msg_t){ .type = SHOAL_MSG_CONTROL_REP };
    shoal_jobspec_t cache = { .name = "cache", .parallelism = 2, .weight = 1, .command = "" };
    msg.u.control_rep = (shoal_control_rep_t){ .id = 1,
                                               .code = SHOAL_REPLY_OK,
                                               .reason = "",
                                               .leader = shoal_sample_id (1),
                                               .term = 3,
                                               .version = 8,
                                               .job_count = 1,
                                               .jobs = &cache };
    s_jobs_message (&steps, 0, &msg);
    s_jobs_rescale (&steps, "ingest", 4, 0, 0);
    s_jobs_next (&steps, 1);
    s_jobs_remove (&steps, "ingest");
    s_jobs_leader (&steps, 1, 1, false);
    msg = (shoal_msg_t){ .type = SHOAL_MSG_SYNC_REPLY };
    msg.u.sync_reply = (shoal_sync_reply_t){
        .jobs_term = 4, .jobs_version = 1, .job_count = 1, .jobs = specs, .parts = SHOAL_SYNC_JOBS
    };
    s_jobs_message (&steps, 1, &msg);
    msg = (shoal_msg_t){ .type = SHOAL_MSG_JOB };
    msg.u.job = (shoal_job_t){ 3, 8, specs[1] };
    s_jobs_message (&steps, 0, &msg);
    s_jobs_leader (&steps, -1, 0, false);
    s_jobs_submit (&steps, "late", 1);
    s_jobs_write ("follower-msgpack", &steps);
}

//  The samples of the jobs messages and of two others, then garbage, from
//  peer 0: followed at the term of the sample SYNC-REPLY, at the term of
//  the sample JOB, then as a voter of this node, which leads.
static void
s_jobs_samples_seed (void)
{
    static s_jobs_steps_t steps;
    static const int types[] = { SHOAL_MSG_SYNC_REPLY, SHOAL_MSG_SYNC_REQ,    SHOAL_MSG_JOB,
                                 SHOAL_MSG_JOB_ACK,    SHOAL_MSG_CONTROL_REQ, SHOAL_MSG_CONTROL_REP,
                                 SHOAL_MSG_ASSIGN,     SHOAL_MSG_STATUS };
    static const uint8_t garbage[] = { 0x96, 0x01, SHOAL_MSG_JOB, 0xc0, 0xff };
    static const int terms[] = { 3, 4, 1 }; //  3, then 7, then 8 for this node
    static uint8_t message[SHOAL_FRAME_MAX];
    steps.size = 0;
    s_jobs_byte (&steps, 0);
    s_jobs_member (&steps, 0, true);
    for (int round = 0; round < 3; round++) {
        if (round == 2) {
            s_jobs_voters (&steps, 1u << 0 | 1u << FUZZ_JOBS_SELF);
            s_jobs_leader (&steps, FUZZ_JOBS_SELF, terms[round], true);
        } else
            s_jobs_leader (&steps, 0, terms[round], false);
        for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
            s_jobs_bytes_from (&steps, 0, message, s_sample (types[i], message, sizeof message));
        s_jobs_bytes_from (&steps, 0, garbage, sizeof garbage);
        s_jobs_next (&steps, 2);
    }
    s_jobs_write ("samples", &steps);
}

//  Restarts: from a valid set of three jobs, which the node leads with
//  after taking a voter's newer set; from a set that names a job twice,
//  which the node refuses, starting afresh; from a set at the task limit,
//  which takes no task more.
static void
s_jobs_restart_seeds (void)
{
    static s_jobs_steps_t steps;
    steps.size = 0;
    s_jobs_byte (&steps, FUZZ_JOBS_RESTART);
    s_jobs_byte (&steps, 4);
    s_jobs_byte (&steps, 9);
    s_jobs_byte (&steps, 3);
    s_jobs_spec (&steps, "web", 4, false, 1);
    s_jobs_name (&steps, "ingest");
    s_jobs_byte (&steps, 2);
    s_jobs_byte (&steps, 1 | 2 << 3); //  stateful, two labels
    s_jobs_byte (&steps, 3);
    s_jobs_byte (&steps, 1);                               //  zone=eu
    s_jobs_byte (&steps, FUZZ_JOBS_LABEL_UNIQUE | 1 << 3); //  k1=v
    s_jobs_spec (&steps, "db.main", 1, false, 0);
    s_jobs_member (&steps, 0, true);
    s_jobs_voters (&steps, 1u << 0 | 1u << FUZZ_JOBS_SELF);
    s_jobs_leader (&steps, FUZZ_JOBS_SELF, 1, true);
    s_jobs_step (&steps, FUZZ_JOBS_CRAFTED, 0, 0);
    s_jobs_byte (&steps, FUZZ_JOBS_CRAFT_SYNC_REPLY);
    s_jobs_byte (&steps, 0xff); //  term 4, as saved
    s_jobs_byte (&steps, 3);    //  version 12, newer
    s_jobs_byte (&steps, 1);
    s_jobs_spec (&steps, "web", 8, false, 1);
    s_jobs_ack (&steps, 0, 0, 0);
    s_jobs_submit (&steps, "cache", 3);
    s_jobs_ack (&steps, 0, 0, 0);
    s_jobs_leader (&steps, -1, 0, false);
    s_jobs_write ("restart", &steps);

    steps.size = 0;
    s_jobs_byte (&steps, FUZZ_JOBS_RESTART);
    s_jobs_byte (&steps, 2);
    s_jobs_byte (&steps, 3);
    s_jobs_byte (&steps, 2);
    s_jobs_spec (&steps, "web", 1, false, 1);
    s_jobs_spec (&steps, "web", 2, false, 1);
    s_jobs_leader (&steps, 0, 2, false);
    s_jobs_step (&steps, FUZZ_JOBS_CRAFTED, 0, 0);
    s_jobs_byte (&steps, FUZZ_JOBS_CRAFT_JOB);
    s_jobs_byte (&steps, 0);
    s_jobs_byte (&steps, 1);
    s_jobs_spec (&steps, "web", 1, false, 1);
    s_jobs_write ("restart-refused", &steps);

    //  65535 tasks (operand 0xf8) and one more: at the limit.
    steps.size = 0;
    s_jobs_byte (&steps, FUZZ_JOBS_RESTART | FUZZ_JOBS_AVAILABLE);
    s_jobs_byte (&steps, 1);
    s_jobs_byte (&steps, 1);
    s_jobs_byte (&steps, 2);
    s_jobs_spec (&steps, "big", 0xf8, false, 1);
    s_jobs_spec (&steps, "one", 1, false, 1);
    s_jobs_voters (&steps, 1u << FUZZ_JOBS_SELF);
    s_jobs_leader (&steps, FUZZ_JOBS_SELF, 1, true);
    s_jobs_submit (&steps, "more", 1);
    s_jobs_rescale (&steps, "one", 2, 0, 0);
    s_jobs_rescale (&steps, "big", 100, 0, 0);
    s_jobs_submit (&steps, "more", 1);
    s_jobs_write ("restart-task-limit", &steps);
}

//  The start of a bulk saved set (fuzz.h) of count jobs, named (1, 1).
static void
s_jobs_bulk (s_jobs_steps_t *steps, uint8_t setup, uint16_t count, uint8_t parallelism,
             uint8_t command, uint8_t labels)
{
    s_jobs_byte (steps, FUZZ_JOBS_RESTART | FUZZ_JOBS_BULK | setup);
    s_jobs_bytes (steps, FUZZ_JOBS_BULK_MARK, 2);
    s_jobs_byte (steps, 1);
    s_jobs_byte (steps, 1);
    s_jobs_byte (steps, (uint8_t) (count >> 8));
    s_jobs_byte (steps, (uint8_t) count);
    s_jobs_byte (steps, parallelism);
    s_jobs_byte (steps, command);
    s_jobs_byte (steps, labels);
}

//  Bulk restarts: SHOAL_JOBS_MAX jobs, at which the leader refuses a
//  submit (each change lists every task again, seconds for thousands of
//  jobs under the sanitizers, so this seed changes nothing); 17 jobs of
//  4096 tasks, over SHOAL_TASKS_MAX, which the node refuses.
static void
s_jobs_bulk_seeds (void)
{
    static s_jobs_steps_t steps;
    steps.size = 0;
    s_jobs_bulk (&steps, FUZZ_JOBS_AVAILABLE, SHOAL_JOBS_MAX, 1, 0, 0);
    s_jobs_voters (&steps, 1u << FUZZ_JOBS_SELF);
    s_jobs_leader (&steps, FUZZ_JOBS_SELF, 1, true);
    s_jobs_submit (&steps, "more", 1);
    s_jobs_write ("bulk-job-limit", &steps);

    steps.size = 0;
    s_jobs_bulk (&steps, 0, 17, 0xfc, 1, 2); //  4096 tasks each
    s_jobs_leader (&steps, 0, 1, false);
    s_jobs_write ("bulk-task-limit", &steps);
}

//  Available mode, one request in flight at most, rescales that wait 1 s
//  at most: a submit answered at once; a rescale waits, and a second
//  request is refused meanwhile; the capacity reported lets the rescale
//  apply its minimum at the timeout; a rescale that may not wait times
//  out at once; one that asks to wait too long is refused.
static void
s_jobs_available_seed (void)
{
    static s_jobs_steps_t steps;
    steps.size = 0;
    s_jobs_byte (&steps, FUZZ_JOBS_AVAILABLE | FUZZ_JOBS_SHORT_WAIT | 1 << FUZZ_JOBS_PENDING_SHIFT);
    s_jobs_member (&steps, 0, true);
    s_jobs_voters (&steps, 1u << 0 | 1u << FUZZ_JOBS_SELF);
    s_jobs_leader (&steps, FUZZ_JOBS_SELF, 1, true);
    s_jobs_step (&steps, FUZZ_JOBS_CRAFTED, 0, 0);
    s_jobs_byte (&steps, FUZZ_JOBS_CRAFT_SNAPSHOT);
    s_jobs_byte (&steps, 0xff);
    s_jobs_byte (&steps, 0);
    s_jobs_submit (&steps, "web", 1);
    s_jobs_ack (&steps, 0, 0, 0);
    s_jobs_rescale (&steps, "web", 4, 2, 8);
    s_jobs_remove (&steps, "web");
    s_jobs_capacity (&steps, 3);
    s_jobs_next (&steps, 1);
    s_jobs_rescale (&steps, "web", 5, 0, 0);
    s_jobs_rescale (&steps, "web", 5, 0, 11);
    s_jobs_ack (&steps, 0, 0, 0);
    s_jobs_member (&steps, 0, false);
    s_jobs_tick (&steps, 5);
    s_jobs_write ("available-pending", &steps);
}

static void
s_jobs_seeds (void)
{
    s_jobs_leader_seed ();
    s_jobs_follower_seed ();
    s_jobs_samples_seed ();
    s_jobs_restart_seeds ();
    s_jobs_bulk_seeds ();
    s_jobs_available_seed ();
}

//  ---------------------------------------------------------------------
//  fuzz_persist: the payloads of the data directory's records, each at its
//  smallest, as a node writes it and at its limits, then a few damaged.

//  Writes the payload an encoder made; exits when it made none, since the
//  seed would not be what its name says.
static void
s_persist_write (const char *name, int rc, uint8_t *data, size_t size, const char *why)
{
    if (rc != 0) {
        fprintf (stderr, "make_corpus: the %s seed does not encode: %s\n", name, why);
        exit (EXIT_FAILURE);
    }
    s_write ("fuzz_persist", name, data, size);
    free (data);
}

static int
s_spec_order (const void *a, const void *b)
{
    return strcmp (((const shoal_jobspec_t *) a)->name, ((const shoal_jobspec_t *) b)->name);
}

static void
s_persist_seeds (void)
{
    char why[256] = "";
    uint8_t *data;
    size_t size;
    int rc;

    shoal_persist_identity_t identity = { shoal_sample_id (0x42), 3, 70000 };
    rc = shoal_persist_identity_encode (&identity, &data, &size, why, sizeof why);
    s_persist_write ("identity", rc, data, size, why);
    identity = (shoal_persist_identity_t){ shoal_sample_id (0xff), UINT64_MAX, UINT64_MAX };
    rc = shoal_persist_identity_encode (&identity, &data, &size, why, sizeof why);
    s_persist_write ("identity-largest", rc, data, size, why);

    shoal_id_t voters[] = { shoal_sample_id (0x01), shoal_sample_id (0x02),
                            shoal_sample_id (0x03) };
    shoal_elector_saved_t elector = { 1000, voters[1], 2, 3, voters };
    rc = shoal_persist_elector_encode (&elector, &data, &size, why, sizeof why);
    //  The same with the last two voters swapped: out of order.
    uint8_t swapped[256];
    if (rc == 0 && size <= sizeof swapped) {
        memcpy (swapped, data, size);
        memcpy (swapped + size - 18, data + size - 36, 18);
        memcpy (swapped + size - 36, data + size - 18, 18);
        s_write ("fuzz_persist", "elector-unsorted", swapped, size);
    }
    s_persist_write ("elector", rc, data, size, why);
    elector = (shoal_elector_saved_t){ 0 };
    rc = shoal_persist_elector_encode (&elector, &data, &size, why, sizeof why);
    s_persist_write ("elector-empty", rc, data, size, why);

    shoal_msg_t sample;
    shoal_sample_msg (SHOAL_MSG_SYNC_REPLY, &sample);
    shoal_jobspec_t specs[SHOAL_JOBS_MAX];
    size_t count = sample.u.sync_reply.job_count;
    memcpy (specs, sample.u.sync_reply.jobs, count * sizeof *specs);
    qsort (specs, count, sizeof *specs, s_spec_order);
    shoal_jobs_saved_t jobs = { 5, 300, count, specs };
    rc = shoal_persist_jobs_encode (&jobs, &data, &size, why, sizeof why);
    if (rc == 0)
        s_write ("fuzz_persist", "jobs-truncated", data, size / 2);
    s_persist_write ("jobs", rc, data, size, why);
    jobs = (shoal_jobs_saved_t){ 0 };
    rc = shoal_persist_jobs_encode (&jobs, &data, &size, why, sizeof why);
    s_persist_write ("jobs-empty", rc, data, size, why);

    //  One spec with every field at its limit.
    static char keys[SHOAL_LABELS_MAX][SHOAL_LABEL_MAX + 1];
    static char value[SHOAL_LABEL_MAX + 1];
    static char name[SHOAL_NAME_MAX + 1];
    static char command[SHOAL_COMMAND_MAX + 1];
    shoal_label_t labels[SHOAL_LABELS_MAX];
    memset (value, 'v', SHOAL_LABEL_MAX);
    memset (name, 'n', SHOAL_NAME_MAX);
    memset (command, 'c', SHOAL_COMMAND_MAX);
    for (int i = 0; i < SHOAL_LABELS_MAX; i++) {
        memset (keys[i], 'k', SHOAL_LABEL_MAX);
        keys[i][0] = (char) ('a' + i);
        labels[i] = (shoal_label_t){ keys[i], value };
    }
    specs[0] = (shoal_jobspec_t){
        name, SHOAL_PARALLELISM_MAX, true, UINT32_MAX, SHOAL_LABELS_MAX, labels, command, true
    };
    jobs = (shoal_jobs_saved_t){ UINT64_MAX, UINT64_MAX, 1, specs };
    rc = shoal_persist_jobs_encode (&jobs, &data, &size, why, sizeof why);
    s_persist_write ("jobs-largest-spec", rc, data, size, why);

    //  A payload of a later format.
    identity = (shoal_persist_identity_t){ shoal_sample_id (0x42), 3, 70000 };
    rc = shoal_persist_identity_encode (&identity, &data, &size, why, sizeof why);
    if (rc == 0)
        data[1] = SHOAL_PERSIST_VERSION + 1;
    s_persist_write ("version-2", rc, data, size, why);
}

static void
s_dictionary (void)
{
    static const char *tokens[] = {
        "nil=\"\\xc0\"",         "false=\"\\xc2\"",
        "true=\"\\xc3\"",        "uint8=\"\\xcc\"",
        "uint16=\"\\xcd\"",      "uint32=\"\\xce\"",
        "uint64=\"\\xcf\"",      "int8=\"\\xd0\"",
        "int64=\"\\xd3\"",       "str8=\"\\xd9\"",
        "str16=\"\\xda\"",       "str32=\"\\xdb\"",
        "array16=\"\\xdc\"",     "array32=\"\\xdd\"",
        "map16=\"\\xde\"",       "map32=\"\\xdf\"",
        "bin8=\"\\xc4\"",        "id=\"\\xc4\\x10\"",
        "hash=\"\\xc4\\x20\"",   "epoch=\"\\x92\"",
        "empty_str=\"\\xa0\"",   "empty_map=\"\\x80\"",
        "empty_array=\"\\x90\"", "u32_max=\"\\xce\\xff\\xff\\xff\\xff\"",
        "utf8_2=\"\\xc3\\xa9\"", "utf8_4=\"\\xf0\\x9f\\x90\\x9f\"",
    };
    char path[1024];
    snprintf (path, sizeof path, "%s/wire.dict", s_root);
    FILE *file = fopen (path, "w");
    if (!file) {
        fprintf (stderr, "make_corpus: cannot write %s\n", path);
        s_failures++;
        return;
    }
    fprintf (file, "# Written by tests/fuzz/make_corpus.c; regenerate, do not edit.\n");
    for (size_t i = 0; i < sizeof tokens / sizeof tokens[0]; i++)
        fprintf (file, "%s\n", tokens[i]);
    //  A message starts with its array header, the version and its type.
    static uint8_t buffer[SHOAL_FRAME_MAX];
    for (size_t i = 0; i < shoal_msg_type_count; i++) {
        int type = shoal_msg_types[i];
        s_sample (type, buffer, sizeof buffer);
        fprintf (file, "head_%02x=\"\\x%02x\\x%02x\\x%02x\"\n", type, buffer[0], buffer[1],
                 buffer[2]);
    }
    if (fclose (file) != 0)
        s_failures++;
}

//  fuzz_srv: the answer to an SRV query with two targets, one of them
//  named by a pointer into the question (compression), and near misses:
//  cut short, a record longer than the answer, an error code.
static void
s_srv_seeds (void)
{
    const uint8_t *answer = shoal_sample_srv_answer;
    s_write ("fuzz_srv", "two-targets", answer, SHOAL_SAMPLE_SRV_SIZE);
    s_write ("fuzz_srv", "cut-short", answer, SHOAL_SAMPLE_SRV_SIZE - 7);
    uint8_t patched[SHOAL_SAMPLE_SRV_SIZE];
    memcpy (patched, answer, sizeof patched);
    patched[3] = 0x83; //  NXDOMAIN
    s_write ("fuzz_srv", "name-error", patched, sizeof patched);
    memcpy (patched, answer, sizeof patched);
    patched[SHOAL_SAMPLE_SRV_LENGTH_AT] = 0xff; //  the first record claims 255 bytes
    s_write ("fuzz_srv", "record-too-long", patched, sizeof patched);
}

//  ---------------------------------------------------------------------
//  fuzz_keyfile: a kept keyring of one key, and a full one whose primary
//  is not the first.

static void
s_keyfile_seeds (void)
{
    shoal_keyring_t *keyring = shoal_keyring_new ();
    uint8_t key[SHOAL_KEY_SIZE], payload[SHOAL_KEYFILE_MAX];
    for (int i = 0; keyring && i < SHOAL_KEYRING_MAX; i++) {
        memset (key, 0x31 + i, sizeof key);
        shoal_keyring_install (keyring, key);
        if (i == 0 || i == SHOAL_KEYRING_MAX - 1) {
            long size = shoal_keyfile_encode (keyring, payload);
            s_write ("fuzz_keyfile", i == 0 ? "one-key" : "full", payload, (size_t) size);
        }
        if (i == 2)
            shoal_keyring_use (keyring, shoal_key_id (key));
    }
    if (!keyring)
        s_failures++;
    shoal_keyring_destroy (&keyring);
}

int
main (int argc, char *argv[])
{
    if (argc != 2) {
        fprintf (stderr, "usage: make_corpus DIR (tests/fuzz/corpus)\n");
        return EXIT_FAILURE;
    }
    s_root = argv[1];
    if (mkdir (s_root, 0755) != 0 && errno != EEXIST) {
        fprintf (stderr, "make_corpus: cannot create %s: %s\n", s_root, strerror (errno));
        return EXIT_FAILURE;
    }
    s_decode_seeds ();
    s_dense_seeds ();
    s_open_seeds ();
    s_key_seeds ();
    s_srv_seeds ();
    s_keyfile_seeds ();
    s_reader_seeds ();
    s_membership_seeds ();
    s_elector_seeds ();
    s_jobs_seeds ();
    s_persist_seeds ();
    s_dictionary ();
    return s_failures ? EXIT_FAILURE : EXIT_SUCCESS;
}

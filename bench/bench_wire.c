/*  bench/bench_wire.c: what each message costs on the wire and in the CPU.

    For every message type this takes the project's shared sample of what a
    running cluster sends (tests/samples.c: a ping with piggybacked updates,
    an assignment snapshot, a control reply listing members, jobs and tasks)
    and prints its encoded and sealed size and how fast it encodes and
    decodes; then how fast envelopes are sealed and opened. The output is one JSON object on stdout,
   meant to be compared side by side between builds and machines, never asserted on.

    Each measurement is calibrated to take about 0.2 s of CLOCK_MONOTONIC
    (with --quick about 0.01 s: ctest runs it so, as a smoke test). Every encode, decode and
    open is checked: a benchmark of failures measures nothing, so a failure
    ends the program with status 1 and a message on stderr.

    usage: bench_wire [--quick]
*/

#include "shoal.h"

#include "wire/envelope.h"
#include "wire/keyring.h"
#include "tests/samples.h"
#include "wire/wire.h"

#include <jansson.h>
#include <msgpack.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TARGET_SECONDS 0.2
#define QUICK_FACTOR   20

//  ---------------------------------------------------------------------
//  Failing loudly

static _Noreturn void
s_die (const char *format, ...)
{
    va_list args;
    va_start (args, format);
    fprintf (stderr, "bench_wire: ");
    vfprintf (stderr, format, args);
    fprintf (stderr, "\n");
    va_end (args);
    exit (EXIT_FAILURE);
}

//  ---------------------------------------------------------------------
//  Sample messages
//
//  Every message is the shared sample of its type (tests/samples.c), the one
//  the unit tests and the fuzz corpus start from.

//  Fills msg with the sample of type and returns what it holds. The message
//  lives in samples.c's static storage until the next call for this type.
static const char *
s_sample (uint8_t type, shoal_msg_t *msg)
{
    if (shoal_sample_msg (type, msg))
        s_die ("no sample for message type 0x%02x", type);
    return shoal_sample_describe (type);
}

//  Keys, nonce prefixes and envelope payloads: what they hold does not
//  change the cipher's speed, so a fixed pattern serves them all.
static void
s_fill (uint8_t *bytes, size_t size)
{
    for (size_t i = 0; i < size; i++)
        bytes[i] = (uint8_t) (i * 131 + 7);
}

//  ---------------------------------------------------------------------
//  Timing

static double
s_now (void)
{
    struct timespec now;
    clock_gettime (CLOCK_MONOTONIC, &now);
    return (double) now.tv_sec + (double) now.tv_nsec * 1e-9;
}

//  Runs count iterations of one operation and says how many seconds the
//  part worth measuring took. Returns 0, or -1 after saying on stderr what
//  failed.
typedef int (s_batch_fn) (void *context, uint64_t count, double *seconds);

typedef struct {
    uint64_t iterations;
    double seconds;
} s_timing_t;

//  Calibrates by doubling the count until a run takes an eighth of the
//  target (this also warms the caches), then measures one run scaled to
//  take the target.
static s_timing_t
s_measure (s_batch_fn *batch, void *context, double target)
{
    uint64_t count = 1;
    double seconds = 0;
    for (;;) {
        if (batch (context, count, &seconds))
            exit (EXIT_FAILURE);
        if (seconds >= target / 8 || count >= (UINT64_C (1) << 40))
            break;
        count *= 2;
    }
    s_timing_t timing = { 0, 0 };
    double scaled = seconds > 0 ? (double) count * target / seconds : (double) count;
    timing.iterations = scaled < 1 ? 1 : (uint64_t) scaled;
    if (batch (context, timing.iterations, &timing.seconds))
        exit (EXIT_FAILURE);
    return timing;
}

//  {"iterations", "seconds", "per_second", "mb_per_second", "ns_per_op"},
//  for operations on bytes bytes each (MB = 10^6 bytes).
static json_t *
s_timing_json (s_timing_t timing, size_t bytes)
{
    double per_second = (double) timing.iterations / timing.seconds;
    double mb_per_second = per_second * (double) bytes / 1e6;
    double ns_per_op = timing.seconds * 1e9 / (double) timing.iterations;
    return json_pack ("{s:I, s:f, s:I, s:f, s:f}", "iterations", (json_int_t) timing.iterations,
                      "seconds", timing.seconds, "per_second", (json_int_t) (per_second + 0.5),
                      "mb_per_second", (double) (long long) (mb_per_second * 10 + 0.5) / 10,
                      "ns_per_op", (double) (long long) (ns_per_op * 10 + 0.5) / 10);
}

//  ---------------------------------------------------------------------
//  Encoding and decoding

typedef struct {
    const shoal_msg_t *msg;
    const uint8_t *bytes; //  the message encoded once, to decode
    size_t size;
    uint8_t *out; //  where encodes write, shoal_msg_size_max (type) bytes
    shoal_arena_t *arena;
    shoal_purpose_t carrier;
} s_codec_t;

static int
s_encode_batch (void *context, uint64_t count, double *seconds)
{
    s_codec_t *self = context;
    size_t capacity = shoal_msg_size_max (self->msg->type);
    shoal_wire_error_t err;
    double start = s_now ();
    for (uint64_t i = 0; i < count; i++) {
        long size = shoal_msg_encode (self->msg, self->out, capacity, &err);
        if (size != (long) self->size) {
            fprintf (stderr, "bench_wire: encode: %s\n", size < 0 ? err.text : "size changed");
            return -1;
        }
    }
    *seconds = s_now () - start;
    return 0;
}

static int
s_decode_batch (void *context, uint64_t count, double *seconds)
{
    s_codec_t *self = context;
    shoal_msg_t decoded;
    shoal_wire_error_t err;
    double start = s_now ();
    for (uint64_t i = 0; i < count; i++) {
        shoal_arena_reset (self->arena);
        if (shoal_msg_decode (self->bytes, self->size, self->carrier, &decoded, self->arena,
                              &err)) {
            fprintf (stderr, "bench_wire: decode: %s\n", err.text);
            return -1;
        }
    }
    *seconds = s_now () - start;
    return 0;
}

//  Encodes the sample, checks that it decodes back to the same bytes, and
//  measures both directions.
static json_t *
s_bench_message (uint8_t type, double target)
{
    const char *name = shoal_msg_type_name (type);
    shoal_msg_t msg;
    const char *sample = s_sample (type, &msg);

    size_t capacity = shoal_msg_size_max (type);
    uint8_t *bytes = malloc (capacity);
    uint8_t *out = malloc (capacity);
    shoal_wire_error_t err;
    long size = bytes && out ? shoal_msg_encode (&msg, bytes, capacity, &err) : -1;
    if (size < 0)
        s_die ("%s: the sample does not encode: %s", name, bytes && out ? err.text : "no memory");

    shoal_arena_t arena;
    if (shoal_arena_init (&arena, SHOAL_DECODE_ARENA (size)))
        s_die ("no memory for the decode arena");
    shoal_msg_t decoded;
    shoal_purpose_t carrier = shoal_msg_purpose (type);
    if (shoal_msg_decode (bytes, (size_t) size, carrier, &decoded, &arena, &err))
        s_die ("%s: the sample does not decode: %s", name, err.text);
    size_t arena_used = arena.used;
    if (shoal_msg_encode (&decoded, out, capacity, &err) != size ||
        memcmp (bytes, out, (size_t) size))
        s_die ("%s: the decoded sample does not encode to the same bytes", name);

    const char *carrier_name = shoal_purpose_name (carrier);
    s_codec_t codec = { &msg, bytes, (size_t) size, out, &arena, carrier };
    json_t *result = json_pack ("{s:i, s:s, s:s, s:I, s:I, s:I, s:I}", "code", type, "carrier",
                                carrier_name, "sample", sample, "encoded_bytes", (json_int_t) size,
                                "sealed_bytes", (json_int_t) size + SHOAL_ENVELOPE_OVERHEAD,
                                "carrier_max_bytes", (json_int_t) shoal_envelope_size_max (carrier),
                                "decoded_arena_bytes", (json_int_t) arena_used);
    json_object_set_new (result, "encode",
                         s_timing_json (s_measure (s_encode_batch, &codec, target), codec.size));
    json_object_set_new (result, "decode",
                         s_timing_json (s_measure (s_decode_batch, &codec, target), codec.size));
    shoal_arena_release (&arena);
    free (bytes);
    free (out);
    return result;
}

//  ---------------------------------------------------------------------
//  Sealing and opening

typedef struct {
    shoal_sealer_t *sealer;
    shoal_opener_t *opener;
    shoal_purpose_t purpose;
    uint8_t *payload;
    size_t size;
    uint8_t *envelopes; //  a batch of sealed envelopes waiting to be opened
    size_t batch;       //  how many envelopes it holds
    uint8_t *out;       //  where seals and opens write
    shoal_life_t recipient;
} s_envelope_bench_t;

#define ENVELOPE_BATCH_BYTES (4u * 1024 * 1024)

static int
s_seal (s_envelope_bench_t *self, uint8_t *out)
{
    long size = shoal_sealer_seal (self->sealer, self->purpose, &self->recipient, self->payload,
                                   self->size, out, self->size + SHOAL_ENVELOPE_OVERHEAD);
    if (size != (long) (self->size + SHOAL_ENVELOPE_OVERHEAD)) {
        fprintf (stderr, "bench_wire: seal of %zu bytes failed\n", self->size);
        return -1;
    }
    return 0;
}

static int
s_seal_batch (void *context, uint64_t count, double *seconds)
{
    s_envelope_bench_t *self = context;
    double start = s_now ();
    for (uint64_t i = 0; i < count; i++)
        if (s_seal (self, self->out))
            return -1;
    *seconds = s_now () - start;
    return 0;
}

//  The replay window refuses an envelope opened twice, so every open needs
//  a freshly sealed one: envelopes are sealed a batch at a time, untimed,
//  then opened, timed. One sealer's numbers only grow, so one opener
//  accepts them all.
static int
s_open_batch (void *context, uint64_t count, double *seconds)
{
    s_envelope_bench_t *self = context;
    size_t sealed = self->size + SHOAL_ENVELOPE_OVERHEAD;
    *seconds = 0;
    while (count > 0) {
        size_t batch = count < self->batch ? (size_t) count : self->batch;
        for (size_t i = 0; i < batch; i++)
            if (s_seal (self, self->envelopes + i * sealed))
                return -1;
        double start = s_now ();
        for (size_t i = 0; i < batch; i++) {
            size_t payload_size = 0;
            shoal_open_result_t result =
                shoal_opener_open (self->opener, self->purpose, self->envelopes + i * sealed,
                                   sealed, self->out, sealed, &payload_size, NULL);
            if (result != SHOAL_OPEN_OK || payload_size != self->size) {
                fprintf (stderr, "bench_wire: open failed: %s\n", shoal_open_result_name (result));
                return -1;
            }
        }
        *seconds += s_now () - start;
        count -= batch;
    }
    return 0;
}

//  One sender on one carrier: the opener needs a single replay window.
static json_t *
s_bench_envelope (const shoal_keyring_t *keyring, const char *carrier, shoal_purpose_t purpose,
                  size_t size, double target)
{
    uint8_t nonce_prefix[SHOAL_ENVELOPE_NONCE];
    s_fill (nonce_prefix, sizeof nonce_prefix);
    shoal_life_t sender = { .life = 1 }, recipient = { .life = 1 };
    memcpy (sender.id, shoal_sample_id (0x10).bytes, sizeof sender.id);
    memcpy (recipient.id, shoal_sample_id (0x11).bytes, sizeof recipient.id);
    size_t sealed = size + SHOAL_ENVELOPE_OVERHEAD;
    s_envelope_bench_t self = {
        .sealer = shoal_sealer_new (keyring, &sender, nonce_prefix),
        .opener = shoal_opener_new (keyring, &recipient, 1),
        .recipient = recipient,
        .purpose = purpose,
        .payload = malloc (size),
        .size = size,
        .batch = ENVELOPE_BATCH_BYTES / sealed,
        .envelopes = malloc (ENVELOPE_BATCH_BYTES),
        .out = malloc (sealed),
    };
    if (!self.sealer || !self.opener || !self.payload || !self.envelopes || !self.out)
        s_die ("no memory for the envelope benchmark");
    s_fill (self.payload, size);

    //  One round trip first: the payload must come out as it went in.
    size_t payload_size = 0;
    if (s_seal (&self, self.envelopes) ||
        shoal_opener_open (self.opener, purpose, self.envelopes, sealed, self.out, sealed,
                           &payload_size, NULL) != SHOAL_OPEN_OK ||
        payload_size != size || memcmp (self.out, self.payload, size))
        s_die ("%s: an envelope does not open to its payload", carrier);

    json_t *result = json_pack ("{s:s, s:I, s:I}", "carrier", carrier, "payload_bytes",
                                (json_int_t) size, "sealed_bytes", (json_int_t) sealed);
    json_object_set_new (result, "seal",
                         s_timing_json (s_measure (s_seal_batch, &self, target), size));
    json_object_set_new (result, "open",
                         s_timing_json (s_measure (s_open_batch, &self, target), size));
    shoal_sealer_destroy (&self.sealer);
    shoal_opener_destroy (&self.opener);
    free (self.payload);
    free (self.envelopes);
    free (self.out);
    return result;
}

//  ---------------------------------------------------------------------
//  The machine, so that results from two machines are not compared blindly

static json_t *
s_cpu_model (void)
{
    FILE *cpuinfo = fopen ("/proc/cpuinfo", "r");
    if (!cpuinfo)
        return json_null ();
    char line[256];
    json_t *model = NULL;
    while (!model && fgets (line, sizeof line, cpuinfo)) {
        char *colon = strchr (line, ':');
        if (strncmp (line, "model name", 10) == 0 && colon) {
            colon[1 + strcspn (colon + 1, "\n")] = '\0';
            model = json_string (colon + 1 + strspn (colon + 1, " \t"));
        }
    }
    fclose (cpuinfo);
    return model ? model : json_null ();
}

static json_t *
s_machine (void)
{
#if defined(__SANITIZE_ADDRESS__)
    bool sanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    bool sanitized = true;
#else
    bool sanitized = false;
#endif
#else
    bool sanitized = false;
#endif
#ifdef __OPTIMIZE__
    bool optimized = true;
#else
    bool optimized = false;
#endif
#ifdef NDEBUG
    bool asserts = false;
#else
    bool asserts = true;
#endif
    //  CMake does not tell a program its build type, so bench/CMakeLists.txt
    //  passes it as SHOAL_BUILD_TYPE; a build without one (another build
    //  system, a multi-config generator) reports null and the flags that
    //  matter most.
#ifdef SHOAL_BUILD_TYPE
    json_t *build_type = SHOAL_BUILD_TYPE[0] ? json_string (SHOAL_BUILD_TYPE) : json_null ();
#else
    json_t *build_type = json_null ();
#endif
    return json_pack ("{s:I, s:o, s:s, s:o, s:b, s:b, s:b, s:s, s:s, s:s}", "cpus",
                      (json_int_t) sysconf (_SC_NPROCESSORS_ONLN), "cpu_model", s_cpu_model (),
                      "compiler", __VERSION__, "build_type", build_type, "optimized", optimized,
                      "asserts", asserts, "sanitized", sanitized, "shoal", shoal_version (),
                      "msgpack", msgpack_version (), "libsodium", sodium_version_string ());
}

//  ---------------------------------------------------------------------

int
main (int argc, char *argv[])
{
    bool quick = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp (argv[i], "--quick") == 0)
            quick = true;
        else {
            fprintf (stderr, "usage: bench_wire [--quick]\n");
            return 2;
        }
    }
    double target = quick ? TARGET_SECONDS / QUICK_FACTOR : TARGET_SECONDS;

    json_t *root = json_pack ("{s:s, s:o, s:{s:b, s:f, s:s}}", "benchmark", "wire", "machine",
                              s_machine (), "measurement", "quick", quick, "target_seconds", target,
                              "clock", "CLOCK_MONOTONIC");
    json_t *messages = json_object ();
    for (size_t i = 0; i < shoal_msg_type_count; i++)
        json_object_set_new (messages, shoal_msg_type_name (shoal_msg_types[i]),
                             s_bench_message (shoal_msg_types[i], target));
    json_object_set_new (root, "messages", messages);

    shoal_keyring_t *keyring = shoal_keyring_new ();
    uint8_t key[SHOAL_KEY_SIZE];
    s_fill (key, sizeof key);
    if (!keyring || shoal_keyring_install (keyring, key))
        s_die ("cannot set up a keyring");
    json_t *envelopes = json_array ();
    json_array_append_new (
        envelopes, s_bench_envelope (keyring, "datagram", SHOAL_PURPOSE_DATAGRAM, 1000, target));
    json_array_append_new (
        envelopes, s_bench_envelope (keyring, "frame", SHOAL_PURPOSE_FRAME, 64 * 1024, target));
    json_object_set_new (root, "envelopes", envelopes);

    int rc = json_dumpf (root, stdout, JSON_INDENT (2) | JSON_REAL_PRECISION (10)) == 0
                 ? EXIT_SUCCESS
                 : EXIT_FAILURE;
    printf ("\n");
    json_decref (root);
    shoal_keyring_destroy (&keyring);
    return rc;
}

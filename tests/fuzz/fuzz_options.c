/*  tests/fuzz/fuzz_options.c: reading a config file.

    The input is a whole config file, as a person or a broken tool may have
    written it, applied to options that already hold a value of every kind
    (a list among them), as a file would be after the defaults. A refusal
    must come with a reason naming the file, and leave every option as it
    was. Whatever happened, every option must read back as text that set
    takes, giving the same text again: so what `shoal config` prints can
    always be given back.
*/

#include "tests/fuzz/fuzz.h"

#include "node/options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEXT_SIZE (SHOAL_OPTIONS_VALUE_MAX + 1)

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
    (void) argc;
    (void) argv;
    return 0;
}

static void
s_set (shoal_options_t *options, const char *key, const char *value)
{
    char why[256];
    FUZZ_REQUIRE (shoal_options_set (options, key, value, why, sizeof why) == 0,
                  "%s = '%s' is refused: %s", key, value, why);
}

//  Every option's value, each in TEXT_SIZE bytes, in the table's order.
static char *
s_snapshot (const shoal_options_t *options)
{
    size_t count = shoal_options_count ();
    char *all = malloc (count * TEXT_SIZE);
    FUZZ_REQUIRE (all, "no memory for a snapshot");
    for (size_t i = 0; i < count; i++) {
        const char *key = shoal_options_info (i)->key;
        char *text = all + i * TEXT_SIZE;
        memset (text, 'X', TEXT_SIZE);
        FUZZ_REQUIRE (shoal_options_get (options, key, text, TEXT_SIZE) == 0,
                      "%s does not read back", key);
        FUZZ_REQUIRE (memchr (text, '\0', TEXT_SIZE), "%s reads back unterminated", key);
    }
    return all;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    shoal_options_t *options = shoal_options_new ();
    FUZZ_REQUIRE (options, "no memory for options");
    s_set (options, "labels", "zone=eu,rack=r1");
    s_set (options, "capacity", "3");
    s_set (options, "grace", "90s");
    char *before = s_snapshot (options);

    char why[256];
    memset (why, 'X', sizeof why);
    int rc =
        shoal_options_load_text (options, "fuzz.conf", (const char *) data, size, why, sizeof why);
    FUZZ_REQUIRE (rc == 0 || rc == -1, "load returned %d", rc);
    char *after = s_snapshot (options);
    size_t count = shoal_options_count ();
    if (rc != 0) {
        FUZZ_REQUIRE (memchr (why, '\0', sizeof why) && strncmp (why, "fuzz.conf", 9) == 0,
                      "a refusal without a reason that names the file");
        for (size_t i = 0; i < count; i++)
            FUZZ_REQUIRE (strcmp (before + i * TEXT_SIZE, after + i * TEXT_SIZE) == 0,
                          "a refused file (%s) changed %s from '%s' to '%s'", why,
                          shoal_options_info (i)->key, before + i * TEXT_SIZE,
                          after + i * TEXT_SIZE);
    }

    //  Every value read back sets fresh options to the same value.
    shoal_options_t *fresh = shoal_options_new ();
    FUZZ_REQUIRE (fresh, "no memory for options");
    for (size_t i = 0; i < count; i++)
        s_set (fresh, shoal_options_info (i)->key, after + i * TEXT_SIZE);
    char *again = s_snapshot (fresh);
    for (size_t i = 0; i < count; i++)
        FUZZ_REQUIRE (strcmp (after + i * TEXT_SIZE, again + i * TEXT_SIZE) == 0,
                      "%s reads back '%s', which sets it to '%s'", shoal_options_info (i)->key,
                      after + i * TEXT_SIZE, again + i * TEXT_SIZE);

    //  And the typed fields agree with the text where a slip would hurt.
    FUZZ_REQUIRE (options->capacity >= 1 && options->capacity <= 1000000, "capacity %u",
                  (unsigned) options->capacity);
    FUZZ_REQUIRE (options->labels.count <= SHOAL_OPTIONS_LABELS_MAX, "%zu labels",
                  options->labels.count);
    FUZZ_REQUIRE (options->grace_ms <= SHOAL_OPTIONS_DURATION_MAX, "grace %llu ms",
                  (unsigned long long) options->grace_ms);
    FUZZ_REQUIRE (options->data_dir[0] != '\0', "an empty data-dir");

    free (again);
    free (after);
    free (before);
    shoal_options_destroy (&fresh);
    shoal_options_destroy (&options);
    return 0;
}

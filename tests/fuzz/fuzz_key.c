/*  tests/fuzz/fuzz_key.c: parsing a cluster key's text form.

    The input is a key file's content, taken up to its first NUL. A text that
    parses must be the one base64 form of its key, give or take surrounding
    whitespace: formatting the key gives that form back, and it parses to the
    same key. A text that does not parse leaves the key zeroed.
*/

#include "tests/fuzz/fuzz.h"

#include "shoal.h"

#include <ctype.h>
#include <stdlib.h>
#include <sodium.h>
#include <string.h>

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    char *text = malloc (size + 1);
    FUZZ_REQUIRE (text, "no memory for %zu bytes", size + 1);
    memcpy (text, data, size);
    text[size] = '\0';

    uint8_t key[SHOAL_KEY_BYTES];
    memset (key, 0xa5, sizeof key);
    if (shoal_key_parse (text, key) != 0) {
        FUZZ_REQUIRE (sodium_is_zero (key, sizeof key), "a refused key text leaves bytes behind");
        free (text);
        return 0;
    }
    char formatted[SHOAL_KEY_TEXT_BYTES];
    memset (formatted, 'X', sizeof formatted);
    FUZZ_REQUIRE (shoal_key_format (key, formatted) == 0, "a parsed key does not format");
    FUZZ_REQUIRE (memchr (formatted, '\0', sizeof formatted) &&
                      strlen (formatted) == SHOAL_KEY_TEXT_BYTES - 1,
                  "a key's text form is not %d characters", SHOAL_KEY_TEXT_BYTES - 1);

    uint8_t again[SHOAL_KEY_BYTES];
    FUZZ_REQUIRE (shoal_key_parse (formatted, again) == 0, "\"%s\" does not parse back", formatted);
    FUZZ_REQUIRE (memcmp (key, again, sizeof key) == 0, "\"%s\" parses to another key", formatted);

    //  Only whitespace may surround the form that was accepted.
    const char *start = text;
    while (isspace ((unsigned char) *start))
        start++;
    const char *rest = start + strnlen (start, strlen (formatted));
    FUZZ_REQUIRE (strncmp (start, formatted, strlen (formatted)) == 0,
                  "\"%s\" was accepted as the key whose text is \"%s\"", text, formatted);
    while (isspace ((unsigned char) *rest))
        rest++;
    FUZZ_REQUIRE (*rest == '\0', "\"%s\" was accepted with \"%s\" after the key", text, rest);

    free (text);
    return 0;
}

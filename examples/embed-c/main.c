/*  examples/embed-c/main.c: the smallest program that embeds libshoal.

    It prints the library's version and a new cluster key. Build it against an
    installed shoal with CMake (find_package (shoal), see CMakeLists.txt here)
    or with pkg-config:

        cc main.c $(pkg-config --cflags --libs shoal) -o embed
*/

#include <shoal.h>

#include <stdio.h>

int
main (void)
{
    uint8_t key[SHOAL_KEY_BYTES];
    char text[SHOAL_KEY_TEXT_BYTES];
    if (shoal_key_generate (key) != 0 || shoal_key_format (key, text) != 0) {
        fprintf (stderr, "embed: cannot make a key\n");
        return 1;
    }
    uint8_t parsed[SHOAL_KEY_BYTES];
    if (shoal_key_parse (text, parsed) != 0) {
        fprintf (stderr, "embed: the key does not parse back\n");
        return 1;
    }
    printf ("libshoal %s\nkey %s\n", shoal_version (), text);
    return 0;
}

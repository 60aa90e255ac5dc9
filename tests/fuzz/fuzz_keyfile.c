/*  tests/fuzz/fuzz_keyfile.c: the keyring a node keeps in its data
    directory (node/keyfile.h).

    The input is a payload as the store hands it back. One that decodes
    holds 1 to SHOAL_KEYRING_MAX distinct keys and a primary among them,
    and encodes back to the very bytes read; one that does not says why.
*/

#include "tests/fuzz/fuzz.h"

#include "node/keyfile.h"

#include <string.h>

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    shoal_keyring_t *keyring = shoal_keyring_new ();
    FUZZ_REQUIRE (keyring, "no memory for a keyring");
    char why[200] = "";
    if (shoal_keyfile_decode (data, size, keyring, why, sizeof why) != 0) {
        FUZZ_REQUIRE (why[0], "a refused payload of %zu bytes gives no reason", size);
        shoal_keyring_destroy (&keyring);
        return 0;
    }
    size_t count = shoal_keyring_size (keyring);
    FUZZ_REQUIRE (count >= 1 && count <= SHOAL_KEYRING_MAX, "a keyring of %zu keys", count);
    FUZZ_REQUIRE (shoal_keyring_key (keyring, shoal_keyring_primary (keyring)),
                  "the primary is not installed");
    uint8_t again[SHOAL_KEYFILE_MAX];
    long encoded = shoal_keyfile_encode (keyring, again);
    FUZZ_REQUIRE (encoded == (long) size && memcmp (again, data, size) == 0,
                  "a payload of %zu bytes does not encode back to itself (%ld bytes)", size,
                  encoded);
    shoal_keyring_destroy (&keyring);
    return 0;
}

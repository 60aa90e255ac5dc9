/*  tests/fuzz/fuzz_srv.c: parsing the DNS answer to a seed's SRV query.

    The input is the answer as the resolver hands it over (node/resolver.h,
    shoal_srv_parse): bytes from the network. The parser must never read
    outside them, and what it accepts must hold what its header promises:
    at most max targets, each a name that ends within its buffer and is
    neither empty nor ".". A refusal comes with a reason.
*/

#include "tests/fuzz/fuzz.h"

#include "node/resolver.h"

#include <stdlib.h>
#include <string.h>

#define S_MAX 4

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    //  A copy of exactly size bytes, so that a read past them is caught.
    uint8_t *answer = malloc (size ? size : 1);
    FUZZ_REQUIRE (answer, "no memory for %zu bytes", size);
    memcpy (answer, data, size);
    shoal_srv_target_t targets[S_MAX];
    memset (targets, 0xa5, sizeof targets);
    char why[120] = "";
    int found = shoal_srv_parse (answer, size, targets, S_MAX, why, sizeof why);
    FUZZ_REQUIRE (found >= -1 && found <= S_MAX, "%d targets, at most %d", found, S_MAX);
    if (found < 0)
        FUZZ_REQUIRE (why[0] != '\0', "a refused answer with no reason");
    for (int i = 0; i < found; i++) {
        const char *target = targets[i].target;
        FUZZ_REQUIRE (memchr (target, '\0', sizeof targets[i].target), "target %d has no end", i);
        FUZZ_REQUIRE (target[0] != '\0' && strcmp (target, ".") != 0, "target %d is empty", i);
    }
    free (answer);
    return 0;
}

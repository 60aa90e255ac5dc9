/*  tests/fuzz/fuzz_assign.c: `shoal assign` on any input.

    The input is the JSON text `shoal assign` reads. Whatever it is, parsing
    either refuses it with a non-empty reason or gives an input that the
    assignor turns into an assignment (or refuses with a reason), and that
    assignment renders as JSON. Inputs are capped at 16 KiB, a cluster of a
    few hundred tasks, so that each run stays fast.
*/

#include "tests/fuzz/fuzz.h"

#include "rebalance/assign_json.h"
#include "rebalance/assignor.h"

#include <stdlib.h>
#include <string.h>

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    if (size > 16384)
        return 0;
    char why[256] = "";
    shoal_assign_json_t *parsed = NULL;
    if (shoal_assign_json_parse ((const char *) data, size, &parsed, why, sizeof why) != 0) {
        FUZZ_REQUIRE (parsed == NULL, "a refused input leaves a result");
        FUZZ_REQUIRE (why[0] != '\0', "a refused input gives no reason");
        return 0;
    }
    const shoal_assign_input_t *input = shoal_assign_json_input (parsed);
    shoal_assign_output_t output;
    if (shoal_assign (input, &output, why, sizeof why) == 0) {
        char *text = shoal_assign_json_render (input, &output);
        FUZZ_REQUIRE (text && text[0] == '{', "an assignment does not render");
        free (text);
        shoal_assign_output_release (&output);
    } else
        FUZZ_REQUIRE (why[0] != '\0', "the assignor refuses without a reason");
    shoal_assign_json_destroy (&parsed);
    return 0;
}

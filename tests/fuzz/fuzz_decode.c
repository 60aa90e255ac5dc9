/*  tests/fuzz/fuzz_decode.c: the message decoder on arbitrary bytes.

    The input is one message as it would arrive, and it arrives on every
    carrier in turn: a node decodes a payload on the carrier it came by, and
    every message type belongs to exactly one carrier, so at most one of the
    three may accept it. Every other check lives in fuzz_decode_checked
    (fuzz.h), which fuzz_open applies to opened payloads too. Among them is
    the bound wire.h documents, SHOAL_DECODE_ARENA.
*/

#include "tests/fuzz/fuzz.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    shoal_purpose_t accepted = 0;
    for (shoal_purpose_t carrier = 1; carrier <= SHOAL_PURPOSE_COUNT; carrier++) {
        if (fuzz_decode_checked (data, size, carrier) != 0)
            continue;
        FUZZ_REQUIRE (accepted == 0, "one message accepted on the %s and on the %s carrier",
                      shoal_purpose_name (accepted), shoal_purpose_name (carrier));
        accepted = carrier;
    }
    return 0;
}

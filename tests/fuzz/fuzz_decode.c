/*  tests/fuzz/fuzz_decode.c: the message decoder on arbitrary bytes.

    The input is one message as it would arrive: every check lives in
    fuzz_decode_checked (fuzz.h), which fuzz_open applies to opened payloads
    too. Among them is the bound wire.h documents, SHOAL_DECODE_ARENA.
*/

#include "fuzz.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    fuzz_decode_checked (data, size);
    return 0;
}

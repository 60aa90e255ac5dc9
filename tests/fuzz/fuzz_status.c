/*  tests/fuzz/fuzz_status.c: the status lines a worker's child writes
    (worker/child.h, shoal_status_parse).

    The input's first byte seeds how the rest, the stream a child wrote, is
    cut into reads; the rest is read twice: whole, and in those pieces. Both
    must give the same lines, since a socket may cut a stream anywhere. Each
    call must take at least one byte and no more than it was given, say
    nothing only when it took them all, and never hold more than a line.
    What it says must be true of the line: "ready" is that word, a lag is
    the number after "lag ", a line too long is longer than the limit, and
    nothing else is refused but what says none of these.
*/

#include "tests/fuzz/fuzz.h"

#include "worker/child.h"

#include <stdbool.h>
#include <string.h>

//  More lines than any input of libFuzzer's default 4 kB holds.
#define RESULTS_MAX 8192

typedef struct {
    shoal_status_line_t status;
    size_t end; //  where in the stream the call that said it stopped
} s_result_t;

//  Reads the stream whole (seed 0), or in pieces of 1 to 64 bytes whose
//  sizes the seed draws, into results; returns how many lines were said.
static size_t
s_read (const char *stream, size_t size, uint32_t seed, s_result_t *results)
{
    shoal_status_parser_t parser;
    memset (&parser, 0, sizeof parser);
    size_t count = 0, at = 0;
    while (at < size) {
        size_t piece = size - at;
        if (seed) {
            seed = seed * 1103515245u + 12345u;
            piece = 1 + (seed >> 16) % 64;
            piece = piece < size - at ? piece : size - at;
        }
        size_t end = at + piece;
        while (at < end) {
            shoal_status_line_t status;
            size_t taken = shoal_status_parse (&parser, stream + at, end - at, &status);
            FUZZ_REQUIRE (taken >= 1 && taken <= end - at, "took %zu of %zu bytes", taken,
                          end - at);
            FUZZ_REQUIRE (parser.used <= sizeof parser.line, "holds %zu bytes", parser.used);
            at += taken;
            if (status.type == SHOAL_STATUS_NONE) {
                FUZZ_REQUIRE (at == end, "said nothing, but left %zu bytes", end - at);
                continue;
            }
            FUZZ_REQUIRE (status.type == SHOAL_STATUS_LAG || status.type == SHOAL_STATUS_BAD,
                          "a status of type %d", status.type);
            FUZZ_REQUIRE (count < RESULTS_MAX, "more than %d lines", RESULTS_MAX);
            results[count++] = (s_result_t){ status, at };
        }
    }
    return count;
}

//  True when the line is "lag " and a number of 64 bits, in *lag.
static bool
s_lag_line (const char *line, size_t length, uint64_t *lag)
{
    if (length < 5 || memcmp (line, "lag ", 4) != 0)
        return false;
    *lag = 0;
    for (size_t i = 4; i < length; i++) {
        if (line[i] < '0' || line[i] > '9')
            return false;
        uint64_t digit = (uint64_t) (line[i] - '0');
        if (*lag > (UINT64_MAX - digit) / 10)
            return false;
        *lag = *lag * 10 + digit;
    }
    return true;
}

//  What the line that ends at end (its newline, or its 256th byte for one
//  refused as too long) said must be true of it.
static void
s_check (const char *stream, const s_result_t *result)
{
    size_t end = result->end;
    bool newline = stream[end - 1] == '\n';
    size_t stop = newline ? end - 1 : end, start = stop;
    while (start > 0 && stream[start - 1] != '\n')
        start--;
    size_t length = stop - start;
    const char *line = stream + start;
    const shoal_status_line_t *status = &result->status;
    bool ready = length == 5 && memcmp (line, "ready", 5) == 0;
    uint64_t lag = 0;
    bool lag_line = s_lag_line (line, length, &lag);
    if (status->type == SHOAL_STATUS_LAG) {
        FUZZ_REQUIRE (newline && length < SHOAL_STATUS_LINE_MAX, "a line of %zu bytes read",
                      length);
        FUZZ_REQUIRE (status->ready ? ready : lag_line && lag == status->lag,
                      "\"%.*s\" read as %s %llu", (int) length, line,
                      status->ready ? "ready" : "lag", (unsigned long long) status->lag);
    } else {
        FUZZ_REQUIRE (status->reason && status->reason[0], "a refusal without a reason");
        if (newline)
            FUZZ_REQUIRE (length > 0 && length < SHOAL_STATUS_LINE_MAX && !ready && !lag_line,
                          "\"%.*s\" refused", (int) length, line);
        else
            FUZZ_REQUIRE (length == SHOAL_STATUS_LINE_MAX, "refused at byte %zu of a line", length);
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    static s_result_t whole[RESULTS_MAX], pieces[RESULTS_MAX];
    const char *stream = (const char *) data + 1;
    size_t length = size - 1;
    size_t count = s_read (stream, length, 0, whole);
    size_t again = s_read (stream, length, data[0] | 1u, pieces);
    FUZZ_REQUIRE (count == again, "%zu lines read whole, %zu in pieces", count, again);
    for (size_t i = 0; i < count; i++) {
        FUZZ_REQUIRE (whole[i].end == pieces[i].end &&
                          whole[i].status.type == pieces[i].status.type &&
                          whole[i].status.lag == pieces[i].status.lag &&
                          whole[i].status.ready == pieces[i].status.ready &&
                          whole[i].status.reason == pieces[i].status.reason,
                      "line %zu reads otherwise in pieces", i);
        s_check (stream, &whole[i]);
    }
    return 0;
}

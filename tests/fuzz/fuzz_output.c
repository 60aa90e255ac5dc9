/*  tests/fuzz/fuzz_output.c: the lines a worker's child writes on its
    standard output and error (worker/child.h, shoal_output_split).

    The input's first byte seeds how the rest, the stream a child wrote, is
    cut into reads; the rest is read twice: whole, and in those pieces. Both
    must give the same lines, since a pipe may cut a stream anywhere. Each
    call must take at least one byte and no more than it was given, say
    nothing only when it took them all, and never hold more than a line.
    Each line must be what the stream holds: the bytes between two
    newlines, without a carriage return at its end, never blank; a line
    longer than the limit is cut, said truncated, to a start of it no
    shorter than the limit less 3 bytes (a character is not split) and its
    rest is never a line; and only the end of the stream gives a line that
    is unfinished.
*/

#include "tests/fuzz/fuzz.h"

#include "worker/child.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

//  More lines than any input of 16 kB holds.
#define RESULTS_MAX 8192

typedef struct {
    size_t start; //  where the stream's line begins
    size_t length;
    bool truncated;
    bool unfinished;
    size_t end; //  where in the stream the call that said it stopped
} s_result_t;

static void
s_keep (const char *stream, const shoal_output_line_t *line, size_t end, s_result_t *results,
        size_t *count)
{
    FUZZ_REQUIRE (line->length > 0 && line->length <= SHOAL_OUTPUT_LINE_MAX, "a line of %zu bytes",
                  line->length);
    FUZZ_REQUIRE (line->text[line->length] == 0, "a line without its NUL");
    FUZZ_REQUIRE (*count < RESULTS_MAX, "more than %d lines", RESULTS_MAX);
    //  The stream's line is the one the last byte taken belongs to (the
    //  byte past the limit of a line cut, or its newline), or, at the end,
    //  the last one.
    size_t start = end;
    while (start > 0 && (start == end || stream[start - 1] != '\n'))
        start--;
    if (start < end && stream[start] == '\n')
        start++;
    FUZZ_REQUIRE (memcmp (stream + start, line->text, line->length) == 0,
                  "line %zu is not the stream's", *count);
    results[(*count)++] =
        (s_result_t){ start, line->length, line->truncated, line->unfinished, end };
}

//  Reads the stream whole (seed 0), or in pieces of 1 to 4096 bytes whose
//  sizes the seed draws, into results; returns how many lines were said.
static size_t
s_read (const char *stream, size_t size, uint32_t seed, s_result_t *results)
{
    static shoal_output_splitter_t splitter;
    memset (&splitter, 0, sizeof splitter);
    size_t count = 0, at = 0;
    while (at < size) {
        size_t piece = size - at;
        if (seed) {
            seed = seed * 1103515245u + 12345u;
            piece = 1 + (seed >> 16) % 4096;
            piece = piece < size - at ? piece : size - at;
        }
        size_t end = at + piece;
        while (at < end) {
            shoal_output_line_t line;
            size_t taken = shoal_output_split (&splitter, stream + at, end - at, &line);
            FUZZ_REQUIRE (taken >= 1 && taken <= end - at, "took %zu of %zu bytes", taken,
                          end - at);
            FUZZ_REQUIRE (splitter.used <= SHOAL_OUTPUT_LINE_MAX, "holds %zu bytes", splitter.used);
            at += taken;
            if (!line.text) {
                FUZZ_REQUIRE (at == end, "said nothing, but left %zu bytes", end - at);
                continue;
            }
            FUZZ_REQUIRE (!line.unfinished, "a line unfinished before the end");
            s_keep (stream, &line, at, results, &count);
        }
    }
    shoal_output_line_t line;
    shoal_output_end (&splitter, &line);
    if (line.text) {
        FUZZ_REQUIRE (line.unfinished && !line.truncated, "the last line is not said unfinished");
        s_keep (stream, &line, size, results, &count);
    }
    return count;
}

//  What the line said must be true of the stream's line it came from.
static void
s_check (const char *stream, size_t size, const s_result_t *result)
{
    size_t stop = result->start;
    while (stop < size && stream[stop] != '\n')
        stop++;
    size_t raw = stop - result->start, whole = raw;
    if (whole > 0 && stream[stop - 1] == '\r')
        whole--;
    //  A carriage return counts against the limit: only the one just
    //  before a newline is dropped, and it may come past the limit.
    if (result->truncated) {
        FUZZ_REQUIRE (raw > SHOAL_OUTPUT_LINE_MAX && result->length + 3 >= SHOAL_OUTPUT_LINE_MAX,
                      "a line of %zu bytes cut to %zu", raw, result->length);
        FUZZ_REQUIRE (!result->unfinished, "a line cut is said unfinished");
    } else {
        FUZZ_REQUIRE (result->length == whole, "a line of %zu bytes said as %zu", whole,
                      result->length);
        FUZZ_REQUIRE (result->unfinished == (stop == size), "unfinished is not the end");
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
        FUZZ_REQUIRE (memcmp (&whole[i], &pieces[i], sizeof whole[i]) == 0,
                      "line %zu reads otherwise in pieces", i);
        s_check (stream, length, &whole[i]);
    }
    return 0;
}

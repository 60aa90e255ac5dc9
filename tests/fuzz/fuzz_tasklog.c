/*  tests/fuzz/fuzz_tasklog.c: the task output files' names, records and
    tails (node/tasklog.h), on any bytes.

    The input is taken as a file name found in DATA-DIR/logs, as a task id,
    as a child's line and as a file's text. A name read back as a task must
    be exactly the name that task maps to (one task, one name); a task id
    that maps must map to a name with no '/', not starting with '.', that
    reads back as that id. A record of any line, in a buffer of any size
    the first byte draws, is one line ending in its only newline, UTF-8
    without NUL, within the buffer. The tail of any text starts at its
    start or after a newline, and holds at most the lines asked (its last
    line counted whether it ends or not); a text read from inside a file
    never keeps its first line, which lacks its start.
*/

#include "tests/fuzz/fuzz.h"

#include "node/tasklog.h"

#include <stdlib.h>
#include <string.h>

#define S_TEXT_MAX 4096

static void
s_names (const char *text)
{
    char task[SHOAL_TASK_MAX + 1], name[SHOAL_TASKLOG_NAME_TEXT], back[SHOAL_TASK_MAX + 1];
    if (shoal_tasklog_task (text, task, sizeof task) == 0) {
        FUZZ_REQUIRE (shoal_tasklog_name (task, name, sizeof name) == 0, "%s: read, not written",
                      text);
        FUZZ_REQUIRE (strcmp (name, text) == 0, "%s reads as a task that maps to %s", text, name);
    }
    if (shoal_tasklog_name (text, name, sizeof name) == 0) {
        FUZZ_REQUIRE (!strchr (name, '/') && name[0] != '.', "an unsafe name %s", name);
        FUZZ_REQUIRE (shoal_tasklog_task (name, back, sizeof back) == 0 && strcmp (back, text) == 0,
                      "%s does not read back", name);
    }
}

static void
s_record (const uint8_t *data, size_t size)
{
    static char out[S_TEXT_MAX + 256];
    size_t room = size ? 2 + data[0] * 17u : 2;
    const char *text = size ? (const char *) data + 1 : "";
    size_t length = size ? size - 1 : 0;
    size_t used = shoal_tasklog_record (out, room, "2026-12-02T21:30:00.123Z", "stdout",
                                        size && (data[0] & 1), text, length);
    FUZZ_REQUIRE (used >= 1 && used <= room, "a record of %zu bytes in %zu", used, room);
    FUZZ_REQUIRE (out[used - 1] == '\n' && memchr (out, '\n', used) == out + used - 1,
                  "a record that is not one line");
    FUZZ_REQUIRE (shoal_text_valid ((const uint8_t *) out, used), "a record that is not UTF-8");
}

static void
s_tail (const uint8_t *data, size_t size)
{
    if (size == 0)
        return;
    uint32_t lines = data[0] >> 1;
    bool partial = data[0] & 1;
    const char *text = (const char *) data + 1;
    size_t length = size - 1;
    size_t start = shoal_tasklog_tail_start (text, length, lines, partial);
    FUZZ_REQUIRE (start <= length, "a start past the end");
    //  A partial text of one line keeps nothing: the end is its start.
    FUZZ_REQUIRE (start == 0 || start == length || text[start - 1] == '\n',
                  "a start inside a line");
    FUZZ_REQUIRE (!partial || start > 0 || !memchr (text, '\n', length),
                  "a partial text's first line kept");
    size_t newlines = 0;
    for (size_t i = start; i < length; i++)
        newlines += text[i] == '\n';
    bool unended = length > start && text[length - 1] != '\n';
    FUZZ_REQUIRE (!lines || newlines + unended <= lines, "%zu lines kept of %u asked",
                  newlines + unended, lines);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    if (size > S_TEXT_MAX)
        return 0;
    char *text = malloc (size + 1);
    if (!text)
        return 0;
    memcpy (text, data, size);
    text[size] = 0;
    s_names (text);
    free (text);
    s_record (data, size);
    s_tail (data, size);
    return 0;
}

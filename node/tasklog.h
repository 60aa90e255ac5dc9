/*  node/tasklog.h: the files a worker keeps of each task's output, in
    DATA-DIR/logs (docs/worker.md, "Task output"): their names, their
    records, and the reading of their last lines for `shoal logs`.

    A task id ("job/3") becomes a file name by percent-encoding: the bytes
    A-Z a-z 0-9 _ - stay, and '.' too unless it comes first; every other
    byte is '%' and two upper-case hex digits. Then ".log" follows:
    "job/3" is "job%2F3.log". The mapping is one to one and reversed by
    shoal_tasklog_task. The older generations are "NAME.log.1",
    "NAME.log.2"...

    A record is one line: "TIME STREAM TEXT", TIME in UTC to the
    millisecond (2026-12-02T21:30:00.123Z), STREAM "stdout" or "stderr"
    (with "+cut" when the line passed the length the worker reads), TEXT
    the line with control characters as '?', and every byte above 0x7f as
    '?' too when the line is not UTF-8.

    Everything but shoal_tasklog_read is pure.
*/
#ifndef SHOAL_TASKLOG_H
#define SHOAL_TASKLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

//  The directory under the data directory.
#define SHOAL_TASKLOG_DIR "logs"
//  The longest file name a task id maps to, with its NUL: 3 bytes for each
//  byte of the longest id (80), ".log", and ".NN" for a generation.
#define SHOAL_TASKLOG_NAME_TEXT (3 * 80 + 4 + 3 + 1)

//  Writes task's file name ("job%2F3.log") into name. 0, or -1 when task
//  is empty or longer than the wire allows (SHOAL_TASK_MAX).
int shoal_tasklog_name (const char *task, char *name, size_t size);

//  The task whose file is name ("job%2F3.log"), into task. 0, or -1 when
//  name is not one shoal_tasklog_name writes.
int shoal_tasklog_task (const char *name, char *task, size_t size);

//  Writes the record of one line (length bytes of text) into out, of size
//  bytes, ending in a newline: cut to fit (a cut record still ends in a
//  newline). Returns its length. size must be at least 2.
size_t shoal_tasklog_record (char *out, size_t size, const char *time_text, const char *stream,
                             bool cut, const char *text, size_t length);

//  True when a file of size bytes must be rotated before a record of
//  record bytes is added, so that it stays within cap.
bool shoal_tasklog_rotate_due (uint64_t size, size_t record, uint64_t cap);

//  Where the last lines lines of length bytes of text start: text is cut
//  there; a first line without its start (from is not 0: text began
//  inside the file) is left out too.
size_t shoal_tasklog_tail_start (const char *text, size_t length, uint32_t lines, bool partial);

//  Reads the last lines lines of task's output in dir (the current file,
//  and the one before it when the current one holds fewer), at most max
//  bytes, into *text (malloc'd, NUL-terminated, UTF-8 without NUL: bytes
//  that are not are written '?'). Returns 0; 1 when no file is kept for
//  task (*text NULL); -1 with why on an error.
int shoal_tasklog_read (const char *dir, const char *task, uint32_t lines, size_t max, char **text,
                        size_t *length, char *why, size_t why_size);

#endif

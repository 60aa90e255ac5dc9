/*  node/tasklog.c: the names, records and reading of the files a worker
    keeps of each task's output (node/tasklog.h).
*/
#include "node/tasklog.h"

#include "wire/wire.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char s_hex[] = "0123456789ABCDEF";

static bool
s_kept (unsigned char byte, bool first)
{
    return (byte >= 'a' && byte <= 'z') || (byte >= 'A' && byte <= 'Z') ||
           (byte >= '0' && byte <= '9') || byte == '_' || byte == '-' || (byte == '.' && !first);
}

int
shoal_tasklog_name (const char *task, char *name, size_t size)
{
    size_t length = strlen (task), used = 0;
    if (length == 0 || length > SHOAL_TASK_MAX || size < 3 * length + 5)
        return -1;
    for (size_t i = 0; i < length; i++) {
        unsigned char byte = (unsigned char) task[i];
        if (s_kept (byte, i == 0))
            name[used++] = (char) byte;
        else {
            name[used++] = '%';
            name[used++] = s_hex[byte >> 4];
            name[used++] = s_hex[byte & 15];
        }
    }
    memcpy (name + used, ".log", 5);
    return 0;
}

static int
s_digit (char c)
{
    const char *at = c ? strchr (s_hex, c) : NULL;
    return at ? (int) (at - s_hex) : -1;
}

int
shoal_tasklog_task (const char *name, char *task, size_t size)
{
    size_t length = strlen (name), used = 0;
    if (length < 5 || strcmp (name + length - 4, ".log") != 0)
        return -1;
    length -= 4;
    for (size_t i = 0; i < length; i++) {
        int byte = (unsigned char) name[i];
        if (byte == '%') {
            int high = i + 2 < length ? s_digit (name[i + 1]) : -1;
            int low = high >= 0 ? s_digit (name[i + 2]) : -1;
            byte = low >= 0 ? high << 4 | low : -1;
            //  Only what the encoder writes: no escape of a kept byte.
            if (byte <= 0 || s_kept ((unsigned char) byte, used == 0))
                return -1;
            i += 2;
        } else if (!s_kept ((unsigned char) byte, used == 0))
            return -1;
        if (used + 1 >= size || used == SHOAL_TASK_MAX)
            return -1;
        task[used++] = (char) byte;
    }
    task[used] = 0;
    return used ? 0 : -1;
}

size_t
shoal_tasklog_record (char *out, size_t size, const char *time_text, const char *stream, bool cut,
                      const char *text, size_t length)
{
    assert (size >= 2);
    int head = snprintf (out, size - 1, "%s %s%s ", time_text, stream, cut ? "+cut" : "");
    size_t used = head < 0 ? 0 : (size_t) head < size - 1 ? (size_t) head : size - 2;
    bool utf8 = shoal_text_valid ((const uint8_t *) text, length);
    for (size_t i = 0; i < length && used < size - 1; i++) {
        unsigned char byte = (unsigned char) text[i];
        bool control = (byte < 0x20 && byte != '\t') || byte == 0x7f;
        out[used++] = control || (byte >= 0x80 && !utf8) ? '?' : (char) byte;
    }
    //  A cut inside a character would leave the record not UTF-8.
    used = shoal_text_cut (out, used);
    out[used++] = '\n';
    return used;
}

bool
shoal_tasklog_rotate_due (uint64_t size, size_t record, uint64_t cap)
{
    return size > 0 && size + record > cap;
}

size_t
shoal_tasklog_tail_start (const char *text, size_t length, uint32_t lines, bool partial)
{
    size_t start = 0;
    if (partial) {
        const char *newline = memchr (text, '\n', length);
        start = newline ? (size_t) (newline - text) + 1 : length;
    }
    //  Back from the end: the newline before the last lines lines.
    size_t at = length, seen = 0;
    if (at > start && text[at - 1] == '\n')
        at--;
    while (at > start) {
        if (text[at - 1] == '\n' && ++seen == lines)
            return at;
        at--;
    }
    return start;
}

//  Appends the last want bytes (at most) of the file at path to *buffer,
//  which holds *used bytes; *partial: whether they start inside it.
//  Returns 0, 1 when there is no file, -1 on an error (errno).
static int
s_read_tail (const char *path, size_t want, char **buffer, size_t *used, bool *partial)
{
    int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return errno == ENOENT ? 1 : -1;
    struct stat info;
    if (fstat (fd, &info) != 0 || !S_ISREG (info.st_mode)) {
        close (fd);
        errno = errno ? errno : EINVAL;
        return -1;
    }
    size_t size = (size_t) info.st_size, take = size < want ? size : want;
    *partial = take < size;
    char *grown = realloc (*buffer, *used + take + 1);
    ssize_t got = 0;
    if (grown) {
        *buffer = grown;
        got = pread (fd, grown + *used, take, (off_t) (size - take));
    }
    int saved = errno;
    close (fd);
    if (!grown || got < 0) {
        errno = grown ? saved : ENOMEM;
        return -1;
    }
    *used += (size_t) got;
    return 0;
}

static uint32_t
s_lines (const char *text, size_t length)
{
    uint32_t count = 0;
    for (size_t i = 0; i < length; i++)
        count += text[i] == '\n';
    return count;
}

//  Makes length bytes at text UTF-8 without NUL: every byte of a line
//  that is not becomes '?' (a file any process could have written).
static void
s_clean (char *text, size_t length)
{
    size_t start = 0;
    while (start < length) {
        char *newline = memchr (text + start, '\n', length - start);
        size_t end = newline ? (size_t) (newline - text) : length;
        if (!shoal_text_valid ((const uint8_t *) text + start, end - start))
            for (size_t i = start; i < end; i++)
                if ((unsigned char) text[i] >= 0x80 || !text[i])
                    text[i] = '?';
        start = end + 1;
    }
}

int
shoal_tasklog_read (const char *dir, const char *task, uint32_t lines, size_t max, char **text,
                    size_t *length, char *why, size_t why_size)
{
    char name[SHOAL_TASKLOG_NAME_TEXT], path[4096];
    *text = NULL;
    *length = 0;
    if (shoal_tasklog_name (task, name, sizeof name) != 0) {
        snprintf (why, why_size, "not a task id: %.100s", task);
        return -1;
    }
    //  The current file's tail first, then the older one's before it.
    char *current = NULL, *older = NULL;
    size_t current_used = 0, older_used = 0;
    bool current_partial = false, older_partial = false;
    snprintf (path, sizeof path, "%s/%s", dir, name);
    int rc = s_read_tail (path, max, &current, &current_used, &current_partial);
    if (rc == 0 && !current_partial && s_lines (current, current_used) < lines &&
        current_used < max) {
        snprintf (path, sizeof path, "%s/%s.1", dir, name);
        int older_rc = s_read_tail (path, max - current_used, &older, &older_used, &older_partial);
        if (older_rc < 0)
            rc = -1;
    }
    if (rc != 0) {
        if (rc < 0)
            snprintf (why, why_size, "%s: %s", path, strerror (errno));
        free (current);
        free (older);
        return rc;
    }
    char *joined = malloc (older_used + current_used + 1);
    if (!joined) {
        snprintf (why, why_size, "out of memory");
        free (current);
        free (older);
        return -1;
    }
    if (older_used)
        memcpy (joined, older, older_used);
    if (current_used)
        memcpy (joined + older_used, current, current_used);
    size_t total = older_used + current_used;
    free (current);
    free (older);
    size_t start = shoal_tasklog_tail_start (joined, total, lines,
                                             older_used ? older_partial : current_partial);
    memmove (joined, joined + start, total - start);
    total -= start;
    joined[total] = 0;
    s_clean (joined, total);
    *text = joined;
    *length = total;
    return 0;
}

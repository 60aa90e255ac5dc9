/*  tests/test_tasklog.c: the files of each task's output: the task id to
    file name mapping, the records, the rotation rule and the tail read
    (node/tasklog.h, pure but for the read), and the writer's bounds on
    disk (worker/tasklog.h), in a scratch directory.
*/
#define _GNU_SOURCE

#include "node/tasklog.h"
#include "tests/test.h"
#include "wire/wire.h"
#include "worker/tasklog.h"

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static void
task_ids_map_to_safe_names_and_back (void)
{
    char name[SHOAL_TASKLOG_NAME_TEXT], task[SHOAL_TASK_MAX + 1];
    const char *pairs[][2] = {
        { "job/3", "job%2F3.log" },   { "a.b_c-d/12", "a.b_c-d%2F12.log" },
        { ".x/0", "%2Ex%2F0.log" },   { "../0", "%2E.%2F0.log" },
        { "50%/1", "50%25%2F1.log" }, { "caf\xc3\xa9/1", "caf%C3%A9%2F1.log" },
        { "a b/1", "a%20b%2F1.log" },
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        CHECK_EQ (shoal_tasklog_name (pairs[i][0], name, sizeof name), 0);
        CHECK_STR (name, pairs[i][1]);
        CHECK_EQ (shoal_tasklog_task (name, task, sizeof task), 0);
        CHECK_STR (task, pairs[i][0]);
        CHECK (strchr (name, '/') == NULL);
    }
    //  Every byte but NUL goes there and back, in the longest id.
    char every[SHOAL_TASK_MAX + 1];
    for (int start = 1; start < 256; start += SHOAL_TASK_MAX) {
        size_t length = 0;
        for (int byte = start; byte < 256 && length < SHOAL_TASK_MAX; byte++)
            every[length++] = (char) byte;
        every[length] = 0;
        CHECK_EQ (shoal_tasklog_name (every, name, sizeof name), 0);
        CHECK (strlen (name) < 255);
        CHECK_EQ (shoal_tasklog_task (name, task, sizeof task), 0);
        CHECK_STR (task, every);
    }
    char long_id[SHOAL_TASK_MAX + 2];
    memset (long_id, 'j', sizeof long_id - 1);
    long_id[sizeof long_id - 1] = 0;
    CHECK_EQ (shoal_tasklog_name (long_id, name, sizeof name), -1);
    CHECK_EQ (shoal_tasklog_name ("", name, sizeof name), -1);
    CHECK_EQ (shoal_tasklog_name ("job/3", name, 8), -1);
}

//  Only the names the encoder writes are read back: one task, one name.
static void
other_names_are_not_task_files (void)
{
    char task[SHOAL_TASK_MAX + 1];
    const char *names[] = { "job/3.log", "job%2f3.log", "%41.log", "x%2.log", "x%.log",
                            "x.log.1",   ".x.log",      ".log",    "..log",   "x.txt",
                            "%00.log",   "a b.log",     "job%2F3" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        CHECK_EQ (shoal_tasklog_task (names[i], task, sizeof task), -1);
    CHECK_EQ (shoal_tasklog_task ("x%2F3.log", task, 3), -1);
}

static void
records_are_one_clean_line (void)
{
    char out[256];
    const char *time_text = "2026-12-02T21:30:00.123Z";
    size_t length = shoal_tasklog_record (out, sizeof out, time_text, "stdout", false, "hi", 2);
    CHECK_EQ (length, strlen (time_text) + 11);
    CHECK (memcmp (out, "2026-12-02T21:30:00.123Z stdout hi\n", length) == 0);
    //  Control characters, a NUL among them, are '?'; a tab stays.
    length =
        shoal_tasklog_record (out, sizeof out, time_text, "stderr", true, "a\tb\x1b[0m\x00z", 9);
    out[length] = 0;
    CHECK_STR (out, "2026-12-02T21:30:00.123Z stderr+cut a\tb?[0m?z\n");
    //  UTF-8 stays; a line that is not loses its high bytes.
    length = shoal_tasklog_record (out, sizeof out, time_text, "stdout", false, "caf\xc3\xa9", 5);
    out[length] = 0;
    CHECK_STR (out, "2026-12-02T21:30:00.123Z stdout caf\xc3\xa9\n");
    length = shoal_tasklog_record (out, sizeof out, time_text, "stdout", false, "caf\xe9!", 5);
    out[length] = 0;
    CHECK_STR (out, "2026-12-02T21:30:00.123Z stdout caf?!\n");
    //  Cut to fit: a newline last, and no character cut in two.
    char small[36];
    length = shoal_tasklog_record (small, sizeof small, time_text, "stdout", false,
                                   "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 8);
    CHECK (length <= sizeof small);
    CHECK_EQ (small[length - 1], '\n');
    CHECK (shoal_text_valid ((const uint8_t *) small, length));
}

static void
a_file_rotates_before_it_would_pass_the_cap (void)
{
    CHECK (!shoal_tasklog_rotate_due (0, 5000, 4096)); //  an empty file takes one (cut)
    CHECK (!shoal_tasklog_rotate_due (4000, 96, 4096));
    CHECK (shoal_tasklog_rotate_due (4000, 97, 4096));
    CHECK (shoal_tasklog_rotate_due (4096, 1, 4096));
}

static void
the_tail_is_the_last_whole_lines (void)
{
    const char *text = "one\ntwo\nthree\n";
    CHECK_EQ (shoal_tasklog_tail_start (text, strlen (text), 1, false), 8);
    CHECK_EQ (shoal_tasklog_tail_start (text, strlen (text), 2, false), 4);
    CHECK_EQ (shoal_tasklog_tail_start (text, strlen (text), 3, false), 0);
    CHECK_EQ (shoal_tasklog_tail_start (text, strlen (text), 9, false), 0);
    //  Read from inside the file: the first line, without its start, goes.
    CHECK_EQ (shoal_tasklog_tail_start (text, strlen (text), 9, true), 4);
    CHECK_EQ (shoal_tasklog_tail_start ("ne\n", 3, 9, true), 3);
}

static char s_dir[64];

static long
s_size (const char *name)
{
    char path[512];
    struct stat info;
    snprintf (path, sizeof path, "%s/%s", s_dir, name);
    return stat (path, &info) == 0 ? (long) info.st_size : -1;
}

//  Writes count records of task, each "line N" padded to width bytes.
static void
s_put (shoal_tasklog_t *log, const char *task, int from, int count, int width)
{
    for (int i = from; i < from + count; i++) {
        char record[256];
        int length = snprintf (record, sizeof record, "line %05d %0*d\n", i, width - 12, 0);
        CHECK (shoal_tasklog_put (log, task, record, (size_t) length));
    }
    shoal_tasklog_flush (log);
}

static void
the_writer_keeps_each_task_within_cap_times_generations (void)
{
    char why[300];
    shoal_tasklog_t *log = shoal_tasklog_new (s_dir, 1000, 2, why, sizeof why);
    CHECK (log != NULL);
    if (!log)
        return;
    s_put (log, "t/0", 0, 200, 50); //  10,000 bytes through a 1,000-byte cap
    CHECK (s_size ("t%2F0.log") > 0 && s_size ("t%2F0.log") <= 1000);
    CHECK (s_size ("t%2F0.log.1") > 900 && s_size ("t%2F0.log.1") <= 1000);
    CHECK (s_size ("t%2F0.log.2") > 900 && s_size ("t%2F0.log.2") <= 1000);
    CHECK_EQ (s_size ("t%2F0.log.3"), -1);
    //  The newest lines are read back, across the generations' border.
    char *text;
    size_t length;
    CHECK_EQ (
        shoal_tasklog_read (s_dir, "t/0", 30, SHOAL_LOGS_TEXT_MAX, &text, &length, why, sizeof why),
        0);
    CHECK (text && strncmp (text, "line 00170 ", 11) == 0);
    CHECK (text && length == 30 * 50 && strstr (text, "line 00199 ") == text + 29 * 50);
    free (text);
    //  A byte budget: only whole lines.
    CHECK_EQ (shoal_tasklog_read (s_dir, "t/0", 30, 120, &text, &length, why, sizeof why), 0);
    CHECK (text && length == 100 && strncmp (text, "line 00198 ", 11) == 0);
    free (text);
    CHECK_EQ (shoal_tasklog_read (s_dir, "u/0", 30, 4096, &text, &length, why, sizeof why), 1);
    CHECK (text == NULL);
    //  A record over the cap is cut to it.
    s_put (log, "big/0", 0, 1, 200);
    shoal_tasklog_trouble_t trouble;
    shoal_tasklog_trouble (log, &trouble);
    CHECK_EQ (trouble.failed, 0);
    CHECK_EQ (trouble.dropped, 0);
    shoal_tasklog_destroy (&log);
    CHECK (log == NULL);

    log = shoal_tasklog_new (s_dir, 100, 0, why, sizeof why);
    CHECK (log != NULL);
    if (!log)
        return;
    s_put (log, "big/0", 0, 1, 200);
    CHECK_EQ (s_size ("big%2F0.log"), 100);
    //  Keep 0: the file is emptied, no generation kept.
    s_put (log, "k/0", 0, 50, 30);
    CHECK (s_size ("k%2F0.log") > 0 && s_size ("k%2F0.log") <= 100);
    CHECK_EQ (s_size ("k%2F0.log.1"), -1);
    shoal_tasklog_destroy (&log);
}

static size_t
s_task_files (void)
{
    DIR *dir = opendir (s_dir);
    size_t count = 0;
    char task[SHOAL_TASK_MAX + 1];
    for (struct dirent *entry; dir && (entry = readdir (dir));)
        count += shoal_tasklog_task (entry->d_name, task, sizeof task) == 0;
    if (dir)
        closedir (dir);
    return count;
}

static void
the_oldest_task_files_go_past_the_bound (void)
{
    char why[300];
    shoal_tasklog_t *log = shoal_tasklog_new (s_dir, 1000, 1, why, sizeof why);
    CHECK (log != NULL);
    if (!log)
        return;
    s_put (log, "old/0", 0, 30, 50); //  with an older generation
    CHECK (s_size ("old%2F0.log.1") > 0);
    usleep (20000);
    for (int i = 0; i < SHOAL_TASKLOG_FILES_MAX + 10; i++) {
        char task[32];
        snprintf (task, sizeof task, "many/%d", i);
        s_put (log, task, 0, 1, 20);
    }
    CHECK_EQ (s_task_files (), SHOAL_TASKLOG_FILES_MAX);
    CHECK_EQ (s_size ("old%2F0.log"), -1);
    CHECK_EQ (s_size ("old%2F0.log.1"), -1);
    char last[32];
    snprintf (last, sizeof last, "many%%2F%d.log", SHOAL_TASKLOG_FILES_MAX + 9);
    CHECK (s_size (last) > 0);
    shoal_tasklog_destroy (&log);
}

//  A file that cannot be opened is counted, the first reason kept; the
//  writer goes on, and writes again once it can.
static void
failures_are_counted_never_fatal (void)
{
    char dir[128], why[300];
    snprintf (dir, sizeof dir, "%s/gone", s_dir);
    shoal_tasklog_t *log = shoal_tasklog_new (dir, 1000, 1, why, sizeof why);
    CHECK (log != NULL);
    if (!log)
        return;
    CHECK_EQ (rmdir (dir), 0);
    FILE *file = fopen (dir, "w"); //  a file where the directory was
    CHECK (file != NULL);
    if (file)
        fclose (file);
    CHECK (shoal_tasklog_put (log, "t/0", "a\n", 2));
    CHECK (shoal_tasklog_put (log, "t/0", "b\n", 2));
    shoal_tasklog_flush (log);
    shoal_tasklog_trouble_t trouble;
    shoal_tasklog_trouble (log, &trouble);
    CHECK_EQ (trouble.failed, 2);
    CHECK (strstr (trouble.first, "opening") && strstr (trouble.first, "t%2F0.log"));
    CHECK_EQ (unlink (dir), 0);
    CHECK_EQ (mkdir (dir, 0755), 0);
    CHECK (shoal_tasklog_put (log, "t/0", "c\n", 2));
    shoal_tasklog_flush (log);
    char path[160];
    snprintf (path, sizeof path, "%s/t%%2F0.log", dir);
    struct stat info;
    CHECK (stat (path, &info) == 0 && info.st_size == 2);
    shoal_tasklog_destroy (&log);
    //  A directory that cannot be made: no writer, and why.
    snprintf (dir, sizeof dir, "%s/no/such", s_dir);
    CHECK (shoal_tasklog_new (dir, 1000, 1, why, sizeof why) == NULL);
    CHECK (strstr (why, "cannot make") != NULL);
}

int
main (void)
{
    snprintf (s_dir, sizeof s_dir, "/tmp/shoal-tasklog-XXXXXX");
    if (!mkdtemp (s_dir))
        return 1;
    RUN (task_ids_map_to_safe_names_and_back);
    RUN (other_names_are_not_task_files);
    RUN (records_are_one_clean_line);
    RUN (a_file_rotates_before_it_would_pass_the_cap);
    RUN (the_tail_is_the_last_whole_lines);
    RUN (the_writer_keeps_each_task_within_cap_times_generations);
    RUN (the_oldest_task_files_go_past_the_bound);
    RUN (failures_are_counted_never_fatal);
    char command[128];
    snprintf (command, sizeof command, "rm -rf '%s'", s_dir);
    if (system (command) != 0)
        fprintf (stderr, "could not remove %s\n", s_dir);
    return TEST_DONE ();
}

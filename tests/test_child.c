/*  tests/test_child.c: a task's child process as `shoal worker` runs it
    (worker/child.h): the parser of its status lines, and real children:
    their environment, their lines both ways, stops with a grace, exits,
    freezes, and that none outlives its worker.

    Waits are bounded polls against a hang (10 s), never a measure of time:
    a slow machine makes these tests slower, not failed. The grace of a
    stop runs on a clock the test moves itself.
*/
#define _GNU_SOURCE //  setenv, mkdtemp

#include "worker/child.h"
#include "shoal.h"
#include "tests/test.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

//  Polls are bounded by this many steps of 10 ms.
#define WAIT_STEPS 1000

static char s_dir[] = "/tmp/shoal-test-child-XXXXXX";
//  The bytes of the test's command line, which a shim's title takes.
static size_t s_argv_size;

static void
s_sleep_ms (long ms)
{
    struct timespec wait = { ms / 1000, (ms % 1000) * 1000000 };
    nanosleep (&wait, NULL);
}

//  ---------------------------------------------------------------------
//  The status lines

//  Feeds text whole to a fresh parser; up to max results into statuses.
static size_t
s_parse_all (shoal_status_parser_t *parser, const char *text, size_t size,
             shoal_status_line_t *statuses, size_t max)
{
    size_t count = 0, at = 0;
    while (at < size) {
        shoal_status_line_t status;
        size_t taken = shoal_status_parse (parser, text + at, size - at, &status);
        CHECK (taken > 0 && taken <= size - at);
        at += taken;
        if (status.type != SHOAL_STATUS_NONE && count < max)
            statuses[count++] = status;
    }
    return count;
}

static void
status_lines_give_the_lag_and_readiness (void)
{
    shoal_status_parser_t parser = { 0 };
    shoal_status_line_t statuses[4];
    const char text[] = "lag 1500\nready\nlag 18446744073709551615\nlag 0000000000000000000000\n";
    CHECK_EQ (s_parse_all (&parser, text, strlen (text), statuses, 4), 4);
    CHECK_EQ (statuses[0].type, SHOAL_STATUS_LAG);
    CHECK_EQ (statuses[0].lag, 1500);
    CHECK (!statuses[0].ready);
    CHECK_EQ (statuses[1].type, SHOAL_STATUS_LAG);
    CHECK_EQ (statuses[1].lag, 0);
    CHECK (statuses[1].ready);
    CHECK (statuses[2].lag == UINT64_MAX);
    CHECK_EQ (statuses[3].lag, 0);
    CHECK (!statuses[3].ready);
}

static void
status_bad_lines_are_skipped (void)
{
    const char *const bad[] = {
        "lag",     "lag ",     "lag x",   "lag -1", "lag 18446744073709551616",
        "LAG 5",   "lag 5 ",   " ready",  "ready!", "promote 1.2",
        "lag 1\r", "lag 0x10", "lag 1.5", "hello"
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[128];
        int size = snprintf (text, sizeof text, "%s\nlag 42\n", bad[i]);
        shoal_status_parser_t parser = { 0 };
        shoal_status_line_t statuses[2];
        CHECK_EQ (s_parse_all (&parser, text, (size_t) size, statuses, 2), 2);
        CHECK_EQ (statuses[0].type, SHOAL_STATUS_BAD);
        CHECK (statuses[0].reason && statuses[0].reason[0]);
        //  The next line is read as if nothing had happened.
        CHECK_EQ (statuses[1].type, SHOAL_STATUS_LAG);
        CHECK_EQ (statuses[1].lag, 42);
    }
}

static void
status_blank_lines_say_nothing (void)
{
    shoal_status_parser_t parser = { 0 };
    shoal_status_line_t statuses[2];
    const char text[] = "\n\nready\n\n";
    CHECK_EQ (s_parse_all (&parser, text, strlen (text), statuses, 2), 1);
    CHECK (statuses[0].ready);
}

//  A line of 256 bytes with its newline is read; one byte more is refused,
//  once, as soon as it is too long, and never held whole.
static void
a_status_line_too_long_is_refused_then_skipped (void)
{
    char text[600];
    memset (text, 'x', sizeof text);
    //  255 bytes and the newline: read, and refused for what it says.
    text[255] = '\n';
    shoal_status_parser_t parser = { 0 };
    shoal_status_line_t status;
    CHECK_EQ (shoal_status_parse (&parser, text, 256, &status), 256);
    CHECK_EQ (status.type, SHOAL_STATUS_BAD);
    CHECK (!strstr (status.reason, "longer"));

    //  256 bytes before the newline: refused at the 256th, then skipped.
    memset (text, 'x', sizeof text);
    text[256] = '\n';
    CHECK_EQ (shoal_status_parse (&parser, text, 257, &status), 256);
    CHECK_EQ (status.type, SHOAL_STATUS_BAD);
    CHECK_CONTAINS (status.reason, "longer than 256");
    CHECK_EQ (shoal_status_parse (&parser, text + 256, 1, &status), 1);
    CHECK_EQ (status.type, SHOAL_STATUS_NONE);
    memset (text, 'x', sizeof text);
    memcpy (text + 400, "\nlag 9\n", 7);
    shoal_status_line_t statuses[4];
    CHECK_EQ (s_parse_all (&parser, text, 407, statuses, 4), 2);
    CHECK_EQ (statuses[0].type, SHOAL_STATUS_BAD);
    CHECK_CONTAINS (statuses[0].reason, "longer than 256");
    CHECK_EQ (statuses[1].type, SHOAL_STATUS_LAG);
    CHECK_EQ (statuses[1].lag, 9);

    //  A line that never ends is refused once, however long it goes on.
    shoal_status_parser_t endless = { 0 };
    memset (text, 'y', sizeof text);
    size_t bad = 0;
    for (int round = 0; round < 200; round++)
        bad += s_parse_all (&endless, text, sizeof text, statuses, 4);
    CHECK_EQ (bad, 1);
}

//  A line split across reads, down to one byte each, reads as one.
static void
status_split_across_reads (void)
{
    const char text[] = "lag 123456\nready\n";
    shoal_status_parser_t parser = { 0 };
    shoal_status_line_t statuses[2];
    size_t count = 0;
    for (size_t i = 0; i < strlen (text); i++) {
        shoal_status_line_t status;
        CHECK_EQ (shoal_status_parse (&parser, text + i, 1, &status), 1);
        if (status.type != SHOAL_STATUS_NONE) {
            CHECK (text[i] == '\n');
            if (count < 2)
                statuses[count] = status;
            count++;
        } else
            CHECK (text[i] != '\n');
    }
    CHECK_EQ (count, 2);
    CHECK_EQ (statuses[0].lag, 123456);
    CHECK (statuses[1].ready);
}

//  Many lines in one read come one call each, in order, each call taking
//  the bytes up to its line's end.
static void
status_many_lines_in_one_read (void)
{
    const char text[] = "lag 3\nlag 2\nlag 1\nready\nlag 7";
    shoal_status_parser_t parser = { 0 };
    shoal_status_line_t status;
    size_t at = 0;
    const uint64_t lags[] = { 3, 2, 1, 0 };
    for (size_t i = 0; i < 4; i++) {
        size_t taken = shoal_status_parse (&parser, text + at, strlen (text) - at, &status);
        CHECK_EQ (taken, 6);
        CHECK_EQ (status.type, SHOAL_STATUS_LAG);
        CHECK_EQ (status.lag, lags[i]);
        at += taken;
    }
    //  The unfinished line waits for its end.
    CHECK_EQ (shoal_status_parse (&parser, text + at, strlen (text) - at, &status), 5);
    CHECK_EQ (status.type, SHOAL_STATUS_NONE);
    CHECK_EQ (shoal_status_parse (&parser, "0\n", 2, &status), 2);
    CHECK_EQ (status.lag, 70);
}

//  ---------------------------------------------------------------------
//  The output lines

//  Feeds text to a fresh splitter in pieces of step bytes, then ends it;
//  up to max lines into lines (their text copied into texts).
static size_t
s_split_all (const char *text, size_t size, size_t step, shoal_output_line_t *lines,
             char (*texts)[SHOAL_OUTPUT_LINE_MAX + 1], size_t max)
{
    static shoal_output_splitter_t splitter;
    memset (&splitter, 0, sizeof splitter);
    size_t count = 0, at = 0;
    shoal_output_line_t line;
    while (at < size) {
        size_t piece = size - at < step ? size - at : step;
        size_t taken = shoal_output_split (&splitter, text + at, piece, &line);
        CHECK (taken > 0 && taken <= piece);
        at += taken;
        if (line.text && count < max) {
            CHECK (line.length <= SHOAL_OUTPUT_LINE_MAX && line.text[line.length] == 0);
            memcpy (texts[count], line.text, line.length + 1);
            lines[count] = line;
            lines[count].text = texts[count];
            count++;
        }
    }
    shoal_output_end (&splitter, &line);
    if (line.text && count < max) {
        memcpy (texts[count], line.text, line.length + 1);
        lines[count] = line;
        lines[count].text = texts[count];
        count++;
    }
    return count;
}

//  Lines are whole however the bytes come; blank lines say nothing; a
//  carriage return before the newline goes; an unfinished last line is
//  said so; NUL bytes are kept, counted in the length.
static void
output_is_split_into_lines_at_any_read_size (void)
{
    static shoal_output_line_t lines[8];
    static char texts[8][SHOAL_OUTPUT_LINE_MAX + 1];
    const char text[] = "one\n\ntwo\r\n\r\nthr\0ee\nlast";
    size_t steps[] = { 1, 2, 3, 7, sizeof text - 1 };
    for (size_t s = 0; s < sizeof steps / sizeof steps[0]; s++) {
        CHECK_EQ (s_split_all (text, sizeof text - 1, steps[s], lines, texts, 8), 4);
        CHECK_STR (lines[0].text, "one");
        CHECK_STR (lines[1].text, "two");
        CHECK_EQ (lines[2].length, 6);
        CHECK (memcmp (lines[2].text, "thr\0ee", 6) == 0);
        CHECK_STR (lines[3].text, "last");
        CHECK (lines[3].unfinished && !lines[0].unfinished && !lines[2].unfinished);
        for (int i = 0; i < 4; i++)
            CHECK (!lines[i].truncated);
    }
}

//  A line longer than the limit: its start is a line, said truncated, cut
//  before a character it would split; the rest is skipped to its newline,
//  never held. A line of exactly the limit is whole.
static void
long_output_lines_are_cut_at_the_limit (void)
{
    static shoal_output_line_t lines[8];
    static char texts[8][SHOAL_OUTPUT_LINE_MAX + 1];
    size_t size = 3 * SHOAL_OUTPUT_LINE_MAX + 64;
    char *text = malloc (size);
    //  A line of SHOAL_OUTPUT_LINE_MAX - 1 bytes of 'a' and one 'é' (two
    //  bytes) that would end past the limit; then more, then "next".
    size_t at = 0;
    memset (text, 'a', SHOAL_OUTPUT_LINE_MAX - 1);
    at = SHOAL_OUTPUT_LINE_MAX - 1;
    memcpy (text + at, "\xc3\xa9", 2);
    at += 2;
    memset (text + at, 'b', SHOAL_OUTPUT_LINE_MAX);
    at += SHOAL_OUTPUT_LINE_MAX;
    text[at++] = '\n';
    memset (text + at, 'c', SHOAL_OUTPUT_LINE_MAX);
    at += SHOAL_OUTPUT_LINE_MAX;
    text[at++] = '\n';
    memcpy (text + at, "next\n", 5);
    at += 5;
    CHECK (at <= size);
    size_t steps[] = { 1, 100, 4096, at };
    for (size_t s = 0; s < sizeof steps / sizeof steps[0]; s++) {
        CHECK_EQ (s_split_all (text, at, steps[s], lines, texts, 8), 3);
        CHECK (lines[0].truncated);
        CHECK_EQ (lines[0].length, SHOAL_OUTPUT_LINE_MAX - 1); //  not half of the é
        CHECK (!lines[1].truncated);
        CHECK_EQ (lines[1].length, SHOAL_OUTPUT_LINE_MAX);
        CHECK_EQ (lines[1].text[0], 'c');
        CHECK_STR (lines[2].text, "next");
        CHECK (!lines[2].truncated);
    }
    free (text);
}

//  ---------------------------------------------------------------------
//  Children

static shoal_child_spec_t
s_spec (const char *command, int role)
{
    return (shoal_child_spec_t){
        .command = command,
        .job = "orders",
        .index = 3,
        .parallelism = 8,
        .role = role,
        .epoch_term = 4,
        .epoch_version = 17,
        .node = "00112233445566778899aabbccddeeff",
        .environment = environ,
        .grace_ms = 60000,
    };
}

//  Makes a child of the spec and waits until its command runs.
static shoal_child_t *
s_start (const shoal_child_spec_t *spec)
{
    char why[256] = "";
    shoal_child_t *child = shoal_child_new (spec, why, sizeof why);
    CHECK (child);
    if (!child) {
        fprintf (stderr, "shoal_child_new: %s\n", why);
        return NULL;
    }
    int started = 0;
    for (int i = 0; i < WAIT_STEPS && started == 0; i++) {
        struct pollfd fd = { .fd = shoal_child_exec_fd (child), .events = POLLIN };
        poll (&fd, 1, 10);
        started = shoal_child_started (child, why, sizeof why);
    }
    CHECK_EQ (started, 1);
    CHECK (shoal_child_pid (child) > 0);
    return child;
}

//  Makes a child of the command (printf-formatted; %1$s is the test's
//  folder) and waits until its command runs.
__attribute__ ((format (printf, 2, 3))) static shoal_child_t *
s_child (int role, const char *format, ...)
{
    char command[2048];
    va_list args;
    va_start (args, format);
    vsnprintf (command, sizeof command, format, args);
    va_end (args);
    shoal_child_spec_t spec = s_spec (command, role);
    return s_start (&spec);
}

//  The clock of the lease's deadlines.
static uint64_t
s_mono_ms (void)
{
    struct timespec now;
    clock_gettime (CLOCK_MONOTONIC, &now);
    return (uint64_t) now.tv_sec * 1000 + (uint64_t) now.tv_nsec / 1000000;
}

//  Waits until the child's shim was reaped; false if it never was.
static bool
s_reaped (shoal_child_t *child, shoal_child_exit_t *exit)
{
    for (int i = 0; i < WAIT_STEPS; i++) {
        if (shoal_child_reap (child, exit) == 1)
            return true;
        s_sleep_ms (10);
    }
    return false;
}

//  Waits for the next line the child says; false if none came.
static bool
s_next_status (shoal_child_t *child, shoal_status_line_t *status)
{
    for (int i = 0; i < WAIT_STEPS; i++) {
        int rc = shoal_child_status (child, status);
        if (rc == 1)
            return true;
        if (rc < 0)
            return false;
        struct pollfd fd = { .fd = shoal_child_status_fd (child), .events = POLLIN };
        poll (&fd, 1, 10);
    }
    return false;
}

//  The process's state letter from /proc, or 0 when there is none.
static char
s_state (pid_t pid)
{
    char path[64], text[512];
    snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
    FILE *file = fopen (path, "r");
    if (!file)
        return 0;
    size_t size = fread (text, 1, sizeof text - 1, file);
    fclose (file);
    text[size] = 0;
    char *close = strrchr (text, ')');
    return close && close[1] == ' ' ? close[2] : 0;
}

//  Alive: there and not a zombie (a zombie that init has not reaped yet
//  runs no more).
static bool
s_alive (pid_t pid)
{
    char state = s_state (pid);
    return pid > 0 && state && state != 'Z' && state != 'X';
}

//  Waits until the process runs the program named comm and sleeps in it.
//  Between exec and its first sleep the dynamic loader opens and closes
//  libraries, so only a sleeping process shows the descriptors it keeps.
static bool
s_asleep_in (pid_t pid, const char *comm)
{
    char path[64], name[64];
    snprintf (path, sizeof path, "/proc/%d/comm", (int) pid);
    for (int i = 0; i < WAIT_STEPS; i++) {
        FILE *file = fopen (path, "r");
        size_t size = file ? fread (name, 1, sizeof name - 1, file) : 0;
        if (file)
            fclose (file);
        name[size] = 0;
        name[strcspn (name, "\n")] = 0;
        if (strcmp (name, comm) == 0 && s_state (pid) == 'S')
            return true;
        s_sleep_ms (10);
    }
    return false;
}

//  Kills what a broken child module would leave behind, so that a failed
//  test ends rather than waits for it.
static void
s_kill_leftover (pid_t pid)
{
    if (s_alive (pid))
        kill (pid, SIGKILL);
}

static bool
s_gone_soon (pid_t pid)
{
    for (int i = 0; i < WAIT_STEPS; i++) {
        if (!s_alive (pid))
            return true;
        s_sleep_ms (10);
    }
    return false;
}

//  Waits until the child wrote the file name to the test's folder (whole:
//  children write a file aside and move it in place when it is not one
//  number).
static bool
s_file_there (const char *name)
{
    char path[256];
    snprintf (path, sizeof path, "%s/%s", s_dir, name);
    for (int i = 0; i < WAIT_STEPS; i++) {
        if (access (path, F_OK) == 0)
            return true;
        s_sleep_ms (10);
    }
    return false;
}

//  The pid a child wrote to the test's folder, once it is there.
static pid_t
s_pid_file (const char *name)
{
    char path[256];
    snprintf (path, sizeof path, "%s/%s", s_dir, name);
    for (int i = 0; i < WAIT_STEPS; i++) {
        FILE *file = fopen (path, "r");
        int pid = 0;
        if (file) {
            int read = fscanf (file, "%d", &pid);
            fclose (file);
            if (read == 1 && pid > 0)
                return pid;
        }
        s_sleep_ms (10);
    }
    return 0;
}

//  The whole of a file the child wrote, "" if none.
static void
s_read_file (const char *name, char *text, size_t size)
{
    char path[256];
    snprintf (path, sizeof path, "%s/%s", s_dir, name);
    text[0] = 0;
    FILE *file = fopen (path, "r");
    if (!file)
        return;
    size_t used = fread (text, 1, size - 1, file);
    text[used] = 0;
    fclose (file);
}

//  The child's environment is the worker's, less the worker's options,
//  plus its task's variables; descriptor 3 is its status socket, input is
//  /dev/null, and nothing else of the worker is open.
static void
a_child_gets_the_shoal_environment_and_keeps_the_rest (void)
{
    setenv ("SHOAL_CAPACITY", "3", 1);
    setenv ("SHOAL_DATA_DIR", "/somewhere", 1);
    setenv ("SHOAL_JOB", "stale", 1);
    setenv ("SHOAL_TEST_MARK", "kept", 1);
    setenv ("UNRELATED", "kept too", 1);
    shoal_child_t *child = s_child (
        SHOAL_LEARNER, "env > %1$s/env.tmp; mv %1$s/env.tmp %1$s/env; exec sleep 60", s_dir);
    unsetenv ("SHOAL_CAPACITY");
    unsetenv ("SHOAL_DATA_DIR");
    unsetenv ("SHOAL_JOB");
    unsetenv ("SHOAL_TEST_MARK");
    unsetenv ("UNRELATED");
    if (!child)
        return;
    pid_t pid = s_file_there ("env") ? shoal_child_pid (child) : 0;
    CHECK (pid > 0);
    char text[16384];
    s_read_file ("env", text, sizeof text);
    //  With a newline first, every variable follows one.
    char whole[16400];
    snprintf (whole, sizeof whole, "\n%s", text);
    const char *const present[] = {
        "\nSHOAL_JOB=orders\n",     "\nSHOAL_TASK=orders/3\n",
        "\nSHOAL_INDEX=3\n",        "\nSHOAL_PARALLELISM=8\n",
        "\nSHOAL_ROLE=learner\n",   "\nSHOAL_EPOCH=4.17\n",
        "\nSHOAL_STATUS_FD=3\n",    "\nSHOAL_NODE=00112233445566778899aabbccddeeff\n",
        "\nSHOAL_TEST_MARK=kept\n", "\nUNRELATED=kept too\n",
        "\nSHOAL_FENCED=0\n",
    };
    for (size_t i = 0; i < sizeof present / sizeof present[0]; i++)
        CHECK_CONTAINS (whole, present[i]);
    CHECK (!strstr (whole, "\nSHOAL_CAPACITY="));
    CHECK (!strstr (whole, "\nSHOAL_DATA_DIR="));
    CHECK (!strstr (whole, "SHOAL_JOB=stale"));

    //  The command's descriptors: input, output, error and the status
    //  socket, nothing else.
    CHECK (s_asleep_in (pid, "sleep"));
    char path[64], link[256];
    snprintf (path, sizeof path, "/proc/%d/fd", (int) pid);
    DIR *fds = opendir (path);
    CHECK (fds);
    int count = 0;
    for (struct dirent *entry; fds && (entry = readdir (fds));)
        if (entry->d_name[0] != '.') {
            if (atoi (entry->d_name) > 3) {
                char fd_path[sizeof entry->d_name + 32];
                snprintf (fd_path, sizeof fd_path, "/proc/%d/fd/%s", (int) pid, entry->d_name);
                ssize_t size = readlink (fd_path, link, sizeof link - 1);
                link[size > 0 ? size : 0] = 0;
                fprintf (stderr, "the command holds descriptor %s: %s\n", entry->d_name, link);
            }
            CHECK (atoi (entry->d_name) <= 3);
            count++;
        }
    if (fds)
        closedir (fds);
    CHECK_EQ (count, 4);
    snprintf (path, sizeof path, "/proc/%d/fd/0", (int) pid);
    ssize_t size = readlink (path, link, sizeof link - 1);
    link[size > 0 ? size : 0] = 0;
    CHECK_STR (link, "/dev/null");
    snprintf (path, sizeof path, "/proc/%d/fd/%d", (int) pid, SHOAL_CHILD_STATUS_FD);
    size = readlink (path, link, sizeof link - 1);
    link[size > 0 ? size : 0] = 0;
    CHECK (strncmp (link, "socket:", 7) == 0);
    shoal_child_destroy (&child);
    CHECK (!child);
    CHECK (!s_alive (pid));
}

//  A learner's lag comes line by line; a malformed line is skipped; a
//  promotion reaches the same process, which goes on.
static void
child_lag_and_promote (void)
{
    shoal_child_t *child =
        s_child (SHOAL_LEARNER,
                 "echo $$ > %1$s/pid; fd=$SHOAL_STATUS_FD; echo 'lag 50' >&$fd; "
                 "echo 'lag 7' >&$fd; echo bogus >&$fd; echo ready >&$fd; "
                 "read line <&$fd; echo \"$line\" > %1$s/got.tmp; mv %1$s/got.tmp %1$s/got; "
                 "exec sleep 60",
                 s_dir);
    if (!child)
        return;
    shoal_status_line_t status;
    CHECK (s_next_status (child, &status));
    CHECK_EQ (status.type, SHOAL_STATUS_LAG);
    CHECK_EQ (status.lag, 50);
    CHECK (s_next_status (child, &status));
    CHECK_EQ (status.lag, 7);
    CHECK (s_next_status (child, &status));
    CHECK_EQ (status.type, SHOAL_STATUS_BAD);
    CHECK (s_next_status (child, &status));
    CHECK (status.type == SHOAL_STATUS_LAG && status.ready);

    pid_t pid = s_pid_file ("pid");
    CHECK_EQ (pid, shoal_child_pid (child));
    char why[256] = "";
    CHECK_EQ (shoal_child_promote (child, 5, 2, why, sizeof why), 0);
    char got[64] = "";
    CHECK (s_file_there ("got"));
    s_read_file ("got", got, sizeof got);
    CHECK_STR (got, "promote 5.2\n");
    //  The same process runs on: promoted, not restarted.
    CHECK (s_alive (pid));
    CHECK_EQ (shoal_child_pid (child), pid);
    shoal_child_exit_t exit;
    CHECK_EQ (shoal_child_reap (child, &exit), 0);

    CHECK_EQ (shoal_child_stop (child, 1000, 60000), 0);
    CHECK (s_reaped (child, &exit));
    CHECK_EQ (exit.signal, SIGTERM);
    CHECK (!s_alive (pid));
    shoal_child_destroy (&child);
}

//  A child that survives SIGTERM runs until the grace is over, then is
//  killed: its whole group, and what left the group.
static void
child_stop_then_kill_after_grace (void)
{
    shoal_child_t *child =
        s_child (SHOAL_ACTIVE,
                 "fd=$SHOAL_STATUS_FD; trap 'echo \"lag 1\" >&$fd' TERM; "
                 "setsid sh -c 'trap \"\" TERM; echo $$ > %1$s/escaped; exec sleep 60' & "
                 "while [ ! -s %1$s/escaped ]; do sleep 0.01; done; echo ready >&$fd; "
                 "while :; do sleep 1; done",
                 s_dir);
    if (!child)
        return;
    shoal_status_line_t status;
    CHECK (s_next_status (child, &status) && status.ready);
    pid_t pid = shoal_child_pid (child), escaped = s_pid_file ("escaped");
    CHECK (escaped > 0 && escaped != pid);

    uint64_t now = 1000, grace = 5000;
    CHECK_EQ (shoal_child_stop (child, now, grace), 0);
    CHECK (shoal_child_stopping (child));
    CHECK (shoal_child_next (child) == now + grace);
    //  The SIGTERM came, and the child went on.
    CHECK (s_next_status (child, &status) && status.lag == 1);
    shoal_child_tick (child, now + grace - 1);
    shoal_child_exit_t exit;
    CHECK_EQ (shoal_child_reap (child, &exit), 0);
    CHECK (s_alive (pid));
    CHECK (s_alive (escaped));

    //  The grace is over: SIGKILL.
    shoal_child_tick (child, now + grace);
    CHECK (shoal_child_next (child) == UINT64_MAX);
    CHECK (s_reaped (child, &exit));
    CHECK_EQ (exit.signal, SIGKILL);
    CHECK_EQ (exit.status, 128 + SIGKILL);
    CHECK (!exit.shim_signal && !exit.exec_failed);
    CHECK (!s_alive (pid));
    //  The shim reaps its whole tree before it exits.
    CHECK (!s_alive (escaped));
    s_kill_leftover (escaped);
    char text[128];
    shoal_child_exit_text (&exit, text, sizeof text);
    CHECK_CONTAINS (text, "signal 9");
    shoal_child_destroy (&child);
}

//  What the command leaves behind when it exits on its own gets SIGTERM
//  from the shim.
static void
child_leftovers_end_with_the_command (void)
{
    shoal_child_t *child = s_child (SHOAL_ACTIVE, "sleep 60 & echo $! > %1$s/left; exit 4", s_dir);
    if (!child)
        return;
    pid_t left = s_pid_file ("left");
    shoal_child_exit_t exit;
    CHECK (s_reaped (child, &exit));
    CHECK_EQ (exit.status, 4);
    CHECK_EQ (exit.signal, 0);
    CHECK (!s_alive (left));
    shoal_child_destroy (&child);
}

static void
child_exit_status_and_signal (void)
{
    shoal_child_exit_t exit;
    char text[128];
    shoal_child_t *child = s_child (SHOAL_ACTIVE, "exit 3");
    CHECK (child && s_reaped (child, &exit));
    CHECK_EQ (exit.status, 3);
    CHECK_EQ (exit.signal, 0);
    shoal_child_exit_text (&exit, text, sizeof text);
    CHECK_STR (text, "exited with status 3");
    shoal_child_destroy (&child);

    child = s_child (SHOAL_ACTIVE, "kill -USR1 $$; sleep 60");
    CHECK (child && s_reaped (child, &exit));
    CHECK_EQ (exit.signal, SIGUSR1);
    CHECK_EQ (exit.status, 128 + SIGUSR1);
    shoal_child_exit_text (&exit, text, sizeof text);
    CHECK_CONTAINS (text, "killed by signal 10");
    shoal_child_destroy (&child);
}

//  Waits for the next line the child writes, on either stream; false if
//  none came (or both streams ended).
static bool
s_next_output (shoal_child_t *child, int *stream, shoal_output_line_t *line)
{
    for (int i = 0; i < WAIT_STEPS; i++) {
        int rc = shoal_child_output (child, stream, line);
        if (rc == 1)
            return true;
        if (rc < 0)
            return false;
        struct pollfd fds[2] = {
            { .fd = shoal_child_output_fd (child, SHOAL_CHILD_STDOUT), .events = POLLIN },
            { .fd = shoal_child_output_fd (child, SHOAL_CHILD_STDERR), .events = POLLIN },
        };
        poll (fds, 2, 10);
        shoal_child_exit_t exit;
        shoal_child_reap (child, &exit); //  once gone, the pipes end
    }
    return false;
}

//  The command's standard output and error come to the worker, each line
//  with its stream, and also what it left unfinished when it exited; a
//  command the shell cannot find says so on standard error.
static void
a_childs_two_streams_come_back_as_lines (void)
{
    shoal_child_t *child =
        s_child (SHOAL_ACTIVE, "echo out; echo err >&2; /nonexistent/shoal-test; printf partial");
    int stream = 0;
    shoal_output_line_t line;
    char seen[4][128];
    int streams[4], count = 0;
    while (count < 4 && s_next_output (child, &stream, &line)) {
        snprintf (seen[count], sizeof seen[count], "%s%s", line.text,
                  line.unfinished ? " (unfinished)" : "");
        streams[count++] = stream;
    }
    CHECK_EQ (count, 4);
    //  The two streams are read in turns: their order between them is not
    //  the child's, but each stream's own is.
    int out = 0, err = 0;
    for (int i = 0; i < count; i++) {
        if (streams[i] == SHOAL_CHILD_STDOUT)
            CHECK_STR (seen[i], out++ == 0 ? "out" : "partial (unfinished)");
        else {
            CHECK_EQ (streams[i], SHOAL_CHILD_STDERR);
            if (err++ == 0)
                CHECK_STR (seen[i], "err");
            else
                CHECK_CONTAINS (seen[i], "/nonexistent/shoal-test");
        }
    }
    CHECK (out == 2 && err == 2);
    CHECK (!s_next_output (child, &stream, &line));
    CHECK_EQ (shoal_child_output (child, &stream, &line), -1);
    CHECK_EQ (shoal_child_output_fd (child, SHOAL_CHILD_STDOUT), -1);
    CHECK_STR (shoal_child_stream_name (SHOAL_CHILD_STDERR), "stderr");
    shoal_child_destroy (&child);
}

//  A child that writes a lot never holds the worker: each call reads at
//  most once and returns; the child waits on its pipe meanwhile. Every
//  line comes, in order, and a line far over the limit comes cut.
static void
child_output_a_lot (void)
{
    shoal_child_t *child =
        s_child (SHOAL_ACTIVE, "head -c 1000000 /dev/zero | tr '\\0' x; echo; seq 1 100000");
    int stream = 0, lines = 0;
    bool in_order = true, cut = false;
    shoal_output_line_t line;
    while (s_next_output (child, &stream, &line)) {
        if (lines == 0) {
            cut = line.truncated && line.length == SHOAL_OUTPUT_LINE_MAX && line.text[0] == 'x';
            lines++;
            continue;
        }
        char expected[16];
        snprintf (expected, sizeof expected, "%d", lines);
        in_order &= stream == SHOAL_CHILD_STDOUT && strcmp (line.text, expected) == 0;
        lines++;
    }
    CHECK (cut);
    CHECK (in_order);
    CHECK_EQ (lines, 100001);
    shoal_child_exit_t exit;
    CHECK (s_reaped (child, &exit));
    CHECK_EQ (exit.status, 0);
    shoal_child_destroy (&child);

    //  A child that says nothing: no line, and no wait.
    child = s_child (SHOAL_ACTIVE, "exec sleep 60");
    CHECK_EQ (shoal_child_output (child, &stream, &line), 0);
    CHECK (line.text == NULL);
    CHECK (!shoal_child_output_pending (child));
    shoal_child_destroy (&child);
}

//  What a child wrote last is read before it goes, as the worker reads it
//  once the child is reaped (until a call finds no line): not left in the
//  pipe behind the tail of a line cut at the limit, or behind blank lines.
static void
child_last_words_after_a_long_line (void)
{
    shoal_child_t *child = s_child (SHOAL_ACTIVE, "head -c 10000 /dev/zero | tr '\\0' a; echo; "
                                                  "yes '' | head -5000; echo last-words");
    shoal_child_exit_t exit;
    CHECK (s_reaped (child, &exit));
    int stream = 0, lines = 0;
    shoal_output_line_t line;
    char last[64] = "";
    while (shoal_child_output (child, &stream, &line) == 1) {
        lines++;
        snprintf (last, sizeof last, "%s", line.text);
    }
    CHECK_EQ (lines, 2);
    CHECK_STR (last, "last-words");
    shoal_child_destroy (&child);
}

//  Reads /proc/PID/NAME into text, NULs as spaces; false when it cannot.
static bool
s_proc_text (pid_t pid, const char *name, char *text, size_t size)
{
    char path[64];
    snprintf (path, sizeof path, "/proc/%d/%s", (int) pid, name);
    FILE *file = fopen (path, "r");
    if (!file)
        return false;
    size_t got = fread (text, 1, size - 1, file);
    fclose (file);
    for (size_t i = 0; i < got; i++)
        if (text[i] == 0)
            text[i] = ' ';
    text[got] = 0;
    return true;
}

//  A shim names its task where ps and top look (its command line, its
//  thread name), not the worker's command line it was forked with.
static void
child_shim_is_named_for_its_task (void)
{
    shoal_child_t *child = s_child (SHOAL_ACTIVE, "exec sleep 60");
    char text[512] = "";
    CHECK (child && s_proc_text (shoal_child_shim (child), "comm", text, sizeof text));
    CHECK_STR (text, "shim orders/3\n");
    CHECK (child && s_proc_text (shoal_child_shim (child), "cmdline", text, sizeof text));
    //  As much of the title as the test's own command line has room for.
    const char *title = "shoal-shim orders/3";
    size_t room = s_argv_size - 1 < strlen (title) ? s_argv_size - 1 : strlen (title);
    CHECK (strncmp (text, title, room) == 0);
    CHECK (!strstr (text, "test_child"));
    shoal_child_destroy (&child);
}

//  The shell runs, but finds no such command: the child fails with 127.
static void
child_missing_command_fails (void)
{
    shoal_child_t *child = s_child (SHOAL_ACTIVE, "/nonexistent/shoal-test-command --flag");
    shoal_child_exit_t exit;
    CHECK (child && s_reaped (child, &exit));
    CHECK_EQ (exit.status, 127);
    char text[128];
    shoal_child_exit_text (&exit, text, sizeof text);
    CHECK_STR (text, "exited with status 127");
    shoal_child_destroy (&child);
}

//  Waits until the process is stopped (state T), or runs (not T); false
//  if it never comes to be.
static bool
s_stopped_soon (pid_t pid, bool stopped)
{
    for (int i = 0; i < WAIT_STEPS; i++) {
        if ((s_state (pid) == 'T') == stopped)
            return true;
        s_sleep_ms (10);
    }
    return false;
}

//  Stops a frozen child: killed at once, with no grace, not waited for.
static void
s_stop_kills_at_once (shoal_child_t *child)
{
    CHECK_EQ (shoal_child_stop (child, 1000, 60000), 0);
    CHECK (shoal_child_next (child) == UINT64_MAX);
    shoal_child_exit_t exit;
    CHECK (s_reaped (child, &exit));
    CHECK_EQ (exit.signal, SIGKILL);
}

//  A frozen child's group is stopped, and runs again when thawed; stopped
//  while frozen, it is killed at once.
static void
a_child_freezes_and_thaws (void)
{
    shoal_child_t *child = s_child (SHOAL_ACTIVE, "echo ready >&$SHOAL_STATUS_FD; exec sleep 60");
    if (!child)
        return;
    shoal_status_line_t status;
    CHECK (s_next_status (child, &status) && status.ready);
    pid_t pid = shoal_child_pid (child);
    shoal_child_freeze (child, true);
    CHECK (shoal_child_frozen (child));
    CHECK (s_stopped_soon (pid, true));
    shoal_child_freeze (child, false);
    CHECK (s_stopped_soon (pid, false));

    shoal_child_freeze (child, true);
    s_stop_kills_at_once (child);
    shoal_child_destroy (&child);
}

//  The lease binds a child that acts even when its worker does nothing (a
//  worker whose process is stopped: here, the test): the shim freezes it
//  once the deadline it was last given has passed, and thaws it when a
//  later one comes.
static void
child_lease_binds_without_the_worker (void)
{
    shoal_child_spec_t spec = s_spec ("exec sleep 60", SHOAL_ACTIVE);
    spec.bound = true;
    spec.until_ms = s_mono_ms () + 300;
    shoal_child_t *child = s_start (&spec);
    if (!child)
        return;
    pid_t pid = shoal_child_pid (child);
    CHECK (shoal_child_until (child) == spec.until_ms);
    //  Nothing more is done: the deadline passes.
    CHECK (s_stopped_soon (pid, true));
    CHECK (shoal_child_frozen (child));
    //  A later deadline (the lease was extended): it runs again.
    shoal_child_lease (child, s_mono_ms () + 600000);
    CHECK (s_stopped_soon (pid, false));
    CHECK (!shoal_child_frozen (child));
    shoal_child_destroy (&child);
}

//  A learner or standby is unbound: never frozen for the lease, until it
//  is promoted and given a deadline, which then binds it.
static void
child_lease_binds_once_given (void)
{
    shoal_child_spec_t spec = s_spec ("exec sleep 60", SHOAL_LEARNER);
    spec.until_ms = 1; //  not bound: passed over
    shoal_child_t *child = s_start (&spec);
    if (!child)
        return;
    pid_t pid = shoal_child_pid (child);
    CHECK (shoal_child_until (child) == SHOAL_CHILD_UNBOUND);
    CHECK (!shoal_child_frozen (child));
    shoal_child_lease (child, s_mono_ms () + 200);
    CHECK (s_stopped_soon (pid, true));
    shoal_child_lease (child, SHOAL_CHILD_UNBOUND);
    CHECK (s_stopped_soon (pid, false));
    shoal_child_destroy (&child);
}

//  The worker's freeze and the shim's never undo each other: the shim
//  thaws nothing the worker holds frozen, and a child the worker lets go
//  stays frozen while its deadline has passed. A stop once the deadline
//  has passed kills the child at once: it may not finish its work.
static void
child_lease_and_freeze_agree (void)
{
    shoal_child_spec_t spec = s_spec ("exec sleep 60", SHOAL_ACTIVE);
    spec.bound = true;
    spec.until_ms = s_mono_ms () + 600000;
    shoal_child_t *child = s_start (&spec);
    if (!child)
        return;
    pid_t pid = shoal_child_pid (child);
    shoal_child_freeze (child, true);
    CHECK (s_stopped_soon (pid, true));
    //  Its deadline passes while the worker holds it, then a later one
    //  comes (the shim is woken for it): it stays frozen.
    shoal_child_lease (child, s_mono_ms () + 100);
    s_sleep_ms (300);
    shoal_child_lease (child, s_mono_ms () + 1200000);
    s_sleep_ms (500);
    CHECK_EQ (s_state (pid), 'T');
    //  The worker lets go of it, but its deadline has passed.
    shoal_child_lease (child, 0);
    shoal_child_freeze (child, false);
    s_sleep_ms (500);
    CHECK_EQ (s_state (pid), 'T');
    CHECK (shoal_child_frozen (child));
    //  Both allow it: it runs.
    shoal_child_lease (child, s_mono_ms () + 600000);
    CHECK (s_stopped_soon (pid, false));
    //  Stopped once its deadline has passed: killed, no grace.
    shoal_child_lease (child, s_mono_ms ());
    CHECK (s_stopped_soon (pid, true));
    s_stop_kills_at_once (child);
    shoal_child_destroy (&child);
}

//  What the command leaves behind, told to end and given the grace, ends at
//  once when the deadline passes: it may not act past the lease either.
static void
child_leftovers_end_with_the_lease (void)
{
    char command[512];
    snprintf (command, sizeof command,
              "sh -c 'trap \"\" TERM; echo $$ > %1$s/stubborn.tmp; "
              "mv %1$s/stubborn.tmp %1$s/stubborn; exec sleep 60' & "
              "while [ ! -s %1$s/stubborn ]; do sleep 0.01; done; exit 4",
              s_dir);
    shoal_child_spec_t spec = s_spec (command, SHOAL_ACTIVE);
    spec.bound = true;
    spec.until_ms = s_mono_ms () + 600000;
    shoal_child_t *child = s_start (&spec);
    if (!child)
        return;
    pid_t stubborn = s_pid_file ("stubborn");
    CHECK (stubborn > 0);
    CHECK (s_gone_soon (shoal_child_pid (child)));
    //  The command exited; what it left ignores SIGTERM, and has a grace
    //  of a minute (spec.grace_ms).
    shoal_child_exit_t exit;
    CHECK_EQ (shoal_child_reap (child, &exit), 0);
    shoal_child_lease (child, s_mono_ms ());
    CHECK (s_reaped (child, &exit));
    CHECK_EQ (exit.status, 4);
    CHECK (!s_alive (stubborn));
    s_kill_leftover (stubborn);
    shoal_child_destroy (&child);
}

//  A child that closes its status descriptor, or never uses it, is fine.
static void
child_closes_its_descriptor (void)
{
    shoal_child_t *child = s_child (SHOAL_STANDBY, "exec 3>&-; exec sleep 60");
    if (!child)
        return;
    shoal_status_line_t status;
    CHECK (!s_next_status (child, &status));
    char why[256] = "";
    CHECK_EQ (shoal_child_promote (child, 1, 1, why, sizeof why), -1);
    CHECK (why[0]);
    shoal_child_exit_t exit;
    CHECK_EQ (shoal_child_reap (child, &exit), 0);
    shoal_child_destroy (&child);
    CHECK (!child);
}

//  The worker is SIGKILLed: the command, a grandchild that ignores SIGTERM
//  and one that left the command's group and session all die with it.
static void
child_never_outlives_its_worker (void)
{
    int ready[2];
    CHECK_EQ (pipe (ready), 0);
    pid_t worker = fork ();
    if (worker == 0) {
        //  Plays the worker: starts the child from its only thread, says
        //  so, and waits to be killed.
        close (ready[0]);
        shoal_child_t *child =
            s_child (SHOAL_ACTIVE,
                     "sh -c 'trap \"\" TERM; echo $$ > %1$s/grandchild; exec sleep 60' & "
                     "setsid sh -c 'trap \"\" TERM; echo $$ > %1$s/away; exec sleep 60' & "
                     "echo $$ > %1$s/command; wait",
                     s_dir);
        char shim[32];
        int size = snprintf (shim, sizeof shim, "%d\n", child ? (int) shoal_child_shim (child) : 0);
        if (write (ready[1], shim, (size_t) size) != size)
            _exit (1);
        while (true)
            pause ();
    }
    close (ready[1]);
    char shim_text[32] = "";
    ssize_t size = read (ready[0], shim_text, sizeof shim_text - 1);
    close (ready[0]);
    CHECK (size > 0);
    pid_t shim = (pid_t) atoi (shim_text);
    pid_t command = s_pid_file ("command"), grandchild = s_pid_file ("grandchild"),
          away = s_pid_file ("away");
    CHECK (shim > 0 && command > 0 && grandchild > 0 && away > 0);
    CHECK (s_alive (command) && s_alive (grandchild) && s_alive (away));

    kill (worker, SIGKILL);
    int status;
    waitpid (worker, &status, 0);
    CHECK (s_gone_soon (command));
    CHECK (s_gone_soon (grandchild));
    CHECK (s_gone_soon (away));
    CHECK (s_gone_soon (shim));
    s_kill_leftover (command);
    s_kill_leftover (grandchild);
    s_kill_leftover (away);
    s_kill_leftover (shim);
}

//  The nice value of a process, from /proc (field 19, counted after the
//  parenthesis that ends its name, which may hold spaces); -100 if unread.
static int
s_nice_of (pid_t pid)
{
    char path[64], text[1024];
    snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
    FILE *file = fopen (path, "r");
    size_t size = file ? fread (text, 1, sizeof text - 1, file) : 0;
    if (file)
        fclose (file);
    text[size] = 0;
    char *at = strrchr (text, ')');
    for (int field = 2; at && field < 19; field++)
        at = strchr (at + 1, ' ');
    return at ? atoi (at + 1) : -100;
}

//  A spec's nice value is the command's alone: the command runs that much
//  lower than the worker, the shim that freezes it stays at the worker's.
//  A value past 19 is refused.
static void
child_command_runs_at_its_nice_value (void)
{
    int own = getpriority (PRIO_PROCESS, 0);
    int expected = own + 7 > 19 ? 19 : own + 7;
    shoal_child_spec_t spec =
        s_spec ("cut -d' ' -f19 /proc/self/stat; exec sleep 30", SHOAL_ACTIVE);
    spec.nice = 7;
    shoal_child_t *child = s_start (&spec);
    int stream = 0;
    shoal_output_line_t line;
    CHECK (s_next_output (child, &stream, &line));
    CHECK_EQ (atoi (line.text), expected);
    CHECK_EQ (s_nice_of (shoal_child_pid (child)), expected);
    CHECK_EQ (s_nice_of (shoal_child_shim (child)), own);
    shoal_child_destroy (&child);

    spec.nice = 20;
    char why[128] = "";
    CHECK (!shoal_child_new (&spec, why, sizeof why));
    CHECK_CONTAINS (why, "outside 0..19");
}

int
main (int argc, char **argv)
{
    signal (SIGPIPE, SIG_IGN);
    shoal_child_title_area (argc, argv);
    for (int i = 0; i < argc; i++)
        s_argv_size += strlen (argv[i]) + 1;
    if (!mkdtemp (s_dir)) {
        perror ("mkdtemp");
        return 1;
    }
    RUN (status_lines_give_the_lag_and_readiness);
    RUN (status_bad_lines_are_skipped);
    RUN (status_blank_lines_say_nothing);
    RUN (a_status_line_too_long_is_refused_then_skipped);
    RUN (status_split_across_reads);
    RUN (status_many_lines_in_one_read);
    RUN (output_is_split_into_lines_at_any_read_size);
    RUN (long_output_lines_are_cut_at_the_limit);
    RUN (a_child_gets_the_shoal_environment_and_keeps_the_rest);
    RUN (child_lag_and_promote);
    RUN (child_stop_then_kill_after_grace);
    RUN (child_leftovers_end_with_the_command);
    RUN (child_exit_status_and_signal);
    RUN (child_missing_command_fails);
    RUN (a_childs_two_streams_come_back_as_lines);
    RUN (child_output_a_lot);
    RUN (child_last_words_after_a_long_line);
    RUN (child_shim_is_named_for_its_task);
    RUN (a_child_freezes_and_thaws);
    RUN (child_lease_binds_without_the_worker);
    RUN (child_lease_binds_once_given);
    RUN (child_lease_and_freeze_agree);
    RUN (child_leftovers_end_with_the_lease);
    RUN (child_closes_its_descriptor);
    RUN (child_never_outlives_its_worker);
    RUN (child_command_runs_at_its_nice_value);
    char command[128];
    snprintf (command, sizeof command, "rm -rf %s", s_dir);
    if (system (command) != 0)
        fprintf (stderr, "cannot remove %s\n", s_dir);
    return TEST_DONE ();
}

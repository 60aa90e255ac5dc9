/*  examples/worker/child.c: a task's child for `shoal worker`, in C.

    As a learner or a standby it restores the task's state: it reports its
    falling lag on the status descriptor (SHOAL_STATUS_FD), "lag N" at each
    step, then "ready". When the worker writes "promote TERM.VERSION" there,
    the task is active from then on, in this same process: it counts.
    SIGTERM stops it, saying where it stopped. Each thing it does is one
    line on standard output.

        shoal submit counter --parallelism 4 --stateful \
            --command shoal-example-child

    CHILD_BACKLOG is the lag a learner starts from (50000), CHILD_RESTORE
    what it restores at each step of 0.2 s (10000). It needs no library:
    the environment and the status descriptor are the whole contract
    (docs/worker.md). examples/worker/child.sh is the same in bash.
*/

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STEP_MS  200
#define LINE_MAX 256 //  a status line, its newline included

static volatile sig_atomic_t s_terminated;

static void
s_on_signal (int signal)
{
    (void) signal;
    s_terminated = 1;
}

static uint64_t
s_number (const char *name, uint64_t fallback)
{
    const char *text = getenv (name);
    return text && *text ? strtoull (text, NULL, 10) : fallback;
}

//  Writes one line to the worker. A worker that is gone takes the child
//  with it, so a failed write needs no more than a word.
static void
s_tell (int fd, const char *line)
{
    size_t size = strlen (line);
    if (write (fd, line, size) != (ssize_t) size)
        fprintf (stderr, "cannot tell the worker '%s'\n", line);
}

int
main (void)
{
    const char *task = getenv ("SHOAL_TASK");
    const char *fd_text = getenv ("SHOAL_STATUS_FD");
    if (!task || !fd_text || !getenv ("SHOAL_ROLE") || !getenv ("SHOAL_EPOCH")) {
        fprintf (stderr, "run me as the command of a job of shoal worker\n");
        return 2;
    }
    setvbuf (stdout, NULL, _IOLBF, 0);
    int fd = atoi (fd_text);
    char role[16], epoch[48];
    snprintf (role, sizeof role, "%s", getenv ("SHOAL_ROLE"));
    snprintf (epoch, sizeof epoch, "%s", getenv ("SHOAL_EPOCH"));
    uint64_t lag = strcmp (role, "active") == 0 ? 0 : s_number ("CHILD_BACKLOG", 50000);
    uint64_t restore = s_number ("CHILD_RESTORE", 10000);
    uint64_t count = 0;
    int pid = (int) getpid ();

    struct sigaction action = { .sa_handler = s_on_signal };
    sigaction (SIGTERM, &action, NULL);
    printf ("%s: started as %s, epoch %s (pid %d)\n", task, role, epoch, pid);

    char input[LINE_MAX];
    size_t used = 0;
    bool listening = true;
    while (!s_terminated) {
        //  The wait for the worker's next line is the step's pace.
        struct pollfd poller = { .fd = listening ? fd : -1, .events = POLLIN };
        if (poll (&poller, 1, STEP_MS) > 0) {
            ssize_t size = read (fd, input + used, sizeof input - used);
            if (size <= 0 && !(size < 0 && errno == EINTR))
                listening = false; //  the worker closed its end
            used += size > 0 ? (size_t) size : 0;
            char *end;
            while ((end = memchr (input, '\n', used))) {
                *end = 0;
                if (strncmp (input, "promote ", 8) == 0) {
                    //  The role in the environment is stale from now on.
                    snprintf (role, sizeof role, "active");
                    snprintf (epoch, sizeof epoch, "%.*s", (int) sizeof epoch - 1, input + 8);
                    printf ("%s: promoted to active, epoch %s (pid %d)\n", task, epoch, pid);
                }
                used -= (size_t) (end + 1 - input);
                memmove (input, end + 1, used);
            }
            if (used == sizeof input)
                used = 0; //  a line too long to be the worker's
        }
        if (strcmp (role, "active") == 0) {
            if (++count % 25 == 0)
                printf ("%s: count %llu (pid %d)\n", task, (unsigned long long) count, pid);
        } else if (lag > 0) {
            char line[64];
            lag = lag > restore ? lag - restore : 0;
            snprintf (line, sizeof line, lag ? "lag %llu\n" : "ready\n", (unsigned long long) lag);
            s_tell (fd, line);
            if (lag)
                printf ("%s: restoring, lag %llu (pid %d)\n", task, (unsigned long long) lag, pid);
            else
                printf ("%s: ready (pid %d)\n", task, pid);
        }
    }
    printf ("%s: stopping as %s at count %llu (pid %d)\n", task, role, (unsigned long long) count,
            pid);
    return 0;
}

/*  examples/fenced/fenced.c: a fenced job's task, and the store that fences it.

    A job submitted with --fenced moves as soon as its node is declared
    dead, without waiting for that node's lease to end (docs/jobs.md,
    "Fenced jobs"). A node that was only cut off may then still run the
    task for a while. What keeps the data right is the store: every write
    carries the writer's epoch (SHOAL_EPOCH, then each "promote" line), and
    the store refuses a write whose epoch is older than the newest it has
    accepted for that task. This program shows both sides, with a directory
    as the store:

        shoal submit ledger --parallelism 4 --fenced \
            --command 'FENCED_LEDGER=/shared/ledger exec shoal-example-fenced'
        shoal-example-fenced check /shared/ledger

    As a job's command, an active appends a record to the task's ledger
    every FENCED_WRITE_MS (100). Each write takes an exclusive lock on the
    task's ledger, compares its epoch with the newest accepted one, and
    either appends the record or refuses it; a refusal is recorded too, and
    the writer stops writing: it was fenced out, and waits to be stopped
    (or promoted again, with a newer epoch). A learner or a standby has no
    state to warm up here: it says "ready" and waits for its promotion.

    A ledger DIR holds, per task JOB-INDEX: JOB-INDEX.log, the accepted
    records, "TERM.VERSION NODE PID SEQ MICROSECONDS" a line;
    JOB-INDEX.refused, the refused ones, with the epoch that refused them;
    JOB-INDEX.epoch, the newest epoch accepted. `check DIR` reads every log
    and exits 1 when an epoch ever goes back in one: with a store like this
    one, it never can.

    It refuses to run in a job that is not fenced (SHOAL_FENCED is not 1):
    its tasks would then be moved a lease later, and nothing here would be
    wrong, but it is not what it is for.
*/

#define _GNU_SOURCE //  dprintf, flock

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LINE_MAX_BYTES 256 //  a status line, its newline included (docs/worker.md)
#define PATH_BYTES     4096

typedef struct {
    uint64_t term;
    uint64_t version;
} epoch_t;

static volatile sig_atomic_t s_terminated;

static void
s_on_signal (int signal)
{
    (void) signal;
    s_terminated = 1;
}

//  "TERM.VERSION" into *epoch: 0, or -1 when text is not one.
static int
s_epoch_parse (const char *text, epoch_t *epoch)
{
    char *end;
    errno = 0;
    unsigned long long term = strtoull (text, &end, 10);
    if (end == text || *end != '.' || errno)
        return -1;
    const char *rest = end + 1;
    unsigned long long version = strtoull (rest, &end, 10);
    if (end == rest || errno || (*end && *end != '\n' && *end != ' '))
        return -1;
    *epoch = (epoch_t){ term, version };
    return 0;
}

static int
s_epoch_compare (epoch_t a, epoch_t b)
{
    if (a.term != b.term)
        return a.term < b.term ? -1 : 1;
    return a.version < b.version ? -1 : a.version > b.version;
}

static uint64_t
s_now_us (void)
{
    struct timespec now;
    clock_gettime (CLOCK_REALTIME, &now);
    return (uint64_t) now.tv_sec * 1000000 + (uint64_t) now.tv_nsec / 1000;
}

//  ---------------------------------------------------------------------
//  The store

typedef struct {
    char log[PATH_BYTES];
    char refused[PATH_BYTES];
    char epoch[PATH_BYTES];
} ledger_t;

static int
s_ledger_open (ledger_t *self, const char *dir, const char *task)
{
    char name[128];
    int length = snprintf (name, sizeof name, "%s", task);
    if (length <= 0 || (size_t) length >= sizeof name)
        return -1;
    for (char *at = name; *at; at++)
        if (*at == '/')
            *at = '-';
    int a = snprintf (self->log, PATH_BYTES, "%s/%s.log", dir, name);
    int b = snprintf (self->refused, PATH_BYTES, "%s/%s.refused", dir, name);
    int c = snprintf (self->epoch, PATH_BYTES, "%s/%s.epoch", dir, name);
    return a < PATH_BYTES && b < PATH_BYTES && c < PATH_BYTES ? 0 : -1;
}

//  The newest epoch accepted, from the epoch file ({0, 0} when none yet).
static epoch_t
s_ledger_newest (const ledger_t *self)
{
    epoch_t newest = { 0, 0 };
    FILE *file = fopen (self->epoch, "r");
    char text[64];
    if (file && fgets (text, sizeof text, file))
        s_epoch_parse (text, &newest);
    if (file)
        fclose (file);
    return newest;
}

//  Appends line to path (one write, O_APPEND). 0, or -1.
static int
s_append (const char *path, const char *line)
{
    int fd = open (path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    size_t size = strlen (line);
    int rc = write (fd, line, size) == (ssize_t) size ? 0 : -1;
    close (fd);
    return rc;
}

//  The write of a record under epoch: accepted (1), refused because the
//  ledger holds a newer epoch (0, *newest says which), or failed (-1). The
//  lock on the log makes the compare and the append one step.
static int
s_ledger_write (const ledger_t *self, epoch_t epoch, const char *record, epoch_t *newest)
{
    int lock = open (self->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (lock < 0 || flock (lock, LOCK_EX) != 0) {
        if (lock >= 0)
            close (lock);
        return -1;
    }
    *newest = s_ledger_newest (self);
    char line[512];
    int rc;
    if (s_epoch_compare (epoch, *newest) < 0) {
        snprintf (line, sizeof line, "%s newest=%" PRIu64 ".%" PRIu64 "\n", record, newest->term,
                  newest->version);
        rc = s_append (self->refused, line) == 0 ? 0 : -1;
    } else {
        snprintf (line, sizeof line, "%s\n", record);
        rc = s_append (self->log, line) == 0 ? 1 : -1;
        if (rc == 1 && s_epoch_compare (epoch, *newest) > 0) {
            char text[64];
            snprintf (text, sizeof text, "%" PRIu64 ".%" PRIu64 "\n", epoch.term, epoch.version);
            char temporary[PATH_BYTES + 8];
            snprintf (temporary, sizeof temporary, "%s.%d", self->epoch, (int) getpid ());
            FILE *file = fopen (temporary, "w");
            bool written = file && fputs (text, file) >= 0;
            if (file)
                written &= fclose (file) == 0;
            if (!written || rename (temporary, self->epoch) != 0)
                rc = -1;
        }
    }
    flock (lock, LOCK_UN);
    close (lock);
    return rc;
}

//  ---------------------------------------------------------------------
//  The task

typedef struct {
    const char *task;
    const char *node;
    int status_fd;
    bool active;
    bool fenced_out;
    epoch_t epoch;
    uint64_t seq;
    char pending[LINE_MAX_BYTES];
    size_t pending_size;
} writer_t;

//  One line from the worker: "promote TERM.VERSION" makes it active under
//  that epoch (a newer one lets a fenced-out writer write again).
static void
s_writer_line (writer_t *self, const char *line)
{
    epoch_t epoch;
    if (strncmp (line, "promote ", 8) != 0 || s_epoch_parse (line + 8, &epoch) != 0)
        return;
    if (self->fenced_out && s_epoch_compare (epoch, self->epoch) <= 0)
        return;
    self->active = true;
    self->fenced_out = false;
    self->epoch = epoch;
    printf ("%s: active, epoch %" PRIu64 ".%" PRIu64 "\n", self->task, epoch.term, epoch.version);
}

//  Reads what the worker wrote, line by line. -1 once it closed.
static int
s_writer_read (writer_t *self)
{
    char buffer[LINE_MAX_BYTES];
    ssize_t got = read (self->status_fd, buffer, sizeof buffer);
    if (got <= 0)
        return got == 0 || (errno != EINTR && errno != EAGAIN) ? -1 : 0;
    for (ssize_t i = 0; i < got; i++) {
        if (buffer[i] == '\n') {
            self->pending[self->pending_size] = 0;
            s_writer_line (self, self->pending);
            self->pending_size = 0;
        } else if (self->pending_size < sizeof self->pending - 1)
            self->pending[self->pending_size++] = buffer[i];
    }
    return 0;
}

static void
s_writer_write (writer_t *self, const ledger_t *ledger)
{
    char record[256];
    snprintf (record, sizeof record, "%" PRIu64 ".%" PRIu64 " %.8s %d %" PRIu64 " %" PRIu64,
              self->epoch.term, self->epoch.version, self->node, (int) getpid (), ++self->seq,
              s_now_us ());
    epoch_t newest;
    int rc = s_ledger_write (ledger, self->epoch, record, &newest);
    if (rc < 0)
        fprintf (stderr, "%s: cannot write the ledger: %s\n", self->task, strerror (errno));
    else if (rc == 0) {
        self->fenced_out = true;
        printf ("%s: fenced out: epoch %" PRIu64 ".%" PRIu64 " is older than the ledger's %" PRIu64
                ".%" PRIu64 "; no more writes\n",
                self->task, self->epoch.term, self->epoch.version, newest.term, newest.version);
    }
}

static int
s_run (void)
{
    const char *task = getenv ("SHOAL_TASK"), *role = getenv ("SHOAL_ROLE");
    const char *epoch_text = getenv ("SHOAL_EPOCH"), *fd_text = getenv ("SHOAL_STATUS_FD");
    const char *fenced = getenv ("SHOAL_FENCED"), *dir = getenv ("FENCED_LEDGER");
    if (!task || !role || !epoch_text || !fd_text) {
        fprintf (stderr, "run me as the command of a job of shoal worker\n");
        return 2;
    }
    if (!fenced || strcmp (fenced, "1") != 0) {
        fprintf (stderr, "%s: this writer is for a fenced job (shoal submit --fenced)\n", task);
        return 2;
    }
    ledger_t ledger;
    if (!dir || !*dir || s_ledger_open (&ledger, dir, task) != 0) {
        fprintf (stderr, "%s: set FENCED_LEDGER to the ledger's directory\n", task);
        return 2;
    }
    if (mkdir (dir, 0755) != 0 && errno != EEXIST) {
        fprintf (stderr, "%s: cannot make the ledger %s: %s\n", task, dir, strerror (errno));
        return 2;
    }
    writer_t writer = { .task = task,
                        .node = getenv ("SHOAL_NODE") ? getenv ("SHOAL_NODE") : "",
                        .status_fd = atoi (fd_text),
                        .active = strcmp (role, "active") == 0 };
    if (s_epoch_parse (epoch_text, &writer.epoch) != 0) {
        fprintf (stderr, "%s: SHOAL_EPOCH '%s' is not TERM.VERSION\n", task, epoch_text);
        return 2;
    }
    uint64_t period_ms =
        getenv ("FENCED_WRITE_MS") ? strtoull (getenv ("FENCED_WRITE_MS"), NULL, 10) : 100;
    if (period_ms == 0 || period_ms > 60000)
        period_ms = 100;
    setvbuf (stdout, NULL, _IOLBF, 0);
    struct sigaction action = { .sa_handler = s_on_signal };
    sigaction (SIGTERM, &action, NULL);
    printf ("%s: started as %s, epoch %s\n", task, role, epoch_text);
    if (!writer.active && dprintf (writer.status_fd, "ready\n") < 0)
        fprintf (stderr, "%s: cannot tell the worker it is ready\n", task);
    bool listening = true;
    while (!s_terminated) {
        if (writer.active && !writer.fenced_out)
            s_writer_write (&writer, &ledger);
        struct pollfd poll_fd = { .fd = listening ? writer.status_fd : -1, .events = POLLIN };
        int ready = poll (&poll_fd, 1, (int) period_ms);
        if (ready > 0 && s_writer_read (&writer) != 0)
            listening = false; //  the worker closed it; go on until SIGTERM
    }
    printf ("%s: stopping after %" PRIu64 " writes\n", task, writer.seq);
    return 0;
}

//  ---------------------------------------------------------------------
//  The check

//  Checks one task's log: its epochs never go back. Prints a summary line.
static int
s_check_log (const char *dir, const char *name)
{
    char path[PATH_BYTES];
    snprintf (path, sizeof path, "%s/%s", dir, name);
    FILE *file = fopen (path, "r");
    if (!file) {
        fprintf (stderr, "%s: %s\n", path, strerror (errno));
        return -1;
    }
    char line[512];
    epoch_t last = { 0, 0 }, first = { 0, 0 };
    uint64_t writes = 0, epochs = 0, back = 0;
    while (fgets (line, sizeof line, file)) {
        epoch_t epoch;
        if (s_epoch_parse (line, &epoch) != 0)
            continue; //  a line cut short by a crash
        if (writes == 0)
            first = epoch;
        if (writes && s_epoch_compare (epoch, last) < 0) {
            back++;
            fprintf (stderr, "%s: line %" PRIu64 " goes back to epoch %" PRIu64 ".%" PRIu64 "\n",
                     name, writes + 1, epoch.term, epoch.version);
        }
        epochs += writes == 0 || s_epoch_compare (epoch, last) != 0;
        last = epoch;
        writes++;
    }
    fclose (file);
    snprintf (path, sizeof path, "%s/%.*s.refused", dir, (int) (strlen (name) - 4), name);
    uint64_t refused = 0;
    file = fopen (path, "r");
    while (file && fgets (line, sizeof line, file))
        refused++;
    if (file)
        fclose (file);
    printf ("%.*s: %" PRIu64 " writes in %" PRIu64 " epochs (%" PRIu64 ".%" PRIu64 " to %" PRIu64
            ".%" PRIu64 "), %" PRIu64 " refused%s\n",
            (int) (strlen (name) - 4), name, writes, epochs, first.term, first.version, last.term,
            last.version, refused, back ? ", EPOCHS GO BACK" : "");
    return back ? -1 : 0;
}

static int
s_check (const char *dir)
{
    DIR *listing = opendir (dir);
    if (!listing) {
        fprintf (stderr, "cannot read the ledger %s: %s\n", dir, strerror (errno));
        return 2;
    }
    int failed = 0, logs = 0;
    struct dirent *entry;
    while ((entry = readdir (listing))) {
        size_t length = strlen (entry->d_name);
        if (length <= 4 || strcmp (entry->d_name + length - 4, ".log") != 0)
            continue;
        logs++;
        failed |= s_check_log (dir, entry->d_name) != 0;
    }
    closedir (listing);
    if (logs == 0)
        printf ("no task wrote to %s yet\n", dir);
    return failed ? 1 : 0;
}

int
main (int argc, char **argv)
{
    if (argc == 3 && strcmp (argv[1], "check") == 0)
        return s_check (argv[2]);
    if (argc > 1) {
        fprintf (stderr, "usage: shoal-example-fenced              (as a fenced job's command)\n"
                         "       shoal-example-fenced check DIR    (checks a ledger)\n");
        return 2;
    }
    return s_run ();
}

/*  tools/shoal.c: the `shoal` command.

    Exit status: 0 on success, 1 when the command failed, 2 on a usage error.
*/

#include "shoal.h"

#include "rebalance/assign_json.h"
#include "worker/child.h"
#include "tools/client.h"
#include "tools/logs.h"
#include "wire/keyring.h"
#include "worker/worker.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXIT_FAILED 1
#define EXIT_USAGE  2

static const char s_usage[] =
    "usage: shoal COMMAND [OPTIONS]\n"
    "       shoal --version | --help\n"
    "\n"
    "shoal is a peer-to-peer worker runtime: workers discover each other, keep a\n"
    "shared view of who is alive by gossip, elect a leader, and run tasks that the\n"
    "leader hands out incrementally.\n"
    "\n"
    "commands:\n"
    "  worker [--KEY VALUE]...        run a node that runs each task it is given as a\n"
    "                                 child process of the job's command\n"
    "  keygen [--out FILE] [--json]   print a new cluster key (base64, 32 bytes)\n"
    "  assign [FILE]                  print the assignment the leader would make for\n"
    "                                 a cluster described in JSON (docs/assign.md)\n"
    "\n"
    "cluster commands, asking a running node through its control endpoint:\n"
    "  members                        the members the node knows\n"
    "  status                         the leader, and every task with its node and role\n"
    "  jobs                           the job specs\n"
    "  submit NAME --parallelism N    submit a job (--stateful, --require K=V, ...)\n"
    "  rescale JOB N [--min M]        set a job's parallelism, waiting for room\n"
    "  remove JOB                     remove a job\n"
    "  leave                          make the node leave the cluster gracefully\n"
    "  drain [NODE] [--leave]         move the node's tasks away, warmed up first,\n"
    "                                 then (--leave) make it leave\n"
    "  cordon [NODE], uncordon [NODE] the node takes no new task; takes tasks again\n"
    "  keys list|install|use|remove   rotate the cluster key, on every live member\n"
    "  logs TASK [--node NAME]        the last lines of a task's output\n"
    "\n"
    "Run 'shoal COMMAND --help' for a command's options.\n";

static const char s_keygen_usage[] =
    "usage: shoal keygen [--out FILE] [--json]\n"
    "\n"
    "Prints a new cluster key: 32 random bytes from the system, in base64.\n"
    "Give the same key to every node of a cluster; it seals every\n"
    "beacon, datagram and frame.\n"
    "\n"
    "  --out FILE   write the key to FILE (created with mode 0600; an existing\n"
    "               file is never overwritten) instead of standard output\n"
    "  --json       print {\"key\": ..., \"id\": ...} (id: how envelopes name the key)\n";

static const char s_assign_usage[] =
    "usage: shoal assign [FILE | -]\n"
    "\n"
    "Reads one cluster description as JSON from FILE, or from standard input\n"
    "when FILE is absent or '-', and prints the assignment the leader would\n"
    "make: which node holds each task as active, standby or learner. It runs\n"
    "the leader's own assignor, so this is what the leader would do.\n"
    "\n"
    "input:   {\"config\": {\"standbys\": 1, \"max_warmups\": 2, ...},\n"
    "          \"nodes\": [{\"id\": \"n1\", \"capacity\": 1, \"labels\": {...}}, ...],\n"
    "          \"tasks\": [{\"id\": \"ingest/0\", \"stateful\": true}, ...],\n"
    "          \"current\": {\"n1\": {\"active\": [\"ingest/0\"]}},\n"
    "          \"lags\": {\"n2\": {\"ingest/0\": 1500}}}\n"
    "output:  {\"assignment\": {\"n1\": {\"active\": [...], \"standby\": [...],\n"
    "                                 \"learner\": [...]}, ...},\n"
    "          \"unassigned\": [...], \"followup\": false,\n"
    "          \"moves\": {\"active\": 0, \"standby\": 0, \"learner\": 0}}\n"
    "\n"
    "Exit status: 0 with an assignment; 2 with one line naming the offending\n"
    "field when the input breaks the format (unknown keys are refused too);\n"
    "1 when FILE cannot be read. Input is at most 64 MiB.\n"
    "The format, its defaults and limits: docs/assign.md.\n";

//  Says what was wrong and where help is, on standard error.
static int
s_usage_error (const char *help, const char *format, const char *arg)
{
    fprintf (stderr, "shoal: ");
    fprintf (stderr, format, arg);
    fprintf (stderr, "\nRun '%s --help' for usage.\n", help);
    return EXIT_USAGE;
}

//  Writes text to a new file readable by its owner only.
static int
s_write_new_file (const char *path, const char *text)
{
    int fd = open (path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        fprintf (stderr, "shoal: cannot create %s: %s\n", path, strerror (errno));
        return -1;
    }
    size_t size = strlen (text);
    ssize_t written = write (fd, text, size);
    int saved = errno;
    if (fsync (fd) != 0 && written == (ssize_t) size)
        saved = errno, written = -1;
    close (fd);
    if (written != (ssize_t) size) {
        fprintf (stderr, "shoal: cannot write %s: %s\n", path, strerror (saved));
        unlink (path);
        return -1;
    }
    return 0;
}

static int
s_keygen (int argc, char **argv)
{
    const char *out = NULL;
    bool json = false;
    for (int i = 0; i < argc; i++) {
        if (strcmp (argv[i], "--help") == 0 || strcmp (argv[i], "-h") == 0) {
            fputs (s_keygen_usage, stdout);
            return 0;
        } else if (strcmp (argv[i], "--json") == 0)
            json = true;
        else if (strcmp (argv[i], "--out") == 0) {
            if (i + 1 == argc)
                return s_usage_error ("shoal keygen", "%s needs a file name", argv[i]);
            out = argv[++i];
        } else
            return s_usage_error ("shoal keygen", "keygen: unknown option '%s'", argv[i]);
    }
    uint8_t key[SHOAL_KEY_BYTES];
    char text[SHOAL_KEY_TEXT_BYTES];
    if (shoal_key_generate (key) != 0) {
        fprintf (stderr, "shoal: the system has no usable random source\n");
        return EXIT_FAILED;
    }
    shoal_key_format (key, text);
    char line[128];
    if (json)
        snprintf (line, sizeof line, "{\"key\": \"%s\", \"id\": \"%08x\"}\n", text,
                  shoal_key_id (key));
    else
        snprintf (line, sizeof line, "%s\n", text);
    sodium_memzero (key, sizeof key);
    sodium_memzero (text, sizeof text);
    int rc;
    if (out)
        rc = s_write_new_file (out, line) == 0 ? 0 : EXIT_FAILED;
    else {
        fputs (line, stdout);
        rc = fflush (stdout) == 0 ? 0 : EXIT_FAILED;
    }
    sodium_memzero (line, sizeof line);
    return rc;
}

//  Reads a whole stream into a new buffer, stopping one byte past limit so
//  that the caller can tell a stream that is too long. NULL on a read error
//  (errno says which) or when out of memory.
static char *
s_read_all (FILE *file, size_t limit, size_t *size)
{
    size_t capacity = 0, used = 0;
    char *buffer = NULL;
    while (used <= limit) {
        if (used == capacity) {
            capacity = capacity ? 2 * capacity : 65536;
            if (capacity > limit + 1)
                capacity = limit + 1;
            char *bigger = realloc (buffer, capacity);
            if (!bigger) {
                free (buffer);
                errno = ENOMEM;
                return NULL;
            }
            buffer = bigger;
        }
        size_t n = fread (buffer + used, 1, capacity - used, file);
        used += n;
        if (n == 0 && ferror (file)) {
            int saved = errno;
            free (buffer);
            errno = saved;
            return NULL;
        }
        if (n == 0)
            break;
    }
    *size = used;
    return buffer;
}

//  The input is refused with one line, "shoal assign: <reason>", and exit
//  status 2, so that scripts and tests can tell bad input from a failure.
static int
s_assign_refuse (const char *reason)
{
    fprintf (stderr, "shoal assign: %s\n", reason);
    return EXIT_USAGE;
}

static int
s_assign (int argc, char **argv)
{
    const char *path = NULL;
    for (int i = 0; i < argc; i++) {
        if (strcmp (argv[i], "--help") == 0 || strcmp (argv[i], "-h") == 0) {
            fputs (s_assign_usage, stdout);
            return 0;
        } else if (argv[i][0] == '-' && argv[i][1] != 0)
            return s_usage_error ("shoal assign", "assign: unknown option '%s'", argv[i]);
        else if (path)
            return s_usage_error ("shoal assign", "assign: one input file at most, not '%s'",
                                  argv[i]);
        else
            path = argv[i];
    }
    bool from_stdin = !path || strcmp (path, "-") == 0;
    const char *name = from_stdin ? "standard input" : path;
    FILE *file = from_stdin ? stdin : fopen (path, "rb");
    size_t size = 0;
    char *text = file ? s_read_all (file, SHOAL_ASSIGN_JSON_SIZE_MAX, &size) : NULL;
    int saved = errno;
    if (file && !from_stdin)
        fclose (file);
    if (!text) {
        fprintf (stderr, "shoal assign: cannot read %s: %s\n", name, strerror (saved));
        return EXIT_FAILED;
    }
    char why[512];
    shoal_assign_json_t *description;
    int rc = shoal_assign_json_parse (text, size, &description, why, sizeof why);
    free (text);
    if (rc)
        return s_assign_refuse (why);

    shoal_assign_output_t output;
    if (shoal_assign (shoal_assign_json_input (description), &output, why, sizeof why)) {
        //  The parser refuses every input the assignor would: what is left
        //  is a failure, such as no memory.
        shoal_assign_json_destroy (&description);
        fprintf (stderr, "shoal assign: %s\n", why);
        return EXIT_FAILED;
    }
    char *json = shoal_assign_json_render (shoal_assign_json_input (description), &output);
    shoal_assign_output_release (&output);
    shoal_assign_json_destroy (&description);
    if (!json) {
        fprintf (stderr, "shoal assign: out of memory\n");
        return EXIT_FAILED;
    }
    bool written = fputs (json, stdout) >= 0 && fputc ('\n', stdout) != EOF;
    free (json);
    if (fflush (stdout) != 0 || !written) {
        fprintf (stderr, "shoal assign: cannot write the output: %s\n", strerror (errno));
        return EXIT_FAILED;
    }
    return 0;
}

int
main (int argc, char **argv)
{
    if (argc < 2)
        return s_usage_error ("shoal", "%s", "no command given");
    const char *command = argv[1];
    if (strcmp (command, "--help") == 0 || strcmp (command, "-h") == 0 ||
        strcmp (command, "help") == 0) {
        fputs (s_usage, stdout);
        return 0;
    }
    if (strcmp (command, "--version") == 0 || strcmp (command, "version") == 0) {
        printf ("shoal %s\n", shoal_version ());
        return 0;
    }
    if (strcmp (command, "keygen") == 0)
        return s_keygen (argc - 2, argv + 2);
    if (strcmp (command, "assign") == 0)
        return s_assign (argc - 2, argv + 2);
    if (strcmp (command, "worker") == 0) {
        //  Each task's shim, a fork of the worker, names itself there.
        shoal_child_title_area (argc, argv);
        return shoal_worker_main (argc - 2, argv + 2);
    }
    if (strcmp (command, "logs") == 0)
        return shoal_logs_main (argc - 2, argv + 2);
    int rc = shoal_client_main (command, argc - 2, argv + 2);
    if (rc >= 0)
        return rc;
    return s_usage_error ("shoal", "unknown command '%s'", command);
}

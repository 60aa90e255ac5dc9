/*  tools/shoal.c: the `shoal` command.

    Exit status: 0 on success, 1 when the command failed, 2 on a usage error.
*/

#include "shoal.h"

#include "keyring.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdbool.h>
#include <stdio.h>
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
    "  keygen [--out FILE] [--json]   print a new cluster key (base64, 32 bytes)\n"
    "\n"
    "The worker and the cluster commands (worker, members, status, jobs, submit,\n"
    "rescale, remove, leave, assign) are not in this build yet; see README.md.\n"
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
    return s_usage_error ("shoal", "unknown command '%s'", command);
}

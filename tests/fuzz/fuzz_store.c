/*  tests/fuzz/fuzz_store.c: reading a file of the data directory.

    The input is the whole content of one file, as a disk, a crash or a
    person may have left it; it is written raw into a scratch data
    directory, made once, and read through the store. A refusal must come
    with a reason and no payload. A payload must be the one the file holds,
    and the file must be exactly what the store writes for it, since the
    format has one encoding of each payload: writing the payload back gives
    the same bytes, and reading those gives the same payload.
*/

#include "tests/fuzz/fuzz.h"

#include "node/store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FILE_NAME "fuzzed"

//  The scratch directory is on tmpfs where there is one: on a disk, ext4
//  flushes a file rewritten after a truncation each time it is closed,
//  which makes the fuzzer a hundred times slower.
static char s_dir[64];
static char s_path[sizeof s_dir + sizeof FILE_NAME];
static shoal_store_t *s_store;

static void
s_remove_scratch (void)
{
    shoal_store_close (&s_store);
    char lock[sizeof s_dir + sizeof "/LOCK"];
    snprintf (lock, sizeof lock, "%s/LOCK", s_dir);
    unlink (s_path);
    unlink (lock);
    rmdir (s_dir);
}

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
    (void) argc;
    (void) argv;
    const char *bases[] = { "/dev/shm", "/tmp" };
    bool made = false;
    for (size_t i = 0; i < 2 && !made; i++) {
        snprintf (s_dir, sizeof s_dir, "%s/shoal-fuzz-store-XXXXXX", bases[i]);
        made = mkdtemp (s_dir) != NULL;
    }
    FUZZ_REQUIRE (made, "cannot make a scratch directory: %s", strerror (errno));
    snprintf (s_path, sizeof s_path, "%s/" FILE_NAME, s_dir);
    char why[256];
    FUZZ_REQUIRE (shoal_store_open (s_dir, &s_store, why, sizeof why) == 0,
                  "cannot open the scratch store: %s", why);
    atexit (s_remove_scratch);
    return 0;
}

//  Replaces the file with raw bytes, bypassing the store.
static void
s_spill (const uint8_t *data, size_t size)
{
    int fd = open (s_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    FUZZ_REQUIRE (fd >= 0, "cannot create %s: %s", s_path, strerror (errno));
    for (size_t done = 0; done < size;) {
        ssize_t written = write (fd, data + done, size - done);
        FUZZ_REQUIRE (written > 0, "cannot write %s: %s", s_path, strerror (errno));
        done += (size_t) written;
    }
    FUZZ_REQUIRE (close (fd) == 0, "cannot close %s: %s", s_path, strerror (errno));
}

//  True when the file holds exactly size bytes of data.
static bool
s_file_is (const uint8_t *data, size_t size)
{
    int fd = open (s_path, O_RDONLY | O_CLOEXEC);
    FUZZ_REQUIRE (fd >= 0, "cannot open %s: %s", s_path, strerror (errno));
    uint8_t *file = malloc (size + 1);
    FUZZ_REQUIRE (file, "no memory for %zu bytes", size + 1);
    size_t got = 0;
    ssize_t count;
    while (got < size + 1 && (count = read (fd, file + got, size + 1 - got)) > 0)
        got += (size_t) count;
    close (fd);
    bool same = got == size && memcmp (file, data, size) == 0;
    free (file);
    return same;
}

static int
s_read (void **payload, size_t *size, char *why, size_t why_size)
{
    memset (why, 'X', why_size);
    *payload = (void *) 1;
    *size = 1;
    int rc = shoal_store_read (s_store, FILE_NAME, payload, size, why, why_size);
    FUZZ_REQUIRE (rc == 0 || rc == -1, "reading a file that is there returned %d", rc);
    if (rc == 0)
        FUZZ_REQUIRE (*payload && *size <= SHOAL_STORE_SIZE_MAX,
                      "a payload of %zu bytes was accepted%s", *size, *payload ? "" : " as NULL");
    else
        FUZZ_REQUIRE (!*payload && *size == 0 && memchr (why, '\0', why_size) && why[0] != '\0',
                      "a refusal without a reason, or with a payload of %zu bytes", *size);
    return rc;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    s_spill (data, size);
    void *payload;
    size_t payload_size;
    char why[256];
    if (s_read (&payload, &payload_size, why, sizeof why) != 0)
        return 0;

    FUZZ_REQUIRE (size == SHOAL_STORE_HEADER + payload_size + SHOAL_STORE_CHECKSUM &&
                      memcmp (payload, data + SHOAL_STORE_HEADER, payload_size) == 0,
                  "a file of %zu bytes was read as another payload of %zu bytes", size,
                  payload_size);
    FUZZ_REQUIRE (shoal_store_write (s_store, FILE_NAME, payload, payload_size, why, sizeof why) ==
                      0,
                  "an accepted payload of %zu bytes does not write back: %s", payload_size, why);
    FUZZ_REQUIRE (s_file_is (data, size), "a payload of %zu bytes writes back as another file",
                  payload_size);

    void *again;
    size_t again_size;
    FUZZ_REQUIRE (s_read (&again, &again_size, why, sizeof why) == 0,
                  "a payload written back does not read: %s", why);
    FUZZ_REQUIRE (again_size == payload_size && memcmp (again, payload, payload_size) == 0,
                  "a payload of %zu bytes reads back as %zu other bytes", payload_size, again_size);
    free (again);
    free (payload);
    return 0;
}

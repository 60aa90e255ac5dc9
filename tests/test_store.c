/*  tests/test_store.c: the data directory's files.

    A store gives back exactly the bytes written under a name, or refuses
    with a reason: these tests write files through it, then damage them
    every way a disk, a crash or a person can (cut short at every length,
    every bit flipped, each header field made wrong behind a valid
    checksum) and check that nothing damaged is ever trusted. They also
    check the promises around a write that fails, the lock, and the temp
    files a crash leaves. Everything happens under one scratch directory,
    removed at the end.
*/

#include "node/store.h"
#include "tests/test.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sodium.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static char s_scratch[] = "/tmp/shoal-test-store-XXXXXX";

//  A fresh data directory's path under the scratch directory, not created.
static const char *
s_dir (const char *leaf)
{
    static char path[256];
    snprintf (path, sizeof path, "%s/%s", s_scratch, leaf);
    return path;
}

//  The path of a file in a data directory.
static const char *
s_path (const char *dir, const char *name)
{
    static char path[512];
    snprintf (path, sizeof path, "%s/%s", dir, name);
    return path;
}

static shoal_store_t *
s_open (const char *dir)
{
    char why[256] = "";
    shoal_store_t *store = NULL;
    int rc = shoal_store_open (dir, &store, why, sizeof why);
    if (rc != 0)
        fprintf (stderr, "  cannot open %s: %s\n", dir, why);
    CHECK_EQ (rc, 0);
    return store;
}

//  The raw bytes of a file; *size -1 when it cannot be read.
static uint8_t *
s_slurp (const char *path, long *size)
{
    *size = -1;
    FILE *file = fopen (path, "rb");
    if (!file)
        return NULL;
    uint8_t *bytes = NULL;
    if (fseek (file, 0, SEEK_END) == 0) {
        long length = ftell (file);
        bytes = malloc (length > 0 ? (size_t) length : 1);
        rewind (file);
        if (bytes && fread (bytes, 1, (size_t) length, file) == (size_t) length)
            *size = length;
    }
    fclose (file);
    return bytes;
}

//  Replaces a file with raw bytes, as something other than the store would.
static void
s_spill (const char *path, const void *bytes, size_t size)
{
    FILE *file = fopen (path, "wb");
    CHECK (file != NULL);
    if (!file)
        return;
    CHECK_EQ (fwrite (bytes, 1, size, file), size);
    CHECK_EQ (fclose (file), 0);
}

//  A file laid out by hand as store.h documents it, with a valid checksum
//  over whatever the header says: the reference the tests hold the store
//  to, and the way to reach each header check behind the checksum.
static uint8_t *
s_craft (const uint8_t header[SHOAL_STORE_HEADER], const void *payload, size_t size,
         size_t *file_size)
{
    *file_size = SHOAL_STORE_HEADER + size + SHOAL_STORE_CHECKSUM;
    uint8_t *file = malloc (*file_size);
    memcpy (file, header, SHOAL_STORE_HEADER);
    if (size)
        memcpy (file + SHOAL_STORE_HEADER, payload, size);
    crypto_generichash (file + SHOAL_STORE_HEADER + size, SHOAL_STORE_CHECKSUM, file,
                        SHOAL_STORE_HEADER + size, NULL, 0);
    return file;
}

static void
s_header (uint8_t header[SHOAL_STORE_HEADER], uint64_t length)
{
    memset (header, 0, SHOAL_STORE_HEADER);
    memcpy (header, "SHOALST\0", 8);
    header[8] = 1;
    for (int i = 0; i < 8; i++)
        header[16 + i] = (uint8_t) (length >> (56 - 8 * i));
}

//  Reads name and expects a refusal whose reason contains needle.
static void
s_expect_refused (shoal_store_t *store, const char *name, const char *needle)
{
    char why[256] = "";
    void *data = (void *) 1;
    size_t size = 1;
    CHECK_EQ (shoal_store_read (store, name, &data, &size, why, sizeof why), -1);
    CHECK (data == NULL);
    CHECK_EQ (size, 0);
    CHECK_CONTAINS (why, needle);
}

//  Reads name and expects exactly size bytes of expected.
static void
s_expect_content (shoal_store_t *store, const char *name, const void *expected, size_t size)
{
    char why[256] = "";
    void *data = NULL;
    size_t got = 0;
    int rc = shoal_store_read (store, name, &data, &got, why, sizeof why);
    if (rc != 0)
        fprintf (stderr, "  reading %s: %s\n", name, why);
    CHECK_EQ (rc, 0);
    CHECK (data != NULL);
    CHECK_EQ (got, size);
    CHECK (got == size && (size == 0 || memcmp (data, expected, size) == 0));
    free (data);
}

//  How many entries the directory holds besides ".", ".." and LOCK: the
//  files written, and any temp file a write left behind.
static int
s_entries (const char *dir)
{
    DIR *entries = opendir (dir);
    if (!entries)
        return -1;
    int count = 0;
    struct dirent *entry;
    while ((entry = readdir (entries)))
        if (strcmp (entry->d_name, ".") && strcmp (entry->d_name, "..") &&
            strcmp (entry->d_name, "LOCK"))
            count++;
    closedir (entries);
    return count;
}

//  Removes path and everything under it, whatever its permissions.
static void
s_remove_tree (const char *path)
{
    struct stat status;
    if (lstat (path, &status) != 0)
        return;
    if (S_ISDIR (status.st_mode)) {
        chmod (path, 0700);
        DIR *entries = opendir (path);
        struct dirent *entry;
        while (entries && (entry = readdir (entries))) {
            if (strcmp (entry->d_name, ".") == 0 || strcmp (entry->d_name, "..") == 0)
                continue;
            char child[512];
            snprintf (child, sizeof child, "%s/%s", path, entry->d_name);
            s_remove_tree (child);
        }
        if (entries)
            closedir (entries);
    }
    remove (path);
}

//  ---------------------------------------------------------------------
//  Round trips

static void
payloads_of_every_size_come_back_exactly (void)
{
    const char *dir = s_dir ("round-trip");
    shoal_store_t *store = s_open (dir);
    const size_t sizes[] = { 0, 1, 2, 1000, 1 << 20 };
    uint8_t *payload = malloc (1 << 20);
    for (size_t i = 0; i < (size_t) 1 << 20; i++)
        payload[i] = (uint8_t) (i * 131 + (i >> 9));
    char why[256];
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        CHECK_EQ (shoal_store_write (store, "node-id", payload, sizes[i], why, sizeof why), 0);
        s_expect_content (store, "node-id", payload, sizes[i]);
        long size;
        free (s_slurp (s_path (dir, "node-id"), &size));
        CHECK_EQ (size, SHOAL_STORE_HEADER + sizes[i] + SHOAL_STORE_CHECKSUM);
    }
    CHECK_EQ (shoal_store_write (store, "empty", NULL, 0, why, sizeof why), 0);
    s_expect_content (store, "empty", "", 0);
    free (payload);
    shoal_store_close (&store);
}

static void
a_payload_at_the_bound_is_kept_and_one_over_is_refused (void)
{
    const char *dir = s_dir ("bound");
    shoal_store_t *store = s_open (dir);
    uint8_t *payload = calloc (1, SHOAL_STORE_SIZE_MAX + 1);
    payload[0] = 1;
    payload[SHOAL_STORE_SIZE_MAX - 1] = 2;
    char why[256];
    CHECK_EQ (shoal_store_write (store, "jobs", payload, SHOAL_STORE_SIZE_MAX, why, sizeof why), 0);
    s_expect_content (store, "jobs", payload, SHOAL_STORE_SIZE_MAX);
    CHECK_EQ (shoal_store_write (store, "jobs", payload, SHOAL_STORE_SIZE_MAX + 1, why, sizeof why),
              -1);
    CHECK_CONTAINS (why, "over the bound");
    free (payload);
    shoal_store_close (&store);
}

static void
the_file_is_laid_out_as_documented (void)
{
    const char *dir = s_dir ("layout");
    shoal_store_t *store = s_open (dir);
    char why[256];
    CHECK_EQ (shoal_store_write (store, "term", "forty-two", 9, why, sizeof why), 0);
    uint8_t header[SHOAL_STORE_HEADER];
    s_header (header, 9);
    size_t expected_size;
    uint8_t *expected = s_craft (header, "forty-two", 9, &expected_size);
    long size;
    uint8_t *file = s_slurp (s_path (dir, "term"), &size);
    CHECK_EQ (size, expected_size);
    CHECK (file && size == (long) expected_size && memcmp (file, expected, expected_size) == 0);
    struct stat status;
    CHECK_EQ (stat (s_path (dir, "term"), &status), 0);
    CHECK_EQ (status.st_mode & 0777, 0600);
    CHECK_EQ (stat (dir, &status), 0);
    CHECK_EQ (status.st_mode & 0777, 0700);
    free (file);
    free (expected);
    shoal_store_close (&store);
}

static void
a_write_replaces_the_old_content_and_leaves_no_temp_file (void)
{
    const char *dir = s_dir ("replace");
    shoal_store_t *store = s_open (dir);
    char why[256];
    CHECK_EQ (shoal_store_write (store, "version", "a long first content", 20, why, sizeof why), 0);
    CHECK_EQ (shoal_store_write (store, "version", "short", 5, why, sizeof why), 0);
    s_expect_content (store, "version", "short", 5);
    CHECK_EQ (s_entries (dir), 1);
    shoal_store_close (&store);
}

static void
an_absent_file_reads_as_one (void)
{
    shoal_store_t *store = s_open (s_dir ("absent"));
    void *data = (void *) 1;
    size_t size = 1;
    char why[256];
    CHECK_EQ (shoal_store_read (store, "node-id", &data, &size, why, sizeof why), 1);
    CHECK (data == NULL);
    CHECK_EQ (size, 0);
    shoal_store_close (&store);
}

static void
remove_takes_the_file_away_and_an_absent_one_is_fine (void)
{
    const char *dir = s_dir ("remove");
    shoal_store_t *store = s_open (dir);
    char why[256];
    CHECK_EQ (shoal_store_write (store, "term", "7", 1, why, sizeof why), 0);
    CHECK_EQ (shoal_store_remove (store, "term", why, sizeof why), 0);
    void *data;
    size_t size;
    CHECK_EQ (shoal_store_read (store, "term", &data, &size, why, sizeof why), 1);
    CHECK_EQ (shoal_store_remove (store, "term", why, sizeof why), 0);
    CHECK_EQ (s_entries (dir), 0);
    shoal_store_close (&store);
}

//  ---------------------------------------------------------------------
//  Damaged files

static void
a_file_cut_short_at_any_length_is_refused (void)
{
    const char *dir = s_dir ("truncated");
    shoal_store_t *store = s_open (dir);
    char why[256];
    const char payload[] = "committed job specs, say";
    CHECK_EQ (shoal_store_write (store, "jobs", payload, sizeof payload, why, sizeof why), 0);
    long size;
    uint8_t *file = s_slurp (s_path (dir, "jobs"), &size);
    CHECK (file != NULL);
    for (long length = 0; file && length < size; length++) {
        s_spill (s_path (dir, "jobs"), file, (size_t) length);
        s_expect_refused (store, "jobs", "truncated");
    }
    free (file);
    shoal_store_close (&store);
}

//  What the store must say of a file of a payload_size payload whose byte
//  at was damaged: the field that byte belongs to is the one found wrong.
static const char *
s_flip_reason (const uint8_t *file, long at, size_t payload_size)
{
    if (at < 8)
        return "wrong magic";
    if (at == 8)
        return "unknown format version";
    if (at < 16)
        return "reserved byte";
    if (at >= 24)
        return "checksum mismatch";
    uint64_t length = 0;
    for (int i = 16; i < 24; i++)
        length = length << 8 | file[i];
    if (length > SHOAL_STORE_SIZE_MAX)
        return "over the bound";
    return length > payload_size ? "truncated" : "too long";
}

static void
every_flipped_bit_is_refused (void)
{
    const char *dir = s_dir ("flipped");
    shoal_store_t *store = s_open (dir);
    char why[256];
    const char payload[] = "highest term 12";
    CHECK_EQ (shoal_store_write (store, "term", payload, sizeof payload, why, sizeof why), 0);
    long size;
    uint8_t *file = s_slurp (s_path (dir, "term"), &size);
    CHECK (file != NULL);
    for (long at = 0; file && at < size; at++)
        for (int bit = 0; bit < 8; bit++) {
            file[at] ^= (uint8_t) (1 << bit);
            s_spill (s_path (dir, "term"), file, (size_t) size);
            s_expect_refused (store, "term", s_flip_reason (file, at, sizeof payload));
            file[at] ^= (uint8_t) (1 << bit);
        }
    //  Flipped back, the file is whole again.
    if (file)
        s_spill (s_path (dir, "term"), file, (size_t) size);
    s_expect_content (store, "term", payload, sizeof payload);
    free (file);
    shoal_store_close (&store);
}

static void
a_damaged_payload_is_a_checksum_mismatch (void)
{
    const char *dir = s_dir ("checksum");
    shoal_store_t *store = s_open (dir);
    uint8_t header[SHOAL_STORE_HEADER];
    s_header (header, 4);
    size_t size;
    uint8_t *file = s_craft (header, "abcd", 4, &size);
    file[SHOAL_STORE_HEADER + 2] ^= 0x20;
    s_spill (s_path (dir, "node-id"), file, size);
    s_expect_refused (store, "node-id", "checksum mismatch");
    file[SHOAL_STORE_HEADER + 2] ^= 0x20;
    file[size - 1] ^= 0x01;
    s_spill (s_path (dir, "node-id"), file, size);
    s_expect_refused (store, "node-id", "checksum mismatch");
    free (file);
    shoal_store_close (&store);
}

//  Each header field is checked on its own: these files carry a valid
//  checksum, so only the field can give them away.
static void
a_wrong_magic_is_refused (void)
{
    const char *dir = s_dir ("magic");
    shoal_store_t *store = s_open (dir);
    uint8_t header[SHOAL_STORE_HEADER];
    s_header (header, 3);
    header[7] = '!';
    size_t size;
    uint8_t *file = s_craft (header, "abc", 3, &size);
    s_spill (s_path (dir, "node-id"), file, size);
    s_expect_refused (store, "node-id", "wrong magic");
    //  A short file of something else is told apart from a cut one.
    s_spill (s_path (dir, "node-id"), "node 1\n", 7);
    s_expect_refused (store, "node-id", "wrong magic");
    free (file);
    shoal_store_close (&store);
}

static void
an_unknown_format_version_is_refused (void)
{
    const char *dir = s_dir ("version");
    shoal_store_t *store = s_open (dir);
    const uint8_t versions[] = { 0, 2, 255 };
    for (size_t i = 0; i < sizeof versions; i++) {
        uint8_t header[SHOAL_STORE_HEADER];
        s_header (header, 3);
        header[8] = versions[i];
        size_t size;
        uint8_t *file = s_craft (header, "abc", 3, &size);
        s_spill (s_path (dir, "node-id"), file, size);
        s_expect_refused (store, "node-id", "unknown format version");
        free (file);
    }
    shoal_store_close (&store);
}

static void
a_reserved_byte_set_is_refused (void)
{
    const char *dir = s_dir ("reserved");
    shoal_store_t *store = s_open (dir);
    for (int at = 9; at < 16; at++) {
        uint8_t header[SHOAL_STORE_HEADER];
        s_header (header, 3);
        header[at] = 0x80;
        size_t size;
        uint8_t *file = s_craft (header, "abc", 3, &size);
        s_spill (s_path (dir, "node-id"), file, size);
        s_expect_refused (store, "node-id", "reserved byte");
        free (file);
    }
    shoal_store_close (&store);
}

static void
a_length_other_than_the_file_s_is_refused (void)
{
    const char *dir = s_dir ("length");
    shoal_store_t *store = s_open (dir);
    //  The length says one byte more, then one less, than the payload.
    const uint64_t lengths[] = { 4, 2 };
    const char *reasons[] = { "truncated", "too long" };
    for (size_t i = 0; i < 2; i++) {
        uint8_t header[SHOAL_STORE_HEADER];
        s_header (header, lengths[i]);
        size_t size;
        uint8_t *file = s_craft (header, "abc", 3, &size);
        s_spill (s_path (dir, "node-id"), file, size);
        s_expect_refused (store, "node-id", reasons[i]);
        free (file);
    }
    //  Bytes after a checksum that is otherwise right.
    uint8_t header[SHOAL_STORE_HEADER];
    s_header (header, 3);
    size_t size;
    uint8_t *file = s_craft (header, "abc", 3, &size);
    uint8_t *longer = calloc (1, size + 1);
    memcpy (longer, file, size);
    s_spill (s_path (dir, "node-id"), longer, size + 1);
    s_expect_refused (store, "node-id", "too long");
    free (longer);
    free (file);
    shoal_store_close (&store);
}

static void
a_length_over_the_bound_is_refused_before_anything_is_read (void)
{
    const char *dir = s_dir ("over-bound");
    shoal_store_t *store = s_open (dir);
    const uint64_t lengths[] = { SHOAL_STORE_SIZE_MAX + 1ull, UINT64_MAX, UINT64_MAX - 55 };
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
        uint8_t header[SHOAL_STORE_HEADER];
        s_header (header, lengths[i]);
        size_t size;
        uint8_t *file = s_craft (header, "abc", 3, &size);
        s_spill (s_path (dir, "jobs"), file, size);
        s_expect_refused (store, "jobs", "over the bound");
        free (file);
    }
    shoal_store_close (&store);
}

static void
something_other_than_a_regular_file_is_refused (void)
{
    const char *dir = s_dir ("irregular");
    shoal_store_t *store = s_open (dir);
    CHECK_EQ (mkdir (s_path (dir, "jobs"), 0700), 0);
    s_expect_refused (store, "jobs", "not a regular file");
    //  A FIFO would block a plain open until someone writes to it.
    CHECK_EQ (mkfifo (s_path (dir, "term"), 0600), 0);
    s_expect_refused (store, "term", "not a regular file");
    shoal_store_close (&store);
}

//  ---------------------------------------------------------------------
//  Names

static void
names_that_are_not_plain_file_names_are_refused (void)
{
    const char *dir = s_dir ("names");
    shoal_store_t *store = s_open (dir);
    char long_name[SHOAL_STORE_NAME_MAX + 2];
    memset (long_name, 'n', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    const char *bad[] = { "",          ".",       "..",  ".hidden",   "a/b",
                          "../escape", "/etc",    "a b", "tab\there", "caf\xc3\xa9",
                          "star*",     long_name, "LOCK" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char why[256] = "";
        void *data = (void *) 1;
        size_t size = 1;
        CHECK_EQ (shoal_store_write (store, bad[i], "x", 1, why, sizeof why), -1);
        CHECK (why[0] != '\0');
        why[0] = '\0';
        CHECK_EQ (shoal_store_read (store, bad[i], &data, &size, why, sizeof why), -1);
        CHECK (why[0] != '\0' && data == NULL && size == 0);
        why[0] = '\0';
        CHECK_EQ (shoal_store_remove (store, bad[i], why, sizeof why), -1);
        CHECK (why[0] != '\0');
    }
    char why[256];
    CHECK_EQ (shoal_store_write (store, NULL, "x", 1, why, sizeof why), -1);
    CHECK_CONTAINS (why, "no file name");
    //  Nothing was written, and LOCK is still the lock.
    CHECK_EQ (s_entries (dir), 0);
    shoal_store_t *second = NULL;
    CHECK_EQ (shoal_store_open (dir, &second, why, sizeof why), -1);

    //  The longest name, and a name of every kind of character allowed.
    long_name[SHOAL_STORE_NAME_MAX] = '\0';
    CHECK_EQ (shoal_store_write (store, long_name, "x", 1, why, sizeof why), 0);
    CHECK_EQ (shoal_store_write (store, "Az09._-", "y", 1, why, sizeof why), 0);
    s_expect_content (store, long_name, "x", 1);
    s_expect_content (store, "Az09._-", "y", 1);
    shoal_store_close (&store);
}

//  ---------------------------------------------------------------------
//  Failed writes

static void
a_write_over_the_bound_keeps_the_old_content (void)
{
    const char *dir = s_dir ("failed-bound");
    shoal_store_t *store = s_open (dir);
    char why[256];
    CHECK_EQ (shoal_store_write (store, "jobs", "old", 3, why, sizeof why), 0);
    uint8_t *payload = calloc (1, SHOAL_STORE_SIZE_MAX + 1);
    CHECK_EQ (shoal_store_write (store, "jobs", payload, SHOAL_STORE_SIZE_MAX + 1, why, sizeof why),
              -1);
    s_expect_content (store, "jobs", "old", 3);
    CHECK_EQ (s_entries (dir), 1);
    free (payload);
    shoal_store_close (&store);
}

//  The file size limit makes the disk fill up halfway through the content,
//  for root too.
static void
a_write_that_fails_halfway_keeps_the_old_content (void)
{
    const char *dir = s_dir ("failed-halfway");
    shoal_store_t *store = s_open (dir);
    char why[256];
    CHECK_EQ (shoal_store_write (store, "jobs", "old", 3, why, sizeof why), 0);
    const size_t size = 1 << 20;
    uint8_t *payload = calloc (1, size);
    struct rlimit before, limit;
    CHECK_EQ (getrlimit (RLIMIT_FSIZE, &before), 0);
    limit = before;
    limit.rlim_cur = 4096;
    void (*handler) (int) = signal (SIGXFSZ, SIG_IGN);
    CHECK_EQ (setrlimit (RLIMIT_FSIZE, &limit), 0);
    CHECK_EQ (shoal_store_write (store, "jobs", payload, size, why, sizeof why), -1);
    CHECK_EQ (setrlimit (RLIMIT_FSIZE, &before), 0);
    signal (SIGXFSZ, handler);
    CHECK_CONTAINS (why, "cannot write");
    CHECK_CONTAINS (why, "old is kept");
    s_expect_content (store, "jobs", "old", 3);
    CHECK_EQ (s_entries (dir), 1);
    free (payload);
    shoal_store_close (&store);
}

//  The rename is the last step that can fail before the new content
//  counts; its temp file must go too.
static void
a_write_whose_rename_fails_leaves_no_temp_file (void)
{
    const char *dir = s_dir ("failed-rename");
    shoal_store_t *store = s_open (dir);
    //  A directory with something in it cannot be renamed over.
    char inside[512];
    snprintf (inside, sizeof inside, "%s/jobs/inside", dir);
    CHECK_EQ (mkdir (s_path (dir, "jobs"), 0700), 0);
    CHECK_EQ (mkdir (inside, 0700), 0);
    char why[256];
    CHECK_EQ (shoal_store_write (store, "jobs", "new", 3, why, sizeof why), -1);
    CHECK_CONTAINS (why, "cannot rename");
    CHECK_EQ (s_entries (dir), 1);
    shoal_store_close (&store);
}

//  A directory this process may not write to: made read-only, or, since
//  root writes through permissions, written to as nobody.
static void
a_write_into_a_read_only_directory_keeps_the_old_content (void)
{
    const char *dir = s_dir ("failed-read-only");
    shoal_store_t *store = s_open (dir);
    char why[256];
    CHECK_EQ (shoal_store_write (store, "term", "old", 3, why, sizeof why), 0);
    bool root = geteuid () == 0;
    CHECK_EQ (root ? seteuid (65534) : chmod (dir, 0500), 0);
    CHECK_EQ (shoal_store_write (store, "term", "new", 3, why, sizeof why), -1);
    CHECK_EQ (root ? seteuid (0) : chmod (dir, 0700), 0);
    CHECK_CONTAINS (why, "cannot create a temp file");
    s_expect_content (store, "term", "old", 3);
    CHECK_EQ (s_entries (dir), 1);
    shoal_store_close (&store);
}

//  ---------------------------------------------------------------------
//  The directory and its lock

static void
a_second_open_is_refused_until_the_first_is_closed (void)
{
    const char *dir = s_dir ("lock");
    shoal_store_t *first = s_open (dir);
    shoal_store_t *second = (shoal_store_t *) 1;
    char why[256] = "";
    CHECK_EQ (shoal_store_open (dir, &second, why, sizeof why), -1);
    CHECK (second == NULL);
    CHECK_CONTAINS (why, "in use");
    CHECK_CONTAINS (why, dir);
    shoal_store_close (&first);
    CHECK (first == NULL);
    shoal_store_close (&first);
    second = s_open (dir);
    CHECK (second != NULL);
    shoal_store_close (&second);
}

static void
open_removes_stale_temp_files_and_nothing_else (void)
{
    const char *dir = s_dir ("stale");
    shoal_store_t *store = s_open (dir);
    char why[256];
    CHECK_EQ (shoal_store_write (store, "jobs", "kept", 4, why, sizeof why), 0);
    shoal_store_close (&store);
    //  Left by crashes: temp files of this layer's pattern.
    const char *stale[] = { ".jobs.tmp-0123456789abcdef", ".node-id.tmp-ffffffffffffffff" };
    //  Not of the pattern: an operator's files, and near misses.
    const char *kept[] = { ".jobs.tmp-0123456789ABCDEF", ".jobs.tmp-0123456789abcde",
                           "jobs.tmp-0123456789abcdef", "..tmp-0123456789abcdef", ".profile" };
    for (size_t i = 0; i < 2; i++)
        s_spill (s_path (dir, stale[i]), "half", 4);
    for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++)
        s_spill (s_path (dir, kept[i]), "mine", 4);
    store = s_open (dir);
    for (size_t i = 0; i < 2; i++)
        CHECK (access (s_path (dir, stale[i]), F_OK) != 0);
    for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++)
        CHECK_EQ (access (s_path (dir, kept[i]), F_OK), 0);
    s_expect_content (store, "jobs", "kept", 4);
    shoal_store_close (&store);
}

static void
a_path_that_is_not_a_directory_is_refused (void)
{
    const char *path = s_dir ("a-file");
    s_spill (path, "x", 1);
    shoal_store_t *store = (shoal_store_t *) 1;
    char why[256] = "";
    CHECK_EQ (shoal_store_open (path, &store, why, sizeof why), -1);
    CHECK (store == NULL);
    CHECK_CONTAINS (why, "not a directory");
    CHECK_EQ (shoal_store_open ("", &store, why, sizeof why), -1);
    CHECK_EQ (shoal_store_open (NULL, &store, why, sizeof why), -1);
}

static void
missing_parents_are_not_created (void)
{
    char path[256];
    snprintf (path, sizeof path, "%s/no-parent/data", s_scratch);
    shoal_store_t *store = NULL;
    char why[256] = "";
    CHECK_EQ (shoal_store_open (path, &store, why, sizeof why), -1);
    CHECK_CONTAINS (why, "cannot create");
    CHECK (access (s_dir ("no-parent"), F_OK) != 0);
}

static void
a_short_reason_buffer_is_still_a_string (void)
{
    shoal_store_t *store = s_open (s_dir ("short-why"));
    char why[8];
    memset (why, 'X', sizeof why);
    CHECK_EQ (shoal_store_write (store, ".bad", "x", 1, why, sizeof why), -1);
    CHECK (memchr (why, '\0', sizeof why) != NULL);
    CHECK_EQ (shoal_store_write (store, ".bad", "x", 1, NULL, 0), -1);
    shoal_store_close (&store);
}

int
main (void)
{
    if (!mkdtemp (s_scratch)) {
        fprintf (stderr, "cannot make a scratch directory: %s\n", strerror (errno));
        return 1;
    }
    RUN (payloads_of_every_size_come_back_exactly);
    RUN (a_payload_at_the_bound_is_kept_and_one_over_is_refused);
    RUN (the_file_is_laid_out_as_documented);
    RUN (a_write_replaces_the_old_content_and_leaves_no_temp_file);
    RUN (an_absent_file_reads_as_one);
    RUN (remove_takes_the_file_away_and_an_absent_one_is_fine);
    RUN (a_file_cut_short_at_any_length_is_refused);
    RUN (every_flipped_bit_is_refused);
    RUN (a_damaged_payload_is_a_checksum_mismatch);
    RUN (a_wrong_magic_is_refused);
    RUN (an_unknown_format_version_is_refused);
    RUN (a_reserved_byte_set_is_refused);
    RUN (a_length_other_than_the_file_s_is_refused);
    RUN (a_length_over_the_bound_is_refused_before_anything_is_read);
    RUN (something_other_than_a_regular_file_is_refused);
    RUN (names_that_are_not_plain_file_names_are_refused);
    RUN (a_write_over_the_bound_keeps_the_old_content);
    RUN (a_write_that_fails_halfway_keeps_the_old_content);
    RUN (a_write_whose_rename_fails_leaves_no_temp_file);
    RUN (a_write_into_a_read_only_directory_keeps_the_old_content);
    RUN (a_second_open_is_refused_until_the_first_is_closed);
    RUN (open_removes_stale_temp_files_and_nothing_else);
    RUN (a_path_that_is_not_a_directory_is_refused);
    RUN (missing_parents_are_not_created);
    RUN (a_short_reason_buffer_is_still_a_string);
    s_remove_tree (s_scratch);
    return TEST_DONE ();
}

/*  node/store.c: the files of a node's data directory (store.h has the
    format and the contract, docs/store.md the reasons for them).

    All file names are resolved against a descriptor of the directory,
    opened once, so that the store keeps working on the directory it locked
    even if the process changes its working directory or the path is
    renamed under it.
*/

#include "node/store.h"
#include "node/why.h"

#include "wire/bigendian.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC_SIZE      8
#define VERSION_AT      8
#define RESERVED_AT     9
#define RESERVED_SIZE   7
#define LENGTH_AT       16
#define LENGTH_SIZE     8
#define LOCK_NAME       "LOCK"
#define TEMP_MARK       ".tmp-"
#define TEMP_MARK_SIZE  (sizeof TEMP_MARK - 1)
#define TEMP_DIGITS     16
#define TEMP_NAME_SIZE  (1 + SHOAL_STORE_NAME_MAX + TEMP_MARK_SIZE + TEMP_DIGITS + 1)
#define TEMP_ATTEMPTS   8
#define EMPTY_FILE_SIZE (SHOAL_STORE_HEADER + SHOAL_STORE_CHECKSUM)

_Static_assert(sizeof SHOAL_STORE_MAGIC == MAGIC_SIZE, "the magic is 8 bytes, its NUL included");
_Static_assert(SHOAL_STORE_HEADER == MAGIC_SIZE + 1 + RESERVED_SIZE + LENGTH_SIZE,
               "the header is magic, version, reserved bytes and length");
_Static_assert(LENGTH_AT + LENGTH_SIZE == SHOAL_STORE_HEADER, "the length ends the header");
_Static_assert(SHOAL_STORE_CHECKSUM == crypto_generichash_BYTES,
               "the checksum is libsodium's default BLAKE2b");

struct _shoal_store_t {
    char *path;  //  the directory, as given, for reasons
    int dir_fd;  //  the directory, which every name is resolved against
    int lock_fd; //  LOCK, flocked while the store is open
};

//  ---------------------------------------------------------------------
//  Names

//  Why the length bytes at name are not a store file's name, or NULL when
//  they are one. A reason never quotes the name: it may hold anything.
static const char *
s_name_fault (const char *name, size_t length)
{
    if (length == 0)
        return "a file name is empty";
    if (length > SHOAL_STORE_NAME_MAX)
        return "a file name is longer than 64 bytes";
    if (name[0] == '.')
        return "a file name starts with '.'";
    for (size_t i = 0; i < length; i++) {
        unsigned char c = (unsigned char) name[i];
        bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                     c == '.' || c == '_' || c == '-';
        if (!plain)
            return "a file name holds a byte other than A-Z a-z 0-9 . _ -";
    }
    return NULL;
}

static int
s_check_name (const char *name, char *why, size_t why_size)
{
    if (!name)
        return shoal_why (why, why_size, "no file name given");
    const char *fault = s_name_fault (name, strnlen (name, SHOAL_STORE_NAME_MAX + 1));
    if (fault)
        return shoal_why (why, why_size, "%s", fault);
    //  Renaming a file over LOCK would hand the lock to a new inode that
    //  nobody holds, and a second node could take it.
    if (strcmp (name, LOCK_NAME) == 0)
        return shoal_why (why, why_size, "LOCK is the data directory's lock, not a store file");
    return 0;
}

//  True when entry is a temp file of this layer: ".NAME.tmp-" and sixteen
//  lowercase hex digits. Nothing else in the directory is ever removed.
static bool
s_is_temp_name (const char *entry)
{
    size_t length = strlen (entry);
    if (length < 1 + TEMP_MARK_SIZE + TEMP_DIGITS || entry[0] != '.')
        return false;
    const char *mark = entry + length - TEMP_DIGITS - TEMP_MARK_SIZE;
    if (memcmp (mark, TEMP_MARK, TEMP_MARK_SIZE) != 0)
        return false;
    for (const char *digit = mark + TEMP_MARK_SIZE; *digit; digit++)
        if (!((*digit >= '0' && *digit <= '9') || (*digit >= 'a' && *digit <= 'f')))
            return false;
    return s_name_fault (entry + 1, (size_t) (mark - entry - 1)) == NULL;
}

//  ---------------------------------------------------------------------
//  Opening and closing

//  A new directory's entry lives in its parent, which must be synced too
//  for the directory to survive a crash.
static int
s_sync_parent (const char *dir, char *why, size_t why_size)
{
    size_t length = strlen (dir);
    while (length > 1 && dir[length - 1] == '/')
        length--;
    while (length > 0 && dir[length - 1] != '/')
        length--;
    while (length > 1 && dir[length - 1] == '/')
        length--;
    char *parent = length ? strndup (dir, length) : strdup (".");
    if (!parent)
        return shoal_why (why, why_size, "out of memory");
    int fd = open (parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc = fd >= 0 && fsync (fd) == 0 ? 0 : -1;
    int error = errno;
    if (fd >= 0)
        close (fd);
    if (rc != 0)
        shoal_why (why, why_size, "created %s, but cannot sync its parent %s: %s", dir, parent,
                   strerror (error));
    free (parent);
    return rc;
}

static int
s_open_directory (shoal_store_t *self, char *why, size_t why_size)
{
    bool created = mkdir (self->path, 0700) == 0;
    if (!created && errno != EEXIST)
        return shoal_why (why, why_size, "cannot create the data directory %s: %s", self->path,
                          strerror (errno));
    self->dir_fd = open (self->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (self->dir_fd < 0 && errno == ENOTDIR)
        return shoal_why (why, why_size, "%s exists and is not a directory", self->path);
    if (self->dir_fd < 0)
        return shoal_why (why, why_size, "cannot open the data directory %s: %s", self->path,
                          strerror (errno));
    return created ? s_sync_parent (self->path, why, why_size) : 0;
}

static int
s_lock (shoal_store_t *self, char *why, size_t why_size)
{
    self->lock_fd =
        openat (self->dir_fd, LOCK_NAME, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (self->lock_fd < 0)
        return shoal_why (why, why_size, "cannot open %s/" LOCK_NAME ": %s", self->path,
                          strerror (errno));
    if (flock (self->lock_fd, LOCK_EX | LOCK_NB) == 0)
        return 0;
    if (errno == EWOULDBLOCK)
        return shoal_why (why, why_size, "the data directory %s is in use by another node",
                          self->path);
    return shoal_why (why, why_size, "cannot lock %s/" LOCK_NAME ": %s", self->path,
                      strerror (errno));
}

//  A crash between creating a temp file and renaming it leaves the temp
//  file behind; it holds nothing that was promised to anyone.
static int
s_remove_stale (shoal_store_t *self, char *why, size_t why_size)
{
    int fd = openat (self->dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *entries = fd >= 0 ? fdopendir (fd) : NULL;
    if (!entries) {
        int error = errno;
        if (fd >= 0)
            close (fd);
        return shoal_why (why, why_size, "cannot list the data directory %s: %s", self->path,
                          strerror (error));
    }
    int rc = 0;
    struct dirent *entry;
    errno = 0;
    while (rc == 0 && (entry = readdir (entries))) {
        if (s_is_temp_name (entry->d_name) && unlinkat (self->dir_fd, entry->d_name, 0) != 0 &&
            errno != ENOENT)
            rc = shoal_why (why, why_size, "cannot remove the stale temp file %s/%s: %s",
                            self->path, entry->d_name, strerror (errno));
        errno = 0;
    }
    if (rc == 0 && errno != 0)
        rc = shoal_why (why, why_size, "cannot list the data directory %s: %s", self->path,
                        strerror (errno));
    closedir (entries);
    return rc;
}

int
shoal_store_open (const char *dir, shoal_store_t **store, char *why, size_t why_size)
{
    assert (store);
    *store = NULL;
    if (!dir || !*dir)
        return shoal_why (why, why_size, "no data directory given");
    if (sodium_init () < 0)
        return shoal_why (why, why_size, "libsodium cannot start");
    shoal_store_t *self = calloc (1, sizeof *self);
    if (!self)
        return shoal_why (why, why_size, "out of memory");
    self->dir_fd = -1;
    self->lock_fd = -1;
    self->path = strdup (dir);
    int rc = self->path ? 0 : shoal_why (why, why_size, "out of memory");
    if (rc == 0)
        rc = s_open_directory (self, why, why_size);
    if (rc == 0)
        rc = s_lock (self, why, why_size);
    if (rc == 0)
        rc = s_remove_stale (self, why, why_size);
    if (rc != 0) {
        shoal_store_close (&self);
        return -1;
    }
    *store = self;
    return 0;
}

void
shoal_store_close (shoal_store_t **store_p)
{
    assert (store_p);
    shoal_store_t *self = *store_p;
    if (!self)
        return;
    //  Unlocking first releases the lock even where a forked child still
    //  holds a copy of the descriptor.
    if (self->lock_fd >= 0) {
        flock (self->lock_fd, LOCK_UN);
        close (self->lock_fd);
    }
    if (self->dir_fd >= 0)
        close (self->dir_fd);
    free (self->path);
    free (self);
    *store_p = NULL;
}

//  ---------------------------------------------------------------------
//  The format

static void
s_header_encode (uint8_t header[SHOAL_STORE_HEADER], uint64_t length)
{
    memset (header, 0, SHOAL_STORE_HEADER);
    memcpy (header, SHOAL_STORE_MAGIC, MAGIC_SIZE);
    header[VERSION_AT] = SHOAL_STORE_VERSION;
    shoal__put_be (header + LENGTH_AT, length, LENGTH_SIZE);
}

static void
s_checksum (const uint8_t header[SHOAL_STORE_HEADER], const void *payload, size_t size,
            uint8_t checksum[SHOAL_STORE_CHECKSUM])
{
    crypto_generichash_state state;
    crypto_generichash_init (&state, NULL, 0, SHOAL_STORE_CHECKSUM);
    crypto_generichash_update (&state, header, SHOAL_STORE_HEADER);
    if (size)
        crypto_generichash_update (&state, payload, size);
    crypto_generichash_final (&state, checksum, SHOAL_STORE_CHECKSUM);
}

//  ---------------------------------------------------------------------
//  Writing

//  Writes all size bytes, through short writes and interruptions.
static int
s_write_all (int fd, const void *data, size_t size)
{
    const uint8_t *at = data;
    while (size > 0) {
        ssize_t written = write (fd, at, size);
        if (written < 0 && errno == EINTR)
            continue;
        if (written <= 0) {
            if (written == 0)
                errno = EIO;
            return -1;
        }
        at += written;
        size -= (size_t) written;
    }
    return 0;
}

//  Creates a temp file for name that no other writer can be using, and
//  writes its name into temp. Returns its descriptor.
static int
s_create_temp (shoal_store_t *self, const char *name, char temp[TEMP_NAME_SIZE], char *why,
               size_t why_size)
{
    for (int attempt = 0; attempt < TEMP_ATTEMPTS; attempt++) {
        uint8_t random[TEMP_DIGITS / 2];
        char digits[TEMP_DIGITS + 1];
        randombytes_buf (random, sizeof random);
        sodium_bin2hex (digits, sizeof digits, random, sizeof random);
        snprintf (temp, TEMP_NAME_SIZE, ".%s" TEMP_MARK "%s", name, digits);
        int fd = openat (self->dir_fd, temp, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
        if (fd >= 0)
            return fd;
        if (errno != EEXIST)
            return shoal_why (why, why_size, "%s/%s: cannot create a temp file: %s", self->path,
                              name, strerror (errno));
    }
    return shoal_why (why, why_size, "%s/%s: cannot create a temp file: every name drawn is taken",
                      self->path, name);
}

int
shoal_store_write (shoal_store_t *self, const char *name, const void *data, size_t size, char *why,
                   size_t why_size)
{
    assert (self);
    assert (data || size == 0);
    if (s_check_name (name, why, why_size))
        return -1;
    if (size > SHOAL_STORE_SIZE_MAX)
        return shoal_why (why, why_size, "%s/%s: a payload of %zu bytes is over the bound of %u",
                          self->path, name, size, SHOAL_STORE_SIZE_MAX);

    uint8_t header[SHOAL_STORE_HEADER];
    uint8_t checksum[SHOAL_STORE_CHECKSUM];
    s_header_encode (header, size);
    s_checksum (header, data, size, checksum);

    char temp[TEMP_NAME_SIZE];
    int fd = s_create_temp (self, name, temp, why, why_size);
    if (fd < 0)
        return -1;
    //  The content must be on disk before the rename makes it the file:
    //  otherwise a crash could leave the new name on a file still empty.
    const char *failed = NULL;
    if (s_write_all (fd, header, sizeof header) || s_write_all (fd, data, size) ||
        s_write_all (fd, checksum, sizeof checksum))
        failed = "write";
    else if (fsync (fd) != 0)
        failed = "sync";
    int error = errno;
    if (close (fd) != 0 && !failed) {
        failed = "close";
        error = errno;
    }
    if (!failed && renameat (self->dir_fd, temp, self->dir_fd, name) != 0) {
        failed = "rename";
        error = errno;
    }
    if (failed) {
        unlinkat (self->dir_fd, temp, 0);
        return shoal_why (why, why_size, "%s/%s: cannot %s the new content, the old is kept: %s",
                          self->path, name, failed, strerror (error));
    }
    //  The rename is durable only once the directory is.
    if (fsync (self->dir_fd) != 0)
        return shoal_why (
            why, why_size,
            "%s/%s: replaced, but the directory cannot be synced, so a crash may bring "
            "back the old content: %s",
            self->path, name, strerror (errno));
    return 0;
}

//  ---------------------------------------------------------------------
//  Reading

//  Reads up to size bytes, through short reads and interruptions; *got is
//  less than size only at the end of the file.
static int
s_read_all (int fd, void *buffer, size_t size, size_t *got)
{
    uint8_t *at = buffer;
    *got = 0;
    while (*got < size) {
        ssize_t count = read (fd, at + *got, size - *got);
        if (count < 0 && errno == EINTR)
            continue;
        if (count < 0)
            return -1;
        if (count == 0)
            break;
        *got += (size_t) count;
    }
    return 0;
}

//  Reads the open file fd as store.h describes, trusting nothing in it:
//  every field is checked before it is used, and the payload is allocated
//  only once its length is known to match the file's size and the bound.
static int
s_read_file (shoal_store_t *self, const char *name, int fd, void **data, size_t *size, char *why,
             size_t why_size)
{
    const char *path = self->path;
    struct stat status;
    if (fstat (fd, &status) != 0)
        return shoal_why (why, why_size, "%s/%s: cannot stat: %s", path, name, strerror (errno));
    if (!S_ISREG (status.st_mode))
        return shoal_why (why, why_size, "%s/%s: not a regular file", path, name);

    uint8_t header[SHOAL_STORE_HEADER];
    size_t got;
    if (s_read_all (fd, header, sizeof header, &got) != 0)
        return shoal_why (why, why_size, "%s/%s: cannot read: %s", path, name, strerror (errno));
    if (memcmp (header, SHOAL_STORE_MAGIC, got < MAGIC_SIZE ? got : MAGIC_SIZE) != 0)
        return shoal_why (why, why_size, "%s/%s: wrong magic, not a shoal store file", path, name);
    if (got < sizeof header)
        return shoal_why (why, why_size, "%s/%s: truncated: %zu bytes, shorter than a header", path,
                          name, got);
    if (header[VERSION_AT] != SHOAL_STORE_VERSION)
        return shoal_why (why, why_size, "%s/%s: unknown format version %u (this build reads %d)",
                          path, name, header[VERSION_AT], SHOAL_STORE_VERSION);
    for (int i = 0; i < RESERVED_SIZE; i++)
        if (header[RESERVED_AT + i] != 0)
            return shoal_why (why, why_size, "%s/%s: reserved byte %d is set", path, name,
                              RESERVED_AT + i);
    uint64_t length = shoal__get_be (header + LENGTH_AT, LENGTH_SIZE);
    if (length > SHOAL_STORE_SIZE_MAX)
        return shoal_why (
            why, why_size,
            "%s/%s: the length field says %llu bytes of payload, over the bound of %u", path, name,
            (unsigned long long) length, SHOAL_STORE_SIZE_MAX);
    uint64_t expected = EMPTY_FILE_SIZE + length;
    if ((uint64_t) status.st_size != expected)
        return shoal_why (
            why, why_size,
            "%s/%s: %s: the length field says %llu bytes of payload, which makes a "
            "file of %llu bytes, and the file has %lld",
            path, name, (uint64_t) status.st_size < expected ? "truncated" : "too long",
            (unsigned long long) length, (unsigned long long) expected, (long long) status.st_size);

    uint8_t *payload = malloc (length ? length : 1);
    if (!payload)
        return shoal_why (why, why_size, "%s/%s: out of memory for %llu bytes", path, name,
                          (unsigned long long) length);
    uint8_t stored[SHOAL_STORE_CHECKSUM], computed[SHOAL_STORE_CHECKSUM];
    size_t got_checksum;
    int rc = 0;
    if (s_read_all (fd, payload, length, &got) != 0 ||
        s_read_all (fd, stored, sizeof stored, &got_checksum) != 0)
        rc = shoal_why (why, why_size, "%s/%s: cannot read: %s", path, name, strerror (errno));
    else if (got != length || got_checksum != sizeof stored)
        rc = shoal_why (why, why_size, "%s/%s: truncated while it was being read", path, name);
    else {
        s_checksum (header, payload, length, computed);
        if (memcmp (stored, computed, sizeof stored) != 0)
            rc = shoal_why (why, why_size, "%s/%s: checksum mismatch, the file is corrupt", path,
                            name);
    }
    if (rc != 0) {
        free (payload);
        return -1;
    }
    *data = payload;
    *size = (size_t) length;
    return 0;
}

int
shoal_store_read (shoal_store_t *self, const char *name, void **data, size_t *size, char *why,
                  size_t why_size)
{
    assert (self);
    assert (data && size);
    *data = NULL;
    *size = 0;
    if (s_check_name (name, why, why_size))
        return -1;
    //  Without O_NONBLOCK, opening a FIFO planted under the name would
    //  wait for a writer forever.
    int fd = openat (self->dir_fd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0 && errno == ENOENT)
        return 1;
    if (fd < 0)
        return shoal_why (why, why_size, "%s/%s: cannot open: %s", self->path, name,
                          strerror (errno));
    int rc = s_read_file (self, name, fd, data, size, why, why_size);
    close (fd);
    return rc;
}

//  ---------------------------------------------------------------------
//  Removing

int
shoal_store_remove (shoal_store_t *self, const char *name, char *why, size_t why_size)
{
    assert (self);
    if (s_check_name (name, why, why_size))
        return -1;
    if (unlinkat (self->dir_fd, name, 0) != 0)
        return errno == ENOENT ? 0
                               : shoal_why (why, why_size, "%s/%s: cannot remove: %s", self->path,
                                            name, strerror (errno));
    if (fsync (self->dir_fd) != 0)
        return shoal_why (
            why, why_size,
            "%s/%s: removed, but the directory cannot be synced, so a crash may bring "
            "it back: %s",
            self->path, name, strerror (errno));
    return 0;
}

/*  worker/tasklog.c: the writer of the task output files (worker/tasklog.h).

    The main thread appends records to a list under the lock; the writer
    thread takes the whole list at once and writes it without the lock.
    The writer holds the files it wrote last open (S_OPEN_MAX of them).
*/
#define _GNU_SOURCE

#include "worker/tasklog.h"

#include "node/tasklog.h"
#include "wire/wire.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define S_OPEN_MAX 32

typedef struct s_record {
    struct s_record *next;
    char name[SHOAL_TASKLOG_NAME_TEXT];
    size_t length;
    char text[];
} s_record_t;

typedef struct {
    char name[SHOAL_TASKLOG_NAME_TEXT]; //  "" when free
    int fd;
    uint64_t size;
    uint64_t used; //  when last written, in writes: the least is closed first
} s_file_t;

struct _shoal_tasklog_t {
    char dir[4096];
    uint64_t cap;
    uint32_t keep;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake, idle;
    //  Under the lock.
    s_record_t *head, *tail;
    size_t queued; //  bytes
    bool writing;  //  the writer holds records taken off the list
    bool stopping;
    shoal_tasklog_trouble_t trouble;
    //  The writer's own.
    s_file_t files[S_OPEN_MAX];
    uint64_t writes;
};

//  Counts a failure; the first one's reason is kept.
static void
s_failed (shoal_tasklog_t *self, const char *what, const char *name)
{
    int error = errno;
    pthread_mutex_lock (&self->lock);
    if (self->trouble.failed++ == 0)
        snprintf (self->trouble.first, sizeof self->trouble.first, "%.12s %.90s/%.80s: %.60s", what,
                  self->dir, name, strerror (error));
    pthread_mutex_unlock (&self->lock);
}

static void
s_close (s_file_t *file)
{
    if (file->name[0])
        close (file->fd);
    file->name[0] = 0;
}

//  Renames name's generations up by one, the oldest dropped, and name to
//  name.1; with keep 0, removes name.
static void
s_rotate (shoal_tasklog_t *self, const char *name)
{
    char from[sizeof self->dir + SHOAL_TASKLOG_NAME_TEXT + 8], to[sizeof from];
    snprintf (from, sizeof from, "%s/%s", self->dir, name);
    if (self->keep == 0) {
        if (unlink (from) != 0 && errno != ENOENT)
            s_failed (self, "removing", name);
        return;
    }
    for (uint32_t generation = self->keep; generation > 1; generation--) {
        snprintf (from, sizeof from, "%s/%s.%u", self->dir, name, generation - 1);
        snprintf (to, sizeof to, "%s/%s.%u", self->dir, name, generation);
        if (rename (from, to) != 0 && errno != ENOENT)
            s_failed (self, "rotating", name);
    }
    snprintf (from, sizeof from, "%s/%s", self->dir, name);
    snprintf (to, sizeof to, "%s/%s.1", self->dir, name);
    if (rename (from, to) != 0 && errno != ENOENT)
        s_failed (self, "rotating", name);
}

//  Removes name and its generations; closes it if open.
static void
s_remove (shoal_tasklog_t *self, const char *name)
{
    for (size_t i = 0; i < S_OPEN_MAX; i++)
        if (strcmp (self->files[i].name, name) == 0)
            s_close (&self->files[i]);
    char path[sizeof self->dir + SHOAL_TASKLOG_NAME_TEXT + 8];
    for (uint32_t generation = 0; generation <= SHOAL_TASKLOG_KEEP_MAX; generation++) {
        if (generation)
            snprintf (path, sizeof path, "%s/%s.%u", self->dir, name, generation);
        else
            snprintf (path, sizeof path, "%s/%s", self->dir, name);
        unlink (path);
    }
}

//  With more than SHOAL_TASKLOG_FILES_MAX task files in the directory,
//  removes the one written longest ago (never but, the one just made).
static void
s_bound (shoal_tasklog_t *self, const char *but)
{
    DIR *dir = opendir (self->dir);
    if (!dir) {
        s_failed (self, "listing", "");
        return;
    }
    size_t count = 0;
    char oldest[SHOAL_TASKLOG_NAME_TEXT] = "", task[SHOAL_TASK_MAX + 1];
    struct timespec oldest_time = { 0, 0 };
    struct dirent *entry;
    while ((entry = readdir (dir))) {
        struct stat info;
        if (shoal_tasklog_task (entry->d_name, task, sizeof task) != 0 ||
            fstatat (dirfd (dir), entry->d_name, &info, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        count++;
        bool older = info.st_mtim.tv_sec < oldest_time.tv_sec ||
                     (info.st_mtim.tv_sec == oldest_time.tv_sec &&
                      info.st_mtim.tv_nsec < oldest_time.tv_nsec);
        size_t length = strlen (entry->d_name);
        if (strcmp (entry->d_name, but) != 0 && (!oldest[0] || older) && length < sizeof oldest) {
            memcpy (oldest, entry->d_name, length + 1);
            oldest_time = info.st_mtim;
        }
    }
    closedir (dir);
    if (count > SHOAL_TASKLOG_FILES_MAX && oldest[0])
        s_remove (self, oldest);
}

//  The open file of name, opened (and the directory bounded, when it is
//  new) if it is not; NULL when it cannot be.
static s_file_t *
s_file (shoal_tasklog_t *self, const char *name)
{
    //  A free slot, else the one written longest ago.
    s_file_t *slot = NULL;
    for (size_t i = 0; i < S_OPEN_MAX; i++) {
        s_file_t *file = &self->files[i];
        if (strcmp (file->name, name) == 0)
            return file;
        uint64_t age = file->name[0] ? file->used + 1 : 0;
        if (!slot || age < (slot->name[0] ? slot->used + 1 : 0))
            slot = file;
    }
    s_close (slot);
    char path[sizeof self->dir + SHOAL_TASKLOG_NAME_TEXT + 2];
    snprintf (path, sizeof path, "%s/%s", self->dir, name);
    bool fresh = access (path, F_OK) != 0;
    int fd = open (path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    struct stat info;
    if (fd < 0 || fstat (fd, &info) != 0) {
        s_failed (self, "opening", name);
        if (fd >= 0)
            close (fd);
        return NULL;
    }
    *slot = (s_file_t){ .fd = fd, .size = (uint64_t) info.st_size };
    snprintf (slot->name, sizeof slot->name, "%s", name);
    if (fresh)
        s_bound (self, name);
    return slot;
}

//  Appends one record to its file, rotating it first when due.
static void
s_write (shoal_tasklog_t *self, s_record_t *record)
{
    size_t length = record->length;
    if (length > self->cap) {
        length = shoal_text_cut (record->text, (size_t) self->cap - 1);
        record->text[length++] = '\n';
    }
    s_file_t *file = s_file (self, record->name);
    if (file && shoal_tasklog_rotate_due (file->size, length, self->cap)) {
        s_close (file);
        s_rotate (self, record->name);
        file = s_file (self, record->name);
    }
    if (!file)
        return;
    file->used = ++self->writes;
    ssize_t wrote = write (file->fd, record->text, length);
    if (wrote != (ssize_t) length) {
        if (wrote >= 0)
            errno = ENOSPC;
        s_failed (self, "writing", record->name);
        //  Opened again next time: the size is the file's own then.
        s_close (file);
        return;
    }
    file->size += length;
}

static void *
s_run (void *arg)
{
    shoal_tasklog_t *self = arg;
    pthread_mutex_lock (&self->lock);
    while (true) {
        while (!self->head && !self->stopping)
            pthread_cond_wait (&self->wake, &self->lock);
        if (!self->head)
            break;
        s_record_t *records = self->head;
        self->head = self->tail = NULL;
        self->queued = 0;
        self->writing = true;
        pthread_mutex_unlock (&self->lock);
        while (records) {
            s_record_t *next = records->next;
            s_write (self, records);
            free (records);
            records = next;
        }
        pthread_mutex_lock (&self->lock);
        self->writing = false;
        pthread_cond_broadcast (&self->idle);
    }
    pthread_mutex_unlock (&self->lock);
    for (size_t i = 0; i < S_OPEN_MAX; i++)
        s_close (&self->files[i]);
    return NULL;
}

shoal_tasklog_t *
shoal_tasklog_new (const char *dir, uint64_t cap, uint32_t keep, char *why, size_t why_size)
{
    assert (cap > 0 && keep <= SHOAL_TASKLOG_KEEP_MAX);
    shoal_tasklog_t *self = calloc (1, sizeof *self);
    if (!self) {
        snprintf (why, why_size, "out of memory");
        return NULL;
    }
    snprintf (self->dir, sizeof self->dir, "%s", dir);
    self->cap = cap < 2 ? 2 : cap;
    self->keep = keep;
    if (mkdir (dir, 0755) != 0 && errno != EEXIST) {
        snprintf (why, why_size, "cannot make %s: %s", dir, strerror (errno));
        free (self);
        return NULL;
    }
    pthread_mutex_init (&self->lock, NULL);
    pthread_cond_init (&self->wake, NULL);
    pthread_cond_init (&self->idle, NULL);
    int rc = pthread_create (&self->thread, NULL, s_run, self);
    if (rc != 0) {
        snprintf (why, why_size, "cannot start the writer of %s: %s", dir, strerror (rc));
        pthread_mutex_destroy (&self->lock);
        pthread_cond_destroy (&self->wake);
        pthread_cond_destroy (&self->idle);
        free (self);
        return NULL;
    }
    return self;
}

void
shoal_tasklog_destroy (shoal_tasklog_t **self_p)
{
    shoal_tasklog_t *self = *self_p;
    if (!self)
        return;
    pthread_mutex_lock (&self->lock);
    self->stopping = true;
    pthread_cond_signal (&self->wake);
    pthread_mutex_unlock (&self->lock);
    pthread_join (self->thread, NULL);
    pthread_mutex_destroy (&self->lock);
    pthread_cond_destroy (&self->wake);
    pthread_cond_destroy (&self->idle);
    free (self);
    *self_p = NULL;
}

bool
shoal_tasklog_put (shoal_tasklog_t *self, const char *task, const char *record, size_t length)
{
    char name[SHOAL_TASKLOG_NAME_TEXT];
    if (shoal_tasklog_name (task, name, sizeof name) != 0 || length == 0)
        return false;
    pthread_mutex_lock (&self->lock);
    bool room = self->queued + length <= SHOAL_TASKLOG_QUEUE_MAX;
    s_record_t *entry = room ? malloc (sizeof *entry + length) : NULL;
    if (!entry) {
        self->trouble.dropped++;
        pthread_mutex_unlock (&self->lock);
        return false;
    }
    entry->next = NULL;
    memcpy (entry->name, name, sizeof name);
    entry->length = length;
    memcpy (entry->text, record, length);
    if (self->tail)
        self->tail->next = entry;
    else
        self->head = entry;
    self->tail = entry;
    self->queued += length;
    pthread_cond_signal (&self->wake);
    pthread_mutex_unlock (&self->lock);
    return true;
}

void
shoal_tasklog_flush (shoal_tasklog_t *self)
{
    pthread_mutex_lock (&self->lock);
    while (self->head || self->writing)
        pthread_cond_wait (&self->idle, &self->lock);
    pthread_mutex_unlock (&self->lock);
}

void
shoal_tasklog_trouble (shoal_tasklog_t *self, shoal_tasklog_trouble_t *trouble)
{
    pthread_mutex_lock (&self->lock);
    *trouble = self->trouble;
    pthread_mutex_unlock (&self->lock);
}

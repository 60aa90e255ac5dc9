/*  worker/tasklog.h: the worker's files of each task's output, written on
    a thread of their own so that the worker never waits for the disk.

    The main thread hands each record (node/tasklog.h says its form) to a
    queue of at most SHOAL_TASKLOG_QUEUE_MAX bytes: when the disk is slower
    than the children, what does not fit is dropped and counted. The
    writer appends each to DATA-DIR/logs/<name>.log; a file that a record
    would take past the cap is first renamed NAME.log.1 (NAME.log.1 to .2,
    up to keep generations; with keep 0 it is removed), so that a task
    takes at most cap × (keep + 1) bytes. A record longer than the cap is
    cut to it. When more than SHOAL_TASKLOG_FILES_MAX task files exist, the
    one written longest ago goes, with its generations: files of tasks the
    node no longer runs stay (they are what `shoal logs` reads after a
    move), but not without end. A write that fails is counted, never fatal.
*/
#ifndef SHOAL_WORKER_TASKLOG_H
#define SHOAL_WORKER_TASKLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SHOAL_TASKLOG_QUEUE_MAX (4u * 1024 * 1024)
#define SHOAL_TASKLOG_FILES_MAX 256
#define SHOAL_TASKLOG_KEEP_MAX  16

typedef struct _shoal_tasklog_t shoal_tasklog_t;

//  Starts the writer of the files in dir (made when missing), each at most
//  cap bytes (at least 1), keep older generations each. NULL with why
//  when dir cannot be made or the thread not started.
shoal_tasklog_t *shoal_tasklog_new (const char *dir, uint64_t cap, uint32_t keep, char *why,
                                    size_t why_size);

//  Writes what is queued, stops the thread, frees; nulls the pointer.
void shoal_tasklog_destroy (shoal_tasklog_t **self_p);

//  Queues the record (length bytes, ending in a newline) of task. False
//  when the queue is full: the record is dropped (and counted).
bool shoal_tasklog_put (shoal_tasklog_t *self, const char *task, const char *record, size_t length);

//  Waits until the writer has written everything queued so far.
void shoal_tasklog_flush (shoal_tasklog_t *self);

//  Records dropped, writes failed so far, and the first failure's reason.
typedef struct {
    uint64_t dropped;
    uint64_t failed;
    char first[256];
} shoal_tasklog_trouble_t;
void shoal_tasklog_trouble (shoal_tasklog_t *self, shoal_tasklog_trouble_t *trouble);

#endif

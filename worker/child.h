/*  worker/child.h: the child process of one task, as `shoal worker` runs it.

    A child is the job's command, run by /bin/sh -c, under a shim: a small
    process forked from the worker (a plain fork: after it, only
    async-signal-safe calls, since the worker has threads) that makes sure
    the command never outlives the worker. The shim:

      - blocks every signal, takes a process group of its own, asks the
        kernel for SIGTERM when the worker dies (PR_SET_PDEATHSIG), then
        checks that the worker is still its parent (it may have died
        before), and becomes a subreaper, so that every orphan below it is
        handed to it rather than to init;
      - forks the command into a new process group, whose id it tells the
        worker, and exec's /bin/sh -c COMMAND there;
      - reaps everything below it until nothing is left, and exits with the
        command's status: its exit code, or 128 + the signal that killed it.

    SIGTERM to the shim, from the kernel when the worker dies or from the
    worker to end a stop whose grace ran out, makes it SIGKILL the command's
    group and every process below it, at once: another node may start the
    task a second later. When the command exits on its own, what it leaves
    behind gets SIGTERM, and SIGKILL after the grace.

    The worker signals the command's process group itself: SIGTERM to stop
    it, SIGSTOP to freeze it while the node's lease is lost. The shim stays
    out of that group, so that a frozen task never freezes the shim, which
    must stay able to act on the worker's death, and so that the worker's
    SIGTERM to the command is not taken for that death.

    The lease binds a child that acts even when the worker cannot act (its
    process stopped, or starved): the worker and the shim share a page
    (MAP_SHARED, made before the fork) where the worker writes, with no
    syscall, the deadline until which the command may act (the node's
    lease end, for an active) and whether it froze the child itself. The
    shim wakes at the deadline by itself (a lease that goes on only moves
    it later), and when the worker kicks it (an eventfd) for anything else:
    a deadline set earlier, a new one after one that passed, a child let
    go. Once the deadline has passed it freezes the command's group
    (SIGSTOP), and it alone thaws it (SIGCONT), only once the deadline has
    moved past the clock again and the worker does not hold it frozen. So
    the worker's freeze and the shim's never undo each other: the worker
    only ever freezes, and the shim thaws only what both allow.

    PR_SET_PDEATHSIG fires when the thread that forked the shim ends, not
    the process: spawn children only from a thread that lives as long as
    the worker (its main thread).

    The command's standard output and error are two pipes, one each, whose
    read ends the worker holds (non-blocking): it reads them as the child
    writes, and logs each line as a record of the task. A line longer than
    SHOAL_OUTPUT_LINE_MAX is cut there (said truncated) and the rest of it
    skipped, so the worker never holds more than that per stream; a child
    that writes faster than the worker reads blocks on its own pipe, never
    the worker. The splitter of the lines is pure (shoal_output_split).

    The status descriptor: the child's environment names it in
    SHOAL_STATUS_FD. It is one end of a stream socket pair; the worker holds
    the other. The child writes lines ("lag N", "ready"); the worker writes
    "promote TERM.VERSION" when the task becomes active. Lines end with a
    newline and are at most SHOAL_STATUS_LINE_MAX bytes with it. The parser
    of the child's lines is pure (shoal_status_parse), for the fuzzer.
*/
#ifndef SHOAL_CHILD_H
#define SHOAL_CHILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

//  The status descriptor's number in the child.
#define SHOAL_CHILD_STATUS_FD 3
//  A status line, its newline included.
#define SHOAL_STATUS_LINE_MAX 256

//  ---------------------------------------------------------------------
//  The child's status lines

typedef enum {
    SHOAL_STATUS_NONE = 0, //  no line ended in the bytes given
    SHOAL_STATUS_LAG = 1,  //  "lag N", or "ready" (lag 0)
    SHOAL_STATUS_BAD = 2,  //  a line that says nothing known, or is too long: skipped
} shoal_status_type_t;

typedef struct {
    int type;           //  shoal_status_type_t
    uint64_t lag;       //  LAG
    bool ready;         //  LAG: the line was "ready"
    const char *reason; //  BAD: why, a constant text
} shoal_status_line_t;

//  The part of a line read so far. Zero it to start (or restart).
typedef struct {
    char line[SHOAL_STATUS_LINE_MAX - 1]; //  without its newline
    size_t used;
    bool overlong; //  the line passed the limit: skipped to its newline
} shoal_status_parser_t;

//  Takes bytes of the stream up to the end of the first line that ends in
//  them, and returns how many it took; *status says what that line said.
//  When no line ends in them it takes them all, and status->type is NONE.
//  A line that grows past the limit is BAD as soon as it does, once; the
//  rest of it, to its newline, is skipped and never held. Blank lines are
//  passed over. No I/O, no allocation: the same bytes give the same lines,
//  however they are split.
size_t shoal_status_parse (shoal_status_parser_t *self, const char *data, size_t size,
                           shoal_status_line_t *status);

//  ---------------------------------------------------------------------
//  The child's output, in lines

//  A line of the child's standard output or error, its newline not
//  counted; the start of a longer one is a line, said truncated.
#define SHOAL_OUTPUT_LINE_MAX 2048

//  The part of a line read so far. Zero it to start.
typedef struct {
    char line[SHOAL_OUTPUT_LINE_MAX + 1]; //  a NUL after the bytes held
    size_t used;
    bool overlong; //  the line passed the limit: skipped to its newline
} shoal_output_splitter_t;

typedef struct {
    const char *text; //  NULL: no line; else its bytes (a NUL follows them;
                      //  the child may have written NULs too: see length).
                      //  Valid until the splitter takes more.
    size_t length;
    bool truncated;  //  the line was longer: only its start, cut at a
                     //  character's boundary when it is UTF-8
    bool unfinished; //  the stream ended with no newline after it
} shoal_output_line_t;

//  Takes bytes of a stream up to the end of the first line that ends or is
//  cut in them, and returns how many it took; line->text is that line, or
//  NULL when none ended in them (all were taken). Blank lines are passed
//  over; '\r' before a newline is dropped. No I/O, no allocation: the same
//  bytes give the same lines, however they are split.
size_t shoal_output_split (shoal_output_splitter_t *self, const char *data, size_t size,
                           shoal_output_line_t *line);
//  The stream ended: the line it left unfinished, if any (text NULL if none).
void shoal_output_end (shoal_output_splitter_t *self, shoal_output_line_t *line);

//  ---------------------------------------------------------------------
//  Children

typedef struct {
    const char *command;      //  run as /bin/sh -c command
    const char *job;          //  SHOAL_JOB, and SHOAL_TASK "job/index"
    uint32_t index;           //  SHOAL_INDEX
    uint32_t parallelism;     //  SHOAL_PARALLELISM
    int role;                 //  SHOAL_ROLE: shoal_role_code_t
    uint64_t epoch_term;      //  SHOAL_EPOCH "term.version"
    uint64_t epoch_version;   //
    bool fenced;              //  SHOAL_FENCED: 1 when the job is fenced, else 0
    const char *node;         //  SHOAL_NODE: the worker's node id
    char *const *environment; //  the rest: the worker's (as environ), less its options
    uint64_t grace_ms;        //  for what the command leaves behind when it exits
    int nice;                 //  added to the command's nice value (0..19); the
                              //  shim keeps the worker's, to freeze on time
    bool bound;               //  the command acts, so only until until_ms (as
    uint64_t until_ms;        //  shoal_child_lease); unbound: never frozen by its shim
} shoal_child_spec_t;

//  How a child ended.
typedef struct {
    int status;       //  the command's exit code, as the shim passes it on
    int signal;       //  the signal that killed the command (status 128 + it), or 0
    int shim_signal;  //  when the shim itself was killed (by someone else): the signal
    bool exec_failed; //  /bin/sh could not be run, or the shim could not fork
    char reason[128]; //  exec_failed: why
} shoal_child_exit_t;

typedef struct _shoal_child_t shoal_child_t;

//  Starts the shim, which starts the command, with the environment the
//  spec makes: the worker's environment without the variables of its
//  options (an embedded node in the child would take them for its own),
//  and SHOAL_JOB, SHOAL_TASK, SHOAL_INDEX, SHOAL_PARALLELISM, SHOAL_ROLE,
//  SHOAL_EPOCH, SHOAL_NODE and SHOAL_STATUS_FD. Standard input is
//  /dev/null; standard output and error are pipes the worker reads
//  (shoal_child_output). Returns NULL
//  with why when the shim could not be started. Whether the command runs
//  is known later (shoal_child_started).
shoal_child_t *shoal_child_new (const shoal_child_spec_t *spec, char *why, size_t why_size);

//  Kills a child that still runs (as shoal_child_kill) and waits for its
//  shim; frees it; nulls the pointer. Idempotent.
void shoal_child_destroy (shoal_child_t **self_p);

//  Descriptors to poll for reading: the one that tells that the command
//  was exec'd (-1 once known), and the status socket (-1 once closed).
int shoal_child_exec_fd (const shoal_child_t *self);
int shoal_child_status_fd (const shoal_child_t *self);

//  The command's output streams.
typedef enum {
    SHOAL_CHILD_STDOUT = 1,
    SHOAL_CHILD_STDERR = 2,
} shoal_child_stream_t;

//  The read end of a stream's pipe, to poll for reading (-1 once it ended).
int shoal_child_output_fd (const shoal_child_t *self, int stream);

//  The next line the command (or anything below it) wrote: 1 with *line
//  and *stream, 0 when no more can be read now, -1 when both streams
//  ended. Each call reads at most one pipe's buffer, and never waits. Once
//  the child is reaped, what its pipes still hold is read to the end, and
//  then they end, with a last unfinished line if there is one.
int shoal_child_output (shoal_child_t *self, int *stream, shoal_output_line_t *line);

//  True when lines are held that shoal_child_output gives without reading
//  (or, after the reap, streams are left to end): poll no longer then.
bool shoal_child_output_pending (const shoal_child_t *self);

//  "stdout", "stderr".
const char *shoal_child_stream_name (int stream);

//  Whether the command runs: 1 when /bin/sh was exec'd, -1 when it could
//  not be (why says why), 0 when not known yet (poll the exec descriptor).
int shoal_child_started (shoal_child_t *self, char *why, size_t why_size);

//  The command's process id, which is also its process group's (0 until
//  known), and the shim's.
pid_t shoal_child_pid (const shoal_child_t *self);
pid_t shoal_child_shim (const shoal_child_t *self);

//  The next line the child sent: 1 with *status (LAG or BAD), 0 when no
//  more can be read now, -1 when the child closed its end (which is fine:
//  a child need not say anything).
int shoal_child_status (shoal_child_t *self, shoal_status_line_t *status);

//  Tells the child its task is now active under epoch (term, version):
//  "promote TERM.VERSION". Never blocks: -1 with why when the line does not
//  fit in the socket now, or the child closed its end.
int shoal_child_promote (shoal_child_t *self, uint64_t term, uint64_t version, char *why,
                         size_t why_size);

//  Stops the child: SIGTERM to the command's group now, and SIGKILL once
//  now_ms + grace_ms has come (shoal_child_tick). A frozen child, which
//  cannot act on SIGTERM, one whose deadline has passed (it may not finish
//  its work), and one whose command has not started yet, are killed at
//  once. Stopping twice changes nothing.
int shoal_child_stop (shoal_child_t *self, uint64_t now_ms, uint64_t grace_ms);
bool shoal_child_stopping (const shoal_child_t *self);

//  SIGKILL to the command's group and, through the shim, to every process
//  below it; then SIGCONT, so that a frozen group dies too.
void shoal_child_kill (shoal_child_t *self);

//  Freezes the child: SIGSTOP to the command's group now, and its shim
//  thaws it no more. Or lets it go: its shim, woken, thaws it (SIGCONT)
//  once its deadline (shoal_child_lease) allows too.
void shoal_child_freeze (shoal_child_t *self, bool frozen);
//  Frozen by the worker, or by its shim for a deadline that passed.
bool shoal_child_frozen (const shoal_child_t *self);

//  The lease: the command may act until until_ms (CLOCK_MONOTONIC, in
//  ms; 0: not at all), or unbound (SHOAL_CHILD_UNBOUND: a learner or a
//  standby, which does not act). The shim freezes the command's group at
//  the deadline on its own, whatever the worker does then, and thaws it
//  when a later deadline comes, unless the worker froze it. A store in
//  shared memory: call it as often as the lease moves. Only a deadline
//  set earlier than it was, or given after one passed, costs a syscall
//  (a write that wakes the shim).
#define SHOAL_CHILD_UNBOUND UINT64_MAX
void shoal_child_lease (shoal_child_t *self, uint64_t until_ms);
//  The deadline as last given.
uint64_t shoal_child_until (const shoal_child_t *self);

//  When shoal_child_tick is due (UINT64_MAX: not), and the tick: kills a
//  child whose stop's grace is over.
uint64_t shoal_child_next (const shoal_child_t *self);
void shoal_child_tick (shoal_child_t *self, uint64_t now_ms);

//  Reaps the shim when it has exited, without waiting: 1 with *exit
//  filled, 0 while it runs. After 1, the child runs no more.
int shoal_child_reap (shoal_child_t *self, shoal_child_exit_t *exit);

//  An exit in words: "exited with status 3", "killed by signal 9 (Killed)".
void shoal_child_exit_text (const shoal_child_exit_t *exit, char *text, size_t size);

//  Where the worker's command line is (main's argc and argv), so that each
//  shim shows in ps as "shoal-shim JOB/INDEX" (cut to the room the
//  worker's command line has), not as the worker: call it once, before
//  the first child. Without it, only the thread name ("shim JOB/INDEX",
//  /proc/PID/comm, what top shows) is set.
void shoal_child_title_area (int argc, char **argv);

//  "active", "learner", "standby", as SHOAL_ROLE says them ("none" else).
const char *shoal_child_role_name (int role);

#endif

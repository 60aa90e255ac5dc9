/*  worker/child.c: the child process of one task: the shim that keeps it
    from outliving the worker, the signals to its process group, its status
    socket and the parser of its lines. worker/child.h says how they work.
*/
#define _GNU_SOURCE //  pipe2, dup3, ppoll

#include "worker/child.h"

#include "node/options.h"
#include "shoal.h"
#include "node/why.h"
#include "wire/wire.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

//  ---------------------------------------------------------------------
//  The status lines

//  A lag is a whole number, in decimal digits, that fits 64 bits.
static bool
s_number (const char *text, size_t length, uint64_t *value)
{
    if (length == 0)
        return false;
    uint64_t number = 0;
    for (size_t i = 0; i < length; i++) {
        if (text[i] < '0' || text[i] > '9')
            return false;
        uint64_t digit = (uint64_t) (text[i] - '0');
        if (number > (UINT64_MAX - digit) / 10)
            return false;
        number = number * 10 + digit;
    }
    *value = number;
    return true;
}

//  What one whole line (without its newline) says.
static void
s_status_line (const char *line, size_t length, shoal_status_line_t *status)
{
    uint64_t lag = 0;
    if (length == 5 && memcmp (line, "ready", 5) == 0)
        *status = (shoal_status_line_t){ .type = SHOAL_STATUS_LAG, .lag = 0, .ready = true };
    else if (length > 4 && memcmp (line, "lag ", 4) == 0 && s_number (line + 4, length - 4, &lag))
        *status = (shoal_status_line_t){ .type = SHOAL_STATUS_LAG, .lag = lag };
    else if (length >= 4 && memcmp (line, "lag ", 4) == 0)
        *status = (shoal_status_line_t){ .type = SHOAL_STATUS_BAD,
                                         .reason = "lag takes a whole number, 0 to 2^64-1" };
    else
        *status = (shoal_status_line_t){ .type = SHOAL_STATUS_BAD,
                                         .reason = "not a status line (lag N, or ready)" };
}

size_t
shoal_status_parse (shoal_status_parser_t *self, const char *data, size_t size,
                    shoal_status_line_t *status)
{
    assert (self && status && (data || size == 0));
    *status = (shoal_status_line_t){ .type = SHOAL_STATUS_NONE };
    for (size_t i = 0; i < size; i++) {
        if (data[i] == '\n') {
            size_t used = self->used;
            bool overlong = self->overlong;
            self->used = 0;
            self->overlong = false;
            if (used > 0 && !overlong) {
                s_status_line (self->line, used, status);
                return i + 1;
            }
            //  A blank line, or the end of one that was too long.
            continue;
        }
        if (self->overlong)
            continue;
        if (self->used == sizeof self->line) {
            //  With this byte and its newline the line would pass the limit:
            //  it is refused now, and the rest of it is never held.
            self->overlong = true;
            self->used = 0;
            *status = (shoal_status_line_t){ .type = SHOAL_STATUS_BAD,
                                             .reason = "a line longer than 256 bytes" };
            return i + 1;
        }
        self->line[self->used++] = data[i];
    }
    return size;
}

//  ---------------------------------------------------------------------
//  The output lines

static void
s_output_line (shoal_output_splitter_t *self, size_t length, bool truncated, bool unfinished,
               shoal_output_line_t *line)
{
    self->line[length] = 0;
    *line = (shoal_output_line_t){
        .text = self->line, .length = length, .truncated = truncated, .unfinished = unfinished
    };
}

size_t
shoal_output_split (shoal_output_splitter_t *self, const char *data, size_t size,
                    shoal_output_line_t *line)
{
    assert (self && line && (data || size == 0));
    *line = (shoal_output_line_t){ 0 };
    for (size_t i = 0; i < size; i++) {
        if (data[i] == '\n') {
            size_t used = self->used;
            bool overlong = self->overlong;
            self->used = 0;
            self->overlong = false;
            if (used > 0 && self->line[used - 1] == '\r')
                used--;
            if (used > 0 && !overlong) {
                s_output_line (self, used, false, false, line);
                return i + 1;
            }
            continue; //  a blank line, or the end of one that was cut
        }
        if (self->overlong)
            continue;
        if (self->used == SHOAL_OUTPUT_LINE_MAX) {
            //  The line passes the limit: its start is a line now, and the
            //  rest of it, this byte on, is never held.
            size_t used = shoal_text_cut (self->line, self->used);
            self->used = 0;
            self->overlong = true;
            s_output_line (self, used, true, false, line);
            return i + 1;
        }
        self->line[self->used++] = data[i];
    }
    return size;
}

void
shoal_output_end (shoal_output_splitter_t *self, shoal_output_line_t *line)
{
    assert (self && line);
    size_t used = self->overlong ? 0 : self->used;
    if (used > 0 && self->line[used - 1] == '\r')
        used--;
    self->used = 0;
    self->overlong = false;
    if (used > 0)
        s_output_line (self, used, false, true, line);
    else
        *line = (shoal_output_line_t){ 0 };
}

//  ---------------------------------------------------------------------
//  The environment of a command

//  The variables a child is given, made afresh for each.
#define S_TASK_VARIABLES 9

typedef struct {
    char **entries;               //  what the command gets, NULL last
    char *made[S_TASK_VARIABLES]; //  the task's variables, to free
} s_environment_t;

//  True when the entry "NAME=value" names one of the names given.
static bool
s_names (const char *entry, size_t length, const char *name)
{
    return strlen (name) == length && memcmp (entry, name, length) == 0;
}

//  The worker's variables go to its children, but for those of its options
//  (a node embedded in the child would take them for its own), those the
//  child is given anew, and the service manager's words to the worker
//  (worker/notify.h): a child that speaks the notify protocol must not
//  speak for its worker, nor think a watchdog is set on it.
static bool
s_passed_on (const char *entry)
{
    static const char *const manager[] = { "NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID" };
    static const char prefix[] = SHOAL_OPTIONS_ENV_PREFIX;
    size_t length = strcspn (entry, "=");
    for (size_t i = 0; i < sizeof manager / sizeof manager[0]; i++)
        if (s_names (entry, length, manager[i]))
            return false;
    if (strncmp (entry, prefix, sizeof prefix - 1) != 0)
        return true;
    static const char *const reserved[] = { SHOAL_OPTIONS_ENV_RESERVED };
    for (size_t i = 0; i < sizeof reserved / sizeof reserved[0]; i++)
        if (s_names (entry, length, reserved[i]))
            return false;
    for (size_t i = 0; i < shoal_options_count (); i++) {
        char name[128];
        const char *key = shoal_options_info (i)->key;
        size_t at = snprintf (name, sizeof name, "%s", prefix);
        for (; *key && at < sizeof name - 1; key++)
            name[at++] = *key == '-' ? '_' : (char) (*key >= 'a' && *key <= 'z' ? *key - 32 : *key);
        name[at] = 0;
        if (s_names (entry, length, name))
            return false;
    }
    return true;
}

static char *
s_variable (const char *format, ...)
{
    va_list args;
    va_start (args, format);
    char *text = NULL;
    if (vasprintf (&text, format, args) < 0)
        text = NULL;
    va_end (args);
    return text;
}

static void
s_environment_free (s_environment_t *environment)
{
    for (size_t i = 0; i < S_TASK_VARIABLES; i++)
        free (environment->made[i]);
    free (environment->entries);
}

static int
s_environment (const shoal_child_spec_t *spec, s_environment_t *environment)
{
    memset (environment, 0, sizeof *environment);
    size_t count = 0;
    for (char *const *entry = spec->environment; entry && *entry; entry++)
        count++;
    environment->entries = calloc (count + S_TASK_VARIABLES + 1, sizeof (char *));
    if (!environment->entries)
        return -1;
    size_t used = 0;
    for (char *const *entry = spec->environment; entry && *entry; entry++)
        if (s_passed_on (*entry))
            environment->entries[used++] = *entry;
    char **made = environment->made;
    made[0] = s_variable ("SHOAL_JOB=%s", spec->job);
    made[1] = s_variable ("SHOAL_TASK=%s/%u", spec->job, spec->index);
    made[2] = s_variable ("SHOAL_INDEX=%u", spec->index);
    made[3] = s_variable ("SHOAL_PARALLELISM=%u", spec->parallelism);
    made[4] = s_variable ("SHOAL_ROLE=%s", shoal_child_role_name (spec->role));
    made[5] = s_variable ("SHOAL_EPOCH=%llu.%llu", (unsigned long long) spec->epoch_term,
                          (unsigned long long) spec->epoch_version);
    made[6] = s_variable ("SHOAL_NODE=%s", spec->node ? spec->node : "");
    made[7] = s_variable ("SHOAL_STATUS_FD=%d", SHOAL_CHILD_STATUS_FD);
    made[8] = s_variable ("SHOAL_FENCED=%d", spec->fenced ? 1 : 0);
    for (size_t i = 0; i < S_TASK_VARIABLES; i++) {
        if (!made[i]) {
            s_environment_free (environment);
            return -1;
        }
        environment->entries[used++] = made[i];
    }
    return 0;
}

//  ---------------------------------------------------------------------
//  The shim and the command: after the fork, async-signal-safe calls only

//  The exec pipe carries records from the shim and the command to the
//  worker: the command's pid, or why it could not run. Each is written
//  whole (a pipe write of at most PIPE_BUF bytes is atomic). Its end of
//  file, once every writer has closed it (the command on exec), says the
//  command was exec'd.
typedef struct {
    int32_t kind;
    int32_t value;
} s_record_t;

#define S_RECORD_PID  'P' //  the command's pid, which is its group's
#define S_RECORD_EXEC 'E' //  the errno of an exec of /bin/sh that failed
#define S_RECORD_FORK 'F' //  the errno of the shim's fork that failed

//  In the shim and the command: 3 the status socket, 4 the exec pipe, 5
//  and 6 the write ends of the output pipes (the command takes them as its
//  standard output and error), 7 the eventfd the worker wakes the shim by
//  (closed on exec); no other descriptor past standard error.
#define S_EXEC_FD       4
#define S_OUT_FD        5
#define S_ERR_FD        6
#define S_KICK_FD       7
#define S_FIRST_FREE_FD 8

//  The shim's exit status when it could not set up: the worker never
//  hears of a command then, and says so.
#define S_EXIT_SETUP 126

//  The lease, in a page the worker and the shim share (MAP_SHARED, made
//  before the fork). The worker writes, the shim reads: lock-free atomics
//  only, which the worker stores with no syscall, and which the shim (a
//  fork of a threaded process, where little else is safe) may use.
typedef struct {
    _Atomic uint64_t until; //  the command may act before then (CLOCK_MONOTONIC
                            //  ms); SHOAL_CHILD_UNBOUND: it does not act
    _Atomic uint32_t held;  //  the worker froze it: the shim does not thaw it
    _Atomic uint32_t thaw;  //  the worker let go of it: the shim thaws it
                            //  (the worker never does), if until allows
} s_lease_t;

//  The shim reads what the worker writes in memory they share: only
//  atomics that need no lock (a lock of libatomic's would be the process's
//  own) may be there.
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2 && ATOMIC_INT_LOCK_FREE == 2,
               "the child's lease needs lock-free 64-bit atomics");

static uint64_t
s_clock_ms (void)
{
    struct timespec now;
    clock_gettime (CLOCK_MONOTONIC, &now);
    return (uint64_t) now.tv_sec * 1000 + (uint64_t) now.tv_nsec / 1000000;
}

//  What the shim and the command need, made before the fork.
typedef struct {
    pid_t worker;
    char *const *argv;
    char *const *envp;
    int status_fd; //  the child's end of the status socket
    int exec_fd;   //  the write end of the exec pipe
    int out_fd;    //  the write ends of the output pipes
    int err_fd;
    uint64_t grace_ms;
    int nice;         //  the command's, over the worker's; not the shim's
    s_lease_t *lease; //  shared with the worker
    int kick_fd;      //  the eventfd the worker wakes the shim by, when the lease changes
    int fd_limit;     //  descriptors to close one by one when close_range is missing
    char title[SHOAL_TASK_TEXT + 16]; //  "shoal-shim JOB/INDEX", for ps
} s_launch_t;

//  The worker's command line, which a shim (a fork of the worker) rewrites
//  with its title: see shoal_child_title_area.
static char *s_title_area;
static size_t s_title_size;

void
shoal_child_title_area (int argc, char **argv)
{
    if (argc < 1 || !argv[0])
        return;
    //  The arguments are one block on Linux; only the block that runs on
    //  unbroken from argv[0] is used.
    char *end = argv[0] + strlen (argv[0]) + 1;
    for (int i = 1; i < argc && argv[i] == end; i++)
        end += strlen (argv[i]) + 1;
    s_title_area = argv[0];
    s_title_size = (size_t) (end - argv[0]);
}

//  Names the shim for ps and top: its command line (as far as the
//  worker's has room) and its thread name (15 bytes: "shim JOB/INDEX").
//  Without this, each shim shows as the worker itself.
static void
s_shim_title (const s_launch_t *launch)
{
    prctl (PR_SET_NAME, launch->title + strlen ("shoal-"));
    if (!s_title_area || s_title_size < 2)
        return;
    size_t length = strlen (launch->title);
    if (length > s_title_size - 1)
        length = s_title_size - 1;
    memcpy (s_title_area, launch->title, length);
    memset (s_title_area + length, 0, s_title_size - length);
}

static volatile sig_atomic_t s_shim_terminated;

static void
s_shim_on_signal (int signal)
{
    if (signal == SIGTERM)
        s_shim_terminated = 1;
}

static void
s_record (int kind, int value)
{
    s_record_t record = { kind, value };
    while (write (S_EXEC_FD, &record, sizeof record) < 0 && errno == EINTR)
        ;
}

//  Whether the command may act at now, as the worker last wrote: its
//  deadline has not passed, and the worker does not hold it frozen.
static bool
s_lease_allows (s_lease_t *lease, uint64_t now)
{
    return now < atomic_load (&lease->until) && !atomic_load (&lease->held);
}

//  When the shim must look at the lease again by itself: at the deadline,
//  while the command may act (UINT64_MAX: never). Whatever else changes,
//  the worker wakes it for (shoal_child_lease, shoal_child_freeze): a
//  deadline that only moves later, as a lease that goes on, needs no wake.
static uint64_t
s_lease_look (s_lease_t *lease, bool allowed)
{
    uint64_t until = atomic_load (&lease->until);
    return allowed && until != SHOAL_CHILD_UNBOUND ? until : UINT64_MAX;
}

//  Holds the command's group to the lease: stopped once it may not act,
//  continued once it may again. The shim alone continues a group: the
//  worker only ever stops one, and says when it let go (thaw), so that
//  neither undoes what the other needs. *stopped: the shim stopped it.
static void
s_shim_hold (s_lease_t *lease, pid_t command, bool allowed, bool *stopped, bool *group_gone)
{
    int signal = 0;
    if (!allowed) {
        if (!*stopped)
            signal = SIGSTOP;
        *stopped = true;
    } else {
        bool let_go = atomic_exchange (&lease->thaw, 0) != 0;
        if (*stopped || let_go)
            signal = SIGCONT;
        *stopped = false;
    }
    if (signal && !*group_gone && kill (-command, signal) != 0 && errno == ESRCH)
        *group_gone = true; //  its id may be reused from now on
}

//  Sends signal to every child of the shim, and to the group each leads. A
//  live process's id names no group but its own, so this reaches nobody
//  else. The shim is a subreaper: each process below it whose parent dies
//  becomes its child, so sweeping again after each death reaches the whole
//  tree, also what left the command's group (setsid).
static void
s_shim_sweep (int signal)
{
    int fd = open ("/proc/thread-self/children", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    char buffer[512];
    pid_t pid = 0;
    ssize_t size;
    while ((size = read (fd, buffer, sizeof buffer)) > 0)
        for (ssize_t i = 0; i <= size; i++) {
            bool digit = i < size && buffer[i] >= '0' && buffer[i] <= '9';
            if (digit && pid < 100000000)
                pid = pid * 10 + (buffer[i] - '0');
            else if (!digit && i < size && pid > 0) {
                kill (pid, signal);
                kill (-pid, signal);
                pid = 0;
            }
        }
    close (fd);
}

//  The command's standard output and error: the pipes the worker reads.
//  Without them, the command writes to the worker's own, as before.
static void
s_command_output (void)
{
    if (dup2 (S_OUT_FD, 1) == 1)
        close (S_OUT_FD);
    if (dup2 (S_ERR_FD, 2) == 2)
        close (S_ERR_FD);
}

//  The command's process: its own group, /dev/null for input, the output
//  pipes as standard output and error, the status socket as descriptor 3,
//  default signals, then /bin/sh -c.
_Noreturn static void
s_command (const s_launch_t *launch, pid_t shim)
{
    setpgid (0, 0);
    //  Should the shim die by SIGKILL, the command dies too (this outlives
    //  exec). What the command starts is the shim's to kill.
    prctl (PR_SET_PDEATHSIG, SIGKILL);
    if (getppid () != shim)
        _exit (127);
    //  Only the command yields the CPU: its shim must still freeze it at
    //  the lease's end when the command keeps every core busy. Raising
    //  one's own nice value cannot be refused.
    if (launch->nice > 0)
        (void) !nice (launch->nice);
    int null = open ("/dev/null", O_RDONLY);
    if (null > 0) {
        dup2 (null, 0);
        close (null);
    }
    s_command_output ();
    struct sigaction fallback = { .sa_handler = SIG_DFL };
    for (int signal = 1; signal < NSIG; signal++)
        if (signal != SIGKILL && signal != SIGSTOP)
            sigaction (signal, &fallback, NULL);
    //  A SIGTERM the worker sent to the group before this is taken now, as
    //  the command would: it never runs.
    sigset_t none;
    sigemptyset (&none);
    sigprocmask (SIG_SETMASK, &none, NULL);
    execve ("/bin/sh", launch->argv, launch->envp);
    s_record (S_RECORD_EXEC, errno);
    _exit (127);
}

//  Puts the status socket at 3 and the exec pipe at 4 (closed on exec) and
//  closes every other descriptor above standard error: the worker's
//  sockets, and the ends it holds of its other children's channels, which
//  would keep them open.
static void
s_shim_descriptors (const s_launch_t *launch)
{
    int status = fcntl (launch->status_fd, F_DUPFD, S_FIRST_FREE_FD);
    int exec = fcntl (launch->exec_fd, F_DUPFD, S_FIRST_FREE_FD);
    int out = fcntl (launch->out_fd, F_DUPFD, S_FIRST_FREE_FD);
    int err = fcntl (launch->err_fd, F_DUPFD, S_FIRST_FREE_FD);
    int kick = fcntl (launch->kick_fd, F_DUPFD, S_FIRST_FREE_FD);
    if (status < 0 || exec < 0 || out < 0 || err < 0 || kick < 0 ||
        dup2 (status, SHOAL_CHILD_STATUS_FD) < 0 || dup3 (exec, S_EXEC_FD, O_CLOEXEC) < 0 ||
        dup2 (out, S_OUT_FD) < 0 || dup2 (err, S_ERR_FD) < 0 ||
        dup3 (kick, S_KICK_FD, O_CLOEXEC) < 0)
        _exit (S_EXIT_SETUP);
#ifdef SYS_close_range
    if (syscall (SYS_close_range, S_FIRST_FREE_FD, ~0U, 0) == 0)
        return;
#endif
    for (int fd = S_FIRST_FREE_FD; fd < launch->fd_limit; fd++)
        close (fd);
}

//  The shim: see child.h. Every signal is blocked (shoal_child_new blocked
//  them before the fork) but in ppoll, which lets SIGTERM and SIGCHLD in,
//  and wakes when the worker kicks it too.
_Noreturn static void
s_shim (const s_launch_t *launch)
{
    struct sigaction action = { .sa_handler = s_shim_on_signal };
    sigemptyset (&action.sa_mask);
    sigaction (SIGTERM, &action, NULL);
    sigaction (SIGCHLD, &action, NULL);
    setpgid (0, 0);
    prctl (PR_SET_PDEATHSIG, SIGTERM);
    //  The worker may have died before the line above: nothing to run.
    if (getppid () != launch->worker)
        _exit (S_EXIT_SETUP);
    prctl (PR_SET_CHILD_SUBREAPER, 1);
    s_shim_descriptors (launch);
    s_shim_title (launch);

    pid_t shim = getpid ();
    pid_t command = fork ();
    if (command == 0)
        s_command (launch, shim);
    if (command < 0) {
        s_record (S_RECORD_FORK, errno);
        _exit (S_EXIT_SETUP);
    }
    //  The command does it too; whichever comes first makes the group
    //  before the worker hears of it.
    setpgid (command, command);
    s_record (S_RECORD_PID, command);
    close (S_EXEC_FD);
    close (SHOAL_CHILD_STATUS_FD);
    //  The output pipes end once the command and all below it are done.
    close (S_OUT_FD);
    close (S_ERR_FD);

    sigset_t waiting;
    sigfillset (&waiting);
    sigdelset (&waiting, SIGTERM);
    sigdelset (&waiting, SIGCHLD);
    int status = 0;
    bool command_done = false, group_gone = false, leftovers_told = false, killing = false;
    bool stopped = false; //  the shim stopped the command's group for the lease
    uint64_t deadline = 0;
    while (true) {
        int wstatus;
        pid_t pid;
        while ((pid = waitpid (-1, &wstatus, WNOHANG)) > 0)
            if (pid == command) {
                status = wstatus;
                command_done = true;
            }
        if (pid < 0 && errno == ECHILD)
            break; //  nothing is left below the shim
        uint64_t now = s_clock_ms ();
        bool allowed = s_lease_allows (launch->lease, now);
        //  What the command left behind may not act past the lease either:
        //  told to end already, it ends at once.
        killing |=
            s_shim_terminated || (leftovers_told && now >= deadline) || (command_done && !allowed);
        if (killing || (command_done && !leftovers_told)) {
            //  The worker died or gave up waiting: everything dies now.
            //  Or the command ended and left processes behind: they are
            //  told to end, and killed after the grace.
            int signal = killing ? SIGKILL : SIGTERM;
            if (!group_gone && kill (-command, signal) != 0 && errno == ESRCH)
                group_gone = true; //  its id may be reused from now on
            s_shim_sweep (signal);
            if (!leftovers_told) {
                leftovers_told = true;
                deadline = now + launch->grace_ms;
            }
        }
        if (killing) {
            //  Only the deaths are waited for now (SIGCHLD).
            ppoll (NULL, 0, NULL, &waiting);
            continue;
        }
        //  Even while the worker cannot act: it may be stopped, and the
        //  leader give the task to another node once this lease is over.
        s_shim_hold (launch->lease, command, allowed, &stopped, &group_gone);
        uint64_t wake = s_lease_look (launch->lease, allowed);
        if (leftovers_told && deadline < wake)
            wake = deadline;
        uint64_t left = wake > now ? wake - now : 0;
        struct timespec timeout = { .tv_sec = (time_t) (left / 1000),
                                    .tv_nsec = (long) (left % 1000) * 1000000 };
        struct pollfd kick = { .fd = S_KICK_FD, .events = POLLIN };
        if (ppoll (&kick, 1, wake == UINT64_MAX ? NULL : &timeout, &waiting) > 0) {
            //  Taken before the lease is read again: a kick that comes
            //  later wakes the next ppoll.
            uint64_t kicks;
            if (read (S_KICK_FD, &kicks, sizeof kicks) < 0) {
                //  EAGAIN: taken already.
            }
        }
    }
    if (WIFEXITED (status))
        _exit (WEXITSTATUS (status));
    _exit (WIFSIGNALED (status) ? 128 + WTERMSIG (status) : 1);
}

//  ---------------------------------------------------------------------
//  Children, as the worker sees them

//  One output stream of the command, as the worker reads it.
typedef struct {
    int fd; //  the read end of its pipe; -1 once it ended
    shoal_output_splitter_t splitter;
    char input[4096]; //  bytes read, split from input_at
    size_t input_used;
    size_t input_at;
} s_stream_t;

struct _shoal_child_t {
    pid_t shim;
    pid_t pid;     //  the command and its group; 0 until known
    int exec_fd;   //  the read end of the exec pipe; -1 once it ended
    int status_fd; //  the worker's end of the status socket; -1 once closed
    int started;   //  1 exec'd, -1 could not be, 0 not known yet
    char reason[128];
    bool stopping;
    bool killed;
    bool frozen; //  by the worker (its shim may freeze it too: lease)
    bool reaped;
    s_lease_t *lease; //  the page shared with the shim
    int kick_fd;      //  an eventfd: a write wakes the shim to look at the lease
    uint64_t kill_at; //  stopping: when SIGKILL comes
    shoal_child_exit_t exit;
    shoal_status_parser_t parser;
    char input[512]; //  bytes read from the status socket, parsed from input_at
    size_t input_used;
    size_t input_at;
    s_stream_t output[2]; //  standard output and error, by stream - 1
    int output_turn;      //  the stream read first next, in turns
};

static void
s_close (int *fd)
{
    if (*fd >= 0)
        close (*fd);
    *fd = -1;
}

static void
s_nonblocking (int fd)
{
    int flags = fcntl (fd, F_GETFL);
    if (flags >= 0)
        fcntl (fd, F_SETFL, flags | O_NONBLOCK);
}

//  The output pipes: the worker reads ends[i][0] (non-blocking, so that a
//  child never holds the worker up), the command writes ends[i][1]. Both
//  close on exec: the shim places the write ends where the command finds
//  them. Returns 0, or -1 with nothing left open.
static int
s_output_pipes (int ends[2][2])
{
    ends[0][0] = ends[0][1] = ends[1][0] = ends[1][1] = -1;
    if (pipe2 (ends[0], O_CLOEXEC) != 0 || pipe2 (ends[1], O_CLOEXEC) != 0) {
        for (int i = 0; i < 2; i++) {
            s_close (&ends[i][0]);
            s_close (&ends[i][1]);
        }
        return -1;
    }
    s_nonblocking (ends[0][0]);
    s_nonblocking (ends[1][0]);
    return 0;
}

shoal_child_t *
shoal_child_new (const shoal_child_spec_t *spec, char *why, size_t why_size)
{
    assert (spec && spec->command && spec->job);
    if (spec->nice < 0 || spec->nice > 19) {
        shoal_why (why, why_size, "nice %d is outside 0..19", spec->nice);
        return NULL;
    }
    shoal_child_t *self = calloc (1, sizeof *self);
    s_environment_t environment;
    if (!self || s_environment (spec, &environment) != 0) {
        free (self);
        shoal_why (why, why_size, "out of memory");
        return NULL;
    }
    self->exec_fd = self->status_fd = -1;
    self->output[0].fd = self->output[1].fd = -1;
    self->kill_at = UINT64_MAX;
    self->lease =
        mmap (NULL, sizeof (s_lease_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (self->lease == MAP_FAILED) {
        shoal_why (why, why_size, "cannot map the child's lease: %s", strerror (errno));
        s_environment_free (&environment);
        free (self);
        return NULL;
    }
    atomic_init (&self->lease->until, spec->bound ? spec->until_ms : SHOAL_CHILD_UNBOUND);
    atomic_init (&self->lease->held, 0);
    atomic_init (&self->lease->thaw, 0);
    int pair[2] = { -1, -1 }, pipe_fds[2] = { -1, -1 }, output[2][2];
    self->kick_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (self->kick_fd < 0 || socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0 ||
        pipe2 (pipe_fds, O_CLOEXEC) != 0 || s_output_pipes (output) != 0) {
        shoal_why (why, why_size, "cannot make the child's descriptors: %s", strerror (errno));
        s_close (&self->kick_fd);
        s_close (&pair[0]);
        s_close (&pair[1]);
        s_close (&pipe_fds[0]);
        s_close (&pipe_fds[1]);
        s_environment_free (&environment);
        munmap (self->lease, sizeof (s_lease_t));
        free (self);
        return NULL;
    }
    s_nonblocking (pair[0]);
    s_nonblocking (pipe_fds[0]);
    char *argv[] = { "/bin/sh", "-c", (char *) spec->command, NULL };
    long fd_limit = sysconf (_SC_OPEN_MAX);
    s_launch_t launch = {
        .worker = getpid (),
        .argv = argv,
        .envp = environment.entries,
        .status_fd = pair[1],
        .exec_fd = pipe_fds[1],
        .out_fd = output[0][1],
        .err_fd = output[1][1],
        .grace_ms = spec->grace_ms,
        .nice = spec->nice,
        .lease = self->lease,
        .kick_fd = self->kick_fd,
        .fd_limit = fd_limit > 0 && fd_limit < 65536 ? (int) fd_limit : 65536,
    };
    snprintf (launch.title, sizeof launch.title, "shoal-shim %.*s/%u", SHOAL_NAME_TEXT - 1,
              spec->job, spec->index);
    //  The shim starts with every signal blocked, so that none arrives
    //  before it is ready for it.
    sigset_t all, old;
    sigfillset (&all);
    pthread_sigmask (SIG_SETMASK, &all, &old);
    pid_t pid = fork ();
    if (pid == 0)
        s_shim (&launch);
    int saved = errno;
    pthread_sigmask (SIG_SETMASK, &old, NULL);
    s_close (&pair[1]);
    s_close (&pipe_fds[1]);
    s_close (&output[0][1]);
    s_close (&output[1][1]);
    s_environment_free (&environment);
    if (pid < 0) {
        shoal_why (why, why_size, "cannot fork: %s", strerror (saved));
        s_close (&pair[0]);
        s_close (&pipe_fds[0]);
        s_close (&output[0][0]);
        s_close (&output[1][0]);
        s_close (&self->kick_fd);
        munmap (self->lease, sizeof (s_lease_t));
        free (self);
        return NULL;
    }
    self->shim = pid;
    self->status_fd = pair[0];
    self->exec_fd = pipe_fds[0];
    self->output[0].fd = output[0][0];
    self->output[1].fd = output[1][0];
    return self;
}

//  Reads what the exec pipe holds: the command's pid, then its end (the
//  command was exec'd) or why it could not run.
static void
s_exec_read (shoal_child_t *self)
{
    while (self->exec_fd >= 0) {
        s_record_t records[4];
        ssize_t size = read (self->exec_fd, records, sizeof records);
        if (size < 0 && errno == EINTR)
            continue;
        if (size < 0)
            return; //  nothing yet
        for (size_t i = 0; i < (size_t) size / sizeof records[0]; i++) {
            const s_record_t *record = &records[i];
            if (record->kind == S_RECORD_PID && record->value > 0) {
                self->pid = record->value;
                if (self->frozen && !self->killed)
                    kill (-self->pid, SIGSTOP);
            } else if (record->kind == S_RECORD_EXEC || record->kind == S_RECORD_FORK) {
                self->started = -1;
                snprintf (self->reason, sizeof self->reason, "%s: %s",
                          record->kind == S_RECORD_EXEC ? "cannot run /bin/sh"
                                                        : "the shim cannot fork",
                          strerror (record->value));
            }
        }
        if (size == 0) {
            s_close (&self->exec_fd);
            if (self->started == 0 && self->pid > 0)
                self->started = 1;
            else if (self->started == 0) {
                self->started = -1;
                snprintf (self->reason, sizeof self->reason,
                          "the shim ended before it started the command");
            }
        }
    }
}

void
shoal_child_destroy (shoal_child_t **self_p)
{
    assert (self_p);
    shoal_child_t *self = *self_p;
    if (!self)
        return;
    if (!self->reaped) {
        shoal_child_kill (self);
        int status;
        while (waitpid (self->shim, &status, 0) < 0 && errno == EINTR)
            ;
    }
    s_close (&self->exec_fd);
    s_close (&self->status_fd);
    s_close (&self->output[0].fd);
    s_close (&self->output[1].fd);
    s_close (&self->kick_fd);
    munmap (self->lease, sizeof (s_lease_t));
    free (self);
    *self_p = NULL;
}

int
shoal_child_exec_fd (const shoal_child_t *self)
{
    return self->exec_fd;
}

int
shoal_child_status_fd (const shoal_child_t *self)
{
    return self->status_fd;
}

int
shoal_child_started (shoal_child_t *self, char *why, size_t why_size)
{
    s_exec_read (self);
    if (self->started < 0)
        shoal_why (why, why_size, "%s", self->reason);
    return self->started;
}

pid_t
shoal_child_pid (const shoal_child_t *self)
{
    return self->pid;
}

pid_t
shoal_child_shim (const shoal_child_t *self)
{
    return self->shim;
}

int
shoal_child_status (shoal_child_t *self, shoal_status_line_t *status)
{
    while (true) {
        if (self->input_at < self->input_used) {
            self->input_at += shoal_status_parse (&self->parser, self->input + self->input_at,
                                                  self->input_used - self->input_at, status);
            if (status->type != SHOAL_STATUS_NONE)
                return 1;
            continue;
        }
        if (self->status_fd < 0)
            return -1;
        ssize_t size = recv (self->status_fd, self->input, sizeof self->input, MSG_DONTWAIT);
        if (size < 0 && errno == EINTR)
            continue;
        if (size < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (size <= 0) {
            //  The child closed its end, or exited. A line it left
            //  unfinished says nothing.
            s_close (&self->status_fd);
            return -1;
        }
        self->input_used = (size_t) size;
        self->input_at = 0;
    }
}

int
shoal_child_output_fd (const shoal_child_t *self, int stream)
{
    return stream == SHOAL_CHILD_STDOUT || stream == SHOAL_CHILD_STDERR
               ? self->output[stream - 1].fd
               : -1;
}

//  Reads of one stream per call once the shim is reaped: enough for the
//  whole pipe a child leaves, and a bound against a process that escaped
//  a shim killed by someone else and writes on.
#define S_READS_AT_EXIT 64

//  The next line of one stream: 1 with *line, 0 when none now. While the
//  child runs, its pipe is read at most once. Once the shim is reaped,
//  every writer is gone (but for such an escaped process): the pipe is
//  read on until it holds a line or ends, so that what the child wrote
//  last (after blank lines, or the tail of a line cut at the limit) is not
//  left in it.
static int
s_output_next (shoal_child_t *self, s_stream_t *out, shoal_output_line_t *line)
{
    int reads = 0;
    while (true) {
        if (out->input_at < out->input_used) {
            out->input_at += shoal_output_split (&out->splitter, out->input + out->input_at,
                                                 out->input_used - out->input_at, line);
            if (line->text)
                return 1;
            continue;
        }
        if (out->fd < 0 || (reads > 0 && !self->reaped) || reads >= S_READS_AT_EXIT)
            return 0;
        ssize_t size = read (out->fd, out->input, sizeof out->input);
        if (size < 0 && errno == EINTR)
            continue;
        if (size > 0) {
            out->input_used = (size_t) size;
            out->input_at = 0;
            reads++;
            continue;
        }
        if (size < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && !self->reaped)
            return 0;
        //  The end, an error, or nothing left after the reap: the line the
        //  child left unfinished is the last.
        s_close (&out->fd);
        shoal_output_end (&out->splitter, line);
        return line->text ? 1 : 0;
    }
}

int
shoal_child_output (shoal_child_t *self, int *stream, shoal_output_line_t *line)
{
    //  The streams take turns, so that neither holds the other up.
    for (int i = 0; i < 2; i++) {
        int at = (self->output_turn + i) % 2;
        if (s_output_next (self, &self->output[at], line) == 1) {
            *stream = at + 1;
            self->output_turn = (at + 1) % 2;
            return 1;
        }
    }
    *line = (shoal_output_line_t){ 0 };
    return self->output[0].fd < 0 && self->output[1].fd < 0 ? -1 : 0;
}

bool
shoal_child_output_pending (const shoal_child_t *self)
{
    for (int i = 0; i < 2; i++) {
        const s_stream_t *out = &self->output[i];
        if (out->input_at < out->input_used || (self->reaped && out->fd >= 0))
            return true;
    }
    return false;
}

const char *
shoal_child_stream_name (int stream)
{
    return stream == SHOAL_CHILD_STDERR ? "stderr" : "stdout";
}

int
shoal_child_promote (shoal_child_t *self, uint64_t term, uint64_t version, char *why,
                     size_t why_size)
{
    char line[64];
    int length = snprintf (line, sizeof line, "promote %llu.%llu\n", (unsigned long long) term,
                           (unsigned long long) version);
    if (self->status_fd < 0)
        return shoal_why (why, why_size, "the child closed its status descriptor");
    ssize_t sent = send (self->status_fd, line, (size_t) length, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (sent == length)
        return 0;
    return shoal_why (why, why_size, "cannot tell the child: %s",
                      sent < 0 ? strerror (errno) : "the line did not fit");
}

int
shoal_child_stop (shoal_child_t *self, uint64_t now_ms, uint64_t grace_ms)
{
    if (self->stopping || self->reaped)
        return 0;
    self->stopping = true;
    s_exec_read (self);
    if (shoal_child_frozen (self) || self->pid == 0)
        shoal_child_kill (self);
    else {
        kill (-self->pid, SIGTERM);
        self->kill_at = now_ms + grace_ms < now_ms ? UINT64_MAX - 1 : now_ms + grace_ms;
    }
    return 0;
}

bool
shoal_child_stopping (const shoal_child_t *self)
{
    return self->stopping;
}

void
shoal_child_kill (shoal_child_t *self)
{
    //  Once the shim is reaped, its ids may name other processes.
    if (self->reaped)
        return;
    s_exec_read (self);
    if (self->pid > 0)
        kill (-self->pid, SIGKILL);
    kill (self->shim, SIGTERM);
    if (self->pid > 0)
        kill (-self->pid, SIGCONT);
    self->stopping = self->killed = true;
    self->kill_at = UINT64_MAX;
}

//  Wakes the shim to look at the lease: a write to the eventfd it polls.
static void
s_kick (shoal_child_t *self)
{
    uint64_t one = 1;
    if (self->reaped || write (self->kick_fd, &one, sizeof one) < 0) {
        //  Reaped: nobody to wake. EAGAIN: kicks wait unread, it wakes.
    }
}

void
shoal_child_freeze (shoal_child_t *self, bool frozen)
{
    if (self->reaped || self->killed || self->frozen == frozen)
        return;
    self->frozen = frozen;
    s_exec_read (self);
    if (!frozen) {
        //  The shim thaws it, once its deadline allows too: a SIGCONT
        //  from here could come late, past a deadline the shim acted on.
        atomic_store (&self->lease->thaw, 1);
        atomic_store (&self->lease->held, 0);
        s_kick (self);
        return;
    }
    atomic_store (&self->lease->held, 1);
    //  A child told to stop may finish its work only while the lease
    //  holds: it cannot finish frozen, so it ends now.
    if (self->stopping)
        shoal_child_kill (self);
    else if (self->pid > 0)
        kill (-self->pid, SIGSTOP);
}

bool
shoal_child_frozen (const shoal_child_t *self)
{
    return self->frozen || s_clock_ms () >= atomic_load (&self->lease->until);
}

void
shoal_child_lease (shoal_child_t *self, uint64_t until_ms)
{
    uint64_t was = atomic_exchange (&self->lease->until, until_ms);
    //  A shim wakes at the deadline it holds by itself, which is enough
    //  for a lease that goes on. It is woken for the rest: a deadline set
    //  earlier (a child bound on promotion, a lease lost), and a new one
    //  after one that passed, which may thaw the child.
    if (until_ms != was && (until_ms < was || was <= s_clock_ms ()))
        s_kick (self);
}

uint64_t
shoal_child_until (const shoal_child_t *self)
{
    return atomic_load (&self->lease->until);
}

uint64_t
shoal_child_next (const shoal_child_t *self)
{
    return self->stopping && !self->killed && !self->reaped ? self->kill_at : UINT64_MAX;
}

void
shoal_child_tick (shoal_child_t *self, uint64_t now_ms)
{
    if (self->stopping && !self->killed && now_ms >= self->kill_at)
        shoal_child_kill (self);
}

int
shoal_child_reap (shoal_child_t *self, shoal_child_exit_t *exit)
{
    if (!self->reaped) {
        int status = 0;
        pid_t pid = waitpid (self->shim, &status, WNOHANG);
        if (pid == 0 || (pid < 0 && errno == EINTR))
            return 0;
        self->reaped = true;
        //  Every writer of the exec pipe is gone: it says all it will.
        s_exec_read (self);
        s_close (&self->exec_fd);
        shoal_child_exit_t *out = &self->exit;
        if (pid < 0)
            out->shim_signal = SIGKILL; //  reaped by someone else: as good as killed
        else if (WIFSIGNALED (status))
            out->shim_signal = WTERMSIG (status);
        else if (WIFEXITED (status)) {
            out->status = WEXITSTATUS (status);
            if (out->status > 128 && out->status < 128 + NSIG)
                out->signal = out->status - 128;
        }
        if (self->started < 0) {
            out->exec_failed = true;
            snprintf (out->reason, sizeof out->reason, "%s", self->reason);
        }
    }
    *exit = self->exit;
    return 1;
}

void
shoal_child_exit_text (const shoal_child_exit_t *exit, char *text, size_t size)
{
    if (exit->exec_failed)
        snprintf (text, size, "could not start: %s", exit->reason);
    else if (exit->shim_signal)
        snprintf (text, size, "its shim was killed by signal %d (%s)", exit->shim_signal,
                  strsignal (exit->shim_signal));
    else if (exit->signal)
        snprintf (text, size, "killed by signal %d (%s)", exit->signal, strsignal (exit->signal));
    else
        snprintf (text, size, "exited with status %d", exit->status);
}

const char *
shoal_child_role_name (int role)
{
    return role == SHOAL_ACTIVE    ? "active"
           : role == SHOAL_LEARNER ? "learner"
           : role == SHOAL_STANDBY ? "standby"
                                   : "none";
}

/*  shoal.h: the public C API of libshoal.

    shoal is a peer-to-peer worker runtime: workers find each other by UDP
    beacons or seed addresses, keep a shared view of who is alive by gossip,
    elect one leader, and the leader hands out tasks incrementally.

    This is the only header an embedder includes. Every function returns 0 on
    success and -1 on failure unless it says otherwise; the library never
    prints and never exits. Functions here are thread-safe unless noted.

    Threads: a node runs its own thread (the actor) that owns every socket,
    timer and file. Every shoal_node_* function may be called from any
    thread, at the same time as others, except shoal_node_destroy, which
    must be the last call on a node. Calls that wait (leave, submit,
    rescale, remove) wait on their own and do not hold up the others.

    Structs grow only at their end, and the caller says how big its
    compiled struct is: every struct passed alone (an event, a result, a job
    spec, a status) begins with size_t size, which the caller sets to
    sizeof the struct; calls that fill an array take the size of one item.
    The library reads and writes no more than that many bytes and zeroes
    what it does not know, so a program built against an older or newer
    shoal.h keeps working against this library. A size below the 0.2 layout
    is refused.

    docs/api.md describes the API as a whole, with an example.
*/
#ifndef SHOAL_H
#define SHOAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define SHOAL_EXPORT __attribute__ ((visibility ("default")))
#else
#define SHOAL_EXPORT
#endif

#define SHOAL_VERSION_MAJOR 0
#define SHOAL_VERSION_MINOR 3
#define SHOAL_VERSION_PATCH 0

//  The library's version as "MAJOR.MINOR.PATCH". It may differ from the
//  header's SHOAL_VERSION_* when the program runs against a newer library.
SHOAL_EXPORT const char *shoal_version (void);

//  ---------------------------------------------------------------------
//  Cluster keys
//
//  A cluster key is 32 random bytes. Every node of a cluster holds it; it
//  seals every beacon, datagram and frame. Its text form is standard base64
//  (44 characters), as `shoal keygen` prints it.

#define SHOAL_KEY_BYTES      32
#define SHOAL_KEY_TEXT_BYTES 45 //  44 characters and a NUL

//  Fills key with 32 bytes from the operating system's secure random source.
SHOAL_EXPORT int shoal_key_generate (uint8_t key[SHOAL_KEY_BYTES]);

//  Writes the text form of key into text (at least SHOAL_KEY_TEXT_BYTES).
SHOAL_EXPORT int shoal_key_format (const uint8_t key[SHOAL_KEY_BYTES],
                                   char text[SHOAL_KEY_TEXT_BYTES]);

//  Parses a key's text form. Leading and trailing whitespace (a key file's
//  newline) is ignored; anything else that is not exactly one base64 key is
//  refused with -1, and key is then left zeroed.
SHOAL_EXPORT int shoal_key_parse (const char *text, uint8_t key[SHOAL_KEY_BYTES]);

//  ---------------------------------------------------------------------
//  Cancelling a wait
//
//  The calls that wait for the cluster (leave, submit, rescale, remove,
//  status) take a cancel handle, or NULL. shoal_cancel, from any thread,
//  ends every wait on the handle at once, and every later one: a call
//  given a cancelled handle returns before it asks anything (a leave does
//  not begin; the node runs on). A request already sent may still be
//  applied (its result says so); a leave cancelled while it waits stops
//  the node as one that timed out does; a status cancelled gives this
//  node's own tasks. Destroy a handle only once no call uses it.

typedef struct _shoal_cancel_t shoal_cancel_t;

SHOAL_EXPORT shoal_cancel_t *shoal_cancel_new (void); //  NULL when memory is short
SHOAL_EXPORT void shoal_cancel (shoal_cancel_t *self);
SHOAL_EXPORT bool shoal_cancelled (shoal_cancel_t *self);
SHOAL_EXPORT void shoal_cancel_destroy (shoal_cancel_t **self_p);

//  ---------------------------------------------------------------------
//  Nodes
//
//  A node is one member of a cluster. Make it, set its options, start it;
//  then read what it must do with its tasks from its event queue, report
//  how they go, and leave (or destroy it) at the end:
//
//      shoal_node_t *node = shoal_node_new ();
//      shoal_node_set (node, "data-dir", "/var/lib/app/shoal", why, sizeof why);
//      shoal_node_set (node, "join", "10.0.0.5:7946", why, sizeof why);
//      if (shoal_node_start (node, why, sizeof why) != 0) ... why says why
//      poll on shoal_node_fd (node); then
//      shoal_event_t event = { .size = sizeof event };
//      while (shoal_node_event (node, &event) == 1) ... start, stop tasks
//      shoal_node_leave (node, 30000, NULL, why, sizeof why);
//      shoal_node_destroy (&node);
//
//  Functions that can fail take char *why and its size and write a one-line
//  reason there (truncated to fit; why may be NULL).

typedef struct _shoal_node_t shoal_node_t;

//  Text forms: a node id is 32 lowercase hex digits; a task is "job/index".
#define SHOAL_NODE_ID_TEXT 33 //  32 hex digits and a NUL
#define SHOAL_NAME_TEXT    65 //  a node or job name, 64 bytes at most, and a NUL
#define SHOAL_TASK_TEXT    81 //  "job/index", 80 bytes at most, and a NUL
#define SHOAL_ADDR_TEXT    65 //  "host:port", 64 bytes at most, and a NUL
#define SHOAL_REASON_TEXT  257

//  A new node with every option at its default, not started. NULL when
//  memory is short.
SHOAL_EXPORT shoal_node_t *shoal_node_new (void);

//  Stops the node at once, without leaving (the others find it gone, as
//  after a crash; leave first for a graceful exit), and frees it. Nulls the
//  pointer; idempotent. Events not read are dropped.
SHOAL_EXPORT void shoal_node_destroy (shoal_node_t **self_p);

//  Sets the option key to value, as the flag --key value and the config
//  file's "key = value" do; docs/options.md lists every key. Only before
//  start: -1 after.
SHOAL_EXPORT int shoal_node_set (shoal_node_t *self, const char *key, const char *value, char *why,
                                 size_t why_size);

//  Writes the option key's value as text into value (size bytes;
//  SHOAL_OPTION_TEXT always fits), as the config file would set it: the
//  default when it was not set. Any time, before or after start.
#define SHOAL_OPTION_TEXT 4097
SHOAL_EXPORT int shoal_node_get (shoal_node_t *self, const char *key, char *value, size_t size,
                                 char *why, size_t why_size);

//  Applies a config file, all or nothing (reasons name file and line).
SHOAL_EXPORT int shoal_node_load_file (shoal_node_t *self, const char *path, char *why,
                                       size_t why_size);

//  Applies the SHOAL_* variables of envp (as environ, NULL last), all or
//  nothing. A variable that looks like a misspelled option is refused.
SHOAL_EXPORT int shoal_node_load_env (shoal_node_t *self, char *const *envp, char *why,
                                      size_t why_size);

//  The options a node takes, for bindings and help text: how many, and the
//  index-th of them in the order docs/options.md lists them (-1 past the
//  last). The strings are the library's, valid for as long as it is loaded.
typedef struct {
    size_t size;              //  the caller's sizeof (shoal_option_spec_t)
    const char *key;          //  "data-dir"; its variable is SHOAL_DATA_DIR
    const char *type;         //  "uint32", "duration", "bool", "host:port list", ...
    const char *default_text; //  the default, as shoal_node_get writes it
    const char *range;        //  "1..1000000", "quorum|available"; "" when the type says all
    const char *doc;          //  one line
} shoal_option_spec_t;

SHOAL_EXPORT size_t shoal_option_count (void);
SHOAL_EXPORT int shoal_option_at (size_t index, shoal_option_spec_t *spec);

//  Opens the data directory (creating the node's id on first start, and
//  raising its life and incarnation on every start), binds the ports,
//  starts beacons and joins the seeds, and runs the node's thread. Returns
//  -1 with the reason when any of it fails; the node is then not started,
//  and may be started again once the cause is fixed.
SHOAL_EXPORT int shoal_node_start (shoal_node_t *self, char *why, size_t why_size);

//  Leaves the cluster gracefully and stops: the node's active tasks move to
//  other nodes first (STOP events come for each; report them stopped), and
//  the others learn it left rather than failed. Waits until it has left, or
//  timeout_ms (0: the leave-timeout option); -1 when it had not left by
//  then, or when cancel was cancelled (it stops anyway). Destroy the node
//  afterwards.
SHOAL_EXPORT int shoal_node_leave (shoal_node_t *self, uint64_t timeout_ms, shoal_cancel_t *cancel,
                                   char *why, size_t why_size);

//  This node's id (valid after start) and the port its UDP and TCP sockets
//  are bound to (useful with port 0).
SHOAL_EXPORT int shoal_node_id (shoal_node_t *self, char id[SHOAL_NODE_ID_TEXT]);
SHOAL_EXPORT int shoal_node_port (shoal_node_t *self, uint16_t *port);

//  Opens again the files the node appends to (the `events` log) by their
//  names, for logrotate: after the file was renamed, lines go to a new
//  file of that name. A file that cannot be opened keeps the old one, and
//  -1 says why. Does nothing (0) without an event log.
SHOAL_EXPORT int shoal_node_reopen (shoal_node_t *self, char *why, size_t why_size);

//  ---------------------------------------------------------------------
//  Task events
//
//  The node tells the application what to do with its tasks through a
//  queue of events. shoal_node_fd is readable while the queue holds events:
//  poll it (or call shoal_node_event from a loop of one's own).
//
//  The roles: an ACTIVE runs the task for real. A LEARNER warms up the
//  state of a stateful task it is to take over, while the old owner stays
//  active; it reports its lag, and once caught up the old owner stops and
//  the learner is promoted. A STANDBY keeps a warm copy.
//
//  The lease: a node may act as active only while it holds a lease from the
//  leader. When it loses the leader (cut off from the cluster), its lease
//  runs out, and another node may soon start its tasks: a LEASE event with
//  leased false says to stop acting (stop writing) until a LEASE event
//  with leased true. An active told to stop (DEMOTE, STOP) while leased may
//  finish what it was doing until it reports the stop.

typedef enum {
    SHOAL_EVENT_START = 1,   //  run task in role under epoch; report RUNNING once started
    SHOAL_EVENT_PROMOTE = 2, //  the learner or standby task becomes active under epoch
    SHOAL_EVENT_DEMOTE = 3,  //  the active task stops acting, keeps its state as role;
                             //  report STOPPED once it no longer acts
    SHOAL_EVENT_STOP = 4,    //  stop task and drop it; report STOPPED once stopped
    SHOAL_EVENT_LEASE = 5,   //  the lease was lost (leased false) or is held again
    SHOAL_EVENT_LEADER = 6,  //  the leader changed: leader, term ("" when there is none)
    SHOAL_EVENT_MEMBER = 7,  //  a member joined, failed, left or changed: node, state
    SHOAL_EVENT_LEFT = 8,    //  this node left the cluster (after shoal_node_leave, or a
                             //  client's shoal leave): it takes no more part in it, nor
                             //  in any election, in this life; destroy it and end
    SHOAL_EVENT_NOTICE = 9,  //  something the operator should know: reason says what
} shoal_event_type_t;

typedef enum {
    SHOAL_ACTIVE = 1,
    SHOAL_STANDBY = 2,
    SHOAL_LEARNER = 3,
} shoal_role_code_t;

//  What an application reports of a task (shoal_node_report).
typedef enum {
    SHOAL_RUNNING = 1, //  started (an active runs; a learner or standby warms up)
    SHOAL_STOPPED = 3, //  stopped, after a DEMOTE or STOP event
    SHOAL_FAILED = 4,  //  could not start, or crashed: the node starts it again
                       //  later (3 times), and gives it up at the 4th failure in
                       //  a row; a run of 60 s (LAN) in between ends the count
} shoal_report_state_t;

typedef enum {
    SHOAL_MEMBER_STATE_ALIVE = 0,
    SHOAL_MEMBER_STATE_SUSPECT = 1,
    SHOAL_MEMBER_STATE_DEAD = 2,
    SHOAL_MEMBER_STATE_LEFT = 3,
} shoal_member_state_code_t;

typedef struct {
    size_t size;                    //  the caller's sizeof (shoal_event_t)
    int type;                       //  shoal_event_type_t
    char task[SHOAL_TASK_TEXT];     //  START, PROMOTE, DEMOTE, STOP: "job/index"
    char job[SHOAL_NAME_TEXT];      //  and its job
    uint32_t index;                 //  and its index in the job
    uint32_t parallelism;           //  the job's parallelism as the node knows it
    int role;                       //  shoal_role_code_t; 0 after STOP
    uint64_t epoch_term;            //  the grant of the active role: (term, version),
    uint64_t epoch_version;         //  to fence what the active writes
    bool leased;                    //  LEASE
    char node[SHOAL_NODE_ID_TEXT];  //  LEADER: the leader ("" for none); MEMBER: the member
    char name[SHOAL_NAME_TEXT];     //  MEMBER: its name
    uint64_t term;                  //  LEADER
    int state;                      //  MEMBER: shoal_member_state_code_t
    char reason[SHOAL_REASON_TEXT]; //  NOTICE
} shoal_event_t;

//  A descriptor that is readable while events wait. Do not read it or
//  close it. -1 before start.
SHOAL_EXPORT int shoal_node_fd (shoal_node_t *self);

//  Takes the next event into *event, whose size the caller set. Returns 1
//  with *event filled, 0 when the queue is empty, -1 before start or when
//  event->size is too small.
SHOAL_EXPORT int shoal_node_event (shoal_node_t *self, shoal_event_t *event);

//  When the lease the application was told it holds ends, into *until_ms:
//  on the monotonic clock (CLOCK_MONOTONIC, in milliseconds, as the event
//  log's mono); 0 while it is lost, and while a LEASE event waits to be
//  taken. The node extends its lease with no event (every keep-alive): an
//  application that must hold its actives to the lease without the node
//  (shoal worker hands it to each child's shim, which freezes the child
//  when it passes, even while the worker itself cannot run) reads it often.
//  It only grows while the lease holds. Returns -1 before start.
SHOAL_EXPORT int shoal_node_lease (shoal_node_t *self, uint64_t *until_ms);

//  Reports task's state (shoal_report_state_t) and, for a learner or a
//  standby, its lag: how far its state is behind, in the application's
//  units (the acceptable-lag option says when it is caught up). Report lag
//  again as it shrinks. Returns -1 for a task the node does not hold, or a
//  state that makes no sense now.
SHOAL_EXPORT int shoal_node_report (shoal_node_t *self, const char *task, int state, uint64_t lag,
                                    char *why, size_t why_size);

//  Tells how task's process last exited, for `shoal status` (the leader's
//  table shows it, and a task with restarts above 0 as crashloop):
//  restarts, its exits in a row (report 0 once it has run long enough
//  again); last_exit, how the last one ended: its exit status 0-255, or
//  256 + the signal that killed it; error, why in words ("exit 127"; NULL
//  or "" for none; cut to 256 bytes). Only reported: the restarts and
//  failures themselves go by shoal_node_report. Returns -1 for a task the
//  node does not hold, or a last_exit above 320.
SHOAL_EXPORT int shoal_node_report_exit (shoal_node_t *self, const char *task, uint32_t restarts,
                                         uint32_t last_exit, const char *error, char *why,
                                         size_t why_size);

//  ---------------------------------------------------------------------
//  Jobs
//
//  A job is a named set of parallelism tasks, "name/0" .. "name/N-1". Any
//  node takes these requests and forwards them to the leader; they are
//  answered once a majority of the cluster holds the change. While there
//  is no leader (a cluster just started, an election), the node holds a
//  request until one takes it, up to 10 s (the profile's forward time).
//  NO_LEADER means nothing was changed: ask again; FAILED with "may still
//  be applied" means the answer was lost with a leader. Each returns
//  0 when the cluster answered (result->code says how), or -1 when the
//  request was refused here, no answer came within timeout_ms, or cancel
//  was cancelled (result then says why; CANCELLED for the last).

typedef struct {
    size_t size;                //  the caller's sizeof (shoal_job_spec_t)
    const char *name;           //  1 to 64 bytes: letters, digits, '.', '_', '-'
    uint32_t parallelism;       //  1 to 65535 tasks
    bool stateful;              //  moves warm up a learner first
    uint32_t weight;            //  relative load of each task (0: 1)
    size_t require_count;       //  labels a node must have to run its tasks
    const char *const *require; //  "key=value" each
    const char *command;        //  for `shoal worker`: the command each task runs; NULL: none
    //  0.3: every write of its tasks carries the task's epoch, and its sink
    //  refuses a write of an older epoch than it has seen (fencing): a task
    //  then moves as soon as its owner is declared dead, not a lease later
    //  (docs/jobs.md, "Fenced jobs").
    bool fenced;
} shoal_job_spec_t;

typedef enum {
    SHOAL_RESULT_OK = 0,
    SHOAL_RESULT_INVALID = 1,   //  the request breaks a rule; reason says which
    SHOAL_RESULT_NOT_FOUND = 2, //  no such job
    SHOAL_RESULT_NO_LEADER = 3, //  no leader took it in time; nothing changed
    SHOAL_RESULT_TIMED_OUT = 4, //  a rescale waited for slots and gave up
    SHOAL_RESULT_PARTIAL = 5,   //  a rescale applied less than asked (at least min)
    SHOAL_RESULT_FAILED = 6,    //  the node could not do it; reason says why
    SHOAL_RESULT_CANCELLED = 7, //  the caller cancelled the wait; it may still be applied
} shoal_result_code_t;

//  The result may be NULL; when not, the caller sets its size.
typedef struct {
    size_t size;                    //  the caller's sizeof (shoal_result_t)
    int code;                       //  shoal_result_code_t
    char reason[SHOAL_REASON_TEXT]; //  why, when code is not OK
    uint32_t parallelism;           //  submit, rescale: the job's parallelism now
} shoal_result_t;

SHOAL_EXPORT int shoal_node_submit (shoal_node_t *self, const shoal_job_spec_t *spec,
                                    uint64_t timeout_ms, shoal_cancel_t *cancel,
                                    shoal_result_t *result);

//  Sets the job's parallelism. Lowering it applies at once; raising it
//  waits up to wait_ms for room on the cluster's nodes, then applies the
//  largest parallelism of at least min that fits (PARTIAL), or leaves the
//  job as it was (TIMED_OUT). min 0: parallelism itself.
SHOAL_EXPORT int shoal_node_rescale (shoal_node_t *self, const char *job, uint32_t parallelism,
                                     uint32_t min, uint32_t wait_ms, uint64_t timeout_ms,
                                     shoal_cancel_t *cancel, shoal_result_t *result);

SHOAL_EXPORT int shoal_node_remove (shoal_node_t *self, const char *job, uint64_t timeout_ms,
                                    shoal_cancel_t *cancel, shoal_result_t *result);

//  What this node knows of job's committed spec (every node holds every
//  job's spec): its parallelism and whether it is stateful, and its command
//  into command (command_size bytes; SHOAL_COMMAND_TEXT always fits; ""
//  when it has none). Any of the outputs may be NULL. -1 when the node
//  knows no such job, command_size is too small, or it is not running.
#define SHOAL_COMMAND_TEXT 4097
SHOAL_EXPORT int shoal_node_job (shoal_node_t *self, const char *job, uint32_t *parallelism,
                                 bool *stateful, char *command, size_t command_size, char *why,
                                 size_t why_size);

//  Every job this node knows (every node holds every job's committed
//  spec), sorted by name: up to max of them into jobs, each item_size
//  bytes (the caller's sizeof (shoal_job_info_t)); *count is how many there are
//  (call again with more room when it is above max). *version, when not
//  NULL, is the jobs' version (its term and number).
#define SHOAL_REQUIRE_TEXT 2081 //  16 "key=value" labels joined by commas, and a NUL
typedef struct {
    char name[SHOAL_NAME_TEXT];
    uint32_t parallelism;
    bool stateful;
    uint32_t weight;
    size_t require_count;
    char require[SHOAL_REQUIRE_TEXT]; //  "key=value,key=value"; "" for none
    char command[SHOAL_COMMAND_TEXT]; //  "" for none
    bool fenced;                      //  0.3
} shoal_job_info_t;

SHOAL_EXPORT int shoal_node_jobs (shoal_node_t *self, shoal_job_info_t *jobs, size_t item_size,
                                  size_t max, size_t *count, uint64_t version[2]);

//  0.3: one job's whole spec, as shoal_node_jobs gives it, into info
//  (item_size: the caller's sizeof (shoal_job_info_t)). -1 with why when
//  the node knows no such job or is not running.
SHOAL_EXPORT int shoal_node_job_info (shoal_node_t *self, const char *job, shoal_job_info_t *info,
                                      size_t item_size, char *why, size_t why_size);

//  ---------------------------------------------------------------------
//  What the node knows

typedef struct {
    char id[SHOAL_NODE_ID_TEXT];
    char name[SHOAL_NAME_TEXT];
    char addr[SHOAL_ADDR_TEXT];
    int state; //  shoal_member_state_code_t
    uint64_t incarnation;
    bool voter; //  0.3: in the voter set this node holds (docs/election.md, section 3)
} shoal_member_t;

//  The members this node knows, itself included, up to max of them into
//  members, each item_size bytes (the caller's sizeof (shoal_member_t));
//  *count is how many there are (call again with more room when it is
//  above max).
SHOAL_EXPORT int shoal_node_members (shoal_node_t *self, shoal_member_t *members, size_t item_size,
                                     size_t max, size_t *count);

//  The leader this node follows and its term; id "" when there is none.
//  A follower names a leader only while that leader's lease (its
//  assignments' keep-alives) holds here: a candidate that never gathered a
//  majority is no leader. *acting is true when this node is the leader and
//  acts as one.
SHOAL_EXPORT int shoal_node_leader (shoal_node_t *self, char id[SHOAL_NODE_ID_TEXT], uint64_t *term,
                                    bool *acting);

typedef struct {
    char task[SHOAL_TASK_TEXT];
    int role;  //  shoal_role_code_t
    int state; //  0 starting, 1 running, 2 stopping, 3 stopped, 4 failed
    uint64_t lag;
    uint64_t epoch_term;
    uint64_t epoch_version;
} shoal_task_t;

//  The tasks this node holds, as it reports them to the leader (sorted by
//  task), up to max into tasks; item_size and *count as for members.
//  *version is the assignment version applied (its term and version), when
//  not NULL.
SHOAL_EXPORT int shoal_node_tasks (shoal_node_t *self, shoal_task_t *tasks, size_t item_size,
                                   size_t max, size_t *count, uint64_t version[2]);

//  The leader's table, as `shoal status` shows it: every task as the
//  leader places it, on which node, in which role and state as that node
//  last reported, and the tasks it places nowhere (node "", reason says
//  why). A node that does not lead asks the leader, and waits for its
//  answer up to timeout_ms (at most 10 s; 0: do not ask); with no leader,
//  no answer in time, or a cancel, it gives its own tasks, and
//  status->whole is false with status->reason saying why. Up to max rows
//  into rows, each item_size bytes (the caller's sizeof
//  (shoal_status_row_t)); *count is how many there were: the table is
//  asked afresh on each call. status may be NULL; when not, the caller
//  sets its size.
typedef struct {
    char node[SHOAL_NODE_ID_TEXT]; //  "" for a task placed nowhere
    char task[SHOAL_TASK_TEXT];
    int role;  //  shoal_role_code_t
    int state; //  as in shoal_task_t
    uint64_t lag;
    uint64_t epoch_term;
    uint64_t epoch_version;
    uint32_t restarts;              //  exits in a row (crashloop while above 0)
    uint32_t last_exit;             //  status 0-255, or 256 + signal
    char error[SHOAL_REASON_TEXT];  //  why it last failed; "" for none
    char reason[SHOAL_REASON_TEXT]; //  placed nowhere: why
} shoal_status_row_t;

typedef struct {
    size_t size;                     //  the caller's sizeof (shoal_status_info_t)
    bool whole;                      //  the acting leader's whole table
    char leader[SHOAL_NODE_ID_TEXT]; //  "" when there is none
    uint64_t term;                   //  the leader's, or the highest seen with none
    uint64_t version;                //  the assignment version of the table
    char reason[SHOAL_REASON_TEXT];  //  why it is not whole, or rows left out
} shoal_status_info_t;

SHOAL_EXPORT int shoal_node_status (shoal_node_t *self, shoal_status_row_t *rows, size_t item_size,
                                    size_t max, size_t *count, shoal_status_info_t *status,
                                    uint64_t timeout_ms, shoal_cancel_t *cancel);

#ifdef __cplusplus
}
#endif

#endif

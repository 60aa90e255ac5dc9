/*  node/options.h: every option a node takes, one table for every way of
    giving them.

    The C API (shoal_node_set), the flags of `shoal worker` (--key value),
    the environment (SHOAL_KEY) and a config file all name the same options
    by the same keys and go through the same checks, here. The table
    (shoal_options_info) describes each option for help text; docs/options.md
    is the user's view of it.

    Precedence is: defaults < config file < environment < flags and API
    calls. This module applies values in the order it is called; callers
    call it in that order.

    Lists (join, labels, handles) take many values: every shoal_options_set
    adds its items, and a value with commas adds each. But each source gives
    a list whole: the first value a source gives for a list replaces what
    earlier sources gave, so that a label set by the environment replaces
    the config file's instead of colliding with it. A config file and the
    environment are each one source (shoal_options_load_text and
    shoal_options_load_env); the calls to shoal_options_set after them are
    the next. An empty value gives an empty list, so `--join ''` clears it.

    Every value is text: UTF-8, without control characters, at most
    SHOAL_OPTIONS_VALUE_MAX bytes; a list written out with commas too.
    Numbers are decimal. Bools are true/false, yes/no, on/off or 1/0. A
    duration is a whole number and a unit, ms, s, m or h ("250ms", "30s"),
    at most 24h; a bare number is refused, since its unit would be a guess.
    Words (bools, choices, units) are lower case.

    A host:port names a host by a DNS name, an IPv4 address, or an IPv6
    address in brackets ("[::1]:7946"), with a port of 1 to 65535. Names are
    not resolved here; only their syntax is checked.

    Every function that can fail returns -1 with a one-line reason in why
    (truncated to why_size; why may be NULL) that names the option, and
    changes nothing. Nothing here prints or exits. An options object is not
    shared between threads without a lock of the caller's.
*/
#ifndef SHOAL_OPTIONS_H
#define SHOAL_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

//  Limits. A value of any option, list or not, is at most VALUE_MAX bytes
//  written out, so shoal_options_get always fits in VALUE_MAX + 1.
#define SHOAL_OPTIONS_VALUE_MAX    4096
#define SHOAL_OPTIONS_LIST_MAX     256                   //  items of join
#define SHOAL_OPTIONS_LABELS_MAX   16                    //  as a node's labels on the wire
#define SHOAL_OPTIONS_HANDLES_MAX  16                    //  as a node's handles on the wire
#define SHOAL_OPTIONS_NAME_MAX     63                    //  a node name, a label key or value
#define SHOAL_OPTIONS_JOB_MAX      64                    //  a job name, as rebalance/jobs.h takes
#define SHOAL_OPTIONS_HOST_MAX     253                   //  a DNS name
#define SHOAL_OPTIONS_IFNAME_MAX   15                    //  a network interface: IFNAMSIZ - 1
#define SHOAL_OPTIONS_FILE_MAX     (1 << 20)             //  a config file
#define SHOAL_OPTIONS_LINE_MAX     8192                  //  a line of it, without its end
#define SHOAL_OPTIONS_DURATION_MAX (24 * 3600 * 1000ull) //  in ms
#define SHOAL_OPTIONS_ENV_PREFIX   "SHOAL_"

//  Variables that start with SHOAL_ but are never options: the ones the
//  worker gives its tasks' children, and prefixes the tests use. A node run
//  as a task of another inherits them, so shoal_options_load_env passes
//  over them whatever they hold.
#define SHOAL_OPTIONS_ENV_RESERVED                                                                 \
    "SHOAL_JOB", "SHOAL_TASK", "SHOAL_INDEX", "SHOAL_PARALLELISM", "SHOAL_ROLE", "SHOAL_EPOCH",    \
        "SHOAL_NODE", "SHOAL_STATUS_FD", "SHOAL_FENCED"
#define SHOAL_OPTIONS_ENV_RESERVED_PREFIXES "SHOAL_TEST_", "SHOAL_FAULTS_", "SHOAL_ASSIGN_"

//  A host and port; host is "" where the option is off or left to derive.
//  An IPv6 host is kept without its brackets.
typedef struct {
    char host[SHOAL_OPTIONS_HOST_MAX + 1];
    uint16_t port;
} shoal_option_hostport_t;

typedef struct {
    char key[SHOAL_OPTIONS_NAME_MAX + 1];
    char value[SHOAL_OPTIONS_NAME_MAX + 1];
} shoal_option_label_t;

typedef struct {
    char name[SHOAL_OPTIONS_JOB_MAX + 1];
} shoal_option_job_t;

//  A list the options object owns: count items, of the type its field
//  names.
typedef struct {
    size_t count;
    void *items;
} shoal_option_list_t;

//  The choices, numbered in the order their option's range lists them.
typedef enum {
    SHOAL_PARTITION_QUORUM = 0,
    SHOAL_PARTITION_AVAILABLE = 1,
} shoal_partition_mode_t;

typedef enum {
    SHOAL_PROFILE_LAN = 0,
    SHOAL_PROFILE_LOOPBACK = 1,
    SHOAL_PROFILE_WAN = 2,
} shoal_profile_t;

typedef enum {
    SHOAL_LOG_ERROR = 0,
    SHOAL_LOG_WARN = 1,
    SHOAL_LOG_INFO = 2,
    SHOAL_LOG_DEBUG = 3,
} shoal_log_level_t;

typedef enum {
    SHOAL_LOG_TEXT = 0,
    SHOAL_LOG_JSON = 1,
} shoal_log_format_t;

//  The values, typed, for the node and the worker to read. Change them only
//  through the functions below, which check them; the table in options.c
//  documents each one.
typedef struct {
    char name[SHOAL_OPTIONS_NAME_MAX + 1]; //  "": the host's name
    char cluster[SHOAL_OPTIONS_NAME_MAX + 1];
    char data_dir[SHOAL_OPTIONS_VALUE_MAX + 1];
    shoal_option_hostport_t bind;
    //  Of beacons. "": czmq's choice (ZSYS_INTERFACE, else the first that
    //  broadcasts); "*": all.
    char beacon_interface[SHOAL_OPTIONS_IFNAME_MAX + 1];
    shoal_option_hostport_t advertise;          //  host "": derived from bind
    uint16_t beacon_port;                       //  0: no beacons
    shoal_option_list_t join;                   //  of shoal_option_hostport_t
    char key_file[SHOAL_OPTIONS_VALUE_MAX + 1]; //  "": none
    bool require_key;
    uint32_t capacity;
    uint32_t slots;              //  0: no limit
    shoal_option_list_t labels;  //  of shoal_option_label_t, keys distinct
    shoal_option_list_t handles; //  of shoal_option_job_t, distinct; none: every job
    uint32_t priority;
    shoal_partition_mode_t partition_mode;
    uint32_t expect;
    uint32_t voters; //  most in the voter set
    shoal_profile_t profile;
    uint32_t standbys;
    uint32_t max_warmups;
    uint32_t max_starting;
    uint64_t acceptable_lag;
    uint64_t leave_timeout_ms;
    char control[SHOAL_OPTIONS_VALUE_MAX + 1]; //  "": ipc://<data-dir>/control
    shoal_option_hostport_t metrics;           //  host "": off
    char events[SHOAL_OPTIONS_VALUE_MAX + 1];  //  "": off
    shoal_log_level_t log_level;
    shoal_log_format_t log_format;
    uint64_t grace_ms;
    uint64_t task_log_size; //  bytes; 0: no task output files
    uint32_t task_log_keep;
    uint32_t child_nice;
    uint64_t given; //  private: the lists the current source gave, one bit per option
} shoal_options_t;

//  What help text shows of an option.
typedef struct {
    const char *key;          //  "data-dir"; its variable is SHOAL_DATA_DIR
    const char *type;         //  "uint32", "duration", "host:port list", ...
    const char *default_text; //  the default, as shoal_options_get writes it
    const char *range;        //  "1..1000000", "quorum|available"; "" when the type says all
    const char *doc;          //  one line
} shoal_option_info_t;

//  The options, in the order help lists them: how many, and the index-th.
size_t shoal_options_count (void);
const shoal_option_info_t *shoal_options_info (size_t index);

//  A new options object holding the defaults, or NULL when out of memory.
shoal_options_t *shoal_options_new (void);

//  Frees the object and its lists; nulls the pointer. Idempotent.
void shoal_options_destroy (shoal_options_t **self_p);

//  Sets the option key to value, checked. A list option takes its items
//  from value, comma-separated, and adds them, or replaces the list with
//  them when this is the first value of a new source (see above).
int shoal_options_set (shoal_options_t *self, const char *key, const char *value, char *why,
                       size_t why_size);

//  Writes the option's value as text (a list's items joined by commas) into
//  text: what shoal_options_set takes back. Returns -1, with text "", when
//  there is no option key or size is too small; SHOAL_OPTIONS_VALUE_MAX + 1
//  is always enough.
int shoal_options_get (const shoal_options_t *self, const char *key, char *text, size_t size);

//  Parses text as a duration option does ("250ms", "30s", at most 24h)
//  into *ms, for the flags of the shoal command that are not options;
//  reasons start with name.
int shoal_options_duration (const char *name, const char *text, uint64_t *ms, char *why,
                            size_t why_size);

//  Applies a config file of size bytes at text (not NUL-terminated; name
//  is how reasons call it) as one source: all of it, or on any error
//  nothing. The format, in short (docs/options.md has it whole):
//
//      # a comment, on a line of its own
//      capacity = 4
//      join = seed-1:7946
//      join = seed-2:7946, seed-3:7946
//      events = "  spaces kept, and a \" "
//
//  Whitespace around the key and the value is dropped; a value in double
//  quotes keeps all of it, with \" and \\ the only escapes. A '#' after
//  the key is part of the value, quoted or not. Lines end with LF or CRLF.
//  At most SHOAL_OPTIONS_FILE_MAX bytes, lines at most
//  SHOAL_OPTIONS_LINE_MAX; no NUL byte; UTF-8 throughout (a leading byte
//  order mark is passed over). Reasons start "name:line: ".
int shoal_options_load_text (shoal_options_t *self, const char *name, const char *text, size_t size,
                             char *why, size_t why_size);

//  Reads the file at path and applies it as shoal_options_load_text does,
//  naming it by path.
int shoal_options_load_file (shoal_options_t *self, const char *path, char *why, size_t why_size);

//  Applies the environment envp (as environ: "NAME=value" strings, NULL
//  last) as one source, all or nothing. SHOAL_<KEY>, the key in upper case
//  with '-' as '_', sets the option key (a list takes its items
//  comma-separated). Other variables starting with SHOAL_ are passed over,
//  the reserved ones above whatever they hold, and the rest unless they
//  look like a misspelled option's: within two edits of its variable (one
//  for keys of four letters), or in other case; those are refused, with
//  the likely name, so that a typo never leaves a default in place.
int shoal_options_load_env (shoal_options_t *self, char *const *envp, char *why, size_t why_size);

#endif

/*  node/options.c: every option a node takes (options.h has the contract,
    docs/options.md the user's view).

    One table describes each option: its key and help text, what kind of
    value it takes, and where in shoal_options_t the value lives. Setting,
    getting, the defaults, the config file and the environment all work from
    it, so that an option added to the table is at once a flag, a variable
    and a config key, with its help.
*/

#include "node/options.h"
#include "node/node.h"
#include "shoal.h"
#include "node/why.h"

#include "wire/wire.h"

#include <arpa/inet.h>
#include <assert.h>
#include <net/if.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

//  What the wire carries bounds what a node may be given.
_Static_assert(SHOAL_OPTIONS_NAME_MAX <= SHOAL_NAME_MAX, "a node name fits the wire");
_Static_assert(SHOAL_OPTIONS_NAME_MAX <= SHOAL_LABEL_MAX, "a label fits the wire");
_Static_assert(SHOAL_OPTIONS_JOB_MAX == SHOAL_NAME_MAX, "a node can handle any job there can be");
_Static_assert(SHOAL_OPTIONS_LABELS_MAX == SHOAL_LABELS_MAX, "a node's labels fit the wire");
_Static_assert(SHOAL_OPTIONS_HANDLES_MAX == SHOAL_HANDLES_MAX, "a node's handles fit the wire");
_Static_assert(SHOAL_OPTIONS_IFNAME_MAX == IFNAMSIZ - 1, "an interface name is as the kernel's");

//  A host:port written out: a host, two brackets, a colon and five digits.
#define HOSTPORT_TEXT_MAX (SHOAL_OPTIONS_HOST_MAX + 8)

//  ---------------------------------------------------------------------
//  The table

typedef enum {
    K_NAME,      //  char[]: 1 to max of [A-Za-z0-9._-], or "" when min is 0
    K_PATH,      //  char[]: any text, of at least min bytes
    K_ENDPOINT,  //  char[]: "", ipc://PATH or tcp://HOST:PORT
    K_INTERFACE, //  char[]: "", "*" or a network interface's name
    K_HOSTPORT,  //  shoal_option_hostport_t: "" only when min is 0; at most max bytes written
    K_NUMBER,    //  an unsigned integer of size bytes, min to max
    K_DURATION,  //  uint64_t milliseconds, min to max
    K_BOOL,      //  bool
    K_CHOICE,    //  an enum: the index of the word among the range's '|'-separated words
    K_ADDRESSES, //  a list of shoal_option_hostport_t; at most max items
    K_LABELS,    //  a list of shoal_option_label_t, keys distinct; at most max items
    K_JOBS,      //  a list of shoal_option_job_t, names distinct; at most max items
} s_kind_t;

typedef struct {
    shoal_option_info_t info;
    s_kind_t kind;
    size_t offset; //  of the field in shoal_options_t
    size_t size;   //  of the field, or of one item of a list
    uint64_t min, max;
} s_option_t;

//  Where an option's value lives, and what it takes.
#define FIELD(member)                                                                              \
    .offset = offsetof (shoal_options_t, member), .size = sizeof (((shoal_options_t *) 0)->member)
#define NAME(member)                  .kind = K_NAME, FIELD (member), .max = SHOAL_OPTIONS_NAME_MAX
#define PATH(member, least)           .kind = K_PATH, FIELD (member), .min = least
#define ENDPOINT(member)              .kind = K_ENDPOINT, FIELD (member)
#define INTERFACE(member)             .kind = K_INTERFACE, FIELD (member)
#define HOSTPORT(member, least, most) .kind = K_HOSTPORT, FIELD (member), .min = least, .max = most
#define NUMBER(member, low, high)     .kind = K_NUMBER, FIELD (member), .min = low, .max = high
#define DURATION(member)              .kind = K_DURATION, FIELD (member), .max = SHOAL_OPTIONS_DURATION_MAX
#define BOOL(member)                  .kind = K_BOOL, FIELD (member)
#define CHOICE(member)                .kind = K_CHOICE, FIELD (member)
#define LIST(list_kind, member, item, most)                                                        \
    .kind = list_kind, .offset = offsetof (shoal_options_t, member), .size = sizeof (item),        \
    .max = most

#define NAME_RANGE "1-63 of A-Z a-z 0-9 . _ -"

static const s_option_t s_options[] = {
    { { "name", "name", "", NAME_RANGE,
        "the node's human name, unique in the cluster; empty: the host's name" },
      NAME (name) },
    { { "cluster", "name", "shoal", NAME_RANGE,
        "the cluster's name: nodes of other clusters ignore each other's beacons" },
      NAME (cluster),
      .min = 1 },
    { { "data-dir", "path", "shoal-data", "",
        "where the node keeps its id, term, job specs and assignment version" },
      PATH (data_dir, 1) },
    { { "bind", "host:port", "0.0.0.0:7946", "",
        "the port of gossip (UDP) and bulk frames (TCP), and where they listen; port 0: any free "
        "port" },
      HOSTPORT (bind, 1, HOSTPORT_TEXT_MAX) },
    { { "advertise", "host:port", "", "at most 64 bytes",
        "the address other nodes reach this one at; empty: derived from bind" },
      HOSTPORT (advertise, 0, SHOAL_ADDR_MAX) },
    { { "beacon-port", "port", "7947", "0..65535",
        "UDP port of discovery beacons; 0 turns beacons off" },
      NUMBER (beacon_port, 0, 65535) },
    { { "beacon-interface", "interface", "", "* or a name of at most 15 bytes",
        "the network interface beacons use; *: all; empty: ZSYS_INTERFACE, else the first that "
        "broadcasts" },
      INTERFACE (beacon_interface) },
    { { "join", "host:port list", "", "at most 256",
        "seed addresses to join through, or _service._proto.domain for a DNS SRV record; names "
        "looked up when joining, off the node's thread; while none answers, the node warns and "
        "does not lead a cluster of one" },
      LIST (K_ADDRESSES, join, shoal_option_hostport_t, SHOAL_OPTIONS_LIST_MAX) },
    { { "key-file", "path", "", "",
        "file holding the cluster key, as `shoal keygen` prints it; empty: none" },
      PATH (key_file, 0) },
    { { "require-key", "bool", "false", "", "refuse to start without a cluster key" },
      BOOL (require_key) },
    { { "capacity", "uint32", "1", "1..1000000", "relative size of this node for the assignor" },
      NUMBER (capacity, 1, 1000000) },
    { { "slots", "uint32", "0", "0..1000000", "most tasks this node runs at once; 0: no limit" },
      NUMBER (slots, 0, 1000000) },
    { { "labels", "key=value list", "", "at most 16, each side " NAME_RANGE,
        "labels that jobs may require of a node; each key once" },
      LIST (K_LABELS, labels, shoal_option_label_t, SHOAL_OPTIONS_LABELS_MAX) },
    { { "handles", "job list", "", "at most 16",
        "the only jobs this node runs tasks of; empty: every job" },
      LIST (K_JOBS, handles, shoal_option_job_t, SHOAL_OPTIONS_HANDLES_MAX) },
    { { "priority", "uint32", "0", "0..4294967295",
        "election rank: the highest wins, the node id breaks ties" },
      NUMBER (priority, 0, UINT32_MAX) },
    { { "partition-mode", "choice", "quorum", "quorum|available",
        "in a partition, act only with a majority of the voters, or on every side" },
      CHOICE (partition_mode) },
    { { "expect", "uint32", "0", "0..16384",
        "the first leader waits until it sees this many members, its first voters; 0: none "
        "(but a node given seeds waits for one); 1: it may lead alone" },
      NUMBER (expect, 0, 16384) },
    { { "voters", "uint32", "7", "1..16384",
        "most members in the voter set, whose majority a leader needs in quorum mode: the "
        "highest ranks, each live for a while; more survive more voters lost at once, and cost "
        "more" },
      NUMBER (voters, 1, 16384) },
    { { "profile", "choice", "lan", "lan|loopback|wan",
        "timing profile: a LAN; one machine's loopback (ten times faster); a WAN, or "
        "many nodes on few cores (five times slower)" },
      CHOICE (profile) },
    { { "standbys", "uint32", "0", "0..16", "hot standby replicas per stateful task" },
      NUMBER (standbys, 0, 16) },
    { { "max-warmups", "uint32", "2", "1..1000",
        "most learners warming up in the whole cluster at once" },
      NUMBER (max_warmups, 1, 1000) },
    { { "max-starting", "uint32", "0", "0..100000",
        "most tasks starting in the whole cluster at once (0: no bound)" },
      NUMBER (max_starting, 0, 100000) },
    { { "acceptable-lag", "uint64", "10000", "",
        "a standby or learner this far behind, or less, is caught up" },
      NUMBER (acceptable_lag, 0, UINT64_MAX) },
    { { "leave-timeout", "duration", "30s", "0s..24h", "how long a graceful leave may take" },
      DURATION (leave_timeout_ms) },
    { { "control", "endpoint", "", "ipc://PATH or tcp://HOST:PORT",
        "where shoal's client commands reach the node; empty: ipc://<data-dir>/control" },
      ENDPOINT (control) },
    { { "metrics", "host:port", "", "", "where metrics are served; empty: off" },
      HOSTPORT (metrics, 0, HOSTPORT_TEXT_MAX) },
    { { "events", "path", "", "", "file the node writes its events to; empty: off" },
      PATH (events, 0) },
    { { "log-level", "choice", "info", "error|warn|info|debug",
        "the least severe log messages written" },
      CHOICE (log_level) },
    { { "log-format", "choice", "text", "text|json", "log lines as text or as JSON" },
      CHOICE (log_format) },
    { { "grace", "duration", "10s", "0s..24h",
        "worker only: from SIGTERM to SIGKILL for a revoked task's child" },
      DURATION (grace_ms) },
    { { "task-log-size", "bytes", "1048576", "0..1073741824",
        "worker only: most bytes of a task's output file in DATA-DIR/logs before it is rotated; "
        "0: no files" },
      NUMBER (task_log_size, 0, 1073741824) },
    { { "task-log-keep", "uint32", "1", "0..16",
        "worker only: older output files kept per task, after a rotation" },
      NUMBER (task_log_keep, 0, 16) },
    { { "child-nice", "uint32", "0", "0..19",
        "worker only: how much lower each task's command runs in CPU priority than the "
        "worker (a nice value added to the worker's); the worker and the commands' shims keep "
        "theirs, so that commands busy on every core do not starve the node's lease" },
      NUMBER (child_nice, 0, 19) },
};

#define OPTION_COUNT (sizeof s_options / sizeof s_options[0])
_Static_assert(OPTION_COUNT <= 64, "shoal_options_t.given has a bit for each option");

size_t
shoal_options_count (void)
{
    return OPTION_COUNT;
}

const shoal_option_info_t *
shoal_options_info (size_t index)
{
    return index < OPTION_COUNT ? &s_options[index].info : NULL;
}

//  The public view of the table (shoal.h). The caller's struct may be of
//  an older layout (smaller) or a newer one (larger): the library writes
//  the fields both know and zeroes the ones it does not know of, so that a
//  binding built against a newer header reads NULL, not garbage.
#define SPEC_LEAST (offsetof (shoal_option_spec_t, doc) + sizeof (const char *))

size_t
shoal_option_count (void)
{
    return OPTION_COUNT;
}

int
shoal_option_at (size_t index, shoal_option_spec_t *spec)
{
    if (!spec || spec->size < SPEC_LEAST || index >= OPTION_COUNT)
        return -1;
    size_t size = spec->size;
    const shoal_option_info_t *info = &s_options[index].info;
    shoal_option_spec_t full = { .size = size,
                                 .key = info->key,
                                 .type = info->type,
                                 .default_text = info->default_text,
                                 .range = info->range,
                                 .doc = info->doc };
    shoal_call_give (spec, size, &full, sizeof full, true);
    return 0;
}

static const s_option_t *
s_find (const char *key)
{
    for (size_t i = 0; key && i < OPTION_COUNT; i++)
        if (strcmp (s_options[i].info.key, key) == 0)
            return &s_options[i];
    return NULL;
}

static bool
s_is_list (const s_option_t *option)
{
    return option->kind == K_ADDRESSES || option->kind == K_LABELS || option->kind == K_JOBS;
}

static uint64_t
s_bit (const s_option_t *option)
{
    return UINT64_C (1) << (option - s_options);
}

static shoal_option_list_t *
s_list (shoal_options_t *self, const s_option_t *option)
{
    return (shoal_option_list_t *) ((char *) self + option->offset);
}

//  ---------------------------------------------------------------------
//  Reasons and text

//  Text written into a buffer of size bytes; used counts what did not fit
//  too, so that the caller learns how much room it would have needed.
typedef struct {
    char *text;
    size_t size;
    size_t used;
} s_writer_t;

static void s_write (s_writer_t *writer, const char *format, ...)
    __attribute__ ((format (printf, 2, 3)));

static void
s_write (s_writer_t *writer, const char *format, ...)
{
    size_t room = writer->used < writer->size ? writer->size - writer->used : 0;
    va_list args;
    va_start (args, format);
    int length = vsnprintf (room ? writer->text + writer->used : NULL, room, format, args);
    va_end (args);
    writer->used += length > 0 ? (size_t) length : 0;
}

//  A value quoted in a reason is cut short, at a character's start, so that
//  a reason stays one readable line.
#define QUOTE_MAX 48
typedef struct {
    char text[QUOTE_MAX + 4];
} s_quote_t;

static s_quote_t
s_quote (const char *value)
{
    s_quote_t quote;
    size_t length = strlen (value);
    if (length <= QUOTE_MAX) {
        memcpy (quote.text, value, length + 1);
        return quote;
    }
    length = QUOTE_MAX;
    while (length > 0 && ((unsigned char) value[length] & 0xc0) == 0x80)
        length--;
    memcpy (quote.text, value, length);
    memcpy (quote.text + length, "...", 4);
    return quote;
}

//  Control characters would make a value unprintable in help and
//  unwritable in a config file, where a line ends at a newline.
static bool
s_has_control (const char *s, size_t size, bool tab_allowed)
{
    for (size_t i = 0; i < size; i++) {
        unsigned char c = (unsigned char) s[i];
        if ((c < 0x20 && !(c == '\t' && tab_allowed)) || c == 0x7f)
            return true;
    }
    return false;
}

static bool
s_is_name_char (char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
}

//  ---------------------------------------------------------------------
//  Parsing one value

//  What one value parses to, before it is stored.
typedef union {
    char text[SHOAL_OPTIONS_VALUE_MAX + 1];
    shoal_option_hostport_t hostport;
    uint64_t number;
    bool flag;
} s_value_t;

//  Reads a decimal number. Returns 0, or -1 when text is not digits only,
//  or 1 when it is but the number is over UINT64_MAX.
static int
s_digits (const char *text, size_t length, uint64_t *number)
{
    *number = 0;
    if (length == 0)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < length; i++) {
        if (text[i] < '0' || text[i] > '9')
            return -1;
        unsigned digit = (unsigned) (text[i] - '0');
        if (*number > (UINT64_MAX - digit) / 10)
            rc = 1;
        else
            *number = *number * 10 + digit;
    }
    return rc;
}

static int
s_parse_name (const char *key, const char *text, size_t min, size_t max, char *out, char *why,
              size_t why_size)
{
    size_t length = strlen (text);
    if (length < min)
        return shoal_why (why, why_size, "%s: empty", key);
    if (length > max)
        return shoal_why (why, why_size, "%s: '%s' is longer than %zu characters", key,
                          s_quote (text).text, max);
    for (size_t i = 0; i < length; i++)
        if (!s_is_name_char (text[i]))
            return shoal_why (why, why_size,
                              "%s: '%s' has a character other than A-Z a-z 0-9 . _ -", key,
                              s_quote (text).text);
    memcpy (out, text, length + 1);
    return 0;
}

//  True when the length bytes at host are a DNS name or an IPv4 address.
//  Digits and dots alone must be an IPv4 address, as a resolver would read
//  them as one.
static bool
s_is_host (const char *host, size_t length)
{
    if (length == 0 || length > SHOAL_OPTIONS_HOST_MAX)
        return false;
    if (strspn (host, "0123456789.") >= length) {
        char address[SHOAL_OPTIONS_HOST_MAX + 1];
        struct in_addr ipv4;
        memcpy (address, host, length);
        address[length] = '\0';
        return inet_pton (AF_INET, address, &ipv4) == 1;
    }
    size_t label = 0;
    for (size_t i = 0; i <= length; i++) {
        char c = i < length ? host[i] : '.';
        if (c == '.') {
            if (label == 0 || label > 63 || host[i - 1] == '-' || host[i - label] == '-')
                return false;
            label = 0;
        } else if (s_is_name_char (c) && c != '.')
            label++;
        else
            return false;
    }
    return true;
}

static int
s_parse_hostport (const char *key, const char *text, bool optional, shoal_option_hostport_t *out,
                  char *why, size_t why_size)
{
    memset (out, 0, sizeof *out);
    if (*text == '\0')
        return optional ? 0 : shoal_why (why, why_size, "%s: empty; give a host:port", key);
    const char *host = text;
    const char *colon;
    size_t host_length;
    bool ipv6 = text[0] == '[';
    if (ipv6) {
        const char *close = strchr (text, ']');
        if (!close)
            return shoal_why (why, why_size, "%s: '%s' opens a bracket it does not close", key,
                              s_quote (text).text);
        host = text + 1;
        host_length = (size_t) (close - host);
        colon = close[1] == ':' ? close + 1 : NULL;
        if (close[1] != ':' && close[1] != '\0')
            return shoal_why (why, why_size, "%s: '%s' has text after the bracket", key,
                              s_quote (text).text);
    } else {
        colon = strrchr (text, ':');
        host_length = colon ? (size_t) (colon - text) : strlen (text);
        if (colon && memchr (text, ':', host_length))
            return shoal_why (why, why_size,
                              "%s: an IPv6 address goes in brackets, as in [::1]:7946", key);
    }
    if (!colon)
        return shoal_why (why, why_size, "%s: '%s' has no port; give a host:port", key,
                          s_quote (text).text);
    if (host_length == 0)
        return shoal_why (why, why_size, "%s: '%s' has no host; give a host:port", key,
                          s_quote (text).text);
    bool valid;
    if (ipv6) {
        char address[INET6_ADDRSTRLEN];
        struct in6_addr unused;
        valid = host_length < sizeof address;
        if (valid) {
            memcpy (address, host, host_length);
            address[host_length] = '\0';
            valid = inet_pton (AF_INET6, address, &unused) == 1;
        }
    } else
        valid = s_is_host (host, host_length);
    if (!valid)
        return shoal_why (why, why_size,
                          "%s: '%s' does not name a host by a DNS name, an IPv4 address or an "
                          "[IPv6] address",
                          key, s_quote (text).text);
    uint64_t port;
    int digits = s_digits (colon + 1, strlen (colon + 1), &port);
    if (digits < 0)
        return shoal_why (why, why_size, "%s: '%s' is not a port", key, s_quote (colon + 1).text);
    //  A node may bind port 0, any free port (tests, embedded nodes that
    //  join by seeds); no one can be reached, or advertise, at port 0.
    bool any_port = strcmp (key, "bind") == 0;
    if (digits > 0 || (port == 0 && !any_port) || port > 65535)
        return shoal_why (why, why_size, "%s: port %s is out of range (%d to 65535)", key,
                          s_quote (colon + 1).text, any_port ? 0 : 1);
    memcpy (out->host, host, host_length);
    out->port = (uint16_t) port;
    return 0;
}

//  A seed named by a DNS SRV record (_service._proto.domain, RFC 2782),
//  which gives its hosts and ports: kept as the name with port 0.
static int
s_parse_srv (const char *key, const char *text, shoal_option_hostport_t *out, char *why,
             size_t why_size)
{
    memset (out, 0, sizeof *out);
    size_t length = strlen (text);
    const char *dot = strchr (text, '.');
    if (!s_is_host (text, length) || !dot || dot[1] != '_' || !strchr (dot + 1, '.'))
        return shoal_why (why, why_size,
                          "%s: '%s' is neither a host:port nor an SRV name "
                          "(_service._proto.domain, as _shoal._udp.example.com)",
                          key, s_quote (text).text);
    memcpy (out->host, text, length);
    return 0;
}

static void
s_write_hostport (s_writer_t *writer, const shoal_option_hostport_t *hostport)
{
    if (hostport->host[0] == '\0')
        return;
    const char *format = strchr (hostport->host, ':') ? "[%s]:%u" : "%s:%u";
    s_write (writer, format, hostport->host, (unsigned) hostport->port);
}

static int
s_parse_endpoint (const char *key, const char *text, char *out, char *why, size_t why_size)
{
    shoal_option_hostport_t unused;
    bool ipc = strncmp (text, "ipc://", 6) == 0 && text[6] != '\0';
    bool tcp = strncmp (text, "tcp://", 6) == 0;
    if (tcp && s_parse_hostport (key, text + 6, false, &unused, why, why_size) != 0)
        return -1;
    if (!ipc && !tcp && *text != '\0')
        return shoal_why (why, why_size, "%s: '%s' is not ipc://PATH or tcp://HOST:PORT", key,
                          s_quote (text).text);
    strcpy (out, text);
    return 0;
}

//  An interface's name as the kernel takes one (dev_valid_name): at most
//  IFNAMSIZ - 1 bytes, without '/' or whitespace, and not "." or "..".
//  ':' stays allowed, as getifaddrs names an address's label "eth0:1".
//  Control characters were refused before. Whether it exists is for the
//  beacons to find out when they start; "*" is czmq's word for all.
static int
s_parse_interface (const char *key, const char *text, char *out, char *why, size_t why_size)
{
    size_t length = strlen (text);
    if (length > SHOAL_OPTIONS_IFNAME_MAX)
        return shoal_why (why, why_size,
                          "%s: '%s' is longer than %d bytes, the most an interface's name has", key,
                          s_quote (text).text, SHOAL_OPTIONS_IFNAME_MAX);
    if (strpbrk (text, "/ \t\n\v\f\r"))
        return shoal_why (why, why_size,
                          "%s: '%s' holds a '/' or a space, which no interface's name does", key,
                          s_quote (text).text);
    if (strcmp (text, ".") == 0 || strcmp (text, "..") == 0)
        return shoal_why (why, why_size, "%s: '%s' is not an interface's name", key, text);
    memcpy (out, text, length + 1);
    return 0;
}

//  The units a duration takes, largest first, as get writes them.
static const struct {
    const char *name;
    uint64_t ms;
} s_units[] = { { "h", 3600000 }, { "m", 60000 }, { "s", 1000 }, { "ms", 1 } };

#define UNIT_COUNT (sizeof s_units / sizeof s_units[0])

static void
s_write_duration (s_writer_t *writer, uint64_t ms)
{
    size_t unit = 0;
    while (unit + 1 < UNIT_COUNT && (ms == 0 ? s_units[unit].ms != 1000 : ms % s_units[unit].ms))
        unit++;
    s_write (writer, "%" PRIu64 "%s", ms / s_units[unit].ms, s_units[unit].name);
}

static int
s_parse_duration (const char *key, const char *text, uint64_t *ms, char *why, size_t why_size)
{
    size_t digits = strspn (text, "0123456789");
    const char *unit_name = text + digits;
    size_t unit = 0;
    while (unit < UNIT_COUNT && strcmp (unit_name, s_units[unit].name) != 0)
        unit++;
    uint64_t count;
    int rc = s_digits (text, digits, &count);
    if (rc >= 0 && *unit_name == '\0')
        return shoal_why (why, why_size, "%s: %s needs a unit: ms, s, m or h (as in %ss)", key,
                          s_quote (text).text, s_quote (text).text);
    if (rc < 0 || unit == UNIT_COUNT)
        return shoal_why (why, why_size, "%s: '%s' is not a whole number of ms, s, m or h", key,
                          s_quote (text).text);
    if (rc > 0 || count > UINT64_MAX / s_units[unit].ms)
        count = UINT64_MAX;
    else
        count *= s_units[unit].ms;
    *ms = count;
    return 0;
}

int
shoal_options_duration (const char *name, const char *text, uint64_t *ms, char *why,
                        size_t why_size)
{
    if (s_parse_duration (name, text, ms, why, why_size) != 0)
        return -1;
    if (*ms > SHOAL_OPTIONS_DURATION_MAX)
        return shoal_why (why, why_size, "%s: %s is over the maximum 24h", name,
                          s_quote (text).text);
    return 0;
}

static int
s_parse_bool (const char *key, const char *text, bool *flag, char *why, size_t why_size)
{
    static const char *const words[] = { "false", "true", "no", "yes", "off", "on", "0", "1" };
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strcmp (text, words[i]) == 0) {
            *flag = i % 2 == 1;
            return 0;
        }
    return shoal_why (why, why_size, "%s: '%s' is not true/false, yes/no, on/off or 1/0", key,
                      s_quote (text).text);
}

//  The index-th word of a choice's range, "a|b|c", and its length.
static const char *
s_choice_word (const char *range, uint64_t index, size_t *length)
{
    const char *word = range;
    for (; index > 0 && word; index--)
        word = strchr (word, '|') ? strchr (word, '|') + 1 : NULL;
    //  Set on every path: with NDEBUG the caller's assert is gone, and GCC
    //  (rightly) sees a length that may be read unset.
    *length = word ? strcspn (word, "|") : 0;
    return word;
}

static int
s_parse_choice (const s_option_t *option, const char *text, uint64_t *index, char *why,
                size_t why_size)
{
    size_t length;
    const char *word;
    for (*index = 0; (word = s_choice_word (option->info.range, *index, &length)); ++*index)
        if (strlen (text) == length && memcmp (text, word, length) == 0)
            return 0;
    return shoal_why (why, why_size, "%s: '%s' is not one of %s", option->info.key,
                      s_quote (text).text, option->info.range);
}

//  A number or a duration within the option's bounds, written in its own
//  terms when it is not.
static int
s_check_bounds (const s_option_t *option, const char *text, uint64_t number, char *why,
                size_t why_size)
{
    if (number >= option->min && number <= option->max)
        return 0;
    char bound[32];
    s_writer_t writer = { bound, sizeof bound, 0 };
    uint64_t limit = number < option->min ? option->min : option->max;
    if (option->kind == K_DURATION)
        s_write_duration (&writer, limit);
    else
        s_write (&writer, "%" PRIu64, limit);
    return shoal_why (why, why_size, "%s: %s is %s %s", option->info.key, s_quote (text).text,
                      number < option->min ? "below the minimum" : "over the maximum", bound);
}

//  Parses text as the scalar option's value.
static int
s_parse (const s_option_t *option, const char *text, s_value_t *value, char *why, size_t why_size)
{
    const char *key = option->info.key;
    memset (value, 0, sizeof *value);
    switch (option->kind) {
    case K_NAME:
        return s_parse_name (key, text, option->min, option->max, value->text, why, why_size);
    case K_PATH:
        if (strlen (text) < option->min)
            return shoal_why (why, why_size, "%s: empty", key);
        strcpy (value->text, text);
        return 0;
    case K_ENDPOINT:
        return s_parse_endpoint (key, text, value->text, why, why_size);
    case K_INTERFACE:
        return s_parse_interface (key, text, value->text, why, why_size);
    case K_HOSTPORT: {
        if (s_parse_hostport (key, text, option->min == 0, &value->hostport, why, why_size) != 0)
            return -1;
        s_writer_t writer = { NULL, 0, 0 };
        s_write_hostport (&writer, &value->hostport);
        if (writer.used > option->max)
            return shoal_why (why, why_size, "%s: '%s' is longer than %" PRIu64 " bytes", key,
                              s_quote (text).text, option->max);
        return 0;
    }
    case K_NUMBER: {
        int rc = s_digits (text, strlen (text), &value->number);
        if (rc < 0)
            return shoal_why (why, why_size, "%s: '%s' is not a whole number", key,
                              s_quote (text).text);
        if (rc > 0)
            value->number = UINT64_MAX;
        if (rc > 0 && option->max == UINT64_MAX)
            return shoal_why (why, why_size, "%s: %s is over the maximum %" PRIu64, key,
                              s_quote (text).text, option->max);
        return s_check_bounds (option, text, value->number, why, why_size);
    }
    case K_DURATION:
        if (s_parse_duration (key, text, &value->number, why, why_size) != 0)
            return -1;
        return s_check_bounds (option, text, value->number, why, why_size);
    case K_BOOL:
        return s_parse_bool (key, text, &value->flag, why, why_size);
    case K_CHOICE:
        return s_parse_choice (option, text, &value->number, why, why_size);
    default:
        assert (!"a list is not a scalar");
        return -1;
    }
}

//  ---------------------------------------------------------------------
//  Storing and writing out a scalar

//  The field is an integer of size bytes; memcpy keeps to its own type.
static void
s_store_number (void *field, size_t size, uint64_t number)
{
    if (size == sizeof (uint16_t))
        memcpy (field, &(uint16_t){ (uint16_t) number }, size);
    else if (size == sizeof (uint32_t))
        memcpy (field, &(uint32_t){ (uint32_t) number }, size);
    else {
        assert (size == sizeof (uint64_t));
        memcpy (field, &number, size);
    }
}

static uint64_t
s_load_number (const void *field, size_t size)
{
    if (size == sizeof (uint16_t)) {
        uint16_t number;
        memcpy (&number, field, size);
        return number;
    }
    if (size == sizeof (uint32_t)) {
        uint32_t number;
        memcpy (&number, field, size);
        return number;
    }
    uint64_t number;
    memcpy (&number, field, sizeof number);
    return number;
}

static void
s_store (shoal_options_t *self, const s_option_t *option, const s_value_t *value)
{
    char *field = (char *) self + option->offset;
    switch (option->kind) {
    case K_NAME:
    case K_PATH:
    case K_ENDPOINT:
    case K_INTERFACE:
        memcpy (field, value->text, option->size);
        break;
    case K_HOSTPORT:
        memcpy (field, &value->hostport, option->size);
        break;
    case K_BOOL:
        memcpy (field, &value->flag, option->size);
        break;
    default:
        s_store_number (field, option->size, value->number);
    }
}

static void
s_write_scalar (s_writer_t *writer, const shoal_options_t *self, const s_option_t *option)
{
    const char *field = (const char *) self + option->offset;
    size_t length;
    switch (option->kind) {
    case K_NAME:
    case K_PATH:
    case K_ENDPOINT:
    case K_INTERFACE:
        s_write (writer, "%s", field);
        break;
    case K_HOSTPORT:
        s_write_hostport (writer, (const shoal_option_hostport_t *) field);
        break;
    case K_NUMBER:
        s_write (writer, "%" PRIu64, s_load_number (field, option->size));
        break;
    case K_DURATION:
        s_write_duration (writer, s_load_number (field, option->size));
        break;
    case K_BOOL:
        s_write (writer, "%s", *(const bool *) field ? "true" : "false");
        break;
    default: {
        const char *word =
            s_choice_word (option->info.range, s_load_number (field, option->size), &length);
        assert (word);
        s_write (writer, "%.*s", (int) length, word ? word : "");
    }
    }
}

//  ---------------------------------------------------------------------
//  Lists

//  The text an item must not repeat in its list, or NULL when it may.
static const char *
s_item_identity (const s_option_t *option, const void *item)
{
    if (option->kind == K_LABELS)
        return ((const shoal_option_label_t *) item)->key;
    if (option->kind == K_JOBS)
        return ((const shoal_option_job_t *) item)->name;
    return NULL;
}

static int
s_parse_item (const s_option_t *option, const char *text, void *item, char *why, size_t why_size)
{
    const char *key = option->info.key;
    if (option->kind == K_ADDRESSES && text[0] == '_' && !strchr (text, ':'))
        return s_parse_srv (key, text, item, why, why_size);
    if (option->kind == K_ADDRESSES)
        return s_parse_hostport (key, text, false, item, why, why_size);
    if (option->kind == K_JOBS)
        return s_parse_name (key, text, 1, SHOAL_OPTIONS_JOB_MAX,
                             ((shoal_option_job_t *) item)->name, why, why_size);
    shoal_option_label_t *label = item;
    const char *equals = strchr (text, '=');
    if (!equals)
        return shoal_why (why, why_size, "%s: '%s' is not key=value", key, s_quote (text).text);
    char side[SHOAL_OPTIONS_VALUE_MAX + 1];
    memcpy (side, text, (size_t) (equals - text));
    side[equals - text] = '\0';
    if (s_parse_name (key, side, 1, SHOAL_OPTIONS_NAME_MAX, label->key, why, why_size) != 0)
        return -1;
    return s_parse_name (key, equals + 1, 1, SHOAL_OPTIONS_NAME_MAX, label->value, why, why_size);
}

static void
s_write_list (s_writer_t *writer, const s_option_t *option, const shoal_option_list_t *list)
{
    for (size_t i = 0; i < list->count; i++) {
        const void *item = (const char *) list->items + i * option->size;
        if (i > 0)
            s_write (writer, ",");
        if (option->kind == K_ADDRESSES && ((const shoal_option_hostport_t *) item)->port == 0)
            s_write (writer, "%s", ((const shoal_option_hostport_t *) item)->host); //  SRV
        else if (option->kind == K_ADDRESSES)
            s_write_hostport (writer, item);
        else if (option->kind == K_LABELS)
            s_write (writer, "%s=%s", ((const shoal_option_label_t *) item)->key,
                     ((const shoal_option_label_t *) item)->value);
        else
            s_write (writer, "%s", ((const shoal_option_job_t *) item)->name);
    }
}

static bool
s_is_blank (char c)
{
    return c == ' ' || c == '\t';
}

//  Adds value's comma-separated items to the list, or replaces the list
//  with them when the current source has not given it yet; an empty value
//  empties it. The new list is built aside, and swapped in only once all of
//  it is right.
static int
s_set_list (shoal_options_t *self, const s_option_t *option, const char *value, char *why,
            size_t why_size)
{
    shoal_option_list_t *list = s_list (self, option);
    size_t kept = (self->given & s_bit (option)) && *value ? list->count : 0;
    size_t added = *value ? 1 : 0;
    for (const char *comma = value; (comma = strchr (comma, ',')); comma++)
        added++;
    if (kept + added > option->max)
        return shoal_why (why, why_size, "%s: more than %" PRIu64 " items", option->info.key,
                          option->max);
    shoal_option_list_t fresh = { kept + added, NULL };
    if (fresh.count && !(fresh.items = calloc (fresh.count, option->size)))
        return shoal_why (why, why_size, "%s: out of memory", option->info.key);
    if (kept)
        memcpy (fresh.items, list->items, kept * option->size);

    int rc = 0;
    const char *at = value;
    for (size_t i = kept; rc == 0 && i < fresh.count; i++) {
        size_t length = strcspn (at, ",");
        const char *next = at + length + (at[length] == ',');
        while (length > 0 && s_is_blank (*at))
            at++, length--;
        while (length > 0 && s_is_blank (at[length - 1]))
            length--;
        char text[SHOAL_OPTIONS_VALUE_MAX + 1];
        memcpy (text, at, length);
        text[length] = '\0';
        void *item = (char *) fresh.items + i * option->size;
        if (length == 0)
            rc = shoal_why (why, why_size, "%s: an empty item in '%s'", option->info.key,
                            s_quote (value).text);
        else
            rc = s_parse_item (option, text, item, why, why_size);
        const char *identity = rc == 0 ? s_item_identity (option, item) : NULL;
        for (size_t j = 0; identity && j < i; j++)
            if (strcmp (identity,
                        s_item_identity (option, (char *) fresh.items + j * option->size)) == 0)
                rc = shoal_why (why, why_size, "%s: %s %s given twice", option->info.key,
                                option->kind == K_LABELS ? "key" : "job", identity);
        at = next;
    }
    if (rc == 0) {
        s_writer_t writer = { NULL, 0, 0 };
        s_write_list (&writer, option, &fresh);
        if (writer.used > SHOAL_OPTIONS_VALUE_MAX)
            rc = shoal_why (why, why_size, "%s: the list, written out, is longer than %d bytes",
                            option->info.key, SHOAL_OPTIONS_VALUE_MAX);
    }
    if (rc != 0) {
        free (fresh.items);
        return -1;
    }
    free (list->items);
    *list = fresh;
    self->given |= s_bit (option);
    return 0;
}

//  ---------------------------------------------------------------------
//  Setting and getting

//  The distance between two words, in insertions, deletions, changes and
//  swaps of neighbours (optimal string alignment); words longer than
//  WORD_MAX are far from everything.
#define WORD_MAX 32

static size_t
s_distance (const char *a, size_t a_length, const char *b, size_t b_length)
{
    if (a_length > WORD_MAX || b_length > WORD_MAX)
        return SIZE_MAX;
    size_t d[WORD_MAX + 1][WORD_MAX + 1];
    for (size_t i = 0; i <= a_length; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= b_length; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= a_length; i++)
        for (size_t j = 1; j <= b_length; j++) {
            size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[a_length][b_length];
}

//  The option whose key word is likely a misspelling of, or NULL: the
//  nearest within two edits, and fewer than half the key's letters, so
//  that short unrelated words are not taken for keys.
static const s_option_t *
s_likely (const char *word, size_t length)
{
    const s_option_t *likely = NULL;
    size_t nearest = 3;
    for (size_t i = 0; i < OPTION_COUNT; i++) {
        const char *key = s_options[i].info.key;
        size_t distance = s_distance (word, length, key, strlen (key));
        if (distance < nearest && 2 * distance < strlen (key)) {
            nearest = distance;
            likely = &s_options[i];
        }
    }
    return likely;
}

static int
s_unknown (const char *key, char *why, size_t why_size)
{
    size_t length = key ? strlen (key) : 0;
    bool plain = length > 0 && length <= WORD_MAX;
    for (size_t i = 0; plain && i < length; i++)
        plain = s_is_name_char (key[i]);
    if (!plain)
        return shoal_why (why, why_size, "no option by that name (keys are words like data-dir)");
    const s_option_t *likely = s_likely (key, length);
    if (likely)
        return shoal_why (why, why_size, "no option named '%s' (did you mean '%s'?)", key,
                          likely->info.key);
    return shoal_why (why, why_size, "no option named '%s'", key);
}

static int
s_apply (shoal_options_t *self, const s_option_t *option, const char *value, char *why,
         size_t why_size)
{
    size_t length = strnlen (value, SHOAL_OPTIONS_VALUE_MAX + 1);
    if (length > SHOAL_OPTIONS_VALUE_MAX)
        return shoal_why (why, why_size, "%s: the value is longer than %d bytes", option->info.key,
                          SHOAL_OPTIONS_VALUE_MAX);
    if (!shoal_text_valid ((const uint8_t *) value, length))
        return shoal_why (why, why_size, "%s: the value is not UTF-8 text", option->info.key);
    if (s_has_control (value, length, false))
        return shoal_why (why, why_size, "%s: the value holds a control character",
                          option->info.key);
    if (s_is_list (option))
        return s_set_list (self, option, value, why, why_size);
    s_value_t parsed;
    if (s_parse (option, value, &parsed, why, why_size) != 0)
        return -1;
    s_store (self, option, &parsed);
    return 0;
}

int
shoal_options_set (shoal_options_t *self, const char *key, const char *value, char *why,
                   size_t why_size)
{
    assert (self);
    const s_option_t *option = s_find (key);
    if (!option)
        return s_unknown (key, why, why_size);
    if (!value)
        return shoal_why (why, why_size, "%s: no value given", key);
    return s_apply (self, option, value, why, why_size);
}

int
shoal_options_get (const shoal_options_t *self, const char *key, char *text, size_t size)
{
    assert (self);
    const s_option_t *option = s_find (key);
    s_writer_t writer = { text, size, 0 };
    if (size)
        text[0] = '\0';
    if (option && s_is_list (option))
        s_write_list (&writer, option, s_list ((shoal_options_t *) self, option));
    else if (option)
        s_write_scalar (&writer, self, option);
    if (option && writer.used < size)
        return 0;
    if (size)
        text[0] = '\0';
    return -1;
}

//  ---------------------------------------------------------------------
//  The object

shoal_options_t *
shoal_options_new (void)
{
    shoal_options_t *self = calloc (1, sizeof *self);
    for (size_t i = 0; self && i < OPTION_COUNT; i++)
        if (s_apply (self, &s_options[i], s_options[i].info.default_text, NULL, 0) != 0)
            shoal_options_destroy (&self);
    if (self)
        self->given = 0;
    return self;
}

void
shoal_options_destroy (shoal_options_t **self_p)
{
    assert (self_p);
    shoal_options_t *self = *self_p;
    if (!self)
        return;
    for (size_t i = 0; i < OPTION_COUNT; i++)
        if (s_is_list (&s_options[i]))
            free (s_list (self, &s_options[i])->items);
    free (self);
    *self_p = NULL;
}

//  A copy for a source to work on, with nothing given yet; NULL when out
//  of memory.
static shoal_options_t *
s_copy (const shoal_options_t *self)
{
    shoal_options_t *copy = malloc (sizeof *copy);
    if (!copy)
        return NULL;
    *copy = *self;
    copy->given = 0;
    for (size_t i = 0; i < OPTION_COUNT; i++)
        if (s_is_list (&s_options[i]))
            s_list (copy, &s_options[i])->items = NULL;
    for (size_t i = 0; i < OPTION_COUNT; i++) {
        const s_option_t *option = &s_options[i];
        if (!s_is_list (option))
            continue;
        shoal_option_list_t *list = s_list (copy, option);
        size_t bytes = list->count * option->size;
        if (bytes && !(list->items = malloc (bytes))) {
            shoal_options_destroy (&copy);
            return NULL;
        }
        if (bytes)
            memcpy (list->items, s_list ((shoal_options_t *) self, option)->items, bytes);
    }
    return copy;
}

//  Takes what a source made of the copy; the next value given to a list
//  is from another source.
static void
s_adopt (shoal_options_t *self, shoal_options_t **copy_p)
{
    for (size_t i = 0; i < OPTION_COUNT; i++)
        if (s_is_list (&s_options[i]))
            free (s_list (self, &s_options[i])->items);
    *self = **copy_p;
    self->given = 0;
    free (*copy_p);
    *copy_p = NULL;
}

//  ---------------------------------------------------------------------
//  The config file

//  A quoted value, from just after its opening quote to the end of the
//  line, unescaped into value (which has room for the line).
static int
s_unquote (const char *at, size_t length, char *value, char *why, size_t why_size)
{
    size_t i = 0, used = 0;
    for (;;) {
        if (i == length)
            return shoal_why (why, why_size, "a quoted value without its closing quote");
        char c = at[i++];
        if (c == '"')
            break;
        if (c == '\\') {
            c = i < length ? at[i++] : '\0';
            if (c != '"' && c != '\\')
                return shoal_why (why, why_size, "in quotes, \\ only escapes \" and \\");
        }
        value[used++] = c;
    }
    value[used] = '\0';
    while (i < length && s_is_blank (at[i]))
        i++;
    if (i < length)
        return shoal_why (why, why_size, "text after a quoted value");
    return 0;
}

//  Applies one line, without its end, to self.
static int
s_load_line (shoal_options_t *self, const char *line, size_t length, char *why, size_t why_size)
{
    if (length > SHOAL_OPTIONS_LINE_MAX)
        return shoal_why (why, why_size, "a line longer than %d bytes", SHOAL_OPTIONS_LINE_MAX);
    if (memchr (line, '\0', length))
        return shoal_why (why, why_size, "a NUL byte");
    if (!shoal_text_valid ((const uint8_t *) line, length))
        return shoal_why (why, why_size, "not UTF-8 text");
    if (s_has_control (line, length, true))
        return shoal_why (why, why_size, "a control character");
    size_t at = 0;
    while (at < length && s_is_blank (line[at]))
        at++;
    if (at == length || line[at] == '#')
        return 0;
    size_t key_at = at;
    while (at < length && !s_is_blank (line[at]) && line[at] != '=')
        at++;
    size_t key_length = at - key_at;
    while (at < length && s_is_blank (line[at]))
        at++;
    if (at == length || line[at] != '=' || key_length == 0)
        return shoal_why (why, why_size, "not a line of key = value");
    at++;
    while (at < length && s_is_blank (line[at]))
        at++;
    while (length > at && s_is_blank (line[length - 1]))
        length--;

    char key[SHOAL_OPTIONS_LINE_MAX + 1], value[SHOAL_OPTIONS_LINE_MAX + 1];
    memcpy (key, line + key_at, key_length);
    key[key_length] = '\0';
    if (at < length && line[at] == '"') {
        if (s_unquote (line + at + 1, length - at - 1, value, why, why_size) != 0)
            return -1;
    } else {
        memcpy (value, line + at, length - at);
        value[length - at] = '\0';
    }
    return shoal_options_set (self, key, value, why, why_size);
}

int
shoal_options_load_text (shoal_options_t *self, const char *name, const char *text, size_t size,
                         char *why, size_t why_size)
{
    assert (self);
    assert (text || size == 0);
    name = name ? name : "config";
    if (size > SHOAL_OPTIONS_FILE_MAX)
        return shoal_why (why, why_size, "%s: larger than %d bytes", name, SHOAL_OPTIONS_FILE_MAX);
    shoal_options_t *copy = s_copy (self);
    if (!copy)
        return shoal_why (why, why_size, "%s: out of memory", name);
    size_t at = size >= 3 && memcmp (text, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
    unsigned line = 0;
    int rc = 0;
    char reason[256];
    while (rc == 0 && at < size) {
        line++;
        const char *start = text + at;
        const char *end = memchr (start, '\n', size - at);
        size_t length = end ? (size_t) (end - start) : size - at;
        at += length + (end != NULL);
        if (length > 0 && start[length - 1] == '\r')
            length--;
        rc = s_load_line (copy, start, length, reason, sizeof reason);
    }
    if (rc != 0) {
        shoal_options_destroy (&copy);
        return shoal_why (why, why_size, "%s:%u: %s", name, line, reason);
    }
    s_adopt (self, &copy);
    return 0;
}

int
shoal_options_load_file (shoal_options_t *self, const char *path, char *why, size_t why_size)
{
    assert (self);
    if (!path)
        return shoal_why (why, why_size, "no config file given");
    int fd = open (path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return shoal_why (why, why_size, "%s: cannot open: %s", path, strerror (errno));
    //  One byte more than a file may hold, to tell a file at the bound from
    //  one over it without trusting its size, which a pipe does not have.
    char *text = malloc (SHOAL_OPTIONS_FILE_MAX + 1);
    size_t size = 0;
    ssize_t got = 1;
    while (text && size < SHOAL_OPTIONS_FILE_MAX + 1 && got != 0) {
        got = read (fd, text + size, SHOAL_OPTIONS_FILE_MAX + 1 - size);
        if (got < 0 && errno != EINTR)
            break;
        size += got > 0 ? (size_t) got : 0;
    }
    int error = errno;
    close (fd);
    int rc;
    if (!text)
        rc = shoal_why (why, why_size, "%s: out of memory", path);
    else if (got < 0)
        rc = shoal_why (why, why_size, "%s: cannot read: %s", path, strerror (error));
    else
        rc = shoal_options_load_text (self, path, text, size, why, why_size);
    free (text);
    return rc;
}

//  ---------------------------------------------------------------------
//  The environment

#define PREFIX_LENGTH (sizeof SHOAL_OPTIONS_ENV_PREFIX - 1)

static bool
s_is_reserved (const char *name, size_t length)
{
    static const char *const names[] = { SHOAL_OPTIONS_ENV_RESERVED };
    static const char *const prefixes[] = { SHOAL_OPTIONS_ENV_RESERVED_PREFIXES };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strlen (names[i]) == length && memcmp (names[i], name, length) == 0)
            return true;
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (length >= strlen (prefixes[i]) && memcmp (prefixes[i], name, strlen (prefixes[i])) == 0)
            return true;
    return false;
}

//  The key a variable would name, after SHOAL_: lower case, '_' as '-'.
//  Returns its length, 0 when it is not a word or too long to be a key.
static size_t
s_variable_key (const char *name, size_t length, char key[WORD_MAX + 1])
{
    length -= PREFIX_LENGTH;
    if (length == 0 || length > WORD_MAX)
        return 0;
    for (size_t i = 0; i < length; i++) {
        char c = name[PREFIX_LENGTH + i];
        if (c >= 'A' && c <= 'Z')
            c = (char) (c - 'A' + 'a');
        else if (c == '_')
            c = '-';
        key[i] = c;
    }
    key[length] = '\0';
    return length;
}

static void
s_write_variable (s_writer_t *writer, const s_option_t *option)
{
    s_write (writer, SHOAL_OPTIONS_ENV_PREFIX);
    for (const char *c = option->info.key; *c; c++)
        s_write (writer, "%c", *c == '-' ? '_' : (*c >= 'a' && *c <= 'z') ? *c - 'a' + 'A' : *c);
}

//  Applies one variable, name=value, to self: SHOAL_<KEY> exactly, with
//  the key's letters in upper case, sets it; a near miss is refused.
static int
s_load_variable (shoal_options_t *self, const char *name, size_t length, const char *value,
                 char *why, size_t why_size)
{
    char key[WORD_MAX + 1];
    size_t key_length = s_variable_key (name, length, key);
    const s_option_t *option = key_length ? s_find (key) : NULL;
    char exact[WORD_MAX + PREFIX_LENGTH + 1] = "";
    if (option) {
        s_writer_t writer = { exact, sizeof exact, 0 };
        s_write_variable (&writer, option);
    }
    if (option && strlen (exact) == length && memcmp (exact, name, length) == 0) {
        char reason[256];
        if (s_apply (self, option, value, reason, sizeof reason) != 0)
            return shoal_why (why, why_size, "%.*s: %s", (int) length, name, reason);
        return 0;
    }
    if (s_is_reserved (name, length))
        return 0;
    const s_option_t *likely = option ? option : key_length ? s_likely (key, key_length) : NULL;
    if (!likely)
        return 0;
    char variable[WORD_MAX + PREFIX_LENGTH + 1];
    s_writer_t writer = { variable, sizeof variable, 0 };
    s_write_variable (&writer, likely);
    return shoal_why (why, why_size, "%.*s is not an option's variable (did you mean %s?)",
                      (int) length, name, variable);
}

int
shoal_options_load_env (shoal_options_t *self, char *const *envp, char *why, size_t why_size)
{
    assert (self);
    shoal_options_t *copy = s_copy (self);
    if (!copy)
        return shoal_why (why, why_size, "out of memory");
    int rc = 0;
    for (size_t i = 0; rc == 0 && envp && envp[i]; i++) {
        const char *equals = strchr (envp[i], '=');
        if (equals && strncmp (envp[i], SHOAL_OPTIONS_ENV_PREFIX, PREFIX_LENGTH) == 0)
            rc = s_load_variable (copy, envp[i], (size_t) (equals - envp[i]), equals + 1, why,
                                  why_size);
    }
    if (rc != 0) {
        shoal_options_destroy (&copy);
        return -1;
    }
    s_adopt (self, &copy);
    return 0;
}

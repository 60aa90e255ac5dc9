/*  tests/test_options.c: the options a node takes.

    Every option is set the ways a user sets it (the API, a config file,
    the environment) and read back. Each kind of value is tried at and just
    past its bounds, and each refusal is checked for naming the option and
    saying what is wrong, since that line is all a user sees. Every way of
    failing must leave the options as they were. The last tests hold the
    table to what docs/options.md tells users.
*/

#include "node/options.h"
#include "shoal.h"
#include "tests/test.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TEXT_SIZE (SHOAL_OPTIONS_VALUE_MAX + 1)

static shoal_options_t *
s_new (void)
{
    shoal_options_t *options = shoal_options_new ();
    CHECK (options != NULL);
    return options;
}

//  Sets key to value and expects it taken.
static void
s_set (shoal_options_t *options, const char *key, const char *value)
{
    char why[256] = "";
    int rc = shoal_options_set (options, key, value, why, sizeof why);
    if (rc != 0)
        fprintf (stderr, "  %s = '%s' refused: %s\n", key, value, why);
    CHECK_EQ (rc, 0);
}

//  The value of key as text; valid until the next call.
static const char *
s_get (const shoal_options_t *options, const char *key)
{
    static char text[TEXT_SIZE];
    CHECK_EQ (shoal_options_get (options, key, text, sizeof text), 0);
    return text;
}

//  Every option's value as text, one per line: what "unchanged" compares.
static char *
s_snapshot (const shoal_options_t *options)
{
    size_t count = shoal_options_count ();
    char *all = calloc (count, TEXT_SIZE + 1);
    for (size_t i = 0; i < count; i++) {
        strcat (all, s_get (options, shoal_options_info (i)->key));
        strcat (all, "\n");
    }
    return all;
}

//  Sets key to value on fresh options and expects a refusal naming the key
//  and containing fact, with nothing changed.
static void
s_refused (const char *key, const char *value, const char *fact)
{
    shoal_options_t *options = s_new ();
    char *before = s_snapshot (options);
    char why[256] = "";
    CHECK_EQ (shoal_options_set (options, key, value, why, sizeof why), -1);
    CHECK_CONTAINS (why, key);
    CHECK_CONTAINS (why, fact);
    char *after = s_snapshot (options);
    CHECK_STR (after, before);
    free (before);
    free (after);
    shoal_options_destroy (&options);
}

//  Sets key to value on fresh options and expects it read back as expected.
static void
s_reads_back (const char *key, const char *value, const char *expected)
{
    shoal_options_t *options = s_new ();
    s_set (options, key, value);
    CHECK_STR (s_get (options, key), expected);
    shoal_options_destroy (&options);
}

//  ---------------------------------------------------------------------
//  Defaults and the table

static void
defaults_are_the_documented_ones (void)
{
    shoal_options_t *options = s_new ();
    CHECK_STR (options->name, "");
    CHECK_STR (options->data_dir, "shoal-data");
    CHECK_STR (options->bind.host, "0.0.0.0");
    CHECK_EQ (options->bind.port, 7946);
    CHECK_STR (options->advertise.host, "");
    CHECK_EQ (options->beacon_port, 7947);
    CHECK_STR (options->beacon_interface, "");
    CHECK_EQ (options->join.count, 0);
    CHECK_STR (options->key_file, "");
    CHECK (!options->require_key);
    CHECK_EQ (options->capacity, 1);
    CHECK_EQ (options->slots, 0);
    CHECK_EQ (options->labels.count, 0);
    CHECK_EQ (options->handles.count, 0);
    CHECK_EQ (options->priority, 0);
    CHECK_EQ (options->partition_mode, SHOAL_PARTITION_QUORUM);
    CHECK_EQ (options->profile, SHOAL_PROFILE_LAN);
    CHECK_EQ (options->standbys, 0);
    CHECK_EQ (options->max_warmups, 2);
    CHECK_EQ (options->acceptable_lag, 10000);
    CHECK_EQ (options->leave_timeout_ms, 30000);
    CHECK_STR (options->control, "");
    CHECK_STR (options->metrics.host, "");
    CHECK_STR (options->events, "");
    CHECK_EQ (options->log_level, SHOAL_LOG_INFO);
    CHECK_EQ (options->log_format, SHOAL_LOG_TEXT);
    CHECK_EQ (options->grace_ms, 10000);
    shoal_options_destroy (&options);
    shoal_options_destroy (&options);
    CHECK (options == NULL);
}

static void
every_default_in_the_table_parses_and_reads_back_as_written (void)
{
    shoal_options_t *options = s_new ();
    for (size_t i = 0; i < shoal_options_count (); i++) {
        const shoal_option_info_t *info = shoal_options_info (i);
        CHECK (info->key && info->type && info->default_text && info->range && info->doc);
        CHECK (strlen (info->doc) > 0 && !strchr (info->doc, '\n'));
        CHECK_STR (s_get (options, info->key), info->default_text);
        s_set (options, info->key, info->default_text);
        CHECK_STR (s_get (options, info->key), info->default_text);
    }
    CHECK (shoal_options_info (shoal_options_count ()) == NULL);
    shoal_options_destroy (&options);
}

//  A value other than the default for every option, and how get writes it.
static const struct {
    const char *key, *value, *written;
} s_samples[] = {
    { "name", "node-7.eu_west", "node-7.eu_west" },
    { "cluster", "orders.prod", "orders.prod" },
    { "data-dir", "/var/lib/shoal data", "/var/lib/shoal data" },
    { "bind", "[::1]:07000", "[::1]:7000" },
    { "advertise", "10.0.0.7:7946", "10.0.0.7:7946" },
    { "beacon-port", "0", "0" },
    { "beacon-interface", "eth0:1", "eth0:1" },
    { "join", "seed-1:7946, 10.0.0.2:7946,[fe80::1]:1", "seed-1:7946,10.0.0.2:7946,[fe80::1]:1" },
    { "key-file", "/etc/shoal/key", "/etc/shoal/key" },
    { "require-key", "yes", "true" },
    { "capacity", "1000000", "1000000" },
    { "slots", "8", "8" },
    { "labels", "zone=eu-1,rack=r.7", "zone=eu-1,rack=r.7" },
    { "handles", "ingest,report_v2", "ingest,report_v2" },
    { "priority", "4294967295", "4294967295" },
    { "partition-mode", "available", "available" },
    { "expect", "3", "3" },
    { "voters", "5", "5" },
    { "profile", "loopback", "loopback" },
    { "standbys", "16", "16" },
    { "max-warmups", "1000", "1000" },
    { "max-starting", "64", "64" },
    { "acceptable-lag", "18446744073709551615", "18446744073709551615" },
    { "leave-timeout", "120s", "2m" },
    { "control", "tcp://127.0.0.1:5555", "tcp://127.0.0.1:5555" },
    { "metrics", "metrics.local:9100", "metrics.local:9100" },
    { "events", "/var/log/shoal/events.jsonl", "/var/log/shoal/events.jsonl" },
    { "log-level", "debug", "debug" },
    { "log-format", "json", "json" },
    { "grace", "1500ms", "1500ms" },
    { "task-log-size", "65536", "65536" },
    { "task-log-keep", "0", "0" },
    { "child-nice", "19", "19" },
};

#define SAMPLE_COUNT (sizeof s_samples / sizeof s_samples[0])

static void
get_writes_what_set_takes_for_every_option (void)
{
    CHECK_EQ (SAMPLE_COUNT, shoal_options_count ());
    for (size_t i = 0; i < shoal_options_count (); i++) {
        const char *key = shoal_options_info (i)->key;
        size_t sample = 0;
        while (sample < SAMPLE_COUNT && strcmp (s_samples[sample].key, key) != 0)
            sample++;
        CHECK (sample < SAMPLE_COUNT);
        if (sample == SAMPLE_COUNT)
            continue;
        shoal_options_t *options = s_new ();
        s_set (options, key, s_samples[sample].value);
        const char *written = s_get (options, key);
        CHECK_STR (written, s_samples[sample].written);
        CHECK (strcmp (written, shoal_options_info (i)->default_text) != 0);
        shoal_options_t *again = s_new ();
        s_set (again, key, s_samples[sample].written);
        CHECK_STR (s_get (again, key), s_samples[sample].written);
        shoal_options_destroy (&again);
        shoal_options_destroy (&options);
    }
}

static void
the_typed_fields_hold_what_was_set (void)
{
    shoal_options_t *options = s_new ();
    for (size_t i = 0; i < SAMPLE_COUNT; i++)
        s_set (options, s_samples[i].key, s_samples[i].value);
    CHECK_STR (options->bind.host, "::1");
    CHECK_EQ (options->bind.port, 7000);
    CHECK_EQ (options->beacon_port, 0);
    CHECK_STR (options->beacon_interface, "eth0:1");
    CHECK_EQ (options->join.count, 3);
    const shoal_option_hostport_t *join = options->join.items;
    CHECK_STR (join[0].host, "seed-1");
    CHECK_STR (join[2].host, "fe80::1");
    CHECK_EQ (join[2].port, 1);
    CHECK (options->require_key);
    const shoal_option_label_t *labels = options->labels.items;
    CHECK_EQ (options->labels.count, 2);
    CHECK_STR (labels[1].key, "rack");
    CHECK_STR (labels[1].value, "r.7");
    const shoal_option_job_t *handles = options->handles.items;
    CHECK_EQ (options->handles.count, 2);
    CHECK_STR (handles[1].name, "report_v2");
    CHECK_EQ (options->priority, UINT32_MAX);
    CHECK_EQ (options->partition_mode, SHOAL_PARTITION_AVAILABLE);
    CHECK_EQ (options->profile, SHOAL_PROFILE_LOOPBACK);
    CHECK (options->acceptable_lag == UINT64_MAX);
    CHECK_EQ (options->leave_timeout_ms, 120000);
    CHECK_EQ (options->log_level, SHOAL_LOG_DEBUG);
    CHECK_EQ (options->log_format, SHOAL_LOG_JSON);
    CHECK_EQ (options->grace_ms, 1500);
    CHECK_EQ (options->task_log_size, 65536);
    CHECK_EQ (options->task_log_keep, 0);
    s_set (options, "log-level", "error");
    CHECK_EQ (options->log_level, SHOAL_LOG_ERROR);
    s_set (options, "log-level", "warn");
    CHECK_EQ (options->log_level, SHOAL_LOG_WARN);
    shoal_options_destroy (&options);
}

//  A range "LOW..HIGH" in the table is what set takes: both ends, and for
//  numbers, nothing past them.
static void
the_table_s_ranges_are_the_bounds_set_keeps (void)
{
    int ranges = 0;
    for (size_t i = 0; i < shoal_options_count (); i++) {
        const shoal_option_info_t *info = shoal_options_info (i);
        const char *dots = strstr (info->range, "..");
        if (!dots)
            continue;
        ranges++;
        char low[32], high[32];
        snprintf (low, sizeof low, "%.*s", (int) (dots - info->range), info->range);
        snprintf (high, sizeof high, "%s", dots + 2);
        s_reads_back (info->key, low, low);
        s_reads_back (info->key, high, high);
        if (strcmp (info->type, "duration") == 0)
            continue;
        unsigned long long least = strtoull (low, NULL, 10);
        unsigned long long most = strtoull (high, NULL, 10);
        char past[32];
        if (least > 0) {
            snprintf (past, sizeof past, "%llu", least - 1);
            s_refused (info->key, past, "below the minimum");
        }
        snprintf (past, sizeof past, "%llu", most + 1);
        s_refused (info->key, past, "over the maximum");
    }
    CHECK_EQ (ranges, 14);
}

//  ---------------------------------------------------------------------
//  Each kind of value

static void
numbers_are_refused_past_their_bounds_with_the_bound (void)
{
    s_refused ("capacity", "0", "0 is below the minimum 1");
    s_reads_back ("capacity", "1", "1");
    s_refused ("capacity", "1000001", "1000001 is over the maximum 1000000");
    s_refused ("capacity", "99999999999999999999999", "over the maximum 1000000");
    s_refused ("max-warmups", "0", "below the minimum 1");
    s_refused ("max-starting", "100001", "over the maximum 100000");
    s_refused ("standbys", "17", "over the maximum 16");
    s_refused ("beacon-port", "65536", "over the maximum 65535");
    s_refused ("priority", "4294967296", "over the maximum 4294967295");
    s_refused ("acceptable-lag", "18446744073709551616", "over the maximum 18446744073709551615");
    s_reads_back ("slots", "007", "7");
    const char *not_numbers[] = { "", "-1", "+1", " 1", "1 ", "1e3", "0x10", "four", "1,000" };
    for (size_t i = 0; i < sizeof not_numbers / sizeof not_numbers[0]; i++)
        s_refused ("slots", not_numbers[i], "is not a whole number");
}

static void
durations_take_a_unit_and_at_most_a_day (void)
{
    s_reads_back ("grace", "250ms", "250ms");
    s_reads_back ("grace", "30s", "30s");
    s_reads_back ("grace", "2m", "2m");
    s_reads_back ("grace", "90s", "90s");
    s_reads_back ("grace", "3600s", "1h");
    s_reads_back ("grace", "0ms", "0s");
    s_reads_back ("leave-timeout", "24h", "24h");
    s_reads_back ("leave-timeout", "86400000ms", "24h");
    s_refused ("leave-timeout", "86400001ms", "86400001ms is over the maximum 24h");
    s_refused ("leave-timeout", "25h", "over the maximum 24h");
    s_refused ("leave-timeout", "99999999999999999999h", "over the maximum 24h");
    s_refused ("grace", "30", "30 needs a unit: ms, s, m or h");
    const char *not_durations[] = { "",    "s",     "1.5s", "30sec", "30 s", "-1s",
                                    "30S", "1m30s", "1d",   " 1s",   "ms" };
    for (size_t i = 0; i < sizeof not_durations / sizeof not_durations[0]; i++)
        s_refused ("grace", not_durations[i], "is not a whole number of ms, s, m or h");
}

static void
bools_take_three_pairs_of_words_and_digits (void)
{
    const char *truths[] = { "true", "yes", "on", "1" };
    const char *falsehoods[] = { "false", "no", "off", "0" };
    for (size_t i = 0; i < 4; i++) {
        s_reads_back ("require-key", truths[i], "true");
        s_reads_back ("require-key", falsehoods[i], "false");
    }
    s_refused ("require-key", "TRUE", "is not true/false, yes/no, on/off or 1/0");
    s_refused ("require-key", "", "is not true/false");
    s_refused ("require-key", "y", "is not true/false");
}

static void
choices_take_their_words_only (void)
{
    s_refused ("partition-mode", "Quorum", "'Quorum' is not one of quorum|available");
    s_refused ("profile", "WAN", "is not one of lan|loopback|wan");
    shoal_options_t *options = s_new ();
    s_set (options, "profile", "wan");
    CHECK_EQ (options->profile, SHOAL_PROFILE_WAN);
    shoal_options_destroy (&options);
    s_refused ("log-level", "", "is not one of error|warn|info|debug");
    s_refused ("log-format", "text|json", "is not one of text|json");
    s_refused ("log-level", "inf", "is not one of");
}

static void
names_are_short_and_plain (void)
{
    char longest[SHOAL_OPTIONS_NAME_MAX + 2];
    memset (longest, 'n', sizeof longest);
    longest[SHOAL_OPTIONS_NAME_MAX] = '\0';
    s_reads_back ("name", longest, longest);
    s_reads_back ("name", "", "");
    longest[SHOAL_OPTIONS_NAME_MAX] = 'n';
    longest[SHOAL_OPTIONS_NAME_MAX + 1] = '\0';
    s_refused ("name", longest, "is longer than 63 characters");
    s_refused ("name", "a b", "has a character other than A-Z a-z 0-9 . _ -");
    s_refused ("name", "node/1", "has a character other than");
    s_refused ("name", "n\xc3\xa9", "has a character other than");
}

//  An interface's name as the kernel takes one; whether it exists is for
//  the beacons to find out.
static void
interfaces_are_names_the_kernel_would_take (void)
{
    s_reads_back ("beacon-interface", "*", "*");
    s_reads_back ("beacon-interface", "lo", "lo");
    s_reads_back ("beacon-interface", "nosuch0", "nosuch0");
    s_reads_back ("beacon-interface", "eth0.100", "eth0.100");
    s_reads_back ("beacon-interface", "", "");
    char longest[SHOAL_OPTIONS_IFNAME_MAX + 2];
    memset (longest, 'i', sizeof longest);
    longest[SHOAL_OPTIONS_IFNAME_MAX] = '\0';
    s_reads_back ("beacon-interface", longest, longest);
    longest[SHOAL_OPTIONS_IFNAME_MAX] = 'i';
    longest[SHOAL_OPTIONS_IFNAME_MAX + 1] = '\0';
    s_refused ("beacon-interface", longest, "is longer than 15 bytes");
    s_refused ("beacon-interface", "eth/0", "holds a '/' or a space");
    s_refused ("beacon-interface", "eth 0", "holds a '/' or a space");
    s_refused ("beacon-interface", " eth0", "holds a '/' or a space");
    s_refused ("beacon-interface", "eth\t0", "control character");
    s_refused ("beacon-interface", "eth\n0", "control character");
    s_refused ("beacon-interface", ".", "is not an interface's name");
    s_refused ("beacon-interface", "..", "is not an interface's name");
}

static void
host_ports_are_checked_for_syntax_only (void)
{
    s_reads_back ("bind", "127.0.0.1:1", "127.0.0.1:1");
    s_reads_back ("bind", "[2001:db8::7]:65535", "[2001:db8::7]:65535");
    s_reads_back ("bind", "host.example.com:80", "host.example.com:80");
    s_reads_back ("bind", "db_1:80", "db_1:80");
    s_reads_back ("bind", "Node-1.LAN:80", "Node-1.LAN:80");
    s_refused ("bind", "0.0.0.0:70000", "bind: port 70000 is out of range (0 to 65535)");
    s_refused ("advertise", "host:0", "port 0 is out of range");
    s_refused ("bind", "host:99999999999999999999999", "is out of range");
    s_refused ("bind", "host:", "'' is not a port");
    s_refused ("bind", "host:http", "'http' is not a port");
    s_refused ("bind", "host", "has no port");
    s_refused ("bind", "[::1]", "has no port");
    s_refused ("bind", ":7946", "has no host");
    s_refused ("bind", "[]:7946", "has no host");
    s_refused ("bind", "", "empty");
    s_refused ("bind", "::1:7946", "an IPv6 address goes in brackets");
    s_refused ("bind", "[::1:7946", "opens a bracket it does not close");
    s_refused ("bind", "[::1]x:7946", "has text after the bracket");
    const char *not_hosts[] = { "[zz::]:1", "[127.0.0.1]:1", "1.2.3:1", "256.0.0.1:1",
                                "a..b:1",   "-a.b:1",        "a-.b:1",  "a.b.:1",
                                "a b:1",    "a/b:1",         "*:1",     "\xc3\xa9.fr:1" };
    for (size_t i = 0; i < sizeof not_hosts / sizeof not_hosts[0]; i++)
        s_refused ("bind", not_hosts[i], "does not name a host");

    char host[SHOAL_OPTIONS_HOST_MAX + 8];
    for (size_t i = 0; i < SHOAL_OPTIONS_HOST_MAX; i++)
        host[i] = i % 60 == 59 ? '.' : 'h';
    strcpy (host + SHOAL_OPTIONS_HOST_MAX, ":1");
    s_reads_back ("metrics", host, host);
    memmove (host + 1, host, strlen (host) + 1);
    s_refused ("metrics", host, "does not name a host");
    memset (host, 'h', 63);
    strcpy (host + 63, ".x:1");
    s_reads_back ("metrics", host, host);
    memset (host, 'h', 64);
    strcpy (host + 64, ".x:1");
    s_refused ("metrics", host, "does not name a host");

    //  The advertised address travels in every alive record, which holds
    //  64 bytes of it.
    s_reads_back ("advertise", "", "");
    memset (host, 'a', 58);
    strcpy (host + 58, ":65535");
    s_reads_back ("advertise", host, host);
    memset (host, 'a', 59);
    strcpy (host + 59, ":65535");
    s_refused ("advertise", host, "is longer than 64 bytes");
}

static void
endpoints_are_ipc_or_tcp (void)
{
    s_reads_back ("control", "", "");
    s_reads_back ("control", "ipc:///run/shoal/control", "ipc:///run/shoal/control");
    s_reads_back ("control", "ipc://relative", "ipc://relative");
    s_reads_back ("control", "tcp://[::1]:5555", "tcp://[::1]:5555");
    s_refused ("control", "ipc://", "is not ipc://PATH or tcp://HOST:PORT");
    s_refused ("control", "http://host:80", "is not ipc://PATH or tcp://HOST:PORT");
    s_refused ("control", "/run/shoal/control", "is not ipc://PATH");
    s_refused ("control", "tcp://host", "has no port");
    s_refused ("control", "tcp://*:5555", "does not name a host");
}

static void
paths_take_any_text (void)
{
    s_reads_back ("events", " leading and trailing ", " leading and trailing ");
    s_reads_back ("key-file", "/a#b/c=d,e \xe2\x9c\x93", "/a#b/c=d,e \xe2\x9c\x93");
    s_reads_back ("key-file", "", "");
    s_refused ("data-dir", "", "data-dir: empty");
}

static void
values_that_are_not_text_are_refused (void)
{
    s_refused ("events", "a\nb", "events: the value holds a control character");
    s_refused ("events", "a\tb", "holds a control character");
    s_refused ("events", "a\x7f", "holds a control character");
    s_refused ("events", "\xc3", "events: the value is not UTF-8 text");
    s_refused ("events", "\xc0\xaf", "is not UTF-8");
    s_refused ("events", "\xed\xa0\x80", "is not UTF-8");
    s_refused ("events", "\xf4\x90\x80\x80", "is not UTF-8");
    s_refused ("events", "\xff", "is not UTF-8");
    char *value = malloc (SHOAL_OPTIONS_VALUE_MAX + 2);
    memset (value, 'p', SHOAL_OPTIONS_VALUE_MAX);
    value[SHOAL_OPTIONS_VALUE_MAX] = '\0';
    s_reads_back ("events", value, value);
    value[SHOAL_OPTIONS_VALUE_MAX] = 'p';
    value[SHOAL_OPTIONS_VALUE_MAX + 1] = '\0';
    s_refused ("events", value, "events: the value is longer than 4096 bytes");
    free (value);
    s_refused ("capacity", NULL, "capacity: no value given");
}

//  ---------------------------------------------------------------------
//  Lists

static void
list_values_add_items_and_commas_separate_them (void)
{
    shoal_options_t *options = s_new ();
    s_set (options, "join", "a:1");
    s_set (options, "join", " b:2 ,  c:3");
    CHECK_STR (s_get (options, "join"), "a:1,b:2,c:3");
    s_set (options, "join", "a:1");
    CHECK_STR (s_get (options, "join"), "a:1,b:2,c:3,a:1");
    char why[256] = "";
    CHECK_EQ (shoal_options_set (options, "join", "d:4,,e:5", why, sizeof why), -1);
    CHECK_CONTAINS (why, "join: an empty item");
    CHECK_EQ (shoal_options_set (options, "join", "d:4,", why, sizeof why), -1);
    CHECK_EQ (shoal_options_set (options, "join", "d:4,e", why, sizeof why), -1);
    CHECK_CONTAINS (why, "join: 'e' has no port");
    CHECK_STR (s_get (options, "join"), "a:1,b:2,c:3,a:1");
    s_set (options, "join", "");
    CHECK_STR (s_get (options, "join"), "");
    CHECK_EQ (options->join.count, 0);
    s_set (options, "join", "z:9");
    CHECK_STR (s_get (options, "join"), "z:9");
    shoal_options_destroy (&options);
}

//  A seed with no port whose name starts with an underscore is an SRV
//  record's name (_service._proto.domain): kept with port 0, written back
//  as given. Anything else with no port is still refused.
static void
a_join_item_may_name_an_srv_record (void)
{
    shoal_options_t *options = s_new ();
    s_set (options, "join", "_shoal._udp.example.com, a:1");
    CHECK_STR (s_get (options, "join"), "_shoal._udp.example.com,a:1");
    const shoal_option_hostport_t *join = options->join.items;
    CHECK_STR (join[0].host, "_shoal._udp.example.com");
    CHECK_EQ (join[0].port, 0);
    shoal_options_destroy (&options);
    s_refused ("join", "_shoal.example.com", "nor an SRV name (_service._proto.domain");
    s_refused ("join", "_shoal._udp", "nor an SRV name");
    s_refused ("join", "_shoal._udp.exa mple.com", "nor an SRV name");
    s_refused ("join", "shoal._udp.example.com", "has no port");
}

static void
a_label_key_given_twice_is_refused (void)
{
    s_refused ("labels", "zone=eu,zone=us", "labels: key zone given twice");
    shoal_options_t *options = s_new ();
    s_set (options, "labels", "zone=eu");
    char why[256] = "";
    CHECK_EQ (shoal_options_set (options, "labels", "rack=1,zone=us", why, sizeof why), -1);
    CHECK_CONTAINS (why, "key zone given twice");
    CHECK_STR (s_get (options, "labels"), "zone=eu");
    s_set (options, "labels", "zone.us=1");
    CHECK_STR (s_get (options, "labels"), "zone=eu,zone.us=1");
    shoal_options_destroy (&options);
    s_refused ("handles", "ingest,ingest", "handles: job ingest given twice");
}

static void
labels_and_job_names_are_plain_names (void)
{
    s_refused ("labels", "zone", "labels: 'zone' is not key=value");
    s_refused ("labels", "=eu", "labels: empty");
    s_refused ("labels", "zone=", "labels: empty");
    s_refused ("labels", "zone=e u", "has a character other than");
    s_refused ("labels", "zone=a=b", "has a character other than");
    char label[2 * SHOAL_OPTIONS_NAME_MAX + 4];
    memset (label, 'k', SHOAL_OPTIONS_NAME_MAX);
    label[SHOAL_OPTIONS_NAME_MAX] = '=';
    memset (label + SHOAL_OPTIONS_NAME_MAX + 1, 'v', SHOAL_OPTIONS_NAME_MAX);
    label[2 * SHOAL_OPTIONS_NAME_MAX + 1] = '\0';
    s_reads_back ("labels", label, label);
    strcat (label, "v");
    s_refused ("labels", label, "is longer than 63 characters");

    char job[SHOAL_OPTIONS_JOB_MAX + 2];
    memset (job, 'j', sizeof job);
    job[SHOAL_OPTIONS_JOB_MAX] = '\0';
    s_reads_back ("handles", job, job);
    job[SHOAL_OPTIONS_JOB_MAX] = 'j';
    job[SHOAL_OPTIONS_JOB_MAX + 1] = '\0';
    s_refused ("handles", job, "is longer than 64 characters");
    s_refused ("handles", "a/b", "has a character other than");
}

static void
lists_are_bounded_in_items_and_in_bytes (void)
{
    shoal_options_t *options = s_new ();
    char item[64];
    for (int i = 0; i < SHOAL_OPTIONS_LABELS_MAX; i++) {
        snprintf (item, sizeof item, "k%d=v", i);
        s_set (options, "labels", item);
    }
    char why[256] = "";
    CHECK_EQ (shoal_options_set (options, "labels", "one=more", why, sizeof why), -1);
    CHECK_CONTAINS (why, "labels: more than 16 items");
    CHECK_EQ (options->labels.count, SHOAL_OPTIONS_LABELS_MAX);
    s_set (options, "handles", "a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p");
    CHECK_EQ (shoal_options_set (options, "handles", "q", why, sizeof why), -1);
    CHECK_CONTAINS (why, "handles: more than 16 items");

    for (int i = 0; i < SHOAL_OPTIONS_LIST_MAX; i++) {
        snprintf (item, sizeof item, "n%d:1", i);
        s_set (options, "join", item);
    }
    CHECK_EQ (shoal_options_set (options, "join", "x:1", why, sizeof why), -1);
    CHECK_CONTAINS (why, "join: more than 256 items");
    CHECK_EQ (options->join.count, SHOAL_OPTIONS_LIST_MAX);

    //  Sixteen of the longest host:ports, written out, are over 4096
    //  bytes, so they could not be given back in one value.
    s_set (options, "join", "");
    char host[SHOAL_OPTIONS_HOST_MAX + 8];
    for (size_t i = 0; i < SHOAL_OPTIONS_HOST_MAX; i++)
        host[i] = i % 60 == 59 ? '.' : 'h';
    strcpy (host + SHOAL_OPTIONS_HOST_MAX, ":65535");
    for (int i = 0; i < 15; i++)
        s_set (options, "join", host);
    CHECK_EQ (shoal_options_set (options, "join", host, why, sizeof why), -1);
    CHECK_CONTAINS (why, "join: the list, written out, is longer than 4096 bytes");
    CHECK_EQ (options->join.count, 15);
    shoal_options_destroy (&options);
}

//  ---------------------------------------------------------------------
//  Keys

static void
an_unknown_key_is_refused_with_the_likely_one (void)
{
    shoal_options_t *options = s_new ();
    char why[256] = "";
    CHECK_EQ (shoal_options_set (options, "capcity", "4", why, sizeof why), -1);
    CHECK_STR (why, "no option named 'capcity' (did you mean 'capacity'?)");
    CHECK_EQ (shoal_options_set (options, "data_dir", "x", why, sizeof why), -1);
    CHECK_CONTAINS (why, "did you mean 'data-dir'?");
    CHECK_EQ (shoal_options_set (options, "jion", "x:1", why, sizeof why), -1);
    CHECK_CONTAINS (why, "did you mean 'join'?");
    CHECK_EQ (shoal_options_set (options, "home", "x", why, sizeof why), -1);
    CHECK_STR (why, "no option named 'home'");
    CHECK_EQ (shoal_options_set (options, "Capacity", "4", why, sizeof why), -1);
    CHECK_CONTAINS (why, "did you mean 'capacity'?");
    CHECK_EQ (shoal_options_set (options, "a\nb", "4", why, sizeof why), -1);
    CHECK_CONTAINS (why, "no option by that name");
    CHECK_EQ (shoal_options_set (options, "", "4", why, sizeof why), -1);
    CHECK_CONTAINS (why, "no option by that name");
    CHECK_EQ (shoal_options_set (options, NULL, "4", why, sizeof why), -1);
    CHECK_EQ (shoal_options_set (options, "capacity", "4", NULL, 0), 0);
    CHECK_EQ (shoal_options_set (options, "capacity", "0", NULL, 0), -1);
    char text[16] = "untouched";
    CHECK_EQ (shoal_options_get (options, "capcity", text, sizeof text), -1);
    CHECK_STR (text, "");
    shoal_options_destroy (&options);
}

static void
short_buffers_still_hold_strings (void)
{
    shoal_options_t *options = s_new ();
    char text[8] = "xxxxxxx";
    CHECK_EQ (shoal_options_get (options, "data-dir", text, sizeof text), -1);
    CHECK_STR (text, "");
    char exact[sizeof "shoal-data"];
    CHECK_EQ (shoal_options_get (options, "data-dir", exact, sizeof exact), 0);
    CHECK_STR (exact, "shoal-data");
    CHECK_EQ (shoal_options_get (options, "data-dir", NULL, 0), -1);
    char why[6];
    memset (why, 'x', sizeof why);
    CHECK_EQ (shoal_options_set (options, "capacity", "0", why, sizeof why), -1);
    CHECK_STR (why, "capac");
    shoal_options_destroy (&options);
}

//  ---------------------------------------------------------------------
//  Config files

static int
s_load (shoal_options_t *options, const char *text, char *why, size_t why_size)
{
    return shoal_options_load_text (options, "shoal.conf", text, strlen (text), why, why_size);
}

static void
a_config_file_sets_every_key_it_names (void)
{
    const char *text = "# A node in the EU zone.\n"
                       "\n"
                       "   # indented comment\n"
                       "name = eu-1\n"
                       "capacity=4\n"
                       "\tslots\t=\t8\t\n"
                       "join = seed-1:7946\n"
                       "join = seed-2:7946, seed-3:7946\n"
                       "labels = zone=eu\n"
                       "leave-timeout = 45s\n"
                       "key-file = /etc/shoal/key#1\n"
                       "require-key = on";
    shoal_options_t *options = s_new ();
    char why[256] = "";
    CHECK_EQ (s_load (options, text, why, sizeof why), 0);
    CHECK_STR (why, "");
    CHECK_STR (options->name, "eu-1");
    CHECK_EQ (options->capacity, 4);
    CHECK_EQ (options->slots, 8);
    CHECK_STR (s_get (options, "join"), "seed-1:7946,seed-2:7946,seed-3:7946");
    CHECK_STR (s_get (options, "labels"), "zone=eu");
    CHECK_EQ (options->leave_timeout_ms, 45000);
    CHECK_STR (options->key_file, "/etc/shoal/key#1");
    CHECK (options->require_key);
    CHECK_STR (s_get (options, "data-dir"), "shoal-data");
    shoal_options_destroy (&options);
}

static void
config_quotes_keep_spaces_and_take_two_escapes (void)
{
    const char *text = "events = \"  spaced # not a comment  \"\n"
                       "key-file = \"say \\\"hi\\\" \\\\ back\"   \n"
                       "data-dir = \"\"\"\n"
                       "name = \"\"\n";
    shoal_options_t *options = s_new ();
    char why[256] = "";
    s_set (options, "name", "before");
    CHECK_EQ (s_load (options, text, why, sizeof why), -1);
    CHECK_CONTAINS (why, "shoal.conf:3: text after a quoted value");
    CHECK_STR (options->name, "before");
    text = "events = \"  spaced # not a comment  \"\n"
           "key-file = \"say \\\"hi\\\" \\\\ back\"   \n"
           "name = \"\"\n";
    CHECK_EQ (s_load (options, text, why, sizeof why), 0);
    CHECK_STR (options->events, "  spaced # not a comment  ");
    CHECK_STR (options->key_file, "say \"hi\" \\ back");
    CHECK_STR (options->name, "");
    CHECK_EQ (s_load (options, "events = \"a\\nb\"", why, sizeof why), -1);
    CHECK_CONTAINS (why, "shoal.conf:1: in quotes, \\ only escapes \" and \\");
    CHECK_EQ (s_load (options, "events = \"a\\", why, sizeof why), -1);
    CHECK_CONTAINS (why, "only escapes");
    CHECK_EQ (s_load (options, "events = \"open", why, sizeof why), -1);
    CHECK_CONTAINS (why, "shoal.conf:1: a quoted value without its closing quote");
    CHECK_EQ (s_load (options, "events = \"a\" # note", why, sizeof why), -1);
    CHECK_CONTAINS (why, "text after a quoted value");
    CHECK_EQ (s_load (options, "events = a \"b\"", why, sizeof why), 0);
    CHECK_STR (options->events, "a \"b\"");
    shoal_options_destroy (&options);
}

static void
config_crlf_lines_and_a_byte_order_mark_are_taken (void)
{
    const char *text = "\xef\xbb\xbf# written on Windows\r\n"
                       "capacity = 3\r\n"
                       "\r\n"
                       "events = \"x \"\r\n"
                       "join = a:1\r\n"
                       "join = b:2\r";
    shoal_options_t *options = s_new ();
    char why[256] = "";
    CHECK_EQ (s_load (options, text, why, sizeof why), 0);
    CHECK_EQ (options->capacity, 3);
    CHECK_STR (options->events, "x ");
    CHECK_STR (s_get (options, "join"), "a:1,b:2");
    CHECK_EQ (s_load (options, "capacity = 3\r\r\n", why, sizeof why), -1);
    CHECK_CONTAINS (why, "shoal.conf:1: a control character");
    shoal_options_destroy (&options);
}

//  An error on line 12, after eleven lines that each set something, names
//  line 12 and keeps every one of those eleven from taking effect.
static void
an_error_on_a_line_names_it_and_changes_nothing (void)
{
    const char *text = "name = eu-1\n"
                       "data-dir = /var/lib/shoal\n"
                       "bind = 10.0.0.1:7000\n"
                       "# comment\n"
                       "join = a:1\n"
                       "join = b:2\n"
                       "labels = zone=eu\n"
                       "handles = ingest\n"
                       "log-level = debug\n"
                       "\n"
                       "grace = 1s\n"
                       "capacity = 0\n"
                       "slots = 4\n";
    shoal_options_t *options = s_new ();
    s_set (options, "join", "kept:1");
    s_set (options, "labels", "rack=r1");
    char *before = s_snapshot (options);
    char why[256] = "";
    CHECK_EQ (s_load (options, text, why, sizeof why), -1);
    CHECK_STR (why, "shoal.conf:12: capacity: 0 is below the minimum 1");
    char *after = s_snapshot (options);
    CHECK_STR (after, before);
    free (after);

    //  The source that failed did not count as one: the next value still
    //  adds to the lists given before.
    s_set (options, "join", "also:2");
    CHECK_STR (s_get (options, "join"), "kept:1,also:2");
    free (before);
    shoal_options_destroy (&options);
}

static void
config_lines_that_are_not_settings_are_refused (void)
{
    const struct {
        const char *text, *reason;
    } cases[] = {
        { "capacity 4", "shoal.conf:1: not a line of key = value" },
        { "\n\n= 4", "shoal.conf:3: not a line of key = value" },
        { "capacity", "not a line of key = value" },
        { "capacity: 4", "not a line of key = value" },
        { "data dir = x", "not a line of key = value" },
        { "capcity = 4", "shoal.conf:1: no option named 'capcity' (did you mean 'capacity'?)" },
        { "capacity = 4 # four", "capacity: '4 # four' is not a whole number" },
        { "labels = zone=eu\nlabels = zone=us", "shoal.conf:2: labels: key zone given twice" },
        { "capacity = \xff", "shoal.conf:1: not UTF-8 text" },
        { "capacity = 4\x01", "shoal.conf:1: a control character" },
        { "bind = \"\"", "shoal.conf:1: bind: empty" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        shoal_options_t *options = s_new ();
        char why[256] = "";
        CHECK_EQ (s_load (options, cases[i].text, why, sizeof why), -1);
        CHECK_CONTAINS (why, cases[i].reason);
        shoal_options_destroy (&options);
    }
}

static void
config_files_and_lines_are_bounded_and_text (void)
{
    shoal_options_t *options = s_new ();
    char why[256] = "";
    //  A line of exactly the bound is read; one byte more is refused.
    char *text = malloc (SHOAL_OPTIONS_FILE_MAX + 2);
    memset (text, ' ', SHOAL_OPTIONS_LINE_MAX + 1);
    text[0] = '#';
    text[SHOAL_OPTIONS_LINE_MAX] = '\n';
    CHECK_EQ (shoal_options_load_text (options, "shoal.conf", text, SHOAL_OPTIONS_LINE_MAX + 1, why,
                                       sizeof why),
              0);
    text[SHOAL_OPTIONS_LINE_MAX] = ' ';
    CHECK_EQ (shoal_options_load_text (options, "shoal.conf", text, SHOAL_OPTIONS_LINE_MAX + 1, why,
                                       sizeof why),
              -1);
    CHECK_STR (why, "shoal.conf:1: a line longer than 8192 bytes");

    //  A file of exactly the bound is read; one byte more is refused.
    memset (text, '\n', SHOAL_OPTIONS_FILE_MAX + 1);
    memcpy (text + SHOAL_OPTIONS_FILE_MAX - 13, "capacity = 9\n", 13);
    CHECK_EQ (shoal_options_load_text (options, "shoal.conf", text, SHOAL_OPTIONS_FILE_MAX, why,
                                       sizeof why),
              0);
    CHECK_EQ (options->capacity, 9);
    CHECK_EQ (shoal_options_load_text (options, "shoal.conf", text, SHOAL_OPTIONS_FILE_MAX + 1, why,
                                       sizeof why),
              -1);
    CHECK_STR (why, "shoal.conf: larger than 1048576 bytes");
    free (text);

    CHECK_EQ (shoal_options_load_text (options, "shoal.conf", "slots = 1\nslots = 2\0\n", 21, why,
                                       sizeof why),
              -1);
    CHECK_STR (why, "shoal.conf:2: a NUL byte");
    CHECK_EQ (options->slots, 0);
    CHECK_EQ (shoal_options_load_text (options, "shoal.conf", "", 0, why, sizeof why), 0);
    CHECK_EQ (shoal_options_load_text (options, NULL, "x", 1, why, sizeof why), -1);
    CHECK_CONTAINS (why, "config:1: ");
    shoal_options_destroy (&options);
}

static void
load_file_reads_the_file_and_names_it_by_path (void)
{
    char path[] = "/tmp/shoal-test-options-XXXXXX";
    int fd = mkstemp (path);
    CHECK (fd >= 0);
    const char text[] = "capacity = 5\nhandles = a, b\nbeacon-port = 99999\n";
    CHECK_EQ (write (fd, text, sizeof text - 1), sizeof text - 1);
    close (fd);
    shoal_options_t *options = s_new ();
    char why[512] = "";
    CHECK_EQ (shoal_options_load_file (options, path, why, sizeof why), -1);
    char expected[512];
    snprintf (expected, sizeof expected, "%s:3: beacon-port: 99999 is over the maximum 65535",
              path);
    CHECK_STR (why, expected);
    CHECK_EQ (options->capacity, 1);
    FILE *file = fopen (path, "w");
    fputs ("capacity = 5\nhandles = a, b\n", file);
    fclose (file);
    CHECK_EQ (shoal_options_load_file (options, path, why, sizeof why), 0);
    CHECK_EQ (options->capacity, 5);
    CHECK_STR (s_get (options, "handles"), "a,b");
    unlink (path);
    CHECK_EQ (shoal_options_load_file (options, path, why, sizeof why), -1);
    CHECK_CONTAINS (why, path);
    CHECK_CONTAINS (why, "cannot open");
    CHECK_EQ (shoal_options_load_file (options, "/", why, sizeof why), -1);
    CHECK_CONTAINS (why, "/: cannot read");
    CHECK_EQ (options->capacity, 5);
    shoal_options_destroy (&options);
}

//  ---------------------------------------------------------------------
//  The environment and sources

static void
the_environment_sets_shoal_variables (void)
{
    char *envp[] = { "PATH=/usr/bin",
                     "SHOAL_CAPACITY=4",
                     "SHOAL_DATA_DIR=/srv/shoal",
                     "SHOAL_JOIN=a:1,b:2",
                     "SHOAL_LEAVE_TIMEOUT=5s",
                     "SHOAL_ADVERTISE=",
                     "SHOAL_LABELS=zone=eu,rack=r1",
                     "SHOALFISH=1",
                     NULL };
    shoal_options_t *options = s_new ();
    char why[256] = "";
    CHECK_EQ (shoal_options_load_env (options, envp, why, sizeof why), 0);
    CHECK_STR (why, "");
    CHECK_EQ (options->capacity, 4);
    CHECK_STR (options->data_dir, "/srv/shoal");
    CHECK_STR (s_get (options, "join"), "a:1,b:2");
    CHECK_EQ (options->leave_timeout_ms, 5000);
    CHECK_STR (s_get (options, "labels"), "zone=eu,rack=r1");
    CHECK_EQ (shoal_options_load_env (options, NULL, why, sizeof why), 0);
    shoal_options_destroy (&options);
}

static void
every_option_has_its_variable (void)
{
    shoal_options_t *options = s_new ();
    for (size_t i = 0; i < SAMPLE_COUNT; i++) {
        char variable[256];
        int length = snprintf (variable, sizeof variable, "SHOAL_");
        for (const char *c = s_samples[i].key; *c; c++)
            variable[length++] = *c == '-' ? '_' : (char) (*c - 'a' + 'A');
        snprintf (variable + length, sizeof variable - (size_t) length, "=%s", s_samples[i].value);
        char *envp[] = { variable, NULL };
        char why[256] = "";
        CHECK_EQ (shoal_options_load_env (options, envp, why, sizeof why), 0);
        CHECK_STR (s_get (options, s_samples[i].key), s_samples[i].written);
    }
    shoal_options_destroy (&options);
}

static void
reserved_and_unrelated_variables_are_passed_over (void)
{
    char *envp[] = { "SHOAL_JOB=ingest",
                     "SHOAL_TASK=ingest/3",
                     "SHOAL_INDEX=3",
                     "SHOAL_PARALLELISM=8",
                     "SHOAL_ROLE=active",
                     "SHOAL_EPOCH=4.17",
                     "SHOAL_NODE=eu-1",
                     "SHOAL_STATUS_FD=3",
                     "SHOAL_FENCED=1",
                     "SHOAL_TEST_SLOW=1",
                     "SHOAL_FAULTS_DROP=0.1",
                     "SHOAL_ASSIGN_SEED=7",
                     "SHOAL_HOME=/opt/shoal",
                     "SHOAL_A_VERY_LONG_NAME_INDEED_OF_NO_OPTION_AT_ALL=1",
                     "SHOAL_=x",
                     "SHOAL_SLOTS",
                     NULL };
    shoal_options_t *options = s_new ();
    char *before = s_snapshot (options);
    char why[256] = "";
    CHECK_EQ (shoal_options_load_env (options, envp, why, sizeof why), 0);
    char *after = s_snapshot (options);
    CHECK_STR (after, before);
    free (before);
    free (after);
    shoal_options_destroy (&options);
}

static void
a_misspelled_variable_is_refused_and_changes_nothing (void)
{
    const struct {
        const char *variable, *reason;
    } cases[] = {
        { "SHOAL_CAPCITY=4", "SHOAL_CAPCITY is not an option's variable (did you mean "
                             "SHOAL_CAPACITY?)" },
        { "SHOAL_DATADIR=/x", "(did you mean SHOAL_DATA_DIR?)" },
        { "SHOAL_capacity=4", "SHOAL_capacity is not an option's variable" },
        { "SHOAL_DATA-DIR=/x", "(did you mean SHOAL_DATA_DIR?)" },
        { "SHOAL_CAPACITY=0", "SHOAL_CAPACITY: capacity: 0 is below the minimum 1" },
        { "SHOAL_LABELS=a=1,a=2", "SHOAL_LABELS: labels: key a given twice" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *envp[] = { "SHOAL_SLOTS=5", (char *) cases[i].variable, NULL };
        shoal_options_t *options = s_new ();
        char *before = s_snapshot (options);
        char why[256] = "";
        CHECK_EQ (shoal_options_load_env (options, envp, why, sizeof why), -1);
        CHECK_CONTAINS (why, cases[i].reason);
        char *after = s_snapshot (options);
        CHECK_STR (after, before);
        free (before);
        free (after);
        shoal_options_destroy (&options);
    }
}

//  Defaults < config file < environment < flags: each source gives a list
//  whole, so a label the environment sets replaces the file's labels
//  rather than colliding with one of them.
static void
each_source_gives_a_list_whole (void)
{
    shoal_options_t *options = s_new ();
    char why[256] = "";
    const char *file = "labels = zone=us\nlabels = rack=r1\njoin = f:1\ncapacity = 2\n";
    CHECK_EQ (s_load (options, file, why, sizeof why), 0);
    CHECK_STR (s_get (options, "labels"), "zone=us,rack=r1");

    char *envp[] = { "SHOAL_LABELS=zone=eu", "SHOAL_CAPACITY=3", NULL };
    CHECK_EQ (shoal_options_load_env (options, envp, why, sizeof why), 0);
    CHECK_STR (s_get (options, "labels"), "zone=eu");
    CHECK_STR (s_get (options, "join"), "f:1");
    CHECK_EQ (options->capacity, 3);

    //  Flags come next: the first replaces, the next add.
    s_set (options, "labels", "gpu=a100");
    s_set (options, "labels", "zone=ap");
    CHECK_STR (s_get (options, "labels"), "gpu=a100,zone=ap");
    s_set (options, "join", "");
    s_set (options, "join", "g:2");
    CHECK_STR (s_get (options, "join"), "g:2");
    s_set (options, "capacity", "4");
    CHECK_EQ (options->capacity, 4);
    shoal_options_destroy (&options);
}

//  ---------------------------------------------------------------------
//  The public listing (shoal_option_count, shoal_option_at)

//  The 0.2 layout: the least a caller's struct may be.
#define SPEC_LEAST (offsetof (shoal_option_spec_t, doc) + sizeof (const char *))

static void
the_public_listing_is_the_table_in_order (void)
{
    CHECK_EQ (shoal_option_count (), shoal_options_count ());
    CHECK (shoal_option_count () > 0);
    for (size_t i = 0; i < shoal_option_count (); i++) {
        const shoal_option_info_t *info = shoal_options_info (i);
        shoal_option_spec_t spec = { .size = sizeof spec };
        CHECK_EQ (shoal_option_at (i, &spec), 0);
        CHECK_EQ (spec.size, sizeof spec);
        CHECK (spec.key && spec.type && spec.default_text && spec.range && spec.doc);
        if (!spec.key || !spec.type || !spec.default_text || !spec.range || !spec.doc)
            continue;
        CHECK_STR (spec.key, info->key);
        CHECK_STR (spec.type, info->type);
        CHECK_STR (spec.default_text, info->default_text);
        CHECK_STR (spec.range, info->range);
        CHECK_STR (spec.doc, info->doc);
        //  Keys are distinct, so a binding may index them by key.
        for (size_t j = 0; j < i; j++)
            CHECK (strcmp (shoal_options_info (j)->key, spec.key) != 0);
    }
}

//  Each listed key, set on a node to its listed default, is taken and
//  reads back as it was written: what a binding's defaults would do.
static void
every_listed_default_round_trips_through_a_node (void)
{
    shoal_node_t *node = shoal_node_new ();
    CHECK (node != NULL);
    if (!node)
        return;
    for (size_t i = 0; i < shoal_option_count (); i++) {
        shoal_option_spec_t spec = { .size = sizeof spec };
        CHECK_EQ (shoal_option_at (i, &spec), 0);
        char why[256] = "", value[SHOAL_OPTION_TEXT];
        int rc = shoal_node_set (node, spec.key, spec.default_text, why, sizeof why);
        if (rc != 0)
            fprintf (stderr, "  %s = '%s' refused: %s\n", spec.key, spec.default_text, why);
        CHECK_EQ (rc, 0);
        CHECK_EQ (shoal_node_get (node, spec.key, value, sizeof value, why, sizeof why), 0);
        CHECK_STR (value, spec.default_text);
    }
    shoal_node_destroy (&node);
}

static void
a_spec_smaller_than_the_first_layout_is_refused_untouched (void)
{
    CHECK_EQ (SPEC_LEAST, sizeof (shoal_option_spec_t));
    size_t sizes[] = { 0, 1, sizeof (size_t), SPEC_LEAST - 1 };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        shoal_option_spec_t spec;
        memset (&spec, 0xa5, sizeof spec);
        spec.size = sizes[i];
        shoal_option_spec_t before = spec;
        CHECK_EQ (shoal_option_at (0, &spec), -1);
        CHECK (memcmp (&spec, &before, sizeof spec) == 0);
    }
    CHECK_EQ (shoal_option_at (0, NULL), -1);
}

//  A caller built against a later header, whose struct has fields this
//  library does not know of: those read zero, and nothing past its size
//  is written.
static void
a_larger_spec_is_zero_filled_past_what_the_library_knows (void)
{
    struct {
        shoal_option_spec_t spec;
        const char *later[3]; //  fields of a future layout
        unsigned char guard[16];
    } newer;
    memset (&newer, 0xa5, sizeof newer);
    newer.spec.size = offsetof (__typeof__ (newer), guard);
    CHECK_EQ (shoal_option_at (0, &newer.spec), 0);
    CHECK_EQ (newer.spec.size, offsetof (__typeof__ (newer), guard));
    CHECK_STR (newer.spec.key, shoal_options_info (0)->key);
    CHECK_STR (newer.spec.doc, shoal_options_info (0)->doc);
    for (size_t i = 0; i < 3; i++)
        CHECK (newer.later[i] == NULL);
    for (size_t i = 0; i < sizeof newer.guard; i++)
        CHECK_EQ (newer.guard[i], 0xa5);
    //  A size that ends inside a pointer zeroes that much and no more.
    struct {
        shoal_option_spec_t spec;
        unsigned char tail[8];
    } odd;
    memset (&odd, 0xa5, sizeof odd);
    odd.spec.size = sizeof odd.spec + 3;
    CHECK_EQ (shoal_option_at (1, &odd.spec), 0);
    for (size_t i = 0; i < sizeof odd.tail; i++)
        CHECK_EQ (odd.tail[i], i < 3 ? 0 : 0xa5);
}

static void
an_index_past_the_last_is_refused_untouched (void)
{
    size_t indexes[] = { shoal_option_count (), shoal_option_count () + 1, SIZE_MAX };
    for (size_t i = 0; i < sizeof indexes / sizeof indexes[0]; i++) {
        shoal_option_spec_t spec;
        memset (&spec, 0xa5, sizeof spec);
        spec.size = sizeof spec;
        shoal_option_spec_t before = spec;
        CHECK_EQ (shoal_option_at (indexes[i], &spec), -1);
        CHECK (memcmp (&spec, &before, sizeof spec) == 0);
    }
    shoal_option_spec_t last = { .size = sizeof last };
    CHECK_EQ (shoal_option_at (shoal_option_count () - 1, &last), 0);
}

//  ---------------------------------------------------------------------
//  The documentation

//  docs/options.md has a row "| `key` | ... | `default` | ..." for every
//  option, and no row for an option that is not there.
static void
the_docs_list_every_option_with_its_default (void)
{
    FILE *file = fopen (SHOAL_TESTS_DIR "/../docs/options.md", "r");
    CHECK (file != NULL);
    if (!file)
        return;
    static char docs[1 << 16];
    size_t size = fread (docs, 1, sizeof docs - 1, file);
    docs[size] = '\0';
    fclose (file);
    for (size_t i = 0; i < shoal_options_count (); i++) {
        const shoal_option_info_t *info = shoal_options_info (i);
        char head[64];
        snprintf (head, sizeof head, "\n| `%s` |", info->key);
        const char *row = strstr (docs, head);
        CHECK_CONTAINS (docs, head);
        if (!row || !*info->default_text)
            continue;
        char line[1024], fallback[128];
        snprintf (line, sizeof line, "%.*s", (int) strcspn (row + 1, "\n"), row + 1);
        snprintf (fallback, sizeof fallback, "| `%s` |", info->default_text);
        CHECK_CONTAINS (line, fallback);
    }
    for (const char *row = docs; (row = strstr (row, "\n| `")); row++) {
        char key[64];
        snprintf (key, sizeof key, "%.*s", (int) strcspn (row + 4, "`"), row + 4);
        bool known = false;
        for (size_t i = 0; i < shoal_options_count (); i++)
            known = known || strcmp (shoal_options_info (i)->key, key) == 0;
        if (!known)
            fprintf (stderr, "  docs/options.md lists '%s', which is not an option\n", key);
        CHECK (known);
    }
}

int
main (void)
{
    RUN (defaults_are_the_documented_ones);
    RUN (a_join_item_may_name_an_srv_record);
    RUN (every_default_in_the_table_parses_and_reads_back_as_written);
    RUN (get_writes_what_set_takes_for_every_option);
    RUN (the_typed_fields_hold_what_was_set);
    RUN (the_table_s_ranges_are_the_bounds_set_keeps);
    RUN (numbers_are_refused_past_their_bounds_with_the_bound);
    RUN (durations_take_a_unit_and_at_most_a_day);
    RUN (bools_take_three_pairs_of_words_and_digits);
    RUN (choices_take_their_words_only);
    RUN (names_are_short_and_plain);
    RUN (interfaces_are_names_the_kernel_would_take);
    RUN (host_ports_are_checked_for_syntax_only);
    RUN (endpoints_are_ipc_or_tcp);
    RUN (paths_take_any_text);
    RUN (values_that_are_not_text_are_refused);
    RUN (list_values_add_items_and_commas_separate_them);
    RUN (a_label_key_given_twice_is_refused);
    RUN (labels_and_job_names_are_plain_names);
    RUN (lists_are_bounded_in_items_and_in_bytes);
    RUN (an_unknown_key_is_refused_with_the_likely_one);
    RUN (short_buffers_still_hold_strings);
    RUN (a_config_file_sets_every_key_it_names);
    RUN (config_quotes_keep_spaces_and_take_two_escapes);
    RUN (config_crlf_lines_and_a_byte_order_mark_are_taken);
    RUN (an_error_on_a_line_names_it_and_changes_nothing);
    RUN (config_lines_that_are_not_settings_are_refused);
    RUN (config_files_and_lines_are_bounded_and_text);
    RUN (load_file_reads_the_file_and_names_it_by_path);
    RUN (the_environment_sets_shoal_variables);
    RUN (every_option_has_its_variable);
    RUN (reserved_and_unrelated_variables_are_passed_over);
    RUN (a_misspelled_variable_is_refused_and_changes_nothing);
    RUN (each_source_gives_a_list_whole);
    RUN (the_public_listing_is_the_table_in_order);
    RUN (every_listed_default_round_trips_through_a_node);
    RUN (a_spec_smaller_than_the_first_layout_is_refused_untouched);
    RUN (a_larger_spec_is_zero_filled_past_what_the_library_knows);
    RUN (an_index_past_the_last_is_refused_untouched);
    RUN (the_docs_list_every_option_with_its_default);
    return TEST_DONE ();
}

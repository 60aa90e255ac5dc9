/*  tools/logs.c: `shoal logs TASK`: the last lines of a task's output, as
    the members that run or ran it keep it (docs/worker.md, "Task output").

    The client asks one node three things, each a control request: the
    members (to name them), the leader's status table (which members hold
    the task now; skipped with --node or --all-nodes), then, for each
    member chosen, LOGS: that node reads the member's file, its own or
    over the links, and answers with its last lines.
*/
#include "tools/logs.h"

#include "node/control.h"
#include "node/key.h"
#include "node/options.h"
#include "node/tasklog.h"
#include "wire/keyring.h"

#include <getopt.h>
#include <stdarg.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXIT_FAILED 1
#define EXIT_USAGE  2

static const char s_usage[] =
    "usage: shoal logs TASK [--node NAME] [--lines N] [--all-nodes] [OPTIONS]\n"
    "\n"
    "The last N lines (default 100, at most 10000; at most 1 MiB from each\n"
    "node) of the output of TASK (JOB/INDEX), as the workers that run it keep\n"
    "it in DATA-DIR/logs: one line per record, its time (UTC), its stream\n"
    "(stdout, stderr; +cut when it was cut at 2048 bytes) and its text.\n"
    "Asked of any node: by default, from every member the leader places the\n"
    "task on now; --node NAME (a member's name or id): from that member, say\n"
    "one that ran the task before it moved; --all-nodes: from every live\n"
    "member that keeps some of it. Exit status 1 when no member had any.\n"
    "\n"
    "options:\n"
    "  --node NAME       the member to read from (name or id)\n"
    "  --lines N         how many of the last lines (1..10000, default 100)\n"
    "  --all-nodes       every live member\n"
    "  --data-dir DIR    the node's data directory: its endpoint is\n"
    "                    ipc://DIR/control (default $SHOAL_DATA_DIR, or shoal-data)\n"
    "  --control EP      the node's control endpoint (ipc://PATH or tcp://HOST:PORT)\n"
    "  --key-file FILE   the cluster key, when the node has one (default $SHOAL_KEY_FILE)\n"
    "  --timeout DUR     how long to wait for each answer (default 15s)\n"
    "  --json            print one JSON object\n";

static const char *const s_codes[] = { "ok",        "invalid", "not-found", "no-leader",
                                       "timed-out", "partial", "failed" };

typedef struct {
    const char *task, *node, *data_dir, *control, *key_file;
    long lines;
    bool all, json, help;
    uint64_t timeout_ms;
} s_args_t;

//  What the client talks to the node with.
typedef struct {
    char endpoint[SHOAL_OPTIONS_VALUE_MAX + 32];
    shoal_keyring_t *keyring;
    uint64_t timeout_ms;
} s_link_t;

//  A member chosen to read from.
typedef struct {
    shoal_id_t id;
    char name[SHOAL_NAME_MAX + 1];
} s_target_t;

__attribute__ ((format (printf, 1, 2))) static int
s_usage_error (const char *format, ...)
{
    va_list args;
    va_start (args, format);
    fprintf (stderr, "shoal logs: ");
    vfprintf (stderr, format, args);
    va_end (args);
    fprintf (stderr, "\nRun 'shoal logs --help' for usage.\n");
    return EXIT_USAGE;
}

static int
s_scan (s_args_t *args, int argc, char **argv)
{
    enum { O_NODE = 256, O_LINES, O_ALL, O_JSON, O_DATA_DIR, O_CONTROL, O_KEY_FILE, O_TIMEOUT };
    static const struct option options[] = {
        { "help", no_argument, NULL, 'h' },
        { "node", required_argument, NULL, O_NODE },
        { "lines", required_argument, NULL, O_LINES },
        { "all-nodes", no_argument, NULL, O_ALL },
        { "json", no_argument, NULL, O_JSON },
        { "data-dir", required_argument, NULL, O_DATA_DIR },
        { "control", required_argument, NULL, O_CONTROL },
        { "key-file", required_argument, NULL, O_KEY_FILE },
        { "timeout", required_argument, NULL, O_TIMEOUT },
        { NULL, 0, NULL, 0 },
    };
    char **line = calloc ((size_t) argc + 2, sizeof *line);
    if (!line)
        return s_usage_error ("out of memory");
    line[0] = "logs";
    memcpy (line + 1, argv, (size_t) argc * sizeof *argv);
    optind = 0;
    opterr = 0;
    int code, rc = 0;
    while (rc == 0 && !args->help &&
           (code = getopt_long (argc + 1, line, "-:h", options, NULL)) != -1) {
        char *end = NULL;
        if (code == 1 && args->task)
            rc = s_usage_error ("one argument too many: %s", optarg);
        else if (code == 1)
            args->task = optarg;
        else if (code == ':')
            rc = s_usage_error ("needs a value: %s", line[optind - 1]);
        else if (code == '?')
            rc = s_usage_error ("unknown option %s", line[optind - 1]);
        else if (code == 'h')
            args->help = true;
        else if (code == O_NODE)
            args->node = optarg;
        else if (code == O_LINES) {
            args->lines = strtol (optarg, &end, 10);
            if (*end || !optarg[0] || args->lines < 1 || args->lines > SHOAL_LOGS_LINES_MAX)
                rc = s_usage_error ("--lines takes 1 to %d, not %s", SHOAL_LOGS_LINES_MAX, optarg);
        } else if (code == O_ALL)
            args->all = true;
        else if (code == O_JSON)
            args->json = true;
        else if (code == O_DATA_DIR)
            args->data_dir = optarg;
        else if (code == O_CONTROL)
            args->control = optarg;
        else if (code == O_KEY_FILE)
            args->key_file = optarg;
        else if (shoal_options_duration ("--timeout", optarg, &args->timeout_ms, NULL, 0) != 0)
            rc = s_usage_error ("--timeout: not a duration (as 500ms, 30s, 2m): %s", optarg);
    }
    for (int i = optind; rc == 0 && !args->help && i <= argc; i++)
        rc = args->task ? s_usage_error ("one argument too many: %s", line[i])
                        : (args->task = line[i], 0);
    free (line);
    return rc;
}

static int
s_check (const s_args_t *args)
{
    char name[SHOAL_TASKLOG_NAME_TEXT];
    if (!args->task)
        return s_usage_error ("needs a task (JOB/INDEX, as shoal status lists them)");
    if (shoal_tasklog_name (args->task, name, sizeof name) != 0 ||
        !shoal_text_valid ((const uint8_t *) args->task, strlen (args->task)))
        return s_usage_error ("not a task id (JOB/INDEX, at most %d bytes): %s", SHOAL_TASK_MAX,
                              args->task);
    if (args->node && args->all)
        return s_usage_error ("--node and --all-nodes: one or the other");
    if (args->node && (!args->node[0] || strlen (args->node) > SHOAL_NAME_MAX))
        return s_usage_error ("--node takes a member's name or id, not '%s'", args->node);
    return 0;
}

//  One control request; 0, or -1 with the reason said.
static int
s_call (const s_link_t *link, const shoal_control_req_t *req, shoal_arena_t *arena,
        shoal_control_rep_t *rep)
{
    char why[512];
    shoal_arena_reset (arena);
    if (shoal_control_call (link->endpoint, link->keyring, req, link->timeout_ms, arena, rep, why,
                            sizeof why) == 0)
        return 0;
    fprintf (stderr,
             "shoal logs: %s\n(is the node running? --data-dir or --control names it; a node "
             "with a key answers only --key-file holders)\n",
             why);
    return -1;
}

static void
s_member_name (const shoal_update_t *member, char *name, size_t size)
{
    if (member->meta && member->meta->name && member->meta->name[0])
        snprintf (name, size, "%s", member->meta->name);
    else
        shoal_id_format (member->node.bytes, true, name);
}

//  Adds the member id to targets, once, named as members names it.
static void
s_add (s_target_t *targets, size_t *count, const shoal_id_t *id, const shoal_control_rep_t *members)
{
    for (size_t i = 0; i < *count; i++)
        if (memcmp (&targets[i].id, id, sizeof *id) == 0)
            return;
    s_target_t *target = &targets[(*count)++];
    target->id = *id;
    shoal_id_format (id->bytes, true, target->name);
    for (uint32_t i = 0; i < members->member_count; i++)
        if (memcmp (&members->members[i].node, id, sizeof *id) == 0)
            s_member_name (&members->members[i], target->name, sizeof target->name);
}

static bool
s_live (const shoal_update_t *member)
{
    return member->state == SHOAL_MEMBER_ALIVE || member->state == SHOAL_MEMBER_SUSPECT;
}

//  --node NAME: the member of that name or id. 0, or -1 when none.
static int
s_target_named (const s_args_t *args, const shoal_control_rep_t *members, s_target_t *targets,
                size_t *count)
{
    for (uint32_t i = 0; i < members->member_count; i++) {
        const shoal_update_t *member = &members->members[i];
        char id[SHOAL_ID_TEXT], name[SHOAL_NAME_MAX + 1];
        shoal_id_format (member->node.bytes, true, id);
        s_member_name (member, name, sizeof name);
        if (strcmp (args->node, id) == 0 || strcmp (args->node, name) == 0) {
            s_add (targets, count, &member->node, members);
            return 0;
        }
    }
    fprintf (stderr, "shoal logs: node unknown: %s (shoal members lists them)\n", args->node);
    return -1;
}

//  The members the leader places the task on now. 0, or -1 when none.
static int
s_targets_placed (const s_args_t *args, const s_link_t *link, const shoal_control_rep_t *members,
                  s_target_t *targets, size_t *count)
{
    shoal_arena_t arena = { 0 };
    shoal_control_rep_t rep;
    shoal_control_req_t req = { .id = 3, .op = SHOAL_OP_STATUS };
    req.timeout_ms = (uint32_t) (link->timeout_ms / 3 < 5000 ? link->timeout_ms / 3 : 5000);
    static const shoal_id_t none;
    bool known = false;
    int rc = shoal_arena_init (&arena, SHOAL_CONTROL_ARENA) == 0 ? s_call (link, &req, &arena, &rep)
                                                                 : -1;
    for (uint32_t i = 0; rc == 0 && i < rep.task_count; i++) {
        const shoal_task_report_t *row = &rep.tasks[i];
        if (strcmp (row->status.task, args->task) != 0)
            continue;
        known = true;
        if (memcmp (&row->node, &none, sizeof none) != 0 && *count < SHOAL_MEMBERS_MAX)
            s_add (targets, count, &row->node, members);
    }
    if (rc == 0 && rep.reason && rep.reason[0])
        fprintf (stderr, "shoal logs: status: %s\n", rep.reason);
    if (rc == 0 && !known)
        fprintf (stderr,
                 "shoal logs: task unknown: %s (shoal status lists the tasks; --all-nodes asks "
                 "every member for what it kept of a task that is gone)\n",
                 args->task);
    else if (rc == 0 && *count == 0)
        fprintf (stderr,
                 "shoal logs: %s is placed on no node now: --node or --all-nodes asks "
                 "members that ran it\n",
                 args->task);
    shoal_arena_release (&arena);
    return rc == 0 && *count ? 0 : -1;
}

//  The members to read from, by the command line. 0, or -1 (said why).
static int
s_targets (const s_args_t *args, const s_link_t *link, const shoal_control_rep_t *members,
           s_target_t *targets, size_t *count)
{
    if (args->node)
        return s_target_named (args, members, targets, count);
    if (!args->all)
        return s_targets_placed (args, link, members, targets, count);
    for (uint32_t i = 0; i < members->member_count; i++)
        if (s_live (&members->members[i]))
            s_add (targets, count, &members->members[i].node, members);
    return 0;
}

//  The lines of output as a JSON array of strings.
static json_t *
s_json_lines (const char *output)
{
    json_t *lines = json_array ();
    while (output && *output) {
        const char *newline = strchr (output, '\n');
        size_t length = newline ? (size_t) (newline - output) : strlen (output);
        json_array_append_new (lines, json_stringn (output, length));
        output += length + (newline ? 1 : 0);
    }
    return lines;
}

//  Reads task's output from target; prints it (or adds it to out). True
//  when it had some.
static bool
s_read_from (const s_args_t *args, const s_link_t *link, shoal_arena_t *arena,
             const s_target_t *target, size_t count, json_t *out)
{
    shoal_logs_req_t logs = { .task = args->task,
                              .node = target->id,
                              .lines = (uint32_t) args->lines };
    shoal_control_req_t req = { .id = 4, .op = SHOAL_OP_LOGS, .logs = &logs };
    shoal_control_rep_t rep;
    if (s_call (link, &req, arena, &rep) != 0)
        rep = (shoal_control_rep_t){ .code = SHOAL_REPLY_FAILED,
                                     .reason = "the node asked did not answer" };
    const char *code = rep.code < sizeof s_codes / sizeof *s_codes ? s_codes[rep.code] : "?";
    const char *output = rep.output ? rep.output : "";
    char id[SHOAL_ID_TEXT], reason[SHOAL_REASON_MAX + 128];
    shoal_id_format (target->id.bytes, true, id);
    if (rep.code == SHOAL_REPLY_NOT_FOUND)
        snprintf (reason, sizeof reason, "no output kept for %s on %s", args->task, target->name);
    else if (rep.code == SHOAL_REPLY_TIMED_OUT)
        snprintf (reason, sizeof reason, "node not answering: %s (%s)", target->name,
                  rep.reason ? rep.reason : "");
    else if (rep.code != SHOAL_REPLY_OK)
        snprintf (reason, sizeof reason, "%s: %s", target->name, rep.reason ? rep.reason : "");
    else
        reason[0] = 0;
    if (out)
        json_array_append_new (json_object_get (out, "nodes"),
                               json_pack ("{s:s, s:s, s:s, s:s, s:o}", "node", target->name, "id",
                                          id, "result", code, "reason", reason, "lines",
                                          s_json_lines (output)));
    else if (rep.code == SHOAL_REPLY_OK) {
        if (count > 1)
            printf ("==> %s <==\n", target->name);
        fputs (output, stdout);
    }
    //  With --all-nodes, a member without the file is no news.
    if (!out && rep.code != SHOAL_REPLY_OK && !(args->all && rep.code == SHOAL_REPLY_NOT_FOUND))
        fprintf (stderr, "shoal logs: %s\n", reason);
    return rep.code == SHOAL_REPLY_OK;
}

static int
s_run (const s_args_t *args, const s_link_t *link)
{
    shoal_arena_t members_arena = { 0 }, arena = { 0 };
    shoal_control_rep_t members;
    shoal_control_req_t req = { .id = 2, .op = SHOAL_OP_MEMBERS };
    s_target_t *targets = calloc (SHOAL_MEMBERS_MAX, sizeof *targets);
    size_t count = 0, had = 0;
    int rc = EXIT_FAILED;
    if (!targets || shoal_arena_init (&members_arena, SHOAL_CONTROL_ARENA) != 0 ||
        shoal_arena_init (&arena, SHOAL_CONTROL_ARENA) != 0)
        fprintf (stderr, "shoal logs: out of memory\n");
    else if (s_call (link, &req, &members_arena, &members) == 0 &&
             s_targets (args, link, &members, targets, &count) == 0) {
        json_t *out = args->json ? json_pack ("{s:s, s:[]}", "task", args->task, "nodes") : NULL;
        for (size_t i = 0; i < count; i++)
            had += s_read_from (args, link, &arena, &targets[i], count, out);
        if (out) {
            json_dumpf (out, stdout, JSON_COMPACT);
            putchar ('\n');
            json_decref (out);
        }
        if (!had && args->all)
            fprintf (stderr, "shoal logs: no output kept for %s on any live member\n", args->task);
        rc = had ? 0 : EXIT_FAILED;
    }
    free (targets);
    shoal_arena_release (&arena);
    shoal_arena_release (&members_arena);
    return rc;
}

int
shoal_logs_main (int argc, char **argv)
{
    s_args_t args = { .data_dir = getenv ("SHOAL_DATA_DIR"),
                      .control = getenv ("SHOAL_CONTROL"),
                      .key_file = getenv ("SHOAL_KEY_FILE"),
                      .lines = 100,
                      .timeout_ms = 15000 };
    int rc = s_scan (&args, argc, argv);
    if (rc != 0)
        return rc;
    if (args.help) {
        fputs (s_usage, stdout);
        return 0;
    }
    if (s_check (&args) != 0)
        return EXIT_USAGE;
    s_link_t link = { .keyring = shoal_keyring_new (), .timeout_ms = args.timeout_ms };
    if (args.control && args.control[0])
        snprintf (link.endpoint, sizeof link.endpoint, "%s", args.control);
    else
        snprintf (link.endpoint, sizeof link.endpoint, "ipc://%s/control",
                  args.data_dir && args.data_dir[0] ? args.data_dir : "shoal-data");
    char why[512];
    if (!link.keyring) {
        fprintf (stderr, "shoal logs: out of memory\n");
        rc = EXIT_FAILED;
    } else if (args.key_file && args.key_file[0] &&
               shoal_key_file_load (link.keyring, args.key_file, why, sizeof why) != 0) {
        fprintf (stderr, "shoal logs: --key-file %s: %s\n", args.key_file, why);
        rc = EXIT_USAGE;
    } else
        rc = s_run (&args, &link);
    if (fflush (stdout) != 0)
        rc = EXIT_FAILED;
    shoal_keyring_destroy (&link.keyring);
    return rc;
}

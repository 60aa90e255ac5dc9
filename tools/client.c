/*  tools/client.c: the `shoal` subcommands that talk to a running node
    through its control endpoint (node/control.h): members, status, jobs,
    submit, rescale, remove, leave, keys.

    Each prints a readable table, or with --json one JSON object, and exits
    0 when the node did what was asked; 1 when it could not (unreachable,
    refused: the reason on standard error); 2 on a usage error; rescale
    also 3 when it applied less than asked (partial) and 4 when it timed
    out waiting for room.
*/
#include "tools/client.h"

#include "tools/drain.h"
#include "node/control.h"
#include "node/key.h"
#include "wire/keyring.h"
#include "wire/ids.h"
#include "node/options.h"
#include "shoal.h"

#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXIT_FAILED    1
#define EXIT_USAGE     2
#define EXIT_PARTIAL   3
#define EXIT_TIMED_OUT 4

static const char s_common[] =
    "  --data-dir DIR    the node's data directory: its endpoint is\n"
    "                    ipc://DIR/control (default $SHOAL_DATA_DIR, or shoal-data)\n"
    "  --control EP      the node's control endpoint (ipc://PATH or tcp://HOST:PORT)\n"
    "  --key-file FILE   the cluster key, when the node has one (default $SHOAL_KEY_FILE)\n"
    "  --timeout DUR     how long to wait for the answer (default 15s; a node\n"
    "                    holds a change up to 10s while there is no leader)\n"
    "  --json            print one JSON object instead of a table\n";

typedef struct {
    const char *name;
    const char *usage; //  the command's own lines
    int op;            //  shoal_op_t
    int args;          //  positional arguments it takes
} s_command_t;

static const s_command_t s_commands[] = {
    { "members",
      "usage: shoal members [OPTIONS]\n\nThe members the node knows, with their state.\n",
      SHOAL_OP_MEMBERS, 0 },
    { "status",
      "usage: shoal status [--local] [OPTIONS]\n\nThe leader, its term, the assignment version, "
      "and every task with its\nnode, role, state, epoch, lag and restarts, as the leader holds "
      "them (a task\nit places nowhere: unplaced, and why): a node that does not lead asks the\n"
      "leader. --local: the node's own tasks only (also what it answers when no\nleader answers, "
      "saying so on standard error).\n",
      SHOAL_OP_STATUS, 0 },
    { "jobs", "usage: shoal jobs [OPTIONS]\n\nThe job specs the cluster holds.\n", SHOAL_OP_JOBS,
      0 },
    { "submit",
      "usage: shoal submit NAME --parallelism N [--stateful] [--fenced] [--weight W]\n"
      "                    [--require KEY=VALUE]... [--command CMD] [OPTIONS]\n\n"
      "Submits a job of N tasks, NAME/0 .. NAME/N-1. Submitting the same spec\n"
      "again is done already; another spec under the name is refused.\n\n"
      "--fenced: every write of a task carries its epoch (SHOAL_EPOCH), and the\n"
      "store refuses a write of an older epoch than it has seen. Such a task\n"
      "moves as soon as its node is declared dead, without waiting out the\n"
      "node's lease; a node that was only cut off may still run it meanwhile,\n"
      "but its writes no longer land (docs/jobs.md, \"Fenced jobs\").\n",
      SHOAL_OP_SUBMIT, 1 },
    { "rescale",
      "usage: shoal rescale JOB N [--min M] [--wait DUR] [OPTIONS]\n\n"
      "Sets the job's parallelism. Lowering it applies at once; raising it\n"
      "waits up to --wait (default 30s) for room, then applies the largest\n"
      "parallelism of at least --min that fits. Exit status: 0 applied,\n"
      "3 partial (less than N, at least M), 4 timed out (the job is as it was).\n",
      SHOAL_OP_RESCALE, 2 },
    { "remove", "usage: shoal remove JOB [OPTIONS]\n\nRemoves the job: its tasks stop.\n",
      SHOAL_OP_REMOVE, 1 },
    { "leave",
      "usage: shoal leave [OPTIONS]\n\nAsks the node to leave the cluster gracefully: its "
      "active tasks move\nto other nodes first.\n",
      SHOAL_OP_LEAVE, 0 },
    { "keys",
      "usage: shoal keys list [OPTIONS]\n"
      "       shoal keys install (KEY | --new-key-file FILE) [OPTIONS]\n"
      "       shoal keys use (KEY | KEY-ID | --new-key-file FILE) [OPTIONS]\n"
      "       shoal keys remove (KEY | KEY-ID | --new-key-file FILE) [OPTIONS]\n\n"
      "Rotates the cluster key of a running cluster: the node asked has the\n"
      "leader apply the operation on every live member, each of which keeps\n"
      "its keyring in its data directory. Rotate in three steps, each done\n"
      "before the next: install NEW, use NEW, remove OLD.\n\n"
      "KEY is the text shoal keygen prints; KEY-ID the 8 hex digits list\n"
      "shows. Prefer --new-key-file FILE: a key given as an argument shows in\n"
      "the process list and the shell's history. --key-file is the key this\n"
      "command talks to the node with, as for every command; after use NEW,\n"
      "give it NEW.\n\n"
      "list: each key id, how many live members hold it, where it is primary.\n"
      "use is refused unless every live member holds the key; remove of a key\n"
      "that is primary anywhere, or of a member's last key, is refused.\n"
      "Exit status 0 only when every live member applied it; each member's\n"
      "answer is printed, and those that failed or did not answer are named\n"
      "on standard error.\n",
      SHOAL_OP_KEYS, 2 },
    { "cordon",
      "usage: shoal cordon [NODE] [OPTIONS]\n\nMarks the node asked (NODE: its name, to make "
      "sure) cordoned: it keeps the\nactive and standby tasks it holds, and takes no new task, "
      "no learner, and\nno active for a standby it holds. Lasts until shoal uncordon, or the "
      "end of\nthe node's process.\n",
      SHOAL_OP_CORDON, 1 },
    { "uncordon",
      "usage: shoal uncordon [NODE] [OPTIONS]\n\nEnds a cordon or a drain of the node asked: "
      "it takes tasks again.\n",
      SHOAL_OP_UNCORDON, 1 },
    { "drain",
      "usage: shoal drain [NODE] [--leave] [--no-wait] [--wait DUR] [OPTIONS]\n\n"
      "Drains the node asked (NODE: its name, to make sure): it takes nothing\nnew, each "
      "stateful task it runs first warms up as a learner on another\nnode (or moves at once "
      "to a caught-up standby), and moves only once that\nlearner has caught up; stateless "
      "tasks move at once. Prints progress until\nthe node holds nothing, then exits 0 (with "
      "--leave, after asking it to\nleave). --wait (default 10m): exit status 4 when the node "
      "still holds\ntasks then (it stays draining). --no-wait: mark it and return. A task\n"
      "that no other node may hold, or finds no room for, stays: the drain waits.\n",
      SHOAL_OP_DRAIN, 1 },
};

static int
s_usage_error (const s_command_t *command, const char *reason, const char *arg)
{
    fprintf (stderr, "shoal %s: %s%s%s\nRun 'shoal %s --help' for usage.\n", command->name, reason,
             arg ? " " : "", arg ? arg : "", command->name);
    return EXIT_USAGE;
}

static const char *
s_name (const char *const *names, size_t count, unsigned value)
{
    return value < count ? names[value] : "?";
}

static const char *const s_states[] = { "alive", "suspect", "dead", "left" };
static const char *const s_cordons[] = { "none", "cordoned", "draining" };
static const char *const s_roles[] = { "none", "active", "standby", "learner" };
static const char *const s_task_states[] = { "starting", "running", "stopping", "stopped",
                                             "failed" };
static const char *const s_codes[] = { "ok",        "invalid", "not-found", "no-leader",
                                       "timed-out", "partial", "failed" };

#define NAMES(table) table, sizeof table / sizeof table[0]

//  The name of a member, from the members the reply lists; "" if unknown.
static const char *
s_member_name (const shoal_control_rep_t *rep, const shoal_id_t *id)
{
    for (uint32_t i = 0; i < rep->member_count; i++)
        if (memcmp (&rep->members[i].node, id, sizeof *id) == 0 && rep->members[i].meta)
            return rep->members[i].meta->name;
    return "";
}

static void
s_print_members (const shoal_control_rep_t *rep, bool json)
{
    json_t *list = json ? json_array () : NULL;
    if (!json)
        printf ("%-32s  %-20s  %-22s  %-7s  %-11s  %-8s  %s\n", "ID", "NAME", "ADDRESS", "STATE",
                "INCARNATION", "CORDON", "VOTER");
    for (uint32_t i = 0; i < rep->member_count; i++) {
        const shoal_update_t *member = &rep->members[i];
        char id[SHOAL_NODE_ID_TEXT];
        shoal_id_format (member->node.bytes, true, id);
        const char *name = member->meta ? member->meta->name : "";
        const char *addr = member->meta ? member->meta->addr : "";
        const char *state = s_name (NAMES (s_states), member->state);
        const char *cordon = s_name (NAMES (s_cordons), member->meta ? member->meta->cordon : 0);
        bool voter = shoal_ids_contain (rep->voters, rep->voter_count, &member->node);
        if (json)
            json_array_append_new (list, json_pack ("{s:s, s:s, s:s, s:s, s:I, s:s, s:b}", "id", id,
                                                    "name", name, "addr", addr, "state", state,
                                                    "incarnation", (json_int_t) member->incarnation,
                                                    "cordon", cordon, "voter", voter));
        else
            printf ("%-32s  %-20s  %-22s  %-7s  %-11llu  %-8s  %s\n", id, name, addr, state,
                    (unsigned long long) member->incarnation, cordon, voter ? "yes" : "no");
    }
    if (json) {
        char leader[SHOAL_NODE_ID_TEXT];
        shoal_id_format (rep->leader.bytes, true, leader);
        json_t *out =
            json_pack ("{s:o, s:s, s:I, s:I}", "members", list, "leader", leader, "term",
                       (json_int_t) rep->term, "voters_version", (json_int_t) rep->voters_version);
        json_dumpf (out, stdout, JSON_COMPACT);
        putchar ('\n');
        json_decref (out);
    }
}

static void
s_print_jobs (const shoal_control_rep_t *rep, bool json)
{
    json_t *list = json ? json_array () : NULL;
    if (!json)
        printf ("%-24s  %11s  %-8s  %-6s  %6s  %-24s  %s\n", "JOB", "PARALLELISM", "STATEFUL",
                "FENCED", "WEIGHT", "REQUIRE", "COMMAND");
    for (uint32_t i = 0; i < rep->job_count; i++) {
        const shoal_jobspec_t *job = &rep->jobs[i];
        char require[SHOAL_LABELS_MAX * (2 * SHOAL_LABEL_MAX + 2) + 1] = "";
        json_t *labels = json ? json_object () : NULL;
        for (uint32_t l = 0; l < job->require_count; l++) {
            size_t used = strlen (require);
            snprintf (require + used, sizeof require - used, "%s%s=%s", l ? "," : "",
                      job->require[l].key, job->require[l].value);
            if (json)
                json_object_set_new (labels, job->require[l].key,
                                     json_string (job->require[l].value));
        }
        if (json)
            json_array_append_new (
                list, json_pack ("{s:s, s:i, s:b, s:b, s:i, s:o, s:s}", "name", job->name,
                                 "parallelism", (int) job->parallelism, "stateful", job->stateful,
                                 "fenced", job->fenced, "weight", (int) job->weight, "require",
                                 labels, "command", job->command));
        else
            printf ("%-24s  %11u  %-8s  %-6s  %6u  %-24s  %s\n", job->name, job->parallelism,
                    job->stateful ? "yes" : "no", job->fenced ? "yes" : "no", job->weight,
                    require[0] ? require : "-", job->command[0] ? job->command : "-");
    }
    if (json) {
        json_t *out = json_pack ("{s:o, s:I}", "jobs", list, "version", (json_int_t) rep->version);
        json_dumpf (out, stdout, JSON_COMPACT);
        putchar ('\n');
        json_decref (out);
    }
}

//  Tasks sort by job, then by index as a number: orders/2 before orders/10.
static int
s_task_compare (const void *a, const void *b)
{
    const char *x = (*(const shoal_task_report_t *const *) a)->status.task;
    const char *y = (*(const shoal_task_report_t *const *) b)->status.task;
    const char *xs = strrchr (x, '/'), *ys = strrchr (y, '/');
    size_t xj = xs ? (size_t) (xs - x) : strlen (x), yj = ys ? (size_t) (ys - y) : strlen (y);
    int by_job = strncmp (x, y, xj < yj ? xj : yj);
    if (by_job || xj != yj)
        return by_job ? by_job : xj < yj ? -1 : 1;
    unsigned long xi = xs ? strtoul (xs + 1, NULL, 10) : 0,
                  yi = ys ? strtoul (ys + 1, NULL, 10) : 0;
    return xi < yi ? -1 : xi > yi ? 1 : strcmp (x, y);
}

//  What the table says of a task's state: a task placed nowhere is
//  unplaced; one that exited in a row and has not run long since is in a
//  crash loop (its worker restarts it after a backoff).
static const char *
s_task_state (const shoal_task_report_t *task, bool placed)
{
    if (!placed)
        return "unplaced";
    if (task->status.restarts &&
        (task->status.state == SHOAL_TASK_STARTING || task->status.state == SHOAL_TASK_RUNNING))
        return "crashloop";
    return s_name (NAMES (s_task_states), task->status.state);
}

//  How the last exit ended, "exit 127" or "signal 11"; "" when none.
static void
s_last_exit (const shoal_task_status_t *status, char *text, size_t size)
{
    if (!status->restarts)
        snprintf (text, size, "%s", "");
    else if (status->last_exit < 256)
        snprintf (text, size, "exit %u", status->last_exit);
    else
        snprintf (text, size, "signal %u", status->last_exit - 256);
}

static json_t *
s_task_json (const shoal_task_report_t *task, const char *node, const char *name, bool placed,
             bool known)
{
    const shoal_task_status_t *status = &task->status;
    json_t *last_exit = json_null ();
    if (status->restarts && status->last_exit < 256)
        last_exit = json_pack ("{s:i}", "status", (int) status->last_exit);
    else if (status->restarts)
        last_exit = json_pack ("{s:i}", "signal", (int) (status->last_exit - 256));
    json_t *epoch = placed ? json_pack ("[I,I]", (json_int_t) status->epoch.term,
                                        (json_int_t) status->epoch.version)
                           : json_null ();
    return json_pack (
        "{s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:I, s:o, s:s, s:s}", "task", status->task, "node",
        placed ? node : "", "node_name", name, "role", s_name (NAMES (s_roles), status->role),
        "state", s_task_state (task, placed), "epoch", epoch, "lag",
        known && status->lag <= (uint64_t) LLONG_MAX ? json_integer ((json_int_t) status->lag)
                                                     : json_null (),
        "restarts", (json_int_t) status->restarts, "last_exit", last_exit, "error",
        status->error ? status->error : "", "reason", task->reason ? task->reason : "");
}

static void
s_print_status (const shoal_control_rep_t *rep, const shoal_control_rep_t *members, bool json)
{
    char leader[SHOAL_NODE_ID_TEXT];
    shoal_id_format (rep->leader.bytes, true, leader);
    json_t *list = json ? json_array () : NULL;
    if (!json) {
        //  With no leader, the term is the highest the node has seen.
        const char *name = s_member_name (members, &rep->leader);
        if (leader[0] && name[0])
            printf ("leader %s (%s), ", leader, name);
        else if (leader[0])
            printf ("leader %s, ", leader);
        else
            printf ("no leader, ");
        printf ("term %llu, assignment version %llu\n\n", (unsigned long long) rep->term,
                (unsigned long long) rep->version);
        printf ("%-24s  %-16s  %-8s  %-9s  %-12s  %-8s  %8s  %s\n", "TASK", "NODE", "ROLE", "STATE",
                "EPOCH", "LAG", "RESTARTS", "NOTE");
    }
    const shoal_task_report_t **sorted =
        calloc (rep->task_count ? rep->task_count : 1, sizeof *sorted);
    for (uint32_t i = 0; sorted && i < rep->task_count; i++)
        sorted[i] = &rep->tasks[i];
    if (sorted)
        qsort (sorted, rep->task_count, sizeof *sorted, s_task_compare);
    static const shoal_id_t none = { { 0 } };
    for (uint32_t i = 0; i < rep->task_count; i++) {
        const shoal_task_report_t *task = sorted ? sorted[i] : &rep->tasks[i];
        const shoal_task_status_t *status = &task->status;
        bool placed = memcmp (&task->node, &none, sizeof none) != 0;
        char node[SHOAL_NODE_ID_TEXT], epoch[48] = "-", lag[24] = "-", note[SHOAL_REASON_TEXT];
        shoal_id_format (task->node.bytes, true, node);
        const char *name = placed ? s_member_name (members, &task->node) : "";
        if (placed)
            snprintf (epoch, sizeof epoch, "%llu.%llu", (unsigned long long) status->epoch.term,
                      (unsigned long long) status->epoch.version);
        //  A lag is a learner's or a standby's: how far its copy is behind.
        //  An active (every stateless task) has none to show, nor has a
        //  learner that has not reported yet (UINT64_MAX): "-" and null.
        bool known = placed && status->lag != UINT64_MAX &&
                     (status->role == SHOAL_ROLE_LEARNER || status->role == SHOAL_ROLE_STANDBY);
        if (known)
            snprintf (lag, sizeof lag, "%llu", (unsigned long long) status->lag);
        if (json) {
            json_array_append_new (list, s_task_json (task, node, name, placed, known));
            continue;
        }
        //  The note: why a task is placed nowhere, or why it failed last.
        if (!placed)
            snprintf (note, sizeof note, "%s", task->reason ? task->reason : "");
        else if (status->error && status->error[0])
            snprintf (note, sizeof note, "%s", status->error);
        else
            s_last_exit (status, note, sizeof note);
        printf ("%-24s  %-16s  %-8s  %-9s  %-12s  %-8s  %8u%s%s\n", status->task,
                !placed   ? "-"
                : name[0] ? name
                          : node,
                placed ? s_name (NAMES (s_roles), status->role) : "-", s_task_state (task, placed),
                epoch, lag, status->restarts, note[0] ? "  " : "", note);
    }
    free (sorted);
    if (json) {
        json_t *out =
            json_pack ("{s:s, s:I, s:I, s:o}", "leader", leader, "term", (json_int_t) rep->term,
                       "version", (json_int_t) rep->version, "tasks", list);
        json_dumpf (out, stdout, JSON_COMPACT);
        putchar ('\n');
        json_decref (out);
    }
}

//  The answer to a change (submit, rescale, remove, leave), and its exit
//  status.
static int
s_print_change (const s_command_t *command, const shoal_control_rep_t *rep, bool json)
{
    const char *code = s_name (NAMES (s_codes), rep->code);
    uint32_t parallelism = rep->job_count ? rep->jobs[0].parallelism : 0;
    if (json) {
        json_t *out = json_pack ("{s:s, s:s, s:i}", "result", code, "reason",
                                 rep->reason ? rep->reason : "", "parallelism", (int) parallelism);
        json_dumpf (out, stdout, JSON_COMPACT);
        putchar ('\n');
        json_decref (out);
    } else if (rep->code == SHOAL_REPLY_OK || rep->code == SHOAL_REPLY_PARTIAL ||
               rep->code == SHOAL_REPLY_TIMED_OUT) {
        if (rep->job_count)
            printf ("%s: %s, parallelism %u%s%s\n", command->name, code, parallelism,
                    rep->reason && rep->reason[0] ? ": " : "", rep->reason ? rep->reason : "");
        else
            printf ("%s: %s\n", command->name, code);
    }
    if (rep->code != SHOAL_REPLY_OK && rep->code != SHOAL_REPLY_PARTIAL &&
        rep->code != SHOAL_REPLY_TIMED_OUT)
        fprintf (stderr, "shoal %s: %s: %s\n", command->name, code,
                 rep->reason && rep->reason[0] ? rep->reason : "refused");
    switch (rep->code) {
    case SHOAL_REPLY_OK:
        return 0;
    case SHOAL_REPLY_PARTIAL:
        return EXIT_PARTIAL;
    case SHOAL_REPLY_TIMED_OUT:
        return EXIT_TIMED_OUT;
    default:
        return EXIT_FAILED;
    }
}

//  0 when endpoint is one a node can have (the rules of its control
//  option), -1 else.
static int
s_endpoint_check (const char *endpoint)
{
    shoal_options_t *options = shoal_options_new ();
    int rc = options ? shoal_options_set (options, "control", endpoint, NULL, 0) : -1;
    shoal_options_destroy (&options);
    return rc;
}

//  Why a call found no node, and what to check: where the endpoint came
//  from, and the key.
static void
s_call_failed (const s_command_t *command, const char *why, const char *control,
               const char *data_dir)
{
    fprintf (stderr, "shoal %s: %s\n", command->name, why);
    if (control && control[0])
        fprintf (stderr, "(is the node running? --control %s names it", control);
    else
        fprintf (stderr,
                 "(is the node running? its data directory is %s: --data-dir, or --control, "
                 "names another",
                 data_dir && data_dir[0] ? data_dir : "shoal-data");
    //  Where something listens, an answer that never came may be a key's.
    if (strncmp (why, "no node at ", 11) == 0 || strncmp (why, "cannot reach ", 13) == 0)
        fprintf (stderr, ")\n");
    else
        fprintf (stderr, "; a node with a key answers only --key-file holders)\n");
}

//  What the command line says.
typedef struct {
    const char *data_dir, *control, *key_file, *new_key_file;
    uint64_t timeout_ms, wait_ms;
    bool json, local, help, leave, no_wait;
    const char *positional[2];
    int positionals;
    shoal_jobspec_t spec;
    shoal_label_t require[SHOAL_LABELS_MAX];
    char require_text[SHOAL_LABELS_MAX][2 * SHOAL_LABEL_MAX + 2];
    long parallelism, min;
} s_args_t;

//  getopt_long's codes for the options without a short form.
enum {
    S_OPT_DATA_DIR = 256,
    S_OPT_CONTROL,
    S_OPT_KEY_FILE,
    S_OPT_TIMEOUT,
    S_OPT_WAIT,
    S_OPT_JSON,
    S_OPT_LOCAL,
    S_OPT_STATEFUL,
    S_OPT_FENCED,
    S_OPT_PARALLELISM,
    S_OPT_WEIGHT,
    S_OPT_COMMAND,
    S_OPT_REQUIRE,
    S_OPT_MIN,
    S_OPT_NEW_KEY_FILE,
    S_OPT_LEAVE,
    S_OPT_NO_WAIT,
};

#define S_OPTIONS_MAX 16

//  The options command takes: the common ones, then its own, then the end.
static void
s_options (const s_command_t *command, struct option *options)
{
    static const struct option common[] = {
        { "help", no_argument, NULL, 'h' },
        { "json", no_argument, NULL, S_OPT_JSON },
        { "data-dir", required_argument, NULL, S_OPT_DATA_DIR },
        { "control", required_argument, NULL, S_OPT_CONTROL },
        { "key-file", required_argument, NULL, S_OPT_KEY_FILE },
        { "timeout", required_argument, NULL, S_OPT_TIMEOUT },
        { "wait", required_argument, NULL, S_OPT_WAIT },
    };
    static const struct option status[] = { { "local", no_argument, NULL, S_OPT_LOCAL } };
    static const struct option submit[] = {
        { "stateful", no_argument, NULL, S_OPT_STATEFUL },
        { "fenced", no_argument, NULL, S_OPT_FENCED },
        { "parallelism", required_argument, NULL, S_OPT_PARALLELISM },
        { "weight", required_argument, NULL, S_OPT_WEIGHT },
        { "command", required_argument, NULL, S_OPT_COMMAND },
        { "require", required_argument, NULL, S_OPT_REQUIRE },
    };
    static const struct option rescale[] = { { "min", required_argument, NULL, S_OPT_MIN } };
    static const struct option keys[] = {
        { "new-key-file", required_argument, NULL, S_OPT_NEW_KEY_FILE },
    };
    static const struct option drain[] = {
        { "leave", no_argument, NULL, S_OPT_LEAVE },
        { "no-wait", no_argument, NULL, S_OPT_NO_WAIT },
    };
    const struct option *own = command->op == SHOAL_OP_STATUS    ? status
                               : command->op == SHOAL_OP_SUBMIT  ? submit
                               : command->op == SHOAL_OP_RESCALE ? rescale
                               : command->op == SHOAL_OP_KEYS    ? keys
                               : command->op == SHOAL_OP_DRAIN   ? drain
                                                                 : NULL;
    size_t own_count = command->op == SHOAL_OP_STATUS    ? sizeof status / sizeof *status
                       : command->op == SHOAL_OP_SUBMIT  ? sizeof submit / sizeof *submit
                       : command->op == SHOAL_OP_RESCALE ? sizeof rescale / sizeof *rescale
                       : command->op == SHOAL_OP_KEYS    ? sizeof keys / sizeof *keys
                       : command->op == SHOAL_OP_DRAIN   ? sizeof drain / sizeof *drain
                                                         : 0;
    size_t count = sizeof common / sizeof *common;
    memcpy (options, common, sizeof common);
    if (own)
        memcpy (options + count, own, own_count * sizeof *own);
    options[count + own_count] = (struct option){ NULL, 0, NULL, 0 };
}

//  Parses a number of min to max, the whole value; -1 when it is not one.
static long
s_number (const char *value, long min, long max)
{
    char *end;
    long number = strtol (value, &end, 10);
    return *end || number < min || number > max ? -1 : number;
}

//  One --require KEY=VALUE.
static int
s_require (const s_command_t *command, s_args_t *args, const char *value)
{
    const char *equals = strchr (value, '=');
    size_t n = args->spec.require_count;
    if (!equals || equals == value || !equals[1] || strlen (value) >= sizeof args->require_text[0])
        return s_usage_error (command, "--require takes KEY=VALUE, not", value);
    if (n == SHOAL_LABELS_MAX)
        return s_usage_error (command, "at most 16 --require labels", NULL);
    snprintf (args->require_text[n], sizeof args->require_text[n], "%s", value);
    args->require_text[n][equals - value] = 0;
    args->require[n] =
        (shoal_label_t){ args->require_text[n], args->require_text[n] + (equals - value) + 1 };
    args->spec.require_count++;
    return 0;
}

//  One option that takes a number.
static int
s_numeric (const s_command_t *command, s_args_t *args, int code, const char *value)
{
    if (code == S_OPT_PARALLELISM) {
        args->parallelism = s_number (value, 1, SHOAL_PARALLELISM_MAX);
        if (args->parallelism < 0)
            return s_usage_error (command, "--parallelism takes 1 to 65535, not", value);
    } else if (code == S_OPT_WEIGHT) {
        long weight = s_number (value, 1, 1000000);
        if (weight < 0)
            return s_usage_error (command, "--weight takes 1 to 1000000, not", value);
        args->spec.weight = (uint32_t) weight;
    } else {
        args->min = s_number (value, 0, SHOAL_PARALLELISM_MAX);
        if (args->min < 0)
            return s_usage_error (command, "--min takes 0 to 65535, not", value);
    }
    return 0;
}

//  One option getopt_long found: 0, or EXIT_USAGE when its value is wrong.
static int
s_option (const s_command_t *command, s_args_t *args, int code, const char *value)
{
    if (code == 'h')
        args->help = true;
    else if (code == S_OPT_JSON)
        args->json = true;
    else if (code == S_OPT_LOCAL)
        args->local = true;
    else if (code == S_OPT_LEAVE)
        args->leave = true;
    else if (code == S_OPT_NO_WAIT)
        args->no_wait = true;
    else if (code == S_OPT_STATEFUL)
        args->spec.stateful = true;
    else if (code == S_OPT_FENCED)
        args->spec.fenced = true;
    else if (code == S_OPT_DATA_DIR)
        args->data_dir = value;
    else if (code == S_OPT_CONTROL)
        args->control = value;
    else if (code == S_OPT_KEY_FILE)
        args->key_file = value;
    else if (code == S_OPT_NEW_KEY_FILE)
        args->new_key_file = value;
    else if (code == S_OPT_COMMAND)
        args->spec.command = value;
    else if (code == S_OPT_REQUIRE)
        return s_require (command, args, value);
    else if (code == S_OPT_TIMEOUT || code == S_OPT_WAIT) {
        const char *flag = code == S_OPT_TIMEOUT ? "--timeout" : "--wait";
        uint64_t *ms = code == S_OPT_TIMEOUT ? &args->timeout_ms : &args->wait_ms;
        if (shoal_options_duration (flag, value, ms, NULL, 0) != 0)
            return s_usage_error (command, "not a duration (as 500ms, 30s, 2m):", value);
    } else
        return s_numeric (command, args, code, value);
    return 0;
}

//  One argument that is not an option.
static int
s_positional (const s_command_t *command, s_args_t *args, const char *arg)
{
    if (args->positionals == command->args)
        return s_usage_error (command, "one argument too many:", arg);
    args->positional[args->positionals++] = arg;
    return 0;
}

//  Reads argv (argc arguments, from argv[0]) by getopt_long, in order, so
//  that the first mistake is the one reported, and --help stops there.
static int
s_scan (const s_command_t *command, s_args_t *args, int argc, char **argv)
{
    struct option options[S_OPTIONS_MAX];
    s_options (command, options);
    //  getopt reads from argv[1]: argv[0] is a program's name.
    char **line = calloc ((size_t) argc + 2, sizeof *line);
    if (!line) {
        fprintf (stderr, "shoal %s: out of memory\n", command->name);
        return EXIT_FAILED;
    }
    line[0] = (char *) command->name;
    memcpy (line + 1, argv, (size_t) argc * sizeof *argv);
    //  "-" first: arguments come back in order (code 1); ":" then: a
    //  missing value is ':' and getopt prints nothing.
    int rc = 0, code;
    optind = 0;
    opterr = 0;
    while (rc == 0 && !args->help &&
           (code = getopt_long (argc + 1, line, "-:h", options, NULL)) != -1)
        if (code == 1)
            rc = s_positional (command, args, optarg);
        else if (code == ':')
            rc = s_usage_error (command, "needs a value:", line[optind - 1]);
        else if (code == '?' && optopt > 0 && optopt < 256) {
            //  A short option, perhaps one of a group: name it alone.
            char flag[3] = { '-', (char) optopt, 0 };
            rc = s_usage_error (command, "unknown option", flag);
        } else if (code == '?')
            //  A long one, unknown, ambiguous, or given a value it does
            //  not take: as written.
            rc = s_usage_error (command, "unknown option", line[optind - 1]);
        else
            rc = s_option (command, args, code, optarg);
    //  After "--", every argument is a positional one.
    for (int i = optind; rc == 0 && !args->help && i <= argc; i++)
        rc = s_positional (command, args, line[i]);
    free (line);
    return rc;
}

//  ---------------------------------------------------------------------
//  shoal keys

static const char *const s_key_ops[] = { "list", "install", "use", "remove" };

//  The operation a `shoal keys` command line names, or -1.
static int
s_keys_op (const s_args_t *args)
{
    for (int op = 0; args->positionals > 0 && op < 4; op++)
        if (strcmp (args->positional[0], s_key_ops[op]) == 0)
            return op;
    return -1;
}

static int
s_keys_check (const s_command_t *command, const s_args_t *args)
{
    int op = s_keys_op (args);
    if (args->positionals == 0)
        return s_usage_error (command, "needs list, install, use or remove", NULL);
    if (op < 0)
        return s_usage_error (command, "takes list, install, use or remove, not",
                              args->positional[0]);
    bool key = args->positionals == 2 || args->new_key_file;
    if (op == SHOAL_KEYS_LIST && key)
        return s_usage_error (command, "list takes no key", NULL);
    if (op != SHOAL_KEYS_LIST && !key)
        return s_usage_error (command, "needs a key: KEY, KEY-ID or --new-key-file FILE", NULL);
    if (args->positionals == 2 && args->new_key_file)
        return s_usage_error (command, "takes a key or --new-key-file, not both", NULL);
    if (op == SHOAL_KEYS_INSTALL && args->positionals == 2 && strlen (args->positional[1]) <= 8)
        return s_usage_error (command,
                              "install needs the key itself (the text shoal keygen prints), not",
                              args->positional[1]);
    return 0;
}

//  A key id as list prints it: 8 hex digits, no more, no less.
static int
s_key_id_parse (const char *text, uint32_t *id)
{
    if (strlen (text) != 8 || strspn (text, "0123456789abcdefABCDEF") != 8)
        return -1;
    *id = (uint32_t) strtoul (text, NULL, 16);
    return *id ? 0 : -1;
}

//  Fills req from the command line: the key from its file or its text,
//  or the key id. The key is also installed in keyring (not primary), so
//  that an answer sealed with it opens. 0, or EXIT_USAGE with the reason
//  said.
static int
s_keys_req (const s_command_t *command, const s_args_t *args, shoal_keyring_t *keyring,
            shoal_keys_req_t *req)
{
    *req = (shoal_keys_req_t){ .op = (uint8_t) s_keys_op (args) };
    if (req->op == SHOAL_KEYS_LIST)
        return 0;
    char why[200];
    if (args->new_key_file) {
        shoal_keyring_t *one = shoal_keyring_new ();
        snprintf (why, sizeof why, "out of memory");
        int rc = one ? shoal_key_file_load (one, args->new_key_file, why, sizeof why) : -1;
        if (rc == 0)
            memcpy (req->key, shoal_keyring_key (one, shoal_keyring_primary (one)), SHOAL_KEY_SIZE);
        shoal_keyring_destroy (&one);
        if (rc != 0) {
            fprintf (stderr, "shoal keys: --new-key-file %s: %s\n", args->new_key_file, why);
            return EXIT_USAGE;
        }
    } else if (shoal_key_parse (args->positional[1], req->key) != 0) {
        if (req->op == SHOAL_KEYS_INSTALL ||
            s_key_id_parse (args->positional[1], &req->key_id) != 0)
            return s_usage_error (command,
                                  "not a key (the text shoal keygen prints) nor a key id "
                                  "(the 8 hex digits shoal keys list prints):",
                                  args->positional[1]);
        return 0;
    }
    req->key_id = shoal_key_id (req->key);
    if (shoal_keyring_size (keyring) > 0 && !shoal_keyring_key (keyring, req->key_id)) {
        uint32_t primary = shoal_keyring_primary (keyring);
        shoal_keyring_install (keyring, req->key);
        shoal_keyring_use (keyring, primary);
    }
    if (req->op != SHOAL_KEYS_INSTALL)
        memset (req->key, 0, sizeof req->key); //  only install sends the key
    return 0;
}

//  The key ids the answer names, each once, in the order first seen.
static size_t
s_keys_seen (const shoal_control_rep_t *rep, uint64_t *ids, size_t max)
{
    size_t count = 0;
    for (uint32_t i = 0; i < rep->keyring_count; i++)
        for (uint32_t k = 0; k < rep->keyrings[i].key_count; k++) {
            size_t j = 0;
            while (j < count && ids[j] != rep->keyrings[i].keys[k])
                j++;
            if (j == count && count < max)
                ids[count++] = rep->keyrings[i].keys[k];
        }
    return count;
}

static bool
s_report_holds (const shoal_keyring_report_t *report, uint64_t id)
{
    for (uint32_t k = 0; k < report->key_count; k++)
        if (report->keys[k] == id)
            return true;
    return false;
}

//  list: one line per key id: how many members hold it, where it is primary.
static void
s_print_key_list (const shoal_control_rep_t *rep, json_t *out)
{
    uint64_t ids[SHOAL_KEYRING_MAX * 8];
    size_t count = s_keys_seen (rep, ids, sizeof ids / sizeof ids[0]);
    json_t *list = out ? json_array () : NULL;
    if (!out)
        printf ("%-8s  %-10s  %s\n", "KEY-ID", "HELD-BY", "PRIMARY-ON");
    for (size_t i = 0; i < count; i++) {
        size_t held = 0;
        char where[512] = "";
        json_t *primary = out ? json_array () : NULL;
        for (uint32_t n = 0; n < rep->keyring_count; n++) {
            const shoal_keyring_report_t *report = &rep->keyrings[n];
            held += s_report_holds (report, ids[i]);
            if (report->primary != ids[i])
                continue;
            if (primary)
                json_array_append_new (primary, json_string (report->name));
            size_t used = strlen (where);
            snprintf (where + used, sizeof where - used, "%s%s", used ? "," : "", report->name);
        }
        char id[9];
        snprintf (id, sizeof id, "%08x", (unsigned) ids[i]);
        if (list)
            json_array_append_new (list, json_pack ("{s:s, s:i, s:i, s:o}", "id", id, "held_by",
                                                    (int) held, "members", (int) rep->keyring_count,
                                                    "primary_on", primary));
        else
            printf ("%-8s  %zu of %-5u  %s\n", id, held, (unsigned) rep->keyring_count,
                    where[0] ? where : "-");
    }
    if (out)
        json_object_set_new (out, "keys", list);
}

//  Every member's answer, one line each; those that did not apply it are
//  named on standard error too.
static void
s_print_key_nodes (const shoal_control_rep_t *rep, json_t *out)
{
    json_t *list = out ? json_array () : NULL;
    if (!out)
        printf ("%-20s  %-9s  %-8s  %-26s  %s\n", "NODE", "RESULT", "PRIMARY", "KEYS", "REASON");
    for (uint32_t n = 0; n < rep->keyring_count; n++) {
        const shoal_keyring_report_t *report = &rep->keyrings[n];
        char keys[SHOAL_KEYRING_MAX * 9 + 1] = "", primary[9];
        json_t *ids = out ? json_array () : NULL;
        for (uint32_t k = 0; k < report->key_count && k < SHOAL_KEYRING_MAX; k++) {
            char id[9];
            snprintf (id, sizeof id, "%08x", (unsigned) report->keys[k]);
            if (ids)
                json_array_append_new (ids, json_string (id));
            snprintf (keys + strlen (keys), sizeof keys - strlen (keys), "%s%s", k ? "," : "", id);
        }
        snprintf (primary, sizeof primary, "%08x", (unsigned) report->primary);
        const char *code = report->code == SHOAL_REPLY_TIMED_OUT
                               ? "no-answer"
                               : s_name (NAMES (s_codes), report->code);
        char id[SHOAL_NODE_ID_TEXT];
        shoal_id_format (report->node.bytes, true, id);
        if (list)
            json_array_append_new (list, json_pack ("{s:s, s:s, s:s, s:s, s:s, s:o}", "id", id,
                                                    "name", report->name, "result", code, "reason",
                                                    report->reason, "primary",
                                                    report->key_count ? primary : "", "keys", ids));
        else
            printf ("%-20s  %-9s  %-8s  %-26s  %s\n", report->name, code,
                    report->key_count ? primary : "-", keys[0] ? keys : "-", report->reason);
        if (report->code != SHOAL_REPLY_OK)
            fprintf (stderr, "shoal keys: %s (%s): %s: %s\n", report->name, id, code,
                     report->reason);
    }
    if (out)
        json_object_set_new (out, "nodes", list);
}

static int
s_print_keys (const shoal_control_rep_t *rep, int op, bool json)
{
    const char *code = s_name (NAMES (s_codes), rep->code);
    json_t *out = json ? json_pack ("{s:s, s:s, s:s}", "operation", s_key_ops[op], "result", code,
                                    "reason", rep->reason ? rep->reason : "")
                       : NULL;
    if (!json && rep->reason && rep->reason[0] && rep->keyring_count)
        printf ("%s\n", rep->reason);
    if (rep->keyring_count && op == SHOAL_KEYS_LIST)
        s_print_key_list (rep, out);
    if (rep->keyring_count)
        s_print_key_nodes (rep, out);
    if (out) {
        json_dumpf (out, stdout, JSON_COMPACT);
        putchar ('\n');
        json_decref (out);
    }
    if (rep->code != SHOAL_REPLY_OK)
        fprintf (stderr, "shoal keys: %s: %s\n", code,
                 rep->reason && rep->reason[0] ? rep->reason : "refused");
    return rep->code == SHOAL_REPLY_OK ? 0 : EXIT_FAILED;
}

//  The checks that need the whole command line.
static int
s_check (const s_command_t *command, const s_args_t *args)
{
    if (command->op == SHOAL_OP_KEYS)
        return s_keys_check (command, args);
    bool node_op = command->op >= SHOAL_OP_CORDON && command->op <= SHOAL_OP_DRAIN;
    if (node_op && args->positionals && strlen (args->positional[0]) > SHOAL_NAME_MAX)
        return s_usage_error (command, "a node name is at most 64 bytes, not", args->positional[0]);
    if (args->leave && args->no_wait)
        return s_usage_error (command, "--leave waits for the drain: not with --no-wait", NULL);
    if (!node_op && args->positionals < command->args)
        return s_usage_error (command,
                              command->args == 2               ? "needs a job and a parallelism"
                              : command->op == SHOAL_OP_SUBMIT ? "needs a job name"
                                                               : "needs a job",
                              NULL);
    if (command->op == SHOAL_OP_SUBMIT && args->parallelism < 0)
        return s_usage_error (command, "needs --parallelism N", NULL);
    if (!node_op && command->args && strlen (args->positional[0]) > SHOAL_NAME_MAX) {
        char reason[96];
        snprintf (reason, sizeof reason,
                  "a job name is at most %d bytes; this one is %zu:", SHOAL_NAME_MAX,
                  strlen (args->positional[0]));
        return s_usage_error (command, reason, args->positional[0]);
    }
    if (args->control && args->control[0] && s_endpoint_check (args->control) != 0)
        return s_usage_error (command,
                              "--control takes ipc://PATH or tcp://HOST:PORT (as "
                              "tcp://127.0.0.1:7401), not",
                              args->control);
    return 0;
}

int
shoal_client_main (const char *name, int argc, char **argv)
{
    const s_command_t *command = NULL;
    for (size_t i = 0; i < sizeof s_commands / sizeof s_commands[0]; i++)
        if (strcmp (s_commands[i].name, name) == 0)
            command = &s_commands[i];
    if (!command)
        return -1;

    s_args_t args = { .data_dir = getenv ("SHOAL_DATA_DIR"),
                      .control = getenv ("SHOAL_CONTROL"),
                      .key_file = getenv ("SHOAL_KEY_FILE"),
                      .timeout_ms = 15000,
                      .wait_ms = 30000,
                      .spec = { .weight = 1, .command = "" },
                      .parallelism = -1 };
    if (command->op == SHOAL_OP_DRAIN)
        args.wait_ms = 600000;
    int scanned = s_scan (command, &args, argc, argv);
    if (scanned != 0)
        return scanned;
    if (args.help) {
        printf ("%s\noptions:\n%s", command->usage, s_common);
        return 0;
    }
    if (s_check (command, &args) != 0)
        return EXIT_USAGE;
    const char *data_dir = args.data_dir, *control = args.control, *key_file = args.key_file;
    const char *const *positional = args.positional;
    uint64_t timeout_ms = args.timeout_ms, wait_ms = args.wait_ms;
    bool json = args.json, local = args.local;
    shoal_jobspec_t spec = args.spec;
    shoal_label_t *require = args.require;
    long parallelism = args.parallelism, min = args.min;

    shoal_control_req_t req = { .id = 1, .op = (uint8_t) command->op };
    shoal_keys_req_t keys = { 0 };
    int keyed = 0;
    if (command->op == SHOAL_OP_KEYS)
        req.keys = &keys;
    if (command->op == SHOAL_OP_SUBMIT) {
        spec.name = positional[0];
        spec.parallelism = (uint32_t) parallelism;
        spec.require = require;
        req.job = positional[0];
        req.spec = &spec;
    } else if (command->op == SHOAL_OP_RESCALE) {
        char *end;
        long target = strtol (positional[1], &end, 10);
        if (*end || target < 1 || target > SHOAL_PARALLELISM_MAX)
            return s_usage_error (command, "the parallelism is 1 to 65535, not", positional[1]);
        if (min > target)
            return s_usage_error (command, "--min is above the parallelism asked", NULL);
        req.job = positional[0];
        req.parallelism = (uint32_t) target;
        req.min = (uint32_t) min;
        req.timeout_ms = wait_ms > UINT32_MAX ? UINT32_MAX : (uint32_t) wait_ms;
        timeout_ms += wait_ms;
    } else if (command->op == SHOAL_OP_REMOVE)
        req.job = positional[0];
    else if (command->op >= SHOAL_OP_CORDON && command->op <= SHOAL_OP_DRAIN) {
        req.job = args.positionals ? positional[0] : "";
        req.leave = args.leave;
    } else if (command->op == SHOAL_OP_STATUS && !local)
        //  How long the node waits for the leader's table: a third of the
        //  client's wait, so that its own answer comes in time after.
        req.timeout_ms = (uint32_t) (timeout_ms / 3 < 5000 ? timeout_ms / 3 : 5000);

    char endpoint[SHOAL_OPTIONS_VALUE_MAX + 32];
    if (control && control[0])
        snprintf (endpoint, sizeof endpoint, "%s", control);
    else
        snprintf (endpoint, sizeof endpoint, "ipc://%s/control",
                  data_dir && data_dir[0] ? data_dir : "shoal-data");
    shoal_keyring_t *keyring = shoal_keyring_new ();
    shoal_arena_t arena = { 0 }, names = { 0 };
    int rc = EXIT_FAILED, called;
    char why[512] = "";
    shoal_control_rep_t rep, members = { 0 };
    if (!keyring || shoal_arena_init (&arena, SHOAL_CONTROL_ARENA) != 0)
        fprintf (stderr, "shoal %s: out of memory\n", command->name);
    else if (key_file && key_file[0] &&
             shoal_key_file_load (keyring, key_file, why, sizeof why) != 0) {
        fprintf (stderr, "shoal %s: --key-file %s: %s\n", command->name, key_file, why);
        rc = EXIT_USAGE;
    } else if (command->op == SHOAL_OP_KEYS &&
               (keyed = s_keys_req (command, &args, keyring, &keys)) != 0)
        rc = keyed;
    else if ((called = shoal_control_call (endpoint, keyring, &req, timeout_ms, &arena, &rep, why,
                                           sizeof why)) == -2) {
        //  The request breaks a limit of the wire: the user's to change.
        fprintf (stderr, "shoal %s: %s\n", command->name, why);
        rc = EXIT_USAGE;
    } else if (called != 0)
        s_call_failed (command, why, control, data_dir);
    else if (rep.code != SHOAL_REPLY_OK &&
             (command->op == SHOAL_OP_MEMBERS || command->op == SHOAL_OP_JOBS ||
              command->op == SHOAL_OP_STATUS))
        //  Refused: a keyed node asked without the key says so.
        fprintf (stderr, "shoal %s: %s: %s\n", command->name, s_name (NAMES (s_codes), rep.code),
                 rep.reason && rep.reason[0] ? rep.reason : "refused");
    else if (command->op == SHOAL_OP_MEMBERS) {
        s_print_members (&rep, json);
        rc = 0;
    } else if (command->op == SHOAL_OP_JOBS) {
        s_print_jobs (&rep, json);
        rc = 0;
    } else if (command->op == SHOAL_OP_STATUS) {
        //  Names for the table: the members, asked of the same node.
        shoal_control_req_t ask = { .id = 2, .op = SHOAL_OP_MEMBERS };
        if (shoal_arena_init (&names, SHOAL_CONTROL_ARENA) == 0)
            shoal_control_call (endpoint, keyring, &ask, timeout_ms, &names, &members, why,
                                sizeof why);
        s_print_status (&rep, &members, json);
        if (rep.reason && rep.reason[0] && !local)
            fprintf (stderr, "shoal status: %s\n", rep.reason);
        rc = 0;
    } else if (command->op == SHOAL_OP_KEYS)
        rc = s_print_keys (&rep, keys.op, json);
    else if (command->op == SHOAL_OP_DRAIN && rep.code == SHOAL_REPLY_OK && !args.no_wait) {
        shoal_drain_t drain = { endpoint, keyring, req.job, timeout_ms, wait_ms, args.leave, json };
        rc = shoal_drain_follow (&drain, &rep);
    } else
        rc = s_print_change (command, &rep, json);
    sodium_memzero (&keys, sizeof keys);
    if (fflush (stdout) != 0)
        rc = EXIT_FAILED;
    shoal_arena_release (&names);
    shoal_arena_release (&arena);
    shoal_keyring_destroy (&keyring);
    return rc;
}

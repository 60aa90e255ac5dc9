/*  node/keys.c: live key rotation (`shoal keys`), and the keyring kept in
    the data directory.

    A client asks one node (CONTROL-REQ KEYS). A node that does not act as
    leader relays the operation to the leader (KEYS, relay true) and hands
    back its answer. The leader runs one operation at a time, in two
    phases, each a KEYS to every live member (alive or suspect, itself
    included) and a wait for their KEYS-ACKs:

    1. list: every member answers with the keys it holds and its primary;
    2. apply, unless the answers forbid it: use needs every live member to
       hold the key; remove refuses a key that is primary anywhere, or the
       last key of any member, and both refuse when a member did not answer
       (what it holds cannot be told). docs/wire.md, section 3.4, has why.

    Each member applies the operation to its keyring, keeps the keyring in
    its data directory (node/keyfile.h), and answers. The leader answers
    the client with every member's answer; one that did not answer within
    the wait is listed as not answering. A node without a key runs in
    plaintext, and refuses every key operation: a key sent in plaintext is
    no secret.
*/

#include "node/keys.h"

#include "node/key.h"
#include "node/keyfile.h"
#include "node/why.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//  How long a phase waits for the members' answers, and a relaying node
//  for the leader's (both phases, and the way there and back).
#define S_PHASE_MS 3000
#define S_RELAY_MS 9000
//  Operations a node relays to the leader at once; more are refused.
#define S_RELAYS_MAX 8
//  KEYS ids of relays have the high bit set, the leader's phases not.
#define S_RELAY_ID 0x80000000u

typedef struct {
    shoal_id_t node;
    bool answered;
    char name[SHOAL_NAME_MAX + 1];
    char reason[SHOAL_REASON_MAX + 1];
    uint64_t keys[SHOAL_KEYRING_MAX];
    shoal_keyring_report_t report;
} s_target_t;

//  Who asked for the operation the leader runs: a client of its own
//  (ref), or a member that relays one (from, with its KEYS id).
typedef struct {
    uint64_t ref;
    bool relayed;
    shoal_life_t from;
    uint32_t id;
} s_origin_t;

typedef struct {
    bool used;
    uint64_t ref;
    uint32_t id;
    shoal_id_t leader;
    uint64_t deadline;
} s_relay_t;

struct _shoal_keyops_t {
    //  The operation this node runs as leader (phase 0: none).
    int phase;
    uint32_t id; //  of the phase's KEYS
    shoal_keys_req_t req;
    s_origin_t origin;
    uint64_t deadline;
    s_target_t *targets;
    size_t target_count;
    //  The operations this node relays.
    s_relay_t relays[S_RELAYS_MAX];
    uint32_t last_id;
};

static const char *const s_op_names[] = { "list", "install", "use", "remove" };

//  ---------------------------------------------------------------------
//  The keyring kept in the data directory

int
shoal_keys_load (shoal_actor_t *self, char *why, size_t why_size)
{
    void *bytes = NULL;
    size_t size = 0;
    char reason[200];
    int rc =
        shoal_store_read (self->store, SHOAL_KEYFILE_NAME, &bytes, &size, reason, sizeof reason);
    if (rc == 1)
        return 0; //  never rotated: the --key-file's key, if any
    shoal_keyring_t *kept = rc == 0 ? shoal_keyring_new () : NULL;
    if (rc == 0 && !kept)
        snprintf (reason, sizeof reason, "out of memory");
    else if (rc == 0 && shoal_keyfile_decode (bytes, size, kept, reason, sizeof reason) != 0)
        rc = -1;
    if (bytes)
        sodium_memzero (bytes, size);
    free (bytes);
    if (rc != 0 || !kept) {
        shoal_keyring_destroy (&kept);
        return shoal_why (why, why_size,
                          "data-dir %s: the keyring kept there cannot be used: %s (remove %s/%s "
                          "to start from --key-file alone)",
                          self->options->data_dir, reason, self->options->data_dir,
                          SHOAL_KEYFILE_NAME);
    }
    uint32_t given = shoal_keyring_primary (self->keyring);
    if (given && !shoal_keyring_key (kept, given))
        shoal_actor_notice (self,
                            "key-file %s holds key %08x, which a key rotation removed: this node "
                            "uses the keyring it kept (primary %08x)",
                            self->options->key_file, given, shoal_keyring_primary (kept));
    shoal_keyring_destroy (&self->keyring);
    self->keyring = kept;
    return 0;
}

//  Keeps the keyring in the data directory. 0, or -1 with the reason.
static int
s_keep (shoal_actor_t *self, char *why, size_t why_size)
{
    uint8_t payload[SHOAL_KEYFILE_MAX];
    long size = shoal_keyfile_encode (self->keyring, payload);
    int rc = size < 0 ? shoal_why (why, why_size, "the keyring is empty")
                      : shoal_store_write (self->store, SHOAL_KEYFILE_NAME, payload, (size_t) size,
                                           why, why_size);
    sodium_memzero (payload, sizeof payload);
    return rc;
}

//  ---------------------------------------------------------------------
//  One node's part: apply an operation to its own keyring

//  Fills target with this node's keyring, code and reason.
static void
s_report (shoal_actor_t *self, s_target_t *target, int code, const char *reason)
{
    target->answered = true;
    snprintf (target->reason, sizeof target->reason, "%s", reason);
    size_t count = shoal_keyring_size (self->keyring);
    for (size_t i = 0; i < count; i++)
        target->keys[i] = shoal_keyring_id_at (self->keyring, i);
    target->report = (shoal_keyring_report_t){ .node = self->id,
                                               .name = target->name,
                                               .code = (uint8_t) code,
                                               .reason = target->reason,
                                               .primary = shoal_keyring_primary (self->keyring),
                                               .key_count = (uint32_t) count,
                                               .keys = target->keys };
}

//  Applies req (about key id) to ring: the reply code, a note or why not
//  in reason, and whether the keyring changed.
static int
s_change (shoal_keyring_t *ring, const shoal_keys_req_t *req, uint32_t id, char *reason,
          size_t size, bool *changed)
{
    bool held = shoal_keyring_key (ring, id) != NULL;
    *changed = false;
    if (shoal_keyring_size (ring) == 0) {
        snprintf (reason, size, "this node runs without a key (no --key-file)");
        return SHOAL_REPLY_FAILED;
    }
    switch (req->op) {
    case SHOAL_KEYS_INSTALL:
        if (held) {
            snprintf (reason, size, "held already");
            return SHOAL_REPLY_OK;
        }
        if (shoal_keyring_size (ring) == SHOAL_KEYRING_MAX) {
            snprintf (reason, size, "the keyring is full (%d keys): remove one first",
                      SHOAL_KEYRING_MAX);
            return SHOAL_REPLY_FAILED;
        }
        *changed = shoal_keyring_install (ring, req->key) == 0;
        return *changed ? SHOAL_REPLY_OK : SHOAL_REPLY_FAILED;
    case SHOAL_KEYS_USE:
        if (!held) {
            snprintf (reason, size, "key %08x is not installed here", id);
            return SHOAL_REPLY_FAILED;
        }
        *changed = shoal_keyring_primary (ring) != id;
        shoal_keyring_use (ring, id);
        return SHOAL_REPLY_OK;
    case SHOAL_KEYS_REMOVE:
        if (!held) {
            snprintf (reason, size, "not held");
            return SHOAL_REPLY_OK;
        }
        if (shoal_keyring_primary (ring) == id) {
            snprintf (reason, size, "key %08x is this node's primary", id);
            return SHOAL_REPLY_FAILED;
        }
        *changed = shoal_keyring_remove (ring, id) == 0;
        return *changed ? SHOAL_REPLY_OK : SHOAL_REPLY_FAILED;
    default:
        return SHOAL_REPLY_OK; //  list
    }
}

//  Applies req to this node's keyring and keeps it; the outcome in target.
static void
s_apply (shoal_actor_t *self, const shoal_keys_req_t *req, s_target_t *target)
{
    char reason[SHOAL_REASON_MAX + 1] = "";
    uint32_t id = req->op == SHOAL_KEYS_INSTALL ? shoal_key_id (req->key) : req->key_id;
    bool changed;
    int code = s_change (self->keyring, req, id, reason, sizeof reason, &changed);
    if (changed) {
        char why[200];
        if (s_keep (self, why, sizeof why) != 0) {
            code = SHOAL_REPLY_FAILED;
            snprintf (reason, sizeof reason, "applied, but not kept (a restart loses it): %.200s",
                      why);
        }
        shoal_actor_notice (self, "keys: %s key %08x: now %zu keys, primary %08x%s%s",
                            s_op_names[req->op], id, shoal_keyring_size (self->keyring),
                            shoal_keyring_primary (self->keyring), reason[0] ? ": " : "", reason);
        //  The beacon is sealed again at once, with the primary of now.
        self->beacon_at = 0;
    }
    s_report (self, target, code, reason);
}

//  ---------------------------------------------------------------------
//  The leader's part: both phases over every live member

static void
s_send_keys (shoal_actor_t *self, const shoal_id_t *to, uint32_t id, bool relay,
             const shoal_keys_req_t *req)
{
    shoal_msg_t msg = { .type = SHOAL_MSG_KEYS };
    msg.u.keys = (shoal_keys_t){ .id = id, .relay = relay, .req = *req };
    shoal_life_t life = { .life = 0 };
    memcpy (life.id, to->bytes, SHOAL_ID_SIZE);
    shoal_actor_send (self, &life, NULL, &msg);
    sodium_memzero (&msg, sizeof msg);
}

//  The live members (alive or suspect), this node first, as targets.
static int
s_targets (shoal_actor_t *self, shoal_keyops_t *ops)
{
    shoal_membership_t *membership = shoal_peer_membership (self->peer);
    size_t size = shoal_membership_size (membership);
    free (ops->targets);
    ops->target_count = 0;
    ops->targets = calloc (size + 1, sizeof *ops->targets);
    if (!ops->targets)
        return -1;
    s_target_t *own = &ops->targets[ops->target_count++];
    own->node = self->id;
    for (size_t i = 0; i < size; i++) {
        shoal_membership_member_t member;
        if (shoal_membership_member_at (membership, i, &member) != 0 ||
            (member.state != SHOAL_MEMBER_ALIVE && member.state != SHOAL_MEMBER_SUSPECT))
            continue;
        s_target_t *target = &ops->targets[0];
        if (memcmp (&member.node, &self->id, sizeof self->id) != 0)
            target = &ops->targets[ops->target_count++];
        target->node = member.node;
        if (member.meta && member.meta->name)
            snprintf (target->name, sizeof target->name, "%s", member.meta->name);
    }
    for (size_t i = 0; i < ops->target_count; i++)
        if (!ops->targets[i].name[0])
            shoal_id_format (ops->targets[i].node.bytes, true, ops->targets[i].name);
    return 0;
}

//  Starts a phase: this node's part now, the others' by KEYS.
static void
s_phase (shoal_actor_t *self, uint64_t now, int phase)
{
    shoal_keyops_t *ops = self->keyops;
    ops->phase = phase;
    ops->id = ++ops->last_id & ~S_RELAY_ID;
    ops->deadline = now + S_PHASE_MS;
    shoal_keys_req_t req = ops->req;
    if (phase == 1) {
        req.op = SHOAL_KEYS_LIST;
        memset (req.key, 0, sizeof req.key);
    }
    for (size_t i = 0; i < ops->target_count; i++) {
        s_target_t *target = &ops->targets[i];
        target->answered = false;
        if (i == 0)
            s_apply (self, &req, target);
        else
            s_send_keys (self, &target->node, ops->id, false, &req);
    }
    sodium_memzero (&req, sizeof req);
}

//  Appends the names of the targets that match to text, comma separated.
static void
s_names (const shoal_keyops_t *ops, char *text, size_t size,
         bool (*match) (const s_target_t *, uint32_t), uint32_t id)
{
    size_t used = strlen (text);
    bool first = true;
    for (size_t i = 0; i < ops->target_count && used + 1 < size; i++)
        if (match (&ops->targets[i], id)) {
            snprintf (text + used, size - used, "%s%s", first ? "" : ", ", ops->targets[i].name);
            used = strlen (text);
            first = false;
        }
}

static bool
s_silent (const s_target_t *target, uint32_t id)
{
    (void) id;
    return !target->answered;
}

static bool
s_failed (const s_target_t *target, uint32_t id)
{
    (void) id;
    return target->answered && target->report.code != SHOAL_REPLY_OK;
}

static bool
s_holds (const s_target_t *target, uint32_t id)
{
    for (uint32_t i = 0; i < target->report.key_count; i++)
        if (target->keys[i] == id)
            return true;
    return false;
}

static bool
s_lacks (const s_target_t *target, uint32_t id)
{
    return !s_holds (target, id);
}

static bool
s_primary (const s_target_t *target, uint32_t id)
{
    return target->report.primary == id;
}

static bool
s_last (const s_target_t *target, uint32_t id)
{
    return target->report.key_count == 1 && target->keys[0] == id;
}

static size_t
s_count (const shoal_keyops_t *ops, bool (*match) (const s_target_t *, uint32_t), uint32_t id)
{
    size_t count = 0;
    for (size_t i = 0; i < ops->target_count; i++)
        count += match (&ops->targets[i], id);
    return count;
}

//  After the list phase: why the operation may not go on, or "" when it
//  may (in text, of size bytes).
static void
s_refusal (const shoal_keyops_t *ops, char *text, size_t size)
{
    uint32_t id = ops->req.key_id;
    text[0] = 0;
    if (ops->req.op == SHOAL_KEYS_LIST || ops->req.op == SHOAL_KEYS_INSTALL)
        return;
    if (s_count (ops, s_silent, 0)) {
        snprintf (text, size, "cannot tell what every live member holds: did not answer: ");
        s_names (ops, text, size, s_silent, 0);
    } else if (s_count (ops, s_failed, 0)) {
        for (size_t i = 0; i < ops->target_count && !text[0]; i++)
            if (s_failed (&ops->targets[i], 0))
                snprintf (text, size, "%s refused: %.160s", ops->targets[i].name,
                          ops->targets[i].reason);
    } else if (s_count (ops, s_holds, id) == 0)
        snprintf (text, size, "unknown key id %08x: no live member holds it", id);
    else if (ops->req.op == SHOAL_KEYS_USE && s_count (ops, s_lacks, id)) {
        snprintf (text, size, "key %08x is not installed on: ", id);
        s_names (ops, text, size, s_lacks, id);
        snprintf (text + strlen (text), size - strlen (text), " (install it there first)");
    } else if (ops->req.op == SHOAL_KEYS_REMOVE && s_count (ops, s_primary, id)) {
        snprintf (text, size, "key %08x is the primary of: ", id);
        s_names (ops, text, size, s_primary, id);
        snprintf (text + strlen (text), size - strlen (text), " (use another key first)");
    } else if (ops->req.op == SHOAL_KEYS_REMOVE && s_count (ops, s_last, id)) {
        snprintf (text, size, "key %08x is the last key of: ", id);
        s_names (ops, text, size, s_last, id);
    }
    text[shoal_text_cut (text, strlen (text))] = 0;
}

//  Gives origin the answer: code, reason, and count reports.
static void
s_give (shoal_actor_t *self, const s_origin_t *origin, int code, const char *reason,
        shoal_keyring_report_t *reports, uint32_t count)
{
    if (origin->relayed) {
        shoal_msg_t msg = { .type = SHOAL_MSG_KEYS_ACK };
        msg.u.keys_ack = (shoal_keys_ack_t){ .id = origin->id,
                                             .code = (uint8_t) code,
                                             .reason = reason,
                                             .node_count = count,
                                             .nodes = reports };
        shoal_actor_send (self, &origin->from, NULL, &msg);
    } else {
        shoal_control_rep_t rep = {
            .code = (uint8_t) code, .reason = reason, .keyring_count = count, .keyrings = reports
        };
        shoal_control_server_answer (self->control, origin->ref, &rep);
    }
}

//  Answers whoever asked, with every target's report, and ends the
//  operation.
static void
s_finish (shoal_actor_t *self, int code, const char *reason)
{
    shoal_keyops_t *ops = self->keyops;
    shoal_keyring_report_t *reports = calloc (ops->target_count + 1, sizeof *reports);
    for (size_t i = 0; reports && i < ops->target_count; i++) {
        s_target_t *target = &ops->targets[i];
        if (!target->answered)
            target->report = (shoal_keyring_report_t){ .node = target->node,
                                                       .name = target->name,
                                                       .code = SHOAL_REPLY_TIMED_OUT,
                                                       .reason = "did not answer in time" };
        reports[i] = target->report;
    }
    if (reports)
        s_give (self, &ops->origin, code, reason, reports, (uint32_t) ops->target_count);
    else
        s_give (self, &ops->origin, SHOAL_REPLY_FAILED, "out of memory", NULL, 0);
    free (reports);
    sodium_memzero (&ops->req, sizeof ops->req);
    free (ops->targets);
    ops->targets = NULL;
    ops->target_count = 0;
    ops->phase = 0;
}

//  Moves the operation on once every target answered, or the wait ended.
static void
s_advance (shoal_actor_t *self, uint64_t now)
{
    shoal_keyops_t *ops = self->keyops;
    if (!ops->phase || (s_count (ops, s_silent, 0) && now < ops->deadline))
        return;
    char text[SHOAL_REASON_MAX + 1];
    if (ops->phase == 1 && ops->req.op != SHOAL_KEYS_LIST) {
        s_refusal (ops, text, sizeof text);
        if (text[0])
            s_finish (self, SHOAL_REPLY_INVALID, text);
        else
            s_phase (self, now, 2);
        //  A cluster of one is done at once.
        if (ops->phase == 2 && !s_count (ops, s_silent, 0))
            s_advance (self, now);
        return;
    }
    size_t applied = ops->target_count - s_count (ops, s_failed, 0) - s_count (ops, s_silent, 0);
    snprintf (text, sizeof text, "%s: %zu of %zu live members %s", s_op_names[ops->req.op], applied,
              ops->target_count, ops->req.op == SHOAL_KEYS_LIST ? "answered" : "applied it");
    s_finish (self, applied == ops->target_count ? SHOAL_REPLY_OK : SHOAL_REPLY_FAILED, text);
}

//  Starts req for origin on this node, which acts as leader. The answer
//  is a refusal now when another operation runs, else both phases'.
static void
s_start (shoal_actor_t *self, uint64_t now, const shoal_keys_req_t *req, s_origin_t origin)
{
    shoal_keyops_t *ops = self->keyops;
    if (ops->phase) {
        s_give (self, &origin, SHOAL_REPLY_INVALID, "another key operation is under way: try again",
                NULL, 0);
        return;
    }
    ops->origin = origin;
    ops->req = *req;
    if (s_targets (self, ops) != 0) {
        s_finish (self, SHOAL_REPLY_FAILED, "out of memory");
        return;
    }
    s_phase (self, now, req->op == SHOAL_KEYS_INSTALL ? 2 : 1);
    s_advance (self, now);
}

//  ---------------------------------------------------------------------
//  Requests, messages and deadlines

static shoal_keyops_t *
s_ops (shoal_actor_t *self)
{
    if (!self->keyops)
        self->keyops = calloc (1, sizeof *self->keyops);
    return self->keyops;
}

//  Answers the client now, with code and reason.
static void
s_answer (shoal_actor_t *self, uint64_t ref, int code, const char *reason)
{
    shoal_control_rep_t rep = { .code = (uint8_t) code, .reason = reason };
    shoal_control_server_answer (self->control, ref, &rep);
}

void
shoal_keys_request (shoal_actor_t *self, uint64_t now, uint64_t ref, const shoal_control_req_t *req)
{
    shoal_keyops_t *ops = s_ops (self);
    shoal_id_t leader;
    uint64_t term;
    s_relay_t *relay = NULL;
    for (size_t i = 0; ops && i < S_RELAYS_MAX && !relay; i++)
        if (!ops->relays[i].used)
            relay = &ops->relays[i];
    if (!ops)
        s_answer (self, ref, SHOAL_REPLY_FAILED, "out of memory");
    else if (!req->keys)
        s_answer (self, ref, SHOAL_REPLY_INVALID, "a keys request names no operation");
    else if (shoal_keyring_size (self->keyring) == 0)
        s_answer (self, ref, SHOAL_REPLY_INVALID,
                  "this node runs without a key (no --key-file): start the cluster with one to "
                  "rotate it");
    else if (req->keys->op == SHOAL_KEYS_INSTALL &&
             shoal_key_id (req->keys->key) != req->keys->key_id)
        s_answer (self, ref, SHOAL_REPLY_INVALID, "the key id does not match the key");
    else if (shoal_elector_acting (shoal_peer_elector (self->peer), now))
        s_start (self, now, req->keys, (s_origin_t){ .ref = ref });
    else if (shoal_peer_leader (self->peer, now, &leader, &term) != 0)
        s_answer (self, ref, SHOAL_REPLY_NO_LEADER, "no leader acts now: try again");
    else if (!relay)
        s_answer (self, ref, SHOAL_REPLY_INVALID,
                  "too many key operations wait for the leader: try again");
    else {
        *relay = (s_relay_t){ .used = true,
                              .ref = ref,
                              .id = S_RELAY_ID | (++ops->last_id & ~S_RELAY_ID),
                              .leader = leader,
                              .deadline = now + S_RELAY_MS };
        s_send_keys (self, &leader, relay->id, true, req->keys);
    }
}

//  A KEYS: a member's part (from the leader), or an operation a member
//  relays to this node as leader.
static void
s_keys_in (shoal_actor_t *self, uint64_t now, const shoal_transport_in_t *in)
{
    const shoal_keys_t *keys = &in->msg.u.keys;
    s_origin_t origin = { .relayed = true, .from = in->envelope.sender, .id = keys->id };
    if (keys->relay) {
        if (shoal_elector_acting (shoal_peer_elector (self->peer), now))
            s_start (self, now, &keys->req, origin);
        else
            s_give (self, &origin, SHOAL_REPLY_NO_LEADER, "this node does not act as leader", NULL,
                    0);
        return;
    }
    s_target_t own = { .node = self->id };
    shoal_membership_member_t me;
    if (shoal_membership_member (shoal_peer_membership (self->peer), &self->id, &me) == 0 &&
        me.meta && me.meta->name)
        snprintf (own.name, sizeof own.name, "%s", me.meta->name);
    s_apply (self, &keys->req, &own);
    shoal_msg_t msg = { .type = SHOAL_MSG_KEYS_ACK };
    msg.u.keys_ack = (shoal_keys_ack_t){
        .id = keys->id, .code = own.report.code, .reason = "", .node_count = 1, .nodes = &own.report
    };
    shoal_actor_send (self, &in->envelope.sender, NULL, &msg);
}

//  A KEYS-ACK: a member's part in this leader's phase, or the leader's
//  answer to an operation this node relays.
static void
s_ack_in (shoal_actor_t *self, uint64_t now, const shoal_transport_in_t *in)
{
    shoal_keyops_t *ops = self->keyops;
    const shoal_keys_ack_t *ack = &in->msg.u.keys_ack;
    for (size_t i = 0; i < S_RELAYS_MAX; i++) {
        s_relay_t *relay = &ops->relays[i];
        if (!relay->used || relay->id != ack->id ||
            memcmp (relay->leader.bytes, in->envelope.sender.id, SHOAL_ID_SIZE) != 0)
            continue;
        relay->used = false;
        shoal_control_rep_t rep = { .code = ack->code,
                                    .reason = ack->reason,
                                    .leader = relay->leader,
                                    .keyring_count = ack->node_count,
                                    .keyrings = ack->nodes };
        shoal_control_server_answer (self->control, relay->ref, &rep);
        return;
    }
    if (!ops->phase || ack->id != ops->id || ack->node_count != 1)
        return;
    const shoal_keyring_report_t *report = &ack->nodes[0];
    for (size_t i = 1; i < ops->target_count; i++) {
        s_target_t *target = &ops->targets[i];
        if (target->answered || memcmp (&target->node, &report->node, sizeof report->node) != 0 ||
            memcmp (target->node.bytes, in->envelope.sender.id, SHOAL_ID_SIZE) != 0)
            continue;
        target->answered = true;
        snprintf (target->reason, sizeof target->reason, "%s", report->reason);
        uint32_t count = report->key_count <= SHOAL_KEYRING_MAX ? report->key_count : 0;
        memcpy (target->keys, report->keys, count * sizeof *report->keys);
        target->report = (shoal_keyring_report_t){ .node = target->node,
                                                   .name = target->name,
                                                   .code = report->code,
                                                   .reason = target->reason,
                                                   .primary = report->primary,
                                                   .key_count = count,
                                                   .keys = target->keys };
    }
    s_advance (self, now);
}

bool
shoal_keys_message (shoal_actor_t *self, uint64_t now, const shoal_transport_in_t *in)
{
    if (in->msg.type != SHOAL_MSG_KEYS && in->msg.type != SHOAL_MSG_KEYS_ACK)
        return false;
    shoal_id_t from;
    shoal_membership_member_t member;
    memcpy (from.bytes, in->envelope.sender.id, SHOAL_ID_SIZE);
    //  Only members take part, and only in a keyed cluster.
    if (!s_ops (self) || shoal_keyring_size (self->keyring) == 0 ||
        in->envelope.mode == SHOAL_ENVELOPE_PLAINTEXT ||
        shoal_membership_member (shoal_peer_membership (self->peer), &from, &member) != 0)
        return true;
    if (in->msg.type == SHOAL_MSG_KEYS)
        s_keys_in (self, now, in);
    else
        s_ack_in (self, now, in);
    return true;
}

void
shoal_keys_expire (shoal_actor_t *self, uint64_t now)
{
    shoal_keyops_t *ops = self->keyops;
    if (!ops)
        return;
    for (size_t i = 0; i < S_RELAYS_MAX; i++)
        if (ops->relays[i].used && ops->relays[i].deadline <= now) {
            ops->relays[i].used = false;
            s_answer (self, ops->relays[i].ref, SHOAL_REPLY_TIMED_OUT,
                      "the leader did not answer in time: some members may have applied it "
                      "(shoal keys list tells)");
        }
    if (ops->phase && ops->deadline <= now)
        s_advance (self, now);
}

uint64_t
shoal_keys_next (const shoal_actor_t *self)
{
    const shoal_keyops_t *ops = self->keyops;
    uint64_t next = UINT64_MAX;
    for (size_t i = 0; ops && i < S_RELAYS_MAX; i++)
        if (ops->relays[i].used && ops->relays[i].deadline < next)
            next = ops->relays[i].deadline;
    if (ops && ops->phase && ops->deadline < next)
        next = ops->deadline;
    return next;
}

void
shoal_keys_free (shoal_actor_t *self)
{
    if (!self->keyops)
        return;
    free (self->keyops->targets);
    sodium_memzero (self->keyops, sizeof *self->keyops);
    free (self->keyops);
    self->keyops = NULL;
}

/*  node/refusals.c: refused envelopes, told by sender at most once a
    minute.
*/
#include "node/refusals.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    bool used;
    char sender[SHOAL_ADDR_MAX + 1]; //  "" for the other senders, when the table is full
    uint64_t told_ms;                //  when it was last told
    uint64_t count;                  //  refusals since then, not told
    shoal_open_result_t reason;      //  the last one's
} s_sender_t;

struct _shoal_refusals_t {
    s_sender_t senders[SHOAL_REFUSALS_SENDERS];
    s_sender_t others;
};

shoal_refusals_t *
shoal_refusals_new (void)
{
    return calloc (1, sizeof (shoal_refusals_t));
}

void
shoal_refusals_destroy (shoal_refusals_t **self_p)
{
    if (self_p) {
        free (*self_p);
        *self_p = NULL;
    }
}

bool
shoal_refusals_told (shoal_open_result_t reason)
{
    return reason == SHOAL_OPEN_UNKNOWN_KEY || reason == SHOAL_OPEN_FORGED ||
           reason == SHOAL_OPEN_PLAINTEXT || reason == SHOAL_OPEN_SEALED;
}

static const char *
s_why (shoal_open_result_t reason)
{
    switch (reason) {
    case SHOAL_OPEN_UNKNOWN_KEY:
        return "sealed with a key this node does not hold";
    case SHOAL_OPEN_FORGED:
        return "did not authenticate (another key of the same id, or tampered)";
    case SHOAL_OPEN_PLAINTEXT:
        return "plaintext, and this node has a key";
    case SHOAL_OPEN_SEALED:
        return "sealed, and this node has no key";
    default:
        return "refused";
    }
}

//  The sender's entry: its own, a free one, one whose minute is over (the
//  least recently told), or the other senders'.
static s_sender_t *
s_sender (shoal_refusals_t *self, uint64_t now, const char *sender)
{
    s_sender_t *spare = NULL;
    for (size_t i = 0; i < SHOAL_REFUSALS_SENDERS; i++) {
        s_sender_t *entry = &self->senders[i];
        if (entry->used && strcmp (entry->sender, sender) == 0)
            return entry;
        bool over =
            !entry->used || (entry->count == 0 && now - entry->told_ms >= SHOAL_REFUSALS_PERIOD_MS);
        if (over && (!spare || !entry->used || (spare->used && entry->told_ms < spare->told_ms)))
            spare = entry;
    }
    if (!spare)
        return &self->others;
    *spare = (s_sender_t){ .used = true };
    snprintf (spare->sender, sizeof spare->sender, "%s", sender);
    return spare;
}

bool
shoal_refusals_add (shoal_refusals_t *self, uint64_t now_ms, const char *sender,
                    shoal_open_result_t reason, char *text, size_t text_size)
{
    if (!shoal_refusals_told (reason))
        return false;
    s_sender_t *entry = s_sender (self, now_ms, sender ? sender : "");
    bool first = entry->told_ms == 0 && entry->count == 0;
    entry->count++;
    entry->reason = reason;
    if (!first && now_ms - entry->told_ms < SHOAL_REFUSALS_PERIOD_MS)
        return false;
    const char *who = entry == &self->others ? "other senders"
                      : entry->sender[0]     ? entry->sender
                                             : "an unknown address";
    if (first)
        snprintf (text, text_size, "refused a message from %s: %s (told at most once a minute)",
                  who, s_why (reason));
    else
        snprintf (text, text_size, "refused %llu more messages from %s in %llu s: %s",
                  (unsigned long long) entry->count, who,
                  (unsigned long long) ((now_ms - entry->told_ms) / 1000), s_why (reason));
    entry->told_ms = now_ms ? now_ms : 1;
    entry->count = 0;
    return true;
}

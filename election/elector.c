/*  election/elector.c: the Bully-style election with terms, quorum and
    leases of elector.h. docs/election.md describes the protocol.

    The node keeps a table of the members the membership view told it of,
    sorted by id, with what a leader needs of each (the last round it
    acknowledged, its voter set's version), and the voter set, also sorted.
    A leader counts acknowledgements per round in a small ring of recent
    rounds, so that an acknowledgement costs a few additions, not a pass
    over the voters.
*/

#include "election/elector.h"
#include "wire/bigendian.h"
#include "wire/check.h"
#include "wire/ids.h"

#include <stdlib.h>
#include <string.h>

//  Recent rounds a leader keeps counts for. A round older than this is
//  older than a lease in every sane profile (heartbeat >= lease / 8).
#define S_ROUNDS 16
//  The largest term, round or voter set version taken from a message or a
//  saved state. Each is counted up by one at a time from there: far below
//  2^64, they can never wrap (it would take 2^62 elections or rounds).
#define S_COUNT_MAX (UINT64_MAX / 4)
//  Members a node keeps: every member of the view and every voter.
#define S_MEMBERS_MAX (SHOAL_MEMBERS_MAX + SHOAL_VOTERS_MAX)

typedef enum {
    S_SETTLING, //  just started: listening for a leader
    S_FOLLOWING,
    S_ELECTING, //  asked a higher-ranked member, waiting for its ANSWER
    S_WAITING,  //  answered: waiting for someone's COORDINATOR
    S_LEADING,  //  proclaimed; acting while a majority's acknowledgements hold
    S_LEFT,     //  left the view: takes no part in any election in this life
} s_role_t;

typedef struct {
    shoal_id_t id;
    uint32_t priority;
    bool live;
    bool suspect;            //  live, but the view suspects it: no voter meanwhile
    bool left;               //  left gracefully: not back in this life, and not heard
    bool leaving;            //  its acknowledgements say it leaves: no voter
    uint64_t since_ms;       //  live or down since
    uint64_t acked_round;    //  of this node's leadership, 0 when none
    uint64_t acked_term;     //  the term it acknowledged that round with
    uint64_t voters_version; //  as it last acknowledged
    bool voters_known;       //  voters_version holds something
    bool outbid;             //  this leadership took a term above it, a higher rank,
    uint64_t outbid_ms;      //  then (s_rival)
} s_member_t;

typedef struct {
    uint64_t round;
    uint64_t term; //  the leader's term when it was sent
    uint64_t sent_ms;
    uint32_t acks;  //  voters that acknowledged this round or a later one
    bool self_free; //  sent when no promise to another bound this node
} s_round_t;

//  A COORDINATOR refused while this node's promise to another leader held;
//  granted when the promise ends, if nothing better came.
typedef struct {
    bool held;
    shoal_id_t from;
    uint64_t term;
    uint64_t round;
    uint64_t at_ms;
} s_pending_t;

struct _shoal_elector_t {
    shoal_elector_config_t config;
    shoal_id_t id;
    uint32_t priority;
    uint64_t started_ms;

    s_member_t *members; //  sorted by id, never this node
    size_t member_count;
    size_t member_capacity;
    shoal_id_t *voters; //  sorted by id
    size_t voter_count;
    size_t voter_capacity;
    uint64_t voters_version;

    s_role_t role;
    uint64_t term_seen;        //  the highest term heard of
    uint64_t promised_term;    //  the highest term proclaimed or acknowledged
    shoal_id_t promised;       //  to whom (zero: nobody)
    shoal_id_t bound;          //  the leader this node last acknowledged
    uint64_t promise_until_ms; //  no leader but bound acknowledged before this,
                               //  this node's own candidacy included
    uint64_t leader_seen_ms;   //  the followed leader's last COORDINATOR
    uint64_t followed_round;   //  the round of it this node acknowledged last
    bool has_leader;           //  an event said LEADER last, not NO_LEADER
    s_pending_t pending;
    bool preempt_checked; //  this leader was checked against this node's rank
    uint64_t deadline_ms; //  settle, answer, coordinator or candidacy
    shoal_id_t asking;    //  ELECTING: the member asked
    shoal_id_t lost;      //  the leader given up on; not asked in elections
                          //  until a wait for a COORDINATOR ends empty

    //  Leading.
    uint64_t lead_term;       //  the current term of this leadership
    uint64_t lead_first_term; //  its first term: acknowledgements of any count
    bool contested;           //  a member holds lead_term for another leader
    bool rebid;               //  this candidacy took a new term on a refusal
    bool leaving;             //  hands its vote over (shoal_elector_leave)
    uint64_t round;
    uint64_t next_round_ms;
    s_round_t rounds[S_ROUNDS];
    uint64_t acting_until_ms; //  quorum mode: majority acknowledgements hold
    uint64_t acting_round;    //  the latest round a majority acknowledged
    uint64_t acting_term;     //  its term: the term this node acts with
    uint64_t acted_term;      //  the highest term it ever acted with, in this life
    bool acting;              //  as last reported in events
    uint64_t reported_term;   //  the term of the last LEADER event about itself

    //  Outputs of the last input.
    shoal_elector_send_t *sends;
    bool *with_voters; //  per send: fill in this node's voter set at the end
    size_t send_count;
    size_t send_capacity;
    shoal_elector_event_t events[4];
    size_t event_count;
    bool leaving_news;     //  an acknowledgement first said its member leaves
    shoal_id_t leaving_id; //  that member
    bool dirty;            //  saved state changed
    shoal_elector_stats_t stats;
};

static const shoal_id_t s_nobody;

static uint64_t
s_max (uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

static uint64_t
s_min (uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

//  ---------------------------------------------------------------------
//  Configuration

void
shoal_elector_config_lan (shoal_elector_config_t *config)
{
    *config = (shoal_elector_config_t){
        .quorum = true,
        .preempt = false,
        .expect = 0,
        .settle_ms = 5000,
        .heartbeat_ms = 500,
        .lease_ms = 2000,
        .drift_percent = 5,
        .answer_timeout_ms = 250,
        .coordinator_timeout_ms = 1000,
        .stable_ms = 30000,
        .down_after_ms = 60000,
        .voters_max = 7,
    };
}

//  The LAN's times, each times mul and then divided by div: every profile
//  scales the same ones.
static void
s_config_scaled (shoal_elector_config_t *config, uint32_t mul, uint32_t div)
{
    shoal_elector_config_lan (config);
    uint32_t *times[] = {
        &config->settle_ms,         &config->heartbeat_ms,           &config->lease_ms,
        &config->answer_timeout_ms, &config->coordinator_timeout_ms, &config->stable_ms,
        &config->down_after_ms
    };
    for (size_t i = 0; i < sizeof times / sizeof times[0]; i++)
        *times[i] = *times[i] * mul / div;
}

void
shoal_elector_config_wan (shoal_elector_config_t *config)
{
    s_config_scaled (config, 5, 1);
}

void
shoal_elector_config_loopback (shoal_elector_config_t *config)
{
    s_config_scaled (config, 1, 10);
}

const char *
shoal_elector_config_check (const shoal_elector_config_t *config)
{
    if (!config)
        return "no config";
    if (config->heartbeat_ms == 0 || config->answer_timeout_ms == 0 ||
        config->coordinator_timeout_ms == 0)
        return "heartbeat_ms, answer_timeout_ms and coordinator_timeout_ms must be > 0";
    if (config->lease_ms < 2 * config->heartbeat_ms ||
        config->lease_ms > (S_ROUNDS / 2) * config->heartbeat_ms)
        return "lease_ms must be 2 to 8 heartbeats";
    if (config->drift_percent >= 50)
        return "drift_percent must be under 50";
    if (config->expect > SHOAL_VOTERS_MAX)
        return "expect must be at most 16384";
    if (config->voters_max == 0 || config->voters_max > SHOAL_VOTERS_MAX)
        return "voters_max must be 1 to 16384";
    return NULL;
}

//  ---------------------------------------------------------------------
//  Members, ranks and voters

_Static_assert(offsetof (s_member_t, id) == 0, "a member begins with its id");

//  The index of id in the member table, or where it would go (found false).
static size_t
s_member_index (const shoal_elector_t *self, const shoal_id_t *id, bool *found)
{
    size_t at = shoal_lower_bound (self->members, self->member_count, sizeof *self->members, id,
                                   shoal_id_order);
    *found = at < self->member_count && shoal_id_equal (&self->members[at].id, id);
    return at;
}

static s_member_t *
s_member (shoal_elector_t *self, const shoal_id_t *id)
{
    bool found;
    size_t at = s_member_index (self, id, &found);
    return found ? &self->members[at] : NULL;
}

//  The member id, added as down when unknown. NULL when memory is short or
//  the table is full. The table may move: pointers into it do not survive.
static s_member_t *
s_member_add (shoal_elector_t *self, uint64_t now, const shoal_id_t *id)
{
    bool found;
    size_t at = s_member_index (self, id, &found);
    if (found)
        return &self->members[at];
    if (self->member_count >= S_MEMBERS_MAX)
        return NULL;
    if (self->member_count == self->member_capacity) {
        size_t capacity = self->member_capacity ? 2 * self->member_capacity : 16;
        s_member_t *bigger = realloc (self->members, capacity * sizeof *bigger);
        if (!bigger)
            return NULL;
        self->members = bigger;
        self->member_capacity = capacity;
    }
    memmove (self->members + at + 1, self->members + at,
             (self->member_count - at) * sizeof *self->members);
    self->member_count++;
    self->members[at] = (s_member_t){ .id = *id, .since_ms = now };
    return &self->members[at];
}

//  Rank is (priority, id): true when a outranks b.
static bool
s_outranks (uint32_t priority_a, const shoal_id_t *a, uint32_t priority_b, const shoal_id_t *b)
{
    if (priority_a != priority_b)
        return priority_a > priority_b;
    return shoal_id_compare (a, b) > 0;
}

static bool
s_is_voter (const shoal_elector_t *self, const shoal_id_t *id)
{
    return shoal_ids_contain (self->voters, self->voter_count, id);
}

static size_t
s_majority (const shoal_elector_t *self)
{
    return self->voter_count / 2 + 1;
}

//  Replaces the voter set by count ids (sorted here, duplicates dropped).
//  Returns 0, or -1 when memory is short (the set is then unchanged).
static int
s_voters_set (shoal_elector_t *self, uint64_t now, uint64_t version, const shoal_id_t *ids,
              size_t count)
{
    if (count > self->voter_capacity) {
        shoal_id_t *bigger = realloc (self->voters, count * sizeof *bigger);
        if (!bigger)
            return -1;
        self->voters = bigger;
        self->voter_capacity = count;
    }
    if (ids != self->voters)
        memmove (self->voters, ids, count * sizeof *ids);
    qsort (self->voters, count, sizeof *self->voters, shoal_id_order);
    size_t kept = 0;
    for (size_t i = 0; i < count; i++)
        if (kept == 0 || !shoal_id_equal (&self->voters[kept - 1], &self->voters[i]))
            self->voters[kept++] = self->voters[i];
    self->voter_count = kept;
    self->voters_version = version;
    self->dirty = true;
    //  Members that are neither live nor voters are of no more use; every
    //  voter has an entry, down until the view says otherwise, so that one
    //  that never shows up leaves the set after down_after_ms.
    size_t members = 0;
    for (size_t i = 0; i < self->member_count; i++)
        if (self->members[i].live || s_is_voter (self, &self->members[i].id))
            self->members[members++] = self->members[i];
    self->member_count = members;
    for (size_t i = 0; i < self->voter_count; i++)
        if (!shoal_id_equal (&self->voters[i], &self->id))
            s_member_add (self, now, &self->voters[i]);
    return 0;
}

//  ---------------------------------------------------------------------
//  Outputs

static shoal_elector_send_t *
s_send (shoal_elector_t *self, const shoal_id_t *to, uint8_t type)
{
    if (self->send_count == self->send_capacity) {
        size_t capacity = self->send_capacity ? 2 * self->send_capacity : 16;
        shoal_elector_send_t *sends = realloc (self->sends, capacity * sizeof *sends);
        if (!sends)
            return NULL;
        self->sends = sends;
        bool *with_voters = realloc (self->with_voters, capacity * sizeof *with_voters);
        if (!with_voters)
            return NULL;
        self->with_voters = with_voters;
        self->send_capacity = capacity;
    }
    self->with_voters[self->send_count] = false;
    shoal_elector_send_t *send = &self->sends[self->send_count++];
    *send = (shoal_elector_send_t){ .to = *to, .msg = { .type = type } };
    self->stats.sent++;
    return send;
}

static void
s_event (shoal_elector_t *self, uint8_t type, const shoal_id_t *leader, uint64_t term)
{
    //  An input makes three events at most (lost, found, a new term); should
    //  one make more, the last one replaces the one before.
    if (self->event_count == sizeof self->events / sizeof self->events[0])
        self->event_count--;
    self->events[self->event_count++] = (shoal_elector_event_t){ type, *leader, term };
    self->has_leader = type == SHOAL_ELECTOR_LEADER;
}

static void
s_lost (shoal_elector_t *self)
{
    if (self->has_leader)
        s_event (self, SHOAL_ELECTOR_NO_LEADER, &s_nobody, 0);
}

static void
s_answer (shoal_elector_t *self, const shoal_id_t *to, uint64_t term)
{
    shoal_elector_send_t *send = s_send (self, to, SHOAL_MSG_ANSWER);
    if (send)
        send->msg.u.answer.term = term;
}

//  ---------------------------------------------------------------------
//  Transitions: the only writers of role. Each sets what its role reads
//  (docs/election.md, section "Roles and transitions", has the table).

//  Stops leading; the application hears of it if it heard this node led.
static void
s_step_down (shoal_elector_t *self)
{
    if (self->role == S_LEADING) {
        self->acting = false;
        s_lost (self);
    }
}

//  Listens for a leader until deadline: at start (settle_ms), or when a
//  first voter set cannot be made yet (too few live members).
static void
s_become_settling (shoal_elector_t *self, uint64_t deadline)
{
    self->role = S_SETTLING;
    self->deadline_ms = deadline;
}

//  Follows leader, which this node just acknowledged: its lease and its
//  promise run from now.
static void
s_become_following (shoal_elector_t *self, uint64_t now, const shoal_id_t *leader)
{
    s_step_down (self);
    self->role = S_FOLLOWING;
    self->leader_seen_ms = now;
    self->bound = *leader;
    self->promise_until_ms = now + self->config.lease_ms;
    self->lost = s_nobody;
}

//  Asked asking (ELECTION): waits answer_timeout_ms for its ANSWER.
static void
s_become_electing (shoal_elector_t *self, uint64_t now, const shoal_id_t *asking)
{
    s_step_down (self);
    self->role = S_ELECTING;
    self->asking = *asking;
    self->deadline_ms = now + self->config.answer_timeout_ms;
}

//  Answered (or outside the voter set, its leader lost): waits until
//  deadline for someone's COORDINATOR, then holds an election.
static void
s_become_waiting (shoal_elector_t *self, uint64_t deadline)
{
    self->role = S_WAITING;
    self->deadline_ms = deadline;
}

//  Leads (its term already set by s_proclaim): uncontested, nothing
//  pending, nobody lost; gives up after two leases without a majority.
static void
s_become_leading (shoal_elector_t *self, uint64_t now)
{
    self->contested = false;
    self->role = S_LEADING;
    self->pending.held = false;
    self->lost = s_nobody;
    self->deadline_ms = now + 2 * (uint64_t) self->config.lease_ms;
}

//  Left the view: no part in any election in this life, no deadline.
static void
s_become_left (shoal_elector_t *self)
{
    self->leaving = true;
    self->acting = false;
    self->role = S_LEFT;
    self->pending.held = false;
    self->deadline_ms = UINT64_MAX;
}

//  ---------------------------------------------------------------------
//  Leading

//  Acknowledgements of rounds kept in the ring, counted again from the
//  member table (after the voter set changed).
static void
s_rounds_recount (shoal_elector_t *self)
{
    bool self_votes = s_is_voter (self, &self->id);
    for (size_t r = 0; r < S_ROUNDS; r++) {
        s_round_t *round = &self->rounds[r];
        if (round->round == 0)
            continue;
        round->acks = self_votes && round->self_free ? 1 : 0;
        for (size_t i = 0; i < self->voter_count; i++) {
            const s_member_t *member = s_member (self, &self->voters[i]);
            if (member && member->acked_round >= round->round && member->acked_term == round->term)
                round->acks++;
        }
    }
}

//  True when this node may acknowledge leader now: its last promise was
//  to leader, or has ended.
static bool
s_free (const shoal_elector_t *self, uint64_t now, const shoal_id_t *leader)
{
    return now >= self->promise_until_ms || shoal_id_equal (&self->bound, leader);
}

static s_round_t *
s_round (shoal_elector_t *self, uint64_t round)
{
    s_round_t *slot = &self->rounds[round % S_ROUNDS];
    return round && slot->round == round ? slot : NULL;
}

//  Quorum mode: the lease holds until a lease after the latest round a
//  majority acknowledged was sent, less the drift margin, and this node
//  acts with that round's term. A leader that took a new term goes on
//  acting with the old one until a majority acknowledged the new: two
//  leaders never act with one term, since members promise each term once.
static void
s_rounds_check (shoal_elector_t *self)
{
    size_t majority = s_majority (self);
    for (size_t r = 0; r < S_ROUNDS; r++) {
        const s_round_t *round = &self->rounds[r];
        if (round->round > self->acting_round && round->acks >= majority) {
            uint64_t lease = self->config.lease_ms;
            self->acting_until_ms =
                round->sent_ms + lease - lease * self->config.drift_percent / 100;
            self->acting_round = round->round;
            self->acting_term = round->term;
        }
    }
}

//  No majority counted yet: at a new leadership, or on a newer voter set.
static void
s_rounds_forget (shoal_elector_t *self)
{
    self->acting_until_ms = 0;
    self->acting_round = 0;
    self->acting_term = 0;
}

static void
s_coordinator_to (shoal_elector_t *self, const s_member_t *member)
{
    shoal_elector_send_t *send = s_send (self, &member->id, SHOAL_MSG_COORDINATOR);
    if (!send)
        return;
    send->msg.u.coordinator = (shoal_coordinator_t){
        .term = self->lead_term,
        .priority = self->priority,
        .round = self->round,
    };
    self->with_voters[self->send_count - 1] =
        !member->voters_known || member->voters_version < self->voters_version;
}

//  A new round of COORDINATOR to every live member.
static void
s_heartbeat (shoal_elector_t *self, uint64_t now)
{
    self->round++;
    self->next_round_ms = now + self->config.heartbeat_ms;
    //  A leader acknowledges its own rounds, but not while it is bound to
    //  another: that one may be acting on this node's acknowledgement.
    bool free = s_free (self, now, &self->id);
    s_round_t *slot = &self->rounds[self->round % S_ROUNDS];
    *slot = (s_round_t){ self->round, self->lead_term, now,
                         free && s_is_voter (self, &self->id) ? 1 : 0, free };
    for (size_t i = 0; i < self->member_count; i++)
        if (self->members[i].live)
            s_coordinator_to (self, &self->members[i]);
    s_rounds_check (self);
}

static bool
s_acting (const shoal_elector_t *self, uint64_t now)
{
    if (self->role != S_LEADING)
        return false;
    return !self->config.quorum || now < self->acting_until_ms;
}

static uint64_t
s_acting_term (const shoal_elector_t *self)
{
    return self->config.quorum ? self->acting_term : self->lead_term;
}

//  Reports a change of this node's acting, or of the term it acts with, as
//  events.
static void
s_acting_update (shoal_elector_t *self, uint64_t now)
{
    bool acting = s_acting (self, now);
    if (acting == self->acting && (!acting || self->reported_term == s_acting_term (self)))
        return;
    self->acting = acting;
    if (acting) {
        self->reported_term = s_acting_term (self);
        self->acted_term = s_max (self->acted_term, self->reported_term);
        s_event (self, SHOAL_ELECTOR_LEADER, &self->id, self->reported_term);
    } else
        s_lost (self);
}

//  For qsort: members, the highest rank first.
static int
s_rank_order (const void *a, const void *b)
{
    const s_member_t *x = *(const s_member_t *const *) a;
    const s_member_t *y = *(const s_member_t *const *) b;
    if (s_outranks (x->priority, &x->id, y->priority, &y->id))
        return -1;
    return s_outranks (y->priority, &y->id, x->priority, &x->id) ? 1 : 0;
}

//  The first voter set: this node and the highest-ranked live members of
//  its view, voters_max in all at most, once the view holds expect
//  members. Returns 0, 1 while the view is smaller, or -1 when memory is
//  short.
static int
s_voters_first (shoal_elector_t *self, uint64_t now)
{
    size_t live = 0;
    for (size_t i = 0; i < self->member_count; i++)
        live += self->members[i].live;
    if (live + 1 < self->config.expect)
        return 1;
    size_t count = live + 1 < self->config.voters_max ? live + 1 : self->config.voters_max;
    const s_member_t **ranked = malloc ((live + 1) * sizeof *ranked);
    shoal_id_t *ids = malloc (count * sizeof *ids);
    int rc = -1;
    if (ranked && ids) {
        size_t ranks = 0;
        for (size_t i = 0; i < self->member_count; i++)
            if (self->members[i].live)
                ranked[ranks++] = &self->members[i];
        qsort (ranked, ranks, sizeof *ranked, s_rank_order);
        ids[0] = self->id;
        for (size_t i = 1; i < count; i++)
            ids[i] = ranked[i - 1]->id;
        rc = s_voters_set (self, now, 1, ids, count);
    }
    free (ranked);
    free (ids);
    return rc;
}

//  Proclaims this node leader. The term is new, unless the highest term
//  there is is this node's own and nobody holds it for another, and this
//  node leads with it or never acted with it (a renewed candidacy, or a
//  leader that lost its majority for a while: followers take the same
//  leader at the same term again).
static void
s_proclaim (shoal_elector_t *self, uint64_t now)
{
    //  A candidacy that never acted may be taken up again at its term, even
    //  after it stepped down to ask above: no assignment was made with that
    //  term, and nobody else holds it. Cut off by a bridge, a node that asks
    //  the unreachable leader and proclaims after each silence took a new
    //  term every candidacy, up to 10 in 60 s, and the leader one above it
    //  at the heal.
    bool mine = shoal_id_equal (&self->promised, &self->id) &&
                self->promised_term == self->lead_term && self->acted_term < self->lead_term;
    bool renew =
        !self->contested && self->lead_term == self->term_seen && (self->role == S_LEADING || mine);
    if (self->voters_version == 0) {
        int rc = s_voters_first (self, now);
        if (rc > 0)
            s_become_settling (self, now + self->config.heartbeat_ms);
        if (rc != 0)
            return;
    }
    if (!renew) {
        //  Terms beyond S_COUNT_MAX are refused at the door: this cannot wrap.
        self->term_seen++;
        if (self->role != S_LEADING) {
            self->rebid = false;
            self->lead_first_term = self->term_seen;
            self->round = 0;
            memset (self->rounds, 0, sizeof self->rounds);
            s_rounds_forget (self);
            for (size_t i = 0; i < self->member_count; i++) {
                self->members[i].acked_round = 0;
                self->members[i].acked_term = 0;
                self->members[i].outbid = false;
            }
        }
        self->lead_term = self->term_seen;
        self->promised_term = self->term_seen;
        self->promised = self->id;
        self->dirty = true;
        self->stats.proclaimed++;
    }
    s_become_leading (self, now);
    s_heartbeat (self, now);
    s_acting_update (self, now);
}

//  Voters that hold the current voter set (this node among them, if it is
//  one): a majority of them must before the set changes again.
static size_t
s_voters_holding (const shoal_elector_t *self)
{
    size_t holding = s_is_voter (self, &self->id) ? 1 : 0;
    for (size_t i = 0; i < self->voter_count; i++) {
        bool found;
        size_t at = s_member_index (self, &self->voters[i], &found);
        if (found && self->members[at].voters_known &&
            self->members[at].voters_version >= self->voters_version)
            holding++;
    }
    return holding;
}

//  The highest-ranked live member that is not a voter, or NULL. settled:
//  only one live for stable_ms that answers and is not suspected (one that
//  acknowledged no round for a lease, or that the view suspects, may have
//  died before the view says so, and a dead voter counts against the
//  majority).
static const s_member_t *
s_best_non_voter (const shoal_elector_t *self, uint64_t now, bool settled)
{
    uint64_t rounds_per_lease = self->config.lease_ms / self->config.heartbeat_ms;
    const s_member_t *best = NULL;
    for (size_t i = 0; i < self->member_count; i++) {
        const s_member_t *member = &self->members[i];
        bool answers = member->acked_round && member->acked_round + rounds_per_lease >= self->round;
        bool ready = !settled || (answers && now - member->since_ms >= self->config.stable_ms);
        if (member->live && ready && !(settled && member->suspect) && !member->leaving &&
            !s_is_voter (self, &member->id) &&
            (!best || s_outranks (member->priority, &member->id, best->priority, &best->id)))
            best = member;
    }
    return best;
}

//  The voter to drop from a set larger than voters_max, or to make room
//  for a higher rank: one that is not live before one that is, the lowest
//  rank first, never this node. NULL when this node is the only voter.
static const shoal_id_t *
s_voter_to_drop (const shoal_elector_t *self)
{
    const s_member_t *worst = NULL;
    for (size_t i = 0; i < self->voter_count; i++) {
        bool found;
        size_t at = s_member_index (self, &self->voters[i], &found);
        if (!found)
            continue;
        const s_member_t *voter = &self->members[at];
        if (!worst || (worst->live && !voter->live) ||
            (worst->live == voter->live &&
             s_outranks (worst->priority, &worst->id, voter->priority, &voter->id)))
            worst = voter;
    }
    return worst ? &worst->id : NULL;
}

//  After a change of the voter set: the voters, and the member that left
//  the set, hear of it now (a COORDINATOR of the current round, which
//  carries the set), not at the next round. A follower that leaves waits
//  for it before it leaves the view, and the next change for the voters'
//  acknowledgements of this one: a heartbeat or two each, otherwise.
static void
s_voters_tell (shoal_elector_t *self, const shoal_id_t *left)
{
    for (size_t i = 0; i < self->member_count; i++) {
        const s_member_t *member = &self->members[i];
        if (member->live && (s_is_voter (self, &member->id) || shoal_id_equal (&member->id, left)))
            s_coordinator_to (self, member);
    }
}

//  One voter set change, when the last is held by a majority of the set.
//  A leaving leader hands its vote over: it leaves the set, or when it is
//  the only voter, first brings in the best live member. Otherwise: first a
//  voter down for down_after_ms (or gone for good) leaves, else one leaves
//  a set larger than voters_max, else this leader joins if it is not a
//  voter, else the best member live for stable_ms joins while the set has
//  room; a full set makes room when that member outranks its lowest rank.
static void
s_voters_review (shoal_elector_t *self, uint64_t now)
{
    if (s_voters_holding (self) < s_majority (self))
        return;
    const shoal_id_t *leaves = NULL, *joins = NULL;
    bool self_votes = s_is_voter (self, &self->id);
    bool room = self->voter_count < self->config.voters_max;
    if (self->leaving && self_votes) {
        const s_member_t *heir =
            self->voter_count == 1 ? s_best_non_voter (self, now, false) : NULL;
        if (heir)
            joins = &heir->id;
        else if (self->voter_count > 1)
            leaves = &self->id;
    }
    //  A voter gone for good first, then one that says it is leaving: a
    //  live leaver dropped first could leave a set whose majority is gone.
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < self->member_count && !leaves && !joins; i++) {
            const s_member_t *member = &self->members[i];
            bool gone = member->left || now - member->since_ms >= self->config.down_after_ms;
            bool out = pass == 0 ? !member->live && gone : member->leaving;
            if (out && s_is_voter (self, &member->id) && self->voter_count > 1)
                leaves = &member->id;
        }
    const shoal_id_t *worst = s_voter_to_drop (self);
    if (!leaves && !joins && self->voter_count > self->config.voters_max)
        leaves = worst;
    //  A leader elected from outside the set (it came up after the set was
    //  made) joins it first: a majority the set no longer holds live would
    //  otherwise hold the cluster's fate, with the leader unable to vote.
    if (!leaves && !joins && !self_votes && !self->leaving && room)
        joins = &self->id;
    const s_member_t *best = leaves || joins ? NULL : s_best_non_voter (self, now, true);
    const s_member_t *shed = worst ? s_member (self, worst) : NULL;
    if (best && room)
        joins = &best->id;
    else if (best && shed && !self->leaving &&
             s_outranks (best->priority, &best->id, shed->priority, &shed->id))
        leaves = worst;
    if (!leaves && !joins)
        return;
    shoal_id_t *ids = malloc ((self->voter_count + 1) * sizeof *ids);
    if (!ids)
        return;
    size_t count = 0;
    for (size_t i = 0; i < self->voter_count; i++)
        if (!leaves || !shoal_id_equal (&self->voters[i], leaves))
            ids[count++] = self->voters[i];
    if (joins)
        ids[count++] = *joins;
    shoal_id_t left = leaves ? *leaves : s_nobody; //  the set and the table may move
    if (s_voters_set (self, now, self->voters_version + 1, ids, count) == 0) {
        self->stats.voter_changes++;
        s_rounds_recount (self);
        s_voters_tell (self, &left);
    }
    free (ids);
}

//  ---------------------------------------------------------------------
//  Electing

//  Asks the highest-ranked live member above this node and below the last
//  one asked (below nobody: from the top), but not the lost leader, nor a
//  suspect (likely dead: each costs an answer timeout, and a link to a
//  closed port); with nobody left to ask, proclaims.
static void
s_ask (shoal_elector_t *self, uint64_t now, const s_member_t *below)
{
    const s_member_t *best = NULL;
    for (size_t i = 0; i < self->member_count; i++) {
        const s_member_t *member = &self->members[i];
        if (!member->live || member->suspect || shoal_id_equal (&member->id, &self->lost) ||
            !s_outranks (member->priority, &member->id, self->priority, &self->id) ||
            (below && !s_outranks (below->priority, &below->id, member->priority, &member->id)) ||
            (best && !s_outranks (member->priority, &member->id, best->priority, &best->id)))
            continue;
        best = member;
    }
    if (!best) {
        s_proclaim (self, now);
        return;
    }
    s_become_electing (self, now, &best->id);
    shoal_elector_send_t *send = s_send (self, &best->id, SHOAL_MSG_ELECTION);
    if (send)
        send->msg.u.election = (shoal_election_t){ self->term_seen, self->priority };
}

static void
s_elect (shoal_elector_t *self, uint64_t now)
{
    self->stats.elections++;
    s_ask (self, now, NULL);
}

//  The followed leader is gone (silent for a lease, or dead or left in the
//  view): say so, and look for another, without asking it.
static void
s_leader_lost (shoal_elector_t *self, uint64_t now)
{
    self->lost = self->promised;
    s_lost (self);
    //  In quorum mode a member outside the voter set waits a while first
    //  (until its promise ends, a heartbeat for the next leader's round, and
    //  a spread over half a lease by its id): the voters elect among
    //  themselves, and the next leader's COORDINATOR or its ANSWER comes to
    //  the others one by one rather than to all at once (1,000 workers on
    //  2 cores: 899 ELECTIONs in a second to the highest rank, each over a
    //  new connection, delayed its answers past the answer timeout and
    //  lower ranks proclaimed too).
    if (self->config.quorum && self->voter_count && !s_is_voter (self, &self->id)) {
        uint64_t free_ms = self->promise_until_ms > now ? self->promise_until_ms : now;
        uint64_t half_lease = self->config.lease_ms / 2 ? self->config.lease_ms / 2 : 1;
        uint64_t spread = shoal__get_be (self->id.bytes, 4) % half_lease;
        s_become_waiting (self, free_ms + self->config.heartbeat_ms + spread);
        return;
    }
    s_elect (self, now);
}

//  ---------------------------------------------------------------------
//  Following

static void
s_acknowledge (shoal_elector_t *self, const shoal_id_t *to, uint64_t term, uint64_t round,
               uint64_t their_voters_version)
{
    shoal_elector_send_t *send = s_send (self, to, SHOAL_MSG_COORDINATOR_ACK);
    if (!send)
        return;
    send->msg.u.coordinator_ack =
        (shoal_coordinator_ack_t){ .term = term, .round = round, .leaving = self->leaving };
    self->with_voters[self->send_count - 1] = self->voters_version > their_voters_version;
}

//  Follows leader from at term, and acknowledges round.
static void
s_follow (shoal_elector_t *self, uint64_t now, const shoal_id_t *from, uint64_t term,
          uint64_t round, uint64_t their_voters_version)
{
    bool news = !self->has_leader || self->role == S_LEADING ||
                !shoal_id_equal (&self->promised, from) || self->promised_term != term;
    if (self->promised_term != term || !shoal_id_equal (&self->promised, from))
        self->dirty = true;
    self->promised_term = term;
    self->promised = *from;
    s_become_following (self, now, from);
    if (self->pending.held && shoal_id_equal (&self->pending.from, from))
        self->pending.held = false;
    if (news) {
        s_event (self, SHOAL_ELECTOR_LEADER, from, term);
        self->preempt_checked = false;
    }
    self->followed_round = round;
    s_acknowledge (self, from, term, round, their_voters_version);
}

//  With preempt, a follower that outranks its leader and has been up for
//  stable_ms takes over.
static void
s_preempt (shoal_elector_t *self, uint64_t now)
{
    if (!self->config.preempt || self->role != S_FOLLOWING ||
        now - self->started_ms < self->config.stable_ms)
        return;
    self->preempt_checked = true;
    const s_member_t *leader = s_member (self, &self->promised);
    if (leader && s_outranks (self->priority, &self->id, leader->priority, &leader->id))
        s_proclaim (self, now);
}

//  Rivals. A leader with its majority, told of a higher term or refused by
//  a higher rank, takes a term above it (sticky): a newcomer without a
//  majority of its own then follows. One that bids back within a lease
//  acts on a voter set of its own, apart from this node's: a cluster that
//  formed on its own (nodes that each led a cluster of one before they
//  met, the sides of a partition that each started alone). Both sticky,
//  two such leaders took terms above each other's without end, as fast as
//  the network carried their messages, at every heal. So the lower rank
//  gives way to it at its second contest: it follows a higher term, or,
//  held to a term of its own, steps down and holds an election, which
//  asks the higher ranks (the rival, or the rank above it) and brings it a
//  COORDINATOR that takes a term above its own.

//  True when this leadership took a term above the higher rank id within
//  the last lease.
static bool
s_rival (shoal_elector_t *self, uint64_t now, const shoal_id_t *id)
{
    const s_member_t *member = s_member (self, id);
    return member && member->outbid && now - member->outbid_ms <= self->config.lease_ms;
}

//  Takes a term above the higher rank id (or a lower one).
static void
s_outbid (shoal_elector_t *self, uint64_t now, const shoal_id_t *id, bool outranked)
{
    s_member_t *member = outranked ? s_member (self, id) : NULL;
    if (member) {
        member->outbid = true;
        member->outbid_ms = now;
    }
    s_proclaim (self, now);
}

static void
s_on_coordinator (shoal_elector_t *self, uint64_t now, const s_member_t *sender,
                  const shoal_coordinator_t *coordinator)
{
    //  A copy: adopting a voter set may move the member table.
    const s_member_t copy = *sender, *from = &copy;
    uint64_t term = coordinator->term;
    if (term > self->term_seen)
        self->term_seen = term;
    bool same = self->role != S_LEADING && shoal_id_equal (&self->promised, &from->id) &&
                term == self->promised_term;
    bool outranked = s_outranks (coordinator->priority, &from->id, self->priority, &self->id);
    bool accept;
    if (same)
        accept = true;
    else if (term < self->promised_term) {
        //  Stale. Told so, unless it is an older round of the leader this
        //  node follows (it would read as a contest of its own term).
        accept = false;
        if (!shoal_id_equal (&self->promised, &from->id))
            s_answer (self, &from->id, self->promised_term);
    } else if (term == self->promised_term) {
        //  Taken by another. Available mode breaks the tie by rank.
        const s_member_t *holder = s_member (self, &self->promised);
        uint32_t holder_priority = holder ? holder->priority : self->priority;
        accept = !self->config.quorum &&
                 s_outranks (coordinator->priority, &from->id, holder_priority, &self->promised);
        if (!accept)
            s_answer (self, &from->id, self->promised_term);
        if (!accept && self->role == S_LEADING && outranked && s_rival (self, now, &from->id))
            s_elect (self, now); //  gives way; its ANSWER has the rival bid above
    } else if (!self->config.quorum)
        accept = true; //  the higher term wins
    else if (self->role == S_LEADING && s_acting (self, now)) {
        //  A leader with its majority stays (sticky), and takes a term above
        //  the newcomer's so that its followers never follow an older one;
        //  preempt lets a higher rank, stable by its own account, in.
        accept = outranked && (self->config.preempt || s_rival (self, now, &from->id));
        if (!accept)
            s_outbid (self, now, &from->id, outranked);
    } else if (!s_free (self, now, &from->id)) {
        //  Promised to another leader for a while yet (a candidate too: it
        //  may have taken up its candidacy when the membership view said
        //  that leader was gone, while the leader still counts on it).
        accept = false;
        if (!self->pending.held || term > self->pending.term)
            self->pending = (s_pending_t){ true, from->id, term, coordinator->round, now };
    } else
        accept = true;
    if (!accept) {
        self->stats.refused++;
        return;
    }
    if (coordinator->voters_version > self->voters_version && coordinator->voter_count)
        s_voters_set (self, now, coordinator->voters_version, coordinator->voters,
                      coordinator->voter_count);
    s_follow (self, now, &from->id, term, coordinator->round, coordinator->voters_version);
    s_preempt (self, now);
}

static void
s_on_ack (shoal_elector_t *self, uint64_t now, s_member_t *from, const shoal_coordinator_ack_t *ack)
{
    if (self->role != S_LEADING || ack->term < self->lead_first_term ||
        ack->term > self->lead_term || ack->round > self->round) {
        self->stats.dropped++;
        return;
    }
    from->voters_known = true;
    from->voters_version = ack->voters_version;
    bool news = ack->leaving && !from->leaving;
    if (news) {
        self->leaving_news = true;
        self->leaving_id = from->id;
    }
    from->leaving = ack->leaving;
    if (ack->voters_version > self->voters_version && ack->voter_count) {
        //  Catch up: the newest voter set decides the majority. The member
        //  table may move meanwhile.
        shoal_id_t id = from->id;
        if (s_voters_set (self, now, ack->voters_version, ack->voters, ack->voter_count) == 0) {
            //  The majorities counted so far were of an older set: only
            //  those of the newest count.
            s_rounds_forget (self);
            s_rounds_recount (self);
        }
        from = s_member (self, &id);
        if (!from)
            return;
    }
    if (ack->round > from->acked_round) {
        //  An acknowledgement with term T counts for the rounds since the
        //  last one that were sent with T: a majority for a round is then
        //  a majority that promised its term to this node.
        if (s_is_voter (self, &from->id))
            for (uint64_t r =
                     s_max (from->acked_round, ack->round - s_min (ack->round, S_ROUNDS)) + 1;
                 r <= ack->round; r++) {
                s_round_t *round = s_round (self, r);
                if (round && round->term == ack->term)
                    round->acks++;
            }
        from->acked_round = ack->round;
        from->acked_term = ack->term;
    }
    s_rounds_check (self);
    s_acting_update (self, now);
    //  A voter that says it leaves is dropped now, not at the next round.
    if (news && self->config.quorum && s_acting (self, now))
        s_voters_review (self, now);
}

static void
s_on_election (shoal_elector_t *self, uint64_t now, const s_member_t *from,
               const shoal_election_t *election)
{
    if (election->term > self->term_seen)
        self->term_seen = election->term;
    if (!s_outranks (self->priority, &self->id, from->priority, &from->id)) {
        self->stats.dropped++;
        return;
    }
    s_answer (self, &from->id, self->term_seen);
    if (self->role == S_LEADING)
        s_coordinator_to (self, from); //  the leader is here
    else if (self->role == S_SETTLING)
        s_elect (self, now);
    else if (self->role == S_FOLLOWING && now >= self->leader_seen_ms + self->config.lease_ms)
        s_leader_lost (self, now);
}

static void
s_on_answer (shoal_elector_t *self, uint64_t now, const s_member_t *from,
             const shoal_answer_t *answer)
{
    if (answer->term > self->term_seen)
        self->term_seen = answer->term;
    if (self->role == S_ELECTING && shoal_id_equal (&from->id, &self->asking))
        s_become_waiting (self, now + self->config.coordinator_timeout_ms);
    else if (self->role == S_LEADING && answer->term >= self->lead_term) {
        //  A member refused this term: it holds it for another (two nodes
        //  proclaimed at once, with views that differed, or an ELECTION was
        //  lost) or a newer one. A leader that acts takes a term above, so
        //  that the member can follow it.
        //  A candidate that outranks the member does so too, once, when
        //  refused its very term: the member is a rival candidate of that
        //  term (or bound to one), which takes a higher term from the
        //  higher rank, and both would otherwise wait two leases for a
        //  majority. Only once, or a candidate that cannot hear the acting
        //  leader would run the term up against the refusals of that
        //  leader's followers.
        //  A rival of higher rank refused it again: it gives way (s_rival).
        self->contested = true;
        bool outranked = s_outranks (from->priority, &from->id, self->priority, &self->id);
        bool rebid = !self->rebid && answer->term == self->lead_term && !outranked;
        if (outranked && s_rival (self, now, &from->id))
            s_elect (self, now);
        else if (s_acting (self, now) || rebid) {
            self->rebid = self->rebid || rebid;
            s_outbid (self, now, &from->id, outranked);
        }
    }
}

//  ---------------------------------------------------------------------
//  Inputs

static void
s_begin (shoal_elector_t *self)
{
    self->send_count = 0;
    self->event_count = 0;
    self->leaving_news = false;
    self->dirty = false;
}

//  Fills in the voter sets of the messages that carry them, now that the
//  input is done and the set will not move.
static void
s_finish (shoal_elector_t *self)
{
    for (size_t i = 0; i < self->send_count; i++) {
        shoal_msg_t *msg = &self->sends[i].msg;
        uint32_t count = self->with_voters[i] ? (uint32_t) self->voter_count : 0;
        shoal_id_t *voters = count ? self->voters : NULL;
        if (msg->type == SHOAL_MSG_COORDINATOR) {
            msg->u.coordinator.voters_version = self->voters_version;
            msg->u.coordinator.voter_count = count;
            msg->u.coordinator.voters = voters;
        } else if (msg->type == SHOAL_MSG_COORDINATOR_ACK) {
            msg->u.coordinator_ack.voters_version = self->voters_version;
            msg->u.coordinator_ack.voter_count = count;
            msg->u.coordinator_ack.voters = voters;
        }
    }
}

shoal_elector_t *
shoal_elector_new (const shoal_elector_config_t *config, const shoal_id_t *id, uint32_t priority,
                   const shoal_elector_saved_t *saved, uint64_t now_ms)
{
    if (shoal_elector_config_check (config) || !id ||
        (saved &&
         ((saved->voter_count && !saved->voters) || saved->voter_count > SHOAL_VOTERS_MAX ||
          saved->term > S_COUNT_MAX || saved->voters_version > S_COUNT_MAX)))
        return NULL;
    shoal_elector_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->config = *config;
    self->id = *id;
    self->priority = priority;
    self->started_ms = now_ms;
    s_become_settling (self, now_ms + config->settle_ms);
    if (saved) {
        self->term_seen = saved->term;
        self->promised_term = saved->term;
        self->promised = saved->leader;
        self->bound = saved->leader;
        //  The promise of the last life may still hold: honour it a lease.
        self->promise_until_ms = now_ms + config->lease_ms;
        if (saved->voter_count &&
            s_voters_set (self, now_ms, saved->voters_version, saved->voters, saved->voter_count)) {
            free (self);
            return NULL;
        }
    }
    return self;
}

void
shoal_elector_destroy (shoal_elector_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    shoal_elector_t *self = *self_p;
    free (self->members);
    free (self->voters);
    free (self->sends);
    free (self->with_voters);
    free (self);
    *self_p = NULL;
}

static int
s_member_update (shoal_elector_t *self, uint64_t now_ms, const shoal_id_t *id, uint32_t priority,
                 bool live, bool left)
{
    if (shoal_id_equal (id, &self->id))
        return 0;
    s_member_t *member = s_member_add (self, now_ms, id);
    if (!member)
        return -1;
    if (member->live != live) {
        member->since_ms = now_ms;
        member->leaving = false; //  its acknowledgements tell again
    }
    member->live = live;
    member->suspect = member->suspect && live;
    //  Left holds until the member is live again: only a new life of it
    //  is (a left record is overridden by nothing but an alive one).
    member->left = left || (member->left && !live);
    member->priority = priority;
    if (!live && self->role == S_FOLLOWING && shoal_id_equal (id, &self->promised)) {
        //  The view says the leader is gone (left, or dead): look now.
        s_leader_lost (self, now_ms);
    } else if (live && self->role == S_LEADING)
        s_coordinator_to (self, member); //  a newcomer learns the leader at once
    else if (left && self->config.quorum && s_acting (self, now_ms))
        //  A voter that left is dropped from the set at once, while its
        //  last acknowledgements still hold: a set of two that one node
        //  leaves would otherwise have no majority left to change it.
        s_voters_review (self, now_ms);
    return 0;
}

int
shoal_elector_member (shoal_elector_t *self, uint64_t now_ms, const shoal_id_t *id,
                      uint32_t priority, bool live)
{
    s_begin (self);
    int rc = s_member_update (self, now_ms, id, priority, live, false);
    //  A new cluster's nodes started together: once expect of them are
    //  live, the first election need not wait out settle_ms, only one
    //  heartbeat, in which a leader already there (of a cluster this node
    //  joins) sends its round to every live member. A node with a term or
    //  voters of a life before still listens settle_ms for its leader.
    if (self->role == S_SETTLING && self->config.expect && self->voters_version == 0 &&
        self->term_seen == 0 && self->deadline_ms > now_ms + self->config.heartbeat_ms) {
        size_t seen = 1;
        for (size_t i = 0; i < self->member_count; i++)
            seen += self->members[i].live;
        if (seen >= self->config.expect)
            self->deadline_ms = now_ms + self->config.heartbeat_ms;
    }
    s_finish (self);
    return rc;
}

void
shoal_elector_suspect (shoal_elector_t *self, const shoal_id_t *id, bool suspect)
{
    s_member_t *member = s_member (self, id);
    if (member)
        member->suspect = suspect && member->live;
}

int
shoal_elector_member_left (shoal_elector_t *self, uint64_t now_ms, const shoal_id_t *id,
                           uint32_t priority)
{
    s_begin (self);
    int rc = s_member_update (self, now_ms, id, priority, false, true);
    s_acting_update (self, now_ms);
    s_finish (self);
    return rc;
}

void
shoal_elector_leave (shoal_elector_t *self, uint64_t now_ms)
{
    s_begin (self);
    self->leaving = true;
    if (self->config.quorum && s_acting (self, now_ms))
        s_voters_review (self, now_ms);
    else if (self->config.quorum && self->role == S_FOLLOWING && self->has_leader &&
             s_is_voter (self, &self->id))
        //  Its leader hears now, not at the next round, that it leaves: the
        //  round it acknowledged last, again (a repeat changes no count).
        s_acknowledge (self, &self->promised, self->promised_term, self->followed_round,
                       self->voters_version);
    s_acting_update (self, now_ms);
    s_finish (self);
}

void
shoal_elector_retire (shoal_elector_t *self, uint64_t now_ms)
{
    s_begin (self);
    //  A follower keeps its leader, silently, for what its promise had
    //  left: the leader moves the node's tasks away after it left the
    //  view, and they obey only the leader they know. Any other role ends.
    bool follows = self->role == S_FOLLOWING && self->has_leader &&
                   now_ms < self->leader_seen_ms + self->config.lease_ms;
    s_become_left (self);
    if (!follows)
        s_lost (self);
    s_finish (self);
}

bool
shoal_elector_handed_off (const shoal_elector_t *self, uint64_t now_ms)
{
    (void) now_ms;
    if (!self->config.quorum)
        return true;
    //  A voter that follows is dropped from the set by its leader, which
    //  its acknowledgements told that it leaves: done once the set it holds
    //  no longer names it. Leaving the view before, it could take with it
    //  the acknowledgement a change of the set still waits for, and leave
    //  the leader without a majority for good (a set of two).
    //  With no leader to drop it, it goes as before: waiting would hold
    //  every node of a cluster stopped whole until its leave timed out.
    if (self->role != S_LEADING)
        return !s_is_voter (self, &self->id) || !self->has_leader;
    //  With nobody live, there is no one to hand anything to, nor a
    //  majority to leave behind: the last nodes of a cluster stopped
    //  together, whatever stage the handover had reached.
    bool alone = true;
    for (size_t i = 0; i < self->member_count && alone; i++)
        alone = !self->members[i].live;
    if (alone)
        return true;
    //  Out of the set: done once a majority of the set holds that.
    if (!s_is_voter (self, &self->id))
        return s_voters_holding (self) >= s_majority (self);
    //  A voter of a set of three or more leaves a majority behind; of a
    //  set of one or two it must hand over first. A leader that lost its
    //  majority midway is not done: it proclaims again, acts again and
    //  finishes (the caller bounds the wait).
    return self->voter_count >= 3;
}

bool
shoal_elector_member_leaving (const shoal_elector_t *self, const shoal_id_t *id)
{
    bool found;
    size_t at = s_member_index (self, id, &found);
    return found && self->members[at].live && self->members[at].leaving;
}

bool
shoal_elector_leaving_news (const shoal_elector_t *self, shoal_id_t *id)
{
    if (self->leaving_news)
        *id = self->leaving_id;
    return self->leaving_news;
}

//  A node that left acknowledges one thing: a round of the leader it
//  followed as it left, at that term, a promise it had made already. Its
//  leader drops it as soon as its view says it left, but until then it
//  counts on it: in a set of two, a follower that fell silent at once
//  would take the leader's majority away before the leader could drop it.
static bool
s_still_follows (const shoal_elector_t *self, const s_member_t *from, const shoal_msg_t *msg)
{
    return self->has_leader && msg->type == SHOAL_MSG_COORDINATOR &&
           shoal_id_equal (&from->id, &self->promised) &&
           msg->u.coordinator.term == self->promised_term;
}

//  Terms, rounds and versions are counted up by one: a message with one
//  beyond S_COUNT_MAX is nonsense, and taking it could make them wrap.
static bool
s_sane (const shoal_msg_t *msg)
{
    switch (msg->type) {
    case SHOAL_MSG_ELECTION:
        return msg->u.election.term <= S_COUNT_MAX;
    case SHOAL_MSG_ANSWER:
        return msg->u.answer.term <= S_COUNT_MAX;
    case SHOAL_MSG_COORDINATOR:
        return msg->u.coordinator.term <= S_COUNT_MAX && msg->u.coordinator.round <= S_COUNT_MAX &&
               msg->u.coordinator.voters_version <= S_COUNT_MAX;
    case SHOAL_MSG_COORDINATOR_ACK:
        return msg->u.coordinator_ack.term <= S_COUNT_MAX &&
               msg->u.coordinator_ack.round <= S_COUNT_MAX &&
               msg->u.coordinator_ack.voters_version <= S_COUNT_MAX;
    default:
        return true; //  dropped as a type this core does not take
    }
}

int
shoal_elector_receive (shoal_elector_t *self, uint64_t now_ms, const shoal_id_t *from,
                       const shoal_msg_t *msg)
{
    s_begin (self);
    s_member_t *member = from ? s_member (self, from) : NULL;
    //  A node that left answers, acknowledges and proclaims nothing, and
    //  one that the view says left is not heard: it neither stands nor
    //  votes until it starts again with a new life. Heard, a leader that
    //  left was elected again at a higher term and led on, and a follower
    //  that left ran the others' term up with its candidacies.
    if (!member || member->left || !msg || !s_sane (msg) ||
        (self->role == S_LEFT && !s_still_follows (self, member, msg))) {
        self->stats.dropped++;
        return -1;
    }
    if (self->role == S_LEFT) {
        s_acknowledge (self, &member->id, msg->u.coordinator.term, msg->u.coordinator.round,
                       msg->u.coordinator.voters_version);
        self->leader_seen_ms = now_ms;
        s_finish (self);
        return 0;
    }
    switch (msg->type) {
    case SHOAL_MSG_ELECTION:
        s_on_election (self, now_ms, member, &msg->u.election);
        break;
    case SHOAL_MSG_ANSWER:
        s_on_answer (self, now_ms, member, &msg->u.answer);
        break;
    case SHOAL_MSG_COORDINATOR:
        s_on_coordinator (self, now_ms, member, &msg->u.coordinator);
        break;
    case SHOAL_MSG_COORDINATOR_ACK:
        s_on_ack (self, now_ms, member, &msg->u.coordinator_ack);
        break;
    default:
        self->stats.dropped++;
        return -1;
    }
    s_finish (self);
    return 0;
}

void
shoal_elector_tick (shoal_elector_t *self, uint64_t now_ms)
{
    s_begin (self);
    switch (self->role) {
    case S_SETTLING:
        if (now_ms >= self->deadline_ms)
            s_elect (self, now_ms);
        break;
    case S_FOLLOWING:
        if (self->pending.held && now_ms >= self->promise_until_ms) {
            //  The promise ended without word from its leader: grant the best
            //  COORDINATOR refused meanwhile.
            s_pending_t pending = self->pending;
            self->pending.held = false;
            const s_member_t *from = s_member (self, &pending.from);
            if (pending.term > self->promised_term &&
                now_ms - pending.at_ms <= self->config.lease_ms && from && !from->left)
                s_follow (self, now_ms, &pending.from, pending.term, pending.round, 0);
        }
        if (now_ms >= self->leader_seen_ms + self->config.lease_ms)
            s_leader_lost (self, now_ms);
        else
            s_preempt (self, now_ms);
        break;
    case S_ELECTING:
        if (now_ms >= self->deadline_ms) {
            s_member_t *asked = s_member (self, &self->asking);
            if (asked)
                s_ask (self, now_ms, asked);
            else
                s_elect (self, now_ms);
        }
        break;
    case S_WAITING:
        if (now_ms >= self->deadline_ms) {
            //  The rank that answered brought no COORDINATOR: it may follow
            //  the lost leader, alive but unable to reach this node except
            //  over this node's own connection (the transport's cap on
            //  links). Asked again, that leader answers over it.
            self->lost = s_nobody;
            s_elect (self, now_ms);
        }
        break;
    case S_LEFT:
        //  Its leader is lost after a lease of silence, and nobody else is
        //  looked for.
        if (self->has_leader && now_ms >= self->leader_seen_ms + self->config.lease_ms)
            s_lost (self);
        break;
    case S_LEADING:
        if (now_ms >= self->next_round_ms)
            s_heartbeat (self, now_ms);
        if (s_acting (self, now_ms)) {
            self->deadline_ms = now_ms + 2 * (uint64_t) self->config.lease_ms;
            if (self->config.quorum)
                s_voters_review (self, now_ms);
        } else if (now_ms >= self->deadline_ms) {
            //  No majority for two leases: ask above, or proclaim again (at
            //  the same term when nobody took it, so that a minority does
            //  not run its term up while cut off).
            s_elect (self, now_ms);
        }
        break;
    }
    s_acting_update (self, now_ms);
    s_finish (self);
}

//  ---------------------------------------------------------------------
//  Outputs and queries

bool
shoal_elector_saved (const shoal_elector_t *self, shoal_elector_saved_t *saved)
{
    *saved = (shoal_elector_saved_t){
        .term = self->promised_term,
        .leader = self->promised,
        .voters_version = self->voters_version,
        .voter_count = (uint32_t) self->voter_count,
        .voters = self->voters,
    };
    return self->dirty;
}

size_t
shoal_elector_outbox (const shoal_elector_t *self, const shoal_elector_send_t **sends)
{
    *sends = self->sends;
    return self->send_count;
}

size_t
shoal_elector_events (const shoal_elector_t *self, const shoal_elector_event_t **events)
{
    *events = self->events;
    return self->event_count;
}

uint64_t
shoal_elector_next (const shoal_elector_t *self)
{
    uint64_t next = self->deadline_ms;
    if (self->role == S_LEFT && self->has_leader)
        next = self->leader_seen_ms + self->config.lease_ms;
    else if (self->role == S_FOLLOWING) {
        next = self->leader_seen_ms + self->config.lease_ms;
        if (self->pending.held && self->promise_until_ms < next)
            next = self->promise_until_ms;
        uint64_t stable = self->started_ms + self->config.stable_ms;
        if (self->config.preempt && !self->preempt_checked && stable < next)
            next = stable;
    } else if (self->role == S_LEADING) {
        next = self->next_round_ms;
        if (self->config.quorum && self->acting && self->acting_until_ms < next)
            next = self->acting_until_ms;
    }
    return next;
}

int
shoal_elector_leader (const shoal_elector_t *self, uint64_t now_ms, shoal_id_t *leader,
                      uint64_t *term)
{
    if (s_acting (self, now_ms)) {
        *leader = self->id;
        *term = s_acting_term (self);
        return 0;
    }
    bool follows = self->role == S_FOLLOWING || (self->role == S_LEFT && self->has_leader);
    if (follows && now_ms < self->leader_seen_ms + self->config.lease_ms) {
        *leader = self->promised;
        *term = self->promised_term;
        return 0;
    }
    return -1;
}

bool
shoal_elector_acting (const shoal_elector_t *self, uint64_t now_ms)
{
    return s_acting (self, now_ms);
}

uint64_t
shoal_elector_term (const shoal_elector_t *self)
{
    return self->term_seen;
}

void
shoal_elector_stats (const shoal_elector_t *self, shoal_elector_stats_t *stats)
{
    *stats = self->stats;
}

//  ---------------------------------------------------------------------
//  Invariants (debug)

#ifndef SHOAL_NO_CHECKS

static int
s_check_tables (const shoal_elector_t *self, const char **reason)
{
    if (self->member_count > self->member_capacity || self->voter_count > SHOAL_VOTERS_MAX)
        return shoal_check_broken (reason, "elector: a table holds more than its capacity");
    for (size_t i = 0; i < self->member_count; i++) {
        if (shoal_id_equal (&self->members[i].id, &self->id))
            return shoal_check_broken (reason, "elector: this node is in its own member table");
        if (i && shoal_id_compare (&self->members[i - 1].id, &self->members[i].id) >= 0)
            return shoal_check_broken (reason, "elector: members not sorted by id, or repeated");
    }
    for (size_t i = 1; i < self->voter_count; i++)
        if (shoal_id_compare (&self->voters[i - 1], &self->voters[i]) >= 0)
            return shoal_check_broken (reason, "elector: voters not sorted by id, or repeated");
    return 0;
}

static int
s_check_role (const shoal_elector_t *self, const char **reason)
{
    if (self->role > S_LEFT)
        return shoal_check_broken (reason, "elector: no such role");
    if (self->promised_term > self->term_seen || self->acted_term > self->term_seen)
        return shoal_check_broken (reason, "elector: a term above the highest seen");
    if (self->acting && self->role != S_LEADING)
        return shoal_check_broken (reason, "elector: acting, but not leading");
    if (self->role == S_LEADING &&
        (!shoal_id_equal (&self->promised, &self->id) || self->promised_term != self->lead_term ||
         self->lead_first_term > self->lead_term || self->acting_term > self->lead_term))
        return shoal_check_broken (reason, "elector: a leader without its own promise at its term");
    if (self->role == S_FOLLOWING && (!shoal_id_equal (&self->promised, &self->bound) ||
                                      shoal_id_equal (&self->promised, &self->id)))
        return shoal_check_broken (reason,
                                   "elector: a follower not bound to the leader it promised");
    if (self->event_count > sizeof self->events / sizeof self->events[0] ||
        self->send_count > self->send_capacity)
        return shoal_check_broken (reason, "elector: more outputs than room");
    return 0;
}

int
shoal_elector_check (const shoal_elector_t *self, const char **reason)
{
    if (!self)
        return shoal_check_broken (reason, "elector: NULL");
    return s_check_tables (self, reason) ? -1 : s_check_role (self, reason);
}

#else

int
shoal_elector_check (const shoal_elector_t *self, const char **reason)
{
    (void) self;
    (void) reason;
    return 0;
}

#endif

/*  election/elector.h: one leader, by a Bully-style election made safe by
    terms, a majority of voters and leases.

    A pure state machine, like gossip/membership.h: no sockets, no clocks,
    no threads, no globals, no printing, no randomness. Every input names
    the time (now_ms, the caller's monotonic clock).

    Inputs:  shoal_elector_member   what the membership view says of a member
                                    (call it for every membership event);
             shoal_elector_receive  an ELECTION, ANSWER, COORDINATOR or
                                    COORDINATOR-ACK from a member;
             shoal_elector_tick     the time came that next() asked for.
    Outputs, after each input and valid until the next input:
             shoal_elector_saved    what to persist (term, voter set), when
                                    it changed: write it before sending;
             shoal_elector_outbox   messages to send, each to one member;
             shoal_elector_events   leader found, leader lost;
             shoal_elector_next     when to call tick next.

    The protocol (docs/election.md has the full description):

    - Rank is (priority, id). A node without a leader asks the highest-ranked
      live member above it (ELECTION); one that answers (ANSWER) takes the
      election over, so the node waits for a COORDINATOR. When nobody above
      answers, the node proclaims itself with a new term (COORDINATOR). A
      noticed failure costs about four messages per node, not N². Suspects
      are not asked. In quorum mode a member outside the voter set that
      loses its leader waits first (its promise, a heartbeat and a share of
      half a lease by its id) while the voters elect.
    - The leader repeats COORDINATOR every heartbeat, one round after another.
      A follower acknowledges each round (COORDINATOR-ACK) and so promises
      never to accept an older term and not to acknowledge another leader
      for a lease. A follower that hears nothing from its leader for a lease
      looks for a new one.
    - Quorum mode: a leader acts only while a majority of the voter set has
      acknowledged a round sent less than a lease ago (shortened by the
      drift margin); the promises of that majority outlast it, so no other
      leader can gather a majority meanwhile. It acts with the term of that
      round: a majority promised it that very term, so no two leaders ever
      act with one term, and the term can fence. Available mode: a leader acts
      at once; when two leaders meet, the higher term wins, then the higher
      rank, and the loser steps down.
    - Sticky: a leader is not deposed by a higher-ranked node that joins or
      comes back, unless preempt is set, and then only after that node has
      been up for stable_ms. A rival that bids back within a lease acts on
      a voter set of its own (clusters that formed apart, and meet): the
      lower rank gives way to it, so that the two do not take terms above
      each other's without end.
    - The voter set is the leader's view when the first leader is proclaimed
      (with expect set, once it holds that many members), at most
      voters_max of it, the highest ranks first; then the acting leader
      adds a member that has been live for stable_ms while the set has room
      (itself first, then the highest rank), and removes one that has been
      down for down_after_ms, or the lowest rank while the set is larger
      than voters_max or a member outranks it, one change at a time, each
      acknowledged by a majority of the new set before the next. A follower
      with a newer voter set sends it back in its acknowledgement, and a new
      leader counts its majority on the newest set it has heard of.
*/

#ifndef SHOAL_ELECTOR_H
#define SHOAL_ELECTOR_H

#include "wire/wire.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

//  Timing and policy, all in milliseconds. Profiles below.
typedef struct {
    bool quorum;                     //  quorum mode (default); false: available mode
    bool preempt;                    //  a higher rank takes over after stable_ms
    uint32_t expect;                 //  the first voter set waits for this many (0: any);
                                     //  a new node that sees them stops settling
    uint32_t settle_ms;              //  at start, listen this long for a leader first
    uint32_t heartbeat_ms;           //  a leader's COORDINATOR rounds
    uint32_t lease_ms;               //  promise of an acknowledgement; leader silence
    uint32_t drift_percent;          //  leader's lease shortened by this share
    uint32_t answer_timeout_ms;      //  wait for ANSWER before asking the next
    uint32_t coordinator_timeout_ms; //  after an ANSWER, wait for COORDINATOR
    uint32_t stable_ms;              //  up this long to preempt or to become a voter
    uint32_t down_after_ms;          //  down this long to leave the voter set
    uint32_t voters_max;             //  most members in the voter set (1..16384)
} shoal_elector_config_t;

//  LAN: heartbeat 0.5 s, lease 2 s (a crashed leader is replaced in about
//  2.5 s), settle 5 s, stable 30 s, down after 60 s, at most 7 voters.
//  Loopback: ten times faster. Both in quorum mode, without preempt,
//  expect 0.
void shoal_elector_config_lan (shoal_elector_config_t *config);
void shoal_elector_config_loopback (shoal_elector_config_t *config);
//  Every time five times the LAN's (a WAN, or many nodes on few cores).
void shoal_elector_config_wan (shoal_elector_config_t *config);

//  NULL when config is usable, else why not.
const char *shoal_elector_config_check (const shoal_elector_config_t *config);

//  What a node keeps across restarts. voters is sorted by id.
typedef struct {
    uint64_t term;     //  the highest term this node proclaimed or acknowledged
    shoal_id_t leader; //  to whom (all zero: nobody)
    uint64_t voters_version;
    uint32_t voter_count;
    const shoal_id_t *voters;
} shoal_elector_saved_t;

typedef enum {
    SHOAL_ELECTOR_LEADER = 1,    //  a leader of term is followed, or this node acts
                                 //  (again when the term it acts with changes)
    SHOAL_ELECTOR_NO_LEADER = 2, //  the leader is lost, or this node stepped down
} shoal_elector_event_type_t;

typedef struct {
    uint8_t type; //  shoal_elector_event_type_t
    shoal_id_t leader;
    uint64_t term;
} shoal_elector_event_t;

typedef struct {
    shoal_id_t to;
    shoal_msg_t msg;
} shoal_elector_send_t;

typedef struct {
    uint64_t elections;     //  elections this node started
    uint64_t proclaimed;    //  terms this node proclaimed
    uint64_t refused;       //  COORDINATORs refused (old term, taken term, promise)
    uint64_t dropped;       //  messages from unknown members or of other types
    uint64_t sent;          //  messages sent
    uint64_t voter_changes; //  voter sets this node proposed as leader
} shoal_elector_stats_t;

typedef struct _shoal_elector_t shoal_elector_t;

//  A node with identity id and priority, starting at now_ms. saved is what
//  it persisted in an earlier life (NULL on first start). Returns NULL when
//  config or saved is invalid or memory is short.
shoal_elector_t *shoal_elector_new (const shoal_elector_config_t *config, const shoal_id_t *id,
                                    uint32_t priority, const shoal_elector_saved_t *saved,
                                    uint64_t now_ms);

void shoal_elector_destroy (shoal_elector_t **self_p);

//  A member is live (alive or suspect in the membership view) or not (dead
//  or left), with this priority. Never about this node. Returns 0, or -1
//  when memory is short (the member is then unknown).
int shoal_elector_member (shoal_elector_t *self, uint64_t now_ms, const shoal_id_t *id,
                          uint32_t priority, bool live);

//  The view suspects a live member (true), or holds it alive (false): a
//  suspect is not brought into the voter set. Call it after
//  shoal_elector_member for the same membership event; it sends nothing
//  and leaves the outputs as they are. Unknown members are ignored.
void shoal_elector_suspect (shoal_elector_t *self, const shoal_id_t *id, bool suspect);

//  The member left gracefully: as shoal_elector_member with live false,
//  and a leader that acts drops it from the voter set at once, without
//  the wait of down_after_ms for a member that may come back. Its election
//  messages are dropped from now on: it neither stands nor votes until the
//  view says it is live again (a new life).
int shoal_elector_member_left (shoal_elector_t *self, uint64_t now_ms, const shoal_id_t *id,
                               uint32_t priority);

//  This node is leaving the cluster gracefully. An acting leader first
//  hands its vote over, so that the others keep a majority without it: it
//  takes itself out of the voter set (adding a live member first when it
//  is the only voter), one acknowledged change at a time, and goes on
//  leading, as a non-voter, until it leaves the view. A follower says in
//  its acknowledgements that it leaves: its leader drops it from the voter
//  set (after any voter gone for good), and adds no leaving member to it.
void shoal_elector_leave (shoal_elector_t *self, uint64_t now_ms);

//  This node has left the view (call it as it leaves the view, after
//  shoal_elector_leave and a handover if it led): for the rest of this
//  life it takes no part in any election. It never stands, never acts,
//  answers nothing and acknowledges no new leader or term. A leader steps
//  down (NO_LEADER). A follower keeps its leader for what its promise had
//  left, acknowledging that leader's rounds of that term only, so that the
//  leader keeps its majority until its view says this node left and the
//  node's tasks can still be moved away by it; after a lease of silence,
//  NO_LEADER, and then next is never due. Only a new life (a new elector,
//  at its next start) takes part again. The other nodes, told by their
//  views that it left (shoal_elector_member_left), drop its messages until
//  it is live again.
void shoal_elector_retire (shoal_elector_t *self, uint64_t now_ms);

//  True when a leaving node may go without taking the quorum with it: it
//  follows and the voter set it holds does not name it (its leader dropped
//  it), or it follows no leader; or it leads and is out of a voter set that
//  a majority holds, or is a voter of a set of three or more (the others
//  keep a majority), or nobody else is live to hand to. A voter that left
//  before its leader dropped it could take with it the acknowledgement a
//  change of the set waits for (a set of two: no majority for good). A
//  leader that loses its majority midway is not done until it has it again
//  and finishes: bound the wait.
bool shoal_elector_handed_off (const shoal_elector_t *self, uint64_t now_ms);

//  True when member id, live, said in its last acknowledgement of this
//  node's leadership that it leaves (shoal_elector_leave on its side): it
//  stays in the view until this leader drops it from the voter set, and
//  should be given nothing meanwhile, as a member that left.
bool shoal_elector_member_leaving (const shoal_elector_t *self, const shoal_id_t *id);

//  True when the last input was the first acknowledgement to say that its
//  member leaves; *id is then that member.
bool shoal_elector_leaving_news (const shoal_elector_t *self, shoal_id_t *id);

//  Takes in one message from member from. Returns 0, or -1 when it was
//  dropped (unknown sender, not an election message, or nonsense).
int shoal_elector_receive (shoal_elector_t *self, uint64_t now_ms, const shoal_id_t *from,
                           const shoal_msg_t *msg);

void shoal_elector_tick (shoal_elector_t *self, uint64_t now_ms);

//  True when the last input changed what must be persisted; fills saved.
bool shoal_elector_saved (const shoal_elector_t *self, shoal_elector_saved_t *saved);

size_t shoal_elector_outbox (const shoal_elector_t *self, const shoal_elector_send_t **sends);
size_t shoal_elector_events (const shoal_elector_t *self, const shoal_elector_event_t **events);

//  When to call tick next.
uint64_t shoal_elector_next (const shoal_elector_t *self);

//  The leader this node follows now (itself when it acts) and its term.
//  Returns 0, or -1 when it has none.
int shoal_elector_leader (const shoal_elector_t *self, uint64_t now_ms, shoal_id_t *leader,
                          uint64_t *term);

//  True when this node is the leader and may act now: in quorum mode, while
//  a majority's acknowledgements hold.
bool shoal_elector_acting (const shoal_elector_t *self, uint64_t now_ms);

//  The highest term this node has seen.
uint64_t shoal_elector_term (const shoal_elector_t *self);

void shoal_elector_stats (const shoal_elector_t *self, shoal_elector_stats_t *stats);

//  Debug: checks the elector's own invariants: members and voters
//  sorted, no term above the highest seen, and the role's: a leader holds
//  its own promise at its term, a follower's promise is to the leader it
//  is bound to, only a leader acts. Returns 0, or -1 with *reason (unless reason is
//  NULL) naming the invariant broken. For tests, fuzzers and the simulator,
//  after any input (cheap: one pass over the tables); the node never calls
//  it. Compiled to return 0 when SHOAL_NO_CHECKS is defined.
int shoal_elector_check (const shoal_elector_t *self, const char **reason);

#endif

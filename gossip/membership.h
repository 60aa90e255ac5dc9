/*  gossip/membership.h: who is in the cluster, by SWIM with Lifeguard.

    A pure state machine: no sockets, no clocks, no threads, no globals, no
    printing. Every input names the time (now_ms, a monotonic clock in
    milliseconds that the caller owns: the shell's clock or a simulator's
    virtual one) and randomness comes from the seed given at creation, so the
    same inputs give the same outputs, byte for byte, on every machine (all
    arithmetic is integer). A simulator can run thousands of these in one
    process.

    Inputs:  shoal_membership_receive (a decoded message and its envelope),
             shoal_membership_tick (the time came that next() asked for),
             join (a seed address), introduce (a beacon), leave, set_meta,
             heard (another layer heard a member), hint (a member may be gone).
    Outputs, after each input and valid until the next input:
             shoal_membership_outbox  messages to send, each to one member;
             shoal_membership_events  what changed, for the application;
             shoal_membership_next    when to call tick next.

    The protocol (docs/membership.md has the full description):

    - Probing. Every probe_interval one member is probed, in shuffled round
      robin: PING, and ACK within probe_timeout; else PING-REQ through
      indirect_checks other members, which relay the PING and answer NACK
      when they hear nothing either; no ACK by the end of the interval, or a
      NACK from every relay, makes the member suspect.
    - Suspicion (Lifeguard). A suspicion lasts from max down to min as
      independent members confirm it (shoal_membership_suspicion_ms gives the
      formula); it ends dead, or refuted by the member with a higher
      incarnation. A node that learns it is suspected or dead refutes at once.
    - Local health (Lifeguard). A score from 0 to awareness_max - 1: a failed
      probe with missing NACKs, a refutation, or a tick later than asked for
      raise it; a successful probe lowers it. Probe interval and timeout are
      multiplied by (score + 1), so a node in trouble probes slower instead
      of accusing others.
    - Dissemination. Changes are queued and piggybacked on every PING, ACK,
      PING-REQ and NACK, as many as the datagram takes (measured with the
      real encoder), least-sent first, each retransmit_mult * ceil(log10(N+1))
      times; a gossip round every gossip_interval pings gossip_fanout random
      members with them (wire.h has no gossip message: the round is a PING,
      and its ACK carries the receiver's updates back).
    - Anti-entropy. Every sync_interval, and on first contact (an ACK from a
      member that was unknown, dead or left; a PING from a member this node
      does not know or holds dead), a DIGEST of the member table: its record hashes summed
      per bucket of member ids. A receiver answers only for the buckets whose
      sums differ: its records of those buckets in a SYNC-REPLY, and a
      SYNC-REQ for the sender's, so both sides end up merged by the same
      precedence rules, having sent about the difference and not the table.
    - Tombstones. Dead and left members stay in the table for tombstone_ms;
      one dead member is pinged every tombstone_probe_interval, so a healed
      partition merges by itself.

    Precedence. An update about a member is news when its (incarnation, rank)
    is greater than the record's, compared incarnation first, with rank
    alive 0 < suspect 1 < dead 2 < left 3. So, as in SWIM: alive(i) overrides
    alive(j) and suspect(j) when i > j; suspect(i) overrides alive(j) when
    i >= j and suspect(j) when i > j; dead(i) and left(i) override every state
    of an incarnation <= i (left over dead at the same incarnation, not the
    reverse); a member that left or died comes back only alive at a higher
    incarnation. A suspect(i) about a member suspect at i is a confirmation.
    Updates about unknown members are taken only when alive: a tombstone of
    a member never seen would have no address, and tombstones that nodes
    forget at different times would otherwise come back forever.

    Untrusted input. Every message is taken as hostile: unknown senders,
    stale lives, updates about this node with an old incarnation, alive
    records without meta or with meta over meta_size_max, unknown sequence
    numbers, counts up to what the decoder allows. Nothing asserts or grows
    without bound: the table holds at most members_max members (at the bound
    a new member takes the slot of the oldest tombstone, or is refused and
    counted), relays and contacts have fixed tables.
*/
#ifndef SHOAL_MEMBERSHIP_H
#define SHOAL_MEMBERSHIP_H

#include "wire/metapool.h"
#include "wire/wire.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

//  PING-REQs this node relays at once; more are answered NACK at once.
#define SHOAL_MEMBERSHIP_RELAYS_MAX 64
//  Seeds and beacon introductions waiting for an answer.
#define SHOAL_MEMBERSHIP_CONTACTS_MAX 16
//  Confirmations a suspicion counts at most (Lifeguard's k).
#define SHOAL_MEMBERSHIP_CONFIRMATIONS_MAX 8
//  The largest meta_size_max: an alive record must fit on any datagram.
#define SHOAL_MEMBERSHIP_META_MAX 1024

//  ---------------------------------------------------------------------
//  Configuration

//  Every time is in milliseconds. Defaults are the LAN profile; the
//  loopback profile is the same protocol ten times faster.
//
//  field                        lan        loopback
//  probe_interval_ms            1000       100
//  probe_timeout_ms             400        50
//  indirect_checks              3          3
//  gossip_interval_ms           200        20
//  gossip_fanout                3          3
//  retransmit_mult              4          4
//  suspicion_mult               2          2
//  suspicion_max_mult           6          6
//  suspicion_confirmations      3          3
//  awareness_max                8          8
//  sync_interval_ms             30000      3000
//  tombstone_ms                 3600000    360000
//  tombstone_probe_interval_ms  5000       500
//  members_max                  16384      16384
//  meta_size_max                512        512
typedef struct {
    uint32_t probe_interval_ms; //  one member probed per interval
    uint32_t probe_timeout_ms;  //  wait for an ACK before asking others; < interval
    uint32_t indirect_checks;   //  members asked to relay a failed probe (PING-REQ)
    uint32_t gossip_interval_ms;
    uint32_t gossip_fanout;               //  members pinged with queued updates per round
    uint32_t retransmit_mult;             //  each update is sent mult * ceil(log10(N+1)) times
    uint32_t suspicion_mult;              //  min suspicion: mult * max(1, log10 N) * probe_interval
    uint32_t suspicion_max_mult;          //  max suspicion: max_mult * min
    uint32_t suspicion_confirmations;     //  Lifeguard's k: confirmations down to min (<= 8)
    uint32_t awareness_max;               //  local health multiplier goes up to this
    uint32_t sync_interval_ms;            //  anti-entropy with one random member
    uint32_t tombstone_ms;                //  dead and left members are forgotten after this
    uint32_t tombstone_probe_interval_ms; //  one dead member pinged per interval
    uint32_t members_max;                 //  table size, this node and tombstones included
    uint32_t meta_size_max;               //  largest encoded meta accepted, in bytes
} shoal_membership_config_t;

void shoal_membership_config_lan (shoal_membership_config_t *config);
void shoal_membership_config_loopback (shoal_membership_config_t *config);
//  Every interval five times the LAN's (a WAN, or many nodes on few cores).
void shoal_membership_config_wan (shoal_membership_config_t *config);

//  NULL when config can be used; otherwise what is wrong with it.
const char *shoal_membership_config_check (const shoal_membership_config_t *config);

//  How long a suspicion lasts, in milliseconds, in a cluster of members
//  live members (this node included) after confirmations independent
//  confirmations (Lifeguard, as memberlist computes it):
//
//      min = suspicion_mult * max(1, log10 members) * probe_interval
//      max = suspicion_max_mult * min
//      k   = suspicion_confirmations (0 when members - 2 < k)
//      timeout = k == 0 ? min : max(min, max - (max - min) * log(c + 1) / log(k + 1))
//
//  with c = min(confirmations, k). Logarithms are computed in 16.16 fixed
//  point, so every machine gets the same number.
uint64_t shoal_membership_suspicion_ms (const shoal_membership_config_t *config, size_t members,
                                        uint32_t confirmations);

//  How many times each update is sent: retransmit_mult * ceil(log10(members + 1)).
uint32_t shoal_membership_retransmits (const shoal_membership_config_t *config, size_t members);

//  NULL when meta can describe a member under config: it encodes within the
//  wire limits and within meta_size_max, has an address and a life >= 1.
//  Otherwise what is wrong with it.
const char *shoal_membership_meta_check (const shoal_membership_config_t *config,
                                         const shoal_meta_t *meta);

//  ---------------------------------------------------------------------
//  Outputs

//  One message to send. to is the recipient's life, all zero for an
//  unaddressed envelope (first contact with a seed); addr is where its UDP
//  and ZeroMQ ports listen. The carrier is shoal_msg_purpose (msg.type):
//  datagrams for PING, ACK, PING-REQ, NACK; frames for DIGEST, SYNC-REQ and
//  SYNC-REPLY. The shell fills in the jobs and assignment fields of DIGEST
//  and SYNC-REPLY if it has a layer for them; this core leaves them zero.
typedef struct {
    shoal_life_t to;
    char addr[SHOAL_ADDR_MAX + 1];
    shoal_msg_t msg;
} shoal_membership_send_t;

typedef enum {
    SHOAL_MEMBERSHIP_UP = 1, //  alive: new, back from suspicion, or back with a new incarnation
    SHOAL_MEMBERSHIP_SUSPECT = 2, //  a probe failed; may still refute
    SHOAL_MEMBERSHIP_DEAD = 3,    //  the suspicion expired
    SHOAL_MEMBERSHIP_LEFT = 4,    //  left gracefully
    SHOAL_MEMBERSHIP_UPDATED = 5, //  alive before and after, with new meta
} shoal_membership_event_type_t;

//  An event about one member (never about this node). meta is the member's
//  latest meta.
typedef struct {
    uint8_t type; //  shoal_membership_event_type_t
    shoal_id_t node;
    uint64_t incarnation;
    const shoal_meta_t *meta;
} shoal_membership_event_t;

//  A member as this node sees it.
typedef struct {
    shoal_id_t node;
    uint8_t state; //  shoal_member_state_t
    uint64_t incarnation;
    uint64_t life;
    const shoal_meta_t *meta;
} shoal_membership_member_t;

//  What the node refused or noticed, for metrics and tests.
typedef struct {
    uint64_t messages;        //  messages taken in
    uint64_t dropped;         //  refused whole: no usable sender, stale life, unaddressed
    uint64_t updates_applied; //  news, by the precedence rules
    uint64_t updates_stale;   //  no news
    uint64_t updates_refused; //  invalid: unknown member not alive, bad meta, zero id
    uint64_t members_refused; //  new members refused: the table was full
    uint64_t acks_unmatched;  //  ACKs and NACKs for no probe, relay or contact
    uint64_t refutations;     //  this node raised its incarnation to refute
    uint64_t probes;          //  probes started
    uint64_t probes_failed;   //  probes that ended in a suspicion
    uint64_t late_ticks;      //  ticks later than asked for (this node stalled)
    uint64_t syncs;           //  SYNC-REPLYs merged
    uint64_t dead_doubted;    //  others' DEAD verdicts on a member just heard: taken as SUSPECT
    uint64_t hints;           //  hints taken (shoal_membership_hint)
    uint64_t hints_ignored;   //  hints not taken: unknown or not live member, rate limit, busy
    uint64_t probes_hinted;   //  probes started by a hint (counted in probes too)
    uint64_t probes_hastened; //  probes whose wait a hint about their target cut short
    uint64_t nacks_hastened;  //  NACKs a relay sent at once on a hint about the target
} shoal_membership_stats_t;

//  ---------------------------------------------------------------------
//  The state machine

typedef struct _shoal_membership_t shoal_membership_t;

//  A node with identity id, SWIM incarnation incarnation (raised by the
//  shell on every start) and meta (copied; meta->life is the life its
//  envelopes carry). seed feeds all its randomness. Member metas are kept
//  in metas, a pool that cores driven from one thread may share (a
//  simulator's tables then hold each meta once; it must outlive them), or
//  in a pool of its own when metas is NULL. Returns NULL when config, id or
//  meta is invalid (the check functions above say why) or memory is short.
shoal_membership_t *shoal_membership_new (const shoal_membership_config_t *config,
                                          const shoal_id_t *id, uint64_t incarnation,
                                          const shoal_meta_t *meta, uint64_t seed, uint64_t now_ms,
                                          shoal_metapool_t *metas);

void shoal_membership_destroy (shoal_membership_t **self_p);

//  Takes in one message. envelope is the opened envelope it came in (sender
//  life, and the recipient, all zero when unaddressed); from_addr is the
//  address the datagram came from ("host:port"), used only to answer a
//  sender the table does not know, or NULL. Only PING is taken unaddressed.
//  Messages of types this core does not handle are ignored. Returns 0, or -1
//  when the message was dropped whole (counted in stats).
int shoal_membership_receive (shoal_membership_t *self, uint64_t now_ms,
                              const shoal_envelope_t *envelope, const shoal_msg_t *msg,
                              const char *from_addr);

//  The sender (an opened envelope's) was heard from over another layer (a
//  frame of the election, the tasks or the jobs): as a datagram of its own
//  would, it makes another node's DEAD verdict on it doubtful here for two
//  probe intervals (taken as SUSPECT, which it refutes).
void shoal_membership_heard (shoal_membership_t *self, uint64_t now_ms, const shoal_life_t *sender);

//  The shell has a sign that member id may be gone: the kernel answered a
//  datagram to its address with ICMP port unreachable (docs/membership.md,
//  "Hints"). A hint is not a verdict: it only probes the member out of
//  turn, at once (PING, PING-REQs after probe_timeout, a suspicion if it
//  fails, exactly as any probe), without moving the probe schedule. It is
//  ignored for an unknown id, this node, a member not alive here (a
//  suspect has its verdict coming, and its checks), the target of the
//  probe waiting for its ACK, a member hinted within the last probe
//  interval, while another hint waits, while this node leaves, or while its
//  health score is above 0. Hinted probes start at most one per
//  probe_timeout, so forged hints cost at most that many PINGs.
//  A hint about a member this node already waits to hear from answers the
//  wait instead: the probe waiting for its ACK asks its relays at once and
//  ends within probe_timeout (once per probe), and a relay pinging the
//  member for another sends its NACK at once. An ACK still counts until
//  the probe ends.
void shoal_membership_hint (shoal_membership_t *self, uint64_t now_ms, const shoal_id_t *id);

//  Does everything due by now_ms. A tick much later than next() asked for
//  (more than probe_timeout) means this node stalled: it counts against its
//  own health, the probe in flight is dropped without a verdict, and running
//  suspicions are extended by the stall. Deliver what arrived before ticking.
void shoal_membership_tick (shoal_membership_t *self, uint64_t now_ms);

//  There may be a member at addr (a seed): ping it, unaddressed, until it
//  answers, for as long as this node knows no other live member, or three
//  times otherwise. Returns 0, or -1 when addr is empty, too long, this
//  node's own, or the contact table is full.
int shoal_membership_join (shoal_membership_t *self, uint64_t now_ms, const char *addr);

//  A beacon says node (at incarnation, listening at addr) exists. A beacon
//  never proves a member alive: a node this one does not hold live is pinged
//  up to three times, and only its ACK makes it a member. Beacons of leaving
//  nodes (flags SHOAL_BEACON_LEAVING) are ignored. Returns 0, or -1 when
//  ignored or the contact table is full.
int shoal_membership_introduce (shoal_membership_t *self, uint64_t now_ms, const shoal_life_t *node,
                                uint64_t incarnation, uint8_t flags, const char *addr);

//  Records this node takes as old news: every member holds them already,
//  and each has been sent all its retransmits (a table as a node's that
//  has been up for a while; the simulator's settled start, docs/sim.md).
//  Each is applied by the precedence rules, as a SYNC-REPLY's records are,
//  with the same events; then no record that matches one of them (node,
//  incarnation and state) waits in the dissemination queue, this node's
//  own included (an update that would override it is refuted, and the
//  refutation is news). Returns 0, or -1 when updates is NULL and count is
//  not 0.
int shoal_membership_settle (shoal_membership_t *self, uint64_t now_ms,
                             const shoal_update_t *updates, uint32_t count);

//  Leaves gracefully: this node's record becomes left and is disseminated;
//  it stops probing but still answers and gossips. Keep feeding it until
//  shoal_membership_leave_done.
void shoal_membership_leave (shoal_membership_t *self, uint64_t now_ms);

//  True once the left record has been sent as often as any update is, or
//  no other member is live to tell.
bool shoal_membership_leave_done (const shoal_membership_t *self);

//  Replaces this node's meta (deep copy) and raises its incarnation, so the
//  change overrides the old record everywhere. Returns 0, or -1 when the
//  meta is invalid (shoal_membership_meta_check) or the node has left.
int shoal_membership_set_meta (shoal_membership_t *self, uint64_t now_ms, const shoal_meta_t *meta);

//  The outputs of the last input call, valid until the next one.
size_t shoal_membership_outbox (const shoal_membership_t *self,
                                const shoal_membership_send_t **sends);
size_t shoal_membership_events (const shoal_membership_t *self,
                                const shoal_membership_event_t **events);

//  When tick must be called next (it may be called earlier, to no effect).
uint64_t shoal_membership_next (const shoal_membership_t *self);

//  ---------------------------------------------------------------------
//  Queries

//  Members in the table, this node and tombstones included.
size_t shoal_membership_size (const shoal_membership_t *self);

//  The member at index (0 .. size - 1, in no particular order, stable only
//  until the next input). Returns 0, or -1 when index is out of range.
int shoal_membership_member_at (const shoal_membership_t *self, size_t index,
                                shoal_membership_member_t *member);

//  The member with id. Returns 0, or -1 when the table does not hold it.
int shoal_membership_member (const shoal_membership_t *self, const shoal_id_t *id,
                             shoal_membership_member_t *member);

//  Members alive or suspect, this node included while it has not left.
size_t shoal_membership_live (const shoal_membership_t *self);

uint64_t shoal_membership_incarnation (const shoal_membership_t *self);

//  The local health score: 0 is healthy, awareness_max - 1 the worst.
uint32_t shoal_membership_health (const shoal_membership_t *self);

//  A member's fine digest bucket: the first byte of the BLAKE2b-128 of its
//  id (docs/membership.md, "Digest"). At 2^k buckets, its top k bits.
uint8_t shoal_membership_bucket (const shoal_id_t *id);

//  The digest a DIGEST carries, at bucket_count buckets (a power of two,
//  1 .. SHOAL_DIGEST_BUCKETS_MAX): members in the table and, into sums
//  (bucket_count items), each bucket's sum of record hashes
//  (docs/membership.md, "Digest"). Two tables are the same when their
//  counts and their sums at SHOAL_DIGEST_BUCKETS_MAX buckets are. Returns 0,
//  or -1 when bucket_count is not valid.
int shoal_membership_digest (const shoal_membership_t *self, uint32_t bucket_count,
                             uint32_t *member_count, uint64_t *sums);

void shoal_membership_stats (const shoal_membership_t *self, shoal_membership_stats_t *stats);

//  Round-trip times of probes: for each probe whose target ACKs it
//  directly, the time from the PING to that ACK, by the now_ms of the two
//  inputs (so to the caller's millisecond; an ACK relayed by a PING-REQ is
//  not counted, its time is two round trips). A histogram whose buckets
//  have the upper bounds below (inclusive), one more above the last.
#define SHOAL_MEMBERSHIP_RTT_BUCKETS 11
extern const uint32_t shoal_membership_rtt_bounds_ms[SHOAL_MEMBERSHIP_RTT_BUCKETS];
typedef struct {
    uint64_t buckets[SHOAL_MEMBERSHIP_RTT_BUCKETS + 1]; //  each its own, not cumulative
    uint64_t count;
    uint64_t sum_ms;
} shoal_membership_rtt_t;

void shoal_membership_rtt (const shoal_membership_t *self, shoal_membership_rtt_t *rtt);

//  Debug: checks the membership's own invariants: the dense list and the
//  slots agree, the counts per state are true, every member used has its
//  meta, and every running suspicion points back at its member. Returns 0,
//  or -1 with *reason (unless reason is NULL) naming the invariant broken.
//  For tests, fuzzers and the simulator, after any input (one pass over
//  the table); the node never calls it. Compiled to return 0 when
//  SHOAL_NO_CHECKS is defined.
int shoal_membership_check (const shoal_membership_t *self, const char **reason);
#endif

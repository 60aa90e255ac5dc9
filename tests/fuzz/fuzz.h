/*  tests/fuzz/fuzz.h: what the fuzz targets and the corpus generator share.

    Every fuzz target is one LLVMFuzzerTestOneInput that feeds its input to
    one layer and aborts when the layer breaks a promise its header makes;
    libFuzzer then keeps the input as a crash artifact. The receive path of
    the codec is checked the same way whether the bytes arrive bare
    (fuzz_decode) or inside an envelope (fuzz_open), so that check lives
    here. So do the fixed key, the receiving node's life and the selector
    byte of fuzz_open, which the corpus generator must reproduce exactly for
    its seeds to reach what they are meant to.
*/
#ifndef SHOAL_FUZZ_H
#define SHOAL_FUZZ_H

#include "wire/envelope.h"
#include "wire/keyring.h"
#include "wire/wire.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

//  The entry points libFuzzer calls.
int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);
int LLVMFuzzerInitialize (int *argc, char ***argv);

//  Aborts, naming the broken promise, when cond is false.
#define FUZZ_REQUIRE(cond, ...)                                                                    \
    do {                                                                                           \
        if (!(cond))                                                                               \
            fuzz_fail (__FILE__, __LINE__, #cond, __VA_ARGS__);                                    \
    } while (0)

//  Prints where and what failed, then aborts.
_Noreturn void fuzz_fail (const char *file, int line, const char *cond, const char *format, ...)
    __attribute__ ((format (printf, 4, 5)));

//  Decodes size bytes as a node does on receipt from carrier, with an arena
//  of exactly SHOAL_DECODE_ARENA (size) bytes, and aborts unless: the decode
//  never fails only because that arena is full; a refusal comes with a
//  non-empty, NUL-terminated error text; an accepted message is of a type
//  that travels on carrier, re-encodes, and its encoding decodes on the same
//  carrier and re-encodes to the same bytes. Returns 0 when the message was
//  accepted, -1 when it was refused.
int fuzz_decode_checked (const uint8_t *data, size_t size, shoal_purpose_t carrier);

//  Aborts unless msg, handed out by a core, encodes within its type's
//  largest size.
void fuzz_require_encodes (const shoal_msg_t *msg);

//  The clock of the cores' step fuzzers after a time step whose header's
//  high five bits are its operand: a tick moves on by operand x 37 ms; a
//  step to next moves to next (at most an hour on, which keeps a
//  nonsense next from wrapping the clock) and then operand ms more.
uint64_t fuzz_step_time (uint64_t now, uint8_t header, bool to_next, uint64_t next);

//  The step fuzzers' operands: the next byte of data from *at (moved on),
//  or 0 past its end; and a number a one-byte operand makes of base: a
//  signed step from it that saturates at 0 and UINT64_MAX, except
//  FUZZ_NUMBER_MAX, which is UINT64_MAX itself.
#define FUZZ_NUMBER_MAX 0x7f
uint8_t fuzz_operand (const uint8_t *data, size_t size, size_t *at);
uint64_t fuzz_number (uint8_t operand, uint64_t base);

//  The one cluster key of fuzz_open's keyed node and of the sealed seeds.
extern const uint8_t fuzz_key[SHOAL_KEY_SIZE];

//  The life of fuzz_open's receiving node: envelopes addressed to exactly
//  this life, or to nobody, get past the addressing checks.
extern const shoal_life_t fuzz_self;

//  How fuzz_open receives one input: the carrier (purpose) the envelope
//  arrives on, whether the receiving node holds fuzz_key or runs in
//  plaintext, and whether the payload buffer is first offered one byte
//  short of the payload, to be refused for want of room.
typedef struct {
    shoal_purpose_t purpose;
    bool keyed;
    bool short_room;
} fuzz_open_mode_t;

//  The first byte of a fuzz_open input encodes its mode. Every byte value
//  selects one.
uint8_t fuzz_open_selector (const fuzz_open_mode_t *mode);
void fuzz_open_select (uint8_t selector, fuzz_open_mode_t *mode);

//  A fuzz_membership input is a run of steps, each a header byte and its
//  operands. The low two bits of the header say what the step is:
//    TICK     the clock moves on by (header >> 2) * 37 ms, then a tick;
//    MESSAGE  a message from peer (header >> 2) & 7, addressed unless bit
//             5 is set, on a frame if bit 6 is set and on a datagram
//             otherwise; a 2-byte big-endian length and that many bytes of
//             message follow;
//    CALL     call (header >> 2) & 7 of fuzz_membership_call_t, about peer
//             (header >> 5) & 7.
//  The peers are FUZZ_MEMBERSHIP_PEERS nodes whose ids are one byte, their
//  index + 1, repeated; the node under test has id 0xee repeated.
#define FUZZ_MEMBERSHIP_TICK    0
#define FUZZ_MEMBERSHIP_MESSAGE 1
#define FUZZ_MEMBERSHIP_CALL    2
#define FUZZ_MEMBERSHIP_PEERS   8

typedef enum {
    FUZZ_MEMBERSHIP_TEACH = 0, //  a SYNC-REPLY making every peer an alive member
    FUZZ_MEMBERSHIP_JOIN = 1,
    FUZZ_MEMBERSHIP_INTRODUCE = 2,
    FUZZ_MEMBERSHIP_LEAVE = 3,
    FUZZ_MEMBERSHIP_SET_META = 4,
    FUZZ_MEMBERSHIP_HINT = 5, //  peer 7 hints the node's own id, the others their own
} fuzz_membership_call_t;

//  A fuzz_elector input is a setup byte, then a run of steps, each a header
//  byte and its operands. The setup byte: bit 0 set for available mode
//  (quorum mode otherwise), bit 1 preempt, bits 2-4 expect, bit 5 this
//  node's priority, bit 6 a restart: the node starts from what it saved in
//  an earlier life (term 5, promised to peer 4; voters_version 3, peers 0
//  to 4 and itself). The low three bits of a header say what the step is;
//  bits 3-5 name a peer:
//    TICK         the clock moves on by (header >> 3) * 37 ms, then a tick;
//    NEXT         the clock moves to next, when that is later, and on by
//                 (header >> 3) ms (a late timer), then a tick;
//    MEMBER       the peer is live if bit 6 is set, with priority bit 7;
//    MESSAGE      from the peer, a 2-byte big-endian length and that many
//                 bytes of message, decoded on a frame;
//    ELECTION     from the peer; operands term and priority;
//    ANSWER       from the peer; operand term;
//    COORDINATOR  from the peer; operands term, priority, round,
//                 voters_version, a voter count and that many voters;
//    ACK          a COORDINATOR-ACK from the peer; operands term, round,
//                 voters_version, a voter count and that many voters.
//  After a tick the node ticks again at the same time while next is not
//  later, as a shell's timer would. An operand past the input's end is 0.
//  Numbers are one byte, a signed step from a base that saturates at 0 and
//  UINT64_MAX, except FUZZ_NUMBER_MAX, which is UINT64_MAX itself.
//  The base of a term is the node's term; of a round, the last round the
//  peer sent in a COORDINATOR (the last the node sent, in an ACK); of a
//  voters_version, the node's. A priority is its operand & 3, a voter count
//  its operand & 31, and a voter's low four bits say who: peers 0 to 7,
//  FUZZ_ELECTOR_SELF, FUZZ_ELECTOR_NOBODY (the all-zero id), or one of 96
//  strangers, whose id is the operand, repeated (so that the voter sets can
//  grow the node's member table). The peers are FUZZ_ELECTOR_PEERS nodes
//  whose ids are one byte, their index + 1, repeated; the node under test
//  has id 0x03 repeated, but 0x80 last, so that it ranks between peers 2
//  and 3 at equal priority.
#define FUZZ_ELECTOR_TICK        0
#define FUZZ_ELECTOR_NEXT        1
#define FUZZ_ELECTOR_MEMBER      2
#define FUZZ_ELECTOR_MESSAGE     3
#define FUZZ_ELECTOR_ELECTION    4
#define FUZZ_ELECTOR_ANSWER      5
#define FUZZ_ELECTOR_COORDINATOR 6
#define FUZZ_ELECTOR_ACK         7
#define FUZZ_ELECTOR_PEERS       8

#define FUZZ_ELECTOR_AVAILABLE    0x01
#define FUZZ_ELECTOR_PREEMPT      0x02
#define FUZZ_ELECTOR_EXPECT_SHIFT 2
#define FUZZ_ELECTOR_PRIORITY     0x20
#define FUZZ_ELECTOR_RESTART      0x40
#define FUZZ_ELECTOR_LIVE         0x40
#define FUZZ_ELECTOR_HIGH         0x80

#define FUZZ_ELECTOR_SELF   8
#define FUZZ_ELECTOR_NOBODY 9

//  A fuzz_jobs input is a setup byte, a saved set when the setup byte asks
//  for a restart, then a run of steps, each a header byte and its operands.
//  The setup byte: bit 0 available mode (quorum otherwise), bit 1 the LAN
//  profile (loopback otherwise), bit 2 a restart from a saved set, bit 3
//  that saved set made in bulk, bits 4-5 max_pending (256, 1, 2 or 3), bit
//  6 rescales that wait at most 1 s, bit 7 retry and forward times of 1 ms.
//  A saved set is a term, a version (numbers from 0) and a count (& 7) of
//  specs. In bulk, after the two bytes FUZZ_JOBS_BULK_MARK, it is a term, a
//  version, a count of two bytes, big-endian (at most 4097 jobs, one over
//  SHOAL_JOBS_MAX, named bulk-0000 on), then the parallelism, command (in
//  steps of 4 bytes, up to about 1 kB: a frame's worth for 4096 jobs) and
//  labels (& 31, keys k0 on) they all share. Without the mark, which random
//  bytes seldom make, the set is read from operands: loading thousands of
//  jobs takes seconds under the sanitizers, a normal step microseconds.
//  The low three bits of a header say what the step is; bits 3-5 name a
//  node (FUZZ_JOBS_SELF is the node under test, the others are peers)
//  unless told otherwise:
//    TICK      the clock moves on by (header >> 3) * 37 ms, then a tick;
//    NEXT      the clock moves to next, when that is later, and on by
//              (header >> 3) ms (a late timer), then a tick;
//    LEADER    the node leads at term (operand; at least 1 for the node
//              under test, as the elector's own terms are), acting if bit
//              6 is set; nobody leads if bit 7 is set;
//    MEMBER    the node is live if bit 6 is set; with bit 7, the voters are
//              set instead: the nodes of the operand's bits;
//    MESSAGE   from the node (FUZZ_JOBS_SELF standing for a stranger), a
//              2-byte big-endian length and that many bytes of message,
//              decoded on a frame;
//    CRAFTED   from the node likewise, a message built from operands: a
//              selector (FUZZ_JOBS_CRAFT_*, with FUZZ_JOBS_CRAFT_FLAG), then
//              its fields; it goes through the encoder and the decoder, so
//              that it is one the wire carries;
//    REQUEST   a local request: bits 3-4 the op (FUZZ_JOBS_SUBMIT ...),
//              bits 5-6 where a submit's spec comes from (FUZZ_JOBS_SPEC
//              ...); then its operands: a spec, or a job name, parallelism,
//              min and timeout (a rescale), a job name (a remove), an op
//              and a job name (another op);
//    CAPACITY  operands a job (below 0xc0, one that waits, when any does;
//              else a job name from the operand on) and a capacity.
//  After a tick the node ticks again at the same time while next is not
//  later, as a shell's timer would. An operand past the input's end is 0.
//  Numbers are one byte, a signed step from a base (fuzz_number): for a
//  leader's term, the greatest term given; for the terms of JOB,
//  SYNC-REPLY and CONTROL-REP, the term of the leader followed; for an
//  ACK's term, the term of the specs held; for every version, the version
//  held; for a CONTROL-REP's id, the id of the last request forwarded.
//  A job name operand below 0x40 picks from a table (0 to 7 valid names, 8
//  to 15 broken ones); from 0x40, the (operand & 0x3f)th held job, when
//  there is one; from 0x80, (operand & 0x7f) raw bytes follow. A spec is a
//  name, a parallelism, flags (bit 0 stateful, bits 1-2 the weight: 1, 0,
//  7 or UINT32_MAX, bits 3-7 a label count) and a command (0 none, 0xff
//  not UTF-8, else (operand - 1) * 17 bytes; an even one, not 0, also
//  makes the job fenced), then one operand per label
//  (FUZZ_JOBS_LABEL_*). A parallelism or capacity operand below 0xf8 is
//  itself; the eight above stand for large and edge values. A timeout is
//  operand^2 * 10 ms, 0xff UINT32_MAX.
#define FUZZ_JOBS_TICK     0
#define FUZZ_JOBS_NEXT     1
#define FUZZ_JOBS_LEADER   2
#define FUZZ_JOBS_MEMBER   3
#define FUZZ_JOBS_MESSAGE  4
#define FUZZ_JOBS_CRAFTED  5
#define FUZZ_JOBS_REQUEST  6
#define FUZZ_JOBS_CAPACITY 7

#define FUZZ_JOBS_NODES    8 //  peers 0 to 5, the node itself, a stranger
#define FUZZ_JOBS_SELF     6
#define FUZZ_JOBS_STRANGER 7

#define FUZZ_JOBS_AVAILABLE     0x01
#define FUZZ_JOBS_LAN           0x02
#define FUZZ_JOBS_RESTART       0x04
#define FUZZ_JOBS_BULK          0x08
#define FUZZ_JOBS_BULK_MARK     "BK"
#define FUZZ_JOBS_PENDING_SHIFT 4
#define FUZZ_JOBS_SHORT_WAIT    0x40
#define FUZZ_JOBS_FAST          0x80

#define FUZZ_JOBS_ACTING 0x40 //  LEADER
#define FUZZ_JOBS_NOBODY 0x80
#define FUZZ_JOBS_LIVE   0x40 //  MEMBER
#define FUZZ_JOBS_VOTERS 0x80

//  REQUEST: the op in bits 3-4, a submit's spec in bits 5-6: read from the
//  operands, none (NULL), a held spec (operand: which), or a held spec
//  with another command (likewise).
#define FUZZ_JOBS_SUBMIT  0
#define FUZZ_JOBS_RESCALE 1
#define FUZZ_JOBS_REMOVE  2
#define FUZZ_JOBS_OTHER   3
#define FUZZ_JOBS_SPEC    0
#define FUZZ_JOBS_NO_SPEC 1
#define FUZZ_JOBS_HELD    2
#define FUZZ_JOBS_CHANGED 3

//  CRAFTED: the selector's low three bits, and its flag:
//    JOB          term, version, a spec;
//    ACK          a JOB-ACK: term, version;
//    SYNC_REQ     want (operand & 7);
//    SYNC_REPLY   the jobs part (the members part only, with the flag):
//                 term, version, a count (& 7) and that many specs;
//    CONTROL_REQ  id, op (% 7), job name, parallelism, min, timeout, and a
//                 spec with the flag;
//    CONTROL_REP  id, code (% 7), term, version, and the job with the flag;
//    SNAPSHOT     a SYNC-REPLY of the set held, named term, version;
//    ELECTION     of the election layer, which the jobs layer drops.
#define FUZZ_JOBS_CRAFT_JOB         0
#define FUZZ_JOBS_CRAFT_ACK         1
#define FUZZ_JOBS_CRAFT_SYNC_REQ    2
#define FUZZ_JOBS_CRAFT_SYNC_REPLY  3
#define FUZZ_JOBS_CRAFT_CONTROL_REQ 4
#define FUZZ_JOBS_CRAFT_CONTROL_REP 5
#define FUZZ_JOBS_CRAFT_SNAPSHOT    6
#define FUZZ_JOBS_CRAFT_ELECTION    7
#define FUZZ_JOBS_CRAFT_FLAG        0x08

//  A label operand's low three bits: k<operand >> 3>=v (unique keys), then
//  zone=eu, zone=us, rack="", ""=x, NULL=x, gpu=NULL, and a key (bit 3
//  set) or a value 65 bytes long.
#define FUZZ_JOBS_LABEL_UNIQUE 0

#endif

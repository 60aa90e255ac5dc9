/*  node/transport.h: a node's sockets, sealed and decoded.

    Two carriers, as docs/architecture.md and docs/wire.md say:
    - datagrams (SWIM: PING, ACK, NACK) over one UDP socket on the node's
      port, at most SHOAL_DATAGRAM_MAX bytes sealed;
    - frames (digests, election, jobs, assignments, status) over ZeroMQ: one
      ROUTER bound on the same port number over TCP, and DEALERs (links)
      that connect to peers' ROUTERs, made on first use and closed when idle
      (four link timeouts), SHOAL_TRANSPORT_LINKS_MAX at most (the least
      recently used is closed for a new one). A DEALER names itself by its
      node's id (ZMQ_ROUTING_ID, hex), so that the peer sends back over the
      same connection: on the acting leader (shoal_transport_route_back), a
      frame to a member that sent one over a connection of its own within
      two link timeouts goes over this node's ROUTER, and over a link only
      otherwise (docs/node.md, "Links"). Every socket caps a message at
      SHOAL_FRAME_MAX (ZMQ_MAXMSGSIZE), so a peer cannot make this node buffer
      more. DEALERs queue only to a finished connection (ZMQ_IMMEDIATE), a
      few messages deep, and never block (send timeout 0): a message that
      does not fit is dropped and counted. The cores resend what matters
      (keep-alives, snapshots, digests), so a drop costs a delay, never a
      wrong state.
    - links that cannot get through are closed and made again, so that a
      frame never waits out TCP's retransmission backoff after a cut
      (docs/node.md, "Links"): each DEALER closes a connection whose sent
      bytes go unacknowledged for link_timeout_ms (ZMQ_TCP_MAXRT), pings
      its peer every 5 link_timeout_ms (an idle link too) and closes a
      connection that answers nothing for link_timeout_ms after a ping;
      it gives up a connect after half of it, a
      handshake after all of it, and tries again 100 ms to a quarter of it
      later.

    Every message goes out sealed in the envelope of wire/envelope.h (or
    in plaintext when the keyring holds no key) and comes in opened,
    authenticated, checked against replays and decoded with the wire
    codec's limits before anyone looks at it. What fails any step is dropped
    and counted by reason; nothing from the network can make this module
    allocate beyond its fixed buffers, block, or crash.

    Not thread-safe: the node's actor owns it. The UDP descriptor, the
    ROUTER socket and the beacon actor are for the actor's poller; receive
    reads one message from whichever is ready.
*/

#ifndef SHOAL_TRANSPORT_H
#define SHOAL_TRANSPORT_H

#include "wire/arena.h"
#include "wire/envelope.h"
#include "wire/wire.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

//  The most links (DEALERs) a node holds at once.
#define SHOAL_TRANSPORT_LINKS_MAX 64

typedef struct {
    const char *bind;               //  "host:port" for UDP and TCP; port 0: any free port
    const shoal_keyring_t *keyring; //  shared, not owned; no key: plaintext
    shoal_life_t self;              //  this node's life
    size_t peers;                   //  replay windows per carrier (the cluster's size, or more)
    uint32_t send_queue;            //  messages a DEALER holds for a slow peer
    uint32_t link_timeout_ms;       //  a link silent this long is made again; 0: 2000
} shoal_transport_config_t;

typedef struct {
    uint64_t sent[3];     //  envelopes sent, by purpose (beacon, datagram, frame)
    uint64_t received[3]; //  envelopes accepted
    uint64_t bytes_sent;
    uint64_t bytes_received;
    uint64_t send_dropped; //  refused by a full queue, no route or a message too large
    uint64_t refused[SHOAL_OPEN_RESULT_COUNT]; //  envelopes dropped, by reason
    uint64_t undecodable;                      //  authentic, but the payload broke the codec
    uint64_t malformed;    //  ZeroMQ messages not of one frame, beacons not of two
    uint64_t unreachable;  //  ICMP port unreachables about datagrams sent
    uint64_t errors_other; //  other errors the UDP socket's error queue held
    //  Links (docs/node.md, "Links"): the DEALERs open now, the members
    //  frames go to over the connections they made to this node's ROUTER
    //  (heard from within two link timeouts), links closed for being idle
    //  or to make room, and frames sent over the ROUTER.
    uint64_t links_open;
    uint64_t links_routed;
    uint64_t links_closed_idle;
    uint64_t links_evicted;
    uint64_t links_refused; //  ZeroMQ gave no socket for a new link (docs/node.md)
    uint64_t routes_closed; //  members' connections in use that closed (shoal_transport_closed)
    uint64_t frames_routed;
    //  By message type (the wire's type byte): messages sent and accepted,
    //  and their bytes as sealed on the wire (for the node's metrics).
    struct {
        uint64_t sent, received, bytes_sent, bytes_received;
    } types[256];
} shoal_transport_stats_t;

typedef struct _shoal_transport_t shoal_transport_t;

//  Binds the sockets. nonce_prefix must be fresh random bytes for this life
//  (see shoal_sealer_new). Returns NULL with a one-line reason in why.
shoal_transport_t *shoal_transport_new (const shoal_transport_config_t *config,
                                        const uint8_t nonce_prefix[SHOAL_ENVELOPE_NONCE], char *why,
                                        size_t why_size);
void shoal_transport_destroy (shoal_transport_t **self_p);

//  The port bound (useful with port 0).
uint16_t shoal_transport_port (const shoal_transport_t *self);

//  The address family of the sockets (AF_INET, or AF_INET6 when bound to
//  an IPv6 address): the members it reaches are of that family (an IPv6
//  socket bound to [::] also reaches IPv4 ones).
int shoal_transport_family (const shoal_transport_t *self);

//  For the poller: the UDP socket's descriptor, the ROUTER (a libzmq socket) and
//  the beacon actor (a zactor_t; NULL while beacons are off).
int shoal_transport_udp_fd (const shoal_transport_t *self);
void *shoal_transport_router (const shoal_transport_t *self);
void *shoal_transport_beacons (const shoal_transport_t *self);

//  The ROUTER's monitor (a libzmq socket; NULL when ZeroMQ gave none), for
//  the poller: readable when a connection to the ROUTER closed.
void *shoal_transport_monitor (const shoal_transport_t *self);

//  Reads one event of the monitor, without waiting. Returns 1 with id set
//  when the connection a member sent its frames over lately (within two
//  link timeouts) closed: a process that dies has its kernel close it at
//  once, so the caller may take it as a hint (docs/membership.md, "Hints"),
//  never as a verdict (a member also closes a link it no longer uses, and
//  a cut network closes it after link_timeout_ms). Returns 0 for an event
//  about no such connection, -1 when no event is left (or no monitor).
int shoal_transport_closed (shoal_transport_t *self, uint8_t id[SHOAL_ID_SIZE]);

//  The links' DEALERs (libzmq sockets), at most max of them, into sockets:
//  frames come back over them too, for the poller (receive reads them as
//  frames). Valid until the next call into the transport. touched[i]: the
//  transport sent or read on sockets[i] since the last call, so that its
//  ZeroMQ events must be read again before the poller sleeps (a send or a
//  read may take the command its descriptor would have woken the poller
//  for); each link's mark is cleared.
size_t shoal_transport_links (shoal_transport_t *self, void **sockets, bool *touched, size_t max);

//  The same mark for the ROUTER: true once it was sent or read on since the
//  last call; cleared.
bool shoal_transport_router_touched (shoal_transport_t *self);

//  Beacons: sealed UDP broadcasts on port, shared by every node of the host
//  (czmq's zbeacon), on interface_name: a network interface's name, "*"
//  for all, or "" (or NULL) for the process's setting (ZSYS_INTERFACE, or
//  zsys_set_interface; unset: the first interface that broadcasts). They
//  need an interface with broadcast: on a machine with only loopback, a
//  broadcast route on lo and "*" (docs/architecture.md, "Discovery").
//  zbeacon reads the interface from a process-wide setting; this sets it
//  for the start alone, under a lock, so that nodes of one process each
//  have their own. Returns 0, or -1 with the reason in why, which names
//  the interface asked for (zbeacon found no such interface that
//  broadcasts).
int shoal_transport_beacons_start (shoal_transport_t *self, uint16_t port,
                                   const char *interface_name, char *why, size_t why_size);

//  Broadcasts beacon (a BEACON message), sealed afresh, every interval_ms
//  from now on, in place of the last one. Publish again from time to time
//  (and whenever the beacon changes): a listener takes each sealed beacon
//  once and refuses its copies as replays. Returns 0, or -1.
int shoal_transport_beacons_publish (shoal_transport_t *self, const shoal_msg_t *beacon,
                                     uint32_t interval_ms);

//  Seals msg to recipient (NULL: unaddressed, as first contact) and sends it
//  as a datagram to addr ("host:port", numeric, at most SHOAL_ADDR_MAX
//  characters as wire.h has it). Returns 0, or -1 when the
//  message cannot be encoded or sealed, addr is not a numeric address, or
//  the socket refused it (counted in send_dropped).
int shoal_transport_datagram (shoal_transport_t *self, const char *addr,
                              const shoal_life_t *recipient, const shoal_msg_t *msg);

//  Seals msg to recipient and sends it as a frame to that node's ROUTER at
//  addr ("host:port" of its TCP port). The DEALER for recipient's id is made
//  on first use and made again when addr changes. A DEALER refuses frames
//  until its connection is made: for its first second, one holds up to 16
//  of them (8 MB for all links together), in order, for
//  shoal_transport_flush to send. Returns 0, or -1 as above.
int shoal_transport_frame (shoal_transport_t *self, const char *addr, const shoal_life_t *recipient,
                           const shoal_msg_t *msg);

//  Whether frames go back over the connections members made to this
//  node's ROUTER (those heard from within two link timeouts) rather than
//  over links of its own: on for the acting leader, whose followers all
//  link it, so that it needs no link per member; off (the default), a
//  node sends over its own links, the peer's ROUTER sending back over
//  them when it routes back. Two nodes that both routed back would answer
//  each other over the first one's link, and the leader's links to every
//  member would stay.
void shoal_transport_route_back (shoal_transport_t *self, bool on);

//  Sends the frames that wait for connections being made, and drops those
//  of links a second old. Returns 0 when none waits, else in how many
//  milliseconds to call it again: 2 for a link just made, then an eighth of
//  the oldest waiting link's age, at most 50, so that connections that are
//  slow to come (a starved machine, a peer gone) are not polled for
//  hundreds of times a second.
uint32_t shoal_transport_flush (shoal_transport_t *self);

//  Makes the DEALER to the node id at addr now, ahead of its first frame
//  (or marks it used, when there). The node itself makes links on first
//  use, the first frames held until they connect. Returns 0, or -1 when
//  addr is malformed, memory is short, or ZeroMQ gives no socket (counted
//  in links_refused: node/sockets.h).
int shoal_transport_link (shoal_transport_t *self, const uint8_t id[16], const char *addr);

//  Makes the DEALER to the node id at addr anew, closing the one there and
//  dropping its queue: for a member the view says is alive again after a
//  suspicion, whose old connection may still wait out TCP's retransmission
//  backoff, where a new one sends its SYN at once. A link made less than a
//  second ago is kept (it is new, and may hold a member's first frames).
//  Where there is no link, none is made. Returns 0, or -1 as
//  shoal_transport_link.
int shoal_transport_relink (shoal_transport_t *self, const uint8_t id[16], const char *addr);

//  Closes the DEALER to the node id (it left, or died): its queue is dropped.
void shoal_transport_forget (shoal_transport_t *self, const uint8_t id[16]);

//  One message that arrived and passed every check: its envelope, the
//  decoded message (strings and lists in the arena given to receive, valid
//  until that arena is reset) and where it came from.
typedef struct {
    shoal_envelope_t envelope;
    shoal_msg_t msg;
    //  "ip:port" of a datagram's sender; of a beacon, the sender's address
    //  with the port the beacon names; "" for a frame.
    char from[SHOAL_ADDR_MAX + 1];
} shoal_transport_in_t;

//  Reads one message of carrier (SHOAL_PURPOSE_DATAGRAM, _FRAME or _BEACON)
//  without waiting. Returns 1 with *in filled when a message was accepted,
//  0 when nothing was ready or what came was dropped (counted), -1 on a
//  socket error.
int shoal_transport_receive (shoal_transport_t *self, shoal_purpose_t carrier, shoal_arena_t *arena,
                             shoal_transport_in_t *in);

//  Reads one frame from socket, the ROUTER or a link's socket as
//  shoal_transport_links gave it, as shoal_transport_receive does from all
//  of them. A read finds nothing at a ZeroMQ cost (its own system calls):
//  the node reads only the sockets its wait found readable. 0 for a link
//  closed since.
int shoal_transport_receive_from (shoal_transport_t *self, void *socket, shoal_arena_t *arena,
                                  shoal_transport_in_t *in);

//  Reads one error the kernel queued on the UDP socket (a poll says
//  ZMQ_POLLERR on shoal_transport_udp_fd) without waiting. Returns 1 when it
//  was an ICMP port unreachable about a datagram this node sent, with the
//  datagram's destination, "ip:port", in addr: no process listens there
//  any more (or someone forged the ICMP: it is a hint, never a proof). 0
//  when it was another error (dropped, counted), -1 when none was queued.
int shoal_transport_unreachable (shoal_transport_t *self, char *addr, size_t addr_size);

//  Why the envelope of the message the last receive dropped was refused
//  (SHOAL_OPEN_OK when that receive refused none), and where it came from
//  into from: "ip:port" of a datagram, the IP address of a frame's or a
//  beacon's sender ("" when unknown). The node names a sender that holds
//  another key this way; the counts are in the stats.
shoal_open_result_t shoal_transport_refused (const shoal_transport_t *self, char *from,
                                             size_t from_size);

void shoal_transport_stats (const shoal_transport_t *self, shoal_transport_stats_t *stats);

#endif

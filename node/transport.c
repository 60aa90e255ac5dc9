/*  node/transport.c: a node's UDP socket and ZeroMQ sockets, every message
    sealed on the way out and opened, checked and decoded on the way in.
*/

#include "node/transport.h"
#include "node/sockets.h"
#include "node/why.h"

#include <arpa/inet.h>
#include <assert.h>
#include <czmq.h>
#include <errno.h>
#include <linux/errqueue.h>
#include <netdb.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <netinet/ip_icmp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

//  A DEALER with ZMQ_IMMEDIATE takes a frame only once its connection is
//  made, and the first frames to a new member come right after its link
//  is: the anti-entropy of a join, an election's first word. A link this
//  young holds what it cannot send yet, in order, and sends it once it
//  can (shoal_transport_flush); after that, it drops as before.
#define S_PENDING_MAX   16
#define S_PENDING_MS    1000
#define S_PENDING_BYTES (8u * 1024 * 1024) //  held by all links together
//  How soon the held frames are tried again: an eighth of the oldest
//  waiting link's age, from 2 ms to 50 ms (shoal_transport_flush).
#define S_FLUSH_SHARE  8
#define S_FLUSH_MIN_MS 2
#define S_FLUSH_MAX_MS 50

//  Links are made on demand and closed when idle, so that a node holds as
//  many as it talks to, not one per member (docs/node.md, "Links"): a link
//  that carried nothing for S_LINK_IDLE_FACTOR link timeouts is closed (not
//  while it holds first frames), and past S_LINKS_MAX links the least
//  recently used one is closed for a new one. A member heard over the
//  ROUTER within S_ROUTE_FACTOR link timeouts, on a connection it made, is
//  sent to over that connection: its link stays open at least that long
//  after it sent, being used then. S_ROUTES_MAX bounds the members so heard.
#define S_LINKS_MAX        64
#define S_LINK_IDLE_FACTOR 4
#define S_ROUTE_FACTOR     2
#define S_ROUTES_MAX       65536

typedef struct {
    uint8_t *bytes;
    size_t size;
    uint8_t type;
} s_pending_t;

//  A DEALER to one peer, the address it connects to, when it was made and
//  the frames that wait for its connection. The DEALER is ZeroMQ's own
//  socket, not czmq's: czmq's constructor aborts when ZeroMQ refuses one
//  (node/sockets.h), and a node that links many members, or whose ZeroMQ
//  reaper thread lags behind the sockets it closed, must go on without.
typedef struct {
    void *dealer;
    char addr[SHOAL_ADDR_MAX + 1];
    int64_t made_ms;
    int64_t used_ms; //  when it last took a frame
    bool touched;    //  sent or read on since the poller last asked (shoal_transport_links)
    s_pending_t pending[S_PENDING_MAX];
    size_t pending_count;
} s_link_t;

//  A member's connection to this node's ROUTER: when a frame last came over
//  it, and its descriptor (to know it when ZeroMQ says it closed; -1:
//  unknown).
typedef struct {
    int64_t heard_ms;
    int fd;
} s_route_t;

struct _shoal_transport_t {
    shoal_life_t self;
    int udp;
    int family;
    uint16_t port;
    void *router;         //  node/sockets.h
    zactor_t *beacons;    //  NULL while off
    zhashx_t *links;      //  hex id -> s_link_t
    zhashx_t *routes;     //  hex id -> s_route_t: its connection to the ROUTER
    void *monitor;        //  PAIR: the ROUTER's closed connections (NULL: none)
    bool router_touched;  //  sent or read on since the poller last asked
    int64_t sweep_at;     //  when idle links and old routes are next closed
    bool route_back;      //  frames go over members' connections when they can
    bool pending;         //  some link holds frames,
    size_t pending_bytes; //  this many bytes in all
    uint32_t send_queue;
    uint32_t link_timeout_ms;
    shoal_sealer_t *sealer;
    shoal_opener_t *opener;
    uint8_t *plain;  //  one encoded message, SHOAL_FRAME_MAX
    uint8_t *sealed; //  one envelope, SHOAL_FRAME_MAX
    shoal_transport_stats_t stats;
    //  What the last receive refused at the envelope, and from where.
    shoal_open_result_t refused;
    char refused_from[SHOAL_ADDR_MAX + 1];
};

//  Splits "host:port" (host may be "[v6]") into host and port. Returns 0, or
//  -1 when the text is not of that shape or the port is not 0..65535.
static int
s_split (const char *addr, char *host, size_t host_size, uint16_t *port)
{
    const char *colon = addr ? strrchr (addr, ':') : NULL;
    if (!colon || colon == addr)
        return -1;
    const char *start = addr, *end = colon;
    if (*start == '[') {
        if (end[-1] != ']')
            return -1;
        start++, end--;
    }
    size_t length = (size_t) (end - start);
    if (length == 0 || length >= host_size)
        return -1;
    memcpy (host, start, length);
    host[length] = 0;
    char *stop;
    errno = 0;
    unsigned long number = strtoul (colon + 1, &stop, 10);
    if (colon[1] == 0 || *stop != 0 || errno || number > 65535)
        return -1;
    *port = (uint16_t) number;
    return 0;
}

//  The socket address of "host:port"; numeric hosts only unless names is
//  true (resolving a name may block: only at start).
static int
s_resolve (const char *addr, int family, bool passive, bool names, struct sockaddr_storage *out,
           socklen_t *out_size)
{
    char host[SHOAL_ADDR_MAX + 1], port_text[8];
    uint16_t port;
    if (s_split (addr, host, sizeof host, &port) != 0)
        return -1;
    snprintf (port_text, sizeof port_text, "%u", port);
    //  An IPv6 socket bound to every address ([::]) is dual-stack: it
    //  reaches an IPv4 member at its IPv4-mapped address.
    struct addrinfo hints = { .ai_family = family,
                              .ai_socktype = SOCK_DGRAM,
                              .ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0) |
                                          (names ? 0 : AI_NUMERICHOST) |
                                          (family == AF_INET6 ? AI_V4MAPPED : 0) };
    struct addrinfo *found = NULL;
    bool any = strcmp (host, "*") == 0;
    if (getaddrinfo (any ? NULL : host, port_text, &hints, &found) != 0 || !found)
        return -1;
    memcpy (out, found->ai_addr, found->ai_addrlen);
    *out_size = found->ai_addrlen;
    freeaddrinfo (found);
    return 0;
}

//  "ip:port" of a socket address.
static void
s_format (const struct sockaddr_storage *address, char *text, size_t size)
{
    char ip[INET6_ADDRSTRLEN] = "?";
    uint16_t port = 0;
    if (address->ss_family == AF_INET) {
        const struct sockaddr_in *v4 = (const struct sockaddr_in *) address;
        inet_ntop (AF_INET, &v4->sin_addr, ip, sizeof ip);
        port = ntohs (v4->sin_port);
        snprintf (text, size, "%s:%u", ip, port);
    } else {
        //  An IPv4 sender on a dual-stack socket comes IPv4-mapped: named as
        //  it names itself, in IPv4.
        const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *) address;
        bool mapped = IN6_IS_ADDR_V4MAPPED (&v6->sin6_addr);
        inet_ntop (mapped ? AF_INET : AF_INET6,
                   mapped ? &v6->sin6_addr.s6_addr[12] : (const void *) &v6->sin6_addr, ip,
                   sizeof ip);
        port = ntohs (v6->sin6_port);
        snprintf (text, size, mapped ? "%s:%u" : "[%s]:%u", ip, port);
    }
}

static void
s_link_destroy (void **item)
{
    s_link_t *link = *item;
    if (link) {
        zmq_close (link->dealer);
        for (size_t i = 0; i < link->pending_count; i++)
            free (link->pending[i].bytes);
        free (link);
        *item = NULL;
    }
}

static void
s_route_destroy (void **item)
{
    free (*item);
    *item = NULL;
}

//  Options every ZeroMQ socket here takes: no message above a frame, no
//  lingering at close.
static void
s_socket_limits (void *socket)
{
    zsock_set_maxmsgsize (socket, (int) SHOAL_FRAME_MAX);
    zsock_set_linger (socket, 0);
}

//  How a link finds out that its connection cannot get through, and makes
//  another (docs/node.md, "Links"). TCP alone never gives up on a peer that
//  stopped answering: it retransmits with a backoff that doubles up to
//  minutes (rto 26 s after a 30 s cut), and a frame sent after the heal
//  waits for the next retransmission. So the kernel closes a connection
//  whose bytes go unacknowledged for the timeout (TCP_USER_TIMEOUT, through
//  ZMQ_TCP_MAXRT): a link that carries anything (the leader's rounds and
//  their acknowledgements, every half second on a LAN) is closed within a
//  timeout or two of a cut. An idle link is checked less often: it pings
//  its peer (a ZMTP PING, which the peer's ZeroMQ I/O thread answers) every
//  S_LINK_PING_FACTOR timeouts and closes the connection when a timeout
//  passes after a ping without a byte from the peer, so a peer whose kernel
//  still acknowledges but whose process is stopped is found too. The
//  pings are what links cost at idle (three packets each), so they are
//  rare: a frame on an idle link whose connection died is found by the
//  kernel's timeout as any other. The peer's ROUTER closes its end after
//  two ping intervals without a ping (the time to live the pings carry: one
//  missed ping is no reason). ZeroMQ then connects again; a connect (a SYN
//  the kernel would resend only after 1, 3, 7 s) that gets no answer within
//  half the timeout, or a handshake none within the timeout, is given up
//  and tried anew, 100 ms later at first, then up to a quarter timeout
//  later. With IMMEDIATE, what the closed connection queued is dropped with
//  it.
#define S_LINK_PING_FACTOR 5
static void
s_link_liveness (void *dealer, uint32_t timeout_ms)
{
    int timeout = (int) timeout_ms;
    zsock_set_heartbeat_ivl (dealer, S_LINK_PING_FACTOR * timeout);
    zsock_set_heartbeat_timeout (dealer, timeout);
    zsock_set_heartbeat_ttl (dealer, 2 * S_LINK_PING_FACTOR * timeout);
    zsock_set_tcp_maxrt (dealer, timeout);
    zsock_set_connect_timeout (dealer, timeout / 2);
    zsock_set_handshake_ivl (dealer, timeout);
    zsock_set_reconnect_ivl (dealer, 100);
    zsock_set_reconnect_ivl_max (dealer, timeout / 4 > 100 ? timeout / 4 : 0);
}

//  Binds the UDP socket to bind, then the ROUTER to the same port over TCP.
//  With port 0 the system picks the UDP port, which may be taken over TCP:
//  the caller tries again.
static int
s_bind (shoal_transport_t *self, const char *bind_addr, bool *retry, char *why, size_t why_size)
{
    *retry = false;
    struct sockaddr_storage address;
    socklen_t size;
    if (s_resolve (bind_addr, AF_UNSPEC, true, true, &address, &size) != 0)
        return shoal_why (why, why_size, "bind: cannot resolve '%s' (host:port)", bind_addr);
    self->family = address.ss_family;
    self->udp = socket (self->family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (self->udp < 0 || bind (self->udp, (struct sockaddr *) &address, size) != 0)
        return shoal_why (why, why_size, "bind: UDP: %s", strerror (errno));
    //  ICMP errors about datagrams sent from this unconnected socket are
    //  queued for shoal_transport_unreachable (without this, the kernel
    //  drops them). Where an option is missing, no hints: nothing else
    //  depends on it.
    int on = 1;
    if (self->family == AF_INET6)
        setsockopt (self->udp, IPPROTO_IPV6, IPV6_RECVERR, &on, sizeof on);
    setsockopt (self->udp, IPPROTO_IP, IP_RECVERR, &on, sizeof on);
    struct sockaddr_storage bound;
    socklen_t bound_size = sizeof bound;
    getsockname (self->udp, (struct sockaddr *) &bound, &bound_size);
    char ip[INET6_ADDRSTRLEN];
    if (self->family == AF_INET) {
        self->port = ntohs (((struct sockaddr_in *) &bound)->sin_port);
        inet_ntop (AF_INET, &((struct sockaddr_in *) &address)->sin_addr, ip, sizeof ip);
    } else {
        self->port = ntohs (((struct sockaddr_in6 *) &bound)->sin6_port);
        inet_ntop (AF_INET6, &((struct sockaddr_in6 *) &address)->sin6_addr, ip, sizeof ip);
    }
    char refused[128] = "";
    self->router = shoal_sockets_new (ZMQ_ROUTER, refused, sizeof refused);
    if (!self->router)
        return shoal_why (why, why_size, "bind: %s", refused);
    s_socket_limits (self->router);
    //  The accepted connections: the DEALERs' pings carry the time to live
    //  that closes a silent one; the kernel closes one whose bytes (the
    //  answers to pings) go unacknowledged, and a connection that never
    //  greets is closed after the same time.
    zsock_set_tcp_maxrt (self->router, (int) self->link_timeout_ms);
    zsock_set_handshake_ivl (self->router, (int) self->link_timeout_ms);
    //  Frames go back over a member's own connection, named by its routing
    //  id (its node id): one it cannot route is refused at once
    //  (MANDATORY), for a link to carry instead, and a member that connects
    //  again with the same id (a new connection, a restart) takes its name
    //  over (HANDOVER) rather than being turned away.
    zsock_set_router_mandatory (self->router, 1);
    zsock_set_router_handover (self->router, 1);
    zsock_set_sndhwm (self->router, (int) self->send_queue);
    if (self->family == AF_INET6)
        zsock_set_ipv6 (self->router, 1);
    char endpoint[SHOAL_ADDR_MAX + 16];
    snprintf (endpoint, sizeof endpoint, self->family == AF_INET ? "tcp://%s:%u" : "tcp://[%s]:%u",
              ip, self->port);
    if (zmq_bind (self->router, endpoint) != 0) {
        *retry = zmq_errno () == EADDRINUSE;
        return shoal_why (why, why_size, "bind: TCP: %s", zmq_strerror (zmq_errno ()));
    }
    return 0;
}

static void
s_unbind (shoal_transport_t *self)
{
    if (self->udp >= 0)
        close (self->udp);
    self->udp = -1;
    shoal_sockets_close (&self->router);
}

//  The ROUTER's monitor: ZeroMQ says over an inproc PAIR when one of the
//  ROUTER's connections closes (ZMQ_EVENT_DISCONNECTED, with its
//  descriptor). A member whose process died has its connection closed by
//  its kernel at once, so the close is a hint, as an ICMP port unreachable
//  is (docs/membership.md, "Hints"). When ZeroMQ refuses the sockets there
//  is no monitor and no such hints: nothing else depends on them.
static void
s_monitor_start (shoal_transport_t *self)
{
    //  A name of its own: a transport made where a destroyed one was has
    //  its address, and the old monitor's name is freed only when ZeroMQ's
    //  reaper gets to it.
    static atomic_uint made;
    char endpoint[64];
    snprintf (endpoint, sizeof endpoint, "inproc://shoal-router-monitor-%u",
              atomic_fetch_add (&made, 1));
    if (zmq_socket_monitor (self->router, endpoint, ZMQ_EVENT_DISCONNECTED) != 0)
        return;
    self->monitor = shoal_sockets_new (ZMQ_PAIR, NULL, 0);
    if (self->monitor && zmq_connect (self->monitor, endpoint) == 0)
        return;
    shoal_sockets_close (&self->monitor);
    zmq_socket_monitor (self->router, NULL, 0);
}

static void
s_monitor_stop (shoal_transport_t *self)
{
    if (!self->monitor)
        return;
    zmq_socket_monitor (self->router, NULL, 0);
    shoal_sockets_close (&self->monitor);
}

shoal_transport_t *
shoal_transport_new (const shoal_transport_config_t *config,
                     const uint8_t nonce_prefix[SHOAL_ENVELOPE_NONCE], char *why, size_t why_size)
{
    if (!config || !config->bind || !config->keyring || !nonce_prefix) {
        shoal_why (why, why_size, "transport: %s", "no bind address, keyring or nonce");
        return NULL;
    }
    shoal_transport_t *self = calloc (1, sizeof *self);
    if (!self) {
        shoal_why (why, why_size, "transport: %s", "out of memory");
        return NULL;
    }
    self->udp = -1;
    self->self = config->self;
    self->send_queue = config->send_queue ? config->send_queue : 64;
    self->link_timeout_ms = config->link_timeout_ms ? config->link_timeout_ms : 2000;
    size_t windows = config->peers ? 2 * config->peers : 64;
    self->sealer = shoal_sealer_new (config->keyring, &config->self, nonce_prefix);
    self->opener = shoal_opener_new (config->keyring, &config->self, windows);
    self->links = zhashx_new ();
    self->routes = zhashx_new ();
    //  Untouched pages of these cost no memory: only large messages use them.
    self->plain = malloc (SHOAL_FRAME_MAX);
    self->sealed = malloc (SHOAL_FRAME_MAX);
    if (!self->sealer || !self->opener || !self->links || !self->routes || !self->plain ||
        !self->sealed) {
        shoal_why (why, why_size, "transport: %s", "out of memory, or not a node's life");
        shoal_transport_destroy (&self);
        return NULL;
    }
    zhashx_set_destructor (self->links, s_link_destroy);
    zhashx_set_destructor (self->routes, s_route_destroy);
    bool retry = true;
    int rc = -1;
    for (int attempt = 0; rc != 0 && retry && attempt < 16; attempt++) {
        s_unbind (self);
        rc = s_bind (self, config->bind, &retry, why, why_size);
    }
    if (rc != 0) {
        shoal_transport_destroy (&self);
        return NULL;
    }
    s_monitor_start (self);
    return self;
}

void
shoal_transport_destroy (shoal_transport_t **self_p)
{
    shoal_transport_t *self = self_p ? *self_p : NULL;
    if (!self)
        return;
    s_monitor_stop (self);
    s_unbind (self);
    zactor_destroy (&self->beacons);
    zhashx_destroy (&self->links);
    zhashx_destroy (&self->routes);
    shoal_sealer_destroy (&self->sealer);
    shoal_opener_destroy (&self->opener);
    free (self->plain);
    free (self->sealed);
    free (self);
    *self_p = NULL;
}

uint16_t
shoal_transport_port (const shoal_transport_t *self)
{
    return self->port;
}

int
shoal_transport_family (const shoal_transport_t *self)
{
    return self->family;
}

int
shoal_transport_udp_fd (const shoal_transport_t *self)
{
    return self->udp;
}

void *
shoal_transport_router (const shoal_transport_t *self)
{
    return self->router;
}

void *
shoal_transport_monitor (const shoal_transport_t *self)
{
    return self->monitor;
}

static long s_seal (shoal_transport_t *self, shoal_purpose_t purpose, const shoal_life_t *recipient,
                    const shoal_msg_t *msg);

//  Counts a message of type sent in an envelope of size bytes on purpose.
static void
s_count_sent (shoal_transport_t *self, shoal_purpose_t purpose, uint8_t type, long size)
{
    self->stats.sent[purpose - 1]++;
    self->stats.bytes_sent += (uint64_t) size;
    self->stats.types[type].sent++;
    self->stats.types[type].bytes_sent += (uint64_t) size;
}

void *
shoal_transport_beacons (const shoal_transport_t *self)
{
    return self->beacons;
}

//  czmq's zbeacon takes its interface from a setting of the whole process
//  (zsys_interface), which it reads while it configures. Nodes of one
//  process may each want their own, so each sets it for its CONFIGURE
//  alone, under this lock, and puts back what was there.
static pthread_mutex_t s_interface_lock = PTHREAD_MUTEX_INITIALIZER;

//  Configures the actor beacons on port and interface_name ("": the
//  process's setting, as czmq has it). Returns true when zbeacon found the
//  interface; false destroys the actor. Sets *no_memory when it was memory
//  that failed. Under the lock, since zbeacon reads the setting from its
//  own thread.
static bool
s_beacons_configure (zactor_t **beacons_p, uint16_t port, const char *interface_name,
                     bool *no_memory)
{
    //  zsys_set_interface frees the string zsys_interface returned: keep a
    //  copy to put back. Set only what differs, so that a node that asks
    //  for the process's own interface leaves the setting alone.
    char *saved = strdup (zsys_interface ());
    *no_memory = saved == NULL;
    bool ours = saved && *interface_name && strcmp (saved, interface_name) != 0;
    if (ours)
        zsys_set_interface (interface_name);
    char *hostname = NULL;
    if (saved) {
        zsock_send (*beacons_p, "si", "CONFIGURE", (int) port);
        hostname = zstr_recv (*beacons_p);
    }
    bool usable = hostname && *hostname;
    zstr_free (&hostname);
    //  On failure zbeacon logs the setting after its reply: the actor ends
    //  before the setting changes under it.
    if (!usable)
        zactor_destroy (beacons_p);
    if (ours)
        zsys_set_interface (saved);
    free (saved);
    return usable;
}

int
shoal_transport_beacons_start (shoal_transport_t *self, uint16_t port, const char *interface_name,
                               char *why, size_t why_size)
{
    if (self->beacons || port == 0)
        return shoal_why (why, why_size, "beacons: %s", port ? "already on" : "port 0");
    interface_name = interface_name ? interface_name : "";
    char refused[128] = "";
    if (!shoal_sockets_available (2, refused, sizeof refused)) //  the actor's pipe
        return shoal_why (why, why_size, "beacons: %s", refused);
    self->beacons = zactor_new (zbeacon, NULL);
    if (!self->beacons)
        return shoal_why (why, why_size, "beacons: %s", "no beacon actor");
    pthread_mutex_lock (&s_interface_lock);
    char process[256];
    snprintf (process, sizeof process, "%s", zsys_interface ());
    bool no_memory;
    bool usable = s_beacons_configure (&self->beacons, port, interface_name, &no_memory);
    pthread_mutex_unlock (&s_interface_lock);
    if (no_memory)
        return shoal_why (why, why_size, "beacons: out of memory");
    if (!usable && *interface_name)
        return shoal_why (why, why_size,
                          "beacons: interface '%s' (beacon-interface) is missing, down, loopback "
                          "or without broadcast; use join seeds, or see docs/architecture.md "
                          "\"Discovery\"",
                          interface_name);
    if (!usable)
        return shoal_why (why, why_size,
                          "beacons: no interface broadcasts (%s%s); use join seeds, or see "
                          "docs/architecture.md \"Discovery\" for loopback",
                          *process ? "ZSYS_INTERFACE=" : "ZSYS_INTERFACE unset", process);
    zsock_send (self->beacons, "sb", "SUBSCRIBE", "", (size_t) 0);
    return 0;
}

int
shoal_transport_beacons_publish (shoal_transport_t *self, const shoal_msg_t *beacon,
                                 uint32_t interval_ms)
{
    long sealed = self->beacons && beacon->type == SHOAL_MSG_BEACON
                      ? s_seal (self, SHOAL_PURPOSE_BEACON, NULL, beacon)
                      : -1;
    if (sealed < 0 || (size_t) sealed > SHOAL_BEACON_MAX) {
        self->stats.send_dropped++;
        return -1;
    }
    zsock_send (self->beacons, "sbi", "PUBLISH", self->sealed, (size_t) sealed, (int) interval_ms);
    s_count_sent (self, SHOAL_PURPOSE_BEACON, beacon->type, sealed);
    return 0;
}

//  A recipient that names nobody is no recipient: the envelope goes
//  unaddressed.
static const shoal_life_t *
s_addressee (const shoal_life_t *recipient)
{
    static const uint8_t zero[16];
    return recipient && recipient->life && memcmp (recipient->id, zero, 16) != 0 ? recipient : NULL;
}

//  Encodes and seals msg for purpose. Returns the envelope's size in
//  self->sealed, or -1.
static long
s_seal (shoal_transport_t *self, shoal_purpose_t purpose, const shoal_life_t *recipient,
        const shoal_msg_t *msg)
{
    shoal_wire_error_t err;
    long size = shoal_msg_encode (msg, self->plain, SHOAL_FRAME_MAX, &err);
    if (size < 0)
        return -1;
    return shoal_sealer_seal (self->sealer, purpose, s_addressee (recipient), self->plain,
                              (size_t) size, self->sealed, SHOAL_FRAME_MAX);
}

static bool s_icmp_errno (int error);

//  Sends the sealed datagram. An ICMP error pending on the socket (IP_RECVERR)
//  fails the next send, whatever its destination, and is cleared by it:
//  that send is made again, once.
static ssize_t
s_sendto (shoal_transport_t *self, size_t size, const struct sockaddr_storage *address,
          socklen_t address_size)
{
    ssize_t sent =
        sendto (self->udp, self->sealed, size, 0, (const struct sockaddr *) address, address_size);
    if (sent < 0 && s_icmp_errno (errno))
        sent = sendto (self->udp, self->sealed, size, 0, (const struct sockaddr *) address,
                       address_size);
    return sent;
}

int
shoal_transport_datagram (shoal_transport_t *self, const char *addr, const shoal_life_t *recipient,
                          const shoal_msg_t *msg)
{
    struct sockaddr_storage address;
    socklen_t size;
    long sealed = -1;
    if (s_resolve (addr, self->family, false, false, &address, &size) == 0)
        sealed = s_seal (self, SHOAL_PURPOSE_DATAGRAM, recipient, msg);
    if (sealed < 0 || s_sendto (self, (size_t) sealed, &address, size) != sealed) {
        self->stats.send_dropped++;
        return -1;
    }
    s_count_sent (self, SHOAL_PURPOSE_DATAGRAM, msg->type, sealed);
    return 0;
}

//  Deletes the link of key, and the frames it holds (dropped).
static void
s_link_delete (shoal_transport_t *self, const char *key)
{
    s_link_t *link = zhashx_lookup (self->links, key);
    for (size_t i = 0; link && i < link->pending_count; i++) {
        self->pending_bytes -= link->pending[i].size;
        self->stats.send_dropped++;
    }
    zhashx_delete (self->links, key);
}

//  The key of the link used least recently, preferring one that holds no
//  frames; NULL when there is none. Not self's only link: the caller asks
//  when S_LINKS_MAX are open.
static const char *
s_link_oldest (shoal_transport_t *self)
{
    const char *oldest = NULL;
    const s_link_t *chosen = NULL;
    for (s_link_t *link = zhashx_first (self->links); link; link = zhashx_next (self->links)) {
        bool better =
            !chosen || (chosen->pending_count && !link->pending_count) ||
            (!chosen->pending_count == !link->pending_count && link->used_ms < chosen->used_ms);
        if (better) {
            chosen = link;
            oldest = zhashx_cursor (self->links);
        }
    }
    return oldest;
}

//  Makes room for one more link: past S_LINKS_MAX, the least recently used
//  one is closed.
static void
s_link_room (shoal_transport_t *self)
{
    while (zhashx_size (self->links) >= S_LINKS_MAX) {
        const char *oldest = s_link_oldest (self);
        assert (oldest);
        char key[33];
        snprintf (key, sizeof key, "%s", oldest);
        s_link_delete (self, key);
        self->stats.links_evicted++;
    }
}

//  A new DEALER connected to host:port, named by this node's id, so that
//  the peer's ROUTER can send back over its connection.
static void *
s_dealer (shoal_transport_t *self, const char *host, uint16_t port)
{
    void *dealer = shoal_sockets_new (ZMQ_DEALER, NULL, 0);
    if (!dealer) {
        self->stats.links_refused++;
        return NULL;
    }
    char name[33];
    shoal_id_format (self->self.id, false, name);
    zsock_set_identity (dealer, name);
    s_socket_limits (dealer);
    zsock_set_immediate (dealer, 1);
    zsock_set_sndhwm (dealer, (int) self->send_queue);
    zsock_set_sndtimeo (dealer, 0);
    s_link_liveness (dealer, self->link_timeout_ms);
    if (strchr (host, ':'))
        zsock_set_ipv6 (dealer, 1);
    char endpoint[SHOAL_ADDR_MAX + 16];
    snprintf (endpoint, sizeof endpoint, strchr (host, ':') ? "tcp://[%s]:%u" : "tcp://%s:%u", host,
              port);
    if (zmq_connect (dealer, endpoint) != 0)
        shoal_sockets_close (&dealer);
    return dealer;
}

//  The DEALER to recipient, connected to addr: made on first use, made again
//  when the address changed.
static s_link_t *
s_link (shoal_transport_t *self, const uint8_t id[16], const char *addr)
{
    char key[33];
    shoal_id_format (id, false, key);
    s_link_t *link = zhashx_lookup (self->links, key);
    if (link && strcmp (link->addr, addr) == 0)
        return link;
    s_link_delete (self, key);
    //  Numeric only, as for datagrams: a name would have ZeroMQ resolve it,
    //  which may block, and a link it never connects would hold frames.
    char host[SHOAL_ADDR_MAX + 1];
    uint16_t port;
    struct in6_addr numeric;
    if (s_split (addr, host, sizeof host, &port) != 0 || port == 0 ||
        (inet_pton (AF_INET, host, &numeric) != 1 && inet_pton (AF_INET6, host, &numeric) != 1))
        return NULL;
    link = calloc (1, sizeof *link);
    if (!link)
        return NULL;
    snprintf (link->addr, sizeof link->addr, "%s", addr);
    link->made_ms = link->used_ms = zclock_mono ();
    link->touched = true; //  a new socket: its events are read once before the poller sleeps
    link->dealer = s_dealer (self, host, port);
    if (!link->dealer) {
        free (link);
        return NULL;
    }
    s_link_room (self);
    if (zhashx_insert (self->links, key, link) != 0) {
        s_link_destroy ((void **) &link);
        return NULL;
    }
    return link;
}

//  Sends what link holds, in order, as far as its connection takes it;
//  once the link is S_PENDING_MS old, drops the rest.
static void
s_link_flush (shoal_transport_t *self, s_link_t *link, int64_t now)
{
    size_t sent = 0;
    link->touched = true;
    while (sent < link->pending_count) {
        s_pending_t *frame = &link->pending[sent];
        if (zmq_send (link->dealer, frame->bytes, frame->size, ZMQ_DONTWAIT) != (int) frame->size)
            break;
        s_count_sent (self, SHOAL_PURPOSE_FRAME, frame->type, (long) frame->size);
        self->pending_bytes -= frame->size;
        free (frame->bytes);
        sent++;
    }
    if (now - link->made_ms >= S_PENDING_MS) {
        for (size_t i = sent; i < link->pending_count; i++) {
            self->pending_bytes -= link->pending[i].size;
            free (link->pending[i].bytes);
            self->stats.send_dropped++;
        }
        sent = link->pending_count;
    }
    memmove (link->pending, link->pending + sent,
             (link->pending_count - sent) * sizeof link->pending[0]);
    link->pending_count -= sent;
}

//  Whether the member of key sent a frame over the ROUTER, on a connection
//  of its own, recently enough that its link is still open.
static bool
s_routed (const shoal_transport_t *self, const char *key, int64_t now)
{
    const s_route_t *route = zhashx_lookup (self->routes, key);
    return route && now - route->heard_ms < (int64_t) S_ROUTE_FACTOR * self->link_timeout_ms;
}

//  Sends the sealed frame of size bytes to the member of key over the
//  ROUTER. Returns 1 when sent, 0 when the ROUTER has no connection of that
//  name (the route is forgotten), -1 when the connection's queue is full.
static int
s_route_send (shoal_transport_t *self, const char *key, long size)
{
    void *router = self->router;
    self->router_touched = true;
    if (zmq_send (router, key, 32, ZMQ_SNDMORE | ZMQ_DONTWAIT) != 32) {
        if (zmq_errno () == EAGAIN)
            return -1;
        zhashx_delete (self->routes, key);
        return 0;
    }
    //  The ROUTER took the name: the frame, the last part, goes too.
    int sent = zmq_send (router, self->sealed, (size_t) size, ZMQ_DONTWAIT);
    return sent == size ? 1 : -1;
}

//  Sends the sealed frame of size bytes on link, or holds it while the link
//  is young. Returns 0, or -1 when dropped (counted).
static int
s_link_send (shoal_transport_t *self, s_link_t *link, uint8_t type, long sealed, int64_t now)
{
    link->used_ms = now;
    link->touched = true;
    if (link->pending_count)
        s_link_flush (self, link, now);
    if (link->pending_count == 0 &&
        zmq_send (link->dealer, self->sealed, (size_t) sealed, ZMQ_DONTWAIT) == sealed) {
        s_count_sent (self, SHOAL_PURPOSE_FRAME, type, sealed);
        return 0;
    }
    //  Refused: a young link holds it for its connection, within bounds.
    bool room = now - link->made_ms < S_PENDING_MS && link->pending_count < S_PENDING_MAX &&
                self->pending_bytes + (size_t) sealed <= S_PENDING_BYTES;
    uint8_t *copy = room ? malloc ((size_t) sealed) : NULL;
    if (!copy) {
        self->stats.send_dropped++;
        return -1;
    }
    memcpy (copy, self->sealed, (size_t) sealed);
    self->pending_bytes += (size_t) sealed;
    link->pending[link->pending_count++] =
        (s_pending_t){ .bytes = copy, .size = (size_t) sealed, .type = type };
    self->pending = true;
    return 0;
}

//  An answer to a request goes back over the asker's own connection on any
//  node, not only on the acting leader: the request came over it, so the
//  answer needs no link of this node's. A member that many ask at once (the
//  highest rank in an election, a member many sync with) would otherwise
//  make a link to each asker, past the cap, closing one for the next.
static bool
s_answer (uint8_t type)
{
    return type == SHOAL_MSG_ANSWER || type == SHOAL_MSG_SYNC_REPLY || type == SHOAL_MSG_JOB_ACK ||
           type == SHOAL_MSG_CONTROL_REP || type == SHOAL_MSG_KEYS_ACK ||
           type == SHOAL_MSG_LOGS_REP;
}

int
shoal_transport_frame (shoal_transport_t *self, const char *addr, const shoal_life_t *recipient,
                       const shoal_msg_t *msg)
{
    const shoal_life_t *to = s_addressee (recipient);
    long sealed = to && addr ? s_seal (self, SHOAL_PURPOSE_FRAME, to, msg) : -1;
    if (sealed < 0) {
        self->stats.send_dropped++;
        return -1;
    }
    int64_t now = zclock_mono ();
    char key[33];
    shoal_id_format (to->id, false, key);
    //  Over the member's own connection, unless a link of this node's holds
    //  frames for it: those go first, in order.
    s_link_t *link = zhashx_lookup (self->links, key);
    bool back = self->route_back || s_answer (msg->type);
    if (back && s_routed (self, key, now) && !(link && link->pending_count)) {
        int routed = s_route_send (self, key, sealed);
        if (routed != 0) {
            if (routed < 0) {
                self->stats.send_dropped++;
                return -1;
            }
            self->stats.frames_routed++;
            s_count_sent (self, SHOAL_PURPOSE_FRAME, msg->type, sealed);
            return 0;
        }
    }
    link = s_link (self, to->id, addr);
    if (!link) {
        self->stats.send_dropped++;
        return -1;
    }
    return s_link_send (self, link, msg->type, sealed, now);
}

//  Closes the links that carried nothing for S_LINK_IDLE_FACTOR link
//  timeouts and hold no frames, and forgets routes too old to use.
static void
s_sweep (shoal_transport_t *self, int64_t now)
{
    int64_t idle = (int64_t) S_LINK_IDLE_FACTOR * self->link_timeout_ms;
    zlistx_t *keys = zhashx_keys (self->links);
    for (const char *key = keys ? zlistx_first (keys) : NULL; key; key = zlistx_next (keys)) {
        const s_link_t *link = zhashx_lookup (self->links, key);
        if (link && !link->pending_count && now - link->used_ms >= idle) {
            zhashx_delete (self->links, key);
            self->stats.links_closed_idle++;
        }
    }
    zlistx_destroy (&keys);
    keys = zhashx_keys (self->routes);
    for (const char *key = keys ? zlistx_first (keys) : NULL; key; key = zlistx_next (keys))
        if (!s_routed (self, key, now))
            zhashx_delete (self->routes, key);
    zlistx_destroy (&keys);
    self->sweep_at = now + self->link_timeout_ms / 2;
}

void
shoal_transport_route_back (shoal_transport_t *self, bool on)
{
    self->route_back = on;
}

uint32_t
shoal_transport_flush (shoal_transport_t *self)
{
    int64_t now = zclock_mono ();
    if (now >= self->sweep_at)
        s_sweep (self, now);
    if (!self->pending)
        return 0;
    int64_t oldest = -1;
    for (s_link_t *link = zhashx_first (self->links); link; link = zhashx_next (self->links)) {
        if (link->pending_count)
            s_link_flush (self, link, now);
        if (link->pending_count && now - link->made_ms > oldest)
            oldest = now - link->made_ms;
    }
    self->pending = oldest >= 0;
    if (oldest < 0)
        return 0;
    int64_t again = oldest / S_FLUSH_SHARE;
    return again < S_FLUSH_MIN_MS   ? S_FLUSH_MIN_MS
           : again > S_FLUSH_MAX_MS ? S_FLUSH_MAX_MS
                                    : (uint32_t) again;
}

int
shoal_transport_link (shoal_transport_t *self, const uint8_t id[16], const char *addr)
{
    s_link_t *link = id && addr ? s_link (self, id, addr) : NULL;
    if (link)
        link->used_ms = zclock_mono ();
    return link ? 0 : -1;
}

int
shoal_transport_relink (shoal_transport_t *self, const uint8_t id[16], const char *addr)
{
    if (!id || !addr)
        return -1;
    char key[33];
    shoal_id_format (id, false, key);
    s_link_t *link = zhashx_lookup (self->links, key);
    if (!link)
        return 0;
    if (zclock_mono () - link->made_ms >= S_PENDING_MS)
        s_link_delete (self, key);
    return s_link (self, id, addr) ? 0 : -1;
}

void
shoal_transport_forget (shoal_transport_t *self, const uint8_t id[16])
{
    char key[33];
    shoal_id_format (id, false, key);
    s_link_delete (self, key);
    zhashx_delete (self->routes, key);
}

//  Opens and decodes size bytes in self->sealed that came on purpose.
//  Returns 1 with *in filled, or 0 when dropped (counted).
static int
s_accept (shoal_transport_t *self, shoal_purpose_t purpose, size_t size, shoal_arena_t *arena,
          shoal_transport_in_t *in)
{
    size_t payload = 0;
    shoal_open_result_t result =
        shoal_opener_open (self->opener, purpose, self->sealed, size, self->plain, SHOAL_FRAME_MAX,
                           &payload, &in->envelope);
    if (result != SHOAL_OPEN_OK) {
        self->stats.refused[result]++;
        self->refused = result;
        snprintf (self->refused_from, sizeof self->refused_from, "%s", in->from);
        return 0;
    }
    shoal_wire_error_t err;
    shoal_arena_reset (arena);
    if (shoal_msg_decode (self->plain, payload, purpose, &in->msg, arena, &err) != 0) {
        self->stats.undecodable++;
        return 0;
    }
    self->stats.received[purpose - 1]++;
    self->stats.bytes_received += size;
    self->stats.types[in->msg.type].received++;
    self->stats.types[in->msg.type].bytes_received += size;
    return 1;
}

//  An error a receive on the UDP socket reports for an ICMP message about a
//  datagram it sent, not about the socket.
static bool
s_icmp_errno (int error)
{
    return error == ECONNREFUSED || error == EHOSTUNREACH || error == ENETUNREACH ||
           error == EHOSTDOWN || error == EPROTO;
}

static int
s_receive_datagram (shoal_transport_t *self, shoal_arena_t *arena, shoal_transport_in_t *in)
{
    struct sockaddr_storage from;
    socklen_t from_size = sizeof from;
    //  One byte more than a datagram may be tells an oversized one apart.
    ssize_t size = recvfrom (self->udp, self->sealed, SHOAL_DATAGRAM_MAX + 1, MSG_TRUNC,
                             (struct sockaddr *) &from, &from_size);
    //  An ICMP error queued on the socket is reported once by a receive
    //  (shoal_transport_unreachable reads it): what waits is read next.
    if (size < 0 && s_icmp_errno (errno))
        size = recvfrom (self->udp, self->sealed, SHOAL_DATAGRAM_MAX + 1, MSG_TRUNC,
                         (struct sockaddr *) &from, &from_size);
    if (size < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || s_icmp_errno (errno)
                   ? 0
                   : -1;
    if ((size_t) size > SHOAL_DATAGRAM_MAX) {
        self->stats.refused[SHOAL_OPEN_SIZE]++;
        return 0;
    }
    s_format (&from, in->from, sizeof in->from);
    return s_accept (self, SHOAL_PURPOSE_DATAGRAM, (size_t) size, arena, in);
}

//  Where a ZeroMQ message came from: the sender's IP address ("" when
//  ZeroMQ does not tell) and the descriptor of its connection (-1 when not
//  TCP).
typedef struct {
    char *peer;
    size_t peer_size;
    int fd;
} s_source_t;

//  Reads one whole ZeroMQ message from socket without waiting for it to
//  come: part 1 into first, part 2 into second, each only when it fits (its
//  size is reported either way), and where it came from into source (when
//  not NULL). Returns the number of parts, 0 when none was ready, -1 on a
//  socket error.
static int
s_recv_two (void *socket, void *first, size_t first_capacity, size_t *first_size, void *second,
            size_t second_capacity, size_t *second_size, s_source_t *source)
{
    char *peer = source ? source->peer : NULL;
    size_t peer_size = source ? source->peer_size : 0;
    zmq_msg_t part;
    zmq_msg_init (&part);
    int parts = 0;
    bool more = true;
    while (more) {
        if (zmq_msg_recv (&part, socket, parts ? 0 : ZMQ_DONTWAIT) < 0) {
            if (!parts && (zmq_errno () == EAGAIN || zmq_errno () == EINTR))
                parts = 0;
            else
                parts = -1;
            break;
        }
        parts++;
        //  The IP address of a TCP peer, for a refusal to name: ZeroMQ
        //  tells it with the parts that came over the connection.
        const char *address = peer ? zmq_msg_gets (&part, "Peer-Address") : NULL;
        if (peer && (parts == 1 || (address && !peer[0])))
            snprintf (peer, peer_size, "%s", address ? address : "");
        if (source && source->fd < 0)
            source->fd = zmq_msg_get (&part, ZMQ_SRCFD);
        more = zmq_msg_more (&part);
        size_t size = zmq_msg_size (&part);
        void *into = parts == 1 ? first : parts == 2 ? second : NULL;
        size_t capacity = parts == 1 ? first_capacity : second_capacity;
        if (parts <= 2)
            *(parts == 1 ? first_size : second_size) = size;
        if (into && size <= capacity)
            memcpy (into, zmq_msg_data (&part), size);
    }
    zmq_msg_close (&part);
    return parts;
}

//  Notes that sender sent a frame over a connection it made, named
//  routing: frames to it may go back over that connection. Only a
//  connection named by the sender's own id, in a frame that opened as the
//  sender's, counts.
static void
s_route_heard (shoal_transport_t *self, const uint8_t *routing, size_t routing_size,
               const shoal_life_t *sender, int fd)
{
    char key[33];
    shoal_id_format (sender->id, false, key);
    if (routing_size != 32 || memcmp (routing, key, 32) != 0)
        return;
    s_route_t *route = zhashx_lookup (self->routes, key);
    if (!route && zhashx_size (self->routes) < S_ROUTES_MAX) {
        route = malloc (sizeof *route);
        if (route && zhashx_insert (self->routes, key, route) != 0) {
            free (route);
            route = NULL;
        }
    }
    if (route)
        *route = (s_route_t){ .heard_ms = zclock_mono (), .fd = fd };
}

//  A frame from the ROUTER: the sender's routing id, then what it sent, one
//  frame. Anything else is read whole and dropped.
static int
s_receive_frame (shoal_transport_t *self, shoal_arena_t *arena, shoal_transport_in_t *in)
{
    uint8_t routing[256];
    size_t routing_size = 0, size = 0;
    s_source_t source = { .peer = in->from, .peer_size = sizeof in->from, .fd = -1 };
    int parts = s_recv_two (self->router, routing, sizeof routing, &routing_size, self->sealed,
                            SHOAL_FRAME_MAX, &size, &source);
    if (parts == 0)
        return 0;
    self->router_touched = true;
    if (parts < 0)
        return parts;
    if (parts != 2 || size > SHOAL_FRAME_MAX) {
        self->stats.malformed++;
        return 0;
    }
    //  The address only names a refused frame's sender: a frame's "from"
    //  is "" (its TCP port is no member's).
    int accepted = s_accept (self, SHOAL_PURPOSE_FRAME, size, arena, in);
    in->from[0] = 0;
    if (accepted == 1)
        s_route_heard (self, routing, routing_size, &in->envelope.sender, source.fd);
    return accepted;
}

//  A frame that came back over link (the peer's ROUTER sent it over the
//  connection this node made): one frame, no routing id. *came tells
//  whether anything was read.
static int
s_receive_one_link (shoal_transport_t *self, s_link_t *link, shoal_arena_t *arena,
                    shoal_transport_in_t *in, bool *came)
{
    size_t size = 0, none = 0;
    s_source_t source = { .peer = in->from, .peer_size = sizeof in->from, .fd = -1 };
    int parts =
        s_recv_two (link->dealer, self->sealed, SHOAL_FRAME_MAX, &size, NULL, 0, &none, &source);
    *came = parts != 0;
    if (parts == 0)
        return 0;
    link->touched = true;
    if (parts != 1 || size > SHOAL_FRAME_MAX) {
        self->stats.malformed++;
        return 0;
    }
    int accepted = s_accept (self, SHOAL_PURPOSE_FRAME, size, arena, in);
    in->from[0] = 0;
    return accepted;
}

//  The first frame any link holds. Each link read costs ZeroMQ system
//  calls even when empty: the node's loop reads only the sockets its wait
//  found readable (shoal_transport_receive_from).
static int
s_receive_link (shoal_transport_t *self, shoal_arena_t *arena, shoal_transport_in_t *in)
{
    for (s_link_t *link = zhashx_first (self->links); link; link = zhashx_next (self->links)) {
        bool came;
        int rc = s_receive_one_link (self, link, arena, in, &came);
        if (came)
            return rc;
    }
    return 0;
}

size_t
shoal_transport_links (shoal_transport_t *self, void **sockets, bool *touched, size_t max)
{
    size_t count = 0;
    for (s_link_t *link = zhashx_first (self->links); link && count < max;
         link = zhashx_next (self->links)) {
        touched[count] = link->touched;
        link->touched = false;
        sockets[count++] = link->dealer;
    }
    return count;
}

bool
shoal_transport_router_touched (shoal_transport_t *self)
{
    bool touched = self->router_touched;
    self->router_touched = false;
    return touched;
}

//  A beacon from the beacon actor: the sender's IP address, then the data.
static int
s_receive_beacon (shoal_transport_t *self, shoal_arena_t *arena, shoal_transport_in_t *in)
{
    if (!self->beacons)
        return 0;
    char ip[INET6_ADDRSTRLEN + 1] = "";
    size_t ip_size = 0, size = 0;
    int parts = s_recv_two (zsock_resolve (self->beacons), ip, sizeof ip - 1, &ip_size,
                            self->sealed, SHOAL_BEACON_MAX, &size, NULL);
    if (parts <= 0)
        return parts;
    if (parts != 2 || ip_size == 0 || ip_size >= sizeof ip || size > SHOAL_BEACON_MAX) {
        self->stats.malformed++;
        return 0;
    }
    ip[ip_size] = 0;
    snprintf (in->from, sizeof in->from, "%s", ip);
    if (s_accept (self, SHOAL_PURPOSE_BEACON, size, arena, in) != 1)
        return 0;
    const char *format = strchr (ip, ':') ? "[%s]:%u" : "%s:%u";
    snprintf (in->from, sizeof in->from, format, ip, in->msg.u.beacon.port);
    return 1;
}

int
shoal_transport_receive_from (shoal_transport_t *self, void *socket, shoal_arena_t *arena,
                              shoal_transport_in_t *in)
{
    self->refused = SHOAL_OPEN_OK;
    in->from[0] = 0;
    if (socket == self->router)
        return s_receive_frame (self, arena, in);
    for (s_link_t *link = zhashx_first (self->links); link; link = zhashx_next (self->links))
        if (link->dealer == socket) {
            bool came;
            return s_receive_one_link (self, link, arena, in, &came);
        }
    return 0; //  a link closed since the wait
}

int
shoal_transport_receive (shoal_transport_t *self, shoal_purpose_t carrier, shoal_arena_t *arena,
                         shoal_transport_in_t *in)
{
    self->refused = SHOAL_OPEN_OK;
    in->from[0] = 0;
    int rc;
    switch (carrier) {
    case SHOAL_PURPOSE_DATAGRAM:
        return s_receive_datagram (self, arena, in);
    case SHOAL_PURPOSE_FRAME:
        rc = s_receive_frame (self, arena, in);
        return rc == 0 && !self->refused ? s_receive_link (self, arena, in) : rc;
    case SHOAL_PURPOSE_BEACON:
        return s_receive_beacon (self, arena, in);
    default:
        return -1;
    }
}

//  Whether a queued error is an ICMP port unreachable (IPv4 or IPv6).
static bool
s_port_unreachable (struct msghdr *header)
{
    for (struct cmsghdr *cmsg = CMSG_FIRSTHDR (header); cmsg; cmsg = CMSG_NXTHDR (header, cmsg)) {
        bool v4 = cmsg->cmsg_level == IPPROTO_IP && cmsg->cmsg_type == IP_RECVERR;
        bool v6 = cmsg->cmsg_level == IPPROTO_IPV6 && cmsg->cmsg_type == IPV6_RECVERR;
        if (!v4 && !v6)
            continue;
        struct sock_extended_err error;
        memcpy (&error, CMSG_DATA (cmsg), sizeof error);
        if ((error.ee_origin == SO_EE_ORIGIN_ICMP && error.ee_type == ICMP_DEST_UNREACH &&
             error.ee_code == ICMP_PORT_UNREACH) ||
            (error.ee_origin == SO_EE_ORIGIN_ICMP6 && error.ee_type == ICMP6_DST_UNREACH &&
             error.ee_code == ICMP6_DST_UNREACH_NOPORT))
            return true;
    }
    return false;
}

int
shoal_transport_unreachable (shoal_transport_t *self, char *addr, size_t addr_size)
{
    struct sockaddr_storage to;
    uint8_t head[64]; //  the start of the datagram refused: not needed
    uint8_t control[512] __attribute__ ((aligned (sizeof (struct cmsghdr))));
    struct iovec iov = { .iov_base = head, .iov_len = sizeof head };
    struct msghdr header = { .msg_name = &to,
                             .msg_namelen = sizeof to,
                             .msg_iov = &iov,
                             .msg_iovlen = 1,
                             .msg_control = control,
                             .msg_controllen = sizeof control };
    memset (&to, 0, sizeof to);
    if (recvmsg (self->udp, &header, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) {
        //  An error the kernel could not queue is still pending, and a poll
        //  would report it for ever: reading SO_ERROR clears it.
        int error = 0;
        socklen_t size = sizeof error;
        getsockopt (self->udp, SOL_SOCKET, SO_ERROR, &error, &size);
        return -1;
    }
    if (!s_port_unreachable (&header) || header.msg_namelen == 0 ||
        (to.ss_family != AF_INET && to.ss_family != AF_INET6)) {
        self->stats.errors_other++;
        return 0;
    }
    self->stats.unreachable++;
    s_format (&to, addr, addr_size);
    return 1;
}

shoal_open_result_t
shoal_transport_refused (const shoal_transport_t *self, char *from, size_t from_size)
{
    snprintf (from, from_size, "%s", self->refused ? self->refused_from : "");
    return self->refused;
}

//  The connection of descriptor fd closed: forgets the routes over it.
//  Returns 1 with id set to the member of one that carried a frame lately
//  (the others were idle, closed by their owners), else 0.
static int
s_route_closed (shoal_transport_t *self, int fd, uint8_t id[SHOAL_ID_SIZE])
{
    char key[33] = "";
    for (const s_route_t *route = zhashx_first (self->routes); route && !key[0];
         route = zhashx_next (self->routes))
        if (route->fd == fd)
            snprintf (key, sizeof key, "%s", (const char *) zhashx_cursor (self->routes));
    if (!key[0])
        return 0;
    bool recent = s_routed (self, key, zclock_mono ());
    zhashx_delete (self->routes, key);
    size_t size = 0;
    if (!recent || sodium_hex2bin (id, SHOAL_ID_SIZE, key, 32, NULL, &size, NULL) != 0 ||
        size != SHOAL_ID_SIZE)
        return 0;
    self->stats.routes_closed++;
    return 1;
}

int
shoal_transport_closed (shoal_transport_t *self, uint8_t id[SHOAL_ID_SIZE])
{
    if (!self->monitor)
        return -1;
    uint8_t event[6];
    size_t event_size = 0, none = 0;
    int parts = s_recv_two (self->monitor, event, sizeof event, &event_size, NULL, 0, &none, NULL);
    if (parts <= 0)
        return -1;
    if (parts != 2 || event_size != sizeof event)
        return 0;
    uint16_t type;
    uint32_t fd;
    memcpy (&type, event, sizeof type);
    memcpy (&fd, event + 2, sizeof fd);
    if (type != ZMQ_EVENT_DISCONNECTED || fd > INT32_MAX)
        return 0;
    return s_route_closed (self, (int) fd, id);
}

void
shoal_transport_stats (const shoal_transport_t *self, shoal_transport_stats_t *stats)
{
    *stats = self->stats;
    stats->links_open = zhashx_size (self->links);
    int64_t now = zclock_mono ();
    stats->links_routed = 0;
    int64_t window = (int64_t) S_ROUTE_FACTOR * self->link_timeout_ms;
    for (const s_route_t *route = zhashx_first (self->routes); route;
         route = zhashx_next (self->routes))
        stats->links_routed += now - route->heard_ms < window;
}

/*  sim/sim.c: many nodes on a virtual clock and network.

    Each node is a peer (peer/peer.h), whose sink sends into the network,
    arms the node's timer and drives its application.

    One priority queue of events ordered by (time, sequence number) drives
    everything: a message arriving at a node, a node's timer (each node has
    at most one pending tick: a newer one makes the older stale), and the
    end of a pause. Ties in time go in the order the events were made, so
    a run depends on nothing but the seed.
*/
#include "sim/sim.h"

#include "wire/arena.h"
#include "peer/peer.h"
#include "wire/splitmix.h"
#include "wire/wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { S_DELIVER, S_TICK, S_RESUME, S_APP, S_UNREACHABLE } s_kind_t;

typedef struct {
    uint64_t time;
    uint64_t seq;
    uint8_t kind;    //  s_kind_t
    uint8_t purpose; //  the carrier a message came on
    uint32_t node;   //  where it happens
    uint32_t from;   //  who sent a message; the task of an S_APP; the node an S_UNREACHABLE names
    uint32_t gen;    //  a tick's generation, or an application's
    uint32_t size;
    uint64_t envelope_seq; //  the sender's envelope sequence number
    uint8_t *data;         //  the encoded message
    shoal_life_t sender;
    shoal_life_t recipient;
} s_event_t;

//  What a node's application does with one task.
typedef struct {
    uint8_t role;  //  as last told; none when it does not run the task
    bool stopping; //  an active told to demote or stop, not done yet
    bool winding;  //  that was under lease: it may write until it stopped, or
                   //  until that lease ends (winding_until), whichever is first
    uint64_t winding_until;
    bool started;        //  reported running
    uint64_t lag;        //  of a learner or standby
    uint32_t gen;        //  of its pending S_APP event
    shoal_epoch_t epoch; //  of its last start or promotion
} s_app_t;

typedef struct {
    shoal_sim_t *sim;
    uint32_t index;
    shoal_peer_t *peer; //  NULL when down
    s_app_t *apps;      //  per task of the simulator's list
    bool *acting;       //  per task: runs it as active now
    uint32_t priority;
    //  What the elector and the jobs persisted, for its next life.
    shoal_jobs_t *disk; //  the job specs (NULL: none yet)
    bool saved;
    uint64_t term;
    shoal_id_t leader;
    uint64_t voters_version;
    shoal_id_t *voters;
    uint32_t voter_count;
    uint64_t incarnation; //  of the last start
    uint64_t life;        //  of the last start
    uint64_t sent;        //  envelopes sent: the last sequence number
    uint64_t frames_at;   //  when its last frame arrives
    uint32_t group;
    bool paused;
    uint32_t gen;       //  generation of the pending tick
    uint64_t tick_at;   //  when it is due; UINT64_MAX when none
    s_event_t *backlog; //  what arrived while paused
    uint32_t backlog_count;
    char addr[24];
} s_node_t;

struct _shoal_sim_t {
    shoal_sim_config_t config;
    shoal_peer_config_t peer; //  every node's, from config
    uint32_t size;
    s_node_t *nodes;
    bool blocked[SHOAL_SIM_GROUPS][SHOAL_SIM_GROUPS];
    s_event_t *queue; //  a binary heap
    size_t queue_count, queue_size;
    uint64_t now;
    uint64_t instant_events; //  events run at now so far
    bool stalled;            //  too many of them: a livelock, stopped
    uint64_t stalled_ms;
    uint64_t seq;
    uint64_t random;
    uint64_t list_term; //  the term of the leader the task list last followed
    uint8_t *buffer;    //  one encoded message
    shoal_arena_t arena;
    shoal_metapool_t *metas; //  every core's, so each meta is held once
    shoal_sim_observer_fn *observer;
    void *observer_arg;
    shoal_sim_leader_fn *leader_observer;
    void *leader_observer_arg;
    shoal_sim_step_fn *step_observer;
    void *step_observer_arg;
    shoal_sim_stats_t stats;

    //  Tasks: the list handed to every handoff, sorted by id, and what
    //  happened to each.
    shoal_assign_task_t *task_list;
    size_t task_count;
    struct s_track *track;
    shoal_jobs_t *initial; //  the specs of every node's first start
    struct s_request *requests;
    size_t request_count;
    uint64_t *gaps;
    size_t gap_count, gap_capacity;
    shoal_sim_task_stats_t task_stats;
    size_t first_double; //  the task of task_stats.first_double_ms
};

//  One task's account: how many nodes run it as active, since when.
typedef struct s_track {
    uint32_t actives;
    uint64_t since_ms;
    uint64_t empty_since_ms; //  without an active since
    bool placed;             //  had an active once
    bool retired;            //  no longer in the acting leader's job specs
    shoal_epoch_t fence;     //  a fenced task: the newest epoch that acted; its
                             //  store refuses the writes of an older one
} s_track_t;

//  A request made to a node, and its answer.
typedef struct s_request {
    uint32_t node;
    bool answered;
    uint8_t code;
    uint32_t parallelism;
} s_request_t;

//  Ids carry the node's index in their first four bytes, and a fixed mark
//  after it, so that an id maps back to its node without a table.
static void s_task_list_free (shoal_sim_t *self);

static const uint8_t s_mark[12] = { 's', 'h', 'o', 'a', 'l', '-', 's', 'i', 'm', '-', 'i', 'd' };

void
shoal_sim_id (uint32_t node, shoal_id_t *id)
{
    id->bytes[0] = (uint8_t) (node >> 24);
    id->bytes[1] = (uint8_t) (node >> 16);
    id->bytes[2] = (uint8_t) (node >> 8);
    id->bytes[3] = (uint8_t) node;
    memcpy (id->bytes + 4, s_mark, sizeof s_mark);
}

uint32_t
shoal_sim_index (const shoal_id_t *id)
{
    if (memcmp (id->bytes + 4, s_mark, sizeof s_mark) != 0)
        return SHOAL_SIM_NONE;
    return (uint32_t) id->bytes[0] << 24 | (uint32_t) id->bytes[1] << 16 |
           (uint32_t) id->bytes[2] << 8 | id->bytes[3];
}

//  The node listening at addr ("sim:N"), or SHOAL_SIM_NONE.
static uint32_t
s_node_at (const shoal_sim_t *self, const char *addr)
{
    unsigned node;
    char rest;
    if (sscanf (addr, "sim:%u%c", &node, &rest) != 1 || node >= self->size)
        return SHOAL_SIM_NONE;
    return node;
}

void
shoal_sim_config_default (shoal_sim_config_t *config)
{
    memset (config, 0, sizeof *config);
    shoal_membership_config_lan (&config->membership);
    config->latency_ms = 1;
    config->jitter_ms = 1;
    config->loss_ppm = 0;
    config->backlog = 256;
    config->unreachable = true;
    config->election = false;
    shoal_elector_config_lan (&config->elector);
    config->tasks = false;
    shoal_tasks_config_lan (&config->node_tasks);
    shoal_handoff_config_lan (&config->handoff);
    shoal_jobs_config_lan (&config->jobs);
    config->app_ms = 50;
    config->learner_lag = 20000;
    config->restore_per_s = 10000;
}

//  ---------------------------------------------------------------------
//  The event queue

static bool
s_before (const s_event_t *a, const s_event_t *b)
{
    return a->time != b->time ? a->time < b->time : a->seq < b->seq;
}

static int
s_push (shoal_sim_t *self, s_event_t event)
{
    if (self->queue_count == self->queue_size) {
        size_t size = self->queue_size ? 2 * self->queue_size : 1024;
        s_event_t *queue = realloc (self->queue, size * sizeof *queue);
        if (!queue)
            return -1;
        self->queue = queue;
        self->queue_size = size;
    }
    event.seq = self->seq++;
    size_t i = self->queue_count++;
    while (i > 0 && s_before (&event, &self->queue[(i - 1) / 2])) {
        self->queue[i] = self->queue[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    self->queue[i] = event;
    return 0;
}

static s_event_t
s_pop (shoal_sim_t *self)
{
    s_event_t top = self->queue[0];
    s_event_t last = self->queue[--self->queue_count];
    size_t i = 0;
    while (true) {
        size_t child = 2 * i + 1;
        if (child >= self->queue_count)
            break;
        if (child + 1 < self->queue_count &&
            s_before (&self->queue[child + 1], &self->queue[child]))
            child++;
        if (!s_before (&self->queue[child], &last))
            break;
        self->queue[i] = self->queue[child];
        i = child;
    }
    if (self->queue_count)
        self->queue[i] = last;
    return top;
}

//  ---------------------------------------------------------------------
//  Nodes

shoal_sim_t *
shoal_sim_new (const shoal_sim_config_t *config, uint32_t nodes, uint64_t seed)
{
    shoal_peer_config_t peer = { .membership = config->membership,
                                 .election = config->election,
                                 .elector = config->elector,
                                 .tasks = config->tasks,
                                 .node_tasks = config->node_tasks,
                                 .handoff = config->handoff,
                                 .jobs = config->jobs };
    if (shoal_peer_config_check (&peer) || nodes == 0 || nodes >= SHOAL_SIM_NONE)
        return NULL;
    shoal_sim_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->config = *config;
    self->peer = peer;
    self->size = nodes;
    self->random = seed;
    self->nodes = calloc (nodes, sizeof *self->nodes);
    self->buffer = malloc (SHOAL_FRAME_MAX);
    self->metas = shoal_metapool_new (seed);
    if (!self->nodes || !self->buffer || !self->metas ||
        shoal_arena_init (&self->arena, SHOAL_DECODE_ARENA (SHOAL_FRAME_MAX)) != 0) {
        shoal_sim_destroy (&self);
        return NULL;
    }
    for (uint32_t n = 0; n < nodes; n++) {
        snprintf (self->nodes[n].addr, sizeof self->nodes[n].addr, "sim:%u", n);
        self->nodes[n].sim = self;
        self->nodes[n].index = n;
        self->nodes[n].tick_at = UINT64_MAX;
    }
    return self;
}

static void
s_drop_backlog (s_node_t *node)
{
    for (uint32_t i = 0; i < node->backlog_count; i++)
        free (node->backlog[i].data);
    node->backlog_count = 0;
}

void
shoal_sim_destroy (shoal_sim_t **self_p)
{
    shoal_sim_t *self = *self_p;
    if (!self)
        return;
    for (uint32_t n = 0; self->nodes && n < self->size; n++) {
        shoal_peer_destroy (&self->nodes[n].peer);
        shoal_jobs_destroy (&self->nodes[n].disk);
        free (self->nodes[n].apps);
        free (self->nodes[n].acting);
        free (self->nodes[n].voters);
        s_drop_backlog (&self->nodes[n]);
        free (self->nodes[n].backlog);
    }
    for (size_t i = 0; i < self->queue_count; i++)
        free (self->queue[i].data);
    free (self->queue);
    free (self->nodes);
    s_task_list_free (self);
    shoal_jobs_destroy (&self->initial);
    free (self->requests);
    free (self->gaps);
    free (self->buffer);
    shoal_metapool_destroy (&self->metas);
    shoal_arena_release (&self->arena);
    free (self);
    *self_p = NULL;
}

void
shoal_sim_observe (shoal_sim_t *self, shoal_sim_observer_fn *observer, void *arg)
{
    self->observer = observer;
    self->observer_arg = arg;
}

void
shoal_sim_observe_leaders (shoal_sim_t *self, shoal_sim_leader_fn *observer, void *arg)
{
    self->leader_observer = observer;
    self->leader_observer_arg = arg;
}

void
shoal_sim_observe_steps (shoal_sim_t *self, shoal_sim_step_fn *observer, void *arg)
{
    self->step_observer = observer;
    self->step_observer_arg = arg;
}

//  Sends one message from node from to node to (SHOAL_SIM_NONE: nowhere)
//  into the network.
static void
s_send (shoal_sim_t *self, uint32_t from, const shoal_msg_t *msg, uint32_t to,
        const shoal_life_t *recipient)
{
    s_node_t *node = &self->nodes[from];
    shoal_wire_error_t err;
    long size = shoal_msg_encode (msg, self->buffer, SHOAL_FRAME_MAX, &err);
    if (size < 0) {
        self->stats.codec_errors++;
        return;
    }
    self->stats.sent++;
    self->stats.bytes += (uint64_t) size;
    uint8_t purpose = (uint8_t) shoal_msg_purpose (msg->type);
    switch (shoal_peer_layer (msg)) {
    case SHOAL_PEER_ELECTION:
        self->stats.election_sent++;
        break;
    case SHOAL_PEER_TASKS:
        self->stats.task_sent++;
        break;
    case SHOAL_PEER_JOBS:
        self->stats.job_sent++;
        break;
    case SHOAL_PEER_MEMBERSHIP:
        if (purpose == SHOAL_PURPOSE_FRAME)
            self->stats.frame_bytes += (uint64_t) size;
        break;
    }
    if (to == SHOAL_SIM_NONE) {
        self->stats.undeliverable++;
        return;
    }
    if (!shoal_sim_reachable (self, from, to)) {
        self->stats.blocked++;
        return;
    }
    if (purpose == SHOAL_PURPOSE_DATAGRAM && self->config.loss_ppm &&
        splitmix_next (&self->random) % 1000000 < self->config.loss_ppm) {
        self->stats.lost++;
        return;
    }
    s_event_t event = { 0 };
    event.kind = S_DELIVER;
    event.purpose = purpose;
    event.node = to;
    event.from = from;
    event.time = self->now + self->config.latency_ms +
                 splitmix_next (&self->random) % ((uint64_t) self->config.jitter_ms + 1);
    if (purpose == SHOAL_PURPOSE_FRAME) {
        //  Frames go over TCP: in order, never before one sent earlier.
        if (event.time < node->frames_at)
            event.time = node->frames_at;
        node->frames_at = event.time;
    }
    event.size = (uint32_t) size;
    shoal_id_t id;
    shoal_sim_id (from, &id);
    memcpy (event.sender.id, id.bytes, sizeof event.sender.id);
    event.sender.life = node->life;
    event.recipient = *recipient;
    event.envelope_seq = ++node->sent;
    event.data = malloc ((size_t) size);
    if (event.data)
        memcpy (event.data, self->buffer, (size_t) size);
    if (!event.data || s_push (self, event) != 0) {
        free (event.data);
        self->stats.undeliverable++;
    }
}

//  A node's peer sends a message: to a member's address (the membership's
//  own messages), or to the node of an id.
static void
s_peer_send (void *arg, const shoal_life_t *to, const char *addr, const shoal_msg_t *msg)
{
    s_node_t *node = arg;
    shoal_id_t id;
    memcpy (id.bytes, to->id, sizeof id.bytes);
    uint32_t target = addr ? s_node_at (node->sim, addr) : shoal_sim_index (&id);
    s_send (node->sim, node->index, msg, target, to);
}

//  A node's next tick into the queue, at its peer's deadline.
static void
s_schedule (void *arg, uint64_t next)
{
    s_node_t *node = arg;
    shoal_sim_t *self = node->sim;
    if (next != node->tick_at) {
        node->tick_at = next;
        s_event_t tick = { .kind = S_TICK, .node = node->index, .gen = ++node->gen };
        tick.time = next > self->now ? next : self->now;
        s_push (self, tick);
    }
}

//  ---------------------------------------------------------------------
//  Tasks: each node's application, the list of every task, and the
//  account of who runs what as active

//  The index of task in the list, or task_count.
static size_t
s_task_index (const shoal_sim_t *self, const char *task)
{
    size_t low = 0, high = self->task_count;
    while (low < high) {
        size_t mid = low + (high - low) / 2;
        int order = strcmp (self->task_list[mid].id, task);
        if (order == 0)
            return mid;
        if (order < 0)
            low = mid + 1;
        else
            high = mid;
    }
    return self->task_count;
}

//  Counts the time since the task's last change into the totals.
static void
s_track_flush (shoal_sim_t *self, s_track_t *track)
{
    uint64_t span = self->now - track->since_ms;
    if (track->actives >= 2)
        self->task_stats.double_active_ms += span;
    else if (track->actives == 0 && track->placed && !track->retired)
        self->task_stats.unavailable_ms += span;
    track->since_ms = self->now;
}

//  One node begins (acting) or ends running task t as active.
static void
s_track (shoal_sim_t *self, size_t t, bool acting)
{
    s_track_t *track = &self->track[t];
    s_track_flush (self, track);
    if (acting) {
        if (track->actives == 1 && !self->task_stats.first_double_ms) {
            self->task_stats.first_double_ms = self->now;
            self->first_double = t;
        }
        if (track->actives++ == 0) {
            if (track->placed) {
                uint64_t gap = self->now - track->empty_since_ms;
                if (gap > self->task_stats.unavailable_max_ms)
                    self->task_stats.unavailable_max_ms = gap;
                if (self->gap_count == self->gap_capacity) {
                    size_t capacity = self->gap_capacity ? 2 * self->gap_capacity : 256;
                    uint64_t *gaps = realloc (self->gaps, capacity * sizeof *gaps);
                    if (gaps) {
                        self->gaps = gaps;
                        self->gap_capacity = capacity;
                    }
                }
                if (self->gap_count < self->gap_capacity)
                    self->gaps[self->gap_count++] = gap;
            } else {
                track->placed = true;
                self->task_stats.placed++;
            }
        }
    } else if (--track->actives == 0)
        track->empty_since_ms = self->now;
}

static int
s_epoch_order (shoal_epoch_t a, shoal_epoch_t b)
{
    if (a.term != b.term)
        return a.term < b.term ? -1 : 1;
    return a.version < b.version ? -1 : a.version > b.version;
}

//  Whether node n acting on task t under epoch counts as an active: for a
//  fenced task, only while no newer epoch acted (docs/jobs.md, section 8:
//  the store refuses an older epoch's writes). A newer epoch that acts
//  fences out every node acting under an older one.
static bool
s_fence (shoal_sim_t *self, uint32_t n, size_t t, shoal_epoch_t epoch, bool acting)
{
    s_track_t *track = &self->track[t];
    if (!acting || !self->task_list[t].fenced)
        return acting;
    int order = s_epoch_order (epoch, track->fence);
    if (order < 0)
        return false;
    if (order > 0) {
        track->fence = epoch;
        for (uint32_t m = 0; m < self->size; m++)
            if (m != n && self->nodes[m].acting && self->nodes[m].acting[t] &&
                s_epoch_order (self->nodes[m].apps[t].epoch, epoch) < 0) {
                self->nodes[m].acting[t] = false;
                s_track (self, t, false);
                self->task_stats.fenced_out++;
            }
    }
    return true;
}

//  Node n's account of which tasks it runs as active, brought up to date:
//  after every input to its tasks, and when it pauses, resumes or stops.
static void
s_acting_update (shoal_sim_t *self, uint32_t n)
{
    s_node_t *node = &self->nodes[n];
    if (!node->acting)
        return;
    shoal_tasks_t *tasks = node->peer ? shoal_peer_tasks (node->peer) : NULL;
    bool leased = tasks && !node->paused && shoal_tasks_leased (tasks, self->now);
    for (size_t t = 0; t < self->task_count; t++) {
        s_app_t *app = &node->apps[t];
        if (app->stopping && app->winding) {
            //  A lease that ran out during the stop ends it for good: the
            //  application checks the lease before it writes.
            if (!tasks || self->now >= app->winding_until)
                app->winding = false;
            else
                app->winding_until = shoal_tasks_lease_end (tasks);
        }
        bool acting = leased && (app->role == SHOAL_ROLE_ACTIVE || (app->stopping && app->winding));
        acting = s_fence (self, n, t, app->epoch, acting);
        if (acting != node->acting[t]) {
            node->acting[t] = acting;
            s_track (self, t, acting);
        }
    }
}

//  The application's next step on task t after delay_ms.
static void
s_app_later (shoal_sim_t *self, uint32_t n, size_t t, uint64_t delay_ms)
{
    s_app_t *app = &self->nodes[n].apps[t];
    s_event_t event = { .kind = S_APP, .node = n, .from = (uint32_t) t, .gen = ++app->gen };
    event.time = self->now + delay_ms;
    s_push (self, event);
}

//  A node is told to run task t as active, its application holding app:
//  an activation, and a cold start when the task is stateful and the node
//  held no warm copy of it (the active itself, or a learner or standby
//  that started and is caught up: lag <= acceptable_lag, as the assignor
//  counts it). A copy still winding down as active is warm.
static void
s_activation (shoal_sim_t *self, size_t t, const s_app_t *app)
{
    self->task_stats.activations++;
    bool warming = app->role == SHOAL_ROLE_LEARNER || app->role == SHOAL_ROLE_STANDBY;
    bool warm = app->role == SHOAL_ROLE_ACTIVE || app->stopping ||
                (warming && app->started && app->lag <= self->config.node_tasks.acceptable_lag);
    if (self->task_list[t].stateful && !warm)
        self->task_stats.cold_starts++;
}

//  The application carries out a command of its node's tasks: starting
//  and stopping take app_ms, a promotion is at once.
static void
s_app_command (void *arg, const shoal_tasks_command_t *command)
{
    s_node_t *node = arg;
    shoal_sim_t *self = node->sim;
    uint32_t n = node->index;
    size_t t = s_task_index (self, command->task);
    if (t == self->task_count)
        return; //  a task of no job here
    shoal_tasks_t *tasks = shoal_peer_tasks (node->peer);
    s_app_t *app = &node->apps[t];
    bool active = app->role == SHOAL_ROLE_ACTIVE || app->stopping;
    //  An active told to stop under lease winds down, and may write until it
    //  reports the stop (the leader waits for that report); one told to stop
    //  because its lease ended stops acting at once: it checks the lease
    //  before it writes.
    bool winding = shoal_tasks_leased (tasks, self->now) &&
                   (app->role == SHOAL_ROLE_ACTIVE || (app->stopping && app->winding));
    switch (command->type) {
    case SHOAL_TASKS_START:
        if (command->role == SHOAL_ROLE_ACTIVE)
            s_activation (self, t, app);
        *app = (s_app_t){ .role = command->role, .gen = app->gen, .epoch = command->epoch };
        if (command->role == SHOAL_ROLE_LEARNER || command->role == SHOAL_ROLE_STANDBY)
            app->lag = self->task_list[t].stateful ? self->config.learner_lag : 0;
        s_app_later (self, n, t, self->config.app_ms);
        break;
    case SHOAL_TASKS_PROMOTE:
        s_activation (self, t, app);
        app->role = SHOAL_ROLE_ACTIVE;
        app->stopping = false;
        app->epoch = command->epoch;
        break;
    case SHOAL_TASKS_DEMOTE:
        app->role = command->role;
        app->stopping = true;
        app->winding = winding;
        app->winding_until = shoal_tasks_lease_end (tasks);
        app->lag = 0; //  it was the active: its state is current
        s_app_later (self, n, t, self->config.app_ms);
        break;
    case SHOAL_TASKS_STOP:
        app->role = SHOAL_ROLE_NONE;
        app->started = false;
        if (active) {
            app->stopping = true;
            app->winding = winding;
            app->winding_until = shoal_tasks_lease_end (tasks);
            s_app_later (self, n, t, self->config.app_ms);
        } else
            app->gen++; //  gone: whatever it had pending is void
        break;
    default:
        break;
    }
}

//  A node's tasks took an input: its account follows.
static void
s_tasks_done (void *arg)
{
    s_node_t *node = arg;
    s_acting_update (node->sim, node->index);
}

//  The application's step on a task came: a start or a stop is done, or a
//  learner made up some lag. Reported to the node's tasks.
static void
s_app_step (shoal_sim_t *self, const s_event_t *event)
{
    s_node_t *node = &self->nodes[event->node];
    if (!node->peer || !shoal_peer_tasks (node->peer) || event->from >= self->task_count)
        return;
    s_app_t *app = &node->apps[event->from];
    if (event->gen != app->gen)
        return; //  overtaken by a later command
    if (node->paused) {
        s_app_later (self, event->node, event->from, 100); //  frozen with its node
        return;
    }
    const char *task = self->task_list[event->from].id;
    uint64_t step_ms = 200;
    //  What the application tells its node, after its own bookkeeping.
    uint8_t state = SHOAL_TASK_RUNNING;
    uint64_t lag = 0;
    if (app->stopping) {
        app->stopping = false;
        state = SHOAL_TASK_STOPPED;
        if (app->role == SHOAL_ROLE_NONE)
            *app = (s_app_t){ .gen = app->gen };
    } else if (!app->started &&
               ((self->config.app_fail_job &&
                 strcmp (self->task_list[event->from].job, self->config.app_fail_job) == 0) ||
                (self->config.app_fail_ppm &&
                 splitmix_next (&self->random) % 1000000 < self->config.app_fail_ppm))) {
        //  The start failed: nothing runs until the node starts it again.
        self->task_stats.failed_starts++;
        app->role = SHOAL_ROLE_NONE;
        state = SHOAL_TASK_FAILED;
    } else {
        app->started = true;
        uint64_t made_up = self->config.restore_per_s * step_ms / 1000;
        bool warming = app->role == SHOAL_ROLE_LEARNER || app->role == SHOAL_ROLE_STANDBY;
        lag = app->lag;
        if (warming && app->lag > 0) {
            app->lag = app->lag > made_up ? app->lag - made_up : 0;
            s_app_later (self, event->node, event->from, step_ms);
        }
    }
    shoal_peer_report (node->peer, self->now, task, state, lag);
}

static int s_task_list_sync (shoal_sim_t *self, const shoal_assign_task_t *tasks, size_t count);

//  A node leads at term, and its handoff places these tasks.
static void
s_handoff_tasks (void *arg, uint64_t term, const shoal_assign_task_t *tasks, size_t count)
{
    shoal_sim_t *self = ((s_node_t *) arg)->sim;
    //  The simulator's list of tasks follows the leader of the newest term.
    //  A former leader that has not yet noticed it lost its majority (paused,
    //  say) may still take a job that no majority will ever hold: its tasks
    //  are no one's to run, and must not count as waiting for an active
    //  (random-tasks --submit: 129 of 2,000 schedules never counted as
    //  balanced so).
    if (term < self->list_term)
        return;
    self->list_term = term;
    s_task_list_sync (self, tasks, count);
}

//  A node answers a request.
static void
s_reply (void *arg, const shoal_jobs_reply_t *reply)
{
    shoal_sim_t *self = ((s_node_t *) arg)->sim;
    uint64_t ref = reply->ref;
    if (ref == 0 || ref > self->request_count)
        return;
    s_request_t *request = &self->requests[ref - 1];
    request->answered = true;
    request->code = reply->rep.code;
    request->parallelism = reply->rep.job_count ? reply->rep.jobs[0].parallelism : 0;
}

//  Every node's tasks and the account follow the list: a task keeps what
//  it had under its id.
static int
s_task_list_move (shoal_sim_t *self, shoal_assign_task_t *list, size_t count)
{
    s_track_t *track = calloc (count ? count : 1, sizeof *track);
    if (!track)
        return -1;
    for (uint32_t n = 0; n < self->size; n++) {
        s_node_t *node = &self->nodes[n];
        if (!node->apps)
            continue;
        s_app_t *apps = calloc (count ? count : 1, sizeof *apps);
        bool *acting = calloc (count ? count : 1, sizeof *acting);
        if (!apps || !acting) {
            free (apps);
            free (acting);
            free (track);
            return -1;
        }
        for (size_t t = 0; t < count; t++) {
            size_t old = s_task_index (self, list[t].id);
            if (old < self->task_count) {
                apps[t] = node->apps[old];
                acting[t] = node->acting[old];
            }
        }
        free (node->apps);
        free (node->acting);
        node->apps = apps;
        node->acting = acting;
        //  A pending step names its task by index: one whose task moved in
        //  the list is made again under the new index, or the application
        //  would stop there (a learner that never warms up, a start never
        //  reported).
        for (size_t t = 0; t < count; t++) {
            size_t old = s_task_index (self, list[t].id);
            s_app_t *app = &apps[t];
            bool warming = app->role == SHOAL_ROLE_LEARNER || app->role == SHOAL_ROLE_STANDBY;
            bool pending = app->stopping || (!app->started && app->role != SHOAL_ROLE_NONE) ||
                           (app->started && warming && app->lag > 0);
            if (old < self->task_count && old != t && pending)
                s_app_later (self, n, t, self->config.app_ms); //  voids the old one
        }
    }
    for (size_t t = 0; t < count; t++) {
        size_t old = s_task_index (self, list[t].id);
        if (old < self->task_count) {
            s_track_flush (self, &self->track[old]);
            track[t] = self->track[old];
        } else
            track[t].since_ms = self->now;
    }
    s_task_list_free (self);
    self->task_list = list;
    self->task_count = count;
    self->track = track;
    return 0;
}

static int
s_task_compare (const void *a, const void *b)
{
    return strcmp (((const shoal_assign_task_t *) a)->id, ((const shoal_assign_task_t *) b)->id);
}

//  The simulator's list takes in every task of tasks (sorted by id) it did
//  not have, and marks as retired those tasks does not hold: the account
//  keeps every task ever seen, since nodes may still run a removed one.
static int
s_task_list_sync (shoal_sim_t *self, const shoal_assign_task_t *tasks, size_t count)
{
    size_t fresh = 0;
    for (size_t t = 0; t < count; t++)
        fresh += s_task_index (self, tasks[t].id) == self->task_count;
    if (fresh) {
        size_t total = self->task_count + fresh, made = 0;
        shoal_assign_task_t *list = calloc (total, sizeof *list);
        bool failed = !list;
        for (size_t t = 0; t < self->task_count + count && !failed; t++) {
            const shoal_assign_task_t *task =
                t < self->task_count ? &self->task_list[t] : &tasks[t - self->task_count];
            if (t >= self->task_count && s_task_index (self, task->id) < self->task_count)
                continue;
            list[made] = *task;
            list[made].id = strdup (task->id);
            list[made].job = strdup (task->job);
            list[made].require_count = 0; //  the application needs no labels
            list[made].require = NULL;
            failed = !list[made].id || !list[made].job;
            made++;
        }
        if (!failed)
            qsort (list, total, sizeof *list, s_task_compare);
        if (failed || s_task_list_move (self, list, total) != 0) {
            for (size_t t = 0; list && t < made; t++) {
                free ((char *) list[t].id);
                free ((char *) list[t].job);
            }
            free (list);
            return -1;
        }
    }
    for (size_t t = 0, i = 0; t < self->task_count; t++) {
        while (i < count && strcmp (tasks[i].id, self->task_list[t].id) < 0)
            i++;
        bool current = i < count && strcmp (tasks[i].id, self->task_list[t].id) == 0;
        s_track_t *track = &self->track[t];
        if (current == !track->retired)
            continue;
        s_track_flush (self, track);
        track->retired = !current;
        if (current)
            track->placed = false; //  back as a new task: its first active is no gap
    }
    return 0;
}

int
shoal_sim_set_jobs (shoal_sim_t *self, const shoal_jobspec_t *specs, size_t count)
{
    shoal_id_t id;
    shoal_sim_id (0, &id);
    shoal_jobs_saved_t saved = {
        .term = 0, .version = count ? 1 : 0, .count = count, .specs = specs
    };
    shoal_jobs_t *initial = shoal_jobs_new (&self->config.jobs, &id, &saved, self->now);
    if (!initial)
        return -1;
    const shoal_assign_task_t *tasks;
    size_t task_count = shoal_jobs_tasks (initial, &tasks);
    if (s_task_list_sync (self, tasks, task_count) != 0) {
        shoal_jobs_destroy (&initial);
        return -1;
    }
    shoal_jobs_destroy (&self->initial);
    self->initial = initial;
    return 0;
}

uint64_t
shoal_sim_request (shoal_sim_t *self, uint32_t n, const shoal_control_req_t *req)
{
    if (n >= self->size || !self->nodes[n].peer || !shoal_peer_tasks (self->nodes[n].peer))
        return 0;
    s_request_t *requests =
        realloc (self->requests, (self->request_count + 1) * sizeof *self->requests);
    if (!requests)
        return 0;
    self->requests = requests;
    requests[self->request_count] = (s_request_t){ .node = n };
    uint64_t ref = ++self->request_count;
    if (shoal_peer_request (self->nodes[n].peer, self->now, ref, req) != 0) {
        self->request_count--;
        return 0;
    }
    return ref;
}

int
shoal_sim_reply (const shoal_sim_t *self, uint64_t ref, uint8_t *code, uint32_t *parallelism)
{
    if (ref == 0 || ref > self->request_count || !self->requests[ref - 1].answered)
        return -1;
    *code = self->requests[ref - 1].code;
    *parallelism = self->requests[ref - 1].parallelism;
    return 0;
}

shoal_jobs_t *
shoal_sim_jobs (const shoal_sim_t *self, uint32_t n)
{
    if (n >= self->size)
        return NULL;
    return self->nodes[n].peer ? shoal_peer_jobs (self->nodes[n].peer) : self->nodes[n].disk;
}

size_t
shoal_sim_task_count (const shoal_sim_t *self)
{
    return self->task_count;
}

bool
shoal_sim_task_current (const shoal_sim_t *self, size_t task)
{
    return task < self->task_count && !self->track[task].retired;
}

static void
s_task_list_free (shoal_sim_t *self)
{
    for (size_t t = 0; t < self->task_count; t++) {
        free ((char *) self->task_list[t].id);
        free ((char *) self->task_list[t].job);
    }
    free (self->task_list);
    free (self->track);
    self->task_list = NULL;
    self->track = NULL;
    self->task_count = 0;
}

void
shoal_sim_task_stats (shoal_sim_t *self, shoal_sim_task_stats_t *stats)
{
    for (size_t t = 0; t < self->task_count; t++)
        s_track_flush (self, &self->track[t]);
    *stats = self->task_stats;
    stats->first_double_task = stats->first_double_ms && self->first_double < self->task_count
                                   ? self->task_list[self->first_double].id
                                   : NULL;
    stats->gap_count = self->gap_count;
    stats->gaps = self->gaps;
}

uint32_t
shoal_sim_task_actives (const shoal_sim_t *self, size_t task)
{
    return task < self->task_count ? self->track[task].actives : 0;
}

shoal_tasks_t *
shoal_sim_tasks (const shoal_sim_t *self, uint32_t n)
{
    return n < self->size && self->nodes[n].peer ? shoal_peer_tasks (self->nodes[n].peer) : NULL;
}

bool
shoal_sim_drained (const shoal_sim_t *self, uint32_t n)
{
    return n >= self->size || !self->nodes[n].peer || shoal_peer_drained (self->nodes[n].peer);
}

shoal_handoff_t *
shoal_sim_handoff (const shoal_sim_t *self, uint32_t n)
{
    return n < self->size && self->nodes[n].peer ? shoal_peer_handoff (self->nodes[n].peer) : NULL;
}

//  Node n takes in the message of event, as its shell would after opening
//  the envelope.
static void
s_receive (shoal_sim_t *self, uint32_t n, const s_event_t *event)
{
    shoal_msg_t msg;
    shoal_wire_error_t err;
    shoal_arena_reset (&self->arena);
    if (shoal_msg_decode (event->data, event->size, event->purpose, &msg, &self->arena, &err) !=
        0) {
        self->stats.codec_errors++;
        return;
    }
    shoal_envelope_t envelope = { 0 };
    envelope.mode = SHOAL_ENVELOPE_PLAINTEXT;
    envelope.purpose = event->purpose;
    envelope.sender = event->sender;
    envelope.recipient = event->recipient;
    envelope.seq = event->envelope_seq;
    self->stats.delivered++;
    shoal_peer_receive (self->nodes[n].peer, self->now, &envelope, &msg,
                        self->nodes[event->from].addr);
}

//  A datagram reached node down, whose process is gone: its kernel answers
//  the sender with ICMP port unreachable, over the same network (latency,
//  loss), and the sender's shell turns it into a hint.
static void
s_unreachable (shoal_sim_t *self, const s_event_t *event)
{
    if (!self->config.unreachable || event->purpose != SHOAL_PURPOSE_DATAGRAM ||
        !shoal_sim_reachable (self, event->node, event->from) ||
        (self->config.loss_ppm && splitmix_next (&self->random) % 1000000 < self->config.loss_ppm))
        return;
    s_event_t icmp = { .kind = S_UNREACHABLE, .node = event->from, .from = event->node };
    icmp.time = self->now + self->config.latency_ms +
                splitmix_next (&self->random) % ((uint64_t) self->config.jitter_ms + 1);
    s_push (self, icmp);
}

//  The shell of node n learns that a datagram to node gone was refused.
static void
s_hint (shoal_sim_t *self, uint32_t n, uint32_t gone)
{
    s_node_t *node = &self->nodes[n];
    if (!node->peer || node->paused)
        return; //  a paused process reads its error queue when it runs: by then it probes anyway
    shoal_id_t id;
    shoal_sim_id (gone, &id);
    self->stats.unreachable++;
    shoal_peer_hint (node->peer, self->now, &id);
}

static void
s_deliver (shoal_sim_t *self, s_event_t *event)
{
    s_node_t *node = &self->nodes[event->node];
    if (!node->peer) {
        self->stats.undeliverable++;
        s_unreachable (self, event);
    } else if (node->paused) {
        //  The backlog is made when first needed: most nodes never pause.
        if (!node->backlog && self->config.backlog)
            node->backlog = calloc (self->config.backlog, sizeof (s_event_t));
        if (node->backlog && node->backlog_count < self->config.backlog) {
            node->backlog[node->backlog_count++] = *event;
            return; //  the backlog owns the data now
        }
        self->stats.undeliverable++;
    } else
        s_receive (self, event->node, event);
    free (event->data);
}

//  A paused node resumes: what waited in its socket first, then its late
//  timers.
static void
s_resume (shoal_sim_t *self, uint32_t n)
{
    s_node_t *node = &self->nodes[n];
    if (!node->paused)
        return;
    node->paused = false;
    node->tick_at = UINT64_MAX; //  a tick due in the pause was skipped
    for (uint32_t i = 0; i < node->backlog_count && node->peer; i++)
        s_receive (self, n, &node->backlog[i]);
    s_drop_backlog (node);
    if (node->peer)
        shoal_peer_resume (node->peer, self->now);
}

void
shoal_sim_run (shoal_sim_t *self, uint64_t until_ms)
{
    while (!self->stalled && self->queue_count && self->queue[0].time <= until_ms) {
        s_event_t event = s_pop (self);
        if (event.time > self->now) {
            self->now = event.time;
            self->instant_events = 0;
        }
        //  Cores that answer each other without end at one virtual instant
        //  would hold the simulation there for ever: stopped, and told.
        if (++self->instant_events > SHOAL_SIM_INSTANT_EVENTS_MAX) {
            self->stalled = true;
            self->stalled_ms = self->now;
            break;
        }
        s_node_t *node = &self->nodes[event.node];
        if (event.kind == S_DELIVER)
            s_deliver (self, &event);
        else if (event.kind == S_RESUME)
            s_resume (self, event.node);
        else if (event.kind == S_APP)
            s_app_step (self, &event);
        else if (event.kind == S_UNREACHABLE)
            s_hint (self, event.node, event.from);
        else if (node->peer && !node->paused && event.gen == node->gen) {
            node->tick_at = UINT64_MAX;
            shoal_peer_tick (node->peer, self->now);
        }
        if (self->step_observer && node->peer)
            self->step_observer (self->step_observer_arg, self->now, event.node);
    }
    if (until_ms > self->now)
        self->now = until_ms;
}

//  A node's observers: its membership events and its elector's.
static void
s_member_event (void *arg, const shoal_membership_event_t *event)
{
    s_node_t *node = arg;
    shoal_sim_t *self = node->sim;
    self->stats.events++;
    if (self->observer)
        self->observer (self->observer_arg, self->now, node->index, shoal_sim_index (&event->node),
                        event);
}

static void
s_leader_event (void *arg, const shoal_elector_event_t *event)
{
    s_node_t *node = arg;
    shoal_sim_t *self = node->sim;
    if (self->leader_observer)
        self->leader_observer (self->leader_observer_arg, self->now, node->index, event);
}

//  The node's disk takes the job specs it persists.
static void
s_disk_write (shoal_sim_t *self, s_node_t *node, const shoal_jobs_saved_t *saved)
{
    shoal_id_t id;
    shoal_sim_id (node->index, &id);
    shoal_jobs_t *disk = shoal_jobs_new (&self->config.jobs, &id, saved, self->now);
    if (disk) {
        shoal_jobs_destroy (&node->disk);
        node->disk = disk;
    }
}

//  What a node persists, kept for its next life.
static void
s_saved (void *arg, const shoal_peer_saved_t *saved)
{
    s_node_t *node = arg;
    if (saved->elector) {
        const shoal_elector_saved_t *elector = saved->elector;
        shoal_id_t *voters = realloc (node->voters, (elector->voter_count + 1) * sizeof *voters);
        if (voters) {
            node->voters = voters;
            memcpy (voters, elector->voters, elector->voter_count * sizeof *voters);
            node->voter_count = elector->voter_count;
            node->voters_version = elector->voters_version;
            node->term = elector->term;
            node->leader = elector->leader;
            node->saved = true;
        }
    }
    if (saved->jobs)
        s_disk_write (node->sim, node, saved->jobs);
}

//  The name and specs a jobs core holds, as it would persist them.
static shoal_jobs_saved_t
s_jobs_held (const shoal_jobs_t *jobs)
{
    shoal_jobs_saved_t saved = { 0 };
    shoal_jobs_name (jobs, &saved.term, &saved.version);
    saved.count = shoal_jobs_specs (jobs, &saved.specs);
    return saved;
}

int
shoal_sim_start (shoal_sim_t *self, uint32_t n, uint32_t seed)
{
    if (n >= self->size || self->nodes[n].peer)
        return -1;
    s_node_t *node = &self->nodes[n];
    node->incarnation++;
    node->life++;
    node->paused = false;
    char name[16];
    snprintf (name, sizeof name, "n%u", n);
    shoal_meta_t meta = { .name = name,
                          .addr = node->addr,
                          .life = node->life,
                          .priority = node->priority,
                          .capacity = 1,
                          .slots = self->config.slots };
    shoal_id_t id;
    shoal_sim_id (n, &id);
    //  The job specs come from its disk: what it held when it went down,
    //  or the initial ones at its first start.
    if (self->config.tasks && !node->disk && self->initial) {
        shoal_jobs_saved_t initial = s_jobs_held (self->initial);
        s_disk_write (self, node, &initial);
    }
    shoal_elector_saved_t elector = { node->term, node->leader, node->voters_version,
                                      node->voter_count, node->voters };
    shoal_jobs_saved_t jobs = node->disk ? s_jobs_held (node->disk) : (shoal_jobs_saved_t){ 0 };
    shoal_peer_saved_t saved = { .elector = node->saved ? &elector : NULL, .jobs = &jobs };
    shoal_peer_sink_t sink = { .arg = node,
                               .send = s_peer_send,
                               .command = s_app_command,
                               .reply = s_reply,
                               .member_event = s_member_event,
                               .leader_event = s_leader_event,
                               .saved = s_saved,
                               .tasks_done = s_tasks_done,
                               .handoff_tasks = s_handoff_tasks,
                               .deadline = s_schedule };
    node->peer = shoal_peer_new (&self->peer, &id, node->incarnation, &meta, &saved,
                                 splitmix_next (&self->random), self->now, self->metas, &sink);
    if (!node->peer)
        return -1;
    if (self->config.tasks) {
        free (node->apps);
        free (node->acting);
        node->apps = calloc (self->task_count ? self->task_count : 1, sizeof *node->apps);
        node->acting = calloc (self->task_count ? self->task_count : 1, sizeof *node->acting);
        if (!node->apps || !node->acting) {
            shoal_peer_destroy (&node->peer);
            return -1;
        }
    }
    node->tick_at = UINT64_MAX;
    node->gen++;
    if (seed != SHOAL_SIM_NONE && seed < self->size && seed != n)
        shoal_peer_join (node->peer, self->now, self->nodes[seed].addr);
    else
        s_schedule (node, shoal_peer_next (node->peer));
    return 0;
}

//  Records a node takes per input at a settled start.
#define S_SETTLE_PIECE 256

int
shoal_sim_settle (shoal_sim_t *self)
{
    shoal_update_t *updates = calloc (self->size ? self->size : 1, sizeof *updates);
    if (!updates)
        return -1;
    uint32_t count = 0;
    for (uint32_t n = 0; n < self->size; n++) {
        shoal_membership_member_t member;
        shoal_id_t id;
        shoal_sim_id (n, &id);
        if (!self->nodes[n].peer ||
            shoal_membership_member (shoal_peer_membership (self->nodes[n].peer), &id, &member))
            continue;
        updates[count++] = (shoal_update_t){ .node = member.node,
                                             .incarnation = member.incarnation,
                                             .state = member.state,
                                             .meta = (shoal_meta_t *) member.meta };
    }
    //  In pieces: each input's events (one per member learnt) stay with the
    //  core until its next input, which frees them past a few hundred; all
    //  at once, 10,000 nodes would hold 10,000 events each.
    for (uint32_t n = 0; n < self->size; n++)
        for (uint32_t i = 0; i < count && self->nodes[n].peer; i += S_SETTLE_PIECE)
            shoal_peer_settle (self->nodes[n].peer, self->now, updates + i,
                               count - i < S_SETTLE_PIECE ? count - i : S_SETTLE_PIECE);
    free (updates);
    return 0;
}

void
shoal_sim_crash (shoal_sim_t *self, uint32_t n)
{
    if (n >= self->size)
        return;
    s_node_t *node = &self->nodes[n];
    //  The next life starts above every incarnation this one took (its
    //  refutations raised it): a real node persists it.
    shoal_membership_t *membership = node->peer ? shoal_peer_membership (node->peer) : NULL;
    if (membership && shoal_membership_incarnation (membership) > node->incarnation)
        node->incarnation = shoal_membership_incarnation (membership);
    shoal_peer_destroy (&node->peer);
    s_acting_update (self, n); //  its tasks died with it
    s_drop_backlog (node);
    node->paused = false;
    node->tick_at = UINT64_MAX;
    node->gen++;
}

//  As a worker leaves: a follower leaves the view at once (one that votes
//  once its leader dropped it from the voter set), and the leader moves
//  its tasks away before it does (its handoff counts it gone), so that they
//  never wait for the next leader.
void
shoal_sim_leave (shoal_sim_t *self, uint32_t n)
{
    if (n >= self->size || !self->nodes[n].peer || self->nodes[n].paused)
        return;
    shoal_peer_leave (self->nodes[n].peer, self->now);
}

int
shoal_sim_cordon (shoal_sim_t *self, uint32_t n, uint8_t cordon)
{
    if (n >= self->size || !self->nodes[n].peer || self->nodes[n].paused)
        return -1;
    return shoal_peer_cordon (self->nodes[n].peer, self->now, cordon);
}

bool
shoal_sim_left (const shoal_sim_t *self, uint32_t n)
{
    return n < self->size && self->nodes[n].peer && shoal_peer_left (self->nodes[n].peer);
}

void
shoal_sim_pause (shoal_sim_t *self, uint32_t n, uint64_t duration_ms)
{
    if (n >= self->size || !self->nodes[n].peer || self->nodes[n].paused)
        return;
    self->nodes[n].paused = true;
    s_acting_update (self, n); //  its tasks are frozen with it
    s_event_t resume = { .kind = S_RESUME, .node = n, .time = self->now + duration_ms };
    s_push (self, resume);
}

void
shoal_sim_set_priority (shoal_sim_t *self, uint32_t n, uint32_t priority)
{
    if (n < self->size)
        self->nodes[n].priority = priority;
}

void
shoal_sim_set_group (shoal_sim_t *self, uint32_t n, uint32_t group)
{
    if (n < self->size && group < SHOAL_SIM_GROUPS)
        self->nodes[n].group = group;
}

void
shoal_sim_block (shoal_sim_t *self, uint32_t from, uint32_t to, bool blocked)
{
    if (from < SHOAL_SIM_GROUPS && to < SHOAL_SIM_GROUPS)
        self->blocked[from][to] = blocked;
}

void
shoal_sim_set_loss (shoal_sim_t *self, uint32_t loss_ppm)
{
    self->config.loss_ppm = loss_ppm < 1000000 ? loss_ppm : 1000000;
}

bool
shoal_sim_reachable (const shoal_sim_t *self, uint32_t from, uint32_t to)
{
    return !self->blocked[self->nodes[from].group][self->nodes[to].group];
}

bool
shoal_sim_stalled (const shoal_sim_t *self, uint64_t *at_ms)
{
    *at_ms = self->stalled_ms;
    return self->stalled;
}

uint64_t
shoal_sim_now (const shoal_sim_t *self)
{
    return self->now;
}

uint32_t
shoal_sim_size (const shoal_sim_t *self)
{
    return self->size;
}

shoal_membership_t *
shoal_sim_node (const shoal_sim_t *self, uint32_t n)
{
    return n < self->size && self->nodes[n].peer ? shoal_peer_membership (self->nodes[n].peer)
                                                 : NULL;
}

shoal_elector_t *
shoal_sim_elector (const shoal_sim_t *self, uint32_t n)
{
    return n < self->size && self->nodes[n].peer ? shoal_peer_elector (self->nodes[n].peer) : NULL;
}

bool
shoal_sim_paused (const shoal_sim_t *self, uint32_t n)
{
    return n < self->size && self->nodes[n].paused;
}

void
shoal_sim_stats (const shoal_sim_t *self, shoal_sim_stats_t *stats)
{
    *stats = self->stats;
}

/*  sim/scenario.h: what a scenario of shoal-sim is, and the run it plays on.

    shoal-sim plays one scenario as TigerBeetle's VOPR plays a seed: the
    options, then a world built for the scenario (setup) that settles, then
    a safety phase (the fault, with the invariants checked as it runs), then
    a liveness phase (the faults over, the scenario waits for what it
    should come back to: done), then its measures. The invariants are
    checked apart from the scenarios, in checkers.c, all through the run.

    Scenarios come in families (membership, leader, task and job
    scenarios); a family says what the world runs (the election, the
    tasks), what every one of its scenarios waits for before its fault,
    and how its liveness phase ends and is reported. Each scenario fills one
    entry of its family's table: {name, help, setup, fault, done, measure}.
*/
#ifndef SHOAL_SIM_SCENARIO_H
#define SHOAL_SIM_SCENARIO_H

#include "sim/sim.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

//  The cluster's nodes are started over this long.
#define SIM_JOIN_MS 2000

//  How long a scenario waits for the cluster to settle, before and after,
//  and how long any other wait of a scenario may take: the LAN's, five
//  times as long with the wan profile's times.
#define SIM_SLOW(run)            ((run)->options->profile == SIM_PROFILE_WAN ? 5ull : 1ull)
#define SIM_SETTLE_LIMIT_MS(run) (600000ull * SIM_SLOW (run))
#define SIM_LIMIT_MS(run)        (300000ull * SIM_SLOW (run))

typedef struct sim_run sim_run_t;
typedef struct sim_family sim_family_t;

//  One scenario: one entry of its family's table.
typedef struct {
    const char *name;
    const char *help; //  its lines of --help, as printed
    //  Before the world is made: the config and the run's plan (joining,
    //  job_count, ready, state, watch). Returns -1 when memory is short.
    //  NULL: nothing to change.
    int (*setup) (sim_run_t *run, shoal_sim_config_t *config);
    void (*fault) (sim_run_t *run);   //  the safety phase
    bool (*done) (sim_run_t *run);    //  what the liveness phase waits for (NULL: nothing)
    void (*measure) (sim_run_t *run); //  its own measures and checks, after (NULL: none)
} sim_scenario_t;

struct sim_family {
    const char *help; //  the heading of its scenarios in --help, as printed
    bool election;    //  the world runs the election
    bool tasks;       //  and the tasks
    //  Before the fault: what every scenario of the family waits for once
    //  the cluster settled; false when it did not come (the run ends).
    bool (*ready) (sim_run_t *run);
    //  After the fault: waits for the scenario's done and reports it.
    void (*liveness) (sim_run_t *run);
    const sim_scenario_t *scenarios;
    size_t count;
};

extern const sim_family_t sim_family_membership, sim_family_leader, sim_family_tasks,
    sim_family_jobs;

//  Every family, in the order of --help (NULL-terminated).
extern const sim_family_t *const sim_families[];

//  The timing profiles, as --profile names them (sim_profile_names).
typedef enum {
    SIM_PROFILE_LAN,
    SIM_PROFILE_LOOPBACK,
    SIM_PROFILE_WAN,
    SIM_PROFILE_COUNT
} sim_profile_t;
extern const char *const sim_profile_names[SIM_PROFILE_COUNT];

typedef struct {
    const sim_scenario_t *scenario;
    const sim_family_t *family;
    uint32_t nodes;
    uint64_t seed;
    uint32_t loss_ppm;
    uint64_t duration_ms;
    uint32_t stall;
    sim_profile_t profile;
    bool available;
    uint32_t faults;
    uint32_t tasks;
    uint32_t backlog;
    uint32_t max_starting; //  the leader's bound on tasks starting at once (0: none)
    uint32_t fail_ppm;
    bool stateless;
    bool fenced;       //  the job is fenced: its tasks move at failure detection
    bool leaves;       //  random faults include graceful leaves
    bool submit;       //  random-tasks: a job submitted at each fault
    bool silent_crash; //  no port unreachable from crashed nodes
    bool settled;      //  the cluster starts settled (shoal_sim_settle), no joins
    bool json;
} sim_options_t;

//  Parses the command line into options; prints --help and exits 0 when
//  asked to. Returns 0, or 2 after printing a usage error.
int sim_options_parse (int argc, char **argv, sim_options_t *options);

//  What the invariant checkers keep between checks (checkers.c).
typedef struct {
    json_t *violations;
    bool stall_told; //  the livelock, if any, is among the violations
    //  Dead verdicts about nodes that were up and reachable, to check later
    //  that the verdict did not last (the subject refutes it).
    struct {
        uint32_t observer, subject;
        uint64_t due_ms;
    } * verdicts;
    size_t verdict_count, verdict_size;
    uint64_t *incarnations; //  per node, the last seen; they never go back
    uint64_t *credit;       //  per node, members its membership check may still visit
    bool election;
    bool quorum;
    uint64_t *terms;        //  per node, the last term it persisted; never goes back
    uint32_t *term_leaders; //  per term, the node + 1 that acted with it
    uint8_t *acting;        //  per node, as its last event said
    size_t term_count;      //  terms term_leaders has room for
} sim_checks_t;

//  What the leader observer counts once the fault began (counting).
typedef struct {
    uint32_t starts;        //  times a node began to act
    uint64_t new_ms;        //  when one other than old first began to act; 0 until
    uint32_t old;           //  the leader the fault was about
    uint64_t election_sent; //  election messages sent until new_ms
} sim_leaders_t;

//  A membership event, for a scenario that watches them.
typedef void (sim_watch_fn) (sim_run_t *run, uint64_t now_ms, uint32_t observer, uint32_t subject,
                             const shoal_membership_event_t *event);

struct sim_run {
    //  The world.
    shoal_sim_t *sim;
    const sim_options_t *options;
    const shoal_sim_config_t *config;
    uint64_t bound;  //  how long a dead verdict about a reachable node may last
    uint64_t random; //  the scenario's own choices (join times, which node)
    uint64_t pick;   //  one of them, drawn once the cluster settled
    //  The plan, which setup may change.
    uint32_t joining;               //  nodes that start only in the fault
    size_t job_count;               //  task scenarios: "web", and "bad" too when 2
    bool (*ready) (sim_run_t *run); //  task scenarios: what comes before the fault
    void *state;                    //  the scenario's own (freed with the run)
    sim_watch_fn *watch;            //  told every membership event (NULL: none)
    //  The phases.
    bool counting;                 //  the fault began: leaders are counted
    sim_leaders_t leaders;         //  leader scenarios
    uint32_t subject;              //  the node the scenario is about (SHOAL_SIM_NONE)
    uint64_t start_ms;             //  when the scenario's fault or join happened
    uint64_t healed;               //  when the fault ended, when it does (0: at its start)
    uint64_t end_ms;               //  when the scenario ended (before the final check)
    shoal_sim_stats_t at_start;    //  the network's counts when the scenario began
    shoal_sim_task_stats_t before; //  task scenarios: the tasks' counts when placed
    size_t gaps_before;            //  and how many gaps there were then
    const char *moves;             //  task scenarios: what the activations after are called
    json_t *measures;              //  what the scenario measured
    bool finished;                 //  it reached its end within its time limit
    sim_checks_t checks;
};

//  Runs the simulation to until_ms, checking the invariants every 100 ms;
//  stops early, at such a step, once done (run) says so, when given.
bool sim_run_until (sim_run_t *run, uint64_t until_ms, bool (*done) (sim_run_t *run));

void sim_measure (sim_run_t *run, const char *name, uint64_t value);

void sim_violation (sim_run_t *run, const char *format, ...)
    __attribute__ ((format (printf, 2, 3)));

//  Crashes node n; its next life begins without a leadership.
void sim_crash (sim_run_t *run, uint32_t n);

//  Crashes the node leader (no leader: SHOAL_SIM_NONE) and a tenth of the
//  others, live ones at random, at once, as bench/scale.sh kills them.
void sim_crash_leader_tenth (sim_run_t *run, uint32_t leader);

//  Every node back in group 0, and no group blocked.
void sim_heal (shoal_sim_t *sim);

//  The one node acting as leader, when exactly one acts, else SHOAL_SIM_NONE.
uint32_t sim_acting_leader (sim_run_t *run);
//  What the acting leader's handoff counted in its office (all zero when no
//  node acts, or it has no handoff).
void sim_leader_handoff_stats (sim_run_t *run, shoal_handoff_stats_t *stats);

//  Exactly one leader acts and every node up follows it.
bool sim_one_leader (sim_run_t *run);

//  One view everywhere (checkers.c).
bool sim_settled (sim_run_t *run);

//  Jobs submitted during random task faults: one per fault, the first ones.
#define SIM_FAULTS_MAX 64

typedef struct {
    char names[SIM_FAULTS_MAX][8];
    uint32_t parallelism[SIM_FAULTS_MAX];
    uint64_t refs[SIM_FAULTS_MAX];
    uint32_t count;
} sim_submits_t;

//  --faults faults one after another, at random (random, random-tasks);
//  with submits, a job submitted at the start of each.
void sim_random_faults (sim_run_t *run, sim_submits_t *submits);

//  How many of the count jobs answered ok (ok[j]) the acting leader does
//  not hold with the parallelism they were submitted with.
uint32_t sim_lost_jobs (sim_run_t *run, char names[][8], const uint32_t *parallelism,
                        const bool *ok, uint32_t count);

//  The task family's predicates (scenarios_tasks.c), for the job scenarios.
bool sim_tasks_ready (sim_run_t *run);
void sim_tasks_liveness (sim_run_t *run);
bool sim_tasks_balanced (sim_run_t *run);

//  The tasks the acting leader reports failed on every node, in *tasks.
size_t sim_failed_everywhere (sim_run_t *run, const char *const **tasks);

#endif

/*  tests/test_resolver.c: the seeds' lookups off the node's thread, and the
    parser of the DNS answer to an SRV query (node/resolver.h).

    The lookups here are numeric or local (no DNS server needed); tests/dns.sh
    runs names and SRV records against a server of its own. Waits are
    bounded against a hang only.
*/

#include "node/resolver.h"
#include "tests/samples.h"
#include "tests/test.h"

#include <arpa/inet.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>

static const uint8_t *s_answer = shoal_sample_srv_answer;

static void
an_srv_answer_gives_its_targets (void)
{
    shoal_srv_target_t targets[4];
    char why[120] = "";
    CHECK_EQ (shoal_srv_parse (s_answer, SHOAL_SAMPLE_SRV_SIZE, targets, 4, why, sizeof why), 2);
    CHECK_STR (targets[0].target, "a.test");
    CHECK_EQ (targets[0].port, 7946);
    CHECK_EQ (targets[0].priority, 1);
    CHECK_STR (targets[1].target, "b.test");
    CHECK_EQ (targets[1].port, 7947);
    //  At most max.
    CHECK_EQ (shoal_srv_parse (s_answer, SHOAL_SAMPLE_SRV_SIZE, targets, 1, why, sizeof why), 1);
}

//  Every answer cut short is refused with a reason, never read past.
static void
a_malformed_answer_is_refused_with_a_reason (void)
{
    shoal_srv_target_t targets[4];
    for (size_t size = 0; size < SHOAL_SAMPLE_SRV_SIZE; size++) {
        char why[120] = "";
        int found = shoal_srv_parse (s_answer, size, targets, 4, why, sizeof why);
        //  Cut after a whole first record, the answer still holds it.
        if (found >= 0)
            continue;
        CHECK (why[0] != '\0');
    }
    CHECK_EQ (shoal_srv_parse (s_answer, 20, targets, 4, (char[120]){ 0 }, 120), -1);
    uint8_t patched[SHOAL_SAMPLE_SRV_SIZE];
    memcpy (patched, s_answer, sizeof patched);
    patched[3] = 0x83; //  NXDOMAIN
    char why[120] = "";
    CHECK_EQ (shoal_srv_parse (patched, sizeof patched, targets, 4, why, sizeof why), -1);
    CHECK_CONTAINS (why, "error 3");
    memcpy (patched, s_answer, sizeof patched);
    patched[SHOAL_SAMPLE_SRV_LENGTH_AT] = 0xff; //  a record longer than the answer
    CHECK_EQ (shoal_srv_parse (patched, sizeof patched, targets, 4, why, sizeof why), -1);
    CHECK_CONTAINS (why, "longer than its answer");
}

//  Reads results until the round's done, each into results[seed].
static int
s_round (shoal_resolver_t *resolver, shoal_resolver_result_t *results, size_t count)
{
    int got = 0;
    for (int waited = 0; waited < 10000; waited += 10) {
        struct pollfd p = { .fd = shoal_resolver_fd (resolver), .events = POLLIN };
        if (poll (&p, 1, 10) != 1)
            continue;
        shoal_resolver_result_t result;
        while (shoal_resolver_read (resolver, &result) == 1) {
            if (result.done)
                return got;
            CHECK (result.seed < count);
            results[result.seed] = result;
            got++;
        }
    }
    return -1;
}

static void
a_round_gives_each_seed_its_addresses_or_why (void)
{
    char why[120] = "";
    shoal_resolver_t *resolver = shoal_resolver_new (AF_INET, why, sizeof why);
    CHECK (resolver != NULL);
    CHECK (!shoal_resolver_busy (resolver));
    shoal_option_hostport_t seeds[3] = { { "localhost", 7946 }, { "127.0.0.2", 7 }, { "::1", 9 } };
    CHECK_EQ (shoal_resolver_start (resolver, seeds, 3, why, sizeof why), 0);
    CHECK (shoal_resolver_busy (resolver));
    CHECK_EQ (shoal_resolver_start (resolver, seeds, 3, why, sizeof why), -1);
    CHECK_CONTAINS (why, "a round runs already");
    shoal_resolver_result_t results[3];
    memset (results, 0, sizeof results);
    CHECK_EQ (s_round (resolver, results, 3), 3);
    CHECK (!shoal_resolver_busy (resolver));
    CHECK (results[0].count >= 1);
    CHECK_STR (results[0].addrs[0], "127.0.0.1:7946");
    CHECK_EQ (results[1].count, 1);
    CHECK_STR (results[1].addrs[0], "127.0.0.2:7");
    CHECK_EQ (results[2].count, -1);
    CHECK_CONTAINS (results[2].why, "an IPv6 address, and this node is bound to IPv4");
    //  Another round, then the resolver gone while it may still run.
    CHECK_EQ (shoal_resolver_start (resolver, seeds, 3, why, sizeof why), 0);
    shoal_resolver_destroy (&resolver);
    CHECK (resolver == NULL);
}

int
main (void)
{
    RUN (an_srv_answer_gives_its_targets);
    RUN (a_malformed_answer_is_refused_with_a_reason);
    RUN (a_round_gives_each_seed_its_addresses_or_why);
    return TEST_DONE ();
}

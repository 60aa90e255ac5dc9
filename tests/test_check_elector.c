/*  tests/test_check_elector.c: shoal_elector_check, on real states and on
    states broken by hand.

    The check reads the elector's own tables, which no input can break
    unless the elector has a bug; to show that it finds what it looks for,
    this test includes the elector's source and breaks a real state by
    hand, then mends it. The library's copy is not linked: this file
    defines every symbol of it. tests/test_elector.c checks every node of
    its network after every millisecond.
*/

#include "../election/elector.c"
#include "tests/samples.h"
#include "tests/test.h"

//  An elector of id 9 told of members 1 to 4 (all below it), run until it
//  leads alone: a real state of each role on the way, checked after every
//  input.
static shoal_elector_t *
t_leader (uint64_t *now)
{
    shoal_elector_config_t config;
    shoal_elector_config_loopback (&config);
    shoal_id_t id = shoal_sample_index_id (9);
    shoal_elector_t *elector = shoal_elector_new (&config, &id, 1, NULL, *now);
    CHECK (elector != NULL);
    const char *why = "";
    CHECK_EQ (shoal_elector_check (elector, &why), 0);
    for (int i = 1; i <= 4; i++) {
        shoal_id_t member = shoal_sample_index_id (i);
        CHECK_EQ (shoal_elector_member (elector, *now, &member, 1, true), 0);
        CHECK_EQ (shoal_elector_check (elector, &why), 0);
    }
    for (int i = 0; i < 100 && elector->role != S_LEADING; i++) {
        *now = shoal_elector_next (elector);
        shoal_elector_tick (elector, *now);
        CHECK_EQ (shoal_elector_check (elector, &why), 0);
    }
    CHECK_EQ (elector->role, S_LEADING);
    return elector;
}

static void
the_check_passes_on_real_states (void)
{
    uint64_t now = 1000;
    shoal_elector_t *elector = t_leader (&now);
    //  A leader of a higher term comes: this node follows it.
    shoal_msg_t msg = { .type = SHOAL_MSG_COORDINATOR };
    msg.u.coordinator = (shoal_coordinator_t){ .term = elector->term_seen + 5, .round = 1 };
    shoal_id_t higher = shoal_sample_index_id (12);
    CHECK_EQ (shoal_elector_member (elector, now, &higher, 7, true), 0);
    msg.u.coordinator.priority = 7;
    shoal_elector_receive (elector, now + 1, &higher, &msg);
    const char *why = "";
    CHECK_EQ (shoal_elector_check (elector, &why), 0);
    CHECK_EQ (elector->role, S_FOLLOWING);
    shoal_elector_retire (elector, now + 2);
    CHECK_EQ (shoal_elector_check (elector, &why), 0);
    shoal_elector_destroy (&elector);
}

static void
the_check_finds_broken_states (void)
{
    uint64_t now = 1000;
    shoal_elector_t *elector = t_leader (&now);
    const char *why = NULL;
    CHECK_EQ (shoal_elector_check (NULL, &why), -1);
    CHECK_CONTAINS (why, "NULL");

    //  Members out of order.
    s_member_t first = elector->members[0];
    elector->members[0] = elector->members[1];
    elector->members[1] = first;
    CHECK_EQ (shoal_elector_check (elector, &why), -1);
    CHECK_CONTAINS (why, "members not sorted");
    elector->members[1] = elector->members[0];
    elector->members[0] = first;
    CHECK_EQ (shoal_elector_check (elector, NULL), 0);

    //  A leader that promised another node.
    shoal_id_t promised = elector->promised;
    elector->promised = elector->members[0].id;
    CHECK_EQ (shoal_elector_check (elector, &why), -1);
    CHECK_CONTAINS (why, "leader without its own promise");
    elector->promised = promised;

    //  A term above the highest seen.
    elector->promised_term = elector->term_seen + 1;
    CHECK_EQ (shoal_elector_check (elector, &why), -1);
    CHECK_CONTAINS (why, "above the highest seen");
    elector->promised_term = elector->lead_term;

    //  Acting while following.
    elector->role = S_FOLLOWING;
    elector->acting = true;
    CHECK_EQ (shoal_elector_check (elector, &why), -1);
    CHECK_CONTAINS (why, "acting, but not leading");
    elector->role = S_LEADING;
    CHECK_EQ (shoal_elector_check (elector, &why), 0);
    shoal_elector_destroy (&elector);
}

int
main (void)
{
#ifdef SHOAL_NO_CHECKS
    puts ("skipped: SHOAL_NO_CHECKS compiles the checks out");
    return 77;
#endif
    RUN (the_check_passes_on_real_states);
    RUN (the_check_finds_broken_states);
    return TEST_DONE ();
}

/*  tests/test_check_membership.c: shoal_membership_check, on real states
    and on states broken by hand.

    The check reads the membership's own table, which no input can break
    unless the protocol has a bug; to show that it finds what it looks for,
    this test includes the source of gossip/membership.c and breaks a real
    state by hand, then mends it. The library's copy is not linked: this
    file defines every symbol of it.
*/

#include "../gossip/membership.c"
#include "tests/samples.h"
#include "tests/test.h"

#define T_PEERS 6

//  A node told of six peers by a SYNC-REPLY, then ticked for a while (it
//  probes them, suspects and declares dead those that never answer): real
//  states, checked after every input.
static shoal_membership_t *
t_node (uint64_t *now)
{
    shoal_membership_config_t config;
    shoal_membership_config_loopback (&config);
    shoal_id_t id = shoal_sample_index_id (0);
    shoal_meta_t meta = { .name = "self", .addr = "127.0.0.1:7000", .life = 1 };
    shoal_membership_t *core = shoal_membership_new (&config, &id, 1, &meta, 7, *now, NULL);
    CHECK (core != NULL);
    const char *why = "";
    CHECK_EQ (shoal_membership_check (core, &why), 0);
    static char addrs[T_PEERS][32];
    shoal_meta_t metas[T_PEERS];
    shoal_update_t updates[T_PEERS];
    for (int i = 0; i < T_PEERS; i++) {
        snprintf (addrs[i], sizeof addrs[i], "127.0.0.1:%d", 7001 + i);
        metas[i] = (shoal_meta_t){ .name = "peer", .addr = addrs[i], .life = 1 };
        updates[i] = (shoal_update_t){ .node = shoal_sample_index_id (i + 1),
                                       .incarnation = 1,
                                       .state = SHOAL_MEMBER_ALIVE,
                                       .meta = &metas[i] };
    }
    shoal_msg_t msg = { .type = SHOAL_MSG_SYNC_REPLY };
    msg.u.sync_reply.members = updates;
    msg.u.sync_reply.member_count = T_PEERS;
    msg.u.sync_reply.parts = SHOAL_SYNC_MEMBERS;
    shoal_envelope_t envelope = { .purpose = SHOAL_PURPOSE_FRAME };
    memcpy (envelope.sender.id, updates[0].node.bytes, SHOAL_ID_SIZE);
    envelope.sender.life = 1;
    memcpy (envelope.recipient.id, id.bytes, SHOAL_ID_SIZE);
    envelope.recipient.life = 1;
    CHECK_EQ (shoal_membership_receive (core, *now, &envelope, &msg, NULL), 0);
    CHECK_EQ (shoal_membership_check (core, &why), 0);
    for (int i = 0; i < 200; i++) {
        *now += 50;
        shoal_membership_tick (core, *now);
        CHECK_EQ (shoal_membership_check (core, &why), 0);
    }
    return core;
}

static void
the_check_passes_on_real_states (void)
{
    uint64_t now = 1000;
    shoal_membership_t *core = t_node (&now);
    CHECK_EQ (core->count, T_PEERS + 1);
    //  Nobody answered for 10 s: some are suspect or dead by now.
    CHECK (core->state_count[SHOAL_MEMBER_ALIVE] < T_PEERS + 1);
    shoal_membership_leave (core, now + 1);
    CHECK_EQ (shoal_membership_check (core, NULL), 0);
    shoal_membership_destroy (&core);
}

static void
the_check_finds_broken_states (void)
{
    uint64_t now = 1000;
    shoal_membership_t *core = t_node (&now);
    const char *why = NULL;
    CHECK_EQ (shoal_membership_check (NULL, &why), -1);
    CHECK_CONTAINS (why, "NULL");

    core->state_count[SHOAL_MEMBER_ALIVE]++;
    CHECK_EQ (shoal_membership_check (core, &why), -1);
    CHECK_CONTAINS (why, "count per state");
    core->state_count[SHOAL_MEMBER_ALIVE]--;

    //  The dense list, written out as at a first removal, names a slot twice.
    if (!core->dense)
        CHECK_EQ (s_dense_make (core), 0);
    uint32_t second = core->dense[1];
    core->dense[1] = core->dense[0];
    CHECK_EQ (shoal_membership_check (core, &why), -1);
    CHECK_CONTAINS (why, "twice");
    core->dense[1] = second;

    s_life_set (core, core->dense[1], s_life (core, core->dense[1]) + 1);
    CHECK_EQ (shoal_membership_check (core, &why), 0);
    core->lives[0].life--;
    CHECK_EQ (shoal_membership_check (core, &why), -1);
    CHECK_CONTAINS (why, "life noted");
    core->life_count = 0;

    s_member_t *member = &core->members[core->dense[1]];
    uint16_t suspicion = member->suspicion_16;
    member->suspicion_16 = (uint16_t) core->suspicion_count;
    CHECK_EQ (shoal_membership_check (core, &why), -1);
    CHECK_CONTAINS (why, "suspicion");
    member->suspicion_16 = suspicion;
    CHECK_EQ (shoal_membership_check (core, &why), 0);
    shoal_membership_destroy (&core);
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

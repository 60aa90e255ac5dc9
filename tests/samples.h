/*  tests/samples.h: one realistic message of every type.

    The unit tests, the fuzz corpus generator and the wire benchmark all need
    a message of each type that looks like what a running cluster sends:
    membership updates with metadata and labels, assignments with voters and
    placements, job specs with requirements and a command. They take them
    from here, so there is one set to keep in step with wire/wire.h.
*/
#ifndef SHOAL_SAMPLES_H
#define SHOAL_SAMPLES_H

#include "wire/wire.h"

//  Fills msg with the sample of type. The message points into static
//  storage owned by this module; it stays valid until the next call for the
//  same type. Returns 0, or -1 for an unknown type.
int shoal_sample_msg (int type, shoal_msg_t *msg);

//  What the sample of type holds, in words ("term 8, priority 5"), or NULL
//  for an unknown type.
const char *shoal_sample_describe (int type);

//  A node id made of one repeated byte, for readable tests.
shoal_id_t shoal_sample_id (uint8_t fill);

//  The id of the index-th node of a test's cluster: byte 0 is index + 1,
//  the rest zero, so id.bytes[0] - 1 gives the index back.
shoal_id_t shoal_sample_index_id (int index);

//  The answer to an SRV query for _shoal._udp.test (node/resolver.h): the
//  header (1 question, 2 answers); the question; an SRV record of 14 bytes,
//  a.test:7946 at priority 1; one of 10, b.test:7947 at priority 2, its
//  "test" a pointer into the question. The first record's length is the
//  byte at SHOAL_SAMPLE_SRV_LENGTH_AT.
#define SHOAL_SAMPLE_SRV_SIZE      82
#define SHOAL_SAMPLE_SRV_LENGTH_AT 45
extern const uint8_t shoal_sample_srv_answer[SHOAL_SAMPLE_SRV_SIZE];

#endif

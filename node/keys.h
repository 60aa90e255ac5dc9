/*  node/keys.h: live key rotation (`shoal keys`), run by the leader over
    every live member, and the keyring kept in the data directory
    (node/keys.c says how; docs/wire.md, section 3.4, why it is safe).
    Everything here runs on the actor's thread.
*/
#ifndef SHOAL_KEYS_H
#define SHOAL_KEYS_H

#include "node/node.h"

//  At start, once the data directory is open and before any socket uses
//  the keyring: a keyring kept by an earlier key operation replaces the
//  --key-file's (a notice says so when it no longer holds that key).
//  Returns 0 (also when there is none), or -1 with the reason when the
//  kept keyring cannot be read or trusted.
int shoal_keys_load (shoal_actor_t *self, char *why, size_t why_size);

//  A client's CONTROL-REQ KEYS, held under ref: answered once the leader
//  applied it cluster-wide (or refused it), or at once when it cannot be.
void shoal_keys_request (shoal_actor_t *self, uint64_t now, uint64_t ref,
                         const shoal_control_req_t *req);

//  A KEYS or KEYS-ACK from the links. True when in was one (the peer has
//  no part in them).
bool shoal_keys_message (shoal_actor_t *self, uint64_t now, const shoal_transport_in_t *in);

//  Ends the waits that are over; when the next ends (UINT64_MAX: none).
void shoal_keys_expire (shoal_actor_t *self, uint64_t now);
uint64_t shoal_keys_next (const shoal_actor_t *self);

void shoal_keys_free (shoal_actor_t *self);

#endif

/*  node/logs.h: `shoal logs TASK`: the last lines of a task's output, read
    from the file a member keeps of it (node/tasklog.h), through the node a
    client asks. Everything here runs on the actor's thread.
*/
#ifndef SHOAL_LOGS_H
#define SHOAL_LOGS_H

#include "node/node.h"

//  A client's CONTROL-REQ LOGS, held under ref: answered from this node's
//  file, or once the member it names answers (or does not in time).
void shoal_logs_request (shoal_actor_t *self, uint64_t now, uint64_t ref,
                         const shoal_control_req_t *req);

//  A LOGS or LOGS-REP from the links. True when in was one.
bool shoal_logs_message (shoal_actor_t *self, uint64_t now, const shoal_transport_in_t *in);

//  Ends the waits that are over; when the next ends (UINT64_MAX: none).
void shoal_logs_expire (shoal_actor_t *self, uint64_t now);
uint64_t shoal_logs_next (const shoal_actor_t *self);

void shoal_logs_free (shoal_actor_t *self);

#endif

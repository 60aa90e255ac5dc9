/*  worker/worker.h: `shoal worker`, a node of the cluster that runs each
    task it is given as a child process of its job's command.

    docs/worker.md is the user's view: how to run workers, what a child is
    told and may say, the options and the logs. worker/child.h runs one
    child; this module reads the options, runs the node's event loop, keeps
    the table of tasks, restarts children that exit, and logs.
*/
#ifndef SHOAL_WORKER_H
#define SHOAL_WORKER_H

//  Runs the worker with its arguments (those after "worker"). Returns the
//  exit status: 0 after a graceful leave (SIGTERM or SIGINT) and --help, 1
//  when the node could not start or the leave failed, 2 on a usage error.
int shoal_worker_main (int argc, char **argv);

#endif

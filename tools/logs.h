/*  tools/logs.h: `shoal logs TASK`, the last lines of a task's output. */
#ifndef SHOAL_TOOLS_LOGS_H
#define SHOAL_TOOLS_LOGS_H

//  Runs `shoal logs` with its arguments (after "logs"); the exit status.
int shoal_logs_main (int argc, char **argv);

#endif

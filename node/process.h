/*  node/process.h: what the process uses, as the standard process_*
    metrics of Prometheus' client libraries report it.

    Read from /proc (Linux only): where /proc cannot be read, a read
    fails, and the metrics leave the process_* families out.
*/
#ifndef SHOAL_PROCESS_H
#define SHOAL_PROCESS_H

#include <stdint.h>

typedef struct {
    double cpu_seconds;        //  user and system CPU time
    uint64_t resident_bytes;   //  resident set size
    uint64_t virtual_bytes;    //  virtual memory size
    uint64_t open_fds;         //  descriptors open now
    uint64_t max_fds;          //  the soft limit on descriptors
    double start_time_seconds; //  since the Unix epoch
} shoal_process_t;

//  Fills process with this process's figures. Returns 0, or -1 when /proc
//  cannot be read or says something this does not understand.
int shoal_process_read (shoal_process_t *process);

#endif

/*  node/process.c: the process's figures, from /proc/self. */

#include "node/process.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

//  Reads /proc/self/stat: its fields 14 and 15 (utime, stime, in clock
//  ticks), 22 (starttime, ticks after boot), 23 (vsize, bytes) and 24
//  (rss, pages). The second field, the command's name, may hold spaces and
//  parentheses: the fields are counted from the last ')'.
static int
s_stat (shoal_process_t *process, double ticks, double *start_ticks)
{
    char line[1024];
    FILE *file = fopen ("/proc/self/stat", "r");
    if (!file)
        return -1;
    size_t size = fread (line, 1, sizeof line - 1, file);
    fclose (file);
    line[size] = 0;
    char *at = strrchr (line, ')');
    if (!at)
        return -1;
    unsigned long long utime, stime, start, vsize;
    long long rss;
    //  From field 3 (state) on; %*s skips one field.
    if (sscanf (at + 1,
                " %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu %llu %*s %*s %*s %*s %*s %*s "
                "%llu %llu %lld",
                &utime, &stime, &start, &vsize, &rss) != 5)
        return -1;
    long page = sysconf (_SC_PAGESIZE);
    process->cpu_seconds = (double) (utime + stime) / ticks;
    process->virtual_bytes = vsize;
    process->resident_bytes = rss > 0 && page > 0 ? (uint64_t) rss * (uint64_t) page : 0;
    *start_ticks = (double) start;
    return 0;
}

//  The boot time, in seconds since the Unix epoch (/proc/stat's btime).
static int
s_boot_time (double *seconds)
{
    FILE *file = fopen ("/proc/stat", "r");
    if (!file)
        return -1;
    char line[256];
    int rc = -1;
    unsigned long long btime;
    while (rc != 0 && fgets (line, sizeof line, file))
        if (sscanf (line, "btime %llu", &btime) == 1)
            rc = 0;
    fclose (file);
    if (rc == 0)
        *seconds = (double) btime;
    return rc;
}

//  Descriptors open now: the entries of /proc/self/fd, less the one this
//  count opens to read it.
static int
s_open_fds (uint64_t *count)
{
    DIR *dir = opendir ("/proc/self/fd");
    if (!dir)
        return -1;
    uint64_t entries = 0;
    for (struct dirent *entry = readdir (dir); entry; entry = readdir (dir))
        entries += entry->d_name[0] != '.';
    closedir (dir);
    *count = entries ? entries - 1 : 0;
    return 0;
}

int
shoal_process_read (shoal_process_t *process)
{
    long ticks = sysconf (_SC_CLK_TCK);
    double start_ticks, boot;
    struct rlimit limit;
    if (ticks <= 0 || s_stat (process, (double) ticks, &start_ticks) != 0 ||
        s_boot_time (&boot) != 0 || s_open_fds (&process->open_fds) != 0 ||
        getrlimit (RLIMIT_NOFILE, &limit) != 0)
        return -1;
    process->start_time_seconds = boot + start_ticks / (double) ticks;
    process->max_fds = limit.rlim_cur == RLIM_INFINITY ? UINT64_MAX : (uint64_t) limit.rlim_cur;
    return 0;
}

/*  node/why.h: the one-line reasons the shell's functions fail with.

    Every function of node/ that can fail takes a buffer for a reason, and
    fills it with one line that names what was wrong; it never prints.
*/
#ifndef SHOAL_WHY_H
#define SHOAL_WHY_H

#include <stddef.h>

//  Writes the reason, formatted as printf would, into why (truncated to
//  why_size bytes; nothing when why is NULL or why_size 0). Returns -1, so
//  that a failing function can end with return shoal_why (...).
int shoal_why (char *why, size_t why_size, const char *format, ...)
    __attribute__ ((format (printf, 3, 4)));

#endif

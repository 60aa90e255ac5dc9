/*  node/why.c: one-line reasons. */

#include "node/why.h"

#include <stdarg.h>
#include <stdio.h>

int
shoal_why (char *why, size_t why_size, const char *format, ...)
{
    if (why && why_size) {
        va_list args;
        va_start (args, format);
        vsnprintf (why, why_size, format, args);
        va_end (args);
    }
    return -1;
}

/*  wire/check.h: what the cores' invariant checks (shoal_<core>_check)
    share: a broken invariant is -1, with why in *reason when it is asked
    for. Pure, like the cores.
*/
#ifndef SHOAL_CHECK_H
#define SHOAL_CHECK_H

#include <stddef.h>

static inline int
shoal_check_broken (const char **reason, const char *why)
{
    if (reason)
        *reason = why;
    return -1;
}

#endif

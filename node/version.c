/*  node/version.c: the library's version, as built. */

#include "shoal.h"

#define S_STRING(x)        #x
#define S_VERSION(a, b, c) S_STRING (a) "." S_STRING (b) "." S_STRING (c)

const char *
shoal_version (void)
{
    return S_VERSION (SHOAL_VERSION_MAJOR, SHOAL_VERSION_MINOR, SHOAL_VERSION_PATCH);
}

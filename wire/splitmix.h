/*  wire/splitmix.h: seeded random numbers, the same on every machine.

    splitmix64 (Steele, Lea and Flood): one 64-bit state, a good spread,
    and the same sequence for the same seed on every machine, so a run of
    a core, the simulator, a test or a benchmark replays from its seed.
    Never for keys or nonces: those come from libsodium.
*/
#ifndef SHOAL_SPLITMIX_H
#define SHOAL_SPLITMIX_H

#include <stdint.h>

static inline uint64_t
splitmix_next (uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

#endif

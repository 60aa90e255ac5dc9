/*  wire/arena.h: a bump allocator with a hard cap.

    Every decode writes into an arena that the caller created once, so the
    memory one untrusted message can take is bounded by construction: when the
    arena is full, the decode fails; it never grows, never calls malloc.
*/
#ifndef SHOAL_ARENA_H
#define SHOAL_ARENA_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint8_t *base;
    size_t size;
    size_t used;
} shoal_arena_t;

//  Allocates the arena's memory once. Returns 0, or -1 when malloc fails.
int shoal_arena_init (shoal_arena_t *self, size_t size);

//  Frees the arena's memory. Idempotent.
void shoal_arena_release (shoal_arena_t *self);

//  Forgets every allocation, keeping the memory.
void shoal_arena_reset (shoal_arena_t *self);

//  Returns size bytes aligned for any scalar, or NULL when the arena is full.
void *shoal_arena_alloc (shoal_arena_t *self, size_t size);

//  Copies size bytes of text and a NUL, unaligned (text needs no alignment,
//  and short strings would otherwise cost 16 bytes each). NULL when full.
char *shoal_arena_strndup (shoal_arena_t *self, const void *text, size_t size);

#endif

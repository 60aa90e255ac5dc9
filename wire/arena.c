/*  wire/arena.c: a bump allocator with a hard cap. */

#include "wire/arena.h"

#include <stdlib.h>
#include <string.h>

int
shoal_arena_init (shoal_arena_t *self, size_t size)
{
    self->base = malloc (size ? size : 1);
    self->size = self->base ? size : 0;
    self->used = 0;
    return self->base ? 0 : -1;
}

void
shoal_arena_release (shoal_arena_t *self)
{
    free (self->base);
    self->base = NULL;
    self->size = 0;
    self->used = 0;
}

void
shoal_arena_reset (shoal_arena_t *self)
{
    self->used = 0;
}

void *
shoal_arena_alloc (shoal_arena_t *self, size_t size)
{
    const size_t align = _Alignof(max_align_t);
    size_t start = (self->used + align - 1) & ~(align - 1);
    if (start > self->size || size > self->size - start)
        return NULL;
    self->used = start + size;
    return self->base + start;
}

char *
shoal_arena_strndup (shoal_arena_t *self, const void *text, size_t size)
{
    if (size >= self->size - self->used)
        return NULL;
    char *copy = (char *) self->base + self->used;
    memcpy (copy, text, size);
    copy[size] = '\0';
    self->used += size + 1;
    return copy;
}

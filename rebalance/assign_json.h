/*  rebalance/assign_json.h: the assignor's input and output as JSON.

    `shoal assign` reads a cluster description as JSON and writes the next
    assignment as JSON; this layer turns the one into the assignor's structs
    and the other back into text, so that the command stays a thin wrapper
    around the same function the leader runs. It is pure: text in, structs
    out, no file I/O. The format, its defaults and its limits are
    docs/assign.md.

    Parsing trusts nothing. It refuses, with a one-line reason that names the
    offending field ("nodes[3].capacity: must be a positive integer, at most
    4294967295"), anything the format does not allow: invalid JSON or UTF-8,
    a key given twice in one object, an unknown key (a typo is never silently
    ignored), a wrong type, a value out of range, a node or task id given
    twice, and input beyond the limits below. jansson parses the text; it
    stops at a nesting depth of 2048, so no input exhausts the stack.
*/
#ifndef SHOAL_ASSIGN_JSON_H
#define SHOAL_ASSIGN_JSON_H

#include "rebalance/assignor.h"

#include <stddef.h>

//  Limits of the input.
#define SHOAL_ASSIGN_JSON_SIZE_MAX   (64u << 20) //  bytes of text
#define SHOAL_ASSIGN_JSON_NODES_MAX  100000
#define SHOAL_ASSIGN_JSON_TASKS_MAX  1000000
#define SHOAL_ASSIGN_JSON_STRING_MAX 256 //  bytes in any string or key

//  A parsed cluster description: the assignor's input, and the memory its
//  strings and arrays point into.
typedef struct _shoal_assign_json_t shoal_assign_json_t;

//  Parses size bytes of text (no terminating NUL needed). Returns 0 and sets
//  *result, or -1 with a one-line reason in why (truncated to why_size).
int shoal_assign_json_parse (const char *text, size_t size, shoal_assign_json_t **result, char *why,
                             size_t why_size);

//  The assignor's input; valid until the parsed description is destroyed.
const shoal_assign_input_t *shoal_assign_json_input (const shoal_assign_json_t *self);

//  Frees a parsed description; nulls the pointer. Idempotent.
void shoal_assign_json_destroy (shoal_assign_json_t **self_p);

//  The output as JSON text (indented, no trailing newline), to free with
//  free (); NULL when out of memory. Every node of the input is listed, with
//  empty lists where it holds nothing; nodes and the keys of each object
//  come in a fixed order, so equal outputs render as equal text.
char *shoal_assign_json_render (const shoal_assign_input_t *input,
                                const shoal_assign_output_t *output);

#endif

/*  tests/fuzz/fuzz_reader.c: the bounded reader against msgpack-c.

    The input is walked as one msgpack value with the reader's functions,
    dispatching on each header byte as the msgpack specification assigns it.
    Whenever the reader accepts a whole value made only of the types it
    reads (nil, bool, non-negative integers, str, bin, array, map),
    msgpack-c's msgpack_unpack must accept the same bytes, consume as many
    of them and yield the same tree. Whenever the reader finds a supported
    value truncated, msgpack_unpack must not accept it either. Each header
    byte must also be refused by every reader function of another type.

    Negative integers, floats and extensions are outside the reader's
    subset: the walk stops there and nothing is compared. So it does at
    nesting deeper than msgpack-c's parse stack (MSGPACK_EMBED_STACK_SIZE in
    its source, 32), which msgpack-c refuses and the reader need not. Only
    inputs the reader has checked reach msgpack_unpack, which reserves
    memory for a container as soon as it reads a count; with inputs of at
    most INPUT_MAX bytes, that stays small.
*/

#include "tests/fuzz/fuzz.h"

#include "wire/reader.h"

#include <msgpack.h>
#include <string.h>

#define INPUT_MAX 4096
#define DEPTH_MAX 32

typedef enum {
    V_NIL,
    V_BOOL,
    V_UINT,
    V_STR,
    V_BIN,
    V_ARRAY,
    V_MAP,
    V_KIND_COUNT,
    V_OTHER = V_KIND_COUNT, //  a type outside the reader's subset
} s_kind_t;

//  One value the walk met, in the order met (containers before their items).
typedef struct {
    s_kind_t kind;
    uint64_t value; //  bool or integer value; str or bin size; item or pair count
    const uint8_t *data;
} s_event_t;

typedef enum {
    WALK_ACCEPTED,  //  one whole value of supported types
    WALK_OUTSIDE,   //  stopped at an unsupported type or nesting
    WALK_TRUNCATED, //  the reader found the value cut short
    WALK_REFUSED,   //  the reader refused a count no input of this size can hold
} s_walk_t;

//  What the specification says a header byte starts.
static s_kind_t
s_kind_of (uint8_t tag)
{
    if (tag <= 0x7f || (tag >= 0xcc && tag <= 0xd3))
        return V_UINT; //  a signed encoding may hold a non-negative value
    if (tag <= 0x8f || tag == 0xde || tag == 0xdf)
        return V_MAP;
    if (tag <= 0x9f || tag == 0xdc || tag == 0xdd)
        return V_ARRAY;
    if (tag <= 0xbf || (tag >= 0xd9 && tag <= 0xdb))
        return V_STR;
    if (tag >= 0xc4 && tag <= 0xc6)
        return V_BIN;
    if (tag == 0xc0)
        return V_NIL;
    if (tag == 0xc2 || tag == 0xc3)
        return V_BOOL;
    return V_OTHER;
}

//  Reads one value of kind; for containers, value is the count.
static int
s_read (shoal_reader_t *reader, s_kind_t kind, s_event_t *event)
{
    uint32_t count = 0;
    int rc = -1;
    event->kind = kind;
    event->data = NULL;
    event->value = 0;
    switch (kind) {
    case V_NIL:
        rc = shoal_reader_nil (reader) == 1 ? 0 : -1;
        break;
    case V_BOOL: {
        bool value = false;
        rc = shoal_reader_bool (reader, &value);
        event->value = value;
        break;
    }
    case V_UINT:
        rc = shoal_reader_uint (reader, &event->value);
        break;
    case V_STR:
    case V_BIN:
        rc = kind == V_STR ? shoal_reader_str (reader, &event->data, &count)
                           : shoal_reader_bin (reader, &event->data, &count);
        event->value = count;
        break;
    case V_ARRAY:
    case V_MAP:
        rc = kind == V_ARRAY ? shoal_reader_array (reader, &count)
                             : shoal_reader_map (reader, &count);
        event->value = count;
        break;
    case V_OTHER:
        break;
    }
    return rc;
}

//  No reader function but the one for the header's own type may accept it.
static void
s_check_others_refuse (const shoal_reader_t *reader, s_kind_t kind)
{
    for (s_kind_t other = 0; other < V_KIND_COUNT; other++) {
        if (other == kind)
            continue;
        shoal_reader_t probe = *reader;
        s_event_t event;
        FUZZ_REQUIRE (s_read (&probe, other, &event) == -1,
                      "header 0x%02x (kind %d) was read as kind %d", *reader->pos, kind, other);
    }
}

static s_walk_t
s_walk (const uint8_t *data, size_t size, s_event_t *events, size_t *event_count, size_t *consumed)
{
    shoal_reader_t reader;
    shoal_reader_init (&reader, data, size);
    //  pending[d] is how many items the d-th open container still owes;
    //  pending[0] is the top level, which owes one value.
    uint64_t pending[DEPTH_MAX + 1] = { 1 };
    int depth = 0;
    *event_count = 0;
    while (true) {
        while (depth > 0 && pending[depth] == 0)
            depth--;
        if (pending[depth] == 0)
            break;
        pending[depth]--;
        if (shoal_reader_left (&reader) == 0)
            return WALK_TRUNCATED;

        s_kind_t kind = s_kind_of (*reader.pos);
        s_check_others_refuse (&reader, kind);
        if (kind == V_OTHER)
            return WALK_OUTSIDE;
        if ((kind == V_ARRAY || kind == V_MAP) && depth == DEPTH_MAX)
            return WALK_OUTSIDE;
        s_event_t *event = &events[(*event_count)++];
        if (s_read (&reader, kind, event)) {
            FUZZ_REQUIRE (reader.why, "a refusal without a reason");
            if (strcmp (reader.why, "negative integer") == 0)
                return WALK_OUTSIDE;
            if (strcmp (reader.why, "truncated") == 0)
                return WALK_TRUNCATED;
            FUZZ_REQUIRE (strcmp (reader.why, "count exceeds the bytes left") == 0,
                          "kind %d refused: %s", kind, reader.why);
            return WALK_REFUSED;
        }
        if ((kind == V_ARRAY || kind == V_MAP) && event->value > 0)
            pending[++depth] = kind == V_MAP ? 2 * event->value : event->value;
    }
    *consumed = size - shoal_reader_left (&reader);
    return WALK_ACCEPTED;
}

//  Empty strings and binaries may have no pointer at all.
static bool
s_same (const void *a, const void *b, uint64_t size)
{
    return size == 0 || memcmp (a, b, size) == 0;
}

//  Compares msgpack-c's tree with the walk, in the walk's order.
static void
s_compare (const msgpack_object *object, const s_event_t *events, size_t event_count, size_t *next)
{
    FUZZ_REQUIRE (*next < event_count, "msgpack-c has more values than the reader (%zu)",
                  event_count);
    const s_event_t *event = &events[(*next)++];
    size_t at = *next - 1;
    switch (event->kind) {
    case V_NIL:
        FUZZ_REQUIRE (object->type == MSGPACK_OBJECT_NIL, "value %zu: nil, msgpack-c type %d", at,
                      object->type);
        return;
    case V_BOOL:
        FUZZ_REQUIRE (
            object->type == MSGPACK_OBJECT_BOOLEAN && object->via.boolean == (event->value != 0),
            "value %zu: bool %d, msgpack-c type %d", at, (int) event->value, object->type);
        return;
    case V_UINT:
        FUZZ_REQUIRE (object->type == MSGPACK_OBJECT_POSITIVE_INTEGER &&
                          object->via.u64 == event->value,
                      "value %zu: %llu, msgpack-c type %d", at, (unsigned long long) event->value,
                      object->type);
        return;
    case V_STR:
        FUZZ_REQUIRE (object->type == MSGPACK_OBJECT_STR && object->via.str.size == event->value &&
                          s_same (object->via.str.ptr, event->data, event->value),
                      "value %zu: str of %llu bytes, msgpack-c type %d", at,
                      (unsigned long long) event->value, object->type);
        return;
    case V_BIN:
        FUZZ_REQUIRE (object->type == MSGPACK_OBJECT_BIN && object->via.bin.size == event->value &&
                          s_same (object->via.bin.ptr, event->data, event->value),
                      "value %zu: bin of %llu bytes, msgpack-c type %d", at,
                      (unsigned long long) event->value, object->type);
        return;
    case V_ARRAY:
        FUZZ_REQUIRE (object->type == MSGPACK_OBJECT_ARRAY &&
                          object->via.array.size == event->value,
                      "value %zu: array of %llu, msgpack-c type %d", at,
                      (unsigned long long) event->value, object->type);
        for (uint32_t i = 0; i < object->via.array.size; i++)
            s_compare (&object->via.array.ptr[i], events, event_count, next);
        return;
    case V_MAP:
        FUZZ_REQUIRE (object->type == MSGPACK_OBJECT_MAP && object->via.map.size == event->value,
                      "value %zu: map of %llu, msgpack-c type %d", at,
                      (unsigned long long) event->value, object->type);
        for (uint32_t i = 0; i < object->via.map.size; i++) {
            s_compare (&object->via.map.ptr[i].key, events, event_count, next);
            s_compare (&object->via.map.ptr[i].val, events, event_count, next);
        }
        return;
    case V_OTHER:
        break;
    }
    FUZZ_REQUIRE (false, "value %zu: kind %d in an accepted walk", at, event->kind);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    static s_event_t events[INPUT_MAX];
    if (size > INPUT_MAX)
        return 0;
    size_t event_count, consumed = 0;
    s_walk_t walk = s_walk (data, size, events, &event_count, &consumed);
    if (walk != WALK_ACCEPTED && walk != WALK_TRUNCATED)
        return 0;

    msgpack_zone zone;
    FUZZ_REQUIRE (msgpack_zone_init (&zone, 1024), "no memory for a zone");
    msgpack_object object;
    size_t offset = 0;
    msgpack_unpack_return rc = msgpack_unpack ((const char *) data, size, &offset, &zone, &object);
    if (walk == WALK_TRUNCATED)
        FUZZ_REQUIRE (rc != MSGPACK_UNPACK_SUCCESS && rc != MSGPACK_UNPACK_EXTRA_BYTES,
                      "the reader found %zu bytes truncated, msgpack-c read %zu of them", size,
                      offset);
    else {
        FUZZ_REQUIRE (rc == MSGPACK_UNPACK_SUCCESS || rc == MSGPACK_UNPACK_EXTRA_BYTES,
                      "the reader accepted %zu bytes, msgpack-c returned %d", consumed, rc);
        FUZZ_REQUIRE (offset == consumed, "the reader consumed %zu bytes, msgpack-c %zu", consumed,
                      offset);
        size_t next = 0;
        s_compare (&object, events, event_count, &next);
        FUZZ_REQUIRE (next == event_count, "the reader met %zu values, msgpack-c %zu", event_count,
                      next);
    }
    msgpack_zone_destroy (&zone);
    return 0;
}

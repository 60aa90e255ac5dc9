/*  shoal.h: the public C API of libshoal.

    shoal is a peer-to-peer worker runtime: workers find each other by UDP
    beacons or seed addresses, keep a shared view of who is alive by gossip,
    elect one leader, and the leader hands out tasks incrementally.

    This is the only header an embedder includes. Every function returns 0 on
    success and -1 on failure unless it says otherwise; the library never
    prints and never exits. Functions here are thread-safe unless noted.

    This version of the API holds what the foundation provides: the library's
    version and cluster keys. The node API (create a node, jobs, tasks,
    members) is added by the node runtime; see the README's status table.
*/
#ifndef SHOAL_H
#define SHOAL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define SHOAL_EXPORT __attribute__ ((visibility ("default")))
#else
#define SHOAL_EXPORT
#endif

#define SHOAL_VERSION_MAJOR 0
#define SHOAL_VERSION_MINOR 1
#define SHOAL_VERSION_PATCH 0

//  The library's version as "MAJOR.MINOR.PATCH". It may differ from the
//  header's SHOAL_VERSION_* when the program runs against a newer library.
SHOAL_EXPORT const char *shoal_version (void);

//  ---------------------------------------------------------------------
//  Cluster keys
//
//  A cluster key is 32 random bytes. Every node of a cluster holds it; it
//  seals every beacon, datagram and frame. Its text form is standard base64
//  (44 characters), as `shoal keygen` prints it.

#define SHOAL_KEY_BYTES      32
#define SHOAL_KEY_TEXT_BYTES 45 //  44 characters and a NUL

//  Fills key with 32 bytes from the operating system's secure random source.
SHOAL_EXPORT int shoal_key_generate (uint8_t key[SHOAL_KEY_BYTES]);

//  Writes the text form of key into text (at least SHOAL_KEY_TEXT_BYTES).
SHOAL_EXPORT int shoal_key_format (const uint8_t key[SHOAL_KEY_BYTES],
                                   char text[SHOAL_KEY_TEXT_BYTES]);

//  Parses a key's text form. Leading and trailing whitespace (a key file's
//  newline) is ignored; anything else that is not exactly one base64 key is
//  refused with -1, and key is then left zeroed.
SHOAL_EXPORT int shoal_key_parse (const char *text, uint8_t key[SHOAL_KEY_BYTES]);

#ifdef __cplusplus
}
#endif

#endif

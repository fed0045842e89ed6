/* version.h - library version and stream format version (separate numbers). */
#ifndef MANS_VERSION_H
#define MANS_VERSION_H

#define MANS_VERSION_MAJOR 0
#define MANS_VERSION_MINOR 1
#define MANS_VERSION_PATCH 0
#define MANS_VERSION_STRING "0.1.0"

/* Stream format version written by this library (docs/FORMAT.md). A decoder
 * accepts every version from 1 up to this one. */
#define MANS_FORMAT_VERSION 1

#endif /* MANS_VERSION_H */

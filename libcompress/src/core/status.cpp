// status.cpp - names and messages of the pinned status codes.
#include "mans/mans.h"

namespace {
struct StatusText {
    mans_status code;
    const char* name;
    const char* message;
};

constexpr StatusText kStatusTable[] = {
    {MANS_OK, "MANS_OK", "success"},
    {MANS_ERR_INVALID_ARGUMENT, "MANS_ERR_INVALID_ARGUMENT", "invalid argument"},
    {MANS_ERR_UNSUPPORTED_DTYPE, "MANS_ERR_UNSUPPORTED_DTYPE", "unsupported element type"},
    {MANS_ERR_DST_TOO_SMALL, "MANS_ERR_DST_TOO_SMALL", "destination buffer too small"},
    {MANS_ERR_SIZE_NOT_MULTIPLE, "MANS_ERR_SIZE_NOT_MULTIPLE",
     "input size is not a multiple of the element size"},
    {MANS_ERR_BACKEND_UNAVAILABLE, "MANS_ERR_BACKEND_UNAVAILABLE",
     "requested backend is not available on this machine"},
    {MANS_ERR_TARGET_UNREACHABLE, "MANS_ERR_TARGET_UNREACHABLE",
     "requested error bound is tighter than the archive was compressed for"},
    {MANS_ERR_BAD_MAGIC, "MANS_ERR_BAD_MAGIC", "not a mans stream (bad magic number)"},
    {MANS_ERR_UNSUPPORTED_VERSION, "MANS_ERR_UNSUPPORTED_VERSION",
     "stream format version not supported by this library"},
    {MANS_ERR_TRUNCATED, "MANS_ERR_TRUNCATED", "stream is truncated"},
    {MANS_ERR_CORRUPT_HEADER, "MANS_ERR_CORRUPT_HEADER", "stream header or block index is corrupt"},
    {MANS_ERR_HEADER_CHECKSUM, "MANS_ERR_HEADER_CHECKSUM", "header checksum mismatch"},
    {MANS_ERR_CORRUPT_BLOCK, "MANS_ERR_CORRUPT_BLOCK", "compressed block is corrupt"},
    {MANS_ERR_CONTENT_CHECKSUM, "MANS_ERR_CONTENT_CHECKSUM",
     "decoded data does not match its checksum"},
    {MANS_ERR_TRAILING_BYTES, "MANS_ERR_TRAILING_BYTES", "unexpected bytes after the end of the stream"},
    {MANS_ERR_OUT_OF_MEMORY, "MANS_ERR_OUT_OF_MEMORY", "out of memory"},
    {MANS_ERR_IO, "MANS_ERR_IO", "reading the archive source failed"},
    {MANS_ERR_INTERNAL, "MANS_ERR_INTERNAL", "internal error"},
};

const StatusText* find_status(mans_status s) {
    for (const auto& e : kStatusTable)
        if (e.code == s) return &e;
    return nullptr;
}
}  // namespace

extern "C" const char* mans_status_name(mans_status status) {
    const StatusText* e = find_status(status);
    return e ? e->name : "MANS_ERR_UNKNOWN";
}

extern "C" const char* mans_status_message(mans_status status) {
    const StatusText* e = find_status(status);
    return e ? e->message : "unknown status code";
}

// c_params.hpp - the C API's PRISM objects and parameters (prism.h) as the
// C++ API's, for the C entries: prism/c_api.cpp and the device-memory API's
// mans_device_prism_compress and mans_device_prism_retrieve (device_api.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "mans/prism.h"
#include "mans/prism.hpp"

struct mans_prism_reader {
    mans::prism::Reader reader;
};
struct mans_prism_result {
    mans::prism::Retrieval retrieval;
};

namespace mans::detail::prism {

// The target of a C call; false for an unknown kind or a negative budget.
bool to_target(mans_prism_target kind, double value, mans::prism::Target* t);

// The int a C caller stored in an enum field. A C enum object may hold any
// int; in C++, loading one outside the enumerators' range is undefined (and
// UBSan's enum check stops there), so the bits are copied, not loaded.
template <class CEnum>
int c_enum_value(const CEnum& e) {
    static_assert(sizeof(CEnum) == sizeof(int), "C enums are int-sized on the supported ABIs");
    int v;
    std::memcpy(&v, &e, sizeof v);
    return v;
}

// A C enum's value as the C++ API's one-byte enum: values that do not fit
// become 0, which no PRISM type, mode or plane coding uses, so that 264 is
// refused rather than read as 8 (f32).
inline std::uint8_t c_enum_byte(int v) { return v >= 1 && v <= 255 ? static_cast<std::uint8_t>(v) : 0; }

// A mans_backend this library knows.
inline bool valid_backend(int b) { return b >= MANS_BACKEND_AUTO && b <= MANS_BACKEND_HIP; }

// p has been checked for null (and fill_values for null with a count).
mans::prism::CompressConfig config_from_params(const mans_prism_params& p);

// The archive in a buffer of malloc (released by mans_prism_free) at
// *archive, its size at *archive_size; MANS_ERR_OUT_OF_MEMORY when none.
mans_status hand_out_archive(const std::vector<std::uint8_t>& out, void** archive, size_t* archive_size);

}  // namespace mans::detail::prism

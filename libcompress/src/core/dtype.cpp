// dtype.cpp - element type table.
#include <cstring>

#include "mans/mans.hpp"

namespace mans {
namespace {
struct DTypeInfo {
    DType type;
    std::size_t size;
    const char* name;
    const char* long_name;
};
constexpr DTypeInfo kDTypes[] = {
    {DType::u8, 1, "u8", "uint8"},    {DType::u16, 2, "u16", "uint16"},
    {DType::u32, 4, "u32", "uint32"}, {DType::u64, 8, "u64", "uint64"},
    {DType::i16, 2, "i16", "int16"},  {DType::i32, 4, "i32", "int32"},
    {DType::i64, 8, "i64", "int64"},
};
const DTypeInfo* find_dtype(DType t) {
    for (const auto& d : kDTypes)
        if (d.type == t) return &d;
    return nullptr;
}
}  // namespace

std::size_t dtype_size(DType t) noexcept {
    const DTypeInfo* d = find_dtype(t);
    return d ? d->size : 0;
}

const char* dtype_name(DType t) noexcept {
    const DTypeInfo* d = find_dtype(t);
    return d ? d->name : nullptr;
}

bool parse_dtype(const char* text, DType* out) noexcept {
    if (!text || !out) return false;
    for (const auto& d : kDTypes) {
        if (std::strcmp(text, d.name) == 0 || std::strcmp(text, d.long_name) == 0) {
            *out = d.type;
            return true;
        }
    }
    return false;
}

}  // namespace mans

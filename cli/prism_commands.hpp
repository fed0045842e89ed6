// prism_commands.hpp - the lossy (PRISM) side of compress, decompress and info.
// commands.cpp dispatches here: compress for f32/f64 or an error bound,
// decompress and info when the input is a PRISM archive.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "commands.hpp"

namespace mans_cli {

// f32 f64 float32 float64 float double (any case).
bool is_float_dtype(const std::string& name);

int run_prism_compress(const CompressOptions& o);
// in_memory: the whole archive when it was read already (stdin); nullptr to
// read only the needed ranges of the file o.input.
int run_prism_decompress(const DecompressOptions& o, const std::vector<std::uint8_t>* in_memory);
int run_prism_info(const InfoOptions& o, const std::vector<std::uint8_t>* in_memory);

}  // namespace mans_cli

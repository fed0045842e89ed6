// sz_args.hpp - SZ-style options for scripts written for SZ/SZ3.
//
// Before the argument parser runs, `compress` and `decompress` options in SZ
// style are rewritten into mans options:
//
//   -f / -d                      -> --dtype=f32 / --dtype=f64      (compress)
//   -1 nx | -2 nx ny | -3 nx ny nz | -4 nx ny nz nw
//                                -> --dims=...  (SZ lists the FASTEST dimension
//                                   first, --dims the slowest: -3 192 96 17 is
//                                   --dims 17x96x192)                (compress)
//   -M ABS -A eb                 -> --error-bound=eb
//   -M REL -R eb                 -> --error-bound=eb --rel
//   -A eb (alone), -R eb (alone) -> as with -M ABS / -M REL
//
// The values of mans options are skipped, so `--fill -1` or `-o -3` stay as they
// are. Inconsistent SZ options throw CliError(kExitUsage).
#pragma once

#include <string>
#include <vector>

namespace mans_cli {

// args[0] is the program name; returns the rewritten list.
std::vector<std::string> translate_sz_args(const std::vector<std::string>& args);

}  // namespace mans_cli

// h5_args.cpp - see h5_args.hpp. The cd_values layout is the filter's own
// header (mans/h5_params.h), so the CLI needs no HDF5.
#include "h5_args.hpp"

#include <cstdio>

#include "commands.hpp"
#include "mans/h5_params.h"

namespace mans_cli {

int run_h5_args(const H5ArgsOptions& o) {
    if (o.lossless && !o.error_bound.empty())
        throw CliError(kExitUsage, "--lossless and --error-bound exclude each other");
    const mans_h5_mode mode = o.error_bound.empty() ? MANS_H5_LOSSLESS : o.rel ? MANS_H5_REL : MANS_H5_ABS;
    const double bound = o.error_bound.empty() ? 0.0 : parse_bound(o.error_bound, "--error-bound");
    unsigned int cd[MANS_H5_USER_NVALUES];
    const unsigned int n = mans_h5_user_cd_values(mode, bound, cd);
    std::string arg = o.dataset.empty() ? "" : o.dataset + ":";
    arg += "UD=" + std::to_string(MANS_H5_FILTER_ID) + "," + (o.optional ? "1" : "0") + "," + std::to_string(n);
    for (unsigned int i = 0; i < n; ++i) arg += "," + std::to_string(cd[i]);
    std::printf("%s\n", arg.c_str());
    return std::fflush(stdout) == 0 ? kExitOk : kExitIo;
}

}  // namespace mans_cli

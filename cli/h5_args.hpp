// h5_args.hpp - `mans h5-args`: the filter argument that h5repack -f takes
// for the mans HDF5 filter (formats/hdf5), so nobody packs doubles by hand.
#pragma once

#include <string>

namespace mans_cli {

struct H5ArgsOptions {
    bool lossless = false;
    std::string error_bound;  // PRISM bound for float datasets; empty = lossless
    bool rel = false;
    bool optional = false;    // filter flag 1: HDF5 skips the filter where it cannot apply
    std::string dataset;      // prefix "NAME:" (h5repack's per-object form)
};

// Prints e.g. "UD=36731,0,4,1,1,3539053052,1062232653" and a newline.
int run_h5_args(const H5ArgsOptions& o);

}  // namespace mans_cli

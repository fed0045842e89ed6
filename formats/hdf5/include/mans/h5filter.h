/*
 * mans/h5filter.h - the mans HDF5 filter for programs that link it
 * (libmans_hdf5) instead of loading it as a plugin. Both codecs behind one
 * filter ID: integer datasets go to MANS (lossless), float and double
 * datasets to PRISM (error-bounded) or, in lossless mode, to MANS over their
 * bit patterns. Guide: formats/hdf5/README.md; cd_values: docs/FORMAT.md
 * section 5.
 *
 * Every function returns a negative value on failure with an HDF5 error
 * pushed on the default stack (H5Eprint2 shows it).
 */
#ifndef MANS_H5FILTER_H
#define MANS_H5FILTER_H

#include <hdf5.h>

#include "mans/h5_params.h"

/* Exported from libmans_hdf5; the plugin builds with MANS_H5_API defined
 * empty, so that it exports only HDF5's two entry points. */
#ifndef MANS_H5_API
#if defined(__GNUC__)
#define MANS_H5_API __attribute__((visibility("default")))
#else
#define MANS_H5_API
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Registers the filter with the HDF5 library this program uses. Needed only
 * when the plugin is not found through HDF5_PLUGIN_PATH; calling it twice is
 * fine. */
MANS_H5_API herr_t mans_h5_register(void);

/* Adds the filter (mandatory) to a dataset creation property list that has
 * a chunked layout. */
MANS_H5_API herr_t mans_h5_set_lossless(hid_t dcpl);
MANS_H5_API herr_t mans_h5_set_error_bound(hid_t dcpl, mans_h5_mode mode, double bound);

/* Progressive reading: PRISM chunks decoded from now on in this process
 * stop at a coarser target, e.g. "abs:0.01", "rel:1e-3", "psnr:60",
 * "bytes:4096" (per chunk), or "full" / NULL for everything (the default).
 * It overrides the MANS_H5_READ_TARGET environment variable. Open the
 * dataset after the call (HDF5 caches decoded chunks per open dataset).
 * A target finer than a chunk's archive gets the full archive. */
MANS_H5_API herr_t mans_h5_set_read_target(const char* target);

#ifdef __cplusplus
}
#endif

#endif /* MANS_H5FILTER_H */

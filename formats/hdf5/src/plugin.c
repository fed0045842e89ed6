/* plugin.c - the two symbols HDF5 looks up when it loads the filter from
 * HDF5_PLUGIN_PATH or its default plugin directory. */
#include <H5PLextern.h>

#include "h5filter_class.h"

H5PL_type_t H5PLget_plugin_type(void) { return H5PL_TYPE_FILTER; }

const void* H5PLget_plugin_info(void) { return mans_h5_filter_class; }

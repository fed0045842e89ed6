/* h5filter_class.h - the filter's H5Z class, shared by the link-in library
 * and the plugin entry points (plugin.c). */
#ifndef MANS_H5FILTER_CLASS_H
#define MANS_H5FILTER_CLASS_H

#include "mans/h5filter.h"

extern const H5Z_class2_t mans_h5_filter_class[1];

#endif

// zlib, as the system ships it: Debian's zlib1g-dev, the Apple SDKs.
#ifndef TOUCHPOINT_CZLIB_SHIM_H
#define TOUCHPOINT_CZLIB_SHIM_H
#include <zlib.h>
#endif

// The system zlib (zlib1g-dev on Debian, part of the SDK on Apple platforms), for gzip request bodies.
#include <zlib.h>

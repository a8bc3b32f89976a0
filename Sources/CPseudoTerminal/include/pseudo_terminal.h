#pragma once
#include <stddef.h>

/// Opens a new pseudo-terminal master (non-blocking, close-on-exec) and writes its slave's path into `name`.
/// Returns the master's descriptor, or -1 with errno set. (posix_openpt and friends need _XOPEN_SOURCE, which
/// Swift's Glibc module does not define.)
int sensorhub_open_pseudo_terminal(char *name, size_t length);

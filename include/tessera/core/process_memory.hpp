#pragma once

namespace tessera {

/// This process's resident memory now (VmRSS of /proc/self/status), in bytes; 0 where the
/// system does not say.
double resident_bytes();

/// The most resident memory this process has held so far (getrusage's ru_maxrss), in bytes.
double peak_resident_bytes();

}  // namespace tessera

#pragma once
#include <cstdint>

namespace tessera::ops {

/// Bounds on the sizes an op accepts, far beyond any real network: they keep every size,
/// reach and weight count computed from them (taps × channels) within int64, and they come
/// from configs, so layers check them where they read them and name the key.
inline constexpr int64_t kMaxExtent = int64_t{1} << 20;   // channels, units, kernel, stride, dilation, padding
inline constexpr int64_t kMaxSize = int64_t{1} << 31;     // batch, input size
inline constexpr int64_t kMaxWeights = int64_t{1} << 40;  // a layer's weight count

}  // namespace tessera::ops

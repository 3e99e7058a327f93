#pragma once
// Copies between a channels-last tensor and its copy with another channel count: zero-padded
// when the copy has more channels, its first channels when fewer. cuDNN's tensor-core kernels
// take 16-bit tensors whose channels are a multiple of 8; a layer with fewer input channels
// (a CosmoFlow volume's 4, an image's 1) runs as the same convolution over its input padded
// with zero channels and its weights padded with zero input channels (PaddedChannelsConv).
#include <cstdint>

#include "tessera/core/tensor.hpp"

namespace tessera::kokkos_backend {

/// The smallest multiple of 8 at least `channels`.
inline int64_t padded_channels(int64_t channels) { return (channels + 7) / 8 * 8; }

/// dst[r, c] = src[r, c] for c below both channel counts, 0 for the channels only dst has,
/// over `rows` rows (the product of the other extents). src and dst are of one type.
void copy_channels(const Tensor& src, int64_t src_channels, const Tensor& dst, int64_t dst_channels, int64_t rows);

}  // namespace tessera::kokkos_backend

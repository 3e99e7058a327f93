#include "tessera/backends/kokkos/channel_padding_kernels.hpp"

#include <string>

#include "tessera/core/error.hpp"
#include "tessera/core/kokkos_compat.hpp"

namespace tessera::kokkos_backend {
namespace {

template <class T>
void copy(const T* src, int64_t src_channels, T* dst, int64_t dst_channels, int64_t rows) {
  Kokkos::parallel_for(
      "tessera::copy_channels", RangePolicy(0, rows * dst_channels), KOKKOS_LAMBDA(const int64_t i) {
        const int64_t r = i / dst_channels, c = i % dst_channels;
        dst[i] = c < src_channels ? src[r * src_channels + c] : T(0);  // +0 is the zero pattern in 16 bits too
      });
}

}  // namespace

void copy_channels(const Tensor& src, int64_t src_channels, const Tensor& dst, int64_t dst_channels, int64_t rows) {
  if (src.type() != dst.type() || src.numel() != rows * src_channels || dst.numel() != rows * dst_channels)
    throw Error("copy_channels: " + src.shape().str() + " (" + element_type_name(src.type()) + ", " +
                std::to_string(src_channels) + " channels) into " + dst.shape().str() + " (" +
                element_type_name(dst.type()) + ", " + std::to_string(dst_channels) + " channels) over " +
                std::to_string(rows) + " rows (internal error)");
  if (src.type() == ElementType::fp32)
    copy(src.data(), src_channels, dst.data(), dst_channels, rows);
  else
    copy(src.half_view().data(), src_channels, dst.half_view().data(), dst_channels, rows);
}

}  // namespace tessera::kokkos_backend

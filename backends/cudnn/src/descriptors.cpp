#include "descriptors.hpp"

#include <limits>

#include "tessera/core/error.hpp"

namespace tessera::cudnn_backend {
namespace {

int as_int(int64_t v, const char* name, const std::string& what) {
  if (v < 1 || v > std::numeric_limits<int>::max())
    throw Error("cudnn " + what + ": " + name + " " + std::to_string(v) + " does not fit cuDNN's int dimensions");
  return static_cast<int>(v);
}

}  // namespace

std::vector<int> spatial(const std::array<int64_t, 3>& extents, int spatial_rank) {
  std::vector<int> s;
  for (size_t i = spatial_rank == 2 ? 1 : 0; i < 3; ++i) s.push_back(static_cast<int>(extents[i]));
  return s;
}

cudnnDataType_t data_type_of(ElementType type) {
  switch (type) {
    case ElementType::bf16: return CUDNN_DATA_BFLOAT16;
    case ElementType::fp16: return CUDNN_DATA_HALF;
    case ElementType::fp32: break;
  }
  return CUDNN_DATA_FLOAT;
}

bool fits_in_int(int64_t elements) { return elements >= 1 && elements <= std::numeric_limits<int>::max(); }

void set_channels_last(const TensorDesc& d, int64_t n, int64_t c, const std::vector<int>& spatial,
                       const std::string& what, ElementType type) {
  std::vector<int> dims{as_int(n, "batch", what), as_int(c, "channels", what)};
  dims.insert(dims.end(), spatial.begin(), spatial.end());
  // Row-major [N, spatial..., C]: channels innermost, then W, H, (D), and the sample outermost.
  std::vector<int> strides(dims.size());
  int64_t stride = c;
  for (size_t i = dims.size(); i-- > 2;) {
    strides[i] = static_cast<int>(stride);
    stride *= dims[i];
  }
  strides[1] = 1;
  strides[0] = as_int(stride, "sample stride", what);
  check(cudnnSetTensorNdDescriptor(d.get(), data_type_of(type), static_cast<int>(dims.size()), dims.data(),
                                   strides.data()),
        "cudnnSetTensorNdDescriptor", what);
}

void set_channels_last_filter(const FilterDesc& d, int64_t k, int64_t c, const std::vector<int>& kernel,
                              const std::string& what, ElementType type) {
  std::vector<int> dims{as_int(k, "output channels", what), as_int(c, "input channels", what)};
  dims.insert(dims.end(), kernel.begin(), kernel.end());
  check(cudnnSetFilterNdDescriptor(d.get(), data_type_of(type), CUDNN_TENSOR_NHWC, static_cast<int>(dims.size()),
                                   dims.data()),
        "cudnnSetFilterNdDescriptor", what);
}

void set_channels_first(const TensorDesc& d, int64_t n, int64_t c, const std::vector<int>& spatial,
                        const std::string& what, ElementType type) {
  std::vector<int> dims{as_int(n, "batch", what), as_int(c, "channels", what)};
  dims.insert(dims.end(), spatial.begin(), spatial.end());
  std::vector<int> strides(dims.size());
  int64_t stride = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    strides[i] = as_int(stride, "stride", what);
    stride *= dims[i];
  }
  check(cudnnSetTensorNdDescriptor(d.get(), data_type_of(type), static_cast<int>(dims.size()), dims.data(),
                                   strides.data()),
        "cudnnSetTensorNdDescriptor", what);
}

void set_channels_first_filter(const FilterDesc& d, int64_t k, int64_t c, const std::vector<int>& kernel,
                               const std::string& what, ElementType type) {
  std::vector<int> dims{as_int(k, "output channels", what), as_int(c, "input channels", what)};
  dims.insert(dims.end(), kernel.begin(), kernel.end());
  check(cudnnSetFilterNdDescriptor(d.get(), data_type_of(type), CUDNN_TENSOR_NCHW, static_cast<int>(dims.size()),
                                   dims.data()),
        "cudnnSetFilterNdDescriptor", what);
}

}  // namespace tessera::cudnn_backend

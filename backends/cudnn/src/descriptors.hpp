#pragma once
// Owning wrappers of cuDNN's legacy descriptors and the channels-last layouts Tessera's
// tensors have in cuDNN's terms. Private to the cuDNN backend.
#include <cudnn.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "context.hpp"
#include "tessera/core/element_type.hpp"

namespace tessera::cudnn_backend {

// cuDNN takes its alpha/beta blend factors by address, in host memory, as float for float,
// half and bfloat16 tensors alike.
inline constexpr float one = 1.0f;
inline constexpr float zero = 0.0f;

/// One cuDNN descriptor, created with the object and destroyed with it.
template <class Handle, cudnnStatus_t (*Create)(Handle*), cudnnStatus_t (*Destroy)(Handle)>
class Descriptor {
 public:
  explicit Descriptor(const char* create_call) { check(Create(&handle_), create_call, "descriptor creation"); }
  ~Descriptor() { Destroy(handle_); }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  Handle get() const { return handle_; }

 private:
  Handle handle_{};
};

class TensorDesc
    : public Descriptor<cudnnTensorDescriptor_t, cudnnCreateTensorDescriptor, cudnnDestroyTensorDescriptor> {
 public:
  TensorDesc() : Descriptor("cudnnCreateTensorDescriptor") {}
};
class FilterDesc
    : public Descriptor<cudnnFilterDescriptor_t, cudnnCreateFilterDescriptor, cudnnDestroyFilterDescriptor> {
 public:
  FilterDesc() : Descriptor("cudnnCreateFilterDescriptor") {}
};
class ConvDesc : public Descriptor<cudnnConvolutionDescriptor_t, cudnnCreateConvolutionDescriptor,
                                   cudnnDestroyConvolutionDescriptor> {
 public:
  ConvDesc() : Descriptor("cudnnCreateConvolutionDescriptor") {}
};
class PoolDesc
    : public Descriptor<cudnnPoolingDescriptor_t, cudnnCreatePoolingDescriptor, cudnnDestroyPoolingDescriptor> {
 public:
  PoolDesc() : Descriptor("cudnnCreatePoolingDescriptor") {}
};

/// The spatial extents cuDNN sees: H, W for a 2D geometry (stored as 3D with depth 1, but a
/// 4D descriptor selects cuDNN's 2D kernels), D, H, W for 3D.
std::vector<int> spatial(const std::array<int64_t, 3>& extents, int spatial_rank);

/// True when a tensor of `elements` values can be described to cuDNN, whose dimensions and
/// strides are 32-bit ints.
bool fits_in_int(int64_t elements);

/// cuDNN's name of a Tensor's element type: FLOAT, BFLOAT16 or HALF.
cudnnDataType_t data_type_of(ElementType type);

/// [N, C, spatial...] dims with the strides of the channels-last (NHWC / NDHWC) layout.
void set_channels_last(const TensorDesc& d, int64_t n, int64_t c, const std::vector<int>& spatial,
                       const std::string& what, ElementType type = ElementType::fp32);

/// Weights [K, spatial..., C] (ODHWI): cuDNN's KRSC, given as KCRS dims in the NHWC filter format.
void set_channels_last_filter(const FilterDesc& d, int64_t k, int64_t c, const std::vector<int>& kernel,
                              const std::string& what, ElementType type = ElementType::fp32);

/// [N, C, spatial...] dims, packed channels-first (NCHW / NCDHW): the layout of the copies the
/// weight gradient may run on (conv_op.cpp).
void set_channels_first(const TensorDesc& d, int64_t n, int64_t c, const std::vector<int>& spatial,
                        const std::string& what, ElementType type = ElementType::fp32);

/// Weights [K, C, spatial...] (KCRS) in the NCHW filter format.
void set_channels_first_filter(const FilterDesc& d, int64_t k, int64_t c, const std::vector<int>& kernel,
                               const std::string& what, ElementType type = ElementType::fp32);

}  // namespace tessera::cudnn_backend

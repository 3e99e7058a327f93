#pragma once
#include <array>
#include <string>
#include <vector>

#include "tessera/core/segment_chunks.hpp"
#include "tessera/optim/optimizer.hpp"
#include "tessera/optim/parameter_tensors.hpp"

namespace tessera::optim {

/// What LARS and LAMB share: the parameter tensors' layout, their per-tensor squared norms
/// (completed over the ranks that share a split tensor, so that a shard's trust ratio is the
/// whole tensor's, as on one rank), and a per-tensor factor table on the device for the
/// update kernel. The norms are summed in a fixed order (SegmentChunks), so every replica
/// computes the same ratios to the bit.
class LayerwiseOptimizer : public Optimizer {
 public:
  /// Takes the layout; without it the buffer is one tensor. May come before or after bind().
  void set_tensors(const ParameterTensors& tensors) override;

 protected:
  /// Binds the buffers (and checks `optimizer`'s layout against them at the first step).
  int64_t bind_buffers(const std::string& optimizer, const Tensor& values, const Tensor& grads);
  /// Whether tensor `t` keeps out of the trust ratio and the weight decay.
  bool excluded(size_t t, bool exclude_vectors) const { return exclude_vectors && tensors_.tensors[t].vector; }
  /// Per tensor, the whole tensor's sums of the two values f(i, t, v) writes into v[0], v[1].
  template <class F>
  std::vector<std::array<double, 2>> tensor_sums(const char* label, const F& f);
  /// Copies two factors per tensor to the device table factors() that kernels read by tensor.
  void upload_factors(const std::vector<std::array<double, 2>>& per_tensor);
  const Matrix<double>& factors() const { return factors_; }
  SegmentChunks& chunks() { return chunks_; }
  size_t tensor_count() const { return tensors_.tensors.size(); }

  Tensor values_, grads_;
  int64_t numel_ = 0;
  bool bound_ = false;

 private:
  /// Cuts the buffer into chunks along the layout (once per layout and binding).
  void prepare(const std::string& optimizer);
  ParameterTensors tensors_;
  bool told_ = false;     // set_tensors() was called
  bool prepared_ = false; // chunks_ and factors_ follow the current layout and binding
  SegmentChunks chunks_;
  Matrix<double> factors_;
  Matrix<double>::HostMirror host_factors_;
};

template <class F>
std::vector<std::array<double, 2>> LayerwiseOptimizer::tensor_sums(const char* label, const F& f) {
  prepare(type());
  auto sums = chunks_.sums<2>(label, f);
  if (tensors_.complete_sums) {
    std::vector<double> flat;
    for (const auto& s : sums) flat.insert(flat.end(), s.begin(), s.end());
    tensors_.complete_sums(flat, 2);
    for (size_t t = 0; t < sums.size(); ++t) sums[t] = {flat[2 * t], flat[2 * t + 1]};
  }
  return sums;
}

}  // namespace tessera::optim

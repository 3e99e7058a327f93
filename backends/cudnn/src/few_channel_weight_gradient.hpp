#pragma once
// The weight gradient of a convolution with few input channels, as Tessera's own kernel.
// cuDNN's legacy calls run it slowly: 0.17 TFLOP/s channels-last and 0.23 channels-first for
// cosmoflow-small's first layer (4 -> 32 channels, 3x3x3, 128^3) on an H200, against 13-37
// TFLOP/s for the other passes of the same network (docs/gpu.md).
//
// dw[k, tap, c] = Σ over samples and output positions p of dy[p, k] · x[p + tap, c]. Each
// thread of a team owns two output channels (one where their count is odd) and one input
// channel, and keeps the sums of all taps (27 for 3x3x3, 9 for 3x3) in registers while it
// walks a contiguous range of output rows: dy is read once, x from cache. Each team writes its
// partial sums; a second kernel adds them in team order, so the result repeats bit for bit.
#include "tessera/core/tensor.hpp"
#include "tessera/ops/conv.hpp"

namespace tessera::cudnn_backend {

/// The kernel for one geometry, with its buffer of partial sums.
class FewChannelWeightGradient {
 public:
  /// True for what the kernel serves: 3x3x3 (3D) or 3x3 (2D) kernels, at most 512 output ×
  /// input channels (one thread each), tensors indexable with 32-bit ints.
  static bool serves(const ops::ConvGeometry& g);

  explicit FewChannelWeightGradient(const ops::ConvGeometry& g);

  /// dw = the weight gradient of x and dy (overwrites dw, ODHWI). x and dy are of the
  /// geometry's type (fp32, bf16 or fp16); dw is fp32, summed in fp32 whatever their type.
  void run(const Tensor& x, const Tensor& dy, const Tensor& dw) const;

 private:
  ops::ConvGeometry g_;
  int teams_;
  int team_size_;
  Tensor partials_;  // [teams, K, taps, C]
};

}  // namespace tessera::cudnn_backend

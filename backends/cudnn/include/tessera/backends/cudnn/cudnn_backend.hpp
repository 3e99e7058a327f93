#pragma once
// The cuDNN GPU backend. Convolutions (and through them transposed convolutions) and pooling
// run through cuDNN on plain channels-last tensors in device memory (NDHWC activations, ODHWI =
// KRSC weights), on the Kokkos CUDA stream, in fp32, bf16 or fp16 (16-bit data on tensor cores
// with fp32 sums; each pass through the legacy calls or a graph of the graph API, whichever
// serves it better). Batch norm, activations and inner products return nullptr, so the registry
// runs them as Kokkos CUDA kernels (see cudnn_backend.cpp for why).
#include <cstddef>
#include <memory>
#include <string>

#include "tessera/ops/backend.hpp"

namespace tessera::cudnn_backend {

/// How convolutions choose their algorithm and precision. An op reads them when it is created.
struct Options {
  /// Allow TF32 tensor-core math (10-bit mantissa products) in convolutions. Off: cuDNN runs
  /// FMA kernels only, so results are float32 like the other backends'.
  bool tf32 = false;
  /// Time the candidate algorithms on the first call of each pass (cudnnFind*AlgorithmEx)
  /// instead of taking cuDNN's heuristic choice. Faster for some shapes, but the timing can
  /// pick another algorithm in another run, so two runs may differ in the last bits.
  bool benchmark = false;
  /// Only algorithms whose results repeat bit for bit. Off: also those that sum with atomics
  /// (PyTorch's default, torch.backends.cudnn.deterministic=False), which are much faster
  /// for some passes, e.g. the weight gradient of a 3D convolution of few input channels.
  bool deterministic = true;
  /// How the weight gradient runs. channels_last: cuDNN on the tensors as they are.
  /// channels_first: cuDNN on NCDHW copies of the input and output gradient
  /// (cudnnTransformTensor). few_channel_kernel: Tessera's own kernel for 3x3x3 / 3x3
  /// convolutions of few channels (few_channel_weight_gradient.hpp). cuDNN runs this pass
  /// slowly for few input channels (measured on an H200: cosmoflow-small's 4-channel first
  /// layer at 0.17 TFLOP/s channels-last). chosen (default): for a layer whose input channels
  /// are not a multiple of 8, with `benchmark` all three are timed, copies included, and the
  /// fastest kept; without it the kernel where it serves the geometry and TF32 is off (on the
  /// H200 the kernel ran 1.19 TFLOP/s, cuDNN 0.23 in FP32 and 1.6 with TF32); otherwise
  /// channels_last.
  enum class WeightGradient { chosen, channels_last, channels_first, few_channel_kernel };
  WeightGradient weight_gradient = WeightGradient::chosen;
};

/// The options in force: set_options', or the defaults. A run sets them from its config
/// (registry::apply_cudnn_settings), not from the environment.
Options options();
/// Replaces the options for ops created from now on.
void set_options(const Options& o);

std::unique_ptr<ops::Backend> make_backend();
/// "cuDNN 9.19.0 (headers 9.19.0), FMA math (TF32 off), heuristic algorithms" for `tessera info`.
std::string version_string();
/// Bytes held by the workspace all cuDNN ops share (0 before the first convolution).
size_t workspace_bytes();

}  // namespace tessera::cudnn_backend

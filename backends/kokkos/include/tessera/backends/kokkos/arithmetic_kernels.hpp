#pragma once
// The portable kernels that layers, losses and the model call directly: arithmetic on whole
// tensors, channel concat/split, dropout, losses. They are memory-bound maps and reductions
// that no vendor library does better, so they have no op interface and no backend choice:
// every build runs them as these Kokkos kernels (on CPU threads or the GPU alike).
#include <array>
#include <cstdint>
#include <vector>

#include "tessera/core/tensor.hpp"

namespace tessera::kokkos_backend {

/// y = a·x + b·y
void axpby(float a, const Tensor& x, float b, const Tensor& y);
/// z = x + y (for 16-bit types computed in fp32 and rounded once)
void add(const Tensor& x, const Tensor& y, const Tensor& z);
/// y += x for tensors of any element types (the sum in fp32, rounded to y's type): how a
/// model sums the gradients a reduced-precision activation receives from several consumers.
void accumulate(const Tensor& x, const Tensor& y);
/// Σ x (accumulated in double).
double sum(const Tensor& x);
/// Σ x² (accumulated in double).
double sum_squares(const Tensor& x);
/// How many elements of the fp32 tensor x are inf or NaN (what loss scaling checks).
int64_t count_nonfinite(const Tensor& x);
/// The spread of an fp32 tensor's values: the least and largest finite value (min > max when
/// there is none), how many are inf or NaN, and how many finite ones are not whole
/// numbers. One pass; what the trainer checks a batch against a layer's or loss's domain with.
struct ValueSpread {
  float min = 0, max = 0;
  int64_t nonfinite = 0, fractional = 0;
};
ValueSpread value_spread(const Tensor& x);
/// Σ x·y (accumulated in double).
double dot(const Tensor& x, const Tensor& y);

/// Copies channel block `src` (channels-last, C_src channels) into channels
/// [channel_offset, channel_offset + C_src) of `dst` (or the reverse with `to_dst` false).
/// Both of one element type, any of them.
void copy_channels(const Tensor& src, const Tensor& dst, int64_t channel_offset, bool to_dst);

/// copy_channels for several blocks at once: parts[k] at channel offsets[k] of `whole` (empty
/// parts skipped), in one pass over `whole` instead of one a block. A concatenation's forward
/// (to_whole) and backward: copied block by block, each pass read (or wrote) every cache line of
/// whole's rows for a slice of it, so the rows crossed memory once a block.
void copy_channel_blocks(const std::vector<Tensor>& parts, const std::vector<int64_t>& offsets, const Tensor& whole,
                         bool to_whole);

/// Where a rank's block of an activation [N, D, H, W, C] (or [N, H, W, C], [N, F]) sits in
/// the whole tensor, so that per-element random numbers follow an element's global index and
/// do not depend on how the tensor is split over ranks.
struct BlockPlacement {
  int64_t first_sample = 0;                // global index of the block's first sample
  std::array<int64_t, 3> offset{0, 0, 0};  // of the block within a sample (D, H, W)
  std::array<int64_t, 3> sample{0, 0, 0};  // whole-sample extent (D, H, W); 0: whole samples
  int64_t first_channel = 0;               // of the block's channels, under a channel split
  int64_t channels = 0;                    // whole channel count; 0: the block has all channels
};

/// Inverted dropout: y = x·mask/(1−p), keeping element i iff rng::uniform(seed, stream, i) >= p,
/// with i the element's flat index in the whole (global) tensor as `placement` locates it.
/// Backward regenerates the same mask, so nothing is stored. Throws Error unless p is in [0, 1).
void dropout_forward(const Tensor& x, float p, uint64_t seed, uint64_t stream, const Tensor& y,
                     const BlockPlacement& placement = {});
void dropout_backward(const Tensor& dy, float p, uint64_t seed, uint64_t stream, const Tensor& dx,
                      const BlockPlacement& placement = {});

/// Squared error: returns Σ(pred − target)²/count and, unless `grad` is empty, writes
/// grad = 2(pred − target)/count · scale.
double mse_loss(const Tensor& pred, const Tensor& target, double count, float scale, const Tensor& grad);

/// Softmax cross-entropy along the last (channel) dimension of a channels-last tensor of
/// logits; `labels` holds class indices as floats with one value per row ([N] or [N, D, H, W]).
/// Returns Σ −log softmax(logits)[label] / count, writes grad = (softmax − onehot)/count · scale
/// unless `grad` is empty, and sets `correct` to the number of rows whose arg-max (the first,
/// on ties) equals the label. Throws Error when a label is not an integer in [0, classes).
double softmax_cross_entropy(const Tensor& logits, const Tensor& labels, double count, float scale, const Tensor& grad,
                             int64_t& correct);

/// Binary cross-entropy on logits, element by element (PyTorch's BCEWithLogitsLoss): for logit
/// x and target t in [0, 1], max(x, 0) − x·t + log(1 + exp(−|x|)), the stable form of
/// −t·log σ(x) − (1 − t)·log(1 − σ(x)). Returns Σ loss / count, writes
/// grad = (σ(x) − t)/count · scale unless `grad` is empty, and sets `correct` to the elements
/// where x > 0 exactly when t > 0.5. Throws Error when a target is outside [0, 1] or NaN.
double sigmoid_cross_entropy(const Tensor& logits, const Tensor& targets, double count, float scale,
                             const Tensor& grad, int64_t& correct);

}  // namespace tessera::kokkos_backend

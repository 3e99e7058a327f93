#pragma once
// Small portable kernels that every build runs as Kokkos kernels (no vendor library does
// them better): arithmetic on whole tensors, channel concat/split, dropout, losses.
#include <cstdint>

#include "tessera/core/tensor.hpp"

namespace tessera::ops {

/// y = a·x + b·y
void axpby(float a, const Tensor& x, float b, const Tensor& y);
/// z = x + y
void add(const Tensor& x, const Tensor& y, const Tensor& z);
/// Σ x (accumulated in double).
double sum(const Tensor& x);
/// Σ x² (accumulated in double).
double sum_squares(const Tensor& x);
/// Σ x·y (accumulated in double).
double dot(const Tensor& x, const Tensor& y);

/// Copies channel block `src` (channels-last, C_src channels) into channels
/// [channel_offset, channel_offset + C_src) of `dst` (or the reverse with `to_dst` false).
void copy_channels(const Tensor& src, const Tensor& dst, int64_t channel_offset, bool to_dst);

/// Inverted dropout: y = x·mask/(1−p), keeping element i iff rng::uniform(seed, stream, i) >= p,
/// with i the flat index in `x`. Backward regenerates the same mask, so nothing is stored.
/// Throws Error unless p is in [0, 1).
/// `first_index` is the global index of element 0 (a rank's offset in the global batch), so a
/// sample's mask does not depend on which rank holds it.
void dropout_forward(const Tensor& x, float p, uint64_t seed, uint64_t stream, const Tensor& y,
                     uint64_t first_index = 0);
void dropout_backward(const Tensor& dy, float p, uint64_t seed, uint64_t stream, const Tensor& dx,
                      uint64_t first_index = 0);

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

}  // namespace tessera::ops

// The portable kernels of arithmetic_kernels.hpp: the same Kokkos code on every
// build and backend. Reductions use parallel_reduce (no atomics), so results are fixed for a
// given thread count.
#include "tessera/backends/kokkos/arithmetic_kernels.hpp"

#include <algorithm>
#include <type_traits>

#include "tessera/backends/kokkos/storage_types.hpp"
#include "tessera/backends/kokkos/sweep.hpp"

#include "tessera/core/error.hpp"
#include "tessera/core/half_float.hpp"
#include "tessera/core/rng.hpp"

namespace tessera::kokkos_backend {
namespace {

void require_same_size(const Tensor& a, const Tensor& b, const std::string& op) {
  require_shape(a.numel() == b.numel(),
                op + ": tensors of shape " + a.shape().str() + " and " + b.shape().str() + " differ in size");
}

int64_t channels_of(const Tensor& t) { return t.shape().rank() == 0 ? 1 : t.shape()[t.shape().rank() - 1]; }

template <class X, class Y>
void accumulate_as(const Tensor& x, const Tensor& y) {
  const typename X::Bits* xp = X::data(x);
  typename Y::Bits* yp = Y::data(y);
  for_each_index("tessera::accumulate", x.numel(),
                 KOKKOS_LAMBDA(const int64_t i) { yp[i] = Y::narrow(Y::widen(yp[i]) + X::widen(xp[i])); });
}

}  // namespace

void axpby(float a, const Tensor& x, float b, const Tensor& y) {
  require_same_size(x, y, "axpby");
  const float* xp = x.data();
  float* yp = y.data();
  for_each_index("tessera::axpby", x.numel(), KOKKOS_LAMBDA(const int64_t i) { yp[i] = a * xp[i] + b * yp[i]; });
}

void accumulate(const Tensor& x, const Tensor& y) {
  require_same_size(x, y, "accumulate");
  with_storage(x.type(), [&](auto xs) {
    with_storage(y.type(), [&](auto ys) { accumulate_as<decltype(xs), decltype(ys)>(x, y); });
  });
}

void add(const Tensor& x, const Tensor& y, const Tensor& z) {
  require_same_size(x, y, "add");
  require_same_size(x, z, "add");
  if (x.type() != ElementType::fp32 || y.type() != ElementType::fp32 || z.type() != ElementType::fp32) {
    deep_copy(z, x);  // converting where the types differ
    return accumulate(y, z);
  }
  const float* xp = x.data();
  const float* yp = y.data();
  float* zp = z.data();
  for_each_index("tessera::add", x.numel(), KOKKOS_LAMBDA(const int64_t i) { zp[i] = xp[i] + yp[i]; });
}

double sum(const Tensor& x) {
  const auto xv = x.view();
  double s = 0.0;
  Kokkos::parallel_reduce(
      "tessera::sum", RangePolicy(0, x.numel()),
      KOKKOS_LAMBDA(const int64_t i, double& acc) { acc += static_cast<double>(xv(i)); }, s);
  return s;
}

double sum_squares(const Tensor& x) {
  const auto xv = x.view();
  double s = 0.0;
  Kokkos::parallel_reduce(
      "tessera::sum_squares", RangePolicy(0, x.numel()),
      KOKKOS_LAMBDA(const int64_t i, double& acc) {
        const double v = static_cast<double>(xv(i));
        acc += v * v;
      },
      s);
  return s;
}

int64_t count_nonfinite(const Tensor& x) {
  const auto xv = x.view();
  int64_t n = 0;
  Kokkos::parallel_reduce(
      "tessera::count_nonfinite", RangePolicy(0, x.numel()),
      KOKKOS_LAMBDA(const int64_t i, int64_t& acc) {
        // Exponent bits all ones: inf or NaN (no std::isfinite in device code under fast math).
        acc += (half_float::bits_of(xv(i)) & 0x7f800000u) == 0x7f800000u ? 1 : 0;
      },
      n);
  return n;
}

ValueSpread value_spread(const Tensor& x) {
  const auto xv = x.view();
  float lo = 0, hi = 0;
  int64_t nonfinite = 0, fractional = 0;
  Kokkos::parallel_reduce(
      "tessera::value_spread", RangePolicy(0, x.numel()),
      KOKKOS_LAMBDA(const int64_t i, float& lo_acc, float& hi_acc, int64_t& nonfinite_acc, int64_t& fractional_acc) {
        const float v = xv(i);
        if ((half_float::bits_of(v) & 0x7f800000u) == 0x7f800000u) {
          ++nonfinite_acc;
          return;
        }
        lo_acc = v < lo_acc ? v : lo_acc;
        hi_acc = v > hi_acc ? v : hi_acc;
        // Finite floats of 2^23 and above are all whole; below, a cast truncates exactly.
        const bool whole = v >= 8388608.0f || v <= -8388608.0f || static_cast<float>(static_cast<int32_t>(v)) == v;
        fractional_acc += whole ? 0 : 1;
      },
      Kokkos::Min<float>(lo), Kokkos::Max<float>(hi), Kokkos::Sum<int64_t>(nonfinite), Kokkos::Sum<int64_t>(fractional));
  return {lo, hi, nonfinite, fractional};
}

double dot(const Tensor& x, const Tensor& y) {
  require_same_size(x, y, "dot");
  const auto xv = x.view();
  const auto yv = y.view();
  double s = 0.0;
  Kokkos::parallel_reduce(
      "tessera::dot", RangePolicy(0, x.numel()),
      KOKKOS_LAMBDA(const int64_t i, double& acc) { acc += static_cast<double>(xv(i)) * static_cast<double>(yv(i)); },
      s);
  return s;
}

namespace {

/// Up to kMaxBlocks channel blocks of one element type, as a kernel captures them.
constexpr int kMaxBlocks = 8;
template <class T>
struct ChannelBlocks {
  T* data[kMaxBlocks] = {};
  int64_t channels[kMaxBlocks] = {}, offset[kMaxBlocks] = {};
  int count = 0;
};

/// n rows of a part's run of channels (c of them; Width of them where Width > 0) to or from
/// the whole tensor's rows (whole_channels apart).
template <int64_t Width, class T>
void copy_runs(T* part, T* whole, int64_t n, int64_t c, int64_t whole_channels, bool to_whole) {
  const int64_t width = Width > 0 ? Width : c;
  if (to_whole) {
    for (int64_t r = 0; r < n; ++r) {
      TESSERA_SIMD
      for (int64_t i = 0; i < width; ++i) whole[r * whole_channels + i] = part[r * c + i];
    }
  } else {
    for (int64_t r = 0; r < n; ++r) {
      TESSERA_SIMD
      for (int64_t i = 0; i < width; ++i) part[r * c + i] = whole[r * whole_channels + i];
    }
  }
}

template <class T>
void copy_channel_blocks_of(const ChannelBlocks<T>& blocks, T* whole, int64_t rows, int64_t whole_channels,
                            bool to_whole) {
  if constexpr (kOnHost) {
    // A work item takes a block of whole rows (in cache) and copies each part's runs of
    // channels in turn: the whole tensor's rows cross memory once. Runs of a common width are
    // copied by loops of that fixed width: for 16 bf16 channels (32 bytes a row) the set-up of a
    // loop of unknown length cost as much as the copy.
    const int64_t block = std::max<int64_t>(1, kHostBlockElements / std::max<int64_t>(1, whole_channels));
    Kokkos::parallel_for(
        to_whole ? "tessera::copy_channel_blocks_in" : "tessera::copy_channel_blocks_out",
        RangePolicy(0, (rows + block - 1) / block), KOKKOS_LAMBDA(const int64_t b) {
          const int64_t r0 = b * block, n = math::min(rows, r0 + block) - r0;
          for (int k = 0; k < blocks.count; ++k) {
            const int64_t c = blocks.channels[k];
            T* part = blocks.data[k] + r0 * c;
            T* w = whole + r0 * whole_channels + blocks.offset[k];
            switch (c) {
              case 8: copy_runs<8>(part, w, n, c, whole_channels, to_whole); break;
              case 16: copy_runs<16>(part, w, n, c, whole_channels, to_whole); break;
              case 32: copy_runs<32>(part, w, n, c, whole_channels, to_whole); break;
              case 64: copy_runs<64>(part, w, n, c, whole_channels, to_whole); break;
              default: copy_runs<0>(part, w, n, c, whole_channels, to_whole); break;
            }
          }
        });
    return;
  }
  // A device thread per copied element: (row, j), j running over the blocks' channels in turn.
  int64_t copied = 0;
  for (int k = 0; k < blocks.count; ++k) copied += blocks.channels[k];
  Kokkos::parallel_for(
      to_whole ? "tessera::copy_channel_blocks_in" : "tessera::copy_channel_blocks_out",
      MDPolicy<2>({0, 0}, {rows, copied}), KOKKOS_LAMBDA(const int64_t r, const int64_t j) {
        int k = 0;
        int64_t i = j;
        while (i >= blocks.channels[k]) i -= blocks.channels[k++];
        T& part = blocks.data[k][r * blocks.channels[k] + i];
        T& w = whole[r * whole_channels + blocks.offset[k] + i];
        if (to_whole)
          w = part;
        else
          part = w;
      });
}

template <class T>
T* data_of(const Tensor& t) {
  if constexpr (std::is_same_v<T, float>)
    return t.view().data();
  else
    return t.half_view().data();
}

template <class T>
void copy_channel_blocks_as(const std::vector<Tensor>& parts, const std::vector<int64_t>& offsets,
                            const Tensor& whole, bool to_whole) {
  const int64_t whole_channels = channels_of(whole), rows = whole_channels == 0 ? 0 : whole.numel() / whole_channels;
  ChannelBlocks<T> blocks;
  for (size_t k = 0; k < parts.size(); ++k) {
    if (parts[k].empty()) continue;
    if (blocks.count == kMaxBlocks) {
      copy_channel_blocks_of(blocks, data_of<T>(whole), rows, whole_channels, to_whole);
      blocks = ChannelBlocks<T>();
    }
    blocks.data[blocks.count] = data_of<T>(parts[k]);
    blocks.channels[blocks.count] = channels_of(parts[k]);
    blocks.offset[blocks.count] = offsets[k];
    ++blocks.count;
  }
  if (blocks.count > 0) copy_channel_blocks_of(blocks, data_of<T>(whole), rows, whole_channels, to_whole);
}

}  // namespace

namespace {

/// That `part` fits `whole` at channel `offset` (rank, rows, channels, element type), named
/// `what` in the error.
void require_block(const std::string& what, const Tensor& part, int64_t offset, const Tensor& whole) {
  const int64_t whole_channels = channels_of(whole), c = channels_of(part);
  const int64_t rows = whole_channels == 0 ? 0 : whole.numel() / whole_channels;
  require_shape(part.shape().rank() == whole.shape().rank() && offset >= 0 && offset + c <= whole_channels &&
                    rows * c == part.numel(),
                what + ": a block of shape " + part.shape().str() + " at channel " + std::to_string(offset) +
                    " does not fit a tensor of shape " + whole.shape().str());
  if (part.type() != whole.type())
    throw Error(what + ": a block of " + element_type_name(part.type()) + " and a tensor of " +
                element_type_name(whole.type()));
}

/// The checked blocks copied: a copy, 16-bit values moving as their bit patterns.
void copy_checked_blocks(const std::vector<Tensor>& parts, const std::vector<int64_t>& offsets, const Tensor& whole,
                         bool to_whole) {
  if (whole.type() == ElementType::fp32)
    copy_channel_blocks_as<float>(parts, offsets, whole, to_whole);
  else
    copy_channel_blocks_as<uint16_t>(parts, offsets, whole, to_whole);
}

}  // namespace

void copy_channels(const Tensor& src, const Tensor& dst, int64_t channel_offset, bool to_dst) {
  require_block("copy_channels", src, channel_offset, dst);
  copy_checked_blocks({src}, {channel_offset}, dst, to_dst);
}

void copy_channel_blocks(const std::vector<Tensor>& parts, const std::vector<int64_t>& offsets, const Tensor& whole,
                         bool to_whole) {
  if (offsets.size() != parts.size())
    throw Error("copy_channel_blocks: " + std::to_string(parts.size()) + " blocks and " +
                std::to_string(offsets.size()) + " channel offsets");
  for (size_t k = 0; k < parts.size(); ++k)
    if (!parts[k].empty()) require_block("copy_channel_blocks", parts[k], offsets[k], whole);
  copy_checked_blocks(parts, offsets, whole, to_whole);
}

namespace {

// Forward and backward apply the same mask, regenerated from the counter-based RNG.
void apply_dropout_mask(const char* label, const Tensor& in, float p, uint64_t seed, uint64_t stream,
                        const BlockPlacement& placement, const Tensor& out) {
  require_same_size(in, out, "dropout");
  if (!(p >= 0.0f && p < 1.0f)) throw Error("dropout: rate " + std::to_string(p) + " is not in [0, 1)");
  const auto iv = in.view();
  const auto ov = out.view();
  const float keep_scale = 1.0f / (1.0f - p);
  if (placement.sample[0] == 0) {
    const int64_t rows = in.shape().rank() > 0 ? in.shape()[0] : 1;
    const int64_t per_sample = rows > 0 ? in.numel() / rows : 0;
    // The block holds whole samples: global index = offset of its first sample + local index.
    const uint64_t first = static_cast<uint64_t>(placement.first_sample * per_sample);
    Kokkos::parallel_for(
        label, RangePolicy(0, in.numel()), KOKKOS_LAMBDA(const int64_t i) {
          const bool keep = rng::uniform(seed, stream, first + static_cast<uint64_t>(i)) >= p;
          ov(i) = keep ? iv(i) * keep_scale : 0.0f;
        });
    return;
  }
  const ActivationDims a = ActivationDims::of(in.shape());
  const int64_t n0 = placement.first_sample, d0 = placement.offset[0], h0 = placement.offset[1],
                w0 = placement.offset[2];
  const int64_t gd = placement.sample[0], gh = placement.sample[1], gw = placement.sample[2];
  const int64_t d = a.d, h = a.h, w = a.w, c = a.c;
  const int64_t gc = placement.channels > 0 ? placement.channels : c, c0 = placement.first_channel;
  Kokkos::parallel_for(
      label, MDPolicy<4>({0, 0, 0, 0}, {a.n, d, h, w}),
      KOKKOS_LAMBDA(const int64_t n, const int64_t z, const int64_t y, const int64_t x) {
        const int64_t local = (((n * d + z) * h + y) * w + x) * c;
        const int64_t global = ((((n0 + n) * gd + d0 + z) * gh + h0 + y) * gw + w0 + x) * gc + c0;
        for (int64_t k = 0; k < c; ++k) {
          const bool keep = rng::uniform(seed, stream, static_cast<uint64_t>(global + k)) >= p;
          ov(local + k) = keep ? iv(local + k) * keep_scale : 0.0f;
        }
      });
}

}  // namespace

void dropout_forward(const Tensor& x, float p, uint64_t seed, uint64_t stream, const Tensor& y,
                     const BlockPlacement& placement) {
  apply_dropout_mask("tessera::dropout_forward", x, p, seed, stream, placement, y);
}

void dropout_backward(const Tensor& dy, float p, uint64_t seed, uint64_t stream, const Tensor& dx,
                      const BlockPlacement& placement) {
  apply_dropout_mask("tessera::dropout_backward", dy, p, seed, stream, placement, dx);
}

double mse_loss(const Tensor& pred, const Tensor& target, double count, float scale, const Tensor& grad) {
  require_same_size(pred, target, "mse_loss (prediction vs target)");
  const bool with_grad = !grad.empty();
  if (with_grad) require_same_size(pred, grad, "mse_loss (prediction vs gradient)");
  const auto pv = pred.view();
  const auto tv = target.view();
  const auto gv = grad.view();
  const float grad_scale = static_cast<float>(2.0 / count) * scale;
  double s = 0.0;
  Kokkos::parallel_reduce(
      "tessera::mse_loss", RangePolicy(0, pred.numel()),
      KOKKOS_LAMBDA(const int64_t i, double& acc) {
        const float d = pv(i) - tv(i);
        acc += static_cast<double>(d) * static_cast<double>(d);
        if (with_grad) gv(i) = grad_scale * d;
      },
      s);
  return s / count;
}

double softmax_cross_entropy(const Tensor& logits, const Tensor& labels, double count, float scale, const Tensor& grad,
                             int64_t& correct) {
  const int64_t classes = channels_of(logits);
  require_shape(classes > 0 && labels.numel() * classes == logits.numel(),
                "softmax_cross_entropy: labels of shape " + labels.shape().str() +
                    " do not hold one class index per row of logits of shape " + logits.shape().str());
  const bool with_grad = !grad.empty();
  if (with_grad) require_same_size(logits, grad, "softmax_cross_entropy (logits vs gradient)");
  const auto lv = logits.view();
  const auto yv = labels.view();
  const auto gv = grad.view();
  const float grad_scale = static_cast<float>(1.0 / count) * scale;
  double loss = 0.0;
  int64_t hits = 0, invalid = 0;
  Kokkos::parallel_reduce(
      "tessera::softmax_cross_entropy", RangePolicy(0, labels.numel()),
      KOKKOS_LAMBDA(const int64_t r, double& loss_acc, int64_t& hit_acc, int64_t& invalid_acc) {
        const int64_t base = r * classes;
        const float label_value = yv(r);
        // Written so that NaN is invalid too.
        const bool in_range = label_value >= 0.0f && label_value < static_cast<float>(classes);
        const int64_t label = in_range ? static_cast<int64_t>(label_value) : 0;
        if (!in_range || static_cast<float>(label) != label_value) {
          ++invalid_acc;
          return;
        }
        // Subtracting the row maximum keeps exp() from overflowing.
        int64_t arg_max = 0;
        float max_logit = lv(base);
        for (int64_t c = 1; c < classes; ++c) {
          if (lv(base + c) > max_logit) {
            max_logit = lv(base + c);
            arg_max = c;
          }
        }
        double denom = 0.0;
        for (int64_t c = 0; c < classes; ++c) denom += static_cast<double>(math::exp(lv(base + c) - max_logit));
        const double log_denom = math::log(denom);
        loss_acc += log_denom - static_cast<double>(lv(base + label) - max_logit);
        if (arg_max == label) ++hit_acc;
        if (with_grad) {
          const double inv_denom = 1.0 / denom;
          for (int64_t c = 0; c < classes; ++c) {
            const double softmax = static_cast<double>(math::exp(lv(base + c) - max_logit)) * inv_denom;
            gv(base + c) = grad_scale * static_cast<float>(softmax - (c == label ? 1.0 : 0.0));
          }
        }
      },
      loss, hits, invalid);
  if (invalid > 0)
    throw Error("softmax_cross_entropy: " + std::to_string(invalid) + " of " + std::to_string(labels.numel()) +
                " labels are not class indices in [0, " + std::to_string(classes) + ")");
  correct = hits;
  return loss / count;
}

double sigmoid_cross_entropy(const Tensor& logits, const Tensor& targets, double count, float scale,
                             const Tensor& grad, int64_t& correct) {
  require_same_size(logits, targets, "sigmoid_cross_entropy (logits vs targets)");
  const bool with_grad = !grad.empty();
  if (with_grad) require_same_size(logits, grad, "sigmoid_cross_entropy (logits vs gradient)");
  const auto lv = logits.view();
  const auto tv = targets.view();
  const auto gv = grad.view();
  const double grad_scale = 1.0 / count * static_cast<double>(scale);
  double loss = 0.0;
  int64_t hits = 0, invalid = 0;
  Kokkos::parallel_reduce(
      "tessera::sigmoid_cross_entropy", RangePolicy(0, logits.numel()),
      KOKKOS_LAMBDA(const int64_t i, double& loss_acc, int64_t& hit_acc, int64_t& invalid_acc) {
        const double x = lv(i), t = tv(i);
        if (!(t >= 0.0 && t <= 1.0)) {  // written so that NaN is invalid too
          ++invalid_acc;
          return;
        }
        // exp of −|x| only: neither tail overflows, and log1p keeps the small one's digits.
        const double e = math::exp(-math::abs(x));
        loss_acc += (x > 0.0 ? x : 0.0) - x * t + math::log1p(e);
        if ((x > 0.0) == (t > 0.5)) ++hit_acc;
        if (with_grad) {
          const double sigma = x >= 0.0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
          gv(i) = static_cast<float>(grad_scale * (sigma - t));
        }
      },
      loss, hits, invalid);
  if (invalid > 0)
    throw Error("sigmoid_cross_entropy: " + std::to_string(invalid) + " of " + std::to_string(targets.numel()) +
                " targets are not in [0, 1]");
  correct = hits;
  return loss / count;
}

}  // namespace tessera::kokkos_backend

// The kernels of bcpnn_kernels.hpp. Reductions loop in a fixed order inside one work item
// (no atomics), so the results do not depend on the thread count.
#include "tessera/backends/kokkos/bcpnn_kernels.hpp"

#include <algorithm>
#include <string>

#include "tessera/core/error.hpp"
#include "tessera/core/half_float.hpp"
#include "tessera/core/kokkos_compat.hpp"
#include "tessera/core/rng.hpp"

namespace tessera::kokkos_backend {
namespace {

/// Element access to a tensor of any element type, in fp32 on the device.
struct AnyTypeView {
  DeviceView<float> f;
  DeviceView<uint16_t> h;
  ElementType type = ElementType::fp32;

  explicit AnyTypeView(const Tensor& t) : type(t.type()) {
    if (type == ElementType::fp32)
      f = t.view();
    else
      h = t.half_view();
  }
  KOKKOS_INLINE_FUNCTION float get(int64_t i) const {
    return type == ElementType::fp32 ? f(i) : half_float::from_half(h(i), type);
  }
  KOKKOS_INLINE_FUNCTION void set(int64_t i, float v) const {
    if (type == ElementType::fp32)
      f(i) = v;
    else
      h(i) = half_float::to_half(v, type);
  }
};

void require_fp32(const Tensor& t, const char* what) {
  require_shape(t.type() == ElementType::fp32, std::string("bcpnn kernels: ") + what + " must be fp32");
}

int64_t rows_of(const Tensor& t) { return t.shape().rank() == 0 ? 1 : t.shape()[0]; }

/// w_ij = log((p_ij + ε²) / ((p_i + ε)(p_j + ε))), given p_i + ε and p_j + ε: the one formula
/// of bcpnn_weights and bcpnn_joint_step.
KOKKOS_INLINE_FUNCTION float bayesian_weight(float p_ij, float pi_eps, float pj_eps, float eps2) {
  return math::log((p_ij + eps2) / (pi_eps * pj_eps));
}

}  // namespace

void complementary_encode(const Tensor& x, const Tensor& out) {
  const int64_t n = rows_of(x), features = x.numel() / std::max<int64_t>(n, 1);
  require_shape(out.numel() == 2 * x.numel(), "complementary_encode: input " + x.shape().str() +
                                                  " needs an output of twice its size, got " + out.shape().str());
  const AnyTypeView in(x), o(out);
  Kokkos::parallel_for(
      "tessera::bcpnn_complementary_encode", RangePolicy(0, n * features), KOKKOS_LAMBDA(const int64_t k) {
        const float v = in.get(k);
        o.set(2 * k, v);
        o.set(2 * k + 1, 1.0f - v);
      });
}

void hypercolumn_softmax(const Tensor& support, int64_t minicolumns, const Tensor& y) {
  const int64_t n = rows_of(support), units = support.numel() / std::max<int64_t>(n, 1);
  require_shape(minicolumns > 0 && units % minicolumns == 0,
                "hypercolumn_softmax: " + std::to_string(units) + " units are not whole hypercolumns of " +
                    std::to_string(minicolumns));
  require_shape(y.numel() == support.numel(), "hypercolumn_softmax: output " + y.shape().str() +
                                                  " differs from the support " + support.shape().str());
  const int64_t m = minicolumns, columns = n * (units / m);
  const AnyTypeView s(support), out(y);
  Kokkos::parallel_for(
      "tessera::bcpnn_hypercolumn_softmax", RangePolicy(0, columns), KOKKOS_LAMBDA(const int64_t c) {
        const int64_t first = c * m;
        float top = s.get(first);
        for (int64_t k = 1; k < m; ++k) top = s.get(first + k) > top ? s.get(first + k) : top;
        float total = 0.0f;
        for (int64_t k = 0; k < m; ++k) total += math::exp(s.get(first + k) - top);
        const float inv = 1.0f / total;
        // Read again rather than kept: support and y may be one tensor of a 16-bit type.
        for (int64_t k = 0; k < m; ++k) out.set(first + k, math::exp(s.get(first + k) - top) * inv);
      });
}

void column_sums(const Tensor& x, const Tensor& sums) {
  require_fp32(sums, "the column sums");
  const int64_t n = rows_of(x), features = x.numel() / std::max<int64_t>(n, 1);
  require_shape(sums.numel() == features, "column_sums: " + std::to_string(features) + " columns, " +
                                              std::to_string(sums.numel()) + " sums");
  const AnyTypeView in(x);
  const auto out = sums.view();
  Kokkos::parallel_for(
      "tessera::bcpnn_column_sums", RangePolicy(0, features), KOKKOS_LAMBDA(const int64_t f) {
        double acc = 0.0;
        for (int64_t r = 0; r < n; ++r) acc += static_cast<double>(in.get(r * features + f));
        out(f) = static_cast<float>(acc);
      });
}

void bcpnn_weights(const Tensor& p_i, const Tensor& p_j, const Tensor& p_ij, const Tensor& mask,
                   const BcpnnTraceSettings& s, const Tensor& w) {
  for (const Tensor* t : {&p_i, &p_j, &p_ij, &mask, &w}) require_fp32(*t, "traces, mask and weights");
  const int64_t inputs = p_i.numel(), outputs = p_j.numel();
  const int64_t in_columns = inputs / s.input_minicolumns;
  require_shape(p_ij.numel() == inputs * outputs && w.numel() == inputs * outputs &&
                    mask.numel() == in_columns * (outputs / s.output_minicolumns),
                "bcpnn_weights: traces " + p_i.shape().str() + ", " + p_j.shape().str() + ", " + p_ij.shape().str() +
                    ", mask " + mask.shape().str() + " and weights " + w.shape().str() + " do not fit together");
  const auto pi = p_i.view(), pj = p_j.view(), pij = p_ij.view(), on = mask.view(), wv = w.view();
  const int64_t min = s.input_minicolumns, mout = s.output_minicolumns;
  const float eps = s.eps, eps2 = s.eps * s.eps;
  Kokkos::parallel_for(
      "tessera::bcpnn_weights", RangePolicy(0, inputs * outputs), KOKKOS_LAMBDA(const int64_t k) {
        const int64_t j = k / inputs, i = k - j * inputs;
        const bool connected = on((j / mout) * in_columns + i / min) != 0.0f;
        wv(k) = connected ? bayesian_weight(pij(k), pi(i) + eps, pj(j) + eps, eps2) : 0.0f;
      });
}

void bcpnn_joint_step(const Tensor& s_ij, float rate, float scale, ElementType trace_type, const Tensor& p_i,
                      const Tensor& p_j, const Tensor& p_ij, const Tensor& mask, const BcpnnTraceSettings& s,
                      const Tensor& w) {
  for (const Tensor* t : {&s_ij, &p_i, &p_j, &p_ij, &mask, &w}) require_fp32(*t, "sums, traces, mask and weights");
  const int64_t inputs = p_i.numel(), outputs = p_j.numel();
  const int64_t min = s.input_minicolumns, mout = s.output_minicolumns, in_columns = inputs / min;
  require_shape(s_ij.numel() == inputs * outputs && p_ij.numel() == inputs * outputs && w.numel() == inputs * outputs &&
                    mask.numel() == in_columns * (outputs / mout),
                "bcpnn_joint_step: sums " + s_ij.shape().str() + ", traces " + p_ij.shape().str() + ", mask " +
                    mask.shape().str() + " and weights " + w.shape().str() + " do not fit " +
                    std::to_string(outputs) + "x" + std::to_string(inputs) + " units");
  const auto sums = s_ij.view(), pi = p_i.view(), pj = p_j.view(), pij = p_ij.view(), on = mask.view(),
             wv = w.view();
  const float keep = 1.0f - rate, eps = s.eps, eps2 = s.eps * s.eps;
  using Team = Kokkos::TeamPolicy<ExecSpace>::member_type;
  Kokkos::parallel_for(
      "tessera::bcpnn_joint_step", Kokkos::TeamPolicy<ExecSpace>(static_cast<int>(outputs), Kokkos::AUTO),
      KOKKOS_LAMBDA(const Team& team) {
        const int64_t j = team.league_rank();
        const int64_t row = j * inputs, mask_row = (j / mout) * in_columns;
        const float pj_eps = pj(j) + eps;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, in_columns), [&](const int64_t g) {
          const bool connected = on(mask_row + g) != 0.0f;
          for (int64_t i = g * min; i < (g + 1) * min; ++i) {
            const float p = half_float::rounded(keep * pij(row + i) + scale * sums(row + i), trace_type);
            pij(row + i) = p;
            if (connected) wv(row + i) = bayesian_weight(p, pi(i) + eps, pj_eps, eps2);
          }
        });
      });
}

void bcpnn_bias(const Tensor& p_j, const BiasRegulation& r, const BcpnnTraceSettings& s, const Tensor& k_beta,
                const Tensor& b) {
  for (const Tensor* t : {&p_j, &k_beta, &b}) require_fp32(*t, "traces, bias gains and biases");
  require_shape(k_beta.numel() == p_j.numel() && b.numel() == p_j.numel(),
                "bcpnn_bias: " + std::to_string(p_j.numel()) + " units, bias gains " + k_beta.shape().str() +
                    ", biases " + b.shape().str());
  const auto pj = p_j.view(), kb = k_beta.view(), bv = b.view();
  const float quarter = r.p_min / 4.0f, k_half = r.k_half, rate = r.rate, eps = s.eps;
  const float k = (k_half - 1.0f) * quarter * quarter;
  const bool regulated = k_half != 1.0f && rate > 0.0f;
  Kokkos::parallel_for(
      "tessera::bcpnn_bias", RangePolicy(0, p_j.numel()), KOKKOS_LAMBDA(const int64_t j) {
        const float p = pj(j);
        if (regulated) {
          float target = k_half;
          if (p > quarter) {
            const float d = p - quarter;
            const float gain = 1.0f + k / (d * d);
            target = gain < k_half ? k_half : gain;
          }
          kb(j) = (1.0f - rate) * kb(j) + rate * target;
        }
        bv(j) = kb(j) * math::log(p + eps);
      });
}

void hypercolumn_mutual_information(const Tensor& p_i, const Tensor& p_j, const Tensor& p_ij,
                                    const BcpnnTraceSettings& s, const Tensor& mi) {
  for (const Tensor* t : {&p_i, &p_j, &p_ij, &mi}) require_fp32(*t, "traces and mutual information");
  const int64_t inputs = p_i.numel(), outputs = p_j.numel();
  const int64_t min = s.input_minicolumns, mout = s.output_minicolumns;
  const int64_t in_columns = inputs / min, out_columns = outputs / mout;
  require_shape(p_ij.numel() == inputs * outputs && mi.numel() == in_columns * out_columns,
                "hypercolumn_mutual_information: traces " + p_ij.shape().str() + " and result " + mi.shape().str() +
                    " do not fit " + std::to_string(out_columns) + "x" + std::to_string(in_columns) + " hypercolumns");
  const auto pi = p_i.view(), pj = p_j.view(), pij = p_ij.view(), out = mi.view();
  const double eps = s.eps, eps2 = eps * eps;
  Kokkos::parallel_for(
      "tessera::bcpnn_mutual_information", RangePolicy(0, in_columns * out_columns), KOKKOS_LAMBDA(const int64_t c) {
        const int64_t h = c / in_columns, g = c - h * in_columns;
        double acc = 0.0;
        for (int64_t j = h * mout; j < (h + 1) * mout; ++j)
          for (int64_t i = g * min; i < (g + 1) * min; ++i) {
            const double joint = static_cast<double>(pij(j * inputs + i)) + eps2;
            acc += joint * math::log(joint / ((static_cast<double>(pi(i)) + eps) * (static_cast<double>(pj(j)) + eps)));
          }
        out(c) = static_cast<float>(acc);
      });
}

void round_to(const Tensor& t, ElementType type) {
  require_fp32(t, "a tensor rounded to 16 bits");
  if (type == ElementType::fp32) return;
  const auto v = t.view();
  Kokkos::parallel_for(
      "tessera::bcpnn_round_to", RangePolicy(0, t.numel()),
      KOKKOS_LAMBDA(const int64_t i) { v(i) = half_float::rounded(v(i), type); });
}

void jittered_joint_trace(const Tensor& p_i, const Tensor& p_j, float noise, uint64_t seed, uint64_t stream,
                          const Tensor& p_ij) {
  for (const Tensor* t : {&p_i, &p_j, &p_ij}) require_fp32(*t, "traces");
  const int64_t inputs = p_i.numel();
  require_shape(p_ij.numel() == inputs * p_j.numel(), "jittered_joint_trace: joint trace " + p_ij.shape().str() +
                                                          " does not fit " + std::to_string(p_j.numel()) + "x" +
                                                          std::to_string(inputs) + " units");
  const auto pi = p_i.view(), pj = p_j.view(), pij = p_ij.view();
  Kokkos::parallel_for(
      "tessera::bcpnn_jittered_joint_trace", RangePolicy(0, p_ij.numel()), KOKKOS_LAMBDA(const int64_t k) {
        const int64_t j = k / inputs, i = k - j * inputs;
        const float u = 2.0f * rng::uniform(seed, stream, static_cast<uint64_t>(k)) - 1.0f;
        pij(k) = pi(i) * pj(j) * (1.0f + noise * u);
      });
}

}  // namespace tessera::kokkos_backend

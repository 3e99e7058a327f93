#pragma once
// The activations, one row each. Everything else that knows an activation reads its row: the
// kind's name, its config key, the Kokkos kernels (value and derivative), the oneDNN mapping,
// whether the graph may run it after a max pool, the docs' key list and the builder's entry.
// Adding one: its enum value, its row and its place in `Activations` below, its lines in
// docs/config.md (a test compares them with ops::activation_docs) and its test. A row whose
// oneDNN algorithm is not in OnednnEltwise yet also adds that case to the oneDNN backend.
#include <cstddef>

#include "tessera/core/kokkos_compat.hpp"

namespace tessera::ops {

/// The activations of the table below, in its order.
enum class EltwiseKind { relu, leaky_relu, elu, tanh, scale, gelu, sigmoid };

/// The oneDNN eltwise algorithm that computes a row (named here so that ops needs no oneDNN);
/// `none`: the oneDNN backend declines the activation and Kokkos runs it.
enum class OnednnEltwise { none, relu, elu, tanh, linear, logistic };

/// The one number an activation may take from its config entry, its range and default.
struct ActivationKey {
  const char* name = nullptr;  // null: the activation takes no key
  double min = 0.0, max = 0.0, fallback = 0.0;
  const char* meaning = "";
};

/// A row of the table: the activation a row type describes, for code that holds a kind at run
/// time (the layer, the op descriptions, the oneDNN backend).
struct ActivationInfo {
  EltwiseKind kind;
  const char* name;
  const char* formula;  // for the docs
  ActivationKey key;
  OnednnEltwise onednn;
  /// Whether f is monotone non-decreasing for this key value: then max-pool(f(x)) equals
  /// f(max-pool(x)) and the gradient reaches the same element, so f may run after the pool.
  bool (*non_decreasing)(double key_value);
};

namespace activations {

KOKKOS_INLINE_FUNCTION float tanh_of(float x) { return ::tanhf(x); }
KOKKOS_INLINE_FUNCTION double tanh_of(double x) { return ::tanh(x); }
KOKKOS_INLINE_FUNCTION float erf_of(float x) { return ::erff(x); }
KOKKOS_INLINE_FUNCTION double erf_of(double x) { return ::erf(x); }

// For the piecewise rows x = 0 takes the negative branch, so the derivative there is the
// one-sided value on the left, as PyTorch uses. `a` is the key's value (0 without a key).

struct Relu {
  static constexpr EltwiseKind kind = EltwiseKind::relu;
  static constexpr const char* name = "relu";
  static constexpr const char* formula = "`max(x, 0)`";
  static constexpr ActivationKey key{};
  static constexpr OnednnEltwise onednn = OnednnEltwise::relu;
  static constexpr bool non_decreasing(double /*a*/) { return true; }
  template <class T>
  KOKKOS_INLINE_FUNCTION static T value(T x, T /*a*/) {
    return x > T(0) ? x : T(0);
  }
  template <class T>
  KOKKOS_INLINE_FUNCTION static T derivative(T x, T /*a*/) {
    return x > T(0) ? T(1) : T(0);
  }
};

struct LeakyRelu {
  static constexpr EltwiseKind kind = EltwiseKind::leaky_relu;
  static constexpr const char* name = "leaky_relu";
  static constexpr const char* formula = "`x` for `x > 0`, else `alpha·x`";
  static constexpr ActivationKey key{"alpha", 0.0, 1.0, 0.01, "negative slope"};
  // oneDNN's relu with a negative slope alpha is LeakyReLU.
  static constexpr OnednnEltwise onednn = OnednnEltwise::relu;
  static constexpr bool non_decreasing(double a) { return a >= 0.0; }
  template <class T>
  KOKKOS_INLINE_FUNCTION static T value(T x, T a) {
    return x > T(0) ? x : a * x;
  }
  template <class T>
  KOKKOS_INLINE_FUNCTION static T derivative(T x, T a) {
    return x > T(0) ? T(1) : a;
  }
};

struct Elu {
  static constexpr EltwiseKind kind = EltwiseKind::elu;
  static constexpr const char* name = "elu";
  static constexpr const char* formula = "`x` for `x > 0`, else `alpha·(exp(x) − 1)`";
  static constexpr ActivationKey key{"alpha", 0.0, 1e6, 1.0, "scale of the negative part"};
  // oneDNN's elu is alpha·(eˣ − 1) for x ≤ 0, as this one.
  static constexpr OnednnEltwise onednn = OnednnEltwise::elu;
  static constexpr bool non_decreasing(double a) { return a >= 0.0; }
  template <class T>
  KOKKOS_INLINE_FUNCTION static T value(T x, T a) {
    return x > T(0) ? x : a * (math::exp(x) - T(1));
  }
  template <class T>
  KOKKOS_INLINE_FUNCTION static T derivative(T x, T a) {
    return x > T(0) ? T(1) : a * math::exp(x);
  }
};

struct Tanh {
  static constexpr EltwiseKind kind = EltwiseKind::tanh;
  static constexpr const char* name = "tanh";
  static constexpr const char* formula = "`tanh(x)`";
  static constexpr ActivationKey key{};
  static constexpr OnednnEltwise onednn = OnednnEltwise::tanh;
  static constexpr bool non_decreasing(double /*a*/) { return true; }
  template <class T>
  KOKKOS_INLINE_FUNCTION static T value(T x, T /*a*/) {
    return tanh_of(x);
  }
  /// 1 − tanh², from x.
  template <class T>
  KOKKOS_INLINE_FUNCTION static T derivative(T x, T /*a*/) {
    const T t = tanh_of(x);
    return T(1) - t * t;
  }
};

/// A fixed (not trained) output scale, such as CosmoFlow's 1.2 after tanh.
struct Scale {
  static constexpr EltwiseKind kind = EltwiseKind::scale;
  static constexpr const char* name = "scale";
  static constexpr const char* formula = "`factor·x`, a fixed (not trained) factor";
  static constexpr ActivationKey key{"factor", -1e6, 1e6, 1.0, "the factor"};
  // oneDNN's linear is alpha·x + beta, with beta = 0.
  static constexpr OnednnEltwise onednn = OnednnEltwise::linear;
  static constexpr bool non_decreasing(double factor) { return factor >= 0.0; }
  template <class T>
  KOKKOS_INLINE_FUNCTION static T value(T x, T factor) {
    return factor * x;
  }
  template <class T>
  KOKKOS_INLINE_FUNCTION static T derivative(T /*x*/, T factor) {
    return factor;
  }
};

/// GELU, x·Φ(x) with Φ the standard normal distribution function (the exact form, not the
/// tanh approximation). It dips below 0 around x = −0.75, so it is not monotone and must not
/// move past a max pool. oneDNN's gelu_erf is not mapped: Kokkos runs it.
struct Gelu {
  static constexpr EltwiseKind kind = EltwiseKind::gelu;
  static constexpr const char* name = "gelu";
  static constexpr const char* formula = "`x·Φ(x)`, Φ the standard normal distribution function";
  static constexpr ActivationKey key{};
  static constexpr OnednnEltwise onednn = OnednnEltwise::none;
  static constexpr bool non_decreasing(double /*a*/) { return false; }
  template <class T>
  KOKKOS_INLINE_FUNCTION static T value(T x, T /*a*/) {
    return T(0.5) * x * (T(1) + erf_of(x * T(0.70710678118654752440)));
  }
  /// Φ(x) + x·φ(x).
  template <class T>
  KOKKOS_INLINE_FUNCTION static T derivative(T x, T /*a*/) {
    const T cdf = T(0.5) * (T(1) + erf_of(x * T(0.70710678118654752440)));
    const T pdf = T(0.39894228040143267794) * math::exp(T(-0.5) * x * x);
    return cdf + x * pdf;
  }
};

/// The logistic function, e.g. for a per-voxel probability such as a flood-filling network's
/// object mask (its training loss, sigmoid_cross_entropy, takes the logits, not this).
struct Sigmoid {
  static constexpr EltwiseKind kind = EltwiseKind::sigmoid;
  static constexpr const char* name = "sigmoid";
  static constexpr const char* formula = "`1/(1 + exp(−x))`";
  static constexpr ActivationKey key{};
  static constexpr OnednnEltwise onednn = OnednnEltwise::logistic;
  static constexpr bool non_decreasing(double /*a*/) { return true; }
  /// exp of a non-positive number only, so that large |x| neither overflows nor loses the
  /// small side's digits.
  template <class T>
  KOKKOS_INLINE_FUNCTION static T value(T x, T /*a*/) {
    if (x >= T(0)) return T(1) / (T(1) + math::exp(-x));
    const T e = math::exp(x);
    return e / (T(1) + e);
  }
  /// σ(x)·(1 − σ(x)).
  template <class T>
  KOKKOS_INLINE_FUNCTION static T derivative(T x, T a) {
    const T s = value(x, a);
    return s * (T(1) - s);
  }
};

}  // namespace activations

/// The run-time description of row type `Row`.
template <class Row>
constexpr ActivationInfo info_of() {
  return {Row::kind, Row::name, Row::formula, Row::key, Row::onednn, &Row::non_decreasing};
}

/// A table of rows, dispatched by kind on host and device.
template <class... Rows>
struct ActivationList {
  static constexpr size_t size = sizeof...(Rows);

  /// Calls f(Row{}) for each row, in order (host).
  template <class F>
  static void for_each(F&& f) {
    (f(Rows{}), ...);
  }
  /// True when row k's kind is the k-th kind: every kind has its row, in enum order.
  static constexpr bool kinds_in_order() {
    size_t k = 0;
    return ((static_cast<size_t>(Rows::kind) == k++) && ...);
  }
  template <class T>
  KOKKOS_INLINE_FUNCTION static T value(EltwiseKind kind, T x, T a) {
    T y = T(0);
    (void)((kind == Rows::kind ? (y = Rows::template value<T>(x, a), true) : false) || ...);
    return y;
  }
  template <class T>
  KOKKOS_INLINE_FUNCTION static T derivative(EltwiseKind kind, T x, T a) {
    T d = T(0);
    (void)((kind == Rows::kind ? (d = Rows::template derivative<T>(x, a), true) : false) || ...);
    return d;
  }
};

/// The table.
using Activations = ActivationList<activations::Relu, activations::LeakyRelu, activations::Elu, activations::Tanh,
                                   activations::Scale, activations::Gelu, activations::Sigmoid>;
static_assert(Activations::kinds_in_order(), "each EltwiseKind needs its row in Activations, in enum order");

/// The row of `kind`; throws Error for a kind without a row.
const ActivationInfo& activation_info(EltwiseKind kind);

}  // namespace tessera::ops

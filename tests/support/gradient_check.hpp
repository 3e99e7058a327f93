#pragma once
// Central finite differences for gradient tests. `loss(x)` evaluates a scalar function of a
// flat vector; the check compares a claimed gradient with (f(x+h) - f(x-h)) / 2h per element.
#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace tessera::testing {

struct GradientCheck {
  double max_abs_error = 0.0;
  double max_rel_error = 0.0;  // |a - n| / max(|a|, |n|, floor)
  size_t worst_index = 0;
  std::string str() const {
    return "max_abs_error=" + std::to_string(max_abs_error) + " max_rel_error=" + std::to_string(max_rel_error) +
           " at " + std::to_string(worst_index);
  }
};

/// Perturbs each element of `x` (or every `stride`-th one, for big tensors) by ±h.
template <class T>
GradientCheck check_gradient(std::vector<T> x, const std::vector<T>& analytic,
                             const std::function<double(const std::vector<T>&)>& loss, double h,
                             double floor = 1e-3, size_t stride = 1) {
  GradientCheck r;
  for (size_t i = 0; i < x.size(); i += stride) {
    const T saved = x[i];
    x[i] = static_cast<T>(saved + h);
    const double up = loss(x);
    x[i] = static_cast<T>(saved - h);
    const double down = loss(x);
    x[i] = saved;
    const double numeric = (up - down) / (2.0 * h);
    const double a = static_cast<double>(analytic[i]);
    const double abs_err = std::abs(a - numeric);
    const double rel_err = abs_err / std::max({std::abs(a), std::abs(numeric), floor});
    if (rel_err > r.max_rel_error) {
      r.max_rel_error = rel_err;
      r.worst_index = i;
    }
    r.max_abs_error = std::max(r.max_abs_error, abs_err);
  }
  return r;
}

/// Deterministic pseudo-random values in [lo, hi) for test inputs.
template <class T>
std::vector<T> random_vector(size_t n, unsigned seed, double lo = -1.0, double hi = 1.0) {
  std::vector<T> v(n);
  unsigned long long s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (auto& e : v) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    e = static_cast<T>(lo + (hi - lo) * static_cast<double>(s % 1000003) / 1000003.0);
  }
  return v;
}

}  // namespace tessera::testing

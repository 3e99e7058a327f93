#include "tessera/plan/collective_fit.hpp"

#include <cmath>
#include <limits>

#include "tessera/core/error.hpp"

namespace tessera::plan {

LinkCost fit_link_cost(Collective c, const std::vector<CollectiveSample>& samples) {
  return fit_link_cost(
      samples, [c](const CollectiveSample& s) { return alpha_beta_terms(c, s.ranks, s.bytes); },
      [](const CollectiveSample& s) { return s.seconds; }, collective_name(c));
}

LinkCost fit_link_cost(const std::vector<CollectiveSample>& samples,
                       const std::function<AlphaBetaTerms(const CollectiveSample&)>& terms,
                       const std::function<double(const CollectiveSample&)>& seconds, const std::string& what) {
  // With u = A/t, v = B/t (A, B the terms of α and β) every sample asks for u·α + v·β = 1.
  struct Row {
    double u, v;
  };
  std::vector<Row> rows;
  for (const auto& s : samples) {
    const double time = seconds(s);
    if (!(time > 0) || !std::isfinite(time)) continue;
    const AlphaBetaTerms t = terms(s);
    rows.push_back({t.alpha / time, t.beta / time});
  }
  if (rows.empty()) throw Error("fitting " + what + ": no timing with a positive duration");
  double uu = 0, uv = 0, vv = 0, u1 = 0, v1 = 0;
  for (const auto& r : rows) {
    uu += r.u * r.u;
    uv += r.u * r.v;
    vv += r.v * r.v;
    u1 += r.u;
    v1 += r.v;
  }
  const auto residual = [&](const LinkCost& l) {
    double sum = 0;
    for (const auto& r : rows) sum += std::pow(r.u * l.alpha + r.v * l.beta - 1, 2);
    return sum;
  };
  // Non-negative least squares in two unknowns: the unconstrained optimum when it is
  // non-negative, else the better of the two optima on the edges α = 0 and β = 0.
  const double det = uu * vv - uv * uv;
  if (det > 1e-12 * uu * vv) {
    const LinkCost inside{(u1 * vv - v1 * uv) / det, (v1 * uu - u1 * uv) / det};
    if (inside.alpha >= 0 && inside.beta >= 0) return inside;
  }
  LinkCost best{}, edge;
  double best_residual = std::numeric_limits<double>::infinity();
  if (uu > 0) {
    edge = {u1 / uu, 0};
    if (residual(edge) < best_residual) best_residual = residual(edge), best = edge;
  }
  if (vv > 0) {
    edge = {0, v1 / vv};
    if (residual(edge) < best_residual) best_residual = residual(edge), best = edge;
  }
  return best;
}

}  // namespace tessera::plan

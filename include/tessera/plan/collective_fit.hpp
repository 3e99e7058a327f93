#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tessera/plan/machine_profile.hpp"

namespace tessera::plan {

/// One timing of a collective: `ranks` ranks, `bytes` as LinkCost defines n, and the seconds
/// one call took (the slowest rank's, a median of repetitions).
struct CollectiveSample {
  int64_t ranks = 2;
  double bytes = 0, seconds = 0;
};

/// The α and β (both >= 0) of `c`'s formula that fit `samples` best in the least-squares sense
/// of relative error: Σ ((model − t) / t)². Relative, because the timings span six orders of
/// magnitude (8 B to MiB): in absolute terms the largest messages alone would decide α, which
/// only the small ones can tell. Throws Error when no sample has a positive time.
LinkCost fit_link_cost(Collective c, const std::vector<CollectiveSample>& samples);
/// The same with each sample's α and β terms given by `terms` and the time it must match by
/// `seconds` (what is left of the sample's time once a known part is taken away).
LinkCost fit_link_cost(const std::vector<CollectiveSample>& samples,
                       const std::function<AlphaBetaTerms(const CollectiveSample&)>& terms,
                       const std::function<double(const CollectiveSample&)>& seconds, const std::string& what);

}  // namespace tessera::plan

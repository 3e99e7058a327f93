#pragma once
#include <optional>
#include <vector>

namespace tessera::bench {

/// The performance-portability metric of Pennycook, Sewall and Lee ("A Metric for
/// Performance Portability", PMBS 2016; revisited in Future Generation Computer Systems 92,
/// 2019): over a set of platforms H, the harmonic mean of an application's efficiency on each,
///   PP(a, p, H) = |H| / Σ_{i∈H} 1/e_i(a, p)   if a runs on every platform of H, else 0.
/// `efficiencies` has one entry per platform of H; an empty optional (or an efficiency of 0) is
/// a platform the application cannot run on. An empty set has no portability: 0.
double performance_portability(const std::vector<std::optional<double>>& efficiencies);

}  // namespace tessera::bench

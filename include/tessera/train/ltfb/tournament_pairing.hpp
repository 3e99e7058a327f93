#pragma once
#include <cstdint>
#include <utility>
#include <vector>

namespace tessera::train {

/// The pairs of trainers that meet in round `round` of a population of `trainers`: a
/// permutation of 0..trainers−1 drawn from (seed, round) by the counter-based generator, cut
/// into consecutive pairs. Every rank computes the same pairs without communicating; with an
/// odd count the permutation's last trainer sits the round out. Each pair is ordered (lower
/// index, higher index).
std::vector<std::pair<int64_t, int64_t>> tournament_pairs(uint64_t seed, int64_t round, int64_t trainers);

/// Truncation selection: the `count` worst trainers by `metrics` (lower is better unless
/// `higher_is_better`; NaN is worst; ties go to the lower index) each paired with one of the
/// `count` best, the i-th best with the i-th worst, as (winner, loser).
std::vector<std::pair<int64_t, int64_t>> truncation_pairs(const std::vector<double>& metrics, int64_t count,
                                                          bool higher_is_better);

/// Whether `a` is a better tournament metric than `b` (NaN is never better).
bool better_metric(double a, double b, bool higher_is_better);

}  // namespace tessera::train

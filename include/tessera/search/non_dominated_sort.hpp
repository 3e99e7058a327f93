#pragma once
#include <cstddef>
#include <vector>

namespace tessera::search {

/// One candidate's objective values; every objective is minimised.
using Objectives = std::vector<double>;

/// Whether `a` Pareto-dominates `b`: no worse in every objective and better in one. Equal
/// points do not dominate each other.
bool dominates(const Objectives& a, const Objectives& b);

/// Deb's fast non-dominated sort (NSGA-II, Deb et al. 2002): front 0 holds the points no
/// other point dominates, front k those dominated only by points of fronts < k. Each front
/// lists indices into `points` in ascending order; duplicates share a front. Throws Error
/// when the points do not all have the same, non-zero number of objectives.
std::vector<std::vector<size_t>> non_dominated_sort(const std::vector<Objectives>& points);

}  // namespace tessera::search

#pragma once
#include <cstddef>
#include <vector>

#include "tessera/search/non_dominated_sort.hpp"

namespace tessera::search {

/// NSGA-II's crowding distance of each member of `front` (indices into `points`), in the
/// order of `front`: for every objective the members are sorted by it (ties by index), the two
/// ends get infinity, and each other member adds the gap between its neighbours divided by
/// the objective's range over the front. An objective with zero range adds nothing. Larger
/// means less crowded, so selection prefers it to keep the front spread out.
std::vector<double> crowding_distance(const std::vector<Objectives>& points, const std::vector<size_t>& front);

}  // namespace tessera::search

#pragma once
#include <string>
#include <vector>

#include "tessera/search/search_state.hpp"

namespace tessera::search {

/// An SVG picture of a search, written directly (no plotting tool at run time): every trained
/// candidate as a dot at (objective `x`, objective `y`), coloured by its generation; the final
/// Pareto front (`front`, indices into `state.history`, over all objectives) ringed; and the
/// (x, y) Pareto front of every trained candidate as a staircase line.
/// The x axis is logarithmic when its values span more than a factor of 20. Failed
/// candidates are left out. Returns the SVG text.
std::string front_svg(const SearchState& state, const std::vector<size_t>& front, size_t x, size_t y);

}  // namespace tessera::search

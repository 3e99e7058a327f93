#pragma once
#include <vector>

namespace tessera {

/// The median of `values` (the mean of the middle two for an even count); 0 for none. Timings
/// are summarised by it so that one preempted repetition does not move the figure.
double median(std::vector<double> values);

}  // namespace tessera

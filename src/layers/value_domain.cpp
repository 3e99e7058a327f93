#include "tessera/layers/value_domain.hpp"

#include "tessera/core/format.hpp"

namespace tessera::layers {

std::string ValueDomain::text() const {
  if (whole_numbers) return format("whole numbers from %g to %g", min, max);
  return format("values in [%g, %g]", min, max);
}

}  // namespace tessera::layers

#pragma once
#include <string>
#include <vector>

#include "tessera/ops/backend.hpp"

namespace tessera::registry {

/// Names of the backends compiled into this build in the order "auto" tries them: vendor
/// backends first, Kokkos (which has every op) last.
std::vector<std::string> available_backends();
/// A warning for a build whose convolutions can only run on the portable Kokkos kernels
/// (`backends` names neither onednn nor cudnn), saying what it costs and how to get the fast
/// build; "" for a build with either.
std::string portable_only_warning(const std::vector<std::string>& backends);
/// The backend called `name`; throws Error listing the available ones otherwise.
ops::Backend& backend(const std::string& name);

}  // namespace tessera::registry

#include "tessera/ops/eltwise.hpp"

#include <sstream>

namespace tessera::ops {

std::string EltwiseDesc::str() const {
  const ActivationInfo& row = activation_info(kind);
  std::ostringstream s;
  s << row.name;
  if (row.key.name) s << "(" << row.key.name << "=" << alpha << ")";
  if (type != ElementType::fp32) s << " in " << element_type_name(type);
  return s.str();
}

}  // namespace tessera::ops

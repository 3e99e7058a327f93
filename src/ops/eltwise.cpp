#include <sstream>

#include "tessera/ops/eltwise.hpp"

namespace tessera::ops {

std::string EltwiseDesc::str() const {
  std::ostringstream s;
  switch (kind) {
    case EltwiseKind::relu: return "relu";
    case EltwiseKind::leaky_relu: s << "leaky_relu(alpha=" << alpha << ")"; break;
    case EltwiseKind::elu: s << "elu(alpha=" << alpha << ")"; break;
    case EltwiseKind::tanh: return "tanh";
    case EltwiseKind::scale: s << "scale(factor=" << alpha << ")"; break;
  }
  return s.str();
}

}  // namespace tessera::ops

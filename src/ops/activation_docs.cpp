#include "tessera/ops/activation_docs.hpp"

#include <cmath>

#include "tessera/core/format.hpp"

namespace tessera::ops {
namespace {

/// A key's bound as the docs write it: 10⁶ rather than 1e+06.
std::string doc_number(double v) {
  static const char* const superscript[] = {"⁰", "¹", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸", "⁹"};
  const double exponent = std::log10(std::abs(v));
  if (std::abs(v) < 1000.0 || exponent != std::floor(exponent) || exponent > 9.0) return format("%g", v);
  return std::string(v < 0 ? "−" : "") + "10" + superscript[static_cast<int>(exponent)];
}

}  // namespace

std::string activation_type_list(const std::vector<ActivationInfo>& rows) {
  std::string s;
  for (const ActivationInfo& r : rows) s += (s.empty() ? "`" : ", `") + std::string(r.name) + "`";
  return s;
}

std::string activation_docs(const std::vector<ActivationInfo>& rows) {
  std::string heading, lines, keys;
  for (const ActivationInfo& r : rows) {
    heading += (heading.empty() ? "" : ", ") + std::string(r.name);
    lines += format("`%s`: %s%s.\n", r.name, r.formula, r.key.name ? "" : ", no keys");
    if (r.key.name)
      keys += format("| `%s` | number in [%s, %s] | `%g` | `%s` | %s |\n", r.key.name, doc_number(r.key.min).c_str(),
                     doc_number(r.key.max).c_str(), r.key.fallback, r.name, r.key.meaning);
  }
  return "### " + heading + "\n\n" + lines +
         "\n| key | type | default | applies to | meaning |\n|---|---|---|---|---|\n" + keys;
}

}  // namespace tessera::ops

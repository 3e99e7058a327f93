#pragma once
// A typed ModelBuilder entry for every layer type, by the type it writes, for the tests that
// go over every layer type (a builder entry per type, the traits table of docs/design.md).
#include <map>
#include <string>
#include <vector>

#include "tessera/model/layer_entry.hpp"

namespace tessera::test {

/// The typed entries by the type they write; activations come from their table.
inline std::map<std::string, model::spec::LayerEntry> typed_layer_entries() {
  namespace spec = model::spec;
  const std::vector<spec::LayerEntry> entries{
      spec::conv2d(4),           spec::conv3d(4),           spec::conv_transpose2d(4), spec::conv_transpose3d(4),
      spec::max_pool2d(),        spec::max_pool3d(),        spec::avg_pool2d(),        spec::avg_pool3d(),
      spec::global_avg_pool2d(), spec::global_avg_pool3d(), spec::batch_norm(),        spec::dense(4),
      spec::dropout(),           spec::flatten(),           spec::add({"a", "b"}),     spec::concat({"a", "b"}),
      spec::bcpnn(2, 3)};
  std::map<std::string, spec::LayerEntry> by_type;
  for (const auto& e : entries) by_type.emplace(e.type(), e);
  ops::Activations::for_each([&](auto row) {
    const spec::LayerEntry e = spec::activation<decltype(row)>();
    by_type.emplace(e.type(), e);
  });
  return by_type;
}

}  // namespace tessera::test

#pragma once
// The activations' part of docs/config.md, generated from the table so that a test can hold
// the docs to it: a new row shows up in the expected text and the test fails until the docs
// list it.
#include <string>
#include <vector>

#include "tessera/ops/activations.hpp"

namespace tessera::ops {

/// The rows of table `List` (ops::Activations, or a test's list with a row of its own).
template <class List = Activations>
std::vector<ActivationInfo> activation_rows() {
  std::vector<ActivationInfo> rows;
  List::for_each([&](auto row) { rows.push_back(info_of<decltype(row)>()); });
  return rows;
}

/// "`relu`, `leaky_relu`, ...": the type names, as the layer types table lists them.
std::string activation_type_list(const std::vector<ActivationInfo>& rows);

/// The activations' section of docs/config.md: heading, one line per activation and the
/// table of their keys with range, default and meaning.
std::string activation_docs(const std::vector<ActivationInfo>& rows);

}  // namespace tessera::ops

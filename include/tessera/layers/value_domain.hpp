#pragma once
#include <string>

namespace tessera::layers {

/// The values a layer documents for its input, or a loss for its targets: [min, max], finite,
/// and whole numbers for class indices. Declared by the layer or loss that documents it
/// (Layer::input_domain, Loss::target_domain), so the trainer refuses the first batch outside
/// it, naming the layer and the data set, instead of training on it silently or diverging.
struct ValueDomain {
  double min = 0, max = 1;
  bool whole_numbers = false;
  /// "values in [0, 1]", "whole numbers from 0 to 9".
  std::string text() const;
};

}  // namespace tessera::layers

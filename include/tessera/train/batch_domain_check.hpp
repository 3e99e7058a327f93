#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tessera/core/tensor.hpp"
#include "tessera/layers/loss.hpp"
#include "tessera/model/model.hpp"

namespace tessera::train {

/// Checks every batch a run reads against the domains its model and loss document: the input
/// of the layers that read the model's input (Model::input_domains: a bcpnn layer with
/// complementary encoding takes [0, 1]) and the loss's targets (Loss::target_domain: class
/// indices of softmax_cross_entropy, probabilities of sigmoid_cross_entropy). The first batch
/// outside is refused with a ConfigError naming the layer or loss, the data set and the range
/// found, instead of training silently on it or diverging with a message that blames the
/// learning rate. One pass over the batch where a domain is declared, none where not.
class BatchDomainCheck {
 public:
  /// `prediction`: the model's output shape (the loss's domain may depend on it);
  /// `loss_key`: the config key that chose the loss.
  BatchDomainCheck(const model::Model& model, const layers::Loss& loss, const Shape& prediction,
                   std::string loss_key = "$.loss.type");

  /// `batch` names the batch and its data set for an error ("the batch of step 12 of the
  /// training data (hdf5: ...)"); called only when one is refused.
  void check(const Tensor& inputs, const Tensor& targets, const std::function<std::string()>& batch) const;

 private:
  std::vector<model::Model::InputDomain> inputs_;
  std::optional<layers::ValueDomain> targets_;
  std::string loss_type_, loss_key_;
};

}  // namespace tessera::train

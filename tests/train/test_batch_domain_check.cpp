// The domains layers and losses document are checked on every batch: the first batch outside
// one is refused naming the layer or loss key, the data set and the values found; a batch
// inside passes, and a model that declares nothing costs nothing.
#include <catch2/catch.hpp>

#include <cmath>

#include "tessera/core/config.hpp"
#include "tessera/core/error.hpp"
#include "tessera/layers/loss.hpp"
#include "tessera/model/model.hpp"
#include "tessera/train/batch_domain_check.hpp"

using namespace tessera;
using nlohmann::json;

namespace {

std::unique_ptr<model::Model> model_of(const json& layers) {
  json spec = {{"input", {{"channels", 1}, {"size", {2, 2}}}}, {"layers", layers}};
  ConfigObject cfg(spec, "$.model");
  return model::Model::from_json(cfg, {});
}

Tensor tensor_of(const Shape& shape, const std::vector<float>& values) {
  Tensor t(shape);
  t.copy_from_host(values);
  return t;
}

const auto kBatch = [] { return std::string("the batch of step 3 of the training data (test)"); };

std::string refusal(const train::BatchDomainCheck& check, const Tensor& x, const Tensor& y) {
  try {
    check.check(x, y, kBatch);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("a bcpnn layer with complementary encoding refuses a batch of inputs outside [0, 1]", "[train][domain]") {
  const auto m = model_of(json::array({{{"name", "h"}, {"type", "bcpnn"}, {"hypercolumns", 2}, {"minicolumns", 2}},
                                       {{"name", "out"}, {"type", "dense"}, {"units", 3}}}));
  const auto mse = layers::Loss::make("mse");
  const train::BatchDomainCheck check(*m, *mse, m->output_shape(1));
  const Tensor targets = tensor_of({2, 3}, {0, 0, 0, 0, 0, 0});
  CHECK(refusal(check, tensor_of({2, 2, 2, 1}, {0, 0.5f, 1, 0.25f, 0, 1, 1, 0}), targets) == "accepted");
  CHECK(refusal(check, tensor_of({2, 2, 2, 1}, {0, 0.5f, 1, 0.25f, -0.5f, 1, 3, 0}), targets) ==
        "$.model.layers[0]: layer 'h' (bcpnn) takes input values in [0, 1], but the batch of step 3 of the training "
        "data (test) holds values from -0.5 to 3; scale the data into that range (the data section's \"normalize\": "
        "{\"mean\": its least "
        "value, \"std\": its largest minus its least})");
  // Not finite: refused whatever the layers declare (a broken file, not data).
  CHECK(refusal(check, tensor_of({2, 2, 2, 1}, {0, NAN, 1, 0, 0, 1, INFINITY, 0}),
                tensor_of({2, 3}, {0, 0, 0, 0, NAN, 0})) ==
        "$.data: the batch of step 3 of the training data (test) holds 2 input and 1 target value(s) that are NaN or "
        "infinite");

  // Without the encoding the layer reads another bcpnn's output and declares nothing.
  const auto plain = model_of(json::array({{{"name", "h"},
                                            {"type", "bcpnn"},
                                            {"hypercolumns", 2},
                                            {"minicolumns", 2},
                                            {"encoding", "none"},
                                            {"input_minicolumns", 2}}}));
  CHECK(plain->input_domains().empty());
}

TEST_CASE("softmax and sigmoid cross-entropy refuse targets outside their documented domains", "[train][domain]") {
  const auto m = model_of(json::array({{{"type", "flatten"}}, {{"name", "out"}, {"type", "dense"}, {"units", 3}}}));
  CHECK(m->input_domains().empty());
  const Tensor inputs = tensor_of({2, 2, 2, 1}, {-9, 0, 9, 0, 0, 0, 0, 0});  // any value: no layer declares a domain

  const auto softmax = layers::Loss::make("softmax_cross_entropy");
  const train::BatchDomainCheck classes(*m, *softmax, m->output_shape(1));
  CHECK(refusal(classes, inputs, tensor_of({2}, {0, 2})) == "accepted");
  CHECK(refusal(classes, inputs, tensor_of({2}, {0, 3})) ==
        "$.loss.type: softmax_cross_entropy takes targets that are whole numbers from 0 to 2, but the batch of step 3 "
        "of the training data (test) holds values from 0 to 3");
  CHECK_THAT(refusal(classes, inputs, tensor_of({2}, {-1, 1})), Catch::Contains("holds values from -1 to 1"));
  CHECK_THAT(refusal(classes, inputs, tensor_of({2}, {0.5f, 1})),
             Catch::Contains("holds 1 value(s) that are not whole numbers"));

  const auto sigmoid = layers::Loss::make("sigmoid_cross_entropy");
  const train::BatchDomainCheck probabilities(*m, *sigmoid, m->output_shape(1));
  CHECK(refusal(probabilities, inputs, tensor_of({2, 3}, {0, 0.5f, 1, 1, 0, 0.25f})) == "accepted");
  CHECK_THAT(refusal(probabilities, inputs, tensor_of({2, 3}, {0, 0.5f, 1, 1, 0, 1.5f})),
             Catch::StartsWith("$.loss.type: sigmoid_cross_entropy takes targets that are values in [0, 1]") &&
                 Catch::EndsWith("holds values from 0 to 1.5"));

  const auto mse = layers::Loss::make("mse");
  const train::BatchDomainCheck none(*m, *mse, m->output_shape(1));
  CHECK(refusal(none, inputs, tensor_of({2, 3}, {-1e30f, 0, 1e30f, 0, 0, 0})) == "accepted");
  CHECK_THAT(refusal(none, inputs, tensor_of({2, 3}, {0, 0, -INFINITY, 0, 0, 0})),
             Catch::Contains("0 input and 1 target value(s) that are NaN or infinite"));
}

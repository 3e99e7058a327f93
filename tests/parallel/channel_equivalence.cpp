// Run under mpirun with a distribution that splits channels, e.g.
// `channel_equivalence '{"sample": 2, "filter": 2}'` at 4 ranks: builds models whose
// convolution blocks (conv, transposed conv, batch norm, activation, pooling, dropout, add,
// concat) and dense layers run under that distribution, runs a forward and backward pass on
// a fixed global batch, and
// checks that every rank's block of the output, its shard of every parameter's initial value
// and its shard of every parameter's gradient (summed over the ranks that hold that shard)
// equal the model run on one rank alone. Exit status 0 on every rank when they do.
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "support/activation_blocks.hpp"
#include "support/mpi_program.hpp"
#include "tessera/core/config.hpp"
#include "tessera/model/layer_entry.hpp"
#include "tessera/model/model.hpp"
#include "tessera/model/model_spec.hpp"
#include "tessera/parallel/communicator.hpp"

using namespace tessera;
using nlohmann::json;
using testing::block_of;

namespace {

struct Outcome {
  double output_diff = 0, output_scale = 0, value_diff = 0, grad_diff = 0, grad_scale = 0;
  int shards = 0;  // parameters this rank holds a slice of
};

void track(double& diff, double& scale, float got, float want) {
  diff = std::max(diff, static_cast<double>(std::abs(got - want)));
  scale = std::max(scale, static_cast<double>(std::abs(want)));
}

/// `layers`: "@split" stands for the distribution under test, "@dense" for it with its
/// spatial parts folded into samples (features cannot split in space), "@samples" for
/// {sample: ranks}; layers without one run under the model's own distribution, the tested
/// one with its channel parts folded into samples (model inputs keep whole channels).
/// The model under `split` (channel/filter split layers, "@dense" for the head's layout,
/// "@samples" for {sample: ranks}), and the same model on one rank.
std::pair<std::unique_ptr<model::Model>, std::unique_ptr<model::Model>> build_models(
    const json& input, json layers, const json& split, const parallel::Communicator& world) {
  const int parts = split.value("channel", 1) * split.value("filter", 1);
  const int spatial = split.value("depth", 1) * split.value("height", 1) * split.value("width", 1);
  json model_distribution = split, dense = split;
  model_distribution.erase("channel");
  model_distribution.erase("filter");
  model_distribution.erase("weights");  // the layers under test shard theirs; the others keep copies
  model_distribution["sample"] = split.value("sample", 1) * parts;
  for (const char* axis : {"depth", "height", "width"}) dense.erase(axis);
  dense["sample"] = split.value("sample", 1) * spatial;
  for (auto& l : layers) {
    if (l.contains("distribution")) {
      const std::string d = l["distribution"];
      l["distribution"] = d == "@split" ? split : d == "@dense" ? dense : json{{"sample", world.size()}};
    }
    if (l["type"] == "batch_norm") l["sync"] = true;  // equal to one rank under sample splits too
  }
  const json parallel_spec = {{"input", input}, {"distribution", model_distribution}, {"layers", layers}};
  json serial_layers = layers;
  for (auto& l : serial_layers) l.erase("distribution");
  const json serial_spec = {{"input", input}, {"layers", serial_layers}};

  model::BuildOptions po, so;
  po.seed = so.seed = 11;
  po.group = world;
  so.group = parallel::Communicator::self();
  ConfigObject pc(parallel_spec, "$.model"), sc(serial_spec, "$.model");
  return {model::Model::from_json(pc, po), model::Model::from_json(sc, so)};
}

/// Each parameter's initial values (a shard's, against its part of the whole) and how many are
/// sharded.
void compare_initial_values(const model::Model& parallel, const model::Model& serial, Outcome& o) {
  for (const auto& p : parallel.parameters().all()) {
    const auto* s = serial.parameters().find(p->name);
    if (s == nullptr) throw Error("parameter '" + p->name + "' exists only in the split model");
    o.shards += p->shard.split() ? 1 : 0;
    const auto got = p->value.to_host(), want = s->value.to_host();
    double unused = 0;
    for (size_t i = 0; i < got.size(); ++i)
      track(o.value_diff, unused, got[i], want[static_cast<size_t>(p->shard.whole_index(static_cast<int64_t>(i)))]);
  }
}

/// Each parameter's gradient (a shard's summed over its replicas, the others over the world)
/// against the 1-rank model's.
void compare_gradients(const model::Model& parallel, const model::Model& serial, const parallel::Communicator& world,
                       Outcome& o) {
  for (const auto& p : parallel.parameters().all()) {
    if (!p->trainable) continue;
    Tensor g = p->grad.clone();
    (p->shard.split() ? p->shard.replicas : world).allreduce_sum(g);
    const auto got = g.to_host(), want = serial.parameters().find(p->name)->grad.to_host();
    for (size_t i = 0; i < got.size(); ++i)
      track(o.grad_diff, o.grad_scale, got[i],
            want[static_cast<size_t>(p->shard.whole_index(static_cast<int64_t>(i)))]);
  }
}

Outcome compare(const json& input, const json& layers, const json& split, int64_t batch,
                const parallel::Communicator& world) {
  const auto [parallel, serial] = build_models(input, layers, split, world);
  Outcome o;
  compare_initial_values(*parallel, *serial, o);

  const Shape in_shape = testing::batched(batch, serial->sample_shape());
  const std::vector<float> x = testing::global_values(in_shape, 1);
  Tensor xs(in_shape), xp(parallel->input_grid().local_shape(in_shape, "test"));
  xs.copy_from_host(x);
  xp.copy_from_host(block_of(x, in_shape, parallel->input_grid()));

  const layers::StepInfo step{layers::Mode::training, 3, batch};
  const auto ys = serial->forward(xs, step).to_host();
  const Tensor& yp_t = parallel->forward(xp, step);
  const auto yp = yp_t.to_host();
  const Shape out_shape = serial->output_shape(batch);
  const auto ys_block = block_of(ys, out_shape, parallel->output_grid());
  if (ys_block.size() != yp.size()) throw Error("output block sizes differ");
  for (size_t i = 0; i < yp.size(); ++i) track(o.output_diff, o.output_scale, yp[i], ys_block[i]);

  const std::vector<float> dy = testing::global_values(out_shape, 2, 1.0f / static_cast<float>(batch));
  Tensor dys(out_shape), dyp(yp_t.shape());
  dys.copy_from_host(dy);
  auto dy_block = block_of(dy, out_shape, parallel->output_grid());
  if (out_shape.rank() == 2)  // features are copies over a spatial group, each with a share
    for (auto& v : dy_block) v /= static_cast<float>(parallel->output_grid().spatial().size());
  dyp.copy_from_host(dy_block);
  serial->backward(dys, step);
  parallel->backward(dyp, step);
  compare_gradients(*parallel, *serial, world, o);
  return o;
}

/// The 3D model: split convolutions, batch norm, pooling, dropout, a transposed convolution, add
/// and concat, then a dense head in its own layout.
json layers_3d() {
  return json::parse(R"([
    {"name": "c1", "type": "conv3d", "filters": 8, "padding": 1, "distribution": "@split"},
    {"name": "bn1", "type": "batch_norm", "distribution": "@split"},
    {"name": "act1", "type": "leaky_relu", "distribution": "@split"},
    {"name": "p1", "type": "max_pool3d", "distribution": "@split"},
    {"name": "c2", "type": "conv3d", "filters": 4, "padding": 1, "distribution": "@split"},
    {"name": "drop", "type": "dropout", "rate": 0.3, "distribution": "@split"},
    {"name": "up", "type": "conv_transpose3d", "filters": 4, "distribution": "@split"},
    {"name": "c3", "type": "conv3d", "filters": 4, "padding": 1, "stride": 2, "bias": false,
     "distribution": "@split"},
    {"name": "sum", "type": "add", "inputs": ["c3", "c2"], "distribution": "@split"},
    {"name": "cat", "type": "concat", "inputs": ["sum", "c2"], "distribution": "@split"},
    {"name": "ap", "type": "avg_pool3d", "distribution": "@split"},
    {"name": "c4", "type": "conv3d", "filters": 4, "padding": 1},
    {"name": "flat", "type": "flatten", "distribution": "@samples"},
    {"name": "fc1", "type": "dense", "units": 8, "distribution": "@dense"},
    {"name": "bnf", "type": "batch_norm", "distribution": "@dense"},
    {"name": "act2", "type": "relu", "distribution": "@dense"},
    {"name": "fdrop", "type": "dropout", "rate": 0.2, "distribution": "@dense"},
    {"name": "fc2", "type": "dense", "units": 8, "distribution": "@dense"},
    {"name": "out", "type": "dense", "units": 3, "distribution": "@samples"}
  ])");
}

/// The 2D model: split convolutions, a transposed convolution, global average pooling, dense head.
json layers_2d() {
  return json::parse(R"([
    {"name": "c1", "type": "conv2d", "filters": 8, "padding": 1, "distribution": "@split"},
    {"name": "bn", "type": "batch_norm", "distribution": "@split"},
    {"name": "act", "type": "elu", "distribution": "@split"},
    {"name": "p1", "type": "max_pool2d", "distribution": "@split"},
    {"name": "c2", "type": "conv2d", "filters": 4, "padding": 1, "stride": 2, "distribution": "@split"},
    {"name": "up", "type": "conv_transpose2d", "filters": 4, "kernel": 3, "stride": 2, "padding": 1,
     "output_padding": 1, "distribution": "@split"},
    {"name": "c3", "type": "conv2d", "filters": 4, "kernel": 1, "distribution": "@split"},
    {"name": "gap", "type": "global_avg_pool2d", "distribution": "@dense"},
    {"name": "fc", "type": "dense", "units": 4, "distribution": "@dense"},
    {"name": "out", "type": "dense", "units": 3, "distribution": "@samples"}
  ])");
}

}  // namespace

int main(int argc, char* argv[]) {
  testing::MpiProgram program(argc, argv);
  const auto world = parallel::Communicator::world();
  int failed = 0;
  try {
    if (argc < 2) throw Error("usage: channel_equivalence DISTRIBUTION_JSON [2d]");
    // Read as a config reads it and written back with every count spelled out ("cube": q
    // as its three counts), which the test's model builder reads.
    const json text = json::parse(argv[1]);
    ConfigObject given(text, "distribution");
    const json split = model::spec::distribution_json(model::read_distribution(given));
    const bool two_d = argc > 2 && std::string(argv[2]) == "2d";
    const int64_t batch = 4 * split.value("sample", 1) * split.value("channel", 1) * split.value("filter", 1);
    json input, layers;
    if (!two_d) {
      input = {{"channels", 4}, {"size", {8, 8, 8}}};
      layers = layers_3d();
    } else {
      input = {{"channels", 4}, {"size", {8, 8}}};
      layers = layers_2d();
    }
    const Outcome o = compare(input, layers, split, batch, world);
    const bool ok = o.output_diff <= 1e-5 * std::max(1.0, o.output_scale) && o.value_diff == 0.0 &&
                    o.grad_diff <= 1e-5 * std::max(1.0, o.grad_scale) &&
                    (split.value("channel", 1) * split.value("filter", 1) == 1 || o.shards > 0) &&
                    (!split.contains("weights") || o.shards > 0);
    failed |= !ok;
    std::printf(
        "rank %d of %d, %s model, distribution %s: %d sharded parameters, initial values %s, max output difference "
        "%.2e (largest %.2f), max gradient difference %.2e (largest %.2f): %s\n",
        world.rank(), world.size(), two_d ? "2d" : "3d", split.dump().c_str(), o.shards,
        o.value_diff == 0.0 ? "equal" : "DIFFERENT", o.output_diff, o.output_scale, o.grad_diff, o.grad_scale,
        ok ? "equal" : "DIFFERENT");
  } catch (const std::exception& e) {
    return parallel::handle_fatal_error(e);
  }
  return program.exit_status(failed);
}

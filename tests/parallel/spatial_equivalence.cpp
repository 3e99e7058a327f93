// Run under mpirun with a distribution, e.g. `spatial_equivalence '{"depth": 2, "height": 2}'`
// at 4 ranks, then optionally 2d or 3d and the samples' extent (8; 14 or 16 over 3 ranks give
// blocks of different sizes, cut where the strided layers need): builds models whose layers split each sample over the
// given distribution (spatial and hybrid), runs a forward and backward pass on a fixed global batch, and checks that
// each rank's block of every output and the summed parameter gradients equal the model run on one rank alone; the split
// model runs with halo overlap on every layer that has an interior ("always"), and again exchanging first (false),
// whose outputs and gradients must agree with the overlapped ones to float rounding. Exit status 0 on every rank when
// they do.
//
// Models: a 3D U-Net-like DAG (conv with padding, stride 2 and dilation, batch norm, dropout,
// max/avg pooling incl. a padded 3x3x3 max pool, transposed conv, concat, add), a 2D variant,
// a CosmoFlow-like net whose dense layers run over samples behind a redistribution, and 2D and
// 3D ResNet-like blocks (strided 1x1 projection) ending in global average pooling.
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/activation_blocks.hpp"
#include "support/mpi_program.hpp"
#include "tessera/core/config.hpp"
#include "tessera/model/model.hpp"
#include "tessera/parallel/communicator.hpp"
#include "tessera/parallel/process_grid.hpp"

using namespace tessera;
using nlohmann::json;
using testing::block_of;

namespace {

struct Outcome {
  double output_diff = 0.0, output_scale = 0.0, grad_diff = 0.0, grad_scale = 0.0;
  double overlap_output_diff = 0.0, overlap_grad_diff = 0.0;  // overlapped against exchange-first
  int overlapped_layers = 0;  // layers that computed their interior while halos travelled
};

/// Largest |a - b| over two equally long vectors.
double max_difference(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size())
    throw Error("sizes differ: " + std::to_string(a.size()) + " vs " + std::to_string(b.size()));
  double d = 0.0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, static_cast<double>(std::abs(a[i] - b[i])));
  return d;
}

/// The model under test (the distribution, halos overlapped wherever possible), the same with
/// the exchange done first, and the 1-rank model.
struct Models {
  std::unique_ptr<model::Model> parallel, exchange_first, serial;
};

/// `layers` is the model spec's layer list with "@spatial" standing for the distribution under
/// test and "@samples" for {sample: ranks}.
Models build_models(const json& input, json layers, const json& distribution,
                    const parallel::Communicator& world) {
  json samples_only = {{"sample", world.size()}};
  // Unsynchronised batch norm over a sample split normalises each sample group on its own (as
  // data parallelism does), so only synchronised statistics can equal the 1-rank model there.
  const bool sample_split = distribution.value("sample", 1) > 1;
  for (auto& l : layers) {
    if (l.contains("distribution")) l["distribution"] = l["distribution"] == "@samples" ? samples_only : distribution;
    if (sample_split && l["type"] == "batch_norm") l["sync"] = true;
  }
  json parallel_spec = {
      {"input", input}, {"distribution", distribution}, {"layers", layers}, {"halo_overlap", "always"}};
  json exchange_first_spec = parallel_spec;
  exchange_first_spec["halo_overlap"] = false;
  json serial_layers = layers;
  for (auto& l : serial_layers) l.erase("distribution");
  const json serial_spec = {{"input", input}, {"layers", serial_layers}};

  model::BuildOptions po, so;
  po.seed = so.seed = 11;
  po.group = world;
  so.group = parallel::Communicator::self();
  ConfigObject pc(parallel_spec, "$.model"), ec(exchange_first_spec, "$.model"), sc(serial_spec, "$.model");
  Models m;
  m.parallel = model::Model::from_json(pc, po);
  m.exchange_first = model::Model::from_json(ec, po);
  m.serial = model::Model::from_json(sc, so);
  return m;
}

/// Forward on the same input: the parallel model's outputs against the 1-rank model's block and
/// the exchange-first model's; the inputs `xs` (1 rank) and `xp` (this rank's block) stay the
/// caller's until backward. Returns the parallel output's shape (for the gradient).
Shape compare_forward(const Models& m, int64_t batch, const layers::StepInfo& step, Tensor& xs, Tensor& xp,
                      Outcome& o) {
  const Shape in_shape = testing::batched(batch, m.serial->sample_shape());
  const std::vector<float> x = testing::global_values(in_shape, 1);
  xs = Tensor(in_shape);
  xp = Tensor(m.parallel->input_grid().local_shape(in_shape, "test"));
  xs.copy_from_host(x);
  xp.copy_from_host(block_of(x, in_shape, m.parallel->input_grid()));
  const auto ys = m.serial->forward(xs, step).to_host();
  const Tensor& yp_t = m.parallel->forward(xp, step);
  const auto yp = yp_t.to_host();
  const auto ye = m.exchange_first->forward(xp, step).to_host();
  const auto ys_block = block_of(ys, m.serial->output_shape(batch), m.parallel->output_grid());
  const std::string summary = m.parallel->summary();
  for (size_t at = summary.find("halo overlapped"); at != std::string::npos;
       at = summary.find("halo overlapped", at + 1))
    ++o.overlapped_layers;
  o.output_diff = max_difference(yp, ys_block);
  o.overlap_output_diff = max_difference(yp, ye);
  for (const float v : ys_block) o.output_scale = std::max(o.output_scale, static_cast<double>(std::abs(v)));
  return yp_t.shape();
}

/// Backward from the same output gradient: the summed parameter gradients of the parallel model
/// against the 1-rank model's and the exchange-first model's.
void compare_backward(const Models& m, int64_t batch, const layers::StepInfo& step, const Shape& local_out,
                      const parallel::Communicator& world, Outcome& o) {
  const Shape out_shape = m.serial->output_shape(batch);
  const std::vector<float> dy = testing::global_values(out_shape, 2, 1.0f / static_cast<float>(batch));
  Tensor dys(out_shape), dyp(local_out);
  dys.copy_from_host(dy);
  auto dy_block = block_of(dy, out_shape, m.parallel->output_grid());
  // Features are replicated over a spatial group; the loss gives each replica its share of the
  // gradient (Loss::evaluate with sample_parts), so the sum over the group is the gradient.
  if (out_shape.rank() == 2)
    for (auto& v : dy_block) v /= static_cast<float>(m.parallel->output_grid().spatial().size());
  dyp.copy_from_host(dy_block);
  m.serial->backward(dys, step);
  m.parallel->backward(dyp, step);
  m.exchange_first->backward(dyp, step);
  Tensor gp = m.parallel->parameters().grads(), ge = m.exchange_first->parameters().grads();
  world.allreduce_sum(gp);  // each rank holds its blocks' share of every gradient
  world.allreduce_sum(ge);
  const auto gs = m.serial->parameters().grads().to_host(), g = gp.to_host();
  o.grad_diff = max_difference(g, gs);
  o.overlap_grad_diff = max_difference(g, ge.to_host());
  for (const float v : gs) o.grad_scale = std::max(o.grad_scale, static_cast<double>(std::abs(v)));
}

Outcome compare(const json& input, const json& layers, const json& distribution, int64_t batch,
                const parallel::Communicator& world) {
  const Models m = build_models(input, layers, distribution, world);
  const layers::StepInfo step{layers::Mode::training, 3, batch};
  Outcome o;
  Tensor xs, xp;
  const Shape local_out = compare_forward(m, batch, step, xs, xp, o);
  compare_backward(m, batch, step, local_out, world, o);
  return o;
}

/// A model to split: its input, layers (with "@samples" where the graph redistributes) and
/// global batch.
struct Case {
  const char* name;
  json input, layers;
  int64_t batch;
};

/// The layers of a U-Net-like DAG: batch norm (one synchronised), dilation, dropout, a
/// transposed convolution, concat, add, a strided convolution and overlapping pooling.
json unet_like_layers() {
  return json::parse(R"([
    {"name": "c1", "type": "conv3d", "filters": 4, "padding": 1},
    {"name": "bn1", "type": "batch_norm"}, {"type": "relu"},
    {"name": "p1", "type": "max_pool3d"},
    {"name": "c2", "type": "conv3d", "filters": 4, "padding": 2, "dilation": 2},
    {"name": "bn2", "type": "batch_norm", "sync": true}, {"type": "elu"},
    {"name": "drop", "type": "dropout", "rate": 0.3},
    {"name": "up", "type": "conv_transpose3d", "filters": 4},
    {"name": "cat", "type": "concat", "inputs": ["up", "c1"]},
    {"name": "c3", "type": "conv3d", "filters": 4, "padding": 1},
    {"name": "sum", "type": "add", "inputs": ["c3", "c1"]},
    {"name": "down", "type": "conv3d", "filters": 3, "stride": 2, "padding": 1},
    {"name": "mp", "type": "max_pool3d", "kernel": 3, "stride": 1, "padding": 1},
    {"name": "ap", "type": "avg_pool3d", "kernel": 2},
    {"name": "c4", "type": "conv3d", "filters": 2, "kernel": 3, "padding": 1}
  ])");
}

/// The 3D models, of n³ samples: a U-Net-like DAG, CosmoFlow-like nets with their dense head
/// redistributed to samples or replicated, and a ResNet-like block.
std::vector<Case> cases_3d(int64_t n) {
  std::vector<Case> cases;
  cases.push_back({"3d u-net-like DAG", {{"channels", 2}, {"size", {n, n, n}}}, unet_like_layers(), 4});
  cases.push_back({"cosmoflow-like with a redistribution to samples",
                   {{"channels", 2}, {"size", {n, n, n}}},
                   json::parse(R"([
    {"name": "c1", "type": "conv3d", "filters": 4, "padding": 1}, {"type": "leaky_relu"},
    {"name": "p1", "type": "max_pool3d"},
    {"name": "c2", "type": "conv3d", "filters": 4, "padding": 1}, {"type": "leaky_relu"},
    {"name": "p2", "type": "max_pool3d"},
    {"name": "flat", "type": "flatten", "distribution": "@samples"},
    {"name": "fc1", "type": "dense", "units": 8, "distribution": "@samples"},
    {"name": "drop", "type": "dropout", "rate": 0.2, "distribution": "@samples"},
    {"name": "out", "type": "dense", "units": 4, "distribution": "@samples"}
  ])"),
                   8});
  cases.push_back({"cosmoflow-like with dense layers replicated over the spatial group",
                   {{"channels", 2}, {"size", {n, n, n}}},
                   json::parse(R"([
    {"name": "c1", "type": "conv3d", "filters": 4, "padding": 1}, {"type": "leaky_relu"},
    {"name": "p1", "type": "max_pool3d"},
    {"name": "c2", "type": "conv3d", "filters": 4, "padding": 1}, {"type": "leaky_relu"},
    {"name": "p2", "type": "max_pool3d"},
    {"name": "flat", "type": "flatten"},
    {"name": "fc1", "type": "dense", "units": 8}, {"name": "bn", "type": "batch_norm"},
    {"name": "drop", "type": "dropout", "rate": 0.2},
    {"name": "out", "type": "dense", "units": 4}
  ])"),
                   4});
  cases.push_back({"3d resnet-like block with global average pooling",
                   {{"channels", 2}, {"size", {n, n, n}}},
                   json::parse(R"([
    {"name": "c1", "type": "conv3d", "filters": 4, "padding": 1},
    {"name": "bn1", "type": "batch_norm"}, {"name": "r1", "type": "relu"},
    {"name": "c2", "type": "conv3d", "filters": 6, "padding": 1, "stride": 2, "bias": false},
    {"name": "bn2", "type": "batch_norm"},
    {"name": "proj", "type": "conv3d", "filters": 6, "kernel": 1, "stride": 2, "inputs": ["r1"]},
    {"name": "sum", "type": "add", "inputs": ["bn2", "proj"]}, {"type": "relu"},
    {"name": "gap", "type": "global_avg_pool3d"},
    {"name": "out", "type": "dense", "units": 3}
  ])"),
                   4});
  return cases;
}

/// The 2D models, of n² samples: a ResNet-like block and a net with a transposed convolution.
std::vector<Case> cases_2d(int64_t n) {
  std::vector<Case> cases;
  cases.push_back({"2d resnet-like block with global average pooling",
                   {{"channels", 3}, {"size", {n, n}}},
                   json::parse(R"([
    {"name": "c1", "type": "conv2d", "filters": 4, "padding": 1},
    {"name": "bn1", "type": "batch_norm"}, {"name": "r1", "type": "relu"},
    {"name": "c2", "type": "conv2d", "filters": 6, "padding": 1, "stride": 2, "bias": false},
    {"name": "bn2", "type": "batch_norm"},
    {"name": "proj", "type": "conv2d", "filters": 6, "kernel": 1, "stride": 2, "inputs": ["r1"]},
    {"name": "sum", "type": "add", "inputs": ["bn2", "proj"]}, {"type": "relu"},
    {"name": "gap", "type": "global_avg_pool2d"},
    {"name": "out", "type": "dense", "units": 3}
  ])"),
                   4});
  cases.push_back({"2d net",
                   {{"channels", 3}, {"size", {n, n}}},
                   json::parse(R"([
    {"name": "c1", "type": "conv2d", "filters": 4, "padding": 1},
    {"name": "bn", "type": "batch_norm"}, {"type": "relu"},
    {"name": "p1", "type": "max_pool2d"},
    {"name": "c2", "type": "conv2d", "filters": 4, "padding": 1, "stride": 2},
    {"name": "up", "type": "conv_transpose2d", "filters": 2, "kernel": 3, "stride": 2, "padding": 1, "output_padding": 1}
  ])"),
                   4});
  return cases;
}

/// Prints rank's verdict on one case; true when its outputs and gradients equal the 1-rank
/// model's, and the overlapped layers equal the exchange-first ones.
bool report(const Case& c, const Outcome& o, const json& distribution, const parallel::Communicator& world) {
  const double output_tolerance = 1e-5 * std::max(1.0, o.output_scale);
  const double grad_tolerance = 1e-5 * std::max(1.0, o.grad_scale);
  const bool ok = o.output_diff <= output_tolerance && o.grad_diff <= grad_tolerance;
  // The overlapped pieces run the same arithmetic on boxes of the same input, so only the
  // backend's order of sums may differ.
  const bool overlap_ok = o.overlap_output_diff <= 1e-6 * std::max(1.0, o.output_scale) &&
                          o.overlap_grad_diff <= 1e-6 * std::max(1.0, o.grad_scale);
  // Every spatial split of these models has convolutions with an interior to overlap.
  const bool spatial =
      distribution.value("depth", 1) * distribution.value("height", 1) * distribution.value("width", 1) > 1;
  const bool overlapped = !spatial || o.overlapped_layers > 0;
  std::printf(
      "rank %d of %d, %s, distribution %s: max output difference %.2e (largest %.2f), max gradient "
      "difference %.2e (largest %.2f): %s; %d layers overlapped, against exchange-first: %.2e, %.2e: %s\n",
      world.rank(), world.size(), c.name, distribution.dump().c_str(), o.output_diff, o.output_scale, o.grad_diff,
      o.grad_scale, ok ? "equal" : "DIFFERENT", o.overlapped_layers, o.overlap_output_diff, o.overlap_grad_diff,
      overlap_ok && overlapped ? "equal" : "DIFFERENT");
  return ok && overlap_ok && overlapped;
}

}  // namespace

int main(int argc, char* argv[]) {
  testing::MpiProgram program(argc, argv);
  const auto world = parallel::Communicator::world();
  int failed = 0;
  try {
    if (argc < 2) throw Error("usage: spatial_equivalence DISTRIBUTION_JSON [2d|3d] [SIZE]");
    const json distribution = json::parse(argv[1]);
    const bool two_d = argc > 2 && std::string(argv[2]) == "2d";
    const int64_t n = argc > 3 ? std::stoll(argv[3]) : 8;
    for (const Case& c : two_d ? cases_2d(n) : cases_3d(n))
      failed |= !report(c, compare(c.input, c.layers, distribution, c.batch, world), distribution, world);
  } catch (const std::exception& e) {
    return parallel::handle_fatal_error(e);
  }
  return program.exit_status(failed);
}

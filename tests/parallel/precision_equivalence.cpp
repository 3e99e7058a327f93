// Run under mpirun with a distribution and a backend, e.g. `precision_equivalence '{"depth": 2}'
// kokkos` at 2 ranks: builds a model in bf16 whose convolutions, pooling, batch norm and
// activations are split over the distribution (so halos, channel exchanges and the
// redistribution to the dense head move bf16 values), runs a forward and backward pass on a
// fixed global batch, and checks that each rank's block of the output and the summed parameter
// gradients equal the same bf16 model on one rank within bf16's rounding (and that bf16 did run:
// they differ from fp32). Exit status 0 on every rank when they do. `kokkos` runs every layer on
// the Kokkos backend, which computes bf16 on any CPU (fp32 arithmetic on rounded operands);
// `onednn` and `cudnn` run the model as "auto" does, the vendor's kernels where it has the op
// (Kokkos for batch norm). oneDNN's bf16 kernels need the CPU's bf16 instructions: without
// them the program prints TESSERA-SKIPPED and exits 0 (ctest reports a skip), unless
// TESSERA_REQUIRE lists bf16-cpu.
#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "support/activation_blocks.hpp"
#include "support/mpi_program.hpp"
#include "support/requirements.hpp"
#include "tessera/build_info.hpp"
#include "tessera/core/config.hpp"
#include "tessera/model/model.hpp"
#include "tessera/parallel/communicator.hpp"
#include "tessera/parallel/traffic_counter.hpp"
#if TESSERA_ENABLE_ONEDNN
#include "tessera/backends/onednn/onednn_backend.hpp"
#endif

using namespace tessera;
using nlohmann::json;
using testing::block_of;

namespace {

/// ‖a − b‖ / ‖b‖.
double norm_error(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) throw Error("sizes differ: " + std::to_string(a.size()) + " vs " + std::to_string(b.size()));
  double d = 0, n = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    d += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
    n += static_cast<double>(b[i]) * b[i];
  }
  return n > 0 ? std::sqrt(d / n) : std::sqrt(d);
}

bool splits_channels(const json& distribution) {
  return distribution.value("channel", 1) * distribution.value("filter", 1) > 1;
}

// Average pooling rather than max: a max over values that bf16 rounds to equal ones may pick
// another element on another layout and send it the whole gradient (see test_model_precision).
const char* const kLayers = R"([
  {"name": "c1", "type": "conv3d", "filters": 4, "padding": 1, "distribution": "@split"},
  {"name": "bn1", "type": "batch_norm", "sync": true, "distribution": "@split"},
  {"name": "r1", "type": "relu", "distribution": "@split"},
  {"name": "c2", "type": "conv3d", "filters": 4, "padding": 2, "dilation": 2, "distribution": "@split"},
  {"name": "cat", "type": "concat", "inputs": ["c2", "r1"], "distribution": "@split"},
  {"name": "c3", "type": "conv3d", "filters": 4, "padding": 1, "distribution": "@split"},
  {"name": "sum", "type": "add", "inputs": ["c3", "c1"], "distribution": "@split"},
  {"name": "ap", "type": "avg_pool3d", "kernel": 2, "distribution": "@split"},
  {"name": "c4", "type": "conv3d", "filters": 4, "stride": 2, "padding": 1, "distribution": "@split"},
  {"name": "flat", "type": "flatten", "distribution": "@samples"},
  {"name": "out", "type": "dense", "units": 4, "distribution": "@samples"}
])";

struct Run {
  std::unique_ptr<model::Model> model;
  std::vector<float> output;
  double halo_bytes = 0, channel_bytes = 0, redistribution_bytes = 0;
};

Run run(const json& distribution, ElementType precision, const std::string& backend, const parallel::Communicator& group,
        int64_t batch) {
  json layers = json::parse(kLayers);
  const bool serial = group.size() == 1;
  const json samples = {{"sample", group.size()}};
  for (auto& l : layers) {
    if (serial) l.erase("distribution");
    else l["distribution"] = l["distribution"] == "@samples" ? samples : distribution;
  }
  // Four input channels: a channel group of 3 holds 1, 2 and 1 of them (a tensor with fewer
  // channels than its group's ranks is refused, since each rank holds a slice).
  json spec = {{"input", {{"channels", 4}, {"size", {8, 8, 8}}}}, {"layers", layers}, {"halo_overlap", "always"}};
  // The input is read in the layers' blocks (channels folded into samples: inputs keep whole
  // channels), so that without a channel split the only redistribution is the bf16
  // activation's to the dense head.
  if (!serial) {
    json model_distribution = distribution;
    model_distribution.erase("channel");
    model_distribution.erase("filter");
    model_distribution["sample"] = distribution.value("sample", 1) * distribution.value("channel", 1) *
                                   distribution.value("filter", 1);
    spec["distribution"] = model_distribution;
  }
  model::BuildOptions options;
  options.seed = 5;
  options.group = group;
  options.precision = precision;
  options.backend = backend == "kokkos" ? backend : "auto";
  ConfigObject cfg(spec, "$.model");
  auto m = model::Model::from_json(cfg, options);

  const Shape in_shape = testing::batched(batch, m->sample_shape());
  const std::vector<float> x = testing::global_values(in_shape, 1);
  Tensor xt(m->input_grid().local_shape(in_shape, "test"));
  xt.copy_from_host(block_of(x, in_shape, m->input_grid()));
  const layers::StepInfo step{layers::Mode::training, 3, batch};
  parallel::TrafficCounter::reset();
  Run r;
  const Tensor& y = m->forward(xt, step);
  r.output = y.to_host();
  const Shape out_shape = m->output_shape(batch);
  const std::vector<float> dy = testing::global_values(out_shape, 2, 1.0f / static_cast<float>(batch));
  Tensor dyt(y.shape());
  dyt.copy_from_host(block_of(dy, out_shape, m->output_grid()));
  m->backward(dyt, step);
  r.halo_bytes = parallel::TrafficCounter::bytes(parallel::TrafficCounter::halo);
  r.channel_bytes = parallel::TrafficCounter::bytes(parallel::TrafficCounter::channel);
  r.redistribution_bytes = parallel::TrafficCounter::bytes(parallel::TrafficCounter::redistribution);
  r.model = std::move(m);
  return r;
}

/// The split model's gradient of every parameter (its shard, summed over the ranks that hold
/// it: each holds its blocks' share), beside the serial model's at the same whole indices.
std::pair<std::vector<float>, std::vector<float>> gradients(const model::Model& split, const model::Model& serial,
                                                            const parallel::Communicator& world) {
  std::vector<float> got, want;
  for (const auto& p : split.parameters().all()) {
    if (!p->trainable) continue;
    Tensor g = p->grad.clone();
    (p->shard.split() ? p->shard.replicas : world).allreduce_sum(g);
    const auto mine = g.to_host(), whole = serial.parameters().find(p->name)->grad.to_host();
    for (size_t i = 0; i < mine.size(); ++i) {
      got.push_back(mine[i]);
      want.push_back(whole[static_cast<size_t>(p->shard.whole_index(static_cast<int64_t>(i)))]);
    }
  }
  return {got, want};
}

/// Why `backend` cannot run this model's bf16 convolutions here; "" where it can.
std::string lacks_bf16(const std::string& backend) {
  if (backend == "kokkos") return {};
#if TESSERA_ENABLE_ONEDNN
  if (backend == "onednn")
    return onednn_backend::has_bf16_instructions() ? "" : "oneDNN dispatches " + onednn_backend::dispatched_isa() +
                                                               ", without bf16 instructions";
#endif
#if TESSERA_ENABLE_CUDNN
  if (backend == "cudnn") return {};
#endif
  return "backend " + backend + " is not in this build";
}

/// Runs the model split over `distribution` and on one rank, in bf16 and fp32, and prints
/// this rank's verdict; true when the split bf16 model equals the one-rank bf16 model and
/// moves the bytes it should.
bool equal_to_one_rank(const json& distribution, const std::string& backend, const parallel::Communicator& world) {
  const int64_t batch = 4;
  const auto self = parallel::Communicator::self();
  const Run split = run(distribution, ElementType::bf16, backend, world, batch);
  const Run split32 = run(distribution, ElementType::fp32, backend, world, batch);
  const Run one = run(distribution, ElementType::bf16, backend, self, batch);
  const Run one32 = run(distribution, ElementType::fp32, backend, self, batch);

  // This rank's block of the serial output (the head runs over samples).
  parallel::Distribution head;
  head.sample = world.size();
  const parallel::ProcessGrid head_grid(head, world, "test");
  const auto one_block = block_of(one.output, Shape{batch, 4}, head_grid);

  // Two bf16 runs differ only where a value is formed in another order and rounded (a halo's
  // gradient added to the interior's; a channel group's partial sums, each rounded by its op,
  // then added): each stays within about one rounding of fp32's (u = 2^-8, normwise), so they
  // differ by a few u, where a wrong block or a lost halo differs by O(1).
  const double u = unit_roundoff(ElementType::bf16);
  const double output_error = norm_error(split.output, one_block) / u;
  const auto [got, want] = gradients(*split.model, *one.model, world);
  const double grad_error = norm_error(got, want) / u;
  const double bf16_vs_fp32 = norm_error(one.output, one32.output) / u;
  const bool ok = output_error <= 4.0 && grad_error <= 4.0 && bf16_vs_fp32 > 0.0;
  // The split model's messages in bf16 carry half the bytes of fp32's. Reduce-scatter sums
  // travel in fp32 by design, so channel traffic is between one half and one; under a
  // channel split the fp32 input's move to the layers' grid stays fp32.
  const auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
  const double halo_ratio = ratio(split.halo_bytes, split32.halo_bytes);
  const double moved_ratio = ratio(split.redistribution_bytes, split32.redistribution_bytes);
  const bool moved_ok = splits_channels(distribution) ? moved_ratio < 1.0 : moved_ratio == 0.5;
  const bool bytes_ok = (split32.halo_bytes == 0 || halo_ratio == 0.5) &&
                        (split32.redistribution_bytes == 0 || moved_ok) &&
                        (split32.channel_bytes == 0 || split.channel_bytes < split32.channel_bytes);
  std::printf(
      "rank %d of %d, distribution %s, backend %s: bf16 split against bf16 on one rank: output %.2f u, gradients %.2f u "
      "(bf16 against fp32 on one rank: %.2f u): %s; bf16/fp32 bytes: halo %.2f, redistribution %.2f, channel "
      "%.0f/%.0f: %s\n",
      world.rank(), world.size(), distribution.dump().c_str(), backend.c_str(), output_error, grad_error, bf16_vs_fp32,
      ok ? "equal" : "DIFFERENT", halo_ratio, moved_ratio, split.channel_bytes, split32.channel_bytes,
      bytes_ok ? "as expected" : "WRONG");
  return ok && bytes_ok;
}

}  // namespace

int main(int argc, char* argv[]) {
  testing::MpiProgram program(argc, argv);
  const auto world = parallel::Communicator::world();
  bool failed = false;
  try {
    if (argc < 3) throw Error("usage: precision_equivalence DISTRIBUTION_JSON kokkos|onednn|cudnn");
    const std::string backend = argv[2];
    if (const std::string why = lacks_bf16(backend); !why.empty()) {
      if (test::required("bf16-cpu")) throw Error("TESSERA_REQUIRE lists bf16-cpu, but here " + why);
      if (world.rank() == 0) std::printf("TESSERA-SKIPPED: %s\n", why.c_str());
      return program.exit_status(false);
    }
    failed = !equal_to_one_rank(json::parse(argv[1]), backend, world);
  } catch (const std::exception& e) {
    return parallel::handle_fatal_error(e);
  }
  return program.exit_status(failed);
}

// Builds a small CosmoFlow-style 3D CNN in C++, trains it with Tessera's trainer on in-memory
// synthetic cosmology volumes (four parameters per volume to regress), and reads the metrics
// of the run: the training loss curve, the validation loss and mean absolute error against
// those of always predicting the mean, and the throughput. No config file is involved.
//
//   tessera_cpp_example [--size S] [--samples N] [--epochs E] [--batch-size B] [--seed N]
//                       [--metrics FILE] [--require-ratio R] [--quiet] [--kokkos-threads=T]
//   mpirun -np 2 tessera_cpp_example      (data parallel: the batch is split over the ranks)
//
// Exits with status 1 when the trained model's validation loss is not at least
// --require-ratio times (default 1) below that of predicting the mean, so a script (or CI)
// can tell that it learned.
#include <Kokkos_Core.hpp>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include <tessera/core/log.hpp>
#include <tessera/io/synthetic_fields.hpp>
#include <tessera/layers/loss.hpp>
#include <tessera/model/model_builder.hpp>
#include <tessera/optim/adam.hpp>
#include <tessera/parallel/communicator.hpp>
#include <tessera/train/trainer.hpp>

namespace {

namespace spec = tessera::model::spec;

struct Settings {
  int64_t size = 16;  // voxels per side of a volume
  int64_t samples = 512;
  int64_t validation_samples = 64;
  int64_t epochs = 4;
  int64_t batch_size = 16;
  uint64_t seed = 42;
  std::string metrics_file;
  bool quiet = false;           // no model summary
  double required_ratio = 1.0;  // validation loss must be this many times below the mean's
};

/// Reads the flags; a bad one is a std::invalid_argument naming it.
Settings parse(int argc, char* argv[]) {
  Settings s;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag.rfind("--kokkos-", 0) == 0) continue;  // Kokkos' own
    if (flag == "--quiet") {
      s.quiet = true;
      continue;
    }
    if (i + 1 >= argc) throw std::invalid_argument(flag + ": unknown flag or missing value");
    const std::string value = argv[++i];
    if (flag == "--metrics") {
      s.metrics_file = value;
      continue;
    }
    if (flag == "--require-ratio") {
      char* end = nullptr;
      s.required_ratio = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0' || !(s.required_ratio > 0.0) || s.required_ratio > 1e6)
        throw std::invalid_argument(flag + ": expected a positive number, got \"" + value + "\"");
      continue;
    }
    char* end = nullptr;
    const long long n = std::strtoll(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || n < 1 || n > (1LL << 30))
      throw std::invalid_argument(flag + ": expected a positive integer, got \"" + value + "\"");
    if (flag == "--size")
      s.size = n;
    else if (flag == "--samples")
      s.samples = n;
    else if (flag == "--epochs")
      s.epochs = n;
    else if (flag == "--batch-size")
      s.batch_size = n;
    else if (flag == "--seed")
      s.seed = static_cast<uint64_t>(n);
    else
      throw std::invalid_argument(flag + ": unknown flag");
  }
  if (s.size % 8 != 0) throw std::invalid_argument("--size: three 2x poolings need a multiple of 8");
  return s;
}

/// Three conv + batch norm + LeakyReLU + max-pool blocks, then two dense layers: a four-value
/// regression head, as CosmoFlow's.
tessera::model::ModelBuilder cosmoflow_style(int64_t size) {
  tessera::model::ModelBuilder net(/*channels=*/4, {size, size, size});
  int64_t filters = 8;
  for (int block = 1; block <= 3; ++block, filters *= 2) {
    const std::string n = std::to_string(block);
    net.add("conv" + n, spec::conv3d(filters).kernel(3).padding(1))
        .add("bn" + n, spec::batch_norm())
        .add("act" + n, spec::leaky_relu(0.01))
        .add("pool" + n, spec::max_pool3d(2));
  }
  net.add("flatten", spec::flatten())
      .add("fc1", spec::dense(64))
      .add("act4", spec::leaky_relu(0.01))
      .add("out", spec::dense(4));
  return net;
}

int run(const Settings& s) {
  const auto world = tessera::parallel::Communicator::world();
  tessera::model::BuildOptions build;
  build.seed = s.seed;
  build.group = world;  // the model's layers are split over every rank of the job
  auto model = cosmoflow_style(s.size).build(build);
  if (world.rank() == 0 && !s.quiet) std::printf("%s\n", model->summary().c_str());

  // Every volume is a function of (seed, index): the validation volumes are the ones after
  // the training ones, so the two sets are disjoint.
  tessera::io::SyntheticFields::Options fields;
  fields.samples = s.samples;
  fields.size = s.size;
  fields.channels = 4;
  fields.seed = s.seed;
  tessera::io::DataSplit data;
  data.train = std::make_unique<tessera::io::SyntheticFields>(fields);
  fields.index_offset = static_cast<uint64_t>(s.samples);
  fields.samples = s.validation_samples;
  data.validation = std::make_unique<tessera::io::SyntheticFields>(fields);

  auto loss = tessera::layers::Loss::make("mse");
  tessera::optim::AdamOptions adam;
  adam.lr = 0.002;
  tessera::optim::Adam optimizer(adam);

  tessera::train::TrainingOptions options;
  options.epochs = s.epochs;
  options.batch_size = s.batch_size;
  options.seed = s.seed;
  options.log_every = 8;
  options.metrics_file = s.metrics_file;
  options.progress = false;
  // The learning-rate schedule, in the form of a run config's "optimizer" section (an empty
  // object keeps the rate constant): half a cosine from the rate down to 5% of it.
  const nlohmann::json schedule = {{"schedule", {{"type", "cosine"}, {"min_lr", 0.05 * adam.lr}}}};
  tessera::train::Trainer trainer(*model, *loss, optimizer, data, options, schedule);
  const tessera::train::TrainingReport report = trainer.run();

  const double ratio = report.validation_baseline / report.validation_loss;
  const bool learned = report.validation_loss > 0 && ratio >= s.required_ratio;
  if (world.rank() == 0) {
    // One mean per window of log_every steps (every step's loss is in report.step_losses).
    const auto& losses = report.logged_losses.empty() ? report.step_losses : report.logged_losses;
    std::printf("trained %lld steps: loss %.4f -> %.4f, %.1f samples/s\n", static_cast<long long>(report.steps),
                losses.front(), losses.back(), report.samples_per_second);
    std::printf("validation loss %.4f, predicting the mean %.4f: %.2fx lower (%s %.2fx)\n", report.validation_loss,
                report.validation_baseline, ratio, learned ? "learned: at least" : "FAILED: required",
                s.required_ratio);
    // The metrics validation reports besides the loss: for a regression, its mean absolute
    // error and that of predicting the mean (TrainingOptions::metrics chooses others).
    const tessera::train::ValidationMetrics& m = report.validation_metrics;
    std::printf("validation MAE %.4f, predicting the mean %.4f\n", m.mae, m.baseline_mae);
  }
  return learned ? 0 : 1;
}

}  // namespace

int main(int argc, char* argv[]) {
  tessera::parallel::MpiSession mpi(argc, argv);
  Settings settings;
  try {
    settings = parse(argc, argv);
  } catch (const std::invalid_argument& e) {
    // Every rank sees the same flags and exits alike; one message is enough.
    if (tessera::log::rank() == 0) std::fprintf(stderr, "tessera_cpp_example: %s\n", e.what());
    return 2;
  }
  Kokkos::ScopeGuard kokkos(argc, argv);
  try {
    return run(settings);
  } catch (const std::exception& e) {
    // Any rank's error ends every rank, with its message.
    return tessera::parallel::handle_fatal_error(e);
  }
}

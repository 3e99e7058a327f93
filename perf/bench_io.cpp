// The HDF5 reader's two figures for perf/io.sh (protocol of docs/benchmarks.md: a
// warm-up, then the median of the timed repetitions):
//  * read: every sample of a data set, in order, in batches, read and converted to float into
//    Kokkos tensors — synchronously, and read ahead (two batches in flight, so each batch's
//    read overlaps the previous batch's conversion); MB/s of the stored bytes;
//  * train: a model trained on the data set by the real Trainer with the sample store off (so
//    every step reads files), reading synchronously and reading ahead: the time per step spent
//    in loading data (the trainer's "data" profile region, warm-up steps left out), and the
//    share of it that reading ahead hides, hidden = 1 − data time ahead / data time synchronous.
// Usage: tessera_bench_io --data '{"source": "hdf5", ...}' [--batch B] [--reps N]
//                         [--model CONFIG.json --train-data '{...}' --steps N] [--cold 1]
// --train-data is the data section for training (default: --data); --cold 1 drops the files
// from the page cache before every timed pass of the read test.
#include <fcntl.h>
#include <unistd.h>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include "tessera/core/config.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/profiling.hpp"
#include "tessera/io/hdf5_dataset.hpp"
#include "tessera/layers/loss.hpp"
#include "tessera/model/model.hpp"
#include "tessera/optim/optimizer.hpp"
#include "tessera/parallel/communicator.hpp"
#include "tessera/train/trainer.hpp"

using namespace tessera;
using Clock = std::chrono::steady_clock;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// Drops the data set's files from the page cache, so the next pass reads them from storage.
void evict(const io::Hdf5Layout& layout) {
  for (const auto& file : layout.files()) {
    const int fd = ::open(file.path.c_str(), O_RDONLY);
    if (fd < 0) continue;
    ::fdatasync(fd);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
  }
}

/// Seconds to read every sample of `ds` once, in order, `batch` at a time.
double read_all(io::Dataset& ds, int64_t batch, bool ahead) {
  const Shape s = ds.sample_shape();
  Tensor x(Shape{batch, s[0], s[1], s[2], s[3]}), y(Shape{batch, ds.target_shape().numel()});
  const int64_t batches = ds.size() / batch;
  auto indices = [&](int64_t k) {
    std::vector<int64_t> idx(static_cast<size_t>(batch));
    std::iota(idx.begin(), idx.end(), k * batch);
    return idx;
  };
  const auto start = Clock::now();
  // Reading ahead, two batches are in flight: the next is read while this one converts.
  for (int64_t k = 0; ahead && k < std::min<int64_t>(2, batches); ++k) ds.prefetch(indices(k), ds.whole_box());
  for (int64_t k = 0; k < batches; ++k) {
    ds.load(indices(k), ds.whole_box(), x, y);
    if (ahead && k + 2 < batches) ds.prefetch(indices(k + 2), ds.whole_box());
  }
  Kokkos::fence();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

int main(int argc, char* argv[]) {
  parallel::MpiSession mpi(argc, argv);
  Kokkos::ScopeGuard kokkos(argc, argv);
  std::string data, train_data, model_file;
  int64_t batch = 4, reps = 3, steps = 12;
  bool cold = false;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--data") data = value;
    else if (flag == "--batch") batch = std::stoll(value);
    else if (flag == "--reps") reps = std::stoll(value);
    else if (flag == "--model") model_file = value;
    else if (flag == "--train-data") train_data = value;
    else if (flag == "--steps") steps = std::stoll(value);
    else if (flag == "--cold") cold = value == "1";
  }
  if (data.empty()) {
    std::fprintf(stderr, "usage: %s --data '{\"source\": \"hdf5\", ...}' [--batch B] [--reps N] [--model CONFIG "
                         "--steps N]\n", argv[0]);
    return 2;
  }
  try {
    // --- read: synchronous and read ahead, store off so every pass reads the files ---
    for (const bool ahead : {false, true}) {
      auto section = nlohmann::json::parse(data);
      section["store_mb"] = 0;
      section["prefetch"] = ahead;
      section.erase("validation");
      ConfigObject cfg(section, "$.data");
      auto split = io::make_datasets(cfg, 0);
      auto& ds = dynamic_cast<io::Hdf5Dataset&>(*split.train);
      read_all(ds, batch, ahead);  // warm-up: first touch of buffers, files in the page cache
      const auto before = ds.statistics();
      std::vector<double> times;
      for (int64_t r = 0; r < reps; ++r) {
        if (cold) evict(ds.layout());
        times.push_back(read_all(ds, batch, ahead));
      }
      const auto after = ds.statistics();
      const double bytes = static_cast<double>(after.file_bytes - before.file_bytes) / static_cast<double>(reps);
      std::printf("read %s: %lld samples, %.1f MB per pass, median %.3f s: %.1f MB/s (reading %.3f s, waiting %.3f s, "
                  "converting %.3f s per pass)\n",
                  ahead ? "ahead" : "synchronous", static_cast<long long>(ds.size() / batch * batch), bytes / 1e6,
                  median(times), bytes / 1e6 / median(times),
                  (after.read_seconds - before.read_seconds) / static_cast<double>(reps),
                  (after.wait_seconds - before.wait_seconds) / static_cast<double>(reps),
                  (after.convert_seconds - before.convert_seconds) / static_cast<double>(reps));
    }
    // --- train: the real trainer, store off, synchronous and reading ahead ---
    if (!model_file.empty()) {
      auto config = read_json_file(model_file);
      auto section = nlohmann::json::parse(train_data.empty() ? data : train_data);
      section["store_mb"] = 0;
      section.erase("validation");
      double data_per_step[2] = {0.0, 0.0};
      for (const bool ahead : {false, true}) {
        section["prefetch"] = ahead;
        ConfigObject data_cfg(section, "$.data");
        io::DataSplit split = io::make_datasets(data_cfg, 0);
        ConfigObject model_cfg(config.at("model"), "$.model");
        model::BuildOptions build;
        build.seed = 1;
        auto model = model::Model::from_json(model_cfg, build);
        ConfigObject loss_cfg(config.at("loss"), "$.loss");
        auto loss = layers::Loss::from_json(loss_cfg);
        ConfigObject optimizer_cfg(config.at("optimizer"), "$.optimizer");
        auto optimizer = optim::Optimizer::from_json(optimizer_cfg);
        train::TrainingOptions options;
        options.batch_size = batch;
        options.epochs = std::max<int64_t>(1, (steps * batch + split.train->size() - 1) / split.train->size());
        options.max_steps = steps;
        options.progress = false;
        options.profile = true;  // times the "data" region of every step after two warm-up steps
        train::Trainer trainer(*model, *loss, *optimizer, split, options, config.at("optimizer"));
        const auto report = trainer.run();
        const auto& regions = Profiler::instance().entries();
        const auto data_region = regions.find("data"), step_region = regions.find("step");
        if (data_region == regions.end() || step_region == regions.end())
          throw Error("bench_io: the trainer's profile has no \"data\" or \"step\" region; use more --steps");
        const double data_s = data_region->second.seconds / static_cast<double>(data_region->second.calls);
        const double step_s = step_region->second.seconds / static_cast<double>(step_region->second.calls);
        data_per_step[ahead ? 1 : 0] = data_s;
        const auto stats = dynamic_cast<io::Hdf5Dataset&>(*split.train).statistics();
        std::printf("train %s: %lld steps, %.2f samples/s; loading data %.2f ms of each %.0f ms step (%.1f%%); "
                    "reader: %.3f s reading%s, load() waiting %.3f s and converting/copying %.3f s; %lld of %lld "
                    "loads read ahead\n",
                    ahead ? "reading ahead" : "synchronous", static_cast<long long>(report.steps),
                    report.samples_per_second, 1e3 * data_s, 1e3 * step_s, 100.0 * data_s / step_s,
                    stats.read_seconds, ahead ? " and converting in the background" : "", stats.wait_seconds,
                    stats.convert_seconds, static_cast<long long>(stats.prefetched_loads),
                    static_cast<long long>(stats.loads));
      }
      std::printf("hidden_fraction=%.3f (1 - %.2f ms / %.2f ms of data loading per step)\n",
                  1.0 - data_per_step[1] / std::max(data_per_step[0], 1e-12), 1e3 * data_per_step[1],
                  1e3 * data_per_step[0]);
    }
  } catch (const std::exception& e) {
    return parallel::handle_fatal_error(e);
  }
  return 0;
}

#include "tessera/io/dataset.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "tessera/core/error.hpp"
#include "tessera/core/rng.hpp"
#include "tessera/io/synthetic_fields.hpp"
#ifdef TESSERA_HAVE_HDF5
#include "tessera/io/hdf5_dataset.hpp"
#endif

namespace tessera::io {

std::array<int64_t, 3> Dataset::spatial_size() const {
  const Shape s = sample_shape();
  if (s.rank() == 4) return {s[0], s[1], s[2]};
  if (s.rank() == 3) return {1, s[0], s[1]};
  return {1, 1, 1};
}

ConfigError hdf5_missing(const std::string& where) {
  return ConfigError(where, "this build of Tessera has no HDF5 support (configure with -DTESSERA_ENABLE_HDF5=ON)");
}

void check_load_arguments(const std::string& who, const std::array<int64_t, 3>& size, const parallel::Box& box,
                          int64_t rows, const Tensor& inputs, int64_t input_channels, const Tensor& targets,
                          int64_t target_values_per_row) {
  for (size_t k = 0; k < 3; ++k)
    if (box.offset[k] < 0 || box.extent[k] < 1 || box.offset[k] + box.extent[k] > size[k])
      throw ShapeError(who + ": box " + box.str() + " does not lie inside a sample of spatial size [" +
                       std::to_string(size[0]) + ", " + std::to_string(size[1]) + ", " + std::to_string(size[2]) + "]");
  require_shape(inputs.numel() >= rows * box.volume() * input_channels,
                who + ": inputs " + inputs.shape().str() + " too small for " + std::to_string(rows) + " samples of box " +
                    box.str() + " with " + std::to_string(input_channels) + " channels");
  require_shape(targets.numel() >= rows * target_values_per_row,
                who + ": targets " + targets.shape().str() + " too small for " + std::to_string(rows) + " samples of " +
                    std::to_string(target_values_per_row) + " target values");
}

namespace {

DataSplit synthetic_datasets(ConfigObject& cfg, uint64_t seed) {
  DataSplit split;
  SyntheticFields::Options o;
  o.task = cfg.choice("task", {"regression", "segmentation"}, "regression") == "regression"
               ? SyntheticFields::Task::regression
               : SyntheticFields::Task::segmentation;
  o.samples = cfg.integer_in("samples", 1, int64_t{1} << 40, 512);
  o.size = cfg.integer_in("size", 4, 4096, 16);
  o.channels = cfg.integer_in("channels", 1, 1024, 4);
  o.seed = static_cast<uint64_t>(cfg.integer_in("seed", 0, int64_t{1} << 62, static_cast<int64_t>(seed)));
  o.store_mb = cfg.integer_in("store_mb", 0, int64_t{1} << 30, 1024);
  const int64_t validation = cfg.integer_in("validation_samples", 0, int64_t{1} << 40, 64);
  split.train = std::make_unique<SyntheticFields>(o);
  if (validation > 0) {
    o.index_offset = static_cast<uint64_t>(o.samples);
    o.samples = validation;
    split.validation = std::make_unique<SyntheticFields>(o);
  }
  return split;
}

#ifdef TESSERA_HAVE_HDF5
/// The layout named by "files" or "sample_list" in `cfg` (exactly one of them).
std::shared_ptr<const Hdf5Layout> layout_of(ConfigObject& cfg, const Hdf5Layout::Names& names, bool check_all) {
  const bool files = cfg.has("files"), list = cfg.has("sample_list");
  if (files == list)
    throw ConfigError(cfg.path(), files ? "give \"files\" or \"sample_list\", not both"
                                        : "needs \"files\" (files of many samples: paths or glob patterns) or "
                                          "\"sample_list\" (a text file naming one-sample files)");
  if (files)
    return std::make_shared<const Hdf5Layout>(
        Hdf5Layout::from_files(cfg.string_list("files", {}), names, cfg.path_of("files")));
  return std::make_shared<const Hdf5Layout>(Hdf5Layout::from_sample_list(cfg.string("sample_list"), names, check_all));
}

DataSplit hdf5_datasets(ConfigObject& cfg, uint64_t seed) {
  Hdf5Layout::Names names{cfg.string("input_dataset", "inputs"), cfg.string("target_dataset", "targets")};
  Hdf5Dataset::Options options;
  options.where = cfg.path();
  if (cfg.has("normalize")) {
    auto n = cfg.object("normalize");
    options.normalization = Normalization::from_json(n);
  }
  options.prefetch = cfg.boolean("prefetch", true);
  options.store_bytes = cfg.integer_in("store_mb", 0, int64_t{1} << 30, 1024) << 20;
  const bool check_all = cfg.boolean("check_all_files", false);
  const auto data_seed = static_cast<uint64_t>(cfg.integer_in("seed", 0, int64_t{1} << 62, static_cast<int64_t>(seed)));
  const auto layout = layout_of(cfg, names, check_all);

  DataSplit split;
  std::vector<int64_t> train_samples;
  if (cfg.has("validation")) {
    auto v = cfg.object("validation");
    if (v.has("fraction")) {
      const double fraction = v.number_in("fraction", 0.0, 0.9, 0.1);
      v.finish();
      // A seeded random subset, not the last files: data sets are often ordered by parameter.
      std::vector<int64_t> order(static_cast<size_t>(layout->size()));
      std::iota(order.begin(), order.end(), 0);
      const uint64_t stream = 0x76616c6964ull;  // "valid"
      for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng::bits(data_seed, stream, i) % i]);
      const auto held_out = static_cast<size_t>(std::ceil(fraction * static_cast<double>(order.size())));
      if (held_out == 0 || held_out >= order.size())
        throw ConfigError(v.path_of("fraction"), "holds out " + std::to_string(held_out) + " of the " +
                                                     std::to_string(order.size()) +
                                                     " samples; both sets need at least one");
      std::vector<int64_t> held(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(held_out));
      train_samples.assign(order.begin() + static_cast<std::ptrdiff_t>(held_out), order.end());
      std::sort(held.begin(), held.end());
      std::sort(train_samples.begin(), train_samples.end());
      auto o = options;
      o.name = "hdf5 validation data";
      split.validation = std::make_unique<Hdf5Dataset>(layout, std::move(held), o);
    } else {
      const auto validation_layout = layout_of(v, names, check_all);
      v.finish();
      require_same_schema(layout->schema(), validation_layout->schema(), validation_layout->files().front().path,
                          layout->files().front().path, names);
      auto o = options;
      o.name = "hdf5 validation data";
      split.validation = std::make_unique<Hdf5Dataset>(validation_layout, std::vector<int64_t>{}, o);
    }
  }
  options.name = "hdf5 training data";
  split.train = std::make_unique<Hdf5Dataset>(layout, std::move(train_samples), options);
  return split;
}
#endif

}  // namespace

DataSplit make_datasets(ConfigObject& cfg, uint64_t seed) {
  const std::string source = cfg.choice("source", {"synthetic_fields", "hdf5"}, "synthetic_fields");
  DataSplit split;
  if (source == "synthetic_fields") {
    split = synthetic_datasets(cfg, seed);
  } else {
#ifdef TESSERA_HAVE_HDF5
    split = hdf5_datasets(cfg, seed);
#else
    throw hdf5_missing(cfg.path_of("source"));
#endif
  }
  cfg.finish();
  return split;
}

}  // namespace tessera::io

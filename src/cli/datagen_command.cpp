// `tessera datagen cosmoflow`: writes a synthetic CosmoFlow-like data set in the HDF5 layout of
// docs/data.md. Under mpirun each rank writes its share of the files.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "commands.hpp"
#include "tessera/core/atomic_file.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/stop_request.hpp"
#include "tessera/io/cell_volumes.hpp"
#include "tessera/io/cosmoflow_fields.hpp"
#include "tessera/parallel/communicator.hpp"
#ifdef TESSERA_HAVE_HDF5
#include "tessera/io/hdf5_writer.hpp"
#endif

namespace tessera::cli {
#ifdef TESSERA_HAVE_HDF5
namespace {

using Clock = std::chrono::steady_clock;

/// One file to write: which samples (global indices of the generator) go in it.
struct PlannedFile {
  std::string path, listed_as;  // listed_as: the path relative to the output folder
  int64_t first_index = 0, samples = 1;
};

std::string format(const char* fmt, double a, double b = 0, double c = 0, double d = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, a, b, c, d);
  return buf;
}

std::string join(const std::vector<double>& values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + format("%.4g", values[i]);
  return s + "]";
}

/// The files of one set ("train" or "validation") of `count` samples starting at `first`.
std::vector<PlannedFile> plan(const DatagenArgs& a, const std::string& set, int64_t first, int64_t count) {
  std::vector<PlannedFile> files;
  char name[64];
  if (a.layout == "sample-per-file") {
    for (int64_t i = 0; i < count; ++i) {
      std::snprintf(name, sizeof name, "%s/sample_%06lld.h5", set.c_str(), static_cast<long long>(i));
      files.push_back({a.output + "/" + name, name, first + i, 1});
    }
  } else {
    for (int64_t i = 0, k = 0; i < count; i += a.samples_per_file, ++k) {
      std::snprintf(name, sizeof name, "%s_%04lld.h5", set.c_str(), static_cast<long long>(k));
      files.push_back({a.output + "/" + name, name, first + i, std::min(a.samples_per_file, count - i)});
    }
  }
  return files;
}

/// With one file per sample, the lists naming them (train.txt, validation.txt). Called once
/// every file is in place and on disk, so a list never names a missing file.
void write_sample_lists(const DatagenArgs& a, const std::vector<PlannedFile>& train,
                        const std::vector<PlannedFile>& validation) {
  if (a.layout != "sample-per-file") return;
  auto write_list = [&](const std::string& name, const std::vector<PlannedFile>& files) {
    write_file_atomically(a.output + "/" + name, [&](std::FILE* f) {
      for (const auto& file : files) {
        const std::string line = file.listed_as + "\n";
        write_all(f, line.data(), line.size(), a.output + "/" + name);
      }
    });
  };
  write_list("train.txt", train);
  if (!validation.empty()) write_list("validation.txt", validation);
}

/// The start of the "data" section that reads the files written: its source and files.
std::string files_section(const DatagenArgs& a) {
  return std::string("\"data\": {\"source\": \"hdf5\", ") +
         (a.layout == "sample-per-file"
              ? "\"sample_list\": \"" + a.output + "/train.txt\"" +
                    (a.validation_samples > 0
                         ? ", \"validation\": {\"sample_list\": \"" + a.output + "/validation.txt\"}"
                         : std::string())
              : "\"files\": \"" + a.output + "/train_*.h5\"" +
                    (a.validation_samples > 0 ? ", \"validation\": {\"files\": \"" + a.output + "/validation_*.h5\"}"
                                              : std::string()));
}

/// Rank 0's progress: a bar redrawn in place on a terminal, a line per tenth otherwise.
class DatagenProgress {
 public:
  DatagenProgress(bool enabled, int64_t total, int ranks)
      : enabled_(enabled), tty_(::isatty(::fileno(stdout)) != 0), total_(total), ranks_(ranks) {}
  void update(int64_t done, double bytes) {
    if (!enabled_ || total_ == 0) return;
    const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
    const int tenth = static_cast<int>(10 * done / total_);
    if (!tty_ && tenth == last_tenth_ && done != total_) return;
    last_tenth_ = tenth;
    const double rate = static_cast<double>(done) / std::max(elapsed, 1e-9);
    std::string line = "datagen: " + std::to_string(done) + "/" + std::to_string(total_) + " samples" +
                       (ranks_ > 1 ? " (rank 0's share)" : "") +
                       format(" %5.1f%%  %.1f samples/s  %.1f MB/s  ETA %.0f s", 100.0 * static_cast<double>(done) / total_,
                              rate, bytes / 1e6 / std::max(elapsed, 1e-9),
                              static_cast<double>(total_ - done) / std::max(rate, 1e-9));
    std::fprintf(stdout, tty_ ? "\r%s\033[K" : "%s\n", line.c_str());
    if (tty_ && done == total_) std::fputc('\n', stdout);
    std::fflush(stdout);
  }

 private:
  bool enabled_, tty_;
  int64_t total_;
  int ranks_;
  int last_tenth_ = -1;
  Clock::time_point start_ = Clock::now();
};

/// The stored element at flat position `at`, as a double.
double stored_value(const std::vector<unsigned char>& stored, io::ElementType type, size_t at) {
  switch (type) {
    case io::ElementType::uint8: return static_cast<double>(stored[at]);
    case io::ElementType::int16: return static_cast<double>(reinterpret_cast<const int16_t*>(stored.data())[at]);
    default: return static_cast<double>(reinterpret_cast<const float*>(stored.data())[at]);
  }
}

/// A channel whose every voxel holds the same value teaches a network nothing, and comes only
/// from a --mean-count the stored type cannot express (every count 0, or every count at the
/// type's maximum). Refused at the first such sample instead of written as a data set.
void require_information(const std::vector<unsigned char>& stored, io::ElementType type, int64_t volume,
                         int64_t channels, int64_t index, const DatagenArgs& a) {
  for (int64_t c = 0; c < channels; ++c) {
    const double first = stored_value(stored, type, static_cast<size_t>(c));
    bool varies = false;
    for (int64_t v = 1; v < volume && !varies; ++v)
      varies = stored_value(stored, type, static_cast<size_t>(v * channels + c)) != first;
    if (varies) continue;
    throw ConfigError("--mean-count",
                      format("%g gives sample %.0f a channel %.0f whose every voxel holds %g particles, which carries "
                             "no signal",
                             a.mean_count, static_cast<double>(index), static_cast<double>(c), first) +
                          (first == 0.0 ? " (too few particles per voxel: raise --mean-count)"
                                        : " (the " + a.dtype + " maximum: lower --mean-count or use a wider --dtype)"));
  }
}

/// `datagen cells`: each rank writes its share of the files, volumes being a pure function of
/// (seed, index), so the files do not depend on the number of ranks.
int run_cells(const DatagenArgs& a) {
  const auto world = parallel::Communicator::world();
  const auto start = Clock::now();
  // Checked here as well as by the flags: the bound depends on two of them.
  if (a.membrane > 0.25 * a.cell_size)
    throw ConfigError("--membrane", format("%g voxels is more than a quarter of --cell-size %g: cells would be all "
                                           "membrane",
                                           a.membrane, a.cell_size));
  if (a.cell_size > static_cast<double>(a.size))
    throw ConfigError("--cell-size", format("%g voxels is larger than the volume (--size %.0f)", a.cell_size,
                                            static_cast<double>(a.size)));
  std::error_code ec;
  std::filesystem::create_directories(a.output, ec);
  if (a.layout == "sample-per-file") {
    std::filesystem::create_directories(a.output + "/train", ec);
    if (a.validation_samples > 0) std::filesystem::create_directories(a.output + "/validation", ec);
  }
  require_writable_location(a.output + "/train.txt", "the data set");

  io::SampleSchema schema;
  schema.input = Shape{a.size, a.size, a.size, 1};
  schema.input_type = io::ElementType::uint8;
  schema.target = Shape{a.size, a.size, a.size};
  schema.target_type = io::ElementType::uint8;
  schema.targets_per_voxel = true;
  io::Hdf5SampleWriter::Options options;
  options.stacked = a.layout == "samples-per-file";
  options.checksum = a.checksum;
  options.durable = options.stacked;

  const auto train = plan(a, "train", 0, a.samples);
  const auto validation = plan(a, "validation", a.samples, a.validation_samples);
  std::vector<const PlannedFile*> all;
  for (const auto& f : train) all.push_back(&f);
  for (const auto& f : validation) all.push_back(&f);
  int64_t mine = 0;
  for (size_t i = static_cast<size_t>(world.rank()); i < all.size(); i += static_cast<size_t>(world.size()))
    mine += all[i]->samples;

  io::CellVolumes cells({a.size, a.cell_size, a.membrane, a.noise, static_cast<uint64_t>(a.seed)});
  const int64_t volume = a.size * a.size * a.size;
  std::vector<uint8_t> image(static_cast<size_t>(volume)), labels(image.size());
  // Sum and sum of squares of the image, voxels; then voxels and membrane voxels of the
  // training and of the validation volumes, whose membrane fractions the summary reports.
  std::vector<double> moments(7, 0.0);
  DatagenProgress progress(!(a.quiet || a.no_progress) && world.rank() == 0, mine, world.size());
  int64_t done = 0;
  double bytes = 0.0;
  if (!a.quiet)
    log::info(format("datagen cells: %.0f training + %.0f validation volumes of %.0f^3 voxels, ",
                     static_cast<double>(a.samples), static_cast<double>(a.validation_samples),
                     static_cast<double>(a.size)) +
              format("cells %g voxels apart, membranes %g thick, noise %g, ", a.cell_size, a.membrane, a.noise) +
              a.layout + ", seed " + std::to_string(a.seed) + " -> " + a.output);
  const std::string generator = "tessera datagen cells --size " + std::to_string(a.size) +
                                format(" --cell-size %g --membrane %g --noise %g", a.cell_size, a.membrane, a.noise) +
                                " --seed " + std::to_string(a.seed);
  for (size_t i = static_cast<size_t>(world.rank()); i < all.size(); i += static_cast<size_t>(world.size())) {
    const PlannedFile& file = *all[i];
    io::Hdf5SampleWriter writer(file.path, schema, file.samples, options);
    for (int64_t k = 0; k < file.samples; ++k) {
      cells.sample(file.first_index + k, image.data(), labels.data());
      writer.write(k, image.data(), labels.data());
      int64_t membrane = 0;
      for (size_t v = 0; v < image.size(); ++v) {
        const double x = image[v];
        moments[0] += x;
        moments[1] += x * x;
        membrane += labels[v] == io::CellVolumes::kMembrane ? 1 : 0;
      }
      const size_t set = file.first_index + k < a.samples ? 3 : 5;
      moments[2] += static_cast<double>(volume);
      moments[set] += static_cast<double>(volume);
      moments[set + 1] += static_cast<double>(membrane);
      bytes += 2.0 * static_cast<double>(volume);
      progress.update(++done, bytes);
    }
    writer.set_attribute("generator", generator);
    writer.set_attribute("targets", "class per voxel: 0 membrane (cell boundary), 1 cell interior");
    writer.commit();
  }
  if (!options.durable) io::sync_file_system(a.output);
  world.barrier();  // every file is in place, on disk, before a list names it
  if (world.rank() == 0) write_sample_lists(a, train, validation);
  world.allreduce_sum(moments.data(), static_cast<int64_t>(moments.size()));

  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const double mean = moments[0] / moments[2];
  const double spread = std::sqrt(std::max(moments[1] / moments[2] - mean * mean, 1e-12));
  // Predicting "interior" everywhere scores a foreground IoU of 1 − the membrane fraction: the
  // baseline a segmentation of these volumes must beat.
  std::string summary = format(
      "datagen: wrote %.0f volumes in %.0f files in %.1f s; membrane (class 0): %.1f%% of "
      "the training voxels",
      static_cast<double>(a.samples + a.validation_samples), static_cast<double>(all.size()), seconds,
      100.0 * moments[4] / moments[3]);
  if (a.validation_samples > 0) summary += format(", %.1f%% of the validation voxels", 100.0 * moments[6] / moments[5]);
  const std::string data_section =
      files_section(a) + ",\n         \"normalize\": {\"transform\": \"none\", \"mean\": " + format("%.4g", mean) +
      ", \"std\": " + format("%.4g", spread) + "}}";
  log::info(summary + "\nread them with (mean and std measured on the data):\n  " + data_section);
  return 0;
}

}  // namespace
#endif

namespace {
/// `datagen cells`: its flags share DatagenArgs with `cosmoflow`; only one runs per call.
void add_cells_command(CLI::App& datagen, DatagenArgs& a) {
  auto* cmd = datagen.add_subcommand(
      "cells",
      "Electron-microscopy-like volumes for segmentation: packed cell bodies with dark membranes a few voxels "
      "thick, textured cytoplasm with dark organelles, blur and noise, as 1-channel uint8 images with a uint8 "
      "label per voxel (0 membrane, 1 cell interior). Under mpirun each rank writes its share of the files. "
      "Prints the \"data\" section of a run config that reads them.");
  cmd->add_option("--output,-o", a.output,
                  "Folder to write into (created if missing). Files of the same names are replaced, each atomically")
      ->required();
  cmd->add_option("--samples", a.samples, "Training volumes")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40))
      ->capture_default_str();
  cmd->add_option("--validation-samples", a.validation_samples,
                  "Validation volumes, drawn after the training ones (disjoint); 0: none")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40))
      ->capture_default_str();
  cmd->add_option("--size", a.size, "Voxels per side of each cubic volume, 8 to 1024")
      ->check(CLI::Range(int64_t{8}, int64_t{1024}))
      ->capture_default_str();
  cmd->add_option("--cell-size", a.cell_size, "Spacing of the cells' centres in voxels, about a cell's diameter")
      ->check(CLI::Range(4.0, 1024.0))
      ->capture_default_str();
  cmd->add_option("--membrane", a.membrane, "Membrane thickness in voxels, at most a quarter of --cell-size")
      ->check(CLI::Range(0.5, 256.0))
      ->capture_default_str();
  cmd->add_option("--noise", a.noise, "Standard deviation of the image noise, as a fraction of the intensity range")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--seed", a.seed, "Seed of the volumes; each depends only on (seed, index)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--layout", a.layout,
                  "sample-per-file: one file per volume listed in train.txt / validation.txt (read with "
                  "\"sample_list\"); samples-per-file: train_NNNN.h5 files of --samples-per-file volumes (read with "
                  "\"files\")")
      ->check(CLI::IsMember({"sample-per-file", "samples-per-file"}))
      ->capture_default_str();
  cmd->add_option("--samples-per-file", a.samples_per_file, "Volumes per file with --layout samples-per-file")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30))
      ->capture_default_str();
  cmd->add_flag("--checksum", a.checksum,
                "Store each volume as a chunk with HDF5's Fletcher-32 checksum, so damaged data is refused when read");
  cmd->add_flag("--no-progress", a.no_progress, "No progress lines");
  cmd->add_flag("--quiet", a.quiet, "Only errors and the final summary");
  cmd->callback([&a] { a.generator = "cells"; });
}
}  // namespace

CLI::App* add_datagen_command(CLI::App& app, DatagenArgs& a) {
  auto* datagen = app.add_subcommand("datagen", "Write a synthetic data set in Tessera's HDF5 layout (docs/data.md).");
  datagen->require_subcommand(1);
  auto* cmd = datagen->add_subcommand(
      "cosmoflow",
      "CosmoFlow-like universes: 4-channel 3D log-normal density fields (one channel per redshift) whose power "
      "spectrum and growth are set by 4 parameters drawn per sample, stored with the parameters (each in [-1, 1]) "
      "as the regression targets. Under mpirun each rank writes its share of the files. Prints the \"data\" "
      "section of a run config that reads them.");
  cmd->add_option("--output,-o", a.output,
                  "Folder to write into (created if missing). Files of the same names are replaced, each atomically")
      ->required();
  cmd->add_option("--samples", a.samples, "Training samples")->check(CLI::Range(int64_t{1}, int64_t{1} << 40))
      ->capture_default_str();
  cmd->add_option("--validation-samples", a.validation_samples,
                  "Validation samples, drawn after the training ones (disjoint); 0: none")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40))
      ->capture_default_str();
  cmd->add_option("--size", a.size, "Voxels per side of each cubic sample: a power of two from 8 to 1024 (CosmoFlow: 128 or 512)")
      ->check([](const std::string& v) -> std::string {
        const long long s = std::atoll(v.c_str());
        return s >= 8 && s <= 1024 && (s & (s - 1)) == 0 ? "" : "the size must be a power of two from 8 to 1024";
      })
      ->capture_default_str();
  cmd->add_option("--channels", a.channels, "Channels per voxel: redshifts, the earliest first")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--seed", a.seed, "Seed of the parameters and fields; each sample depends only on (seed, index)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--layout", a.layout,
                  "sample-per-file: one file per sample listed in train.txt / validation.txt (CosmoFlow's layout, "
                  "read with \"sample_list\"); samples-per-file: train_NNNN.h5 files of --samples-per-file samples "
                  "(read with \"files\")")
      ->check(CLI::IsMember({"sample-per-file", "samples-per-file"}))
      ->capture_default_str();
  cmd->add_option("--samples-per-file", a.samples_per_file, "Samples per file with --layout samples-per-file")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30))
      ->capture_default_str();
  cmd->add_option("--dtype", a.dtype,
                  "Stored element type: int16 or uint8 hold particle counts per voxel (CosmoFlow stores int16), "
                  "float32 the densities themselves")
      ->check(CLI::IsMember({"int16", "uint8", "float32"}))
      ->capture_default_str();
  cmd->add_option("--mean-count", a.mean_count,
                  "Particles per voxel at mean density, for integer types (counts above the type's maximum are "
                  "clipped and reported; a data set whose counts are all 0 or all clipped is refused)")
      ->check([](const std::string& v) -> std::string {
        // std::strtod accepts "nan" and "inf", which no mean count can be.
        const double m = std::strtod(v.c_str(), nullptr);
        return std::isfinite(m) && m > 0.0 && m <= 1e12 ? "" : "the mean count must be a number in (0, 1e12]";
      })
      ->capture_default_str();
  cmd->add_flag("--checksum", a.checksum,
                "Store each sample as a chunk with HDF5's Fletcher-32 checksum, so damaged data is refused when read "
                "(slower to read than the default contiguous storage)");
  cmd->add_flag("--no-progress", a.no_progress, "No progress lines");
  cmd->add_flag("--quiet", a.quiet, "Only errors and the final summary");
  cmd->callback([&a] { a.generator = "cosmoflow"; });
  add_cells_command(*datagen, a);
  return datagen;
}

int run_datagen(DatagenArgs& a) {
#ifndef TESSERA_HAVE_HDF5
  (void)a;
  throw ConfigError("datagen", "this build of Tessera has no HDF5 support (configure with -DTESSERA_ENABLE_HDF5=ON)");
#else
  // Nothing to save half-way: a stop signal ends the process at once, removing the files
  // being written (whole files already in place stay).
  const StopSignalHandlers signals(StopMode::at_once);
  if (a.generator == "cells") return run_cells(a);
  const auto world = parallel::Communicator::world();
  const auto start = Clock::now();
  std::error_code ec;
  std::filesystem::create_directories(a.output, ec);
  if (a.layout == "sample-per-file") {
    std::filesystem::create_directories(a.output + "/train", ec);
    if (a.validation_samples > 0) std::filesystem::create_directories(a.output + "/validation", ec);
  }
  require_writable_location(a.output + "/train.txt", "the data set");

  const auto type = a.dtype == "uint8" ? io::ElementType::uint8
                    : a.dtype == "int16" ? io::ElementType::int16
                                         : io::ElementType::float32;
  io::SampleSchema schema;
  schema.input = Shape{a.size, a.size, a.size, a.channels};
  schema.input_type = type;
  schema.target = Shape{4};
  schema.target_type = io::ElementType::float32;
  io::Hdf5SampleWriter::Options options;
  options.stacked = a.layout == "samples-per-file";
  options.checksum = a.checksum;
  // Thousands of one-sample files: one file-system sync at the end instead of one per file.
  options.durable = options.stacked;

  const auto train = plan(a, "train", 0, a.samples);
  const auto validation = plan(a, "validation", a.samples, a.validation_samples);
  std::vector<const PlannedFile*> all;
  for (const auto& f : train) all.push_back(&f);
  for (const auto& f : validation) all.push_back(&f);
  int64_t mine = 0;
  for (size_t i = static_cast<size_t>(world.rank()); i < all.size(); i += static_cast<size_t>(world.size()))
    mine += all[i]->samples;

  io::CosmoFlowFields fields({a.size, a.channels, static_cast<uint64_t>(a.seed)});
  const int64_t volume = a.size * a.size * a.size, values = volume * a.channels;
  std::vector<unsigned char> stored(static_cast<size_t>(values * io::element_size(type)));
  // Moments per channel of the values after the suggested transform (log1p for counts), for
  // the normalisation the summary suggests; every `stride`-th voxel is enough for that.
  const int64_t stride = std::max<int64_t>(1, volume >> 18);
  std::vector<double> moments(static_cast<size_t>(2 * a.channels + 2), 0.0);  // sums, squares, count, clipped
  const bool counts = type != io::ElementType::float32;
  DatagenProgress progress(!(a.quiet || a.no_progress) && world.rank() == 0, mine, world.size());
  int64_t done = 0;
  double bytes = 0.0;
  if (!a.quiet)
    log::info(format("datagen cosmoflow: %.0f training + %.0f validation samples of %.0f channels x %.0f^3 ",
                     static_cast<double>(a.samples), static_cast<double>(a.validation_samples),
                     static_cast<double>(a.channels), static_cast<double>(a.size)) +
              a.dtype + ", " + a.layout + ", seed " + std::to_string(a.seed) + " -> " + a.output);

  for (size_t i = static_cast<size_t>(world.rank()); i < all.size(); i += static_cast<size_t>(world.size())) {
    const PlannedFile& file = *all[i];
    io::Hdf5SampleWriter writer(file.path, schema, file.samples, options);
    for (int64_t k = 0; k < file.samples; ++k) {
      const int64_t index = file.first_index + k;
      moments.back() += static_cast<double>(fields.stored_values(index, type, a.mean_count, stored.data()));
      require_information(stored, type, volume, a.channels, index, a);
      const auto theta = fields.parameters(index);
      writer.write(k, stored.data(), theta.data());
      for (int64_t v = 0; v < volume; v += stride)
        for (int64_t c = 0; c < a.channels; ++c) {
          const double value = stored_value(stored, type, static_cast<size_t>(v * a.channels + c));
          const double x = counts ? std::log1p(value) : value;
          moments[static_cast<size_t>(c)] += x;
          moments[static_cast<size_t>(a.channels + c)] += x * x;
        }
      moments[static_cast<size_t>(2 * a.channels)] += static_cast<double>((volume + stride - 1) / stride);
      bytes += static_cast<double>(stored.size());
      progress.update(++done, bytes);
    }
    writer.set_attribute("generator", "tessera datagen cosmoflow --size " + std::to_string(a.size) + " --channels " +
                                          std::to_string(a.channels) + " --seed " + std::to_string(a.seed) +
                                          " --dtype " + a.dtype + " --mean-count " + format("%g", a.mean_count));
    writer.set_attribute("targets", "theta0 amplitude, theta1 spectral index, theta2 turnover, theta3 growth; "
                                    "each uniform in [-1, 1]");
    writer.commit();
  }
  if (!options.durable) io::sync_file_system(a.output);
  world.barrier();  // every file is in place, on disk, before a list names it
  if (world.rank() == 0) write_sample_lists(a, train, validation);
  world.allreduce_sum(moments.data(), static_cast<int64_t>(moments.size()));

  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const double n = moments[static_cast<size_t>(2 * a.channels)];
  std::vector<double> mean, spread;
  for (int64_t c = 0; c < a.channels; ++c) {
    const double m = moments[static_cast<size_t>(c)] / n;
    mean.push_back(m);
    spread.push_back(std::sqrt(std::max(moments[static_cast<size_t>(a.channels + c)] / n - m * m, 1e-12)));
  }
  std::string summary = format("datagen: wrote %.0f samples in %.0f files in %.1f s",
                               static_cast<double>(a.samples + a.validation_samples), static_cast<double>(all.size()),
                               seconds);
  if (counts) summary += format(", %.0f counts clipped to the type's maximum", moments.back());
  const std::string data_section = files_section(a) + ",\n         \"normalize\": {\"transform\": \"" +
                                   (counts ? "log1p" : "none") + "\", \"mean\": " + join(mean) +
                                   ", \"std\": " + join(spread) + "}}";
  log::info(summary + "\nread them with (mean and std measured on the data):\n  " + data_section);
  return 0;
#endif
}

}  // namespace tessera::cli

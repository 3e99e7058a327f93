// `tessera datagen cosmoflow` and `tessera datagen cells`: write a synthetic data set in the
// HDF5 layout of docs/data.md (io::Hdf5DatasetWriter). Under mpirun each rank writes its share
// of the files.
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "commands.hpp"
#include "number_checks.hpp"
#include "tessera/core/atomic_file.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/format.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/seconds_since.hpp"
#include "tessera/io/dataset.hpp"
#include "tessera/parallel/communicator.hpp"
#ifdef TESSERA_HAVE_HDF5
#include "tessera/io/cell_samples.hpp"
#include "tessera/io/cosmoflow_samples.hpp"
#include "tessera/io/hdf5_dataset_writer.hpp"
#endif

namespace tessera::cli {
#ifdef TESSERA_HAVE_HDF5
namespace {

using Clock = std::chrono::steady_clock;

std::string join(const std::vector<double>& values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + format("%.4g", values[i]);
  return s + "]";
}

io::DatasetLayout layout_of(const DatagenArgs& a) {
  io::DatasetLayout layout;
  layout.output = a.output;
  layout.train_samples = a.samples;
  layout.validation_samples = a.validation_samples;
  layout.sample_per_file = a.layout == "sample-per-file";
  layout.samples_per_file = a.samples_per_file;
  return layout;
}

/// `datagen cells`: the volumes, then a summary with the normalisation that reads them.
int run_cells(const DatagenArgs& a) {
  const auto world = parallel::Communicator::world();
  const auto start = Clock::now();
  io::CellSamples samples({a.size, a.cell_size, a.membrane, a.noise, static_cast<uint64_t>(a.seed)}, a.samples);
  io::Hdf5DatasetWriter writer(layout_of(a), a.checksum, world);
  if (!a.quiet)
    log::info(format("datagen cells: %lld training + %lld validation volumes of %lld^3 voxels, ",
                     static_cast<long long>(a.samples), static_cast<long long>(a.validation_samples),
                     static_cast<long long>(a.size)) +
              format("cells %g voxels apart, membranes %g thick, noise %g, ", a.cell_size, a.membrane, a.noise) +
              a.layout + ", seed " + std::to_string(a.seed) + " -> " + a.output);
  writer.write(samples, !(a.quiet || a.no_progress));
  const auto stats = samples.statistics(world);
  std::string summary =
      format("datagen: wrote %lld volumes in %zu files in %.1f s; membrane (class 0): %.1f%% of the training voxels",
             static_cast<long long>(a.samples + a.validation_samples), writer.files().all().size(),
             seconds_since(start), 100.0 * stats.train_membrane);
  if (a.validation_samples > 0)
    summary += format(", %.1f%% of the validation voxels", 100.0 * stats.validation_membrane);
  const std::string data_section =
      writer.files().data_section() +
      ",\n         \"normalize\": {\"transform\": \"none\", \"mean\": " + format("%.4g", stats.mean) +
      ", \"std\": " + format("%.4g", stats.std) + "}}";
  log::info(summary + "\nread them with (mean and std measured on the data):\n  " + data_section);
  return 0;
}

io::ElementType element_type(const std::string& dtype) {
  return dtype == "uint8"   ? io::ElementType::uint8
         : dtype == "int16" ? io::ElementType::int16
                            : io::ElementType::float32;
}

/// `datagen cosmoflow`: the universes, then a summary with the normalisation that reads them.
int run_cosmoflow(const DatagenArgs& a) {
  const auto world = parallel::Communicator::world();
  const auto start = Clock::now();
  io::CosmoFlowSamples samples(
      {{a.size, a.channels, static_cast<uint64_t>(a.seed)}, element_type(a.dtype), a.mean_count});
  io::Hdf5DatasetWriter writer(layout_of(a), a.checksum, world);
  if (!a.quiet)
    log::info(format("datagen cosmoflow: %lld training + %lld validation samples of %lld channels x %lld^3 ",
                     static_cast<long long>(a.samples), static_cast<long long>(a.validation_samples),
                     static_cast<long long>(a.channels), static_cast<long long>(a.size)) +
              a.dtype + ", " + a.layout + ", seed " + std::to_string(a.seed) + " -> " + a.output);
  writer.write(samples, !(a.quiet || a.no_progress));
  const auto stats = samples.statistics(world);
  std::string summary = format("datagen: wrote %lld samples in %zu files in %.1f s",
                               static_cast<long long>(a.samples + a.validation_samples), writer.files().all().size(),
                               seconds_since(start));
  if (samples.counts()) summary += format(", %.0f counts clipped to the type's maximum", stats.clipped);
  const std::string data_section = writer.files().data_section() + ",\n         \"normalize\": {\"transform\": \"" +
                                   (samples.counts() ? "log1p" : "none") + "\", \"mean\": " + join(stats.mean) +
                                   ", \"std\": " + join(stats.std) + "}}";
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
      ->check(integer_in(1, int64_t{1} << 40))
      ->capture_default_str();
  cmd->add_option("--validation-samples", a.validation_samples,
                  "Validation volumes, drawn after the training ones (disjoint); 0: none")
      ->check(integer_in(0, int64_t{1} << 40))
      ->capture_default_str();
  cmd->add_option("--size", a.size, "Voxels per side of each cubic volume, 8 to 1024")
      ->check(integer_in(8, 1024))
      ->capture_default_str();
  cmd->add_option("--cell-size", a.cell_size, "Spacing of the cells' centres in voxels, about a cell's diameter")
      ->check(real_in(4.0, 1024.0))
      ->capture_default_str();
  cmd->add_option("--membrane", a.membrane, "Membrane thickness in voxels, at most a quarter of --cell-size")
      ->check(real_in(0.5, 256.0))
      ->capture_default_str();
  cmd->add_option("--noise", a.noise, "Standard deviation of the image noise, as a fraction of the intensity range")
      ->check(real_in(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--seed", a.seed, "Seed of the volumes; each depends only on (seed, index)")
      ->check(integer_in(0, int64_t{1} << 62))
      ->capture_default_str();
  cmd->add_option("--layout", a.layout,
                  "sample-per-file: one file per volume listed in train.txt / validation.txt (read with "
                  "\"sample_list\"); samples-per-file: train_NNNN.h5 files of --samples-per-file volumes (read with "
                  "\"files\")")
      ->check(CLI::IsMember({"sample-per-file", "samples-per-file"}))
      ->capture_default_str();
  cmd->add_option("--samples-per-file", a.samples_per_file, "Volumes per file with --layout samples-per-file")
      ->check(integer_in(1, int64_t{1} << 30))
      ->capture_default_str();
  cmd->add_flag("--checksum", a.checksum,
                "Store each volume as a chunk with HDF5's Fletcher-32 checksum, so damaged data is refused when read");
  cmd->add_flag("--no-progress", a.no_progress, "No progress lines");
  cmd->add_flag("--quiet", a.quiet, "Only errors and the final summary");
  cmd->callback([&a] { a.generator = "cells"; });
}

/// `datagen cosmoflow`: its flags share DatagenArgs with `cells`; only one runs per call.
void add_cosmoflow_command(CLI::App& datagen, DatagenArgs& a) {
  auto* cmd = datagen.add_subcommand(
      "cosmoflow",
      "CosmoFlow-like universes: 4-channel 3D log-normal density fields (one channel per redshift) whose power "
      "spectrum and growth are set by 4 parameters drawn per sample, stored with the parameters (each in [-1, 1]) "
      "as the regression targets. Under mpirun each rank writes its share of the files. Prints the \"data\" "
      "section of a run config that reads them.");
  cmd->add_option("--output,-o", a.output,
                  "Folder to write into (created if missing). Files of the same names are replaced, each atomically")
      ->required();
  cmd->add_option("--samples", a.samples, "Training samples")
      ->check(integer_in(1, int64_t{1} << 40))
      ->capture_default_str();
  cmd->add_option("--validation-samples", a.validation_samples,
                  "Validation samples, drawn after the training ones (disjoint); 0: none")
      ->check(integer_in(0, int64_t{1} << 40))
      ->capture_default_str();
  cmd->add_option("--size", a.size,
                  "Voxels per side of each cubic sample: a power of two from 8 to 1024 (CosmoFlow: 128 or 512)")
      ->check([](const std::string& v) -> std::string {
        int64_t s = 0;
        const std::string problem = read_integer(v, {8, 1024}, s);
        return !problem.empty() || (s & (s - 1)) == 0 ? problem : "expected a power of two from 8 to 1024, got " + v;
      })
      ->capture_default_str();
  cmd->add_option("--channels", a.channels, "Channels per voxel: redshifts, the earliest first")
      ->check(integer_in(1, 64))
      ->capture_default_str();
  cmd->add_option("--seed", a.seed, "Seed of the parameters and fields; each sample depends only on (seed, index)")
      ->check(integer_in(0, int64_t{1} << 62))
      ->capture_default_str();
  cmd->add_option("--layout", a.layout,
                  "sample-per-file: one file per sample listed in train.txt / validation.txt (CosmoFlow's layout, "
                  "read with \"sample_list\"); samples-per-file: train_NNNN.h5 files of --samples-per-file samples "
                  "(read with \"files\")")
      ->check(CLI::IsMember({"sample-per-file", "samples-per-file"}))
      ->capture_default_str();
  cmd->add_option("--samples-per-file", a.samples_per_file, "Samples per file with --layout samples-per-file")
      ->check(integer_in(1, int64_t{1} << 30))
      ->capture_default_str();
  cmd->add_option("--dtype", a.dtype,
                  "Stored element type: int16 or uint8 hold particle counts per voxel (CosmoFlow stores int16), "
                  "float32 the densities themselves")
      ->check(CLI::IsMember({"int16", "uint8", "float32"}))
      ->capture_default_str();
  cmd->add_option("--mean-count", a.mean_count,
                  "Particles per voxel at mean density, for integer types (counts above the type's maximum are "
                  "clipped and reported; a data set whose counts are all 0 or all clipped is refused)")
      ->check(real_in(0.0, 1e12, true))
      ->capture_default_str();
  cmd->add_flag("--checksum", a.checksum,
                "Store each sample as a chunk with HDF5's Fletcher-32 checksum, so damaged data is refused when read "
                "(slower to read than the default contiguous storage)");
  cmd->add_flag("--no-progress", a.no_progress, "No progress lines");
  cmd->add_flag("--quiet", a.quiet, "Only errors and the final summary");
  cmd->callback([&a] { a.generator = "cosmoflow"; });
}
}  // namespace

CLI::App* add_datagen_command(CLI::App& app, DatagenArgs& a) {
  auto* datagen = app.add_subcommand("datagen", "Write a synthetic data set in Tessera's HDF5 layout (docs/data.md).");
  datagen->require_subcommand(1);
  add_cosmoflow_command(*datagen, a);
  add_cells_command(*datagen, a);
  return datagen;
}

int run_datagen(DatagenArgs& a) {
#ifndef TESSERA_HAVE_HDF5
  (void)a;
  throw io::hdf5_missing("datagen");
#else
  require_writable_folder(a.output, "--output (the data set)");
  return a.generator == "cells" ? run_cells(a) : run_cosmoflow(a);
#endif
}

}  // namespace tessera::cli

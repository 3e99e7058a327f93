#include "tessera/io/cell_samples.hpp"

#include <algorithm>
#include <cmath>

#include "tessera/core/error.hpp"
#include "tessera/core/format.hpp"

namespace tessera::io {
namespace {

/// The options, refused where two of them together make no cells (each alone is in range).
const CellVolumes::Options& checked(const CellVolumes::Options& o) {
  if (o.membrane > 0.25 * o.cell_size)
    throw ConfigError("--membrane", format("%g voxels is more than a quarter of --cell-size %g: cells would be all "
                                           "membrane",
                                           o.membrane, o.cell_size));
  if (o.cell_size > static_cast<double>(o.size))
    throw ConfigError("--cell-size", format("%g voxels is larger than the volume (--size %lld)", o.cell_size,
                                            static_cast<long long>(o.size)));
  return o;
}

}  // namespace

CellSamples::CellSamples(const CellVolumes::Options& options, int64_t train_samples)
    : cells_(checked(options)), train_samples_(train_samples) {}

SampleSchema CellSamples::schema() const {
  const int64_t s = cells_.options().size;
  SampleSchema schema;
  schema.input = Shape{s, s, s, 1};
  schema.input_type = ElementType::uint8;
  schema.target = Shape{s, s, s};
  schema.target_type = ElementType::uint8;
  schema.targets_per_voxel = true;
  schema.extras.push_back({"instances", Shape{s, s, s}, ElementType::int32});
  return schema;
}

void CellSamples::generate(int64_t index, const SampleBuffers& out) {
  auto* image = static_cast<uint8_t*>(out.inputs);
  auto* labels = static_cast<uint8_t*>(out.targets);
  cells_.sample(index, image, labels, static_cast<int32_t*>(out.extras.at(0)));
  const int64_t s = cells_.options().size, volume = s * s * s;
  int64_t membrane = 0;
  for (int64_t v = 0; v < volume; ++v) {
    const double x = image[v];
    moments_[0] += x;
    moments_[1] += x * x;
    membrane += labels[v] == CellVolumes::kMembrane ? 1 : 0;
  }
  const size_t set = index < train_samples_ ? 3 : 5;
  moments_[2] += static_cast<double>(volume);
  moments_[set] += static_cast<double>(volume);
  moments_[set + 1] += static_cast<double>(membrane);
}

std::vector<std::pair<std::string, std::string>> CellSamples::attributes() const {
  const auto& o = cells_.options();
  return {{"generator", "tessera datagen cells --size " + std::to_string(o.size) +
                            format(" --cell-size %g --membrane %g --noise %g", o.cell_size, o.membrane, o.noise) +
                            " --seed " + std::to_string(o.seed)},
          {"targets", "class per voxel: 0 membrane (cell boundary), 1 cell interior"},
          {"instances", "cell id per voxel (1, 2, ...), 0 on membrane: the objects an instance segmentation "
                        "is scored against"}};
}

CellSamples::Statistics CellSamples::statistics(const parallel::Communicator& comm) const {
  auto moments = moments_;
  comm.allreduce_sum(moments.data(), static_cast<int64_t>(moments.size()));
  Statistics s;
  s.mean = moments[0] / moments[2];
  s.std = std::sqrt(std::max(moments[1] / moments[2] - s.mean * s.mean, 1e-12));
  s.train_membrane = moments[4] / moments[3];
  s.validation_membrane = moments[5] > 0 ? moments[6] / moments[5] : 0.0;
  return s;
}

}  // namespace tessera::io

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/io/cell_volumes.hpp"

using namespace tessera;

namespace {

io::CellVolumes make(int64_t size, uint64_t seed, double cell_size = 14.0, double membrane = 1.6) {
  io::CellVolumes::Options o;
  o.size = size;
  o.seed = seed;
  o.cell_size = cell_size;
  o.membrane = membrane;
  return io::CellVolumes(o);
}

struct Volume {
  std::vector<uint8_t> image, labels;
};

Volume sample(io::CellVolumes& cells, int64_t index) {
  const auto n = static_cast<size_t>(cells.options().size * cells.options().size * cells.options().size);
  Volume v{std::vector<uint8_t>(n), std::vector<uint8_t>(n)};
  cells.sample(index, v.image.data(), v.labels.data());
  return v;
}

double membrane_fraction(const std::vector<uint8_t>& labels) {
  int64_t membrane = 0;
  for (const uint8_t l : labels) membrane += l == io::CellVolumes::kMembrane ? 1 : 0;
  return static_cast<double>(membrane) / static_cast<double>(labels.size());
}

}  // namespace

TEST_CASE("Cell volumes are a function of seed and index", "[io][cells]") {
  auto a = make(16, 1), b = make(16, 1), c = make(16, 2);
  const auto first = sample(a, 3);
  sample(a, 4);  // the generator's scratch state does not leak into the next sample
  const auto again = sample(a, 3), other = sample(b, 3), next = sample(a, 4), reseeded = sample(c, 3);
  CHECK(first.image == again.image);
  CHECK(first.labels == again.labels);
  CHECK(first.image == other.image);  // a second generator, as another rank would make it
  CHECK(first.labels == other.labels);
  CHECK(first.labels != next.labels);
  CHECK(first.labels != reseeded.labels);
  CHECK(first.image != reseeded.image);
}

TEST_CASE("Cell labels are membrane or interior, with a membrane fraction set by cell size and thickness",
          "[io][cells]") {
  auto cells = make(32, 5);
  double fraction = 0.0;
  for (int64_t index = 0; index < 3; ++index) {
    const auto v = sample(cells, index);
    for (const uint8_t l : v.labels) REQUIRE((l == io::CellVolumes::kMembrane || l == io::CellVolumes::kInterior));
    fraction += membrane_fraction(v.labels) / 3.0;
  }
  // Thin sheets between cells ~14 voxels across: a sizeable minority of the voxels, as in EM
  // segmentation data, neither a trace nor most of the volume.
  INFO("membrane fraction " << fraction);
  CHECK(fraction > 0.12);
  CHECK(fraction < 0.4);
  // Thicker membranes and smaller cells raise it.
  auto dense = make(32, 5, 8.0, 2.0);
  CHECK(membrane_fraction(sample(dense, 0).labels) > fraction + 0.1);
}

TEST_CASE("Cell images: membranes are dark, interiors bright, both noisy", "[io][cells]") {
  auto cells = make(32, 9);
  const auto v = sample(cells, 0);
  double sum[2] = {0, 0}, squares[2] = {0, 0}, count[2] = {0, 0};
  for (size_t i = 0; i < v.image.size(); ++i) {
    const double x = v.image[i];
    sum[v.labels[i]] += x;
    squares[v.labels[i]] += x * x;
    count[v.labels[i]] += 1;
  }
  const double membrane = sum[0] / count[0], interior = sum[1] / count[1];
  const double interior_sd = std::sqrt(squares[1] / count[1] - interior * interior);
  INFO("membrane mean " << membrane << ", interior mean " << interior << " (sd " << interior_sd << ")");
  CHECK(interior - membrane > 60.0);
  // Texture, organelles and noise: a single voxel's brightness does not give its class.
  CHECK(interior_sd > 20.0);
  // The noise-free rendering agrees with the labels of the stored sample.
  DeviceView<float> clean("clean", v.labels.size());
  DeviceView<uint8_t> labels("labels", v.labels.size());
  cells.clean(0, clean, labels);
  auto host = Kokkos::create_mirror_view(labels);
  Kokkos::deep_copy(host, labels);
  CHECK(std::vector<uint8_t>(host.data(), host.data() + host.extent(0)) == v.labels);
}

TEST_CASE("Cell volumes refuse impossible options", "[io][cells]") {
  CHECK_THROWS_AS(make(4, 0), Error);             // too small
  CHECK_THROWS_AS(make(16, 0, 32.0), Error);      // cells larger than the volume
  CHECK_THROWS_AS(make(32, 0, 8.0, 3.0), Error);  // membranes thicker than a quarter cell
}

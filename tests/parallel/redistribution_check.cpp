// Run under mpirun at 1, 2, 4 or 8 ranks. For each case whose distributions use exactly the
// job's ranks, moves a global activation between the two distributions in both directions and
// checks, against formulas of global (n, d, h, w, c) computed on every rank, that forward
// yields this rank's block under the destination distribution and backward (the inverse
// move) this rank's block under the source. Exit status 0 on every rank when all checks pass.
#include <Kokkos_Core.hpp>

#include "mpi_check.hpp"
#include "support/mpi_program.hpp"
#include "tessera/core/error.hpp"
#include "tessera/parallel/redistribution.hpp"

using namespace tessera;
using parallel::Index5;

namespace {

struct RedistributionCase {
  std::string name;
  Shape global;
  parallel::Distribution a, b;
};

parallel::Distribution grid(int sample, int depth, int height, int width) {
  parallel::Distribution d;
  d.sample = sample, d.depth = depth, d.height = height, d.width = width;
  return d;
}

std::vector<RedistributionCase> all_cases() {
  return {
      {"one rank", Shape{2, 2, 3, 4, 2}, grid(1, 1, 1, 1), grid(1, 1, 1, 1)},
      {"one rank 2D", Shape{2, 3, 4, 2}, grid(1, 1, 1, 1), grid(1, 1, 1, 1)},
      {"sample 2 / depth 2", Shape{4, 4, 3, 2, 3}, grid(2, 1, 1, 1), grid(1, 2, 1, 1)},
      {"width 2 / sample 2", Shape{2, 3, 2, 4, 2}, grid(1, 1, 1, 2), grid(2, 1, 1, 1)},
      {"height 2 / width 2 2D", Shape{2, 4, 6, 3}, grid(1, 1, 2, 1), grid(1, 1, 1, 2)},
      {"sample 2 / sample 2", Shape{4, 2, 2, 2, 2}, grid(2, 1, 1, 1), grid(2, 1, 1, 1)},
      {"sample 4 / depth 2, height 2", Shape{4, 4, 4, 3, 2}, grid(4, 1, 1, 1), grid(1, 2, 2, 1)},
      {"sample 2, width 2 / height 4", Shape{4, 2, 4, 4, 2}, grid(2, 1, 1, 2), grid(1, 1, 4, 1)},
      {"sample 2, depth 2 / sample 4", Shape{4, 4, 2, 2, 3}, grid(2, 2, 1, 1), grid(4, 1, 1, 1)},
      {"height 2, width 2 / sample 4 2D", Shape{4, 4, 4, 3}, grid(1, 1, 2, 2), grid(4, 1, 1, 1)},
      {"depth 2, height 2, width 2 / sample 8", Shape{8, 2, 2, 2, 3}, grid(1, 2, 2, 2), grid(8, 1, 1, 1)},
      {"sample 2, depth 2, height 2 / sample 4, width 2", Shape{8, 4, 2, 4, 2}, grid(2, 2, 2, 1), grid(4, 1, 1, 2)},
      {"sample 2, height 2, width 2 / sample 8 2D", Shape{8, 4, 4, 2}, grid(2, 1, 2, 2), grid(8, 1, 1, 1)},
      // Batches that do not divide: sample groups of shares that differ by one sample.
      {"sample 2 / depth 2, batch 5", Shape{5, 4, 3, 2, 3}, grid(2, 1, 1, 1), grid(1, 2, 1, 1)},
      {"sample 2 / sample 2, batch 3", Shape{3, 2, 2, 2, 2}, grid(2, 1, 1, 1), grid(2, 1, 1, 1)},
      {"sample 2, depth 2 / sample 4, batch 7", Shape{7, 4, 2, 2, 3}, grid(2, 2, 1, 1), grid(4, 1, 1, 1)},
      {"sample 4 / depth 2, height 2, batch 5", Shape{5, 4, 4, 3, 2}, grid(4, 1, 1, 1), grid(1, 2, 2, 1)},
      {"sample 2, height 2, width 2 / sample 8 2D, batch 11", Shape{11, 4, 4, 2}, grid(2, 1, 2, 2),
       grid(8, 1, 1, 1)},
  };
}

int64_t linear(const Index5& extents, const Index5& i) {
  int64_t l = 0;
  for (size_t k = 0; k < 5; ++k) l = l * extents[k] + i[k];
  return l;
}

/// This rank's block under `pg` filled with value(global index), computed from the grid
/// position, the documented even spatial split and the sample group's first sample.
template <class F>
std::vector<float> block_values(const parallel::ProcessGrid& pg, const Shape& global, const std::string& name,
                                F value) {
  const Index5 g5 = parallel::extents5_of(global), l5 = parallel::extents5_of(pg.local_shape(global, name));
  const auto& s = pg.spatial_index();
  const Index5 offset{pg.first_sample(global[0], name), s[0] * l5[1], s[1] * l5[2], s[2] * l5[3], 0};
  std::vector<float> v;
  Index5 i{};
  for (i[0] = 0; i[0] < l5[0]; ++i[0])
    for (i[1] = 0; i[1] < l5[1]; ++i[1])
      for (i[2] = 0; i[2] < l5[2]; ++i[2])
        for (i[3] = 0; i[3] < l5[3]; ++i[3])
          for (i[4] = 0; i[4] < l5[4]; ++i[4])
            v.push_back(
                value(linear(g5, {offset[0] + i[0], offset[1] + i[1], offset[2] + i[2], offset[3] + i[3], i[4]})));
  return v;
}

float value_x(int64_t g) { return 1.0f + static_cast<float>(g); }
float value_x2(int64_t g) { return static_cast<float>(7 * g % 1013) - 500.0f; }
float value_y(int64_t g) { return -2.0f * static_cast<float>(g) + 3.0f; }

void run_case(const std::string& name, const Shape& global, const parallel::Distribution& from,
              const parallel::Distribution& to, const parallel::Communicator& world, testing::MpiCheckLog& log) {
  const parallel::ProcessGrid a(from, world, name), b(to, world, name);
  parallel::Redistribution r(a, b, global, name);
  log.check(r.from_shape() == a.local_shape(global, name) && r.to_shape() == b.local_shape(global, name),
            name + ": block shapes " + r.from_shape().str() + " and " + r.to_shape().str());
  Tensor x(r.from_shape()), y(r.to_shape());
  for (const auto value : {value_x, value_x2}) {  // the second pass reuses the buffers
    x.copy_from_host(block_values(a, global, name, value));
    y.fill(12345.0f);
    r.forward(x, y);
    log.check(y.to_host() == block_values(b, global, name, value), name + ": forward gives the destination block");
  }
  y.copy_from_host(block_values(b, global, name, value_y));
  x.fill(12345.0f);
  r.backward(y, x);
  log.check(x.to_host() == block_values(a, global, name, value_y), name + ": backward gives the source block");
}

}  // namespace

int main(int argc, char* argv[]) {
  testing::MpiProgram program(argc, argv);
  const auto world = parallel::Communicator::world();
  testing::MpiCheckLog log(world);
  try {
    int ran = 0;
    for (const auto& c : all_cases())
      if (c.a.ranks() == world.size()) {
        run_case(c.name, c.global, c.a, c.b, world, log);
        run_case(c.name + " (reversed)", c.global, c.b, c.a, world, log);
        ++ran;
      }
    log.check(ran > 0, "a case for " + std::to_string(world.size()) + " ranks");

    parallel::Distribution too_many;
    too_many.sample = world.size() * 2;
    log.expect_error<ConfigError>(
        [&] { parallel::ProcessGrid(too_many, world, "model.layers[6].distribution"); },
        {"model.layers[6].distribution",
         "needs " + std::to_string(world.size() * 2) + " ranks but the job has " + std::to_string(world.size())},
        "a distribution over more ranks than the job has");
    parallel::Distribution samples;
    samples.sample = world.size();
    const parallel::ProcessGrid over_world(samples, world, "flatten");
    if (world.size() > 1) {
      log.expect_error<ConfigError>(
          [&] {
            parallel::Redistribution(over_world, parallel::ProcessGrid(), Shape{8, 2, 2, 2}, "flatten");
          },
          {"flatten", "both must span the same ranks"}, "grids over different ranks");
      log.expect_error<ShapeError>(
          [&] {
            parallel::Redistribution(over_world, over_world, Shape{world.size() - 1, 2, 2, 2}, "flatten");
          },
          {"flatten", "a batch of " + std::to_string(world.size() - 1) + " samples leaves sample group"},
          "a batch smaller than the sample groups");
    }
  } catch (const std::exception& e) {
    return parallel::handle_fatal_error(e);
  }
  return log.exit_status("redistribution_check");
}

// Run under mpirun at 1, 2, 4 or 8 ranks. Checks ProcessGrid for every distribution over the
// job's ranks: the documented rank layout (width fastest, sample slowest), its sub-communicators,
// that the ranks' blocks tile the global activation exactly once, batches and channels that do
// not divide, and the errors for uneven spatial splits and wrong rank counts. Exit status 0 on
// every rank when all checks pass.
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <memory>
#include <vector>

#include "mpi_check.hpp"
#include "support/mpi_program.hpp"
#include "tessera/core/error.hpp"
#include "tessera/parallel/process_grid.hpp"

using namespace tessera;

namespace {

/// Every way to write `ranks` as sample * depth * height * width.
std::vector<parallel::Distribution> distributions_over(int ranks) {
  std::vector<parallel::Distribution> all;
  for (int s = 1; s <= ranks; ++s)
    for (int d = 1; d <= ranks; ++d)
      for (int h = 1; h <= ranks; ++h)
        for (int w = 1; w <= ranks; ++w)
          if (s * d * h * w == ranks) {
            parallel::Distribution x;
            x.sample = s, x.depth = d, x.height = h, x.width = w;
            all.push_back(x);
          }
  return all;
}

void check_grid(const parallel::Distribution& d, const parallel::Communicator& world, testing::MpiCheckLog& log) {
  const std::string name = d.str();
  const parallel::ProcessGrid pg(d, world, name);
  const auto& i = pg.spatial_index();
  const int r = world.rank();
  log.check(r == ((pg.sample_index() * d.depth + i[0]) * d.height + i[1]) * d.width + i[2],
            name + ": rank " + std::to_string(r) + " sits at sample " + std::to_string(pg.sample_index()) +
                " and spatial index " + std::to_string(i[0]) + "," + std::to_string(i[1]) + "," + std::to_string(i[2]) +
                " (width fastest, sample slowest)");
  log.check(pg.rank_of(pg.sample_index(), i) == r, name + ": rank_of inverts the layout");
  log.check(pg.spatial().size() == d.depth * d.height * d.width && pg.spatial().rank() == pg.spatial_rank_of(i),
            name + ": spatial() holds the d*h*w ranks of one sample group in spatial order");
  log.check(pg.samples().size() == d.sample && pg.samples().rank() == pg.sample_index(),
            name + ": samples() holds one rank per sample group");
  // Group membership: every member of spatial() has this sample index, of samples() this spatial index.
  int64_t sums[2] = {pg.sample_index(), 0};
  pg.spatial().allreduce_sum(sums, 1);
  sums[1] = pg.spatial_rank_of(i);
  pg.samples().allreduce_sum(sums + 1, 1);
  log.check(sums[0] == int64_t{pg.sample_index()} * pg.spatial().size() &&
                sums[1] == int64_t{pg.spatial_rank_of(i)} * pg.samples().size(),
            name + ": sub-communicator membership");

  // The blocks of all ranks cover every element of a global [N, D, H, W] exactly once.
  const Shape global{2 * d.sample, 2 * d.depth, 3 * d.height, 2 * d.width, 3};
  const Shape local = pg.local_shape(global, name);
  const parallel::Box box = pg.local_box(parallel::spatial_size_of(global), name);
  const int64_t first = pg.first_sample(global[0], name);
  log.check(local == Shape{2, 2, 3, 2, 3} && box.extent == std::array<int64_t, 3>{2, 3, 2} &&
                pg.local_batch(global[0], name) == 2,
            name + ": local shape " + local.str() + " and box " + box.str());
  std::vector<int64_t> cover(static_cast<size_t>(global[0] * global[1] * global[2] * global[3]), 0);
  for (int64_t n = first; n < first + local[0]; ++n)
    for (int64_t z = box.offset[0]; z < box.offset[0] + box.extent[0]; ++z)
      for (int64_t y = box.offset[1]; y < box.offset[1] + box.extent[1]; ++y)
        for (int64_t x = box.offset[2]; x < box.offset[2] + box.extent[2]; ++x)
          ++cover.at(static_cast<size_t>(((n * global[1] + z) * global[2] + y) * global[3] + x));
  world.allreduce_sum(cover.data(), static_cast<int64_t>(cover.size()));
  bool once = true;
  for (const int64_t c : cover) once = once && c == 1;
  log.check(once, name + ": the blocks tile the global activation");
  // 2D activations split over height and width only.
  if (d.depth == 1) {
    const Shape local2d = pg.local_shape(Shape{global[0], global[2], global[3], 3}, name);
    log.check(local2d == Shape{2, 3, 2, 3} &&
                  pg.global_shape(local2d, global[0]) == Shape{global[0], global[2], global[3], 3},
              name + ": 2D local shape " + local2d.str());
  }
  log.check(pg.global_shape(local, global[0]) == global, name + ": global_shape inverts local_shape");
  log.check(pg.local_shape(Shape{global[0], 5}, name) == Shape{2, 5} &&
                pg.global_shape(Shape{2, 5}, global[0]) == Shape{global[0], 5},
            name + ": features split over samples only");
}

/// A batch that does not divide over the sample groups: blocks of consecutive samples that tile
/// it and differ by at most one sample.
void check_uneven_batches(const parallel::ProcessGrid& over_samples, const parallel::Communicator& world,
                          testing::MpiCheckLog& log) {
  for (const int64_t batch : {int64_t{world.size()} + 1, int64_t{2} * world.size() + 3}) {
    const int64_t rows = over_samples.local_batch(batch, "batch");
    const int64_t first = over_samples.first_sample(batch, "batch");
    std::vector<int64_t> all_rows(static_cast<size_t>(world.size()), 0);
    all_rows[static_cast<size_t>(world.rank())] = rows;
    world.allreduce_sum(all_rows.data(), world.size());
    int64_t before = 0, total = 0, fewest = batch, most = 0;
    for (int r = 0; r < world.size(); ++r) {
      if (r < world.rank()) before += all_rows[static_cast<size_t>(r)];
      total += all_rows[static_cast<size_t>(r)];
      fewest = std::min(fewest, all_rows[static_cast<size_t>(r)]);
      most = std::max(most, all_rows[static_cast<size_t>(r)]);
    }
    log.check(total == batch && before == first && most - fewest <= 1 &&
                  over_samples.group_batch(batch, over_samples.sample_index()) == rows,
              "a batch of " + std::to_string(batch) + " splits into blocks that differ by at most one sample");
  }
}

/// Channels that do not divide over a filter group of every rank: consecutive ranges that tile
/// them and differ by at most one channel, and the count of every other rank as it says; fewer
/// channels than ranks are refused naming the layer.
void check_uneven_channels(const parallel::Communicator& world, testing::MpiCheckLog& log) {
  parallel::Distribution d;
  d.filter = world.size();
  const parallel::ProcessGrid grid(d, world, "filters");
  for (const int64_t channels : {int64_t{world.size()} + 1, int64_t{2} * world.size() + 1, int64_t{7}}) {
    if (channels < world.size()) continue;
    const int64_t mine = grid.local_channels(channels, "c"), first = grid.first_channel(channels, "c");
    std::vector<int64_t> all(static_cast<size_t>(world.size()), 0);
    all[static_cast<size_t>(world.rank())] = mine;
    world.allreduce_sum(all.data(), world.size());
    int64_t before = 0, total = 0, fewest = channels, most = 0;
    bool counts_agree = true;
    for (int r = 0; r < world.size(); ++r) {
      const int64_t n = all[static_cast<size_t>(r)];
      if (r < world.rank()) before += n;
      total += n;
      fewest = std::min(fewest, n);
      most = std::max(most, n);
      counts_agree = counts_agree && grid.channel_count(channels, r, "c") == n;
    }
    log.check(total == channels && before == first && most - fewest <= 1 && fewest >= 1 && counts_agree,
              std::to_string(channels) + " channels split into ranges that differ by at most one");
  }
  if (world.size() > 1)
    log.expect_error<ShapeError>(
        [&] { grid.local_channels(world.size() - 1, "layer 'c1' (conv3d)"); },
        {"layer 'c1' (conv3d)",
         std::to_string(world.size() - 1) + " channels cannot split over " + std::to_string(world.size()) + " ranks"},
        "fewer channels than ranks");
}

/// Extents the ranks do not divide: each rank's box (local_box) is the one every rank computes
/// for it (box_at); the boxes tile the extent in order, differ by at most one plane, or with an
/// alignment start at its multiples; too few planes (or units) are refused on every rank.
void check_uneven_space(const parallel::Communicator& world, testing::MpiCheckLog& log) {
  const int P = world.size();
  parallel::Distribution over_depth;
  over_depth.depth = P;
  const auto alignment = std::make_shared<parallel::SpatialAlignment>();
  const parallel::ProcessGrid grid(over_depth, world, "d", nullptr, alignment);
  const int64_t odd = 2 * P + 1, aligned = 4 * P + 3;  // the latter cut in units of 2 planes, 2P + 1 of them
  alignment->set(0, aligned, 2);
  for (const int64_t extent : {odd, aligned}) {
    const std::string name = "depth " + std::to_string(extent) + " over " + std::to_string(P) + " ranks";
    const int64_t unit = alignment->of(0, extent);
    log.check(grid.local_box({extent, 3, 5}, name) == grid.box_at(grid.spatial_index(), {extent, 3, 5}, name),
              name + ": local_box is box_at of this rank");
    int64_t next = 0, smallest = extent, largest = 0;
    bool ordered = true;
    for (int i = 0; i < P; ++i) {
      const parallel::Box b = grid.box_at({i, 0, 0}, {extent, 3, 5}, name);
      ordered = ordered && b.offset[0] == next && b.offset[0] % unit == 0 && b.extent[1] == 3 && b.extent[2] == 5;
      next = b.offset[0] + b.extent[0];
      smallest = std::min(smallest, b.extent[0]);
      largest = std::max(largest, b.extent[0]);
    }
    // Units differ by at most one; the last block also takes what the units leave over.
    log.check(ordered && next == extent && smallest >= unit && largest - smallest <= unit + extent % unit,
              name + ": boxes tile the extent in order (" + std::to_string(smallest) + " to " +
                  std::to_string(largest) + " planes, unit " + std::to_string(unit) + ")");
  }
  if (P == 1) return;
  log.expect_error<ShapeError>(
      [&] {
        grid.local_shape(Shape{2, P - 1, 4, 4, 1}, "layers[2] (pool)");
      },
      {"layers[2] (pool)", "depth " + std::to_string(P - 1) + " cannot split over " + std::to_string(P) +
                               " ranks, each needs at least one plane"},
      "fewer planes than ranks");
  alignment->set(0, 2 * P, 4);
  log.expect_error<ShapeError>(
      [&] {
        grid.local_box({2 * P, 4, 4}, "layers[0] (conv3d)");
      },
      {"layers[0] (conv3d)", "in blocks aligned to 4 planes"}, "fewer units than ranks");
}

}  // namespace

int main(int argc, char* argv[]) {
  testing::MpiProgram program(argc, argv);
  const auto world = parallel::Communicator::world();
  testing::MpiCheckLog log(world);
  try {
    for (const auto& d : distributions_over(world.size())) check_grid(d, world, log);
    check_uneven_channels(world, log);
    check_uneven_space(world, log);

    const std::string size = std::to_string(world.size());
    parallel::Distribution wrong;
    wrong.width = world.size() + 1;
    log.expect_error<ConfigError>(
        [&] { parallel::ProcessGrid(wrong, world, "model.distribution"); },
        {"model.distribution", "needs " + std::to_string(world.size() + 1) + " ranks but the job has " + size},
        "a distribution over more ranks than the job has");
    if (world.size() > 1) {
      parallel::Distribution depth, height, samples;
      depth.depth = height.height = samples.sample = world.size();
      const parallel::ProcessGrid over_depth(depth, world, "d"), over_height(height, world, "h"),
          over_samples(samples, world, "s");
      log.expect_error<ShapeError>(
          [&] {
            over_height.local_shape(Shape{2, 4, world.size() - 1, 4, 1}, "layers[2] (pool)");
          },
          {"layers[2] (pool)", "height " + std::to_string(world.size() - 1) + " cannot split over " + size + " ranks"},
          "fewer planes than ranks along height");
      log.expect_error<ShapeError>(
          [&] {
            over_depth.local_shape(Shape{2, 4, 4, 1}, "conv2d");
          },
          {"conv2d", "2D activation [2, 4, 4, 1] cannot split over depth"}, "a 2D activation split over depth");
      log.check(over_height.local_shape(Shape{2, 10}, "dense") == Shape{2, 10},
                "features [N, C] are whole on every rank of a spatial group");
      check_uneven_batches(over_samples, world, log);
      log.expect_error<ShapeError>(
          [&] { over_samples.local_batch(world.size() - 1, "batch"); },
          {"batch", "a batch of " + std::to_string(world.size() - 1) + " samples leaves sample group",
           "of " + size + " without a sample"},
          "a batch smaller than the sample groups");
    }
  } catch (const std::exception& e) {
    return parallel::handle_fatal_error(e);
  }
  return log.exit_status("process_grid_check");
}

// Run under mpirun at any rank count, with a scratch folder as the argument: rank 0 writes
// HDF5 data sets there (files of many samples with per-voxel labels, and a sample list of
// one-sample int16 files); then, for every way the ranks can split a batch of 4 samples over
// samples and depth, height and width (ProcessGrid), each rank reads its samples of each batch
// cut to its box — with and without reading ahead — and checks them against its own full read
// of the same samples, sliced, and against the values that were written. Also checks that the
// boxes of a spatial group tile the sample. Exit status 0 on every rank when all agree.
#include <Kokkos_Core.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "support/hdf5_files.hpp"
#include "support/mpi_program.hpp"
#include "tessera/core/rng.hpp"
#include "tessera/io/dataset.hpp"
#include "tessera/io/hdf5_writer.hpp"
#include "tessera/parallel/process_grid.hpp"

using namespace tessera;

namespace {

struct DataSet {
  std::string name, keys;  // keys of the "data" section after "source"
  int64_t d, h, w, c, samples;
  bool voxel_targets;
  double modulus;  // the stored values are the pattern modulo this (0: none), to fit int16
};

/// Host copies of `ds` loading `indices` cut to `box`.
std::pair<std::vector<float>, std::vector<float>> read(io::Dataset& ds, const std::vector<int64_t>& indices,
                                                       const parallel::Box& box, int64_t channels) {
  const auto n = static_cast<int64_t>(indices.size());
  const int64_t per_target = ds.targets_per_voxel() ? box.volume() : ds.target_shape().numel();
  Tensor x(Shape{n, box.extent[0], box.extent[1], box.extent[2], channels}), y(Shape{n, per_target});
  ds.load(indices, box, x, y);
  return {x.to_host(), y.to_host()};
}

}  // namespace

int main(int argc, char* argv[]) {
  testing::MpiProgram program(argc, argv);
  const auto world = parallel::Communicator::world();
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s SCRATCH_FOLDER\n", argv[0]);
    return 2;
  }
  const std::string folder = argv[1];
  int64_t failures = 0, checks = 0;
  try {
    if (world.rank() == 0) {
      std::filesystem::remove_all(folder);
      std::filesystem::create_directories(folder + "/list");
      testing::write_stacked_file(folder + "/many_0.h5", 0, 6, 8, 8, 4, 3, 0, true);
      testing::write_stacked_file(folder + "/many_1.h5", 6, 6, 8, 8, 4, 3, 0, true);
      io::SampleSchema schema;
      schema.input = Shape{8, 4, 8, 2};
      schema.input_type = io::ElementType::int16;
      schema.target = Shape{3};
      io::Hdf5SampleWriter::Options o;
      o.stacked = false;
      std::ofstream list(folder + "/list/samples.txt");
      for (int64_t s = 0; s < 8; ++s) {
        const auto values = testing::pattern_samples<int16_t>(s, 1, 8, 4, 8, 2, 32749.0);
        const std::vector<float> targets{testing::target_value(s, 0), testing::target_value(s, 1),
                                         testing::target_value(s, 2)};
        io::Hdf5SampleWriter writer(folder + "/list/s" + std::to_string(s) + ".h5", schema, 1, o);
        writer.write(0, values.data(), targets.data());
        writer.commit();
        list << "s" << s << ".h5\n";
      }
    }
    world.barrier();
    const std::vector<DataSet> sets{
        {"files of many samples, per-voxel labels", "\"files\": \"" + folder + "/many_*.h5\"", 8, 8, 4, 3, 12, true, 0.0},
        {"sample list of one-sample files", "\"sample_list\": \"" + folder + "/list/samples.txt\"", 8, 4, 8, 2, 8,
         false, 32749.0}};
    const int ranks = world.size();
    const int64_t batch = 4;
    for (const auto& set : sets) {
      for (const bool prefetch : {false, true}) {
        const auto config = nlohmann::json::parse("{\"source\": \"hdf5\", " + set.keys +
                                                  ", \"prefetch\": " + (prefetch ? "true" : "false") + "}");
        ConfigObject cfg(config, "$.data");
        auto split = io::make_datasets(cfg, 0);
        io::Dataset& ds = *split.train;
        // Every split of the ranks into sample groups and D, H, W parts with at least one sample
        // and plane per rank: over 3 ranks the blocks differ in size.
        for (int s = 1; s <= ranks; ++s)
          for (int pd = 1; pd <= ranks; ++pd)
            for (int ph = 1; ph <= ranks; ++ph)
              for (int pw = 1; pw <= ranks; ++pw) {
                if (s * pd * ph * pw != ranks || batch < s || set.d < pd || set.h < ph || set.w < pw) continue;
                parallel::Distribution distribution;
                distribution.sample = s;
                distribution.depth = pd;
                distribution.height = ph;
                distribution.width = pw;
                const parallel::ProcessGrid grid(distribution, world, "test");
                const parallel::Box box = grid.local_box({set.d, set.h, set.w}, "test");
                int64_t volume = box.volume();
                world.allreduce_sum(&volume, 1);
                ++checks;
                if (volume != s * set.d * set.h * set.w) {
                  std::printf("rank %d: %s: boxes of %s do not tile the sample\n", world.rank(), set.name.c_str(),
                              distribution.str().c_str());
                  ++failures;
                }
                // A shuffled order, as the trainer's epochs: batches of `batch`, this rank's rows.
                std::vector<int64_t> order(static_cast<size_t>(set.samples));
                std::iota(order.begin(), order.end(), 0);
                for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng::bits(9, 5, i) % i]);
                const int64_t rows = grid.local_batch(batch, "test"), first = grid.first_sample(batch, "test");
                auto mine = [&](int64_t k) {
                  return std::vector<int64_t>(order.begin() + k * batch + first, order.begin() + k * batch + first + rows);
                };
                const int64_t batches = set.samples / batch;
                if (prefetch) ds.prefetch(mine(0), box);
                for (int64_t k = 0; k < batches; ++k) {
                  const auto indices = mine(k);
                  const auto part = read(ds, indices, box, set.c);
                  if (prefetch && k + 1 < batches) ds.prefetch(mine(k + 1), box);
                  const auto whole = read(ds, indices, ds.whole_box(), set.c);
                  std::vector<float> sliced_x, sliced_y, written_x, written_y;
                  for (int64_t r = 0; r < rows; ++r) {
                    const int64_t sample = indices[static_cast<size_t>(r)];
                    for (int64_t i = box.offset[0]; i < box.offset[0] + box.extent[0]; ++i)
                      for (int64_t j = box.offset[1]; j < box.offset[1] + box.extent[1]; ++j)
                        for (int64_t l = box.offset[2]; l < box.offset[2] + box.extent[2]; ++l) {
                          const int64_t voxel = r * set.d * set.h * set.w + (i * set.h + j) * set.w + l;
                          for (int64_t c = 0; c < set.c; ++c)
                            sliced_x.push_back(whole.first[static_cast<size_t>(voxel * set.c + c)]);
                          if (set.voxel_targets) sliced_y.push_back(whole.second[static_cast<size_t>(voxel)]);
                        }
                    const auto values = testing::pattern_box(sample, box, set.c, set.modulus);
                    written_x.insert(written_x.end(), values.begin(), values.end());
                    if (set.voxel_targets) {
                      const auto labels = testing::pattern_box(sample, box, 1, 3.0);
                      written_y.insert(written_y.end(), labels.begin(), labels.end());
                    } else {
                      for (int64_t t = 0; t < 3; ++t) written_y.push_back(testing::target_value(sample, t));
                    }
                  }
                  if (!set.voxel_targets) sliced_y = whole.second;
                  checks += 4;
                  const int64_t bad = (part.first != sliced_x) + (part.second != sliced_y) +
                                      (part.first != written_x) + (part.second != written_y);
                  if (bad)
                    std::printf("rank %d: %s, %s, batch %lld, box %s: hyperslab read differs (%lld checks)\n",
                                world.rank(), set.name.c_str(), distribution.str().c_str(), static_cast<long long>(k),
                                box.str().c_str(), static_cast<long long>(bad));
                  failures += bad;
                }
              }
      }
    }
  } catch (const std::exception& e) {
    return parallel::handle_fatal_error(e);
  }
  int64_t totals[2] = {failures, checks};
  world.allreduce_sum(totals, 2);
  std::printf("rank %d of %d: %lld of %lld checks on this rank failed; %lld of %lld on all ranks\n", world.rank(),
              world.size(), static_cast<long long>(failures), static_cast<long long>(checks),
              static_cast<long long>(totals[0]), static_cast<long long>(totals[1]));
  world.barrier();
  if (world.rank() == 0) std::filesystem::remove_all(folder);
  return totals[0] == 0 ? 0 : 1;
}

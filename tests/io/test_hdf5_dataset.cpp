#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>
#include <set>

#include "support/hdf5_files.hpp"
#include "tessera/core/error.hpp"
#include "tessera/io/hdf5_dataset.hpp"
#include "tessera/io/hdf5_writer.hpp"

using namespace tessera;
using testing::pattern_box;
using testing::ScratchFolder;

namespace {

io::Hdf5Dataset::Options options(bool prefetch = false, int64_t store_bytes = 0) {
  io::Hdf5Dataset::Options o;
  o.prefetch = prefetch;
  o.store_bytes = store_bytes;
  return o;
}

std::shared_ptr<const io::Hdf5Layout> files_layout(const std::vector<std::string>& patterns) {
  return std::make_shared<const io::Hdf5Layout>(io::Hdf5Layout::from_files(patterns, {}, "$.data.files"));
}

/// Loads `indices` with `box` and returns the host copies of inputs and targets.
std::pair<std::vector<float>, std::vector<float>> load(io::Dataset& ds, const std::vector<int64_t>& indices,
                                                       const parallel::Box& box, int64_t targets_per_row) {
  const auto n = static_cast<int64_t>(indices.size());
  const int64_t channels = ds.sample_shape()[3];
  Tensor x(Shape{n, box.extent[0], box.extent[1], box.extent[2], channels}), y(Shape{n, targets_per_row});
  ds.load(indices, box, x, y);
  return {x.to_host(), y.to_host()};
}

std::vector<float> concat(const std::vector<std::vector<float>>& parts) {
  std::vector<float> all;
  for (const auto& p : parts) all.insert(all.end(), p.begin(), p.end());
  return all;
}

}  // namespace

TEST_CASE("HDF5 files of many samples read back exactly, numbered through the files", "[io][hdf5]") {
  ScratchFolder dir("tessera_hdf5_files");
  testing::write_stacked_file(dir / "a.h5", 0, 3, 4, 5, 6, 2, 3);
  testing::write_stacked_file(dir / "b.h5", 3, 2, 4, 5, 6, 2, 3);
  const auto layout = files_layout({dir / "*.h5"});
  CHECK(layout->size() == 5);
  CHECK(layout->files().size() == 2);
  CHECK(layout->schema().input == Shape{4, 5, 6, 2});
  CHECK(layout->schema().target == Shape{3});
  CHECK_FALSE(layout->schema().targets_per_voxel);
  io::Hdf5Dataset ds(layout, {}, options());
  const auto whole = ds.whole_box();
  const auto [x, y] = load(ds, {4, 0, 3}, whole, 3);
  CHECK(x == concat({pattern_box(4, whole, 2), pattern_box(0, whole, 2), pattern_box(3, whole, 2)}));
  CHECK(y == std::vector<float>{testing::target_value(4, 0), testing::target_value(4, 1), testing::target_value(4, 2),
                                testing::target_value(0, 0), testing::target_value(0, 1), testing::target_value(0, 2),
                                testing::target_value(3, 0), testing::target_value(3, 1), testing::target_value(3, 2)});
  CHECK_THROWS_AS(load(ds, {5}, whole, 3), Error);
}

TEST_CASE("Hyperslab reads equal the full read sliced, for inputs and per-voxel labels", "[io][hdf5]") {
  ScratchFolder dir("tessera_hdf5_boxes");
  testing::write_stacked_file(dir / "v.h5", 0, 4, 6, 4, 8, 3, 0, /*voxel_targets=*/true);
  const auto layout = files_layout({dir / "v.h5"});
  REQUIRE(layout->schema().targets_per_voxel);
  REQUIRE(layout->schema().target == Shape{6, 4, 8});
  io::Hdf5Dataset ds(layout, {}, options());
  CHECK(ds.targets_per_voxel());
  const parallel::Box whole = ds.whole_box();
  const auto full = load(ds, {2, 1}, whole, whole.volume());
  for (const parallel::Box box : {parallel::Box{{0, 0, 0}, {3, 4, 8}}, parallel::Box{{3, 0, 0}, {3, 4, 8}},
                                  parallel::Box{{0, 2, 4}, {6, 2, 4}}, parallel::Box{{1, 1, 3}, {2, 3, 5}}}) {
    const auto part = load(ds, {2, 1}, box, box.volume());
    // The full read, sliced here on the host.
    std::vector<float> sliced_x, sliced_y;
    for (int64_t row = 0; row < 2; ++row)
      for (int64_t d = box.offset[0]; d < box.offset[0] + box.extent[0]; ++d)
        for (int64_t h = box.offset[1]; h < box.offset[1] + box.extent[1]; ++h)
          for (int64_t w = box.offset[2]; w < box.offset[2] + box.extent[2]; ++w) {
            const int64_t voxel = row * whole.volume() + (d * 4 + h) * 8 + w;
            for (int64_t c = 0; c < 3; ++c) sliced_x.push_back(full.first[static_cast<size_t>(voxel * 3 + c)]);
            sliced_y.push_back(full.second[static_cast<size_t>(voxel)]);
          }
    INFO("box " << box.str());
    CHECK(part.first == sliced_x);
    CHECK(part.second == sliced_y);
    CHECK(part.first == concat({pattern_box(2, box, 3), pattern_box(1, box, 3)}));
  }
  CHECK_THROWS_AS(load(ds, {0}, parallel::Box{{4, 0, 0}, {3, 4, 8}}, 72), ShapeError);
}

TEST_CASE("Stored uint8, int16, int32 and float32 inputs convert to floats with the normalisation", "[io][hdf5]") {
  ScratchFolder dir("tessera_hdf5_types");
  const hsize_t n = 2, d = 3, h = 2, w = 2, c = 2;
  struct Case {
    const char* name;
    hid_t file_type, memory_type;
    double modulus;
  };
  // A named vector, not a braced list in the loop: nvcc cannot parse HDF5's type macros
  // (calls to H5open) inside a range-for initializer list.
  const std::vector<Case> cases{Case{"uint8", H5T_STD_U8LE, H5T_NATIVE_UINT8, 251.0},
                                Case{"int16", H5T_STD_I16BE, H5T_NATIVE_INT16, 32749.0},  // big-endian on disk
                                Case{"int32", H5T_STD_I32LE, H5T_NATIVE_INT32, 0.0},
                                Case{"float32", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, 0.0}};
  for (const Case& t : cases) {
    INFO(t.name);
    const std::string path = dir / (std::string(t.name) + ".h5");
    const hid_t file = testing::create_file(path);
    std::vector<double> raw = testing::pattern_samples<double>(0, n, d, h, w, c, t.modulus);
    std::vector<unsigned char> bytes(raw.size() * H5Tget_size(t.memory_type));
    H5Tconvert(H5T_NATIVE_DOUBLE, t.memory_type, raw.size(), raw.data(), nullptr, H5P_DEFAULT);  // in place
    std::memcpy(bytes.data(), raw.data(), bytes.size());
    testing::write_dataset(file, "inputs", t.file_type, t.memory_type, {n, d, h, w, c}, bytes.data());
    const std::vector<int16_t> labels{3, -7};  // integer targets convert too
    testing::write_dataset(file, "targets", H5T_STD_I16LE, H5T_NATIVE_INT16, {n, 1}, labels.data());
    H5Fclose(file);

    const auto expected = testing::pattern_samples<double>(0, n, d, h, w, c, t.modulus);
    for (const bool log : {false, true}) {
      auto o = options();
      o.normalization.transform = log ? io::Normalization::Transform::log1p : io::Normalization::Transform::none;
      o.normalization.mean = {1.5, -2.0};  // per channel
      o.normalization.std = {4.0};         // one for all
      io::Hdf5Dataset ds(files_layout({path}), {}, o);
      const auto [x, y] = load(ds, {1, 0}, ds.whole_box(), 1);
      CHECK(y == std::vector<float>{-7.0f, 3.0f});
      const size_t per = d * h * w * c;
      for (size_t i = 0; i < x.size(); ++i) {
        const size_t row = i / per, at = (row == 0 ? per : 0) + i % per;  // row 0 holds sample 1
        const double v = log ? std::log1p(expected[at]) : expected[at];
        const double want = (v - (i % 2 == 0 ? 1.5 : -2.0)) / 4.0;
        REQUIRE(x[i] == Approx(want).epsilon(1e-6).margin(1e-6));
      }
    }
  }
}

TEST_CASE("A sample list names one-sample files, CosmoFlow's layout, relative to the list", "[io][hdf5]") {
  ScratchFolder dir("tessera_hdf5_list");
  std::filesystem::create_directories(dir / "train");
  io::SampleSchema schema;
  schema.input = Shape{4, 4, 2, 3};
  schema.input_type = io::ElementType::int16;
  schema.target = Shape{4};
  io::Hdf5SampleWriter::Options wo;
  wo.stacked = false;
  wo.input_dataset = "full";  // the names CosmoFlow's files use
  wo.target_dataset = "unitPar";
  std::ofstream list(dir / "train.txt");
  list << "# three samples\n";
  for (int64_t s = 0; s < 3; ++s) {
    const auto values = testing::pattern_samples<int16_t>(s, 1, 4, 4, 2, 3);
    const std::vector<float> theta{0.1f * static_cast<float>(s), -0.5f, 0.25f, 1.0f};
    const std::string name = "train/s" + std::to_string(s) + ".h5";
    io::Hdf5SampleWriter writer(dir / name, schema, 1, wo);
    writer.write(0, values.data(), theta.data());
    writer.commit();
    list << name << (s == 1 ? "  \n\n" : "\n");
  }
  list.close();
  CHECK(std::filesystem::exists(dir / "train/s2.h5"));
  for (const auto& entry : std::filesystem::directory_iterator(dir / "train"))
    CHECK(entry.path().string().find(".tmp.") == std::string::npos);  // nothing half-written left behind

  const auto layout = std::make_shared<const io::Hdf5Layout>(
      io::Hdf5Layout::from_sample_list(dir / "train.txt", {"full", "unitPar"}, /*check_all=*/false));
  CHECK(layout->size() == 3);
  CHECK(layout->files()[0].checked);
  CHECK_FALSE(layout->files()[2].checked);  // checked when first read
  io::Hdf5Dataset ds(layout, {}, options());
  const parallel::Box box{{1, 0, 0}, {2, 4, 2}};
  const auto [x, y] = load(ds, {2, 0}, box, 4);
  CHECK(x == concat({pattern_box(2, box, 3), pattern_box(0, box, 3)}));
  CHECK(y == std::vector<float>{0.2f, -0.5f, 0.25f, 1.0f, 0.0f, -0.5f, 0.25f, 1.0f});
}

TEST_CASE("Later epochs come from the sample store and read no files", "[io][hdf5]") {
  ScratchFolder dir("tessera_hdf5_store");
  testing::write_stacked_file(dir / "s.h5", 0, 6, 4, 4, 4, 2, 4);
  const auto layout = files_layout({dir / "s.h5"});
  io::Hdf5Dataset plain(layout, {}, options());
  io::Hdf5Dataset stored(layout, {}, options(false, 1 << 20));
  const parallel::Box box{{0, 2, 0}, {4, 2, 4}};
  const auto first = load(stored, {5, 1, 2}, box, 4);
  CHECK(stored.statistics().file_reads == 3);
  const auto again = load(stored, {2, 5, 1}, box, 4);  // all stored now
  CHECK(stored.statistics().file_reads == 3);
  CHECK(stored.statistics().store_reads == 3);
  CHECK(again == load(plain, {2, 5, 1}, box, 4));
  // Another box (a different spatial split) starts the store afresh instead of mixing boxes.
  const parallel::Box other{{0, 0, 0}, {4, 2, 4}};
  CHECK(load(stored, {5}, other, 4) == load(plain, {5}, other, 4));
  CHECK(stored.statistics().file_reads == 4);
  // A store too small for one more sample keeps what it has and reads the rest each time.
  io::Hdf5Dataset small(layout, {}, options(false, 2 * (32 * 2 * 4 + 16)));
  load(small, {0, 1, 2}, box, 4);
  load(small, {0, 1, 2}, box, 4);
  CHECK(small.statistics().store_reads == 2);
  CHECK(small.statistics().file_reads == 4);
}

TEST_CASE("Prefetched batches equal synchronous ones", "[io][hdf5]") {
  ScratchFolder dir("tessera_hdf5_prefetch");
  testing::write_stacked_file(dir / "p.h5", 0, 8, 4, 6, 4, 2, 4);
  const auto layout = files_layout({dir / "p.h5"});
  // Equal up to the last bit on CPUs; a GPU's log1p may round differently from the host's,
  // which converts batches read ahead with log1p.
  auto same = [](const std::vector<float>& a, const std::vector<float>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (std::abs(a[i] - b[i]) > 1e-6f * std::max(1.0f, std::abs(b[i]))) return false;
    return true;
  };
  for (const auto transform : {io::Normalization::Transform::none, io::Normalization::Transform::log1p})
    for (const int64_t store : {int64_t{0}, int64_t{1} << 20}) {
      auto sync_options = options(false, store), ahead_options = options(true, store);
      sync_options.normalization.transform = ahead_options.normalization.transform = transform;
      sync_options.normalization.mean = ahead_options.normalization.mean = {0.5, -1.0};
      sync_options.normalization.std = ahead_options.normalization.std = {2.0, 3.0};
      io::Hdf5Dataset sync(layout, {}, sync_options), prefetching(layout, {}, ahead_options);
      const parallel::Box box{{0, 0, 2}, {4, 6, 2}};
      const std::vector<std::vector<int64_t>> batches{{3, 1}, {7, 0}, {2, 5}, {3, 1}, {6, 4}, {0, 7}};
      prefetching.prefetch(batches[0], box);
      for (size_t i = 0; i < batches.size(); ++i) {
        const auto expected = load(sync, batches[i], box, 4);
        const auto got = load(prefetching, batches[i], box, 4);
        if (i + 1 < batches.size()) prefetching.prefetch(batches[i + 1], box);  // read while "training"
        REQUIRE(same(got.first, expected.first));
        REQUIRE(same(got.second, expected.second));
      }
      CHECK(prefetching.statistics().prefetched_loads == static_cast<int64_t>(batches.size()));
      // A prefetch that the next load does not ask for is dropped; the load reads what it asks.
      prefetching.prefetch({1, 2}, box);
      CHECK(same(load(prefetching, {4, 6}, box, 4).first, load(sync, {4, 6}, box, 4).first));
      CHECK(prefetching.statistics().prefetched_loads == static_cast<int64_t>(batches.size()));
      // Two batches ahead; a load of the second skips the first; a third drops the oldest.
      prefetching.prefetch({5, 0}, box);
      prefetching.prefetch({2, 3}, box);
      CHECK(same(load(prefetching, {2, 3}, box, 4).first, load(sync, {2, 3}, box, 4).first));
      prefetching.prefetch({1, 7}, box);
      prefetching.prefetch({6, 6}, box);
      prefetching.prefetch({0, 4}, box);  // drops {1, 7}
      CHECK(same(load(prefetching, {6, 6}, box, 4).first, load(sync, {6, 6}, box, 4).first));
      CHECK(same(load(prefetching, {0, 4}, box, 4).second, load(sync, {0, 4}, box, 4).second));
      CHECK(prefetching.statistics().prefetched_loads == static_cast<int64_t>(batches.size()) + 3);
    }
}

TEST_CASE("A validation fraction is a seeded subset disjoint from the training samples", "[io][hdf5]") {
  ScratchFolder dir("tessera_hdf5_split");
  testing::write_stacked_file(dir / "t.h5", 0, 20, 2, 2, 2, 1, 1);
  auto split_of = [&](int64_t seed) {
    const auto config = nlohmann::json::parse(R"({"source": "hdf5", "files": ")" + (dir / "t.h5") +
                                              R"(", "validation": {"fraction": 0.25}, "prefetch": false})");
    ConfigObject cfg(config, "$.data");
    return io::make_datasets(cfg, static_cast<uint64_t>(seed));
  };
  auto first_targets = [](io::Dataset& ds) {
    std::vector<int64_t> all(static_cast<size_t>(ds.size()));
    std::iota(all.begin(), all.end(), 0);
    Tensor x(Shape{ds.size(), 2, 2, 2, 1}), y(Shape{ds.size(), 1});
    ds.load(all, ds.whole_box(), x, y);
    std::vector<int64_t> samples;
    for (const float t : y.to_host()) samples.push_back(static_cast<int64_t>(std::lround(t / 0.25f)));
    return samples;
  };
  auto a = split_of(3), b = split_of(3), c = split_of(4);
  REQUIRE(a.validation);
  CHECK(a.validation->size() == 5);
  CHECK(a.train->size() == 15);
  const auto train = first_targets(*a.train), held = first_targets(*a.validation);
  std::set<int64_t> all(train.begin(), train.end());
  all.insert(held.begin(), held.end());
  CHECK(all.size() == 20);  // disjoint, and together every sample
  CHECK(held == first_targets(*b.validation));
  CHECK(held != first_targets(*c.validation));
}

TEST_CASE("The data section of a run config selects and checks the HDF5 source", "[io][hdf5]") {
  ScratchFolder dir("tessera_hdf5_config");
  testing::write_stacked_file(dir / "t.h5", 0, 4, 2, 2, 2, 2, 1);
  testing::write_stacked_file(dir / "v.h5", 4, 2, 2, 2, 2, 2, 1);
  auto make = [&](const std::string& json) {
    const auto config = nlohmann::json::parse(json);
    ConfigObject cfg(config, "$.data");
    return io::make_datasets(cfg, 0);
  };
  const std::string files = R"("files": [")" + (dir / "t.h5") + R"("])";
  auto split = make(R"({"source": "hdf5", )" + files + R"(, "validation": {"files": ")" + (dir / "v.h5") +
                    R"("}, "normalize": {"transform": "log1p", "mean": [1, 2], "std": 3}, "store_mb": 1})");
  CHECK(split.train->size() == 4);
  CHECK(split.validation->size() == 2);
  CHECK_THAT(split.train->describe(), Catch::Contains("log1p"));
  auto error_of = [&](const std::string& json) {
    try {
      make(json);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(error_of(R"({"source": "hdf5"})"), Catch::Contains("$.data: needs \"files\""));
  CHECK_THAT(error_of(R"({"source": "hdf5", )" + files + R"(, "sample_list": "x"})"), Catch::Contains("not both"));
  CHECK_THAT(error_of(R"({"source": "hdf5", "files": ")" + (dir / "*.nothing") + R"("})"),
             Catch::Contains("$.data.files: the pattern") && Catch::Contains("matches no file"));
  CHECK_THAT(error_of(R"({"source": "hdf5", )" + files + R"(, "normalize": {"mean": [1, 2, 3]}})"),
             Catch::Contains("$.data.normalize.mean: has 3 values"));
  CHECK_THAT(error_of(R"({"source": "hdf5", )" + files + R"(, "normalize": {"std": 0}})"),
             Catch::Contains("$.data.normalize.std: every value must be positive"));
  CHECK_THAT(error_of(R"({"source": "hdf5", )" + files + R"(, "normalize": {"transfrom": "log1p"}})"),
             Catch::Contains("$.data.normalize.transfrom: unknown key"));
  CHECK_THAT(error_of(R"({"source": "hdf5", )" + files + R"(, "prefetsh": true})"),
             Catch::Contains("$.data.prefetsh: unknown key"));
  CHECK_THAT(error_of(R"({"source": "hdf5", )" + files + R"(, "validation": {"fraction": 0.95}})"),
             Catch::Contains("$.data.validation.fraction"));
}

// Bad data, one row per way a data set can be broken: every row must end in an IoError or
// ConfigError whose message names the file (or list), the dataset where there is one, and the
// problem — when the data set is opened or when the bad sample is read — never a crash, a hang
// or a silently wrong batch. The files are made here, with the plain HDF5 API or Tessera's
// writer, then damaged.
#include <catch2/catch.hpp>

#include "support/skip.hpp"

#include <sys/stat.h>

#include <unistd.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <limits>

#include "support/hdf5_files.hpp"
#include "tessera/core/error.hpp"
#include "tessera/io/dataset.hpp"
#include "tessera/io/hdf5_writer.hpp"

using namespace tessera;
using testing::ScratchFolder;

namespace {

constexpr hsize_t kN = 3, kS = 4, kC = 2;

void write_inputs(hid_t file, hsize_t n = kN) {
  const auto v = testing::pattern_samples<float>(0, static_cast<int64_t>(n), kS, kS, kS, kC);
  testing::write_dataset(file, "inputs", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {n, kS, kS, kS, kC}, v.data());
}
void write_targets(hid_t file, hsize_t n = kN) {
  const std::vector<float> t(n * 4, 0.5f);
  testing::write_dataset(file, "targets", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {n, 4}, t.data());
}
void good_file(const std::string& path) {
  const hid_t f = testing::create_file(path);
  write_inputs(f);
  write_targets(f);
  H5Fclose(f);
}

/// A one-sample file in Tessera's own format (1.8 metadata with checksums), optionally with
/// chunked, Fletcher-32-checked data.
void writer_file(const std::string& path, bool checksum, const std::vector<int16_t>& values) {
  io::SampleSchema schema;
  schema.input = Shape{kS, kS, kS, kC};
  schema.input_type = io::ElementType::int16;
  schema.target = Shape{4};
  io::Hdf5SampleWriter::Options o;
  o.stacked = false;
  o.checksum = checksum;
  io::Hdf5SampleWriter w(path, schema, 1, o);
  const std::vector<float> theta{0.1f, 0.2f, 0.3f, 0.4f};
  w.write(0, values.data(), theta.data());
  w.commit();
}
std::vector<int16_t> small_counts() { return testing::pattern_samples<int16_t>(0, 1, kS, kS, kS, kC); }

/// The file address of a dataset's data (contiguous, or its first chunk).
haddr_t data_address(const std::string& path, const char* name) {
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
  haddr_t address = H5Dget_offset(d);
  if (address == HADDR_UNDEF) {
    hsize_t offset[4];
    unsigned mask = 0;
    hsize_t size = 0;
    const hid_t space = H5Dget_space(d);
    if (H5Dget_chunk_info(d, space, 0, offset, &mask, &address, &size) < 0) address = HADDR_UNDEF;
    H5Sclose(space);
  }
  H5Dclose(d);
  H5Fclose(f);
  if (address == HADDR_UNDEF) throw std::runtime_error("no data address for " + path);
  return address;
}

/// The file address of an object's header.
haddr_t header_address(const std::string& path, const char* name) {
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  H5O_info_t info{};
  H5Oget_info_by_name(f, name, &info, H5P_DEFAULT);
  H5Fclose(f);
  return info.addr;
}

void overwrite(const std::string& path, std::streamoff at, const std::string& bytes) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(at);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

struct Case {
  std::string name;
  /// Makes the files in the folder; returns the "data" section's keys after "source".
  std::function<std::string(const ScratchFolder&)> make;
  /// Every fragment must appear in the message ({dir} stands for the folder).
  std::vector<std::string> expect;
};

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

}  // namespace

TEST_CASE("Bad data files end in an error naming the file, the dataset and the problem", "[io][hdf5][bad]") {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // the test's own HDF5 calls: quiet as well
  const std::vector<Case> cases{
      {"a missing input dataset",
       [](const ScratchFolder& d) {
         const hid_t f = testing::create_file(d / "x.h5");
         write_targets(f);
         H5Fclose(f);
         return "\"files\": " + quoted(d / "x.h5");
       },
       {"{dir}/x.h5: dataset 'inputs': does not exist (the file holds 'targets')"}},
      {"a missing target dataset",
       [](const ScratchFolder& d) {
         const hid_t f = testing::create_file(d / "x.h5");
         write_inputs(f);
         H5Fclose(f);
         return "\"files\": " + quoted(d / "x.h5");
       },
       {"{dir}/x.h5: dataset 'targets': does not exist"}},
      {"a dataset name the file does not use",
       [](const ScratchFolder& d) {
         good_file(d / "x.h5");
         return "\"files\": " + quoted(d / "x.h5") + ", \"input_dataset\": \"full\"";
       },
       {"{dir}/x.h5: dataset 'full': does not exist (the file holds 'inputs', 'targets')"}},
      {"inputs of the wrong rank",
       [](const ScratchFolder& d) {
         const hid_t f = testing::create_file(d / "x.h5");
         const std::vector<float> v(kN * kS * kS, 1.0f);
         testing::write_dataset(f, "inputs", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {kN, kS, kS}, v.data());
         write_targets(f);
         H5Fclose(f);
         return "\"files\": " + quoted(d / "x.h5");
       },
       {"{dir}/x.h5: dataset 'inputs': has shape [3, 4, 4]; expected one sample [D, H, W, C] or samples"}},
      {"inputs of an unsupported type (float64)",
       [](const ScratchFolder& d) {
         const hid_t f = testing::create_file(d / "x.h5");
         const std::vector<double> v(kN * kS * kS * kS * kC, 1.0);
         testing::write_dataset(f, "inputs", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {kN, kS, kS, kS, kC}, v.data());
         write_targets(f);
         H5Fclose(f);
         return "\"files\": " + quoted(d / "x.h5");
       },
       {"{dir}/x.h5: dataset 'inputs': has type float64; supported element types are uint8, int16, int32 and float32"}},
      {"targets of a string type",
       [](const ScratchFolder& d) {
         const hid_t f = testing::create_file(d / "x.h5");
         write_inputs(f);
         const hid_t type = H5Tcopy(H5T_C_S1);
         H5Tset_size(type, 4);
         const std::vector<char> text(kN * 4, 'a');
         testing::write_dataset(f, "targets", type, type, {kN}, text.data());
         H5Tclose(type);
         H5Fclose(f);
         return "\"files\": " + quoted(d / "x.h5");
       },
       {"{dir}/x.h5: dataset 'targets': has type a string type"}},
      {"fewer targets than samples",
       [](const ScratchFolder& d) {
         const hid_t f = testing::create_file(d / "x.h5");
         write_inputs(f);
         write_targets(f, kN - 1);
         H5Fclose(f);
         return "\"files\": " + quoted(d / "x.h5");
       },
       {"{dir}/x.h5: dataset 'targets': has shape [2, 4] but 'inputs' holds 3 samples"}},
      {"per-voxel labels of another spatial shape",
       [](const ScratchFolder& d) {
         const hid_t f = testing::create_file(d / "x.h5");
         write_inputs(f);
         const std::vector<uint8_t> labels(kN * kS * kS * (kS + 1), 1);
         testing::write_dataset(f, "targets", H5T_STD_U8LE, H5T_NATIVE_UINT8, {kN, kS, kS, kS + 1}, labels.data());
         H5Fclose(f);
         return "\"files\": " + quoted(d / "x.h5");
       },
       {"{dir}/x.h5: dataset 'targets': has per-sample shape [4, 4, 5]"}},
      {"an empty input dataset",
       [](const ScratchFolder& d) {
         const hid_t f = testing::create_file(d / "x.h5");
         testing::write_dataset(f, "inputs", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {0, kS, kS, kS, kC}, nullptr);
         write_targets(f, 0);
         H5Fclose(f);
         return "\"files\": " + quoted(d / "x.h5");
       },
       {"{dir}/x.h5: dataset 'inputs': has shape [0, 4, 4, 4, 2], which holds no values"}},
      {"a second file whose samples have another shape",
       [](const ScratchFolder& d) {
         good_file(d / "a.h5");
         testing::write_stacked_file(d / "b.h5", 0, 2, kS, kS, kS + 2, kC, 4);
         return "\"files\": " + quoted(d / "*.h5");
       },
       {"{dir}/b.h5: dataset 'inputs': samples are [4, 4, 6, 2] float32 but those of {dir}/a.h5 are [4, 4, 4, 2]"}},
      {"a truncated file",
       [](const ScratchFolder& d) {
         good_file(d / "x.h5");
         std::filesystem::resize_file(d / "x.h5", std::filesystem::file_size(d / "x.h5") / 2);
         return "\"files\": " + quoted(d / "x.h5");
       },
       {"{dir}/x.h5: HDF5 cannot open the file", "truncated"}},
      {"a file whose header is overwritten",
       [](const ScratchFolder& d) {
         good_file(d / "x.h5");
         overwrite(d / "x.h5", 0, std::string(512, '\x5a'));
         return "\"files\": " + quoted(d / "x.h5");
       },
       {"{dir}/x.h5: not an HDF5 file (no HDF5 signature"}},
      {"a damaged dataset header (metadata checksum)",
       [](const ScratchFolder& d) {
         writer_file(d / "x.h5", false, small_counts());
         overwrite(d / "x.h5", static_cast<std::streamoff>(header_address(d / "x.h5", "inputs")) + 20, "\x13\x37");
         return "\"files\": " + quoted(d / "x.h5");
       },
       {"{dir}/x.h5: dataset 'inputs'", "checksum"}},
      {"damaged sample data in a checksummed file",
       [](const ScratchFolder& d) {
         writer_file(d / "x.h5", true, small_counts());
         overwrite(d / "x.h5", static_cast<std::streamoff>(data_address(d / "x.h5", "inputs")) + 10, "\x7f\x7f");
         return "\"files\": " + quoted(d / "x.h5");
       },
       {"{dir}/x.h5: dataset 'inputs': reading sample 0", "failed", "checksum"}},
      {"NaN in float inputs",
       [](const ScratchFolder& d) {
         const hid_t f = testing::create_file(d / "x.h5");
         auto v = testing::pattern_samples<float>(0, kN, kS, kS, kS, kC);
         v[v.size() / 2 + 3] = std::numeric_limits<float>::quiet_NaN();
         testing::write_dataset(f, "inputs", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {kN, kS, kS, kS, kC}, v.data());
         write_targets(f);
         H5Fclose(f);
         return "\"files\": " + quoted(d / "x.h5");
       },
       {"{dir}/x.h5: dataset 'inputs': sample 1 of the file has 1 value(s) that are not finite"}},
      {"log1p of negative counts",
       [](const ScratchFolder& d) {
         auto v = small_counts();
         v[7] = -3;
         writer_file(d / "x.h5", false, v);
         return "\"files\": " + quoted(d / "x.h5") + ", \"normalize\": {\"transform\": \"log1p\"}";
       },
       {"{dir}/x.h5: dataset 'inputs': sample 0 of the file has 1 value(s) that are not finite after normalisation",
        "log1p of a value <= -1"}},
      {"a file that does not exist",
       [](const ScratchFolder& d) { return "\"files\": [" + quoted(d / "nope.h5") + "]"; },
       {"{dir}/nope.h5: cannot open the data file: it does not exist"}},
      {"a pattern matching nothing",
       [](const ScratchFolder& d) { return "\"files\": " + quoted(d / "*.hdf5"); },
       {"$.data.files: the pattern '{dir}/*.hdf5' matches no file"}},
      {"a directory in place of a file",
       [](const ScratchFolder& d) {
         std::filesystem::create_directories(d / "x.h5");
         return "\"files\": " + quoted(d / "x.h5");
       },
       {"{dir}/x.h5: cannot open the data file: it is a directory"}},
      {"a sample list that does not exist",
       [](const ScratchFolder& d) { return "\"sample_list\": " + quoted(d / "train.txt"); },
       {"{dir}/train.txt: cannot read the sample list: it does not exist"}},
      {"an empty sample list",
       [](const ScratchFolder& d) {
         std::ofstream(d / "train.txt") << "# nothing\n\n";
         return "\"sample_list\": " + quoted(d / "train.txt");
       },
       {"{dir}/train.txt: the sample list names no files"}},
      {"a sample list naming a missing file",
       [](const ScratchFolder& d) {
         writer_file(d / "a.h5", false, small_counts());
         std::ofstream(d / "train.txt") << "a.h5\n# comment\nb.h5\n";
         return "\"sample_list\": " + quoted(d / "train.txt");
       },
       {"{dir}/train.txt:3: sample file {dir}/b.h5 does not exist"}},
      {"a sample list naming a FIFO (reading it would block)",
       [](const ScratchFolder& d) {
         writer_file(d / "a.h5", false, small_counts());
         ::mkfifo((d / "b.h5").c_str(), 0600);
         std::ofstream(d / "train.txt") << "a.h5\nb.h5\n";
         return "\"sample_list\": " + quoted(d / "train.txt");
       },
       {"{dir}/train.txt:2: sample file {dir}/b.h5 is not a regular file (a FIFO)"}},
      {"a sample list naming a symbolic link loop",
       [](const ScratchFolder& d) {
         std::filesystem::create_symlink(d / "b.h5", d / "a.h5");
         std::filesystem::create_symlink(d / "a.h5", d / "b.h5");
         std::ofstream(d / "train.txt") << "a.h5\n";
         return "\"sample_list\": " + quoted(d / "train.txt");
       },
       {"{dir}/train.txt:1: sample file {dir}/a.h5 cannot be reached: a loop of symbolic links"}},
      {"a sample list that is a FIFO",
       [](const ScratchFolder& d) {
         ::mkfifo((d / "train.txt").c_str(), 0600);
         return "\"sample_list\": " + quoted(d / "train.txt");
       },
       {"{dir}/train.txt: cannot read the sample list: it is not a regular file (a FIFO)"}},
      {"a FIFO in place of a data file",
       [](const ScratchFolder& d) {
         ::mkfifo((d / "x.h5").c_str(), 0600);
         return "\"files\": " + quoted(d / "x.h5");
       },
       {"{dir}/x.h5: cannot open the data file: it is not a regular file (a FIFO)"}},
      {"a sample list naming a file of many samples",
       [](const ScratchFolder& d) {
         good_file(d / "a.h5");
         std::ofstream(d / "train.txt") << "a.h5\n";
         return "\"sample_list\": " + quoted(d / "train.txt");
       },
       {"{dir}/a.h5: dataset 'inputs': holds 3 samples, but a sample list names files of one sample each"}},
      {"a listed file that disagrees, found when it is read",
       [](const ScratchFolder& d) {
         writer_file(d / "a.h5", false, small_counts());
         const hid_t f = testing::create_file(d / "b.h5");
         const std::vector<int16_t> v(kS * kS * kS * kC, 1);
         testing::write_dataset(f, "inputs", H5T_STD_I16LE, H5T_NATIVE_INT16, {kS, kS, kS, kC}, v.data());
         const std::vector<float> t(3, 0.0f);
         testing::write_dataset(f, "targets", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {3}, t.data());
         H5Fclose(f);
         std::ofstream(d / "train.txt") << "a.h5\nb.h5\n";
         return "\"sample_list\": " + quoted(d / "train.txt");
       },
       {"{dir}/b.h5: dataset 'targets': targets are [3] float32 per sample but those of {dir}/a.h5 are [4]"}},
  };

  for (const auto& c : cases) {
    for (const bool prefetch : {false, true}) {
      SECTION(c.name + (prefetch ? ", read ahead" : "")) {
        ScratchFolder dir("tessera_bad_data");
        const std::string keys = c.make(dir);
        const auto config = nlohmann::json::parse("{\"source\": \"hdf5\", " + keys +
                                                  ", \"prefetch\": " + (prefetch ? "true" : "false") + "}");
        std::string message = "no error";
        bool ours = false;
        try {
          ConfigObject cfg(config, "$.data");
          auto split = io::make_datasets(cfg, 0);
          // Opened: the problem must show when the samples are read, each batch in turn.
          auto& ds = *split.train;
          const Shape s = ds.sample_shape();
          Tensor x(Shape{1, s[0], s[1], s[2], s[3]}), y(Shape{1, ds.target_shape().numel()});
          if (prefetch) ds.prefetch({0}, ds.whole_box());
          for (int64_t i = 0; i < ds.size(); ++i) {
            ds.load({i}, ds.whole_box(), x, y);
            if (prefetch && i + 1 < ds.size()) ds.prefetch({i + 1}, ds.whole_box());
          }
        } catch (const IoError& e) {
          message = e.what();
          ours = true;
        } catch (const ConfigError& e) {
          message = e.what();
          ours = true;
        } catch (const std::exception& e) {
          message = std::string("another exception: ") + e.what();
        }
        INFO("message: " << message);
        CHECK(ours);
        for (auto fragment : c.expect) {
          for (size_t at; (at = fragment.find("{dir}")) != std::string::npos;) fragment.replace(at, 5, dir.path());
          CHECK_THAT(message, Catch::Contains(fragment));
        }
      }
    }
  }
}

TEST_CASE("An unreadable file is refused by name", "[io][hdf5][bad]") {
  // Root reads everything; tests/CMakeLists.txt runs this case once more as an unprivileged user.
  if (::geteuid() == 0) TESSERA_SKIP("unprivileged", "root reads every file, so no file is unreadable to it");
  ScratchFolder dir("tessera_bad_data");
  good_file(dir / "x.h5");
  std::filesystem::permissions(dir / "x.h5", std::filesystem::perms::none);
  const auto config = nlohmann::json::parse("{\"source\": \"hdf5\", \"files\": " + quoted(dir / "x.h5") + "}");
  ConfigObject cfg(config, "$.data");
  CHECK_THROWS_WITH(io::make_datasets(cfg, 0), Catch::Contains(dir / "x.h5") && Catch::Contains("not readable"));
}

// A main for fuzz targets in builds without libFuzzer: runs LLVMFuzzerTestOneInput once on
// every file of the folders (and on the files) named on the command line, so the seed corpus
// and every reproducer in it are replayed by ctest with any compiler. An input that escapes
// with an exception other than Tessera's errors, or crashes, fails the run as it would fail
// the fuzzer.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

std::vector<uint8_t> read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path.string() + ": cannot open");
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CORPUS_FOLDER_OR_FILE...\n", argv[0]);
    return 2;
  }
  size_t replayed = 0;
  for (int a = 1; a < argc; ++a) {
    std::vector<fs::path> inputs;
    if (fs::is_directory(argv[a])) {
      for (const auto& entry : fs::recursive_directory_iterator(argv[a]))
        if (entry.is_regular_file()) inputs.push_back(entry.path());
      std::sort(inputs.begin(), inputs.end());  // a stable order, for reproducible logs
    } else if (fs::is_regular_file(argv[a])) {
      inputs.emplace_back(argv[a]);
    } else {
      std::fprintf(stderr, "%s: not a folder or file\n", argv[a]);
      return 2;
    }
    if (inputs.empty()) {
      std::fprintf(stderr, "%s: holds no inputs\n", argv[a]);
      return 2;
    }
    for (const auto& path : inputs) {
      const std::vector<uint8_t> bytes = read_bytes(path);
      std::fprintf(stderr, "replaying %s (%zu bytes)\n", path.c_str(), bytes.size());
      LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
      ++replayed;
    }
  }
  std::printf("replayed %zu inputs without a failure\n", replayed);
  return 0;
}

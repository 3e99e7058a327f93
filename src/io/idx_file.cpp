#include "tessera/io/idx_file.hpp"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "tessera/core/error.hpp"
#include "tessera/core/format.hpp"

namespace tessera::io {
namespace {

struct GzCloser {
  void operator()(gzFile_s* f) const { gzclose(f); }
};
using GzHandle = std::unique_ptr<gzFile_s, GzCloser>;

/// Reads exactly `bytes` (fewer only at the end of the data); returns how many arrived.
size_t read_up_to(gzFile f, void* out, size_t bytes, const std::string& path) {
  size_t done = 0;
  // gzread takes an unsigned count: read in pieces well below its limit.
  constexpr size_t kPiece = size_t{1} << 30;
  while (done < bytes) {
    const auto want = static_cast<unsigned>(std::min(kPiece, bytes - done));
    const int got = gzread(f, static_cast<char*>(out) + done, want);
    if (got < 0) {
      int code = 0;
      const char* why = gzerror(f, &code);
      throw IoError(path + ": reading failed (damaged gzip data?): " + (why ? why : "unknown zlib error"));
    }
    if (got == 0) break;
    done += static_cast<size_t>(got);
  }
  return done;
}

}  // namespace

IdxArray IdxArray::read(const std::string& path) {
  errno = 0;
  GzHandle f(gzopen(path.c_str(), "rb"));
  if (!f) throw IoError(path + ": cannot open the IDX file: " + (errno ? std::strerror(errno) : "out of memory"));
  unsigned char magic[4];
  if (read_up_to(f.get(), magic, 4, path) != 4 || magic[0] != 0 || magic[1] != 0)
    throw IoError(path + ": not an IDX file (its first bytes are not 00 00 <type> <dimensions>)");
  if (magic[2] != 0x08)
    throw IoError(path + ": IDX element type " + format("0x%02x", magic[2]) +
                  " is not supported; only unsigned bytes (0x08) are");
  const int rank = magic[3];
  if (rank < 1 || rank > 4)
    throw IoError(path + ": IDX header gives " + std::to_string(rank) + " dimensions; expected 1 to 4");
  IdxArray a;
  int64_t count = 1;
  for (int k = 0; k < rank; ++k) {
    unsigned char b[4];
    if (read_up_to(f.get(), b, 4, path) != 4) throw IoError(path + ": truncated IDX header");
    const int64_t d = (int64_t{b[0]} << 24) | (int64_t{b[1]} << 16) | (int64_t{b[2]} << 8) | int64_t{b[3]};
    if (d == 0) throw IoError(path + ": IDX dimension " + std::to_string(k) + " is 0; the file holds no values");
    a.dims.push_back(d);
    count *= d;
    // Four dimensions below 2^31 each could overflow; no image set comes near 2^40 values.
    if (count > (int64_t{1} << 40)) throw IoError(path + ": IDX header claims more than 2^40 values (damaged?)");
  }
  a.values.resize(static_cast<size_t>(count));
  const size_t got = read_up_to(f.get(), a.values.data(), a.values.size(), path);
  if (got != a.values.size())
    throw IoError(path + ": truncated: the header " + a.dims_str() + " promises " + std::to_string(count) +
                  " values, the file holds " + std::to_string(got));
  unsigned char extra;
  if (read_up_to(f.get(), &extra, 1, path) != 0)
    throw IoError(path + ": holds more values than its header " + a.dims_str() + " promises (damaged or misnamed?)");
  return a;
}

std::string IdxArray::dims_str() const {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

}  // namespace tessera::io

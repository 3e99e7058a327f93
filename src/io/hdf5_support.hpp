#pragma once
// HDF5 plumbing shared by the layout scan, the reader and the writer: one lock for the library,
// owned identifiers, error text, and the check of a file's datasets against docs/data.md.
// Private to src/io, so hdf5.h stays out of the installed headers.
#include <hdf5.h>

#include <cstdint>
#include <mutex>
#include <string>

#include "tessera/io/sample_schema.hpp"
#include "tessera/parallel/box.hpp"

namespace tessera::io::hdf5 {

/// Held around every HDF5 call: Debian's parallel HDF5 (and any parallel HDF5) is not built
/// thread-safe, and a prefetch thread reads while the main thread may read validation data.
std::mutex& library_mutex();

/// Initialises HDF5 on the calling thread (takes the lock itself) — the main one, since a parallel HDF5 registers an
/// MPI hook when it starts — and turns its own error printing off: Tessera reports errors
/// itself, naming the file and the dataset. Safe to call more than once.
void initialise();

// Everything below expects the caller to hold library_mutex().

/// Owns an HDF5 identifier and closes it with the close call of its kind.
class Handle {
 public:
  Handle() = default;
  explicit Handle(hid_t id) : id_(id) {}
  ~Handle() { reset(); }
  Handle(Handle&& other) noexcept : id_(other.id_) { other.id_ = -1; }
  Handle& operator=(Handle&& other) noexcept;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  void reset();

 private:
  hid_t id_ = -1;
};

/// The messages of HDF5's current error stack, innermost first, without repeats ("truncated
/// file: eof = 2048, sblock->base_addr = 0, stored_eof = 16384; ..."); clears the stack.
std::string error_text();

/// Why `path` cannot be read as a data file, or "" when it can: "does not exist", "is a
/// directory", "is not a regular file (a FIFO)", "is not readable (...)", or the system's
/// reason (e.g. a symbolic link loop). A FIFO or device would block or never end a read, so
/// only regular files are data files.
std::string file_problem(const std::string& path);

/// Opens `path` read-only. Throws IoError naming the file and why: it does not exist, is a
/// directory, is not readable, is not an HDF5 file, or HDF5 refuses it (truncated, damaged).
Handle open_file(const std::string& path);

/// What one file holds under the layout's dataset names.
struct FileContents {
  int64_t samples = 0;
  bool stacked = false;  // inputs [N, D, H, W, C]; otherwise one sample [D, H, W, C]
  SampleSchema schema;
};

/// Checks the input and target datasets of an open file: present, of a supported type and of a
/// rank and shape of docs/data.md, with as many targets as inputs. Throws IoError
/// "FILE: dataset 'NAME': PROBLEM" otherwise.
FileContents inspect(hid_t file, const std::string& path, const std::string& input_name,
                     const std::string& target_name);

/// The HDF5 memory type of an element type (native byte order).
hid_t memory_type(ElementType type);

/// Reads the hyperslab of sample `index` of an open dataset (stacked: its first dimension
/// indexes samples) cut to `box` in its first three per-sample dimensions when `cut`, whole
/// otherwise, into `out` as `type`.
void read_sample(hid_t dataset, bool stacked, int64_t index, bool cut, const parallel::Box& box, ElementType type,
                 void* out, const std::string& path, const std::string& name);

}  // namespace tessera::io::hdf5

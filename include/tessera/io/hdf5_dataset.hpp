#pragma once
#include <atomic>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "tessera/io/dataset.hpp"
#include "tessera/io/hdf5_layout.hpp"
#include "tessera/io/hdf5_reader.hpp"
#include "tessera/io/normalization.hpp"
#include "tessera/io/prefetcher.hpp"
#include "tessera/io/sample_store.hpp"

namespace tessera::io {

/// Training data in HDF5 files (docs/data.md). Each load reads, for each requested sample,
/// only the hyperslab of this rank's box — from the sample store when an earlier epoch kept it,
/// else from its file — as stored bytes into a host staging buffer, then converts them to
/// float into the batch tensors with the normalisation, in a Kokkos kernel (where kernels run
/// on the host, a synchronous load reads each sample, in slabs of depth planes when it is
/// large, into a buffer that stays in cache, and converts it from there straight into the
/// tensors). With prefetching
/// on, the batches named by prefetch() (up to two ahead) are read on a background thread while
/// the current one trains. With a log1p normalisation that thread also converts it, into a host buffer of
/// floats that load() copies into the tensors: a transcendental per value is worth hiding.
/// Otherwise load() converts, since converting then costs no more than that copy would.
class Hdf5Dataset final : public Dataset {
 public:
  /// Batches prefetch() may have in flight; an older one is dropped for a newer one beyond it.
  static constexpr size_t read_ahead = 2;

  struct Options {
    Normalization normalization;
    int64_t store_bytes = int64_t{1} << 30;  // budget of the sample store; 0: no store
    bool prefetch = true;                    // honour prefetch() hints
    std::string name = "hdf5";               // for describe() and errors ("hdf5 training data")
    std::string where = "$.data";            // JSON path for configuration errors
  };
  /// What the reading cost so far (for the I/O benchmark and the run's log).
  struct Statistics {
    int64_t loads = 0;
    int64_t prefetched_loads = 0;  // loads whose data a prefetch had read
    int64_t file_reads = 0;        // samples read from files
    int64_t store_reads = 0;       // samples copied from the store
    int64_t file_bytes = 0;        // bytes read from files
    double read_seconds = 0.0;     // reading batches (files and store), and converting those read ahead
    double wait_seconds = 0.0;     // load() blocked on a background read
    double convert_seconds = 0.0;  // load() converting (or copying what was read ahead) into the tensors
  };

  /// The samples `samples` (global indices of `layout`; all of them when empty), numbered
  /// 0..size()-1 in that order.
  Hdf5Dataset(std::shared_ptr<const Hdf5Layout> layout, std::vector<int64_t> samples, const Options& options);
  ~Hdf5Dataset() override;

  std::string describe() const override;
  int64_t size() const override { return static_cast<int64_t>(samples_.size()); }
  Shape sample_shape() const override { return layout_->schema().input; }
  Shape target_shape() const override { return layout_->schema().target; }
  bool targets_per_voxel() const override { return layout_->schema().targets_per_voxel; }
  void load(const std::vector<int64_t>& indices, const parallel::Box& box, const Tensor& inputs,
            const Tensor& targets) override;
  void prefetch(const std::vector<int64_t>& indices, const parallel::Box& box) override;

  Statistics statistics() const;
  const Hdf5Layout& layout() const { return *layout_; }

 private:
  struct Request {
    std::vector<int64_t> indices;
    parallel::Box box;
    bool operator==(const Request& o) const { return indices == o.indices && box == o.box; }
  };
  /// Host buffers for one batch: stored bytes (inputs of all rows, then targets) and, for a
  /// batch converted ahead, its floats.
  struct Staging {
    Kokkos::View<unsigned char*, HostSpace> bytes;
    Kokkos::View<float*, HostSpace> floats;
    bool busy = false;
  };
  struct Pending {
    Request request;
    Staging* staging;
  };
  void check(const std::vector<int64_t>& indices, const parallel::Box& box) const;
  bool convert_ahead() const { return options_.normalization.transform != Normalization::Transform::none; }
  /// A free staging buffer large enough for `request` (main thread).
  Staging& stage_for(const Request& request, bool floats);
  /// Reads `request` into `staging`, and with `to_floats` converts it on this thread into its
  /// floats; runs on the prefetch thread or the caller's, never both at once.
  void read(const Request& request, Staging& staging, bool to_floats);
  /// Reads `request` and converts it into the tensors slab by slab (kernels run on the host);
  /// returns false, having changed nothing that matters, when a value is not finite, so the
  /// staged path can name it.
  bool read_directly(const Request& request, const Tensor& inputs, const Tensor& targets);
  /// Seconds read_directly spent reading files and converting values.
  struct DirectTimes {
    double read_s = 0, convert_s = 0;
  };
  /// read_directly's read of sample `sample`'s part `box` from its file, converted into the
  /// tensors from values `first_in` and `first_target` on, its bytes kept at `keep` unless
  /// null; returns how many values were not finite.
  int64_t read_from_file(int64_t sample, const parallel::Box& box, unsigned char* keep, int64_t first_in,
                         int64_t first_target, const Tensor& inputs, const Tensor& targets, DirectTimes& times);
  /// Converts the staged batch into the tensors with Kokkos kernels.
  void convert(const Request& request, const Staging& staging, const Tensor& inputs, const Tensor& targets);
  /// Copies the staged floats into the tensors.
  void deliver(const Request& request, const Staging& staging, const Tensor& inputs, const Tensor& targets);
  /// Claims the oldest batch read ahead (rethrowing its error when `rethrow`) and frees its buffer.
  void claim_oldest(bool rethrow);
  /// Throws IoError naming the file, dataset and sample of the first row of `values` (rows of
  /// `per_row` floats of the batch's inputs or targets) that holds a value that is not finite.
  [[noreturn]] void refuse_non_finite(const Request& request, bool inputs, const float* values, int64_t per_row) const;

  std::shared_ptr<const Hdf5Layout> layout_;
  std::vector<int64_t> samples_;
  Options options_;
  Hdf5Reader reader_;
  SampleStore store_;
  std::vector<std::unique_ptr<Staging>> staging_;         // reused; read_ahead + 1 at most
  std::vector<unsigned char> slab_, slab_targets_;        // read_directly's cache-sized buffers
  Kokkos::View<unsigned char*, MemSpace> device_staged_;  // used when kernels cannot read host memory
  DeviceCoefficients input_coefficients_, target_coefficients_;
  std::deque<Pending> pending_;  // batches read ahead, oldest first, as queued in prefetcher_
  Prefetcher prefetcher_;
  // Written by reads on the prefetch thread while the main thread may look.
  std::atomic<int64_t> file_reads_{0}, store_reads_{0}, file_bytes_{0}, read_nanoseconds_{0};
  int64_t loads_ = 0, prefetched_loads_ = 0;
  double wait_seconds_ = 0.0, convert_seconds_ = 0.0;
};

}  // namespace tessera::io

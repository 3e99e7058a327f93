#pragma once
#include <memory>
#include <optional>
#include <string>

#include <pybind11/pybind11.h>

#include "tessera/io/dataset.hpp"
#include "tessera/train/batch_source.hpp"
#include "tessera/train/run_extension.hpp"

namespace tessera::python {

/// Training data as a Python iterable of global batches: each item a pair (x, y) of float32
/// arrays of `batch_size` samples (x [B, ...sample], y [B, ...], as ArrayDataset takes them),
/// in the order they are trained on. Every rank iterates its own copy of the iterable (every
/// rank runs the script), which must yield the same batches on every rank; each rank takes its
/// rows and box of each batch, as it would of a batch read from a data set. The iterable is
/// iterated afresh (iter()) at the start of every epoch, so a list or a re-iterable object
/// gives epochs of the same batches and a generator function's result gives one epoch only.
struct StreamSpec {
  pybind11::object iterable;
  pybind11::object first_x, first_y;  // the first batch, for shapes (read before the run)
  int64_t steps_per_epoch = 0;
};

/// The stream as the trainer's training set: its shapes (from the first batch) and the
/// samples of an epoch (steps_per_epoch × batch × accumulate). Samples are not addressable by
/// index in a stream, so load() refuses; the run reads the stream through StreamBatches.
class StreamDataset final : public io::Dataset {
 public:
  StreamDataset(Shape sample, Shape target, bool per_voxel, int64_t samples)
      : sample_(std::move(sample)), target_(std::move(target)), per_voxel_(per_voxel), samples_(samples) {}
  std::string describe() const override;
  int64_t size() const override { return samples_; }
  Shape sample_shape() const override { return sample_; }
  Shape target_shape() const override { return target_; }
  bool targets_per_voxel() const override { return per_voxel_; }
  void load(const std::vector<int64_t>& indices, const parallel::Box& box, const Tensor& inputs,
            const Tensor& targets) override;

 private:
  Shape sample_, target_;
  bool per_voxel_;
  int64_t samples_;
};

/// The trainer's source of training batches: the next item of the iterable for every
/// micro-batch, this rank's rows and box of it copied into the batch tensors.
class StreamBatches final : public train::BatchSource {
 public:
  StreamBatches(pybind11::object iterable, int64_t steps_per_epoch, int64_t accumulate, int64_t batch,
                int64_t first_row, int64_t rows, const parallel::Box& box);
  ~StreamBatches() override;
  void load(int64_t step, int64_t micro, const Tensor& inputs, const Tensor& targets) override;
  void observe(const Tensor& /*predictions*/) override {}

 private:
  /// The iterator positioned at the batch of (step, micro); a resumed run skips the batches
  /// of its epoch that were trained before.
  pybind11::object next_batch(int64_t step, int64_t micro);

  pybind11::object iterable_, iterator_;
  int64_t steps_per_epoch_, accumulate_, batch_, first_row_, rows_;
  parallel::Box box_;
  int64_t epoch_ = -1, position_ = 0;  // batches taken from iterator_
};

/// The run extension of a stream: the StreamDataset as training set, the validation arrays
/// (if any) as validation set, and StreamBatches as the training source.
class BatchStream final : public train::RunExtension {
 public:
  BatchStream(StreamSpec spec, std::unique_ptr<io::Dataset> validation)
      : spec_(std::move(spec)), validation_(std::move(validation)) {}
  ~BatchStream() override;
  std::string section() const override { return "$python_stream"; }
  void configure(ConfigObject* /*section*/) override {}
  io::DataSplit make_datasets(ConfigObject& data, const train::TrainingOptions& options,
                              const model::Model& model) override;
  std::unique_ptr<train::BatchSource> training_source(train::Trainer& trainer) override;

 private:
  StreamSpec spec_;
  std::unique_ptr<io::Dataset> validation_;
  int64_t batch_ = 0, accumulate_ = 1;
};

}  // namespace tessera::python

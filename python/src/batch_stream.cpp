#include "batch_stream.hpp"

#include <numeric>

#include "array_dataset.hpp"
#include "errors.hpp"
#include "tessera/core/config.hpp"
#include "tessera/train/trainer.hpp"

namespace py = pybind11;

namespace tessera::python {

namespace {

/// Every batch of a stream holds the run's global batch.
void require_batch_size(const ArrayDataset& batch, int64_t batch_size, const std::string& where) {
  if (batch.size() != batch_size)
    throw ArrayError(where, "holds " + std::to_string(batch.size()) + " samples; the run's batch_size is " +
                                std::to_string(batch_size));
}

}  // namespace

std::string StreamDataset::describe() const {
  return "a Python iterable of batches: " + std::to_string(samples_) + " samples of " + sample_.str() +
         " an epoch, targets " + target_.str() + (per_voxel_ ? " per voxel" : "");
}

void StreamDataset::load(const std::vector<int64_t>& /*indices*/, const parallel::Box& /*box*/,
                         const Tensor& /*inputs*/, const Tensor& /*targets*/) {
  throw Error("a Python iterable of batches is read in order, as the run's training source, not by sample index");
}

StreamBatches::StreamBatches(py::object iterable, int64_t steps_per_epoch, int64_t accumulate, int64_t batch,
                             int64_t first_row, int64_t rows, const parallel::Box& box)
    : iterable_(std::move(iterable)),
      steps_per_epoch_(steps_per_epoch),
      accumulate_(accumulate),
      batch_(batch),
      first_row_(first_row),
      rows_(rows),
      box_(box) {}

StreamBatches::~StreamBatches() {
  py::gil_scoped_acquire locked;
  iterator_ = py::object();
  iterable_ = py::object();
}

py::object StreamBatches::next_batch(int64_t step, int64_t micro) {
  const int64_t epoch = step / steps_per_epoch_;
  const int64_t wanted = (step % steps_per_epoch_) * accumulate_ + micro;
  if (epoch != epoch_ || wanted < position_) {
    iterator_ = py::iter(iterable_);
    epoch_ = epoch;
    position_ = 0;
  }
  for (;; ++position_) {
    PyObject* item = PyIter_Next(iterator_.ptr());
    if (item == nullptr) {
      if (PyErr_Occurred()) throw py::error_already_set();
      throw Error("data: the iterable of batches ended after " + std::to_string(position_) + " batches of epoch " +
                  std::to_string(epoch + 1) + "; an epoch takes " + std::to_string(steps_per_epoch_ * accumulate_) +
                  " (steps_per_epoch × accumulate). A generator can be iterated once: pass a list, or an object "
                  "whose __iter__ starts the data again, to train more than one epoch");
    }
    py::object batch = py::reinterpret_steal<py::object>(item);
    if (position_ == wanted) {
      ++position_;
      return batch;
    }
  }
}

void StreamBatches::load(int64_t step, int64_t micro, const Tensor& inputs, const Tensor& targets) {
  py::gil_scoped_acquire locked;
  const py::object batch = next_batch(step, micro);
  const std::string where = "data: batch " + std::to_string(position_) + " of epoch " + std::to_string(epoch_ + 1);
  if (!py::isinstance<py::tuple>(batch) || py::len(batch) != 2)
    throw ArrayError(where,
                     "expected a pair (x, y) of numpy arrays, got " + py::str(py::type::of(batch)).cast<std::string>());
  const auto pair = batch.cast<py::tuple>();
  ArrayDataset arrays(pair[0], pair[1], where + " x", where + " y");
  require_batch_size(arrays, batch_, where + " x");
  std::vector<int64_t> rows(static_cast<size_t>(rows_));
  std::iota(rows.begin(), rows.end(), first_row_);
  py::gil_scoped_release unlocked;
  arrays.load(rows, box_, inputs, targets);
}

BatchStream::~BatchStream() {
  py::gil_scoped_acquire locked;
  spec_ = StreamSpec();
  validation_.reset();
}

io::DataSplit BatchStream::make_datasets(ConfigObject& data, const train::TrainingOptions& options,
                                         const model::Model& /*model*/) {
  data.finish();
  batch_ = options.batch_size;
  accumulate_ = options.accumulate;
  ArrayDataset first(spec_.first_x, spec_.first_y, "data: batch 1 x", "data: batch 1 y");
  require_batch_size(first, batch_, "data: batch 1 x");
  io::DataSplit split;
  split.train = std::make_unique<StreamDataset>(first.sample_shape(), first.target_shape(), first.targets_per_voxel(),
                                                spec_.steps_per_epoch * batch_ * accumulate_);
  split.validation = std::move(validation_);
  return split;
}

std::unique_ptr<train::BatchSource> BatchStream::training_source(train::Trainer& trainer) {
  const train::BatchPlan& plan = trainer.plan();
  return std::make_unique<StreamBatches>(spec_.iterable, spec_.steps_per_epoch, accumulate_, batch_,
                                         plan.first_row(batch_), plan.local_rows(batch_), plan.box());
}

}  // namespace tessera::python

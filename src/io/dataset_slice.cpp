#include "tessera/io/dataset_slice.hpp"

#include "tessera/core/error.hpp"

namespace tessera::io {

DatasetSlice::DatasetSlice(std::shared_ptr<Dataset> base, int64_t first, int64_t count, const std::string& where)
    : base_(std::move(base)), first_(first), count_(count) {
  if (!base_) throw Error(where + ": no dataset to slice");
  if (first < 0 || count < 1 || first > base_->size() - count)
    throw ConfigError(where, "samples [" + std::to_string(first) + ", " + std::to_string(first + count) +
                                 ") do not lie inside the " + std::to_string(base_->size()) + " samples of " +
                                 base_->describe());
}

std::string DatasetSlice::describe() const {
  return "samples " + std::to_string(first_) + ".." + std::to_string(first_ + count_ - 1) + " of " + base_->describe();
}

std::vector<int64_t> DatasetSlice::shifted(const std::vector<int64_t>& indices) const {
  std::vector<int64_t> out;
  out.reserve(indices.size());
  for (const int64_t i : indices) {
    // The base would accept an index of a neighbouring slice: the check is this slice's own.
    if (i < 0 || i >= count_)
      throw ShapeError("dataset slice: sample " + std::to_string(i) + " is outside its " + std::to_string(count_) +
                       " samples");
    out.push_back(first_ + i);
  }
  return out;
}

void DatasetSlice::load(const std::vector<int64_t>& indices, const parallel::Box& box, const Tensor& inputs,
                        const Tensor& targets) {
  base_->load(shifted(indices), box, inputs, targets);
}

void DatasetSlice::prefetch(const std::vector<int64_t>& indices, const parallel::Box& box) {
  base_->prefetch(shifted(indices), box);
}

}  // namespace tessera::io

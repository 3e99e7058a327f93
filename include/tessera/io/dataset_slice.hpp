#pragma once
#include <memory>
#include <string>
#include <vector>

#include "tessera/io/dataset.hpp"

namespace tessera::io {

/// Samples [first, first + count) of another dataset, renumbered from 0: how a run holds
/// samples out of its training set (a population's tournament data) without copying them.
/// Slices of one dataset share it, so the base lives as long as its last slice; loads and
/// prefetches pass through with their indices shifted, and a base that reads ahead drops a
/// read-ahead that another slice's load overtook, as it does for any unexpected request.
class DatasetSlice final : public Dataset {
 public:
  /// Throws ConfigError naming `where` when the range does not lie inside the base.
  DatasetSlice(std::shared_ptr<Dataset> base, int64_t first, int64_t count, const std::string& where);

  std::string describe() const override;
  int64_t size() const override { return count_; }
  Shape sample_shape() const override { return base_->sample_shape(); }
  Shape target_shape() const override { return base_->target_shape(); }
  bool targets_per_voxel() const override { return base_->targets_per_voxel(); }
  void load(const std::vector<int64_t>& indices, const parallel::Box& box, const Tensor& inputs,
            const Tensor& targets) override;
  void prefetch(const std::vector<int64_t>& indices, const parallel::Box& box) override;

 private:
  std::vector<int64_t> shifted(const std::vector<int64_t>& indices) const;

  std::shared_ptr<Dataset> base_;
  int64_t first_, count_;
};

}  // namespace tessera::io

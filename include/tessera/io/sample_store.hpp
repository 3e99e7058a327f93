#pragma once
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "tessera/parallel/box.hpp"

namespace tessera::io {

/// Samples kept in host memory, as stored bytes, after their first read, so later epochs read
/// no files. It holds one box per sample — the part this rank reads — up to a byte budget:
/// once full it keeps what it has and the other samples are read from their files each
/// epoch. Under data parallelism with a global shuffle every rank eventually reads every
/// sample, so a rank's budget must cover its box of the whole data set to avoid all reads.
class SampleStore {
 public:
  explicit SampleStore(int64_t capacity_bytes) : capacity_(capacity_bytes) {}

  /// Prepares to hold samples of `input_bytes` + `target_bytes` bytes of `box`; a different
  /// box or size empties the store.
  void reset_for(const parallel::Box& box, int64_t input_bytes, int64_t target_bytes);
  /// The stored input bytes of sample `index` (its target bytes follow them), or null.
  const unsigned char* find(int64_t index) const;
  /// Keeps a copy of a sample's inputs and targets when the budget allows; returns whether it
  /// did.
  bool insert(int64_t index, const void* inputs, const void* targets);
  /// Room for sample `index` (its input bytes, then its target bytes) for the caller to fill,
  /// or null when the budget allows none or it is stored already. Remove it if filling fails.
  unsigned char* add(int64_t index);
  void remove(int64_t index) { samples_.erase(index); }

  int64_t samples() const { return static_cast<int64_t>(samples_.size()); }
  int64_t bytes() const { return samples() * (input_bytes_ + target_bytes_); }
  int64_t capacity() const { return capacity_; }

 private:
  int64_t capacity_;
  parallel::Box box_;
  int64_t input_bytes_ = 0, target_bytes_ = 0;
  std::unordered_map<int64_t, std::vector<unsigned char>> samples_;
};

}  // namespace tessera::io

#include "tessera/io/sample_store.hpp"

#include <cstring>

namespace tessera::io {

void SampleStore::reset_for(const parallel::Box& box, int64_t input_bytes, int64_t target_bytes) {
  if (box == box_ && input_bytes == input_bytes_ && target_bytes == target_bytes_) return;
  samples_.clear();
  box_ = box;
  input_bytes_ = input_bytes;
  target_bytes_ = target_bytes;
}

const unsigned char* SampleStore::find(int64_t index) const {
  const auto it = samples_.find(index);
  return it == samples_.end() ? nullptr : it->second.data();
}

bool SampleStore::insert(int64_t index, const void* inputs, const void* targets) {
  if (samples_.count(index)) return true;
  const int64_t size = input_bytes_ + target_bytes_;
  if (size == 0 || bytes() + size > capacity_) return false;
  std::vector<unsigned char> copy(static_cast<size_t>(size));
  std::memcpy(copy.data(), inputs, static_cast<size_t>(input_bytes_));
  std::memcpy(copy.data() + input_bytes_, targets, static_cast<size_t>(target_bytes_));
  samples_.emplace(index, std::move(copy));
  return true;
}

unsigned char* SampleStore::add(int64_t index) {
  const int64_t size = input_bytes_ + target_bytes_;
  if (samples_.count(index) || size == 0 || bytes() + size > capacity_) return nullptr;
  return samples_.emplace(index, std::vector<unsigned char>(static_cast<size_t>(size))).first->second.data();
}

}  // namespace tessera::io

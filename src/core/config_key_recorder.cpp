#include "tessera/core/config_key_recorder.hpp"

namespace tessera {
namespace {
thread_local ConfigKeyRecorder* current = nullptr;
}  // namespace

ConfigKeyRecorder::ConfigKeyRecorder() : previous_(current) { current = this; }

ConfigKeyRecorder::~ConfigKeyRecorder() { current = previous_; }

void ConfigKeyRecorder::note(const NumericKeyRead& read) {
  if (current == nullptr) return;
  for (auto& r : current->reads_)
    if (r.path == read.path) {
      // A bounded read after an unbounded one of the same key (integer_in reads integer first).
      if (read.bounded || !r.bounded) r = read;
      return;
    }
  current->reads_.push_back(read);
}

}  // namespace tessera

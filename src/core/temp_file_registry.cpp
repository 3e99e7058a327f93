#include "tessera/core/temp_file_registry.hpp"

#include <unistd.h>

#include <array>
#include <atomic>
#include <cstring>

namespace tessera {
namespace {

// A slot is free, being filled, holding a path, or claimed by the handler that removes it.
enum SlotState : int { free_slot = 0, filling = 1, ready = 2, removing = 3 };

struct Slot {
  std::atomic<int> state{free_slot};
  char path[4096] = {};
};
static_assert(std::atomic<int>::is_always_lock_free, "a signal handler reads the slot states");

// Atomic writes are short and few at a time (a checkpoint, a data file per rank).
std::array<Slot, 16> slots;

}  // namespace

TempFileRegistration::TempFileRegistration(const std::string& path) {
  if (path.size() >= sizeof(Slot::path)) return;
  for (int i = 0; i < static_cast<int>(slots.size()); ++i) {
    Slot& s = slots[static_cast<size_t>(i)];
    int expected = free_slot;
    if (!s.state.compare_exchange_strong(expected, filling)) continue;
    std::memcpy(s.path, path.c_str(), path.size() + 1);
    s.state.store(ready, std::memory_order_release);
    slot_ = i;
    return;
  }
}

TempFileRegistration::~TempFileRegistration() {
  if (slot_ < 0) return;
  // Fails only when a handler has claimed the slot to remove the file: the process is ending
  // then, and the slot stays claimed.
  int expected = ready;
  slots[static_cast<size_t>(slot_)].state.compare_exchange_strong(expected, free_slot);
}

void remove_registered_temp_files() noexcept {
  for (Slot& s : slots) {
    int expected = ready;
    if (s.state.compare_exchange_strong(expected, removing, std::memory_order_acquire)) ::unlink(s.path);
  }
}

int registered_temp_files() noexcept {
  int n = 0;
  for (const Slot& s : slots) n += s.state.load() == ready ? 1 : 0;
  return n;
}

}  // namespace tessera

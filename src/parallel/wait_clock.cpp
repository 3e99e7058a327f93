#include "tessera/parallel/wait_clock.hpp"

namespace tessera::parallel {
namespace {

thread_local double waited_seconds = 0.0;

}  // namespace

double WaitClock::seconds() { return waited_seconds; }

WaitClock::Scope::~Scope() {
  waited_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

}  // namespace tessera::parallel

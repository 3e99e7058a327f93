#include "tessera/train/profile_hook.hpp"

#include "tessera/core/format.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/profiling.hpp"
#include "tessera/core/seconds_since.hpp"
#include "tessera/train/trainer.hpp"

namespace tessera::train {

void ProfileHook::on_run_start(Trainer& trainer, const RunStart& start) {
  first_profiled_ = start.last_step - start.start_step > 2 ? start.start_step + 2 : start.start_step;
  Profiler::instance().reset();
  Profiler::instance().enable(trainer.options().profile && start.start_step == first_profiled_);
  start_ = std::chrono::steady_clock::now();
}

void ProfileHook::on_step_start(Trainer& trainer, int64_t step) {
  if (trainer.options().profile && step == first_profiled_ && !Profiler::instance().enabled()) {
    Profiler::instance().enable(true);
    start_ = std::chrono::steady_clock::now();
  }
}

void ProfileHook::on_run_end(Trainer& trainer, const RunEnd& end) {
  if (!trainer.options().profile) return;
  const double profiled = seconds_since(start_);
  log::info("profile of steps " + std::to_string(first_profiled_ + 1) + "-" + std::to_string(end.steps) + " (" +
            fixed(profiled, 3) + " s" + ", validation included; warm-up steps left out):\n" +
            Profiler::instance().report(profiled));
  nlohmann::json regions = nlohmann::json::object();
  for (const auto& [name, entry] : Profiler::instance().entries())
    regions[name] = {{"seconds", entry.seconds}, {"calls", entry.calls}};
  trainer.metrics().write({{"event", "profile"},
                           {"first_step", first_profiled_ + 1},
                           {"last_step", end.steps},
                           {"seconds", profiled},
                           {"regions", regions}});
  Profiler::instance().enable(false);
}

}  // namespace tessera::train

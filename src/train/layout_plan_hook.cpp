#include "tessera/train/layout_plan_hook.hpp"

#include "tessera/train/trainer.hpp"

namespace tessera::train {

void LayoutPlanHook::on_run_start(Trainer& trainer, const RunStart& /*start*/) {
  nlohmann::json record = plan_;
  record["event"] = "plan";
  trainer.metrics().write(record);
}

}  // namespace tessera::train

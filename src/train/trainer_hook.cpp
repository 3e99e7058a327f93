#include "tessera/train/trainer_hook.hpp"

namespace tessera::train {

TrainerHook::~TrainerHook() = default;

}  // namespace tessera::train

#include "tessera/ffn/ffn_run.hpp"

#include "tessera/core/error.hpp"
#include "tessera/ffn/fov_movement_hook.hpp"
#include "tessera/ffn/fov_training_source.hpp"
#include "tessera/ffn/seed_fov_dataset.hpp"
#include "tessera/train/trainer.hpp"

namespace tessera::ffn {

void FfnRun::configure(ConfigObject* section) {
  if (!section) throw ConfigError("$.ffn", "a flood-filling network's run needs an \"ffn\" section");
  options_ = FfnOptions::from_json(*section);
}

io::DataSplit FfnRun::make_datasets(ConfigObject& data, const train::TrainingOptions& options,
                                    const model::Model& model) {
  check_ffn_model(model, options_);
  data.choice("source", {"hdf5"}, "hdf5");
  const std::string instances = data.string("instances", "instances");
  const io::Normalization normalization =
      data.has("normalize") ? io::Normalization::from_json(data.object("normalize")) : io::Normalization{};
  const std::string list = data.string("sample_list");
  const int64_t seeds = data.integer_in("seeds", 1, int64_t{1} << 40, 1024);
  seed_ = static_cast<uint64_t>(data.integer_in("seed", 0, int64_t{1} << 62, static_cast<int64_t>(options.seed)));
  training_ = std::make_shared<const std::vector<LabeledVolume>>(
      read_labeled_volumes(list, instances, normalization, data.path_of("sample_list")));
  io::DataSplit split;
  split.train = std::make_unique<SeedFovDataset>(training_, options_, seeds, seed_, list, data.path_of("sample_list"));
  if (data.has("validation")) {
    auto v = data.object("validation");
    const std::string vlist = v.string("sample_list");
    const int64_t vseeds = v.integer_in("seeds", 1, int64_t{1} << 40, 64);
    auto volumes = std::make_shared<const std::vector<LabeledVolume>>(
        read_labeled_volumes(vlist, instances, normalization, v.path_of("sample_list")));
    split.validation =
        std::make_unique<SeedFovDataset>(volumes, options_, vseeds, seed_ + 1, vlist, v.path_of("sample_list"));
    v.finish();
  }
  data.finish();
  return split;
}

std::unique_ptr<train::BatchSource> FfnRun::training_source(train::Trainer& trainer) {
  const train::BatchPlan& plan = trainer.plan();
  if (plan.box().volume() != options_.fov_voxels())
    throw ConfigError("$.model.distribution",
                      "an FFN run splits the batch over ranks, not its FOVs: use a "
                      "distribution without depth, height or width");
  const int64_t batch = plan.batch();
  auto source = std::make_unique<FovTrainingSource>(training_, options_, seed_, plan.first_row(batch),
                                                    plan.local_batch(), batch, plan.accumulate(), "$.data.sample_list");
  trainer.add_hook(std::make_unique<FovMovementHook>(*source));
  return source;
}

}  // namespace tessera::ffn

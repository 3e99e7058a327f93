// `tessera ffn segment`: a trained flood-filling network segments a volume into objects
// (ffn::FloodFiller), writes the segmentation as a data file and scores it against the
// volume's true objects.
#include <cstdio>

#include "commands.hpp"
#include "number_checks.hpp"
#include "tessera/core/atomic_file.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/format.hpp"
#include "tessera/core/log.hpp"
#include "tessera/eval/segmentation_scores.hpp"
#include "tessera/ffn/ffn_options.hpp"
#include "tessera/ffn/flood_filler.hpp"
#include "tessera/io/dataset.hpp"
#include "tessera/parallel/communicator.hpp"
#include "tessera/train/trained_model.hpp"
#ifdef TESSERA_HAVE_HDF5
#include "tessera/io/hdf5_writer.hpp"
#endif

namespace tessera::cli {

CLI::App* add_ffn_command(CLI::App& app, FfnSegmentArgs& a) {
  auto* ffn = app.add_subcommand("ffn", "Flood-filling networks (examples/ffn): segment a volume with a trained one");
  ffn->require_subcommand(1);
  auto* cmd = ffn->add_subcommand(
      "segment",
      "Flood-fill a volume object by object with a trained FFN (the run config with an \"ffn\" section and a "
      "checkpoint of its training); write the segmentation ('segmentation', one id per voxel, 0: none) to a data file "
      "and, when the volume holds true objects, score it (variation of information, adapted Rand error).");
  cmd->add_option("config", a.config, "The FFN's run config")->required()->check(CLI::ExistingFile);
  auto* checkpoint =
      cmd->add_option("--checkpoint", a.checkpoint, "Checkpoint of its training")->check(CLI::ExistingFile);
  auto* untrained =
      cmd->add_flag("--untrained", a.untrained,
                    "Use the network as the config's training seed initialises it, untrained (a baseline)");
  checkpoint->excludes(untrained);
  cmd->add_option("--volume", a.volume, "Data file holding the volume ('inputs' [D, H, W, 1])")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--sample", a.sample, "The sample of a file that holds several, from 0")
      ->capture_default_str()
      ->check(integer_in(0, kMaxCount));
  cmd->add_option("--output", a.output, "Data file to write the segmentation to (atomically)");
  cmd->add_option("--truth-dataset", a.truth_dataset, "The volume's dataset of true object ids, for the scores")
      ->capture_default_str();
  cmd->add_flag("--no-score", a.no_score, "Do not read true objects or score");
  cmd->add_option("--seed-spacing", a.fill.seed_spacing, "Try a seed every this many voxels along each axis")
      ->capture_default_str()
      ->check(integer_in(1, 1 << 20));
  cmd->add_option("--seed-order", a.fill.seed_order,
                  "grid: the grid's seeds in raster order; interior: deepest inside a cell first, by the distance "
                  "from voxels darker than --dark")
      ->capture_default_str()
      ->check(CLI::IsMember({"grid", "interior"}));
  cmd->add_option("--dark", a.fill.dark,
                  "Image value (normalised, as the network reads it) below which a voxel is "
                  "boundary for --seed-order interior")
      ->capture_default_str()
      ->check(real_in(-1e6, 1e6));
  cmd->add_option("--min-voxels", a.fill.min_voxels, "Drop objects smaller than this")
      ->capture_default_str()
      ->check(integer_in(0, kMaxCount));
  cmd->add_option("--max-fovs", a.fill.max_fovs, "FOVs one object may take at most")
      ->capture_default_str()
      ->check(integer_in(1, int64_t{1} << 30));
  cmd->add_option("--backend", a.backend, "Op backend (auto, onednn, kokkos, cudnn)")->capture_default_str();
  cmd->add_flag("--json", a.json, "Print the result as one JSON object");
  return cmd;
}

#ifdef TESSERA_HAVE_HDF5
namespace {

ffn::FfnOptions ffn_options_of(const nlohmann::json& config) {
  if (!config.contains("ffn")) throw ConfigError("$.ffn", "the config has no \"ffn\" section: it is not an FFN's");
  ConfigObject section(config.at("ffn"), "$.ffn");
  return ffn::FfnOptions::from_json(section);
}

void write_segmentation(const std::string& path, const ffn::LabeledVolume& v, const eval::Labels& ids,
                        const std::string& config) {
  io::SampleSchema schema;
  schema.input = Shape{v.size[0], v.size[1], v.size[2], 1};
  schema.target = Shape{v.size[0], v.size[1], v.size[2]};
  schema.targets_per_voxel = true;
  schema.extras.push_back({"segmentation", schema.target, io::ElementType::int32});
  std::vector<float> inside(ids.size());
  std::vector<int32_t> segmentation(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    inside[i] = ids[i] != 0 ? 1.0f : 0.0f;
    segmentation[i] = static_cast<int32_t>(ids[i]);
  }
  io::Hdf5SampleWriter::Options options;
  options.stacked = false;
  io::Hdf5SampleWriter writer(path, schema, 1, options);
  writer.write(0, v.image.data(), inside.data(), {segmentation.data()});
  writer.set_attribute("generator", "tessera ffn segment " + config);
  writer.commit();
}

void report(const FfnSegmentArgs& a, const ffn::FloodFillResult& r, const eval::SegmentationScores* s) {
  if (a.json) {
    std::string json = format(
        "{\"objects\": %lld, \"seeds_tried\": %lld, \"seeds_failed\": %lld, \"too_small\": %lld, \"fovs\": %lld, "
        "\"seconds\": %.3f",
        static_cast<long long>(r.objects), static_cast<long long>(r.seeds_tried),
        static_cast<long long>(r.seeds_failed), static_cast<long long>(r.too_small), static_cast<long long>(r.fovs),
        r.seconds);
    if (s)
      json +=
          format(", \"vi_split\": %.6f, \"vi_merge\": %.6f, \"vi\": %.6f, \"rand_error\": %.6f, \"true_objects\": %lld",
                 s->vi_split, s->vi_merge, s->vi(), s->rand_error, static_cast<long long>(s->true_objects));
    std::printf("%s}\n", json.c_str());
    return;
  }
  log::info(
      format("ffn segment: %lld objects from %lld seeds (%lld failed at their own voxel, %lld too small), "
             "%lld FOVs in %.1f s (%.1f FOVs/s)",
             static_cast<long long>(r.objects), static_cast<long long>(r.seeds_tried),
             static_cast<long long>(r.seeds_failed), static_cast<long long>(r.too_small),
             static_cast<long long>(r.fovs), r.seconds, static_cast<double>(r.fovs) / std::max(r.seconds, 1e-9)));
  if (s)
    log::info(
        format("against %lld true objects: variation of information %.4f bits (split %.4f, merge %.4f); "
               "adapted Rand error %.4f",
               static_cast<long long>(s->true_objects), s->vi(), s->vi_split, s->vi_merge, s->rand_error));
}

}  // namespace
#endif

int run_ffn_segment(const FfnSegmentArgs& a) {
#ifndef TESSERA_HAVE_HDF5
  (void)a;
  throw io::hdf5_missing("ffn segment");
#else
  if (a.checkpoint.empty() && !a.untrained)
    throw ConfigError("ffn segment", "which network? give --checkpoint FILE (or --untrained for a baseline)");
  if (!a.output.empty()) require_writable_location(a.output, "--output (the segmentation)");
  if (parallel::Communicator::world().rank() != 0) return 0;  // one process's work
  const nlohmann::json config = read_json_file(a.config);
  const ffn::FfnOptions options = ffn_options_of(config);
  const ffn::LabeledVolume volume = ffn::read_labeled_volume(a.volume, a.sample, a.no_score ? "" : a.truth_dataset,
                                                             io::Normalization::of_run_config(config), "--volume");
  train::TrainedModel trained(config, a.checkpoint, a.backend);
  ffn::FloodFiller filler(trained.model(), options, a.fill);
  const ffn::FloodFillResult r = filler.segment(volume);
  if (!a.output.empty()) write_segmentation(a.output, volume, r.ids, a.config);
  if (a.no_score) {
    report(a, r, nullptr);
  } else {
    const eval::SegmentationScores s = eval::score_segmentation(volume.ids, r.ids);
    report(a, r, &s);
  }
  return 0;
#endif
}

}  // namespace tessera::cli

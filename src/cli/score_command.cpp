// `tessera score`: variation of information and adapted Rand error of an instance segmentation
// against the true objects of a data file, for a segmentation stored as ids, for the connected
// components of a thresholded map (e.g. a U-Net's interior probability), or for the components
// of the true interior with noise (the upper reference of issue-style comparisons).
#include <cstdio>

#include "commands.hpp"
#include "number_checks.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/format.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/rng.hpp"
#include "tessera/eval/connected_components.hpp"
#include "tessera/eval/segmentation_scores.hpp"
#include "tessera/io/dataset.hpp"
#include "tessera/parallel/communicator.hpp"
#ifdef TESSERA_HAVE_HDF5
#include "tessera/io/hdf5_sample_array.hpp"
#endif

namespace tessera::cli {

CLI::App* add_score_command(CLI::App& app, ScoreArgs& a) {
  auto* cmd = app.add_subcommand(
      "score",
      "Score an instance segmentation against the true objects of a data file (the 'instances' of `tessera datagen "
      "cells`): variation of information split and merge (bits) and adapted Rand error, over the voxels of true "
      "objects. The segmentation is a dataset of ids (--segmentation), the 6-connected components of a map above a "
      "threshold (--components), or the components of the true interior with a fraction of its voxels flipped "
      "(--noisy-truth).");
  cmd->add_option("truth", a.truth, "Data file holding the true objects")->required()->check(CLI::ExistingFile);
  cmd->add_option("--truth-dataset", a.truth_dataset, "Its dataset of object ids (0: no object)")
      ->capture_default_str();
  cmd->add_option("--sample", a.sample, "The sample of a file that holds several, from 0")
      ->capture_default_str()
      ->check(integer_in(0, kMaxCount));
  auto* seg = cmd->add_option("--segmentation", a.segmentation, "Data file holding a segmentation's ids")
                  ->check(CLI::ExistingFile);
  cmd->add_option("--segmentation-dataset", a.segmentation_dataset, "Its dataset")->capture_default_str();
  auto* comp = cmd->add_option("--components", a.components,
                               "Data file holding a map whose voxels above --threshold are joined into components")
                   ->check(CLI::ExistingFile);
  cmd->add_option("--components-dataset", a.components_dataset, "Its dataset")->capture_default_str();
  cmd->add_option("--channel", a.channel,
                  "The channel of a map with several per voxel ([D, H, W, K], e.g. the class probabilities of "
                  "`tessera predict`), from 0; default: the last (a two-class model's foreground)")
      ->check(integer_in(0, 1 << 20));
  cmd->add_option("--threshold", a.threshold, "Foreground: map values above this, from -1e6 to 1e6")
      ->capture_default_str()
      ->check(real_in(-1e6, 1e6));
  auto* noisy = cmd->add_option("--noisy-truth", a.noisy_truth,
                                "Score the components of the true interior (object id not 0) with this fraction of "
                                "the voxels flipped at random, in [0, 1)")
                    ->check(real_in(0.0, 1.0, false, true));
  cmd->add_option("--seed", a.seed, "Seed of --noisy-truth's flips")
      ->capture_default_str()
      ->check(integer_in(0, int64_t{1} << 62));
  cmd->add_option("--min-voxels", a.min_voxels, "Components smaller than this stay unsegmented")
      ->capture_default_str()
      ->check(integer_in(1, kMaxCount));
  cmd->add_flag("--json", a.json, "Print the scores as one JSON object instead of a sentence");
  seg->excludes(comp)->excludes(noisy);
  comp->excludes(noisy);
  return cmd;
}

#ifdef TESSERA_HAVE_HDF5
namespace {

/// The true objects' ids and their volume's (D, H, W).
eval::Labels read_ids(const io::SampleArray& array, const std::string& what) {
  eval::Labels ids;
  const int64_t bad = eval::labels_from_values(array.values, ids);
  if (bad >= 0)
    throw ConfigError(what, format("value %g at voxel %lld is not an object id (a whole number from 0)",
                                   array.values[static_cast<size_t>(bad)], static_cast<long long>(bad)));
  return ids;
}

std::array<int64_t, 3> volume_of(const Shape& shape, const std::string& what) {
  if (shape.rank() < 3 || shape.numel() != shape[0] * shape[1] * shape[2])
    throw ConfigError(what, "a volume [D, H, W] (or [D, H, W, 1]) was expected, the dataset holds " + shape.str());
  return {shape[0], shape[1], shape[2]};
}

/// The segmentation the flags ask for, over the truth's voxels.
eval::Labels segmentation_of(const ScoreArgs& a, const eval::Labels& truth, const std::array<int64_t, 3>& size) {
  if (!a.segmentation.empty()) {
    const auto array = io::read_sample_array(a.segmentation, a.segmentation_dataset, a.sample);
    return read_ids(array, "--segmentation");
  }
  std::vector<uint8_t> mask(truth.size());
  if (!a.components.empty()) {
    const auto array = io::read_sample_array(a.components, a.components_dataset, a.sample);
    const Shape& shape = array.shape;
    const int64_t k = shape.rank() == 4 ? shape[3] : 1;
    if (shape.rank() < 3 || shape.rank() > 4 || shape[0] * shape[1] * shape[2] != static_cast<int64_t>(truth.size()))
      throw ConfigError("--components", "a map [D, H, W] or [D, H, W, K] of the truth's " +
                                            std::to_string(truth.size()) + " voxels was expected, the dataset holds " +
                                            shape.str());
    const int64_t channel = a.channel.value_or(k - 1);
    if (channel >= k)
      throw ConfigError("--channel",
                        format("%s:%s has %lld channel(s), 0 to %lld; there is no channel %lld", a.components.c_str(),
                               a.components_dataset.c_str(), static_cast<long long>(k), static_cast<long long>(k - 1),
                               static_cast<long long>(channel)));
    for (size_t i = 0; i < mask.size(); ++i)
      mask[i] = array.values[i * static_cast<size_t>(k) + static_cast<size_t>(channel)] > a.threshold ? 1 : 0;
  } else {
    for (size_t i = 0; i < mask.size(); ++i) {
      const bool flip =
          rng::uniform(static_cast<uint64_t>(a.seed), 0x6e6f697379ull, static_cast<uint64_t>(i)) < a.noisy_truth;
      mask[i] = static_cast<uint8_t>((truth[i] != 0) != flip);
    }
  }
  return eval::connected_components(mask, size, a.min_voxels);
}

std::string source_of(const ScoreArgs& a) {
  if (!a.segmentation.empty()) return a.segmentation + ":" + a.segmentation_dataset;
  if (!a.components.empty())
    return format("components of %s:%s (channel %s) above %g", a.components.c_str(), a.components_dataset.c_str(),
                  a.channel ? std::to_string(*a.channel).c_str() : "the last", a.threshold);
  return format("components of the true interior with %g of the voxels flipped (seed %llu)", a.noisy_truth,
                static_cast<unsigned long long>(a.seed));
}

}  // namespace
#endif

int run_score(const ScoreArgs& a) {
#ifndef TESSERA_HAVE_HDF5
  (void)a;
  throw io::hdf5_missing("score");
#else
  if (a.segmentation.empty() && a.components.empty() && a.noisy_truth < 0)
    throw ConfigError("score", "nothing to score: give --segmentation, --components or --noisy-truth");
  if (parallel::Communicator::world().rank() != 0) return 0;  // one process's work
  const auto truth_array = io::read_sample_array(a.truth, a.truth_dataset, a.sample);
  const auto size = volume_of(truth_array.shape, "truth");
  const eval::Labels truth = read_ids(truth_array, "truth");
  const eval::Labels found = segmentation_of(a, truth, size);
  if (found.size() != truth.size())
    throw ConfigError("score", format("the segmentation has %zu voxels, the truth %zu", found.size(), truth.size()));
  const auto s = eval::score_segmentation(truth, found);
  if (a.json) {
    std::printf(
        "{\"vi_split\": %.6f, \"vi_merge\": %.6f, \"vi\": %.6f, \"rand_error\": %.6f, \"rand_precision\": %.6f, "
        "\"rand_recall\": %.6f, \"voxels\": %lld, \"true_objects\": %lld, \"segments\": %lld}\n",
        s.vi_split, s.vi_merge, s.vi(), s.rand_error, s.rand_precision, s.rand_recall, static_cast<long long>(s.voxels),
        static_cast<long long>(s.true_objects), static_cast<long long>(s.found_segments));
    return 0;
  }
  log::info(source_of(a) + " against " + a.truth + ":" + a.truth_dataset);
  log::info(format(
      "variation of information %.4f bits (split %.4f, merge %.4f); adapted Rand error %.4f "
      "(precision %.4f, recall %.4f); %lld voxels of %lld true objects in %lld segments",
      s.vi(), s.vi_split, s.vi_merge, s.rand_error, s.rand_precision, s.rand_recall, static_cast<long long>(s.voxels),
      static_cast<long long>(s.true_objects), static_cast<long long>(s.found_segments)));
  return 0;
#endif
}

}  // namespace tessera::cli

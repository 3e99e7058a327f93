#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/parallel/communicator.hpp"

namespace tessera::train {

/// Which metrics validation reports besides the loss: the "metrics" list of the training
/// section. Each name is one of "accuracy" (top-1), "top5", "iou", "dice" (for
/// softmax_cross_entropy) and "mae" (for mse).
struct MetricChoice {
  bool accuracy = false, top5 = false, iou = false, dice = false, mae = false;

  /// Reads the names in `names`; an unknown or repeated name is a ConfigError at `path`.
  static MetricChoice from_names(const std::vector<std::string>& names, const std::string& path);
  /// What a loss reports when the config does not say: per-sample classification its accuracy,
  /// per-voxel classification IoU and Dice, regression its MAE.
  static MetricChoice defaults(const std::string& loss_type, bool per_voxel);
  /// Refuses (ConfigError at `path`) a metric the loss `loss_type` cannot give, or top-5 with
  /// fewer than 5 `classes`.
  void check(const std::string& loss_type, int64_t classes, const std::string& path) const;
  bool empty() const { return !(accuracy || top5 || iou || dice || mae); }
  std::vector<std::string> names() const;
};

/// Validation metrics of one evaluation; −1 (or empty per-class lists) where not chosen.
/// IoU and Dice of a class are computed from voxel (or sample) counts summed over the whole
/// validation set: |P∩T| / |P∪T| and 2|P∩T| / (|P| + |T|), P the rows predicted (arg-max) as
/// the class, T those labelled so. A class absent from both has no IoU or Dice (NaN, null in
/// JSON) and is left out of the means. "Foreground" merges every class but 0.
struct ValidationMetrics {
  double accuracy = -1.0;         // top-1: rows whose arg-max is the label
  double top5 = -1.0;             // rows whose label is among the 5 largest logits
  std::vector<double> iou, dice;  // per class
  double mean_iou = -1.0, mean_dice = -1.0;
  double foreground_iou = -1.0, foreground_dice = -1.0;
  double mae = -1.0;           // mean over all outputs of |prediction − target|
  double baseline_mae = -1.0;  // MAE of predicting the mean target (per-sample regression), −1: none

  /// The chosen metrics as keys of a JSON record (per-class lists as arrays).
  void add_to(nlohmann::json& record) const;
  /// "accuracy 91.50%, top-5 99.10%, IoU 0.812 (foreground 0.801), ..."; empty if none.
  std::string str() const;
};

/// Sums one process's rows of predictions and targets into the counts the metrics are made
/// of, then adds them up over the ranks. Counts, not ratios, are summed, so any split of the
/// validation set over samples or space gives the metrics of one rank seeing all of it, as
/// long as every row is added by exactly one rank.
class MetricSums {
 public:
  /// `classes`: the logits per row of a classification; `targets_per_sample`: the targets of
  /// a per-sample regression, whose mean-predictor MAE is then computed (0: none).
  MetricSums(const MetricChoice& choice, int64_t classes, int64_t targets_per_sample = 0);

  /// `rows` rows of `classes` logits (row-major) and their class labels.
  void add_classification(const float* logits, const float* labels, int64_t rows);
  /// `n` predictions and their targets (whole samples of `targets_per_sample` values when that
  /// was given).
  void add_regression(const float* prediction, const float* target, int64_t n);
  /// Adds up the sums over `group` (collective) and returns the metrics.
  ValidationMetrics reduce(const parallel::Communicator& group) const;

 private:
  MetricChoice choice_;
  int64_t classes_;
  int64_t targets_per_sample_;
  // rows, top-1 hits, top-5 hits, then per class: intersection, predicted, labelled, then the
  // foreground's three.
  std::vector<int64_t> counts_;
  double abs_error_ = 0.0;
  int64_t values_ = 0;
  std::vector<float> targets_;  // per-sample regression targets, for the mean predictor
};

}  // namespace tessera::train

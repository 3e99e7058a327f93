#include "tessera/train/validation_metrics.hpp"

#include <array>
#include <cmath>
#include <limits>

#include "tessera/core/error.hpp"
#include "tessera/core/format.hpp"

namespace tessera::train {
namespace {

constexpr size_t kRows = 0, kTop1 = 1, kTop5 = 2, kFirstClass = 3;

/// Where row `row`'s label ranks among its logits: the classes with a larger logit, and those
/// with an equal one and a smaller index (the arg-max takes the first maximum, as the loss's
/// accuracy does; a model that outputs constants is then right only on class 0).
int64_t label_rank(const float* logits, int64_t classes, int64_t label) {
  const float mine = logits[label];
  int64_t rank = 0;
  for (int64_t c = 0; c < classes; ++c)
    if (logits[c] > mine || (c < label && logits[c] == mine)) ++rank;
  return rank;
}

int64_t arg_max(const float* logits, int64_t classes) {
  int64_t best = 0;
  for (int64_t c = 1; c < classes; ++c)
    if (logits[c] > logits[best]) best = c;
  return best;
}

double ratio(double num, double den) { return den > 0 ? num / den : std::numeric_limits<double>::quiet_NaN(); }

nlohmann::json json_number(double x) { return std::isnan(x) ? nlohmann::json(nullptr) : nlohmann::json(x); }

/// Mean of the defined (non-NaN) entries, NaN if there are none.
double mean_defined(const std::vector<double>& xs) {
  double sum = 0.0;
  int n = 0;
  for (double x : xs)
    if (!std::isnan(x)) {
      sum += x;
      ++n;
    }
  return n > 0 ? sum / n : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace

MetricChoice MetricChoice::from_names(const std::vector<std::string>& names, const std::string& path) {
  MetricChoice m;
  for (const std::string& name : names) {
    bool* flag = name == "accuracy" ? &m.accuracy
                 : name == "top5"   ? &m.top5
                 : name == "iou"    ? &m.iou
                 : name == "dice"   ? &m.dice
                 : name == "mae"    ? &m.mae
                                    : nullptr;
    if (flag == nullptr)
      throw ConfigError(path, "unknown metric \"" + name + "\"; expected some of: accuracy, top5, iou, dice, mae");
    if (*flag) throw ConfigError(path, "metric \"" + name + "\" is listed twice");
    *flag = true;
  }
  return m;
}

MetricChoice MetricChoice::defaults(const std::string& loss_type, bool per_voxel) {
  MetricChoice m;
  if (loss_type == "softmax_cross_entropy") {
    if (per_voxel) {
      m.iou = true;
      m.dice = true;
    } else {
      m.accuracy = true;
    }
  } else if (loss_type == "mse") {
    m.mae = true;
  }
  return m;
}

void MetricChoice::check(const std::string& loss_type, int64_t classes, const std::string& path) const {
  const bool classification = loss_type == "softmax_cross_entropy";
  for (const std::string& name : names()) {
    const bool fits = name == "mae" ? loss_type == "mse" : classification;
    if (!fits) {
      const std::string applicable = classification       ? "classification: accuracy, top5, iou, dice"
                                     : loss_type == "mse" ? "regression: mae"
                                                          : "none yet for this loss; use []";
      throw ConfigError(path, "metric \"" + name + "\" does not apply to the loss \"" + loss_type + "\" (" +
                                  applicable + ")");
    }
  }
  if (top5 && classes < 5)
    throw ConfigError(path, "metric \"top5\" needs at least 5 classes; the model outputs " + std::to_string(classes));
}

std::vector<std::string> MetricChoice::names() const {
  std::vector<std::string> out;
  if (accuracy) out.emplace_back("accuracy");
  if (top5) out.emplace_back("top5");
  if (iou) out.emplace_back("iou");
  if (dice) out.emplace_back("dice");
  if (mae) out.emplace_back("mae");
  return out;
}

void ValidationMetrics::add_to(nlohmann::json& record) const {
  if (accuracy >= 0) record["accuracy"] = accuracy;
  if (top5 >= 0) record["top5"] = top5;
  if (!iou.empty()) {
    nlohmann::json per_class = nlohmann::json::array();
    for (double x : iou) per_class.push_back(json_number(x));
    record["iou"] = per_class;
    record["mean_iou"] = json_number(mean_iou);
    record["foreground_iou"] = json_number(foreground_iou);
  }
  if (!dice.empty()) {
    nlohmann::json per_class = nlohmann::json::array();
    for (double x : dice) per_class.push_back(json_number(x));
    record["dice"] = per_class;
    record["mean_dice"] = json_number(mean_dice);
    record["foreground_dice"] = json_number(foreground_dice);
  }
  if (mae >= 0) record["mae"] = mae;
  if (baseline_mae >= 0) record["baseline_mae"] = baseline_mae;
}

std::string ValidationMetrics::str() const {
  std::string out;
  const auto add = [&out](const std::string& text) { out += (out.empty() ? "" : ", ") + text; };
  if (accuracy >= 0) add(format("accuracy %.2f%%", 100.0 * accuracy));
  if (top5 >= 0) add(format("top-5 %.2f%%", 100.0 * top5));
  if (!iou.empty()) add(format("IoU mean %.3f (foreground %.3f)", mean_iou, foreground_iou));
  if (!dice.empty()) add(format("Dice mean %.3f (foreground %.3f)", mean_dice, foreground_dice));
  if (mae >= 0) {
    add(format("MAE %.4f", mae));
    if (baseline_mae >= 0) out += format(" (predicting the mean: %.4f)", baseline_mae);
  }
  return out;
}

MetricSums::MetricSums(const MetricChoice& choice, int64_t classes, int64_t targets_per_sample)
    : choice_(choice),
      classes_(classes),
      targets_per_sample_(targets_per_sample),
      counts_(kFirstClass + 3 * static_cast<size_t>(classes > 0 ? classes + 1 : 0), 0) {}

void MetricSums::add_classification(const float* logits, const float* labels, int64_t rows) {
  const size_t fg = kFirstClass + 3 * static_cast<size_t>(classes_);
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = logits + r * classes_;
    // The loss has already refused labels that are not class indices.
    const auto label = static_cast<int64_t>(labels[r]);
    const int64_t rank = label_rank(row, classes_, label);
    counts_[kRows] += 1;
    counts_[kTop1] += rank < 1 ? 1 : 0;
    counts_[kTop5] += rank < 5 ? 1 : 0;
    if (!(choice_.iou || choice_.dice)) continue;
    const int64_t predicted = rank == 0 ? label : arg_max(row, classes_);
    const size_t p = kFirstClass + 3 * static_cast<size_t>(predicted);
    const size_t t = kFirstClass + 3 * static_cast<size_t>(label);
    counts_[p + 1] += 1;
    counts_[t + 2] += 1;
    if (predicted == label) counts_[t] += 1;
    counts_[fg + 1] += predicted != 0 ? 1 : 0;
    counts_[fg + 2] += label != 0 ? 1 : 0;
    counts_[fg] += predicted != 0 && label != 0 ? 1 : 0;
  }
}

void MetricSums::add_regression(const float* prediction, const float* target, int64_t n) {
  for (int64_t i = 0; i < n; ++i) abs_error_ += std::abs(static_cast<double>(prediction[i]) - target[i]);
  values_ += n;
  if (targets_per_sample_ > 0) targets_.insert(targets_.end(), target, target + n);
}

ValidationMetrics MetricSums::reduce(const parallel::Communicator& group) const {
  std::vector<int64_t> counts = counts_;
  group.allreduce_sum(counts.data(), static_cast<int64_t>(counts.size()));
  std::array<double, 2> error{abs_error_, static_cast<double>(values_)};
  group.allreduce_sum(error.data(), 2);

  ValidationMetrics m;
  const auto rows = static_cast<double>(counts[kRows]);
  if (choice_.accuracy && rows > 0) m.accuracy = static_cast<double>(counts[kTop1]) / rows;
  if (choice_.top5 && rows > 0) m.top5 = static_cast<double>(counts[kTop5]) / rows;
  const auto iou_of = [&counts](size_t at) {
    const auto i = static_cast<double>(counts[at]);
    return ratio(i, static_cast<double>(counts[at + 1] + counts[at + 2]) - i);
  };
  const auto dice_of = [&counts](size_t at) {
    return ratio(2.0 * static_cast<double>(counts[at]), static_cast<double>(counts[at + 1] + counts[at + 2]));
  };
  const size_t fg = kFirstClass + 3 * static_cast<size_t>(classes_);
  if (choice_.iou) {
    for (int64_t c = 0; c < classes_; ++c) m.iou.push_back(iou_of(kFirstClass + 3 * static_cast<size_t>(c)));
    m.mean_iou = mean_defined(m.iou);
    m.foreground_iou = iou_of(fg);
  }
  if (choice_.dice) {
    for (int64_t c = 0; c < classes_; ++c) m.dice.push_back(dice_of(kFirstClass + 3 * static_cast<size_t>(c)));
    m.mean_dice = mean_defined(m.dice);
    m.foreground_dice = dice_of(fg);
  }
  if (choice_.mae && error[1] > 0) {
    m.mae = error[0] / error[1];
    if (targets_per_sample_ > 0) {
      // The mean predictor needs the mean first: a second sum over the targets each rank kept.
      const auto k = static_cast<size_t>(targets_per_sample_);
      std::vector<double> mean(k, 0.0);
      for (size_t i = 0; i < targets_.size(); ++i) mean[i % k] += targets_[i];
      group.allreduce_sum(mean.data(), static_cast<int64_t>(k));
      const double samples = error[1] / static_cast<double>(k);
      for (double& x : mean) x /= samples;
      double baseline = 0.0;
      for (size_t i = 0; i < targets_.size(); ++i) baseline += std::abs(static_cast<double>(targets_[i]) - mean[i % k]);
      group.allreduce_sum(&baseline, 1);
      m.baseline_mae = baseline / error[1];
    }
  }
  return m;
}

}  // namespace tessera::train

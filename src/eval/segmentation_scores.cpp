#include "tessera/eval/segmentation_scores.hpp"

#include <cmath>
#include <string>
#include <unordered_map>

#include "tessera/core/error.hpp"

namespace tessera::eval {
namespace {

/// Σ n·log2(n) over the counts of a table: every entropy below is a difference of such sums.
template <class Map>
double sum_n_log_n(const Map& counts) {
  double s = 0.0;
  for (const auto& [key, n] : counts) s += static_cast<double>(n) * std::log2(static_cast<double>(n));
  return s;
}

/// Σ n·(n − 1): ordered pairs of distinct voxels that share a cell of the table.
template <class Map>
double pairs_together(const Map& counts) {
  double s = 0.0;
  for (const auto& [key, n] : counts) s += static_cast<double>(n) * static_cast<double>(n - 1);
  return s;
}

}  // namespace

SegmentationScores score_segmentation(const Labels& truth, const Labels& found) {
  if (truth.size() != found.size())
    throw Error("segmentation scores: the true labels have " + std::to_string(truth.size()) +
                " voxels and the segmentation " + std::to_string(found.size()));
  std::unordered_map<uint64_t, int64_t> joint;
  std::unordered_map<uint32_t, int64_t> objects, segments;
  SegmentationScores s;
  for (size_t i = 0; i < truth.size(); ++i) {
    if (truth[i] == 0) continue;
    ++joint[(static_cast<uint64_t>(truth[i]) << 32) | found[i]];
    ++objects[truth[i]];
    ++segments[found[i]];
    ++s.voxels;
  }
  if (s.voxels == 0) throw Error("segmentation scores: no voxel belongs to a true object (all true labels are 0)");
  s.true_objects = static_cast<int64_t>(objects.size());
  s.found_segments = static_cast<int64_t>(segments.size());

  // With N voxels and counts n: H(X) = log2 N − Σ n log2 n / N, and H(X|Y) = H(X,Y) − H(Y), so
  // the log2 N terms cancel.
  const double n = static_cast<double>(s.voxels);
  const double joint_term = sum_n_log_n(joint), object_term = sum_n_log_n(objects),
               segment_term = sum_n_log_n(segments);
  // Clamped at 0: the differences of nearly equal sums may round to −1e-16.
  s.vi_split = std::max(0.0, (object_term - joint_term) / n);
  s.vi_merge = std::max(0.0, (segment_term - joint_term) / n);

  const double both = pairs_together(joint), in_found = pairs_together(segments), in_truth = pairs_together(objects);
  s.rand_precision = in_found > 0 ? both / in_found : 1.0;
  s.rand_recall = in_truth > 0 ? both / in_truth : 1.0;
  const double sum = s.rand_precision + s.rand_recall;
  s.rand_error = sum > 0 ? 1.0 - 2.0 * s.rand_precision * s.rand_recall / sum : 1.0;
  return s;
}

int64_t labels_from_values(const std::vector<double>& values, Labels& ids) {
  ids.resize(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    const double v = values[i];
    if (!(v >= 0 && v <= 4294967295.0) || v != static_cast<double>(static_cast<uint32_t>(v)))
      return static_cast<int64_t>(i);
    ids[i] = static_cast<uint32_t>(v);
  }
  return -1;
}

}  // namespace tessera::eval

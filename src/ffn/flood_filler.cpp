#include "tessera/ffn/flood_filler.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <set>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/core/seconds_since.hpp"
#include "tessera/ffn/fov_moves.hpp"
#include "tessera/ffn/object_map.hpp"
#include "tessera/ffn/seed_policy.hpp"

namespace tessera::ffn {
namespace {

/// The box [lo, hi] (inclusive) the FOVs of one object covered.
struct Bounds {
  Voxel lo{INT64_MAX, INT64_MAX, INT64_MAX}, hi{-1, -1, -1};
  void add(const Voxel& centre, const std::array<int64_t, 3>& radius) {
    for (size_t a = 0; a < 3; ++a) {
      lo[a] = std::min(lo[a], centre[a] - radius[a]);
      hi[a] = std::max(hi[a], centre[a] + radius[a]);
    }
  }
};

/// The runs of one seed: the network's FOVs over the map until no move is left.
class ObjectTrace {
 public:
  ObjectTrace(model::Model& model, const LabeledVolume& volume, const FfnOptions& options, ObjectMap& map)
      : model_(model),
        volume_(volume),
        options_(options),
        map_(map),
        fov_(options.fov_voxels()),
        inputs_(Shape{1, options.fov[0], options.fov[1], options.fov[2], 2}, "tessera::ffn_fov"),
        host_(static_cast<size_t>(fov_ * 2)),
        logits_(static_cast<size_t>(fov_)) {}

  /// Grows the object of `seed`; returns the FOVs it took and where they lay.
  int64_t grow(const Voxel& seed, int64_t max_fovs, Bounds& bounds) {
    map_.reset();
    map_.set_seed(seed);
    std::deque<Voxel> queue{inward(seed)};
    std::set<Voxel> visited{queue.front()};
    int64_t fovs = 0;
    const float strong = logit(options_.move_threshold);
    while (!queue.empty() && fovs < max_fovs) {
      const Voxel centre = queue.front();
      queue.pop_front();
      predict(centre);
      bounds.add(centre, options_.radius());
      ++fovs;
      // The reference's early end: a seed the network no longer believes in (a membrane, or an
      // object that drifted away from it) is not followed further.
      if (map_.at(seed) < strong) break;
      for (const FovMove& m :
           face_max_moves_of_logits(logits_.data(), options_.fov, options_.delta, options_.move_threshold)) {
        const Voxel next{centre[0] + m.offset[0], centre[1] + m.offset[1], centre[2] + m.offset[2]};
        if (map_.holds_fov(next, options_.fov) && visited.insert(next).second) queue.push_back(next);
      }
    }
    return fovs;
  }

 private:
  /// `v` moved the least so that its FOV lies inside the volume.
  Voxel inward(const Voxel& v) const {
    const auto r = options_.radius();
    Voxel c = v;
    for (size_t a = 0; a < 3; ++a) c[a] = std::clamp(v[a], r[a], volume_.size[a] - 1 - r[a]);
    return c;
  }

  void predict(const Voxel& centre) {
    crop_image(volume_, centre, options_.fov, host_.data(), 2);
    map_.crop(centre, options_.fov, host_.data() + 1, 2);
    inputs_.copy_from_host(host_);
    const Tensor& out = model_.forward(inputs_, {layers::Mode::inference, 0, 1});
    logits_ = out.to_host();
    if (static_cast<int64_t>(logits_.size()) != fov_)
      throw ShapeError("FFN inference: the model's output " + out.shape().str() + " is not one logit per FOV voxel");
    map_.paste(centre, options_.fov, logits_.data());
  }

  model::Model& model_;
  const LabeledVolume& volume_;
  const FfnOptions& options_;
  ObjectMap& map_;
  int64_t fov_;
  Tensor inputs_;
  std::vector<float> host_, logits_;  // the FOV's inputs, and the last prediction
};

}  // namespace

FloodFiller::FloodFiller(model::Model& model, const FfnOptions& options, const FloodFillOptions& fill)
    : model_(model), options_(options), fill_(fill) {
  check_ffn_model(model, options);
  if (fill.seed_spacing < 1) throw ConfigError("--seed-spacing", "must be at least 1");
  if (fill.seed_order != "grid" && fill.seed_order != "interior")
    throw ConfigError("--seed-order", "expected grid or interior, got " + fill.seed_order);
}

FloodFillResult FloodFiller::segment(const LabeledVolume& volume) {
  for (size_t a = 0; a < 3; ++a)
    if (volume.size[a] < options_.fov[a])
      throw ConfigError("$.ffn.fov", "the volume is smaller than the FOV along axis " + std::to_string(a));
  const auto start = std::chrono::steady_clock::now();
  FloodFillResult r;
  r.ids.assign(static_cast<size_t>(volume.voxels()), 0);
  ObjectMap map({0, 0, 0}, volume.size);
  ObjectTrace trace(model_, volume, options_, map);
  const float claim = logit(options_.segment_threshold);
  uint32_t next_id = 1;
  const std::vector<Voxel> seeds = fill_.seed_order == "grid" ? grid_seeds(volume.size, fill_.seed_spacing)
                                                              : interior_seeds(volume, fill_.seed_spacing, fill_.dark);
  for (const Voxel& seed : seeds) {
    if (r.ids[static_cast<size_t>(volume.index(seed))] != 0) continue;
    ++r.seeds_tried;
    Bounds bounds;
    r.fovs += trace.grow(seed, fill_.max_fovs, bounds);
    if (map.at(seed) < claim) {
      ++r.seeds_failed;
      continue;
    }
    // Consolidation: the free voxels the object reached.
    std::vector<int64_t> claimed;
    for (int64_t z = bounds.lo[0]; z <= bounds.hi[0]; ++z)
      for (int64_t y = bounds.lo[1]; y <= bounds.hi[1]; ++y)
        for (int64_t x = bounds.lo[2]; x <= bounds.hi[2]; ++x) {
          const int64_t i = volume.index({z, y, x});
          if (r.ids[static_cast<size_t>(i)] == 0 && map.logits()[static_cast<size_t>(i)] >= claim) claimed.push_back(i);
        }
    if (static_cast<int64_t>(claimed.size()) < fill_.min_voxels) {
      ++r.too_small;
      continue;
    }
    for (const int64_t i : claimed) r.ids[static_cast<size_t>(i)] = next_id;
    ++next_id;
    ++r.objects;
  }
  r.seconds = seconds_since(start);
  return r;
}

}  // namespace tessera::ffn

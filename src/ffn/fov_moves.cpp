#include "tessera/ffn/fov_moves.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "tessera/core/error.hpp"

namespace tessera::ffn {
namespace {

std::string triple(const std::array<int64_t, 3>& v) {
  return std::to_string(v[0]) + "x" + std::to_string(v[1]) + "x" + std::to_string(v[2]);
}

void check(const std::vector<float>& probability, const std::array<int64_t, 3>& fov,
           const std::array<int64_t, 3>& delta) {
  if (static_cast<int64_t>(probability.size()) != fov[0] * fov[1] * fov[2])
    throw Error("FOV moves: a map of " + std::to_string(probability.size()) + " values is not a " + triple(fov) +
                " field of view");
  for (size_t a = 0; a < 3; ++a)
    if (delta[a] < 0 || 2 * delta[a] > fov[a] - 1)
      throw Error("FOV moves: a step of " + triple(delta) + " voxels reaches outside a " + triple(fov) +
                  " field of view (each step at most (size − 1)/2)");
}

}  // namespace

std::vector<FovMove> face_max_moves(const std::vector<float>& probability, const std::array<int64_t, 3>& fov,
                                    const std::array<int64_t, 3>& delta, float threshold) {
  check(probability, fov, delta);
  const std::array<int64_t, 3> centre{fov[0] / 2, fov[1] / 2, fov[2] / 2};
  // Squared distance from the face's centre, within the face (the axis term is the same for all).
  auto off_centre = [&](const std::array<int64_t, 3>& p) {
    int64_t d2 = 0;
    for (size_t k = 0; k < 3; ++k) d2 += (p[k] - centre[k]) * (p[k] - centre[k]);
    return d2;
  };
  auto at = [&](const std::array<int64_t, 3>& p) {
    return probability[static_cast<size_t>((p[0] * fov[1] + p[1]) * fov[2] + p[2])];
  };
  std::vector<FovMove> moves;
  for (size_t axis = 0; axis < 3; ++axis) {
    if (delta[axis] == 0) continue;
    for (const int64_t step : {-delta[axis], delta[axis]}) {
      // The face: the plane centre ± δ along `axis`, centre ± δ on the others; visited in
      // row-major order; of equal highest, the one nearest the face's centre wins, then the first.
      FovMove best;
      bool any = false;
      int64_t off_centre_best = 0;
      std::array<int64_t, 3> p{};
      std::array<int64_t, 3> lo{}, hi{};
      for (size_t k = 0; k < 3; ++k) {
        lo[k] = k == axis ? centre[k] + step : centre[k] - delta[k];
        hi[k] = k == axis ? centre[k] + step : centre[k] + delta[k];
      }
      for (p[0] = lo[0]; p[0] <= hi[0]; ++p[0])
        for (p[1] = lo[1]; p[1] <= hi[1]; ++p[1])
          for (p[2] = lo[2]; p[2] <= hi[2]; ++p[2])
            if (!any || at(p) > best.score || (at(p) == best.score && off_centre(p) < off_centre_best)) {
              any = true;
              best.score = at(p);
              off_centre_best = off_centre(p);
              for (size_t k = 0; k < 3; ++k) best.offset[k] = p[k] - centre[k];
            }
      if (best.score >= threshold) moves.push_back(best);
    }
  }
  std::stable_sort(moves.begin(), moves.end(), [](const FovMove& a, const FovMove& b) { return a.score > b.score; });
  return moves;
}

std::vector<FovMove> face_max_moves_of_logits(const float* logits, const std::array<int64_t, 3>& fov,
                                              const std::array<int64_t, 3>& delta, float threshold) {
  std::vector<float> probability(static_cast<size_t>(fov[0] * fov[1] * fov[2]));
  for (size_t i = 0; i < probability.size(); ++i) probability[i] = 1.0f / (1.0f + std::exp(-logits[i]));
  return face_max_moves(probability, fov, delta, threshold);
}

}  // namespace tessera::ffn

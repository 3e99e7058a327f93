#include "tessera/ffn/ffn_options.hpp"

#include <cmath>
#include <string>

#include "tessera/core/error.hpp"
#include "tessera/model/model.hpp"

namespace tessera::ffn {

std::array<int64_t, 3> FfnOptions::training_reach() const {
  const auto r = radius();
  return {r[0] + fov_moves * delta[0], r[1] + fov_moves * delta[1], r[2] + fov_moves * delta[2]};
}

FfnOptions FfnOptions::from_json(ConfigObject& cfg) {
  FfnOptions o;
  o.fov = cfg.spatial("fov", 3, 33, 3, 1);
  for (size_t a = 0; a < 3; ++a)
    if (o.fov[a] % 2 == 0)
      throw ConfigError(cfg.path_of("fov"),
                        "each side must be odd, so that the FOV has a centre voxel; got " + std::to_string(o.fov[a]));
  o.delta = cfg.spatial("delta", 3, 8, 1, 1);
  for (size_t a = 0; a < 3; ++a)
    if (2 * o.delta[a] > o.fov[a] - 1)
      throw ConfigError(cfg.path_of("delta"), "a move of " + std::to_string(o.delta[a]) +
                                                  " voxels leaves the FOV's face outside a side of " +
                                                  std::to_string(o.fov[a]) + " (at most (side − 1)/2)");
  o.fov_moves = cfg.integer_in("fov_moves", 0, 64, 1);
  o.move_threshold = static_cast<float>(cfg.number_in("move_threshold", 0.5, 0.999, 0.9));
  o.segment_threshold = static_cast<float>(cfg.number_in("segment_threshold", 0.5, 0.999, 0.6));
  cfg.finish();
  return o;
}

void check_ffn_model(const model::Model& model, const FfnOptions& o) {
  const auto& f = o.fov;
  const Shape in = model.sample_shape(), out = model.output_shape(1);
  const std::string fov = std::to_string(f[0]) + "x" + std::to_string(f[1]) + "x" + std::to_string(f[2]);
  if (in != Shape{f[0], f[1], f[2], 2})
    throw ConfigError("$.model.input", "an FFN with a " + fov + " FOV reads [" + std::to_string(f[0]) + ", " +
                                           std::to_string(f[1]) + ", " + std::to_string(f[2]) +
                                           ", 2] (the image and the object map); the model's input is " + in.str() +
                                           ": set \"size\" to $.ffn.fov and \"channels\" to 2");
  if (out != Shape{1, f[0], f[1], f[2], 1})
    throw ConfigError("$.model.layers", "an FFN gives one object logit per voxel of its " + fov +
                                            " FOV; the model's output per sample is " + out.str() +
                                            " (end with a 1-filter convolution keeping the size)");
}

float logit(float probability) { return std::log(probability / (1.0f - probability)); }

}  // namespace tessera::ffn

#include "tessera/train/batch_domain_check.hpp"

#include "tessera/backends/kokkos/arithmetic_kernels.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/format.hpp"
#include "tessera/core/profiling.hpp"

namespace tessera::train {
namespace {

/// The spread of `x` where a domain is checked on it (one pass, which also counts the values
/// that are not finite), else that count alone.
kokkos_backend::ValueSpread spread_of(const Tensor& x, bool domain) {
  if (x.numel() == 0) return {};
  if (domain) return kokkos_backend::value_spread(x);
  kokkos_backend::ValueSpread s;
  s.nonfinite = kokkos_backend::count_nonfinite(x);
  return s;
}

/// Why finite values spread as `s` lie outside `domain` ("holds values from -0.5 to 3"), or "".
std::string outside(const kokkos_backend::ValueSpread& s, const layers::ValueDomain& domain) {
  if (domain.whole_numbers && s.fractional > 0)
    return format("holds %lld value(s) that are not whole numbers (values from %g to %g)",
                  static_cast<long long>(s.fractional), s.min, s.max);
  if (s.min < domain.min || s.max > domain.max) return format("holds values from %g to %g", s.min, s.max);
  return "";
}

}  // namespace

BatchDomainCheck::BatchDomainCheck(const model::Model& model, const layers::Loss& loss, const Shape& prediction,
                                   std::string loss_key)
    : inputs_(model.input_domains()),
      targets_(loss.target_domain(prediction)),
      loss_type_(loss.type()),
      loss_key_(std::move(loss_key)) {}

void BatchDomainCheck::check(const Tensor& inputs, const Tensor& targets,
                             const std::function<std::string()>& batch) const {
  // Its own region, so `--profile` shows what the check costs a step.
  const ProfileRegion region("domain check");
  // Whatever the layers admit, a value that is not finite is a broken file, not data: refused
  // here by name rather than as a diverged loss that blames the learning rate.
  const kokkos_backend::ValueSpread in = spread_of(inputs, !inputs_.empty());
  const kokkos_backend::ValueSpread out = spread_of(targets, targets_.has_value());
  if (in.nonfinite > 0 || out.nonfinite > 0)
    throw ConfigError("$.data",
                      batch() + format(" holds %lld input and %lld target value(s) that are NaN or infinite",
                                       static_cast<long long>(in.nonfinite), static_cast<long long>(out.nonfinite)));
  for (const auto& layer : inputs_)
    if (const std::string problem = inputs.numel() > 0 ? outside(in, layer.domain) : ""; !problem.empty())
      throw ConfigError(
          layer.path,
          "layer '" + layer.name + "' (" + layer.type + ") takes input " + layer.domain.text() + ", but " + batch() +
              " " + problem +
              "; scale the data into that range (the data section's \"normalize\": {\"mean\": its least value, "
              "\"std\": its largest minus its least})");
  if (targets_)
    if (const std::string problem = targets.numel() > 0 ? outside(out, *targets_) : ""; !problem.empty())
      throw ConfigError(
          loss_key_, loss_type_ + " takes targets that are " + targets_->text() + ", but " + batch() + " " + problem);
}

}  // namespace tessera::train

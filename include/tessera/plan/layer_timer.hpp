#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tessera/core/shape.hpp"
#include "tessera/layers/layer.hpp"
#include "tessera/parallel/communicator.hpp"
#include "tessera/parallel/process_grid.hpp"
#include "tessera/plan/machine_profile.hpp"
#include "tessera/plan/plan_graph.hpp"

namespace tessera::plan {

/// What a layer computes on one rank: its inputs' blocks, and the share of its output channels
/// it computes (a filter split computes 1/parts of them from whole inputs).
struct LocalWork {
  std::vector<Shape> inputs;
  int64_t output_channel_parts = 1;
  /// Whether backward computes the inputs' gradients (not for a layer reading the model
  /// input, whose gradient training never needs).
  bool input_gradient = true;
};

/// Measures layers' forward and backward times on local shapes, once each: a layer is made
/// again from its spec entry (with its output channels divided for a filter split), set up on
/// this rank alone and run on random data, and its median times are kept in the profile's
/// layer_times under a key of backend, threads, type, keys and shapes, so a plan for another
/// model measures only what is new. The backward pass computes every input gradient, as for
/// every layer but the first in training. A published profile's layers are estimated by their
/// roofline instead, since its machine is not at hand.
class LayerTimer {
 public:
  /// `backend` is the op backend choice the model runs with ("auto", "onednn", ...);
  /// `threads` the threads each rank runs with. Every rank of `measuring` times the same
  /// layers at the same moments (a barrier before each), so the node is as busy as when those
  /// ranks train: two ranks sharing a node's memory and caches run a layer up to a fifth
  /// slower than one rank alone. Threads and the ranks measuring are part of the key.
  LayerTimer(MachineProfile& profile, std::string backend, int64_t threads,
             parallel::Communicator measuring = parallel::Communicator());

  /// The cache key of a layer's work.
  std::string key(const PlanNode& node, const LocalWork& work) const;
  /// Cached, or measured now (and cached). Throws ConfigError naming the layer when the
  /// layer cannot be made for the local shapes.
  LayerTime time(const PlanNode& node, const LocalWork& work);
  /// The same for the layer the fusion pass makes of convolution `conv` and the max pool
  /// `pool` reading it (one layer that pools each slab of the convolution's output as it is
  /// computed), on the convolution's local work.
  LayerTime time_fused(const PlanNode& conv, const PlanNode& pool, const LocalWork& work);
  /// Seconds of one step of the optimizer `optimizer` (a run config's "optimizer" section)
  /// over `elements` parameters, cached the same way (a published profile: the bandwidth the
  /// update's reads and writes need).
  double optimizer_step(const nlohmann::json& optimizer, int64_t elements, double state_per_element);
  /// Whether layers under `d` are measured as they run, split over the measuring ranks with
  /// their real exchanges (halos, channel groups, statistics): when those ranks are exactly
  /// the distribution's, and it splits space or channels.
  bool measures_distributed(const parallel::Distribution& d) const;
  /// The layer under `d` on the measuring ranks (a grid made of them), its exchanges included;
  /// `local_inputs` are this rank's input blocks. Collective over the measuring ranks.
  LayerTime time_distributed(const PlanNode& node, const parallel::Distribution& d,
                             const std::vector<Shape>& local_inputs, bool input_gradient);
  /// Seconds of an allreduce of `bytes` travelling in `type` (fp32, or bf16 rounded from an
  /// fp32 buffer) over the measuring ranks, as the gradients' sum runs: in buckets of at most
  /// `bucket_bytes` (0: one), all started, then waited for (cached). Collective over them.
  double allreduce_seconds(int64_t bytes, ElementType type = ElementType::fp32, int64_t bucket_bytes = 0);
  /// Ranks timing together.
  int measuring_ranks() const { return measuring_.size(); }
  /// Whether a time is cached.
  bool cached(const PlanNode& node, const LocalWork& work) const;
  /// Layers measured by this timer (not found in the profile).
  int64_t measured() const { return measured_; }
  /// Called before each measurement with the layer's name and shapes (progress output).
  std::function<void(const std::string&)> on_measure;

  /// Timed repetitions per direction (the median is kept), after one untimed warm-up.
  int repetitions = 5;

 private:
  /// Times a layer set up on `grid` (a grid of one rank for the serial measurements) with its
  /// local input blocks `work.inputs`; `global_inputs` are the whole shapes (empty: the same).
  /// The layer computes in `type` (its inputs and outputs are of it).
  LayerTime measure(const std::string& where, const std::function<std::unique_ptr<layers::Layer>()>& make,
                    const LocalWork& work, const std::string& backend, const parallel::ProcessGrid& grid,
                    const std::vector<Shape>& global_inputs, ElementType type) const;
  LayerTime cached_or_measured(const std::string& key, const std::string& label, const PlanNode& node,
                               const std::function<std::unique_ptr<layers::Layer>()>& make, const LocalWork& work);
  /// For a published profile (a machine not at hand): the roofline of the layer's arithmetic
  /// at the profile's convolution rate and of its tensors at its bandwidth.
  LayerTime roofline(const PlanNode& node, const LocalWork& work) const;
  MachineProfile& profile_;
  std::string backend_;
  int64_t threads_;
  parallel::Communicator measuring_;
  int64_t measured_ = 0;
};

}  // namespace tessera::plan

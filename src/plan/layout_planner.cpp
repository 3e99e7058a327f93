#include "tessera/plan/layout_planner.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

#include "tessera/core/error.hpp"
#include "tessera/core/format.hpp"
#include "tessera/core/memory_capacity.hpp"
#include "tessera/model/graph.hpp"
#include "tessera/plan/layout_search.hpp"
#include "plan_setup.hpp"

namespace tessera::plan {
namespace {

/// A layout the loss cannot take (the per-voxel output in another distribution than the
/// input, or per-sample outputs whose samples do not line up with the targets'), or an
/// activation moved after its pool in another distribution.
constexpr double kRefused = kRefusedSeconds;

bool output_fits_targets(const PlanGraph& g, const parallel::Distribution& input, const parallel::Distribution& last) {
  if (g.per_voxel_output()) return input == last;
  return last.sample % input.sample == 0;
}

std::string ms(double seconds) { return fixed(seconds * 1e3, 1); }

std::string mib(double bytes) { return fixed(bytes / (1024.0 * 1024.0), 0); }

/// With many ranks a layer has thousands of distributions (every factorisation over five
/// axes) and the search's edges grow with their square: past `kept`, a layer keeps its
/// kept/3·2 fastest and kept/3 smallest candidates, data parallelism, and those its inputs
/// kept. The search stays exact over what is kept; below `kept` candidates nothing is dropped.
/// The planner starts at kKept and keeps fewer only where skip connections leave too many
/// combinations of live outputs for the exact search (SearchTooLarge).
constexpr size_t kKept = 24;

void keep_promising(std::vector<parallel::Distribution>& candidates, std::vector<std::pair<double, double>>& cost,
                    int ranks, const std::vector<parallel::Distribution>& inputs_kept, size_t kept) {
  if (candidates.size() <= kept) return;
  std::vector<size_t> by_time(candidates.size()), by_memory;
  for (size_t k = 0; k < by_time.size(); ++k) by_time[k] = k;
  by_memory = by_time;
  std::stable_sort(by_time.begin(), by_time.end(), [&](size_t a, size_t b) { return cost[a].first < cost[b].first; });
  std::stable_sort(by_memory.begin(), by_memory.end(),
                   [&](size_t a, size_t b) { return cost[a].second < cost[b].second; });
  std::vector<char> keep(candidates.size(), 0);
  for (size_t k = 0; k < kept / 3 * 2; ++k) keep[by_time[k]] = 1;
  for (size_t k = 0; k < kept / 3; ++k) keep[by_memory[k]] = 1;
  parallel::Distribution data_parallel;
  data_parallel.sample = ranks;
  std::vector<parallel::Distribution> kept_candidates;
  std::vector<std::pair<double, double>> kept_cost;
  for (size_t k = 0; k < candidates.size(); ++k)
    // Whatever an input kept stays possible here without a move, so a layout exists that
    // needs no redistribution the model cannot make (features move only between some splits).
    if (keep[k] || candidates[k] == data_parallel ||
        std::find(inputs_kept.begin(), inputs_kept.end(), candidates[k]) != inputs_kept.end()) {
      kept_candidates.push_back(candidates[k]);
      kept_cost.push_back(cost[k]);
    }
  candidates = std::move(kept_candidates);
  cost = std::move(kept_cost);
}

parallel::Distribution uniform(int ranks, const std::string& axis) {
  parallel::Distribution d;
  if (axis == "sample") d.sample = ranks;
  if (axis == "depth") d.depth = ranks;
  if (axis == "height") d.height = ranks;
  return d;
}

}  // namespace

namespace {

/// Why the model cannot run `distributions` (per node of the graph): a layer that refuses its
/// own, a move between layers it cannot make, or an output the loss cannot take; none when
/// it can.
std::optional<std::string> layout_refusal(LayerCostModel& costs,
                                          const std::vector<parallel::Distribution>& distributions) {
  const PlanGraph& g = costs.graph();
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (auto why = costs.refusal(i, distributions[i]))
      return "layer '" + g.nodes[i].name + "' (" + g.nodes[i].type + "): " + *why;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (size_t k = 0; k < g.nodes[i].inputs.size(); ++k) {
      const int in = g.nodes[i].inputs[k];
      if (in == model::Graph::kModelInput) continue;
      if (auto why = costs.edge_refusal(i, k, distributions[static_cast<size_t>(in)], distributions[i]))
        return "layer '" + g.nodes[i].name + "': " + *why;
    }
  if (!output_fits_targets(g, distributions.front(), distributions.back()))
    return std::string(g.per_voxel_output() ? "the per-voxel output must keep the input's distribution"
                                            : "the output's sample split must be a multiple of the input's");
  return std::nullopt;
}

}  // namespace

LayoutPrediction predict_layout(LayerCostModel& costs, const std::vector<parallel::Distribution>& given,
                                const std::string& label, double base_memory, double memory_limit) {
  const PlanGraph& g = costs.graph();
  LayoutPrediction p;
  p.label = label;
  // An activation moved after its pool runs in the pool's distribution: the graph moves it
  // only then (otherwise it costs about the same before the pool).
  std::vector<parallel::Distribution> distributions = given;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (g.nodes[i].follows_input) distributions[i] = distributions[static_cast<size_t>(g.nodes[i].inputs[0])];
  p.memory = base_memory + costs.base_memory(distributions.at(0));
  if (auto why = layout_refusal(costs, distributions)) {
    p.valid = false;
    p.why = *why;
    return p;
  }
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const PlanNode& n = g.nodes[i];
    PlannedLayer l;
    l.name = n.name;
    l.type = n.type;
    l.distribution = distributions[i];
    l.cost = costs.layer_cost(i, distributions[i]);
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const int in = n.inputs[k];
      const parallel::Distribution& from =
          in == model::Graph::kModelInput ? distributions.front() : distributions[static_cast<size_t>(in)];
      const EdgeCost e = costs.edge_cost(i, k, from, distributions[i]);
      // A fused convolution and pool: the time the fusion changes is compute.
      const double fusion = costs.fuses(i, from, distributions[i]) ? costs.fusion_seconds(i, from) : 0.0;
      l.fusion += fusion;
      l.redistribution += e.time - fusion;
      l.redistribution_memory += e.memory;
    }
    p.compute += l.cost.compute + l.cost.update + l.fusion;
    p.communication += l.cost.communication() + l.redistribution;
    p.memory += l.cost.memory + l.redistribution_memory;
    p.layers.push_back(std::move(l));
  }
  p.step_time = p.compute + p.communication;
  p.fits = memory_limit <= 0 || p.memory <= memory_limit;
  return p;
}

std::vector<parallel::Distribution> layout_of(const model::ModelSpec& spec, const PlanGraph& graph, int ranks) {
  parallel::Distribution data_parallel;
  data_parallel.sample = ranks;
  const parallel::Distribution model_default = spec.distribution.value_or(data_parallel);
  std::map<std::string, parallel::Distribution> of;
  for (const auto& l : spec.layers) of[l.name] = l.distribution.value_or(model_default);
  std::vector<parallel::Distribution> out;
  for (const auto& n : graph.nodes) out.push_back(of.at(n.name));
  return out;
}

LayoutPrediction predict_model(const model::ModelSpec& spec, const PlanRequest& request, MachineProfile& profile) {
  PlanSetup s(spec, request, profile);
  return predict_layout(s.costs, layout_of(spec, s.graph, request.ranks), "given", s.base, s.limit);
}

namespace {

/// The exact search over the planner's candidates: every layer's distributions priced once,
/// the most promising kept of them (keep_promising), and the SearchProblem search_layout
/// solves over what is kept. Its problem's edge function refers to this object: not copyable.
class CandidateSearch {
 public:
  CandidateSearch(PlanSetup& s, int ranks) : s_(s), g_(s.graph), ranks_(ranks) { price(); }
  CandidateSearch(const CandidateSearch&) = delete;
  CandidateSearch& operator=(const CandidateSearch&) = delete;

  /// Layer × distribution pairs weighed.
  int64_t weighed() const { return weighed_; }
  /// The fastest layout regardless of memory (one label per state: quick), over kKept
  /// candidates a layer, or fewer where skip connections leave too many combinations (the
  /// count kept goes into `kept`).
  SearchResult fastest(size_t& kept);
  /// The fastest layout within `limit` bytes per rank, over the candidates fastest() kept.
  SearchResult within(double limit);
  /// The distributions `found` chose.
  std::vector<parallel::Distribution> layout(const SearchResult& found) const;

 private:
  void price();
  void keep(size_t kept);
  EdgeCost edge(int producer, int consumer, int a, int b) const;

  PlanSetup& s_;
  const PlanGraph& g_;
  int ranks_;
  int64_t weighed_ = 0;
  std::vector<std::vector<parallel::Distribution>> all_, candidates_;
  std::vector<std::vector<std::pair<double, double>>> all_costs_;  // time, memory per candidate
  SearchProblem problem_;
};

void CandidateSearch::price() {
  const size_t n = g_.nodes.size();
  all_.resize(n);
  all_costs_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    all_[i] = s_.costs.candidates(i);
    if (all_[i].empty()) {
      const auto why = s_.costs.refusal(i, uniform(ranks_, "sample"));
      throw ConfigError("layer '" + g_.nodes[i].name + "' (" + g_.nodes[i].type + ")",
                        "runs under no distribution of " + std::to_string(ranks_) + " ranks (data parallel: " +
                            why.value_or("?") + "); choose a rank count and batch size that divide its shapes");
    }
    for (const auto& d : all_[i]) {
      const LayerCost c = s_.costs.layer_cost(i, d);
      // The model input's block is held under the first layer's distribution.
      all_costs_[i].emplace_back(c.time(), c.memory + (i == 0 ? s_.costs.base_memory(d) : 0.0));
      ++weighed_;
    }
  }
  problem_.edge = [this](int producer, int consumer, int a, int b) { return edge(producer, consumer, a, b); };
  problem_.base_memory = s_.base;
}

void CandidateSearch::keep(size_t kept) {
  candidates_ = all_;
  problem_.nodes.clear();
  for (size_t i = 0; i < g_.nodes.size(); ++i) {
    auto cost = all_costs_[i];
    std::vector<parallel::Distribution> inputs_kept;
    for (int in : g_.nodes[i].inputs)
      if (in != model::Graph::kModelInput)
        inputs_kept.insert(inputs_kept.end(), candidates_[static_cast<size_t>(in)].begin(),
                           candidates_[static_cast<size_t>(in)].end());
    keep_promising(candidates_[i], cost, ranks_, inputs_kept, kept);
    SearchNode node;
    node.inputs = g_.nodes[i].inputs;
    for (const auto& [time, memory] : cost) {
      node.time.push_back(time);
      node.memory.push_back(memory);
    }
    problem_.nodes.push_back(std::move(node));
  }
  // The loss ties the output's distribution to the input's (the first layer's): an edge.
  if (g_.nodes.size() > 1) problem_.nodes.back().inputs.push_back(0);
}

EdgeCost CandidateSearch::edge(int producer, int consumer, int a, int b) const {
  EdgeCost e;
  const int last = static_cast<int>(g_.nodes.size()) - 1;
  if (last > 0 && consumer == last && producer == 0 &&
      problem_.nodes.back().inputs.size() > g_.nodes.back().inputs.size()) {
    // Only the extra edge reads node 0 here unless the last layer reads it too.
    bool real = false;
    for (int in : g_.nodes.back().inputs) real |= in == 0;
    if (!real) {
      if (!output_fits_targets(g_, candidates_[0][static_cast<size_t>(a)], candidates_.back()[static_cast<size_t>(b)]))
        e.time = kRefused, e.memory = kRefusedBytes;
      return e;
    }
  }
  if (producer == SearchProblem::kInput) return e;  // the input is read in the first layer's layout
  if (g_.nodes[static_cast<size_t>(consumer)].follows_input && a != b) {
    e.time = kRefused, e.memory = kRefusedBytes;
    return e;
  }
  const auto& from = candidates_[static_cast<size_t>(producer)][static_cast<size_t>(a)];
  const auto& to = candidates_[static_cast<size_t>(consumer)][static_cast<size_t>(b)];
  const auto& ins = g_.nodes[static_cast<size_t>(consumer)].inputs;
  for (size_t k = 0; k < ins.size(); ++k)
    if (ins[k] == producer) return s_.costs.edge_cost(static_cast<size_t>(consumer), k, from, to);
  return e;
}

SearchResult CandidateSearch::fastest(size_t& kept) {
  for (kept = kKept;; kept /= 2) {
    keep(kept);
    problem_.memory_limit = std::numeric_limits<double>::infinity();
    try {
      return search_layout(problem_);
    } catch (const SearchTooLarge&) {
      if (kept <= 3) throw;
    }
  }
}

SearchResult CandidateSearch::within(double limit) {
  problem_.memory_limit = limit;
  return search_layout(problem_);
}

std::vector<parallel::Distribution> CandidateSearch::layout(const SearchResult& found) const {
  std::vector<parallel::Distribution> chosen;
  for (size_t i = 0; i < g_.nodes.size(); ++i) chosen.push_back(candidates_[i][static_cast<size_t>(found.choice[i])]);
  return chosen;
}

/// Even the best layout the search found makes a move the model cannot make: the chosen
/// layout says which, and what usually helps (a larger batch gives the sample axis room).
void explain_no_layout(Plan& plan) {
  const std::string nearest =
      plan.chosen.valid ? "the loss cannot take the output in the distribution it would have" : plan.chosen.why;
  plan.chosen.valid = false;
  plan.chosen.why = "no layout of " + std::to_string(plan.ranks) + " ranks with global batch " +
                    std::to_string(plan.batch) +
                    " runs every layer and every move between them (the nearest: " + nearest +
                    "); plan for fewer ranks or a larger batch";
}

/// The uniform layouts the plan is shown beside: data parallelism, and a spatial split of the
/// first spatial axis.
void add_references(Plan& plan, PlanSetup& s) {
  const PlanGraph& g = s.graph;
  const int spatial_axes = g.sample_shape.rank() == 4 ? 3 : g.sample_shape.rank() == 3 ? 2 : 0;
  std::vector<std::pair<std::string, std::string>> refs{{"data parallel", "sample"}};
  if (spatial_axes == 3) refs.emplace_back("spatial (depth)", "depth");
  if (spatial_axes == 2) refs.emplace_back("spatial (height)", "height");
  for (const auto& [label, axis] : refs) {
    const std::vector<parallel::Distribution> layout(g.nodes.size(), uniform(plan.ranks, axis));
    plan.references.push_back(predict_layout(s.costs, layout, label, s.base, s.limit));
  }
}

/// Data parallelism (the first reference) replaces a chosen layout predicted less than
/// `min_gain` faster: below the model's error a layout change is a guess.
void prefer_data_parallel(Plan& plan, double min_gain) {
  const LayoutPrediction& data_parallel = plan.references.front();
  plan.min_gain = min_gain;
  const auto is_data_parallel = [&](const LayoutPrediction& p) {
    return std::all_of(p.layers.begin(), p.layers.end(),
                       [&](const PlannedLayer& l) { return l.distribution == uniform(plan.ranks, "sample"); });
  };
  if (plan.feasible && plan.chosen.valid && !is_data_parallel(plan.chosen) && data_parallel.valid &&
      data_parallel.fits && data_parallel.step_time < kRefused &&
      plan.chosen.step_time > data_parallel.step_time * (1 - min_gain)) {
    plan.fastest_found = plan.chosen.step_time;
    plan.chosen = data_parallel;
    plan.chosen.label = "planned";
  }
}

/// The planner's search over `s`, whose costs share the batch as they were told.
Plan search_plan(PlanSetup& s, const PlanRequest& request) {
  Plan plan;
  plan.ranks = request.ranks;
  plan.batch = request.batch;
  plan.memory_limit = s.limit;
  CandidateSearch search(s, request.ranks);
  plan.candidates = search.weighed();
  // The fastest layout regardless of memory first; only when it does not fit, the search under
  // the limit, which keeps every (time, memory) trade-off. A refused move in the fastest layout
  // means that none of the kept candidates gives a layout that can run at all: weighing memory
  // would not change that.
  SearchResult found = search.fastest(plan.kept);
  if (s.limit > 0 && found.memory > s.limit && found.time < kRefused) found = search.within(s.limit);
  plan.chosen = predict_layout(s.costs, search.layout(found), "planned", s.base, s.limit);
  plan.feasible = found.feasible && found.time < kRefused;
  if (found.time >= kRefused) explain_no_layout(plan);
  add_references(plan, s);
  prefer_data_parallel(plan, request.min_gain);
  plan.measured = s.timer.measured();
  return plan;
}

}  // namespace

Plan plan_model(const model::ModelSpec& spec, const PlanRequest& request, MachineProfile& profile) {
  PlanSetup s(spec, request, profile);
  Plan even = search_plan(s, request);
  const std::vector<double> speeds = profile.rank_speeds(request.ranks);
  if (std::all_of(speeds.begin(), speeds.end(), [&](double v) { return v == speeds.front(); })) return even;
  // Nodes of different speeds: the same search with the batch shared in proportion to them,
  // taken where it is predicted faster by the same margin a layout change needs. The layer
  // times and the optimizer's and all-reduce's measurements serve both searches.
  const std::vector<int64_t> weights = parallel::weights_of_speeds(speeds);
  s.costs.set_share_weights(weights);
  Plan balanced = search_plan(s, request);
  if (!balanced.feasible || !balanced.chosen.valid ||
      balanced.chosen.step_time > even.chosen.step_time * (1 - request.min_gain)) {
    even.measured = balanced.measured;
    return even;
  }
  balanced.balance = weights;
  return balanced;
}

void apply_layout(model::ModelSpec& spec, const LayoutPrediction& layout) {
  std::map<std::string, parallel::Distribution> of;
  for (const auto& l : layout.layers) of[l.name] = l.distribution;
  spec.distribution = layout.layers.front().distribution;
  for (auto& l : spec.layers) l.distribution = of.at(l.name);
}

std::string plan_table(const Plan& plan) {
  std::ostringstream out;
  out << "plan for " << plan.ranks << " rank(s), global batch " << plan.batch;
  if (plan.memory_limit > 0) out << ", memory limit " << human_bytes(plan.memory_limit) << " per rank";
  out << "\n";
  out << format("%-22s %-18s %-34s %10s %10s %9s\n", "layer", "type", "distribution", "compute ms", "comm ms",
                "mem MiB");
  for (const auto& l : plan.chosen.layers)
    out << format("%-22s %-18s %-34s %10s %10s %9s\n", l.name.c_str(), l.type.c_str(), l.distribution.str().c_str(),
                  ms(l.cost.compute + l.cost.update + l.fusion).c_str(),
                  ms(l.cost.communication() + l.redistribution).c_str(),
                  mib(l.cost.memory + l.redistribution_memory).c_str());
  out << "\n";
  out << format("%-18s %12s %12s %12s %12s  %s\n", "layout", "step ms", "compute ms", "comm ms", "memory MiB", "");
  auto row = [&](const LayoutPrediction& p) {
    if (!p.valid)
      out << format("%-18s %12s %12s %12s %12s  cannot run: %s\n", p.label.c_str(), "-", "-", "-", "-", p.why.c_str());
    else
      out << format("%-18s %12s %12s %12s %12s  %s\n", p.label.c_str(), ms(p.step_time).c_str(), ms(p.compute).c_str(),
                    ms(p.communication).c_str(), mib(p.memory).c_str(), p.fits ? "" : "does not fit in memory");
  };
  row(plan.chosen);
  for (const auto& r : plan.references) row(r);
  if (plan.kept < kKept)
    out << "skip connections left too many combinations for the exact search over " << kKept
        << " candidates a layer: it kept " << plan.kept << "\n";
  if (plan.fastest_found > 0)
    out << "data parallelism kept: the fastest layout found (" << ms(plan.fastest_found)
        << " ms) is predicted less than " << plan.min_gain * 100 << "% faster (--min-gain)\n";
  if (!plan.balance.empty()) {
    const auto rows = parallel::SampleShares::of_weights(plan.balance).rows(plan.batch, plan.ranks);
    out << "the profile's nodes differ in speed: the batch is shared in proportion to them ("
        << parallel::shares_text(rows) << " of " << plan.batch
        << " over the ranks; \"training.balance\" takes the weights), which all the rows "
        << "above assume\n";
  }
  if (!plan.feasible)
    out << "no layout fits in " << human_bytes(plan.memory_limit) << " per rank; the smallest found needs "
        << human_bytes(plan.chosen.memory) << " (the planned row)\n";
  return out.str();
}

nlohmann::json layout_json(const LayoutPrediction& p) {
  nlohmann::json j{{"label", p.label}, {"valid", p.valid}};
  if (!p.valid) {
    j["why"] = p.why;
    return j;
  }
  j["step_time_s"] = p.step_time;
  j["compute_s"] = p.compute;
  j["communication_s"] = p.communication;
  j["memory_bytes"] = p.memory;
  j["fits"] = p.fits;
  nlohmann::json layers = nlohmann::json::array();
  for (const auto& l : p.layers) {
    const auto& d = l.distribution;
    nlohmann::json dist{{"sample", d.sample}, {"depth", d.depth},     {"height", d.height},
                        {"width", d.width},   {"channel", d.channel}, {"filter", d.filter}};
    if (d.shard_weights) dist["weights"] = "sharded";
    layers.push_back({{"name", l.name},
                      {"distribution", dist},
                      {"compute_s", l.cost.compute + l.cost.update + l.fusion},
                      {"halo_s", l.cost.halo},
                      {"channel_exchange_s", l.cost.channel_exchange},
                      {"reduction_s", l.cost.reduction},
                      {"gradient_s", l.cost.gradient},
                      {"redistribution_s", l.redistribution},
                      {"memory_bytes", l.cost.memory + l.redistribution_memory}});
  }
  j["layers"] = layers;
  return j;
}

nlohmann::json plan_json(const Plan& plan) {
  nlohmann::json refs = nlohmann::json::array();
  for (const auto& r : plan.references) refs.push_back(layout_json(r));
  return {{"ranks", plan.ranks},
          {"batch", plan.batch},
          {"memory_limit_bytes", plan.memory_limit},
          {"feasible", plan.feasible},
          {"min_gain", plan.min_gain},
          {"fastest_found_s", plan.fastest_found},
          {"candidates", plan.candidates},
          {"kept_per_layer", plan.kept},
          {"measured_layers", plan.measured},
          {"chosen", layout_json(plan.chosen)},
          {"balance", plan.balance.empty() ? nlohmann::json("even") : nlohmann::json(plan.balance)},
          {"references", refs}};
}

}  // namespace tessera::plan

#include "tessera/plan/machine_profile.hpp"

#include <cmath>
#include <fstream>
#include <sstream>

#include "tessera/core/atomic_file.hpp"
#include "tessera/core/config.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/json_reader.hpp"

namespace tessera::plan {
namespace {

std::string known_collectives() {
  std::string known;
  for (Collective c : kAllCollectives) known += (known.empty() ? "" : ", ") + std::string(collective_name(c));
  return known;
}

/// A figure that must be finite and non-negative (positive when `positive`).
double figure(ConfigObject& cfg, const std::string& key, bool positive) {
  const double v = cfg.number(key);
  if (!std::isfinite(v) || v < 0 || (positive && v == 0))
    throw ConfigError(cfg.path_of(key), std::string("expected a finite number ") + (positive ? "> 0" : ">= 0") +
                                            ", got " + json_excerpt(cfg.raw().at(key)));
  return v;
}

nlohmann::json links_json(const std::map<Collective, LinkCost>& links) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [c, cost] : links) j[collective_name(c)] = {{"alpha_s", cost.alpha}, {"beta_s_per_byte", cost.beta}};
  return j;
}

std::map<Collective, LinkCost> read_links(ConfigObject cfg) {
  std::map<Collective, LinkCost> links;
  for (auto it = cfg.raw().begin(); it != cfg.raw().end(); ++it) {
    const Collective* found = nullptr;
    for (const Collective& c : kAllCollectives)
      if (it.key() == collective_name(c)) found = &c;
    if (found == nullptr)
      throw ConfigError(cfg.path_of(it.key()), "unknown collective (known: " + known_collectives() + ")");
    ConfigObject link = cfg.object(it.key());
    LinkCost cost;
    cost.alpha = figure(link, "alpha_s", false);
    cost.beta = figure(link, "beta_s_per_byte", false);
    link.finish();
    links[*found] = cost;
  }
  cfg.finish();
  return links;
}

std::string plural(int64_t n, const char* what) { return std::to_string(n) + " " + what + (n == 1 ? "" : "s"); }

}  // namespace

const char* collective_name(Collective c) {
  switch (c) {
    case Collective::point_to_point: return "point_to_point";
    case Collective::allreduce: return "allreduce";
    case Collective::allgather: return "allgather";
    case Collective::alltoall: return "alltoall";
    case Collective::reduce_scatter: return "reduce_scatter";
  }
  return "?";
}

AlphaBetaTerms alpha_beta_terms(Collective c, int64_t ranks, double bytes) {
  const double p = static_cast<double>(ranks);
  switch (c) {
    case Collective::point_to_point: return {1, bytes};
    case Collective::allreduce: return {2 * std::log2(p), 2 * (p - 1) / p * bytes};
    case Collective::allgather:
    case Collective::reduce_scatter: return {p - 1, (p - 1) * bytes};
    case Collective::alltoall: return {p - 1, (p - 1) / p * bytes};
  }
  return {};
}

SplitTerms allreduce_split_terms(int64_t ranks, int64_t per_node, double bytes) {
  SplitTerms t;
  int64_t q = 1;
  while (per_node % (q * 2) == 0 && q * 2 <= ranks) q *= 2;
  const double p = static_cast<double>(ranks), steps = std::log2(static_cast<double>(q));
  t.within = {2 * steps, 2 * (1 - 1 / static_cast<double>(q)) * bytes};
  t.across = {2 * (std::log2(p) - steps), 2 * (1 / static_cast<double>(q) - 1 / p) * bytes};
  return t;
}

double MachineProfile::collective_seconds(Collective c, int64_t ranks, double bytes) const {
  const AlphaBetaTerms parts = collective_parts(c, ranks, bytes);
  return parts.alpha + parts.beta;
}

AlphaBetaTerms MachineProfile::collective_parts(Collective c, int64_t ranks, double bytes) const {
  if (ranks <= 1 || !(bytes > 0)) return {};
  const bool spans_nodes = ranks > ranks_per_node;
  const auto& links = spans_nodes ? across_nodes : within_node;
  const auto it = links.find(c);
  if (it == links.end()) {
    const std::string where = std::string("machine profile '") + name + "': $." +
                              (spans_nodes ? "across_nodes." : "within_node.") + collective_name(c);
    if (spans_nodes)
      throw ConfigError(where, "no across-node cost of " + std::string(collective_name(c)) + ", which " +
                                   plural(ranks, "rank") + " need (more than the " + plural(ranks_per_node, "rank") +
                                   " per node; a profile measured on one node has none): run `mpirun -np N "
                                   "tessera calibrate` over several nodes, or plan with a published profile");
    throw ConfigError(where, "no within-node cost of " + std::string(collective_name(c)) + ", which " +
                                 plural(ranks, "rank") +
                                 " need (a profile measured on one rank has none): run `mpirun -np N tessera "
                                 "calibrate` with N >= 2 ranks");
  }
  const auto within = within_node.find(c);
  if (c == Collective::allreduce && spans_nodes && ranks_per_node > 1 && within != within_node.end()) {
    const SplitTerms t = allreduce_split_terms(ranks, ranks_per_node, bytes);
    return {t.within.alpha * within->second.alpha + t.across.alpha * it->second.alpha,
            t.within.beta * within->second.beta + t.across.beta * it->second.beta};
  }
  const AlphaBetaTerms terms = alpha_beta_terms(c, ranks, bytes);
  return {terms.alpha * it->second.alpha, terms.beta * it->second.beta};
}

namespace {

std::vector<NodeKind> read_node_kinds(std::vector<ConfigObject> list) {
  std::vector<NodeKind> kinds;
  for (auto& kind : list) {
    NodeKind k;
    k.name = kind.string("name", "");
    k.nodes = kind.integer_in("nodes", 1, int64_t{1} << 30);
    k.speed = kind.number_in("speed", 1e-6, 1e6, 1.0);
    kind.finish();
    kinds.push_back(std::move(k));
  }
  return kinds;
}

}  // namespace

std::vector<double> MachineProfile::rank_speeds(int ranks) const {
  if (node_kinds.empty()) return std::vector<double>(static_cast<size_t>(ranks), 1.0);
  std::vector<double> speeds;
  for (const NodeKind& kind : node_kinds)
    for (int64_t k = 0; k < kind.nodes * ranks_per_node && static_cast<int>(speeds.size()) < ranks; ++k)
      speeds.push_back(kind.speed);
  if (static_cast<int>(speeds.size()) < ranks)
    throw ConfigError("machine profile '" + name + "': node_kinds", "its nodes hold " + std::to_string(speeds.size()) +
                                                                       " ranks (" + std::to_string(ranks_per_node) +
                                                                       " per node); the plan needs " +
                                                                       std::to_string(ranks));
  return speeds;
}

nlohmann::json MachineProfile::to_json() const {
  nlohmann::json j = {{"format_version", kFormatVersion},
                      {"name", name},
                      {"description", description},
                      {"origin", origin},
                      {"backend", backend},
                      {"ranks_per_node", ranks_per_node},
                      {"threads_per_rank", threads_per_rank},
                      {"memory_per_rank", memory_per_rank},
                      {"process_baseline", process_baseline},
                      {"peak_flops_per_rank", peak_flops_per_rank},
                      {"conv_efficiency", conv_efficiency},
                      {"memory_bandwidth_per_rank", memory_bandwidth_per_rank},
                      {"within_node", links_json(within_node)},
                      {"across_nodes", links_json(across_nodes)}};
  if (!node_kinds.empty()) {
    j["node_kinds"] = nlohmann::json::array();
    for (const NodeKind& k : node_kinds) j["node_kinds"].push_back({{"name", k.name}, {"nodes", k.nodes}, {"speed", k.speed}});
  }
  j["layer_times"] = nlohmann::json::object();
  for (const auto& [key, t] : layer_times)
    j["layer_times"][key] = {{"forward_s", t.forward}, {"backward_s", t.backward}, {"memory_bytes", t.memory}};
  return j;
}

MachineProfile MachineProfile::from_json(const nlohmann::json& json, const std::string& source) {
  const std::string root = source + ": $";
  if (!json.is_object())
    throw ConfigError(root, "not a Tessera machine profile (expected a JSON object, got " + json_excerpt(json) + ")");
  // The version first: a newer format may have keys this build does not know.
  if (!json.contains("format_version"))
    throw ConfigError(root + ".format_version", "missing: not a Tessera machine profile");
  const nlohmann::json& version = json.at("format_version");
  if (!version.is_number_integer() || version.get<int64_t>() < 1)
    throw ConfigError(root + ".format_version", json_excerpt(version) +
                                                    " is not a Tessera machine profile version (this build reads " +
                                                    std::to_string(kFormatVersion) + ")");
  if (version.get<int64_t>() != kFormatVersion)
    throw ConfigError(root + ".format_version", "version " + json_excerpt(version) +
                                                    " was written by a newer Tessera (this build reads version " +
                                                    std::to_string(kFormatVersion) + ")");
  ConfigObject cfg(json, root);
  cfg.integer("format_version");
  MachineProfile p;
  p.name = cfg.string("name");
  p.description = cfg.string("description", "");
  p.origin = cfg.string("origin");
  if (p.origin != "measured" && p.origin != "published")
    throw ConfigError(cfg.path_of("origin"), "expected \"measured\" or \"published\", got \"" + p.origin + "\"");
  p.backend = cfg.string("backend", "");
  // Bounded as the flags that set them are (calibrate --ranks-max, --threads): their product
  // with a node count stays far within 64 bits.
  p.ranks_per_node = cfg.integer_in("ranks_per_node", 1, 1 << 20);
  p.threads_per_rank = cfg.integer_in("threads_per_rank", 1, 1 << 20);
  p.memory_per_rank = figure(cfg, "memory_per_rank", true);
  p.process_baseline = figure(cfg, "process_baseline", false);
  p.peak_flops_per_rank = figure(cfg, "peak_flops_per_rank", true);
  p.conv_efficiency = figure(cfg, "conv_efficiency", true);
  if (p.conv_efficiency > 1)
    throw ConfigError(cfg.path_of("conv_efficiency"),
                      "a fraction of the peak, expected at most 1, got " + json_excerpt(json.at("conv_efficiency")));
  p.memory_bandwidth_per_rank = figure(cfg, "memory_bandwidth_per_rank", true);
  p.within_node = read_links(cfg.object("within_node"));
  p.across_nodes = read_links(cfg.object("across_nodes"));
  if (cfg.has("node_kinds")) p.node_kinds = read_node_kinds(cfg.object_list("node_kinds"));
  if (cfg.has("layer_times")) {
    ConfigObject times = cfg.object("layer_times");
    for (auto it = times.raw().begin(); it != times.raw().end(); ++it) {
      ConfigObject t = times.object(it.key());
      LayerTime lt;
      lt.forward = figure(t, "forward_s", false);
      lt.backward = figure(t, "backward_s", false);
      if (t.has("memory_bytes")) lt.memory = figure(t, "memory_bytes", false);
      t.finish();
      p.layer_times[it.key()] = lt;
    }
    times.finish();
  }
  cfg.finish();
  return p;
}

MachineProfile read_machine_profile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw IoError("machine profile " + path + ": cannot open the file for reading");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw IoError("machine profile " + path + ": cannot read the file");
  return MachineProfile::from_json(parse_json_text(text.str(), path), path);
}

void write_machine_profile(const MachineProfile& profile, const std::string& path) {
  const std::string text = profile.to_json().dump(2) + "\n";
  write_text_atomically(path, text);
}

}  // namespace tessera::plan

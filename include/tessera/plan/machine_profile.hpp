#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tessera::plan {

/// The collectives (and point-to-point messages) whose costs a machine profile states.
enum class Collective { point_to_point, allreduce, allgather, alltoall, reduce_scatter };
/// Every collective, in the order profiles list them.
inline constexpr Collective kAllCollectives[] = {Collective::point_to_point, Collective::allreduce,
                                                 Collective::allgather, Collective::alltoall,
                                                 Collective::reduce_scatter};
/// "point_to_point", "allreduce", ... as the profile file names them.
const char* collective_name(Collective c);

/// Latency and inverse bandwidth of one collective in the α-β model: the time over p ranks
/// for a message of n bytes is the standard algorithm's formula in α and β (Thakur, Rabenseifner
/// and Gropp, "Optimization of collective communication operations in MPICH", IJHPCA 2005):
///   point_to_point  α + n·β                        (n: the message)
///   allreduce       2·log2(p)·α + 2·(p−1)/p·n·β      (n: the buffer every rank holds)
///   allgather       (p−1)·α + (p−1)·n·β              (n: one rank's contribution)
///   reduce_scatter  (p−1)·α + (p−1)·n·β              (n: one rank's block of the result)
///   alltoall        (p−1)·α + (p−1)/p·n·β            (n: what one rank sends in all)
struct LinkCost {
  double alpha = 0;  // seconds
  double beta = 0;   // seconds per byte
};

/// The multipliers of α and β in the formula of collective `c` over `ranks` ranks for `bytes`
/// (n as LinkCost defines it): its time is alpha·LinkCost::alpha + beta·LinkCost::beta. The
/// calibration fits α and β with them; collective_seconds prices with them.
struct AlphaBetaTerms {
  double alpha = 0, beta = 0;
};
AlphaBetaTerms alpha_beta_terms(Collective c, int64_t ranks, double bytes);

/// An allreduce over `ranks` consecutive ranks, `per_node` to a node, split into what crosses a
/// node's own links and what crosses the network. Rabenseifner's halvings run nearest partner
/// first (MPICH's order), so the first log2(q) steps, q the largest power of two dividing
/// per_node, carry the largest halves inside a node:
///   within: 2·log2(q)·α + 2·(1 − 1/q)·n·β          across: 2·(log2(p) − log2(q))·α + 2·(1/q − 1/p)·n·β
/// (together the flat formula's terms when q = 1). Found by replaying the planner's steps in
/// tessera-sim (docs/simulation.md): priced flat at the across-node figures, a 16.8 MB sum over
/// 2048 V100s took 5.8 ms, against 3.3 ms simulated.
struct SplitTerms {
  AlphaBetaTerms within, across;
};
SplitTerms allreduce_split_terms(int64_t ranks, int64_t per_node, double bytes);

/// One layer's measured forward and backward time on one local shape (a cache entry).
struct LayerTime {
  double forward = 0, backward = 0;  // seconds, medians
  /// Bytes the layer's own allocations hold after a forward and backward: the state it keeps
  /// for backward (pooling indices, saved statistics) and its buffers and workspaces.
  double memory = 0;
};

/// Nodes of one kind in a machine whose nodes differ: how many, and how fast each computes
/// relative to the node the profile's layer times were measured on (0.5: half as fast).
struct NodeKind {
  std::string name;
  int64_t nodes = 1;
  double speed = 1.0;
};

/// What the performance model knows of a machine: measured here by `tessera calibrate`, or
/// built from published figures for machines Tessera cannot run on (Theta, Sierra). A JSON
/// file (comments allowed) in the format docs/machine_profile.md describes.
struct MachineProfile {
  static constexpr int kFormatVersion = 1;
  std::string name;         // "this machine", "theta", ...
  std::string description;  // processor, accelerator and network in words
  std::string origin;       // "measured" or "published"
  std::string backend;      // the op backend the layer times were taken with ("onednn", ...)
  int64_t ranks_per_node = 1;
  int64_t threads_per_rank = 1;
  /// Memory one rank may use (bytes), and what a rank holds before any model (its process:
  /// libraries, MPI, runtime).
  double memory_per_rank = 0, process_baseline = 0;
  /// One rank's arithmetic peak (FLOP/s) and the fraction of it convolutions reach, for layers
  /// whose time was not measured (projection to other machines).
  double peak_flops_per_rank = 0, conv_efficiency = 0.5;
  /// One rank's memory bandwidth (bytes/s), for memory-bound work that was not measured.
  double memory_bandwidth_per_rank = 0;
  /// Collective costs within one node and across nodes. A group of ranks spans nodes when it
  /// has more ranks than ranks_per_node (ranks are placed consecutively).
  std::map<Collective, LinkCost> within_node, across_nodes;
  /// Nodes that compute at other speeds, in the order ranks fill them (ranks_per_node each);
  /// empty: every node is the measured one. Measured balance uses the speeds a run measures;
  /// the planner, these.
  std::vector<NodeKind> node_kinds;
  /// The speed of each of `ranks` ranks placed consecutively on the nodes of node_kinds (all 1
  /// without kinds). Throws ConfigError naming the profile when the kinds hold fewer ranks.
  std::vector<double> rank_speeds(int ranks) const;
  /// Measured layer times, keyed as plan::LayerTimer names them; grows as plans need shapes.
  std::map<std::string, LayerTime> layer_times;

  /// Seconds of collective `c` over `ranks` ranks for `bytes` as LinkCost defines n; 0 for one
  /// rank or no bytes. An allreduce over nodes of several ranks each is priced by
  /// allreduce_split_terms, its within-node part at the within-node figures. Throws ConfigError naming the profile when the costs it needs (within a
  /// node, or across nodes for more than ranks_per_node ranks) are not in the profile, as in one
  /// measured on one rank or on one node.
  double collective_seconds(Collective c, int64_t ranks, double bytes) const;
  /// collective_seconds split into its α (latency) and β (transfer) parts.
  AlphaBetaTerms collective_parts(Collective c, int64_t ranks, double bytes) const;

  nlohmann::json to_json() const;
  /// Throws ConfigError naming `source` and the key for a wrong format version, a missing or
  /// negative figure, an unknown key or collective.
  static MachineProfile from_json(const nlohmann::json& json, const std::string& source);
};

/// Reads a profile file; ConfigError naming the file for anything that is not a profile,
/// IoError naming it when it cannot be read.
MachineProfile read_machine_profile(const std::string& path);
/// Writes `profile` atomically (a reader sees the old file or the new one).
void write_machine_profile(const MachineProfile& profile, const std::string& path);

}  // namespace tessera::plan

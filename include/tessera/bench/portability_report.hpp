#pragma once
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tessera/bench/bench_result.hpp"

namespace tessera::bench {

/// One platform's efficiencies for one application. `measured` false: the platform has no
/// result for it (it stays out of that application's platform set); measured with efficiency 0:
/// the platform cannot run it.
struct PlatformCell {
  bool measured = false;
  double arch = 0, app = 0;
};

/// An application (a model, or one op class over every model's ops) across the platforms, and
/// its performance portability for both efficiency kinds.
struct PortabilityRow {
  std::string application;
  std::vector<PlatformCell> cells;  // one per platform of the report
  double pp_arch = 0, pp_app = 0;
  int platforms = 0;  // the platforms that measured it
};

/// An op measured below an architectural efficiency, with what bounds it.
struct SlowOp {
  std::string platform, model, layer, op_class, shape;
  double arch = 0, achieved = 0, limit = 0;  // GFLOP/s or GB/s, whichever bounds it
  double seconds = 0;
  bool memory_bound = false;
  /// Too little work for either limit to matter: its roofline bound is under
  /// kLatencyBoundSeconds, so fixed costs (thread start-up, primitive dispatch) dominate.
  bool latency_bound = false;
  static constexpr double kLatencyBoundSeconds = 20e-6;
};

/// Results of `tessera bench` from one or more machines merged: a platform is one backend at
/// one thread count on one machine. Application efficiencies are taken afresh against the
/// fastest platform of the same machine over all the results; architectural ones against each
/// result's own measured peak.
class PortabilityReport {
 public:
  /// `results` are (file, result) pairs. Throws Error naming the file and key for results that
  /// do not fit together: one model at different batches, sizes or op shapes, or one platform
  /// measured twice.
  static PortabilityReport build(const std::vector<std::pair<std::string, BenchResult>>& results);

  const std::vector<std::string>& platforms() const { return platforms_; }
  /// What ran on `platform`: "BACKEND, Kokkos SPACE on N thread(s)", one per distinct setting.
  std::vector<std::string> platform_notes(const std::string& platform) const;
  const std::vector<PortabilityRow>& models() const { return models_; }
  const std::vector<PortabilityRow>& op_classes() const { return op_classes_; }
  /// Supported ops below `threshold` architectural efficiency, slowest first.
  std::vector<SlowOp> below(double threshold) const;
  /// The best architectural efficiency of any convolution, and which one it is.
  double best_conv_arch() const { return best_conv_arch_; }
  const std::string& best_conv() const { return best_conv_; }
  /// Per platform and conv direction: the architectural efficiency on the largest shape.
  std::vector<std::string> largest_convs() const { return largest_convs_; }

  /// The tables and notes, as printed.
  std::string table(double slow_threshold = 0.3) const;
  /// Efficiency cascade (Sewall et al.): per model, the platforms from most to least
  /// efficient and the PP of the best k platforms, for both efficiency kinds.
  std::string cascade_svg() const;
  /// Every op on the roofline of its machine: GFLOP/s against arithmetic intensity.
  std::string roofline_svg() const;

 private:
  struct Op {
    std::string platform, machine, model, layer, op_class, shape;
    ElementType precision = ElementType::fp32;  // ops of other types are not compared with it
    bool supported = false;
    double seconds = 0, flops = 0, bytes = 0, roofline = 0, arch = 0, app = 0;
    double gflops = 0, gbs = 0;  // the limits of its run
    bool memory_bound = false;
  };
  struct Roof {
    std::string label;
    double gflops = 0, gbs = 0;
  };
  class Builder;  // the steps of build(), in portability_report.cpp
  /// The platforms' notes, machine limits and rows, as table() prints them.
  std::string platforms_section() const;
  std::string slow_ops_section(double slow_threshold) const;
  std::vector<std::string> platforms_;
  std::map<std::string, std::vector<std::string>> platform_notes_;  // platform → what ran it
  std::vector<PortabilityRow> models_, op_classes_;
  std::vector<Op> ops_;
  std::vector<Roof> roofs_;
  double best_conv_arch_ = 0;
  std::string best_conv_;
  std::vector<std::string> largest_convs_;
};

}  // namespace tessera::bench

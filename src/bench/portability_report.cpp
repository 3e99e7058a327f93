#include "tessera/bench/portability_report.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "tessera/bench/portability_metric.hpp"
#include "tessera/bench/roofline.hpp"
#include "tessera/plot/svg_plot.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/format.hpp"

namespace tessera::bench {
using plot::SvgPlot;
namespace {

/// PP over the platforms that measured the application.
void finish_row(PortabilityRow& row) {
  std::vector<std::optional<double>> arch, app;
  for (const auto& c : row.cells) {
    if (!c.measured) continue;
    arch.emplace_back(c.arch);
    app.emplace_back(c.app);
  }
  row.platforms = static_cast<int>(arch.size());
  row.pp_arch = performance_portability(arch);
  row.pp_app = performance_portability(app);
}

/// `value` appended to `list` unless it is there already: first-seen order.
template <class T>
void add_once(std::vector<T>& list, const T& value) {
  if (std::find(list.begin(), list.end(), value) == list.end()) list.push_back(value);
}

}  // namespace

/// build() in steps: each result is checked against the others and its ops and models
/// collected (add), then the application efficiencies, the platforms' order, the rows and the
/// convolution summary follow from all of them.
class PortabilityReport::Builder {
 public:
  explicit Builder(const std::vector<std::pair<std::string, BenchResult>>& results) {
    for (const auto& [file, res] : results) hosts_.insert(res.machine.hostname);
  }

  void add(const std::string& file, const BenchResult& res) {
    const std::string roof_label = res.machine.key() + ", " + std::to_string(res.machine.threads) + " thread(s)";
    if (roof_seen_.insert(roof_label).second)
      r_.roofs_.push_back({roof_label, res.peak.gflops(res.machine.threads), res.peak.gbs(res.machine.threads)});
    if (res.kind == "peak") return;
    check_setup(file, res);
    for (const OpResult& o : res.ops)
      note_platform(platform_id(res, o.platform), o.timing.backend, o.timing.type, res.machine);
    for (const ModelResult& m : res.models)
      note_platform(platform_id(res, m.platform), m.backend, m.precision, res.machine);
    add_bf16_roof(res);
    for (size_t i = 0; i < res.ops.size(); ++i) add_op(file, res, i);
    for (size_t i = 0; i < res.models.size(); ++i) add_model(file, res, i);
  }

  PortabilityReport finish() {
    application_efficiencies();
    for (const auto& e : model_entries_) add_once(r_.platforms_, e.platform);
    for (const Op& o : r_.ops_) add_once(r_.platforms_, o.platform);
    model_rows();
    class_rows();
    conv_summary();
    return std::move(r_);
  }

 private:
  struct ModelEntry {
    std::string platform, machine, model;
    ModelResult m;
  };
  static std::string step_key(const ModelEntry& e) {
    return e.machine + "|" + e.model + "|" + element_type_name(e.m.precision);
  }
  /// What a model was measured at, and by which file first.
  struct Seen {
    std::string file;
    int64_t batch, size;
  };

  std::string platform_id(const BenchResult& res, const std::string& label) const {
    return hosts_.size() > 1 ? res.machine.hostname + ":" + label : label;
  }
  static std::string op_key(const Op& o) {
    return o.machine + "|" + o.model + "|" + o.layer + "|" + o.op_class + "|" + element_type_name(o.precision);
  }
  size_t index_of(const std::string& platform) const {
    return static_cast<size_t>(std::find(r_.platforms_.begin(), r_.platforms_.end(), platform) - r_.platforms_.begin());
  }

  /// Results of one model must agree on its batch and size.
  void check_setup(const std::string& file, const BenchResult& res) {
    const std::string prefix = file + ": $";
    auto seen = model_setup_.find(res.model);
    if (seen == model_setup_.end()) {
      model_setup_[res.model] = {file, res.batch, res.size};
      return;
    }
    if (seen->second.batch != res.batch)
      throw ConfigError(prefix + ".batch", "model '" + res.model + "' at batch " + std::to_string(res.batch) +
                                               ", but at " + std::to_string(seen->second.batch) + " in " +
                                               seen->second.file + ": results of one model must match");
    if (seen->second.size != res.size)
      throw ConfigError(prefix + ".size", "model '" + res.model + "' at size " + std::to_string(res.size) +
                                              ", but at " + std::to_string(seen->second.size) + " in " +
                                              seen->second.file + ": results of one model must match");
  }

  /// The bf16 roof of a machine whose result has bf16 ops and a measured bf16 peak.
  void add_bf16_roof(const BenchResult& res) {
    const bool bf16 = std::any_of(res.ops.begin(), res.ops.end(),
                                  [](const OpResult& o) { return o.timing.type == ElementType::bf16; });
    const int64_t threads = res.machine.threads;
    if (!bf16 || res.peak.gflops(threads, ElementType::bf16) == res.peak.gflops(threads)) return;
    const std::string label = res.machine.key() + ", " + std::to_string(threads) + " thread(s), bf16";
    if (roof_seen_.insert(label).second)
      r_.roofs_.push_back({label, res.peak.gflops(threads, ElementType::bf16), res.peak.gbs(threads)});
  }

  /// What a platform label stands for: its backend, precision, execution space and threads.
  void note_platform(const std::string& platform, const std::string& backend, ElementType precision,
                     const MachineDescription& m) {
    std::string note = (backend == "auto" ? "auto (each op on the first backend that takes it)" : backend) +
                       (precision == ElementType::fp32 ? "" : std::string(" in ") + element_type_name(precision)) +
                       ", Kokkos " + m.execution_space + " on " + std::to_string(m.threads) + " thread(s)";
    // Kokkos' kernels run in the default execution space only: one thread of OpenMP is what
    // this build has of a serial run.
    if (backend == "kokkos" && m.threads == 1 && m.execution_space != "Serial")
      note += ", standing in for Kokkos Serial";
    add_once(r_.platform_notes_[platform], note);
  }

  /// Op `i` of `res`, with its roofline bound and architectural efficiency; one layer's op
  /// must have one shape in every result, and each platform measures it once.
  void add_op(const std::string& file, const BenchResult& res, size_t i) {
    const OpResult& o = res.ops[i];
    const std::string at = file + ": $.ops[" + std::to_string(i) + "]";
    const auto key = std::make_tuple(res.model, o.timing.layer, o.timing.op_class, o.timing.type);
    auto shape = op_shape_.find(key);
    if (shape == op_shape_.end())
      op_shape_[key] = {o.timing.shape, file};
    else if (shape->second.first != o.timing.shape)
      throw ConfigError(at + ".shape", "'" + o.timing.shape + "' differs from '" + shape->second.first + "' in " +
                                           shape->second.second + " for the same layer of model '" + res.model + "'");
    Op op;
    op.platform = platform_id(res, o.platform);
    op.machine = res.machine.key();
    op.model = res.model;
    op.layer = o.timing.layer;
    op.op_class = o.timing.op_class;
    op.shape = o.timing.shape;
    op.precision = o.timing.type;
    op.supported = o.timing.supported;
    op.seconds = o.timing.seconds;
    op.flops = o.timing.flops;
    op.bytes = o.timing.bytes;
    op.gflops = res.peak.gflops(res.machine.threads, op.precision);
    op.gbs = res.peak.gbs(res.machine.threads);
    op.roofline = roofline_seconds(op.flops, op.bytes, op.gflops, op.gbs);
    op.memory_bound = memory_bound(op.flops, op.bytes, op.gflops, op.gbs);
    op.arch = op.supported ? op.roofline / op.seconds : 0.0;
    const std::string id = op.platform + "|" + op.model + "|" + op.layer + "|" + op.op_class;
    if (!measured_.emplace(id, file).second)
      throw ConfigError(at, "platform '" + op.platform + "' measured " + op.op_class + " of layer '" + op.layer +
                                "' of model '" + op.model + "' already in " + measured_[id]);
    r_.ops_.push_back(op);
  }

  void add_model(const std::string& file, const BenchResult& res, size_t i) {
    const ModelResult& m = res.models[i];
    const std::string pid = platform_id(res, m.platform);
    const std::string id = pid + "|" + res.model + "|model";
    if (!measured_.emplace(id, file).second)
      throw ConfigError(file + ": $.models[" + std::to_string(i) + "]",
                        "platform '" + pid + "' measured model '" + res.model + "' already in " + measured_[id]);
    model_entries_.push_back({pid, res.machine.key(), res.model, m});
  }

  /// Application efficiency against the fastest platform of the same machine and precision.
  void application_efficiencies() {
    for (const Op& o : r_.ops_)
      if (o.supported) {
        auto it = best_.find(op_key(o));
        if (it == best_.end() || o.seconds < it->second) best_[op_key(o)] = o.seconds;
      }
    for (Op& o : r_.ops_) o.app = o.supported ? best_[op_key(o)] / o.seconds : 0.0;
    for (const auto& e : model_entries_)
      if (e.m.supported) {
        const std::string k = step_key(e);
        auto it = best_step_.find(k);
        if (it == best_step_.end() || e.m.step_seconds < it->second) best_step_[k] = e.m.step_seconds;
      }
  }

  /// A model or op class trained in another precision is another application: its PP is over
  /// the platforms that ran it in that precision ("cosmoflow-small/bf16").
  static std::string application(const std::string& base, ElementType precision) {
    return precision == ElementType::fp32 ? base : base + "/" + element_type_name(precision);
  }

  void model_rows() {
    std::vector<std::pair<std::string, ElementType>> models;
    for (const auto& e : model_entries_) add_once(models, std::make_pair(e.model, e.m.precision));
    for (const auto& [name, precision] : models) {
      PortabilityRow row;
      row.application = "model " + application(name, precision);
      row.cells.resize(r_.platforms_.size());
      for (const auto& e : model_entries_) {
        if (e.model != name || e.m.precision != precision) continue;
        PlatformCell& c = row.cells[index_of(e.platform)];
        c.measured = true;
        c.arch = e.m.supported ? e.m.arch_efficiency : 0.0;
        c.app = e.m.supported ? best_step_[step_key(e)] / e.m.step_seconds : 0.0;
      }
      finish_row(row);
      r_.models_.push_back(row);
    }
  }

  void class_rows() {
    std::vector<std::pair<std::string, ElementType>> classes;
    for (const Op& o : r_.ops_) add_once(classes, std::make_pair(o.op_class, o.precision));
    for (const auto& [cls, precision] : classes) r_.op_classes_.push_back(class_row(cls, precision));
  }

  /// Op class `cls` over every model: time-weighted efficiencies (Σ bound / Σ time); a
  /// platform that cannot run one op of the class cannot run the class.
  PortabilityRow class_row(const std::string& cls, ElementType precision) {
    const size_t platforms = r_.platforms_.size();
    PortabilityRow row;
    row.application = application(cls, precision);
    row.cells.resize(platforms);
    std::vector<double> time(platforms), bound(platforms), fastest(platforms);
    std::vector<bool> unsupported(platforms);
    for (const Op& o : r_.ops_) {
      if (o.op_class != cls || o.precision != precision) continue;
      const size_t p = index_of(o.platform);
      row.cells[p].measured = true;
      if (!o.supported) {
        unsupported[p] = true;
        continue;
      }
      time[p] += o.seconds;
      bound[p] += o.roofline;
      fastest[p] += best_[op_key(o)];
    }
    for (size_t p = 0; p < platforms; ++p) {
      if (!row.cells[p].measured || unsupported[p] || time[p] <= 0) continue;
      row.cells[p].arch = bound[p] / time[p];
      row.cells[p].app = fastest[p] / time[p];
    }
    finish_row(row);
    return row;
  }

  /// Convolutions: the best, and each platform's on its largest shape.
  void conv_summary() {
    for (const Op& o : r_.ops_) {
      // Transposed convolutions are timed apart (conv_transpose_*): the figure stays the
      // convolution layers'.
      if (!o.supported || o.op_class.rfind("conv_", 0) != 0 || o.op_class.rfind("conv_transpose_", 0) == 0) continue;
      if (o.arch > r_.best_conv_arch_) {
        r_.best_conv_arch_ = o.arch;
        r_.best_conv_ = o.platform + " " + o.model + " " + o.layer + " " + o.op_class + " (" + o.shape + ")";
      }
    }
    for (const auto& p : r_.platforms_)
      for (const char* cls : {"conv_forward", "conv_backward_data", "conv_backward_weights"}) {
        const Op* largest = nullptr;
        for (const Op& o : r_.ops_)
          if (o.platform == p && o.op_class == cls && o.supported && (!largest || o.flops > largest->flops))
            largest = &o;
        if (largest)
          r_.largest_convs_.push_back(p + " " + cls + " on its largest shape (" + largest->model + " " +
                                      largest->layer + ", " + fixed(largest->flops / 1e9, 1) +
                                      " GFLOP): " + fixed(largest->arch, 2));
      }
  }

  PortabilityReport r_;
  std::set<std::string> hosts_, roof_seen_;
  std::map<std::string, Seen> model_setup_;
  std::map<std::tuple<std::string, std::string, std::string, ElementType>, std::pair<std::string, std::string>>
      op_shape_;
  std::map<std::string, std::string> measured_;  // platform|model|layer|class → file
  std::vector<ModelEntry> model_entries_;
  std::map<std::string, double> best_, best_step_;  // fastest op time per op_key, step per machine|model
};

PortabilityReport PortabilityReport::build(const std::vector<std::pair<std::string, BenchResult>>& results) {
  if (results.empty()) throw Error("tessera bench report: no result files given");
  Builder builder(results);
  for (const auto& [file, res] : results) builder.add(file, res);
  return builder.finish();
}

std::vector<std::string> PortabilityReport::platform_notes(const std::string& platform) const {
  const auto it = platform_notes_.find(platform);
  return it == platform_notes_.end() ? std::vector<std::string>{} : it->second;
}

std::vector<SlowOp> PortabilityReport::below(double threshold) const {
  std::vector<SlowOp> out;
  for (const Op& o : ops_) {
    if (!o.supported || o.arch >= threshold) continue;
    SlowOp s;
    s.platform = o.platform;
    s.model = o.model;
    s.layer = o.layer;
    s.op_class = o.op_class;
    s.shape = o.shape;
    s.arch = o.arch;
    s.memory_bound = o.memory_bound;
    s.seconds = o.seconds;
    s.latency_bound = o.roofline < SlowOp::kLatencyBoundSeconds;
    s.achieved = o.memory_bound ? o.bytes / o.seconds / 1e9 : o.flops / o.seconds / 1e9;
    s.limit = o.memory_bound ? o.gbs : o.gflops;
    out.push_back(s);
  }
  std::sort(out.begin(), out.end(), [](const SlowOp& a, const SlowOp& b) { return a.arch < b.arch; });
  return out;
}

namespace {

/// One table of rows: an arch and an app column per platform, then the PPs.
std::string rows_table(const std::string& title, const std::vector<PortabilityRow>& rows,
                       const std::vector<std::string>& platforms) {
  if (rows.empty()) return "";
  std::string s = title + "\n" + format("%-37s", "application");
  for (const auto& p : platforms) s += format(" %19s", p.substr(0, 19).c_str());
  s += "   PP_arch  PP_app\n" + format("%-37s", "");
  for (size_t i = 0; i < platforms.size(); ++i) s += "      arch      app";
  s += "\n";
  for (const auto& row : rows) {
    s += format("%-37s", row.application.substr(0, 37).c_str());
    for (const auto& c : row.cells) {
      if (!c.measured)
        s += format(" %19s", "-");
      else if (c.arch == 0 && c.app == 0)
        s += format(" %19s", "cannot run");
      else
        s += format(" %9.3f %9.3f", c.arch, c.app);
    }
    s +=
        format("   %7.3f %7.3f", row.pp_arch, row.pp_app) +
        (row.platforms < static_cast<int>(platforms.size()) ? "  (over " + std::to_string(row.platforms) + " platforms)"
                                                            : "") +
        "\n";
  }
  return s + "\n";
}

}  // namespace

std::string PortabilityReport::platforms_section() const {
  std::string s = "platforms:\n";
  for (const auto& p : platforms_) {
    s += "  " + p + ":";
    const auto notes = platform_notes_.find(p);
    if (notes != platform_notes_.end())
      for (size_t i = 0; i < notes->second.size(); ++i) s += (i ? "; " : " ") + notes->second[i];
    s += "\n";
  }
  s += "machine limits (measured):\n";
  for (const auto& roof : roofs_) {
    const bool bf16 = roof.label.size() > 4 && roof.label.compare(roof.label.size() - 4, 4, "bf16") == 0;
    s += "  " + roof.label + ": " + fixed(roof.gflops, 1) + (bf16 ? " GFLOP/s bf16 dot products, " : " GFLOP/s FMA, ") +
         fixed(roof.gbs, 1) + " GB/s triad\n";
  }
  return s + "\n";
}

std::string PortabilityReport::slow_ops_section(double slow_threshold) const {
  const auto slow = below(slow_threshold);
  std::string s =
      "\nops below " + fixed(slow_threshold, 2) + " architectural efficiency: " + std::to_string(slow.size()) + " of " +
      std::to_string(std::count_if(ops_.begin(), ops_.end(), [](const Op& o) { return o.supported; })) + "\n";
  // Grouped by platform, class and bound, which is what explains them.
  std::map<std::string, std::vector<const SlowOp*>> groups;
  for (const auto& o : slow) {
    const char* why = o.latency_bound  ? " [latency-bound: under 20 us at the limits]"
                      : o.memory_bound ? " [memory-bound, vs triad GB/s]"
                                       : " [compute-bound, vs FMA GFLOP/s]";
    groups[o.platform + " " + o.op_class + why].push_back(&o);
  }
  for (const auto& [key, list] : groups) {
    const SlowOp& worst = *list.front();
    s += "  " + key + ": " + std::to_string(list.size()) + " op(s), worst " + fixed(worst.arch, 3) + " (" +
         worst.model + " " + worst.layer + ": " + fixed(worst.achieved, 1) + " of " + fixed(worst.limit, 1) +
         (worst.memory_bound ? " GB/s" : " GFLOP/s") + " in " + fixed(worst.seconds * 1e6, 0) + " us)\n";
  }
  return s;
}

std::string PortabilityReport::table(double slow_threshold) const {
  std::string s = platforms_section();
  s += rows_table("models (step time):", models_, platforms_);
  s += rows_table("op classes (over every model's ops, time-weighted):", op_classes_, platforms_);
  for (const auto& line : largest_convs_) s += line + "\n";
  if (!best_conv_.empty()) s += "best convolution: " + fixed(best_conv_arch_, 3) + " " + best_conv_ + "\n";
  return s + slow_ops_section(slow_threshold);
}

std::string PortabilityReport::cascade_svg() const {
  const std::vector<PortabilityRow>& rows = models_.empty() ? op_classes_ : models_;
  const double n = std::max<double>(1.0, static_cast<double>(platforms_.size()));
  SvgPlot plot("Efficiency cascade: platforms best first, PP of the best k (line)",
               {"platforms, most efficient first", 0.5, n + 0.5, false}, {"efficiency", 0.0, 1.05, false});
  std::vector<std::string> ks;
  for (size_t k = 1; k <= platforms_.size(); ++k) ks.push_back(std::to_string(k));
  plot.x_categories(ks);
  size_t series = 0;
  for (const auto& row : rows) {
    for (int kind = 0; kind < 2; ++kind) {
      const std::string color = SvgPlot::color(series);
      std::vector<std::pair<double, std::string>> effs;
      for (size_t p = 0; p < row.cells.size(); ++p)
        if (row.cells[p].measured) effs.push_back({kind == 0 ? row.cells[p].app : row.cells[p].arch, platforms_[p]});
      std::sort(effs.begin(), effs.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
      std::vector<std::pair<double, double>> pp_line;
      std::vector<std::optional<double>> prefix;
      for (size_t k = 0; k < effs.size(); ++k) {
        plot.marker(static_cast<double>(k + 1), effs[k].first, color,
                    row.application + ", " + effs[k].second + ": " + fixed(effs[k].first, 3));
        prefix.emplace_back(effs[k].first);
        pp_line.push_back({static_cast<double>(k + 1), performance_portability(prefix)});
      }
      plot.line(pp_line, color, kind == 1);
      plot.legend(row.application + (kind == 0 ? " app" : " arch"), color, kind == 1);
      ++series;
    }
  }
  return plot.str();
}

std::string PortabilityReport::roofline_svg() const {
  double peak = 1, bw = 1;
  for (const auto& roof : roofs_) peak = std::max(peak, roof.gflops), bw = std::max(bw, roof.gbs);
  SvgPlot plot("Roofline: every op against its machine's measured limits", {"FLOP per byte", 0.01, 1000, true},
               {"GFLOP/s", 0.01, std::pow(10.0, std::ceil(std::log10(peak * 1.5))), true});
  for (size_t i = 0; i < roofs_.size(); ++i) {
    std::vector<std::pair<double, double>> line;
    for (double ai = 0.01; ai <= 1000 * 1.0001; ai *= 1.25)
      line.push_back({ai, std::min(roofs_[i].gflops, ai * roofs_[i].gbs)});
    plot.line(line, "#555555", i > 0);
    plot.legend("roof: " + roofs_[i].label.substr(0, 36), "#555555", i > 0);
  }
  for (size_t p = 0; p < platforms_.size(); ++p) {
    const std::string color = SvgPlot::color(p);
    plot.legend(platforms_[p], color);
    for (const Op& o : ops_) {
      // Copies (flatten, concat) do no arithmetic: no point on a FLOP/s axis.
      if (o.platform != platforms_[p] || !o.supported || o.bytes <= 0 || o.flops <= 0) continue;
      plot.marker(o.flops / o.bytes, o.flops / o.seconds / 1e9, color,
                  o.platform + " " + o.model + " " + o.layer + " " + o.op_class + ": arch " + fixed(o.arch, 3));
    }
  }
  return plot.str();
}

}  // namespace tessera::bench

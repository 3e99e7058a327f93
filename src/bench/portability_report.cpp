#include "tessera/bench/portability_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "tessera/bench/portability_metric.hpp"
#include "tessera/bench/roofline.hpp"
#include "tessera/bench/svg_plot.hpp"
#include "tessera/core/error.hpp"

namespace tessera::bench {
namespace {

std::string fixed(double v, int digits = 2) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

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

}  // namespace

PortabilityReport PortabilityReport::build(const std::vector<std::pair<std::string, BenchResult>>& results) {
  if (results.empty()) throw Error("tessera bench report: no result files given");
  PortabilityReport r;
  std::set<std::string> hosts;
  for (const auto& [file, res] : results) hosts.insert(res.machine.hostname);
  auto platform_id = [&](const BenchResult& res, const std::string& label) {
    return hosts.size() > 1 ? res.machine.hostname + ":" + label : label;
  };
  // What each model was measured at, and by which file first: results of one model must agree.
  struct Seen {
    std::string file;
    int64_t batch, size;
  };
  std::map<std::string, Seen> model_setup;
  std::map<std::tuple<std::string, std::string, std::string>, std::pair<std::string, std::string>> op_shape;
  std::map<std::string, std::string> measured;  // platform|model|layer|class → file
  struct ModelEntry {
    std::string platform, machine, model;
    ModelResult m;
  };
  std::vector<ModelEntry> model_entries;
  std::set<std::string> roof_seen;
  // What each platform label stands for: its backend, execution space and threads.
  auto note_platform = [&r](const std::string& platform, const std::string& backend, const MachineDescription& m) {
    std::string note = (backend == "auto" ? "auto (each op on the first backend that takes it)" : backend) +
                       ", Kokkos " + m.execution_space + " on " + std::to_string(m.threads) + " thread(s)";
    // Kokkos' kernels run in the default execution space only: one thread of OpenMP is what
    // this build has of a serial run.
    if (backend == "kokkos" && m.threads == 1 && m.execution_space != "Serial")
      note += ", standing in for Kokkos Serial";
    auto& notes = r.platform_notes_[platform];
    if (std::find(notes.begin(), notes.end(), note) == notes.end()) notes.push_back(note);
  };
  for (const auto& [file, res] : results) {
    const std::string prefix = file + ": $";
    const std::string roof_label = res.machine.key() + ", " + std::to_string(res.machine.threads) + " thread(s)";
    if (roof_seen.insert(roof_label).second)
      r.roofs_.push_back({roof_label, res.peak.gflops(res.machine.threads), res.peak.gbs(res.machine.threads)});
    if (res.kind == "peak") continue;
    auto seen = model_setup.find(res.model);
    if (seen == model_setup.end()) {
      model_setup[res.model] = {file, res.batch, res.size};
    } else {
      if (seen->second.batch != res.batch)
        throw ConfigError(prefix + ".batch", "model '" + res.model + "' at batch " + std::to_string(res.batch) +
                                                 ", but at " + std::to_string(seen->second.batch) + " in " +
                                                 seen->second.file + ": results of one model must match");
      if (seen->second.size != res.size)
        throw ConfigError(prefix + ".size", "model '" + res.model + "' at size " + std::to_string(res.size) +
                                                ", but at " + std::to_string(seen->second.size) + " in " +
                                                seen->second.file + ": results of one model must match");
    }
    const double gflops = res.peak.gflops(res.machine.threads), gbs = res.peak.gbs(res.machine.threads);
    for (const OpResult& o : res.ops) note_platform(platform_id(res, o.platform), o.timing.backend, res.machine);
    for (const ModelResult& m : res.models) note_platform(platform_id(res, m.platform), m.backend, res.machine);
    for (size_t i = 0; i < res.ops.size(); ++i) {
      const OpResult& o = res.ops[i];
      const std::string at = prefix + ".ops[" + std::to_string(i) + "]";
      const auto key = std::make_tuple(res.model, o.timing.layer, o.timing.op_class);
      auto shape = op_shape.find(key);
      if (shape == op_shape.end())
        op_shape[key] = {o.timing.shape, file};
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
      op.supported = o.timing.supported;
      op.seconds = o.timing.seconds;
      op.flops = o.timing.flops;
      op.bytes = o.timing.bytes;
      op.gflops = gflops;
      op.gbs = gbs;
      op.roofline = roofline_seconds(op.flops, op.bytes, gflops, gbs);
      op.memory_bound = memory_bound(op.flops, op.bytes, gflops, gbs);
      op.arch = op.supported ? op.roofline / op.seconds : 0.0;
      const std::string id = op.platform + "|" + op.model + "|" + op.layer + "|" + op.op_class;
      if (!measured.emplace(id, file).second)
        throw ConfigError(at, "platform '" + op.platform + "' measured " + op.op_class + " of layer '" + op.layer +
                                  "' of model '" + op.model + "' already in " + measured[id]);
      r.ops_.push_back(op);
    }
    for (size_t i = 0; i < res.models.size(); ++i) {
      const ModelResult& m = res.models[i];
      const std::string pid = platform_id(res, m.platform);
      const std::string id = pid + "|" + res.model + "|model";
      if (!measured.emplace(id, file).second)
        throw ConfigError(prefix + ".models[" + std::to_string(i) + "]",
                          "platform '" + pid + "' measured model '" + res.model + "' already in " + measured[id]);
      model_entries.push_back({pid, res.machine.key(), res.model, m});
    }
  }
  // Application efficiency against the fastest platform of the same machine.
  std::map<std::string, double> best;
  auto op_key = [](const Op& o) { return o.machine + "|" + o.model + "|" + o.layer + "|" + o.op_class; };
  for (const Op& o : r.ops_)
    if (o.supported) {
      auto it = best.find(op_key(o));
      if (it == best.end() || o.seconds < it->second) best[op_key(o)] = o.seconds;
    }
  for (Op& o : r.ops_) o.app = o.supported ? best[op_key(o)] / o.seconds : 0.0;
  std::map<std::string, double> best_step;
  for (const auto& e : model_entries)
    if (e.m.supported) {
      const std::string k = e.machine + "|" + e.model;
      auto it = best_step.find(k);
      if (it == best_step.end() || e.m.step_seconds < it->second) best_step[k] = e.m.step_seconds;
    }

  // Platforms in the order first seen.
  auto add_platform = [&](const std::string& p) {
    if (std::find(r.platforms_.begin(), r.platforms_.end(), p) == r.platforms_.end()) r.platforms_.push_back(p);
  };
  for (const auto& e : model_entries) add_platform(e.platform);
  for (const Op& o : r.ops_) add_platform(o.platform);
  auto index_of = [&](const std::string& p) {
    return static_cast<size_t>(std::find(r.platforms_.begin(), r.platforms_.end(), p) - r.platforms_.begin());
  };

  // Models.
  std::vector<std::string> model_names;
  for (const auto& e : model_entries)
    if (std::find(model_names.begin(), model_names.end(), e.model) == model_names.end()) model_names.push_back(e.model);
  for (const auto& name : model_names) {
    PortabilityRow row;
    row.application = "model " + name;
    row.cells.resize(r.platforms_.size());
    for (const auto& e : model_entries) {
      if (e.model != name) continue;
      PlatformCell& c = row.cells[index_of(e.platform)];
      c.measured = true;
      c.arch = e.m.supported ? e.m.arch_efficiency : 0.0;
      c.app = e.m.supported ? best_step[e.machine + "|" + e.model] / e.m.step_seconds : 0.0;
    }
    finish_row(row);
    r.models_.push_back(row);
  }

  // Op classes over every model: time-weighted efficiencies (Σ bound / Σ time); a platform
  // that cannot run one op of the class cannot run the class.
  std::vector<std::string> classes;
  for (const Op& o : r.ops_)
    if (std::find(classes.begin(), classes.end(), o.op_class) == classes.end()) classes.push_back(o.op_class);
  for (const auto& cls : classes) {
    PortabilityRow row;
    row.application = cls;
    row.cells.resize(r.platforms_.size());
    std::vector<double> time(r.platforms_.size()), bound(r.platforms_.size()), fastest(r.platforms_.size());
    std::vector<bool> unsupported(r.platforms_.size());
    for (const Op& o : r.ops_) {
      if (o.op_class != cls) continue;
      const size_t p = index_of(o.platform);
      row.cells[p].measured = true;
      if (!o.supported) {
        unsupported[p] = true;
        continue;
      }
      time[p] += o.seconds;
      bound[p] += o.roofline;
      fastest[p] += best[op_key(o)];
    }
    for (size_t p = 0; p < r.platforms_.size(); ++p) {
      if (!row.cells[p].measured || unsupported[p] || time[p] <= 0) continue;
      row.cells[p].arch = bound[p] / time[p];
      row.cells[p].app = fastest[p] / time[p];
    }
    finish_row(row);
    r.op_classes_.push_back(row);
  }

  // Convolutions: the best, and each platform's on its largest shape.
  for (const Op& o : r.ops_) {
    // Transposed convolutions are timed apart (conv_transpose_*): the figure stays the
    // convolution layers'.
    if (!o.supported || o.op_class.rfind("conv_", 0) != 0 || o.op_class.rfind("conv_transpose_", 0) == 0) continue;
    if (o.arch > r.best_conv_arch_) {
      r.best_conv_arch_ = o.arch;
      r.best_conv_ = o.platform + " " + o.model + " " + o.layer + " " + o.op_class + " (" + o.shape + ")";
    }
  }
  for (const auto& p : r.platforms_)
    for (const char* cls : {"conv_forward", "conv_backward_data", "conv_backward_weights"}) {
      const Op* largest = nullptr;
      for (const Op& o : r.ops_)
        if (o.platform == p && o.op_class == cls && o.supported && (!largest || o.flops > largest->flops)) largest = &o;
      if (largest)
        r.largest_convs_.push_back(p + " " + cls + " on its largest shape (" + largest->model + " " + largest->layer +
                                   ", " + fixed(largest->flops / 1e9, 1) + " GFLOP): " + fixed(largest->arch));
    }
  return r;
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

std::string PortabilityReport::table(double slow_threshold) const {
  std::ostringstream s;
  auto print_rows = [&](const std::string& title, const std::vector<PortabilityRow>& rows) {
    if (rows.empty()) return;
    s << title << "\n";
    char head[64];
    std::snprintf(head, sizeof head, "%-32s", "application");
    s << head;
    for (const auto& p : platforms_) {
      std::snprintf(head, sizeof head, " %19s", p.substr(0, 19).c_str());
      s << head;
    }
    s << "   PP_arch  PP_app\n";
    std::snprintf(head, sizeof head, "%-32s", "");
    s << head;
    for (size_t i = 0; i < platforms_.size(); ++i) s << "      arch      app";
    s << "\n";
    for (const auto& row : rows) {
      char cell[64];
      std::snprintf(cell, sizeof cell, "%-32s", row.application.substr(0, 32).c_str());
      s << cell;
      for (const auto& c : row.cells) {
        if (!c.measured)
          std::snprintf(cell, sizeof cell, " %19s", "-");
        else if (c.arch == 0 && c.app == 0)
          std::snprintf(cell, sizeof cell, " %19s", "cannot run");
        else
          std::snprintf(cell, sizeof cell, " %9.3f %9.3f", c.arch, c.app);
        s << cell;
      }
      std::snprintf(cell, sizeof cell, "   %7.3f %7.3f", row.pp_arch, row.pp_app);
      s << cell
        << (row.platforms < static_cast<int>(platforms_.size())
                ? "  (over " + std::to_string(row.platforms) + " platforms)"
                : "")
        << "\n";
    }
    s << "\n";
  };
  s << "platforms:\n";
  for (const auto& p : platforms_) {
    s << "  " << p << ":";
    const auto notes = platform_notes_.find(p);
    if (notes != platform_notes_.end())
      for (size_t i = 0; i < notes->second.size(); ++i) s << (i ? "; " : " ") << notes->second[i];
    s << "\n";
  }
  s << "machine limits (measured):\n";
  for (const auto& roof : roofs_)
    s << "  " << roof.label << ": " << fixed(roof.gflops, 1) << " GFLOP/s FMA, " << fixed(roof.gbs, 1)
      << " GB/s triad\n";
  s << "\n";
  print_rows("models (step time):", models_);
  print_rows("op classes (over every model's ops, time-weighted):", op_classes_);
  for (const auto& line : largest_convs_) s << line << "\n";
  if (!best_conv_.empty()) s << "best convolution: " << fixed(best_conv_arch_, 3) << " " << best_conv_ << "\n";
  const auto slow = below(slow_threshold);
  s << "\nops below " << fixed(slow_threshold, 2) << " architectural efficiency: " << slow.size() << " of "
    << std::count_if(ops_.begin(), ops_.end(), [](const Op& o) { return o.supported; }) << "\n";
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
    s << "  " << key << ": " << list.size() << " op(s), worst " << fixed(worst.arch, 3) << " (" << worst.model << " "
      << worst.layer << ": " << fixed(worst.achieved, 1) << " of " << fixed(worst.limit, 1)
      << (worst.memory_bound ? " GB/s" : " GFLOP/s") << " in " << fixed(worst.seconds * 1e6, 0) << " us)\n";
  }
  return s.str();
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

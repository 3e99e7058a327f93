#include "tessera/train/share_balancer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <sstream>

#include "tessera/core/checked_number.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/format.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/process_memory.hpp"
#include "tessera/model/memory_check.hpp"
#include "tessera/train/trainer.hpp"

namespace tessera::train {

namespace {
/// A weight is a relative speed: positive, finite, and within a factor of a million of 1 so that
/// the whole-row shares made from them stay exact.
const RealBounds kWeightBounds{1e-6, 1e6};
}  // namespace

BalanceOptions BalanceOptions::parse(const nlohmann::json& value, const std::string& key) {
  BalanceOptions o;
  o.key = key;
  o.given = true;
  if (value.is_string() && (value == "even" || value == "measured")) {
    o.kind = value == "even" ? Kind::even : Kind::measured;
    return o;
  }
  if (!value.is_array() || value.empty())
    throw ConfigError(
        key, "expected \"even\", \"measured\" or an array of one positive weight per rank, got " + value.dump());
  for (size_t i = 0; i < value.size(); ++i) {
    const auto& w = value[i];
    const std::string where = key + "[" + std::to_string(i) + "]";
    if (!w.is_number()) throw ConfigError(where, "expected a weight, a number, got " + w.dump());
    check_real(w.get<double>(), kWeightBounds, where);
    o.weights.push_back(w.get<double>());
  }
  o.kind = Kind::weights;
  return o;
}

BalanceOptions BalanceOptions::from_flag(const std::string& text) {
  if (text == "even" || text == "measured") return parse(nlohmann::json(text), "--balance");
  nlohmann::json weights = nlohmann::json::array();
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    double w = 0;
    if (const std::string problem = read_real(item, kWeightBounds, w); !problem.empty())
      throw ConfigError("--balance", "expected even, measured or comma-separated weights such as 2,1; weight " +
                                         std::to_string(weights.size()) + ": " + problem);
    weights.push_back(w);
  }
  return parse(weights, "--balance");
}

std::vector<int64_t> BalanceOptions::integer_weights() const {
  try {
    return parallel::weights_of_speeds(weights);
  } catch (const Error& e) {
    throw ConfigError(key, e.what());
  }
}

namespace {

/// Whole rows in [1, caps] near `ideal` that add up to `total` and make the slowest group as
/// fast as whole rows allow: the floors first, then each further row to the group that would
/// finish it soonest ((rows + 1) / speed least), or, where the floors of 1 overshoot, a row
/// taken from the group that finishes last.
std::vector<int64_t> round_shares(const std::vector<double>& ideal, const std::vector<double>& speeds,
                                  const std::vector<int64_t>& caps, int64_t total) {
  const size_t n = ideal.size();
  std::vector<int64_t> rows(n);
  int64_t sum = 0;
  for (size_t g = 0; g < n; ++g) {
    rows[g] = std::clamp<int64_t>(static_cast<int64_t>(std::floor(ideal[g] + 1e-9)), 1, caps[g]);
    sum += rows[g];
  }
  const auto finish = [&](size_t g, int64_t extra) { return static_cast<double>(rows[g] + extra) / speeds[g]; };
  for (; sum < total; ++sum) {
    size_t best = n;
    for (size_t g = 0; g < n; ++g)
      if (rows[g] < caps[g] && (best == n || finish(g, 1) < finish(best, 1))) best = g;
    ++rows[best];
  }
  for (; sum > total; --sum) {
    size_t worst = n;
    for (size_t g = 0; g < n; ++g)
      if (rows[g] > 1 && (worst == n || finish(g, 0) > finish(worst, 0))) worst = g;
    --rows[worst];
  }
  return rows;
}

}  // namespace

std::vector<int64_t> rows_for_speeds(const std::vector<double>& speeds, const std::vector<int64_t>& caps,
                                     int64_t batch) {
  const size_t n = speeds.size();
  if (caps.size() != n)
    throw Error("balance: " + std::to_string(caps.size()) + " caps for " + std::to_string(n) + " groups");
  if (static_cast<int64_t>(n) > batch)
    throw Error("balance: " + std::to_string(n) + " sample groups need a batch of at least as many samples, got " +
                std::to_string(batch));
  std::vector<int64_t> cap(n);
  int64_t room = 0;
  for (size_t g = 0; g < n; ++g) {
    if (!(speeds[g] > 0.0) || !std::isfinite(speeds[g]))
      throw Error("balance: a sample group's speed must be positive");
    cap[g] = caps[g] > 0 ? std::max<int64_t>(caps[g], 1) : batch;
    room += cap[g];
  }
  if (room < batch)
    throw Error("balance: the sample groups' memory holds " + std::to_string(room) +
                " samples, fewer than the batch of " + std::to_string(batch));
  // Water filling: groups whose proportional share passes their cap take the cap, and the
  // others share what is left in proportion again.
  std::vector<double> ideal(n, 0.0);
  std::vector<bool> capped(n, false);
  for (bool changed = true; changed;) {
    changed = false;
    double free_speed = 0.0;
    int64_t left = batch;
    for (size_t g = 0; g < n; ++g) capped[g] ? left -= cap[g] : free_speed += speeds[g];
    for (size_t g = 0; g < n; ++g) {
      if (capped[g]) continue;
      ideal[g] = static_cast<double>(left) * speeds[g] / free_speed;
      if (ideal[g] > static_cast<double>(cap[g])) capped[g] = changed = true;
    }
  }
  for (size_t g = 0; g < n; ++g)
    if (capped[g]) ideal[g] = static_cast<double>(cap[g]);
  return round_shares(ideal, speeds, cap, batch);
}

void ShareBalancer::on_run_start(Trainer& trainer, const RunStart& /*start*/) {
  last_total_ = trainer.compute_seconds();
  memory_per_rank_ = model::memory_per_rank_here(trainer.group()).bytes;
  resident_at_start_ = resident_bytes();
}

void ShareBalancer::on_step_end(Trainer& trainer, const StepEnd& step) {
  const double total = trainer.compute_seconds();
  const double seconds = total - last_total_;
  last_total_ = total;
  if (step.step >= step.last_step || step.stop_signal != 0) return;  // nothing left to balance
  if (skip_ > 0) {
    --skip_;
    return;
  }
  seconds_ += seconds;
  rows_ += trainer.plan().local_batch() * trainer.options().accumulate;
  ++steps_;
  const bool due = settled_ ? step.epoch_end : steps_ >= first_steps_;
  if (!due) return;
  rebalance(trainer, step.step);
  settled_ = true;
  skip_ = 1;
  steps_ = rows_ = 0;
  seconds_ = 0.0;
}

int64_t rows_memory_holds(const model::Model& model, int64_t batch, int64_t local_rows, int64_t memory_per_rank) {
  const model::Footprint f = model.footprint(batch);
  const double per_row = 2.0 * static_cast<double>(f.activation_bytes) / static_cast<double>(local_rows);
  const double room = static_cast<double>(memory_per_rank) - static_cast<double>(f.parameter_bytes);
  if (per_row <= 0.0) return 0;
  return std::max<int64_t>(1, static_cast<int64_t>(room / per_row));
}

int64_t rows_memory_measured(double resident_at_start, double peak_resident, int64_t local_rows,
                             int64_t memory_per_rank) {
  const double per_row = (peak_resident - resident_at_start) / static_cast<double>(std::max<int64_t>(local_rows, 1));
  if (!(per_row > 0.0) || memory_per_rank <= 0) return 0;
  const double room = 0.9 * static_cast<double>(memory_per_rank) - resident_at_start;
  return std::max<int64_t>(1, static_cast<int64_t>(room / per_row));
}

int64_t ShareBalancer::memory_cap(Trainer& trainer) const {
  const int64_t rows = trainer.plan().local_batch();
  const int64_t estimated = rows_memory_holds(trainer.model(), trainer.options().batch_size, rows, memory_per_rank_);
  const int64_t measured = rows_memory_measured(resident_at_start_, peak_resident_bytes(), rows, memory_per_rank_);
  if (estimated <= 0) return measured;
  return measured > 0 ? std::min(estimated, measured) : estimated;
}

ShareBalancer::GroupSpeeds ShareBalancer::gather(Trainer& trainer) const {
  const parallel::Communicator& group = trainer.group();
  const int ranks = group.size(), groups = trainer.model().input_grid().distribution().sample;
  const int per_group = ranks / groups;
  // [seconds, rows, memory cap] of every rank.
  std::vector<double> all(static_cast<size_t>(3 * ranks), 0.0);
  const auto me = static_cast<size_t>(3 * group.rank());
  all[me] = seconds_;
  all[me + 1] = static_cast<double>(rows_);
  all[me + 2] = static_cast<double>(memory_cap(trainer));
  group.allreduce_sum(all.data(), static_cast<int64_t>(all.size()));
  // A sample group is as fast as its slowest rank (its ranks share each sample), and holds
  // as much as its fullest one.
  GroupSpeeds out{std::vector<double>(static_cast<size_t>(groups), 0.0),
                  std::vector<int64_t>(static_cast<size_t>(groups), 0), all.size() * sizeof(double)};
  for (int g = 0; g < groups; ++g) {
    double slowest = 0.0, rows = 0.0;
    int64_t& cap = out.caps[static_cast<size_t>(g)];
    for (int k = 0; k < per_group; ++k) {
      const auto r = static_cast<size_t>(3 * (g * per_group + k));
      slowest = std::max(slowest, all[r]);
      rows = all[r + 1];
      const auto rank_cap = static_cast<int64_t>(all[r + 2]);
      if (rank_cap > 0) cap = cap == 0 ? rank_cap : std::min(cap, rank_cap);
    }
    if (slowest > 0.0 && rows > 0.0) out.speeds[static_cast<size_t>(g)] = rows / slowest;
  }
  return out;
}

void ShareBalancer::rebalance(Trainer& trainer, int64_t step) {
  const auto start = std::chrono::steady_clock::now();
  const GroupSpeeds measured = gather(trainer);
  const std::vector<double>& speeds = measured.speeds;
  const std::vector<int64_t>& caps = measured.caps;
  if (std::any_of(speeds.begin(), speeds.end(), [](double v) { return !(v > 0.0); })) return;  // nothing measured
  const int64_t batch = trainer.options().batch_size;
  const std::vector<int64_t> now = trainer.plan().slice_rows(batch);
  const std::vector<int64_t> wanted = rows_for_speeds(speeds, caps, batch);
  double step_now = 0.0, step_wanted = 0.0;
  bool over_cap = false;
  std::string capped;
  const double total_speed = std::accumulate(speeds.begin(), speeds.end(), 0.0);
  for (size_t g = 0; g < speeds.size(); ++g) {
    step_now = std::max(step_now, static_cast<double>(now[g]) / speeds[g]);
    step_wanted = std::max(step_wanted, static_cast<double>(wanted[g]) / speeds[g]);
    over_cap = over_cap || (caps[g] > 0 && now[g] > caps[g]);
    if (caps[g] > 0 && static_cast<double>(caps[g]) < static_cast<double>(batch) * speeds[g] / total_speed)
      capped += (capped.empty() ? "" : ", ") + std::to_string(g);
  }
  // A change re-creates the layers' ops: worth it for a gain of 2% or more, or to get
  // under a memory cap.
  const bool change = wanted != now && (step_wanted < 0.98 * step_now || over_cap);
  if (change) trainer.set_group_rows(wanted, "measured balance");
  const double decided_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (trainer.group().rank() != 0) return;
  std::string speeds_text;
  for (double v : speeds) speeds_text += (speeds_text.empty() ? "" : "/") + format("%.1f", v);
  trainer.progress().finish_line();
  log::info("balance after step " + std::to_string(step) + ": speeds " + speeds_text +
            " samples/s per sample group; shares " + parallel::shares_text(now) +
            (change ? " -> " + parallel::shares_text(wanted) : " kept") + " of " + std::to_string(batch) +
            format(" (step %.3f s -> %.3f s predicted)", step_now, change ? step_wanted : step_now) +
            (capped.empty() ? "" : "; capped by memory: sample group(s) " + capped));
  trainer.metrics().write({{"event", "balance"},
                           {"step", step},
                           {"speeds", speeds},
                           {"shares_before", now},
                           {"shares", change ? wanted : now},
                           {"changed", change},
                           {"memory_caps", caps},
                           {"predicted_step_s", change ? step_wanted : step_now},
                           {"gathered_bytes", measured.bytes},
                           {"decision_s", decided_s}});
}

}  // namespace tessera::train

#include "tessera/train/ltfb/tournament_hook.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "tessera/core/error.hpp"
#include "tessera/core/format.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/profiling.hpp"
#include "tessera/core/rng.hpp"
#include "tessera/core/statistics.hpp"
#include "tessera/parallel/peer_exchange.hpp"
#include "tessera/train/ltfb/tournament_pairing.hpp"
#include "tessera/train/trainer.hpp"

namespace tessera::train {

TournamentHook::TournamentHook(const LtfbOptions& options, const PopulationLayout& layout, io::Dataset& tournament_data,
                               uint64_t seed)
    : options_(options), layout_(layout), data_(tournament_data), seed_(seed) {}

void TournamentHook::on_run_start(Trainer& trainer, const RunStart& start) {
  summary_ = PopulationSummary{};
  for (const auto& [key, value] : trainer.optimizer().hyperparameters()) summary_.hyperparameter_keys.push_back(key);
  // A trainer that ran past its partners would wait at the next tournament for ever.
  std::vector<double> extremes{static_cast<double>(start.start_step), -static_cast<double>(start.start_step),
                               static_cast<double>(start.last_step), -static_cast<double>(start.last_step)};
  layout_.job().allreduce_max(extremes.data(), 4);
  if (extremes[0] != -extremes[1] || extremes[2] != -extremes[3])
    throw Error("the population's trainers would not run the same steps (starting between step " +
                std::to_string(static_cast<int64_t>(-extremes[1])) + " and " +
                std::to_string(static_cast<int64_t>(extremes[0])) + ", ending between " +
                std::to_string(static_cast<int64_t>(-extremes[3])) + " and " +
                std::to_string(static_cast<int64_t>(extremes[2])) + "): every trainer needs the same data size, " +
                "batch, epochs and checkpoint step");
}

double TournamentHook::metric_of(Trainer& trainer) {
  ProfileRegion region("tournament_evaluate");
  const ValidationResult v = trainer.evaluate(data_);
  if (!options_.higher_is_better) return v.loss;
  if (v.accuracy < 0)
    throw ConfigError("$.training.ltfb.metric",
                      "\"accuracy\" needs a classification loss; this model's loss gives none (use \"loss\")");
  return v.accuracy;
}

void TournamentHook::adopt(Trainer& trainer, const TrainerState& winner, int64_t round) {
  winner.install(trainer.model().parameters(), trainer.optimizer());
  if (!options_.perturb) return;
  // Population-based training's explore step; the draw depends on (seed, round, trainer)
  // alone, so every rank of the trainer perturbs alike.
  const uint64_t stream =
      0x7065727475726200ull ^ (static_cast<uint64_t>(round) << 20) ^ static_cast<uint64_t>(layout_.trainer());
  const auto current = trainer.optimizer().hyperparameters();
  for (size_t k = 0; k < options_.hyperparameters.size(); ++k) {
    const HyperparameterRange& r = options_.hyperparameters[k];
    const double factor = rng::uniform(seed_, stream, k) < 0.5f ? 0.8 : 1.2;
    const double value = std::clamp(current.at(r.key) * factor, r.min, r.max);
    trainer.optimizer().set_hyperparameter(r.key, value, "$.training.ltfb.hyperparameters");
  }
}

TournamentHook::Outcome TournamentHook::pairwise_round(Trainer& trainer, int64_t round) {
  Outcome o;
  o.metric = metric_of(trainer);
  const int64_t me = layout_.trainer();
  for (const auto& [a, b] : tournament_pairs(seed_, round, layout_.trainers())) {
    if (a == me) o.partner = b;
    if (b == me) o.partner = a;
  }
  if (o.partner < 0) return o;  // the odd trainer out
  model::ParameterStore& params = trainer.model().parameters();
  const TrainerState own = TrainerState::capture(params, trainer.optimizer());
  const TrainerState theirs = [&] {
    ProfileRegion region("tournament_exchange");
    return own.exchange(layout_.peers(), static_cast<int>(o.partner));
  }();
  theirs.install_model(params);
  const double partner_here = metric_of(trainer);
  // What the partner measured: its model and this one's, on its data.
  const std::vector<double> there =
      parallel::exchange_doubles(layout_.peers(), static_cast<int>(o.partner), {o.metric, partner_here}, "tournament");
  // Each score sums the lower trainer's measurement first, on both sides alike.
  const bool lower = me < o.partner;
  o.score = (lower ? o.metric + there[1] : there[1] + o.metric) / 2.0;
  o.partner_score = (lower ? partner_here + there[0] : there[0] + partner_here) / 2.0;
  const bool i_win = better_metric(o.score, o.partner_score, options_.higher_is_better) ||
                     (!better_metric(o.partner_score, o.score, options_.higher_is_better) && lower);
  o.winner = i_win ? me : o.partner;
  if (i_win)
    own.install_model(params);
  else
    adopt(trainer, theirs, round);
  return o;
}

TournamentHook::Outcome TournamentHook::truncation_round(Trainer& trainer, int64_t round) {
  Outcome o;
  o.metric = metric_of(trainer);
  const std::vector<double> metrics = layout_.share({o.metric});
  const int64_t me = layout_.trainer();
  for (const auto& [winner, loser] : truncation_pairs(metrics, options_.truncation_count, options_.higher_is_better)) {
    if (winner == me) {
      o.partner = loser;
      o.winner = me;
      TrainerState::capture(trainer.model().parameters(), trainer.optimizer())
          .send(layout_.peers(), static_cast<int>(loser));
    } else if (loser == me) {
      o.partner = winner;
      o.winner = winner;
      const TrainerState own = TrainerState::capture(trainer.model().parameters(), trainer.optimizer());
      adopt(trainer, TrainerState::receive(layout_.peers(), static_cast<int>(winner), own), round);
    }
    if (winner == me || loser == me) {
      o.score = metrics[static_cast<size_t>(me)];
      o.partner_score = metrics[static_cast<size_t>(o.partner)];
    }
  }
  return o;
}

void TournamentHook::on_step_end(Trainer& trainer, const StepEnd& step) {
  // Held also when the run stops after this step (all trainers agree on that): the checkpoint
  // then holds the round's outcome, and the resumed run goes on as the uninterrupted one.
  if (options_.selection == Selection::none || step.step % options_.round_steps != 0 || step.step < options_.start_step)
    return;
  ProfileRegion region("tournament");
  const auto start = std::chrono::steady_clock::now();
  const int64_t round = step.step / options_.round_steps;
  const Outcome mine =
      options_.selection == Selection::pairwise ? pairwise_round(trainer, round) : truncation_round(trainer, round);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ++summary_.rounds;
  summary_.tournament_seconds += seconds;
  report_round(trainer, round, step.step, mine, seconds);
  // The run's last validation came before this round; the models that leave the run (and its
  // checkpoint) are those after it.
  if (step.step == step.last_step && trainer.data().validation) revalidate(trainer, step);
}

void TournamentHook::revalidate(Trainer& trainer, const StepEnd& step) {
  const ValidationResult v = trainer.validate();
  TrainingReport& report = trainer.report();
  report.validation_loss = v.loss;
  report.validation_baseline = v.baseline;
  report.validation_accuracy = v.accuracy;
  nlohmann::json rec{{"event", "validation"},
                     {"step", step.step},
                     {"epoch", step.epoch},
                     {"loss", v.loss},
                     {"after_tournament", true}};
  if (v.accuracy >= 0) rec["accuracy"] = v.accuracy;
  trainer.metrics().write(rec);
}

void TournamentHook::report_round(Trainer& trainer, int64_t round, int64_t step, const Outcome& mine, double seconds) {
  std::vector<double> values{mine.metric,        static_cast<double>(mine.partner), mine.score,
                             mine.partner_score, static_cast<double>(mine.winner),  seconds};
  for (const auto& [key, value] : trainer.optimizer().hyperparameters()) values.push_back(value);
  const size_t width = values.size();
  const std::vector<double> all = layout_.share(values);
  if (layout_.job().rank() != 0) return;
  auto at = [&](int64_t t, size_t k) { return all[static_cast<size_t>(t) * width + k]; };
  const int64_t trainers = layout_.trainers();
  nlohmann::json rec{
      {"event", "tournament"}, {"round", round}, {"step", step}, {"selection", options_.selection_name()}};
  std::vector<double> metrics;
  nlohmann::json pairs = nlohmann::json::array(), hp = nlohmann::json::array();
  double round_seconds = 0.0;
  int64_t adopted = 0;
  for (int64_t t = 0; t < trainers; ++t) {
    metrics.push_back(at(t, 0));
    round_seconds = std::max(round_seconds, at(t, 5));
    const auto partner = static_cast<int64_t>(at(t, 1));
    const auto winner = static_cast<int64_t>(at(t, 4));
    if (winner >= 0 && winner != t) ++adopted;
    nlohmann::json h = nlohmann::json::object();
    for (size_t k = 0; k < summary_.hyperparameter_keys.size(); ++k) h[summary_.hyperparameter_keys[k]] = at(t, 6 + k);
    hp.push_back(h);
    // Each pair once, from its winner's side.
    if (partner >= 0 && winner == t)
      pairs.push_back({{"trainers", {t, partner}}, {"scores", {at(t, 2), at(t, 3)}}, {"winner", winner}});
  }
  rec["metrics"] = metrics;
  rec["pairs"] = pairs;
  rec["hyperparameters"] = hp;
  rec["seconds"] = round_seconds;
  trainer.metrics().write(rec);
  const auto best = options_.higher_is_better ? std::max_element(metrics.begin(), metrics.end())
                                              : std::min_element(metrics.begin(), metrics.end());
  const std::string name = options_.higher_is_better ? "accuracy" : "loss";
  trainer.progress().finish_line();
  log::info("tournament " + std::to_string(round) + " (step " + std::to_string(step) + "): best " + name + " " +
            format("%.4g", *best) + " (trainer " + std::to_string(best - metrics.begin()) + "), median " +
            format("%.4g", median(metrics)) + "; " + std::to_string(adopted) + " of " + std::to_string(trainers) +
            " trainers adopted a winner's model; " + format("%.4g", round_seconds) + " s");
}

void TournamentHook::on_run_end(Trainer& trainer, const RunEnd& /*end*/) {
  std::vector<double> values{trainer.report().validation_loss};
  for (const auto& [key, value] : trainer.optimizer().hyperparameters()) values.push_back(value);
  const size_t width = values.size();
  const std::vector<double> all = layout_.share(values);
  summary_.validation_loss.clear();
  summary_.hyperparameters.clear();
  for (int64_t t = 0; t < layout_.trainers(); ++t) {
    const auto first = all.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(t) * width);
    summary_.validation_loss.push_back(*first);
    summary_.hyperparameters.emplace_back(first + 1, first + static_cast<std::ptrdiff_t>(width));
  }
  // The best by validation loss; none without a validation set (each loss then −1).
  summary_.best_trainer = -1;
  for (int64_t t = 0; t < layout_.trainers(); ++t) {
    const double loss = summary_.validation_loss[static_cast<size_t>(t)];
    if (loss >= 0 && (summary_.best_trainer < 0 ||
                      better_metric(loss, summary_.validation_loss[static_cast<size_t>(summary_.best_trainer)], false)))
      summary_.best_trainer = t;
  }
  nlohmann::json losses = nlohmann::json::array();
  for (const double loss : summary_.validation_loss) losses.push_back(loss >= 0 ? nlohmann::json(loss) : nullptr);
  nlohmann::json rec{{"event", "population"},
                     {"rounds", summary_.rounds},
                     {"best_trainer", summary_.best_trainer >= 0 ? nlohmann::json(summary_.best_trainer) : nullptr},
                     {"validation_loss", losses},
                     {"tournament_seconds", summary_.tournament_seconds}};
  trainer.metrics().write(rec);
}

}  // namespace tessera::train

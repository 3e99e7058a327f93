#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/model/model.hpp"
#include "tessera/train/trainer_hook.hpp"

namespace tessera::train {

/// "balance" in the training section (or --balance): how each global batch splits over the
/// ranks' sample groups.
///  - "even" (the default): shares that differ by at most one sample;
///  - [w0, w1, ...]: in proportion to one weight per rank of the trainer's group;
///  - "measured": even at first; after the first steps, in proportion to each sample group's
///    measured speed (ShareBalancer), and set again at each epoch's end when the speeds drift.
struct BalanceOptions {
  enum class Kind { even, weights, measured };
  Kind kind = Kind::even;
  std::vector<double> weights;             // Kind::weights: one per rank, each > 0
  std::string key = "$.training.balance";  // where it was set, for errors
  bool given = false;                      // set in the config or on the command line

  /// Reads "even", "measured" or an array of positive numbers; throws ConfigError naming `key`.
  static BalanceOptions parse(const nlohmann::json& value, const std::string& key);
  /// --balance: "even", "measured" or comma-separated weights ("2,1").
  static BalanceOptions from_flag(const std::string& text);
  /// Integer weights for SampleShares: `weights` scaled, each at least 1.
  std::vector<int64_t> integer_weights() const;
};

/// The rows each sample group takes of a batch of `batch` samples: in proportion to `speeds`
/// (samples per second), none above its entry of `caps` (the most its memory holds; 0: no
/// cap) and each at least one; rounded so that the slowest group finishes as early as whole
/// rows allow. Throws Error when the caps hold fewer than `batch` samples or the groups
/// outnumber them.
std::vector<int64_t> rows_for_speeds(const std::vector<double>& speeds, const std::vector<int64_t>& caps,
                                     int64_t batch);

/// The most rows of a global batch of `batch` samples this rank's memory holds
/// (`memory_per_rank` bytes), by the memory check's estimate (model::training_memory_need):
/// activations and their gradients grow with the rows, which are now `local_rows`; parameters
/// and their gradients do not. 0: nothing grows with the rows.
int64_t rows_memory_holds(const model::Model& model, int64_t batch, int64_t local_rows, int64_t memory_per_rank);

/// The most rows a rank holds within `memory_per_rank` bytes, from what it measured: it held
/// `resident_at_start` bytes before its first step and at most `peak_resident` while running
/// `local_rows` rows a step. All growth is counted as the rows', and a tenth of the memory is
/// left to the allocator and what the rows have not touched yet. The estimate above counts
/// tensors only: a process also holds its libraries, its data and the backends' workspaces,
/// which on a 16³ CosmoFlow came to 1.56 MiB a row and 106 MiB fixed against an estimate of
/// 0.74 MiB a row. 0: nothing measured yet (the peak has not grown).
int64_t rows_memory_measured(double resident_at_start, double peak_resident, int64_t local_rows,
                             int64_t memory_per_rank);

/// Measured balance ("balance": "measured"): times each rank's compute (reading, forward, loss,
/// backward; not the wait for the gradient sum, where a fast rank waits for a slow one) over
/// the first steps and then over each epoch, skipping the step after a change (which
/// re-creates the layers' ops). After `first_steps` measured steps, and at each epoch's end
/// after that, it gathers the speeds and gives the trainer new shares in proportion
/// (Trainer::balance), within each rank's memory. Every rank decides alike from the same
/// gathered numbers.
class ShareBalancer final : public TrainerHook {
 public:
  explicit ShareBalancer(int64_t first_steps = 4) : first_steps_(first_steps) {}
  void on_run_start(Trainer& trainer, const RunStart& start) override;
  void on_step_end(Trainer& trainer, const StepEnd& step) override;

 private:
  /// The most rows this rank's memory holds (0: no limit known): by the memory check's
  /// estimate, and by what the measured steps held (rows_memory_measured), the smaller.
  int64_t memory_cap(Trainer& trainer) const;
  /// Each sample group's speed (samples/s of its slowest rank; 0: not measured) and memory cap
  /// (its fullest rank's; 0: none), gathered from every rank, and the bytes that took.
  struct GroupSpeeds {
    std::vector<double> speeds;
    std::vector<int64_t> caps;
    size_t bytes = 0;
  };
  GroupSpeeds gather(Trainer& trainer) const;
  /// Gathers the window's speeds and caps, and changes the shares where that pays.
  void rebalance(Trainer& trainer, int64_t step);

  int64_t first_steps_;
  int64_t memory_per_rank_ = 0;
  double resident_at_start_ = 0.0;  // bytes held before the first step: model, data, libraries
  bool settled_ = false;            // the first measurement has set shares
  int64_t skip_ = 1;                // steps still to skip before measuring
  int64_t steps_ = 0;               // measured steps in the window
  double seconds_ = 0.0, last_total_ = 0.0;
  int64_t rows_ = 0;
};

}  // namespace tessera::train

#pragma once
#include <cstdint>

namespace tessera::train {

class Trainer;

/// Where a run starts and where it will stop.
struct RunStart {
  int64_t start_step = 0;  // steps already taken (a resumed run starts past 0)
  int64_t last_step = 0;   // the run stops when this many steps are taken
};

/// An optimizer step just taken.
struct StepEnd {
  int64_t step = 0;        // steps taken, this one included
  int64_t epoch = 0;       // the epoch the step belongs to (0-based)
  int64_t last_step = 0;   // the run stops when this many steps are taken
  double loss = 0.0;       // the step's mean training loss over the global batch
  float lr = 0.0f;         // the learning rate the step used
  bool epoch_end = false;  // the step finished its epoch
  // A logging window (every log_every steps, and at the end of an epoch and of the run)
  // closed with this step: the mean loss and samples per second since the previous one.
  bool window_end = false;
  double window_loss = 0.0;
  double window_samples_per_s = 0.0;
  double allreduce_wait_s = 0.0;     // cumulative, this rank
  double allreduce_exposed_s = 0.0;  // cumulative, the last rank's (what no rank could hide)
  // A stop was requested on some rank (core/stop_request.hpp): the signal, and this is the
  // run's last step; it also closes the logging window. 0: none.
  int stop_signal = 0;
  // Under loss scaling: the step's gradients overflowed on some rank, so no rank took it.
  bool skipped = false;
};

/// A run after its last step, with the trainer's report complete.
struct RunEnd {
  int64_t steps = 0;       // steps taken in all
  double elapsed_s = 0.0;  // the run's training time, up to its last step
};

/// Something that happens around the training loop: validation, logs, checkpoints, profiles,
/// or anything an owner adds (Trainer::add_hook), such as a tournament round that compares
/// models and replaces this one's parameters and optimizer state. The hooks are called in
/// order at each point; each gets the trainer, through which it reaches the model, optimizer,
/// report, metrics log, console and validation. Every rank calls every hook, so a hook may use
/// the group's collectives; what it prints or writes it does on rank 0 alone.
class TrainerHook {
 public:
  virtual ~TrainerHook();
  /// After a resume, before the first step.
  virtual void on_run_start(Trainer& /*trainer*/, const RunStart& /*start*/) {}
  /// Before step `step` (0-based over all epochs) reads its data.
  virtual void on_step_start(Trainer& /*trainer*/, int64_t /*step*/) {}
  virtual void on_step_end(Trainer& /*trainer*/, const StepEnd& /*step*/) {}
  /// After the last step, before the report's totals are summed over the ranks (a final
  /// checkpoint goes here).
  virtual void on_training_end(Trainer& /*trainer*/, int64_t /*steps*/) {}
  /// After the report is complete.
  virtual void on_run_end(Trainer& /*trainer*/, const RunEnd& /*end*/) {}
};

}  // namespace tessera::train

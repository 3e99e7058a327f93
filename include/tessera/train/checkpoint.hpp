#pragma once
#include <cstdint>
#include <string>

#include "tessera/model/parameter_store.hpp"
#include "tessera/optim/optimizer.hpp"

namespace tessera::train {

/// Where training stands. With the seed, this is the whole random state: data order is a
/// function of (seed, epoch) and dropout masks of (seed, step), so no generator state needs
/// saving.
struct TrainingProgress {
  int64_t step = 0;  // optimizer steps taken
  uint64_t seed = 0;
  /// Dynamic loss scaling's state (LossScaler); loss_scale 0: the run had none (a checkpoint
  /// without it resumes with the scaler's initial scale).
  double loss_scale = 0;
  int64_t good_steps = 0;
};

/// Checkpoint file: the 8-byte magic "TSRACKPT", a uint64 header length, a JSON
/// header (format version, progress, every tensor's name and size, an FNV-1a checksum of the
/// payload), then the raw float32 payload: trainable parameters, buffers, optimizer state.
/// Numbers are in the writer's byte order (little-endian on every platform Tessera targets).
/// Written atomically (temporary file, fsync, rename), so the previous checkpoint survives a
/// crash mid-write. Parameters are saved whole: when the store holds shards of channel-split
/// layers they are gathered, so every rank of the trainer must call this (a collective) and
/// only those passing `write` write the file; the file is the same as one rank would write.
void save_checkpoint(const std::string& path, const model::ParameterStore& params, optim::Optimizer& optimizer,
                     const TrainingProgress& progress, bool write = true);

/// Restores parameters, buffers and optimizer state. Throws IoError naming the file for a
/// missing, truncated or corrupt file, and Error naming the first mismatching tensor when the
/// checkpoint belongs to another model or optimizer. A shard takes its slice of the whole
/// parameter, so a checkpoint resumes under any layout of the same model.
TrainingProgress load_checkpoint(const std::string& path, model::ParameterStore& params, optim::Optimizer& optimizer);

/// Reads the whole checkpoint at `path` and checks it as load_checkpoint does (magic, header,
/// payload length and checksum, finite values) without a model to load it into; returns where
/// it stands. Throws IoError naming the file and what is wrong with it.
TrainingProgress verify_checkpoint(const std::string& path);

}  // namespace tessera::train

#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tessera/parallel/communicator.hpp"

namespace tessera::train {

/// A batch job's checkpoints (`tessera train --resume auto`): the newest at PATH and the one
/// written before it at PATH.previous, so that a requeued job can go on from the newest complete
/// one even when the newest was damaged after it was written (a node lost while the file system
/// still held it in cache, a copy cut short). A run without --resume auto keeps only PATH.

/// PATH.previous: where the checkpoint before the newest is kept.
std::string previous_checkpoint_path(const std::string& path);

/// Before a new checkpoint replaces the one at `path`: makes the current one the previous
/// (a hard link, or a copy where the file system has none), atomically, so that at every
/// moment `path` and PATH.previous are each a complete file or absent. No-op when `path` does
/// not exist. Throws IoError naming the file.
void keep_previous_checkpoint(const std::string& path);

/// Where a job resumes: the file, its step, and each newer candidate passed over with why.
struct ResumePoint {
  std::string file;
  int64_t step = 0;
  std::vector<std::string> passed_over;
};

/// The newest complete checkpoint among `path` and PATH.previous (each read whole and its
/// checksum verified, verify_checkpoint): nullopt when neither exists (the job's first start).
/// Throws IoError naming each file and what is wrong with it when files exist but none is
/// complete: starting over then would silently lose the job's work.
std::optional<ResumePoint> newest_complete_checkpoint(const std::string& path);

/// newest_complete_checkpoint decided on rank 0 of `group` and agreed by all: every rank gets
/// the same answer, or every rank throws (rank 0 with the reasons). Collective.
std::optional<ResumePoint> agree_on_resume_point(const std::string& path, const parallel::Communicator& group);

}  // namespace tessera::train

#include "tessera/train/checkpoint_rotation.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "tessera/core/atomic_file.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/train/checkpoint.hpp"

namespace tessera::train {
namespace {

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

void copy_file_atomically(const std::string& from, const std::string& to) {
  std::ifstream in(from, std::ios::binary);
  if (!in) throw IoError(from + ": cannot open the checkpoint to keep it as " + to);
  write_file_atomically(to, [&](std::FILE* f) {
    std::vector<char> buffer(1 << 20);
    while (in) {
      in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
      write_all(f, buffer.data(), static_cast<size_t>(in.gcount()), to);
    }
    if (in.bad()) throw IoError(from + ": read failed while keeping it as " + to);
  });
}

}  // namespace

std::string previous_checkpoint_path(const std::string& path) { return path + ".previous"; }

void keep_previous_checkpoint(const std::string& path) {
  if (!exists(path)) return;
  const std::string previous = previous_checkpoint_path(path);
  const std::string link_name = previous + ".tmp." + std::to_string(::getpid());
  ::unlink(link_name.c_str());
  // A link costs nothing and the new checkpoint is then renamed over `path`, leaving the old
  // inode to PATH.previous alone. Some parallel file systems refuse hard links: copy there.
  if (::link(path.c_str(), link_name.c_str()) != 0) {
    copy_file_atomically(path, previous);
    return;
  }
  if (std::rename(link_name.c_str(), previous.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(link_name.c_str());
    throw IoError(previous + ": cannot keep the previous checkpoint: " + why);
  }
}

std::optional<ResumePoint> newest_complete_checkpoint(const std::string& path) {
  std::optional<ResumePoint> best;
  std::vector<std::string> damaged;
  bool any = false;
  for (const std::string& file : {path, previous_checkpoint_path(path)}) {
    if (!exists(file)) continue;
    any = true;
    try {
      const TrainingProgress progress = verify_checkpoint(file);
      if (!best || progress.step > best->step) best = ResumePoint{file, progress.step, {}};
    } catch (const IoError& e) {
      damaged.push_back(e.what());
    }
  }
  if (!any) return std::nullopt;
  if (!best) {
    std::string why;
    for (const auto& d : damaged) why += "\n  " + d;
    throw IoError("--resume auto: no complete checkpoint to resume from at " + path + " or " +
                  previous_checkpoint_path(path) + ":" + why +
                  "\n(starting over would discard the job's work; remove the files to start fresh)");
  }
  best->passed_over = damaged;
  return best;
}

std::optional<ResumePoint> agree_on_resume_point(const std::string& path, const parallel::Communicator& group) {
  // Rank 0 reads the files (not every rank of a large job at once) and sends the outcome as
  // numbers: 0 no checkpoint, 1 `path`, 2 PATH.previous, 3 none usable; and the step.
  int64_t decision[2] = {0, 0};
  std::optional<ResumePoint> point;
  std::string failure;
  if (group.rank() == 0) {
    try {
      point = newest_complete_checkpoint(path);
      if (point) decision[0] = point->file == path ? 1 : 2;
      if (point) decision[1] = point->step;
    } catch (const IoError& e) {
      decision[0] = 3;
      failure = e.what();
    }
  }
  group.allreduce_sum(decision, 2);
  if (decision[0] == 3) {
    if (group.rank() == 0) throw IoError(failure);
    throw IoError("--resume auto: rank 0 found no complete checkpoint at " + path + " (it says why)");
  }
  if (decision[0] == 0) return std::nullopt;
  if (group.rank() != 0) point = ResumePoint{decision[0] == 1 ? path : previous_checkpoint_path(path), decision[1], {}};
  if (group.rank() == 0 && decision[0] == 2 && exists(path)) {
    // Set aside, not deleted: it may be looked at; and never rotated into PATH.previous by the
    // next checkpoint, which would replace the complete one the job resumes from.
    const std::string aside = path + ".damaged";
    if (std::rename(path.c_str(), aside.c_str()) != 0)
      throw IoError(path + ": cannot set the damaged checkpoint aside as " + aside + ": " + std::strerror(errno));
    for (const auto& why : point->passed_over) log::warn(why);
    log::warn("--resume auto: the newest checkpoint is damaged (kept as " + aside + "); resuming from the one before it, " +
              point->file + ", at step " + std::to_string(point->step));
  }
  return point;
}

}  // namespace tessera::train

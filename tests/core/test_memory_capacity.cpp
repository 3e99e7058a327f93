#include <stdlib.h>
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "support/scratch_folder.hpp"
#include "tessera/core/memory_capacity.hpp"

using namespace tessera;
namespace fs = std::filesystem;

namespace {

/// A cgroup file system tree in a temporary folder, removed at the end of the test.
class CgroupTree {
 public:
  CgroupTree() : folder_("tessera_cgroups"), root_(folder_.path()) {}

  /// Writes `value` to root/relative (making its folders).
  void write(const std::string& relative, const std::string& value) const {
    const fs::path file = fs::path(root_) / relative;
    fs::create_directories(file.parent_path());
    std::ofstream(file) << value << "\n";
  }
  const std::string& root() const { return root_; }

 private:
  testing::ScratchFolder folder_;
  std::string root_;
};

constexpr int64_t kNoLimit = std::numeric_limits<int64_t>::max();

}  // namespace

TEST_CASE("A job's cgroup v1 memory limit is read along its own path, the smallest above it binding",
          "[core][memory]") {
  CgroupTree tree;
  // As a batch system without a cgroup namespace leaves it: the root unlimited (v1's huge
  // number), the job's own cgroup limited, and its user's cgroup more tightly still.
  tree.write("memory/memory.limit_in_bytes", "9223372036854771712");
  tree.write("memory/slurm/uid_1/job_2/memory.limit_in_bytes", "3221225472");
  tree.write("memory/slurm/uid_1/memory.limit_in_bytes", "2147483648");
  const std::string membership = "5:cpuset:/slurm/uid_1/job_2\n4:memory:/slurm/uid_1/job_2\n0::/\n";
  CHECK(cgroup_memory_limit(tree.root(), membership) == 2147483648);
  // Only the job's own limit: that one.
  tree.write("memory/slurm/uid_1/memory.limit_in_bytes", "9223372036854771712");
  CHECK(cgroup_memory_limit(tree.root(), membership) == 3221225472);
  // A process elsewhere in the hierarchy does not get the job's limit.
  CHECK(cgroup_memory_limit(tree.root(), "4:memory:/other\n") == 9223372036854771712);
}

TEST_CASE("A cgroup v2 memory.max is read along the process's path; max is no limit", "[core][memory]") {
  CgroupTree tree;
  tree.write("user.slice/job/memory.max", "max");
  tree.write("user.slice/memory.max", "1073741824");
  CHECK(cgroup_memory_limit(tree.root(), "0::/user.slice/job\n") == 1073741824);
  tree.write("user.slice/memory.max", "max");
  CHECK(cgroup_memory_limit(tree.root(), "0::/user.slice/job\n") == kNoLimit);
  // Hybrid systems mount v2 at unified/.
  tree.write("unified/user.slice/job/memory.max", "536870912");
  CHECK(cgroup_memory_limit(tree.root(), "0::/user.slice/job\n") == 536870912);
}

TEST_CASE("Memory shared with other controllers in one v1 hierarchy is found; no files is no limit", "[core][memory]") {
  CgroupTree tree;
  tree.write("memory/batch/memory.limit_in_bytes", "1000000");
  CHECK(cgroup_memory_limit(tree.root(), "3:cpu,memory:/batch\n") == 1000000);
  CHECK(cgroup_memory_limit(tree.root(), "3:cpu,cpuacct:/batch\n") == kNoLimit);
  CHECK(cgroup_memory_limit(tree.root() + "/absent", "4:memory:/batch\n0::/\n") == kNoLimit);
  // Without /proc/self/cgroup, the roots alone.
  tree.write("memory/memory.limit_in_bytes", "2000000");
  CHECK(cgroup_memory_limit(tree.root(), "") == 2000000);
}

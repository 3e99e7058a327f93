// Run under mpirun at 1, 2 or 3 ranks (one node). Checks what `tessera calibrate` measures with:
// the Communicator operations its timings call give exact results at every rank count (and copy
// on one rank); the ranks sit on one node; and time_collectives times every collective
// at every size over the first p ranks for each p, agreeing on each group's times, with a fit
// that resolves them. Exit status 0 on every rank when all checks pass.
#include <cmath>
#include <string>
#include <vector>

#include "parallel/mpi_check.hpp"
#include "support/mpi_program.hpp"
#include "tessera/plan/collective_timing.hpp"
#include "tessera/plan/node_layout.hpp"

using namespace tessera;

namespace {

void check_reductions(const parallel::Communicator& world, testing::MpiCheckLog& log) {
  const int p = world.size(), r = world.rank();
  const std::vector<double> all = world.allgather(1.5 * r);
  bool gathered = static_cast<int>(all.size()) == p;
  for (int q = 0; gathered && q < p; ++q) gathered = all[static_cast<size_t>(q)] == 1.5 * q;
  log.check(gathered, "allgather gives every rank's value in rank order");

  float sums[2] = {static_cast<float>(r + 1), static_cast<float>(2 * (r + 1))};
  world.allreduce_sum(sums, 2);
  log.check(sums[0] == p * (p + 1) / 2 && sums[1] == p * (p + 1), "allreduce_sum of floats");

  // Block q of rank r's input holds r + q + j: rank q's block of the sum is Σr (r + q + j).
  std::vector<float> in(static_cast<size_t>(2 * p)), out(2, -1);
  for (int q = 0; q < p; ++q)
    for (int j = 0; j < 2; ++j) in[static_cast<size_t>(2 * q + j)] = static_cast<float>(r + q + j);
  world.reduce_scatter_sum(in.data(), out.data(), 2);
  const float base = static_cast<float>(p * (p - 1) / 2);
  log.check(out[0] == base + p * r && out[1] == base + p * (r + 1), "reduce_scatter_sum gives this rank's block");
}

void check_byte_exchanges(const parallel::Communicator& world, testing::MpiCheckLog& log) {
  const int p = world.size(), r = world.rank();
  const char mine[3] = {static_cast<char>(r), static_cast<char>(r + 10), static_cast<char>(r + 20)};
  std::vector<char> gathered(static_cast<size_t>(3 * p), -1);
  world.allgather_bytes(mine, gathered.data(), 3);
  bool ok = true;
  for (int q = 0; q < p; ++q)
    for (int j = 0; j < 3; ++j) ok = ok && gathered[static_cast<size_t>(3 * q + j)] == q + 10 * j;
  log.check(ok, "allgather_bytes gives every rank's bytes in rank order");

  std::vector<char> send(static_cast<size_t>(2 * p)), recv(static_cast<size_t>(2 * p), -1);
  for (int q = 0; q < p; ++q) {
    send[static_cast<size_t>(2 * q)] = static_cast<char>(16 * r + q);
    send[static_cast<size_t>(2 * q + 1)] = static_cast<char>(100 + r);
  }
  world.alltoall_bytes(send.data(), recv.data(), 2);
  ok = true;
  for (int q = 0; q < p; ++q)
    ok = ok && recv[static_cast<size_t>(2 * q)] == 16 * q + r && recv[static_cast<size_t>(2 * q + 1)] == 100 + q;
  log.check(ok, "alltoall_bytes delivers rank q's block for this rank from every q");

  if (p < 2) return;
  // A ping-pong between the first and the last rank, as the point-to-point timing runs it.
  char message[3] = {7, 8, 9};
  if (r == 0) {
    world.send_bytes(message, 3, p - 1, 0);
    world.recv_bytes(message, 3, p - 1, 0);
    log.check(message[0] == 14 && message[1] == 16 && message[2] == 18, "the last rank's reply came back");
  } else if (r == p - 1) {
    world.recv_bytes(message, 3, 0, 0);
    for (char& c : message) c = static_cast<char>(2 * c);
    world.send_bytes(message, 3, 0, 0);
  }
}

void check_placement(const parallel::Communicator& world, testing::MpiCheckLog& log) {
  const int p = world.size();
  const plan::NodeLayout pl = plan::NodeLayout::of(world);
  log.check(pl.nodes == 1 && pl.ranks_on_first_node == p, "one node holding every rank");
  log.check(pl.node_of == std::vector<int>(static_cast<size_t>(p), 0), "every rank's node is rank 0's");
  log.check(!pl.spans_nodes(p), "the job does not span nodes");
}

void check_timings(const parallel::Communicator& world, testing::MpiCheckLog& log) {
  const int p = world.size(), r = world.rank();
  const plan::TimingEffort effort = plan::TimingEffort::of(true);
  std::vector<int> groups;
  const plan::CollectiveTimings t =
      plan::time_collectives(world, plan::NodeLayout::of(world), p, effort, [&](int ranks, bool spans) {
        groups.push_back(ranks);
        log.check(!spans, "a group on one node is timed within it");
      });
  std::vector<int> expected_groups;
  for (int ranks = 2; ranks <= p; ++ranks) expected_groups.push_back(ranks);
  log.check(groups == expected_groups, "one group of the first p ranks for each p from 2");
  log.check(t.across_nodes.empty(), "nothing timed across nodes");
  log.check(t.within_node.size() == (p > 1 ? 5u : 0u), "every collective timed within the node");
  // This rank is in the groups of more than r ranks.
  const size_t groups_with_me = static_cast<size_t>(std::max(0, p - std::max(2, r + 1) + 1));
  double last_group_seconds = 0;
  for (const auto& [c, samples] : t.within_node) {
    const std::string name = plan::collective_name(c);
    log.check(samples.size() == groups_with_me * effort.sizes.size(), name + ": a sample per group and size");
    for (size_t k = 0; k < samples.size(); ++k) {
      const auto& s = samples[k];
      const double asked = effort.sizes[k % effort.sizes.size()];
      log.check(s.bytes == plan::sent_bytes(c, asked, static_cast<int>(s.ranks)), name + ": the bytes sent");
      log.check(s.seconds > 0 && std::isfinite(s.seconds) && s.seconds < 10, name + ": a positive, finite time");
      if (s.ranks == p) last_group_seconds += s.seconds;
    }
  }
  // The slowest rank's time is every rank's: the group of all ranks agrees on each figure.
  const std::vector<double> all = world.allgather(last_group_seconds);
  bool agree = true;
  for (const double s : all) agree = agree && s == all.front();
  log.check(agree, "the ranks of a group report the same times");
  plan::MachineProfile profile;
  plan::fit_collectives(t, profile);
  log.check(profile.within_node.size() == t.within_node.size(), "a fit for every collective timed");
  for (const auto& [c, cost] : profile.within_node)
    log.check(cost.alpha >= 0 && cost.beta >= 0 && cost.alpha + cost.beta > 0,
              std::string(plan::collective_name(c)) + ": a non-negative fit that resolves something");
  const plan::CollectiveTimings none = plan::time_collectives(world, plan::NodeLayout::of(world), 1, effort);
  log.check(none.within_node.empty() && none.across_nodes.empty(), "--ranks-max 1 times nothing");
}

}  // namespace

int main(int argc, char* argv[]) {
  testing::MpiProgram program(argc, argv);
  const auto world = parallel::Communicator::world();
  testing::MpiCheckLog log(world);
  check_reductions(world, log);
  check_byte_exchanges(world, log);
  check_placement(world, log);
  check_timings(world, log);
  return log.exit_status("collective_timing_check");
}

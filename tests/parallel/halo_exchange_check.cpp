// Run under mpirun at 1, 2, 4 or 8 ranks. For each case whose distribution uses exactly the
// job's ranks, checks HaloExchange against a global tensor that every rank computes from a
// formula of (n, d, h, w, c) (nothing expected is communicated):
//   forward  == the global tensor padded with the boundary value, sliced to this rank's padded block;
//   backward == the sum of every rank's padded gradient slice that covers this rank's block;
//   <forward(x), y> == <x, backward(y)> over all ranks.
// Values are integers held in floats, so every comparison is exact. Then the account of where
// the waiting time went (HaloAccount), under a synthetic imbalance: rank 0 sleeps before it
// posts, so its neighbours block, yet that wait is imbalance, neither exposed nor in-flight
// communication; and a rank that computes (sleeps) between posting and waiting hides its
// messages. Exit status 0 on every rank when all checks pass.
#include <Kokkos_Core.hpp>

#include <chrono>
#include <limits>
#include <thread>

#include "mpi_check.hpp"
#include "support/index5.hpp"
#include "support/mpi_program.hpp"
#include "tessera/core/error.hpp"
#include "tessera/parallel/halo_exchange.hpp"

using namespace tessera;
using parallel::HaloWidths;
using parallel::Index5;
using testing::for_each_index;
using testing::linear;
using testing::plus;

namespace {

struct HaloCase {
  std::string name;
  parallel::Distribution distribution;
  Shape global;
  HaloWidths halo;
};

parallel::Distribution grid(int sample, int depth, int height, int width) {
  parallel::Distribution d;
  d.sample = sample, d.depth = depth, d.height = height, d.width = width;
  return d;
}

HaloWidths widths(std::array<int64_t, 3> before, std::array<int64_t, 3> after) {
  HaloWidths h;
  h.before = before, h.after = after;
  return h;
}

std::vector<HaloCase> all_cases() {
  return {
      {"1 rank", grid(1, 1, 1, 1), Shape{2, 3, 4, 3, 2}, widths({1, 2, 0}, {1, 0, 1})},
      {"1 rank 2D", grid(1, 1, 1, 1), Shape{2, 4, 3, 2}, widths({0, 1, 1}, {0, 1, 0})},
      {"depth 2", grid(1, 2, 1, 1), Shape{2, 4, 5, 3, 2}, widths({1, 2, 0}, {1, 0, 1})},
      {"depth 2, wide", grid(1, 2, 1, 1), Shape{1, 4, 3, 3, 2}, widths({2, 1, 1}, {2, 1, 1})},
      {"width 2", grid(1, 1, 1, 2), Shape{2, 3, 4, 6, 3}, widths({1, 0, 2}, {0, 1, 1})},
      {"height 2 2D", grid(1, 1, 2, 1), Shape{2, 6, 5, 2}, widths({0, 1, 1}, {0, 1, 0})},
      {"sample 2", grid(2, 1, 1, 1), Shape{4, 3, 3, 3, 2}, widths({1, 1, 1}, {1, 1, 1})},
      {"depth 2, height 2", grid(1, 2, 2, 1), Shape{2, 4, 4, 5, 2}, widths({1, 1, 0}, {1, 0, 1})},
      {"sample 2, width 2", grid(2, 1, 1, 2), Shape{4, 3, 4, 6, 2}, widths({1, 2, 1}, {1, 0, 1})},
      {"height 4", grid(1, 1, 4, 1), Shape{2, 3, 8, 3, 2}, widths({1, 2, 0}, {0, 2, 1})},
      {"height 2, width 2 2D", grid(1, 1, 2, 2), Shape{2, 6, 4, 3}, widths({0, 1, 1}, {0, 1, 1})},
      {"depth 2, height 2, width 2", grid(1, 2, 2, 2), Shape{2, 4, 4, 4, 2}, widths({1, 1, 1}, {1, 1, 1})},
      {"depth 2, height 2, width 2, uneven widths", grid(1, 2, 2, 2), Shape{1, 4, 6, 4, 3},
       widths({2, 0, 1}, {0, 1, 0})},
      {"sample 2, depth 2, height 2", grid(2, 2, 2, 1), Shape{4, 4, 6, 3, 2}, widths({1, 0, 1}, {1, 1, 1})},
      {"sample 2, height 2, width 2 2D", grid(2, 1, 2, 2), Shape{4, 4, 4, 2}, widths({0, 1, 1}, {0, 0, 1})},
  };
}

Index5 padded_extents(const Index5& e, const HaloWidths& h) {
  return {e[0], e[1] + h.before[0] + h.after[0], e[2] + h.before[1] + h.after[1], e[3] + h.before[2] + h.after[2],
          e[4]};
}

/// Where a rank's padded block starts in global coordinates (may be negative).
Index5 padded_origin(const Index5& block_offset, const HaloWidths& h) {
  return {block_offset[0], block_offset[1] - h.before[0], block_offset[2] - h.before[1], block_offset[3] - h.before[2],
          block_offset[4]};
}

/// Two integer-valued global tensors.
float global_x(const Index5& global, const Index5& g) { return 1.0f + static_cast<float>(linear(global, g)); }
float global_x2(const Index5& global, const Index5& g) {
  return 3.0f * static_cast<float>(linear(global, g)) - 1000.0f;
}
/// A padded gradient that differs per rank: rank q's element at padded index p.
float padded_y(int q, int64_t p) { return static_cast<float>((q * 37 + p * 11) % 23 - 11); }

std::string first_difference(const std::vector<float>& got, const std::vector<float>& expected) {
  if (got.size() != expected.size())
    return "sizes " + std::to_string(got.size()) + " vs " + std::to_string(expected.size());
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != expected[i])
      return "element " + std::to_string(i) + ": " + std::to_string(got[i]) + " instead of " +
             std::to_string(expected[i]);
  return "";
}

void run_case(const HaloCase& c, const parallel::Communicator& world, testing::MpiCheckLog& log) {
  const parallel::ProcessGrid pg(c.distribution, world, c.name);
  const Shape local = pg.local_shape(c.global, c.name);
  const Index5 global5 = parallel::extents5_of(c.global), local5 = parallel::extents5_of(local);
  const Index5 padded5 = padded_extents(local5, c.halo);
  const auto parts = pg.spatial_parts();
  // Every rank's block, computed here from the documented layout rather than asked of the grid.
  const auto block_offset = [&](const std::array<int, 3>& s) -> Index5 {
    return {pg.sample_index() * local5[0], s[0] * local5[1], s[1] * local5[2], s[2] * local5[3], 0};
  };
  const Index5 mine = block_offset(pg.spatial_index());
  const parallel::Box box = pg.local_box(parallel::spatial_size_of(c.global), c.name);
  log.check(box.offset[0] == mine[1] && box.offset[1] == mine[2] && box.offset[2] == mine[3] &&
                pg.first_sample(c.global[0], c.name) == mine[0],
            c.name + ": local_box " + box.str() + " is this rank's block");

  parallel::HaloExchange exchange(pg, local, c.halo, c.name);
  log.check(parallel::extents5_of(exchange.padded_shape()) == padded5 && exchange.padded_shape().rank() == local.rank(),
            c.name + ": padded shape " + exchange.padded_shape().str());
  const Index5 origin = padded_origin(mine, c.halo);
  const auto inside = [&](const Index5& g) {
    for (size_t k = 0; k < 5; ++k)
      if (g[k] < 0 || g[k] >= global5[k]) return false;
    return true;
  };
  // Neighbours must not rely on the order in which ranks start: even ranks post everything
  // before the odd ones have posted anything, which deadlocks if start_* waits for a message.
  const auto staggered = [&](const std::function<void()>& start) {
    if (world.rank() % 2 == 0) start();
    world.barrier();
    if (world.rank() % 2 == 1) start();
  };

  Tensor x(local), padded(exchange.padded_shape());
  std::vector<float> xv(static_cast<size_t>(local.numel())), yv(static_cast<size_t>(padded.numel()));
  int64_t received = 0;  // halo elements that come from a neighbour
  double forward_dot = 0.0, backward_dot = 0.0;
  for (const float boundary : {0.0f, std::numeric_limits<float>::lowest()}) {
    const auto value = boundary == 0.0f ? global_x : global_x2;
    for_each_index(
        local5, [&](const Index5& i) { xv[static_cast<size_t>(linear(local5, i))] = value(global5, plus(mine, i)); });
    x.copy_from_host(xv);
    padded.fill(12345.0f);
    staggered([&] { exchange.start_forward(x, padded, boundary); });
    exchange.finish_forward();
    std::vector<float> expected(static_cast<size_t>(padded.numel()));
    received = -local.numel();
    for_each_index(padded5, [&](const Index5& p) {
      const Index5 g = plus(origin, p);
      expected[static_cast<size_t>(linear(padded5, p))] = inside(g) ? value(global5, g) : boundary;
      received += inside(g);
    });
    const auto got = padded.to_host();
    const std::string diff = first_difference(got, expected);
    log.check(diff.empty(), c.name + ": forward with boundary " + (boundary == 0.0f ? "0" : "lowest()") + ": " + diff);
    if (boundary != 0.0f) continue;
    for (size_t i = 0; i < yv.size(); ++i) {
      yv[i] = padded_y(pg.spatial().rank(), static_cast<int64_t>(i));
      forward_dot += static_cast<double>(got[i]) * yv[i];
    }
  }
  int64_t bytes[2] = {exchange.bytes_sent(), received * static_cast<int64_t>(sizeof(float))};
  world.allreduce_sum(bytes, 2);
  log.check(bytes[0] == 2 * bytes[1], c.name + ": bytes sent by all ranks " + std::to_string(bytes[0]) +
                                          " are twice those of all halos filled by neighbours " +
                                          std::to_string(bytes[1]));

  // Backward: yv on every rank; this rank's gradient sums every padded block covering it.
  Tensor grad_padded(exchange.padded_shape()), grad_local(local);
  grad_padded.copy_from_host(yv);
  grad_local.fill(12345.0f);
  staggered([&] { exchange.start_backward(grad_padded, grad_local); });
  exchange.finish_backward();
  std::vector<float> expected(static_cast<size_t>(local.numel()), 0.0f);
  for (int i = 0; i < parts[0]; ++i)
    for (int j = 0; j < parts[1]; ++j)
      for (int k = 0; k < parts[2]; ++k) {
        const Index5 peer_origin = padded_origin(block_offset({i, j, k}), c.halo);
        const int q = pg.spatial_rank_of({i, j, k});
        for_each_index(local5, [&](const Index5& l) {
          Index5 p = plus(mine, l);
          bool covered = true;
          for (size_t a = 0; a < 5; ++a) {
            p[a] -= peer_origin[a];
            covered = covered && p[a] >= 0 && p[a] < padded5[a];
          }
          if (covered) expected[static_cast<size_t>(linear(local5, l))] += padded_y(q, linear(padded5, p));
        });
      }
  const auto got = grad_local.to_host();
  const std::string diff = first_difference(got, expected);
  log.check(diff.empty(), c.name + ": backward: " + diff);
  for_each_index(
      local5, [&](const Index5& i) { xv[static_cast<size_t>(linear(local5, i))] = global_x(global5, plus(mine, i)); });
  for (size_t i = 0; i < got.size(); ++i) backward_dot += static_cast<double>(xv[i]) * got[i];
  double dots[2] = {forward_dot, backward_dot};
  world.allreduce_sum(dots, 2);
  log.check(dots[0] == dots[1], c.name + ": <forward(x), y> = " + std::to_string(dots[0]) +
                                    " equals <x, backward(y)> = " + std::to_string(dots[1]));
  bytes[0] = exchange.bytes_sent();
  world.allreduce_sum(bytes, 1);
  log.check(bytes[0] == 3 * bytes[1], c.name + ": backward sends as much as forward");
  log.check(exchange.account().blocked >= 0.0, c.name + ": wait time");
}

/// The account's bounds and its separation of imbalance from communication, over a depth split
/// across all ranks with small messages (microseconds to move on one node).
void check_account(const parallel::Communicator& world, testing::MpiCheckLog& log) {
  const parallel::ProcessGrid pg(grid(1, world.size(), 1, 1), world, "account");
  const Shape local = pg.local_shape(Shape{2, 2 * world.size(), 4, 4, 3}, "account");
  parallel::HaloExchange exchange(pg, local, widths({1, 0, 0}, {1, 0, 0}), "account");
  Tensor x(local), padded(exchange.padded_shape()), grad_local(local);
  x.fill(1.0f);
  const auto sleep = [](int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); };
  constexpr int late_ms = 300;
  const std::string me = "account on rank " + std::to_string(world.rank()) + ": ";
  const auto bounded = [&](const parallel::HaloAccount& a, const std::string& what) {
    log.check(a.exposed >= 0.0 && a.exposed <= a.in_flight && a.exposed <= a.blocked + 1e-6 &&
                  a.hidden_fraction() >= 0.0 && a.hidden_fraction() <= 1.0,
              me + what + ": 0 <= exposed " + std::to_string(a.exposed) + " <= in flight " +
                  std::to_string(a.in_flight) + " and blocked " + std::to_string(a.blocked));
  };

  // Rank 0 arrives late at a forward and a backward exchange; the others wait for it at once.
  world.barrier();
  parallel::HaloAccount before = exchange.account();
  if (world.rank() == 0) sleep(late_ms);
  exchange.start_forward(x, padded, 0.0f);
  exchange.finish_forward();
  if (world.rank() == 0) sleep(late_ms);
  exchange.start_backward(padded, grad_local);
  exchange.finish_backward();
  const parallel::HaloAccount late = exchange.account() - before;
  bounded(late, "late neighbour");
  log.check(late.exchanges == 2, me + "two exchanges accounted");
  // Rank 1 is rank 0's neighbour: it blocked for the sleeps, all of it imbalance.
  if (world.rank() == 1)
    log.check(late.blocked > 1.5 * late_ms / 1000.0,
              me + "rank 1 blocked " + std::to_string(late.blocked) + " s waiting for the late rank 0");
  // Moving a few kB takes microseconds; a generous bound for oversubscribed machines.
  log.check(late.exposed < 0.05 && late.in_flight < 0.05,
            me + "the late neighbour counts as imbalance " + std::to_string(late.imbalance()) +
                " s, not as communication: exposed " + std::to_string(late.exposed) + " s, in flight " +
                std::to_string(late.in_flight) + " s");

  // Every rank computes between posting and waiting, testing for progress: hidden.
  world.barrier();
  before = exchange.account();
  exchange.start_forward(x, padded, 0.0f);
  for (int i = 0; i < 4; ++i) {
    sleep(late_ms / 4);
    exchange.progress();
  }
  exchange.finish_forward();
  const parallel::HaloAccount overlapped = exchange.account() - before;
  bounded(overlapped, "overlapped");
  log.check(overlapped.exposed < 0.05 && overlapped.blocked < 0.05,
            me + "messages that arrived while the rank computed are not exposed (" +
                std::to_string(overlapped.exposed) + " s exposed, " + std::to_string(overlapped.blocked) +
                " s blocked)");
}

}  // namespace

int main(int argc, char* argv[]) {
  testing::MpiProgram program(argc, argv);
  const auto world = parallel::Communicator::world();
  testing::MpiCheckLog log(world);
  try {
    int ran = 0;
    for (const auto& c : all_cases())
      if (c.distribution.ranks() == world.size()) {
        run_case(c, world, log);
        ++ran;
      }
    log.check(ran > 0, "a case for " + std::to_string(world.size()) + " ranks");
    if (world.size() > 1) check_account(world, log);

    parallel::Distribution too_many;
    too_many.height = world.size() + 1;
    log.expect_error<ConfigError>(
        [&] { parallel::ProcessGrid(too_many, world, "model.layers[2].distribution"); },
        {"model.layers[2].distribution",
         "needs " + std::to_string(world.size() + 1) + " ranks but the job has " + std::to_string(world.size())},
        "a distribution over more ranks than the job has");
    if (world.size() > 1) {
      parallel::Distribution over_width;
      over_width.width = world.size();
      const parallel::ProcessGrid pg(over_width, world, "wide");
      log.expect_error<ShapeError>(
          [&] {
            parallel::HaloExchange(pg, Shape{1, 2, 2, 2, 1}, widths({0, 0, 0}, {0, 0, 3}), "layers[4] (max_pool3d)");
          },
          {"layers[4] (max_pool3d)", "width halo of 3 is wider than the neighbouring block's width of 2"},
          "a halo wider than the neighbouring block");
    }
  } catch (const std::exception& e) {
    return parallel::handle_fatal_error(e);
  }
  return log.exit_status("halo_exchange_check");
}

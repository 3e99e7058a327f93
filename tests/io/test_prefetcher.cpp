#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "tessera/io/prefetcher.hpp"

using namespace tessera;

TEST_CASE("The prefetcher runs jobs in the background, one at a time, in order", "[io][prefetch]") {
  io::Prefetcher p;
  std::atomic<int> running{0}, most{0};
  std::vector<int> order;
  const auto caller = std::this_thread::get_id();
  std::thread::id worker;
  for (int i = 0; i < 5; ++i)
    p.start([&, i] {
      const int now = ++running;
      most = std::max(most.load(), now);
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      order.push_back(i);
      worker = std::this_thread::get_id();
      --running;
    });
  CHECK(p.queued() == 5);
  for (int i = 0; i < 5; ++i) p.wait();  // each wait claims the oldest job
  CHECK(p.queued() == 0);
  CHECK(order == std::vector<int>{0, 1, 2, 3, 4});
  CHECK(most == 1);
  CHECK(worker != caller);
  CHECK(p.wait() >= 0.0);  // nothing in flight: returns at once
}

TEST_CASE("Each job's exception is rethrown by the wait that claims it; discard drops them", "[io][prefetch]") {
  io::Prefetcher p;
  CHECK(p.wait() == 0.0);  // nothing queued
  p.start([] { throw std::runtime_error("file x.h5: broken"); });
  CHECK_THROWS_WITH(p.wait(), "file x.h5: broken");
  CHECK_NOTHROW(p.wait());  // reported once
  p.start([] { throw std::runtime_error("unwanted"); });
  p.discard();
  CHECK(p.queued() == 0);
  bool ran = false;
  p.start([] { throw std::runtime_error("first"); });
  p.start([&] { ran = true; });
  CHECK(p.queued() == 2);
  CHECK_THROWS_WITH(p.wait(), "first");
  CHECK_NOTHROW(p.wait());
  CHECK(ran);
  p.start([] { throw std::runtime_error("dropped"); });
  CHECK_NOTHROW(p.wait(false));
}

TEST_CASE("Destroying a prefetcher waits for its jobs", "[io][prefetch]") {
  std::atomic<bool> done{false};
  {
    io::Prefetcher p;
    p.start([&] { std::this_thread::sleep_for(std::chrono::milliseconds(10)); });
    p.start([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      done = true;
    });
  }
  CHECK(done);
}

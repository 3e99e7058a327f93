#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>

#include "tessera/bench/bench_result.hpp"
#include "tessera/core/error.hpp"

using namespace tessera::bench;

namespace {

BenchResult sample_ops_result() {
  BenchResult r;
  r.kind = "ops";
  r.model = "m";
  r.config = "m.json";
  r.batch = 4;
  r.size = 16;
  r.machine.hostname = "host";
  r.machine.cpu_model = "cpu";
  r.machine.isa = {"avx2", "fma"};
  r.machine.cores = 2;
  r.machine.numa_domains = 1;
  r.machine.threads = 2;
  r.machine.compiler = "GNU 12";
  r.peak.fma_kernel = "avx2+fma";
  r.peak.threads = 2;
  r.peak.fma_gflops_one_core = 50;
  r.peak.fma_gflops_all_cores = 100;
  r.peak.triad_gbs_one_core = 8;
  r.peak.triad_gbs_all_cores = 10;
  r.peak.triad_bytes = 1 << 20;
  for (const char* backend : {"a", "b"}) {
    OpResult o;
    o.timing.layer = "conv1";
    o.timing.op_class = "conv_forward";
    o.timing.shape = "3d 4->8";
    o.timing.backend = backend;
    o.timing.seconds = backend[0] == 'a' ? 0.02 : 0.04;
    o.timing.flops = 1e9;
    o.timing.bytes = 1e6;
    o.platform = std::string(backend) + "@2t";
    r.ops.push_back(o);
  }
  OpResult declined = r.ops[1];
  declined.timing.layer = "pool1";
  declined.timing.op_class = "pool_forward";
  declined.timing.supported = false;
  declined.timing.why = "no pooling";
  declined.timing.seconds = 0;
  r.ops.push_back(declined);
  derive_op_efficiencies(r);
  return r;
}

/// The error of reading `j` as a result from "bad.json".
std::string read_error(const nlohmann::json& j) {
  try {
    BenchResult::from_json(j, "bad.json");
  } catch (const tessera::Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("efficiencies come from the result's own peak and fastest backend", "[bench]") {
  const BenchResult r = sample_ops_result();
  // 1 GFLOP over 1 MB at 100 GFLOP/s and 10 GB/s: bound 10 ms, compute-bound.
  CHECK(r.ops[0].arch_efficiency == Approx(0.5));
  CHECK(r.ops[1].arch_efficiency == Approx(0.25));
  CHECK(r.ops[0].app_efficiency == Approx(1.0));
  CHECK(r.ops[1].app_efficiency == Approx(0.5));
  CHECK_FALSE(r.ops[0].memory_bound);
  CHECK(r.ops[2].arch_efficiency == 0.0);
}

TEST_CASE("a result survives a round trip through its file", "[bench]") {
  const BenchResult r = sample_ops_result();
  const std::string file = "bench_result_round_trip.json";
  r.write(file);
  const BenchResult back = BenchResult::read(file);
  std::remove(file.c_str());
  CHECK(back.to_json() == r.to_json());
  CHECK(back.machine.key() == "host (cpu)");
  CHECK(back.peak.gflops(1) == 50);
  CHECK(back.peak.gbs(2) == 10);
  REQUIRE(back.ops.size() == 3);
  CHECK_FALSE(back.ops[2].timing.supported);
  CHECK(back.ops[2].timing.why == "no pooling");
}

TEST_CASE("malformed results are refused naming the file and the key", "[bench]") {
  const nlohmann::json good = sample_ops_result().to_json();
  CHECK(read_error(good) == "no error");

  nlohmann::json j = good;
  j["peak"].erase("fma_gflops_one_core");
  CHECK_THAT(read_error(j), Catch::Contains("bad.json: $.peak.fma_gflops_one_core"));

  j = good;
  j["format"] = "something else";
  CHECK_THAT(read_error(j), Catch::Contains("bad.json: $.format: not a tessera bench result"));

  j = good;
  j["version"] = 99;
  CHECK_THAT(read_error(j), Catch::Contains("bad.json: $.version: version 99"));

  j = good;
  j["kind"] = "speed";
  CHECK_THAT(read_error(j), Catch::Contains("bad.json: $.kind"));

  j = good;
  j["ops"][1]["seconds"] = -1.0;
  CHECK_THAT(read_error(j), Catch::Contains("bad.json: $.ops[1].seconds"));

  j = good;
  j["ops"][0]["seconds"] = 0.0;
  CHECK_THAT(read_error(j), Catch::Contains("bad.json: $.ops[0].seconds: a supported op needs a time > 0"));

  j = good;
  j["ops"][0]["app_efficiency"] = 1.5;
  CHECK_THAT(read_error(j), Catch::Contains("bad.json: $.ops[0].app_efficiency"));

  j = good;
  j["machine"]["coresz"] = 3;
  CHECK_THAT(read_error(j), Catch::Contains("bad.json: $.machine"));
  CHECK_THAT(read_error(j), Catch::Contains("coresz"));

  j = good;
  j["models"] = nlohmann::json::array({nlohmann::json::object()});
  CHECK_THAT(read_error(j), Catch::Contains("bad.json: $.models[0]"));

  j = good;
  j["ops"] = nlohmann::json::array();
  CHECK_THAT(read_error(j), Catch::Contains("bad.json: $.ops: an ops result without ops"));
}

TEST_CASE("a result file that is not JSON is refused naming the file", "[bench]") {
  const std::string file = "bench_result_not_json.json";
  std::ofstream(file) << "{\"format\": ";
  CHECK_THROWS_WITH(BenchResult::read(file), Catch::Contains(file));
  std::remove(file.c_str());
}

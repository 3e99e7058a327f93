#include <catch2/catch.hpp>

#include "tessera/bench/portability_report.hpp"
#include "tessera/core/error.hpp"

using namespace tessera::bench;

namespace {

/// An ops result of model "m" on platform `platform`: conv1 forward in `conv_seconds` (1 GFLOP
/// over 1 MB: 10 ms at the limits below) and pool1 forward (1 MFLOP over 100 MB: memory-bound,
/// 10 ms), or a declined pool when `pool_seconds` is 0.
BenchResult ops_result(const std::string& platform, double conv_seconds, double pool_seconds) {
  BenchResult r;
  r.kind = "ops";
  r.model = "m";
  r.batch = 4;
  r.machine.hostname = "host";
  r.machine.cpu_model = "cpu";
  r.machine.threads = 2;
  r.peak.threads = 2;
  r.peak.fma_gflops_one_core = r.peak.fma_gflops_all_cores = 100;
  r.peak.triad_gbs_one_core = r.peak.triad_gbs_all_cores = 10;
  OpResult conv;
  conv.timing = {"conv1", "conv_forward", "3d 4->8", platform, true, "", conv_seconds, 1e9, 1e6};
  conv.platform = platform;
  OpResult pool;
  pool.timing = {"pool1", "pool_forward", "max 2", platform, pool_seconds > 0, pool_seconds > 0 ? "" : "no pooling",
                 pool_seconds, 1e6, 1e8};
  pool.platform = platform;
  r.ops = {conv, pool};
  derive_op_efficiencies(r);
  return r;
}

BenchResult model_result(const std::string& platform, double step_seconds, double roofline_seconds) {
  BenchResult r = ops_result(platform, 1, 1);
  r.kind = "model";
  r.ops.clear();
  ModelResult m;
  m.backend = m.platform = platform;
  m.steps = 3;
  m.step_seconds = step_seconds;
  m.roofline_seconds = roofline_seconds;
  m.arch_efficiency = roofline_seconds / step_seconds;
  r.models = {m};
  return r;
}

/// `r` with the machine fields a result file must have.
BenchResult round_trippable(BenchResult r) {
  r.machine.cores = r.machine.numa_domains = 1;
  r.machine.execution_space = "OpenMP";
  return r;
}

std::string build_error(const std::vector<std::pair<std::string, BenchResult>>& results) {
  try {
    PortabilityReport::build(results);
  } catch (const tessera::Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("the report computes both portabilities per op class and per model", "[bench]") {
  const auto report = PortabilityReport::build({{"a.json", ops_result("a", 0.02, 0.02)},
                                                {"b.json", ops_result("b", 0.04, 0.0)},
                                                {"ma.json", model_result("a", 0.1, 0.05)},
                                                {"mb.json", model_result("b", 0.2, 0.05)}});
  REQUIRE(report.platforms() == std::vector<std::string>{"a", "b"});
  REQUIRE(report.op_classes().size() == 2);
  const PortabilityRow& conv = report.op_classes()[0];
  CHECK(conv.application == "conv_forward");
  CHECK(conv.cells[0].arch == Approx(0.5));
  CHECK(conv.cells[1].arch == Approx(0.25));
  CHECK(conv.pp_arch == Approx(1.0 / 3.0));           // 2 / (2 + 4)
  CHECK(conv.pp_app == Approx(2.0 / 3.0));            // 2 / (1 + 2)
  const PortabilityRow& pool = report.op_classes()[1];
  CHECK(pool.cells[0].arch == Approx(0.5));           // memory-bound: 10 ms at 10 GB/s
  CHECK(pool.cells[1].measured);
  CHECK(pool.pp_arch == 0.0);                         // b cannot run it
  CHECK(pool.pp_app == 0.0);
  REQUIRE(report.models().size() == 1);
  CHECK(report.models()[0].pp_arch == Approx(2.0 / (2.0 + 4.0)));
  CHECK(report.models()[0].pp_app == Approx(2.0 / (1.0 + 2.0)));
  CHECK(report.best_conv_arch() == Approx(0.5));
  const auto slow = report.below(0.3);
  REQUIRE(slow.size() == 1);
  CHECK(slow[0].platform == "b");
  CHECK_FALSE(slow[0].memory_bound);
  CHECK_THAT(report.table(), Catch::Contains("cannot run"));
  CHECK_THAT(report.cascade_svg(), Catch::StartsWith("<svg"));
  CHECK_THAT(report.roofline_svg(), Catch::Contains("</svg>"));
}

TEST_CASE("a single platform's portability is its efficiency", "[bench]") {
  const auto report = PortabilityReport::build({{"a.json", ops_result("a", 0.04, 0.02)}});
  CHECK(report.op_classes()[0].pp_arch == Approx(0.25));
  CHECK(report.op_classes()[0].pp_app == Approx(1.0));
}

TEST_CASE("mismatched results are refused naming the file and the key", "[bench]") {
  BenchResult other_batch = ops_result("b", 0.04, 0.02);
  other_batch.batch = 8;
  CHECK_THAT(build_error({{"a.json", ops_result("a", 0.02, 0.02)}, {"b.json", other_batch}}),
             Catch::Contains("b.json: $.batch: model 'm' at batch 8, but at 4 in a.json"));

  BenchResult other_shape = ops_result("b", 0.04, 0.02);
  other_shape.ops[1].timing.shape = "max 3";
  CHECK_THAT(build_error({{"a.json", ops_result("a", 0.02, 0.02)}, {"b.json", other_shape}}),
             Catch::Contains("b.json: $.ops[1].shape: 'max 3' differs from 'max 2' in a.json"));

  CHECK_THAT(build_error({{"a.json", ops_result("a", 0.02, 0.02)}, {"again.json", ops_result("a", 0.03, 0.02)}}),
             Catch::Contains("again.json: $.ops[0]: platform 'a' measured conv_forward of layer 'conv1' of model 'm' "
                             "already in a.json"));
  CHECK_THAT(build_error({}), Catch::Contains("no result files"));
}

TEST_CASE("the report says what each platform ran on and keeps transposed convolutions apart", "[bench]") {
  BenchResult one = ops_result("kokkos@1t", 0.02, 0.02);
  one.machine.threads = 1;
  one.machine.execution_space = "OpenMP";
  for (auto& o : one.ops) o.timing.backend = "kokkos";
  // A transposed convolution at the roofline (arch 1) and a concatenation, a copy.
  OpResult up;
  up.timing = {"up1", "conv_transpose_forward", "transposed of 3d 8->4", "kokkos", true, "", 0.01, 1e9, 1e6};
  up.platform = "kokkos@1t";
  OpResult skip;
  skip.timing = {"skip1", "concat_forward", "concat", "kokkos", true, "", 0.01, 0, 1e8};
  skip.platform = "kokkos@1t";
  one.ops.push_back(up);
  one.ops.push_back(skip);
  derive_op_efficiencies(one);
  BenchResult all = ops_result("onednn@2t", 0.02, 0.02);
  all.machine.execution_space = "OpenMP";
  for (auto& o : all.ops) o.timing.backend = "onednn";
  const auto report = PortabilityReport::build({{"one.json", one}, {"all.json", all}});
  REQUIRE(report.platform_notes("kokkos@1t").size() == 1);
  CHECK(report.platform_notes("kokkos@1t")[0] == "kokkos, Kokkos OpenMP on 1 thread(s), standing in for Kokkos Serial");
  CHECK(report.platform_notes("onednn@2t")[0] == "onednn, Kokkos OpenMP on 2 thread(s)");
  CHECK(report.table().find("standing in for Kokkos Serial") != std::string::npos);
  CHECK(report.best_conv_arch() == Approx(0.5));  // the conv layers', not up1's 1.0
  bool concat_row = false;
  for (const auto& row : report.op_classes()) concat_row = concat_row || row.application == "concat_forward";
  CHECK(concat_row);
  // The copy has no arithmetic intensity: it is in the table, not on the roofline.
  CHECK(report.roofline_svg().find("skip1") == std::string::npos);
  CHECK(report.roofline_svg().find("up1") != std::string::npos);
}

TEST_CASE("a bf16 platform stands beside the fp32 ones: against the bf16 peak, compared with bf16 ops only",
          "[bench][precision]") {
  // "b16" ran conv1 in bf16 twice as fast as "a" in fp32, on a CPU whose bf16 peak is twice its
  // fp32 peak: the same architectural efficiency, and application efficiencies that do not
  // compare the two types.
  BenchResult fp32 = ops_result("a", 0.02, 0.02);
  BenchResult bf16 = ops_result("b16", 0.01, 0.01);
  for (BenchResult* r : {&fp32, &bf16}) r->peak.bf16_gflops_one_core = r->peak.bf16_gflops_all_cores = 200;
  for (OpResult& o : bf16.ops) {
    o.timing.type = tessera::ElementType::bf16;
    o.timing.shape = "bf16 " + o.timing.shape;
  }
  derive_op_efficiencies(bf16);
  CHECK(bf16.ops[0].arch_efficiency == Approx(0.5));  // 1 GFLOP in 10 ms at 200 GFLOP/s
  CHECK(bf16.ops[0].app_efficiency == Approx(1.0));
  CHECK(BenchResult::from_json(round_trippable(bf16).to_json(), "b16.json").ops[0].timing.type ==
        tessera::ElementType::bf16);

  BenchResult mixed = fp32;  // one result holding both types: each op its own type's best
  mixed.ops.push_back(bf16.ops[0]);
  derive_op_efficiencies(mixed);
  CHECK(mixed.ops[0].app_efficiency == Approx(1.0));
  CHECK(mixed.ops[2].app_efficiency == Approx(1.0));

  const auto report = PortabilityReport::build({{"a.json", fp32}, {"b16.json", bf16}});
  REQUIRE(report.platforms() == std::vector<std::string>{"a", "b16"});
  // Each precision is an application of its own: conv_forward over the fp32 platform, and
  // conv_forward/bf16 over the bf16 one.
  REQUIRE(report.op_classes().size() == 4);
  const PortabilityRow& conv = report.op_classes()[0];
  const PortabilityRow& conv16 = report.op_classes()[2];
  CHECK(conv.application == "conv_forward");
  CHECK(conv16.application == "conv_forward/bf16");
  CHECK(conv.cells[0].arch == Approx(0.5));
  CHECK_FALSE(conv.cells[1].measured);
  CHECK(conv16.cells[1].arch == Approx(0.5));  // against the bf16 peak
  CHECK(conv16.cells[1].app == Approx(1.0));   // the fastest bf16 platform
  CHECK(conv16.pp_arch == Approx(0.5));
  CHECK_THAT(report.table(), Catch::Contains("in bf16"));
  CHECK_THAT(report.roofline_svg(), Catch::Contains("bf16"));
}

TEST_CASE("model results keep precisions apart in their application efficiency", "[bench][precision]") {
  BenchResult r = model_result("a", 0.2, 0.05);
  ModelResult half = r.models[0];
  half.platform = "a16";
  half.precision = tessera::ElementType::bf16;
  half.step_seconds = 0.1;
  r.models.push_back(half);
  derive_model_efficiencies(r);
  CHECK(r.models[0].app_efficiency == Approx(1.0));
  CHECK(r.models[1].app_efficiency == Approx(1.0));
  CHECK(BenchResult::from_json(round_trippable(r).to_json(), "m.json").models[1].precision ==
        tessera::ElementType::bf16);
}

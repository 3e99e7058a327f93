#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>
#include <limits>

#include "tessera/core/error.hpp"
#include "tessera/train/training_run.hpp"

using namespace tessera;
using nlohmann::json;

namespace {
json small_run(const std::string& optimizer) {
  return json::parse(R"({
    "model": {"input": {"channels": 2, "size": [6, 6, 6]},
              "layers": [{"name": "c", "type": "conv3d", "filters": 4, "padding": 1},
                         {"name": "bn", "type": "batch_norm"},
                         {"type": "relu"}, {"type": "max_pool3d"}, {"type": "dropout", "rate": 0.2},
                         {"type": "flatten"}, {"name": "d", "type": "dense", "units": 4}]},
    "loss": {"type": "mse"},
    "optimizer": )" + optimizer + R"(,
    "data": {"source": "synthetic_fields", "samples": 24, "validation_samples": 0, "size": 6, "channels": 2},
    "training": {"epochs": 3, "batch_size": 4, "seed": 9, "log_every": 1}})");
}

train::RunOverrides quiet() {
  train::RunOverrides o;
  o.progress = false;
  return o;
}

void corrupt(const std::string& path, std::streamoff from_end) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(-from_end, std::ios::end);
  char c;
  f.read(&c, 1);
  c = static_cast<char>(c ^ 0x5a);
  f.seekp(-from_end, std::ios::end);
  f.write(&c, 1);
}
}  // namespace

TEST_CASE("A resumed run reproduces the uninterrupted loss curve and weights", "[train][checkpoint]") {
  // The last case accumulates 2 micro-batches per step: a checkpoint is taken between steps,
  // where no partial sum is pending, and the resumed run reads the same micro-batches.
  for (const auto& [opt, accumulate] : std::vector<std::pair<std::string, int>>{
           {R"({"type": "sgd", "lr": 0.01, "momentum": 0.9, "nesterov": true,
                "schedule": {"type": "cosine", "warmup_steps": 3}})", 1},
           {R"({"type": "adam", "lr": 0.003})", 1},
           {R"({"type": "lars", "lr": 0.5, "weight_decay": 1e-4, "trust_coefficient": 0.01})", 1},
           {R"({"type": "lamb", "lr": 0.003})", 1},
           {R"({"type": "lamb", "lr": 0.003})", 2}}) {
    INFO(opt << ", accumulate " << accumulate);
    const std::string ckpt = "tessera_test_resume.ckpt";
    auto config_of = [opt = opt, accumulate = accumulate] {
      json c = small_run(opt);
      c["training"]["batch_size"] = 4 / accumulate;
      c["training"]["accumulate"] = accumulate;
      return c;
    };
    train::TrainingRun full(config_of(), quiet());
    const auto full_report = full.run();
    REQUIRE(full_report.steps == 18);

    auto first = quiet();
    first.max_steps = 7;
    first.checkpoint_file = ckpt;
    train::TrainingRun part1(config_of(), first);
    const auto r1 = part1.run();

    auto second = quiet();
    second.resume_file = ckpt;
    train::TrainingRun part2(config_of(), second);
    const auto r2 = part2.run();

    std::vector<double> resumed = r1.step_losses;
    resumed.insert(resumed.end(), r2.step_losses.begin(), r2.step_losses.end());
    REQUIRE(resumed.size() == full_report.step_losses.size());
    for (size_t i = 0; i < resumed.size(); ++i) CHECK(resumed[i] == Approx(full_report.step_losses[i]).epsilon(1e-6));
    const auto a = full.model().parameters().values().to_host(), b = part2.model().parameters().values().to_host();
    double max_diff = 0;
    for (size_t i = 0; i < a.size(); ++i) max_diff = std::max(max_diff, static_cast<double>(std::abs(a[i] - b[i])));
    CHECK(max_diff < 1e-6);
    CHECK(full.model().parameters().buffers().to_host() == part2.model().parameters().buffers().to_host());
    std::remove(ckpt.c_str());
  }
}

TEST_CASE("Damaged or mismatched checkpoints are refused without touching the model", "[train][checkpoint]") {
  const std::string ckpt = "tessera_test_damaged.ckpt";
  auto o = quiet();
  o.max_steps = 2;
  o.checkpoint_file = ckpt;
  train::TrainingRun run(small_run(R"({"type": "sgd", "lr": 0.01, "momentum": 0.9})"), o);
  run.run();

  auto resume = quiet();
  resume.resume_file = ckpt;
  {
    train::TrainingRun other(small_run(R"({"type": "adam"})"), resume);
    CHECK_THROWS_WITH(other.run(), Catch::Contains(ckpt) && Catch::Contains("optimizer 'sgd'"));
  }
  {
    auto spec = small_run(R"({"type": "sgd", "lr": 0.01, "momentum": 0.9})");
    spec["model"]["layers"][0]["filters"] = 5;
    train::TrainingRun other(spec, resume);
    const auto before = other.model().parameters().values().to_host();
    CHECK_THROWS_WITH(other.run(), Catch::Contains("c.weight") && Catch::Contains("[4, 3, 3, 3, 2]"));
    CHECK(other.model().parameters().values().to_host() == before);
  }
  corrupt(ckpt, 10);
  {
    train::TrainingRun other(small_run(R"({"type": "sgd", "lr": 0.01, "momentum": 0.9})"), resume);
    CHECK_THROWS_WITH(other.run(), Catch::Contains(ckpt) && Catch::Contains("checksum"));
  }
  {
    std::ifstream in(ckpt, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream out(ckpt, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size() / 2));
  }
  {
    train::TrainingRun other(small_run(R"({"type": "sgd", "lr": 0.01, "momentum": 0.9})"), resume);
    CHECK_THROWS_WITH(other.run(), Catch::Contains(ckpt) && Catch::Contains("truncated"));
  }
  std::remove(ckpt.c_str());
}

TEST_CASE("Run config errors name the JSON path", "[train][config]") {
  auto spec = small_run(R"({"type": "sgd", "lr": 0.01})");
  spec["training"]["batch_size"] = 100;
  CHECK_THROWS_WITH(train::TrainingRun(spec, quiet()), Catch::Contains("$.training.batch_size"));
  spec = small_run(R"({"type": "sgd", "lr": -1})");
  CHECK_THROWS_WITH(train::TrainingRun(spec, quiet()), Catch::Contains("$.optimizer.lr"));
  spec = small_run(R"({"type": "sgd", "lr": 0.1})");
  spec["data"]["size"] = 8;
  CHECK_THROWS_WITH(train::TrainingRun(spec, quiet()), Catch::Contains("$.data") && Catch::Contains("[6, 6, 6, 2]"));
  spec = small_run(R"({"type": "sgd", "lr": 0.1})");
  spec["trainng"] = json::object();
  CHECK_THROWS_WITH(train::TrainingRun(spec, quiet()), Catch::Contains("$.trainng") && Catch::Contains("unknown key"));
  spec = small_run(R"({"type": "sgd", "lr": 0.1})");
  spec["model"]["layers"][6]["units"] = 3;
  CHECK_THROWS_WITH(train::TrainingRun(spec, quiet()), Catch::Contains("$.loss"));
}

TEST_CASE("A run config without a training section takes the defaults", "[train][config]") {
  // The section read here is an empty object standing in for the missing one; the address
  // sanitizer build checks that it outlives its reader.
  auto spec = small_run(R"({"type": "sgd", "lr": 0.01})");
  spec.erase("training");
  const train::TrainingRun run(spec, quiet());
  const train::TrainingOptions defaults;
  CHECK(run.options().epochs == defaults.epochs);
  CHECK(run.options().batch_size == defaults.batch_size);
  CHECK(run.options().seed == defaults.seed);
}

TEST_CASE("Linear learning-rate scaling equals writing the scaled rate", "[train][config]") {
  // Global batch 4 against a reference batch of 2: the rate doubles.
  auto scaled = small_run(R"({"type": "sgd", "lr": 0.01, "momentum": 0.9, "lr_scaling": {"reference_batch": 2}})");
  auto written = small_run(R"({"type": "sgd", "lr": 0.02, "momentum": 0.9})");
  auto o = quiet();
  o.max_steps = 6;
  const auto a = train::TrainingRun(scaled, o).run(), b = train::TrainingRun(written, o).run();
  CHECK(a.step_losses == b.step_losses);
  auto bad = small_run(R"({"type": "sgd", "lr": 0.01, "lr_scaling": {"reference": 2}})");
  CHECK_THROWS_WITH(train::TrainingRun(bad, o), Catch::Contains("$.optimizer.lr_scaling"));
}

namespace {
/// A checkpoint file taken apart: magic, header, payload (the layout docs/checkpoints.md gives).
struct CheckpointParts {
  std::string magic;
  json header;
  std::string payload;
};

CheckpointParts read_parts(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  uint64_t length = 0;
  std::memcpy(&length, bytes.data() + 8, sizeof length);
  return {bytes.substr(0, 8), json::parse(bytes.substr(16, length)), bytes.substr(16 + length)};
}

void write_parts(const std::string& path, const CheckpointParts& parts) {
  const std::string text = parts.header.dump();
  const uint64_t length = text.size();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(parts.magic.data(), 8);
  out.write(reinterpret_cast<const char*>(&length), sizeof length);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.write(parts.payload.data(), static_cast<std::streamsize>(parts.payload.size()));
}

/// 64-bit FNV-1a over bytes, written here from its definition to re-seal an edited payload.
uint64_t fnv1a_bytes(const std::string& bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const unsigned char b : bytes) {
    h ^= b;
    h *= 0x100000001b3ull;
  }
  return h;
}
}  // namespace

TEST_CASE("Checkpoint header fields and values are checked before use, naming the file", "[train][checkpoint]") {
  const std::string good = "tessera_test_fields_good.ckpt", bad = "tessera_test_fields_bad.ckpt";
  const std::string sgd = R"({"type": "sgd", "lr": 0.01, "momentum": 0.9})";
  {
    auto o = quiet();
    o.max_steps = 2;
    o.checkpoint_file = good;
    train::TrainingRun(small_run(sgd), o).run();
  }
  const CheckpointParts original = read_parts(good);
  auto refused = [&](const CheckpointParts& parts, const std::string& problem) {
    write_parts(bad, parts);
    auto resume = quiet();
    resume.resume_file = bad;
    train::TrainingRun other(small_run(sgd), resume);
    const auto before = other.model().parameters().values().to_host();
    CHECK_THROWS_WITH(other.run(), Catch::Contains(bad) && Catch::Contains(problem));
    CHECK(other.model().parameters().values().to_host() == before);
  };
  {
    write_parts(bad, original);  // taken apart and put together again, it still resumes
    auto resume = quiet();
    resume.resume_file = bad;
    resume.max_steps = 3;
    CHECK(train::TrainingRun(small_run(sgd), resume).run().steps == 3);
  }
  for (const char* field : {"step", "optimizer_steps"}) {
    CheckpointParts parts = original;
    parts.header[field] = -4;
    refused(parts, std::string("field '") + field + "' is negative");
  }
  for (const char* field : {"step", "seed", "optimizer", "checksum"}) {
    CheckpointParts parts = original;
    parts.header.erase(field);
    refused(parts, std::string("field '") + field + "' is missing or not of its type");
    parts.header[field] = json::array({1});
    refused(parts, std::string("field '") + field + "' is missing or not of its type");
  }
  {
    CheckpointParts parts = original;
    parts.header["tensors"][0]["shape"] = json::array({-4, 3});
    refused(parts, "tensor 0 has an impossible shape");
    parts.header["tensors"][0].erase("shape");
    refused(parts, "tensor 0 has no shape list");
    parts.header.erase("tensors");
    refused(parts, "no tensor list");
  }
  {
    CheckpointParts parts = original;
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::memcpy(parts.payload.data(), &nan, sizeof nan);
    parts.header["checksum"] = fnv1a_bytes(parts.payload);
    refused(parts, "holds NaN or infinite values");
  }
  std::remove(good.c_str());
  std::remove(bad.c_str());
}

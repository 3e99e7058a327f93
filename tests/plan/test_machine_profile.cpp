#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "support/scratch_folder.hpp"
#include "tessera/core/error.hpp"
#include "tessera/plan/machine_profile.hpp"

using namespace tessera;
using namespace tessera::plan;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

MachineProfile sample_profile() {
  MachineProfile p;
  p.name = "test node";
  p.description = "two sockets, MPI within one node";
  p.origin = "measured";
  p.backend = "onednn";
  p.ranks_per_node = 4;
  p.threads_per_rank = 8;
  p.memory_per_rank = 32.0 * (1 << 30);
  p.process_baseline = 123.5e6;
  p.peak_flops_per_rank = 1.25e12;
  p.conv_efficiency = 0.6;
  p.memory_bandwidth_per_rank = 4.5e10;
  const Collective all[] = {Collective::point_to_point, Collective::allreduce, Collective::allgather,
                            Collective::alltoall, Collective::reduce_scatter};
  double k = 1;
  for (Collective c : all) {
    p.within_node[c] = {0.5e-6 * k, 1.0 / 10e9 * k};
    p.across_nodes[c] = {2e-6 * k, 1.0 / 12.5e9 * k};
    k += 0.25;
  }
  p.layer_times["conv1 [2,16,16,16,4] onednn"] = {1.5e-3, 3.25e-3};
  p.layer_times["fc1 [2,64]"] = {2e-5, 4e-5};
  return p;
}

/// A fresh folder `name` inside this process's own scratch folder (ScratchFolder: two test
/// processes never share it), emptied first so that a case may ask for the same name twice.
fs::path scratch_dir(const std::string& name) {
  static const testing::ScratchFolder process("tessera_test_machine_profile");
  const fs::path dir = fs::path(process.path()) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void write_text(const fs::path& file, const std::string& text) {
  std::ofstream out(file);
  out << text;
}

/// The message of the error `read_machine_profile` throws for a file holding `text`.
std::string refusal(const std::string& text) {
  const fs::path file = scratch_dir("bad") / "bad.json";
  write_text(file, text);
  try {
    read_machine_profile(file.string());
  } catch (const Error& e) {
    return e.what();
  }
  return "(accepted)";
}

/// sample_profile()'s JSON with `edit` applied, as file text.
template <class Edit>
std::string edited(Edit edit) {
  json j = sample_profile().to_json();
  edit(j);
  return j.dump();
}

}  // namespace

TEST_CASE("a machine profile survives to_json and from_json unchanged", "[plan][machine_profile]") {
  const MachineProfile p = sample_profile();
  const json j = p.to_json();
  CHECK(j.at("format_version") == MachineProfile::kFormatVersion);
  CHECK(j.at("within_node").at("allgather").at("alpha_s") == 0.75e-6);
  CHECK(j.at("layer_times").at("fc1 [2,64]").at("backward_s") == 4e-5);
  const MachineProfile q = MachineProfile::from_json(j, "memory");
  CHECK(q.to_json() == j);
  CHECK(q.name == p.name);
  CHECK(q.backend == "onednn");
  CHECK(q.ranks_per_node == 4);
  CHECK(q.threads_per_rank == 8);
  CHECK(q.process_baseline == p.process_baseline);
  CHECK(q.within_node.at(Collective::alltoall).beta == p.within_node.at(Collective::alltoall).beta);
  CHECK(q.across_nodes.size() == 5);
  CHECK(q.layer_times.at("conv1 [2,16,16,16,4] onednn").forward == 1.5e-3);
}

TEST_CASE("collective_seconds follows the alpha-beta formulas within and across nodes", "[plan][machine_profile]") {
  MachineProfile p;
  p.name = "formulas";
  p.ranks_per_node = 4;
  const double a = 2e-6, b = 1e-9, A = 10e-6, B = 1e-10;
  for (Collective c : {Collective::point_to_point, Collective::allreduce, Collective::allgather, Collective::alltoall,
                       Collective::reduce_scatter}) {
    p.within_node[c] = {a, b};
    p.across_nodes[c] = {A, B};
  }
  const double n = 1e6;
  // Within a node: 4 ranks. log2(4) = 2, (p-1)/p = 3/4.
  CHECK(p.collective_seconds(Collective::point_to_point, 2, n) == Approx(a + n * b));
  CHECK(p.collective_seconds(Collective::allreduce, 4, n) == Approx(2 * 2 * a + 2 * 0.75 * n * b));
  CHECK(p.collective_seconds(Collective::allgather, 4, n) == Approx(3 * a + 3 * n * b));
  CHECK(p.collective_seconds(Collective::reduce_scatter, 4, n) == Approx(3 * a + 3 * n * b));
  CHECK(p.collective_seconds(Collective::alltoall, 4, n) == Approx(3 * a + 0.75 * n * b));
  // Across nodes: 8 ranks (more than 4 per node). log2(8) = 3, (p-1)/p = 7/8.
  CHECK(p.collective_seconds(Collective::point_to_point, 8, n) == Approx(A + n * B));
  // An allreduce over 2 nodes of 4: halvings nearest first, the first two (n/2, n/4) inside a
  // node, the third (n/8) across, and the doublings back alike.
  CHECK(p.collective_seconds(Collective::allreduce, 8, n) ==
        Approx(2 * 2 * a + 2 * 0.75 * n * b + 2 * 1 * A + 2 * 0.125 * n * B));
  CHECK(p.collective_seconds(Collective::allgather, 8, n) == Approx(7 * A + 7 * n * B));
  CHECK(p.collective_seconds(Collective::reduce_scatter, 8, n) == Approx(7 * A + 7 * n * B));
  CHECK(p.collective_seconds(Collective::alltoall, 8, n) == Approx(7 * A + 0.875 * n * B));
  // Nothing to send, or nobody to send it to.
  CHECK(p.collective_seconds(Collective::allreduce, 1, n) == 0);
  CHECK(p.collective_seconds(Collective::allreduce, 4, 0) == 0);
}

TEST_CASE("an allreduce over nodes splits into the halvings inside a node and those across", "[plan][machine_profile]") {
  const double n = 16.8e6;
  for (const int64_t ranks : {8, 64, 2048}) {
    const AlphaBetaTerms flat = alpha_beta_terms(Collective::allreduce, ranks, n);
    // One rank per node: everything crosses the network, as the flat formula says.
    const SplitTerms one = allreduce_split_terms(ranks, 1, n);
    CHECK(one.within.alpha == 0);
    CHECK(one.within.beta == 0);
    CHECK(one.across.alpha == Approx(flat.alpha));
    CHECK(one.across.beta == Approx(flat.beta));
    // Four per node: two steps inside, the rest across; the same messages in all.
    const SplitTerms four = allreduce_split_terms(ranks, 4, n);
    CHECK(four.within.alpha == Approx(4));
    CHECK(four.within.beta == Approx(1.5 * n));
    CHECK(four.within.alpha + four.across.alpha == Approx(flat.alpha));
    CHECK(four.within.beta + four.across.beta == Approx(flat.beta));
    // Six per node: only the pairs inside aligned blocks of 2 stay on a node.
    CHECK(allreduce_split_terms(ranks, 6, n).within.alpha == Approx(2));
  }
  // The published Sierra profile: 2048 V100s summing 16.8 MB, about what tessera-sim replays on
  // the Sierra-like platform (3.3 ms), no longer the 5.8 ms of pricing it all across nodes.
  const MachineProfile sierra =
      read_machine_profile((std::filesystem::path(TESSERA_SOURCE_DIR) / "share" / "machines" / "sierra.json").string());
  CHECK(sierra.collective_seconds(Collective::allreduce, 2048, n) == Approx(3.3e-3).epsilon(0.05));
  const AlphaBetaTerms parts = sierra.collective_parts(Collective::allreduce, 2048, n);
  CHECK(parts.alpha + parts.beta == Approx(sierra.collective_seconds(Collective::allreduce, 2048, n)));
}

TEST_CASE("collective_seconds names the profile and the command when costs are missing", "[plan][machine_profile]") {
  MachineProfile p;
  p.name = "one rank";
  p.ranks_per_node = 8;
  // One rank needs no costs at all.
  CHECK(p.collective_seconds(Collective::allreduce, 1, 1e6) == 0);
  CHECK_THROWS_WITH(p.collective_seconds(Collective::allreduce, 2, 1e6),
                    Catch::Contains("machine profile 'one rank': $.within_node.allreduce") &&
                        Catch::Contains("mpirun -np N tessera calibrate"));
  p.within_node[Collective::allreduce] = {1e-6, 1e-9};
  CHECK(p.collective_seconds(Collective::allreduce, 8, 1e6) > 0);
  CHECK_THROWS_WITH(p.collective_seconds(Collective::allreduce, 16, 1e6),
                    Catch::Contains("$.across_nodes.allreduce") &&
                        Catch::Contains("16 ranks need (more than the 8 ranks per node") &&
                        Catch::Contains("tessera calibrate"));
}

TEST_CASE("a profile file round-trips through write and read, with no temporary file left", "[plan][machine_profile]") {
  const fs::path dir = scratch_dir("write");
  const std::string file = (dir / "machine.json").string();
  write_machine_profile(sample_profile(), file);
  CHECK(read_machine_profile(file).to_json() == sample_profile().to_json());
  // Overwriting keeps just the one file.
  MachineProfile other = sample_profile();
  other.name = "again";
  write_machine_profile(other, file);
  CHECK(read_machine_profile(file).name == "again");
  int entries = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    CHECK(e.path().filename() == "machine.json");
    ++entries;
  }
  CHECK(entries == 1);
  CHECK_THROWS_AS(write_machine_profile(other, (dir / "no-such-dir" / "m.json").string()), IoError);
}

TEST_CASE("a profile file may carry // comments", "[plan][machine_profile]") {
  std::string text = sample_profile().to_json().dump(2);
  text.insert(text.find('\n') + 1, "  // measured on the test node\n");
  CHECK(refusal(text) == "(accepted)");
}

TEST_CASE("files that are not machine profiles are refused naming the file, key and problem",
          "[plan][machine_profile]") {
  CHECK_THAT(refusal("{\"format_version\": 1, \"name\": "), Catch::Contains("bad.json"));
  CHECK_THAT(refusal("[1, 2]"), Catch::Contains("bad.json: $") && Catch::Contains("not a Tessera machine profile"));
  CHECK_THAT(refusal("{\"name\": \"x\"}"),
             Catch::Contains("bad.json: $.format_version") && Catch::Contains("not a Tessera machine profile"));
  CHECK_THAT(refusal(edited([](json& j) { j["format_version"] = 2; })),
             Catch::Contains("$.format_version") && Catch::Contains("written by a newer Tessera"));
  CHECK_THAT(refusal(edited([](json& j) { j["format_version"] = "1"; })),
             Catch::Contains("$.format_version") && Catch::Contains("not a Tessera machine profile version"));
  CHECK_THAT(refusal(edited([](json& j) { j.erase("peak_flops_per_rank"); })),
             Catch::Contains("$.peak_flops_per_rank: required key is missing"));
  CHECK_THAT(refusal(edited([](json& j) { j.erase("across_nodes"); })),
             Catch::Contains("$.across_nodes: required key is missing"));
  CHECK_THAT(refusal(edited([](json& j) { j["memory_bandwidth_per_rank"] = -1.0; })),
             Catch::Contains("$.memory_bandwidth_per_rank: expected a finite number > 0"));
  CHECK_THAT(refusal(edited([](json& j) { j["within_node"]["allreduce"]["beta_s_per_byte"] = -1e-9; })),
             Catch::Contains("$.within_node.allreduce.beta_s_per_byte: expected a finite number >= 0"));
  CHECK_THAT(refusal(edited([](json& j) { j["layer_times"]["x"]["forward_s"] = -1; })),
             Catch::Contains("$.layer_times.x.forward_s: expected a finite number >= 0"));
  CHECK_THAT(refusal(edited([](json& j) {
               j["across_nodes"]["broadcast"] = {{"alpha_s", 1e-6}, {"beta_s_per_byte", 0}};
             })),
             Catch::Contains("$.across_nodes.broadcast: unknown collective") && Catch::Contains("reduce_scatter"));
  CHECK_THAT(refusal(edited([](json& j) { j["peak_flop_per_rank"] = 1e12; })),
             Catch::Contains("$.peak_flop_per_rank: unknown key"));
  CHECK_THAT(refusal(edited([](json& j) { j["within_node"]["allgather"]["gamma"] = 0; })),
             Catch::Contains("$.within_node.allgather.gamma: unknown key"));
  CHECK_THAT(refusal(edited([](json& j) { j["within_node"]["alltoall"].erase("alpha_s"); })),
             Catch::Contains("$.within_node.alltoall.alpha_s: required key is missing"));
  CHECK_THAT(refusal(edited([](json& j) { j["origin"] = "guessed"; })),
             Catch::Contains("$.origin: expected \"measured\" or \"published\""));
  CHECK_THAT(refusal(edited([](json& j) { j["conv_efficiency"] = 1.5; })), Catch::Contains("$.conv_efficiency"));
  CHECK_THAT(refusal(edited([](json& j) { j["ranks_per_node"] = 0; })),
             Catch::Contains("$.ranks_per_node: expected an integer from 1 to 1048576"));
}

TEST_CASE("a missing profile file is an error naming it", "[plan][machine_profile]") {
  const std::string file = (scratch_dir("missing") / "absent.json").string();
  CHECK_THROWS_WITH(read_machine_profile(file), Catch::Contains(file) && Catch::Contains("cannot open"));
}

TEST_CASE("the published machine profiles parse and state sane figures", "[plan][machine_profile]") {
  const fs::path dir = fs::path(TESSERA_SOURCE_DIR) / "share" / "machines";
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    ++files;
    INFO(entry.path().string());
    const MachineProfile p = read_machine_profile(entry.path().string());
    CHECK(p.origin == "published");
    CHECK(p.name == entry.path().stem().string());
    CHECK(!p.description.empty());
    CHECK(p.layer_times.empty());
    CHECK(p.peak_flops_per_rank > 1e11);
    CHECK(p.memory_bandwidth_per_rank > 1e10);
    CHECK(p.memory_per_rank > 1e9);
    CHECK(p.process_baseline < p.memory_per_rank);
    CHECK(p.conv_efficiency > 0.1);
    CHECK(p.conv_efficiency < 1);
    for (const auto* links : {&p.within_node, &p.across_nodes}) {
      CHECK(links->size() == 5);
      for (const auto& [c, cost] : *links) {
        INFO(collective_name(c));
        // Microseconds of latency, GB/s of bandwidth: figures of real networks.
        CHECK(cost.alpha > 1e-8);
        CHECK(cost.alpha < 1e-4);
        CHECK(cost.beta > 1.0 / 1e12);
        CHECK(cost.beta < 1.0 / 1e8);
      }
    }
    // Every collective is priced for plans within a node and across nodes.
    for (const int64_t ranks : {p.ranks_per_node * 1, p.ranks_per_node * 4})
      CHECK(p.collective_seconds(Collective::allreduce, ranks, 1e6) >= 0);
  }
  CHECK(files == 4);  // theta, skylake_cluster, sierra, perlmutter
}

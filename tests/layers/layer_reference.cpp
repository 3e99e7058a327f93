// Every layer type's forward and backward, run in one build and held to the results of
// another: the CPU build writes the reference (`write FILE`), a GPU build checks its own
// results against it (`check FILE`), so a device kernel that differs from the host's fails
// by name. Inputs, output gradients and parameters are drawn on the host from fixed seeds, so
// both builds see the same numbers whatever their random number generators.
//
// Usage: tessera_layer_reference write FILE [--backend B]
//        tessera_layer_reference check FILE [--backend B[,B...]] [--tolerance T]
// B: the op factory's preference ("auto": oneDNN on CPUs, cuDNN on GPUs; "kokkos").
// Exit 0: written, or every tensor within T (relative 2-norm error, default 1e-4) of the
// reference; 1: a tensor differs, is missing or the file is not a reference; 2: bad usage.
#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "support/layer_entries.hpp"
#include "support/layer_harness.hpp"
#include "tessera/core/config.hpp"
#include "tessera/model/layer_registry.hpp"

namespace {

using namespace tessera;
using Records = std::map<std::string, std::vector<float>>;

constexpr const char* magic = "TESSERA-LAYER-REFERENCE 1";

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

/// Two samples of three channels over an uneven box of the type's spatial rank.
Shape input_shape(const std::string& type) {
  if (type == "dense") return {2, 12};
  if (ends_with(type, "2d")) return {2, 8, 6, 3};
  return {2, 6, 8, 4, 3};
}

/// Forward, then backward with a fixed output gradient, of one layer type: its output, input
/// gradients and parameter gradients by name.
void run_layer(const std::string& type, const model::spec::LayerEntry& entry, const std::string& backend,
               Records& out) {
  nlohmann::json keys = entry.keys();
  ConfigObject cfg(keys, "$.layers[0]");
  auto layer = model::make_layer(type, "l", cfg);
  const Shape shape = input_shape(type);
  const size_t inputs = keys.contains("inputs") ? keys["inputs"].size() : 1;
  testing::LayerHarness h(std::move(layer), std::vector<Shape>(inputs, shape), 1234, backend);
  // A layer that learns by a local rule (bcpnn) reads its inputs and buffers as probabilities,
  // so they are made positive, and it learns in this forward pass: its buffers after it are
  // held to the reference too.
  const bool local = h.layer().traits().learns_locally;
  const auto positive = [local](std::vector<float> v) {
    if (local)
      for (float& x : v) x = std::abs(x) + 0.01f;
    return v;
  };
  unsigned seed = 500;
  for (const auto& p : h.params().all())
    p->value.copy_from_host(positive(testing::random_vector<float>(static_cast<size_t>(p->value.numel()), seed++)));
  for (size_t i = 0; i < inputs; ++i) h.input(i).copy_from_host(positive(h.input(i).to_host()));
  layers::StepInfo step;
  step.batch = shape[0];
  step.local_learning = local;
  out[type + " output"] = h.forward(step);
  for (const auto& p : h.params().all())
    if (local && !p->trainable) out[type + " " + p->name + " after learning"] = p->value.to_host();
  const auto dy = testing::random_vector<float>(out[type + " output"].size(), 77);
  const auto dx = h.backward(dy, step);
  for (size_t i = 0; i < dx.size(); ++i) out[type + " input " + std::to_string(i) + " gradient"] = dx[i];
  for (const auto& p : h.params().all())
    if (p->trainable) out[type + " " + p->name + " gradient"] = p->grad.to_host();
}

Records run_all(const std::string& backend) {
  Records out;
  const auto entries = test::typed_layer_entries();
  for (const std::string& type : model::layer_types()) run_layer(type, entries.at(type), backend, out);
  return out;
}

void write_records(const std::string& path, const Records& records) {
  const std::string tmp = path + ".partial";
  {
    std::ofstream f(tmp, std::ios::binary);
    f << magic << "\n";
    for (const auto& [name, values] : records) {
      f << name << "\t" << values.size() << "\n";
      f.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(float)));
    }
    if (!f) throw std::runtime_error("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw std::runtime_error("cannot rename " + tmp + " to " + path);
}

Records read_records(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error(path + ": cannot open");
  std::string line;
  if (!std::getline(f, line) || line != magic) throw std::runtime_error(path + ": not a layer reference file");
  Records records;
  while (std::getline(f, line)) {
    const auto tab = line.rfind('\t');
    if (tab == std::string::npos) throw std::runtime_error(path + ": malformed record header '" + line + "'");
    std::vector<float> values(std::stoull(line.substr(tab + 1)));
    f.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(float)));
    if (!f) throw std::runtime_error(path + ": truncated at '" + line.substr(0, tab) + "'");
    records[line.substr(0, tab)] = std::move(values);
  }
  return records;
}

/// ‖a − b‖ / ‖b‖ in double; NaN anywhere makes it NaN, which fails every comparison.
double relative_error(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0.0, norm = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = static_cast<double>(a[i]) - static_cast<double>(b[i]);
    diff += d * d;
    norm += static_cast<double>(b[i]) * static_cast<double>(b[i]);
  }
  return std::sqrt(diff) / std::max(std::sqrt(norm), 1e-30);
}

/// Prints each tensor's error; returns how many failed.
int compare(const Records& got, const Records& reference, const std::string& backend, double tolerance) {
  int failed = 0;
  for (const auto& [name, ref] : reference) {
    const auto it = got.find(name);
    if (it == got.end() || it->second.size() != ref.size()) {
      std::printf("FAIL %-8s %-44s missing or of another size in this build\n", backend.c_str(), name.c_str());
      ++failed;
      continue;
    }
    const double e = relative_error(it->second, ref);
    const bool ok = e <= tolerance;
    failed += ok ? 0 : 1;
    std::printf("%s %-8s %-44s relative error %.2e\n", ok ? "ok  " : "FAIL", backend.c_str(), name.c_str(), e);
  }
  for (const auto& [name, values] : got)
    if (!reference.count(name)) {
      std::printf("FAIL %-8s %-44s not in the reference (written by another version?)\n", backend.c_str(), name.c_str());
      ++failed;
    }
  return failed;
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> parts;
  std::stringstream in(s);
  for (std::string p; std::getline(in, p, ',');) parts.push_back(p);
  return parts;
}

int run(const std::vector<std::string>& args) {
  if (args.size() < 2 || (args[0] != "write" && args[0] != "check")) {
    std::fprintf(stderr, "usage: tessera_layer_reference write|check FILE [--backend B[,B...]] [--tolerance T]\n");
    return 2;
  }
  std::string backends = "auto";
  double tolerance = 1e-4;
  for (size_t i = 2; i + 1 < args.size(); i += 2) {
    if (args[i] == "--backend") backends = args[i + 1];
    else if (args[i] == "--tolerance") tolerance = std::stod(args[i + 1]);
    else {
      std::fprintf(stderr, "tessera_layer_reference: unknown argument '%s'\n", args[i].c_str());
      return 2;
    }
  }
  if (args[0] == "write") {
    const Records records = run_all(backends);
    write_records(args[1], records);
    std::printf("wrote %zu tensors of %zu layer types to %s\n", records.size(), model::layer_types().size(),
                args[1].c_str());
    return 0;
  }
  const Records reference = read_records(args[1]);
  int failed = 0;
  for (const std::string& backend : split_commas(backends)) failed += compare(run_all(backend), reference, backend, tolerance);
  std::printf("%s: %d tensor(s) over the tolerance %.1e\n", failed ? "FAILED" : "passed", failed, tolerance);
  return failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  try {
    return run(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessera_layer_reference: %s\n", e.what());
    return 1;
  }
}

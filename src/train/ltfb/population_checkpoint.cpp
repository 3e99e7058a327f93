#include "tessera/train/ltfb/population_checkpoint.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tessera/core/atomic_file.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/json_reader.hpp"

namespace tessera::train {
namespace {
constexpr int kVersion = 1;
const char* const kFormat = "tessera-population";

std::string base_name(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}
}  // namespace

std::string PopulationManifest::trainer_file(const std::string& path, int64_t step, int64_t trainer) {
  return path + ".step" + std::to_string(step) + ".trainer" + std::to_string(trainer);
}

std::string PopulationManifest::beside(const std::string& path, const std::string& file) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? file : path.substr(0, slash + 1) + file;
}

void PopulationManifest::write(const std::string& path) const {
  nlohmann::json members = nlohmann::json::array();
  for (size_t t = 0; t < files.size(); ++t)
    members.push_back({{"file", base_name(files[t])}, {"hyperparameters", hyperparameters[t]}});
  const nlohmann::json j{{"format", kFormat},    {"version", kVersion}, {"step", step},
                         {"trainers", trainers}, {"seed", seed},        {"hyperparameter_keys", hyperparameter_keys},
                         {"members", members}};
  const std::string text = j.dump(1) + "\n";
  write_text_atomically(path, text);
}

bool PopulationManifest::is_manifest(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char first = 0;
  return in.get(first) && first == '{';  // a trainer's checkpoint starts with its magic bytes
}

PopulationManifest PopulationManifest::read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError(path + ": cannot open the population checkpoint for reading");
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json j;
  try {
    j = parse_json_text(text.str(), path);
  } catch (const ConfigError& e) {
    throw IoError(path + ": corrupt population checkpoint: " + e.what());
  }
  auto fail = [&](const std::string& problem) -> IoError {
    return IoError(path + ": corrupt population checkpoint: " + problem);
  };
  const bool known = j.is_object() && j.contains("format") && j["format"].is_string() && j["format"] == kFormat &&
                     j.contains("version") && j["version"].is_number_integer() && j["version"] == kVersion;
  if (!known) throw IoError(path + ": not a population checkpoint of a version this build reads");
  PopulationManifest m;
  try {
    m.step = j.at("step").get<int64_t>();
    m.trainers = j.at("trainers").get<int64_t>();
    m.seed = j.at("seed").get<uint64_t>();
    m.hyperparameter_keys = j.at("hyperparameter_keys").get<std::vector<std::string>>();
    for (const auto& member : j.at("members")) {
      m.files.push_back(member.at("file").get<std::string>());
      m.hyperparameters.push_back(member.at("hyperparameters").get<std::vector<double>>());
    }
  } catch (const nlohmann::json::exception&) {
    throw fail("a field is missing or not of its type");
  }
  if (m.step < 0 || m.trainers < 1 || static_cast<int64_t>(m.files.size()) != m.trainers)
    throw fail("it names " + std::to_string(m.files.size()) + " trainer files for " + std::to_string(m.trainers) +
               " trainers at step " + std::to_string(m.step));
  for (size_t t = 0; t < m.files.size(); ++t) {
    if (m.files[t].empty() || m.files[t].find('/') != std::string::npos)
      throw fail("trainer " + std::to_string(t) + "'s file name '" + m.files[t] + "' is not a plain file name");
    if (m.hyperparameters[t].size() != m.hyperparameter_keys.size())
      throw fail("trainer " + std::to_string(t) + " has " + std::to_string(m.hyperparameters[t].size()) +
                 " hyper-parameters for " + std::to_string(m.hyperparameter_keys.size()) + " keys");
  }
  return m;
}

}  // namespace tessera::train

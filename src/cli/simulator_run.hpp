#pragma once
// Runs tessera-sim, the SimGrid replay built beside `tessera` where SimGrid is found
// (docs/simulation.md), on a step schedule, and reads its result.
#include <string>

#include <nlohmann/json.hpp>

namespace tessera::cli {

/// The path of tessera-sim: beside this program (build tree or install), else on PATH. Throws
/// ConfigError naming `flag` when there is none, saying how to build it.
std::string find_simulator(const std::string& flag);

/// Replays `schedule` on `platform` with `simulator` and returns its JSON result. Throws
/// ConfigError naming `flag` with the simulator's own message when it fails (a platform
/// too small for the ranks, a bad platform file).
nlohmann::json run_simulator(const std::string& simulator, const std::string& schedule, const std::string& platform,
                             const std::string& flag);

}  // namespace tessera::cli

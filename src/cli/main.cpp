// The `tessera` command. Arguments starting with --kokkos- go to Kokkos; everything else is
// ours. Errors of any kind are caught here, once, and end the process with a message and a
// non-zero exit.
#include <Kokkos_Core.hpp>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "commands.hpp"
#include "tessera/build_info.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"

int main(int argc, char* argv[]) {
  std::vector<char*> ours{argv[0]}, kokkos_args{argv[0]};
  for (int i = 1; i < argc; ++i) (std::string(argv[i]).rfind("--kokkos-", 0) == 0 ? kokkos_args : ours).push_back(argv[i]);

  CLI::App app{"Tessera " TESSERA_VERSION
               ": distributed training of 3D convolutional networks on CPUs and GPUs.\n"
               "Kokkos options are passed through: --kokkos-threads=N, --kokkos-device-id=N, "
               "--kokkos-tools-library=LIB, --kokkos-help.",
               "tessera"};
  app.set_version_flag("--version", TESSERA_VERSION);
  app.require_subcommand(1);
  tessera::cli::TrainArgs train_args;
  auto* train = tessera::cli::add_train_command(app, train_args);
  auto* info = app.add_subcommand("info", "Print the build configuration: Kokkos execution space and threads, "
                                          "compiled-in backends and library versions.");
  try {
    app.parse(static_cast<int>(ours.size()), ours.data());
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  int kokkos_argc = static_cast<int>(kokkos_args.size());
  int status = 0;
  Kokkos::initialize(kokkos_argc, kokkos_args.data());
  try {
    if (*train) status = tessera::cli::run_train(train_args);
    if (*info) status = tessera::cli::run_info();
  } catch (const std::exception& e) {
    tessera::log::error(e.what());
    status = 1;
  }
  Kokkos::finalize();
  return status;
}

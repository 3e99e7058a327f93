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
#include "tessera/parallel/communicator.hpp"

int main(int argc, char* argv[]) {
  // MPI first: it may consume its own arguments, and every rank must take part even in --help.
  tessera::parallel::MpiSession mpi(argc, argv);
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
  tessera::cli::DatagenArgs datagen_args;
  auto* datagen = tessera::cli::add_datagen_command(app, datagen_args);
  auto* info = app.add_subcommand("info", "Print the build configuration: Kokkos execution space and threads, "
                                          "compiled-in backends and library versions.");
  try {
    app.parse(static_cast<int>(ours.size()), ours.data());
  } catch (const CLI::ParseError& e) {
    // Every rank sees the same arguments and exits alike; only rank 0 prints help or errors.
    if (tessera::log::rank() != 0) return e.get_exit_code();
    return app.exit(e);
  }

  int kokkos_argc = static_cast<int>(kokkos_args.size());
  int status = 0;
  Kokkos::initialize(kokkos_argc, kokkos_args.data());
  try {
    if (*train) status = tessera::cli::run_train(train_args);
    if (*datagen) status = tessera::cli::run_datagen(datagen_args);
    if (*info) status = tessera::cli::run_info();
  } catch (const std::exception& e) {
    // On one rank or many: say what failed where, and end every rank (no rank may be left
    // waiting in a collective for one that is gone).
    status = tessera::parallel::handle_fatal_error(e);
  }
  Kokkos::finalize();
  return status;
}

// The `tessera` command. Arguments starting with --kokkos- go to Kokkos; everything else is
// ours. Errors of any kind are caught here, once, and end the process with a message and a
// non-zero exit.
#include <Kokkos_Core.hpp>

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "commands.hpp"
#include "tessera/build_info.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/parallel/communicator.hpp"

namespace {

/// The error for the first word where `app` (or one of its subcommands) expects a subcommand
/// and has none of that name, or "". CLI11 would only say that a subcommand is required.
std::string unknown_subcommand(CLI::App& app, const std::vector<char*>& args) {
  CLI::App* current = &app;
  std::string chain = "tessera";
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string word = args[i];
    if (word.empty() || word[0] == '-') return "";  // options: CLI11 checks them
    const auto subcommands = current->get_subcommands([](CLI::App*) { return true; });
    if (subcommands.empty()) return "";
    const auto positionals = current->get_options([](const CLI::Option* o) { return o->get_positional(); });
    if (!positionals.empty()) return "";
    CLI::App* next = nullptr;
    std::string known;
    for (CLI::App* sub : subcommands) {
      if (sub->get_name() == word) next = sub;
      known += (known.empty() ? "" : ", ") + sub->get_name();
    }
    if (next == nullptr)
      return chain + ": unknown command '" + word + "' (commands: " + known + "; see " + chain + " --help)";
    current = next;
    chain += " " + word;
  }
  return "";
}

/// The error for a malformed numeric Kokkos flag, or "". Kokkos 3.4 parses these with atoi-like
/// code that ends in std::terminate on text it cannot read.
std::string bad_kokkos_flag(const std::vector<char*>& args) {
  struct Numeric {
    const char* flag;
    long minimum;
  };
  static const Numeric numeric[] = {{"--kokkos-threads", 1},
                                    {"--kokkos-numa", 1},
                                    {"--kokkos-device-id", 0},
                                    {"--kokkos-num-devices", 1},
                                    {"--kokkos-ndevices", 1}};
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string arg = args[i];
    for (const auto& n : numeric) {
      const std::string prefix = std::string(n.flag) + "=";
      if (arg == n.flag) return "tessera: " + arg + ": expected " + prefix + "N";
      if (arg.rfind(prefix, 0) != 0) continue;
      const std::string value = arg.substr(prefix.size());
      char* end = nullptr;
      errno = 0;
      const long v = value.empty() ? -1 : std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || errno != 0 || v < n.minimum || v > 1 << 20)
        return "tessera: " + arg + ": expected an integer of at least " + std::to_string(n.minimum);
    }
  }
  return "";
}

}  // namespace

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
  train_args.command_line.assign(argv, argv + argc);
  auto* train = tessera::cli::add_train_command(app, train_args);
  tessera::cli::DatagenArgs datagen_args;
  auto* datagen = tessera::cli::add_datagen_command(app, datagen_args);
  tessera::cli::FashionMnistArgs fashion_args;
  auto* fashion_mnist = tessera::cli::add_fashion_mnist_command(*datagen, fashion_args);
  auto* info = app.add_subcommand("info", "Print the build configuration: Kokkos execution space and threads, "
                                          "compiled-in backends and library versions.");
  tessera::cli::SearchArgs search_args;
  auto* search = tessera::cli::add_search_command(app, search_args);
  tessera::cli::BenchArgs bench_args;
  auto* bench = tessera::cli::add_bench_command(app, bench_args);
  for (const std::string& problem : {unknown_subcommand(app, ours), bad_kokkos_flag(kokkos_args)})
    if (!problem.empty()) {
      // Every rank sees the same arguments and exits alike; only rank 0 prints.
      if (tessera::log::rank() == 0) std::fprintf(stderr, "%s\n", problem.c_str());
      return 2;
    }
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
    if (*fashion_mnist) status = tessera::cli::run_fashion_mnist(fashion_args);
    if (*datagen && !*fashion_mnist) status = tessera::cli::run_datagen(datagen_args);
    if (*info) status = tessera::cli::run_info();
    if (*search) status = tessera::cli::run_search(search_args);
    if (*bench) status = tessera::cli::run_bench(bench_args);
  } catch (const std::exception& e) {
    // On one rank or many: say what failed where, and end every rank (no rank may be left
    // waiting in a collective for one that is gone).
    status = tessera::parallel::handle_fatal_error(e);
  }
  Kokkos::finalize();
  return status;
}

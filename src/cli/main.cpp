// The `tessera` command. Arguments starting with --kokkos- go to Kokkos; everything else is
// ours. Errors of any kind are caught here, once, and end the process with a message and a
// non-zero exit.
#include <sched.h>
#include <unistd.h>
#include <Kokkos_Core.hpp>

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <optional>
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

/// Whether this process has the node's CPUs to itself to spread threads over: the launcher
/// bound it to a subset (so its neighbours have other CPUs), or it is the only rank of the
/// node. Pinning the threads of several unbound ranks would stack them on the same CPUs.
bool owns_its_cpus() {
#ifdef __linux__
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof mask, &mask) == 0 && CPU_COUNT(&mask) < sysconf(_SC_NPROCESSORS_ONLN)) return true;
#endif
  // Open MPI, MPICH (Hydra) and Slurm say how many ranks share the node, or at least that
  // there is a launcher.
  for (const char* local : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"})
    if (const char* n = std::getenv(local)) return std::string(n) == "1";
  for (const char* launched : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "SLURM_STEP_ID"})
    if (std::getenv(launched) != nullptr) return false;
  return true;
}

/// When the user set neither OMP_PROC_BIND nor OMP_PLACES, runs this program again with
/// OMP_PROC_BIND=spread and OMP_PLACES=threads (Kokkos' advice, which it otherwise prints on
/// every run): threads that stay on their CPUs keep the pages they first touched local. The
/// OpenMP runtime reads these variables when it is loaded, before main, so setting them here
/// takes effect only in a new image of the program; exec keeps the process (and its place in
/// the MPI launch, which has not started yet). TESSERA_OMP_DEFAULTS=0 turns this off.
void default_openmp_binding(char* argv[]) {
#if defined(KOKKOS_ENABLE_OPENMP) && defined(__linux__)
  if (std::getenv("OMP_PROC_BIND") != nullptr || std::getenv("OMP_PLACES") != nullptr) return;
  if (const char* opt = std::getenv("TESSERA_OMP_DEFAULTS"); opt != nullptr && std::string(opt) == "0") return;
  if (!owns_its_cpus()) return;
  setenv("OMP_PROC_BIND", "spread", 1);
  setenv("OMP_PLACES", "threads", 1);
  execv("/proc/self/exe", argv);
  // No exec (no /proc): carry on as launched, threads unbound, and let Kokkos say so.
  unsetenv("OMP_PROC_BIND");
  unsetenv("OMP_PLACES");
#else
  (void)argv;
#endif
}

/// Every command's flags, and the subcommand each is parsed from.
struct Commands {
  tessera::cli::TrainArgs train_args;
  tessera::cli::DatagenArgs datagen_args;
  tessera::cli::FashionMnistArgs fashion_args;
  tessera::cli::InfoArgs info_args;
  tessera::cli::SearchArgs search_args;
  tessera::cli::PlanArgs plan_args;
  tessera::cli::BenchArgs bench_args;
  tessera::cli::CalibrateArgs calibrate_args;
  tessera::cli::ReportArgs report_args;
  tessera::cli::ScoreArgs score_args;
  tessera::cli::PredictArgs predict_args;
  tessera::cli::FfnSegmentArgs ffn_args;
  CLI::App *train = nullptr, *datagen = nullptr, *fashion_mnist = nullptr, *info = nullptr, *search = nullptr,
           *plan = nullptr, *bench = nullptr, *calibrate = nullptr, *report = nullptr, *score = nullptr,
           *predict = nullptr, *ffn = nullptr;
};

void add_info_command(CLI::App& app, Commands& c) {
  c.info = app.add_subcommand("info",
                              "Print the build configuration: Kokkos execution space and threads, "
                              "compiled-in backends and library versions.");
  c.info->add_flag("--topology", c.info_args.topology,
                   "Print this node's packages, NUMA domains, cores and GPUs, this process's binding, and the "
                   "recommended ranks per node and mpirun mapping for each kind of split");
  c.info->add_option("--topology-of", c.info_args.topology_of,
                     "Like --topology, for another node: read an hwloc XML file (lstopo FILE.xml) or "
                     "a synthetic description such as \"package:2 numa:1 core:20 pu:2\"");
}

/// The commands, in the order --help lists them.
void add_commands(CLI::App& app, Commands& c, int argc, char* argv[]) {
  c.train_args.command_line.assign(argv, argv + argc);
  c.train = tessera::cli::add_train_command(app, c.train_args);
  c.datagen = tessera::cli::add_datagen_command(app, c.datagen_args);
  c.fashion_mnist = tessera::cli::add_fashion_mnist_command(*c.datagen, c.fashion_args);
  add_info_command(app, c);
  c.search = tessera::cli::add_search_command(app, c.search_args);
  c.plan = tessera::cli::add_plan_command(app, c.plan_args);
  c.bench = tessera::cli::add_bench_command(app, c.bench_args);
  c.calibrate = tessera::cli::add_calibrate_command(app, c.calibrate_args);
  c.report = tessera::cli::add_report_command(app, c.report_args);
  c.score = tessera::cli::add_score_command(app, c.score_args);
  c.predict = tessera::cli::add_predict_command(app, c.predict_args);
  c.ffn = tessera::cli::add_ffn_command(app, c.ffn_args);
}

/// Parses our arguments and checks the Kokkos ones; the exit status when the program ends
/// here (help, version, a bad argument), nothing when a command is to run.
std::optional<int> parse(CLI::App& app, std::vector<char*>& ours, const std::vector<char*>& kokkos_args) {
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
  return std::nullopt;
}

/// Runs the command given; its exit status. Errors of any kind end every rank here.
int run_command(Commands& c) {
  int status = 0;
  try {
    if (*c.train) status = tessera::cli::run_train(c.train_args);
    if (*c.fashion_mnist) status = tessera::cli::run_fashion_mnist(c.fashion_args);
    if (*c.datagen && !*c.fashion_mnist) status = tessera::cli::run_datagen(c.datagen_args);
    if (*c.info) status = tessera::cli::run_info(c.info_args);
    if (*c.search) status = tessera::cli::run_search(c.search_args);
    if (*c.bench) status = tessera::cli::run_bench(c.bench_args);
    if (*c.plan) status = tessera::cli::run_plan(c.plan_args);
    if (*c.calibrate) status = tessera::cli::run_calibrate(c.calibrate_args);
    if (*c.report) status = tessera::cli::run_report(c.report_args);
    if (*c.score) status = tessera::cli::run_score(c.score_args);
    if (*c.predict) status = tessera::cli::run_predict(c.predict_args);
    if (*c.ffn) status = tessera::cli::run_ffn_segment(c.ffn_args);
  } catch (const std::exception& e) {
    // On one rank or many: say what failed where, and end every rank (no rank may be left
    // waiting in a collective for one that is gone).
    status = tessera::parallel::handle_fatal_error(e);
  }
  return status;
}

}  // namespace

int main(int argc, char* argv[]) {
  default_openmp_binding(argv);
  // MPI first: it may consume its own arguments, and every rank must take part even in --help.
  tessera::parallel::MpiSession mpi(argc, argv);
  std::vector<char*> ours{argv[0]}, kokkos_args{argv[0]};
  for (int i = 1; i < argc; ++i)
    (std::string(argv[i]).rfind("--kokkos-", 0) == 0 ? kokkos_args : ours).push_back(argv[i]);

  CLI::App app{"Tessera " TESSERA_VERSION
               ": distributed training of 3D convolutional networks on CPUs and GPUs.\n"
               "Kokkos options are passed through: --kokkos-threads=N, --kokkos-device-id=N, "
               "--kokkos-tools-library=LIB, --kokkos-help.",
               "tessera"};
  app.set_version_flag("--version", TESSERA_VERSION);
  app.require_subcommand(1);
  Commands commands;
  add_commands(app, commands, argc, argv);
  if (const auto status = parse(app, ours, kokkos_args)) return *status;

  int kokkos_argc = static_cast<int>(kokkos_args.size());
  try {
    Kokkos::initialize(kokkos_argc, kokkos_args.data());
  } catch (const std::exception& e) {
    // A GPU build started where no device or driver works throws here, before any command.
    return tessera::parallel::handle_fatal_error(tessera::Error(
        std::string("Kokkos could not start its ") + Kokkos::DefaultExecutionSpace::name() +
        " execution space (this build runs its ops there; is a device with a working driver present?): " + e.what()));
  }
  const int status = run_command(commands);
  Kokkos::finalize();
  return status;
}

#include "cli_app.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "tessera/build_info.hpp"
#include "tessera/core/log.hpp"
#include "tessera/parallel/communicator.hpp"

namespace tessera::cli {

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

// Kokkos 3.4 parses these with atoi-like code that ends in std::terminate on text it cannot read.
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

namespace {

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

}  // namespace

std::unique_ptr<CLI::App> make_app(Commands& c, const std::vector<std::string>& command_line) {
  auto app = std::make_unique<CLI::App>("Tessera " TESSERA_VERSION
                                        ": distributed training of 3D convolutional networks on CPUs and GPUs.\n"
                                        "Kokkos options are passed through: --kokkos-threads=N, --kokkos-device-id=N, "
                                        "--kokkos-tools-library=LIB, --kokkos-help.",
                                        "tessera");
  app->set_version_flag("--version", TESSERA_VERSION);
  app->require_subcommand(1);
  // The commands, in the order --help lists them.
  c.train_args.command_line = command_line;
  c.train = add_train_command(*app, c.train_args);
  c.datagen = add_datagen_command(*app, c.datagen_args);
  c.fashion_mnist = add_fashion_mnist_command(*c.datagen, c.fashion_args);
  add_info_command(*app, c);
  c.search = add_search_command(*app, c.search_args);
  c.plan = add_plan_command(*app, c.plan_args);
  c.bench = add_bench_command(*app, c.bench_args);
  c.calibrate = add_calibrate_command(*app, c.calibrate_args);
  c.report = add_report_command(*app, c.report_args);
  c.score = add_score_command(*app, c.score_args);
  c.predict = add_predict_command(*app, c.predict_args);
  c.ffn = add_ffn_command(*app, c.ffn_args);
  return app;
}

std::optional<int> parse(CLI::App& app, std::vector<char*>& ours, const std::vector<char*>& kokkos_args) {
  for (const std::string& problem : {unknown_subcommand(app, ours), bad_kokkos_flag(kokkos_args)})
    if (!problem.empty()) {
      // Every rank sees the same arguments and exits alike; only rank 0 prints.
      if (log::rank() == 0) std::fprintf(stderr, "%s\n", problem.c_str());
      return 2;
    }
  try {
    app.parse(static_cast<int>(ours.size()), ours.data());
  } catch (const CLI::ParseError& e) {
    // Every rank sees the same arguments and exits alike; only rank 0 prints help or errors.
    // CLI11's own codes (105 for a value a check refused, 109 for an unknown flag, ...) become
    // the documented 2 of every command-line error; help and version stay 0.
    const int code = log::rank() == 0 ? app.exit(e) : e.get_exit_code();
    return code == 0 ? 0 : 2;
  }
  return std::nullopt;
}

int run_command(Commands& c) {
  int status = 0;
  try {
    if (*c.train) status = run_train(c.train_args);
    if (*c.fashion_mnist) status = run_fashion_mnist(c.fashion_args);
    if (*c.datagen && !*c.fashion_mnist) status = run_datagen(c.datagen_args);
    if (*c.info) status = run_info(c.info_args);
    if (*c.search) status = run_search(c.search_args);
    if (*c.bench) status = run_bench(c.bench_args);
    if (*c.plan) status = run_plan(c.plan_args);
    if (*c.calibrate) status = run_calibrate(c.calibrate_args);
    if (*c.report) status = run_report(c.report_args);
    if (*c.score) status = run_score(c.score_args);
    if (*c.predict) status = run_predict(c.predict_args);
    if (*c.ffn) status = run_ffn_segment(c.ffn_args);
  } catch (const std::exception& e) {
    // On one rank or many: say what failed where, and end every rank (no rank may be left
    // waiting in a collective for one that is gone).
    status = parallel::handle_fatal_error(e);
  }
  return status;
}

}  // namespace tessera::cli

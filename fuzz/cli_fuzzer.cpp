// Fuzz target: the `tessera` command line as main parses it. The bytes are the arguments after
// the program's name, separated by newline or NUL bytes (a newline or NUL at the very end ends
// the last argument; two in a row make an empty argument). At most 64 arguments are taken and
// each is cut to 256 bytes; the rest is ignored. As main does, the words are prefixed with
// "tessera", those starting with --kokkos- go to Kokkos' checks (bad_kokkos_flag) and the rest
// to ours: unknown_subcommand, then the whole application of make_app, every command with its
// flags, ranges and checks (files that must exist are looked up; none is opened). No command
// runs (run_command is not called).
// CLI11's errors (CLI::Error: a refused flag or value, and also --help and --version) and
// Tessera's own (tessera::Error and its subclasses) are the expected outcome of bad input;
// anything else escapes and is reported by the fuzzer.
#include <CLI/CLI.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cli_app.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"

namespace {

constexpr size_t kMaxArguments = 64;
constexpr size_t kMaxArgumentBytes = 256;

/// "tessera" and the arguments in `data`, as argv would hold them.
std::vector<std::string> split_words(const uint8_t* data, size_t size) {
  std::vector<std::string> words{"tessera"};
  std::string word;
  for (size_t i = 0; i < size && words.size() <= kMaxArguments; ++i) {
    const char c = static_cast<char>(data[i]);
    if (c == '\n' || c == '\0') {
      words.push_back(word);
      word.clear();
    } else if (word.size() < kMaxArgumentBytes) {
      word.push_back(c);
    }
  }
  if (!word.empty() && words.size() <= kMaxArguments) words.push_back(word);
  return words;
}

void parse_command_line(const std::vector<std::string>& words) {
  using namespace tessera::cli;
  // As main splits argv: the program's name heads both lists.
  std::vector<char*> ours, kokkos_args;
  for (size_t i = 0; i < words.size(); ++i) {
    char* word = const_cast<char*>(words[i].c_str());
    if (i == 0) {
      ours.push_back(word);
      kokkos_args.push_back(word);
    } else {
      (words[i].rfind("--kokkos-", 0) == 0 ? kokkos_args : ours).push_back(word);
    }
  }
  Commands commands;
  const auto app = make_app(commands, words);
  if (!unknown_subcommand(*app, ours).empty()) return;
  if (!bad_kokkos_flag(kokkos_args).empty()) return;
  // CLI11 takes the arguments reversed, without the program's name.
  std::vector<std::string> args;
  for (size_t i = ours.size(); i-- > 1;) args.emplace_back(ours[i]);
  app->parse(args);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Nothing here should log; if a check does, a fuzzer runs millions.
  tessera::log::set_rank(1);
  const std::vector<std::string> words = split_words(data, size);
  try {
    parse_command_line(words);
  } catch (const CLI::Error&) {
    // Refused (or help or version asked for), with CLI11's message: the expected outcome.
  } catch (const tessera::Error&) {
    // Rejected with a message naming the problem: the expected outcome.
  }
  return 0;
}

// Every numeric flag of every command, found by walking the command line itself (so a flag added
// tomorrow is covered without a new test), fed the values users mistype or push past a type:
// each is refused at parse time naming the flag, or (−1 and 0 only) accepted by a flag whose
// range holds it. Nothing runs: the command line is parsed exactly as `tessera` parses it.
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "cli_app.hpp"

namespace {

using tessera::cli::Commands;

const std::string kExistingFile = std::string(TESSERA_SOURCE_DIR) + "/examples/cosmoflow_tiny.json";

/// The command's words ("datagen", "cells") of every command that runs (has no subcommands).
void leaf_commands(CLI::App* app, std::vector<std::string> path, std::vector<std::vector<std::string>>& out) {
  const auto subs = app->get_subcommands([](CLI::App*) { return true; });
  if (subs.empty() && !path.empty()) out.push_back(path);
  for (CLI::App* sub : subs) {
    auto p = path;
    p.push_back(sub->get_name());
    leaf_commands(sub, p, out);
  }
}

CLI::App* find_command(CLI::App& app, const std::vector<std::string>& path) {
  CLI::App* at = &app;
  for (const auto& word : path) at = at->get_subcommand(word);
  return at;
}

/// The option's value type as CLI11 names it ("INT", "FLOAT", "TEXT"), without its checks.
std::string base_type(const CLI::Option* o) {
  const std::string t = o->get_type_name();
  return t.substr(0, t.find_first_of(": "));
}

bool numeric(const CLI::Option* o) {
  const std::string t = base_type(o);
  return o->get_type_size() != 0 && (t == "INT" || t == "UINT" || t == "FLOAT" || t == "NUMBER");
}

/// A valid value for a required option or positional: a file that exists for text, 1 for numbers.
std::string valid_value(const CLI::Option* o) { return numeric(o) ? "1" : kExistingFile; }

/// The words after `tessera <command>` that make the command parse: its positionals and
/// required options with valid values.
std::vector<std::string> required_words(CLI::App* cmd) {
  std::vector<std::string> words;
  for (const CLI::Option* o : cmd->get_options()) {
    if (o->get_positional()) {
      if (o->get_required()) words.push_back(valid_value(o));
    } else if (o->get_required()) {
      words.push_back(o->get_name(false, true).substr(0, o->get_name(false, true).find(',')));
      words.push_back(valid_value(o));
    }
  }
  return words;
}

struct Outcome {
  bool refused = false;
  std::string message;
};

Outcome parse(const std::vector<std::string>& words) {
  Commands commands;
  auto app = tessera::cli::make_app(commands, words);
  std::vector<std::string> args(words.rbegin(), words.rend());  // CLI11 takes them reversed
  args.pop_back();                                              // the program's name
  try {
    app->parse(args);
  } catch (const CLI::ParseError& e) {
    return {true, e.what()};
  }
  return {};
}

struct NumericFlag {
  std::vector<std::string> command;
  std::string flag;
};

std::vector<NumericFlag> numeric_flags() {
  Commands commands;
  auto app = tessera::cli::make_app(commands, {"tessera"});
  std::vector<std::vector<std::string>> paths;
  leaf_commands(app.get(), {}, paths);
  std::vector<NumericFlag> flags;
  for (const auto& path : paths)
    for (const CLI::Option* o : find_command(*app, path)->get_options())
      if (numeric(o) && !o->get_positional() && !o->get_lnames().empty())
        flags.push_back({path, "--" + o->get_lnames().front()});
  return flags;
}

std::string joined(const std::vector<std::string>& words) {
  std::string s;
  for (const auto& w : words) s += (s.empty() ? "" : " ") + w;
  return s;
}

}  // namespace

TEST_CASE("every numeric flag of every command refuses NaN, infinities and numbers past its type, naming the flag",
          "[cli][numbers]") {
  const auto flags = numeric_flags();
  // The walk finds the commands' flags: if it found few, it would be testing nothing.
  REQUIRE(flags.size() >= 40);
  // Each value, and whether every flag must refuse it (the others: refused by name, or inside
  // the flag's range).
  const std::vector<std::pair<std::string, bool>> values{{"nan", true},
                                                         {"inf", true},
                                                         {"-inf", true},
                                                         {"9223372036854775807", true},
                                                         {"123456789012345678901234567890", true},
                                                         {"1e999", true},
                                                         {"12abc", true},
                                                         {"-1", false},
                                                         {"0", false}};
  for (const auto& f : flags) {
    Commands commands;
    auto app = tessera::cli::make_app(commands, {"tessera"});
    std::vector<std::string> base{"tessera"};
    base.insert(base.end(), f.command.begin(), f.command.end());
    const auto required = required_words(find_command(*app, f.command));
    base.insert(base.end(), required.begin(), required.end());
    INFO(joined(base) + " " + f.flag);
    REQUIRE_FALSE(parse(base).refused);  // the command parses without the flag
    for (const auto& [value, must_refuse] : values) {
      auto words = base;
      words.push_back(f.flag);
      words.push_back(value);
      const Outcome o = parse(words);
      INFO("value " + value + ": " + o.message);
      if (must_refuse) CHECK(o.refused);
      if (o.refused) CHECK_THAT(o.message, Catch::StartsWith(f.flag + ": expected "));
    }
  }
}

TEST_CASE("a negative index or count is refused by name, not wrapped", "[cli][numbers]") {
  for (const auto& words :
       std::vector<std::vector<std::string>>{{"tessera", "score", kExistingFile, "--channel", "-3"},
                                             {"tessera", "score", kExistingFile, "--sample", "-1"},
                                             {"tessera", "predict", kExistingFile, "--checkpoint", kExistingFile,
                                              "--input", kExistingFile, "--output", "x.h5", "--sample", "-2"},
                                             {"tessera", "score", kExistingFile, "--seed", "-1"}}) {
    const Outcome o = parse(words);
    INFO(joined(words));
    CHECK(o.refused);
    CHECK_THAT(o.message, Catch::Contains(": expected an integer from 0 to ") && Catch::EndsWith(words.back()));
  }
}

TEST_CASE("a refused value ends the command with status 2, help with 0", "[cli][numbers]") {
  const auto status = [](std::vector<std::string> words) {
    Commands commands;
    auto app = tessera::cli::make_app(commands, words);
    std::vector<char*> ours, kokkos{words[0].data()};
    for (auto& w : words) ours.push_back(w.data());
    return tessera::cli::parse(*app, ours, kokkos);
  };
  CHECK(status({"tessera", "train", kExistingFile, "--accumulate", "4611686018427387904"}) == 2);
  CHECK(status({"tessera", "score", kExistingFile, "--threshold", "nan"}) == 2);
  CHECK(status({"tessera", "train", kExistingFile, "--no-such-flag"}) == 2);
  CHECK(status({"tessera", "train", "--help"}) == 0);
  CHECK_FALSE(status({"tessera", "train", kExistingFile, "--accumulate", "4"}).has_value());
}

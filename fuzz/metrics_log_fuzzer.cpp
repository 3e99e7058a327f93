// Fuzz target: a metrics log as `tessera report` reads it. The bytes are the log file (JSON
// lines, as `tessera train --metrics` writes them); it is read with report::read_runs (each
// line parsed, its event filed, the fields the report reads checked for their types; no
// population logs lie beside it in the scratch folder) and rendered with run_report_html,
// every section: the runs table, the loss, metric and speed plots, the profile, layout,
// placement and population tables, and the setup.
// Tessera's own errors (tessera::Error and its subclasses) are the expected outcome of bad
// input; anything else escapes and is reported by the fuzzer.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_environment.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/report/run_report.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto& environment = tessera::fuzz::FuzzEnvironment::get();
  // A last line cut short is skipped with a warning from rank 0; a fuzzer runs millions.
  tessera::log::set_rank(1);
  const std::string file = environment.write("run.metrics.jsonl", data, size);
  try {
    const auto runs = tessera::report::read_runs({file});
    tessera::report::run_report_html(runs, "fuzz");
  } catch (const tessera::Error&) {
    // Rejected with a message naming the file, the line and the problem: the expected outcome.
  }
  return 0;
}

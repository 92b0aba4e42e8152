// tessera-report: the browser profile report (docs/report.md) from a compile report and,
// optionally, a run's trace and result:
//   tessera-report compile-report.json [--trace trace.json] [--result result.json] -o report.html
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <exception>
#include <string>
#include <vector>

#include "file_io.hpp"
#include "report_html.hpp"

namespace {

// Reports of an mk2-size compile are a few MiB; traces are bounded by their event limit.
constexpr uint64_t kMaxInputBytes = 1ull << 30;

std::string readText(const std::string& path, const char* what) {
  const std::vector<uint8_t> b = tessera::readRegularFile(path, kMaxInputBytes, what);
  return std::string(b.begin(), b.end());
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tessera-report: one self-contained HTML profile report (docs/report.md)"};
  std::string compile, trace, result, out, title;
  app.add_option("compile-report", compile, "the compiler's report (compile-report.json)")
      ->required();
  app.add_option("--trace", trace, "the run's Chrome trace (trace.json of tessera-bench train)");
  app.add_option("--result", result, "the run's result.json");
  app.add_option("-o,--output", out, "the HTML file to write")->required();
  app.add_option("--title", title, "the page's title (default: the compile report's file name)");
  CLI11_PARSE(app, argc, argv);
  try {
    tessera::bench::ReportInputs in;
    in.compileReport = readText(compile, "compile report (JSON)");
    if (!trace.empty()) in.trace = readText(trace, "trace (Chrome trace JSON)");
    if (!result.empty()) in.result = readText(result, "run result (JSON)");
    in.title = title.empty() ? compile : title;
    tessera::bench::writeReportHtml(out, in);
    fmt::print("wrote {}\n", out);
  } catch (const std::exception& e) {
    fmt::print(stderr, "tessera-report: {}\n", e.what());
    return 1;
  }
  return 0;
}

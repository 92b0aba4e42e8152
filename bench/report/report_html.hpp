// The profile report a person reads in the browser (docs/report.md): one self-contained HTML file
// from a compile report and, when there is one, a run's trace and result. tessera-report,
// tessera-bench (train, compile-mlp) and tessera-onnx all write it through this one function.
#pragma once

#include <string>

namespace tessera::bench {

/// What goes into a report: JSON texts as their writers produce them; an empty text is absent.
struct ReportInputs {
  std::string compileReport;  ///< CompileReport::toJson() (required)
  std::string trace;          ///< ChromeTrace::json() of the run (optional)
  std::string result;         ///< the run's result.json (optional)
  std::string title;          ///< shown in the page's heading
};

/// The HTML page. Throws tessera::Error naming the input that is not valid JSON or lacks what
/// the page needs ("compile report: no \"tiles\"").
std::string reportHtml(const ReportInputs& in);

/// Write reportHtml(in) to path; throws tessera::Error naming the file on failure.
void writeReportHtml(const std::string& path, const ReportInputs& in);

}  // namespace tessera::bench

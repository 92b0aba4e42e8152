#include "report_html.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "file_io.hpp"
#include "report_page.hpp"
#include "tessera/error.hpp"

namespace tessera::bench {

namespace {

nlohmann::json parse(const std::string& text, const char* what) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("{}: not valid JSON ({})", what, e.what()));
  }
}

void require(const nlohmann::json& j, const char* key, nlohmann::json::value_t type,
             const char* what) {
  if (!j.contains(key) || j[key].type() != type)
    throw Error(fmt::format("{}: no \"{}\" of the expected type", what, key));
}

}  // namespace

std::string reportHtml(const ReportInputs& in) {
  nlohmann::json data;
  nlohmann::json c = parse(in.compileReport, "compile report");
  require(c, "target", nlohmann::json::value_t::object, "compile report");
  require(c, "tiles", nlohmann::json::value_t::array, "compile report");
  require(c, "exchanges", nlohmann::json::value_t::array, "compile report");
  if (c["tiles"].empty()) throw Error("compile report: \"tiles\" is empty");
  data["compile"] = std::move(c);
  data["trace"] = nullptr;
  data["result"] = nullptr;
  if (!in.trace.empty()) {
    nlohmann::json t = parse(in.trace, "trace");
    require(t, "traceEvents", nlohmann::json::value_t::array, "trace");
    data["trace"] = std::move(t);
  }
  if (!in.result.empty()) {
    nlohmann::json r = parse(in.result, "run result");
    if (!r.is_object()) throw Error("run result: not a JSON object");
    data["result"] = std::move(r);
  }
  data["title"] = in.title;
  // Inside <script>, "</" could end the element; JSON allows "<\/" for it.
  std::string json = data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string safe;
  safe.reserve(json.size() + 64);
  for (size_t i = 0; i < json.size(); ++i) {
    if (json[i] == '<' && i + 1 < json.size() && json[i + 1] == '/') {
      safe += "<\\/";
      ++i;
    } else {
      safe += json[i];
    }
  }
  std::string page = reportPageTemplate();
  const std::string marker = "/*TESSERA_REPORT_DATA*/";
  const size_t at = page.find(marker);
  if (at == std::string::npos) throw Error("report page template: no data placeholder");
  page.replace(at, marker.size(), safe);
  return page;
}

void writeReportHtml(const std::string& path, const ReportInputs& in) {
  writeFileChecked(path, reportHtml(in));
}

}  // namespace tessera::bench

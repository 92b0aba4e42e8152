// The report page's template (bench/report/report.html), compiled in by CMake.
#pragma once

namespace tessera::bench {

/// The HTML template of the report page, with the data placeholder /*TESSERA_REPORT_DATA*/.
const char* reportPageTemplate();

}  // namespace tessera::bench

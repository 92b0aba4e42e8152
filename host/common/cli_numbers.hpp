// One rule for numbers on every command line (docs/limits.md, "Numbers"): CLI11 reads "nan" and
// "inf" into a float option, and its Range and PositiveNumber checks let NaN through (every
// comparison with NaN is false). requireFiniteNumbers makes every floating-point option of an app
// and of its subcommands refuse a value that is not finite, with the option's name, the way a
// malformed number is refused. Integer options are already parsed strictly by CLI11 (signs,
// overflow and trailing characters refused).
#pragma once

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdlib>
#include <string>

namespace tessera::cli {

/// Refuse NaN and infinities in every floating-point option of app and its subcommands, after
/// parsing (CLI11 reports the error as it reports any other invalid value).
inline void requireFiniteNumbers(CLI::App& app) {
  app.parse_complete_callback([&app] {
    std::vector<CLI::App*> apps{&app};
    for (size_t k = 0; k < apps.size(); ++k) {
      for (CLI::App* sub : apps[k]->get_subcommands({})) apps.push_back(sub);
    }
    for (CLI::App* a : apps) {
      for (const CLI::Option* o : a->get_options()) {
        if (o->get_type_name().rfind("FLOAT", 0) != 0) continue;
        for (const std::string& text : o->results()) {
          const double v = std::strtod(text.c_str(), nullptr);
          if (!std::isfinite(v)) {
            throw CLI::ValidationError(o->get_name(), text + " is not a finite number");
          }
        }
      }
    }
  });
}

}  // namespace tessera::cli

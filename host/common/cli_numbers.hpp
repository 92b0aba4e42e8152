// One rule for numbers on every command line (docs/limits.md, "Numbers"): CLI11 reads "nan" and
// "inf" into a float option, and its Range and PositiveNumber checks let NaN through (every
// comparison with NaN is false). requireFiniteNumbers makes every floating-point option of an app
// and of its subcommands refuse a value that is not finite, with the option's name, the way a
// malformed number is refused. It also makes every unsigned integer option refuse a minus sign:
// CLI11 reads "-1" into an unsigned option as its largest value (`--max-steps -1` meant "no
// limit"). Overflow and trailing characters CLI11 refuses itself.
#pragma once

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdlib>
#include <string>

namespace tessera::cli {

/// Refuse NaN and infinities in every floating-point option, and negative values in every unsigned
/// one, of app and its subcommands, after parsing (CLI11 reports the error as it reports any other
/// invalid value).
inline void requireFiniteNumbers(CLI::App& app) {
  app.parse_complete_callback([&app] {
    std::vector<CLI::App*> apps{&app};
    for (size_t k = 0; k < apps.size(); ++k) {
      for (CLI::App* sub : apps[k]->get_subcommands({})) apps.push_back(sub);
    }
    for (CLI::App* a : apps) {
      for (const CLI::Option* o : a->get_options()) {
        const std::string type = o->get_type_name();
        if (type.rfind("UINT", 0) == 0) {
          for (const std::string& text : o->results()) {
            if (text.find('-') != std::string::npos) {
              throw CLI::ValidationError(o->get_name(), text + " is negative; the option counts");
            }
          }
          continue;
        }
        if (type.rfind("FLOAT", 0) != 0) continue;
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

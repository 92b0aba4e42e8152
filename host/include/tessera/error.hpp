// The project's one exception type; thrown at the edges and caught in main().
#pragma once

#include <stdexcept>
#include <string>

namespace tessera {

/// Any error a user can act on: bad input, bad device string, device failure.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace tessera

// openDevice(): device string → backend (docs/architecture.md, "Backends").
#include <fmt/format.h>

#include "model_device.hpp"
#include "rtl_device.hpp"
#include "tessera/device.hpp"

namespace tessera {

std::unique_ptr<Device> openDevice(const std::string& spec, const DeviceOptions& options) {
  if (spec == "model") return makeModelDevice(options);
  if (spec == "rtl") return makeRtlDevice(options);
  throw Error(fmt::format("unknown device \"{}\": valid devices are \"model\" and \"rtl\"", spec));
}

}  // namespace tessera

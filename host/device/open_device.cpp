// openDevice(): device string → backend (docs/architecture.md, "Backends").
#include <fmt/format.h>

#include "model_device.hpp"
#include "tessera/device.hpp"
#if TESSERA_HAVE_RTL
#include "rtl_device.hpp"
#endif

namespace tessera {

std::unique_ptr<Device> openDevice(const std::string& spec, const DeviceOptions& options) {
  if (spec == "model") return makeModelDevice(options);
  if (spec == "rtl") {
#if TESSERA_HAVE_RTL
    return makeRtlDevice(options);
#else
    throw Error("device \"rtl\": this build has no rtl backend (host/rtl defines no tessera_rtl)");
#endif
  }
  throw Error(fmt::format("unknown device \"{}\": valid devices are \"model\" and \"rtl\"", spec));
}

}  // namespace tessera

// openDevice(): device string → backend (docs/architecture.md, "Backends").
#include <fmt/format.h>

#include "link_device.hpp"
#include "model_device.hpp"
#include "rtl_device.hpp"
#include "sharded_model_device.hpp"
#include "tessera/device.hpp"

namespace tessera {

std::unique_ptr<Device> openDevice(const std::string& spec, const DeviceOptions& options) {
  // Checked before a backend allocates anything: every model tile holds its whole SRAM.
  const unsigned maxTiles = options.maxTiles ? options.maxTiles : kDefaultMaxTiles;
  if (options.tiles > maxTiles) {
    throw Error(fmt::format(
        "device \"{}\": {} tiles requested, more than the limit of {} (raise it with --max-tiles "
        "or DeviceOptions::maxTiles; docs/limits.md)",
        spec, options.tiles, maxTiles));
  }
  if (options.shard && spec != "model") {
    throw Error(
        fmt::format("device \"{}\": --shard / DeviceOptions::shard needs the model device", spec));
  }
  if (spec == "model")
    return options.shard ? makeShardedModelDevice(options) : makeModelDevice(options);
  if (spec == "rtl") return makeRtlDevice(options);
  // Remote devices take their chip parameters from the server, not from options.
  if (spec.starts_with("tcp://")) return link::makeTcpDevice(spec);
  if (spec.starts_with("serial:")) return link::makeSerialDevice(spec);
  throw Error(fmt::format(
      "unknown device \"{}\": valid devices are \"model\", \"rtl\", \"tcp://HOST:PORT\" and "
      "\"serial:PATH\"",
      spec));
}

}  // namespace tessera

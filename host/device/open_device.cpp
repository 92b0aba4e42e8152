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
  // The declared chip (options, or the preset's and the build's defaults), before any backend
  // reserves it: a checkpoint or *.tess target may say 1,472 tiles of 2 GiB.
  const uint64_t maxBytes = options.maxChipBytes ? options.maxChipBytes : kDefaultMaxChipBytes;
  const std::string preset = options.preset.empty() || spec == "rtl" ? "default" : options.preset;
  if ((spec == "model" || spec == "rtl") &&
      (preset == "default" || preset == "mk2" || preset == "ice40")) {  // else the backend says
    const ChipShape shape = ChipShape::preset(preset);
    const uint64_t tiles = options.tiles ? options.tiles : shape.tiles;
    const uint64_t tileBytes = options.tileMemBytes ? options.tileMemBytes : shape.tileMemBytes;
    if (tiles * tileBytes > maxBytes) {
      throw Error(fmt::format(
          "device \"{}\": {} tiles of {} bytes ({} MiB) requested, more than the limit of {} MiB "
          "(raise it with --max-chip-mib or DeviceOptions::maxChipBytes; docs/limits.md)",
          spec, tiles, tileBytes, (tiles * tileBytes) >> 20, maxBytes >> 20));
    }
  }
  if (options.shard && spec != "model") {
    throw Error(
        fmt::format("device \"{}\": --shard / DeviceOptions::shard needs the model device", spec));
  }
  if (spec == "model")
    return options.shard ? makeShardedModelDevice(options) : makeModelDevice(options);
  if (spec == "rtl") return makeRtlDevice(options);
  // Remote devices take their chip parameters from the server, not from options; a matrix unit
  // asked for must be the one the remote chip has.
  std::unique_ptr<Device> remote;
  if (spec.starts_with("tcp://")) remote = link::makeTcpDevice(spec);
  if (spec.starts_with("serial:")) remote = link::makeSerialDevice(spec);
  if (remote) {
    const bool has = remote->info().hasMatrixUnit;
    if (options.matrixUnit && *options.matrixUnit != has) {
      throw Error(fmt::format("device \"{}\": the remote chip has {} matrix unit; {} asked for",
                              spec, has ? "a" : "no",
                              *options.matrixUnit ? "one was" : "none was"));
    }
    return remote;
  }
  throw Error(fmt::format(
      "unknown device \"{}\": valid devices are \"model\", \"rtl\", \"tcp://HOST:PORT\" and "
      "\"serial:PATH\"",
      spec));
}

}  // namespace tessera

#include "executable_packer.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <set>

#include "tessera/elf_image.hpp"

namespace tessera {
namespace {

using nlohmann::json;

/// Refuse keys the description format does not have (a typo must not be silently ignored).
void onlyKeys(const json& j, std::initializer_list<const char*> keys, const std::string& where) {
  if (!j.is_object()) throw Error(fmt::format("{}: expected an object", where));
  const std::set<std::string> allowed(keys.begin(), keys.end());
  for (const auto& [k, v] : j.items()) {
    if (!allowed.count(k)) throw Error(fmt::format("{}: unknown key \"{}\"", where, k));
  }
}

const json& field(const json& j, const char* key, const std::string& where) {
  if (!j.contains(key)) throw Error(fmt::format("{}: missing \"{}\"", where, key));
  return j.at(key);
}

uint32_t number(const json& j, const std::string& where) {
  if (!j.is_number_unsigned())
    throw Error(fmt::format("{}: expected a non-negative integer", where));
  const uint64_t v = j.get<uint64_t>();
  if (v > UINT32_MAX) throw Error(fmt::format("{}: {} does not fit in 32 bits", where, v));
  return static_cast<uint32_t>(v);
}

/// Regions named by {"tile": n | "all", "symbol": s | "address": a, "offset"?: o, "bytes": b}.
std::vector<ExeRegion> regions(const json& j, const std::vector<ElfImage>& images, uint32_t tiles,
                               const std::string& where) {
  onlyKeys(j, {"tile", "symbol", "address", "offset", "bytes"}, where);
  std::vector<uint32_t> tileList;
  const json& tile = field(j, "tile", where);
  if (tile.is_string() && tile.get<std::string>() == "all") {
    for (uint32_t t = 0; t < tiles; ++t) tileList.push_back(t);
  } else {
    tileList.push_back(number(tile, where + ".tile"));
  }
  const uint32_t bytes = number(field(j, "bytes", where), where + ".bytes");
  const uint32_t offset = j.contains("offset") ? number(j.at("offset"), where + ".offset") : 0;
  if (j.contains("symbol") == j.contains("address")) {
    throw Error(fmt::format("{}: give exactly one of \"symbol\" and \"address\"", where));
  }
  std::vector<ExeRegion> out;
  for (uint32_t t : tileList) {
    uint32_t addr = 0;
    if (j.contains("symbol")) {
      if (t >= tiles)
        throw Error(fmt::format("{}: tile {} does not exist ({} tiles)", where, t, tiles));
      const std::string sym = j.at("symbol").get<std::string>();
      const ElfImage& image = images.size() == 1 ? images[0] : images[t];
      const auto a = image.symbol(sym);
      if (!a)
        throw Error(fmt::format("{}: symbol \"{}\" is not in the ELF of tile {}", where, sym, t));
      addr = *a;
    } else {
      addr = number(j.at("address"), where + ".address");
    }
    if (uint64_t{addr} + offset > UINT32_MAX) {
      throw Error(fmt::format("{}: address 0x{:x} + offset {} is beyond the 32-bit address space",
                              where, addr, offset));
    }
    out.push_back({t, addr + offset, bytes});
  }
  return out;
}

StreamDirection direction(const json& j, const std::string& where) {
  const std::string d = j.is_string() ? j.get<std::string>() : "";
  if (d == "host-to-device") return StreamDirection::HostToDevice;
  if (d == "device-to-host") return StreamDirection::DeviceToHost;
  throw Error(fmt::format("{}: direction must be \"host-to-device\" or \"device-to-host\"", where));
}

void describe(Executable& exe, const json& doc, const std::vector<ElfImage>& images) {
  onlyKeys(doc, {"streams", "hostSyncs", "tensors"}, "description");
  const uint32_t tiles = exe.target.tiles;
  if (doc.contains("streams")) {
    size_t i = 0;
    for (const json& s : doc.at("streams")) {
      const std::string where = fmt::format("streams[{}]", i++);
      onlyKeys(s, {"name", "direction"}, where);
      exe.streams.push_back({field(s, "name", where).get<std::string>(),
                             direction(field(s, "direction", where), where + ".direction")});
    }
  }
  if (doc.contains("hostSyncs")) {
    size_t i = 0;
    for (const json& h : doc.at("hostSyncs")) {
      const std::string where = fmt::format("hostSyncs[{}]", i++);
      onlyKeys(h, {"id", "copies"}, where);
      ExeHostSync sync;
      sync.id = number(field(h, "id", where), where + ".id");
      size_t c = 0;
      for (const json& copy : field(h, "copies", where)) {
        const std::string cw = fmt::format("{}.copies[{}]", where, c++);
        json regionPart = copy;
        const std::string stream = field(copy, "stream", cw).get<std::string>();
        regionPart.erase("stream");
        const int index = exe.findStream(stream);
        if (index < 0) throw Error(fmt::format("{}: unknown stream \"{}\"", cw, stream));
        for (const ExeRegion& r : regions(regionPart, images, tiles, cw)) {
          sync.copies.push_back({static_cast<uint32_t>(index), r});
        }
      }
      exe.hostSyncs.push_back(std::move(sync));
    }
  }
  if (doc.contains("tensors")) {
    size_t i = 0;
    for (const json& x : doc.at("tensors")) {
      const std::string where = fmt::format("tensors[{}]", i++);
      onlyKeys(x, {"name", "regions"}, where);
      ExeTensor tensor;
      tensor.name = field(x, "name", where).get<std::string>();
      size_t k = 0;
      for (const json& r : field(x, "regions", where)) {
        for (const ExeRegion& reg :
             regions(r, images, tiles, fmt::format("{}.regions[{}]", where, k++))) {
          tensor.regions.push_back(reg);
        }
      }
      exe.tensors.push_back(std::move(tensor));
    }
  }
}

}  // namespace

Executable packExecutable(const ChipShape& target, const std::vector<std::string>& elfPaths,
                          const std::string& descriptionJson, const std::string& descriptionName) {
  Executable exe;
  exe.target = target;
  if (elfPaths.size() != 1 && elfPaths.size() != target.tiles) {
    throw Error(fmt::format("give one ELF for every tile or one per tile ({} tiles), not {}",
                            target.tiles, elfPaths.size()));
  }
  std::vector<ElfImage> images;
  for (const std::string& path : elfPaths)
    images.push_back(ElfImage::fromFile(path, target.tileMemBytes));
  // One ELF for all tiles: its segments are stored once and shared by every tile.
  for (size_t e = 0; e < images.size(); ++e) {
    const size_t first = exe.blobs.size();
    for (const ElfSegment& seg : images[e].segments()) exe.blobs.push_back(seg.bytes);
    const uint32_t tileBegin = images.size() == 1 ? 0 : static_cast<uint32_t>(e);
    const uint32_t tileEnd = images.size() == 1 ? target.tiles : tileBegin + 1;
    for (uint32_t t = tileBegin; t < tileEnd; ++t) {
      for (size_t s = 0; s < images[e].segments().size(); ++s) {
        exe.segments.push_back({t, images[e].segments()[s].addr, static_cast<uint32_t>(first + s)});
      }
    }
  }
  // A named description is parsed even when empty: an empty file is an error, not "no streams".
  if (!descriptionJson.empty() || !descriptionName.empty()) {
    try {
      describe(exe, json::parse(descriptionJson), images);
    } catch (const json::exception& e) {
      throw Error(fmt::format("{}: {}", descriptionName, e.what()));
    } catch (const Error& e) {
      throw Error(fmt::format("{}: {}", descriptionName, e.what()));
    }
  }
  exe.validate();
  return exe;
}

}  // namespace tessera

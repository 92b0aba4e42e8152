#include "tessera/executable.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "crc32.hpp"
#include "file_io.hpp"
#include "little_endian.hpp"

namespace tessera {
namespace {

// Field offsets of the fixed header (docs/executable-format.md, "Layout").
constexpr size_t kOffVersion = 8;
constexpr size_t kOffFlags = 12;
constexpr size_t kOffLength = 16;
constexpr size_t kOffCrc = 20;
constexpr size_t kHeaderBytes = 56;
constexpr uint32_t kMaxNameBytes = 255;

/// Appends little-endian words and 4-byte-padded byte strings.
class Writer {
 public:
  void u32(uint32_t v) { appendLe32(out, v); }
  void bytes(std::span<const uint8_t> b) {
    u32(static_cast<uint32_t>(b.size()));
    out.insert(out.end(), b.begin(), b.end());
    while (out.size() % 4) out.push_back(0);
  }
  void str(const std::string& s) { bytes({reinterpret_cast<const uint8_t*>(s.data()), s.size()}); }
  std::vector<uint8_t> out;
};

/// Reads what Writer wrote, refusing to run past the end; `what` names the field for messages.
class Reader {
 public:
  explicit Reader(std::span<const uint8_t> in) : in_(in) {}
  uint32_t u32(const char* what) {
    need(4, what);
    const uint32_t v = loadLe32(in_.data() + pos_);
    pos_ += 4;
    return v;
  }
  std::span<const uint8_t> bytes(const char* what) {
    const uint32_t n = u32(what);
    const size_t padded = (size_t{n} + 3) / 4 * 4;
    need(padded, what);
    const auto b = in_.subspan(pos_, n);
    for (size_t i = n; i < padded; ++i) {
      if (in_[pos_ + i] != 0)
        throw Error(fmt::format("nonzero padding after {} at offset {}", what, pos_ + i));
    }
    pos_ += padded;
    return b;
  }
  std::string str(const char* what) {
    const size_t at = pos_;
    const auto b = bytes(what);
    if (b.empty() || b.size() > kMaxNameBytes) {
      throw Error(fmt::format("{} at offset {} has length {} (must be 1..{})", what, at, b.size(),
                              kMaxNameBytes));
    }
    return {b.begin(), b.end()};
  }
  /// A count of entries of at least minBytes each that must still fit in the input.
  uint32_t count(const char* what, size_t minBytes) {
    const size_t at = pos_;
    const uint32_t n = u32(what);
    if (size_t{n} * minBytes > in_.size() - pos_) {
      throw Error(fmt::format("{} {} at offset {} does not fit in the file (truncated or corrupt)",
                              what, n, at));
    }
    return n;
  }
  size_t pos() const { return pos_; }
  size_t size() const { return in_.size(); }

 private:
  void need(size_t n, const char* what) {
    if (in_.size() - pos_ < n) {
      throw Error(fmt::format("truncated: {} at offset {} needs {} bytes, {} left", what, pos_, n,
                              in_.size() - pos_));
    }
  }
  std::span<const uint8_t> in_;
  size_t pos_ = 0;
};

/// CRC-32 of the image with the checksum field taken as zero.
uint32_t imageCrc(std::span<const uint8_t> b) {
  static constexpr uint8_t kZero[4] = {};
  uint32_t crc = crc32(b.first(kOffCrc));
  crc = crc32(kZero, crc);
  return crc32(b.subspan(kOffCrc + 4), crc);
}

/// Names are printable ASCII: they reach command lines (--input NAME=FILE) and messages.
void checkName(const std::string& name, const char* what) {
  if (name.empty() || name.size() > kMaxNameBytes)
    throw Error(fmt::format("a {} name is empty or longer than {} bytes", what, kMaxNameBytes));
  for (size_t i = 0; i < name.size(); ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    if (c < 0x20 || c > 0x7e)
      throw Error(fmt::format("{} name \"{}\" has byte 0x{:02x} at {} (names are printable ASCII)",
                              what, name.substr(0, i), c, i));
  }
}

void checkRegion(const ExeRegion& r, const ChipShape& t, const std::string& what) {
  if (r.tile >= t.tiles) {
    throw Error(
        fmt::format("{}: tile {} does not exist (target has {} tiles)", what, r.tile, t.tiles));
  }
  if (uint64_t{r.addr} + r.bytes > t.tileMemBytes) {
    throw Error(
        fmt::format("{}: bytes 0x{:x}..0x{:x} of tile {} are outside its {} bytes of memory", what,
                    r.addr, uint64_t{r.addr} + r.bytes, r.tile, t.tileMemBytes));
  }
}

}  // namespace

const char* streamDirectionName(StreamDirection d) {
  return d == StreamDirection::HostToDevice ? "host-to-device" : "device-to-host";
}

bool Executable::hasMagic(std::span<const uint8_t> bytes) {
  return bytes.size() >= sizeof kMagic && std::memcmp(bytes.data(), kMagic, sizeof kMagic) == 0;
}

int Executable::findStream(const std::string& name) const {
  for (size_t i = 0; i < streams.size(); ++i) {
    if (streams[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

const ExeTensor* Executable::findTensor(const std::string& name) const {
  for (const ExeTensor& t : tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

const ExeHostSync* Executable::findHostSync(uint32_t id) const {
  for (const ExeHostSync& s : hostSyncs) {
    if (s.id == id) return &s;
  }
  return nullptr;
}

void Executable::validate() const {
  const ChipShape& t = target;
  if (t.tiles == 0 || t.tileMemBytes == 0 || t.tileMemBytes % 4 != 0 || t.contexts == 0) {
    throw Error(
        fmt::format("bad target: {} tiles of {} bytes with {} contexts (need tiles >= 1, "
                    "memory a nonzero multiple of 4, contexts >= 1)",
                    t.tiles, t.tileMemBytes, t.contexts));
  }
  if (t.tiles > kMaxTiles || t.contexts > kMaxContexts) {
    throw Error(
        fmt::format("bad target: {} tiles with {} contexts (the format allows at most {} "
                    "tiles and {} contexts)",
                    t.tiles, t.contexts, kMaxTiles, kMaxContexts));
  }
  // Segments: in memory, and no two on one tile overlap (the load order would matter).
  std::map<uint32_t, std::vector<std::pair<uint64_t, size_t>>> perTile;
  for (size_t i = 0; i < segments.size(); ++i) {
    const ExeSegment& s = segments[i];
    if (s.blob >= blobs.size()) {
      throw Error(fmt::format("segment {} names blob {} (there are {})", i, s.blob, blobs.size()));
    }
    const auto size = static_cast<uint32_t>(blobs[s.blob].size());
    checkRegion({s.tile, s.addr, size}, t, fmt::format("segment {}", i));
    perTile[s.tile].push_back({s.addr, i});
  }
  for (auto& [tile, list] : perTile) {
    std::sort(list.begin(), list.end());
    for (size_t k = 1; k < list.size(); ++k) {
      const ExeSegment& a = segments[list[k - 1].second];
      const ExeSegment& b = segments[list[k].second];
      if (uint64_t{a.addr} + blobs[a.blob].size() > b.addr) {
        throw Error(fmt::format("segments {} and {} overlap on tile {} (0x{:x}+{} and 0x{:x})",
                                list[k - 1].second, list[k].second, tile, a.addr,
                                blobs[a.blob].size(), b.addr));
      }
    }
  }
  std::set<std::string> names;
  for (const ExeStream& s : streams) {
    checkName(s.name, "stream");
    if (s.direction != StreamDirection::HostToDevice &&
        s.direction != StreamDirection::DeviceToHost) {
      throw Error(fmt::format("stream \"{}\" has unknown direction {}", s.name,
                              static_cast<uint32_t>(s.direction)));
    }
    if (!names.insert(s.name).second)
      throw Error(fmt::format("stream \"{}\" is defined twice", s.name));
  }
  std::set<uint32_t> ids;
  for (const ExeHostSync& h : hostSyncs) {
    if (h.id > 0xffff) throw Error(fmt::format("host sync id {} is not a 16-bit sync id", h.id));
    if (!ids.insert(h.id).second) throw Error(fmt::format("host sync {} is listed twice", h.id));
    for (size_t c = 0; c < h.copies.size(); ++c) {
      const ExeStreamCopy& copy = h.copies[c];
      if (copy.stream >= streams.size()) {
        throw Error(fmt::format("host sync {} copy {} names stream {} (there are {})", h.id, c,
                                copy.stream, streams.size()));
      }
      checkRegion(
          copy.region, t,
          fmt::format("host sync {} copy {} (stream \"{}\")", h.id, c, streams[copy.stream].name));
    }
  }
  names.clear();
  for (const ExeTensor& x : tensors) {
    checkName(x.name, "tensor");
    if (!names.insert(x.name).second)
      throw Error(fmt::format("tensor \"{}\" is defined twice", x.name));
    if (x.regions.empty()) throw Error(fmt::format("tensor \"{}\" has no regions", x.name));
    for (size_t r = 0; r < x.regions.size(); ++r) {
      checkRegion(x.regions[r], t, fmt::format("tensor \"{}\" region {}", x.name, r));
    }
  }
}

void Executable::validateFor(const ChipInfo& info) const {
  validate();
  // The file records these three (docs/executable-format.md); nothing else must match.
  if (info.tiles != target.tiles || info.tileMemBytes != target.tileMemBytes ||
      info.contexts != target.contexts) {
    throw Error(fmt::format(
        "the executable is built for {} tiles of {} bytes with {} contexts, but the {} device has "
        "{} tiles of {} bytes with {} contexts",
        target.tiles, target.tileMemBytes, target.contexts, info.backend, info.tiles,
        info.tileMemBytes, info.contexts));
  }
}

void Executable::load(Device& dev) const {
  validateFor(dev.info());
  for (const ExeSegment& s : segments) dev.writeMemory(s.tile, s.addr, blobs[s.blob]);
  restart(dev);
}

void Executable::restart(Device& dev) const {
  std::vector<bool> hasCode(target.tiles, false);
  for (const ExeSegment& s : segments) hasCode[s.tile] = true;
  dev.reset();
  // A tile with nothing loaded has no program: disabled, it counts as halted and takes no part in
  // syncs (docs/chip.md, T_ENABLE).
  for (uint32_t t = 0; t < target.tiles; ++t) {
    if (!hasCode[t]) dev.setTileEnabled(t, false);
  }
}

std::vector<uint8_t> Executable::serialize() const {
  validate();
  Writer w;
  w.out.assign(kMagic, kMagic + sizeof kMagic);
  w.u32(kVersion);
  w.u32(0);  // flags
  w.u32(0);  // length, patched below
  w.u32(0);  // crc, patched below
  w.u32(target.tiles);
  w.u32(target.tileMemBytes);
  w.u32(target.contexts);
  w.u32(static_cast<uint32_t>(blobs.size()));
  w.u32(static_cast<uint32_t>(segments.size()));
  w.u32(static_cast<uint32_t>(streams.size()));
  w.u32(static_cast<uint32_t>(hostSyncs.size()));
  w.u32(static_cast<uint32_t>(tensors.size()));
  for (const auto& b : blobs) w.bytes(b);
  for (const ExeSegment& s : segments) {
    w.u32(s.tile);
    w.u32(s.addr);
    w.u32(s.blob);
  }
  for (const ExeStream& s : streams) {
    w.u32(static_cast<uint32_t>(s.direction));
    w.str(s.name);
  }
  for (const ExeHostSync& h : hostSyncs) {
    w.u32(h.id);
    w.u32(static_cast<uint32_t>(h.copies.size()));
    for (const ExeStreamCopy& c : h.copies) {
      w.u32(c.stream);
      w.u32(c.region.tile);
      w.u32(c.region.addr);
      w.u32(c.region.bytes);
    }
  }
  for (const ExeTensor& x : tensors) {
    w.str(x.name);
    w.u32(static_cast<uint32_t>(x.regions.size()));
    for (const ExeRegion& r : x.regions) {
      w.u32(r.tile);
      w.u32(r.addr);
      w.u32(r.bytes);
    }
  }
  if (w.out.size() > UINT32_MAX) throw Error("executable larger than 4 GiB");
  std::vector<uint8_t>& out = w.out;
  const auto len = static_cast<uint32_t>(out.size());
  storeLe32(out.data() + kOffLength, len);
  storeLe32(out.data() + kOffCrc, imageCrc(out));
  return out;
}

Executable Executable::parse(std::span<const uint8_t> bytes, const std::string& name) {
  try {
    if (!hasMagic(bytes)) throw Error("not a tessera executable (bad magic)");
    if (bytes.size() < kHeaderBytes) {
      throw Error(fmt::format("truncated: {} bytes, shorter than the {}-byte header", bytes.size(),
                              kHeaderBytes));
    }
    const uint32_t version = loadLe32(bytes.data() + kOffVersion);
    if (version != kVersion) {
      throw Error(fmt::format("format version {} is not supported (this tessera reads version {})",
                              version, kVersion));
    }
    const uint32_t length = loadLe32(bytes.data() + kOffLength);
    if (length != bytes.size()) {
      throw Error(fmt::format("the header says {} bytes but the file has {} (truncated or padded)",
                              length, bytes.size()));
    }
    const uint32_t crc = loadLe32(bytes.data() + kOffCrc);
    if (const uint32_t actual = imageCrc(bytes); actual != crc) {
      throw Error(fmt::format("checksum mismatch: header 0x{:08x}, content 0x{:08x} (corrupt file)",
                              crc, actual));
    }
    if (const uint32_t flags = loadLe32(bytes.data() + kOffFlags); flags != 0) {
      throw Error(fmt::format("unknown flags 0x{:08x}", flags));
    }
    Reader r(bytes.subspan(24));
    Executable exe;
    exe.target.tiles = r.u32("target tiles");
    exe.target.tileMemBytes = r.u32("target memory bytes");
    exe.target.contexts = r.u32("target contexts");
    // Each count is checked against what is left, so a corrupt count cannot allocate gigabytes.
    const uint32_t nBlobs = r.count("blob count", 4);
    const uint32_t nSegments = r.count("segment count", 12);
    const uint32_t nStreams = r.count("stream count", 12);
    const uint32_t nSyncs = r.count("host sync count", 8);
    const uint32_t nTensors = r.count("tensor count", 12);
    for (uint32_t i = 0; i < nBlobs; ++i) {
      const auto b = r.bytes("blob");
      exe.blobs.emplace_back(b.begin(), b.end());
    }
    for (uint32_t i = 0; i < nSegments; ++i) {
      ExeSegment s;
      s.tile = r.u32("segment tile");
      s.addr = r.u32("segment address");
      s.blob = r.u32("segment blob");
      exe.segments.push_back(s);
    }
    for (uint32_t i = 0; i < nStreams; ++i) {
      ExeStream s;
      s.direction = static_cast<StreamDirection>(r.u32("stream direction"));
      s.name = r.str("stream name");
      exe.streams.push_back(s);
    }
    for (uint32_t i = 0; i < nSyncs; ++i) {
      ExeHostSync h;
      h.id = r.u32("host sync id");
      const uint32_t nCopies = r.count("copy count", 16);
      for (uint32_t c = 0; c < nCopies; ++c) {
        ExeStreamCopy copy;
        copy.stream = r.u32("copy stream");
        copy.region.tile = r.u32("copy tile");
        copy.region.addr = r.u32("copy address");
        copy.region.bytes = r.u32("copy bytes");
        h.copies.push_back(copy);
      }
      exe.hostSyncs.push_back(std::move(h));
    }
    for (uint32_t i = 0; i < nTensors; ++i) {
      ExeTensor x;
      x.name = r.str("tensor name");
      const uint32_t nRegions = r.count("region count", 12);
      for (uint32_t k = 0; k < nRegions; ++k) {
        ExeRegion reg;
        reg.tile = r.u32("region tile");
        reg.addr = r.u32("region address");
        reg.bytes = r.u32("region bytes");
        x.regions.push_back(reg);
      }
      exe.tensors.push_back(std::move(x));
    }
    if (r.pos() != r.size()) {
      throw Error(
          fmt::format("{} bytes of unknown data after the tensor table", r.size() - r.pos()));
    }
    exe.validate();
    return exe;
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", name, e.what()));
  }
}

Executable Executable::fromFile(const std::string& path) {
  return parse(readRegularFile(path, kMaxFileBytes, "a *.tess executable"), path);
}

void Executable::writeFile(const std::string& path) const {
  writeFileChecked(path, serialize());
}

}  // namespace tessera

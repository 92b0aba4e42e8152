// The checkpoint file format (docs/checkpoint.md, "File format"): a magic, a version, then
// sections of (type, length, CRC-32, payload), all little-endian.
#include "checkpoint_format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "crc32.hpp"
#include "little_endian.hpp"
#include "tessera/chip_params.h"

namespace tessera {
namespace checkpoint {
namespace {

constexpr std::array<uint8_t, 8> kMagic = {'T', 'E', 'S', 'S', 'C', 'K', 'P', 'T'};
// Version 1 had no feature word in CONFIG and no matrix-unit state; it is still read (a
// restore leaves the unit at its reset state, as version 1 always did). Version 2 held four
// accumulator rows a context and no row addressing (read: the rest at its reset values).
constexpr uint32_t kOldestVersion = 1;
constexpr uint32_t kFeatureMatrixUnit = 1u;  // CONFIG features: the tiles' matrix-unit state
constexpr uint32_t kMergeGapWords = 4;       // zero runs shorter than this stay inside a data run
// Largest counter a checkpoint may carry: 146 years of cycles at 1 GHz, far from the wrap at 2^64
// that continuing the run would reach (docs/limits.md).
constexpr uint64_t kMaxCounter = uint64_t{1} << 62;

enum class Section : uint32_t {
  Config = 1,
  Chip = 2,
  Tile = 3,
  Memory = 4,
  Console = 5,
  App = 6,
  End = 0xffff,
};

// --- Little-endian writer and bounded reader ---

class Writer {
 public:
  void u32(uint32_t v) { appendLe32(out_, v); }
  void u64(uint64_t v) { appendLe64(out_, v); }
  void bytes(std::span<const uint8_t> b) { out_.insert(out_.end(), b.begin(), b.end()); }
  std::vector<uint8_t>& data() { return out_; }

 private:
  std::vector<uint8_t> out_;
};

class Reader {
 public:
  Reader(std::span<const uint8_t> in, std::string what) : in_(in), what_(std::move(what)) {}
  uint32_t u32() {
    need(4);
    const uint32_t v = loadLe32(in_.data() + pos_);
    pos_ += 4;
    return v;
  }
  uint64_t u64() {
    need(8);
    const uint64_t v = loadLe64(in_.data() + pos_);
    pos_ += 8;
    return v;
  }
  std::span<const uint8_t> bytes(uint64_t n) {
    need(n);
    auto s = in_.subspan(pos_, n);
    pos_ += n;
    return s;
  }
  size_t left() const { return in_.size() - pos_; }
  void expectEnd() const {
    if (left() != 0) {
      throw Error(fmt::format("checkpoint: {} has {} unexpected bytes at its end", what_, left()));
    }
  }

 private:
  void need(uint64_t n) const {
    if (n > left()) {
      throw Error(fmt::format("checkpoint: {} is truncated ({} more bytes needed, {} left)", what_,
                              n, left()));
    }
  }
  std::span<const uint8_t> in_;
  size_t pos_ = 0;
  std::string what_;
};

void addSection(Writer& file, Section type, std::span<const uint8_t> payload) {
  file.u32(static_cast<uint32_t>(type));
  file.u64(payload.size());
  file.u32(crc32(payload));
  file.bytes(payload);
}

uint64_t fnv1a(uint64_t h, uint64_t v) {
  for (int i = 0; i < 8; ++i) {
    h ^= (v >> (8 * i)) & 0xff;
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace

std::vector<std::pair<uint32_t, std::vector<uint8_t>>> memoryRuns(std::span<const uint8_t> mem) {
  std::vector<std::pair<uint32_t, std::vector<uint8_t>>> runs;
  const uint32_t words = static_cast<uint32_t>(mem.size() / 4);
  auto zero = [&](uint32_t w) { return loadLe32(mem.data() + 4 * w) == 0; };
  uint32_t w = 0;
  while (w < words) {
    while (w < words && zero(w)) ++w;
    if (w == words) break;
    const uint32_t start = w;
    uint32_t end = w;
    while (w < words) {
      if (!zero(w)) {
        end = ++w;
        continue;
      }
      uint32_t z = w;
      while (z < words && zero(z)) ++z;
      if (z == words || z - w >= kMergeGapWords) break;
      w = z;
    }
    w = end;
    runs.emplace_back(4 * start,
                      std::vector<uint8_t>(mem.begin() + 4 * start, mem.begin() + 4 * end));
  }
  return runs;
}

std::vector<uint8_t> encode(const Image& img, uint32_t version) {
  if (version != 2 && version != kVersion) {
    throw Error(fmt::format("checkpoint: cannot write format version {}", version));
  }
  const unsigned accs = version >= 3 ? kUnitAccs : kUnitAccsVersion2;
  Writer file;
  file.bytes(kMagic);
  file.u32(version);
  {
    Writer s;
    s.u32(img.info.tiles);
    s.u32(img.info.tileMemBytes);
    s.u32(img.info.contexts);
    s.u32(TESS_CHIP_ID);
    s.u64(img.info.paramHash);
    s.u32(img.info.matrixUnit ? kFeatureMatrixUnit : 0u);
    addSection(file, Section::Config, s.data());
  }
  {
    Writer s;
    s.u64(img.info.cycle);
    s.u32(img.info.syncDescriptor);
    s.u32(img.info.syncBreak ? 1u : 0u);
    addSection(file, Section::Chip, s.data());
  }
  for (unsigned t = 0; t < img.tiles.size(); ++t) {
    const TileState& ts = img.tiles[t];
    Writer s;
    s.u32(t);
    s.u32(ts.enabled ? 1u : 0u);
    if (ts.enabled) {
      s.u32(ts.runArg);
      s.u32(ts.xchgProg);
      s.u64(ts.idle);
      s.u64(ts.syncWait);
      s.u64(ts.exch);
      s.u64(ts.instr);
      if (img.info.matrixUnit) {
        for (uint32_t w : ts.weights) s.u32(w);
      }
      for (const ContextState& cs : ts.contexts) {
        s.u32(cs.pc);
        s.u32(cs.fcsr);
        s.u64(cs.instret);
        for (uint32_t r : cs.regs) s.u32(r);
        if (img.info.matrixUnit) {
          for (unsigned i = 0; i < accs; ++i) s.u32(cs.accs[i]);
          s.u32(cs.srState);
          if (version >= 3) {
            s.u32(cs.strideS);
            s.u32(cs.strideC);
            s.u32(cs.rowLimit);
          }
        }
      }
    }
    addSection(file, Section::Tile, s.data());
    Writer m;
    m.u32(t);
    m.u32(static_cast<uint32_t>(ts.runs.size()));
    for (const auto& [offset, data] : ts.runs) {
      m.u32(offset);
      m.u32(static_cast<uint32_t>(data.size()));
      m.bytes(data);
    }
    addSection(file, Section::Memory, m.data());
    Writer c;
    c.u32(t);
    const std::string& text = img.info.consoles[t];
    c.bytes(std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
    addSection(file, Section::Console, c.data());
  }
  addSection(file, Section::App, img.info.appData);
  addSection(file, Section::End, {});
  return std::move(file.data());
}

Image decode(std::span<const uint8_t> bytes) {
  Reader file(bytes, "the file");
  const auto magic = file.bytes(kMagic.size());
  if (!std::equal(magic.begin(), magic.end(), kMagic.begin())) {
    throw Error("checkpoint: not a tessera checkpoint (bad magic; expected \"TESSCKPT\")");
  }
  const uint32_t version = file.u32();
  if (version < kOldestVersion || version > kVersion) {
    throw Error(
        fmt::format("checkpoint: format version {} is not supported (this build reads {} to {})",
                    version, kOldestVersion, kVersion));
  }
  Image img;
  img.info.version = version;
  bool haveConfig = false, haveChip = false, haveApp = false;
  unsigned nextTile = 0, nextMem = 0, nextConsole = 0;
  for (unsigned index = 0;; ++index) {
    const uint32_t type = file.u32();
    const uint64_t length = file.u64();
    const uint32_t crc = file.u32();
    const auto payload = file.bytes(length);
    const std::string what = fmt::format("section {} (type {})", index, type);
    if (crc32(payload) != crc) {
      throw Error(fmt::format("checkpoint: {} is corrupted (CRC 0x{:08x}, expected 0x{:08x})", what,
                              crc32(payload), crc));
    }
    Reader s(payload, what);
    if (index == 0 && type != static_cast<uint32_t>(Section::Config)) {
      throw Error("checkpoint: the first section is not the configuration");
    }
    switch (static_cast<Section>(type)) {
      case Section::Config: {
        if (haveConfig) throw Error(fmt::format("checkpoint: {}: a second configuration", what));
        img.info.tiles = s.u32();
        img.info.tileMemBytes = s.u32();
        img.info.contexts = s.u32();
        const uint32_t id = s.u32();
        img.info.paramHash = s.u64();
        if (version >= 2) {
          const uint32_t features = s.u32();
          if ((features & ~kFeatureMatrixUnit) != 0) {
            throw Error(fmt::format("checkpoint: {}: unknown feature bits 0x{:08x}", what,
                                    features & ~kFeatureMatrixUnit));
          }
          img.info.matrixUnit = (features & kFeatureMatrixUnit) != 0;
        }
        s.expectEnd();
        if (id != TESS_CHIP_ID) {
          throw Error(fmt::format("checkpoint: saved from a chip with ID 0x{:08x}, not 0x{:08x}",
                                  id, TESS_CHIP_ID));
        }
        if (img.info.tiles == 0 || img.info.tiles > 65536 || img.info.contexts < 2 ||
            img.info.contexts > TESS_ROUND_CYCLES || img.info.tileMemBytes == 0 ||
            img.info.tileMemBytes % 4 != 0 || img.info.tileMemBytes >= TESS_MMIO_BASE) {
          throw Error(
              fmt::format("checkpoint: impossible configuration ({} tiles, {} bytes, {} "
                          "contexts)",
                          img.info.tiles, img.info.tileMemBytes, img.info.contexts));
        }
        img.tiles.resize(img.info.tiles);
        img.info.consoles.resize(img.info.tiles);
        haveConfig = true;
        break;
      }
      case Section::Chip:
        if (haveChip) throw Error(fmt::format("checkpoint: {}: a second chip section", what));
        img.info.cycle = s.u64();
        img.info.syncDescriptor = s.u32();
        img.info.syncBreak = s.u32() != 0;
        s.expectEnd();
        if (img.info.cycle >= kMaxCounter) {
          throw Error(fmt::format("checkpoint: cycle counter {} is 2^62 or more (docs/limits.md)",
                                  img.info.cycle));
        }
        if ((img.info.syncDescriptor & ~(TESS_SYNC_HOST_BIT | 0xffffu)) != 0) {
          throw Error(fmt::format("checkpoint: sync descriptor 0x{:08x} has undefined bits",
                                  img.info.syncDescriptor));
        }
        haveChip = true;
        break;
      case Section::Tile: {
        const uint32_t t = s.u32();
        if (t != nextTile || t >= img.tiles.size()) {
          throw Error(fmt::format("checkpoint: {}: tile {} out of order", what, t));
        }
        TileState& ts = img.tiles[t];
        ts.enabled = s.u32() != 0;
        if (ts.enabled) {
          ts.runArg = s.u32();
          ts.xchgProg = s.u32();
          ts.idle = s.u64();
          ts.syncWait = s.u64();
          ts.exch = s.u64();
          ts.instr = s.u64();
          if (img.info.matrixUnit) {
            for (uint32_t& w : ts.weights) w = s.u32();
          }
          ts.contexts.resize(img.info.contexts);
          for (unsigned c = 0; c < img.info.contexts; ++c) {
            ContextState& cs = ts.contexts[c];
            cs.pc = s.u32();
            cs.fcsr = s.u32();
            cs.instret = s.u64();
            for (uint32_t& r : cs.regs) r = s.u32();
            if (img.info.matrixUnit) {
              const unsigned accs = version >= 3 ? kUnitAccs : kUnitAccsVersion2;
              for (unsigned i = 0; i < accs; ++i) cs.accs[i] = s.u32();
              cs.srState = s.u32();
              if (version >= 3) {
                cs.strideS = s.u32();
                cs.strideC = s.u32();
                cs.rowLimit = s.u32();
                if (cs.rowLimit > TESS_AMP_ACC_ROWS) {
                  throw Error(fmt::format(
                      "checkpoint: {}: tile {} context {} has the row limit {}, past the unit's "
                      "{} accumulator rows",
                      what, t, c, cs.rowLimit, TESS_AMP_ACC_ROWS));
                }
              }
              // xorshift32 never reaches 0, and nothing can set it (docs/tile.md).
              if (cs.srState == 0) {
                throw Error(fmt::format(
                    "checkpoint: {}: tile {} context {} has the generator state 0, which no "
                    "chip can hold",
                    what, t, c));
              }
            }
          }
          // A counter near 2^64 would wrap when the run continues; a sum of them could too.
          for (const uint64_t* c : {&ts.idle, &ts.syncWait, &ts.exch, &ts.instr}) {
            if (*c >= kMaxCounter) {
              throw Error(fmt::format(
                  "checkpoint: {}: tile {} has a counter of {}, 2^62 or more (docs/limits.md)",
                  what, t, *c));
            }
          }
          uint64_t sum = 0;
          for (const ContextState& cs : ts.contexts) {
            if (cs.instret >= kMaxCounter) {
              throw Error(fmt::format(
                  "checkpoint: {}: tile {} has a context with {} instructions, 2^62 or more", what,
                  t, cs.instret));
            }
            sum += cs.instret;
          }
          if (sum != ts.instr) {
            throw Error(
                fmt::format("checkpoint: {}: tile {} has {} instructions but its contexts "
                            "{}",
                            what, t, ts.instr, sum));
          }
        }
        s.expectEnd();
        ++nextTile;
        break;
      }
      case Section::Memory: {
        const uint32_t t = s.u32();
        if (t != nextMem || t >= img.tiles.size()) {
          throw Error(fmt::format("checkpoint: {}: memory of tile {} out of order", what, t));
        }
        const uint32_t n = s.u32();
        uint64_t end = 0;
        for (uint32_t i = 0; i < n; ++i) {
          const uint32_t offset = s.u32();
          const uint32_t len = s.u32();
          if (offset < end || uint64_t{offset} + len > img.info.tileMemBytes) {
            throw Error(
                fmt::format("checkpoint: {}: memory run at 0x{:x} of {} bytes is outside "
                            "tile {}'s memory or out of order",
                            what, offset, len, t));
          }
          const auto data = s.bytes(len);
          img.tiles[t].runs.emplace_back(offset, std::vector<uint8_t>(data.begin(), data.end()));
          end = uint64_t{offset} + len;
        }
        s.expectEnd();
        ++nextMem;
        break;
      }
      case Section::Console: {
        const uint32_t t = s.u32();
        if (t != nextConsole || t >= img.tiles.size()) {
          throw Error(fmt::format("checkpoint: {}: console of tile {} out of order", what, t));
        }
        const auto text = s.bytes(s.left());
        img.info.consoles[t].assign(text.begin(), text.end());
        ++nextConsole;
        break;
      }
      case Section::App: {
        if (haveApp) throw Error(fmt::format("checkpoint: {}: a second application section", what));
        const auto data = s.bytes(s.left());
        img.info.appData.assign(data.begin(), data.end());
        haveApp = true;
        break;
      }
      case Section::End:
        s.expectEnd();
        file.expectEnd();
        if (!haveChip || nextTile != img.tiles.size() || nextMem != img.tiles.size() ||
            nextConsole != img.tiles.size()) {
          throw Error("checkpoint: sections are missing (the file is incomplete)");
        }
        return img;
      default:
        throw Error(fmt::format("checkpoint: {}: unknown section type", what));
    }
  }
}

}  // namespace checkpoint

uint64_t checkpointParamHash() {
  // The constants a saved state's meaning and its continuation depend on.
  const uint64_t values[] = {TESS_CHIP_ID,       TESS_NUM_CONTEXTS,     TESS_LONG_OP_ROUNDS,
                             TESS_SYNC_LATENCY,  TESS_EXCHANGE_LATENCY, TESS_MMIO_BASE,
                             TESS_MMIO_SYNC,     TESS_MMIO_XCHG_PROG,   TESS_MMIO_RUN_BASE,
                             TESS_SYNC_HOST_BIT, TESS_PIPE_WB_STAGE};
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint64_t v : values) h = checkpoint::fnv1a(h, v);
  return h;
}

CheckpointInfo readCheckpointInfo(std::span<const uint8_t> bytes) {
  return checkpoint::decode(bytes).info;
}

}  // namespace tessera

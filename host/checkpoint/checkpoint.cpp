// Checkpoints over the Device interface (docs/checkpoint.md). Saving reads the chip's state
// registers (CTX_SEL/REG_SEL/C_*, T_*, CYCLE) and memory; restoring resets the device, parks every
// enabled tile at a sync with the saved descriptor (a four-instruction program at address 0), and
// then writes memory and state, which the chip accepts only while it stands at a sync.
#include "tessera/checkpoint.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "crc32.hpp"
#include "file_io.hpp"
#include "tessera/chip_params.h"

namespace tessera {
namespace {

constexpr std::array<uint8_t, 8> kMagic = {'T', 'E', 'S', 'S', 'C', 'K', 'P', 'T'};
constexpr uint32_t kVersion = 1;
constexpr uint64_t kMaxFileBytes = uint64_t{4} << 30;  // mk2 memory is 918 MB uncompressed
constexpr unsigned kRegs = 64;                         // x0..x31, f0..f31
constexpr uint32_t kStateSync = TESS_ST_HOST_SYNC;
constexpr uint32_t kMergeGapWords = 4;  // zero runs shorter than this stay inside a data run
constexpr uint64_t kParkCycles = 1000;  // the parking program stops at cycle 25

enum class Section : uint32_t {
  Config = 1,
  Chip = 2,
  Tile = 3,
  Memory = 4,
  Console = 5,
  App = 6,
  End = 0xffff,
};

// C_STATE bits (docs/checkpoint.md).
constexpr uint32_t kCtxRunning = 1, kCtxWait = 2, kCtxSync = 4, kCtxLongOp = 8;

struct ContextState {
  uint32_t pc = 0;
  uint32_t fcsr = 0;
  uint64_t instret = 0;
  std::array<uint32_t, kRegs> regs{};
};

struct TileState {
  bool enabled = true;
  uint32_t runArg = 0;
  uint32_t xchgProg = 0;
  uint64_t idle = 0;
  uint64_t syncWait = 0;
  uint64_t exch = 0;
  uint64_t instr = 0;
  std::vector<ContextState> contexts;
  // Memory as runs of (byte offset, bytes); everything else is zero.
  std::vector<std::pair<uint32_t, std::vector<uint8_t>>> runs;
};

struct Image {
  CheckpointInfo info;
  std::vector<TileState> tiles;
};

// --- Little-endian writer and bounded reader ---

class Writer {
 public:
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) out_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void u64(uint64_t v) {
    u32(static_cast<uint32_t>(v));
    u32(static_cast<uint32_t>(v >> 32));
  }
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
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= uint32_t{in_[pos_ + i]} << (8 * i);
    pos_ += 4;
    return v;
  }
  uint64_t u64() {
    const uint64_t lo = u32();
    return lo | uint64_t{u32()} << 32;
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

// --- Device access ---

uint64_t read64(Device& dev, uint32_t lo, uint32_t hi) {
  const uint64_t l = dev.readControl(lo);
  return l | uint64_t{dev.readControl(hi)} << 32;
}

void write64(Device& dev, uint32_t lo, uint32_t hi, uint64_t v) {
  dev.writeControl(lo, static_cast<uint32_t>(v));
  dev.writeControl(hi, static_cast<uint32_t>(v >> 32));
}

// What is wrong with context c's C_STATE s at a sync stop.
std::string describeContextState(unsigned c, uint32_t s) {
  std::vector<std::string> parts;
  if (s & kCtxLongOp) parts.emplace_back("a long op in flight");
  if (s & kCtxWait) parts.emplace_back("blocked in WAIT");
  if (c != 0 && (s & kCtxRunning)) parts.emplace_back("a worker running");
  if (c == 0 && !(s & kCtxSync)) parts.emplace_back("the supervisor not at its SYNC");
  if (c != 0 && (s & kCtxSync)) parts.emplace_back("a worker marked at a sync");
  return fmt::format("{}", fmt::join(parts, ", "));
}

TileState saveTile(Device& dev, unsigned t, const ChipInfo& chip) {
  TileState ts;
  dev.writeControl(TESS_CR_TILE_SEL, t);
  ts.enabled = dev.readControl(TESS_CR_T_ENABLE) != 0;
  if (ts.enabled) {
    if ((dev.readControl(TESS_CR_T_STATE) & 2u) == 0) {
      throw Error(
          fmt::format("checkpoint: tile {} has not arrived at the sync the chip stopped at", t));
    }
    ts.runArg = dev.readControl(TESS_CR_T_RUN_ARG);
    ts.xchgProg = dev.readControl(TESS_CR_T_XCHG_PROG);
    ts.idle = read64(dev, TESS_CR_T_IDLE_LO, TESS_CR_T_IDLE_HI);
    ts.syncWait = read64(dev, TESS_CR_T_SYNCWAIT_LO, TESS_CR_T_SYNCWAIT_HI);
    ts.exch = read64(dev, TESS_CR_T_EXCH_LO, TESS_CR_T_EXCH_HI);
    ts.instr = read64(dev, TESS_CR_T_INSTR_LO, TESS_CR_T_INSTR_HI);
    ts.contexts.resize(chip.contexts);
    for (unsigned c = 0; c < chip.contexts; ++c) {
      dev.writeControl(TESS_CR_CTX_SEL, c);
      // At a sync stop the supervisor stands at its SYNC and every worker is idle; anything else
      // (docs/checkpoint.md) is state the format does not hold.
      const uint32_t state = dev.readControl(TESS_CR_C_STATE);
      const uint32_t expected = c == 0 ? (kCtxRunning | kCtxSync) : 0u;
      if (state != expected) {
        throw Error(fmt::format(
            "checkpoint: tile {} context {} is not in a state a checkpoint can hold at a sync "
            "(C_STATE 0x{:x}: {}); nothing was saved",
            t, c, state, describeContextState(c, state)));
      }
      ContextState& cs = ts.contexts[c];
      cs.pc = dev.readControl(TESS_CR_C_PC);
      cs.fcsr = dev.readControl(TESS_CR_C_FCSR);
      cs.instret = read64(dev, TESS_CR_C_INSTRET_LO, TESS_CR_C_INSTRET_HI);
      for (unsigned r = 0; r < kRegs; ++r) {
        dev.writeControl(TESS_CR_REG_SEL, r);
        cs.regs[r] = dev.readControl(TESS_CR_C_REG);
      }
    }
    dev.writeControl(TESS_CR_CTX_SEL, 0);
    dev.writeControl(TESS_CR_REG_SEL, 0);
  }
  // Memory: runs of nonzero words, short zero gaps merged in.
  std::vector<uint8_t> mem(chip.tileMemBytes);
  dev.readMemory(t, 0, mem);
  const uint32_t words = chip.tileMemBytes / 4;
  auto zero = [&](uint32_t w) {
    uint32_t v;
    std::memcpy(&v, mem.data() + 4 * w, 4);
    return v == 0;
  };
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
    ts.runs.emplace_back(4 * start,
                         std::vector<uint8_t>(mem.begin() + 4 * start, mem.begin() + 4 * end));
  }
  return ts;
}

// --- Encoding ---

std::vector<uint8_t> encode(const Image& img) {
  Writer file;
  file.bytes(kMagic);
  file.u32(kVersion);
  {
    Writer s;
    s.u32(img.info.tiles);
    s.u32(img.info.tileMemBytes);
    s.u32(img.info.contexts);
    s.u32(TESS_CHIP_ID);
    s.u64(img.info.paramHash);
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
      for (const ContextState& cs : ts.contexts) {
        s.u32(cs.pc);
        s.u32(cs.fcsr);
        s.u64(cs.instret);
        for (uint32_t r : cs.regs) s.u32(r);
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
  if (version != kVersion) {
    throw Error(fmt::format("checkpoint: format version {} is not supported (this build reads {})",
                            version, kVersion));
  }
  Image img;
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
        s.expectEnd();
        if (id != TESS_CHIP_ID) {
          throw Error(fmt::format("checkpoint: saved from a chip with ID 0x{:08x}, not 0x{:08x}",
                                  id, TESS_CHIP_ID));
        }
        if (img.info.tiles == 0 || img.info.tiles > 65536 ||
            img.info.contexts < 2 || img.info.contexts > TESS_ROUND_CYCLES ||
            img.info.tileMemBytes == 0 ||
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
          ts.contexts.resize(img.info.contexts);
          for (ContextState& cs : ts.contexts) {
            cs.pc = s.u32();
            cs.fcsr = s.u32();
            cs.instret = s.u64();
            for (uint32_t& r : cs.regs) r = s.u32();
          }
          uint64_t sum = 0;
          for (const ContextState& cs : ts.contexts) sum += cs.instret;
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

// Parking program (docs/checkpoint.md): li t0, desc; lui t1, 0x80000; sw t0, 0x44(t1).
std::array<uint32_t, 4> parkingProgram(uint32_t desc) {
  const uint32_t hi = (desc + 0x800u) & 0xfffff000u;
  const uint32_t lo = desc - hi;  // sign-extended 12-bit immediate of the addi
  const uint32_t luiT0 = hi | (5u << 7) | 0x37u;
  const uint32_t addiT0 = ((lo & 0xfffu) << 20) | (5u << 15) | (5u << 7) | 0x13u;
  const uint32_t luiT1 = (TESS_MMIO_BASE & 0xfffff000u) | (6u << 7) | 0x37u;
  const uint32_t off = TESS_MMIO_SYNC - TESS_MMIO_BASE;
  const uint32_t sw =
      ((off >> 5) << 25) | (5u << 20) | (6u << 15) | (2u << 12) | ((off & 0x1fu) << 7) | 0x23u;
  return {luiT0, addiT0, luiT1, sw};
}

}  // namespace

uint64_t checkpointParamHash() {
  // The constants a saved state's meaning and its continuation depend on.
  const uint64_t values[] = {TESS_CHIP_ID,       TESS_NUM_CONTEXTS,     TESS_LONG_OP_ROUNDS,
                             TESS_SYNC_LATENCY,  TESS_EXCHANGE_LATENCY, TESS_MMIO_BASE,
                             TESS_MMIO_SYNC,     TESS_MMIO_XCHG_PROG,   TESS_MMIO_RUN_BASE,
                             TESS_SYNC_HOST_BIT, TESS_PIPE_WB_STAGE};
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint64_t v : values) h = fnv1a(h, v);
  return h;
}

bool hasCheckpointSupport(Device& dev) { return dev.info().hasCheckpoint; }

namespace {

void requireCheckpointSupport(Device& dev) {
  if (!hasCheckpointSupport(dev)) {
    throw Error(fmt::format("checkpoint: device \"{}\" has no checkpoint support (it refuses the "
                            "checkpoint register REG_SEL, 0x{:03x}: a chip built with "
                            "HAS_CHECKPOINT = 0, like the iCE40 board's)",
                            dev.info().backend, TESS_CR_REG_SEL));
  }
}

}  // namespace

std::vector<uint8_t> saveCheckpoint(Device& dev, std::span<const uint8_t> appData) {
  requireCheckpointSupport(dev);
  const uint32_t status = dev.readControl(TESS_CR_STATUS);
  if ((status & 0xfu) != kStateSync) {
    throw Error(
        fmt::format("checkpoint: the chip is not stopped at a sync (STATUS state {}); a "
                    "checkpoint is taken at a host sync or a SYNC_BREAK stop",
                    status & 0xfu));
  }
  const ChipInfo chip = dev.info();
  Image img;
  img.info.tiles = dev.readControl(TESS_CR_TILES);
  img.info.tileMemBytes = dev.readControl(TESS_CR_MEM_BYTES);
  img.info.contexts = dev.readControl(TESS_CR_CONTEXTS);
  img.info.paramHash = checkpointParamHash();
  img.info.cycle = read64(dev, TESS_CR_CYCLE_LO, TESS_CR_CYCLE_HI);
  img.info.syncDescriptor = ((status & 0x10u) ? TESS_SYNC_HOST_BIT : 0u) | status >> 16;
  img.info.syncBreak = dev.readControl(TESS_CR_SYNC_BREAK) != 0;
  img.info.appData.assign(appData.begin(), appData.end());
  const ChipInfo regs{{img.info.tiles, img.info.tileMemBytes, img.info.contexts}, chip.backend};
  const uint32_t tileSel = dev.readControl(TESS_CR_TILE_SEL);
  for (unsigned t = 0; t < img.info.tiles; ++t) {
    img.tiles.push_back(saveTile(dev, t, regs));
    img.info.consoles.push_back(dev.console(t));
  }
  dev.writeControl(TESS_CR_TILE_SEL, tileSel);
  return encode(img);
}

void saveCheckpoint(Device& dev, const std::string& path, std::span<const uint8_t> appData) {
  writeFileChecked(path, saveCheckpoint(dev, appData));
}

CheckpointInfo readCheckpointInfo(std::span<const uint8_t> bytes) {
  return decode(bytes).info;
}

CheckpointInfo restoreCheckpoint(Device& dev, std::span<const uint8_t> bytes) {
  Image img = decode(bytes);
  const CheckpointInfo& info = img.info;
  // Everything is checked before the device is touched.
  requireCheckpointSupport(dev);
  const uint32_t tiles = dev.readControl(TESS_CR_TILES);
  const uint32_t memBytes = dev.readControl(TESS_CR_MEM_BYTES);
  const uint32_t contexts = dev.readControl(TESS_CR_CONTEXTS);
  if (tiles != info.tiles || memBytes != info.tileMemBytes || contexts != info.contexts) {
    throw Error(
        fmt::format("checkpoint: saved on a chip of {} tiles x {} bytes ({} contexts); "
                    "this device has {} tiles x {} bytes ({} contexts)",
                    info.tiles, info.tileMemBytes, info.contexts, tiles, memBytes, contexts));
  }
  if (info.paramHash != checkpointParamHash()) {
    throw Error(
        fmt::format("checkpoint: saved with other chip parameters (hash 0x{:016x}, this "
                    "build 0x{:016x})",
                    info.paramHash, checkpointParamHash()));
  }
  if (std::none_of(img.tiles.begin(), img.tiles.end(),
                   [](const TileState& t) { return t.enabled; })) {
    throw Error("checkpoint: no tile is enabled (a sync stop needs at least one)");
  }

  // Park every enabled tile at a sync with the saved descriptor.
  dev.reset();
  const auto park = parkingProgram(info.syncDescriptor);
  std::array<uint8_t, 16> parkBytes;
  std::memcpy(parkBytes.data(), park.data(), parkBytes.size());
  for (unsigned t = 0; t < tiles; ++t) {
    dev.setTileEnabled(t, img.tiles[t].enabled);
    if (img.tiles[t].enabled) dev.writeMemory(t, 0, parkBytes);
  }
  dev.setSyncBreak(true);
  const RunResult parked = dev.run(kParkCycles);
  const StopReason want =
      (info.syncDescriptor & TESS_SYNC_HOST_BIT) ? StopReason::HostSync : StopReason::SyncBreak;
  if (parked.reason != want || parked.hostSyncId != (info.syncDescriptor & 0xffffu)) {
    throw Error(
        fmt::format("checkpoint: restoring: the device did not stop at the parking sync "
                    "(stopped at cycle {}, reason {})",
                    parked.cycles, static_cast<int>(parked.reason)));
  }
  if ((info.cycle - parked.cycles) % TESS_ROUND_CYCLES != 0) {
    // Every sync stop is at R = c + 3 + SYNC_LATENCY with c a supervisor slot (docs/checkpoint.md).
    throw Error(fmt::format("checkpoint: saved cycle {} is not in the slot phase of a sync stop",
                            info.cycle));
  }

  // Memory (the parking program is overwritten), then the state.
  std::vector<uint8_t> mem(memBytes);
  for (unsigned t = 0; t < tiles; ++t) {
    std::fill(mem.begin(), mem.end(), 0);
    for (const auto& [offset, data] : img.tiles[t].runs) {
      std::copy(data.begin(), data.end(), mem.begin() + offset);
    }
    dev.writeMemory(t, 0, mem);
  }
  write64(dev, TESS_CR_CYCLE_LO, TESS_CR_CYCLE_HI, info.cycle);
  for (unsigned t = 0; t < tiles; ++t) {
    const TileState& ts = img.tiles[t];
    if (!ts.enabled) continue;
    dev.writeControl(TESS_CR_TILE_SEL, t);
    dev.writeControl(TESS_CR_T_RUN_ARG, ts.runArg);
    dev.writeControl(TESS_CR_T_XCHG_PROG, ts.xchgProg);
    write64(dev, TESS_CR_T_IDLE_LO, TESS_CR_T_IDLE_HI, ts.idle);
    write64(dev, TESS_CR_T_SYNCWAIT_LO, TESS_CR_T_SYNCWAIT_HI, ts.syncWait);
    write64(dev, TESS_CR_T_EXCH_LO, TESS_CR_T_EXCH_HI, ts.exch);
    for (unsigned c = 0; c < contexts; ++c) {
      const ContextState& cs = ts.contexts[c];
      dev.writeControl(TESS_CR_CTX_SEL, c);
      dev.writeControl(TESS_CR_C_PC, cs.pc);
      dev.writeControl(TESS_CR_C_FCSR, cs.fcsr);
      write64(dev, TESS_CR_C_INSTRET_LO, TESS_CR_C_INSTRET_HI, cs.instret);
      for (unsigned r = 1; r < kRegs; ++r) {
        dev.writeControl(TESS_CR_REG_SEL, r);
        dev.writeControl(TESS_CR_C_REG, cs.regs[r]);
      }
    }
    const uint64_t instr = read64(dev, TESS_CR_T_INSTR_LO, TESS_CR_T_INSTR_HI);
    if (instr != ts.instr) {
      throw Error(
          fmt::format("checkpoint: tile {}: {} instructions after the restore, saved {} "
                      "(the per-context counts do not add up)",
                      t, instr, ts.instr));
    }
  }
  dev.writeControl(TESS_CR_CTX_SEL, 0);
  dev.writeControl(TESS_CR_REG_SEL, 0);
  dev.writeControl(TESS_CR_TILE_SEL, 0);
  dev.setSyncBreak(info.syncBreak);
  return img.info;
}

CheckpointInfo restoreCheckpoint(Device& dev, const std::string& path) {
  const std::vector<uint8_t> bytes = readRegularFile(path, kMaxFileBytes, "checkpoint");
  try {
    return restoreCheckpoint(dev, bytes);
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", path, e.what()));
  }
}

}  // namespace tessera

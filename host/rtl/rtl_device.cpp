// RtlDevice: drives the verilated tess_chip through its ports (see the header comment of
// rtl/chip/tess_chip.sv for what each port means and its timing). The verilated top is
// rtl/sim/tess_chip_sim.sv: the chip with its host and control ports behind registers that take
// the port values at a rising edge of port_load_i (load()), which the driver gives after setting
// them and before the next clock edge or output read. The two verilated configurations, the
// default chip (rtl/params.json DEFAULT_TILES tiles) and the RTL build's (NUM_TILES), share one
// driver, ChipSim<V>, behind the Impl interface; host/rtl/CMakeLists.txt names their classes.
#include "rtl_device.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include TESSERA_RTL_CHIP_DEFAULT_H
#include TESSERA_RTL_CHIP_FULL_H
#include "tessera/chip_params.h"
#include "verilated.h"
#include "verilated_save.h"
// Traced twins of the chips, used only when a VCD is requested (rtl/CMakeLists.txt): the
// DEFAULT_TILES chip's with TESSERA_RTL_TRACE, the NUM_TILES chip's with TESSERA_RTL_TRACE_FULL.
#if TESSERA_RTL_TRACE_DEFAULT
#include TESSERA_RTL_CHIP_DEFAULT_T_H
#endif
#if TESSERA_RTL_TRACE_FULL
#include TESSERA_RTL_CHIP_FULL_T_H
#endif
#if TESSERA_RTL_TRACE
#include "verilated_vcd_c.h"
#endif

namespace tessera {

namespace {

constexpr unsigned kContexts = TESS_NUM_CONTEXTS;
constexpr unsigned kDefaultTiles = TESS_DEFAULT_TILES;
constexpr uint32_t kControlSpan = 0x1000;  // ctl_addr_i is 12 bits; offsets beyond it do not exist

// A verilated model's state in memory (the chips are verilated with --savable): runUntil saves
// the chip before it looks past a cycle limit and restores it if it must not have gone there.
class StateSave final : public VerilatedSerialize {
 public:
  ~StateSave() override { flush(); }
  void flush() override {
    bytes.insert(bytes.end(), m_bufp, m_cp);
    m_cp = m_bufp;
  }
  std::vector<uint8_t> bytes;
};

class StateRestore final : public VerilatedDeserialize {
 public:
  explicit StateRestore(const std::vector<uint8_t>& bytes) : bytes_(bytes) { m_endp = m_bufp; }

 protected:
  // As VerilatedRestore::fill: keep the unread bytes, append more, pad the end with zeros.
  void fill() override {
    const size_t keep = static_cast<size_t>(m_endp - m_cp);
    std::memmove(m_bufp, m_cp, keep);
    m_cp = m_bufp;
    m_endp = m_bufp + keep;
    const size_t n = std::min(bufferSize() - keep, bytes_.size() - next_);
    std::memcpy(m_endp, bytes_.data() + next_, n);
    next_ += n;
    m_endp += n;
    std::memset(m_endp, 0, static_cast<size_t>(m_bufp + bufferSize() - m_endp));
  }

 private:
  const std::vector<uint8_t>& bytes_;
  size_t next_ = 0;
};

#if TESSERA_RTL_TRACE
// The VCD file behind VerilatedVcdC. Verilator's own file reports a failed write through
// VL_FATAL_MT, whose flush callbacks re-lock the trace mutex the writer already holds (a
// deadlock on a full disk or /dev/full). This one never fails inside Verilator: it keeps the
// first error and drops later data, and ChipSim turns the error into a tessera::Error.
class CheckedVcdFile final : public VerilatedVcdFile {
 public:
  bool open(const std::string& name) override {
    fd_ = ::open(name.c_str(), O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0666);
    if (fd_ < 0) error_ = errno;
    return fd_ >= 0;
  }
  void close() override {
    if (fd_ >= 0 && ::close(fd_) != 0 && error_ == 0) error_ = errno;
    fd_ = -1;
  }
  ssize_t write(const char* bufp, ssize_t len) override {
    for (ssize_t done = 0; done < len && error_ == 0;) {
      const ssize_t n = ::write(fd_, bufp + done, static_cast<size_t>(len - done));
      if (n > 0) {
        done += n;
      } else if (n < 0 && errno != EINTR) {
        error_ = errno;
      } else if (n == 0) {
        error_ = EIO;
      }
    }
    return len;
  }
  /// errno of the first failed open, write or close; 0 if none.
  int error() const { return error_; }

 private:
  int fd_ = -1;
  int error_ = 0;
};
#endif

// Bits [lsb, lsb+width) (width <= 64) of a verilated port: an integer for ports up to 64 bits,
// a VlWide (32-bit words) for wider ones.
template <typename S>
uint64_t field(const S& sig, unsigned lsb, unsigned width) {
  const uint64_t mask = width >= 64 ? ~uint64_t{0} : ((uint64_t{1} << width) - 1);
  if constexpr (std::is_integral_v<S>) {
    return (static_cast<uint64_t>(sig) >> lsb) & mask;
  } else {
    constexpr unsigned kWords = sizeof(S) / sizeof(EData);
    unsigned __int128 v = 0;
    const unsigned w = lsb / 32;
    for (unsigned i = 0; i < 3 && w + i < kWords; ++i) {
      v |= static_cast<unsigned __int128>(sig[w + i]) << (32 * i);
    }
    return static_cast<uint64_t>(v >> (lsb % 32)) & mask;
  }
}

}  // namespace

// What RtlDevice needs from a verilated chip configuration.
struct RtlDevice::Impl {
  virtual ~Impl() = default;
  virtual unsigned tiles() const = 0;
  virtual void reset() = 0;
  virtual uint32_t readControl(uint32_t offset) = 0;
  virtual void writeControl(uint32_t offset, uint32_t value) = 0;
  // One host-port access; returns false if the chip flagged an error.
  virtual bool hostAccess(unsigned tile, uint32_t addr, bool write, uint32_t be, uint32_t wdata,
                          uint32_t& rdata) = 0;
  // Clock with run_i = 1 until the chip leaves RUNNING or reaches the cycle limit.
  virtual void runUntil(uint64_t limit) = 0;
  virtual uint64_t cycle() const = 0;
  virtual uint64_t tileCycles(unsigned tile) const = 0;
  virtual uint64_t instret(unsigned tile, unsigned ctx) const = 0;

  std::vector<std::string> consoles;
  std::function<void(const RetireRecord&)> sink;
};

namespace {

// kTraced: V was verilated with --trace, and the run writes options.traceVcd.
template <typename V, bool kTraced>
class ChipSim final : public RtlDevice::Impl {
 public:
  ChipSim(unsigned tiles, [[maybe_unused]] const DeviceOptions& options) : tiles_(tiles) {
    consoles.resize(tiles);
    if constexpr (kTraced) context_.traceEverOn(true);
    top_ = std::make_unique<V>(&context_, "tess_chip");
#if TESSERA_RTL_TRACE
    if constexpr (kTraced) {
      vcdPath_ = options.traceVcd;
      vcdFile_ = std::make_unique<CheckedVcdFile>();
      vcd_ = std::make_unique<VerilatedVcdC>(vcdFile_.get());
      top_->trace(vcd_.get(), 99);
      vcd_->open(options.traceVcd.c_str());
      if (!vcd_->isOpen()) {
        throw Error(fmt::format("rtl: cannot open VCD file \"{}\": {}", options.traceVcd,
                                std::strerror(vcdFile_->error())));
      }
    }
#endif
    top_->clk_i = 0;
    top_->rst_ni = 1;
    top_->run_i = 0;
    top_->port_load_i = 0;
    top_->host_req_i = 0;
    top_->ctl_we_i = 0;
    top_->eval();
    load();
  }

  ~ChipSim() override {
#if TESSERA_RTL_TRACE
    if (vcd_) {
      const bool failedBefore = vcdFile_->error() != 0;
      vcd_->close();
      // A destructor cannot throw: a failure of the last flush is at least said.
      if (!failedBefore && vcdFile_->error() != 0)
        std::fprintf(stderr,
                     "rtl: writing VCD file \"%s\" failed: %s; the waveform is incomplete\n",
                     vcdPath_.c_str(), std::strerror(vcdFile_->error()));
    }
#endif
    top_->final();
  }

  ChipSim(const ChipSim&) = delete;
  ChipSim& operator=(const ChipSim&) = delete;

  unsigned tiles() const override {
    return tiles_;
  }

  void reset() override {
    idle();
    load();
    top_->rst_ni = 0;
    top_->eval();
    tick(false);
    tick(false);
    top_->rst_ni = 1;
    tick(false);
    for (auto& c : consoles) c.clear();
  }

  uint32_t readControl(uint32_t offset) override {
    if (offset >= kControlSpan) throw refused(false, offset, 0);
    top_->ctl_we_i = 0;
    top_->ctl_addr_i = offset;
    load();
    if (top_->ctl_err_o) throw refused(false, offset, 0);
    return top_->ctl_rdata_o;
  }

  void writeControl(uint32_t offset, uint32_t value) override {
    if (offset >= kControlSpan) throw refused(true, offset, value);
    idle();
    top_->ctl_we_i = 1;
    top_->ctl_addr_i = offset;
    top_->ctl_wdata_i = value;
    load();
    if (top_->ctl_err_o) {
      top_->ctl_we_i = 0;
      load();
      throw refused(true, offset, value);
    }
    tick(false);
    top_->ctl_we_i = 0;
    load();
    if (offset == TESS_CR_CTRL && (value & 1u)) {
      tick(false);  // the soft reset acts in this cycle
      for (auto& c : consoles) c.clear();
    }
  }

  bool hostAccess(unsigned tile, uint32_t addr, bool write, uint32_t be, uint32_t wdata,
                  uint32_t& rdata) override {
    idle();
    top_->host_req_i = 1;
    top_->host_we_i = write;
    top_->host_tile_i = tile;
    top_->host_addr_i = addr;
    top_->host_be_i = be;
    top_->host_wdata_i = wdata;
    load();
    tick(false);  // read data and the error flag are registered at this edge
    top_->host_req_i = 0;
    top_->host_we_i = 0;
    load();
    rdata = top_->host_rdata_o;
    return !top_->host_err_o;
  }

  void runUntil(uint64_t limit) override {
    idle();
    load();
    clockUntil(limit, true);
    // The chip finds a halt or error two cycles after it, and a sync stop due at the limit one
    // cycle after it (run_i is registered): paused at the limit, it may not yet know that it
    // stops with a count at or below the limit, which the model reports at the limit
    // (docs/tile.md, "Stopping at a cycle limit"). So it looks ahead: two more cycles on a saved
    // state, unobserved; if the chip then stops with a count <= limit, the same cycles are run
    // again from the saved state, observed (the run is deterministic); else the chip goes back
    // to the pause.
    if (top_->state_o == TESS_ST_RUNNING && !top_->stopping_o && top_->cycle_o == limit &&
        limit <= ~uint64_t{0} - 2) {
      StateSave saved;
      saved << *top_;
      saved.flush();
      clockUntil(limit + 2, false);
      const bool stopsInside = top_->state_o != TESS_ST_RUNNING && top_->cycle_o <= limit;
      StateRestore restore(saved.bytes);
      restore >> *top_;
      if (stopsInside) clockUntil(limit + 2, true);
    }
    top_->run_i = 0;
    top_->eval();
    checkVcd();
  }

 private:
  // Clock with run_i = 1 until the chip leaves RUNNING or its count reaches `limit` (observe:
  // sample the console and retirement outputs and dump the waveform).
  void clockUntil(uint64_t limit, bool observe) {
    // The chip's cycle count stops at e+1 / max(h)+1 when a halt or error is found two cycles
    // after it; the cycles that drain the pipelines then do not count (stopping_o), so the loop
    // may pass the limit only while draining.
    // run_i is registered (docs/chip.md, "Run input"): the value at an edge decides whether the
    // cycle after it advances, so it is set one cycle ahead from the count now. The first cycle
    // holds (the register is still 0), and a halt or error found in the cycle that reaches
    // limit - 1 makes one draining cycle hold; neither is counted.
    bool advancing = false;  // run_i was 1 at the last edge
    while (top_->state_o == TESS_ST_RUNNING && (top_->stopping_o || top_->cycle_o < limit)) {
      const uint64_t next = top_->cycle_o + (advancing ? 1 : 0);
      top_->run_i = top_->stopping_o || next < limit;
      tick(observe, observe);
      advancing = top_->run_i != 0;
    }
    // Here either the chip left RUNNING (it does not advance whatever run_i was) or the last
    // edge took run_i = 0 (the count only reaches the limit one step at a time).
  }

 public:
  uint64_t cycle() const override {
    return top_->cycle_o;
  }

  uint64_t tileCycles(unsigned tile) const override {
    return field(top_->tile_cycle_o, 64 * tile, 64);
  }

  uint64_t instret(unsigned tile, unsigned ctx) const override {
    return field(top_->instret_o, 64 * (kContexts * tile + ctx), 64);
  }

 private:
  // Sets the ports to idle; load() hands them to the chip.
  void idle() {
    top_->run_i = 0;
    top_->host_req_i = 0;
    top_->ctl_we_i = 0;
  }

  // The chip takes the host and control ports as they are now (a rising edge of port_load_i)
  // and its outputs settle. The falling edge is evaluated too (Verilator finds an edge between
  // two evaluations); nothing acts on it, so it costs little.
  void load() {
    top_->port_load_i = 1;
    top_->eval();
    top_->port_load_i = 0;
    top_->eval();
  }

  void dump() {
#if TESSERA_RTL_TRACE
    if constexpr (kTraced) vcd_->dump(context_.time());
#endif
    context_.timeInc(1);
  }

  // The waveform so far reached the file (called at the end of every run).
  void checkVcd() {
#if TESSERA_RTL_TRACE
    if (!vcd_) return;
    vcd_->flush();
    if (vcdFile_->error() != 0) {
      throw Error(fmt::format("rtl: writing VCD file \"{}\" failed: {}", vcdPath_,
                              std::strerror(vcdFile_->error())));
    }
#endif
  }

  // What docs/chip.md says the host library reports for a refused control access.
  Error refused(bool write, uint32_t offset, uint32_t value) {
    if (write && offset == TESS_CR_TILE_SEL)
      return Error(
          fmt::format("rtl: TILE_SEL {} is not a tile (the chip has {} tiles)", value, tiles_));
    if (write && offset == TESS_CR_T_ENABLE) {
      top_->ctl_we_i = 0;
      top_->ctl_addr_i = TESS_CR_TILE_SEL;
      load();
      return Error(
          fmt::format("rtl: T_ENABLE of tile {} can only change after a reset, before the run",
                      top_->ctl_rdata_o));
    }
    return Error(fmt::format("rtl: no {} control register at offset 0x{:03x}",
                             write ? "writable" : "readable", offset));
  }

  // One clock cycle. Outputs that describe this cycle (console, retirement) are sampled after
  // the inputs settle and before the rising edge that commits them.
  void tick(bool sample, bool trace = true) {
    top_->clk_i = 0;
    top_->eval();
    if (sample) sampleCycle();
    if (trace) dump();
    top_->clk_i = 1;
    top_->eval();
    if (trace) dump();
  }

  void sampleCycle() {
    const uint64_t consoleValid = field(top_->console_valid_o, 0, tiles_);
    if (consoleValid != 0) {
      for (unsigned t = 0; t < tiles_; ++t) {
        if ((consoleValid >> t) & 1u) {
          consoles[t].push_back(static_cast<char>(field(top_->console_byte_o, 8 * t, 8)));
        }
      }
    }
    if (!sink) return;
    const uint64_t retireValid = field(top_->retire_valid_o, 0, tiles_);
    if (retireValid == 0) return;
    for (unsigned t = 0; t < tiles_; ++t) {
      if (!((retireValid >> t) & 1u)) continue;
      RetireRecord r;
      r.cycle = field(top_->retire_cycle_o, 64 * t, 64);
      r.tile = t;
      r.context = static_cast<unsigned>(field(top_->retire_ctx_o, 3 * t, 3));
      r.pc = static_cast<uint32_t>(field(top_->retire_pc_o, 32 * t, 32));
      r.insn = static_cast<uint32_t>(field(top_->retire_insn_o, 32 * t, 32));
      r.dest = static_cast<DestKind>(field(top_->retire_dest_o, 2 * t, 2));
      r.rd = static_cast<unsigned>(field(top_->retire_rd_o, 5 * t, 5));
      r.value = static_cast<uint32_t>(field(top_->retire_value_o, 32 * t, 32));
      sink(r);
    }
  }

  unsigned tiles_;
  VerilatedContext context_;
  std::unique_ptr<V> top_;
#if TESSERA_RTL_TRACE
  std::string vcdPath_;
  std::unique_ptr<CheckedVcdFile> vcdFile_;  // outlives vcd_ (declared first, destroyed last)
  std::unique_ptr<VerilatedVcdC> vcd_;
#endif
};

// The chip of `tiles` tiles: the speed build, or its traced twin when a VCD is requested
// (VTraced void: this build has none; `option` is the CMake option that verilates it).
template <typename V, typename VTraced>
std::unique_ptr<RtlDevice::Impl> makeChip(unsigned tiles, const DeviceOptions& options,
                                          const char* option) {
  if (options.traceVcd.empty()) return std::make_unique<ChipSim<V, false>>(tiles, options);
  if constexpr (std::is_void_v<VTraced>) {
    throw Error(fmt::format(
        "rtl: cannot write \"{}\": this build has no traced {}-tile chip (configure with "
        "-D{}=ON; docs/benchmarks.md)",
        options.traceVcd, tiles, option));
  } else {
    return std::make_unique<ChipSim<VTraced, true>>(tiles, options);
  }
}

}  // namespace

RtlDevice::RtlDevice(const DeviceOptions& options) {
  const unsigned tiles = options.tiles == 0 ? kDefaultTiles : options.tiles;
  if (!options.preset.empty()) {
    throw Error(fmt::format("rtl: preset \"{}\" is not available on the rtl device (model only)",
                            options.preset));
  }
  if (options.noFpu && TESS_HAS_FPU != 0) {
    throw Error(
        "rtl: the chip was verilated with the FPU; the integer-only configuration (no FPU) runs "
        "on the model, on Icarus (rtl/tests/icarus) and on the iCE40 board (docs/bringup.md)");
  }
  if (options.noMulDiv && TESS_HAS_MULDIV != 0) {
    throw Error(
        "rtl: the chip was verilated with the M extension; the configuration without it runs on "
        "the model, on Icarus (rtl/tests/icarus) and on the iCE40 board (docs/bringup.md)");
  }
  if (options.matrixUnit && *options.matrixUnit != (TESS_MATRIX_UNIT != 0)) {
    throw Error(fmt::format(
        "rtl: the chip was verilated {} the matrix unit (rtl/params.json MATRIX_UNIT = {}); a chip "
        "{} it runs on the model (--matrix-unit {})",
        TESS_MATRIX_UNIT != 0 ? "with" : "without", TESS_MATRIX_UNIT,
        *options.matrixUnit ? "with" : "without", *options.matrixUnit ? "on" : "off"));
  }
  if (options.contexts != 0 && options.contexts != kContexts) {
    throw Error(fmt::format(
        "rtl: the chip was verilated with {} contexts per tile; {} requested (other counts run on "
        "the model, and the iCE40 board's on Icarus, rtl/tests/icarus)",
        kContexts, options.contexts));
  }
  if (options.counterBits != 0 && options.counterBits != TESS_COUNTER_BITS) {
    throw Error(fmt::format(
        "rtl: the chip was verilated with {}-bit counters; {}-bit counters run on the model, on "
        "Icarus (rtl/tests/icarus) and on the iCE40 board (docs/bringup.md)",
        TESS_COUNTER_BITS, options.counterBits));
  }
  // The sizes the two chips were verilated with (rtl/CMakeLists.txt).
  memBytes_ = tiles == TESS_NUM_TILES ? TESS_FULL_CHIP_TILE_MEM_BYTES : TESS_TILE_MEM_BYTES;
  if (options.tileMemBytes != 0 && options.tileMemBytes != memBytes_) {
    throw Error(fmt::format(
        "rtl: the {}-tile chip was verilated with {} bytes per tile; {} requested (the {}-tile "
        "chip has {} KiB tiles, the {}-tile chip {} KiB; other sizes run on the model)",
        tiles, memBytes_, options.tileMemBytes, TESS_DEFAULT_TILES, TESS_TILE_MEM_BYTES / 1024,
        TESS_NUM_TILES, TESS_FULL_CHIP_TILE_MEM_BYTES / 1024));
  }
  using ChipDefault = TESSERA_RTL_CHIP_DEFAULT;
  using ChipFull = TESSERA_RTL_CHIP_FULL;
#if TESSERA_RTL_TRACE_DEFAULT
  using TracedDefault = TESSERA_RTL_CHIP_DEFAULT_T;
#else
  using TracedDefault = void;
#endif
#if TESSERA_RTL_TRACE_FULL
  using TracedFull = TESSERA_RTL_CHIP_FULL_T;
#else
  using TracedFull = void;
#endif
  if (tiles == TESS_DEFAULT_TILES) {
    impl_ = makeChip<ChipDefault, TracedDefault>(tiles, options, "TESSERA_RTL_TRACE");
  } else if (tiles == TESS_NUM_TILES) {
    impl_ = makeChip<ChipFull, TracedFull>(tiles, options, "TESSERA_RTL_TRACE_FULL");
  } else {
    throw Error(fmt::format(
        "rtl: no verilated chip with {} tiles; the rtl device has {} tiles (the default) or {}",
        tiles, TESS_DEFAULT_TILES, TESS_NUM_TILES));
  }
  impl_->reset();
}

RtlDevice::~RtlDevice() = default;

ChipInfo RtlDevice::info() const {
  ChipInfo info;  // the chip verilated with rtl/params.json's parameters (ChipShape's defaults)
  info.tiles = impl_->tiles();
  info.tileMemBytes = memBytes_;
  info.contexts = kContexts;
  info.backend = "rtl";
  return info;
}

void RtlDevice::reset() {
  impl_->reset();
}

namespace {

void checkAccess(const char* what, unsigned tiles, uint32_t memBytes, unsigned tile, uint32_t addr,
                 size_t size) {
  if (tile >= tiles) {
    throw Error(fmt::format("rtl: {} of tile {}: the chip has tiles 0..{}", what, tile, tiles - 1));
  }
  if (addr > memBytes || size > memBytes - addr) {
    throw Error(
        fmt::format("rtl: {} of {} bytes at 0x{:08x} on tile {} is outside its {}-byte memory",
                    what, size, addr, tile, memBytes));
  }
}

}  // namespace

void RtlDevice::writeMemory(unsigned tile, uint32_t addr, std::span<const uint8_t> data) {
  checkAccess("write", impl_->tiles(), memBytes_, tile, addr, data.size());
  size_t i = 0;
  while (i < data.size()) {
    const uint32_t byteAddr = addr + static_cast<uint32_t>(i);
    uint32_t wdata = 0;
    uint32_t be = 0;
    for (unsigned lane = byteAddr & 3u; lane < 4 && i < data.size(); ++lane, ++i) {
      wdata |= static_cast<uint32_t>(data[i]) << (8 * lane);
      be |= 1u << lane;
    }
    uint32_t unused = 0;
    if (!impl_->hostAccess(tile, byteAddr & ~3u, true, be, wdata, unused)) {
      throw Error(
          fmt::format("rtl: the host port refused a write at 0x{:08x} on tile {}", byteAddr, tile));
    }
  }
}

void RtlDevice::readMemory(unsigned tile, uint32_t addr, std::span<uint8_t> data) {
  checkAccess("read", impl_->tiles(), memBytes_, tile, addr, data.size());
  size_t i = 0;
  while (i < data.size()) {
    const uint32_t byteAddr = addr + static_cast<uint32_t>(i);
    uint32_t rdata = 0;
    if (!impl_->hostAccess(tile, byteAddr & ~3u, false, 0, 0, rdata)) {
      throw Error(
          fmt::format("rtl: the host port refused a read at 0x{:08x} on tile {}", byteAddr, tile));
    }
    for (unsigned lane = byteAddr & 3u; lane < 4 && i < data.size(); ++lane, ++i) {
      data[i] = static_cast<uint8_t>(rdata >> (8 * lane));
    }
  }
}

RunResult RtlDevice::run(uint64_t maxCycles) {
  Impl& d = *impl_;
  uint32_t status = d.readControl(TESS_CR_STATUS);
  const uint32_t state = status & 0xfu;
  if (state == TESS_ST_RESET) {
    d.writeControl(TESS_CR_CTRL, 2u);  // RUN
  } else if (state == TESS_ST_HOST_SYNC) {
    d.writeControl(TESS_CR_CTRL, 4u);  // RELEASE
  }
  if (state != TESS_ST_HALTED && state != TESS_ST_ERROR) {
    d.runUntil(d.cycle() + maxCycles);
    status = d.readControl(TESS_CR_STATUS);
  }

  RunResult r;
  r.cycles = d.cycle();
  switch (status & 0xfu) {
    case TESS_ST_HALTED: {
      r.reason = StopReason::Halted;
      const uint32_t sel = d.readControl(TESS_CR_TILE_SEL);
      d.writeControl(TESS_CR_TILE_SEL, 0);
      r.exitCode = d.readControl(TESS_CR_T_EXIT);
      d.writeControl(TESS_CR_TILE_SEL, sel);
      break;
    }
    case TESS_ST_ERROR:
      r.reason = StopReason::Trap;
      r.trap = TrapInfo{d.readControl(TESS_CR_ERR_TILE), d.readControl(TESS_CR_ERR_CONTEXT),
                        d.readControl(TESS_CR_ERR_PC), d.readControl(TESS_CR_ERR_CAUSE),
                        d.readControl(TESS_CR_ERR_VALUE)};
      break;
    case TESS_ST_HOST_SYNC:
      r.reason = (status & 0x10u) ? StopReason::HostSync : StopReason::SyncBreak;
      r.hostSyncId = status >> 16;
      break;
    default:
      r.reason = StopReason::MaxCycles;
      break;
  }
  return r;
}

std::string RtlDevice::console(unsigned tile) const {
  if (tile >= impl_->tiles()) {
    throw Error(
        fmt::format("rtl: console of tile {}: the chip has {} tiles", tile, impl_->tiles()));
  }
  return impl_->consoles[tile];
}

TileStats RtlDevice::stats(unsigned tile) const {
  Impl& d = *impl_;
  if (tile >= d.tiles()) {
    throw Error(fmt::format("rtl: stats of tile {}: the chip has {} tiles", tile, d.tiles()));
  }
  auto wide = [&d](uint32_t lo, uint32_t hi) {
    return d.readControl(lo) | (static_cast<uint64_t>(d.readControl(hi)) << 32);
  };
  const uint32_t sel = d.readControl(TESS_CR_TILE_SEL);
  d.writeControl(TESS_CR_TILE_SEL, tile);
  TileStats s;
  s.cycles = d.tileCycles(tile);
  for (unsigned c = 0; c < kContexts; ++c) s.contextInstructions[c] = d.instret(tile, c);
  s.instructions = wide(TESS_CR_T_INSTR_LO, TESS_CR_T_INSTR_HI);
  s.idleSlots = wide(TESS_CR_T_IDLE_LO, TESS_CR_T_IDLE_HI);
  s.syncWaitCycles = wide(TESS_CR_T_SYNCWAIT_LO, TESS_CR_T_SYNCWAIT_HI);
  s.exchangeCycles = wide(TESS_CR_T_EXCH_LO, TESS_CR_T_EXCH_HI);
  s.halted = (d.readControl(TESS_CR_T_STATE) & 1u) != 0;
  s.exitCode = d.readControl(TESS_CR_T_EXIT);
  d.writeControl(TESS_CR_TILE_SEL, sel);
  return s;
}

void RtlDevice::setRetireSink(std::function<void(const RetireRecord&)> sink) {
  impl_->sink = std::move(sink);
}

uint32_t RtlDevice::readControl(uint32_t offset) {
  return impl_->readControl(offset);
}

void RtlDevice::writeControl(uint32_t offset, uint32_t value) {
  impl_->writeControl(offset, value);
}

std::unique_ptr<Device> makeRtlDevice(const DeviceOptions& options) {
  return std::make_unique<RtlDevice>(options);
}

}  // namespace tessera

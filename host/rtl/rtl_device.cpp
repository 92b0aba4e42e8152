// RtlDevice: drives the verilated tess_tile through its ports (see the header comment of
// rtl/core/tess_tile.sv for what each port means and its timing).
#include "rtl_device.hpp"

#include <fmt/format.h>

#include <array>
#include <utility>

#include "Vtess_tile.h"
#include "tessera/chip_params.h"
#include "verilated.h"
#include "verilated_vcd_c.h"

namespace tessera {

namespace {

constexpr unsigned kContexts = TESS_NUM_CONTEXTS;
constexpr uint32_t kMemBytes = TESS_TILE_MEM_BYTES;  // the size the tile was verilated with

}  // namespace

struct RtlDevice::Impl {
  VerilatedContext context;
  std::unique_ptr<Vtess_tile> top;
  std::unique_ptr<VerilatedVcdC> vcd;
  std::string console;
  std::function<void(const RetireRecord&)> sink;
  bool halted = false;

  explicit Impl(const DeviceOptions& options) {
    if (!options.traceVcd.empty()) context.traceEverOn(true);
    top = std::make_unique<Vtess_tile>(&context, "tess_tile");
    if (!options.traceVcd.empty()) {
      vcd = std::make_unique<VerilatedVcdC>();
      top->trace(vcd.get(), 99);
      vcd->open(options.traceVcd.c_str());
      if (!vcd->isOpen()) {
        throw Error(fmt::format("rtl: cannot open VCD file \"{}\"", options.traceVcd));
      }
    }
    top->clk_i = 0;
    top->rst_ni = 1;
    top->run_i = 0;
    top->host_req_i = 0;
    top->eval();
  }

  ~Impl() {
    if (vcd) vcd->close();
    top->final();
  }

  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  void dump() {
    if (vcd) vcd->dump(context.time());
    context.timeInc(1);
  }

  // One clock cycle. Outputs that describe this cycle (console, retirement) are sampled after
  // the inputs settle and before the rising edge that commits them.
  void tick(bool sample) {
    top->clk_i = 0;
    top->eval();
    if (sample) sampleCycle();
    dump();
    top->clk_i = 1;
    top->eval();
    dump();
  }

  void sampleCycle() {
    if (top->console_valid_o) console.push_back(static_cast<char>(top->console_byte_o));
    if (sink && top->retire_valid_o) {
      RetireRecord r;
      r.cycle = top->retire_cycle_o;
      r.tile = 0;
      r.context = top->retire_ctx_o;
      r.pc = top->retire_pc_o;
      r.insn = top->retire_insn_o;
      r.dest = static_cast<DestKind>(top->retire_dest_o);
      r.rd = top->retire_rd_o;
      r.value = top->retire_value_o;
      sink(r);
    }
  }

  void reset() {
    top->run_i = 0;
    top->host_req_i = 0;
    top->rst_ni = 0;
    top->eval();
    tick(false);
    tick(false);
    top->rst_ni = 1;
    tick(false);
    console.clear();
    halted = false;
  }

  uint64_t instret(unsigned ctx) const {
    const uint64_t lo = top->instret_o[2 * ctx];
    const uint64_t hi = top->instret_o[2 * ctx + 1];
    return lo | (hi << 32);
  }

  RunResult result() const {
    RunResult r;
    r.cycles = top->cycle_o;
    if (!halted) {
      r.reason = StopReason::MaxCycles;
    } else if (top->trap_o) {
      r.reason = StopReason::Trap;
      r.trap = TrapInfo{0, top->trap_ctx_o, top->trap_pc_o, top->trap_cause_o, top->trap_value_o};
    } else {
      r.reason = StopReason::Halted;
      r.exitCode = top->exit_code_o;
    }
    return r;
  }
};

RtlDevice::RtlDevice(const DeviceOptions& options) {
  if (options.tiles != 1) {
    throw Error(fmt::format("rtl: the rtl device simulates a single tile; {} tiles requested",
                            options.tiles));
  }
  if (options.tileMemBytes != 0 && options.tileMemBytes != kMemBytes) {
    throw Error(fmt::format("rtl: the tile was verilated with {} bytes of memory; {} requested",
                            kMemBytes, options.tileMemBytes));
  }
  impl_ = std::make_unique<Impl>(options);
  impl_->reset();
}

RtlDevice::~RtlDevice() = default;

ChipInfo RtlDevice::info() const {
  return ChipInfo{1, kMemBytes, kContexts, "rtl"};
}

void RtlDevice::reset() { impl_->reset(); }

static void checkAccess(const char* what, unsigned tile, uint32_t addr, size_t size) {
  if (tile != 0) {
    throw Error(fmt::format("rtl: {} of tile {}: the rtl device has only tile 0", what, tile));
  }
  if (addr > kMemBytes || size > kMemBytes - addr) {
    throw Error(fmt::format(
        "rtl: {} of {} bytes at 0x{:08x} on tile {} is outside its {}-byte memory", what, size,
        addr, tile, kMemBytes));
  }
}

void RtlDevice::writeMemory(unsigned tile, uint32_t addr, std::span<const uint8_t> data) {
  checkAccess("write", tile, addr, data.size());
  Vtess_tile& top = *impl_->top;
  top.run_i = 0;
  size_t i = 0;
  while (i < data.size()) {
    const uint32_t byteAddr = addr + static_cast<uint32_t>(i);
    const uint32_t word = byteAddr >> 2;
    uint32_t wdata = 0;
    uint32_t be = 0;
    for (unsigned lane = byteAddr & 3u; lane < 4 && i < data.size(); ++lane, ++i) {
      wdata |= static_cast<uint32_t>(data[i]) << (8 * lane);
      be |= 1u << lane;
    }
    top.host_req_i = 1;
    top.host_we_i = 1;
    top.host_be_i = be;
    top.host_addr_i = word;
    top.host_wdata_i = wdata;
    impl_->tick(false);
  }
  top.host_req_i = 0;
  top.host_we_i = 0;
}

void RtlDevice::readMemory(unsigned tile, uint32_t addr, std::span<uint8_t> data) {
  checkAccess("read", tile, addr, data.size());
  Vtess_tile& top = *impl_->top;
  top.run_i = 0;
  size_t i = 0;
  while (i < data.size()) {
    const uint32_t byteAddr = addr + static_cast<uint32_t>(i);
    top.host_req_i = 1;
    top.host_we_i = 0;
    top.host_be_i = 0;
    top.host_addr_i = byteAddr >> 2;
    impl_->tick(false);  // read data is registered at this edge
    const uint32_t rdata = top.host_rdata_o;
    for (unsigned lane = byteAddr & 3u; lane < 4 && i < data.size(); ++lane, ++i) {
      data[i] = static_cast<uint8_t>(rdata >> (8 * lane));
    }
  }
  top.host_req_i = 0;
}

RunResult RtlDevice::run(uint64_t maxCycles) {
  Impl& d = *impl_;
  Vtess_tile& top = *d.top;
  if (d.halted) return d.result();
  const uint64_t limit = top.cycle_o + maxCycles;
  top.host_req_i = 0;
  top.run_i = 1;
  // The tile's cycle count stops at h + 1 once an instruction issued at h halts it; the few
  // cycles that drain older instructions after that do not count, so the loop may pass the limit
  // only while draining. A halt by an instruction issued in the last two cycles before the limit
  // is found in EX after the limit, i.e. by the next run().
  while (!top.halted_o && (top.halting_o || top.cycle_o < limit)) {
    d.tick(true);
  }
  top.run_i = 0;
  top.eval();
  d.halted = top.halted_o;
  return d.result();
}

std::string RtlDevice::console(unsigned tile) const {
  if (tile != 0) throw Error(fmt::format("rtl: console of tile {}: only tile 0 exists", tile));
  return impl_->console;
}

TileStats RtlDevice::stats(unsigned tile) const {
  if (tile != 0) throw Error(fmt::format("rtl: stats of tile {}: only tile 0 exists", tile));
  TileStats s;
  s.cycles = impl_->top->cycle_o;
  for (unsigned c = 0; c < kContexts; ++c) {
    s.contextInstructions[c] = impl_->instret(c);
    s.instructions += s.contextInstructions[c];
  }
  s.idleSlots = impl_->top->idle_o;
  return s;
}

void RtlDevice::setRetireSink(std::function<void(const RetireRecord&)> sink) {
  impl_->sink = std::move(sink);
}

std::unique_ptr<Device> makeRtlDevice(const DeviceOptions& options) {
  return std::make_unique<RtlDevice>(options);
}

}  // namespace tessera

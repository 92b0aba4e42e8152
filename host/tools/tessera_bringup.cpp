// tessera-bringup: the self-test to run first on a new board (docs/bringup.md), and on any other
// backend: link check, memory march of every tile, exchange all-pairs, sync, integer, M and FPU
// smoke tests, cycle-counter sanity (and, with --counter-wrap, the tiles' counters past 2^32
// cycles). Prints PASS or FAIL per step, with a diagnosis hint on a failure; exits 0 when every
// step passed, 1 when one failed, 2 on a usage error.
// The device programs are the project's self-checking tile programs (sw/tests, built with the
// host tools): each exits 0 and prints "<name> ok" when every check it makes passed.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <array>
#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bad_frame_probe.hpp"
#include "cli_numbers.hpp"
#include "program_loader.hpp"
#include "tessera/chip_params.h"
#include "tessera/device.hpp"
#include "tessera/error.hpp"

namespace {

using tessera::Device;
using tessera::Error;
using tessera::RunResult;
using tessera::StopReason;

constexpr uint64_t kMaxCycles = 50'000'000;

struct Options {
  std::string device;
  unsigned tiles = 0;
  std::string programs = TESSERA_SW_BIN_DIR;
  uint32_t marchBytes = 0;  // 0 = the whole tile memory
  bool noFpu = false;
  bool noMulDiv = false;
  bool counterWrap = false;  // run the tiles' counters past 2^32 cycles
  std::string preset;        // model: "ice40" = the iCE40 board's configuration
};

/// What a step found: pass, or fail with what and a hint where to look.
struct Outcome {
  bool pass = true;
  std::string detail;
  std::string hint;
};

Outcome fail(std::string detail, std::string hint) {
  return {false, std::move(detail), std::move(hint)};
}

// ---------------------------------------------------------------------------------------------
// Steps
// ---------------------------------------------------------------------------------------------
// Every tile but 0 disabled: the single-tile runs of the steps below (as tessera-run does
// without --all-tiles).
void onlyTileZero(Device& dev) {
  const unsigned tiles = dev.info().tiles;
  for (unsigned t = 1; t < tiles; ++t) dev.setTileEnabled(t, false);
}

class Bringup {
 public:
  explicit Bringup(Options o) : opt_(std::move(o)) {}

  std::unique_ptr<Device>& open() {
    dev_.reset();
    tessera::DeviceOptions d;
    d.tiles = opt_.tiles;
    d.preset = opt_.preset;
    dev_ = tessera::openDevice(opt_.device, d);
    // The programs are linked for the default tile memory; a tile of the iCE40 board's size
    // (4 KiB) runs the *_ice40.elf builds of the integer programs (sw/tests/isa/CMakeLists.txt)
    // and has no sync program small enough.
    const uint32_t mem = dev_->info().tileMemBytes;
    small_ = mem < TESS_TILE_MEM_BYTES && mem == TESS_ICE40_TILE_MEM_BYTES;
    suffix_ = small_ ? "_ice40" : "";
    return dev_;
  }

  Outcome link() {
    Device& dev = *open();
    const tessera::ChipInfo info = dev.info();
    if (info.tiles == 0 || info.tileMemBytes < 4096 ||
        (info.tileMemBytes & (info.tileMemBytes - 1)))
      return fail(fmt::format("implausible INFO: {} tiles, {} bytes per tile", info.tiles,
                              info.tileMemBytes),
                  "the device answers but its parameters are wrong: check the board top's "
                  "NumTiles/MemBytes and the bitstream that was loaded");
    // The programs are built for the contexts of their configuration (the iCE40 board's have
    // its NUM_CONTEXTS, the others the default's).
    const unsigned contexts = small_ ? TESS_ICE40_NUM_CONTEXTS : TESS_NUM_CONTEXTS;
    if (info.contexts != contexts)
      return fail(fmt::format("{} contexts, expected {}", info.contexts, contexts),
                  "host and device were built from different rtl/params.json");
    const uint32_t id = dev.readControl(TESS_CR_ID);
    if (id != TESS_CHIP_ID)
      return fail(fmt::format("ID register reads 0x{:08x}, expected 0x{:08x}", id, TESS_CHIP_ID),
                  "the control-register path of the bridge or chip is broken, or another design "
                  "is loaded");
    if (dev.readControl(TESS_CR_TILES) != info.tiles ||
        dev.readControl(TESS_CR_MEM_BYTES) != info.tileMemBytes ||
        dev.readControl(TESS_CR_CONTEXTS) != info.contexts)
      return fail("TILES / MEM_BYTES / CONTEXTS registers disagree with INFO",
                  "the bridge reports parameters of another build than the chip's");
    // Echo: a pattern through MEM_WRITE / MEM_READ longer than one frame of the device (an
    // in-process device has no frames: 3 KiB).
    size_t echoBytes = info.maxPayload ? 2 * size_t{info.maxPayload} + 3 : 3 * 1024 + 3;
    echoBytes = std::min<size_t>(echoBytes, info.tileMemBytes - 0x10);
    std::vector<uint8_t> out(echoBytes), back(echoBytes);
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<uint8_t>(i * 37 + 11);
    dev.reset();
    dev.writeMemory(0, 0x5, out);
    dev.readMemory(0, 0x5, back);
    for (size_t i = 0; i < out.size(); ++i)
      if (back[i] != out[i])
        return fail(fmt::format("echo: byte {} of {} at tile 0 address 0x{:x} reads 0x{:02x}, "
                                "wrote 0x{:02x}",
                                i, echoBytes, 0x5 + i, back[i], out[i]),
                    "bytes change on the way: baud rate mismatch or a noisy line (serial), or "
                    "the host port's byte enables");
    std::string detail = fmt::format("{}, {} tiles x {} bytes, ID 0x{:08x}, echo {} bytes",
                                     info.backend, info.tiles, info.tileMemBytes, id, echoBytes);

    if (opt_.device.rfind("serial:", 0) != 0)
      return {true, detail + "; CRC injection: only on serial:", ""};
    const bool board = info.backend == "link:board";
    const uint32_t badBefore = board ? dev.readControl(TESS_CR_LINK_BAD_FRAMES) : 0;
    dev_.reset();  // the raw line below needs the port to itself
    const tessera::link::BadFrameReply reply =
        tessera::link::sendBadCrcFrame(opt_.device, std::chrono::milliseconds(3000));
    if (reply.notRejected)
      return fail(fmt::format("a frame with a bad CRC was answered with status {}", reply.status),
                  "the device acts on frames without checking their CRC");
    detail += reply.answered ? "; corrupted frame rejected (BadCrc)" : "; corrupted frame dropped";
    Device& again = *open();
    std::array<uint8_t, 4> word{};
    again.readMemory(0, 0, word);
    if (word == tessera::link::kBadFrameWord || word == tessera::link::kBadFrameFlippedWord)
      return fail("the corrupted MEM_WRITE was executed", "the bridge acts before its CRC check");
    if (board) {
      const uint32_t badAfter = again.readControl(TESS_CR_LINK_BAD_FRAMES);
      if (badAfter != badBefore + 1)
        return fail(
            fmt::format("bad-frame counter went from {} to {}, expected +1", badBefore, badAfter),
            "the bridge's frame checker miscounts: noise on the line adds frames");
      detail += fmt::format(" and counted ({} bad frames)", badAfter);
    }
    return {true, detail, ""};
  }

  Outcome memory() {
    Device& dev = *dev_;
    const tessera::ChipInfo info = dev.info();
    const uint32_t bytes =
        opt_.marchBytes ? std::min(opt_.marchBytes, info.tileMemBytes) & ~3u : info.tileMemBytes;
    constexpr uint32_t kChunk = 16384;
    dev.reset();
    auto pattern = [](unsigned tile, uint32_t addr) {
      uint32_t x = addr * 0x9E3779B1u ^ (tile + 1) * 0x85EBCA77u;
      return x ^ (x >> 15);
    };
    auto fill = [&](unsigned t, uint32_t from, uint32_t n, bool inverted) {
      std::vector<uint8_t> buf(n);
      for (uint32_t i = 0; i < n; i += 4) {
        const uint32_t w = pattern(t, from + i) ^ (inverted ? ~0u : 0u);
        for (int k = 0; k < 4; ++k) buf[i + k] = static_cast<uint8_t>(w >> (8 * k));
      }
      return buf;
    };
    std::string bad;
    auto check = [&](unsigned t, uint32_t from, uint32_t n, bool inverted) {
      std::vector<uint8_t> got(n);
      dev.readMemory(t, from, got);
      const auto want = fill(t, from, n, inverted);
      for (uint32_t i = 0; i < n; i += 4) {
        if (std::equal(want.begin() + i, want.begin() + i + 4, got.begin() + i)) continue;
        auto w = [&](const std::vector<uint8_t>& v) {
          return v[i] | v[i + 1] << 8 | v[i + 2] << 16 | static_cast<uint32_t>(v[i + 3]) << 24;
        };
        bad =
            fmt::format("tile {} address 0x{:05x}: read 0x{:08x}, expected 0x{:08x} (xor 0x{:08x})",
                        t, from + i, w(got), w(want), w(got) ^ w(want));
        return false;
      }
      return true;
    };
    const char* hint =
        "one address: a stuck or coupled SRAM bit; a power-of-two distance between the bad "
        "address and the one whose data it holds: an address line (host port or memory map); "
        "every tile alike: the bridge or host port, one tile only: that tile's memory";
    for (unsigned t = 0; t < info.tiles; ++t) {
      // March: up (w p), up (r p, w ~p), down (r ~p, w p), up (r p) -- per chunk.
      for (uint32_t a = 0; a < bytes; a += kChunk)
        dev.writeMemory(t, a, fill(t, a, std::min(kChunk, bytes - a), false));
      for (uint32_t a = 0; a < bytes; a += kChunk) {
        const uint32_t n = std::min(kChunk, bytes - a);
        if (!check(t, a, n, false)) return fail(bad, hint);
        dev.writeMemory(t, a, fill(t, a, n, true));
      }
      for (uint32_t end = bytes; end > 0;) {
        const uint32_t n = std::min(kChunk, end);
        end -= n;
        if (!check(t, end, n, true)) return fail(bad, hint);
        dev.writeMemory(t, end, fill(t, end, n, false));
      }
      for (uint32_t a = 0; a < bytes; a += kChunk)
        if (!check(t, a, std::min(kChunk, bytes - a), false)) return fail(bad, hint);
    }
    return {true, fmt::format("march over {} bytes of each of {} tiles", bytes, info.tiles), ""};
  }

  // Runs a self-checking program; empty string = it passed.
  std::string runProgram(const std::string& elf, bool allTiles, RunResult* result = nullptr) {
    Device& dev = *dev_;
    const std::string path = opt_.programs + "/" + elf;
    if (!std::filesystem::exists(path))
      throw Error("device program " + path + " not found (--programs)");
    dev.reset();
    if (allTiles) {
      tessera::loadProgramOnAllTiles(dev, path);
    } else {
      tessera::loadProgram(dev, path, 0);
      onlyTileZero(dev);
    }
    RunResult r;
    for (int i = 0; i < 1000; ++i) {
      r = dev.run(kMaxCycles);
      if (r.reason != StopReason::HostSync && r.reason != StopReason::SyncBreak) break;
    }
    if (result) *result = r;
    if (r.reason == StopReason::Trap) return elf + ": " + tessera::describeTrap(r.trap);
    if (r.reason == StopReason::MaxCycles)
      return fmt::format("{}: still running after {} cycles", elf, r.cycles);
    const unsigned tiles = allTiles ? dev.info().tiles : 1;
    for (unsigned t = 0; t < tiles; ++t) {
      const auto s = dev.stats(t);
      if (s.exitCode != 0)
        return fmt::format("{}: tile {} exited with {} (console: \"{}\")", elf, t, s.exitCode,
                           dev.console(t));
    }
    return {};
  }

  Outcome programs(const std::vector<std::string>& elfs, bool allTiles, const char* hint) {
    std::string done;
    for (const auto& elf : elfs) {
      RunResult r;
      const std::string err = runProgram(elf, allTiles, &r);
      if (!err.empty()) return fail(err, hint);
      done += fmt::format("{}{} ({} cycles)", done.empty() ? "" : ", ", elf, r.cycles);
    }
    return {true, done, ""};
  }

  Outcome exchange() {
    if (dev_->info().tiles < 2) return {true, "skipped: one tile, nothing to exchange", ""};
    return programs({"chip_all_to_all.elf"}, true,
                    "exit 40: a wrong word arrived (bus select or exchange latency); 41: a word "
                    "arrived early; 42: a tile received from itself; a trap: the exchange "
                    "engine's program or addresses");
  }

  Outcome sync() {
    if (small_) {
      return {
          true,
          fmt::format("skipped: no sync program fits {} bytes per tile", dev_->info().tileMemBytes),
          ""};
    }
    return programs({"chip_sync_timing.elf"}, true,
                    "exit 60..62: tiles resumed on different cycles or late: the sync "
                    "controller's release or SYNC_LATENCY differs from the host's build");
  }

  Outcome integer() {
    return programs({"isa_rv32i_alu" + suffix_ + ".elf", "isa_rv32i_branch" + suffix_ + ".elf",
                     "isa_rv32i_mem" + suffix_ + ".elf", "isa_reset_regs" + suffix_ + ".elf"},
                    false,
                    "the exit code is the number of the failed check in sw/tests/isa/<program>.S "
                    "(isa_reset_regs: registers not 0 after the reset before it); a trap at pc 0: "
                    "the program did not load");
  }

  Outcome muldiv() {
    if (opt_.noMulDiv) return {true, "skipped (--no-muldiv)", ""};
    if (!dev_->info().hasMulDiv) return {true, "skipped: tiles without M", ""};
    if (small_) return {false, "no M program built for 4 KiB", "use --no-muldiv on this board"};
    return programs({"isa_rv32m.elf"}, false,
                    "illegal instruction: the build has no M extension (use --no-muldiv); another "
                    "exit code: the failed check in sw/tests/isa/isa_rv32m.S");
  }

  Outcome fpu() {
    if (opt_.noFpu) return {true, "skipped (--no-fpu)", ""};
    if (!dev_->info().hasFpu) return {true, "skipped: integer-only tiles (no FPU)", ""};
    if (small_) return {false, "no FPU program fits 4 KiB", "use --no-fpu on this board"};
    return programs({"isa_rv32f_arith.elf", "isa_rv32f_misc.elf"}, false,
                    "illegal instruction: the build has no FPU (use --no-fpu); another exit code: "
                    "the failed check in sw/tests/isa/<program>.S");
  }

  Outcome cycles() {
    Device& dev = *dev_;
    RunResult whole;
    const std::string alu = "isa_rv32i_alu" + suffix_ + ".elf";
    std::string err = runProgram(alu, false, &whole);
    if (!err.empty()) return fail(err, "see the integer step");
    const uint64_t total = whole.cycles;
    if (total < 100)
      return fail(fmt::format("a whole run took {} cycles", total),
                  "the cycle counter does not count");
    // The tile's counters are counterBits wide (INFO): its cycle counter reads the chip's
    // 64-bit count modulo 2^counterBits (docs/tile.md, "Counters").
    const unsigned bits = dev.info().counterBits;
    const auto s = dev.stats(0);
    if (s.instructions == 0 || s.instructions > total ||
        s.cycles != tessera::wrapCounter(total, bits))
      return fail(fmt::format("{} cycles, tile counters ({} bits): {} cycles, {} instructions",
                              total, bits, s.cycles, s.instructions),
                  "tile and chip cycle counters disagree");
    // The same program in two parts stops exactly at the limit and ends on the same cycle.
    dev.reset();
    tessera::loadProgram(dev, opt_.programs + "/" + alu, 0);
    onlyTileZero(dev);
    const uint64_t half = total / 2;
    const RunResult first = dev.run(half);
    const uint64_t reg =
        dev.readControl(TESS_CR_CYCLE_LO) | uint64_t{dev.readControl(TESS_CR_CYCLE_HI)} << 32;
    if (first.reason != StopReason::MaxCycles || first.cycles != half || reg != half)
      return fail(fmt::format("run({}) stopped after {} cycles (CYCLE register {})", half,
                              first.cycles, reg),
                  "the run limit or the CYCLE register is off: the bridge's run control");
    const RunResult rest = dev.run(kMaxCycles);
    if (rest.reason != StopReason::Halted || rest.cycles != total)
      return fail(fmt::format("resumed run ended after {} cycles, a whole run after {}",
                              rest.cycles, total),
                  "stopping and resuming changes the timing: run_i gating of the chip");
    std::string detail =
        fmt::format("{} cycles whole = {} + {} in two runs, {} instructions, {}-bit tile counters",
                    total, half, total - half, s.instructions, bits);
    if (!opt_.counterWrap) return {true, detail + " (past 2^32: --counter-wrap)", ""};
    Outcome wrap = counterWrap(bits);
    wrap.detail = detail + "; " + wrap.detail;
    return wrap;
  }

  // 2^32 + 1000 cycles of a supervisor that spins (jal x0, 0; about 6 minutes at 12 MHz): the
  // tile's cycle counter must read them modulo 2^counterBits, 1000 when it is 32 bits wide (it
  // wrapped) and 2^32 + 1000 when 64 (it carried), and the chip's CYCLE all of them in both.
  Outcome counterWrap(unsigned bits) {
    Device& dev = *dev_;
    dev.reset();
    const std::array<uint8_t, 4> spin = {0x6f, 0x00, 0x00, 0x00};
    dev.writeMemory(0, 0, spin);
    onlyTileZero(dev);
    const uint64_t total = (uint64_t{1} << 32) + 1000;
    const RunResult r = dev.run(total);
    const uint64_t reg =
        dev.readControl(TESS_CR_CYCLE_LO) | uint64_t{dev.readControl(TESS_CR_CYCLE_HI)} << 32;
    if (r.reason != StopReason::MaxCycles || r.cycles != total || reg != total)
      return fail(
          fmt::format("run({}) stopped after {} cycles (CYCLE register {})", total, r.cycles, reg),
          "the chip's cycle counter or the run limit is not 64 bits wide");
    const auto s = dev.stats(0);
    // One instruction may still be in the pipeline at the pause (docs/tile.md).
    const uint64_t unaccounted =
        tessera::wrapCounter(s.cycles - s.idleSlots - s.instructions, bits);
    if (s.cycles != tessera::wrapCounter(total, bits) || unaccounted > 1)
      return fail(fmt::format("after {} cycles the tile counters read {} cycles, {} idle slots, "
                              "{} instructions; {}-bit counters read {} cycles",
                              total, s.cycles, s.idleSlots, s.instructions, bits,
                              tessera::wrapCounter(total, bits)),
                  "the tile's counters are not as wide as INFO says (a bitstream of another "
                  "configuration), or they do not carry into their high word");
    return {true,
            fmt::format("{} cycles: tile cycle counter {} ({} bits), {} instructions", total,
                        s.cycles, bits, s.instructions),
            ""};
  }

 private:
  Options opt_;
  std::unique_ptr<Device> dev_;
  bool small_ = false;  // the iCE40 board's tile memory: programs linked for it
  std::string suffix_;  // "_ice40" then
};

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  CLI::App app{"tessera-bringup: self-test of a tessera device (docs/bringup.md)"};
  app.add_option("--device", opt.device, "device string: model, rtl, tcp://HOST:PORT, serial:PATH")
      ->required();
  app.add_option("--tiles", opt.tiles, "tiles (in-process backends; 0 = the default)");
  app.add_option("--programs", opt.programs, "directory of the device test programs")
      ->capture_default_str();
  app.add_option("--march-bytes", opt.marchBytes,
                 "bytes of each tile the memory march covers (0 = all of it)");
  app.add_flag("--no-fpu", opt.noFpu, "the build has no FPU: skip the FPU step");
  app.add_flag("--no-muldiv", opt.noMulDiv, "the build has no M extension: skip the M step");
  app.add_flag("--counter-wrap", opt.counterWrap,
               "cycles step: also run 2^32 + 1000 cycles and check that the tiles' counters wrap "
               "(32 bits) or carry (64 bits) as INFO says (about 6 minutes at 12 MHz)");
  app.add_option("--preset", opt.preset,
                 "model: chip preset (ice40 = the iCE40 board's RV32I 4 KiB tile, no M, no F)");
  app.footer("Exit status: 0 every step passed, 1 a step failed, 2 usage error.");
  try {
    tessera::cli::requireFiniteNumbers(app);
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }

  Bringup b(opt);
  struct Step {
    const char* name;
    std::function<Outcome()> run;
  };
  const std::vector<Step> steps = {
      {"link", [&] { return b.link(); }},         {"memory", [&] { return b.memory(); }},
      {"exchange", [&] { return b.exchange(); }}, {"sync", [&] { return b.sync(); }},
      {"integer", [&] { return b.integer(); }},   {"muldiv", [&] { return b.muldiv(); }},
      {"fpu", [&] { return b.fpu(); }},           {"cycles", [&] { return b.cycles(); }},
  };
  std::printf("tessera-bringup: %s\n", opt.device.c_str());
  unsigned passed = 0;
  bool linkOk = true;
  for (const auto& s : steps) {
    Outcome o;
    if (!linkOk) {
      o = fail("not run", "the link step failed");
    } else {
      const auto t0 = std::chrono::steady_clock::now();
      try {
        o = s.run();
      } catch (const std::exception& e) {
        o = fail(e.what(), "an error from the device or the link: the message names the part");
      }
      const double sec =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      o.detail += fmt::format(" [{:.1f} s]", sec);
    }
    std::printf("%-4s %-9s %s\n", o.pass ? "PASS" : "FAIL", s.name, o.detail.c_str());
    if (!o.pass) std::printf("     hint: %s\n", o.hint.c_str());
    std::fflush(stdout);
    if (o.pass) ++passed;
    if (!o.pass && std::string(s.name) == "link") linkOk = false;
  }
  std::printf("tessera-bringup: %u of %zu steps passed\n", passed, steps.size());
  return passed == steps.size() ? 0 : 1;
}

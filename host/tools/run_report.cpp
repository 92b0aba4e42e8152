#include "run_report.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "run_options.hpp"
#include "tessera/shard.hpp"

namespace tessera::tools {
namespace {

int tileExitStatus(uint32_t code) {
  const int low = static_cast<int>(code & 0xff);
  return (code != 0 && low == 0) ? 1 : low;
}

}  // namespace

// Other ranks print into /dev/null.
std::FILE* reportStream(std::FILE* f) {
  if (shard::rank() == 0) return f;
  static std::FILE* const devNull = std::fopen("/dev/null", "w");
  return devNull ? devNull : f;
}

/// The consoles; before[t] (a restored checkpoint's) comes before each tile's text.
namespace {
// Console bytes read from a checkpoint file are data, not the program's own output: control bytes
// (escape sequences included) and bytes over 0x7e are shown as \xNN, never sent to the terminal.
std::string shownFromFile(const std::string& bytes) {
  std::string out;
  for (const char ch : bytes) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7f)) {
      out += ch;
    } else {
      out += fmt::format("\\x{:02x}", c);
    }
  }
  return out;
}
}  // namespace

void printConsoles(const Device& device, unsigned tiles, bool prefixed,
                   const std::vector<std::string>& before) {
  std::string out;
  for (unsigned t = 0; t < tiles; ++t) {
    const std::string text =
        (t < before.size() ? shownFromFile(before[t]) : std::string()) + device.console(t);
    if (!prefixed) {
      out += text;
      continue;
    }
    size_t pos = 0;
    while (pos < text.size()) {
      const size_t nl = text.find('\n', pos);
      const size_t end = nl == std::string::npos ? text.size() : nl;
      out += fmt::format("[tile {}] {}\n", t, text.substr(pos, end - pos));
      pos = end + 1;
    }
  }
  // A console that cannot be written (stdout on a full disk) is an error, not a success.
  if (shard::rank() != 0) return;  // every rank asked for the consoles: collective
  if (std::fwrite(out.data(), 1, out.size(), stdout) != out.size() || std::fflush(stdout) != 0)
    throw Error("stdout: write failed (the consoles are lost)");
}

void printStats(const Device& device, unsigned tiles, uint64_t cycles, double seconds) {
  TileStats sum;
  const ChipInfo info = device.info();
  const unsigned contexts = std::min(info.contexts, 6u);
  for (unsigned t = 0; t < tiles; ++t) {
    const TileStats s = device.stats(t);
    sum.instructions += s.instructions;
    for (unsigned c = 0; c < contexts; ++c) sum.contextInstructions[c] += s.contextInstructions[c];
    sum.idleSlots += s.idleSlots;
    sum.syncWaitCycles += s.syncWaitCycles;
    sum.exchangeCycles += s.exchangeCycles;
  }
  std::string perContext;
  for (unsigned c = 0; c < contexts; ++c) {
    perContext += fmt::format("{}{}", c ? " " : "", sum.contextInstructions[c]);
  }
  fmt::print(reportStream(stderr), "cycles:        {}\n", cycles);
  fmt::print(reportStream(stderr), "instructions:  {} (per context: {})\n", sum.instructions,
             perContext);
  fmt::print(reportStream(stderr), "IPC:           {:.4f}\n",
             cycles ? double(sum.instructions) / double(cycles) : 0.0);
  fmt::print(reportStream(stderr), "idle slots:    {}\n", sum.idleSlots);
  fmt::print(reportStream(stderr), "sync wait:     {} cycles\n", sum.syncWaitCycles);
  fmt::print(reportStream(stderr), "exchange:      {} cycles\n", sum.exchangeCycles);
  const unsigned bits = info.counterBits;
  if (bits < 64 && cycles >> bits != 0) {
    // The chip's cycle count is 64 bits; the tiles' counters wrapped (docs/tile.md, "Counters").
    fmt::print(reportStream(stderr),
               "note:          the tiles' counters are {} bits wide: the counts above are modulo "
               "2^{} (the IPC is not meaningful)\n",
               bits, bits);
  }
  if (tiles > 1) {
    for (unsigned t = 0; t < tiles; ++t) {
      const TileStats s = device.stats(t);
      fmt::print(reportStream(stderr),
                 "tile {:4}:     instructions {} idle slots {} sync wait {} exchange {}{}\n", t,
                 s.instructions, s.idleSlots, s.syncWaitCycles, s.exchangeCycles,
                 s.halted ? fmt::format(" exit {}", s.exitCode) : std::string());
    }
  }
  fmt::print(reportStream(stderr), "host time:     {:.3f} s ({:.2f} M simulated chip cycles/s)\n",
             seconds, seconds > 0 ? double(cycles) / seconds / 1e6 : 0.0);
}

int exitStatus(const Device& device, const RunResult& result, unsigned tiles) {
  switch (result.reason) {
    case StopReason::Halted:
      for (unsigned t = 0; t < tiles; ++t) {
        const uint32_t code = device.stats(t).exitCode;
        if (code != 0) return tileExitStatus(code);
      }
      return 0;
    case StopReason::Trap:
      fmt::print(reportStream(stderr), "tessera-run: {}\n", describeTrap(result.trap));
      return kExitTrap;
    case StopReason::MaxCycles:
      fmt::print(reportStream(stderr),
                 "tessera-run: stopped after {} cycles (--max-cycles) before every tile halted\n",
                 result.cycles);
      return kExitMaxCycles;
    case StopReason::HostSync:
    case StopReason::SyncBreak:
      break;  // released before this point
  }
  return kExitBadInput;
}

}  // namespace tessera::tools

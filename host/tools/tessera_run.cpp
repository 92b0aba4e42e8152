// tessera-run: load a tile program (an rv32 ELF linked at 0) into a chip, run it, print the
// consoles, and exit with the first nonzero tile exit code (docs/building.md). By default the
// program runs on tile 0 and the other tiles are disabled; --all-tiles runs it on every tile.
// Host syncs are released at once (a bare program has no host side). A *.tess executable
// (docs/executable-format.md, told apart by its magic) runs through the Engine instead: its streams
// come from --input/--output files, and an unconnected stream is refused unless --unconnected-ok.
// Checkpoints (docs/checkpoint.md): --checkpoint-at N --save FILE stops at the Nth sync since the
// program start and saves the device (and, for a *.tess, the stream positions); --restore FILE
// continues such a checkpoint on any device, printing the whole console as an uninterrupted run.
// Exit codes: kExitCodes.
#include <algorithm>
#include <fmt/format.h>
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <filesystem>
#include <map>
#include <sstream>
#include <memory>
#include <string>
#include <vector>

#include "crc32.hpp"
#include "file_io.hpp"
#include "tessera/checkpoint.hpp"
#include "tessera/executable.hpp"
#include "program_loader.hpp"
#include "tessera/device.hpp"
#include "tessera/engine.hpp"
#include "tessera/shard.hpp"

namespace {

constexpr int kExitMaxCycles = 252;
constexpr int kExitTrap = 253;
constexpr int kExitBadInput = 254;

constexpr const char* kExitCodes =
    "Exit status: the first nonzero tile exit code in tile order (its low 8 bits; a nonzero code\n"
    "whose low 8 bits are 0 gives 1), else 0; 252 = --max-cycles reached, 253 = a tile trapped\n"
    "or the chip stopped with a sync/exchange error (details on stderr), 254 = bad ELF, bad\n"
    "device, a failed output write or other error; command-line usage errors keep CLI11's codes\n"
    "(104 = bad option value, 105 = value out of range, 106 = missing argument, 109 = unknown\n"
    "option, ...).\n"
    "The device comes from --device, else the TESSERA_DEVICE environment variable, else "
    "\"model\".\n"
    "The consoles are printed on stdout when the run ends, each line prefixed with \"[tile k] \"\n"
    "when more than one tile runs.";

struct Options {
  std::string device;
  uint64_t maxCycles = 0;
  bool stats = false;
  std::string vcd;
  std::string elfPath;
  unsigned tiles = 0;
  std::string preset;
  bool noFpu = false;
  bool noMulDiv = false;
  unsigned contexts = 0;
  unsigned counterBits = 0;
  unsigned threads = 0;
  unsigned maxTiles = 0;
  bool allTiles = false;
  std::vector<std::string> inputs;   // name=file, host→device streams of a .tess
  std::vector<std::string> outputs;  // name=file, device→host streams of a .tess
  bool unconnectedOk = false;
  bool shard = false;  // model: tiles split over the MPI ranks (docs/scale-out.md)
  uint64_t checkpointAt = 0;  // save at this sync (1 = the first since the program start)
  std::string save;           // checkpoint file to write
  std::string restore;        // checkpoint file to continue from
};

// With --shard every rank runs this program and makes the same device calls (they are
// collective); only rank 0 prints and writes output files. Other ranks print into /dev/null.
std::FILE* reportStream(std::FILE* f) {
  if (tessera::shard::rank() == 0) return f;
  static std::FILE* const devNull = std::fopen("/dev/null", "w");
  return devNull ? devNull : f;
}

/// What tessera-run keeps in a checkpoint's application data: the syncs since the program
/// start, and for a *.tess the executable's CRC and its stream positions. Text, one item a line.
struct RunCheckpoint {
  uint64_t syncs = 0;
  bool executable = false;
  uint32_t exeCrc = 0;
  std::vector<uint64_t> offsets;
};

std::vector<uint8_t> encodeRunCheckpoint(const RunCheckpoint& c) {
  std::string s = fmt::format("tessera-run 1\nsyncs {}\n", c.syncs);
  if (c.executable) {
    s += fmt::format("exe-crc {}\noffsets", c.exeCrc);
    for (uint64_t o : c.offsets) s += fmt::format(" {}", o);
    s += "\n";
  }
  return std::vector<uint8_t>(s.begin(), s.end());
}

RunCheckpoint decodeRunCheckpoint(const std::vector<uint8_t>& data, const std::string& path) {
  RunCheckpoint c;
  std::istringstream in(std::string(data.begin(), data.end()));
  std::string word;
  if (!(in >> word) || word != "tessera-run" || !(in >> word) || word != "1") {
    throw tessera::Error(fmt::format("{}: not a checkpoint written by tessera-run", path));
  }
  while (in >> word) {
    if (word == "syncs") {
      in >> c.syncs;
    } else if (word == "exe-crc") {
      c.executable = true;
      in >> c.exeCrc;
    } else if (word == "offsets") {
      std::string line;
      std::getline(in, line);
      std::istringstream nums(line);
      for (uint64_t o; nums >> o;) c.offsets.push_back(o);
    } else {
      throw tessera::Error(fmt::format("{}: unknown tessera-run item \"{}\"", path, word));
    }
    if (!in) throw tessera::Error(fmt::format("{}: bad tessera-run item \"{}\"", path, word));
  }
  return c;
}

int tileExitStatus(uint32_t code) {
  const int low = static_cast<int>(code & 0xff);
  return (code != 0 && low == 0) ? 1 : low;
}

/// The consoles; before[t] (a restored checkpoint's) comes before each tile's text.
void printConsoles(const tessera::Device& device, unsigned tiles, bool prefixed,
                   const std::vector<std::string>& before = {}) {
  std::string out;
  for (unsigned t = 0; t < tiles; ++t) {
    const std::string text = (t < before.size() ? before[t] : std::string()) + device.console(t);
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
  if (tessera::shard::rank() != 0) return;  // every rank asked for the consoles: collective
  if (std::fwrite(out.data(), 1, out.size(), stdout) != out.size() || std::fflush(stdout) != 0)
    throw tessera::Error("stdout: write failed (the consoles are lost)");
}

void printStats(const tessera::Device& device, unsigned tiles, uint64_t cycles, double seconds) {
  tessera::TileStats sum;
  const tessera::ChipInfo info = device.info();
  const unsigned contexts = std::min(info.contexts, 6u);
  for (unsigned t = 0; t < tiles; ++t) {
    const tessera::TileStats s = device.stats(t);
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
  fmt::print(reportStream(stderr), "instructions:  {} (per context: {})\n", sum.instructions, perContext);
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
      const tessera::TileStats s = device.stats(t);
      fmt::print(reportStream(stderr),
                 "tile {:4}:     instructions {} idle slots {} sync wait {} exchange {}{}\n", t,
                 s.instructions, s.idleSlots, s.syncWaitCycles, s.exchangeCycles,
                 s.halted ? fmt::format(" exit {}", s.exitCode) : std::string());
    }
  }
  fmt::print(reportStream(stderr), "host time:     {:.3f} s ({:.2f} M simulated chip cycles/s)\n", seconds,
             seconds > 0 ? double(cycles) / seconds / 1e6 : 0.0);
}

int exitStatus(const tessera::Device& device, const tessera::RunResult& result, unsigned tiles) {
  switch (result.reason) {
    case tessera::StopReason::Halted:
      for (unsigned t = 0; t < tiles; ++t) {
        const uint32_t code = device.stats(t).exitCode;
        if (code != 0) return tileExitStatus(code);
      }
      return 0;
    case tessera::StopReason::Trap:
      fmt::print(reportStream(stderr), "tessera-run: {}\n", tessera::describeTrap(result.trap));
      return kExitTrap;
    case tessera::StopReason::MaxCycles:
      fmt::print(reportStream(stderr),
                 "tessera-run: stopped after {} cycles (--max-cycles) before every tile halted\n",
                 result.cycles);
      return kExitMaxCycles;
    case tessera::StopReason::HostSync:
    case tessera::StopReason::SyncBreak:
      break;  // released before this point
  }
  return kExitBadInput;
}

/// True if the file at path starts with the *.tess magic (else it is treated as an ELF, whose
/// reader refuses what is not a regular file: opening a FIFO here would wait for a writer).
bool isExecutable(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  std::ifstream in(path, std::ios::binary);
  uint8_t head[sizeof tessera::Executable::kMagic] = {};
  in.read(reinterpret_cast<char*>(head), sizeof head);
  return in && tessera::Executable::hasMagic(head);
}

/// Split "name=file" of --input/--output.
std::pair<std::string, std::string> streamFile(const std::string& spec, const char* option) {
  const size_t eq = spec.find('=');
  if (eq == 0 || eq == std::string::npos || eq + 1 == spec.size()) {
    throw tessera::Error(fmt::format("{} \"{}\": expected STREAM=FILE", option, spec));
  }
  return {spec.substr(0, eq), spec.substr(eq + 1)};
}

constexpr uint64_t kMaxCheckpointBytes = uint64_t{4} << 30;

/// A checkpoint file's bytes and what it says (before any device is touched).
struct LoadedCheckpoint {
  std::vector<uint8_t> bytes;
  tessera::CheckpointInfo info;
};

LoadedCheckpoint loadCheckpoint(const std::string& path) {
  LoadedCheckpoint c;
  c.bytes = tessera::readRegularFile(path, kMaxCheckpointBytes, "checkpoint");
  try {
    c.info = tessera::readCheckpointInfo(c.bytes);
  } catch (const tessera::Error& e) {
    throw tessera::Error(fmt::format("{}: {}", path, e.what()));
  }
  return c;
}

/// Restore into device; returns what tessera-run stored in the checkpoint.
RunCheckpoint restoreInto(tessera::Device& device, const LoadedCheckpoint& c,
                          const std::string& path, std::vector<std::string>& consoles) {
  tessera::CheckpointInfo restored;
  const auto start = std::chrono::steady_clock::now();
  try {
    restored = tessera::restoreCheckpoint(device, c.bytes);
  } catch (const tessera::Error& e) {
    throw tessera::Error(fmt::format("{}: {}", path, e.what()));
  }
  fmt::print(stderr, "tessera-run: restored {} ({} bytes, sync at cycle {}) in {:.3f} s\n", path,
             c.bytes.size(), restored.cycle,
             std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  consoles = restored.consoles;
  return decodeRunCheckpoint(restored.appData, path);
}

uint32_t fileCrc(const std::string& path) {
  return tessera::crc32(tessera::readRegularFile(path, kMaxCheckpointBytes, "executable"));
}

/// Save the checkpoint of a run stopped at its syncs-th sync, and say so on stderr.
void saveRun(tessera::Device& device, const Options& o, const RunCheckpoint& c, uint64_t cycles) {
  const auto start = std::chrono::steady_clock::now();
  tessera::saveCheckpoint(device, o.save, encodeRunCheckpoint(c));
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(o.save, ec);
  fmt::print(stderr, "tessera-run: checkpoint at sync {} (cycle {}) saved to {} ({} bytes) in {:.3f} s\n",
             c.syncs, cycles, o.save, ec ? 0 : bytes,
             std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

/// --checkpoint-at on a device without checkpoint registers fails before the run, not at the sync.
void requireCheckpoints(tessera::Device& device, const std::string& name) {
  if (!tessera::hasCheckpointSupport(device)) {
    throw tessera::Error(fmt::format(
        "--checkpoint-at: device \"{}\" has no checkpoint support (its chip is built without the "
        "checkpoint registers, HAS_CHECKPOINT = 0, like the iCE40 board's configuration)",
        name));
  }
}

/// Run a *.tess executable through the Engine, streams connected to files.
int runExecutable(const Options& o, tessera::DeviceOptions options) {
  const tessera::Executable exe = tessera::Executable::fromFile(o.elfPath);
  if (options.tiles == 0 && options.preset.empty()) options.tiles = exe.target.tiles;
  // The model builds a chip of any tile memory; other backends have theirs (Engine checks it).
  if (o.device == "model" && options.tileMemBytes == 0 && options.preset.empty()) {
    options.tileMemBytes = exe.target.tileMemBytes;
  }
  LoadedCheckpoint checkpoint;
  if (!o.restore.empty()) checkpoint = loadCheckpoint(o.restore);
  auto device = tessera::openDevice(o.device, options);
  if (o.checkpointAt != 0) requireCheckpoints(*device, o.device);
  tessera::Engine engine(*device, exe);
  RunCheckpoint resumed;
  std::vector<std::string> savedConsoles;
  if (!o.restore.empty()) {
    resumed = restoreInto(*device, checkpoint, o.restore, savedConsoles);
    if (!resumed.executable || resumed.exeCrc != fileCrc(o.elfPath) ||
        resumed.offsets.size() != exe.streams.size()) {
      throw tessera::Error(fmt::format("{}: not a checkpoint of a run of {}", o.restore, o.elfPath));
    }
  }
  auto offsetOf = [&](const std::string& name) -> uint64_t {
    const int s = exe.findStream(name);
    return (s >= 0 && !resumed.offsets.empty()) ? resumed.offsets[s] : 0;
  };
  // The files live as long as the engine's run; an input file that ends before the device has
  // taken all it needs is an error at the host sync that needs the missing bytes.
  std::vector<std::shared_ptr<std::fstream>> files;
  std::vector<std::pair<std::shared_ptr<std::fstream>, std::string>> outputFiles;
  for (const std::string& spec : o.inputs) {
    const auto [name, path] = streamFile(spec, "--input");
    const int s = exe.findStream(name);
    if (s >= 0 && exe.streams[s].direction != tessera::StreamDirection::HostToDevice) {
      throw tessera::Error(
          fmt::format("--input {}: stream \"{}\" is device-to-host (use --output)", spec, name));
    }
    auto f = std::make_shared<std::fstream>(path, std::ios::in | std::ios::binary);
    if (!*f) throw tessera::Error(fmt::format("{}: cannot open", path));
    // A resumed run continues the stream where the checkpoint left it.
    f->seekg(static_cast<std::streamoff>(offsetOf(name)));
    if (!*f) throw tessera::Error(fmt::format("{}: cannot seek to {}", path, offsetOf(name)));
    files.push_back(f);
    engine.connectStream(name, [f, name, path](uint64_t, std::span<uint8_t> data) {
      f->read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(data.size()));
      if (static_cast<size_t>(f->gcount()) != data.size()) {
        throw tessera::Error(
            fmt::format("stream \"{}\": {} ended before the device took all its data", name, path));
      }
    });
  }
  for (const std::string& spec : o.outputs) {
    const auto [name, path] = streamFile(spec, "--output");
    const int s = exe.findStream(name);
    if (s >= 0 && exe.streams[s].direction != tessera::StreamDirection::DeviceToHost) {
      throw tessera::Error(
          fmt::format("--output {}: stream \"{}\" is host-to-device (use --input)", spec, name));
    }
    // With --shard only rank 0 writes the file; the others take the same data and drop it.
    if (tessera::shard::rank() != 0) {
      engine.connectStream(name, [](uint64_t, std::span<uint8_t>) {});
      continue;
    }
    // A resumed run keeps the first offsetOf(name) bytes (written before the checkpoint) and
    // writes the rest after them.
    const uint64_t keep = offsetOf(name);
    std::shared_ptr<std::fstream> f;
    if (keep > 0) {
      std::error_code ec;
      if (std::filesystem::file_size(path, ec) < keep || ec) {
        throw tessera::Error(fmt::format("{}: shorter than the {} bytes the checkpointed run wrote",
                                         path, keep));
      }
      std::filesystem::resize_file(path, keep, ec);
      if (ec) throw tessera::Error(fmt::format("{}: cannot truncate: {}", path, ec.message()));
      f = std::make_shared<std::fstream>(path, std::ios::in | std::ios::out | std::ios::binary);
      if (f && *f) f->seekp(static_cast<std::streamoff>(keep));
    } else {
      f = std::make_shared<std::fstream>(path, std::ios::out | std::ios::binary | std::ios::trunc);
    }
    if (!*f) throw tessera::Error(fmt::format("{}: cannot create", path));
    files.push_back(f);
    outputFiles.emplace_back(f, path);
    engine.connectStream(name, [f, path](uint64_t, std::span<uint8_t> data) {
      f->write(reinterpret_cast<const char*>(data.data()),
               static_cast<std::streamsize>(data.size()));
      if (!*f) throw tessera::Error(fmt::format("{}: write failed", path));
    });
  }
  if (!o.unconnectedOk) {
    if (const auto left = engine.unconnectedStreams(); !left.empty()) {
      const tessera::ExeStream& st = exe.streams[exe.findStream(left.front())];
      throw tessera::Error(fmt::format(
          "{} stream \"{}\" is not connected (give {} {}=FILE, or --unconnected-ok to {})",
          tessera::streamDirectionName(st.direction), st.name,
          st.direction == tessera::StreamDirection::HostToDevice ? "--input" : "--output", st.name,
          st.direction == tessera::StreamDirection::HostToDevice ? "send zeros" : "drop its data"));
    }
  }
  engine.setUnconnectedOk(o.unconnectedOk);
  if (!o.restore.empty()) engine.resumeFromCheckpoint(resumed.offsets);
  uint64_t syncs = resumed.syncs;
  bool saved = false;
  if (o.checkpointAt != 0) {
    if (o.checkpointAt <= syncs) {
      throw tessera::Error(fmt::format("--checkpoint-at {}: the restored run is already at sync {}",
                                       o.checkpointAt, syncs));
    }
    device->setSyncBreak(true);  // internal syncs count too
    engine.setSyncObserver([&](const tessera::RunResult& r) {
      if (++syncs != o.checkpointAt) return true;
      RunCheckpoint c;
      c.syncs = syncs;
      c.executable = true;
      c.exeCrc = fileCrc(o.elfPath);
      c.offsets = engine.streamOffsets();
      saveRun(*device, o, c, r.cycles);
      saved = true;
      return false;
    });
  }

  const auto start = std::chrono::steady_clock::now();
  const tessera::RunResult result = engine.run(o.maxCycles);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Every output byte must reach its file: a full disk is an error, not a success.
  for (auto& [f, path] : outputFiles) {
    f->flush();
    const bool ok = !f->fail();
    f->close();
    if (!ok || f->fail()) throw tessera::Error(fmt::format("{}: write failed", path));
  }
  const unsigned tiles = exe.target.tiles;
  printConsoles(*device, tiles, tiles > 1, savedConsoles);
  if (saved) return 0;
  if (o.stats) {
    printStats(*device, tiles, result.cycles, seconds);
    const tessera::EngineStats s = engine.stats();
    fmt::print(reportStream(stderr), "host syncs:    {} ({} bytes to the device, {} from it)\n", s.hostSyncs,
               s.hostToDeviceBytes, s.deviceToHostBytes);
    fmt::print(reportStream(stderr), "host I/O:      {:.6f} s ({:.1f} us per host sync)\n", s.hostIoSeconds,
               s.hostSyncs ? s.hostIoSeconds / double(s.hostSyncs) * 1e6 : 0.0);
    fmt::print(reportStream(stderr), "prefetch wait: {} host syncs, {:.6f} s; {} bytes not prefetched\n",
               s.prefetchWaits, s.prefetchWaitSeconds, s.prefetchMissBytes);
  }
  return exitStatus(*device, result, tiles);
}

int run(const Options& o) {
  tessera::DeviceOptions options;
  options.traceVcd = o.vcd;
  options.tiles = o.tiles;  // 0 = the backend's default chip (docs/decisions.md: 4 tiles)
  options.preset = o.preset;
  options.noFpu = o.noFpu;
  options.noMulDiv = o.noMulDiv;
  options.contexts = o.contexts;
  options.counterBits = o.counterBits;
  options.threads = o.threads;
  options.maxTiles = o.maxTiles;
  options.shard = o.shard;
  if (!o.vcd.empty() && o.device != "rtl") {
    throw tessera::Error(
        fmt::format("--trace-vcd needs --device rtl (device \"{}\" has no waveforms)", o.device));
  }
  if (o.checkpointAt != 0 && o.save.empty()) {
    throw tessera::Error("--checkpoint-at needs --save FILE");
  }
  if (!o.save.empty() && o.checkpointAt == 0) {
    throw tessera::Error("--save needs --checkpoint-at SYNC");
  }
  if (o.shard && (o.checkpointAt != 0 || !o.restore.empty())) {
    // The sharded chip does not serve the state registers a checkpoint reads and writes
    // (docs/checkpoint.md): checkpoint with the unsharded model, which gives the same state.
    throw tessera::Error("--shard cannot save or restore checkpoints (use the unsharded model)");
  }
  if (!o.elfPath.empty() && isExecutable(o.elfPath)) return runExecutable(o, options);
  std::unique_ptr<tessera::Device> device;
  unsigned enabled = 1;
  uint64_t syncs = 0;
  std::vector<std::string> savedConsoles;
  if (!o.restore.empty()) {
    if (!o.elfPath.empty()) {
      throw tessera::Error("--restore of a bare program takes no program file (the checkpoint "
                           "holds the memory; a *.tess executable is given with its checkpoint)");
    }
    const LoadedCheckpoint checkpoint = loadCheckpoint(o.restore);
    if (options.tiles == 0 && options.preset.empty()) options.tiles = checkpoint.info.tiles;
    if (o.device == "model" && options.preset.empty()) {
      options.tileMemBytes = checkpoint.info.tileMemBytes;
    }
    device = tessera::openDevice(o.device, options);
    const RunCheckpoint c = restoreInto(*device, checkpoint, o.restore, savedConsoles);
    if (c.executable) {
      throw tessera::Error(fmt::format("{}: a checkpoint of a *.tess run: give the executable",
                                       o.restore));
    }
    syncs = c.syncs;
    const unsigned tiles = device->info().tiles;
    for (unsigned t = 1; t < tiles; ++t) {
      device->writeControl(TESS_CR_TILE_SEL, t);
      if (device->readControl(TESS_CR_T_ENABLE) != 0) enabled = tiles;
    }
    device->writeControl(TESS_CR_TILE_SEL, 0);
  } else {
    if (o.elfPath.empty()) throw tessera::Error("give a program (prog.elf) or --restore FILE");
    device = tessera::openDevice(o.device, options);
    const unsigned tiles = device->info().tiles;
    if (o.allTiles) {
      tessera::loadProgramOnAllTiles(*device, o.elfPath);
    } else {
      tessera::loadProgram(*device, o.elfPath, 0);
      for (unsigned t = 1; t < tiles; ++t) device->setTileEnabled(t, false);
    }
    enabled = o.allTiles ? tiles : 1;
  }
  if (o.checkpointAt != 0) {
    if (o.checkpointAt <= syncs) {
      throw tessera::Error(fmt::format("--checkpoint-at {}: the restored run is already at sync {}",
                                       o.checkpointAt, syncs));
    }
    requireCheckpoints(*device, o.device);
    device->setSyncBreak(true);  // internal syncs count too
  }

  const auto start = std::chrono::steady_clock::now();
  const uint64_t first = device->readControl(TESS_CR_CYCLE_LO) |
                         uint64_t{device->readControl(TESS_CR_CYCLE_HI)} << 32;
  tessera::RunResult result = device->run(o.maxCycles > first ? o.maxCycles - first : 0);
  while (result.reason == tessera::StopReason::HostSync ||
         result.reason == tessera::StopReason::SyncBreak) {
    ++syncs;
    if (syncs == o.checkpointAt) {
      RunCheckpoint c;
      c.syncs = syncs;
      saveRun(*device, o, c, result.cycles);
      printConsoles(*device, enabled, enabled > 1, savedConsoles);
      return 0;
    }
    if (o.stats && result.reason == tessera::StopReason::HostSync) {
      fmt::print(reportStream(stderr), "host sync {}\n", result.hostSyncId);
    }
    result = device->run(o.maxCycles - result.cycles);  // the limit counts chip cycles in all
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  printConsoles(*device, enabled, enabled > 1, savedConsoles);
  if (o.stats) printStats(*device, enabled, result.cycles, seconds);

  return exitStatus(*device, result, enabled);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Run a tessera tile program (an rv32 ELF linked at 0) or executable (*.tess) on a device."};
  app.footer(kExitCodes);
  Options o;
  std::string maxCycles;
  app.add_option("--device", o.device,
                 "Device: model or rtl (default: $TESSERA_DEVICE, else model)");
  app.add_option("--max-cycles", maxCycles,
                 "Stop after this many cycles, 1 .. 2^64-1 (default: no limit)")
      ->check(CLI::Validator(
          [&o](std::string& v) {
            // Strict: digits only, no sign, no wrap; 0 would mean nothing, so it is refused.
            uint64_t n = 0;
            const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
            if (v.empty() || ec != std::errc() || ptr != v.data() + v.size() || n == 0)
              return std::string("must be a whole number from 1 to 18446744073709551615");
            o.maxCycles = n;
            return std::string();
          },
          "CYCLES"));
  app.add_flag("--stats", o.stats,
               "Print cycles, instructions, IPC, idle slots, sync-wait and exchange cycles per "
               "tile, host syncs and host speed on stderr");
  app.add_option("--trace-vcd", o.vcd, "Write a VCD waveform (rtl device only)");
  app.add_option("--tiles", o.tiles,
                 fmt::format("Tiles in the chip (default: the device's default, {})",
                             TESS_DEFAULT_TILES));
  app.add_option("--preset", o.preset,
                 fmt::format("Chip preset: mk2 = {} tiles x {} KiB, ice40 = the iCE40 board's "
                             "reduced configuration ({} RV32I tile without M and F, {} contexts, "
                             "{} KiB; rtl/params.json); model only",
                             TESS_MK2_NUM_TILES, TESS_MK2_TILE_MEM_BYTES / 1024,
                             TESS_ICE40_NUM_TILES, TESS_ICE40_NUM_CONTEXTS,
                             TESS_ICE40_TILE_MEM_BYTES / 1024));
  app.add_flag("--no-fpu", o.noFpu,
               "Model: integer-only tiles, F instructions trap as illegal (as on the iCE40 board)");
  app.add_flag("--no-muldiv", o.noMulDiv,
               "Model: tiles without the M extension, M instructions trap as illegal (as on the "
               "iCE40 board)");
  app.add_option("--contexts", o.contexts,
                 fmt::format("Model: contexts per tile, 2..{} (the supervisor and 1..{} workers; "
                             "default {}, preset ice40: its own)",
                             TESS_ROUND_CYCLES, TESS_ROUND_CYCLES - 1, TESS_NUM_CONTEXTS))
      ->check(CLI::Range(2u, unsigned{TESS_ROUND_CYCLES}));
  app.add_option("--counter-bits", o.counterBits,
                 "Model: width of the tiles' counters, 32 (as on the iCE40 board: they wrap "
                 "modulo 2^32) or 64 (default: the chip's)")
      ->check(CLI::IsMember({32u, 64u}));
  app.add_option("--threads", o.threads, "Model: host threads (default: one per core)");
  app.add_option("--max-tiles", o.maxTiles,
                 fmt::format("Refuse chips with more tiles than this (default {}, docs/limits.md)",
                             tessera::kDefaultMaxTiles));
  app.add_flag("--all-tiles", o.allTiles,
               "Load the program on every tile (default: tile 0 only, the others disabled)");
  app.add_option("--input", o.inputs,
                 "*.tess: feed host-to-device stream STREAM from FILE (STREAM=FILE, repeatable)")
      ->allow_extra_args(false);  // one value per occurrence: the program may follow
  app.add_option("--output", o.outputs,
                 "*.tess: write device-to-host stream STREAM to FILE (STREAM=FILE, repeatable)")
      ->allow_extra_args(false);
  app.add_flag("--unconnected-ok", o.unconnectedOk,
               "*.tess: run with unconnected streams (host-to-device get zeros, device-to-host "
               "data is dropped); default: refuse");
  app.add_flag("--shard", o.shard,
               "Model: split the chip's tiles over the ranks of an MPI job (run under mpirun; "
               "docs/scale-out.md)");
  app.add_option("--checkpoint-at", o.checkpointAt,
                 "Stop at the SYNCth sync since the program start (host syncs and internal "
                 "syncs, 1 = the first) and save a checkpoint there (needs --save)")
      ->check(CLI::PositiveNumber);
  app.add_option("--save", o.save, "Checkpoint file written at --checkpoint-at");
  app.add_option("--restore", o.restore,
                 "Continue from a checkpoint file (a bare program: no prog.elf; a *.tess: give "
                 "the same executable, and the same --output files to continue them)");
  app.add_option("prog.elf", o.elfPath, "The program: an rv32 ELF, or a *.tess executable");
  CLI11_PARSE(app, argc, argv);

  if (o.device.empty()) {
    const char* env = std::getenv("TESSERA_DEVICE");
    o.device = (env && *env) ? env : "model";
  }
  if (o.maxCycles == 0) o.maxCycles = ~uint64_t{0};
  try {
    return run(o);
  } catch (const tessera::Error& e) {
    // A sharded run ends every rank: the others may be waiting for this one.
    if (tessera::shard::ranks() > 1) tessera::shard::abortJob("tessera-run", e.what(), kExitBadInput);
    fmt::print(stderr, "tessera-run: {}\n", e.what());
    return kExitBadInput;
  } catch (const std::exception& e) {
    if (tessera::shard::ranks() > 1) {
      tessera::shard::abortJob("tessera-run", std::string("internal error: ") + e.what(),
                               kExitBadInput);
    }
    fmt::print(stderr, "tessera-run: internal error: {}\n", e.what());
    return kExitBadInput;
  }
}

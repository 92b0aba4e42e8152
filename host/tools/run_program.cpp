#include "run_program.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "program_loader.hpp"
#include "run_checkpoint.hpp"
#include "run_report.hpp"
#include "tessera/chip_params.h"
#include "tessera/engine.hpp"
#include "tessera/executable.hpp"
#include "tessera/shard.hpp"

namespace tessera::tools {
namespace {

// A --checkpoint-at the run never reached saves nothing; saying so (and failing) keeps a script
// from taking the missing file for a run that ended normally. status is the run's own exit status.
int missedCheckpoint(const Options& o, uint64_t syncs, int status) {
  fmt::print(reportStream(stderr),
             "tessera-run: --checkpoint-at {}: the run ended after {} syncs; no checkpoint was "
             "saved to {}\n",
             o.checkpointAt, syncs, o.save);
  return status != 0 ? status : kExitBadInput;
}

/// True if the file at path starts with the *.tess magic (else it is treated as an ELF, whose
/// reader refuses what is not a regular file: opening a FIFO here would wait for a writer).
bool isExecutable(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  std::ifstream in(path, std::ios::binary);
  uint8_t head[sizeof Executable::kMagic] = {};
  in.read(reinterpret_cast<char*>(head), sizeof head);
  return in && Executable::hasMagic(head);
}

/// Split "name=file" of --input/--output.
std::pair<std::string, std::string> streamFile(const std::string& spec, const char* option) {
  const size_t eq = spec.find('=');
  if (eq == 0 || eq == std::string::npos || eq + 1 == spec.size()) {
    throw Error(fmt::format("{} \"{}\": expected STREAM=FILE", option, spec));
  }
  return {spec.substr(0, eq), spec.substr(eq + 1)};
}

/// The device of the run; with --reset, RESET first (a link device serves RESET during a run, so
/// this recovers a board or server that a vanished client left running).
std::unique_ptr<Device> openRunDevice(const Options& o, const DeviceOptions& options) {
  auto device = openDevice(o.device, options);
  if (o.reset) device->reset();
  return device;
}

/// Run a *.tess executable through the Engine, streams connected to files.
int runExecutable(const Options& o, DeviceOptions options) {
  const Executable exe = Executable::fromFile(o.elfPath);
  if (options.tiles == 0 && options.preset.empty()) options.tiles = exe.target.tiles;
  // The model builds a chip of any tile memory; other backends have theirs (Engine checks it).
  if (o.device == "model" && options.tileMemBytes == 0 && options.preset.empty()) {
    options.tileMemBytes = exe.target.tileMemBytes;
  }
  LoadedCheckpoint checkpoint;
  if (!o.restore.empty()) checkpoint = loadCheckpoint(o.restore);
  auto device = openRunDevice(o, options);
  if (o.checkpointAt != 0) requireCheckpoints(*device, o.device);
  Engine engine(*device, exe);
  RunCheckpoint resumed;
  std::vector<std::string> savedConsoles;
  if (!o.restore.empty()) {
    resumed = restoreInto(*device, checkpoint, o.restore, savedConsoles);
    if (!resumed.executable || resumed.exeCrc != fileCrc(o.elfPath) ||
        resumed.offsets.size() != exe.streams.size()) {
      throw Error(fmt::format("{}: not a checkpoint of a run of {}", o.restore, o.elfPath));
    }
    // Checked before any output file is truncated to its saved position.
    try {
      engine.resumeFromCheckpoint(resumed.offsets, resumed.hostSyncCounts);
    } catch (const Error& e) {
      throw Error(fmt::format("{}: {}", o.restore, e.what()));
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
    if (s >= 0 && exe.streams[s].direction != StreamDirection::HostToDevice) {
      throw Error(
          fmt::format("--input {}: stream \"{}\" is device-to-host (use --output)", spec, name));
    }
    auto f = std::make_shared<std::fstream>(path, std::ios::in | std::ios::binary);
    if (!*f) throw Error(fmt::format("{}: cannot open", path));
    // A resumed run continues the stream where the checkpoint left it.
    f->seekg(static_cast<std::streamoff>(offsetOf(name)));
    if (!*f) throw Error(fmt::format("{}: cannot seek to {}", path, offsetOf(name)));
    files.push_back(f);
    engine.connectStream(name, [f, name, path](uint64_t, std::span<uint8_t> data) {
      f->read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(data.size()));
      if (static_cast<size_t>(f->gcount()) != data.size()) {
        throw Error(
            fmt::format("stream \"{}\": {} ended before the device took all its data", name, path));
      }
    });
  }
  for (const std::string& spec : o.outputs) {
    const auto [name, path] = streamFile(spec, "--output");
    const int s = exe.findStream(name);
    if (s >= 0 && exe.streams[s].direction != StreamDirection::DeviceToHost) {
      throw Error(
          fmt::format("--output {}: stream \"{}\" is host-to-device (use --input)", spec, name));
    }
    // With --shard only rank 0 writes the file; the others take the same data and drop it.
    if (shard::rank() != 0) {
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
        throw Error(
            fmt::format("{}: shorter than the {} bytes the checkpointed run wrote", path, keep));
      }
      std::filesystem::resize_file(path, keep, ec);
      if (ec) throw Error(fmt::format("{}: cannot truncate: {}", path, ec.message()));
      f = std::make_shared<std::fstream>(path, std::ios::in | std::ios::out | std::ios::binary);
      if (f && *f) f->seekp(static_cast<std::streamoff>(keep));
    } else {
      f = std::make_shared<std::fstream>(path, std::ios::out | std::ios::binary | std::ios::trunc);
    }
    if (!*f) throw Error(fmt::format("{}: cannot create", path));
    files.push_back(f);
    outputFiles.emplace_back(f, path);
    engine.connectStream(name, [f, path](uint64_t, std::span<uint8_t> data) {
      f->write(reinterpret_cast<const char*>(data.data()),
               static_cast<std::streamsize>(data.size()));
      if (!*f) throw Error(fmt::format("{}: write failed", path));
    });
  }
  if (!o.unconnectedOk) {
    if (const auto left = engine.unconnectedStreams(); !left.empty()) {
      const ExeStream& st = exe.streams[exe.findStream(left.front())];
      throw Error(fmt::format(
          "{} stream \"{}\" is not connected (give {} {}=FILE, or --unconnected-ok to {})",
          streamDirectionName(st.direction), st.name,
          st.direction == StreamDirection::HostToDevice ? "--input" : "--output", st.name,
          st.direction == StreamDirection::HostToDevice ? "send zeros" : "drop its data"));
    }
  }
  engine.setUnconnectedOk(o.unconnectedOk);
  uint64_t syncs = resumed.syncs;
  bool saved = false;
  if (o.checkpointAt != 0) {
    if (o.checkpointAt <= syncs) {
      throw Error(fmt::format("--checkpoint-at {}: the restored run is already at sync {}",
                              o.checkpointAt, syncs));
    }
    device->setSyncBreak(true);  // internal syncs count too
    engine.setSyncObserver([&](const RunResult& r) {
      if (++syncs != o.checkpointAt) return true;
      RunCheckpoint c;
      c.syncs = syncs;
      c.executable = true;
      c.exeCrc = fileCrc(o.elfPath);
      c.offsets = engine.streamOffsets();
      c.hostSyncCounts = engine.hostSyncCounts();
      saveRun(*device, o, c, r.cycles);
      saved = true;
      return false;
    });
  }

  const auto start = std::chrono::steady_clock::now();
  const RunResult result = engine.run(o.maxCycles);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Every output byte must reach its file: a full disk is an error, not a success.
  for (auto& [f, path] : outputFiles) {
    f->flush();
    const bool ok = !f->fail();
    f->close();
    if (!ok || f->fail()) throw Error(fmt::format("{}: write failed", path));
  }
  const unsigned tiles = exe.target.tiles;
  printConsoles(*device, tiles, tiles > 1, savedConsoles);
  if (saved) return 0;
  if (o.checkpointAt != 0) {
    return missedCheckpoint(o, syncs, exitStatus(*device, result, tiles));
  }
  if (o.stats) {
    printStats(*device, tiles, result.cycles, seconds);
    const EngineStats s = engine.stats();
    fmt::print(reportStream(stderr), "host syncs:    {} ({} bytes to the device, {} from it)\n",
               s.hostSyncs, s.hostToDeviceBytes, s.deviceToHostBytes);
    fmt::print(reportStream(stderr), "host I/O:      {:.6f} s ({:.1f} us per host sync)\n",
               s.hostIoSeconds, s.hostSyncs ? s.hostIoSeconds / double(s.hostSyncs) * 1e6 : 0.0);
    fmt::print(reportStream(stderr),
               "prefetch wait: {} host syncs, {:.6f} s; {} bytes not prefetched\n", s.prefetchWaits,
               s.prefetchWaitSeconds, s.prefetchMissBytes);
  }
  return exitStatus(*device, result, tiles);
}

}  // namespace

int runProgram(const Options& o) {
  DeviceOptions options = deviceOptions(o);
  if (!o.vcd.empty() && o.device != "rtl") {
    throw Error(
        fmt::format("--trace-vcd needs --device rtl (device \"{}\" has no waveforms)", o.device));
  }
  if (o.checkpointAt != 0 && o.save.empty()) {
    throw Error("--checkpoint-at needs --save FILE");
  }
  if (!o.save.empty() && o.checkpointAt == 0) {
    throw Error("--save needs --checkpoint-at SYNC");
  }
  if (!o.elfPath.empty() && isExecutable(o.elfPath)) return runExecutable(o, options);
  std::unique_ptr<Device> device;
  unsigned enabled = 1;
  uint64_t syncs = 0;
  std::vector<std::string> savedConsoles;
  if (!o.restore.empty()) {
    if (!o.elfPath.empty()) {
      throw Error(
          "--restore of a bare program takes no program file (the checkpoint "
          "holds the memory; a *.tess executable is given with its checkpoint)");
    }
    const LoadedCheckpoint checkpoint = loadCheckpoint(o.restore);
    if (options.tiles == 0 && options.preset.empty()) options.tiles = checkpoint.info.tiles;
    if (o.device == "model" && options.preset.empty()) {
      options.tileMemBytes = checkpoint.info.tileMemBytes;
    }
    device = openRunDevice(o, options);
    const RunCheckpoint c = restoreInto(*device, checkpoint, o.restore, savedConsoles);
    if (c.executable) {
      throw Error(fmt::format("{}: a checkpoint of a *.tess run: give the executable", o.restore));
    }
    syncs = c.syncs;
    const unsigned tiles = device->info().tiles;
    for (unsigned t = 1; t < tiles; ++t) {
      device->writeControl(TESS_CR_TILE_SEL, t);
      if (device->readControl(TESS_CR_T_ENABLE) != 0) enabled = tiles;
    }
    device->writeControl(TESS_CR_TILE_SEL, 0);
  } else {
    if (o.elfPath.empty()) throw Error("give a program (prog.elf) or --restore FILE");
    device = openRunDevice(o, options);
    const unsigned tiles = device->info().tiles;
    if (o.allTiles) {
      loadProgramOnAllTiles(*device, o.elfPath);
    } else {
      loadProgram(*device, o.elfPath, 0);
      for (unsigned t = 1; t < tiles; ++t) device->setTileEnabled(t, false);
    }
    enabled = o.allTiles ? tiles : 1;
  }
  if (o.checkpointAt != 0) {
    if (o.checkpointAt <= syncs) {
      throw Error(fmt::format("--checkpoint-at {}: the restored run is already at sync {}",
                              o.checkpointAt, syncs));
    }
    requireCheckpoints(*device, o.device);
    device->setSyncBreak(true);  // internal syncs count too
  }

  const auto start = std::chrono::steady_clock::now();
  const uint64_t first =
      device->readControl(TESS_CR_CYCLE_LO) | uint64_t{device->readControl(TESS_CR_CYCLE_HI)} << 32;
  RunResult result = device->run(o.maxCycles > first ? o.maxCycles - first : 0);
  while (result.reason == StopReason::HostSync || result.reason == StopReason::SyncBreak) {
    ++syncs;
    if (o.checkpointAt != 0 && syncs == o.checkpointAt) {
      RunCheckpoint c;
      c.syncs = syncs;
      saveRun(*device, o, c, result.cycles);
      printConsoles(*device, enabled, enabled > 1, savedConsoles);
      return 0;
    }
    if (o.stats && result.reason == StopReason::HostSync) {
      fmt::print(reportStream(stderr), "host sync {}\n", result.hostSyncId);
    }
    result = device->run(o.maxCycles - result.cycles);  // the limit counts chip cycles in all
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  printConsoles(*device, enabled, enabled > 1, savedConsoles);
  if (o.stats) printStats(*device, enabled, result.cycles, seconds);
  if (o.checkpointAt != 0) {
    return missedCheckpoint(o, syncs, exitStatus(*device, result, enabled));
  }

  return exitStatus(*device, result, enabled);
}

}  // namespace tessera::tools

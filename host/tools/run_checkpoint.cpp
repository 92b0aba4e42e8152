#include "run_checkpoint.hpp"

#include <fmt/format.h>

#include <charconv>
#include <chrono>
#include <sstream>

#include "crc32.hpp"
#include "file_io.hpp"
#include "run_report.hpp"
#include "tessera/shard.hpp"

namespace tessera::tools {
namespace {

constexpr uint64_t kMaxCheckpointBytes = uint64_t{4} << 30;
// Counts beyond this are refused: a run at 1 GHz would need 146 years to reach it, and a counter
// near 2^64 would wrap when the run continues (docs/limits.md).
constexpr uint64_t kMaxCount = uint64_t{1} << 62;

std::vector<uint64_t> readNumbers(std::istream& in, const std::string& path, const char* item) {
  std::string line;
  std::getline(in, line);
  std::istringstream nums(line);
  std::vector<uint64_t> out;
  for (std::string word; nums >> word;) {
    uint64_t v = 0;
    const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), v);
    if (ec != std::errc() || end != word.data() + word.size() || v >= kMaxCount) {
      throw Error(fmt::format("{}: tessera-run item \"{}\": \"{}\" is not a count below 2^62", path,
                              item, word));
    }
    out.push_back(v);
  }
  return out;
}

}  // namespace

std::vector<uint8_t> encodeRunCheckpoint(const RunCheckpoint& c) {
  std::string s = fmt::format("tessera-run 1\nsyncs {}\n", c.syncs);
  if (c.executable) {
    s += fmt::format("exe-crc {}\noffsets", c.exeCrc);
    for (uint64_t o : c.offsets) s += fmt::format(" {}", o);
    s += "\nhost-syncs";
    for (uint64_t n : c.hostSyncCounts) s += fmt::format(" {}", n);
    s += "\n";
  }
  return std::vector<uint8_t>(s.begin(), s.end());
}

RunCheckpoint decodeRunCheckpoint(const std::vector<uint8_t>& data, const std::string& path) {
  RunCheckpoint c;
  std::istringstream in(std::string(data.begin(), data.end()));
  std::string word;
  if (!(in >> word) || word != "tessera-run" || !(in >> word) || word != "1") {
    throw Error(fmt::format("{}: not a checkpoint written by tessera-run", path));
  }
  bool haveCounts = false;
  while (in >> word) {
    if (word == "syncs") {
      const std::vector<uint64_t> n = readNumbers(in, path, "syncs");
      if (n.size() != 1)
        throw Error(fmt::format("{}: tessera-run item \"syncs\" needs one count", path));
      c.syncs = n[0];
    } else if (word == "exe-crc") {
      c.executable = true;
      in >> c.exeCrc;
    } else if (word == "offsets") {
      c.offsets = readNumbers(in, path, "offsets");
    } else if (word == "host-syncs") {
      c.hostSyncCounts = readNumbers(in, path, "host-syncs");
      haveCounts = true;
    } else {
      throw Error(fmt::format("{}: unknown tessera-run item \"{}\"", path, word));
    }
    if (!in && !in.eof()) throw Error(fmt::format("{}: bad tessera-run item \"{}\"", path, word));
  }
  if (c.executable && !haveCounts) {
    throw Error(fmt::format(
        "{}: a checkpoint of a *.tess run without its host sync counts (written by an older "
        "tessera-run; take it again)",
        path));
  }
  return c;
}

LoadedCheckpoint loadCheckpoint(const std::string& path) {
  LoadedCheckpoint c;
  c.bytes = readRegularFile(path, kMaxCheckpointBytes, "checkpoint");
  try {
    c.info = readCheckpointInfo(c.bytes);
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", path, e.what()));
  }
  return c;
}

RunCheckpoint restoreInto(Device& device, const LoadedCheckpoint& c, const std::string& path,
                          std::vector<std::string>& consoles) {
  CheckpointInfo restored;
  const auto start = std::chrono::steady_clock::now();
  try {
    restored = restoreCheckpoint(device, c.bytes);
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", path, e.what()));
  }
  fmt::print(reportStream(stderr),
             "tessera-run: restored {} ({} bytes, sync at cycle {}) in {:.3f} s\n", path,
             c.bytes.size(), restored.cycle,
             std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  consoles = restored.consoles;
  return decodeRunCheckpoint(restored.appData, path);
}

uint32_t fileCrc(const std::string& path) {
  return crc32(readRegularFile(path, kMaxCheckpointBytes, "executable"));
}

void saveRun(Device& device, const Options& o, const RunCheckpoint& c, uint64_t cycles) {
  const auto start = std::chrono::steady_clock::now();
  // Every rank reads the chip (collective); rank 0 alone writes the file.
  const std::vector<uint8_t> bytes = saveCheckpoint(device, encodeRunCheckpoint(c));
  if (shard::rank() == 0) writeFileChecked(o.save, bytes);
  fmt::print(reportStream(stderr),
             "tessera-run: checkpoint at sync {} (cycle {}) saved to {} ({} bytes) in {:.3f} s\n",
             c.syncs, cycles, o.save, bytes.size(),
             std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

void requireCheckpoints(Device& device, const std::string& name) {
  if (!hasCheckpointSupport(device)) {
    throw Error(fmt::format(
        "--checkpoint-at: device \"{}\" has no checkpoint support (its chip is built without the "
        "checkpoint registers, HAS_CHECKPOINT = 0, like the iCE40 board's configuration)",
        name));
  }
}

}  // namespace tessera::tools

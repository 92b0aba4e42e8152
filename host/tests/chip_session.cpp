// Stepping a chip program from stop to stop on one device.
#include "chip_session.hpp"

#include "program_loader.hpp"
#include "tessera/chip_params.h"

namespace tessera::test {

ChipSession::ChipSession(std::string spec, const DeviceOptions& options)
    : spec_(std::move(spec)), dev_(openDevice(spec_, options)) {
  const ChipInfo info = dev_->info();
  tiles_ = info.tiles;
  memBytes_ = info.tileMemBytes;
  records_.resize(tiles_);
}

ElfImage ChipSession::load(const std::string& path, uint64_t maxCycles) {
  ElfImage image = ElfImage::fromFile(path, memBytes_);
  // loadProgram resets after each tile; memory survives a reset, so every tile keeps its image.
  for (unsigned t = 0; t < tiles_; ++t) loadProgram(*dev_, path, t);
  maxCycles_ = maxCycles;
  for (auto& r : records_) r.clear();
  return image;
}

void ChipSession::recordRetirements() {
  dev_->setRetireSink([this](const RetireRecord& r) {
    std::lock_guard<std::mutex> lock(recordsMutex_);
    if (r.tile < records_.size()) records_[r.tile].push_back(r);
  });
}

std::vector<RetireRecord> ChipSession::takeRecords(unsigned tile) {
  std::lock_guard<std::mutex> lock(recordsMutex_);
  std::vector<RetireRecord> out;
  out.swap(records_.at(tile));
  return out;
}

RunResult ChipSession::step() {
  const uint64_t done = cycleCounter();
  return dev_->run(done >= maxCycles_ ? 0 : maxCycles_ - done);
}

std::vector<uint8_t> ChipSession::memory(unsigned tile) {
  std::vector<uint8_t> bytes(memBytes_);
  dev_->readMemory(tile, 0, bytes);
  return bytes;
}

uint64_t ChipSession::cycleCounter() {
  const uint64_t lo = dev_->readControl(TESS_CR_CYCLE_LO);
  const uint64_t hi = dev_->readControl(TESS_CR_CYCLE_HI);
  return hi << 32 | lo;
}

}  // namespace tessera::test

// Stepping a chip program from stop to stop on one device.
#include "chip_session.hpp"

#include "backends.hpp"
#include "program_loader.hpp"
#include "tessera/chip_params.h"

namespace tessera::test {

ChipSession::ChipSession(std::string spec, const DeviceOptions& options) : spec_(std::move(spec)) {
  backends::Opened opened = backends::open(spec_, options);
  server_ = std::move(opened.server);
  dev_ = std::move(opened.device);
  const ChipInfo info = dev_->info();
  tiles_ = info.tiles;
}

ElfImage ChipSession::load(const std::string& path, uint64_t maxCycles) {
  maxCycles_ = maxCycles;
  return loadProgramOnAllTiles(*dev_, path);
}

RunResult ChipSession::step() {
  const uint64_t done = cycleCounter();
  return dev_->run(done >= maxCycles_ ? 0 : maxCycles_ - done);
}

uint64_t ChipSession::cycleCounter() {
  const uint64_t lo = dev_->readControl(TESS_CR_CYCLE_LO);
  const uint64_t hi = dev_->readControl(TESS_CR_CYCLE_HI);
  return hi << 32 | lo;
}

}  // namespace tessera::test

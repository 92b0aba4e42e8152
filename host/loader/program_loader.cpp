#include "program_loader.hpp"

namespace tessera {

ElfImage loadProgram(Device& dev, const std::string& path, unsigned tile) {
  ElfImage image = ElfImage::fromFile(path, dev.info().tileMemBytes);
  for (const ElfSegment& seg : image.segments()) dev.writeMemory(tile, seg.addr, seg.bytes);
  dev.reset();
  return image;
}

ElfImage loadProgramOnAllTiles(Device& dev, const std::string& path) {
  const ChipInfo info = dev.info();
  ElfImage image = ElfImage::fromFile(path, info.tileMemBytes);
  for (unsigned t = 0; t < info.tiles; ++t) {
    for (const ElfSegment& seg : image.segments()) dev.writeMemory(t, seg.addr, seg.bytes);
  }
  dev.reset();
  return image;
}

}  // namespace tessera

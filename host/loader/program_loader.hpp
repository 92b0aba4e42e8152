// Putting a tile program on a device: validate the ELF for the device's memory size, write its
// segments into tile memory, reset the device so every supervisor starts at pc 0.
#pragma once

#include <string>

#include "tessera/device.hpp"
#include "tessera/elf_image.hpp"

namespace tessera {

/// Load the ELF at path into one tile of dev and reset dev.
ElfImage loadProgram(Device& dev, const std::string& path, unsigned tile = 0);
/// Load the same ELF into every tile of dev and reset dev.
ElfImage loadProgramOnAllTiles(Device& dev, const std::string& path);

}  // namespace tessera

// Loading of a tile program: an rv32 little-endian executable ELF (docs/tile.md: code and data
// in SRAM from address 0, the supervisor starts at pc 0), validated before anything touches a
// device.
//
// The loader's public header: the graph compiler (sw/compiler) reads its codelet image with it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tessera {

/// Bytes to place at an address of tile memory (file contents, then zeros up to memsz).
struct ElfSegment {
  uint32_t addr = 0;
  std::vector<uint8_t> bytes;
};

/// A validated tile program. Every problem is reported as tessera::Error naming the file.
class ElfImage {
 public:
  /// Largest ELF file fromFile reads (docs/limits.md): far above any tile program with symbols.
  static constexpr uint64_t kMaxFileBytes = uint64_t{256} << 20;
  /// Read and validate the ELF file at path for a tile memory of memBytes bytes.
  static ElfImage fromFile(const std::string& path, uint32_t memBytes);
  /// Validate an ELF held in memory; name is used in error messages.
  static ElfImage fromBytes(std::span<const uint8_t> bytes, const std::string& name,
                            uint32_t memBytes);

  /// Entry point (always 0 for a tile program).
  uint32_t entry() const { return entry_; }
  /// Loadable segments in file order, bss included as zeros.
  const std::vector<ElfSegment>& segments() const { return segments_; }
  /// Address of a defined global or local symbol (functions and objects), if the ELF has it.
  std::optional<uint32_t> symbol(const std::string& name) const;
  /// Read a little-endian word of the loaded image (a segment byte or bss zero); nullopt if the
  /// word is not wholly inside one segment.
  std::optional<uint32_t> word(uint32_t addr) const;

 private:
  ElfImage() = default;

  uint32_t entry_ = 0;
  std::vector<ElfSegment> segments_;
  std::map<std::string, uint32_t, std::less<>> symbols_;
};

}  // namespace tessera

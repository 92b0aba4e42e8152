// The codelet linker (docs/compiler.md, "The codelet image"): links, per compiled graph, the graph
// runtime and only the vertices the graph uses out of the relocatable codelet library
// (libtessera_codelets.a: one rv32 ELF object per source file). It lays sections out as
// sw/runtime/link.ld does, keeps only what the roots reach through relocations (as ld.lld's
// --gc-sections), resolves symbols and applies the relocations RV32IMF code has.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "tessera/graph.hpp"

namespace tessera {

/// A linked codelet image: what a compiled graph loads at address 0 of every tile.
struct CodeletImage {
  /// Bytes from address 0 to imageEnd (code, read-only data, descriptors, data, bss as zeros).
  std::vector<uint8_t> bytes;
  /// __tess_image_end: the first byte after the image (4-aligned).
  uint32_t imageEnd = 0;
  /// The linked vertices, in the order of the descriptor table.
  std::vector<CodeletInfo> codelets;
  /// Addresses of the global symbols and of the linker script's symbols.
  std::map<std::string, uint32_t, std::less<>> symbols;
  /// Relocations applied, by ELF relocation type (R_RISCV_*).
  std::map<uint32_t, uint32_t> relocationsApplied;
  /// The linked codelet called name, or nullptr.
  const CodeletInfo* codelet(const std::string& name) const;
};

/// The name of a RISC-V ELF relocation type ("R_RISCV_HI20"), or "type N".
std::string riscvRelocationName(uint32_t type);

/// The relocatable codelet library: an ar archive of rv32 ELF relocatable objects (or one object).
class CodeletLibrary {
 public:
  /// Largest library file read (docs/limits.md): far above the library's ~200 KB.
  static constexpr uint64_t kMaxFileBytes = uint64_t{64} << 20;

  /// The library at path, read once per process (later calls share it).
  static std::shared_ptr<const CodeletLibrary> fromFile(const std::string& path);
  /// Parse a library held in memory; name is used in error messages.
  static std::shared_ptr<const CodeletLibrary> fromBytes(std::span<const uint8_t> bytes,
                                                         const std::string& name);
  ~CodeletLibrary();

  /// Names of the vertices the library defines (their tess_codelet_NAME descriptors), sorted.
  const std::vector<std::string>& vertexNames() const;
  /// Link the runtime (root: _start) and the named vertices; throws tessera::Error naming an
  /// unknown vertex, an undefined symbol, an unsupported relocation or section.
  CodeletImage link(const std::set<std::string>& vertices) const;
  /// link(), once per set of vertex names in this process.
  std::shared_ptr<const CodeletImage> linkCached(const std::set<std::string>& vertices) const;
  /// The image of every vertex (what Graph::codelets() lists).
  std::shared_ptr<const CodeletImage> linkAll() const;

  struct Impl;

 private:
  explicit CodeletLibrary(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera

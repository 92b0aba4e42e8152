#include "retire_compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <utility>

namespace tessera {
namespace {

constexpr size_t kHistory = 8;  // records of context shown before the divergence

// Registers of every context reconstructed from the stream: all start at 0 (docs/tile.md, reset).
struct RegState {
  std::map<std::pair<unsigned, unsigned>, std::array<uint32_t, 64>>
      regs;  // (tile, ctx) -> x0..31, f0..31

  void apply(const RetireRecord& r) {
    auto& file = regs.try_emplace({r.tile, r.context}, std::array<uint32_t, 64>{}).first->second;
    if (r.dest == DestKind::X && r.rd != 0) file[r.rd] = r.value;
    if (r.dest == DestKind::F) file[32 + r.rd] = r.value;
  }

  std::string describe(unsigned tile, unsigned ctx) const {
    auto it = regs.find({tile, ctx});
    std::array<uint32_t, 64> file{};
    if (it != regs.end()) file = it->second;
    std::string out;
    for (unsigned i = 0; i < 64; ++i) {
      out += fmt::format("{}{:<3}={:08x}{}", i < 32 ? "x" : "f", i % 32, file[i],
                         (i % 8 == 7) ? "\n" : " ");
    }
    return out;
  }
};

std::string side(std::span<const RetireRecord> s, size_t i) {
  return i < s.size() ? formatRecord(s[i]) : std::string("<end of stream>");
}

}  // namespace

std::string formatRecord(const RetireRecord& r) {
  std::string dest;
  switch (r.dest) {
    case DestKind::None:
      dest = "-";
      break;
    case DestKind::X:
      dest = fmt::format("x{} <- 0x{:08x}", r.rd, r.value);
      break;
    case DestKind::F:
      dest = fmt::format("f{} <- 0x{:08x}", r.rd, r.value);
      break;
  }
  return fmt::format("cycle {} tile {} ctx {} pc 0x{:08x} insn 0x{:08x} {}", r.cycle, r.tile,
                     r.context, r.pc, r.insn, dest);
}

std::optional<Divergence> compareRetireStreams(std::span<const RetireRecord> a,
                                               std::span<const RetireRecord> b,
                                               const std::string& nameA, const std::string& nameB) {
  const size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  if (i == a.size() && i == b.size()) return std::nullopt;

  // Up to i both streams are equal, so one reconstruction is the state both sides agree on.
  RegState state;
  for (size_t k = 0; k < i; ++k) state.apply(a[k]);
  const RetireRecord& at = i < a.size() ? a[i] : b[i];
  std::string report = fmt::format("first divergence at retirement #{}\n  {:>6}: {}\n  {:>6}: {}\n",
                                   i, nameA, side(a, i), nameB, side(b, i));
  report += fmt::format("last agreed records of tile {} context {}:\n", at.tile, at.context);
  std::vector<size_t> recent;
  for (size_t k = i; k-- > 0 && recent.size() < kHistory;) {
    if (a[k].tile == at.tile && a[k].context == at.context) recent.push_back(k);
  }
  if (recent.empty()) report += "  (none)\n";
  for (auto it = recent.rbegin(); it != recent.rend(); ++it) {
    report += fmt::format("  #{} {}\n", *it, formatRecord(a[*it]));
  }
  report += fmt::format("registers of tile {} context {} just before it (both sides):\n{}", at.tile,
                        at.context, state.describe(at.tile, at.context));
  return Divergence{i, std::move(report)};
}

}  // namespace tessera

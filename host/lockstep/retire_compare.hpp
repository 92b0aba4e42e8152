// Comparison of two retirement streams (docs/tile.md, "Retirement trace"): finds the first record
// where two implementations of the tile disagree and describes both sides' architectural state
// there.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tessera/device.hpp"

namespace tessera {

/// The first point where two retirement streams differ.
struct Divergence {
  size_t index = 0;    ///< position of the first differing record (or the shorter length)
  std::string report;  ///< human-readable: both records, recent history, both register states
};

/// Compare streams record by record; names label the sides in the report (e.g. "model", "rtl").
std::optional<Divergence> compareRetireStreams(std::span<const RetireRecord> a,
                                               std::span<const RetireRecord> b,
                                               const std::string& nameA, const std::string& nameB);

/// Format one record as "cycle 42 tile 0 ctx 1 pc 0x00000010 insn 0x00a50533 x10 <- 0x00000003".
std::string formatRecord(const RetireRecord& r);

}  // namespace tessera

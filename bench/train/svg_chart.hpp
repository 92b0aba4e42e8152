// SVG pictures of a training run, as plain text with no dependencies: the per-tile BSP breakdown
// (stacked horizontal bars) and the loss and accuracy curves (two panels sharing the step axis).
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace tessera::bench {

/// Renders the benchmark's charts as SVG 1.1 documents.
class SvgChart {
 public:
  /// Cycles of one tile in each BSP phase.
  struct TileTimes {
    uint64_t compute = 0;
    uint64_t syncWait = 0;
    uint64_t exchange = 0;
    uint64_t hostIo = 0;
    uint64_t interChip = 0;  ///< modelled chip-to-chip all-reduce of replicas (the tile waits)
  };
  /// One point of a curve; points with a non-finite y are left out (the line breaks there).
  struct Point {
    double x;
    double y;
  };

  /// One bar per tile (a <g class="tile"> of up to five <rect class="PHASE"> segments), cycles on
  /// the x axis, a legend, and the phases' share of all tiles' cycles in the legend.
  static std::string bspBreakdown(std::span<const TileTimes> tiles, const std::string& title);
  /// Top panel: loss against step (a <polyline class="loss">); bottom panel: accuracy in percent
  /// (given as a fraction 0..1) against step (a <polyline class="accuracy">, a <circle
  /// class="accuracy"> per point).
  static std::string trainingCurves(std::span<const Point> loss, std::span<const Point> accuracy,
                                    const std::string& title);
  /// Write an SVG document to path; throws tessera::Error naming the file on failure.
  static void write(const std::string& path, const std::string& svg);
  /// Text escaped for XML character data and attribute values.
  static std::string escape(const std::string& text);
};

}  // namespace tessera::bench

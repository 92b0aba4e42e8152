// The modelled time of the replicas' gradient all-reduce over chip-to-chip links (docs/training.md,
// "Replicas over MPI"): the host sums the gradients over MPI, but a chip of the IPU's kind would
// sum them over its own links, and this is the time that would take.
#pragma once

#include <cstdint>

namespace tessera::bench {

/// A bandwidth-optimal ring all-reduce (reduce-scatter, then all-gather) over R chips: the N bytes
/// are cut into R chunks; in each of 2(R - 1) steps every chip sends one chunk to its right-hand
/// neighbour and receives one from its left, so each chip sends and receives 2(R - 1)/R x N bytes:
///   t = 2(R - 1)/R x N / B + 2(R - 1) x L
/// with B a chip's bandwidth in one direction and L the latency of one step (one hop plus the
/// sync that ends it). R = 1 takes no time.
struct AllReduceModel {
  /// Bytes per second one chip sends (and, at the same time, receives): MK2 has 10 IPU-Links,
  /// 320 GB/s per chip counted both ways, so 160 GB/s each way.
  double bytesPerSecond = 160e9;
  /// Seconds per ring step (assumed: no published figure; a chip-to-chip hop and a sync).
  double stepLatencySeconds = 1e-6;

  /// Seconds to all-reduce `bytes` over `replicas` chips.
  double seconds(uint64_t bytes, unsigned replicas) const;
  /// Bytes one chip sends in that all-reduce: 2(R - 1)/R x N.
  double bytesSentPerChip(uint64_t bytes, unsigned replicas) const;
};

}  // namespace tessera::bench

// Drives the verilated tess_fpu with one operation per cycle and checks every result and fflags
// bit-exactly against tessera::fp, three cycles after issue.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>

#include "fpu_ops.hpp"
#include "operand_gen.hpp"

class Vtess_fpu;
class VerilatedContext;

namespace tessera::fpu_test {

/// Pipelined driver and checker of tess_fpu.
class FpuDriver {
 public:
  /// A reset FPU.
  FpuDriver();
  ~FpuDriver();
  FpuDriver(const FpuDriver&) = delete;
  FpuDriver& operator=(const FpuDriver&) = delete;

  /// Issues op this cycle; its result is checked when it leaves the pipeline.
  void issue(FpuOp op, unsigned rm, const Operands& o);
  /// Issues a bubble (valid_i low) this cycle.
  void bubble();
  /// Clocks bubbles until every issued operation has been checked.
  void drain();
  /// Operations checked so far.
  uint64_t checked() const { return checked_; }
  /// Operations whose result, flags or valid_o differed.
  uint64_t mismatches() const { return mismatches_; }

 private:
  struct Pending {
    bool valid;
    FpuOp op;
    unsigned rm;
    Operands o;
    fp::Result want;
  };
  void step(const Pending& p);

  std::unique_ptr<VerilatedContext> context_;
  std::unique_ptr<Vtess_fpu> top_;
  std::deque<Pending> pipe_;
  uint64_t checked_ = 0;
  uint64_t mismatches_ = 0;
};

}  // namespace tessera::fpu_test

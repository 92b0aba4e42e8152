// Drives the verilated tess_fpu_divsqrt: every context runs FDIV.S/FSQRT.S back to back, each op
// taking its 8 passes, and every result is checked against tessera::fp, together with its
// context and its timing (valid_o exactly 3 cycles after the cycle of pass 7).
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <random>

#include "fpu_ops.hpp"
#include "operand_gen.hpp"

class Vtess_fpu_divsqrt;
class VerilatedContext;

namespace tessera::fpu_test {

/// How passes are handed to contexts.
enum class PassSchedule {
  kRoundRobin,  ///< as the core does: cycle c belongs to context c mod 6
  kRandom,      ///< any busy context in any cycle, with idle cycles: the unit must not care
};

/// Driver and checker of tess_fpu_divsqrt (Contexts = 6).
class DivSqrtDriver {
 public:
  /// A reset unit driven with the given schedule; seed drives the random schedule and the junk
  /// put on the operand inputs outside pass 0.
  DivSqrtDriver(PassSchedule schedule, uint64_t seed);
  ~DivSqrtDriver();
  DivSqrtDriver(const DivSqrtDriver&) = delete;
  DivSqrtDriver& operator=(const DivSqrtDriver&) = delete;

  /// Starts op (kDiv or kSqrt) on the next context that becomes free, clocking as needed.
  void submit(FpuOp op, unsigned rm, const Operands& o);
  /// Clocks until every submitted operation has been checked.
  void drain();
  /// Operations checked so far.
  uint64_t checked() const { return checked_; }
  /// Operations whose result, flags, context or timing differed.
  uint64_t mismatches() const { return mismatches_; }
  /// Clock cycles run.
  uint64_t cycles() const { return cycle_; }

  static constexpr int kContexts = 6;

 private:
  struct Job {
    bool busy = false;
    int next_pass = 0;
    FpuOp op = FpuOp::kDiv;
    unsigned rm = 0;
    Operands o{0, 0, 0};
    fp::Result want{0, 0};
  };
  struct Expect {
    uint64_t cycle;  // cycle in which valid_o must be high
    int ctx;
    Job job;
  };
  void clock();
  int free_context() const;

  PassSchedule schedule_;
  std::mt19937_64 rng_;
  std::unique_ptr<VerilatedContext> context_;
  std::unique_ptr<Vtess_fpu_divsqrt> top_;
  std::array<Job, kContexts> jobs_{};
  std::deque<Expect> expect_;
  uint64_t cycle_ = 0;
  uint64_t checked_ = 0;
  uint64_t mismatches_ = 0;
};

}  // namespace tessera::fpu_test

#include "divsqrt_driver.hpp"

#include <cstdio>

#include "Vtess_fpu_divsqrt.h"
#include "verilated.h"

namespace tessera::fpu_test {
namespace {
constexpr int kPasses = 8;        // LONG_OP_ROUNDS
constexpr uint64_t kLatency = 3;  // valid_o after the cycle of the last pass
constexpr uint64_t kMaxReports = 20;
}  // namespace

DivSqrtDriver::DivSqrtDriver(PassSchedule schedule, uint64_t seed)
    : schedule_(schedule), rng_(seed), context_(std::make_unique<VerilatedContext>()) {
  top_ = std::make_unique<Vtess_fpu_divsqrt>(context_.get());
  top_->clk_i = 0;
  top_->rst_ni = 0;
  top_->pass_i = 0;
  top_->eval();
  top_->rst_ni = 1;
  top_->eval();
}

DivSqrtDriver::~DivSqrtDriver() {
  top_->final();
}

int DivSqrtDriver::free_context() const {
  for (int k = 0; k < kContexts; ++k) {
    if (!jobs_[k].busy) return k;
  }
  return -1;
}

void DivSqrtDriver::submit(FpuOp op, unsigned rm, const Operands& o) {
  int k;
  while ((k = free_context()) < 0) clock();
  Job& j = jobs_[k];
  j.busy = true;
  j.next_pass = 0;
  j.op = op;
  j.rm = rm;
  j.o = o;
  j.want = reference(op, rm, o.a, o.b, 0);
}

void DivSqrtDriver::drain() {
  for (;;) {
    bool any_busy = false;
    for (const Job& j : jobs_) any_busy |= j.busy;
    if (!any_busy && expect_.empty()) return;
    clock();
  }
}

void DivSqrtDriver::clock() {
  int ctx = -1;
  if (schedule_ == PassSchedule::kRoundRobin) {
    const int k = static_cast<int>(cycle_ % kContexts);
    if (jobs_[k].busy) ctx = k;
  } else if (rng_() % 8 != 0) {
    const int start = static_cast<int>(rng_() % kContexts);
    for (int i = 0; i < kContexts && ctx < 0; ++i) {
      const int k = (start + i) % kContexts;
      if (jobs_[k].busy) ctx = k;
    }
  }
  // Outside pass 0 the operand inputs carry junk: the unit must have latched them.
  top_->pass_i = ctx >= 0;
  top_->ctx_i = ctx >= 0 ? ctx : static_cast<int>(rng_() % kContexts);
  top_->pass_idx_i = rng_() % kPasses;
  top_->sqrt_i = rng_() & 1;
  top_->rm_i = rng_() % 5;
  top_->a_i = static_cast<uint32_t>(rng_());
  top_->b_i = static_cast<uint32_t>(rng_());
  if (ctx >= 0) {
    Job& j = jobs_[ctx];
    top_->pass_idx_i = j.next_pass;
    if (j.next_pass == 0) {
      top_->sqrt_i = j.op == FpuOp::kSqrt;
      top_->rm_i = j.rm;
      top_->a_i = j.o.a;
      top_->b_i = j.o.b;
    }
    if (++j.next_pass == kPasses) {
      expect_.push_back({cycle_ + kLatency, ctx, j});
      j.busy = false;
    }
  }
  top_->clk_i = 1;
  top_->eval();
  top_->clk_i = 0;
  top_->eval();
  ++cycle_;
  // The outputs now show cycle cycle_ (registers updated by the edge that ended cycle_ - 1).
  const bool valid = top_->valid_o;
  const bool due = !expect_.empty() && expect_.front().cycle == cycle_;
  if (valid != due) {
    ++mismatches_;
    if (mismatches_ <= kMaxReports) {
      std::printf("cycle %llu: valid_o %d, expected %d\n", static_cast<unsigned long long>(cycle_),
                  valid, due);
    }
  }
  if (!due) return;
  const Expect e = expect_.front();
  expect_.pop_front();
  ++checked_;
  const uint32_t got = top_->result_o;
  const uint32_t flags = top_->fflags_o;
  const int got_ctx = top_->ctx_o;
  if (!valid || got != e.job.want.value || flags != e.job.want.flags || got_ctx != e.ctx) {
    ++mismatches_;
    if (mismatches_ <= kMaxReports) {
      std::printf(
          "MISMATCH %-5s rm=%u a=%08x b=%08x ctx=%d expected %08x/%02x got %08x/%02x "
          "ctx %d\n",
          std::string(op_name(e.job.op)).c_str(), e.job.rm, e.job.o.a,
          e.job.op == FpuOp::kDiv ? e.job.o.b : 0, e.ctx, e.job.want.value, e.job.want.flags, got,
          flags, got_ctx);
    }
  }
}

}  // namespace tessera::fpu_test

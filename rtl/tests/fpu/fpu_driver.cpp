#include "fpu_driver.hpp"

#include <cstdio>

#include "Vtess_fpu.h"
#include "verilated.h"

namespace tessera::fpu_test {
namespace {
constexpr size_t kLatency = 3;
constexpr uint64_t kMaxReports = 20;
}  // namespace

FpuDriver::FpuDriver() : context_(std::make_unique<VerilatedContext>()) {
  top_ = std::make_unique<Vtess_fpu>(context_.get());
  top_->clk_i = 0;
  top_->rst_ni = 0;
  top_->valid_i = 0;
  top_->eval();
  top_->rst_ni = 1;
  top_->eval();
}

FpuDriver::~FpuDriver() {
  top_->final();
}

void FpuDriver::issue(FpuOp op, unsigned rm, const Operands& o) {
  step({true, op, rm, o, reference(op, rm, o.a, o.b, o.c)});
}

void FpuDriver::bubble() {
  step({false, FpuOp::kAdd, 0, {0, 0, 0}, {0, 0}});
}

void FpuDriver::drain() {
  for (size_t i = 0; i < kLatency; ++i) bubble();
}

void FpuDriver::step(const Pending& p) {
  top_->valid_i = p.valid;
  top_->op_i = static_cast<uint8_t>(p.op);
  top_->rm_i = p.rm;
  top_->a_i = p.o.a;
  top_->b_i = p.o.b;
  top_->c_i = p.o.c;
  top_->clk_i = 1;
  top_->eval();
  top_->clk_i = 0;
  top_->eval();
  pipe_.push_back(p);
  if (pipe_.size() < kLatency) return;
  // After this edge the output register holds the operation issued kLatency - 1 steps ago.
  const Pending done = pipe_.front();
  pipe_.pop_front();
  const bool valid = top_->valid_o;
  if (valid != done.valid) {
    ++mismatches_;
    if (mismatches_ <= kMaxReports) std::printf("valid_o %d, expected %d\n", valid, done.valid);
    return;
  }
  if (!done.valid) return;
  ++checked_;
  const uint32_t got = top_->result_o;
  const uint32_t flags = top_->fflags_o;
  if (got != done.want.value || flags != done.want.flags) {
    ++mismatches_;
    if (mismatches_ <= kMaxReports) {
      std::printf("MISMATCH %-9s rm=%u a=%08x b=%08x c=%08x expected %08x/%02x got %08x/%02x\n",
                  std::string(op_name(done.op)).c_str(), done.rm, done.o.a, done.o.b, done.o.c,
                  done.want.value, done.want.flags, got, flags);
    }
  }
}

}  // namespace tessera::fpu_test

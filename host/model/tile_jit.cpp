#include "tile_jit.hpp"

#include <asmjit/x86.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>

#include "fp32.hpp"
#include "insn_decoder.hpp"
#include "tessera/device.hpp"

namespace tessera::model {

namespace x86 = asmjit::x86;

struct TileJit::Runtime {
  asmjit::JitRuntime rt;
};

namespace {

// Registers of generated code: rbx the context's x[], r12 SRAM, r13 the frame, r14 the budget
// (instructions that may issue in this call), r15 the instructions of the loop passes done, rbp
// the context's f[] in blocks with FP instructions (callee-saved, so they survive the store hook).
// eax, ecx, edx, esi, edi, r8, r9, xmm0 and xmm1 are scratch.
const x86::Gp kX = x86::rbx;
const x86::Gp kMem = x86::r12;
const x86::Gp kFrame = x86::r13;
const x86::Gp kBudget = x86::r14;
const x86::Gp kDone = x86::r15;
const x86::Gp kF = x86::rbp;

x86::Mem reg(unsigned r) {
  return x86::dword_ptr(kX, static_cast<int32_t>(4 * r));
}
x86::Mem freg(unsigned r) {
  return x86::dword_ptr(kF, static_cast<int32_t>(4 * r));
}
x86::Mem frameField(size_t offset, unsigned size) {
  return x86::Mem(kFrame, static_cast<int32_t>(offset), size);
}

}  // namespace

// The instructions a block may hold (ending it or not).
bool TileJit::translates(Op op) {
  switch (op) {
    case Op::Lui:
    case Op::Auipc:
    case Op::Addi:
    case Op::Slti:
    case Op::Sltiu:
    case Op::Xori:
    case Op::Ori:
    case Op::Andi:
    case Op::Slli:
    case Op::Srli:
    case Op::Srai:
    case Op::Add:
    case Op::Sub:
    case Op::Sll:
    case Op::Slt:
    case Op::Sltu:
    case Op::Xor:
    case Op::Srl:
    case Op::Sra:
    case Op::Or:
    case Op::And:
    case Op::Mul:
    case Op::Mulh:
    case Op::Mulhsu:
    case Op::Mulhu:
    case Op::Lb:
    case Op::Lh:
    case Op::Lw:
    case Op::Lbu:
    case Op::Lhu:
    case Op::Sb:
    case Op::Sh:
    case Op::Sw:
    case Op::Jal:
    case Op::Jalr:
    case Op::Beq:
    case Op::Bne:
    case Op::Blt:
    case Op::Bge:
    case Op::Bltu:
    case Op::Bgeu:
      return true;
    default:
      return false;
  }
}

namespace {

// ---- The F extension (docs/tile.md, "The translating engine": what is translated) ----
//
// FP instructions run on the host's SSE/AVX unit with MXCSR set by the block: all exceptions
// masked, round to nearest even, FTZ and DAZ off, flags cleared at entry. x86 detects tininess
// after rounding and, with underflow masked, raises UE only for a tiny inexact result, as RISC-V
// does, so the sticky flags IE ZE OE UE PE are NV DZ OF UF NX; DE has no counterpart. The block
// ORs them into the context's fflags at its exit. The fix-ups for what x86 does differently
// (NaN results, fmin/fmax, saturating conversions, inf*0 + qNaN) follow the interpreter's
// soft-float (host/fp/fp32.cpp), which the rare paths call.

// FP instructions that read the rounding mode (the dynamic one is checked in the block).
bool fpReadsRm(Op op) {
  switch (op) {
    case Op::Fadd:
    case Op::Fsub:
    case Op::Fmul:
    case Op::Fmadd:
    case Op::Fmsub:
    case Op::Fnmsub:
    case Op::Fnmadd:
    case Op::FcvtWS:
    case Op::FcvtWuS:
    case Op::FcvtSW:
    case Op::FcvtSWu:
      return true;
    default:
      return false;
  }
}

// One rounding mode of an FP instruction that the block handles: RNE statically, or the dynamic
// mode while frm is RNE (checked in the block); FCVT.W[U].S also RTZ (C's float-to-int cast).
bool fpRoundingTranslatable(const DecodedInsn& d) {
  if (d.rm == fp::kRNE || d.rm == kRmDynamic) return true;
  return d.rm == fp::kRTZ && (d.op == Op::FcvtWS || d.op == Op::FcvtWuS);
}

// The FP instructions a block may hold when the host has FMA3. FDIV and FSQRT are long ops (they
// change the schedule) and stay with the interpreter, as do the rounding modes above leave out.
bool fpTranslatable(const DecodedInsn& d) {
  switch (d.op) {
    case Op::Flw:
    case Op::Fsw:
    case Op::Fsgnj:
    case Op::Fsgnjn:
    case Op::Fsgnjx:
    case Op::Fmin:
    case Op::Fmax:
    case Op::FmvXW:
    case Op::FmvWX:
    case Op::Feq:
    case Op::Flt:
    case Op::Fle:
    case Op::Fclass:
      return true;
    default:
      return fpReadsRm(d.op) && fpRoundingTranslatable(d);
  }
}

// FP instructions that run on the host FPU (the block's MXCSR): those that round, min/max and
// the comparisons.
bool fpUsesMxcsr(Op op) {
  return fpReadsRm(op) || op == Op::Fmin || op == Op::Fmax || op == Op::Feq || op == Op::Flt ||
         op == Op::Fle;
}

// The MXCSR of a block: exceptions masked (bits 7..12), RNE, FTZ/DAZ off, no flags.
constexpr uint32_t kBlockMxcsr = 0x1f80;

// RISC-V fflags of the MXCSR flag bits IE DE ZE OE UE PE (index = MXCSR & 0x3f).
constexpr auto kMxcsrToFflags = [] {
  std::array<uint8_t, 64> t{};
  for (unsigned m = 0; m < 64; ++m) {
    t[m] = static_cast<uint8_t>(((m & 1) ? fp::kNV : 0) | ((m & 4) ? fp::kDZ : 0) |
                                ((m & 8) ? fp::kOF : 0) | ((m & 16) ? fp::kUF : 0) |
                                ((m & 32) ? fp::kNX : 0));
  }
  return t;
}();

// The rare paths, called from blocks: the interpreter's soft-float result, value in the low
// word and fflags in the high word.
uint64_t packed(const fp::Result& r) {
  return r.value | uint64_t{r.flags} << 32;
}
uint64_t fpMinCall(uint32_t a, uint32_t b, uint32_t) {
  return packed(fp::min(a, b));
}
uint64_t fpMaxCall(uint32_t a, uint32_t b, uint32_t) {
  return packed(fp::max(a, b));
}
uint64_t fpCvtWSCall(uint32_t a, uint32_t, uint32_t rm) {
  return packed(fp::cvt_w_s(a, rm));
}
uint64_t fpCvtWuSCall(uint32_t a, uint32_t, uint32_t rm) {
  return packed(fp::cvt_wu_s(a, rm));
}
uint64_t fpClassCall(uint32_t a, uint32_t, uint32_t) {
  return fp::fclass(a);
}
using FpCall = uint64_t (*)(uint32_t, uint32_t, uint32_t);

// Emits one FP instruction other than FLW/FSW (those share the integer loads' and stores' code).
// sideExit() gives the label that leaves the block before this instruction. Scratch: eax, ecx,
// edx, esi, edi, r8, xmm0, xmm1; rsp points at the block's MXCSR slots ([rsp] the caller's,
// [rsp + 4] scratch).
template <class SideExit>
void emitFp(x86::Assembler& a, const DecodedInsn& d, SideExit sideExit) {
  const unsigned rd = d.rd;
  // The dynamic rounding mode: only RNE is translated (frm cannot change inside a block).
  if (fpReadsRm(d.op) && d.rm == kRmDynamic) {
    a.cmp(frameField(offsetof(TileJit::Frame, frm), 4), 0);
    a.jne(sideExit());
  }
  // The soft-float result of fn(a, b, rm) into f[rd] (toF) or x[rd], its flags into fflags. The
  // call keeps the block's MXCSR flags as they were (the callee may use the host FPU).
  auto call = [&](FpCall fn, const x86::Mem& srcA, const x86::Mem* srcB, unsigned rm, bool toF,
                  bool flags) {
    a.stmxcsr(x86::dword_ptr(x86::rsp, 4));
    a.mov(x86::edi, srcA);
    if (srcB) a.mov(x86::esi, *srcB);
    a.mov(x86::edx, rm);
    a.mov(x86::rax, reinterpret_cast<uint64_t>(fn));
    a.call(x86::rax);
    a.ldmxcsr(x86::dword_ptr(x86::rsp, 4));
    if (toF) {
      a.mov(freg(rd), x86::eax);
    } else if (rd) {
      a.mov(reg(rd), x86::eax);
    }
    if (flags) {
      a.shr(x86::rax, 32);
      a.mov(x86::rcx, frameField(offsetof(TileJit::Frame, fflags), 8));
      a.or_(x86::dword_ptr(x86::rcx), x86::eax);
    }
  };
  // xmm0 into f[rd], a NaN as the canonical NaN (x86 keeps payloads or gives 0xffc00000). An
  // arithmetic result is never signalling, so the compare raises nothing.
  auto storeResult = [&](bool fma) {
    const asmjit::Label ok = a.newLabel(), done = a.newLabel();
    a.vucomiss(x86::xmm0, x86::xmm0);
    a.jnp(ok);
    if (fma) {
      // RISC-V: inf * 0 is invalid even when the addend is a quiet NaN; x86 raises nothing then.
      // |rs1| | |rs2| == inf with one of them 0 (read before f[rd] is written).
      const asmjit::Label nv = a.newLabel(), canonical = a.newLabel();
      a.mov(x86::ecx, freg(d.rs1));
      a.and_(x86::ecx, 0x7fffffff);
      a.mov(x86::edx, freg(d.rs2));
      a.and_(x86::edx, 0x7fffffff);
      a.test(x86::ecx, x86::ecx);
      a.jz(nv);
      a.test(x86::edx, x86::edx);
      a.jnz(canonical);
      a.bind(nv);
      a.or_(x86::ecx, x86::edx);
      a.cmp(x86::ecx, 0x7f800000);
      a.jne(canonical);
      a.mov(x86::rcx, frameField(offsetof(TileJit::Frame, fflags), 8));
      a.or_(x86::dword_ptr(x86::rcx), fp::kNV);
      a.bind(canonical);
    }
    a.mov(freg(rd), fp::kCanonicalNaN);
    a.jmp(done);
    a.bind(ok);
    a.vmovss(freg(rd), x86::xmm0);
    a.bind(done);
  };
  const uint32_t sign = 0x80000000u;
  switch (d.op) {
    case Op::Fadd:
    case Op::Fsub:
    case Op::Fmul:
      a.vmovss(x86::xmm0, freg(d.rs1));
      if (d.op == Op::Fadd) {
        a.vaddss(x86::xmm0, x86::xmm0, freg(d.rs2));
      } else if (d.op == Op::Fsub) {
        a.vsubss(x86::xmm0, x86::xmm0, freg(d.rs2));
      } else {
        a.vmulss(x86::xmm0, x86::xmm0, freg(d.rs2));
      }
      storeResult(false);
      break;
    case Op::Fmadd:
    case Op::Fmsub:
    case Op::Fnmsub:
    case Op::Fnmadd:
      // One rounding, as RISC-V: xmm0 = ±(rs1 * rs2) ± rs3.
      a.vmovss(x86::xmm0, freg(d.rs1));
      a.vmovss(x86::xmm1, freg(d.rs2));
      if (d.op == Op::Fmadd) {
        a.vfmadd213ss(x86::xmm0, x86::xmm1, freg(d.rs3));
      } else if (d.op == Op::Fmsub) {
        a.vfmsub213ss(x86::xmm0, x86::xmm1, freg(d.rs3));
      } else if (d.op == Op::Fnmsub) {  // -(rs1 * rs2) + rs3
        a.vfnmadd213ss(x86::xmm0, x86::xmm1, freg(d.rs3));
      } else {  // -(rs1 * rs2) - rs3
        a.vfnmsub213ss(x86::xmm0, x86::xmm1, freg(d.rs3));
      }
      storeResult(true);
      break;
    case Op::FcvtSW:
    case Op::FcvtSWu:
      a.vxorps(x86::xmm0, x86::xmm0, x86::xmm0);
      if (d.op == Op::FcvtSW) {
        a.vcvtsi2ss(x86::xmm0, x86::xmm0, reg(d.rs1));
      } else {
        a.mov(x86::eax, reg(d.rs1));  // zero-extended: every u32 is a non-negative i64
        a.vcvtsi2ss(x86::xmm0, x86::xmm0, x86::rax);
      }
      a.vmovss(freg(rd), x86::xmm0);
      break;
    case Op::FcvtWS:
    case Op::FcvtWuS: {
      // Inputs the host converts as RISC-V does: |x| < 2^31 (W, 32-bit conversion) or
      // +0 <= x < 2^32 (WU, 64-bit conversion). The rest (negative for WU, NaN, infinities,
      // out of range: saturation with NV and no NX) is the soft-float's.
      const asmjit::Label slow = a.newLabel(), done = a.newLabel();
      const bool w = d.op == Op::FcvtWS;
      const bool rtz = d.rm == fp::kRTZ;
      a.mov(x86::ecx, freg(d.rs1));
      if (w) a.and_(x86::ecx, ~sign);
      a.cmp(x86::ecx, w ? 0x4f000000u : 0x4f800000u);
      a.jae(slow);
      const x86::Gp dst = w ? x86::Gp(x86::eax) : x86::Gp(x86::rax);
      if (rtz) {
        a.vcvttss2si(dst, freg(d.rs1));
      } else {
        a.vcvtss2si(dst, freg(d.rs1));
      }
      if (rd) a.mov(reg(rd), x86::eax);
      a.jmp(done);
      a.bind(slow);
      call(w ? fpCvtWSCall : fpCvtWuSCall, freg(d.rs1), nullptr, rtz ? fp::kRTZ : fp::kRNE, false,
           true);
      a.bind(done);
      break;
    }
    case Op::Fmin:
    case Op::Fmax: {
      // Ordered operands: the smaller (larger); equal ones are the same number or -0 and +0,
      // where min takes the sign bit of either and max the sign bit of both. NaN operands: the
      // soft-float (one NaN gives the other operand; NV for a signalling one, which the compare
      // here raises too).
      const asmjit::Label slow = a.newLabel(), done = a.newLabel(), first = a.newLabel(),
                          second = a.newLabel();
      const bool min = d.op == Op::Fmin;
      a.vmovss(x86::xmm0, freg(d.rs1));
      a.vucomiss(x86::xmm0, freg(d.rs2));
      a.jp(slow);
      a.jb(min ? first : second);  // rs1 < rs2
      a.ja(min ? second : first);
      a.mov(x86::eax, freg(d.rs1));
      if (min) {
        a.or_(x86::eax, freg(d.rs2));
      } else {
        a.and_(x86::eax, freg(d.rs2));
      }
      a.mov(freg(rd), x86::eax);
      a.jmp(done);
      a.bind(first);
      a.mov(x86::eax, freg(d.rs1));
      a.mov(freg(rd), x86::eax);
      a.jmp(done);
      a.bind(second);
      a.mov(x86::eax, freg(d.rs2));
      a.mov(freg(rd), x86::eax);
      a.jmp(done);
      a.bind(slow);
      {
        const x86::Mem b = freg(d.rs2);
        call(min ? fpMinCall : fpMaxCall, freg(d.rs1), &b, 0, true, true);
      }
      a.bind(done);
      break;
    }
    case Op::Feq:
    case Op::Flt:
    case Op::Fle:
      // FEQ: ucomiss raises IE for signalling NaNs only; FLT/FLE: comiss for any NaN. A NaN
      // compares false (unordered sets ZF, PF and CF).
      a.xor_(x86::ecx, x86::ecx);
      if (d.op == Op::Feq) {
        a.vmovss(x86::xmm0, freg(d.rs1));
        a.vucomiss(x86::xmm0, freg(d.rs2));
        a.mov(x86::edx, 0);
        a.setnp(x86::dl);
        a.sete(x86::cl);
        a.and_(x86::ecx, x86::edx);
      } else {
        a.vmovss(x86::xmm0, freg(d.rs2));  // rs2 > rs1, rs2 >= rs1: false when unordered
        a.vcomiss(x86::xmm0, freg(d.rs1));
        if (d.op == Op::Flt) {
          a.seta(x86::cl);
        } else {
          a.setae(x86::cl);
        }
      }
      if (rd) a.mov(reg(rd), x86::ecx);
      break;
    case Op::Fclass:
      call(fpClassCall, freg(d.rs1), nullptr, 0, false, false);
      break;
    case Op::Fsgnj:
    case Op::Fsgnjn:
    case Op::Fsgnjx:
      // Bits only: no flags, NaN payloads kept.
      a.mov(x86::eax, freg(d.rs1));
      a.mov(x86::ecx, freg(d.rs2));
      if (d.op == Op::Fsgnjn) a.not_(x86::ecx);
      a.and_(x86::ecx, sign);
      if (d.op != Op::Fsgnjx) a.and_(x86::eax, ~sign);
      a.xor_(x86::eax, x86::ecx);
      a.mov(freg(rd), x86::eax);
      break;
    case Op::FmvXW:
      if (!rd) break;
      a.mov(x86::eax, freg(d.rs1));
      a.mov(reg(rd), x86::eax);
      break;
    case Op::FmvWX:
      a.mov(x86::eax, reg(d.rs1));
      a.mov(freg(rd), x86::eax);
      break;
    default:
      break;  // unreachable: fpTranslatable
  }
}

// Prologue of a block with FP instructions, after the integer one: rbp the context's f[], the
// caller's MXCSR saved at [rsp] and the block's loaded (flags clear) when it uses the host FPU.
void emitFpEntry(x86::Assembler& a, bool mxcsr) {
  a.push(kF);
  a.sub(x86::rsp, 8);  // six pushes and this: rsp stays 16-byte aligned for calls
  a.mov(kF, frameField(offsetof(TileJit::Frame, f), 8));
  if (!mxcsr) return;
  a.stmxcsr(x86::dword_ptr(x86::rsp));
  a.mov(x86::dword_ptr(x86::rsp, 4), kBlockMxcsr);
  a.ldmxcsr(x86::dword_ptr(x86::rsp, 4));
}

// Its epilogue (eax, the block's result, kept): the flags the block raised ORed into fflags,
// the caller's MXCSR restored.
void emitFpExit(x86::Assembler& a, bool mxcsr) {
  if (mxcsr) {
    a.stmxcsr(x86::dword_ptr(x86::rsp, 4));
    a.mov(x86::ecx, x86::dword_ptr(x86::rsp, 4));
    a.and_(x86::ecx, 0x3f);
    a.mov(x86::rdx, reinterpret_cast<uint64_t>(kMxcsrToFflags.data()));
    a.movzx(x86::ecx, x86::byte_ptr(x86::rdx, x86::rcx));
    a.mov(x86::rdx, frameField(offsetof(TileJit::Frame, fflags), 8));
    a.or_(x86::dword_ptr(x86::rdx), x86::ecx);
    a.ldmxcsr(x86::dword_ptr(x86::rsp));
  }
  a.add(x86::rsp, 8);
  a.pop(kF);
}

bool isFp(Op op) {
  return op >= Op::Flw && op <= Op::FmvWX;
}

// True when the host runs the FP emitters: AVX (VEX encodings) and FMA3, enabled by the OS.
bool hostHasFma() {
  const asmjit::CpuInfo& cpu = asmjit::CpuInfo::host();
  return cpu.hasFeature(asmjit::CpuFeatures::X86::kAVX) &&
         cpu.hasFeature(asmjit::CpuFeatures::X86::kFMA);
}

bool endsBlock(Op op) {
  return op == Op::Jal || op == Op::Jalr || (op >= Op::Beq && op <= Op::Bgeu);
}

}  // namespace

TileJit::TileJit(uint32_t memBytes, bool hasFpu, bool hasMulDiv, bool hasMatrixUnit)
    : memBytes_(memBytes),
      hasFpu_(hasFpu),
      hasMulDiv_(hasMulDiv),
      hasMatrixUnit_(hasMatrixUnit),
      fp_(hasFpu && hostHasFma()),
      lines_(kLines) {}

TileJit::~TileJit() {
  flush();
}

bool TileJit::coversRange(uint32_t addr, uint32_t bytes) const {
  if (covered_.empty() || bytes == 0) return false;
  for (uint32_t w = addr >> 2; w <= (addr + bytes - 1) >> 2; ++w) {
    if (covered_[w >> 6] >> (w & 63) & 1) return true;
  }
  return false;
}

bool TileJit::changesCode(uint32_t addr, const uint8_t* bytes, uint32_t n,
                          const uint8_t* mem) const {
  if (covered_.empty() || n == 0) return false;
  for (uint32_t w = addr >> 2; w <= (addr + n - 1) >> 2; ++w) {
    if (!(covered_[w >> 6] >> (w & 63) & 1)) continue;
    const uint32_t lo = std::max(addr, w * 4), hi = std::min(addr + n, w * 4 + 4);
    if (std::memcmp(mem + lo, bytes + (lo - addr), hi - lo) != 0) return true;
  }
  return false;
}

void TileJit::flush() {
  flushPending_ = false;
  if (blocks_.empty()) return;
  for (auto& [pc, b] : blocks_) {
    if (b.fn) runtime_->rt.release(b.fn);
  }
  blocks_.clear();
  std::fill(covered_.begin(), covered_.end(), 0);
  for (Line& l : lines_) l = Line{};
  flushes_++;
}

const TileJit::Block* TileJit::find(uint32_t pc, const uint8_t* mem) {
  if (pc >= memBytes_ || (pc & 3) != 0) return &untranslated_;
  auto it = blocks_.find(pc);
  if (it == blocks_.end()) it = blocks_.emplace(pc, translate(pc, mem)).first;
  return &it->second;
}

TileJit::Block TileJit::translate(uint32_t pc, const uint8_t* mem) {
  // The block: instructions from pc up to the first branch or jump (included) or the first that
  // is not translated (excluded), at most kMaxBlockInsns, never past the end of SRAM.
  std::vector<std::pair<uint32_t, DecodedInsn>> insns;
  for (uint32_t p = pc; p <= memBytes_ - 4 && insns.size() < kMaxBlockInsns; p += 4) {
    uint32_t word;
    std::memcpy(&word, mem + p, 4);
    const DecodedInsn d = decodeInsn(word, hasFpu_, hasMulDiv_, hasMatrixUnit_);
    if (!translates(d.op) && !(fp_ && fpTranslatable(d))) break;
    // A jump or taken branch to a misaligned target traps: the interpreter's.
    if ((d.op == Op::Jal || (d.op >= Op::Beq && d.op <= Op::Bgeu)) &&
        ((p + static_cast<uint32_t>(d.imm)) & 3) != 0) {
      break;
    }
    insns.emplace_back(p, d);
    if (endsBlock(d.op)) break;
  }
  Block block;
  if (insns.empty()) return block;
  bool usesF = false, usesMxcsr = false;
  for (const auto& [p, d] : insns) {
    usesF = usesF || isFp(d.op);
    usesMxcsr = usesMxcsr || fpUsesMxcsr(d.op);
  }
  if (!runtime_) runtime_ = std::make_unique<Runtime>();
  // Its address is in the code (translated stores test it): sized once, never reallocated.
  if (covered_.empty()) covered_.assign((memBytes_ / 4 + 63) / 64, 0);

  asmjit::CodeHolder code;
  code.init(runtime_->rt.environment());
  x86::Assembler a(&code);
  const asmjit::Label epilogue = a.newLabel();
  struct SideExit {
    asmjit::Label label;
    uint32_t pc;
    uint32_t index;
  };
  std::vector<SideExit> sideExits;
  auto sideExit = [&](uint32_t p, uint32_t index) {
    sideExits.push_back(SideExit{a.newLabel(), p, index});
    return sideExits.back().label;
  };
  // The result: instructions of earlier passes of a loop block (kDone) plus count.
  auto exitTo = [&](uint32_t p, uint32_t count) {
    a.mov(frameField(offsetof(Frame, pc), 4), p);
    a.lea(x86::eax, x86::ptr(kDone, static_cast<int32_t>(count)));
    a.jmp(epilogue);
  };

  a.push(x86::rbx);
  a.push(x86::r12);
  a.push(x86::r13);
  a.push(x86::r14);
  a.push(x86::r15);  // five pushes: rsp is 16-byte aligned for the store hook's call
  a.mov(kFrame, x86::rdi);
  a.mov(kX, x86::qword_ptr(kFrame, offsetof(Frame, x)));
  a.mov(kMem, x86::qword_ptr(kFrame, offsetof(Frame, mem)));
  a.mov(kBudget.r32(), frameField(offsetof(Frame, budget), 4));
  if (usesF) emitFpEntry(a, usesMxcsr);
  a.xor_(kDone.r32(), kDone.r32());
  const asmjit::Label loop = a.newLabel();
  a.bind(loop);
  // A jump or taken branch back to the block's start runs it again while the whole next pass
  // issues within the budget (kDone + 2n <= budget), else it returns.
  auto loopOrExit = [&](uint32_t count) {
    const asmjit::Label out = a.newLabel();
    a.lea(x86::eax, x86::ptr(kDone, static_cast<int32_t>(2 * count)));
    a.cmp(x86::eax, kBudget.r32());
    a.ja(out);
    a.add(kDone.r32(), count);
    a.jmp(loop);
    a.bind(out);
    exitTo(pc, count);
  };

  // While several contexts run a window, the access at eax (kept) stamps its word: settled
  // inline when the word is untouched in this window or already this context's in the same
  // way, else by the owner's access hook.
  auto recordAccess = [&](bool write) {
    const asmjit::Label done = a.newLabel(), fresh = a.newLabel();
    a.mov(x86::rdx, x86::qword_ptr(kFrame, offsetof(Frame, tags)));
    a.test(x86::rdx, x86::rdx);
    a.jz(done);
    a.mov(x86::ecx, x86::eax);
    a.shr(x86::ecx, 2);
    a.mov(x86::r8d, x86::dword_ptr(x86::rdx, x86::rcx, 2));
    a.mov(x86::r9d, x86::r8d);
    a.and_(x86::r9d, ~kStampWrite);
    a.cmp(x86::r9d, frameField(offsetof(Frame, tag), 4));
    if (write) {  // this context's alone: now written
      const asmjit::Label other = a.newLabel();
      a.jne(other);
      a.or_(x86::r8d, kStampWrite);
      a.mov(x86::dword_ptr(x86::rdx, x86::rcx, 2), x86::r8d);
      a.jmp(done);
      a.bind(other);
    } else {
      a.je(done);
    }
    a.shr(x86::r8d, 4);
    a.cmp(x86::r8d, frameField(offsetof(Frame, window), 4));
    a.jne(fresh);
    a.mov(frameField(offsetof(Frame, spill), 4), x86::eax);
    a.mov(x86::rdi, kFrame);
    a.mov(x86::esi, x86::eax);
    a.mov(x86::edx, write ? 1 : 0);
    a.call(x86::qword_ptr(kFrame, offsetof(Frame, access)));
    a.mov(x86::eax, frameField(offsetof(Frame, spill), 4));
    a.jmp(done);
    a.bind(fresh);
    a.mov(x86::r9d, frameField(offsetof(Frame, tag), 4));
    if (write) a.or_(x86::r9d, kStampWrite);
    a.mov(x86::dword_ptr(x86::rdx, x86::rcx, 2), x86::r9d);
    a.bind(done);
  };

  const uint32_t n = static_cast<uint32_t>(insns.size());
  bool ended = false;  // the last instruction wrote the exit itself
  for (uint32_t k = 0; k < n; ++k) {
    const uint32_t p = insns[k].first;
    const DecodedInsn& d = insns[k].second;
    const uint32_t imm = static_cast<uint32_t>(d.imm);
    const unsigned rd = d.rd;
    // The effective address of a load or store in eax (upper half of rax zero), checked as the
    // interpreter checks it: misaligned or outside SRAM leaves for the interpreter.
    auto address = [&](unsigned size) {
      a.mov(x86::eax, reg(d.rs1));
      if (imm != 0) a.add(x86::eax, imm);
      if (size > 1) {
        a.test(x86::eax, size - 1);
        a.jnz(sideExit(p, k));
      }
      a.cmp(x86::eax, memBytes_ - size);
      a.ja(sideExit(p, k));
      recordAccess(d.op == Op::Sb || d.op == Op::Sh || d.op == Op::Sw || d.op == Op::Fsw);
    };
    if (isFp(d.op) && d.op != Op::Flw && d.op != Op::Fsw) {
      emitFp(a, d, [&] { return sideExit(p, k); });
      continue;
    }
    switch (d.op) {
      case Op::Lui:
        if (rd) a.mov(reg(rd), imm);
        break;
      case Op::Auipc:
        if (rd) a.mov(reg(rd), p + imm);
        break;
      case Op::Addi:
      case Op::Xori:
      case Op::Ori:
      case Op::Andi:
      case Op::Slli:
      case Op::Srli:
      case Op::Srai:
        if (!rd) break;
        a.mov(x86::eax, reg(d.rs1));
        switch (d.op) {
          case Op::Addi:
            a.add(x86::eax, imm);
            break;
          case Op::Xori:
            a.xor_(x86::eax, imm);
            break;
          case Op::Ori:
            a.or_(x86::eax, imm);
            break;
          case Op::Andi:
            a.and_(x86::eax, imm);
            break;
          case Op::Slli:
            a.shl(x86::eax, imm & 31);
            break;
          case Op::Srli:
            a.shr(x86::eax, imm & 31);
            break;
          default:
            a.sar(x86::eax, imm & 31);
            break;
        }
        a.mov(reg(rd), x86::eax);
        break;
      case Op::Slti:
      case Op::Sltiu:
        if (!rd) break;
        a.xor_(x86::ecx, x86::ecx);
        a.cmp(reg(d.rs1), imm);
        if (d.op == Op::Slti) {
          a.setl(x86::cl);
        } else {
          a.setb(x86::cl);
        }
        a.mov(reg(rd), x86::ecx);
        break;
      case Op::Add:
      case Op::Sub:
      case Op::Xor:
      case Op::Or:
      case Op::And:
      case Op::Mul:
        if (!rd) break;
        a.mov(x86::eax, reg(d.rs1));
        switch (d.op) {
          case Op::Add:
            a.add(x86::eax, reg(d.rs2));
            break;
          case Op::Sub:
            a.sub(x86::eax, reg(d.rs2));
            break;
          case Op::Xor:
            a.xor_(x86::eax, reg(d.rs2));
            break;
          case Op::Or:
            a.or_(x86::eax, reg(d.rs2));
            break;
          case Op::And:
            a.and_(x86::eax, reg(d.rs2));
            break;
          default:
            a.imul(x86::eax, reg(d.rs2));
            break;
        }
        a.mov(reg(rd), x86::eax);
        break;
      case Op::Sll:
      case Op::Srl:
      case Op::Sra:
        if (!rd) break;
        a.mov(x86::eax, reg(d.rs1));
        a.mov(x86::ecx, reg(d.rs2));  // x86 takes the count modulo 32, as RV32 does
        if (d.op == Op::Sll) {
          a.shl(x86::eax, x86::cl);
        } else if (d.op == Op::Srl) {
          a.shr(x86::eax, x86::cl);
        } else {
          a.sar(x86::eax, x86::cl);
        }
        a.mov(reg(rd), x86::eax);
        break;
      case Op::Slt:
      case Op::Sltu:
        if (!rd) break;
        a.xor_(x86::ecx, x86::ecx);
        a.mov(x86::eax, reg(d.rs1));
        a.cmp(x86::eax, reg(d.rs2));
        if (d.op == Op::Slt) {
          a.setl(x86::cl);
        } else {
          a.setb(x86::cl);
        }
        a.mov(reg(rd), x86::ecx);
        break;
      case Op::Mulh:
      case Op::Mulhsu:
      case Op::Mulhu:
        if (!rd) break;
        // The 64-bit product of the extended operands (it fits: |a| <= 2^31, b < 2^32).
        if (d.op == Op::Mulhu) {
          a.mov(x86::eax, reg(d.rs1));
        } else {
          a.movsxd(x86::rax, reg(d.rs1));
        }
        if (d.op == Op::Mulh) {
          a.movsxd(x86::rcx, reg(d.rs2));
        } else {
          a.mov(x86::ecx, reg(d.rs2));
        }
        a.imul(x86::rax, x86::rcx);
        if (d.op == Op::Mulhu) {
          a.shr(x86::rax, 32);
        } else {
          a.sar(x86::rax, 32);
        }
        a.mov(reg(rd), x86::eax);
        break;
      case Op::Lb:
      case Op::Lbu:
      case Op::Lh:
      case Op::Lhu:
      case Op::Lw:
      case Op::Flw: {
        const bool wide = d.op == Op::Lw || d.op == Op::Flw;
        const unsigned size = wide ? 4 : (d.op == Op::Lh || d.op == Op::Lhu) ? 2 : 1;
        address(size);
        if (!rd && d.op != Op::Flw) break;
        const x86::Mem m(kMem, x86::rax, 0, 0, size);
        if (d.op == Op::Lb || d.op == Op::Lh) {
          a.movsx(x86::ecx, m);
        } else if (wide) {
          a.mov(x86::ecx, m);
        } else {
          a.movzx(x86::ecx, m);
        }
        a.mov(d.op == Op::Flw ? freg(rd) : reg(rd), x86::ecx);
        break;
      }
      case Op::Sb:
      case Op::Sh:
      case Op::Sw:
      case Op::Fsw: {
        const unsigned size = d.op == Op::Sw || d.op == Op::Fsw ? 4 : d.op == Op::Sh ? 2 : 1;
        const x86::Mem value = d.op == Op::Fsw ? freg(d.rs2) : reg(d.rs2);
        address(size);
        const asmjit::Label slow = a.newLabel(), done = a.newLabel();
        // Inline, as noteStore then execStore: a word no translation covers, no undo log.
        a.mov(x86::ecx, x86::eax);
        a.shr(x86::ecx, 2);  // the word's index
        a.mov(x86::r8d, x86::ecx);
        a.shr(x86::r8d, 6);
        a.mov(x86::rdx, reinterpret_cast<uint64_t>(covered_.data()));
        a.mov(x86::rdx, x86::qword_ptr(x86::rdx, x86::r8, 3));
        a.bt(x86::rdx, x86::rcx);  // bit index & 63
        a.jc(slow);
        a.mov(x86::rdx, x86::qword_ptr(kFrame, offsetof(Frame, logging)));
        a.cmp(x86::byte_ptr(x86::rdx), 0);
        a.jne(slow);
        // In a window: the old word into the window's undo log, if it has room.
        const asmjit::Label noUndo = a.newLabel();
        a.mov(x86::rdx, x86::qword_ptr(kFrame, offsetof(Frame, undo)));
        a.test(x86::rdx, x86::rdx);
        a.jz(noUndo);
        a.mov(x86::r10d, frameField(offsetof(Frame, undoCount), 4));
        a.cmp(x86::r10d, frameField(offsetof(Frame, undoCapacity), 4));
        a.jae(slow);
        a.lea(x86::r11d, x86::ptr(x86::r10, 1));
        a.mov(frameField(offsetof(Frame, undoCount), 4), x86::r11d);
        a.imul(x86::r10, x86::r10, kUndoBytes);
        a.add(x86::rdx, x86::r10);
        a.mov(x86::r8d, x86::eax);
        a.and_(x86::r8d, ~3u);
        a.mov(x86::dword_ptr(x86::rdx, kUndoWordAddr), x86::r8d);
        a.mov(x86::r9d, x86::dword_ptr(kMem, x86::r8));
        a.mov(x86::dword_ptr(x86::rdx, kUndoOld), x86::r9d);
        a.lea(x86::r9, x86::ptr(kDone, static_cast<int32_t>(k)));
        a.imul(x86::r9, x86::r9, 6);
        a.add(x86::r9, x86::qword_ptr(kFrame, offsetof(Frame, cycle)));
        a.mov(x86::qword_ptr(x86::rdx, kUndoCycle), x86::r9);
        a.bind(noUndo);
        // The fetch-timing note: issue cycle, word address, one word, its old value.
        a.mov(x86::rdx, x86::qword_ptr(kFrame, offsetof(Frame, note)));
        a.lea(x86::r9, x86::ptr(kDone, static_cast<int32_t>(k)));
        a.imul(x86::r9, x86::r9, 6);
        a.add(x86::r9, x86::qword_ptr(kFrame, offsetof(Frame, cycle)));
        a.mov(x86::qword_ptr(x86::rdx, kNoteCycle), x86::r9);
        a.mov(x86::r8d, x86::eax);
        a.and_(x86::r8d, ~3u);
        a.mov(x86::dword_ptr(x86::rdx, kNoteWordAddr), x86::r8d);
        a.mov(x86::dword_ptr(x86::rdx, kNoteWords), 1);
        a.mov(x86::r9d, x86::dword_ptr(kMem, x86::r8));
        a.mov(x86::dword_ptr(x86::rdx, kNoteOld), x86::r9d);
        // The decode cache line of that word, if it holds it.
        const asmjit::Label keep = a.newLabel();
        a.and_(x86::ecx, kDecodeLines - 1);
        a.shl(x86::ecx, 4);
        static_assert(kDecodeLineBytes == 16);
        a.add(x86::rcx, x86::qword_ptr(kFrame, offsetof(Frame, decodeLines)));
        a.cmp(x86::dword_ptr(x86::rcx), x86::r8d);
        a.jne(keep);
        a.mov(x86::dword_ptr(x86::rcx), 0xffffffffu);
        a.bind(keep);
        a.mov(x86::edx, value);
        if (size == 4) {
          a.mov(x86::dword_ptr(kMem, x86::rax), x86::edx);
        } else if (size == 2) {
          a.mov(x86::word_ptr(kMem, x86::rax), x86::dx);
        } else {
          a.mov(x86::byte_ptr(kMem, x86::rax), x86::dl);
        }
        a.jmp(done);
        a.bind(slow);
        a.mov(x86::rdi, kFrame);
        a.mov(x86::esi, x86::eax);
        a.mov(x86::edx, value);
        a.lea(x86::ecx, x86::ptr(kDone, static_cast<int32_t>(k)));
        a.mov(x86::r8d, size);
        a.call(x86::qword_ptr(kFrame, offsetof(Frame, store)));
        // A store into translated code: stop after it (the next fetch, a round later, must see
        // the new word through a new translation).
        if (k + 1 < n) {
          a.test(x86::eax, x86::eax);
          a.jz(done);
          exitTo(p + 4, k + 1);
        }
        a.bind(done);
        break;
      }
      case Op::Jal:
        if (rd) a.mov(reg(rd), p + 4);
        if (p + imm == pc) {
          loopOrExit(n);
        } else {
          exitTo(p + imm, n);
        }
        ended = true;
        break;
      case Op::Jalr:
        a.mov(x86::eax, reg(d.rs1));
        if (imm != 0) a.add(x86::eax, imm);
        a.and_(x86::eax, ~1u);
        a.test(x86::eax, 3);
        a.jnz(sideExit(p, k));
        if (rd) a.mov(reg(rd), p + 4);
        a.mov(frameField(offsetof(Frame, pc), 4), x86::eax);
        a.lea(x86::eax, x86::ptr(kDone, static_cast<int32_t>(n)));
        a.jmp(epilogue);
        ended = true;
        break;
      default: {  // the conditional branches
        const asmjit::Label taken = a.newLabel();
        a.mov(x86::eax, reg(d.rs1));
        a.cmp(x86::eax, reg(d.rs2));
        switch (d.op) {
          case Op::Beq:
            a.je(taken);
            break;
          case Op::Bne:
            a.jne(taken);
            break;
          case Op::Blt:
            a.jl(taken);
            break;
          case Op::Bge:
            a.jge(taken);
            break;
          case Op::Bltu:
            a.jb(taken);
            break;
          default:
            a.jae(taken);
            break;
        }
        exitTo(p + 4, n);
        a.bind(taken);
        if (p + imm == pc) {
          loopOrExit(n);
        } else {
          exitTo(p + imm, n);
        }
        ended = true;
        break;
      }
    }
  }
  if (!ended) exitTo(insns.back().first + 4, n);
  for (const SideExit& s : sideExits) {
    a.bind(s.label);
    a.mov(frameField(offsetof(Frame, pc), 4), s.pc);
    a.lea(x86::eax, x86::ptr(kDone, static_cast<int32_t>(s.index)));
    a.or_(x86::eax, kSideExit);
    a.jmp(epilogue);
  }
  a.bind(epilogue);
  if (usesF) emitFpExit(a, usesMxcsr);
  a.pop(x86::r15);
  a.pop(x86::r14);
  a.pop(x86::r13);
  a.pop(x86::r12);
  a.pop(x86::rbx);
  a.ret();

  if (runtime_->rt.add(&block.fn, &code) != asmjit::kErrorOk) {
    throw Error("model jit: the host code of a block could not be installed");
  }
  block.length = n;
  for (const auto& [p, d] : insns) covered_[(p >> 2) >> 6] |= uint64_t{1} << ((p >> 2) & 63);
  translations_++;
  return block;
}

}  // namespace tessera::model

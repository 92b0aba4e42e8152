// The project's RISC-V encoder for the RV32IMF+Zicsr instructions that host code writes by hand:
// the checkpoint restore's parking program (docs/checkpoint.md) and the model, RTL and chip-suite
// tests' programs. Written from the RISC-V unprivileged spec's instruction formats (R, I, S, B, U,
// J, R4), independent of either implementation's decoder, so that the tests' expected results
// come from the spec, not from a device. Mnemonics and operand order are the assembler's
// (`sw rs2, off(rs1)` is sw(rs2, rs1, off)).
#pragma once

#include <array>
#include <cstdint>

namespace rv {

/// Integer register numbers by ABI name.
enum Reg : uint32_t {
  zero = 0,
  ra = 1,
  sp = 2,
  gp = 3,
  tp = 4,
  t0 = 5,
  t1 = 6,
  t2 = 7,
  s0 = 8,
  s1 = 9,
  a0 = 10,
  a1 = 11,
  a2 = 12,
  a3 = 13,
  a4 = 14,
  a5 = 15,
  a6 = 16,
  a7 = 17
};

/// R-type: funct7, rs2, rs1, funct3, rd, opcode.
constexpr uint32_t r(uint32_t f7, uint32_t rs2, uint32_t rs1, uint32_t f3, uint32_t rd,
                     uint32_t op) {
  return f7 << 25 | rs2 << 20 | rs1 << 15 | f3 << 12 | rd << 7 | op;
}
/// I-type: the low 12 bits of imm.
constexpr uint32_t i(int32_t imm, uint32_t rs1, uint32_t f3, uint32_t rd, uint32_t op) {
  return (static_cast<uint32_t>(imm) & 0xfff) << 20 | rs1 << 15 | f3 << 12 | rd << 7 | op;
}
/// S-type: the low 12 bits of imm, split around rs2/rs1.
constexpr uint32_t s(int32_t imm, uint32_t rs2, uint32_t rs1, uint32_t f3, uint32_t op) {
  const uint32_t u = static_cast<uint32_t>(imm);
  return ((u >> 5) & 0x7f) << 25 | rs2 << 20 | rs1 << 15 | f3 << 12 | (u & 0x1f) << 7 | op;
}
/// B-type (opcode BRANCH): a byte offset, even, within +-4 KiB.
constexpr uint32_t b(int32_t imm, uint32_t rs2, uint32_t rs1, uint32_t f3) {
  const uint32_t u = static_cast<uint32_t>(imm);
  return ((u >> 12) & 1) << 31 | ((u >> 5) & 0x3f) << 25 | rs2 << 20 | rs1 << 15 | f3 << 12 |
         ((u >> 1) & 0xf) << 8 | ((u >> 11) & 1) << 7 | 0x63;
}
/// U-type: imm20 is the value of bits 31..12.
constexpr uint32_t u(uint32_t imm20, uint32_t rd, uint32_t op) {
  return imm20 << 12 | rd << 7 | op;
}
/// J-type (opcode JAL): a byte offset, even, within +-1 MiB.
constexpr uint32_t j(int32_t imm, uint32_t rd) {
  const uint32_t v = static_cast<uint32_t>(imm);
  return ((v >> 20) & 1) << 31 | ((v >> 1) & 0x3ff) << 21 | ((v >> 11) & 1) << 20 |
         ((v >> 12) & 0xff) << 12 | rd << 7 | 0x6f;
}

// RV32I. Branch and jump offsets are in bytes from the instruction's own pc.
constexpr uint32_t lui(uint32_t rd, uint32_t imm20) {
  return u(imm20, rd, 0x37);
}
constexpr uint32_t auipc(uint32_t rd, uint32_t imm20) {
  return u(imm20, rd, 0x17);
}
constexpr uint32_t jal(uint32_t rd, int32_t off) {
  return j(off, rd);
}
constexpr uint32_t jalr(uint32_t rd, uint32_t rs1, int32_t off) {
  return i(off, rs1, 0, rd, 0x67);
}
constexpr uint32_t beq(uint32_t rs1, uint32_t rs2, int32_t off) {
  return b(off, rs2, rs1, 0);
}
constexpr uint32_t bne(uint32_t rs1, uint32_t rs2, int32_t off) {
  return b(off, rs2, rs1, 1);
}
constexpr uint32_t blt(uint32_t rs1, uint32_t rs2, int32_t off) {
  return b(off, rs2, rs1, 4);
}
constexpr uint32_t bltu(uint32_t rs1, uint32_t rs2, int32_t off) {
  return b(off, rs2, rs1, 6);
}
constexpr uint32_t lb(uint32_t rd, uint32_t rs1, int32_t off) {
  return i(off, rs1, 0, rd, 0x03);
}
constexpr uint32_t lh(uint32_t rd, uint32_t rs1, int32_t off) {
  return i(off, rs1, 1, rd, 0x03);
}
constexpr uint32_t lw(uint32_t rd, uint32_t rs1, int32_t off) {
  return i(off, rs1, 2, rd, 0x03);
}
constexpr uint32_t lbu(uint32_t rd, uint32_t rs1, int32_t off) {
  return i(off, rs1, 4, rd, 0x03);
}
constexpr uint32_t lhu(uint32_t rd, uint32_t rs1, int32_t off) {
  return i(off, rs1, 5, rd, 0x03);
}
constexpr uint32_t sb(uint32_t rs2, uint32_t rs1, int32_t off) {
  return s(off, rs2, rs1, 0, 0x23);
}
constexpr uint32_t sh(uint32_t rs2, uint32_t rs1, int32_t off) {
  return s(off, rs2, rs1, 1, 0x23);
}
constexpr uint32_t sw(uint32_t rs2, uint32_t rs1, int32_t off) {
  return s(off, rs2, rs1, 2, 0x23);
}
constexpr uint32_t addi(uint32_t rd, uint32_t rs1, int32_t imm) {
  return i(imm, rs1, 0, rd, 0x13);
}
constexpr uint32_t slti(uint32_t rd, uint32_t rs1, int32_t imm) {
  return i(imm, rs1, 2, rd, 0x13);
}
constexpr uint32_t sltiu(uint32_t rd, uint32_t rs1, int32_t imm) {
  return i(imm, rs1, 3, rd, 0x13);
}
constexpr uint32_t xori(uint32_t rd, uint32_t rs1, int32_t imm) {
  return i(imm, rs1, 4, rd, 0x13);
}
/// li rd, value: LUI of the upper 20 bits rounded for the sign-extended ADDI of the lower 12.
constexpr std::array<uint32_t, 2> li(uint32_t rd, uint32_t value) {
  const uint32_t upper = (value + 0x800u) >> 12;
  return {lui(rd, upper & 0xfffffu), addi(rd, rd, static_cast<int32_t>(value - (upper << 12)))};
}
constexpr uint32_t slli(uint32_t rd, uint32_t rs1, uint32_t sh) {
  return r(0, sh, rs1, 1, rd, 0x13);
}
constexpr uint32_t srli(uint32_t rd, uint32_t rs1, uint32_t sh) {
  return r(0, sh, rs1, 5, rd, 0x13);
}
constexpr uint32_t srai(uint32_t rd, uint32_t rs1, uint32_t sh) {
  return r(0x20, sh, rs1, 5, rd, 0x13);
}
constexpr uint32_t add(uint32_t rd, uint32_t rs1, uint32_t rs2) {
  return r(0, rs2, rs1, 0, rd, 0x33);
}
constexpr uint32_t sub(uint32_t rd, uint32_t rs1, uint32_t rs2) {
  return r(0x20, rs2, rs1, 0, rd, 0x33);
}
constexpr uint32_t sra(uint32_t rd, uint32_t rs1, uint32_t rs2) {
  return r(0x20, rs2, rs1, 5, rd, 0x33);
}
constexpr uint32_t slt(uint32_t rd, uint32_t rs1, uint32_t rs2) {
  return r(0, rs2, rs1, 2, rd, 0x33);
}
constexpr uint32_t sltu(uint32_t rd, uint32_t rs1, uint32_t rs2) {
  return r(0, rs2, rs1, 3, rd, 0x33);
}
// M.
constexpr uint32_t mul(uint32_t rd, uint32_t rs1, uint32_t rs2) {
  return r(1, rs2, rs1, 0, rd, 0x33);
}
constexpr uint32_t mulh(uint32_t rd, uint32_t rs1, uint32_t rs2) {
  return r(1, rs2, rs1, 1, rd, 0x33);
}
constexpr uint32_t mulhsu(uint32_t rd, uint32_t rs1, uint32_t rs2) {
  return r(1, rs2, rs1, 2, rd, 0x33);
}
constexpr uint32_t mulhu(uint32_t rd, uint32_t rs1, uint32_t rs2) {
  return r(1, rs2, rs1, 3, rd, 0x33);
}
constexpr uint32_t div(uint32_t rd, uint32_t rs1, uint32_t rs2) {
  return r(1, rs2, rs1, 4, rd, 0x33);
}
constexpr uint32_t divu(uint32_t rd, uint32_t rs1, uint32_t rs2) {
  return r(1, rs2, rs1, 5, rd, 0x33);
}
constexpr uint32_t rem(uint32_t rd, uint32_t rs1, uint32_t rs2) {
  return r(1, rs2, rs1, 6, rd, 0x33);
}
constexpr uint32_t remu(uint32_t rd, uint32_t rs1, uint32_t rs2) {
  return r(1, rs2, rs1, 7, rd, 0x33);
}
// FENCE, ECALL, EBREAK and Zicsr.
constexpr uint32_t fence() {
  return 0x0ff0000f;
}
constexpr uint32_t ecall() {
  return 0x00000073;
}
constexpr uint32_t ebreak() {
  return 0x00100073;
}
constexpr uint32_t csrrw(uint32_t rd, uint32_t csr, uint32_t rs1) {
  return i(static_cast<int32_t>(csr), rs1, 1, rd, 0x73);
}
constexpr uint32_t csrrs(uint32_t rd, uint32_t csr, uint32_t rs1) {
  return i(static_cast<int32_t>(csr), rs1, 2, rd, 0x73);
}
constexpr uint32_t csrrc(uint32_t rd, uint32_t csr, uint32_t rs1) {
  return i(static_cast<int32_t>(csr), rs1, 3, rd, 0x73);
}
constexpr uint32_t csrrwi(uint32_t rd, uint32_t csr, uint32_t uimm) {
  return i(static_cast<int32_t>(csr), uimm, 5, rd, 0x73);
}
constexpr uint32_t csrrsi(uint32_t rd, uint32_t csr, uint32_t uimm) {
  return i(static_cast<int32_t>(csr), uimm, 6, rd, 0x73);
}
constexpr uint32_t csrrci(uint32_t rd, uint32_t csr, uint32_t uimm) {
  return i(static_cast<int32_t>(csr), uimm, 7, rd, 0x73);
}
/// csrr rd, csr (= csrrs rd, csr, x0).
constexpr uint32_t csrr(uint32_t rd, uint32_t csr) {
  return csrrs(rd, csr, 0);
}

// F: fN is FP register N.
constexpr uint32_t flw(uint32_t fd, uint32_t rs1, int32_t off) {
  return i(off, rs1, 2, fd, 0x07);
}
constexpr uint32_t fsw(uint32_t fs2, uint32_t rs1, int32_t off) {
  return s(off, fs2, rs1, 2, 0x27);
}
/// OP-FP: funct7 selects the operation, the funct3 field carries rm or a sub-operation.
constexpr uint32_t fop(uint32_t f7, uint32_t rd, uint32_t rs1, uint32_t rs2, uint32_t rm) {
  return r(f7, rs2, rs1, rm, rd, 0x53);
}
constexpr uint32_t fadd(uint32_t fd, uint32_t fa, uint32_t fb, uint32_t rm = 7) {
  return fop(0x00, fd, fa, fb, rm);
}
constexpr uint32_t fmul(uint32_t fd, uint32_t fa, uint32_t fb, uint32_t rm = 7) {
  return fop(0x08, fd, fa, fb, rm);
}
constexpr uint32_t fdiv(uint32_t fd, uint32_t fa, uint32_t fb, uint32_t rm = 7) {
  return fop(0x0c, fd, fa, fb, rm);
}
constexpr uint32_t fsqrt(uint32_t fd, uint32_t fa, uint32_t rm = 7) {
  return fop(0x2c, fd, fa, 0, rm);
}
/// R4-type FMADD.S.
constexpr uint32_t fmadd(uint32_t fd, uint32_t fa, uint32_t fb, uint32_t fc, uint32_t rm = 7) {
  return fc << 27 | fb << 20 | fa << 15 | rm << 12 | fd << 7 | 0x43;
}
constexpr uint32_t fcvt_w_s(uint32_t rd, uint32_t fa, uint32_t rm = 7) {
  return fop(0x60, rd, fa, 0, rm);
}
constexpr uint32_t fcvt_s_w(uint32_t fd, uint32_t rs1, uint32_t rm = 7) {
  return fop(0x68, fd, rs1, 0, rm);
}
constexpr uint32_t fmv_x_w(uint32_t rd, uint32_t fa) {
  return fop(0x70, rd, fa, 0, 0);
}
constexpr uint32_t fmv_w_x(uint32_t fd, uint32_t rs1) {
  return fop(0x78, fd, rs1, 0, 0);
}
constexpr uint32_t feq(uint32_t rd, uint32_t fa, uint32_t fb) {
  return fop(0x50, rd, fa, fb, 2);
}
constexpr uint32_t fclass(uint32_t rd, uint32_t fa) {
  return fop(0x70, rd, fa, 0, 1);
}

// Matrix unit (docs/tile.md, "Matrix unit", "Encoding"), written from that table: custom-0,
// funct7 = r[2] << 6 | C << 5 | j << 3 | b << 2 | r[1:0], rs2 = 0.
constexpr uint32_t amp(uint32_t f3, uint32_t rd, uint32_t rs1, uint32_t r, uint32_t b = 0,
                       uint32_t j = 0, uint32_t c = 0) {
  return rv::r((r >> 2) << 6 | c << 5 | j << 3 | b << 2 | (r & 3), 0, rs1, f3, rd, 0x0b);
}
/// AMP.LW b, r: W[b][r][0..3] <- 16 bytes at rs1; rd <- rs1 + 16.
constexpr uint32_t amp_lw(uint32_t rd, uint32_t rs1, uint32_t b, uint32_t r) {
  return amp(0, rd, rs1, r, b);
}
/// AMP.S b, r: acc[r][j] <- the FMA chain of 16 bytes at rs1 with W[b]; rd <- rs1 + 16.
constexpr uint32_t amp_s(uint32_t rd, uint32_t rs1, uint32_t b, uint32_t r) {
  return amp(1, rd, rs1, r, b);
}
/// AMP.LA r: acc[r][0..3] <- 16 bytes at rs1; rd <- rs1 + 16.
constexpr uint32_t amp_la(uint32_t rd, uint32_t rs1, uint32_t r) {
  return amp(3, rd, rs1, r);
}
/// AMP.SA r, C: 16 bytes at rs1 <- acc[r][0..3], cleared if c; rd <- rs1 + 16.
constexpr uint32_t amp_sa(uint32_t rd, uint32_t rs1, uint32_t r, uint32_t c) {
  return amp(4, rd, rs1, r, 0, 0, c);
}
/// AMP.RD r, j: fd <- acc[r][j].
constexpr uint32_t amp_rd(uint32_t fd, uint32_t r, uint32_t j) {
  return amp(5, fd, 0, r, 0, j);
}
/// AMP.CLR: every accumulator of the context <- +0.
constexpr uint32_t amp_clr() {
  return amp(6, 0, 0, 0);
}
/// AMP.H b, r: acc[r][j] <- the FMA chain of the 8 halves at rs1 with W16[b]; rd <- rs1 + 16.
constexpr uint32_t amp_h(uint32_t rd, uint32_t rs1, uint32_t b, uint32_t r) {
  return amp(2, rd, rs1, r, b);
}
/// funct3 111, conversion field cvt (funct7 = cvt): the fp16 conversions and AMP.SEED.
constexpr uint32_t amp_cvt(uint32_t cvt, uint32_t rd, uint32_t rs1, uint32_t rs2) {
  return rv::r(cvt, rs2, rs1, 7, rd, 0x0b);
}
/// AMP.CVTHS rd, rs1, rs2: x[rd] <- {h(x[rs2]), h(x[rs1])}, nearest-even.
constexpr uint32_t amp_cvths(uint32_t rd, uint32_t rs1, uint32_t rs2) {
  return amp_cvt(0, rd, rs1, rs2);
}
/// AMP.CVTHS.SR rd, rs1, rs2: as AMP.CVTHS, stochastic rounding.
constexpr uint32_t amp_cvths_sr(uint32_t rd, uint32_t rs1, uint32_t rs2) {
  return amp_cvt(1, rd, rs1, rs2);
}
/// AMP.CVTSH.LO fd, rs1: f[fd] <- binary32 of x[rs1]'s low half.
constexpr uint32_t amp_cvtsh_lo(uint32_t fd, uint32_t rs1) {
  return amp_cvt(2, fd, rs1, 0);
}
/// AMP.CVTSH.HI fd, rs1: f[fd] <- binary32 of x[rs1]'s high half.
constexpr uint32_t amp_cvtsh_hi(uint32_t fd, uint32_t rs1) {
  return amp_cvt(3, fd, rs1, 0);
}
/// AMP.SEED rs1: the context's generator <- x[rs1] (or the reset seed if 0).
constexpr uint32_t amp_seed(uint32_t rs1) {
  return amp_cvt(4, 0, rs1, 0);
}
/// AMP.STRIDE rs1, rs2: the context's row strides <- x[rs1] (AMP.S/AMP.H), x[rs2] (AMP.LA/SA).
constexpr uint32_t amp_stride(uint32_t rs1, uint32_t rs2) {
  return amp_cvt(5, 0, rs1, rs2);
}
/// AMP.ROWS rs1: the context's row limit <- min(x[rs1], 8).
constexpr uint32_t amp_rows(uint32_t rs1) {
  return amp_cvt(6, 0, rs1, 0);
}

// CSR numbers (docs/tile.md, "CSRs").
inline constexpr uint32_t kFflags = 0x001, kFrm = 0x002, kFcsr = 0x003, kCycle = 0xc00,
                          kCycleh = 0xc80, kInstret = 0xc02, kInstreth = 0xc82, kTime = 0xc01,
                          kTileId = 0xcc0, kContextId = 0xcc1, kTileCount = 0xcc2, kMemSize = 0xcc3;

}  // namespace rv

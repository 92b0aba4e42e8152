// Tiny RV32IMF instruction encoder for hand-assembled test programs (RISC-V Unprivileged ISA,
// chapter "RV32I Base Integer Instruction Set", instruction formats R/I/S/B/U/J). Expected results
// in the tests come from the ISA and docs/tile.md, never from the RTL under test.
#pragma once

#include <cstdint>

namespace rv {

/// R-type: funct7 rs2 rs1 funct3 rd opcode.
constexpr uint32_t r(uint32_t f7, uint32_t rs2, uint32_t rs1, uint32_t f3, uint32_t rd, uint32_t op) {
  return (f7 << 25) | (rs2 << 20) | (rs1 << 15) | (f3 << 12) | (rd << 7) | op;
}
/// I-type: imm[11:0] rs1 funct3 rd opcode.
constexpr uint32_t i(int32_t imm, uint32_t rs1, uint32_t f3, uint32_t rd, uint32_t op) {
  return ((static_cast<uint32_t>(imm) & 0xfffu) << 20) | (rs1 << 15) | (f3 << 12) | (rd << 7) | op;
}
/// S-type: imm[11:5] rs2 rs1 funct3 imm[4:0] opcode.
constexpr uint32_t s(int32_t imm, uint32_t rs2, uint32_t rs1, uint32_t f3, uint32_t op) {
  const uint32_t u = static_cast<uint32_t>(imm);
  return (((u >> 5) & 0x7fu) << 25) | (rs2 << 20) | (rs1 << 15) | (f3 << 12) | ((u & 0x1fu) << 7) | op;
}
/// B-type: branch offset in bytes (even).
constexpr uint32_t b(int32_t off, uint32_t rs2, uint32_t rs1, uint32_t f3) {
  const uint32_t u = static_cast<uint32_t>(off);
  return (((u >> 12) & 1u) << 31) | (((u >> 5) & 0x3fu) << 25) | (rs2 << 20) | (rs1 << 15) |
         (f3 << 12) | (((u >> 1) & 0xfu) << 8) | (((u >> 11) & 1u) << 7) | 0x63u;
}
/// U-type: upper 20 bits.
constexpr uint32_t u(uint32_t imm20, uint32_t rd, uint32_t op) { return (imm20 << 12) | (rd << 7) | op; }
/// J-type: jump offset in bytes (even).
constexpr uint32_t j(int32_t off, uint32_t rd) {
  const uint32_t v = static_cast<uint32_t>(off);
  return (((v >> 20) & 1u) << 31) | (((v >> 1) & 0x3ffu) << 21) | (((v >> 11) & 1u) << 20) |
         (((v >> 12) & 0xffu) << 12) | (rd << 7) | 0x6fu;
}

constexpr uint32_t lui(uint32_t rd, uint32_t imm20) { return u(imm20, rd, 0x37); }
constexpr uint32_t addi(uint32_t rd, uint32_t rs1, int32_t imm) { return i(imm, rs1, 0, rd, 0x13); }
constexpr uint32_t add(uint32_t rd, uint32_t rs1, uint32_t rs2) { return r(0, rs2, rs1, 0, rd, 0x33); }
constexpr uint32_t sub(uint32_t rd, uint32_t rs1, uint32_t rs2) { return r(0x20, rs2, rs1, 0, rd, 0x33); }
constexpr uint32_t mul(uint32_t rd, uint32_t rs1, uint32_t rs2) { return r(1, rs2, rs1, 0, rd, 0x33); }
constexpr uint32_t mulh(uint32_t rd, uint32_t rs1, uint32_t rs2) { return r(1, rs2, rs1, 1, rd, 0x33); }
constexpr uint32_t div(uint32_t rd, uint32_t rs1, uint32_t rs2) { return r(1, rs2, rs1, 4, rd, 0x33); }
constexpr uint32_t divu(uint32_t rd, uint32_t rs1, uint32_t rs2) { return r(1, rs2, rs1, 5, rd, 0x33); }
constexpr uint32_t rem(uint32_t rd, uint32_t rs1, uint32_t rs2) { return r(1, rs2, rs1, 6, rd, 0x33); }
constexpr uint32_t remu(uint32_t rd, uint32_t rs1, uint32_t rs2) { return r(1, rs2, rs1, 7, rd, 0x33); }
constexpr uint32_t lw(uint32_t rd, uint32_t rs1, int32_t imm) { return i(imm, rs1, 2, rd, 0x03); }
constexpr uint32_t lb(uint32_t rd, uint32_t rs1, int32_t imm) { return i(imm, rs1, 0, rd, 0x03); }
constexpr uint32_t lhu(uint32_t rd, uint32_t rs1, int32_t imm) { return i(imm, rs1, 5, rd, 0x03); }
constexpr uint32_t sw(uint32_t rs2, uint32_t rs1, int32_t imm) { return s(imm, rs2, rs1, 2, 0x23); }
constexpr uint32_t sb(uint32_t rs2, uint32_t rs1, int32_t imm) { return s(imm, rs2, rs1, 0, 0x23); }
constexpr uint32_t bne(uint32_t rs1, uint32_t rs2, int32_t off) { return b(off, rs2, rs1, 1); }
constexpr uint32_t beq(uint32_t rs1, uint32_t rs2, int32_t off) { return b(off, rs2, rs1, 0); }
constexpr uint32_t jal(uint32_t rd, int32_t off) { return j(off, rd); }
constexpr uint32_t csrrs(uint32_t rd, uint32_t csr, uint32_t rs1) { return i(static_cast<int32_t>(csr), rs1, 2, rd, 0x73); }
constexpr uint32_t csrrw(uint32_t rd, uint32_t csr, uint32_t rs1) { return i(static_cast<int32_t>(csr), rs1, 1, rd, 0x73); }
constexpr uint32_t ecall() { return 0x00000073u; }
constexpr uint32_t fmv_w_x(uint32_t fd, uint32_t rs1) { return r(0x78, 0, rs1, 0, fd, 0x53); }
constexpr uint32_t fmv_x_w(uint32_t rd, uint32_t fs1) { return r(0x70, 0, fs1, 0, rd, 0x53); }
constexpr uint32_t fadd_s(uint32_t fd, uint32_t fs1, uint32_t fs2, uint32_t rm) { return r(0x00, fs2, fs1, rm, fd, 0x53); }
constexpr uint32_t fdiv_s(uint32_t fd, uint32_t fs1, uint32_t fs2, uint32_t rm) { return r(0x0c, fs2, fs1, rm, fd, 0x53); }
constexpr uint32_t fcvt_w_s(uint32_t rd, uint32_t fs1, uint32_t rm) { return r(0x60, 0, fs1, rm, rd, 0x53); }

}  // namespace rv

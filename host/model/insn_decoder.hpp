// Decoding of one RV32IMF+Zicsr instruction word into the model's compact form (docs/tile.md,
// "Instruction set"). Every encoding the contract does not list decodes to Op::Illegal, including
// reserved static rounding modes and CSR accesses that the contract makes illegal, so that the
// interpreter only has to check what depends on run-time state (dynamic rm, addresses, MMIO).
#pragma once

#include <cstdint>

namespace tessera::model {

/// Operations the model executes; one per instruction (FENCE and FENCE.I share Fence).
enum class Op : uint8_t {
  Illegal,
  Lui,
  Auipc,
  Jal,
  Jalr,
  Beq,
  Bne,
  Blt,
  Bge,
  Bltu,
  Bgeu,
  Lb,
  Lh,
  Lw,
  Lbu,
  Lhu,
  Sb,
  Sh,
  Sw,
  Addi,
  Slti,
  Sltiu,
  Xori,
  Ori,
  Andi,
  Slli,
  Srli,
  Srai,
  Add,
  Sub,
  Sll,
  Slt,
  Sltu,
  Xor,
  Srl,
  Sra,
  Or,
  And,
  Fence,
  Ecall,
  Ebreak,
  Csrrw,
  Csrrs,
  Csrrc,
  Csrrwi,
  Csrrsi,
  Csrrci,
  Mul,
  Mulh,
  Mulhsu,
  Mulhu,
  Div,
  Divu,
  Rem,
  Remu,
  Flw,
  Fsw,
  Fmadd,
  Fmsub,
  Fnmsub,
  Fnmadd,
  Fadd,
  Fsub,
  Fmul,
  Fdiv,
  Fsqrt,
  Fsgnj,
  Fsgnjn,
  Fsgnjx,
  Fmin,
  Fmax,
  FcvtWS,
  FcvtWuS,
  FmvXW,
  Feq,
  Flt,
  Fle,
  Fclass,
  FcvtSW,
  FcvtSWu,
  FmvWX,
  // Matrix unit (docs/tile.md, "Matrix unit"); decoded only for a tile that has it.
  AmpLw,
  AmpS,
  AmpLa,
  AmpSa,
  AmpRd,
  AmpClr,
  AmpH,
  AmpCvtHs,
  AmpCvtHsSr,
  AmpCvtShLo,
  AmpCvtShHi,
  AmpSeed,
  AmpStride,
  AmpRows,
};

/// Register file an instruction writes; X with rd = x0 is reported as None.
enum class Dest : uint8_t { None, X, F };

/// Rounding-mode field value meaning "use frm".
inline constexpr uint8_t kRmDynamic = 7;

/// One decoded instruction. imm holds the immediate, or the CSR number for CSR instructions.
struct DecodedInsn {
  int32_t imm = 0;
  Op op = Op::Illegal;
  uint8_t rd = 0;
  uint8_t rs1 = 0;
  uint8_t rs2 = 0;
  uint8_t rs3 = 0;
  /// Static rm 0..4 or kRmDynamic (5 and 6 decode as Illegal); for a matrix-unit instruction
  /// the row field r instead, and rs3 holds funct7 >> 2 (bank b in bit 0, column j in bits 2..1,
  /// C in bit 3), imm being 0 so that the address is x[rs1].
  uint8_t rm = 0;
  Dest dest = Dest::None;
  bool longOp = false;  ///< DIV/DIVU/REM/REMU/FDIV.S/FSQRT.S: LONG_OP_ROUNDS rounds
};

/// Decode one instruction word; never fails (unknown encodings give Op::Illegal).
DecodedInsn decodeInsn(uint32_t insn);

/// Decode for a tile with or without the F and M extensions, as the RTL decoder does: with hasFpu
/// false (integer-only tile, rtl/params.json HAS_FPU = 0) every F instruction and every
/// fflags/frm/fcsr access is Op::Illegal; with hasMulDiv false (HAS_MULDIV = 0) every M
/// instruction (OP, funct7 0000001) is; with hasMatrixUnit (MATRIX_UNIT) the custom-0 words of
/// the matrix unit decode, otherwise every custom-0 word is Op::Illegal.
DecodedInsn decodeInsn(uint32_t insn, bool hasFpu, bool hasMulDiv, bool hasMatrixUnit = false);

/// True if the CSR number exists (docs/tile.md, "CSRs").
bool csrExists(uint32_t csr);

/// True if the CSR is read-only (cycle, instret, ids).
bool csrReadOnly(uint32_t csr);

}  // namespace tessera::model

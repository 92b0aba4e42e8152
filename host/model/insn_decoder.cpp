#include "insn_decoder.hpp"

#include "tessera/chip_params.h"

namespace tessera::model {
namespace {

constexpr uint32_t bits(uint32_t v, unsigned hi, unsigned lo) {
  return (v >> lo) & ((1u << (hi - lo + 1)) - 1u);
}

constexpr int32_t immI(uint32_t i) {
  return static_cast<int32_t>(i) >> 20;
}
constexpr int32_t immS(uint32_t i) {
  return (static_cast<int32_t>(i & 0xfe000000u) >> 20) | static_cast<int32_t>(bits(i, 11, 7));
}
constexpr int32_t immB(uint32_t i) {
  return (static_cast<int32_t>(i & 0x80000000u) >> 19) | static_cast<int32_t>(bits(i, 7, 7) << 11) |
         static_cast<int32_t>(bits(i, 30, 25) << 5) | static_cast<int32_t>(bits(i, 11, 8) << 1);
}
constexpr int32_t immU(uint32_t i) {
  return static_cast<int32_t>(i & 0xfffff000u);
}
constexpr int32_t immJ(uint32_t i) {
  return (static_cast<int32_t>(i & 0x80000000u) >> 11) |
         static_cast<int32_t>(bits(i, 19, 12) << 12) | static_cast<int32_t>(bits(i, 20, 20) << 11) |
         static_cast<int32_t>(bits(i, 30, 21) << 1);
}

// Rounding modes 5 and 6 are reserved: the instruction is illegal whatever frm holds.
constexpr bool rmReserved(uint32_t rm) {
  return rm == 5 || rm == 6;
}

DecodedInsn withDest(DecodedInsn d, Op op, Dest dest) {
  d.op = op;
  d.dest = (dest == Dest::X && d.rd == 0) ? Dest::None : dest;
  return d;
}

DecodedInsn decodeOpFp(DecodedInsn d, uint32_t insn) {
  const uint32_t funct7 = bits(insn, 31, 25);
  const uint32_t rm = bits(insn, 14, 12);
  const uint32_t rs2 = bits(insn, 24, 20);
  // Ops that round: rm is a rounding mode and 5/6 are reserved.
  auto rounding = [&](Op op, Dest dest) {
    if (rmReserved(rm)) return DecodedInsn{};
    return withDest(d, op, dest);
  };
  switch (funct7) {
    case 0x00:
      return rounding(Op::Fadd, Dest::F);
    case 0x04:
      return rounding(Op::Fsub, Dest::F);
    case 0x08:
      return rounding(Op::Fmul, Dest::F);
    case 0x0c: {
      DecodedInsn r = rounding(Op::Fdiv, Dest::F);
      r.longOp = r.op != Op::Illegal;
      return r;
    }
    case 0x2c: {
      if (rs2 != 0) return {};
      DecodedInsn r = rounding(Op::Fsqrt, Dest::F);
      r.longOp = r.op != Op::Illegal;
      return r;
    }
    case 0x10:
      if (rm == 0) return withDest(d, Op::Fsgnj, Dest::F);
      if (rm == 1) return withDest(d, Op::Fsgnjn, Dest::F);
      if (rm == 2) return withDest(d, Op::Fsgnjx, Dest::F);
      return {};
    case 0x14:
      if (rm == 0) return withDest(d, Op::Fmin, Dest::F);
      if (rm == 1) return withDest(d, Op::Fmax, Dest::F);
      return {};
    case 0x60:
      if (rs2 == 0) return rounding(Op::FcvtWS, Dest::X);
      if (rs2 == 1) return rounding(Op::FcvtWuS, Dest::X);
      return {};
    case 0x68:
      if (rs2 == 0) return rounding(Op::FcvtSW, Dest::F);
      if (rs2 == 1) return rounding(Op::FcvtSWu, Dest::F);
      return {};
    case 0x70:
      if (rs2 != 0) return {};
      if (rm == 0) return withDest(d, Op::FmvXW, Dest::X);
      if (rm == 1) return withDest(d, Op::Fclass, Dest::X);
      return {};
    case 0x50:
      if (rm == 2) return withDest(d, Op::Feq, Dest::X);
      if (rm == 1) return withDest(d, Op::Flt, Dest::X);
      if (rm == 0) return withDest(d, Op::Fle, Dest::X);
      return {};
    case 0x78:
      if (rs2 == 0 && rm == 0) return withDest(d, Op::FmvWX, Dest::F);
      return {};
    default:
      return {};
  }
}

DecodedInsn decodeSystem(DecodedInsn d, uint32_t insn) {
  const uint32_t funct3 = bits(insn, 14, 12);
  if (funct3 == 0) {
    // Only the exact ECALL and EBREAK encodings; MRET, WFI, SFENCE.VMA, ... are illegal.
    if (insn == 0x00000073u) return withDest(d, Op::Ecall, Dest::None);
    if (insn == 0x00100073u) return withDest(d, Op::Ebreak, Dest::None);
    return {};
  }
  if (funct3 == 4) return {};
  const uint32_t csr = bits(insn, 31, 20);
  if (!csrExists(csr)) return {};
  // CSRRW/CSRRWI always write; the set/clear forms write only with a nonzero rs1/uimm.
  const bool writes = funct3 == 1 || funct3 == 5 || d.rs1 != 0;
  if (writes && csrReadOnly(csr)) return {};
  d.imm = static_cast<int32_t>(csr);
  static constexpr Op kCsrOps[8] = {Op::Illegal, Op::Csrrw,  Op::Csrrs,  Op::Csrrc,
                                    Op::Illegal, Op::Csrrwi, Op::Csrrsi, Op::Csrrci};
  return withDest(d, kCsrOps[funct3], Dest::X);
}

// A custom-0 word on a tile with the matrix unit (docs/tile.md, "Matrix unit", "Encoding"): the
// fields an instruction does not use must be 0; funct3 111 holds the fp16 conversions.
DecodedInsn decodeAmp(uint32_t insn) {
  constexpr uint32_t kWeightRowMask = 3u << TESS_AMP_ROW_LSB;  // AMP.LW: a weight row, 0..3
  constexpr uint32_t kRowMask = kWeightRowMask | 1u << TESS_AMP_ROW_HI_BIT;
  constexpr uint32_t kBankMask = 1u << TESS_AMP_BANK_BIT;
  constexpr uint32_t kColMask = 3u << TESS_AMP_COL_LSB;
  constexpr uint32_t kClearMask = 1u << TESS_AMP_CLEAR_BIT;
  constexpr uint32_t kCvtMask = 7u << TESS_AMP_CVT_LSB;
  constexpr uint32_t kRdMask = 0x1fu << 7, kRs1Mask = 0x1fu << 15, kRs2Mask = 0x1fu << 20;
  constexpr uint32_t kFixed = 0x7fu | 7u << 12;  // opcode and funct3
  DecodedInsn d;
  d.rd = static_cast<uint8_t>(bits(insn, 11, 7));
  d.rs1 = static_cast<uint8_t>(bits(insn, 19, 15));
  d.rs2 = static_cast<uint8_t>(bits(insn, 24, 20));
  d.rm = static_cast<uint8_t>(bits(insn, TESS_AMP_ROW_LSB + 1, TESS_AMP_ROW_LSB) |
                              bits(insn, TESS_AMP_ROW_HI_BIT, TESS_AMP_ROW_HI_BIT) << 2);
  d.rs3 = static_cast<uint8_t>(bits(insn, 31, 27));
  Op op = Op::Illegal;
  uint32_t allowed = 0;
  Dest dest = Dest::X;
  switch (bits(insn, 14, 12)) {
    case TESS_AMP_F3_LW:
      op = Op::AmpLw;
      allowed = kWeightRowMask | kBankMask | kRdMask | kRs1Mask;
      break;
    case TESS_AMP_F3_S:
      op = Op::AmpS;
      allowed = kRowMask | kBankMask | kRdMask | kRs1Mask;
      break;
    case TESS_AMP_F3_LA:
      op = Op::AmpLa;
      allowed = kRowMask | kRdMask | kRs1Mask;
      break;
    case TESS_AMP_F3_SA:
      op = Op::AmpSa;
      allowed = kRowMask | kClearMask | kRdMask | kRs1Mask;
      break;
    case TESS_AMP_F3_RD:
      op = Op::AmpRd;
      allowed = kRowMask | kColMask | kRdMask;
      dest = Dest::F;
      break;
    case TESS_AMP_F3_CLR:
      op = Op::AmpClr;
      dest = Dest::None;
      break;
    case TESS_AMP_F3_H:
      op = Op::AmpH;
      allowed = kRowMask | kBankMask | kRdMask | kRs1Mask;
      break;
    case TESS_AMP_F3_CVT:
      // The conversion field selects the operation; bits above it are 0 (rs2 only for the packs).
      switch (bits(insn, TESS_AMP_CVT_LSB + 2, TESS_AMP_CVT_LSB)) {
        case TESS_AMP_CVT_HS:
          op = Op::AmpCvtHs;
          allowed = kCvtMask | kRdMask | kRs1Mask | kRs2Mask;
          break;
        case TESS_AMP_CVT_HS_SR:
          op = Op::AmpCvtHsSr;
          allowed = kCvtMask | kRdMask | kRs1Mask | kRs2Mask;
          break;
        case TESS_AMP_CVT_SH_LO:
          op = Op::AmpCvtShLo;
          allowed = kCvtMask | kRdMask | kRs1Mask;
          dest = Dest::F;
          break;
        case TESS_AMP_CVT_SH_HI:
          op = Op::AmpCvtShHi;
          allowed = kCvtMask | kRdMask | kRs1Mask;
          dest = Dest::F;
          break;
        case TESS_AMP_CVT_SEED:
          op = Op::AmpSeed;
          allowed = kCvtMask | kRs1Mask;
          dest = Dest::None;
          break;
        case TESS_AMP_CVT_STRIDE:
          op = Op::AmpStride;
          allowed = kCvtMask | kRs1Mask | kRs2Mask;
          dest = Dest::None;
          break;
        case TESS_AMP_CVT_ROWS:
          op = Op::AmpRows;
          allowed = kCvtMask | kRs1Mask;
          dest = Dest::None;
          break;
        default:
          return {};
      }
      break;
    default:
      return {};
  }
  if ((insn & ~(allowed | kFixed)) != 0) return {};
  return withDest(d, op, dest);
}

}  // namespace

DecodedInsn decodeInsn(uint32_t insn, bool hasFpu, bool hasMulDiv, bool hasMatrixUnit) {
  if (hasMatrixUnit && bits(insn, 6, 0) == TESS_AMP_OPCODE) return decodeAmp(insn);
  const DecodedInsn d = decodeInsn(insn);
  if (!hasMulDiv && bits(insn, 6, 0) == 0x33 && bits(insn, 31, 25) == 0x01) return {};  // M
  if (hasFpu) return d;
  switch (bits(insn, 6, 0)) {
    case 0x07:  // LOAD-FP
    case 0x27:  // STORE-FP
    case 0x43:  // MADD
    case 0x47:  // MSUB
    case 0x4b:  // NMSUB
    case 0x4f:  // NMADD
    case 0x53:  // OP-FP
      return {};
    default:
      break;
  }
  const bool csrOp = d.op == Op::Csrrw || d.op == Op::Csrrs || d.op == Op::Csrrc ||
                     d.op == Op::Csrrwi || d.op == Op::Csrrsi || d.op == Op::Csrrci;
  if (csrOp && d.imm >= 1 && d.imm <= 3) return {};  // fflags, frm, fcsr
  return d;
}

bool csrExists(uint32_t csr) {
  switch (csr) {
    case 0x001:
    case 0x002:
    case 0x003:
    case 0xc00:
    case 0xc80:
    case 0xc02:
    case 0xc82:
    case 0xcc0:
    case 0xcc1:
    case 0xcc2:
    case 0xcc3:
      return true;
    default:
      return false;
  }
}

bool csrReadOnly(uint32_t csr) {
  return bits(csr, 11, 10) == 3;
}

DecodedInsn decodeInsn(uint32_t insn) {
  DecodedInsn d;
  d.rd = static_cast<uint8_t>(bits(insn, 11, 7));
  d.rs1 = static_cast<uint8_t>(bits(insn, 19, 15));
  d.rs2 = static_cast<uint8_t>(bits(insn, 24, 20));
  d.rs3 = static_cast<uint8_t>(bits(insn, 31, 27));
  d.rm = static_cast<uint8_t>(bits(insn, 14, 12));
  const uint32_t funct3 = bits(insn, 14, 12);
  const uint32_t funct7 = bits(insn, 31, 25);
  switch (bits(insn, 6, 0)) {
    case 0x37:
      d.imm = immU(insn);
      return withDest(d, Op::Lui, Dest::X);
    case 0x17:
      d.imm = immU(insn);
      return withDest(d, Op::Auipc, Dest::X);
    case 0x6f:
      d.imm = immJ(insn);
      return withDest(d, Op::Jal, Dest::X);
    case 0x67:
      if (funct3 != 0) return {};
      d.imm = immI(insn);
      return withDest(d, Op::Jalr, Dest::X);
    case 0x63: {
      static constexpr Op kOps[8] = {Op::Beq, Op::Bne, Op::Illegal, Op::Illegal,
                                     Op::Blt, Op::Bge, Op::Bltu,    Op::Bgeu};
      if (kOps[funct3] == Op::Illegal) return {};
      d.imm = immB(insn);
      return withDest(d, kOps[funct3], Dest::None);
    }
    case 0x03: {
      static constexpr Op kOps[8] = {Op::Lb,  Op::Lh,  Op::Lw,      Op::Illegal,
                                     Op::Lbu, Op::Lhu, Op::Illegal, Op::Illegal};
      if (kOps[funct3] == Op::Illegal) return {};
      d.imm = immI(insn);
      return withDest(d, kOps[funct3], Dest::X);
    }
    case 0x23: {
      static constexpr Op kOps[8] = {Op::Sb,      Op::Sh,      Op::Sw,      Op::Illegal,
                                     Op::Illegal, Op::Illegal, Op::Illegal, Op::Illegal};
      if (kOps[funct3] == Op::Illegal) return {};
      d.imm = immS(insn);
      return withDest(d, kOps[funct3], Dest::None);
    }
    case 0x13: {
      d.imm = immI(insn);
      switch (funct3) {
        case 0:
          return withDest(d, Op::Addi, Dest::X);
        case 2:
          return withDest(d, Op::Slti, Dest::X);
        case 3:
          return withDest(d, Op::Sltiu, Dest::X);
        case 4:
          return withDest(d, Op::Xori, Dest::X);
        case 6:
          return withDest(d, Op::Ori, Dest::X);
        case 7:
          return withDest(d, Op::Andi, Dest::X);
        case 1:
          d.imm = static_cast<int32_t>(d.rs2);
          return funct7 == 0 ? withDest(d, Op::Slli, Dest::X) : DecodedInsn{};
        default:  // 5
          d.imm = static_cast<int32_t>(d.rs2);
          if (funct7 == 0) return withDest(d, Op::Srli, Dest::X);
          if (funct7 == 0x20) return withDest(d, Op::Srai, Dest::X);
          return {};
      }
    }
    case 0x33: {
      if (funct7 == 0) {
        static constexpr Op kOps[8] = {Op::Add, Op::Sll, Op::Slt, Op::Sltu,
                                       Op::Xor, Op::Srl, Op::Or,  Op::And};
        return withDest(d, kOps[funct3], Dest::X);
      }
      if (funct7 == 0x20) {
        if (funct3 == 0) return withDest(d, Op::Sub, Dest::X);
        if (funct3 == 5) return withDest(d, Op::Sra, Dest::X);
        return {};
      }
      if (funct7 == 0x01) {
        static constexpr Op kOps[8] = {Op::Mul, Op::Mulh, Op::Mulhsu, Op::Mulhu,
                                       Op::Div, Op::Divu, Op::Rem,    Op::Remu};
        DecodedInsn r = withDest(d, kOps[funct3], Dest::X);
        r.longOp = funct3 >= 4;
        return r;
      }
      return {};
    }
    case 0x0f:
      // FENCE and FENCE.I are no-ops; their other fields are ignored, as RISC-V asks of
      // implementations for forward compatibility.
      if (funct3 > 1) return {};
      return withDest(d, Op::Fence, Dest::None);
    case 0x73:
      return decodeSystem(d, insn);
    case 0x07:
      if (funct3 != 2) return {};
      d.imm = immI(insn);
      return withDest(d, Op::Flw, Dest::F);
    case 0x27:
      if (funct3 != 2) return {};
      d.imm = immS(insn);
      return withDest(d, Op::Fsw, Dest::None);
    case 0x43:
    case 0x47:
    case 0x4b:
    case 0x4f: {
      // R4 format: bits 26:25 are fmt, only S (00) exists here.
      if (bits(insn, 26, 25) != 0 || rmReserved(funct3)) return {};
      static constexpr Op kOps[4] = {Op::Fmadd, Op::Fmsub, Op::Fnmsub, Op::Fnmadd};
      return withDest(d, kOps[bits(insn, 3, 2)], Dest::F);
    }
    case 0x53:
      return decodeOpFp(d, insn);
    default:
      return {};
  }
}

}  // namespace tessera::model

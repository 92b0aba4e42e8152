// The matrix unit on the model (docs/tile.md, "Matrix unit"): decoding and illegal forms, the
// unit-absent trap, directed special values and a short random sweep against the host reference,
// alignment and access traps, timing, and weights shared by the contexts.
#include <gtest/gtest.h>

#include "amp_reference.hpp"

namespace tessera::model::test {
namespace {

using namespace rv;

constexpr uint32_t kData = 0x2000;

TileConfig withUnit() {
  TileConfig config{0, 1, 65536, true, true, TESS_NUM_CONTEXTS};
  config.hasMatrixUnit = true;
  return config;
}

// Every instruction of the unit, one form each.
const std::vector<uint32_t> kAllForms = {amp_lw(a0, a0, 1, 3), amp_s(a0, a0, 1, 2),
                                         amp_la(a1, a2, 1),    amp_sa(a1, a2, 3, 1),
                                         amp_rd(31, 2, 3),     amp_clr()};

TEST(AmpDecode, EncodingsMatchParams) {
  // rv_encode.hpp is written from the spec's table, the decoder from rtl/params.json.
  EXPECT_EQ(amp_lw(0, 0, 0, 0) & 0x7fu, TESS_AMP_OPCODE);
  EXPECT_EQ(amp_s(0, 0, 0, 0) >> 12 & 7u, TESS_AMP_F3_S);
  EXPECT_EQ(amp_sa(0, 0, 0, 1), amp_sa(0, 0, 0, 0) | 1u << TESS_AMP_CLEAR_BIT);
  EXPECT_EQ(amp_rd(0, 0, 3), amp_rd(0, 0, 0) | 3u << TESS_AMP_COL_LSB);
  EXPECT_EQ(amp_lw(0, 0, 1, 2),
            amp_lw(0, 0, 0, 0) | 1u << TESS_AMP_BANK_BIT | 2u << TESS_AMP_ROW_LSB);
  // Accumulator rows 4..7: r[2] in its own bit.
  EXPECT_EQ(amp_s(0, 0, 0, 6), amp_s(0, 0, 0, 2) | 1u << TESS_AMP_ROW_HI_BIT);
  EXPECT_EQ(amp_stride(0, 0) >> TESS_AMP_CVT_LSB, TESS_AMP_CVT_STRIDE);
  EXPECT_EQ(amp_rows(0) >> TESS_AMP_CVT_LSB, TESS_AMP_CVT_ROWS);
  for (unsigned r = 0; r < TESS_AMP_ACC_ROWS; ++r) {
    EXPECT_EQ(decodeInsn(amp_s(a0, a1, 1, r), true, true, true).rm, r);
    EXPECT_EQ(decodeInsn(amp_h(a0, a1, 0, r), true, true, true).rm, r);
    EXPECT_EQ(decodeInsn(amp_la(a0, a1, r), true, true, true).rm, r);
    EXPECT_EQ(decodeInsn(amp_sa(a0, a1, r, 1), true, true, true).rm, r);
    EXPECT_EQ(decodeInsn(amp_rd(3, r, 2), true, true, true).rm, r);
  }
  const DecodedInsn st = decodeInsn(amp_stride(a4, a5), true, true, true);
  EXPECT_EQ(st.op, Op::AmpStride);
  EXPECT_EQ(st.rs1, a4);
  EXPECT_EQ(st.rs2, a5);
  EXPECT_EQ(st.dest, Dest::None);
  EXPECT_EQ(decodeInsn(amp_rows(a4), true, true, true).op, Op::AmpRows);
  EXPECT_EQ(decodeInsn(amp_rows(a4), true, true, true).dest, Dest::None);
  EXPECT_EQ(decodeInsn(amp_rows(a4), true, true, false).op, Op::Illegal);
  const Op ops[] = {Op::AmpLw, Op::AmpS, Op::AmpLa, Op::AmpSa, Op::AmpRd, Op::AmpClr};
  for (size_t i = 0; i < kAllForms.size(); ++i) {
    EXPECT_EQ(decodeInsn(kAllForms[i], true, true, true).op, ops[i]) << std::hex << kAllForms[i];
    EXPECT_EQ(decodeInsn(kAllForms[i], true, true, false).op, Op::Illegal);
    EXPECT_EQ(decodeInsn(kAllForms[i]).op, Op::Illegal);
  }
  const DecodedInsn s = decodeInsn(amp_s(a3, a4, 1, 2), true, true, true);
  EXPECT_EQ(s.rd, a3);
  EXPECT_EQ(s.rs1, a4);
  EXPECT_EQ(s.rm, 2);
  EXPECT_EQ(s.rs3 & 1, 1);
  EXPECT_EQ(s.imm, 0);
  EXPECT_EQ(s.dest, Dest::X);
  EXPECT_EQ(decodeInsn(amp_s(zero, a4, 0, 0), true, true, true).dest, Dest::None);
  EXPECT_EQ(decodeInsn(amp_rd(5, 0, 0), true, true, true).dest, Dest::F);
  EXPECT_EQ(decodeInsn(amp_clr(), true, true, true).dest, Dest::None);
}

TEST(AmpDecode, IllegalForms) {
  auto illegal = [](uint32_t w) {
    EXPECT_EQ(decodeInsn(w, true, true, true).op, Op::Illegal) << std::hex << w;
  };
  for (uint32_t w : kAllForms) illegal(w | 1u << 20);  // rs2
  // Bit 31 is r[2]: a weight row is 0..3, and AMP.CLR has no row.
  illegal(amp_lw(a0, a0, 0, 0) | 1u << TESS_AMP_ROW_HI_BIT);
  illegal(amp_clr() | 1u << TESS_AMP_ROW_HI_BIT);
  illegal(amp_cvt(7, a0, a1, a2));  // reserved
  illegal(amp_cvt(7, 0, a1, 0));
  illegal(amp_stride(a1, a2) | a0 << 7);                   // rd of AMP.STRIDE
  illegal(amp_rows(a1) | a0 << 7);                         // rd of AMP.ROWS
  illegal(amp_rows(a1) | a2 << 20);                        // rs2 of AMP.ROWS
  illegal(amp_stride(a1, a2) | 1u << 28);                  // above the conversion field
  illegal(amp_lw(a0, a0, 0, 0) | 1u << TESS_AMP_COL_LSB);  // j on AMP.LW
  illegal(amp_s(a0, a0, 0, 0) | 1u << TESS_AMP_CLEAR_BIT);
  illegal(amp_la(a0, a0, 0) | 1u << TESS_AMP_BANK_BIT);
  illegal(amp_sa(a0, a0, 0, 0) | 1u << TESS_AMP_BANK_BIT);
  illegal(amp_sa(a0, a0, 0, 0) | 1u << TESS_AMP_COL_LSB);
  illegal(amp_rd(1, 0, 0) | a0 << 15);  // rs1 on AMP.RD
  illegal(amp_rd(1, 0, 0) | 1u << TESS_AMP_BANK_BIT);
  illegal(amp_clr() | 1u << 7);  // rd
  illegal(amp_clr() | 1u << 15);
  illegal(amp_clr() | 1u << TESS_AMP_ROW_LSB);
  // custom-1 stays reserved on a tile with the unit.
  illegal(amp_s(a0, a0, 0, 0) ^ TESS_AMP_OPCODE ^ TESS_AMP_RESERVED_OPCODE);
}

// The fp16 step and the conversions (docs/tile.md, "fp16 inputs and conversions").
const std::vector<uint32_t> kFp16Forms = {amp_h(a0, a0, 1, 3),      amp_cvths(a3, a1, a2),
                                          amp_cvths_sr(a3, a1, a2), amp_cvtsh_lo(31, a1),
                                          amp_cvtsh_hi(1, a1),      amp_seed(a1)};

TEST(AmpDecode, Fp16FormsMatchParams) {
  EXPECT_EQ(amp_h(0, 0, 0, 0) >> 12 & 7u, TESS_AMP_F3_H);
  EXPECT_EQ(amp_cvths(0, 0, 0) >> 12 & 7u, TESS_AMP_F3_CVT);
  EXPECT_EQ(amp_cvths_sr(0, 0, 0) >> TESS_AMP_CVT_LSB, TESS_AMP_CVT_HS_SR);
  EXPECT_EQ(amp_cvtsh_lo(0, 0) >> TESS_AMP_CVT_LSB, TESS_AMP_CVT_SH_LO);
  EXPECT_EQ(amp_cvtsh_hi(0, 0) >> TESS_AMP_CVT_LSB, TESS_AMP_CVT_SH_HI);
  EXPECT_EQ(amp_seed(0) >> TESS_AMP_CVT_LSB, TESS_AMP_CVT_SEED);
  const Op ops[] = {Op::AmpH,       Op::AmpCvtHs,   Op::AmpCvtHsSr,
                    Op::AmpCvtShLo, Op::AmpCvtShHi, Op::AmpSeed};
  const Dest dests[] = {Dest::X, Dest::X, Dest::X, Dest::F, Dest::F, Dest::None};
  for (size_t i = 0; i < kFp16Forms.size(); ++i) {
    const DecodedInsn d = decodeInsn(kFp16Forms[i], true, true, true);
    EXPECT_EQ(d.op, ops[i]) << std::hex << kFp16Forms[i];
    EXPECT_EQ(d.dest, dests[i]) << std::hex << kFp16Forms[i];
    EXPECT_EQ(decodeInsn(kFp16Forms[i], true, true, false).op, Op::Illegal);
    EXPECT_EQ(decodeInsn(kFp16Forms[i]).op, Op::Illegal);
  }
  const DecodedInsn h = decodeInsn(amp_h(a3, a4, 1, 2), true, true, true);
  EXPECT_EQ(h.rs1, a4);
  EXPECT_EQ(h.rm, 2);
  EXPECT_EQ(h.rs3 & 1, 1);
  const DecodedInsn c = decodeInsn(amp_cvths(a3, a4, a5), true, true, true);
  EXPECT_EQ(c.rs1, a4);
  EXPECT_EQ(c.rs2, a5);
  EXPECT_EQ(decodeInsn(amp_cvths(zero, a4, a5), true, true, true).dest, Dest::None);
}

TEST(AmpDecode, Fp16IllegalForms) {
  auto illegal = [](uint32_t w) {
    EXPECT_EQ(decodeInsn(w, true, true, true).op, Op::Illegal) << std::hex << w;
  };
  for (uint32_t w : kFp16Forms) {
    if (w != kFp16Forms[0]) illegal(w | 1u << 31);  // AMP.H's bit 31 is r[2]
    illegal(w | 1u << 28);                          // above the conversion field (AMP.H: j)
  }
  illegal(amp_h(a0, a0, 0, 0) | 1u << 20);  // rs2
  illegal(amp_h(a0, a0, 0, 0) | 1u << TESS_AMP_CLEAR_BIT);
  illegal(amp_cvtsh_lo(1, a0) | 1u << 20);  // rs2 of a widening
  illegal(amp_cvtsh_hi(1, a0) | 1u << 24);
  illegal(amp_seed(a0) | 1u << 7);   // rd of AMP.SEED
  illegal(amp_seed(a0) | 1u << 20);  // rs2 of AMP.SEED
  // custom-1 stays reserved: every funct3.
  for (uint32_t f3 = 0; f3 < 8; ++f3) {
    illegal((amp(f3, a0, a0, 0) & ~0x7fu) | TESS_AMP_RESERVED_OPCODE);
  }
}

TEST(AmpModel, RefusesAUnitWithoutFpu) {
  TileConfig config = withUnit();
  config.hasFpu = false;
  EXPECT_THROW(TileModel{config}, Error);
}

// Without the unit (every configuration in phase 1) each unit word traps as illegal in EX,
// after the instructions before it, with the word as the value.
TEST(AmpModel, AbsentUnitTrapsAsIllegal) {
  TileConfig config = withUnit();
  config.hasMatrixUnit = false;  // the iCE40 tile's case (rtl/params.json ICE40 MATRIX_UNIT = 0)
  std::vector<uint32_t> forms = kAllForms;
  forms.insert(forms.end(), kFp16Forms.begin(), kFp16Forms.end());
  for (uint32_t w : forms) {
    TileModel tile(config);
    const std::vector<uint32_t> prog = {addi(a0, zero, 0x100), w, kLoadMmioBase, kExit};
    tile.writeMemory(0, std::span(reinterpret_cast<const uint8_t*>(prog.data()), prog.size() * 4));
    ASSERT_EQ(tile.run(100000), TileState::Trapped);
    EXPECT_EQ(tile.trap().cause, TESS_CAUSE_ILLEGAL_INSN);
    EXPECT_EQ(tile.trap().value, w);
    EXPECT_EQ(tile.trap().pc, 4u);
    EXPECT_EQ(tile.cycles(), 7u);  // issued at 6: h + 1
  }
}

struct UnitHarness {
  TileModel tile{withUnit()};
  std::vector<RetireRecord> records;
  UnitHarness() {
    tile.setRetireSink([this](const RetireRecord& rec) { records.push_back(rec); });
  }
  void put(uint32_t addr, const std::vector<uint32_t>& words) {
    tile.writeMemory(addr,
                     std::span(reinterpret_cast<const uint8_t*>(words.data()), words.size() * 4));
  }
  uint32_t word(uint32_t addr) const {
    uint32_t w = 0;
    tile.readMemory(addr, std::span(reinterpret_cast<uint8_t*>(&w), 4));
    return w;
  }
};

// Directed special values, each against the reference and against the value the IEEE rules give.
TEST(AmpModel, DirectedSpecialValues) {
  std::vector<AmpOperands> sets;
  for (const AmpDirectedCase& c : directedAmpCases()) {
    // The reference must agree with the hand-derived values, or the test itself is wrong.
    EXPECT_EQ(referenceAmp(c.o), c.want);
    sets.push_back(c.o);
  }
  for (unsigned b = 0; b < 2; ++b) {
    for (unsigned r = 0; r < TESS_AMP_ACC_ROWS; ++r) EXPECT_EQ(runAmpBatch(sets, b, r, r % 4), 0u);
  }
}

// AMP.H's directed special values on every bank and row, against the reference and the values
// the IEEE rules give.
TEST(AmpModel, Fp16DirectedSpecialValues) {
  std::vector<AmpOperands> sets;
  for (const AmpDirectedCase& c : directedAmpHCases()) {
    EXPECT_EQ(referenceAmpH(c.o), c.want);
    sets.push_back(c.o);
  }
  for (unsigned b = 0; b < 2; ++b) {
    for (unsigned r = 0; r < TESS_AMP_ACC_ROWS; ++r) {
      EXPECT_EQ(runAmpBatch(sets, b, r, 3 - r % 4, AmpPrecision::Fp16), 0u);
    }
  }
}

// The conversions' directed cases: the reference gives the hand-derived values, the model the
// reference's, with the generator seeded three ways.
TEST(AmpModel, ConversionDirectedCases) {
  for (const tessera::test::CvtCase& c : tessera::test::directedNarrowCases()) {
    EXPECT_EQ(fp::f32_to_f16(c.in, false, 0), c.want) << std::hex << c.in;
  }
  for (const tessera::test::CvtCase& c : tessera::test::directedWidenCases()) {
    EXPECT_EQ(fp::f16_to_f32(static_cast<uint16_t>(c.in)), c.want) << std::hex << c.in;
  }
  const std::vector<AmpCvtOperands> sets = tessera::test::directedCvtOperands();
  for (uint32_t seed : {0u, 1u, 0xdeadbeefu}) EXPECT_EQ(runCvtBatch(sets, seed), 0u);
}

// The generator: xorshift32 (13, 17, 5) from the seed, one step per AMP.CVTHS.SR, its new state's
// low 16 bits for the low half and high 16 for the high half; each context has its own.
TEST(AmpModel, StochasticRoundingSequence) {
  // Marsaglia's xorshift32 from state 1: 270369, 67634689, 2647435461.
  EXPECT_EQ(fp::amp_sr_step(1), 0x00042021u);
  EXPECT_EQ(fp::amp_sr_step(0x00042021u), 0x04080601u);
  EXPECT_EQ(fp::amp_sr_step(0x04080601u), 0x9dcca8c5u);
  UnitHarness h;
  for (unsigned c = 0; c < TESS_NUM_CONTEXTS; ++c) {
    EXPECT_EQ(h.tile.srState(c), static_cast<uint32_t>(TESS_AMP_SR_SEED0));
  }
  constexpr uint32_t kAlmost = 0x3f801fffu;  // 1 + 2^-10 - 2^-23: F = 0xfff8, up iff u >= 8
  constexpr uint32_t kHalf = 0x3f801000u;    // 1 + 2^-11: F = 0x8000, up iff u >= 0x8000
  constexpr uint32_t kTop = 0x477ff000u;     // 65520: F = 0x8000 below ∞
  std::vector<uint32_t> prog = {addi(a0, zero, 1), amp_seed(a0)};
  for (uint32_t w : li(a1, kAlmost)) prog.push_back(w);
  for (uint32_t w : li(a2, kHalf)) prog.push_back(w);
  for (uint32_t w : li(a3, kTop)) prog.push_back(w);
  prog.insert(prog.end(),
              {amp_cvths_sr(a4, a1, a2), amp_cvths_sr(a5, a2, a1), amp_cvths_sr(a6, a2, a3),
               amp_cvths(a7, a1, a2), amp_seed(zero), kLoadMmioBase, kExit});
  h.put(0, prog);
  ASSERT_EQ(h.tile.run(100000), TileState::Halted);
  // State 0x00042021: u = 0x2021 (low, up), 0x0004 (high, down).
  EXPECT_EQ(h.tile.xreg(0, a4), 0x3c003c01u);
  // State 0x04080601: u = 0x0601 for 1 + 2^-11 (down), 0x0408 for kAlmost (up).
  EXPECT_EQ(h.tile.xreg(0, a5), 0x3c013c00u);
  // State 0x9dcca8c5: u = 0xa8c5 for 1 + 2^-11 (up), 0x9dcc for 65520 (up: ∞).
  EXPECT_EQ(h.tile.xreg(0, a6), 0x7c003c01u);
  // Nearest-even: kAlmost up, the tie 1 + 2^-11 to even (down); the generator does not move.
  EXPECT_EQ(h.tile.xreg(0, a7), 0x3c003c01u);
  // AMP.SEED of 0 sets the reset state; the workers' generators were never touched.
  for (unsigned c = 0; c < TESS_NUM_CONTEXTS; ++c) {
    EXPECT_EQ(h.tile.srState(c), static_cast<uint32_t>(TESS_AMP_SR_SEED0));
  }
}

// Each context steps its own generator: a worker's AMP.CVTHS.SR leaves the supervisor's state.
TEST(AmpModel, GeneratorsArePerContext) {
  UnitHarness h;
  h.put(0x200, {addi(a0, zero, 1), amp_seed(a0), amp_cvths_sr(a1, zero, zero), kLoadMmioBase,
                sw(zero, t0, static_cast<int32_t>(TESS_MMIO_DONE - TESS_MMIO_BASE))});
  h.put(0, {kLoadMmioBase, addi(a3, zero, 0x200),
            sw(a3, t0, static_cast<int32_t>(TESS_MMIO_RUN_BASE - TESS_MMIO_BASE)),
            sw(zero, t0, static_cast<int32_t>(TESS_MMIO_WAIT - TESS_MMIO_BASE)),
            amp_cvths_sr(a1, zero, zero), kExit});
  ASSERT_EQ(h.tile.run(100000), TileState::Halted);
  EXPECT_EQ(h.tile.srState(1), 0x00042021u);
  EXPECT_EQ(h.tile.srState(0), fp::amp_sr_step(TESS_AMP_SR_SEED0));
  EXPECT_EQ(h.tile.xreg(1, a1), 0u);  // ±0 converts to +0 in either mode
}

// AMP.S accumulates: two steps on the same row without AMP.LA, other rows and the other bank
// untouched; AMP.CLR clears every row; the post-increments step 16 bytes, rd = x0 discards.
TEST(AmpModel, AccumulatesAcrossStepsAndClears) {
  UnitHarness h;
  // W bank 1 = [k][j] = k + 1 (as floats); x = 1, 2, 3, 4 then 0.5 x 4.
  std::vector<uint32_t> w(16);
  for (unsigned k = 0; k < 4; ++k) {
    for (unsigned j = 0; j < 4; ++j) w[k * 4 + j] = std::bit_cast<uint32_t>(float(k + 1));
  }
  h.put(kData, w);
  h.put(kData + 64, {0x3f800000u, 0x40000000u, 0x40400000u, 0x40800000u, 0x3f000000u, 0x3f000000u,
                     0x3f000000u, 0x3f000000u});
  h.put(0, {li(a0, kData)[0], li(a0, kData)[1], amp_lw(a0, a0, 1, 0), amp_lw(a0, a0, 1, 1),
            amp_lw(a0, a0, 1, 2), amp_lw(a0, a0, 1, 3), amp_s(a0, a0, 1, 2), amp_s(zero, a0, 1, 2),
            amp_rd(1, 2, 0), amp_rd(2, 2, 3), amp_rd(3, 1, 0), addi(a1, zero, 0x400),
            amp_sa(a1, a1, 2, 0), amp_clr(), amp_rd(4, 2, 1), amp_sa(zero, a1, 2, 0), kLoadMmioBase,
            kExit});
  ASSERT_EQ(h.tile.run(100000), TileState::Halted);
  // 1·1 + 2·2 + 3·3 + 4·4 = 30, then + 0.5·(1+2+3+4) = 35.
  EXPECT_EQ(h.tile.freg(0, 1), std::bit_cast<uint32_t>(35.0f));
  EXPECT_EQ(h.tile.freg(0, 2), std::bit_cast<uint32_t>(35.0f));
  EXPECT_EQ(h.tile.freg(0, 3), 0u);                // row 1 untouched
  EXPECT_EQ(h.tile.freg(0, 4), 0u);                // cleared
  EXPECT_EQ(h.tile.xreg(0, a0), kData + 64 + 16);  // the second AMP.S had rd = x0
  EXPECT_EQ(h.tile.xreg(0, a1), 0x410u);
  for (unsigned j = 0; j < 4; ++j) {
    EXPECT_EQ(h.word(0x400 + 4 * j), std::bit_cast<uint32_t>(35.0f));
    EXPECT_EQ(h.word(0x410 + 4 * j), 0u);  // stored after AMP.CLR
    EXPECT_EQ(h.tile.weight(1, 2, j), std::bit_cast<uint32_t>(3.0f));
    EXPECT_EQ(h.tile.weight(0, 2, j), 0u);
  }
  // Records: the post-increment as an x write, AMP.RD as an f write, AMP.CLR as none.
  ASSERT_GE(h.records.size(), 16u);
  EXPECT_EQ(h.records[6].dest, DestKind::X);
  EXPECT_EQ(h.records[6].value, kData + 80);
  EXPECT_EQ(h.records[7].dest, DestKind::None);
  EXPECT_EQ(h.records[8].dest, DestKind::F);
  EXPECT_EQ(h.records[8].value, std::bit_cast<uint32_t>(35.0f));
  EXPECT_EQ(h.records[13].dest, DestKind::None);
}

// Row addressing (docs/tile.md, "Row strides and the row limit"): row r of AMP.S at rs1 + r
// strideS, of AMP.LA and AMP.SA at rs1 + r strideC (modulo 2^32), rows at or past the limit
// skipped without an access or a trap but with their post-increment; AMP.ROWS clamps to 8.
TEST(AmpModel, RowStridesAndTheRowLimit) {
  UnitHarness h;
  // Bank 0 = the identity, so that AMP.S adds its inputs to the row: acc[r] = LA's row + x_r.
  std::vector<uint32_t> w(16, 0);
  for (unsigned k = 0; k < 4; ++k) w[k * 4 + k] = std::bit_cast<uint32_t>(1.0f);
  h.put(kData, w);
  // Inputs of row r at 0x4000 + r * 0x2800 (rows 5..7 would lie past 64 KiB: not accessed);
  // accumulator rows downwards from 0x3000 (strideC = -32).
  constexpr uint32_t kX = 0x4000, kStrideS = 0x2800, kAcc = 0x3000;
  for (unsigned r = 0; r < 5; ++r) {
    std::vector<uint32_t> x(4), a(4);
    for (unsigned k = 0; k < 4; ++k) {
      x[k] = std::bit_cast<uint32_t>(float(r * 10 + k));
      a[k] = std::bit_cast<uint32_t>(float(100 * (r + 1)));
    }
    h.put(kX + r * kStrideS, x);
    h.put(kAcc - 32 * r, a);
  }
  std::vector<uint32_t> prog;
  auto emitLi = [&](uint32_t rd, uint32_t v) {
    for (uint32_t word : li(rd, v)) prog.push_back(word);
  };
  emitLi(a0, kData);
  emitLi(a1, kStrideS);
  emitLi(a2, 0u - 32u);
  emitLi(a3, kX);
  emitLi(a4, kAcc);
  emitLi(a5, 5);
  emitLi(a6, 0x6000);  // the stores: row r at 0x6000 - 32 r
  prog.insert(prog.end(), {amp_lw(a0, a0, 0, 0), amp_lw(a0, a0, 0, 1), amp_lw(a0, a0, 0, 2),
                           amp_lw(a0, a0, 0, 3), amp_stride(a1, a2), amp_rows(a5)});
  for (unsigned r = 0; r < 8; ++r) prog.push_back(amp_la(r == 7 ? a4 : zero, a4, r));
  for (unsigned r = 0; r < 8; ++r) prog.push_back(amp_s(r == 7 ? a3 : zero, a3, 0, r));
  prog.insert(prog.end(), {amp_rd(1, 4, 2), amp_rd(2, 5, 0)});
  for (unsigned r = 0; r < 8; ++r) prog.push_back(amp_sa(r == 7 ? a6 : zero, a6, r, 0));
  emitLi(a7, 100);
  prog.insert(prog.end(), {amp_rows(a7), amp_rd(3, 7, 0), kLoadMmioBase, kExit});
  h.put(0, prog);
  ASSERT_EQ(h.tile.run(100000), TileState::Halted) << h.tile.trap().cause;
  for (unsigned r = 0; r < 8; ++r) {
    for (unsigned j = 0; j < 4; ++j) {
      const float want = r < 5 ? float(100 * (r + 1)) + float(r * 10 + j) : 0.0f;
      EXPECT_EQ(h.tile.accumulator(0, r, j), std::bit_cast<uint32_t>(want)) << r << " " << j;
      // Stored rows downwards; a skipped row stores nothing.
      const uint32_t stored = h.word(0x6000 - 32 * r + 4 * j);
      EXPECT_EQ(stored, r < 5 ? std::bit_cast<uint32_t>(want) : 0u) << r << " " << j;
    }
  }
  EXPECT_EQ(h.tile.freg(0, 1), std::bit_cast<uint32_t>(500.0f + 42.0f));  // acc[4][2]
  EXPECT_EQ(h.tile.freg(0, 2), 0u);  // AMP.RD ignores the limit: row 5 was never written
  // The last instruction of each group, a skipped row, still stepped its pointer by 16.
  EXPECT_EQ(h.tile.xreg(0, a4), kAcc + 16);
  EXPECT_EQ(h.tile.xreg(0, a3), kX + 16);
  EXPECT_EQ(h.tile.xreg(0, a6), 0x6000u + 16);
  EXPECT_EQ(h.tile.strideS(0), kStrideS);
  EXPECT_EQ(h.tile.strideC(0), 0u - 32u);
  EXPECT_EQ(h.tile.rowLimit(0), 8u);  // AMP.ROWS of 100
  // Other contexts keep the reset addressing.
  EXPECT_EQ(h.tile.strideS(1), 0u);
  EXPECT_EQ(h.tile.rowLimit(1), unsigned{TESS_AMP_ACC_ROWS});
}

// Alignment before access, as "Halting and traps" orders them; a trapping instruction writes
// nothing (rd keeps its value).
TEST(AmpModel, MisalignedAndOutOfSramTrap) {
  struct Case {
    uint32_t insn;
    uint32_t addr;
    uint32_t cause;
  };
  const Case cases[] = {
      {amp_s(a0, a0, 0, 0), kData + 8, TESS_CAUSE_LOAD_MISALIGNED},
      {amp_lw(a0, a0, 0, 0), kData + 4, TESS_CAUSE_LOAD_MISALIGNED},
      {amp_la(a0, a0, 0), kData + 12, TESS_CAUSE_LOAD_MISALIGNED},
      {amp_sa(a0, a0, 0, 1), kData + 2, TESS_CAUSE_STORE_MISALIGNED},
      {amp_s(a0, a0, 0, 0), 65536, TESS_CAUSE_LOAD_ACCESS},
      {amp_lw(a0, a0, 0, 0), 0xfffffff0u, TESS_CAUSE_LOAD_ACCESS},
      {amp_la(a0, a0, 0), TESS_MMIO_BASE, TESS_CAUSE_LOAD_ACCESS},  // never MMIO
      {amp_sa(a0, a0, 0, 1), TESS_MMIO_BASE, TESS_CAUSE_STORE_ACCESS},
      {amp_sa(a0, a0, 0, 1), 65536 - 16 + 16, TESS_CAUSE_STORE_ACCESS},
      {amp_h(a0, a0, 1, 1), kData + 4, TESS_CAUSE_LOAD_MISALIGNED},
      {amp_h(a0, a0, 0, 0), TESS_MMIO_BASE + 2, TESS_CAUSE_LOAD_MISALIGNED},  // alignment first
      {amp_h(a0, a0, 0, 0), 65536, TESS_CAUSE_LOAD_ACCESS},
      {amp_h(a0, a0, 0, 0), TESS_MMIO_BASE, TESS_CAUSE_LOAD_ACCESS},
  };
  for (const Case& c : cases) {
    UnitHarness h;
    h.put(0, {li(a0, c.addr)[0], li(a0, c.addr)[1], c.insn, kLoadMmioBase, kExit});
    ASSERT_EQ(h.tile.run(1000), TileState::Trapped) << std::hex << c.insn;
    EXPECT_EQ(h.tile.trap().cause, c.cause) << std::hex << c.insn;
    EXPECT_EQ(h.tile.trap().value, c.addr);
    EXPECT_EQ(h.tile.xreg(0, a0), c.addr);
  }
  // The last 16 bytes of SRAM are in range.
  UnitHarness h;
  h.put(0,
        {li(a0, 65536 - 16)[0], li(a0, 65536 - 16)[1], amp_sa(a0, a0, 0, 0), kLoadMmioBase, kExit});
  EXPECT_EQ(h.tile.run(1000), TileState::Halted);
  EXPECT_EQ(h.tile.xreg(0, a0), 65536u);
}

// One round each: a program of unit instructions takes the cycles of as many ADDIs.
TEST(AmpModel, EveryInstructionTakesOneRound) {
  auto cycles = [](const std::vector<uint32_t>& body) {
    UnitHarness h;
    std::vector<uint32_t> prog = {addi(a0, zero, 0x400), addi(a1, zero, 0x500)};
    prog.insert(prog.end(), body.begin(), body.end());
    prog.push_back(kLoadMmioBase);
    prog.push_back(kExit);
    h.put(0, prog);
    EXPECT_EQ(h.tile.run(100000), TileState::Halted);
    return h.tile.cycles();
  };
  const std::vector<uint32_t> unit = {
      amp_lw(a0, a0, 0, 0),     amp_s(a0, a0, 0, 0), amp_la(a0, a0, 1),   amp_sa(a1, a1, 1, 1),
      amp_rd(1, 1, 1),          amp_clr(),           amp_h(a0, a0, 1, 0), amp_cvths(a2, a0, a1),
      amp_cvths_sr(a2, a0, a1), amp_cvtsh_lo(2, a1), amp_cvtsh_hi(3, a1), amp_seed(a0),
      amp_stride(zero, zero),   amp_rows(a0),        amp_s(a0, a0, 1, 7), amp_sa(a1, a1, 6, 0)};
  const std::vector<uint32_t> scalar(unit.size(), addi(a2, a2, 1));
  EXPECT_EQ(cycles(unit), cycles(scalar));
  EXPECT_EQ(cycles(unit), 6u * (2 + unit.size() + 1) + 1);
}

// Weights are one set per tile, accumulators one per context: a worker's AMP.S uses the weights
// the supervisor loaded and starts from its own (zero) accumulators, not the supervisor's.
TEST(AmpModel, WeightsAreSharedAccumulatorsPerContext) {
  UnitHarness h;
  std::vector<uint32_t> w(16, 0);
  for (unsigned k = 0; k < 4; ++k) w[k * 4 + k] = 0x40000000u;  // 2·I
  h.put(kData, w);
  h.put(kData + 64, {0x3f800000u, 0x3f800000u, 0x3f800000u, 0x3f800000u});  // x = 1
  h.put(kData + 80, {0x41200000u, 0x41200000u, 0x41200000u, 0x41200000u});  // 10
  // Worker 1 at 0x200: AMP.S row 0, AMP.SA to 0x600, DONE.
  h.put(0x200, {li(a1, kData + 64)[0], li(a1, kData + 64)[1], amp_s(a1, a1, 0, 0),
                addi(a2, zero, 0x600), amp_sa(a2, a2, 0, 0), kLoadMmioBase,
                sw(zero, t0, static_cast<int32_t>(TESS_MMIO_DONE - TESS_MMIO_BASE))});
  // Supervisor: its own row 0 = 10, load W, RUN worker 1, WAIT, store its row 0 to 0x700.
  h.put(0, {li(a0, kData)[0], li(a0, kData)[1], amp_lw(a0, a0, 0, 0), amp_lw(a0, a0, 0, 1),
            amp_lw(a0, a0, 0, 2), amp_lw(a0, a0, 0, 3), addi(a0, a0, 16), amp_la(a0, a0, 0),
            kLoadMmioBase, addi(a3, zero, 0x200),
            sw(a3, t0, static_cast<int32_t>(TESS_MMIO_RUN_BASE - TESS_MMIO_BASE)),
            sw(zero, t0, static_cast<int32_t>(TESS_MMIO_WAIT - TESS_MMIO_BASE)),
            addi(a2, zero, 0x700), amp_sa(a2, a2, 0, 0), kExit});
  ASSERT_EQ(h.tile.run(100000), TileState::Halted);
  for (unsigned j = 0; j < 4; ++j) {
    EXPECT_EQ(h.word(0x600 + 4 * j), 0x40000000u);  // worker: 0 + 1·2
    EXPECT_EQ(h.word(0x700 + 4 * j), 0x41200000u);  // supervisor: its 10 untouched
    EXPECT_EQ(h.tile.accumulator(1, 0, j), 0x40000000u);
  }
}

// A fetch does not see an AMP.SA issued one or two cycles before it, like any store
// (docs/tile.md, "Order of effects"), and sees all four words from the third cycle on.
TEST(AmpModel, StoreFollowsTheFetchRule) {
  UnitHarness h;
  // Worker 1 spins at 0x300; the supervisor's AMP.SA at cycle 48 writes zeros (illegal words)
  // over 0x300..0x30f. RUN at 12 starts the worker at 19; its fetch at 49 still sees the JAL, the
  // one at 55 the zero word.
  h.put(0x300, {jal(zero, 0), jal(zero, 0), jal(zero, 0), jal(zero, 0)});
  h.put(0,
        {kLoadMmioBase, addi(a3, zero, 0x300),
         sw(a3, t0, static_cast<int32_t>(TESS_MMIO_RUN_BASE - TESS_MMIO_BASE)), addi(a4, zero, 2),
         addi(a4, a4, -1), bne(a4, zero, -4), amp_sa(zero, a3, 0, 0), addi(a4, zero, 3), kExit});
  ASSERT_EQ(h.tile.run(100000), TileState::Trapped);
  EXPECT_EQ(h.tile.trap().cause, TESS_CAUSE_ILLEGAL_INSN);
  EXPECT_EQ(h.tile.trap().context, 1u);
  EXPECT_EQ(h.tile.trap().pc, 0x300u);
  EXPECT_EQ(h.tile.trap().value, 0u);
  EXPECT_EQ(h.tile.cycles(), 56u);
}

TEST(AmpSweep, ShortRandomOperandSets) {
  ampSweep(20000, 0x7e55e7aull);
}

TEST(AmpSweep, ShortRandomFp16OperandSets) {
  ampSweep(20000, 0x7e55e7bull, AmpPrecision::Fp16);
}

TEST(AmpSweep, ShortRandomConversionSets) {
  cvtSweep(20000, 0x7e55e7cull);
}

}  // namespace
}  // namespace tessera::model::test

// The translating engine against the interpreter (docs/tile.md, "The translating engine"): the
// same programs on a tile of each engine, compared in full (tileStateDifference) at many stop
// cycles; code rewritten by the tile, the exchange, the host and a rollback; random RV32IM
// programs that mix translated code with what falls back (CSRs, FP, divides, MMIO, traps); the
// F extension's fix-ups (NaNs, min/max, compares, saturating conversions, tiny results, -0) on
// operand tables and in random FP programs.
#include <gtest/gtest.h>
#include <xmmintrin.h>

#include <bit>
#include <cstdio>
#include <random>

#include "jit_pair.hpp"

namespace tessera::model::test {
namespace {

using namespace rv;

class Jit : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!kHasJit) GTEST_SKIP() << "this build has no translating engine";
  }
};

// The result register and exit of a counted loop of ALU work, loads and stores.
std::vector<uint32_t> integerLoop(int32_t iterations) {
  return {lui(tp, 4),  // data at 0x4000
          addi(a0, zero, iterations), addi(a1, zero, 0),
          // loop (12): a1 += a0 * 3; mem[tp + 4 * (a0 & 15)] = a1; a2 ^= that word
          slli(a3, a0, 1), add(a3, a3, a0), add(a1, a1, a3),
          i(15, a0, 7, a4, 0x13),  // andi a4, a0, 15
          slli(a4, a4, 2), add(a4, a4, tp), sw(a1, a4, 0), lw(a5, a4, 0), xori(a2, a5, 0x55),
          mulhu(a6, a1, a5), addi(a0, a0, -1), bne(a0, zero, -44), kLoadMmioBase, kExit};
}

TEST_F(Jit, RunsAnIntegerLoopAsTranslatedBlocks) {
  EnginePair p;
  p.place(0, integerLoop(500));
  for (uint64_t t = 1; t < 40000; t += 997) p.runTo(t);
  p.runTo(1'000'000);
  EXPECT_EQ(p.jit.state(), TileState::Halted);
  EXPECT_GT(p.jit.jitTranslations(), 0u);
  EXPECT_EQ(p.jit.jitFlushes(), 0u);
  EXPECT_GT(p.jit.jitInstructions(), p.jit.stats().instructions * 9 / 10);
  EXPECT_EQ(p.jit.xreg(0, a1), 3u * 500 * 501 / 2);
}

TEST_F(Jit, CountsExecutedInstructionsAcrossResetsRollbacksAndRestoredCounters) {
  // The translated share is taken against every instruction executed since construction, which
  // neither a reset (a new program), a rollback nor a restored counter takes back.
  EnginePair p;
  p.place(0, integerLoop(500));
  p.runTo(1'000'000);
  ASSERT_EQ(p.jit.state(), TileState::Halted);
  const uint64_t once = p.jit.stats().instructions;
  EXPECT_EQ(p.jit.executedInstructions(), once);
  EXPECT_LE(p.jit.jitInstructions(), once);
  p.jit.reset();
  p.jit.run(1'000'000);
  ASSERT_EQ(p.jit.state(), TileState::Halted);
  EXPECT_EQ(p.jit.stats().instructions, once);
  EXPECT_EQ(p.jit.executedInstructions(), 2 * once);
  EXPECT_GT(p.jit.jitInstructions(), once);
  EXPECT_LE(p.jit.jitInstructions(), 2 * once);
  p.jit.reset();
  p.jit.checkpoint();
  p.jit.run(3000);
  const uint64_t ran = p.jit.stats().instructions;
  ASSERT_GT(ran, 0u);
  p.jit.rollback();
  EXPECT_EQ(p.jit.stats().instructions, 0u);
  EXPECT_EQ(p.jit.executedInstructions(), 2 * once + ran);
  p.jit.setInstret(0, 123456);
  EXPECT_EQ(p.jit.executedInstructions(), 2 * once + ran);
}

TEST_F(Jit, StopsAtEveryCycleLimit) {
  // Every stop cycle from 0 to the end, one run each: blocks end exactly at the limit or the
  // interpreter takes the rest.
  EnginePair p;
  p.place(0, integerLoop(20));
  for (uint64_t t = 0; p.jit.state() == TileState::Running && t < 5000; ++t) p.runTo(t);
  EXPECT_EQ(p.jit.state(), TileState::Halted);
}

TEST_F(Jit, StoreIntoCodeRunsTheNewCode) {
  // isa_test's program: the word at 12 runs once, is overwritten by a store and runs again.
  const uint32_t patched = addi(a0, a0, 16);
  EnginePair p;
  p.place(0, {lui(a1, patched >> 12), addi(a1, a1, static_cast<int32_t>(patched & 0xfff)),
              jal(zero, 4), addi(a0, a0, 1), bne(a2, zero, 16), addi(a2, zero, 1), sw(a1, zero, 12),
              jal(zero, -16), kLoadMmioBase, kExit});
  p.runTo(100000);
  EXPECT_EQ(p.jit.state(), TileState::Halted);
  EXPECT_EQ(p.jit.xreg(0, a0), 17u);
  EXPECT_GE(p.jit.jitFlushes(), 1u);
}

TEST_F(Jit, StoreIntoTheNextWordOfItsOwnBlock) {
  // The store rewrites the instruction right after it in the same block: a round later the fetch
  // sees the new word, so the block must stop after the store.
  const uint32_t patched = addi(a0, a0, 100);
  EnginePair p;
  p.place(0, {lui(a1, patched >> 12), addi(a1, a1, static_cast<int32_t>(patched & 0xfff)),
              sw(a1, zero, 12), addi(a0, a0, 1), kLoadMmioBase, kExit});
  p.runTo(100000);
  EXPECT_EQ(p.jit.xreg(0, a0), 100u);
}

TEST_F(Jit, TranslatedStoreOverAnInterpretedInstruction) {
  // The word at 12 (a CSR read, never translated) runs in the interpreter, through its decode
  // cache; a translated store then replaces it by another CSR read, which must run next time:
  // the store drops the decode cache's line as the interpreter's stores do.
  const uint32_t patched = csrr(a4, 0xc00);
  EnginePair p;
  p.place(
      0, {lui(a1, (patched + 0x800) >> 12), addi(a1, a1, static_cast<int32_t>(patched << 20) >> 20),
          addi(a2, zero, 2), csrr(a3, 0xc02),  // 12
          addi(a2, a2, -1),                    // 16
          beq(a2, zero, 20),                   // 20: to 40
          jal(zero, 8),                        // 24: a taken jump, where the translator looks again
          addi(zero, zero, 0),                 // 28: never runs
          sw(a1, zero, 12),                    // 32: a translated block
          jal(zero, -24),                      // 36: to 12
          kLoadMmioBase, kExit});
  p.runTo(100000);
  EXPECT_EQ(p.jit.state(), TileState::Halted);
  EXPECT_NE(p.jit.xreg(0, a4), 0u);
  EXPECT_EQ(p.jit.jitInstructions(), 3u + 2u);  // the first block and the store's
}

// A loop that never ends: a0 += 1 at 4, then jump back.
std::vector<uint32_t> spinLoop() {
  return {addi(a0, zero, 0), addi(a0, a0, 1), jal(zero, -4)};
}

TEST_F(Jit, ExchangeWriteIntoCodeRunsTheNewCode) {
  EnginePair p;
  p.place(0, spinLoop());
  p.runTo(601);
  const uint64_t flushes = p.jit.jitFlushes();
  // The exchange engine's receive port rewrites the loop body while the tile is stopped.
  for (TileModel* t : {&p.interp, &p.jit}) t->writeSramWord(4, addi(a0, a0, 16));
  p.runTo(1201);
  EXPECT_GT(p.jit.jitFlushes(), flushes);
  EXPECT_EQ(p.jit.xreg(0, a0), 50u + 50u * 16);  // 100 rounds of 2 instructions, then 100 more
  // Then the loop's jump into an exit.
  for (TileModel* t : {&p.interp, &p.jit}) {
    t->writeSramWord(12, kLoadMmioBase);
    t->writeSramWord(16, kExit);
    t->writeSramWord(8, jal(zero, 4));
  }
  p.runTo(5000);
  EXPECT_EQ(p.jit.state(), TileState::Halted);
}

TEST_F(Jit, HostWriteIntoCodeRunsTheNewCode) {
  EnginePair p;
  p.place(0, spinLoop());
  p.runTo(300);
  p.place(4, {addi(a0, a0, 7)});
  p.runTo(900);
  EXPECT_GE(p.jit.jitFlushes(), 1u);
  // A host write elsewhere (data) keeps the translations.
  const uint64_t flushes = p.jit.jitFlushes();
  p.place(0x8000, {1, 2, 3});
  p.runTo(1500);
  EXPECT_EQ(p.jit.jitFlushes(), flushes);
  // So does writing the code's own words again (a program loaded a second time).
  p.place(0, {addi(a0, zero, 0), addi(a0, a0, 7), jal(zero, -4)});
  p.runTo(2100);
  EXPECT_EQ(p.jit.jitFlushes(), flushes);
  // One byte of a translated word changed by the host: dropped, and the new code runs.
  const uint32_t changed = addi(a0, a0, 9);
  for (TileModel* t : {&p.interp, &p.jit}) {
    const uint8_t byte = static_cast<uint8_t>(changed >> 16);  // imm[3:0] sits in bits 23..20
    t->writeMemory(6, std::span<const uint8_t>(&byte, 1));
  }
  const uint32_t before = p.jit.xreg(0, a0);
  p.runTo(2700);
  EXPECT_GT(p.jit.jitFlushes(), flushes);
  EXPECT_EQ(p.jit.xreg(0, a0), before + 50 * 9);
}

TEST_F(Jit, RollbackRestoresCodeAndTranslations) {
  // The program rewrites its own loop body on its 10th pass; a rollback to before that must run
  // the old body again.
  const uint32_t patched = addi(a0, a0, 16);
  EnginePair p;
  p.place(0,
          {lui(a1, patched >> 12), addi(a1, a1, static_cast<int32_t>(patched & 0xfff)),
           addi(a2, zero, 10),
           // 12: loop
           addi(a0, a0, 1), addi(a2, a2, -1), bne(a2, zero, 8), sw(a1, zero, 12), jal(zero, -16)});
  p.runTo(60);
  p.interp.checkpoint();
  p.jit.checkpoint();
  p.runTo(2000);
  p.interp.rollback();
  p.jit.rollback();
  ASSERT_EQ(tileStateDifference(p.interp, p.jit), "");
  p.runTo(4000);
}

// Random RV32IM programs: a body of random instructions run three times by a counted loop, with
// forward branches, jumps, loads and stores (some misaligned or out of SRAM, which trap), stores
// of an instruction into the body, CSR reads, FP and divides (interpreted, between blocks).
std::vector<uint32_t> randomProgram(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](uint32_t n) { return static_cast<uint32_t>(rng() % n); };
  auto reg = [&] { return 5 + pick(11); };  // x5..x15 (gp counts, tp is the data base)
  auto dst = [&] { return pick(16) == 0 ? 0u : reg(); };
  // a6 = addi t0, t0, 1 (its low 12 bits are below 0x800): a word to store into the body.
  constexpr uint32_t kPatch = addi(t0, t0, 1);
  std::vector<uint32_t> prog{lui(tp, 8), addi(gp, zero, 3), lui(a6, kPatch >> 12),
                             addi(a6, a6, static_cast<int32_t>(kPatch & 0xfff))};
  for (uint32_t r = 5; r < 16; ++r) prog.push_back(lui(r, rng() & 0xfffff));
  for (uint32_t r = 5; r < 16; ++r) {
    prog.push_back(addi(r, r, static_cast<int32_t>(pick(4096)) - 2048));
  }
  const uint32_t bodyStart = static_cast<uint32_t>(prog.size());
  const uint32_t bodyLen = 40 + pick(80);
  for (uint32_t k = 0; k < bodyLen; ++k) {
    const uint32_t left = bodyLen - k - 1;  // instructions after this one in the body
    const uint32_t kind = pick(100);
    uint32_t w;
    if (kind < 30) {  // OP, M included (divides are long ops)
      const bool m = pick(4) == 0;
      const uint32_t f3 = pick(8);
      const uint32_t f7 = m ? 1 : ((f3 == 0 || f3 == 5) && pick(2) ? 0x20 : 0);
      w = r(f7, reg(), reg(), f3, dst(), 0x33);
    } else if (kind < 55) {  // OP-IMM
      const uint32_t f3 = pick(8);
      int32_t imm = static_cast<int32_t>(pick(4096)) - 2048;
      if (f3 == 1) imm = static_cast<int32_t>(pick(32));
      if (f3 == 5) imm = static_cast<int32_t>(pick(32) | (pick(2) ? 0x400 : 0));
      w = i(imm, reg(), f3, dst(), 0x13);
    } else if (kind < 68) {  // loads
      static constexpr uint32_t kF3[] = {0, 1, 2, 4, 5};
      const uint32_t base = pick(100) == 0 ? reg() : uint32_t{tp};
      const int32_t off = static_cast<int32_t>(pick(2048) & (pick(64) ? ~3u : ~0u));
      w = i(off, base, kF3[pick(5)], dst(), 0x03);
    } else if (kind < 78) {  // stores
      const uint32_t base = pick(100) == 0 ? reg() : uint32_t{tp};
      const int32_t off = static_cast<int32_t>(pick(2048) & (pick(64) ? ~3u : ~0u));
      w = s(off, reg(), base, pick(3), 0x23);
    } else if (kind < 80) {  // an instruction stored into the body
      w = sw(a6, zero, static_cast<int32_t>(4 * (bodyStart + pick(bodyLen))));
    } else if (kind < 88 && left > 0) {  // forward branch within the body
      static constexpr uint32_t kF3[] = {0, 1, 4, 5, 6, 7};
      w = b(static_cast<int32_t>(4 * (1 + pick(std::min(left, 4u)))), reg(), reg(), kF3[pick(6)]);
    } else if (kind < 90 && left > 0) {  // forward jump, linking or not
      w = jal(dst(), static_cast<int32_t>(4 * (1 + pick(std::min(left, 4u)))));
    } else if (kind < 92 && left > 1) {  // auipc + jalr over the next instruction
      const uint32_t rd = reg();
      prog.push_back(auipc(rd, 0));
      ++k;
      w = jalr(dst(), rd, 12 + static_cast<int32_t>(pick(8) == 0 ? 2 : 0));
    } else if (kind < 93) {  // a CSR read: cycle, instret or an id
      static constexpr uint32_t kCsr[] = {0xc00, 0xc02, 0xcc0, 0xcc1};
      w = csrr(dst(), kCsr[pick(4)]);
    } else if (kind < 95 && left > 8) {  // a tight counted loop: a block that jumps to itself
      const uint32_t inner = 1 + pick(4);
      prog.push_back(addi(a7, zero, static_cast<int32_t>(1 + pick(40))));
      for (uint32_t m = 0; m < inner; ++m) {
        prog.push_back(pick(3) ? r(0, reg(), reg(), pick(8), reg(), 0x33)
                               : s(static_cast<int32_t>(4 * pick(64)), reg(), tp, 2, 0x23));
      }
      prog.push_back(addi(a7, a7, -1));
      k += inner + 2;
      w = bne(a7, zero, -4 * static_cast<int32_t>(inner + 1));
    } else if (kind < 97) {  // FP through an integer register
      w = pick(2) ? fmv_w_x(pick(4), reg()) : fcvt_s_w(pick(4), reg());
    } else if (kind < 98) {  // a console byte
      prog.push_back(kLoadMmioBase);
      ++k;
      w = sw(reg(), t0, mmio(TESS_MMIO_CONSOLE));
    } else {
      w = addi(reg(), reg(), static_cast<int32_t>(pick(4096)) - 2048);
    }
    prog.push_back(w);
  }
  // The loop back to the body, then EXIT.
  prog.push_back(addi(gp, gp, -1));
  const int32_t back = -4 * static_cast<int32_t>(prog.size() - bodyStart);
  prog.push_back(bne(gp, zero, back));
  prog.push_back(kLoadMmioBase);
  prog.push_back(kExit);
  return prog;
}

TEST_F(Jit, RandomProgramsAgreeWithTheInterpreter) {
  unsigned halted = 0, trapped = 0;
  uint64_t translated = 0, total = 0;
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    EnginePair p;
    p.place(0, randomProgram(seed));
    p.runInSlices(seed, 200, 200000);
    if (HasFailure()) return;
    translated += p.jit.jitInstructions();
    total += p.jit.stats().instructions;
    halted += p.jit.state() == TileState::Halted;
    trapped += p.jit.state() == TileState::Trapped;
  }
  // Both endings are exercised.
  EXPECT_GT(halted, 20u);
  EXPECT_GT(trapped, 20u);
  // Most instructions ran translated, the others in the interpreter.
  EXPECT_GT(translated, total / 2);
  EXPECT_LT(translated, total);
  std::printf("random programs: %u halted, %u trapped, %llu of %llu instructions translated\n",
              halted, trapped, static_cast<unsigned long long>(translated),
              static_cast<unsigned long long>(total));
}

// ---- The F extension ----

// FP encodings the shared encoder does not have.
constexpr uint32_t r4(uint32_t opcode, uint32_t fd, uint32_t fa, uint32_t fb, uint32_t fc,
                      uint32_t rm) {
  return fc << 27 | fb << 20 | fa << 15 | rm << 12 | fd << 7 | opcode;
}
constexpr uint32_t kFmaddOp = 0x43, kFmsubOp = 0x47, kFnmsubOp = 0x4b, kFnmaddOp = 0x4f;
constexpr uint32_t kFflags = 0x001, kFrm = 0x002;
constexpr uint32_t kRne = 0, kRtz = 1, kRdn = 2, kDyn = 7;

// Operands that exercise the fix-ups: signed zeros, NaN payloads of both signs (quiet and
// signalling), infinities, subnormals and the smallest normals (tiny products with and without
// inexact), the largest finite value, and the edges of the 32-bit conversions.
const std::vector<uint32_t>& specialOperands() {
  static const std::vector<uint32_t> v = {
      0x00000000, 0x80000000, 0x3f800000, 0xbf800000, 0x3fc00000, 0xc0200000, 0x3f000000,
      0xbf000000, 0x7f800000, 0xff800000, 0x7fc00000, 0x7fc01234, 0xffc00001, 0x7f800001,
      0xff812345, 0x00000001, 0x807fffff, 0x00800000, 0x00800001, 0x00ffffff, 0x7f7fffff,
      0xff7fffff, 0x3f7fffff, 0x3f800001, 0x4f000000, 0xcf000000, 0x4f800000, 0x4effffff,
      0xcf000001, 0x4f7fffff, 0x3effffff, 0x40400000};
  return v;
}

// One operation run over a table of operand triples in a loop, on both engines: per triple,
// three FLWs, the operation (integer operands come from f10 through FMV.X.W) and the store of
// its result form one translated block; the interpreter then reads and clears fflags and
// stores them. Returns the pair at the end.
struct FpCase {
  const char* name;
  std::vector<uint32_t> ops;  // reads f10, f11, f12 (a1 = bits of f10), writes f13 or a5
  bool toX;
  uint32_t frm;
};

void runFpCase(const FpCase& c, const std::vector<uint32_t>& table, bool expectTranslated) {
  SCOPED_TRACE(c.name);
  SCOPED_TRACE(::testing::Message() << "frm " << c.frm);
  const uint32_t n = static_cast<uint32_t>(table.size() / 3);
  std::vector<uint32_t> prog{lui(tp, 4), lui(s1, 8), addi(a0, zero, static_cast<int32_t>(n)),
                             csrrwi(zero, kFrm, c.frm)};
  const uint32_t loop = static_cast<uint32_t>(prog.size());
  prog.push_back(flw(10, tp, 0));
  prog.push_back(flw(11, tp, 4));
  prog.push_back(flw(12, tp, 8));
  prog.insert(prog.end(), c.ops.begin(), c.ops.end());
  prog.push_back(c.toX ? sw(a5, s1, 0) : fsw(13, s1, 0));
  prog.push_back(csrrw(a4, kFflags, zero));
  prog.push_back(sw(a4, s1, 4));
  prog.push_back(addi(tp, tp, 12));
  prog.push_back(addi(s1, s1, 8));
  prog.push_back(addi(a0, a0, -1));
  prog.push_back(bne(a0, zero, -4 * static_cast<int32_t>(prog.size() - loop)));
  prog.push_back(kLoadMmioBase);
  prog.push_back(kExit);
  EnginePair p;
  p.place(0, prog);
  p.place(0x4000, table);
  // Uneven stops: blocks meet the cycle limit at many offsets.
  for (uint64_t t = 1; t < 30000; t += 331) p.runTo(t);
  p.runTo(100'000'000);
  ASSERT_EQ(p.jit.state(), TileState::Halted);
  // The three loads always run translated (but in the first pass, which follows the CSR write
  // in the interpreter); the operation and its store too when translated.
  const uint64_t blockLength = 3 + c.ops.size() + 1;
  EXPECT_GE(p.jit.jitInstructions(), (expectTranslated ? blockLength : 3) * (n - 1));
  if (!expectTranslated) {
    EXPECT_LT(p.jit.jitInstructions(), (blockLength - 1) * n);
  }
}

// Triples of every pair of special operands (the third rotates through them), random bits,
// FMA cancellations and addition ties.
std::vector<uint32_t> fpTable() {
  const std::vector<uint32_t>& v = specialOperands();
  std::vector<uint32_t> t;
  for (size_t i = 0; i < v.size(); ++i) {
    for (size_t j = 0; j < v.size(); ++j) {
      t.insert(t.end(), {v[i], v[j], v[(i + 3 * j + 1) % v.size()]});
    }
  }
  std::mt19937 rng(30);
  for (int k = 0; k < 100; ++k) {
    // Random values and near-tiny ones (exponents 0..2: products and sums about 2^-126).
    const uint32_t tiny = (rng() & 0x80ffffffu) | (rng() % 3) << 23;
    t.insert(t.end(), {static_cast<uint32_t>(rng()), tiny, static_cast<uint32_t>(rng())});
  }
  auto bitsOf = [](float x) { return std::bit_cast<uint32_t>(x); };
  auto bits = [&] { return static_cast<uint32_t>(rng()); };
  for (int k = 0; k < 100; ++k) {
    // Cancellation: c near -(a * b), so that an FMA's single rounding shows.
    const float fa = std::bit_cast<float>((bits() & 0x807fffffu) | (100u + bits() % 56) << 23);
    const float fb = std::bit_cast<float>((bits() & 0x807fffffu) | (100u + bits() % 56) << 23);
    t.insert(t.end(), {bitsOf(fa), bitsOf(fb), bitsOf(-(fa * fb)) ^ (bits() % 4)});
    // Ties of an addition: b half an ulp of a (or one and a half), a with few significant bits.
    const uint32_t a = (bits() & 0x80000000u) | (120u + bits() % 16) << 23 | (bits() & 0x7u) << 20;
    const uint32_t halfUlp = ((a >> 23 & 0xff) - 24) << 23 | (bits() % 2 ? 0x400000u : 0);
    t.insert(t.end(), {a, halfUlp | (bits() & 0x80000000u), a});
  }
  return t;
}

TEST_F(Jit, FpFixUpsAgreeWithTheInterpreter) {
  const std::vector<uint32_t> table = fpTable();
  ASSERT_LT(table.size() * 4, 0x4000u);  // operands 0x4000..0x8000, results 0x8000..
  const uint32_t a1x = fmv_x_w(a1, 10);
  std::vector<FpCase> cases;
  for (uint32_t frm : {kRne, kRtz}) {
    auto add = [&](const char* name, std::vector<uint32_t> ops, bool toX) {
      cases.push_back(FpCase{name, std::move(ops), toX, frm});
    };
    add("fadd", {fadd(13, 10, 11)}, false);
    add("fsub", {fop(0x04, 13, 10, 11, kDyn)}, false);
    add("fmul", {fmul(13, 10, 11)}, false);
    add("fmul rne", {fmul(13, 10, 11, kRne)}, false);
    add("fmadd", {r4(kFmaddOp, 13, 10, 11, 12, kDyn)}, false);
    add("fmsub", {r4(kFmsubOp, 13, 10, 11, 12, kDyn)}, false);
    add("fnmsub", {r4(kFnmsubOp, 13, 10, 11, 12, kDyn)}, false);
    add("fnmadd", {r4(kFnmaddOp, 13, 10, 11, 12, kRne)}, false);
    add("fmadd into an operand", {r4(kFmaddOp, 12, 10, 11, 12, kDyn), fop(0x10, 13, 12, 12, 0)},
        false);
    add("fmin", {fop(0x14, 13, 10, 11, 0)}, false);
    add("fmax", {fop(0x14, 13, 10, 11, 1)}, false);
    add("feq", {fop(0x50, a5, 10, 11, 2)}, true);
    add("flt", {fop(0x50, a5, 10, 11, 1)}, true);
    add("fle", {fop(0x50, a5, 10, 11, 0)}, true);
    add("fsgnj", {fop(0x10, 13, 10, 11, 0)}, false);
    add("fsgnjn", {fop(0x10, 13, 10, 11, 1)}, false);
    add("fsgnjx", {fop(0x10, 13, 10, 11, 2)}, false);
    add("fcvt.w.s", {fcvt_w_s(a5, 10)}, true);
    add("fcvt.w.s rne", {fcvt_w_s(a5, 10, kRne)}, true);
    add("fcvt.w.s rtz", {fcvt_w_s(a5, 10, kRtz)}, true);
    add("fcvt.wu.s", {fop(0x60, a5, 10, 1, kDyn)}, true);
    add("fcvt.wu.s rtz", {fop(0x60, a5, 10, 1, kRtz)}, true);
    add("fcvt.s.w", {a1x, fcvt_s_w(13, a1)}, false);
    add("fcvt.s.wu", {a1x, fop(0x68, 13, a1, 1, kDyn)}, false);
    add("fmv.w.x", {a1x, fmv_w_x(13, a1)}, false);
    add("fclass", {fclass(a5, 10)}, true);
    add("fmul rdn", {fmul(13, 10, 11, kRdn)}, false);
    add("fcvt.w.s to x0", {fcvt_w_s(zero, 10, kRtz), fmv_x_w(a5, 10)}, true);
  }
  for (const FpCase& c : cases) {
    // Translated: every instruction but those of a dynamic mode while frm is not RNE, and the
    // static modes other than RNE (RTZ for FCVT.W[U].S).
    bool dyn = false, otherStatic = false;
    for (uint32_t w : c.ops) {
      const uint32_t rm = (w >> 12) & 7, opcode = w & 0x7f, f7 = w >> 25;
      const bool rounds = opcode != 0x53 || f7 <= 0x0c || f7 == 0x60 || f7 == 0x68;
      if (!rounds) continue;
      dyn = dyn || rm == kDyn;
      otherStatic = otherStatic || (rm != kRne && rm != kDyn && !(rm == kRtz && f7 == 0x60));
    }
    runFpCase(c, table, !otherStatic && !(dyn && c.frm != kRne));
    if (::testing::Test::HasFailure()) return;
  }
}

// The blocks set their own MXCSR: a caller's with flags set, round toward zero, FTZ and DAZ
// changes nothing, and the caller gets it back.
TEST_F(Jit, FpIgnoresTheCallersMxcsr) {
  const unsigned saved = _mm_getcsr();
  const unsigned dirty = 0x7fa0 | 0x8040;  // masks, PE set, RTZ, FTZ, DAZ
  _mm_setcsr(dirty);
  const std::vector<uint32_t> table = fpTable();
  runFpCase(FpCase{"fmadd", {r4(kFmaddOp, 13, 10, 11, 12, kDyn)}, false, kRne}, table, true);
  runFpCase(FpCase{"fmul", {fmul(13, 10, 11)}, false, kRne}, table, true);
  runFpCase(FpCase{"fcvt.w.s", {fcvt_w_s(a5, 10)}, true, kRne}, table, true);
  const unsigned after = _mm_getcsr();
  _mm_setcsr(saved);
  EXPECT_EQ(after, dirty);
}

// Random FP programs: f0..f7 loaded with special and random values, then a body of random F
// instructions (every rounding mode, FDIV/FSQRT included: they fall back), loads and stores of
// f-registers, moves to and from x-registers and changes of frm, run three times by a loop.
std::vector<uint32_t> randomFpProgram(uint32_t seed, std::vector<uint32_t>& data) {
  std::mt19937 rng(seed);
  auto pick = [&](uint32_t n) { return static_cast<uint32_t>(rng() % n); };
  auto freg = [&] { return pick(8); };
  auto xreg = [&] { return 5 + pick(11); };
  const std::vector<uint32_t>& special = specialOperands();
  data.clear();
  for (int k = 0; k < 64; ++k) {
    data.push_back(pick(2) ? special[pick(static_cast<uint32_t>(special.size()))]
                           : static_cast<uint32_t>(rng()));
  }
  std::vector<uint32_t> prog{lui(tp, 8), addi(gp, zero, 3)};
  for (uint32_t r = 0; r < 8; ++r) prog.push_back(flw(r, tp, static_cast<int32_t>(4 * pick(64))));
  for (uint32_t r = 5; r < 16; ++r) prog.push_back(lw(r, tp, static_cast<int32_t>(4 * pick(64))));
  const uint32_t bodyStart = static_cast<uint32_t>(prog.size());
  const uint32_t bodyLen = 40 + pick(80);
  auto rmOf = [&] {
    static constexpr uint32_t kRm[] = {0, 0, 7, 7, 7, 7, 7, 7, 7, 7, 1, 2, 3, 4};
    return kRm[pick(14)];
  };
  for (uint32_t k = 0; k < bodyLen; ++k) {
    const uint32_t kind = pick(100);
    uint32_t w;
    if (kind < 25) {  // add, sub, mul (div rarely)
      static constexpr uint32_t kF7[] = {0x00, 0x04, 0x08, 0x00, 0x04, 0x08, 0x0c};
      w = fop(kF7[pick(7)], freg(), freg(), freg(), rmOf());
    } else if (kind < 45) {
      static constexpr uint32_t kOps[] = {kFmaddOp, kFmsubOp, kFnmsubOp, kFnmaddOp};
      w = r4(kOps[pick(4)], freg(), freg(), freg(), freg(), rmOf());
    } else if (kind < 52) {  // min, max
      w = fop(0x14, freg(), freg(), freg(), pick(2));
    } else if (kind < 60) {  // compares
      w = fop(0x50, xreg(), freg(), freg(), pick(3));
    } else if (kind < 66) {  // sign injection
      w = fop(0x10, freg(), freg(), freg(), pick(3));
    } else if (kind < 74) {  // conversions to integers
      w = fop(0x60, pick(16) == 0 ? 0 : xreg(), freg(), pick(2), rmOf());
    } else if (kind < 79) {  // conversions from integers
      w = fop(0x68, freg(), xreg(), pick(2), rmOf());
    } else if (kind < 83) {  // moves, class
      const uint32_t m = pick(3);
      w = m == 0   ? fmv_x_w(xreg(), freg())
          : m == 1 ? fmv_w_x(freg(), xreg())
                   : fclass(xreg(), freg());
    } else if (kind < 91) {  // loads and stores of f-registers
      const int32_t off = static_cast<int32_t>(4 * pick(64));
      w = pick(2) ? flw(freg(), tp, off) : fsw(freg(), tp, off);
    } else if (kind < 93) {  // a rounding mode into frm, mostly RNE (5 and 6: dynamic ones trap)
      w = csrrwi(zero, kFrm, pick(8) == 0 ? 5 + pick(2) : pick(2) ? 0 : 1 + pick(4));
    } else if (kind < 94) {  // sqrt (a long op)
      w = fsqrt(freg(), freg(), rmOf());
    } else if (kind < 95) {  // integer work on the converted values
      w = add(xreg(), xreg(), xreg());
    } else if (kind < 99) {  // a jump to the next instruction: the translator looks again there
      w = jal(zero, 4);
    } else {  // read and clear fflags
      w = csrrw(xreg(), kFflags, zero);
    }
    prog.push_back(w);
  }
  prog.push_back(addi(gp, gp, -1));
  const int32_t back = -4 * static_cast<int32_t>(prog.size() - bodyStart);
  prog.push_back(bne(gp, zero, back));
  prog.push_back(kLoadMmioBase);
  prog.push_back(kExit);
  return prog;
}

TEST_F(Jit, RandomFpProgramsAgreeWithTheInterpreter) {
  unsigned halted = 0, trapped = 0;
  uint64_t translated = 0, total = 0;
  std::vector<uint32_t> data;
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    EnginePair p;
    p.place(0, randomFpProgram(seed, data));
    p.place(0x8000, data);
    p.runInSlices(seed, 200, 200000);
    if (HasFailure()) return;
    EXPECT_NE(p.jit.state(), TileState::Running);
    translated += p.jit.jitInstructions();
    total += p.jit.stats().instructions;
    halted += p.jit.state() == TileState::Halted;
    trapped += p.jit.state() == TileState::Trapped;
  }
  EXPECT_GT(halted, 100u);
  EXPECT_GT(trapped, 10u);  // a dynamic rounding mode while frm holds 5 or 6
  // Static modes other than RNE and FDIV/FSQRT/CSRs fall back: about a quarter runs translated.
  EXPECT_GT(translated, total / 5);
  std::printf("random FP programs: %u halted, %u trapped, %llu of %llu instructions translated\n",
              halted, trapped, static_cast<unsigned long long>(translated),
              static_cast<unsigned long long>(total));
}

}  // namespace
}  // namespace tessera::model::test

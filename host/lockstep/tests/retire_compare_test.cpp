#include "retire_compare.hpp"

#include <gtest/gtest.h>

namespace tessera {
namespace {

RetireRecord rec(uint64_t cycle, unsigned ctx, uint32_t pc, DestKind dest, unsigned rd,
                 uint32_t v) {
  RetireRecord r;
  r.cycle = cycle;
  r.context = ctx;
  r.pc = pc;
  r.insn = 0x13;
  r.dest = dest;
  r.rd = rd;
  r.value = v;
  return r;
}

std::vector<RetireRecord> stream() {
  return {rec(0, 0, 0, DestKind::X, 5, 7), rec(6, 0, 4, DestKind::F, 2, 0x3f800000),
          rec(12, 0, 8, DestKind::None, 0, 0), rec(18, 0, 12, DestKind::X, 6, 9)};
}

TEST(RetireCompare, EqualStreamsAgree) {
  EXPECT_FALSE(compareRetireStreams(stream(), stream(), "model", "rtl").has_value());
}

TEST(RetireCompare, ValueDifferenceIsFoundAtItsIndex) {
  auto b = stream();
  b[3].value = 10;
  auto d = compareRetireStreams(stream(), b, "model", "rtl");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->index, 3u);
  EXPECT_NE(d->report.find("x6 <- 0x00000009"), std::string::npos) << d->report;
  EXPECT_NE(d->report.find("x6 <- 0x0000000a"), std::string::npos) << d->report;
  // The state both sides agreed on includes the earlier writes.
  EXPECT_NE(d->report.find("x5  =00000007"), std::string::npos) << d->report;
  EXPECT_NE(d->report.find("f2  =3f800000"), std::string::npos) << d->report;
}

TEST(RetireCompare, CycleDifferenceCounts) {
  auto b = stream();
  b[1].cycle = 7;
  auto d = compareRetireStreams(stream(), b, "model", "rtl");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->index, 1u);
}

TEST(RetireCompare, ShorterStreamEndsAtDivergence) {
  auto b = stream();
  b.pop_back();
  auto d = compareRetireStreams(stream(), b, "model", "rtl");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->index, 3u);
  EXPECT_NE(d->report.find("<end of stream>"), std::string::npos);
}

}  // namespace
}  // namespace tessera

#include "minibatcher.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>

#include "tessera/error.hpp"

namespace tessera::bench {
namespace {

// n images of 4 pixels: image i holds i, i+1, i+2, i+3; label i % 10.
LabelledImages synthetic(size_t n) {
  LabelledImages d;
  d.pixels = 4;
  for (size_t i = 0; i < n; ++i) {
    for (size_t p = 0; p < 4; ++p) d.images.push_back(static_cast<uint8_t>(i + p));
    d.labels.push_back(static_cast<uint8_t>(i % 10));
  }
  return d;
}

std::vector<uint32_t> epochOrder(Minibatcher& mb) {
  return {mb.order().begin(), mb.order().end()};
}

TEST(Minibatcher, Mt19937IsTheStandardGenerator) {
  // The C++ standard fixes the 10000th output of a default-constructed mt19937 ([rand.predef]):
  // the order below depends on nothing implementation-defined.
  std::mt19937 rng;
  rng.discard(9999);
  EXPECT_EQ(rng(), 4123659995u);
}

TEST(Minibatcher, UniformBelowStaysInRangeAndRejectsTheTail) {
  std::mt19937 rng(7);
  std::vector<int> hits(6, 0);
  for (int i = 0; i < 6000; ++i) ++hits.at(Minibatcher::uniformBelow(6, rng));
  for (int h : hits) EXPECT_GT(h, 850);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(Minibatcher::uniformBelow(1, rng), 0u);
  // n = 2^31 + 1: nearly half of all draws are rejected; results still below n.
  for (int i = 0; i < 100; ++i) EXPECT_LT(Minibatcher::uniformBelow(0x80000001u, rng), 0x80000001u);
}

TEST(Minibatcher, ShuffleIsTheDocumentedFisherYates) {
  // Recompute the documented algorithm step by step from the raw generator.
  std::vector<uint32_t> v(10);
  std::iota(v.begin(), v.end(), 0u);
  std::vector<uint32_t> expect = v;
  std::mt19937 a(123);
  std::mt19937 b(123);
  Minibatcher::shuffle(v, a);
  for (size_t i = expect.size() - 1; i >= 1; --i) {
    const uint64_t n = i + 1;
    const uint64_t limit = (uint64_t{1} << 32) - (uint64_t{1} << 32) % n;
    uint64_t x;
    do x = b();
    while (x >= limit);
    std::swap(expect[i], expect[x % n]);
  }
  EXPECT_EQ(v, expect);
  // And pinned, so that a change of the algorithm shows up as a changed order.
  EXPECT_EQ(v, (std::vector<uint32_t>{0, 8, 3, 7, 9, 4, 5, 6, 1, 2}));
}

TEST(Minibatcher, SameSeedSameOrderDifferentSeedDifferentOrder) {
  const LabelledImages d = synthetic(100);
  Minibatcher a(d, 10, 42);
  Minibatcher b(d, 10, 42);
  Minibatcher c(d, 10, 43);
  EXPECT_EQ(epochOrder(a), epochOrder(b));
  EXPECT_NE(epochOrder(a), epochOrder(c));
  std::vector<float> ia(40), ib(40);
  std::vector<int32_t> la(10), lb(10);
  for (int s = 0; s < 35; ++s) {  // over several epochs
    a.next(ia, la);
    b.next(ib, lb);
    ASSERT_EQ(ia, ib);
    ASSERT_EQ(la, lb);
  }
}

TEST(Minibatcher, EveryEpochIsAPermutationAndReshuffled) {
  const LabelledImages d = synthetic(50);
  Minibatcher mb(d, 7, 1);
  EXPECT_EQ(mb.stepsPerEpoch(), 7u);  // 50 / 7: the last partial batch (1 image) is dropped
  std::vector<float> img(28);
  std::vector<int32_t> lab(7);
  std::vector<uint32_t> previous;
  for (uint32_t e = 0; e < 3; ++e) {
    std::vector<uint32_t> order = epochOrder(mb);
    std::vector<uint32_t> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    std::vector<uint32_t> all(50);
    std::iota(all.begin(), all.end(), 0u);
    EXPECT_EQ(sorted, all);
    EXPECT_NE(order, previous);
    std::set<uint32_t> seen;
    for (size_t s = 0; s < mb.stepsPerEpoch(); ++s) {
      EXPECT_EQ(mb.epoch(), e);
      EXPECT_EQ(mb.stepInEpoch(), s);
      const auto idx = mb.nextIndices();
      for (size_t r = 0; r < 7; ++r) EXPECT_EQ(idx[r], order[s * 7 + r]);
      seen.insert(idx.begin(), idx.end());
      mb.next(img, lab);
    }
    EXPECT_EQ(seen.size(), 49u);  // no image twice within an epoch
    previous = order;
  }
  EXPECT_EQ(mb.stepsDone(), 21u);
  EXPECT_EQ(mb.epoch(), 3u);
}

TEST(Minibatcher, ImagesAreScaledPixelsInRowMajorOrder) {
  const LabelledImages d = synthetic(20);
  Minibatcher mb(d, 4, 9, 0.5f, -1.0f);
  const std::vector<uint32_t> idx(mb.nextIndices().begin(), mb.nextIndices().end());
  std::vector<float> img(16);
  std::vector<int32_t> lab(4);
  mb.next(img, lab);
  for (size_t r = 0; r < 4; ++r) {
    EXPECT_EQ(lab[r], static_cast<int32_t>(idx[r] % 10));
    for (size_t p = 0; p < 4; ++p)
      EXPECT_EQ(img[r * 4 + p], static_cast<float>(idx[r] + p) * 0.5f - 1.0f);
  }
  // The default scale is 1/255 and offset 0.
  Minibatcher plain(d, 4, 9);
  plain.next(img, lab);
  for (size_t r = 0; r < 4; ++r)
    EXPECT_EQ(img[r * 4 + 1], static_cast<float>(idx[r] + 1) * (1.0f / 255.0f));
}

TEST(Minibatcher, OnePerStreamWithTheSameSeedStaysInStep) {
  // As for the Engine's two host-to-device streams, each filled by its own callback.
  const LabelledImages d = synthetic(30);
  Minibatcher both(d, 4, 5);
  Minibatcher imagesOnly(d, 4, 5);
  Minibatcher labelsOnly(d, 4, 5);
  std::vector<float> img(16), img2(16);
  std::vector<int32_t> lab(4), lab2(4);
  for (int s = 0; s < 20; ++s) {  // nearly three epochs of 7 steps
    both.next(img, lab);
    imagesOnly.next(img2, {});
    labelsOnly.next({}, lab2);
    ASSERT_EQ(img, img2) << s;
    ASSERT_EQ(lab, lab2) << s;
  }
}

TEST(Minibatcher, BadArgumentsAreErrors) {
  const LabelledImages d = synthetic(10);
  EXPECT_THROW(Minibatcher(d, 0, 1), Error);
  EXPECT_THROW(Minibatcher(d, 11, 1), Error);
  EXPECT_NO_THROW(Minibatcher(d, 10, 1));
  Minibatcher mb(d, 5, 1);
  std::vector<float> img(19);
  std::vector<int32_t> lab(5);
  EXPECT_THROW(mb.next(img, lab), Error);
  LabelledImages broken = d;
  broken.images.pop_back();
  EXPECT_THROW(Minibatcher(broken, 2, 1), Error);
}

}  // namespace
}  // namespace tessera::bench

// StreamPrefetcher on its own: bytes come in stream order whatever was prefetched, misses and
// waits are counted, and a callback's error reaches take() only for bytes that are taken.
#include "stream_prefetcher.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "tessera/error.hpp"

namespace tessera::test {
namespace {

/// Stream byte k is k mod 251; the callback also records the offsets it was asked for.
StreamCallback counting(std::vector<uint64_t>* offsets, std::atomic<unsigned>* calls) {
  return [offsets, calls](uint64_t offset, std::span<uint8_t> data) {
    offsets->push_back(offset);
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>((offset + i) % 251);
    ++*calls;
  };
}

void expectBytes(const std::vector<uint8_t>& got, uint64_t from) {
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_EQ(got[i], (from + i) % 251) << "byte " << from + i;
}

TEST(StreamPrefetcher, TakeWithoutPrefetchIsAMissAndAWait) {
  std::vector<uint64_t> offsets;
  std::atomic<unsigned> calls{0};
  StreamPrefetcher p({counting(&offsets, &calls)});
  std::vector<uint8_t> out(300);
  uint64_t miss = 0;
  EXPECT_TRUE(p.take(0, out, &miss));
  EXPECT_EQ(miss, 300u);
  expectBytes(out, 0);
}

TEST(StreamPrefetcher, PrefetchedBytesAreReadyAndInOrder) {
  std::vector<uint64_t> offsets;
  std::atomic<unsigned> calls{0};
  StreamPrefetcher p({counting(&offsets, &calls)});
  p.prefetch(0, 100);
  // Wait for the thread's call: a hang-detector poll (60 s), never a bound a slow machine meets.
  const auto hang = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (calls.load() == 0 && std::chrono::steady_clock::now() < hang)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_EQ(calls.load(), 1u) << "the prefetch thread never produced the prefetched bytes";
  std::vector<uint8_t> a(60), b(70);
  uint64_t miss = 0;
  EXPECT_FALSE(p.take(0, a, &miss));  // 100 bytes ready: no wait
  EXPECT_EQ(miss, 0u);
  expectBytes(a, 0);
  EXPECT_TRUE(p.take(0, b, &miss));  // 40 ready, 30 more produced on demand
  EXPECT_EQ(miss, 30u);
  expectBytes(b, 60);
  EXPECT_EQ(offsets, (std::vector<uint64_t>{0, 100}));
}

TEST(StreamPrefetcher, ErrorsReachOnlyTheBytesTheyConcern) {
  // The callback fails for any byte at or after 64: a prefetch past that is harmless until taken.
  StreamPrefetcher p({[](uint64_t offset, std::span<uint8_t> data) {
    if (offset + data.size() > 64) throw Error("out of data");
    std::fill(data.begin(), data.end(), uint8_t{7});
  }});
  std::vector<uint8_t> a(64);
  uint64_t miss = 0;
  p.take(0, a, &miss);
  EXPECT_EQ(a, std::vector<uint8_t>(64, 7));
  p.prefetch(0, 64);  // fails on the thread, nobody needs it yet
  std::vector<uint8_t> b(1);
  EXPECT_THROW(p.take(0, b, &miss), Error);
}

TEST(StreamPrefetcher, StreamsAreIndependent) {
  std::vector<uint64_t> o0, o1;
  std::atomic<unsigned> c0{0}, c1{0};
  StreamPrefetcher p({counting(&o0, &c0), StreamCallback{}, counting(&o1, &c1)});
  p.prefetch(2, 10);
  std::vector<uint8_t> x(5);
  uint64_t miss = 0;
  p.take(0, x, &miss);
  expectBytes(x, 0);
  p.take(2, x, &miss);
  expectBytes(x, 0);
  p.take(2, x, &miss);
  expectBytes(x, 5);
  EXPECT_EQ(o0, std::vector<uint64_t>{0});
  EXPECT_EQ(o1, std::vector<uint64_t>{0});
}

}  // namespace
}  // namespace tessera::test

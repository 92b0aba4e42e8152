// FrameCodec: round trips of every opcode, pieces of any size, resynchronisation, and 10^5
// corrupted frames (each either rejected or decoded to exactly the original).
#include "frame_codec.hpp"

#include <gtest/gtest.h>

#include <random>

#include "crc32.hpp"
#include "tessera/error.hpp"

namespace tessera::link {
namespace {

const Opcode kAllOps[] = {Opcode::Info,      Opcode::MemRead, Opcode::MemWrite, Opcode::CtrlRead,
                          Opcode::CtrlWrite, Opcode::Run,     Opcode::Wait,     Opcode::Reset,
                          Opcode::Stats,     Opcode::Console};

Frame randomFrame(std::mt19937& rng, uint8_t opcode, size_t maxLen) {
  Frame f;
  f.opcode = opcode;
  f.status = static_cast<uint16_t>(rng() % 11);
  f.seq = rng();
  f.tile = rng();
  f.addr = rng();
  f.payload.resize(rng() % (maxLen + 1));
  for (auto& b : f.payload) b = static_cast<uint8_t>(rng());
  return f;
}

std::vector<DecodeEvent> decodeAll(FrameCodec& codec, const std::vector<uint8_t>& bytes,
                                   std::mt19937& rng) {
  std::vector<DecodeEvent> out;
  size_t off = 0;
  while (off < bytes.size()) {
    const size_t piece = std::min<size_t>(1 + rng() % 700, bytes.size() - off);
    size_t taken = 0;
    while (taken < piece) {
      taken += codec.feed(std::span(bytes.data() + off + taken, piece - taken));
      while (auto ev = codec.poll()) out.push_back(std::move(*ev));
    }
    off += piece;
  }
  return out;
}

TEST(Crc32, StandardCheckValue) {
  // The catalogued check value of CRC-32/ISO-HDLC for the ASCII string "123456789".
  const std::string s = "123456789";
  EXPECT_EQ(crc32(std::span(reinterpret_cast<const uint8_t*>(s.data()), s.size())), 0xCBF43926u);
}

TEST(FrameCodec, HeaderLayoutIsLittleEndian) {
  Frame f;
  f.opcode = 0x02;
  f.status = 0x0102;
  f.seq = 0x11223344;
  f.tile = 5;
  f.addr = 0x100;
  f.payload = {0xAA, 0xBB};
  const auto b = FrameCodec::encode(f);
  ASSERT_EQ(b.size(), kHeaderBytes + 2 + kCrcBytes);
  const std::vector<uint8_t> header(b.begin(), b.begin() + kHeaderBytes);
  constexpr uint8_t v = kProtocolVersion;
  const std::vector<uint8_t> expected = {'T',  's',  'L',  'k',  v, 0x02, 0x02, 0x01,
                                         0x44, 0x33, 0x22, 0x11, 5, 0,    0,    0,
                                         0x00, 0x01, 0,    0,    2, 0,    0,    0};
  EXPECT_EQ(header, expected);
  const uint32_t crc = crc32(std::span(b.data(), kHeaderBytes + 2));
  EXPECT_EQ(b[26] | (b[27] << 8) | (b[28] << 16) | (static_cast<uint32_t>(b[29]) << 24), crc);
}

TEST(FrameCodec, RoundTripsEveryOpcodeAndReply) {
  std::mt19937 rng(1);
  FrameCodec codec;
  for (Opcode op : kAllOps) {
    for (uint8_t bit : {uint8_t{0}, kReplyBit}) {
      for (size_t maxLen : {size_t{0}, size_t{40}, kMaxPayload}) {
        const Frame f =
            randomFrame(rng, static_cast<uint8_t>(static_cast<uint8_t>(op) | bit), maxLen);
        const auto events = decodeAll(codec, FrameCodec::encode(f), rng);
        ASSERT_EQ(events.size(), 1u);
        EXPECT_EQ(events[0].kind, DecodeEvent::Kind::Frame);
        EXPECT_EQ(events[0].frame, f);
      }
    }
  }
  EXPECT_EQ(codec.droppedFrames(), 0u);
  EXPECT_FALSE(codec.hasPartial());
}

TEST(FrameCodec, MaximumPayloadFramesBackToBack) {
  std::mt19937 rng(2);
  FrameCodec codec;
  std::vector<uint8_t> stream;
  std::vector<Frame> sent;
  for (int i = 0; i < 3; ++i) {
    Frame f = randomFrame(rng, 0x03, 0);
    f.payload.assign(kMaxPayload, static_cast<uint8_t>(i));
    sent.push_back(f);
    const auto b = FrameCodec::encode(f);
    stream.insert(stream.end(), b.begin(), b.end());
  }
  const auto events = decodeAll(codec, stream, rng);
  ASSERT_EQ(events.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(events[i].frame, sent[i]);
}

TEST(FrameCodec, EncodeRefusesOversizePayload) {
  Frame f;
  f.payload.resize(kMaxPayload + 1);
  EXPECT_THROW(FrameCodec::encode(f), Error);
}

// The decoder checks candidate frames from running CRC registers (issue 13, item 8): the CRC of
// any substring from the registers at its ends equals the CRC computed directly.
TEST(Crc32, SubstringFromRunningRegistersMatchesDirect) {
  std::mt19937 rng(11);
  std::vector<uint8_t> bytes(70000);
  for (auto& b : bytes) b = static_cast<uint8_t>(rng());
  std::vector<uint32_t> reg(bytes.size() + 1, 0xDEADBEEFu);  // any origin works
  for (size_t i = 0; i < bytes.size(); ++i) reg[i + 1] = crc32RawByte(reg[i], bytes[i]);
  for (int k = 0; k < 3000; ++k) {
    const size_t a = rng() % bytes.size();
    const size_t b = a + rng() % (bytes.size() - a + 1);
    ASSERT_EQ(crc32Substring(reg[a], reg[b], b - a), crc32(std::span(bytes.data() + a, b - a)))
        << a << ".." << b;
  }
}

// Back-to-back headers that each claim 64 KiB (issue 13, item 8): every candidate is rejected,
// the bytes never exceed one frame, and a good frame behind them decodes intact.
TEST(FrameCodec, HeadersClaimingMaximumPayloadsAreRejectedThenAGoodFrameDecodes) {
  std::mt19937 rng(12);
  FrameCodec codec;
  Frame claim;
  claim.opcode = static_cast<uint8_t>(Opcode::MemWrite);
  claim.payload.assign(kMaxPayload, 0);
  const auto full = FrameCodec::encode(claim);
  std::vector<uint8_t> stream;
  const size_t headers = 6000;  // 144 kB of headers, more than two maximum frames
  for (size_t i = 0; i < headers; ++i) stream.insert(stream.end(), full.begin(), full.begin() + 24);
  const Frame good = randomFrame(rng, 0x01, 200);
  const auto g = FrameCodec::encode(good);
  // Pad so the last claimed frame ends before the good one is complete; the stall drop then
  // clears whatever claims are left.
  stream.insert(stream.end(), g.begin(), g.end());
  auto events = decodeAll(codec, stream, rng);
  codec.dropPartial();
  while (auto ev = codec.poll()) events.push_back(std::move(*ev));
  for (int k = 0; k < 4000 && codec.hasPartial(); ++k) {
    codec.dropPartial();
    while (auto ev = codec.poll()) events.push_back(std::move(*ev));
  }
  size_t good_seen = 0;
  for (const DecodeEvent& ev : events) {
    if (ev.kind == DecodeEvent::Kind::Frame) {
      EXPECT_EQ(ev.frame, good);
      ++good_seen;
    } else {
      EXPECT_EQ(ev.kind, DecodeEvent::Kind::BadCrc);
    }
  }
  EXPECT_EQ(good_seen, 1u);
  EXPECT_GT(codec.droppedFrames(), headers / 2);
}

TEST(FrameCodec, ResynchronisesAfterGarbageAndCountsIt) {
  std::mt19937 rng(3);
  FrameCodec codec;
  const Frame f = randomFrame(rng, 0x01, 100);
  std::vector<uint8_t> stream = {0x00, 'T', 's', 0x01, 'T', 0xFF, 0x42};
  const size_t garbage = stream.size();
  const auto b = FrameCodec::encode(f);
  stream.insert(stream.end(), b.begin(), b.end());
  const auto events = decodeAll(codec, stream, rng);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].frame, f);
  EXPECT_EQ(codec.droppedBytes(), garbage);
}

TEST(FrameCodec, RejectsTooLongAndBadVersionHeaders) {
  std::mt19937 rng(4);
  FrameCodec codec;
  Frame f = randomFrame(rng, 0x03, 10);
  auto b = FrameCodec::encode(f);
  auto tooLong = b;
  tooLong[22] = 0x02;  // length 0x2000a > 64 KiB
  auto badVersion = b;
  badVersion[4] = 7;
  auto e1 = decodeAll(codec, tooLong, rng);
  ASSERT_FALSE(e1.empty());
  EXPECT_EQ(e1[0].kind, DecodeEvent::Kind::TooLong);
  EXPECT_EQ(e1[0].frame.seq, f.seq);  // the header is handed back so the server can answer
  auto e2 = decodeAll(codec, badVersion, rng);
  ASSERT_FALSE(e2.empty());
  EXPECT_EQ(e2[0].kind, DecodeEvent::Kind::BadVersion);
  EXPECT_EQ(codec.droppedFrames(), 2u);
}

TEST(FrameCodec, StalledPartialFrameIsDroppedAndTheNextFrameDecodes) {
  std::mt19937 rng(5);
  FrameCodec codec;
  Frame big = randomFrame(rng, 0x03, 0);
  big.payload.assign(5000, 1);
  const auto bb = FrameCodec::encode(big);
  codec.feed(std::span(bb.data(), 100));  // the sender died mid-frame
  EXPECT_FALSE(codec.poll());
  EXPECT_TRUE(codec.hasPartial());
  codec.dropPartial();
  const Frame next = randomFrame(rng, 0x01, 10);
  const auto events = decodeAll(codec, FrameCodec::encode(next), rng);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].frame, next);
}

// 10^5 frames, each corrupted by bit flips, byte overwrites, truncation or inserted garbage,
// each followed by a good marker frame. Property: every decoded frame is a frame that was sent
// unmodified (the original or the marker), and every marker gets through.
TEST(FrameCodec, CorruptedFramesAreRejectedOrIdentical) {
  std::mt19937 rng(6);
  FrameCodec codec;
  uint64_t flippedButAccepted = 0, markersSeen = 0, markersLost = 0, rejected = 0;
  constexpr int kFrames = 100000;
  for (int i = 0; i < kFrames; ++i) {
    const Frame f = randomFrame(rng, static_cast<uint8_t>(1 + rng() % 10), 300);
    const auto original = FrameCodec::encode(f);
    auto b = original;
    const unsigned kase = rng() % 5;
    switch (kase) {
      case 0: {  // 1..3 bit flips anywhere
        const int flips = 1 + static_cast<int>(rng() % 3);
        for (int k = 0; k < flips; ++k)
          b[rng() % b.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
        break;
      }
      case 1:  // overwrite a random byte with a random value (maybe the same)
        b[rng() % b.size()] = static_cast<uint8_t>(rng());
        break;
      case 2:  // truncate
        b.resize(rng() % b.size());
        break;
      case 3: {  // insert garbage in the middle
        const size_t at = rng() % b.size();
        std::vector<uint8_t> junk(1 + rng() % 20);
        for (auto& j : junk) j = static_cast<uint8_t>(rng());
        b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), junk.begin(), junk.end());
        break;
      }
      default:  // burst of random bytes replacing a span
        for (size_t k = rng() % b.size(), e = std::min(b.size(), k + 8); k < e; ++k)
          b[k] = static_cast<uint8_t>(rng());
        break;
    }
    const bool modified = b != original;  // a flip pair or an overwrite may leave it intact
    Frame marker;
    marker.opcode = 0x7F;  // not a real opcode, so it cannot be confused with f
    marker.seq = static_cast<uint32_t>(i);
    const auto mb = FrameCodec::encode(marker);
    b.insert(b.end(), mb.begin(), mb.end());
    // A corrupted length may hold the marker hostage inside a partial frame; a stall drops it.
    auto events = decodeAll(codec, b, rng);
    bool gotMarker = false, gotF = false;
    for (int retry = 0; !gotMarker; ++retry) {
      for (const auto& ev : events) {
        if (ev.kind != DecodeEvent::Kind::Frame) {
          ++rejected;
          continue;
        }
        if (ev.frame == marker) {
          gotMarker = true;
          ++markersSeen;
        } else {
          ASSERT_EQ(ev.frame, f) << "frame " << i << " decoded to something that was never sent";
          gotF = true;
          // CRC-32 detects every error of at most 3 bits in a frame of this size.
          if (kase == 0 && modified) ++flippedButAccepted;
        }
      }
      if (gotMarker) break;
      if (!codec.hasPartial()) {
        // Only legal way to lose the marker: a frame cut short of its last CRC bytes completed
        // with the marker's first bytes, and they happened to equal the missing ones.
        ASSERT_TRUE(gotF && kase == 2) << "marker " << i << " lost";
        ++markersLost;
        break;
      }
      ASSERT_LT(retry, 400) << "marker " << i << " never decoded";
      codec.dropPartial();
      events.clear();
      while (auto ev = codec.poll()) events.push_back(std::move(*ev));
    }
  }
  EXPECT_EQ(markersSeen + markersLost, static_cast<uint64_t>(kFrames));
  EXPECT_LT(markersLost, kFrames / 1000u);
  EXPECT_GT(rejected, kFrames / 2u);
  EXPECT_EQ(flippedButAccepted, 0u);
}

}  // namespace
}  // namespace tessera::link

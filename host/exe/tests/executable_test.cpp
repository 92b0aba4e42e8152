// The *.tess reader and writer: round trip, every kind of corruption refused with a clear
// message, and a load that writes nothing to the device unless everything checks out.
#include "tessera/executable.hpp"

#include <gtest/gtest.h>

#include <string>

#include "crc32.hpp"
#include "recording_device.hpp"
#include "tessera/error.hpp"

namespace tessera::test {
namespace {

constexpr uint32_t kMem = 4096;

/// A small executable using every table: two tiles sharing one blob, a private blob, streams in
/// both directions, two host syncs and a tensor spread over both tiles.
Executable sample() {
  Executable e;
  e.target = {2, kMem, 6};
  e.blobs = {{1, 2, 3, 4, 5, 6, 7, 8}, {0xaa, 0xbb, 0xcc}};
  e.segments = {{0, 0, 0}, {1, 0, 0}, {1, 0x100, 1}};
  e.streams = {{"in", StreamDirection::HostToDevice}, {"out", StreamDirection::DeviceToHost}};
  e.hostSyncs = {{1, {{0, {0, 0x200, 16}}, {0, {1, 0x200, 16}}}}, {2, {{1, {1, 0x300, 8}}}}};
  e.tensors = {{"w", {{0, 0x400, 12}, {1, 0x400, 12}}}};
  return e;
}

/// The image with its checksum field recomputed (docs/executable-format.md: CRC-32 of the whole
/// file with the checksum field as zero), to get past the checksum to a later check.
std::vector<uint8_t> resealed(std::vector<uint8_t> b) {
  for (int i = 0; i < 4; ++i) b[20 + i] = 0;
  const uint32_t crc = crc32(b);
  for (int i = 0; i < 4; ++i) b[20 + i] = static_cast<uint8_t>(crc >> (8 * i));
  return b;
}

void putLe32(std::vector<uint8_t>& b, size_t off, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[off + i] = static_cast<uint8_t>(v >> (8 * i));
}

/// The message parse() throws for bytes ("" if it accepts them).
std::string refusal(const std::vector<uint8_t>& bytes) {
  try {
    Executable::parse(bytes, "x.tess");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Crc32, StandardCheckValue) {
  const std::string s = "123456789";
  EXPECT_EQ(crc32({reinterpret_cast<const uint8_t*>(s.data()), s.size()}), 0xCBF43926u);
}

TEST(Executable, RoundTrip) {
  const Executable e = sample();
  const std::vector<uint8_t> bytes = e.serialize();
  EXPECT_TRUE(Executable::hasMagic(bytes));
  EXPECT_EQ(bytes.size() % 4, 0u);
  const Executable back = Executable::parse(bytes, "x.tess");
  EXPECT_EQ(back, e);
  EXPECT_EQ(back.serialize(), bytes);
}

TEST(Executable, LayoutMatchesTheDocument) {
  // Fields at the offsets docs/executable-format.md gives, worked out by hand for sample().
  const std::vector<uint8_t> b = sample().serialize();
  EXPECT_EQ(std::string(b.begin(), b.begin() + 8), std::string("TESSEXE\x1a", 8));
  auto le = [&](size_t off) {
    return uint32_t{b[off]} | uint32_t{b[off + 1]} << 8 | uint32_t{b[off + 2]} << 16 |
           uint32_t{b[off + 3]} << 24;
  };
  EXPECT_EQ(le(8), 1u);                    // version
  EXPECT_EQ(le(16), b.size());             // length
  EXPECT_EQ(le(24), 2u);                   // tiles
  EXPECT_EQ(le(28), kMem);                 // memory bytes
  EXPECT_EQ(le(36), 2u);                   // blobs
  EXPECT_EQ(le(40), 3u);                   // segments
  EXPECT_EQ(le(56), 8u);                   // blob 0 length, then its 8 bytes
  EXPECT_EQ(le(68), 3u);                   // blob 1 length, 3 bytes + 1 padding
  EXPECT_EQ(le(76 + 2 * 12 + 4), 0x100u);  // segment 2 address
}

TEST(Executable, TruncatedAtEveryLengthIsRefused) {
  const std::vector<uint8_t> bytes = sample().serialize();
  for (size_t n = 0; n < bytes.size(); ++n) {
    const std::string why = refusal({bytes.begin(), bytes.begin() + static_cast<long>(n)});
    ASSERT_FALSE(why.empty()) << "accepted a file truncated to " << n << " bytes";
    EXPECT_EQ(why.rfind("x.tess: ", 0), 0u) << why;
    if (n < 8) {
      EXPECT_NE(why.find("bad magic"), std::string::npos) << why;
    } else {
      EXPECT_NE(why.find("truncated"), std::string::npos) << n << ": " << why;
    }
  }
}

TEST(Executable, EveryFlippedByteIsRefused) {
  const std::vector<uint8_t> bytes = sample().serialize();
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (uint8_t mask : {0x01, 0x80, 0xff}) {
      std::vector<uint8_t> bad = bytes;
      bad[i] ^= mask;
      const std::string why = refusal(bad);
      ASSERT_FALSE(why.empty()) << "accepted byte " << i << " ^ " << int(mask);
      const char* expected = i < 8    ? "bad magic"
                             : i < 12 ? "version"
                             : i < 16 ? "checksum"
                             : i < 20 ? "header says"
                                      : "checksum";
      EXPECT_NE(why.find(expected), std::string::npos) << "byte " << i << ": " << why;
    }
  }
}

TEST(Executable, WrongVersionMagicChecksumFlagsAndTrailingData) {
  const std::vector<uint8_t> good = sample().serialize();
  std::vector<uint8_t> b = good;
  putLe32(b, 8, 2);
  EXPECT_NE(refusal(resealed(b)).find("format version 2 is not supported"), std::string::npos);
  b = good;
  b[0] = 'X';
  EXPECT_NE(refusal(resealed(b)).find("not a tessera executable (bad magic)"), std::string::npos);
  b = good;
  putLe32(b, 20, 0x12345678);
  EXPECT_NE(refusal(b).find("checksum mismatch: header 0x12345678"), std::string::npos);
  b = good;
  putLe32(b, 12, 1);
  EXPECT_NE(refusal(resealed(b)).find("unknown flags"), std::string::npos);
  b = good;
  b.insert(b.end(), {0, 0, 0, 0});
  putLe32(b, 16, static_cast<uint32_t>(b.size()));
  EXPECT_NE(refusal(resealed(b)).find("unknown data after"), std::string::npos);
  b = good;
  putLe32(b, 36, 0x10000000);  // blob count far beyond the file
  EXPECT_NE(refusal(resealed(b)).find("does not fit in the file"), std::string::npos);
}

TEST(Executable, BadTablesInsideAValidContainerAreRefused) {
  const std::vector<uint8_t> good = sample().serialize();
  const size_t seg2 = 76 + 2 * 12;  // segment 2: tile, addr, blob
  std::vector<uint8_t> b = good;
  putLe32(b, seg2 + 4, kMem - 2);  // 3 bytes at the end of memory
  EXPECT_NE(refusal(resealed(b)).find("segment 2: bytes 0xffe..0x1001 of tile 1 are outside"),
            std::string::npos)
      << refusal(resealed(b));
  b = good;
  putLe32(b, seg2, 2);  // tile 2 of a 2-tile target
  EXPECT_NE(refusal(resealed(b)).find("segment 2: tile 2 does not exist"), std::string::npos);
  b = good;
  putLe32(b, seg2 + 4, 4);  // overlaps segment 1 (bytes 0..7 of tile 1)
  EXPECT_NE(refusal(resealed(b)).find("overlap on tile 1"), std::string::npos);
  b = good;
  putLe32(b, seg2 + 8, 7);
  EXPECT_NE(refusal(resealed(b)).find("names blob 7"), std::string::npos);
  b = good;
  putLe32(b, 76 + 3 * 12, 5);  // direction of stream 0
  EXPECT_NE(refusal(resealed(b)).find("unknown direction 5"), std::string::npos);
}

TEST(Executable, InconsistentTablesAreNotWritten) {
  Executable e = sample();
  e.hostSyncs[0].copies[0].stream = 9;
  EXPECT_THROW(e.serialize(), Error);
  e = sample();
  e.tensors[0].regions[1].addr = kMem - 4;
  try {
    e.serialize();
    FAIL();
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("tensor \"w\" region 1"), std::string::npos)
        << err.what();
  }
  e = sample();
  e.streams[1].name = "in";
  EXPECT_THROW(e.serialize(), Error);
  e = sample();
  e.hostSyncs[1].id = 0x10000;
  EXPECT_THROW(e.serialize(), Error);
}

// Issue 13, items 7 and 11: a full disk is an error, and so is a path that is not a file.
TEST(Executable, WritesAreCheckedAndOnlyRegularFilesAreRead) {
  try {
    sample().writeFile("/dev/full");
    FAIL() << "writing /dev/full succeeded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/dev/full: write failed"), std::string::npos) << e.what();
  }
  for (const char* path : {"/dev/zero", "/", "/dev/null"}) {
    try {
      Executable::fromFile(path);
      FAIL() << path << " was read";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("not a file"), std::string::npos) << e.what();
    }
  }
}

TEST(Executable, LoadWritesSegmentsDisablesEmptyTilesAndResets) {
  Executable e = sample();
  e.target.tiles = 3;  // tile 2 has no segment
  RecordingDevice dev({{3, kMem, 6}, "recording"});
  e.load(dev);
  EXPECT_EQ(dev.writes, 3u);
  EXPECT_EQ(dev.resets, 1u);
  EXPECT_EQ(dev.at(0, 7), 8);
  EXPECT_EQ(dev.at(1, 0), 1);
  EXPECT_EQ(dev.at(1, 0x102), 0xcc);
  EXPECT_EQ(dev.enabled.size(), 1u);
  EXPECT_EQ(dev.enabled[2], 0u);
}

TEST(Executable, LoadOnTheWrongTargetWritesNothing) {
  const Executable e = sample();
  struct Case {
    ChipInfo info;
    const char* message;
  };
  const Case cases[] = {
      {{{4, kMem, 6}, "model"},
       "built for 2 tiles of 4096 bytes with 6 contexts, but the model device has 4 tiles"},
      {{{2, kMem / 2, 6}, "rtl"}, "rtl device has 2 tiles of 2048 bytes"},
      {{{2, kMem * 2, 6}, "rtl"}, "2 tiles of 8192 bytes"},
      {{{2, kMem, 4}, "rtl"}, "with 4 contexts"},
  };
  for (const Case& c : cases) {
    RecordingDevice dev(c.info);
    try {
      e.load(dev);
      ADD_FAILURE() << "loaded on " << c.info.tiles << " tiles";
    } catch (const Error& err) {
      EXPECT_NE(std::string(err.what()).find(c.message), std::string::npos) << err.what();
    }
    EXPECT_EQ(dev.writes, 0u);
    EXPECT_EQ(dev.resets, 0u);
    EXPECT_EQ(dev.controlWrites, 0u);
  }
}

}  // namespace
}  // namespace tessera::test

// ElfImage: valid images load; every bad input gives tessera::Error naming the file and problem.
// The ELFs are built here byte by byte (ELF32 layout from the System V ABI), not with libelf.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "tessera/elf_image.hpp"
#include "tessera/error.hpp"

namespace tessera {
namespace {

constexpr uint32_t kMem = 65536;

struct Phdr {
  uint32_t type = 1;                                                 // PT_LOAD
  uint32_t offset = 0, vaddr = 0, filesz = 0, memsz = 0, flags = 5;  // R+X
};

// An ELF32 file: 52-byte header, program headers at 52, then payload.
struct ElfBuilder {
  uint8_t cls = 1, data = 1;
  uint16_t type = 2, machine = 243, phentsize = 32;
  uint32_t entry = 0;
  std::vector<Phdr> phdrs;
  std::vector<uint8_t> payload;
  int phnumOverride = -1;

  uint32_t payloadOffset() const { return 52 + 32 * static_cast<uint32_t>(phdrs.size()); }

  std::vector<uint8_t> build() const {
    std::vector<uint8_t> f(payloadOffset(), 0);
    auto put16 = [&](size_t at, uint16_t v) { std::memcpy(&f[at], &v, 2); };
    auto put32 = [&](size_t at, uint32_t v) { std::memcpy(&f[at], &v, 4); };
    f[0] = 0x7f;
    f[1] = 'E';
    f[2] = 'L';
    f[3] = 'F';
    f[4] = cls;
    f[5] = data;
    f[6] = 1;
    put16(16, type);
    put16(18, machine);
    put32(20, 1);
    put32(24, entry);
    put32(28, phdrs.empty() ? 0 : 52);  // e_phoff
    put32(32, 0);                       // e_shoff
    put16(40, 52);                      // e_ehsize
    put16(42, phentsize);
    put16(44, static_cast<uint16_t>(phnumOverride >= 0 ? phnumOverride : phdrs.size()));
    put16(46, 40);
    for (size_t k = 0; k < phdrs.size(); ++k) {
      const size_t at = 52 + 32 * k;
      put32(at, phdrs[k].type);
      put32(at + 4, phdrs[k].offset);
      put32(at + 8, phdrs[k].vaddr);
      put32(at + 12, phdrs[k].vaddr);
      put32(at + 16, phdrs[k].filesz);
      put32(at + 20, phdrs[k].memsz);
      put32(at + 24, phdrs[k].flags);
      put32(at + 28, 4);
    }
    f.insert(f.end(), payload.begin(), payload.end());
    return f;
  }
};

// A good program: 8 bytes of code at 0 (text), and a data segment at 0x1000 with 4 file bytes
// and 12 bytes of bss.
ElfBuilder goodElf() {
  ElfBuilder b;
  b.phdrs.resize(2);
  b.payload = {0x13, 0, 0, 0, 0x13, 0, 0, 0, 0xaa, 0xbb, 0xcc, 0xdd};
  b.phdrs[0] = Phdr{1, b.payloadOffset(), 0, 8, 8, 5};
  b.phdrs[1] = Phdr{1, b.payloadOffset() + 8, 0x1000, 4, 16, 6};
  return b;
}

// The message of the Error that loading bytes throws ("" if it loads).
std::string loadError(const std::vector<uint8_t>& bytes, uint32_t mem = kMem) {
  try {
    ElfImage::fromBytes(bytes, "prog.elf", mem);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

#define EXPECT_ERROR(bytes, fragment)                            \
  do {                                                           \
    const std::string msg = loadError(bytes);                    \
    EXPECT_NE(msg.find("prog.elf: "), std::string::npos) << msg; \
    EXPECT_NE(msg.find(fragment), std::string::npos) << msg;     \
  } while (0)

TEST(ElfImage, LoadsSegmentsWithZeroFilledBss) {
  const ElfImage img = ElfImage::fromBytes(goodElf().build(), "prog.elf", kMem);
  EXPECT_EQ(img.entry(), 0u);
  ASSERT_EQ(img.segments().size(), 2u);
  EXPECT_EQ(img.segments()[0].addr, 0u);
  EXPECT_EQ(img.segments()[0].bytes, (std::vector<uint8_t>{0x13, 0, 0, 0, 0x13, 0, 0, 0}));
  EXPECT_EQ(img.segments()[1].addr, 0x1000u);
  std::vector<uint8_t> data(16, 0);
  data[0] = 0xaa;
  data[1] = 0xbb;
  data[2] = 0xcc;
  data[3] = 0xdd;
  EXPECT_EQ(img.segments()[1].bytes, data);
}

TEST(ElfImage, EmptyFile) {
  EXPECT_ERROR(std::vector<uint8_t>{}, "empty file");
}

TEST(ElfImage, NotAnElf) {
  EXPECT_ERROR((std::vector<uint8_t>{'#', '!', '/', 'b', 'i', 'n', '/', 's', 'h', '\n', 0, 0, 0, 0,
                                     0, 0, 0}),
               "not an ELF file");
}

TEST(ElfImage, TruncatedHeader) {
  std::vector<uint8_t> f = goodElf().build();
  f.resize(30);
  EXPECT_ERROR(f, "truncated");
}

TEST(ElfImage, TruncatedProgramHeaders) {
  std::vector<uint8_t> f = goodElf().build();
  f.resize(70);
  EXPECT_ERROR(f, "truncated");
}

TEST(ElfImage, TruncatedSegmentData) {
  std::vector<uint8_t> f = goodElf().build();
  f.resize(f.size() - 2);
  EXPECT_ERROR(f, "truncated: segment 1");
}

TEST(ElfImage, SixtyFourBit) {
  ElfBuilder b = goodElf();
  b.cls = 2;
  EXPECT_ERROR(b.build(), "64-bit ELF");
}

TEST(ElfImage, BigEndian) {
  ElfBuilder b = goodElf();
  b.data = 2;
  EXPECT_ERROR(b.build(), "not little-endian");
}

TEST(ElfImage, WrongMachine) {
  ElfBuilder b = goodElf();
  b.machine = 3;  // EM_386
  EXPECT_ERROR(b.build(), "built for x86");
}

TEST(ElfImage, HostExecutableIsRejected) {
  // An x86-64 (or other 64-bit host) executable: the test binary itself.
  std::ifstream in("/proc/self/exe", std::ios::binary);
  if (!in) GTEST_SKIP() << "no /proc/self/exe";
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  EXPECT_ERROR(bytes, "64-bit ELF");
}

TEST(ElfImage, NotExecutable) {
  ElfBuilder b = goodElf();
  b.type = 1;  // ET_REL
  EXPECT_ERROR(b.build(), "not an executable");
}

TEST(ElfImage, NoProgramHeaders) {
  ElfBuilder b;
  EXPECT_ERROR(b.build(), "no program headers");
}

TEST(ElfImage, NoLoadableSegments) {
  ElfBuilder b = goodElf();
  b.phdrs[0].type = 4;  // PT_NOTE
  b.phdrs[1].type = 4;
  EXPECT_ERROR(b.build(), "no loadable (PT_LOAD) segments");
}

TEST(ElfImage, SegmentOutsideMemory) {
  ElfBuilder b = goodElf();
  b.phdrs[1].vaddr = 0xfff8;
  EXPECT_ERROR(b.build(),
               "segment 1 0x0000fff8 - 0x00010007 is outside tile memory of 65536 bytes");
}

TEST(ElfImage, SegmentAtMmioAddress) {
  ElfBuilder b = goodElf();
  b.phdrs[1].vaddr = 0x80000000u;
  EXPECT_ERROR(b.build(), "outside tile memory");
}

TEST(ElfImage, SegmentWrappingAround) {
  ElfBuilder b = goodElf();
  b.phdrs[1].vaddr = 0xfffffff8u;
  EXPECT_ERROR(b.build(), "outside tile memory");
}

TEST(ElfImage, FileSizeAboveMemorySize) {
  ElfBuilder b = goodElf();
  b.phdrs[1].memsz = 2;
  EXPECT_ERROR(b.build(), "file size 4 exceeds memory size 2");
}

TEST(ElfImage, OversizeSegmentForSmallMemory) {
  const std::string msg = loadError(goodElf().build(), 0x1000);
  EXPECT_NE(msg.find("outside tile memory of 4096 bytes"), std::string::npos) << msg;
}

TEST(ElfImage, OverlappingSegments) {
  ElfBuilder b = goodElf();
  b.phdrs[1].vaddr = 4;
  EXPECT_ERROR(b.build(), "overlaps segment");
}

TEST(ElfImage, EntryNotZero) {
  ElfBuilder b = goodElf();
  b.entry = 4;
  EXPECT_ERROR(b.build(), "must start at 0");
}

TEST(ElfImage, EntryOutsideMemory) {
  ElfBuilder b = goodElf();
  b.entry = 0x20000;
  EXPECT_ERROR(b.build(), "entry point 0x00020000 is outside tile memory");
}

TEST(ElfImage, NoCodeAtEntry) {
  ElfBuilder b = goodElf();
  b.phdrs[0].vaddr = 0x2000;
  EXPECT_ERROR(b.build(), "no entry point");
}

TEST(ElfImage, MissingFile) {
  try {
    ElfImage::fromFile("/nonexistent/dir/prog.elf", kMem);
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("prog.elf: cannot open"), std::string::npos) << e.what();
  }
}

// e_phoff need not be a multiple of 4 (issue 13, item 10): the headers are read without an
// unaligned access (UBSan, scripts/test-sanitize.sh) and the image loads as the aligned one.
TEST(ElfImage, UnalignedProgramHeadersLoad) {
  const ElfBuilder b = goodElf();
  std::vector<uint8_t> f = b.build();
  f.insert(f.begin() + 52, 0x00);  // one pad byte: program headers at 53
  const uint32_t phoff = 53;
  std::memcpy(&f[28], &phoff, 4);
  for (size_t k = 0; k < b.phdrs.size(); ++k) {
    const uint32_t off = b.phdrs[k].offset + 1;
    std::memcpy(&f[phoff + 32 * k + 4], &off, 4);
  }
  const ElfImage img = ElfImage::fromBytes(f, "prog.elf", kMem);
  const ElfImage ref = ElfImage::fromBytes(b.build(), "prog.elf", kMem);
  ASSERT_EQ(img.segments().size(), ref.segments().size());
  for (size_t k = 0; k < ref.segments().size(); ++k) {
    EXPECT_EQ(img.segments()[k].addr, ref.segments()[k].addr);
    EXPECT_EQ(img.segments()[k].bytes, ref.segments()[k].bytes);
  }
}

// What fromFile says for a path that is not a regular file (issue 13, item 11): no endless read
// of /dev/zero, no wait for a FIFO writer, no "basic_filebuf::underflow" for a directory.
std::string fileError(const std::string& path) {
  try {
    ElfImage::fromFile(path, kMem);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ElfImage, NonRegularFilesAreRefused) {
  EXPECT_NE(fileError("/dev/zero").find("/dev/zero: is a character device"), std::string::npos)
      << fileError("/dev/zero");
  const auto dir = std::filesystem::temp_directory_path() /
                   ("tessera_loader_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  EXPECT_NE(fileError(dir.string()).find("is a directory"), std::string::npos);
  const std::string fifo = (dir / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(fileError(fifo).find("is a FIFO"), std::string::npos) << fileError(fifo);
  std::filesystem::remove_all(dir);
}

TEST(ElfImage, GarbageNeverCrashes) {
  // Random bytes after a valid-looking identification, and random corruptions of a good image:
  // the loader either accepts or throws tessera::Error.
  std::mt19937 rng(12345);
  const std::vector<uint8_t> good = goodElf().build();
  unsigned rejected = 0;
  for (int round = 0; round < 5000; ++round) {
    std::vector<uint8_t> f = good;
    if (round % 2 == 0) {
      for (size_t k = 16; k < f.size(); ++k) f[k] = static_cast<uint8_t>(rng());
    } else {
      const int flips = 1 + static_cast<int>(rng() % 8);
      for (int k = 0; k < flips; ++k) f[rng() % f.size()] = static_cast<uint8_t>(rng());
      f.resize(rng() % (f.size() + 1));
    }
    try {
      const ElfImage img = ElfImage::fromBytes(f, "prog.elf", kMem);
      for (const ElfSegment& s : img.segments()) ASSERT_LE(s.addr + s.bytes.size(), kMem);
    } catch (const Error&) {
      ++rejected;
    }
  }
  EXPECT_GT(rejected, 2500u);
}

}  // namespace
}  // namespace tessera

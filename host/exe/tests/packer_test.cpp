// packExecutable: ELF segments shared or per tile, symbols resolved per tile, description errors
// named by where they are.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "executable_packer.hpp"
#include "tessera/chip_params.h"
#include "tessera/elf_image.hpp"

namespace tessera::test {
namespace {

const std::string kElf = std::string(TESSERA_SW_BIN_DIR) + "/engine_stream.elf";
const ChipShape kTarget{4, TESS_TILE_MEM_BYTES, TESS_NUM_CONTEXTS};

std::string description() {
  std::ifstream in(std::string(TESSERA_ENGINE_SW_DIR) + "/engine_stream.json");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string packError(const std::string& json, std::vector<std::string> elfs = {kElf}) {
  try {
    packExecutable(kTarget, elfs, json, "d.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Packer, OneElfOnEveryTileSharesItsBlobs) {
  const Executable e = packExecutable(kTarget, {kElf}, description(), "engine_stream.json");
  const ElfImage image = ElfImage::fromFile(kElf, kTarget.tileMemBytes);
  ASSERT_EQ(e.blobs.size(), image.segments().size());
  EXPECT_EQ(e.segments.size(), 4 * image.segments().size());
  ASSERT_EQ(e.streams.size(), 2u);
  EXPECT_EQ(e.streams[1], (ExeStream{"result", StreamDirection::DeviceToHost}));
  const ExeHostSync* h1 = e.findHostSync(1);
  ASSERT_NE(h1, nullptr);
  ASSERT_EQ(h1->copies.size(), 4u);
  for (uint32_t t = 0; t < 4; ++t) {
    EXPECT_EQ(h1->copies[t].stream, 0u);
    EXPECT_EQ(h1->copies[t].region, (ExeRegion{t, *image.symbol("in"), 64}));
  }
  const ExeTensor* acc = e.findTensor("acc");
  ASSERT_NE(acc, nullptr);
  EXPECT_EQ(acc->regions.size(), 4u);
  EXPECT_EQ(acc->regions[3], (ExeRegion{3, *image.symbol("acc"), 64}));
  EXPECT_EQ(Executable::parse(e.serialize(), "x"), e);
}

TEST(Packer, OneElfPerTile) {
  const Executable e = packExecutable(kTarget, {kElf, kElf, kElf, kElf}, "", "");
  const size_t n = ElfImage::fromFile(kElf, kTarget.tileMemBytes).segments().size();
  EXPECT_EQ(e.blobs.size(), 4 * n);
  EXPECT_EQ(e.segments.size(), 4 * n);
  EXPECT_EQ(e.segments.back().tile, 3u);
  EXPECT_NE(
      packError("", {kElf, kElf}).find("one ELF for every tile or one per tile (4 tiles), not 2"),
      std::string::npos);
}

TEST(Packer, DescriptionErrorsSayWhere) {
  EXPECT_NE(
      packError(
          R"({"hostSyncs":[{"id":1,"copies":[{"stream":"nope","tile":0,"address":0,"bytes":4}]}]})")
          .find("d.json: hostSyncs[0].copies[0]: unknown stream \"nope\""),
      std::string::npos);
  EXPECT_NE(
      packError(R"({"tensors":[{"name":"x","regions":[{"tile":0,"symbol":"nosuch","bytes":4}]}]})")
          .find("symbol \"nosuch\" is not in the ELF of tile 0"),
      std::string::npos);
  EXPECT_NE(
      packError(R"({"streams":[{"name":"a","direction":"sideways"}]})").find("direction must be"),
      std::string::npos);
  EXPECT_NE(packError(R"({"stream":[]})").find("unknown key \"stream\""), std::string::npos);
  EXPECT_NE(
      packError(R"({"tensors":[{"name":"x","regions":[{"tile":0,"address":65532,"bytes":8}]}]})")
          .find("outside its 65536 bytes"),
      std::string::npos);
  EXPECT_NE(packError("{").find("d.json: "), std::string::npos);
}

// Issue 13, item 9: values that used to wrap or be accepted silently.
TEST(Packer, WrappingOffsetsEmptyDescriptionsAndControlBytesAreRefused) {
  EXPECT_NE(packError(R"({"tensors":[{"name":"x","regions":[{"tile":0,"address":8,)"
                      R"("offset":4294967295,"bytes":4}]}]})")
                .find("tensors[0].regions[0]: address 0x8 + offset 4294967295 is beyond"),
            std::string::npos)
      << packError(
             R"({"tensors":[{"name":"x","regions":[{"tile":0,"address":8,"offset":4294967295,"bytes":4}]}]})");
  EXPECT_NE(packError("").find("d.json: "), std::string::npos) << "an empty description";
  const std::string nul =
      packError(R"({"streams":[{"name":"a\u0000b","direction":"host-to-device"}]})");
  EXPECT_NE(nul.find("stream name \"a\" has byte 0x00 at 1"), std::string::npos) << nul;
  EXPECT_NE(
      packError(R"({"tensors":[{"name":"t\nx","regions":[{"tile":0,"address":0,"bytes":4}]}]})")
          .find("has byte 0x0a"),
      std::string::npos);
}

// Issue 13, item 3: a target beyond the format's tile limit is refused before anything is built.
TEST(Packer, TileCountIsBounded) {
  try {
    packExecutable({100000, TESS_TILE_MEM_BYTES, TESS_NUM_CONTEXTS}, {kElf}, "", "");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("at most 65536 tiles"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tessera::test

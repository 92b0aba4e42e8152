// The codelet linker (sw/compiler/codelet_linker.cpp): per-graph images hold only the vertices a
// graph uses; every relocation type gives the bytes ld.lld gives for the same objects; bad inputs
// give errors that name what is wrong.
#include <elf.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "codelet_linker.hpp"
#include "file_io.hpp"
#include "tessera/compiler.hpp"
#include "tessera/elf_image.hpp"
#include "tessera/error.hpp"
#include "tessera/ops.hpp"

using namespace tessera;

namespace {

const std::string kTestDir = TESSERA_SW_BIN_DIR "/linker_test";

// The loadable bytes of a linked ELF from 0 to __tess_image_end (gaps as zeros).
std::vector<uint8_t> flatten(const ElfImage& elf) {
  std::vector<uint8_t> out(*elf.symbol("__tess_image_end"), 0);
  for (const ElfSegment& s : elf.segments()) {
    for (size_t i = 0; i < s.bytes.size() && s.addr + i < out.size(); ++i)
      out[s.addr + i] = s.bytes[i];
  }
  return out;
}

// The bytes and symbols of the codelet linker's image equal ld.lld's.
void expectSameAsLld(const CodeletImage& img, const std::string& lldElf) {
  const ElfImage ref = ElfImage::fromFile(lldElf, 1u << 30);
  ASSERT_TRUE(ref.symbol("__tess_image_end").has_value());
  EXPECT_EQ(img.imageEnd, *ref.symbol("__tess_image_end"));
  const std::vector<uint8_t> want = flatten(ref);
  ASSERT_EQ(img.bytes.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_EQ(img.bytes[i], want[i]) << "first difference at address 0x" << std::hex << i;
  for (const auto& [name, addr] : img.symbols) {
    auto r = ref.symbol(name);
    ASSERT_TRUE(r.has_value()) << name;
    EXPECT_EQ(addr, *r) << name;
  }
}

std::string linkError(const std::string& archive) {
  try {
    auto lib = CodeletLibrary::fromFile(kTestDir + "/" + archive);
    lib->linkAll();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

std::string parseError(std::span<const uint8_t> bytes, const std::string& name) {
  try {
    CodeletLibrary::fromBytes(bytes, name);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST(CodeletLinker, OneVertexGetsOnlyItsCodeAndTheRuntime) {
  auto lib = CodeletLibrary::fromFile(Graph::defaultCodeletsPath());
  const CodeletImage one = lib->link({"MatMul"});
  const auto all = lib->linkAll();
  ASSERT_EQ(one.codelets.size(), 1u);
  EXPECT_EQ(one.codelets[0].name, "MatMul");
  EXPECT_TRUE(one.symbols.count("tess_vertex_MatMul"));
  EXPECT_TRUE(one.symbols.count("tess_graph_main"));  // the runtime
  EXPECT_FALSE(one.symbols.count("tess_vertex_Conv2d"));
  EXPECT_FALSE(one.symbols.count("tess_vertex_Add"));
  EXPECT_EQ(all->codelets.size(), lib->vertexNames().size());
  EXPECT_TRUE(all->symbols.count("tess_vertex_Conv2d"));
  // The whole library is ~42 KB, MatMul and the runtime ~1.3 KB.
  EXPECT_LT(one.imageEnd * 10, all->imageEnd) << one.imageEnd << " vs " << all->imageEnd;
  // The descriptor's entry is the linked function's address.
  EXPECT_EQ(one.codelets[0].entry, one.symbols.at("tess_vertex_MatMul"));
}

TEST(CodeletLinker, EveryVertexGivesLldsImageOfTheWholeLibrary) {
  auto lib = CodeletLibrary::fromFile(Graph::defaultCodeletsPath());
  const auto all = lib->linkAll();
  expectSameAsLld(*all, TESSERA_SW_BIN_DIR "/tessera_codelets_all.elf");
}

TEST(CodeletLinker, EveryRelocationTypeGivesLldsBytes) {
  auto lib = CodeletLibrary::fromFile(kTestDir + "/liblinker_reloc_cases.a");
  const auto img = lib->linkAll();
  expectSameAsLld(*img, kTestDir + "/reloc_cases.elf");
  for (uint32_t type :
       {R_RISCV_32, R_RISCV_BRANCH, R_RISCV_JAL, R_RISCV_CALL, R_RISCV_CALL_PLT, R_RISCV_PCREL_HI20,
        R_RISCV_PCREL_LO12_I, R_RISCV_PCREL_LO12_S, R_RISCV_HI20, R_RISCV_LO12_I, R_RISCV_LO12_S}) {
    EXPECT_GT(img->relocationsApplied.count(type) ? img->relocationsApplied.at(type) : 0u, 0u)
        << riscvRelocationName(type) << " is not exercised";
  }
  ASSERT_EQ(img->codelets.size(), 1u);
  EXPECT_EQ(img->codelets[0].name, "Cases");
}

TEST(CodeletLinker, UnsupportedRelocationIsNamed) {
  const std::string e = linkError("liblinker_bad_relocation.a");
  EXPECT_NE(e.find("R_RISCV_ADD32"), std::string::npos) << e;
  EXPECT_NE(e.find("section .text.start at offset 0x0"), std::string::npos) << e;
  EXPECT_NE(e.find("bad_relocation.S"), std::string::npos) << e;  // the member
}

TEST(CodeletLinker, UndefinedSymbolIsNamed) {
  const std::string e = linkError("liblinker_undefined_symbol.a");
  EXPECT_NE(e.find("undefined symbol tess_missing_function"), std::string::npos) << e;
  EXPECT_NE(e.find("section .text.start"), std::string::npos) << e;
}

TEST(CodeletLinker, UnknownVertexIsNamed) {
  auto lib = CodeletLibrary::fromFile(Graph::defaultCodeletsPath());
  try {
    lib->link({"NoSuchVertex"});
    FAIL() << "linked";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no vertex NoSuchVertex (known: AdamStep"),
              std::string::npos)
        << e.what();
  }
}

TEST(CodeletLinker, TruncatedInputsAreRefused) {
  const std::vector<uint8_t> ar =
      readRegularFile(kTestDir + "/liblinker_reloc_cases.a", 1 << 20, "archive");
  ASSERT_GT(ar.size(), 200u);
  // The archive cut inside a member header, and inside a member.
  for (size_t cut : {size_t{30}, ar.size() / 2, ar.size() - 5}) {
    const std::string e = parseError(std::span(ar).first(cut), "cut.a");
    EXPECT_NE(e.find("cut.a"), std::string::npos) << cut << ": " << e;
    EXPECT_NE(e.find("truncated"), std::string::npos) << cut << ": " << e;
  }
  // The object alone, cut before its section table and inside a section.
  const uint8_t magic[] = {0x7f, 'E', 'L', 'F'};
  auto at = std::search(ar.begin(), ar.end(), std::begin(magic), std::end(magic));
  ASSERT_NE(at, ar.end());
  const std::vector<uint8_t> obj(at, ar.end());
  ASSERT_EQ(parseError(obj, "whole.o"), "no error");
  for (size_t cut : {size_t{20}, obj.size() - 8, size_t{100}}) {
    const std::string e = parseError(std::span(obj).first(cut), "cut.o");
    EXPECT_NE(e.find("cut.o"), std::string::npos) << cut << ": " << e;
    EXPECT_TRUE(e.find("truncated") != std::string::npos ||
                e.find("not an ELF") != std::string::npos)
        << cut << ": " << e;
  }
  const uint8_t text[] = {'h', 'e', 'l', 'l', 'o', '\n', 0, 0, 0};
  EXPECT_NE(parseError(text, "hello.txt").find("hello.txt: not a codelet library"),
            std::string::npos);
}

TEST(CodeletLinker, CompiledGraphCarriesOnlyItsVertices) {
  Graph g(Target{2, 65536, 6});
  EXPECT_GT(g.codelets().size(), 40u);  // every codelet stays available to addVertex
  Sequence prog;
  Tensor a = ops::createLinear(g, ElemType::Float32, {64}, "a");
  Tensor b = ops::createLinear(g, ElemType::Float32, {64}, "b");
  Tensor c = ops::add(g, a, b, prog, "c");
  g.exposeTensor("c", c);
  const Compiled out = compile(g, prog);
  auto lib = CodeletLibrary::fromFile(Graph::defaultCodeletsPath());
  const auto img = lib->linkCached({"Add"});
  EXPECT_EQ(out.report.codeImageBytes, img->imageEnd);
  EXPECT_EQ(out.report.codelets, std::vector<std::string>{"Add"});
  EXPECT_LT(out.report.codeImageBytes * 10, lib->linkAll()->imageEnd);
  // Every tile loads the linked image at 0.
  unsigned found = 0;
  for (const ExeSegment& s : out.executable.segments) {
    if (s.addr != 0) continue;
    ++found;
    EXPECT_EQ(out.executable.blobs[s.blob], img->bytes);
  }
  EXPECT_EQ(found, 2u);
  EXPECT_NE(out.report.toJson().find("\"codeImageBytes\""), std::string::npos);
}

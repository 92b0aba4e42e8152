#include "npz_file.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <zlib.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "fashion_mnist.hpp"
#include "mlp_parameters.hpp"
#include "tessera/error.hpp"
#include "test_util.hpp"

namespace tessera::bench {
namespace {

using testing::TempDir;

NpzFile sample() {
  NpzFile f;
  std::vector<float> w(6);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.25f * static_cast<float>(i) - 0.5f;
  f.set("w0", {2, 3}, w);
  f.set("b0", {3}, {1.0f, -2.0f, 3.5f});
  f.setScalar("input_scale", 1.0f / 255.0f);
  f.setScalar("input_offset", -0.125f);
  return f;
}

std::string loadError(const std::string& path) {
  try {
    NpzFile::load(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(NpzFile, RoundTrip) {
  TempDir dir;
  const NpzFile f = sample();
  f.save(dir.file("a.npz"));
  const NpzFile g = NpzFile::load(dir.file("a.npz"));
  EXPECT_EQ(g.names(), f.names());
  for (const std::string& n : f.names()) {
    EXPECT_EQ(g.get(n).shape, f.get(n).shape) << n;
    EXPECT_EQ(g.get(n).data, f.get(n).data) << n;
  }
  EXPECT_EQ(g.scalar("input_scale"), 1.0f / 255.0f);
  EXPECT_TRUE(g.get("input_offset").shape.empty());
  EXPECT_THROW(g.get("w9"), Error);
  EXPECT_THROW(g.scalar("w0"), Error);
  // Saving again gives the same bytes (fixed timestamps): runs are reproducible to the byte.
  g.save(dir.file("b.npz"));
  EXPECT_EQ(testing::readBytes(dir.file("a.npz")), testing::readBytes(dir.file("b.npz")));
}

TEST(NpzFile, NpyHeaderIsAlignedAndDescribesTheArray) {
  const std::vector<uint8_t> npy = NpzFile::encodeNpy({{784, 128}, std::vector<float>(784 * 128)});
  const size_t hlen = npy[8] | (npy[9] << 8);
  EXPECT_EQ((10 + hlen) % 64, 0u);
  const std::string header(npy.begin() + 10, npy.begin() + 10 + static_cast<std::ptrdiff_t>(hlen));
  EXPECT_EQ(header.rfind("{'descr': '<f4', 'fortran_order': False, 'shape': (784, 128), }", 0), 0u)
      << header;
  EXPECT_EQ(header.back(), '\n');
  const std::vector<uint8_t> one = NpzFile::encodeNpy({{5}, std::vector<float>(5)});
  EXPECT_NE(std::string(one.begin(), one.begin() + 80).find("'shape': (5,)"), std::string::npos);
  const std::vector<uint8_t> scalar = NpzFile::encodeNpy({{}, {2.0f}});
  EXPECT_NE(std::string(scalar.begin(), scalar.begin() + 80).find("'shape': ()"),
            std::string::npos);
  EXPECT_EQ(npy.size(), 10 + hlen + 784 * 128 * 4);
}

TEST(NpzFile, SetChecksShapeAndName) {
  NpzFile f;
  EXPECT_THROW(f.set("w0", {2, 3}, std::vector<float>(5)), Error);
  EXPECT_THROW(f.set("", {1}, {1.0f}), Error);
  EXPECT_THROW(f.set("a/b", {1}, {1.0f}), Error);
  f.set("x", {1}, {1.0f});
  f.set("x", {2}, {1.0f, 2.0f});  // replaces
  EXPECT_EQ(f.names().size(), 1u);
  EXPECT_EQ(f.get("x").data.size(), 2u);
}

TEST(NpzFile, MalformedFilesAreClearErrors) {
  TempDir dir;
  const std::string path = dir.file("a.npz");
  sample().save(path);
  const std::vector<uint8_t> good = testing::readBytes(path);

  EXPECT_NE(loadError(dir.file("missing.npz")).find("cannot open"), std::string::npos);
  std::vector<uint8_t> b(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(good.size() / 2));
  testing::writeBytes(path, b);
  EXPECT_NE(loadError(path).find("no end-of-central-directory"), std::string::npos)
      << loadError(path);
  testing::writeBytes(path, {'h', 'e', 'l', 'l', 'o'});
  EXPECT_NE(loadError(path).find("not a zip archive"), std::string::npos);
  // A flipped bit in the last float of w0 (before the b0 member's local header).
  b = good;
  const size_t w0End = 30 + 6 + 128 + 24;  // local header, "w0.npy", npy header, 6 floats
  b[w0End - 1] ^= 0x01;
  testing::writeBytes(path, b);
  EXPECT_NE(loadError(path).find("w0.npy: CRC-32 mismatch"), std::string::npos) << loadError(path);
  // The central directory pointing past the end.
  b = good;
  b[b.size() - 6] = 0xff;
  b[b.size() - 5] = 0xff;
  testing::writeBytes(path, b);
  EXPECT_NE(loadError(path).find("central directory"), std::string::npos) << loadError(path);
  // A member that is not float32 (the header rewritten to '<f8', CRC fixed by re-saving through
  // a hand-made archive is not needed: the dtype check comes from the .npy decoder).
  std::vector<uint8_t> npy = NpzFile::encodeNpy({{2}, {1.0f, 2.0f}});
  const std::string h(npy.begin(), npy.end());
  npy[h.find("<f4") + 2] = '8';
  EXPECT_THROW(NpzFile::decodeNpy(npy, "x.npy"), Error);
  try {
    NpzFile::decodeNpy(npy, "x.npy");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("x.npy: dtype '<f8' is not little-endian float32"),
              std::string::npos)
        << e.what();
  }
  npy = NpzFile::encodeNpy({{2}, {1.0f, 2.0f}});
  npy.pop_back();
  EXPECT_THROW(NpzFile::decodeNpy(npy, "x.npy"), Error);
  npy = NpzFile::encodeNpy({{2}, {1.0f, 2.0f}});
  npy[0] = 'X';
  EXPECT_THROW(NpzFile::decodeNpy(npy, "x.npy"), Error);
}

// ---- archives made by hand, declaring what a test likes (issue 29, items 2 and 7) ----

void le16(std::vector<uint8_t>& b, uint32_t v) {
  b.push_back(static_cast<uint8_t>(v));
  b.push_back(static_cast<uint8_t>(v >> 8));
}
void le32(std::vector<uint8_t>& b, uint32_t v) {
  le16(b, v & 0xffff);
  le16(b, v >> 16);
}

/// One member as it goes into the archive: its bytes (stored or raw deflate), the uncompressed
/// size and CRC-32 it declares.
struct RawMember {
  std::string name;  // with ".npy"
  uint16_t method;   // 0 stored, 8 deflate
  std::vector<uint8_t> data;
  uint32_t usize;
  uint32_t crc;
};

uint32_t crcOf(const std::vector<uint8_t>& b) {
  return static_cast<uint32_t>(crc32(0, b.data(), static_cast<uInt>(b.size())));
}

std::vector<uint8_t> deflateRaw(const std::vector<uint8_t>& in) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, 9, Z_DEFLATED, -MAX_WBITS, 9, Z_DEFAULT_STRATEGY), Z_OK);
  std::vector<uint8_t> out(deflateBound(&zs, static_cast<uLong>(in.size())));
  zs.next_in = const_cast<Bytef*>(in.data());
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = out.data();
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

/// A member holding `npy` deflated, declaring its true size and CRC unless told otherwise.
RawMember deflated(const std::string& name, const std::vector<uint8_t>& npy) {
  return {name, 8, deflateRaw(npy), static_cast<uint32_t>(npy.size()), crcOf(npy)};
}

std::vector<uint8_t> zipOf(const std::vector<RawMember>& members) {
  std::vector<uint8_t> out, central;
  for (const RawMember& m : members) {
    const uint32_t offset = static_cast<uint32_t>(out.size());
    for (std::vector<uint8_t>* b : {&out, &central}) {
      le32(*b, b == &out ? 0x04034b50 : 0x02014b50);
      if (b == &central) le16(*b, 20);
      for (uint32_t v : {20u, 0u, uint32_t{m.method}, 0u, 0x21u}) le16(*b, v);
      le32(*b, m.crc);
      le32(*b, static_cast<uint32_t>(m.data.size()));
      le32(*b, m.usize);
      le16(*b, static_cast<uint32_t>(m.name.size()));
      le16(*b, 0);
      if (b == &central) {
        for (int i = 0; i < 3; ++i) le16(*b, 0);  // comment length, disk, internal attributes
        le32(*b, 0);                              // external attributes
        le32(*b, offset);
      }
      b->insert(b->end(), m.name.begin(), m.name.end());
    }
    out.insert(out.end(), m.data.begin(), m.data.end());
  }
  const uint32_t cdOffset = static_cast<uint32_t>(out.size());
  out.insert(out.end(), central.begin(), central.end());
  le32(out, 0x06054b50);
  le16(out, 0);
  le16(out, 0);
  le16(out, static_cast<uint32_t>(members.size()));
  le16(out, static_cast<uint32_t>(members.size()));
  le32(out, static_cast<uint32_t>(central.size()));
  le32(out, cdOffset);
  le16(out, 0);
  return out;
}

std::string loadError(const std::string& path, const std::map<std::string, uint64_t>& only) {
  try {
    NpzFile::load(path, &only);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

/// The process's peak resident set, MiB.
long peakRssMiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024;
}

// Every size an archive declares is checked against the limits (docs/limits.md, "Files") before
// anything is allocated for it, so a few kilobytes cannot make the loader commit gigabytes: the
// process's peak RSS grows by less than 64 MiB over all the cases below (each would have
// allocated from 8 MiB to 3 GiB before).
TEST(NpzFile, DeclaredSizesAreCheckedBeforeAnythingIsDecoded) {
  TempDir dir;
  const std::string path = dir.file("bomb.npz");
  const long rssBefore = peakRssMiB();
  const std::vector<uint8_t> w0 = NpzFile::encodeNpy({{2, 3}, {1, 2, 3, 4, 5, 6}});

  // A small member declaring 1 GiB: more than deflate can make of its bytes.
  RawMember big = deflated("w0.npy", w0);
  big.usize = 1u << 30;
  testing::writeBytes(path, zipOf({big}));
  EXPECT_NE(loadError(path).find("w0.npy: declares 1073741824 bytes from"), std::string::npos)
      << loadError(path);
  EXPECT_NE(loadError(path).find("more than deflate can expand to"), std::string::npos);

  // 8 MiB of zeros deflated to a few kilobytes: refused unread when the reader expects other
  // arrays, or a smaller one of that name.
  const std::vector<uint8_t> zeros =
      NpzFile::encodeNpy({{size_t{1} << 21}, std::vector<float>(size_t{1} << 21, 0.0f)});
  const std::map<std::string, uint64_t> wanted{{"w0", NpzFile::maxNpyBytes(6)}};
  testing::writeBytes(path, zipOf({deflated("w0.npy", w0), deflated("junk.npy", zeros)}));
  EXPECT_NE(loadError(path, wanted).find("array 'junk' is not one of those expected (w0)"),
            std::string::npos)
      << loadError(path, wanted);
  testing::writeBytes(path, zipOf({deflated("w0.npy", zeros)}));
  EXPECT_NE(loadError(path, wanted).find("w0.npy: declares 8388736 bytes, more than the 65569"),
            std::string::npos)
      << loadError(path, wanted);

  // Three members declaring 1 GiB - 1 each (within deflate's ratio of their 1.1 MB): refused
  // together, before the first is decoded.
  std::vector<RawMember> three;
  for (const char* name : {"a.npy", "b.npy", "c.npy"})
    three.push_back({name, 8, std::vector<uint8_t>(1100000, 0x55), (1u << 30) - 1, 0});
  testing::writeBytes(path, zipOf(three));
  EXPECT_NE(loadError(path).find("c.npy: the members declare 3221225469 bytes together, more "
                                 "than the 2147483648 allowed"),
            std::string::npos)
      << loadError(path);

  // A stream shorter or longer than it declares (both within the ratio): corrupt, named.
  RawMember shorter = deflated("w0.npy", w0);
  shorter.usize += 100;
  testing::writeBytes(path, zipOf({shorter}));
  EXPECT_NE(loadError(path).find("w0.npy: corrupt deflate data"), std::string::npos)
      << loadError(path);
  RawMember longer = deflated("w0.npy", w0);
  longer.usize -= 1;
  testing::writeBytes(path, zipOf({longer}));
  EXPECT_NE(loadError(path).find("w0.npy: corrupt deflate data"), std::string::npos)
      << loadError(path);

  // The hand-made archive itself is right: the true sizes load.
  testing::writeBytes(path, zipOf({deflated("w0.npy", w0)}));
  const NpzFile ok = NpzFile::load(path, &wanted);
  EXPECT_EQ(ok.get("w0").data, (std::vector<float>{1, 2, 3, 4, 5, 6}));

  EXPECT_LT(peakRssMiB() - rssBefore, 64) << "peak RSS grew from " << rssBefore << " MiB";
}

// A FIFO given as weights or as a dataset file is refused at once, never waited on.
TEST(NpzFile, FifosAreRefusedNotWaitedOn) {
  TempDir dir;
  const std::string fifo = dir.file("weights.npz");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(loadError(fifo).find("weights.npz: is a FIFO (pipe), not a file"), std::string::npos)
      << loadError(fifo);
  const std::string labels = dir.file("labels-idx1-ubyte.gz");
  ASSERT_EQ(mkfifo(labels.c_str(), 0600), 0);
  try {
    FashionMnist::loadSplit(fifo, labels);
    ADD_FAILURE() << "a FIFO dataset was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is a FIFO (pipe), not a file"), std::string::npos)
        << e.what();
  }
}

TEST(NpzFile, MlpParametersRoundTripAndLayoutChecks) {
  TempDir dir;
  MlpParameters p = MlpParameters::initialize({6, 5, 4, 3}, 11);
  p.biases[1][2] = 0.75f;
  p.inputOffset = 0.5f;
  p.toNpz().save(dir.file("m.npz"));
  const NpzFile npz = NpzFile::load(dir.file("m.npz"));
  EXPECT_EQ(npz.names(), (std::vector<std::string>{"w0", "b0", "w1", "b1", "w2", "b2",
                                                   "input_scale", "input_offset"}));
  EXPECT_EQ(npz.get("w1").shape, (std::vector<size_t>{5, 4}));
  const MlpParameters q = MlpParameters::fromNpz(npz);
  EXPECT_EQ(q.sizes, p.sizes);
  EXPECT_EQ(q.weights, p.weights);
  EXPECT_EQ(q.biases, p.biases);
  EXPECT_EQ(q.inputScale, p.inputScale);
  EXPECT_EQ(q.inputOffset, 0.5f);

  NpzFile bad = p.toNpz();
  bad.set("w1", {4, 4}, std::vector<float>(16));
  EXPECT_THROW(MlpParameters::fromNpz(bad), Error);
  bad = p.toNpz();
  bad.set("b2", {2}, std::vector<float>(2));
  EXPECT_THROW(MlpParameters::fromNpz(bad), Error);
  NpzFile noScale;
  noScale.set("w0", {2, 2}, std::vector<float>(4));
  noScale.set("b0", {2}, std::vector<float>(2));
  EXPECT_THROW(MlpParameters::fromNpz(noScale), Error);
}

// Runs a Python script with the numpy-enabled interpreter found at configure time; returns its
// exit status and puts its output in `out`.
int runPython(const std::string& script, const std::string& scriptPath, std::string& out) {
  std::ofstream(scriptPath) << script;
  const std::string outPath = scriptPath + ".out";
  const int rc = std::system(
      fmt::format("'{}' '{}' > '{}' 2>&1", TESSERA_NUMPY_PYTHON, scriptPath, outPath).c_str());
  out = testing::readText(outPath);
  return rc;
}

TEST(NpzFile, NumpyLoadsOurFilesAndWeLoadNumpys) {
  TempDir dir;
  MlpParameters p = MlpParameters::initialize({784, 16, 10}, 5);
  p.biases[0][3] = -1.5f;
  p.toNpz().save(dir.file("ours.npz"));
  // numpy.load checks our zip and .npy encodings; the script prints values for us to compare
  // and writes both an uncompressed and a compressed archive for us to read back.
  const std::string script =
      fmt::format(R"(
import numpy as np
z = np.load('{0}')
assert sorted(z.files) == sorted(['w0', 'b0', 'w1', 'b1', 'input_scale', 'input_offset']), z.files
assert z['w0'].dtype == np.float32 and z['w0'].shape == (784, 16), (z['w0'].dtype, z['w0'].shape)
assert z['b0'].shape == (16,) and z['w1'].shape == (16, 10) and z['b1'].shape == (10,)
assert z['input_scale'].shape == () and z['input_scale'].dtype == np.float32
print(repr(float(z['w0'][0, 0])), repr(float(z['w0'][783, 15])), repr(float(z['w1'][7, 3])),
      repr(float(z['b0'][3])), repr(float(z['input_scale'])))
a = {{'w0': (np.arange(12, dtype=np.float32) / 7).reshape(3, 4), 'b0': np.array([0.5, -1, 2, 3], dtype=np.float32),
     'input_scale': np.float32(0.25), 'input_offset': np.float32(-1)}}
np.savez('{1}', **a)
np.savez_compressed('{2}', **a)
)",
                  dir.file("ours.npz"), dir.file("theirs.npz"), dir.file("theirs_z.npz"));
  std::string out;
  ASSERT_EQ(runPython(script, dir.file("check.py"), out), 0) << out;
  // Python prints repr(float): the exact double, which must equal our float widened.
  std::istringstream values(out);
  std::vector<double> got;
  for (double v; values >> v;) got.push_back(v);
  EXPECT_EQ(got, (std::vector<double>{p.weights[0][0], p.weights[0][783 * 16 + 15],
                                      p.weights[1][7 * 10 + 3], p.biases[0][3], p.inputScale}))
      << out;
  for (const char* name : {"theirs.npz", "theirs_z.npz"}) {
    const NpzFile t = NpzFile::load(dir.file(name));
    ASSERT_EQ(t.get("w0").shape, (std::vector<size_t>{3, 4})) << name;
    for (size_t i = 0; i < 12; ++i)
      EXPECT_EQ(t.get("w0").data[i], static_cast<float>(i) / 7.0f) << name << " " << i;
    EXPECT_EQ(t.get("b0").data, (std::vector<float>{0.5f, -1.0f, 2.0f, 3.0f})) << name;
    EXPECT_EQ(t.scalar("input_scale"), 0.25f) << name;
    EXPECT_EQ(t.scalar("input_offset"), -1.0f) << name;
    const MlpParameters q = MlpParameters::fromNpz(t);
    EXPECT_EQ(q.sizes, (std::vector<size_t>{3, 4})) << name;
  }
  // A float64 array from numpy is refused with a clear message.
  const std::string f64 =
      fmt::format("import numpy as np\nnp.savez('{}', w0=np.zeros((2, 2)))\n", dir.file("f64.npz"));
  ASSERT_EQ(runPython(f64, dir.file("f64.py"), out), 0) << out;
  EXPECT_NE(loadError(dir.file("f64.npz")).find("w0.npy: dtype '<f8'"), std::string::npos)
      << loadError(dir.file("f64.npz"));
}

}  // namespace
}  // namespace tessera::bench

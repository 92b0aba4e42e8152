#include "npz_file.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <memory>

#include "file_io.hpp"
#include "little_endian.hpp"
#include "tessera/error.hpp"

namespace tessera::bench {
namespace {

// Zip record signatures and fixed sizes (PKWARE APPNOTE 4.3.7, 4.3.12, 4.3.16).
constexpr uint32_t kLocalSig = 0x04034b50;
constexpr uint32_t kCentralSig = 0x02014b50;
constexpr uint32_t kEndSig = 0x06054b50;
constexpr size_t kLocalSize = 30;
constexpr size_t kCentralSize = 46;
constexpr size_t kEndSize = 22;
constexpr uint16_t kDosDate1980 = 0x0021;  // 1980-01-01: a fixed date keeps files reproducible
constexpr uint64_t kMaxFile = uint64_t{1} << 30;
constexpr uint64_t kMaxMember = uint64_t{1} << 30;
constexpr uint32_t kMaxMembers = 4096;
// The decoded members together; a network's parameters are far below it.
constexpr uint64_t kMaxTotal = uint64_t{2} << 30;
// Deflate expands at most 1032:1 (a length-258 match per 2 bits, RFC 1951); a member declaring
// more than that of its compressed bytes is malformed, found before any allocation.
constexpr uint64_t kMaxDeflateRatio = 1032;

uint32_t crcOf(const std::vector<uint8_t>& b) {
  return static_cast<uint32_t>(
      ::crc32(::crc32(0L, Z_NULL, 0), b.data(), static_cast<uInt>(b.size())));
}

// A bounds-checked little-endian reader over the file, naming the file in errors.
struct Reader {
  const std::vector<uint8_t>& b;
  const std::string& path;
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(fmt::format("npz: {}: {}", path, what));
  }
  void need(uint64_t at, uint64_t n, const char* what) const {
    if (at > b.size() || n > b.size() - at)
      fail(fmt::format("{} at offset {} runs past the end of the file", what, at));
  }
  uint16_t u16(uint64_t at) const { return loadLe16(b.data() + at); }
  uint32_t u32(uint64_t at) const { return loadLe32(b.data() + at); }
  uint64_t u64(uint64_t at) const { return loadLe64(b.data() + at); }
};

std::vector<uint8_t> inflateRaw(const uint8_t* data, size_t size, uint64_t expected,
                                const std::string& what) {
  // The output grows with what the data actually inflates to (in steps of at most 16 MiB, never
  // past the declared size), so a small member that declares a large size costs what it holds.
  std::vector<uint8_t> out;
  z_stream zs{};
  if (inflateInit2(&zs, -MAX_WBITS) != Z_OK)
    throw Error(fmt::format("npz: {}: zlib inflateInit2 failed", what));
  std::unique_ptr<z_stream, int (*)(z_stream*)> guard(&zs, inflateEnd);
  zs.next_in = const_cast<Bytef*>(data);
  zs.avail_in = static_cast<uInt>(size);
  int rc = Z_OK;
  while (rc == Z_OK) {
    if (out.size() == expected) break;
    const size_t done = out.size();
    out.resize(done + static_cast<size_t>(std::min<uint64_t>(expected - done, uint64_t{16} << 20)));
    zs.next_out = out.data() + done;
    zs.avail_out = static_cast<uInt>(out.size() - done);
    rc = inflate(&zs, Z_NO_FLUSH);
    out.resize(out.size() - zs.avail_out);
    if (rc == Z_BUF_ERROR && zs.avail_in == 0) break;  // the data ends before the stream does
  }
  if (rc == Z_OK && out.size() == expected) {  // room is used up: the stream must end here
    uint8_t extra = 0;
    zs.next_out = &extra;
    zs.avail_out = 1;
    rc = inflate(&zs, Z_FINISH);
    if (zs.avail_out == 0) rc = Z_DATA_ERROR;  // more data than declared
  }
  if (rc != Z_STREAM_END || out.size() != expected)
    throw Error(fmt::format("npz: {}: corrupt deflate data ({}; {} of the declared {} bytes)", what,
                            zs.msg != nullptr ? zs.msg : zError(rc), out.size(), expected));
  return out;
}

bool validName(const std::string& n) {
  return !n.empty() && n.size() < 200 && n.find_first_of("/\\") == std::string::npos && n != "." &&
         n != "..";
}

}  // namespace

void NpzFile::set(const std::string& name, std::vector<size_t> shape, std::vector<float> data) {
  if (!validName(name)) throw Error(fmt::format("npz: bad array name '{}'", name));
  size_t n = 1;
  for (size_t d : shape) n *= d;
  if (n != data.size())
    throw Error(fmt::format("npz: array '{}' has {} values for a shape of {} elements", name,
                            data.size(), n));
  Array a{std::move(shape), std::move(data)};
  for (auto& [k, v] : arrays_) {
    if (k == name) {
      v = std::move(a);
      return;
    }
  }
  arrays_.emplace_back(name, std::move(a));
}

void NpzFile::setScalar(const std::string& name, float value) {
  set(name, {}, {value});
}

bool NpzFile::contains(const std::string& name) const {
  return std::any_of(arrays_.begin(), arrays_.end(),
                     [&](const auto& p) { return p.first == name; });
}

const NpzFile::Array& NpzFile::get(const std::string& name) const {
  for (const auto& [k, v] : arrays_)
    if (k == name) return v;
  throw Error(fmt::format("npz: no array '{}'", name));
}

float NpzFile::scalar(const std::string& name) const {
  const Array& a = get(name);
  if (a.data.size() != 1)
    throw Error(fmt::format("npz: array '{}' is not a scalar ({} values)", name, a.data.size()));
  return a.data[0];
}

std::vector<std::string> NpzFile::names() const {
  std::vector<std::string> out;
  for (const auto& p : arrays_) out.push_back(p.first);
  return out;
}

std::vector<uint8_t> NpzFile::encodeNpy(const Array& a) {
  std::string shape = "(";
  for (size_t i = 0; i < a.shape.size(); ++i)
    shape += fmt::format("{},{}", a.shape[i], i + 1 < a.shape.size() ? " " : "");
  if (a.shape.size() > 1) shape.pop_back();  // "(3, 4)" but "(3,)" and "()"
  shape += ")";
  std::string header =
      fmt::format("{{'descr': '<f4', 'fortran_order': False, 'shape': {}, }}", shape);
  // Magic (6) + version (2) + length (2) + header, padded with spaces and ending in '\n', to a
  // multiple of 64 bytes (what numpy >= 1.19 writes; any multiple of 16 is valid).
  const size_t total = (10 + header.size() + 1 + 63) / 64 * 64;
  header.append(total - 10 - header.size() - 1, ' ');
  header += '\n';
  std::vector<uint8_t> out{0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  appendLe16(out, static_cast<uint16_t>(header.size()));
  out.insert(out.end(), header.begin(), header.end());
  for (float f : a.data) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    appendLe32(out, u);
  }
  return out;
}

NpzFile::Array NpzFile::decodeNpy(const std::vector<uint8_t>& b, const std::string& what) {
  auto fail = [&](const std::string& m) -> void {
    throw Error(fmt::format("npz: {}: {}", what, m));
  };
  if (b.size() < 10 || std::memcmp(b.data(), "\x93NUMPY", 6) != 0)
    fail("not a .npy array (bad magic)");
  const uint8_t major = b[6];
  size_t hlen = 0;
  size_t start = 0;
  if (major == 1) {
    hlen = b[8] | (b[9] << 8);
    start = 10;
  } else if (major == 2 || major == 3) {
    if (b.size() < 12) fail("truncated .npy header");
    hlen = b[8] | (b[9] << 8) | (size_t{b[10]} << 16) | (size_t{b[11]} << 24);
    start = 12;
  } else {
    fail(fmt::format("unsupported .npy version {}.{}", major, b[7]));
  }
  if (hlen > b.size() - start) fail("truncated .npy header");
  const std::string h(b.begin() + static_cast<std::ptrdiff_t>(start),
                      b.begin() + static_cast<std::ptrdiff_t>(start + hlen));
  auto valueAfter = [&](const std::string& key) -> size_t {
    const size_t k = h.find("'" + key + "'");
    if (k == std::string::npos) fail(fmt::format("header has no '{}': {}", key, h));
    size_t p = h.find(':', k);
    if (p == std::string::npos) fail(fmt::format("header is malformed: {}", h));
    ++p;
    while (p < h.size() && h[p] == ' ') ++p;
    return p;
  };
  size_t p = valueAfter("descr");
  if (h.compare(p, 5, "'<f4'") != 0)
    fail(fmt::format("dtype {} is not little-endian float32 '<f4'",
                     h.substr(p, h.find_first_of(",}", p) - p)));
  p = valueAfter("fortran_order");
  if (h.compare(p, 5, "False") != 0)
    fail("Fortran-order arrays are not supported (save a C-order array)");
  p = valueAfter("shape");
  if (p >= h.size() || h[p] != '(') fail(fmt::format("malformed shape in header: {}", h));
  Array a;
  size_t n = 1;
  ++p;
  for (;;) {
    while (p < h.size() && (h[p] == ' ' || h[p] == ',')) ++p;
    if (p >= h.size()) fail(fmt::format("malformed shape in header: {}", h));
    if (h[p] == ')') break;
    if (h[p] < '0' || h[p] > '9') fail(fmt::format("malformed shape in header: {}", h));
    uint64_t d = 0;
    while (p < h.size() && h[p] >= '0' && h[p] <= '9') {
      d = d * 10 + static_cast<uint64_t>(h[p++] - '0');
      if (d > kMaxMember) fail("dimension too large");
    }
    if (a.shape.size() >= 32) fail("too many dimensions");
    a.shape.push_back(static_cast<size_t>(d));
    n *= static_cast<size_t>(d);
    if (n > kMaxMember) fail("array too large");
  }
  const size_t dataBytes = b.size() - start - hlen;
  if (dataBytes != n * 4) fail(fmt::format("{} data bytes for {} float32 values", dataBytes, n));
  a.data.resize(n);
  const uint8_t* d = b.data() + start + hlen;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t u = loadLe32(d + 4 * i);
    std::memcpy(&a.data[i], &u, 4);
  }
  return a;
}

void NpzFile::save(const std::string& path) const {
  std::vector<uint8_t> out;
  std::vector<uint8_t> central;
  for (const auto& [name, array] : arrays_) {
    const std::vector<uint8_t> npy = encodeNpy(array);
    const std::string member = name + ".npy";
    if (npy.size() >= 0xffffffffu || out.size() >= 0xffffffffu - npy.size())
      throw Error(fmt::format("npz: {}: array '{}' too large for a zip without zip64", path, name));
    const uint32_t crc = crcOf(npy);
    const uint32_t offset = static_cast<uint32_t>(out.size());
    const uint32_t size = static_cast<uint32_t>(npy.size());
    appendLe32(out, kLocalSig);
    appendLe16(out, 20);  // version needed: 2.0
    appendLe16(out, 0);   // flags
    appendLe16(out, 0);   // method: stored
    appendLe16(out, 0);   // time
    appendLe16(out, kDosDate1980);
    appendLe32(out, crc);
    appendLe32(out, size);
    appendLe32(out, size);
    appendLe16(out, static_cast<uint16_t>(member.size()));
    appendLe16(out, 0);  // extra length
    out.insert(out.end(), member.begin(), member.end());
    out.insert(out.end(), npy.begin(), npy.end());
    appendLe32(central, kCentralSig);
    appendLe16(central, 20);  // made by: 2.0, MS-DOS attributes
    appendLe16(central, 20);
    appendLe16(central, 0);
    appendLe16(central, 0);
    appendLe16(central, 0);
    appendLe16(central, kDosDate1980);
    appendLe32(central, crc);
    appendLe32(central, size);
    appendLe32(central, size);
    appendLe16(central, static_cast<uint16_t>(member.size()));
    appendLe16(central, 0);  // extra
    appendLe16(central, 0);  // comment
    appendLe16(central, 0);  // disk
    appendLe16(central, 0);  // internal attributes
    appendLe32(central, 0);  // external attributes
    appendLe32(central, offset);
    central.insert(central.end(), member.begin(), member.end());
  }
  if (arrays_.size() > 0xffff || out.size() + central.size() >= 0xffffffffu)
    throw Error(fmt::format("npz: {}: too large for a zip without zip64", path));
  const uint32_t cdOffset = static_cast<uint32_t>(out.size());
  out.insert(out.end(), central.begin(), central.end());
  appendLe32(out, kEndSig);
  appendLe16(out, 0);
  appendLe16(out, 0);
  appendLe16(out, static_cast<uint16_t>(arrays_.size()));
  appendLe16(out, static_cast<uint16_t>(arrays_.size()));
  appendLe32(out, static_cast<uint32_t>(central.size()));
  appendLe32(out, cdOffset);
  appendLe16(out, 0);
  writeFileChecked(path, out);
}

uint64_t NpzFile::maxNpyBytes(uint64_t elements) {
  return 10 + 65535 + elements * 4;  // magic, version and length, the longest header, the data
}

NpzFile NpzFile::load(const std::string& path, const std::map<std::string, uint64_t>* only) {
  // A regular file only (a FIFO would block the loader), at most kMaxFile bytes.
  std::vector<uint8_t> bytes;
  try {
    bytes = readRegularFile(path, kMaxFile, "an .npz archive");
  } catch (const Error& e) {
    throw Error(fmt::format("npz: {}", e.what()));
  }
  const Reader r{bytes, path};
  uint64_t decoded = 0;
  // The end-of-central-directory record: the last signature within 22 + 65535 bytes of the end.
  if (bytes.size() < kEndSize) r.fail("not a zip archive (too short)");
  size_t end = bytes.size() - kEndSize;
  const size_t lowest = bytes.size() >= kEndSize + 0xffff ? bytes.size() - kEndSize - 0xffff : 0;
  while (r.u32(end) != kEndSig) {
    if (end == lowest) r.fail("not a zip archive (no end-of-central-directory record)");
    --end;
  }
  const uint32_t entries = r.u16(end + 10);
  const uint64_t cdSize = r.u32(end + 12);
  const uint64_t cdOffset = r.u32(end + 16);
  if (entries > kMaxMembers) r.fail(fmt::format("{} members is too many", entries));
  r.need(cdOffset, cdSize, "central directory");
  // First the whole directory, with every size check; then the members are decoded, so nothing is
  // allocated for a member before the archive as a whole is known to be within the limits.
  struct Member {
    std::string name, what;
    uint16_t method = 0;
    uint32_t crc = 0;
    uint64_t data = 0, csize = 0, usize = 0;
  };
  std::vector<Member> members;
  uint64_t at = cdOffset;
  for (uint32_t e = 0; e < entries; ++e) {
    r.need(at, kCentralSize, "central directory entry");
    if (r.u32(at) != kCentralSig)
      r.fail(fmt::format("bad central directory signature at offset {}", at));
    const uint16_t flags = r.u16(at + 8);
    const uint16_t method = r.u16(at + 10);
    const uint32_t crc = r.u32(at + 16);
    uint64_t csize = r.u32(at + 20);
    uint64_t usize = r.u32(at + 24);
    const uint16_t nameLen = r.u16(at + 28);
    const uint16_t extraLen = r.u16(at + 30);
    const uint16_t commentLen = r.u16(at + 32);
    uint64_t local = r.u32(at + 42);
    r.need(at + kCentralSize, uint64_t{nameLen} + extraLen + commentLen, "central directory entry");
    const std::string member(
        bytes.begin() + static_cast<std::ptrdiff_t>(at + kCentralSize),
        bytes.begin() + static_cast<std::ptrdiff_t>(at + kCentralSize + nameLen));
    // Zip64 extended information (id 1): the 64-bit values of the fields that hold 0xffffffff.
    for (uint64_t x = at + kCentralSize + nameLen;
         x + 4 <= at + kCentralSize + nameLen + extraLen;) {
      const uint16_t id = r.u16(x);
      const uint16_t len = r.u16(x + 2);
      const uint64_t lim = x + 4 + len;
      if (lim > at + kCentralSize + nameLen + extraLen)
        r.fail(fmt::format("{}: malformed extra field", member));
      if (id == 1) {
        uint64_t q = x + 4;
        auto take = [&](uint64_t& field) {
          if (field != 0xffffffffu) return;
          if (q + 8 > lim) r.fail(fmt::format("{}: malformed zip64 field", member));
          field = r.u64(q);
          q += 8;
        };
        take(usize);
        take(csize);
        take(local);
      }
      x = lim;
    }
    at += kCentralSize + nameLen + extraLen + commentLen;
    const std::string what = fmt::format("{}: {}", path, member);
    if ((flags & 1) != 0) r.fail(fmt::format("{}: encrypted members are not supported", member));
    if (method != 0 && method != 8)
      r.fail(fmt::format("{}: compression method {} is not supported (stored or deflate)", member,
                         method));
    if (usize > kMaxMember || csize > kMaxMember)
      r.fail(fmt::format("{}: member too large", member));
    if (method == 8 && usize > csize * kMaxDeflateRatio + 1024)
      r.fail(
          fmt::format("{}: declares {} bytes from {} compressed bytes, more than deflate "
                      "can expand to",
                      member, usize, csize));
    if (member.size() < 5 || member.compare(member.size() - 4, 4, ".npy") != 0)
      r.fail(fmt::format("member '{}' is not a .npy file", member));
    r.need(local, kLocalSize, "local file header");
    if (r.u32(local) != kLocalSig)
      r.fail(fmt::format("{}: bad local header signature at offset {}", member, local));
    const uint64_t data = local + kLocalSize + r.u16(local + 26) + r.u16(local + 28);
    r.need(data, csize, "member data");
    const std::string name = member.substr(0, member.size() - 4);
    if (only != nullptr) {
      const auto it = only->find(name);
      if (it == only->end()) {
        std::string names;
        for (const auto& [n, bytes] : *only) names += (names.empty() ? "" : ", ") + n;
        r.fail(fmt::format("array '{}' is not one of those expected ({})", name, names));
      }
      if (usize > it->second)
        r.fail(
            fmt::format("{}: declares {} bytes, more than the {} an array of its expected "
                        "shape takes",
                        member, usize, it->second));
    }
    if (method == 0 && csize != usize)
      r.fail(fmt::format("{}: stored member with different sizes", member));
    if (!validName(name)) r.fail(fmt::format("bad member name '{}'", member));
    for (const Member& m : members) {
      if (m.name == name) r.fail(fmt::format("duplicate member '{}'", member));
    }
    decoded += usize;
    if (decoded > kMaxTotal)
      r.fail(
          fmt::format("{}: the members declare {} bytes together, more than the {} allowed "
                      "(docs/limits.md)",
                      member, decoded, kMaxTotal));
    members.push_back({name, what, method, crc, data, csize, usize});
  }
  NpzFile out;
  for (const Member& m : members) {
    std::vector<uint8_t> npy;
    if (m.method == 0) {
      npy.assign(bytes.begin() + static_cast<std::ptrdiff_t>(m.data),
                 bytes.begin() + static_cast<std::ptrdiff_t>(m.data + m.csize));
    } else {
      npy = inflateRaw(bytes.data() + m.data, static_cast<size_t>(m.csize), m.usize, m.what);
    }
    if (crcOf(npy) != m.crc)
      r.fail(fmt::format("{}.npy: CRC-32 mismatch (file is corrupt)", m.name));
    out.arrays_.emplace_back(m.name, decodeNpy(npy, m.what));
  }
  return out;
}

}  // namespace tessera::bench

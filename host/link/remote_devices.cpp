// Device strings of the link backends: tcp://HOST:PORT[?timeout_ms=N][&token_file=PATH] and
// serial:PATH[?baud=N][&timeout_ms=N] (docs/link-protocol.md, "Device strings").
#include <fmt/format.h>
#include <termios.h>

#include <charconv>
#include <map>
#include <optional>
#include <string_view>

#include "asio_stream_transport.hpp"
#include "boost_asio.hpp"
#include "link_device.hpp"
#include "tessera/error.hpp"
#include "token.hpp"

namespace tessera::link {
namespace {

constexpr unsigned kDefaultTimeoutMs = 5000;
constexpr unsigned kMaxTimeoutMs = 3'600'000;  // an hour; more is surely a typo

/// A decimal number in [lo, hi], digits only (no sign, no base prefix, no wrap), else nullopt.
std::optional<unsigned> strictNumber(std::string_view text, unsigned lo, unsigned hi) {
  unsigned v = 0;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(first, last, v);
  if (first == last || ec != std::errc() || ptr != last || v < lo || v > hi) return std::nullopt;
  return v;
}

struct NumberOption {
  unsigned value, lo, hi;
};

/// "path?k=v&k=v" → path; numeric options checked against their range, text options as given;
/// unknown keys are refused.
std::string splitQuery(const std::string& spec, const std::string& body,
                       std::map<std::string, NumberOption>& numbers,
                       std::map<std::string, std::string>& texts) {
  const size_t q = body.find('?');
  if (q == std::string::npos) return body;
  std::string rest = body.substr(q + 1);
  while (!rest.empty()) {
    const size_t amp = rest.find('&');
    const std::string kv = rest.substr(0, amp);
    rest = amp == std::string::npos ? "" : rest.substr(amp + 1);
    const size_t eq = kv.find('=');
    const std::string key = kv.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : kv.substr(eq + 1);
    if (eq != std::string::npos && numbers.contains(key)) {
      NumberOption& o = numbers[key];
      const auto v = strictNumber(value, o.lo, o.hi);
      if (!v)
        throw Error(
            fmt::format("device \"{}\": option {}={}: expected a whole number from {} to {}", spec,
                        key, value, o.lo, o.hi));
      o.value = *v;
    } else if (eq != std::string::npos && texts.contains(key) && !value.empty()) {
      texts[key] = value;
    } else {
      throw Error(fmt::format("device \"{}\": bad option \"{}\"", spec, kv));
    }
  }
  return body.substr(0, q);
}

}  // namespace

std::unique_ptr<Device> makeTcpDevice(const std::string& spec) {
  std::map<std::string, NumberOption> opts{{"timeout_ms", {kDefaultTimeoutMs, 1, kMaxTimeoutMs}}};
  std::map<std::string, std::string> texts{{"token_file", ""}};
  const std::string hostPort = splitQuery(spec, spec.substr(6), opts, texts);
  const size_t colon = hostPort.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == hostPort.size())
    throw Error(fmt::format("device \"{}\": expected tcp://HOST:PORT", spec));
  if (!strictNumber(std::string_view(hostPort).substr(colon + 1), 1, 65535))
    throw Error(fmt::format("device \"{}\": port \"{}\" is not a number from 1 to 65535", spec,
                            hostPort.substr(colon + 1)));
  // A token is sent only when one is configured (a server without one accepts it and ignores it).
  const std::string token = loadToken(texts["token_file"]);
  const auto timeout = std::chrono::milliseconds(opts["timeout_ms"].value);
  auto io = std::make_unique<boost::asio::io_context>();
  boost::asio::ip::tcp::socket socket(*io);
  boost::system::error_code ec;
  boost::asio::ip::tcp::resolver resolver(*io);
  const auto endpoints =
      resolver.resolve(hostPort.substr(0, colon), hostPort.substr(colon + 1), ec);
  if (ec) throw Error(fmt::format("device \"{}\": {}", spec, ec.message()));
  bool done = false;
  boost::asio::async_connect(socket, endpoints,
                             [&](const boost::system::error_code& e, const auto&) {
                               ec = e;
                               done = true;
                             });
  io->run_for(timeout);
  if (!done) {
    socket.close();
    io->restart();
    io->run();
    throw Error(fmt::format("device \"{}\": connect timed out", spec));
  }
  if (ec) throw Error(fmt::format("device \"{}\": cannot connect: {}", spec, ec.message()));
  socket.set_option(boost::asio::ip::tcp::no_delay(true));
  auto transport = std::make_unique<AsioStreamTransport<boost::asio::ip::tcp::socket>>(
      std::move(io), std::move(socket), spec);
  return std::make_unique<LinkDevice>(std::move(transport), spec, timeout, token);
}

std::unique_ptr<Device> makeSerialDevice(const std::string& spec) {
  std::map<std::string, NumberOption> opts{{"timeout_ms", {kDefaultTimeoutMs, 1, kMaxTimeoutMs}},
                                           {"baud", {115200, 50, 4'000'000}}};
  std::map<std::string, std::string> texts;
  const std::string path = splitQuery(spec, spec.substr(7), opts, texts);
  if (path.empty()) throw Error(fmt::format("device \"{}\": expected serial:PATH", spec));
  auto io = std::make_unique<boost::asio::io_context>();
  boost::asio::serial_port port(*io);
  boost::system::error_code ec;
  port.open(path, ec);  // Boost puts the line in raw mode
  if (ec) throw Error(fmt::format("device \"{}\": cannot open {}: {}", spec, path, ec.message()));
  port.set_option(boost::asio::serial_port_base::baud_rate(opts["baud"].value), ec);
  if (ec)
    throw Error(
        fmt::format("device \"{}\": baud rate {}: {}", spec, opts["baud"].value, ec.message()));
  ::tcflush(port.native_handle(), TCIOFLUSH);  // bytes left over from an earlier client
  auto transport = std::make_unique<AsioStreamTransport<boost::asio::serial_port>>(
      std::move(io), std::move(port), spec);
  return std::make_unique<LinkDevice>(std::move(transport), spec,
                                      std::chrono::milliseconds(opts["timeout_ms"].value));
}

}  // namespace tessera::link

// Device strings of the link backends: tcp://HOST:PORT[?timeout_ms=N] and
// serial:PATH[?baud=N][&timeout_ms=N] (docs/link-protocol.md, "Device strings").
#include <fmt/format.h>
#include <termios.h>

#include <charconv>
#include <map>

#include "asio_stream_transport.hpp"
#include "boost_asio.hpp"
#include "link_device.hpp"
#include "tessera/error.hpp"

namespace tessera::link {
namespace {

constexpr unsigned kDefaultTimeoutMs = 5000;

/// "path?k=v&k=v" → path and options; unknown keys are refused by the caller.
std::string splitQuery(const std::string& spec, const std::string& body,
                       std::map<std::string, unsigned>& opts) {
  const size_t q = body.find('?');
  if (q == std::string::npos) return body;
  std::string rest = body.substr(q + 1);
  while (!rest.empty()) {
    const size_t amp = rest.find('&');
    const std::string kv = rest.substr(0, amp);
    rest = amp == std::string::npos ? "" : rest.substr(amp + 1);
    const size_t eq = kv.find('=');
    unsigned v = 0;
    const std::string key = kv.substr(0, eq);
    const char* first = kv.data() + eq + 1;
    const char* last = kv.data() + kv.size();
    if (eq == std::string::npos || !opts.contains(key) ||
        std::from_chars(first, last, v).ptr != last || first == last)
      throw Error(fmt::format("device \"{}\": bad option \"{}\"", spec, kv));
    opts[key] = v;
  }
  return body.substr(0, q);
}

}  // namespace

std::unique_ptr<Device> makeTcpDevice(const std::string& spec) {
  std::map<std::string, unsigned> opts{{"timeout_ms", kDefaultTimeoutMs}};
  const std::string hostPort = splitQuery(spec, spec.substr(6), opts);
  const size_t colon = hostPort.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == hostPort.size())
    throw Error(fmt::format("device \"{}\": expected tcp://HOST:PORT", spec));
  const auto timeout = std::chrono::milliseconds(opts["timeout_ms"]);
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
  return std::make_unique<LinkDevice>(std::move(transport), spec, timeout);
}

std::unique_ptr<Device> makeSerialDevice(const std::string& spec) {
  std::map<std::string, unsigned> opts{{"timeout_ms", kDefaultTimeoutMs}, {"baud", 115200}};
  const std::string path = splitQuery(spec, spec.substr(7), opts);
  if (path.empty()) throw Error(fmt::format("device \"{}\": expected serial:PATH", spec));
  auto io = std::make_unique<boost::asio::io_context>();
  boost::asio::serial_port port(*io);
  boost::system::error_code ec;
  port.open(path, ec);  // Boost puts the line in raw mode
  if (ec) throw Error(fmt::format("device \"{}\": cannot open {}: {}", spec, path, ec.message()));
  port.set_option(boost::asio::serial_port_base::baud_rate(opts["baud"]), ec);
  if (ec)
    throw Error(fmt::format("device \"{}\": baud rate {}: {}", spec, opts["baud"], ec.message()));
  ::tcflush(port.native_handle(), TCIOFLUSH);  // bytes left over from an earlier client
  auto transport = std::make_unique<AsioStreamTransport<boost::asio::serial_port>>(
      std::move(io), std::move(port), spec);
  return std::make_unique<LinkDevice>(std::move(transport), spec,
                                      std::chrono::milliseconds(opts["timeout_ms"]));
}

}  // namespace tessera::link

// tessera-server: serves one device over the link protocol (docs/link-protocol.md) on a TCP
// port (one client at a time; others are closed at once) or on a pseudo-terminal (--pty).
// Prints "listening on HOST:PORT" or "pty PATH" on stdout once ready. SIGINT/SIGTERM stop it.
// Loopback unless told otherwise; beyond loopback only with a shared token. Limits and
// timeouts: docs/limits.md.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdio>
#include <memory>
#include <string>

#include "cli_numbers.hpp"
#include "link_server.hpp"
#include "link_session.hpp"
#include "pty_endpoint.hpp"
#include "tcp_listener.hpp"
#include "tessera/device.hpp"
#include "tessera/error.hpp"
#include "token.hpp"

namespace {

using boost::asio::ip::tcp;
using tessera::link::LinkServer;
using tessera::link::PtyEndpoint;
using tessera::link::SessionLimits;
using tessera::link::TcpListener;

struct ServerOptions {
  std::string device = "model";
  unsigned tiles = 0;
  unsigned tileMemKiB = 0;
  unsigned maxTiles = 0;
  std::string listen = "127.0.0.1:7455";
  bool pty = false;
  std::string tokenFile;
  SessionLimits limits;
};

/// HOST:PORT with a decimal port 0..65535 (0 = any free port); nothing else is accepted.
tcp::endpoint parseListen(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos)
    throw tessera::Error(fmt::format("--listen {}: expected HOST:PORT", listen));
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);  // [::1]:7455
  boost::system::error_code ec;
  const auto address = boost::asio::ip::make_address(host, ec);
  if (ec)
    throw tessera::Error(
        fmt::format("--listen {}: \"{}\" is not an IP address", listen, listen.substr(0, colon)));
  const std::string portText = listen.substr(colon + 1);
  unsigned port = 0;
  const char* last = portText.data() + portText.size();
  const auto [ptr, perr] = std::from_chars(portText.data(), last, port);
  if (portText.empty() || perr != std::errc() || ptr != last || port > 65535)
    throw tessera::Error(
        fmt::format("--listen {}: port \"{}\" is not a number from 0 to 65535", listen, portText));
  return tcp::endpoint(address, static_cast<uint16_t>(port));
}

int serve(ServerOptions o) {
  const std::string token = tessera::link::loadToken(o.tokenFile);
  tcp::endpoint endpoint;
  if (!o.pty) {
    endpoint = parseListen(o.listen);
    if (!endpoint.address().is_loopback() && token.empty())
      throw tessera::Error(fmt::format(
          "--listen {}: not a loopback address; anyone who reaches it could read and write the "
          "device, so a shared token is required: --token-file PATH or ${} (docs/limits.md)",
          o.listen, tessera::link::kTokenEnv));
  }
  tessera::DeviceOptions options;
  options.tiles = o.tiles;
  options.tileMemBytes = o.tileMemKiB * 1024u;
  options.maxTiles = o.maxTiles;
  auto device = tessera::openDevice(o.device, options);
  LinkServer server(*device);
  boost::asio::io_context io;
  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  std::unique_ptr<TcpListener> listener;
  std::unique_ptr<PtyEndpoint> ptyEndpoint;
  if (o.pty) {
    // A pty has no peers to tell apart and no token (its file permissions guard it).
    SessionLimits limits = o.limits;
    limits.closable = false;
    ptyEndpoint = std::make_unique<PtyEndpoint>(io, server, limits);
    ptyEndpoint->start();
    fmt::print("tessera-server: pty {}\n", ptyEndpoint->path());
  } else {
    SessionLimits limits = o.limits;
    limits.token = token;
    boost::system::error_code ec;
    listener = std::make_unique<TcpListener>(io, endpoint, server, limits);
    listener->start();
    fmt::print("tessera-server: listening on {}:{}\n", endpoint.address().to_string(),
               listener->port());
  }
  std::fflush(stdout);
  signals.async_wait([&](const boost::system::error_code& ec, int) {
    if (ec) return;
    if (listener) listener->stop();
    if (ptyEndpoint) ptyEndpoint->stop();
  });
  io.run();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tessera-server: serve a tessera device over the link protocol"};
  ServerOptions o;
  size_t maxReplyQueue = o.limits.maxReplyQueueBytes;
  unsigned idleMs = static_cast<unsigned>(o.limits.idleTimeout.count());
  app.add_option("--device", o.device, "device to serve: model or rtl")->capture_default_str();
  app.add_option("--tiles", o.tiles,
                 fmt::format("tiles in the chip (0 = the default, {})", TESS_DEFAULT_TILES));
  app.add_option("--tile-mem", o.tileMemKiB,
                 "KiB of SRAM per tile (0 = the backend's default; the RTL's is fixed when it is "
                 "built)")
      ->check(CLI::Range(0u, 1u << 21));
  app.add_option(
      "--max-tiles", o.maxTiles,
      fmt::format("refuse more tiles than this (default {})", tessera::kDefaultMaxTiles));
  app.add_option("--listen", o.listen,
                 "TCP address HOST:PORT (port 0 = any free port); a non-loopback address needs a "
                 "token")
      ->capture_default_str();
  app.add_flag("--pty", o.pty, "serve on a new pseudo-terminal instead of TCP (path on stdout)");
  app.add_option("--token-file", o.tokenFile,
                 "file holding the shared token clients must present (else $TESSERA_TOKEN; "
                 "required beyond loopback)");
  app.add_option("--max-reply-queue", maxReplyQueue,
                 "reply bytes queued for a client that does not read them before it is "
                 "disconnected")
      ->capture_default_str()
      ->check(CLI::Range(size_t{tessera::link::kMaxFrameBytes}, size_t{1} << 32));
  app.add_option("--idle-timeout-ms", idleMs,
                 "disconnect a client that sends no request for this long (its run is stopped); "
                 "0 = never")
      ->capture_default_str();
  tessera::cli::requireFiniteNumbers(app);
  CLI11_PARSE(app, argc, argv);
  o.limits.maxReplyQueueBytes = maxReplyQueue;
  o.limits.idleTimeout = std::chrono::milliseconds(idleMs);
  try {
    return serve(o);
  } catch (const std::exception& e) {
    fmt::print(stderr, "tessera-server: {}\n", e.what());
    return 1;
  }
}

// tessera-server: serves one device over the link protocol (docs/link-protocol.md) on a TCP
// port (one client at a time; others are closed at once) or on a pseudo-terminal (--pty).
// Prints "listening on HOST:PORT" or "pty PATH" on stdout once ready. SIGINT/SIGTERM stop it.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>

#include "link_server.hpp"
#include "link_session.hpp"
#include "pty_endpoint.hpp"
#include "tcp_listener.hpp"
#include "tessera/device.hpp"
#include "tessera/error.hpp"

namespace {

using boost::asio::ip::tcp;
using tessera::link::LinkServer;
using tessera::link::PtyEndpoint;
using tessera::link::TcpListener;

int serve(const std::string& deviceSpec, unsigned tiles, const std::string& listen, bool pty) {
  tessera::DeviceOptions options;
  options.tiles = tiles;
  auto device = tessera::openDevice(deviceSpec, options);
  LinkServer server(*device);
  boost::asio::io_context io;
  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  std::unique_ptr<TcpListener> listener;
  std::unique_ptr<PtyEndpoint> ptyEndpoint;
  if (pty) {
    ptyEndpoint = std::make_unique<PtyEndpoint>(io, server);
    ptyEndpoint->start();
    fmt::print("tessera-server: pty {}\n", ptyEndpoint->path());
  } else {
    const size_t colon = listen.rfind(':');
    if (colon == std::string::npos) throw tessera::Error("--listen expects HOST:PORT");
    boost::system::error_code ec;
    const auto address = boost::asio::ip::make_address(listen.substr(0, colon), ec);
    if (ec) throw tessera::Error(fmt::format("--listen {}: bad address", listen));
    const unsigned long port = std::stoul(listen.substr(colon + 1));
    if (port > 65535) throw tessera::Error(fmt::format("--listen {}: bad port", listen));
    listener = std::make_unique<TcpListener>(
        io, tcp::endpoint(address, static_cast<uint16_t>(port)), server);
    listener->start();
    fmt::print("tessera-server: listening on {}:{}\n", address.to_string(), listener->port());
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
  std::string device = "model";
  unsigned tiles = 0;
  std::string listen = "127.0.0.1:7455";
  bool pty = false;
  app.add_option("--device", device, "device to serve: model or rtl")->capture_default_str();
  app.add_option("--tiles", tiles, "tiles in the chip (0 = the default, 4)");
  app.add_option("--listen", listen, "TCP address HOST:PORT (port 0 = any free port)")
      ->capture_default_str();
  app.add_flag("--pty", pty, "serve on a new pseudo-terminal instead of TCP (path on stdout)");
  CLI11_PARSE(app, argc, argv);
  try {
    return serve(device, tiles, listen, pty);
  } catch (const std::exception& e) {
    fmt::print(stderr, "tessera-server: {}\n", e.what());
    return 1;
  }
}

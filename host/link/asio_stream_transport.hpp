// Transport over any Boost.Asio stream (tcp::socket, serial_port): async operations driven by
// io_context::run_for, so a dead peer or a silent line ends in a tessera::Error, never a hang.
#pragma once

#include <string>
#include <utility>

#include "boost_asio.hpp"
#include "tessera/error.hpp"
#include "transport.hpp"

namespace tessera::link {

/// A Transport on a Boost.Asio stream; name prefixes its error messages.
template <class Stream>
class AsioStreamTransport : public Transport {
 public:
  /// Take ownership of an open stream that runs on io.
  AsioStreamTransport(std::unique_ptr<boost::asio::io_context> io, Stream stream, std::string name)
      : io_(std::move(io)), stream_(std::move(stream)), name_(std::move(name)) {}

  void write(std::span<const uint8_t> data, std::chrono::milliseconds timeout) override {
    boost::system::error_code ec;
    bool done = false;
    boost::asio::async_write(stream_, boost::asio::buffer(data.data(), data.size()),
                             [&](const boost::system::error_code& e, size_t) {
                               ec = e;
                               done = true;
                             });
    if (!wait(done, timeout))
      throw Error(name_ + ": write not accepted within " + std::to_string(timeout.count()) + " ms");
    if (ec) throw Error(name_ + ": write failed: " + ec.message());
  }

  size_t readSome(std::span<uint8_t> buf, std::chrono::milliseconds timeout) override {
    boost::system::error_code ec;
    bool done = false;
    size_t n = 0;
    stream_.async_read_some(boost::asio::buffer(buf.data(), buf.size()),
                            [&](const boost::system::error_code& e, size_t got) {
                              ec = e;
                              n = got;
                              done = true;
                            });
    if (!wait(done, timeout)) return 0;
    if (ec == boost::asio::error::eof) throw Error(name_ + ": the server closed the connection");
    if (ec) throw Error(name_ + ": read failed: " + ec.message());
    return n;
  }

 private:
  // False when the operation did not finish in time (it is cancelled then).
  bool wait(bool& done, std::chrono::milliseconds timeout) {
    io_->restart();
    io_->run_for(timeout);
    if (done) return true;
    // Cancel, then let the handler run so no callback outlives this frame's locals.
    boost::system::error_code ignored;
    stream_.cancel(ignored);
    io_->restart();
    io_->run();
    return false;
  }

  std::unique_ptr<boost::asio::io_context> io_;
  Stream stream_;
  std::string name_;
};

}  // namespace tessera::link

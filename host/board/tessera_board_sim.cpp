// tessera-board-sim: the verilated board top (rtl/boards/tess_board.sv) with its UART pins on a
// pty, so that every host tool reaches it with --device serial:PATH exactly as a board on a USB
// UART (docs/bringup.md, "Without a board").
//
// The first line on stdout is "tessera-board-sim: pty /dev/pts/N". The harness keeps the pty's
// slave side open itself, so clients may open and close it any number of times.
// Each clock cycle the harness drives uart_rx_i from the bytes the client wrote (8N1, the board's
// ClkPerBit clocks per bit) and decodes uart_tx_o into bytes for the client. When the board is idle
// (no request, run or partial frame in progress, both UART lines idle) it sleeps in poll() until
// the client writes, so an idle simulation takes no CPU.
// SIGINT/SIGTERM end the simulation; the exit status is 0.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "Vtess_board.h"
#include "private_pty.hpp"
#include "tessera/error.hpp"
#include "verilated.h"

namespace {

constexpr unsigned kClkPerBit = TESSERA_BOARD_CLK_PER_BIT;
constexpr unsigned kCyclesPerMs = TESSERA_BOARD_CYCLES_PER_MS;

volatile sig_atomic_t g_stop = 0;
void onSignal(int) {
  g_stop = 1;
}

// Serialises bytes onto the board's RX pin, 8N1, LSB first.
class LineDriver {
 public:
  bool idle() const { return bit_ == 0 && queue_.empty(); }
  void push(const uint8_t* p, size_t n) { queue_.insert(queue_.end(), p, p + n); }
  size_t queued() const { return queue_.size(); }
  // The pin level for the next cycle.
  uint8_t step() {
    if (bit_ == 0) {
      if (queue_.empty()) return 1;
      frame_ = static_cast<uint16_t>((0x200u | (static_cast<unsigned>(queue_.front()) << 1)));
      queue_.pop_front();
      bit_ = 10;
      count_ = 0;
    }
    const uint8_t level = frame_ & 1u;
    if (++count_ == kClkPerBit) {
      count_ = 0;
      frame_ >>= 1;
      --bit_;
    }
    return level;
  }

 private:
  std::deque<uint8_t> queue_;
  uint16_t frame_ = 0;
  unsigned bit_ = 0;
  unsigned count_ = 0;
};

// Decodes the board's TX pin, sampling each bit in its middle.
class LineReceiver {
 public:
  bool idle() const { return !active_; }
  // Feed one cycle's pin level; returns true with byte set when a byte completes.
  bool step(uint8_t level, uint8_t& byte) {
    if (!active_) {
      if (level == 0) {
        active_ = true;
        count_ = 0;
        bit_ = 0;
        shift_ = 0;
      }
      return false;
    }
    ++count_;
    // Middle of bit k (k = 0 start, 1..8 data, 9 stop) is at k * kClkPerBit + kClkPerBit / 2.
    if (count_ == bit_ * kClkPerBit + kClkPerBit / 2) {
      if (bit_ >= 1 && bit_ <= 8) shift_ |= static_cast<uint8_t>((level & 1u) << (bit_ - 1));
      if (bit_ == 9) {
        active_ = false;
        byte = shift_;
        return level == 1;  // a missing stop bit drops the byte
      }
      ++bit_;
    }
    return false;
  }

 private:
  bool active_ = false;
  unsigned count_ = 0;
  unsigned bit_ = 0;
  uint8_t shift_ = 0;
};

int run() {
  tessera::PrivatePty pty;
  try {
    pty = tessera::openPrivatePty();
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "tessera-board-sim: %s\n", e.what());
    return 1;
  }
  const int master = pty.master;
  const std::string path = pty.path;
  ::fcntl(master, F_SETFL, ::fcntl(master, F_GETFL) | O_NONBLOCK);

  auto context = std::make_unique<VerilatedContext>();
  auto top = std::make_unique<Vtess_board>(context.get(), "tess_board");
  top->clk_i = 0;
  top->rst_ni = 0;
  top->uart_rx_i = 1;
  top->eval();
  auto tick = [&top]() {
    top->clk_i = 1;
    top->eval();
    top->clk_i = 0;
    top->eval();
  };
  for (int i = 0; i < 4; ++i) tick();
  top->rst_ni = 1;
  for (int i = 0; i < 4; ++i) tick();

  std::printf("tessera-board-sim: pty %s\n", path.c_str());
  std::printf("tessera-board-sim: %u tiles x %u bytes, %u kHz board clock, %u baud\n",
              unsigned{TESSERA_BOARD_TILES}, unsigned{TESSERA_BOARD_MEM_BYTES}, kCyclesPerMs,
              kCyclesPerMs * 1000 / kClkPerBit);
  std::fflush(stdout);

  LineDriver driver;
  LineReceiver receiver;
  std::vector<uint8_t> out;
  uint8_t buf[4096];
  uint64_t cycle = 0;
  uint64_t quietCycles = 0;
  while (!g_stop) {
    // Take the client's bytes now and then (a read per cycle would dominate the run time).
    if ((cycle & 255u) == 0 && driver.queued() < 256) {
      const ssize_t n = ::read(master, buf, sizeof buf);
      if (n > 0) driver.push(buf, static_cast<size_t>(n));
    }
    top->uart_rx_i = driver.step();
    tick();
    ++cycle;
    uint8_t byte = 0;
    if (receiver.step(top->uart_tx_o, byte)) out.push_back(byte);
    // The line is quiet once neither side has sent for more than a character time.
    quietCycles = (receiver.idle() && driver.idle() && top->uart_tx_o) ? quietCycles + 1 : 0;
    const bool quiet = quietCycles > 12 * kClkPerBit;
    if (!out.empty() && (quiet || out.size() >= 1024)) {
      // Nobody may be listening: a full pty buffer drops the reply, as a line without a host.
      const ssize_t n = ::write(master, out.data(), out.size());
      (void)n;
      out.clear();
    }
    if (quiet && !top->busy_o) {
      pollfd p{master, POLLIN, 0};
      const int r = ::poll(&p, 1, 50);
      if (r > 0 && (p.revents & POLLIN)) {
        const ssize_t n = ::read(master, buf, sizeof buf);
        if (n > 0) driver.push(buf, static_cast<size_t>(n));
      }
    }
  }
  top->final();
  ::close(pty.slave);
  ::close(master);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // No options: anything on the command line (--help included) is answered, not simulated.
  if (argc > 1) {
    const std::string arg = argv[1];
    const bool help = arg == "--help" || arg == "-h";
    std::fprintf(help ? stdout : stderr,
                 "%stessera-board-sim: the verilated board (rtl/boards/tess_board.sv) behind a "
                 "pty\nUsage: tessera-board-sim\n  takes no options; prints \"tessera-board-sim: "
                 "pty PATH\" and serves\n  the board there until SIGINT or SIGTERM "
                 "(docs/bringup.md, \"Without a board\")\n",
                 help ? "" : ("tessera-board-sim: unknown argument \"" + arg + "\"\n").c_str());
    return help ? 0 : 2;
  }
  struct sigaction sa {};
  sa.sa_handler = onSignal;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  return run();
}

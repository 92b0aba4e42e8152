// Training progress on stdout: on a terminal, one line redrawn in place (step, epoch, loss,
// samples/s, ETA); otherwise (a log file, a pipe) a plain line every few seconds.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>

namespace tessera::bench {

/// Prints training progress, throttled so that printing never slows the run down.
class ProgressBar {
 public:
  /// Seconds since an arbitrary origin (replaceable for tests).
  using Clock = std::function<double()>;

  /// Progress of totalSteps steps of batch images over `epochs` epochs, printed to out;
  /// interactive (redraw one line) when out is a terminal.
  ProgressBar(std::FILE* out, uint64_t totalSteps, uint32_t epochs, uint64_t batch);

  /// Force the terminal or plain mode (the default is isatty(out)).
  void setInteractive(bool interactive) { interactive_ = interactive; }
  /// Replace the clock (default: std::chrono::steady_clock).
  void setClock(Clock clock);
  /// Seconds between plain lines (default 10) and between redraws on a terminal (default 0.1).
  void setIntervals(double plainSeconds, double terminalSeconds);

  /// Report that `step` steps are done, the current epoch (1-based) and the last loss; prints if
  /// the interval has passed (always for the last step).
  void update(uint64_t step, uint32_t epoch, float loss);
  /// Print the final state and end the terminal line.
  void finish();
  /// Lines (plain) or redraws (terminal) printed so far.
  uint64_t printed() const { return printed_; }

  /// The progress text: "step S/T  epoch E/N  loss L  R samples/s  ETA M:SS" (with a bar when
  /// barWidth > 0).
  static std::string format(uint64_t step, uint64_t totalSteps, uint32_t epoch, uint32_t epochs,
                            float loss, double samplesPerSecond, double etaSeconds, int barWidth);

 private:
  void print();

  std::FILE* out_;
  uint64_t total_;
  uint32_t epochs_;
  uint64_t batch_;
  bool interactive_;
  Clock clock_;
  double start_;
  double plainInterval_ = 10.0;
  double terminalInterval_ = 0.1;
  double lastPrint_ = -1e300;
  uint64_t step_ = 0;
  uint32_t epoch_ = 0;
  float loss_ = 0;
  uint64_t printed_ = 0;
  bool dirty_ = false;
};

}  // namespace tessera::bench

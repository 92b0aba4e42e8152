#include "progress_bar.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cmath>

namespace tessera::bench {
namespace {

double steadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string duration(double s) {
  if (!std::isfinite(s) || s < 0) return "--:--";
  const auto t = static_cast<uint64_t>(s + 0.5);
  if (t >= 3600) return fmt::format("{}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60);
  return fmt::format("{}:{:02}", t / 60, t % 60);
}

}  // namespace

ProgressBar::ProgressBar(std::FILE* out, uint64_t totalSteps, uint32_t epochs, uint64_t batch)
    : out_(out),
      total_(totalSteps),
      epochs_(epochs),
      batch_(batch),
      interactive_(out != nullptr && isatty(fileno(out)) != 0),
      clock_(steadySeconds),
      start_(clock_()) {}

void ProgressBar::setClock(Clock clock) {
  clock_ = std::move(clock);
  start_ = clock_();
}

void ProgressBar::setIntervals(double plainSeconds, double terminalSeconds) {
  plainInterval_ = plainSeconds;
  terminalInterval_ = terminalSeconds;
}

std::string ProgressBar::format(uint64_t step, uint64_t totalSteps, uint32_t epoch, uint32_t epochs,
                                float loss, double samplesPerSecond, double etaSeconds,
                                int barWidth) {
  std::string bar;
  if (barWidth > 0) {
    const double frac =
        totalSteps > 0 ? std::min(1.0, static_cast<double>(step) / static_cast<double>(totalSteps))
                       : 0.0;
    const int filled = static_cast<int>(frac * barWidth);
    bar.push_back('[');
    bar.append(static_cast<size_t>(filled), '#');
    bar.append(static_cast<size_t>(barWidth - filled), '.');
    bar.append("] ");
  }
  return fmt::format("{}step {}/{}  epoch {}/{}  loss {:.4f}  {:.0f} samples/s  ETA {}", bar, step,
                     totalSteps, epoch, epochs, loss, samplesPerSecond, duration(etaSeconds));
}

void ProgressBar::print() {
  if (out_ == nullptr) return;
  const double elapsed = clock_() - start_;
  const double rate = elapsed > 0 ? static_cast<double>(step_ * batch_) / elapsed : 0.0;
  const double eta = step_ > 0 && step_ <= total_ ? elapsed * static_cast<double>(total_ - step_) /
                                                        static_cast<double>(step_)
                                                  : std::nan("");
  if (interactive_) {
    // \r and "erase to end of line" redraw in place.
    std::fprintf(out_, "\r%s\x1b[K",
                 format(step_, total_, epoch_, epochs_, loss_, rate, eta, 24).c_str());
  } else {
    std::fprintf(out_, "%s\n", format(step_, total_, epoch_, epochs_, loss_, rate, eta, 0).c_str());
  }
  std::fflush(out_);
  ++printed_;
  dirty_ = false;
}

void ProgressBar::update(uint64_t step, uint32_t epoch, float loss) {
  step_ = step;
  epoch_ = epoch;
  loss_ = loss;
  dirty_ = true;
  const double now = clock_();
  const double interval = interactive_ ? terminalInterval_ : plainInterval_;
  if (step == total_ || now - lastPrint_ >= interval) {
    lastPrint_ = now;
    print();
  }
}

void ProgressBar::finish() {
  if (dirty_) print();
  if (interactive_ && out_ != nullptr && printed_ > 0) {
    std::fputc('\n', out_);
    std::fflush(out_);
  }
}

}  // namespace tessera::bench

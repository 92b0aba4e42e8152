#include "svg_chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "file_io.hpp"
#include "tessera/error.hpp"

namespace tessera::bench {
namespace {

constexpr const char* kFont = "font-family=\"sans-serif\"";
struct PhaseStyle {
  const char* cls;
  const char* label;
  const char* color;
};
constexpr PhaseStyle kPhases[] = {{"compute", "compute", "#4e79a7"},
                                  {"sync", "sync wait", "#e15759"},
                                  {"exchange", "exchange", "#f28e2b"},
                                  {"hostio", "host I/O", "#76b7b2"},
                                  {"interchip", "inter-chip", "#59a14f"}};
constexpr int kPhaseCount = 5;

// A "nice" tick step (1, 2 or 5 times a power of ten) giving about `ticks` ticks over span.
double niceStep(double span, int ticks) {
  if (!(span > 0)) return 1;
  const double raw = span / ticks;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / mag;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

std::string num(double v) {
  if (v != 0 && (std::fabs(v) >= 1e6 || std::fabs(v) < 1e-3)) return fmt::format("{:.3g}", v);
  return fmt::format("{:g}", std::round(v * 1e6) / 1e6);
}

std::string header(int w, int h, const std::string& title) {
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\">\n"
      "<title>{2}</title>\n"
      "<rect x=\"0\" y=\"0\" width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n"
      "<text x=\"{3}\" y=\"24\" text-anchor=\"middle\" font-size=\"16\" {4}>{2}</text>\n",
      w, h, SvgChart::escape(title), w / 2, kFont);
}

// A panel's frame, grid and tick labels; returns nothing, appends to svg.
struct Axes {
  double x0, y0, w, h;  // plot area in pixels (y0 = top)
  double xmin, xmax, ymin, ymax;
  double px(double x) const { return x0 + (xmax > xmin ? (x - xmin) / (xmax - xmin) : 0.5) * w; }
  double py(double y) const {
    return y0 + h - (ymax > ymin ? (y - ymin) / (ymax - ymin) : 0.5) * h;
  }
  void draw(std::string& svg, const std::string& xlabel, const std::string& ylabel) const {
    const double xs = niceStep(xmax - xmin, 6);
    for (double t = std::ceil(xmin / xs) * xs; t <= xmax + xs * 1e-9; t += xs) {
      svg += fmt::format(
          "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#ddd\"/>\n",
          px(t), y0, y0 + h);
      svg += fmt::format(
          "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" font-size=\"11\" {}>{}</text>\n",
          px(t), y0 + h + 14, kFont, num(t));
    }
    const double ys = niceStep(ymax - ymin, 5);
    for (double t = std::ceil(ymin / ys) * ys; t <= ymax + ys * 1e-9; t += ys) {
      svg += fmt::format(
          "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" stroke=\"#ddd\"/>\n",
          x0, py(t), x0 + w);
      svg += fmt::format(
          "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\" font-size=\"11\" {}>{}</text>\n",
          x0 - 6, py(t) + 4, kFont, num(t));
    }
    svg += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" "
        "stroke=\"#333\"/>\n",
        x0, y0, w, h);
    svg += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" font-size=\"12\" {}>{}</text>\n",
        x0 + w / 2, y0 + h + 32, kFont, SvgChart::escape(xlabel));
    svg += fmt::format(
        "<text x=\"{0:.1f}\" y=\"{1:.1f}\" text-anchor=\"middle\" font-size=\"12\" {2} "
        "transform=\"rotate(-90 {0:.1f} {1:.1f})\">{3}</text>\n",
        x0 - 48, y0 + h / 2, kFont, SvgChart::escape(ylabel));
  }
};

}  // namespace

std::string SvgChart::escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        // Control characters are not allowed in XML 1.0.
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\t' || c == '\n') out += c;
    }
  }
  return out;
}

std::string SvgChart::bspBreakdown(std::span<const TileTimes> tiles, const std::string& title) {
  const size_t n = tiles.size();
  const double barH = n == 0 ? 20.0 : std::clamp(480.0 / static_cast<double>(n), 4.0, 24.0);
  const double gap = barH >= 10 ? 3 : 1;
  const int labelEvery = barH >= 11 ? 1 : static_cast<int>(std::ceil(11.0 / barH));
  const double top = 80;
  const double left = 80;
  const double plotW = 640;
  const double plotH = std::max(1.0, static_cast<double>(n)) * (barH + gap);
  const int width = 800;
  const int height = static_cast<int>(top + plotH + 60);
  uint64_t maxTotal = 0;
  uint64_t sums[kPhaseCount] = {0, 0, 0, 0, 0};
  for (const TileTimes& t : tiles) {
    maxTotal = std::max(maxTotal, t.compute + t.syncWait + t.exchange + t.hostIo + t.interChip);
    sums[0] += t.compute;
    sums[1] += t.syncWait;
    sums[2] += t.exchange;
    sums[3] += t.hostIo;
    sums[4] += t.interChip;
  }
  const uint64_t all = sums[0] + sums[1] + sums[2] + sums[3] + sums[4];
  std::string svg = header(width, height, title);
  // Legend with each phase's share of all tiles' cycles.
  double lx = left;
  for (int p = 0; p < kPhaseCount; ++p) {
    if (p == 4 && sums[4] == 0) continue;  // inter-chip only with replicas
    const double share =
        all > 0 ? 100.0 * static_cast<double>(sums[p]) / static_cast<double>(all) : 0.0;
    svg += fmt::format("<rect x=\"{:.1f}\" y=\"40\" width=\"12\" height=\"12\" fill=\"{}\"/>\n", lx,
                       kPhases[p].color);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"50\" font-size=\"12\" {}>{} {:.1f}%</text>\n",
                       lx + 16, kFont, escape(kPhases[p].label), share);
    lx += 140;
  }
  Axes ax{left, top, plotW, plotH, 0, static_cast<double>(std::max<uint64_t>(maxTotal, 1)), 0, 1};
  // Only the x grid: draw() also draws y ticks, so do the frame by hand for a categorical y axis.
  const double xs = niceStep(ax.xmax, 6);
  for (double t = 0; t <= ax.xmax + xs * 1e-9; t += xs) {
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#ddd\"/>\n",
        ax.px(t), top, top + plotH);
    svg += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" font-size=\"11\" {}>{}</text>\n",
        ax.px(t), top + plotH + 14, kFont, num(t));
  }
  svg += fmt::format(
      "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" font-size=\"12\" {}>device "
      "cycles</text>\n",
      left + plotW / 2, top + plotH + 34, kFont);
  for (size_t i = 0; i < n; ++i) {
    const TileTimes& t = tiles[i];
    const uint64_t parts[kPhaseCount] = {t.compute, t.syncWait, t.exchange, t.hostIo, t.interChip};
    const double y = top + static_cast<double>(i) * (barH + gap) + gap / 2;
    svg += fmt::format("<g class=\"tile\" id=\"tile{}\">\n", i);
    if (static_cast<int>(i) % labelEvery == 0)
      svg += fmt::format(
          "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\" font-size=\"{:.0f}\" {}>tile "
          "{}</text>\n",
          left - 6, y + barH / 2 + 4, std::min(11.0, std::max(8.0, barH)), kFont, i);
    uint64_t acc = 0;
    for (int p = 0; p < kPhaseCount; ++p) {
      if (parts[p] == 0) continue;
      svg += fmt::format(
          "<rect class=\"{}\" x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" "
          "fill=\"{}\">"
          "<title>tile {}: {} {} cycles</title></rect>\n",
          kPhases[p].cls, ax.px(static_cast<double>(acc)), y,
          ax.px(static_cast<double>(acc + parts[p])) - ax.px(static_cast<double>(acc)), barH,
          kPhases[p].color, i, kPhases[p].label, parts[p]);
      acc += parts[p];
    }
    svg += "</g>\n";
  }
  svg += fmt::format(
      "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" "
      "stroke=\"#333\"/>\n",
      left, top, plotW, plotH);
  svg += "</svg>\n";
  return svg;
}

std::string SvgChart::trainingCurves(std::span<const Point> loss, std::span<const Point> accuracy,
                                     const std::string& title) {
  const int width = 800;
  const int height = 620;
  double xmax = 1;
  double lmax = 0;
  for (const Point& p : loss)
    if (std::isfinite(p.x) && std::isfinite(p.y)) {
      xmax = std::max(xmax, p.x);
      lmax = std::max(lmax, p.y);
    }
  for (const Point& p : accuracy)
    if (std::isfinite(p.x) && std::isfinite(p.y)) xmax = std::max(xmax, p.x);
  if (!(lmax > 0)) lmax = 1;
  const Axes lossAx{90, 50, 670, 220, 0, xmax, 0, lmax * 1.05};
  const Axes accAx{90, 330, 670, 220, 0, xmax, 0, 100};
  std::string svg = header(width, height, title);
  lossAx.draw(svg, "step", "training loss (batch mean)");
  accAx.draw(svg, "step", "test accuracy (%)");
  // Polylines broken at non-finite points.
  auto lines = [&](std::span<const Point> pts, const Axes& ax, double yscale, const char* cls,
                   const char* color) {
    std::string cur;
    auto flush = [&] {
      if (!cur.empty())
        svg += fmt::format(
            "<polyline class=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\" "
            "points=\"{}\"/>\n",
            cls, color, cur);
      cur.clear();
    };
    for (const Point& p : pts) {
      if (!std::isfinite(p.x) || !std::isfinite(p.y)) {
        flush();
        continue;
      }
      if (!cur.empty()) cur += ' ';
      cur += fmt::format("{:.2f},{:.2f}", ax.px(p.x), ax.py(p.y * yscale));
    }
    flush();
  };
  lines(loss, lossAx, 1.0, "loss", "#4e79a7");
  lines(accuracy, accAx, 100.0, "accuracy", "#e15759");
  for (const Point& p : accuracy) {
    if (!std::isfinite(p.x) || !std::isfinite(p.y)) continue;
    svg += fmt::format(
        "<circle class=\"accuracy\" cx=\"{:.2f}\" cy=\"{:.2f}\" r=\"3\" fill=\"#e15759\">"
        "<title>step {}: {:.2f}%</title></circle>\n",
        accAx.px(p.x), accAx.py(p.y * 100.0), num(p.x), p.y * 100.0);
  }
  svg += "</svg>\n";
  return svg;
}

void SvgChart::write(const std::string& path, const std::string& svg) {
  writeFileChecked(path, svg);
}

}  // namespace tessera::bench

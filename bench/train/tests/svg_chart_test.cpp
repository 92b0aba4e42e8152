#include "svg_chart.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <vector>

#include "test_util.hpp"

namespace tessera::bench {
namespace {

// A small XML well-formedness check: one root, tags nested and closed in order, attribute values
// quoted, no bare '<' or '&' in text, entities known. Returns "" or the first problem.
std::string xmlProblem(const std::string& s) {
  std::vector<std::string> stack;
  size_t i = 0;
  int roots = 0;
  if (s.rfind("<?xml", 0) == 0) i = s.find("?>") + 2;
  auto isName = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == ':' || c == '_';
  };
  while (i < s.size()) {
    if (s[i] == '<') {
      const bool closing = i + 1 < s.size() && s[i + 1] == '/';
      size_t j = i + (closing ? 2 : 1);
      const size_t n0 = j;
      while (j < s.size() && isName(s[j])) ++j;
      const std::string name = s.substr(n0, j - n0);
      if (name.empty()) return fmt::format("empty tag name at {}", i);
      if (closing) {
        if (stack.empty() || stack.back() != name)
          return fmt::format("unexpected </{}> at {}", name, i);
        stack.pop_back();
        if (j >= s.size() || s[j] != '>') return fmt::format("bad closing tag at {}", i);
        i = j + 1;
        continue;
      }
      // Attributes: name="value" ...
      for (;;) {
        while (j < s.size() && s[j] == ' ') ++j;
        if (j >= s.size()) return "unterminated tag";
        if (s[j] == '>' || (s[j] == '/' && j + 1 < s.size() && s[j + 1] == '>')) break;
        const size_t a0 = j;
        while (j < s.size() && isName(s[j])) ++j;
        if (j == a0 || j + 1 >= s.size() || s[j] != '=' || s[j + 1] != '"')
          return fmt::format("bad attribute in <{}> at {}", name, j);
        const size_t end = s.find('"', j + 2);
        if (end == std::string::npos) return "unterminated attribute";
        const std::string value = s.substr(j + 2, end - j - 2);
        if (value.find('<') != std::string::npos) return "'<' in an attribute";
        j = end + 1;
      }
      const bool selfClosing = s[j] == '/';
      if (stack.empty()) ++roots;
      if (!selfClosing) stack.push_back(name);
      i = j + (selfClosing ? 2 : 1);
    } else if (s[i] == '&') {
      const size_t semi = s.find(';', i);
      const std::string ent = semi == std::string::npos ? "" : s.substr(i, semi - i + 1);
      if (ent != "&amp;" && ent != "&lt;" && ent != "&gt;" && ent != "&quot;" && ent != "&apos;")
        return fmt::format("bad entity at {}", i);
      i = semi + 1;
    } else {
      if (stack.empty() && !std::isspace(static_cast<unsigned char>(s[i])))
        return fmt::format("text outside the root at {}", i);
      ++i;
    }
  }
  if (!stack.empty()) return fmt::format("<{}> not closed", stack.back());
  if (roots != 1) return fmt::format("{} root elements", roots);
  return "";
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

TEST(SvgChart, TheCheckerCatchesBadXml) {
  EXPECT_EQ(xmlProblem("<svg><g></g></svg>"), "");
  EXPECT_NE(xmlProblem("<svg><g></svg>"), "");
  EXPECT_NE(xmlProblem("<svg a=b></svg>"), "");
  EXPECT_NE(xmlProblem("<svg>a & b</svg>"), "");
  EXPECT_NE(xmlProblem("<svg></svg><svg></svg>"), "");
}

TEST(SvgChart, BspBreakdownHasOneBarPerTile) {
  std::vector<SvgChart::TileTimes> tiles;
  for (uint64_t t = 0; t < 16; ++t)
    tiles.push_back({1000 + 10 * t, 200 - 10 * t, 300, t == 0 ? 150u : 0u});
  const std::string svg = SvgChart::bspBreakdown(tiles, "BSP breakdown <16 tiles> & more");
  EXPECT_EQ(xmlProblem(svg), "");
  EXPECT_EQ(count(svg, "<g class=\"tile\""), 16u);
  EXPECT_EQ(count(svg, "<rect class=\"compute\""), 16u);
  EXPECT_EQ(count(svg, "<rect class=\"sync\""), 16u);
  EXPECT_EQ(count(svg, "<rect class=\"exchange\""), 16u);
  EXPECT_EQ(count(svg, "<rect class=\"hostio\""), 1u);  // zero-length segments are left out
  EXPECT_NE(svg.find("&lt;16 tiles&gt; &amp; more"), std::string::npos);
  for (const char* label : {"compute", "sync wait", "exchange", "host I/O"})
    EXPECT_NE(svg.find(fmt::format(">{} ", label)), std::string::npos) << label;
  // The legend's shares: compute is (16 * 1000 + 10 * 120) / all.
  const double all = 16 * 1000 + 1200 + 16 * 200 - 1200 + 16 * 300 + 150;
  EXPECT_NE(svg.find(fmt::format("compute {:.1f}%", 100.0 * (16 * 1000 + 1200) / all)),
            std::string::npos);
  // 64 tiles still fit (thinner bars, fewer labels), and no tiles is still a valid picture.
  tiles.resize(64, {500, 100, 100, 10});
  const std::string big = SvgChart::bspBreakdown(tiles, "64");
  EXPECT_EQ(xmlProblem(big), "");
  EXPECT_EQ(count(big, "<g class=\"tile\""), 64u);
  EXPECT_EQ(xmlProblem(SvgChart::bspBreakdown({}, "none")), "");
  EXPECT_EQ(count(svg, "inter-chip"),
            0u);  // no replicas: no inter-chip phase, not even in the legend
  // Replicas: every tile waits for the inter-chip all-reduce, its own segment and legend entry.
  std::vector<SvgChart::TileTimes> rep(4, {1000, 100, 100, 0, 200});
  const std::string r = SvgChart::bspBreakdown(rep, "replicas");
  EXPECT_EQ(xmlProblem(r), "");
  EXPECT_EQ(count(r, "<rect class=\"interchip\""), 4u);
  EXPECT_NE(r.find(fmt::format("inter-chip {:.1f}%", 100.0 * 200 / 1400)), std::string::npos);
}

TEST(SvgChart, TrainingCurvesHaveEveryPoint) {
  std::vector<SvgChart::Point> loss;
  for (int s = 1; s <= 300; ++s)
    loss.push_back({static_cast<double>(s), 2.3 * std::exp(-s / 100.0) + 0.3});
  std::vector<SvgChart::Point> acc{{100, 0.71}, {200, 0.80}, {300, 0.853}};
  const std::string svg = SvgChart::trainingCurves(loss, acc, "training");
  EXPECT_EQ(xmlProblem(svg), "");
  ASSERT_EQ(count(svg, "<polyline class=\"loss\""), 1u);
  const size_t p = svg.find("<polyline class=\"loss\"");
  const size_t a = svg.find("points=\"", p) + 8;
  const std::string points = svg.substr(a, svg.find('"', a) - a);
  EXPECT_EQ(count(points, ","), 300u);
  EXPECT_EQ(count(svg, "<circle class=\"accuracy\""), 3u);
  EXPECT_NE(svg.find("85.30%"), std::string::npos);
  EXPECT_NE(svg.find("test accuracy (%)"), std::string::npos);
  EXPECT_NE(svg.find("training loss"), std::string::npos);
  // A NaN loss breaks the line in two.
  loss[150].y = std::nan("");
  const std::string broken = SvgChart::trainingCurves(loss, acc, "t");
  EXPECT_EQ(count(broken, "<polyline class=\"loss\""), 2u);
  EXPECT_EQ(xmlProblem(SvgChart::trainingCurves({}, {}, "empty")), "");
}

TEST(SvgChart, PythonsXmlParserAcceptsTheFiles) {
  testing::TempDir dir;
  std::vector<SvgChart::TileTimes> tiles(4, {100, 20, 30, 5});
  const std::vector<SvgChart::Point> curve{{1, 2.0}, {2, 1.5}};
  const std::vector<SvgChart::Point> accuracy{{2, 0.5}};
  SvgChart::write(dir.file("bsp.svg"), SvgChart::bspBreakdown(tiles, "bsp"));
  SvgChart::write(dir.file("curves.svg"), SvgChart::trainingCurves(curve, accuracy, "c"));
  const std::string cmd = fmt::format(
      "'{}' -c \"import sys, xml.dom.minidom as m; [m.parse(f) for f in sys.argv[1:]]\" '{}' '{}'",
      TESSERA_PYTHON, dir.file("bsp.svg"), dir.file("curves.svg"));
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
}

}  // namespace
}  // namespace tessera::bench

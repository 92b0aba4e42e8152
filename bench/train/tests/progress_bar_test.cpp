#include "progress_bar.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace tessera::bench {
namespace {

std::string contents(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string s;
  for (int c; (c = std::fgetc(f)) != EOF;) s += static_cast<char>(c);
  return s;
}

TEST(ProgressBar, FormatShowsEveryField) {
  const std::string s = ProgressBar::format(150, 1000, 2, 3, 0.51234f, 12345.6, 125, 0);
  EXPECT_EQ(s, "step 150/1000  epoch 2/3  loss 0.5123  12346 samples/s  ETA 2:05");
  const std::string bar = ProgressBar::format(500, 1000, 1, 1, 1.0f, 1.0, 3725, 10);
  EXPECT_EQ(bar.substr(0, 13), "[#####.....] ");
  EXPECT_NE(bar.find("ETA 1:02:05"), std::string::npos);
  EXPECT_NE(ProgressBar::format(0, 10, 1, 1, 0, 0, std::nan(""), 0).find("ETA --:--"),
            std::string::npos);
}

TEST(ProgressBar, PlainModePrintsPeriodicLines) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  double now = 0;
  ProgressBar bar(f, 100, 2, 32);
  EXPECT_FALSE(isatty(fileno(f)));
  bar.setClock([&] { return now; });
  bar.setIntervals(10, 0.1);
  for (uint64_t s = 1; s <= 100; ++s) {
    now = static_cast<double>(s);  // one step per second: 32 samples/s
    bar.update(s, s <= 50 ? 1 : 2, 1.0f / static_cast<float>(s));
  }
  bar.finish();
  const std::string out = contents(f);
  std::fclose(f);
  // Printed at steps 1, 11, 21, ..., 91 and at the last step: 11 lines, no carriage returns.
  EXPECT_EQ(bar.printed(), 11u);
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 11);
  EXPECT_EQ(out.find('\r'), std::string::npos);
  EXPECT_NE(out.find("step 11/100  epoch 1/2"), std::string::npos) << out;
  EXPECT_NE(out.find("step 100/100  epoch 2/2  loss 0.0100  32 samples/s  ETA 0:00"),
            std::string::npos)
      << out;
  // At step 11 (11 s, 11 of 100 steps done) the ETA is 89 s.
  EXPECT_NE(out.find("step 11/100  epoch 1/2  loss 0.0909  32 samples/s  ETA 1:29"),
            std::string::npos)
      << out;
}

TEST(ProgressBar, TerminalModeRedrawsOneLine) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  double now = 0;
  ProgressBar bar(f, 10, 1, 8);
  bar.setInteractive(true);
  bar.setClock([&] { return now; });
  bar.setIntervals(10, 0.125);
  for (uint64_t s = 1; s <= 9; ++s) {
    now += 0.0625;  // two updates per redraw interval (binary fractions: exact)
    bar.update(s, 1, 0.5f);
  }
  EXPECT_EQ(bar.printed(), 5u);  // steps 1, 3, 5, 7, 9
  bar.update(9, 1, 0.25f);       // not yet printed: finish() prints it
  bar.finish();
  const std::string out = contents(f);
  std::fclose(f);
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1);
  EXPECT_EQ(out.back(), '\n');
  EXPECT_EQ(static_cast<uint64_t>(std::count(out.begin(), out.end(), '\r')), bar.printed());
  EXPECT_EQ(bar.printed(), 6u);
  EXPECT_NE(out.find("loss 0.2500"), std::string::npos);
  EXPECT_NE(out.find("\x1b[K"), std::string::npos);
  EXPECT_NE(out.find("step 9/10"), std::string::npos);
}

}  // namespace
}  // namespace tessera::bench

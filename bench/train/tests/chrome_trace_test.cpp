#include "chrome_trace.hpp"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "tessera/error.hpp"
#include "test_util.hpp"

namespace tessera::bench {
namespace {

using Json = nlohmann::json;

TEST(ChromeTrace, WritesValidTraceEventJson) {
  testing::TempDir dir;
  ChromeTrace trace(2, 100e6);  // 100 MHz: 1 cycle = 0.01 us
  using P = ChromeTrace::Phase;
  trace.addInterval(0, P::Compute, 0, 1000);
  trace.addInterval(0, P::SyncWait, 1000, 50);
  trace.addInterval(1, P::Compute, 0, 1040);
  trace.addInterval(1, P::SyncWait, 1040, 10);
  trace.addInterval(0, P::Exchange, 1050, 200, "exchange fwd0/mm");
  trace.addInterval(1, P::Exchange, 1050, 200);
  trace.addInterval(0, P::HostIo, 1250, 300);
  trace.addHostInterval("prefetch images", 900, 400);
  trace.addCounter("loss", 1550, {{"loss", 2.25}});
  EXPECT_EQ(trace.eventCount(), 9u);
  EXPECT_THROW(trace.addInterval(2, P::Compute, 0, 1), Error);
  trace.write(dir.file("trace.json"));

  const Json doc = Json::parse(testing::readText(dir.file("trace.json")));
  ASSERT_TRUE(doc.contains("traceEvents"));
  const Json& ev = doc["traceEvents"];
  ASSERT_TRUE(ev.is_array());
  std::map<std::string, int> phases;
  std::map<int, std::string> threadNames;
  std::string processName;
  for (const Json& e : ev) {
    ASSERT_TRUE(e.contains("ph") && e.contains("pid") && e.contains("name")) << e.dump();
    const std::string ph = e["ph"];
    ++phases[ph];
    if (ph == "M" && e["name"] == "thread_name") threadNames[e["tid"]] = e["args"]["name"];
    if (ph == "M" && e["name"] == "process_name") processName = e["args"]["name"];
    if (ph == "X") {
      ASSERT_TRUE(e["ts"].is_number() && e["dur"].is_number() && e.contains("tid")) << e.dump();
      EXPECT_EQ(e["dur"].get<double>(), e["args"]["cycles"].get<double>() / 100.0) << e.dump();
    }
  }
  EXPECT_EQ(phases["X"], 8);
  EXPECT_EQ(phases["C"], 1);
  EXPECT_EQ(threadNames.at(0), "tile 0");
  EXPECT_EQ(threadNames.at(1), "tile 1");
  EXPECT_EQ(threadNames.at(2), "host");
  EXPECT_NE(processName.find("2 tiles"), std::string::npos);
  // The exchange of tile 0: named, in the exchange category, at 10.5 us for 2 us.
  bool found = false;
  for (const Json& e : ev) {
    if (e["ph"] == "X" && e["name"] == "exchange fwd0/mm") {
      found = true;
      EXPECT_EQ(e["cat"], "exchange");
      EXPECT_EQ(e["tid"], 0);
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 10.5);
      EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 2.0);
    }
    if (e["ph"] == "C") {
      EXPECT_EQ(e["name"], "loss");
      EXPECT_DOUBLE_EQ(e["args"]["loss"].get<double>(), 2.25);
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 15.5);
    }
    if (e["ph"] == "X" && e["name"] == "sync wait" && e["tid"] == 1) {
      EXPECT_EQ(e["cat"], "sync wait");
    }
    if (e["ph"] == "X" && e["name"] == "host I/O") {
      EXPECT_EQ(e["tid"], 0);
    }
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(doc["otherData"]["dropped_events"], 0);
}

TEST(ChromeTrace, EventsBeyondTheLimitAreCountedNotKept) {
  ChromeTrace trace(1, 1e9, 3);
  for (int i = 0; i < 5; ++i) trace.addInterval(0, ChromeTrace::Phase::Compute, i * 10u, 10);
  EXPECT_EQ(trace.eventCount(), 3u);
  EXPECT_EQ(trace.dropped(), 2u);
  const Json doc = Json::parse(trace.json());
  EXPECT_EQ(doc["otherData"]["dropped_events"], 2);
}

TEST(ChromeTrace, BadArgumentsAreErrors) {
  EXPECT_THROW(ChromeTrace(0, 1e9), Error);
  EXPECT_THROW(ChromeTrace(4, 0), Error);
  ChromeTrace t(1, 1e9);
  testing::TempDir dir;
  EXPECT_THROW(t.write(dir.file("no/dir/t.json")), Error);
}

}  // namespace
}  // namespace tessera::bench

#include "mlperf_logger.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "tessera/error.hpp"
#include "test_util.hpp"

namespace tessera::bench {
namespace {

using testing::TempDir;
using Json = nlohmann::ordered_json;

std::vector<Json> parseLog(const std::string& path) {
  std::istringstream in(testing::readText(path));
  std::vector<Json> out;
  const std::string prefix = ":::MLLOG ";
  for (std::string line; std::getline(in, line);) {
    EXPECT_EQ(line.rfind(prefix, 0), 0u) << line;
    out.push_back(Json::parse(line.substr(prefix.size())));
  }
  return out;
}

TEST(MlperfLogger, LinesFollowTheMllogConvention) {
  TempDir dir;
  const std::string path = dir.file("mllog.txt");
  {
    MlperfLogger log(path);
    int64_t now = 1000;
    log.setClock([&] { return now++; });
    log.submission("fashion_mnist_mlp", "tessera", "open", "research", "tessera-model-16");
    log.cacheClear();
    log.initStart();
    log.globalBatchSize(32);
    log.optBaseLearningRate(0.05);
    log.point("seed", 7);
    log.initStop();
    log.runStart();
    log.epochStart(1);
    log.epochStop(1);
    log.evalStart(1);
    log.evalStop(1);
    log.evalAccuracy(0.8512, 1);
    log.runStop("success");
    EXPECT_EQ(log.lines(), 18u);
  }
  const std::vector<Json> lines = parseLog(path);
  ASSERT_EQ(lines.size(), 18u);
  const std::vector<std::string> keys{"submission_benchmark",
                                      "submission_org",
                                      "submission_division",
                                      "submission_status",
                                      "submission_platform",
                                      "cache_clear",
                                      "init_start",
                                      "global_batch_size",
                                      "opt_base_learning_rate",
                                      "seed",
                                      "init_stop",
                                      "run_start",
                                      "epoch_start",
                                      "epoch_stop",
                                      "eval_start",
                                      "eval_stop",
                                      "eval_accuracy",
                                      "run_stop"};
  const std::vector<std::string> fieldOrder{"namespace", "time_ms", "event_type",
                                            "key",       "value",   "metadata"};
  for (size_t i = 0; i < lines.size(); ++i) {
    const Json& j = lines[i];
    std::vector<std::string> fields;
    for (const auto& [k, v] : j.items()) fields.push_back(k);
    EXPECT_EQ(fields, fieldOrder) << j.dump();
    EXPECT_EQ(j["key"], keys[i]);
    EXPECT_EQ(j["namespace"], "");
    EXPECT_EQ(j["time_ms"], 1000 + static_cast<int64_t>(i));
    EXPECT_EQ(j["metadata"]["file"], "mlperf_logger_test.cpp") << j.dump();
    EXPECT_GT(j["metadata"]["lineno"].get<int>(), 20) << j.dump();
  }
  auto type = [&](size_t i) { return lines[i]["event_type"].get<std::string>(); };
  EXPECT_EQ(type(0), "POINT_IN_TIME");
  EXPECT_EQ(lines[0]["value"], "fashion_mnist_mlp");
  EXPECT_EQ(lines[4]["value"], "tessera-model-16");
  EXPECT_EQ(lines[5]["value"], true);
  EXPECT_EQ(type(6), "INTERVAL_START");
  EXPECT_TRUE(lines[6]["value"].is_null());
  EXPECT_EQ(lines[7]["value"], 32);
  EXPECT_DOUBLE_EQ(lines[8]["value"].get<double>(), 0.05);
  EXPECT_EQ(type(10), "INTERVAL_END");
  EXPECT_EQ(lines[12]["metadata"]["epoch_num"], 1);
  EXPECT_EQ(type(13), "INTERVAL_END");
  EXPECT_DOUBLE_EQ(lines[16]["value"].get<double>(), 0.8512);
  EXPECT_EQ(lines[16]["metadata"]["epoch_num"], 1);
  EXPECT_EQ(type(17), "INTERVAL_END");
  EXPECT_EQ(lines[17]["metadata"]["status"], "success");
  // The submission lines come from the caller's line, not the logger's.
  EXPECT_EQ(lines[0]["metadata"]["lineno"], lines[4]["metadata"]["lineno"]);
  EXPECT_NE(lines[0]["metadata"]["lineno"], lines[5]["metadata"]["lineno"]);
}

TEST(MlperfLogger, FormatMatchesTheReferenceLayout) {
  const std::string line =
      MlperfLogger::formatLine("", 1593454484960, MlperfLogger::EventType::PointInTime,
                               "submission_org", "tessera", Json{{"file", "a.py"}, {"lineno", 3}});
  EXPECT_EQ(line,
            ":::MLLOG {\"namespace\": \"\", \"time_ms\": 1593454484960, \"event_type\": "
            "\"POINT_IN_TIME\", "
            "\"key\": \"submission_org\", \"value\": \"tessera\", \"metadata\": "
            "{\"file\":\"a.py\",\"lineno\":3}}");
}

TEST(MlperfLogger, CallerMetadataIsKeptAndBlocksAreLogged) {
  TempDir dir;
  const std::string path = dir.file("log");
  {
    MlperfLogger log(path, "worker0");
    log.point("train_samples", 60000,
              Json{{"file", "custom.cpp"}, {"lineno", 1}, {"samples_count", 5}});
    log.blockStart(1, 2);
    log.blockStop(1);
    log.runStop("aborted");
    EXPECT_THROW(log.point("x", 1, Json::array()), Error);
  }
  const std::vector<Json> lines = parseLog(path);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0]["namespace"], "worker0");
  EXPECT_EQ(lines[0]["metadata"]["file"], "custom.cpp");
  EXPECT_EQ(lines[0]["metadata"]["samples_count"], 5);
  EXPECT_EQ(lines[1]["key"], "block_start");
  EXPECT_EQ(lines[1]["metadata"]["first_epoch_num"], 1);
  EXPECT_EQ(lines[1]["metadata"]["epoch_count"], 2);
  EXPECT_EQ(lines[2]["key"], "block_stop");
  EXPECT_EQ(lines[3]["metadata"]["status"], "aborted");
  // The real clock gives milliseconds since the Unix epoch (after 2020).
  EXPECT_GT(lines[1]["time_ms"].get<int64_t>(), 1577836800000);
}

TEST(MlperfLogger, UnwritablePathIsAnError) {
  TempDir dir;
  try {
    MlperfLogger log(dir.file("no/such/dir/log"));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no/such/dir/log"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tessera::bench

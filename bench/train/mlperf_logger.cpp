#include "mlperf_logger.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "tessera/error.hpp"

namespace tessera::bench {

MlperfLogger::MlperfLogger(const std::string& path, std::string nameSpace)
    : path_(path), nameSpace_(std::move(nameSpace)), out_(path, std::ios::trunc) {
  if (!out_) throw Error(fmt::format("mllog: {}: cannot create file", path));
  clock_ = [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
}

void MlperfLogger::continueFrom(const std::string& text) {
  out_.close();
  out_.open(path_, std::ios::trunc);
  out_ << text;
  out_.flush();
  if (!out_) throw Error(fmt::format("mllog: {}: write failed", path_));
  lines_ = static_cast<uint64_t>(std::count(text.begin(), text.end(), '\n'));
}

const char* MlperfLogger::typeName(EventType type) {
  switch (type) {
    case EventType::PointInTime:
      return "POINT_IN_TIME";
    case EventType::IntervalStart:
      return "INTERVAL_START";
    case EventType::IntervalEnd:
      return "INTERVAL_END";
  }
  return "POINT_IN_TIME";
}

std::string MlperfLogger::formatLine(const std::string& nameSpace, int64_t timeMs, EventType type,
                                     const std::string& key, const Json& value,
                                     const Json& metadata) {
  // Field order and ", "/": " separators as mllog's json.dumps of its dict.
  return fmt::format(
      ":::MLLOG {{\"namespace\": {}, \"time_ms\": {}, \"event_type\": \"{}\", \"key\": {}, "
      "\"value\": {}, \"metadata\": {}}}",
      Json(nameSpace).dump(), timeMs, typeName(type), Json(key).dump(), value.dump(),
      metadata.dump());
}

void MlperfLogger::event(EventType type, const std::string& key, const Json& value, Json metadata,
                         Where where) {
  if (!metadata.is_object())
    throw Error(fmt::format("mllog: metadata of '{}' must be an object", key));
  if (!metadata.contains("file")) {
    std::string file = where.file_name();
    if (const size_t slash = file.find_last_of('/'); slash != std::string::npos)
      file = file.substr(slash + 1);
    metadata["file"] = file;
  }
  if (!metadata.contains("lineno")) metadata["lineno"] = where.line();
  out_ << formatLine(nameSpace_, clock_(), type, key, value, metadata) << '\n';
  out_.flush();
  if (!out_) throw Error(fmt::format("mllog: {}: write failed", path_));
  ++lines_;
}

void MlperfLogger::point(const std::string& key, const Json& value, Json metadata, Where where) {
  event(EventType::PointInTime, key, value, std::move(metadata), where);
}
void MlperfLogger::start(const std::string& key, const Json& value, Json metadata, Where where) {
  event(EventType::IntervalStart, key, value, std::move(metadata), where);
}
void MlperfLogger::end(const std::string& key, const Json& value, Json metadata, Where where) {
  event(EventType::IntervalEnd, key, value, std::move(metadata), where);
}

void MlperfLogger::submission(const std::string& benchmark, const std::string& org,
                              const std::string& division, const std::string& status,
                              const std::string& platform, Where where) {
  point("submission_benchmark", benchmark, Json::object(), where);
  point("submission_org", org, Json::object(), where);
  point("submission_division", division, Json::object(), where);
  point("submission_status", status, Json::object(), where);
  point("submission_platform", platform, Json::object(), where);
}
void MlperfLogger::cacheClear(Where where) {
  point("cache_clear", true, Json::object(), where);
}
void MlperfLogger::initStart(Where where) {
  start("init_start", nullptr, Json::object(), where);
}
void MlperfLogger::initStop(Where where) {
  end("init_stop", nullptr, Json::object(), where);
}
void MlperfLogger::runStart(Where where) {
  start("run_start", nullptr, Json::object(), where);
}
void MlperfLogger::runStop(const std::string& status, Where where) {
  end("run_stop", nullptr, Json{{"status", status}}, where);
}
void MlperfLogger::epochStart(uint32_t epochNum, Where where) {
  start("epoch_start", nullptr, Json{{"epoch_num", epochNum}}, where);
}
void MlperfLogger::epochStop(uint32_t epochNum, Where where) {
  end("epoch_stop", nullptr, Json{{"epoch_num", epochNum}}, where);
}
void MlperfLogger::blockStart(uint32_t firstEpochNum, uint32_t epochCount, Where where) {
  start("block_start", nullptr,
        Json{{"first_epoch_num", firstEpochNum}, {"epoch_count", epochCount}}, where);
}
void MlperfLogger::blockStop(uint32_t firstEpochNum, Where where) {
  end("block_stop", nullptr, Json{{"first_epoch_num", firstEpochNum}}, where);
}
void MlperfLogger::evalStart(uint32_t epochNum, Where where) {
  start("eval_start", nullptr, Json{{"epoch_num", epochNum}}, where);
}
void MlperfLogger::evalStop(uint32_t epochNum, Where where) {
  end("eval_stop", nullptr, Json{{"epoch_num", epochNum}}, where);
}
void MlperfLogger::evalAccuracy(double accuracy, uint32_t epochNum, Where where) {
  point("eval_accuracy", accuracy, Json{{"epoch_num", epochNum}}, where);
}
void MlperfLogger::globalBatchSize(uint64_t batch, Where where) {
  point("global_batch_size", batch, Json::object(), where);
}
void MlperfLogger::optBaseLearningRate(double lr, Where where) {
  point("opt_base_learning_rate", lr, Json::object(), where);
}

}  // namespace tessera::bench

// MLPerf-style result logging: one ":::MLLOG {json}" line per event, in the convention of the
// mlcommons/logging package (keys from its mllog constants), written to a file.
#pragma once

#include <cstdint>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <source_location>
#include <string>

namespace tessera::bench {

/// Writes :::MLLOG lines; every line is flushed at once so a crashed run keeps its log.
class MlperfLogger {
 public:
  /// The three MLPerf event types.
  enum class EventType { PointInTime, IntervalStart, IntervalEnd };
  /// Milliseconds since the Unix epoch (replaceable for tests).
  using Clock = std::function<int64_t()>;
  using Json = nlohmann::ordered_json;
  using Where = std::source_location;

  /// Create (truncate) the log file; throws tessera::Error naming it if it cannot be opened.
  explicit MlperfLogger(const std::string& path, std::string nameSpace = "");

  /// Replace the clock (default: std::chrono::system_clock in ms).
  void setClock(Clock clock) { clock_ = std::move(clock); }
  /// The path of the log file.
  const std::string& path() const { return path_; }
  /// Lines written so far.
  uint64_t lines() const { return lines_; }
  /// Replace the file's contents with text (whole lines of an earlier log, e.g. a resumed run's
  /// from its checkpoint) and continue after them; throws tessera::Error naming the file.
  void continueFrom(const std::string& text);

  /// Log one event; metadata gets "file" (base name) and "lineno" of the caller unless present.
  void event(EventType type, const std::string& key, const Json& value = nullptr,
             Json metadata = Json::object(), Where where = Where::current());
  /// A POINT_IN_TIME event.
  void point(const std::string& key, const Json& value, Json metadata = Json::object(),
             Where where = Where::current());
  /// An INTERVAL_START event.
  void start(const std::string& key, const Json& value = nullptr, Json metadata = Json::object(),
             Where where = Where::current());
  /// An INTERVAL_END event.
  void end(const std::string& key, const Json& value = nullptr, Json metadata = Json::object(),
           Where where = Where::current());

  /// submission_benchmark, submission_org, submission_division, submission_status,
  /// submission_platform.
  void submission(const std::string& benchmark, const std::string& org, const std::string& division,
                  const std::string& status, const std::string& platform,
                  Where where = Where::current());
  /// cache_clear (value true).
  void cacheClear(Where where = Where::current());
  /// init_start.
  void initStart(Where where = Where::current());
  /// init_stop.
  void initStop(Where where = Where::current());
  /// run_start.
  void runStart(Where where = Where::current());
  /// run_stop with metadata.status ("success" or "aborted").
  void runStop(const std::string& status, Where where = Where::current());
  /// epoch_start with metadata.epoch_num (1-based, as MLPerf reference code counts).
  void epochStart(uint32_t epochNum, Where where = Where::current());
  /// epoch_stop with metadata.epoch_num.
  void epochStop(uint32_t epochNum, Where where = Where::current());
  /// block_start with metadata.first_epoch_num and epoch_count.
  void blockStart(uint32_t firstEpochNum, uint32_t epochCount, Where where = Where::current());
  /// block_stop with metadata.first_epoch_num.
  void blockStop(uint32_t firstEpochNum, Where where = Where::current());
  /// eval_start with metadata.epoch_num.
  void evalStart(uint32_t epochNum, Where where = Where::current());
  /// eval_stop with metadata.epoch_num.
  void evalStop(uint32_t epochNum, Where where = Where::current());
  /// eval_accuracy (a fraction 0..1) with metadata.epoch_num.
  void evalAccuracy(double accuracy, uint32_t epochNum, Where where = Where::current());
  /// global_batch_size.
  void globalBatchSize(uint64_t batch, Where where = Where::current());
  /// opt_base_learning_rate.
  void optBaseLearningRate(double lr, Where where = Where::current());

  /// The text of one line (without the newline) for the given fields.
  static std::string formatLine(const std::string& nameSpace, int64_t timeMs, EventType type,
                                const std::string& key, const Json& value, const Json& metadata);
  /// "POINT_IN_TIME", "INTERVAL_START" or "INTERVAL_END".
  static const char* typeName(EventType type);

 private:
  std::string path_;
  std::string nameSpace_;
  std::ofstream out_;
  Clock clock_;
  uint64_t lines_ = 0;
};

}  // namespace tessera::bench

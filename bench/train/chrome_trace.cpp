#include "chrome_trace.hpp"

#include <fmt/format.h>

#include <bit>
#include <nlohmann/json.hpp>

#include "file_io.hpp"
#include "tessera/error.hpp"

namespace tessera::bench {

ChromeTrace::ChromeTrace(uint32_t tiles, double clockHz, size_t maxEvents)
    : tiles_(tiles), clockHz_(clockHz), maxEvents_(maxEvents) {
  if (tiles == 0) throw Error("trace: tile count must be positive");
  if (!(clockHz > 0)) throw Error("trace: the nominal clock must be positive");
}

const char* ChromeTrace::phaseName(Phase phase) {
  switch (phase) {
    case Phase::Compute:
      return "compute";
    case Phase::SyncWait:
      return "sync wait";
    case Phase::Exchange:
      return "exchange";
    case Phase::HostIo:
      return "host I/O";
  }
  return "compute";
}

bool ChromeTrace::admit() {
  if (events_.size() < maxEvents_) return true;
  ++dropped_;
  return false;
}

void ChromeTrace::addInterval(uint32_t tile, Phase phase, uint64_t startCycle, uint64_t cycles,
                              const std::string& name, int64_t superstep) {
  if (tile >= tiles_)
    throw Error(fmt::format("trace: tile {} out of range (the chip has {} tiles)", tile, tiles_));
  if (!admit()) return;
  events_.push_back({'X',
                     tile,
                     name.empty() ? phaseName(phase) : name,
                     phaseName(phase),
                     startCycle,
                     cycles,
                     {},
                     superstep});
}

void ChromeTrace::addHostInterval(const std::string& name, uint64_t startCycle, uint64_t cycles,
                                  int64_t superstep) {
  if (!admit()) return;
  events_.push_back({'X', tiles_, name, "host", startCycle, cycles, {}, superstep});
}

void ChromeTrace::addSyncMarker(uint32_t syncId, uint64_t cycle, int64_t superstep) {
  if (!admit()) return;
  events_.push_back({'X', tiles_, fmt::format("sync {}", syncId), "sync", cycle, 0, {}, superstep});
}

void ChromeTrace::addCounter(const std::string& name, uint64_t cycle,
                             const std::map<std::string, double>& values) {
  if (!admit()) return;
  events_.push_back({'C', 0, name, "counter", cycle, 0, values, -1});
}

std::string ChromeTrace::json() const {
  using Json = nlohmann::ordered_json;
  Json events = Json::array();
  const int pid = 1;
  events.push_back(
      {{"name", "process_name"},
       {"ph", "M"},
       {"pid", pid},
       {"tid", 0},
       {"args",
        {{"name", fmt::format("tessera chip ({} tiles, {:g} MHz)", tiles_, clockHz_ / 1e6)}}}});
  for (uint32_t t = 0; t <= tiles_; ++t) {
    const std::string name = t < tiles_ ? fmt::format("tile {}", t) : std::string("host");
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", pid},
                      {"tid", t},
                      {"args", {{"name", name}}}});
    events.push_back({{"name", "thread_sort_index"},
                      {"ph", "M"},
                      {"pid", pid},
                      {"tid", t},
                      {"args", {{"sort_index", t}}}});
  }
  for (const Event& e : events_) {
    Json j = {{"name", e.name},        {"cat", e.cat}, {"ph", std::string(1, e.ph)},
              {"ts", micros(e.start)}, {"pid", pid},   {"tid", e.tid}};
    if (e.ph == 'X') {
      j["dur"] = micros(e.cycles);
      j["args"] = {{"start_cycle", e.start}, {"cycles", e.cycles}};
      if (e.superstep >= 0) j["args"]["superstep"] = e.superstep;
    } else {
      j["args"] = Json::object();
      for (const auto& [k, v] : e.values) j["args"][k] = v;
    }
    events.push_back(std::move(j));
  }
  Json doc = {
      {"traceEvents", std::move(events)},
      {"displayTimeUnit", "ns"},
      {"otherData", {{"clock_hz", clockHz_}, {"tiles", tiles_}, {"dropped_events", dropped_}}}};
  return doc.dump();
}

nlohmann::json ChromeTrace::state() const {
  // Counter values as their bits: a resumed trace must be the uninterrupted one's, byte for byte.
  nlohmann::json events = nlohmann::json::array();
  for (const Event& e : events_) {
    nlohmann::json values = nlohmann::json::object();
    for (const auto& [k, v] : e.values) values[k] = std::bit_cast<uint64_t>(v);
    events.push_back(
        {std::string(1, e.ph), e.tid, e.name, e.cat, e.start, e.cycles, values, e.superstep});
  }
  return {{"events", events}, {"dropped", dropped_}};
}

void ChromeTrace::restore(const nlohmann::json& state) {
  try {
    std::vector<Event> events;
    for (const nlohmann::json& j : state.at("events")) {
      Event e{j.at(0).get<std::string>().at(0),
              j.at(1).get<uint32_t>(),
              j.at(2).get<std::string>(),
              j.at(3).get<std::string>(),
              j.at(4).get<uint64_t>(),
              j.at(5).get<uint64_t>(),
              {},
              j.at(7).get<int64_t>()};
      if (e.tid > tiles_) throw Error(fmt::format("tile {} out of range", e.tid));
      for (const auto& [k, v] : j.at(6).items())
        e.values[k] = std::bit_cast<double>(v.get<uint64_t>());
      events.push_back(std::move(e));
    }
    if (events.size() > maxEvents_) throw Error("more events than the trace holds");
    events_ = std::move(events);
    dropped_ = state.at("dropped").get<uint64_t>();
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("trace: malformed saved state: {}", e.what()));
  } catch (const Error& e) {
    throw Error(fmt::format("trace: malformed saved state: {}", e.what()));
  }
}

void ChromeTrace::write(const std::string& path) const {
  writeFileChecked(path, json() + '\n');
}

}  // namespace tessera::bench

// One chip test suite for every backend: each scenario runs on every backend of the one list
// (backends.hpp: model, rtl, tcp:// to a tessera-server, the sharded model) through the public
// tessera::Device interface with the same expected values, so the implementations of the spec are
// held to one set of numbers; the tests a backend skips are listed, with the reason, in
// backends.cpp. Programs are hand-assembled;
// every expected value is worked out from docs/chip.md and docs/tile.md in the comments:
// the supervisor's k-th instruction (k = 0, 1, ...) issues at 6k while it is not blocked;
// SYNC issued at c arrives at a = c+3; release R = max(a) + SYNC_LATENCY (4); an exchange
// instruction of k words starting at t transfers at t+k .. t+k+n-1; a receive at r takes the bus
// of r - EXCHANGE_LATENCY (3); END at t gives X = t+1; the supervisor resumes in its first slot
// (a multiple of 6) >= R, or >= X with an exchange program. Results the program computes are
// stored to memory and read back by the host, which works on every backend at any stop.
// Backend-specific tests stay beside their backend (host/model/tests, host/rtl/tests).
//
// The tests are in the files beside this one, by topic (chip_sync_exchange_test.cpp,
// chip_errors_test.cpp, chip_scenarios_test.cpp, chip_counters_test.cpp, tile_suite_test.cpp);
// this file instantiates the two fixtures they share on the one backend list (backends.hpp).
#include "chip_suite.hpp"

#include <gtest/gtest.h>

#include <string>

#include "backends.hpp"

namespace tessera::chipsuite {
namespace {

INSTANTIATE_TEST_SUITE_P(Backends, ChipSuite, ::testing::ValuesIn(backends::names()),
                         [](const auto& info) { return info.param; });
INSTANTIATE_TEST_SUITE_P(Backends, TileSuite, ::testing::ValuesIn(backends::names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tessera::chipsuite

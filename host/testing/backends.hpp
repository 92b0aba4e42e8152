// The one list of backends that every backend-parameterised test suite runs on, how a test opens a
// device of one, and the one list of the tests a backend skips, each with its reason
// (docs/building.md, "Backends"). A suite takes its parameter values from names(), opens its
// devices with open(), and calls skipIfExcluded() in SetUp().
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "server_process.hpp"
#include "tessera/device.hpp"

namespace tessera::backends {

/// The backends in the order suites list them: "model" and "rtl" (in process), "tcp" (a
/// tessera-server child fronting the model, reached through tcp://) and "shard" (the model with
/// DeviceOptions::shard on this process's single MPI rank). The in-process ones are the build's
/// TESSERA_TEST_DEVICES (model;rtl unless configured otherwise).
std::vector<std::string> names();

/// A device of one backend and, for tcp, the server behind it, which lives as long as the device
/// (members are destroyed device first).
struct Opened {
  std::unique_ptr<link::ServerProcess> server;
  std::unique_ptr<Device> device;
};

/// Open a device of `backend` with options. tcp serves only the tile count (tessera-server's
/// --tiles): other options are refused with a tessera::Error naming the option.
Opened open(const std::string& backend, const DeviceOptions& options = {});

/// Why the running test does not run on backend ("" if it does): the exclusion list in
/// backends.cpp, matched on the fixture's and the test's names without their parameters.
std::string exclusionReason(const std::string& backend);

/// GTEST_SKIP the running test when backend excludes it; call as the first statement of a
/// fixture's SetUp() and return when IsSkipped() (GoogleTest's skip only leaves this function).
void skipIfExcluded(const std::string& backend);

}  // namespace tessera::backends

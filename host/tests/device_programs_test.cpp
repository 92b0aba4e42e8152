// Cross-device program suite: every device program built by sw/ runs on every backend
// ({model, rtl} minus the excluded ones) through tessera::openDevice and the ELF loader only.
// ISA tests must exit 0 with "<name> ok"; trap programs must stop with the (cause, pc, value,
// context) stored at their tess_expect symbol; examples and workloads print their expected line.
// A second suite checks that model and rtl agree on cycle counts and retired instructions.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "backends.hpp"
#include "lockstep.hpp"
#include "program_manifest.hpp"
#include "program_runner.hpp"
#include "tessera/chip_params.h"
#include "tessera/device.hpp"
#include "tessera/error.hpp"

namespace tessera::test {
namespace {

/// The single-tile programs of the sw/ manifest (multi-tile ones: chip_programs_test).
std::vector<Program> manifest() {
  std::vector<Program> programs;
  for (const Program& p : readManifest(TESSERA_SW_BIN_DIR)) {
    if (!p.multiTile()) programs.push_back(p);
  }
  return programs;
}

/// Backends the suite runs on: the one list (host/testing/backends.hpp).
std::vector<std::string> devices() {
  return backends::names();
}

/// (device, program) pairs excluded because the backend is too slow for them in the default run.
const std::set<std::pair<std::string, std::string>> kSlowExclusions = {};

std::string elfPath(const Program& p) {
  return std::string(TESSERA_SW_BIN_DIR) + "/" + p.name + ".elf";
}

/// The expected console and stop of the examples and workloads (what each program is written
/// to print; see its source).
struct Expectation {
  std::string console;
  bool trap = false;
  uint32_t cause = 0;
};

const std::map<std::string, Expectation>& namedExpectations() {
  static const std::map<std::string, Expectation> m = {
      {"hello", {"hello from tessera tile 0\n"}},
      {"workers", {"workers: sum 19900 from contexts 0x0000003e\n"}},
      {"wl_all_contexts", {"wl_all_contexts 8883\n"}},
      {"wl_divsqrt", {"wl_divsqrt ok\n"}},
      {"wl_amp_contexts", {"wl_amp_contexts ok\n"}},
      {"wl_trap_end", {"wl_trap_end\n", true, TESS_CAUSE_BREAKPOINT}},
  };
  return m;
}

constexpr uint64_t kMaxCycles = 50'000'000;

using Param = std::tuple<std::string, Program>;

class DeviceProgramTest : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override { backends::skipIfExcluded(std::get<0>(GetParam())); }
};

TEST_P(DeviceProgramTest, RunsAsExpected) {
  const auto& [spec, program] = GetParam();
  if (kSlowExclusions.count({spec, program.name})) GTEST_SKIP() << "excluded as slow on " << spec;
  // A backend of the suite that does not open is a failure, not a skip: the list names only
  // backends this build has.
  const backends::Opened opened = backends::open(spec);
  Device* const dev = opened.device.get();

  const ProgramRun run = runProgram(*dev, elfPath(program), kMaxCycles);
  const RunResult& r = run.result;
  const std::string console = dev->console(0);
  SCOPED_TRACE("console: " + console);
  ASSERT_NE(r.reason, StopReason::MaxCycles) << program.name << " did not stop";

  if (program.kind == "isa") {
    EXPECT_EQ(r.reason, StopReason::Halted) << "trap cause " << r.trap.cause << " pc 0x" << std::hex
                                            << r.trap.pc << " value 0x" << r.trap.value;
    EXPECT_EQ(r.exitCode, 0u) << "failed check number " << r.exitCode;
    EXPECT_EQ(console, program.name + " ok\n");
  } else if (program.kind == "trap") {
    ASSERT_TRUE(run.expect.has_value()) << "no tess_expect symbol in " << program.name;
    ASSERT_EQ(r.reason, StopReason::Trap) << "exit code " << r.exitCode;
    EXPECT_EQ(r.trap.cause, run.expect->cause);
    EXPECT_EQ(r.trap.pc, run.expect->pc)
        << std::hex << "0x" << r.trap.pc << " vs 0x" << run.expect->pc;
    EXPECT_EQ(r.trap.value, run.expect->value)
        << std::hex << "0x" << r.trap.value << " vs 0x" << run.expect->value;
    EXPECT_EQ(r.trap.context, run.expect->context);
    EXPECT_EQ(r.trap.tile, 0u);
    EXPECT_EQ(console, "T");
  } else {
    auto it = namedExpectations().find(program.name);
    if (it != namedExpectations().end()) {
      EXPECT_EQ(console, it->second.console);
      if (it->second.trap) {
        ASSERT_EQ(r.reason, StopReason::Trap);
        EXPECT_EQ(r.trap.cause, it->second.cause);
      } else {
        EXPECT_EQ(r.reason, StopReason::Halted);
        EXPECT_EQ(r.exitCode, 0u);
      }
    } else {
      // Programs whose output depends on arithmetic detail print their name first and self-check.
      EXPECT_EQ(r.reason, StopReason::Halted);
      EXPECT_EQ(r.exitCode, 0u);
      EXPECT_EQ(console.rfind(program.name + " ", 0), 0u);
    }
  }
  RecordProperty("cycles", std::to_string(r.cycles));
  // Every device reports the cycle count it stopped at through both the result and the counters.
  EXPECT_EQ(dev->stats(0).cycles, r.cycles);
}

std::string paramName(const ::testing::TestParamInfo<Param>& info) {
  return std::get<0>(info.param) + "_" + std::get<1>(info.param).name;
}

std::vector<Param> allParams() {
  std::vector<Param> out;
  for (const auto& d : devices()) {
    for (const auto& p : manifest()) out.emplace_back(d, p);
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Programs, DeviceProgramTest, ::testing::ValuesIn(allParams()), paramName);

/// Lockstep: model and rtl retire the same instructions with the same values on the same cycles
/// and end in the same state (stop reason, cycles, counters, trap, console).
class LockstepTest : public ::testing::TestWithParam<Program> {};

TEST_P(LockstepTest, ModelAndRtlAgree) {
  const Program& program = GetParam();
  if (kSlowExclusions.count({"rtl", program.name})) GTEST_SKIP() << "excluded as slow on rtl";
  const LockstepReport r = runLockstep(elfPath(program), "model", "rtl", kMaxCycles);
  EXPECT_TRUE(r.agree()) << r.describe();
  EXPECT_EQ(r.a.result.reason == StopReason::MaxCycles, false) << "cycle limit reached";
  for (unsigned c = 0; c < 6; ++c) {
    EXPECT_EQ(r.a.stats.contextInstructions[c], r.b.stats.contextInstructions[c])
        << "context " << c;
  }
}

INSTANTIATE_TEST_SUITE_P(Programs, LockstepTest, ::testing::ValuesIn(manifest()),
                         [](const ::testing::TestParamInfo<Program>& info) {
                           return info.param.name;
                         });

/// The model's translating engine against the RTL (docs/tile.md, "The translating engine"): the
/// end state (stop, cycles, counters, trap, console, memory) compared; records would make the
/// model interpret, so the lockstep runs in its fast mode.
class JitLockstepTest : public ::testing::TestWithParam<Program> {};

TEST_P(JitLockstepTest, ModelJitAndRtlAgree) {
  const Program& program = GetParam();
  if (!modelJitAvailable()) GTEST_SKIP() << "this build has no translating engine";
  if (kSlowExclusions.count({"rtl", program.name})) GTEST_SKIP() << "excluded as slow on rtl";
  LockstepOptions options;
  options.maxCycles = kMaxCycles;
  options.compareRetirements = false;
  options.engineA = ModelEngine::Jit;
  const LockstepReport r = runLockstep(elfPath(program), "model", "rtl", options);
  EXPECT_TRUE(r.agree()) << r.describe();
  EXPECT_NE(r.a.result.reason, StopReason::MaxCycles) << "cycle limit reached";
}

INSTANTIATE_TEST_SUITE_P(Programs, JitLockstepTest, ::testing::ValuesIn(manifest()),
                         [](const ::testing::TestParamInfo<Program>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace tessera::test

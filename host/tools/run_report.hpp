// What tessera-run prints (tessera_run.cpp): the consoles, the --stats report and the exit
// status. With --shard only rank 0 prints; every rank makes the same (collective) device calls.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "tessera/device.hpp"

namespace tessera::tools {

/// f on rank 0 of a sharded run (and in any unsharded run); /dev/null on the other ranks.
std::FILE* reportStream(std::FILE* f);
/// The consoles of tiles 0 .. tiles-1 on stdout, "[tile k] " before each line when prefixed;
/// before[t] (a restored checkpoint's console) comes before each tile's text, its control bytes and
/// bytes over 0x7e shown as \xNN (a file's bytes never reach the terminal raw).
void printConsoles(const Device& device, unsigned tiles, bool prefixed,
                   const std::vector<std::string>& before = {});
/// The --stats report of a run of `cycles` cycles that took `seconds` of host time.
void printStats(const Device& device, unsigned tiles, uint64_t cycles, double seconds);
/// The process exit status of a finished run (kExitCodes); reports a trap or the cycle limit.
int exitStatus(const Device& device, const RunResult& result, unsigned tiles);

}  // namespace tessera::tools

#include "sharded_model_device.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <limits>

#include "model_device.hpp"
#include "mpi_comm.hpp"
#include "mpi_fabric.hpp"
#include "tessera/chip_params.h"
#include "tessera/shard.hpp"

namespace tessera {

std::unique_ptr<Device> makeShardedModelDevice(const DeviceOptions& options) {
  const model::ChipGeometry g = model::chipGeometry(options);
  if (!g.hasExchange) {
    // The reduced board chip (preset ice40) has one tile: nothing to shard.
    throw Error(
        "model device: a chip without exchange engines (preset ice40) cannot be sharded "
        "(use the unsharded model)");
  }
  if (uint64_t{g.tiles} * TESS_EXCHANGE_LATENCY > std::numeric_limits<uint32_t>::max()) {
    throw Error(
        fmt::format("model device: {} tiles are too many to shard (bus words carry the "
                    "tile in 32 bits)",
                    g.tiles));
  }
  // Every rank must build the same chip: a rank with another would send bus words for tiles the
  // others do not have, or wait for ones that never come.
  shard::checkSameOnEveryRank(
      "chip",
      fmt::format(
          "{} tiles of {} bytes, {} contexts, FPU {}, M {}, matrix unit {}, {}-bit counters",
          g.tiles, g.tileMemBytes, g.contexts, g.hasFpu, g.hasMulDiv, g.hasMatrixUnit,
          g.counterBits));
  // The ranks are the parallelism: one thread per rank unless told otherwise.
  DeviceOptions o = options;
  if (o.threads == 0) o.threads = 1;
  return std::make_unique<model::ModelDevice>(o, std::make_unique<shard::MpiFabric>());
}

namespace shard {

int rank() {
  return mpi::worldRank();
}

int ranks() {
  return mpi::worldSize();
}

namespace {

// The world size an MPI launcher announced in the environment (Open MPI's, or PMI's), 0 if none.
int launchedWorldSize() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    if (const char* s = std::getenv(v)) return std::atoi(s);
  }
  return 0;
}

}  // namespace

bool launchedAsOneOfSeveralRanks() {
  return mpi::MpiSession::launchedByMpirun() && launchedWorldSize() > 1;
}

void checkSameOnEveryRank(const std::string& what, const std::string& text) {
  if (!mpi::MpiSession::launchedByMpirun()) return;
  mpi::MpiComm comm(mpi::MpiComm::Init::OnDemand, "tessera shard");
  comm.checkSame(what, text);
}

void abortJob(const std::string& who, const std::string& message, int code) {
  mpi::abortWorld(who, message, code);
}

ShardInfo shardInfo(const Device& device) {
  ShardInfo info;
  const auto* model = dynamic_cast<const model::ModelDevice*>(&device);
  if (!model) {
    info.endTile = device.info().tiles;
    return info;
  }
  const model::ChipFabric& fabric = model->fabric();
  info.rank = fabric.rank();
  info.ranks = fabric.ranks();
  info.firstTile = model->block().first;
  info.endTile = model->block().end;
  info.supersteps = model->supersteps();
  info.comm = fabric.stats();
  return info;
}

}  // namespace shard
}  // namespace tessera

// shard_speed: speed of one chip sharded across the ranks of an MPI job (docs/scale-out.md).
// Run it under mpirun: every rank opens the sharded model (or, with --plain, rank 0 alone runs the
// model in one process, the baseline), loads the ELF on every tile and runs it to the end (host
// syncs released at once), again and again for at least --seconds of wall time. Rank 0 prints one
// line of key=value figures: ranks, tiles, chip cycles per run, supersteps per run, wall seconds
// per run, tile-cycles/s (chip cycles x tiles / wall second), and per superstep the collectives
// each rank makes and the payload bytes all ranks send together.
// Usage: mpirun -np R shard_speed [--tiles N | --preset mk2] [--seconds S] [--plain] prog.elf
#include <fmt/format.h>
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <ctime>

#include "cli_numbers.hpp"
#include "program_loader.hpp"
#include "tessera/device.hpp"
#include "tessera/shard.hpp"

namespace {

struct Options {
  unsigned tiles = 0;
  std::string preset;
  double seconds = 2;
  bool plain = false;
  unsigned threads = 1;
  std::string elf;
};

double cpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

int bench(const Options& o) {
  tessera::DeviceOptions options;
  options.tiles = o.tiles;
  options.preset = o.preset;
  options.threads = o.threads;
  options.shard = !o.plain;
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (o.plain && rank != 0) return 0;  // the baseline is one process
  auto dev = tessera::openDevice("model", options);
  const unsigned tiles = dev->info().tiles;
  uint64_t runs = 0, cycles = 0, supersteps = 0;
  double seconds = 0, cpu = 0;
  const tessera::shard::ShardInfo before = tessera::shard::shardInfo(*dev);
  for (;;) {
    // Every rank must make the same number of runs: rank 0's clock decides.
    int more = seconds < o.seconds || runs == 0;
    if (!o.plain) MPI_Bcast(&more, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!more) break;
    tessera::loadProgramOnAllTiles(*dev, o.elf);
    if (!o.plain) MPI_Barrier(MPI_COMM_WORLD);
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = cpuSeconds();
    tessera::RunResult r = dev->run(~uint64_t{0});
    while (r.reason == tessera::StopReason::HostSync) {
      r = dev->run(~uint64_t{0});
    }
    cpu += cpuSeconds() - c0;
    if (!o.plain) MPI_Barrier(MPI_COMM_WORLD);
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (r.reason != tessera::StopReason::Halted) {
      throw tessera::Error(fmt::format("{}: the run stopped without halting: {}", o.elf,
                                       tessera::describeTrap(r.trap)));
    }
    cycles = r.cycles;
    supersteps = tessera::shard::shardInfo(*dev).supersteps;  // host syncs included
    ++runs;
  }
  uint64_t mine[2] = {0, 0}, sum[2] = {0, 0};
  uint64_t collectives = 0;
  const tessera::shard::ShardInfo after = tessera::shard::shardInfo(*dev);
  mine[0] = after.comm.bytesSent - before.comm.bytesSent;
  collectives = after.comm.collectives - before.comm.collectives;
  double cpuMax = cpu, cpuSum = cpu;
  if (!o.plain) {
    MPI_Reduce(mine, sum, 2, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&cpu, &cpuMax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&cpu, &cpuSum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  }
  if (rank != 0) return 0;
  const double perRun = seconds / double(runs);
  const double steps = double(std::max<uint64_t>(supersteps, 1)) * double(runs);
  fmt::print(
      "mode={} ranks={} tiles={} cycles={} supersteps={} runs={} wall_s_per_run={:.4f} "
      "tile_cycles_per_s={:.4g} chip_cycles_per_s={:.4g} cpu_s_per_run_max_rank={:.4f} "
      "cpu_s_per_run_all_ranks={:.4f} collectives_per_superstep={:.1f} "
      "bytes_per_superstep={:.0f}\n",
      o.plain ? "plain" : "shard", o.plain ? 1 : ranks, tiles, cycles, supersteps, runs, perRun,
      double(cycles) * tiles / perRun, double(cycles) / perRun, cpuMax / double(runs),
      cpuSum / double(runs), double(collectives) / steps, double(sum[0]) / steps);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Speed of one chip sharded across MPI ranks (run under mpirun)."};
  Options o;
  app.add_option("--tiles", o.tiles, "Tiles in the chip (default 4)");
  app.add_option("--preset", o.preset,
                 fmt::format("Chip preset: mk2 = {} tiles", TESS_MK2_NUM_TILES));
  app.add_option("--seconds", o.seconds, "Measure at least this much wall time (default 2)");
  app.add_option("--threads", o.threads, "Host threads per rank (default 1)");
  app.add_flag("--plain", o.plain, "Baseline: the unsharded model, on rank 0 only");
  app.add_option("prog.elf", o.elf, "ELF loaded on every tile")->required();
  MPI_Init(&argc, &argv);
  int status = 0;
  try {
    tessera::cli::requireFiniteNumbers(app);
    app.parse(argc, argv);
    status = bench(o);
  } catch (const CLI::ParseError& e) {
    status = app.exit(e);
  } catch (const std::exception& e) {
    fmt::print(stderr, "shard_speed: {}\n", e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return status;
}

// Matmul efficiency on the model (docs/benchmarks.md, "Matmul"): for several shapes and tile
// counts, compile ops::matmul, run it cycle-exact, and print FLOPs per cycle per tile against the
// tile's peak of one fused multiply-add (2 FLOPs) per cycle, plus the exchange's share.
// Usage: matmul_bench [--device model]
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstring>

#include "tessera/compiler.hpp"
#include "tessera/engine.hpp"
#include "tessera/ops.hpp"

int main(int argc, char** argv) {
  CLI::App app{"matmul efficiency: FLOPs per cycle per tile against the FMA peak"};
  std::string device = "model";
  app.add_option("--device", device, "device string");
  CLI11_PARSE(app, argc, argv);
  struct Case {
    unsigned tiles;
    size_t m, k, n;
  };
  const Case cases[] = {{1, 32, 64, 32}, {4, 32, 128, 64}, {16, 32, 784, 128}, {16, 128, 128, 128}, {16, 32, 128, 10}};
  fmt::print("{:>5} {:>5} {:>5} {:>5} {:>12} {:>10} {:>9} {:>10}\n", "tiles", "m", "k", "n", "cycles", "exchange",
             "plan", "of peak");
  for (const Case& c : cases) {
    try {
      tessera::Graph g(tessera::Target{c.tiles, 65536, 6});
      tessera::Sequence prog;
      const tessera::ops::MatMulPlan plan = tessera::ops::planMatMul(g, c.m, c.k, c.n);
      // Operands laid out where the plan's first step reads them is the library's job; here they
      // are spread linearly, so the cycles include gathering them.
      tessera::Tensor a = tessera::ops::createLinear(g, tessera::ElemType::Float32, {c.m, c.k}, "a");
      tessera::Tensor b = tessera::ops::createLinear(g, tessera::ElemType::Float32, {c.k, c.n}, "b");
      std::vector<float> av(c.m * c.k), bv(c.k * c.n);
      for (size_t i = 0; i < av.size(); ++i) av[i] = 0.001f * static_cast<float>(i % 997) - 0.3f;
      for (size_t i = 0; i < bv.size(); ++i) bv[i] = 0.002f * static_cast<float>(i % 991) - 0.7f;
      g.setInitialValue(a, av);
      g.setInitialValue(b, bv);
      tessera::ops::matmul(g, a, b, prog, "mm");
      tessera::Compiled comp = tessera::compile(g, prog);
      tessera::DeviceOptions o;
      o.tiles = c.tiles;
      auto dev = tessera::openDevice(device, o);
      tessera::Engine e(*dev, comp.executable);
      const tessera::RunResult r = e.run(2'000'000'000ull);
      if (r.reason != tessera::StopReason::Halted) throw tessera::Error("the matmul did not halt");
      uint64_t xc = 0;
      for (const auto& x : comp.report.exchanges) xc += x.cycles;
      const double flops = 2.0 * static_cast<double>(c.m * c.k * c.n);
      const double peak = 2.0 * c.tiles * static_cast<double>(r.cycles);
      fmt::print("{:>5} {:>5} {:>5} {:>5} {:>12} {:>10} {:>3}x{}x{} {:>9.1f}%\n", c.tiles, c.m, c.k, c.n, r.cycles, xc,
                 plan.m, plan.n, plan.k, 100.0 * flops / peak);
    } catch (const std::exception& ex) {
      fmt::print("{:>5} {:>5} {:>5} {:>5}  not run: {}\n", c.tiles, c.m, c.k, c.n, ex.what());
    }
  }
  return 0;
}

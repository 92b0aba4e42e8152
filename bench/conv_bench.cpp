// tessera-bench conv (bench/conv_bench.hpp): each op is the only compute in its program, so the
// chip's cycles are the op's (its exchanges included); "compute" excludes each tile's sync-wait
// and exchange cycles, as `tessera-bench matmul` reports.
#include "conv_bench.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "tessera/compiler.hpp"
#include "tessera/conv.hpp"
#include "tessera/engine.hpp"
#include "tessera/error.hpp"
#include "tessera/ops.hpp"

namespace tessera::bench {

namespace {

struct Layer {
  const char* name;
  std::vector<size_t> in, w;
  ops::Conv2dParams p;
};

// Multiply-adds the layer needs: taps inside the input only (padding taps are skipped).
double usefulMacs(const Layer& l) {
  const std::vector<size_t> o = ops::conv2dOutputShape(l.in, l.w, l.p, l.name);
  double taps = 0;
  for (size_t oy = 0; oy < o[2]; ++oy) {
    for (size_t ox = 0; ox < o[3]; ++ox) {
      for (size_t kh = 0; kh < l.w[2]; ++kh) {
        for (size_t kw = 0; kw < l.w[3]; ++kw) {
          const long iy = long(oy * l.p.stride[0] + kh * l.p.dilation[0]) - long(l.p.padding[0]);
          const long ix = long(ox * l.p.stride[1] + kw * l.p.dilation[1]) - long(l.p.padding[1]);
          taps += iy >= 0 && iy < long(l.in[2]) && ix >= 0 && ix < long(l.in[3]);
        }
      }
    }
  }
  return taps * double(o[0] * o[1] * l.w[1]);
}

}  // namespace

int runConvBench(const ConvBenchOptions& opt) {
  std::vector<Layer> layers = {{"conv0", {opt.batch, 1, 28, 28}, {6, 1, 5, 5}, {}},
                               {"conv1", {opt.batch, 6, 14, 14}, {16, 6, 5, 5}, {}}};
  layers[0].p.padding = {2, 2};
  DeviceOptions o;
  o.tiles = opt.tiles;
  o.tileMemBytes = opt.memKiB * 1024;
  if (!opt.matrixUnit.empty()) o.matrixUnit = opt.matrixUnit == "on";
  o.modelEngine = opt.modelEngine;
  // The graphs' target is the device's (with or without the matrix unit).
  const Target target = [&] {
    auto dev = openDevice(opt.device, o);
    return Target::of(dev->info());
  }();
  const unsigned peak = target.peakFlopsPerCycle() / 2;
  fmt::print(
      "LeNet's conv layers, batch {}, {} tiles of {} KiB, device {}, matrix unit {}; peak {} "
      "FMA/cycle/tile\n",
      opt.batch, opt.tiles, opt.memKiB, opt.device, target.hasMatrixUnit ? "on" : "off", peak);
  fmt::print("{:<6} {:<16} {:>12} {:>10} {:>10} {:>12} {:>9} {:>14} {}\n", "layer", "op", "MACs",
             "cycles", "exchange", "FMA/cyc/tile", "of peak", "compute of peak", "codelets");
  int failures = 0;
  for (const Layer& l : layers) {
    for (const char* op : {"forward", "backward-input", "backward-weights"}) {
      if (!opt.backward && std::string(op) != "forward") continue;
      try {
        Graph g(target);
        Sequence prog;
        const std::vector<size_t> oshape = ops::conv2dOutputShape(l.in, l.w, l.p, l.name);
        // Operands mapped as the ops map their results, as in a network; only those the op reads.
        const std::string what(op);
        auto make = [&](const std::vector<size_t>& shape, const char* name, float a, bool conv) {
          Tensor t = conv ? ops::createConv2dInput(g, shape, name)
                          : ops::createLinear(g, ElemType::Float32, shape, name);
          std::vector<float> v(t.numElements());
          for (size_t i = 0; i < v.size(); ++i) v[i] = a * float(i % 97) - 0.4f;
          g.setInitialValue(t, v);
          return t;
        };
        const Tensor x = what != "backward-input" ? make(l.in, "x", 0.01f, true) : Tensor();
        const Tensor dy = what != "forward" ? make(oshape, "dy", 0.003f, true) : Tensor();
        const Tensor w = what != "backward-weights" ? make(l.w, "w", 0.02f, false) : Tensor();
        const Tensor b = what == "forward" ? make({l.w[0]}, "b", 0.1f, false) : Tensor();
        if (what == "forward") ops::conv2d(g, x, w, b, prog, l.name, l.p);
        if (what == "backward-input") ops::conv2dBackwardInput(g, dy, w, l.in, prog, l.name, l.p);
        if (what == "backward-weights")
          ops::conv2dBackwardWeights(g, x, dy, l.w, prog, l.name, l.p);
        Compiled comp = compile(g, prog);
        auto dev = openDevice(opt.device, o);
        if (dev->info().counterBits < 64) {
          throw Error(
              fmt::format("the device's tile counters are {} bits wide", dev->info().counterBits));
        }
        Engine e(*dev, comp.executable);
        const RunResult r = e.run(20'000'000'000ull);
        if (r.reason != StopReason::Halted)
          throw Error(fmt::format("{} {} did not halt", l.name, op));
        uint64_t xc = 0, computeCycles = 0;
        for (const auto& x2 : comp.report.exchanges) xc += x2.cycles;
        for (unsigned t = 0; t < opt.tiles; ++t) {
          const TileStats st = dev->stats(t);
          computeCycles += r.cycles - st.syncWaitCycles - st.exchangeCycles;
        }
        const double macs = usefulMacs(l);
        const double perTile = macs / (double(opt.tiles) * double(r.cycles));
        const bool unit = std::find(comp.report.codelets.begin(), comp.report.codelets.end(),
                                    "MatMulAmp") != comp.report.codelets.end();
        fmt::print("{:<6} {:<16} {:>12.0f} {:>10} {:>10} {:>12.3f} {:>8.1f}% {:>13.1f}% {}\n",
                   l.name, op, macs, r.cycles, xc, perTile, 100.0 * perTile / peak,
                   100.0 * macs / (double(computeCycles) * peak), unit ? "unit" : "scalar");
      } catch (const std::exception& ex) {
        fmt::print("{:<6} {:<16} not run: {}\n", l.name, op, ex.what());
        ++failures;
      }
    }
  }
  // The max-pooling layers after each conv (kernel 2, stride 2) and their gradients: comparisons
  // only (no FLOPs), so cycles alone.
  for (const Layer& l : layers) {
    const std::vector<size_t> shape = ops::conv2dOutputShape(l.in, l.w, l.p, l.name);
    ops::Pool2dParams pp;
    pp.kernel = {2, 2};
    for (const char* op : {"max-pool", "max-pool-grad"}) {
      if (!opt.backward && std::string(op) != "max-pool") continue;
      try {
        Graph g(target);
        Sequence prog;
        Tensor x = ops::createConv2dInput(g, shape, "x");
        std::vector<float> v(x.numElements());
        for (size_t i = 0; i < v.size(); ++i) v[i] = 0.01f * float(i % 97) - 0.4f;
        g.setInitialValue(x, v);
        if (std::string(op) == "max-pool") {
          ops::maxPool2d(g, x, prog, "pool", pp);
        } else {
          Tensor dy = ops::createConv2dInput(g, ops::pool2dOutputShape(shape, pp, "pool"), "dy");
          std::vector<float> dv(dy.numElements());
          for (size_t i = 0; i < dv.size(); ++i) dv[i] = 0.003f * float(i % 89) - 0.1f;
          g.setInitialValue(dy, dv);
          ops::maxPool2dBackward(g, x, dy, prog, "pool/dx", pp);
        }
        Compiled comp = compile(g, prog);
        auto dev = openDevice(opt.device, o);
        Engine e(*dev, comp.executable);
        const RunResult r = e.run(20'000'000'000ull);
        if (r.reason != StopReason::Halted)
          throw Error(fmt::format("{} {} did not halt", l.name, op));
        uint64_t xc = 0;
        for (const auto& x2 : comp.report.exchanges) xc += x2.cycles;
        fmt::print("{:<6} {:<16} {:>12} {:>10} {:>10}\n", l.name, op, "-", r.cycles, xc);
      } catch (const std::exception& ex) {
        fmt::print("{:<6} {:<16} not run: {}\n", l.name, op, ex.what());
        ++failures;
      }
    }
  }
  return failures ? 1 : 0;
}

}  // namespace tessera::bench

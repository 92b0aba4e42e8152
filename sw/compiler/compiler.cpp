// Lowering of a Graph and a Program to an Executable (docs/compiler.md).
//
// Memory of a tile, low to high:
//   [0, imageEnd)          the codelet image (runtime + the codelets the graph uses, linked for
//                          this graph by codelet_linker.cpp), the same on every tile
//   imageEnd               one word: address of this tile's control program
//   persistent data        variables, vertex states and lists, exchange programs, control; the
//                          variables that live only part of the program share one pool
//                          (liveness, docs/compiler.md)
//   ...free...
//   exchange buffers       receive buffers of the current step, allocated downward and reused by
//                          every step (each with EXCHANGE_LATENCY guard words below it)
//   stacks                 TESS_GRAPH_STACK_BYTES at the top (sw/runtime/graph_crt0.S)
#include "tessera/compiler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>
#include <tuple>
#include <unordered_map>

#include "codelet_linker.hpp"
#include "exchange_encoding.hpp"
#include "exchange_scheduler.hpp"
#include "superstep_merge.hpp"
#include "tessera/control.h"
#include "tessera/error.hpp"

namespace tessera {

namespace {

constexpr uint32_t kGuardBytes = 4 * xchg::kLatency;
constexpr size_t kWorkers = TESS_CP_OPERANDS_EXEC;  // vertex lists: five workers and the supervisor

struct Loc {
  uint32_t tile = 0;
  uint32_t addr = 0;
};

// A per-tile control program under construction; jump targets are word indexes until the
// program's address is known.
struct ControlProgram {
  std::vector<uint32_t> words;
  std::vector<size_t> fixups;  // words holding a word index to turn into an address
  void op(uint32_t opcode, std::initializer_list<uint32_t> operands) {
    words.push_back(opcode);
    words.insert(words.end(), operands);
  }
};

class Lowering {
 public:
  Lowering(const Graph& g, const CompileOptions& options)
      : g_(g), T_(g.target().tiles), options_(options) {
    const Target& t = g.target();
    mem_ = t.tileMemBytes;
    // The image of the runtime and of the codelets this graph's vertices use, nothing else.
    std::set<std::string> used;
    for (const GraphVertex& v : g.vertices()) used.insert(v.codelet);
    image_ = g.codeletLibrary()->linkCached(used);
    imageEnd_ = image_->imageEnd;
    if (imageEnd_ + 4 > mem_ - TESS_GRAPH_STACK_BYTES) {
      throw Error(
          fmt::format("the codelet image ({} bytes: the runtime and {}) does not fit a "
                      "tile of {} bytes",
                      imageEnd_, fmt::join(used, ", "), mem_));
    }
    next_.assign(T_, imageEnd_ + 4);
    scratchTop_ = mem_ - TESS_GRAPH_STACK_BYTES;
    scratchLow_.assign(T_, scratchTop_);
    scratch_.assign(T_, scratchTop_);
    data_.resize(T_);
    cp_.resize(T_);
    report_.target = t;
    report_.codeImageBytes = imageEnd_;
    report_.codelets.assign(used.begin(), used.end());
    report_.tiles.resize(T_);
    users_.resize(T_);
    for (unsigned i = 0; i < T_; ++i) {
      TileMemoryReport& r = report_.tiles[i];
      r.tile = i;
      r.code = imageEnd_ + 4;
      r.stacks = TESS_GRAPH_STACK_BYTES;
      r.capacity = mem_;
    }
  }

  Compiled run(const Program& prog) {
    std::shared_ptr<const ProgramNode> root = prog.node();
    if (options_.mergeComputeSets) {
      MergedProgram m = mergeComputeSets(g_, *root);
      root = std::move(m.root);
      merged_ = std::move(m.sets);
      for (const auto& [node, sets] : merged_)
        report_.mergedComputeSets += static_cast<unsigned>(sets.size() - 1);
    }
    placeVariables(*root);
    lower(*root);
    for (unsigned t = 0; t < T_; ++t) cp_[t].op(TESS_CP_END, {});
    return finish();
  }

  // The pass merged at least one compute set into another's superstep.
  bool mergedAny() const { return !merged_.empty(); }

 private:
  const Graph& g_;
  std::shared_ptr<const CodeletImage> image_;
  uint32_t imageEnd_ = 0;
  unsigned T_;
  CompileOptions options_;
  // The compute sets of each Execute that runs more than its own (superstep_merge.hpp).
  std::unordered_map<const ProgramNode*, std::vector<uint32_t>> merged_;
  uint32_t mem_ = 0;
  std::vector<uint32_t> next_;  // persistent allocation pointer
  uint32_t scratchTop_ = 0;
  std::vector<uint32_t> scratch_, scratchLow_;  // current step's / lowest scratch pointer
  std::vector<std::map<uint32_t, std::vector<uint8_t>>> data_;  // per tile: addr -> bytes
  std::vector<ControlProgram> cp_;
  std::vector<std::vector<uint32_t>> varAddr_;  // per variable, per element: address
  std::vector<std::map<std::string, uint32_t>> users_;
  Executable exe_;
  CompileReport report_;
  uint32_t nextSyncId_ = 1;
  int whileBodies_ = 0;  // RepeatWhile bodies around the scan (their writes may not happen)
  uint32_t nextHostSync_ = 1;
  int node_ = -1;         // the report's program node being lowered
  int64_t nextStep_ = 0;  // program order position of the next step, as scan() counts them
  // Per tile: bytes of tensors placed for the whole program, and the temporaries' lifetimes
  // (bytes, first step, last step), for the report's live bytes per step.
  std::vector<uint32_t> persistentBytes_;
  std::vector<std::vector<std::tuple<uint32_t, int64_t, int64_t>>> temporaries_;

  // The compute sets an Execute runs: its own, or those merged into it.
  std::vector<uint32_t> setsOf(const ProgramNode& n) const {
    auto it = merged_.find(&n);
    return it == merged_.end() ? std::vector<uint32_t>{n.computeSet.id} : it->second;
  }

  uint32_t alloc(unsigned tile, uint32_t bytes, uint32_t TileMemoryReport::*category,
                 const std::string& user) {
    const uint32_t a = next_[tile];
    next_[tile] += (bytes + 3) & ~3u;
    report_.tiles[tile].*category += (bytes + 3) & ~3u;
    users_[tile][user] += (bytes + 3) & ~3u;
    if (next_[tile] > scratchLow_[tile]) overflow(tile);
    return a;
  }

  // Pads tile's next persistent address to a multiple of align (a power of two).
  void alignNext(unsigned tile, uint32_t align) {
    const uint32_t pad = (align - next_[tile] % align) % align;
    if (pad) alloc(tile, pad, &TileMemoryReport::tensors, "alignment padding");
  }

  uint32_t allocScratch(unsigned tile, uint32_t bytes, uint32_t align = 4) {
    scratch_[tile] -= bytes;
    scratch_[tile] &= ~(align - 1);
    const uint32_t a = scratch_[tile];
    scratch_[tile] -= kGuardBytes;
    scratchLow_[tile] = std::min(scratchLow_[tile], scratch_[tile]);
    if (next_[tile] > scratchLow_[tile]) overflow(tile);
    return a;
  }

  void resetScratch() { scratch_.assign(T_, scratchTop_); }

  [[noreturn]] void overflow(unsigned tile) {
    TileMemoryReport& r = report_.tiles[tile];
    r.exchangeBuffers = scratchTop_ - scratchLow_[tile];
    std::vector<std::pair<std::string, uint32_t>> u(users_[tile].begin(), users_[tile].end());
    u.emplace_back("exchange buffers", r.exchangeBuffers);
    u.emplace_back("codelet image", r.code);
    u.emplace_back("stacks", r.stacks);
    std::sort(u.begin(), u.end(), [](auto& a, auto& b) { return a.second > b.second; });
    std::string top;
    for (size_t i = 0; i < u.size() && i < 5; ++i)
      top += fmt::format("{}{} {} B", i ? ", " : "", u[i].first, u[i].second);
    // What the allocations so far overlap by: the least the tile lacks (the compile stops at the
    // first allocation that does not fit).
    const uint32_t lacks = next_[tile] > scratchLow_[tile] ? next_[tile] - scratchLow_[tile] : 0;
    throw OutOfMemoryError(fmt::format(
        "tile {} is out of memory: it needs more than its {} bytes (at least {} more); largest "
        "users: {}",
        tile, mem_, lacks, top));
  }

  void put(unsigned tile, uint32_t addr, std::span<const uint32_t> words) {
    std::vector<uint8_t> bytes(words.size() * 4);
    std::memcpy(bytes.data(), words.data(), bytes.size());
    data_[tile][addr] = std::move(bytes);
  }

  // Liveness (docs/compiler.md, "Liveness"): each step of the program (an Execute, a copy, a
  // stream copy, a loop's predicate) gets a position in program order; a variable lives from its
  // first to its last use, over the whole of any loop whose first use of it reads it or writes
  // only part of it (its value may be carried to the next iteration), and everywhere if its first
  // use in the program does (it carries a value into the program), or it is a constant, has
  // initial values, is exposed to the host or is a stream's buffer.
  struct Use {
    int64_t pos = 0;
    bool read = false;  // a read, or a write that may not happen (in a RepeatWhile body)
    uint32_t begin = 0, end = 0;
  };
  struct Life {
    int64_t first = -1, last = -1;
    bool persistent = false;
    std::vector<Use> uses;  // in position order
  };

  void use(std::vector<Life>& life, const Tensor& t, int64_t pos, bool read) {
    for (const ElementRun& r : t.runs()) {
      Life& l = life[r.var];
      if (l.first < 0) l.first = pos;
      l.last = std::max(l.last, pos);
      l.uses.push_back({pos, read || whileBodies_ > 0, r.begin, r.end});
    }
  }

  // True when the uses of variable v from position `from` on (the first of them at `from`), up to
  // position `to`, write all of it before any of them reads it: no value from before `from` is
  // read. The writes may be spread over several steps (a result stored chunk by chunk); a step
  // that reads any part of it ends the search.
  bool writtenWholeAt(const Life& l, uint32_t v, int64_t from,
                      int64_t to = std::numeric_limits<int64_t>::max()) const {
    std::vector<bool> written(g_.variables()[v].tileOf.size(), false);
    size_t left = written.size();
    size_t i = 0;
    while (i < l.uses.size() && l.uses[i].pos < from) ++i;
    while (i < l.uses.size() && l.uses[i].pos <= to) {
      const int64_t p = l.uses[i].pos;
      size_t j = i;
      for (; j < l.uses.size() && l.uses[j].pos == p; ++j) {
        if (l.uses[j].read) return false;
      }
      for (; i < j; ++i) {
        for (uint32_t e = l.uses[i].begin; e < l.uses[i].end; ++e) {
          if (!written[e]) written[e] = true, --left;
        }
      }
      if (left == 0) return true;
    }
    return false;
  }

  void scan(const ProgramNode& n, std::vector<Life>& life, int64_t& pos,
            std::vector<std::pair<int64_t, int64_t>>& loops,
            const std::vector<std::vector<uint32_t>>& byComputeSet) {
    switch (n.kind) {
      case ProgramKind::Sequence:
        for (const auto& c : n.children) scan(*c, life, pos, loops, byComputeSet);
        return;
      case ProgramKind::Execute: {
        if (n.computeSet.id >= byComputeSet.size()) return;  // lowerExecute reports it
        const int64_t p = pos++;
        for (uint32_t cs : setsOf(n)) {
          for (uint32_t vi : byComputeSet[cs]) {
            const GraphVertex& v = g_.vertices()[vi];
            const CodeletInfo& c = g_.codelet(v.codelet);
            for (size_t fi = 0; fi < c.fields.size() && fi < v.fields.size(); ++fi) {
              if (c.fields[fi].kind == FieldKind::Param || !v.fields[fi].tensor.valid()) continue;
              use(life, v.fields[fi].tensor, p, v.fields[fi].reads(c.fields[fi].kind));
            }
          }
        }
        return;
      }
      case ProgramKind::Copy: {
        const int64_t p = pos++;
        use(life, n.src, p, true);
        use(life, n.dst, p, false);
        return;
      }
      case ProgramKind::StreamToTensor:
      case ProgramKind::TensorToStream: {
        const Tensor& t = n.kind == ProgramKind::StreamToTensor ? n.dst : n.src;
        for (const ElementRun& r : t.runs()) life[r.var].persistent = true;
        ++pos;
        return;
      }
      case ProgramKind::Repeat: {
        if (n.count == 0) return;
        const int64_t start = pos;
        scan(*n.children[0], life, pos, loops, byComputeSet);
        if (pos > start) loops.emplace_back(start, pos - 1);
        return;
      }
      case ProgramKind::RepeatWhile: {
        const int64_t start = pos;
        scan(*n.children[0], life, pos, loops, byComputeSet);
        use(life, n.predicate, pos++, true);
        ++whileBodies_;
        scan(*n.children[1], life, pos, loops, byComputeSet);
        --whileBodies_;
        loops.emplace_back(start, pos - 1);
        return;
      }
    }
  }

  std::vector<Life> lifetimes(const ProgramNode& root) {
    const auto& vars = g_.variables();
    std::vector<Life> life(vars.size());
    std::vector<std::vector<uint32_t>> byComputeSet(g_.computeSetNames().size());
    for (uint32_t vi = 0; vi < g_.vertices().size(); ++vi) {
      const uint32_t cs = g_.vertices()[vi].computeSet;
      if (cs < byComputeSet.size()) byComputeSet[cs].push_back(vi);
    }
    int64_t pos = 0;
    std::vector<std::pair<int64_t, int64_t>> loops;
    scan(root, life, pos, loops, byComputeSet);
    for (const auto& [name, t] : g_.exposedTensors()) {
      for (const ElementRun& r : t.runs()) life[r.var].persistent = true;
    }
    for (uint32_t v = 0; v < vars.size(); ++v) {
      Life& l = life[v];
      if (vars[v].constant || !vars[v].initial.empty() || l.first < 0) l.persistent = true;
      if (l.persistent) continue;
      // Read before it is written: it carries a value into the program, from its loading or from
      // the previous run (Engine::restart runs the program again on the memory as it is).
      if (!writtenWholeAt(l, v, l.first)) {
        l.persistent = true;
        continue;
      }
      // A loop whose first use of it is not a whole write may carry its value from one iteration
      // to the next: it lives over the whole loop. Widening by one loop adds no use, so one pass
      // over the loops decides them all.
      int64_t first = l.first, last = l.last;
      for (const auto& [s, e] : loops) {
        auto in = std::find_if(l.uses.begin(), l.uses.end(),
                               [&](const Use& u) { return u.pos >= s && u.pos <= e; });
        if (in == l.uses.end() || writtenWholeAt(l, v, in->pos, e)) continue;
        first = std::min(first, s), last = std::max(last, e);
      }
      l.first = first, l.last = last;
      l.uses.clear();
    }
    return life;
  }

  void placeVariables(const ProgramNode& root) {
    const auto& vars = g_.variables();
    std::vector<Life> life;
    if (options_.liveness) life = lifetimes(root);
    varAddr_.resize(vars.size());
    // Per tile, the temporaries (variable, bytes, first, last) placed in the shared pool below.
    struct Temp {
      uint32_t var = 0;
      uint32_t bytes = 0;
      int64_t first = 0, last = 0;
      uint32_t offset = 0;
      uint32_t align = 4;
    };
    std::vector<std::vector<Temp>> temps(T_);
    std::vector<std::vector<uint32_t>> counts(vars.size());
    for (uint32_t v = 0; v < vars.size(); ++v) {
      const GraphVariable& var = vars[v];
      std::vector<uint32_t>& count = counts[v];
      count.assign(T_, 0);
      for (size_t i = 0; i < var.tileOf.size(); ++i) {
        if (var.tileOf[i] < 0) {
          throw Error(fmt::format(
              "tensor \"{}\": element {} is not mapped to a tile (setTileMapping)", var.name, i));
        }
        ++count[var.tileOf[i]];
      }
      // Bytes of a tile's elements: 4 each, or 2 for float16 (two to a word, rounded up).
      const uint32_t eb = elemTypeBytes(var.type);
      std::vector<uint32_t> bytes(T_, 0);
      for (unsigned t = 0; t < T_; ++t) bytes[t] = (eb * count[t] + 3) / 4 * 4;
      for (unsigned t = 0; t < T_; ++t) report_.tiles[t].tensorsWithoutLiveness += bytes[t];
      const bool temporary = options_.liveness && !life[v].persistent;
      std::vector<uint32_t> base(T_, 0);
      for (unsigned t = 0; t < T_; ++t) {
        if (!count[t]) continue;
        if (temporary) {
          temps[t].push_back({v, bytes[t], life[v].first, life[v].last, 0, var.align});
          users_[t][fmt::format("tensor \"{}\"", var.name)] += bytes[t];
        } else {
          alignNext(t, var.align);
          base[t] = alloc(t, bytes[t], &TileMemoryReport::tensors,
                          fmt::format("tensor \"{}\"", var.name));
        }
      }
      if (temporary) continue;
      varAddr_[v].resize(var.tileOf.size());
      std::vector<std::vector<uint32_t>> init(T_);
      for (size_t i = 0; i < var.tileOf.size(); ++i) {
        const unsigned t = static_cast<unsigned>(var.tileOf[i]);
        varAddr_[v][i] = base[t] + eb * static_cast<uint32_t>(init[t].size());
        init[t].push_back(var.initial.empty() ? 0 : var.initial[i]);
      }
      for (unsigned t = 0; t < T_; ++t) {
        if (!count[t]) continue;
        if (eb == 2) {
          // Two binary16 bit patterns to a little-endian word, the first in the low half.
          std::vector<uint32_t> words((count[t] + 1) / 2, 0);
          for (size_t i = 0; i < init[t].size(); ++i)
            words[i / 2] |= (init[t][i] & 0xffffu) << (16 * (i % 2));
          put(t, base[t], words);
        } else {
          put(t, base[t], init[t]);
        }
      }
    }
    persistentBytes_.resize(T_);
    temporaries_.resize(T_);
    for (unsigned t = 0; t < T_; ++t) {
      persistentBytes_[t] = report_.tiles[t].tensors;
      for (const Temp& x : temps[t]) temporaries_[t].emplace_back(x.bytes, x.first, x.last);
    }
    // The pool: first fit, largest first, at the lowest offset clear of every placed temporary
    // whose lifetime overlaps (two lifetimes overlap when they share a position).
    std::vector<std::vector<uint32_t>> offsetOf(vars.size());
    for (unsigned t = 0; t < T_; ++t) {
      std::vector<Temp>& list = temps[t];
      if (list.empty()) continue;
      std::stable_sort(list.begin(), list.end(),
                       [](const Temp& a, const Temp& b) { return a.bytes > b.bytes; });
      std::vector<const Temp*> placed;
      uint32_t poolBytes = 0;
      for (Temp& x : list) {
        std::vector<std::pair<uint32_t, uint32_t>>
            busy;  // [begin, end) offsets of overlapping lifetimes
        for (const Temp* p : placed) {
          if (p->first <= x.last && x.first <= p->last)
            busy.emplace_back(p->offset, p->offset + p->bytes);
        }
        std::sort(busy.begin(), busy.end());
        uint32_t at = 0;
        for (const auto& [b, e] : busy) {
          if (at + x.bytes <= b) break;
          at = std::max(at, e);
          at = (at + x.align - 1) & ~(x.align - 1);
        }
        x.offset = at;
        placed.push_back(&x);
        poolBytes = std::max(poolBytes, at + x.bytes);
      }
      uint32_t poolAlign = 4;
      for (const Temp& x : list) poolAlign = std::max(poolAlign, x.align);
      alignNext(t, poolAlign);
      const uint32_t pool =
          alloc(t, poolBytes, &TileMemoryReport::tensors, "tensors of the shared pool");
      users_[t].erase("tensors of the shared pool");
      for (const Temp& x : list) {
        if (offsetOf[x.var].empty()) offsetOf[x.var].assign(T_, 0);
        offsetOf[x.var][t] = pool + x.offset;
      }
    }
    for (uint32_t v = 0; v < vars.size(); ++v) {
      if (offsetOf[v].empty()) continue;
      const GraphVariable& var = vars[v];
      varAddr_[v].resize(var.tileOf.size());
      std::vector<uint32_t> next(T_, 0);
      const uint32_t eb = elemTypeBytes(var.type);
      for (size_t i = 0; i < var.tileOf.size(); ++i) {
        const unsigned t = static_cast<unsigned>(var.tileOf[i]);
        varAddr_[v][i] = offsetOf[v][t] + eb * next[t]++;
      }
    }
  }

  std::vector<Loc> locate(const Tensor& t) const {
    std::vector<Loc> out;
    out.reserve(t.numElements());
    for (const ElementRun& r : t.runs()) {
      for (uint32_t i = r.begin; i < r.end; ++i) {
        out.push_back({static_cast<uint32_t>(g_.variables()[r.var].tileOf[i]), varAddr_[r.var][i]});
      }
    }
    return out;
  }

  // The 32-bit words of t, in order: its elements' locations, or for a float16 tensor one per
  // pair of elements (2i, 2i + 1), which must lie in one word (element 2i at a 4-byte boundary,
  // 2i + 1 after it on the same tile). The exchange, gathers, streams and the host move words,
  // so a float16 tensor is used in such pairs (docs/compiler.md, "Float16 tensors").
  std::vector<Loc> locateWords(const Tensor& t, const std::string& what) const {
    std::vector<Loc> locs = locate(t);
    if (t.elementType() != ElemType::Float16) return locs;
    if (locs.size() % 2 != 0) {
      throw Error(
          fmt::format("{}: float16 tensor \"{}\" has {} elements; it is moved in whole "
                      "words, pairs of elements",
                      what, t.debugName(), locs.size()));
    }
    std::vector<Loc> words(locs.size() / 2);
    for (size_t i = 0; i < words.size(); ++i) {
      const Loc lo = locs[2 * i], hi = locs[2 * i + 1];
      if (lo.addr % 4 != 0 || hi.tile != lo.tile || hi.addr != lo.addr + 2) {
        throw Error(fmt::format(
            "{}: float16 tensor \"{}\": elements {} and {} do not share a word (a float16 "
            "tensor is moved in whole words: element 2i at a 4-byte boundary, 2i + 1 after it "
            "on the same tile)",
            what, t.debugName(), 2 * i, 2 * i + 1));
      }
      words[i] = lo;
    }
    return words;
  }

  // Messages moving element i of from to element i of to, grouped into runs contiguous on both
  // sides.
  static void addMessages(const std::vector<Loc>& from, const std::vector<Loc>& to, bool guarded,
                          std::vector<XMessage>& out) {
    for (size_t i = 0; i < from.size();) {
      size_t j = i + 1;
      while (j < from.size() && from[j].tile == from[i].tile && to[j].tile == to[i].tile &&
             from[j].addr == from[i].addr + 4 * (j - i) && to[j].addr == to[i].addr + 4 * (j - i)) {
        ++j;
      }
      out.push_back(XMessage{from[i].tile,
                             from[i].addr,
                             static_cast<uint32_t>(j - i),
                             {XDest{to[i].tile, to[i].addr, guarded}}});
      i = j;
    }
  }

  // Schedule an exchange, then emit on every tile the sync that starts it and the local copies.
  void exchange(std::vector<XMessage> msgs, const std::string& name) {
    XSchedule s = scheduleExchange(T_, mem_, std::move(msgs));
    const uint32_t desc = nextSyncId_++ & 0xffffu;
    for (unsigned t = 0; t < T_; ++t) {
      uint32_t prog = 0;
      if (!s.programs[t].empty()) {
        prog = alloc(t, 4 * static_cast<uint32_t>(s.programs[t].size()),
                     &TileMemoryReport::exchangePrograms, "exchange programs");
        put(t, prog, s.programs[t]);
      }
      cp_[t].op(TESS_CP_SYNC, {desc, prog});
    }
    ExchangeReport r{name, s.cycles, s.lowerBound, s.phases, s.words, 0, desc};
    for (const XLocalCopy& c : s.localCopies) {
      cp_[c.tile].op(TESS_CP_COPY, {c.dst, c.src, c.words});
      r.localCopyWords += c.words;
    }
    ++report_.syncs;
    if (node_ >= 0)
      report_.program[node_].syncs.push_back(static_cast<int32_t>(report_.exchanges.size()));
    report_.exchanges.push_back(std::move(r));
  }

  void lowerExecute(const ProgramNode& n) {
    const std::vector<uint32_t> sets = setsOf(n);
    for (uint32_t cs : sets) {
      if (cs >= g_.computeSetNames().size()) throw Error("Execute: unknown compute set");
    }
    // A merged Execute's node is named after all its sets (superstep_merge.cpp).
    const std::string& csName = sets.size() > 1 ? n.name : g_.computeSetNames()[sets[0]];
    resetScratch();
    std::vector<XMessage> pre, post;
    std::vector<std::vector<std::tuple<uint64_t, uint32_t, uint32_t, size_t>>> perTile(
        T_);  // (cost, entry, state, index in sets)
    std::map<std::vector<uint64_t>, uint32_t> shared;
    std::unordered_map<uint64_t, std::pair<uint32_t, bool>>
        writers;  // element -> (vertex, in place)
    // Each compute set's index in sets, -1 for the others.
    std::vector<int> setIndex(g_.computeSetNames().size(), -1);
    for (size_t i = 0; i < sets.size(); ++i) setIndex[sets[i]] = static_cast<int>(i);
    const auto& verts = g_.vertices();
    for (uint32_t vi = 0; vi < verts.size(); ++vi) {
      const GraphVertex& v = verts[vi];
      if (v.computeSet >= setIndex.size() || setIndex[v.computeSet] < 0) continue;
      if (node_ >= 0) report_.program[node_].flops += v.flops;
      const CodeletInfo& c = g_.codelet(v.codelet);
      const std::string where =
          fmt::format("compute set \"{}\": vertex {} ({})", csName, vi, v.codelet);
      if (v.tile < 0) throw Error(fmt::format("{}: not mapped to a tile (setTileMapping)", where));
      const unsigned tile = static_cast<unsigned>(v.tile);
      std::vector<uint32_t> state;
      uint64_t cost = 1;
      for (size_t fi = 0; fi < c.fields.size(); ++fi) {
        const CodeletField& f = c.fields[fi];
        const GraphField& gf = v.fields[fi];
        if (f.kind == FieldKind::Param) {
          if (!gf.hasValue)
            throw Error(
                fmt::format("{}: field \"{}\" has no value (setFieldValue)", where, f.name));
          state.insert(state.end(), {gf.value, 0});
          continue;
        }
        if (!gf.tensor.valid())
          throw Error(fmt::format("{}: field \"{}\" is not connected", where, f.name));
        const std::vector<Loc> locs =
            locateWords(gf.tensor, fmt::format("{}: field \"{}\"", where, f.name));
        cost += locs.size();
        bool direct = true;
        for (size_t i = 0; i < locs.size() && direct; ++i) {
          direct = locs[i].tile == tile && locs[i].addr == locs[0].addr + 4 * i;
        }
        if (!locs.empty() && locs[0].addr % gf.align != 0) direct = false;
        if (f.kind != FieldKind::Input) {
          std::vector<Loc> sorted = locs;
          std::sort(sorted.begin(), sorted.end(), [](Loc a, Loc b) {
            return std::tie(a.tile, a.addr) < std::tie(b.tile, b.addr);
          });
          for (size_t i = 1; i < sorted.size(); ++i) {
            if (sorted[i].tile == sorted[i - 1].tile && sorted[i].addr == sorted[i - 1].addr) {
              throw Error(fmt::format(
                  "{}: output field \"{}\" is connected to tensor \"{}\" whose elements repeat "
                  "(a broadcast view cannot be written)",
                  where, f.name, gf.tensor.debugName()));
            }
          }
        }
        uint32_t ptr = locs.empty() ? 0 : locs[0].addr;
        // Inputs of one compute set that gather the same elements to one tile share a buffer.
        std::vector<uint64_t> key;
        if (!direct && f.kind == FieldKind::Input) {
          key.reserve(locs.size() + 2);
          key.push_back(tile);
          key.push_back(gf.align);
          for (const Loc& l : locs) key.push_back(uint64_t{l.tile} << 32 | l.addr);
          if (auto it = shared.find(key); it != shared.end()) {
            ptr = it->second;
            direct = true;
          }
        }
        if (!direct) {
          ptr = allocScratch(tile, 4 * static_cast<uint32_t>(locs.size()), gf.align);
          std::vector<Loc> buf(locs.size());
          for (size_t i = 0; i < locs.size(); ++i)
            buf[i] = {tile, ptr + 4 * static_cast<uint32_t>(i)};
          if (f.kind != FieldKind::Output) addMessages(locs, buf, true, pre);
          if (f.kind == FieldKind::Input) shared.emplace(std::move(key), ptr);
          if (f.kind != FieldKind::Input) addMessages(buf, locs, false, post);
        }
        if (f.kind != FieldKind::Input) {
          // Vertices may share an output region they write in parts (matmul's vertices do) only
          // where it is written in place: through gathered copies each would write back all of it.
          for (const Loc& l : locs) {
            auto [it, fresh] = writers.try_emplace(uint64_t{l.tile} << 32 | l.addr, vi, direct);
            if (!fresh && it->second.first != vi && !(direct && it->second.second)) {
              throw Error(fmt::format(
                  "{}: field \"{}\" writes elements of tensor \"{}\" that vertex {} also writes, "
                  "and one of them is not in place on its tile",
                  where, f.name, gf.tensor.debugName(), it->second.first));
            }
          }
        }
        // The codelet's element count (halves for a float16 field).
        state.insert(state.end(), {ptr, static_cast<uint32_t>(gf.tensor.numElements())});
      }
      const uint32_t sa =
          alloc(tile, 4 * static_cast<uint32_t>(state.size()), &TileMemoryReport::vertexState,
                fmt::format("vertex states of \"{}\"", csName));
      put(tile, sa, state);
      perTile[tile].emplace_back(cost, image_->codelet(v.codelet)->entry, sa,
                                 static_cast<size_t>(setIndex[v.computeSet]));
      ++report_.vertices;
    }
    if (!pre.empty()) exchange(std::move(pre), fmt::format("inputs of compute set \"{}\"", csName));
    if (node_ >= 0)
      report_.program[node_].computeAfter =
          static_cast<uint32_t>(report_.program[node_].syncs.size());
    for (unsigned t = 0; t < T_; ++t) {
      auto& list = perTile[t];
      if (list.empty()) continue;
      std::vector<std::vector<uint32_t>> workers(kWorkers);
      std::vector<uint64_t> load(kWorkers, 0);
      for (size_t si = 0; si < sets.size(); ++si) {
        // Each compute set's vertices longest first onto the least loaded of its own six lists.
        std::vector<std::tuple<uint64_t, uint32_t, uint32_t, size_t>> mine;
        for (const auto& e : list)
          if (std::get<3>(e) == si) mine.push_back(e);
        if (mine.empty()) continue;
        std::stable_sort(mine.begin(), mine.end(),
                         [](auto& a, auto& b) { return std::get<0>(a) > std::get<0>(b); });
        std::vector<std::vector<uint32_t>> own(kWorkers);
        std::vector<uint64_t> ownLoad(kWorkers, 0);
        for (auto& [cost, entry, sa, set] : mine) {
          const size_t w = std::min_element(ownLoad.begin(), ownLoad.end()) - ownLoad.begin();
          ownLoad[w] += cost;
          own[w].insert(own[w].end(), {entry, sa});
        }
        // A merged set's lists follow the sets before it on the tile, its heaviest list on the
        // least loaded context: no context runs longer than the sets one after the other would.
        std::vector<size_t> byOwn(kWorkers), byLoad(kWorkers);
        std::iota(byOwn.begin(), byOwn.end(), size_t{0});
        std::iota(byLoad.begin(), byLoad.end(), size_t{0});
        if (*std::max_element(load.begin(), load.end()) > 0) {
          std::stable_sort(byOwn.begin(), byOwn.end(),
                           [&](size_t a, size_t b) { return ownLoad[a] > ownLoad[b]; });
          std::stable_sort(byLoad.begin(), byLoad.end(),
                           [&](size_t a, size_t b) { return load[a] < load[b]; });
        }
        for (size_t i = 0; i < kWorkers; ++i) {
          const size_t w = byLoad[i], o = byOwn[i];
          workers[w].insert(workers[w].end(), own[o].begin(), own[o].end());
          load[w] += ownLoad[o];
        }
      }
      std::vector<uint32_t> operands(kWorkers, 0);
      for (size_t w = 0; w < kWorkers; ++w) {
        if (workers[w].empty()) continue;
        std::vector<uint32_t> words{static_cast<uint32_t>(workers[w].size() / 2)};
        words.insert(words.end(), workers[w].begin(), workers[w].end());
        operands[w] =
            alloc(t, 4 * static_cast<uint32_t>(words.size()), &TileMemoryReport::vertexState,
                  fmt::format("vertex states of \"{}\"", csName));
        put(t, operands[w], words);
      }
      cp_[t].op(TESS_CP_EXEC,
                {operands[0], operands[1], operands[2], operands[3], operands[4], operands[5]});
    }
    if (!post.empty())
      exchange(std::move(post), fmt::format("outputs of compute set \"{}\"", csName));
    report_.computeSets += static_cast<unsigned>(sets.size());
  }

  void lowerCopy(const ProgramNode& n) {
    if (n.src.elementType() != n.dst.elementType()) {
      throw Error(fmt::format("Copy \"{}\": source \"{}\" is {}, destination \"{}\" is {}", n.name,
                              n.src.debugName(), elemTypeName(n.src.elementType()),
                              n.dst.debugName(), elemTypeName(n.dst.elementType())));
    }
    const std::string what = fmt::format("Copy \"{}\"", n.name);
    const std::vector<Loc> from = locateWords(n.src, what), to = locateWords(n.dst, what);
    std::vector<Loc> sorted = to;
    std::sort(sorted.begin(), sorted.end(),
              [](Loc a, Loc b) { return std::tie(a.tile, a.addr) < std::tie(b.tile, b.addr); });
    for (size_t i = 1; i < sorted.size(); ++i) {
      if (sorted[i].tile == sorted[i - 1].tile && sorted[i].addr == sorted[i - 1].addr) {
        throw Error(fmt::format("Copy \"{}\": destination \"{}\" has repeated elements", n.name,
                                n.dst.debugName()));
      }
    }
    for (const Loc& l : from) {
      if (std::binary_search(sorted.begin(), sorted.end(), l, [](Loc a, Loc b) {
            return std::tie(a.tile, a.addr) < std::tie(b.tile, b.addr);
          })) {
        throw Error(fmt::format("Copy \"{}\": source \"{}\" and destination \"{}\" overlap", n.name,
                                n.src.debugName(), n.dst.debugName()));
      }
    }
    std::vector<XMessage> msgs;
    addMessages(from, to, false, msgs);
    exchange(std::move(msgs),
             fmt::format("copy \"{}\"", n.name.empty() ? n.dst.debugName() : n.name));
  }

  void lowerStream(const ProgramNode& n, bool toDevice) {
    const auto& streams = g_.streams();
    if (n.stream.id >= streams.size()) throw Error("stream copy: unknown stream");
    const GraphStream& s = streams[n.stream.id];
    const Tensor& t = toDevice ? n.dst : n.src;
    if (s.toDevice != toDevice) {
      throw Error(fmt::format("stream \"{}\" is {}: it cannot be copied {}", s.name,
                              s.toDevice ? "host-to-device" : "device-to-host",
                              toDevice ? "to the device" : "to the host"));
    }
    if (t.numElements() != s.elements || t.elementType() != s.type) {
      throw Error(fmt::format("stream \"{}\" ({} x {}) and tensor \"{}\" ({} x {}) differ", s.name,
                              s.elements, elemTypeName(s.type), t.debugName(), t.numElements(),
                              elemTypeName(t.elementType())));
    }
    const std::vector<Loc> locs = locateWords(t, fmt::format("stream \"{}\"", s.name));
    ExeHostSync hs;
    hs.id = nextHostSync_++;
    if (hs.id > 0xffff) throw Error("more than 65535 host syncs");
    for (size_t i = 0; i < locs.size();) {
      size_t j = i + 1;
      while (j < locs.size() && locs[j].tile == locs[i].tile &&
             locs[j].addr == locs[i].addr + 4 * (j - i))
        ++j;
      hs.copies.push_back(
          {n.stream.id, ExeRegion{locs[i].tile, locs[i].addr, static_cast<uint32_t>(4 * (j - i))}});
      i = j;
    }
    exe_.hostSyncs.push_back(std::move(hs));
    for (unsigned tt = 0; tt < T_; ++tt)
      cp_[tt].op(TESS_CP_SYNC, {TESS_SYNC_HOST_BIT | exe_.hostSyncs.back().id, 0});
    ++report_.hostSyncs;
    if (node_ >= 0)
      report_.program[node_].syncs.push_back(-static_cast<int32_t>(exe_.hostSyncs.back().id));
  }

  static const char* kindName(ProgramKind k) {
    switch (k) {
      case ProgramKind::Sequence:
        return "Sequence";
      case ProgramKind::Execute:
        return "Execute";
      case ProgramKind::Copy:
        return "Copy";
      case ProgramKind::StreamToTensor:
        return "StreamToTensor";
      case ProgramKind::TensorToStream:
        return "TensorToStream";
      case ProgramKind::Repeat:
        return "Repeat";
      case ProgramKind::RepeatWhile:
        return "RepeatWhile";
    }
    return "?";
  }

  // Lower n, recording it in the report's program tree (the parent is the node being lowered).
  void lower(const ProgramNode& n) {
    if (n.kind == ProgramKind::Repeat && n.count == 0) return;  // scan() gives it no step either
    ProgramNodeReport r{
        kindName(n.kind), n.name, node_, n.kind == ProgramKind::Repeat ? n.count : 0, -1, {}};
    if (r.name.empty() && n.kind == ProgramKind::Execute &&
        n.computeSet.id < g_.computeSetNames().size())
      r.name = g_.computeSetNames()[n.computeSet.id];
    if (r.name.empty() &&
        (n.kind == ProgramKind::StreamToTensor || n.kind == ProgramKind::TensorToStream) &&
        n.stream.id < g_.streams().size())
      r.name = g_.streams()[n.stream.id].name;
    if (r.name.empty() && n.kind == ProgramKind::Copy) r.name = n.dst.debugName();
    if (n.kind == ProgramKind::Execute || n.kind == ProgramKind::Copy ||
        n.kind == ProgramKind::StreamToTensor || n.kind == ProgramKind::TensorToStream)
      r.step = static_cast<int>(nextStep_++);
    const int parent = node_;
    node_ = static_cast<int>(report_.program.size());
    report_.program.push_back(std::move(r));
    lowerNode(n);
    node_ = parent;
  }

  void lowerNode(const ProgramNode& n) {
    switch (n.kind) {
      case ProgramKind::Sequence:
        for (const auto& c : n.children) lower(*c);
        break;
      case ProgramKind::Execute:
        lowerExecute(n);
        break;
      case ProgramKind::Copy:
        lowerCopy(n);
        break;
      case ProgramKind::StreamToTensor:
        lowerStream(n, true);
        break;
      case ProgramKind::TensorToStream:
        lowerStream(n, false);
        break;
      case ProgramKind::Repeat: {
        if (n.count == 0) break;
        std::vector<size_t> top(T_);
        std::vector<uint32_t> ctr(T_);
        for (unsigned t = 0; t < T_; ++t) {
          ctr[t] = alloc(t, 4, &TileMemoryReport::control, "control");
          cp_[t].op(TESS_CP_SET, {ctr[t], n.count});
          top[t] = cp_[t].words.size();
        }
        lower(*n.children[0]);
        for (unsigned t = 0; t < T_; ++t) {
          cp_[t].op(TESS_CP_LOOP, {ctr[t], static_cast<uint32_t>(top[t])});
          cp_[t].fixups.push_back(cp_[t].words.size() - 1);
        }
        break;
      }
      case ProgramKind::RepeatWhile: {
        std::vector<size_t> top(T_), jz(T_);
        std::vector<uint32_t> flag(T_);
        for (unsigned t = 0; t < T_; ++t) {
          flag[t] = alloc(t, 4, &TileMemoryReport::control, "control");
          top[t] = cp_[t].words.size();
        }
        lower(*n.children[0]);
        report_.program[node_].step = static_cast<int>(nextStep_++);
        // Every tile needs the predicate to take the same branch: multicast it to a flag word.
        const Loc p = locate(n.predicate)[0];
        XMessage m{p.tile, p.addr, 1, {}};
        for (unsigned t = 0; t < T_; ++t) m.dsts.push_back({t, flag[t], false});
        exchange({m}, fmt::format("predicate of \"{}\"", n.name));
        for (unsigned t = 0; t < T_; ++t) {
          cp_[t].op(TESS_CP_JUMPZ, {flag[t], 0});
          jz[t] = cp_[t].words.size() - 1;
          cp_[t].fixups.push_back(jz[t]);
        }
        lower(*n.children[1]);
        for (unsigned t = 0; t < T_; ++t) {
          cp_[t].op(TESS_CP_JUMP, {static_cast<uint32_t>(top[t])});
          cp_[t].fixups.push_back(cp_[t].words.size() - 1);
          cp_[t].words[jz[t]] = static_cast<uint32_t>(cp_[t].words.size());
        }
        break;
      }
    }
  }

  // Each tile's tensor bytes live at each step: the persistent ones and the temporaries whose
  // lifetime holds the step (a difference array over the steps).
  void reportLiveness() {
    report_.steps = static_cast<unsigned>(nextStep_);
    for (unsigned t = 0; t < T_; ++t) {
      std::vector<int64_t> delta(report_.steps + 1, 0);
      if (t < temporaries_.size()) {
        for (const auto& [bytes, first, last] : temporaries_[t]) {
          if (first < 0 || last >= nextStep_) {
            throw Error(fmt::format(
                "tile {}: a temporary lives over steps {}..{} of a program of {} steps (internal)",
                t, first, last, nextStep_));
          }
          delta[static_cast<size_t>(first)] += bytes;
          delta[static_cast<size_t>(last) + 1] -= bytes;
        }
      }
      std::vector<uint32_t>& live = report_.tiles[t].liveTensors;
      live.resize(report_.steps);
      int64_t sum = t < persistentBytes_.size() ? persistentBytes_[t] : report_.tiles[t].tensors;
      for (unsigned s = 0; s < report_.steps; ++s) live[s] = static_cast<uint32_t>(sum += delta[s]);
    }
  }

  Compiled finish() {
    reportLiveness();
    exe_.target = ChipShape{T_, mem_, g_.target().contexts};
    for (unsigned t = 0; t < T_; ++t) {
      ControlProgram& c = cp_[t];
      const uint32_t base = alloc(t, 4 * static_cast<uint32_t>(c.words.size()),
                                  &TileMemoryReport::control, "control");
      for (size_t f : c.fixups) c.words[f] = base + 4 * c.words[f];
      put(t, base, c.words);
      const uint32_t ptr[1] = {base};
      put(t, imageEnd_, ptr);
      report_.tiles[t].exchangeBuffers = scratchTop_ - scratchLow_[t];
    }
    // The codelet image: one blob at 0, on every tile.
    {
      const uint32_t blob = static_cast<uint32_t>(exe_.blobs.size());
      exe_.blobs.push_back(image_->bytes);
      for (unsigned t = 0; t < T_; ++t) exe_.segments.push_back({t, 0, blob});
    }
    // Each tile's data: one blob from imageEnd to the end of its persistent data.
    for (unsigned t = 0; t < T_; ++t) {
      const uint32_t lo = imageEnd_;
      std::vector<uint8_t> blob(next_[t] - lo, 0);
      for (const auto& [addr, bytes] : data_[t])
        std::copy(bytes.begin(), bytes.end(), blob.begin() + (addr - lo));
      exe_.segments.push_back({t, lo, static_cast<uint32_t>(exe_.blobs.size())});
      exe_.blobs.push_back(std::move(blob));
    }
    for (const GraphStream& s : g_.streams()) {
      exe_.streams.push_back(
          {s.name, s.toDevice ? StreamDirection::HostToDevice : StreamDirection::DeviceToHost});
    }
    for (const auto& [name, t] : g_.exposedTensors()) {
      ExeTensor et{name, {}};
      const std::vector<Loc> locs = locateWords(t, fmt::format("exposed tensor \"{}\"", name));
      for (size_t i = 0; i < locs.size();) {
        size_t j = i + 1;
        while (j < locs.size() && locs[j].tile == locs[i].tile &&
               locs[j].addr == locs[i].addr + 4 * (j - i))
          ++j;
        et.regions.push_back({locs[i].tile, locs[i].addr, static_cast<uint32_t>(4 * (j - i))});
        i = j;
      }
      exe_.tensors.push_back(std::move(et));
    }
    for (unsigned t = 0; t < T_; ++t) {
      auto& u = users_[t];
      std::vector<std::pair<std::string, uint32_t>> list(u.begin(), u.end());
      list.emplace_back("exchange buffers", report_.tiles[t].exchangeBuffers);
      std::sort(list.begin(), list.end(), [](auto& a, auto& b) { return a.second > b.second; });
      if (list.size() > 5) list.resize(5);
      report_.tiles[t].largest = std::move(list);
    }
    exe_.validate();
    return Compiled{std::move(exe_), std::move(report_)};
  }
};

}  // namespace

Compiled compile(const Graph& graph, const Program& prog, const CompileOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  Compiled c = [&] {
    Lowering merged(graph, options);
    try {
      return merged.run(prog);
    } catch (const OutOfMemoryError&) {
      // Merged supersteps keep results alive longer and gather two sets' inputs at once; a
      // program the pass left as it was would fail the same way again.
      if (!merged.mergedAny()) throw;
      CompileOptions apart = options;
      apart.mergeComputeSets = false;
      Compiled c = Lowering(graph, apart).run(prog);
      c.report.mergedDidNotFit = true;
      return c;
    }
  }();
  c.report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return c;
}

std::string CompileReport::toJson() const {
  nlohmann::ordered_json j;
  j["target"] = {{"tiles", target.tiles},
                 {"tileMemBytes", target.tileMemBytes},
                 {"contexts", target.contexts},
                 {"hasMatrixUnit", target.hasMatrixUnit},
                 {"peakFlopsPerCycle", target.peakFlopsPerCycle()}};
  j["compileSeconds"] = seconds;
  j["computeSets"] = computeSets;
  j["mergedComputeSets"] = mergedComputeSets;
  j["mergedDidNotFit"] = mergedDidNotFit;
  j["vertices"] = vertices;
  j["syncs"] = syncs;
  j["hostSyncs"] = hostSyncs;
  j["codeImageBytes"] = codeImageBytes;
  j["codelets"] = codelets;
  auto& tl = j["tiles"] = nlohmann::ordered_json::array();
  for (const TileMemoryReport& t : tiles) {
    // Live bytes as [step, bytes] where they change: a program of thousands of steps on 1,472
    // tiles stays a few MB, most tiles' temporaries changing at few steps.
    nlohmann::ordered_json live = nlohmann::ordered_json::array();
    for (size_t s = 0; s < t.liveTensors.size(); ++s) {
      if (s == 0 || t.liveTensors[s] != t.liveTensors[s - 1])
        live.push_back(nlohmann::ordered_json::array({s, t.liveTensors[s]}));
    }
    nlohmann::ordered_json lg = nlohmann::ordered_json::array();
    for (const auto& [n, b] : t.largest) lg.push_back({{"name", n}, {"bytes", b}});
    tl.push_back({{"tile", t.tile},
                  {"capacity", t.capacity},
                  {"used", t.used()},
                  {"code", t.code},
                  {"tensors", t.tensors},
                  {"tensorsWithoutLiveness", t.tensorsWithoutLiveness},
                  {"vertexState", t.vertexState},
                  {"exchangePrograms", t.exchangePrograms},
                  {"control", t.control},
                  {"exchangeBuffers", t.exchangeBuffers},
                  {"stacks", t.stacks},
                  {"largest", lg},
                  {"liveTensors", std::move(live)}});
  }
  auto& xl = j["exchanges"] = nlohmann::ordered_json::array();
  for (const ExchangeReport& x : exchanges) {
    xl.push_back({{"name", x.name},
                  {"cycles", x.cycles},
                  {"lowerBound", x.lowerBound},
                  {"phases", x.phases},
                  {"words", x.words},
                  {"localCopyWords", x.localCopyWords},
                  {"syncId", x.syncId}});
  }
  j["steps"] = steps;
  auto& pl = j["program"] = nlohmann::ordered_json::array();
  for (const ProgramNodeReport& n : program) {
    nlohmann::ordered_json o{{"kind", n.kind}, {"name", n.name}, {"parent", n.parent}};
    if (n.kind == "Repeat") o["count"] = n.count;
    if (n.step >= 0) o["step"] = n.step;
    if (!n.syncs.empty()) o["syncs"] = n.syncs;
    if (n.flops) o["flops"] = n.flops;
    if (n.computeAfter) o["computeAfter"] = n.computeAfter;
    pl.push_back(std::move(o));
  }
  return j.dump(2);
}

uint64_t CompileReport::flopsOf(size_t node) const {
  if (node >= program.size())
    throw Error(fmt::format("compile report: no program node {} (the program has {})", node,
                            program.size()));
  std::vector<std::vector<size_t>> children(program.size());
  for (size_t i = node + 1; i < program.size(); ++i) {
    if (program[i].parent >= 0) children[static_cast<size_t>(program[i].parent)].push_back(i);
  }
  const std::function<uint64_t(size_t)> run = [&](size_t i) {
    uint64_t f = program[i].flops;
    for (size_t c : children[i]) f += run(c);
    return program[i].kind == "Repeat" ? f * program[i].count : f;
  };
  return run(node);
}

int CompileReport::findNode(const std::string& kind, const std::string& name) const {
  for (size_t i = 0; i < program.size(); ++i) {
    if (program[i].kind == kind && program[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

std::string CompileReport::summary() const {
  std::string s = fmt::format(
      "compiled for {} tiles x {} bytes in {:.3f} s: {} compute sets ({}), {} vertices, "
      "{} syncs, {} host syncs\n"
      "codelet image: {} bytes on every tile (the runtime and {} codelets: {})\n",
      target.tiles, target.tileMemBytes, seconds, computeSets,
      mergedDidNotFit ? std::string("merged they did not fit: compiled apart")
                      : fmt::format("{} in others' supersteps", mergedComputeSets),
      vertices, syncs, hostSyncs, codeImageBytes, codelets.size(), fmt::join(codelets, ", "));
  std::vector<const TileMemoryReport*> byUse;
  for (const TileMemoryReport& t : tiles) byUse.push_back(&t);
  std::sort(byUse.begin(), byUse.end(), [](auto* a, auto* b) { return a->used() > b->used(); });
  s += "fullest tiles (bytes: used / capacity; code, tensors, vertex state, exchange programs, "
       "control, "
       "exchange buffers, stacks):\n";
  for (size_t i = 0; i < byUse.size() && i < 4; ++i) {
    const TileMemoryReport& t = *byUse[i];
    s += fmt::format("  tile {:4}: {:7} / {:7} ({:5.1f}%); {} {} {} {} {} {} {}\n", t.tile,
                     t.used(), t.capacity, 100.0 * t.used() / t.capacity, t.code, t.tensors,
                     t.vertexState, t.exchangePrograms, t.control, t.exchangeBuffers, t.stacks);
  }
  uint32_t peak = 0, peakAll = 0, used = 0, usedAll = 0;
  for (const TileMemoryReport& t : tiles) {
    peak = std::max(peak, t.tensors), peakAll = std::max(peakAll, t.tensorsWithoutLiveness);
    used = std::max(used, t.used()),
    usedAll = std::max(usedAll, t.used() - t.tensors + t.tensorsWithoutLiveness);
  }
  s += fmt::format(
      "tensors on the fullest tile: {} bytes with liveness, {} without; peak tile memory {} bytes "
      "with liveness, {} without\n",
      peak, peakAll, used, usedAll);
  uint64_t flops = 0;
  for (const ProgramNodeReport& n : program) flops += n.flops;
  s += fmt::format("FLOPs of one pass through the program (each Execute once): {}\n", flops);
  uint64_t cyc = 0, lb = 0;
  for (const ExchangeReport& x : exchanges) cyc += x.cycles, lb += x.lowerBound;
  s += fmt::format("exchanges: {} with {} cycles against a lower bound of {} ({:.2f}x)\n",
                   exchanges.size(), cyc, lb, lb ? double(cyc) / lb : 1.0);
  for (const ExchangeReport& x : exchanges) {
    s += fmt::format("  {:6} cycles, bound {:6} ({:.2f}x), {} phases: {}\n", x.cycles, x.lowerBound,
                     x.lowerBound ? double(x.cycles) / x.lowerBound : 1.0, x.phases, x.name);
  }
  return s;
}

}  // namespace tessera

#include "superstep_merge.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>

namespace tessera {

namespace {

// How far back an Execute looks for one to join (steps of its sequence): bounds the pass at
// O(steps x window) footprint comparisons on programs of thousands of steps.
constexpr size_t kWindow = 32;
// A merged Execute's report name lists this many of its sets.
constexpr unsigned kNamed = 4;

// What a step reads and writes (element runs of variables, sorted, overlapping runs joined) and,
// for an Execute, the tiles it has vertices on (sorted) and whether any of them is exclusive.
struct TileUse {
  uint32_t tile = 0;
  bool exclusive = false;
  bool operator<(const TileUse& o) const { return tile < o.tile; }
};
struct Footprint {
  std::vector<ElementRun> reads, writes;
  std::vector<TileUse> tiles;
};

// Sorted tile uses with each tile once (exclusive if any of its uses is).
void normalize(std::vector<TileUse>& tiles) {
  std::stable_sort(tiles.begin(), tiles.end());
  size_t out = 0;
  for (const TileUse& u : tiles) {
    if (out > 0 && tiles[out - 1].tile == u.tile) {
      tiles[out - 1].exclusive = tiles[out - 1].exclusive || u.exclusive;
    } else {
      tiles[out++] = u;
    }
  }
  tiles.resize(out);
}

bool before(const ElementRun& a, const ElementRun& b) {
  return std::tie(a.var, a.begin) < std::tie(b.var, b.begin);
}

// Sorted runs with overlapping and touching ones joined.
void coalesce(std::vector<ElementRun>& runs) {
  size_t out = 0;
  for (const ElementRun& r : runs) {
    if (out > 0 && runs[out - 1].var == r.var && r.begin <= runs[out - 1].end) {
      runs[out - 1].end = std::max(runs[out - 1].end, r.end);
    } else {
      runs[out++] = r;
    }
  }
  runs.resize(out);
}

void normalize(std::vector<ElementRun>& runs) {
  std::sort(runs.begin(), runs.end(), before);
  coalesce(runs);
}

bool overlap(const std::vector<ElementRun>& a, const std::vector<ElementRun>& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i].var != b[j].var) {
      a[i].var < b[j].var ? ++i : ++j;
    } else if (a[i].end <= b[j].begin) {
      ++i;
    } else if (b[j].end <= a[i].begin) {
      ++j;
    } else {
      return true;
    }
  }
  return false;
}

// b must not move before p: one writes what the other reads or writes.
bool dependent(const Footprint& b, const Footprint& p) {
  return overlap(b.reads, p.writes) || overlap(b.writes, p.reads) || overlap(b.writes, p.writes);
}

class Merger {
 public:
  explicit Merger(const Graph& g) : g_(g), sets_(g.computeSetNames().size()) {
    for (uint32_t vi = 0; vi < g.vertices().size(); ++vi) {
      const uint32_t cs = g.vertices()[vi].computeSet;
      if (cs < sets_.size()) sets_[cs].push_back(vi);
    }
  }

  MergedProgram run(const ProgramNode& root) {
    out_.root = rewrite(root);
    return std::move(out_);
  }

 private:
  struct Item {
    std::shared_ptr<ProgramNode> node;
    Footprint fp;
    bool barrier = false;  // nothing moves before it
    unsigned merged = 0;   // Executes merged into it
  };

  const Graph& g_;
  std::vector<std::vector<uint32_t>> sets_;  // vertices of each compute set
  MergedProgram out_;

  // Runs of t, whole words for float16 variables (two elements share a word, and the exchange
  // and the codelets move whole words).
  void add(std::vector<ElementRun>& to, const Tensor& t) const {
    for (ElementRun r : t.runs()) {
      if (g_.variables()[r.var].type == ElemType::Float16)
        r.begin &= ~1u, r.end = (r.end + 1) & ~1u;
      to.push_back(r);
    }
  }

  Footprint footprint(uint32_t cs) const {
    Footprint f;
    for (uint32_t vi : sets_[cs]) {
      const GraphVertex& v = g_.vertices()[vi];
      const CodeletInfo& c = g_.codelet(v.codelet);
      for (size_t fi = 0; fi < c.fields.size() && fi < v.fields.size(); ++fi) {
        const FieldKind k = c.fields[fi].kind;
        const GraphField& gf = v.fields[fi];
        if (k == FieldKind::Param || !gf.tensor.valid()) continue;
        if (gf.reads(k)) add(f.reads, gf.tensor);
        if (k != FieldKind::Input) add(f.writes, gf.tensor);
      }
      if (v.tile >= 0) f.tiles.push_back({static_cast<uint32_t>(v.tile), c.exclusive});
    }
    normalize(f.reads);
    normalize(f.writes);
    normalize(f.tiles);
    return f;
  }

  // No tile both have vertices on has an exclusive one.
  static bool canShareTiles(const Footprint& a, const Footprint& b) {
    size_t i = 0, j = 0;
    while (i < a.tiles.size() && j < b.tiles.size()) {
      if (a.tiles[i].tile < b.tiles[j].tile) {
        ++i;
      } else if (b.tiles[j].tile < a.tiles[i].tile) {
        ++j;
      } else {
        if (a.tiles[i].exclusive || b.tiles[j].exclusive) return false;
        ++i, ++j;
      }
    }
    return true;
  }

  // into's runs and tile uses with from's (both sorted already: merged, not sorted again).
  static void join(Footprint& into, const Footprint& from) {
    const auto mergeRuns = [](std::vector<ElementRun>& a, const std::vector<ElementRun>& b) {
      std::vector<ElementRun> both;
      both.reserve(a.size() + b.size());
      std::merge(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(both), before);
      coalesce(both);
      a = std::move(both);
    };
    mergeRuns(into.reads, from.reads);
    mergeRuns(into.writes, from.writes);
    into.tiles.insert(into.tiles.end(), from.tiles.begin(), from.tiles.end());
    normalize(into.tiles);
  }

  // The Execute of item p runs compute set cs already (a set run twice stays twice).
  bool runs(const Item& p, uint32_t cs) const {
    if (p.node->computeSet.id == cs) return true;
    auto it = out_.sets.find(p.node.get());
    return it != out_.sets.end() &&
           std::find(it->second.begin(), it->second.end(), cs) != it->second.end();
  }

  std::string nameOf(const ProgramNode& n) const {
    if (!n.name.empty()) return n.name;
    return n.computeSet.id < g_.computeSetNames().size() ? g_.computeSetNames()[n.computeSet.id]
                                                         : std::string();
  }

  void append(std::vector<Item>& items, const std::shared_ptr<ProgramNode>& n) {
    Item it{n, {}, false, 0};
    switch (n->kind) {
      case ProgramKind::Execute: {
        const uint32_t cs = n->computeSet.id;
        if (cs >= sets_.size()) break;  // lowerExecute reports it
        it.fp = footprint(cs);
        Item* target = nullptr;  // the earliest it can join
        for (size_t back = 0; back < items.size() && back < kWindow; ++back) {
          Item& p = items[items.size() - 1 - back];
          if (p.barrier || dependent(it.fp, p.fp)) break;
          if (p.node->kind == ProgramKind::Execute && canShareTiles(p.fp, it.fp) && !runs(p, cs))
            target = &p;
        }
        if (target) {
          Item& p = *target;
          std::vector<uint32_t>& sets = out_.sets[p.node.get()];
          if (sets.empty()) sets.push_back(p.node->computeSet.id);
          sets.push_back(cs);
          // Named after its first kNamed sets and the count of the others (a transformer's heads
          // merge by the dozen).
          if (++p.merged < kNamed) {
            p.node->name += " + " + nameOf(*n);
          } else {
            const size_t more = p.node->name.rfind(" + ");
            if (p.merged > kNamed) p.node->name.resize(more);
            p.node->name += fmt::format(" + {} more", p.merged - kNamed + 1);
          }
          join(p.fp, it.fp);
          return;
        }
        items.push_back(std::move(it));
        return;
      }
      case ProgramKind::Copy:
        add(it.fp.reads, n->src);
        add(it.fp.writes, n->dst);
        normalize(it.fp.reads);
        normalize(it.fp.writes);
        items.push_back(std::move(it));
        return;
      default:
        break;
    }
    it.barrier = true;
    items.push_back(std::move(it));
  }

  // n's children appended to items, unnamed sequences inlined.
  void flatten(const ProgramNode& n, std::vector<Item>& items) {
    for (const auto& c : n.children) {
      if (c->kind == ProgramKind::Sequence && c->name.empty()) {
        flatten(*c, items);
      } else {
        append(items, rewrite(*c));
      }
    }
  }

  std::shared_ptr<ProgramNode> rewrite(const ProgramNode& n) {
    auto copy = std::make_shared<ProgramNode>(n);
    if (copy->kind == ProgramKind::Execute) {
      copy->name = nameOf(n);
      return copy;
    }
    copy->children.clear();
    if (n.kind == ProgramKind::Sequence) {
      std::vector<Item> items;
      flatten(n, items);
      for (Item& it : items) copy->children.push_back(std::move(it.node));
    } else {
      for (const auto& c : n.children) copy->children.push_back(rewrite(*c));
    }
    return copy;
  }
};

}  // namespace

MergedProgram mergeComputeSets(const Graph& graph, const ProgramNode& root) {
  return Merger(graph).run(root);
}

}  // namespace tessera

// Exchange scheduling in phases (docs/compiler.md, "Exchange scheduling").
//
// A phase is a set of messages in which every tile sends at most one message and receives at most
// one; each is moved in one instruction per tile whose transfer cycles are fixed by the phase's
// base cycle T (counted from the release, as the engine counts):
//   - a tile that only sends:    SEND n      transfers at T .. T+n-1;
//   - a tile that only receives: RECV n      transfers at T+L .. T+L+n-1 (L = exchange latency);
//   - a tile that does both:     SENDRECV w  transfers at T .. T+w-1 with w = n_recv + L: it
//     receives at T+i what its sender put on the bus at T+i-L, so its first L received words are
//     junk (the bus before the sender's window) and are written to the L words before the
//     destination; the instruction also sends w - n_send words past its message, which nobody
//     receives. Hence "both" is used only where the L words before the destination are a guard or
//     a part of the same receive buffer that a later phase fills, and where n_send <= w.
// A tile's instructions cannot be back to back with a gap of exactly one cycle (DELAY n costs
// n+1 >= 2 cycles), so T is moved on until no tile of the phase would need one.
// Messages are taken longest first, then by shift (destination - source) mod tiles, so that
// equal messages of an all-to-all form whole permutations, then by destination address
// descending. Shift 1 comes first and shift 0 (a tile's own data) last: a tile then receives the
// chunks of a gather buffer ordered by source d-1, d-2, ..., 0, T-1, ..., d, each chunk's junk
// landing on a chunk still to come, except the last (its own), which its supervisor copies.
#include "exchange_scheduler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>

#include "exchange_encoding.hpp"
#include "tessera/error.hpp"

namespace tessera {

namespace {

constexpr uint32_t L = xchg::kLatency;

struct Dst {
  XDest d;
  uint32_t msg = 0;
  std::vector<uint32_t> preds;  // destinations whose range meets this one's junk window
  bool scheduled = false;
};

struct TileState {
  uint32_t time = 0;  // cycle at which the next instruction may start reading
  xchg::Writer w;
  bool used = false;
};

// What is wrong with a message's end on one tile, in the chip's terms (an address above the tile
// is named as such: one near 2^32 is a negative offset that wrapped).
std::string whyNot(uint32_t tile, uint32_t addr, uint32_t words, uint32_t tiles,
                   uint32_t memBytes) {
  if (tile >= tiles) return fmt::format("the chip has {} tiles", tiles);
  if (words > xchg::kMaxCount)
    return fmt::format("more than the {} words one message may carry", xchg::kMaxCount);
  if (addr % 4 != 0) return "the address is not word-aligned";
  if (addr >= memBytes) {
    return fmt::format("the address is beyond the tile's {} bytes{}", memBytes,
                       addr >= 0x80000000u ? " (a negative offset that wrapped)" : "");
  }
  return fmt::format("{} bytes from there end beyond the tile's {} bytes", 4ull * words, memBytes);
}

// The messages checked against the chip and merged by source range into multicasts, one
// destination per tile per message.
std::vector<XMessage> mergeMulticasts(uint32_t tiles, uint32_t memBytes,
                                      std::vector<XMessage> messages) {
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, std::vector<size_t>> bySource;
  std::vector<XMessage> msgs;
  for (XMessage& m : messages) {
    if (m.words == 0 || m.dsts.empty()) continue;
    if (m.src >= tiles || m.words > xchg::kMaxCount ||
        uint64_t{m.srcAddr} + 4ull * m.words > memBytes || m.srcAddr % 4 != 0) {
      throw Error(fmt::format("exchange: message of {} words from tile {} address 0x{:x}: {}",
                              m.words, m.src, m.srcAddr,
                              whyNot(m.src, m.srcAddr, m.words, tiles, memBytes)));
    }
    for (const XDest& d : m.dsts) {
      if (d.tile >= tiles || uint64_t{d.addr} + 4ull * m.words > memBytes || d.addr % 4 != 0) {
        throw Error(fmt::format("exchange: {} words to tile {} address 0x{:x}: {}", m.words, d.tile,
                                d.addr, whyNot(d.tile, d.addr, m.words, tiles, memBytes)));
      }
      auto& group = bySource[{m.src, m.srcAddr, m.words}];
      bool placed = false;
      for (size_t gi : group) {
        XMessage& g = msgs[gi];
        if (std::none_of(g.dsts.begin(), g.dsts.end(),
                         [&](const XDest& x) { return x.tile == d.tile; })) {
          g.dsts.push_back(d);
          placed = true;
          break;
        }
      }
      if (!placed) {
        msgs.push_back(XMessage{m.src, m.srcAddr, m.words, {d}});
        group.push_back(msgs.size() - 1);
      }
    }
  }
  return msgs;
}

// The phase-by-phase scheduler of merged messages (the file comment): it picks a phase of
// messages, places it at the earliest base cycle every tile of it allows, and repeats.
class PhaseScheduler {
 public:
  PhaseScheduler(uint32_t tiles, uint32_t memBytes, std::vector<XMessage> msgs)
      : tiles_(tiles),
        memBytes_(memBytes),
        msgs_(std::move(msgs)),
        msgDsts_(msgs_.size()),
        sent_(tiles, 0),
        received_(tiles, 0),
        st_(tiles),
        done_(msgs_.size(), false),
        sendMsg_(tiles, -1),
        recvDst_(tiles, -1),
        remaining_(msgs_.size()) {
    out_.programs.resize(tiles);
    findDestinations();
    for (uint32_t mi = 0; mi < msgs_.size(); ++mi) {
      sent_[msgs_[mi].src] += msgs_[mi].words;
      for (const XDest& d : msgs_[mi].dsts) received_[d.tile] += msgs_[mi].words;
    }
    orderMessages();
  }

  XSchedule run() {
    while (remaining_ > 0) {
      std::vector<uint32_t> phase, touched;
      pickPhase(phase, touched);
      if (phase.empty()) {
        copyStuckLocally();
      } else {
        placePhase(phase, touched);
      }
    }
    for (uint32_t t = 0; t < tiles_; ++t) {
      if (!st_[t].used) continue;
      st_[t].w.end();
      out_.cycles = std::max(out_.cycles, st_[t].time + 1);
      out_.programs[t] = std::move(st_[t].w.words);
    }
    for (uint32_t t = 0; t < tiles_; ++t) {
      out_.lowerBound =
          static_cast<uint32_t>(std::max<uint64_t>({out_.lowerBound, sent_[t], received_[t]}));
      out_.words += received_[t];
    }
    return std::move(out_);
  }

 private:
  // Destinations, and for each the other destinations its junk window [addr - 4L, addr) meets.
  void findDestinations() {
    for (uint32_t mi = 0; mi < msgs_.size(); ++mi) {
      for (const XDest& d : msgs_[mi].dsts) {
        msgDsts_[mi].push_back(static_cast<uint32_t>(dsts_.size()));
        dsts_.push_back(Dst{d, mi, {}, false});
      }
    }
    std::vector<std::vector<uint32_t>> perTile(tiles_);
    for (uint32_t i = 0; i < dsts_.size(); ++i) perTile[dsts_[i].d.tile].push_back(i);
    for (auto& list : perTile) {
      std::sort(list.begin(), list.end(),
                [&](uint32_t a, uint32_t b) { return dsts_[a].d.addr < dsts_[b].d.addr; });
      for (size_t k = 0; k < list.size(); ++k) {
        Dst& me = dsts_[list[k]];
        const uint64_t lo = me.d.addr >= 4 * L ? me.d.addr - 4 * L : 0;
        for (size_t j = k; j-- > 0;) {
          const Dst& o = dsts_[list[j]];
          const uint64_t oEnd = uint64_t{o.d.addr} + 4ull * msgs_[o.msg].words;
          if (oEnd <= lo) break;  // sorted by start; ranges of one exchange do not overlap
          me.preds.push_back(list[j]);
        }
      }
    }
  }

  void orderMessages() {
    order_.resize(msgs_.size());
    std::iota(order_.begin(), order_.end(), 0);
    std::sort(order_.begin(), order_.end(), [&](uint32_t a, uint32_t b) {
      const XMessage& x = msgs_[a];
      const XMessage& y = msgs_[b];
      // Shift 1 first and shift 0 (a tile's own data) last: see the file comment.
      const uint32_t sx = (x.dsts[0].tile + 2 * tiles_ - x.src - 1) % tiles_;
      const uint32_t sy = (y.dsts[0].tile + 2 * tiles_ - y.src - 1) % tiles_;
      return std::make_tuple(~x.words, sx, ~x.dsts[0].addr, x.src) <
             std::make_tuple(~y.words, sy, ~y.dsts[0].addr, y.src);
    });
  }

  bool junkSafe(uint32_t di) const {
    const Dst& d = dsts_[di];
    if (!d.d.guarded) return false;
    return std::none_of(d.preds.begin(), d.preds.end(),
                        [&](uint32_t p) { return dsts_[p].scheduled; });
  }

  // A tile that would both send message sendM and receive destination di: its receive must
  // tolerate junk, its send fit.
  bool bothOk(uint32_t sendM, uint32_t di) const {
    const uint32_t w = msgs_[dsts_[di].msg].words + L;
    return junkSafe(di) && msgs_[sendM].words <= w &&
           uint64_t{msgs_[sendM].srcAddr} + 4ull * w <= memBytes_;
  }

  // The next phase, in message order: every message whose tiles are still free in this phase.
  void pickPhase(std::vector<uint32_t>& phase, std::vector<uint32_t>& touched) {
    for (uint32_t mi : order_) {
      if (done_[mi]) continue;
      const XMessage& m = msgs_[mi];
      if (sendMsg_[m.src] >= 0) continue;
      bool ok = true;
      for (uint32_t di : msgDsts_[mi]) ok = ok && recvDst_[dsts_[di].d.tile] < 0;
      if (!ok) continue;
      for (uint32_t di : msgDsts_[mi]) {
        const uint32_t t = dsts_[di].d.tile;
        if (t == m.src)
          ok = ok && bothOk(mi, di);
        else if (sendMsg_[t] >= 0)
          ok = ok && bothOk(static_cast<uint32_t>(sendMsg_[t]), di);
      }
      if (recvDst_[m.src] >= 0) ok = ok && bothOk(mi, static_cast<uint32_t>(recvDst_[m.src]));
      if (!ok) continue;
      phase.push_back(mi);
      sendMsg_[m.src] = mi;
      touched.push_back(m.src);
      for (uint32_t di : msgDsts_[mi]) {
        recvDst_[dsts_[di].d.tile] = di;
        touched.push_back(dsts_[di].d.tile);
      }
    }
  }

  // No phase could be formed: only messages to their own tile whose junk would land on live data
  // are stuck. The supervisor copies those destinations; the rest of each message stays to be
  // scheduled.
  void copyStuckLocally() {
    bool progress = false;
    for (uint32_t mi : order_) {
      if (done_[mi]) continue;
      XMessage& m = msgs_[mi];
      auto& ids = msgDsts_[mi];
      for (size_t k = 0; k < ids.size();) {
        Dst& d = dsts_[ids[k]];
        if (d.d.tile != m.src) {
          ++k;
          continue;
        }
        out_.localCopies.push_back({d.d.tile, d.d.addr, m.srcAddr, m.words});
        received_[d.d.tile] -= m.words;
        d.scheduled = true;
        ids.erase(ids.begin() + static_cast<std::ptrdiff_t>(k));
        progress = true;
      }
      if (ids.empty()) {
        sent_[m.src] -= m.words;
        done_[mi] = true;
        --remaining_;
      }
    }
    if (!progress) throw Error("exchange scheduler: a message could not be placed");
  }

  // Where tile t's instruction of this phase starts reading, relative to the base cycle T.
  int64_t readOffset(uint32_t t) const {
    const bool s = sendMsg_[t] >= 0, r = recvDst_[t] >= 0;
    if (s && r) return -static_cast<int64_t>(xchg::kWordsSendRecv);
    if (s) return -static_cast<int64_t>(xchg::kWordsSend);
    return static_cast<int64_t>(L) - static_cast<int64_t>(xchg::kWordsRecv);
  }

  // Base cycle T of a phase: every tile's instruction must start reading at or after its time,
  // and never exactly one cycle after it.
  int64_t baseCycle(const std::vector<uint32_t>& touched) const {
    int64_t T = 0;
    for (uint32_t t : touched) T = std::max<int64_t>(T, int64_t{st_[t].time} - readOffset(t));
    for (bool moved = true; moved;) {
      moved = false;
      for (uint32_t t : touched) {
        if (T + readOffset(t) - int64_t{st_[t].time} == 1) {
          ++T;
          moved = true;
        }
      }
    }
    return T;
  }

  // Each tile of the phase gets its instruction (SEND, RECV or SENDRECV) at the phase's base cycle.
  void placePhase(const std::vector<uint32_t>& phase, std::vector<uint32_t>& touched) {
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    const int64_t T = baseCycle(touched);
    for (uint32_t t : touched) {
      TileState& s = st_[t];
      s.used = true;
      const uint32_t start = static_cast<uint32_t>(T + readOffset(t));
      if (start > s.time) s.w.delay(start - s.time - 1);
      const bool sends = sendMsg_[t] >= 0, recvs = recvDst_[t] >= 0;
      const uint32_t base = static_cast<uint32_t>(T);
      if (sends && recvs) {
        const Dst& d = dsts_[recvDst_[t]];
        const XMessage& sm = msgs_[sendMsg_[t]];
        const uint32_t w = msgs_[d.msg].words + L;
        s.w.sendRecv(w, sm.srcAddr, msgs_[d.msg].src, d.d.addr - 4 * L);
        s.time = base + w;
      } else if (sends) {
        const XMessage& sm = msgs_[sendMsg_[t]];
        s.w.send(sm.words, sm.srcAddr);
        s.time = base + sm.words;
      } else {
        const Dst& d = dsts_[recvDst_[t]];
        s.w.recv(msgs_[d.msg].words, msgs_[d.msg].src, d.d.addr);
        s.time = base + L + msgs_[d.msg].words;
      }
    }
    for (uint32_t mi : phase) {
      done_[mi] = true;
      --remaining_;
      for (uint32_t di : msgDsts_[mi]) dsts_[di].scheduled = true;
    }
    for (uint32_t t : touched) sendMsg_[t] = recvDst_[t] = -1;
    ++out_.phases;
  }

  const uint32_t tiles_;
  const uint32_t memBytes_;
  std::vector<XMessage> msgs_;
  std::vector<Dst> dsts_;
  std::vector<std::vector<uint32_t>> msgDsts_;  // each message's destinations (indices into dsts_)
  std::vector<uint32_t> order_;                 // messages in the order phases take them
  std::vector<uint64_t> sent_, received_;       // words per tile
  std::vector<TileState> st_;
  std::vector<bool> done_;
  std::vector<int64_t> sendMsg_,
      recvDst_;  // in the phase being formed: -1, or what tile t sends/receives
  size_t remaining_;
  XSchedule out_;
};

}  // namespace

XSchedule scheduleExchange(uint32_t tiles, uint32_t memBytes, std::vector<XMessage> messages) {
  return PhaseScheduler(tiles, memBytes, mergeMulticasts(tiles, memBytes, std::move(messages)))
      .run();
}

}  // namespace tessera

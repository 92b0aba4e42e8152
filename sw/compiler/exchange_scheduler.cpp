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

}  // namespace

XSchedule scheduleExchange(uint32_t tiles, uint32_t memBytes, std::vector<XMessage> messages) {
  XSchedule out;
  out.programs.resize(tiles);
  // Merge messages with one source range into multicasts, one destination per tile per message.
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, std::vector<size_t>> bySource;
  std::vector<XMessage> msgs;
  for (XMessage& m : messages) {
    if (m.words == 0 || m.dsts.empty()) continue;
    if (m.src >= tiles || m.words > xchg::kMaxCount ||
        uint64_t{m.srcAddr} + 4ull * m.words > memBytes || m.srcAddr % 4 != 0) {
      throw Error(fmt::format("exchange: message of {} words from tile {} address 0x{:x} does not fit",
                              m.words, m.src, m.srcAddr));
    }
    for (const XDest& d : m.dsts) {
      if (d.tile >= tiles || uint64_t{d.addr} + 4ull * m.words > memBytes || d.addr % 4 != 0) {
        throw Error(fmt::format("exchange: {} words to tile {} address 0x{:x} do not fit", m.words,
                                d.tile, d.addr));
      }
      auto& group = bySource[{m.src, m.srcAddr, m.words}];
      bool placed = false;
      for (size_t gi : group) {
        XMessage& g = msgs[gi];
        if (std::none_of(g.dsts.begin(), g.dsts.end(), [&](const XDest& x) { return x.tile == d.tile; })) {
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

  // Destinations, and for each the other destinations its junk window [addr - 4L, addr) meets.
  std::vector<Dst> dsts;
  std::vector<std::vector<uint32_t>> msgDsts(msgs.size());
  for (uint32_t mi = 0; mi < msgs.size(); ++mi) {
    for (const XDest& d : msgs[mi].dsts) {
      msgDsts[mi].push_back(static_cast<uint32_t>(dsts.size()));
      dsts.push_back(Dst{d, mi, {}, false});
    }
  }
  {
    std::vector<std::vector<uint32_t>> perTile(tiles);
    for (uint32_t i = 0; i < dsts.size(); ++i) perTile[dsts[i].d.tile].push_back(i);
    for (auto& list : perTile) {
      std::sort(list.begin(), list.end(), [&](uint32_t a, uint32_t b) { return dsts[a].d.addr < dsts[b].d.addr; });
      for (size_t k = 0; k < list.size(); ++k) {
        Dst& me = dsts[list[k]];
        const uint64_t lo = me.d.addr >= 4 * L ? me.d.addr - 4 * L : 0;
        for (size_t j = k; j-- > 0;) {
          const Dst& o = dsts[list[j]];
          const uint64_t oEnd = uint64_t{o.d.addr} + 4ull * msgs[o.msg].words;
          if (oEnd <= lo) break;  // sorted by start; ranges of one exchange do not overlap
          me.preds.push_back(list[j]);
        }
      }
    }
  }
  auto junkSafe = [&](uint32_t di) {
    const Dst& d = dsts[di];
    if (!d.d.guarded) return false;
    return std::none_of(d.preds.begin(), d.preds.end(), [&](uint32_t p) { return dsts[p].scheduled; });
  };

  std::vector<uint64_t> sent(tiles, 0), received(tiles, 0);
  for (uint32_t mi = 0; mi < msgs.size(); ++mi) {
    sent[msgs[mi].src] += msgs[mi].words;
    for (const XDest& d : msgs[mi].dsts) received[d.tile] += msgs[mi].words;
  }

  std::vector<uint32_t> order(msgs.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const XMessage& x = msgs[a];
    const XMessage& y = msgs[b];
    // Shift 1 first and shift 0 (a tile's own data) last: see the file comment.
    const uint32_t sx = (x.dsts[0].tile + 2 * tiles - x.src - 1) % tiles;
    const uint32_t sy = (y.dsts[0].tile + 2 * tiles - y.src - 1) % tiles;
    return std::make_tuple(~x.words, sx, ~x.dsts[0].addr, x.src) <
           std::make_tuple(~y.words, sy, ~y.dsts[0].addr, y.src);
  });

  std::vector<TileState> st(tiles);
  std::vector<bool> done(msgs.size(), false);
  std::vector<int64_t> sendMsg(tiles, -1), recvDst(tiles, -1);
  size_t remaining = msgs.size();
  while (remaining > 0) {
    std::vector<uint32_t> phase, touched;
    for (uint32_t mi : order) {
      if (done[mi]) continue;
      const XMessage& m = msgs[mi];
      if (sendMsg[m.src] >= 0) continue;
      bool ok = true;
      for (uint32_t di : msgDsts[mi]) ok = ok && recvDst[dsts[di].d.tile] < 0;
      if (!ok) continue;
      // A tile that would both send and receive: its receive must tolerate junk, its send fit.
      auto bothOk = [&](uint32_t sendM, uint32_t di) {
        const uint32_t w = msgs[dsts[di].msg].words + L;
        return junkSafe(di) && msgs[sendM].words <= w && uint64_t{msgs[sendM].srcAddr} + 4ull * w <= memBytes;
      };
      for (uint32_t di : msgDsts[mi]) {
        const uint32_t t = dsts[di].d.tile;
        if (t == m.src) ok = ok && bothOk(mi, di);
        else if (sendMsg[t] >= 0) ok = ok && bothOk(static_cast<uint32_t>(sendMsg[t]), di);
      }
      if (recvDst[m.src] >= 0) ok = ok && bothOk(mi, static_cast<uint32_t>(recvDst[m.src]));
      if (!ok) continue;
      phase.push_back(mi);
      sendMsg[m.src] = mi;
      touched.push_back(m.src);
      for (uint32_t di : msgDsts[mi]) {
        recvDst[dsts[di].d.tile] = di;
        touched.push_back(dsts[di].d.tile);
      }
    }
    if (phase.empty()) {
      // Only messages to their own tile whose junk would land on live data are stuck: the
      // supervisor copies those destinations; the rest of each message stays to be scheduled.
      bool progress = false;
      for (uint32_t mi : order) {
        if (done[mi]) continue;
        XMessage& m = msgs[mi];
        auto& ids = msgDsts[mi];
        for (size_t k = 0; k < ids.size();) {
          Dst& d = dsts[ids[k]];
          if (d.d.tile != m.src) {
            ++k;
            continue;
          }
          out.localCopies.push_back({d.d.tile, d.d.addr, m.srcAddr, m.words});
          received[d.d.tile] -= m.words;
          d.scheduled = true;
          ids.erase(ids.begin() + static_cast<std::ptrdiff_t>(k));
          progress = true;
        }
        if (ids.empty()) {
          sent[m.src] -= m.words;
          done[mi] = true;
          --remaining;
        }
      }
      if (!progress) throw Error("exchange scheduler: a message could not be placed");
      continue;
    }
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    // Base cycle T: every tile's instruction must start reading at or after its time, and never
    // exactly one cycle after it.
    auto readOffset = [&](uint32_t t) -> int64_t {  // read start - T
      const bool s = sendMsg[t] >= 0, r = recvDst[t] >= 0;
      if (s && r) return -static_cast<int64_t>(xchg::kWordsSendRecv);
      if (s) return -static_cast<int64_t>(xchg::kWordsSend);
      return static_cast<int64_t>(L) - static_cast<int64_t>(xchg::kWordsRecv);
    };
    int64_t T = 0;
    for (uint32_t t : touched) T = std::max<int64_t>(T, int64_t{st[t].time} - readOffset(t));
    for (bool moved = true; moved;) {
      moved = false;
      for (uint32_t t : touched) {
        if (T + readOffset(t) - int64_t{st[t].time} == 1) {
          ++T;
          moved = true;
        }
      }
    }
    for (uint32_t t : touched) {
      TileState& s = st[t];
      s.used = true;
      const uint32_t start = static_cast<uint32_t>(T + readOffset(t));
      if (start > s.time) s.w.delay(start - s.time - 1);
      const bool sends = sendMsg[t] >= 0, recvs = recvDst[t] >= 0;
      const uint32_t base = static_cast<uint32_t>(T);
      if (sends && recvs) {
        const Dst& d = dsts[recvDst[t]];
        const XMessage& sm = msgs[sendMsg[t]];
        const uint32_t w = msgs[d.msg].words + L;
        s.w.sendRecv(w, sm.srcAddr, msgs[d.msg].src, d.d.addr - 4 * L);
        s.time = base + w;
      } else if (sends) {
        const XMessage& sm = msgs[sendMsg[t]];
        s.w.send(sm.words, sm.srcAddr);
        s.time = base + sm.words;
      } else {
        const Dst& d = dsts[recvDst[t]];
        s.w.recv(msgs[d.msg].words, msgs[d.msg].src, d.d.addr);
        s.time = base + L + msgs[d.msg].words;
      }
    }
    for (uint32_t mi : phase) {
      done[mi] = true;
      --remaining;
      for (uint32_t di : msgDsts[mi]) dsts[di].scheduled = true;
    }
    for (uint32_t t : touched) sendMsg[t] = recvDst[t] = -1;
    ++out.phases;
  }
  for (uint32_t t = 0; t < tiles; ++t) {
    if (!st[t].used) continue;
    st[t].w.end();
    out.cycles = std::max(out.cycles, st[t].time + 1);
    out.programs[t] = std::move(st[t].w.words);
  }
  for (uint32_t t = 0; t < tiles; ++t) {
    out.lowerBound = static_cast<uint32_t>(std::max<uint64_t>({out.lowerBound, sent[t], received[t]}));
    out.words += received[t];
  }
  return out;
}

}  // namespace tessera

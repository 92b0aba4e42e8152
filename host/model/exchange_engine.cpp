#include "exchange_engine.hpp"

#include "exchange_encoding.hpp"

namespace tessera::model {
namespace {

// Words of an instruction by opcode; 0 = unknown opcode.
unsigned wordsOf(uint32_t op) {
  switch (op) {
    case TESS_XOP_END:
    case TESS_XOP_DELAY:
      return 1;
    case TESS_XOP_SEND:
    case TESS_XOP_RECV:
      return 2;
    case TESS_XOP_SENDRECV:
      return 3;
    default:
      return 0;
  }
}

// A range of n words at addr lies word-aligned and wholly inside SRAM.
bool rangeOk(uint32_t addr, uint32_t n, uint32_t memBytes) {
  return (addr & 3) == 0 && uint64_t{addr} + 4 * uint64_t{n} <= memBytes;
}

}  // namespace

void ExchangeEngine::start(uint32_t prog, uint64_t release) {
  *this = ExchangeEngine{};
  phase_ = Phase::Fetch;
  release_ = release;
  pc_ = prog;
}

void ExchangeEngine::startAbsent(uint32_t prog, uint64_t release) {
  start(prog, release);
  absent_ = true;
}

bool ExchangeEngine::fail(uint64_t s, uint32_t cause, uint32_t value) {
  faulted_ = true;
  fault_ = ExchangeFault{s, pc_, cause, value};
  return false;
}

// At the cycle of the instruction's last word (t+k-1): check it and set up its execution.
bool ExchangeEngine::decode(uint64_t s, const TileModel& tile, unsigned numTiles) {
  const uint32_t w0 = w_[0];
  const uint32_t op = xchg::opOf(w0);
  const uint32_t n = xchg::countOf(w0);
  // Order of checks: words outside SRAM, fields of word 0, the bus field, the send range, the
  // receive range (docs/chip.md lists the conditions; the order is this model's choice).
  for (unsigned k = 1; k < words_; ++k) {
    const uint64_t addr = uint64_t{pc_} + 4 * k;
    if (addr + 4 > tile.memBytes()) return fail(s, TESS_CAUSE_XCHG_ACCESS, uint32_t(addr));
  }
  if (op == TESS_XOP_END) {
    if (w0 != 0) return fail(s, TESS_CAUSE_XCHG_INSN, w0);
    phase_ = Phase::Done;
    end_ = s + 1;
    return true;
  }
  if (xchg::reservedOf(w0) != 0 || n == 0) return fail(s, TESS_CAUSE_XCHG_INSN, w0);
  if (op == TESS_XOP_DELAY) {
    phase_ = Phase::Delay;
    delayEnd_ = s + 1 + n;
    return true;
  }
  send_ = op == TESS_XOP_SEND || op == TESS_XOP_SENDRECV;
  recv_ = op == TESS_XOP_RECV || op == TESS_XOP_SENDRECV;
  if (recv_) {
    const uint32_t busWord = w_[words_ - 1];
    srcBus_ = xchg::busOf(busWord);
    if (srcBus_ >= numTiles) return fail(s, TESS_CAUSE_XCHG_INSN, busWord);
    raddr_ = xchg::addrOf(busWord);
  }
  if (send_) {
    saddr_ = w_[1];
    if (!rangeOk(saddr_, n, tile.memBytes())) return fail(s, TESS_CAUSE_XCHG_ACCESS, saddr_);
  }
  if (recv_ && !rangeOk(raddr_, n, tile.memBytes())) {
    return fail(s, TESS_CAUSE_XCHG_ACCESS, raddr_);
  }
  phase_ = Phase::Transfer;
  n_ = n;
  i_ = 0;
  transferStart_ = s + 1;
  return true;
}

bool ExchangeEngine::readPhase(uint64_t s, const TileModel& tile, unsigned numTiles,
                               uint32_t& bus) {
  bus = 0;
  if (faulted_) return false;
  if (absent_) return fail(s, TESS_CAUSE_XCHG_ABSENT, pc_);
  if (phase_ == Phase::Delay && s >= delayEnd_) {
    phase_ = Phase::Fetch;
    wordIndex_ = 0;
    pc_ += 4;
  }
  switch (phase_) {
    case Phase::Fetch: {
      if (wordIndex_ == 0) {
        // Word 0 decides k; an unreadable or unknown word 0 is its own last word.
        if ((pc_ & 3) != 0 || uint64_t{pc_} + 4 > tile.memBytes()) {
          return fail(s, TESS_CAUSE_XCHG_ACCESS, pc_);
        }
        w_[0] = tile.sramWord(pc_);
        words_ = wordsOf(xchg::opOf(w_[0]));
        if (words_ == 0) return fail(s, TESS_CAUSE_XCHG_INSN, w_[0]);
      } else {
        const uint64_t addr = uint64_t{pc_} + 4 * wordIndex_;
        w_[wordIndex_] = addr + 4 <= tile.memBytes() ? tile.sramWord(uint32_t(addr)) : 0;
      }
      if (wordIndex_ + 1 == words_) return decode(s, tile, numTiles);
      ++wordIndex_;
      return true;
    }
    case Phase::Transfer:
      if (send_ && s >= transferStart_) bus = tile.sramWord(saddr_ + 4 * i_);
      return true;
    default:
      return true;
  }
}

void ExchangeEngine::writePhase(uint64_t s, TileModel& tile, const BusHistory* history) {
  if (faulted_ || phase_ != Phase::Transfer || s < transferStart_) return;
  if (recv_) {
    const uint64_t from = s - TESS_EXCHANGE_LATENCY;
    const uint32_t word =
        s >= release_ + TESS_EXCHANGE_LATENCY ? history[srcBus_][from % kBusHistory] : 0u;
    tile.writeSramWord(raddr_ + 4 * i_, word);
  }
  if (++i_ == n_) {
    phase_ = Phase::Fetch;
    wordIndex_ = 0;
    pc_ += 4 * words_;
  }
}

}  // namespace tessera::model

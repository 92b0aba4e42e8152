#include <fmt/format.h>

#include "tessera/chip_params.h"
#include "tessera/device.hpp"

namespace tessera {

const char* trapCauseName(uint32_t cause) {
  switch (cause) {
    case TESS_CAUSE_INSN_MISALIGNED:
      return "instruction address misaligned";
    case TESS_CAUSE_INSN_ACCESS:
      return "instruction access fault";
    case TESS_CAUSE_ILLEGAL_INSN:
      return "illegal instruction";
    case TESS_CAUSE_BREAKPOINT:
      return "breakpoint";
    case TESS_CAUSE_LOAD_MISALIGNED:
      return "load address misaligned";
    case TESS_CAUSE_LOAD_ACCESS:
      return "load access fault";
    case TESS_CAUSE_STORE_MISALIGNED:
      return "store address misaligned";
    case TESS_CAUSE_STORE_ACCESS:
      return "store access fault";
    case TESS_CAUSE_ECALL:
      return "environment call";
    case TESS_CAUSE_CONTEXT_MISUSE:
      return "context misuse";
    case TESS_CAUSE_SYNC_MISMATCH:
      return "sync descriptor mismatch";
    case TESS_CAUSE_SYNC_HALTED:
      return "sync with a halted tile";
    case TESS_CAUSE_XCHG_INSN:
      return "bad exchange instruction";
    case TESS_CAUSE_XCHG_ACCESS:
      return "exchange access fault";
    case TESS_CAUSE_XCHG_ABSENT:
      return "exchange program on a chip without exchange engines";
    default:
      return "unknown cause";
  }
}

std::string describeTrap(const TrapInfo& t) {
  return fmt::format("tile {} context {} trapped at pc 0x{:08x}: {} (cause {}), value 0x{:08x}",
                     t.tile, t.context, t.pc, trapCauseName(t.cause), t.cause, t.value);
}

}  // namespace tessera

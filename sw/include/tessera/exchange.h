/* Exchange programs (docs/chip.md, "Exchange programs") for C and C++ device code.
 *
 * Static programs: word arrays built with the macros, e.g.
 *   static const uint32_t prog[] = { XDELAY(2), XRECV(8, 0, inbox), XEND };
 * Each macro expands to the instruction's words separated by commas. Addresses may be link-time
 * constants (&buf): bus and address are combined with '+', not '|', so the initializer stays a
 * relocatable constant (addresses are < 1 MiB, so '+' equals '|').
 *
 * Programs that depend on the tile id or on data are built at run time with tessera_xprog, which
 * also does the "compiler" part: it knows the timing rules and places each transfer on a given
 * cycle, counted from the release R (cycle 0 = R):
 *   - an instruction of k words (END, DELAY: 1; SEND, RECV: 2; SENDRECV: 3) starting at t reads its
 *     words at t..t+k-1 and transfers at t+k..t+k+n-1; the next instruction starts at t+k+n;
 *   - DELAY n: next instruction at t+1+n (n >= 1), so a gap of exactly 1 cycle cannot be made;
 *   - a receive at cycle r takes what the sender put on its bus at r - EXCHANGE_LATENCY.
 * A tessera_xprog with a NULL buffer only keeps time: every tile can model the engines of the other
 * tiles with the same code and so agree on a global schedule. */
#ifndef TESSERA_EXCHANGE_H
#define TESSERA_EXCHANGE_H

#include <stdint.h>

#include "tessera/chip_params.h"

#ifdef __cplusplus
extern "C" {
#endif

/** First word of an instruction: opcode in bits 31..28, n in bits 23..0 (n must be < 2^24; a larger
 * n sets reserved bits and the engine reports a bad instruction instead of truncating it). */
#define TESSERA_XWORD0(op, n) (((uint32_t)(op) << TESS_XCHG_OP_LSB) | (uint32_t)(n))
/** An address operand (a pointer or an integer). */
#define TESSERA_XADDR(addr) ((uint32_t)(uintptr_t)(addr))
/** Receive operand: bus (tile) in bits 31..TESS_XCHG_BUS_LSB, the address below. */
#define TESSERA_XBUSADDR(bus, addr) (((uint32_t)(bus) << TESS_XCHG_BUS_LSB) + TESSERA_XADDR(addr))

/** END: the engine stops (1 word). */
#define XEND TESSERA_XWORD0(TESS_XOP_END, 0)
/** DELAY n: n idle cycles after the instruction word (1 word, n >= 1). */
#define XDELAY(n) TESSERA_XWORD0(TESS_XOP_DELAY, n)
/** SEND n, addr: put n words from addr on this tile's bus (2 words). */
#define XSEND(n, addr) TESSERA_XWORD0(TESS_XOP_SEND, n), TESSERA_XADDR(addr)
/** RECV n, bus, addr: write n words from tile `bus`'s bus to addr (2 words). */
#define XRECV(n, bus, addr) TESSERA_XWORD0(TESS_XOP_RECV, n), TESSERA_XBUSADDR(bus, addr)
/** SENDRECV n, saddr, bus, raddr: SEND and RECV on the same cycles (3 words). */
#define XSENDRECV(n, saddr, bus, raddr) \
  TESSERA_XWORD0(TESS_XOP_SENDRECV, n), TESSERA_XADDR(saddr), TESSERA_XBUSADDR(bus, raddr)

/** Instruction lengths in words (= cycles spent reading them). */
enum {
  TESSERA_XWORDS_END = 1,
  TESSERA_XWORDS_DELAY = 1,
  TESSERA_XWORDS_SEND = 2,
  TESSERA_XWORDS_RECV = 2,
  TESSERA_XWORDS_SENDRECV = 3,
};

/** A run-time exchange program under construction, with the engine's time. */
typedef struct tessera_xprog {
  uint32_t* words; /**< output buffer, NULL = keep time only */
  uint32_t cap;    /**< buffer capacity in words */
  uint32_t len;    /**< words emitted (counted also when words is NULL) */
  uint32_t time;   /**< cycle (from R) at which the next instruction starts */
  int error; /**< set when an instruction did not fit, or could not start on the asked cycle */
} tessera_xprog;

/** Start a program in buf (cap words; buf may be NULL to keep time only). */
void tessera_xprog_init(tessera_xprog* p, uint32_t* buf, uint32_t cap);

/** Earliest cycle >= at at which an instruction of k words appended now can make its first
 * transfer (a gap of one idle cycle is impossible, so this may be one later than asked). */
uint32_t tessera_xprog_earliest(const tessera_xprog* p, uint32_t k, uint32_t at);

/** Idle until `start` (>= time, != time + 1): appends a DELAY unless start == time. */
void tessera_xprog_idle_until(tessera_xprog* p, uint32_t start);

/** Append SEND so its words go on the bus at cycles at..at+n-1; at must be a value
 * tessera_xprog_earliest(p, 2, x) can return. */
void tessera_xprog_send(tessera_xprog* p, uint32_t at, uint32_t n, const void* addr);

/** Append RECV of the n words tile `bus` sends at cycles sent..sent+n-1 (received at
 * sent + EXCHANGE_LATENCY ...). */
void tessera_xprog_recv(tessera_xprog* p, uint32_t sent, uint32_t n, uint32_t bus, void* addr);

/** Append SENDRECV transferring at cycles at..at+n-1 (the receive takes what `bus` sent at
 * at - EXCHANGE_LATENCY ...). */
void tessera_xprog_sendrecv(tessera_xprog* p, uint32_t at, uint32_t n, const void* saddr,
                            uint32_t bus, void* raddr);

/** Append END; returns the cycle (from R) after the END, i.e. X - R in docs/chip.md. */
uint32_t tessera_xprog_end(tessera_xprog* p);

#ifdef __cplusplus
}
#endif

#endif

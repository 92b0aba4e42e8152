/* Run-time construction of exchange programs with their timing (tessera/exchange.h). */
#include "tessera/exchange.h"

static void put(tessera_xprog* p, uint32_t w) {
  if (p->words) {
    if (p->len >= p->cap) {
      p->error = 1;
      return;
    }
    p->words[p->len] = w;
  }
  ++p->len;
}

void tessera_xprog_init(tessera_xprog* p, uint32_t* buf, uint32_t cap) {
  p->words = buf;
  p->cap = cap;
  p->len = 0;
  p->time = 0;
  p->error = 0;
}

uint32_t tessera_xprog_earliest(const tessera_xprog* p, uint32_t k, uint32_t at) {
  uint32_t start = at >= k ? at - k : 0;
  if (start < p->time) start = p->time;
  /* The shortest DELAY (n = 1) takes 2 cycles: start time + 1 cannot be reached. */
  if (start == p->time + 1) start = p->time + 2;
  return start + k;
}

void tessera_xprog_idle_until(tessera_xprog* p, uint32_t start) {
  if (start == p->time) return;
  if (start < p->time + 2) { /* in the past, or the impossible 1-cycle gap */
    p->error = 1;
    return;
  }
  put(p, XDELAY(start - p->time - 1));
  p->time = start;
}

/* Start an instruction of k words so that its first transfer is at cycle at. */
static void place(tessera_xprog* p, uint32_t k, uint32_t at) {
  if (at < k) {
    p->error = 1;
    return;
  }
  tessera_xprog_idle_until(p, at - k);
}

void tessera_xprog_send(tessera_xprog* p, uint32_t at, uint32_t n, const void* addr) {
  place(p, TESSERA_XWORDS_SEND, at);
  put(p, TESSERA_XWORD0(TESS_XOP_SEND, n));
  put(p, TESSERA_XADDR(addr));
  p->time = at + n;
}

void tessera_xprog_recv(tessera_xprog* p, uint32_t sent, uint32_t n, uint32_t bus, void* addr) {
  const uint32_t at = sent + TESS_EXCHANGE_LATENCY;
  place(p, TESSERA_XWORDS_RECV, at);
  put(p, TESSERA_XWORD0(TESS_XOP_RECV, n));
  put(p, TESSERA_XBUSADDR(bus, addr));
  p->time = at + n;
}

void tessera_xprog_sendrecv(tessera_xprog* p, uint32_t at, uint32_t n, const void* saddr,
                            uint32_t bus, void* raddr) {
  place(p, TESSERA_XWORDS_SENDRECV, at);
  put(p, TESSERA_XWORD0(TESS_XOP_SENDRECV, n));
  put(p, TESSERA_XADDR(saddr));
  put(p, TESSERA_XBUSADDR(bus, raddr));
  p->time = at + n;
}

uint32_t tessera_xprog_end(tessera_xprog* p) {
  put(p, XEND);
  p->time += 1;
  return p->time;
}

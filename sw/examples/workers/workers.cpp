// Five workers each sum their slice of a float vector; the supervisor waits, adds the five
// partial sums and checks the total against the closed form. Exit 0 when it matches.
#include "tessera/tile.h"

namespace {

constexpr unsigned kWorkers = TESSERA_NUM_WORKERS;
constexpr unsigned kPerWorker = 40;
constexpr unsigned kN = kWorkers * kPerWorker;

float data[kN];

/// What one worker reads and writes: its slice and its result.
struct Slice {
  const float* begin;
  unsigned count;
  float sum;
  unsigned context;  // which context ran it, to show the work really was spread
};

Slice slices[kWorkers];

/// Worker body: plain float sum of the slice (every partial sum is an exact small integer).
void sumSlice(void* arg) {
  Slice* s = static_cast<Slice*>(arg);
  float acc = 0.0f;
  for (unsigned i = 0; i < s->count; ++i) acc += s->begin[i];
  s->sum = acc;
  s->context = tessera_context_id();
}

}  // namespace

int main() {
  for (unsigned i = 0; i < kN; ++i) data[i] = static_cast<float>(i);
  for (unsigned w = 0; w < kWorkers; ++w) {
    slices[w] = Slice{data + w * kPerWorker, kPerWorker, -1.0f, 0};
    tessera_run_worker(w + 1, sumSlice, &slices[w]);
  }
  tessera_wait_workers();

  float total = 0.0f;
  unsigned contextMask = 0;
  for (unsigned w = 0; w < kWorkers; ++w) {
    total += slices[w].sum;
    contextMask |= 1u << slices[w].context;
  }
  // 0 + 1 + ... + (N-1) = N(N-1)/2 = 19900 for N = 200: exact in binary32 (< 2^24), as is every
  // partial sum, so float addition in any order gives exactly this value.
  const unsigned expected = kN * (kN - 1) / 2;
  tessera_puts("workers: sum ");
  tessera_print_uint(static_cast<unsigned>(total));
  tessera_puts(" from contexts ");
  tessera_print_hex(contextMask);
  tessera_putc('\n');
  if (total != static_cast<float>(expected)) return 1;
  if (contextMask != 0x3eu) return 2;  // contexts 1..5
  return 0;
}

/* The trapping half of trap_amp_absent_c.S: one C macro of tessera/amp.h, at the label trap_pc.
 * p arrives in a0 and is pinned there, and AMP.RD's result in ft0 (a local register variable is
 * honoured for asm operands), so nothing needs computing between the label and the instruction. */
#include "tessera/amp.h"

void amp_c_form(const float* p0);
float amp_c_sink;

__attribute__((noinline)) void amp_c_form(const float* p0) {
  register const float* p __asm__("a0") = p0;
  __asm__ volatile(".globl trap_pc\ntrap_pc:");
#if TRAP_AMP_C_FORM == 0
  TESSERA_AMP_S(p, 1, 2);
  __asm__ volatile("" : : "r"(p));
#elif TRAP_AMP_C_FORM == 1
  register float f __asm__("ft0");
  TESSERA_AMP_RD(f, 1, 3);
  amp_c_sink = f;
#else
  TESSERA_AMP_CLR();
#endif
}

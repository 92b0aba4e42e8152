/* Pass/fail reporting for the ISA tests (called from assembly; see isa_test.h). */
#include <stdint.h>

#include "tessera/tile.h"

/** All checks passed: print "<program> ok" and exit 0. */
__attribute__((noreturn)) void isa_pass(void) {
  tessera_puts(TESS_PROGRAM_NAME " ok\n");
  tessera_exit(0);
}

/** Check n failed: print "<program> FAIL check <n>" and exit with n. */
__attribute__((noreturn)) void isa_fail(uint32_t n) {
  tessera_puts(TESS_PROGRAM_NAME " FAIL check ");
  tessera_print_uint(n);
  tessera_putc('\n');
  tessera_exit(n);
}

/* Entry of the speed kernels as a static rv32 Linux user program for qemu-riscv32 (no C library):
 * runs bench_kernel() and exits with its result through the exit system call (93). */
int bench_kernel(void);

__attribute__((noreturn)) void _start(void) {
  register long a0 __asm__("a0") = bench_kernel();
  register long a7 __asm__("a7") = 93;
  __asm__ volatile("ecall" : : "r"(a0), "r"(a7));
  for (;;) {
  }
}

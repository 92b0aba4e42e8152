/* The smallest tessera program: print a line on the tile console and exit 0. */
#include "tessera/tile.h"

int main(void) {
  tessera_puts("hello from tessera tile ");
  tessera_print_uint(tessera_tile_id());
  tessera_putc('\n');
  return 0;
}

#!/usr/bin/env python3
"""Upper bounds on a matmul's efficiency on the chip, whatever the codelets and the compiler do.

For m x k x n on T tiles with the matrix unit, every plan that cuts the product into a grid of
pm x pn x pk equal blocks (one a tile, as ops::planMatMul's plans do), the bound adds four
lower bounds of one BSP program (exchange and compute do not overlap; ../shared/DESIGN.md):

  gather     the block's operands a tile does not hold: mb kb + kb nb words less its share of
             a and b ((m k + k n) / T), received at one word a cycle (a tile takes at most one
             word a cycle from the exchange);
  product    the block's multiply-adds at the unit's best rate: a block of weights (4 rows of
             16 bytes: 4 k by 4 columns fp32, 8 k by 4 fp16) takes 4 AMP.LW issue slots and
             serves at most 48 rows (six contexts of 8 accumulator rows) before the
             accumulators must be stored, so at most 48 of 52 slots multiply (92.3%);
  reduction  with pk > 1, each tile sums mb nb / pk outputs: (pk - 1) partials each received
             (a word each) and added (a load and an add: two issue slots each).

Nothing else is counted (syncs, the codelets' start and loop tests, stores), so a real program
takes longer. "all" is the ideal cycles (m k n / (T x 16 MACs), 32 for fp16) over the bound's
total, "compute" over its product and reduction. The plan with the best "all" is printed, with
its "compute" (another plan may bound the compute phases higher: one without a k split has no
reduction, and this bound does not count the fixed costs that make small blocks slow).

Usage: scripts/matmul-bound.py [--tiles T] [--fp16] [M K N ...]   (default: the shapes of
`tessera-bench matmul` on 16 tiles)
"""
import argparse
import math

SHAPES = [(32, 784, 128), (32, 128, 10), (32, 400, 120), (32, 120, 84), (32, 84, 10),
          (128, 256, 192)]


def bound(m, k, n, tiles, fp16):
    macs = 32 if fp16 else 16  # MACs per unit instruction
    kblock = 8 if fp16 else 4  # k of one block of weights
    words = 0.5 if fp16 else 1.0  # exchange words per operand element
    loop = 48.0 / 52.0
    ideal = m * k * n / tiles / macs
    best = None
    for pm in range(1, tiles + 1):
        for pn in range(1, tiles // pm + 1):
            if tiles % (pm * pn):
                continue
            pk = tiles // (pm * pn)
            mb, nb, kb = math.ceil(m / pm), math.ceil(n / pn), math.ceil(k / pk)
            if nb < 4 or kb < kblock:
                continue  # a block the unit cannot take
            gather = max(0.0, words * (mb * kb + kb * nb - (m * k + k * n) / tiles))
            product = mb * kb * nb / macs / loop
            outputs = mb * nb / pk
            reduce_x = (pk - 1) * outputs
            reduce_c = 2 * (pk - 1) * outputs
            total = gather + product + reduce_x + reduce_c
            row = (ideal / total, ideal / (product + reduce_c), (pm, pn, pk), gather, product,
                   reduce_x + reduce_c)
            if best is None or row[0] > best[0]:
                best = row
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tiles", type=int, default=16)
    ap.add_argument("--fp16", action="store_true", help="float16 operands (AMP.H), fp32 sums")
    ap.add_argument("shape", type=int, nargs="*", help="M K N, repeated")
    a = ap.parse_args()
    if len(a.shape) % 3:
        ap.error("give shapes as M K N triples")
    shapes = [tuple(a.shape[i:i + 3]) for i in range(0, len(a.shape), 3)] or SHAPES
    print(f"{a.tiles} tiles, {'fp16' if a.fp16 else 'fp32'}: at most, % of the unit's peak")
    for m, k, n in shapes:
        b = bound(m, k, n, a.tiles, a.fp16)
        if b is None:
            print(f"{m} x {k} x {n}: no plan gives every tile a block the unit can take")
            continue
        all_, compute, plan, gather, product, reduction = b
        print(f"{m} x {k} x {n}: all {100 * all_:.1f}% (its compute phases {100 * compute:.1f}%; "
              f"plan {plan[0]}x{plan[1]}x{plan[2]} as m x n x k; cycles at least: gather "
              f"{gather:.0f}, product {product:.0f}, reduction {reduction:.0f})")


if __name__ == "__main__":
    main()

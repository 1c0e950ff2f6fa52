import { describe, expect, it } from 'vitest';
import { dot } from '../../src/clustering/cosine.ts';
import { goalDotOf } from '../../src/clustering/goal-dot.ts';
import { randomUnitVectors } from '../support/synthetic-vectors.ts';

// The clustering's partition depends on every distance to the last bit (the threshold test, the
// tie-breaks of the chains), so the SIMD kernel must give exactly the scalar loop's double.
describe('goalDotOf', () => {
  it('gives exactly the double of the scalar dot, for every length (the 4-wide part and the tail)', () => {
    for (const dimension of [1, 2, 3, 4, 5, 6, 7, 9, 384, 385, 387, 768]) {
      const vectors = randomUnitVectors(40, dimension, dimension);
      const goalDot = goalDotOf(vectors);
      for (let a = 0; a < vectors.length; a++) {
        for (let b = 0; b < vectors.length; b++) expect(Object.is(goalDot(a, b), dot(vectors[a]!, vectors[b]!))).toBe(true);
      }
    }
  });

  it('gives exactly the double of the scalar dot on arbitrary floats (property)', async () => {
    const { default: fc } = await import('fast-check');
    const float = fc.float({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 });
    fc.assert(
      fc.property(
        fc
          .integer({ min: 1, max: 37 })
          .chain((length) => fc.array(fc.array(float, { minLength: length, maxLength: length }), { minLength: 2, maxLength: 5 })),
        (rows) => {
          const vectors = rows.map((row) => Float32Array.from(row));
          const goalDot = goalDotOf(vectors);
          for (let a = 0; a < vectors.length; a++) {
            for (let b = 0; b < vectors.length; b++) expect(goalDot(a, b)).toBe(dot(vectors[a]!, vectors[b]!));
          }
        },
      ),
      { numRuns: 500, seed: 20261201 },
    );
  });

  it('is the goal cosine of the runs by index, for a large set as for a small one', () => {
    const vectors = randomUnitVectors(3000, 384, 4);
    const goalDot = goalDotOf(vectors);
    for (const [a, b] of [
      [0, 2999],
      [1234, 17],
      [2999, 2999],
    ] as const) {
      expect(goalDot(a, b)).toBe(dot(vectors[a]!, vectors[b]!));
    }
  });
});

import { describe, expect, it } from 'vitest';
import { parseSimilarityDesign } from '../../src/clustering/run-similarity.ts';

// The benchmarks' design strings (bench/cluster-designs.bench.ts, bench/cluster-replicated.bench.ts).
describe('parseSimilarityDesign', () => {
  it('reads τ and the third number as the design needs them', () => {
    expect(parseSimilarityDesign('mix:0.7:0.5')).toMatchObject({ design: 'mix', clusterTau: 0.7, goalWeight: 0.5 });
    expect(parseSimilarityDesign('gate:0.4:0.8')).toMatchObject({ design: 'gate', goalTau: 0.4, toolTau: 0.8 });
    expect(parseSimilarityDesign('goal:0.5')).toMatchObject({ design: 'goal', goalTau: 0.5 });
  });

  it('refuses a design it does not know', () => {
    expect(() => parseSimilarityDesign('blend:0.7:0.5')).toThrow(/unknown similarity design "blend"/);
  });
});

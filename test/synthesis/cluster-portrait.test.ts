import { describe, expect, it } from 'vitest';
import type { GoalCluster } from '../../src/clustering/cluster-pass.ts';
import { dot } from '../../src/clustering/cosine.ts';
import { medoidRunId, portrayClusters } from '../../src/synthesis/cluster-portrait.ts';

const unit = (...values: number[]) => {
  const norm = Math.hypot(...values);
  return Float32Array.from(values.map((value) => value / norm));
};

function cluster(clusterId: string, runIds: string[], qualifies: boolean): GoalCluster {
  return {
    clusterId,
    runIds,
    successfulRunIds: runIds,
    clusterIndex: 0,
    size: runIds.length,
    successfulRuns: runIds.length,
    failedRuns: 0,
    tooShortRuns: 0,
    attempts: runIds.length,
    successRate: 1,
    longestSuccessfulSequence: 2,
    qualifies,
    ...(qualifies ? { rank: 1 } : { reason: { code: 'too_few_successful_runs', message: '2 successful runs, need 3' } }),
  };
}

describe('cluster portraits', () => {
  it('the medoid is the member with the highest summed cosine to the others (brute force agrees), whatever their order', () => {
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1;
    for (let trial = 0; trial < 20; trial++) {
      const vectors = Array.from({ length: 9 }, () => unit(random(), random(), random(), random()));
      const ids = vectors.map((_, index) => `run-${index}`);
      const cosineSum = (i: number) => vectors.reduce((total, other) => total + dot(vectors[i]!, other), 0);
      const brute = ids.reduce((best, _, index) => (cosineSum(index) > cosineSum(ids.indexOf(best)) ? ids[index]! : best), ids[0]!);
      expect(medoidRunId(ids, vectors)).toBe(brute);
      expect(medoidRunId([...ids].reverse(), [...vectors].reverse())).toBe(brute);
    }
  });

  it('gives each cluster its typical goal, its consensus tools, its nearest cluster and a verdict', () => {
    const runs = new Map([
      ['r1', { vector: unit(1, 0, 0), successfulTools: ['ci.fetch', 'ci.fetch', 'ci.retry'] }],
      ['r2', { vector: unit(1, 0.1, 0), successfulTools: ['ci.fetch', 'ci.retry'] }],
      ['r3', { vector: unit(1, 0.2, 0), successfulTools: ['ci.fetch', 'slack.post', 'ci.retry'] }],
      ['k1', { vector: unit(0, 1, 0), successfulTools: ['keys.rotate'] }],
      ['k2', { vector: unit(0.1, 1, 0), successfulTools: ['keys.rotate'] }],
      ['x1', { vector: unit(0, 0, 1), successfulTools: ['x'] }],
      ['x2', { vector: unit(0, 0.2, 1), successfulTools: ['x'] }],
    ]);
    const goals = new Map([
      ['r2', 'Retry the failed CI job'],
      ['k1', 'Rotate the API key'],
      ['k2', 'Rotate the key'],
      ['x1', 'x'],
      ['x2', 'x'],
    ]);
    const thresholds = { minOccurrences: 3, minSuccessRate: 0.7, minSteps: 2 };
    const [ci, keys, other] = portrayClusters(
      [cluster('ci', ['r1', 'r2', 'r3'], true), cluster('keys', ['k1', 'k2'], false), cluster('other', ['x1', 'x2'], false)],
      runs,
      goals,
      thresholds,
    );
    expect(ci).toMatchObject({
      typicalRunId: 'r2',
      typicalGoal: 'Retry the failed CI job',
      consensusTools: ['ci.fetch', 'ci.retry'],
      nearestClusterId: 'keys',
      verdict: 'qualifies (rank 1): 3 successful runs ≥ 3, success 100% ≥ 70%, longest sequence 2 ≥ 2 steps',
    });
    expect(keys).toMatchObject({
      consensusTools: ['keys.rotate'],
      nearestClusterId: 'ci',
      verdict: 'does not qualify: 2 successful runs, need 3',
    });
    expect(keys!.typicalRunId).toMatch(/^k[12]$/);
    expect(other!.nearestClusterId).toBe('keys');
    expect(ci!.nearestSimilarity).toBeCloseTo(0.1, 1);
  });
});

import { describe, expect, it } from 'vitest';
import { clusterVectors } from '../../src/clustering/cluster-goals.ts';
import { turnTaker } from '../../src/clustering/event-loop-turns.ts';

/** Unit vectors in three tight groups of four (around x, y and z), far apart: three components. */
function threeGroups(): Float32Array[] {
  const vectors: Float32Array[] = [];
  for (let axis = 0; axis < 3; axis++) {
    for (let member = 0; member < 4; member++) {
      const vector = new Float32Array(3).fill(0.01 * (member + 1));
      vector[axis] = 1;
      const norm = Math.hypot(...vector);
      vectors.push(vector.map((value) => value / norm));
    }
  }
  return vectors;
}

/** Whether a callback queued behind the current work ran before `work` settled. */
async function letOthersRun(work: () => Promise<unknown>): Promise<boolean> {
  let ran = false;
  setImmediate(() => (ran = true));
  await work();
  return ran;
}

describe('clustering hands the event loop back (a worker keeps serving workflow tasks and heartbeats)', () => {
  it('a turn taker yields only once it has held the loop for its interval', async () => {
    expect(await letOthersRun(() => turnTaker(60_000)())).toBe(false);
    expect(await letOthersRun(() => turnTaker(0)())).toBe(true);
  });

  it('clusterRuns takes a turn before each component it clusters, and its clusters are the same', async () => {
    const vectors = threeGroups();
    let turns = 0;
    const counted = await clusterVectors(vectors, {
      similarityTau: 0.9,
      linkage: 'average',
      takeTurn: async () => {
        turns++;
      },
    });
    expect(counted.componentCount).toBe(3);
    expect(turns).toBe(3);
    const plain = await clusterVectors(vectors, { similarityTau: 0.9, linkage: 'average' });
    expect(counted.clusters).toEqual(plain.clusters);
    expect(plain.clusters).toEqual([
      [0, 1, 2, 3],
      [4, 5, 6, 7],
      [8, 9, 10, 11],
    ]);
  });

  it('other work runs while clusterRuns works through its components', async () => {
    const vectors = threeGroups();
    expect(await letOthersRun(() => clusterVectors(vectors, { similarityTau: 0.9, linkage: 'average', takeTurn: turnTaker(0) }))).toBe(
      true,
    );
  });
});

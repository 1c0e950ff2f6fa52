import { describe, expect, it } from 'vitest';
import { classScore, decodeWhitening, encodeWhitening, learnWhitening, recallClassOf, whiten } from '../../src/recall/recall-space.ts';

const unit = (values: number[]) => {
  const norm = Math.hypot(...values);
  return Float32Array.from(values, (value) => value / norm);
};
const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, value, index) => sum + value * b[index]!, 0);

/**
 * Two jobs in three dimensions: both spread widely along axis 1 (what varies inside a job: the
 * customer, the author's sentence) and sit apart along axis 2 only (what tells them apart).
 */
const spread = [-0.5, -0.25, 0, 0.25, 0.5];
const jobA = spread.map((noise, index) => unit([1, 0.3 + noise, 0.1 + (index % 2 ? 0.01 : -0.01)]));
const jobB = spread.map((noise, index) => unit([1, noise, -0.1 + (index % 2 ? 0.01 : -0.01)]));

describe('the recall space (src/recall/recall-space.ts)', () => {
  it('tells a goal its job by the directions jobs differ in, not by what varies inside every job', () => {
    // A goal of job B that varies along axis 1 as far as job A's centroid sits.
    const goal = unit([1, 0.3, -0.1]);
    const raw = [recallClassOf(jobA), recallClassOf(jobB)].map((klass) => classScore(dot(goal, klass.centroid), klass, 0));
    expect(raw[0]).toBeGreaterThan(raw[1]!);
    const space = learnWhitening([jobA, jobB], 3, 0.1);
    const whitened = whiten(space, goal);
    const [a, b] = [jobA, jobB].map((job) => recallClassOf(job.map((vector) => whiten(space, vector))));
    expect(classScore(dot(whitened, b!.centroid), b!)).toBeGreaterThan(classScore(dot(whitened, a!.centroid), a!));
    expect(Math.hypot(...whitened)).toBeCloseTo(1, 6);
  });

  it('is the identity where the goals show no spread (no procedure with two goals)', () => {
    const space = learnWhitening([[unit([1, 0, 0])], []], 3);
    expect([...whiten(space, unit([0.6, 0.8, 0]))].map((value) => Number(value.toFixed(6)))).toEqual([0.6, 0.8, 0]);
  });

  it('gives a class of few goals more room (its centroid is itself an estimate): at equal distance it scores higher', () => {
    const goal = unit([1, 0, 0]);
    const near = unit([0.9, 0.1, 0]);
    const one = recallClassOf([near]);
    const five = { ...one, members: 5 };
    expect(classScore(dot(goal, near), one)).toBeGreaterThan(classScore(dot(goal, near), five));
    // A perfect fit scores 0 whatever the size.
    expect(classScore(1, { normSquared: 1, members: 1 })).toBeCloseTo(0, 12);
  });

  it('stores its whitening as float32 and reads back the same matrix; a wrong size is refused', () => {
    const space = learnWhitening([jobA, jobB], 3);
    expect(decodeWhitening(3, encodeWhitening(space)).whitening).toEqual(space.whitening);
    expect(() => decodeWhitening(4, encodeWhitening(space))).toThrow(/needs 64 bytes, got 36/);
    expect(() => whiten(space, unit([1, 0]))).toThrow(/a 2-d vector in a 3-d recall space/);
  });
});

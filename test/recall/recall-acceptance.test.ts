import { describe, expect, it } from 'vitest';
import { leaveOneOutNearest, loosestNearest, procedureAcceptance } from '../../src/procedures/recall-acceptance.ts';

/** A unit vector at `degrees` in the plane: cosines between them are cosines of the angle between. */
const at = (degrees: number) => Float32Array.from([Math.cos((degrees * Math.PI) / 180), Math.sin((degrees * Math.PI) / 180), 0]);
const cos = (degrees: number) => Math.cos((degrees * Math.PI) / 180);

describe("a procedure's own recall acceptance", () => {
  it("is each goal's nearest other goal, the loosest of them deciding", () => {
    // 0°, 10°, 50°: 0° and 10° are each other's nearest; 50° is nearest to 10° (40° apart).
    const goals = [at(0), at(10), at(50)];
    const nearest = leaveOneOutNearest(goals);
    expect(nearest[0]).toBeCloseTo(cos(10), 6);
    expect(nearest[1]).toBeCloseTo(cos(10), 6);
    expect(nearest[2]).toBeCloseTo(cos(40), 6);
    expect(loosestNearest(goals)).toBeCloseTo(cos(40), 6);
  });

  it('counts a repeated goal once: the same text twice says nothing about how far a new goal may lie', () => {
    // Without deduplication every goal's nearest would be its twin (cosine 1): the procedure would accept nothing new.
    expect(loosestNearest([at(0), at(0), at(60), at(60)])).toBeCloseTo(cos(60), 6);
  });

  it('has no evidence with fewer than two distinct goals: the floor alone', () => {
    expect(loosestNearest([])).toBeNull();
    expect(loosestNearest([at(5), at(5)])).toBeNull();
    expect(procedureAcceptance([at(5), at(5)], { slack: 0.05, floor: 0.415, cap: 0.55 })).toBe(0.415);
  });

  it('is the loosest cosine less the slack, never below the floor', () => {
    const tight = [at(0), at(20), at(40)];
    expect(procedureAcceptance(tight, { slack: 0.05, floor: 0.415, cap: 1 })).toBeCloseTo(cos(20) - 0.05, 6);
    const loose = [at(0), at(80)];
    expect(procedureAcceptance(loose, { slack: 0.05, floor: 0.415, cap: 0.55 })).toBe(0.415);
  });

  it('never asks more than the cap, however alike the learned goals (near-copies of one template)', () => {
    // 0°, 5°, 10°: loosest cos 5° ≈ 0.996; less the slack it would ask a new goal to be nearly a copy.
    const nearCopies = [at(0), at(5), at(10)];
    expect(loosestNearest(nearCopies)! - 0.05).toBeGreaterThan(0.9);
    expect(procedureAcceptance(nearCopies, { slack: 0.05, floor: 0.415, cap: 0.55 })).toBe(0.55);
    // The floor still wins over a cap below it.
    expect(procedureAcceptance(nearCopies, { slack: 0.05, floor: 0.6, cap: 0.55 })).toBe(0.6);
  });
});

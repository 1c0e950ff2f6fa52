import { describe, expect, it } from 'vitest';
import { clopperPearsonInterval } from '../../src/rollout/clopper-pearson.ts';
import { checkPairedEvidence, pairedDifferenceInterval, pairedSampleSchema, type PairedCounts } from '../../src/rollout/paired-evidence.ts';

/**
 * Reference values computed independently with SciPy 1.17.1: `scipy.stats.beta.ppf(0.025, x, n-x+1)`
 * and `beta.ppf(0.975, x+1, n-x)` (0 and 1 at x = 0 and x = n), each cross-checked against
 * `scipy.stats.binomtest(x, n).proportion_ci(method='exact')` to 1e-12. The published R values
 * agree: `binom.test(5, 10)` gives 0.1870860–0.8129140, `binom.test(0, 10)` 0–0.3084971.
 */
const CLOPPER_PEARSON_REFERENCE: Array<[number, number, number, number]> = [
  [0, 1, 0.0, 0.975],
  [1, 1, 0.025000000000000022, 1.0],
  [0, 10, 0.0, 0.3084971078187607],
  [10, 10, 0.6915028921812392, 1.0],
  [5, 10, 0.18708602844739855, 0.8129139715526015],
  [3, 10, 0.0667395111777345, 0.6524528500599973],
  [1, 30, 0.0008435709266304795, 0.17216945563341265],
  [29, 30, 0.8278305443665873, 0.9991564290733695],
  [15, 30, 0.3129702858680275, 0.6870297141319726],
  [50, 100, 0.398321129503301, 0.601678870496699],
  [7, 9, 0.39990642628368794, 0.9718550265221018],
  [20, 25, 0.5929625677213227, 0.931688535987516],
  [0, 30, 0.0, 0.11570330822202778],
];

/** [n, b, c, lower, upper] of the paired-difference interval, the spec's transform of the SciPy values above. */
const PAIRED_REFERENCE: Array<[number, number, number, number, number]> = [
  [30, 0, 0, 0, 0],
  [30, 5, 0, -0.007274583368327148, 0.16666666666666666],
  [30, 0, 5, -0.16666666666666666, 0.0072745833683271295],
  [30, 10, 2, 0.012689801051226367, 0.38330997963192615],
  [30, 6, 0, 0.016296749424039848, 0.2],
  [40, 8, 1, 0.007876568287198338, 0.22373588846403036],
  [100, 20, 5, 0.04648128386066136, 0.21584426799375797],
  [30, 30, 0, 0.7685933835559443, 1.0],
  [50, 12, 12, -0.20040789135723647, 0.20040789135723647],
  [200, 30, 10, 0.035215207939428075, 0.149234080426862],
  [31, 3, 0, -0.04018030184104128, 0.0967741935483871],
  [1000, 60, 10, 0.035410445314950675, 0.06010333640263823],
];

const TOLERANCE = 1e-12;

function counts(n: number, b: number, c: number, regressedCases = 0): PairedCounts {
  return { n, b, c, regressedCases, baselinePolicyFailures: 0, authoredPolicyFailures: regressedCases };
}

describe('clopperPearsonInterval', () => {
  it.each(CLOPPER_PEARSON_REFERENCE)('x = %i of n = %i matches SciPy: [%f, %f]', (x, n, lower, upper) => {
    const interval = clopperPearsonInterval(x, n);
    expect(Math.abs(interval.lower - lower)).toBeLessThan(TOLERANCE);
    expect(Math.abs(interval.upper - upper)).toBeLessThan(TOLERANCE);
  });

  it('is exactly 0 at x = 0 and exactly 1 at x = n', () => {
    expect(clopperPearsonInterval(0, 7).lower).toBe(0);
    expect(clopperPearsonInterval(7, 7).upper).toBe(1);
  });

  it('refuses counts that are not a binomial outcome', () => {
    expect(() => clopperPearsonInterval(3, 0)).toThrow(RangeError);
    expect(() => clopperPearsonInterval(4, 3)).toThrow(RangeError);
    expect(() => clopperPearsonInterval(-1, 3)).toThrow(RangeError);
    expect(() => clopperPearsonInterval(1.5, 3)).toThrow(RangeError);
    expect(() => clopperPearsonInterval(1, 3, 1)).toThrow(RangeError);
  });
});

describe('pairedDifferenceInterval', () => {
  it.each(PAIRED_REFERENCE)('n = %i, b = %i, c = %i → [%f, %f]', (n, b, c, lower, upper) => {
    const interval = pairedDifferenceInterval(n, b, c);
    expect(Math.abs(interval.lower - lower)).toBeLessThan(TOLERANCE);
    expect(Math.abs(interval.upper - upper)).toBeLessThan(TOLERANCE);
  });

  it('is [0, 0] exactly when there are no discordant pairs, whatever n is', () => {
    expect(pairedDifferenceInterval(30, 0, 0)).toEqual({ lower: 0, upper: 0 });
    expect(pairedDifferenceInterval(500, 0, 0)).toEqual({ lower: 0, upper: 0 });
  });

  it('is symmetric: swapping the arms mirrors the interval', () => {
    const forward = pairedDifferenceInterval(60, 11, 4);
    const mirrored = pairedDifferenceInterval(60, 4, 11);
    expect(mirrored.lower).toBeCloseTo(-forward.upper, 12);
    expect(mirrored.upper).toBeCloseTo(-forward.lower, 12);
  });
});

describe('checkPairedEvidence (the 002 spec release gate)', () => {
  it('passes 30 pairs with b = 6, c = 0: 20 points, lower bound 0.0163', () => {
    const check = checkPairedEvidence(counts(30, 6, 0));
    expect(check).toMatchObject({ n: 30, b: 6, c: 0, policyRegression: false, passed: true, reasons: [] });
    expect(check.improvement).toBeCloseTo(0.2, 12);
    expect(check.interval.lower).toBeCloseTo(0.016296749424039848, 12);
  });

  it('refuses 30 pairs with b = 5, c = 0: 16.7 points but the lower bound is below zero', () => {
    const check = checkPairedEvidence(counts(30, 5, 0));
    expect(check.passed).toBe(false);
    expect(check.reasons).toEqual(['the lower bound of the 95 % paired interval is -0.7 points; it must be above zero']);
  });

  it('refuses 29 pairs however strong they are (n = 29, b = 10, c = 0, lower bound 0.132)', () => {
    const check = checkPairedEvidence(counts(29, 10, 0));
    expect(check.interval.lower).toBeGreaterThan(0.13);
    expect(check.passed).toBe(false);
    expect(check.reasons).toEqual(['29 paired samples; at least 30 are required']);
  });

  it('passes an improvement of exactly 5 points and refuses 4.9 (n = 1000, c = 10, b = 60 vs 59)', () => {
    const exact = checkPairedEvidence(counts(1000, 60, 10));
    expect(exact.improvement).toBe(0.05);
    expect(exact.passed).toBe(true);
    const below = checkPairedEvidence(counts(1000, 59, 10));
    expect(below.interval.lower).toBeGreaterThan(0);
    expect(below.passed).toBe(false);
    expect(below.reasons).toEqual(['the paired improvement is 4.9 points; at least 5 points are required']);
  });

  it('refuses any policy regression regardless of task improvement', () => {
    const check = checkPairedEvidence(counts(30, 30, 0, 1));
    expect(check.interval.lower).toBeGreaterThan(0.76);
    expect(check).toMatchObject({ policyRegression: true, passed: false });
    expect(check.reasons).toEqual([
      'policy regression: the authored arm had more policy failures than the baseline in 1 case; any additional policy failure blocks rollout',
    ]);
  });

  it('refuses when only the baseline completes discordant cases (b = 0): negative improvement and bound', () => {
    const check = checkPairedEvidence(counts(30, 0, 5));
    expect(check.improvement).toBeCloseTo(-5 / 30, 12);
    expect(check.passed).toBe(false);
    expect(check.reasons).toHaveLength(2);
  });

  it('with no discordant pairs reports a zero improvement in [0, 0] and refuses', () => {
    const check = checkPairedEvidence(counts(40, 0, 0));
    expect(check).toMatchObject({ improvement: 0, interval: { lower: 0, upper: 0 }, passed: false });
    expect(check.reasons).toEqual([
      'the paired improvement is 0.0 points; at least 5 points are required',
      'the lower bound of the 95 % paired interval is 0.0 points; it must be above zero',
    ]);
  });

  it('with no evidence at all lists every unmet criterion and never divides by zero', () => {
    const check = checkPairedEvidence(counts(0, 0, 0));
    expect(check).toMatchObject({ n: 0, improvement: 0, interval: { lower: 0, upper: 0 }, passed: false });
    expect(check.reasons).toHaveLength(3);
  });

  it('refuses counts that cannot come from pairs', () => {
    expect(() => checkPairedEvidence(counts(10, 6, 6))).toThrow(RangeError);
    expect(() => checkPairedEvidence(counts(10, -1, 0))).toThrow(RangeError);
  });
});

describe('pairedSampleSchema', () => {
  const sample = {
    caseId: 'case-1',
    baselineCompleted: false,
    authoredCompleted: true,
    baselinePolicyFailures: 0,
    authoredPolicyFailures: 0,
    modelPolicy: 'llama3.1',
    policyProfile: 'none',
    authoringVersion: 'authoring-1',
  };

  it('accepts the contract line', () => {
    expect(pairedSampleSchema.parse(sample)).toEqual(sample);
  });

  it.each([
    ['a string completion', { baselineCompleted: 'true' }],
    ['a fractional policy-failure count', { authoredPolicyFailures: 0.5 }],
    ['a negative policy-failure count', { baselinePolicyFailures: -1 }],
    ['a model policy with a trailing space', { modelPolicy: 'llama3.1 ' }],
    ['an empty case id', { caseId: '' }],
    ['an unknown field', { authoredComplete: true }],
  ])('refuses %s', (_label, change) => {
    expect(pairedSampleSchema.safeParse({ ...sample, ...change }).success).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import {
  longestCommonSubsequence,
  ProcedureTable,
  toolSequenceSimilarity,
  toolSimilarityBound,
  traceOfRun,
} from '../../src/clustering/tool-sequence-similarity.ts';

const completed = (...tools: string[]) => ({ tools });
const booking = ['flights.search_location', 'flights.search', 'flights.min_price', 'hotels.search_destination', 'hotels.search'];

describe('tool-sequence similarity', () => {
  it('is 1 for the same procedure and 0 for procedures with no tool in common', () => {
    expect(toolSequenceSimilarity(completed(...booking), completed(...booking))).toBe(1);
    expect(toolSequenceSimilarity(completed(...booking), completed('cars.search_location', 'cars.search'))).toBe(0);
  });

  it('barely moves for an optional step, wherever it sits', () => {
    for (let position = 0; position <= booking.length; position++) {
      const withStep = [...booking];
      withStep.splice(position, 0, 'notify.slack');
      // 2·5 / (5 + 6): one unit of LCS against the length of the procedure.
      expect(toolSequenceSimilarity(completed(...booking), completed(...withStep))).toBeCloseTo(10 / 11, 12);
    }
  });

  it('does not move for a retried call: the failed attempt is not part of the trace', () => {
    const clean = traceOfRun({ toolCalls: booking.map((tool) => ({ tool, success: true })) });
    const retried = traceOfRun({
      toolCalls: booking.flatMap((tool, index) =>
        index === 2
          ? [
              { tool, success: false },
              { tool, success: false },
              { tool, success: true },
            ]
          : [{ tool, success: true }],
      ),
    });
    expect(retried).toEqual(clean);
    expect(toolSequenceSimilarity(clean, retried)).toBe(1);
  });

  it('drops well below an optional step when the procedure differs in kind', () => {
    const optional = toolSequenceSimilarity(completed(...booking), completed(...booking, 'notify.slack'));
    const otherHalf = toolSequenceSimilarity(completed(...booking), completed(...booking.slice(0, 3), 'cars.search', 'cars.book'));
    expect(otherHalf).toBeLessThan(optional - 0.2);
  });

  it('places a run that failed part-way by how far it got, and a run with no successful call nowhere', () => {
    expect(toolSequenceSimilarity(completed(...booking.slice(0, 3)), completed(...booking))).toBeCloseTo(6 / 8, 12);
    expect(toolSequenceSimilarity(completed(...booking.slice(0, 1)), completed(...booking))).toBeCloseTo(2 / 6, 12);
    expect(toolSequenceSimilarity(completed(), completed(...booking))).toBe(0);
    expect(toolSequenceSimilarity(completed(), completed())).toBe(1);
  });

  it('keeps two consecutive successful calls of one tool as two steps', () => {
    const twoLookups = completed('flights.search_location', 'flights.search_location', 'flights.search');
    const oneLookup = completed('flights.search_location', 'flights.search');
    expect(toolSequenceSimilarity(twoLookups, oneLookup)).toBeCloseTo(4 / 5, 12);
  });

  it('is symmetric and tabulates each distinct trace once', () => {
    const traces = [completed(...booking), completed(...booking.slice(0, 3)), completed(...booking), completed('a', 'b', 'c')];
    const table = new ProcedureTable(traces);
    expect(table.distinctCount).toBe(3);
    for (let a = 0; a < traces.length; a++) {
      for (let b = 0; b < traces.length; b++) {
        expect(table.similarity(a, b)).toBe(table.similarity(b, a));
        expect(table.similarity(a, b)).toBe(toolSequenceSimilarity(traces[a]!, traces[b]!));
      }
    }
  });

  it('finds the longest common subsequence', () => {
    expect(longestCommonSubsequence([1, 2, 3, 4, 5], [2, 4, 5, 1])).toBe(3);
    expect(longestCommonSubsequence([], [1])).toBe(0);
  });

  it("bounds every similarity from above by the inner product of the traces' tool vectors (property)", async () => {
    const { default: fc } = await import('fast-check');
    const trace = fc.array(fc.constantFrom('a', 'b', 'c', 'd', 'e'), { maxLength: 8 });
    fc.assert(
      fc.property(trace, trace, (a, b) => {
        const table = new ProcedureTable([{ tools: a }, { tools: b }]);
        const [u, v] = [0, 1].map((run) => table.toolVector(table.traceOfRun[run]!));
        let product = 0;
        u!.axes.forEach((axis, index) => {
          const at = v!.axes.indexOf(axis);
          if (at !== -1) product += u!.values[index]! * v!.values[at]!;
        });
        expect(product + 1e-12).toBeGreaterThanOrEqual(table.similarity(0, 1));
        // Unit vectors: the same trace reaches 1 exactly, so a procedure's own runs are never pruned.
        expect(u!.values.reduce((sum, value) => sum + value * value, 0)).toBeCloseTo(1, 12);
      }),
      { numRuns: 500, seed: 20261201 },
    );
  });

  it('bounds every similarity from above by the bags of tools, never looser than the tool vectors (property)', async () => {
    const { default: fc } = await import('fast-check');
    // Few tools and repeats: many common tools out of order, where the bag bound is loosest.
    const trace = fc.array(fc.constantFrom('a', 'b', 'c', 'd'), { maxLength: 9 });
    fc.assert(
      fc.property(trace, trace, (a, b) => {
        const table = new ProcedureTable([{ tools: a }, { tools: b }]);
        const [u, v] = [0, 1].map((run) => table.toolVector(table.traceOfRun[run]!));
        const bagBound = toolSimilarityBound(u!, v!);
        // No tolerance: the bound and t share their integer arithmetic, so t ≤ bound holds exactly.
        expect(bagBound).toBeGreaterThanOrEqual(table.similarity(0, 1));
        expect(bagBound).toBe(toolSimilarityBound(v!, u!));
        let product = 0;
        u!.axes.forEach((axis, index) => {
          const at = v!.axes.indexOf(axis);
          if (at !== -1) product += u!.values[index]! * v!.values[at]!;
        });
        expect(bagBound).toBeLessThanOrEqual(product + 1e-12);
      }),
      { numRuns: 1000, seed: 20261201 },
    );
    const table = new ProcedureTable([{ tools: [] }, { tools: [] }, { tools: ['a'] }]);
    const [empty, one] = [0, 2].map((run) => table.toolVector(table.traceOfRun[run]!));
    expect(toolSimilarityBound(empty!, empty!)).toBe(1);
    expect(toolSimilarityBound(empty!, one!)).toBe(0);
    // The loose case the √ bound lets through: a one-call prefix against a five-call procedure.
    const long = new ProcedureTable([{ tools: ['x'] }, { tools: ['x', 'b', 'c', 'd', 'e'] }]);
    const [prefix, full] = [0, 1].map((run) => long.toolVector(long.traceOfRun[run]!));
    expect(toolSimilarityBound(prefix!, full!)).toBe(2 / 6);
  });

  it('weighted by tool: a shared rare tool says more than a shared common one, and both bounds still hold (property)', async () => {
    const weights: Record<string, number> = { a: 1, b: 0.2, c: 0.7, d: 0.05 };
    const toolWeight = (tool: string) => weights[tool]!;
    // Two-step procedures that share one step: the rare one (a) or the common one (b).
    const sharedRare = new ProcedureTable([{ tools: ['a', 'c'] }, { tools: ['a', 'd'] }], { toolWeight });
    const sharedCommon = new ProcedureTable([{ tools: ['b', 'c'] }, { tools: ['b', 'd'] }], { toolWeight });
    expect(sharedRare.similarity(0, 1)).toBeCloseTo((2 * 1) / (1.7 + 1.05), 12);
    expect(sharedCommon.similarity(0, 1)).toBeCloseTo((2 * 0.2) / (0.9 + 0.25), 12);
    expect(sharedRare.traceMass(sharedRare.traceOfRun[0]!)).toBeCloseTo(1.7, 12);
    const { default: fc } = await import('fast-check');
    const trace = fc.array(fc.constantFrom('a', 'b', 'c', 'd'), { maxLength: 9 });
    fc.assert(
      fc.property(trace, trace, (a, b) => {
        const table = new ProcedureTable([{ tools: a }, { tools: b }], { toolWeight });
        const [u, v] = [0, 1].map((run) => table.toolVector(table.traceOfRun[run]!));
        const bagBound = toolSimilarityBound(u!, v!);
        expect(bagBound + 1e-12).toBeGreaterThanOrEqual(table.similarity(0, 1));
        let product = 0;
        u!.axes.forEach((axis, index) => {
          const at = v!.axes.indexOf(axis);
          if (at !== -1) product += u!.values[index]! * v!.values[at]!;
        });
        expect(bagBound).toBeLessThanOrEqual(product + 1e-12);
        expect(u!.values.reduce((sum, value) => sum + value * value, 0)).toBeCloseTo(1, 12);
      }),
      { numRuns: 1000, seed: 20261204 },
    );
    expect(() => new ProcedureTable([{ tools: ['a'] }], { toolWeight: () => 0 })).toThrow(/must be > 0/);
  });

  it('with a swap credit, two adjacent steps taken in the other order still match; a step moved further does not', async () => {
    const swapped = ['hr.session.open', 'hr.contract.get', 'hr.contract.approve', 'hr.audit.record'];
    const tolerant = new ProcedureTable(
      [{ tools: swapped }, { tools: [swapped[1]!, swapped[0]!, ...swapped.slice(2)] }, { tools: [...swapped.slice(1), swapped[0]!] }],
      { swapCredit: 1 },
    );
    expect(tolerant.similarity(0, 1)).toBe(1);
    // Moved from first to last: three of four steps in order, as without the credit.
    expect(tolerant.similarity(0, 2)).toBe(toolSequenceSimilarity({ tools: swapped }, { tools: [...swapped.slice(1), swapped[0]!] }));
    expect(toolSequenceSimilarity({ tools: swapped }, { tools: [swapped[1]!, swapped[0]!, ...swapped.slice(2)] })).toBe(0.75);
    // Each call still matches at most once: the bag bound holds (property).
    const { default: fc } = await import('fast-check');
    const weights: Record<string, number> = { a: 1, b: 0.2, c: 0.7, d: 0.05 };
    const trace = fc.array(fc.constantFrom('a', 'b', 'c', 'd'), { maxLength: 9 });
    fc.assert(
      fc.property(trace, trace, fc.double({ min: 0, max: 1, noNaN: true }), (a, b, swapCredit) => {
        const table = new ProcedureTable([{ tools: a }, { tools: b }], { toolWeight: (tool) => weights[tool]!, swapCredit });
        const [u, v] = [0, 1].map((run) => table.toolVector(table.traceOfRun[run]!));
        expect(toolSimilarityBound(u!, v!) + 1e-12).toBeGreaterThanOrEqual(table.similarity(0, 1));
        expect(table.similarity(0, 1)).toBeCloseTo(table.similarity(1, 0), 12);
      }),
      { numRuns: 1000, seed: 20261207 },
    );
  });

  it('computes a pair past the tabulated limit once and gives the tabulated value', () => {
    const traces = Array.from({ length: 4200 }, (_, index) => completed(...booking.slice(0, 2), `tool-${index}`));
    const large = new ProcedureTable(traces);
    expect(large.distinctCount).toBe(4200);
    expect(large.similarity(7, 4100)).toBe(toolSequenceSimilarity(traces[7]!, traces[4100]!));
    expect(large.similarity(4100, 7)).toBe(large.similarity(7, 4100));
  });
});

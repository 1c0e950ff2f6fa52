import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { runReportSchema } from '../../src/runs/run-report.ts';
import { createSeededRandom } from '../../src/clustering/seeded-random.ts';
import { generateRuns, TASK_FAMILIES, VARIED_TASK_FAMILIES } from '../../src/demo/synthetic-runs.ts';

describe('seeded random', () => {
  it('repeats the same sequence for the same seed and differs across seeds', () => {
    const sequence = (seed: number) => Array.from({ length: 5 }, createSeededRandom(seed).next.bind(null));
    const first = createSeededRandom(42);
    const second = createSeededRandom(42);
    const a = Array.from({ length: 100 }, () => first.next());
    const b = Array.from({ length: 100 }, () => second.next());
    expect(a).toEqual(b);
    expect(a.every((value) => value >= 0 && value < 1)).toBe(true);
    expect(sequence(1)).not.toEqual(sequence(2));
  });

  it('keeps integer() within bounds and covers them', () => {
    const random = createSeededRandom(3);
    const seen = new Set<number>();
    for (let index = 0; index < 1000; index += 1) seen.add(random.integer(2, 5));
    expect([...seen].sort()).toEqual([2, 3, 4, 5]);
  });
});

describe('synthetic runs generator', () => {
  it('is deterministic given the seed', () => {
    expect(generateRuns({ seed: 7, runs: 50 })).toEqual(generateRuns({ seed: 7, runs: 50 }));
    expect(generateRuns({ seed: 8, runs: 50 })).not.toEqual(generateRuns({ seed: 7, runs: 50 }));
  });

  it('produces reports valid per the run report schema, with unique run ids', () => {
    const runs = generateRuns({ seed: 1, runs: 500, tenantId: 'acme' });
    for (const { report } of runs) expect(runReportSchema.safeParse(report).success).toBe(true);
    expect(new Set(runs.map(({ report }) => report.runId)).size).toBe(500);
    expect(runs.every(({ report }) => report.tenantId === 'acme')).toBe(true);
  });

  it('covers at least 8 task families, each with many paraphrases, plus one-off distractors', () => {
    expect(TASK_FAMILIES.length).toBeGreaterThanOrEqual(8);
    for (const family of TASK_FAMILIES) expect(family.goals.length).toBeGreaterThanOrEqual(7);
    const runs = generateRuns({ seed: 2, runs: 2000 });
    const families = new Set(runs.map(({ family }) => family));
    for (const family of TASK_FAMILIES) expect(families.has(family.id)).toBe(true);
    const distractors = runs.filter(({ family }) => family === null);
    expect(distractors.length).toBeGreaterThan(40);
    expect(new Set(distractors.map(({ report }) => report.goal)).size).toBe(distractors.length);
  });

  it('mixes successes and failures per family, and failed runs end early', () => {
    const runs = generateRuns({ seed: 3, runs: 3000 });
    const failureShare = (id: string) => {
      const ofFamily = runs.filter(({ family }) => family === id);
      return ofFamily.filter(({ report }) => report.status !== 'completed').length / ofFamily.length;
    };
    expect(failureShare('upgrade-dependency')).toBeGreaterThan(0.25);
    expect(failureShare('summarise-pr')).toBeLessThan(0.15);
    const statuses = new Set(runs.map(({ report }) => report.status));
    expect(statuses).toEqual(new Set(['completed', 'failed', 'cancelled']));
  });

  it('follows the family canonical tool sequence in successful runs (with noise)', () => {
    const runs = generateRuns({ seed: 4, runs: 400, families: ['deploy-service'] });
    expect(runs.every(({ family }) => family === 'deploy-service' || family === null)).toBe(true);
    const completed = runs.filter(({ family, report }) => family !== null && report.status === 'completed');
    const containsCore = completed.filter(({ report }) => {
      const tools = report.toolCalls.filter((call) => call.success).map((call) => call.tool);
      return ['repo.clone', 'build.run', 'deploy.apply', 'deploy.status'].every((tool) => tools.includes(tool));
    });
    expect(containsCore.length / completed.length).toBeGreaterThan(0.95);
  });

  it('regenerates the committed sample fixture byte for byte (200 runs, seed 7)', async () => {
    const committed = await readFile(new URL('../../src/demo/sample-runs.jsonl', import.meta.url), 'utf8');
    const regenerated = generateRuns({ seed: 7, runs: 200 })
      .map(({ report }) => {
        const { tenantId: _tenantId, ...line } = report;
        return `${JSON.stringify(line)}\n`;
      })
      .join('');
    expect(regenerated).toBe(committed);
  });
});

describe('synthetic runs generator, varied catalog', () => {
  const runs = generateRuns({ seed: 21, runs: 1200, catalog: 'varied' });
  const completed = runs.filter(({ procedure, report }) => procedure !== null && report.status === 'completed');
  const successfulTools = (report: (typeof runs)[number]['report']) =>
    report.toolCalls.filter((call) => call.success).map((call) => call.tool);

  it('is deterministic given the seed, valid per the run report schema, and labels every run with its procedure', () => {
    expect(generateRuns({ seed: 21, runs: 100, catalog: 'varied' })).toEqual(runs.slice(0, 100));
    for (const { report } of runs) expect(runReportSchema.safeParse(report).success).toBe(true);
    const byFamily = new Map(VARIED_TASK_FAMILIES.map((family) => [family.id, family.procedure ?? family.id]));
    for (const run of runs) expect(run.procedure).toBe(run.family === null ? null : byFamily.get(run.family));
  });

  it('passes values from a step’s result into later steps’ arguments (values the goal does not contain)', () => {
    const flowing = completed.filter(({ report }) =>
      report.toolCalls.some((call, index) =>
        Object.values(call.args ?? {}).some(
          (value) =>
            typeof value === 'string' &&
            !report.goal.includes(value) &&
            report.toolCalls.slice(0, index).some((earlier) => earlier.resultSummary?.includes(value)),
        ),
      ),
    );
    expect(flowing.length / completed.length).toBeGreaterThan(0.9);
  });

  it('retries failed calls in runs that still complete', () => {
    const retried = completed.filter(({ report }) =>
      report.toolCalls.some(
        (call, index) => !call.success && report.toolCalls[index + 1]?.tool === call.tool && report.toolCalls[index + 1]?.success,
      ),
    );
    expect(retried.length / completed.length).toBeGreaterThan(0.2);
  });

  it('gives twin families one procedure and decoy families whose goals read alike different ones', () => {
    const firstSequence = (family: string) => {
      const steps = VARIED_TASK_FAMILIES.find((candidate) => candidate.id === family)!.steps;
      return steps.map((step) => step.tool);
    };
    expect(firstSequence('damaged-delivery')).toEqual(firstSequence('refund-order'));
    expect(new Set(runs.filter((run) => run.family === 'damaged-delivery').map((run) => run.procedure))).toEqual(new Set(['refund-order']));
    expect(firstSequence('reship-order')).not.toEqual(firstSequence('refund-order'));
    expect(new Set(runs.filter((run) => run.family === 'mileage-claim').map((run) => run.procedure))).toEqual(new Set(['expense-report']));
    // Decoys share wording: "refund order X" / "reship order X", "restart S in E" / "roll back S in E".
    const goals = (family: string) => VARIED_TASK_FAMILIES.find((candidate) => candidate.id === family)!.goals;
    expect(goals('refund-order')[0]).toBe('refund order {order}');
    expect(goals('reship-order')[0]).toBe('reship order {order}');
    const tools = new Set(completed.filter((run) => run.family === 'cancel-meeting-room').flatMap((run) => successfulTools(run.report)));
    expect(tools.has('calendar.rooms.book')).toBe(false);
  });
});

import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { runReportSchema } from '../../src/runs/run-report.ts';
import { createSeededRandom } from '../../src/runs/seeded-random.ts';
import { generateRuns, TASK_FAMILIES } from '../../src/runs/trace-generator.ts';

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

describe('trace generator', () => {
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

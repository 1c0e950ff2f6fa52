import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { EvalCorpusInvalid } from '../../src/eval/eval-corpus.ts';
import { comparePaired, type PairedGoalInput } from '../../src/eval/paired-eval.ts';
import { runEval, type EvalDependencies } from '../../src/eval/run-eval.ts';
import { clopperPearsonInterval } from '../../src/rollout/clopper-pearson.ts';
import { pairedSampleSchema } from '../../src/rollout/paired-evidence.ts';

const combination = { modelPolicy: 'offline-eval', policyProfile: 'none', authoringVersion: 'authoring-1' };
const gold = ['repo.clone', 'build.run', 'deploy.apply'];

const goals: PairedGoalInput[] = [
  // Both arms take the gold sequence.
  { goal: 'deploy billing', family: 'deploy', tools: gold, gold, recalled: { name: 'deploy', tools: gold } },
  // The original run wandered (a noise call and a retry); the recalled procedure is the gold sequence.
  {
    goal: 'deploy ledger',
    family: 'deploy',
    tools: ['repo.clone', 'web.search', 'build.run', 'build.run', 'deploy.apply'],
    gold,
    recalled: { name: 'deploy', tools: gold },
  },
  // The original run was right; the recalled procedure misses a step.
  { goal: 'deploy search', family: 'deploy', tools: gold, gold, recalled: { name: 'deploy-lite', tools: ['repo.clone', 'deploy.apply'] } },
  // Nothing recalled: the arm with recall does what the original run did.
  { goal: 'deploy auth', family: 'deploy', tools: ['repo.clone', 'deploy.apply'], gold, recalled: null },
];

describe('comparePaired (eval --paired)', () => {
  it('reports each goal without and with recall and writes one valid pair per goal', () => {
    const { report, pairs } = comparePaired(goals, combination);
    expect(report.perGoal.map((goal) => [goal.originalSteps, goal.recalledSteps, goal.stepReduction])).toEqual([
      [3, 3, 0],
      [5, 3, 2],
      [3, 2, 1],
      [2, null, 0],
    ]);
    expect(report.perGoal.map((goal) => [goal.originalMatchesGold, goal.recalledMatchesGold])).toEqual([
      [true, true],
      [false, true],
      [true, false],
      [false, null],
    ]);
    expect(pairs.map((pair) => [pair.baselineCompleted, pair.authoredCompleted])).toEqual([
      [true, true],
      [false, true],
      [true, false],
      [false, false],
    ]);
    for (const pair of pairs) expect(pairedSampleSchema.parse(pair)).toEqual(pair);
    expect(new Set(pairs.map((pair) => pair.caseId)).size).toBe(4);
    // The case id depends on the goal only, so a re-run's pairs record as unchanged.
    expect(comparePaired([goals[1]!], combination).pairs[0]!.caseId).toBe(pairs[1]!.caseId);

    expect(report).toMatchObject({ combination, goals: 4, recalled: 3 });
    expect(report.check).toMatchObject({ n: 4, b: 1, c: 1, improvement: 0, passed: false, policyRegression: false });
    expect(report.matchRate.withoutRecall).toEqual({ matched: 2, rate: 0.5, interval: clopperPearsonInterval(2, 4) });
    expect(report.matchRate.withRecall).toEqual({ matched: 2, rate: 0.5, interval: clopperPearsonInterval(2, 4) });
    // Step reductions 0, 2, 1, 0: mean 0.75, sample sd √(2.75/3), normal 95 % half-width 1.96·sd/2.
    const half = (1.959963984540054 * Math.sqrt(2.75 / 3)) / 2;
    expect(report.stepReduction.mean).toBeCloseTo(0.75, 12);
    expect(report.stepReduction.interval.lower).toBeCloseTo(0.75 - half, 12);
    expect(report.stepReduction.interval.upper).toBeCloseTo(0.75 + half, 12);
  });

  it('has no intervals to give without goals, and a single goal has a point interval', () => {
    const empty = comparePaired([], combination).report;
    expect(empty.matchRate.withRecall).toEqual({ matched: 0, rate: 0, interval: null });
    expect(empty.check).toMatchObject({ n: 0, passed: false });
    const one = comparePaired([goals[1]!], combination).report;
    expect(one.stepReduction).toEqual({ mean: 2, interval: { lower: 2, upper: 2 } });
  });
});

describe('runEval --paired', () => {
  // Refusals come before anything is ingested or run: none of these dependencies may be used.
  const unused = (what: string) => () => {
    throw new Error(`${what} was used before the held-out file was checked`);
  };
  const deps: EvalDependencies = {
    pool: new Proxy({}, { get: (_target, property) => unused(`pool.${String(property)}`) }) as pg.Pool,
    runPass: unused('runPass'),
    recall: unused('recall'),
    progress: unused('progress'),
  };
  const options = { tenantId: 'eval-x', runsFile: 'runs.jsonl', labelsFile: 'labels.jsonl', maxPasses: 1, settings: {} };
  const paired = { pairsFile: 'pairs.jsonl', combination };

  it('refuses without --heldout, and a labelled held-out goal without its tools and gold sequences', async () => {
    await expect(runEval(deps, { ...options, paired })).rejects.toThrow(/--paired needs --heldout/);
    const directory = await mkdtemp(join(tmpdir(), 'skillsmith-paired-'));
    try {
      const heldoutFile = join(directory, 'heldout.jsonl');
      await writeFile(
        heldoutFile,
        `${JSON.stringify({ goal: 'fold a sheet', family: null })}\n${JSON.stringify({ goal: 'deploy auth', family: 'deploy', tools: gold })}\n`,
      );
      const refused = runEval(deps, { ...options, heldoutFile, paired });
      await expect(refused).rejects.toBeInstanceOf(EvalCorpusInvalid);
      await expect(refused).rejects.toThrow('--paired: held-out goal "deploy auth" has no "tools" and "gold" tool sequences');
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});

import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/infra/temporal-dev-server.ts';
import { listProcedures } from '../../src/procedures/procedure-repository.ts';
import { AUTHORING_IMPLEMENTATION_VERSION } from '../../src/rollout/activation.ts';
import type { RunReport } from '../../src/runs/run-report.ts';
import { runSkillsmith } from '../support/cli.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';
import {
  cliEnvironment,
  startSynthesisHarness,
  synthesisTestConfig,
  taskRuns,
  type SynthesisHarness,
} from '../support/synthesis-harness.ts';
import { requireTestModel } from '../support/test-model.ts';

const ROTATE_TOOLS = ['secrets.read', 'keys.rotate', 'secrets.write'];
const ROTATE_GOALS = [
  'Rotate the API key for the payments integration',
  'Please rotate the payments integration API key',
  'Rotate our payments API key',
];
const TRANSLATE_TOOLS = ['docs.fetch', 'translate.text', 'docs.write', 'vcs.pr.create'];
const TRANSLATE_GOALS = [
  'Translate the getting started guide into German',
  'Translate the getting started page into German please',
  'We need the getting started guide translated into German',
  'Produce a German translation of the getting started guide',
];

const generatedCorpus = fileURLToPath(new URL('../../bench/corpora/generated.ts', import.meta.url));
const jsonl = (values: readonly unknown[]) => values.map((value) => JSON.stringify(value)).join('\n') + '\n';
const withoutTenant = ({ tenantId: _tenantId, ...report }: RunReport) => report;

describe('skillsmith eval: a labelled corpus through the real pass, scored', () => {
  let database: TestDatabase;
  let harness: SynthesisHarness;
  let env: Record<string, string>;
  let directory: string;
  let generated: Promise<string>;

  beforeAll(async () => {
    await requireTestModel();
    database = await openTestDatabase();
    harness = await startSynthesisHarness(database, synthesisTestConfig({ taskQueue: `eval-${Date.now()}` }));
    env = cliEnvironment(database, harness, { SKILLSMITH_DISTILLER: 'extractive' });
    directory = await mkdtemp(join(tmpdir(), 'skillsmith-eval-test-'));
    // The corpus of the --paired test, made by the bench's generator while the other tests run:
    // the generator (compiled by tsx in a process of its own) is not what that test checks.
    const corpus = join(directory, 'generated');
    generated = promisify(execFile)(process.execPath, [
      '--import',
      'tsx',
      generatedCorpus,
      '--out',
      corpus,
      '--runs',
      '120',
      '--catalog',
      'classic',
    ]).then(() => corpus);
    generated.catch(() => undefined);
    const rotate = taskRuns('rotate', ROTATE_GOALS, ROTATE_TOOLS);
    const translate = taskRuns('translate', TRANSLATE_GOALS, TRANSLATE_TOOLS, { startAt: 10 });
    const oneOff = taskRuns('one-off', ['What is the capital of Mongolia?'], ['web.search'], { startAt: 20 });
    await writeFile(join(directory, 'runs.jsonl'), jsonl([...rotate, ...translate, ...oneOff].map(withoutTenant)));
    await writeFile(
      join(directory, 'labels.jsonl'),
      jsonl([
        ...rotate.map((run) => ({ runId: run.runId, family: 'rotate-key' })),
        ...translate.map((run) => ({ runId: run.runId, family: 'translate-docs' })),
        { runId: 'one-off-1', family: null },
      ]),
    );
    await writeFile(
      join(directory, 'heldout.jsonl'),
      jsonl([
        { goal: 'Rotate the payments API key now', family: 'rotate-key' },
        { goal: 'Translate the getting started guide to German', family: 'translate-docs' },
        { goal: 'How do I fold a fitted sheet neatly?', family: null },
      ]),
    );
  });

  afterAll(async () => {
    await harness?.close();
    await database?.close();
    if (directory) await rm(directory, { recursive: true, force: true });
  });

  it('learns one clean skill per recurring family on a fresh tenant and scores it against the labels', async () => {
    const files = [
      '--runs',
      join(directory, 'runs.jsonl'),
      '--labels',
      join(directory, 'labels.jsonl'),
      '--heldout',
      join(directory, 'heldout.jsonl'),
    ];
    const run = await runSkillsmith(['eval', ...files, '--json'], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/synthesis pass 1/);
    const report = JSON.parse(run.stdout);
    expect(report.tenantId).toMatch(/^eval-\d{8}-\d{6}-[0-9a-f]{6}$/);
    expect(report.corpus).toEqual({
      runs: 8,
      labelledFamilies: 2,
      unlabelledRuns: 1,
      recurringFamilies: 2,
      heldoutPositives: 2,
      heldoutNegatives: 1,
    });
    // Passes run until one changes nothing; that one is the last.
    expect(report.converged).toBe(true);
    expect(report.passes.at(-1).counts).toMatchObject({ added: 0, updated: 0, superseded: 0 });
    expect(report.passes[0].counts).toMatchObject({ runsSeen: 8, added: 2 });

    const live = (await listProcedures(database.pool, report.tenantId)).filter(
      (procedure) => procedure.enabled && procedure.supersededBy === null,
    );
    expect(report.skills).toMatchObject({ total: 2, live: live.length, mixing: 0, familiesWithSeveralSkills: 0 });
    expect(report.skills.list.map((skill: { family: string; share: number }) => [skill.family, skill.share]).sort()).toEqual([
      ['rotate-key', 1],
      ['translate-docs', 1],
    ]);
    expect(report.familyRecall).toEqual({ recurring: 2, recalled: 2, rate: 1, missed: [] });
    // Procedure-aware clustering keeps clusters pure, and the distinctive procedure holds all four translate paraphrases together.
    expect(report.clusters).toMatchObject({ purity: 1, clusteredRuns: 7, qualifying: { purity: 1 } });
    expect(report.heldout).toMatchObject({ positives: 2, top1: 2, top2: 2, negatives: 1, falsePositives: 0 });
    // Every provenance goal (the 7 clustered runs') is recalled; recall searches the goals a skill
    // was learned from, so each gets its own skill back first.
    expect(report.inSample.goals).toBe(7);
    expect(report.inSample.top1).toBe(7);
    expect(report.inSample.rate).toBeCloseTo(1);
    expect(report.timings.totalMs).toBeGreaterThanOrEqual(report.timings.ingestMs + report.timings.passesMs);
  });

  it('refuses a corpus whose runs are not all labelled, before running anything', async () => {
    const labels = join(directory, 'partial-labels.jsonl');
    await writeFile(labels, jsonl([{ runId: 'rotate-1', family: 'rotate-key' }]));
    // Nothing it would need to run is there: no Temporal answers at the address, no model in the directory.
    const nothing = { ...env, TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}`, SKILLSMITH_MODEL_DIR: join(directory, 'no-models') };
    const run = await runSkillsmith(['eval', '--runs', join(directory, 'runs.jsonl'), '--labels', labels, '--json'], nothing);
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout).error).toEqual({
      code: 'EvalCorpusInvalid',
      message: expect.stringMatching(/^7 run\(s\) have no label, e\.g\. "rotate-2"/),
    });
  });
  it('eval --paired on the generated corpus writes pairs that rollout record stores and rollout check evaluates', async () => {
    const corpus = await generated;
    const heldout = (await readFile(join(corpus, 'heldout.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { goal: string; family: string | null; tools?: string[]; gold?: string[] });
    const labelled = heldout.filter((line) => line.family !== null);
    const pairsFile = join(directory, 'pairs.jsonl');
    const pairedEnv = { ...env, SKILLSMITH_MODEL_POLICY: 'offline-eval' };
    const files = [
      '--runs',
      join(corpus, 'runs.jsonl'),
      '--labels',
      join(corpus, 'labels.jsonl'),
      '--heldout',
      join(corpus, 'heldout.jsonl'),
    ];
    const run = await runSkillsmith(['eval', ...files, '--paired', pairsFile, '--json'], pairedEnv, 300_000);
    expect(run.code, run.stderr).toBe(0);
    const { paired } = JSON.parse(run.stdout);
    expect(paired.combination).toEqual({
      modelPolicy: 'offline-eval',
      policyProfile: 'none',
      authoringVersion: AUTHORING_IMPLEMENTATION_VERSION,
    });
    expect(paired.goals).toBe(labelled.length);
    expect(paired.recalled).toBeGreaterThan(0);
    // Per goal: the original run's steps are its tools; a recalled procedure's match is judged, none is null.
    for (const [index, goal] of paired.perGoal.entries()) {
      expect(goal.goal).toBe(labelled[index]!.goal);
      expect(goal.originalSteps).toBe(labelled[index]!.tools!.length);
      expect(goal.recalledMatchesGold === null).toBe(goal.recalled === null);
      expect(goal.stepReduction).toBe(goal.originalSteps - (goal.recalledSteps ?? goal.originalSteps));
    }

    const record = await runSkillsmith(['rollout', 'record', '--file', pairsFile, '--tenant', 'paired', '--json'], pairedEnv);
    expect(record.code, record.stderr).toBe(0);
    expect(JSON.parse(record.stdout)).toMatchObject({ samples: labelled.length, inserted: labelled.length, invalid: 0 });
    const checked = await runSkillsmith(
      [
        'rollout',
        'check',
        '--model-policy',
        'offline-eval',
        '--policy-profile',
        'none',
        '--authoring-version',
        AUTHORING_IMPLEMENTATION_VERSION,
        '--tenant',
        'paired',
        '--json',
      ],
      pairedEnv,
    );
    expect(checked.code, checked.stderr).toBe(0);
    const { tenantId: _tenantId, combination: _combination, ...document } = JSON.parse(checked.stdout);
    // The gate computes from the stored pairs exactly what the eval reported it would.
    expect(document).toEqual(paired.check);
    expect(document.n).toBe(labelled.length);
    expect(document.b).toBe(
      paired.perGoal.filter(
        (goal: { originalMatchesGold: boolean; recalledMatchesGold: boolean | null }) =>
          goal.recalledMatchesGold === true && !goal.originalMatchesGold,
      ).length,
    );
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upsertRuns } from '../../src/runs/run-repository.ts';
import { generateRuns } from '../../src/demo/synthetic-runs.ts';
import { runSkillsmith } from '../support/cli.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';
import { requireTestModel, testModelDir } from '../support/test-model.ts';

const RUNS = 300;

describe('progress on stderr when it is not a terminal', () => {
  let database: TestDatabase;
  let env: Record<string, string>;

  beforeAll(async () => {
    await requireTestModel();
    database = await openTestDatabase();
    const runs = generateRuns({ seed: 5, runs: RUNS, tenantId: 'slow' });
    await upsertRuns(
      database.pool,
      'slow',
      runs.map((generated) => generated.report),
    );
    env = {
      DATABASE_URL: database.url,
      SKILLSMITH_EMBEDDING_MODEL: 'sentence-transformers/all-MiniLM-L6-v2',
      SKILLSMITH_EMBEDDING_PREFIXES: 'none',
      SKILLSMITH_MODEL_DIR: testModelDir,
      NODE_NO_WARNINGS: '1',
    };
  });

  afterAll(async () => {
    await database?.close();
  });

  it('clusters reports embedding as JSON lines on stderr and the result alone on stdout', async () => {
    const run = await runSkillsmith(['clusters', '--tenant', 'slow', '--json'], env);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ embedding: { embedded: RUNS } });
    const lines = run.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const progress = lines.map((line) => line.progress).filter(Boolean);
    expect(progress.length).toBeGreaterThanOrEqual(1);
    for (const line of progress) expect(line).toMatchObject({ step: 'embedding goals', unit: 'goals', total: RUNS });
    expect(progress.map((line) => line.done)).toEqual([...progress.map((line) => line.done)].sort((a, b) => a - b));
    expect(progress.at(-1)).toMatchObject({ done: RUNS });
    expect(progress.at(-1).ratePerSecond).toBeGreaterThan(0);
  });
});

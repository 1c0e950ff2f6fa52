import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runSkillsmith } from '../support/cli.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';
import { ingest, startSynthesisHarness, synthesisTestConfig, taskRuns, type SynthesisHarness } from '../support/synthesis-harness.ts';
import { testModelSettings } from '../support/test-model.ts';

const TENANT = 'broken';

describe('a failed pass says why: synthesize --wait, its --json, passes, passes show', () => {
  let database: TestDatabase;
  let harness: SynthesisHarness;
  let emptyModelDir: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    database = await openTestDatabase();
    // The worker's embedder looks for its model where there is none: the embed step fails non-retryably.
    emptyModelDir = await mkdtemp(join(tmpdir(), 'skillsmith-no-model-'));
    const config = synthesisTestConfig({ taskQueue: `failed-pass-${Date.now()}` });
    harness = await startSynthesisHarness(database, { ...config, embedding: testModelSettings({ modelDir: emptyModelDir }) });
    env = {
      DATABASE_URL: database.url,
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_TASK_QUEUE: harness.config.temporal.taskQueue,
      NODE_NO_WARNINGS: '1',
    };
    await ingest(
      database,
      taskRuns('rotate', ['Rotate the API key', 'Please rotate the API key'], ['keys.rotate'], { tenantId: TENANT }),
      TENANT,
    );
  });

  afterAll(async () => {
    await harness?.close();
    await database?.close();
    if (emptyModelDir) await rm(emptyModelDir, { recursive: true, force: true });
  });

  it('prints the failed pass record with its root cause, and exits 1', async () => {
    const run = await runSkillsmith(['synthesize', '--wait', '--json', '--tenant', TENANT], env);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe('');
    const pass = JSON.parse(run.stdout);
    expect(pass).toMatchObject({ tenantId: TENANT, status: 'failed' });
    expect(pass.outcome).toMatch(/^failed: EmbeddingModelUnavailable: /);
    // The cause apart, and the documented error envelope beside the record.
    expect(pass.failure).toEqual({ type: 'EmbeddingModelUnavailable', message: expect.stringContaining(emptyModelDir) });
    expect(pass.error).toEqual({ code: 'EmbeddingModelUnavailable', message: pass.failure.message });

    const human = await runSkillsmith(['synthesize', '--wait', '--tenant', TENANT], env);
    expect(human.code).toBe(1);
    expect(human.stdout).toMatch(/failed \(failed: EmbeddingModelUnavailable: /);
    expect(human.stdout).not.toMatch(/Activity task failed|Workflow execution failed/);
    expect(human.stdout).toMatch(/\n {2}cause: EmbeddingModelUnavailable: .+/);

    const listed = await runSkillsmith(['passes', '--tenant', TENANT], env);
    expect(listed.stdout).toMatch(/failed \(failed: EmbeddingModelUnavailable: /);
    expect(listed.stdout).toMatch(/\n {2}cause: EmbeddingModelUnavailable: /);
    const listedJson = JSON.parse((await runSkillsmith(['passes', '--json', '--tenant', TENANT], env)).stdout);
    expect(listedJson.passes[0].failure).toEqual(pass.failure);
    const shown = JSON.parse((await runSkillsmith(['passes', 'show', pass.id, '--json', '--tenant', TENANT], env)).stdout);
    expect(shown.outcome).toBe(pass.outcome);
    expect(shown.failure).toEqual(pass.failure);
    const shownHuman = await runSkillsmith(['passes', 'show', pass.id, '--tenant', TENANT], env);
    expect(shownHuman.stdout).toMatch(/\n {2}cause: EmbeddingModelUnavailable: /);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countGoalsWithoutEmbedding } from '../../src/embedding/goal-embedding-repository.ts';
import { freePort } from '../../src/infra/temporal-dev-server.ts';
import { generateRuns } from '../../src/demo/synthetic-runs.ts';
import { runSkillsmith } from '../support/cli.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';
import {
  cliEnvironment,
  ingest,
  startSynthesisHarness,
  synthesisTestConfig,
  taskRuns,
  type SynthesisHarness,
} from '../support/synthesis-harness.ts';
import { requireTestModel } from '../support/test-model.ts';
import { until } from '../support/until.ts';

// The demo on a fresh home and the README commands after it: test/e2e/demo-cli.test.ts.

const TOOLS = ['secrets.read', 'keys.rotate', 'secrets.write'];
const GOALS = [
  'Rotate the API key for the payments integration',
  'Please rotate the payments integration API key',
  'Rotate our payments API key',
];

describe('the synthesis CLI: synthesize --wait, passes, recall, procedures, schedule', () => {
  let database: TestDatabase;
  let harness: SynthesisHarness;
  let env: Record<string, string>;

  beforeAll(async () => {
    await requireTestModel();
    database = await openTestDatabase();
    harness = await startSynthesisHarness(database, synthesisTestConfig({ taskQueue: `cli-${Date.now()}` }));
    env = cliEnvironment(database, harness);
    await ingest(database, taskRuns('rotate', GOALS, TOOLS, { tenantId: 'cli' }), 'cli');
    // For the cancel below: enough goals that embedding takes seconds, so the cancel lands on a
    // running pass. Ingested here, not in the test: the ingest is not what it checks, and it took a
    // third of the test's time on a loaded machine.
    const cancelRuns = generateRuns({ seed: 12, runs: 1500, tenantId: 'cli-cancel' }).map(({ report }) => report);
    for (let start = 0; start < cancelRuns.length; start += 500) await ingest(database, cancelRuns.slice(start, start + 500), 'cli-cancel');
  });

  afterAll(async () => {
    await harness?.close();
    await database?.close();
  });

  it('synthesize --wait --json runs a pass and prints its record; passes lists it', async () => {
    const run = await runSkillsmith(['synthesize', '--wait', '--json', '--tenant', 'cli'], env);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const pass = JSON.parse(run.stdout);
    expect(pass).toMatchObject({ tenantId: 'cli', status: 'completed', distiller: 'extractive', counts: { added: 1, qualifying: 1 } });
    expect(pass.id).toMatch(/^synthesis\/cli\//);

    const [listedRun, shownRun] = await Promise.all([
      runSkillsmith(['passes', '--json', '--tenant', 'cli'], env),
      runSkillsmith(['passes', 'show', pass.id, '--json', '--tenant', 'cli'], env),
    ]);
    const listed = JSON.parse(listedRun.stdout);
    expect(listed.passes.map((record: { id: string }) => record.id)).toEqual([pass.id]);
    const shown = JSON.parse(shownRun.stdout);
    expect(shown.clusters).toEqual([
      expect.objectContaining({ qualifying: true, status: 'installed', decision: 'add', revision: 1, runCount: 3 }),
    ]);
  });

  it('synthesize --wait shows progress on stderr and the summary on stdout', async () => {
    const run = await runSkillsmith(['synthesize', '--wait', '--tenant', 'cli'], env);
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/started synthesis\/cli\//);
    expect(run.stderr).toMatch(/done: completed\n$/);
    expect(run.stdout).toMatch(/completed\n {2}runs seen 0, sequences 0/);
  });

  // Recall, then disable and enable what it found: two tests, so that neither runs near its
  // timeout on a busy machine (each recall is a process that loads the model).
  let recalledName: string;

  it('recall prints the learned skill; disabling an unknown procedure is refused', async () => {
    // Refused without changing anything: it runs beside the recall.
    const missingRun = runSkillsmith(['procedures', 'disable', 'no-such-skill', '--tenant', 'cli'], env);
    const recalled = JSON.parse(
      (await runSkillsmith(['recall', 'rotate the payments API key please', '--json', '--tenant', 'cli'], env)).stdout,
    );
    expect(recalled.matches).toHaveLength(1);
    recalledName = recalled.matches[0].name;
    expect(recalled.matches[0]).toMatchObject({ revision: 1, toolsRequired: TOOLS });

    const missing = await missingRun;
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe('skillsmith: no procedure named "no-such-skill" in tenant cli\n');
  });

  it('a disabled procedure is not recalled; enable brings it back', async () => {
    const name = recalledName;
    const disabled = await runSkillsmith(['procedures', 'disable', name, '--json', '--tenant', 'cli'], env);
    expect(JSON.parse(disabled.stdout)).toMatchObject({ name, enabled: false });
    expect(
      JSON.parse((await runSkillsmith(['recall', 'rotate the payments API key please', '--json', '--tenant', 'cli'], env)).stdout).matches,
    ).toEqual([]);
    await runSkillsmith(['procedures', 'enable', name, '--tenant', 'cli'], env);
    expect(
      JSON.parse((await runSkillsmith(['recall', 'rotate the payments API key please', '--json', '--tenant', 'cli'], env)).stdout).matches,
    ).toHaveLength(1);
  });

  // The three tests below change nothing another reads (the cancelled pass has a tenant of its
  // own) and mostly wait on child processes, Temporal and a connect timeout: they run side by side.
  it.concurrent(
    'recall refuses an empty goal and a bad --top-k, one line each, before it opens the database or loads a model',
    async ({ expect }) => {
      const nothing = {
        ...env,
        DATABASE_URL: `postgresql://postgres@127.0.0.1:${await freePort()}/none`,
        SKILLSMITH_MODEL_DIR: '/nonexistent',
      };
      const [empty, topK] = await Promise.all([
        runSkillsmith(['recall', '  ', '--tenant', 'cli'], nothing),
        runSkillsmith(['recall', 'rotate keys', '--top-k', 'many', '--tenant', 'cli'], nothing),
      ]);
      expect(empty.code).toBe(1);
      expect(empty.stderr).toMatch(/goal is empty/);
      expect(topK.code).toBe(1);
      expect(topK.stderr).toMatch(/topK/);
      expect(topK.stderr.trim().split('\n')).toHaveLength(1);
    },
  );

  it.concurrent('passes cancel stops a running pass, which is recorded as cancelled', async ({ expect }) => {
    const handle = await harness.startPass({ tenantId: 'cli-cancel' });
    const cancelled = await runSkillsmith(['passes', 'cancel', handle.workflowId, '--json', '--tenant', 'cli-cancel'], env);
    expect(cancelled.code).toBe(0);
    expect(JSON.parse(cancelled.stdout)).toEqual({ workflowId: handle.workflowId, cancelRequested: true });
    await handle.result().catch(() => undefined);
    const listed = JSON.parse((await runSkillsmith(['passes', '--json', '--tenant', 'cli-cancel'], env)).stdout);
    expect(listed.passes[0]).toMatchObject({ id: handle.workflowId, status: 'cancelled' });
    // The cancel reached the embedding, which stopped with goals left: it did not go on through all
    // 1,500 while the SDK held its heartbeats back (workers/worker.ts, HEARTBEAT_THROTTLE_INTERVAL).
    await until('the cancelled embedding to stop', async () => (harness.worker.getStatus().numInFlightActivities === 0 ? true : undefined));
    expect(await countGoalsWithoutEmbedding(database.pool, 'cli-cancel', harness.config.embedding.model)).toBeGreaterThan(0);
    const [again, unknown] = await Promise.all([
      runSkillsmith(['passes', 'cancel', handle.workflowId, '--json', '--tenant', 'cli-cancel'], env),
      runSkillsmith(['passes', 'cancel', 'synthesis/cli-cancel/nope', '--tenant', 'cli-cancel'], env),
    ]);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stdout)).toEqual({
      error: { code: 'PassNotRunning', message: `pass ${handle.workflowId} already ended (cancelled): nothing to cancel` },
    });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no running pass/);
  });

  it.concurrent('says which Temporal it could not reach', async ({ expect }) => {
    const run = await runSkillsmith(['synthesize', '--tenant', 'cli'], { ...env, TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}` });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^skillsmith: Temporal at 127\.0\.0\.1:\d+ does not answer/);
  });

  // One schedule through its life, one CLI step after another: three tests, so that none of them
  // runs near its timeout when the machine is busy (each CLI call is a process of its own).
  describe('schedule set / show / pause / resume / delete manage a Temporal Schedule with overlap skip', () => {
    it('set creates it with overlap skip on the pass task queue, show prints it as written; a bad --every is refused', async () => {
      // Refused before it reaches Temporal (none answers at its address): nothing it could change, so it runs beside the rest.
      const badRun = runSkillsmith(['schedule', 'set', '--every', 'daily', '--tenant', 'cli'], {
        ...env,
        TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}`,
      });
      const set = await runSkillsmith(['schedule', 'set', '--every', '24h', '--json', '--tenant', 'cli'], env);
      expect(set.code).toBe(0);
      expect(JSON.parse(set.stdout)).toMatchObject({ scheduleId: 'synthesis/cli', paused: false });
      const [description, shown] = await Promise.all([
        harness.client.schedule.getHandle('synthesis/cli').describe(),
        runSkillsmith(['schedule', 'show', '--tenant', 'cli'], env),
      ]);
      expect(description.policies.overlap).toBe('SKIP');
      expect(description.action).toMatchObject({ workflowType: 'synthesisPass', taskQueue: harness.config.temporal.taskQueue });
      expect(shown.stdout).toMatch(/^synthesis\/cli: every 24h\n/);

      const bad = await badRun;
      expect(bad.code).toBe(1);
      expect(bad.stderr).toMatch(/invalid --every "daily"/);
    });

    it('pause and resume show in schedule show --json', async () => {
      await runSkillsmith(['schedule', 'pause', '--tenant', 'cli'], env);
      expect(JSON.parse((await runSkillsmith(['schedule', 'show', '--json', '--tenant', 'cli'], env)).stdout)).toMatchObject({
        paused: true,
      });
      await runSkillsmith(['schedule', 'resume', '--tenant', 'cli'], env);
      expect(JSON.parse((await runSkillsmith(['schedule', 'show', '--json', '--tenant', 'cli'], env)).stdout)).toMatchObject({
        paused: false,
      });
    });

    it('delete removes it; show then says how to create one', async () => {
      expect((await runSkillsmith(['schedule', 'delete', '--tenant', 'cli'], env)).code).toBe(0);
      const gone = await runSkillsmith(['schedule', 'show', '--tenant', 'cli'], env);
      expect(gone.code).toBe(1);
      expect(gone.stderr).toMatch(/no schedule synthesis\/cli: create one with/);
    });
  });
});

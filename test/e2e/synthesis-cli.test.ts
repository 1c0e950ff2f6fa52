import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../../src/infra/temporal-dev-server.ts';
import { generateRuns } from '../../src/runs/trace-generator.ts';
import { createStackHome, type StackHome } from '../support/stack-home.ts';
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
import { requireTestModel, testModelDir } from '../support/test-model.ts';
import { until } from '../support/until.ts';

const bin = fileURLToPath(new URL('../../bin/skillsmith.js', import.meta.url));

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

    const listed = JSON.parse((await runSkillsmith(['passes', '--json', '--tenant', 'cli'], env)).stdout);
    expect(listed.passes.map((record: { id: string }) => record.id)).toEqual([pass.id]);
    const shown = JSON.parse((await runSkillsmith(['passes', 'show', pass.id, '--json', '--tenant', 'cli'], env)).stdout);
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

  it('recall prints the learned skill; a disabled procedure is not recalled; enable brings it back', async () => {
    const recalled = JSON.parse(
      (await runSkillsmith(['recall', 'rotate the payments API key please', '--json', '--tenant', 'cli'], env)).stdout,
    );
    expect(recalled.matches).toHaveLength(1);
    const name = recalled.matches[0].name;
    expect(recalled.matches[0]).toMatchObject({ revision: 1, toolsRequired: TOOLS });

    const disabled = await runSkillsmith(['procedures', 'disable', name, '--json', '--tenant', 'cli'], env);
    expect(JSON.parse(disabled.stdout)).toMatchObject({ name, enabled: false });
    expect(
      JSON.parse((await runSkillsmith(['recall', 'rotate the payments API key please', '--json', '--tenant', 'cli'], env)).stdout).matches,
    ).toEqual([]);
    await runSkillsmith(['procedures', 'enable', name, '--tenant', 'cli'], env);
    expect(
      JSON.parse((await runSkillsmith(['recall', 'rotate the payments API key please', '--json', '--tenant', 'cli'], env)).stdout).matches,
    ).toHaveLength(1);

    const missing = await runSkillsmith(['procedures', 'disable', 'no-such-skill', '--tenant', 'cli'], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe('skillsmith: no procedure named "no-such-skill" in tenant cli\n');
  });

  it('recall refuses an empty goal and a bad --top-k, one line each', async () => {
    const empty = await runSkillsmith(['recall', '  ', '--tenant', 'cli'], env);
    expect(empty.code).toBe(1);
    expect(empty.stderr).toMatch(/goal is empty/);
    const topK = await runSkillsmith(['recall', 'rotate keys', '--top-k', 'many', '--tenant', 'cli'], env);
    expect(topK.code).toBe(1);
    expect(topK.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('schedule set / show / pause / resume / delete manage a Temporal Schedule with overlap skip', async () => {
    const set = await runSkillsmith(['schedule', 'set', '--every', '24h', '--json', '--tenant', 'cli'], env);
    expect(set.code).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({ scheduleId: 'synthesis/cli', paused: false });
    const description = await harness.client.schedule.getHandle('synthesis/cli').describe();
    expect(description.policies.overlap).toBe('SKIP');
    expect(description.action).toMatchObject({ workflowType: 'synthesisPass', taskQueue: harness.config.temporal.taskQueue });

    expect((await runSkillsmith(['schedule', 'show', '--tenant', 'cli'], env)).stdout).toMatch(/^synthesis\/cli: every 24h\n/);
    await runSkillsmith(['schedule', 'pause', '--tenant', 'cli'], env);
    expect(JSON.parse((await runSkillsmith(['schedule', 'show', '--json', '--tenant', 'cli'], env)).stdout)).toMatchObject({
      paused: true,
    });
    await runSkillsmith(['schedule', 'resume', '--tenant', 'cli'], env);
    expect(JSON.parse((await runSkillsmith(['schedule', 'show', '--json', '--tenant', 'cli'], env)).stdout)).toMatchObject({
      paused: false,
    });
    expect((await runSkillsmith(['schedule', 'delete', '--tenant', 'cli'], env)).code).toBe(0);
    const gone = await runSkillsmith(['schedule', 'show', '--tenant', 'cli'], env);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/no schedule synthesis\/cli: create one with/);

    const bad = await runSkillsmith(['schedule', 'set', '--every', 'daily', '--tenant', 'cli'], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/invalid --every "daily"/);
  });

  it('passes cancel stops a running pass, which is recorded as cancelled', async () => {
    // Enough goals that embedding takes seconds: the cancel lands on a running pass.
    const runs = generateRuns({ seed: 12, runs: 1500, tenantId: 'cli-cancel' }).map(({ report }) => report);
    for (let start = 0; start < runs.length; start += 500) await ingest(database, runs.slice(start, start + 500), 'cli-cancel');
    const handle = await harness.startPass({ tenantId: 'cli-cancel' });
    const cancelled = await runSkillsmith(['passes', 'cancel', handle.workflowId, '--json', '--tenant', 'cli-cancel'], env);
    expect(cancelled.code).toBe(0);
    expect(JSON.parse(cancelled.stdout)).toEqual({ workflowId: handle.workflowId, cancelRequested: true });
    await handle.result().catch(() => undefined);
    const listed = JSON.parse((await runSkillsmith(['passes', '--json', '--tenant', 'cli-cancel'], env)).stdout);
    expect(listed.passes[0]).toMatchObject({ id: handle.workflowId, status: 'cancelled' });
    const again = await runSkillsmith(['passes', 'cancel', handle.workflowId, '--json', '--tenant', 'cli-cancel'], env);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stdout)).toEqual({
      error: { code: 'PassNotRunning', message: `pass ${handle.workflowId} already ended (cancelled): nothing to cancel` },
    });
    const unknown = await runSkillsmith(['passes', 'cancel', 'synthesis/cli-cancel/nope', '--tenant', 'cli-cancel'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no running pass/);
  });

  it('says which Temporal it could not reach', async () => {
    const run = await runSkillsmith(['synthesize', '--tenant', 'cli'], { ...env, TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}` });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^skillsmith: Temporal at 127\.0\.0\.1:\d+ does not answer/);
  });
});

describe('skillsmith demo on a fresh home, then the README commands on its data with nothing set', () => {
  let stackHome: StackHome;
  let demo: ChildProcess | undefined;
  let env: Record<string, string>;
  let demoOutput: {
    notes: string[];
    recall: Array<{ goal: string; task: string; matches: unknown[] }>;
    pass: unknown;
    procedures: unknown[];
  };
  beforeAll(async () => {
    stackHome = await createStackHome();
    // Where the demo runs and where its stack listens; nothing about models, τ, thresholds or the distiller.
    env = {
      SKILLSMITH_HOME: stackHome.home,
      SKILLSMITH_MODEL_DIR: testModelDir,
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_TASK_QUEUE: `demo-${Date.now()}`,
      SKILLSMITH_POSTGRES_PORT: String(await freePort()),
      SKILLSMITH_API_PORT: String(await freePort()),
      NODE_NO_WARNINGS: '1',
    };
  }, 180_000);
  afterAll(async () => {
    if (demo && demo.exitCode === null) {
      demo.kill('SIGTERM');
      await new Promise((done) => demo!.once('exit', done));
    }
    await stackHome?.remove();
  });

  it('ingests the bundled runs, installs skills, recalls, names what it substituted and how it lasts, and stays up', async () => {
    let stdout = '';
    demo = spawn(process.execPath, [bin, 'demo', '--keep-running', '--json'], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, SKILLSMITH_LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    demo.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const running = () => {
      if (demo!.exitCode !== null) throw new Error(`the demo exited ${demo!.exitCode}: ${stdout}`);
    };
    // The result is printed before the stack file is written; the stack file says the API is up.
    await until(
      'the demo to leave its stack up',
      async () => {
        running();
        return readFile(join(stackHome.home, 'stack.json'), 'utf8').catch(() => undefined);
      },
      { timeoutMs: 280_000, intervalMs: 500 },
    );
    demoOutput = await until('the demo result', async () => {
      running();
      try {
        return JSON.parse(stdout) as typeof demoOutput;
      } catch {
        return undefined;
      }
    });
    expect(demoOutput.notes).toEqual([
      expect.stringMatching(
        /^note: the configured embedding model nomic-ai\/nomic-embed-text-v1\.5 is not available here \(get it with: npx skillsmith models pull --model nomic-ai\/nomic-embed-text-v1\.5\), so tenant default, unless it is embedded already, is embedded with the registry-shipped sentence-transformers\/all-MiniLM-L6-v2 .*every command on it uses that model with nothing set/,
      ),
      expect.stringMatching(/extractive distiller/),
    ]);
    expect(demoOutput.pass).toMatchObject({ status: 'completed', distiller: 'extractive', counts: { runsSeen: 200 } });
    const counts = (demoOutput.pass as { counts: { added: number; superseded: number } }).counts;
    expect(counts.added).toBeGreaterThan(0);
    // every add and every supersede is a new procedure; the superseded ones stay, never deleted
    expect(demoOutput.procedures.length).toBe(counts.added + counts.superseded);
    // A new goal of each learned task, one per task, and recall finds skills for them.
    expect(demoOutput.recall.length).toBeGreaterThan(0);
    expect(new Set(demoOutput.recall.map((entry) => entry.task)).size).toBe(demoOutput.recall.length);
    expect(demoOutput.recall.some((entry) => entry.matches.length > 0)).toBe(true);
  }, 300_000);

  it('recall goes through the stack (this process loads no model) with the same --json as in-process recall', async () => {
    const goal = demoOutput.recall.find((entry) => entry.matches.length > 0)!.goal;
    // No model where this process would look: only the stack can answer.
    const noModels = { ...env, SKILLSMITH_MODEL_DIR: join(stackHome.home, 'no-models') };
    const viaStack = await runSkillsmith(['recall', goal, '--json'], noModels);
    expect(viaStack.stderr).toBe('');
    expect(viaStack.code).toBe(0);
    const local = await runSkillsmith(['recall', goal, '--local', '--json'], env);
    expect(local.code).toBe(0);
    expect(JSON.parse(viaStack.stdout).matches.length).toBeGreaterThan(0);
    // The contract: the same document whichever process answered (scores to the float).
    expect(viaStack.stdout).toBe(local.stdout);
    const localWithoutModel = await runSkillsmith(['recall', goal, '--local', '--json'], noModels);
    expect(localWithoutModel.code).toBe(1);
    expect(JSON.parse(localWithoutModel.stdout).error).toMatchObject({
      code: 'EmbeddingModelUnavailable',
      message: expect.stringMatching(/get it with: npx skillsmith models pull --model sentence-transformers\/all-MiniLM-L6-v2$/),
    });
  }, 120_000);

  it("procedures, clusters, passes, synthesize and status work on the demo's tenant with nothing set", async () => {
    const procedures = await runSkillsmith(['procedures', '--json'], env);
    expect(procedures.code).toBe(0);
    expect(JSON.parse(procedures.stdout).procedures.length).toBe(demoOutput.procedures.length);
    const clusters = await runSkillsmith(['clusters', '--json', '--quiet'], env);
    expect(clusters.code).toBe(0);
    // The tenant's model and its cut: MiniLM's, as the demo's pass used them; nothing left to embed.
    expect(JSON.parse(clusters.stdout)).toMatchObject({ modelId: 'sentence-transformers/all-MiniLM-L6-v2', embedding: { missing: 0 } });
    const synthesize = await runSkillsmith(['synthesize', '--wait', '--json', '--quiet'], env, 120_000);
    expect(synthesize.code).toBe(0);
    expect(JSON.parse(synthesize.stdout)).toMatchObject({ status: 'completed', distiller: 'extractive' });
    const passes = await runSkillsmith(['passes', '--json'], env);
    expect(passes.code).toBe(0);
    const status = await runSkillsmith(['status', '--json'], env);
    expect(JSON.parse(status.stdout)).toMatchObject({ running: true, ready: true });
  }, 180_000);

  it('a different model set explicitly is refused, through the stack or not, with the reembed command', async () => {
    for (const args of [[], ['--local']]) {
      const refused = await runSkillsmith(['recall', 'anything', ...args, '--json'], {
        ...env,
        SKILLSMITH_EMBEDDING_MODEL: 'nomic-ai/nomic-embed-text-v1.5',
      });
      expect(refused.code).toBe(1);
      expect(JSON.parse(refused.stdout).error).toEqual({
        code: 'TenantEmbeddingModelMismatch',
        message:
          'tenant default is embedded with sentence-transformers/all-MiniLM-L6-v2, but SKILLSMITH_EMBEDDING_MODEL=nomic-ai/nomic-embed-text-v1.5: ' +
          'unset SKILLSMITH_EMBEDDING_MODEL to use sentence-transformers/all-MiniLM-L6-v2, or move the tenant to nomic-ai/nomic-embed-text-v1.5 with ' +
          '`SKILLSMITH_EMBEDDING_MODEL=nomic-ai/nomic-embed-text-v1.5 npx skillsmith reembed --tenant default`',
      });
    }
    const down = await runSkillsmith(['down', '--json'], env, 60_000);
    expect(JSON.parse(down.stdout)).toMatchObject({ stopped: true });
  }, 120_000);
});

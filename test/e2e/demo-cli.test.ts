import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEFAULT_EMBEDDING_MODEL_ID } from '../../src/embedding/model-profiles.ts';
import { freePort } from '../../src/infra/temporal-dev-server.ts';
import { createStackHome, type StackHome } from '../support/stack-home.ts';
import { runSkillsmith } from '../support/cli.ts';
import { testModelDir } from '../support/test-model.ts';
import { until } from '../support/until.ts';
import { childEnvironment } from '../support/child-environment.ts';

// Its own file, apart from the synthesis CLI's: the two share nothing (this one runs a whole demo
// stack of its own), so two forks run them side by side instead of one after the other.

const bin = fileURLToPath(new URL('../../bin/skillsmith.js', import.meta.url));

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

  it('ingests the bundled runs with the default model, installs skills, recalls, names what it changed, and stays up', async () => {
    let stdout = '';
    demo = spawn(process.execPath, [bin, 'demo', '--keep-running', '--json'], {
      env: childEnvironment(env),
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
    // The default model is here (npm test pulls it): nothing substituted, only the distiller said.
    expect(demoOutput.notes).toEqual([expect.stringMatching(/extractive distiller/)]);
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
    // Three reads, independent of each other: side by side.
    const [viaStack, local, localWithoutModel] = await Promise.all([
      runSkillsmith(['recall', goal, '--json'], noModels),
      runSkillsmith(['recall', goal, '--local', '--json'], env),
      runSkillsmith(['recall', goal, '--local', '--json'], noModels),
    ]);
    expect(viaStack.stderr).toBe('');
    expect(viaStack.code).toBe(0);
    expect(local.code).toBe(0);
    expect(JSON.parse(viaStack.stdout).matches.length).toBeGreaterThan(0);
    // The contract: the same document whichever process answered (scores to the float).
    expect(viaStack.stdout).toBe(local.stdout);
    expect(localWithoutModel.code).toBe(1);
    expect(JSON.parse(localWithoutModel.stdout).error).toMatchObject({
      code: 'EmbeddingModelUnavailable',
      message: expect.stringMatching(/get it with: npx skillsmith models pull$/),
    });
  }, 120_000);

  it("procedures, clusters, passes, synthesize and status work on the demo's tenant with nothing set", async () => {
    // Reads side by side; the pass after them, then the reads of its outcome side by side.
    const [procedures, clusters] = await Promise.all([
      runSkillsmith(['procedures', '--json'], env),
      runSkillsmith(['clusters', '--json', '--quiet'], env),
    ]);
    expect(procedures.code).toBe(0);
    expect(JSON.parse(procedures.stdout).procedures.length).toBe(demoOutput.procedures.length);
    expect(clusters.code).toBe(0);
    // The tenant's model: the default, as the demo's pass used it; nothing left to embed.
    expect(JSON.parse(clusters.stdout)).toMatchObject({ modelId: DEFAULT_EMBEDDING_MODEL_ID, embedding: { missing: 0 } });
    const synthesize = await runSkillsmith(['synthesize', '--wait', '--json', '--quiet'], env, 120_000);
    expect(synthesize.code).toBe(0);
    expect(JSON.parse(synthesize.stdout)).toMatchObject({ status: 'completed', distiller: 'extractive' });
    const [passes, status] = await Promise.all([runSkillsmith(['passes', '--json'], env), runSkillsmith(['status', '--json'], env)]);
    expect(passes.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ running: true, ready: true });
  }, 180_000);

  it('a different model set explicitly is refused, through the stack or not, with the reembed command', async () => {
    const refusals = await Promise.all(
      [[], ['--local']].map((args) =>
        runSkillsmith(['recall', 'anything', ...args, '--json'], { ...env, SKILLSMITH_EMBEDDING_MODEL: 'nomic-ai/nomic-embed-text-v1.5' }),
      ),
    );
    for (const refused of refusals) {
      expect(refused.code).toBe(1);
      expect(JSON.parse(refused.stdout).error).toEqual({
        code: 'TenantEmbeddingModelMismatch',
        message:
          `tenant default is embedded with ${DEFAULT_EMBEDDING_MODEL_ID}, but SKILLSMITH_EMBEDDING_MODEL=nomic-ai/nomic-embed-text-v1.5: ` +
          `unset SKILLSMITH_EMBEDDING_MODEL to use ${DEFAULT_EMBEDDING_MODEL_ID}, or move the tenant to nomic-ai/nomic-embed-text-v1.5 with ` +
          '`SKILLSMITH_EMBEDDING_MODEL=nomic-ai/nomic-embed-text-v1.5 npx skillsmith reembed --tenant default`',
      });
    }
    const down = await runSkillsmith(['down', '--json'], env, 60_000);
    expect(JSON.parse(down.stdout)).toMatchObject({ stopped: true });
  }, 120_000);
});

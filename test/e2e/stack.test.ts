import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../../src/infra/temporal-dev-server.ts';
import { runSkillsmith } from '../support/cli.ts';
import { createStackHome, type StackHome } from '../support/stack-home.ts';
import { testModelDir } from '../support/test-model.ts';
import { until } from '../support/until.ts';
import { childEnvironment } from '../support/child-environment.ts';

const bin = fileURLToPath(new URL('../../bin/skillsmith.js', import.meta.url));

/** Running: signalable and not a zombie (an exited daemon waits to be reaped by whoever adopted it). */
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
};

/** A process that was told to stop may take a moment after its pid file is gone. */
const stopped = (pid: number) =>
  until(`pid ${pid} to exit`, async () => (alive(pid) ? undefined : true), { timeoutMs: 5_000, intervalMs: 100 });

/** `skillsmith up` in the background, as a user's terminal runs it. */
function startUp(env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, [bin, 'up'], {
    env: childEnvironment(env),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((done) => {
    if (child.exitCode !== null) done(child.exitCode);
    else child.once('exit', (code) => done(code));
  });

/** The postmaster's pid, from the data directory the stack's native PostgreSQL runs on. */
async function postmasterPid(home: string): Promise<number | undefined> {
  const text = await readFile(join(home, 'postgres', 'data', 'postmaster.pid'), 'utf8').catch(() => undefined);
  return text ? Number(text.split('\n')[0]) : undefined;
}

describe('the embedded stack: up, status, /readyz, down, SIGTERM', () => {
  let stackHome: StackHome;
  let env: Record<string, string>;

  beforeAll(async () => {
    stackHome = await createStackHome();
    env = {
      SKILLSMITH_HOME: stackHome.home,
      // The check loads the configured model: the registry-shipped one the suite provisions.
      SKILLSMITH_MODEL_DIR: testModelDir,
      SKILLSMITH_EMBEDDING_MODEL: 'sentence-transformers/all-MiniLM-L6-v2',
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      SKILLSMITH_POSTGRES_PORT: String(await freePort()),
      TEMPORAL_TASK_QUEUE: `up-${Date.now()}`,
      SKILLSMITH_API_PORT: String(await freePort()),
    };
  }, 180_000);
  afterAll(async () => {
    await stackHome?.remove();
  });

  it('up --check-only: a native PostgreSQL + pgvector under the home, a worker, the round trip, a clean stop', async () => {
    const result = await runSkillsmith(['up', '--check-only', '--json'], env);
    expect(result.stderr).not.toMatch(/error/i);
    expect(result.code).toBe(0);
    const stack = JSON.parse(result.stdout);
    expect(stack.database).toBe('native');
    expect(stack.embeddedDatabase).toBe(true);
    expect(stack.databaseUrl).toMatch(/^postgresql:\/\/skillsmith:\*\*\*@127\.0\.0\.1:\d+\/skillsmith$/);
    expect(stack.temporalAddress).toBe(inject('temporalAddress'));
    expect(stack.check.serverVersion).toMatch(/^18\./);
    expect(stack.check.vectorExtension).toMatch(/^0\.8\./);
    expect(stack.check.migrations).toBeGreaterThan(0);
    expect(stack.apiUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(stack.checks).toEqual([
      { name: 'embedder', ok: true, detail: 'sentence-transformers/all-MiniLM-L6-v2 loads and embeds (384-d; new tenants take it)' },
      { name: 'distiller', ok: true, detail: 'extractive (no model needed)' },
    ]);
    expect(await postmasterPid(stackHome.home)).toBeUndefined();
  }, 120_000);

  it('status and down say clearly when no stack is running', async () => {
    const status = await runSkillsmith(['status', '--json'], env);
    expect(status.code).toBe(1);
    expect(JSON.parse(status.stdout)).toMatchObject({ running: false });
    const down = await runSkillsmith(['down'], env);
    expect(down.code).toBe(0);
    expect(down.stdout).toMatch(/no stack is running.*nothing to stop/);
  });

  it('up (its data kept from the first start) → status → /readyz → down', async () => {
    const up = startUp(env);
    try {
      const stackFile = resolve(stackHome.home, 'stack.json');
      const record = await until(
        'the stack file',
        async () => JSON.parse(await readFile(stackFile, 'utf8')) as { apiUrl: string; pid: number },
        {
          timeoutMs: 90_000,
          retryErrors: true,
        },
      );
      expect(record.pid).toBe(up.pid);
      const status = await until(
        'status to say ready',
        async () => {
          const result = await runSkillsmith(['status', '--json'], env);
          return (JSON.parse(result.stdout) as { ready: boolean }).ready ? result : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 1_000 },
      );
      expect(status.code).toBe(0);
      expect(JSON.parse(status.stdout)).toMatchObject({
        running: true,
        ready: true,
        database: 'native',
        checks: [
          { name: 'database', ok: true },
          { name: 'temporal', ok: true },
          { name: 'worker', ok: true },
          { name: 'api', ok: true },
        ],
      });
      const readyz = await fetch(`${record.apiUrl}/readyz`);
      expect(readyz.status).toBe(200);
      expect(await readyz.json()).toMatchObject({ status: 'ready' });
      expect((await fetch(`${record.apiUrl}/healthz`)).status).toBe(200);

      const postmaster = await postmasterPid(stackHome.home);
      expect(postmaster && alive(postmaster)).toBe(true);
      const down = await runSkillsmith(['down', '--json'], env);
      expect(down.code).toBe(0);
      expect(JSON.parse(down.stdout)).toMatchObject({ stopped: true, pid: up.pid });
      expect(await exited(up)).toBe(0);
      await stopped(postmaster!);
      expect((await runSkillsmith(['status'], env)).code).toBe(1);
    } finally {
      up.kill('SIGKILL');
    }
  }, 240_000);

  it('SIGTERM drains within the bound and stops what up started: the Temporal dev server and PostgreSQL', async () => {
    const { TEMPORAL_ADDRESS: _shared, ...own } = env;
    const temporalCli = process.env.TEMPORAL_CLI_PATH ?? resolve('.skillsmith/bin/temporal-1.9.1');
    const up = startUp({
      ...own,
      TEMPORAL_CLI_PATH: temporalCli,
      SKILLSMITH_TEMPORAL_PORT: String(await freePort()),
      SKILLSMITH_TEMPORAL_UI_PORT: String(await freePort()),
    });
    let stderr = '';
    up.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    try {
      await until('the stack file', async () => JSON.parse(await readFile(resolve(stackHome.home, 'stack.json'), 'utf8')) as unknown, {
        timeoutMs: 120_000,
        retryErrors: true,
      });
      const children = execFileSync('ps', ['-o', 'pid=', '--ppid', String(up.pid)], { encoding: 'utf8' })
        .split('\n')
        .map(Number)
        .filter(Boolean);
      expect(children.length).toBeGreaterThan(0); // the temporal dev server
      const postmaster = await postmasterPid(stackHome.home);
      expect(postmaster && alive(postmaster)).toBe(true);

      const signalled = Date.now();
      up.kill('SIGTERM');
      const code = await exited(up);
      const seconds = (Date.now() - signalled) / 1000;
      expect(code, stderr).toBe(0);
      expect(seconds).toBeLessThan(30);
      for (const pid of [...children, postmaster!]) await stopped(pid);
    } finally {
      up.kill('SIGKILL');
    }
  }, 240_000);

  it('refuses a malformed tenant with a one-line reason and exit 1', async () => {
    const result = await runSkillsmith(['migrate', '--tenant', 'Bad Tenant!'], { SKILLSMITH_HOME: stackHome.home });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/invalid --tenant "Bad Tenant!"/);
  });

  it('says how to get a database when there is none', async () => {
    const result = await runSkillsmith(['migrate', '--json'], { SKILLSMITH_HOME: resolve(stackHome.home, 'empty') });
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toEqual({
      error: { code: 'NoDatabase', message: expect.stringMatching(/set DATABASE_URL, or start the embedded stack/) },
    });
  });

  it('stops at start-up on a bad setting, naming the variable', async () => {
    const result = await runSkillsmith(['migrate'], { SKILLSMITH_MIN_STEPS: '-1' });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^skillsmith: invalid SKILLSMITH_MIN_STEPS="-1"/);
  });
});

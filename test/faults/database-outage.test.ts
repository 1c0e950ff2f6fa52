import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chown, mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pino } from 'pino';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApiServer, type ApiApp } from '../../src/api/server.ts';
import { loadConfig } from '../../src/app/config.ts';
import { createServices } from '../../src/app/services.ts';
import { NATIVE_POSTGRES_USER, nativePostgresWheel, startNativePostgres, type NativePostgres } from '../../src/infra/native-postgres.ts';
import { superviseServer } from '../../src/infra/server-supervisor.ts';
import { freePort } from '../../src/infra/temporal-dev-server.ts';
import { createPool } from '../../src/store/database.ts';
import { databaseFailure, DatabaseUnavailable } from '../../src/store/database-failure.ts';
import { migrate } from '../../src/store/migrations.ts';
import { bearer, token } from '../api/api-harness.ts';
import { createStackHome, type StackHome } from '../support/stack-home.ts';
import { until } from '../support/until.ts';

const writer = token('acme', ['run.write', 'skill.read']);
const silent = pino({ level: 'silent' });

/** A run report with no tool call: stored by the intake and answered without Temporal (no review can want it). */
const report = (runId: string, goal = `goal of ${runId}`) => ({
  agentId: 'agent',
  runId,
  goal,
  status: 'completed',
  startedAt: '2026-01-01T00:00:00Z',
  completedAt: '2026-01-01T00:01:00Z',
  toolCalls: [],
});

/** The stack's native PostgreSQL, SIGKILLed and supervised for real (issue #30 items 1, 3 and 4). */
describe.skipIf(!nativePostgresWheel())('the database killed or full under the API', () => {
  let stackHome: StackHome;
  let postgres: NativePostgres;
  let pool: pg.Pool;
  let app: ApiApp;

  const post = (body: unknown) =>
    app.inject({
      method: 'POST',
      url: '/v1/runs',
      headers: { ...bearer(writer), 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });
  const storedRunIds = async () =>
    new Set((await pool.query<{ run_id: string }>('SELECT run_id FROM runs WHERE tenant_id = $1', ['acme'])).rows.map((row) => row.run_id));
  const postmasterPid = async () => Number((await readFile(join(postgres.dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);

  beforeAll(async () => {
    stackHome = await createStackHome();
    postgres = await startNativePostgres({ home: stackHome.home, port: await freePort() });
    pool = createPool(postgres.url);
    await migrate(pool);
    const services = createServices(loadConfig({}), pool, { logger: silent });
    app = await buildApiServer({ ...services, tokens: [writer] });
  }, 180_000);
  afterAll(async () => {
    await app?.close();
    await pool?.end();
    await postgres?.stop();
    await stackHome?.remove();
  });

  it('a SIGKILL of the postmaster under load: a checked-out client does not crash the process, refusals are 503 DatabaseUnavailable with Retry-After and the cause, /readyz says why, the supervisor brings it back, every 202 is stored', async () => {
    // A client inside a transaction: pg emits 'error' on it, where nothing listened before.
    const inTransaction = await pool.connect();
    await inTransaction.query('BEGIN');
    const senders = Array.from({ length: 16 }, (_, sender) =>
      (async () => {
        const answers: Array<{ runId: string; status: number; code?: string; retryAfter?: string; message?: string }> = [];
        for (let index = 0; index < 15; index += 1) {
          const runId = `load-${sender}-${index}`;
          const response = await post(report(runId));
          const body = response.json<{ error?: { code: string; message: string } }>();
          answers.push({
            runId,
            status: response.statusCode,
            ...(body.error ? { code: body.error.code, message: body.error.message } : {}),
            ...(response.headers['retry-after'] ? { retryAfter: String(response.headers['retry-after']) } : {}),
          });
          if (index === 2 && sender === 0) process.kill(await postmasterPid(), 'SIGKILL');
        }
        return answers;
      })(),
    );
    const answers = (await Promise.all(senders)).flat();

    const transactionError = await inTransaction.query('SELECT 1').then(
      () => undefined,
      (error: unknown) => error,
    );
    inTransaction.release(true);
    expect(databaseFailure(transactionError)).toBeInstanceOf(DatabaseUnavailable);

    const refused = answers.filter((answer) => answer.status !== 202);
    expect(refused.length).toBeGreaterThan(0);
    for (const answer of refused) {
      expect(answer).toMatchObject({ status: 503, code: 'DatabaseUnavailable', retryAfter: '5' });
      expect(answer.message).toMatch(/^the database is unavailable: \S/);
    }
    const readiness = await app.inject({ method: 'GET', url: '/readyz' });
    expect(readiness.statusCode).toBe(503);
    expect(readiness.json<{ checks: Array<{ name: string; ok: boolean; detail: string }> }>().checks[0]).toMatchObject({
      name: 'database',
      ok: false,
      detail: expect.stringMatching(/^DatabaseUnavailable: /),
    });

    const restarted: number[] = [];
    const supervisor = superviseServer(
      { name: 'PostgreSQL', ...postgres },
      { down: () => undefined, restarted: (_name, downForMs) => restarted.push(downForMs), restartFailed: () => undefined },
    );
    try {
      await until('the supervisor to restart PostgreSQL', async () => (restarted.length > 0 ? true : undefined), { timeoutMs: 30_000 });
    } finally {
      await supervisor.stop();
    }
    expect((await post(report('after-restart'))).statusCode).toBe(202);
    const stored = await storedRunIds();
    const accepted = answers.filter((answer) => answer.status === 202).map((answer) => answer.runId);
    expect(accepted.filter((runId) => !stored.has(runId))).toEqual([]);
    expect(stored.has('after-restart')).toBe(true);
    expect((await app.inject({ method: 'GET', url: '/readyz' })).json<{ checks: Array<{ ok: boolean }> }>().checks[0]!.ok).toBe(true);
  }, 120_000);

  /** A tablespace on a 1 MiB tmpfs where the machine lets this process mount one (root). */
  const tmpfsAllowed = (() => {
    if (process.getuid?.() !== 0) return false;
    try {
      execFileSync('mount', ['--version'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  })();

  it.skipIf(!tmpfsAllowed)(
    'a full disk: refusals are 503 StorageFull with Retry-After and the cause, /readyz says StorageFull while SELECT 1 answers, nothing half-stored',
    async () => {
      const mountPoint = join(stackHome.home, 'small-disk');
      await mkdir(mountPoint, { recursive: true });
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mountPoint]);
      try {
        const directory = join(mountPoint, 'tablespace');
        await mkdir(directory);
        const user = Number(execFileSync('id', ['-u', NATIVE_POSTGRES_USER]).toString().trim());
        await chown(directory, user, user);
        await pool.query(`CREATE TABLESPACE small_disk LOCATION '${directory}'`);
        await pool.query('ALTER TABLE runs SET TABLESPACE small_disk');
        const before = (await storedRunIds()).size;
        let answer: Awaited<ReturnType<typeof post>> | undefined;
        let index = 0;
        // 1.9 KB goals that do not compress: the 1 MiB disk fills within a few hundred runs.
        while (index < 2_000) {
          answer = await post(report(`fill-${index}`, randomBytes(1_400).toString('base64')));
          if (answer.statusCode !== 202) break;
          index += 1;
        }
        expect(answer!.statusCode).toBe(503);
        expect(answer!.headers['retry-after']).toBe('30');
        expect(answer!.json()).toMatchObject({
          error: { code: 'StorageFull', message: expect.stringMatching(/^the database is out of disk space: /) },
        });
        const readiness = await app.inject({ method: 'GET', url: '/readyz' });
        expect(readiness.json<{ checks: Array<{ name: string; ok: boolean; detail: string }> }>().checks[0]).toMatchObject({
          name: 'database',
          ok: false,
          detail: expect.stringMatching(/^StorageFull: /),
        });
        const stored = await storedRunIds();
        expect(stored.size).toBe(before + index);
        expect(stored.has(`fill-${index}`)).toBe(false);
      } finally {
        await pool.query('ALTER TABLE runs SET TABLESPACE pg_default').catch(() => undefined);
        await pool.query('DROP TABLESPACE IF EXISTS small_disk').catch(() => undefined);
        execFileSync('umount', ['-l', mountPoint]);
        await rm(mountPoint, { recursive: true, force: true });
      }
    },
    120_000,
  );
});

import { spawn, type ChildProcess } from 'node:child_process';
import { appendFile, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryPassProgress, startSynthesisPass } from '../../src/client/synthesis-client.ts';
import { stackFileSchema, type StackFile } from '../../src/cli/stack-file.ts';
import type { PassRecord } from '../../src/contracts/pass-record.ts';
import { generateRuns } from '../../src/demo/synthetic-runs.ts';
import { freePort } from '../../src/infra/temporal-dev-server.ts';
import { upsertRuns } from '../../src/runs/run-repository.ts';
import { createPool } from '../../src/store/database.ts';
import { passSkills, revisionGaps } from '../support/pass-faults.ts';
import { createStackHome, type StackHome } from '../support/stack-home.ts';
import { testModelDir, testRuntimeDir } from '../support/test-model.ts';
import { until } from '../support/until.ts';

const bin = fileURLToPath(new URL('../../bin/skillsmith.js', import.meta.url));
const TOKEN = 'faults-intake-token-0123456789';
const POSTS = 3_000;
const SENDERS = 16;

/** What each answer was, by status and code. */
type Answer = { runId: string; status: number; code?: string; retryAfter?: string | null };

/**
 * Issue #30's acceptance, on `skillsmith up` (native PostgreSQL + its own Temporal dev server +
 * worker + API) as a user's terminal runs it: the servers it started are SIGKILLed under load.
 */
describe('skillsmith up under faults', () => {
  let stackHome: StackHome;
  let up: ChildProcess;
  let stack: StackFile;
  let pool: pg.Pool;
  let client: Client;
  let connection: Connection;
  const logFile = () => join(stackHome.home, 'up.log');

  beforeAll(async () => {
    stackHome = await createStackHome();
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      SKILLSMITH_HOME: stackHome.home,
      SKILLSMITH_EMBEDDING_RUNTIME_DIR: testRuntimeDir,
      SKILLSMITH_LOG_LEVEL: 'warn',
      NODE_NO_WARNINGS: '1',
      SKILLSMITH_POSTGRES_PORT: String(await freePort()),
      SKILLSMITH_TEMPORAL_PORT: String(await freePort()),
      SKILLSMITH_TEMPORAL_UI_PORT: String(await freePort()),
      SKILLSMITH_API_PORT: String(await freePort()),
      TEMPORAL_CLI_PATH:
        process.env.TEMPORAL_CLI_PATH ?? resolve(fileURLToPath(new URL('../../.skillsmith/bin/temporal-1.9.1', import.meta.url))),
      SKILLSMITH_API_TOKENS: JSON.stringify([{ token: TOKEN, tenantId: 'intake', principal: 'faults', scopes: ['run.write'] }]),
      SKILLSMITH_EMBEDDING_MODEL: 'sentence-transformers/all-MiniLM-L6-v2',
      SKILLSMITH_EMBEDDING_PREFIXES: 'none',
      SKILLSMITH_MODEL_DIR: testModelDir,
      SKILLSMITH_SIMILARITY_TAU: '0.5',
      SKILLSMITH_DISTILLER: 'extractive',
    };
    up = spawn(process.execPath, [bin, 'up'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    up.stderr!.on('data', (chunk: Buffer) => void appendFile(logFile(), chunk));
    stack = await until(
      'the stack file of up',
      async () => {
        if (up.exitCode !== null) throw new Error(`up exited ${up.exitCode}: ${await readFile(logFile(), 'utf8').catch(() => '')}`);
        const parsed = stackFileSchema.parse(JSON.parse(await readFile(join(stackHome.home, 'stack.json'), 'utf8')));
        return parsed.pid === up.pid ? parsed : undefined;
      },
      { timeoutMs: 240_000, intervalMs: 250, retryErrors: true },
    );
    if (up.exitCode !== null) throw new Error(`up exited ${up.exitCode}`);
    await until('/readyz', async () => ((await fetch(`${stack.apiUrl}/readyz`)).status === 200 ? true : undefined), {
      timeoutMs: 120_000,
      intervalMs: 250,
      retryErrors: true,
    });
    pool = createPool(stack.databaseUrl, { max: 2 });
    connection = await Connection.connect({ address: stack.temporalAddress });
    client = new Client({ connection, namespace: stack.namespace });
  }, 300_000);
  afterAll(async () => {
    await connection?.close();
    await pool?.end();
    if (up && up.exitCode === null) {
      const exited = new Promise((done) => up.once('exit', done));
      up.kill('SIGTERM');
      await exited;
    }
    await stackHome?.remove();
  }, 60_000);

  const postmasterPid = async () =>
    Number((await readFile(join(stackHome.home, 'postgres', 'data', 'postmaster.pid'), 'utf8')).split('\n')[0]);

  it(`${POSTS} posts from ${SENDERS} senders while PostgreSQL is SIGKILLed once: up alive, 0 accepted runs lost, 0 answers of 500, every refusal a 503 with a code, the database back within 30 s`, async () => {
    const reports = generateRuns({ seed: 30, runs: POSTS, tenantId: 'intake' }).map(({ report }, index) => ({
      ...report,
      runId: `post-${index}`,
    }));
    const answers: Answer[] = [];
    const killedPid = await postmasterPid();
    let killedAt = 0;
    let next = 0;
    await Promise.all(
      Array.from({ length: SENDERS }, async () => {
        for (let index = next++; index < reports.length; index = next++) {
          if (index === Math.floor(POSTS / 3)) {
            process.kill(killedPid, 'SIGKILL');
            killedAt = Date.now();
          }
          const report = reports[index]!;
          try {
            const response = await fetch(`${stack.apiUrl}/v1/runs`, {
              method: 'POST',
              headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
              body: JSON.stringify(report),
            });
            const body = (await response.json()) as { error?: { code: string } };
            answers.push({
              runId: report.runId,
              status: response.status,
              code: body.error?.code,
              retryAfter: response.headers.get('retry-after'),
            });
          } catch {
            answers.push({ runId: report.runId, status: 0 });
          }
        }
      }),
    );
    const backWithinMs = await until(
      'PostgreSQL to be back',
      async () =>
        (await postmasterPid().catch(() => killedPid)) !== killedPid &&
        (await pool.query('SELECT 1').then(
          () => true,
          () => false,
        ))
          ? Date.now() - killedAt
          : undefined,
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    expect(up.exitCode).toBeNull();
    const byStatus = new Map<string, number>();
    for (const answer of answers)
      byStatus.set(
        `${answer.status}${answer.code ? ` ${answer.code}` : ''}`,
        (byStatus.get(`${answer.status}${answer.code ? ` ${answer.code}` : ''}`) ?? 0) + 1,
      );
    console.log(
      `[faults] postgres SIGKILL under ${SENDERS} senders: ${JSON.stringify(Object.fromEntries(byStatus))}; back in ${backWithinMs} ms`,
    );
    const supervision = (await readFile(logFile(), 'utf8')).split('\n').filter((line) => line.includes('PostgreSQL'));
    console.log(`[faults] up logged: ${supervision.map((line) => (JSON.parse(line) as { msg: string }).msg).join(' | ')}`);
    expect(answers.filter((answer) => answer.status === 500 || answer.status === 0)).toEqual([]);
    for (const refused of answers.filter((answer) => answer.status !== 202)) {
      expect(refused).toMatchObject({ status: 503, code: expect.stringMatching(/^(DatabaseUnavailable|TemporalUnavailable)$/) });
      expect(refused.retryAfter).toMatch(/^\d+$/);
    }
    const accepted = answers.filter((answer) => answer.status === 202).map((answer) => answer.runId);
    const { rows } = await pool.query<{ run_id: string }>('SELECT run_id FROM runs WHERE tenant_id = $1 AND run_id = ANY($2::text[])', [
      'intake',
      accepted,
    ]);
    expect(rows.length).toBe(accepted.length);
    expect(backWithinMs).toBeLessThan(30_000);
  }, 300_000);

  it('Temporal dev server SIGKILLed mid-pass: up alive, the server restarted, the pass completes with the skills of an undisturbed pass', async () => {
    const runs = generateRuns({ seed: 31, runs: 400 }).map(({ report }) => report);
    for (const tenantId of ['clean', 'temporal-kill'])
      await upsertRuns(
        pool,
        tenantId,
        runs.map((report) => ({ ...report, tenantId })),
      );
    const clean = (await (
      await startSynthesisPass(client, { tenantId: 'clean', full: true, taskQueue: stack.taskQueue })
    ).result()) as PassRecord;
    expect(clean.status).toBe('completed');
    const handle = await startSynthesisPass(client, { tenantId: 'temporal-kill', full: true, taskQueue: stack.taskQueue });
    await until(
      'the pass to embed or cluster',
      async () => (['embedding', 'clustering', 'distilling'].includes((await queryPassProgress(handle)).stage) ? true : undefined),
      { intervalMs: 50, timeoutMs: 120_000 },
    );
    const temporalPid = Number((await readFile(join(stackHome.home, 'temporal.db.pid'), 'utf8')).trim());
    process.kill(temporalPid, 'SIGKILL');
    const record = await until('the pass to finish after the restart', () => handle.result().then((result) => result as PassRecord), {
      timeoutMs: 240_000,
      intervalMs: 1_000,
      retryErrors: true,
    });
    expect(up.exitCode).toBeNull();
    expect(Number((await readFile(join(stackHome.home, 'temporal.db.pid'), 'utf8')).trim())).not.toBe(temporalPid);
    expect(record.status).toBe('completed');
    const skills = await passSkills(pool, 'temporal-kill');
    expect(skills.length).toBeGreaterThan(0);
    expect(revisionGaps(skills)).toEqual([]);
    expect(skills.map(({ provenance: _provenance, ...skill }) => skill)).toEqual(
      (await passSkills(pool, 'clean')).map(({ provenance: _provenance, ...skill }) => skill),
    );
    expect(await readFile(logFile(), 'utf8')).toMatch(/the Temporal dev server restarted after/);
  }, 400_000);
});

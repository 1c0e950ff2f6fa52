import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { pino } from 'pino';
import { buildApiServer } from '../../src/api/server.ts';
import { createReadiness } from '../../src/app/readiness.ts';
import { createServices } from '../../src/app/services.ts';
import { loadConfig } from '../../src/app/config.ts';
import { createPool } from '../../src/store/database.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';

/** What /readyz and `skillsmith status` answer when a dependency is missing: not ready, naming which and why. */
describe('readiness', () => {
  let database: TestDatabase;
  let connection: Connection;
  let client: Client;

  beforeAll(async () => {
    database = await openTestDatabase();
    connection = await Connection.connect({ address: inject('temporalAddress') });
    client = new Client({ connection, namespace: 'default' });
  });
  afterAll(async () => {
    await connection?.close();
    await database?.close();
  });

  it('is not ready while no worker polls the task queue, though the database and Temporal answer', async () => {
    const readiness = await createReadiness({
      pool: database.pool,
      temporal: async () => client,
      namespace: 'default',
      taskQueue: `nobody-polls-${Date.now()}`,
    })();
    expect(readiness.ready).toBe(false);
    expect(readiness.checks).toEqual([
      { name: 'database', ok: true, detail: 'SELECT 1 answered' },
      { name: 'temporal', ok: true, detail: 'namespace default answered' },
      { name: 'worker', ok: false, detail: expect.stringMatching(/^no worker has polled task queue nobody-polls-/) },
    ]);
  });

  it('names an unreachable Temporal and an unknown namespace', async () => {
    const unreachable = await createReadiness({
      pool: database.pool,
      temporal: () => Promise.reject(new Error('Temporal at 127.0.0.1:1 does not answer')),
      namespace: 'default',
      taskQueue: 'skillsmith',
    })();
    expect(unreachable.checks.slice(1)).toEqual([
      { name: 'temporal', ok: false, detail: 'Temporal at 127.0.0.1:1 does not answer' },
      { name: 'worker', ok: false, detail: 'unknown: Temporal does not answer' },
    ]);
    const unknown = await createReadiness({
      pool: database.pool,
      temporal: async () => client,
      namespace: 'no-such-namespace',
      taskQueue: 'skillsmith',
    })();
    expect(unknown.checks[1]).toMatchObject({ name: 'temporal', ok: false, detail: expect.stringMatching(/no-such-namespace/) });
  });

  it('names a database that does not answer', async () => {
    const gone = await openTestDatabase();
    await gone.close();
    const readiness = await createReadiness({
      pool: gone.pool,
      temporal: async () => client,
      namespace: 'default',
      taskQueue: 'skillsmith',
    })();
    expect(readiness.ready).toBe(false);
    expect(readiness.checks[0]).toMatchObject({ name: 'database', ok: false });
    // Liveness stays 200 (an orchestrator must not restart a live process for its database) and says so.
    const app = await buildApiServer({ ...createServices(loadConfig({}), gone.pool, { logger: pino({ level: 'silent' }) }), tokens: [] });
    try {
      const health = await app.inject({ method: 'GET', url: '/healthz' });
      expect(health.statusCode).toBe(200);
      expect(health.json()).toEqual({ status: 'ok', database: 'unavailable' });
      expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(503);
    } finally {
      await app.close();
    }
  });
  it('with two attempts (`skillsmith status`): a database busy past the first deadline passes the second; one that is gone fails both, naming the code', async () => {
    // The embedded database's pool holds one connection: held, the first SELECT 1 waits past its deadline.
    const held = await database.pool.connect();
    setTimeout(() => held.release(), 700);
    const started = Date.now();
    const busy = await createReadiness({
      pool: database.pool,
      temporal: async () => client,
      namespace: 'default',
      taskQueue: 'skillsmith',
      timeoutMs: 500,
      attempts: 2,
    })();
    expect(busy.checks[0]).toEqual({ name: 'database', ok: true, detail: 'SELECT 1 answered' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(500);

    const gone = await openTestDatabase();
    await gone.close();
    const gonePool = createPool(gone.url);
    const outage = await createReadiness({
      pool: gonePool,
      temporal: async () => client,
      namespace: 'default',
      taskQueue: 'skillsmith',
      timeoutMs: 500,
      attempts: 2,
    })();
    expect(outage.checks[0]).toMatchObject({
      name: 'database',
      ok: false,
      detail: expect.stringMatching(/^DatabaseUnavailable: the database is unavailable: /),
    });
    await gonePool.end();
  });
});

import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, inject, it } from 'vitest';
import { loadConfig } from '../../src/app/config.ts';
import { createLogger } from '../../src/logging/logger.ts';
import { createServices } from '../../src/app/services.ts';
import { createWorker } from '../../workers/worker.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';

// The second case waits out the activity's retry backoff (1 + 2 + 4 + 8 s), idle: the first runs
// meanwhile (their own task queues and workers).
describe.concurrent('the Temporal path, for real', () => {
  let database: TestDatabase;
  let connection: Connection;
  let client: Client;

  beforeAll(async () => {
    database = await openTestDatabase();
    connection = await Connection.connect({ address: inject('temporalAddress') });
    client = new Client({ connection });
  });

  afterAll(async () => {
    await connection?.close();
    await database?.close();
  });

  it('runs the stack-check workflow and its database activity on a worker against the dev server', async ({ expect }) => {
    const taskQueue = `stack-check-${Date.now()}`;
    const config = loadConfig({});
    const { worker, connection: workerConnection } = await createWorker({
      address: inject('temporalAddress'),
      namespace: 'default',
      taskQueue,
      workflowBundlePath: inject('workflowBundlePath'),
      dependencies: createServices(config, database.pool, { logger: createLogger('silent') }),
    });
    const result = await worker.runUntil(client.workflow.execute('stackCheck', { taskQueue, workflowId: `stack-check/${taskQueue}` }));
    await workerConnection.close();

    expect(result.vectorExtension).toMatch(/^0\.8\./);
    expect(Number(result.serverVersion.split('.')[0])).toBeGreaterThanOrEqual(16);
    const applied = await database.pool.query('SELECT count(*)::int AS n FROM schema_migrations');
    expect(result.migrations).toBe(applied.rows[0].n);
    expect(result.migrations).toBeGreaterThan(0);

    const history = await client.workflow.getHandle(`stack-check/${taskQueue}`).fetchHistory();
    const activityTypes = (history.events ?? [])
      .map((event) => event.activityTaskScheduledEventAttributes?.activityType?.name)
      .filter(Boolean);
    expect(activityTypes).toEqual(['checkDatabase']);
  });

  it('fails the workflow with the activity error when the database is gone, after its retries', async ({ expect }) => {
    const taskQueue = `stack-check-down-${Date.now()}`;
    const { createPool } = await import('../../src/store/database.ts');
    const deadPool = createPool('postgresql://postgres@127.0.0.1:1/none');
    const { worker, connection: workerConnection } = await createWorker({
      address: inject('temporalAddress'),
      namespace: 'default',
      taskQueue,
      workflowBundlePath: inject('workflowBundlePath'),
      dependencies: createServices(loadConfig({}), deadPool, { logger: createLogger('silent') }),
    });
    const run = client.workflow.execute('stackCheck', {
      taskQueue,
      workflowId: `stack-check/${taskQueue}`,
      workflowExecutionTimeout: '40 seconds',
    });
    const failure = await worker.runUntil(
      run.then(
        () => undefined,
        (error: unknown) => error,
      ),
    );
    await workerConnection.close();
    await deadPool.end();
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    expect(String(((failure as WorkflowFailedError).cause?.cause as Error | undefined)?.message ?? '')).toMatch(/ECONNREFUSED|connect/);
  });
});

import { Client, Connection } from '@temporalio/client';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../src/app/config.ts';
import { workerMetricsAddress } from '../../workers/runtime.ts';
import { killProcess, startWorkerProcess } from '../support/pass-faults.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';
import { parseExposition, sampleValue } from '../support/prometheus-text.ts';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (typeof address !== 'object' || !address) throw new Error('no port');
  return address.port;
}

/**
 * The worker's Temporal SDK metrics: SKILLSMITH_WORKER_METRICS_PORT makes the worker process serve
 * the SDK's Prometheus endpoint (`temporal_*`), which the compose stack's Prometheus scrapes.
 * The endpoint belongs to the process's one SDK runtime, so the worker here is a real `skillsmith
 * worker` process of its own (the compiled dist/), as the SKILLSMITH_WORKER_METRICS_PORT setting
 * is read in production, whatever runtime the test's own process installed first.
 */
describe('worker metrics: the Temporal SDK Prometheus endpoint', () => {
  let database: TestDatabase;
  let connection: Connection;

  beforeAll(async () => {
    database = await openTestDatabase();
    connection = await Connection.connect({ address: inject('temporalAddress') });
  });
  afterAll(async () => {
    await connection?.close();
    await database?.close();
  });

  it('is off without a port, and host:port with one', () => {
    expect(workerMetricsAddress(loadConfig({}))).toBeUndefined();
    expect(workerMetricsAddress(loadConfig({ SKILLSMITH_WORKER_METRICS_PORT: '9464' }))).toBe('127.0.0.1:9464');
    expect(workerMetricsAddress(loadConfig({ SKILLSMITH_WORKER_METRICS_PORT: '9464', SKILLSMITH_WORKER_METRICS_HOST: '::' }))).toBe(
      '[::]:9464',
    );
    expect(() => loadConfig({ SKILLSMITH_WORKER_METRICS_PORT: '70000' })).toThrow(/SKILLSMITH_WORKER_METRICS_PORT/);
  });

  it('serves the worker’s task slots, polls and completed workflows on the configured port', async () => {
    const port = await freePort();
    const taskQueue = `worker-metrics-${Date.now()}`;
    const config = loadConfig({ SKILLSMITH_WORKER_METRICS_PORT: String(port), TEMPORAL_TASK_QUEUE: taskQueue });
    expect(workerMetricsAddress(config)).toBe(`127.0.0.1:${port}`);
    const worker = startWorkerProcess({
      DATABASE_URL: database.url,
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_TASK_QUEUE: taskQueue,
      SKILLSMITH_WORKER_METRICS_PORT: String(port),
    });
    try {
      await new Client({ connection }).workflow.execute('stackCheck', { taskQueue, workflowId: `stack-check/${taskQueue}` });
      const response = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(response.status).toBe(200);
      const metrics = parseExposition(await response.text());
      const ours = { task_queue: taskQueue };
      const completed = metrics.samples.find(
        (sample) => /^temporal_workflow_completed/.test(sample.name) && sample.labels.task_queue === taskQueue,
      );
      expect(completed?.value).toBe(1);
      expect(sampleValue(metrics, 'temporal_worker_task_slots_available', { ...ours, worker_type: 'ActivityWorker' })).toBeGreaterThan(0);
      expect(
        metrics.samples.some(
          (sample) => sample.name.startsWith('temporal_activity_execution_latency') && sample.labels.activity_type === 'checkDatabase',
        ),
      ).toBe(true);
    } finally {
      await killProcess(worker);
    }
  });
});

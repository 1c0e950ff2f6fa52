/**
 * A full synthesis pass over generated runs with the extractive distiller: wall time per step
 * (from the workflow history: each activity's scheduled → completed) and the process's peak RSS.
 * Real parts: a Temporal dev server, an embedded PGlite, the worker in this process, the
 * registry-shipped test model.
 *
 *   /usr/bin/time -v node --import tsx bench/synthesis-pass.bench.ts [--runs 10000] [--seed 5] [--tau 0.5]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { startSynthesisPass } from '../src/client/synthesis-client.ts';
import { loadConfig } from '../src/app/config.ts';
import { testEmbeddingModel } from '../src/embedding/model-pull.ts';
import { startEmbeddedPostgres } from '../src/infra/embedded-postgres.ts';
import { startTemporalDevServer } from '../src/infra/temporal-dev-server.ts';
import { createLogger } from '../src/logging/logger.ts';
import { upsertRuns } from '../src/runs/run-repository.ts';
import { iterateRuns } from '../src/demo/synthetic-runs.ts';
import { createPool } from '../src/store/database.ts';
import { migrate } from '../src/store/migrations.ts';
import type { PassRecord } from '../src/contracts/pass-record.ts';
import { createServices } from '../src/app/services.ts';
import { createWorker } from '../workers/worker.ts';

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '10000' }, seed: { type: 'string', default: '5' }, tau: { type: 'string', default: '0.5' } },
});
const runCount = Number(values.runs);
const home = await mkdtemp(join(tmpdir(), 'skillsmith-bench-'));
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

const temporal = await startTemporalDevServer({ home: '.skillsmith', uiPort: false });
const database = await startEmbeddedPostgres();
const pool = createPool(database.url);
try {
  await migrate(pool);
  let started = Date.now();
  let batch = [];
  const goals = new Set<string>();
  for (const { report } of iterateRuns({ seed: Number(values.seed), runs: runCount, tenantId: 'bench' })) {
    batch.push(report);
    goals.add(report.goal);
    if (batch.length === 1000) {
      await upsertRuns(pool, 'bench', batch);
      batch = [];
    }
  }
  if (batch.length) await upsertRuns(pool, 'bench', batch);
  console.log(`ingested ${runCount} runs (${goals.size} distinct goals) in ${seconds(Date.now() - started)}`);

  // The model chosen as a user chooses it: its profile sets the pooling, prefixes and dimension.
  const base = loadConfig({ SKILLSMITH_EMBEDDING_MODEL: testEmbeddingModel.modelId });
  const config = {
    ...base,
    home,
    temporal: { ...base.temporal, address: temporal.address, taskQueue: 'bench' },
    synthesis: { ...base.synthesis, distiller: 'extractive' as const, similarityTau: Number(values.tau) },
  };
  const { worker, connection: workerConnection } = await createWorker({
    address: temporal.address,
    namespace: 'default',
    taskQueue: 'bench',
    dependencies: createServices(config, pool, { logger: createLogger('warn') }),
  });
  const connection = await Connection.connect({ address: temporal.address });
  const client = new Client({ connection });
  started = Date.now();
  const handle = await startSynthesisPass(client, { tenantId: 'bench', full: true, taskQueue: 'bench' });
  const record = (await worker.runUntil(handle.result())) as PassRecord;
  const total = Date.now() - started;

  const steps = new Map<string, number>();
  const scheduled = new Map<string, { name: string; at: number }>();
  const millis = (time: { seconds?: unknown; nanos?: number | null } | null | undefined) =>
    Number(time?.seconds ?? 0) * 1000 + (time?.nanos ?? 0) / 1e6;
  for (const event of (await handle.fetchHistory()).events ?? []) {
    // Top-level steps only; the per-cluster children are timed as one span below.
    const name = event.activityTaskScheduledEventAttributes?.activityType?.name;
    if (name) scheduled.set(String(event.eventId), { name, at: millis(event.eventTime) });
    const completed = event.activityTaskCompletedEventAttributes;
    if (completed) {
      const step = scheduled.get(String(completed.scheduledEventId));
      if (step) steps.set(step.name, (steps.get(step.name) ?? 0) + millis(event.eventTime) - step.at);
    }
  }
  const events = (await handle.fetchHistory()).events ?? [];
  const firstChild = events.find((event) => event.startChildWorkflowExecutionInitiatedEventAttributes);
  const lastChild = [...events].reverse().find((event) => event.childWorkflowExecutionCompletedEventAttributes);
  if (firstChild && lastChild)
    steps.set('clusters (children: distill → reconcile → install)', millis(lastChild.eventTime) - millis(firstChild.eventTime));

  console.log(`pass ${record.status}: ${JSON.stringify(record.counts)}`);
  console.log(`| step | wall time |\n|---|---|`);
  for (const [name, ms] of steps) console.log(`| ${name} | ${seconds(ms)} |`);
  console.log(`| whole pass (client view) | ${seconds(total)} |`);
  console.log(
    `peak RSS of this process (PGlite + worker + embedder): ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB; cores: ${(await import('node:os')).availableParallelism()}`,
  );
  await workerConnection.close();
  await connection.close();
} finally {
  await pool.end();
  await database.stop();
  await temporal.stop();
  await rm(home, { recursive: true, force: true });
}

/**
 * Run-completion intake under load: reports/s sent — `--via signal`: `reportRunCompleted` (the
 * whole report signalled, recorded by the intake workflows, one per agent); `--via api`: the
 * `POST /v1/runs` intake (stored first, then only the run id signalled) — with 0 lost (rows
 * counted against reports sent) and send-to-recorded latency (send time → the row's ingested_at;
 * one machine, one clock). Real parts: a Temporal dev server, an embedded PGlite (or
 * --database-url), the worker here.
 *
 *   node --import tsx bench/intake.bench.ts [--via signal|api] [--reports 3000] [--agents 10] [--concurrency 32] [--database-url URL]
 */
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { reportRunCompleted } from '../src/client/run-intake-client.ts';
import { loadConfig } from '../src/config.ts';
import { startEmbeddedPostgres } from '../src/infra/embedded-postgres.ts';
import { startTemporalDevServer } from '../src/infra/temporal-dev-server.ts';
import { createLogger } from '../src/logger.ts';
import { iterateRuns } from '../src/runs/trace-generator.ts';
import { createPool } from '../src/store/database.ts';
import { migrate } from '../src/store/migrations.ts';
import { createServices } from '../src/app/services.ts';
import { createWorker } from '../workers/worker.ts';

const { values } = parseArgs({
  options: {
    reports: { type: 'string', default: '3000' },
    agents: { type: 'string', default: '10' },
    concurrency: { type: 'string', default: '32' },
    via: { type: 'string', default: 'signal' },
    'database-url': { type: 'string' },
  },
});
const total = Number(values.reports);
const agents = Number(values.agents);
const concurrency = Number(values.concurrency);
if (values.via !== 'signal' && values.via !== 'api') throw new Error(`--via must be signal or api, not ${values.via}`);

const temporal = await startTemporalDevServer({ home: '.skillsmith', uiPort: false });
const embedded = values['database-url'] ? undefined : await startEmbeddedPostgres();
const databaseUrl = values['database-url'] ?? embedded!.url;
const pool = createPool(databaseUrl);
try {
  await migrate(pool);
  const tenantId = `intake-bench-${Date.now()}`;
  const config = { ...loadConfig({}), temporal: { ...loadConfig({}).temporal, address: temporal.address, taskQueue: 'intake-bench' } };
  const services = createServices(config, pool, { logger: createLogger('warn') });
  const { worker, connection: workerConnection } = await createWorker({
    address: temporal.address,
    namespace: 'default',
    taskQueue: 'intake-bench',
    dependencies: services,
  });
  const running = worker.run();
  const connection = await Connection.connect({ address: temporal.address });
  const client = new Client({ connection });

  const reports = [...iterateRuns({ seed: 3, runs: total, tenantId })].map(({ report }, index) => ({
    ...report,
    agentId: `agent-${index % agents}`,
  }));
  const sentAt = new Map<string, number>();
  let next = 0;
  const started = performance.now();
  const epochOffset = Date.now() - performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < reports.length) {
        const report = reports[next++]!;
        sentAt.set(report.runId, epochOffset + performance.now());
        if (values.via === 'api') await services.reportRun(report);
        else await reportRunCompleted(client, report, { taskQueue: 'intake-bench' });
      }
    }),
  );
  const sendSeconds = (performance.now() - started) / 1000;
  let recorded = 0;
  const deadline = Date.now() + 300_000;
  while (Date.now() < deadline) {
    recorded = (await pool.query('SELECT count(*)::int AS n FROM runs WHERE tenant_id = $1', [tenantId])).rows[0].n;
    if (recorded >= total) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const allSeconds = (performance.now() - started) / 1000;
  const { rows } = await pool.query<{ run_id: string; at: number }>(
    `SELECT run_id, extract(epoch FROM ingested_at) * 1000 AS at FROM runs WHERE tenant_id = $1`,
    [tenantId],
  );
  const latencies = rows.map((row) => Number(row.at) - sentAt.get(row.run_id)!).sort((a, b) => a - b);
  const percentile = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!;
  console.log(
    `cores ${(await import('node:os')).availableParallelism()}, via ${values.via}, ${agents} agents, ${concurrency} concurrent senders, database ${embedded ? 'embedded PGlite' : 'native'}`,
  );
  console.log(`sent ${total} reports in ${sendSeconds.toFixed(1)} s (${(total / sendSeconds).toFixed(0)} reports/s accepted)`);
  console.log(
    `recorded ${recorded}/${total} (lost ${total - recorded}) in ${allSeconds.toFixed(1)} s: ${(recorded / allSeconds).toFixed(0)} reports/s sustained end to end`,
  );
  console.log(
    `send → recorded latency: p50 ${percentile(50).toFixed(0)} ms, p99 ${percentile(99).toFixed(0)} ms, max ${latencies.at(-1)!.toFixed(0)} ms`,
  );
  worker.shutdown();
  await running;
  await workerConnection.close();
  await connection.close();
} finally {
  await pool.end();
  await embedded?.stop();
  await temporal.stop();
}

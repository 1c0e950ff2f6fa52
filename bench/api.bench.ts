import { createServices } from '../src/app/services.ts';
/**
 * HTTP API throughput: GET /v1/recall under a bounded local load loop on loopback.
 *
 *   node --import tsx bench/api.bench.ts [--procedures 1000] [--concurrency 8] [--seconds 10]
 *                                        [--database-url postgresql://…]   (native; default embedded PGlite)
 *
 * The API (Fastify, real recall over the registry-shipped embedder) listens on 127.0.0.1; a
 * fixed number of workers in the same process each send one request at a time (fetch, keep-alive)
 * for a fixed duration. Prints requests/s, latency p50/p99 and the status counts, for /healthz
 * (the framework's floor) and for /v1/recall.
 */
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { startApiServer } from '../src/api/server.ts';
import { loadConfig } from '../src/config.ts';
import { recallSkill } from '../src/recall/recall.ts';
import { BENCH_TENANT, loadEmbedder, openBenchDatabase, populate, summarize } from './session-bench-setup.ts';

const { values } = parseArgs({
  options: {
    procedures: { type: 'string', default: '1000' },
    concurrency: { type: 'string', default: '8' },
    seconds: { type: 'string', default: '10' },
    'database-url': { type: 'string' },
  },
});
const concurrency = Number(values.concurrency);
const seconds = Number(values.seconds);

const goals = [
  'deploy the payment service to production',
  'summarize the open incidents from last night',
  'rotate the database credentials',
  'write release notes for version 2.4',
];

const TOKEN = 'bench-token-0123456789abcdef';

async function loadLoop(url: (index: number) => string, headers: Record<string, string>) {
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  const deadline = performance.now() + seconds * 1000;
  let sent = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        const index = sent++;
        const started = performance.now();
        const response = await fetch(url(index), { headers });
        await response.arrayBuffer();
        latencies.push(performance.now() - started);
        statuses[response.status] = (statuses[response.status] ?? 0) + 1;
      }
    }),
  );
  return { requestsPerSecond: Math.round((latencies.length / seconds) * 10) / 10, latencyMs: summarize(latencies), statuses };
}

const database = await openBenchDatabase(values['database-url']);
try {
  const embedder = await loadEmbedder();
  process.stderr.write(`populating ${values.procedures} skills + procedures on ${database.kind} Postgres…\n`);
  const populated = await populate(database, Number(values.procedures), { dimension: embedder.dimension, modelId: embedder.modelId });
  const api = await startApiServer(
    {
      ...createServices(loadConfig({}), database.pool, { logger: pino({ level: 'silent' }) }),
      config: loadConfig({}),
      skills: populated.skills,
      logger: pino({ level: 'silent' }),
      tokens: [{ token: TOKEN, tenantId: BENCH_TENANT, principal: 'bench', scopes: ['recall.read'] }],
      recall: (tenantId, request) => recallSkill({ pool: database.pool, embedder, threshold: 0 }, tenantId, request),
    },
    { host: '127.0.0.1', port: 0 },
  );
  try {
    const headers = { authorization: `Bearer ${TOKEN}` };
    await loadLoop(() => `${api.url}/healthz`, {}); // warm-up
    const health = await loadLoop(() => `${api.url}/healthz`, {});
    const recall = await loadLoop(
      (index) => `${api.url}/v1/recall?goal=${encodeURIComponent(`${goals[index % goals.length]} #${index}`)}&topK=2`,
      headers,
    );
    process.stdout.write(
      `${JSON.stringify({ database: database.kind, procedures: Number(values.procedures), concurrency, seconds, healthz: health, recall }, null, 2)}\n`,
    );
  } finally {
    await api.close();
  }
} finally {
  await database.close();
}

/**
 * HTTP API throughput: GET /v1/recall under a bounded local load loop on loopback.
 *
 *   node --import tsx bench/api.bench.ts [--procedures 1000] [--concurrency 8] [--seconds 10]
 *                                        [--database-url postgresql://…]   (native; default embedded PGlite)
 *                                        [--while-embedding]
 *
 * The API (Fastify, real recall over the registry-shipped embedder) listens on 127.0.0.1; a
 * fixed number of workers in the same process each send one request at a time (fetch, keep-alive)
 * for a fixed duration. Every request asks for a different goal (generated paraphrases, never
 * repeated), so no cache could serve one. Prints requests/s, latency p50/p99 and the status
 * counts, for /healthz (the framework's floor) and for /v1/recall, and recall's phases measured in
 * process: the query embedding and the SQL statement (wall per request), and CPU per request of
 * this process and of the PostgreSQL backends (native only: /proc) — CPU time is what the shared
 * machine's load inflates least. `--while-embedding` runs a second process that embeds batches of
 * goals in a loop with the default (pass) settings for the whole measurement: recall while a pass
 * embeds.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type pg from 'pg';
import { pino } from 'pino';
import { createServices } from '../src/app/services.ts';
import { startApiServer } from '../src/api/server.ts';
import { loadConfig } from '../src/config.ts';
import type { Embedder } from '../src/embedding/embedder.ts';
import { recallSkill } from '../src/recall/recall.ts';
import { createSeededRandom } from '../src/runs/seeded-random.ts';
import { postgresBackendPids, processCpuMs } from './process-cpu.ts';
import { BENCH_TENANT, loadEmbedder, openBenchDatabase, populate, summarize } from './session-bench-setup.ts';

const { values } = parseArgs({
  options: {
    procedures: { type: 'string', default: '1000' },
    concurrency: { type: 'string', default: '8' },
    seconds: { type: 'string', default: '10' },
    'database-url': { type: 'string' },
    'while-embedding': { type: 'boolean', default: false },
    'embedding-loop': { type: 'boolean', default: false },
  },
});
const concurrency = Number(values.concurrency);
const seconds = Number(values.seconds);

const verbs = [
  'deploy',
  'roll out',
  'ship',
  'summarize',
  'list',
  'rotate',
  'renew',
  'write',
  'draft',
  'back up',
  'restore',
  'find',
  'book',
  'cancel',
  'check',
  'compare',
  'translate',
  'review',
  'archive',
  'schedule',
];
const objects = [
  'the payment service',
  'the open incidents',
  'the database credentials',
  'the release notes',
  'the analytics warehouse',
  'a hotel room',
  'a flight',
  'a rental car',
  'the nightly build',
  'the billing module',
  'new bug reports',
  'the on-call rota',
  'the API keys',
  'the docs page',
  'the team calendar',
  'the invoices',
  'a taxi',
  'the weather forecast',
  'the support tickets',
  'the dependency updates',
];
const qualifiers = [
  'for production',
  'from last night',
  'before Friday',
  'for version 2.4',
  'in Berlin',
  'for the Madrid office',
  'near the airport',
  'for next week',
  'with the new template',
  'for the finance team',
  'as soon as possible',
  'for two adults',
  'in staging',
  'for the quarterly review',
  'after the outage',
];

/** Distinct goals in a seeded order: every request of a run asks something new. */
function distinctGoals(count: number): string[] {
  const all = verbs.flatMap((verb) => objects.flatMap((object) => qualifiers.map((qualifier) => `${verb} ${object} ${qualifier}`)));
  const random = createSeededRandom(5);
  for (let index = all.length - 1; index > 0; index--) {
    const other = random.integer(0, index);
    [all[index], all[other]] = [all[other]!, all[index]!];
  }
  if (count > all.length) throw new Error(`only ${all.length} distinct goals; lower --seconds`);
  return all.slice(0, count);
}

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

/** The `--while-embedding` child: a pass's embedding (batches of 32 goals, default settings) until killed. */
async function embeddingLoop(): Promise<void> {
  const embedder = await loadEmbedder();
  const goals = distinctGoals(verbs.length * objects.length * qualifiers.length);
  process.stdout.write('embedding\n');
  for (let round = 0; ; round++) {
    const start = (round * 32) % (goals.length - 32);
    await embedder.embed(goals.slice(start, start + 32), 'goal');
  }
}

/** User + system CPU of the database's backends, in ms (native server on this machine only). */
async function backendCpuMs(pool: pg.Pool): Promise<number | undefined> {
  let total = 0;
  for (const pid of await postgresBackendPids(pool)) {
    const ms = await processCpuMs(pid);
    if (ms === undefined) return undefined;
    total += ms;
  }
  return total;
}

/** The embedder with each call's wall time recorded. */
function timedEmbedder(embedder: Embedder, samples: number[]): Embedder {
  return {
    modelId: embedder.modelId,
    dimension: embedder.dimension,
    async embed(texts, kind, options) {
      const started = performance.now();
      const vectors = await embedder.embed(texts, kind, options);
      samples.push(performance.now() - started);
      return vectors;
    },
  };
}

/** The pool with each query's wall time recorded (recall issues one statement). */
function timedPool(pool: pg.Pool, samples: number[]): pg.Pool {
  return new Proxy(pool, {
    get(target, property, receiver) {
      if (property !== 'query') return Reflect.get(target, property, receiver) as unknown;
      return async (...args: Parameters<pg.Pool['query']>) => {
        const started = performance.now();
        const result = await (target.query as (...queryArgs: unknown[]) => Promise<unknown>)(...args);
        samples.push(performance.now() - started);
        return result;
      };
    },
  });
}

async function main(): Promise<void> {
  if (values['embedding-loop']) return embeddingLoop();
  const database = await openBenchDatabase(values['database-url']);
  try {
    const embedder = await loadEmbedder();
    process.stderr.write(`populating ${values.procedures} skills + procedures on ${database.kind} Postgres…\n`);
    const populated = await populate(database, Number(values.procedures), { dimension: embedder.dimension, modelId: embedder.modelId });
    const embedMs: number[] = [];
    const sqlMs: number[] = [];
    const recallDeps = { pool: timedPool(database.pool, sqlMs), embedder: timedEmbedder(embedder, embedMs), threshold: 0 };
    const api = await startApiServer(
      {
        ...createServices(loadConfig({}), database.pool, { logger: pino({ level: 'silent' }) }),
        config: loadConfig({}),
        skills: populated.skills,
        logger: pino({ level: 'silent' }),
        tokens: [{ token: TOKEN, tenantId: BENCH_TENANT, principal: 'bench', scopes: ['recall.read'] }],
        recall: (tenantId, request) => recallSkill(recallDeps, tenantId, request),
      },
      { host: '127.0.0.1', port: 0 },
    );
    const loader = values['while-embedding']
      ? spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--embedding-loop'], {
          stdio: ['ignore', 'pipe', 'inherit'],
        })
      : undefined;
    try {
      if (loader) await new Promise((resolve) => loader.stdout.once('data', resolve));
      const headers = { authorization: `Bearer ${TOKEN}` };
      const goals = distinctGoals(verbs.length * objects.length * qualifiers.length);
      await loadLoop(() => `${api.url}/healthz`, {}); // warm-up
      const health = await loadLoop(() => `${api.url}/healthz`, {});
      // Warm-up of the recall path (query session, named statement) with goals the measurement never asks.
      for (let index = 0; index < 20; index++) {
        await fetch(`${api.url}/v1/recall?goal=${encodeURIComponent(`warm up ${index}`)}&topK=2`, { headers }).then((r) => r.arrayBuffer());
      }
      embedMs.length = 0;
      sqlMs.length = 0;
      const cpuBefore = process.cpuUsage();
      const backendBefore = await backendCpuMs(database.pool);
      let asked = 0;
      const recall = await loadLoop((index) => {
        asked = index + 1;
        if (index >= goals.length) throw new Error(`only ${goals.length} distinct goals; lower --seconds`);
        return `${api.url}/v1/recall?goal=${encodeURIComponent(goals[index]!)}&topK=2`;
      }, headers);
      const cpu = process.cpuUsage(cpuBefore);
      const backendAfter = await backendCpuMs(database.pool);
      const requests = recall.latencyMs.n;
      const perRequest = (ms: number) => Math.round((ms / requests) * 1000) / 1000;
      process.stdout.write(
        `${JSON.stringify(
          {
            database: database.kind,
            procedures: Number(values.procedures),
            concurrency,
            seconds,
            whileEmbedding: values['while-embedding'],
            distinctGoalsAsked: asked,
            healthz: health,
            recall,
            phasesMs: { queryEmbedding: summarize(embedMs), sqlStatement: summarize(sqlMs) },
            cpuPerRequestMs: {
              // Includes the load loop's own fetch client, which shares this process.
              apiProcess: perRequest((cpu.user + cpu.system) / 1000),
              postgresBackends: backendBefore === undefined || backendAfter === undefined ? null : perRequest(backendAfter - backendBefore),
            },
          },
          null,
          2,
        )}\n`,
      );
    } finally {
      loader?.kill();
      await api.close();
    }
  } finally {
    await database.close();
  }
}

await main();

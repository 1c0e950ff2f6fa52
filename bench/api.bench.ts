/**
 * HTTP API latency: GET /v1/recall on loopback, the client in its own process.
 *
 *   node --import tsx bench/api.bench.ts [--procedures 1000] [--concurrency 8] [--seconds 10]
 *                                        [--database-url postgresql://…]   (native; default embedded PGlite)
 *                                        [--while-embedding]
 *                                        [--keep-database | --populated-database postgresql://…/skillsmith_test_…]
 *                                        [--model ID] [--model-dir DIR] [--client-http fetch|node]
 *                                        [--repeated-goals N]
 *
 * `--keep-database` leaves the native database it populated (and prints its URL) so that later
 * runs, of this or another commit, measure against the same rows with `--populated-database`
 * instead of populating again (minutes for 10k procedures on a loaded machine). `--model` names the
 * registry-shipped model the tenant is embedded with and recall embeds with (default the test
 * model); a populated database keeps the model it was populated with, so a pair of models needs
 * a database each. The API is the real route (Fastify, token check, zod, the tenant's configuration and embedder
 * as `createServices` resolves them, recall over the registry-shipped embedder) on 127.0.0.1. A
 * client process (this file with `--client`) runs a fixed number of workers, each sending one
 * request at a time (fetch, keep-alive) for a fixed duration: the server's figures do not include
 * its own client's work (the client's CPU is reported apart). Every request asks for a different
 * goal (generated paraphrases, never repeated), so no cache could serve one — unless
 * `--repeated-goals N`: then the client asks N goals over and over (each once in its warm-up), as
 * agents ask the same goals again, and the figures are those of repeated goals. Prints requests/s,
 * latency p50/p99 and the status counts, for /healthz (the framework's floor) and for /v1/recall;
 * recall's phases measured in the server: the whole recall call and the SQL statements it issued
 * (wall, and how many per recall; the rest of the call is the query embedding); and CPU per
 * request of the server process, of the client process and of the PostgreSQL backends (native
 * only: /proc) — CPU time is what the shared machine's load inflates least. `phasesMs.tail` says
 * what the slowest 1 % of recall calls are made of beside the middle 10 %: their SQL, the rest of
 * the call (the query embedding, mostly), and how many overlapped a garbage collection of the
 * server or another statement (the batched last_used_at write). `--client-http node` sends with
 * node:http on a keep-alive agent instead of fetch (undici): about half the client's CPU per
 * request, for a client that takes less of the two cores. `--while-embedding`
 * runs another process that embeds batches of goals in a loop with the default (pass) settings for
 * the whole measurement: recall while a pass embeds.
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import { PerformanceObserver } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type pg from 'pg';
import { pino } from 'pino';
import { createServices } from '../src/app/services.ts';
import { startApiServer } from '../src/api/server.ts';
import { loadConfig } from '../src/app/config.ts';
import { ensureEmbeddingModel } from '../src/embedding/goal-embedding-repository.ts';
import { testEmbeddingModel } from '../src/embedding/model-pull.ts';
import { createSeededRandom } from '../src/clustering/seeded-random.ts';
import { postgresBackendPids, processCpuMs } from './process-cpu.ts';
import { createPool } from '../src/store/database.ts';
import { createSkillRepository } from '../src/store/skill-repository.ts';
import {
  BENCH_TENANT,
  benchModelDir,
  loadEmbedder,
  openBenchDatabase,
  populate,
  summarize,
  type BenchDatabase,
} from './session-bench-setup.ts';

const { values } = parseArgs({
  options: {
    procedures: { type: 'string', default: '1000' },
    concurrency: { type: 'string', default: '8' },
    seconds: { type: 'string', default: '10' },
    'database-url': { type: 'string' },
    'while-embedding': { type: 'boolean', default: false },
    'embedding-loop': { type: 'boolean', default: false },
    client: { type: 'string' },
    'keep-database': { type: 'boolean', default: false },
    'populated-database': { type: 'string' },
    path: { type: 'string' },
    model: { type: 'string', default: testEmbeddingModel.modelId },
    // The client's HTTP stack: `fetch` (undici, as the earlier rows) or `node` (node:http with a keep-alive agent, lighter).
    'client-http': { type: 'string', default: 'fetch' },
    'model-dir': { type: 'string', default: benchModelDir },
    'repeated-goals': { type: 'string', default: '0' },
  },
});
const repeatedGoals = Number(values['repeated-goals']);
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

interface LoadResult {
  requestsPerSecond: number;
  latencyMs: ReturnType<typeof summarize>;
  statuses: Record<string, number>;
  asked: number;
  cpuMs: number;
}

/** The `--client` child: one load loop against `--client` (the server's URL) and `--path`, result as JSON on stdout. */
async function clientLoop(baseUrl: string, path: 'healthz' | 'recall'): Promise<void> {
  const headers: Record<string, string> = path === 'recall' ? { authorization: `Bearer ${TOKEN}` } : {};
  const goals = distinctGoals(repeatedGoals > 0 ? repeatedGoals : verbs.length * objects.length * qualifiers.length);
  const url = (index: number) => {
    if (path === 'healthz') return `${baseUrl}/healthz`;
    if (repeatedGoals > 0) index %= repeatedGoals;
    if (index >= goals.length) throw new Error(`only ${goals.length} distinct goals; lower --seconds`);
    return `${baseUrl}/v1/recall?goal=${encodeURIComponent(goals[index]!)}&topK=2`;
  };
  const get = values['client-http'] === 'node' ? nodeHttpGet(headers) : fetchGet(headers);
  // Warm-up (connections, the query session, the named statement) with requests the measurement never asks.
  for (let index = 0; index < 20; index++) {
    const warm = path === 'healthz' ? url(0) : `${baseUrl}/v1/recall?goal=${encodeURIComponent(`warm up ${index}`)}&topK=2`;
    await get(warm);
  }
  // Repeated goals: each asked once before the measurement, which then sees only goals asked before.
  if (path === 'recall' && repeatedGoals > 0) for (let index = 0; index < repeatedGoals; index++) await get(url(index));
  process.stdout.write('ready\n');
  await new Promise((resolve) => process.stdin.once('data', resolve));
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  const cpuBefore = process.cpuUsage();
  const deadline = performance.now() + seconds * 1000;
  let sent = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        const index = sent++;
        const started = performance.now();
        const status = await get(url(index));
        latencies.push(performance.now() - started);
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
    }),
  );
  const cpu = process.cpuUsage(cpuBefore);
  const result: LoadResult = {
    requestsPerSecond: Math.round((latencies.length / seconds) * 10) / 10,
    latencyMs: summarize(latencies),
    statuses,
    asked: sent,
    cpuMs: (cpu.user + cpu.system) / 1000,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

/** A GET through fetch (undici), the body read: its status. */
function fetchGet(headers: Record<string, string>): (url: string) => Promise<number> {
  return async (url) => {
    const response = await fetch(url, { headers });
    await response.arrayBuffer();
    return response.status;
  };
}

/** A GET through node:http on a keep-alive connection, the body read: its status. */
function nodeHttpGet(headers: Record<string, string>): (url: string) => Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  return (url) =>
    new Promise((resolve, reject) => {
      http
        .get(url, { headers, agent }, (response) => {
          response.on('data', () => {});
          response.on('end', () => resolve(response.statusCode ?? 0));
          response.on('error', reject);
        })
        .on('error', reject);
    });
}

/** Runs one client process against the server; `start` is called when the client is warm, right before it measures. */
async function runClient(baseUrl: string, path: 'healthz' | 'recall', start: () => Promise<void>): Promise<LoadResult> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      fileURLToPath(import.meta.url),
      ...['--client', baseUrl, '--path', path, '--seconds', String(seconds), '--concurrency', String(concurrency)],
      ...['--client-http', values['client-http'], '--repeated-goals', String(repeatedGoals)],
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  let output = '';
  child.stdout.setEncoding('utf8');
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: string) => {
      output += chunk;
      if (output.startsWith('ready\n')) resolve();
    });
    void exited.then((code) => reject(new Error(`client exited with ${code} before it was ready`)));
  });
  await start();
  child.stdin.end('go\n');
  const code = await exited;
  if (code !== 0) throw new Error(`client exited with ${code}`);
  return JSON.parse(output.slice('ready\n'.length).trim()) as LoadResult;
}

/** The `--while-embedding` child: a pass's embedding (batches of 32 goals, default settings) until killed. */
async function embeddingLoop(): Promise<void> {
  const embedder = await loadEmbedder(values.model, values['model-dir']);
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

/** When a statement or a garbage collection ran (performance.now()), for the tail's breakdown. */
interface Interval {
  start: number;
  end: number;
}

/**
 * The pool with each query's wall time recorded: what recall's statements cost, and how many a recall
 * issues; `intervals` gets when each ran, and `others` when each statement that was not a recall's ran
 * (the batched last_used_at write).
 */
function timedPool(pool: pg.Pool, samples: number[], others: Interval[]): pg.Pool {
  return new Proxy(pool, {
    get(target, property, receiver) {
      if (property !== 'query') return Reflect.get(target, property, receiver) as unknown;
      return async (...args: Parameters<pg.Pool['query']>) => {
        const started = performance.now();
        const result = await (target.query as (...queryArgs: unknown[]) => Promise<unknown>)(...args);
        const ended = performance.now();
        samples.push(ended - started);
        const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string }).text;
        if (!text?.startsWith('WITH q AS')) others.push({ start: started, end: ended });
        return result;
      };
    },
  });
}

/** Milliseconds of `intervals` inside [start, end]. */
function overlapMs(intervals: readonly Interval[], start: number, end: number): number {
  return intervals.reduce((sum, interval) => sum + Math.max(0, Math.min(end, interval.end) - Math.max(start, interval.start)), 0);
}

interface RecallSample extends Interval {
  sqlMs: number;
}

/**
 * What the slowest 1 % of recall calls are made of, beside the median call: their SQL, the rest
 * of the call (the query embedding, mostly), and how much of them overlapped a garbage collection
 * of the server or another statement (the batched last_used_at write).
 */
function tailBreakdown(samples: readonly RecallSample[], collections: readonly Interval[], others: readonly Interval[]) {
  const byCall = [...samples].sort((left, right) => left.end - left.start - (right.end - right.start));
  const describe = (chosen: readonly RecallSample[]) => {
    const mean = (value: (sample: RecallSample) => number) =>
      Math.round((chosen.reduce((sum, sample) => sum + value(sample), 0) / chosen.length) * 1000) / 1000;
    return {
      calls: chosen.length,
      callMs: mean((sample) => sample.end - sample.start),
      sqlMs: mean((sample) => sample.sqlMs),
      restMs: mean((sample) => sample.end - sample.start - sample.sqlMs),
      gcOverlapMs: mean((sample) => overlapMs(collections, sample.start, sample.end)),
      withGc: chosen.filter((sample) => overlapMs(collections, sample.start, sample.end) > 0).length,
      withOtherStatement: chosen.filter((sample) => overlapMs(others, sample.start, sample.end) > 0).length,
    };
  };
  const tail = byCall.slice(Math.floor(byCall.length * 0.99));
  const middle = byCall.slice(Math.floor(byCall.length * 0.45), Math.ceil(byCall.length * 0.55));
  return { slowestPercent: describe(tail), middleTenPercent: describe(middle) };
}

async function main(): Promise<void> {
  if (values['embedding-loop']) return embeddingLoop();
  if (values.client) return clientLoop(values.client, values.path === 'healthz' ? 'healthz' : 'recall');
  const populatedUrl = values['populated-database'];
  const database = populatedUrl ? openPopulatedDatabase(populatedUrl) : await openBenchDatabase(values['database-url']);
  try {
    const embedder = await loadEmbedder(values.model, values['model-dir']);
    const model = { dimension: embedder.dimension, modelId: embedder.modelId };
    if (!populatedUrl) {
      process.stderr.write(`populating ${values.procedures} skills + procedures on ${database.kind} Postgres…\n`);
      await populate(database, Number(values.procedures), model);
      // The tenant is embedded with the test model, as a learned tenant is: its configuration follows from that record.
      await ensureEmbeddingModel(database.pool, BENCH_TENANT, model);
      if (values['keep-database']) process.stderr.write(`kept: --populated-database ${database.url}\n`);
    }
    const skills = createSkillRepository({ pool: database.pool, defaultLicense: 'Apache-2.0' });
    // Threshold 0, as in every earlier row of bench/results/2026-12-01-recall-latency.md: the seeded random vectors fall below the calibrated one.
    const config = loadConfig({
      SKILLSMITH_EMBEDDING_MODEL: embedder.modelId,
      SKILLSMITH_MODEL_DIR: values['model-dir'],
      SKILLSMITH_ALLOW_REMOTE_MODELS: 'false',
      SKILLSMITH_RECALL_THRESHOLD: '0',
    });
    const sqlMs: number[] = [];
    const recallMs: number[] = [];
    const sqlPerRecallMs: number[] = [];
    const recallSamples: RecallSample[] = [];
    const otherStatements: Interval[] = [];
    const collections: Interval[] = [];
    const gcObserver = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) collections.push({ start: entry.startTime, end: entry.startTime + entry.duration });
    });
    gcObserver.observe({ entryTypes: ['gc'] });
    const services = createServices(config, timedPool(database.pool, sqlMs, otherStatements), { logger: pino({ level: 'silent' }) });
    const api = await startApiServer(
      {
        ...services,
        skills,
        tokens: [{ token: TOKEN, tenantId: BENCH_TENANT, principal: 'bench', scopes: ['recall.read'] }],
        // The services' own recall (tenant configuration, embedder, statement), timed.
        recall: async (tenantId, request) => {
          const started = performance.now();
          const statementsBefore = sqlMs.length;
          try {
            return await services.recall(tenantId, request);
          } finally {
            const ended = performance.now();
            recallMs.push(ended - started);
            // One request at a time (--concurrency 1): the statements since the call began are its own.
            const sql = sqlMs.slice(statementsBefore).reduce((sum, ms) => sum + ms, 0);
            sqlPerRecallMs.push(sql);
            recallSamples.push({ start: started, end: ended, sqlMs: sql });
          }
        },
      },
      { host: '127.0.0.1', port: 0 },
    );
    const loader = values['while-embedding']
      ? spawn(
          process.execPath,
          [
            '--import',
            'tsx',
            fileURLToPath(import.meta.url),
            '--embedding-loop',
            '--model',
            values.model,
            '--model-dir',
            values['model-dir'],
          ],
          {
            stdio: ['ignore', 'pipe', 'inherit'],
          },
        )
      : undefined;
    try {
      if (loader) await new Promise((resolve) => loader.stdout.once('data', resolve));
      const health = await runClient(api.url, 'healthz', async () => {});
      let cpuBefore = process.cpuUsage();
      let backendBefore: number | undefined;
      const recall = await runClient(api.url, 'recall', async () => {
        backendBefore = await backendCpuMs(database.pool);
        sqlMs.length = 0;
        recallMs.length = 0;
        sqlPerRecallMs.length = 0;
        recallSamples.length = 0;
        otherStatements.length = 0;
        collections.length = 0;
        cpuBefore = process.cpuUsage();
      });
      const cpu = process.cpuUsage(cpuBefore);
      const statements = sqlMs.length;
      const backendAfter = await backendCpuMs(database.pool);
      const loadAverage = (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ');
      const requests = recall.latencyMs.n;
      const perRequest = (ms: number) => Math.round((ms / requests) * 1000) / 1000;
      process.stdout.write(
        `${JSON.stringify(
          {
            database: database.kind,
            procedures: Number(values.procedures),
            concurrency,
            seconds,
            model: embedder.modelId,
            whileEmbedding: values['while-embedding'],
            distinctGoalsAsked: repeatedGoals > 0 ? repeatedGoals : recall.asked,
            repeatedGoals: repeatedGoals > 0,
            loadAverage,
            healthz: { requestsPerSecond: health.requestsPerSecond, latencyMs: health.latencyMs, statuses: health.statuses },
            recall: { requestsPerSecond: recall.requestsPerSecond, latencyMs: recall.latencyMs, statuses: recall.statuses },
            phasesMs: {
              // The server's recall call: the tenant's configuration, the query embedding, the SQL.
              recallCall: summarize(recallMs),
              sqlStatements: summarize(sqlMs),
              // Every statement of one recall, summed (meaningful at --concurrency 1).
              sqlPerRecall: summarize(sqlPerRecallMs),
              statementsPerRecall: Math.round((statements / recallMs.length) * 100) / 100,
              tail: tailBreakdown(recallSamples, collections, otherStatements),
            },
            cpuPerRequestMs: {
              serverProcess: perRequest((cpu.user + cpu.system) / 1000),
              clientProcess: perRequest(recall.cpuMs),
              postgresBackends: backendBefore === undefined || backendAfter === undefined ? null : perRequest(backendAfter - backendBefore),
            },
          },
          null,
          2,
        )}\n`,
      );
    } finally {
      loader?.kill();
      gcObserver.disconnect();
      await api.close();
    }
  } finally {
    if (values['keep-database'] && !populatedUrl) await database.pool.end();
    else await database.close();
  }
}

/** A database an earlier `--keep-database` run populated: used as it is, and left in place. */
function openPopulatedDatabase(url: string): BenchDatabase {
  const pool = createPool(url);
  return { kind: 'native', pool, url, close: () => pool.end() };
}

await main();

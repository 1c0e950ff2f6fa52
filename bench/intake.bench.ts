/**
 * Run-completion intake under load: reports/s sent — `--via signal`: `reportRunCompleted` (the
 * whole report signalled, recorded by the intake workflows, one per agent); `--via api`: the
 * `POST /v1/runs` intake (stored first, then, when a review may want the run, only its id signalled
 * to an intake of its tenant); `--via http`: the same route through the real API server (Fastify, token
 * check, zod), the senders in a process of their own — with 0 lost (rows
 * counted against reports accepted) and send-to-stored latency (send time → the row's ingested_at;
 * one machine, one clock). Real parts: a Temporal dev server, an embedded database (or
 * --database-url), the worker here.
 *
 * `--populate` first learns procedures for the tenant (a synthesis pass over generated runs, the
 * extractive distiller, the registry-shipped test model), so every run the bench sends gets a
 * background review (track record): the steady state of a tenant in use. The bench then also
 * waits for the reviews and prints how many review executions did them.
 * `--rate N` offers N reports/s in total (default: as fast as the senders go).
 * `--profile` (with --via api) first times the request's parts alone at the same concurrency:
 * validation, the grouped insert, the intake signal. `--cpu-profile FILE` writes the main thread's
 * CPU profile (Chrome DevTools format) of the measured sending window alone (with --populate, until
 * the reviews are done). Each run also prints the CPU per run of this process, of the Temporal dev
 * server and of the PostgreSQL backends — while sending and, with --populate, until the reviews are
 * done — and the intake workflows' signals and workflow tasks (what the Temporal server's CPU follows).
 *
 *   node --import tsx bench/intake.bench.ts [--via signal|api|http] [--reports 3000] [--agents 10] [--concurrency 32]
 *     [--rate N] [--populate [--model ID]] [--profile] [--cpu-profile FILE.cpuprofile] [--database-url URL]
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Session } from 'node:inspector/promises';
import { availableParallelism, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import protobufs from '@temporalio/proto';
import { RUN_STORED_SIGNAL } from '../src/contracts/intake-contract.ts';
import { admitRunReport, reportRunCompleted, signalIntake } from '../src/client/run-intake-client.ts';
import { startSynthesisPass, passResult } from '../src/client/synthesis-client.ts';
import { loadConfig, type Config } from '../src/app/config.ts';
import { defaultRecallThreshold } from '../src/recall/recall-threshold.ts';
import { isModelPresent, packagedModels, testEmbeddingModel } from '../src/embedding/model-pull.ts';
import { startEmbeddedPostgres } from '../src/infra/embedded-postgres.ts';
import { startTemporalDevServer } from '../src/infra/temporal-dev-server.ts';
import { createLogger } from '../src/logging/logger.ts';
import { iterateRuns } from '../src/demo/synthetic-runs.ts';
import { createGroupedRunWriter } from '../src/runs/grouped-run-writer.ts';
import { upsertRuns } from '../src/runs/run-repository.ts';
import { createPool } from '../src/store/database.ts';
import { migrate } from '../src/store/migrations.ts';
import { createServices } from '../src/app/services.ts';
import { startApiServer } from '../src/api/server.ts';
import { createSkillRepository } from '../src/store/skill-repository.ts';
import { createWorker } from '../workers/worker.ts';
import { offerPaced } from './paced-senders.ts';
import { cpuByPid, descendantPids, postgresBackendPids, totalCpuMs } from './process-cpu.ts';

const { values } = parseArgs({
  options: {
    reports: { type: 'string', default: '3000' },
    agents: { type: 'string', default: '10' },
    concurrency: { type: 'string', default: '32' },
    via: { type: 'string', default: 'signal' },
    rate: { type: 'string' },
    populate: { type: 'boolean', default: false },
    // The registry-shipped model the populated tenant is embedded with (its reviews embed with it).
    model: { type: 'string', default: testEmbeddingModel.modelId },
    profile: { type: 'boolean', default: false },
    'database-url': { type: 'string' },
    'cpu-profile': { type: 'string' },
    // Internal: this file as --via http's senders, in a process of their own (see sendFromChild).
    senders: { type: 'string' },
    tenant: { type: 'string' },
  },
});
const total = Number(values.reports);
const agents = Number(values.agents);
const concurrency = Number(values.concurrency);
const rate = values.rate === undefined ? undefined : Number(values.rate);
if (values.via !== 'signal' && values.via !== 'api' && values.via !== 'http')
  throw new Error(`--via must be signal, api or http, not ${values.via}`);
const modelDir = new URL('../.skillsmith/models', import.meta.url).pathname;
const model = packagedModels.get(values.model);
if (!model) throw new Error(`--model ${values.model} is not a registry-shipped model (${[...packagedModels.keys()].join(', ')})`);
if (values.populate && !(await isModelPresent(modelDir, model)))
  throw new Error(`--populate needs ${model.modelId} in ${modelDir} (skillsmith models pull --model ${model.modelId})`);

const HTTP_TOKEN = 'intake-bench-token-0123456789abcdef';
/** Keep-alive connections, one per sender: node:http costs the senders' process less CPU per request than fetch. */
const httpAgent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
/** One `POST /v1/runs` as an agent runtime sends it; anything but a 202 fails the send. */
function postRun(url: string, report: unknown): Promise<{ review: string }> {
  const body = JSON.stringify(report);
  return new Promise((resolve, reject) => {
    const request = http.request(
      `${url}/v1/runs`,
      {
        method: 'POST',
        agent: httpAgent,
        headers: { authorization: `Bearer ${HTTP_TOKEN}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (response.statusCode !== 202) reject(new Error(`POST /v1/runs answered ${response.statusCode}: ${text}`));
          else resolve(JSON.parse(text) as { review: string });
        });
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const percentiles = (samples: number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
  return { p50: at(50), p99: at(99), max: sorted.at(-1) ?? NaN };
};
const ms = ({ p50, p99, max }: { p50: number; p99: number; max: number }) =>
  `p50 ${p50.toFixed(0)} ms, p99 ${p99.toFixed(0)} ms, max ${max.toFixed(0)} ms`;

/** Sends every item with `concurrency` senders, at `rate` per second in total when given; resolves with the send times. */
async function offer<T>(
  items: T[],
  send: (item: T) => Promise<unknown>,
): Promise<{ seconds: number; sentAt: number[]; answered: number[]; failed: number }> {
  const sentAt: number[] = [];
  const answered: number[] = [];
  let failed = 0;
  const started = performance.now();
  await offerPaced(items.length, { concurrency, rate }, async (index) => {
    sentAt[index] = performance.now();
    try {
      await send(items[index]!);
      answered.push(performance.now() - sentAt[index]);
    } catch (error) {
      failed += 1;
      if (failed <= 3) console.error(`send failed: ${(error as Error).message}`);
    }
  });
  return { seconds: (performance.now() - started) / 1000, sentAt, answered, failed };
}

/** The reports sent, the same in the bench and in its --via http sender process. */
function benchReports(tenantId: string) {
  return [...iterateRuns({ seed: 3, runs: total, tenantId })].map(({ report }, index) => ({
    ...report,
    agentId: `agent-${index % agents}`,
  }));
}

interface SendersResult {
  seconds: number;
  sentAtEpochMs: number[];
  answered: number[];
  failed: number;
  plans: Array<[string, number]>;
  cpuMs: number;
}

if (values.senders !== undefined) {
  // --via http's senders: POST every report to the API at --senders, then print what happened as JSON.
  const url = values.senders;
  const cpuBefore = process.cpuUsage();
  const plans = new Map<string, number>();
  const sent = await offer(benchReports(values.tenant!), async (report) => {
    const { review } = await postRun(url, report);
    plans.set(review, (plans.get(review) ?? 0) + 1);
  });
  const cpu = process.cpuUsage(cpuBefore);
  const result: SendersResult = {
    seconds: sent.seconds,
    sentAtEpochMs: sent.sentAt.map((at) => performance.timeOrigin + at),
    answered: sent.answered,
    failed: sent.failed,
    plans: [...plans],
    cpuMs: (cpu.user + cpu.system) / 1000,
  };
  process.stdout.write(JSON.stringify(result));
  process.exit(0);
}

/** Runs the senders in a process of their own, as agents on other machines would be: the API process's CPU is then its own. */
async function sendFromChild(url: string, tenantId: string): Promise<SendersResult> {
  const args = ['--import', 'tsx', fileURLToPath(import.meta.url), '--senders', url, '--tenant', tenantId];
  args.push('--reports', String(total), '--agents', String(agents), '--concurrency', String(concurrency));
  if (rate !== undefined) args.push('--rate', String(rate));
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const chunks: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`the sender process exited with ${code}`);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as SendersResult;
}

const temporal = await startTemporalDevServer({ home: '.skillsmith', uiPort: false });
const embedded = values['database-url'] ? undefined : await startEmbeddedPostgres();
const databaseUrl = values['database-url'] ?? embedded!.url;
const pool = createPool(databaseUrl);
try {
  await migrate(pool);
  const tenantId = `intake-bench-${Date.now()}`;
  const base = loadConfig({});
  const config: Config = {
    ...base,
    temporal: { ...base.temporal, address: temporal.address, taskQueue: 'intake-bench' },
    // The registry-shipped model: what a populated tenant's reviews recall with (nothing is embedded without --populate).
    embedding: {
      model: model.modelId,
      modelDir,
      allowRemoteModels: false,
      pooling: model.pooling,
      prefixes: model.prefixes,
      dimension: undefined,
      batchSize: 32,
    },
    synthesis: { ...base.synthesis, distiller: 'extractive', similarityTau: 0.6 },
    recall: { ...base.recall, threshold: defaultRecallThreshold(model.modelId)! },
  };
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

  if (values.populate) {
    const started = performance.now();
    const learn = [...iterateRuns({ seed: 11, runs: 600, tenantId })].map(({ report }) => ({ ...report, runId: `learn-${report.runId}` }));
    await upsertRuns(pool, tenantId, learn);
    const record = await passResult(await startSynthesisPass(client, { tenantId, full: true, taskQueue: 'intake-bench' }));
    const procedures = (await pool.query('SELECT count(*)::int AS n FROM procedures WHERE tenant_id = $1', [tenantId])).rows[0].n;
    if (procedures === 0) throw new Error(`the populating pass learned no procedure: ${JSON.stringify(record.counts)}`);
    console.log(`populated: ${procedures} procedures learned from 600 runs in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }

  const reports = benchReports(tenantId);

  if (values.profile) {
    // Each part of a POST /v1/runs alone, at the bench's concurrency, on a separate tenant.
    const profileTenant = `${tenantId}-profile`;
    const sample = reports.slice(0, Math.min(1000, total)).map((report) => ({ ...report, tenantId: profileTenant }));
    let started = performance.now();
    const admitted = sample.map((report) => admitRunReport(report));
    const validateMs = (performance.now() - started) / sample.length;
    const storeRun = createGroupedRunWriter(pool);
    const storeTimes: number[] = [];
    started = performance.now();
    await offer(admitted, async (report) => {
      const at = performance.now();
      await storeRun(report);
      storeTimes.push(performance.now() - at);
    });
    const storeSeconds = (performance.now() - started) / 1000;
    const signalTimes: number[] = [];
    started = performance.now();
    await offer(admitted, async (report) => {
      const at = performance.now();
      await signalIntake(client, report, { name: RUN_STORED_SIGNAL, arg: { runId: report.runId } }, { taskQueue: 'intake-bench' });
      signalTimes.push(performance.now() - at);
    });
    const signalSeconds = (performance.now() - started) / 1000;
    console.log(`profile of ${sample.length} requests' parts, each alone at ${concurrency} concurrent:`);
    console.log(`  validation (admitRunReport): ${validateMs.toFixed(2)} ms CPU per report`);
    console.log(`  grouped insert: ${(sample.length / storeSeconds).toFixed(0)} /s, ${ms(percentiles(storeTimes))}`);
    console.log(`  intake signal (signalWithStart): ${(sample.length / signalSeconds).toFixed(0)} /s, ${ms(percentiles(signalTimes))}`);
    await sleep(2_000);
  }

  // --via http: the real API server on these services, and a token of the tenant allowed to write runs.
  const api =
    values.via === 'http'
      ? await startApiServer(
          {
            ...services,
            skills: createSkillRepository({ pool, defaultLicense: config.skillLicense }),
            tokens: [{ token: HTTP_TOKEN, tenantId, principal: 'intake-bench', scopes: ['run.write'] }],
          },
          { host: '127.0.0.1', port: 0 },
        )
      : undefined;

  const load = loadavg()[0]!.toFixed(1);
  const epochOffset = Date.now() - performance.now();
  // --cpu-profile: the main thread's CPU profile of the sending window only (not start-up or the populating pass).
  const profiler = values['cpu-profile'] ? new Session() : undefined;
  if (profiler) {
    profiler.connect();
    await profiler.post('Profiler.enable');
    await profiler.post('Profiler.start');
  }
  // The other processes on these cores: the Temporal dev server (a child) and, on a native
  // server, this database's backends (those of the pool: the intake's and the worker's).
  const serverPids = await descendantPids();
  const serverCpuBefore = await totalCpuMs(serverPids);
  const backendsBefore = embedded ? new Map<number, number>() : await cpuByPid(await postgresBackendPids(pool));
  const cpuBefore = process.cpuUsage();
  // --via api: what each 202 said of the run's review (`scheduled`: its intake was signalled; `none`: nothing was sent).
  const reviewPlans = new Map<string, number>();
  let sendersCpuMs: number | undefined;
  const sent = api
    ? await sendFromChild(api.url, tenantId).then((result) => {
        for (const [review, count] of result.plans) reviewPlans.set(review, count);
        sendersCpuMs = result.cpuMs;
        return { ...result, sentAt: result.sentAtEpochMs.map((at) => at - epochOffset) };
      })
    : await offer(reports, async (report) => {
        if (values.via === 'signal') return reportRunCompleted(client, report, { taskQueue: 'intake-bench' });
        const { review } = await services.reportRun(report);
        reviewPlans.set(review, (reviewPlans.get(review) ?? 0) + 1);
      });
  const accepted = total - sent.failed;
  const cpu = process.cpuUsage(cpuBefore);
  const serverCpu = (await totalCpuMs(serverPids)) - serverCpuBefore;
  // Backends the pool opened while sending count from 0 (one closed meanwhile is missed).
  let backendCpu = 0;
  if (!embedded) {
    for (const [pid, ms] of await cpuByPid(await postgresBackendPids(pool))) backendCpu += ms - (backendsBefore.get(pid) ?? 0);
  }
  const stopProfiler = async () => {
    if (!profiler) return;
    const { profile } = await profiler.post('Profiler.stop');
    await writeFile(values['cpu-profile']!, JSON.stringify(profile));
    profiler.disconnect();
  };
  // With --populate the profile goes on until the reviews are done: they are what it is for.
  if (!values.populate) await stopProfiler();
  let stored = 0;
  const deadline = Date.now() + 300_000;
  while (Date.now() < deadline) {
    stored = (await pool.query('SELECT count(*)::int AS n FROM runs WHERE tenant_id = $1 AND run_id NOT LIKE $2', [tenantId, 'learn-%']))
      .rows[0].n;
    if (stored >= accepted) break;
    await sleep(100);
  }
  const { rows } = await pool.query<{ run_id: string; at: number }>(
    `SELECT run_id, extract(epoch FROM ingested_at) * 1000 AS at FROM runs WHERE tenant_id = $1 AND run_id NOT LIKE 'learn-%'`,
    [tenantId],
  );
  const indexOf = new Map(reports.map((report, index) => [report.runId, index]));
  const latencies = rows.map((row) => Number(row.at) - (epochOffset + sent.sentAt[indexOf.get(row.run_id)!]!));
  const lastStored = Math.max(...rows.map((row) => Number(row.at))) - (epochOffset + sent.sentAt[0]!);

  console.log(
    `cores ${availableParallelism()}, load average ${load} at the start (shared machine), via ${values.via}, ${agents} agents, ${concurrency} concurrent senders, ` +
      `${rate === undefined ? 'unthrottled' : `${rate}/s offered`}, tenant ${values.populate ? 'populated' : 'empty'}, database ${embedded ? 'embedded' : 'native'}`,
  );
  console.log(`accepted ${accepted}/${total} in ${sent.seconds.toFixed(1)} s (${(accepted / sent.seconds).toFixed(0)} /s)`);
  console.log(
    `stored ${stored}/${accepted} accepted (lost ${accepted - stored}): ${((stored / lastStored) * 1000).toFixed(0)} runs/s recorded (first send → last row)`,
  );
  console.log(
    `this process (intake + worker${api ? ' + API server' : ''}) CPU while sending: ${((cpu.user + cpu.system) / 1000 / accepted).toFixed(2)} ms per accepted run`,
  );
  if (sendersCpuMs !== undefined)
    console.log(`the senders' process (HTTP clients) CPU: ${(sendersCpuMs / accepted).toFixed(2)} ms per accepted run`);
  console.log(
    `Temporal dev server CPU while sending: ${(serverCpu / accepted).toFixed(2)} ms per accepted run` +
      (embedded ? '' : `; PostgreSQL backends: ${(backendCpu / accepted).toFixed(2)} ms`),
  );
  console.log(`send → answered (202 / signal sent): ${ms(percentiles(sent.answered))}`);
  if (values.via !== 'signal')
    console.log(
      `202 review: ${[...reviewPlans].map(([review, count]) => `${count} ${review}`).join(', ')} (scheduled: signalled to an intake)`,
    );
  console.log(`send → stored: ${ms(percentiles(latencies))}`);
  // What the Temporal server's CPU follows: signals and workflow tasks of the intake workflows.
  let signals = 0;
  let workflowTasks = 0;
  let intakeExecutions = 0;
  for await (const execution of client.workflow.list({ query: `WorkflowId STARTS_WITH 'intake/${tenantId}/'` })) {
    intakeExecutions += 1;
    const history = await client.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory();
    for (const event of history.events ?? []) {
      if (event.eventType === protobufs.temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED) signals += 1;
      if (event.eventType === protobufs.temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) workflowTasks += 1;
    }
  }
  console.log(
    `intake: ${signals} signals, ${workflowTasks} workflow tasks in ${intakeExecutions} executions ` +
      `(${(accepted / Math.max(signals, 1)).toFixed(2)} runs per signal)`,
  );

  if (values.populate) {
    // Every run with a tool call of a populated tenant is reviewed (track record): wait for them all.
    const expected = (
      await pool.query(`SELECT count(*)::int AS n FROM runs WHERE tenant_id = $1 AND run_id NOT LIKE 'learn-%' AND tool_call_count > 0`, [
        tenantId,
      ])
    ).rows[0].n;
    let done = 0;
    const reviewDeadline = Date.now() + 600_000;
    while (Date.now() < reviewDeadline) {
      done = (await pool.query(`SELECT count(*)::int AS n FROM reviews WHERE tenant_id = $1 AND status <> 'running'`, [tenantId])).rows[0]
        .n;
      if (done >= expected) break;
      await sleep(250);
    }
    // The CPU of recording and reviewing these runs: from the first send until the last review is done.
    const reviewedCpu = process.cpuUsage(cpuBefore);
    const reviewedServerCpu = (await totalCpuMs(serverPids)) - serverCpuBefore;
    let reviewedBackendCpu = 0;
    if (!embedded) {
      for (const [pid, ms] of await cpuByPid(await postgresBackendPids(pool))) reviewedBackendCpu += ms - (backendsBefore.get(pid) ?? 0);
    }
    await stopProfiler();
    const { rows: reviewRows } = await pool.query<{ status: string; n: number; last: number }>(
      `SELECT status, count(*)::int AS n, max(extract(epoch FROM finished_at) * 1000) AS last FROM reviews WHERE tenant_id = $1 GROUP BY status`,
      [tenantId],
    );
    const last = Math.max(...reviewRows.map((row) => Number(row.last)));
    let executions = 0;
    for await (const _ of client.workflow.list({
      query: `WorkflowType IN ('runReview', 'runReviews') AND WorkflowId STARTS_WITH 'review/${tenantId}/'`,
    }))
      executions += 1;
    console.log(
      `reviews: ${done}/${expected} done (${reviewRows.map((row) => `${row.n} ${row.status}`).join(', ')}) by ${executions} review executions; ` +
        `last finished ${((last - (epochOffset + sent.sentAt[0]!)) / 1000).toFixed(1)} s after the first send`,
    );
    console.log(
      `CPU per accepted run from the first send until the reviews were done: this process ${((reviewedCpu.user + reviewedCpu.system) / 1000 / accepted).toFixed(2)} ms, ` +
        `Temporal dev server ${(reviewedServerCpu / accepted).toFixed(2)} ms` +
        (embedded ? '' : `, PostgreSQL backends ${(reviewedBackendCpu / accepted).toFixed(2)} ms`),
    );
  }
  await api?.close();
  worker.shutdown();
  await running;
  await workerConnection.close();
  await connection.close();
} finally {
  await pool.end();
  await embedded?.stop();
  await temporal.stop();
}

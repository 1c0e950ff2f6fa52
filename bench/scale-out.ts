/**
 * Scale-out at size (issue #31 item 3): docker-compose.yml's topology without containers, as
 * docs/operations.md's recipe runs it — one Temporal dev server, one native PostgreSQL, 2
 * `skillsmith api` and 3 `skillsmith worker` processes on one task queue — over --runs runs
 * (default 5,000). test/faults/scale-out.test.ts is the same check at 240 runs, in the fault suite (`npm run faults`).
 * Needs `npm run build` (the processes run dist/) and the test model (`skillsmith models pull`).
 *
 *   nice -n 10 node --import tsx bench/scale-out.ts [--runs 5000] [--seed 31]
 *
 * 1. every run posted through the two APIs alternately (`POST /v1/runs`, 8 at a time), each 202;
 * 2. the reference: the same runs in tenant `single`, one full pass by one worker of its own queue;
 * 3. tenant `scaled`: one full pass on the three workers, the third SIGKILLed once each of them
 *    has run an activity of the pass; the pass must complete with the reference's counts and
 *    skills (names, revisions, counts, provenance, SKILL.md sha256), revisions 1..n;
 * 4. per worker, the activities it ran in the pass and its cluster children (Temporal's history).
 * Prints the figures as JSON, and a Markdown table for bench/results/.
 */
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { startSynthesisPass } from '../src/client/synthesis-client.ts';
import type { PassRecord } from '../src/contracts/pass-record.ts';
import { PASS_SEARCH_ATTRIBUTE_TYPES } from '../src/contracts/search-attributes.ts';
import { generateRuns } from '../src/demo/synthetic-runs.ts';
import { startNativePostgres } from '../src/infra/native-postgres.ts';
import { freePort, startTemporalDevServer } from '../src/infra/temporal-dev-server.ts';
import { upsertRuns } from '../src/runs/run-repository.ts';
import { createPool } from '../src/store/database.ts';
import { migrate } from '../src/store/migrations.ts';
import { killProcess, passSkills, revisionGaps, startWorkerProcess } from '../test/support/pass-faults.ts';
import {
  activitiesByWorker,
  postRuns,
  SCALE_OUT,
  startScaleOutTopology,
  untilEachRanActivities,
} from '../test/support/scale-out-topology.ts';
import { createStackHome } from '../test/support/stack-home.ts';
import { testModelDir } from '../test/support/test-model.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '5000' }, seed: { type: 'string', default: '31' } } });
const RUNS = Number(values.runs);
const TOKEN = 'scale-out-bench-token-0123456789';
const HEARTBEAT_TIMEOUT_SECONDS = 30;
const log = (line: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);
const since = (started: number) => (performance.now() - started) / 1000;

const temporal = await startTemporalDevServer({
  home: resolve('.skillsmith'),
  cliPath: process.env.TEMPORAL_CLI_PATH,
  uiPort: false,
  searchAttributes: PASS_SEARCH_ATTRIBUTE_TYPES,
  onProgress: log,
});
const stackHome = await createStackHome();
const postgres = await startNativePostgres({ home: stackHome.home, port: await freePort(), onProgress: log });
const pool = createPool(postgres.url);
await migrate(pool);
const taskQueue = `scale-out-bench-${Date.now()}`;
const env = {
  DATABASE_URL: postgres.url,
  TEMPORAL_ADDRESS: temporal.address,
  TEMPORAL_TASK_QUEUE: taskQueue,
  SKILLSMITH_EMBEDDING_MODEL: 'sentence-transformers/all-MiniLM-L6-v2',
  SKILLSMITH_MODEL_DIR: testModelDir,
  SKILLSMITH_DISTILLER: 'extractive',
  SKILLSMITH_API_TOKENS: JSON.stringify([{ token: TOKEN, tenantId: 'scaled', principal: 'agents', scopes: ['run.write', 'recall.read'] }]),
};
const connection = await Connection.connect({ address: temporal.address });
const client = new Client({ connection });
const topology = await startScaleOutTopology({ env, ...SCALE_OUT });
const single = startWorkerProcess({ ...env, TEMPORAL_TASK_QUEUE: `${taskQueue}-single` });
try {
  const runs = generateRuns({ seed: Number(values.seed), runs: RUNS }).map(({ report }) => report);

  let started = performance.now();
  const perApi = await postRuns(topology.apis, TOKEN, runs);
  const postSeconds = since(started);
  log(`posted ${RUNS} runs through 2 APIs in ${postSeconds.toFixed(1)} s (${perApi.join(' + ')})`);

  await upsertRuns(
    pool,
    'single',
    runs.map((report) => ({ ...report, tenantId: 'single' })),
  );
  started = performance.now();
  const referenceHandle = await startSynthesisPass(client, {
    tenantId: 'single',
    full: true,
    taskQueue: `${taskQueue}-single`,
    heartbeatTimeoutSeconds: HEARTBEAT_TIMEOUT_SECONDS,
  });
  const reference = (await referenceHandle.result()) as PassRecord;
  const referenceSeconds = since(started);
  log(`one worker: ${reference.status} in ${referenceSeconds.toFixed(1)} s, ${JSON.stringify(reference.counts)}`);

  started = performance.now();
  const handle = await startSynthesisPass(client, {
    tenantId: 'scaled',
    full: true,
    taskQueue,
    heartbeatTimeoutSeconds: HEARTBEAT_TIMEOUT_SECONDS,
  });
  const identities = topology.workers.map((worker) => topology.identityOf(worker));
  await untilEachRanActivities(client, handle, identities, 1_800_000);
  const killedAfterSeconds = since(started);
  await killProcess(topology.workers[2]!);
  log(`killed worker 3 (${identities[2]}) ${killedAfterSeconds.toFixed(1)} s into the pass`);
  const scaled = (await handle.result()) as PassRecord;
  const scaledSeconds = since(started);
  log(`three workers, one killed: ${scaled.status} in ${scaledSeconds.toFixed(1)} s`);

  const [scaledSkills, referenceSkills] = await Promise.all([passSkills(pool, 'scaled'), passSkills(pool, 'single')]);
  const perWorker = await activitiesByWorker(client, handle);
  const figures = {
    runs: RUNS,
    loadAverageAtEnd: loadavg()[0],
    post: { seconds: postSeconds, runsPerSecond: RUNS / postSeconds, perApi },
    oneWorker: { seconds: referenceSeconds, status: reference.status, counts: reference.counts },
    threeWorkers: { seconds: scaledSeconds, killedAfterSeconds, status: scaled.status, counts: scaled.counts },
    sameCounts: JSON.stringify(scaled.counts) === JSON.stringify(reference.counts),
    sameSkills: JSON.stringify(scaledSkills) === JSON.stringify(referenceSkills),
    skills: scaledSkills.length,
    revisionGaps: revisionGaps(scaledSkills).length,
    activitiesPerWorker: identities.map((identity, index) => ({
      worker: index + 1,
      identity,
      killed: index === 2,
      activities: perWorker.get(identity) ?? 0,
    })),
  };
  console.log(JSON.stringify(figures, null, 2));
  console.log(
    [
      '| runs | post (runs/s) | 1 worker (s) | 3 workers, 1 killed (s) | killed at (s) | skills | same skills | activities per worker |',
      '|---|---|---|---|---|---|---|---|',
      `| ${RUNS} | ${figures.post.runsPerSecond.toFixed(0)} | ${referenceSeconds.toFixed(0)} | ${scaledSeconds.toFixed(0)} | ${killedAfterSeconds.toFixed(0)} | ` +
        `${figures.skills} | ${figures.sameSkills && figures.sameCounts && figures.revisionGaps === 0 ? 'yes' : 'NO'} | ` +
        `${figures.activitiesPerWorker.map((worker) => `${worker.activities}${worker.killed ? ' (killed)' : ''}`).join(' / ')} |`,
    ].join('\n'),
  );
  process.exitCode = figures.sameSkills && figures.sameCounts && figures.revisionGaps === 0 ? 0 : 1;
} finally {
  await killProcess(single);
  await topology.stop();
  await connection.close();
  await pool.end();
  await postgres.stop();
  await temporal.stop();
  await stackHome.remove();
}

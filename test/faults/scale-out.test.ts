import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../src/app/config.ts';
import { queryPassProgress, startSynthesisPass } from '../../src/client/synthesis-client.ts';
import type { PassProgress } from '../../src/contracts/pass-contract.ts';
import type { PassRecord } from '../../src/contracts/pass-record.ts';
import { generateRuns } from '../../src/demo/synthetic-runs.ts';
import { startNativePostgres, type NativePostgres } from '../../src/infra/native-postgres.ts';
import { freePort } from '../../src/infra/temporal-dev-server.ts';
import { upsertRuns } from '../../src/runs/run-repository.ts';
import { createPool } from '../../src/store/database.ts';
import { killProcess, passSkills, revisionGaps, startWorkerProcess } from '../support/pass-faults.ts';
import {
  activitiesByWorker,
  postRuns,
  SCALE_OUT,
  startScaleOutTopology,
  untilEachRanActivities,
  type ScaleOutTopology,
} from '../support/scale-out-topology.ts';
import { createStackHome, type StackHome } from '../support/stack-home.ts';
import { requireTestModel, testModelDir } from '../support/test-model.ts';

/** Enough runs for more cluster children than workers several times over; bench/scale-out.ts runs 5,000. */
const RUNS = 240;
const TOKEN = 'scale-out-token-0123456789';

/**
 * docker-compose.yml's topology without containers (docs/operations.md's recipe): one Temporal
 * (the suite's dev server), one native PostgreSQL, two `skillsmith api` and three `skillsmith
 * worker` processes on one task queue. Runs reach the tenant through both APIs; one pass is run by
 * the three workers, one of which is SIGKILLed mid-pass, and learns exactly what one worker alone
 * learns from the same runs.
 */
describe('scale-out: 2 API and 3 worker processes on one Temporal and one PostgreSQL', () => {
  let stackHome: StackHome;
  let postgres: NativePostgres;
  let topology: ScaleOutTopology;
  let connection: Connection;
  let client: Client;
  let env: Record<string, string>;
  let heartbeatTimeoutSeconds: number;
  const taskQueue = `scale-out-${Date.now()}`;
  const runs = generateRuns({ seed: 31, runs: RUNS }).map(({ report }) => report);

  beforeAll(async () => {
    await requireTestModel();
    stackHome = await createStackHome();
    // An empty database, as compose's: the five processes migrate it at once as they start.
    postgres = await startNativePostgres({ home: stackHome.home, port: await freePort() });
    env = {
      DATABASE_URL: postgres.url,
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_TASK_QUEUE: taskQueue,
      SKILLSMITH_EMBEDDING_MODEL: 'sentence-transformers/all-MiniLM-L6-v2',
      SKILLSMITH_MODEL_DIR: testModelDir,
      SKILLSMITH_DISTILLER: 'extractive',
      SKILLSMITH_API_TOKENS: JSON.stringify([
        { token: TOKEN, tenantId: 'scaled', principal: 'agents', scopes: ['run.write', 'recall.read'] },
      ]),
    };
    heartbeatTimeoutSeconds = loadConfig({ ...env, SKILLSMITH_HEARTBEAT_TIMEOUT_SECONDS: '10' }).synthesis.heartbeatTimeoutSeconds;
    connection = await Connection.connect({ address: inject('temporalAddress') });
    client = new Client({ connection });
    topology = await startScaleOutTopology({ env, ...SCALE_OUT });
  }, 120_000);

  afterAll(async () => {
    await topology?.stop();
    await connection?.close();
    await postgres?.stop();
    await stackHome?.remove();
  });

  it('learns the same skills as one worker, every worker running activities, with one killed mid-pass', async () => {
    // The reference: the same runs in another tenant, one pass by one worker of its own task queue.
    const pool = createPool(postgres.url);
    const single = startWorkerProcess({ ...env, TEMPORAL_TASK_QUEUE: `${taskQueue}-single` });
    try {
      await upsertRuns(
        pool,
        'single',
        runs.map((report) => ({ ...report, tenantId: 'single' })),
      );
      const reference = startSynthesisPass(client, {
        tenantId: 'single',
        full: true,
        taskQueue: `${taskQueue}-single`,
        heartbeatTimeoutSeconds,
      }).then(async (handle) => (await handle.result()) as PassRecord);
      reference.catch(() => undefined);

      // Every run through the two APIs, alternately: each answers 202 only once the run is stored.
      expect(await postRuns(topology.apis, TOKEN, runs)).toEqual([RUNS / 2, RUNS / 2]);
      expect((await pool.query(`SELECT count(*)::int AS n FROM runs WHERE tenant_id = 'scaled'`)).rows[0].n).toBe(RUNS);

      const handle = await startSynthesisPass(client, { tenantId: 'scaled', full: true, taskQueue, heartbeatTimeoutSeconds });
      const identities = topology.workers.map((worker) => topology.identityOf(worker));
      await untilEachRanActivities(client, handle, identities, 240_000);
      // Mid-pass: the pass is still running (clusters still to come) when the third worker dies.
      const progress: PassProgress = await queryPassProgress(handle);
      expect(
        progress.stage === 'distilling' ? progress.clustersDone < progress.clustersTotal : !['finishing', 'done'].includes(progress.stage),
      ).toBe(true);
      await killProcess(topology.workers[2]!);

      const scaled = (await handle.result()) as PassRecord;
      const alone = await reference;
      expect(scaled.status).toBe('completed');
      expect(alone.status).toBe('completed');
      expect(scaled.counts).toEqual(alone.counts);
      const skills = await passSkills(pool, 'scaled');
      expect(skills.length).toBeGreaterThan(3);
      expect(skills).toEqual(await passSkills(pool, 'single'));
      expect(revisionGaps(skills)).toEqual([]);

      const perWorker = await activitiesByWorker(client, handle);
      for (const identity of identities) expect(perWorker.get(identity) ?? 0, identity).toBeGreaterThan(0);
      expect([...perWorker.keys()].every((identity) => identities.includes(identity))).toBe(true);

      // Both APIs answer recall from the one database alike.
      const goal = runs.find((run) => run.status === 'completed')!.goal;
      const recalled = await Promise.all(
        topology.apis.map(async (api) =>
          (await fetch(`${api.url}/v1/recall?goal=${encodeURIComponent(goal)}`, { headers: { authorization: `Bearer ${TOKEN}` } })).json(),
        ),
      );
      expect(recalled[0]).toEqual(recalled[1]);
    } finally {
      await killProcess(single);
      await pool.end();
    }
  }, 420_000);
});

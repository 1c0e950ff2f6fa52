import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryPassProgress, startSynthesisPass } from '../../src/client/synthesis-client.ts';
import type { PassRecord } from '../../src/contracts/pass-record.ts';
import { nativePostgresWheel, startNativePostgres, type NativePostgres } from '../../src/infra/native-postgres.ts';
import { freePort } from '../../src/infra/temporal-dev-server.ts';
import { createPool } from '../../src/store/database.ts';
import { migrate } from '../../src/store/migrations.ts';
import { listPasses } from '../../src/synthesis/pass-repository.ts';
import type { TestDatabase } from '../support/database.ts';
import { passSkills, revisionGaps } from '../support/pass-faults.ts';
import { createStackHome, type StackHome } from '../support/stack-home.ts';
import { ingest, startSynthesisHarness, synthesisTestConfig, taskRuns, type SynthesisHarness } from '../support/synthesis-harness.ts';
import { requireTestModel } from '../support/test-model.ts';
import { until } from '../support/until.ts';

const DEPLOY_TOOLS = ['repo.clone', 'build.run', 'deploy.apply', 'deploy.status'];
const ROTATE_TOOLS = ['secrets.read', 'keys.rotate', 'secrets.write', 'notify.slack'];
const deployGoals = [
  'Deploy the billing service to staging',
  'Please deploy the billing service to the staging environment',
  'Roll out the billing service to staging',
];
const rotateGoals = [
  'Rotate the API key for the payments integration',
  'Please rotate the payments integration API key',
  'Rotate our payments API key and revoke the old one',
];
/** The two minutes issue #30 asks a pass to ride out (its embed and extract steps gave up after 15-30 s before). */
const OUTAGE_MS = 120_000;

/** Issue #30 item 3 (and 4): a pass over the stack's native PostgreSQL, which is SIGKILLed mid-pass. */
describe.skipIf(!nativePostgresWheel())('a synthesis pass through a database outage', () => {
  let stackHome: StackHome;
  let postgres: NativePostgres;
  let database: TestDatabase;
  let harness: SynthesisHarness;
  const tenantRuns = (tenantId: string) => [
    ...taskRuns('deploy', deployGoals, DEPLOY_TOOLS, { tenantId }),
    ...taskRuns('rotate', rotateGoals, ROTATE_TOOLS, { tenantId, startAt: 10 }),
  ];

  beforeAll(async () => {
    await requireTestModel();
    stackHome = await createStackHome();
    postgres = await startNativePostgres({ home: stackHome.home, port: await freePort() });
    const pool = createPool(postgres.url);
    await migrate(pool);
    database = { pool, url: postgres.url, close: () => pool.end() };
    harness = await startSynthesisHarness(database, synthesisTestConfig({ taskQueue: `pass-outage-${Date.now()}` }));
  }, 180_000);
  afterAll(async () => {
    await harness?.close();
    await database?.close();
    await postgres?.stop();
    await stackHome?.remove();
  });

  it(`rides out ${OUTAGE_MS / 1000} s of a SIGKILLed database mid-pass: it completes with the skills of an undisturbed pass, every step within the configured heartbeat timeout and an outage-sized retry policy`, async () => {
    await ingest(database, tenantRuns('clean'), 'clean');
    await ingest(database, tenantRuns('outage'), 'outage');
    const clean = await harness.runPass({ tenantId: 'clean' });
    expect(clean.record.status).toBe('completed');
    const cleanSkills = await passSkills(database.pool, 'clean');
    expect(cleanSkills.length).toBe(2);

    const handle = await startSynthesisPass(harness.client, {
      tenantId: 'outage',
      full: false,
      taskQueue: harness.config.temporal.taskQueue,
      heartbeatTimeoutSeconds: 11,
    });
    const stage = await until(
      'the pass to reach its database steps',
      async () => {
        const { stage: now } = await queryPassProgress(handle);
        return now === 'starting' ? undefined : now;
      },
      { intervalMs: 20 },
    );
    const pid = Number((await readFile(join(postgres.dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
    process.kill(pid, 'SIGKILL');
    await new Promise((done) => setTimeout(done, OUTAGE_MS));
    await until(
      'PostgreSQL to start again',
      () =>
        postgres.restart().then(
          () => true,
          () => undefined,
        ),
      { timeoutMs: 30_000, intervalMs: 500 },
    );

    const record = (await handle.result()) as PassRecord;
    expect(record, `killed at stage ${stage}`).toMatchObject({ status: 'completed' });
    const skills = await passSkills(database.pool, 'outage');
    expect(skills).toEqual(cleanSkills);
    expect(revisionGaps(skills)).toEqual([]);

    const history = await handle.fetchHistory();
    const scheduled = (history.events ?? []).flatMap((event) => {
      const attributes = event.activityTaskScheduledEventAttributes;
      return attributes ? [attributes] : [];
    });
    const seconds = (duration: temporal.api.common.v1.IRetryPolicy['initialInterval'] | null | undefined) => Number(duration?.seconds ?? 0);
    const cluster = scheduled.find((attributes) => attributes.activityType?.name === 'clusterPassRuns');
    expect(seconds(cluster?.heartbeatTimeout)).toBe(11);
    for (const attributes of scheduled) {
      const policy = attributes.retryPolicy!;
      let waited = 0;
      for (let attempt = 1, interval = seconds(policy.initialInterval); attempt < (policy.maximumAttempts ?? 0); attempt += 1) {
        waited += Math.min(interval, seconds(policy.maximumInterval) || interval);
        interval *= policy.backoffCoefficient ?? 2;
      }
      expect(waited, `${attributes.activityType?.name} retries`).toBeGreaterThanOrEqual(150);
    }
  }, 420_000);

  it('a pass that fails keeps the counts it reached and names the failure type', async () => {
    const tenantId = 'no-model';
    await ingest(database, tenantRuns(tenantId), tenantId);
    const config = synthesisTestConfig({ taskQueue: `pass-outage-no-model-${Date.now()}` });
    const broken = await startSynthesisHarness(database, {
      ...config,
      embedding: { ...config.embedding, modelDir: '/nonexistent/models' },
    });
    try {
      await broken.runPass({ tenantId }).catch(() => undefined);
    } finally {
      await broken.close();
    }
    const [pass] = await listPasses(database.pool, tenantId, 1);
    expect(pass).toMatchObject({ status: 'failed', counts: { runsSeen: 6, sequences: 6 } });
    expect(pass!.outcome).toMatch(/^failed: EmbeddingModelUnavailable: /);
  }, 120_000);
});

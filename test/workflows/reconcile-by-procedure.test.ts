import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterPassGoalsResult } from '../../activities/cluster.ts';
import type { ExtractRunsResult } from '../../activities/extract.ts';
import { createActivities } from '../../activities/index.ts';
import { listCountedRuns, listProcedures, markSuperseded, setProcedureEnabled } from '../../src/procedures/procedure-repository.ts';
import type { Procedure } from '../../src/procedures/procedure.ts';
import type { RunReport } from '../../src/runs/run-report.ts';
import { withTransaction } from '../../src/store/database.ts';
import { createSkillRepository } from '../../src/store/skill-repository.ts';
import { listPassClusters } from '../../src/synthesis/pass-repository.ts';
import { runSkillsmith } from '../support/cli.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';
import { ingest, startSynthesisHarness, synthesisTestConfig, taskRuns, type SynthesisHarness } from '../support/synthesis-harness.ts';
import { requireTestModel } from '../support/test-model.ts';

/**
 * Reconcile by procedure, the track record and the per-pass budget, on real Temporal, Postgres and
 * the test embedder with the extractive distiller — whose when_to_use is always `Use for goals
 * like "…"`, the wording that made reconcile by description absorb unrelated procedures.
 */

const START_CAR = ['lockDoors', 'pressBrakePedal', 'startEngine'];
const CAR_RENTAL = ['cars.search', 'cars.quote', 'cars.book'];
const FLIGHT = ['flights.search', 'flights.select', 'flights.book', 'mail.send'];
const DEPLOY = ['repo.clone', 'build.run', 'deploy.apply', 'deploy.status'];
const REFUND = ['orders.get', 'payments.refund', 'orders.update', 'email.send'];

const withStatus = (reports: RunReport[], status: RunReport['status']): RunReport[] => reports.map((report) => ({ ...report, status }));
const tooShort = (reports: RunReport[]): RunReport[] => reports.map((report) => ({ ...report, toolCalls: report.toolCalls.slice(0, 1) }));

describe('reconcile by procedure, a true track record, no silent cap', () => {
  let database: TestDatabase;
  let harness: SynthesisHarness;
  let budgeted: SynthesisHarness;

  beforeAll(async () => {
    await requireTestModel();
    database = await openTestDatabase();
    // Goal-only clustering keeps each task's runs in a cluster of their own, so these tests reach
    // reconcile with two clusters of one procedure (procedure-aware clustering would merge them first).
    harness = await startSynthesisHarness(
      database,
      synthesisTestConfig({ taskQueue: `reconcile-${Date.now()}`, synthesis: { clusterSimilarity: 'goal' } }),
    );
    budgeted = await startSynthesisHarness(
      database,
      synthesisTestConfig({ taskQueue: `budget-${Date.now()}`, synthesis: { maxClustersPerPass: 1, clusterSimilarity: 'goal' } }),
    );
  });

  afterAll(async () => {
    await budgeted?.close();
    await harness?.close();
    await database?.close();
  });

  it('identical procedures learned from unlike goals never fork a second live skill', async () => {
    const tenantId = 'identical';
    await ingest(
      database,
      taskRuns(
        'commute',
        ['Start the car for my morning commute', 'Get the car started so I can drive to work', 'Start my car, I am leaving for the office'],
        START_CAR,
        { tenantId },
      ),
      tenantId,
    );
    await ingest(
      database,
      taskRuns(
        'valet',
        [
          'Valet request: prepare vehicle 42 for pickup',
          'Valet: vehicle 17 must be ready at the entrance',
          'Valet desk asks to ready vehicle 8 for its owner',
        ],
        START_CAR,
        { tenantId, startAt: 10 },
      ),
      tenantId,
    );
    const { handle, record } = await harness.runPass({ tenantId });
    expect(record.counts).toMatchObject({ qualifying: 2, added: 1, updated: 1, noop: 0, pending: 0 });

    const procedures = await listProcedures(database.pool, tenantId);
    expect(procedures).toHaveLength(1);
    expect(procedures[0]).toMatchObject({ revision: 2, successCount: 6, attemptCount: 6, supersededBy: null });
    expect([...procedures[0]!.provenance.from_sessions].sort()).toEqual([
      'commute-1',
      'commute-2',
      'commute-3',
      'valet-1',
      'valet-2',
      'valet-3',
    ]);
    // The UPDATE's body was distilled from every run of the procedure, not only the newest cluster's.
    const skills = createSkillRepository({ pool: database.pool, defaultLicense: 'Apache-2.0' });
    const body = (await skills.resolve(tenantId, `${procedures[0]!.name}@2`)).body;
    expect(body).toMatch(/Learned from 6 successful runs \(100% of 6 attempts\)/);
    expect(body).toMatch(/commute|morning|office|work/i);
    expect(body).toMatch(/[Vv]alet/);

    const clusters = await listPassClusters(database.pool, tenantId, handle.workflowId);
    expect(clusters.map((cluster) => cluster.decision).sort()).toEqual(['add', 'update']);
    expect(clusters.find((cluster) => cluster.decision === 'update')!.decisionReason).toMatch(/^same procedure as .*sequence 1\.00/);
    expect(clusters.every((cluster) => cluster.skipReason === null)).toBe(true);
  });

  it('a different tool sequence for goals that read alike is a different procedure: both stay live', async () => {
    const tenantId = 'different';
    await ingest(
      database,
      taskRuns(
        'car',
        [
          'Book a rental car in Lisbon for Friday',
          'Please book a rental car in Lisbon for this Friday',
          'Book me a rental car in Lisbon on Friday',
        ],
        CAR_RENTAL,
        { tenantId },
      ),
      tenantId,
    );
    expect((await harness.runPass({ tenantId })).record.counts).toMatchObject({ added: 1 });
    await ingest(
      database,
      taskRuns(
        'flight',
        ['Book a flight to Lisbon for Friday', 'Please book a flight to Lisbon for this Friday', 'Book me a flight to Lisbon on Friday'],
        FLIGHT,
        { tenantId, startAt: 10 },
      ),
      tenantId,
    );
    const second = await harness.runPass({ tenantId });
    expect(second.record.counts).toMatchObject({ qualifying: 1, added: 1, updated: 0, noop: 0, superseded: 0 });

    const procedures = await listProcedures(database.pool, tenantId);
    expect(procedures).toHaveLength(2);
    expect(
      procedures.every((procedure) => procedure.supersededBy === null && procedure.successCount === 3 && procedure.attemptCount === 3),
    ).toBe(true);
    expect(procedures.map((procedure) => procedure.toolSequence.map((step) => step.tool)).sort()).toEqual([CAR_RENTAL, FLIGHT]);
  });

  it('a step some runs of a cluster skip is optional: one skill for goals that read unlike, and a second full pass changes nothing', async () => {
    const tenantId = 'optional-step';
    const withoutMail = REFUND.slice(0, 3);
    await ingest(
      database,
      taskRuns(
        'refund',
        [
          'Refund order A-1001 for Ana',
          'Please refund order A-1002 for Ben',
          'Refund order A-1003 for Cleo',
          'Refund order A-1004 for Dev',
        ],
        REFUND,
        { tenantId },
      ),
      tenantId,
    );
    // Unlike goals, and two of their three runs skip the confirmation mail: their cluster's consensus lacks it.
    const damaged = taskRuns(
      'damaged',
      [
        'The parcel A-2001 arrived smashed, make it right',
        'Parcel A-2002 came in pieces, make it right',
        'Parcel A-2003 arrived broken; make it right',
      ],
      REFUND,
      { tenantId, startAt: 10 },
    ).map((report, index) =>
      index < 2 ? { ...report, toolCalls: report.toolCalls.filter((call) => withoutMail.includes(call.tool)) } : report,
    );
    await ingest(database, damaged, tenantId);

    const first = await harness.runPass({ tenantId });
    expect(first.record.counts).toMatchObject({ qualifying: 2, added: 1, updated: 1, superseded: 0, pending: 0 });
    const clusters = await listPassClusters(database.pool, tenantId, first.handle.workflowId);
    expect(clusters.find((cluster) => cluster.decision === 'update')!.decisionReason).toMatch(/steps its runs show optional/);
    const learned = await listProcedures(database.pool, tenantId);
    expect(learned).toHaveLength(1);
    expect(learned[0]).toMatchObject({ revision: 2, successCount: 7, attemptCount: 7, supersededBy: null });

    // The same runs again: every cluster is a NOOP, no skill, revision or count changes.
    const again = await harness.runPass({ tenantId, full: true });
    expect(again.record.counts).toMatchObject({ qualifying: 2, added: 0, updated: 0, superseded: 0, noop: 2 });
    const state = (procedures: Procedure[]) =>
      procedures.map(({ id, name, revision, successCount, attemptCount, toolSequence }) => ({
        id,
        name,
        revision,
        successCount,
        attemptCount,
        toolSequence,
      }));
    expect(state(await listProcedures(database.pool, tenantId))).toEqual(state(learned));
  });

  it('counts exactly the runs qualification counted, each once across passes, and the body states that record', async () => {
    const tenantId = 'record';
    const goals = [
      'Deploy the billing service to staging',
      'Please deploy the billing service to the staging environment',
      'Roll out the billing service to staging',
      'Deploy billing to staging now',
    ];
    await ingest(database, taskRuns('ok', goals, DEPLOY, { tenantId }), tenantId);
    await ingest(
      database,
      withStatus(taskRuns('failed', ['Deploy the billing service to staging please'], DEPLOY, { tenantId, startAt: 10 }), 'failed'),
      tenantId,
    );
    // Completed with one step: neither a success nor an attempt for qualification, so not for the record either.
    await ingest(
      database,
      tooShort(taskRuns('short', ['Deploy the billing service to staging again'], DEPLOY, { tenantId, startAt: 20 })),
      tenantId,
    );

    const first = await harness.runPass({ tenantId });
    expect(first.record.counts).toMatchObject({ qualifying: 1, added: 1 });
    const [learned] = await listProcedures(database.pool, tenantId);
    expect(learned).toMatchObject({ successCount: 4, attemptCount: 5, revision: 1 });
    expect((await listCountedRuns(database.pool, tenantId, learned!.id)).map((run) => run.runId).sort()).toEqual([
      'failed-1',
      'ok-1',
      'ok-2',
      'ok-3',
      'ok-4',
    ]);
    const skills = createSkillRepository({ pool: database.pool, defaultLicense: 'Apache-2.0' });
    expect((await skills.resolve(tenantId, `${learned!.name}@1`)).body).toMatch(/Learned from 4 successful runs \(80% of 5 attempts\)/);

    // A full pass sees the same runs again: nothing new is counted, nothing is distilled.
    const again = await harness.runPass({ tenantId, full: true });
    expect(again.record.counts).toMatchObject({ qualifying: 1, noop: 1, added: 0, updated: 0 });
    expect((await listProcedures(database.pool, tenantId))[0]).toMatchObject({ successCount: 4, attemptCount: 5, revision: 1 });

    // New runs of the same procedure: counted on top, once.
    await ingest(
      database,
      taskRuns(
        'more',
        [
          'Deploy the ledger service to staging',
          'Please roll out the ledger service to staging',
          'Deploy ledger to the staging environment',
        ],
        DEPLOY,
        { tenantId, startAt: 30 },
      ),
      tenantId,
    );
    const update = await harness.runPass({ tenantId });
    expect(update.record.counts).toMatchObject({ qualifying: 1, updated: 1 });
    const [updated] = await listProcedures(database.pool, tenantId);
    expect(updated).toMatchObject({ successCount: 7, attemptCount: 8, revision: 2 });
    expect((await skills.resolve(tenantId, `${updated!.name}@2`)).body).toMatch(/Learned from 7 successful runs \(88% of 8 attempts\)/);
    const full = await harness.runPass({ tenantId, full: true });
    expect(full.record.counts).toMatchObject({ updated: 0, added: 0 });
    expect((await listProcedures(database.pool, tenantId))[0]).toMatchObject({ successCount: 7, attemptCount: 8, revision: 2 });
  });

  it('the extractive distiller makes no LLM call, so one pass processes every qualifying cluster whatever the budget', async () => {
    const tenantId = 'budget';
    await ingest(
      database,
      taskRuns(
        'deploy',
        [
          'Deploy the billing service to staging',
          'Please deploy the billing service to staging',
          'Roll out the billing service to staging',
          'Deploy billing to staging',
          'Deploy the billing service to the staging cluster',
        ],
        DEPLOY,
        { tenantId },
      ),
      tenantId,
    );
    await ingest(
      database,
      taskRuns(
        'car',
        [
          'Book a rental car in Lisbon for Friday',
          'Please book a rental car in Lisbon for Friday',
          'Book me a rental car in Lisbon on Friday',
          'Reserve a rental car in Lisbon for Friday',
        ],
        CAR_RENTAL,
        { tenantId, startAt: 10 },
      ),
      tenantId,
    );
    await ingest(
      database,
      taskRuns(
        'start',
        ['Start the car for my morning commute', 'Get the car started so I can drive to work', 'Start my car, I am leaving for the office'],
        START_CAR,
        { tenantId, startAt: 20 },
      ),
      tenantId,
    );

    // maxClustersPerPass is 1: it caps LLM calls (test/workflows/synthesis-pass.test.ts drains a backlog under it).
    const first = await budgeted.runPass({ tenantId });
    expect(first.record).toMatchObject({ status: 'completed', outcome: null });
    expect(first.record.counts).toMatchObject({ qualifying: 3, added: 3, pending: 0, carried: 0 });
    expect((await first.handle.describe()).memo).toMatchObject({ pending: 0, added: 3 });
    const shown = JSON.parse(
      (await runSkillsmith(['passes', 'show', first.handle.workflowId, '--json', '--tenant', tenantId], { DATABASE_URL: database.url }))
        .stdout,
    );
    expect(shown.clusters.map((cluster: { outcome: string }) => cluster.outcome)).toEqual(['added', 'added', 'added']);

    const second = await budgeted.runPass({ tenantId });
    expect(second.record.counts).toMatchObject({ carried: 0, added: 0, pending: 0 });
    expect((await listProcedures(database.pool, tenantId)).map((procedure) => procedure.toolSequence.length).sort()).toEqual([3, 3, 4]);
  });

  it('skills list and show tell a superseded and a disabled skill from an active one', async () => {
    const tenantId = 'budget';
    const [first, second, third] = await listProcedures(database.pool, tenantId);
    await withTransaction(database.pool, (client) => markSuperseded(client, tenantId, first!.id, second!.id));
    await setProcedureEnabled(database.pool, tenantId, third!.name, false);
    const env = { DATABASE_URL: database.url };
    const listed = JSON.parse((await runSkillsmith(['skills', 'list', '--json', '--tenant', tenantId], env)).stdout) as {
      skills: Array<{ name: string; status: string; state: string; procedure: { supersededBy: string | null; enabled: boolean } | null }>;
    };
    const byName = new Map(listed.skills.map((skill) => [skill.name, skill]));
    expect(byName.get(first!.name)).toMatchObject({ status: 'active', state: 'superseded', procedure: { supersededBy: second!.name } });
    expect(byName.get(second!.name)).toMatchObject({ status: 'active', state: 'active', procedure: { supersededBy: null, enabled: true } });
    expect(byName.get(third!.name)).toMatchObject({ status: 'active', state: 'disabled', procedure: { enabled: false } });
    const shown = await runSkillsmith(['skills', 'show', first!.name, '--tenant', tenantId], env);
    expect(shown.stdout).toContain(`superseded by ${second!.name}`);
    expect(shown.stdout).toMatch(/track record: \d+\/\d+ runs succeeded/);
  });

  it('the steps under their older activity types (clusterPassGoals, reconcileAndInstall) decide a cluster distilled before reconcile ran, then install it', async () => {
    // Workflows started before RECONCILE_FIRST_PATCH distilled first, before SETTLE_IN_RECONCILE_PATCH clustered,
    // settled and selected in `clusterPassGoals`, and before INSTALL_STEP_NAMED_PATCH called the install step
    // `reconcileAndInstall`: the worker still serves those types for them.
    const tenantId = 'legacy-install';
    await ingest(
      database,
      taskRuns(
        'legacy',
        ['Rent a car in Lisbon for Friday', 'Rent a car in Porto for Friday', 'Rent a car in Faro for Friday'],
        CAR_RENTAL,
        {
          tenantId,
        },
      ),
      tenantId,
    );
    const activities = createActivities(harness.services);
    const environment = new MockActivityEnvironment();
    const passId = `synthesis/${tenantId}/legacy`;
    await environment.run(activities.beginPass, { tenantId, passId, workflowRunId: 'legacy-run', full: true });
    const extracted: ExtractRunsResult = await environment.run(activities.extractRuns, { tenantId, since: null });
    await environment.run(activities.embedGoals, { tenantId });
    const clustered: ClusterPassGoalsResult = await environment.run(activities.clusterPassGoals, {
      tenantId,
      passId,
      since: extracted.since,
      until: extracted.until,
      full: true,
    });
    expect(clustered.clusterKeys).toHaveLength(1);
    const cluster = { tenantId, passId, clusterKey: clustered.clusterKeys[0]! };
    expect(await environment.run(activities.distillCluster, cluster)).toMatchObject({ status: 'distilled' });

    await expect(environment.run(activities.installCluster, cluster)).rejects.toThrow(/was not reconciled before its install/);
    expect(await listProcedures(database.pool, tenantId)).toEqual([]);

    const installed = await environment.run(activities.reconcileAndInstall, cluster);
    expect(installed).toMatchObject({ decision: 'add', revision: 1 });
    const [procedure] = await listProcedures(database.pool, tenantId);
    expect(procedure).toMatchObject({
      successCount: 3,
      attemptCount: 3,
      toolSequence: CAR_RENTAL.map((tool) => expect.objectContaining({ tool })),
    });
    // A retried activity writes nothing twice.
    expect(await environment.run(activities.reconcileAndInstall, cluster)).toEqual(installed);
    expect(await listProcedures(database.pool, tenantId)).toHaveLength(1);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/app/config.ts';
import { createLogger } from '../../src/logging/logger.ts';
import { countProcedureRuns, findProcedureByName } from '../../src/procedures/procedure-repository.ts';
import { generateRuns } from '../../src/demo/synthetic-runs.ts';
import { upsertRuns } from '../../src/runs/run-repository.ts';
import { updateTrackRecords, type TrackedRun } from '../../src/review/track-record.ts';
import { withTransaction } from '../../src/store/database.ts';
import { listSkillEvents } from '../../src/store/skill-event-repository.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';
import { insertTestProcedure } from '../support/procedures.ts';

describe('the track record of a review batch', () => {
  let database: TestDatabase;
  const tenantId = 'track-batch';
  const name = 'rotate-key';

  beforeAll(async () => {
    database = await openTestDatabase();
    const ids = ['learned', 'r1', 'r2', 'r3', 'r4', 'r5'];
    await upsertRuns(
      database.pool,
      tenantId,
      generateRuns({ seed: 5, runs: ids.length, tenantId }).map((run, index) => ({ ...run.report, runId: ids[index]! })),
    );
    const stored = await insertTestProcedure(database.pool, tenantId, name);
    // One run the procedure was learned from: already in its record, so only the observed window counts it.
    await withTransaction(database.pool, (client) =>
      countProcedureRuns(client, tenantId, stored.id, 'pass-1', [{ runId: 'learned', success: true }], 'test-model'),
    );
  });
  afterAll(async () => {
    await database?.close();
  });

  it('counts a batch in run order as one run at a time would: the disabling point mid-batch, a learned run only in the window, a repeat counting nothing', async () => {
    const synthesis = { ...loadConfig({}).synthesis, minOccurrences: 3, minSuccessRate: 0.8 };
    const dependencies = { pool: database.pool, recall: async () => [], synthesis, logger: createLogger('silent') };
    const pinned = (runId: string, status: TrackedRun['status']): TrackedRun => ({
      runId,
      goal: 'rotate the payments key',
      status,
      skillPins: [{ name, revision: 1, contentSha256: 'a'.repeat(64) }],
    });
    const runs = [
      pinned('learned', 'completed'),
      pinned('r1', 'failed'),
      pinned('r2', 'failed'),
      pinned('r3', 'completed'),
      pinned('r4', 'failed'),
    ];
    const before = (await findProcedureByName(database.pool, tenantId, name))!;

    const updates = await updateTrackRecords(dependencies, tenantId, runs);
    expect(updates.map((update) => update.observed)).toEqual(runs.map(() => [{ name, via: 'pinned' }]));
    // 1 of 3 observed after r2: disabled there, once; r3 and r4 are still observed.
    expect(updates.map((update) => update.disabled)).toEqual([[], [], [name], [], []]);
    const after = (await findProcedureByName(database.pool, tenantId, name))!;
    expect(after).toMatchObject({
      enabled: false,
      attemptCount: before.attemptCount + 4,
      successCount: before.successCount + 1,
      observedAttempts: 5,
      observedSuccesses: 2,
    });
    expect(after.lastUsedAt).not.toBeNull();
    const events = await listSkillEvents(database.pool, tenantId, { kind: 'procedure.disabled' });
    expect(events).toEqual([
      expect.objectContaining({ name, runId: 'r2', detail: expect.objectContaining({ observedAttempts: 3, observedSuccesses: 1 }) }),
    ]);

    // A retried batch (and a run listed twice) counts no run again.
    const repeated = await updateTrackRecords(dependencies, tenantId, [...runs, pinned('r5', 'completed'), pinned('r5', 'completed')]);
    expect(repeated.map((update) => update.observed)).toEqual([[], [], [], [], [], [{ name, via: 'pinned' }], []]);
    expect(await findProcedureByName(database.pool, tenantId, name)).toMatchObject({
      attemptCount: before.attemptCount + 5,
      successCount: before.successCount + 2,
      observedAttempts: 6,
      observedSuccesses: 3,
    });
  });
});

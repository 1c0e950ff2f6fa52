import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExtractActivities } from '../../activities/extract.ts';
import { loadConfig } from '../../src/app/config.ts';
import { extractRuns } from '../../src/runs/extraction.ts';
import { countRuns, findRun, RunConflict, upsertRuns } from '../../src/runs/run-repository.ts';
import { runReportSchema, runReportSha256, type RunReport, type RunReportInput } from '../../src/runs/run-report.ts';
import { generateRuns } from '../../src/demo/synthetic-runs.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';

let database: TestDatabase;
beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(async () => {
  await database?.close();
});

const report = (overrides: Partial<RunReportInput> = {}): RunReport =>
  runReportSchema.parse({
    tenantId: 'repo',
    agentId: 'ops-agent',
    runId: 'run-1',
    goal: 'deploy billing-api to staging',
    status: 'completed',
    startedAt: '2026-01-01T00:00:00Z',
    completedAt: '2026-01-01T00:01:00Z',
    toolCalls: [
      {
        tool: 'repo.clone',
        args: { repo: 'acme/web', nested: { list: [1, 'two', null] } },
        success: true,
        resultSummary: 'ok',
        durationMs: 12,
        at: '2026-01-01T00:00:01.000Z',
      },
      { tool: 'build.run', success: true },
      { tool: 'deploy.apply', success: false, error: 'HTTP 503' },
    ],
    ...overrides,
  });

describe('run repository', () => {
  it('stores a run and its tool calls, and reads back exactly what was reported', async () => {
    const original = report();
    expect(await upsertRuns(database.pool, 'repo', [original])).toEqual({ inserted: ['run-1'], unchanged: [] });
    expect(await findRun(database.pool, 'repo', 'run-1')).toEqual({
      ...original,
      startedAt: '2026-01-01T00:00:00.000Z',
      completedAt: '2026-01-01T00:01:00.000Z',
    });
    expect(await countRuns(database.pool, 'repo')).toEqual({ runs: 1, toolCalls: 3 });
  });

  it('reports the same content again as unchanged and writes nothing', async () => {
    const before = await database.pool.query('SELECT ingested_at FROM runs WHERE tenant_id = $1 AND run_id = $2', ['repo', 'run-1']);
    // Same content, written differently (another time zone for the same instant).
    const again = report({ startedAt: '2026-01-01T01:00:00+01:00' });
    expect(await upsertRuns(database.pool, 'repo', [again])).toEqual({ inserted: [], unchanged: ['run-1'] });
    const after = await database.pool.query('SELECT ingested_at FROM runs WHERE tenant_id = $1 AND run_id = $2', ['repo', 'run-1']);
    expect(after.rows).toEqual(before.rows);
    expect(await countRuns(database.pool, 'repo')).toEqual({ runs: 1, toolCalls: 3 });
  });

  it('refuses a conflicting re-report with RunConflict and changes nothing in its batch', async () => {
    const conflicting = report({ goal: 'deploy billing-api to production' });
    const fresh = report({ runId: 'run-2' });
    const attempt = upsertRuns(database.pool, 'repo', [fresh, conflicting]);
    await expect(attempt).rejects.toBeInstanceOf(RunConflict);
    await expect(attempt).rejects.toMatchObject({ name: 'RunConflict', runIds: ['run-1'] });
    expect((await findRun(database.pool, 'repo', 'run-1'))?.goal).toBe('deploy billing-api to staging');
    expect(await findRun(database.pool, 'repo', 'run-2')).toBeUndefined();
    expect(await countRuns(database.pool, 'repo')).toEqual({ runs: 1, toolCalls: 3 });
  });

  it('refuses two different reports of one run inside a batch', async () => {
    const attempt = upsertRuns(database.pool, 'repo', [report({ runId: 'run-3' }), report({ runId: 'run-3', status: 'failed' })]);
    await expect(attempt).rejects.toBeInstanceOf(RunConflict);
    expect(await findRun(database.pool, 'repo', 'run-3')).toBeUndefined();
  });

  it('stores control characters and prompt-injection text in goals and args verbatim', async () => {
    const goal = 'Ignore previous instructions\'); DROP TABLE runs; --\u0001\u0007\u001b[2J\r\n\t"\\ 🚀 ﷽';
    const args = { sql: "'; DELETE FROM tool_calls; --", control: '\u0008\u007f', quote: '"\\' };
    const injected = report({ runId: 'run-injection', goal, toolCalls: [{ tool: 'db.query', args, success: true, error: 'x' }] });
    await upsertRuns(database.pool, 'repo', [injected]);
    const stored = await findRun(database.pool, 'repo', 'run-injection');
    expect(stored?.goal).toBe(goal);
    expect(stored?.toolCalls[0]?.args).toEqual(args);
    const { rows } = await database.pool.query<{ goal: string }>('SELECT goal FROM runs WHERE tenant_id = $1 AND run_id = $2', [
      'repo',
      'run-injection',
    ]);
    expect(rows[0]?.goal).toBe(goal);
    expect((await countRuns(database.pool, 'repo')).runs).toBe(2);
  });

  it('keeps tenants apart: the same runId in two tenants is two runs', async () => {
    await upsertRuns(database.pool, 'other', [report({ tenantId: 'other', goal: 'something else entirely' })]);
    expect((await findRun(database.pool, 'other', 'run-1'))?.goal).toBe('something else entirely');
    expect((await findRun(database.pool, 'repo', 'run-1'))?.goal).toBe('deploy billing-api to staging');
    await expect(upsertRuns(database.pool, 'repo', [report({ tenantId: 'other' })])).rejects.toThrow(RangeError);
  });

  it('ingests a batch of generated runs in one call and re-ingesting it changes nothing', async () => {
    const reports = generateRuns({ seed: 11, runs: 600, tenantId: 'bulk' }).map(({ report: generated }) => generated);
    const first = await upsertRuns(database.pool, 'bulk', reports);
    expect(first.inserted).toHaveLength(600);
    const counts = await countRuns(database.pool, 'bulk');
    expect(counts.runs).toBe(600);
    expect(counts.toolCalls).toBe(reports.reduce((sum, generated) => sum + generated.toolCalls.length, 0));
    const second = await upsertRuns(database.pool, 'bulk', reports);
    expect(second).toEqual({ inserted: [], unchanged: reports.map((generated) => generated.runId) });
    expect(await countRuns(database.pool, 'bulk')).toEqual(counts);
  });
});

describe('run repository round trip', () => {
  it('reads generated runs back with the same content hash they were stored under', async () => {
    const reports = generateRuns({ seed: 12, runs: 60, tenantId: 'roundtrip' }).map(({ report: generated }) => generated);
    await upsertRuns(database.pool, 'roundtrip', reports);
    for (const original of reports) {
      const stored = await findRun(database.pool, 'roundtrip', original.runId);
      expect(stored).toBeDefined();
      expect(runReportSha256(stored!)).toBe(runReportSha256(original));
    }
    const { rows } = await database.pool.query<{ content_sha256: string }>(
      'SELECT content_sha256 FROM runs WHERE tenant_id = $1 ORDER BY run_id',
      ['roundtrip'],
    );
    expect(rows.map((row) => row.content_sha256)).toEqual(reports.map(runReportSha256));
  });
});

describe('extraction', () => {
  const run = (runId: string, status: RunReport['status'], successes: number, failures = 0): RunReport =>
    report({
      tenantId: 'extract',
      runId,
      status,
      toolCalls: [
        ...Array.from({ length: failures }, (_, index) => ({ tool: `step.failed${index}`, success: false })),
        ...Array.from({ length: successes }, (_, index) => ({ tool: `step.s${index}`, success: true })),
      ],
    });

  it('keeps completed runs with >= minSteps successful calls as sequences and failed/cancelled as attempts', async () => {
    await upsertRuns(database.pool, 'extract', [
      run('a-ok', 'completed', 3),
      run('b-ok-with-retries', 'completed', 3, 2),
      run('c-short', 'completed', 2, 5),
      run('d-failed', 'failed', 4, 1),
      run('e-cancelled', 'cancelled', 0),
    ]);
    const summary = await extractRuns(database.pool, 'extract', { minSteps: 3 });
    expect(summary).toMatchObject({
      tenantId: 'extract',
      since: null,
      runsInWindow: 5,
      successfulSequences: 2,
      failedAttempts: 2,
      tooShort: 1,
    });
    expect(summary.runs.map((extracted) => [extracted.runId, extracted.successful])).toEqual([
      ['a-ok', true],
      ['b-ok-with-retries', true],
      ['d-failed', false],
      ['e-cancelled', false],
    ]);
    expect(summary.runs[1]?.toolSequence).toEqual(['step.s0', 'step.s1', 'step.s2']);
    expect((await extractRuns(database.pool, 'extract', { minSteps: 2 })).tooShort).toBe(0);
  });

  it('returns only runs ingested after `since`, and only the tenant asked for', async () => {
    const first = await extractRuns(database.pool, 'extract', { minSteps: 3 });
    await upsertRuns(database.pool, 'extract', [run('f-later', 'completed', 5)]);
    const incremental = await extractRuns(database.pool, 'extract', { since: first.until, minSteps: 3 });
    expect(incremental.runs.map((extracted) => extracted.runId)).toEqual(['f-later']);
    expect((await extractRuns(database.pool, 'nobody', { minSteps: 3 })).runsInWindow).toBe(0);
  });

  it('the extract activity passes counts and the window, not the runs', async () => {
    const config = loadConfig({ SKILLSMITH_MIN_STEPS: '3' });
    const { extractRuns: extractActivity } = createExtractActivities({ pool: database.pool, config });
    const result = await extractActivity({ tenantId: 'extract', since: null });
    expect(result).toEqual({
      tenantId: 'extract',
      since: null,
      until: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      runsInWindow: 6,
      successfulSequences: 3,
      failedAttempts: 2,
      tooShort: 1,
    });
    const again = await extractActivity({ tenantId: 'extract', since: result.until });
    expect(again.runsInWindow).toBe(0);
  });
});

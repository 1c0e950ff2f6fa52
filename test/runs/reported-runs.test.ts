import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRunReport, type RunReport } from '../../src/runs/run-report.ts';
import { recordReportedRuns, recordValidatedRuns } from '../../src/runs/reported-runs.ts';
import { countRuns } from '../../src/runs/run-repository.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';

/**
 * The HTTP intake stores reports it validated already (recordValidatedRuns, no second parse):
 * each report's outcome must be what the signal path's recordReportedRuns gives the same reports.
 */

function validated(runId: string, overrides: Record<string, unknown> = {}): RunReport {
  const parsed = parseRunReport({
    tenantId: 'reported',
    agentId: 'agent-1',
    runId,
    goal: 'Rotate the payments key',
    status: 'completed',
    startedAt: '2026-11-01T10:00:00Z',
    completedAt: '2026-11-01T10:01:00Z',
    toolCalls: [{ tool: 'keys.rotate', success: true, args: { service: 'payments' } }],
    ...overrides,
  });
  if (!parsed.success) throw new Error(JSON.stringify(parsed.issues));
  return parsed.report;
}

const outcomes = (recorded: Awaited<ReturnType<typeof recordValidatedRuns>>) =>
  recorded.map((run) => ({ runId: run.runId, outcome: run.outcome, ...('reason' in run ? { reason: run.reason } : {}) }));

describe('recording validated run reports (the HTTP intake)', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await openTestDatabase();
  });
  afterAll(async () => {
    await database.close();
  });

  it('gives each report its own outcome — inserted, unchanged, conflict, another tenant — storing only the good ones', async () => {
    await recordValidatedRuns(database.pool, 'reported', [validated('run-1')]);
    const recorded = await recordValidatedRuns(database.pool, 'reported', [
      validated('run-2'),
      validated('run-1'),
      validated('run-1b', { goal: 'Another goal' }),
      validated('run-3', { tenantId: 'elsewhere' }),
      validated('run-1', { goal: 'Changed content' }),
    ]);
    // run-1 twice: the first (as stored) is unchanged, the later other content alone a conflict.
    expect(outcomes(recorded).map(({ runId, outcome }) => [runId, outcome])).toEqual([
      ['run-2', 'inserted'],
      ['run-1', 'unchanged'],
      ['run-1b', 'inserted'],
      ['run-3', 'invalid'],
      ['run-1', 'conflict'],
    ]);
    expect(outcomes(recorded)[3]!.reason).toMatch(/tenantId elsewhere does not match the intake's tenant reported/);
    expect(await countRuns(database.pool, 'reported')).toEqual({ runs: 3, toolCalls: 3 });
    expect(await countRuns(database.pool, 'elsewhere')).toEqual({ runs: 0, toolCalls: 0 });
  });

  it('answers exactly what the signal path (which parses each report again) answers for the same reports', async () => {
    const reports = [validated('same-1'), validated('same-2', { tenantId: 'elsewhere' }), validated('same-1')];
    const fromApi = outcomes(await recordValidatedRuns(database.pool, 'reported', reports));
    // The same reports again through the parsing path: everything stored is now unchanged.
    const fromSignal = outcomes(await recordReportedRuns(database.pool, 'reported', reports));
    // The second same-1 is stored after the first: unchanged.
    expect(fromApi.map(({ outcome }) => outcome)).toEqual(['inserted', 'invalid', 'unchanged']);
    expect(fromSignal).toEqual(fromApi.map((run) => (run.outcome === 'inserted' ? { ...run, outcome: 'unchanged' } : run)));
  });
});

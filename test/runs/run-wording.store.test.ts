import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunReportInput } from '../../src/runs/run-report.ts';
import { selectRunWording, upsertRuns } from '../../src/runs/run-repository.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';
import { testRun } from '../support/run-reports.ts';

const run = (runId: string, goal: string, toolCalls: RunReportInput['toolCalls'], tenantId = 'acme') =>
  testRun(tenantId, runId, goal, toolCalls);

describe('what the stated-count split reads of a run (selectRunWording)', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await openTestDatabase();
    await upsertRuns(database.pool, 'acme', [
      run('r1', 'Compare the policies of two hotels in Paris', [
        { tool: 'Search_Hotels', args: { dest_id: '-1456928', arrival_date: '2026-01-02' }, success: true },
        { tool: 'Get_Hotel_Policies', args: { hotel_id: 1 }, success: false, error: 'timeout' },
        { tool: 'Get_Hotel_Policies', args: { hotel_id: 1 }, success: true },
        { tool: 'Get_Hotel_Policies', success: true },
      ]),
      run('r2', 'Nothing to do', []),
    ]);
    await upsertRuns(database.pool, 'globex', [
      run('r1', 'Another tenant’s run', [{ tool: 'x.y', args: { a: 1 }, success: true }], 'globex'),
    ]);
  });
  afterAll(async () => {
    await database?.close();
  });

  it('gives each run’s goal and its successful calls in order with their argument names; other tenants’ and unknown runs are absent', async () => {
    const wording = await selectRunWording(database.pool, 'acme', ['r1', 'r2', 'missing']);
    expect(wording).toEqual(
      new Map([
        [
          'r1',
          {
            goal: 'Compare the policies of two hotels in Paris',
            calls: [
              { tool: 'Search_Hotels', argumentNames: ['arrival_date', 'dest_id'] },
              { tool: 'Get_Hotel_Policies', argumentNames: ['hotel_id'] },
              { tool: 'Get_Hotel_Policies', argumentNames: [] },
            ],
          },
        ],
        ['r2', { goal: 'Nothing to do', calls: [] }],
      ]),
    );
  });
});

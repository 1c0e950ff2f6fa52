import { runReportSchema, type RunReport, type RunReportInput, type RunStatus } from '../../src/runs/run-report.ts';

/** A run report of the tests' agent, started and finished at fixed times: the given goal and calls. */
export function testRun(
  tenantId: string,
  runId: string,
  goal: string,
  toolCalls: RunReportInput['toolCalls'],
  status: RunStatus = 'completed',
): RunReport {
  return runReportSchema.parse({
    tenantId,
    agentId: 'agent',
    runId,
    goal,
    status,
    startedAt: '2026-01-01T00:00:00Z',
    completedAt: '2026-01-01T00:01:00Z',
    toolCalls,
  });
}

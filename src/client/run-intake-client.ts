import type { Client } from '@temporalio/client';
import { parseRunReport, type RunReport, type RunReportIssue } from '../runs/run-report.ts';
import { INTAKE_WORKFLOW_TYPE, intakeWorkflowId, RUN_COMPLETED_SIGNAL, type RunIntakeInput } from './intake-contract.ts';
import { SkillsmithError } from '../skillsmith-error.ts';

/**
 * How agent runtimes report a finished run: `reportRunCompleted(client, report)` validates the
 * report against the run report contract and signals the agent's intake workflow, starting it
 * when it is not running (signalWithStart).
 */

/** Temporal refuses payloads over 2 MiB; keep headroom for the signal's envelope. */
export const MAX_REPORT_PAYLOAD_BYTES = 2 * 1024 * 1024 - 64 * 1024;

export class RunReportInvalid extends SkillsmithError {
  static override readonly code = 'RunReportInvalid';
  static override readonly httpStatus = 400;
  constructor(readonly issues: RunReportIssue[]) {
    super(`invalid run report: ${issues.map((issue) => `${issue.path}: ${issue.reason}`).join('; ')}`);
  }
}

/** Refused whole, never truncated: a report that big must be split or slimmed by its sender. */
export class RunReportTooLarge extends SkillsmithError {
  static override readonly code = 'RunReportTooLarge';
  static override readonly httpStatus = 413;
  constructor(
    readonly runId: string,
    readonly bytes: number,
  ) {
    super(
      `run report ${JSON.stringify(runId)} is ${bytes} bytes as JSON, over the ${MAX_REPORT_PAYLOAD_BYTES}-byte limit of a Temporal payload; ` +
        'shorten its tool call args or result summaries (nothing was sent)',
    );
  }
}

export interface ReportOptions {
  taskQueue: string;
}

export async function reportRunCompleted(
  client: Client,
  report: unknown,
  options: ReportOptions,
): Promise<{ workflowId: string; report: RunReport }> {
  const parsed = parseRunReport(report);
  if (!parsed.success) throw new RunReportInvalid(parsed.issues);
  const valid = parsed.report;
  const bytes = Buffer.byteLength(JSON.stringify(valid), 'utf8');
  if (bytes > MAX_REPORT_PAYLOAD_BYTES) throw new RunReportTooLarge(valid.runId, bytes);
  const workflowId = intakeWorkflowId(valid.tenantId, valid.agentId);
  const input: RunIntakeInput = { tenantId: valid.tenantId, agentId: valid.agentId };
  await client.workflow.signalWithStart(INTAKE_WORKFLOW_TYPE, {
    workflowId,
    taskQueue: options.taskQueue,
    args: [input],
    signal: RUN_COMPLETED_SIGNAL,
    signalArgs: [valid],
    staticSummary: `run intake of agent ${valid.agentId} (tenant ${valid.tenantId})`,
  });
  return { workflowId, report: valid };
}

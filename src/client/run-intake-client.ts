import type { Client } from '@temporalio/client';
import { parseRunReport, type RunReport, type RunReportIssue } from '../runs/run-report.ts';
import {
  INTAKE_WORKFLOW_TYPE,
  intakeWorkflowId,
  MAX_REPORT_PAYLOAD_BYTES,
  RUN_COMPLETED_SIGNAL,
  RUN_STORED_SIGNAL,
  RUNS_STORED_SIGNAL,
  type RunIntakeInput,
  type StoredRunReference,
  type StoredRunReferences,
} from '../contracts/intake-contract.ts';
import { SkillsmithError } from '../errors/skillsmith-error.ts';

export { MAX_REPORT_PAYLOAD_BYTES };

/**
 * How agent runtimes report a finished run: `reportRunCompleted(client, report)` validates the
 * report against the run report contract and signals the agent's intake workflow, starting it
 * when it is not running (signalWithStart).
 */

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
  /** The limit, in the details too, so a sender can act on it without parsing the message. */
  readonly limitBytes = MAX_REPORT_PAYLOAD_BYTES;
  constructor(
    readonly runId: string,
    readonly bytes: number,
  ) {
    super(
      `run report ${JSON.stringify(runId)} is ${bytes} bytes as JSON, over the ${MAX_REPORT_PAYLOAD_BYTES}-byte limit of a Temporal payload; ` +
        'shorten its tool call args or result summaries (nothing was sent or recorded)',
    );
  }
}

export interface ReportOptions {
  taskQueue: string;
}

/**
 * What every door of the intake takes: a valid report within the payload limit, so whatever is
 * accepted can also travel through Temporal. Throws RunReportInvalid or RunReportTooLarge.
 */
export function admitRunReport(report: unknown): RunReport {
  const parsed = parseRunReport(report);
  if (!parsed.success) throw new RunReportInvalid(parsed.issues);
  const bytes = Buffer.byteLength(JSON.stringify(parsed.report), 'utf8');
  if (bytes > MAX_REPORT_PAYLOAD_BYTES) throw new RunReportTooLarge(parsed.report.runId, bytes);
  return parsed.report;
}

export async function reportRunCompleted(
  client: Client,
  report: unknown,
  options: ReportOptions,
): Promise<{ workflowId: string; report: RunReport }> {
  const valid = admitRunReport(report);
  const workflowId = await signalIntake(client, valid, { name: RUN_COMPLETED_SIGNAL, arg: valid }, options);
  return { workflowId, report: valid };
}

/** Signals the agent's intake workflow, starting it when it is not running (signalWithStart); returns its id. */
export async function signalIntake(
  client: Client,
  { tenantId, agentId }: { tenantId: string; agentId: string },
  signal:
    | { name: typeof RUN_COMPLETED_SIGNAL; arg: RunReport }
    | { name: typeof RUN_STORED_SIGNAL; arg: StoredRunReference }
    | { name: typeof RUNS_STORED_SIGNAL; arg: StoredRunReferences },
  options: ReportOptions,
): Promise<string> {
  const workflowId = intakeWorkflowId(tenantId, agentId);
  const input: RunIntakeInput = { tenantId, agentId };
  await client.workflow.signalWithStart(INTAKE_WORKFLOW_TYPE, {
    workflowId,
    taskQueue: options.taskQueue,
    args: [input],
    signal: signal.name,
    signalArgs: [signal.arg],
    staticSummary: `run intake of agent ${agentId} (tenant ${tenantId})`,
  });
  return workflowId;
}

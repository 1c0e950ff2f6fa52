import { createHash } from 'node:crypto';
import { z } from 'zod';
import { tenantIdSchema } from '../input/tenant-id.ts';
import { jsonDepthExcess, storableJsonObject, storableString } from '../input/storable-text.ts';
import { quoteRefused, toolNameSchema } from '../input/tool-name.ts';

/**
 * The run report contract (DESIGN.md, "Contracts"): what an agent runtime reports when a run
 * finishes. One schema for every entry point — the JSONL ingest CLI today, the Temporal
 * intake signal and the HTTP API later. Objects are strict: an unknown field is an error,
 * never silently dropped.
 */

export const DEFAULT_TENANT_ID = 'default';
export const MAX_TOOL_CALLS = 500;
export const MAX_GOAL_CHARS = 2000;
export const MAX_RESULT_SUMMARY_CHARS = 4000;
export const MAX_ARGS_BYTES = 64 * 1024;
/** Postgres rejects very deep JSON documents (stack depth); refuse them up front. */
export const MAX_ARGS_DEPTH = 100;
/** A report's own nesting (toolCalls → [i] → args) plus the args' limit. */
export const MAX_REPORT_DEPTH = MAX_ARGS_DEPTH + 3;

const isoTimestamp = () =>
  z.iso.datetime({ offset: true, message: 'must be an ISO-8601 timestamp with a time zone (e.g. 2026-01-31T12:00:00Z)' });

const toolArgsSchema = storableJsonObject(MAX_ARGS_DEPTH, MAX_ARGS_BYTES);

export const toolCallSchema = z.strictObject({
  tool: toolNameSchema,
  args: toolArgsSchema.optional(),
  resultSummary: storableString().max(MAX_RESULT_SUMMARY_CHARS).optional(),
  success: z.boolean(),
  error: storableString().optional(),
  durationMs: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
  at: isoTimestamp().optional(),
});

export const skillPinSchema = z.strictObject({
  name: storableString().min(1).max(128),
  /** Platform-assigned revision; MCP-sourced skills pin revision 0. */
  revision: z.number().int().min(0),
  contentSha256: z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex characters'),
});

export const runReportSchema = z
  .strictObject({
    tenantId: tenantIdSchema.default(DEFAULT_TENANT_ID),
    agentId: storableString().min(1).max(128),
    runId: storableString().min(1).max(128),
    sessionId: storableString().min(1).max(128).optional(),
    goal: storableString().min(1).max(MAX_GOAL_CHARS),
    status: z.enum(['completed', 'failed', 'cancelled']),
    startedAt: isoTimestamp(),
    completedAt: isoTimestamp(),
    originTrust: z.enum(['operator', 'user', 'untrusted']).default('user'),
    skillPins: z.array(skillPinSchema).default([]),
    toolCalls: z.array(toolCallSchema).max(MAX_TOOL_CALLS),
  })
  .superRefine((report, context) => {
    if (Date.parse(report.completedAt) < Date.parse(report.startedAt)) {
      context.addIssue({ code: 'custom', path: ['completedAt'], message: 'is earlier than startedAt' });
    }
  })
  .transform((report) => ({ ...report, sessionId: report.sessionId ?? report.runId }));

/** A validated run report with every default applied (sessionId, tenantId, originTrust, skillPins). */
export type RunReport = z.infer<typeof runReportSchema>;
/** What a runtime may send: the schema's input, with its optional fields. */
export type RunReportInput = z.input<typeof runReportSchema>;
export type ToolCall = RunReport['toolCalls'][number];
export type SkillPin = RunReport['skillPins'][number];
export type RunStatus = RunReport['status'];

export interface RunReportIssue {
  /** A readable field path: `toolCalls[3].tool`, or `(report)` for the whole value. */
  path: string;
  reason: string;
  /** The refused value, JSON-quoted and cut at 200 characters; absent when the field is missing. */
  value?: string;
}

export function formatIssuePath(path: ReadonlyArray<PropertyKey>): string {
  let formatted = '';
  for (const segment of path) {
    if (typeof segment === 'number') formatted += `[${segment}]`;
    else formatted += formatted === '' ? String(segment) : `.${String(segment)}`;
  }
  return formatted === '' ? '(report)' : formatted;
}

function describeIssue(issue: z.core.$ZodIssue): RunReportIssue[] {
  const path = formatIssuePath(issue.path);
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => ({
      path: path === '(report)' ? key : `${path}.${key}`,
      reason: 'unknown field',
      value: quoteRefused(key),
    }));
  }
  if (issue.code === 'invalid_type' && issue.input === undefined) {
    return [{ path, reason: `is required (expected ${issue.expected})` }];
  }
  // Arrays and objects are summarised by the reason (their count or size), not quoted whole.
  const value =
    issue.input === undefined || (typeof issue.input === 'object' && issue.input !== null) ? {} : { value: quoteRefused(issue.input) };
  if (issue.code === 'too_big' && issue.origin === 'array') {
    const count = Array.isArray(issue.input) ? ` (got ${issue.input.length})` : '';
    return [{ path, reason: `has more than ${String(issue.maximum)} items${count}` }];
  }
  if (issue.code === 'too_big' && issue.origin === 'string') {
    const length = typeof issue.input === 'string' ? ` (got ${issue.input.length})` : '';
    return [{ path, reason: `is longer than ${String(issue.maximum)} characters${length}`, ...value }];
  }
  return [{ path, reason: issue.message, ...value }];
}

/** Turns zod issues into `{ path: "toolCalls[3].tool", reason }`, one entry per problem. */
export function formatRunReportIssues(error: z.ZodError): RunReportIssue[] {
  return error.issues.flatMap((issue) => describeIssue(issue));
}

export type RunReportParseResult = { success: true; report: RunReport } | { success: false; issues: RunReportIssue[] };

/** Validates an already-decoded value (e.g. one JSON line, a signal payload, a request body). */
export function parseRunReport(value: unknown): RunReportParseResult {
  // Measured before anything recursive (zod's issue formatting, JSON.stringify) meets the value.
  const excess = jsonDepthExcess(value, MAX_REPORT_DEPTH);
  if (excess !== null) {
    const shown = excess.slice(0, 4);
    const path = `${formatIssuePath(shown)}${excess.length > shown.length ? '…' : ''}`;
    return {
      success: false,
      issues: [{ path, reason: `nests deeper than ${MAX_REPORT_DEPTH} levels (tool call args allow ${MAX_ARGS_DEPTH})` }],
    };
  }
  // The contract caps tool calls at 500; a report with 10k of them is refused by its count
  // alone instead of validating (and listing problems in) every one of them.
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const toolCalls = (value as { toolCalls?: unknown }).toolCalls;
    if (Array.isArray(toolCalls) && toolCalls.length > MAX_TOOL_CALLS) {
      return {
        success: false,
        issues: [{ path: 'toolCalls', reason: `has more than ${MAX_TOOL_CALLS} items (got ${toolCalls.length})` }],
      };
    }
  }
  const result = runReportSchema.safeParse(value, { reportInput: true });
  if (result.success) return { success: true, report: result.data };
  return { success: false, issues: formatRunReportIssues(result.error) };
}

function normalizeTimestamp(value: string): string {
  return new Date(value).toISOString();
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => sortKeys(item));
  if (value !== null && typeof value === 'object') {
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const item = (value as Record<string, unknown>)[key];
      if (item !== undefined) sorted[key] = sortKeys(item);
    }
    return sorted;
  }
  return value;
}

/**
 * The canonical JSON of a validated report: defaults applied, timestamps normalised to UTC
 * with millisecond precision (what the database keeps), keys sorted at every level. Two
 * reports of the same run are "the same content" exactly when their canonical forms match.
 */
export function canonicalRunReportJson(report: RunReport): string {
  const normalized = {
    ...report,
    startedAt: normalizeTimestamp(report.startedAt),
    completedAt: normalizeTimestamp(report.completedAt),
    toolCalls: report.toolCalls.map((call) => ({
      ...call,
      at: call.at === undefined ? undefined : normalizeTimestamp(call.at),
    })),
  };
  return JSON.stringify(sortKeys(normalized));
}

export function runReportSha256(report: RunReport): string {
  return createHash('sha256').update(canonicalRunReportJson(report), 'utf8').digest('hex');
}

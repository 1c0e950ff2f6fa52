import type { ApprovalStatusSummary } from './approval-repository.ts';
import type { SkillEventCount, SkillLoadCount } from '../store/skill-event-repository.ts';

/**
 * The tracked metrics of governed authoring for one tenant (the 002 spec's list): authoring
 * denials by reason, conflicts on expected_revision, approvals by status with their
 * resolution latency, writes by operation, and skill loads where sessions record them.
 * Built from aggregate rows (src/metrics/tenant-metrics.ts collects them for one or every tenant).
 */
export const DENIAL_REASONS = ['scope', 'origin_trust', 'source', 'read_before_write', 'review_archive'] as const;

export interface AuthoringMetrics {
  tenantId: string;
  denials: { total: number; byReason: Record<string, number> };
  conflicts: number;
  writes: { created: number; edited: number; patched: number; archived: number };
  approvals: ApprovalStatusSummary[];
  loads: { total: number; byName: Array<{ name: string; count: number }> };
}

/** One tenant's authoring metrics from its event counts, approval summary and load counts. */
export function authoringMetricsFrom(
  tenantId: string,
  counts: readonly SkillEventCount[],
  approvals: readonly ApprovalStatusSummary[],
  loads: readonly SkillLoadCount[],
): AuthoringMetrics {
  const total = (kind: string) => counts.filter((row) => row.kind === kind).reduce((sum, row) => sum + row.count, 0);
  const byReason: Record<string, number> = Object.fromEntries(DENIAL_REASONS.map((reason) => [reason, 0]));
  for (const row of counts) {
    if (row.kind === 'authoring.denied') byReason[row.reason ?? 'unspecified'] = (byReason[row.reason ?? 'unspecified'] ?? 0) + row.count;
  }
  return {
    tenantId,
    denials: { total: total('authoring.denied'), byReason },
    conflicts: total('authoring.conflict'),
    writes: {
      created: total('authoring.created'),
      edited: total('authoring.edited'),
      patched: total('authoring.patched'),
      archived: total('authoring.archived'),
    },
    approvals: approvals.map(({ status, count, latencyP50Ms, latencyMaxMs }) => ({ status, count, latencyP50Ms, latencyMaxMs })),
    loads: { total: total('skill.load'), byName: loads.map(({ name, loads: count }) => ({ name, count })) },
  };
}

function milliseconds(value: number | null): string {
  if (value === null) return '-';
  return value >= 10_000 ? `${(value / 1000).toFixed(1)} s` : `${value} ms`;
}

export function formatAuthoringMetrics(metrics: AuthoringMetrics): string {
  const lines = [`skill metrics for tenant ${metrics.tenantId}`];
  lines.push(`authoring denials: ${metrics.denials.total}`);
  for (const [reason, count] of Object.entries(metrics.denials.byReason)) lines.push(`  ${reason}: ${count}`);
  lines.push(`expected_revision conflicts: ${metrics.conflicts}`);
  const { created, edited, patched, archived } = metrics.writes;
  lines.push(`writes: created ${created}, edited ${edited}, patched ${patched}, archived ${archived}`);
  if (metrics.approvals.length === 0) lines.push('approvals: none');
  else {
    lines.push('approvals:');
    for (const row of metrics.approvals) {
      lines.push(`  ${row.status}: ${row.count} (latency p50 ${milliseconds(row.latencyP50Ms)}, max ${milliseconds(row.latencyMaxMs)})`);
    }
  }
  lines.push(`skill loads: ${metrics.loads.total}`);
  for (const row of metrics.loads.byName.slice(0, 20)) lines.push(`  ${row.name}: ${row.count}`);
  return lines.join('\n');
}

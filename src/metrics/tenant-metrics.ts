import { authoringMetricsFrom, formatAuthoringMetrics, type AuthoringMetrics } from '../authoring/authoring-metrics.ts';
import { summarizeApprovals } from '../authoring/approval-repository.ts';
import { countPairsByCombination } from '../rollout/rollout-repository.ts';
import { checkPairedEvidence } from '../rollout/paired-evidence.ts';
import type { Combination } from '../rollout/paired-evidence.ts';
import { summarizeRunStatuses } from '../runs/run-repository.ts';
import { summarizeSessionCatalogs } from '../sessions/session-repository.ts';
import type { Queryable } from '../store/database.ts';
import { countSkillEvents, countSkillLoads } from '../store/skill-event-repository.ts';
import { countSkillRevisionsByMonth } from '../store/skill-repository.ts';
import { emptyPassCounts } from '../contracts/pass-record.ts';
import { summarizePasses, type PassSummary } from '../synthesis/pass-repository.ts';

/**
 * The numbers the 002 spec says operators watch ("Not gates. Watched…"), per tenant, computed
 * from what is already recorded: sessions (catalog drops, selection), skill_events (loads,
 * denials, conflicts, writes), runs (completion, the baseline and the intake's stored runs),
 * skill_revisions (churn), approvals (latency, outcome), rollout_pairs (eval delta) and passes.
 * One aggregate query per table for every tenant at once (or one tenant), so a scrape's cost
 * does not grow with the number of tenants. A rate whose denominator is zero is null, not 0.
 */
export interface SkillUsage {
  name: string;
  loads: number;
  /** Sessions that loaded it; runs reported under those sessions, and how many completed. */
  sessions: number;
  runs: number;
  completedRuns: number;
  /** completedRuns / runs, or null without runs. */
  completionRate: number | null;
  /** completionRate minus the tenant's baseline completion rate: below zero, runs that load it complete less often. */
  completionVsBaseline: number | null;
}

export interface EvalDelta {
  combination: Combination;
  n: number;
  b: number;
  c: number;
  /** The observed paired improvement (b − c)/n, a fraction; the rollout gate's interval; whether it passes. */
  improvement: number;
  interval: { lower: number; upper: number };
  passed: boolean;
}

export interface TenantMetrics extends AuthoringMetrics {
  catalog: { sessions: number; droppedEntries: number; sessionsWithDrops: number };
  selection: { sessionsWithCatalog: number; sessionsWithLoad: number; rate: number | null };
  runs: {
    total: number;
    byStatus: { completed: number; failed: number; cancelled: number };
    /** The tenant baseline for load-to-completion: completed / all stored runs. */
    completionRate: number | null;
    lastStoredAt: string | null;
  };
  skills: SkillUsage[];
  revisions: {
    bySkill: Array<{ name: string; total: number; lastThirtyDays: number }>;
    byMonth: Array<{ name: string; month: string; revisions: number }>;
  };
  /** Conflicts over the writes that carried expected_revision (edit, patch, archive: applied or conflicted). */
  conflictRate: { conflicts: number; revisionCheckedWrites: number; rate: number | null };
  evalDelta: EvalDelta[];
  passes: Omit<PassSummary, 'tenantId'>;
}

const ratio = (numerator: number, denominator: number): number | null => (denominator === 0 ? null : numerator / denominator);

/** Every tenant with any recorded data (`tenantId` null), or exactly the given tenant (zeros when it has none). */
export async function collectTenantMetrics(db: Queryable, tenantId: string | null): Promise<TenantMetrics[]> {
  const [events, loads, approvals, sessions, runs, revisions, pairs, passes] = await Promise.all([
    countSkillEvents(db, tenantId),
    countSkillLoads(db, tenantId),
    summarizeApprovals(db, tenantId),
    summarizeSessionCatalogs(db, tenantId),
    summarizeRunStatuses(db, tenantId),
    countSkillRevisionsByMonth(db, tenantId),
    countPairsByCombination(db, tenantId),
    summarizePasses(db, tenantId),
  ]);
  const tenants = new Set<string>(tenantId === null ? [] : [tenantId]);
  for (const rows of [events, loads, approvals, sessions, runs, revisions, pairs, passes])
    for (const row of rows) tenants.add(row.tenantId);
  const of = <T extends { tenantId: string }>(rows: readonly T[], tenant: string) => rows.filter((row) => row.tenantId === tenant);
  return [...tenants].sort().map((tenant) => {
    const authoring = authoringMetricsFrom(tenant, of(events, tenant), of(approvals, tenant), of(loads, tenant));
    const session = of(sessions, tenant)[0];
    const runRows = of(runs, tenant);
    const byStatus = { completed: 0, failed: 0, cancelled: 0 };
    for (const row of runRows) byStatus[row.status] = row.runs;
    const total = byStatus.completed + byStatus.failed + byStatus.cancelled;
    const baseline = ratio(byStatus.completed, total);
    const lastStored = runRows.reduce<Date | null>(
      (latest, row) => (latest && latest > row.lastStoredAt ? latest : row.lastStoredAt),
      null,
    );
    const revisionRows = of(revisions, tenant);
    const bySkill = new Map<string, { name: string; total: number; lastThirtyDays: number }>();
    for (const row of revisionRows) {
      const entry = bySkill.get(row.name) ?? { name: row.name, total: 0, lastThirtyDays: 0 };
      entry.total += row.revisions;
      entry.lastThirtyDays += row.lastThirtyDays;
      bySkill.set(row.name, entry);
    }
    const { edited, patched, archived } = authoring.writes;
    const checked = authoring.conflicts + edited + patched + archived;
    const pass = of(passes, tenant)[0];
    return {
      ...authoring,
      catalog: {
        sessions: session?.sessions ?? 0,
        droppedEntries: session?.droppedEntries ?? 0,
        sessionsWithDrops: session?.sessionsWithDrops ?? 0,
      },
      selection: {
        sessionsWithCatalog: session?.sessionsWithCatalog ?? 0,
        sessionsWithLoad: session?.sessionsWithLoad ?? 0,
        rate: ratio(session?.sessionsWithLoad ?? 0, session?.sessionsWithCatalog ?? 0),
      },
      runs: { total, byStatus, completionRate: baseline, lastStoredAt: lastStored?.toISOString() ?? null },
      skills: of(loads, tenant).map(({ name, loads: count, sessions: loadSessions, runs: loadRuns, completedRuns }) => {
        const completionRate = ratio(completedRuns, loadRuns);
        return {
          name,
          loads: count,
          sessions: loadSessions,
          runs: loadRuns,
          completedRuns,
          completionRate,
          completionVsBaseline: completionRate === null || baseline === null ? null : completionRate - baseline,
        };
      }),
      revisions: {
        bySkill: [...bySkill.values()],
        byMonth: revisionRows.map(({ name, month, revisions: count }) => ({ name, month, revisions: count })),
      },
      conflictRate: { conflicts: authoring.conflicts, revisionCheckedWrites: checked, rate: ratio(authoring.conflicts, checked) },
      evalDelta: of(pairs, tenant).map(({ combination, counts }) => {
        const check = checkPairedEvidence(counts);
        return {
          combination,
          n: check.n,
          b: check.b,
          c: check.c,
          improvement: check.improvement,
          interval: check.interval,
          passed: check.passed,
        };
      }),
      passes: pass
        ? {
            byStatus: pass.byStatus,
            finished: pass.finished,
            durationSecondsTotal: pass.durationSecondsTotal,
            counts: pass.counts,
            last: pass.last,
          }
        : { byStatus: {}, finished: 0, durationSecondsTotal: 0, counts: emptyPassCounts(), last: null },
    };
  });
}

const percent = (value: number | null): string => (value === null ? '-' : `${(value * 100).toFixed(1)} %`);

/** `skillsmith metrics` without --json: the authoring lines, then the watched numbers. */
export function formatTenantMetrics(metrics: TenantMetrics): string {
  const lines = [formatAuthoringMetrics(metrics)];
  const { catalog, selection, runs, conflictRate, passes } = metrics;
  lines.push(
    `sessions: ${catalog.sessions}; catalog entries dropped by the caps: ${catalog.droppedEntries} (in ${catalog.sessionsWithDrops} sessions)`,
  );
  lines.push(
    `skill selection rate: ${percent(selection.rate)} (${selection.sessionsWithLoad} of ${selection.sessionsWithCatalog} sessions with a catalog loaded a skill)`,
  );
  lines.push(`runs stored: ${runs.total}; baseline completion rate ${percent(runs.completionRate)}`);
  for (const skill of metrics.skills.slice(0, 20)) {
    const versus =
      skill.completionVsBaseline === null
        ? ''
        : ` (${skill.completionVsBaseline >= 0 ? '+' : ''}${(skill.completionVsBaseline * 100).toFixed(1)} points vs baseline)`;
    lines.push(
      `  ${skill.name}: ${skill.loads} loads, load-to-completion ${percent(skill.completionRate)} over ${skill.runs} runs${versus}`,
    );
  }
  lines.push(
    `conflict rate on expected_revision: ${percent(conflictRate.rate)} (${conflictRate.conflicts} of ${conflictRate.revisionCheckedWrites})`,
  );
  if (metrics.revisions.bySkill.length > 0) lines.push('revisions per skill (total, last 30 days):');
  for (const row of metrics.revisions.bySkill.slice(0, 20)) lines.push(`  ${row.name}: ${row.total}, ${row.lastThirtyDays}`);
  for (const delta of metrics.evalDelta) {
    const { modelPolicy, policyProfile, authoringVersion } = delta.combination;
    lines.push(
      `eval delta ${modelPolicy} / ${policyProfile} / ${authoringVersion}: ${(delta.improvement * 100).toFixed(1)} points ` +
        `[${(delta.interval.lower * 100).toFixed(1)}, ${(delta.interval.upper * 100).toFixed(1)}] over ${delta.n} pairs${delta.passed ? ' (passes)' : ''}`,
    );
  }
  const last = passes.last
    ? `; last ${passes.last.status} in ${passes.last.durationSeconds.toFixed(1)} s with ${passes.last.counts.clusters} clusters`
    : '';
  lines.push(`synthesis passes: ${passes.finished} ended${last}`);
  return lines.join('\n');
}

import { Gauge, Registry } from 'prom-client';
import { DENIAL_REASONS } from '../authoring/authoring-metrics.ts';
import type { Queryable } from '../store/database.ts';
import { passCountKeys } from '../contracts/pass-record.ts';
import type { ProcessMetrics } from './process-metrics.ts';
import { collectTenantMetrics, type TenantMetrics } from './tenant-metrics.ts';

/**
 * `GET /metrics`: the Prometheus text exposition of the process's own metrics and of every
 * tenant's tracked metrics, the latter computed on each scrape from the database (a fixed
 * handful of aggregate queries, whatever the number of tenants) into a registry built for that
 * scrape, so a value is never stale and no tenant's series outlives its data.
 * Everything recorded in the database is a gauge: it is a count read back, not an event counted
 * here (`increase()` still works on the cumulative ones, which only grow).
 */
export const METRICS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

type Labels = Record<string, string>;

interface GaugeSpec {
  help: string;
  labels: readonly string[];
  /** The samples of one tenant: labels (besides `tenant`) and value; null values are left out. */
  samples(metrics: TenantMetrics): Array<[Labels, number | null]>;
}

const seconds = (milliseconds: number | null) => (milliseconds === null ? null : milliseconds / 1000);
const combinationLabels = ({ combination }: TenantMetrics['evalDelta'][number]): Labels => ({
  model_policy: combination.modelPolicy,
  policy_profile: combination.policyProfile,
  authoring_version: combination.authoringVersion,
});
const PASS_DECISIONS = ['added', 'updated', 'noop', 'superseded', 'skipped', 'pending'] as const;

/** Every per-tenant gauge: name → what it means and how to read it from TenantMetrics (README "Metrics" lists them). */
export const TENANT_GAUGES: Readonly<Record<string, GaugeSpec>> = {
  skillsmith_sessions: { help: 'Sessions opened.', labels: [], samples: (m) => [[{}, m.catalog.sessions]] },
  skillsmith_catalog_dropped_entries: {
    help: "Catalog entries removed by a session's caps (20 entries, 1,500 tokens), summed over sessions.",
    labels: [],
    samples: (m) => [[{}, m.catalog.droppedEntries]],
  },
  skillsmith_sessions_with_dropped_entries: {
    help: 'Sessions whose catalog lost at least one entry to the caps.',
    labels: [],
    samples: (m) => [[{}, m.catalog.sessionsWithDrops]],
  },
  skillsmith_sessions_with_catalog_skill: {
    help: 'Sessions whose pinned catalog held at least one skill.',
    labels: [],
    samples: (m) => [[{}, m.selection.sessionsWithCatalog]],
  },
  skillsmith_sessions_with_skill_load: {
    help: 'Sessions whose catalog held a skill and in which skill.load was called at all.',
    labels: [],
    samples: (m) => [[{}, m.selection.sessionsWithLoad]],
  },
  skillsmith_skill_selection_rate: {
    help: 'Share of sessions with a skill in their catalog that loaded one (absent without such sessions).',
    labels: [],
    samples: (m) => [[{}, m.selection.rate]],
  },
  skillsmith_runs_stored: {
    help: 'Runs stored, by outcome status (the intake’s stored count).',
    labels: ['status'],
    samples: (m) => Object.entries(m.runs.byStatus).map(([status, count]) => [{ status }, count]),
  },
  skillsmith_run_completion_rate: {
    help: 'Completed runs over all stored runs: the tenant baseline for load-to-completion.',
    labels: [],
    samples: (m) => [[{}, m.runs.completionRate]],
  },
  skillsmith_intake_last_stored_timestamp_seconds: {
    help: 'When the newest run was stored (Unix seconds); time() minus it is how long the intake has been quiet.',
    labels: [],
    samples: (m) => [[{}, m.runs.lastStoredAt === null ? null : Date.parse(m.runs.lastStoredAt) / 1000]],
  },
  skillsmith_skill_loads: {
    help: 'skill.load calls per skill.',
    labels: ['skill'],
    samples: (m) => m.skills.map((skill) => [{ skill: skill.name }, skill.loads]),
  },
  skillsmith_skill_load_runs: {
    help: 'Runs reported under a session that loaded the skill.',
    labels: ['skill'],
    samples: (m) => m.skills.map((skill) => [{ skill: skill.name }, skill.runs]),
  },
  skillsmith_skill_load_completion_rate: {
    help: 'Share of the runs that loaded the skill which completed (compare with skillsmith_run_completion_rate).',
    labels: ['skill'],
    samples: (m) => m.skills.map((skill) => [{ skill: skill.name }, skill.completionRate]),
  },
  skillsmith_skill_load_completion_vs_baseline: {
    help: 'Load-to-completion rate minus the tenant baseline: below zero, runs that load the skill complete less often.',
    labels: ['skill'],
    samples: (m) => m.skills.map((skill) => [{ skill: skill.name }, skill.completionVsBaseline]),
  },
  skillsmith_skill_revisions: {
    help: 'Revisions per skill, all time.',
    labels: ['skill'],
    samples: (m) => m.revisions.bySkill.map((row) => [{ skill: row.name }, row.total]),
  },
  skillsmith_skill_revisions_30d: {
    help: 'Revisions per skill created in the trailing 30 days (revisions per month: churn).',
    labels: ['skill'],
    samples: (m) => m.revisions.bySkill.map((row) => [{ skill: row.name }, row.lastThirtyDays]),
  },
  skillsmith_authoring_writes: {
    help: 'skill_manage writes applied, by operation.',
    labels: ['operation'],
    samples: (m) => Object.entries(m.writes).map(([operation, count]) => [{ operation }, count]),
  },
  skillsmith_authoring_conflicts: {
    help: 'skill_manage writes refused on a stale expected_revision.',
    labels: [],
    samples: (m) => [[{}, m.conflictRate.conflicts]],
  },
  skillsmith_authoring_conflict_rate: {
    help: 'Conflicts over the writes that carried expected_revision (edit, patch, archive; applied or conflicted).',
    labels: [],
    samples: (m) => [[{}, m.conflictRate.rate]],
  },
  skillsmith_authoring_denials: {
    help: 'skill_manage denials, by reason (scope, origin_trust, source, read_before_write, review_archive).',
    labels: ['reason'],
    samples: (m) => {
      const reasons = new Set<string>([...DENIAL_REASONS, ...Object.keys(m.denials.byReason)]);
      return [...reasons].map((reason) => [{ reason }, m.denials.byReason[reason] ?? 0]);
    },
  },
  skillsmith_approvals: {
    help: 'SKILL_AUTHORING approvals, by status (pending, approved, rejected, expired, conflicted).',
    labels: ['status'],
    samples: (m) => m.approvals.map((row) => [{ status: row.status }, row.count]),
  },
  skillsmith_approval_latency_p50_seconds: {
    help: 'Median seconds from an approval request to its resolution, by outcome.',
    labels: ['status'],
    samples: (m) => m.approvals.map((row) => [{ status: row.status }, seconds(row.latencyP50Ms)]),
  },
  skillsmith_approval_latency_max_seconds: {
    help: 'Longest seconds from an approval request to its resolution, by outcome.',
    labels: ['status'],
    samples: (m) => m.approvals.map((row) => [{ status: row.status }, seconds(row.latencyMaxMs)]),
  },
  skillsmith_eval_delta: {
    help: 'Observed paired improvement (b − c)/n of the rollout evidence, a fraction (0.05 = 5 points), per combination.',
    labels: ['model_policy', 'policy_profile', 'authoring_version'],
    samples: (m) => m.evalDelta.map((delta) => [combinationLabels(delta), delta.improvement]),
  },
  skillsmith_eval_delta_lower: {
    help: 'Lower bound of the 95 % paired interval of the eval delta (the gate wants it above zero).',
    labels: ['model_policy', 'policy_profile', 'authoring_version'],
    samples: (m) => m.evalDelta.map((delta) => [combinationLabels(delta), delta.interval.lower]),
  },
  skillsmith_eval_delta_upper: {
    help: 'Upper bound of the 95 % paired interval of the eval delta.',
    labels: ['model_policy', 'policy_profile', 'authoring_version'],
    samples: (m) => m.evalDelta.map((delta) => [combinationLabels(delta), delta.interval.upper]),
  },
  skillsmith_eval_pairs: {
    help: 'Paired evaluation samples recorded, per combination.',
    labels: ['model_policy', 'policy_profile', 'authoring_version'],
    samples: (m) => m.evalDelta.map((delta) => [combinationLabels(delta), delta.n]),
  },
  skillsmith_eval_gate_passed: {
    help: '1 when the combination’s evidence passes the rollout gate, else 0.',
    labels: ['model_policy', 'policy_profile', 'authoring_version'],
    samples: (m) => m.evalDelta.map((delta) => [combinationLabels(delta), delta.passed ? 1 : 0]),
  },
  skillsmith_passes: {
    help: 'Synthesis passes, by status.',
    labels: ['status'],
    samples: (m) => Object.entries(m.passes.byStatus).map(([status, count]) => [{ status }, count ?? 0]),
  },
  skillsmith_pass_duration_seconds_total: {
    help: 'Wall time of every ended synthesis pass, summed (divide by skillsmith_passes_ended for the mean).',
    labels: [],
    samples: (m) => [[{}, m.passes.durationSecondsTotal]],
  },
  skillsmith_passes_ended: { help: 'Synthesis passes that ended (any status).', labels: [], samples: (m) => [[{}, m.passes.finished]] },
  skillsmith_pass_clusters: {
    help: 'Clusters found and clusters qualifying, summed over passes.',
    labels: ['kind'],
    samples: (m) => [
      [{ kind: 'found' }, m.passes.counts.clusters],
      [{ kind: 'qualifying' }, m.passes.counts.qualifying],
    ],
  },
  skillsmith_pass_decisions: {
    help: 'Reconcile decisions summed over passes, by kind (added, updated, noop, superseded, skipped, pending).',
    labels: ['decision'],
    samples: (m) => PASS_DECISIONS.map((decision) => [{ decision }, m.passes.counts[decision]]),
  },
  skillsmith_last_pass_duration_seconds: {
    help: 'Wall time of the newest ended synthesis pass.',
    labels: ['status'],
    samples: (m) => (m.passes.last ? [[{ status: m.passes.last.status }, m.passes.last.durationSeconds]] : []),
  },
  skillsmith_last_pass_timestamp_seconds: {
    help: 'When the newest synthesis pass ended (Unix seconds).',
    labels: ['status'],
    samples: (m) => (m.passes.last ? [[{ status: m.passes.last.status }, m.passes.last.finishedAt.getTime() / 1000]] : []),
  },
  skillsmith_last_pass_counts: {
    help: 'The newest ended pass’s counts (runsSeen, sequences, clusters, qualifying, decisions…).',
    labels: ['count'],
    samples: (m) => (m.passes.last ? passCountKeys.map((count) => [{ count }, m.passes.last!.counts[count]]) : []),
  },
};

/** Keeps only one tenant's samples of the process metrics (HELP/TYPE lines and untenanted samples stay). */
function onlyTenant(exposition: string, tenantId: string): string {
  return exposition
    .split('\n')
    .filter((line) => line.startsWith('#') || !/[{,]tenant="/.test(line) || line.includes(`tenant="${tenantId}"`))
    .join('\n');
}

export interface ExpositionScope {
  /** One tenant (a token's) or every tenant (null: the unauthenticated setting for a private network). */
  tenantId: string | null;
}

/** The full exposition for a scrape: process metrics, then every tenant gauge. */
export async function renderMetrics(db: Queryable, process: ProcessMetrics, { tenantId }: ExpositionScope): Promise<string> {
  const tenants = await collectTenantMetrics(db, tenantId);
  const registry = new Registry();
  for (const [name, spec] of Object.entries(TENANT_GAUGES)) {
    const gauge = new Gauge({ name, help: spec.help, labelNames: ['tenant', ...spec.labels], registers: [registry] });
    for (const metrics of tenants) {
      for (const [labels, value] of spec.samples(metrics)) {
        if (value !== null && Number.isFinite(value)) gauge.set({ tenant: metrics.tenantId, ...labels }, value);
      }
    }
  }
  const own = await process.registry.metrics();
  return `${tenantId === null ? own : onlyTenant(own, tenantId)}\n${await registry.metrics()}`;
}

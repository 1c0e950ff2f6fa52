import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildApiServer, type ApiApp } from '../../src/api/server.ts';
import { createServices } from '../../src/app/services.ts';
import { loadConfig } from '../../src/app/config.ts';
import { TENANT_GAUGES } from '../../src/metrics/metrics-exposition.ts';
import type { TenantMetrics } from '../../src/metrics/tenant-metrics.ts';
import { openSession } from '../../src/sessions/session-open.ts';
import { loadSkill } from '../../src/sessions/skill-load.ts';
import {
  beginPassRecord,
  finishPassRecord,
  markClusterInstalled,
  markClusterSkipped,
  recordPassClusters,
  updatePassCounts,
} from '../../src/synthesis/pass-repository.ts';
import { runSkillsmith } from '../support/cli.ts';
import { parseExposition, sampleValue, type Exposition } from '../support/prometheus-text.ts';
import { activateTenants } from '../support/rollout.ts';
import { skillPackage } from '../skills/skill-fixtures.ts';
import { bearer, openApiHarness, silentLogger, token, type ApiHarness } from './api-harness.ts';

/**
 * Every metric GET /metrics exposes is provoked through the code path that records it in
 * production (sessions, skill.load, skill_manage, approvals, the run intake, rollout evidence,
 * the pass record), then read back from the scraped exposition text with its labels.
 */
const scraper = token('acme', ['metrics.read'], 'acme-prometheus');
const writer = token('acme', ['skill.write', 'run.write', 'approval.read', 'approval.resolve'], 'acme-runtime');
const globexScraper = token('globex', ['metrics.read'], 'globex-prometheus');
const noScope = token('acme', ['skill.read']);

const skillMd = (name: string, step: string) =>
  `---\nname: ${name}\ndescription: Rotate an integration's API key.\nlicense: Apache-2.0\nmetadata:\n  version: 1.0.0\n---\n\n1. ${step}\n`;

const hourAgo = new Date(Date.now() - 3_600_000);
const runReport = (runId: string, sessionId: string, status: 'completed' | 'failed') => ({
  agentId: 'agent-1',
  runId,
  sessionId,
  goal: 'Rotate the payments API key',
  status,
  startedAt: new Date(hourAgo.getTime() - 60_000).toISOString(),
  completedAt: hourAgo.toISOString(),
  toolCalls: [{ tool: 'keys.rotate', success: status === 'completed' }],
});

const combination = { modelPolicy: 'llama3.1', policyProfile: 'none', authoringVersion: 'metrics-test' };
const pairs = (count: { b: number; c: number; both: number }) =>
  [
    ...Array.from({ length: count.b }, (_, index) => ({ caseId: `b-${index}`, baselineCompleted: false, authoredCompleted: true })),
    ...Array.from({ length: count.c }, (_, index) => ({ caseId: `c-${index}`, baselineCompleted: true, authoredCompleted: false })),
    ...Array.from({ length: count.both }, (_, index) => ({ caseId: `s-${index}`, baselineCompleted: true, authoredCompleted: true })),
  ].map((pair) => ({ ...pair, ...combination, baselinePolicyFailures: 0, authoredPolicyFailures: 0 }));

describe('GET /metrics: the tracked metrics, the intake, passes and the process, in Prometheus text', () => {
  let harness: ApiHarness;
  let approvalsApp: ApiApp;
  let publicApp: ApiApp;
  let sessionWithLoad: string;

  const manage = (app: ApiApp, invocationId: string, originTrust: string, request: Record<string, unknown>) =>
    app.inject({
      method: 'POST',
      url: '/v1/skills/manage',
      headers: bearer(writer),
      payload: { invocationId, runId: `run-${invocationId}`, originTrust, request },
    });

  async function scrape(app: ApiApp = harness.app, headers: Record<string, string> = bearer(scraper)): Promise<Exposition> {
    const response = await app.inject({ method: 'GET', url: '/metrics', headers });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    return parseExposition(response.body);
  }

  beforeAll(async () => {
    const env = { SKILLSMITH_AUTHORING_ENABLED: 'true', TEMPORAL_TASK_QUEUE: `metrics-${Date.now()}` };
    harness = await openApiHarness([scraper, writer, globexScraper, noScope], { env, temporalAddress: inject('temporalAddress') });
    const { pool } = harness.database;
    await activateTenants(harness.services.rollout, ['acme']);

    // Catalog drops and selection: 22 skills for a catalog of 20 entries, two sessions, one load.
    const names = Array.from({ length: 22 }, (_, index) => `step-${String(index).padStart(2, '0')}`);
    for (const name of names) {
      await harness.skills.install('acme', skillPackage({ name }, { body: `# ${name}\n\n1. Do the ${name} thing.` }), {
        source: 'operator',
      });
    }
    await harness.services.agentSpecs.set('acme', 'bot', names);
    const deps = { pool, skills: harness.skills, agentSpecs: harness.services.agentSpecs };
    sessionWithLoad = (await openSession(deps, 'acme', { agentId: 'bot', tools: [] })).id;
    await openSession(deps, 'acme', { agentId: 'bot', tools: [] });
    await loadSkill(deps, 'acme', sessionWithLoad, { name: 'step-00' });

    // Runs through the intake: two under the loading session (one completed, one failed), one elsewhere, one refused.
    for (const [runId, sessionId, status] of [
      ['run-a', sessionWithLoad, 'completed'],
      ['run-b', sessionWithLoad, 'failed'],
      ['run-c', 'another-session', 'completed'],
    ] as const) {
      const response = await harness.app.inject({
        method: 'POST',
        url: '/v1/runs',
        headers: bearer(writer),
        payload: runReport(runId, sessionId, status),
      });
      expect(response.statusCode, response.body).toBe(202);
    }
    const refused = await harness.app.inject({
      method: 'POST',
      url: '/v1/runs',
      headers: bearer(writer),
      payload: { ...runReport('run-d', 'x', 'completed'), status: 'finished' },
    });
    expect(refused.statusCode).toBe(400);

    // skill_manage: a create, a patch, a stale patch (conflict), an untrusted turn (denial).
    expect(
      (
        await manage(harness.app, 'inv-create', 'user', {
          operation: 'create',
          name: 'rotate-key',
          package: { files: { 'SKILL.md': skillMd('rotate-key', 'Rotate it.') } },
        })
      ).statusCode,
    ).toBe(200);
    expect(
      (
        await manage(harness.app, 'inv-patch', 'user', {
          operation: 'patch',
          name: 'rotate-key',
          expectedRevision: 1,
          skillMd: skillMd('rotate-key', 'Rotate it now.'),
        })
      ).statusCode,
    ).toBe(200);
    expect(
      (
        await manage(harness.app, 'inv-stale', 'user', {
          operation: 'patch',
          name: 'rotate-key',
          expectedRevision: 1,
          skillMd: skillMd('rotate-key', 'Late.'),
        })
      ).statusCode,
    ).toBe(409);
    expect(
      (
        await manage(harness.app, 'inv-untrusted', 'untrusted', {
          operation: 'patch',
          name: 'rotate-key',
          expectedRevision: 2,
          skillMd: skillMd('rotate-key', 'Injected.'),
        })
      ).statusCode,
    ).toBe(403);

    // Approvals under the skill_authoring profile, over the same database: one approved, one rejected.
    const approvalsConfig = loadConfig({ ...env, SKILLSMITH_APPROVAL_PROFILE: 'skill_authoring' });
    const approvalsServices = createServices(approvalsConfig, pool, { logger: silentLogger });
    await activateTenants(approvalsServices.rollout, ['acme']);
    approvalsApp = await buildApiServer({ ...approvalsServices, tokens: [writer] });
    for (const [name, decision] of [
      ['approved-skill', 'approve'],
      ['rejected-skill', 'reject'],
    ] as const) {
      const pending = await manage(approvalsApp, `inv-${name}`, 'user', {
        operation: 'create',
        name,
        package: { files: { 'SKILL.md': skillMd(name, 'Do it.') } },
      });
      expect(pending.json()).toMatchObject({ status: 'pending_approval' });
      const resolved = await approvalsApp.inject({
        method: 'POST',
        url: `/v1/approvals/${pending.json().approvalId}/resolve`,
        headers: bearer(writer),
        payload: { decision },
      });
      expect(resolved.statusCode, resolved.body).toBe(200);
    }

    // Rollout evidence: 40 pairs, 10 only the authored arm completed, 2 only the baseline.
    await harness.services.rollout.recordSamples('acme', pairs({ b: 10, c: 2, both: 28 }));
    await harness.services.rollout.recordSamples('globex', pairs({ b: 1, c: 0, both: 1 }));

    // A synthesis pass as its activities record it: three clusters, two qualifying, one added, one skipped.
    const passId = 'synthesis/acme/2026-12-01T00:00:00.000Z';
    await beginPassRecord(pool, {
      tenantId: 'acme',
      id: passId,
      workflowRunId: 'wf-run',
      full: false,
      since: null,
      distiller: 'extractive',
    });
    const cluster = (key: string, qualifying: boolean) => ({
      clusterKey: key,
      rank: qualifying ? 1 : null,
      runIds: ['run-a'],
      successfulRunIds: ['run-a'],
      size: 3,
      successful: 3,
      successRate: 1,
      qualifying,
      reason: qualifying ? null : 'too few runs',
      value: 1,
    });
    await recordPassClusters(pool, 'acme', passId, [cluster('k1', true), cluster('k2', true), cluster('k3', false)]);
    await updatePassCounts(pool, 'acme', passId, { runsSeen: 9, sequences: 9, clusters: 3, qualifying: 2 });
    await markClusterInstalled(pool, 'acme', passId, 'k1', { decision: 'add', skillName: 'learned-one', revision: 1 });
    await markClusterSkipped(pool, 'acme', passId, 'k2', 'malformed distill output');
    await finishPassRecord(pool, 'acme', passId, 'completed', null);

    publicApp = await buildApiServer({ ...harness.services, config: loadConfig({ SKILLSMITH_METRICS_PUBLIC: 'true' }), tokens: [] });
  });

  afterAll(async () => {
    await approvalsApp?.close();
    await publicApp?.close();
    await harness?.close();
  });

  it('refuses a scrape without a token (401) or without metrics.read (403)', async () => {
    const anonymous = await harness.app.inject({ method: 'GET', url: '/metrics' });
    expect(anonymous.statusCode).toBe(401);
    const unscoped = await harness.app.inject({ method: 'GET', url: '/metrics', headers: bearer(noScope) });
    expect(unscoped.statusCode).toBe(403);
    expect(unscoped.json().error).toMatchObject({ code: 'ScopeMissing', details: { scope: 'metrics.read' } });
  });

  it('catalog drop count and skill selection rate (sessions whose catalog had a skill and that loaded one)', async () => {
    const metrics = await scrape();
    expect(sampleValue(metrics, 'skillsmith_sessions', { tenant: 'acme' })).toBe(2);
    expect(sampleValue(metrics, 'skillsmith_catalog_dropped_entries', { tenant: 'acme' })).toBe(4);
    expect(sampleValue(metrics, 'skillsmith_sessions_with_dropped_entries', { tenant: 'acme' })).toBe(2);
    expect(sampleValue(metrics, 'skillsmith_sessions_with_catalog_skill', { tenant: 'acme' })).toBe(2);
    expect(sampleValue(metrics, 'skillsmith_sessions_with_skill_load', { tenant: 'acme' })).toBe(1);
    expect(sampleValue(metrics, 'skillsmith_skill_selection_rate', { tenant: 'acme' })).toBe(0.5);
    expect(metrics.types.get('skillsmith_catalog_dropped_entries')).toBe('gauge');
  });

  it('per-skill load count and load-to-completion rate against the tenant baseline', async () => {
    const metrics = await scrape();
    const skill = { tenant: 'acme', skill: 'step-00' };
    expect(sampleValue(metrics, 'skillsmith_skill_loads', skill)).toBe(1);
    expect(sampleValue(metrics, 'skillsmith_skill_load_runs', skill)).toBe(2);
    expect(sampleValue(metrics, 'skillsmith_skill_load_completion_rate', skill)).toBe(0.5);
    expect(sampleValue(metrics, 'skillsmith_run_completion_rate', { tenant: 'acme' })).toBeCloseTo(2 / 3, 10);
    expect(sampleValue(metrics, 'skillsmith_skill_load_completion_vs_baseline', skill)).toBeCloseTo(0.5 - 2 / 3, 10);
    // A skill nobody loaded has no load series.
    expect(sampleValue(metrics, 'skillsmith_skill_loads', { tenant: 'acme', skill: 'step-01' })).toBeUndefined();
  });

  it('revisions per skill (all time and the trailing 30 days), writes, conflicts and the conflict rate', async () => {
    const metrics = await scrape();
    expect(sampleValue(metrics, 'skillsmith_skill_revisions', { tenant: 'acme', skill: 'rotate-key' })).toBe(2);
    expect(sampleValue(metrics, 'skillsmith_skill_revisions_30d', { tenant: 'acme', skill: 'rotate-key' })).toBe(2);
    expect(sampleValue(metrics, 'skillsmith_skill_revisions', { tenant: 'acme', skill: 'step-00' })).toBe(1);
    // rotate-key, and approved-skill once its approval installed it.
    expect(sampleValue(metrics, 'skillsmith_authoring_writes', { tenant: 'acme', operation: 'created' })).toBe(2);
    expect(sampleValue(metrics, 'skillsmith_authoring_writes', { tenant: 'acme', operation: 'patched' })).toBe(1);
    expect(sampleValue(metrics, 'skillsmith_authoring_conflicts', { tenant: 'acme' })).toBe(1);
    // One conflict among the two writes that carried expected_revision (the applied patch, the stale one).
    expect(sampleValue(metrics, 'skillsmith_authoring_conflict_rate', { tenant: 'acme' })).toBe(0.5);
  });

  it('authoring denials by reason, every reason present (zero when none)', async () => {
    const metrics = await scrape();
    expect(sampleValue(metrics, 'skillsmith_authoring_denials', { tenant: 'acme', reason: 'origin_trust' })).toBe(1);
    for (const reason of ['scope', 'source', 'read_before_write', 'review_archive']) {
      expect(sampleValue(metrics, 'skillsmith_authoring_denials', { tenant: 'acme', reason })).toBe(0);
    }
  });

  it('approval latency and outcome', async () => {
    const metrics = await scrape();
    expect(sampleValue(metrics, 'skillsmith_approvals', { tenant: 'acme', status: 'approved' })).toBe(1);
    expect(sampleValue(metrics, 'skillsmith_approvals', { tenant: 'acme', status: 'rejected' })).toBe(1);
    for (const status of ['approved', 'rejected']) {
      const p50 = sampleValue(metrics, 'skillsmith_approval_latency_p50_seconds', { tenant: 'acme', status })!;
      const max = sampleValue(metrics, 'skillsmith_approval_latency_max_seconds', { tenant: 'acme', status })!;
      expect(p50).toBeGreaterThan(0);
      expect(p50).toBeLessThan(60);
      expect(max).toBeGreaterThanOrEqual(p50);
    }
  });

  it('eval delta from the rollout evidence, with its interval, pair count and verdict', async () => {
    const metrics = await scrape();
    const labels = {
      tenant: 'acme',
      model_policy: combination.modelPolicy,
      policy_profile: combination.policyProfile,
      authoring_version: combination.authoringVersion,
    };
    const check = await harness.services.rollout.check('acme', combination);
    expect(sampleValue(metrics, 'skillsmith_eval_delta', labels)).toBeCloseTo(8 / 40, 12);
    expect(sampleValue(metrics, 'skillsmith_eval_delta_lower', labels)).toBeCloseTo(check.interval.lower, 12);
    expect(sampleValue(metrics, 'skillsmith_eval_delta_upper', labels)).toBeCloseTo(check.interval.upper, 12);
    expect(sampleValue(metrics, 'skillsmith_eval_pairs', labels)).toBe(40);
    expect(sampleValue(metrics, 'skillsmith_eval_gate_passed', labels)).toBe(check.passed ? 1 : 0);
  });

  it('synthesis passes: count by status, duration, clusters and decisions by kind', async () => {
    const metrics = await scrape();
    expect(sampleValue(metrics, 'skillsmith_passes', { tenant: 'acme', status: 'completed' })).toBe(1);
    expect(sampleValue(metrics, 'skillsmith_passes_ended', { tenant: 'acme' })).toBe(1);
    expect(sampleValue(metrics, 'skillsmith_pass_duration_seconds_total', { tenant: 'acme' })).toBeGreaterThan(0);
    expect(sampleValue(metrics, 'skillsmith_last_pass_duration_seconds', { tenant: 'acme', status: 'completed' })).toBeGreaterThan(0);
    expect(sampleValue(metrics, 'skillsmith_last_pass_timestamp_seconds', { tenant: 'acme', status: 'completed' })).toBeGreaterThan(
      Date.now() / 1000 - 600,
    );
    expect(sampleValue(metrics, 'skillsmith_pass_clusters', { tenant: 'acme', kind: 'found' })).toBe(3);
    expect(sampleValue(metrics, 'skillsmith_pass_clusters', { tenant: 'acme', kind: 'qualifying' })).toBe(2);
    expect(sampleValue(metrics, 'skillsmith_pass_decisions', { tenant: 'acme', decision: 'added' })).toBe(1);
    expect(sampleValue(metrics, 'skillsmith_pass_decisions', { tenant: 'acme', decision: 'skipped' })).toBe(1);
    expect(sampleValue(metrics, 'skillsmith_pass_decisions', { tenant: 'acme', decision: 'updated' })).toBe(0);
    expect(sampleValue(metrics, 'skillsmith_last_pass_counts', { tenant: 'acme', count: 'runsSeen' })).toBe(9);
  });

  it('intake: reports accepted and refused, runs stored by status, the lag from completion to storage', async () => {
    const metrics = await scrape();
    expect(sampleValue(metrics, 'skillsmith_intake_accepted_total', { tenant: 'acme' })).toBe(3);
    expect(sampleValue(metrics, 'skillsmith_intake_refused_total', { tenant: 'acme', code: 'RunReportInvalid' })).toBe(1);
    expect(metrics.types.get('skillsmith_intake_accepted_total')).toBe('counter');
    expect(sampleValue(metrics, 'skillsmith_runs_stored', { tenant: 'acme', status: 'completed' })).toBe(2);
    expect(sampleValue(metrics, 'skillsmith_runs_stored', { tenant: 'acme', status: 'failed' })).toBe(1);
    expect(sampleValue(metrics, 'skillsmith_intake_lag_seconds_count', { tenant: 'acme' })).toBe(3);
    // Each run completed an hour before it was reported: every observation is past the 900 s bucket.
    expect(sampleValue(metrics, 'skillsmith_intake_lag_seconds_bucket', { tenant: 'acme', le: '900' })).toBe(0);
    expect(sampleValue(metrics, 'skillsmith_intake_lag_seconds_bucket', { tenant: 'acme', le: '21600' })).toBe(3);
    expect(sampleValue(metrics, 'skillsmith_intake_lag_seconds_sum', { tenant: 'acme' })).toBeGreaterThanOrEqual(3 * 3600);
    const lastStored = sampleValue(metrics, 'skillsmith_intake_last_stored_timestamp_seconds', { tenant: 'acme' })!;
    expect(Math.abs(lastStored - Date.now() / 1000)).toBeLessThan(600);
  });

  it('process metrics: CPU, memory and the event loop of the API process', async () => {
    const metrics = await scrape();
    expect(sampleValue(metrics, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(sampleValue(metrics, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(sampleValue(metrics, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    expect(metrics.types.get('nodejs_eventloop_lag_seconds')).toBe('gauge');
  });

  it("a token sees its own tenant's series only; the public setting serves every tenant without a token", async () => {
    const globex = await scrape(harness.app, bearer(globexScraper));
    expect(globex.samples.some((sample) => sample.labels.tenant === 'acme')).toBe(false);
    expect(sampleValue(globex, 'skillsmith_eval_pairs', { tenant: 'globex', authoring_version: 'metrics-test' })).toBe(2);
    const acme = await scrape();
    expect(acme.samples.some((sample) => sample.labels.tenant === 'globex')).toBe(false);

    const open = await scrape(publicApp, {});
    expect(sampleValue(open, 'skillsmith_eval_pairs', { tenant: 'globex', authoring_version: 'metrics-test' })).toBe(2);
    expect(sampleValue(open, 'skillsmith_eval_pairs', { tenant: 'acme', authoring_version: 'metrics-test' })).toBe(40);
  });

  it('every per-tenant gauge has a sample for the provoked tenant', async () => {
    const metrics = await scrape();
    const missing = Object.keys(TENANT_GAUGES).filter(
      (name) => !metrics.samples.some((sample) => sample.name === name && sample.labels.tenant === 'acme'),
    );
    expect(missing).toEqual([]);
  });

  it('`skillsmith metrics --json` prints the same numbers, its earlier fields unchanged', async () => {
    const printed = await runSkillsmith(['metrics', '--tenant', 'acme', '--json'], {
      DATABASE_URL: harness.database.url,
      SKILLSMITH_LOG_LEVEL: 'silent',
      NODE_NO_WARNINGS: '1',
    });
    expect(printed.code, printed.stderr).toBe(0);
    const metrics = JSON.parse(printed.stdout) as TenantMetrics;
    expect(Object.keys(metrics)).toEqual(expect.arrayContaining(['tenantId', 'denials', 'conflicts', 'writes', 'approvals', 'loads']));
    expect(metrics.catalog).toEqual({ sessions: 2, droppedEntries: 4, sessionsWithDrops: 2 });
    expect(metrics.selection).toEqual({ sessionsWithCatalog: 2, sessionsWithLoad: 1, rate: 0.5 });
    expect(metrics.skills[0]).toMatchObject({ name: 'step-00', loads: 1, runs: 2, completedRuns: 1, completionRate: 0.5 });
    expect(metrics.conflictRate).toEqual({ conflicts: 1, revisionCheckedWrites: 2, rate: 0.5 });
    expect(metrics.revisions.byMonth).toContainEqual({ name: 'rotate-key', month: new Date().toISOString().slice(0, 7), revisions: 2 });
    expect(metrics.evalDelta).toEqual([expect.objectContaining({ combination, n: 40, b: 10, c: 2, improvement: 0.2 })]);
    expect(metrics.passes.counts).toMatchObject({ clusters: 3, qualifying: 2, added: 1, skipped: 1 });
    const human = await runSkillsmith(['metrics', '--tenant', 'acme'], {
      DATABASE_URL: harness.database.url,
      SKILLSMITH_LOG_LEVEL: 'silent',
    });
    expect(human.stdout).toContain('skill selection rate: 50.0 %');
    expect(human.stdout).toContain('conflict rate on expected_revision: 50.0 % (1 of 2)');
  });
});

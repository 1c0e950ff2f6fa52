import { RUNS_STORED_SIGNAL } from '../../src/contracts/intake-contract.ts';
import { defaultPayloadConverter } from '@temporalio/common';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { findRun } from '../../src/runs/run-repository.ts';
import { listSkillEvents } from '../../src/store/skill-event-repository.ts';
import { activateTenants } from '../support/rollout.ts';
import { bearer, openApiHarness, token, type ApiHarness } from './api-harness.ts';

const writer = token('acme', ['skill.write', 'run.write', 'approval.read', 'approval.resolve'], 'acme-runtime');
const readOnly = token('acme', ['skill.read']);
const other = token('globex', ['run.write']);

const skillMd = (name: string, step: string) =>
  `---\nname: ${name}\ndescription: Rotate an integration's API key.\nlicense: Apache-2.0\nmetadata:\n  version: 1.0.0\n---\n\n1. ${step}\n`;

const runReport = (runId: string, extra: Record<string, unknown> = {}) => ({
  agentId: 'agent-1',
  runId,
  goal: 'Rotate the payments API key',
  status: 'completed',
  startedAt: '2026-11-01T10:00:00Z',
  completedAt: '2026-11-01T10:01:00Z',
  toolCalls: [{ tool: 'keys.rotate', success: true }],
  ...extra,
});

describe('POST /v1/runs, /v1/skills/manage and the approvals routes', () => {
  let harness: ApiHarness;
  let approvalsHarness: ApiHarness;
  let connection: Connection;

  beforeAll(async () => {
    const env = { SKILLSMITH_AUTHORING_ENABLED: 'true', TEMPORAL_TASK_QUEUE: `api-runs-${Date.now()}` };
    harness = await openApiHarness([writer, readOnly, other], { env, temporalAddress: inject('temporalAddress') });
    approvalsHarness = await openApiHarness([writer], { env: { ...env, SKILLSMITH_APPROVAL_PROFILE: 'skill_authoring' } });
    for (const opened of [harness, approvalsHarness]) await activateTenants(opened.services.rollout, ['acme', 'globex']);
    connection = await Connection.connect({ address: inject('temporalAddress') });
  });
  afterAll(async () => {
    await connection?.close();
    await harness?.close();
    await approvalsHarness?.close();
  });

  /** The run ids the `runsStored` signals of an intake carried. */
  const signalledRunIds = async (workflowId: string) => {
    const history = await new Client({ connection }).workflow.getHandle(workflowId).fetchHistory();
    return (history.events ?? [])
      .filter((event) => event.workflowExecutionSignaledEventAttributes?.signalName === RUNS_STORED_SIGNAL)
      .flatMap((event) => {
        const [payload] = event.workflowExecutionSignaledEventAttributes?.input?.payloads ?? [];
        return payload ? defaultPayloadConverter.fromPayload<{ runIds: string[] }>(payload).runIds : [];
      });
  };

  it('stores a run no review can want (no procedures, reviews off) and starts no workflow: 202 with review "none"', async () => {
    const runId = `api-quiet-${Date.now()}`;
    const response = await harness.app.inject({
      method: 'POST',
      url: '/v1/runs',
      headers: bearer(writer),
      payload: runReport(runId, { agentId: 'agent-quiet' }),
    });
    expect(response.statusCode).toBe(202);
    // The workflowId stays the agent's deterministic intake id.
    expect(response.json()).toEqual({ runId, workflowId: 'intake/acme/agent-quiet', review: 'none' });
    expect(await findRun(harness.database.pool, 'acme', runId)).toMatchObject({ runId, agentId: 'agent-quiet' });
    // A run without a tool call is never reviewed either.
    const idle = await harness.app.inject({
      method: 'POST',
      url: '/v1/runs',
      headers: bearer(writer),
      payload: runReport(`${runId}-idle`, { agentId: 'agent-quiet', toolCalls: [] }),
    });
    expect(idle.json()).toMatchObject({ review: 'none' });
    await expect(new Client({ connection }).workflow.getHandle('intake/acme/agent-quiet').describe()).rejects.toThrow(/not found/i);
  });

  it('stores a run a review wants (it pinned a skill) (202 review "scheduled"), then signals the intake workflow with only its id', async () => {
    const runId = `api-run-${Date.now()}`;
    const pinned = { skillPins: [{ name: 'rotate-key', revision: 1, contentSha256: 'a'.repeat(64) }] };
    const response = await harness.app.inject({
      method: 'POST',
      url: '/v1/runs',
      headers: bearer(writer),
      payload: runReport(runId, pinned),
    });
    expect(response.statusCode).toBe(202);
    expect(response.json()).toEqual({ runId, workflowId: 'intake/acme/agent-1', review: 'scheduled' });
    expect(await findRun(harness.database.pool, 'acme', runId)).toMatchObject({ runId, agentId: 'agent-1' });
    // Runs stored while a signal is in flight share the next one: `runsStored` with their ids.
    expect(await signalledRunIds('intake/acme/agent-1')).toContain(runId);
  });

  it('refuses a report for another tenant, an invalid report and a missing scope, before anything is sent', async () => {
    const mismatch = await harness.app.inject({
      method: 'POST',
      url: '/v1/runs',
      headers: bearer(writer),
      payload: runReport('x', { tenantId: 'globex' }),
    });
    expect(mismatch.statusCode).toBe(403);
    expect(mismatch.json().error.code).toBe('TenantMismatch');
    const invalid = await harness.app.inject({
      method: 'POST',
      url: '/v1/runs',
      headers: bearer(writer),
      payload: runReport('y', { status: 'finished' }),
    });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json().error).toMatchObject({ code: 'RunReportInvalid', message: expect.stringMatching(/status/) });
    const scope = await harness.app.inject({ method: 'POST', url: '/v1/runs', headers: bearer(readOnly), payload: runReport('z') });
    expect(scope.statusCode).toBe(403);
    expect(scope.json().error.code).toBe('ScopeMissing');
    await expect(new Client({ connection }).workflow.getHandle('intake/globex/agent-1').describe()).rejects.toThrow(/not found/i);
  });

  it('runs skill_manage with the token principal: a USER turn installs, an untrusted turn is denied with an event', async () => {
    const installed = await harness.app.inject({
      method: 'POST',
      url: '/v1/skills/manage',
      headers: bearer(writer),
      payload: {
        invocationId: 'inv-1',
        runId: 'run-1',
        originTrust: 'user',
        request: { operation: 'create', name: 'rotate-key', package: { files: { 'SKILL.md': skillMd('rotate-key', 'Rotate it.') } } },
      },
    });
    expect(installed.statusCode).toBe(200);
    expect(installed.json()).toMatchObject({ status: 'installed', name: 'rotate-key', revision: 1, replayed: false });
    const revision = await harness.skills.resolve('acme', 'rotate-key');
    expect(revision.authoredBy).toMatchObject({ principalId: 'acme-runtime', runId: 'run-1', invocationId: 'inv-1' });

    const denied = await harness.app.inject({
      method: 'POST',
      url: '/v1/skills/manage',
      headers: bearer(writer),
      payload: {
        invocationId: 'inv-2',
        runId: 'run-2',
        originTrust: 'untrusted',
        taint: 'read a web page',
        request: { operation: 'patch', name: 'rotate-key', expectedRevision: 1, skillMd: skillMd('rotate-key', 'Injected.') },
      },
    });
    expect(denied.statusCode).toBe(403);
    expect(denied.json().error.code).toBe('SkillAuthoringDenied');
    const events = await listSkillEvents(harness.database.pool, 'acme', { kind: 'authoring.denied' });
    expect(events).toEqual([expect.objectContaining({ reason: 'origin_trust', runId: 'run-2' })]);

    const stale = await harness.app.inject({
      method: 'POST',
      url: '/v1/skills/manage',
      headers: bearer(writer),
      payload: {
        invocationId: 'inv-3',
        runId: 'run-3',
        originTrust: 'user',
        request: { operation: 'patch', name: 'rotate-key', expectedRevision: 7, skillMd: skillMd('rotate-key', 'Late.') },
      },
    });
    expect(stale.statusCode).toBe(409);
    expect(stale.json().error).toMatchObject({ code: 'SkillRevisionConflict', details: { currentRevision: 1 } });
    const unknownField = await harness.app.inject({
      method: 'POST',
      url: '/v1/skills/manage',
      headers: bearer(writer),
      payload: {
        invocationId: 'inv-4',
        runId: 'run-4',
        originTrust: 'user',
        tenantId: 'globex',
        request: { operation: 'archive', name: 'rotate-key', expectedRevision: 1 },
      },
    });
    expect(unknownField.statusCode).toBe(400);
  });

  it('queues writes for approval under the skill_authoring profile, lists them with their diff, and installs on approve', async () => {
    const pending = await approvalsHarness.app.inject({
      method: 'POST',
      url: '/v1/skills/manage',
      headers: bearer(writer),
      payload: {
        invocationId: 'inv-a',
        runId: 'run-a',
        originTrust: 'user',
        request: { operation: 'create', name: 'rotate-key', package: { files: { 'SKILL.md': skillMd('rotate-key', 'Rotate it.') } } },
      },
    });
    expect(pending.json()).toMatchObject({ status: 'pending_approval', proposedRevision: 1 });
    const listed = await approvalsHarness.app.inject({ method: 'GET', url: '/v1/approvals?status=pending', headers: bearer(writer) });
    const [approval] = listed.json().approvals;
    expect(approval).toMatchObject({ skillName: 'rotate-key', status: 'pending', proposedRevision: 1 });
    expect(approval.diff).toContain('+1. Rotate it.');
    await expect(approvalsHarness.skills.resolve('acme', 'rotate-key')).rejects.toThrow(/rotate-key/);

    const resolved = await approvalsHarness.app.inject({
      method: 'POST',
      url: `/v1/approvals/${approval.id}/resolve`,
      headers: bearer(writer),
      payload: { decision: 'approve' },
    });
    expect(resolved.statusCode).toBe(200);
    expect(resolved.json()).toMatchObject({ status: 'approved', installedRevision: 1, resolvedBy: 'acme-runtime' });
    expect((await approvalsHarness.skills.resolve('acme', 'rotate-key')).revision).toBe(1);
    const again = await approvalsHarness.app.inject({
      method: 'POST',
      url: `/v1/approvals/${approval.id}/resolve`,
      headers: bearer(writer),
      payload: { decision: 'reject' },
    });
    expect(again.statusCode).toBe(409);
    const missing = await approvalsHarness.app.inject({
      method: 'POST',
      url: '/v1/approvals/00000000-0000-0000-0000-000000000000/resolve',
      headers: bearer(writer),
      payload: { decision: 'approve' },
    });
    expect(missing.statusCode).toBe(404);
  });
});

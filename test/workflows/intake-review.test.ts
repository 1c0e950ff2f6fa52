import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reportRunCompleted, RunReportInvalid, RunReportTooLarge } from '../../src/client/run-intake-client.ts';
import { listProcedures, setProcedureEnabled } from '../../src/procedures/procedure-repository.ts';
import { findReview } from '../../src/review/review-repository.ts';
import { countRuns } from '../../src/runs/run-repository.ts';
import { listSkillEvents } from '../../src/store/skill-event-repository.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';
import { startScriptedLlm, type ChatCompletionRequest, type ScriptedAnswer, type ScriptedLlm } from '../support/scripted-llm.ts';
import { ingest, startSynthesisHarness, synthesisTestConfig, taskRuns, type SynthesisHarness } from '../support/synthesis-harness.ts';
import { requireTestModel } from '../support/test-model.ts';
import { until } from '../support/until.ts';
import { activateTenants } from '../support/rollout.ts';

const ROTATE_TOOLS = ['secrets.read', 'keys.rotate', 'secrets.write'];
const ROTATE_GOALS = [
  'Rotate the API key for the payments integration',
  'Please rotate the payments integration API key',
  'Rotate our payments API key',
];

const skillMd = (name: string, step: string) =>
  `---\nname: ${name}\ndescription: Rotate an integration's API key.\nlicense: Apache-2.0\nmetadata:\n  version: 1.1.0\n---\n\n1. ${step}\n\n## Edge cases\n- Stop on error.\n`;

let sequence = 0;
const report = (tenantId: string, overrides: Record<string, unknown> = {}) => ({
  tenantId,
  agentId: 'agent-7',
  runId: `run-${Date.now()}-${sequence++}`,
  goal: 'Rotate the payments API key',
  status: 'completed',
  startedAt: '2026-11-01T10:00:00Z',
  completedAt: '2026-11-01T10:01:00Z',
  toolCalls: ROTATE_TOOLS.map((tool) => ({ tool, success: true })),
  ...overrides,
});

describe('run intake, the track record and the background review', () => {
  let database: TestDatabase;
  let llm: ScriptedLlm;
  let harness: SynthesisHarness;
  /** What the reviewer answers, turn by turn, per run id. */
  let reviewer: (request: ChatCompletionRequest) => ScriptedAnswer;
  const review = (request: ChatCompletionRequest) => request.messages[0]!.content.startsWith('You review a finished run');

  beforeAll(async () => {
    await requireTestModel();
    database = await openTestDatabase();
    reviewer = () => ({ content: JSON.stringify({ done: true, decision: 'none', summary: 'nothing to keep' }) });
    llm = await startScriptedLlm((request) => (review(request) ? reviewer(request) : { content: 'SKIP' }));
    const config = synthesisTestConfig({ llmBaseUrl: llm.baseUrl, taskQueue: `intake-${Date.now()}` });
    harness = await startSynthesisHarness(database, {
      ...config,
      synthesis: { ...config.synthesis, distiller: 'extractive', minOccurrences: 3, minSuccessRate: 0.8 },
      authoring: { ...config.authoring, enabled: true, reviewEnabled: true },
    });
    // Every tenant here but 'not-activated' is activated for the current combination.
    await activateTenants(harness.services.rollout, [
      'intake-once',
      'intake-refused',
      'track',
      'review-patch',
      'confined',
      'never-fatal',
      'continue',
    ]);
  });

  afterAll(async () => {
    await harness?.close();
    await llm?.close();
    await database?.close();
  });

  const send = (body: unknown) => reportRunCompleted(harness.client, body, { taskQueue: harness.config.temporal.taskQueue });
  const recorded = (tenantId: string, runId: string) =>
    until(`run ${runId}`, async () =>
      (await database.pool.query('SELECT 1 FROM runs WHERE tenant_id = $1 AND run_id = $2', [tenantId, runId])).rowCount ? true : undefined,
    );
  const reviewed = (tenantId: string, runId: string) =>
    until(`review of ${runId}`, async () => {
      const record = await findReview(database.pool, tenantId, runId);
      return record && record.status !== 'running' ? record : undefined;
    });

  it('records a signalled run once and reviews it once, however often it is reported', async () => {
    const tenantId = 'intake-once';
    const body = report(tenantId);
    const first = await send(body);
    expect(first.workflowId).toBe(`intake/${tenantId}/agent-7`);
    await send(body);
    await send(body);
    await recorded(tenantId, body.runId);
    const review = await reviewed(tenantId, body.runId);
    expect(review).toMatchObject({ status: 'completed', decision: 'none' });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await countRuns(database.pool, tenantId)).toMatchObject({ runs: 1 });
    const reviews = await database.pool.query('SELECT count(*)::int AS n FROM reviews WHERE tenant_id = $1', [tenantId]);
    expect(reviews.rows[0].n).toBe(1);
    // The review row is written by an activity before the workflow closes: wait for it to close.
    const handle = harness.client.workflow.getHandle(`review/${tenantId}/${body.runId}`);
    await handle.result();
    expect((await handle.describe()).status.name).toBe('COMPLETED');
    if (process.env.SKILLSMITH_RECORD_HISTORIES) {
      // Refreshes the replay fixture after an intended workflow change (test/workflows/replay.test.ts).
      const { recordHistory } = await import('../support/histories.ts');
      const intake = harness.client.workflow.getHandle(`intake/${tenantId}/agent-7`);
      await recordHistory('run-intake', intake.workflowId, await intake.fetchHistory());
    }
  });

  it('starts no LLM review for a tenant that is not activated, and reviews once an operator activates it', async () => {
    const tenantId = 'not-activated';
    const before = report(tenantId);
    await send(before);
    await recorded(tenantId, before.runId);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await findReview(database.pool, tenantId, before.runId)).toBeUndefined();

    await activateTenants(harness.services.rollout, [tenantId]);
    const after = report(tenantId);
    await send(after);
    expect(await reviewed(tenantId, after.runId)).toMatchObject({ status: 'completed', decision: 'none' });
  });

  it('refuses a bad report and an oversized one on the client side, sending nothing', async () => {
    const tenantId = 'intake-refused';
    await expect(send(report(tenantId, { status: 'finished' }))).rejects.toThrow(RunReportInvalid);
    await expect(send(report(tenantId, { status: 'finished' }))).rejects.toThrow(/status: /);
    const huge = report(tenantId, {
      toolCalls: Array.from({ length: 60 }, (_, index) => ({ tool: 'fs.read', success: true, args: { blob: 'x'.repeat(60_000), index } })),
    });
    await expect(send(huge)).rejects.toThrow(RunReportTooLarge);
    await expect(send(huge)).rejects.toThrow(/bytes as JSON, over the \d+-byte limit/);
    await expect(harness.client.workflow.getHandle(`intake/${tenantId}/agent-7`).describe()).rejects.toThrow(/not found/i);
  });

  it('keeps the track record of the procedures a run used and disables one that starts failing', async () => {
    const tenantId = 'track';
    await ingest(database, taskRuns('learn', ROTATE_GOALS, ROTATE_TOOLS, { tenantId }), tenantId);
    const pass = await harness.runPass({ tenantId });
    expect(pass.record.counts.added).toBe(1);
    const [procedure] = await listProcedures(database.pool, tenantId);
    const pins = [{ name: procedure!.name, revision: procedure!.revision, contentSha256: 'a'.repeat(64) }];

    const success = report(tenantId, { skillPins: pins });
    await send(success);
    await reviewed(tenantId, success.runId);
    let [after] = await listProcedures(database.pool, tenantId);
    expect(after).toMatchObject({
      attemptCount: procedure!.attemptCount + 1,
      successCount: procedure!.successCount + 1,
      observedAttempts: 1,
      observedSuccesses: 1,
    });
    expect(after!.lastUsedAt).not.toBeNull();

    for (let index = 0; index < 2; index++) {
      const failed = report(tenantId, {
        skillPins: pins,
        status: 'failed',
        toolCalls: [{ tool: 'keys.rotate', success: false, error: 'denied' }],
      });
      await send(failed);
      await reviewed(tenantId, failed.runId);
    }
    [after] = await listProcedures(database.pool, tenantId);
    expect(after).toMatchObject({ observedAttempts: 3, observedSuccesses: 1, enabled: false });
    const events = await listSkillEvents(database.pool, tenantId, { kind: 'procedure.disabled' });
    expect(events).toEqual([expect.objectContaining({ name: procedure!.name, reason: 'success_rate' })]);
    expect(harness.logLines.some((line) => /procedure .* disabled: 1\/3 observed successes is below 0\.8/.test(line))).toBe(true);

    const enabled = await setProcedureEnabled(database.pool, tenantId, procedure!.name, true);
    expect(enabled).toMatchObject({ enabled: true, observedAttempts: 0, observedSuccesses: 0 });
  });

  it('lets the reviewer load and patch an agent skill through skill_manage, with review provenance', async () => {
    const tenantId = 'review-patch';
    const { skills } = harness.services;
    const created = await skills.install(
      tenantId,
      { directoryName: 'rotate-key', files: new Map([['SKILL.md', new TextEncoder().encode(skillMd('rotate-key', 'Rotate the key.'))]]) },
      { source: 'agent', authoredBy: { runId: 'seed', principalId: 'seed', invocationId: `seed-${Date.now()}`, idempotencyKey: 'k' } },
    );
    const body = report(tenantId);
    reviewer = (request) => {
      const user = request.messages[1]!.content;
      if (!user.includes('Your answer:'))
        return { content: JSON.stringify({ calls: [{ tool: 'skill.load', args: { name: 'rotate-key' } }] }) };
      if (!user.includes('"skill_manage"')) {
        return {
          content: JSON.stringify({
            calls: [
              {
                tool: 'skill_manage',
                args: {
                  operation: 'patch',
                  name: 'rotate-key',
                  expectedRevision: created.revision,
                  skillMd: skillMd('rotate-key', 'Read the secret, rotate the key, write it back.'),
                },
              },
            ],
          }),
        };
      }
      return { content: JSON.stringify({ done: true, decision: 'patch', summary: 'added the read and write steps' }) };
    };
    await send(body);
    const record = await reviewed(tenantId, body.runId);
    expect(record).toMatchObject({ status: 'completed', decision: 'patch' });
    const patched = await skills.resolve(tenantId, 'rotate-key');
    expect(patched.revision).toBe(created.revision + 1);
    expect(patched.body).toContain('Read the secret, rotate the key');
    expect(patched.authoredBy).toMatchObject({ principalId: 'skillsmith:review', runId: `review/${tenantId}/${body.runId}` });
  });

  it('gate.skill.review_confined: an outside tool, a write before read, a non-agent skill and an archive are each denied', async () => {
    const tenantId = 'confined';
    const { skills } = harness.services;
    await skills.install(
      tenantId,
      {
        directoryName: 'ops-runbook',
        files: new Map([['SKILL.md', new TextEncoder().encode(skillMd('ops-runbook', 'Page the on-call.'))]]),
      },
      { source: 'operator' },
    );
    const agent = await skills.install(
      tenantId,
      { directoryName: 'rotate-key', files: new Map([['SKILL.md', new TextEncoder().encode(skillMd('rotate-key', 'Rotate the key.'))]]) },
      {
        source: 'agent',
        authoredBy: { runId: 'seed', principalId: 'seed', invocationId: `seed-confined-${Date.now()}`, idempotencyKey: 'k' },
      },
    );
    const attempts: Array<[string, object, string]> = [
      ['outside tool', { tool: 'web.fetch', args: { url: 'http://example.invalid' } }, 'outside_tool'],
      [
        'patch before load',
        {
          tool: 'skill_manage',
          args: { operation: 'patch', name: 'rotate-key', expectedRevision: agent.revision, skillMd: skillMd('rotate-key', 'x') },
        },
        'read_before_write',
      ],
      [
        'patch of an operator skill',
        {
          tool: 'skill_manage',
          args: { operation: 'patch', name: 'ops-runbook', expectedRevision: 1, skillMd: skillMd('ops-runbook', 'x') },
        },
        'source',
      ],
      [
        'archive',
        { tool: 'skill_manage', args: { operation: 'archive', name: 'rotate-key', expectedRevision: agent.revision } },
        'review_archive',
      ],
    ];
    for (const [label, call, reason] of attempts) {
      const body = report(tenantId);
      reviewer = (request) =>
        request.messages[1]!.content.includes('Your answer:')
          ? { content: JSON.stringify({ done: true, decision: 'none' }) }
          : { content: JSON.stringify({ calls: [call] }) };
      await send(body);
      const record = await reviewed(tenantId, body.runId);
      expect(record.status, label).toBe('completed');
      expect((record.detail as { calls: unknown[] }).calls, label).toEqual([{ tool: (call as { tool: string }).tool, ok: false, reason }]);
    }
    const events = await listSkillEvents(database.pool, tenantId);
    const reasons = events
      .filter((event) => event.kind === 'review.denied' || event.kind === 'authoring.denied')
      .map((event) => event.reason);
    expect(reasons.sort()).toEqual(['outside_tool', 'read_before_write', 'review_archive', 'source']);
    expect((await skills.resolve(tenantId, 'rotate-key')).revision).toBe(agent.revision);
    expect((await skills.resolve(tenantId, 'ops-runbook')).revision).toBe(1);
  });

  it('gate.skill.review_never_fatal: a reviewer that answers garbage fails its review exactly once, and the intake goes on', async () => {
    const tenantId = 'never-fatal';
    reviewer = () => ({ content: 'I think this run went great!' });
    const body = report(tenantId);
    await send(body);
    const record = await reviewed(tenantId, body.runId);
    expect(record).toMatchObject({ status: 'failed' });
    expect(record.error).toMatch(/ReviewAnswerMalformed: the reviewer did not answer with JSON/);
    const failures = harness.logLines.filter((line) => line.includes(`review of run ${body.runId} failed`));
    expect(failures).toHaveLength(1);
    expect(JSON.parse(failures[0]!).level).toBe(50);
    // The review row is written by an activity before the workflow closes: wait for it to close.
    const handle = harness.client.workflow.getHandle(`review/${tenantId}/${body.runId}`);
    await handle.result();
    expect((await handle.describe()).status.name).toBe('COMPLETED');

    // the parent and its records are untouched: the run is there, and the next report is recorded
    reviewer = () => ({ content: JSON.stringify({ done: true, decision: 'none' }) });
    const next = report(tenantId);
    await send(next);
    await recorded(tenantId, next.runId);
    expect(await countRuns(database.pool, tenantId)).toMatchObject({ runs: 2 });
    const intake = await harness.client.workflow.getHandle(`intake/${tenantId}/agent-7`).describe();
    expect(intake.status.name).toBe('RUNNING');
  });

  it('continues as new past its history limit without losing a report', async () => {
    const tenantId = 'continue';
    await harness.client.workflow.start('runIntake', {
      workflowId: `intake/${tenantId}/agent-7`,
      taskQueue: harness.config.temporal.taskQueue,
      args: [{ tenantId, agentId: 'agent-7', historyLimit: 30 }],
    });
    const bodies = Array.from({ length: 60 }, () => report(tenantId, { toolCalls: [] }));
    for (const body of bodies) await send(body);
    await until('all 60 runs', async () => ((await countRuns(database.pool, tenantId)).runs === 60 ? true : undefined));
    const handle = harness.client.workflow.getHandle(`intake/${tenantId}/agent-7`);
    const runs = [];
    for await (const execution of harness.client.workflow.list({ query: `WorkflowId = 'intake/${tenantId}/agent-7'` }))
      runs.push(execution);
    expect(runs.length).toBeGreaterThan(1);
    expect((await handle.describe()).status.name).toBe('RUNNING');
  });
});

import { temporal } from '@temporalio/proto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiTokenEntry } from '../../src/api/auth.ts';
import { buildApiServer, type ApiApp } from '../../src/api/server.ts';
import { createRunIntake } from '../../src/app/run-intake.ts';
import { MAX_REPORT_PAYLOAD_BYTES, reportRunCompleted } from '../../src/client/run-intake-client.ts';
import { TemporalUnavailable } from '../../src/client/temporal-unavailable.ts';
import { countRuns, findRun } from '../../src/runs/run-repository.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';
import { startSynthesisHarness, synthesisTestConfig, type SynthesisHarness } from '../support/synthesis-harness.ts';
import { until } from '../support/until.ts';

/**
 * A 202 means the run is durable: reports near the payload limit are all stored (over the API and
 * over the Temporal signal), the intake keeps taking reports after them, a report too large is
 * refused at the door naming the limit, and re-reporting a run is idempotent per tenant + runId.
 */

const writer: ApiTokenEntry = {
  token: 'tok-lossless-run-write-0123456789abcdef',
  tenantId: 'lossless',
  principal: 'runtime',
  scopes: ['run.write'],
};
const otherTenant: ApiTokenEntry = {
  token: 'tok-lossless-other-run-write-0123456789',
  tenantId: 'lossless-b',
  principal: 'runtime',
  scopes: ['run.write'],
};

let sequence = 0;
/** A valid run report of about `kilobytes` KB as JSON (tool call args are capped at 64 KiB each). */
function report(runId: string, kilobytes: number, overrides: Record<string, unknown> = {}) {
  const calls = Math.ceil(kilobytes / 60);
  return {
    agentId: 'agent-big',
    runId,
    goal: 'Export the quarterly ledger',
    status: 'completed',
    startedAt: '2026-11-01T10:00:00Z',
    completedAt: '2026-11-01T10:01:00Z',
    toolCalls: Array.from({ length: calls }, (_, index) => ({
      tool: 'ledger.export',
      success: true,
      args: { page: index, blob: 'x'.repeat(Math.min(60_000, Math.floor((kilobytes * 1000) / calls))) },
    })),
    ...overrides,
  };
}

describe('a lossless run intake', () => {
  let database: TestDatabase;
  let harness: SynthesisHarness;
  let api: ApiApp;

  beforeAll(async () => {
    database = await openTestDatabase();
    const config = synthesisTestConfig({ taskQueue: `intake-lossless-${Date.now()}` });
    // A body limit above the payload limit, so the intake's own limit is what refuses.
    harness = await startSynthesisHarness(database, { ...config, api: { ...config.api, bodyLimitBytes: 4 * 1024 * 1024 } });
    api = await buildApiServer({ ...harness.services, tokens: [writer, otherTenant] });
  });

  afterAll(async () => {
    await api?.close();
    await harness?.close();
    await database?.close();
  });

  const post = (token: ApiTokenEntry, body: unknown) =>
    api.inject({ method: 'POST', url: '/v1/runs', headers: { authorization: `Bearer ${token.token}` }, payload: body as object });
  /** Refreshes a replay fixture (test/workflows/replay.test.ts) once the intake is idle, after an intended workflow change. */
  const recordIntakeHistory = async (name: string, tenantId: string) => {
    if (!process.env.SKILLSMITH_RECORD_HISTORIES) return;
    const handle = harness.client.workflow.getHandle(`intake/${tenantId}/agent-big`);
    const history = await until(`intake/${tenantId} idle`, async () => {
      const fetched = await handle.fetchHistory();
      // Idle: waiting for a signal under the idle timer, nothing scheduled after it.
      const last = fetched.events?.at(-1)?.eventType;
      return last === temporal.api.enums.v1.EventType.EVENT_TYPE_TIMER_STARTED ? fetched : undefined;
    });
    const { recordHistory } = await import('../support/histories.ts');
    await recordHistory(name, handle.workflowId, history);
  };
  const stored = (tenantId: string, count: number) =>
    until(`${count} runs of ${tenantId}`, async () => ((await countRuns(database.pool, tenantId)).runs === count ? true : undefined), {
      timeoutMs: 30_000,
    });

  it('stores six ~900 KB reports posted to /v1/runs, and a small one posted after them', async () => {
    const runIds = Array.from({ length: 6 }, () => `api-big-${sequence++}`);
    const responses = await Promise.all(runIds.map((runId) => post(writer, report(runId, 900))));
    expect(responses.map((response) => response.statusCode)).toEqual([202, 202, 202, 202, 202, 202]);
    // A 202 means durable: the runs are stored by the time the answer arrives.
    expect((await countRuns(database.pool, 'lossless')).runs).toBe(6);
    const small = await post(writer, report(`api-small-${sequence++}`, 1));
    expect(small.statusCode).toBe(202);
    expect((await countRuns(database.pool, 'lossless')).runs).toBe(7);
    for (const runId of runIds) expect((await findRun(database.pool, 'lossless', runId))?.toolCalls).toHaveLength(15);
    await recordIntakeHistory('run-intake-stored', 'lossless');
  });

  it('records six ~900 KB reports signalled over Temporal, and a small one signalled after them', async () => {
    const tenantId = 'lossless-signal';
    const send = (body: object) =>
      reportRunCompleted(harness.client, { tenantId, ...body }, { taskQueue: harness.config.temporal.taskQueue });
    await Promise.all(Array.from({ length: 6 }, () => send(report(`signal-big-${sequence++}`, 900))));
    await stored(tenantId, 6);
    await send(report(`signal-small-${sequence++}`, 1));
    await stored(tenantId, 7);
    const intake = await harness.client.workflow.getHandle(`intake/${tenantId}/agent-big`).describe();
    expect(intake.status.name).toBe('RUNNING');
  });

  it('refuses a report over the payload limit at the door with 413 naming the limit, storing nothing', async () => {
    const runId = `api-huge-${sequence++}`;
    const response = await post(writer, report(runId, 2_100));
    expect(response.statusCode).toBe(413);
    expect(response.json().error).toMatchObject({
      code: 'RunReportTooLarge',
      message: expect.stringContaining(`over the ${MAX_REPORT_PAYLOAD_BYTES}-byte limit`),
    });
    expect(await findRun(database.pool, 'lossless', runId)).toBeUndefined();
    // Over the body limit: refused before parsing, also naming the limit.
    const overBody = await post(writer, report(`api-huger-${sequence++}`, 4_300));
    expect(overBody.statusCode).toBe(413);
    expect(overBody.json().error.message).toContain(`${4 * 1024 * 1024}-byte limit`);
  });

  it('is idempotent on tenant + runId: the same report again changes nothing, other content is refused, another tenant is separate', async () => {
    const runId = `api-same-${sequence++}`;
    const body = report(runId, 2);
    expect((await post(writer, body)).statusCode).toBe(202);
    const before = (await countRuns(database.pool, 'lossless')).runs;
    expect((await post(writer, body)).statusCode).toBe(202);
    expect((await countRuns(database.pool, 'lossless')).runs).toBe(before);
    const changed = await post(writer, { ...body, goal: 'Something else entirely' });
    expect(changed.statusCode).toBe(409);
    expect(changed.json().error.code).toBe('RunConflict');
    expect((await findRun(database.pool, 'lossless', runId))?.goal).toBe('Export the quarterly ledger');
    expect((await post(otherTenant, { ...body, goal: 'Another tenant, another run' })).statusCode).toBe(202);
    expect((await findRun(database.pool, 'lossless-b', runId))?.goal).toBe('Another tenant, another run');
  });

  it('refuses alone, and logs, a report the database cannot store: the rest of its batch is recorded and the intake goes on', async () => {
    const tenantId = 'lossless-poison';
    const send = (body: object) =>
      reportRunCompleted(harness.client, { tenantId, ...body }, { taskQueue: harness.config.temporal.taskQueue });
    // Valid by the contract, but PostgreSQL has no year 0.
    const poison = report(`poison-${sequence++}`, 1, { startedAt: '0000-01-01T00:00:00Z', completedAt: '0000-01-01T00:01:00Z' });
    const good = Array.from({ length: 3 }, () => report(`good-${sequence++}`, 1));
    await Promise.all([send(good[0]!), send(poison), send(good[1]!), send(good[2]!)]);
    await stored(tenantId, 3);
    await until("the refusal in skillsmith's log", async () =>
      harness.logLines.some((line) => line.includes(poison.runId) && line.includes('run report refused (invalid)')) ? true : undefined,
    );
    expect(await findRun(database.pool, tenantId, poison.runId)).toBeUndefined();
    const later = report(`good-${sequence++}`, 1);
    await send(later);
    await stored(tenantId, 4);
    await recordIntakeHistory('run-intake-bounded', tenantId);

    const posted = await post(
      writer,
      report(`api-poison-${sequence++}`, 1, { startedAt: '0000-01-01T00:00:00Z', completedAt: '0000-01-01T00:01:00Z' }),
    );
    expect(posted.statusCode).toBe(400);
    expect(posted.json().error).toMatchObject({ code: 'RunNotStorable', message: expect.stringContaining('the database refuses it') });
  });

  it('keeps a run stored when its intake cannot be signalled, answers 503 and logs it; reporting again signals', async () => {
    const logLines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => logLines.push(line) });
    const config = { ...harness.config, temporal: { ...harness.config.temporal, address: undefined } };
    // A run a review wants (it pinned a skill): the only kind whose intake is signalled.
    const skillPins = [{ name: 'ledger-export', revision: 1, contentSha256: 'b'.repeat(64) }];
    const body = { ...report(`unsignalled-${sequence++}`, 1, { skillPins }), tenantId: 'lossless' };
    const offline = createRunIntake({ config, pool: database.pool, logger, temporalAddress: undefined });
    await expect(offline(body)).rejects.toThrow(TemporalUnavailable);
    expect(await findRun(database.pool, 'lossless', body.runId)).toMatchObject({ runId: body.runId });
    expect(logLines.filter((line) => line.includes(body.runId) && line.includes('signalling its intake failed'))).toHaveLength(1);
    const online = createRunIntake({ config: harness.config, pool: database.pool, logger, temporalAddress: undefined });
    await expect(online(body)).resolves.toMatchObject({ workflowId: 'intake/lossless/agent-big', review: 'scheduled' });
  });
});

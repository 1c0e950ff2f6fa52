import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { countRuns, findRun } from '../../src/runs/run-repository.ts';
import { bearer, openApiHarness, token, type ApiHarness } from './api-harness.ts';

const writer = token('acme', ['run.write'], 'acme-runtime');
const fixture = (name: string) => readFileSync(fileURLToPath(new URL(`../fixtures/traces/${name}`, import.meta.url)), 'utf8');
const lines = (name: string): Array<Record<string, unknown>> =>
  fixture(name)
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('POST /v1/runs?format= (traces in the formats agents emit)', () => {
  let harness: ApiHarness;
  const post = (query: string, payload: unknown) =>
    harness.app.inject({ method: 'POST', url: `/v1/runs${query}`, headers: bearer(writer), payload: payload as object });

  beforeAll(async () => {
    harness = await openApiHarness([writer], {
      env: { TEMPORAL_TASK_QUEUE: `api-traces-${Date.now()}` },
      temporalAddress: inject('temporalAddress'),
    });
  });
  afterAll(async () => {
    await harness?.close();
  });

  it('stores an OpenAI transcript as a run of the token tenant (202 naming the format and the run); posting it again changes nothing', async () => {
    const transcript = lines('openai-chat.jsonl')[0];
    const response = await post('?format=openai', transcript);
    expect(response.statusCode, response.body).toBe(202);
    const runId = 'openai:chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG';
    expect(response.json()).toEqual({
      runId,
      workflowId: 'intake/acme/openai',
      // The tenant has no procedures and reviews are off: no review wants the run, nothing is signalled.
      review: 'none',
      format: 'openai',
      runs: [{ runId, workflowId: 'intake/acme/openai', review: 'none' }],
    });
    expect(await findRun(harness.database.pool, 'acme', runId)).toMatchObject({
      goal: 'Rotate the payments API key and redeploy the checkout service',
    });
    const before = await countRuns(harness.database.pool, 'acme');
    expect((await post('?format=openai', transcript)).statusCode).toBe(202);
    expect(await countRuns(harness.database.pool, 'acme')).toEqual(before);
  });

  it('stores Anthropic messages under the agentId asked for, and an OTLP export as one run per trace', async () => {
    const anthropic = await post('?format=anthropic&agentId=support-bot', lines('anthropic-messages.jsonl')[0]);
    expect(anthropic.statusCode, anthropic.body).toBe(202);
    expect(anthropic.json()).toMatchObject({
      runId: 'anthropic:msg_01Aq9w938a90dw8q',
      workflowId: 'intake/acme/support-bot',
      format: 'anthropic',
    });
    expect(await findRun(harness.database.pool, 'acme', 'anthropic:msg_01Aq9w938a90dw8q')).toMatchObject({ agentId: 'support-bot' });

    // Both export batches of the fixture in one request body.
    const [first, second] = lines('otel-genai.jsonl') as Array<{ resourceSpans: unknown[] }>;
    const otel = await post('?format=otel', { resourceSpans: [...first!.resourceSpans, ...second!.resourceSpans] });
    expect(otel.statusCode, otel.body).toBe(202);
    expect(otel.json()).toEqual({
      runId: 'otel:4bf92f3577b34da6a3ce929d0e0e4736',
      workflowId: 'intake/acme/ops-agent',
      review: 'none',
      format: 'otel',
      runs: [
        { runId: 'otel:4bf92f3577b34da6a3ce929d0e0e4736', workflowId: 'intake/acme/ops-agent', review: 'none' },
        { runId: 'otel:0af7651916cd43dd8448eb211c80319c', workflowId: 'intake/acme/ops-agent', review: 'none' },
      ],
    });
    expect(await findRun(harness.database.pool, 'acme', 'otel:0af7651916cd43dd8448eb211c80319c')).toMatchObject({ status: 'failed' });
  });

  it('with format=auto detects the body and says which format it read; a run report stays a run report', async () => {
    const responses = await post('?format=auto', JSON.parse(fixture('openai-responses.json')));
    expect(responses.statusCode, responses.body).toBe(202);
    expect(responses.json()).toMatchObject({ runId: 'openai:resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b', format: 'openai' });
    const report = await post('?format=auto', { ...lines('mixed.jsonl')[0], runId: 'api-auto-report' });
    expect(report.statusCode, report.body).toBe(202);
    expect(report.json()).toEqual({ runId: 'api-auto-report', workflowId: 'intake/acme/ops-agent', review: 'none', format: 'run-report' });
  });

  it('keeps the default contract: without format a body is a run report, and a transcript is refused as one (400)', async () => {
    const response = await post('', lines('anthropic-messages.jsonl')[0]);
    expect(response.statusCode).toBe(400);
    expect(response.json().error.code).toBe('RunReportInvalid');
    expect((await post('?format=gemini', lines('anthropic-messages.jsonl')[0])).statusCode).toBe(400);
  });

  it('refuses a trace that makes no run with 422 TraceNotConvertible naming the format, the record and why, storing nothing', async () => {
    const before = await countRuns(harness.database.pool, 'acme');
    const [noGoal, noTools, noToolSpans, unknown] = lines('refusals.jsonl');
    const cases = [
      {
        query: '?format=openai',
        body: noGoal,
        details: { format: 'openai', record: 'completion chatcmpl-nogoal', reason: 'no user message with text to take the goal from' },
      },
      {
        query: '?format=auto',
        body: noTools,
        details: { format: 'anthropic', record: 'message msg_notools', reason: 'no tool calls: no assistant message has a tool_use block' },
      },
      {
        query: '?format=otel',
        body: noToolSpans,
        details: {
          format: 'otel',
          record: 'trace 11111111111111111111111111111111',
          reason: expect.stringMatching(/^no tool calls: no execute_tool span/),
        },
      },
      {
        query: '?format=auto',
        body: unknown,
        details: { format: 'auto', record: '(record)', reason: expect.stringMatching(/^not a recognised record/) },
      },
      {
        query: '?format=anthropic',
        body: [{ role: 'user', content: 42 }],
        details: { format: 'anthropic', record: '(record)', reason: expect.stringMatching(/^not an Anthropic Messages transcript/) },
      },
    ];
    for (const { query, body, details } of cases) {
      const response = await post(query, body);
      expect(response.statusCode, response.body).toBe(422);
      expect(response.json().error).toEqual({ code: 'TraceNotConvertible', message: expect.stringContaining(details.record), details });
    }
    expect(await countRuns(harness.database.pool, 'acme')).toEqual(before);
  });
});

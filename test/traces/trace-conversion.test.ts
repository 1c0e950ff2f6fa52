import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseRunReport } from '../../src/runs/run-report.ts';
import { convertAnthropicMessages } from '../../src/traces/anthropic-messages.ts';
import { convertOpenAiTranscript } from '../../src/traces/openai-transcript.ts';
import { convertOtelTrace, convertOtlpExport, groupSpansByTrace, readOtlpSpans } from '../../src/traces/otel-genai.ts';
import { convertTraceDocument } from '../../src/traces/trace-document.ts';
import { detectRecordFormat } from '../../src/traces/trace-format-detection.ts';
import type { ConvertedRun, TraceConversion } from '../../src/traces/trace-run.ts';

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/traces/${name}`, import.meta.url));
const lines = (name: string): unknown[] =>
  readFileSync(fixture(name), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as unknown);

function runsOf(conversion: TraceConversion): ConvertedRun[] {
  if (!conversion.success) throw new Error(`refused: ${conversion.refusal.record}: ${conversion.refusal.reason}`);
  // Every converted run is a valid run report.
  for (const { report } of conversion.runs) expect(parseRunReport(report)).toMatchObject({ success: true });
  return conversion.runs;
}

describe('OpenAI transcripts', () => {
  it('makes a Chat Completions transcript one run: goal, tool calls in order with arguments and results, status from the final choice', () => {
    const [run] = runsOf(convertOpenAiTranscript(lines('openai-chat.jsonl')[0]));
    expect(run!.record).toBe('completion chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG');
    expect(run!.report).toEqual({
      agentId: 'openai',
      runId: 'openai:chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG',
      goal: 'Rotate the payments API key and redeploy the checkout service',
      status: 'completed',
      startedAt: '2025-12-01T10:00:00.000Z',
      completedAt: '2025-12-01T10:00:00.000Z',
      toolCalls: [
        { tool: 'keys_rotate', args: { service: 'payments' }, resultSummary: '{"keyId":"key_42","rotated":true}', success: true },
        { tool: 'deploy_apply', args: { service: 'checkout', env: 'prod' }, resultSummary: 'deployed checkout@prod', success: true },
        { tool: 'chat_post', args: { channel: '#ops', text: 'key rotated' }, resultSummary: 'posted', success: true },
      ],
    });
  });

  it('reads a bare array of messages; an unanswered call fails, arguments that are not JSON are kept, the run ends failed', () => {
    const [run] = runsOf(convertOpenAiTranscript(lines('openai-chat.jsonl')[1], { agentId: 'ticket-bot', tenantId: 'acme' }));
    expect(run!.report).toMatchObject({
      tenantId: 'acme',
      agentId: 'ticket-bot',
      runId: expect.stringMatching(/^openai:sha256-[0-9a-f]{32}$/),
      goal: 'Open a ticket for the failing nightly build',
      status: 'failed',
      startedAt: '1970-01-01T00:00:00.000Z',
      toolCalls: [
        { tool: 'ci_logs', args: { job: 'nightly' }, resultSummary: 'error: test suite timed out', success: true },
        {
          tool: 'tickets_create',
          args: { arguments: '{"title":"nightly build times out"' },
          success: false,
          error: 'no tool result in the transcript',
        },
      ],
    });
  });

  it('makes a Responses API transcript (function_call / function_call_output items) one run', () => {
    const [run] = runsOf(convertOpenAiTranscript(JSON.parse(readFileSync(fixture('openai-responses.json'), 'utf8'))));
    expect(run!.report).toMatchObject({
      runId: 'openai:resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b',
      goal: 'What is the weather in Paris? Then book a table for two.',
      status: 'completed',
      startedAt: '2025-12-01T11:00:00.000Z',
      toolCalls: [
        {
          tool: 'get_weather',
          args: { location: 'Paris, France' },
          resultSummary: '{"temperature":14,"conditions":"rain"}',
          success: true,
        },
        { tool: 'book_table', args: { city: 'Paris', people: 2, indoor: true }, resultSummary: 'booked: Chez Marie, 20:00', success: true },
      ],
    });
  });

  it('takes the status of a Responses transcript from the response: incomplete is failed, cancelled is cancelled', () => {
    const base = JSON.parse(readFileSync(fixture('openai-responses.json'), 'utf8')) as Record<string, unknown>;
    expect(runsOf(convertOpenAiTranscript({ ...base, status: 'incomplete' }))[0]!.report.status).toBe('failed');
    expect(runsOf(convertOpenAiTranscript({ ...base, status: 'cancelled' }))[0]!.report.status).toBe('cancelled');
  });

  it('bounds a long tool result to the contract (4000 characters, marked cut) and a long goal to 2000', () => {
    const transcript = {
      messages: [
        { role: 'user', content: `g${'o'.repeat(3000)}al` },
        { role: 'assistant', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'dump', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'x'.repeat(10_000) },
        { role: 'assistant', content: 'done' },
      ],
    };
    const [run] = runsOf(convertOpenAiTranscript(transcript));
    expect(run!.report.goal).toHaveLength(2000);
    expect(run!.report.toolCalls[0]!.resultSummary).toHaveLength(4000);
    expect(run!.report.toolCalls[0]!.resultSummary!.endsWith('…')).toBe(true);
  });

  it('derives the same runId from the same transcript however it is spaced or its keys ordered, and another from another', () => {
    const transcript = lines('openai-chat.jsonl')[1] as Array<Record<string, unknown>>;
    const reordered = transcript.map((message) => Object.fromEntries(Object.entries(message).reverse()));
    const first = runsOf(convertOpenAiTranscript(transcript))[0]!.report.runId;
    expect(runsOf(convertOpenAiTranscript(JSON.parse(JSON.stringify(reordered, null, 2))))[0]!.report.runId).toBe(first);
    expect(runsOf(convertOpenAiTranscript([...transcript, { role: 'assistant', content: 'ok' }]))[0]!.report.runId).not.toBe(first);
  });

  it('refuses a transcript without a user message, or without tool calls, naming the record and why', () => {
    expect(convertOpenAiTranscript(lines('refusals.jsonl')[0])).toEqual({
      success: false,
      refusal: { record: 'completion chatcmpl-nogoal', reason: 'no user message with text to take the goal from' },
    });
    expect(
      convertOpenAiTranscript([
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'hello' },
      ]),
    ).toEqual({
      success: false,
      refusal: { record: '(record)', reason: 'no tool calls: no assistant message has tool_calls' },
    });
    const malformed = convertOpenAiTranscript({ messages: 'not a list' });
    expect(malformed).toMatchObject({
      success: false,
      refusal: { reason: expect.stringMatching(/^not an OpenAI Chat Completions transcript: .*messages/s) },
    });
  });
});

describe('Anthropic Messages', () => {
  it('makes a transcript one run: tool_use blocks in order, tool_result content as the result, is_error as a failed call', () => {
    const [run] = runsOf(convertAnthropicMessages(lines('anthropic-messages.jsonl')[0]));
    expect(run!.report).toEqual({
      agentId: 'anthropic',
      runId: 'anthropic:msg_01Aq9w938a90dw8q',
      goal: 'Refund order 1234 and tell the customer',
      status: 'completed',
      startedAt: '1970-01-01T00:00:00.000Z',
      completedAt: '1970-01-01T00:00:00.000Z',
      toolCalls: [
        { tool: 'orders_get', args: { orderId: '1234' }, resultSummary: 'order 1234: paid, 49.00 EUR', success: true },
        { tool: 'payments_refund', args: { orderId: '1234', amount: 49 }, success: false, error: 'refund limit exceeded for this agent' },
        {
          tool: 'tickets_escalate',
          args: { orderId: '1234', reason: 'refund limit' },
          resultSummary: 'escalated as TCK-88',
          success: true,
        },
      ],
    });
  });

  it('ends a transcript whose last turn is a tool_use (or whose stop_reason is max_tokens) as failed', () => {
    expect(runsOf(convertAnthropicMessages(lines('anthropic-messages.jsonl')[1]))[0]!.report.status).toBe('failed');
    const first = lines('anthropic-messages.jsonl')[0] as Record<string, unknown>;
    expect(runsOf(convertAnthropicMessages({ ...first, stop_reason: 'max_tokens' }))[0]!.report.status).toBe('failed');
  });

  it('refuses a transcript without tool_use blocks, and one without a user text, naming the record', () => {
    expect(convertAnthropicMessages(lines('refusals.jsonl')[1])).toEqual({
      success: false,
      refusal: { record: 'message msg_notools', reason: 'no tool calls: no assistant message has a tool_use block' },
    });
    const onlyResults = [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'x', content: 'r' }] }];
    expect(convertAnthropicMessages(onlyResults)).toMatchObject({
      success: false,
      refusal: { reason: 'no user message with text to take the goal from' },
    });
  });
});

describe('OpenTelemetry GenAI spans (OTLP JSON)', () => {
  const spansOfFile = () =>
    lines('otel-genai.jsonl').flatMap((line) => {
      const read = readOtlpSpans(line);
      if (!read.success) throw new Error(read.refusal.reason);
      return read.spans;
    });

  it('groups spans by traceId across export batches into one run per trace: execute_tool spans in start order, their status as errors', () => {
    const traces = groupSpansByTrace(spansOfFile());
    expect([...traces.keys()]).toEqual(['4bf92f3577b34da6a3ce929d0e0e4736', '0af7651916cd43dd8448eb211c80319c']);
    const [run] = runsOf(convertOtelTrace('4bf92f3577b34da6a3ce929d0e0e4736', traces.get('4bf92f3577b34da6a3ce929d0e0e4736')!));
    expect(run!.record).toBe('trace 4bf92f3577b34da6a3ce929d0e0e4736');
    expect(run!.report).toEqual({
      agentId: 'ops-agent',
      runId: 'otel:4bf92f3577b34da6a3ce929d0e0e4736',
      goal: 'Restart the stuck ingestion worker in eu-west',
      status: 'completed',
      startedAt: '2025-12-01T12:00:00.000Z',
      completedAt: '2025-12-01T12:00:09.000Z',
      toolCalls: [
        {
          tool: 'workers_status',
          args: { region: 'eu-west' },
          resultSummary: '{"ingestion-worker":"stuck"}',
          success: true,
          durationMs: 250,
          at: '2025-12-01T12:00:01.200Z',
        },
        {
          tool: 'workers_restart',
          args: { worker: 'ingestion-worker', region: 'eu-west' },
          success: false,
          error: 'restart timed out after 500 ms',
          durationMs: 600,
          at: '2025-12-01T12:00:02.000Z',
        },
        {
          tool: 'workers_restart',
          args: { worker: 'ingestion-worker', region: 'eu-west', force: true },
          resultSummary: 'restarted',
          success: true,
          durationMs: 1000,
          at: '2025-12-01T12:00:03.000Z',
        },
      ],
    });
  });

  it('takes the goal from an operation-details event, an error from the exception event, and a failed run from the root span status', () => {
    const traces = groupSpansByTrace(spansOfFile());
    const [run] = runsOf(convertOtelTrace('0af7651916cd43dd8448eb211c80319c', traces.get('0af7651916cd43dd8448eb211c80319c')!));
    expect(run!.report).toMatchObject({
      goal: 'Rotate the TLS certificate of api.example.com',
      status: 'failed',
      toolCalls: [{ tool: 'certs_renew', args: { domain: 'api.example.com' }, success: false, error: 'ACME challenge failed' }],
    });
  });

  it('refuses a trace without execute_tool spans, and a batch holding only part of a trace without its goal, naming the trace', () => {
    expect(convertOtlpExport(lines('refusals.jsonl')[2])).toEqual({
      success: false,
      refusal: {
        record: 'trace 11111111111111111111111111111111',
        reason: 'no tool calls: no execute_tool span (gen_ai.operation.name = "execute_tool")',
      },
    });
    expect(convertOtlpExport(lines('otel-genai.jsonl')[1])).toMatchObject({
      success: false,
      refusal: {
        record: 'trace 4bf92f3577b34da6a3ce929d0e0e4736',
        reason: expect.stringMatching(/^no user message to take the goal from/),
      },
    });
    expect(convertOtlpExport({ resourceSpans: [{ scopeSpans: [{ spans: [{ name: 'no trace id' }] }] }] })).toMatchObject({
      success: false,
      refusal: { record: '(record)', reason: expect.stringMatching(/^not an OTLP JSON trace export: .*traceId/s) },
    });
  });
});

describe('--format auto', () => {
  it('detects each record of the mixed fixture by its shape', () => {
    expect(lines('mixed.jsonl').map((record) => detectRecordFormat(record))).toEqual([
      'run-report',
      'openai',
      'anthropic',
      'otel',
      'openai',
    ]);
    expect(lines('refusals.jsonl').map((record) => detectRecordFormat(record))).toEqual(['openai', 'anthropic', 'otel', null]);
    expect(detectRecordFormat(lines('openai-chat.jsonl')[1])).toBe('openai');
    expect(detectRecordFormat(lines('anthropic-messages.jsonl')[1])).toBe('anthropic');
    expect(detectRecordFormat('a string')).toBeNull();
  });

  it('converts with the format it detected and says which; refuses what it cannot place, and refuses hostile depth before parsing', () => {
    expect(convertTraceDocument(lines('mixed.jsonl')[2], 'auto')).toMatchObject({ format: 'anthropic', success: true });
    expect(convertTraceDocument(lines('refusals.jsonl')[3], 'auto')).toMatchObject({
      format: null,
      success: false,
      refusal: { reason: expect.stringMatching(/^not a recognised record/) },
    });
    let deep: unknown = 'bottom';
    for (let depth = 0; depth < 10_000; depth += 1) deep = [deep];
    expect(convertTraceDocument({ messages: deep }, 'auto')).toMatchObject({
      success: false,
      refusal: { reason: 'nests deeper than 128 levels' },
    });
  });

  it('reads a record as the format asked for, even when it looks like another (and refuses it when it is not)', () => {
    expect(convertTraceDocument(lines('anthropic-messages.jsonl')[0], 'openai')).toMatchObject({
      format: 'openai',
      success: false,
      refusal: { reason: 'no tool calls: no assistant message has tool_calls' },
    });
  });
});
